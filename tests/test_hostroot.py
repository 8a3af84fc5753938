"""gputop inside a PID namespace of its own (a container without --pid=host): with the
host's /proc bind-mounted and --host-root it shows the same processes, containers and pins
as outside; without it, a status line says why the processes are strangers.

Real namespaces (``unshare --pid --fork --mount-proc`` in a private mount namespace), a
real bind mount of the host's /proc, a real cgroup named as Docker names one, and NVML
through the real pynvml over the C stand-in reporting the host PID."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gputop import hostroot
from tests.conftest import need

HERE = Path(__file__).parent
ROOT = HERE.parent



def _env(nvml_library, pid: int) -> dict:
    return dict(os.environ, LD_LIBRARY_PATH=str(nvml_library), NVML_STAND_IN_GPUS="2",
                NVML_STAND_IN_PROCS=f"{pid}:1:2048", PYTHONPATH=str(ROOT))


def _in_namespace(argv: list[str], host_root: Path | None, env: dict,
                  timeout: float = 90) -> subprocess.CompletedProcess:
    """``argv`` in a new PID namespace with its own /proc; ``host_root``: the host's /proc
    bind-mounted at host_root/proc first (in a private mount namespace of its own)."""
    if os.geteuid() != 0:
        pytest.fail("the PID namespace test needs root (the README's test command runs as root)")
    need("unshare")
    inner = "exec unshare --pid --fork --mount-proc " + shlex.join(argv)
    if host_root is not None:
        (host_root / "proc").mkdir(parents=True, exist_ok=True)
        inner = f"mount --bind /proc {shlex.quote(str(host_root / 'proc'))} && " + inner
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", inner],
                          env=env, capture_output=True, text=True, timeout=timeout)


def _snapshot(extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "gputop", "snapshot", "--json", "--samples", "2", "-d", "0.2",
            *extra]


def _processes(data: dict) -> list[tuple]:
    return [(p["pid"], p["name"], p["cmdline"], p["user"], p["container"], p["pod"], p["cgroup"])
            for g in data["gpus"] for p in g["processes"]]


def test_inside_a_pid_namespace_the_host_root_shows_what_the_host_shows(
        nvml_library, process_in_a_container, tmp_path):
    child, container_id = process_in_a_container
    env = _env(nvml_library, child.pid)
    pin = ["--container", container_id[:12]]
    outside = subprocess.run(_snapshot(pin), env=env, capture_output=True, text=True, timeout=90)
    assert outside.returncode == 0, outside.stderr
    host = json.loads(outside.stdout)
    (proc,) = [p for g in host["gpus"] for p in g["processes"]]
    assert proc["name"] == "sleep" and proc["container"] == f"docker:{container_id[:12]}"
    assert host["pinned"]["tree_pids"] == [child.pid]

    inside = _in_namespace(_snapshot([*pin, "--host-root", str(tmp_path)]), tmp_path, env)
    assert inside.returncode == 0, inside.stderr
    seen = json.loads(inside.stdout)
    assert _processes(seen) == _processes(host)
    assert seen["pinned"]["tree_pids"] == host["pinned"]["tree_pids"] == [child.pid]
    assert seen["pinned"]["label"] == host["pinned"]["label"]
    assert seen["sources"]["procfs"]["ok"] is True
    assert str(tmp_path / "proc") in seen["sources"]["procfs"]["detail"]


def test_inside_a_pid_namespace_without_it_a_status_line_says_why(nvml_library, tmp_path):
    sleeper = subprocess.Popen(["sleep", "120"])
    try:
        result = _in_namespace(_snapshot([]), None, _env(nvml_library, sleeper.pid))
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["sources"]["procfs"] == {**data["sources"]["procfs"], "ok": False,
                                         "reason": hostroot.NO_HOST_VIEW}
    (proc,) = [p for g in data["gpus"] for p in g["processes"]]
    assert proc["pid"] == sleeper.pid and proc["name"] == "?"
    assert "--host-root" in proc["cmdline"]  # the row says how, rather than a wrong name


def test_a_host_root_that_is_the_namespace_own_proc_is_refused(nvml_library, tmp_path):
    """--host-root over a /proc of the container's own namespace (the host's was not
    mounted) must not pass for the host's: the status says so."""
    script = ("import os, json, sys; from gputop import hostroot; os.makedirs(sys.argv[1] + "
              "'/proc', exist_ok=True); os.system('mount -t proc proc ' + sys.argv[1] + '/proc');"
              " hostroot.configure(sys.argv[1]); print(json.dumps(hostroot.status()))")
    result = _in_namespace([sys.executable, "-c", script, str(tmp_path)], None,
                           dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr
    visible, why, _ = json.loads(result.stdout)
    assert visible is False and "this container's own" in why


def test_signals_are_refused_across_namespaces(process_in_a_container, tmp_path):
    """kill(2) takes PIDs of the caller's namespace: from inside, the host's PID names
    another process or none, so gputop refuses, and the process lives on."""
    child, _ = process_in_a_container
    script = ("import sys; from gputop import actions, hostroot; from gputop.schema import "
              "ProcSample; hostroot.configure(sys.argv[1]); "
              "import psutil; p = psutil.Process(int(sys.argv[2])); "
              "print(actions.send_signal(ProcSample(pid=p.pid, gpu_index=0, name='sleep', "
              "start_time_s=p.create_time()), 'KILL', readonly=False))")
    result = _in_namespace([sys.executable, "-c", script, str(tmp_path), str(child.pid)],
                           tmp_path, dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 0, result.stderr
    assert "(False," in result.stdout and "another PID namespace" in result.stdout
    assert child.poll() is None


def test_host_root_errors_are_one_line():
    result = subprocess.run([sys.executable, "-m", "gputop", "snapshot",
                             "--host-root", "/nonexistent/host"],
                            capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 2
    assert result.stderr.strip() == "gputop: --host-root /nonexistent/host: no such directory"
    env = dict(os.environ, PYTHONPATH=str(ROOT), GPUTOP_HOST_ROOT="/tmp")
    result = subprocess.run([sys.executable, "-m", "gputop", "serve"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2 and "no proc filesystem at /tmp/proc" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    # the demo reads no process of this machine: the setting is not in its way
    result = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--demo", "serving"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr


def test_paths_follow_the_host_root(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "stat").write_text("cpu 0 0 0 0\n")
    try:
        hostroot.configure(str(tmp_path))
        import psutil

        assert psutil.PROCFS_PATH == str(tmp_path / "proc")
        assert hostroot.proc(42, "cgroup") == str(tmp_path / "proc" / "42" / "cgroup")
        assert hostroot.path("/run/containerd") == str(tmp_path / "run" / "containerd")
        assert hostroot.own_pid() == -1  # a plain directory: nothing of ours in it
        assert hostroot.status()[0] is False
    finally:
        hostroot.configure(None)
    assert hostroot.proc(1) == "/proc/1" and hostroot.own_pid() == os.getpid()
