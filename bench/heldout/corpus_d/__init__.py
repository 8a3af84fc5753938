"""Corpus D: held-out traces for gputop's diagnosis, written from physics.  Do not tune the
detector on it: measuring only.  ``traces(filter)`` yields (Truth, frames), one per trace,
deterministic (each trace seeded by its name)."""

from __future__ import annotations

from dataclasses import dataclass

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    cause: str | None  # None: healthy
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None  # wall-clock seconds
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def builders():
    from corpus_d import catalog
    return catalog.BUILDERS


def traces(filter=None):
    """(Truth, frames) for every trace, or those whose name, family or cause is ``filter``
    ("healthy" selects the healthy ones)."""
    for name, (family, cause, build) in builders().items():
        if filter and filter not in (name, family, cause or "healthy"):
            continue
        yield build()
