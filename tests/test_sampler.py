import threading
import time

import pytest

from gputop.sampler import Sampler, parse_delay
from gputop.schema import GpuSample
from gputop.sources.base import Reading, SourceError


class Steady:
    name = "steady"

    def __init__(self):
        self.polls = 0

    def open(self):
        pass

    def close(self):
        pass

    def poll(self, now):
        self.polls += 1
        return Reading(gpus=(GpuSample(index=0, util_gpu_pct=50.0),))


class Hanging:
    """A source whose poll blocks until released, like an NFS-stuck /proc read."""

    name = "hanging"

    def __init__(self):
        self.release = threading.Event()
        self.polls = 0

    def open(self):
        pass

    def close(self):
        self.release.set()

    def poll(self, now):
        self.polls += 1
        self.release.wait(10)
        return Reading()


class Failing:
    name = "engine"

    def open(self):
        pass

    def close(self):
        pass

    def poll(self, now):
        raise SourceError("engine unreachable: connection refused")


class BrokenOpen(Failing):
    name = "nvml"

    def open(self):
        raise RuntimeError("NVML library not found")


def test_a_hanging_source_never_blocks_a_tick():
    steady, hanging = Steady(), Hanging()
    sampler = Sampler([steady, hanging], interval_s=0.2, source_timeout_s=0.1)
    sampler.open()
    try:
        started = time.monotonic()
        frames = [sampler.tick() for _ in range(4)]
        elapsed = time.monotonic() - started
    finally:
        sampler.close()
    assert elapsed < 1.5
    assert all(f.gpus[0].util_gpu_pct == 50.0 for f in frames)
    assert frames[0].sources["hanging"].reason.startswith("slow: no answer within")
    assert frames[1].sources["hanging"].reason.startswith("slow: previous poll still running")
    assert hanging.polls == 1  # not asked again while stuck
    assert steady.polls == 4


def test_failures_become_reasons_and_others_keep_running():
    sampler = Sampler([Steady(), Failing(), BrokenOpen()], interval_s=0.1)
    sampler.open()
    try:
        frame = sampler.tick()
    finally:
        sampler.close()
    assert frame.sources["steady"].ok
    assert frame.sources["engine"].ok is False
    assert frame.sources["engine"].reason == "engine unreachable: connection refused"
    assert frame.sources["nvml"].reason == "NVML library not found"
    assert frame.gpus[0].util_gpu_pct == 50.0


def test_run_keeps_a_fixed_cadence_and_sequence():
    sampler = Sampler([Steady()], interval_s=0.05)
    frames = []
    sampler.open()
    try:
        sampler.run(frames.append, max_frames=6)
    finally:
        sampler.close()
    assert [f.seq for f in frames] == list(range(6))
    gaps = [b.time_mono_s - a.time_mono_s for a, b in zip(frames, frames[1:])]
    assert all(0.02 < g < 0.2 for g in gaps)


def test_start_and_stop_in_a_thread():
    sampler = Sampler([Steady()], interval_s=0.02)
    got = []
    sampler.open()
    sampler.start(got.append)
    time.sleep(0.2)
    sampler.close()
    count = len(got)
    time.sleep(0.1)
    assert count >= 3 and len(got) == count


@pytest.mark.parametrize("text", ["0", "-1", "abc", "nan", "inf", "", "1e9"])
def test_bad_delays_are_refused(text):
    with pytest.raises(ValueError):
        parse_delay(text)


def test_good_delay():
    assert parse_delay("0.25") == 0.25
