"""The lab's training loop: a causal LM trained on random tokens, fed by a DataLoader whose
workers can be made slow, with its progress exported through prometheus_client.

    python -m lab.train_loop --preset qwen2.5-0.5b --device cuda --port 8200 --control FILE

The control file (JSON, re-read by the loop and by every worker when it changes) says
the mode: ``train`` (healthy steps), ``stall`` (each worker sleeps ``stall_s`` per sample:
the GPU waits on its input), ``graph`` (each step is CUDA-graph replays of one-element
kernels for ``graph_factor`` x a healthy step's time: busy GPU-Util, idle SMs), ``idle``
(nothing on the device yet), ``warm`` (the model built, no steps), ``stop``.
GET /metrics on 127.0.0.1:PORT has ``trainer_tokens_total``, ``trainer_samples_total``,
``trainer_steps_total`` and histograms of step time and data wait; a counter moves only
when a step has finished on the device (the loss is read back every step).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

STEP_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Control:
    """The control file, re-read only when its modification time changes."""

    def __init__(self, path: str | None):
        self.path = path
        self.mtime = None
        self.value = {"mode": "train"}

    def read(self) -> dict:
        if not self.path:
            return self.value
        try:
            mtime = os.stat(self.path).st_mtime_ns
            if mtime != self.mtime:
                with open(self.path) as f:
                    value = json.load(f)
                if isinstance(value, dict):
                    self.value, self.mtime = value, mtime
        except (OSError, ValueError):
            pass
        return self.value


class RandomTokens(torch.utils.data.Dataset):
    """Random token sequences; slow on purpose while the control file says ``stall``."""

    def __init__(self, vocab: int, seq_len: int, control_path: str | None):
        self.vocab, self.seq_len = vocab, seq_len
        self.control_path = control_path
        self.control = None

    def __len__(self) -> int:
        return 2**31 - 1

    def __getitem__(self, index: int) -> torch.Tensor:
        if self.control is None:  # one per worker process
            self.control = Control(self.control_path)
        value = self.control.read()
        if value.get("mode") == "stall":
            time.sleep(float(value.get("stall_s", 0.05)))
        generator = torch.Generator().manual_seed(index)
        return torch.randint(3, self.vocab, (self.seq_len,), generator=generator)


class TinyKernels:
    """One-element kernels replayed from a CUDA graph (on the CPU: the same ops one by one)."""

    def __init__(self, device: str):
        self.x = torch.zeros(1, device=device)
        self.graph = None
        if device.startswith("cuda"):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    self.x.add_(1)  # warm-up before capture, as PyTorch asks
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                for _ in range(1000):
                    self.x.add_(1)
            torch.cuda.synchronize()

    def run_for(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            if self.graph is not None:
                self.graph.replay()
                torch.cuda.synchronize()
            else:
                for _ in range(200):
                    self.x.add_(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--port", type=int, default=8200)
    parser.add_argument("--control", default=None, help="the control file (JSON)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    from lab import model as lab_model

    if args.preset not in lab_model.PRESETS:
        parser.error(f"--preset must be one of {', '.join(lab_model.PRESETS)}")
    if args.threads:
        torch.set_num_threads(args.threads)
    cuda = args.device.startswith("cuda")
    registry = CollectorRegistry()
    tokens = Counter("trainer_tokens", "Training tokens processed (steps finished on the "
                     "device).", registry=registry)
    samples = Counter("trainer_samples", "Training samples processed.", registry=registry)
    steps = Counter("trainer_steps", "Optimizer steps finished.", registry=registry)
    step_s = Histogram("trainer_step_seconds", "Time of one step, data wait excluded.",
                       buckets=STEP_BUCKETS_S, registry=registry)
    wait_s = Histogram("trainer_data_wait_seconds", "Time the loop waited for the next batch.",
                       buckets=STEP_BUCKETS_S, registry=registry)
    start_http_server(args.port, addr="127.0.0.1", registry=registry)
    import transformers  # noqa: F401  (seconds of import, paid while idle)

    control = Control(args.control)
    while control.read().get("mode") == "idle":  # nothing on the device until asked
        time.sleep(0.05)
    model = lab_model.build(args.preset, args.device, torch.bfloat16 if cuda else torch.float32)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = torch.utils.data.DataLoader(
        RandomTokens(model.config.vocab_size, args.seq_len, args.control),
        batch_size=args.batch, num_workers=args.workers, persistent_workers=args.workers > 0,
        pin_memory=cuda, prefetch_factor=2 if args.workers else None)
    tiny = TinyKernels(args.device)
    print(f"train_loop: {args.preset} on {args.device}, batch {args.batch} x {args.seq_len}, "
          f"{args.workers} workers, metrics on http://127.0.0.1:{args.port}/metrics", flush=True)
    healthy: list[float] = []
    batches = iter(loader)

    def train_step(counted: bool = True) -> float:
        """One step on the next batch; its time, the data wait left out."""
        waited = time.perf_counter()
        batch = next(batches).to(args.device, non_blocking=True)
        started = time.perf_counter()
        if counted:
            wait_s.observe(started - waited)
        out = model(batch, labels=batch)  # the model shifts the labels itself
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        out.loss.item()  # the step is done on the device when the counter moves
        return time.perf_counter() - started

    train_step(counted=False)  # uncounted: the workers' start, the optimizer's state, the allocator
    while True:
        mode = control.read().get("mode", "train")
        if mode == "stop":
            return 0
        if mode in ("idle", "warm"):
            time.sleep(0.05)
            continue
        if mode == "graph":
            typical = statistics.median(healthy[-50:]) if healthy else 0.05
            started = time.perf_counter()
            tiny.run_for(typical * float(control.read().get("graph_factor", 4.0)))
            step_s.observe(time.perf_counter() - started)
        else:
            took = train_step()
            step_s.observe(took)
            if mode == "train":
                healthy.append(took)
        steps.inc()
        samples.inc(args.batch)
        tokens.inc(args.batch * args.seq_len)


if __name__ == "__main__":
    sys.exit(main())
