"""Shared helpers: deterministic simulator frames and a UTC clock for stable screens."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

os.environ["TZ"] = "UTC"
time.tzset()

from gputop.demo import demo_frames as sim_frames  # noqa: E402,F401
from gputop.model.detect import DetectConfig, make_fold  # noqa: E402
from gputop.model.timeline import Timeline  # noqa: E402


def sim_timeline(scenario: str | None, count: int, config: DetectConfig = DetectConfig(),
                 **kwargs) -> Timeline:
    timeline = Timeline(max(count, 600), make_fold(config))
    for frame in sim_frames(scenario, count, **kwargs):
        timeline.append(frame)
    return timeline


@pytest.fixture
def workers():
    """Two real, idle processes for a fake GPU to report, so psutil has names to find."""
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
             for _ in range(2)]
    yield procs
    for p in procs:
        p.kill()
        p.wait()
