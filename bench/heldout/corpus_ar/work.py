"""Training jobs step by step, and plain CUDA programs / services as kernel streams.

A training step on each rank: wait for the loader's next batch (workers x CPU cost per
batch at the CPU share they get, plus storage reads), compute scaled by that GPU's clock and
time-slicing, then the gradient collective, which starts when the last rank arrives: early
ranks spin in an NCCL kernel (GPU busy, SM nearly idle).  Then the optimizer.  Checkpoints
and evaluation passes interrupt the loop on their own schedule.
"""
from __future__ import annotations

import math

# activity profiles: (busy, sm, tensor, dram) while a phase runs
GEMM = (1.0, 0.93, 0.72, 0.34)
CONV = (1.0, 0.88, 0.55, 0.48)
NCCL_WAIT = (1.0, 0.025, 0.0, 0.01)
NCCL_XFER = (1.0, 0.09, 0.0, 0.22)
OPTIM = (1.0, 0.55, 0.0, 0.85)
EMBED = (1.0, 0.45, 0.02, 0.93)
TINY = (0.88, 0.05, 0.01, 0.03)


def mix(a, b, w):
    return tuple(x * (1 - w) + y * w for x, y in zip(a, b))


class Trainer:
    def __init__(self, node, ctx_id, rng, gpus, t_comp, profile=GEMM, t_opt=0.04,
                 opt_profile=OPTIM, batch=32, tokens_per_sample=0, workers=6,
                 cpu_per_batch=0.3, io_bytes=0.0, storage_bw=2e9, prefetch=2, grad_bytes=0.0,
                 accum=1, n_kernels=1500, launch_us=4.5, ck_every=0.0, ck_s=0.0, ck_at=0.0,
                 ev_every=0.0, ev_s=0.0, ev_at=0.0, work="samples", counter=True,
                 rollout_s=0.0, learn_s=0.0, envs=0, env_cpu=0.0, host_step_s=0.01):
        self.node, self.ctx, self.rng = node, ctx_id, rng
        self.gpus = gpus
        self.R = len(gpus)
        self.t_comp = t_comp
        self.profile = profile
        self.t_opt = t_opt
        self.opt_profile = opt_profile
        self.batch = batch
        self.tps = tokens_per_sample
        self.workers = workers
        self.cpu_per_batch = cpu_per_batch
        self.io_bytes = io_bytes
        self.storage_bw = storage_bw
        self.cap = prefetch * workers
        self.q = [float(self.cap)] * self.R
        self.grad_bytes = grad_bytes
        self.accum = accum
        self.n_kernels = n_kernels
        self.launch_us = launch_us
        self.ck_every, self.ck_s, self.ck_next = ck_every, ck_s, ck_at or ck_every
        self.ev_every, self.ev_s, self.ev_next = ev_every, ev_s, ev_at or ev_every
        self.work = work
        self.counter = counter
        self.rollout_s, self.learn_s = rollout_s, learn_s
        self.envs, self.env_cpu = envs, env_cpu
        self.host_step_s = host_step_s
        self.t = 0.0
        self.steps = 0
        self.samples = 0.0
        self.tokens = 0.0
        self.mods = {}
        self.tick_launches = 0
        self.tick_wait = 0.0
        self.tick_busy_host = 0.0
        self.tick_data_wait = 0.0
        self.main_threads = []
        self.worker_threads = []
        self.env_threads = []
        self.phase = "train"

    def mod(self, name, default, *args):
        f = self.mods.get(name)
        return default if f is None else f(self.t, *args)

    def run_until(self, t_end):
        guard = 0
        while self.t < t_end and guard < 200:
            guard += 1
            self._one()
        self._set_wants()

    def _set_wants(self):
        node = self.node
        frac = min(1.0, self.tick_busy_host / max(node.slot_s, 1e-9) / max(1, self.R))
        for th in self.main_threads:
            th.want = 0.25 + 0.7 * frac if self.phase != "ckpt" else 0.6
        self.tick_busy_host = 0.0
        rate_use = self.mod("worker_util", 0.75)
        for th in self.worker_threads:
            th.want = rate_use if self.phase in ("train",) else 0.1
        env_on = self.phase == "rollout"
        for th in self.env_threads:
            th.want = (0.95 if env_on else 0.05) * self.mod("env_want", 1.0)

    def _data_rate(self, r):
        node = self.node
        share = node.host.share * self.mod("worker_share", 1.0, r)
        cpu = self.cpu_per_batch * self.mod("cpu_per_batch_mult", 1.0)
        bw = self.storage_bw * self.mod("storage_mult", 1.0)
        io = self.io_bytes / bw if self.io_bytes else 0.0
        workers = self.mod("workers", self.workers)
        return workers / (cpu / max(share, 0.02) + io)  # batches/s

    def _one(self):
        node = self.node
        t0 = self.t
        # phases on a schedule: checkpoint, evaluation, RL rollout
        if self.ck_every and t0 >= self.ck_next:
            self.ck_next += self.ck_every
            self.phase = "ckpt"
            for g in self.gpus:
                node.gpus[g].deposit(t0, t0 + self.ck_s, 0.22, 0.02, 0.0, 0.05, self.ctx,
                                     pcie=6e9 / self.R)
            self.tick_busy_host += self.ck_s * 0.6 * self.R
            self.t = t0 + self.ck_s
            return
        if self.ev_every and t0 >= self.ev_next:
            self.ev_next += self.ev_every
            self.phase = "eval"
            end = t0 + self.ev_s
            t = t0
            while t < end:
                dt = self.t_comp * 0.38 * node.gpus[self.gpus[0]].speed()
                for g in self.gpus:
                    node.gpus[g].deposit(t, t + dt, *mix(self.profile, CONV, 0.3), self.ctx)
                    node.gpus[g].deposit(t + dt, t + dt * 1.25, 0.0, 0.0, 0.0, 0.0, self.ctx)
                t += dt * 1.25
            self.t = end
            self.phase = "train"
            return
        if self.rollout_s:
            cyc = self.rollout_s + self.learn_s
            pos = t0 % cyc
            if pos < self.rollout_s:
                self.phase = "rollout"
                end = t0 - pos + self.rollout_s
                end = min(end, t0 + 1.0)
                # env workers step the simulator on the CPU; the GPU runs batched policy inference
                env_rate = self.envs * node.host.share * 60.0 / self.mod("env_cost", 1.0)  # frames/s
                t = t0
                while t < end:
                    dt = 0.05
                    for g in self.gpus:
                        node.gpus[g].deposit(t, t + 0.011 * self.mod("infer_mult", 1.0), 0.9, 0.35, 0.2, 0.2, self.ctx)
                    t += dt
                self.samples += env_rate * (end - t0)
                self.tick_busy_host += (end - t0) * 0.5 * self.R
                self.t = end
                return
            self.phase = "train"
        else:
            self.phase = "train"
        # one training step on every rank
        ready = []
        waits = []
        comps = []
        n_micro = self.accum
        for i, g in enumerate(self.gpus):
            gpu = node.gpus[g]
            rate = self._data_rate(i)
            dt_prev = max(1e-3, getattr(self, "_last_step", 0.5))
            self.q[i] = min(self.cap, self.q[i] + rate * dt_prev)
            wait = 0.0
            if self.q[i] >= n_micro:
                self.q[i] -= n_micro
            else:
                wait = (n_micro - self.q[i]) / rate
                self.q[i] = 0.0
            share_main = max(0.03, node.host.share * self.mod("main_share", 1.0, i))
            tc = self.t_comp * n_micro * self.mod("comp_mult", 1.0, i)
            prof = self.mod("profile", self.profile, i)
            cmpf = prof[2] / max(prof[2] + prof[3], 1e-6)
            tc *= (cmpf * gpu.speed() + (1 - cmpf) * gpu.mem_speed())
            tc *= gpu.slowdown_for(self.ctx)
            t_launch = self.n_kernels * n_micro * self.mod("kern_mult", 1.0, i) * \
                (self.launch_us * 1e-6 / share_main)
            span = max(tc, t_launch)
            busy = tc / span if t_launch > tc else 1.0
            if t_launch > tc:
                busy = min(1.0, (tc + 0.85 * (t_launch - tc)) / span)
                prof_eff = (busy, prof[1] * tc / span + 0.05 * (busy - tc / span),
                            prof[2] * tc / span, prof[3] * tc / span + 0.02)
            else:
                prof_eff = prof
            hs = self.host_step_s * n_micro * self.mod("host_mult", 1.0, i) / share_main
            hs += self.mod("jitter_s", 0.0, i) * self.n_kernels * n_micro  # launch thread preempted: GPU drains
            self.tick_busy_host += t_launch + hs
            self.tick_launches += int(self.n_kernels * n_micro * self.mod("kern_mult", 1.0, i))
            start = t0 + wait + hs + 0.004
            gpu.deposit(start - 0.004, start, 0.5, 0.05, 0.0, 0.1, self.ctx, pcie=3e9)
            gpu.deposit(start, start + span, *prof_eff, self.ctx)
            ready.append(start + span)
            waits.append(wait)
            comps.append(span)
        self.tick_data_wait += sum(waits) / self.R
        t_coll0 = max(ready)
        t_x = 0.0
        if self.R > 1 and self.grad_bytes:
            b = node.gpus[self.gpus[0]].b
            link = (b.nvlink or b.pcie * 0.7)
            t_x = 2 * self.grad_bytes * (self.R - 1) / self.R / link + 0.0015
            t_x *= self.mod("link_mult", 1.0)
        for i, g in enumerate(self.gpus):
            gpu = node.gpus[g]
            if self.R > 1 and self.grad_bytes:
                gpu.deposit(ready[i], t_coll0, *NCCL_WAIT, self.ctx)
                nv = self.grad_bytes * 2 / max(t_x, 1e-6) * self.mod("nvl_share", 1.0, i)
                gpu.deposit(t_coll0, t_coll0 + t_x, *NCCL_XFER, self.ctx, nvl=nv)
            to = self.t_opt * gpu.mem_speed() * self.mod("opt_mult", 1.0, i)
            gpu.deposit(t_coll0 + t_x, t_coll0 + t_x + to, *self.mod("opt_profile", self.opt_profile, i), self.ctx)
        t_end = t_coll0 + t_x + self.t_opt * max(node.gpus[g].mem_speed() * self.mod("opt_mult", 1.0, i)
                                                for i, g in enumerate(self.gpus))
        self._last_step = t_end - t0
        self.t = t_end
        self.steps += 1
        self.samples += self.batch * self.R * n_micro
        self.tokens += self.batch * self.R * n_micro * self.tps

    def counters(self):
        out = {"trainer_steps_total": float(self.steps)}
        if self.work == "tokens":
            out["trainer_tokens_total"] = float(self.tokens)
        elif self.work == "samples":
            out["trainer_samples_total"] = float(self.samples)
        return out

    def take_tick(self, tick_s):
        out = {"launches": self.tick_launches, "graphs": 0, "data_wait": self.tick_data_wait}
        self.tick_launches = 0
        self.tick_data_wait = 0.0
        return out


class Stream:
    """A plain CUDA program or service: kernels at an intensity set by the scenario.

    ``load(t)`` is the fraction of the GPU the program would keep busy if alone (a service:
    requests/s x GPU seconds per request); ``profile(t)`` its kernels' SM/tensor/DRAM coverage.
    Its own work counter (requests or frames done) slows when time-sliced."""

    def __init__(self, node, ctx_id, rng, gpus, load, profile=GEMM, n_kernels_per_s=2000,
                 launch_us=4.0, host_want=0.3):
        self.node, self.ctx, self.rng = node, ctx_id, rng
        self.gpus = gpus
        self.load = load
        self.profile = profile
        self.kps = n_kernels_per_s
        self.launch_us = launch_us
        self.host_want = host_want
        self.t = 0.0
        self.done = 0.0
        self.mods = {}
        self.tick_launches = 0
        self.threads = []

    def run_until(self, t_end):
        node = self.node
        t0 = self.t
        dt = t_end - t0
        if dt <= 0:
            return
        for g in self.gpus:
            gpu = node.gpus[g]
            want = max(0.0, self.load(t0))
            prof = self.profile(t0) if callable(self.profile) else self.profile
            slow = gpu.slowdown_for(self.ctx)
            got = min(1.0, want * slow * (gpu.speed() if prof[1] > 0.3 else 1.0))
            if got > 0:
                # the busy time is spread through the slot in short bursts
                n = 4
                seg = dt / n
                for j in range(n):
                    a = t0 + j * seg
                    gpu.deposit(a, a + seg * got, *prof, self.ctx)
            self.done += want / slow * dt
        share = node.host.share
        self.tick_launches += int(self.kps * dt * (1.0 if self.load(t0) > 0 else 0.0))
        for th in self.threads:
            th.want = self.host_want * (1.0 if self.load(t0) > 0.01 else 0.1)
        self.t = t_end

    def take_tick(self, tick_s):
        out = {"launches": self.tick_launches, "graphs": 0}
        self.tick_launches = 0
        return out
