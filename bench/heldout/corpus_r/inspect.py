"""Sanity check: per trace, the healthy lead-in vs the fault window (or, for healthy traces,
the first 60 s vs the rest): mean GPU-Util, SM activity and DRAM over the GPUs named
first (the culprit, else all), work per second from the engine's counter, inter-token
latency p50 from the histogram deltas, and the pinned tree's CPU rate.

    PYTHONPATH=. python bench/heldout/corpus_r/inspect.py [FILTER]
"""

from __future__ import annotations

import os
import sys

# run as a script, this file's folder comes first on sys.path and its name would shadow the
# standard library's inspect module (dataclasses imports it): put the corpus' parent there
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import time  # noqa: E402

import corpus_r  # noqa: E402


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def _rate(frames, attr):
    pts = [(f.time_wall_s, getattr(f.engine, attr)) for f in frames
           if f.engine is not None and getattr(f.engine, attr, None) is not None]
    if len(pts) < 2:
        return float("nan")
    (t0, a), (t1, b) = pts[0], pts[-1]
    return (b - a) / (t1 - t0) if b >= a and t1 > t0 else float("nan")


def _itl_p50(frames):
    hs = [next((h for h in f.engine.histograms if h.name == "itl"), None) for f in frames if f.engine]
    hs = [h for h in hs if h is not None]
    if len(hs) < 2 or hs[-1].count < hs[0].count:
        return float("nan")
    a, b = hs[0], hs[-1]
    d = [y - x for x, y in zip(a.cumulative, b.cumulative)]
    total = b.count - a.count
    if total <= 0:
        return float("nan")
    for bound, c in zip(b.upper_bounds, d):
        if c >= total / 2:
            return bound * 1000
    return float("inf")


def _itl_mean(frames):
    hs = [next((h for h in f.engine.histograms if h.name == "itl"), None) for f in frames if f.engine]
    hs = [h for h in hs if h is not None]
    if len(hs) < 2 or hs[-1].count <= hs[0].count:
        return float("nan")
    return 1000 * (hs[-1].sum - hs[0].sum) / (hs[-1].count - hs[0].count)


def _cpu(frames):
    pts = [(f.time_wall_s, f.pinned.cpu_s) for f in frames if f.pinned is not None and f.pinned.cpu_s is not None]
    if len(pts) < 2 or pts[-1][1] < pts[0][1]:
        return float("nan")
    return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])


def _engine_view(frames, gpus):
    """Where the page has data-parallel replicas, the one serving the culprit GPU."""
    out = []
    for f in frames:
        e = f.engine
        if e is not None and e.replicas:
            rep = next((r for r in e.replicas if set(r.gpu_indices) & gpus), None)
            if rep is not None and len(gpus) < len(f.gpus):
                e = rep
        out.append(_View(f.time_wall_s, e, f.pinned))
    return out


class _View:
    __slots__ = ("time_wall_s", "engine", "pinned")

    def __init__(self, t, e, p):
        self.time_wall_s, self.engine, self.pinned = t, e, p


def summary(frames, gpus):
    util = _mean([g.util_gpu_pct for f in frames for g in f.gpus if g.index in gpus])
    sm = _mean([g.sm_active_pct for f in frames for g in f.gpus if g.index in gpus])
    dram = _mean([g.dram_bw_pct if g.dram_bw_pct is not None else g.util_mem_pct
                  for f in frames for g in f.gpus if g.index in gpus])
    view = _engine_view(frames, gpus)
    return dict(util=util, sm=sm, dram=dram, work=_rate(view, "generation_tokens_total"),
                itl=_itl_mean(view), p50=_itl_p50(view), cpu=_cpu(frames))


def main(flt=None):
    t0 = time.time()
    fmt = "{:44s} {:21s} {:>9s} {:>9s} {:>9s} {:>15s} {:>11s} {:>11s} {:>11s}"
    print(fmt.format("trace", "cause", "util%", "sm%", "dram%", "work/s", "itl ms", "itl p50 ms", "cpu/s"))
    for truth, frames in corpus_r.traces(flt):
        if truth.window:
            a, b = truth.window
            base = [f for f in frames if f.time_wall_s < truth.start_wall_s + 60]
            win = [f for f in frames if a <= f.time_wall_s <= b]
        else:
            base = [f for f in frames if f.time_wall_s < truth.start_wall_s + 60]
            win = [f for f in frames if f.time_wall_s >= truth.start_wall_s + 60]
        gpus = set(truth.culprit_gpus or range(truth.gpus))
        s0, s1 = summary(base, gpus), summary(win, gpus)
        pair = lambda k, p: f"{s0[k]:.{p}f}>{s1[k]:.{p}f}"
        print(fmt.format(truth.name[:44], str(truth.cause), pair("util", 0), pair("sm", 0), pair("dram", 0),
                         pair("work", 0), pair("itl", 0), pair("p50", 0), pair("cpu", 2)))
    print(f"generated and summarised in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
