"""Hostile input and hostile neighbours: each case from the adversarial pass, reproduced.

gputop runs as root beside other users and reads what they control: their command lines,
the engines they start (found by their ports), the labels on those engines' pages,
recordings handed around.  Nothing of it may crash gputop, hang it, reach the terminal
as an escape sequence, or make it allocate without bound.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.test_terminal import Terminal

DATA = Path(__file__).parent / "data" / "metrics"
VLLM = (DATA / "vllm_v1.txt").read_text()
ENV = {"TERM": "xterm-256color", "TZ": "UTC", "PYTHONPATH": os.getcwd()}
TITLE = "\x1b]2;pwned-by-osc\x07"


def gputop(*args, timeout=60, **kwargs):
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True,
                          text=True, timeout=timeout, **kwargs)


class Hostile:
    """A loopback HTTP server whose answer a test scripts: a body function of the request
    count, and optionally a slow drip (headers, then one byte every ``drip_s``)."""

    def __init__(self, body=lambda n: VLLM, drip_s: float | None = None, host="127.0.0.1"):
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # http.server's naming
                server.requests += 1
                data = body(server.requests).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; version=0.0.4")
                    self.send_header("Content-Length", str(len(data) + 10**6 if drip_s else len(data)))
                    self.end_headers()
                    if drip_s is None:
                        self.wfile.write(data)
                        return
                    for _ in range(10**6):
                        self.wfile.write(b"#")
                        self.wfile.flush()
                        time.sleep(drip_s)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        family = socket.AF_INET6 if ":" in host else socket.AF_INET

        class Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True

        self.httpd = Server((host, 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        bracket = f"[{host}]" if ":" in host else host
        self.url = f"http://{bracket}:{self.httpd.server_address[1]}/metrics"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def counter(value: str) -> str:
    return VLLM.replace("27453.0", value)


def strict_json(text: str):
    """JSON as other tools read it: NaN and Infinity are not JSON."""
    def refuse(name):
        raise ValueError(f"{name} in JSON output")
    return json.loads(text, parse_constant=refuse)


def gputop_in_terminal(tmp_path, *args: str) -> Terminal:
    """gputop with these arguments in a real terminal (tmux), with the tests' environment."""
    return Terminal(" ".join([shlex.quote(sys.executable), "-m", "gputop", *args]), env=ENV,
                    tmp_path=tmp_path)


# ---------------------------------------------------------------- 1. numbers

@pytest.mark.parametrize("value", ["NaN", "+Inf", "-Inf", "1.7e308", "-5.0"])
def test_hostile_counters_give_valid_json_and_no_made_up_rates(value):
    values = ["1000.0", "2000.0", value]
    with Hostile(lambda n: counter(values[min(n, len(values)) - 1])) as server:
        result = gputop("snapshot", "--engine", server.url, "--samples", "3", "-d", "0.2")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    data = strict_json(result.stdout)
    rate = data["engine"]["generation_tokens_per_s"]
    assert rate is None or (0 <= rate < 1e12), rate  # never NaN, negative or absurd


def test_infinite_cache_config_keeps_the_engine_source():
    text = VLLM.replace('num_gpu_blocks="27712"', 'num_gpu_blocks="inf"')
    with Hostile(lambda n: text) as server:
        result = gputop("snapshot", "--engine", server.url, "--samples", "2", "-d", "0.2")
    data = strict_json(result.stdout)
    assert data["sources"]["engine"]["ok"] and data["engine"]["num_gpu_blocks"] is None


def test_a_nan_counter_does_not_crash_the_dashboard(tmp_path):
    with Hostile(lambda n: counter("NaN" if n % 2 else "1.7e308")) as server:
        term = gputop_in_terminal(tmp_path, "--engine", server.url, "-d", "0.3")
        try:
            term.wait_for("3 Throughput")
            time.sleep(3)
            screen = term.screen()
            assert "Traceback" not in screen and "nan tok/s" not in screen.lower()
            term.keys("q")
            assert term.exit_status() == 0
        finally:
            term.close()


# ---------------------------------------------------------------- 2. escape sequences

def test_escape_sequences_from_an_endpoint_never_reach_the_terminal(tmp_path):
    labelled = VLLM.replace('model_name="meta-llama/Llama-3.1-8B-Instruct"',
                            'model_name="x\\u001b]2;pwned-by-osc\\u0007"'.replace(
                                "\\u001b", "\x1b").replace("\\u0007", "\x07"))
    with Hostile(lambda n: labelled) as server:
        term = gputop_in_terminal(tmp_path, "--engine", server.url, "-d", "0.3")
        try:
            term.wait_for("3 Throughput")
            # the engine's first reading (a busy CI host can take seconds) before the explain
            # page, which names the model, is asked for
            term.wait_for("running ", timeout=40)
            term.keys("3")
            term.keys("e")
            screen = term.wait_for("explained")
            assert "^[]2;pwned-by-osc^G" in screen  # shown, visibly
            title = term.tmux("display", "-p", "-t", term.name, "#{pane_title}").stdout
            assert "pwned" not in title
            term.keys("Escape")
            time.sleep(0.3)
            term.keys("q")
            assert term.exit_status() == 0
        finally:
            term.close()


def test_a_command_line_with_an_escape_sequence_is_shown_not_obeyed(tmp_path):
    victim = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               "/usr/bin/python3", "-c", "import time; time.sleep(60)", TITLE],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        term = gputop_in_terminal(tmp_path, "--pid", str(victim.pid), "-d", "0.3")
        try:
            screen = term.wait_for("pinned:")
            assert "^[]2;pwned-by-osc^G" in screen
            title = term.tmux("display", "-p", "-t", term.name, "#{pane_title}").stdout
            assert "pwned" not in title
            term.keys("q")
            assert term.exit_status() == 0
        finally:
            term.close()
    finally:
        victim.kill()
        victim.wait()


def test_a_crafted_recording_prints_no_escape(tmp_path):
    from gputop.record.store import Recorder
    from tests.conftest import sim_frames
    import dataclasses

    frames = sim_frames("serving", 5)
    evil = [dataclasses.replace(f, processes=tuple(dataclasses.replace(p, cmdline=TITLE)
                                                   for p in f.processes)) for f in frames]
    path = tmp_path / "r.gtrec"
    recorder = Recorder(path, "demo:" + TITLE)
    for frame in evil:
        recorder.append(frame)
    recorder.close()
    result = gputop("report", str(path))
    assert result.returncode == 0 and "\x1b" not in result.stdout + result.stderr
    out = gputop("export", str(path), "--format", "csv", "-o", "-")
    assert "\x1b" not in out.stdout


# ---------------------------------------------------------------- 3. hangs at exit

def test_a_dripping_endpoint_cannot_hold_snapshot_or_record(tmp_path):
    with Hostile(drip_s=0.3) as server:
        started = time.monotonic()
        result = gputop("snapshot", "--engine", server.url, "--samples", "2", "-d", "0.3",
                        timeout=60)
        assert result.returncode == 0 and json.loads(result.stdout)
        assert time.monotonic() - started < 15
        record = subprocess.Popen([sys.executable, "-m", "gputop", "record",
                                   str(tmp_path / "r.gtrec"), "--engine", server.url,
                                   "-d", "0.3"], stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        started = time.monotonic()
        record.send_signal(signal.SIGTERM)
        assert record.wait(timeout=20) == 0
        assert time.monotonic() - started < 10


def test_q_ends_the_dashboard_with_a_dripping_endpoint(tmp_path):
    with Hostile(drip_s=0.3) as server:
        term = gputop_in_terminal(tmp_path, "--engine", server.url, "-d", "0.3")
        try:
            term.wait_for("3 Throughput")
            time.sleep(2)
            started = time.monotonic()
            term.keys("q")
            assert term.exit_status(timeout=10) == 0
            assert time.monotonic() - started < 8
        finally:
            term.close()


# ---------------------------------------------------------------- 4. model_name as a path

def test_a_model_name_naming_a_fifo_or_dev_zero_is_never_opened(tmp_path):
    from gputop.model.derive import kv_bytes_per_token
    from gputop.sources.engine import EngineSource

    fifo = tmp_path / "fifo-model"
    fifo.mkdir()
    os.mkfifo(fifo / "config.json")
    zero = tmp_path / "zero-model"
    zero.mkdir()
    (zero / "config.json").symlink_to("/dev/zero")
    for directory in (fifo, zero, "../../etc"):
        text = VLLM.replace('model_name="meta-llama/Llama-3.1-8B-Instruct"',
                            f'model_name="{directory}"')
        with Hostile(lambda n: text) as server:
            started = time.monotonic()
            engine = EngineSource(server.url).poll(0.0).engine
            assert time.monotonic() - started < 5
        assert "not a model id" in engine.note and not engine.kv_config
        assert kv_bytes_per_token(engine) is None


# ---------------------------------------------------------------- 5-7. key storms, fast ticks

def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))


@pytest.mark.parametrize("key, presses", [("Tab", 900), ("?", 400), ("e", 400), ("1", 400)])
def test_a_key_storm_leaves_q_responsive_and_memory_flat(tmp_path, key, presses):
    from tests.conftest import gputop_processes

    seed = str(8000 + os.getpid() % 1000)
    term = Terminal(" ".join([shlex.quote(sys.executable), "-m", "gputop", "--demo",
                              "logprobs-storm", "--seed", seed]), width=200, height=50,
                    env=ENV, tmp_path=tmp_path)
    try:
        term.wait_for("3 Throughput")
        (proc,) = gputop_processes(seed)
        time.sleep(1)
        before = rss_kb(proc.pid)
        term.keys(*([key] * presses))
        time.sleep(2)
        first = rss_kb(proc.pid)
        term.keys(*([key] * presses))
        time.sleep(2)
        second = rss_kb(proc.pid)
        started = time.monotonic()
        if key in ("?", "e"):
            term.keys("Escape")
            time.sleep(0.3)
        term.keys("q")
        assert term.exit_status(timeout=15) == 0
        assert time.monotonic() - started < 5, "q waited behind the storm"
        assert first - before < 20_000, (before, first)  # a warm-up, not 400 KB a press
        assert second - first < 4_000, (first, second)  # the second storm: flat
    finally:
        term.close()


def test_ticks_at_100_hz_never_bury_q(tmp_path):
    term = gputop_in_terminal(tmp_path, "--demo", "serving", "--gpus", "4", "-d", "0.01")
    try:
        term.wait_for("3 Throughput")
        time.sleep(10)
        started = time.monotonic()
        term.keys("q")
        assert term.exit_status(timeout=30) == 0
        assert time.monotonic() - started < 3, "q waited behind queued frames"
    finally:
        term.close()


async def test_enter_enter_in_the_picker_and_the_jump_prompt():
    from gputop.demo import demo_frames
    from gputop.record.store import Recording
    from gputop.session import Session
    from gputop.tui.app import GputopApp
    from gputop.tui.replay import ReplayApp

    app = GputopApp(Session("demo:serving", frames=demo_frames("serving", 5)))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("p", "enter", "enter")
        await pilot.pause()
        assert app.is_running and app.pin_override is not None
    import tempfile
    path = Path(tempfile.mkdtemp()) / "r.gtrec"
    make_recording(path)
    replay = ReplayApp(Recording(path))
    async with replay.run_test(size=(160, 45)) as pilot:
        await pilot.press("j", "enter", "enter")
        await pilot.pause()
        assert replay.is_running


# ---------------------------------------------------------------- 8. catastrophic --match

def test_a_catastrophic_match_pattern_cannot_freeze_gputop():
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                               "a" * 3000 + "!"])
    try:
        started = time.monotonic()
        result = gputop("snapshot", "--engine", "http://127.0.0.1:9/metrics", "--match",
                        "(a|a)*$", "--samples", "2", "-d", "0.3", timeout=120)
        assert result.returncode == 0, result.stderr
        assert time.monotonic() - started < 30
    finally:
        victim.kill()
        victim.wait()


# ---------------------------------------------------------------- 9-10. recordings

def make_recording(path, frames=5):
    from tests.test_record import record

    record(path, "serving", frames)


def tamper(path, sql, *args):
    import sqlite3
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()


def compress_like_the_recording(path, raw: bytes) -> bytes:
    """``raw`` compressed with the recording's own dictionary, as its frames are."""
    import sqlite3
    import zstandard
    db = sqlite3.connect(path)
    (dictionary,) = db.execute("SELECT value FROM meta WHERE key = 'dict'").fetchone()
    db.close()
    dict_data = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    return zstandard.ZstdCompressor(level=19, dict_data=dict_data).compress(raw)


def test_a_zstd_bomb_is_refused_without_allocating_it(tmp_path):
    path = tmp_path / "bomb.gtrec"
    make_recording(path)
    bomb = compress_like_the_recording(path, b"[" * (512 * 2**20))  # 512 MiB of JSON
    assert len(bomb) < 200_000
    tamper(path, "UPDATE frames SET payload = ? WHERE seq = 2", bomb)
    code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
            "from gputop.cli import main\nsys.exit(main(['report', sys.argv[1]]))\n")
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "damaged frame" in result.stdout


@pytest.mark.parametrize("key, value", [("format_version", '"abc"'), ("schema", "Infinity"),
                                        ("schema", "NaN"), ("format_version", "[1]")])
def test_a_damaged_header_is_one_line(tmp_path, key, value):
    path = tmp_path / "r.gtrec"
    make_recording(path)
    tamper(path, "UPDATE meta SET value = ? WHERE key = ?", value, key)
    for command in ("report", "export", "replay"):
        args = [command, str(path)] + (["--format", "csv", "-o", "-"] if command == "export" else [])
        result = gputop(*args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("payload", [
    "12345",  # not bytes
    "[" * 100_000 + "]" * 100_000,  # deeply nested JSON
    json.dumps({"seq": 1, "time_wall_s": 1e300, "time_mono_s": 1.0}),  # out-of-range time
    json.dumps({"seq": 1, "time_wall_s": 1.7e9, "time_mono_s": 1.0,
                "launch": [{"api": "x", "buckets": {str(10**12): 5}}]}),  # huge bucket index
], ids=["not-bytes", "deep-json", "time-out-of-range", "huge-bucket"])
def test_damaged_frames_are_skipped_and_counted(tmp_path, payload):
    path = tmp_path / "r.gtrec"
    make_recording(path, 6)
    tamper(path, "UPDATE frames SET payload = ? WHERE seq = 3",
           int(payload) if payload.isdigit() else
           compress_like_the_recording(path, payload.encode()))
    result = gputop("report", str(path))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "(1 damaged frame(s) skipped)" in result.stdout


def test_a_recording_with_no_readable_frame_is_one_line(tmp_path):
    path = tmp_path / "r.gtrec"
    make_recording(path, 3)
    tamper(path, "UPDATE frames SET payload = ?", b"junk")
    for command in ("replay", "report"):
        result = gputop(command, str(path))
        assert result.returncode == 2 and "none of its 3 frames can be read" in result.stderr


# ---------------------------------------------------------------- 11. the installed package

def test_the_installed_wheel_carries_the_bpf_program(tmp_path):
    root = Path(__file__).resolve().parent.parent
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(wheels), str(root)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q",
                                "--target", str(target), *map(str, wheels.glob("*.whl"))],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run([sys.executable, "-m", "gputop", "doctor", "--ebpf-source"],
                            capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "BPF_TABLE" in result.stdout and "cudaLaunchKernel" in result.stdout
    check = subprocess.run([sys.executable, "-c", "import gputop; print(gputop.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert check.stdout.startswith(str(target))  # the installed copy, not this checkout


def test_an_unprivileged_fake_engine_cannot_crash_roots_gputop(tmp_path):
    """Another user starts something that looks like vLLM and serves NaN and 1.7e308: root's
    gputop finds it by itself (no --engine) and reads it as unknown, not a crash."""
    import tempfile
    shared = Path(tempfile.mkdtemp(prefix="gputop-hostile-"))
    try:
        (shared / "bin").mkdir()
        page = VLLM.replace("27453.0", "NaN").replace('"} 24.0', '"} 1.7e308')
        (shared / "page.txt").write_text(page)
        (shared / "bin" / "vllm").write_text(
            "import http.server, sys\n"
            "page = open(sys.argv[2], 'rb').read()\n"
            "class H(http.server.BaseHTTPRequestHandler):\n"
            "    def do_GET(self):\n"
            "        self.send_response(200); self.send_header('Content-Length', str(len(page)))\n"
            "        self.end_headers(); self.wfile.write(page)\n"
            "    def log_message(self, *a): pass\n"
            "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
            "print(s.server_address[1], flush=True)\n"
            "s.serve_forever()\n")
        for path in (shared, shared / "bin"):
            path.chmod(0o755)
        for path in (shared / "page.txt", shared / "bin" / "vllm"):
            path.chmod(0o644)
        server = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                   "/usr/bin/python3", str(shared / "bin" / "vllm"), "serve",
                                   str(shared / "page.txt")], stdout=subprocess.PIPE, text=True)
        try:
            port = int(server.stdout.readline())
            result = gputop("snapshot", "--samples", "2", "-d", "0.3")
            assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
            data = strict_json(result.stdout)
            assert data["engine"]["url"] == f"http://127.0.0.1:{port}/metrics"
            assert data["engine"]["generation_tokens_per_s"] is None
            assert data["engine"]["requests_running"] is None  # 1.7e308: finite, but absurd
        finally:
            server.kill()
            server.wait()
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_the_exit_guard_ends_a_process_whose_shutdown_hangs():
    code = ("import threading\nfrom gputop import exitguard\n"
            "done = []\nexitguard.arm(3, lambda: done.append(1), grace_s=0.5)\n"
            "exitguard.arm(4)  # armed once: later calls change nothing\n"
            "threading.Event().wait()  # a shutdown that never returns\n")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], timeout=30)
    assert result.returncode == 3 and time.monotonic() - started < 10
