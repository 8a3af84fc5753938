"""A step loop on one or more GPUs: training (DDP / FSDP / DeepSpeed / MoE expert parallel),
offline batch inference, diffusion, embeddings, transcoding, notebooks.  Each iteration waits
for its batch (data loader), launches its kernels from a Python thread that needs the CPU,
computes, and (with several ranks) meets the others in a collective, whose NCCL kernels stay
resident (spinning) on every rank that arrived early."""

from __future__ import annotations

from dataclasses import dataclass, field

from gputop.schema import EngineSample, PinnedSample, SourceStatus, ThreadSample

from .sim import GiB


@dataclass
class Profile:
    step_s: float  # kernel time of one iteration at full clock
    comp: float = 0.7  # share of it that is compute-bound (scales with the clock)
    fill: float = 0.85  # SM-active while resident
    dram: float = 0.25  # fraction of peak HBM bandwidth while resident
    tensor: float = 0.35  # fraction of peak tensor FLOP/s while resident
    launches: int = 900  # kernels launched per iteration
    host_s: float = 0.0  # Python CPU time per iteration on the launching thread
    units: float = 0.0  # work counted per iteration (tokens, samples)
    allreduce_s: float = 0.0  # collective time not hidden behind compute
    count: bool = True  # counted by the trainer counter


class Job:
    def __init__(self, world, gpus, prof: Profile, name="python3", cmdline="python3 train.py",
                 mem=60 * GiB, workers=8, data_s=0.0, counter=None, phase_fn=None,
                 profiles=None, rank_slow=None, data_slow=None, cpu_fn=None, tiny_fn=None,
                 shared_fn=None, jitter_fn=None, duty_fn=None, start_s=0.0, url=None,
                 container="", pod="", occ=0.4, noise=0.03, exporter_rank0=True,
                 ebpf_apis=("cudaLaunchKernel", "cuLaunchKernel"), compile_s=0.0, end_s=None):
        self.w = world
        self.gpus = tuple(gpus)
        self.prof = prof
        self.profiles = profiles or {}
        self.workers = workers
        self.data_s = data_s
        self.counter = counter
        self.phase_fn = phase_fn or (lambda t, step: "train")
        self.rank_slow = rank_slow or (lambda r, t: 1.0)
        self.data_slow = data_slow or (lambda t: 1.0)
        self.cpu_fn = cpu_fn or (lambda i: dict(phi=1.0))
        self.tiny_fn = tiny_fn
        self.shared_fn = shared_fn
        self.jitter_fn = jitter_fn
        self.duty_fn = duty_fn
        self.noise = noise
        self.T = start_s
        self.start_s = start_s
        self.end_s = end_s
        self.compile_s = compile_s
        self.ready = start_s
        self.steps = 0
        self.units = 0.0
        self.done = []  # (time, steps, units)
        self.url = url or "http://127.0.0.1:9400/metrics"
        self.ebpf_apis = ebpf_apis
        n = world.n + 64
        self.st = dict(data_wait=[0.0] * n, nccl_wait=[[0.0] * n for _ in gpus],
                       host_gap=[0.0] * n, tiny=[0.0] * n, shared=[0.0] * n, launches=[0] * n,
                       slow=[0.0] * n)
        cg = f"/kubepods/burstable/pod{world.rng.getrandbits(32):08x}" if pod else (
            f"/system.slice/docker-{world.rng.getrandbits(48):012x}.scope" if container else
            "/user.slice/user-1000.slice/session-7.scope")
        alive = (int(start_s / world.tick), int(end_s / world.tick) if end_s else 10**9)
        self.procs = []
        for r, g in enumerate(self.gpus):
            p = world.add_proc(name, cmdline + (f" --local_rank={r}" if len(self.gpus) > 1 else ""),
                               (g,), {g: mem}, container=container, pod=pod, cgroup=cg,
                               rss=int(9 * GiB), alive=alive,
                               start_time_s=round(world.start_wall + start_s - 3.0, 2) if start_s else 0.0)
            self.procs.append(p)
        for g in self.gpus:
            world.occ[g] = occ
        self.ctx_inv = 100 + world.rng.randrange(4000)
        self.ctx_vol = 10000 + world.rng.randrange(40000)
        self.cpu_total = world.rng.uniform(20, 900)
        self.busiest = self.cpu_total * 0.6
        self.periods = 0
        self.throttled = 0
        self.cpu_hist = {}
        self.shared_proc = {}

    def prof_for(self, phase):
        return self.profiles.get(phase, self.prof)

    def step_tick(self, i):
        w = self.w
        tick = w.tick
        t_end = (i + 1) * tick
        env = self.cpu_fn(i)
        phi = env.get("phi", 1.0)
        jit = self.jitter_fn(w.t(i)) if self.jitter_fn else (0.0, 0.0)
        launches = 0
        if self.end_s is not None and w.t(i) >= self.end_s:
            self._cpu(i, env, 0.0, 0.0)
            return
        if w.t(i) + tick <= self.start_s:
            self._cpu(i, env, 0.0, 0.0)
            return
        guard = 0
        while self.T < t_end and guard < 400:
            guard += 1
            t = self.T
            if self.end_s is not None and t >= self.end_s:
                self.T = t_end
                break
            if t < self.start_s + self.compile_s:
                # torch.compile / CUDA-graph capture: autotuning bursts between compiles
                for g in self.gpus:
                    w.add_span(g, t, t + 0.15, 0.5, w.board.hbm * 0.1, w.board.tflops * 0.2,
                               self.procs[0] if len(self.gpus) == 1 else self.procs[self.gpus.index(g)],
                               duty=w.rng.uniform(0.05, 0.6))
                self.T = t + w.rng.uniform(0.3, 1.2)
                launches += 300
                continue
            if self.duty_fn is not None and w.rng.random() > self.duty_fn(t):
                self.T = t + w.rng.uniform(0.2, 0.8)
                continue
            phase = self.phase_fn(t, self.steps)
            if isinstance(phase, tuple):  # ("ckpt", seconds): GPU idle while the host writes
                self.T = t + phase[1]
                self.ckpt_until = self.T
                continue
            prof = self.prof_for(phase)
            ds = self.data_s * self.data_slow(t)
            wait = 0.0
            if ds > 0:
                period = ds / self.workers / max(0.2, phi if env.get("loader_contended") else 1.0)
                self.ready = max(self.ready + period, t - 2 * self.workers * period)
                wait = max(0.0, self.ready - t)
            host = prof.host_s / phi
            tiny_n, tiny_d = self.tiny_fn(t) if self.tiny_fn else (0, 0.0)
            tiny_k = tiny_n * tiny_d
            tiny_host = tiny_n * 6e-6 / phi
            L = []
            comp = []
            for r, g in enumerate(self.gpus):
                f = w.speed[g]
                c = prof.step_s * (prof.comp / f + (1 - prof.comp)) * self.rank_slow(r, t)
                c *= 1 + w.rng.gauss(0, self.noise)
                other = self.shared_fn(g, t) if self.shared_fn else 0.0
                c *= 1 + other
                kern = c + tiny_k
                host_r = host + tiny_host + jit[1] * (w.rng.random() < 0.6)
                L.append(max(kern, host_r))
                comp.append((c / (1 + other), tiny_k, other))
            start = t + wait
            arrive = [start + x for x in L]
            meet = max(arrive)
            ar = prof.allreduce_s * (1 + w.rng.gauss(0, 0.05)) if len(self.gpus) > 1 else 0.0
            end = meet + ar
            ii = int(t // tick)
            for r, g in enumerate(self.gpus):
                c, tk, other = comp[r]
                p = self.procs[r]
                span = L[r]
                if span > 0:
                    duty = min(1.0, (c + tk) / span)
                    mix = c / max(1e-12, c + tk)
                    fill = prof.fill * mix + 0.03 * (1 - mix)
                    w.add_span(g, start, start + span, fill, w.board.hbm * prof.dram * mix,
                               w.board.tflops * prof.tensor * mix * w.speed[g], p, duty=duty)
                    if other > 0:
                        op = self.shared_proc.get(g)
                        w.add_span(g, start, start + span, 0.85, w.board.hbm * 0.3,
                                   w.board.tflops * 0.4, op, duty=min(1.0, other / (1 + other) * c / span))
                # NCCL: resident from arrival until the collective completes
                if len(self.gpus) > 1:
                    w.add_span(g, arrive[r], end, 0.12, w.board.hbm * 0.04, 0.0, p)
                    w.nvlink[g][min(ii, w.n - 1)] += ar * 150e9
                    self.st["nccl_wait"][r][min(ii, w.n + 63)] += meet - arrive[r]
                    self.st["slow"][min(ii, w.n + 63)] += (meet - min(arrive))
            self.st["data_wait"][min(ii, w.n + 63)] += wait
            self.st["tiny"][min(ii, w.n + 63)] += tk
            self.st["host_gap"][min(ii, w.n + 63)] += max(0.0, L[0] - comp[0][0] - comp[0][1])
            launches += prof.launches + tiny_n
            self.T = end
            self.steps += 1
            if prof.count:
                self.units += prof.units
            self.done.append((end, self.steps, self.units))
        # CPU: the launching thread is busy while it launches and (CUDA sync) spins; loader
        # workers decode batches
        ranks = len(self.gpus)
        prof = self.prof
        loader = (self.data_s * self.data_slow(w.t(i)) / max(1e-9, self._period_s())) if self.data_s else 0.0
        main = 0.95 if self.steps else 0.1
        self._cpu(i, env, main * ranks, min(loader, self.workers) * ranks)
        self.st["launches"][i] = launches
        if w.ebpf:
            pid = self.procs[0].pid
            per = launches // max(1, len(self.ebpf_apis))
            hs = [w.launch_hist(i, pid, api, per if k == 0 else per // 2, 4500 if k == 0 else 3800, jit[0])
                  for k, api in enumerate(self.ebpf_apis)]
            w.launch[i] = tuple(h for h in hs if h)
            w.offcpu[i] = int(tick * (30 + 30000 * jit[0] + 300 * (1 - phi)) * (0.8 + 0.4 * w.rng.random()))
        self.sample(i)

    def _period_s(self):
        if not self.done or len(self.done) < 2:
            return 1.0
        k = min(20, len(self.done) - 1)
        return max(1e-3, (self.done[-1][0] - self.done[-1 - k][0]) / k)

    def _cpu(self, i, env, main, loader):
        w = self.w
        phi = env.get("phi", 1.0)
        want = main + loader
        got = main * phi + loader * (phi if env.get("loader_contended") else 1.0)
        for p in self.procs:
            w.cpu(i, p, want / len(self.procs), got / len(self.procs))
        w.contended[i] = max(w.contended[i], env.get("psi", 0.0))
        w.hog[i] += env.get("hog", 0.0)
        quota = env.get("quota")
        if quota is not None:
            self.periods += int(round(w.tick * 10))
            if want > quota * 0.9:
                self.throttled += int(round(w.tick * 10 * min(1.0, 0.55 + 0.5 * (want - quota) / quota)))
        self.cpu_total += got * w.tick
        self.busiest += min(1.0, main) * phi * w.tick
        self.ctx_inv += int(w.tick * (5 + 600 * (1 - phi) + 50 * loader) * (0.7 + 0.6 * w.rng.random()))
        self.ctx_vol += int(w.tick * (800 + 200 * loader) * (0.7 + 0.6 * w.rng.random()))
        self.cpu_hist[i] = round(self.cpu_total, 2)

    def sample(self, i):
        w = self.w
        if self.counter is None:
            return
        tnow = (i + 1) * w.tick
        if tnow < self.start_s + 2 or (self.end_s is not None and tnow > self.end_s):
            w.engine_status[i] = SourceStatus(False, reason=f"{self.url}: connection refused",
                                              poll_median_s=0.002)
            return
        if self.counter and w.rng.random() < 0.01 and w.engine_samples[i - 1] is not None:
            w.engine_samples[i] = w.engine_samples[i - 1]
            w.engine_status[i] = SourceStatus(True, age_s=round(w.tick + w.rng.uniform(0.05, 0.5), 3),
                                              poll_s=1.2, poll_median_s=0.04)
            return
        steps, units = 0, 0.0
        for t, s, u in reversed(self.done):
            if t <= tnow:
                steps, units = s, u
                break
        quota = self.cpu_fn(i).get("quota")
        taken = tnow - w.rng.uniform(0.01, 0.05)
        es = EngineSample(
            kind="trainer", url=self.url, generation_tokens_total=float(units),
            requests_finished_total=float(steps), work_unit=self.counter,
            tensor_parallel=1, data_parallel=1,
            pids=tuple(p.pid for p in self.procs), time_mono_s=round(w.start_mono + taken, 6),
            time_wall_s=round(w.start_wall + taken, 6), cpu_s=self.cpu_hist.get(i),
            ctx_involuntary=self.ctx_inv, busiest_thread_cpu_s=round(self.busiest, 2),
            busiest_thread=f"{self.procs[0].pid} {self.procs[0].name[:15]}",
            cpu_quota_cores=quota, cpu_periods=self.periods if quota else None,
            cpu_throttled_periods=self.throttled if quota else None)
        w.engine_samples[i] = es
        w.engine_status[i] = SourceStatus(True, age_s=0.0, poll_s=round(0.03 + w.rng.uniform(0, 0.02), 5),
                                          poll_median_s=0.04)

    def pinned(self, i, cores):
        w = self.w
        p0 = self.procs[0]
        env = self.cpu_fn(i)
        quota = env.get("quota")
        threads = [ThreadSample(tid=p0.pid, pid=p0.pid, name=p0.name[:15], cpu_s=round(self.busiest, 2)),
                   ThreadSample(tid=p0.pid + 11, pid=p0.pid, name="pt_autograd_0", cpu_s=round(self.busiest * 0.05, 2))]
        for k in range(min(4, self.workers if self.data_s else 0)):
            threads.append(ThreadSample(tid=p0.pid + 100 + k, pid=p0.pid + 100 + k, name="pt_data_worker",
                                        cpu_s=round((self.cpu_hist.get(i, 0) - self.busiest) / max(1, self.workers), 2)))
        return PinnedSample(label=p0.cmdline[:60] + "…", root_pids=(p0.pid,),
                            tree_pids=tuple([p.pid for p in self.procs] + [p0.pid + 100 + k for k in range(self.workers if self.data_s else 0)]),
                            cpu_s=self.cpu_hist.get(i), ctx_voluntary=self.ctx_vol,
                            ctx_involuntary=self.ctx_inv, threads=tuple(threads), cores=tuple(cores),
                            cpu_pressure_some_pct=round(w.psi, 2),
                            run_queue=w.host_samples[i].run_queue if w.host_samples[i] else None,
                            listening_ports=(9400,) if self.counter else (),
                            cpu_quota_cores=quota, cpu_periods=self.periods if quota else None,
                            cpu_throttled_periods=self.throttled if quota else None)
