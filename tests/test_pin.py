"""Pinning to a real process tree: children join and leave, exits, re-pinning, the picker."""

import subprocess
import sys
import textwrap
import time
import uuid

import psutil
import pytest

from gputop.model.derive import derive
from gputop.export.snapshot import snapshot_dict
from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
from gputop.sources.engine import EngineSource
from gputop.sources.nvml import NvmlSource
from gputop.sources.proctree import (Pin, PinError, PinState, ProcTreeSource, pin_pattern,
                                     pin_pid)
from tests.conftest import tick_timeline
from tests.fake_nvml import FakeGpu, FakeNvml, FakeProc, GiB
from tests.test_engine import text as metrics_text

TREE = textwrap.dedent("""
    import http.server, os, subprocess, sys, threading, time
    marker, metrics, control = sys.argv[1], sys.argv[2], sys.argv[3]
    body = open(metrics).read().encode()
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.send_header("Content-Length", str(len(body)))
            self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass
    server = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    spin = "import time\\nt=time.time()\\nwhile True: pass"
    children = [subprocess.Popen([sys.executable, "-c", spin, marker + "-busy"]),
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)",
                                  marker + "-idle"])]
    print(server.server_address[1], children[0].pid, children[1].pid, flush=True)
    while True:
        if os.path.exists(control):
            os.remove(control)
            children.append(subprocess.Popen([sys.executable, "-c",
                                              "import time; time.sleep(300)", marker + "-late"]))
            print(children[-1].pid, flush=True)
        time.sleep(0.05)
""")


class Tree:
    """A parent serving metrics on a port, with a CPU-burning child and an idle child."""

    def __init__(self, tmp_path, marker=None):
        self.marker = marker or f"pintest-{uuid.uuid4().hex[:8]}"
        self.control = tmp_path / f"{self.marker}.spawn"
        script = tmp_path / "tree.py"
        script.write_text(TREE)
        metrics = tmp_path / "metrics.txt"
        metrics.write_text(metrics_text("vllm_v1.txt"))
        self.proc = subprocess.Popen([sys.executable, str(script), self.marker, str(metrics),
                                      str(self.control), "vllm-serve-like"],
                                     stdout=subprocess.PIPE, text=True)
        port, busy, idle = self.proc.stdout.readline().split()
        self.port, self.busy, self.idle = int(port), int(busy), int(idle)

    def spawn_child(self) -> int:
        self.control.write_text("go")
        return int(self.proc.stdout.readline())

    def kill(self):
        try:
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                child.kill()
        except psutil.Error:
            pass
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def tree(tmp_path):
    trees = []

    def make(marker=None):
        t = Tree(tmp_path, marker)
        trees.append(t)
        return t

    yield make
    for t in trees:
        t.kill()


def poll(source):
    return source.poll(time.monotonic()).pinned


def test_pin_by_pid_follows_children_and_their_cpu(tree):
    t = tree()
    source = ProcTreeSource(PinState(pin_pid(t.proc.pid)))
    first = poll(source)
    assert first.root_pids == (t.proc.pid,)
    assert set(first.tree_pids) == {t.proc.pid, t.busy, t.idle}
    assert t.port in first.listening_ports
    assert "tree.py" in first.label
    late = t.spawn_child()
    time.sleep(0.5)
    second = poll(source)
    assert late in second.tree_pids  # a new worker child joins at once
    assert second.cpu_s > first.cpu_s
    busiest = max(second.threads, key=lambda th: th.cpu_s)
    assert busiest.pid == t.busy
    psutil.Process(t.idle).kill()  # its parent never reaps it: a zombie is no member
    time.sleep(0.3)
    assert t.idle not in poll(source).tree_pids


def test_the_busy_thread_shows_in_the_host_view(tree):
    t = tree()
    state = PinState(pin_pid(t.proc.pid))
    spinner = psutil.Process(t.busy)
    before, wall = sum(spinner.cpu_times()[:2]), time.monotonic()
    timeline = tick_timeline([ProcTreeSource(state)], 2, 0.5, sleep_s=0.5)
    own_pct = 100 * (sum(spinner.cpu_times()[:2]) - before) / (time.monotonic() - wall)
    pinned = derive(timeline, timeline.last_index).pinned
    # the spinning child burns what the scheduler gives it (one core on an idle machine,
    # less on a crowded one): judged against its own record, not a fixed share
    thread, cpu = pinned.threads[0]
    assert thread.pid == t.busy and own_pct > 5
    assert cpu >= 0.5 * own_pct and pinned.cpu_pct >= 0.9 * cpu
    assert pinned.voluntary_per_s is not None and pinned.involuntary_per_s is not None
    assert "children" in pinned.title


def test_exit_is_noticed_and_a_pattern_repins_a_restart(tree):
    t = tree(marker=f"repin-{uuid.uuid4().hex[:6]}")
    source = ProcTreeSource(PinState(pin_pattern(t.marker)))
    first = poll(source)
    assert first.root_pids == (t.proc.pid,)  # the parent, not its matching children
    t.kill()
    time.sleep(0.2)
    gone = poll(source)
    assert gone.root_pids == () and t.proc.pid in gone.exited
    assert "waiting" in gone.waiting
    again = tree(marker=t.marker)
    back = poll(source)
    assert back.root_pids == (again.proc.pid,) and back.waiting is None


def test_exited_pid_pin_and_recycled_pids(tree):
    t = tree()
    pin = pin_pid(t.proc.pid)
    source = ProcTreeSource(PinState(pin))
    assert poll(source).root_pids == (t.proc.pid,)
    t.kill()
    exited = poll(source)
    assert exited.waiting == "the pinned process has exited" and t.proc.pid in exited.exited
    other = tree()
    recycled = Pin(pids=((other.proc.pid, 12345.0),))  # same pid, another start time
    assert poll(ProcTreeSource(PinState(recycled))).root_pids == ()


def test_bad_pins():
    with pytest.raises(PinError, match="no process 99999999"):
        pin_pid(99999999)
    with pytest.raises(PinError, match="not a valid regular expression"):
        pin_pattern("([")
    waiting = poll(ProcTreeSource(PinState(pin_pattern("no-such-process-" + uuid.uuid4().hex))))
    assert waiting.root_pids == () and waiting.waiting.startswith("no process matches")


def test_the_dashboard_pins_through_the_session(tree):
    """The TUI imports no source: the session makes the pin and says why it cannot."""
    from gputop.session import Session

    t = tree()
    state = PinState()
    session = Session("live", pin_state=state)
    assert session.pin(99999999) == "no process 99999999"
    assert "not a valid regular expression" in session.pin(None, "([")
    assert not state.get().active  # a refused pin changes nothing
    assert session.pin(t.proc.pid) is None and state.get().active
    assert poll(ProcTreeSource(state)).root_pids == (t.proc.pid,)
    session.unpin()
    assert not state.get().active
    assert Session("replay").pin(t.proc.pid) is not None  # no live sources to pin


def test_engine_is_found_in_the_pinned_tree(tree):
    t = tree()
    engine = EngineSource(pin_state=PinState(pin_pid(t.proc.pid)))
    sample = engine.poll(100.0).engine
    assert sample.url == f"http://127.0.0.1:{t.port}/metrics"
    assert t.proc.pid in sample.pids


def test_every_pane_speaks_of_the_tree(monkeypatch, tree, workers):
    t = tree()
    FakeNvml([FakeGpu("NVIDIA H100 80GB HBM3", 80 * GiB, 60 * GiB, util_pct=90,
                      procs=[FakeProc(t.busy, 30 * GiB, sm_util=70),
                             FakeProc(workers[0].pid, 20 * GiB, sm_util=10)])]).install(monkeypatch)
    state = PinState(pin_pid(t.proc.pid))
    timeline = tick_timeline([NvmlSource(), ProcTreeSource(state)], 2, 0.3, sleep_s=0.3)
    view = derive(timeline, timeline.last_index)
    data = snapshot_dict(view, "nvml")
    assert data["pinned"]["pids"] == [t.proc.pid]
    assert t.busy in data["pinned"]["tree_pids"]
    gpu = data["gpus"][0]
    assert [p["pid"] for p in gpu["processes"]] == [t.busy]  # only the tree
    assert gpu["mem_used_bytes"] == 60 * GiB  # card totals kept for context
    assert gpu["vram"]["unsplit_bytes"] == 30 * GiB  # the tree's memory
    assert gpu["vram"]["other_processes_bytes"] == 30 * GiB
    assert data["host"]["pinned_cpu_pct"] > 20


def test_pin_from_recorded_frames_uses_parent_links():
    from gputop.demo import demo_frames

    frames = demo_frames("allreduce-straggler", 3)
    timeline = Timeline(10, make_fold())
    for f in frames:
        timeline.append(f)
    view = derive(timeline, 2, pin=((5003,), None))
    assert [p.pid for g in view.gpus for p in g.processes] == [5003]
    by_pattern = derive(timeline, 2, pin=((), "notebook"))
    assert by_pattern.pinned.sample.root_pids == (3377,)


async def test_picker_pins_and_P_unpins():
    from gputop.demo import demo_frames
    from gputop.session import Session
    from gputop.tui.app import GputopApp
    from gputop.tui.picker import PickerScreen
    from tests.test_tui import text_of

    app = GputopApp(Session("demo:serving", frames=demo_frames("serving", 5)))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert len(app.screen.shown) == 2  # the engine and the notebook
        await pilot.press(*"notebook")
        await pilot.pause()
        assert [c.pid for c in app.screen.shown] == [None, 3377]
        await pilot.press("enter")  # the highlighted line: pid 3377
        await pilot.pause()
        assert app.pin_override == ((3377,), None)
        assert "pinned: python3 notebook.py (pid 3377)" in text_of(app.query_one("#status"))
        assert "4121" not in text_of(app.query_one("#pane-4"))
        await pilot.press("P")
        await pilot.pause()
        assert app.pin_override is None and "4121" in text_of(app.query_one("#pane-4"))
        await pilot.press("p", *"vllm", "up", "enter")  # the first line: every match
        await pilot.pause()
        assert app.pin_override == ((), "vllm")


def cuda_process(tmp_path, then: str) -> subprocess.Popen:
    """A process that maps a gcc-built stand-in libcudart, then runs ``then``."""
    lib = tmp_path / "libcudart.so.12"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), "-x", "c", "-"],
                   input="int cudaLaunchKernel(void){return 0;}", text=True, check=True)
    return subprocess.Popen([sys.executable, "-c",
                             f"import ctypes, time; ctypes.CDLL({str(lib)!r})\n{then}"])


def test_picker_lists_cuda_processes_with_cpu(tmp_path):
    """A live picker finds processes that map a CUDA library, with their CPU use."""
    from gputop.session import Session
    from gputop.tui.picker import candidates

    proc = cuda_process(tmp_path, "while True: pass")
    try:
        deadline = time.monotonic() + 10
        rows = []
        while time.monotonic() < deadline:
            rows = [c for c in candidates((), Session("live").scan_processes([]))
                    if c.pid == proc.pid]
            if rows:
                break
            time.sleep(0.2)
        assert rows and " CUDA " in rows[0].text and "% CPU" in rows[0].text
    finally:
        proc.kill()
        proc.wait()


async def test_the_live_picker_scans_proc_off_the_ui_thread(tmp_path):
    """p shows the GPU processes at once; the CUDA processes found in /proc join when the
    scan (a worker thread) is done, and the screen answered keys meanwhile."""
    from gputop.demo import demo_frames
    from gputop.session import Session
    from gputop.sources.proctree import PinState
    from gputop.tui.app import GputopApp
    from gputop.tui.picker import PickerScreen

    proc = cuda_process(tmp_path, "time.sleep(60)")
    try:
        time.sleep(0.5)
        app = GputopApp(Session("live", frames=demo_frames("serving", 5), pin_state=PinState()))
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.press("p")
            await pilot.pause()
            assert isinstance(app.screen, PickerScreen)
            assert {c.pid for c in app.screen.all_options} >= {4121, 3377}  # at once
            for _ in range(50):
                await pilot.pause(0.1)
                if proc.pid in {c.pid for c in app.screen.all_options}:
                    break
            assert proc.pid in {c.pid for c in app.screen.shown}
            await pilot.press("escape")
    finally:
        proc.kill()
        proc.wait()
