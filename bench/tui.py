#!/usr/bin/env python3
"""What the dashboard costs the machine and the SSH link, next to references in the same run.

Runs each program in its own tmux pane (a real pty) at 200x50, refreshing at 1 Hz, for
``--seconds`` (default 30), and reports the CPU% of its process tree and the bytes it wrote
to the terminal per second (tmux pipe-pane copies the pane's output to a file).
References: btop (when installed: apt-get install btop) and a naive Textual app with six
Sparklines that redraw every second (bench/naive_sparklines.py).

Usage: python bench/tui.py [--seconds 30] [--scenario logprobs-storm]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
WIDTH, HEIGHT = 200, 50


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def tree_cpu_seconds(pid: int) -> float:
    total = 0.0
    try:
        root = psutil.Process(pid)
        for proc in [root, *root.children(recursive=True)]:
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
    except psutil.NoSuchProcess:
        pass
    return total


def measure(name: str, command: str, seconds: float, warmup_s: float = 5.0) -> dict:
    session = f"bench-{os.getpid()}-{name}"
    out = Path(tempfile.mkdtemp()) / "pane.out"
    tmux("new-session", "-d", "-s", session, "-x", str(WIDTH), "-y", str(HEIGHT),
         "bash", "--norc", "-c", f"unset COLUMNS LINES; exec {command}")
    try:
        pid = int(tmux("display", "-p", "-t", session, "#{pane_pid}").strip())
        time.sleep(warmup_s)  # start-up and the first full paint are not steady state
        tmux("pipe-pane", "-o", "-t", session, f"cat >> {shlex.quote(str(out))}")
        cpu0, t0 = tree_cpu_seconds(pid), time.monotonic()
        time.sleep(seconds)
        cpu1, t1 = tree_cpu_seconds(pid), time.monotonic()
        tmux("pipe-pane", "-t", session)
        time.sleep(0.2)
        written = out.stat().st_size if out.exists() else 0
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    wall = t1 - t0
    return {"name": name, "cpu_pct": 100.0 * (cpu1 - cpu0) / wall, "bytes_per_s": written / wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=65.0,
                        help="seconds before measuring (default 65: the plots' 60 s window "
                        "has filled once, the steady state a server shows for hours)")
    parser.add_argument("--scenario", default="logprobs-storm")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("bench/tui.py needs tmux", file=sys.stderr)
        return 2
    python = shlex.quote(sys.executable)
    runs = [("gputop", f"{python} -m gputop --demo {args.scenario} -d 1")]
    if shutil.which("btop"):
        config_home = Path(tempfile.mkdtemp())  # btop reads $XDG_CONFIG_HOME/btop/btop.conf
        (config_home / "btop").mkdir()
        (config_home / "btop" / "btop.conf").write_text("update_ms = 1000\n")
        runs.append(("btop", f"env XDG_CONFIG_HOME={config_home} btop --utf-force"))
    else:
        print("(btop not installed: apt-get install btop for the reference column)")
    runs.append(("naive-sparklines", f"{python} {shlex.quote(str(HERE / 'naive_sparklines.py'))}"))

    results = [measure(name, command, args.seconds, args.warmup) for name, command in runs]
    print(f"\n{WIDTH}x{HEIGHT}, 1 Hz, {args.seconds:.0f} s each, scenario {args.scenario}")
    print(f"{'program':<18} {'CPU %':>8} {'bytes/s':>10}")
    for r in results:
        print(f"{r['name']:<18} {r['cpu_pct']:>8.2f} {r['bytes_per_s']:>10,.0f}")
    ref = next((r for r in results if r["name"] == "btop"), None)
    ours = results[0]
    if ref and ref["bytes_per_s"] > 0 and ref["cpu_pct"] > 0:
        print(f"\ngputop / btop: CPU {ours['cpu_pct'] / ref['cpu_pct']:.2f}x, "
              f"bytes/s {ours['bytes_per_s'] / ref['bytes_per_s']:.2f}x "
              "(targets: CPU <= 1x, bytes/s <= 0.25x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
