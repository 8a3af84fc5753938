"""This corpus's own inspector: per-window means of the raw signals (no detector involved).

    python -m corpus_l.inspect_signals [FILTER]      (from bench/heldout)
"""

from __future__ import annotations

import sys

from gputop.buckets import bucket_bounds_ns


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _quantile(h0, h1, q):
    if h0 is None or h1 is None:
        return None
    d = [b - a for a, b in zip(h0.cumulative, h1.cumulative)]
    total = h1.count - h0.count
    if total <= 0:
        return None
    want = q * total
    for bound, c in zip(h1.upper_bounds, d):
        if c >= want:
            return bound
    return float("inf")


def _rate(f0, f1, attr):
    a = getattr(f0.engine, attr, None) if f0.engine else None
    b = getattr(f1.engine, attr, None) if f1.engine else None
    if a is None or b is None or b < a:
        return None
    t0 = f0.engine.time_mono_s or f0.time_mono_s
    t1 = f1.engine.time_mono_s or f1.time_mono_s
    return (b - a) / (t1 - t0) if t1 > t0 else None


def summarize(frames, lo, hi, culprit=None):
    fs = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(fs) < 2:
        return "(too short)"
    g = (culprit or (0,))[0]
    parts = []

    def gpu_mean(attr, idx):
        return _mean([getattr(f.gpus[idx], attr) for f in fs if len(f.gpus) > idx])
    for label, idx in (("g%d" % g, g),) + ((("other", 0 if g else 1),) if len(fs[0].gpus) > 1 else ()):
        u, sm, dr, tc = (gpu_mean(a, idx) for a in ("util_gpu_pct", "sm_active_pct",
                                                      "dram_bw_pct", "tensor_pct"))
        p, c, t = (gpu_mean(a, idx) for a in ("power_w", "sm_clock_mhz", "temp_c"))
        thr = sorted({r for f in fs for r in f.gpus[idx].throttle})
        parts.append(f"{label}: util {u:.0f} sm {sm if sm is None else round(sm)} dram "
                     f"{dr if dr is None else round(dr)} tc {tc if tc is None else round(tc)} "
                     f"{p:.0f}W {c:.0f}MHz {t:.0f}C {','.join(thr)}")
    e0 = next((f for f in fs if f.engine), None)
    e1 = next((f for f in reversed(fs) if f.engine), None)
    if e0 is not None and e1 is not e0:
        gen = _rate(e0, e1, "generation_tokens_total")
        pr = _rate(e0, e1, "prompt_tokens_total")
        pre = _rate(e0, e1, "preemptions_total") or _rate(e0, e1, "retracted_requests_total")
        hs0 = {h.name: h for h in e0.engine.histograms}
        hs1 = {h.name: h for h in e1.engine.histograms}
        itl = _quantile(hs0.get("itl"), hs1.get("itl"), 0.5)
        ttft = _quantile(hs0.get("ttft"), hs1.get("ttft"), 0.5)
        tpot = _quantile(hs0.get("tpot"), hs1.get("tpot"), 0.5)
        def hmean(name):
            a_, b_ = hs0.get(name), hs1.get(name)
            if a_ is None or b_ is None or b_.count <= a_.count:
                return None
            return (b_.sum - a_.sum) / (b_.count - a_.count)
        itl, tpot, ttft = hmean("itl"), hmean("tpot"), hmean("ttft")
        itl = None if itl is None else round(itl * 1000, 1)
        tpot = None if tpot is None else round(tpot * 1000, 1)
        ttft = None if ttft is None else round(ttft, 2)
        run = _mean([f.engine.requests_running for f in fs if f.engine])
        wait = _mean([f.engine.requests_waiting for f in fs if f.engine])
        kv = _mean([f.engine.kv_usage_ratio for f in fs if f.engine])
        acc = None
        if e1.engine.spec_draft_tokens_total is not None:
            dd = _rate(e0, e1, "spec_draft_tokens_total")
            aa = _rate(e0, e1, "spec_accepted_tokens_total")
            acc = aa / dd if dd else None
        elif e1.engine.spec_accept_ratio is not None:
            acc = _mean([f.engine.spec_accept_ratio for f in fs if f.engine])
        fmt = lambda x, n=0: "-" if x is None else f"{x:.{n}f}"  # noqa: E731
        parts.append(f"eng: gen {fmt(gen)}/s prm {fmt(pr)}/s run {fmt(run)} wait {fmt(wait)} "
                     f"kv {fmt(kv, 2)} pre {fmt(pre, 2)}/s itl {itl}ms tpot {tpot}ms ttft {ttft}s"
                     + (f" acc {acc:.2f}" if acc is not None else ""))
    h = [f.host for f in fs if f.host]
    parts.append(f"host: cpu {_mean([x.cpu_pct for x in h]):.0f} psi "
                 f"{_mean([x.cpu_pressure_some_pct for x in h]):.1f} rq "
                 f"{_mean([x.run_queue for x in h]):.0f}")
    lat = [lh for f in fs for lh in f.launch if lh.api != "off-cpu"]
    if lat:
        total = sum(lh.count for lh in lat)
        merged = {}
        for lh in lat:
            for k, v in lh.buckets.items():
                merged[k] = merged.get(k, 0) + v
        acc_n, p99 = 0, None
        for k in sorted(merged):
            acc_n += merged[k]
            if acc_n >= 0.99 * total:
                p99 = bucket_bounds_ns(k)[1] / 1000
                break
        parts.append(f"launch p99 {p99:.0f}us")
    return " | ".join(parts)


def main(argv=None):
    import os
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(os.path.dirname(here))
    for p in (here, root):
        if p not in sys.path:
            sys.path.insert(0, p)
    import corpus_l
    flt = (argv or sys.argv[1:] or [None])[0]
    for truth, frames in corpus_l.traces(flt):
        s0, s1 = frames[0].time_wall_s, frames[-1].time_wall_s
        print(f"-- {truth.name} [{truth.cause or 'healthy'}] {len(frames)} frames")
        if truth.window:
            a, b = truth.window
            print("   before ", summarize(frames, s0 + 5, a - 3, truth.culprit_gpus))
            print("   during ", summarize(frames, a + 0.3 * (b - a), b, truth.culprit_gpus))
            if b + 30 < s1:
                print("   after  ", summarize(frames, b + 30, s1, truth.culprit_gpus))
        else:
            n = len(frames)
            for k in range(3):
                lo = frames[k * n // 3].time_wall_s
                hi = frames[min(n - 1, (k + 1) * n // 3)].time_wall_s
                print(f"   part {k + 1} ", summarize(frames, lo, hi))


if __name__ == "__main__":
    main()
