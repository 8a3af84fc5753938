"""What gputop would read from a stretch of a trace: per-window means of the GPU counters,
rates from the cumulative counters (reset-safe), percentiles from histogram differences.

    python -m corpus_m.inspect_signals [FILTER]     (from bench/heldout)
"""

from __future__ import annotations

import sys

from gputop.buckets import bucket_mid_ns


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _rate(frames, get):
    """Sum of positive increments over time (a counter that resets restarts from 0)."""
    total, prev, t_first, t_last = 0.0, None, None, None
    for f in frames:
        v = get(f)
        if v is None:
            continue
        if prev is not None:
            total += v - prev if v >= prev else v
        else:
            t_first = f.time_wall_s
        prev, t_last = v, f.time_wall_s
    if t_first is None or t_last == t_first:
        return None
    return total / (t_last - t_first)


def _delta_hist(frames, name):
    """Per-bucket counts added over the window (reset-safe), with the bounds."""
    acc, bounds, prev = None, None, None
    for f in frames:
        e = f.engine
        h = next((h for h in e.histograms if h.name == name), None) if e else None
        if h is None:
            continue
        if prev is not None and h.upper_bounds == prev.upper_bounds:
            d = [a - b for a, b in zip(h.cumulative, prev.cumulative)]
            dc = h.count - prev.count
            if dc < 0 or any(x < 0 for x in d):  # reset
                d, dc = list(h.cumulative), h.count
            if acc is None:
                acc, bounds, total = d, h.upper_bounds, dc
            else:
                acc = [a + b for a, b in zip(acc, d)]
                total += dc
        prev = h
    if acc is None:
        return None
    return bounds, acc, total


def _quantile(hd, q):
    if hd is None:
        return None
    bounds, cum, total = hd
    if total <= 0:
        return None
    want = q * total
    lo = 0.0
    prev = 0.0
    for b, c in zip(bounds, cum):
        if c >= want:
            frac = (want - prev) / (c - prev) if c > prev else 1.0
            return lo + (b - lo) * frac
        lo, prev = b, c
    return bounds[-1]


def _launch_p99(frames):
    counts = {}
    for f in frames:
        for h in f.launch:
            if h.api == "off-cpu":
                continue
            for b, n in h.buckets.items():
                counts[b] = counts.get(b, 0) + n
    total = sum(counts.values())
    if not total:
        return None
    run = 0
    for b in sorted(counts):
        run += counts[b]
        if run >= 0.99 * total:
            return bucket_mid_ns(b) / 1000.0
    return None


def _fmt(v, nd=1):
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return f"{v:.0f}"
    return f"{v:.{nd}f}"


def summarize(frames, lo, hi, gpus=None) -> str:
    win = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(win) < 2:
        return "(too short)"

    def g(field):
        vals = []
        for f in win:
            for s in f.gpus:
                if gpus is None or s.index in gpus:
                    vals.append(getattr(s, field))
        return _mean(vals)

    parts = [f"util {_fmt(g('util_gpu_pct'))}", f"sm {_fmt(g('sm_active_pct'))}",
             f"dram {_fmt(g('dram_bw_pct'))}", f"tensor {_fmt(g('tensor_pct'))}",
             f"W {_fmt(g('power_w'), 0)}", f"MHz {_fmt(g('sm_clock_mhz'), 0)}",
             f"C {_fmt(g('temp_c'), 0)}"]
    thr = {r for f in win for s in f.gpus for r in s.throttle
           if gpus is None or s.index in gpus}
    if thr:
        parts.append("thr " + "/".join(sorted(thr)))
    eng = [f for f in win if f.engine is not None]
    if eng and gpus and len(gpus) == 1 and eng[-1].engine.replicas \
            and len(eng[-1].engine.replicas) == len(eng[-1].gpus):
        # a box of single-GPU servers: the culprit's own server (replicas in GPU order)
        import dataclasses
        g0 = gpus[0]
        eng = [dataclasses.replace(f, engine=f.engine.replicas[g0]) for f in eng
               if len(f.engine.replicas) == len(f.gpus)]
    if eng:
        unit = eng[-1].engine.work_unit or "tok"
        parts.append(f"{unit}/s {_fmt(_rate(eng, lambda f: f.engine.generation_tokens_total), 0)}")
        if eng[-1].engine.kind != "trainer":
            parts.append(f"prompt/s {_fmt(_rate(eng, lambda f: f.engine.prompt_tokens_total), 0)}")
            for name, label in (("itl", "ITL"), ("ttft", "TTFT"), ("queue", "queue")):
                hd = _delta_hist(eng, name)
                p50, p99 = _quantile(hd, 0.5), _quantile(hd, 0.99)
                if p50 is not None:
                    parts.append(f"{label} {p50 * 1000:.0f}/{p99 * 1000:.0f}ms")
            parts.append(f"run {_fmt(_mean([f.engine.requests_running for f in eng]))}")
            parts.append(f"wait {_fmt(_mean([f.engine.requests_waiting for f in eng]))}")
            parts.append(f"kv {_fmt(_mean([f.engine.kv_usage_ratio for f in eng]), 2)}")
            pre = _rate(eng, lambda f: f.engine.preemptions_total)
            ret = _rate(eng, lambda f: f.engine.retracted_requests_total)
            if pre:
                parts.append(f"preempt/s {pre:.2f}")
            if ret:
                parts.append(f"retract/s {ret:.2f}")
            acc = _rate(eng, lambda f: f.engine.spec_accepted_tokens_total)
            drf = _rate(eng, lambda f: f.engine.spec_draft_tokens_total)
            if drf:
                parts.append(f"accept {acc / drf:.2f}")
            sa = _mean([f.engine.spec_accept_ratio for f in eng])
            if sa is not None:
                parts.append(f"accept_rate {sa:.2f}")
            cpu = _rate(eng, lambda f: f.engine.cpu_s)
            inv = _rate(eng, lambda f: f.engine.ctx_involuntary)
            if cpu is not None:
                parts.append(f"eng_cpu {cpu:.2f} inv/s {_fmt(inv, 0)}")
    elif any(f.sources.get("engine") and not f.sources["engine"].ok
             and "unreachable" in (f.sources["engine"].reason or "") for f in win):
        parts.append("engine unreachable")
    host = [f.host for f in win if f.host is not None]
    parts.append(f"host {_fmt(_mean([h.cpu_pct for h in host]), 0)}% "
                 f"psi {_fmt(_mean([h.cpu_pressure_some_pct for h in host]))} "
                 f"rq {_fmt(_mean([h.run_queue for h in host]), 0)}")
    pin = [f for f in win if f.pinned is not None]
    if pin:
        parts.append(f"pin_cpu {_fmt(_rate(pin, lambda f: f.pinned.cpu_s), 2)} "
                     f"pin_inv/s {_fmt(_rate(pin, lambda f: f.pinned.ctx_involuntary), 0)}")
    lp = _launch_p99(win)
    if lp is not None:
        parts.append(f"launch p99 {lp:.0f}us")
    others = {(p.pid, p.name) for f in win for p in f.processes
              if (gpus is None or p.gpu_index in gpus) and p.sm_util_pct}
    if len(others) > (len(gpus) if gpus else len(win[0].gpus)):
        parts.append("procs " + ",".join(f"{n}" for _, n in sorted(others))[:60])
    return " ".join(parts)


def main(argv=None) -> int:
    import os
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(os.path.dirname(here))
    for p in (here, root):
        if p not in sys.path:
            sys.path.insert(0, p)
    import corpus_m
    args = (argv if argv is not None else sys.argv[1:])
    flt = args[0] if args else None
    for truth, frames in corpus_m.traces(flt):
        s0 = frames[0].time_wall_s
        print(f"-- {truth.name} [{truth.cause or 'healthy'}] gpus={truth.gpus} "
              f"culprit={truth.culprit_gpus} {truth.note}")
        if truth.window:
            a, b = truth.window
            print(f"   window {a - s0:.0f}-{b - s0:.0f} s of {frames[-1].time_wall_s - s0:.0f}")
            for lab, x, y in (("healthy", s0 + 5, a - 3), ("pathology", a + 0.3 * (b - a), b),
                              ("after", b + 30, frames[-1].time_wall_s)):
                print(f"   {lab:9} {summarize(frames, x, y, truth.culprit_gpus)}")
                if truth.culprit_gpus and truth.gpus > 1 and lab == "pathology":
                    rest = tuple(i for i in range(truth.gpus) if i not in truth.culprit_gpus)
                    print(f"   {'others':9} {summarize(frames, x, y, rest)}")
        else:
            n = len(frames)
            for k in range(3):
                lo = frames[k * n // 3].time_wall_s
                hi = frames[min(n - 1, (k + 1) * n // 3)].time_wall_s
                print(f"   part {k + 1}   {summarize(frames, lo, hi)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
