"""Peak dense bf16 throughput and memory bandwidth per GPU model, for estimated MFU / MBU.

Figures are NVIDIA's published datasheet numbers *without* sparsity (dense tensor-core
bf16; fp16 for parts without bf16).  MFU = the engine's estimated model FLOPs/s per GPU
over the peak; MBU = its estimated bytes/s over the HBM bandwidth.  Both are estimates
twice over (vLLM's FLOP count and a datasheet peak), shown as such.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    model: str
    tflops_bf16: float  # dense
    mem_tb_per_s: float
    source: str


# First match wins, so the more specific names come first.
PEAKS: tuple[tuple[tuple[str, ...], Peak], ...] = (
    (("H200",), Peak("H200", 989.0, 4.8, "NVIDIA H200 datasheet (SXM, dense bf16)")),
    (("H100", "NVL"), Peak("H100 NVL", 835.0, 3.9, "NVIDIA H100 datasheet (NVL, dense bf16)")),
    (("H100", "PCIE"), Peak("H100 PCIe", 756.0, 2.0, "NVIDIA H100 datasheet (PCIe, dense bf16)")),
    (("H100",), Peak("H100 SXM", 989.0, 3.35, "NVIDIA H100 datasheet (SXM, dense bf16)")),
    (("H20",), Peak("H20", 148.0, 4.0, "NVIDIA H20 product brief (dense bf16)")),
    (("GB200",), Peak("GB200", 2500.0, 8.0, "NVIDIA GB200 NVL72 datasheet, per GPU (dense bf16)")),
    (("B200",), Peak("B200", 2250.0, 8.0, "NVIDIA DGX B200 datasheet, per GPU (dense bf16)")),
    (("A100", "PCIE", "80GB"), Peak("A100 PCIe 80GB", 312.0, 1.935,
                                    "NVIDIA A100 datasheet (dense bf16)")),
    (("A100", "80GB"), Peak("A100 SXM 80GB", 312.0, 2.039, "NVIDIA A100 datasheet (dense bf16)")),
    (("A100",), Peak("A100 40GB", 312.0, 1.555, "NVIDIA A100 datasheet (dense bf16)")),
    (("L40S",), Peak("L40S", 362.05, 0.864, "NVIDIA L40S datasheet (dense bf16)")),
    (("L40",), Peak("L40", 181.05, 0.864, "NVIDIA L40 datasheet (dense bf16)")),
    (("L4",), Peak("L4", 121.0, 0.3, "NVIDIA L4 datasheet (dense bf16)")),
    (("A10",), Peak("A10", 125.0, 0.6, "NVIDIA A10 datasheet (dense bf16)")),
    (("V100",), Peak("V100", 125.0, 0.9, "NVIDIA V100 datasheet (SXM2, fp16 tensor)")),
    (("T4",), Peak("T4", 65.0, 0.32, "NVIDIA T4 datasheet (fp16 tensor)")),
)


@functools.lru_cache(maxsize=64)
def peak_for(gpu_name: str) -> Peak | None:
    """The datasheet peak for an NVML device name, or None for a card not in the table."""
    upper = gpu_name.upper().replace("-", " ")
    words = set(upper.split())
    for keys, peak in PEAKS:
        # whole words for the model (an "L4" must not match "L40S"), substrings for the rest
        if keys[0] in words and all(k in upper for k in keys[1:]):
            return peak
    return None
