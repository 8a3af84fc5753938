"""python -m bench.heldout.corpus_ae.sanity: table, codec round-trip, deterministic recordings."""
import filecmp
import os
import shutil
import sys
import tempfile
from collections import Counter

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def main():
    by = Counter()
    n = 0
    for truth, frames in traces():
        assert frames and all(a.time_wall_s < b.time_wall_s for a, b in zip(frames, frames[1:])), truth.name
        for f in frames:
            assert frame_from_dict(frame_to_dict(f)) == f, (truth.name, f.seq)
        assert truth.cause is None or truth.cause in CAUSES
        if truth.window:
            assert frames[0].time_wall_s - 2 <= truth.window[0] < truth.window[1] <= frames[-1].time_wall_s + 2, truth.name
        by[(truth.cause or "healthy", truth.family)] += 1
        n += 1
        print(f"{truth.name:30s} {truth.family:8s} {str(truth.cause):22s} {truth.gpu_model[:22]:22s} "
              f"x{truth.gpus} {truth.engine:8s} {len(frames):5d} frames")
    print()
    for k, v in sorted(by.items()):
        print(f"  {k[0]:22s} {k[1]:9s} {v}")
    a, b = tempfile.mkdtemp(), tempfile.mkdtemp()
    try:
        pa = write_recordings(a)
        write_recordings(b)
        same = 0
        for p in pa:
            name = os.path.basename(p)
            assert filecmp.cmp(p, os.path.join(b, name), shallow=False), f"{name} differs"
            t = name[:-7] + ".truth.json"
            assert filecmp.cmp(os.path.join(a, t), os.path.join(b, t), shallow=False)
            rec = Recording(p)
            got = list(rec.frames())
            rec.close()
            assert got, name
            same += 1
        size = sum(os.path.getsize(os.path.join(a, x)) for x in os.listdir(a))
        print(f"{n} traces; {same} recordings identical on two writes and read back; {size/1e6:.1f} MB")
    finally:
        shutil.rmtree(a)
        shutil.rmtree(b)
    print("sanity OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
