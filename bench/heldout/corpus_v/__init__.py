"""corpus_v: GPU work in containers, on shared nodes, and training jobs (a blind corpus).

Every trace is simulated from the physics in ``sim.py`` / ``work.py`` / ``train.py`` and
recorded as the frames gputop would read; ``scenarios.py`` is the catalogue.  See README.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from gputop.record.store import Recorder
from gputop.schema import Frame

from .scenarios import E, T0

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


def _truth(i: int, e) -> Truth:
    start = T0 + i * 7200.0 + (i * 37 % 60)
    window = None if e.window is None else (start + e.window[0], start + e.window[1])
    return Truth(e.name, e.family, e.cause, e.culprit, window, e.engine, e.gpus, e.model.name,
                 e.tick, e.note, start)


def _matches(t: Truth, f: str | None) -> bool:
    if f is None:
        return True
    if f == "healthy":
        return t.cause is None
    return f in (t.name, t.family, t.cause)


def traces(filter: str | None = None) -> Iterator[tuple[Truth, list[Frame]]]:
    for i, e in enumerate(E):
        t = _truth(i, e)
        if _matches(t, filter):
            yield t, e.make(t.start_wall_s)


def write_recordings(directory: str) -> list[str]:
    os.makedirs(directory, exist_ok=True)
    out = []
    for t, frames in traces():
        path = os.path.join(directory, f"{t.name}.gputop")
        rec = Recorder(path, f"corpus_v:{t.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, f"{t.name}.truth.json"), "w") as fh:
            json.dump(asdict(t), fh, indent=1)
        out.append(path)
    return out


assert all(e.cause is None or e.cause in CAUSES for e in E)
assert len({e.name for e in E}) == len(E)
