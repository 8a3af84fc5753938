"""Issue 14's habits in a real terminal (tmux): the overview of 8 GPUs at 200x50 and 80x24,
killing a child of a test process from the process list (and being refused with
--readonly), a process in a cgroup made by the test shown with its container id and
pinned by it, --no-mouse leaving the mouse to the terminal, a bad config refused."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.test_terminal import Terminal

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "tests" / "stand_in" / "fake_nvml_gputop.py"
ENV = {"TERM": "xterm-256color", "TZ": "UTC", "PYTHONPATH": str(ROOT),
       "XDG_CONFIG_HOME": "/nonexistent-gputop-test"}


def demo(tmp_path, *args, width=160, height=45, env=None) -> Terminal:
    return Terminal(" ".join([shlex.quote(sys.executable), "-m", "gputop", *args]),
                    width=width, height=height, env={**ENV, **(env or {})}, tmp_path=tmp_path)


def live(tmp_path, pids: list[int], *args, width=160, height=45) -> Terminal:
    """gputop's live mode over a fake NVML that lists ``pids`` as GPU processes."""
    spec = tmp_path / "nvml.json"
    spec.write_text(json.dumps({"gpus": [{"procs": [[pid, 4 + i] for i, pid in enumerate(pids)]},
                                         {"procs": []}]}))
    command = " ".join([shlex.quote(sys.executable), shlex.quote(str(LAUNCHER)), *args])
    return Terminal(command, width=width, height=height,
                    env={**ENV, "FAKE_NVML_SPEC": str(spec)}, tmp_path=tmp_path)


def quit_ok(term: Terminal) -> None:
    term.keys("q")
    assert term.exit_status() == 0


@pytest.mark.parametrize("width, height", [(200, 50), (80, 24)])
def test_overview_of_8_gpus_in_a_real_terminal(tmp_path, width, height):
    term = demo(tmp_path, "--demo", "allreduce-straggler", "--gpus", "8", "--pane", "7",
                width=width, height=height)
    try:
        screen = term.wait_for(" 7 ", timeout=30)
        screen = term.wait_for("/80G")
        rows = [line for line in screen.splitlines() if "/80G" in line]
        assert len(rows) == 8, screen
        assert all("%" in r and "W" in r for r in rows), screen
        if width >= 200:
            assert "NVLINK" in screen and "XID" in screen and "FAN" in screen, screen
        term.keys("Down", "Down", "Enter")
        screen = term.wait_for("GPU 2 of 8")
        assert "1 GPU-Util" in screen  # back on the grid (80x24: pane 1 alone)
        quit_ok(term)
    finally:
        term.close()


@pytest.fixture
def parent_and_child():
    """A test process with a child, as a launcher and its GPU worker."""
    # the parent outlives its child (it reaps it and carries on), as a launcher would
    parent = subprocess.Popen(["bash", "-c", "sleep 300 & while :; do wait; sleep 0.2; done"])
    deadline = time.monotonic() + 10
    while not psutil.Process(parent.pid).children() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = psutil.Process(parent.pid).children()[0]
    yield parent, child
    parent.kill()
    for p in (child,):
        try:
            p.kill()
        except psutil.Error:
            pass
    parent.wait()


def test_kill_a_child_from_the_process_list(tmp_path, parent_and_child):
    parent, child = parent_and_child
    term = live(tmp_path, [parent.pid, child.pid], "--pane", "8", "-d", "0.5")
    try:
        term.wait_for(f"{child.pid} ", timeout=30)
        term.keys("t")  # the tree: the child under its parent
        term.wait_for("└─ sleep 300")
        term.keys("Down")  # the child, below its parent
        time.sleep(0.5)
        term.keys("k")
        term.wait_for("SIGTERM")
        term.keys("Enter")  # the menu's first entry: TERM
        screen = term.wait_for("?", timeout=10)
        assert f"pid {child.pid}" in screen and "sleep 300" in term.wait_for("confirm")
        term.keys("y")
        term.wait_for(f"sent SIGTERM to pid {child.pid} (sleep)")
        child.wait(timeout=10)  # gone (reaped by its parent); raises if still running
        assert not child.is_running()
        assert parent.poll() is None  # only the child
        quit_ok(term)
    finally:
        term.close()


def test_readonly_refuses_on_the_status_line(tmp_path, parent_and_child):
    parent, child = parent_and_child
    term = live(tmp_path, [child.pid], "--pane", "8", "--readonly", "-d", "0.5")
    try:
        term.wait_for(f"{child.pid} ", timeout=30)
        term.keys("F9")
        term.wait_for("read-only: actions are disabled")
        assert child.is_running() and child.status() != "zombie"
        quit_ok(term)
    finally:
        term.close()


def test_a_process_in_a_test_cgroup_shows_its_container_and_pins(tmp_path,
                                                                 process_in_a_container):
    proc, container_id = process_in_a_container
    term = live(tmp_path, [proc.pid], "--pane", "8", "-d", "0.5")
    try:
        screen = term.wait_for(f"docker:{container_id[:12]}", timeout=30)
        assert str(proc.pid) in screen
        quit_ok(term)
    finally:
        term.close()
    spec = tmp_path / "nvml.json"
    done = subprocess.run([sys.executable, str(LAUNCHER), "snapshot", "--samples", "2", "-d",
                           "0.3", "--container", container_id[:8]], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **ENV,
                                                      "FAKE_NVML_SPEC": str(spec)})
    assert done.returncode == 0, done.stderr
    snap = json.loads(done.stdout)
    listed = snap["gpus"][0]["processes"]
    assert listed and listed[0]["container"] == f"docker:{container_id[:12]}"
    assert "/docker/" in listed[0]["cgroup"]
    assert snap["pinned"]["pids"] == [proc.pid]


def test_no_mouse_leaves_the_mouse_to_the_terminal(tmp_path):
    flags = {}
    for args in ((), ("--no-mouse",)):
        term = demo(tmp_path, "--demo", "serving", *args)
        try:
            term.wait_for("GPU-Util", timeout=30)
            time.sleep(0.5)
            flags[args] = term.tmux("display", "-p", "-t", term.name, "#{mouse_any_flag}").stdout.strip()
            quit_ok(term)
        finally:
            term.close()
    assert flags[()] == "1" and flags[("--no-mouse",)] == "0", flags


def test_a_bad_config_is_refused_in_the_terminal(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('theme = "dark"\nwindow_s = -3\n')
    term = demo(tmp_path, "--demo", "serving", env={"GPUTOP_CONFIG": str(config)})
    try:
        screen = term.wait_for("gputop: config", timeout=30)
        assert "line 2: window_s" in screen and "Traceback" not in screen
        assert term.exit_status() == 2
    finally:
        term.close()
