"""corpus_s: a blind test corpus of simulated gputop recordings with labelled root causes.

Each trace is generated from the physics of the workload (request-level continuous batching
on a KV pool, training steps with data loading and collectives, GPU power/thermal limits,
host CPU scheduling) and recorded as gputop frames.  See README.md."""
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


def _catalogue():
    from .scenarios import CATALOGUE
    return CATALOGUE


def _truth(entry: dict) -> Truth:
    from .build import _time_base
    start, _ = _time_base(entry["name"])
    w = entry["window"]
    return Truth(name=entry["name"], family=entry["family"], cause=entry["cause"],
                 culprit_gpus=tuple(entry["culprit_gpus"]) if entry["culprit_gpus"] else None,
                 window=(start + w[0], start + w[1]) if w else None, engine=entry["engine"],
                 gpus=entry["gpus"], gpu_model=entry["gpu_model"], tick_s=entry["tick_s"],
                 note=entry["note"], start_wall_s=start)


def truths() -> list[Truth]:
    return [_truth(e) for e in _catalogue()]


def _matches(t: Truth, filter: str | None) -> bool:
    if not filter:
        return True
    if filter == "healthy":
        return t.cause is None
    return filter in (t.name, t.family, t.cause)


def traces(filter: str | None = None) -> Iterator[tuple[Truth, list[Frame]]]:
    """Every trace in catalogue order, deterministically; ``filter`` matches a name, a family,
    a cause, or "healthy"."""
    for e in _catalogue():
        t = _truth(e)
        if _matches(t, filter):
            yield t, e["build"]()


def write_recordings(directory: str) -> list[str]:
    """NAME.gputop (through gputop.record.store.Recorder) and NAME.truth.json per trace."""
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    out = []
    for t, frames in traces():
        path = os.path.join(directory, f"{t.name}.gputop")
        rec = Recorder(path, f"corpus_s:{t.name}")
        try:
            for f in frames:
                rec.append(f)
        finally:
            rec.close()
        with open(os.path.join(directory, f"{t.name}.truth.json"), "w") as fh:
            json.dump(asdict(t), fh, indent=1)
        out.append(path)
    return out


__all__ = ["CAUSES", "Truth", "traces", "truths", "write_recordings"]
