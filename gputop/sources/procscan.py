"""The processes that may launch kernels, for the pin picker: a scan of /proc.

A process whose memory maps hold a CUDA library may launch kernels even before it holds
GPU memory (NVML does not list it yet).  The scan reads raw facts only (command line,
user, CPU% over a short look); the picker formats them.  It takes a tenth of a second at
least, so the dashboard runs it off the UI thread, through the session.
"""

from __future__ import annotations

import glob
import time

import psutil

from gputop import hostroot
from gputop.schema import ProcessScan
from gputop.units import command_line

CUDA_LIBS = ("libcuda.so", "libcudart.so")
SCAN_MAX_PROCESSES = 200


def cuda_processes(limit: int = SCAN_MAX_PROCESSES) -> dict[int, str]:
    """PIDs whose memory maps hold a CUDA library (they may launch kernels), with cmdlines."""
    found: dict[int, str] = {}
    for maps in glob.glob(hostroot.proc("[0-9]*", "maps")):
        pid = int(maps.split("/")[-2])
        try:
            with open(maps) as f:
                if not any(lib in line for line in f for lib in CUDA_LIBS):
                    continue
            found[pid] = command_line(psutil.Process(pid).cmdline())
        except (OSError, psutil.Error, ValueError):
            continue
        if len(found) >= limit:
            break
    return found


def cpu_percent(pids: list[int], seconds: float = 0.1) -> dict[int, float]:
    """CPU% of each process over a short look (100% = one core)."""
    procs = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            proc.cpu_percent(None)
            procs[pid] = proc
        except psutil.Error:
            continue
    time.sleep(seconds)
    out = {}
    for pid, proc in procs.items():
        try:
            out[pid] = proc.cpu_percent(None)
        except psutil.Error:
            continue
    return out


def username(pid: int) -> str:
    try:
        return psutil.Process(pid).username()
    except (psutil.Error, KeyError):
        return "?"


def scan(known_pids: list[int]) -> ProcessScan:
    """The CUDA processes on this machine, and the CPU% of them and of ``known_pids``."""
    cuda = cuda_processes()
    cpu = cpu_percent(sorted(set(known_pids) | set(cuda)))
    return ProcessScan(cuda, {pid: username(pid) for pid in cuda if pid not in known_pids}, cpu)
