"""python -m bench.heldout.corpus_aa.show NAME [EVERY]: a compact table of one trace."""

from __future__ import annotations

import sys


def _delta(a, b):
    return None if a is None or b is None else b - a


def _itl(prev, cur):
    if prev is None or cur is None:
        return None
    hp = {h.name: h for h in prev.histograms}
    for h in cur.histograms:
        if h.name in ("itl", "tpot") and h.name in hp:
            dc = h.count - hp[h.name].count
            if dc > 0:
                return 1000 * (h.sum - hp[h.name].sum) / dc
    return None


def table(frames, every: int = 10, t0: float | None = None) -> list[str]:
    t0 = frames[0].time_wall_s if t0 is None else t0
    out = ["   t  gpu util  sm tens dram  clk   W   C thr          | tok/s  run wait  kv   itl_ms pre | cpu% psi rq thr"]
    prev = None
    for i, f in enumerate(frames):
        if i % every == 0:
            e, pe = f.engine, prev.engine if prev else None
            dt = f.time_wall_s - prev.time_wall_s if prev else None
            rate = _delta(pe.generation_tokens_total if pe else None,
                          e.generation_tokens_total if e else None)
            for g in f.gpus[:8]:
                fmt = lambda v, w=4: f"{v:{w}.0f}" if v is not None else " " * (w - 1) + "-"
                eng = ""
                if g.index == 0:
                    eng = (f"| {fmt(rate / dt if rate is not None and dt else None, 5)} "
                           f"{fmt(e.requests_running if e else None)} {fmt(e.requests_waiting if e else None)} "
                           f"{(e.kv_usage_ratio if e and e.kv_usage_ratio is not None else -1):5.2f} "
                           f"{fmt(_itl(pe, e), 6)} {fmt(e.preemptions_total if e else None, 3)} | "
                           f"{fmt(f.host.cpu_pct if f.host else None)} {fmt(f.host.cpu_pressure_some_pct if f.host else None, 3)}"
                           f" {fmt(f.host.run_queue if f.host else None, 2)} "
                           f"{fmt(f.pinned.cpu_throttled_periods if f.pinned else None)}")
                print_t = f"{f.time_wall_s - t0:5.0f}" if g.index == 0 else "     "
                out.append(f"{print_t} {g.index:3d} {fmt(g.util_gpu_pct)} {fmt(g.sm_active_pct)} "
                           f"{fmt(g.tensor_pct)} {fmt(g.dram_bw_pct)} {fmt(g.sm_clock_mhz, 5)} "
                           f"{fmt(g.power_w)} {fmt(g.temp_c, 3)} {','.join(g.throttle)[:12]:12s} {eng}")
        if i % every == every - 1 or every == 1:
            prev = f
    return out


def main(argv=None) -> int:
    from . import traces
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    every = int(argv[1]) if len(argv) > 1 else 10
    for truth, frames in traces(argv[0]):
        print(f"{truth.name}  {truth.family}  cause={truth.cause}  culprit={truth.culprit_gpus}  "
              f"window={None if truth.window is None else tuple(round(w - truth.start_wall_s) for w in truth.window)}"
              f"  {truth.engine} {truth.gpus}x{truth.gpu_model}")
        print(f"  {truth.note}")
        for line in table(frames, every, truth.start_wall_s):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
