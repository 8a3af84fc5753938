"""corpus_an: recorded GPU situations on a bank's on-premises GPU platform (see README.md)."""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from unittest import mock


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


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def traces(filter=None):
    from corpus_an.catalog import CATALOG
    for entry in CATALOG:
        meta = entry.meta
        if filter is not None and filter not in (meta["name"], meta["family"], meta["cause"]) and not (
                filter == "healthy" and meta["cause"] is None):
            continue
        yield entry.build()


HOSTNAME = "gpu-an-recorder"
CREATED = 1_790_000_000.0


def write_recordings(directory) -> None:
    from gputop.record import store
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    for truth, frames in traces():
        path = d / f"{truth.name}.gputop"
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if p.exists():
                p.unlink()
        with mock.patch.object(store.socket, "gethostname", lambda: HOSTNAME), \
                mock.patch.object(store.time, "time", lambda: CREATED):
            rec = store.Recorder(path, "nvml")
            for f in frames:
                rec.append(f)
            rec.close()
        (d / f"{truth.name}.truth.json").write_text(json.dumps(asdict(truth), indent=1) + "\n")
