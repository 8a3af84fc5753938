"""Check every trace: frames well-formed; each fault reaches the readings a user would look at
inside its window (against the trace's own healthy minutes); each healthy trace is healthy in
its own physics.  python -m corpus_ah.sanity [NAME]"""
from __future__ import annotations

import statistics
import sys

from corpus_ah.show import windows


def _vals(rows, key, a, b):
    return [r[key] for r in rows if a <= r["t"] < b and r.get(key) is not None]


def _med(xs):
    return statistics.median(xs) if xs else None


def _ratio(rows, key, wa, wb, ba, bb):
    w, b = _med(_vals(rows, key, wa, wb)), _med(_vals(rows, key, ba, bb))
    if w is None or b is None or b == 0:
        return None
    return w / b


def check(truth, frames):
    problems, facts = [], []
    ts = [f.time_wall_s for f in frames]
    if any(b <= a for a, b in zip(ts, ts[1:])):
        problems.append("wall times not increasing")
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    if not 0.49 <= statistics.median(gaps) <= 2.01:
        problems.append(f"tick {statistics.median(gaps)}")
    if abs(frames[0].time_wall_s - truth.start_wall_s) > 1e-6:
        problems.append("start_wall_s differs from the first frame")
    urls = {}
    for f in frames:
        if f.engine is not None:
            urls.setdefault(f.engine.kind, set()).add(f.engine.url)
    if any(len(u) > 1 for u in urls.values()):
        problems.append(f"engine address changes: {urls}")
    rows = windows(frames, 10.0)
    t0 = frames[0].time_wall_s
    ng = truth.gpus
    if truth.cause is None:
        w = [r.get("waiting") for r in rows if r.get("waiting") is not None]
        if w:
            third = w[-max(3, len(w) // 3):]
            if third[-1] > max(30, 3 * (_med(w) or 0)) and third == sorted(third):
                problems.append(f"queue grows without bound: {third}")
        pre = sum(r.get("preempt") or 0 for r in rows)
        full = sum(1 for r in rows if (r.get("kv") or 0) > 0.95)
        if pre > 3 or full > len(rows) * 0.2:
            problems.append(f"KV pool full / preempting: {pre} preemptions, {full} windows >95%")
        facts.append(f"max waiting {max(w) if w else '-'}; preemptions {pre}")
        return problems, facts
    a, b = truth.window[0] - t0, truth.window[1] - t0
    ba, bb = 0, max(20, a - 12)
    wa, wb = a + min(15, (b - a) / 3), b
    cause = truth.cause
    hits = []

    def test(label, key, cond):
        r = _ratio(rows, key, wa, wb, ba, bb)
        if r is not None and cond(r):
            hits.append(f"{label} x{r:.2f}")

    gpus = tuple(range(ng)) if cause == "collective_straggler" else truth.culprit_gpus or tuple(range(ng))
    for k in gpus:
        test(f"clock{k}", f"clk{k}", lambda r: r < 0.9)
        test(f"util{k}", f"util{k}", lambda r: r < 0.85 or r > 1.25)
        test(f"sm{k}", f"sm{k}", lambda r: r < 0.8 or r > 1.25)
        test(f"dram{k}", f"dram{k}", lambda r: r > 1.15 or r < 0.8)
        test(f"tensor{k}", f"tensor{k}", lambda r: r < 0.8 or r > 1.25)
        pn = _vals(rows, f"nproc{k}", wa, wb)
        pb = _vals(rows, f"nproc{k}", ba, bb)
        if pn and pb and max(pn) > max(pb):
            hits.append(f"processes on GPU {k} {max(pb)}->{max(pn)}")
    test("gen tok/s", "gen_tps", lambda r: r < 0.85)
    test("ITL p50", "itl_p50", lambda r: r > 1.3)
    test("ITL p99", "itl_p99", lambda r: r > 1.4)
    test("ITL mean", "itl_mean", lambda r: r > 1.3)
    test("TTFT p99", "ttft_p99", lambda r: r > 1.5)
    test("TPOT p50", "tpot_p50", lambda r: r > 1.3)
    test("accept", "accept", lambda r: r < 0.8)
    test("PSI", "psi", lambda r: r > 3)
    test("run queue", "runq", lambda r: r > 2)
    test("launch p99", "launch_p99_us", lambda r: r > 3)
    test("pinned invol switches", "pin_invol_ps", lambda r: r > 3)
    test("waiting", "waiting", lambda r: r > 2)
    test("decode s/token", "s_per_tok", lambda r: r > 1.3)
    wq, bq = _med(_vals(rows, "waiting", wa, wb)), _med(_vals(rows, "waiting", ba, bb))
    if wq is not None and bq is not None and bq < 0.5 and wq >= 2:
        hits.append(f"waiting {bq:.0f}->{wq:.0f}")
    pre = sum(r.get("preempt") or 0 for r in rows if wa <= r["t"] < wb + 30)
    if pre:
        hits.append(f"{pre:.0f} preemptions/retractions")
    tp = _vals(rows, "thr_periods", wa, wb)
    if tp and tp[-1] > (tp[0] or 0):
        hits.append("CFS throttled periods grow")
    if not hits:
        problems.append("fault does not reach the readings in its window")
    # what a user would expect to see for this cause
    need = {
        "throttling": ("clock",), "_": (), "collective_straggler": ("clock", "util", "sm", "tensor"),
        "input_stall": ("util",), "tiny_kernels": ("sm",), "gpu_shared": ("processes",),
        "host_cpu_contention": ("PSI", "run queue", "CFS", "pinned invol"),
        "host_launch_jitter": ("launch p99",), "kv_pressure": ("preemptions", "waiting"),
        "spec_decode_rejected": ("accept",), "memory_bandwidth": ("dram", "gen tok/s", "ITL", "TPOT", "decode s/token"),
        "prefill_interference": ("ITL", "TPOT", "decode s/token"), "oversized_request": ("ITL", "TTFT", "TPOT", "waiting", "decode s/token"),
    }[cause]
    if hits and not any(h.startswith(n) for h in hits for n in need):
        problems.append(f"{cause}: none of {need} moved ({hits})")
    facts.append("; ".join(hits[:8]))
    return problems, facts


def main(argv):
    import corpus_ah
    flt = argv[1] if len(argv) > 1 else None
    bad = 0
    n = 0
    for truth, frames in corpus_ah.traces(flt):
        n += 1
        problems, facts = check(truth, frames)
        tag = "FAIL" if problems else "ok  "
        bad += bool(problems)
        print(f"{tag} {truth.name:45s} {str(truth.cause):22s} {len(frames):4d} frames | "
              + " | ".join(problems + facts))
    print(f"{n} traces, {bad} flagged")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
