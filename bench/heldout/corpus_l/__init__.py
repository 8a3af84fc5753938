"""Held-out corpus L: an on-call SRE's incidents on an LLM platform, and the healthy
situations that page people wrongly (README.md: what was read, the physics, the catalogue).

``traces(filter)`` yields ``(Truth, frames)``; filter matches a trace's name, family, cause
or "healthy".  Every trace is seeded from the CRC of its name, so it is the same each time.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from . import serve_sim, train_sim
from .catalogue import SPECS

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
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def _matches(spec, flt) -> bool:
    if not flt:
        return True
    return flt in (spec.name, spec.family, spec.cause) or (flt == "healthy" and spec.cause is None)


def truth_of(spec) -> Truth:
    win = None
    if spec.window is not None:
        win = (spec.start_wall_s + spec.window[0], spec.start_wall_s + spec.window[1])
    return Truth(spec.name, spec.family, spec.cause, spec.culprit, win, spec.engine, spec.n_gpus,
                 spec.gpu.name, spec.tick_s, spec.note, spec.start_wall_s)


def traces(filter=None):
    for spec in SPECS:
        if not _matches(spec, filter):
            continue
        seed = zlib.crc32(spec.name.encode())
        rng = random.Random(seed)
        # a night or a working day in 2026, different for each trace
        spec.start_wall_s = 1_767_225_600.0 + (seed % 300) * 86400 + (seed % 86400)
        sim = serve_sim if spec.kind == "serve" else train_sim
        frames = sim.simulate(spec, rng)
        yield truth_of(spec), frames
