"""Physical summaries of a stretch of frames (to check a trace against its physics).

Independent of gputop's model: plain means of the raw readings, rates from counter
differences, percentiles from histogram differences (linear inside a bucket).
"""

from __future__ import annotations

from gputop.schema import EngineHistogram, Frame


def _quantile(h0: EngineHistogram | None, h1: EngineHistogram, q: float) -> float | None:
    if h0 is not None and h0.upper_bounds == h1.upper_bounds:
        cum = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
        count = h1.count - h0.count
    else:
        cum = list(h1.cumulative)
        count = h1.count
    if count <= 0:
        return None
    target = q * count
    prev_c, prev_b = 0.0, 0.0
    for b, c in zip(h1.upper_bounds, cum):
        if c >= target:
            if c == prev_c:
                return b
            return prev_b + (b - prev_b) * (target - prev_c) / (c - prev_c)
        prev_c, prev_b = c, b
    return h1.upper_bounds[-1] * 1.5  # beyond the last finite bound


def _hist(engine, name):
    if engine is None:
        return None
    for h in engine.histograms:
        if h.name == name:
            return h
    return None


def summarize(frames: list[Frame], t0: float | None = None, t1: float | None = None,
              gpus: tuple[int, ...] | None = None) -> dict:
    sel = [f for f in frames if (t0 is None or f.time_wall_s >= t0) and (t1 is None or f.time_wall_s < t1)]
    out: dict = {"frames": len(sel)}
    if not sel:
        return out
    idx = gpus if gpus is not None else tuple(range(len(sel[0].gpus)))

    def mean(vals):
        vals = [v for v in vals if v is not None]
        return round(sum(vals) / len(vals), 1) if vals else None

    for key, attr in (("util", "util_gpu_pct"), ("sm", "sm_active_pct"), ("dram", "dram_bw_pct"),
                      ("tensor", "tensor_pct"), ("power", "power_w"), ("clock", "sm_clock_mhz"),
                      ("temp", "temp_c")):
        out[key] = mean([getattr(f.gpus[i], attr) for f in sel for i in idx if i < len(f.gpus)])
    out["per_gpu_util"] = [mean([f.gpus[i].util_gpu_pct for f in sel]) for i in range(len(sel[0].gpus))]
    out["per_gpu_sm"] = [mean([f.gpus[i].sm_active_pct for f in sel]) for i in range(len(sel[0].gpus))]
    out["host_cpu"] = mean([f.host.cpu_pct for f in sel if f.host])
    out["psi"] = mean([f.host.cpu_pressure_some_pct for f in sel if f.host])
    eng = [f.engine for f in sel if f.engine is not None]
    if eng:
        a, b = eng[0], eng[-1]
        dt = (b.time_wall_s or 0) - (a.time_wall_s or 0)
        if dt > 0 and a.generation_tokens_total is not None and b.generation_tokens_total is not None \
                and b.generation_tokens_total >= a.generation_tokens_total:
            unit = "samples/s" if a.kind == "trainer" else "tok/s"
            out[unit] = round((b.generation_tokens_total - a.generation_tokens_total) / dt, 1)
        if a.kind != "trainer":
            out["running"] = mean([e.requests_running for e in eng])
            out["waiting"] = mean([e.requests_waiting for e in eng])
            out["waiting_max"] = max((e.requests_waiting or 0) for e in eng)
            out["kv"] = mean([100 * e.kv_usage_ratio for e in eng if e.kv_usage_ratio is not None])
            for name in ("itl", "ttft", "queue"):
                h0, h1 = _hist(a, name), _hist(b, name)
                if h1 is not None:
                    p50, p99 = _quantile(h0, h1, 0.5), _quantile(h0, h1, 0.99)
                    out[f"{name}_p50_ms"] = None if p50 is None else round(1000 * p50, 1)
                    out[f"{name}_p99_ms"] = None if p99 is None else round(1000 * p99, 1)
            pre = (b.preemptions_total or 0) - (a.preemptions_total or 0)
            ret = (b.retracted_requests_total or 0) - (a.retracted_requests_total or 0)
            if pre > 0 or ret > 0:
                out["preempt+retract"] = pre + ret
    launch = [h for f in sel for h in f.launch]
    if launch:
        from gputop.buckets import bucket_mid_ns
        for api in ("cudaLaunchKernel", "cudaGraphLaunch", "cudaStreamSynchronize"):
            buckets: dict[int, int] = {}
            for h in launch:
                if h.api == api:
                    for i, c in h.buckets.items():
                        buckets[i] = buckets.get(i, 0) + c
            n = sum(buckets.values())
            if n:
                acc = 0
                p99 = None
                for i in sorted(buckets):
                    acc += buckets[i]
                    if acc >= 0.99 * n:
                        p99 = bucket_mid_ns(i) / 1000
                        break
                out[f"{api}_p99_us"] = round(p99, 1)
    return out
