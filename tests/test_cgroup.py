"""Which container, unit or pod owns a GPU process: /proc/PID/cgroup texts as the runtimes
write them, the runtimes' state files for pod names, and a real cgroup made by the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

import pytest

from gputop.sources import cgroup
from gputop.sources.cgroup import cpu_quota, owner_from_cgroup, process_owner
from gputop.model.derive import derive
from gputop.sources.proctree import (Pin, PinError, PinState, ProcTreeSource, owner_matches,
                                     pin_owner, pin_pid, resolve_roots, tree_cpu)
from gputop.tui.panes.host import quota_row
from tests.conftest import tick_timeline

ID = "3f2a1b9c0d1e" + "4" * 52
POD_UID = "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"


def v2(path: str) -> str:
    return f"0::{path}\n"


def v1(path: str, unified: str = "/") -> str:
    """A hybrid host as this one: v1 controllers, the unified hierarchy at /."""
    return (f"12:pids:{path}\n11:memory:{path}\n1:name=systemd:{path}\n0::{unified}\n")


@pytest.mark.parametrize("text, runtime", [
    (v2(f"/system.slice/docker-{ID}.scope"), "docker"),
    (v2(f"/docker/{ID}"), "docker"),
    (v1(f"/docker/{ID}"), "docker"),
    (v2(f"/machine.slice/libpod-{ID}.scope/container"), "podman"),
    (v2(f"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{ID}.scope"),
     "podman"),
    (v2(f"/system.slice/crio-{ID}.scope"), "cri-o"),
    (v2(f"/nerdctl.slice/nerdctl-{ID}.scope"), "nerdctl"),
])
def test_container_runtimes_are_named_with_a_short_id(text, runtime):
    owner = owner_from_cgroup(text, root="/nonexistent")
    assert owner.runtime == runtime and owner.container_id == ID
    assert owner.container == f"{runtime}:{ID[:12]}" and owner.pod == ""


def test_kubernetes_pods_systemd_and_cgroupfs_drivers():
    systemd = v2("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                 f"{POD_UID.replace('-', '_')}.slice/cri-containerd-{ID}.scope")
    owner = owner_from_cgroup(systemd, root="/nonexistent")
    assert (owner.runtime, owner.pod_uid, owner.container_id) == ("cri-containerd", POD_UID, ID)
    assert owner.pod == f"pod {POD_UID}"  # no runtime state readable: the UID, not a guess
    cgroupfs = v1(f"/kubepods/besteffort/pod{POD_UID}/{ID}")
    owner = owner_from_cgroup(cgroupfs, root="/nonexistent")
    assert (owner.runtime, owner.pod_uid, owner.container_id) == ("kubepods", POD_UID, ID)


def test_pod_name_from_the_oci_bundle_annotations(tmp_path):
    bundle = tmp_path / "run/containerd/io.containerd.runtime.v2.task/k8s.io" / ID
    bundle.mkdir(parents=True)
    (bundle / "config.json").write_text(json.dumps({"annotations": {
        "io.kubernetes.cri.sandbox-name": "vllm-llama-7d9f",
        "io.kubernetes.cri.sandbox-namespace": "serving",
        "io.kubernetes.cri.container-name": "vllm"}}))
    owner = owner_from_cgroup(v2(f"/kubepods.slice/kubepods-pod{POD_UID.replace('-', '_')}"
                                 f".slice/cri-containerd-{ID}.scope"), root=str(tmp_path))
    assert owner.pod == "serving/vllm-llama-7d9f" and owner.container_name == "vllm"


def test_pod_name_from_the_kubelet_directory_and_docker_names(tmp_path):
    pod = tmp_path / "var/lib/kubelet/pods" / POD_UID
    token = pod / "volumes/kubernetes.io~projected/kube-api-access-x2x9z"
    token.mkdir(parents=True)
    (token / "namespace").write_text("training\n")
    (pod / "etc-hosts").write_text("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"
                                   "10.4.1.7\ttrainer-0\n")
    owner = owner_from_cgroup(v1(f"/kubepods/pod{POD_UID}/{ID}"), root=str(tmp_path))
    assert owner.pod == "training/trainer-0"
    docker = tmp_path / "var/lib/docker/containers" / ID
    docker.mkdir(parents=True)
    (docker / "config.v2.json").write_text(json.dumps({"Name": "/bench-run", "Config": {}}))
    assert owner_from_cgroup(v2(f"/docker/{ID}"), root=str(tmp_path)).container_name == "bench-run"


def test_hostile_state_files_are_not_trusted(tmp_path):
    bundle = tmp_path / "run/containerd/io.containerd.runtime.v2.task/k8s.io" / ID
    bundle.mkdir(parents=True)
    (bundle / "config.json").write_text("[not json")
    owner = owner_from_cgroup(v2(f"/system.slice/cri-containerd-{ID}.scope"), root=str(tmp_path))
    assert owner.container_id == ID and owner.pod == ""
    os.mkfifo(tmp_path / "fifo")
    (bundle / "config.json").unlink()
    (bundle / "config.json").symlink_to(tmp_path / "fifo")
    started = time.monotonic()
    owner_from_cgroup(v2(f"/system.slice/cri-containerd-{ID}.scope"), root=str(tmp_path))
    assert time.monotonic() - started < 2  # a FIFO must not block the sampler


def test_systemd_units_and_plain_processes():
    owner = owner_from_cgroup(v2("/system.slice/jupyter.service"))
    assert owner.container == "systemd:jupyter.service" and owner.cgroup == "/system.slice/jupyter.service"
    assert owner_from_cgroup(v2("/")).container == ""
    assert owner_from_cgroup(v2("/init.scope")).container == ""


def test_pin_matching_by_id_prefix_name_pod():
    owner = owner_from_cgroup(v2(f"/docker/{ID}"), root="/nonexistent")
    assert owner_matches(owner, pin_owner(container=ID[:6]))
    assert owner_matches(owner, pin_owner(container=f"docker:{ID[:12]}"))
    assert not owner_matches(owner, pin_owner(container="abc"))  # too short to be a prefix
    assert not owner_matches(owner, pin_owner(pod="serving/x"))
    with pytest.raises(PinError):
        pin_owner(container="  ")


# ---------------------------------------------------------------- a real cgroup
# (the process_in_a_container fixture is in conftest.py: the terminal tests use it too)

def test_a_real_cgroup_names_the_container_and_pins_it(process_in_a_container):
    child, container_id = process_in_a_container
    cgroup._cache.clear()
    owner = process_owner(child.pid)
    assert owner.container == f"docker:{container_id[:12]}", owner
    assert owner.container_id == container_id and "/docker/" in owner.cgroup
    roots = resolve_roots(Pin(container=container_id[:12]))
    assert [p.pid for p in roots] == [child.pid]
    assert process_owner(os.getpid()).container_id != container_id


# ---------------------------------------------------------------- a real CPU quota

def _quota_cgroup(name: str) -> Path:
    """A cgroup with the cpu controller: v2's where it is enabled, else v1's."""
    v2 = Path("/sys/fs/cgroup")
    if "cpu" in (v2 / "cgroup.subtree_control").read_text().split() \
            if (v2 / "cgroup.subtree_control").exists() else False:
        path = v2 / name
        path.mkdir()
        (path / "cpu.max").write_text("20000 100000")
        return path
    path = v2 / "cpu" / name
    path.mkdir()
    (path / "cpu.cfs_quota_us").write_text("20000")
    (path / "cpu.cfs_period_us").write_text("100000")
    return path


@pytest.fixture
def busy_in_a_quota():
    """A busy loop in a cgroup limited to a fifth of a core."""
    if os.geteuid() != 0:
        pytest.fail("the cgroup test needs root (the README's test command runs as root)")
    path = _quota_cgroup(f"gputop-quota-{os.getpid()}-{os.urandom(3).hex()}")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        (path / "cgroup.procs").write_text(str(busy.pid))
        yield busy
    finally:
        busy.kill()
        busy.wait()
        for _ in range(50):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def test_a_pinned_tree_under_a_quota_shows_it_held_back(busy_in_a_quota):
    """Pinned, the tree's quota and the share of periods it was held back in reach the
    view pane 6 draws from, and its row says so."""
    time.sleep(0.3)
    timeline = tick_timeline([ProcTreeSource(PinState(pin_pid(busy_in_a_quota.pid)))], 3, 0.5,
                             sleep_s=0.5)
    pinned = derive(timeline, timeline.last_index).pinned
    assert pinned.sample.cpu_quota_cores == 0.2
    assert pinned.throttled_share is not None and 0.0 < pinned.throttled_share <= 1.0
    text = "".join(ch for ch, _ in quota_row(0.2, pinned.throttled_share, 80))
    assert text.startswith("CPU quota 0.2 cores: held back in ") and "% of periods" in text


def test_a_real_cpu_quota_is_read_with_the_periods_it_held_back():
    """A busy loop in a cgroup limited to a fifth of a core: the kernel throttles it in
    most of its CFS periods.  gputop reads the quota and the periods from the cgroup the
    process is in (v2 cpu.max/cpu.stat, or v1's cpu controller), as the engine's tree;
    moved there while gputop watches, at once (where a quota sits is cached per cgroup)."""
    if os.geteuid() != 0:
        pytest.fail("the cgroup test needs root (the README's test command runs as root)")
    path = _quota_cgroup(f"gputop-quota-{os.getpid()}")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        assert cpu_quota(busy.pid) is None  # where it started, nothing limits it
        (path / "cgroup.procs").write_text(str(busy.pid))
        time.sleep(1.5)
        first = cpu_quota(busy.pid)
        time.sleep(1.0)
        quota = tree_cpu([psutil.Process(busy.pid)]).quota
        assert first is not None and quota is not None, (first, quota)
        assert quota.cores == 0.2
        periods, held = quota.periods - first.periods, quota.throttled - first.throttled
        # (how many periods it ran out in depends on the CPU it got: at least some)
        assert 3 <= periods <= 15 and 1 <= held <= periods, (first, quota)
    finally:
        busy.kill()
        busy.wait()
        for _ in range(50):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)
