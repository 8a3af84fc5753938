"""Per-window signal summaries of a trace, to check its physics by eye (not a detector)."""

from __future__ import annotations

from gputop.buckets import bucket_mid_ns


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _hist(frames, name):
    first = last = None
    for f in frames:
        e = f.engine
        if e is None:
            continue
        for h in e.histograms:
            if h.name == name:
                first = first or h
                last = h
    if first is None or last is None or last.count <= first.count:
        return None
    return (last.sum - first.sum) / (last.count - first.count)


def _rate(frames, attr, source="engine"):
    pts = [(f.time_wall_s, getattr(f.engine if source == "engine" else f.pinned, attr, None))
           for f in frames if (f.engine if source == "engine" else f.pinned) is not None]
    pts = [(t, v) for t, v in pts if v is not None]
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        return None
    return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])


def summarize(frames, a, b, culprit=None):
    fs = [f for f in frames if a <= f.time_wall_s <= b]
    if not fs:
        return "(no frames)"
    idx = list(culprit) if culprit else [g.index for g in fs[0].gpus]
    gsel = [g for f in fs for g in f.gpus if g.index in idx]
    out = []

    def put(label, v, fmt="{:.0f}"):
        if v is not None:
            out.append(f"{label}=" + fmt.format(v))
    put("util", _mean(g.util_gpu_pct for g in gsel))
    put("sm", _mean(g.sm_active_pct for g in gsel))
    put("dram", _mean(g.dram_bw_pct for g in gsel))
    put("tens", _mean(g.tensor_pct for g in gsel))
    put("memctl", _mean(g.util_mem_pct for g in gsel))
    put("W", _mean(g.power_w for g in gsel))
    put("MHz", _mean(g.sm_clock_mhz for g in gsel))
    put("C", _mean(g.temp_c for g in gsel))
    thr = sorted({r for g in gsel for r in g.throttle})
    if thr:
        out.append("thr=" + "/".join(thr))
    put("tok/s", _rate(fs, "generation_tokens_total"))
    put("prompt/s", _rate(fs, "prompt_tokens_total"))
    itl = _hist(fs, "itl")
    put("itl_ms", itl * 1000 if itl is not None else None)
    put("ttft_s", _hist(fs, "ttft"), "{:.2f}")
    put("e2e_s", _hist(fs, "e2e"), "{:.1f}")
    put("run", _mean(f.engine.requests_running for f in fs if f.engine))
    put("wait", _mean(f.engine.requests_waiting for f in fs if f.engine))
    put("kv", _mean(f.engine.kv_usage_ratio for f in fs if f.engine), "{:.2f}")
    put("preempt/s", _rate(fs, "preemptions_total"), "{:.2f}")
    put("retract/s", _rate(fs, "retracted_requests_total"), "{:.2f}")
    acc = _rate(fs, "spec_accepted_tokens_total")
    drf = _rate(fs, "spec_draft_tokens_total")
    if acc is not None and drf:
        put("accept", acc / drf, "{:.2f}")
    put("accept_g", _mean(f.engine.spec_accept_ratio for f in fs if f.engine), "{:.2f}")
    put("host%", _mean(f.host.cpu_pct for f in fs if f.host))
    put("psi", _mean(f.host.cpu_pressure_some_pct for f in fs if f.host), "{:.1f}")
    put("rq", _mean(f.host.run_queue for f in fs if f.host))
    put("tree_cpu", _rate(fs, "cpu_s"), "{:.2f}")
    put("invol/s", _rate(fs, "ctx_involuntary"))
    launches = [h for f in fs for h in f.launch if h.api == "cudaGraphLaunch"]
    if launches:
        put("graph_us", sum(h.sum_ns for h in launches) / max(1, sum(h.count for h in launches)) / 1e3,
            "{:.1f}")
        n = sum(h.count for h in launches)
        cut = 0.99 * n
        allb = {}
        for h in launches:
            for k, v in h.buckets.items():
                allb[k] = allb.get(k, 0) + v
        run = 0
        for k in sorted(allb):
            run += allb[k]
            if run >= cut:
                put("graph_p99_us", bucket_mid_ns(k) / 1e3, "{:.0f}")
                break
    trainer = fs[0].engine is not None and fs[0].engine.kind == "trainer"
    put("steps/s", _rate(fs, "requests_finished_total") if trainer else None, "{:.2f}")
    nprocs = _mean(len(f.processes) for f in fs)
    put("procs", nprocs)
    return " ".join(out)
