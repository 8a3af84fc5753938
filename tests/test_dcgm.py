"""SM activity from a (real, local) dcgm-exporter endpoint merged into NVML's GPUs."""

import socket

import pytest

from gputop.sampler import Sampler
from gputop.sources.dcgm import DcgmSource
from gputop.sources.nvml import NvmlSource
from tests.fake_nvml import FakeNvml, hopper_and_ampere
from tests.http_server import Response, ScriptedServer

DCGM_TEXT = """\
# HELP DCGM_FI_PROF_SM_ACTIVE Ratio of cycles an SM has at least 1 warp assigned.
# TYPE DCGM_FI_PROF_SM_ACTIVE gauge
DCGM_FI_PROF_SM_ACTIVE{gpu="1",UUID="GPU-fake-1",device="nvidia1",modelName="NVIDIA A100-SXM4-40GB",Hostname="h"} 0.452
# TYPE DCGM_FI_PROF_SM_OCCUPANCY gauge
DCGM_FI_PROF_SM_OCCUPANCY{gpu="1",UUID="GPU-fake-1",device="nvidia1",modelName="NVIDIA A100-SXM4-40GB",Hostname="h"} 0.21
# TYPE DCGM_FI_PROF_DRAM_ACTIVE gauge
DCGM_FI_PROF_DRAM_ACTIVE{gpu="1",UUID="GPU-fake-1",device="nvidia1",modelName="NVIDIA A100-SXM4-40GB",Hostname="h"} 0.3
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-fake-1",device="nvidia1",modelName="NVIDIA A100-SXM4-40GB",Hostname="h"} 40
"""




def test_dcgm_fills_sm_activity_nvml_cannot(monkeypatch, workers):
    FakeNvml(hopper_and_ampere(workers[0].pid, workers[1].pid)).install(monkeypatch)
    with ScriptedServer([Response(DCGM_TEXT)]) as server:
        sampler = Sampler([NvmlSource(), DcgmSource(server.url)], 0.5)
        sampler.open()
        frame = sampler.tick()
        sampler.close()
    a100 = frame.gpus[1]
    assert (a100.sm_active_pct, a100.sm_occupancy_pct, a100.dram_bw_pct) == (45.2, 21.0, 30.0)
    assert "sm_active_pct" not in a100.missing
    assert a100.util_gpu_pct == 40.0 and a100.name == "NVIDIA A100-SXM4-40GB"
    assert frame.sources["dcgm"].ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("response, reason", [
    (Response("<html><body>Grafana</body></html>", content_type="text/html"), "returned HTML"),
    (Response("oops", status=500), "HTTP 500"),
    (Response("# TYPE x gauge\nx{gpu=\"0\" 1\n"), "is not Prometheus text"),
    (Response("# TYPE up gauge\nup 1\n"), "no DCGM_FI_PROF_* metrics"),
    (Response(b"\xff\xfe\x00binary\x00"), "binary data"),
    (Response(DCGM_TEXT, delay_s=1.5), "no answer"),
])
def test_broken_endpoints_become_reasons(response, reason):
    with ScriptedServer([response]) as server:
        sampler = Sampler([DcgmSource(server.url, timeout_s=0.3)], 1.0, source_timeout_s=0.8)
        sampler.open()
        frame = sampler.tick()
        sampler.close()
    status = frame.sources["dcgm"]
    assert not status.ok and reason in status.reason


def test_nothing_listening():
    url = f"http://127.0.0.1:{free_port()}/metrics"
    sampler = Sampler([DcgmSource(url)], 1.0)
    sampler.open()
    frame = sampler.tick()
    sampler.close()
    assert "cannot reach" in frame.sources["dcgm"].reason
    assert "refused" in frame.sources["dcgm"].reason.lower()
