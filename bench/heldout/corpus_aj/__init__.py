"""corpus_aj: an AI lab's post-training cluster during one release cycle, as gputop would have
recorded it.  ``traces()`` yields (Truth, frames); ``write_recordings(dir)`` writes
NAME.gputop and NAME.truth.json for each."""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass


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
    from corpus_aj.catalog import CATALOG
    for entry in CATALOG:
        meta = entry.meta
        if filter is not None:
            keep = (filter == meta["name"] or filter == meta["family"] or filter == meta["cause"]
                    or (filter == "healthy" and meta["cause"] is None))
            if not keep:
                continue
        yield entry.build()


def write_recordings(directory):
    import socket
    import time
    from unittest import mock
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    for truth, frames in traces():
        path = os.path.join(directory, truth.name + ".gputop")
        for p in (path, path + "-wal", path + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        # pinned clock and host name: two runs write the same bytes
        with mock.patch.object(time, "time", lambda: truth.start_wall_s), \
                mock.patch.object(socket, "gethostname", lambda: "corpus-aj-" + truth.family):
            rec = Recorder(path, "nvml")
            for f in frames:
                rec.append(f)
            rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(dataclasses.asdict(truth), fh, indent=1)
