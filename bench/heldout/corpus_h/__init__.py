"""Corpus H: held-out traces written blind (see README.md): the situations that make an
on-call engineer open gputop, late 2026.

    traces(filter=None) -> iterator of (Truth, frames)
"""

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
    culprit_gpus: tuple | None
    window: tuple | None  # wall-clock seconds (start, end) of the pathology
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def traces(filter=None):
    from .catalog import CATALOG
    from .scenario import run
    for sc in CATALOG:
        if filter and filter not in (sc.name, sc.family, sc.cause or "healthy") and not (
                filter == "healthy" and sc.cause is None):
            continue
        frames = run(sc)
        t0 = frames[0].time_wall_s if frames else 0.0
        window = None
        if sc.window:
            window = (t0 + sc.window[0], t0 + sc.window[1])
        yield Truth(sc.name, sc.family, sc.cause, sc.culprit, window,
                    sc.engine or ("trainer" if sc.counter else "none"), sc.n_gpus, sc.gpu,
                    sc.tick, sc.note, t0), frames
