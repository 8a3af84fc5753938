"""corpus_ag: a frontier-model inference provider's fleet for one week, seen by its SREs.

``traces(filter)`` yields ``(Truth, frames)``; ``write_recordings(dir)`` writes NAME.gputop and
NAME.truth.json.  See README.md for how the traces are made and labelled."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

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
    from .catalog import E
    return E


def _truth(e) -> Truth:
    name, family, cause, culprit, window, engine, gpus, board, tick, note, start, _ = e
    w = None if window is None else (round(start + window[0], 3), round(start + window[1], 3))
    return Truth(name, family, cause, culprit, w, engine, gpus, board, tick, note, start)


def _match(truth: Truth, filter) -> bool:
    if filter is None:
        return True
    return filter in (truth.name, truth.family, truth.cause) or (filter == "healthy" and truth.cause is None)


def truths(filter=None):
    return [t for t in map(_truth, _entries()) if _match(t, filter)]


def traces(filter=None):
    for e in _entries():
        truth = _truth(e)
        if _match(truth, filter):
            yield truth, e[-1](truth.start_wall_s)


def write_recordings(directory, filter=None):
    from gputop.record.store import Recorder
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = out / f"{truth.name}.gputop"
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if p.exists():
                p.unlink()
        # the recorder stamps the host and the time now into its header: fix both so that
        # two runs write the same bytes
        with mock.patch.object(time, "time", lambda: truth.start_wall_s), \
                mock.patch.object(socket, "gethostname", lambda: f"{truth.name}-node"):
            rec = Recorder(path, f"corpus_ag:{truth.name}")
            for f in frames:
                rec.append(f)
            rec.close()
        (out / f"{truth.name}.truth.json").write_text(
            json.dumps(dataclasses.asdict(truth), indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written
