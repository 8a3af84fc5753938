"""python -m bench.heldout.corpus_ad.show NAME [EVERY]: a compact table of one trace."""
from __future__ import annotations

import sys

from . import traces


def main(argv):
    name = argv[0]
    every = int(argv[1]) if len(argv) > 1 else 10
    for truth, frames in traces(name):
        print(f"{truth.name}  family={truth.family} cause={truth.cause} culprit={truth.culprit_gpus} "
              f"engine={truth.engine} {truth.gpus}x {truth.gpu_model} tick={truth.tick_s}")
        if truth.window:
            print(f"window: +{truth.window[0] - truth.start_wall_s:.0f}s .. +{truth.window[1] - truth.start_wall_s:.0f}s")
        print("note:", truth.note)
        prev = None
        for f in frames[::every]:
            t = f.time_wall_s - truth.start_wall_s
            gs = " ".join(f"{g.index}:{g.util_gpu_pct:.0f}/{'-' if g.sm_active_pct is None else round(g.sm_active_pct)}"
                          f"/{'-' if g.tensor_pct is None else round(g.tensor_pct)}/{g.power_w:.0f}W/{g.sm_clock_mhz:.0f}"
                          f"{'!' if g.throttle else ''}" for g in f.gpus)
            e = f.engine
            es = ""
            if e is not None:
                rate = ""
                if prev is not None and prev.engine is not None and e.generation_tokens_total is not None \
                        and prev.engine.generation_tokens_total is not None:
                    dt = f.time_wall_s - prev.time_wall_s
                    rate = f" gen/s={(e.generation_tokens_total - prev.engine.generation_tokens_total) / dt:.0f}"
                es = (f" | {e.kind} run={e.requests_running} wait={e.requests_waiting} "
                      f"kv={'-' if e.kv_usage_ratio is None else round(e.kv_usage_ratio, 2)}{rate}")
            h = f.host
            print(f"{t:6.0f}s {gs} | cpu={h.cpu_pct} psi={h.cpu_pressure_some_pct} rq={h.run_queue} "
                  f"procs={len(f.processes)} launch={len(f.launch)}{es}")
            prev = f


if __name__ == "__main__":
    main(sys.argv[1:])
