"""Corpus Q: an on-call engineer's week of GPU pages, written blind (README.md).

    traces(filter=None) -> iterator of (Truth, frames)
    write_recordings(directory) -> writes NAME.gputop (gputop/record/store.py) + NAME.truth.json
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    cause: str | None
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


def _matches(filter, name, family, cause):
    if not filter:
        return True
    return filter in (name, family, cause) or (filter == "healthy" and cause is None)


def build_trace(entry):
    name, family, cause, builder = entry
    frames, window, culprit, meta, note = builder(name)
    tick = meta["tick_s"]
    origin = frames[0].time_wall_s - tick  # wall time of sim second 0
    win = None
    if cause is not None:
        if window is None:
            raise RuntimeError(f"{name}: the fault never became material in the simulation")
        a, b = window
        last = frames[-1].time_wall_s - origin
        win = (round(origin + a, 3), round(origin + min(b, last), 3))
    truth = Truth(name=name, family=family, cause=cause,
                  culprit_gpus=tuple(culprit) if culprit else None, window=win,
                  engine=meta["engine"], gpus=meta["gpus"], gpu_model=meta["gpu_model"],
                  tick_s=tick, note=note, start_wall_s=frames[0].time_wall_s)
    return truth, frames


def traces(filter=None):
    from .catalogue import CATALOGUE
    for entry in CATALOGUE:
        name, family, cause, _ = entry
        if _matches(filter, name, family, cause):
            yield build_trace(entry)


def write_recordings(directory):
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces():
        path = os.path.join(directory, truth.name + ".gputop")
        rec = Recorder(path, source_label="corpus_q:" + truth.name)
        try:
            for f in frames:
                rec.append(f)
        finally:
            rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(dataclasses.asdict(truth), fh, indent=1)
        written.append(path)
    return written
