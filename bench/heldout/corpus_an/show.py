"""Print a trace's key readings per window (default 10 s): what a user would look at.

    PYTHONPATH=/work/blindan python -m corpus_an.show NAME [SECONDS] [GPU]
"""

from __future__ import annotations

import sys

from gputop.buckets import bucket_mid_ns


def hist_q(h0, h1, q):
    """Quantile of the observations between two cumulative readings of a histogram."""
    if h0 is None or h1 is None:
        return None
    n = h1.count - h0.count
    if n <= 0:
        return None
    prev = 0.0
    lo = 0.0
    for b, c1, c0 in zip(h1.upper_bounds, h1.cumulative, h0.cumulative):
        c = c1 - c0
        if c >= q * n:
            # linear within the bucket
            frac = (q * n - prev) / max(1e-9, c - prev)
            return lo + (b - lo) * frac
        prev = c
        lo = b
    return h1.upper_bounds[-1]


def _h(e, name):
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def launch_p99(frames):
    buckets = {}
    for f in frames:
        for lh in f.launch:
            for k, c in lh.buckets.items():
                buckets[k] = buckets.get(k, 0) + c
    n = sum(buckets.values())
    if not n:
        return None
    acc = 0
    for k in sorted(buckets):
        acc += buckets[k]
        if acc >= 0.99 * n:
            return bucket_mid_ns(k) / 1000
    return None


def windows(frames, span=10.0):
    out = []
    cur = []
    t0 = frames[0].time_wall_s
    for f in frames:
        if cur and f.time_wall_s - cur[0].time_wall_s >= span:
            out.append(cur)
            cur = []
        cur.append(f)
    if cur:
        out.append(cur)
    return out


def summary(frames, span=10.0, gpu=None):
    """Rows of per-window readings (dicts); gpu None: mean over GPUs, else that one."""
    rows = []
    start = frames[0].time_wall_s
    prev_last = frames[0]
    for win in windows(frames, span):
        a, b = prev_last, win[-1]
        dt = max(1e-6, b.time_wall_s - a.time_wall_s)

        def gmean(attr):
            vals = []
            for f in win:
                gs = f.gpus if gpu is None else [g for g in f.gpus if g.index == gpu]
                vals += [getattr(g, attr) for g in gs if getattr(g, attr) is not None]
            return sum(vals) / len(vals) if vals else None
        r = {"t": win[0].time_wall_s - start}
        for k in ("util_gpu_pct", "sm_active_pct", "dram_bw_pct", "tensor_pct", "power_w", "sm_clock_mhz", "temp_c"):
            r[k] = gmean(k)
        r["throttle"] = sorted({x for f in win for g in f.gpus for x in g.throttle})
        ea, eb = a.engine, b.engine
        if ea is not None and eb is not None and eb.time_wall_s and ea.time_wall_s and eb.time_wall_s > ea.time_wall_s:
            edt = eb.time_wall_s - ea.time_wall_s
            if eb.generation_tokens_total is not None and ea.generation_tokens_total is not None:
                r["tok_s"] = (eb.generation_tokens_total - ea.generation_tokens_total) / edt
            if eb.preemptions_total is not None and ea.preemptions_total is not None:
                r["preempt"] = eb.preemptions_total - ea.preemptions_total
            if eb.retracted_requests_total is not None and ea.retracted_requests_total is not None:
                r["preempt"] = r.get("preempt", 0) + eb.retracted_requests_total - ea.retracted_requests_total
            for name in ("itl", "tpot", "ttft"):
                q = hist_q(_h(ea, name), _h(eb, name), 0.99)
                if q is not None:
                    r[name + "_p99"] = q
            q = hist_q(_h(ea, "itl"), _h(eb, "itl"), 0.5)
            if q is not None:
                r["itl_p50"] = q
            if eb.spec_accepted_tokens_total is not None and ea.spec_draft_tokens_total is not None:
                d = eb.spec_draft_tokens_total - ea.spec_draft_tokens_total
                if d > 0:
                    r["accept"] = (eb.spec_accepted_tokens_total - ea.spec_accepted_tokens_total) / d
            if eb.spec_accept_ratio is not None:
                r["accept"] = eb.spec_accept_ratio
        if eb is not None:
            r["run"] = eb.requests_running
            r["wait"] = eb.requests_waiting
            r["kv"] = eb.kv_usage_ratio
        ha, hb = a.pinned, b.pinned
        if ha is not None and hb is not None and ha.cpu_s is not None and hb.cpu_s is not None:
            r["tree_cpu"] = (hb.cpu_s - ha.cpu_s) / dt
            r["inv_s"] = (hb.ctx_involuntary - ha.ctx_involuntary) / dt
            if hb.cpu_throttled_periods is not None and ha.cpu_throttled_periods is not None:
                r["thr_per"] = (hb.cpu_throttled_periods - ha.cpu_throttled_periods) / max(1, hb.cpu_periods - ha.cpu_periods)
        r["host_cpu"] = sum(f.host.cpu_pct for f in win) / len(win)
        r["psi"] = b.host.cpu_pressure_some_pct
        r["rq"] = b.host.run_queue
        lp = launch_p99(win)
        if lp is not None:
            r["launch_p99_us"] = lp
        rows.append(r)
        prev_last = win[-1]
    return rows


def fmt(r):
    parts = []
    for k, v in r.items():
        if v is None or v == []:
            continue
        if isinstance(v, float):
            parts.append(f"{k}={v:.3g}")
        else:
            parts.append(f"{k}={v}")
    return " ".join(parts)


def main(argv):
    import corpus_an
    name = argv[0]
    span = float(argv[1]) if len(argv) > 1 else 10.0
    gpu = int(argv[2]) if len(argv) > 2 else None
    for truth, frames in corpus_an.traces(name):
        print(truth)
        for r in summary(frames, span, gpu):
            mark = "*" if truth.window and truth.window[0] - truth.start_wall_s <= r["t"] < truth.window[1] - truth.start_wall_s else " "
            print(mark, fmt(r))


if __name__ == "__main__":
    main(sys.argv[1:])
