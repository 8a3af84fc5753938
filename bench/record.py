#!/usr/bin/env python3
"""Recording costs, each next to a reference measured in the same run.

- bytes per GPU-hour at 1 Hz (simulator with every source: GPUs, processes, engine,
  launch histograms), against the same frames as plain JSON;
- append cost per frame, against json.dumps of the frame alone;
- seek time (the frame at a random wall time) on a 24-hour, 8-GPU file, against one
  sqlite primary-key lookup in the same file;
- replay memory: peak Python allocation while loading the replay window, against the
  whole file's decoded size.

Usage: python bench/record.py [--hours 24] [--gpus 8]   (the 24 h file takes ~2 minutes)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gputop.demo import demo_frames
from gputop.record.store import Recorder, Recording
from gputop.schema import frame_to_dict


def bytes_per_gpu_hour(gpus: int, frames_count: int = 3600) -> tuple[float, float, float, float]:
    frames = demo_frames("serving", frames_count, gpus=gpus)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.gtrec")
        recorder = Recorder(path, "bench")
        started = time.perf_counter()
        for frame in frames:
            recorder.append(frame)
        append_s = (time.perf_counter() - started) / len(frames)
        recorder.close()
        size = os.path.getsize(path)
    started = time.perf_counter()
    raw = sum(len(json.dumps(frame_to_dict(f))) for f in frames)
    dumps_s = (time.perf_counter() - started) / len(frames)
    per_hour = size / len(frames) * 3600 / gpus
    raw_per_hour = raw / len(frames) * 3600 / gpus
    return per_hour, raw_per_hour, append_s, dumps_s


def long_file(path: str, hours: float, gpus: int) -> int:
    """A recording of ``hours`` at 1 Hz: one simulated hour's frames, re-stamped."""
    base = demo_frames(None, 3600, gpus=gpus)
    recorder = Recorder(path, "bench")
    total = int(hours * 3600)
    import dataclasses
    for seq in range(total):
        f = base[seq % len(base)]
        recorder.append(dataclasses.replace(f, seq=seq, time_wall_s=1.7e9 + seq,
                                            time_mono_s=float(seq)))
    recorder.close()
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--gpus", type=int, default=8)
    args = parser.parse_args()

    print("size and append cost (one hour: 3600 frames at 1 Hz, scenario serving):")
    print(f"{'GPUs':>5} {'MB/GPU-hour':>12} {'plain JSON':>12} {'append ms':>10} {'json.dumps ms':>14}")
    for gpus in (1, args.gpus):
        per_hour, raw, append_s, dumps_s = bytes_per_gpu_hour(gpus)
        print(f"{gpus:>5} {per_hour / 1e6:>12.3f} {raw / 1e6:>12.3f} {append_s * 1e3:>10.3f} "
              f"{dumps_s * 1e3:>14.3f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "long.gtrec")
        started = time.perf_counter()
        total = long_file(path, args.hours, args.gpus)
        build_s = time.perf_counter() - started
        size = os.path.getsize(path)
        recording = Recording(path)
        rng = random.Random(1)
        seeks = [1.7e9 + rng.uniform(0, total) for _ in range(200)]
        started = time.perf_counter()
        for t in seeks:
            seq = recording.seq_at(t)
            next(recording.frames(seq, seq))
        seek_ms = (time.perf_counter() - started) / len(seeks) * 1e3
        db = sqlite3.connect(path)
        started = time.perf_counter()
        for t in seeks:
            db.execute("SELECT payload FROM frames WHERE seq = ?", (int(t - 1.7e9),)).fetchone()
        pk_ms = (time.perf_counter() - started) / len(seeks) * 1e3
        tracemalloc.start()
        center = recording.seq_at(1.7e9 + total / 2)
        window = list(recording.frames(max(0, center - 600), center + 600))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"\n{args.hours:g} h x {args.gpus} GPUs: {total} frames, {size / 2**20:.1f} MiB "
              f"(built in {build_s:.0f} s)")
        print(f"seek (time -> frame, decoded): {seek_ms:.3f} ms   "
              f"reference sqlite primary-key read: {pk_ms:.3f} ms   ratio {seek_ms / pk_ms:.1f}x")
        per_frame = peak / len(window)
        print(f"replay window of {len(window)} frames: peak {peak / 2**20:.1f} MiB; the whole file "
              f"decoded would be ~{per_frame * total / 2**30:.1f} GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
