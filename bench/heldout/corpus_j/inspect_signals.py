"""The corpus's own inspector: per-window summaries of what a trace's frames say (no detector)."""

from __future__ import annotations


def _rate(pairs):
    """Mean rate of a cumulative counter over (time, value) pairs, reset-safe."""
    pairs = [(t, v) for t, v in pairs if v is not None]
    if len(pairs) < 2:
        return None
    total, span = 0.0, 0.0
    for (t0, v0), (t1, v1) in zip(pairs, pairs[1:]):
        if t1 <= t0:
            continue
        if v1 >= v0:
            total += v1 - v0
        span += t1 - t0
    return total / span if span else None


def _hist_mean(frames, name):
    first = last = None
    for f in frames:
        if f.engine is None:
            continue
        h = next((h for h in f.engine.histograms if h.name == name), None)
        if h is None:
            continue
        first = first or h
        last = h
    if first is None or last is None or last.count <= first.count:
        return None
    return (last.sum - first.sum) / (last.count - first.count)


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def summarize(frames, lo, hi, culprit=None) -> str:
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if not fs:
        return "(no frames)"
    gpus = sorted({g.index for f in fs for g in f.gpus})
    pick = list(culprit) if culprit else gpus[:1]
    out = []
    for g in pick + [x for x in gpus if x not in pick][:1]:
        rows = [next(x for x in f.gpus if x.index == g) for f in fs]

        def m(attr):
            v = _mean([getattr(r, attr) for r in rows])
            return "-" if v is None else f"{v:.0f}"
        thr = sorted({t for r in rows for t in r.throttle})
        out.append(f"g{g}: util {m('util_gpu_pct')} sm {m('sm_active_pct')} ten {m('tensor_pct')} "
                   f"dram {m('dram_bw_pct')} memutil {m('util_mem_pct')} P {m('power_w')}W "
                   f"clk {m('sm_clock_mhz')} T {m('temp_c')} thr {','.join(thr) or '-'}")
    eng = [f for f in fs if f.engine is not None]
    if eng:
        def cr(attr):
            return _rate([(f.engine.time_wall_s, getattr(f.engine, attr)) for f in eng])
        gen, pr = cr("generation_tokens_total"), cr("prompt_tokens_total")
        pre, retr = cr("preemptions_total"), cr("retracted_requests_total")
        itl, ttft = _hist_mean(eng, "itl"), _hist_mean(eng, "ttft")
        acc, drafts = cr("spec_accepted_tokens_total"), cr("spec_draft_tokens_total")
        kv = _mean([f.engine.kv_usage_ratio for f in eng])
        parts = [f"{eng[0].engine.kind}: gen {gen or 0:.0f}/s prompt {pr or 0:.0f}/s",
                 f"run {_mean([f.engine.requests_running for f in eng]) or 0:.0f}",
                 f"wait {_mean([f.engine.requests_waiting for f in eng]) or 0:.0f}"]
        if kv is not None:
            parts.append(f"kv {kv:.2f}")
        if itl is not None:
            parts.append(f"itl {itl * 1000:.1f}ms")
        if ttft is not None:
            parts.append(f"ttft {ttft * 1000:.0f}ms")
        if pre:
            parts.append(f"preempt {pre:.2f}/s")
        if retr:
            parts.append(f"retract {retr:.2f}/s")
        if drafts:
            parts.append(f"accept {(acc or 0) / drafts:.2f}")
        sa = _mean([f.engine.spec_accept_ratio for f in eng])
        if sa is not None:
            parts.append(f"accept_gauge {sa:.2f}")
        out.append(" ".join(parts))
    hosts = [f.host for f in fs if f.host]
    if hosts:
        out.append(f"host cpu {_mean([h.cpu_pct for h in hosts]):.0f}% psi "
                   f"{_mean([h.cpu_pressure_some_pct for h in hosts]):.0f} rq "
                   f"{_mean([h.run_queue for h in hosts]):.0f}")
    pins = [f.pinned for f in fs if f.pinned]
    if pins:
        r = _rate([(f.time_wall_s, f.pinned.cpu_s) for f in fs if f.pinned])
        iv = _rate([(f.time_wall_s, f.pinned.ctx_involuntary) for f in fs if f.pinned])
        out.append(f"pin cpu {r or 0:.1f} cores invol {iv or 0:.0f}/s")
    launches = [h for f in fs for h in f.launch if h.api != "off-cpu"]
    if launches:
        n = sum(h.count for h in launches)
        big = sum(c for h in launches for i, c in h.buckets.items() if i >= 8 + (20 - 3) * 8)
        out.append(f"launch {n / len(fs):.0f}/tick mean {sum(h.sum_ns for h in launches) / max(1, n) / 1000:.1f}us "
                   f">1ms {big}")
    nproc = _mean([len(f.processes) for f in fs])
    out.append(f"procs {nproc:.1f}")
    return " | ".join(out)
