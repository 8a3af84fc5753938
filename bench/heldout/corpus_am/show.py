"""Print a trace's key readings per 10 s: python -m corpus_am.show NAME [seconds]."""
from __future__ import annotations

import sys

from corpus_am import traces


def hq(h, q):
    if h is None or not h.count:
        return None
    target = q * h.count
    for b, c in zip(h.upper_bounds, h.cumulative):
        if c >= target:
            return b
    return float("inf")


def delta_hist(a, b):
    from gputop.schema import EngineHistogram
    if a is None or b is None or a.upper_bounds != b.upper_bounds:
        return b
    return EngineHistogram(b.name, b.upper_bounds, tuple(y - x for x, y in zip(a.cumulative, b.cumulative)),
                           b.count - a.count, b.sum - a.sum)


def rows(truth, frames, every=10.0):
    """Per-bin summaries: dicts of the readings a user looks at."""
    out = []
    t0 = frames[0].time_wall_s
    bins = {}
    for f in frames:
        bins.setdefault(int((f.time_wall_s - t0) // every), []).append(f)
    prev_e = None
    for k in sorted(bins):
        fs = bins[k]
        g = lambda attr, i=None: [getattr(x, attr) for f in fs for j, x in enumerate(f.gpus)
                                  if getattr(x, attr) is not None and (i is None or j == i)]
        avg = lambda v: sum(v) / len(v) if v else None
        r = {"t": k * every, "util": avg(g("util_gpu_pct")), "sm": avg(g("sm_active_pct")),
             "dram": avg(g("dram_bw_pct")), "clk": avg(g("sm_clock_mhz")), "pw": avg(g("power_w")),
             "temp": avg(g("temp_c")), "thr": sorted({t for f in fs for x in f.gpus for t in x.throttle}),
             "psi": avg([f.host.cpu_pressure_some_pct for f in fs if f.host]),
             "nproc": max(len(f.processes) for f in fs)}
        r["util_per_gpu"] = [avg(g("util_gpu_pct", i)) for i in range(len(fs[0].gpus))]
        r["sm_per_gpu"] = [avg(g("sm_active_pct", i)) for i in range(len(fs[0].gpus))]
        r["clk_per_gpu"] = [avg(g("sm_clock_mhz", i)) for i in range(len(fs[0].gpus))]
        es = [f.engine for f in fs if f.engine is not None]
        if es:
            e = es[-1]
            r.update(run=e.requests_running, wait=e.requests_waiting, kv=e.kv_usage_ratio,
                     pre=(e.preemptions_total or 0) + (e.retracted_requests_total or 0))
            if prev_e is not None and e.time_wall_s and prev_e.time_wall_s and e.time_wall_s > prev_e.time_wall_s \
                    and e.generation_tokens_total is not None and prev_e.generation_tokens_total is not None:
                dt = e.time_wall_s - prev_e.time_wall_s
                r["tok_s"] = (e.generation_tokens_total - prev_e.generation_tokens_total) / dt
                hs = {h.name: h for h in e.histograms}
                hp = {h.name: h for h in prev_e.histograms}
                itl = delta_hist(hp.get("itl") or hp.get("tpot"), hs.get("itl") or hs.get("tpot"))
                r["itl_p50"], r["itl_p99"] = hq(itl, 0.5), hq(itl, 0.99)
                if e.spec_accepted_tokens_total is not None and prev_e.spec_draft_tokens_total is not None:
                    d = e.spec_draft_tokens_total - prev_e.spec_draft_tokens_total
                    r["acc"] = (e.spec_accepted_tokens_total - prev_e.spec_accepted_tokens_total) / d if d else None
                elif e.spec_accept_ratio is not None:
                    r["acc"] = e.spec_accept_ratio
            prev_e = e
        pn = [f.pinned for f in fs if f.pinned]
        if len(pn) >= 2:
            dt = fs[-1].time_wall_s - fs[0].time_wall_s or 1
            r["tree_cpu"] = (pn[-1].cpu_s - pn[0].cpu_s) / dt
            r["invol_s"] = (pn[-1].ctx_involuntary - pn[0].ctx_involuntary) / dt
            if pn[-1].cpu_throttled_periods is not None and pn[0].cpu_throttled_periods is not None:
                r["thr_per"] = pn[-1].cpu_throttled_periods - pn[0].cpu_throttled_periods
        ln = [h for f in fs for h in f.launch]
        if ln:
            from gputop.buckets import bucket_mid_ns
            cnt = sum(h.count for h in ln)
            allb = {}
            for h in ln:
                for b, c in h.buckets.items():
                    allb[b] = allb.get(b, 0) + c
            tot, acc = sum(allb.values()), 0
            for b in sorted(allb):
                acc += allb[b]
                if acc >= 0.99 * tot:
                    r["launch_p99_us"] = bucket_mid_ns(b) / 1000
                    break
        out.append(r)
    return out


def fmt(r):
    f = lambda k, d=0: "-" if r.get(k) is None else f"{r[k]:.{d}f}"
    s = (f"{r['t']:6.0f} util {f('util')} sm {f('sm')} dram {f('dram')} clk {f('clk')} pw {f('pw')} "
         f"T {f('temp')} psi {f('psi', 1)} thr {','.join(r['thr']) or '-'}")
    if "run" in r:
        s += (f" | run {f('run')} wait {f('wait')} kv {f('kv', 2)} pre {f('pre')} tok/s {f('tok_s')} "
              f"itl50 {r.get('itl_p50')} itl99 {r.get('itl_p99')} acc {f('acc', 2)}")
    if "tree_cpu" in r:
        s += f" | cpu {f('tree_cpu', 1)} invol/s {f('invol_s')} thrP {r.get('thr_per', '-')}"
    if "launch_p99_us" in r:
        s += f" | launch p99 {r['launch_p99_us']:.0f}us"
    if len(r["util_per_gpu"]) > 1:
        s += " | per-gpu util " + " ".join(f"{x:.0f}" for x in r["util_per_gpu"])
        s += " clk " + " ".join(f"{x:.0f}" for x in r["clk_per_gpu"])
    return s


def main():
    name = sys.argv[1]
    every = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    for truth, frames in traces(name):
        print(truth)
        w = truth.window
        t0 = frames[0].time_wall_s
        for r in rows(truth, frames, every):
            mark = "*" if w and w[0] - t0 <= r["t"] + every and r["t"] <= w[1] - t0 else " "
            print(mark, fmt(r))


if __name__ == "__main__":
    main()
