"""python -m bench.heldout.corpus_ab.sanity: table of traces, codec round trip, deterministic
recordings (written twice, compared), read back."""

from __future__ import annotations

import collections
import filecmp
import json
import shutil
import tempfile
from pathlib import Path

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def main() -> None:
    by_cause, by_family = collections.Counter(), collections.Counter()
    print(f"{'name':36} {'family':8} {'cause':22} {'engine':8} {'gpus':>4} {'frames':>6} window")
    n = 0
    for truth, frames in traces():
        n += 1
        for f in frames:
            assert frame_from_dict(json.loads(json.dumps(frame_to_dict(f)))) == f, truth.name
        assert all(a.time_wall_s < b.time_wall_s for a, b in zip(frames, frames[1:])), truth.name
        assert truth.cause is None or truth.cause in CAUSES
        if truth.window:
            assert frames[0].time_wall_s - 5 <= truth.window[0] <= truth.window[1] <= frames[-1].time_wall_s + 5
        w = "-" if not truth.window else f"{truth.window[0] - truth.start_wall_s:.0f}-{truth.window[1] - truth.start_wall_s:.0f}s"
        print(f"{truth.name:36} {truth.family:8} {str(truth.cause):22} {truth.engine:8} "
              f"{truth.gpus:>4} {len(frames):>6} {w}{' culprit ' + str(truth.culprit_gpus) if truth.culprit_gpus else ''}")
        by_cause[truth.cause or "healthy"] += 1
        by_family[truth.family] += 1
    tmp = Path(tempfile.mkdtemp(prefix="corpus_ab_"))
    try:
        a, b = tmp / "a", tmp / "b"
        names = write_recordings(a)
        write_recordings(b)
        same = all(filecmp.cmp(a / f"{x}.gputop", b / f"{x}.gputop", shallow=False) and
                   filecmp.cmp(a / f"{x}.truth.json", b / f"{x}.truth.json", shallow=False)
                   for x in names)
        frames = 0
        for x in names:
            rec = Recording(a / f"{x}.gputop")
            got = list(rec.frames())
            assert got and rec.skipped_frames == 0, x
            frames += len(got)
            rec.close()
        size = sum(p.stat().st_size for p in a.iterdir())
    finally:
        shutil.rmtree(tmp)
    print()
    print("by cause:", dict(sorted(by_cause.items())))
    print("by family:", dict(sorted(by_family.items())))
    print(f"{n} traces; codec round trip ok; recordings identical on two runs: {same}; "
          f"read back {frames} frames, {size / 2**20:.1f} MiB")
    assert same


if __name__ == "__main__":
    main()
