"""corpus_ao: recorded GPU situations of an e-commerce platform's holiday-sale fortnight.

traces(filter=None) -> iterator of (Truth, frames); write_recordings(directory)."""
from __future__ import annotations

import contextlib
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


CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


def _keep(entry, filter):
    if filter is None:
        return True
    if filter == "healthy":
        return entry.cause is None
    return filter in (entry.name, entry.family, entry.cause)


def traces(filter=None):
    from corpus_ao import catalog
    for entry in catalog.CATALOG:
        if _keep(entry, filter):
            yield entry.build()


@contextlib.contextmanager
def _pinned_clock(wall, host="ao-node"):
    from gputop.record import store
    old_t, old_h = store.time.time, store.socket.gethostname
    store.time.time = lambda: wall
    store.socket.gethostname = lambda: host
    try:
        yield
    finally:
        store.time.time, store.socket.gethostname = old_t, old_h


def write_recordings(directory):
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    for truth, frames in traces():
        path = os.path.join(directory, truth.name + ".gputop")
        for p in (path, path + "-wal", path + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        with _pinned_clock(truth.start_wall_s, "ao-" + truth.gpu_model.lower().replace(" ", "")):
            rec = Recorder(path, "nvml")
            for f in frames:
                rec.append(f)
            rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(dataclasses.asdict(truth), fh, indent=1)
