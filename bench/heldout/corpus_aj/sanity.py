"""Checks every trace against its own physics: a fault must reach the readings a user looks at
in its window (compared with the trace's own healthy minutes before it), and a healthy trace
must be healthy by its own numbers (bounded queue, no KV pool sitting full with preemptions,
tokens/s following demand).

    python -m corpus_aj.sanity [NAME|CAUSE|healthy]"""
from __future__ import annotations

import sys

from corpus_aj.show import rows


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def _split(rs, truth, every):
    t_w0 = truth.window[0] - truth.start_wall_s
    t_w1 = truth.window[1] - truth.start_wall_s
    base = [r for r in rs if r["t"] + every <= t_w0 - 5 and r["t"] >= 10]
    win = [r for r in rs if r["t"] >= t_w0 + 5 and r["t"] + every <= t_w1 + 1]
    return base, win


def _rel(b, w):
    if b is None or w is None:
        return None
    return (w - b) / max(abs(b), 1e-9)


def check_fault(truth, frames, every=10.0):
    rs = rows(frames, every)
    base, win = _split(rs, truth, every)
    problems, found = [], []
    if len(base) < 5:
        problems.append(f"only {len(base) * every:.0f} s of normal running before the window")
    if not win:
        return problems + ["no readings in the window"], found
    n = truth.gpus
    gpus = truth.culprit_gpus or tuple(range(n))
    m = lambda key, rr: _mean([r.get(key) for r in rr])
    # a union of what a user would see; each cause names its main readings first
    tok = _rel(m("tok_s", base), m("tok_s", win))
    if tok is not None and tok < -0.12:
        found.append(f"tokens/s {tok:+.0%}")
    itl = _rel(m("itl_p99", base), m("itl_p99", win))
    if itl is not None and itl > 0.4:
        found.append(f"ITL p99 {itl:+.0%}")
    tp = _rel(m("tpot_p99", base), m("tpot_p99", win))
    if tp is not None and tp > 0.4:
        found.append(f"ITL (per-request TPOT) p99 {tp:+.0%}")
    ttft = _rel(m("ttft_p99", base), m("ttft_p99", win))
    if ttft is not None and ttft > 0.5:
        found.append(f"TTFT p99 {ttft:+.0%}")
    for g in gpus:
        u = _rel(m(f"util{g}", base), m(f"util{g}", win))
        if u is not None and abs(u) > 0.12:
            found.append(f"g{g} util {u:+.0%}")
        s = m(f"sm{g}", base), m(f"sm{g}", win)
        if None not in s and abs(s[1] - s[0]) > 8:
            found.append(f"g{g} SM {s[0]:.0f}->{s[1]:.0f}")
        d = m(f"dram{g}", base), m(f"dram{g}", win)
        if None not in d and abs(d[1] - d[0]) > 8:
            found.append(f"g{g} DRAM {d[0]:.0f}->{d[1]:.0f}")
        c = _rel(m(f"clk{g}", base), m(f"clk{g}", win))
        if c is not None and c < -0.07:
            found.append(f"g{g} clock {c:+.0%}")
        if any(r.get(f"nproc{g}", 0) > max(x.get(f"nproc{g}", 0) for x in base) for r in win):
            found.append(f"g{g} another process")
    if sum(r.get("preempt") or 0 for r in win) > sum(r.get("preempt") or 0 for r in base) + 3:
        found.append("preemptions")
    a = m("accept", base), m("accept", win)
    if None not in a and a[1] < a[0] - 0.1:
        found.append(f"acceptance {a[0]:.2f}->{a[1]:.2f}")
    psi = m("psi", base), m("psi", win)
    if None not in psi and psi[1] > psi[0] + 5:
        found.append(f"PSI {psi[0]:.1f}->{psi[1]:.1f}")
    inv = _rel(m("inv_s", base), m("inv_s", win))
    if inv is not None and inv > 1.0:
        found.append(f"involuntary switches {inv:+.0%}")
    if sum(r.get("thrott") or 0 for r in win) > 0:
        found.append("cgroup throttling")
    for k in list(win[0]):
        if k.startswith("p99us_"):
            lp = _rel(m(k, base), m(k, win))
            if lp is not None and lp > 2.0:
                found.append(f"launch p99 {k[6:]} {lp:+.0%}")
    main = {
        "memory_bandwidth": ("DRAM", "tokens/s", "ITL"),
        "throttling": ("clock",),
        "prefill_interference": ("ITL",),
        "tiny_kernels": ("SM", "util"),
        "host_cpu_contention": ("PSI", "involuntary", "cgroup", "tokens/s"),
        "input_stall": ("util",),
        "collective_straggler": ("util", "SM", "clock"),
        "kv_pressure": ("preemptions",),
        "gpu_shared": ("another process",),
        "spec_decode_rejected": ("acceptance",),
        "oversized_request": ("ITL", "TTFT", "tokens/s"),
        "host_launch_jitter": ("launch p99",),
    }[truth.cause]
    if not any(any(k in f for k in main) for f in found):
        problems.append(f"the {truth.cause} does not show in its main readings {main}")
    return problems, found


def check_healthy(truth, frames, every=10.0):
    rs = rows(frames, every)
    problems = []
    waits = [r.get("wait") for r in rs if r.get("wait") is not None]
    if waits:
        third = waits[len(waits) * 2 // 3:]
        if max(waits) > 50 and third and min(third) > 0.5 * max(waits) and truth.name.find("offline") < 0:
            problems.append(f"queue grows: waiting {waits[0]:.0f} -> {waits[-1]:.0f}")
        if truth.name.find("offline") >= 0 and waits[-1] > max(waits[: max(1, len(waits) // 2)]):
            problems.append("offline backlog does not drain")
    pre = [r.get("preempt") or 0 for r in rs]
    kvfull = [r for r in rs if (r.get("kv") or 0) > 0.97]
    if sum(pre) > 5 or (len(kvfull) > 3 and sum(pre) > 0):
        problems.append(f"{sum(pre):.0f} preemptions, {len(kvfull)} periods with the pool full")
    for r in rs:
        if (r.get("run") or 0) > 0 and r.get("tok_s") == 0 and (r.get("wait") or 0) > 0:
            problems.append(f"t={r['t']}: requests running and waiting but no tokens")
            break
    return problems, []


def main(argv=None):
    import corpus_aj
    argv = sys.argv[1:] if argv is None else argv
    flt = argv[0] if argv else None
    bad = 0
    total = 0
    for truth, frames in corpus_aj.traces(flt):
        total += 1
        every = max(10.0, truth.tick_s * 5)
        fn = check_healthy if truth.cause is None else check_fault
        problems, found = fn(truth, frames, every)
        # frames: time order, ticks in 0.5-2 s
        times = [f.time_wall_s for f in frames]
        if any(b <= a for a, b in zip(times, times[1:])):
            problems.append("wall times do not increase")
        status = "ok  " if not problems else "FLAG"
        bad += bool(problems)
        print(f"{status} {truth.name:48s} {str(truth.cause):22s} {'; '.join(problems) or ', '.join(found[:6])}")
    print(f"{total} traces, {bad} flagged")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
