"""SM activity before Hopper: DCGM profiling fields from a running dcgm-exporter.

DCGM's profiling metrics (DCGM_FI_PROF_*) are ratios 0..1; they are read from the
exporter's Prometheus text and merged into the NVML GPU samples by GPU index.
"""

from __future__ import annotations

from gputop.schema import GpuSample
from gputop.sources import prom
from gputop.sources.base import Reading, SourceError

FIELDS = {
    "DCGM_FI_PROF_SM_ACTIVE": "sm_active_pct",
    "DCGM_FI_PROF_SM_OCCUPANCY": "sm_occupancy_pct",
    "DCGM_FI_PROF_DRAM_ACTIVE": "dram_bw_pct",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "tensor_pct",
}


class DcgmSource:
    name = "dcgm"

    def __init__(self, url: str, timeout_s: float = 0.5):
        self.url = prom.check_url(url)
        self.timeout_s = timeout_s

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        families = prom.parse(prom.fetch_text(self.url, self.timeout_s), self.url)
        per_gpu: dict[int, dict[str, float]] = {}
        for name, labels, value in prom.samples(families):
            field = FIELDS.get(name)
            if field is None or "gpu" not in labels:
                continue
            try:
                index = int(labels["gpu"])
            except ValueError:
                continue
            per_gpu.setdefault(index, {})[field] = round(100.0 * value, 2)
        if not per_gpu:
            raise SourceError(f"{self.url} has no DCGM_FI_PROF_* metrics "
                              "(enable the profiling fields in dcgm-exporter)")
        return Reading(gpus=tuple(GpuSample(index=i, **values)
                                  for i, values in sorted(per_gpu.items())))
