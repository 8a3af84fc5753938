"""Check every trace: the frames are well-formed, each fault reaches the readings a user looks
at inside its window (compared with the trace's own healthy minutes before it), and each
healthy trace is healthy in its own physics.  python -m corpus_al.sanity [NAME]"""
from __future__ import annotations

import sys

from . import built
from .readings import mean, pct, rows

TICK_OK = (0.5, 2.0)


def rel(a, b):
    if a is None or b is None:
        return None
    return (b - a) / max(abs(a), 1e-9)


def check(b):
    t, fr = b.truth, b.frames
    bad = []
    # ---- form
    walls = [f.time_wall_s for f in fr]
    if any(y <= x for x, y in zip(walls, walls[1:])):
        bad.append("wall times not increasing")
    gaps = [y - x for x, y in zip(walls, walls[1:])]
    if not TICK_OK[0] <= t.tick_s <= TICK_OK[1] or max(gaps) > 3.1 * t.tick_s or min(gaps) < 0.9 * t.tick_s:
        bad.append(f"tick spacing off ({min(gaps):.2f}..{max(gaps):.2f})")
    urls = {f.engine.url for f in fr if f.engine is not None}
    if len(urls) > 1:
        bad.append(f"engine address changes: {urls}")
    if t.engine not in ("none", "trainer") and not urls:
        bad.append("engine never scraped")
    if any("ebpf" not in f.sources for f in fr):
        bad.append("no ebpf source status")
    for f in fr:
        for g in f.gpus:
            hopper = "H100" in g.name or "GH200" in g.name
            if hopper != (g.sm_active_pct is not None):
                bad.append("GPM fields on the wrong hardware")
                break
        else:
            continue
        break
    rs = rows(fr)
    w0 = t.start_wall_s
    end = rs[-1]["t"]
    if t.cause is None:
        return bad + healthy(t, rs, fr)
    a, z = t.window
    if a - w0 < 55:
        bad.append(f"only {a - w0:.0f} s before the window")
    if z - a < 30:
        bad.append("window shorter than 30 s")
    base = (max(w0 + 20, a - 120), a - 5)
    win = (a + min(20, (z - a) * 0.2), min(z, end))
    m0 = lambda k: mean(rs, k, *base)
    m1 = lambda k: mean(rs, k, *win)
    c = t.cause
    ok, why = False, ""
    util_d = rel(m0("util"), m1("util"))
    if c == "input_stall":
        ok = util_d is not None and util_d < -0.12
        why = f"util {m0('util'):.0f}->{m1('util'):.0f}"
    elif c == "collective_straggler":
        if t.culprit_gpus:
            g = t.culprit_gpus[0]
            others = [i for i in range(t.gpus) if i != g]
            sm_or_clock = "per_gpu_sm" if rs[0]["per_gpu_sm"][0] is not None else "per_gpu_clock"
            v0 = sum(r[sm_or_clock][others[0]] or 0 for r in rs if base[0] <= r["t"] < base[1]) / max(1, sum(1 for r in rs if base[0] <= r["t"] < base[1]))
            v1 = sum(r[sm_or_clock][others[0]] or 0 for r in rs if win[0] <= r["t"] < win[1]) / max(1, sum(1 for r in rs if win[0] <= r["t"] < win[1]))
            c0 = sum(r["per_gpu_clock"][g] for r in rs if win[0] <= r["t"] < win[1]) / max(1, sum(1 for r in rs if win[0] <= r["t"] < win[1]))
            ok = (sm_or_clock == "per_gpu_sm" and v1 < 0.88 * v0) or c0 < 0.92 * rs[0]["per_gpu_clock"][g] or \
                (rel(m0("memutil"), m1("memutil")) or 0) < -0.12
            why = f"non-culprit {sm_or_clock} {v0:.0f}->{v1:.0f}, culprit clock {c0:.0f}, memutil {m0('memutil'):.0f}->{m1('memutil'):.0f}"
        else:
            k = "sm" if m0("sm") is not None else "memutil"
            ok = rel(m0(k), m1(k)) < -0.12
            why = f"{k} {m0(k):.0f}->{m1(k):.0f}"
    elif c == "throttling":
        ok = rel(m0("clock"), m1("clock")) < -0.08 and any(r["throttle"] for r in rs if win[0] <= r["t"] < win[1])
        why = f"clock {m0('clock'):.0f}->{m1('clock'):.0f}"
    elif c == "host_cpu_contention":
        d_psi = (m1("psi") or 0) - (m0("psi") or 0)
        d_thr = (m1("thr_rate") or 0) - (m0("thr_rate") or 0)
        d_inv = rel(m0("inv_rate"), m1("inv_rate")) or 0
        ok = (d_psi > 10 or d_thr > 3 or d_inv > 2) and (util_d or 0) < -0.08
        why = f"psi +{d_psi:.0f}, throttled/s +{d_thr:.1f}, invol x{1 + d_inv:.1f}, util {util_d:+.0%}"
    elif c == "host_launch_jitter":
        r_ = (m1("launch_p99_us") or 0) / max(m0("launch_p99_us") or 1, 1)
        ok = r_ > 3
        why = f"launch p99 {m0('launch_p99_us'):.0f}->{m1('launch_p99_us'):.0f} us"
    elif c == "tiny_kernels":
        s0, s1 = m0("sm"), m1("sm")
        ok = s0 is not None and m1("util") > 85 and s1 / max(m1("util"), 1) < 0.6 * s0 / max(m0("util"), 1)
        why = f"util {m0('util'):.0f}->{m1('util'):.0f}, sm {s0:.0f}->{s1:.0f}"
    elif c == "memory_bandwidth":
        k = "dram" if m0("dram") is not None else "memutil"
        ok = rel(m0(k), m1(k)) > 0.15 and m1(k) > 50
        why = f"{k} {m0(k):.0f}->{m1(k):.0f}"
    elif c == "kv_pressure":
        pre = sum(r["preempt"] or 0 for r in rs if win[0] <= r["t"] < win[1])
        ok = pre > 0 and (pct(rs, "kv", *win, 0.9) or 0) > 0.9
        why = f"preemptions {pre:.0f}, kv p90 {pct(rs, 'kv', *win, 0.9)}"
    elif c == "gpu_shared":
        ok = m1("other_sm") > 10 and (m0("other_sm") or 0) < 2
        why = f"other processes' SM {m0('other_sm'):.0f}->{m1('other_sm'):.0f}"
    elif c == "spec_decode_rejected":
        ok = m1("accept") is not None and m1("accept") < 0.75 * m0("accept")
        why = f"acceptance {m0('accept'):.2f}->{m1('accept'):.2f}"
    if c in ("prefill_interference", "oversized_request", "spec_decode_rejected", "kv_pressure",
             "memory_bandwidth") and t.engine not in ("none", "trainer"):
        p0, p1 = pct(rs, "itl_p99", *base, 0.5), pct(rs, "itl_p99", *win, 0.5)
        lat = p0 is not None and p1 is not None and p1 > 1.4 * p0
        if c in ("prefill_interference", "oversized_request"):
            ok = lat
            why = f"ITL p99 {p0 and p0 * 1000:.0f}->{p1 and p1 * 1000:.0f} ms"
        elif not lat and c != "kv_pressure":
            q0, q1 = pct(rs, "tpot_p50", *base, 0.5), pct(rs, "tpot_p50", *win, 0.5)
            slower = (q0 and q1 and q1 > 1.25 * q0) or (rel(m0("gen_rate"), m1("gen_rate")) or 0) < -0.1 or \
                (rel(m0("running"), m1("running")) or 0) > 0.25
            why += f" ITL p99 {p0} -> {p1}, TPOT p50 {q0} -> {q1}"
            ok = ok and bool(slower)
    if not ok:
        bad.append(f"fault does not reach the readings: {why}")
    return bad


def healthy(t, rs, fr):
    bad = []
    end = rs[-1]["t"]
    w = [r for r in rs if r["waiting"] is not None]
    if w:
        last = [r["waiting"] for r in w if r["t"] > end - 60]
        if last and min(last) > 50:
            bad.append(f"queue never drains at the end (min waiting {min(last):.0f})")
        pre = sum(r["preempt"] or 0 for r in rs)
        if pre > 0:
            bad.append(f"{pre:.0f} preemptions in a healthy trace")
        kvs = [r["kv"] for r in rs if r["kv"] is not None]
        if kvs and sum(k > 0.95 for k in kvs) > 0.1 * len(kvs):
            bad.append("KV pool sits full")
    if any(set(r["throttle"]) - {"power cap"} for r in rs):
        bad.append("thermal/brake throttle in a healthy trace")
    # tokens follow demand: generation over the middle third vs its neighbours is not collapsing while busy
    e = [f.engine for f in fr if f.engine is not None and f.engine.kind != "trainer"]
    if e:
        p99 = [r["itl_p99"] for r in rs if r["itl_p99"] is not None]
        if p99 and sorted(p99)[len(p99) // 2] > 0.25:
            bad.append("median ITL p99 above 250 ms")
    return bad


def main(argv):
    flt = argv[1] if len(argv) > 1 else None
    n = nbad = 0
    for b in built(flt):
        n += 1
        problems = check(b)
        if problems:
            nbad += 1
            print(f"FLAG {b.truth.name}: " + "; ".join(problems))
        else:
            print(f"ok   {b.truth.name}")
    print(f"{n} traces, {nbad} flagged")
    return 1 if nbad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
