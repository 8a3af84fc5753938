"""Signal summaries of a trace's frames (for checking the physics; not a detector)."""

from __future__ import annotations


def _med(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def summarize(frames, a, b, gpus=None):
    """Medians over frames in [a, b] (wall seconds) of what a user would look at."""
    sel = [f for f in frames if a <= f.time_wall_s <= b]
    if len(sel) < 2:
        return "-"
    g = (gpus or (0,))[0]
    pick = lambda f: next((x for x in f.gpus if x.index == g), f.gpus[0])
    out = {}
    for key in ("util_gpu_pct", "sm_active_pct", "tensor_pct", "dram_bw_pct", "util_mem_pct",
                "power_w", "sm_clock_mhz", "temp_c"):
        v = _med(getattr(pick(f), key) for f in sel)
        if v is not None:
            out[key.split("_")[0] + ("" if key.startswith(("power", "temp")) else
                                     "_" + key.split("_")[1])] = round(v)
    e0, e1 = sel[0].engine, sel[-1].engine
    span = sel[-1].time_wall_s - sel[0].time_wall_s
    if e0 is not None and e1 is not None and e0.kind == e1.kind:
        if e1.generation_tokens_total is not None and e0.generation_tokens_total is not None:
            out["work/s"] = round((e1.generation_tokens_total - e0.generation_tokens_total) / span)
        for h in ("itl", "ttft"):
            h0 = {x.name: x for x in e0.histograms}.get(h)
            h1 = {x.name: x for x in e1.histograms}.get(h)
            if h0 and h1 and h1.count > h0.count:
                out[h + "_ms"] = round(1000 * (h1.sum - h0.sum) / (h1.count - h0.count), 1)
        out["run"] = _med(f.engine.requests_running for f in sel if f.engine)
        out["wait"] = _med(f.engine.requests_waiting for f in sel if f.engine)
        if e1.kv_usage_ratio is not None:
            out["kv"] = round(_med(f.engine.kv_usage_ratio for f in sel if f.engine), 2)
        p = (e1.preemptions_total or 0) - (e0.preemptions_total or 0)
        p += (e1.retracted_requests_total or 0) - (e0.retracted_requests_total or 0)
        if p:
            out["preempt/s"] = round(p / span, 2)
        if e1.spec_draft_tokens_total and e1.spec_draft_tokens_total > (e0.spec_draft_tokens_total or 0):
            out["accept"] = round((e1.spec_accepted_tokens_total - e0.spec_accepted_tokens_total)
                                  / (e1.spec_draft_tokens_total - e0.spec_draft_tokens_total), 2)
        if e1.cpu_s is not None and e0.cpu_s is not None:
            out["eng_cpu"] = round((e1.cpu_s - e0.cpu_s) / span, 2)
    h = [f.host.cpu_pressure_some_pct for f in sel if f.host]
    out["psi"] = round(_med(h), 1) if h else None
    lat = [x for f in sel for x in f.launch if x.api != "off-cpu"]
    if lat:
        out["launch_max_us"] = round(_med(x.max_ns for x in lat) / 1000)
    return " ".join(f"{k}={v}" for k, v in out.items())
