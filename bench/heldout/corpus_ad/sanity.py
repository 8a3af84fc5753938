"""python -m bench.heldout.corpus_ad.sanity: table of traces, codec round-trip, deterministic
recordings written twice and read back."""
from __future__ import annotations

import collections
import filecmp
import hashlib
import json
import os
import shutil
import tempfile

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def main():
    rows = []
    by = collections.Counter()
    fam = collections.Counter()
    for truth, frames in traces():
        assert truth.cause is None or truth.cause in CAUSES, truth
        assert all(a.time_wall_s < b.time_wall_s for a, b in zip(frames, frames[1:])), truth.name
        for f in frames:
            d = json.loads(json.dumps(frame_to_dict(f)))
            assert frame_from_dict(d) == f, (truth.name, f.seq)
        if truth.window:
            assert frames[0].time_wall_s - 5 <= truth.window[0] < truth.window[1] <= frames[-1].time_wall_s + 5, truth.name
        dur = frames[-1].time_wall_s - frames[0].time_wall_s
        rows.append((truth.name, truth.family, truth.cause or "healthy", truth.gpu_model, truth.gpus,
                     truth.engine or "-", len(frames), dur, truth.culprit_gpus,
                     None if not truth.window else (truth.window[0] - truth.start_wall_s, truth.window[1] - truth.start_wall_s)))
        by[truth.cause or "healthy"] += 1
        fam[(truth.family, "healthy" if truth.cause is None else "pathology")] += 1
    print(f"{'name':46} {'family':9} {'cause':21} {'gpu':24} n  {'engine':9} frames  dur  culprit  window")
    for r in rows:
        w = "-" if r[9] is None else f"{r[9][0]:.0f}-{r[9][1]:.0f}"
        print(f"{r[0]:46} {r[1]:9} {r[2]:21} {r[3]:24} {r[4]} {r[5]:9} {r[6]:6} {r[7]:5.0f} {str(r[8]):8} {w}")
    print()
    print("by cause:", dict(sorted(by.items())))
    print("by family:", dict(sorted(fam.items())))
    missing = [c for c in CAUSES if by[c] < 2]
    assert not missing, f"causes with < 2 traces: {missing}"
    tmp = tempfile.mkdtemp(prefix="corpus_ad_")
    try:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        pa = write_recordings(a)
        write_recordings(b)
        same = 0
        size = 0
        for p in pa:
            q = os.path.join(b, os.path.basename(p))
            assert filecmp.cmp(p, q, shallow=False), f"not deterministic: {p}"
            t1, t2 = p[:-7] + ".truth.json", q[:-7] + ".truth.json"
            assert filecmp.cmp(t1, t2, shallow=False)
            same += 1
            size += os.path.getsize(p)
        n_frames = 0
        for (truth, frames), p in zip(traces(), pa):
            rec = Recording(p)
            back = list(rec.frames())
            rec.close()
            assert len(back) == len(frames), (p, len(back), len(frames))
            assert back[0] == frames[0] and back[-1] == frames[-1], p
            n_frames += len(back)
        digest = hashlib.sha256(b"".join(open(p, "rb").read() for p in pa)).hexdigest()[:16]
        print(f"recordings: {same} written twice, byte-identical; {n_frames} frames read back; "
              f"{size / 2**20:.1f} MiB; sha256 {digest}")
    finally:
        shutil.rmtree(tmp)
    print("sanity OK")


if __name__ == "__main__":
    main()
