"""The host's CPU load (psutil, /proc): a busy host is one reason a busy GPU is slow."""

from __future__ import annotations

import psutil

from gputop.schema import HostSample
from gputop.sources.base import Reading
from gputop.sources.proctree import cpu_pressure, run_queue


class HostSource:
    name = "host"

    def open(self) -> None:
        psutil.cpu_percent(interval=None)  # the first call only sets the reference point

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        """CPU use, CPU pressure (PSI), the run queue and context switches: what says the
        CPU is contended, readable without root."""
        try:
            switches = psutil.cpu_stats().ctx_switches
        except (OSError, AttributeError):
            switches = None
        return Reading(host=HostSample(cpu_pct=psutil.cpu_percent(interval=None),
                                       cpu_pressure_some_pct=cpu_pressure(),
                                       run_queue=run_queue(), cpus=psutil.cpu_count(),
                                       ctx_switches_total=switches))

    def close(self) -> None:
        pass
