"""My own inspector (no detector): per-window means of what the frames say.

    cd /work/wt/corpusf && PYTHONPATH=bench/heldout python -m corpus_f.inspect_signals [FILTER]
"""

from __future__ import annotations

import sys


def _q(h0, h1, q):
    """A quantile of the observations between two cumulative readings (bucket upper bound)."""
    if h0 is None or h1 is None:
        return None
    n = h1.count - h0.count
    if n <= 0:
        return None
    for b, c0, c1 in zip(h1.upper_bounds, h0.cumulative, h1.cumulative):
        if c1 - c0 >= q * n:
            return b
    return float("inf")


def _hist(e, name):
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def summarize(frames, lo, hi, culprit=None) -> str:
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(fs) < 2:
        return "(no frames)"
    n = len(fs)
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    parts = []
    gpus = range(len(fs[0].gpus))
    show = list(gpus) if len(fs[0].gpus) <= 2 else sorted({0, *(culprit or ()), len(fs[0].gpus) - 1})
    for g in show:
        gs = [f.gpus[g] for f in fs]
        u = mean([x.util_gpu_pct for x in gs])
        sm = [x.sm_active_pct for x in gs if x.sm_active_pct is not None]
        dr = [x.dram_bw_pct for x in gs if x.dram_bw_pct is not None]
        te = [x.tensor_pct for x in gs if x.tensor_pct is not None]
        p = mean([x.power_w for x in gs])
        c = mean([x.sm_clock_mhz for x in gs])
        th = sorted({r for x in gs for r in x.throttle})
        mu = mean([x.util_mem_pct for x in gs])
        s = f"g{g} u{u:.0f} mu{mu:.0f}"
        if sm:
            s += f" sm{mean(sm):.0f} dr{mean(dr):.0f} tc{mean(te):.0f}"
        s += f" {p:.0f}W {c:.0f}MHz {gs[-1].temp_c:.0f}C" + (f" {','.join(th)}" if th else "")
        parts.append(s)
    dt = fs[-1].time_wall_s - fs[0].time_wall_s
    e0 = next((f.engine for f in fs if f.engine), None)
    e1 = next((f.engine for f in reversed(fs) if f.engine), None)
    if e0 is not None and e1 is not None and e1 is not e0:
        d = lambda a: (getattr(e1, a) or 0) - (getattr(e0, a) or 0)
        et = (e1.time_wall_s or 0) - (e0.time_wall_s or 0) or dt
        s = f"{e1.kind} gen{d('generation_tokens_total') / et:.0f}/s pr{d('prompt_tokens_total') / et:.0f}/s"
        if e1.kind != "trainer":
            s += f" run{e1.requests_running:.0f} wait{e1.requests_waiting:.0f}"
            if e1.kv_usage_ratio is not None:
                s += f" kv{e1.kv_usage_ratio:.2f}"
            s += f" pre{d('preemptions_total') + d('retracted_requests_total'):.0f}"
            itl = _q(_hist(e0, "itl"), _hist(e1, "itl"), 0.5)
            ttft = _q(_hist(e0, "ttft"), _hist(e1, "ttft"), 0.5)
            if itl is not None:
                s += f" itl50<={itl}"
            if ttft is not None:
                s += f" ttft50<={ttft}"
            if e1.spec_draft_tokens_total:
                dd = d("spec_draft_tokens_total")
                s += f" acc{d('spec_accepted_tokens_total') / dd:.2f}" if dd else ""
            if e1.spec_accept_ratio is not None:
                s += f" acc{e1.spec_accept_ratio:.2f}"
        if e1.ctx_involuntary is not None and e0.ctx_involuntary is not None:
            s += f" invol{(e1.ctx_involuntary - e0.ctx_involuntary) / et:.0f}/s"
            s += f" busiest{(e1.busiest_thread_cpu_s - e0.busiest_thread_cpu_s) / et:.2f}"
        parts.append(s)
    hs = [f.host for f in fs if f.host]
    parts.append(f"host {mean([h.cpu_pct for h in hs]):.0f}% psi{mean([h.cpu_pressure_some_pct for h in hs]):.0f} "
                 f"rq{mean([h.run_queue for h in hs]):.0f}/{hs[0].cpus}")
    if fs[0].pinned and fs[-1].pinned:
        p0, p1 = fs[0].pinned, fs[-1].pinned
        parts.append(f"pin cpu{(p1.cpu_s - p0.cpu_s) / dt:.1f} invol{(p1.ctx_involuntary - p0.ctx_involuntary) / dt:.0f}/s")
    launch = [h for f in fs for h in f.launch if h.api != "off-cpu"]
    if launch:
        cnt = sum(h.count for h in launch)
        mx = max(h.max_ns for h in launch)
        parts.append(f"launch {cnt / dt:.0f}/s mean{sum(h.sum_ns for h in launch) / cnt / 1000:.1f}us max{mx / 1000:.0f}us")
    procs = {(p.pid, p.gpu_index) for f in fs for p in f.processes}
    parts.append(f"procs{len(procs)}")
    return " | ".join(parts)


def main(argv=None) -> int:
    import corpus_f
    argv = sys.argv[1:] if argv is None else argv
    for truth, frames in corpus_f.traces(argv[0] if argv else None):
        s0 = frames[0].time_wall_s
        print(f"-- {truth.name} [{truth.cause or 'healthy'}] {truth.gpu_model}x{truth.gpus} "
              f"tick {truth.tick_s} frames {len(frames)}")
        if truth.window:
            a, b = truth.window
            spans = (("before", s0 + 10, a - 3), ("during", a + 0.4 * (b - a), b),
                     ("after", b + 20, frames[-1].time_wall_s))
        else:
            e = frames[-1].time_wall_s
            spans = tuple((f"part{k}", s0 + (e - s0) * k / 3, s0 + (e - s0) * (k + 1) / 3)
                          for k in range(3))
        for lab, x, y in spans:
            print(f"   {lab:7} {summarize(frames, x, y, truth.culprit_gpus)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
