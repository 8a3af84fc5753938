"""What gputop would read from a corpus trace, window by window (my own check: the detector
is not here).  ``summarize(frames, a, b, culprit_gpus)`` gives one line for [a, b] (wall s).

    python bench/heldout/corpus_n/inspect_signals.py [FILTER]
"""

from __future__ import annotations

import os
import sys
import time

from gputop.buckets import bucket_mid_ns


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _pct(hist_a, hist_b, q):
    """Quantile of the observations between two cumulative readings (bucket upper bound)."""
    if hist_a is None or hist_b is None or hist_a.upper_bounds != hist_b.upper_bounds:
        return None
    d = [b - a for a, b in zip(hist_a.cumulative, hist_b.cumulative)]
    n = hist_b.count - hist_a.count
    if n <= 0 or any(x < 0 for x in d):
        return None
    want = q * n
    for bound, c in zip(hist_b.upper_bounds, d):
        if c >= want:
            return bound
    return float("inf")


def _hist(engine, name):
    if engine is None:
        return None
    return next((h for h in engine.histograms if h.name == name), None)


def _rate(frames, attr):
    """Per-second rate of a cumulative engine counter over frames, reset-safe."""
    total, span = 0.0, 0.0
    prev = None
    for f in frames:
        e = f.engine
        v = getattr(e, attr, None) if e is not None else None
        t = (e.time_wall_s if e is not None and e.time_wall_s else f.time_wall_s)
        if v is None:
            prev = None
            continue
        if prev is not None:
            dv = v - prev[1]
            if dv >= 0:
                total += dv
                span += t - prev[0]
        prev = (t, v)
    return total / span if span > 0 else None


def _fmt(x, nd=0):
    if x is None:
        return "-"
    if x == float("inf"):
        return "inf"
    return f"{x:.{nd}f}"


def summarize(frames, a, b, culprit_gpus=None) -> str:
    win = [f for f in frames if a <= f.time_wall_s <= b]
    if len(win) < 2:
        return "(window too short)"
    gsel = set(culprit_gpus) if culprit_gpus else None

    def gm(attr, sel):
        return _mean([getattr(g, attr) for f in win for g in f.gpus if sel(g.index)])

    busy_gpus = {g.index for f in win for g in f.gpus if (g.util_gpu_pct or 0) > 5}
    sel_all = (lambda i: i in busy_gpus) if busy_gpus else (lambda i: True)
    parts = []
    for label, sel in ((("gpu", sel_all),) if gsel is None else
                       (("culprit", lambda i: i in gsel),
                        ("others", lambda i: i not in gsel and i in busy_gpus))):
        parts.append(f"{label}: util {_fmt(gm('util_gpu_pct', sel))} sm {_fmt(gm('sm_active_pct', sel))} "
                     f"dram {_fmt(gm('dram_bw_pct', sel))} tensor {_fmt(gm('tensor_pct', sel))} "
                     f"W {_fmt(gm('power_w', sel))} MHz {_fmt(gm('sm_clock_mhz', sel))} "
                     f"T {_fmt(gm('temp_c', sel))}")
    thr = sorted({r for f in win for g in f.gpus for r in g.throttle})
    if thr:
        parts.append("throttle " + "/".join(thr))
    e0 = next((f.engine for f in win if f.engine is not None), None)
    e1 = next((f.engine for f in reversed(win) if f.engine is not None), None)
    if e1 is not None:
        unit = e1.work_unit or "tok"
        parts.append(f"{e1.kind}: gen {_fmt(_rate(win, 'generation_tokens_total'))} {unit}/s "
                     f"prompt {_fmt(_rate(win, 'prompt_tokens_total'))}/s")
        if e1.kind != "trainer":
            for name in ("itl", "ttft", "queue"):
                h0, h1 = _hist(e0, name), _hist(e1, name)
                p50, p99 = _pct(h0, h1, 0.5), _pct(h0, h1, 0.99)
                if p50 is not None:
                    parts.append(f"{name} p50 {_fmt(p50 * 1000)} p99 {_fmt(p99 * 1000)} ms")
            run = _mean([f.engine.requests_running for f in win if f.engine])
            wait = _mean([f.engine.requests_waiting for f in win if f.engine])
            kv = _mean([f.engine.kv_usage_ratio for f in win if f.engine])
            parts.append(f"run {_fmt(run, 1)} wait {_fmt(wait, 1)} kv {_fmt(kv, 2)}")
            pre = (e1.preemptions_total or 0) - (e0.preemptions_total or 0) \
                + (e1.retracted_requests_total or 0) - (e0.retracted_requests_total or 0)
            if pre:
                parts.append(f"preempt/retract +{pre:.0f}")
            if e1.spec_draft_tokens_total is not None and e0.spec_draft_tokens_total is not None:
                d = e1.spec_draft_tokens_total - e0.spec_draft_tokens_total
                acc = e1.spec_accepted_tokens_total - e0.spec_accepted_tokens_total
                if d > 0:
                    parts.append(f"spec accept {acc / d:.2f}")
            elif e1.spec_accept_ratio is not None:
                parts.append(f"spec accept {e1.spec_accept_ratio:.2f}")
            cpu = _rate(win, "cpu_s")
            inv = _rate(win, "ctx_involuntary")
            parts.append(f"engine cpu {_fmt(cpu, 2)} inv/s {_fmt(inv)}")
    else:
        reasons = {f.sources.get("engine").reason for f in win if f.sources.get("engine")}
        parts.append("engine: " + "; ".join(sorted(r or "ok" for r in reasons))[:60])
    parts.append(f"host cpu {_fmt(_mean([f.host.cpu_pct for f in win if f.host]))}% "
                 f"psi {_fmt(_mean([f.host.cpu_pressure_some_pct for f in win if f.host]), 1)} "
                 f"rq {_fmt(_mean([f.host.run_queue for f in win if f.host]))}")
    launches = [h for f in win for h in f.launch if h.api != "off-cpu"]
    if launches:
        merged: dict[int, int] = {}
        for h in launches:
            for k, v in h.buckets.items():
                merged[k] = merged.get(k, 0) + v
        n = sum(merged.values())
        run, p99 = 0, None
        for k in sorted(merged):
            run += merged[k]
            if run >= 0.99 * n:
                p99 = bucket_mid_ns(k) / 1000
                break
        parts.append(f"launch p99 {_fmt(p99, 1)} us")
    procs = {}
    for f in win:
        for p in f.processes:
            procs.setdefault((p.gpu_index, p.pid), []).append(p.sm_util_pct)
    multi = [k for k in procs if sum(1 for j in procs if j[0] == k[0]) > 1]
    if multi:
        parts.append("procs " + " ".join(f"g{g}:{pid}={_fmt(_mean(procs[(g, pid)]))}" for g, pid in sorted(multi)))
    return " | ".join(parts)


def main(argv=None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    import corpus_n  # noqa: E402

    argv = sys.argv[1:] if argv is None else argv
    filt = argv[0] if argv else None
    cpu = 0.0
    count = 0
    it = corpus_n.traces(filt)
    while True:
        t0 = time.process_time()
        try:
            truth, frames = next(it)
        except StopIteration:
            break
        cpu += time.process_time() - t0
        count += 1
        s0 = frames[0].time_wall_s
        end = frames[-1].time_wall_s
        print(f"-- {truth.name} [{truth.cause or 'healthy'}] {truth.gpu_model} x{truth.gpus} "
              f"{len(frames)} frames  {truth.note}")
        if truth.window:
            wa, wb = truth.window
            print(f"   window {wa - s0:.0f}-{wb - s0:.0f} s")
            for lab, x, y in (("healthy", s0 + 5, wa - 3), ("pathology", wa + 0.3 * (wb - wa), wb),
                              ("after", wb + 30, end)):
                print(f"   {lab:9} {summarize(frames, x, y, truth.culprit_gpus)}")
        else:
            n = len(frames)
            for k in range(3):
                lo = frames[k * n // 3].time_wall_s
                hi = frames[min(n - 1, (k + 1) * n // 3)].time_wall_s
                print(f"   part {k + 1}   {summarize(frames, lo, hi)}")
    print(f"{count} traces, generated in {cpu:.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
