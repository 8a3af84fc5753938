#!/usr/bin/env python3
"""Start-up to the first full screen, next to references in the same run.

Each program starts in a fresh tmux pane (a real pty, 200x50); the clock runs from the
moment tmux is asked to start it until the pane shows text that only the finished first
screen has (polled every 5 ms), median of --repeat runs.  References: a Textual app that
shows one line (the floor for any Textual program: interpreter, imports, first paint),
btop, and nvitop when installed (pip install nvitop); gputop and nvitop read 8 GPUs from
the C stand-in libnvidia-ml (tests/stand_in/nvml_stand_in.c) through the real pynvml.
Also ``gputop snapshot --json --samples 1`` (demo), from exec to exit.

Usage: python bench/startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from tui import LiveSetup, tree_rss_mib  # noqa: E402

FLOOR_APP = """
from textual.app import App
from textual.widgets import Static

class Floor(App):
    def compose(self):
        yield Static("floor ready")

Floor().run()
"""


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout


def first_screen_s(command: str, marker: str, timeout_s: float = 30.0) -> tuple[float, float]:
    """(seconds to the first full screen, resident MiB 2 s after it)."""
    session = f"startup-{time.monotonic_ns()}"
    started = time.monotonic()
    tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50",
         "bash", "--norc", "-c", f"unset COLUMNS LINES; exec {command}")
    screen = ""
    try:
        while time.monotonic() - started < timeout_s:
            screen = tmux("capture-pane", "-p", "-t", session)
            if marker in screen:
                seconds = time.monotonic() - started
                time.sleep(2.0)
                pid = int(tmux("display", "-p", "-t", session, "#{pane_pid}").strip())
                return seconds, tree_rss_mib(pid)
            time.sleep(0.005)
        raise RuntimeError(f"{command!r} never showed {marker!r}; the screen:\n{screen}")
    finally:
        tmux("kill-session", "-t", session)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("bench/startup.py needs tmux", file=sys.stderr)
        return 2
    python = shlex.quote(sys.executable)
    tmp = Path(tempfile.mkdtemp())
    (tmp / "floor.py").write_text(FLOOR_APP)
    live = LiveSetup()
    try:
        # markers: text drawn only from the first frame (the panes are drawn together)
        runs = [("Textual floor (one line)", f"{python} {tmp / 'floor.py'}", "floor ready"),
                ("gputop --demo serving", f"{python} -m gputop --demo serving", "host CPU"),
                ("gputop nvml, 8 GPUs", f"{live.nvml_env(8)} {python} -m gputop", "host CPU")]
        nvitop = shutil.which("nvitop") or shutil.which("nvitop", path=str(Path(sys.executable).parent))
        if nvitop:  # its process list's header: drawn with the first data
            runs.append(("nvitop, 8 GPUs", f"{live.nvml_env(8)} {nvitop} -m full", "PID"))
        if shutil.which("btop"):
            (tmp / "btop").mkdir()  # its own config: btop rewrites it at exit
            runs.append(("btop", f"env XDG_CONFIG_HOME={tmp} btop --utf-force", "proc"))
        results = {name: [] for name, _, _ in runs}
        failures = []
        for _ in range(args.repeat):  # interleaved, so drift hits every program alike
            for name, command, marker in runs:
                for attempt in range(3):  # a program that died at start is started again
                    try:
                        results[name].append(first_screen_s(command, marker))
                        break
                    except RuntimeError as exc:
                        failures.append(f"{name}: {str(exc)[-300:]}")
        snap = []
        for _ in range(args.repeat):
            t0 = time.monotonic()
            subprocess.run([sys.executable, "-m", "gputop", "--demo", "serving", "snapshot",
                            "--json", "--samples", "1"], capture_output=True, check=True)
            snap.append(time.monotonic() - t0)
    finally:
        live.close()
    for failure in failures:
        print(f"(restarted after: {failure})")
    floor = statistics.median(s for s, _ in results["Textual floor (one line)"])
    print(f"\nstart to first full screen, 200x50, median of {args.repeat}; resident memory 2 s "
          "after it")
    print(f"{'program':<28}{'seconds':>9}{'vs floor':>10}{'RSS MiB':>9}")
    for name, values in results.items():
        seconds = statistics.median(s for s, _ in values)
        rss = statistics.median(r for _, r in values)
        print(f"{name:<28}{seconds:>9.3f}{seconds / floor:>10.2f}{rss:>9.1f}")
    print(f"{'snapshot --json --samples 1':<28}{statistics.median(snap):>9.3f}   (exec to exit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
