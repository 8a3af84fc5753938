"""corpus_ae: a blind held-out corpus: an internal GPU platform on Kubernetes in a launch month."""
from __future__ import annotations

import hashlib
import json
import os
from unittest import mock
from dataclasses import asdict, dataclass

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


BASE_WALL = 1_801_000_000.0


def _seed(name):
    return int(hashlib.sha256(name.encode()).hexdigest()[:12], 16)


def _build(entry, index):
    from . import serving, training
    from .common import BOARDS
    name, family, cause, culprit, spec, note = entry
    spec = dict(spec, name=name)
    start = BASE_WALL + index * 86400 / 2 + (_seed(name) % 3600)
    if family == "training":
        frames = training.simulate(spec, _seed(name), start)
        engine = "trainer" if spec.get("trainer_metrics", True) else "none"
        ngpus = spec.get("ngpus", 8)
    else:
        frames = serving.simulate(spec, _seed(name), start)
        engine = spec.get("engine") or "none"
        ngpus = max(spec.get("tp", 1), spec.get("ngpus", spec.get("tp", 1)))
    win = None
    if cause is not None:
        w = spec["win"]
        win = (round(start + w[0], 3), round(start + min(w[1], spec["dur"]), 3))
    truth = Truth(name, family, cause, culprit, win, engine, ngpus, BOARDS[spec["board"]].name,
                  spec.get("tick", 1.0), note, start)
    return truth, frames


def _matches(entry, flt):
    if flt is None:
        return True
    name, family, cause = entry[0], entry[1], entry[2]
    return flt in (name, family, cause) or (flt == "healthy" and cause is None)


def traces(filter=None):
    from .catalog import TRACES
    for i, entry in enumerate(TRACES):
        if _matches(entry, filter):
            yield _build(entry, i)


def write_recordings(directory, filter=None):
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    paths = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, truth.name + ".gputop")
        for p in (path, path + "-wal", path + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        # the recorder stamps the host name and the clock: pin both so the bytes repeat
        with mock.patch("gputop.record.store.time.time", return_value=truth.start_wall_s), \
                mock.patch("gputop.record.store.socket.gethostname", return_value="gpu-node"):
            rec = Recorder(path, f"corpus_ae:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        d = asdict(truth)
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(d, fh, indent=1, sort_keys=True)
        paths.append(path)
    return paths
