"""Print the readings a user would look at: python -m corpus_ar.show NAME [every_s]"""
from __future__ import annotations

import sys

from corpus_ar import traces
from corpus_ar.sanity import interval_hist, launch_tail_share


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    name = argv[0]
    every = float(argv[1]) if len(argv) > 1 else 10.0
    for truth, frames in traces(name):
        print(f"{truth.name}: {truth.cause} culprit={truth.culprit_gpus} engine={truth.engine} "
              f"{truth.gpus}x {truth.gpu_model} tick={truth.tick_s}s")
        if truth.window:
            print(f"  window {truth.window[0] - truth.start_wall_s:.0f}-{truth.window[1] - truth.start_wall_s:.0f} s")
        print(f"  {truth.note}")
        print("   t_s  util  sm%  dram% tens%  clk   W    C  thr      | run wait  kv   itl_ms p99  ttft  tok/s prm/s"
              " pre | psi  rq  invol/s thr/s | launch>20us | procs")
        last = None
        prev = frames[0]
        for f in frames:
            if last is not None and f.time_wall_s - last < every:
                continue
            t = f.time_wall_s - truth.start_wall_s
            gs = f.gpus
            def avg(attr):
                vals = [getattr(g, attr) for g in gs if getattr(g, attr) is not None]
                return sum(vals) / len(vals) if vals else None
            def fmt(v, w=5, d=0):
                return f"{v:{w}.{d}f}" if v is not None else " " * (w - 1) + "-"
            thr = ",".join(sorted({r for g in gs for r in g.throttle}))[:8]
            e = f.engine
            eng = ""
            if e is not None and prev.engine is not None and e.time_wall_s != prev.engine.time_wall_s:
                dt = e.time_wall_s - prev.engine.time_wall_s
                im, ip = interval_hist(prev, f, "itl")
                tm, _ = interval_hist(prev, f, "ttft")
                gen = ((e.generation_tokens_total or 0) - (prev.engine.generation_tokens_total or 0)) / dt
                pr = ((e.prompt_tokens_total or 0) - (prev.engine.prompt_tokens_total or 0)) / dt \
                    if e.prompt_tokens_total is not None else None
                pre = (e.preemptions_total or 0) + (e.retracted_requests_total or 0)
                eng = (f"{fmt(e.requests_running, 4)} {fmt(e.requests_waiting, 4)} {fmt(e.kv_usage_ratio, 5, 2)} "
                       f"{fmt(im * 1e3 if im else None, 6, 1)} {fmt(ip * 1e3 if ip else None, 5)} "
                       f"{fmt(tm, 5, 2)} {fmt(gen, 6)} {fmt(pr, 5)} {pre:4.0f}")
                if e.spec_draft_tokens_total:
                    eng += f" acc={e.spec_accepted_tokens_total / e.spec_draft_tokens_total:.2f}"
                if e.spec_accept_ratio is not None:
                    eng += f" acc={e.spec_accept_ratio:.2f}"
            elif e is not None and e.kind == "trainer":
                eng = f"{e.work_unit or 'steps'}={e.generation_tokens_total or e.requests_finished_total:.0f}"
            p = f.pinned
            inv = thrp = None
            if prev.pinned and f.time_wall_s > prev.time_wall_s:
                dt = f.time_wall_s - prev.time_wall_s
                inv = (p.ctx_involuntary - prev.pinned.ctx_involuntary) / dt
                if p.cpu_throttled_periods is not None and prev.pinned.cpu_throttled_periods is not None:
                    thrp = (p.cpu_throttled_periods - prev.pinned.cpu_throttled_periods) / dt
            lt = launch_tail_share([f]) if f.launch else None
            tree = set(p.tree_pids)
            procs = " ".join(f"{pp.name}:{pp.pid}{'' if pp.pid in tree else '*'}@{pp.gpu_index}/{pp.sm_util_pct:.0f}%"
                             for pp in f.processes)[:90]
            print(f"{t:6.0f} {fmt(avg('util_gpu_pct'))} {fmt(avg('sm_active_pct'))} {fmt(avg('dram_bw_pct') or avg('util_mem_pct'))}"
                  f" {fmt(avg('tensor_pct'))} {fmt(avg('sm_clock_mhz'))} {fmt(avg('power_w'), 4)} {fmt(avg('temp_c'), 3)} {thr:8s} |"
                  f" {eng:58s} | {fmt(f.host.cpu_pressure_some_pct, 4)} {f.host.run_queue:3d} {fmt(inv, 6)} {fmt(thrp, 4)}"
                  f" | {fmt(lt * 100 if lt is not None else None, 5, 1)}% | {procs}")
            if len(gs) > 1 and truth.culprit_gpus:
                print("        per GPU: " + " ".join(f"{g.index}:u{g.util_gpu_pct:.0f}/sm{(g.sm_active_pct or 0):.0f}/"
                                                  f"{g.sm_clock_mhz:.0f}MHz/{g.temp_c:.0f}C" for g in gs))
            last = f.time_wall_s
            prev = f
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
