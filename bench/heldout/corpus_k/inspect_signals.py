"""corpus K's own inspector: what a window of frames shows, in one line (no detector)."""

from __future__ import annotations


def _pct(hist_a, hist_b, q):
    if hist_a is None or hist_b is None:
        return None
    n = hist_b.count - hist_a.count
    if n <= 0:
        return None
    want = q * n
    prev_c, prev_b = 0.0, 0.0
    for b, ca, cb in zip(hist_b.upper_bounds, hist_a.cumulative, hist_b.cumulative):
        c = cb - ca
        if c >= want:
            return prev_b + (b - prev_b) * (want - prev_c) / max(c - prev_c, 1e-9)
        prev_c, prev_b = c, b
    return hist_b.upper_bounds[-1]


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def summarize(frames, lo, hi, culprit=None):
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(fs) < 2:
        return "(no frames)"
    gi = culprit[0] if culprit else 0
    parts = []
    for label, idx in (("g%d" % gi, [gi]), ("rest", [g.index for g in fs[0].gpus if g.index != gi])):
        if not idx:
            continue
        pick = lambda attr: _mean([getattr(g, attr) for f in fs for g in f.gpus if g.index in idx])  # noqa
        u, sm, dr, tn = pick("util_gpu_pct"), pick("sm_active_pct"), pick("dram_bw_pct"), pick("tensor_pct")
        p, c, um = pick("power_w"), pick("sm_clock_mhz"), pick("util_mem_pct")
        f2 = lambda v: "-" if v is None else f"{v:.0f}"  # noqa
        parts.append(f"{label}: util {f2(u)} sm {f2(sm)} dram {f2(dr)} ten {f2(tn)} memU {f2(um)} "
                     f"{f2(p)}W {f2(c)}MHz")
    a, b = fs[0].engine, fs[-1].engine
    if a is not None and b is not None and b.time_wall_s and a.time_wall_s and b.time_wall_s > a.time_wall_s:
        dt = b.time_wall_s - a.time_wall_s
        rate = lambda x, y: None if x is None or y is None else (y - x) / dt  # noqa
        g = rate(a.generation_tokens_total, b.generation_tokens_total)
        pr = rate(a.prompt_tokens_total, b.prompt_tokens_total)
        ca = rate(a.prompt_tokens_cached_total, b.prompt_tokens_cached_total)
        ha = {h.name: h for h in a.histograms}
        hb = {h.name: h for h in b.histograms}
        itl50, itl99 = _pct(ha.get("itl"), hb.get("itl"), 0.5), _pct(ha.get("itl"), hb.get("itl"), 0.99)
        ttft = _pct(ha.get("ttft"), hb.get("ttft"), 0.5)
        pre = rate(a.preemptions_total, b.preemptions_total)
        ret = rate(a.retracted_requests_total, b.retracted_requests_total)
        f1 = lambda v, d=0: "-" if v is None else f"{v:.{d}f}"  # noqa
        run = _mean([f.engine.requests_running for f in fs if f.engine])
        wait = _mean([f.engine.requests_waiting for f in fs if f.engine])
        kv = _mean([f.engine.kv_usage_ratio for f in fs if f.engine])
        acc = None
        if a.spec_draft_tokens_total is not None and b.spec_draft_tokens_total:
            d = b.spec_draft_tokens_total - a.spec_draft_tokens_total
            acc = (b.spec_accepted_tokens_total - a.spec_accepted_tokens_total) / d if d else None
        elif b.spec_accept_ratio is not None:
            acc = b.spec_accept_ratio
        parts.append(f"gen {f1(g)}/s prompt {f1(pr)}/s cached {f1(ca)}/s run {f1(run)} wait {f1(wait)} "
                     f"kv {f1(kv, 2)} itl50 {f1(itl50, 3)} itl99 {f1(itl99, 3)} ttft50 {f1(ttft, 2)} "
                     f"pre {f1(pre, 2)} ret {f1(ret, 2)} acc {f1(acc, 2)}")
    h = [f.host for f in fs if f.host]
    parts.append(f"host {_mean([x.cpu_pct for x in h]):.0f}% psi {_mean([x.cpu_pressure_some_pct for x in h]):.0f} "
                 f"rq {_mean([x.run_queue for x in h]):.0f}")
    if any(f.launch for f in fs):
        tot = sum(x.count for f in fs for x in f.launch if x.api != "off-cpu")
        mx = max((x.max_ns for f in fs for x in f.launch if x.api != "off-cpu"), default=0)
        parts.append(f"launch calls {tot} max {mx / 1e3:.0f}us")
    return " | ".join(parts)
