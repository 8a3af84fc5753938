"""The host side of a GPU's work when nothing is pinned: the whole machine's CPU load,
pressure, run queue and context switches, the engine's process tree on the CPU, and the
GPU processes that use the most CPU.

What the detector reads as host contention (the run queue beyond the CPUs, CPU pressure,
the engine's involuntary switches) is what pane 6 shows, so a banner that cites them can
be checked there.  Pure functions of the timeline: rates come from two frames.
"""

from __future__ import annotations

from dataclasses import dataclass

from gputop.model.point import counter_rate, read_time, throttled
from gputop.model.processes import ProcRow, process_rows
from gputop.schema import Frame, HostSample

BUSIEST_KEPT = 8


@dataclass(frozen=True)
class HostView:
    sample: HostSample | None
    switches_per_s: float | None  # the whole host's context switches
    engine_label: str  # "vllm (pid 4121)", or "" without an engine
    engine_cpu_pct: float | None  # the engine's process tree, 100% = one core
    engine_involuntary_per_s: float | None
    busiest: tuple[ProcRow, ...]  # GPU processes, most CPU first
    reasons: dict[str, str]  # why a value is unknown, by field name
    # the CPU quota over the engine's cgroup, in cores, and the share of its CFS periods it
    # held the engine back in over the tick (None: no quota read)
    engine_quota_cores: float | None = None
    engine_throttled_share: float | None = None


def host_view(frame: Frame, before: Frame | None) -> HostView:
    """Pane 6's host-wide view at ``frame``, its rates over the tick since ``before``."""
    seconds = frame.time_mono_s - before.time_mono_s if before is not None else 0.0
    host = frame.host
    reasons: dict[str, str] = {}
    switches = None
    if host is None or host.ctx_switches_total is None:
        reasons["switches"] = "not read on this host" if host is not None else "no host reading"
    elif before is None or before.host is None or before.host.ctx_switches_total is None:
        reasons["switches"] = "needs two readings"
    else:
        switches = counter_rate(before.host.ctx_switches_total, host.ctx_switches_total, seconds)
    engine = frame.engine
    label, cpu, involuntary = "", None, None
    quota: dict[str, float | None] = {}
    if engine is not None:
        pids = ",".join(str(p) for p in engine.pids[:3])
        label = f"{engine.kind}" + (f" (pid {pids})" if pids else "")
        earlier = before.engine if before is not None else None
        if earlier is None or (earlier.kind, earlier.url) != (engine.kind, engine.url):
            reasons["engine"] = "needs two readings"
        else:
            took = read_time(frame) - read_time(before)  # type: ignore[arg-type]  # earlier is before's
            rate = counter_rate(earlier.cpu_s, engine.cpu_s, took)
            cpu = None if rate is None else 100.0 * rate
            involuntary = counter_rate(earlier.ctx_involuntary, engine.ctx_involuntary, took)
            quota = throttled(earlier, engine)
            if cpu is None:
                reasons["engine"] = ("its process tree is not on this machine" if not engine.pids
                                     else "no CPU time read for its processes")
    rows = [r for r in process_rows(frame, before) if r.cpu_pct is not None]
    seen: set[int] = set()
    busiest = []
    for r in sorted(rows, key=lambda r: -(r.cpu_pct or 0.0)):  # rows with a cpu_pct only
        if r.sample.pid not in seen:  # a process on two GPUs is one process on the CPU
            seen.add(r.sample.pid)
            busiest.append(r)
    if not busiest:
        reasons["busiest"] = "needs two readings" if before is None else \
            "no GPU process with a CPU reading"
    return HostView(host, switches, label, cpu, involuntary, tuple(busiest[:BUSIEST_KEPT]),
                    reasons, quota.get("tree_quota_cores"), quota.get("tree_throttled_share"))
