"""The process list (pane 8): rows, sorting, filtering, tree order, and signals sent to
real processes, refused where they must be."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest
from textual import events

from gputop import actions
from gputop.model.processes import (COLUMN_KEYS, FilterError, process_rows, row_filter,
                                    sort_rows, tree_order)
from gputop.schema import Frame, ProcSample
from gputop.session import Session
from gputop.tui.app import GputopApp
from gputop.tui.view_settings import ViewSettings
from tests.conftest import sim_frames
from tests.test_tui import text_of, text_rows


def frame(seq: int, procs, t: float) -> Frame:
    return Frame(seq=seq, time_wall_s=1_800_000_000.0 + t, time_mono_s=t, processes=tuple(procs))


PROCS = [
    ProcSample(pid=10, gpu_index=0, user="bob", cmdline="vllm serve llama", cpu_s=100.0,
               mem_bytes=70 << 30, start_time_s=1_799_999_000.0, container="docker:aaaa"),
    ProcSample(pid=11, gpu_index=0, user="bob", cmdline="python worker.py", ppid=10,
               cpu_s=5.0, mem_bytes=None, start_time_s=1_799_999_500.0),
    ProcSample(pid=12, gpu_index=1, user="alice", cmdline="train.py", ppid=11, cpu_s=1.0,
               mem_bytes=2 << 30, pod="team-a/trainer-0"),
]


def rows_at(later_cpu=(101.5, 5.0, 1.0)):
    moved = [_replace(p, cpu_s=c) for p, c in zip(PROCS, later_cpu)]
    return process_rows(frame(1, moved, 2.0), frame(0, PROCS, 0.0))


def _replace(p, **changes):
    import dataclasses
    return dataclasses.replace(p, **changes)


def test_cpu_percent_comes_from_two_frames_of_the_same_process():
    rows = rows_at()
    cpu = {r.sample.pid: r.cpu_pct for r in rows}
    assert cpu[10] == pytest.approx(75.0) and cpu[11] == 0.0
    assert rows[0].elapsed_s == pytest.approx(1002.0)
    assert rows[2].elapsed_s is None  # no start time: unknown, not 0
    one_frame = process_rows(frame(0, PROCS, 0.0), None)
    assert all(r.cpu_pct is None for r in one_frame)  # one frame: unknown


def test_sorting_puts_unknown_last_in_both_orders():
    rows = rows_at()
    for descending in (True, False):
        order = [r.sample.pid for r in sort_rows(rows, "vram", descending)]
        assert order[-1] == 11, order  # its memory is unknown
    assert [r.sample.pid for r in sort_rows(rows, "vram", True)][:2] == [10, 12]
    assert [r.sample.pid for r in sort_rows(rows, "user", False)] == [12, 10, 11]
    for key in COLUMN_KEYS:  # every column sorts without error
        assert len(sort_rows(rows, key, True)) == 3


def test_filter_is_a_pattern_or_else_a_substring():
    rows = rows_at()
    assert [r.sample.pid for r in rows if row_filter("vllm|train")(r)] == [10, 12]
    assert [r.sample.pid for r in rows if row_filter("TEAM-A")(r)] == [12]  # pod, any case
    assert [r.sample.pid for r in rows if row_filter("docker:")(r)] == [10]
    assert [r.sample.pid for r in rows if row_filter("worker.py [")(r)] == []  # bad regex: text
    assert [r.sample.pid for r in rows if row_filter("(")(r)] == []
    with pytest.raises(FilterError):
        row_filter("x" * 201)


def test_tree_puts_children_under_parents_and_survives_cycles():
    rows = rows_at()
    assert [(r.sample.pid, depth) for r, depth in tree_order(rows)] == [(10, 0), (11, 1), (12, 2)]
    looped = [_replace(r.sample, ppid=12 if r.sample.pid == 10 else r.sample.ppid) for r in rows]
    order = tree_order(process_rows(frame(0, looped, 0.0), None))
    assert sorted(r.sample.pid for r, _ in order) == [10, 11, 12]


# ---------------------------------------------------------------- signals, for real

def sample_of(proc: subprocess.Popen) -> ProcSample:
    p = psutil.Process(proc.pid)
    return ProcSample(pid=proc.pid, gpu_index=0, name=p.name(), user=p.username(),
                      start_time_s=p.create_time())


def test_a_signal_reaches_the_process_it_was_meant_for():
    child = subprocess.Popen(["sleep", "60"])
    try:
        sent, text = actions.send_signal(sample_of(child), "TERM", readonly=False)
        assert sent and text == f"sent SIGTERM to pid {child.pid} (sleep)"
        assert child.wait(timeout=5) == -15
    finally:
        child.kill()


def test_readonly_demo_exited_and_recycled_pids_are_refused():
    child = subprocess.Popen(["sleep", "60"])
    try:
        sample = sample_of(child)
        sent, text = actions.send_signal(sample, "KILL", readonly=True)
        assert not sent and text.startswith("read-only")
        sent, text = actions.send_signal(sample, "KILL", readonly=False, live=False)
        assert not sent and "not a live process" in text
        # the demo's path goes all the way and still sends nothing, even to a real pid
        sent, text = actions.send_signal(sample, "KILL", readonly=False, live=False,
                                         simulated=True)
        assert not sent and text.startswith("demo: SIGKILL not sent")
        recycled = _replace(sample, start_time_s=sample.start_time_s - 3600)
        sent, text = actions.send_signal(recycled, "KILL", readonly=False)
        assert not sent and "PID was reused" in text
        assert child.poll() is None  # none of these touched it
        sent, text = actions.send_signal(sample, "BOGUS", readonly=False)
        assert not sent and child.poll() is None
    finally:
        child.kill()
        child.wait()
    sent, text = actions.send_signal(sample, "TERM", readonly=False)
    assert not sent and text.startswith("no such process")


def test_another_users_process_is_refused_unless_root():
    """gputop run by an ordinary user (uid 65534 here) may not signal root's process: the
    refusal comes from gputop, named, before the kernel is asked."""
    if os.geteuid() != 0:
        pytest.fail("needs root to act as another user")
    victim = subprocess.Popen(["sleep", "60"])
    try:
        code = (  # everything imported first: root's home is unreadable to uid 65534
            "import os, sys, json; from gputop import actions;"
            "from gputop.schema import ProcSample; os.setgid(65534); os.setuid(65534);"
            f"print(json.dumps(actions.send_signal(ProcSample(pid={victim.pid}, gpu_index=0,"
            " user='root'), 'KILL', readonly=False)))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=30, env={**os.environ, "PYTHONPATH": os.getcwd()})
        assert done.returncode == 0, done.stderr
        assert '"refused: pid' in done.stdout and "belongs to root" in done.stdout, done.stdout
        assert victim.poll() is None
        as_root = actions.refusal(sample_of(victim), readonly=False, live=True)
        assert as_root is None  # root may
    finally:
        victim.kill()
        victim.wait()


# ---------------------------------------------------------------- the pane (Pilot)

def app_with(scenario="logprobs-storm", **view):
    return GputopApp(Session(f"demo:{scenario}", frames=sim_frames(scenario, 10)),
                     view=ViewSettings(**view))


def listed_pids(app):
    return [r.sample.pid for r, _ in app._pane("8")._listed]


async def test_sort_keys_header_click_filter_and_tree():
    app = app_with()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("8")
        await pilot.pause()
        pane = app._pane("8")
        assert app.zoomed == "8" and pane.sort_column == "vram" and listed_pids(app)[0] == 4121
        await pilot.press("greater_than_sign")  # htop's > : the next column
        await pilot.pause()
        assert pane.sort_column == "sm"
        await pilot.press("less_than_sign", "less_than_sign")
        await pilot.pause()
        assert pane.sort_column == "gpu"
        # a click on the PID header sorts by PID; again reverses
        await pilot.click(pane, offset=(3, 1))
        await pilot.pause()
        assert pane.sort_column == "pid" and listed_pids(app) == [3377, 4121]
        await pilot.click(pane, offset=(3, 1))
        await pilot.pause()
        assert listed_pids(app) == [4121, 3377]
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"notebook", "enter")
        await pilot.pause()
        assert pane.filter_text == "notebook" and listed_pids(app) == [3377]
        assert "matching /notebook/" in text_rows(pane)[-1]
        await pilot.press("slash", "ctrl+u", "enter")  # an empty filter shows all
        await pilot.pause()
        assert pane.filter_text == "" and len(listed_pids(app)) == 2
        await pilot.press("t")
        await pilot.pause()
        assert pane.tree_view
        await pilot.press("f6")
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # the menu: PID, USER, GPU -> GPU
        await pilot.pause()
        assert pane.sort_column == "gpu"


async def test_readonly_refuses_a_signal_on_the_status_line_before_any_menu():
    app = app_with(readonly=True)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("8", "down", "k")
        await pilot.pause()
        status = text_of(app.query_one("#status"))
        assert "read-only" in status, status
        assert not app.screen.is_modal  # refused before any menu


async def test_a_signal_in_the_demo_is_walked_through_and_not_sent():
    """The demo's processes exist only in the simulator: k goes through the menu and the
    confirmation, then says what it would have done (on main it refused at once)."""
    app = app_with()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("8", "down")  # the second row: alice's notebook
        await pilot.pause()
        assert app._pane("8").selected_row().sample.pid == 3377
        await pilot.press("k")
        await pilot.pause()
        assert app.screen.is_modal  # the signal menu
        await pilot.press("enter")  # its first entry: TERM
        await pilot.pause()
        question = str(app.screen.query_one("Static").render())
        assert "SIGTERM to pid 3377" in question and "nothing will be sent" in question
        await pilot.press("y")
        await pilot.pause()
        assert not app.screen.is_modal
        status = text_of(app.query_one("#status"))
        assert "demo: SIGTERM not sent, pid 3377" in status, status


async def test_tree_groups_workers_under_their_parent_in_the_demo():
    app = app_with("allreduce-straggler")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("8", "t")
        await pilot.pause()
        pane = app._pane("8")
        listed = [(r.sample.pid, r.context, depth) for r, depth in pane._listed]
        # torchrun (5000, no GPU memory) above its four ranks; the notebook alone
        assert listed[0] == (5000, True, 0)
        assert [(pid, depth) for pid, _, depth in listed[1:5]] == [(5001, 1), (5002, 1),
                                                                    (5003, 1), (5004, 1)]
        assert (3377, False, 0) in listed
        rows = text_rows(pane)
        assert "└─ torchrun" in rows[2] and "holds no GPU memory" in rows[1]
        assert "children under their parents" in text_of(app.query_one("#status"))
        await pilot.press("k")  # on the parent's row: refused, it is not a GPU process
        await pilot.pause()
        assert "holds no GPU memory" in text_of(app.query_one("#status"))
        assert not app.screen.is_modal


async def test_mouse_wheel_scrolls_and_click_selects():
    app = app_with("allreduce-straggler")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("8")
        await pilot.pause()
        pane = app._pane("8")
        first = listed_pids(app)[0]
        await pilot.click(pane, offset=(5, 3))  # the second process row
        await pilot.pause()
        assert pane.selected[0] == listed_pids(app)[1] != first
        pane.post_message(events.MouseScrollDown(pane, 5, 5, 0, 1, 0, False, False, False))
        await pilot.pause()
        assert pane.selected[0] == listed_pids(app)[min(4, len(listed_pids(app)) - 1)]


def test_the_picker_names_the_container_or_pod():
    from gputop.tui.picker import candidates

    rows = {c.pid: c.text for c in candidates(tuple(PROCS))}
    assert rows[10].endswith("[docker:aaaa]") and rows[12].endswith("[team-a/trainer-0]")
    assert "[" not in rows[11]


def test_a_backtracking_filter_cannot_freeze_the_list():
    """Another user's command line of 30 a's and a pattern that backtracks exponentially:
    given up on after the time limit, counted as no match."""
    victim = ProcSample(pid=99, gpu_index=0, user="eve", cmdline="a" * 30 + "!")
    started = time.monotonic()
    kept = [r for r in process_rows(frame(0, [victim], 0.0), None) if row_filter("^(a|a)*$")(r)]
    assert kept == [] and time.monotonic() - started < 2


async def test_hostile_owner_and_command_text_reaches_the_screen_escaped():
    """A recording or a remote host can carry any text in a process's command, container or
    pod: pane 8 shows escape sequences as visible text, never sends them to the terminal."""
    evil = ProcSample(pid=7, gpu_index=0, user="eve\x1b[2J", cmdline="x\x1b]0;owned\x07",
                      container="docker:\x1b[31mred", pod="ns/\u202epod", mem_bytes=1 << 30,
                      cpu_s=float("nan"))
    frames = [Frame(seq=i, time_wall_s=1_800_000_000.0 + i, time_mono_s=float(i),
                    gpus=sim_frames("serving", 1)[0].gpus, processes=(evil,)) for i in range(2)]
    app = GputopApp(Session("replay", frames=frames))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("8")
        await pilot.pause()
        shown = text_of(app._pane("8"))
        assert "\x1b" not in shown and "\u202e" not in shown and "\x07" not in shown
        assert "7" in shown and "owned" in shown
