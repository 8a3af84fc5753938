"""Corpus R: a blind test corpus for gputop's diagnosis, calibrated to a real H200.

    import corpus_r
    for truth, frames in corpus_r.traces():          # every trace
    for truth, frames in corpus_r.traces("healthy"):  # by name, family, cause or "healthy"
    corpus_r.write_recordings("/tmp/corpus_r")        # NAME.gputop + NAME.truth.json

See README.md for how it was written and what each trace is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Truth:
    name: str
    family: str            # a grouping of your choice, e.g. "serving", "training", "multi-gpu", "healthy"
    cause: str | None      # one of the 12 causes, or None for healthy
    culprit_gpus: tuple[int, ...] | None   # the GPU(s) the episode should name first, where it matters
    window: tuple[float, float] | None     # wall-clock seconds when the fault is material, None for healthy
    engine: str            # "vllm", "sglang", "llamacpp", "trainer", "none"
    gpus: int
    gpu_model: str
    tick_s: float
    note: str              # one sentence: what happens
    start_wall_s: float


def _matches(d, flt: str | None) -> bool:
    if flt is None:
        return True
    if flt == "healthy":
        return d.cause is None
    return flt in (d.name, d.family, d.cause)


def traces(filter: str | None = None) -> Iterator[tuple[Truth, list]]:
    """(Truth, frames) for each trace, in catalogue order, deterministically."""
    from . import catalogue

    for d in catalogue.REGISTRY:
        if not _matches(d, filter):
            continue
        yield catalogue.run(d)


def write_recordings(directory: str) -> list[str]:
    """NAME.gputop (gputop.record.store.Recorder) and NAME.truth.json for every trace."""
    from gputop.record.store import Recorder

    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces():
        path = os.path.join(directory, f"{truth.name}.gputop")
        for stale in (path, path + "-wal", path + "-shm"):
            if os.path.exists(stale):
                os.remove(stale)
        rec = Recorder(path, f"corpus_r:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, f"{truth.name}.truth.json"), "w") as fh:
            json.dump(asdict(truth), fh, indent=1)
        written.append(path)
    return written
