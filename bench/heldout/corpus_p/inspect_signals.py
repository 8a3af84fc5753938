"""What a reader of corpus P's frames would see: means of GPU-Util, SM, DRAM, tensor, power,
clocks, engine tokens/s and latency percentiles over a span of frames.

    summarize(truth, frames)            -> {"healthy": {...}, "window": {...}} (or thirds)
    summarize(frames, t0, t1, culprit)  -> one span's dict (what harness.py --signals calls)
"""

from __future__ import annotations


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 1) if xs else None


def _quantile(h0, h1, q):
    """q-quantile of the observations between two cumulative readings of one histogram."""
    if h0 is None or h1 is None or h0.upper_bounds != h1.upper_bounds:
        return None
    counts = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
    total = h1.count - h0.count
    if total <= 0:
        return None
    target = q * total
    for bound, c in zip(h1.upper_bounds, counts):
        if c >= target:
            return bound
    return float("inf")


def _hist(engine, name):
    if engine is None:
        return None
    return next((h for h in engine.histograms if h.name == name), None)


def _rate(e0, e1, field):
    if e0 is None or e1 is None:
        return None
    a, b = getattr(e0, field), getattr(e1, field)
    if a is None or b is None or e1.time_wall_s is None or e0.time_wall_s is None:
        return None
    dt = e1.time_wall_s - e0.time_wall_s
    return round((b - a) / dt, 2) if dt > 0 else None


def span(frames, t0, t1, culprit=None):
    sel = [f for f in frames if t0 <= f.time_wall_s <= t1]
    if len(sel) < 2:
        return {}
    gpus = list(culprit) if culprit else None

    def per_gpu(field):
        vals = []
        for f in sel:
            for g in f.gpus:
                if gpus is None or g.index in gpus:
                    vals.append(getattr(g, field))
        return _mean(vals)
    out = {"util": per_gpu("util_gpu_pct"), "sm": per_gpu("sm_active_pct"),
           "dram": per_gpu("dram_bw_pct"), "tensor": per_gpu("tensor_pct"),
           "mem_util": per_gpu("util_mem_pct"), "power": per_gpu("power_w"),
           "clock": per_gpu("sm_clock_mhz")}
    if gpus and len(sel[0].gpus) > 1:
        others = [g.util_gpu_pct for f in sel for g in f.gpus if g.index not in gpus]
        sm_o = [g.sm_active_pct for f in sel for g in f.gpus if g.index not in gpus]
        out["others_util"] = _mean(others)
        out["others_sm"] = _mean(sm_o)
    engines = [f.engine for f in sel if f.engine is not None]
    if len(engines) >= 2:
        e0, e1 = engines[0], engines[-1]
        out["gen_tok_s"] = _rate(e0, e1, "generation_tokens_total")
        out["prompt_tok_s"] = _rate(e0, e1, "prompt_tokens_total")
        out["preempt_s"] = _rate(e0, e1, "preemptions_total")
        out["retract_s"] = _rate(e0, e1, "retracted_requests_total")
        if e1.spec_draft_tokens_total is not None and e0.spec_draft_tokens_total is not None:
            d = e1.spec_draft_tokens_total - e0.spec_draft_tokens_total
            a = e1.spec_accepted_tokens_total - e0.spec_accepted_tokens_total
            out["spec_accept"] = round(a / d, 3) if d > 0 else None
        if e1.spec_accept_ratio is not None:
            out["spec_accept"] = e1.spec_accept_ratio
        for name in ("itl", "ttft"):
            h0, h1 = _hist(e0, name), _hist(e1, name)
            out[name + "_p50"] = _quantile(h0, h1, 0.5)
            out[name + "_p99"] = _quantile(h0, h1, 0.99)
        out["running"] = _mean([e.requests_running for e in engines])
        out["waiting"] = _mean([e.requests_waiting for e in engines])
        kv = _mean([e.kv_usage_ratio for e in engines])
        out["kv"] = None if kv is None else round(kv, 2)
    hosts = [f.host for f in sel if f.host is not None]
    out["psi"] = _mean([h.cpu_pressure_some_pct for h in hosts])
    launches = [h for f in sel for h in f.launch if h.api != "off-cpu"]
    if launches:
        out["launch_max_ms"] = round(max(h.max_ns for h in launches) / 1e6, 2)
    return {k: v for k, v in out.items() if v is not None}


def summarize(*args):
    if len(args) >= 3 or (args and isinstance(args[0], list)):
        frames, t0, t1 = args[0], args[1], args[2]
        culprit = args[3] if len(args) > 3 else None
        return span(frames, t0, t1, culprit)
    truth, frames = args[0], args[1]
    s0, s1 = frames[0].time_wall_s, frames[-1].time_wall_s
    if truth.window:
        a, b = truth.window
        return {"healthy": span(frames, s0 + 5, a - 3, truth.culprit_gpus),
                "window": span(frames, a + 0.3 * (b - a), b, truth.culprit_gpus)}
    third = (s1 - s0) / 3
    return {f"part{k + 1}": span(frames, s0 + k * third, s0 + (k + 1) * third)
            for k in range(3)}
