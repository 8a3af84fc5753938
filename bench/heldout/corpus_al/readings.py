"""Per-frame readings a user would look at, derived from frames only (for show.py and sanity.py)."""
from __future__ import annotations

from gputop.buckets import bucket_bounds_ns


def _q(bounds, cum, count, q):
    if count <= 0:
        return None
    target = q * count
    prev_b, prev_c = 0.0, 0.0
    for b, c in zip(bounds, cum):
        if c >= target:
            frac = (target - prev_c) / max(c - prev_c, 1e-9)
            return prev_b + (b - prev_b) * frac
        prev_b, prev_c = b, c
    return bounds[-1] * 1.5


def hist_delta_q(h0, h1, q):
    if h0 is None or h1 is None:
        return None
    cum = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
    return _q(h1.upper_bounds, cum, h1.count - h0.count, q)


def rows(frames):
    """One dict per frame."""
    out = []
    prev = None
    prev_eng = None
    for f in frames:
        g = f.gpus
        r = {"t": f.time_wall_s, "util": sum(x.util_gpu_pct or 0 for x in g) / len(g),
             "util_min": min(x.util_gpu_pct or 0 for x in g),
             "sm": (sum(x.sm_active_pct for x in g) / len(g)) if g[0].sm_active_pct is not None else None,
             "dram": (sum(x.dram_bw_pct for x in g) / len(g)) if g[0].dram_bw_pct is not None else None,
             "memutil": sum(x.util_mem_pct or 0 for x in g) / len(g),
             "clock": sum(x.sm_clock_mhz or 0 for x in g) / len(g), "clock_min": min(x.sm_clock_mhz or 0 for x in g),
             "power": sum(x.power_w or 0 for x in g) / len(g), "temp": max(x.temp_c or 0 for x in g),
             "throttle": sorted({r for x in g for r in x.throttle}),
             "per_gpu_util": [x.util_gpu_pct for x in g], "per_gpu_sm": [x.sm_active_pct for x in g],
             "per_gpu_clock": [x.sm_clock_mhz for x in g],
             "procs": len({p.pid for p in f.processes}),
             "other_sm": sum((p.sm_util_pct or 0) for p in f.processes if f.pinned and p.pid not in f.pinned.tree_pids),
             "psi": f.host.cpu_pressure_some_pct if f.host else None, "runq": f.host.run_queue if f.host else None}
        e = f.engine
        r["url"] = e.url if e else None
        r["running"] = e.requests_running if e else None
        r["waiting"] = e.requests_waiting if e else None
        r["kv"] = e.kv_usage_ratio if e else None
        r["gen_rate"] = r["itl_p99"] = r["itl_p50"] = r["preempt"] = r["accept"] = r["tpot_p50"] = None
        if e and prev_eng and e.time_mono_s and prev_eng.time_mono_s and e.time_mono_s > prev_eng.time_mono_s:
            dt = e.time_mono_s - prev_eng.time_mono_s
            if e.generation_tokens_total is not None and prev_eng.generation_tokens_total is not None:
                r["gen_rate"] = (e.generation_tokens_total - prev_eng.generation_tokens_total) / dt
            hs = {h.name: h for h in e.histograms}
            hp = {h.name: h for h in prev_eng.histograms}
            key = "itl" if "itl" in hs else "tpot"
            r["itl_p99"] = hist_delta_q(hp.get(key), hs.get(key), 0.99)
            r["itl_p50"] = hist_delta_q(hp.get(key), hs.get(key), 0.5)
            p0 = (prev_eng.preemptions_total or 0) + (prev_eng.retracted_requests_total or 0)
            p1 = (e.preemptions_total or 0) + (e.retracted_requests_total or 0)
            r["preempt"] = p1 - p0
            r["tpot_p50"] = hist_delta_q(hp.get("tpot"), hs.get("tpot"), 0.5)
            if e.spec_draft_tokens_total is not None and prev_eng.spec_draft_tokens_total is not None:
                d = e.spec_draft_tokens_total - prev_eng.spec_draft_tokens_total
                r["accept"] = (e.spec_accepted_tokens_total - prev_eng.spec_accepted_tokens_total) / d if d > 0 else None
            elif e.spec_accept_ratio is not None:
                r["accept"] = e.spec_accept_ratio
        if e and (prev_eng is None or e.time_mono_s != prev_eng.time_mono_s):
            prev_eng = e
        pin = f.pinned
        r["cpu_rate"] = r["thr_rate"] = r["inv_rate"] = None
        if pin and prev and prev.pinned and pin.cpu_s is not None:
            dt = f.time_wall_s - prev.time_wall_s
            r["cpu_rate"] = (pin.cpu_s - prev.pinned.cpu_s) / dt
            r["inv_rate"] = (pin.ctx_involuntary - prev.pinned.ctx_involuntary) / dt
            if pin.cpu_throttled_periods is not None and prev.pinned.cpu_throttled_periods is not None:
                r["thr_rate"] = (pin.cpu_throttled_periods - prev.pinned.cpu_throttled_periods) / dt
        r["launch_p99_us"] = None
        if f.launch:
            merged = {}
            for lh in f.launch:
                for b, c in lh.buckets.items():
                    merged[b] = merged.get(b, 0) + c
            n = sum(merged.values())
            if n:
                acc = 0
                for b in sorted(merged):
                    acc += merged[b]
                    if acc >= 0.99 * n:
                        r["launch_p99_us"] = bucket_bounds_ns(b)[1] / 1000
                        break
        out.append(r)
        prev = f
    return out


def mean(rs, key, a=None, b=None):
    v = [r[key] for r in rs if r.get(key) is not None and (a is None or a <= r["t"] < b)]
    return sum(v) / len(v) if v else None


def pct(rs, key, a, b, q=0.9):
    v = sorted(r[key] for r in rs if r.get(key) is not None and a <= r["t"] < b)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None
