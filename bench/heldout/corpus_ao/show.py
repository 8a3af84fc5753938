"""Print a trace's key readings every N seconds: python -m corpus_ao.show NAME [every_s]."""
from __future__ import annotations

import sys

import corpus_ao


def pct(h, q):
    """Quantile from per-interval bucket deltas (upper bound of the bucket)."""
    if h is None:
        return None
    b, c, n = h
    if n <= 0:
        return None
    want = q * n
    for bound, cum in zip(b, c):
        if cum >= want:
            return bound
    return float("inf")


def series(frames, every=10.0):
    """Rows of per-window readings: what a user would look at."""
    rows = []
    t0 = frames[0].time_wall_s
    bucket = []
    prev_eng = None
    for f in frames:
        bucket.append(f)
        if f.time_wall_s - bucket[0].time_wall_s >= every - 1e-6 or f is frames[-1]:
            rows.append(_row(bucket, t0, prev_eng))
            eng = [x.engine for x in bucket if x.engine is not None]
            if eng:
                prev_eng = eng[-1]
            bucket = []
    return rows


def _row(fs, t0, prev):
    n = len(fs)
    g = lambda k, i=0: _avg([getattr(f.gpus[i], k) for f in fs])
    ng = len(fs[0].gpus)
    r = dict(t=round(fs[0].time_wall_s - t0), util=[g("util_gpu_pct", i) for i in range(ng)],
             sm=[g("sm_active_pct", i) for i in range(ng)], dram=g("dram_bw_pct"), memu=g("util_mem_pct"),
             ten=g("tensor_pct"), clk=[g("sm_clock_mhz", i) for i in range(ng)], pw=g("power_w"),
             temp=[g("temp_c", i) for i in range(ng)], nvl=[g("nvlink_rx_mib_per_s", i) for i in range(ng)],
             thr=sorted({t for f in fs for x in f.gpus for t in x.throttle}),
             psi=_avg([f.host.cpu_pressure_some_pct for f in fs]), rq=_avg([f.host.run_queue for f in fs]))
    p0, p1 = fs[0].pinned, fs[-1].pinned
    dt = fs[-1].time_wall_s - fs[0].time_wall_s or 1
    r["tree_cpu"] = (p1.cpu_s - p0.cpu_s) / dt if p0 and p1 and p0.cpu_s is not None else None
    r["invol/s"] = (p1.ctx_involuntary - p0.ctx_involuntary) / dt if p0 and p1 else None
    if p1 and p1.cpu_throttled_periods is not None:
        r["thr_per"] = (p1.cpu_throttled_periods - p0.cpu_throttled_periods) / max(1, p1.cpu_periods - p0.cpu_periods)
    others = {p.pid for f in fs for p in f.processes if p.pid not in (f.pinned.tree_pids if f.pinned else ())}
    if others:
        r["others"] = len(others)
    if fs[-1].launch:
        lh = [l for f in fs for l in f.launch]
        tot = sum(l.count for l in lh)
        big = sum(c for l in lh for b, c in l.buckets.items() if b >= 8 + (16 - 3) * 8)  # >=65us
        r["launch>65us%"] = round(100 * big / max(1, tot), 2)
    e = [f.engine for f in fs if f.engine is not None]
    if e:
        a, b = (prev or e[0]), e[-1]
        dt = (b.time_wall_s or 0) - (a.time_wall_s or 0) or 1
        d = lambda k: ((getattr(b, k) or 0) - (getattr(a, k) or 0)) / dt if getattr(b, k) is not None else None
        r["gen/s"] = d("generation_tokens_total")
        r["run"] = b.requests_running
        r["wait"] = b.requests_waiting
        r["kv"] = b.kv_usage_ratio
        if b.decode_seconds_total is not None and b.kind == "llamacpp":
            dg = (b.generation_tokens_total or 0) - (a.generation_tokens_total or 0)
            r["dec_s_tok"] = round((b.decode_seconds_total - (a.decode_seconds_total or 0)) / dg, 4) if dg > 0 else None
        if b.requests_finished_total is not None:
            r["done/s"] = d("requests_finished_total")
        r["preempt"] = ((b.preemptions_total or 0) - (a.preemptions_total or 0)) + \
            ((b.retracted_requests_total or 0) - (a.retracted_requests_total or 0))
        ha = {h.name: h for h in a.histograms}
        for h in b.histograms:
            if h.name in ("itl", "ttft", "tpot"):
                o = ha.get(h.name)
                c = [x - (o.cumulative[i] if o else 0) for i, x in enumerate(h.cumulative)]
                nn = h.count - (o.count if o else 0)
                r[h.name + "_p99"] = pct((h.upper_bounds, c, nn), 0.99)
                r[h.name + "_mean"] = round((h.sum - (o.sum if o else 0)) / nn, 4) if nn > 0 else None
        if b.spec_drafts_total is not None and b.spec_draft_tokens_total:
            dd = (b.spec_draft_tokens_total or 0) - (a.spec_draft_tokens_total or 0)
            r["accept"] = round(((b.spec_accepted_tokens_total or 0) - (a.spec_accepted_tokens_total or 0)) / dd, 2) if dd else None
        if b.spec_accept_ratio is not None:
            r["accept"] = b.spec_accept_ratio
    return r


def _avg(v):
    v = [x for x in v if x is not None]
    return round(sum(v) / len(v), 1) if v else None


def main():
    name = sys.argv[1]
    every = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    truth, frames = next(corpus_ao.traces(name))
    print(truth)
    t0 = frames[0].time_wall_s
    if truth.window:
        print("window (s from start):", round(truth.window[0] - t0), round(truth.window[1] - t0))
    for r in series(frames, every):
        print({k: v for k, v in r.items() if v not in (None, [], [None])})


if __name__ == "__main__":
    main()
