"""A shared GPU's tenants told apart: per-process SM and memory util summed per container,
pod and Slurm job (model/tenants.py), in pane 8's g grouping, snapshot --json and the
exporter's opt-in series."""

from __future__ import annotations

import dataclasses

import pytest

from gputop.export.prometheus import Exporter
from gputop.model import tenants
from gputop.model.derive import derive
from gputop.export.snapshot import snapshot_dict
from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
from gputop.schema import ProcSample
from gputop.session import Session
from gputop.tui.app import GputopApp
from tests.conftest import sim_frames
from tests.test_tui import pane, text_of


def proc(pid, gpu=0, *, pod="", container="", job="", sm=None, mem=None, vram=None, mig=None,
         user="alice"):
    return ProcSample(pid=pid, gpu_index=gpu, pod=pod, container=container, slurm_job=job,
                      sm_util_pct=sm, mem_util_pct=mem, mem_bytes=vram, mig_index=mig, user=user)


SHARED = (  # GPU 0 time-sliced between two pods, one of them in two containers
    proc(10, pod="serving/vllm-a", container="cri-containerd:aaaa", sm=40, mem=20, vram=30 << 30),
    proc(11, pod="serving/vllm-a", container="cri-containerd:bbbb", sm=5, mem=None, vram=2 << 30),
    proc(20, pod="research/train-b", container="cri-containerd:cccc", sm=50, mem=35,
         vram=40 << 30, user="bob"),
    proc(30, sm=None, mem=None, vram=None, user="root"),  # a host process, no sample
    proc(40, gpu=1, job="42", container="slurm:42.0", sm=70, mem=10, vram=8 << 30),
)


def test_sums_per_pod_container_and_job():
    pods = tenants.tenants(SHARED, "pod")
    assert [(t.gpu_index, t.name, t.pids, t.sm_util_pct, t.mem_util_pct, t.mem_bytes)
            for t in pods] == [
        (0, "research/train-b", (20,), 50.0, 35.0, 40 << 30),
        (0, "serving/vllm-a", (10, 11), 45.0, 20.0, 32 << 30),
        (0, "", (30,), None, None, None),  # unknown stays unknown, not 0
        (1, "", (40,), 70.0, 10.0, 8 << 30)]
    assert pods[1].label == "pod serving/vllm-a" and pods[2].label == "no pod"
    containers = tenants.tenants(SHARED, "container")
    assert [t.name for t in containers if t.gpu_index == 0] == [
        "cri-containerd:aaaa", "cri-containerd:bbbb", "cri-containerd:cccc", ""]
    (job,) = [t for t in tenants.tenants(SHARED, "slurm_job") if t.name]
    assert (job.gpu_index, job.pids, job.sm_util_pct) == (1, (40,), 70.0)


def test_owners_put_each_process_in_one_series():
    owners = tenants.owners(SHARED)
    assert sorted(p for t in owners for p in t.pids) == [10, 11, 20, 30, 40]
    assert sum(t.sm_util_pct or 0 for t in owners if t.gpu_index == 0) == 95.0


def test_mig_instances_are_tenants_apart():
    procs = (proc(1, pod="a/x", sm=10, mig=0), proc(2, pod="a/x", sm=20, mig=1))
    assert [(t.mig_index, t.sm_util_pct) for t in tenants.tenants(procs, "pod")] == \
        [(0, 10.0), (1, 20.0)]


@pytest.fixture()
def shared_frames():
    frames = sim_frames("serving", 6)
    return [dataclasses.replace(f, processes=SHARED) for f in frames]


def test_snapshot_and_exporter(shared_frames):
    timeline = Timeline(10, make_fold())
    for frame in shared_frames:
        timeline.append(frame)
    view = derive(timeline, timeline.last_index)
    data = snapshot_dict(view, "demo")
    gpu0 = data["gpus"][0]
    assert [(t["name"], t["sm_util_pct"], t["pids"]) for t in gpu0["tenants"]["pod"]] == [
        ("research/train-b", 50.0, [20]), ("serving/vllm-a", 45.0, [10, 11]), (None, None, [30])]
    assert {p["pid"]: p["mem_util_pct"] for p in gpu0["processes"]}[10] == 20.0
    exporter = Exporter(hostname="h", export_tenants=True)
    exporter.on_view(view)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in exporter.collect() for s in family.samples}
    key = ("gputop_tenant_sm_utilization_ratio",
           (("container", "cri-containerd:aaaa"), ("gpu", "0"), ("mig", ""),
            ("namespace", "serving"), ("pod", "serving/vllm-a"), ("slurm_job", "")))
    assert samples[key] == pytest.approx(0.40)
    assert samples[("gputop_tenant_processes", key[1])] == 1
    # the host process has no sample: no SM series for it (absent, never 0)
    host = (("container", ""), ("gpu", "0"), ("mig", ""), ("namespace", ""), ("pod", ""),
            ("slurm_job", ""))
    assert ("gputop_tenant_sm_utilization_ratio", host) not in samples
    assert samples[("gputop_tenant_processes", host)] == 1
    # opt-in, like --export-processes
    quiet = Exporter(hostname="h")
    quiet.on_view(view)
    assert not any(f.name.startswith("gputop_tenant_") for f in quiet.collect())


async def test_pane_8_groups_by_pod(shared_frames):
    app = GputopApp(Session("demo:serving", frames=shared_frames))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await pilot.press("8")
        await pilot.press("g")  # by container
        await pilot.press("g")  # by pod
        await pilot.pause()
        text = text_of(pane(app, "8"))
        assert "by pod" in text
        line = next(ln for ln in text.splitlines() if "pod serving/vllm-a" in ln)
        assert " 45 " in line and "2 processes" in line and "memory util 20%" in line
        assert any("no pod: 1 process" in ln for ln in text.splitlines())
        assert "pod research/train-b: 1 process, memory util 35%" in text
        await pilot.press("k")  # on a tenant's row: nothing to signal
        await pilot.pause()
        assert "is a group" in text_of(app.query_one("StatusBar"))
        for _ in range(2):  # Slurm job, then no grouping
            await pilot.press("g")
        await pilot.pause()
        assert "pod serving/vllm-a:" not in text_of(pane(app, "8"))
