"""Sanity table: healthy part vs fault window, per trace (python -m bench.heldout.corpus_t.sanity)."""
import json
import sys
import time

from gputop.schema import frame_from_dict, frame_to_dict

from . import traces


def p99(h0, h1):
    if h0 is None or h1 is None:
        return None
    d = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
    tot = h1.count - h0.count
    if tot <= 0:
        return None
    for ub, c in zip(h1.upper_bounds, d):
        if c >= 0.99 * tot:
            return ub
    return float("inf")


def seg(frames, a, b, culprit):
    fs = [f for f in frames if a <= f.time_wall_s <= b]
    if len(fs) < 2:
        return {}
    g = culprit[0] if culprit else 0
    u = sum(f.gpus[g].util_gpu_pct or 0 for f in fs) / len(fs)
    sm = [f.gpus[g].sm_active_pct for f in fs if f.gpus[g].sm_active_pct is not None]
    es = [f.engine for f in fs if f.engine is not None]
    out = {"util": u, "sm": sum(sm) / len(sm) if sm else None}
    if len(es) >= 2 and es[-1].time_wall_s > es[0].time_wall_s:
        e0, e1 = es[0], es[-1]
        dtt = e1.time_wall_s - e0.time_wall_s
        if e1.generation_tokens_total >= e0.generation_tokens_total:
            out["rate"] = (e1.generation_tokens_total - e0.generation_tokens_total) / dtt
        h0 = {h.name: h for h in e0.histograms}
        h1 = {h.name: h for h in e1.histograms}
        out["itl99"] = p99(h0.get("itl"), h1.get("itl"))
        out["ttft99"] = p99(h0.get("ttft"), h1.get("ttft"))
        out["pre"] = ((e1.preemptions_total or 0) - (e0.preemptions_total or 0)) + \
            ((e1.retracted_requests_total or 0) - (e0.retracted_requests_total or 0))
    return out


def fmt(d):
    def v(x, f="{:.0f}"):
        return "-" if x is None else f.format(x)
    return (f"tok/s {v(d.get('rate')):>6} u {v(d.get('util')):>3} sm {v(d.get('sm')):>3} "
            f"itl99 {v(d.get('itl99'), '{:.3f}'):>6} ttft99 {v(d.get('ttft99'), '{:.2f}'):>6} "
            f"pre {v(d.get('pre')):>4}")


def main():
    t0 = time.process_time()
    n = 0
    for truth, frames in traces(sys.argv[1] if len(sys.argv) > 1 else None):
        n += 1
        for f in frames[:: max(1, len(frames) // 6)]:
            d = frame_to_dict(f)
            assert frame_from_dict(json.loads(json.dumps(d))) == f, truth.name
        s = truth.start_wall_s
        if truth.window:
            a, b = truth.window
            base = seg(frames, s + 20, a - 2, truth.culprit_gpus)
            win = seg(frames, a + 10, b, truth.culprit_gpus)
        else:
            end = frames[-1].time_wall_s
            base = seg(frames, s + 20, s + (end - s) / 2, None)
            win = seg(frames, s + (end - s) / 2, end, None)
        print(f"{truth.name:34s} {str(truth.cause):22s} | {fmt(base)} || {fmt(win)}")
    print(f"{n} traces, {time.process_time() - t0:.1f} s CPU")


if __name__ == "__main__":
    main()
