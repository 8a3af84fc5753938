"""corpus_ai: a month of a community GPU marketplace seen from the hosts' side.

traces(filter=None) -> iterator of (Truth, frames); write_recordings(directory)."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
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


def traces(filter=None):
    from corpus_ai import catalog
    for name, family, cause, build in catalog.BUILDERS:
        if filter is not None:
            if filter == "healthy":
                if cause is not None:
                    continue
            elif filter not in (name, family, cause):
                continue
        yield build()


def write_recordings(directory, filter=None):
    from gputop.record import store
    os.makedirs(directory, exist_ok=True)
    for truth, frames in traces(filter):
        path = os.path.join(directory, f"{truth.name}.gputop")
        with mock.patch.object(store.socket, "gethostname", return_value=f"mkt-{truth.name[:20]}"), \
                mock.patch.object(store.time, "time", return_value=truth.start_wall_s - 1.0):
            rec = store.Recorder(path, "nvml")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, f"{truth.name}.truth.json"), "w") as fh:
            json.dump(asdict(truth), fh, indent=1)
