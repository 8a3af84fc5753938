"""Step-based training loops (data wait, per-rank compute scaled by the rank's clock,
collectives in which early ranks wait, gradient accumulation, evaluation, checkpoints)
and plain GPU jobs without an engine page (Monte Carlo, scoring, notebooks)."""

from __future__ import annotations

from dataclasses import dataclass, field

from corpus_an.hw import Activity
from corpus_an.sim import LaunchStat, Proc
from corpus_an.timeline import Timeline


@dataclass
class TrainCfg:
    ranks: int = 1
    compute_s: float = 0.5       # forward+backward per micro-step at max clock
    comp_frac: float = 0.75      # share of it that is compute-bound (scales with clock)
    sm: float = 0.85
    tensor: float = 0.45
    dram: float = 0.30
    opt_s: float = 0.04          # optimizer step (bandwidth-bound)
    grad_bytes: float = 2e9      # all-reduced per optimizer step
    link_gbs: float = 150.0      # effective bus bandwidth per rank, GB/s
    overlap: float = 0.7         # share of the all-reduce hidden under backward
    accum: int = 1
    batch_tokens: int = 32768    # per rank per micro-step
    work_unit: str = "tokens"    # tokens / samples
    samples: int = 64
    workers: int = 8             # DataLoader workers per rank
    batch_cpu_s: float = 0.4     # CPU seconds to produce one batch (decode, join, tokenise)
    batch_io_mb: float = 20.0    # bytes read from storage per batch
    io_mbs: float = 2000.0       # storage bandwidth available per rank, MB/s
    prefetch: int = 4
    eval_every: int = 0
    eval_s: float = 20.0
    ckpt_every: int = 0
    ckpt_s: float = 25.0
    exports: bool = True
    url: str = "http://127.0.0.1:9102/metrics"
    pid: int = 21000
    mem_gib: float = 60.0
    user: str = "svc-ml"
    container: str = ""
    pod: str = ""
    slurm: str = ""
    cmd: str = "python3 train.py"
    launches_per_step: int = 2500
    compile_warmup_s: float = 0.0


class Training:
    def __init__(self, cfg: TrainCfg, rng, spec, n_gpus=None):
        self.c = cfg
        self.rng = rng
        self.spec = spec
        self.n = cfg.ranks
        self.tl = Timeline(n_gpus or cfg.ranks)
        self.slow = [1.0] * self.n        # extra compute multiplier per rank (host-bound ranks)
        self.link = [1.0] * self.n        # link bandwidth factor per rank
        self.io_factor = 1.0              # storage bandwidth multiplier
        self.cpu_cost_mult = 1.0          # batch CPU cost multiplier (a slow feature join)
        self.io_latency_s = 0.0           # per batch fixed wait (a slow warehouse bridge)
        self.hang = [None] * self.n       # (start, end): rank stuck (no arrival at the collective)
        self.neighbor = {}                # rank -> (pid, want, sm, tensor, dram)
        self.cursor = 0.0
        self.step = 0
        self.micro = 0
        self.ready = [0.0] * self.n       # when each rank's next batch is ready
        self.queue = [cfg.prefetch] * self.n
        self.tokens = 0
        self.samples = 0
        self.steps_done = 0
        self.cpu_s = 0.0
        self.main_s = 0.0
        self.procs = []
        self.batch_cpu_used = 0.0
        self.pause_until = -1.0
        self.phase_override = None        # (t0, t1, kind) a phase forced by the scenario
        self.launch_tail = (0.0, 0.0)
        self.extra_host = 0.0
        self.share = 1.0
        self.warm_until = cfg.compile_warmup_s

    def init(self, w):
        c = self.c
        start = w.s.start_wall - self.rng.uniform(600, 7200)
        for r in range(self.n):
            self.procs.append(Proc(c.pid + r * 11, r, "python3" if r == 0 else "python3", c.cmd, c.user,
                                   c.container, c.pod, f"/kubepods.slice/{c.pod.replace('/', '_')}" if c.pod else
                                   (f"/slurm/uid_5012/job_{c.slurm}" if c.slurm else ""), c.slurm,
                                   start_time_s=start, mem=int(c.mem_gib * 2**30)))

    def _batch_time(self, share):
        c = self.c
        cpu = c.batch_cpu_s * self.cpu_cost_mult / max(0.05, c.workers * share)
        io = c.batch_io_mb / max(1.0, c.io_mbs * self.io_factor)
        return max(cpu, io) + self.io_latency_s

    def _refill(self, upto):
        """Loader workers fill each rank's prefetch queue at their own rate."""
        bt = self._batch_time(self.share)
        for r in range(self.n):
            while self.queue[r] < self.c.prefetch and self.ready[r] <= upto:
                self.ready[r] += bt * self.rng.uniform(0.85, 1.15)
                self.queue[r] += 1
                self.batch_cpu_used += self.c.batch_cpu_s * self.cpu_cost_mult

    def _take(self, r, t):
        """Start time of rank r's next micro-step: when a batch is in its queue."""
        self._refill(t)
        if self.queue[r] > 0:
            self.queue[r] -= 1
            if self.queue[r] == self.c.prefetch - 1:
                self.ready[r] = max(self.ready[r], t)
            return t
        # wait for the batch being made
        bt = self._batch_time(self.share)
        ready = max(self.ready[r], t)
        self.ready[r] = ready
        self.ready[r] += 0  # consumed immediately
        self.ready[r] = ready
        nxt = ready
        self.ready[r] = ready + bt * self.rng.uniform(0.85, 1.15)
        self.batch_cpu_used += self.c.batch_cpu_s * self.cpu_cost_mult
        return nxt

    def _seg_compute(self, r, st, dur, w, kind="train"):
        c = self.c
        pid = c.pid + r * 11
        if kind == "eval":
            self.tl.add(r, st, dur, 0.9, 0.7, 0.35, 0.32, 0.25, 0, pid)
        else:
            self.tl.add(r, st, dur, 0.97, c.sm, c.sm * 0.45, c.tensor, c.dram, 0, pid)

    def advance(self, t, dt, w):
        c = self.c
        end = t + dt
        self.share = w.host.share(self.demand if hasattr(self, "demand") else 1.0)
        cur = max(self.cursor, t)
        launches = 0
        while cur < end:
            if cur < self.pause_until:
                cur = min(end, self.pause_until)
                continue
            if self.phase_override and self.phase_override[0] <= cur < self.phase_override[1]:
                t1 = self.phase_override[1]
                cur = min(end, t1)
                continue
            # evaluation and checkpoint phases, at step boundaries
            if c.eval_every and self.step and self.step % c.eval_every == 0 and self.micro == 0 and not getattr(self, "_did_eval", False):
                self._did_eval = True
                d = c.eval_s * self.rng.uniform(0.95, 1.05)
                for r in range(self.n):
                    st = self._take(r, cur)
                    self._seg_compute(r, st, d * 0.97, w, "eval")
                    self.tl.add(r, st + d * 0.97, d * 0.03, 1.0, 0.1, 0.05, 0.0, 0.02, 0, c.pid + r * 11)
                cur += d
                continue
            self._did_eval = False if self.micro else getattr(self, "_did_eval", False)
            if c.ckpt_every and self.step and self.step % c.ckpt_every == 0 and self.micro == 0 and not getattr(self, "_did_ckpt", False):
                self._did_ckpt = True
                d = c.ckpt_s * self.rng.uniform(0.9, 1.15)
                for r in range(self.n):  # device-to-host copy of the shards, then the NAS write
                    self.tl.add(r, cur, min(2.0, d * 0.1), 0.6, 0.05, 0.02, 0.0, 0.3, 0, c.pid + r * 11)
                self.ckpt_until = cur + d
                cur += d
                continue
            # one micro-step on every rank
            starts, ends = [], []
            for r in range(self.n):
                st = self._take(r, cur)
                fac = w.gpus[r].factor
                warm = 1.0
                if cur < self.warm_until:
                    warm = 1.6
                comp = c.compute_s * (c.comp_frac / fac + (1 - c.comp_frac)) * self.slow[r] * warm
                if r in self.neighbor:
                    want = self.neighbor[r][1]
                    comp /= max(0.25, 1 - want * 0.55)
                comp *= self.rng.uniform(0.985, 1.015)
                h = self.hang[r]
                if h and h[0] <= st < h[1]:
                    st = h[1]  # the rank sits in a stuck call, kernel queue empty
                self._seg_compute(r, st, comp, w)
                starts.append(st)
                ends.append(st + comp)
            launches += c.launches_per_step * self.n
            self.micro += 1
            sync = self.micro >= c.accum
            if self.n > 1 and sync:
                arrive = max(ends)
                bw = c.link_gbs * 1e9 * min(self.link)
                xfer = c.grad_bytes * 2 * (self.n - 1) / self.n / bw
                exposed = xfer * (1 - c.overlap) if max(self.link) == min(self.link) else xfer * (1 - c.overlap * min(self.link))
                for r in range(self.n):
                    if arrive - ends[r] > 1e-4:  # NCCL kernel spins waiting for the slowest rank
                        self.tl.add(r, ends[r], arrive - ends[r], 1.0, 0.09, 0.03, 0.0, 0.01, 0, c.pid + r * 11)
                    self.tl.add(r, arrive, exposed, 1.0, 0.14, 0.06, 0.0, 0.12,
                                c.grad_bytes / max(exposed + c.compute_s * c.overlap, 1e-3) / 2**20, c.pid + r * 11)
                done = arrive + exposed
            else:
                done = max(ends)
                if self.n > 1:
                    for r in range(self.n):
                        if done - ends[r] > 1e-4:
                            self.tl.add(r, ends[r], done - ends[r], 0.0, 0, 0, 0, 0, 0, 0)
            if sync:
                for r in range(self.n):
                    self.tl.add(r, done, c.opt_s, 1.0, 0.55, 0.3, 0.0, 0.75, 0, c.pid + r * 11)
                done += c.opt_s
                self.micro = 0
                self.step += 1
                self.steps_done += 1
            self.tokens += c.batch_tokens * self.n
            self.samples += c.samples * self.n
            cur = done + 0.002 * self.rng.random()
        self.cursor = cur
        # CPU: one launching main thread per rank, and the loader workers
        main = min(1.0, 0.35 + launches / max(dt, 1e-6) / self.n * 12e-6) * self.n
        load = self.batch_cpu_used / dt
        self.batch_cpu_used = 0.0
        self.demand = main + min(load, c.workers * self.n) + 0.2 + self.extra_host
        used = self.demand * self.share
        w.host.account(self.demand, used, dt, threads=self.n * (3 + c.workers))
        self.cpu_s += used * dt
        self.main_s += main * self.share * dt
        for i, p in enumerate(self.procs):
            if p.in_tree:  # (a tenant on the GPU has its own CPU time)
                p.cpu_s = self.cpu_s / self.n
        acts = [self.tl.collect(r, t, end) for r in range(len(self.tl.segs))]
        for r, nb in self.neighbor.items():
            npid, want, nsm, nten, ndram = nb
            a = acts[r]
            got = min(want, 1.0 - 0.5 * a.busy) if a.busy else want
            a.procs[npid] = (got, 0)
            a.busy = min(1.0, a.busy + got)
            a.sm = min(a.busy, a.sm + got * nsm)
            a.occ = min(a.sm, a.occ + got * nsm * 0.4)
            a.tensor = min(a.sm, a.tensor + got * nten)
            a.dram = min(1.0, a.dram + got * ndram)
        tail = max(self.launch_tail[0], (1 - self.share) * 0.3)
        pids = tuple(p.pid for p in self.procs if p.in_tree) + tuple(c.pid + 500 + k for k in range(min(c.workers, 8)))
        tree = {"pids": pids, "label": c.cmd[:60], "busiest": f"{c.pid} python3", "busiest_s": self.main_s / self.n,
                "threads": ((c.pid, c.pid, "python3", self.main_s / self.n),
                            (c.pid + 40, c.pid, "pt_autograd_0", self.main_s / self.n * 0.6),
                            (c.pid + 500, c.pid + 500, "pt_data_worker", (self.cpu_s - self.main_s) / max(1, c.workers * self.n))),
                "launch": [LaunchStat("cudaLaunchKernel", c.pid + r * 11, int(launches / self.n), 4.0, tail,
                                      max(self.launch_tail[1], 300.0)) for r in range(self.n)],
                "offcpu": int(w.host.tree_inv)}
        return acts, tree

    def page(self, t, w):
        if not self.c.exports:
            return None
        c = self.c
        L = ["# HELP trainer_steps_total Optimizer steps completed", "# TYPE trainer_steps_total counter",
             f"trainer_steps_total {float(self.steps_done)}"]
        if c.work_unit == "tokens":
            L += ["# TYPE trainer_tokens_total counter", f"trainer_tokens_total {float(self.tokens)}"]
        else:
            L += ["# TYPE trainer_samples_total counter", f"trainer_samples_total {float(self.samples)}"]
        return "\n".join(L) + "\n"


class Job:
    """A GPU process without an engine page: ``shape(t, job, w)`` says, per GPU, the kernel
    activity it would have with all the CPU it wants; ``cpu_bound`` is the share of that
    activity that waits on a host thread (it shrinks when the thread loses its CPU)."""

    def __init__(self, procs, shape, rng, n_gpus, cpu_cores=1.0, cpu_bound=0.0, launches_per_s=0.0,
                 launch_api="cudaLaunchKernel", counter=None):
        self.procs = procs
        self.shape = shape
        self.rng = rng
        self.n = n_gpus
        self.cpu_cores = cpu_cores
        self.cpu_bound = cpu_bound
        self.launches_per_s = launches_per_s
        self.launch_api = launch_api
        self.counter = counter
        self.work = 0.0
        self.cpu_s = 0.0
        self.launch_tail = (0.0, 0.0)
        self.state = {}
        self.demand = cpu_cores
        self.extra_host = 0.0

    def init(self, w):
        pass

    def advance(self, t, dt, w):
        share = w.host.share(self.demand)
        acts = []
        shapes = self.shape(t, self, w)
        cpu_f = 1 - self.cpu_bound * (1 - share)
        for g in range(self.n):
            a = Activity()
            for pid, (busy, sm, ten, dram, cb) in shapes[g].items():
                f = 1 - cb * (1 - share) if cb is not None else cpu_f
                fac = w.gpus[g].factor
                b = min(1.0, busy * f) * (1 + self.rng.gauss(0, 0.01))
                b = max(0.0, min(1.0, b))
                a.procs[pid] = (b, 0)
                a.busy = min(1.0, a.busy + b)
                a.sm = min(a.busy, a.sm + b * sm)
                a.occ = min(a.sm, a.occ + b * sm * 0.45)
                a.tensor = min(a.sm, a.tensor + b * ten * fac)
                a.dram = min(1.0, a.dram + b * dram)
            acts.append(a)
        self.work += sum(a.busy for a in acts) * dt * cpu_f * (sum(w.gpus[g].factor for g in range(self.n)) / self.n)
        demand = self.cpu_cores + self.extra_host
        self.demand = demand
        used = demand * share
        w.host.account(demand, used, dt, threads=4)
        self.cpu_s += used * dt
        if self.procs:
            self.procs[0].cpu_s = self.cpu_s
        tail = max(self.launch_tail[0], (1 - share) * 0.3)
        live = [p for p in self.procs if p.alive and p.in_tree]
        tree = {"pids": tuple(p.pid for p in live[:1]), "label": live[0].cmdline[:60] if live else "",
                "busiest": f"{live[0].pid} {live[0].name}" if live else "", "busiest_s": self.cpu_s * 0.8,
                "threads": ((live[0].pid, live[0].pid, live[0].name, self.cpu_s * 0.8),) if live else (),
                "launch": [LaunchStat(self.launch_api, live[0].pid if live else 0,
                                      int(self.launches_per_s * dt * cpu_f), 4.0, tail,
                                      max(self.launch_tail[1], 300.0))] if self.launches_per_s else [],
                "offcpu": int(w.host.tree_inv)}
        return acts, tree

    def page(self, t, w):
        if not self.counter:
            return None
        return f"# TYPE trainer_samples_total counter\ntrainer_samples_total {float(int(self.work * self.counter))}\n"
