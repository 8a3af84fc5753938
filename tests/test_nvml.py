"""The NVML source against a fake pynvml (no GPU here), and the real no-driver path."""

import os
import subprocess
import sys
import time

import pynvml
import pytest

from gputop.model.derive import derive
from gputop.export.snapshot import snapshot_dict
from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
from gputop.sampler import Sampler
from gputop.sources.base import SourceError
from gputop.sources.nvml import MIG_UTIL, NO_GPM, NvmlSource
from tests.fake_nvml import FakeGpu, FakeNvml, FakeProc, GiB, hopper_and_ampere




class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def polls(fake, source, clock, count):
    out = []
    for _ in range(count):
        out.append(source.poll())
        fake.advance(1.0)
        clock.t += 1.0
    return out


def open_source(monkeypatch, gpus, **kwargs):
    fake = FakeNvml(gpus, **kwargs).install(monkeypatch)
    clock = Clock()
    source = NvmlSource(clock=clock)
    source.open()
    return fake, source, clock


def test_hopper_reports_sm_activity_after_two_gpm_samples(monkeypatch, workers):
    fake, source, clock = open_source(monkeypatch, hopper_and_ampere(workers[0].pid, workers[1].pid))
    first, second, third = polls(fake, source, clock, 3)
    h100 = first.gpus[0]
    assert h100.util_gpu_pct == 97.0
    assert h100.sm_active_pct is None  # not 0: GPM needs two samples
    assert h100.missing["sm_active_pct"] == "GPM needs a second sample"
    h100 = second.gpus[0]
    assert (h100.sm_active_pct, h100.sm_occupancy_pct, h100.tensor_pct, h100.dram_bw_pct) == \
        (11.0, 5.0, 3.0, 21.0)
    assert third.gpus[0].sm_active_pct == 11.0
    source.close()
    assert fake._gpm_samples == {}  # every GPM sample freed


def test_ampere_says_why_sm_activity_is_missing(monkeypatch, workers):
    fake, source, clock = open_source(monkeypatch, hopper_and_ampere(workers[0].pid, workers[1].pid))
    a100 = polls(fake, source, clock, 2)[1].gpus[1]
    assert a100.sm_active_pct is None and a100.missing["sm_active_pct"] == NO_GPM
    assert a100.power_w is None and a100.missing["power_w"] == "not supported on this GPU"
    assert a100.util_gpu_pct == 40.0 and a100.temp_c == 55.0


def test_processes_with_struct_quirks_and_unavailable_memory(monkeypatch, workers):
    gpus = hopper_and_ampere(workers[0].pid, workers[1].pid)
    gpus.append(FakeGpu("NVIDIA L40S", 48 * GiB, 10 * GiB, util_pct=5,
                        procs=[FakeProc(workers[0].pid, 9 * GiB, sm_util=4)],
                        process_api="garbled-v3"))
    fake, source, clock = open_source(monkeypatch, gpus)
    reading = polls(fake, source, clock, 2)[1]
    by_gpu = {p.gpu_index: p for p in reading.processes}
    assert by_gpu[0].pid == workers[0].pid and by_gpu[0].mem_bytes == 72 * GiB
    assert by_gpu[0].name.startswith("python") and "time.sleep(60)" in by_gpu[0].cmdline
    assert by_gpu[0].start_time_s is not None and by_gpu[0].user
    assert by_gpu[1].pid == workers[1].pid and by_gpu[1].mem_bytes is None  # not available
    assert by_gpu[2].pid == workers[0].pid and by_gpu[2].mem_bytes == 9 * GiB  # v2 after junk
    assert source.devices[1].process_lister == "nvmlDeviceGetComputeRunningProcesses_v2"
    assert source.devices[2].process_lister == "nvmlDeviceGetComputeRunningProcesses_v2"
    assert source.devices[0].process_lister == "nvmlDeviceGetComputeRunningProcesses_v3"


def test_per_process_sm_util_takes_newest_sample_without_double_counting(monkeypatch, workers):
    fake, source, clock = open_source(monkeypatch, hopper_and_ampere(workers[0].pid, workers[1].pid))
    readings = polls(fake, source, clock, 3)
    for reading in readings:
        by_gpu = {p.gpu_index: p for p in reading.processes}
        assert by_gpu[0].sm_util_pct == 11.0  # never the older sample (1%)
        assert by_gpu[1].sm_util_pct == 38.0


def test_driver_samples_between_ticks_are_not_counted_twice(monkeypatch, workers):
    fake, source, clock = open_source(monkeypatch, hopper_and_ampere(workers[0].pid, workers[1].pid))
    first, second = polls(fake, source, clock, 2)
    assert len(first.gpus[0].util_gpu_samples_pct) == 10  # first tick: only the latest
    assert len(second.gpus[0].util_gpu_samples_pct) == 6  # 1 s at 1/6 s per sample
    assert all(95 <= v <= 98 for v in second.gpus[0].util_gpu_samples_pct)


def test_a_lost_gpu_is_shown_lost_while_others_update(monkeypatch, workers):
    gpus = hopper_and_ampere(workers[0].pid, workers[1].pid)
    gpus[1].lost_after_polls = 2
    fake, source, clock = open_source(monkeypatch, gpus)
    readings = polls(fake, source, clock, 5)
    assert not readings[1].gpus[1].lost
    lost = readings[3].gpus[1]
    assert lost.lost and "lost" in lost.missing["all"] and lost.name == "NVIDIA A100-SXM4-40GB"
    assert readings[4].gpus[1].lost
    assert readings[4].gpus[0].util_gpu_pct == 97.0 and not readings[4].gpus[0].lost


def test_single_call_errors_become_reasons(monkeypatch, workers):
    gpus = hopper_and_ampere(workers[0].pid, workers[1].pid)
    gpus[0].failing = {"nvmlDeviceGetTemperature": pynvml.NVML_ERROR_NO_PERMISSION,
                       "nvmlDeviceGetUtilizationRates": pynvml.NVML_ERROR_UNKNOWN,
                       "nvmlDeviceGetComputeRunningProcesses_v3": pynvml.NVML_ERROR_NO_PERMISSION,
                       "nvmlDeviceGetComputeRunningProcesses_v2": pynvml.NVML_ERROR_NO_PERMISSION}
    fake, source, clock = open_source(monkeypatch, gpus)
    h100 = polls(fake, source, clock, 1)[0].gpus[0]
    assert h100.temp_c is None and h100.missing["temp_c"] == "no permission (run as root?)"
    assert h100.util_gpu_pct is None and h100.missing["util_gpu_pct"] == "Unknown Error"
    assert h100.missing["processes"] == "no permission (run as root?)"
    assert h100.mem_used_bytes == 74 * GiB  # the rest still reads


def test_throttle_reasons_and_mig(monkeypatch, workers):
    gpus = hopper_and_ampere(workers[0].pid, workers[1].pid)
    gpus[0].throttle_bits = 0x1 | 0x4 | 0x40  # idle (ignored), power cap, hw thermal
    gpus[1].mig_instances = [("NVIDIA A100 MIG 3g.20gb", 20 * GiB, 5 * GiB),
                             ("NVIDIA A100 MIG 3g.20gb", 20 * GiB, 7 * GiB)]
    fake, source, clock = open_source(monkeypatch, gpus)
    reading = polls(fake, source, clock, 1)[0]
    assert reading.gpus[0].throttle == ("power cap", "thermal (hw)")
    migs = reading.gpus[1].migs
    assert [(m.index, m.mem_used_bytes) for m in migs] == [(0, 5 * GiB), (1, 7 * GiB)]
    assert reading.gpus[1].util_gpu_pct is None
    assert reading.gpus[1].missing["util_gpu_pct"] == MIG_UTIL


def test_gpu_selection_and_bad_index(monkeypatch, workers):
    FakeNvml(hopper_and_ampere(workers[0].pid, workers[1].pid)).install(monkeypatch)
    source = NvmlSource([1])
    source.open()
    assert [g.index for g in source.poll().gpus] == [1]
    source.close()
    with pytest.raises(SourceError, match="no GPU 5: this machine has 2"):
        NvmlSource([5]).open()


@pytest.mark.parametrize("code, text", [
    (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1"),
    (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "driver is not loaded"),
    (pynvml.NVML_ERROR_NO_PERMISSION, "no permission"),
])
def test_init_failure_names_the_cause(monkeypatch, code, text):
    FakeNvml([], init_error=code).install(monkeypatch)
    with pytest.raises(SourceError, match=text):
        NvmlSource().open()


def test_sampler_frames_from_nvml_derive_a_snapshot(monkeypatch, workers):
    fake = FakeNvml(hopper_and_ampere(workers[0].pid, workers[1].pid)).install(monkeypatch)
    source = NvmlSource()
    sampler = Sampler([source], 0.2)
    sampler.open()
    timeline = Timeline(10, make_fold())
    for _ in range(3):
        timeline.append(sampler.tick())
        fake.advance(0.2)
        time.sleep(0.12)  # GPM samples must be >= 100 ms apart
    sampler.close()
    data = snapshot_dict(derive(timeline, timeline.last_index), "nvml")
    h100, a100 = data["gpus"]
    assert h100["util_gpu_pct"] == 97 and h100["sm_active_pct"] == 11
    assert h100["vram"]["unsplit_bytes"] == 74 * GiB  # no engine: not guessed
    assert a100["sm_active_pct"] is None and a100["missing"]["sm_active_pct"] == NO_GPM
    assert (data["sources"]["nvml"]["ok"], data["sources"]["nvml"]["reason"]) == (True, None)
    assert h100["processes"][0]["pid"] == workers[0].pid


def test_no_driver_here_is_reported_cleanly():
    # The real path on this machine: no libnvidia-ml.so.1.
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-m", "gputop", "snapshot"], capture_output=True,
                            text=True, env=env, timeout=30)
    assert result.returncode == 2
    assert "libnvidia-ml.so.1" in result.stderr and "Traceback" not in result.stderr


def test_doctor_tells_the_truth_with_a_fake_driver(monkeypatch, capsys, workers):
    gpus = hopper_and_ampere(workers[0].pid, workers[1].pid)
    gpus[1].failing["nvmlDeviceGetComputeRunningProcesses_v2"] = pynvml.NVML_ERROR_NO_PERMISSION
    gpus[0].procs.append(FakeProc(2**22 + 12345, 1 * GiB))  # a host PID not visible here
    FakeNvml(gpus).install(monkeypatch)
    from gputop.cli import main
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ok   NVML") and "driver 550.54.15, 2 GPU(s)" in out[0]
    assert any(l.startswith("ok   GPU 0 NVIDIA H100") and "GPM" in l for l in out)
    assert any(l.startswith("--   GPU 1 NVIDIA A100") and "Hopper+" in l for l in out)
    assert any(l.startswith("FAIL GPU 1 per-process memory: no permission") for l in out)
    assert any(l.startswith("FAIL 1 GPU process(es) not visible here") and "--pid=host" in l
               for l in out)
    assert "NVML 12.550.54.15" in out[0]


def test_doctor_on_this_machine_says_no_driver():
    result = subprocess.run([sys.executable, "-m", "gputop", "doctor"], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 1
    assert result.stdout.startswith("FAIL NVML: NVML library (libnvidia-ml.so.1) not found")
    assert "gputop --demo" in result.stdout


async def test_dashboard_over_fake_nvml(monkeypatch, workers):
    from gputop.session import Session
    from gputop.tui.app import GputopApp
    from tests.test_tui import text_of

    gpus = hopper_and_ampere(workers[0].pid, workers[1].pid)
    gpus[1].lost_after_polls = 3
    fake, source, clock = open_source(monkeypatch, gpus)
    sampler = Sampler([source], 1.0, frame_time=lambda seq: (1_700_000_000.0 + seq, float(seq)))
    frames = []
    for _ in range(3):
        frames.append(sampler.tick())
        fake.advance(1.0)
        clock.t += 1.0
    app = GputopApp(Session("nvml", frames=frames))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert "97%" in text_of(app.query_one("#pane-1"))
        sm = text_of(app.query_one("#pane-2"))
        assert "SM active   11%" in sm
        assert "no engine: pass --engine URL" in text_of(app.query_one("#pane-3"))
        vram = text_of(app.query_one("#pane-4"))
        assert "GPU0 74.0/80.0 GiB" in vram and "used (unsplit)" in vram
        assert str(workers[0].pid) in vram
        assert "eBPF probes not enabled" in text_of(app.query_one("#pane-5"))
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert "n/a (needs Hopper+ (GPM)" in text_of(app.query_one("#pane-2"))
        for _ in range(2):  # the A100 falls off the bus; the H100 keeps going
            frame = sampler.tick()
            fake.advance(1.0)
            clock.t += 1.0
            app.add_frame(frame)
        await pilot.pause()
        assert "lost" in text_of(app.query_one("#pane-1"))
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert "97%" in text_of(app.query_one("#pane-1"))
    sampler.close()


@pytest.mark.parametrize("memory_v2", [True, False])
def test_used_memory_matches_nvidia_smi_and_the_reserve_is_not_free(monkeypatch, memory_v2):
    """On the H200 check NVML v1's "used" read 0.6 GiB above nvidia-smi: the driver's
    reserve.  With v2 the reserve is apart and never counted free; an old driver (v1 only)
    still gives a total and a used figure."""
    gpu = FakeGpu("NVIDIA H200", total_bytes=140 * GiB, used_bytes=89 * GiB,
                  reserved_bytes=GiB // 2, memory_v2=memory_v2)
    fake, source, clock = open_source(monkeypatch, [gpu])
    sample = polls(fake, source, clock, 1)[0].gpus[0]
    if memory_v2:
        assert sample.mem_used_bytes == 89 * GiB
        assert sample.mem_reserved_bytes == GiB // 2
    else:
        assert sample.mem_used_bytes == 89 * GiB + GiB // 2
        assert sample.mem_reserved_bytes is None
    from gputop.model.derive import vram_split
    split = vram_split(sample, (), None)
    assert split.free_bytes == 140 * GiB - 89 * GiB - GiB // 2


def test_throttle_reasons_unknown_are_said_not_zeroed(monkeypatch):
    """A driver that cannot say why clocks are held down: the sample says so, and the
    exporter then emits no gputop_gpu_throttled series for that GPU (not a row of zeros)."""
    gpu = FakeGpu("NVIDIA H100", total_bytes=80 * GiB, used_bytes=GiB,
                  failing={"nvmlDeviceGetCurrentClocksEventReasons":
                           pynvml.NVML_ERROR_NOT_SUPPORTED})
    fake, source, clock = open_source(monkeypatch, [gpu])
    sample = polls(fake, source, clock, 1)[0].gpus[0]
    assert sample.throttle == () and sample.missing["throttle"] == "not supported on this GPU"
