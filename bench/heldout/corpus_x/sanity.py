"""The README's sanity table: each trace's healthy part against its window (healthy traces:
first half against second half), read back from the frames as gputop would see them."""

from __future__ import annotations

import sys


def _q(hist0, hist1, q):
    if hist0 is None or hist1 is None:
        return None
    d = [b - a for a, b in zip(hist0.cumulative, hist1.cumulative)]
    n = hist1.count - hist0.count
    if n <= 0:
        return None
    target = q * n
    lo = 0.0
    for ub, c in zip(hist1.upper_bounds, d):
        if c >= target:
            return ub
        lo = ub
    return hist1.upper_bounds[-1]


def _span(frames, t0, t1, culprit):
    fs = [f for f in frames if t0 <= f.time_wall_s <= t1]
    if not fs:
        return None
    out = {}
    gi = culprit if culprit is not None else 0

    def mean(vals):
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None
    out["util"] = mean([f.gpus[gi].util_gpu_pct for f in fs])
    out["sm"] = mean([f.gpus[gi].sm_active_pct for f in fs])
    out["dram"] = mean([f.gpus[gi].dram_bw_pct for f in fs])
    out["memu"] = mean([f.gpus[gi].util_mem_pct for f in fs])
    out["clk"] = mean([f.gpus[gi].sm_clock_mhz for f in fs])
    es = [f.engine for f in fs if f.engine is not None and f.engine.generation_tokens_total
          is not None]
    if len(es) >= 2 and es[-1].generation_tokens_total >= es[0].generation_tokens_total:
        out["rate"] = ((es[-1].generation_tokens_total - es[0].generation_tokens_total)
                       / max(1e-6, es[-1].time_wall_s - es[0].time_wall_s))
        h0 = {h.name: h for h in es[0].histograms}
        h1 = {h.name: h for h in es[-1].histograms}
        out["itl99"] = _q(h0.get("itl"), h1.get("itl"), 0.99)
        out["ttft99"] = _q(h0.get("ttft"), h1.get("ttft"), 0.99)
    return out


def row(truth, frames):
    s0 = frames[0].time_wall_s
    culprit = truth.culprit_gpus[0] if truth.culprit_gpus else None
    if truth.window:
        a = _span(frames, s0 + 20, truth.window[0] - 2, culprit)
        b = _span(frames, truth.window[0], truth.window[1], culprit)
    else:
        mid = (frames[0].time_wall_s + frames[-1].time_wall_s) / 2
        a = _span(frames, s0 + 20, mid, culprit)
        b = _span(frames, mid, frames[-1].time_wall_s, culprit)

    def f(key, fmt="{:.0f}", scale=1.0):
        va, vb = (a or {}).get(key), (b or {}).get(key)
        if va is None and vb is None:
            return "n/a"
        g = lambda v: "n/a" if v is None else fmt.format(v * scale)  # noqa: E731
        return f"{g(va)} -> {g(vb)}"
    dram = f("dram") if (a or {}).get("dram") is not None else f("memu") + " (mem util)"
    win = (f"{truth.window[0] - s0 + truth.tick_s:.0f}-{truth.window[1] - s0 + truth.tick_s:.0f}"
           if truth.window else "-")
    return (f"| {truth.name} | {truth.cause or 'healthy'} | {truth.gpus}x {truth.gpu_model} | "
            f"{win} | {f('rate')} | {f('util')} | {f('sm')} | {dram} | {f('clk')} | "
            f"{f('itl99', '{:.0f}', 1000)} | {f('ttft99', '{:.0f}', 1000)} |")


HEADER = ("| trace | cause | GPUs | window (s from start) | work/s | GPU-Util % | SM % | DRAM % | "
          "clock MHz | ITL p99 ms | TTFT p99 ms |\n|---|---|---|---|---|---|---|---|---|---|---|")


def main():
    sys.path.insert(0, "bench/heldout")
    import corpus_x
    print(HEADER)
    for truth, frames in corpus_x.traces(sys.argv[1] if len(sys.argv) > 1 else None):
        print(row(truth, frames))


if __name__ == "__main__":
    main()
