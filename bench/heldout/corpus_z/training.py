"""Training loops and other CUDA jobs: one process per rank, steps made of data wait,
forward/backward compute and an exposed all-reduce in which the faster ranks wait in
NCCL (GPU-Util high, SM activity low).  Checkpoints, eval phases, sequence-length warmup;
stragglers, data-loader stalls, clocks, CPU starvation, tiny kernels, a second tenant."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from .common import (GPUS, GiB, GpuState, Host, Proc, Thread, clamp, event_value, launch_hist,
                     make_frame, pinned_sample, poisson, proc_samples, status)


@dataclass
class TrainSpec:
    gpu: str
    gpus: int
    duration: float
    step_s: float  # compute (forward + backward) per step per rank at full clock
    comm_s: float = 0.0  # exposed all-reduce time per step
    loader_s: float = 0.0  # time the loader pool needs per batch (prefetched under compute)
    workers: int = 8
    batch: int = 8  # per rank
    seq: int = 4096  # tokens per sample (0: images etc.)
    counter: str | None = None  # "tokens" | "samples" | None (no /metrics at all)
    tick: float = 1.0
    mem_frac: float = 0.82
    cmd: str = "torchrun --nproc-per-node=8 train.py"
    proc_name: str = "python"
    user: str = "mlplat"
    params: float = 7e9
    ckpt: tuple[float, float, float] | None = None  # (first, period, duration)
    ckpt_sharded: bool = False  # FSDP sharded save: every rank writes
    evals: tuple[float, float, float] | None = None  # (first, period, duration)
    events: list[tuple] = field(default_factory=list)  # (t0, t1, kind, value[, ramp])
    tensor: float = 0.55  # tensor-pipe activity while computing
    sm: float = 0.9
    dram: float = 0.3
    cpus: int = 96
    quota: float | None = None
    host_launch_s: float = 0.0  # host time to launch one step's kernels (CPU-bound part)
    ebpf: bool = False
    others: list[tuple] = field(default_factory=list)  # (t0, t1, gpu, name, cmd, mem, frac, sm)
    family_kind: str = "train"  # "train" | "other"
    port: int = 9400
    mem_ramp: tuple[float, float] | None = None  # a job starting: (t0, seconds to fill)
    start_t: float = 0.0  # the job's first step (idle before)
    power_limit: float | None = None


def _periodic_busy(a: float, b: float, period: float, on: float, phase: float) -> float:
    """Fraction of [a, b) inside the 'on' part [0, on) of a pattern of ``period``."""
    if period <= 0 or on >= period:
        return 1.0
    if on <= 0 or b <= a:
        return 0.0

    def cum(x):  # on-time in [phase, x)
        k, r = divmod(x - phase, period)
        return k * on + min(r, on)
    return clamp((cum(b) - cum(a)) / (b - a), 0.0, 1.0)


class TrainSim:
    def __init__(self, name: str, spec: TrainSpec, start_wall: float, seed: int):
        self.s, self.name = spec, name
        self.rng = rng = random.Random(seed)
        self.start = start_wall
        self.gm = GPUS[spec.gpu]
        self.gpu_state = [GpuState(self.gm, i, rng, seed, power_limit=spec.power_limit)
                          for i in range(spec.gpus)]
        self.host = Host(spec.cpus, rng, spec.quota)
        self.ratios = [1.0] * spec.gpus
        self.work = 0.0
        self.steps = 0.0
        self.phase = rng.uniform(0, 10)
        self.mem = int(self.gm.mem_total * spec.mem_frac * rng.uniform(0.97, 1.0))
        base = rng.randrange(3000, 60000)
        started = start_wall - rng.uniform(600, 40000) + spec.start_t
        self.procs: list[Proc] = []
        self.ranks: list[Proc] = []
        self.loaders: list[Thread] = []
        pod = f"training/{spec.cmd.split()[-1].split('.')[0][:20]}-{rng.randrange(16**5):05x}" \
            if spec.family_kind == "train" else ""
        cg = (f"/kubepods/pod{rng.randrange(16**8):08x}/{rng.randrange(16**12):012x}"
              if pod else "/user.slice/user-1042.slice/session-7.scope")
        cont = f"containerd:{rng.randrange(16**12):012x}" if pod else ""
        root = None
        if spec.gpus > 1:
            root = Proc(base, "torchrun", spec.cmd, None, started - 5, spec.user, 1, cont, pod, cg,
                        rss=int(0.4 * GiB), cpu_s=rng.uniform(20, 200),
                        threads=[Thread(base, base, "torchrun")])
            self.procs.append(root)
        for r in range(spec.gpus):
            pid = base + 10 + r * 3
            th = [Thread(pid, pid, spec.proc_name[:15]), Thread(pid + 1, pid, "pt_autograd_0")]
            if spec.workers:
                th.append(Thread(pid + 2, pid, "pt_data_pin"))
            p = Proc(pid, spec.proc_name, spec.cmd.replace("torchrun", "/usr/bin/python3 -u", 1)
                     if spec.gpus > 1 else spec.cmd, r, started, spec.user,
                     root.pid if root else rng.randrange(200, 2000), cont, pod, cg,
                     rss=int(rng.uniform(6, 14) * GiB), cpu_s=rng.uniform(500, 20000), threads=th)
            self.procs.append(p)
            self.ranks.append(p)
            for w in range(spec.workers if r < 8 else 0):
                wp = base + 500 + r * 40 + w
                wt = Thread(wp, wp, "pt_data_worker", rng.uniform(100, 3000))
                self.procs.append(Proc(wp, spec.proc_name, p.cmdline, None, started + 8, spec.user,
                                       pid, cont, pod, cg, rss=int(1.2 * GiB), threads=[wt]))
                self.loaders.append(wt)
        self.others: dict[int, Proc] = {}

    def run(self):
        s = self.s
        n = int(s.duration / s.tick)
        for i in range(n):
            yield self.tick(i, i * s.tick)

    def tick(self, i: int, t: float):
        s, rng, tick = self.s, self.rng, self.s.tick
        G = s.gpus
        idle = t < s.start_t or bool(event_value(s, t, "idle", False))
        # phases: checkpoint, eval
        in_ckpt = in_eval = False
        if s.ckpt:
            f, per, dur = s.ckpt
            in_ckpt = t >= f and (t - f) % per < dur
        if s.evals:
            f, per, dur = s.evals
            in_eval = t >= f and (t - f) % per < dur
        seq_scale = event_value(s, t, "seq_scale", 1.0)
        loader_slow = event_value(s, t, "loader", 1.0)
        cpu_share = event_value(s, t, "cpu_share", 1.0)
        tiny = event_value(s, t, "tiny", 0.0)  # 0..1: share of the step turned into tiny kernels
        clock_all = event_value(s, t, "clock", None)
        reasons_all = event_value(s, t, "reasons", ())
        comp = []
        for r in range(G):
            c = s.step_s * (0.15 + 0.85 * seq_scale)
            ratio = self.ratios[r]
            c = c * (0.35 + 0.65 / ratio)
            share = 1.0 - self._other_frac(r, t)
            c /= max(0.2, share)
            c *= event_value(s, t, f"slow{r}", 1.0)
            if tiny:
                c *= 1 + 1.8 * tiny
            host = s.host_launch_s * (1 + 1.5 * tiny) / max(0.05, cpu_share) * event_value(s, t, f"hostslow{r}", 1.0)
            comp.append(max(c, host))
        mx = max(comp)
        comm = s.comm_s * (0.9 + 0.1 * seq_scale) if G > 1 else 0.0
        loader = s.loader_s * loader_slow * seq_scale ** 0.3
        wait = max(0.0, loader - (mx + comm) * 0.95)
        if in_eval:
            mx *= 0.42
            comm = comm * 0.1
            wait = max(0.0, loader * 0.4 - mx)
        T = mx + comm + wait
        steps = 0.0 if (idle or in_ckpt) else tick / T
        if not in_eval:
            self.steps += steps
            unit = s.seq * seq_scale * s.batch * G if s.counter == "tokens" else s.batch * G
            self.work += steps * unit
        gs_out = []
        for r in range(G):
            g = self.gpu_state[r]
            busy_r = (mx + comm) / T
            c = comp[r]
            gpu_compute = min(c, s.step_s * (0.15 + 0.85 * seq_scale) * (0.35 + 0.65 / self.ratios[r]) *
                              (1 + 1.8 * tiny) / max(0.2, 1 - self._other_frac(r, t)) *
                              event_value(s, t, f"slow{r}", 1.0))
            host_gap = c - gpu_compute  # launch-bound: GPU idle inside the step
            nccl = (mx - c) + comm
            if G == 1:
                nccl = 0.0
            kernel = gpu_compute + nccl
            busy_r = kernel / T
            sm = (gpu_compute * s.sm * (1 - 0.85 * tiny) + nccl * 0.2) / T
            tensor = gpu_compute * s.tensor * (1 - 0.9 * tiny) / T
            dram = (gpu_compute * s.dram * (1 - 0.6 * tiny) + nccl * 0.08) / T
            of = self._other_frac(r, t)
            if of:
                busy_r = min(1.0, busy_r + of * 0.9)
                sm = min(1.0, sm + of * self._other_sm(r, t))
                tensor = min(1.0, tensor + of * 0.2)
            samples = None
            nsamp = max(1, int(round(self.gm.samples_per_s * tick)))
            if idle:
                busy_r = sm = tensor = dram = 0.0
            elif in_ckpt:
                if s.ckpt_sharded or r == 0 or G == 1:
                    busy_r, sm, tensor, dram = 0.04, 0.01, 0.0, 0.02  # D2H copies, disk writes
                else:
                    busy_r, sm, tensor, dram = 0.97, 0.12, 0.0, 0.01  # spinning in the barrier
            elif T > 0.25 and (wait > 0.05 or host_gap > 0.05):
                dt = tick / nsamp
                on = kernel
                samples = [_periodic_busy(t + k * dt, t + (k + 1) * dt, T, on, self.phase)
                           for k in range(nsamp)]
                busy_r = sum(samples) / len(samples)
            cap = clock_all
            reasons = tuple(reasons_all)
            own_cap = event_value(s, t, f"clock{r}", None)
            if own_cap is not None:
                cap = own_cap if cap is None else min(cap, own_cap)
                reasons = tuple(event_value(s, t, f"reasons{r}", ())) + reasons
            mem = self.mem
            if s.mem_ramp:
                t0, fill = s.mem_ramp
                mem = int(self.mem * clamp((t - t0) / fill, 0, 1)) if t >= t0 else 0
                if t < t0:
                    busy_r = sm = tensor = dram = 0.0
            mem += self._other_mem(r, t)
            nvl = (comm + (mx - c)) / T * 120000 * (G > 1) if not in_ckpt else 0.0
            gsamp, ratio = g.sample(busy=clamp(busy_r, 0, 1), sm=clamp(sm, 0, 1),
                                    occ=clamp(sm * 0.45, 0, 1), tensor=clamp(tensor, 0, 1),
                                    dram=clamp(dram, 0, 1), mem_used=mem, tick_s=tick,
                                    busy_samples=samples, clock_cap=cap, reasons=reasons,
                                    temp_target_add=event_value(s, t, f"temp{r}", 0.0) + event_value(s, t, "temp", 0.0),
                                    nvlink=nvl, pcie=60 + 400 * (wait > 0))
            self.ratios[r] = ratio
            gs_out.append(gsamp)
            p = self.ranks[r]
            p.mem = mem - self._other_mem(r, t)
            p.sm_util = clamp(gsamp.util_gpu_pct * (1 - self._other_frac(r, t)), 0, 100)
            p.mem_util = clamp(dram * 100, 0, 100)
            # the rank's threads: main launches, autograd runs backward
            main_busy = 0.0 if idle else (0.35 + 0.6 * (s.host_launch_s / max(T, 1e-3)) + 0.3 * tiny)
            if in_ckpt and (r == 0 or s.ckpt_sharded):
                main_busy = 1.0
            main_busy = min(1.0, main_busy) * min(1.0, cpu_share * 1.1)
            p.threads[0].cpu_s += main_busy * tick * rng.uniform(0.95, 1.02)
            p.threads[1].cpu_s += (0.0 if idle or in_ckpt else 0.25 * min(1, cpu_share * 1.2)) * tick
            if len(p.threads) > 2:
                p.threads[2].cpu_s += (0.03 if not idle else 0) * tick
        # data loader workers: busy producing batches (CPU-bound) or blocked on storage
        storage = event_value(s, t, "storage", False)
        per_worker = 0.0
        if s.workers and not idle and not in_ckpt:
            need = (loader / max(T, 1e-3))  # fraction of the pool's capacity in use
            per_worker = clamp(need, 0, 1) * (0.12 if storage else 0.92) * min(1, cpu_share * 1.1)
        for w in self.loaders:
            w.cpu_s += per_worker * tick * rng.uniform(0.9, 1.05)
        for p in self.procs:
            p.cpu_s = sum(th.cpu_s for th in p.threads)
        others = self._others(t)
        busy_cores = len(self.loaders) * per_worker + G * 0.6
        psi = event_value(s, t, "psi", 0.4 + 0.04 * busy_cores)
        rq = event_value(s, t, "rq", 2 + busy_cores * 0.8)
        thr = event_value(s, t, "throttled", 0.0)
        invol = event_value(s, t, "invol", 8 + 2 * G + busy_cores * 3)
        host, rqv = self.host.step(tick, busy_cores + event_value(s, t, "noise_cores", 0.0), psi, rq, thr,
                                   invol, 300 + 200 * G)
        launch = ()
        if s.ebpf and not idle:
            jit = event_value(s, t, "jitter", None)
            lh = []
            for p in self.ranks:
                k = int(steps * 900 * (1 + 8 * tiny))
                lh.append(launch_hist("cuLaunchKernel", p.pid, k, 3500, rng,
                                      jit[0] if jit else 0.0,
                                      (jit[1] * 0.3e9, jit[1] * 3e9) if jit else (2e5, 5e6)))
                lh.append(launch_hist("cudaLaunchKernel", p.pid, int(steps * 300), 4200, rng,
                                      jit[0] if jit else 0.0,
                                      (jit[1] * 0.3e9, jit[1] * 3e9) if jit else (2e5, 5e6)))
            launch = tuple(x for x in lh if x.count)
            host = type(host)(cpu_pct=host.cpu_pct, offcpu_switches=poisson(rng, invol * 0.3 * tick),
                              cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                              run_queue=host.run_queue, cpus=host.cpus,
                              ctx_switches_total=host.ctx_switches_total)
        srcs = {"nvml": status(0.0, rng.uniform(0.004, 0.012) * (1 + G / 8), 0.007),
                "host": status(0.0, rng.uniform(0.0004, 0.0009), 0.0006),
                "pin": status(0.0, rng.uniform(0.01, 0.03), 0.018),
                "procfs": status(0.0, rng.uniform(0.0002, 0.0004), 0.0003, detail="/proc")}
        engine = None
        if s.counter:
            srcs["engine"] = status(0.0, rng.uniform(0.02, 0.05), 0.035)
            name = "trainer_tokens_total" if s.counter == "tokens" else "trainer_samples_total"
            pids = tuple(sorted(p.pid for p in self.procs))
            busiest = max((th for p in self.procs for th in p.threads), key=lambda th: th.cpu_s)
            engine = EngineSample(
                kind="trainer", url=f"http://127.0.0.1:{s.port}/metrics",
                generation_tokens_total=float(int(self.work)),
                requests_finished_total=float(int(self.steps)), tensor_parallel=1,
                data_parallel=1, pids=pids, work_unit=s.counter,
                time_mono_s=round(self._mono(t) + 0.03, 6),
                time_wall_s=round(self.start + t + rng.uniform(0.02, 0.05), 6),
                cpu_s=round(sum(p.cpu_s for p in self.procs), 2), ctx_involuntary=self.host.invol,
                busiest_thread_cpu_s=round(busiest.cpu_s, 2),
                busiest_thread=f"{busiest.tid} {busiest.name}", cpu_quota_cores=self.host.quota,
                cpu_periods=self.host.periods, cpu_throttled_periods=self.host.throttled)
            del name
        else:
            srcs["engine"] = status(ok=False, reason="no engine found (pass --engine URL)", med=3e-5)
        if s.ebpf:
            srcs["ebpf"] = status(0.0, rng.uniform(0.001, 0.003), 0.002,
                                    detail="uprobes: libcudart.so.12, libcuda.so.1")
        label = s.cmd[:60]
        pinned = pinned_sample(label, self.procs, self.host, rqv, tuple(range(s.cpus)),
                               (s.port,) if s.counter else ())
        return make_frame(i, self.start + t + rng.uniform(0, 0.002), self._mono(t),
                          gpus=tuple(gs_out), processes=proc_samples(self.procs + others),
                          engine=engine, launch=launch, host=host, pinned=pinned, sources=srcs)

    def _mono(self, t):
        if not hasattr(self, "_m0"):
            self._m0 = self.rng.uniform(3000, 500000)
        return self._m0 + t

    def _other_frac(self, gi, t):
        f = 0.0
        for o in self.s.others:
            if o[2] == gi and o[0] <= t < o[1]:
                f += o[6]
        return min(0.8, f)

    def _other_sm(self, gi, t):
        for o in self.s.others:
            if o[2] == gi and o[0] <= t < o[1]:
                return o[7] if len(o) > 7 else 0.5
        return 0.5

    def _other_mem(self, gi, t):
        return sum(o[5] for o in self.s.others if o[2] == gi and o[0] <= t < o[1])

    def _others(self, t):
        out = []
        for k, o in enumerate(self.s.others):
            t0, t1, g, name, cmd, mem, frac = o[:7]
            if not (t0 <= t < t1):
                continue
            p = self.others.get(k)
            if p is None:
                pid = 70000 + k * 131 + g
                p = Proc(pid, name, cmd, g, self.start + t0 - 1.5, user="dsci-" + "pqrstuvw"[k],
                         ppid=pid - 7, cgroup="/user.slice/user-1077.slice", rss=int(4 * GiB),
                         cpu_s=3.0, threads=[Thread(pid, pid, name[:15])])
                self.others[k] = p
            p.mem = mem
            p.sm_util = clamp(frac * 100 * self.rng.uniform(0.85, 1.1), 0, 100)
            p.mem_util = clamp(frac * 30 * self.rng.uniform(0.8, 1.2), 0, 100)
            p.cpu_s += 0.95 * self.s.tick
            out.append(p)
        return out
