"""Step-based training: data wait, per-rank compute scaled by the rank's clock and GPU and
CPU share, collectives in which early ranks wait, optimizer, checkpoints, evaluation."""
from __future__ import annotations
import math
from collections import deque

from corpus_ai.serve import LINKS


class TrainSim:
    def __init__(self, rng, board, ranks, *, step_tflop, grad_gb, link="nvlink", overlap=0.6,
                 tokens_per_step=8192, host_frac=0.08, data_s=None, prefetch=2, opt_s=0.02,
                 ckpt_every=0, ckpt_s=20.0, eval_every=0, eval_s=15.0, comm_factor=1.0,
                 rank_cpu=None, rank_slow=None, link_slow=None, rank_delay=None, tiny=None, dram_heavy=0.35):
        self.rng, self.b, self.R = rng, board, ranks
        self.step_flop = step_tflop * 1e12
        self.grad_bytes = grad_gb * 1e9
        self.link = LINKS[link]
        self.overlap, self.tokens, self.host_frac = overlap, tokens_per_step, host_frac
        self.data_s = data_s or (lambda t: 0.0)     # seconds of loader time per batch
        self.prefetch, self.opt_s = prefetch, opt_s
        self.ckpt_every, self.ckpt_s, self.eval_every, self.eval_s = ckpt_every, ckpt_s, eval_every, eval_s
        self.comm_factor = comm_factor
        self.rank_cpu = rank_cpu or (lambda t, r: 1.0)
        self.rank_slow = rank_slow or (lambda t, r: 1.0)
        self.link_slow = link_slow or (lambda t, r: 1.0)
        self.rank_delay = rank_delay or (lambda t, r: 0.0)
        self.prod_t = -1e18
        self.consumed = deque()
        self.tiny = tiny or (lambda t: 0.0)          # fraction of step spent in tiny kernels
        self.dram_heavy = dram_heavy
        self.segs = [deque() for _ in range(ranks)]
        self.t_next = None
        self.step = 0
        self.ready = deque()
        self.tokens_total = 0.0
        self.steps_total = 0
        self.loader_busy = 0.0

    def _comm_time(self, t):
        lat, bw = self.link
        slow = max(self.link_slow(t, r) for r in range(self.R))
        if self.R == 1:
            return 0.0
        return (2 * (self.R - 1) / self.R * self.grad_bytes / (bw * 1e9 / slow) + 40 * lat) * self.comm_factor

    def _plan(self, t, clocks, avails, cpus):
        """Lay out one step's segments for every rank, starting at t."""
        rng, b = self.rng, self.b
        self.step += 1
        # data: the loader needs data_s per batch and keeps `prefetch` batches ahead
        ds = self.data_s(t)
        gate = self.consumed[-self.prefetch] if len(self.consumed) >= self.prefetch else -1e18
        ready = max(self.prod_t, gate) + ds
        if self.prod_t < -1e17:
            ready = t
        self.prod_t = ready
        self.consumed.append(t)
        while len(self.consumed) > self.prefetch + 2:
            self.consumed.popleft()
        self.loader_busy = ds
        wait = max(0.0, ready - t)
        comm = self._comm_time(t)
        exposed = comm * (1 - self.overlap)
        tiny = self.tiny(t)
        ends = []
        comp = []
        for r in range(self.R):
            gpu_t = self.step_flop / (b.tflops * 1e12 * 0.45 * clocks[r] * avails[r]) * self.rank_slow(t, r)
            host_t = gpu_t * self.host_frac / max(0.05, cpus[r] * self.rank_cpu(t, r))
            c = max(gpu_t, host_t) * (1 + rng.gauss(0, 0.015))
            if tiny:
                c += tiny * gpu_t * 6
            comp.append((gpu_t, c))
            ends.append(t + wait + self.rank_delay(t, r) + c)
        t_coll = max(ends)
        for r in range(self.R):
            segs = self.segs[r]
            s0 = t
            if wait > 0:
                segs.append((s0, s0 + wait, "data"))
                s0 += wait
            gpu_t, c = comp[r]
            rd = self.rank_delay(t, r)
            if rd > 0:
                segs.append((s0, s0 + rd, "h2d"))
                s0 += rd
            if tiny:
                segs.append((s0, s0 + tiny * gpu_t * 6, "tiny"))
                s0 += tiny * gpu_t * 6
                c -= tiny * gpu_t * 6
            host_bound = max(0.0, c - gpu_t)
            segs.append((s0, s0 + c, "compute" if host_bound < 0.05 * c else ("compute", gpu_t / c)))
            s0 += c
            if self.R > 1:
                segs.append((s0, t_coll + exposed, "comm"))
            segs.append((t_coll + exposed, t_coll + exposed + self.opt_s, "opt"))
        t_end = t_coll + exposed + self.opt_s
        self.tokens_total += self.tokens
        self.steps_total += 1
        extra = 0.0
        if self.eval_every and self.step % self.eval_every == 0:
            for r in range(self.R):
                self.segs[r].append((t_end, t_end + self.eval_s, "eval"))
            extra = self.eval_s
        if self.ckpt_every and self.step % self.ckpt_every == 0:
            for r in range(self.R):
                self.segs[r].append((t_end + extra, t_end + extra + self.ckpt_s, "ckpt"))
            extra += self.ckpt_s
        return t_end + extra, comm

    def advance(self, t0, dt, clocks, avails, cpus, acts, pids):
        end = t0 + dt
        if self.t_next is None:
            self.t_next = t0
        comm = self._comm_time(t0)
        while self.t_next < end:
            self.t_next, comm = self._plan(self.t_next, clocks, avails, cpus)
        b = self.b
        bw = b.bw_gbs * 1e9
        lat, lbw = self.link
        host_busy = [0.0] * self.R
        for r in range(self.R):
            segs = self.segs[r]
            a = acts[r]
            while segs:
                s, e, kind = segs[0]
                lo, hi = max(s, t0), min(e, end)
                if hi > lo:
                    x = hi - lo
                    if isinstance(kind, tuple):
                        frac = kind[1]
                        a.add(x * frac + x * (1 - frac) * 0.3, x * frac * 0.9 + x * (1 - frac) * 0.05,
                              x * frac * 0.6 * clocks[r], x * frac * self.dram_heavy * bw, pids[r],
                              occ=x * frac * 0.5)
                        host_busy[r] += x
                    elif kind == "compute":
                        a.add(x, x * 0.92, x * 0.62 * min(1, clocks[r] + 0.1), x * self.dram_heavy * bw, pids[r], occ=x * 0.5,
                              pcie=x * 0.2e9 if self.R > 1 and lbw < 30 else 0, nvlink=x * 40e9 if lbw >= 100 and self.R > 1 else 0)
                        host_busy[r] += x * 0.85
                    elif kind == "comm":
                        a.add(x, x * 0.11, 0.0, x * 0.04 * bw, pids[r], occ=x * 0.03,
                              pcie=x * lbw * 1e9 * 0.4 if lbw < 30 else 0, nvlink=x * lbw * 1e9 * 0.6 if lbw >= 100 else 0)
                        host_busy[r] += x * 0.5
                    elif kind == "opt":
                        a.add(x, x * 0.75, 0.0, x * 0.8 * bw, pids[r])
                        host_busy[r] += x * 0.5
                    elif kind == "tiny":
                        a.add(x * 0.97, x * 0.05, x * 0.005, x * 0.01 * bw, pids[r], occ=x * 0.01)
                        host_busy[r] += x
                    elif kind == "eval":
                        a.add(x * 0.8, x * 0.6, x * 0.3, x * 0.25 * bw, pids[r])
                        host_busy[r] += x * 0.6
                    elif kind == "ckpt":
                        a.add(x * 0.04, x * 0.01, 0.0, x * 0.02 * bw, pids[r], pcie=x * 6e9)
                        host_busy[r] += x * 0.9
                    elif kind == "h2d":
                        a.add(x * 0.15, x * 0.02, 0.0, x * 0.01 * bw, pids[r], pcie=x * 0.9e9)
                        host_busy[r] += x * 0.3
                    elif kind == "data":
                        host_busy[r] += x * 0.05
                if e <= end:
                    segs.popleft()
                else:
                    break
        return host_busy
