"""Checks every trace: format, healthy baselines, and that each fault reaches the readings.

    python -m corpus_aq.sanity [NAME-SUBSTRING]
"""
from __future__ import annotations

import statistics
import sys
import time

from . import CAUSES, traces
from .readings import series


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def _col(rows, key, gpu=None):
    if gpu is None:
        return [r.get(key) for r in rows]
    return [r[key][gpu] if r.get(key) is not None else None for r in rows]


def _gmean(rows, key, gpus):
    vals = []
    for g in gpus:
        m = _mean(_col(rows, key, g))
        if m is not None:
            vals.append(m)
    return _mean(vals)


def check(truth, frames):
    errs = []
    info = {}
    rows = series(frames)
    # ------------------------------------------------------------ format
    ts = [f.time_wall_s for f in frames]
    if any(b <= a for a, b in zip(ts, ts[1:])):
        errs.append("wall times do not increase")
    if abs(ts[0] - truth.start_wall_s) > 1e-6:
        errs.append("start_wall_s is not the first frame's time")
    if not all(r["mem_ok"] for r in rows):
        errs.append("memory used above total")
    urls = {r.get("url") for r in rows if r.get("url")}
    if len(urls) > 1:
        errs.append(f"engine URL changes: {urls}")
    for r in rows:
        if r.get("epids") and not set(r["epids"]) <= r["tree"]:
            errs.append("engine pids outside the pinned tree")
            break
    if not all(r["ebpf"] for r in rows):
        errs.append("a frame without an ebpf status")
    seqs = [f.seq for f in frames]
    dropped = (seqs[-1] - seqs[0] + 1) - len(seqs)
    info["dropped"] = dropped
    dur = ts[-1] - ts[0]
    if truth.cause is not None and truth.cause not in CAUSES:
        errs.append(f"unknown cause {truth.cause}")
    if truth.cause is None:
        if not 360 <= dur <= 900:
            errs.append(f"healthy trace lasts {dur:.0f} s")
        w0, w1 = ts[-1] + 1, ts[-1] + 1
    else:
        w0, w1 = truth.window
        if w0 - ts[0] < 120:
            errs.append("less than 120 s before the fault")
        if not 100 <= w1 - w0 <= 300:
            errs.append(f"fault lasts {w1 - w0:.0f} s")
        if ts[-1] - w1 < 60:
            errs.append("no recovery after the fault")
    base = [r for r in rows if ts[0] + 25 <= r["t"] <= w0 - 10]
    win = [r for r in rows if w0 + 10 <= r["t"] <= w1]
    after = [r for r in rows if r["t"] > w1 + 60]
    outside = base + after
    gpus = list(range(truth.gpus))
    # ------------------------------------------------------------ healthy outside the window
    pre = sum(r.get("preempt") or 0 for r in outside)
    if pre > 0:
        errs.append(f"{pre:.0f} preemptions/retractions outside the window")
    kvs = [r.get("kv") for r in outside if r.get("kv") is not None]
    if kvs and _mean(kvs) > 0.85:
        errs.append(f"KV pool sits full outside the window ({_mean(kvs):.2f})")
    waits = [r.get("waiting") for r in outside if r.get("waiting") is not None]
    if waits and max(waits) > 40:
        errs.append(f"queue grows outside the window (max waiting {max(waits):.0f})")
    if any(r["foreign"] for r in outside):
        errs.append("a process outside the tree outside the window")
    if truth.cause is None:
        return errs, info
    # ------------------------------------------------------------ the fault reaches the readings
    c = truth.cause
    B = lambda k, g=None: _mean(_col(base, k, g)) if g is not None else _mean(_col(base, k))
    W = lambda k, g=None: _mean(_col(win, k, g)) if g is not None else _mean(_col(win, k))
    cg = list(truth.culprit_gpus) if truth.culprit_gpus else gpus

    def up(k, ratio, g=None, name=None):
        b, w = B(k, g), W(k, g)
        info[name or k] = (b, w)
        return b is not None and w is not None and w >= b * ratio

    def down(k, ratio, g=None, name=None):
        b, w = B(k, g), W(k, g)
        info[name or k] = (b, w)
        return b is not None and w is not None and w <= b * ratio

    if c == "memory_bandwidth":
        d_b, d_w = _gmean(base, "dram", cg), _gmean(win, "dram", cg)
        info["dram"] = (d_b, d_w)
        slow = (up("itl", 1.2) if any(r.get("itl") for r in base) else False) or \
            down("gen_s", 0.85) or (_gmean(win, "tensor", cg) or 1e9) <= 0.85 * (_gmean(base, "tensor", cg) or 0)
        if not (d_w is not None and d_w >= d_b + 8 and d_w >= 50):
            errs.append(f"DRAM not up enough {d_b} -> {d_w}")
        if not slow:
            errs.append("work does not slow")
    elif c == "throttling":
        for g in cg:
            b, w = _mean(_col(base, "clock", g)), _mean(_col(win, "clock", g))
            info[f"clock{g}"] = (b, w)
            if not w <= 0.92 * b:
                errs.append(f"GPU {g} clock not down 8% ({b:.0f} -> {w:.0f})")
    elif c in ("prefill_interference", "oversized_request"):
        ok = up("itl", 1.3) or up("ttft", 1.5) or up("tpot", 1.3)
        if not ok:
            errs.append("neither ITL nor TTFT up")
        if c == "prefill_interference" and not up("prompt_s", 1.5):
            errs.append("prompt tokens/s not up")
    elif c == "kv_pressure":
        pw = sum(r.get("preempt") or 0 for r in win)
        info["preempt"] = pw
        kv_w = _mean([r.get("kv") for r in win])
        info["kv"] = (B("kv"), kv_w)
        if pw <= 0:
            errs.append("no preemptions in the window")
        if not kv_w or kv_w < 0.8:
            errs.append(f"KV not near full in the window ({kv_w})")
    elif c == "gpu_shared":
        hit = sum(1 for r in win if set(cg) & set(r["foreign"])) / max(1, len(win))
        info["foreign_frac"] = hit
        if hit < 0.9:
            errs.append("no outside process on the culprit GPU in the window")
    elif c == "spec_decode_rejected":
        if not down("accept", 0.8):
            errs.append("acceptance not down 20%")
    elif c == "host_launch_jitter":
        if not truth.tick_s or not any(r.get("launch_share") is not None for r in win):
            errs.append("no launch histograms")
        elif not (up("launch_share", 1.5) or up("launch_p99_us", 3.0) or
                  ((W("launch_slow_frac") or 0) >= max(0.001, 5 * (B("launch_slow_frac") or 0)))):
            errs.append("launch latency share not up")
    elif c == "host_cpu_contention":
        ok = (B("psi") is not None and W("psi") >= B("psi") + 8) or up("invol_s", 3.0) or \
            ((W("thr_frac") or 0) >= (B("thr_frac") or 0) + 0.3)
        info["psi"] = (B("psi"), W("psi"))
        info["invol_s"] = (B("invol_s"), W("invol_s"))
        info["thr_frac"] = (B("thr_frac"), W("thr_frac"))
        if not ok:
            errs.append("no PSI / switches / throttling rise")
    elif c == "tiny_kernels":
        for g in cg:
            ub, uw = _mean(_col(base, "util", g)), _mean(_col(win, "util", g))
            sb, sw = _mean(_col(base, "sm", g)), _mean(_col(win, "sm", g))
            info[f"util{g}"] = (ub, uw)
            info[f"sm{g}"] = (sb, sw)
            if uw < 60:
                errs.append(f"GPU {g} not busy in the window ({uw:.0f}%)")
            if sb is None or sw / max(uw, 1) > 0.6 * sb / max(ub, 1):
                errs.append(f"GPU {g} SM per busy not down")
    elif c == "input_stall":
        for g in gpus:
            ub, uw = _mean(_col(base, "util", g)), _mean(_col(win, "util", g))
            info[f"util{g}"] = (ub, uw)
            if uw > ub - 10:
                errs.append(f"GPU {g} util not down ({ub:.0f} -> {uw:.0f})")
    elif c == "collective_straggler":
        others = [g for g in gpus if g not in cg]
        pb = _mean([_gmean(base, "power", cg)]) - _gmean(base, "power", others)
        pw = _mean([_gmean(win, "power", cg)]) - _gmean(win, "power", others)
        ob, ow = _gmean(base, "util", others), _gmean(win, "util", others)
        info["power_gap"] = (pb, pw)
        info["others_util"] = (ob, ow)
        if abs(pw - pb) < 8:
            errs.append(f"culprit does not stand out (power gap {pb:.0f} -> {pw:.0f} W)")
    return errs, info


def main(argv):
    flt = argv[1] if len(argv) > 1 else None
    bad = 0
    n = 0
    t0 = time.process_time()
    for truth, frames in traces(flt):
        n += 1
        errs, info = check(truth, frames)
        brief = " ".join(f"{k}={_fmt(v)}" for k, v in info.items())
        print(f"{'FAIL' if errs else 'ok  '} {truth.name:44s} {str(truth.cause):22s} {brief}")
        for e in errs:
            print("       -", e)
        bad += bool(errs)
    print(f"{n} traces, {bad} failing, {time.process_time() - t0:.1f} s CPU")
    return 1 if bad else 0


def _fmt(v):
    if isinstance(v, tuple):
        return "(" + ",".join(_fmt(x) for x in v) + ")"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
