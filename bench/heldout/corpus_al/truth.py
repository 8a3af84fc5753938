from __future__ import annotations

from dataclasses import dataclass

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth", "throttling",
          "kv_pressure", "gpu_shared", "spec_decode_rejected")


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
    note: str
    start_wall_s: float
