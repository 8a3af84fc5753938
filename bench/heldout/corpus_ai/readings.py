"""What a user would look at, per window of ticks: shared by show.py and sanity.py."""
from __future__ import annotations


def _hq(h0, h1, q):
    """Quantile of the observations between two cumulative histogram readings."""
    if h1 is None:
        return None
    prev = h0.cumulative if h0 is not None and h0.upper_bounds == h1.upper_bounds else (0.0,) * len(h1.cumulative)
    n = h1.count - (h0.count if h0 is not None and h0.upper_bounds == h1.upper_bounds else 0.0)
    if n <= 0:
        return None
    target = q * n
    for b, c1, c0 in zip(h1.upper_bounds, h1.cumulative, prev):
        if c1 - c0 >= target:
            return b
    return h1.upper_bounds[-1] * 2


def _hist(e, name):
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def summarize(frames, lo, hi, gpus=None):
    fr = [f for f in frames if lo <= f.time_wall_s < hi]
    if not fr:
        return {}
    out = {}
    idx = gpus if gpus is not None else [g.index for g in fr[0].gpus]

    def mean(vals):
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None
    out["util"] = mean([g.util_gpu_pct for f in fr for g in f.gpus if g.index in idx])
    out["sm"] = mean([g.sm_active_pct for f in fr for g in f.gpus if g.index in idx])
    out["dram"] = mean([g.dram_bw_pct for f in fr for g in f.gpus if g.index in idx])
    out["memutil"] = mean([g.util_mem_pct for f in fr for g in f.gpus if g.index in idx])
    out["clock"] = mean([g.sm_clock_mhz for f in fr for g in f.gpus if g.index in idx and (g.util_gpu_pct or 0) > 10])
    out["power"] = mean([g.power_w for f in fr for g in f.gpus if g.index in idx])
    out["temp"] = mean([g.temp_c for f in fr for g in f.gpus if g.index in idx])
    out["throttled"] = mean([1.0 if (g.throttle and g.throttle != ("power cap",)) else 0.0 for f in fr for g in f.gpus if g.index in idx])
    out["psi"] = mean([f.host.cpu_pressure_some_pct for f in fr if f.host])
    out["rq"] = mean([f.host.run_queue for f in fr if f.host])
    out["nprocs"] = max(sum(1 for p in f.processes if p.gpu_index in idx) for f in fr)
    engs = [f.engine for f in fr if f.engine is not None]
    if engs:
        e0, e1 = engs[0], engs[-1]
        span = (e1.time_wall_s or 0) - (e0.time_wall_s or 0)
        if span > 0 and e1.generation_tokens_total is not None and e0.generation_tokens_total is not None \
                and e1.generation_tokens_total >= e0.generation_tokens_total:
            out["tok_s"] = (e1.generation_tokens_total - e0.generation_tokens_total) / span
        if e1.preemptions_total is not None and e0.preemptions_total is not None:
            out["preempt"] = max(0.0, e1.preemptions_total - e0.preemptions_total)
        elif e1.retracted_requests_total is not None and e0.retracted_requests_total is not None:
            out["preempt"] = max(0.0, e1.retracted_requests_total - e0.retracted_requests_total)
        out["waiting"] = mean([e.requests_waiting for e in engs])
        out["running"] = mean([e.requests_running for e in engs])
        out["kv"] = mean([e.kv_usage_ratio for e in engs])
        if e1.decode_seconds_total is not None and e0.decode_seconds_total is not None and e1.generation_tokens_total \
                and e1.generation_tokens_total > e0.generation_tokens_total:
            out["dec_s_per_tok"] = (e1.decode_seconds_total - e0.decode_seconds_total) / (e1.generation_tokens_total - e0.generation_tokens_total)
        for nm in ("itl", "ttft", "tpot", "e2e"):
            out[nm + "_p99"] = _hq(_hist(e0, nm), _hist(e1, nm), 0.99)
            out[nm + "_p50"] = _hq(_hist(e0, nm), _hist(e1, nm), 0.5)
        if e1.spec_draft_tokens_total and e0.spec_draft_tokens_total is not None:
            d = e1.spec_draft_tokens_total - e0.spec_draft_tokens_total
            if d > 0:
                out["accept"] = (e1.spec_accepted_tokens_total - e0.spec_accepted_tokens_total) / d
        elif e1.spec_accept_ratio is not None:
            out["accept"] = mean([e.spec_accept_ratio for e in engs])
        if e1.cpu_throttled_periods is not None and e0.cpu_throttled_periods is not None:
            dp = (e1.cpu_periods or 0) - (e0.cpu_periods or 0)
            out["thr_frac"] = (e1.cpu_throttled_periods - e0.cpu_throttled_periods) / dp if dp > 0 else None
    pins = [f.pinned for f in fr if f.pinned is not None and f.pinned.cpu_s is not None]
    if len(pins) >= 2:
        span = fr[-1].time_wall_s - fr[0].time_wall_s
        if span > 0:
            out["tree_cpu"] = (pins[-1].cpu_s - pins[0].cpu_s) / span
            out["invol_s"] = (pins[-1].ctx_involuntary - pins[0].ctx_involuntary) / span
            if pins[-1].cpu_throttled_periods is not None and pins[0].cpu_throttled_periods is not None:
                dp = pins[-1].cpu_periods - pins[0].cpu_periods
                out["thr_frac"] = (pins[-1].cpu_throttled_periods - pins[0].cpu_throttled_periods) / dp if dp else 0.0
    lat = []
    for f in fr:
        for h in f.launch:
            if h.api in ("cudaLaunchKernel", "cuLaunchKernel") and h.count:
                lat.append(h.max_ns / 1e3)
    if lat:
        out["launch_max_us"] = sorted(lat)[int(0.9 * (len(lat) - 1))]
    return out


def fmt(d):
    keys = ("util", "sm", "dram", "memutil", "clock", "power", "temp", "throttled", "psi", "rq", "nprocs", "tok_s",
            "itl_p50", "itl_p99", "ttft_p99", "tpot_p99", "dec_s_per_tok", "waiting", "running", "kv", "preempt", "accept", "tree_cpu",
            "invol_s", "thr_frac", "launch_max_us")
    parts = []
    for k in keys:
        v = d.get(k)
        if v is None:
            continue
        parts.append(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}")
    return " ".join(parts)
