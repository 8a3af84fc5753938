"""Detaching uprobes without making the user wait for the kernel.

Measured here (kernel 6.18, `bench/ebpf_exit.py`): closing one uprobe's perf event takes
~100 ms in the kernel (unregistering waits for an RCU grace period, and the kernel does
them one after another even from parallel threads), so gputop attached to 10 libraries
(12 probes each in full mode) took 13 s to exit after q or SIGTERM.  Instead, at close:
the probes are disabled at once (PERF_EVENT_IOC_DISABLE: 0.02 ms, the programs stop
running), and a detached helper process, forked with the perf-event descriptors and
nothing else, ends and lets the kernel release them in the background.  gputop's own
descriptors are then no longer the last ones, so its cleanup and exit take milliseconds;
the helper holds no terminal, socket or file, and every gputop BPF program is unloaded
once it is gone (N probes x ~0.1 s later).
"""

from __future__ import annotations

import fcntl
import os
import resource

PERF_EVENT_IOC_DISABLE = 0x2401
MIN_PROBES = 2  # below this the wait is too short to be worth a process


def disable(fds: list[int]) -> None:
    for fd in fds:
        try:
            fcntl.ioctl(fd, PERF_EVENT_IOC_DISABLE, 0)
        except OSError:
            pass


def release_in_background(fds: list[int]):
    """Disable the probes and hand their last references to a detached helper.  Returns a
    callable to run once the caller has closed its own descriptors (only then may the
    helper end: a helper that ended first would leave the last, slow close to the caller),
    or None when no helper could be made (the caller then detaches, slowly, itself)."""
    fds = sorted({fd for fd in fds if fd >= 0})
    if len(fds) < MIN_PROBES:
        return None
    disable(fds)
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        child = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if child == 0:  # first child: fork the helper and end, so nobody has to reap it
        try:
            if os.fork() == 0:
                _helper(fds, read_end)
        finally:
            os._exit(0)
    os.close(read_end)
    os.waitpid(child, 0)
    return lambda: os.close(write_end)


def _helper(keep: list[int], wait_fd: int) -> None:
    """Only os calls here (a fork of a threaded process): drop every descriptor but the
    probes' and the pipe's (the terminal, an SSH channel, sockets, the recording), wait
    until gputop has dropped its references (the pipe's end closes), then exit: the kernel
    releases the probes, slowly, with nobody waiting."""
    try:
        os.setsid()
        highest = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        low = 0
        for fd in sorted([*keep, wait_fd]):
            os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, min(highest, 1 << 20))
        while os.read(wait_fd, 1):
            pass
    finally:
        os._exit(0)
