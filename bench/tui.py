#!/usr/bin/env python3
"""What the dashboard costs the machine and the SSH link, next to references in the same run.

Runs each program in its own tmux pane (a real pty) at 200x50, refreshing at 1 Hz, for
``--seconds`` (default 30), and reports the CPU% of its process tree and the bytes it wrote
to the terminal per second (tmux pipe-pane copies the pane's output to a file).
References: btop (when installed: apt-get install btop) and a naive Textual app with six
Sparklines that redraw every second (bench/naive_sparklines.py).

``--all`` adds the live modes over a stand-in libnvidia-ml.so.1 with 8 H100s
(tests/stand_in/nvml_stand_in.c, built here with gcc: the real pynvml loads it through
ctypes, so every program pays its real Python cost per call; real PIDs: sleeping
processes holding "VRAM"): 8 GPU processes, 200 GPU processes (is the cost flat in the
number of processes?), and ``--engine`` against a stand-in vLLM serving the real 0.32
page; nvitop over the same stand-in when installed (pip install nvitop); and every
program again at 80x24.

``--before REV`` adds the demo as of git revision REV (its ``gputop/`` exported to a
temporary folder), run in the same session as this checkout's, and prints this
checkout's CPU and bytes as ratios of it: before and after a change, on the same
machine at the same time.

Usage: python bench/tui.py [--seconds 30] [--warmup 65] [--scenario logprobs-storm] [--all]
                           [--before REV]
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
ROOT = HERE.parent
WIDTH, HEIGHT = 200, 50


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def tree_sum(pid: int, read) -> float:
    """``read(process)`` summed over a process and its descendants (a launcher's children
    do the work); a process gone meanwhile counts 0."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            total += read(proc)
        except psutil.Error:
            pass
    return total


def tree_cpu_seconds(pid: int) -> float:
    return tree_sum(pid, lambda proc: proc.cpu_times().user + proc.cpu_times().system)


def tree_rss_mib(pid: int) -> float:
    return tree_sum(pid, lambda proc: proc.memory_info().rss) / 2**20


def measure(name: str, command: str, seconds: float, warmup_s: float = 5.0,
            size: tuple[int, int] = (WIDTH, HEIGHT)) -> dict:
    session = f"bench-{os.getpid()}-{len(name)}-{time.monotonic_ns()}"
    out = Path(tempfile.mkdtemp()) / "pane.out"
    tmux("new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]),
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
    return {"name": name, "size": f"{size[0]}x{size[1]}", "cpu_pct": 100.0 * (cpu1 - cpu0) / wall,
            "bytes_per_s": written / wall}


def gputop_command(python: str, root: Path) -> str:
    """``python -m gputop`` importing the package under ``root`` (tmux starts commands
    with its server's environment, so PYTHONPATH is named here, not inherited)."""
    return f"env PYTHONPATH={shlex.quote(str(root))} {python} -m gputop"


def export_revision(revision: str) -> Path:
    """``gputop/`` as of git ``revision``, in a temporary folder to put on PYTHONPATH."""
    folder = Path(tempfile.mkdtemp(prefix="gputop-before-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "gputop"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


class LiveSetup:
    """What the live modes need: sleeping processes to be the GPU processes of the C NVML
    stand-in, and a stand-in engine serving the real vLLM page (never late)."""

    def __init__(self, gpus: int = 8):
        self.gpus = gpus
        self.tmp = Path(tempfile.mkdtemp())
        self.sleepers: list[subprocess.Popen] = []
        self.server = None
        self._library: Path | None = None

    def nvml_env(self, processes: int) -> str:
        """``env ...`` that makes pynvml load the C stand-in with ``processes`` GPU
        processes (the sleepers, round robin over the GPUs, 1 GiB each)."""
        if self._library is None:
            self._library = self.tmp / "libnvidia-ml.so.1"
            subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(self._library),
                            str(HERE.parent / "tests" / "stand_in" / "nvml_stand_in.c")], check=True)
        self._start_sleepers(processes)
        procs = ",".join(f"{p.pid}:{i % self.gpus}:1024"
                         for i, p in enumerate(self.sleepers[:processes]))
        return (f"env LD_LIBRARY_PATH={self.tmp} NVML_STAND_IN_GPUS={self.gpus} "
                f"NVML_STAND_IN_PROCS={procs}")

    def _start_sleepers(self, count: int) -> None:
        while len(self.sleepers) < count:
            self.sleepers.append(subprocess.Popen(["sleep", "100000"]))

    def engine_url(self) -> str:
        if self.server is None:
            port_file = self.tmp / "port"
            self.server = subprocess.Popen([sys.executable, str(HERE / "engine_load.py"), "serve",
                                            str(port_file), "0"])
            deadline = time.monotonic() + 10
            while not (port_file.exists() and port_file.read_text()):
                if time.monotonic() > deadline:
                    raise RuntimeError("the stand-in engine did not start")
                time.sleep(0.05)
        return f"http://127.0.0.1:{(self.tmp / 'port').read_text()}/metrics"

    def close(self) -> None:
        for proc in self.sleepers + ([self.server] if self.server else []):
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=65.0,
                        help="seconds before measuring (default 65: the plots' 60 s window "
                        "has filled once, the steady state a server shows for hours)")
    parser.add_argument("--scenario", default="logprobs-storm")
    parser.add_argument("--all", action="store_true",
                        help="also the live modes over a fake NVML (8 GPUs; 8 and 200 "
                        "processes; --engine) and 80x24")
    parser.add_argument("--before", metavar="REV",
                        help="also the demo as of git revision REV, and this checkout's "
                        "numbers as ratios of it")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("bench/tui.py needs tmux", file=sys.stderr)
        return 2
    python = shlex.quote(sys.executable)
    demo = f"--demo {args.scenario} -d 1"
    runs = [("gputop demo", f"{gputop_command(python, ROOT)} {demo}")]
    before = None
    if args.before:
        try:
            before = f"gputop demo @{args.before}"[:24]
            runs.append((before, f"{gputop_command(python, export_revision(args.before))} {demo}"))
        except subprocess.CalledProcessError as exc:
            print(f"bench/tui.py: cannot export revision {args.before!r}: "
                  f"{exc.stderr.decode(errors='replace').strip()}", file=sys.stderr)
            return 2
    btop = None
    if shutil.which("btop"):
        config_home = Path(tempfile.mkdtemp())  # btop reads $XDG_CONFIG_HOME/btop/btop.conf
        (config_home / "btop").mkdir()
        (config_home / "btop" / "btop.conf").write_text("update_ms = 1000\n")
        btop = ("btop", f"env XDG_CONFIG_HOME={config_home} btop --utf-force")
        runs.append(btop)
    else:
        print("(btop not installed: apt-get install btop for the reference column)")
    live = LiveSetup() if args.all else None
    try:
        if live is not None:
            gputop = f"{gputop_command(python, ROOT)} -d 1"
            runs += [("gputop nvml, 8 procs", f"{live.nvml_env(8)} {gputop}"),
                     ("gputop nvml, 200 procs", f"{live.nvml_env(200)} {gputop}"),
                     ("gputop nvml --engine",
                      f"{live.nvml_env(8)} {gputop} --engine {live.engine_url()}")]
            nvitop = shutil.which("nvitop") or shutil.which("nvitop", path=str(Path(sys.executable).parent))
            if nvitop:
                runs += [("nvitop, 8 procs", f"{live.nvml_env(8)} {nvitop} -m full --interval 1"),
                         ("nvitop, 200 procs", f"{live.nvml_env(200)} {nvitop} -m full --interval 1")]
            else:
                print("(nvitop not installed: pip install nvitop for its reference rows)")
        else:
            runs.append(("naive-sparklines",
                         f"{python} {shlex.quote(str(HERE / 'naive_sparklines.py'))}"))
        sizes = [(WIDTH, HEIGHT)] + ([(80, 24)] if args.all else [])
        results = [measure(name, command, args.seconds, args.warmup, size)
                   for size in sizes for name, command in runs]
    finally:
        if live is not None:
            live.close()
    print(f"\n1 Hz, {args.seconds:.0f} s each after {args.warmup:.0f} s, scenario {args.scenario}")
    print(f"{'program':<24} {'size':>7} {'CPU %':>8} {'bytes/s':>10} {'CPU vs btop':>12} "
          f"{'bytes vs btop':>14}")
    for r in results:
        ref = next((b for b in results if b["name"] == "btop" and b["size"] == r["size"]), None)
        cpu_ratio = bytes_ratio = ""
        if ref and r is not ref and ref["cpu_pct"] > 0 and ref["bytes_per_s"] > 0:
            cpu_ratio = f"{r['cpu_pct'] / ref['cpu_pct']:.2f}x"
            bytes_ratio = f"{r['bytes_per_s'] / ref['bytes_per_s']:.2f}x"
        print(f"{r['name']:<24} {r['size']:>7} {r['cpu_pct']:>8.2f} {r['bytes_per_s']:>10,.0f} "
              f"{cpu_ratio:>12} {bytes_ratio:>14}")
    print("(targets: CPU <= 1x btop, bytes/s <= 0.25x btop)")
    for size in sizes if before else []:
        now, then = (next(r for r in results if r["name"] == name and r["size"] == f"{size[0]}x{size[1]}")
                     for name in ("gputop demo", before))
        cpu = f"{now['cpu_pct'] / then['cpu_pct']:.2f}x" if then["cpu_pct"] > 0 else "n/a"
        sent = f"{now['bytes_per_s'] / then['bytes_per_s']:.2f}x" if then["bytes_per_s"] > 0 else "n/a"
        print(f"this checkout vs {args.before} at {size[0]}x{size[1]}: CPU {cpu}, bytes/s {sent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
