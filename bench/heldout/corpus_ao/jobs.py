"""Step-based training jobs (data wait, per-rank compute scaled by the rank's clock and its
host, collectives in which early ranks wait, optimizer, checkpoints, evaluation), and
kernel-stream services with no engine page (rerankers, CTR ranking, embedding services,
image generation, notebooks, a Python loop launching one kernel per item)."""
from __future__ import annotations

import collections
from dataclasses import dataclass, field


@dataclass
class JobCfg:
    ranks: tuple[int, ...]
    # phases of one (micro)step: ("c", s, sm, tensor, dram, launch_frac) compute at full clock;
    # ("coll", bytes, label) a collective every rank must join; ("opt", s, sm, tensor, dram,
    # launch_frac) the optimizer (after the last micro-step)
    phases: list
    link_bw: float = 150e9  # bytes/s per rank on the collective's slowest hop
    coll_latency: float = 0.0004
    accum: int = 1
    samples_per_step: int = 4096
    tokens_per_step: int = 0
    batch_s_per_worker: float = 0.05  # CPU seconds a loader worker needs per micro-batch
    workers: int = 8  # per rank
    prefetch: int = 2
    ckpt_every_s: float = 0.0
    ckpt_s: float = 30.0
    ckpt_first_s: float = 0.0
    eval_every_s: float = 0.0
    eval_s: float = 20.0
    eval_first_s: float = 0.0
    rl_rollout_s: float = 0.0  # RL: rollout phase length (generation), then update steps
    rl_update_steps: int = 0
    main_cpu: float = 1.0  # cores a rank's main process uses while stepping
    noise: float = 0.015


class Job:
    def __init__(self, cfg: JobCfg, rng, env, start=0.0, end=None):
        self.cfg = cfg
        self.rng = rng
        self.env = env
        self.t = start
        self.start = start
        self.end = end
        n = len(cfg.ranks)
        self.ready_q = [collections.deque() for _ in range(n)]  # when queued batches are ready
        self.loader_t = [start] * n
        self.steps = 0
        self.micro = 0
        self.samples = 0
        self.tokens = 0
        self.next_ckpt = start + (cfg.ckpt_first_s or cfg.ckpt_every_s) if cfg.ckpt_every_s else 1e18
        self.next_eval = start + (cfg.eval_first_s or cfg.eval_every_s) if cfg.eval_every_s else 1e18
        self.cpu_demand = 0.5
        self.worker_cpu = 0.0
        self.launches = 0
        self.rl_phase_end = start + cfg.rl_rollout_s if cfg.rl_rollout_s else 0
        self.rl_updates_left = 0
        self.wait_frac = 0.0
        self.phase = "train"
        self.done = False

    def _loader_fill(self, r, until):
        """Workers produce micro-batches: each takes batch_s_per_worker CPU seconds (scaled by
        the host's CPU share and the storage's speed), workers in parallel."""
        cfg = self.cfg
        env = self.env
        q = self.ready_q[r]
        io = env.knob("io_slow", 1.0)  # >1: reads slower (cold cache, network)
        per = cfg.batch_s_per_worker * io * env.knob("batch_cost", 1.0) / max(0.05, env.loader_share(r))
        workers = max(1, int(env.knob("workers", cfg.workers)))
        period = per / workers
        depth = cfg.prefetch * workers
        if len(q) >= depth:
            return period
        while self.loader_t[r] <= until and len(q) < depth:
            self.loader_t[r] += period * (1 + self.rng.gauss(0, 0.03))
            q.append(self.loader_t[r])
        return period

    def advance(self, t1):
        env = self.env
        cfg = self.cfg
        rng = self.rng
        n = len(cfg.ranks)
        wait_tot = 0.0
        t_start = self.t
        if self.t < self.start:
            self.t = min(t1, self.start)
        while self.t < t1 and not self.done:
            t = self.t
            if self.end is not None and t >= self.end:
                self.done = True
                break
            # checkpoint / evaluation
            if t >= self.next_ckpt:
                self.phase = "checkpoint"
                dur = cfg.ckpt_s * env.knob("ckpt_slow", 1.0)
                for g in cfg.ranks:  # device-to-host copy, then the write; GPU mostly idle
                    env.act.add(g, t, t + dur * 0.15, 0.05, 0.0, 0.25, pcie_bytes=dur * 0.15 * 20e9)
                self.next_ckpt = t + dur + cfg.ckpt_every_s
                self.t = t + dur
                continue
            if t >= self.next_eval:
                self.phase = "eval"
                dur = cfg.eval_s
                for g in cfg.ranks:  # forward only, smaller work per launch, loader bound
                    k = t
                    while k < t + dur:
                        seg = 0.12 * (1 + 0.2 * rng.random())
                        env.act.add(g, k, k + seg * 0.7, 0.75, 0.4, 0.35)
                        k += seg
                self.next_eval = t + dur + cfg.eval_every_s
                self.t = t + dur
                continue
            if cfg.rl_rollout_s:
                if self.rl_updates_left == 0 and t < self.rl_phase_end:
                    self.phase = "rollout"
                    seg = min(0.5, self.rl_phase_end - t)
                    for g in cfg.ranks:
                        env.act.add(g, t, t + seg * 0.93, 0.7, 0.12, 0.78)
                    self.launches += int(seg * 2000)
                    self.t = t + seg
                    if self.t >= self.rl_phase_end:
                        self.rl_updates_left = cfg.rl_update_steps
                    continue
            self.phase = "train"
            # one optimizer step = accum micro-steps
            for mi in range(cfg.accum):
                ready = []
                for r in range(n):
                    self._loader_fill(r, t + 5.0)
                    q = self.ready_q[r]
                    depth = cfg.prefetch * max(1, int(env.knob("workers", cfg.workers)))
                    if len(q) >= depth:  # a full queue had parked the workers until now
                        self.loader_t[r] = max(self.loader_t[r], t)
                    b = q.popleft() if q else self.loader_t[r]
                    ready.append(max(t, b))
                # per-rank compute
                cur = ready[:]
                for ph in cfg.phases:
                    if ph[0] == "c" or (ph[0] == "opt" and mi == cfg.accum - 1):
                        _, dur, sm, ten, dr, lf = ph[:6]
                        for r, g in enumerate(cfg.ranks):
                            sp = env.gpu_speed(g)
                            hs = env.rank_host_speed(r)
                            lfr = env.knob("launch_frac", lf) if ph[0] == "opt" else lf
                            d = dur * ((1 - lfr) / sp + lfr / hs) * (1 + rng.gauss(0, cfg.noise))
                            d *= env.knob("compute_factor", 1.0)
                            d += env.launch_delay(int(dur * 2500 * max(lfr, 0.05)))
                            if len(ph) > 6:
                                d *= env.knob(ph[6], 1.0)
                            if ph[0] == "opt":
                                d *= env.knob("opt_factor", 1.0)
                            smc = sm if lfr < 0.5 else sm * 0.1
                            env.act.add(g, cur[r], cur[r] + d, smc, ten, dr)
                            cur[r] += d
                        self.launches += int(dur * 3000)
                    elif ph[0] == "coll" and (mi == cfg.accum - 1 or ph[2] == "a2a"):
                        _, nbytes, label = ph
                        last = max(cur)
                        bw = cfg.link_bw
                        slow_links = env.knob("link_slow", {})
                        worst = 1.0
                        for r in range(n):
                            worst = max(worst, slow_links.get(r, 1.0))
                        ct = cfg.coll_latency + nbytes / (bw / worst) * (1 + rng.gauss(0, 0.02))
                        for r, g in enumerate(cfg.ranks):
                            w = last - cur[r]
                            wait_tot += w
                            if w > 0:  # NCCL kernel already launched, spinning on its peers
                                env.act.add(g, cur[r], last, 0.07, 0.0, 0.02)
                            f = slow_links.get(r, 1.0)
                            env.act.add(g, last, last + ct, 0.12, 0.0, 0.18,
                                        nvlink_bytes=nbytes * 2 / f, pcie_bytes=nbytes * 0.05 * (f - 1))
                        cur = [last + ct] * n
                t = max(cur)
                self.micro += 1
            self.steps += 1
            self.samples += cfg.samples_per_step
            self.tokens += cfg.tokens_per_step
            self.t = t
            if cfg.rl_rollout_s and self.rl_updates_left:
                self.rl_updates_left -= 1
                if self.rl_updates_left == 0:
                    self.rl_phase_end = self.t + cfg.rl_rollout_s
        dt = max(1e-6, t1 - t_start)
        self.wait_frac = wait_tot / (dt * n)
        workers = max(1, int(self.env.knob("workers", cfg.workers)))
        io = self.env.knob("io_slow", 1.0)
        # loader workers: busy while producing (CPU ~ their share of work; io waits cost none)
        rate_needed = cfg.accum * self.steps_rate(dt)
        busy = min(workers, rate_needed * cfg.batch_s_per_worker) if self.phase == "train" else 0.3
        if self.phase == "train" and io <= 1.0 and self.starved() and self.t > self.start:
            busy = workers * 0.97
        elif io > 1.0 and self.phase == "train":
            busy = min(workers, busy * 1.2 + 0.2 * workers / io)
        self.worker_cpu = busy * n
        if self.done or t1 <= self.start:
            self.worker_cpu = 0.0
        self.cpu_demand = (cfg.main_cpu if not self.done else 0.02) * n + self.worker_cpu
        self._last_steps = self.steps

    def steps_rate(self, dt):
        prev = getattr(self, "_last_steps", self.steps)
        return (self.steps - prev) / dt

    def starved(self):
        return any(len(q) == 0 for q in self.ready_q)


class Service:
    """A kernel-stream service with no engine page: requests (or items) arrive, are batched up
    to ``max_batch``, each batch costs ``kernels`` kernel launches and GPU time."""

    def __init__(self, rng, env, gpu, rate, kernels=120, item_s=0.0004, fixed_s=0.002, sm=0.85,
                 tensor=0.4, dram=0.4, max_batch=64, graphs=True, host_item_s=0.0002,
                 host_fixed_s=0.0006, launch_s=4.5e-6, other=False, start=0.0, end=1e18,
                 duty=None, fill_batch=1):
        self.rng, self.env, self.g = rng, env, gpu
        self.rate = rate
        self.kernels, self.item_s, self.fixed_s = kernels, item_s, fixed_s
        self.sm, self.tensor, self.dram = sm, tensor, dram
        self.max_batch, self.graphs = max_batch, graphs
        self.host_item_s, self.host_fixed_s, self.launch_s = host_item_s, host_fixed_s, launch_s
        self.other = other
        self.t = start
        self.start, self.end = start, end
        self.queue = 0.0
        self.done_items = 0
        self.cpu_used = 0.0
        self.launches = 0
        self.cpu_demand = 0.3
        self.duty = duty
        self.fill_batch = fill_batch  # batch at which kernels fill the SMs  # for a tenant: function t -> fraction of time it keeps the GPU busy

    def advance(self, t1):
        env = self.env
        rng = self.rng
        t0 = self.t
        cpu0 = self.cpu_used
        if self.duty is not None:  # a second tenant: fills its share of GPU time
            while self.t < t1:
                seg = 0.25
                d = self.duty(self.t) if self.start <= self.t < self.end else 0.0
                if d > 0:
                    env.act.add(self.g, self.t, self.t + seg * d, self.sm, self.tensor, self.dram,
                                other=True)
                    self.cpu_used += seg * 0.9
                self.t += seg
            self.cpu_demand = (self.cpu_used - cpu0) / max(1e-6, t1 - t0) + 0.05
            return
        while self.t < t1:
            t = self.t
            if not (self.start <= t < self.end):
                self.t = min(t1, max(t + 0.05, self.start if t < self.start else t1))
                continue
            lam = self.rate(t)
            self.queue += rng.expovariate(1.0) * 0 + lam * 0.0  # arrivals counted below
            # how many items are waiting: Poisson over the time since the last batch
            b = min(int(env.knob("svc_max_batch", self.max_batch)), max(0, int(self.queue)))
            if b == 0:
                # wait for the next arrival
                gap = rng.expovariate(max(lam, 1e-3))
                self.t = t + min(gap, 0.5)
                self.queue += 1 if gap < 0.5 else 0
                continue
            hs = env.host_speed()
            sp = env.gpu_speed(self.g)
            graphs = env.knob("svc_graphs", self.graphs)
            kern = int(self.kernels * env.knob("svc_kernels", 1.0) * (b if env.knob("svc_per_item", False) else 1))
            if graphs:
                gpu_t = (self.fixed_s + self.item_s * b * env.knob("svc_item_factor", 1.0)) / sp
            else:  # eager: every op its own small kernel
                gpu_t = (kern * 3e-6 + self.item_s * b * env.knob("svc_item_factor", 1.0)) / sp
            launch = kern * ((self.launch_s if graphs else 11e-6) / hs) + env.launch_delay(kern)
            host_t = (self.host_fixed_s + self.host_item_s * b) / hs
            if graphs:
                busy = gpu_t
                span = max(gpu_t, launch * 0.2)
                smc = self.sm
            else:
                span = max(gpu_t, launch)
                busy = span * min(1.0, 0.8 + gpu_t / max(span, 1e-9))
                smc = self.sm * min(1.0, gpu_t / max(span, 1e-9)) * min(1.0, b / self.fill_batch)
            step = host_t + span
            step += env.quota_stall(step)
            drm = env.knob("svc_dram", self.dram)
            env.act.add(self.g, t + host_t, t + host_t + busy, smc, self.tensor, drm,
                        pcie_bytes=b * 40e3, other=self.other)
            self.cpu_used += host_t + launch
            self.launches += kern
            self.queue -= b
            self.done_items += b
            self.t = t + step
            self.queue += rng.gauss(lam * step, (lam * step) ** 0.5 if lam * step > 0 else 0)
            self.queue = max(0.0, self.queue)
        self.cpu_demand = 0.15 + (self.cpu_used - cpu0) / max(1e-6, t1 - t0)
