"""Check every trace: frames well formed, each fault reaches the readings a user looks at
inside its window, each healthy trace healthy in its own physics.

    PYTHONPATH=/work/blindan python -m corpus_an.sanity
"""

from __future__ import annotations

import sys

from corpus_an.show import summary

# (reading, relative change that counts, absolute change that counts)
VISIBLE = (("util_gpu_pct", 0.15, 8), ("sm_active_pct", 0.2, 8), ("dram_bw_pct", 0.2, 8), ("tensor_pct", 0.2, 5),
           ("power_w", 0.12, 40), ("sm_clock_mhz", 0.06, 90), ("temp_c", 0.1, 6), ("tok_s", 0.2, 0),
           ("itl_p99", 0.4, 0.01), ("itl_p50", 0.3, 0.005), ("tpot_p99", 0.4, 0.01), ("ttft_p99", 0.6, 0.2),
           ("preempt", 0.0, 1), ("wait", 0.0, 3), ("tree_cpu", 0.25, 0.3), ("inv_s", 1.0, 50), ("psi", 1.0, 8),
           ("thr_per", 0.0, 0.2), ("launch_p99_us", 1.0, 50), ("accept", 0.3, 0.15), ("kv", 0.3, 0.15))


def _mean(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def frame_checks(truth, frames):
    bad = []
    urls = {f.engine.url for f in frames if f.engine is not None}
    if len(urls) > 1:
        bad.append(f"engine address changes: {urls}")
    for a, b in zip(frames, frames[1:]):
        if b.time_wall_s <= a.time_wall_s:
            bad.append("wall time not increasing")
            break
        gap = b.time_wall_s - a.time_wall_s
        if gap > 2.6 * truth.tick_s:
            bad.append(f"gap of {gap:.1f} s")
            break
    for f in frames:
        if "ebpf" not in f.sources:
            bad.append("no ebpf source status")
            break
        if len(f.gpus) != truth.gpus:
            bad.append("GPU count differs from truth")
            break
        for g in f.gpus:
            if g.sm_active_pct is not None and g.util_gpu_pct is not None and g.sm_active_pct > g.util_gpu_pct + 8:
                bad.append(f"SM active {g.sm_active_pct:.0f} > GPU-Util {g.util_gpu_pct:.0f}")
                break
            if truth.gpu_model not in ("H100", "H200") and g.sm_active_pct is not None and "dcgm" not in f.sources:
                bad.append("SM activity without GPM or DCGM")
                break
    if abs(frames[0].time_wall_s - truth.start_wall_s) > 1e-6:
        bad.append("start_wall_s is not the first frame's time")
    return bad


def fault_reaches(truth, frames):
    """Does any user-visible reading in the window differ from the trace's own healthy minutes?"""
    w0 = truth.window[0] - truth.start_wall_s
    w1 = truth.window[1] - truth.start_wall_s
    gpus = [None] + (list(truth.culprit_gpus) if truth.culprit_gpus else [])
    found = []
    for gpu in gpus:
        rows = summary(frames, 10.0, gpu)
        before = [r for r in rows if 10 <= r["t"] < w0 - 5]
        inside = [r for r in rows if w0 + 10 <= r["t"] < w1]
        if len(before) < 3 or len(inside) < 2:
            return [], f"too little before ({len(before)}) or inside ({len(inside)})"
        for key, rel, ab in VISIBLE:
            a, b = _mean(before, key), _mean(inside, key)
            if a is None or b is None:
                continue
            d = abs(b - a)
            if d > ab and d > rel * abs(a):
                found.append(f"{key}{'' if gpu is None else f'[gpu{gpu}]'} {a:.3g}->{b:.3g}")
    return found, None


def healthy_checks(truth, frames):
    bad = []
    rows = summary(frames, 10.0)
    waits = [r.get("wait") for r in rows if r.get("wait") is not None]
    if len(waits) > 6:
        third = len(waits) // 3
        last = sum(waits[-third:]) / third
        if last > 20 and last > 2 * (sum(waits[:third]) / third + 5):
            bad.append(f"queue grows: {waits[:3]} ... {waits[-3:]}")
    pre = sum(r.get("preempt", 0) or 0 for r in rows)
    if pre > 3:
        bad.append(f"{pre:.0f} preemptions")
    kvs = [r.get("kv") for r in rows if r.get("kv") is not None]
    if kvs and sum(1 for k in kvs if k > 0.97) > len(kvs) / 4:
        bad.append("KV pool sits full")
    for r in rows:
        if r.get("run") and r["run"] > 0 and r.get("tok_s") is not None and r["tok_s"] <= 0 and r["t"] > 20:
            bad.append(f"running requests but no tokens at t={r['t']:.0f}")
            break
    thr = {x for r in rows for x in r["throttle"]} - {"power cap"}
    if thr:
        bad.append(f"throttle reasons {sorted(thr)}")
    return bad


def main(argv):
    import corpus_an
    flt = argv[0] if argv else None
    problems = 0
    n = 0
    for truth, frames in corpus_an.traces(flt):
        n += 1
        issues = frame_checks(truth, frames)
        if truth.cause is None:
            issues += healthy_checks(truth, frames)
            msg = "healthy"
        else:
            found, err = fault_reaches(truth, frames)
            if err:
                issues.append(err)
            if not found:
                issues.append("fault does not reach any reading")
            before = [f for f in frames if f.time_wall_s < truth.window[0] - 5]
            issues += [f"before the fault: {x}" for x in healthy_checks(truth, before)]
            msg = "; ".join(found[:6])
        status = "OK  " if not issues else "FLAG"
        problems += bool(issues)
        print(f"{status} {truth.name:52s} {truth.cause or '-':22s} {msg}")
        for i in issues:
            print(f"       ! {i}")
    print(f"{n} traces, {problems} flagged")
    return problems


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:]) else 0)
