"""A training job (DDP / FSDP over N GPUs, or one GPU) or a plain CUDA program, per tick.

A step is: each rank's compute (its work at its clock, shared with any other process on
the GPU), then the part of the gradient all-reduce not hidden behind backward, which
ends when the slowest rank and the slowest link are done: faster ranks spin in the NCCL
kernel (GPU-Util counts it, SM activity is only NCCL's few blocks).  The DataLoader
produces batches at its own pace; when it is slower than the step, the GPU idles between
steps (a saw-tooth in the buffered GPU-Util samples).  A checkpoint pauses the GPUs while
one host thread writes; an eval pass runs forward only, without the all-reduce.
Progress counters (when the job exports one) count finished steps.
"""

from __future__ import annotations

from gputop.schema import EngineSample

from .effects import mult
from .specs import GIB


class Trainer:
    def __init__(self, p: dict, board, gpus: list[int], rng):
        self.p, self.b, self.gpus, self.rng = p, board, gpus, rng
        self.steps = 0.0
        self.done = 0  # whole steps finished
        self.cpu = 0.0
        self.invol = 0.0
        self.vol = 0.0
        self.worker_cpu = 0.0
        self.busiest = 0.0
        self.mem = {g: int(p.get("mem_gb", 60) * GIB * (1 + 0.01 * rng.random())) for g in gpus}
        self.phase = rng.random()

    def tick(self, t: float, dt: float, e: dict, rs: dict):
        p, rng = self.p, self.rng
        n = len(self.gpus)
        if p.get("end_s") and t >= p["end_s"]:
            return {"acts": {g: dict(busy=0.0, context=False, mem_used=0) for g in self.gpus},
                    "rate": 0.0, "exited": True, "cores": 0.0, "worker_cores": 0.0}
        if e["pause"] > 0.5:  # checkpoint: GPUs idle, one thread pickles and writes
            self._cpu(dt, 1.05, 0.1, e)
            return {"acts": {g: dict(busy=0.0, sm=0.0, dram=0.0, tensor=0.0,
                                     mem_used=self.mem[g], pcie_tx=900.0) for g in self.gpus},
                    "rate": 0.0}
        ev = e["eval"] > 0.5
        tiny = e["tiny"]
        comp = p["compute_s"] * mult(e, "work_mult") * (0.36 if ev else 1.0)
        fill, tensor, dram = p.get("fill", 0.88), p.get("tensor", 0.55), p.get("dram", 0.3)
        if tiny > 0:  # the same work done as many tiny kernels on a few SMs
            comp *= 1 + tiny * (p.get("tiny_slow", 5.0) - 1)
            fill = fill * (1 - tiny) + 0.07 * tiny
            tensor = tensor * (1 - tiny) + 0.003 * tiny
            dram = dram * (1 - tiny) + 0.02 * tiny
        host = p.get("launches", 900) * p.get("launch_us", 4.0) * 1e-6 * (
            1 + 2.5 * e["launch_slow"] + 8 * e["jitter"] + 12 * e["contention"]) * (
            1 + (p.get("tiny_launch", 4.0) - 1) * tiny)
        own = {}
        for g in self.gpus:
            c = comp * e["heavy"].get(g, 1.0) / rs[g] ** 0.85
            c /= max(0.05, 1.0 - e["share"].get(g, 0.0))
            own[g] = max(c, host)
        slowest = max(own.values())
        comm = 0.0 if (n == 1 or ev) else p.get("comm_s", 0.08) * max(
            e["link"].get(g, 1.0) for g in self.gpus)
        exposed = comm * (1 - p.get("overlap", 0.7))
        sync = slowest + exposed + p.get("opt_s", 0.01)
        data = p.get("data_s", 0.3 * sync) * mult(e, "loader_mult") * (1 + rng.gauss(0, 0.04))
        step = max(sync, data) * (1 + rng.gauss(0, p.get("jit", 0.01)))
        self.steps += dt / step
        self._rate = 1.0 / step
        self.done = int(self.steps)
        acts = {}
        for g in self.gpus:
            s = e["share"].get(g, 0.0)
            mine = comp * e["heavy"].get(g, 1.0) / rs[g] ** 0.85
            c_g = mine / max(0.05, 1 - s)
            wait = slowest - own[g] + exposed
            busy = min(1.0, (c_g + wait + p.get("opt_s", 0.01)) / step)
            sm = (mine * fill + s * c_g * 0.8 + wait * 0.16) / step
            link = (p.get("grad_gb", 0) * 1024 * 2 * (n - 1) / n / step) if n > 1 and not ev else 0.0
            acts[g] = dict(busy=busy, sm=min(0.995, sm), occ=min(0.9, sm * 0.45),
                           tensor=min(0.95, (mine * tensor + s * c_g * 0.3) / step),
                           dram=min(0.97, (mine * dram + wait * 0.02) / step),
                           nvlink=link / e["link"].get(g, 1.0) if self.b.nvlink_gbs else 0.0,
                           pcie_rx=p.get("batch_mb", 40) / step + (0 if self.b.nvlink_gbs else link),
                           pcie_tx=6.0, mem_used=self.mem[g], period_s=step,
                           duty=min(1.0, sync / step) if data > sync * 1.05 else None,
                           phase=self.phase, t=t)
        # host: each rank's main thread launches; the workers decode / read batches
        cpu_bound = p.get("loader_cpu", 0.5)  # cores per worker while it works
        work = min(1.0, (data / max(step, 1e-9))) * (1 - 0.85 * e["iowait"])
        workers = p.get("workers", 4) * n
        self._cpu(dt, n * (min(1.0, host / step + 0.25)), workers * cpu_bound * work, e)
        return {"acts": acts, "rate": 1.0 / step, "step_s": step, "data_bound": data > sync * 1.05}

    def _cpu(self, dt, main_cores, worker_cores, e):
        cont = e["contention"]
        got = (main_cores + worker_cores) * (1 - 0.4 * cont)
        self.cpu += dt * got
        self.worker_cpu += dt * worker_cores * (1 - 0.4 * cont)
        self.busiest += dt * min(1.0, main_cores / max(1, len(self.gpus))) * (1 - 0.35 * cont)
        self.invol += dt * (25 * len(self.gpus) + 6 * worker_cores) * (1 + 110 * cont + 12 * e["jitter"])
        self.vol += dt * (800 + 300 * worker_cores)

    def sample(self, url, pids, wall, mono) -> EngineSample | None:
        unit = self.p.get("counter")
        if not unit:
            return None
        per = self.p.get("tokens_per_step", 1_048_576) if unit == "tokens" else \
            self.p.get("samples_per_step", 256)
        return EngineSample(kind="trainer", url=url, model="", time_wall_s=wall, time_mono_s=mono,
                            generation_tokens_total=float(self.done * per),
                            requests_finished_total=float(self.done), work_unit=unit,
                            pids=tuple(pids), cpu_s=round(self.cpu, 2),
                            ctx_involuntary=int(self.invol),
                            busiest_thread_cpu_s=round(self.busiest, 2),
                            busiest_thread=f"{pids[0] if pids else 0} python")
