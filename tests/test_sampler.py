import threading
import time

import pytest

from gputop.sampler import Sampler, parse_delay
from gputop.schema import GpuSample, HostSample
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
    assert frames[0].sources["hanging"].reason == "slow: no answer for 0.1s"
    assert all(f.sources["hanging"].reason.startswith("slow: no answer for") for f in frames)
    assert hanging.polls == 1  # never two polls in flight: not asked again while stuck
    assert steady.polls == 4
    assert frames[-1].sources["steady"].ok and frames[-1].sources["steady"].age_s < 0.1


class Late:
    """Answers every poll after ``delay_s``, reading a counter that grows 1000 per second
    at the moment the answer is made (as an engine's /metrics does)."""

    name = "late"

    def __init__(self, delay_s):
        self.delay_s = delay_s
        self.polls = 0
        self.in_flight = self.most_in_flight = 0
        self.started = time.monotonic()

    def open(self):
        pass

    def close(self):
        pass

    def poll(self, now):
        from gputop.schema import EngineSample

        self.polls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(self.delay_s)
        counter = 1000.0 * (time.monotonic() - self.started)
        self.in_flight -= 1
        return Reading(engine=EngineSample(kind="vllm", url="x", generation_tokens_total=counter))


def test_a_late_reading_is_used_with_its_age_and_its_own_time():
    late = Late(0.25)
    sampler = Sampler([late], interval_s=0.2, source_timeout_s=0.05)
    sampler.open()
    try:
        frames = []
        for _ in range(5):
            frames.append(sampler.tick())
            time.sleep(0.2)
    finally:
        sampler.close()
    assert frames[0].engine is None and not frames[0].sources["late"].ok
    carried = [f for f in frames[1:] if f.engine is not None]
    assert carried, [f.sources for f in frames]
    for frame in carried:
        status = frame.sources["late"]
        assert status.ok and status.age_s is not None and 0 <= status.age_s < 0.6
        assert status.poll_s == pytest.approx(0.25, abs=0.1)
        # stamped when the answer was made, not when the tick started
        assert frame.engine.time_mono_s > frame.time_mono_s - 0.6
        assert frame.engine.time_mono_s != frame.time_mono_s
    assert late.most_in_flight == 1


def test_a_reading_older_than_the_stale_limit_is_na():
    hanging = Hanging()

    class OnceThenHang(Hanging):
        name = "engine"

        def poll(self, now):
            self.polls += 1
            if self.polls == 1:
                return Reading(gpus=(GpuSample(index=0, util_gpu_pct=1.0),))
            self.release.wait(10)
            return Reading()

    source = OnceThenHang()
    clock = [0.0]
    sampler = Sampler([source], interval_s=1.0, source_timeout_s=0.05, stale_after_s=2.5,
                      clock=lambda: clock[0])
    sampler.open()
    try:
        frames = []
        for t in (0.0, 1.0, 2.0, 3.0, 4.0):
            clock[0] = t
            frames.append(sampler.tick())
    finally:
        sampler.close()
        hanging.close()
    assert [bool(f.gpus) for f in frames] == [True, True, True, False, False]
    assert [f.sources["engine"].age_s for f in frames[:3]] == [0.0, 1.0, 2.0]
    assert frames[3].sources["engine"].reason == "slow: last reading 3s old, poll still running"


def test_a_hung_source_does_not_keep_the_process_alive():
    import subprocess
    import sys

    code = ("import threading\n"
            "from gputop.sampler import Sampler\n"
            "from gputop.sources.base import Reading\n"
            "class Stuck:\n"
            "    name = 'stuck'\n"
            "    def open(self): pass\n"
            "    def close(self): pass\n"
            "    def poll(self, now): threading.Event().wait()\n"
            "s = Sampler([Stuck()], 0.1, source_timeout_s=0.05)\n"
            "s.open(); s.tick(); s.close(); print('done')\n")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=30)
    assert result.stdout.strip() == "done", result.stderr
    assert time.monotonic() - started < 10


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


class _HostPart:
    """A source that reads part of the host sample, as /proc and eBPF each do."""

    def __init__(self, name, host):
        self.name, self.host = name, host

    def open(self):
        pass

    def close(self):
        pass

    def poll(self, now):
        return Reading(host=self.host)


def test_host_readings_of_two_sources_are_merged_not_dropped():
    """/proc gives the CPU and pressure, eBPF the launch threads' involuntary switches:
    the frame keeps both (the second source's sample was dropped whole)."""
    proc = _HostPart("host", HostSample(cpu_pct=40.0, cpu_pressure_some_pct=3.0))
    ebpf = _HostPart("ebpf", HostSample(offcpu_switches=17, cpu_pct=99.0))
    sampler = Sampler([proc, ebpf], interval_s=0.1)
    sampler.open()
    try:
        frame = sampler.tick()
    finally:
        sampler.close()
    assert frame.host.cpu_pct == 40.0 and frame.host.cpu_pressure_some_pct == 3.0
    assert frame.host.offcpu_switches == 17
