"""Print a trace's key readings per N seconds:  python -m corpus_ah.show NAME [SECONDS]"""
from __future__ import annotations

import sys

from gputop.buckets import bucket_bounds_ns


def pct_from_hist(h0, h1, q):
    if h1 is None:
        return None
    base = h0.cumulative if h0 is not None and h0.upper_bounds == h1.upper_bounds else [0] * len(h1.cumulative)
    n0 = h0.count if h0 is not None and h0.upper_bounds == h1.upper_bounds else 0
    total = h1.count - n0
    if total <= 0:
        return None
    target = q * total
    prev = 0.0
    for b, c1, c0 in zip(h1.upper_bounds, h1.cumulative, base):
        if c1 - c0 >= target:
            return b
    return h1.upper_bounds[-1] * 2


def _hist(e, name):
    if e is None:
        return None
    for h in e.histograms:
        if h.name == name:
            return h
    return None


def windows(frames, seconds=10.0):
    """Rows of key readings per window: what a user looking at the screen would see."""
    rows = []
    t0 = frames[0].time_wall_s
    i = 0
    last_e = None
    while i < len(frames):
        j = i
        while j < len(frames) and frames[j].time_wall_s < frames[i].time_wall_s + seconds:
            j += 1
        chunk = frames[i:j]
        ng = len(chunk[0].gpus)
        row = {"t": round(chunk[0].time_wall_s - t0)}
        for k in range(ng):
            g = [f.gpus[k] for f in chunk]
            avg = lambda attr: (sum(getattr(x, attr) or 0 for x in g) / len(g)) if getattr(g[0], attr) is not None else None
            row[f"util{k}"] = avg("util_gpu_pct")
            row[f"sm{k}"] = avg("sm_active_pct")
            row[f"dram{k}"] = avg("dram_bw_pct")
            row[f"tensor{k}"] = avg("tensor_pct")
            row[f"clk{k}"] = avg("sm_clock_mhz")
            row[f"pw{k}"] = avg("power_w")
            row[f"temp{k}"] = avg("temp_c")
            row[f"thr{k}"] = ",".join(sorted({r for x in g for r in x.throttle}))
            row[f"nproc{k}"] = max(sum(1 for p in f.processes if p.gpu_index == k) for f in chunk)
        es = [f.engine for f in chunk if f.engine is not None]
        if es:
            e = es[-1]
            prev = last_e if last_e is not None and last_e.url == e.url and \
                (e.generation_tokens_total or 0) >= (last_e.generation_tokens_total or 0) else None
            if prev is None and len(es) > 1:
                prev = es[0]
            if prev is not None and e.time_wall_s and prev.time_wall_s and e.time_wall_s > prev.time_wall_s:
                dt = e.time_wall_s - prev.time_wall_s
                d = lambda a: ((getattr(e, a) or 0) - (getattr(prev, a) or 0))
                row["gen_tps"] = d("generation_tokens_total") / dt
                row["prompt_tps"] = d("prompt_tokens_total") / dt if e.prompt_tokens_total is not None else None
                dg = d("generation_tokens_total")
                if e.decode_seconds_total is not None and dg > 0 and e.kind == "llamacpp":
                    row["s_per_tok"] = d("decode_seconds_total") / dg
                row["preempt"] = d("preemptions_total") + d("retracted_requests_total")
                row["itl_p50"] = pct_from_hist(_hist(prev, "itl"), _hist(e, "itl"), 0.5)
                row["itl_p99"] = pct_from_hist(_hist(prev, "itl"), _hist(e, "itl"), 0.99)
                hi0, hi1 = _hist(prev, "itl"), _hist(e, "itl")
                if hi0 is not None and hi1 is not None and hi1.count > hi0.count:
                    row["itl_mean"] = (hi1.sum - hi0.sum) / (hi1.count - hi0.count)
                row["ttft_p99"] = pct_from_hist(_hist(prev, "ttft"), _hist(e, "ttft"), 0.99)
                row["tpot_p50"] = pct_from_hist(_hist(prev, "tpot"), _hist(e, "tpot"), 0.5)
                if e.spec_draft_tokens_total:
                    dd = d("spec_draft_tokens_total")
                    row["accept"] = d("spec_accepted_tokens_total") / dd if dd > 0 else None
                elif e.spec_accept_ratio is not None:
                    row["accept"] = e.spec_accept_ratio
            row["running"] = e.requests_running
            row["waiting"] = e.requests_waiting
            row["kv"] = e.kv_usage_ratio
            row["thr_periods"] = e.cpu_throttled_periods
            last_e = e
        h = [f.host for f in chunk]
        row["cpu"] = sum(x.cpu_pct or 0 for x in h) / len(h)
        row["psi"] = sum(x.cpu_pressure_some_pct or 0 for x in h) / len(h)
        row["runq"] = sum(x.run_queue or 0 for x in h) / len(h)
        lat = []
        for f in chunk:
            for lh in f.launch:
                for b, c in lh.buckets.items():
                    lat += [(bucket_bounds_ns(b)[1] / 1000, c)]
        if lat:
            lat.sort()
            tot = sum(c for _, c in lat)
            acc = 0
            for v, c in lat:
                acc += c
                if acc >= 0.99 * tot:
                    row["launch_p99_us"] = v
                    break
            row["offcpu"] = sum(f.host.offcpu_switches or 0 for f in chunk)
        pins = [f.pinned for f in chunk if f.pinned is not None]
        if len(pins) > 1:
            row["pin_invol_ps"] = (pins[-1].ctx_involuntary - pins[0].ctx_involuntary) / max(1e-9, chunk[-1].time_wall_s - chunk[0].time_wall_s)
        rows.append(row)
        i = j
    return rows


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def main(argv):
    import corpus_ah
    name = argv[1]
    sec = float(argv[2]) if len(argv) > 2 else 10.0
    for truth, frames in corpus_ah.traces(name):
        print(truth)
        rows = windows(frames, sec)
        keys = [k for k in rows[0]]
        for r in rows[1:]:
            for k in r:
                if k not in keys:
                    keys.append(k)
        wanted = [k for k in keys if not k.startswith(("pw", "nproc", "temp")) or k.endswith("0")]
        print(" ".join(f"{k:>9}" for k in wanted))
        for r in rows:
            print(" ".join(f"{fmt(r.get(k)):>9}" for k in wanted))


if __name__ == "__main__":
    main(sys.argv)
