"""python -m bench.heldout.corpus_z.sanity: the table, a codec round trip of every frame,
two deterministic writes compared byte for byte, and every recording read back."""

from __future__ import annotations

import filecmp
import json
import sys
import tempfile
import time
from pathlib import Path

from gputop.record.store import Recording
from gputop.schema import frame_from_dict, frame_to_dict

from . import CAUSES, traces, write_recordings


def main() -> int:
    ok = True
    t0 = time.perf_counter()
    for _ in traces():
        pass
    bare_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows, n_frames = [], 0
    counts: dict[tuple, int] = {}
    for truth, frames in traces():
        n_frames += len(frames)
        dur = frames[-1].time_wall_s - frames[0].time_wall_s + truth.tick_s
        win = "-" if truth.window is None else \
            f"{truth.window[0] - truth.start_wall_s:.0f}-{truth.window[1] - truth.start_wall_s:.0f}"
        rows.append((truth.name, truth.family, truth.cause or "healthy", truth.gpus,
                     truth.gpu_model.replace("NVIDIA ", ""), f"{dur:.0f}s", win))
        counts[(truth.cause or "healthy", truth.family)] = counts.get(
            (truth.cause or "healthy", truth.family), 0) + 1
        if truth.cause is not None and truth.cause not in CAUSES:
            print("unknown cause", truth.name, truth.cause)
            ok = False
        if (truth.cause is None) != (truth.window is None) or (truth.window and not (
                truth.start_wall_s + 60 <= truth.window[0] < truth.window[1]
                <= frames[-1].time_wall_s + truth.tick_s)):
            print("window missing, too early or outside the trace", truth.name)
            ok = False
        last = None
        for f in frames:
            if last is not None and f.time_wall_s <= last:
                print("frames out of order", truth.name)
                ok = False
            last = f.time_wall_s
            back = frame_from_dict(json.loads(json.dumps(frame_to_dict(f))))
            if back != f:
                print("codec round trip differs", truth.name, f.seq)
                ok = False
                break
    gen_s = time.perf_counter() - t0
    widths = [max(len(str(r[i])) for r in rows + [("name", "family", "cause", "gpus", "model",
                                                      "duration", "window")]) for i in range(7)]
    head = ("name", "family", "cause", "gpus", "model", "duration", "window")
    print("  ".join(str(h).ljust(w) for h, w in zip(head, widths)))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print()
    for (cause, fam), n in sorted(counts.items()):
        print(f"  {cause:22s} {fam:9s} {n}")
    print(f"\n{len(rows)} traces, {n_frames} frames; traces() took {bare_s:.1f} s "
          f"({gen_s:.1f} s with the codec round trip of every frame)")
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        write_recordings(a)
        write_recordings(b)
        names = sorted(p.name for p in Path(a).iterdir())
        match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
        if mismatch or errors:
            print("recordings differ between two runs:", mismatch[:5], errors[:5])
            ok = False
        else:
            print(f"two writes byte-identical: {len(match)} files")
        read = 0
        for p in sorted(Path(a).glob("*.gputop")):
            rec = Recording(p)
            frames = list(rec.frames())
            truth = json.loads((Path(a) / (p.stem + ".truth.json")).read_text())
            if not frames or rec.skipped_frames or len(frames) != rec.count():
                print("recording unreadable", p.name)
                ok = False
            if truth["name"] != p.stem:
                print("truth name mismatch", p.name)
                ok = False
            read += len(frames)
            rec.close()
        print(f"read back {read} frames from {len(names) // 2} recordings")
    print("SANITY", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
