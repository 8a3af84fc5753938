"""Step-based training loops: data wait, per-rank compute scaled by the rank's clock and GPU
share, collectives in which early ranks spin in NCCL kernels, optimizer, checkpoints, eval."""
from __future__ import annotations

import math


class Trainer:
    def __init__(self, tl, gpus, pids, rng, *, step_s, comm_s=0.0, tokens_per_step=0,
                 samples_per_step=0, workers=8, prep_s=0.05, prefetch=2, launch_frac=0.03,
                 ckpt_every=0, ckpt_s=0.0, eval_every=0, eval_steps=0, opt_s=0.0,
                 sm=0.86, tensor=0.55, dram=0.32, knobs=None, t_start=0.0, phases=None):
        self.tl, self.gpus, self.pids, self.rng = tl, gpus, pids, rng
        self.step_s, self.comm_s, self.opt_s = step_s, comm_s, opt_s
        self.tokens_per_step, self.samples_per_step = tokens_per_step, samples_per_step
        self.workers, self.prep_s, self.prefetch = workers, prep_s, prefetch * workers
        self.launch_frac = launch_frac
        self.ckpt_every, self.ckpt_s = ckpt_every, ckpt_s
        self.eval_every, self.eval_steps = eval_every, eval_steps
        self.sm, self.tensor, self.dram = sm, tensor, dram
        self.knobs = knobs or (lambda t: {})
        self.phases = phases  # t -> "train" | "rollout" | "idle" (RL alternation)
        self.t = t_start
        self.q = float(self.prefetch)
        self.tq = t_start
        self.steps = 0
        self.pending = []  # (t_done, tokens, samples)
        self.tokens = self.samples = self.done_steps = 0.0
        self.busy = 0.0
        self.worker_busy = 0.0
        self.launches = 0
        self.jit_hits = 0
        self.cpu_main = 0.0
        self.in_ckpt_until = -1.0

    def flush(self, t):
        keep = []
        for d in self.pending:
            if d[0] <= t:
                self.tokens += d[1]
                self.samples += d[2]
                self.done_steps += 1
            else:
                keep.append(d)
        self.pending = keep

    def advance(self, t0, t1, envs, host_stretch):
        self.launches = 0
        self.jit_hits = 0
        self.worker_busy = 0.0
        self.cpu_main = 0.0
        while self.t < t1:
            t = self.t
            kn = self.knobs(t)
            if self.phases and self.phases(t) != "train":
                self.t = min(t1, t + 0.25)
                self.q = float(self.prefetch)
                continue
            if kn.get("paused"):
                self.t = min(t1, t + 0.5)
                continue
            io = kn.get("io_mult", 1.0)
            workers = kn.get("workers", self.workers)
            prep = self.prep_s * kn.get("prep_mult", 1.0) * io * host_stretch
            rate = workers / prep
            self.q = min(self.prefetch, self.q + rate * (t - self.tq))
            self.tq = t
            wait = 0.0
            if self.q < 1:
                wait = (1 - self.q) / rate
                self.q = 1.0
            self.q -= 1
            evaluating = (self.eval_every and self.steps % self.eval_every
                          >= self.eval_every - self.eval_steps)
            base = self.step_s * (0.34 if evaluating else 1.0) * kn.get("work_mult", 1.0)
            comps = []
            fills = []
            for i, g in enumerate(self.gpus):
                e = envs[i]
                lf = self.launch_frac
                hs = e["host_stretch"] * kn.get("rank_host", {}).get(g, 1.0)
                c = base * ((1 - lf) / e["speed"] + lf * hs) / e["share"]
                nominal = base * ((1 - lf) / e["speed"] + lf) / e["share"]
                comps.append(c * (1 + self.rng.gauss(0, 0.01)))
                fills.append(nominal / c)
            jit = envs[0].get("jitter")
            if jit:
                p, mean = jit
                n = int(base * 800)
                extra = 0.0
                for _ in range(min(n, 400)):
                    if self.rng.random() < p:
                        extra += self.rng.expovariate(1 / mean)
                        self.jit_hits += 1
                comps = [c + extra for c in comps]
            slow = max(comps)
            comm = 0.0 if evaluating else self.comm_s * kn.get("comm_mult", 1.0)
            start = t + wait
            for i, g in enumerate(self.gpus):
                a = start
                b = start + comps[i]
                f = fills[i]  # a launch-starved rank's kernels are spread out
                self.tl.emit(g, self.pids[i], a, b, self.sm * f, self.tensor * f * (0.8 if evaluating else 1),
                             self.dram * f)
                if len(self.gpus) > 1 and not evaluating:
                    self.tl.emit(g, self.pids[i], b, start + slow + comm, 0.11, 0.0, 0.06, occ=0.02,
                                 nvl=2e9 * comm / max(1e-3, 1) if comm else 0.0)
                if self.opt_s and not evaluating:
                    self.tl.emit(g, self.pids[i], start + slow + comm, start + slow + comm + self.opt_s,
                                 0.7, 0.05, 0.8)
                self.busy += b - a
            end = start + slow + comm + (0 if evaluating else self.opt_s)
            self.launches += int((end - start) * 900)
            self.cpu_main += (end - start) * 0.9
            self.worker_busy += prep * workers if False else prep
            self.steps += 1
            if not evaluating:
                self.pending.append((end, self.tokens_per_step, self.samples_per_step))
            if self.ckpt_every and self.steps % self.ckpt_every == 0:
                dur = self.ckpt_s * kn.get("ckpt_mult", 1.0)
                for i, g in enumerate(self.gpus):  # D2H copies of the state dict
                    self.tl.emit(g, self.pids[i], end, end + dur * 0.25, 0.05, 0.0, 0.3)
                    self.tl.io(g, end, end + dur, tx=2e9 * dur * 0.25)
                self.in_ckpt_until = end + dur
                end += dur
            self.t = end
        self.flush(t1)
