"""python -m bench.corpus list | write DIR [FILTER] | physics [FILTER] | time

list     every trace with its family, cause, culprit GPUs and note
write    each trace as a gputop recording in DIR (plus truth.json): `gputop report DIR/X.gputop`
physics  per trace: means of util / SM / DRAM / tensor / power / clock, tokens/s, ITL and
         TTFT percentiles, waiting, for the healthy part and the pathology window
time     CPU seconds to generate every trace
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.corpus import ENTRIES, _match, _truth, build, write_recordings  # noqa: E402
from bench.corpus.summary import summarize  # noqa: E402


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "list":
        flt = rest[0] if rest else None
        for e in ENTRIES:
            if _match(e, flt):
                t = _truth(e)
                print(f"{e.name:46s} {e.family:10s} {str(e.cause):22s} {t.gpu_model} x{t.gpus} "
                      f"{t.engine or '-':8s} culprit={e.culprit}\n    {e.note}")
        return 0
    if cmd == "write":
        if not rest:
            print("write DIR [FILTER]")
            return 2
        t0 = time.process_time()
        paths = write_recordings(rest[0], rest[1] if len(rest) > 1 else None)
        print(f"{len(paths)} recordings in {rest[0]} ({time.process_time() - t0:.1f} s CPU)")
        return 0
    if cmd == "physics":
        flt = rest[0] if rest else None
        for e in ENTRIES:
            if not _match(e, flt):
                continue
            truth, frames = build(e)
            start = frames[0].time_wall_s + 10
            print(f"{truth.name}  cause={truth.cause} culprit={truth.culprit_gpus}")
            parts = ((("healthy", start, truth.window[0]), ("pathology",) + tuple(truth.window),
                      ("after", truth.window[1], None)) if truth.window else (("all", start, None),))
            for label, a, b in parts:
                s = summarize(frames, a, b, truth.culprit_gpus)
                keep = {k: v for k, v in s.items() if v is not None and k != "per_gpu_util"}
                print(f"  {label}: {keep}")
        return 0
    if cmd == "time":
        t0 = time.process_time()
        n = 0
        for e in ENTRIES:
            build(e)
            n += 1
        print(f"{n} traces in {time.process_time() - t0:.1f} s CPU")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
