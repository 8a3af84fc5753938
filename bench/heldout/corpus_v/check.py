"""Sanity table: healthy part vs fault window for every trace (python -m ...corpus_v.check)."""
from __future__ import annotations

import sys

from . import traces


def _p99(frames, name, a, b):
    h0 = h1 = None
    for f in frames:
        if f.engine is None:
            continue
        for h in f.engine.histograms:
            if h.name == name:
                if f.time_wall_s <= a + 1 and (h0 is None or f.time_wall_s >= a - 1):
                    h0 = h
                if f.time_wall_s <= b:
                    h1 = h
    if h0 is None or h1 is None or h1.upper_bounds != h0.upper_bounds:
        return None
    d = [x - y for x, y in zip(h1.cumulative, h0.cumulative)]
    n = h1.count - h0.count
    if n < 5:
        return None
    for ub, c in zip(h1.upper_bounds, d):
        if c >= 0.99 * n:
            return ub
    return float("inf")


def stats(truth, frames, a, b):
    sel = [f for f in frames if a <= f.time_wall_s < b]
    if len(sel) < 3:
        return None
    g = sel[-1].gpus
    culp = truth.culprit_gpus[0] if truth.culprit_gpus else None
    def gpu_of(f):
        if culp is not None:
            return next(x for x in f.gpus if x.index == culp)
        pids = {p.gpu_index for p in f.processes}
        idx = min(pids) if pids else f.gpus[0].index
        return next(x for x in f.gpus if x.index == idx)
    util = sum(gpu_of(f).util_gpu_pct or 0 for f in sel) / len(sel)
    sms = [gpu_of(f).sm_active_pct for f in sel if gpu_of(f).sm_active_pct is not None]
    sm = sum(sms) / len(sms) if sms else None
    e0 = next((f.engine for f in sel if f.engine), None)
    e1 = next((f.engine for f in reversed(sel) if f.engine), None)
    rate = None
    if e0 and e1 and e1.time_wall_s > e0.time_wall_s and e1.generation_tokens_total is not None:
        rate = (e1.generation_tokens_total - e0.generation_tokens_total) / (e1.time_wall_s - e0.time_wall_s)
    p0 = next((f.pinned for f in sel if f.pinned and f.pinned.cpu_s is not None), None)
    p1 = next((f.pinned for f in reversed(sel) if f.pinned and f.pinned.cpu_s is not None), None)
    cpu = thr = None
    if p0 and p1 and p1 is not p0:
        span = sel[-1].time_wall_s - sel[0].time_wall_s
        cpu = (p1.cpu_s - p0.cpu_s) / span
        if p1.cpu_periods is not None and p0.cpu_periods is not None and p1.cpu_periods > p0.cpu_periods:
            thr = (p1.cpu_throttled_periods - p0.cpu_throttled_periods) / (p1.cpu_periods - p0.cpu_periods)
    return dict(rate=rate, util=util, sm=sm, itl=_p99(frames, "itl", a, b),
                ttft=_p99(frames, "ttft", a, b), cpu=cpu, thr=thr)


def fmt(v, w=7, d=1):
    if v is None:
        return "-".rjust(w)
    if v == float("inf"):
        return "inf".rjust(w)
    return f"{v:{w}.{d}f}"


def main(filter=None):
    print(f"{'trace':34s} {'cause':22s} | {'rate':>9s} {'util':>5s} {'sm':>5s} {'itl99':>6s} {'ttft99':>6s} {'cpu':>5s} {'thr':>5s} || window: same | loss%")
    for truth, frames in traces(filter):
        s0 = frames[0].time_wall_s
        if truth.window:
            a, b = s0 + 10, truth.window[0] - 2
            w = truth.window
        else:
            a, b = s0 + 10, s0 + (frames[-1].time_wall_s - s0) / 2
            w = (b, frames[-1].time_wall_s)
        h, x = stats(truth, frames, a, b), stats(truth, frames, *w)
        loss = None
        if h["rate"] and x["rate"] is not None:
            loss = 100 * (1 - x["rate"] / h["rate"])
        row = lambda s: (f"{fmt(s['rate'], 9, 0)} {fmt(s['util'], 5, 0)} {fmt(s['sm'], 5, 0)} "
                         f"{fmt(s['itl'], 6, 3)} {fmt(s['ttft'], 6, 2)} {fmt(s['cpu'], 5, 2)} {fmt(s['thr'], 5, 2)}")
        print(f"{truth.name:34s} {str(truth.cause):22s} | {row(h)} || {row(x)} | {fmt(loss, 5, 0)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
