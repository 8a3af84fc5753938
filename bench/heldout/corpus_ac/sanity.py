"""python -m bench.heldout.corpus_ac.sanity: the table of traces, codec round trips,
deterministic recordings written twice and read back."""

from __future__ import annotations

import filecmp
import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def main() -> int:
    problems = []
    by_cause, by_family = Counter(), Counter()
    print(f"{'name':40s} {'family':8s} {'cause':22s} {'cul':5s} {'window':11s} "
          f"{'engine':8s} {'gpus':>4s} {'frames':>6s} board")
    for truth, frames in traces():
        by_cause[truth.cause or "healthy"] += 1
        by_family[truth.family] += 1
        if truth.cause is not None and truth.cause not in CAUSES:
            problems.append(f"{truth.name}: unknown cause {truth.cause}")
        if (truth.cause is None) != (truth.window is None):
            problems.append(f"{truth.name}: window and cause disagree")
        times = [f.time_wall_s for f in frames]
        if times != sorted(times) or len(set(f.seq for f in frames)) != len(frames):
            problems.append(f"{truth.name}: frames out of order")
        if truth.window and not (times[0] - 5 <= truth.window[0] <= truth.window[1] <= times[-1] + 5):
            problems.append(f"{truth.name}: window outside the frames")
        for f in frames:
            back = frame_from_dict(json.loads(json.dumps(frame_to_dict(f))))
            if back != f:
                problems.append(f"{truth.name}: frame {f.seq} does not round-trip")
                break
        w = "-" if truth.window is None else \
            f"{truth.window[0] - truth.start_wall_s:.0f}-{truth.window[1] - truth.start_wall_s:.0f}"
        cul = "-" if truth.culprit_gpus is None else ",".join(map(str, truth.culprit_gpus))
        print(f"{truth.name:40s} {truth.family:8s} {truth.cause or 'healthy':22s} {cul:5s} "
              f"{w:11s} {truth.engine:8s} {truth.gpus:4d} {len(frames):6d} {truth.gpu_model}")
    print("by cause:", dict(sorted(by_cause.items())))
    print("by family:", dict(sorted(by_family.items())))
    for cause in CAUSES:
        if by_cause[cause] < 2:
            problems.append(f"cause {cause}: fewer than 2 traces")
    tmp = Path(tempfile.mkdtemp(prefix="corpus_ac_"))
    try:
        a = write_recordings(tmp / "a")
        write_recordings(tmp / "b")
        for p in a:
            for q in (p, p.with_suffix(".truth.json")):
                other = tmp / "b" / q.name
                if not filecmp.cmp(q, other, shallow=False):
                    problems.append(f"{q.name}: differs between two runs")
            rec = Recording(p)
            n = sum(1 for _ in rec.frames())
            if n != rec.count() or rec.skipped_frames:
                problems.append(f"{p.name}: read back {n} of {rec.count()} frames")
            rec.close()
        size = sum(p.stat().st_size for p in a)
        print(f"recordings: {len(a)} files, {size / 2**20:.1f} MiB, identical on two runs: "
              f"{not any('differs' in x for x in problems)}")
    finally:
        shutil.rmtree(tmp)
    for p in problems:
        print("PROBLEM:", p)
    print("OK" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
