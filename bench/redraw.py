#!/usr/bin/env python3
"""The dashboard's CPU per frame in-process: append a frame, redraw every pane, repeat.

bench/tui.py measures the whole program in a real terminal, where a 1 Hz demo spends ~1%
of a core and another program's load on a shared machine moves the numbers by a fifth;
this measures only the work a frame causes (the session's append and fold, the View, the
panes' rows and Textual's compositor, headless at 200x50) over a few hundred frames, in
CPU time, so a change to the drawing path can be compared before and after.

``--before REV`` runs the same measurement with git revision REV's ``gputop/`` (exported
to a temporary folder), alternating with this checkout ``--repeat`` times, and prints the
ratio of the medians.

Usage: python bench/redraw.py [--frames 280] [--repeat 3] [--before REV]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LEAD_FRAMES = 120  # history before measuring: the plots' 60 s window is full


async def per_frame_ms(frames_n: int, scenario: str) -> float:
    from gputop.demo import demo_frames
    from gputop.session import Session
    from gputop.tui.app import GputopApp

    frames = list(demo_frames(scenario, LEAD_FRAMES + frames_n))
    app = GputopApp(Session(f"demo:{scenario}", frames=frames[:LEAD_FRAMES]))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        started = time.process_time()
        for frame in frames[LEAD_FRAMES:]:
            app.add_frame(frame)
            await pilot.pause()
        spent = time.process_time() - started
    return 1000.0 * spent / frames_n


def measured(root: Path, frames_n: int, scenario: str) -> float:
    """One measurement in a fresh interpreter importing the gputop under ``root``."""
    done = subprocess.run([sys.executable, __file__, "--one", "--frames", str(frames_n),
                           "--scenario", scenario], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)}, check=True)
    return float(done.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=280)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scenario", default="logprobs-storm")
    parser.add_argument("--before", metavar="REV")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(f"{asyncio.run(per_frame_ms(args.frames, args.scenario)):.3f}")
        return 0
    roots = {"this checkout": ROOT}
    if args.before:
        sys.path.insert(0, str(HERE))
        from tui import export_revision  # bench/tui.py, beside this file

        try:
            roots[args.before] = export_revision(args.before)
        except subprocess.CalledProcessError as exc:
            print(f"bench/redraw.py: cannot export revision {args.before!r}: "
                  f"{exc.stderr.decode(errors='replace').strip()}", file=sys.stderr)
            return 2
    results: dict[str, list[float]] = {name: [] for name in roots}
    for _ in range(args.repeat):  # alternating, so a neighbour's load falls on both
        for name, root in roots.items():
            results[name].append(measured(root, args.frames, args.scenario))
    print(f"{args.frames} frames of {args.scenario} at 200x50, {args.repeat} runs each "
          "(CPU ms per frame: append + redraw)")
    for name, values in results.items():
        print(f"{name:<16} median {statistics.median(values):6.2f}   "
              + " ".join(f"{v:.2f}" for v in values))
    if args.before:
        ratio = statistics.median(results["this checkout"]) / statistics.median(results[args.before])
        print(f"this checkout vs {args.before}: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
