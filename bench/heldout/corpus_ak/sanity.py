"""Check every trace: a fault reaches the readings a user looks at within its window, and a
healthy trace is healthy in its own physics.  python -m corpus_ak.sanity [name]"""
from __future__ import annotations
import sys

import corpus_ak
from corpus_ak.show import rows

KEYS = ("util", "sm", "dram", "memutil", "tensor", "clk", "power", "psi", "rq", "gen", "itl50", "itl99", "ttft99",
        "wait", "kv", "preempt", "accept", "thrott", "inv", "launch99_us")


def _mean(rs, k):
    v = [r[k] for r in rs if r.get(k) is not None and r[k] != float("inf")]
    return sum(v) / len(v) if v else None


def check(truth, frames):
    problems = []
    rs = rows(frames, 5.0)
    t0 = truth.start_wall_s
    if truth.cause is None:
        last = [r for r in rs if r["t"] >= rs[-1]["t"] - 60]
        run, wait = _mean(last, "run"), _mean(last, "wait")
        if wait is not None and wait > max(4.0, 0.25 * (run or 0)):
            problems.append(f"queue at the end: {wait:.1f} waiting vs {run} running")
        if _mean(last, "preempt") and _mean(last, "preempt") > 0.05:
            problems.append("preempting at the end")
        kvs = [r.get("kv") for r in rs if r.get("kv") is not None]
        if sum(1 for k in kvs if k > 0.97) > 6:
            problems.append("KV pool sits full")
        if any(set(r["thr"]) - {"power cap"} for r in rs):
            problems.append("throttled by something other than its power cap")
        return problems, None
    if truth.window is None:
        return ["the fault never reached the readings (no window)"], {}
    a, b = truth.window[0] - t0, truth.window[1] - t0
    base = [r for r in rs if 20 <= r["t"] < a - 5]
    inw = [r for r in rs if a + 10 <= r["t"] <= b]
    if len(base) < 6:
        problems.append(f"only {len(base) * 5} s of normal running before the fault")
    moved = {}
    for k in KEYS:
        x, y = _mean(base, k), _mean(inw, k)
        if x is None or y is None:
            continue
        d = (y - x) / max(abs(x), 1e-3 if k not in ("psi", "rq", "inv") else 1.0)
        if abs(d) >= 0.15:
            moved[k] = round(d, 2)
    if not moved:
        problems.append("no reading moved by 15% in the window")
    return problems, moved


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else None
    bad = 0
    for truth, frames in corpus_ak.traces(flt):
        p, moved = check(truth, frames)
        bad += bool(p)
        mv = "" if moved is None else " moved: " + ", ".join(f"{k} {v:+.0%}" for k, v in sorted(moved.items(), key=lambda kv: -abs(kv[1]))[:6])
        print(f"{'FLAG' if p else 'ok  '} {truth.name:48s} {truth.cause or 'healthy':22s}{mv} {'; '.join(p)}")
    print(f"{bad} flagged")


if __name__ == "__main__":
    main()
