"""Who a PID is: name, command line, owner and start time, from psutil and /proc.

NVML reports host PIDs.  When gputop runs inside a container without the host's
PID namespace those PIDs are not visible here (unless the host's /proc is mounted and
named by --host-root: ``gputop.hostroot``); the process is then shown by its PID with a
one-line hint instead of a wrong name.
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil

from gputop import hostroot
from gputop.schema import ProcSample
from gputop.sources.cgroup import process_owner
from gputop.units import command_line

HOST_PID_HINT = ("(host PID not visible here: run the container with --pid=host, or mount the "
                 "host's /proc and pass --host-root)")


@dataclass(frozen=True)
class ProcessInfo:
    name: str
    cmdline: str
    user: str
    start_time_s: float | None
    ppid: int | None = None


_cache: dict[int, ProcessInfo] = {}
START_TIME_MATCH_S = 0.01  # both sides come from psutil's create_time: equal but for rounding


def same_start(proc: psutil.Process, start_time_s: float) -> bool:
    """Is ``proc`` the process that started at ``start_time_s`` (not a recycled PID)?"""
    return abs(proc.create_time() - start_time_s) < START_TIME_MATCH_S


def namespace_pids(pid: int) -> list[int]:
    """The PID in each PID namespace from ours inward (/proc/PID/status NSpid)."""
    try:
        with open(hostroot.proc(pid, "status")) as status:
            for line in status:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return [pid]


def describe_process(pid: int, proc: psutil.Process | None = None) -> ProcessInfo:
    """Cached per (pid, start time), so a recycled PID is described afresh.  ``proc``: the
    caller's psutil handle of ``pid`` (inside its ``oneshot``), to read /proc once."""
    try:
        proc = proc or psutil.Process(pid)
        started = proc.create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return ProcessInfo(name="?", cmdline=HOST_PID_HINT, user="", start_time_s=None)
    except psutil.AccessDenied:
        return ProcessInfo(name="?", cmdline="(no permission to read this process)", user="",
                           start_time_s=None)
    cached = _cache.get(pid)
    if cached is not None and cached.start_time_s == started:
        return cached
    with proc.oneshot():
        try:
            name = proc.name()
            cmdline = command_line(proc.cmdline()) or f"[{name}]"
        except (psutil.AccessDenied, psutil.ZombieProcess):
            name, cmdline = "?", "(no permission to read this process)"
        try:
            user = proc.username()
        except (psutil.AccessDenied, KeyError):
            user = ""
        try:
            ppid = proc.ppid()
        except psutil.Error:
            ppid = None
    inner = namespace_pids(pid)
    if len(inner) > 1:
        cmdline += f"  (pid {inner[-1]} in its container)"
    info = ProcessInfo(name=name, cmdline=cmdline, user=user, start_time_s=started, ppid=ppid)
    if len(_cache) > 4096:
        _cache.clear()
    _cache[pid] = info
    return info


def gpu_process(pid: int, gpu_index: int, mem_bytes: int | None,
                sm_util_pct: float | None, mem_util_pct: float | None = None,
                mig_index: int | None = None) -> ProcSample:
    """A GPU process as a source reports it: who it is, what owns it, what it uses now
    (the process list asks this of every GPU process every tick: one psutil handle, its
    /proc/PID/stat read once for the start time and the CPU times)."""
    cpu_s = rss_bytes = None
    try:
        proc = psutil.Process(pid)
    except psutil.Error:
        info = describe_process(pid)
    else:
        with proc.oneshot():
            info = describe_process(pid, proc)
            try:
                times = proc.cpu_times()
                cpu_s, rss_bytes = times.user + times.system, proc.memory_info().rss
            except psutil.Error:
                pass
    owner = process_owner(pid, info.start_time_s)
    return ProcSample(pid=pid, gpu_index=gpu_index, name=info.name, cmdline=info.cmdline,
                      user=info.user, ppid=info.ppid, start_time_s=info.start_time_s,
                      mem_bytes=mem_bytes, sm_util_pct=sm_util_pct, cpu_s=cpu_s,
                      rss_bytes=rss_bytes, container=owner.container, pod=owner.pod,
                      cgroup=owner.cgroup, slurm_job=owner.slurm_job, slurm_step=owner.slurm_step,
                      mem_util_pct=mem_util_pct, mig_index=mig_index)
