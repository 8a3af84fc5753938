"""A last resort for ending the process: once an exit has been asked for, it happens.

A dropped SSH connection (SIGHUP) or a ``q`` must always end gputop.  Textual's own
shutdown has been seen to hang forever (its writer thread waiting on a terminal that
was destroyed during a slow start, under heavy load), ignoring SIGTERM.  So when an
exit begins, a daemon timer is armed: if the process still exists after the grace
period, it runs the cleanup that matters (close the recording, detach probes) and
ends the process with ``os._exit``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

GRACE_S = 6.0
_armed = threading.Lock()


def arm(code: int = 0, cleanup: Callable[[], None] | None = None,
        grace_s: float = GRACE_S) -> None:
    """Start the timer (once per process; later calls are ignored)."""
    if not _armed.acquire(blocking=False):
        return

    def fire() -> None:
        if cleanup is not None:
            try:
                cleanup()
            except BaseException:  # the exit must happen whatever it raised
                pass
        os._exit(code)

    timer = threading.Timer(grace_s, fire)
    timer.daemon = True
    timer.name = "gputop-exit-guard"
    timer.start()
