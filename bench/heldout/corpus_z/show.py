"""Print a trace's frames as a compact table (every Nth tick): python -m
bench.heldout.corpus_z.show NAME [EVERY].  A viewer for checking the simulation; it
derives interval rates and histogram quantiles the plain way, nothing more."""

from __future__ import annotations

import sys

from . import traces


def _q(prev, cur, q):
    if prev is None or cur is None:
        return None
    d = [c - p for c, p in zip(cur.cumulative, prev.cumulative)]
    n = cur.count - prev.count
    if n <= 0:
        return None
    for b, c in zip(cur.upper_bounds, d):
        if c >= q * n:
            return b
    return float("inf")


def main(argv):
    name = argv[1]
    every = int(argv[2]) if len(argv) > 2 else 10
    for truth, frames in traces(name):
        print(truth)
        prev = None
        for i, f in enumerate(frames):
            if prev is not None and i % every == 0:
                dt = f.time_wall_s - prev.time_wall_s
                g = f.gpus
                e, pe = f.engine, prev.engine
                row = [f"{f.time_wall_s - truth.start_wall_s:6.0f}"]
                row.append("u=" + "/".join(f"{x.util_gpu_pct:.0f}" for x in g))
                row.append("sm=" + "/".join("-" if x.sm_active_pct is None else f"{x.sm_active_pct:.0f}" for x in g))
                row.append("tc=" + "/".join("-" if x.tensor_pct is None else f"{x.tensor_pct:.0f}" for x in g))
                row.append("dr=" + "/".join("-" if x.dram_bw_pct is None else f"{x.dram_bw_pct:.0f}" for x in g))
                row.append("W=" + "/".join(f"{x.power_w:.0f}" for x in g[:4]))
                row.append("clk=" + "/".join(f"{x.sm_clock_mhz:.0f}" for x in g[:8]))
                row.append("T=" + "/".join(f"{x.temp_c:.0f}" for x in g[:8]))
                thr = {r for x in g for r in x.throttle}
                if thr:
                    row.append("thr=" + ",".join(sorted(thr)))
                if e is not None and pe is not None and e.kind == pe.kind and \
                        e.generation_tokens_total is not None and pe.generation_tokens_total is not None:
                    row.append(f"gen/s={(e.generation_tokens_total - pe.generation_tokens_total) / dt:.0f}")
                    if e.prompt_tokens_total is not None and pe.prompt_tokens_total is not None:
                        row.append(f"pr/s={(e.prompt_tokens_total - pe.prompt_tokens_total) / dt:.0f}")
                    if e.requests_running is not None:
                        row.append(f"run={e.requests_running:.0f} wait={e.requests_waiting:.0f}")
                    if e.kv_usage_ratio is not None:
                        row.append(f"kv={e.kv_usage_ratio:.2f}")
                    hp = {h.name: h for h in pe.histograms}
                    for h in e.histograms:
                        if h.name in ("itl", "ttft"):
                            row.append(f"{h.name}50/99={_q(hp.get(h.name), h, .5)}/{_q(hp.get(h.name), h, .99)}")
                    for k in ("preemptions_total", "retracted_requests_total"):
                        a, b = getattr(e, k), getattr(pe, k)
                        if a is not None and b is not None and a - b:
                            row.append(f"{k[:7]}+{a - b:.0f}")
                    if e.spec_accepted_tokens_total is not None and pe.spec_draft_tokens_total is not None:
                        dd = e.spec_draft_tokens_total - pe.spec_draft_tokens_total
                        if dd > 0:
                            row.append(f"acc={(e.spec_accepted_tokens_total - pe.spec_accepted_tokens_total) / dd:.2f}")
                    if e.spec_accept_ratio is not None:
                        row.append(f"sglacc={e.spec_accept_ratio:.2f}")
                if f.host:
                    row.append(f"psi={f.host.cpu_pressure_some_pct} rq={f.host.run_queue}")
                if f.pinned and f.pinned.cpu_throttled_periods is not None and prev.pinned:
                    row.append(f"thrP+{f.pinned.cpu_throttled_periods - prev.pinned.cpu_throttled_periods}")
                if f.launch:
                    l = max(f.launch, key=lambda x: x.max_ns)
                    row.append(f"L:{l.api}:{l.count} max={l.max_ns / 1e6:.1f}ms off={f.host.offcpu_switches}")
                if len(f.processes) > len(g):
                    row.append("procs=" + ",".join(f"{p.gpu_index}:{p.name}:{p.sm_util_pct:.0f}" for p in f.processes))
                print(" ".join(row))
            if i % every == 0 or prev is None:
                prev = f


if __name__ == "__main__":
    main(sys.argv)
