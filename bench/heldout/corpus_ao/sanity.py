"""Check every trace: format rules, that each fault reaches the readings in its window, and that
healthy physics is healthy.  python -m corpus_ao.sanity [name-or-cause ...]"""
from __future__ import annotations

import sys
import time

import corpus_ao
from corpus_ao.show import series


def _m(rows, key, idx=None):
    v = []
    for r in rows:
        x = r.get(key)
        if isinstance(x, list):
            x = x[idx] if idx is not None else (sum(y for y in x if y is not None) / max(1, len([y for y in x if y is not None])) if any(y is not None for y in x) else None)
        if x is not None and x != float("inf"):
            v.append(x)
    return sum(v) / len(v) if v else None


def split(truth, frames, rows):
    t0 = frames[0].time_wall_s
    if truth.window is None:
        return rows, rows
    a, b = truth.window[0] - t0, truth.window[1] - t0
    base = [r for r in rows if 20 <= r["t"] and r["t"] + 10 <= a]
    win = [r for r in rows if a + 10 <= r["t"] <= b - 10] or [r for r in rows if a <= r["t"] <= b]
    return base, win


def rel(w, b):
    if w is None or b is None:
        return None
    return w / b if b else (10.0 if w > 0 else 1.0)


def check_format(truth, frames):
    bad = []
    last = -1
    urls = set()
    for f in frames:
        if f.time_wall_s <= last:
            bad.append("wall time not increasing")
            break
        last = f.time_wall_s
        for g in f.gpus:
            if g.mem_used_bytes is not None and g.mem_used_bytes > g.mem_total_bytes:
                bad.append("memory used > total")
        if f.engine is not None:
            urls.add(f.engine.url)
            tree = set(f.pinned.tree_pids) if f.pinned else set()
            for p in f.processes:
                if p.pid in f.engine.pids and p.pid not in tree:
                    bad.append("engine pid outside its tree")
        if "ebpf" not in f.sources:
            bad.append("no ebpf status")
    if len(urls) > 1:
        bad.append(f"engine url changed: {urls}")
    dt = [b.time_wall_s - a.time_wall_s for a, b in zip(frames, frames[1:])]
    if not 0.45 <= min(dt) and max(dt) <= 4.5:
        bad.append("tick interval out of range")
    return sorted(set(bad))


def check_healthy(truth, rows):
    bad = []
    n = len(rows)
    waits = [r.get("wait") for r in rows if r.get("wait") is not None]
    if waits:
        third = max(1, len(waits) // 3)
        last = sum(waits[-third:]) / third
        if last > max(8, 3 * (sum(waits[:third]) / third + 2)):
            bad.append(f"queue grows: {waits[:3]}..{waits[-3:]}")
    pre = sum(r.get("preempt") or 0 for r in rows)
    if pre > max(3, n * 0.1):
        bad.append(f"preemptions {pre}")
    kv = [r.get("kv") for r in rows if r.get("kv") is not None]
    if kv and sum(1 for k in kv if k > 0.97) > len(kv) * 0.3:
        bad.append("KV pool sits full")
    return bad


def check_fault(truth, frames, rows):
    base, win = split(truth, frames, rows)
    bad = []
    if not base or not win:
        return ["no baseline or window rows"]
    bad += [f"baseline: {b}" for b in check_healthy(truth, base)]
    c = truth.cause
    ev = {}

    def r(key, idx=None):
        x = rel(_m(win, key, idx), _m(base, key, idx))
        ev[key if idx is None else f"{key}[{idx}]"] = None if x is None else round(x, 2)
        return x

    ok = False
    if c == "memory_bandwidth":
        d = r("dram") if _m(base, "dram") is not None else r("memu")
        ok = d is not None and d > 1.2 and ((r("itl_mean") or 0) > 1.2 or (r("gen/s") or 9) < 0.9
                                            or (r("util") or 0) >= 0.95)
    elif c == "throttling":
        ok = (r("clk") or 1) < 0.92
    elif c in ("prefill_interference", "oversized_request"):
        ok = max(r("itl_mean") or 0, r("itl_p99") or 0, r("ttft_mean") or 0, r("tpot_mean") or 0, r("dec_s_tok") or 0) > 1.4 \
            or (r("gen/s") or 1) < 0.75
    elif c == "tiny_kernels":
        s, u = r("sm"), r("util")
        sw, uw = _m(win, "sm"), _m(win, "util")
        ok = s is not None and sw is not None and uw and sw / uw < 0.45 * (_m(base, "sm") / max(1, _m(base, "util")))
    elif c == "host_cpu_contention":
        ok = (r("psi") or 0) > 3 or (r("thr_per") or 0) > 3 or (r("invol/s") or 0) > 3
    elif c == "input_stall":
        ok = (r("util") or 1) < 0.9 or (r("sm") or 1) < 0.85
    elif c == "collective_straggler":
        cu = truth.culprit_gpus[0]
        ng = len(win[0]["sm"])
        sm_c = _m(win, "sm", cu)
        sm_o = sum(_m(win, "sm", i) for i in range(ng) if i != cu) / (ng - 1) if sm_c is not None else None
        clk = r("clk", cu)
        ev["sm culprit/others"] = round(sm_c / sm_o, 2) if sm_c and sm_o else None
        nv_c = _m(win, "nvl", cu)
        nv_o = sum(_m(win, "nvl", i) or 0 for i in range(ng) if i != cu) / (ng - 1)
        ok = (sm_c is not None and sm_o and sm_c / sm_o > 1.15) or (sm_c is None and clk is not None and clk < 0.92) \
            or (nv_c is not None and nv_o and nv_c / nv_o < 0.5)
    elif c == "kv_pressure":
        ok = sum(x.get("preempt") or 0 for x in win) > 3 and (_m(win, "kv") or 0) > 0.85
    elif c == "gpu_shared":
        ok = any(x.get("others") for x in win) and not any(x.get("others") for x in base)
    elif c == "spec_decode_rejected":
        ok = (r("accept") or 1) < 0.7
    elif c == "host_launch_jitter":
        b, w = _m(base, "launch>65us%") or 0, _m(win, "launch>65us%") or 0
        ev["launch tail %"] = (round(b, 2), round(w, 2))
        ok = w > 3 * b + 0.3
    if not ok:
        bad.append(f"fault not visible: {ev}")
    return bad, ev


def main(argv):
    flt = argv[0] if argv else None
    t = time.process_time()
    n = flagged = 0
    for truth, frames in corpus_ao.traces(flt):
        n += 1
        rows = series(frames, 10.0)
        bad = check_format(truth, frames)
        ev = {}
        if truth.cause is None:
            bad += check_healthy(truth, rows)
        else:
            b, ev = check_fault(truth, frames, rows)
            bad += b
        status = "FLAG" if bad else "ok  "
        flagged += bool(bad)
        print(f"{status} {truth.name:45s} {truth.cause or 'healthy':22s} {len(frames):4d} frames "
              f"{ev if not bad else bad}")
    print(f"{n} traces, {flagged} flagged, {time.process_time() - t:.1f} s CPU")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
