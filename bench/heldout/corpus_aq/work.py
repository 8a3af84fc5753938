"""Training jobs (step-based, per-rank loaders and collectives) and plain kernel-stream jobs."""
from __future__ import annotations

from .node import SIG


def _mix(d_c, d_m, span, sig_c="gemm", sig_m="mem"):
    """Activity of a span holding d_c s of compute kernels and d_m s of memory-bound ones
    (the rest of the span: launch gaps, a busy GPU in ms terms but idle SMs)."""
    if span <= 0:
        return (0, 0, 0, 0, 0)
    a, b = SIG[sig_c], SIG[sig_m]
    fc, fm = d_c / span, d_m / span
    ft = max(0.0, 1 - fc - fm)
    t = SIG["tiny"]
    return tuple(a[i] * fc + b[i] * fm + t[i] * ft for i in range(5))


class Trainer:
    """Data-parallel / FSDP ranks.  Per step: a batch from the rank's loader queue, compute
    (wc s at full clock + wm s bandwidth-bound), a collective that starts when the last rank
    arrives (early ranks spin), optimizer, accumulation, checkpoints and evaluation."""

    def __init__(self, rng, ngpu, *, wc, wm, ar_s, opt_wm, workers, batch_cpu_s, io_s,
                 prefetch=2, accum=1, ckpt_every=0, ckpt_s=0, eval_every=0, eval_s=0,
                 samples_per_step=32, kernels=2500, sig_c="gemm", rank_slow=None, rank_cpu=None,
                 wm_extra=None, epoch_every=0, epoch_s=0, host_gap=0.04):
        self.rng = rng
        self.n = ngpu
        self.wc, self.wm, self.ar_s, self.opt_wm = wc, wm, ar_s, opt_wm
        self.workers = workers
        self.batch_cpu_s = batch_cpu_s
        self.io_s = io_s
        self.prefetch = prefetch
        self.accum = accum
        self.ckpt_every, self.ckpt_s = ckpt_every, ckpt_s
        self.eval_every, self.eval_s = eval_every, eval_s
        self.epoch_every, self.epoch_s = epoch_every, epoch_s
        self.sps = samples_per_step
        self.kernels = kernels
        self.sig_c = sig_c
        self.rank_slow = rank_slow or (lambda t, r: 1.0)
        self.rank_cpu = rank_cpu or (lambda t, r: 1.0)
        self.wm_extra = wm_extra or (lambda t: 0.0)
        self.host_gap = host_gap
        self.q = [float(prefetch * workers)] * ngpu
        self.phase = ["data"] * ngpu
        self.rem = [0.0] * ngpu
        self.rem_m = [0.0] * ngpu
        self.micro = [0] * ngpu
        self.steps = 0
        self.samples = 0.0
        self.cpu_demand = 1.0
        self.loader_busy = [0.0] * ngpu
        self.launches = 0
        self.step_times = []

    def step(self, t, dt, clocks, avails, share, lshare, acts):
        n = self.n
        rate = []
        for r in range(n):
            ls = max(0.05, share * self.rank_cpu(t, r))
            per = self.batch_cpu_s / ls + self.io_s(t)
            prod = self.workers / per
            cap = self.prefetch * self.workers
            room = cap - self.q[r]
            got = min(room, prod * dt)
            self.loader_busy[r] = (got / (prod * dt)) if prod > 0 else 0.0
            self.q[r] += got
            rate.append(prod)
        cur = [0.0] * n
        arrive = [None] * n
        self.launches = 0
        progress = True
        while progress:
            progress = False
            for r in range(n):
                while cur[r] < dt - 1e-9:
                    ph = self.phase[r]
                    room = dt - cur[r]
                    c = clocks[r] * avails[r]
                    ls = max(0.05, lshare * self.rank_cpu(t, r))
                    if ph == "data":
                        if self.q[r] >= 1:
                            self.q[r] -= 1
                            self.phase[r] = "fw"
                            self.rem[r] = self.wc * self.rank_slow(t, r)
                            self.rem_m[r] = self.wm + self.wm_extra(t)
                            self.launches += self.kernels
                            continue
                        acts[r].add(room, 0.02, 0.0, 0.0, 0.0, 0.0)
                        cur[r] = dt
                        break
                    if ph in ("fw", "eval"):
                        g = self.rem[r] / c + self.rem_m[r] / avails[r]
                        host = self.kernels * 6e-6 / ls * (self.rem[r] + self.rem_m[r]) / max(
                            1e-9, self.wc + self.wm)
                        span = max(g, host)
                        if span <= room:
                            acts[r].add(span, *_mix(self.rem[r] / c, self.rem_m[r] / avails[r], span,
                                                    self.sig_c))
                            cur[r] += span
                            self.rem[r] = self.rem_m[r] = 0
                            if ph == "eval":
                                self.phase[r] = "data"
                                continue
                            self.micro[r] += 1
                            if self.micro[r] < self.accum:
                                self.phase[r] = "data"
                            elif n > 1:
                                self.phase[r] = "wait"
                            else:
                                self.phase[r] = "opt"
                                self.rem[r] = self.opt_wm
                        else:
                            f = room / span
                            acts[r].add(room, *_mix(self.rem[r] / c * f, self.rem_m[r] / avails[r] * f,
                                                    room, self.sig_c))
                            self.rem[r] *= 1 - f
                            self.rem_m[r] *= 1 - f
                            cur[r] = dt
                        continue
                    if ph == "wait":
                        arrive[r] = cur[r]
                        break
                    if ph == "ar":
                        d = min(room, self.rem[r])
                        acts[r].add(d, *SIG["nccl"])
                        self.rem[r] -= d
                        cur[r] += d
                        if self.rem[r] <= 1e-12:
                            self.phase[r] = "opt"
                            self.rem[r] = self.opt_wm
                        continue
                    if ph == "opt":
                        d = min(room, self.rem[r] / avails[r])
                        acts[r].add(d, *SIG["mem"])
                        self.rem[r] -= d * avails[r]
                        cur[r] += d
                        if self.rem[r] <= 1e-12:
                            self.micro[r] = 0
                            if r == 0:
                                self._stepped(t + cur[r])
                            self._after(r)
                        continue
                    if ph == "gap":
                        d = min(room, self.rem[r] / max(0.05, lshare * self.rank_cpu(t, r)))
                        acts[r].add(d, 0.05, 0.0, 0, 0, 0)
                        self.rem[r] -= d * max(0.05, lshare * self.rank_cpu(t, r))
                        cur[r] += d
                        if self.rem[r] <= 1e-12:
                            self.phase[r] = "data"
                        continue
                    if ph in ("ckpt", "epoch"):
                        d = min(room, self.rem[r])
                        if ph == "ckpt":
                            acts[r].add(d, *SIG["copy"])
                        else:
                            acts[r].add(d, 0.0, 0, 0, 0, 0)
                        self.rem[r] -= d
                        cur[r] += d
                        if self.rem[r] <= 1e-12:
                            self.phase[r] = "data"
                        continue
            if n > 1 and all(self.phase[r] == "wait" for r in range(n)):
                rel = max(arrive[r] if arrive[r] is not None else cur[r] for r in range(n))
                for r in range(n):
                    if rel > cur[r]:
                        acts[r].add(rel - cur[r], *SIG["nccl_wait"])
                    cur[r] = rel
                    self.phase[r] = "ar"
                    self.rem[r] = self.ar_s
                    arrive[r] = None
                progress = True
        for r in range(n):
            if self.phase[r] == "wait" and cur[r] < dt:
                acts[r].add(dt - cur[r], *SIG["nccl_wait"])
        busy_workers = sum(self.loader_busy) * self.workers
        self.cpu_demand = n * 1.0 + busy_workers + 0.3

    def _stepped(self, when):
        self.steps += 1
        self.samples += self.sps
        self.step_times.append(when)

    def _after(self, r):
        s = self.steps
        if self.ckpt_every and s % self.ckpt_every == 0:
            self.phase[r] = "ckpt"
            self.rem[r] = self.ckpt_s
        elif self.epoch_every and s % self.epoch_every == 0:
            self.phase[r] = "epoch"
            self.rem[r] = self.epoch_s
        elif self.eval_every and s % self.eval_every == 0:
            self.phase[r] = "eval"
            self.rem[r] = self.eval_s * 0.8
            self.rem_m[r] = self.eval_s * 0.2
        else:
            self.phase[r] = "gap"
            self.rem[r] = self.host_gap


class Stream:
    """A service or batch job on one GPU that handles items one at a time: host work
    (decode, preprocessing) then GPU work (compute + bandwidth-bound seconds, with a kernel
    count that sets the launch cost).  ``item(t)`` says what the next item is; ``rate(t)``
    the arrivals per second (None: a batch job that always has work)."""

    def __init__(self, rng, *, item, rate=None, graphs=False, host_overlap=0.0, launch_us=7.0):
        self.rng = rng
        self.item = item
        self.rate = rate
        self.graphs = graphs
        self.launch_us = launch_us
        self.host_overlap = host_overlap
        self.queue = 0.0 if rate else 1e9
        self.phase = "idle"
        self.cur = None
        self.rem = [0.0, 0.0, 0.0]
        self.done = 0
        self.cpu_demand = 1.0
        self.launches = 0
        self.busy_host = 0.0

    def step(self, t, dt, clocks, avails, share, lshare, acts):
        if self.rate:
            self.queue += self.rate(t) * dt
        u = 0.0
        c = clocks[0] * avails[0]
        ls = max(0.05, lshare)
        hs = max(0.05, share)
        self.launches = 0
        host_time = 0.0
        while u < dt - 1e-9:
            room = dt - u
            if self.phase == "idle":
                if self.queue >= 1:
                    self.queue -= 1
                    self.cur = self.item(t)
                    host_s, wc, wm, kernels, sig = self.cur
                    self.rem = [host_s, wc, wm]
                    self.kern = kernels
                    self.phase = "host"
                    continue
                acts[0].add(room, 0.0, 0, 0, 0, 0)
                break
            if self.phase == "host":
                d = min(room, self.rem[0] / hs)
                acts[0].add(d, 0.0, 0, 0, 0, 0)
                self.rem[0] -= d * hs
                u += d
                host_time += d
                if self.rem[0] <= 1e-12:
                    self.phase = "gpu"
                    self.tot = (self.rem[1], self.rem[2])
                continue
            if self.phase == "gpu":
                wc, wm = self.rem[1], self.rem[2]
                frac = (wc + wm) / max(1e-12, sum(self.tot))
                g = wc / c + wm / avails[0]
                per_k = (self.launch_us * 1e-6 * (0.08 if self.graphs else 1.0)) / ls
                host = self.kern * frac * per_k
                span = max(g, host)
                sig = self.cur[4]
                if span <= room:
                    acts[0].add(span, *_mix(wc / c, wm / avails[0], span, sig))
                    self.launches += int(self.kern * frac)
                    u += span
                    host_time += host
                    self.phase = "idle"
                    self.done += 1
                else:
                    f = room / span
                    acts[0].add(room, *_mix(wc / c * f, wm / avails[0] * f, room, sig))
                    self.launches += int(self.kern * frac * f)
                    self.rem[1] *= 1 - f
                    self.rem[2] *= 1 - f
                    u = dt
                    host_time += host * f
        self.busy_host = host_time / dt
        self.cpu_demand = 0.3 + min(1.0, self.busy_host + (0.6 if self.phase != "idle" else 0.05))
