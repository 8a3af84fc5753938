#!/usr/bin/env python3
"""Record gputop's NVML frames next to nvidia-smi while PyTorch runs two phases.

Phase "matmul": a steady large bf16 matmul loop (GPU-Util ~100%, SM activity high).
Phase "tiny": a loop of one-element kernels (GPU-Util ~100%, SM activity near 0).
Writes under OUT: frames.jsonl (raw frames, replayable test data), phases.json (time
ranges), summary.txt (per phase: gputop's GPU-Util and SM active vs nvidia-smi, and
the time per NVML tick).  Run by scripts/gpu-check.sh on a machine with a GPU.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gputop.sampler import Sampler  # noqa: E402
from gputop.schema import frame_to_dict  # noqa: E402
from gputop.sources.nvml import NvmlSource  # noqa: E402

OUT = os.environ.get("OUT", "out")
PHASE_S = float(os.environ.get("PHASE_S", "25"))


def workload(phases: list, stop: threading.Event) -> None:
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    x = torch.zeros(1, device="cuda")
    for name in ("matmul", "tiny"):
        start = time.time()
        phases.append({"phase": name, "start_wall_s": start})
        while time.time() - start < PHASE_S and not stop.is_set():
            if name == "matmul":
                for _ in range(20):
                    a @ b
            else:
                for _ in range(2000):
                    x.add_(1)
            torch.cuda.synchronize()
        phases[-1]["end_wall_s"] = time.time()
    phases.append({"phase": "idle", "start_wall_s": time.time()})
    time.sleep(5)
    phases[-1]["end_wall_s"] = time.time()


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,index,utilization.gpu,memory.used",
         "--format=csv,nounits", "-l", "1"],
        stdout=open(os.path.join(OUT, "nvidia-smi.csv"), "w"), stderr=subprocess.STDOUT)
    source = NvmlSource([0])
    sampler = Sampler([source], 1.0)
    sampler.open()
    phases: list = []
    stop = threading.Event()
    worker = threading.Thread(target=workload, args=(phases, stop))
    worker.start()
    tick_ms = []
    with open(os.path.join(OUT, "frames.jsonl"), "w") as frames:
        while worker.is_alive():
            started = time.perf_counter()
            frame = sampler.tick()
            tick_ms.append((time.perf_counter() - started) * 1e3)
            frames.write(json.dumps(frame_to_dict(frame)) + "\n")
            time.sleep(max(0.0, 1.0 - (time.perf_counter() - started)))
    sampler.close()
    smi.terminate()
    with open(os.path.join(OUT, "phases.json"), "w") as f:
        json.dump(phases, f, indent=1)
    lines = [f"NVML tick (1 GPU, GPM, processes): median {statistics.median(tick_ms):.2f} ms, "
             f"max {max(tick_ms):.2f} ms"]
    frames = [json.loads(line) for line in open(os.path.join(OUT, "frames.jsonl"))]
    for p in phases:
        inside = [f["gpus"][0] for f in frames
                  if p["start_wall_s"] + 2 <= f["time_wall_s"] <= p["end_wall_s"]]
        util = [g["util_gpu_pct"] for g in inside if g.get("util_gpu_pct") is not None]
        sm = [g["sm_active_pct"] for g in inside if g.get("sm_active_pct") is not None]
        lines.append(f"{p['phase']}: gputop GPU-Util mean {statistics.mean(util) if util else 'n/a'}"
                     f", SM active mean {statistics.mean(sm) if sm else 'n/a'} ({len(inside)} frames)")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(OUT, "summary.txt"), "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
