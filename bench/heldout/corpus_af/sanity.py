"""python -m bench.heldout.corpus_af.sanity: table, codec round trip, deterministic recordings."""

from __future__ import annotations

import collections
import filecmp
import sys
import tempfile
from pathlib import Path

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def main() -> int:
    bad = 0
    by = collections.Counter()
    print(f"{'name':40} {'family':9} {'cause':22} {'engine':9} {'gpus':>4} {'frames':>6} {'min':>5}  window")
    for tr, frames in traces():
        by[(tr.cause or "healthy", tr.family)] += 1
        assert tr.cause is None or tr.cause in CAUSES, tr.cause
        ts = [f.time_wall_s for f in frames]
        if ts != sorted(ts) or len(set(f.seq for f in frames)) != len(frames):
            print("  ! frames out of order", tr.name); bad += 1
        for f in frames:
            if frame_from_dict(frame_to_dict(f)) != f:
                print("  ! codec round trip differs", tr.name, f.seq); bad += 1
                break
        w = "-" if tr.window is None else f"{tr.window[0]-tr.start_wall_s:.0f}..{tr.window[1]-tr.start_wall_s:.0f}s"
        if tr.window and not (ts[0] - 5 <= tr.window[0] < tr.window[1] <= ts[-1] + 5):
            print("  ! window outside trace", tr.name); bad += 1
        print(f"{tr.name:40} {tr.family:9} {str(tr.cause):22} {tr.engine:9} {tr.gpus:4} {len(frames):6} "
              f"{(ts[-1]-ts[0])/60:5.1f}  {w}{'  culprit ' + str(tr.culprit_gpus) if tr.culprit_gpus else ''}")
    print()
    for cause in (*CAUSES, "healthy"):
        row = {fam: by[(cause, fam)] for fam in ("serving", "training", "other")}
        print(f"  {cause:22} " + " ".join(f"{k}={v}" for k, v in row.items()))
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        pa = write_recordings(a)
        write_recordings(b)
        for p in pa:
            q = Path(b) / p.name
            if not filecmp.cmp(p, q, shallow=False):
                print("  ! recording differs between runs", p.name); bad += 1
            t = Path(a) / p.name.replace(".gputop", ".truth.json")
            if not filecmp.cmp(t, Path(b) / t.name, shallow=False):
                print("  ! truth differs between runs", t.name); bad += 1
            rec = Recording(p)
            n = sum(1 for _ in rec.frames())
            rec.close()
            if n == 0:
                print("  ! no frames read back", p.name); bad += 1
        size = sum(p.stat().st_size for p in pa)
        print(f"\n{len(pa)} recordings, {size/1e6:.1f} MB, written twice: "
              f"{'identical' if not bad else 'PROBLEMS'}; read back OK")
    print("sanity:", "OK" if not bad else f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
