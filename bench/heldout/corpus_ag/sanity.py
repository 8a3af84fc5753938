"""python -m bench.heldout.corpus_ag.sanity: table, codec round trip, deterministic recordings."""

from __future__ import annotations

import collections
import hashlib
import tempfile
from pathlib import Path

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def main():
    by_cause, by_family = collections.Counter(), collections.Counter()
    n = 0
    print(f"{'name':<44} {'family':<9} {'cause':<21} {'cul':<5} {'gpus':>4} {'board':<13} {'frames':>6} {'min':>5}")
    for truth, frames in traces():
        assert truth.cause is None or truth.cause in CAUSES, truth
        assert all(b.time_wall_s > a.time_wall_s for a, b in zip(frames, frames[1:])), truth.name
        for f in frames:
            assert frame_from_dict(frame_to_dict(f)) == f, (truth.name, f.seq)
        if truth.window:
            assert frames[0].time_wall_s - 5 <= truth.window[0] < truth.window[1] <= frames[-1].time_wall_s + 30, truth.name
        by_cause[truth.cause or "healthy"] += 1
        by_family[truth.family] += 1
        n += 1
        dur = (frames[-1].time_wall_s - frames[0].time_wall_s) / 60
        print(f"{truth.name[:44]:<44} {truth.family:<9} {str(truth.cause):<21} {str(truth.culprit_gpus or ''):<5} "
              f"{truth.gpus:>4} {truth.gpu_model:<13} {len(frames):>6} {dur:5.1f}")
    print(f"\n{n} traces; by cause: {dict(sorted(by_cause.items()))}\nby family: {dict(by_family)}")
    missing = [c for c in CAUSES if by_cause[c] < 2]
    assert not missing, missing
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        a = write_recordings(d1)
        write_recordings(d2)
        size = 0
        for p in a:
            q = Path(d2) / p.name
            h1, h2 = hashlib.sha256(p.read_bytes()).hexdigest(), hashlib.sha256(q.read_bytes()).hexdigest()
            assert h1 == h2, f"{p.name} differs between two runs"
            t1, t2 = p.with_suffix(".truth.json"), q.with_suffix(".truth.json")
            assert t1.read_bytes() == t2.read_bytes()
            rec = Recording(p)
            count = sum(1 for _ in rec.frames())
            assert count == rec.count() and count > 0, p.name
            rec.close()
            size += p.stat().st_size
        print(f"recordings: {len(a)} written twice, identical; read back; {size / 2**20:.1f} MiB in all")
    print("sanity OK")


if __name__ == "__main__":
    main()
