"""Corpus M: a blind, outside evaluator's trace corpus for gputop's diagnosis (README.md).

``traces(filter)`` yields ``(Truth, frames)``: frames exactly as gputop records them
(``gputop.schema.Frame``), the truth written beside them.  Deterministic: each trace is
seeded from a CRC of its name."""

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
    window: tuple[float, float] | None  # wall-clock seconds
    engine: str | None
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def traces(filter: str | None = None):
    """(Truth, frames) for every trace whose name, family or cause is ``filter`` ("healthy":
    the traces without a cause); all of them when ``filter`` is None."""
    from . import catalogue
    for entry in catalogue.CATALOGUE:
        if filter is not None and filter not in (entry.name, entry.family,
                                                 entry.cause or "healthy"):
            continue
        yield entry.build()
