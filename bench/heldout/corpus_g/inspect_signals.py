"""This corpus's own inspector: per-window summaries of the signals (no detector)."""

from __future__ import annotations


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _rate(frames, attr):
    vals = [(f.time_wall_s, getattr(f.engine, attr)) for f in frames
            if f.engine is not None and getattr(f.engine, attr) is not None]
    if len(vals) < 2 or vals[-1][0] == vals[0][0]:
        return None
    return (vals[-1][1] - vals[0][1]) / (vals[-1][0] - vals[0][0])


def _hist_mean(frames, name):
    hs = [(h.count, h.sum) for f in frames if f.engine is not None for h in f.engine.histograms if h.name == name]
    if len(hs) < 2 or hs[-1][0] <= hs[0][0]:
        return None
    return (hs[-1][1] - hs[0][1]) / (hs[-1][0] - hs[0][0])


def _f(v, p=1):
    return "-" if v is None else f"{v:.{p}f}"


def summarize(frames, lo, hi, culprit=None):
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if not fs:
        return "(no frames)"
    g = culprit[0] if culprit else 0
    gs = [f.gpus[g] for f in fs if len(f.gpus) > g]
    others = [x for f in fs for x in f.gpus if x.index != g]
    e = fs[-1].engine
    thr = sorted({r for x in gs for r in x.throttle})
    parts = [f"util {_f(_mean([x.util_gpu_pct for x in gs]), 0)}",
             f"sm {_f(_mean([x.sm_active_pct for x in gs]), 0)}",
             f"dram {_f(_mean([x.dram_bw_pct for x in gs]), 0)}",
             f"ten {_f(_mean([x.tensor_pct for x in gs]), 0)}",
             f"memutil {_f(_mean([x.util_mem_pct for x in gs]), 0)}",
             f"P {_f(_mean([x.power_w for x in gs]), 0)}W",
             f"clk {_f(_mean([x.sm_clock_mhz for x in gs]), 0)}",
             f"T {_f(_mean([x.temp_c for x in gs]), 0)}"]
    if others:
        parts.append(f"others util {_f(_mean([x.util_gpu_pct for x in others]), 0)} "
                     f"sm {_f(_mean([x.sm_active_pct for x in others]), 0)} P {_f(_mean([x.power_w for x in others]), 0)}")
    if thr:
        parts.append("thr " + ",".join(thr))
    if e is not None:
        parts.append(f"gen/s {_f(_rate(fs, 'generation_tokens_total'), 0)}")
        parts.append(f"prompt/s {_f(_rate(fs, 'prompt_tokens_total'), 0)}")
        parts.append(f"run {_f(_mean([f.engine.requests_running for f in fs if f.engine]), 1)}")
        parts.append(f"wait {_f(_mean([f.engine.requests_waiting for f in fs if f.engine]), 1)}")
        if e.kv_usage_ratio is not None:
            parts.append(f"kv {_f(_mean([f.engine.kv_usage_ratio for f in fs if f.engine]), 2)}")
        for a in ("preemptions_total", "retracted_requests_total"):
            r = _rate(fs, a)
            if r:
                parts.append(f"{a[:7]}/s {_f(r, 2)}")
        itl = _hist_mean(fs, "itl")
        if itl is not None:
            parts.append(f"itl {itl * 1000:.1f}ms")
        ttft = _hist_mean(fs, "ttft")
        if ttft is not None:
            parts.append(f"ttft {ttft:.2f}s")
        d, a = _rate(fs, "spec_draft_tokens_total"), _rate(fs, "spec_accepted_tokens_total")
        if d:
            parts.append(f"accept {a / d:.2f}")
        if e.spec_accept_ratio is not None:
            parts.append(f"acc_g {e.spec_accept_ratio:.2f}")
        c = _rate(fs, "cpu_s")
        parts.append(f"eng_cpu {_f(c, 2)} invol/s {_f(_rate(fs, 'ctx_involuntary'), 0)} "
                     f"busiest {_f(_rate(fs, 'busiest_thread_cpu_s'), 2)}")
    h = [f.host for f in fs if f.host]
    parts.append(f"host {_f(_mean([x.cpu_pct for x in h]), 0)}% psi {_f(_mean([x.cpu_pressure_some_pct for x in h]), 0)} "
                 f"rq {_f(_mean([x.run_queue for x in h]), 0)}")
    pins = [f.pinned for f in fs if f.pinned]
    if len(pins) >= 2 and pins[-1].cpu_s is not None:
        dt = fs[-1].time_wall_s - fs[0].time_wall_s
        if dt > 0:
            parts.append(f"pin_cpu {(pins[-1].cpu_s - pins[0].cpu_s) / dt:.1f} "
                         f"invol/s {(pins[-1].ctx_involuntary - pins[0].ctx_involuntary) / dt:.0f}")
    la = [x for f in fs for x in f.launch if x.api != "off-cpu"]
    if la:
        n = sum(x.count for x in la)
        parts.append(f"launch {n / max(1, len(fs)):.0f}/tick avg {sum(x.sum_ns for x in la) / max(n, 1) / 1000:.1f}us "
                     f"max {max(x.max_ns for x in la) / 1000:.0f}us")
    procs = {p.name for f in fs for p in f.processes}
    parts.append(f"procs {len(procs)}")
    return " | ".join(parts)
