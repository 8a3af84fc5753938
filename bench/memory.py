"""Resident memory over a simulated day at 1 Hz, and after 1,000 key presses.

1. A session over the simulator on a virtual clock takes 86,400 ticks (24 h at 1 Hz) as
   fast as it can, headless; RSS is printed at simulated hours, beside the same frames
   kept the way gputop kept them before (a timeline of 3,610 frames, no byte budget).
2. The dashboard in tmux (200x50) gets 1,000 presses of a key, twice; RSS before, after
   the first thousand and after the second (a warm-up, then flat) for each key.

    python bench/memory.py [--hours 24] [--gpus 1] [--keys]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rss_mib(pid: int | None = None) -> float:
    with open(f"/proc/{pid or 'self'}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def day(hours: float, gpus: int, old: bool) -> list[tuple[float, float, float]]:
    """(simulated hours, RSS MiB, wall seconds) at each simulated hour."""
    from gputop.sampler import Sampler
    from gputop.session import Session
    from gputop.sources.sim import SimSource

    source = SimSource(None, gpus=gpus)
    sampler = Sampler([source], 1.0, frame_time=lambda seq: (1.7e9 + seq, float(seq)))
    # old: the frame-count cap gputop had (3610 frames, no byte budget)
    session = Session("demo", sampler, history_frames=3610, history_bytes=None) if old \
        else Session("demo", sampler)
    session.open()
    out, started = [(0.0, rss_mib(), 0.0)], time.monotonic()
    ticks = int(hours * 3600)
    for tick in range(1, ticks + 1):
        session.add_frame(sampler.tick())
        if tick % 3600 == 0:
            out.append((tick / 3600, rss_mib(), time.monotonic() - started))
    session.close()
    return out


def key_storms(keys: list[str], presses: int = 1000) -> list[tuple[str, float, float, float]]:
    rows = []
    for key in keys:
        name = f"gputop-bench-{os.getpid()}"
        command = f"{shlex.quote(sys.executable)} -m gputop --demo logprobs-storm; sleep 30"
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "200", "-y", "50",
                        "bash", "-c", f"unset COLUMNS LINES; cd {ROOT}; {command}"], check=True)
        try:
            time.sleep(3)
            pid = int(subprocess.run(["pgrep", "-f", "-n", "python.* -m gputop --demo"],
                                     capture_output=True, text=True).stdout.split()[0])
            before = rss_mib(pid)
            readings = []
            for _ in range(2):
                subprocess.run(["tmux", "send-keys", "-t", name, *([key] * presses)], check=True)
                time.sleep(4)
                readings.append(rss_mib(pid))
            rows.append((key, before, *readings))
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--keys", action="store_true", help="only the key storms")
    args = parser.parse_args()
    if not args.keys:
        for old in (False, True):
            label = "before (3,610 frames, no byte budget)" if old else "this version (32 MiB budget)"
            code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from bench.memory import day; "
                    f"print(day({args.hours}, {args.gpus}, {old}))")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 cwd=ROOT, timeout=36000)
            if out.returncode != 0:
                raise SystemExit(out.stderr)
            points = eval(out.stdout.strip().splitlines()[-1])  # our own output
            shown = [p for p in points if p[0] in (0, 1, 2, 6, 12, 24) or p is points[-1]]
            print(f"{label}: " + ", ".join(f"{h:g} h {rss:.0f} MiB" for h, rss, _ in shown)
                  + f"  ({points[-1][2]:.0f} s for {points[-1][0]:g} simulated hours)")
    print("\nkey storms in tmux, 200x50, RSS MiB: before, after 1,000 presses, after 2,000")
    for key, before, first, second in key_storms(["Tab", "?", "e", "1"]):
        print(f"  {key:<4} {before:6.1f} {first:6.1f} {second:6.1f}   (second thousand: "
              f"{second - first:+.1f} MiB)")
    print(f"\npeak RSS of this script: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
