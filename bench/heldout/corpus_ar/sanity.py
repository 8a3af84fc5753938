"""Check every trace: the format, healthy baselines, and that each fault reaches the readings.

    python -m corpus_ar.sanity [NAME-or-cause ...]

Each fault is judged against the trace's own baseline (the frames from 30 s after the start
to 10 s before the window) using the window's core (its middle, after the onset ramp).
"""
from __future__ import annotations

import math
import sys
import time

from corpus_ar import CAUSES, traces


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def hist_of(frame, name):
    e = frame.engine
    if e is None:
        return None
    for h in e.histograms:
        if h.name == name:
            return h
    return None


def interval_hist(f0, f1, name):
    """(mean, p99) of an engine histogram between two frames."""
    a, b = hist_of(f0, name), hist_of(f1, name)
    if a is None or b is None or b.count - a.count < 1:
        return None, None
    n = b.count - a.count
    m = (b.sum - a.sum) / n
    target = 0.99 * n
    prev = 0.0
    p99 = b.upper_bounds[-1] * 2
    for ub, c1, c0 in zip(b.upper_bounds, b.cumulative, a.cumulative):
        if c1 - c0 >= target:
            p99 = ub
            break
    return m, p99


def rate(f0, f1, attr):
    e0, e1 = f0.engine, f1.engine
    if e0 is None or e1 is None:
        return None
    v0, v1 = getattr(e0, attr), getattr(e1, attr)
    if v0 is None or v1 is None or e1.time_wall_s == e0.time_wall_s:
        return None
    return (v1 - v0) / (e1.time_wall_s - e0.time_wall_s)


def span(frames, lo, hi):
    return [f for f in frames if lo <= f.time_wall_s <= hi]


def gpu_mean(frames, attr, gpus=None):
    vals = []
    for f in frames:
        for g in f.gpus:
            if gpus is None or g.index in gpus:
                vals.append(getattr(g, attr))
    return mean(vals)


def launch_tail_share(frames, lo_ns=20000):
    from gputop.buckets import bucket_bounds_ns
    tot = slow = 0
    for f in frames:
        for h in f.launch:
            if h.api != "cudaLaunchKernel":
                continue
            for b, c in h.buckets.items():
                tot += c
                if bucket_bounds_ns(b)[0] >= lo_ns:
                    slow += c
    return slow / tot if tot else None


def per_s(frames, get):
    """Rate of a cumulative value over a span of frames."""
    pts = [(f.time_wall_s, get(f)) for f in frames if get(f) is not None]
    if len(pts) < 2 or pts[-1][0] == pts[0][0]:
        return None
    return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])


def check(truth, frames):
    errs = []
    notes = []
    t0 = frames[0].time_wall_s
    t_end = frames[-1].time_wall_s
    # ---------------------------------------------------------------- format
    prev = -1
    urls = set()
    for f in frames:
        if f.time_wall_s <= prev:
            errs.append(f"wall time not increasing at seq {f.seq}")
            break
        prev = f.time_wall_s
        if "ebpf" not in f.sources:
            errs.append(f"no ebpf status at seq {f.seq}")
            break
        for g in f.gpus:
            if g.mem_used_bytes is not None and g.mem_used_bytes > g.mem_total_bytes:
                errs.append(f"memory used > total on GPU {g.index} at seq {f.seq}")
        tree = set(f.pinned.tree_pids) if f.pinned else set()
        if f.engine is not None:
            urls.add(f.engine.url)
            if not set(f.engine.pids) <= tree:
                errs.append(f"engine pids outside the pinned tree at seq {f.seq}")
        tree_cg = {p.cgroup for p in f.processes if p.pid in tree}
        eng_pids = set(f.engine.pids) if f.engine is not None else set()
        for p in f.processes:
            outsider = p.pid not in tree
            if outsider and (p.pid in eng_pids or p.cgroup in tree_cg):
                errs.append(f"another tenant's process {p.pid} is counted as the job's at seq {f.seq}")
                break
        if f.launch and not f.sources["ebpf"].ok:
            errs.append("launch histograms while eBPF is off")
    if len(urls) > 1:
        errs.append(f"engine URL changes: {sorted(urls)}")
    dur = t_end - t0
    # ---------------------------------------------------------------- timing
    if truth.cause is None:
        if not 360 <= dur <= 900:
            errs.append(f"healthy trace lasts {dur:.0f} s")
        base = frames
    else:
        ws, we = truth.window
        if ws - t0 < 120:
            errs.append(f"only {ws - t0:.0f} s before the window")
        if not 100 <= we - ws <= 300:
            errs.append(f"window of {we - ws:.0f} s")
        if t_end - we < 60:
            errs.append(f"only {t_end - we:.0f} s of recovery")
        base = span(frames, t0 + 30, ws - 10)
    # ---------------------------------------------------------------- healthy baseline
    outside = frames if truth.cause is None else \
        [f for f in frames if f.time_wall_s < truth.window[0] - 5 or f.time_wall_s > truth.window[1] + 90]
    eng = [f for f in outside if f.engine is not None]
    if eng:
        pre = [f.engine.preemptions_total or 0 for f in eng]
        ret = [f.engine.retracted_requests_total or 0 for f in eng]
        if truth.cause is None and (pre[-1] - pre[0] > 0 or ret[-1] - ret[0] > 0):
            errs.append("preemptions in a healthy trace")
        if truth.cause is not None:
            bp = [f.engine.preemptions_total or 0 for f in eng if f.time_wall_s < truth.window[0]]
            if bp and bp[-1] - bp[0] > 0:
                errs.append("preemptions before the window")
        kv = [f.engine.kv_usage_ratio for f in eng if f.engine.kv_usage_ratio is not None]
        if kv and max(kv) > 0.9:
            errs.append(f"KV pool {max(kv):.2f} full outside the window")
        wq = [f.engine.requests_waiting or 0 for f in eng]
        if wq and max(wq) > 40:
            errs.append(f"queue of {max(wq):.0f} outside the window")
        half = len(wq) // 2
        if half > 5 and mean(wq[half:]) > 4 * mean(wq[:half]) + 5:
            errs.append("queue keeps growing outside the window")
    if truth.cause is None:
        return errs, notes
    # ---------------------------------------------------------------- the fault reaches the readings
    ws, we = truth.window
    core = span(frames, ws + 0.25 * (we - ws), we - 0.1 * (we - ws))
    cause = truth.cause
    if not base or not core:
        errs.append("no frames to compare")
        return errs, notes
    fb0, fb1, fw0, fw1 = base[0], base[-1], core[0], core[-1]
    itl_b = interval_hist(fb0, fb1, "itl") if fb0.engine else (None, None)
    itl_w = interval_hist(fw0, fw1, "itl") if fw0.engine else (None, None)
    if itl_b[0] is None and fb0.engine is not None:
        itl_b = interval_hist(fb0, fb1, "tpot")
        itl_w = interval_hist(fw0, fw1, "tpot")
    work_b = work_w = None
    if fb0.engine is not None:
        work_b = per_s(base, lambda f: f.engine.generation_tokens_total if f.engine else None)
        work_w = per_s(core, lambda f: f.engine.generation_tokens_total if f.engine else None)
    gp = truth.culprit_gpus
    def ratio(a, b):
        return None if a is None or b is None or b == 0 else a / b
    if itl_b[0] is None and fb0.engine is not None and fb0.engine.decode_seconds_total is not None:
        # llama.cpp: seconds its slots spent generating per token predicted
        def lat(a, b):
            dg = (b.engine.generation_tokens_total or 0) - (a.engine.generation_tokens_total or 0)
            return (b.engine.decode_seconds_total - a.engine.decode_seconds_total) / dg if dg > 0 else None
        itl_b = (lat(fb0, fb1), None)
        itl_w = (lat(fw0, fw1), None)
    itl_mean_r = ratio(itl_w[0], itl_b[0])
    itl_p99_r = ratio(itl_w[1], itl_b[1])
    work_r = ratio(work_w, work_b)
    util_b, util_w = gpu_mean(base, "util_gpu_pct", gp), gpu_mean(core, "util_gpu_pct", gp)
    sm_b, sm_w = gpu_mean(base, "sm_active_pct", gp), gpu_mean(core, "sm_active_pct", gp)
    dram_b = gpu_mean(base, "dram_bw_pct", gp) or gpu_mean(base, "util_mem_pct", gp)
    dram_w = gpu_mean(core, "dram_bw_pct", gp) or gpu_mean(core, "util_mem_pct", gp)
    clk_b, clk_w = gpu_mean(base, "sm_clock_mhz", gp), gpu_mean(core, "sm_clock_mhz", gp)
    slow = (itl_mean_r and itl_mean_r > 1.15) or (itl_p99_r and itl_p99_r >= 1.5) or \
        (work_r is not None and work_r < 0.9)
    facts = dict(itl_mean=itl_mean_r, itl_p99=itl_p99_r, work=work_r, util=(util_b, util_w), sm=(sm_b, sm_w),
                 dram=(dram_b, dram_w), clk=(clk_b, clk_w))
    ok = True
    if cause == "memory_bandwidth":
        ok = dram_w - dram_b >= 6 and slow
    elif cause == "throttling":
        ok = clk_w <= 0.92 * clk_b
    elif cause == "prefill_interference":
        def computed(f):
            if f.engine is None or f.engine.prompt_tokens_total is None:
                return None
            return f.engine.prompt_tokens_total - (f.engine.prompt_tokens_cached_total or 0)
        pr_b = per_s(base, computed)
        pr_w = per_s(core, computed)
        facts["prompt"] = ratio(pr_w, pr_b)
        ok = bool(slow) and pr_w > 1.8 * pr_b
    elif cause == "oversized_request":
        ok = bool((itl_p99_r and itl_p99_r >= 1.5) or (itl_mean_r and itl_mean_r >= 1.3))
    elif cause == "tiny_kernels":
        ok = util_w >= util_b - 8 and (sm_w / max(util_w, 1)) <= 0.7 * (sm_b / max(util_b, 1))
    elif cause == "host_cpu_contention":
        psi_b = mean([f.host.cpu_pressure_some_pct for f in base])
        psi_w = mean([f.host.cpu_pressure_some_pct for f in core])
        inv_b = per_s(base, lambda f: f.pinned.ctx_involuntary)
        inv_w = per_s(core, lambda f: f.pinned.ctx_involuntary)
        thr_b = per_s(base, lambda f: f.pinned.cpu_throttled_periods)
        thr_w = per_s(core, lambda f: f.pinned.cpu_throttled_periods)
        facts.update(psi=(psi_b, psi_w), invol=(inv_b, inv_w), throttled=(thr_b, thr_w))
        ok = (psi_w - psi_b >= 10 or inv_w >= 3 * inv_b or (thr_w or 0) >= (thr_b or 0) + 3) and bool(slow)
    elif cause == "input_stall":
        ok = util_w <= util_b - 15 and (work_r is None or work_r < 0.85)
    elif cause == "collective_straggler":
        others = [g.index for g in frames[0].gpus if g.index not in gp]
        o_sm_b, o_sm_w = gpu_mean(base, "sm_active_pct", others), gpu_mean(core, "sm_active_pct", others)
        facts["others_sm"] = (o_sm_b, o_sm_w)
        ok = (clk_w <= 0.92 * clk_b or (o_sm_b is not None and o_sm_w <= 0.9 * o_sm_b)) and \
            (work_r is None or work_r < 0.92)
    elif cause == "kv_pressure":
        def pre(f):
            return (f.engine.preemptions_total or 0) + (f.engine.retracted_requests_total or 0) if f.engine else None
        win_f = span(frames, ws, we)
        grew = pre(win_f[-1]) - pre(win_f[0])
        kvmax = max((f.engine.kv_usage_ratio or 0) for f in win_f if f.engine)
        facts.update(preempted=grew, kvmax=kvmax)
        ok = grew > 0 and kvmax >= 0.9
    elif cause == "gpu_shared":
        def outsiders(fs):
            n = 0
            for f in fs:
                tree = set(f.pinned.tree_pids)
                n += sum(1 for p in f.processes if p.pid not in tree and p.gpu_index in gp and (p.sm_util_pct or 0) > 0)
            return n
        facts["outsiders"] = (outsiders(base), outsiders(core))
        ok = outsiders(base) == 0 and outsiders(core) >= len(core) * 0.8
    elif cause == "spec_decode_rejected":
        def acc(fs):
            e0, e1 = fs[0].engine, fs[-1].engine
            if e1.spec_draft_tokens_total is not None:
                return (e1.spec_accepted_tokens_total - e0.spec_accepted_tokens_total) / \
                    max(1.0, e1.spec_draft_tokens_total - e0.spec_draft_tokens_total)
            return mean([f.engine.spec_accept_ratio for f in fs if f.engine])
        facts["accept"] = (acc(base), acc(core))
        ok = acc(core) <= 0.75 * acc(base)
    elif cause == "host_launch_jitter":
        sb, sw = launch_tail_share(base), launch_tail_share(core)
        facts["launch_tail"] = (sb, sw)
        ok = sb is not None and sw >= max(3 * sb, 0.005) and bool(slow)
    if not ok:
        errs.append(f"{cause} does not reach the readings: " + ", ".join(
            f"{k}={_fmt(v)}" for k, v in facts.items()))
    notes.append(", ".join(f"{k}={_fmt(v)}" for k, v in facts.items()))
    return errs, notes


def _fmt(v):
    if isinstance(v, tuple):
        return "(" + ",".join(_fmt(x) for x in v) + ")"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def main(argv):
    flt = argv[0] if argv else None
    t = time.process_time()
    bad = 0
    n = 0
    for truth, frames in traces(flt):
        n += 1
        errs, notes = check(truth, frames)
        status = "ok  " if not errs else "FAIL"
        bad += bool(errs)
        print(f"{status} {truth.name:50s} {str(truth.cause):22s} {len(frames):4d} fr  {notes[0] if notes else ''}")
        for e in errs:
            print(f"      - {e}")
    print(f"{n - bad}/{n} traces pass ({time.process_time() - t:.1f} s CPU)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
