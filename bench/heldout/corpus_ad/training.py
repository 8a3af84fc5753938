"""A synchronous data-parallel / FSDP / TP+PP training job: per-rank step times from compute,
collectives, the data loader and the host, and everything the node shows of it."""
from __future__ import annotations

import math

from gputop.schema import EngineSample

from . import common as C
from .world import Component, Out


class Trainer(Component):
    def __init__(self, rng, gpus, board: C.Board, *, start_wall, user, job, cmd, t_compute,
                 comm_s=0.0, comm_total=0.0, tensor=0.55, sm_c=0.85, dram_c=0.35, mem_gib=60.0,
                 workers=8, cores=16, t_load=0.0, load_io=0.5, t_host=0.01, nccl_sm=0.18,
                 rank_mods=None, mods=None, ckpt=None, ckpt_style="rank0", evals=None,
                 exporter=None, kernels=800, ebpf=False, quota=None, pod="", tokens_per_step=0,
                 nvlink=True, startup=0.0, bubble=None, step_jitter=0.03):
        self.rng, self.gpus, self.b = rng, tuple(gpus), board
        self.tc, self.comm_s, self.comm_total = t_compute, comm_s, comm_total
        self.tensor, self.sm_c, self.dram_c, self.nccl_sm = tensor, sm_c, dram_c, nccl_sm
        self.mem = mem_gib * C.GiB
        self.workers, self.cores_granted = workers, cores
        self.t_load, self.load_io, self.t_host = t_load, load_io, t_host
        self.rank_mods = rank_mods or (lambda t: {})
        self.mods = mods or (lambda t: {})
        self.ckpt, self.ckpt_style, self.evals = ckpt, ckpt_style, evals
        self.exporter, self.kernels, self.ebpf = exporter, kernels, ebpf
        self.quota, self.tokens_per_step, self.nvlink = quota, tokens_per_step, nvlink
        self.bubble = bubble or {}
        self.step_jitter = step_jitter
        self.start_wall = start_wall
        self.startup = startup
        n = len(self.gpus)
        base = rng.randint(300000, 3900000)
        st = start_wall - (0 if startup else 600 + 7200 * rng.random())
        slurm = (job, "0") if job else ("", "")
        self.root = C.Proc(base, "torchrun" if n > 1 else "python", cmd, user, st - 2, ppid=base - 1, slurm=slurm, pod=pod)
        self.ranks = []
        for r in range(n):
            p = C.Proc(base + 10 + r, "python", cmd.replace("torchrun", "python -u") if n > 1 else cmd, user, st,
                       ppid=base if n > 1 else base - 1, slurm=slurm, pod=pod)
            p.rss = int((8 + 4 * rng.random()) * C.GiB)
            self.ranks.append(p)
        if n == 1:
            self.ranks = [self.root]
            self.root.rss = int(10 * C.GiB)
        self.wpids = [base + 100 + k for k in range(workers * n)]
        threads = []
        for p in self.ranks:
            threads += [(p.pid, p.pid, "python"), (p.pid + 1000, p.pid, "pt_autograd_0"),
                        (p.pid + 1001, p.pid, "pt_data_pin")]
        threads += [(w, w, "pt_data_worker") for w in self.wpids[:24]]
        tree = ([self.root.pid] if n > 1 else []) + [p.pid for p in self.ranks] + self.wpids
        self.pin = C.Pinned(cmd[:60] + "…", self.root.pid, tree, threads, range(cores), quota=quota)
        self.steps = 0.0
        self.items = 0.0
        self.phase_t = 0.0

    def demand(self, t):
        return {g: 0.95 for g in self.gpus}

    def _phase(self, t):
        if t < self.startup:
            return "startup"
        if self.ckpt:
            every, dur, first = self.ckpt
            if t >= first and (t - first) % every < dur:
                return "ckpt"
        if self.evals:
            every, dur, first = self.evals
            if t >= first and (t - first) % every < dur:
                return "eval"
        return "train"

    def advance(self, t, dt, speed):
        r = self.rng
        o = Out()
        m = self.mods(t)
        rm = self.rank_mods(t)
        n = len(self.gpus)
        phase = self._phase(t)
        # ---- CPU: workers + rank main threads within the cgroup's cores
        worker_need = self.workers * n * (m.get("worker_cpu", 0.9 if self.t_load else 0.05))
        main_need = n * 1.0
        demand = worker_need + main_need + m.get("other_cores", 0.0)
        avail = float(self.cores_granted) if self.quota is None else min(self.cores_granted, self.quota)
        cont = max(1.0, demand / avail)
        # ---- per-rank step pieces
        tcs, waits, gaps = [], [], []
        for k, g in enumerate(self.gpus):
            f, share = speed[g]
            mk = rm.get(k, {})
            tc = self.tc * m.get("tc_mult", 1.0) * mk.get("slow", 1.0) / (f ** 0.9) / max(0.05, share) + mk.get("extra_s", 0.0)
            if phase == "eval":
                tc *= 0.35
            tcs.append(tc)
            host = self.t_host * cont * m.get("host_mult", 1.0) + mk.get("host_extra", 0.0) + m.get("host_extra", 0.0)
            gaps.append(max(0.0, host - 0.8 * tc) + m.get("gap", 0.0))
            wf = self.workers / cont if self.workers else 0.5
            supply = self.t_load * m.get("load_mult", 1.0) * mk.get("load_mult", 1.0) / max(0.3, wf) if self.t_load else 0.0
            waits.append(max(0.0, supply - tc))
        comm = self.comm_s * m.get("comm_mult", 1.0)
        T = max(tcs[k] + waits[k] + gaps[k] for k in range(n)) + comm
        T *= 1 + r.gauss(0, self.step_jitter)
        T = max(T, 1e-3)
        steps = dt / T if phase in ("train", "eval") else 0.0
        if phase == "train":
            self.steps += steps
            self.items += steps * self.tokens_per_step
        # ---- loads
        for k, g in enumerate(self.gpus):
            p = self.ranks[k]
            if phase == "startup":
                busy = 0.0
                lo = C.Load(pcie_rx=900.0)
                mem = self.mem * min(1.0, t / max(1, self.startup) * 1.3)
            elif phase == "ckpt":
                if self.ckpt_style == "rank0" and k > 0:
                    lo = C.Load(1.0, self.nccl_sm * 0.6, 0.05, 0.0, 0.02)
                else:
                    lo = C.Load(0.03, 0.02, 0.01, 0.0, 0.02, pcie_tx=2500.0, burst_s=2.0)
                mem = self.mem
            else:
                tc, wt, gp = tcs[k], waits[k], gaps[k]
                idle = wt + gp
                if n > 1 and k in self.bubble:
                    idle += T * self.bubble[k]
                busy_t = max(0.0, T - idle)
                coll_t = max(0.0, busy_t - tc)
                fr_c = min(tc, busy_t) / T
                fr_n = coll_t / T
                busy = C.clip(fr_c + fr_n + 0.02 * (r.random() - 0.5))
                ev = (0.8 if phase == "eval" else 1.0) * m.get("sm_mult", 1.0)
                lo = C.Load(busy, C.clip(fr_c * self.sm_c * ev + fr_n * self.nccl_sm),
                            C.clip(fr_c * self.sm_c * 0.45 + fr_n * 0.08),
                            C.clip(fr_c * self.tensor * m.get("tensor_mult", 1.0) * (0.7 if phase == "eval" else 1.0)),
                            C.clip(fr_c * min(0.97, self.dram_c * m.get("dram_mult", 1.0)) + fr_n * 0.12),
                            pcie_rx=(150 + 400 * steps) if n == 1 or not self.nvlink else 120 + 200 * steps,
                            pcie_tx=40 + 20 * steps,
                            nvl_rx=(self.comm_total * steps / dt / C.MiB) if (self.nvlink and n > 1) else 0,
                            nvl_tx=(self.comm_total * steps / dt / C.MiB) if (self.nvlink and n > 1) else 0,
                            burst_s=T if idle / T > 0.03 else 0.0)
                mem = self.mem * (1 + 0.01 * math.sin(t / 7 + k))
            o.loads[g] = lo
            p.sm_util = lo.busy * 100
            p.mem_util = lo.dram * 100
            o.procs.append((p, g, mem))
        # ---- host CPU
        main_cpu = min(1.0, (self.t_host * steps / dt) * 1.3 + 0.25) if phase == "train" else (
            1.0 if phase == "ckpt" else 0.3)
        main_cpu = main_cpu / cont if cont > 1 else main_cpu
        wcpu = (m.get("worker_cpu", 0.9 if self.t_load else 0.05)) * (0.3 if phase == "ckpt" else 1.0)
        if m.get("load_mult", 1.0) > 1.5:
            wcpu *= (1 - self.load_io) / m["load_mult"] + 0.05
        worker_cores = min(self.workers * n * wcpu, max(0.0, avail - main_need)) if cont > 1 else self.workers * n * wcpu
        for k, p in enumerate(self.ranks):
            p.tick(main_cpu + 0.2, dt)
        if n > 1:
            self.root.tick(0.01, dt)
        o.cores = min(avail, n * (main_cpu + 0.2) + worker_cores) + m.get("other_cores", 0.0)
        o.runnable = demand if cont > 1 else (n + worker_cores)
        o.runnable += m.get("other_runnable", 0.0)
        o.psi = m.get("psi", 0.0) + (min(90.0, (cont - 1) * 45) if cont > 1 else 0.0)
        o.ctx_rate = 3000 + 2000 * n + (20000 * (cont - 1) if cont > 1 else 0)
        rates = {"python": main_cpu, "pt_autograd_0": 0.6 * main_cpu * (1 if phase == "train" else 0.1),
                 "pt_data_pin": 0.02, "pt_data_worker": worker_cores / max(1, self.workers * n)}
        inv = m.get("invol_rate", 20 * n + (400 * n * (cont - 1) if cont > 1 else 0))
        thr = (cont - 1) / cont if (self.quota is not None and cont > 1) else m.get("throttled_frac", 0.0)
        self.pin.tick(rates, dt, inv, 300 * n, thr, rng=r)
        psi = o.psi + m.get("psi_host", 0.0)
        pin = self.pin.sample(round(psi, 2), int(max(1, o.runnable + 2 + r.gauss(0, 0.8))))
        o.pinned = pin
        # ---- eBPF launch histograms (only with probes on)
        if self.ebpf and phase == "train":
            jt = m.get("jitter", (0.0, 0.0))
            for k, p in enumerate(self.ranks[:8]):
                cnt = int(self.kernels * steps)
                if cnt > 0:
                    o.launch.append(C.launch_hist(r, "cudaLaunchKernel", p.pid, int(cnt * 0.6), 4.5, jt[0], jt[1]))
                    o.launch.append(C.launch_hist(r, "cuLaunchKernel", p.pid, int(cnt * 0.4), 5.5, jt[0], jt[1]))
            o.offcpu = int(m.get("offcpu", 5 * n))
        # ---- the job's progress counter (when the user exports one)
        if self.exporter:
            o.engine_status = (True, None)
            unit = self.exporter
            o.engine = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics", model="",
                                    generation_tokens_total=float(round(self.items)),
                                    requests_finished_total=float(int(self.steps)), work_unit=unit,
                                    tensor_parallel=1, data_parallel=n, pids=tuple(self.pin.tree[:n + 1]),
                                    time_wall_s=round(self.start_wall + t + dt + 0.03, 4), cpu_s=round(self.pin.cpu_s, 2),
                                    ctx_involuntary=self.pin.invol,
                                    busiest_thread_cpu_s=round(self.pin.busiest()[3], 2),
                                    busiest_thread=f"{self.pin.busiest()[0]} {self.pin.busiest()[2]}",
                                    cpu_quota_cores=self.quota, cpu_periods=self.pin.periods if self.quota else None,
                                    cpu_throttled_periods=self.pin.throttled if self.quota else None)
        return o
