"""Check every trace: frames well-formed; each fault reaches the readings in its window
(differs from the trace's own healthy minutes); each healthy trace is healthy in its physics.
python -m corpus_am.sanity [name]"""
from __future__ import annotations

import sys
import time

from corpus_am import traces
from corpus_am.show import rows

KEYS = ("util", "sm", "dram", "clk", "pw", "tok_s", "itl_p99", "itl_p50", "psi", "tree_cpu", "invol_s",
        "launch_p99_us", "acc", "wait", "kv", "nproc")


def med(v):
    v = sorted(x for x in v if x is not None)
    return v[len(v) // 2] if v else None


def check(truth, frames):
    bad = []
    t = [f.time_wall_s for f in frames]
    if any(b <= a for a, b in zip(t, t[1:])):
        bad.append("wall times not increasing")
    seq = [f.seq for f in frames]
    if any(b <= a for a, b in zip(seq, seq[1:])):
        bad.append("seq not increasing")
    if abs(frames[0].time_wall_s - truth.start_wall_s) > 1e-6:
        bad.append("start_wall_s differs from first frame")
    gaps = sorted(b - a for a, b in zip(t, t[1:]))
    if abs(gaps[len(gaps) // 2] - truth.tick_s) > 0.05:
        bad.append(f"median tick {gaps[len(gaps) // 2]:.2f} != {truth.tick_s}")
    urls = {}
    for f in frames:
        if f.engine is not None:
            urls.setdefault(f.engine.url, set()).add(f.engine.pids[0] if f.engine.pids else None)
        if "ebpf" not in f.sources:
            bad.append("no ebpf status")
            break
    if len(urls) > 1:
        bad.append(f"engine addresses change: {sorted(urls)}")
    rs = rows(truth, frames, 10.0)
    t0 = frames[0].time_wall_s
    dur = frames[-1].time_wall_s - t0
    info = ""
    if truth.cause is not None:
        a, b = truth.window[0] - t0, truth.window[1] - t0
        if a < 60:
            bad.append(f"only {a:.0f} s of normal before the window")
        if b - a < 30 and "ntermittent" not in truth.note:
            bad.append(f"window only {b - a:.0f} s")
        base = [r for r in rs if r["t"] + 10 <= a and r["t"] >= 20]
        win = [r for r in rs if a + 5 <= r["t"] and r["t"] + 10 <= b]
        if not win:
            win = [r for r in rs if a <= r["t"] <= b]
        moved = []
        bw = med([r.get("wait") for r in base])
        if bw is not None and bw > 10:
            bad.append(f"queue already long before the fault (median wait {bw:.0f})")
        for k in ("util", "tok_s", "sm"):  # intermittent faults: the low points differ
            lo = lambda rr: sorted(x for x in (r.get(k) for r in rr) if x is not None)
            x, y = lo(base), lo(win)
            if x and y and y[len(y) // 10] < 0.75 * x[len(x) // 10]:
                moved.append(f"{k} low decile {x[len(x) // 10]:.3g}->{y[len(y) // 10]:.3g}")
        for k in KEYS:
            x, y = med([r.get(k) for r in base]), med([r.get(k) for r in win])
            if x is None or y is None:
                continue
            ref = max(abs(x), {"util": 5, "sm": 3, "dram": 3, "psi": 3, "tree_cpu": 0.3, "invol_s": 30,
                                "wait": 2, "kv": 0.05, "acc": 0.05, "nproc": 1}.get(k, 1e-9))
            if abs(y - x) / ref > 0.2:
                moved.append(f"{k} {x:.3g}->{y:.3g}")
        # per-GPU spread (a straggler, a shared GPU)
        if len(frames[0].gpus) > 1:
            for key in ("util_per_gpu", "sm_per_gpu", "clk_per_gpu"):
                sp = lambda rr: med([max(v) - min(v) for v in (r[key] for r in rr) if None not in v])
                x, y = sp(base), sp(win)
                if x is not None and y is not None and y - x > 8:
                    moved.append(f"{key} spread {x:.0f}->{y:.0f}")
        thr_in = {z for r in win for z in r["thr"]} - {z for r in base for z in r["thr"]}
        if thr_in:
            moved.append(f"throttle {sorted(thr_in)}")
        if not moved:
            bad.append("fault does not reach the readings in its window")
        info = "; ".join(moved[:6])
    else:
        # healthy in its own physics
        waits = [r.get("wait") for r in rs if r.get("wait") is not None]
        q = max(1, len(waits) // 4)
        if waits and (sum(waits[-q:]) / q > 20 and sum(waits[-q:]) > 1.5 * sum(waits[:q]) or med(waits) > 50):
            bad.append(f"queue grows without bound ({waits[-6:]})")
        pres = [r.get("pre") for r in rs if r.get("pre") is not None]
        if pres and pres[-1] - pres[0] > 0:
            bad.append(f"preemptions in a healthy trace ({pres[-1] - pres[0]:.0f})")
        kvs = [r.get("kv") for r in rs if r.get("kv") is not None]
        if kvs and sum(1 for k in kvs if k > 0.95) > len(kvs) // 4:
            bad.append("KV pool sits full")
        thr = {z for r in rs for z in r["thr"]}
        if thr - {"power cap"}:
            bad.append(f"throttled: {sorted(thr)}")
        info = f"wait max {max(waits) if waits else '-'}, kv max {max(kvs) if kvs else '-'}, thr {sorted(thr)}"
    return bad, info


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else None
    t0 = time.process_time()
    n = nbad = 0
    counts = {}
    for truth, frames in traces(flt):
        n += 1
        counts[truth.cause or "healthy"] = counts.get(truth.cause or "healthy", 0) + 1
        bad, info = check(truth, frames)
        nbad += bool(bad)
        print(f"{'FLAG' if bad else 'ok  '} {truth.name:45s} {truth.cause or 'healthy':22s} {len(frames):4d} fr  "
              f"{'; '.join(bad) if bad else info}")
    print(f"{n} traces, {nbad} flagged, {time.process_time() - t0:.1f} s CPU")
    print(dict(sorted(counts.items())))
    return 1 if nbad else 0


if __name__ == "__main__":
    sys.exit(main())
