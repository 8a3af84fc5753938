"""Corpus K: a blind held-out diagnosis corpus for gputop (see README.md).

``traces(filter)`` yields ``(Truth, frames)``; every trace is seeded from the CRC of its name,
so the corpus is the same on every run."""

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
    window: tuple[float, float] | None  # wall-clock seconds
    engine: str | None
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def _build(entry):
    from .drivers import run_program, run_serving, run_training
    from .mig import run_mig
    name, family, cause, culprit, window, engine, gpu, n, tick, dur, note, driver, cfg = entry
    crc = zlib.crc32(name.encode())
    rng = random.Random(crc)
    start = 1_796_000_000.0 + (crc % 5_000_000)
    frames = {"serve": run_serving, "train": run_training, "prog": run_program,
              "mig": run_mig}[driver](cfg, rng, start)
    truth = Truth(name, family, cause, tuple(culprit) if culprit else None,
                  (start + window[0], start + window[1]) if window else None, engine, n, gpu,
                  float(tick), note, start)
    return truth, frames


def _matches(entry, filter):
    if not filter:
        return True
    name, family, cause = entry[0], entry[1], entry[2]
    if filter == "healthy":
        return cause is None
    return filter in (name, family, cause)


def traces(filter=None):
    from .catalogue import T
    for entry in T:
        if _matches(entry, filter):
            yield _build(entry)
