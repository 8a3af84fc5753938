"""Summaries of a trace's signals over a window, to check the simulators against physics."""

from __future__ import annotations


def _quantile(prev, cur, qtl):
    if prev is None or cur is None:
        return None
    total = cur.count - prev.count
    if total <= 0:
        return None
    target = qtl * total
    lo, prev_c = 0.0, 0.0
    for b, c1, c0 in zip(cur.upper_bounds, cur.cumulative, prev.cumulative):
        c = c1 - c0
        if c >= target:
            width = c - prev_c
            frac = (target - prev_c) / width if width > 0 else 1.0
            return lo + (b - lo) * frac
        lo, prev_c = b, c
    return cur.upper_bounds[-1] * 1.5


def _hist(engine, name):
    if engine is None:
        return None
    for h in engine.histograms:
        if h.name == name:
            return h
    return None


def summarize(frames, t0: float, t1: float, gpus=None) -> dict:
    sel = [f for f in frames if t0 <= f.time_wall_s <= t1]
    if len(sel) < 2:
        return {}
    idx = gpus if gpus else range(len(sel[0].gpus))
    out = {}
    for key in ("util_gpu_pct", "sm_active_pct", "dram_bw_pct", "tensor_pct", "power_w",
                "sm_clock_mhz", "temp_c"):
        vals = [getattr(f.gpus[i], key) for f in sel for i in idx if i < len(f.gpus)]
        vals = [v for v in vals if v is not None]
        out[key] = round(sum(vals) / len(vals), 1) if vals else None
    a, b = sel[0], sel[-1]
    if a.engine is not None and b.engine is not None and a.engine.kind == b.engine.kind:
        dt = (b.engine.time_mono_s or b.time_mono_s) - (a.engine.time_mono_s or a.time_mono_s)
        if b.engine.generation_tokens_total is not None and dt > 0:
            out["work_per_s"] = round((b.engine.generation_tokens_total - a.engine.generation_tokens_total) / dt, 1)
        if a.engine.kind != "trainer":
            for name in ("itl", "ttft", "queue"):
                p99 = _quantile(_hist(a.engine, name), _hist(b.engine, name), 0.99)
                p50 = _quantile(_hist(a.engine, name), _hist(b.engine, name), 0.50)
                out[name + "_p50"] = None if p50 is None else round(p50, 4)
                out[name + "_p99"] = None if p99 is None else round(p99, 4)
            w = [f.engine.requests_waiting for f in sel if f.engine is not None]
            r = [f.engine.requests_running for f in sel if f.engine is not None]
            kv = [f.engine.kv_usage_ratio for f in sel if f.engine is not None]
            out["waiting"] = round(sum(w) / len(w), 1) if w else None
            out["running"] = round(sum(r) / len(r), 1) if r else None
            out["kv"] = round(sum(kv) / len(kv), 3) if kv else None
            pre = (b.engine.preemptions_total or 0) - (a.engine.preemptions_total or 0)
            ret = (b.engine.retracted_requests_total or 0) - (a.engine.retracted_requests_total or 0)
            out["evict"] = pre + ret
    out["host_cpu"] = round(sum(f.host.cpu_pct for f in sel) / len(sel), 1)
    out["psi"] = round(sum(f.host.cpu_pressure_some_pct for f in sel) / len(sel), 1)
    out["runq"] = round(sum(f.host.run_queue for f in sel) / len(sel), 1)
    thr = set()
    for f in sel:
        for i in idx:
            if i < len(f.gpus):
                thr.update(f.gpus[i].throttle)
    out["throttle"] = ",".join(sorted(thr))
    return out
