"""Training jobs (single GPU, DDP / FSDP, pipeline-parallel), plain CUDA programs and
co-tenants, all on one step-time model.

A data-parallel step: each rank computes for ``step_s`` at full clock (``tensor`` of it
compute-bound, so it stretches as 1/clock; the rest HBM-bound, which does not), then the
gradient all-reduce finishes ``comm_s`` after the slowest rank (the ranks that finished
first wait inside the NCCL kernel: the GPU reads busy, few SMs do anything, power falls).
The DataLoader prefetches: the GPU waits only when a batch takes longer to produce than a
step takes to run (``data_s``), and then sits idle (GPU-Util saw-tooth, the loader workers
pegged).  Host launch work (``host_s`` per step) overlaps the GPU until it is the longer
one.  Pipeline stages pass micro-batches on: a step lasts (m - 1) x slowest stage + the sum
of stages (1F1B), and a stage busy less than that waits in P2P receives.
"""

from __future__ import annotations


class Trainer:
    def __init__(self, gpus, rng, *, step_s=0.45, tensor=0.7, comm_s=0.03, data_s=0.0,
                 host_s=0.12, tokens=8 * 4096, counter="tokens", publish_s=0.0, accum=1,
                 ckpt_every=0.0, ckpt_s=0.0, ckpt_at=0.0, eval_every=0.0, eval_s=0.0,
                 eval_at=0.0, mem_gb=62.0, workers=8, pp=0, micro=8, stage_mult=None,
                 name="python", cmd="python train.py", dram=0.3):
        self.gpus, self.rng = gpus, rng
        self.step_s, self.tensor, self.comm_s, self.data_s, self.host_s = step_s, tensor, comm_s, data_s, host_s
        self.tokens, self.counter, self.publish_s, self.accum = tokens, counter, publish_s, accum
        self.ckpt_every, self.ckpt_s, self.ckpt_at = ckpt_every, ckpt_s, ckpt_at
        self.eval_every, self.eval_s, self.eval_at = eval_every, eval_s, eval_at
        self.mem = int(mem_gb * 2**30)
        self.workers = workers
        self.pp, self.micro = pp, micro
        self.stage_mult = stage_mult or {}
        self.name, self.cmd = name, cmd
        self.dram = dram
        self.clock = {g: 1.0 for g in gpus}
        self.share = {g: 1.0 for g in gpus}
        self.rank_mult = {g: 1.0 + rng.uniform(-0.01, 0.01) for g in gpus}
        self.cpu_share = 1.0
        self.tiny_s = 0.0  # GPU time per step in tiny kernels (an eager per-parameter loop)
        self.stall_s = 0.0  # launch thread off-CPU per step
        self.steps = 0.0
        self.micro_steps = 0.0
        self.published = 0.0
        self.pub_steps = 0.0
        self.next_pub = 0.0
        self.phase = rng.random()
        self.loader_cpu = 0.0
        self.host_busy = 0.0
        self.last_T = step_s

    def _mode(self, t):
        if self.ckpt_every and t >= self.ckpt_at and (t - self.ckpt_at) % self.ckpt_every < self.ckpt_s:
            return "ckpt"
        if self.eval_every and t >= self.eval_at and (t - self.eval_at) % self.eval_every < self.eval_s:
            return "eval"
        return "train"

    def advance(self, t0, dt):
        mode = self._mode(t0)
        act = {}
        if mode == "ckpt":
            for g in self.gpus:
                act[g] = dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, pcie=2500.0, subs=[0.0])
            self.loader_cpu = 0.2
            self.host_busy = 1.0
            return act
        f = {g: self.clock[g] * self.share[g] for g in self.gpus}
        comp = {}
        for g in self.gpus:
            m = self.rank_mult[g] * self.stage_mult.get(g, 1.0)
            comp[g] = self.step_s * m * (self.tensor / f[g] + (1 - self.tensor) / self.share[g])
        if mode == "eval":
            comp = {g: c * 0.38 for g, c in comp.items()}
        tiny = self.tiny_s
        if self.pp:
            slowest = max(comp.values()) / self.micro
            T_gpu = (self.micro - 1) * slowest + sum(comp.values()) / self.micro + tiny
        else:
            T_gpu = max(comp.values()) + self.comm_s + tiny
        host = (self.host_s + self.stall_s) / max(0.05, self.cpu_share)
        T_run = max(T_gpu, host) + 0.15 * min(T_gpu, host) * (host > 0.8 * T_gpu)
        wait = max(0.0, self.data_s - T_run) if mode == "train" else 0.0
        T = T_run + wait
        self.last_T = T
        slowest_c = max(comp.values())
        for g in self.gpus:
            c = comp[g]
            if self.pp:
                own = c + tiny
                nccl = max(0.0, T_gpu - own) * 0.55
            else:
                own = c + tiny
                nccl = slowest_c - c + self.comm_s
            busy_t = min(T_run, own + nccl)
            b = busy_t / T
            sm = (0.88 * c + 0.05 * tiny + 0.16 * nccl) / T
            ten = (0.82 * self.tensor * c * (0.5 if mode == "eval" else 1.0)) / T
            act[g] = dict(busy=b, sm=min(0.99, sm), tensor=min(0.97, ten),
                          dram=min(0.95, (self.dram * c + 0.05 * nccl) / T),
                          nvlink=(40000.0 if len(self.gpus) > 1 else 0.0) * (b > 0.1),
                          subs=self._subs(dt, T, busy_t), occ=min(0.9, sm * 0.3))
        if mode == "train":
            n = dt / T
            self.micro_steps += n
            self.steps = self.micro_steps / self.accum
        self.loader_cpu = min(self.workers, self.workers * min(1.0, self.data_s / T) * 0.97) if self.data_s else 0.3
        self.host_busy = min(1.0, host / T)
        return act

    def _subs(self, dt, T, busy_t):
        n = max(1, int(round(dt * 6)))
        out = []
        if busy_t >= T * 0.999:
            return [1.0] * n
        w = dt / n
        for i in range(n):
            a = i * w + self.phase * T
            b = a + w
            tot, x = 0.0, a
            while x < b:
                cyc = x % T
                end = min(b, x - cyc + (busy_t if cyc < busy_t else T))
                if cyc < busy_t:
                    tot += end - x
                x = end if end > x else x + 1e-6
            out.append(tot / w)
        self.phase = (self.phase + dt / T) % 1.0
        return out

    def counter_value(self, t):
        """What the job exports: updated only every publish_s (its logging hook)."""
        if t >= self.next_pub:
            self.pub_steps = int(self.steps)
            self.next_pub = t + (self.publish_s or 0.0)
        return self.pub_steps


class Program:
    """A plain CUDA program: phases of fixed activity (looping)."""

    def __init__(self, gpus, phases, mem_gb=20.0, name="python3", cmd="python3 run.py", loop=True):
        self.gpus, self.phases, self.mem = gpus, phases, int(mem_gb * 2**30)
        self.name, self.cmd, self.loop = name, cmd, loop
        self.clock = {g: 1.0 for g in gpus}
        self.share = {g: 1.0 for g in gpus}
        self.total = sum(p["dur"] for p in phases)
        self.host_busy = 1.0
        self.cpu_share = 1.0

    def current(self, t):
        x = t % self.total if self.loop else min(t, self.total - 1e-6)
        for p in self.phases:
            if x < p["dur"]:
                return p
            x -= p["dur"]
        return self.phases[-1]

    def advance(self, t0, dt):
        p = self.current(t0)
        act = {}
        for g in self.gpus:
            a = {k: v for k, v in p.items() if k in ("busy", "sm", "tensor", "dram", "occ")}
            act[g] = a
        self.host_busy = p.get("cpu", 1.0)
        return act


class Tenant:
    """Another process on a GPU: from ``start`` it holds memory and, with intensity d(t),
    takes SM time; the driver time-slices, so the job it shares with gets 1/(1 + d)."""

    def __init__(self, gpu, start, mem_gb, intensity, name="python3", cmd="python3 notebook.py",
                 end=1e9, ramp_mem_s=8.0):
        self.gpu, self.start, self.end = gpu, start, end
        self.mem = int(mem_gb * 2**30)
        self.intensity = intensity
        self.name, self.cmd = name, cmd
        self.ramp = ramp_mem_s
        self.gpus = [gpu]

    def alive(self, t):
        return self.start <= t < self.end

    def d(self, t):
        return self.intensity(t) if self.alive(t) else 0.0

    def mem_at(self, t):
        if not self.alive(t):
            return 0
        return int(self.mem * min(1.0, (t - self.start + 1) / self.ramp))
