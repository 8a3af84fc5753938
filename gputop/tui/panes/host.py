"""Pane 6: the host side of the pinned tree: CPU per thread, context switches, run queue.

A serving engine has one thread that launches every kernel; when it is preempted
the GPU idles between launches while GPU-Util still reads busy.  This pane shows
that "CPU core chaos" without eBPF.
"""

from __future__ import annotations

from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.render import ALERT, BOLD, DIM, Row, na, pct, rate, row


class HostPane(Pane):
    key = "6"
    title = "Host (pinned tree)"
    definition = (
        "Host: for the pinned process tree (p picks it), the CPU it used over the last tick "
        "(100% = one core), the busiest threads with their CPU%, voluntary context switches "
        "per second (the thread waited: I/O, locks, sleeps) and involuntary ones (the kernel "
        "preempted it: CPU contention), the CPUs it may run on, the kernel's CPU pressure "
        "(/proc/pressure/cpu, some avg10: share of time runnable tasks waited for a CPU) and "
        "the run queue (processes runnable now). From psutil and /proc."
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        pinned = ctx.view.pinned
        host = ctx.view.frame.host
        host_cpu = pct(host.cpu_pct) if host and host.cpu_pct is not None else "n/a"
        if pinned is None:
            return [row(f"host CPU {host_cpu}"),
                    row(("press p to pin a process: every pane then follows its tree", DIM))]
        s = pinned.sample
        out = [row((pinned.title[:width], BOLD))]
        if not s.root_pids:
            out.append(row((s.waiting or "nothing pinned", ALERT)))
            return out
        cores = _ranges(s.cores) if s.cores else "n/a"
        out.append(row(f"CPU {pct(pinned.cpu_pct)} (100% = 1 core)  host {host_cpu}  cores {cores}"))
        involuntary_style = ALERT if (pinned.involuntary_per_s or 0) > 1000 else None
        out.append(row(f"ctx switches/s: voluntary {rate(pinned.voluntary_per_s)}  ",
                       (f"involuntary {rate(pinned.involuntary_per_s)}", involuntary_style)))
        pressure = "n/a" if s.cpu_pressure_some_pct is None else f"{s.cpu_pressure_some_pct:.0f}%"
        out.append(row(f"CPU pressure (some, 10 s) {pressure}   run queue "
                       f"{s.run_queue if s.run_queue is not None else 'n/a'}"))
        if s.listening_ports:
            out.append(row((f"listening: {', '.join(map(str, s.listening_ports[:8]))}", DIM)))
        out.append(row(("  tid    pid  thread            CPU%", DIM)))
        if not pinned.threads:
            out.append(row(("  " + na("needs two ticks"), DIM)))
        for thread, cpu in pinned.threads[: max(0, height - len(out))]:
            out.append(row(f"{thread.tid:>6} {thread.pid:>6}  {thread.name[:16]:<16} {cpu:>5.0f}"))
        return out

    def provenance(self, ctx: Ctx) -> list[str]:
        pinned = ctx.view.pinned
        if pinned is None:
            return ["nothing pinned"]
        s = pinned.sample
        return [f"pattern: {s.pattern}" if s.pattern else "pinned by pid",
                f"roots: {', '.join(map(str, s.root_pids)) or 'none'}",
                f"tree: {', '.join(map(str, s.tree_pids)) or 'none'}",
                "thread CPU% from /proc/PID/task/TID/stat between two ticks"]


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
