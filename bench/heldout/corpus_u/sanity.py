"""Sanity table: per trace, baseline vs window (or first vs second half for healthy)."""
import json, sys, time
import statistics
from gputop.schema import frame_to_dict, frame_from_dict
from bench.heldout.corpus_u import traces

def rate(frames, a, b, key):
    sel = [f for f in frames if a <= f.time_wall_s < b and f.engine is not None]
    if len(sel) < 2: return None
    v0, v1 = getattr(sel[0].engine, key), getattr(sel[-1].engine, key)
    if v0 is None or v1 is None or v1 < v0: return None
    return (v1 - v0) / (sel[-1].time_wall_s - sel[0].time_wall_s)

def p99(frames, a, b, name):
    sel = [f for f in frames if a <= f.time_wall_s < b and f.engine is not None]
    if len(sel) < 2: return None
    def h(f):
        for x in f.engine.histograms:
            if x.name == name: return x
    h0, h1 = h(sel[0]), h(sel[-1])
    if h0 is None or h1 is None: return None
    d = [x - y for x, y in zip(h1.cumulative, h0.cumulative)]; tot = h1.count - h0.count
    if tot <= 0: return None
    for ub, c in zip(h1.upper_bounds, d):
        if c >= 0.99 * tot: return ub
    return float('inf')

def gavg(frames, a, b, attr, gpu=None):
    xs = [getattr(g, attr) for f in frames if a <= f.time_wall_s < b for g in f.gpus
          if (gpu is None or g.index == gpu) and getattr(g, attr) is not None]
    return statistics.fmean(xs) if xs else None

def last(frames, a, b, fn):
    xs = [fn(f) for f in frames if a <= f.time_wall_s < b and f.engine is not None]
    xs = [x for x in xs if x is not None]
    return max(xs) if xs else None

fmt = lambda x, n=0: "-" if x is None else f"{x:.{n}f}"
t0 = time.process_time(); n = 0
filt = sys.argv[1] if len(sys.argv) > 1 else None
for truth, frames in traces(filt):
    n += 1
    for f in frames[:: max(1, len(frames) // 5)]:
        assert frame_from_dict(json.loads(json.dumps(frame_to_dict(f)))) == f, truth.name
    s = truth.start_wall_s; end = frames[-1].time_wall_s + 0.1
    if truth.window:
        A = (s + 5, truth.window[0]); B = (truth.window[0] + 10, truth.window[1])
    else:
        A = (s + 5, s + (end - s) / 2); B = (s + (end - s) / 2, end)
    g = truth.culprit_gpus[0] if truth.culprit_gpus else None
    row = [truth.name[:34].ljust(34), (truth.cause or "HEALTHY")[:14].ljust(14)]
    for (a, b) in (A, B):
        row += [fmt(rate(frames, a, b, "generation_tokens_total")), fmt(gavg(frames, a, b, "util_gpu_pct", g)),
                fmt(gavg(frames, a, b, "sm_active_pct", g)), fmt(p99(frames, a, b, "itl"), 3),
                fmt(p99(frames, a, b, "ttft"), 2), fmt(last(frames, a, b, lambda f: f.engine.requests_waiting)),
                fmt(gavg(frames, a, b, "sm_clock_mhz", g)), fmt(last(frames, a, b, lambda f: f.engine.kv_usage_ratio), 2),
                fmt(last(frames, a, b, lambda f: (f.engine.preemptions_total or 0) + (f.engine.retracted_requests_total or 0)))]
        row.append("|")
    print(" ".join(str(x) for x in row), flush=True)
print("traces", n, "cpu s", round(time.process_time() - t0, 1))
