#!/usr/bin/env python3
"""What the diagnosis costs per tick, next to a reference measured in the same run.

The detector folds every frame (live, replay, report, serve): its cost is paid once per
tick per gputop.  The reference is the per-tick arithmetic every fold needs anyway
(``model.point.point``: rates, histogram deltas, per-GPU dicts), timed on the same frames;
the ratio says what judging adds.  Times are this process's CPU time (not wall time, which
other work on the machine moves).  Frames: the simulator's storm, straggler and healthy
serving at 1 and 8 GPUs (an 8-GPU storm runs one engine over all eight).

Usage: python bench/detector.py [--ticks 600] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gputop.demo import data_parallel, demo_frames
from gputop.model.detect import make_fold
from gputop.model.point import point
from gputop.model.timeline import Timeline


def _reference_fold(previous, frames):
    return point(frames, previous)


def per_tick_us(frames, fold) -> float:
    timeline = Timeline(len(frames) + 10, fold)
    started = time.process_time()  # CPU time: another program on the cores moves wall time
    for frame in frames:
        timeline.append(frame)
    return (time.process_time() - started) / len(frames) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ticks", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'frames':<28} {'detector us/tick':>17} {'point() us/tick':>16} {'ratio':>6}")
    for scenario, gpus in (("serving", 1), ("logprobs-storm", 1), ("serving", 8),
                           ("logprobs-storm", 8), ("allreduce-straggler", 8)):
        frames = list(demo_frames(scenario, args.ticks, gpus=gpus))
        detector = min(per_tick_us(frames, make_fold()) for _ in range(args.repeat))
        reference = min(per_tick_us(frames, _reference_fold) for _ in range(args.repeat))
        print(f"{scenario + f' x{gpus} GPUs':<28} {detector:>17.0f} {reference:>16.0f} "
              f"{detector / reference:>6.1f}")
    # eight data-parallel engines, one per GPU, each judged on its own (one of them storms)
    frames = data_parallel([list(demo_frames("logprobs-storm" if r == 3 else "serving",
                                             args.ticks, gpus=1, seed=r)) for r in range(8)])
    detector = min(per_tick_us(frames, make_fold()) for _ in range(args.repeat))
    reference = min(per_tick_us(frames, _reference_fold) for _ in range(args.repeat))
    print(f"{'8 DP engines x8 GPUs':<28} {detector:>17.0f} {reference:>16.0f} "
          f"{detector / reference:>6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
