"""Print a trace's key readings per 10 s (or per tick with --ticks): python -m corpus_ai.show NAME [--step S]."""
from __future__ import annotations
import sys

import corpus_ai
from corpus_ai.readings import fmt, summarize


def main(argv):
    name = argv[0]
    stepv = float(argv[argv.index("--step") + 1]) if "--step" in argv else 10.0
    gpus = None
    for truth, frames in corpus_ai.traces(name):
        print(truth)
        if "--gpu" in argv:
            gpus = [int(argv[argv.index("--gpu") + 1])]
        t0 = frames[0].time_wall_s
        t = t0
        while t < frames[-1].time_wall_s:
            mark = "*" if truth.window and truth.window[0] <= t < truth.window[1] else " "
            print(f"{mark}{t - t0:6.0f}s {fmt(summarize(frames, t, t + stepv, gpus))}")
            t += stepv


if __name__ == "__main__":
    main(sys.argv[1:])
