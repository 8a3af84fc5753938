"""MIG through the real pynvml over the C stand-in (tests/stand_in/nvml_stand_in.c with
NVML_STAND_IN_MIG): instances by handle index with their GPU / compute instance ids,
profile, memory and processes, SM / DRAM / tensor activity from GPM MIG samples where the
driver gives them and n/a with the reason where not, GPU-Util refused in MIG mode; in
``snapshot --json``, the exporter's ``gputop_mig_*`` families and the dashboard (pane 7's
instance rows, [ ] stepping through instances, panes 2, 4 and 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from gputop.record.store import Recording
from gputop.session import Session
from gputop.tui.app import GputopApp
from tests.test_tui import pane, text_of

ROOT = Path(__file__).parent.parent
MIG = "1=1g.10gb@30/20/5,3g.40gb@x,2g.20gb@55/x/12"


@pytest.fixture()
def workers():
    procs = [subprocess.Popen(["sleep", "120"]) for _ in range(3)]
    yield [p.pid for p in procs]
    for p in procs:
        p.kill()
        p.wait()


def _env(nvml_library, pids) -> dict:
    a, b, c = pids
    return dict(os.environ, LD_LIBRARY_PATH=str(nvml_library), NVML_STAND_IN_GPUS="2",
                NVML_STAND_IN_MIG=MIG, PYTHONPATH=str(ROOT),
                NVML_STAND_IN_PROCS=f"{a}:0:4096,{b}:1.0:2048,{c}:1.2:3072")


def test_snapshot_lists_instances_with_their_activity(nvml_library, workers):
    a, b, c = workers
    result = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json", "--samples",
                             "3", "-d", "0.2"], env=_env(nvml_library, workers),
                            capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    zero, one = json.loads(result.stdout)["gpus"]
    assert zero["mig_mode"] is False and zero["mig_instances"] == []
    assert zero["util_gpu_pct"] == 90.0
    assert one["mig_mode"] is True
    # GPU-Util is refused in MIG mode: unknown with its reason, never 0
    assert one["util_gpu_pct"] is None and "MIG" in one["missing"]["util_gpu_pct"]
    assert one["sm_active_pct"] is None and "per MIG instance" in one["missing"]["sm_active_pct"]
    first, second, third = one["mig_instances"]
    assert (first["index"], first["gpu_instance_id"], first["compute_instance_id"],
            first["profile"]) == (0, 1, 0, "1g.10gb")
    assert first["mem_total_bytes"] == 10 * 2**30
    assert first["mem_used_bytes"] == 2**29 + 2048 * 2**20  # its context + its process
    assert (first["sm_active_pct"], first["dram_bw_pct"], first["tensor_pct"],
            first["sm_occupancy_pct"]) == (30.0, 20.0, 5.0, 15.0)
    assert first["pids"] == [b] and first["sm_count"] == 16
    # the driver gives no GPM sample for this instance: each value n/a with the reason
    assert second["profile"] == "3g.40gb" and second["pids"] == []
    assert second["sm_active_pct"] is None and "not supported" in second["missing"]["sm_active_pct"]
    # one metric refused, the others given
    assert third["sm_active_pct"] == 55.0 and third["tensor_pct"] == 12.0
    assert third["dram_bw_pct"] is None and third["missing"]["dram_bw_pct"]
    assert {p["pid"]: p["mig"] for p in one["processes"]} == {b: 0, c: 2}
    assert [p["mig"] for p in zero["processes"]] == [None] and zero["processes"][0]["pid"] == a


def test_exporter_has_a_mig_label(nvml_library, workers):
    a, b, c = workers
    serve = subprocess.Popen([sys.executable, "-m", "gputop", "serve", "--listen", "127.0.0.1:0",
                              "--export-processes", "-d", "0.2"],
                             env=_env(nvml_library, workers), stderr=subprocess.PIPE, text=True)
    try:
        url = serve.stderr.readline().split(" on ", 1)[1].split()[0]
        deadline = time.monotonic() + 60
        while True:
            text = urllib.request.urlopen(url, timeout=10).read().decode()
            if "gputop_mig_sm_active_ratio{" in text or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    lines = text.splitlines()
    assert ('gputop_mig_info{compute_instance="0",gpu="1",gpu_instance="1",mig="0",'
            'profile="1g.10gb",uuid="MIG-5e7a1c2d-0000-4000-8001-000000000000"} 1.0') in lines
    assert 'gputop_mig_sm_active_ratio{gpu="1",mig="0"} 0.3' in lines
    assert 'gputop_mig_sm_active_ratio{gpu="1",mig="2"} 0.55' in lines
    assert not any(ln.startswith('gputop_mig_sm_active_ratio{gpu="1",mig="1"}') for ln in lines)
    assert 'gputop_mig_memory_total_bytes{gpu="1",mig="1"} 4.294967296e+10' in lines
    assert not any(ln.startswith('gputop_gpu_utilization_ratio{gpu="1"}') for ln in lines)
    assert any(ln.startswith("gputop_process_gpu_memory_bytes{") and f'pid="{c}"' in ln
               and 'mig="2"' in ln for ln in lines)


@pytest.fixture()
def recorded(nvml_library, workers, tmp_path):
    """Frames read through the real pynvml, recorded by gputop record."""
    path = tmp_path / "mig.gtrec"
    result = subprocess.run([sys.executable, "-m", "gputop", "record", str(path), "--duration",
                             "2s", "-d", "0.25"], env=_env(nvml_library, workers),
                            capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    recording = Recording(path)
    frames = list(recording.frames())
    recording.close()
    assert len(frames) >= 3
    return frames


async def test_the_dashboard_steps_through_instances(recorded, workers):
    a, b, c = workers
    app = GputopApp(Session("nvml", frames=recorded))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await pilot.press("7")
        await pilot.pause()
        overview = text_of(pane(app, "7"))
        assert "└0 1g.10gb GI1/0" in overview and "└1 3g.40gb GI2/0" in overview
        assert "└2 2g.20gb GI3/0" in overview
        line = next(ln for ln in overview.splitlines() if "└0" in ln)
        assert " 30% " in line and "2.5/10G" in line and "1 process" in line
        await pilot.press("escape")
        await pilot.press("right_square_bracket", "right_square_bracket")  # GPU 1, its MIG 0
        await pilot.pause()
        assert (app.gpu_index, app.mig_index) == (1, 0)
        assert "GPU 1 MIG 0 of 2" in text_of(app.query_one("StatusBar"))
        sm = text_of(pane(app, "2"))
        assert "SM active" in sm and "30%" in sm
        assert "not given per MIG instance" in text_of(pane(app, "1"))
        assert "MIG 0 1g.10gb" in text_of(pane(app, "4"))
        await pilot.press("right_square_bracket")  # MIG 1: no GPM sample given
        await pilot.pause()
        assert app.mig_index == 1
        assert "n/a (GPM MIG sample: not supported" in text_of(pane(app, "2"))
        for _ in range(2):  # MIG 2, then around to GPU 0
            await pilot.press("right_square_bracket")
        await pilot.pause()
        assert (app.gpu_index, app.mig_index) == (0, None)
        await pilot.press("8")
        await pilot.pause()
        rows = text_of(pane(app, "8"))
        assert any(str(c) in line and " 1/2 " in line for line in rows.splitlines())
        # Enter on an instance's row in pane 7 selects it
        await pilot.press("7")
        await pilot.pause()
        for _ in range(4):  # GPU 0, GPU 1, MIG 0, MIG 1, MIG 2
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert (app.gpu_index, app.mig_index) == (1, 2)

