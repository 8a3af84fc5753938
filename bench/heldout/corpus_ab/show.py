"""python -m bench.heldout.corpus_ab.show NAME [EVERY]: one trace as a compact table."""

from __future__ import annotations

import sys

from . import traces


def main() -> None:
    name = sys.argv[1]
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    for truth, frames in traces(name):
        print(truth)
        print(f"{'t':>5} {'gpu':>3} {'util':>4} {'sm':>4} {'tens':>4} {'dram':>4} {'W':>5} {'C':>3} "
              f"{'MHz':>5} {'thr':12} {'run':>4} {'wait':>4} {'kv':>5} {'gen':>10} {'itl_ms':>7} "
              f"{'psi':>5} {'rq':>3} launch")
        prev = None
        for f in frames[::every]:
            e = f.engine
            itl = "-"
            if e is not None:
                h = next((h for h in e.histograms if h.name in ("itl", "tpot")), None)
                p = next((h for h in prev.histograms if h.name == (h.name if h else "")), None) \
                    if prev is not None and h is not None else None
                if h is not None and p is not None and h.count > p.count:
                    itl = f"{1000 * (h.sum - p.sum) / (h.count - p.count):.1f}"
                prev = e
            fmt = lambda v: "-" if v is None else f"{v:.0f}"
            for g in f.gpus:
                print(f"{f.time_wall_s - truth.start_wall_s:5.0f} {g.index:>3} {fmt(g.util_gpu_pct):>4} "
                      f"{fmt(g.sm_active_pct):>4} {fmt(g.tensor_pct):>4} {fmt(g.dram_bw_pct):>4} "
                      f"{fmt(g.power_w):>5} {fmt(g.temp_c):>3} {fmt(g.sm_clock_mhz):>5} "
                      f"{','.join(g.throttle)[:12]:12} "
                      f"{fmt(e and e.requests_running):>4} {fmt(e and e.requests_waiting):>4} "
                      f"{'-' if not e or e.kv_usage_ratio is None else f'{e.kv_usage_ratio:.2f}':>5} "
                      f"{fmt(e and e.generation_tokens_total):>10} {itl:>7} "
                      f"{fmt(f.host.cpu_pressure_some_pct):>5} {fmt(f.host.run_queue):>3} "
                      f"{sum(h.count for h in f.launch)}")


if __name__ == "__main__":
    main()
