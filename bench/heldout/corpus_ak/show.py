"""Print a trace's key readings every N seconds: python -m corpus_ak.show NAME [step_s]."""
from __future__ import annotations
import sys

import corpus_ak


def pct(h0, h1, q):
    """A quantile of a histogram's increments between two readings (bucket upper bound)."""
    if h0 is None or h1 is None:
        return None
    n = h1.count - h0.count
    if n <= 0:
        return None
    want = q * n
    for ub, c1, c0 in zip(h1.upper_bounds, h1.cumulative, h0.cumulative if len(h0.cumulative) == len(h1.cumulative) else [0] * len(h1.cumulative)):
        if c1 - c0 >= want:
            return ub
    return float("inf")


def hist(e, name):
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def rows(frames, step=10.0):
    """Key readings per `step` seconds: mean over frames; engine rates over the span."""
    out = []
    t0 = frames[0].time_wall_s
    i = 0
    while i < len(frames):
        j = i
        while j < len(frames) and frames[j].time_wall_s < frames[i].time_wall_s + step:
            j += 1
        fs = frames[i:j]
        g = lambda attr: [getattr(x, attr) for f in fs for x in f.gpus if getattr(x, attr) is not None]
        mean = lambda v: sum(v) / len(v) if v else None
        es = [f.engine for f in fs if f.engine is not None]
        r = dict(t=round(fs[0].time_wall_s - t0), util=mean(g("util_gpu_pct")), sm=mean(g("sm_active_pct")),
                 dram=mean(g("dram_bw_pct")), memutil=mean(g("util_mem_pct")), tensor=mean(g("tensor_pct")),
                 clk=min(g("sm_clock_mhz") or [0]), power=mean(g("power_w")), temp=max(g("temp_c") or [0]),
                 thr=sorted({r for f in fs for x in f.gpus for r in x.throttle}),
                 psi=mean([f.host.cpu_pressure_some_pct for f in fs if f.host]), rq=mean([f.host.run_queue for f in fs if f.host]))
        per = {}
        for f in fs:
            for x in f.gpus:
                per.setdefault(x.index, []).append((x.util_gpu_pct, x.sm_active_pct, x.sm_clock_mhz))
        r["per_gpu"] = {k: tuple(round(sum(a[n] or 0 for a in v) / len(v)) for n in range(3)) for k, v in per.items()}
        if len(es) >= 2 and es[-1].time_wall_s != es[0].time_wall_s:
            a, b = es[0], es[-1]
            dt = (b.time_wall_s - a.time_wall_s) or 1
            d = lambda k: (getattr(b, k) - getattr(a, k)) / dt if getattr(a, k) is not None and getattr(b, k) is not None else None
            r.update(gen=d("generation_tokens_total"), prompt=d("prompt_tokens_total"), preempt=(d("preemptions_total") if b.preemptions_total is not None else d("retracted_requests_total")),
                     itl50=pct(hist(a, "itl"), hist(b, "itl"), 0.5), itl99=pct(hist(a, "itl"), hist(b, "itl"), 0.99),
                     ttft99=pct(hist(a, "ttft"), hist(b, "ttft"), 0.99), tpot50=pct(hist(a, "tpot"), hist(b, "tpot"), 0.5))
            if b.spec_draft_tokens_total and a.spec_draft_tokens_total is not None and b.spec_draft_tokens_total > a.spec_draft_tokens_total:
                r["accept"] = (b.spec_accepted_tokens_total - a.spec_accepted_tokens_total) / (b.spec_draft_tokens_total - a.spec_draft_tokens_total)
            elif b.spec_accept_ratio is not None:
                r["accept"] = b.spec_accept_ratio
            if b.cpu_throttled_periods is not None and a.cpu_periods is not None and b.cpu_periods > a.cpu_periods:
                r["thrott"] = (b.cpu_throttled_periods - a.cpu_throttled_periods) / (b.cpu_periods - a.cpu_periods)
            r["inv"] = d("ctx_involuntary")
        if es:
            r.update(run=mean([e.requests_running for e in es if e.requests_running is not None]),
                     wait=mean([e.requests_waiting for e in es if e.requests_waiting is not None]),
                     kv=mean([e.kv_usage_ratio for e in es if e.kv_usage_ratio is not None]))
        ls = [h for f in fs for h in f.launch]
        if ls:
            tot = sum(h.count for h in ls)
            from gputop.buckets import bucket_bounds_ns
            merged = {}
            for h in ls:
                for k, v in h.buckets.items():
                    merged[k] = merged.get(k, 0) + v
            acc = 0
            for k in sorted(merged):
                acc += merged[k]
                if acc >= 0.99 * tot:
                    r["launch99_us"] = bucket_bounds_ns(k)[1] / 1000
                    break
        out.append(r)
        i = j
    return out


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def main():
    name = sys.argv[1]
    step = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    for truth, frames in corpus_ak.traces(name):
        print(truth.name, truth.cause, truth.culprit_gpus,
              truth.window and (round(truth.window[0] - truth.start_wall_s), round(truth.window[1] - truth.start_wall_s)))
        keys = ["t", "util", "sm", "dram", "memutil", "tensor", "clk", "power", "temp", "psi", "rq", "gen", "prompt", "itl50", "itl99", "ttft99",
                "run", "wait", "kv", "preempt", "accept", "thrott", "inv", "launch99_us", "thr"]
        print(" ".join(f"{k:>7}" for k in keys))
        for r in rows(frames, step):
            print(" ".join(f"{fmt(r.get(k)):>7}" for k in keys), r["per_gpu"] if len(r["per_gpu"]) > 1 else "")


if __name__ == "__main__":
    main()
