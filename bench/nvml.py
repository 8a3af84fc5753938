#!/usr/bin/env python3
"""Cost of one NVML sampler tick, measured against the fake NVML used by the tests.

Prints NVML calls per GPU per tick and the time per tick, side by side with a
reference in the same run: the same number of bare calls into the fake (so the
ratio is gputop's own overhead: wrapping, GPM structs, process lookups).
On a real GPU the driver calls dominate; scripts/gpu-check.sh measures that.

``--programs SECONDS`` then runs the dashboards themselves in tmux over the C stand-in
libnvidia-ml (tests/stand_in/nvml_stand_in.c, which counts every call into a shared
counter): gputop and, when installed, nvitop (-m full --interval 1), 8 GPUs, 8 processes,
and prints NVML calls per GPU per second of each, from the same run.

Usage: python bench/nvml.py [--gpus 8] [--ticks 200] [--programs 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gputop.sources.nvml import NvmlSource
from tests.fake_nvml import FakeGpu, FakeNvml, FakeProc, GiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--ticks", type=int, default=200)
    parser.add_argument("--programs", type=float, default=0.0, metavar="SECONDS",
                        help="also count the calls of gputop and nvitop over the C stand-in")
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
    if args.programs:
        programs(args.programs)
    return 0


def programs(seconds: float, gpus: int = 8, warmup_s: float = 5.0) -> None:
    """NVML calls per GPU per second of each dashboard, counted by the C stand-in."""
    import shlex
    import shutil
    import struct
    import subprocess
    import tempfile
    from pathlib import Path

    sys.path.insert(0, os.path.dirname(__file__))
    from tui import LiveSetup

    live = LiveSetup(gpus)
    python = shlex.quote(sys.executable)
    runs = [("gputop -d 1", f"{python} -m gputop -d 1")]
    nvitop = shutil.which("nvitop") or shutil.which("nvitop", path=os.path.dirname(sys.executable))
    if nvitop:
        runs.append(("nvitop -m full --interval 1", f"{nvitop} -m full --interval 1"))
    else:
        print("(nvitop not installed: pip install nvitop for its row)")
    print(f"\n{gpus} GPUs from the C stand-in, 8 processes, {seconds:g} s each after "
          f"{warmup_s:g} s, 200x50")
    try:
        for name, command in runs:
            counter = Path(tempfile.mkdtemp()) / "calls"
            session = f"nvml-{os.getpid()}-{len(name)}"
            subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50",
                            f"{live.nvml_env(8)} NVML_STAND_IN_CALLS={counter} {command}"],
                           check=True)
            try:
                time.sleep(warmup_s)
                before = struct.unpack("Q", counter.read_bytes()[:8])[0]
                time.sleep(seconds)
                after = struct.unpack("Q", counter.read_bytes()[:8])[0]
            finally:
                subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
            print(f"{name:<30}{(after - before) / seconds / gpus:>8.1f} NVML calls per GPU per s")
    finally:
        live.close()


if __name__ == "__main__":
    sys.exit(main())
