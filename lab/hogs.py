"""Side processes that take what the serving loop needs: a core, or the GPU.

    python -m lab.hogs cpu --seconds 25              # a busy loop (the runner pins it)
    python -m lab.hogs gpu --device cuda --seconds 25

``gpu`` is a second CUDA context multiplying bf16 matrices back to back: without MPS the
GPU time-slices between it and the serve loop, which is what a shared GPU does.  On the
CPU it multiplies float32 matrices instead, on the cores it is pinned to.  Both end by
themselves after ``--seconds`` (the runner also stops them), so none outlives a run.
"""

from __future__ import annotations

import argparse
import sys
import time


def cpu(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def gpu(device: str, seconds: float, size: int) -> None:
    import torch

    torch.set_num_threads(1)
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(10):
            a @ b
        if device.startswith("cuda"):
            torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["cpu", "gpu"])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", type=int, default=0,
                        help="matrix side (default 8192 on CUDA, 256 on the CPU)")
    args = parser.parse_args(argv)
    if args.kind == "cpu":
        cpu(args.seconds)
    else:
        gpu(args.device, args.seconds,
            args.size or (8192 if args.device.startswith("cuda") else 256))
    return 0


if __name__ == "__main__":
    sys.exit(main())
