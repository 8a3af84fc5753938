#!/usr/bin/env python3
"""What the diagnosis costs per tick in machine instructions, for this tree and, side by
side, another (a git worktree of an older revision): a count that another program on the
cores does not move, where ``bench/detector.py``'s CPU time moves by 10-20% on a shared VM.

Each scenario's frames are made once, by this tree's simulator, and folded by each tree's
detector under valgrind's callgrind twice: the instructions for the first ``--lead`` ticks
are subtracted from those for all ``--ticks``, leaving the steady per-tick cost (imports,
start-up and the baseline's first seconds cancel out).  Needs valgrind (Debian: valgrind);
about ten minutes for two trees on two cores.

Usage: python bench/detector_instructions.py [--other PATH] [--ticks 300] [--lead 50]
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, HERE)
from gputop.demo import data_parallel, demo_frames  # noqa: E402

SCENARIOS = (("serving x1 GPUs", "serving", 1), ("logprobs-storm x1 GPUs", "logprobs-storm", 1),
             ("serving x8 GPUs", "serving", 8), ("logprobs-storm x8 GPUs", "logprobs-storm", 8),
             ("allreduce-straggler x8 GPUs", "allreduce-straggler", 8),
             ("8 DP engines x8 GPUs", None, 8))

FOLD = """
import pickle, sys
sys.path.insert(0, sys.argv[1])
from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
frames = pickle.load(open(sys.argv[2], "rb"))[:int(sys.argv[3])]
timeline = Timeline(len(frames) + 10, make_fold())
for frame in frames:
    timeline.append(frame)
"""


def _frames(scenario: str | None, gpus: int, ticks: int) -> list:
    if scenario is not None:
        return list(demo_frames(scenario, ticks, gpus=gpus))
    return data_parallel([list(demo_frames("logprobs-storm" if r == 3 else "serving", ticks,
                                           gpus=1, seed=r)) for r in range(gpus)])


def _instructions(tree: str, frames_path: str, ticks: int) -> int:
    """The instructions callgrind counted for folding the first ``ticks`` frames."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-c", FOLD, tree, frames_path, str(ticks)],
        capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"detector_instructions: no count from valgrind: {run.stderr[-300:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--other", help="another tree (a git worktree) to count beside this one")
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--lead", type=int, default=50)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("detector_instructions: n/a (valgrind is not installed: apt-get install valgrind)",
              file=sys.stderr)
        return 1
    if not 0 < args.lead < args.ticks:
        print("detector_instructions: --lead must be between 0 and --ticks", file=sys.stderr)
        return 2
    if args.other and not os.path.isfile(os.path.join(args.other, "gputop", "model",
                                                      "detect.py")):
        print(f"detector_instructions: {args.other}: not a gputop tree (no gputop/model/detect.py)",
              file=sys.stderr)
        return 2
    trees = [HERE] + ([os.path.abspath(args.other)] if args.other else [])
    # (the columns: this tree, then --other; the ratio is this tree's over the other's)
    names = ["this tree", "--other"][:len(trees)]
    print(f"{'k instructions per tick':<28} " + " ".join(f"{n:>13}" for n in names)
          + (f" {'ratio':>6}" if args.other else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for label, scenario, gpus in SCENARIOS:
            path = os.path.join(tmp, "frames.pkl")
            with open(path, "wb") as out:
                pickle.dump(_frames(scenario, gpus, args.ticks), out)
            per_tick = [(_instructions(tree, path, args.ticks)
                         - _instructions(tree, path, args.lead)) / (args.ticks - args.lead)
                        for tree in trees]
            print(f"{label:<28} " + " ".join(f"{x / 1000:>13,.0f}" for x in per_tick)
                  + (f" {per_tick[0] / per_tick[1]:>6.2f}" if args.other else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
