"""gputop in a real terminal: tmux gives it a real pty; we type keys and read the screen."""

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.tmux


def tmux(*args, check=True):
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=check)


class Terminal:
    def __init__(self, command: str, width=160, height=45, env=None, tmp_path=None):
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed: the README's test command installs it")
        self.name = f"gputop-test-{uuid.uuid4().hex[:8]}"
        self.exit_file = Path(tmp_path) / "exit-status"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        # pytest exports COLUMNS/LINES, which Textual would take over the real pty size
        wrapped = (f"unset COLUMNS LINES; {exports} {command}; "
                   f"echo $? > {self.exit_file}; sleep 60")
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                  "bash", "--norc", "-c", wrapped)

    def tmux(self, *args, check=True):
        """tmux on this terminal's own server: a shared default server exits when its last
        session is killed, and a new-session racing that exit fails 'server exited unexpectedly'."""
        return tmux("-L", self.name, *args, check=check)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name).stdout

    def wait_for(self, text: str, timeout=20.0, absent: str | None = None) -> str:
        """The screen once ``text`` shows (and ``absent`` does not)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen and (absent is None or absent not in screen):
                return screen
            time.sleep(0.2)
        screen = self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", self.name).stdout
        raise AssertionError(f"{text!r} did not appear; screen was:\n{screen}")

    def keys(self, *keys):
        self.tmux("send-keys", "-t", self.name, *keys)

    def exit_status(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.exit_file.exists() and self.exit_file.read_text().strip():
                return int(self.exit_file.read_text())
            time.sleep(0.1)
        raise AssertionError("gputop did not exit; screen:\n" + self.screen())

    def alternate_screen_on(self) -> bool:
        return self.tmux("display", "-p", "-t", self.name, "#{alternate_on}").stdout.strip() == "1"

    def close(self):
        self.tmux("kill-server", check=False)
        socket_dir = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
        (socket_dir / self.name).unlink(missing_ok=True)


def gputop_command(*args):
    return " ".join([shlex.quote(sys.executable), "-m", "gputop", *args])


@pytest.fixture
def terminal(tmp_path):
    opened = []

    def open_terminal(*args, **kwargs):
        t = Terminal(gputop_command(*args), tmp_path=tmp_path, **kwargs)
        opened.append(t)
        return t

    yield open_terminal
    for t in opened:
        t.close()


def test_logprobs_storm_in_a_real_terminal(terminal):
    term = terminal("--demo", "logprobs-storm", "-d", "0.25",
                    env={"TERM": "xterm-256color", "TZ": "UTC", "PYTHONPATH": os.getcwd()})
    screen = term.wait_for("likely: oversized request")
    for title in ("1 GPU-Util", "2 SM activity", "3 Throughput", "4 VRAM", "5 Launch latency"):
        assert title in screen
    assert "busy" in screen and "tok/s" in screen
    term.keys("4")
    term.wait_for("KV free", absent="1 GPU-Util")  # zoomed: only the VRAM pane
    term.keys("Escape")
    time.sleep(0.3)  # ESC followed at once by a key reads as Alt+key
    term.keys("?")
    term.wait_for("What each pane measures")
    term.keys("Escape")
    time.sleep(0.3)
    term.keys("space")
    term.wait_for("PAUSED")
    term.keys("q")
    assert term.exit_status() == 0
    time.sleep(0.3)
    assert not term.alternate_screen_on(), "the terminal was not restored"
    assert "GPU-Util" not in term.screen()


def test_monochrome_full_screen(terminal):
    term = terminal("--demo", "serving", "--no-color", width=120, height=40,
                    env={"TERM": "vt100", "PYTHONPATH": os.getcwd()})
    term.wait_for("6 Host")
    screen = term.screen()
    assert "1 GPU-Util" in screen and "Traceback" not in screen and "Error" not in screen
    term.keys("q")
    assert term.exit_status() == 0


def test_the_readme_demo_opens_on_the_storm(terminal):
    """`gputop --demo`, the README's first command, at a default 80x24: the first screen
    already shows the storm's episode and says which scenario and phase it is in."""
    term = terminal("--demo", width=80, height=24,
                    env={"TERM": "xterm-256color", "TZ": "UTC", "PYTHONPATH": os.getcwd()})
    # the panes' borders are drawn before their first rows: wait for what is asserted
    screen = term.wait_for("⚠ GPUs 0-3 busy")
    assert "1 GPU-Util" in screen, screen
    assert "demo logprobs-storm · the storm" in screen.splitlines()[0], screen
    term.keys("q")
    assert term.exit_status() == 0


def test_no_color_sends_no_colour_and_marks_alarms_in_reverse(terminal):
    """NO_COLOR on a colour terminal: not one colour escape reaches it (Textual's greys
    were colours), and the alarms are in reverse video."""
    import re

    term = terminal("--demo", "logprobs-storm", width=132, height=40,
                    env={"TERM": "xterm-256color", "NO_COLOR": "1", "PYTHONPATH": os.getcwd()})
    term.wait_for("likely: oversized request")
    raw = term.tmux("capture-pane", "-p", "-e", "-t", term.name).stdout
    codes = [c for seq in re.findall(r"\x1b\[([0-9;]*)m", raw) for c in seq.split(";") if c]
    colours = [c for c in codes if c in ("38", "48") or 30 <= int(c) <= 37 or 40 <= int(c) <= 47
               or 90 <= int(c) <= 107]
    assert not colours, sorted(set(colours))
    assert "7" in codes  # reverse video: the alarms
    term.keys("q")
    assert term.exit_status() == 0


def test_monochrome_and_tiny_terminal(terminal):
    term = terminal("--demo", "serving", "--no-color", width=36, height=10,
                    env={"TERM": "vt100", "PYTHONPATH": os.getcwd()})
    term.wait_for("too small")
    term.keys("q")
    assert term.exit_status() == 0


@pytest.mark.parametrize("signum", ["TERM", "HUP"])
def test_sigterm_and_sighup_end_the_live_view_cleanly(terminal, signum):
    import signal

    from tests.conftest import gputop_processes

    seed = str(7000 + os.getpid() % 1000)
    term = terminal("--demo", "serving", "--seed", seed,
                    env={"TERM": "xterm-256color", "PYTHONPATH": os.getcwd()})
    term.wait_for("3 Throughput")
    (proc,) = gputop_processes(seed)
    proc.send_signal(getattr(signal, f"SIG{signum}"))
    assert term.exit_status() == 0
    time.sleep(0.3)
    assert not term.alternate_screen_on(), "the terminal was not restored"
