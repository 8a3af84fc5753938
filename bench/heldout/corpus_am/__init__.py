"""corpus_am: an autonomous-driving / robotics company's GPU fleet over a month, as gputop
would have recorded it.  See README.md."""
from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path


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


def traces(filter=None):
    from corpus_am.catalog import BUILDERS
    for name, (family, cause, build) in BUILDERS.items():
        if filter is not None:
            if filter == "healthy":
                if cause is not None:
                    continue
            elif filter not in (name, family, cause):
                continue
        yield build()


def write_recordings(directory):
    from gputop.record import store
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    real_host, real_time = socket.gethostname, time.time
    for truth, frames in traces():
        path = out / f"{truth.name}.gputop"
        if path.exists():
            path.unlink()
        # pin the recorder's host name and clock so two runs write the same bytes
        store.socket.gethostname = lambda: "am-" + truth.family + "-node"
        store.time.time = lambda: truth.start_wall_s
        try:
            rec = store.Recorder(path, "nvml")
            for f in frames:
                rec.append(f)
            rec.close()
        finally:
            store.socket.gethostname, store.time.time = real_host, real_time
        (out / f"{truth.name}.truth.json").write_text(json.dumps(asdict(truth), indent=1) + "\n")
