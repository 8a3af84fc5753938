"""Corpus P: a blind, independent evaluation corpus of recorded GPU situations for gputop's
verdict (see README.md).  ``traces(filter)`` yields ``(Truth, frames)``; ``write_recordings``
writes each trace as a gputop recording plus NAME.truth.json."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import zlib
from dataclasses import dataclass

from .catalogue import ENTRIES

T0_BASE = 1_790_000_000.0  # September 2026


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


def _matches(entry, flt) -> bool:
    if not flt:
        return True
    if flt == "healthy":
        return entry["cause"] is None
    return flt in (entry["name"], entry["family"], entry["cause"])


def _engine_label(world) -> str:
    from .sim import Engine, Trainer
    kinds = []
    for w in world.workloads:
        if isinstance(w, Engine):
            kinds.append(f"{w.kind} {w.version}" if w.kind == "vllm" else w.kind)
        elif isinstance(w, Trainer):
            kinds.append("trainer" if w.counter else "training (no counter)")
    if not kinds:
        return "none (CUDA program)"
    return kinds[0] if len(set(kinds)) == 1 else "+".join(sorted(set(kinds)))


def build(entry):
    name = entry["name"]
    crc = zlib.crc32(name.encode())
    rng = random.Random(crc)
    t0 = T0_BASE + (crc % 9_000_000) + 0.25
    world, engines = entry["fn"](rng, t0)
    world.t0_wall = t0
    world.name = name
    world.mono0 = 86400.0 * (3 + crc % 40) + (crc % 1000) / 7.0
    frames = world.frames()
    start = frames[0].time_wall_s
    window = entry["window"]
    if callable(window):
        es = engines if isinstance(engines, list) else [engines]
        window = window(es)
    if window is not None:
        a, b = window
        b = min(b, world.duration_s)
        window = (round(t0 + a, 3), round(t0 + b, 3))
    culprit = tuple(entry["culprit"]) if entry["culprit"] else None
    spec = world.gpu
    truth = Truth(name=name, family=entry["family"], cause=entry["cause"], culprit_gpus=culprit,
                  window=window, engine=_engine_label(world), gpus=world.n_gpus,
                  gpu_model=spec.name.replace("NVIDIA ", ""), tick_s=world.tick_s,
                  note=entry["note"], start_wall_s=start)
    return truth, frames


def traces(filter=None):  # noqa: A002 - the harness's name
    for entry in ENTRIES:
        if _matches(entry, filter):
            yield build(entry)


def truth_dict(truth: Truth) -> dict:
    return dataclasses.asdict(truth)


def write_recordings(directory) -> list[str]:
    """Each trace as DIRECTORY/NAME.gputop (gputop's recording format) and NAME.truth.json."""
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces():
        path = os.path.join(directory, truth.name + ".gputop")
        for p in (path, path + "-wal", path + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        rec = Recorder(path, f"corpus_p:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(truth_dict(truth), fh, indent=1)
        written.append(path)
    return written
