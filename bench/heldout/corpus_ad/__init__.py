"""Blind held-out corpus AD: a university HPC centre's GPU partition over one semester."""
from __future__ import annotations

import json
import os
import types
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


def _entries():
    from . import catalog, more  # noqa: F401  (more registers the rest)
    return catalog.CATALOG


def _match(flt, name, family, cause):
    if flt is None:
        return True
    if flt == "healthy":
        return cause is None
    return flt in (name, family, cause)


def traces(filter=None):
    for name, family, cause, fn in _entries():
        if not _match(filter, name, family, cause):
            continue
        info, frames = fn(name)
        cul = info["culprit_gpus"]
        yield Truth(name=name, family=family, cause=cause,
                    culprit_gpus=tuple(cul) if cul else None,
                    window=tuple(info["window"]) if (cause and info["window"]) else None,
                    engine=info["engine"], gpus=info["gpus"], gpu_model=info["gpu_model"],
                    tick_s=info["tick_s"], note=info["note"], start_wall_s=info["start_wall_s"]), frames


def _host(truth):
    if truth.engine in ("vllm", "sglang", "tgi") and truth.family == "serving" and "k8s" in truth.name:
        return "k8s-gpu-%02d" % (sum(map(ord, truth.name)) % 12 + 1)
    return "gpu%03d.hpc.example.edu" % (sum(map(ord, truth.name)) % 180 + 1)


def write_recordings(directory, filter=None):
    from gputop.record import store
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, truth.name + ".gputop")
        for p in (path, path + "-wal", path + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        # the recorder stamps the clock and host name: pin both so the bytes repeat
        saved = store.time, store.socket
        store.time = types.SimpleNamespace(time=lambda: truth.start_wall_s)
        store.socket = types.SimpleNamespace(gethostname=lambda: _host(truth))
        try:
            rec = Recorder(path, f"corpus_ad:{truth.name}")
        finally:
            store.time, store.socket = saved
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(asdict(truth), fh, indent=1, sort_keys=True)
            fh.write("\n")
        written.append(path)
    return written
