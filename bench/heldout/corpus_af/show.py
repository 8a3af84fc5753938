"""python -m bench.heldout.corpus_af.show NAME [EVERY]: a compact table of one trace."""

from __future__ import annotations

import sys

from . import traces


def main():
    name = sys.argv[1]
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    for tr, frames in traces(name):
        print(tr)
        prev = None
        print(" t(s)  gpu util  sm tens dram  pow  temp   mhz throttle          | run wait  kv  gen/s  itl_ms | host% psi rq")
        for f in frames[::every]:
            t = f.time_wall_s - tr.start_wall_s
            e = f.engine
            gen = itl = "-"
            if e and prev and prev.engine and e.generation_tokens_total is not None and prev.engine.generation_tokens_total is not None:
                d = (e.time_wall_s or f.time_wall_s) - (prev.engine.time_wall_s or prev.time_wall_s)
                gen = f"{(e.generation_tokens_total - prev.engine.generation_tokens_total)/max(d,1e-3):.0f}"
                h = {x.name: x for x in e.histograms}; ph = {x.name: x for x in prev.engine.histograms}
                k = "itl" if "itl" in h else "tpot" if "tpot" in h else None
                if k and k in ph and h[k].count > ph[k].count:
                    itl = f"{1000*(h[k].sum-ph[k].sum)/(h[k].count-ph[k].count):.1f}"
            for g in f.gpus:
                fmt = lambda v: "-" if v is None else f"{v:.0f}"
                head = f"{t:5.0f}" if g.index == 0 else "     "
                eng = (f"| {fmt(e.requests_running):>3} {fmt(e.requests_waiting):>4} {e.kv_usage_ratio if e.kv_usage_ratio is None else round(e.kv_usage_ratio,2)!s:>4} {gen:>6} {itl:>7}"
                       if e and g.index == 0 else "|")
                hs = f.host
                hh = f"| {hs.cpu_pct} {hs.cpu_pressure_some_pct} {hs.run_queue}" if g.index == 0 and hs else ""
                print(f"{head}  {g.index:3} {fmt(g.util_gpu_pct):>4} {fmt(g.sm_active_pct):>3} {fmt(g.tensor_pct):>4} "
                      f"{fmt(g.dram_bw_pct):>4} {fmt(g.power_w):>4} {fmt(g.temp_c):>4} {fmt(g.sm_clock_mhz):>5} "
                      f"{','.join(g.throttle)[:17]:17} {eng} {hh}")
            prev = f
        if frames and frames[-1].processes:
            print("processes:", [(p.pid, p.gpu_index, p.name, round((p.mem_bytes or 0)/2**30, 1)) for p in frames[-1].processes])


if __name__ == "__main__":
    main()
