"""Sanity table and codec round-trip: python -m corpus_s.check [filter]"""
from __future__ import annotations

import json
import sys

from gputop.schema import frame_from_dict, frame_to_dict

from . import traces


def p99(frames, name, a, b):
    h0 = h1 = None
    for f in frames:
        if f.engine is None:
            continue
        h = next((x for x in f.engine.histograms if x.name == name), None)
        if h is None:
            continue
        if f.time_wall_s <= a or h0 is None:
            h0 = h if f.time_wall_s <= a or h0 is None else h0
        if f.time_wall_s <= b:
            h1 = h
    if h0 is None or h1 is None or h1.count - h0.count < 1:
        return None
    d = [c1 - c0 for c1, c0 in zip(h1.cumulative, h0.cumulative)]
    tot = h1.count - h0.count
    for bound, c in zip(h1.upper_bounds, d):
        if c >= 0.99 * tot:
            return bound
    return float("inf")


def stats(frames, a, b, gpus):
    fs = [f for f in frames if a < f.time_wall_s <= b]
    if not fs:
        return None
    eng = [f for f in fs if f.engine is not None and f.engine.generation_tokens_total is not None]
    rate = None
    if len(eng) >= 2:
        e0, e1 = eng[0].engine, eng[-1].engine
        if e1.generation_tokens_total >= e0.generation_tokens_total:
            rate = (e1.generation_tokens_total - e0.generation_tokens_total) / (e1.time_wall_s - e0.time_wall_s)
    sel = [g for f in fs for g in f.gpus if gpus is None or g.index in gpus]
    u = sum(g.util_gpu_pct or 0 for g in sel) / len(sel)
    sm = [g.sm_active_pct for g in sel if g.sm_active_pct is not None]
    dr = [g.dram_bw_pct if g.dram_bw_pct is not None else g.util_mem_pct for g in sel]
    wait = [f.engine.requests_waiting for f in eng if f.engine.requests_waiting is not None]
    pre = None
    if eng and eng[-1].engine.preemptions_total is not None:
        pre = eng[-1].engine.preemptions_total - eng[0].engine.preemptions_total
    if eng and eng[-1].engine.retracted_requests_total is not None:
        pre = eng[-1].engine.retracted_requests_total - eng[0].engine.retracted_requests_total
    return dict(rate=rate, util=u, sm=(sum(sm) / len(sm)) if sm else None, dram=sum(dr) / len(dr),
                itl=p99(frames, "itl", a, b), ttft=p99(frames, "ttft", a, b),
                wait=max(wait) if wait else None, pre=pre,
                clk=sum(g.sm_clock_mhz for g in sel) / len(sel), pw=sum(g.power_w for g in sel) / len(sel))


def fmt(s):
    if s is None:
        return "-"
    r = "-" if s["rate"] is None else f"{s['rate']:.0f}"
    sm = "-" if s["sm"] is None else f"{s['sm']:.0f}"
    f = lambda v: "-" if v is None else (f"{v*1000:.0f}" if v != float('inf') else "inf")  # noqa: E731
    return (f"tok/s {r:>7} util {s['util']:3.0f} sm {sm:>3} dram {s['dram']:3.0f} clk {s['clk']:4.0f} "
            f"P {s['pw']:3.0f} itl99 {f(s['itl']):>5} ttft99 {f(s['ttft']):>6} wait {s['wait'] if s['wait'] is not None else '-'} pre {s['pre'] if s['pre'] is not None else '-'}")


def main(filter=None):
    for t, frames in traces(filter):
        for f in frames[:: max(1, len(frames) // 7)]:
            d = json.loads(json.dumps(frame_to_dict(f)))
            assert frame_from_dict(d) == f, (t.name, f.seq)
        s0 = frames[0].time_wall_s
        gpus = t.culprit_gpus
        if t.window:
            a, b = t.window
            base = stats(frames, s0 + 10, a, gpus)
            win = stats(frames, a + 10, b, gpus)
            print(f"{t.name:38s} {t.cause}\n   base: {fmt(base)}\n   win : {fmt(win)}")
        else:
            e = frames[-1].time_wall_s
            mid = s0 + (e - s0) / 2
            print(f"{t.name:38s} healthy\n   h1  : {fmt(stats(frames, s0 + 10, mid, None))}\n   h2  : {fmt(stats(frames, mid, e, None))}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
