"""Corpus O: an independent, blind set of recorded GPU situations for measuring gputop's
verdict, written from physics by an outside evaluator (see README.md).

    traces(filter=None)          -> (Truth, frames) pairs, frames a time-ordered list of Frame
    write_recordings(directory)  -> each trace as NAME.gputop (gputop/record/store.py) + NAME.truth.json
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

from .catalogue import TRACES

__all__ = ["Truth", "traces", "write_recordings", "names"]


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    cause: str | None  # None: healthy
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None  # wall seconds when the fault is materially on
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


def names() -> list[str]:
    return [t[0] for t in TRACES]


def _matches(entry, filt) -> bool:
    if not filt:
        return True
    name, family, cause, *_ = entry
    return filt in (name, family, cause) or (filt == "healthy" and cause is None)


def _window(world, spec, frames):
    if spec is None:
        return None
    t0 = world.start_wall
    if spec[0] == "fixed":
        return (t0 + spec[1], t0 + min(spec[2], world.duration))
    if spec[0] == "marks":
        marks = [m for m in spec[1].fault_marks if m >= 0]
        if not marks:
            raise RuntimeError(f"{world.name}: the fault never came on")
        return (t0 + min(marks), t0 + min(world.duration, max(marks) + max(1.0, world.tick)))
    if spec[0] == "throttle":
        g = spec[1]
        on = [f.time_wall_s for f in frames
              if any(r != "power cap" for r in f.gpus[g].throttle)]
        if not on:
            raise RuntimeError(f"{world.name}: GPU {g} never throttled")
        return (on[0] - world.tick, on[-1])
    raise ValueError(spec)


def build(entry):
    name, family, cause, culprit, engine, note, fn = entry
    world, spec = fn(name)
    frames = world.run()
    truth = Truth(name=name, family=family, cause=cause, culprit_gpus=tuple(culprit) if culprit else None,
                  window=_window(world, spec, frames), engine=engine, gpus=len(world.gpus),
                  gpu_model=world.gpus[0].spec.key, tick_s=world.tick, note=note,
                  start_wall_s=frames[0].time_wall_s)
    return truth, frames


def traces(filter=None):
    """Yield (Truth, frames) for every trace whose name, family or cause is ``filter``
    ("healthy" selects the healthy ones); all of them without a filter."""
    for entry in TRACES:
        if _matches(entry, filter):
            yield build(entry)


def write_recordings(directory) -> list[str]:
    """Write each trace as a gputop recording plus NAME.truth.json; returns the paths."""
    from gputop.record.store import Recorder

    os.makedirs(directory, exist_ok=True)
    out = []
    for truth, frames in traces():
        path = os.path.join(directory, truth.name + ".gputop")
        rec = Recorder(path, source_label=f"corpus_o:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(dataclasses.asdict(truth), fh, indent=1)
        out.append(path)
    return out
