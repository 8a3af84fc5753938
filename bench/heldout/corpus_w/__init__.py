"""corpus_w: a blind corpus of GPU telemetry at 3 a.m. (see README.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from gputop.schema import Frame

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


def _entries():
    from .catalogue import CATALOGUE
    return CATALOGUE


def _truth(entry, frames) -> Truth:
    from .catalogue import start_of
    name, family, cause, culprit, window, engine, gpus, model, tick, note, _ = entry
    start = start_of(name)
    return Truth(name=name, family=family, cause=cause, culprit_gpus=culprit,
                 window=None if window is None else (start + window[0], start + window[1]),
                 engine=engine, gpus=gpus, gpu_model=model, tick_s=tick, note=note,
                 start_wall_s=start)


def _matches(entry, filter: str | None) -> bool:
    if filter is None:
        return True
    name, family, cause = entry[0], entry[1], entry[2]
    return filter in (name, family, cause) or (filter == "healthy" and cause is None)


def build(entry):
    frames, log = entry[-1](entry[0])
    return _truth(entry, frames), frames, log


def traces(filter: str | None = None) -> Iterator[tuple[Truth, list[Frame]]]:
    for entry in _entries():
        if _matches(entry, filter):
            truth, frames, _ = build(entry)
            yield truth, frames


def write_recordings(directory: str) -> list[str]:
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    out = []
    for truth, frames in traces():
        path = os.path.join(directory, f"{truth.name}.gputop")
        rec = Recorder(path, f"corpus_w:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, f"{truth.name}.truth.json"), "w") as fh:
            json.dump(asdict(truth), fh, indent=1)
        out.append(path)
    return out
