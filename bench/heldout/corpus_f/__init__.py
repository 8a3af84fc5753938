"""Held-out diagnosis corpus F: messy real servers, written blind (README.md says how).

``traces(filter)`` yields ``(Truth, frames)`` as bench/heldout/harness.py expects; ``filter``
matches a trace's name, family, cause, or "healthy".  Deterministic: each trace's random
stream is seeded from the CRC-32 of its name."""

from __future__ import annotations

from dataclasses import dataclass

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
    note: str = ""
    start_wall_s: float = 0.0


def _engine_of(tr) -> str:
    for job in tr.jobs:
        if job.engine:
            return job.sim.kind
    for job in tr.jobs:
        if getattr(job, "scrape", False):
            return "trainer"
    for job in tr.jobs:
        if type(job.sim).__name__ == "Training":
            return "training"
    return "cuda"


def _matches(entry: dict, filt: str | None) -> bool:
    if not filt:
        return True
    if filt == "healthy":
        return entry["cause"] is None
    return filt in (entry["name"], entry["family"], entry["cause"])


def traces(filter: str | None = None):
    from .catalogue import CATALOGUE

    for entry in CATALOGUE:
        if not _matches(entry, filter):
            continue
        tr = entry["build"]()
        frames = tr.frames()
        window = None
        if entry["window"] is not None:
            a, b = entry["window"]
            window = (tr.t0 + a, tr.t0 + b)
        truth = Truth(name=entry["name"], family=entry["family"], cause=entry["cause"],
                      culprit_gpus=entry["culprit"], window=window, engine=_engine_of(tr),
                      gpus=tr.n, gpu_model=tr.spec.key, tick_s=tr.tick, note=entry["note"],
                      start_wall_s=tr.t0)
        yield truth, frames
