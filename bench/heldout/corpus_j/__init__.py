"""Corpus J: held-out recorded GPU situations from a mixed fleet, written blind (README.md).

``traces(filter)`` yields ``(Truth, frames)``; the filter matches a trace's name, family,
cause, or "healthy".  Deterministic: each trace's randomness is seeded from a CRC of its name.
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
    window: tuple[float, float] | None  # wall-clock seconds
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str = ""
    start_wall_s: float = 0.0


def _engine_of(spec: dict) -> str:
    for job in spec["jobs"]:
        if job["type"] == "serve":
            return job["engine"]
    return "trainer" if spec.get("trainer_counter") else "none"


def truth_of(spec: dict, start_wall_s: float) -> Truth:
    w = spec.get("window")
    window = (start_wall_s + w[0], start_wall_s + w[1]) if spec.get("cause") and w else None
    culprit = tuple(spec["culprit"]) if spec.get("culprit") else None
    return Truth(name=spec["name"], family=spec["family"], cause=spec.get("cause"),
                 culprit_gpus=culprit, window=window, engine=_engine_of(spec), gpus=spec.get("n", 1),
                 gpu_model=spec["gpu"], tick_s=float(spec.get("tick", 1)), note=spec.get("note", ""),
                 start_wall_s=start_wall_s)


def _matches(spec: dict, filt: str | None) -> bool:
    if not filt:
        return True
    if filt == "healthy":
        return spec.get("cause") is None
    return filt in (spec["name"], spec["family"], spec.get("cause"))


def traces(filter: str | None = None):  # noqa: A002  (the harness's name)
    from .catalogue import SPECS
    from .trace import Trace
    for spec in SPECS:
        if not _matches(spec, filter):
            continue
        trace = Trace(spec)
        frames = trace.run()
        yield truth_of(spec, trace.wall0), frames
