"""What a reader of a trace would see: means of the GPU signals, engine rates and latency
percentiles over a span of frames.  ``summarize(truth, frames)`` gives the healthy part and
the fault window side by side; the harness's --signals calls ``summarize(frames, lo, hi,
culprit)`` for one span."""

from __future__ import annotations


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 1) if xs else None


def _pct(h0, h1, q):
    if h0 is None or h1 is None or h0.upper_bounds != h1.upper_bounds:
        return None
    n = h1.count - h0.count
    if n <= 0:
        return None
    cum = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
    want = q * n
    lo = 0.0
    prev = 0.0
    for ub, c in zip(h1.upper_bounds, cum):
        if c >= want:
            frac = (want - prev) / max(1e-9, c - prev)
            return round(lo + (ub - lo) * frac, 4)
        lo, prev = ub, c
    return round(h1.upper_bounds[-1], 4)


def _hist(e, name):
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def span(frames, lo, hi, culprit=None):
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(fs) < 2:
        return {}
    gsel = lambda f: [g for g in f.gpus if culprit is None or g.index in culprit]
    out = {
        "util": _mean([g.util_gpu_pct for f in fs for g in gsel(f)]),
        "sm": _mean([g.sm_active_pct for f in fs for g in gsel(f)]),
        "dram": _mean([g.dram_bw_pct for f in fs for g in gsel(f)]),
        "tensor": _mean([g.tensor_pct for f in fs for g in gsel(f)]),
        "memutil": _mean([g.util_mem_pct for f in fs for g in gsel(f)]),
        "power": _mean([g.power_w for f in fs for g in gsel(f)]),
        "clock": _mean([g.sm_clock_mhz for f in fs for g in gsel(f)]),
        "psi": _mean([f.host.cpu_pressure_some_pct for f in fs if f.host]),
    }
    if culprit is not None and len(fs[0].gpus) > len(culprit):
        out["util_others"] = _mean([g.util_gpu_pct for f in fs for g in f.gpus if g.index not in culprit])
        out["sm_others"] = _mean([g.sm_active_pct for f in fs for g in f.gpus if g.index not in culprit])
    es = [f.engine for f in fs if f.engine is not None]
    if len(es) >= 2:
        a, b = es[0], es[-1]
        dt = (b.time_wall_s or 0) - (a.time_wall_s or 0)
        if dt > 0 and a.generation_tokens_total is not None and b.generation_tokens_total is not None:
            out["tok_s"] = round((b.generation_tokens_total - a.generation_tokens_total) / dt, 1)
        out["running"] = _mean([e.requests_running for e in es])
        out["waiting"] = _mean([e.requests_waiting for e in es])
        out["kv"] = _mean([None if e.kv_usage_ratio is None else 100 * e.kv_usage_ratio for e in es])
        if a.preemptions_total is not None:
            out["preempt"] = b.preemptions_total - a.preemptions_total
        if a.retracted_requests_total is not None:
            out["retract"] = b.retracted_requests_total - a.retracted_requests_total
        if a.spec_draft_tokens_total is not None and b.spec_draft_tokens_total - a.spec_draft_tokens_total > 0:
            out["accept"] = round((b.spec_accepted_tokens_total - a.spec_accepted_tokens_total)
                                  / (b.spec_draft_tokens_total - a.spec_draft_tokens_total), 3)
        for name in ("itl", "ttft"):
            h0, h1 = _hist(a, name), _hist(b, name)
            out[name + "_p50"] = _pct(h0, h1, 0.5)
            out[name + "_p99"] = _pct(h0, h1, 0.99)
    launches = [h for f in fs for h in f.launch if h.api != "off-cpu"]
    if launches:
        out["launch_max_us"] = round(max(h.max_ns for h in launches) / 1000, 1)
        out["launch_mean_us"] = round(sum(h.sum_ns for h in launches) / max(1, sum(h.count for h in launches)) / 1000, 2)
    return {k: v for k, v in out.items() if v is not None}


def summarize(a, b=None, lo=None, hi=None, culprit=None):
    """``summarize(truth, frames)``: {"healthy": ..., "window": ...} (or thirds of a healthy
    trace); ``summarize(frames, lo, hi, culprit)``: one span."""
    if isinstance(a, list):
        return span(a, b, lo, hi)  # (frames, lo, hi, culprit)
    truth, frames = a, b
    s0, s1 = frames[0].time_wall_s, frames[-1].time_wall_s
    if truth.window is None:
        n = len(frames)
        return {f"part{k + 1}": span(frames, frames[k * n // 3].time_wall_s,
                                     frames[min(n - 1, (k + 1) * n // 3)].time_wall_s)
                for k in range(3)}
    w0, w1 = truth.window
    return {"healthy": span(frames, s0 + 5, w0 - 3, truth.culprit_gpus),
            "window": span(frames, w0 + 0.3 * (w1 - w0), w1, truth.culprit_gpus)}
