"""Corpus AH: a 40-person AI startup's GPU estate during one bad month.

traces(filter=None) -> iterator of (Truth, frames); write_recordings(directory)."""
from __future__ import annotations

import json
import os
import types
from dataclasses import asdict, dataclass


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


def _keep(entry, filter):
    if filter is None:
        return True
    if filter == "healthy":
        return entry.cause is None
    return filter in (entry.name, entry.family, entry.cause)


def traces(filter=None):
    from corpus_ah import catalog
    for entry in catalog.ENTRIES:
        if _keep(entry, filter):
            yield entry.build()


def write_recordings(directory):
    from gputop.record import store
    os.makedirs(directory, exist_ok=True)
    saved = store.socket, store.time
    try:
        for truth, frames in traces():
            store.socket = types.SimpleNamespace(gethostname=lambda: "estate-" + truth.family)
            store.time = types.SimpleNamespace(time=lambda: truth.start_wall_s)
            path = os.path.join(directory, truth.name + ".gputop")
            for p in (path, path + "-wal", path + "-shm"):
                if os.path.exists(p):
                    os.remove(p)
            rec = store.Recorder(path, f"corpus_ah:{truth.name}")
            for f in frames:
                rec.append(f)
            rec.close()
            with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
                json.dump(asdict(truth), fh, indent=1, sort_keys=True)
    finally:
        store.socket, store.time = saved
