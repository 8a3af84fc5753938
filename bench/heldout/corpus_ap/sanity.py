"""python -m corpus_ap.sanity [NAME...]: format, healthy baselines, and that each fault reaches the
readings (window vs the trace's own baseline)."""
from __future__ import annotations

import statistics
import sys
import time

from corpus_ap import traces
from corpus_ap.readings import rows


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def ratio(a, b):
    if a is None or b is None:
        return None
    return a / b if b else (10.0 if a > 0 else 1.0)


def check(truth, frames):
    bad = []
    # ---- format
    walls = [f.time_wall_s for f in frames]
    if any(b <= a for a, b in zip(walls, walls[1:])):
        bad.append("wall times not increasing")
    urls = {f.engine.url for f in frames if f.engine is not None}
    if len(urls) > 1:
        bad.append(f"engine URL changes: {urls}")
    for f in frames:
        if "ebpf" not in f.sources:
            bad.append("frame without an ebpf status")
            break
    for f in frames:
        for g in f.gpus:
            if g.mem_used_bytes > g.mem_total_bytes:
                bad.append(f"memory used > total at {f.seq}")
                break
        if f.engine is not None and f.pinned is not None and not set(f.engine.pids) <= set(f.pinned.tree_pids):
            bad.append("engine pids outside the pinned tree")
            break
    span = walls[-1] - walls[0]
    rs = rows(frames)
    t0 = truth.start_wall_s
    if truth.window:
        w0, w1 = truth.window[0] - t0, truth.window[1] - t0
        if w0 < 120:
            bad.append("less than 120 s before the fault")
        if not 100 <= w1 - w0 <= 300:
            bad.append(f"fault lasts {w1 - w0:.0f} s")
        if span - w1 < 90:
            bad.append("no recovery")
        base = [r for r in rs if 30 <= r["t"] < w0 - 5]
        win = [r for r in rs if w0 + 10 <= r["t"] <= w1]
        tail = [r for r in rs if r["t"] > w1 + 60]
    else:
        if not 360 <= span <= 900:
            bad.append(f"healthy trace of {span:.0f} s")
        base = [r for r in rs if r["t"] >= 30]
        win, tail = [], []
    # ---- healthy baseline
    if any(r.get("preempt") for r in base):
        bad.append("preemptions at baseline")
    wq = [r.get("waiting") for r in base if r.get("waiting") is not None]
    if wq:
        n = len(wq)
        if max(wq) > 64 or mean(wq[-n // 4:]) > 3 * mean(wq[:n // 4]) + 6:
            bad.append(f"queue grows at baseline (max {max(wq)})")
    kv = [r.get("kv") for r in base if r.get("kv") is not None]
    if kv and mean(kv) > 0.85:
        bad.append(f"KV pool full at baseline ({mean(kv):.2f})")
    if tail and wq:
        tq = [r.get("waiting") for r in tail if r.get("waiting") is not None]
        if tq and mean(tq[-10:]) > max(10, 3 * mean(wq) + 5):
            bad.append(f"queue does not recover ({mean(tq[-10:]):.0f})")
    found = {}
    if truth.cause:
        ng = truth.gpus
        gl = list(truth.culprit_gpus or range(ng))

        def m(rows_, key, g=None, f=med):
            return f([r.get(key if g is None else f"g{g}{key}") for r in rows_])
        c = truth.cause
        ok = False
        if c == "memory_bandwidth":
            d = max(ratio(m(win, "dram", g), m(base, "dram", g)) or 0 for g in gl)
            slow = ratio(m(base, "gen_s") or m(base, "util", 0), m(win, "gen_s") or m(win, "util", 0))
            found = dict(dram_up=d)
            ok = d >= 1.15
        elif c == "throttling":
            d = [ratio(m(win, "clk", g), m(base, "clk", g)) for g in gl]
            found = dict(clock_ratio=d)
            ok = all(x is not None and x <= 0.92 for x in d)
        elif c in ("prefill_interference", "oversized_request"):
            i = max(ratio(m(win, "itl_mean", f=mean), m(base, "itl_mean", f=mean)) or 0,
                    ratio(m(win, "tpot_mean", f=mean), m(base, "tpot_mean", f=mean)) or 0,
                    ratio(m(win, "itl_p99", f=mean), m(base, "itl_p99", f=mean)) or 0)
            gs = ratio(m(base, "gen_s", f=mean), m(win, "gen_s", f=mean)) or 0
            found = dict(itl_up=i, gen_drop=gs)
            ok = i >= 1.3 or (truth.engine == "llamacpp" and gs >= 1.3)
        elif c == "kv_pressure":
            p = sum(r.get("preempt") or 0 for r in win)
            k = m(win, "kv", f=max)
            found = dict(preemptions=p, kv_max=k)
            ok = p > 0 and k >= 0.9
        elif c == "gpu_shared":
            fr = sum(1 for r in win if r["foreign"])
            found = dict(frames_with_foreign=fr)
            ok = fr >= 0.8 * len(win) and not any(r["foreign"] for r in base)
        elif c == "spec_decode_rejected":
            a = ratio(m(win, "accept"), m(base, "accept"))
            found = dict(accept_ratio=a)
            ok = a is not None and a <= 0.7
        elif c == "host_launch_jitter":
            a = ratio(m(win, "launch_share", f=mean), m(base, "launch_share", f=mean))
            s = (m(win, "launch_slow_frac", f=mean) or 0) - (m(base, "launch_slow_frac", f=mean) or 0)
            found = dict(launch_share_up=a, slow_frac_up=s)
            ok = a is not None and a >= 1.5
        elif c == "host_cpu_contention":
            p = ratio(m(win, "psi"), m(base, "psi"))
            th = (m(win, "thr_frac") or 0) - (m(base, "thr_frac") or 0)
            iv = ratio(m(win, "invol_s"), m(base, "invol_s"))
            found = dict(psi_up=p, throttled_up=th, invol_up=iv)
            ok = (p or 0) >= 2 or th >= 0.3 or (iv or 0) >= 2
        elif c == "input_stall":
            u = [ratio(m(win, "util", g, f=mean), m(base, "util", g, f=mean)) for g in gl]
            found = dict(util_ratio=u)
            ok = all(x is not None and x <= 0.85 for x in u)
        elif c == "tiny_kernels":
            sm = ratio(m(win, "sm", 0), m(base, "sm", 0))
            lc = ratio(m(win, "launch_calls"), m(base, "launch_calls"))
            u = ratio(m(win, "util", 0), m(base, "util", 0))
            found = dict(sm_ratio=sm, launch_ratio=lc, util_ratio=u)
            ok = (sm is not None and sm <= 0.6 and (u or 0) >= 0.6) or (lc is not None and lc >= 2)
        elif c == "collective_straggler":
            cg = truth.culprit_gpus[0]
            others = [g for g in range(ng) if g != cg]
            clk = ratio(m(win, "clk", cg), m(base, "clk", cg))
            osm = mean([ratio(m(win, "sm", g), m(base, "sm", g)) for g in others])
            outil = mean([ratio(m(win, "util", g), m(base, "util", g)) for g in others])
            found = dict(culprit_clock=clk, others_sm=osm, others_util=outil)
            ok = (clk is not None and clk <= 0.92) or (osm is not None and osm <= 0.8) or (outil or 1) <= 0.85 \
                or (outil or 0) >= 1.02
        if not ok:
            bad.append(f"fault does not reach the readings: {found}")
    return bad, found


def main(argv):
    t_start = time.process_time()
    names = set(argv)
    n_bad = 0
    count = 0
    for truth, frames in traces((lambda n: n in names) if names else None):
        count += 1
        bad, found = check(truth, frames)
        flag = "FAIL" if bad else "ok  "
        n_bad += bool(bad)
        fd = " ".join(f"{k}={v if not isinstance(v, float) else round(v, 2)}" for k, v in found.items())
        print(f"{flag} {truth.name:42s} {str(truth.cause):22s} {len(frames):5d} frames {fd} {'; '.join(bad)}")
    print(f"{count} traces, {n_bad} failing, {time.process_time() - t_start:.1f} s CPU")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
