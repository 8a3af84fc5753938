"""The host's CPU load (psutil): a busy host is one reason a busy GPU is slow."""

from __future__ import annotations

import psutil

from gputop.schema import HostSample
from gputop.sources.base import Reading


class HostSource:
    name = "host"

    def open(self) -> None:
        psutil.cpu_percent(interval=None)  # the first call only sets the reference point

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        return Reading(host=HostSample(cpu_pct=psutil.cpu_percent(interval=None)))

    def close(self) -> None:
        pass
