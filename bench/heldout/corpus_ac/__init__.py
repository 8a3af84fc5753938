"""Blind corpus "ac": one month of a GPU cloud's support tickets, each with a recording.

``traces(filter)`` yields ``(Truth, frames)``; ``write_recordings(directory)`` writes
``NAME.gputop`` and ``NAME.truth.json``.  See README.md.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from unittest import mock

from .common import BOARDS, CAUSES

__all__ = ["CAUSES", "Truth", "traces", "write_recordings", "names"]


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
    from .catalog import MONTH0, T
    for k, (name, family, cause, culprit, window, note, kind, cfg) in enumerate(T):
        start = MONTH0 + k * 41_000 + (zlib.crc32(name.encode()) % 9000)
        yield k, name, family, cause, culprit, window, note, kind, cfg, round(start, 3)


def names() -> list[str]:
    return [e[1] for e in _entries()]


def _match(flt, name, family, cause) -> bool:
    if flt is None:
        return True
    return flt in (name, family, cause) or (flt == "healthy" and cause is None)


def _truth(name, family, cause, culprit, window, note, kind, cfg, start) -> Truth:
    if kind == "serve":
        engine = "vllm" if cfg.engine.startswith("vllm") else cfg.engine
        gpus, dur = cfg.gpus, cfg.duration
    else:
        engine = "trainer" if (cfg.tokens_per_step or cfg.work_unit == "samples") else "none"
        gpus, dur = cfg.gpus or cfg.ranks, cfg.duration
    win = None
    if window is not None:
        win = (round(start + window[0], 3), round(start + min(window[1], dur), 3))
    return Truth(name, family, cause, culprit, win, engine, gpus, BOARDS[cfg.board].name,
                 cfg.tick, note, start)


def traces(filter: str | None = None):
    from . import serving, training
    for k, name, family, cause, culprit, window, note, kind, cfg, start in _entries():
        if not _match(filter, name, family, cause):
            continue
        truth = _truth(name, family, cause, culprit, window, note, kind, cfg, start)
        sim = serving.simulate if kind == "serve" else training.simulate
        yield truth, sim(name, cfg, start)


def _truth_json(truth: Truth) -> str:
    d = asdict(truth)
    for key in ("culprit_gpus", "window"):
        if d[key] is not None:
            d[key] = list(d[key])
    return json.dumps(d, indent=1, sort_keys=True) + "\n"


def write_recordings(directory, filter: str | None = None) -> list[Path]:
    """NAME.gputop and NAME.truth.json per trace; the same bytes on every run."""
    from gputop.record import store
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = out / f"{truth.name}.gputop"
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"{path}{suffix}"):
                os.unlink(f"{path}{suffix}")
        # the recorder stamps its header with the host name and the time now: pin both
        with mock.patch.object(store.time, "time", lambda: truth.start_wall_s), \
                mock.patch.object(store.socket, "gethostname", lambda: "support-replay"):
            rec = store.Recorder(path, f"corpus_ac:{truth.name}")
            for f in frames:
                rec.append(f)
            rec.close()
        (out / f"{truth.name}.truth.json").write_text(_truth_json(truth))
        written.append(path)
    return written
