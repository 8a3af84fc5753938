"""python -m bench.heldout.corpus_ae.show NAME [EVERY]: a compact table of one trace."""
import sys

from . import traces


def main():
    name = sys.argv[1]
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    for truth, frames in traces(name):
        print(truth)
        t0 = frames[0].time_wall_s
        print("   t  gpu util   sm  tens dram   W   MHz  thr | run wait kv    gen_tok   cpuPSI rq")
        for f in frames[::every]:
            g = f.gpus[0]
            e = f.engine
            h = f.host
            def fm(v, w=5):
                return ("-" if v is None else f"{v:.0f}").rjust(w)
            print(f"{f.time_wall_s - t0:5.0f}  {fm(g.util_gpu_pct)}{fm(g.sm_active_pct)}{fm(g.tensor_pct)}{fm(g.dram_bw_pct)}"
                  f"{fm(g.power_w)}{fm(g.sm_clock_mhz)} {','.join(g.throttle)[:10]:10s}|"
                  f"{fm(e and e.requests_running)}{fm(e and e.requests_waiting)} {fm(e and e.kv_usage_ratio and 100 * e.kv_usage_ratio)}"
                  f"{fm(e and e.generation_tokens_total, 11)} {fm(h.cpu_pressure_some_pct)}{fm(h.run_queue)}")


if __name__ == "__main__":
    main()
