"""Training jobs and plain CUDA programs, one step-time model per job.

A training step on rank i: wait for the next batch (when the DataLoader cannot keep up),
compute (forward + backward, FLOPs at the clock its board allows), then the gradient
all-reduce: a rank that finishes early spins in the NCCL kernel until the slowest rank
arrives (GPU-Util counts that as busy; few SMs are active, power falls).  Progress counters
(trainer_tokens_total) move when a step has finished."""

from __future__ import annotations

from gputop.schema import EngineSample

from .hw import PROF, Act, mix


def busy_integral(x: float, T: float, idle: float) -> float:
    """Busy time in [0, x] of a periodic pattern: idle for ``idle`` s, then busy to T."""
    if T <= 0:
        return 0.0
    n, r = divmod(x, T)
    return n * (T - idle) + max(0.0, r - idle)


class Periodic:
    """Driver GPU-Util samples of a job that idles ``idle`` s of every ``T`` s."""

    def __init__(self):
        self.phase = 0.0

    def samples(self, dt: float, T: float, idle: float, n: int, rng) -> list[float]:
        out = []
        idle = max(0.0, min(idle, T))
        for k in range(n):
            a, b = self.phase + dt * k / n, self.phase + dt * (k + 1) / n
            frac = (busy_integral(b, T, idle) - busy_integral(a, T, idle)) / (b - a)
            out.append(max(0.0, min(1.0, frac + rng.gauss(0, 0.004))))
        self.phase = (self.phase + dt) % max(T, 1e-6)
        return out


class Training:
    def __init__(self, rng, spec, gpus=(0,), params: float = 1.3e9, tokens_step: float = 262144,
                 mfu: float = 0.42, comm_frac: float = 0.08, load_s: float = 0.0,
                 mem_bytes: int = 60 * 2**30, style: str = "ddp", workers: int = 8,
                 counter: bool = False, unit: str = "tokens", prof: str = "train",
                 cpu_loader: bool = True):
        self.cpu_loader = cpu_loader
        self.rng, self.spec, self.gpus = rng, spec, tuple(gpus)
        self.params, self.tokens_step, self.mfu = params, tokens_step, mfu
        self.comm_frac, self.load_s, self.mem, self.style = comm_frac, load_s, mem_bytes, style
        self.workers, self.counter, self.unit, self.prof = workers, counter, unit, prof
        self.per = {g: Periodic() for g in self.gpus}
        self.steps = 0.0
        self.tokens = 0.0
        self.whole = 0
        self.last_T = 1.0
        self.last_state = {}
        self.pids = ()

    def step(self, t: float, dt: float, clks: list[float], m: dict, n_samples: int):
        n = len(self.gpus)
        base = 6 * self.params * self.tokens_step / n / (self.spec.flops * self.mfu)
        if m.get("eval"):
            base *= 0.33
        if m.get("batch_scale"):
            base *= m["batch_scale"]
        slow = m.get("slow", {})
        share = m.get("share", {})
        comp = []
        for i, g in enumerate(self.gpus):
            c = base / clks[i] * slow.get(g, 1.0) / (1 - share.get(g, 0.0))
            comp.append(c)
        tiny = m.get("tiny", 0.0)  # seconds of launch-bound small kernels per step
        host = m.get("host", 1.0)
        # the host must launch the step's kernels: ~base*0.25 of CPU time at full speed
        # ~2,000 kernels a step at ~7 us of host time each, whatever the batch
        launch = 0.014 / host + m.get("launch_s", 0.0)
        cmax = max(comp)
        comm = base * self.comm_frac if n > 1 else 0.0
        if self.style == "fsdp" and n > 1:
            comm *= 1.6
        gpu_T = max(cmax + comm + tiny, launch + tiny)
        load = m.get("load_s", self.load_s)
        if "load_x" in m:  # the loader's time per batch, as a multiple of the GPU's step
            load = m["load_x"] * gpu_T
        if self.cpu_loader:  # CPU-bound workers: starved of CPU, they fall behind
            load /= host
        wait = max(0.0, load - gpu_T)  # the loader prefetches while the GPU works
        T = gpu_T + wait
        pause = m.get("pause")  # ("all" | "rank0", fraction of the tick)
        if pause:
            frac = pause[1]
        else:
            frac = 0.0
        run = dt * (1 - frac)
        steps = run / T if not m.get("stopped") else 0.0
        before = int(self.steps)
        self.steps += 0.0 if m.get("eval") else steps
        per_step = self.tokens_step * m.get("batch_scale", 1.0)
        if m.get("tiny"):
            per_step = self.tokens_step * m.get("batch_scale", 1.0)
        tok = steps * per_step * (0.0 if m.get("eval") else 1.0)
        self.tokens += (int(self.steps) - before) * per_step
        self.last_T = T
        acts = []
        busy_rank = []
        for i, g in enumerate(self.gpus):
            idle_host = max(0.0, launch - (cmax + comm)) if launch > cmax + comm else 0.0
            idle = wait + idle_host
            if m.get("stopped"):
                samples = [0.0] * n_samples
                sh = {}
            else:
                samples = self.per[g].samples(dt, T, idle, n_samples, self.rng)
            own = comp[i] * (1 - share.get(g, 0.0))
            waitc = (cmax - comp[i]) + (comp[i] * share.get(g, 0.0))
            parts = [(steps * own / dt, PROF[self.prof]),
                     (steps * waitc / dt, PROF["nccl_wait"]),
                     (steps * comm / dt, PROF["nccl_xfer"]),
                     (steps * tiny / dt, PROF["tiny"])]
            if pause:
                kind, pf = pause
                if kind == "rank0" and i != 0:
                    parts.append((pf, PROF["nccl_wait"]))
                    k = int(round(pf * n_samples))
                    samples = samples[:n_samples - k] + [1.0] * k
                else:
                    k = int(round(pf * n_samples))
                    samples = samples[:n_samples - k] + [0.0] * k
            sm, occ, dram, ten = mix(parts)
            if m.get("stopped"):
                sm = occ = dram = ten = 0.0
            busy_rank.append(sum(samples) / len(samples))
            acts.append(Act(busy=samples, sm=sm, occ=occ, dram=dram, tensor=ten,
                            own=1 - share.get(g, 0.0), mem_used=self.mem, nvlink=(steps * comm / dt) * self.spec.nvlink * 0.6
                            if n > 1 else 0.0, pcie=5e6 + (2e8 if load else 0)))
        cpu_main = min(1.0, 0.35 + 0.6 * (launch / T if T else 0) + 0.1) * host
        loader = m.get("loader_cpu", min(1.0, 0.25 + (load / T if T else 0)) * self.workers)
        loader *= host
        self.last_state = dict(T=T, wait=wait, steps_per_s=steps / dt, tok_rate=tok / dt,
                               busy=busy_rank, comp=comp)
        return acts, dict(main=cpu_main, loader=loader)


    def sample(self, wall, mono, cpu_s, invol, busiest_s, busiest) -> EngineSample:
        """lab/train_loop.py's counters: whole steps, counted when a step has finished."""
        whole = int(self.steps)
        return EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                            generation_tokens_total=float(int(self.tokens)) if self.unit == "tokens"
                            else float(whole * 256), requests_finished_total=float(whole),
                            work_unit=self.unit, time_wall_s=wall, time_mono_s=mono,
                            cpu_s=round(cpu_s, 2), ctx_involuntary=invol,
                            busiest_thread_cpu_s=round(busiest_s, 2), busiest_thread=busiest,
                            pids=self.pids)

    def reset(self) -> None:
        self.steps = self.tokens = 0.0


class Plain:
    """A plain CUDA program or notebook: per tick a busy fraction and a kernel mix."""

    def __init__(self, rng, spec, gpus=(0,), mem_bytes: int = 8 * 2**30):
        self.rng, self.spec, self.gpus, self.mem = rng, spec, tuple(gpus), mem_bytes
        self.per = {g: Periodic() for g in self.gpus}
        self.work = 0.0
        self.last_state = {}

    def step(self, t, dt, clks, m, n_samples):
        acts = []
        for i, g in enumerate(self.gpus):
            busy = m.get("busy", 0.95)
            period = m.get("period", 0.05)
            prof = PROF[m.get("prof", "stencil")]
            bound = m.get("bound", 0.3)  # how much of the work scales with the SM clock
            share = m.get("share", {}).get(g, 0.0)
            samples = self.per[g].samples(dt, period, period * (1 - busy), n_samples, self.rng)
            own = busy * (1 - share)
            sm, occ, dram, ten = mix([(own, prof)])
            rate = own * (bound * clks[i] + (1 - bound))
            self.work += rate * dt
            acts.append(Act(busy=samples, sm=sm, occ=occ, dram=dram, tensor=ten,
                            mem_used=m.get("mem", self.mem), pcie=3e6))
        self.last_state = dict(rate=rate)
        return acts, dict(main=m.get("cpu", 1.0))
