"""python -m bench.heldout.corpus_aa.sanity: the trace table, codec round-trips, recordings
written twice (byte-identical) and read back."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def _digest(directory: str) -> dict[str, str]:
    return {n: hashlib.sha256(open(os.path.join(directory, n), "rb").read()).hexdigest()
            for n in sorted(os.listdir(directory))}


def main() -> int:
    rows, causes, fams, problems = [], Counter(), Counter(), []
    for truth, frames in traces():
        for f in frames:
            if frame_from_dict(json.loads(json.dumps(frame_to_dict(f)))) != f:
                problems.append(f"{truth.name}: frame {f.seq} does not round-trip")
                break
        times = [f.time_wall_s for f in frames]
        if times != sorted(times):
            problems.append(f"{truth.name}: frames out of order")
        if truth.cause is not None and truth.cause not in CAUSES:
            problems.append(f"{truth.name}: unknown cause {truth.cause}")
        if truth.window and not (times[0] - 5 <= truth.window[0] < truth.window[1] <= times[-1] + 5):
            problems.append(f"{truth.name}: window outside the trace")
        causes[truth.cause or "healthy"] += 1
        fams[(truth.family, "healthy" if truth.cause is None else "pathology")] += 1
        win = "-" if truth.window is None else "%4.0f-%4.0f" % tuple(w - truth.start_wall_s for w in truth.window)
        rows.append(f"{truth.name:38s} {truth.family:8s} {truth.cause or 'healthy':22s} "
                    f"{str(truth.culprit_gpus or ''):6s} {win:10s} {truth.engine:8s} "
                    f"{truth.gpus}x{truth.gpu_model:9s} {len(frames):4d}")
    print("\n".join(rows))
    print()
    print("by cause:", ", ".join(f"{k} {v}" for k, v in sorted(causes.items())))
    print("by family:", ", ".join(f"{a}/{b} {v}" for (a, b), v in sorted(fams.items())))
    tmp = tempfile.mkdtemp(prefix="corpus_aa_")
    try:
        one, two = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        write_recordings(one)
        write_recordings(two)
        da, db = _digest(one), _digest(two)
        if da != db:
            problems.append("recordings differ between two runs: "
                            + ", ".join(n for n in da if da[n] != db.get(n))[:200])
        size = 0
        for name in sorted(os.listdir(one)):
            path = os.path.join(one, name)
            size += os.path.getsize(path)
            if name.endswith(".gputop"):
                rec = Recording(path)
                n = sum(1 for _ in rec.frames())
                if n != rec.count() or rec.skipped_frames:
                    problems.append(f"{name}: read back {n} of {rec.count()}")
                rec.close()
        print(f"recordings: {len(da) // 2} traces, {size / 2**20:.1f} MiB, identical on two runs: {da == db}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for p in problems:
        print("PROBLEM:", p)
    print("sanity:", "OK" if not problems else f"{len(problems)} problem(s)")
    return 0 if not problems else 1


if __name__ == "__main__":
    raise SystemExit(main())
