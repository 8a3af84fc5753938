"""Corpus X: a mixed cluster's week as the on-call engineer meets it (blind held-out set).

``traces(filter=None)`` yields ``(Truth, frames)``; ``write_recordings(directory)`` writes
``NAME.gputop`` and ``NAME.truth.json`` per trace.  Everything is simulated from the
workload up (see README.md); every random stream is seeded from the trace's name."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Truth:
    name: str
    family: str  # "serving" | "training" | "other"
    cause: str | None  # one of CAUSES, or None for a healthy trace
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None  # wall-clock seconds when the cause was materially on
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


def _entries():
    from .catalogue import REG
    return REG


def _matches(e, filter) -> bool:
    if filter is None:
        return True
    if filter == "healthy":
        return e.cause is None
    return filter in (e.name, e.family, e.cause)


def build(entry):
    """(Truth, frames) of one catalogue entry."""
    from .hw import SPECS
    from .world import World
    setup = entry.build()
    frames, window = World(setup).run()
    if entry.cause is None:
        window = None
    truth = Truth(name=entry.name, family=entry.family, cause=entry.cause,
                  culprit_gpus=tuple(entry.culprit) if entry.culprit else None, window=window,
                  engine=entry.engine, gpus=setup.ngpu, gpu_model=SPECS[setup.gpu].name,
                  tick_s=setup.tick, note=entry.note, start_wall_s=frames[0].time_wall_s)
    return truth, frames


def traces(filter=None):
    for e in _entries():
        if _matches(e, filter):
            yield build(e)


def write_recordings(directory, filter=None) -> list[str]:
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, truth.name + ".gputop")
        rec = Recorder(path, f"corpus_x:{truth.name}")
        try:
            for f in frames:
                rec.append(f)
        finally:
            rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(asdict(truth), fh, indent=1)
        written.append(path)
    return written
