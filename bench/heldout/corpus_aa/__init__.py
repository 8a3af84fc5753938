"""corpus_aa: a GPU cloud provider's customer escalations for one month (blind held-out corpus).

``traces(filter)`` yields ``(Truth, frames)``; ``write_recordings(directory, filter)`` writes
``NAME.gputop`` and ``NAME.truth.json`` per trace, byte-identical on every run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3

from .common import CAUSES, MONTH0, Truth, seed_of

__all__ = ["CAUSES", "Truth", "traces", "write_recordings"]


def _start(name: str, i: int) -> float:
    return MONTH0 + (i % 30) * 86400 + 3600 * (6 + seed_of(name) % 14) + seed_of(name) % 3000


def _matches(entry, flt) -> bool:
    name, family, cause = entry[0], entry[1], entry[2]
    return flt is None or flt in (name, family) or flt == cause or (flt == "healthy" and cause is None)


def traces(filter: str | None = None):
    from . import catalog, other, serving, training
    for i, entry in enumerate(catalog.E):
        if not _matches(entry, filter):
            continue
        name, family, cause, culprit, window, engine, note, cfg = entry
        start = _start(name, i)
        if isinstance(cfg, serving.Serve):
            cfg.events = {}
            for o in cfg.others:
                o.pop("_proc", None)
            frames = serving.simulate(cfg, start)
            gpus, model = cfg.tp * cfg.dp, cfg.board
        elif isinstance(cfg, training.Train):
            frames = training.simulate(cfg, start)
            gpus, model = cfg.ngpu, cfg.board
        else:
            frames = other.simulate(cfg, start)
            gpus, model = cfg.ngpu, cfg.board
        win = None
        if window is not None:
            if window[0] == "big":
                a, b = window[1], cfg.events.get("big_end", cfg.duration)
            else:
                a, b = window
            win = (round(start + a, 3), round(start + min(b, cfg.duration), 3))
        yield Truth(name=name, family=family, cause=cause, culprit_gpus=culprit, window=win,
                    engine=engine, gpus=gpus, gpu_model=model, tick_s=cfg.tick, note=note,
                    start_wall_s=start), frames


def write_recordings(directory, filter: str | None = None) -> list[str]:
    from unittest import mock

    from gputop.record import store
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, truth.name + ".gputop")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        # deterministic header: the recording's own start time and a fixed host name
        with mock.patch.object(store.time, "time", lambda: truth.start_wall_s), \
                mock.patch.object(store.socket, "gethostname", lambda: "corpus-aa"):
            rec = Recorder(path, f"corpus_aa:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(dataclasses.asdict(truth), fh, indent=1, sort_keys=True)
            fh.write("\n")
        written.append(path)
    return written
