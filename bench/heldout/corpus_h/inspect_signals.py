"""Per-window summaries used to check the physics (never a detector)."""

from __future__ import annotations

from gputop.buckets import bucket_mid_ns


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _pct(h0, h1, q=0.5):
    if h0 is None or h1 is None or h1.count - h0.count <= 0:
        return None
    n = h1.count - h0.count
    for b, c1, c0 in zip(h1.upper_bounds, h1.cumulative, h0.cumulative):
        if c1 - c0 >= q * n:
            return b
    return float("inf")


def _h(e, name):
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def summarize(frames, lo, hi, culprit=None):
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(fs) < 2:
        return "(no frames)"
    gi = culprit[0] if culprit else 0
    out = []
    g = [f.gpus[gi] for f in fs]
    fmt = lambda v, p=0: "-" if v is None else f"{v:.{p}f}"  # noqa: E731
    out.append(f"g{gi} util {fmt(_mean(x.util_gpu_pct for x in g))} sm {fmt(_mean(x.sm_active_pct for x in g))}"
               f" dram {fmt(_mean(x.dram_bw_pct for x in g))} memu {fmt(_mean(x.util_mem_pct for x in g))}"
               f" tens {fmt(_mean(x.tensor_pct for x in g))} W {fmt(_mean(x.power_w for x in g))}"
               f" MHz {fmt(_mean(x.sm_clock_mhz for x in g))} T {fmt(_mean(x.temp_c for x in g))}"
               f" thr {sorted({r for x in g for r in x.throttle})}")
    if len(fs[0].gpus) > 1:
        others = [_mean(f.gpus[i].sm_active_pct if f.gpus[i].sm_active_pct is not None
                        else f.gpus[i].power_w for f in fs)
                  for i in range(len(fs[0].gpus))]
        out.append("per-gpu sm|W " + " ".join(fmt(o) for o in others))
    e0, e1 = fs[0].engine, fs[-1].engine
    if e0 is not None and e1 is not None and e1.time_wall_s != e0.time_wall_s:
        span = e1.time_wall_s - e0.time_wall_s
        gen = ((e1.generation_tokens_total or 0) - (e0.generation_tokens_total or 0)) / span
        pr = ((e1.prompt_tokens_total or 0) - (e0.prompt_tokens_total or 0)) / span
        out.append(f"{e1.kind} gen/s {gen:.0f} prompt/s {pr:.0f}")
        for n in ("itl", "ttft", "queue"):
            p50, p99 = _pct(_h(e0, n), _h(e1, n)), _pct(_h(e0, n), _h(e1, n), 0.99)
            if p50 is not None:
                out.append(f"{n} {p50}/{p99}")
        run = _mean(f.engine.requests_running for f in fs if f.engine)
        wait = _mean(f.engine.requests_waiting for f in fs if f.engine)
        kv = _mean(f.engine.kv_usage_ratio for f in fs if f.engine)
        out.append(f"run {fmt(run)} wait {fmt(wait)} kv {fmt(kv, 2)}")
        pre = ((e1.preemptions_total or 0) - (e0.preemptions_total or 0)
               + (e1.retracted_requests_total or 0) - (e0.retracted_requests_total or 0))
        if pre:
            out.append(f"preempt+retract {pre:.0f}")
        if e1.spec_draft_tokens_total:
            d = e1.spec_draft_tokens_total - (e0.spec_draft_tokens_total or 0)
            a = e1.spec_accepted_tokens_total - (e0.spec_accepted_tokens_total or 0)
            out.append(f"accept {a / d:.2f}" if d else "accept -")
        if e1.spec_accept_ratio is not None:
            out.append(f"accept_gauge {e1.spec_accept_ratio:.2f}")
        if e1.cpu_s is not None and e0.cpu_s is not None:
            out.append(f"eng cpu {(e1.cpu_s - e0.cpu_s) / span:.2f} invol/s "
                       f"{((e1.ctx_involuntary or 0) - (e0.ctx_involuntary or 0)) / span:.0f}")
    h = [f.host for f in fs if f.host]
    out.append(f"host cpu {fmt(_mean(x.cpu_pct for x in h))} psi {fmt(_mean(x.cpu_pressure_some_pct for x in h), 1)}"
               f" rq {fmt(_mean(x.run_queue for x in h))}")
    lat = [lh for f in fs for lh in f.launch if lh.api != "off-cpu"]
    if lat:
        buckets = {}
        for lh in lat:
            for b, c in lh.buckets.items():
                buckets[b] = buckets.get(b, 0) + c
        tot = sum(buckets.values())
        run_c, p99 = 0, None
        for b in sorted(buckets):
            run_c += buckets[b]
            if run_c >= 0.99 * tot:
                p99 = bucket_mid_ns(b) / 1000
                break
        out.append(f"launch p99 {p99:.0f}us")
    return " | ".join(out)
