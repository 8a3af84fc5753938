"""Held-out diagnosis corpus G: recorded GPU situations written blind (see README.md).

``traces(filter=None)`` yields ``(Truth, frames)``; ``filter`` matches a trace's name, its
family, its cause, or "healthy".  Deterministic: each trace's generator is seeded from the
CRC-32 of its name.
"""

from __future__ import annotations

import random
import zlib
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
    engine: str | None
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def _registry():
    from . import catalogue, healthy  # noqa: F401  (registering)
    return catalogue.REGISTRY


def _matches(filter, name, family, cause):
    if not filter:
        return True
    if filter == "healthy":
        return cause is None
    return filter in (name, family, cause)


def traces(filter=None):
    for (name, family, cause, engine, gpus, model, tick, dur, window, culprit, note, fn) in _registry():
        if not _matches(filter, name, family, cause):
            continue
        seed = zlib.crc32(name.encode())
        rng = random.Random(seed)
        start = 1_790_000_000.0 + (seed % 5_000_000) * 4.0
        frames = fn(rng, start)
        truth = Truth(name, family, cause, tuple(culprit) if culprit else None,
                      (start + window[0], start + window[1]) if window and cause else None,
                      engine, gpus, model, float(tick), note, start)
        yield truth, frames
