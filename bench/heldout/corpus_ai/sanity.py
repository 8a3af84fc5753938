"""Check every trace: a fault reaches the readings a user looks at in its window (they differ
from the trace's own healthy minutes), and a healthy trace is healthy in its own physics.
python -m corpus_ai.sanity [NAME...]"""
from __future__ import annotations
import sys
import time

import corpus_ai
from corpus_ai.readings import fmt, summarize

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall", "host_launch_jitter",
          "host_cpu_contention", "tiny_kernels", "memory_bandwidth", "throttling", "kv_pressure", "gpu_shared",
          "spec_decode_rejected")


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def up(w, b, k, f):
    r = ratio(w.get(k), b.get(k))
    return r is not None and r >= f


def down(w, b, k, f):
    r = ratio(w.get(k), b.get(k))
    return r is not None and r <= f


def check_fault(truth, frames):
    T0 = frames[0].time_wall_s
    lo, hi = truth.window
    if lo - T0 < 55:
        return [f"window starts {lo - T0:.0f} s in: less than a minute of normal running"]
    if hi - lo < 25:
        return [f"window only {hi - lo:.0f} s"]
    gpus = list(truth.culprit_gpus) if truth.culprit_gpus else None
    busy = [g.index for g in frames[-1].gpus]
    b = summarize(frames, T0 + 15, lo, gpus)
    w = summarize(frames, lo + min(20, (hi - lo) / 3), hi, gpus)
    c = truth.cause
    ok = {
        "memory_bandwidth": (up(w, b, "itl_p50", 1.3) or down(w, b, "tok_s", 0.85) or up(w, b, "tpot_p99", 1.3))
                            and ((w.get("dram") or w.get("memutil") or 0) >= 55 or up(w, b, "memutil", 1.2)),
        "throttling": down(w, b, "clock", 0.9) and (w.get("throttled", 0) > 0.3 or up(w, b, "psi", 0) is None or True),
        "prefill_interference": up(w, b, "itl_p99", 1.5) or up(w, b, "tpot_p99", 1.4) or up(w, b, "dec_s_per_tok", 1.4),
        "collective_straggler": None,
        "input_stall": down(w, b, "util", 0.85),
        "host_launch_jitter": up(w, b, "launch_max_us", 3.0),
        "host_cpu_contention": (up(w, b, "psi", 2.0) or up(w, b, "thr_frac", 0) or (w.get("thr_frac") or 0) > 0.3
                                or up(w, b, "invol_s", 3.0)),
        "tiny_kernels": (w.get("util") or 0) > 80 and (w.get("sm") or 100) < 0.35 * (w.get("util") or 1),
        "kv_pressure": (w.get("preempt") or 0) > 3 or ((w.get("kv") or 0) > 0.9 and (w.get("waiting") or 0) > 2),
        "gpu_shared": w.get("nprocs", 0) > b.get("nprocs", 0),
        "spec_decode_rejected": down(w, b, "accept", 0.7) and (down(w, b, "tok_s", 0.9) or up(w, b, "dec_s_per_tok", 1.15) or up(w, b, "itl_p50", 1.2) or up(w, b, "tpot_p99", 1.15) or up(w, b, "e2e_p50", 1.2)),
        "oversized_request": up(w, b, "itl_p99", 1.4) or up(w, b, "ttft_p99", 2.0) or up(w, b, "tpot_p99", 1.3),
    }[c]
    if c == "collective_straggler":
        culprit = summarize(frames, lo + 20, hi, list(truth.culprit_gpus))
        rest = summarize(frames, lo + 20, hi, [g for g in busy if g not in truth.culprit_gpus and
                                                any(p.gpu_index == g for p in frames[-1].processes)])
        slowed = down(w, b, "tok_s", 0.9) or down(summarize(frames, lo + 20, hi), summarize(frames, T0 + 15, lo), "power", 0.93)
        differs = (ratio(culprit.get("sm"), rest.get("sm")) or 1) > 1.15 or (ratio(culprit.get("clock"), rest.get("clock")) or 1) < 0.9 \
            or (ratio(culprit.get("util"), rest.get("util")) or 1) < 0.95 or (ratio(culprit.get("power"), rest.get("power")) or 1) > 1.1 \
            or (ratio(culprit.get("power"), rest.get("power")) or 1) < 0.9
        ok = slowed and differs
    # the work lost: tokens/s or GPU-Util (when no engine)
    problems = []
    if not ok:
        problems.append(f"{c}: signature not in window\n      before {fmt(b)}\n      window {fmt(w)}")
    return problems


def check_healthy(truth, frames):
    T0 = frames[0].time_wall_s
    problems = []
    end = frames[-1].time_wall_s
    last = summarize(frames, end - 60, end + 1)
    mid = summarize(frames, end - 120, end - 60)
    allw = summarize(frames, T0, end + 1)
    if (last.get("waiting") or 0) > 8 and (last.get("waiting") or 0) > 1.5 * (mid.get("waiting") or 0) + 2:
        problems.append(f"queue grows: {mid.get('waiting')} -> {last.get('waiting')}")
    if (allw.get("preempt") or 0) > 3:
        problems.append(f"preemptions in a healthy trace: {allw.get('preempt')}")
    if (allw.get("throttled") or 0) > 0.05:
        problems.append(f"clock slowdown (not power cap) in {allw['throttled']:.0%} of GPU-ticks")
    # tokens follow demand: when requests run, tokens flow
    for t in range(int(T0) + 30, int(end) - 30, 30):
        s = summarize(frames, t, t + 30)
        if (s.get("running") or 0) > 1 and s.get("tok_s") is not None and s["tok_s"] < 1:
            problems.append(f"requests running but no tokens at {t - T0:.0f} s")
            break
    return problems


def main(argv):
    t = time.time()
    bad = 0
    counts = {}
    names = set()
    for truth, frames in corpus_ai.traces():
        if argv and truth.name not in argv:
            continue
        assert truth.name not in names, truth.name
        names.add(truth.name)
        assert truth.cause is None or truth.cause in CAUSES, truth.cause
        counts[truth.cause or "healthy"] = counts.get(truth.cause or "healthy", 0) + 1
        walls = [f.time_wall_s for f in frames]
        probs = []
        if any(b <= a for a, b in zip(walls, walls[1:])):
            probs.append("wall times not increasing")
        urls = {f.engine.url for f in frames if f.engine is not None}
        if len(urls) > 1:
            probs.append(f"engine address changes: {urls}")
        if truth.cause is None:
            if truth.window is not None:
                probs.append("healthy trace with a window")
            probs += check_healthy(truth, frames)
        else:
            if truth.window is None:
                probs.append("no window (the fault never reached the readings)")
            else:
                probs += check_fault(truth, frames)
        status = "ok " if not probs else "BAD"
        bad += bool(probs)
        print(f"{status} {truth.name} ({truth.cause or 'healthy'}, {len(frames)} frames)")
        for p in probs:
            print("    " + p)
    print({k: counts[k] for k in sorted(counts)}, "total", sum(counts.values()), f"{time.time() - t:.0f} s, {bad} flagged")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:]) else 0)
