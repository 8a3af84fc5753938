"""Corpus I: recorded GPU situations written blind, from physics and what users run.

``traces(filter)`` yields ``(Truth, frames)`` for bench/heldout/harness.py; ``filter``
matches a trace's name, family, cause, or "healthy".  Every trace is deterministic: its
random generator is seeded from the CRC-32 of its name.  README.md says what was read,
the physics, and the catalogue.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from .box import Box
from .catalogue import REG

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


# logical CPUs of the host, by board and count (cloud shapes and DGX/HGX boxes)
CPUS = {("H100", 1): 26, ("H100", 4): 96, ("H100", 8): 224, ("H200", 1): 44, ("H200", 2): 96,
        ("H200", 8): 224, ("A100", 1): 32, ("A100", 2): 64, ("A100", 4): 128, ("A100", 8): 256,
        ("L40S", 1): 32, ("A10G", 1): 8, ("B200", 1): 36}
CPUS_OVERRIDE = {"ddp-4xh100-cpu-neighbour": 64}
# where the user runs with eBPF (about a quarter of the traces)
EBPF = {"vllm-h100-diurnal-rise", "sglang-h100-bursty-onoff", "train-h100-checkpoint-pauses",
        "ddp-8xh100-eval-pass", "vllm-tp4-h100-ranks-differ", "cuda-h200-matmul-at-power-cap",
        "vllm-h100-n8-logprobs-request", "vllm-h100-rag-burst-long-prompts",
        "vllm-tp4-h100-gridlock-one-gpu-750mhz", "vllm-h100-preemption-storm",
        "train-h100-foreach-false-ema", "vllm-h100-notebook-joins",
        "vllm-h100-eagle-acceptance-collapse"}
# engine scrape interval (s) where it is not every tick
SCRAPE = {"vllm-h200-traffic-falls-to-a-tenth": 10, "sglang-8xh200-independent-servers-healthy": 6,
          "vllm-l40s-evening-decline": 4, "ddp-8xh100-eval-pass": 4, "vllm-tp2-h200-kv-gradual": 6,
          "sglang-h200-giant-sampling-request": 4, "vllm-8xh100-one-server-oversized": 6,
          "vllm-h200-10k-prompts-in-growing-load": 10, "train-l40s-on-the-fly-tokenize": 4,
          "sglang-h200-spec-accept-falls": 6, "vllm-h100-context-growth-hbm": 4,
          "pp-4xh100-pipeline-bubbles": 15, "vllm-h100-kv-high-no-preemption": 6,
          "sglang-h100-retractions": 4, "vllm-tp2-a100-long-prompt-tenant": 10,
          "ddp-4xa100-colleague-on-gpu2": 6, "vllm-8xh100-one-gpu-shared": 10}


def _build(entry):
    name = entry["name"]
    rng = random.Random(zlib.crc32(name.encode()))
    cpus = CPUS_OVERRIDE.get(name, CPUS.get((entry["gpu"], entry["n"]), 64))
    box = Box(rng, entry["gpu"], entry["n"], entry["tick"], entry["dur"], cpus=cpus,
              bg=max(0.5, cpus * 0.03), ebpf=name in EBPF, scrape=SCRAPE.get(name))
    win = entry["fn"](box)
    frames = box.run()
    window = entry["window"]
    if callable(win):
        window = win()
    w0 = box.wall0
    truth = Truth(name=name, family=entry["family"], cause=entry["cause"],
                  culprit_gpus=entry["culprit"],
                  window=None if window is None else (w0 + window[0], w0 + window[1]),
                  engine=entry["engine"], gpus=entry["n"], gpu_model=entry["gpu"],
                  tick_s=float(entry["tick"]), note=entry["note"], start_wall_s=frames[0].time_wall_s)
    return truth, frames


def _matches(entry, filter):
    if not filter:
        return True
    if filter == "healthy":
        return entry["cause"] is None
    return filter in (entry["name"], entry["family"], entry["cause"])


def traces(filter=None):
    for entry in REG:
        if _matches(entry, filter):
            yield _build(entry)
