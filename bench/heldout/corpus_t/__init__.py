"""Blind held-out corpus T: simulated gputop recordings with their true root causes."""

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
    from .catalogue import E
    return E


def _one(entry):
    from .box import build
    from .physics import GPUS
    name, family, cause, culprits, window, engine, note, fn = entry
    plan = fn(name)
    frames = build(plan)
    w = None
    if window is not None:
        w = (plan.start_wall + window[0], plan.start_wall + window[1])
    truth = Truth(name=name, family=family, cause=cause, culprit_gpus=culprits, window=w,
                  engine=engine, gpus=plan.ngpus, gpu_model=GPUS[plan.gpu].name,
                  tick_s=plan.tick, note=note, start_wall_s=plan.start_wall)
    return truth, frames


def _matches(entry, filter):
    name, family, cause, *_ = entry
    if filter is None:
        return True
    if filter == "healthy":
        return cause is None
    return filter in (name, family, cause)


def traces(filter: str | None = None) -> Iterator[tuple[Truth, list[Frame]]]:
    for entry in _entries():
        if _matches(entry, filter):
            yield _one(entry)


def write_recordings(directory: str) -> list[str]:
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    out = []
    for truth, frames in traces():
        path = os.path.join(directory, f"{truth.name}.gputop")
        rec = Recorder(path, f"corpus_t:{truth.name}")
        try:
            for f in frames:
                rec.append(f)
        finally:
            rec.close()
        with open(os.path.join(directory, f"{truth.name}.truth.json"), "w") as fh:
            json.dump(asdict(truth), fh, indent=1)
        out.append(path)
    return out
