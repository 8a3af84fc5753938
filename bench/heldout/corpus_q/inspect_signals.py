"""What a reader of the frames would see between two wall times: means of GPU-Util, SM,
DRAM, tensor, clocks, power, engine tokens/s and interval latency percentiles from the
cumulative histograms, host PSI.  ``summarize(frames, t0, t1, culprit)`` is harness.py's call."""

from __future__ import annotations


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 1) if xs else None


def _pct_from(h0, h1, q):
    if h0 is None or h1 is None or h1.count - h0.count <= 0:
        return None
    d = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
    total = h1.count - h0.count
    want = q * total
    for bound, c in zip(h1.upper_bounds, d):
        if c >= want:
            return bound
    return float("inf")


def _hist(frame, name):
    e = frame.engine
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def summarize(frames, t0, t1, culprit=None):
    part = [f for f in frames if t0 <= f.time_wall_s <= t1]
    if len(part) < 2:
        return {"frames": len(part)}
    gpus = list(culprit) if culprit else None

    def per(attr):
        return _mean([getattr(g, attr) for f in part for g in f.gpus
                      if gpus is None or g.index in gpus])
    out = {"frames": len(part), "util": per("util_gpu_pct"), "sm": per("sm_active_pct"),
           "dram": per("dram_bw_pct"), "tensor": per("tensor_pct"), "clock": per("sm_clock_mhz"),
           "power": per("power_w"), "temp": per("temp_c"),
           "throttled": sum(1 for f in part for g in f.gpus if g.throttle
                            and (gpus is None or g.index in gpus))}
    a, b = part[0], part[-1]
    if a.engine is not None and b.engine is not None and b.engine.time_wall_s and a.engine.time_wall_s:
        dt = b.engine.time_wall_s - a.engine.time_wall_s
        if dt > 0 and a.engine.generation_tokens_total is not None and b.engine.generation_tokens_total is not None:
            out["tok_s"] = round((b.engine.generation_tokens_total - a.engine.generation_tokens_total) / dt, 1)
        for name in ("itl", "ttft"):
            h0, h1 = _hist(a, name), _hist(b, name)
            out[name + "_p50"] = _pct_from(h0, h1, 0.5)
            out[name + "_p99"] = _pct_from(h0, h1, 0.99)
        out["running"] = _mean([f.engine.requests_running for f in part if f.engine])
        out["waiting"] = _mean([f.engine.requests_waiting for f in part if f.engine])
        out["kv"] = _mean([f.engine.kv_usage_ratio for f in part if f.engine])
        for c in ("preemptions_total", "retracted_requests_total"):
            x, y = getattr(a.engine, c), getattr(b.engine, c)
            if x is not None and y is not None:
                out[c.split("_")[0]] = y - x
    out["psi"] = _mean([f.host.cpu_pressure_some_pct for f in part if f.host])
    out["rq"] = _mean([f.host.run_queue for f in part if f.host])
    if any(f.launch for f in part):
        hs = [h for f in part for h in f.launch if h.api != "off-cpu"]
        n = sum(h.count for h in hs)
        out["launch_mean_us"] = round(sum(h.sum_ns for h in hs) / max(n, 1) / 1000, 1)
        out["launch_max_ms"] = round(max((h.max_ns for h in hs), default=0) / 1e6, 2)
    return {k: v for k, v in out.items() if v is not None}
