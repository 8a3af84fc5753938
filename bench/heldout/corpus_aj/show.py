"""Viewer: a trace's key readings per tick or per N seconds, as a user would look at them.

    python -m corpus_aj.show NAME [SECONDS]"""
from __future__ import annotations

import sys

from gputop.buckets import bucket_mid_ns


def _quantile(bounds, deltas, q):
    tot = sum(deltas)
    if tot <= 0:
        return None
    acc = 0.0
    for b, d in zip(list(bounds) + [bounds[-1] * 2], deltas):
        acc += d
        if acc >= q * tot:
            return b
    return bounds[-1] * 2


def _hist_delta(h0, h1):
    if h0 is None or h1 is None or h0.upper_bounds != h1.upper_bounds:
        return None
    cum0 = list(h0.cumulative) + [h0.count]
    cum1 = list(h1.cumulative) + [h1.count]
    per0 = [cum0[0]] + [b - a for a, b in zip(cum0, cum0[1:])]
    per1 = [cum1[0]] + [b - a for a, b in zip(cum1, cum1[1:])]
    return [b - a for a, b in zip(per0, per1)]


def rows(frames, every: float = 10.0):
    """Aggregated readings per ``every`` seconds: list of dicts."""
    out = []
    if not frames:
        return out
    t0 = frames[0].time_wall_s
    groups: dict[int, list] = {}
    for f in frames:
        groups.setdefault(int((f.time_wall_s - t0) // every), []).append(f)
    prev_last = None
    prev_inv = None
    for k in sorted(groups):
        fs = groups[k]
        first = prev_last or fs[0]
        last = fs[-1]
        n = len(fs[0].gpus)
        r = {"t": round(fs[0].time_wall_s - t0)}
        for g in range(n):
            gs = [f.gpus[g] for f in fs]
            avg = lambda attr: (sum(getattr(x, attr) for x in gs if getattr(x, attr) is not None) /
                                max(1, sum(1 for x in gs if getattr(x, attr) is not None))) if any(
                getattr(x, attr) is not None for x in gs) else None
            r[f"util{g}"] = avg("util_gpu_pct")
            r[f"sm{g}"] = avg("sm_active_pct")
            r[f"dram{g}"] = avg("dram_bw_pct")
            r[f"clk{g}"] = avg("sm_clock_mhz")
            r[f"pw{g}"] = avg("power_w")
            r[f"temp{g}"] = avg("temp_c")
            r[f"thr{g}"] = sorted({x for g_ in gs for x in g_.throttle})
            r[f"nproc{g}"] = max(sum(1 for p in f.processes if p.gpu_index == g) for f in fs)
        e0, e1 = first.engine, last.engine
        if e0 is not None and e1 is not None and e1.time_wall_s and e0.time_wall_s and e1.time_wall_s > e0.time_wall_s:
            dt = e1.time_wall_s - e0.time_wall_s
            d = lambda a: (getattr(e1, a) - getattr(e0, a)) if getattr(e1, a) is not None and getattr(e0, a) is not None else None
            r["tok_s"] = (d("generation_tokens_total") or 0) / dt
            r["prompt_s"] = (d("prompt_tokens_total") or 0) / dt if e1.prompt_tokens_total is not None else None
            r["preempt"] = (d("preemptions_total") or 0) + (d("retracted_requests_total") or 0)
            dr, da = d("spec_draft_tokens_total"), d("spec_accepted_tokens_total")
            r["accept"] = (da / dr) if dr else e1.spec_accept_ratio
            hs0 = {h.name: h for h in e0.histograms}
            hs1 = {h.name: h for h in e1.histograms}
            for name in ("itl", "ttft", "tpot"):
                dl = _hist_delta(hs0.get(name), hs1.get(name))
                if dl:
                    r[f"{name}_p50"] = _quantile(hs1[name].upper_bounds, dl, 0.5)
                    r[f"{name}_p99"] = _quantile(hs1[name].upper_bounds, dl, 0.99)
        if e1 is not None:
            r["run"] = e1.requests_running
            r["wait"] = e1.requests_waiting
            r["kv"] = e1.kv_usage_ratio
        h = last.host
        r["psi"] = h.cpu_pressure_some_pct
        r["rq"] = h.run_queue
        p0, p1 = first.pinned, last.pinned
        if p0 and p1:
            dt = max(1e-9, last.time_wall_s - first.time_wall_s)
            r["tree_cpu"] = (p1.cpu_s - p0.cpu_s) / dt if p1.cpu_s is not None and p0.cpu_s is not None else None
            r["inv_s"] = (p1.ctx_involuntary - p0.ctx_involuntary) / dt if p1.ctx_involuntary is not None else None
            if p1.cpu_throttled_periods is not None:
                r["thrott"] = p1.cpu_throttled_periods - (p0.cpu_throttled_periods or 0)
        lat = {}
        for f in fs:
            for lh in f.launch:
                acc = lat.setdefault(lh.api, {})
                for b, c in lh.buckets.items():
                    acc[b] = acc.get(b, 0) + c
        for api, acc in lat.items():
            tot = sum(acc.values())
            run = 0
            for b in sorted(acc):
                run += acc[b]
                if run >= 0.99 * tot:
                    r[f"p99us_{api}"] = bucket_mid_ns(b) / 1000
                    break
        out.append(r)
        prev_last = last
    return out


def fmt(r, gpus=(0,)):
    parts = [f"{r['t']:>4}s"]
    for g in gpus:
        f = lambda v, w=4, p=0: ("   -" if v is None else f"{v:{w}.{p}f}")
        parts.append(f"g{g} u{f(r.get(f'util{g}'))} sm{f(r.get(f'sm{g}'))} dr{f(r.get(f'dram{g}'))} "
                     f"{f(r.get(f'clk{g}'), 5)}MHz {f(r.get(f'pw{g}'), 4)}W {f(r.get(f'temp{g}'), 3)}C "
                     f"p{r.get(f'nproc{g}')} {','.join(r.get(f'thr{g}', []))}")
    for k in ("tok_s", "prompt_s", "run", "wait", "kv", "preempt", "accept", "itl_p50", "itl_p99", "ttft_p99",
              "psi", "rq", "tree_cpu", "inv_s", "thrott"):
        v = r.get(k)
        if v is not None:
            parts.append(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}")
    for k, v in r.items():
        if k.startswith("p99us_"):
            parts.append(f"{k[6:]}p99={v:.0f}us")
    return " ".join(parts)


def main():
    import corpus_aj
    name = sys.argv[1]
    every = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    for truth, frames in corpus_aj.traces(name):
        print(truth.name, truth.cause, truth.culprit_gpus,
              None if truth.window is None else (round(truth.window[0] - truth.start_wall_s),
                                                 round(truth.window[1] - truth.start_wall_s)))
        print(truth.note)
        gpus = tuple(sorted(set((0,) + (truth.culprit_gpus or ()) + ((truth.gpus - 1,) if truth.gpus > 1 else ()))))
        for r in rows(frames, every):
            print(fmt(r, gpus))


if __name__ == "__main__":
    main()
