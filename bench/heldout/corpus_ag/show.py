"""python -m bench.heldout.corpus_ag.show NAME [EVERY]: a compact table of one trace."""

from __future__ import annotations

import sys

from . import traces


def _hq(h, prev, q=0.99):
    """A quantile of the histogram's increase since prev (upper bound of the bucket)."""
    if h is None:
        return None
    pc = prev.cumulative if prev else (0,) * len(h.cumulative)
    n = h.count - (prev.count if prev else 0)
    if n <= 0:
        return None
    for b, c, p in zip(h.upper_bounds, h.cumulative, pc):
        if c - p >= q * n:
            return b
    return float("inf")


def main(argv=None):
    argv = argv if argv is not None else sys.argv[1:]
    name = argv[0]
    every = int(argv[1]) if len(argv) > 1 else 15
    for truth, frames in traces(name):
        print(f"{truth.name}: {truth.cause} culprit={truth.culprit_gpus} family={truth.family} engine={truth.engine} "
              f"{truth.gpus}x {truth.gpu_model}\n  {truth.note}")
        if truth.window:
            print(f"  window t+{truth.window[0] - truth.start_wall_s:.0f}..t+{truth.window[1] - truth.start_wall_s:.0f} s")
        print(f"{'t':>5} {'gpu util/sm/tens/dram% W C MHz reasons (per GPU)':<60} {'tok/s':>8} {'run':>4} {'wait':>5} {'kv':>5} "
              f"{'itl99':>6} {'ttft99':>6} {'pre':>4} {'cpu':>5} {'thr':>4} {'rq':>3} {'psi':>5} extra")
        prev = None
        for i, f in enumerate(frames):
            if i % every or prev is None:
                if prev is None:
                    prev = f
                continue
            e, pe = f.engine, prev.engine
            dt = f.time_wall_s - prev.time_wall_s
            g = " | ".join(f"{x.util_gpu_pct:.0f}/{x.sm_active_pct or 0:.0f}/{x.tensor_pct or 0:.0f}/{x.dram_bw_pct or 0:.0f} "
                           f"{x.power_w:.0f} {x.temp_c:.0f} {x.sm_clock_mhz:.0f}{'!' + ','.join(r[:5] for r in x.throttle) if x.throttle else ''}"
                           for x in f.gpus[:3]) + (" ..." if len(f.gpus) > 3 else "")
            tok = run = wait = kv = itl = ttft = pre = cpu = thr = extra = ""
            if e is not None and pe is not None:
                gen = (e.generation_tokens_total or 0) - (pe.generation_tokens_total or 0)
                if e.kind in ("trainer",) or e.generation_tokens_total == 0:
                    gen = (e.generation_tokens_total or 0) - (pe.generation_tokens_total or 0) or \
                          (e.prompt_tokens_total or 0) - (pe.prompt_tokens_total or 0)
                tok = f"{gen / dt:.0f}"
                run = f"{e.requests_running:.0f}" if e.requests_running is not None else ""
                wait = f"{e.requests_waiting:.0f}" if e.requests_waiting is not None else ""
                kv = f"{e.kv_usage_ratio:.2f}" if e.kv_usage_ratio is not None else ""
                hs = {h.name: h for h in e.histograms}
                phs = {h.name: h for h in pe.histograms}
                v = _hq(hs.get("itl") or hs.get("tpot"), phs.get("itl") or phs.get("tpot"))
                itl = f"{v:.3f}" if v else ""
                v = _hq(hs.get("ttft"), phs.get("ttft"))
                ttft = f"{v:.2f}" if v else ""
                p = (e.preemptions_total or e.retracted_requests_total or 0) - (pe.preemptions_total or pe.retracted_requests_total or 0)
                pre = f"{p:.0f}"
                if e.cpu_s is not None and pe.cpu_s is not None:
                    cpu = f"{(e.cpu_s - pe.cpu_s) / dt:.2f}"
                if e.cpu_throttled_periods is not None and pe.cpu_throttled_periods is not None:
                    thr = f"{(e.cpu_throttled_periods - pe.cpu_throttled_periods) / max(1, e.cpu_periods - pe.cpu_periods):.2f}"
                if e.spec_draft_tokens_total:
                    extra += f"acc={(e.spec_accepted_tokens_total - pe.spec_accepted_tokens_total) / max(1, e.spec_draft_tokens_total - pe.spec_draft_tokens_total):.2f} "
                if e.spec_accept_ratio is not None:
                    extra += f"acc={e.spec_accept_ratio:.2f} "
            if f.launch:
                lh = f.launch[0]
                extra += f"launch n={lh.count} max={lh.max_ns / 1000:.0f}us "
            procs = len(f.processes)
            extra += f"procs={procs}"
            h = f.host
            print(f"{f.time_wall_s - truth.start_wall_s:5.0f} {g:<60} {tok:>8} {run:>4} {wait:>5} {kv:>5} {itl:>6} {ttft:>6} {pre:>4} "
                  f"{cpu:>5} {thr:>4} {h.run_queue if h else '':>3} {h.cpu_pressure_some_pct if h and h.cpu_pressure_some_pct is not None else '':>5} {extra}")
            prev = f


if __name__ == "__main__":
    main()
