"""Slurm jobs named from the cgroups slurmstepd makes: the v1 layout
(``/slurm/uid_U/job_J/step_S/task_T`` under each controller) and the v2 one
(``/system.slice/slurmstepd.scope/job_J/step_S/user/task_T``), made for real by the test
and entered by a real process; ``--slurm-job`` pins to one, the snapshot and the exporter
name it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from gputop.sources import cgroup
from gputop.sources.cgroup import owner_from_cgroup, process_owner
from gputop.sources.proctree import Pin, PinError, owner_matches, pin_owner, resolve_roots

HERE = Path(__file__).parent
ROOT = HERE.parent
JOB = "4242"


@pytest.mark.parametrize("text, job, step, uid", [
    ("12:pids:/slurm/uid_1000/job_42/step_0/task_0\n1:name=systemd:/system.slice/"
     "slurmd.service\n0::/\n", "42", "0", 1000),
    ("4:memory:/slurm_node07/uid_5/job_7/step_batch/task_0\n", "7", "batch", 5),
    ("0::/system.slice/slurmstepd.scope/job_42/step_extern/user/task_special\n", "42",
     "extern", None),
    ("0::/system.slice/node07_slurmstepd.scope/job_9/step_3/user/task_1\n", "9", "3", None),
    ("0::/system.slice/slurmstepd.scope/job_42\n", "42", "", None),
    ("0::/../../system.slice/slurmstepd.scope/job_3/step_0/user/task_0\n", "3", "0", None),
])
def test_slurm_layouts(text, job, step, uid):
    owner = owner_from_cgroup(text, root="/nonexistent")
    assert (owner.slurm_job, owner.slurm_step, owner.slurm_uid) == (job, step, uid)
    assert owner.runtime == "slurm"
    assert owner.container == f"slurm:{job}.{step}" if step else f"slurm:{job}"


@pytest.mark.parametrize("text", [
    "0::/user.slice/job_42/step_0\n",  # job_N somewhere else is no job
    "12:pids:/uid_1000/job_42/step_0\n",  # no slurm root above the uid
    "0::/system.slice/slurmstepd.scope/system\n",  # slurmstepd itself
    # a user's delegated subtree, named to claim someone's job
    "0::/user.slice/user-1001.slice/user@1001.service/app.slice/slurmstepd.scope/job_42/step_0\n",
    "12:pids:/user.slice/slurm/uid_0/job_42/step_0\n",
])
def test_not_slurm(text):
    owner = owner_from_cgroup(text, root="/nonexistent")
    assert owner.slurm_job == "" and not owner.container.startswith("slurm:")


def test_a_container_in_a_job_keeps_both():
    cid = "ab" * 32
    owner = owner_from_cgroup(f"0::/system.slice/slurmstepd.scope/job_5/step_0/user/task_0/"
                              f"docker-{cid}.scope\n", root="/nonexistent")
    assert owner.container_id == cid and owner.slurm_job == "5" and owner.job == "5.0"


def test_slurm_pins():
    owner = owner_from_cgroup("0::/system.slice/slurmstepd.scope/job_42/step_1/user/task_0\n")
    assert owner_matches(owner, pin_owner(slurm_job="42"))
    assert owner_matches(owner, pin_owner(slurm_job="42.1"))
    assert not owner_matches(owner, pin_owner(slurm_job="42.0"))
    assert not owner_matches(owner, pin_owner(slurm_job="4"))
    for bad in ("", "job_42", "42.", "42; rm", "4" * 30):
        with pytest.raises(PinError, match="--slurm-job expects"):
            pin_owner(slurm_job=bad)


# ---------------------------------------------------------------- real cgroups

def _v1_base() -> Path | None:
    for base in ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/freezer"):
        if os.path.exists(os.path.join(base, "cgroup.procs")) and \
                not os.path.exists(os.path.join(base, "cgroup.controllers")):
            return Path(base)
    return None


def _v2_base(tmp_path: Path):
    """The unified hierarchy: where the host mounts it, else mounted here for the test
    (one hierarchy per machine: the directories made are removed after)."""
    for base in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(os.path.join(base, "cgroup.controllers")):
            return Path(base), None
    mount = tmp_path / "cgroup2"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "cgroup2", "none", str(mount)]).returncode != 0:
        return None, None
    return mount, mount


def _enter(leaf: Path):
    leaf.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen(["sleep", "300"])
    (leaf / "cgroup.procs").write_text(str(child.pid))
    return child


def _remove(leaf: Path, stop: Path) -> None:
    for _ in range(50):
        try:
            path = leaf
            while path != stop:
                path.rmdir()
                path = path.parent
            return
        except OSError:
            time.sleep(0.1)


@pytest.fixture(params=["v1", "v2"])
def process_in_a_job(request, tmp_path):
    if os.geteuid() != 0:
        pytest.fail("the Slurm cgroup test needs root (the README's test command runs as root)")
    unmount = None
    if request.param == "v1":
        base = _v1_base()
        if base is None:
            pytest.fail("no cgroup v1 hierarchy to make slurm/uid_U/job_J in")
        top = base / "slurm"
        leaf = top / "uid_0" / f"job_{JOB}" / "step_0" / "task_0"
    else:
        base, unmount = _v2_base(tmp_path)
        if base is None:
            pytest.fail("cannot mount a cgroup2 hierarchy for the v2 layout")
        top = base / "system.slice" / "slurmstepd.scope"
        leaf = top / f"job_{JOB}" / "step_0" / "user" / "task_0"
    existed = top.exists()
    child = _enter(leaf)
    try:
        yield child, request.param
    finally:
        child.kill()
        child.wait()
        _remove(leaf, top if existed else top.parent)
        if unmount is not None:
            subprocess.run(["umount", str(unmount)])


def test_a_real_job_cgroup_names_the_job_and_pins_it(process_in_a_job):
    child, layout = process_in_a_job
    cgroup._cache.clear()
    owner = process_owner(child.pid)
    assert (owner.slurm_job, owner.slurm_step) == (JOB, "0"), owner
    assert owner.container == f"slurm:{JOB}.0"
    assert owner.slurm_uid == (0 if layout == "v1" else None)
    assert [p.pid for p in resolve_roots(Pin(slurm_job=JOB))] == [child.pid]
    assert [p.pid for p in resolve_roots(Pin(slurm_job=f"{JOB}.0"))] == [child.pid]
    assert resolve_roots(Pin(slurm_job=f"{JOB}.1")) == []



def test_snapshot_and_exporter_name_the_job(process_in_a_job, nvml_library):
    child, _ = process_in_a_job
    other = subprocess.Popen(["sleep", "300"])  # a process outside any job, same GPU
    env = dict(os.environ, LD_LIBRARY_PATH=str(nvml_library), NVML_STAND_IN_GPUS="1",
               NVML_STAND_IN_PROCS=f"{child.pid}:0:2048:30:5,{other.pid}:0:1024:20:4",
               PYTHONPATH=str(ROOT))
    try:
        snap = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json", "--samples",
                               "2", "-d", "0.2", "--slurm-job", JOB], env=env,
                              capture_output=True, text=True, timeout=90)
        assert snap.returncode == 0, snap.stderr
        data = json.loads(snap.stdout)
        (gpu,) = data["gpus"]
        (proc,) = gpu["processes"]  # pinned to the job: the other process is not listed
        assert (proc["pid"], proc["slurm_job"], proc["slurm_step"], proc["container"]) == \
            (child.pid, JOB, "0", f"slurm:{JOB}.0")
        assert data["pinned"]["tree_pids"] == [child.pid]
        (job,) = gpu["tenants"]["slurm_job"]
        assert job == {**job, "name": JOB, "pids": [child.pid], "sm_util_pct": 30.0,
                       "mem_util_pct": 5.0, "mem_bytes": 2048 * 2**20}
        text = _scrape(env)
    finally:
        other.kill()
        other.wait()
    line = next(ln for ln in text.splitlines()
                if ln.startswith("gputop_tenant_sm_utilization_ratio{") and f'slurm_job="{JOB}"' in ln)
    assert line.endswith(" 0.3")
    assert any(ln.startswith("gputop_tenant_sm_utilization_ratio{") and 'slurm_job=""' in ln
               and ln.endswith(" 0.2") for ln in text.splitlines())
    assert any(ln.startswith("gputop_process_gpu_memory_bytes{") and f'slurm_job="{JOB}"' in ln
               for ln in text.splitlines())


def _scrape(env: dict) -> str:
    serve = subprocess.Popen([sys.executable, "-m", "gputop", "serve", "--listen", "127.0.0.1:0",
                              "--export-tenants", "--export-processes", "-d", "0.2"],
                             env=env, stderr=subprocess.PIPE, text=True)
    try:
        line = serve.stderr.readline()
        url = line.split(" on ", 1)[1].split()[0]
        deadline = time.monotonic() + 60
        while True:
            text = urllib.request.urlopen(url, timeout=10).read().decode()
            if "gputop_tenant_sm_utilization_ratio{" in text or time.monotonic() > deadline:
                return text
            time.sleep(0.2)
    finally:
        serve.terminate()
        serve.wait(timeout=30)
