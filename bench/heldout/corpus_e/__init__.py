"""Held-out diagnosis corpus E: recorded-looking GPU situations generated from a step-time
model, written blind to gputop's diagnosis (see README.md for what was read and how).

``traces(filter)`` yields ``(Truth, frames)``; ``filter`` matches a trace's name, family,
cause, or "healthy".
"""

from __future__ import annotations

from dataclasses import dataclass

from .build import TraceBuilder
from .catalogue import HEALTHY, SPECS

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


def _window(spec, start):
    if spec["cause"] is None or not spec["envs"]:
        return None
    env = spec["envs"][0]
    return (start + env.a, start + env.b)


def all_specs():
    return SPECS + HEALTHY


def _matches(spec, filt):
    if not filt:
        return True
    return filt in (spec["name"], spec["family"], spec["cause"]) or \
        (filt == "healthy" and spec["cause"] is None)


def traces(filter=None):
    for spec in all_specs():
        if not _matches(spec, filter):
            continue
        builder = TraceBuilder(spec)
        frames = builder.frames()
        start = frames[0].time_wall_s
        yield Truth(name=spec["name"], family=spec["family"], cause=spec["cause"],
                    culprit_gpus=tuple(spec["culprit"]) if spec["culprit"] else None,
                    window=_window(spec, start), engine=spec["engine"],
                    gpus=spec["n_gpus"], gpu_model=spec["gpu"], tick_s=float(spec["tick"]),
                    note=spec["note"], start_wall_s=start), frames
