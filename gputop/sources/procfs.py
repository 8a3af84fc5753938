"""Whether the processes NVML names can be seen here: the ``procfs`` source's status.

NVML gives host PIDs.  Run in a PID namespace of its own (a container without
``--pid=host``), gputop would list them as strangers; this source says so on the status
line, in ``snapshot --json``'s ``sources`` and in pane 8 ("processes are in another PID
namespace: mount the host's /proc and pass --host-root") instead of empty lists.  With
``--host-root`` it checks that the /proc mounted there really is an outer namespace's.
"""

from __future__ import annotations

from gputop import hostroot
from gputop.sources.base import Reading, SourceError


class ProcfsSource:
    name = "procfs"

    def open(self) -> None:
        pass

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        visible, why, what = hostroot.status()
        if not visible:
            raise SourceError(why)
        return Reading(detail=what)

    def close(self) -> None:
        pass
