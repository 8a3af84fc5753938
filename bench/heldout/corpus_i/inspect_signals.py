"""My own inspector: per-window summaries of a trace's signals (no detector involved)."""

from __future__ import annotations


def _hq(h0, h1, q):
    """A quantile of the observations between two cumulative readings."""
    if h0 is None or h1 is None:
        return None
    cum = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
    n = h1.count - h0.count
    if n <= 0:
        return None
    want = q * n
    for bound, c in zip(h1.upper_bounds, cum):
        if c >= want:
            return bound
    return float("inf")


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def summarize(frames, lo, hi, culprit=None):
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(fs) < 2:
        return "(no frames)"
    parts = []
    gi = sorted({g.index for f in fs for g in f.gpus})
    show = gi if len(gi) <= 2 else sorted({gi[0], gi[-1], *(culprit or ())})
    for i in show:
        gs = [g for f in fs for g in f.gpus if g.index == i]
        u, sm, dr, p, clk, tmp = (_mean([getattr(g, k) for g in gs]) for k in (
            "util_gpu_pct", "sm_active_pct", "dram_bw_pct", "power_w", "sm_clock_mhz", "temp_c"))
        thr = sorted({r for g in gs for r in g.throttle})
        fmt = lambda x, d=0: "-" if x is None else f"{x:.{d}f}"  # noqa: E731
        parts.append(f"g{i}: u{fmt(u)} sm{fmt(sm)} dr{fmt(dr)} {fmt(p)}W {fmt(clk)}MHz {fmt(tmp)}C"
                     + (f" {'/'.join(thr)}" if thr else ""))
    e0 = next((f.engine for f in fs if f.engine is not None), None)
    e1 = next((f.engine for f in reversed(fs) if f.engine is not None), None)
    if e0 is not None and e1 is not None and e1.time_wall_s and e0.time_wall_s and e1.time_wall_s > e0.time_wall_s:
        span = e1.time_wall_s - e0.time_wall_s
        rate = lambda k: None if getattr(e0, k) is None or getattr(e1, k) is None else (getattr(e1, k) - getattr(e0, k)) / span  # noqa: E731
        gen, pr, ca = rate("generation_tokens_total"), rate("prompt_tokens_total"), rate("prompt_tokens_cached_total")
        h0 = {h.name: h for h in e0.histograms}
        h1 = {h.name: h for h in e1.histograms}
        itl = _hq(h0.get("itl"), h1.get("itl"), 0.5)
        itl9 = _hq(h0.get("itl"), h1.get("itl"), 0.99)
        ttft = _hq(h0.get("ttft"), h1.get("ttft"), 0.5)
        run = _mean([f.engine.requests_running for f in fs if f.engine])
        wait = _mean([f.engine.requests_waiting for f in fs if f.engine])
        kv = _mean([f.engine.kv_usage_ratio for f in fs if f.engine])
        pre = (rate("preemptions_total") or 0) + (rate("retracted_requests_total") or 0)
        s = f"| {e1.kind}: gen {gen and round(gen)}/s prompt {pr and round(pr)}/s"
        if ca:
            s += f" (cached {round(ca)})"
        s += f" itl50 {itl} itl99 {itl9} ttft50 {ttft} run {run and round(run)} wait {wait and round(wait)}"
        if kv is not None:
            s += f" kv {kv:.2f}"
        if pre:
            s += f" preempt {pre * 60:.0f}/min"
        if e1.spec_accepted_tokens_total is not None and e0.spec_draft_tokens_total is not None:
            d = e1.spec_draft_tokens_total - e0.spec_draft_tokens_total
            if d:
                s += f" accept {(e1.spec_accepted_tokens_total - e0.spec_accepted_tokens_total) / d:.2f}"
        if e1.spec_accept_length is not None:
            s += f" acclen {e1.spec_accept_length:.2f}"
        if e1.cpu_s is not None and e0.cpu_s is not None:
            s += f" treecpu {(e1.cpu_s - e0.cpu_s) / span:.2f}"
        if e1.ctx_involuntary is not None and e0.ctx_involuntary is not None:
            s += f" inv {(e1.ctx_involuntary - e0.ctx_involuntary) / span:.0f}/s"
        parts.append(s)
    hs = [f.host for f in fs if f.host]
    if hs:
        parts.append(f"| host cpu {_mean([h.cpu_pct for h in hs]):.0f}% psi {_mean([h.cpu_pressure_some_pct for h in hs]):.0f} rq {_mean([h.run_queue for h in hs]):.0f}")
    ls = [h for f in fs for h in f.launch if h.api != "off-cpu"]
    if ls:
        from gputop.buckets import bucket_mid_ns
        tot = {}
        for h in ls:
            for b, c in h.buckets.items():
                tot[b] = tot.get(b, 0) + c
        n = sum(tot.values())
        acc, p99 = 0, None
        for b in sorted(tot):
            acc += tot[b]
            if acc >= 0.99 * n:
                p99 = bucket_mid_ns(b) / 1000
                break
        parts.append(f"| launch p99 {p99:.0f}us")
    return " ".join(parts)
