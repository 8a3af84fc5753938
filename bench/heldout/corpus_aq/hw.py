"""GPU models (published figures where known, guessed where marked in README)."""
from dataclasses import dataclass

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Board:
    name: str
    mem_bytes: int
    tflops: float          # dense bf16 tensor peak
    bw: float              # HBM/GDDR bytes/s
    tdp: float             # default power limit W
    idle_w: float          # no context
    ctx_w: float           # extra W with a CUDA context resident (P0)
    fmax: float            # max SM clock MHz
    fmin: float
    mem_clock: float
    gpm: bool              # Hopper+: SM/tensor/DRAM activity via GPM
    fan: bool              # fan reading supported
    r_th: float            # degC per W (die over inlet)
    t_slow: float          # software thermal slowdown starts
    nvml_period: float     # NVML GPU-Util sample period s
    pcie_gen: int = 5


BOARDS = {
    "H100": Board("NVIDIA H100 80GB HBM3", 81559 * MiB, 989, 3.35e12, 700, 70, 45, 1980, 345, 2619,
                  True, False, 0.055, 87, 0.2),
    "H200": Board("NVIDIA H200", 150754820096, 989, 4.8e12, 700, 78, 45, 1980, 345, 3201,
                  True, False, 0.032, 87, 0.2),
    "A100": Board("NVIDIA A100-SXM4-80GB", 81920 * MiB, 312, 2.04e12, 400, 55, 30, 1410, 210, 1593,
                  False, False, 0.085, 85, 0.2, 4),
    "L40S": Board("NVIDIA L40S", 46068 * MiB, 362, 0.864e12, 350, 35, 30, 2520, 210, 9001,
                  False, False, 0.13, 86, 0.2, 4),
    "L4": Board("NVIDIA L4", 23034 * MiB, 121, 0.3e12, 72, 16, 10, 2040, 210, 6251,
                False, False, 0.62, 86, 0.2, 4),
    "A10G": Board("NVIDIA A10G", 23028 * MiB, 125, 0.6e12, 300, 25, 30, 1710, 210, 6251,
                  False, False, 0.16, 86, 0.2, 4),
    "RTX6000ADA": Board("NVIDIA RTX 6000 Ada Generation", 49140 * MiB, 364, 0.96e12, 300, 25, 25,
                        2505, 210, 10001, False, True, 0.17, 86, 0.2, 4),
    "RTX4090": Board("NVIDIA GeForce RTX 4090", 24564 * MiB, 165, 1.008e12, 450, 22, 20, 2520, 210,
                     10501, False, True, 0.12, 84, 0.5, 4),
    "T4": Board("Tesla T4", 15360 * MiB, 65, 0.32e12, 70, 10, 9, 1590, 300, 5001,
                False, False, 0.75, 85, 0.5, 3),
}
