#!/usr/bin/env python3
"""Cost of one NVML sampler tick, measured against the fake NVML used by the tests.

Prints NVML calls per GPU per tick and the time per tick, side by side with a
reference in the same run: the same number of bare calls into the fake (so the
ratio is gputop's own overhead: wrapping, GPM structs, process lookups).
On a real GPU the driver calls dominate; scripts/gpu-check.sh measures that.

Usage: python bench/nvml.py [--gpus 8] [--ticks 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gputop.sources.nvml import NvmlSource  # noqa: E402
from tests.fake_nvml import FakeGpu, FakeNvml, FakeProc, GiB  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--ticks", type=int, default=200)
    args = parser.parse_args()
    gpus = [FakeGpu("NVIDIA H100 80GB HBM3", 80 * GiB, 70 * GiB, util_pct=90,
                    gpm={2: 50.0, 3: 20.0, 5: 30.0, 10: 40.0, 20: 1.0, 21: 1.0},
                    procs=[FakeProc(os.getpid(), 60 * GiB, sm_util=50)])
            for _ in range(args.gpus)]
    patch = pytest.MonkeyPatch()
    fake = FakeNvml(gpus).install(patch)
    clock = [0.0]
    source = NvmlSource(clock=lambda: clock[0])
    source.open()
    source.poll()
    calls_before = source.calls
    started = time.perf_counter()
    for _ in range(args.ticks):
        clock[0] += 1.0
        fake.advance(1.0)
        source.poll()
    ours_s = (time.perf_counter() - started) / args.ticks
    calls_per_tick = (source.calls - calls_before) / args.ticks
    source.close()

    handle = fake.nvmlDeviceGetHandleByIndex(0)
    bare = [fake.nvmlDeviceGetUtilizationRates, fake.nvmlDeviceGetMemoryInfo,
            fake.nvmlDeviceGetPowerUsage]
    n = int(calls_per_tick)
    started = time.perf_counter()
    for _ in range(args.ticks):
        for i in range(n):
            bare[i % len(bare)](handle)
    bare_s = (time.perf_counter() - started) / args.ticks
    patch.undo()

    print(f"{args.gpus} fake GPUs (GPM, 1 process each), {args.ticks} ticks")
    print(f"NVML calls per tick: {calls_per_tick:.0f} ({calls_per_tick / args.gpus:.1f} per GPU)")
    print(f"{'':<28}{'ms/tick':>10}{'ms/GPU':>10}")
    print(f"{'gputop NvmlSource.poll':<28}{ours_s * 1e3:>10.3f}{ours_s * 1e3 / args.gpus:>10.3f}")
    print(f"{'same count of bare calls':<28}{bare_s * 1e3:>10.3f}{bare_s * 1e3 / args.gpus:>10.3f}")
    print(f"ratio: {ours_s / bare_s:.1f}x (gputop's own work around each call)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
