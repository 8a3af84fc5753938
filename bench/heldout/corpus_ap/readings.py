"""What a user reads off frames: per-frame rows of the quantities show.py prints and sanity.py checks."""
from __future__ import annotations

from gputop.buckets import bucket_mid_ns


def hist_q(prev, cur, q):
    """Quantile of a histogram's increase between two scrapes (upper bound of the bucket)."""
    if prev is None or cur is None:
        return None
    n = cur.count - prev.count
    if n <= 0:
        return None
    target = q * n
    last = 0.0
    for b, c0, c1 in zip(cur.upper_bounds, prev.cumulative, cur.cumulative):
        if c1 - c0 >= target:
            return b
        last = b
    return last * 2


def hist_mean(prev, cur):
    if prev is None or cur is None or cur.count - prev.count <= 0:
        return None
    return (cur.sum - prev.sum) / (cur.count - prev.count)


ENG_KEYS = {"gen_s", "preempt", "accept", "itl_p99", "itl_mean", "ttft_p99", "ttft_mean", "tpot_p99",
            "tpot_mean", "e2e_p99", "e2e_mean"}


def rows(frames):
    out = []
    prev = None
    pe = None  # previous engine scrape
    carry = {}
    for f in frames:
        r = {"t": f.time_wall_s - frames[0].time_wall_s}
        for g in f.gpus:
            k = f"g{g.index}"
            r[k + "util"] = g.util_gpu_pct
            r[k + "sm"] = g.sm_active_pct
            r[k + "dram"] = g.dram_bw_pct if g.dram_bw_pct is not None else g.util_mem_pct
            r[k + "clk"] = g.sm_clock_mhz
            r[k + "pw"] = g.power_w
            r[k + "temp"] = g.temp_c
            r[k + "thr"] = ",".join(g.throttle)
            r[k + "used"] = g.mem_used_bytes
            r[k + "total"] = g.mem_total_bytes
        r["procs"] = [(p.pid, p.gpu_index, p.sm_util_pct) for p in f.processes]
        tree = set(f.pinned.tree_pids) if f.pinned else set()
        r["foreign"] = [p.pid for p in f.processes if p.pid not in tree]
        r["tree"] = tree
        h = f.host
        r["psi"] = h.cpu_pressure_some_pct
        r["runq"] = h.run_queue
        pn = f.pinned
        if prev is not None and pn and prev.pinned:
            dt = f.time_wall_s - prev.time_wall_s
            r["invol_s"] = (pn.ctx_involuntary - prev.pinned.ctx_involuntary) / dt
            r["cpu"] = (pn.cpu_s - prev.pinned.cpu_s) / dt
            if pn.cpu_throttled_periods is not None and prev.pinned.cpu_throttled_periods is not None:
                dp = pn.cpu_periods - prev.pinned.cpu_periods
                r["thr_frac"] = (pn.cpu_throttled_periods - prev.pinned.cpu_throttled_periods) / max(dp, 1)
        calls = sum(l.count for l in f.launch)
        if calls:
            slow = sum(c for l in f.launch for b, c in l.buckets.items() if bucket_mid_ns(b) > 100_000)
            r["launch_calls"] = calls
            r["launch_slow_frac"] = slow / calls
            r["launch_share"] = sum(l.sum_ns for l in f.launch) / 1e9
        e = f.engine
        if e is not None:
            r["running"], r["waiting"], r["kv"] = e.requests_running, e.requests_waiting, e.kv_usage_ratio
            if pe is not None and e.time_wall_s != pe.time_wall_s:
                dt = e.time_wall_s - pe.time_wall_s
                if e.generation_tokens_total is not None and pe.generation_tokens_total is not None:
                    r["gen_s"] = (e.generation_tokens_total - pe.generation_tokens_total) / dt
                if e.preemptions_total is not None:
                    r["preempt"] = e.preemptions_total - (pe.preemptions_total or 0)
                if e.retracted_requests_total is not None:
                    r["preempt"] = r.get("preempt", 0) + e.retracted_requests_total - (pe.retracted_requests_total or 0)
                if e.spec_draft_tokens_total is not None and e.spec_draft_tokens_total > (pe.spec_draft_tokens_total or 0):
                    r["accept"] = (e.spec_accepted_tokens_total - pe.spec_accepted_tokens_total) / (
                        e.spec_draft_tokens_total - pe.spec_draft_tokens_total)
                if e.spec_accept_ratio is not None:
                    r["accept"] = e.spec_accept_ratio
                hp = {x.name: x for x in pe.histograms}
                for x in e.histograms:
                    if x.name in ("itl", "ttft", "tpot", "e2e"):
                        r[x.name + "_p99"] = hist_q(hp.get(x.name), x, 0.99)
                        r[x.name + "_mean"] = hist_mean(hp.get(x.name), x)
                r["scrape"] = True
                pe = e
                carry = {k: v for k, v in r.items() if k in ENG_KEYS}
            elif pe is None:
                pe = e
        for k, v in carry.items():
            r.setdefault(k, v)
        prev = f
        out.append(r)
    return out
