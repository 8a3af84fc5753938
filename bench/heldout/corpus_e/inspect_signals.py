"""The corpus author's own inspector: per-window averages of what gputop reads (no detector).

    PYTHONPATH=bench/heldout python -m corpus_e.inspect_signals [filter]
"""

from __future__ import annotations

import sys


def _rate(a, b, dt):
    if a is None or b is None or dt <= 0:
        return None
    return (b - a) / dt


def _hist_mean(f0, f1, name):
    def get(f):
        if f.engine is None:
            return None
        return next((h for h in f.engine.histograms if h.name == name), None)
    a, b = get(f0), get(f1)
    if a is None or b is None or b.count - a.count <= 0:
        return None
    return (b.sum - a.sum) / (b.count - a.count)


def summarize(frames, lo, hi, culprit=None):
    sel = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(sel) < 2:
        return "(no frames)"
    f0, f1 = sel[0], sel[-1]
    dt = f1.time_wall_s - f0.time_wall_s
    gi = culprit[0] if culprit else 0

    def avg(fn):
        vals = [fn(f) for f in sel]
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    def g(attr):
        return avg(lambda f: getattr(f.gpus[gi], attr) if len(f.gpus) > gi else None)

    def others(attr):
        return avg(lambda f: (sum(getattr(x, attr) or 0 for x in f.gpus if x.index != gi)
                              / max(1, len(f.gpus) - 1)) if len(f.gpus) > 1 else None)
    parts = [f"g{gi} util {g('util_gpu_pct'):.0f}"]
    for label, attr in (("sm", "sm_active_pct"), ("dram", "dram_bw_pct"), ("tc", "tensor_pct"),
                        ("mem%", "util_mem_pct"), ("W", "power_w"), ("MHz", "sm_clock_mhz"),
                        ("C", "temp_c")):
        v = g(attr)
        if v is not None:
            parts.append(f"{label} {v:.0f}")
    if len(f1.gpus) > 1:
        parts.append(f"others util {others('util_gpu_pct'):.0f} sm {others('sm_active_pct') or 0:.0f} "
                     f"W {others('power_w'):.0f} MHz {others('sm_clock_mhz'):.0f}")
    thr = {r for f in sel for r in f.gpus[gi].throttle}
    if thr:
        parts.append("thr " + "/".join(sorted(thr)))
    e0, e1 = f0.engine, f1.engine
    if e0 and e1:
        gen = _rate(e0.generation_tokens_total, e1.generation_tokens_total, dt)
        pr = _rate(e0.prompt_tokens_total, e1.prompt_tokens_total, dt)
        parts.append(f"| {e1.kind} gen/s {gen or 0:.0f} prompt/s {pr or 0:.0f}")
        for name in ("itl", "ttft"):
            m = _hist_mean(f0, f1, name)
            if m is not None:
                parts.append(f"{name} {1000 * m:.0f}ms")
        parts.append(f"run {avg(lambda f: f.engine and f.engine.requests_running) or 0:.0f} "
                     f"wait {avg(lambda f: f.engine and f.engine.requests_waiting) or 0:.0f}")
        kv = avg(lambda f: f.engine and f.engine.kv_usage_ratio)
        if kv is not None:
            parts.append(f"kv {kv:.2f}")
        for name, attr in (("pre", "preemptions_total"), ("retr", "retracted_requests_total")):
            r = _rate(getattr(e0, attr), getattr(e1, attr), dt)
            if r:
                parts.append(f"{name}/s {r:.1f}")
        if e1.spec_draft_tokens_total is not None and e0.spec_draft_tokens_total is not None:
            d = e1.spec_draft_tokens_total - e0.spec_draft_tokens_total
            a = e1.spec_accepted_tokens_total - e0.spec_accepted_tokens_total
            parts.append(f"acc {a / d:.2f}" if d > 0 else "acc -")
        if e1.spec_accept_ratio is not None:
            parts.append(f"acc_gauge {avg(lambda f: f.engine and f.engine.spec_accept_ratio):.2f}")
        cpu = _rate(e0.cpu_s, e1.cpu_s, dt)
        inv = _rate(e0.ctx_involuntary, e1.ctx_involuntary, dt)
        parts.append(f"tree cpu {cpu or 0:.2f} invol/s {inv or 0:.0f}")
    h = avg(lambda f: f.host and f.host.cpu_pressure_some_pct)
    parts.append(f"| host {avg(lambda f: f.host.cpu_pct):.0f}% psi {h:.1f} rq "
                 f"{avg(lambda f: f.host.run_queue):.0f}")
    lat = [x for f in sel for x in f.launch if x.api.startswith("cuda") or x.api.startswith("cu")]
    if lat:
        n = sum(x.count for x in lat)
        parts.append(f"launch mean {sum(x.sum_ns for x in lat) / max(1, n) / 1000:.1f}us "
                     f"max {max(x.max_ns for x in lat) / 1000:.0f}us")
    procs = {p.pid for f in sel for p in f.processes if p.gpu_index == gi}
    parts.append(f"procs@g{gi} {len(procs)}")
    return " ".join(parts)


def main(argv=None):
    import corpus_e
    filt = (argv or sys.argv[1:] or [None])[0]
    for truth, frames in corpus_e.traces(filt):
        s0 = frames[0].time_wall_s
        print(f"-- {truth.name} [{truth.cause or 'healthy'}] {truth.gpu_model}x{truth.gpus} "
              f"tick {truth.tick_s:g} frames {len(frames)}  {truth.note}")
        if truth.window:
            a, b = truth.window
            spans = (("before", s0 + 5, a - 3), ("during", a + 0.3 * (b - a), b),
                     ("after", b + 30, frames[-1].time_wall_s))
        else:
            n = len(frames)
            spans = tuple((f"part{k + 1}", frames[k * n // 3].time_wall_s,
                           frames[min(n - 1, (k + 1) * n // 3)].time_wall_s) for k in range(3))
        for label, lo, hi in spans:
            print(f"   {label:7} {summarize(frames, lo, hi, truth.culprit_gpus)}")


if __name__ == "__main__":
    main()
