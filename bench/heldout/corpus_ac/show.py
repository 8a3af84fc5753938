"""python -m bench.heldout.corpus_ac.show NAME [EVERY]: a compact table of one trace."""

from __future__ import annotations

import sys

from . import traces


def _hq(prev, cur, name, q=0.5):
    """A percentile of one engine histogram over the interval between two readings."""
    if prev is None or cur is None:
        return None
    a = {h.name: h for h in prev.histograms}.get(name)
    b = {h.name: h for h in cur.histograms}.get(name)
    if a is None or b is None or len(a.cumulative) != len(b.cumulative):
        return None
    diff = [y - x for x, y in zip(a.cumulative, b.cumulative)]
    total = b.count - a.count
    if total <= 0:
        return None
    for bound, c in zip(b.upper_bounds, diff):
        if c >= q * total:
            return bound
    return float("inf")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    every = int(argv[1]) if len(argv) > 1 else 10
    for truth, frames in traces(argv[0]):
        print(f"{truth.name}  cause={truth.cause} culprit={truth.culprit_gpus} "
              f"engine={truth.engine} {truth.gpus}x {truth.gpu_model} tick={truth.tick_s}")
        if truth.window:
            print(f"window: {truth.window[0] - truth.start_wall_s:.0f}.."
                  f"{truth.window[1] - truth.start_wall_s:.0f} s   note: {truth.note}")
        print(" t(s)  gpu util  sm  tens dram   W    C   MHz throttle        | run wait "
              "kv   tok/s  itl50 ttft50 | cpu% rq  psi thr")
        prev_e = None
        prev_f = None
        for i, f in enumerate(frames):
            e = f.engine
            if i % every == 0:
                t = f.time_wall_s - truth.start_wall_s
                for g in f.gpus:
                    def v(x, fmt="{:4.0f}"):
                        return fmt.format(x) if x is not None else "   -"
                    line = (f"{t:5.0f}  {g.index:2d} {v(g.util_gpu_pct)} {v(g.sm_active_pct)} "
                            f"{v(g.tensor_pct)} {v(g.dram_bw_pct)} {v(g.power_w)} "
                            f"{v(g.temp_c, '{:3.0f}')} {v(g.sm_clock_mhz, '{:5.0f}')} "
                            f"{','.join(g.throttle)[:14]:14s}")
                    if g.index == 0:
                        eng = ""
                        if e is not None:
                            rate = None
                            if prev_e is not None and e.generation_tokens_total is not None \
                                    and prev_e.generation_tokens_total is not None:
                                dtt = (e.time_wall_s or 0) - (prev_e.time_wall_s or 0)
                                if dtt > 0:
                                    rate = (e.generation_tokens_total -
                                            prev_e.generation_tokens_total) / dtt
                            itl = _hq(prev_e, e, "itl") or _hq(prev_e, e, "tpot")
                            ttft = _hq(prev_e, e, "ttft")
                            eng = (f" | {v(e.requests_running)} {v(e.requests_waiting)} "
                                   f"{v(e.kv_usage_ratio, '{:4.2f}')} {v(rate, '{:7.0f}')} "
                                   f"{v(itl, '{:6.3f}')} {v(ttft, '{:6.2f}')}")
                        else:
                            eng = " | " + " " * 40
                        h = f.host
                        thr = f.pinned.cpu_throttled_periods if f.pinned else None
                        line += eng + (f" | {v(h.cpu_pct)} {v(h.run_queue, '{:3d}')} "
                                       f"{v(h.cpu_pressure_some_pct)} {v(thr, '{:4d}')}")
                    print(line)
                if f.launch:
                    for lh in f.launch:
                        print(f"        launch {lh.api}: n={lh.count} max={lh.max_ns / 1e6:.2f} ms")
                prev_e = e if e is not None else prev_e
            elif e is not None and (i + 1) % every == 0:
                prev_e = e
            prev_f = f
        _ = prev_f
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
