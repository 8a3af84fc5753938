"""Pane 6: the host side: the whole machine, or the pinned tree (CPU per thread, context
switches, run queue).

A serving engine has one thread that launches every kernel; when it is preempted
the GPU idles between launches while GPU-Util still reads busy.  This pane shows
that "CPU core chaos" without eBPF.
"""

from __future__ import annotations

from gputop.model.host import host_view
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.render import (ALERT, BOLD, DIM, Row, clip, first_fitting, fit, fit_parts, na, pct,
                               plural, rate, row)


class HostPane(Pane):
    key = "6"
    title = "Host"
    definition = (
        "Host: with nothing pinned, the whole machine: CPU use, the kernel's CPU pressure "
        "(/proc/pressure/cpu, some avg10: share of time runnable tasks waited for a CPU), the "
        "run queue (processes runnable now) against the CPUs, context switches per second, "
        "the serving engine's process tree on the CPU (100% = one core; involuntary switches: "
        "the kernel preempted it) and the GPU processes using the most CPU. This is what the "
        "banner's host-contention evidence is read from. Pinned (p picks a tree): that tree's "
        "CPU, its busiest threads with their CPU%, voluntary context switches per second (the "
        "thread waited: I/O, locks, sleeps) and involuntary ones, the CPUs it may run on. "
        "Where the tree's cgroup has a CPU quota (cpu.max, or v1 cpu.cfs_quota_us; a container's "
        "CPU limit): the quota in cores and the share of the kernel's 100 ms CFS periods in which "
        "it ran out and the tree was held back (cpu.stat nr_throttled / nr_periods): a limit "
        "that throttles shows in no run queue or CPU pressure. From psutil, /proc and the "
        "cgroup files."
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        pinned = ctx.view.pinned
        if pinned is None:
            return self.host_rows(ctx, width, height)
        self.retitle(f"{self.key} {self.title} (pinned tree)")
        host = ctx.view.frame.host
        host_cpu = pct(host.cpu_pct) if host and host.cpu_pct is not None else "n/a"
        s = pinned.sample
        out = [fit(row((pinned.title, BOLD)), width)]
        if not s.root_pids:
            out.append(fit(row((s.waiting or "nothing pinned", ALERT)), width))
            return out
        recorded = ctx.view.frame.pinned is None  # pinned from a demo's or recording's frames
        cores = _ranges(s.cores) if s.cores else na("not in these frames" if recorded
                                                      else "not readable")
        out.append(fit_parts([(row(f"CPU {pct(pinned.cpu_pct)} (100% = 1 core)"), 0),
                              (row(f"  host {host_cpu}"), 1), (row(f"  cores {cores}"), 2)],
                             width))
        involuntary_style = ALERT if (pinned.involuntary_per_s or 0) > 1000 else None
        if pinned.voluntary_per_s is None and recorded:
            out.append(fit(row(("ctx switches/s " + na("not in these frames"), DIM)), width))
        else:
            out.append(fit_parts([
                (row(f"ctx switches/s: voluntary {rate(pinned.voluntary_per_s)}  "), 0),
                (row((f"involuntary {rate(pinned.involuntary_per_s)}", involuntary_style)), 0)],
                width))
        pressure = "n/a" if s.cpu_pressure_some_pct is None else f"{s.cpu_pressure_some_pct:.0f}%"
        queue = s.run_queue if s.run_queue is not None else "n/a"
        if s.cpu_pressure_some_pct is None and s.run_queue is None and host is not None:
            pressure = pct(host.cpu_pressure_some_pct)
            queue = host.run_queue if host.run_queue is not None else "n/a"
        out.append(fit(row(f"CPU pressure (some, 10 s) {pressure}   run queue {queue}"), width))
        if s.cpu_quota_cores is not None:
            out.append(quota_row(s.cpu_quota_cores, pinned.throttled_share, width))
        if s.listening_ports:
            out.append(fit(row((f"listening: {', '.join(map(str, s.listening_ports[:8]))}", DIM)),
                           width))
        out.append(row(("  tid    pid  thread            CPU%", DIM)))
        if not pinned.threads:
            why = "no threads in a demo's or recording's frames" if recorded \
                else "needs two ticks"
            out.append(fit(row(("  " + na(why), DIM)), width))
        for thread, cpu in pinned.threads[: max(0, height - len(out))]:
            out.append(row(f"{thread.tid:>6} {thread.pid:>6}  {clip(thread.name, 16):<16} {cpu:>5.0f}"))
        return out

    def host_rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        """Nothing pinned: the whole host, the engine's tree, the busiest GPU processes."""
        self.retitle(f"{self.key} {self.title}")
        h = host_view(ctx.view.frame, ctx.view.previous)
        s = h.sample
        if s is None:
            return [fit(row(("host " + na("no host reading in these frames"), DIM)), width)]
        busy = ALERT if (s.cpu_pct or 0) >= 95 else BOLD
        out = [fit_parts([(row("host CPU ", (pct(s.cpu_pct), busy)), 0),
                          (row(f" of {plural(s.cpus, 'CPU')}" if s.cpus else ""), 1)], width)]
        crowded = s.run_queue is not None and s.cpus and s.run_queue > s.cpus
        pressure = s.cpu_pressure_some_pct
        out.append(fit_parts([
            (row("CPU pressure (some, 10 s) ",
                 (pct(pressure) if pressure is not None else na("no /proc/pressure/cpu"),
                  ALERT if (pressure or 0) >= 20 else None)), 0),
            (row("   run queue ", (str(s.run_queue) if s.run_queue is not None else "n/a",
                                   ALERT if crowded else None)), 1)], width))
        switches = rate(h.switches_per_s) if h.switches_per_s is not None \
            else na(h.reasons.get("switches"))
        out.append(fit(row(f"context switches/s {switches}"), width))
        if h.engine_label:
            if h.engine_cpu_pct is None:
                out.append(fit(row(f"engine {h.engine_label}: CPU ",
                                   (na(h.reasons.get("engine")), DIM)), width))
            else:
                hot = ALERT if (h.engine_involuntary_per_s or 0) > 1000 else None
                out.append(fit_parts([
                    (row(f"engine {h.engine_label}: CPU {pct(h.engine_cpu_pct)}"), 0),
                    (row("  involuntary ", (f"{rate(h.engine_involuntary_per_s)}/s", hot)), 1)],
                    width))
            if h.engine_quota_cores is not None:
                out.append(quota_row(h.engine_quota_cores, h.engine_throttled_share, width))
        out.append(row(""))
        out.append(first_fitting([row(("GPU processes by CPU (100% = 1 core)", DIM)),
                                  row(("GPU processes by CPU", DIM))], width))
        if not h.busiest:
            out.append(fit(row(("  " + na(h.reasons.get("busiest")), DIM)), width))
        for r in h.busiest[: max(0, height - len(out) - 1)]:
            p = r.sample
            out.append(fit(row(f"{p.pid:>7} {clip(p.user or '?', 8):<8} {r.cpu_pct:>5.0f}%  "
                               f"{p.cmdline or p.name}"), width))
        out += [[]] * max(0, height - len(out) - 1)
        out.append(first_fitting([row(("p pins a process tree: every pane then follows it", DIM)),
                                  row(("p pins a process tree", DIM))], width))
        return out[:height]

    def provenance(self, ctx: Ctx) -> list[str]:
        pinned = ctx.view.pinned
        if pinned is None:
            return ["nothing pinned: the whole host, from psutil and /proc (cpu_percent, "
                    "/proc/pressure/cpu, procs_running and ctxt in /proc/stat); the engine's "
                    "process tree and the GPU processes from their /proc/PID/stat"]
        s = pinned.sample
        return [f"pattern: {s.pattern}" if s.pattern else "pinned by pid",
                f"roots: {', '.join(map(str, s.root_pids)) or 'none'}",
                f"tree: {', '.join(map(str, s.tree_pids)) or 'none'}",
                "thread CPU% from /proc/PID/task/TID/stat between two ticks"]


def quota_row(cores: float, share: float | None, width: int) -> Row:
    """A cgroup's CPU quota and the share of CFS periods it held the tree back in."""
    held = (pct(100.0 * share), ALERT if share >= 0.1 else None) if share is not None \
        else (na("needs two readings"), DIM)
    return fit_parts([(row(f"CPU quota {cores:g} cores: "), 0),
                      (row("held back in ", held, " of periods"), 1)], width)


def _ranges(cores: tuple[int, ...]) -> str:
    parts, start, last = [], cores[0], cores[0]
    for c in cores[1:] + (None,):
        if c is not None and c == last + 1:
            last = c
            continue
        parts.append(f"{start}-{last}" if last > start else str(start))
        if c is not None:
            start = last = c
    return ",".join(parts)
