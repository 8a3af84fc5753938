"""Where the host's /proc, /sys, /run and /var are: "/" on the host, a mount inside a container.

NVML reports host PIDs.  gputop in a container with a PID namespace of its own cannot
see them in its /proc ("No Such Process" in other monitors).  With the host's /proc and
/sys mounted (``-v /proc:/host/proc:ro -v /sys:/host/sys:ro``) and ``--host-root /host``
(or ``GPUTOP_HOST_ROOT``), every reader of processes, cgroups, PSI, maps and sockets reads
the host's instead: psutil through its own ``PROCFS_PATH``, gputop's readers through
``proc()`` and ``path()``.  The setting is process-wide, as psutil's is.

A process table from another PID namespace has two consequences kept here: gputop's own
PID there is not ``os.getpid()`` (``own_pid``), and signals cannot reach its processes
(``kill(2)`` takes PIDs of the caller's namespace), so actions are refused.
"""

from __future__ import annotations

import os

import psutil

# PROC_PID_INIT_INO (include/linux/proc_ns.h): the inode of the initial PID namespace
PID_INIT_INO = 0xEFFFFFFC
NO_HOST_VIEW = "processes are in another PID namespace: mount the host's /proc and pass --host-root"

_root = "/"


class HostRootError(ValueError):
    """A --host-root that cannot be used: one line for the user."""


def configure(root: str | None) -> None:
    """Read the host's processes under ``root`` (None or "/": this machine's own /proc)."""
    global _root
    if not root or os.path.realpath(root) == "/":
        _root, psutil.PROCFS_PATH = "/", "/proc"
        return
    if not os.path.isdir(root):
        raise HostRootError(f"--host-root {root}: no such directory")
    proc_dir = os.path.join(root, "proc")
    if not os.path.isfile(os.path.join(proc_dir, "stat")):
        raise HostRootError(f"--host-root {root}: no proc filesystem at {proc_dir} (mount the "
                            "host's /proc there: -v /proc:" + proc_dir + ":ro)")
    _root = os.path.abspath(root)
    psutil.PROCFS_PATH = proc_dir


def root() -> str:
    return _root


def is_set() -> bool:
    return _root != "/"


def proc(*parts: str | int) -> str:
    """A path under the host's /proc: ``proc(pid, "status")``."""
    return os.path.join(_root, "proc", *map(str, parts))


def path(host_path: str) -> str:
    """Where the host's ``host_path`` (/run/..., /var/..., /sys/...) is seen from here."""
    return os.path.join(_root, host_path.lstrip("/"))


def own_pid() -> int:
    """gputop's own PID in the process table read (the host's, under --host-root)."""
    if not is_set():
        return os.getpid()
    try:
        return int(os.readlink(proc("self")))
    except (OSError, ValueError):
        return -1  # the mounted /proc is not an ancestor namespace's: nothing of ours there


def in_child_pid_namespace() -> bool | None:
    """Does gputop run in a PID namespace below the host's?  None when it cannot tell."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino != PID_INIT_INO
    except OSError:
        return None


def foreign_pids() -> bool:
    """Are the PIDs read (the host's, under --host-root) of a namespace other than ours?"""
    return is_set() and own_pid() != os.getpid()


def status() -> tuple[bool, str | None, str]:
    """(processes visible?, why not, what is read): the ``procfs`` source's status."""
    if is_set():
        mine = own_pid()
        if mine == -1:
            return (False, f"the /proc under --host-root {_root} is of a PID namespace gputop "
                    "is not in: mount the host's /proc there", proc())
        if in_child_pid_namespace() and mine == os.getpid():
            return (False, f"the /proc under --host-root {_root} is this container's own: "
                    "mount the host's (hostPID, or -v /proc:/host/proc:ro)", proc())
        return True, None, f"the host's processes from {proc()}"
    if in_child_pid_namespace():
        return False, NO_HOST_VIEW, "/proc"
    return True, None, "/proc"


def signal_refusal() -> str | None:
    """Why no signal may be sent to a listed process (None: it may)."""
    if foreign_pids():
        return ("not sent: the processes listed are the host's (--host-root) and gputop runs "
                "in another PID namespace, where this PID names a different process or none")
    return None
