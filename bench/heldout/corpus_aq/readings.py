"""What a user reads off frames: per-frame series derived only from the frames."""
from __future__ import annotations

from gputop.buckets import bucket_mid_ns


def _hist(e, name):
    for h in e.histograms:
        if h.name == name:
            return h
    return None


def series(frames):
    """A list of dicts, one per frame, of the readings sanity.py and show.py use."""
    out = []
    prev_e = None
    prev_f = None
    last = {}
    for f in frames:
        r = {"t": f.time_wall_s}
        gs = f.gpus
        r["util"] = [g.util_gpu_pct for g in gs]
        r["sm"] = [g.sm_active_pct for g in gs]
        r["dram"] = [g.dram_bw_pct if g.dram_bw_pct is not None else g.util_mem_pct for g in gs]
        r["tensor"] = [g.tensor_pct for g in gs]
        r["clock"] = [g.sm_clock_mhz for g in gs]
        r["power"] = [g.power_w for g in gs]
        r["temp"] = [g.temp_c for g in gs]
        r["throttle"] = [g.throttle for g in gs]
        r["mem_ok"] = all(g.mem_used_bytes is None or g.mem_used_bytes <= g.mem_total_bytes for g in gs)
        tree = set(f.pinned.tree_pids) if f.pinned else set()
        r["foreign"] = sorted({p.gpu_index for p in f.processes if p.pid not in tree})
        r["psi"] = f.host.cpu_pressure_some_pct if f.host else None
        r["rq"] = f.host.run_queue if f.host else None
        r["host_cpu"] = f.host.cpu_pct if f.host else None
        dt = (f.time_wall_s - prev_f.time_wall_s) if prev_f else None
        p = f.pinned
        if prev_f is not None and p is not None and prev_f.pinned is not None:
            pp = prev_f.pinned
            r["invol_s"] = (p.ctx_involuntary - pp.ctx_involuntary) / dt
            r["tree_cpu"] = (p.cpu_s - pp.cpu_s) / dt
            r["thr_frac"] = ((p.cpu_throttled_periods - pp.cpu_throttled_periods) /
                             max(1, p.cpu_periods - pp.cpu_periods)) if p.cpu_periods is not None \
                and pp.cpu_periods is not None else None
        ln = [h for h in f.launch if h.api == "cudaLaunchKernel"]
        if ln and dt:
            h = ln[0]
            r["launch_share"] = h.sum_ns / 1e9 / dt
            r["launch_mean_us"] = h.sum_ns / max(1, h.count) / 1e3
            r["launch_max_us"] = h.max_ns / 1e3
            slow = sum(c for idx, c in h.buckets.items() if bucket_mid_ns(idx) > 100_000)
            r["launch_slow_frac"] = slow / max(1, h.count)
            acc = 0
            for idx in sorted(h.buckets):
                acc += h.buckets[idx]
                if acc >= 0.99 * h.count:
                    r["launch_p99_us"] = bucket_mid_ns(idx) / 1e3
                    break
        e = f.engine
        if e is not None and prev_e is not None and e.time_wall_s != prev_e.time_wall_s:
            de = e.time_wall_s - prev_e.time_wall_s
            def d(a):
                x, y = getattr(e, a), getattr(prev_e, a)
                return None if x is None or y is None else x - y
            g = d("generation_tokens_total")
            last = {"gen_s": None if g is None else g / de}
            pt = d("prompt_tokens_total")
            last["prompt_s"] = None if pt is None else pt / de
            for hn in ("itl", "ttft", "tpot", "e2e"):
                a, b = _hist(e, hn), _hist(prev_e, hn)
                if a and b and a.count > b.count:
                    last[hn] = (a.sum - b.sum) / (a.count - b.count)
            last["preempt"] = (d("preemptions_total") or 0) + (d("retracted_requests_total") or 0)
            if e.spec_draft_tokens_total is not None and d("spec_draft_tokens_total"):
                last["accept"] = d("spec_accepted_tokens_total") / d("spec_draft_tokens_total")
            elif e.spec_accept_ratio is not None:
                last["accept"] = e.spec_accept_ratio
        if e is not None:
            if prev_e is None or e.time_wall_s != prev_e.time_wall_s:
                pass
            r.update(last)
            r["kv"] = e.kv_usage_ratio
            r["running"] = e.requests_running
            r["waiting"] = e.requests_waiting
            r["url"] = e.url
            r["epids"] = e.pids
            prev_e = e
        r["ebpf"] = "ebpf" in f.sources
        r["tree"] = tree
        prev_f = f
        out.append(r)
    return out
