"""Acting on a process from the dashboard: send it a signal, or say why not.

gputop often runs as root on a shared server, so the checks come before the kill: the
process must be the one the user saw (same PID *and* start time: PIDs recycle while
a menu is open; without a known start time nothing is sent), another user's process
needs root, and ``--readonly`` (or ``readonly = true`` in the config) turns every action
off.  The demo's processes go through the same menu and confirmation, and are then only
told what would have happened.  The result is one line
for the status bar; nothing here raises.
"""

from __future__ import annotations

import os
import signal

import psutil

from gputop import hostroot
from gputop.schema import ProcSample
from gputop.sources.procinfo import same_start

SIGNALS = ("TERM", "INT", "KILL", "HUP", "STOP", "CONT")


def refusal(proc: ProcSample, *, readonly: bool, live: bool, simulated: bool = False) -> str | None:
    """Why gputop will not act on ``proc``, or None when it may try (``simulated``: the
    demo's processes, which go through every step and are then not sent anything)."""
    if readonly:
        return "read-only: actions are disabled (--readonly or readonly = true in the config)"
    if simulated:
        return None
    if not live:
        return f"pid {proc.pid} is not a live process here (a replay or a remote host's view)"
    if hostroot.signal_refusal():
        return hostroot.signal_refusal()
    if os.geteuid() != 0:
        try:
            owner = psutil.Process(proc.pid).uids().real
        except psutil.NoSuchProcess:
            return f"no such process: pid {proc.pid} has exited"
        except psutil.Error as exc:
            return f"pid {proc.pid}: {exc}"
        if owner != os.getuid():
            return (f"refused: pid {proc.pid} belongs to {proc.user or f'uid {owner}'}; only "
                    "root may signal another user's process")
    return None


def send_signal(proc: ProcSample, name: str, *, readonly: bool, live: bool = True,
                simulated: bool = False) -> tuple[bool, str]:
    """(sent?, one line saying what happened) for SIG``name`` to ``proc``; a simulated
    process is never signalled: the line says what would have been done."""
    if name not in SIGNALS:
        return False, f"unknown signal {name}"
    why = refusal(proc, readonly=readonly, live=live, simulated=simulated)
    if why:
        return False, why
    if simulated:
        return False, (f"demo: SIG{name} not sent, pid {proc.pid} ({proc.name or '?'}) is "
                       "simulated; on a live host it would be sent now")
    if proc.start_time_s is None:
        # nothing to tell the process shown from one that took its PID since (a PID from
        # another namespace, one gputop may not read): a KILL could reach a stranger
        return False, (f"not sent: the start time of pid {proc.pid} is unknown, so gputop "
                       "cannot check that the PID still belongs to the process shown")
    try:
        target = psutil.Process(proc.pid)
        reused = not same_start(target, proc.start_time_s)
    except psutil.NoSuchProcess:
        return False, f"no such process: pid {proc.pid} has exited"
    except psutil.Error as exc:
        return False, f"pid {proc.pid}: {exc}"
    if reused:
        return False, (f"not sent: pid {proc.pid} is now another process (it exited and the "
                       "PID was reused)")
    try:
        target.send_signal(getattr(signal, f"SIG{name}"))
    except psutil.NoSuchProcess:
        return False, f"no such process: pid {proc.pid} has exited"
    except psutil.AccessDenied:
        return False, f"refused by the kernel: no permission to signal pid {proc.pid}"
    except psutil.Error as exc:
        return False, f"pid {proc.pid}: {exc}"
    return True, f"sent SIG{name} to pid {proc.pid} ({proc.name or '?'})"
