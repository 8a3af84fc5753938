"""Corpus N: a mixed fleet at 3 a.m. (see README.md).

``traces(filter)`` yields ``(Truth, frames)``: frames are ``gputop.schema.Frame`` objects as
gputop would record them; ``Truth`` says what really happened.  Deterministic: each trace
is seeded from a CRC of its name.
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
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str | None
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def entries() -> list[dict]:
    from .catalogue import REGISTRY
    return list(REGISTRY)


def _matches(entry: dict, filter: str | None) -> bool:
    if not filter:
        return True
    if filter == "healthy":
        return entry["cause"] is None
    return filter in (entry["name"], entry["family"], entry["cause"])


def traces(filter: str | None = None):
    for entry in entries():
        if not _matches(entry, filter):
            continue
        frames, window, culprit, note = entry["fn"](entry["name"])
        if entry["cause"] is None:
            window, culprit = None, None
        truth = Truth(name=entry["name"], family=entry["family"], cause=entry["cause"],
                      culprit_gpus=tuple(culprit) if culprit else None, window=window,
                      engine=entry["engine"], gpus=len(frames[0].gpus), gpu_model=entry["gpu_model"],
                      tick_s=entry["tick"], note=note, start_wall_s=frames[0].time_wall_s)
        yield truth, frames
