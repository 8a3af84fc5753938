"""A scene: one machine (GPUs, host), its processes and workloads, simulated tick by tick and
read out as gputop's collector would: NVML, /proc, the engine's page, eBPF launch probes."""
from __future__ import annotations

import math
import random
import zlib

from gputop.buckets import bucket_bounds_ns, bucket_index
from gputop.schema import (Frame, GpuSample, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from corpus_ah import pages
from corpus_ah.physics import GIB, MIB, GPM_MISSING, SPECS, CpuProc, Gpu, Host
from corpus_ah.serving import Engine, EngineCfg, arrivals
from corpus_ah.timeline import Timeline
from corpus_ah.training import Trainer

T_WALL0 = 1_790_000_000.0


def seed_of(name):
    return zlib.crc32(name.encode())


class Part:
    """A process tree on the machine: GPU memory per GPU, CPU demand, maybe an engine page."""
    kind = "cpu"

    def __init__(self, proc: CpuProc, gpus=(), mem=(), ebpf=False):
        self.proc, self.gpus, self.mem = proc, tuple(gpus), tuple(mem)
        self.demand = {g: 0.0 for g in self.gpus}
        self.ebpf = ebpf
        self.alive = lambda t: True
        self.url = None
        self.pids = ()
        self.rank_pids = ()

    def cpu_demand(self, t):
        return 0.0

    def main_demand(self, t):
        return 0.0

    def advance(self, t0, t1, scene, envs, stretch):
        pass

    def launch(self, t0, t1):
        return []  # (api, pid, count)


class CpuLoad(Part):
    def __init__(self, proc, cores):
        super().__init__(proc)
        self.cores = cores

    def cpu_demand(self, t):
        return self.cores(t)

    def main_demand(self, t):
        return min(1.0, self.cores(t))


class GpuLoad(Part):
    """A process with a duty cycle on its GPUs: notebook, ASR/TTS service, benchmark, poll loop.
    ``pattern(t) -> (duty, sm, tensor, dram)``; duty is the kernel-time fraction it wants."""
    kind = "gpu"

    def __init__(self, proc, gpus, mem, pattern, cores=0.5, launches_per_s=0):
        super().__init__(proc, gpus, mem)
        self.pattern = pattern
        self.cores = cores
        self.lps = launches_per_s
        self.rank_pids = tuple(proc.pid for _ in gpus)

    def cpu_demand(self, t):
        return self.cores if self.pattern(t)[0] > 0 else 0.05

    def main_demand(self, t):
        return min(1.0, self.cores)

    def advance(self, t0, t1, scene, envs, stretch):
        duty, sm, tensor, dram = self.pattern(t0)
        for i, g in enumerate(self.gpus):
            d = min(1.0, duty * envs[i]["share"] ** 0.3)
            if d <= 0:
                continue
            # duty spread in bursts across the tick
            nb = max(1, int((t1 - t0) * 4))
            seg = (t1 - t0) / nb
            for k in range(nb):
                a = t0 + k * seg
                scene.tl.emit(g, self.proc.pid, a, a + seg * d, sm, tensor, dram)
            self.demand[g] = d

    def launch(self, t0, t1):
        duty = self.pattern(t0)[0]
        return [("cudaLaunchKernel", self.proc.pid, int(self.lps * duty * (t1 - t0)))] if self.lps else []


class Serve(Part):
    kind = "serve"

    def __init__(self, proc, engine: Engine, mem, scrape_s=2.0, url=None, miss=0.01, api_cores=0.6):
        super().__init__(proc, engine.cfg.gpus, mem)
        self.engine = engine
        self.scrape_s = scrape_s
        self.url = url or engine.cfg.url
        self.miss = miss
        self.api_cores = api_cores
        self.next_scrape = 0.0
        self.sample = None
        self.sample_t = None
        self.status = SourceStatus(False, "no reading yet")
        self.rank_pids = engine.pids
        self.pids = (proc.pid,) + tuple(p for p in engine.pids if p != proc.pid)
        self.prev = None

    def restart(self, t, down_s, scene):
        """The engine process exits and a new one (new pid, same address) loads the model."""
        self.engine.restart(t, down_s)
        old = self.proc
        pid = scene.pid()
        self.proc = CpuProc(pid, old.name, old.cmdline, old.user, scene.start_wall + t + 1.0, old.threads,
                            container=old.container, cgroup=old.cgroup, quota=old.quota,
                            main_tid=pid + 3, rss=old.rss)
        self.engine.pids = [pid] + [pid + 7 + i for i in range(len(self.engine.pids) - 1)]
        self.rank_pids = tuple(self.engine.pids)
        self.pids = tuple(self.engine.pids)

    def cpu_demand(self, t):
        e = self.engine
        if e.down_until is not None and t < e.down_until:
            return 1.0  # loading weights
        load = self.api_cores * min(1.5, 0.2 + (len(e.running) + len(e.waiting)) / 40)
        return load + e.host_cpu_rate + 0.2 * e.cfg.tp

    def main_demand(self, t):
        return min(1.0, self.engine.host_cpu_rate + 0.05)

    def advance(self, t0, t1, scene, envs, stretch):
        e = self.engine
        env = dict(envs[0])
        env["speed"] = min(x["speed"] for x in envs)
        env["mem_speed"] = min(x["mem_speed"] for x in envs)
        env["share"] = min(x["share"] for x in envs)
        g0 = e.c["gen"]
        e.advance(t0, t1, env)
        e.host_cpu_rate = min(1.0, e.host_cpu / (t1 - t0))
        e.gen_rate = (e.c["gen"] - g0) / (t1 - t0)
        for g in self.gpus:
            self.demand[g] = e.last_demand

    def launch(self, t0, t1):
        e = self.engine
        out = []
        if e.launches[0]:
            out.append(("cudaGraphLaunch", self.rank_pids[0], e.launches[0]))
        if e.launches[1]:
            out.append(("cudaLaunchKernel", self.rank_pids[0], e.launches[1]))
        if e.launches[2]:
            out.append(("cuLaunchKernel", self.rank_pids[0], e.launches[2]))
        return out


class Train(Part):
    kind = "train"

    def __init__(self, proc, trainer: Trainer, mem, page=None, scrape_s=5.0, cores_per_worker=1.0):
        super().__init__(proc, trainer.gpus, mem)
        self.trainer = trainer
        self.url = page
        self.scrape_s = scrape_s
        self.next_scrape = 0.0
        self.sample = None
        self.sample_t = None
        self.status = SourceStatus(False, "no reading yet")
        self.miss = 0.005
        self.cpw = cores_per_worker
        self.rank_pids = trainer.pids
        self.pids = tuple(trainer.pids)

    def cpu_demand(self, t):
        tr = self.trainer
        kn = tr.knobs(t)
        w = kn.get("workers", tr.workers)
        ckpt = 3.0 if t < tr.in_ckpt_until else 0.0
        return len(self.gpus) * (1.0 + w * self.cpw * min(1.0, tr.worker_busy_frac)) + ckpt

    def main_demand(self, t):
        return 0.9

    def advance(self, t0, t1, scene, envs, stretch):
        tr = self.trainer
        b0 = tr.busy
        s0 = tr.steps
        tr.advance(t0, t1, envs, stretch)
        steps = tr.steps - s0
        kn = tr.knobs(t0)
        w = kn.get("workers", tr.workers)
        need = steps * tr.prep_s * kn.get("prep_mult", 1.0) * kn.get("io_mult", 1.0) * stretch
        tr.worker_busy_frac = min(1.0, need / max(1e-6, w * (t1 - t0)) + 0.05) if steps else 0.1
        per = (tr.busy - b0) / len(self.gpus) / (t1 - t0)
        for g in self.gpus:
            self.demand[g] = min(1.0, per)

    def launch(self, t0, t1):
        tr = self.trainer
        n = tr.launches // max(1, len(self.gpus))
        return [("cuLaunchKernel", p, n // 2) for p in tr.pids[:1]] + \
               [("cudaLaunchKernel", p, n - n // 2) for p in tr.pids[:1]]


def _norm_cdf(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def launch_hist(api, pid, count, med_us, rng, tail_frac=0.0, tail_mean_us=0.0, sigma=0.35):
    if count <= 0:
        return None
    tail = int(round(count * tail_frac + (rng.random() if tail_frac else 0)))
    tail = min(tail, count)
    body = count - tail
    buckets = {}
    lo = bucket_index(int(med_us * 1000 * math.exp(-3.2 * sigma)))
    hi = bucket_index(int(med_us * 1000 * math.exp(4.0 * sigma)))
    mu = math.log(med_us * 1000)
    placed = 0
    for i in range(lo, hi + 1):
        a, b = bucket_bounds_ns(i)
        p = _norm_cdf((math.log(b) - mu) / sigma) - _norm_cdf((math.log(max(1, a)) - mu) / sigma)
        c = int(body * p + rng.random())
        if c:
            buckets[i] = buckets.get(i, 0) + c
            placed += c
    if placed != body and buckets:
        k = bucket_index(int(med_us * 1000))
        buckets[k] = max(0, buckets.get(k, 0) + body - placed)
    if tail:
        for _ in range(min(tail, 200)):
            v = int((med_us + rng.expovariate(1 / tail_mean_us)) * 1000)
            k = bucket_index(v)
            buckets[k] = buckets.get(k, 0) + max(1, tail // min(tail, 200))
    buckets = {k: v for k, v in buckets.items() if v > 0}
    total = sum(buckets.values())
    s = sum(c * (bucket_bounds_ns(k)[0] + bucket_bounds_ns(k)[1]) // 2 for k, c in buckets.items())
    mx = max(buckets) if buckets else 0
    a, b = bucket_bounds_ns(mx)
    return LaunchHist(api=api, pid=pid, count=total, sum_ns=int(s), max_ns=int(a + (b - a) * rng.random()),
                      buckets=buckets)


class Scene:
    def __init__(self, name, gpu_model, ngpu, tick=1.0, dur=300.0, cpus=64, power_limit=None,
                 ebpf=None, start_wall=None, host_base=0.8, drop_ticks=1, ambient=26.0,
                 bus_ids=None, gpu_index0=0):
        self.name = name
        self.rng = random.Random(seed_of(name))
        self.spec = SPECS[gpu_model]
        self.gpu_model = gpu_model
        self.tick, self.dur = tick, dur
        self.n = int(round(dur / tick))
        self.gpus = [Gpu(i, self.spec, self.rng, power_limit, ambient=ambient + self.rng.uniform(-1, 2))
                     for i in range(ngpu)]
        self.host = Host(cpus, self.rng, base_load=host_base)
        self.tl = Timeline(0.0, tick, self.n, ngpu)
        self.parts: list[Part] = []
        self.knobs = []  # f(t, scene) each tick: faults on boards and host
        self.ebpf = ebpf  # None: not running; "denied": refused; True: attached
        self.pin = None
        self.start_wall = start_wall or (T_WALL0 + (seed_of(name) % 2_000_000))
        self.mono0 = 1000.0 + seed_of(name) % 500000 / 10
        self.drop = set()
        for _ in range(drop_ticks):
            self.drop.add(self.rng.randrange(30, max(31, self.n - 5)))
        self.jitter = {}  # part -> f(t) -> (p, mean_s) launch-thread preemption
        self.quota = {}
        self.pid_next = 2000 + self.rng.randrange(100000)
        self.t_boot = self.start_wall - 86400 * self.rng.uniform(3, 40)

    def pid(self):
        self.pid_next += self.rng.randrange(3, 40)
        return self.pid_next

    def proc(self, name, cmdline, user="ubuntu", threads=8, container="", quota=None, age=3600):
        pid = self.pid()
        cg = f"/system.slice/docker-{container.split(':')[1]}.scope" if container.startswith("docker:") \
            else f"/user.slice/user-1000.slice/session-{self.rng.randrange(2, 90)}.scope"
        return CpuProc(pid, name, cmdline, user, self.start_wall - age, threads,
                       cpu_s=age * 0.3 * self.rng.uniform(0.5, 1.5), container=container, cgroup=cg,
                       quota=quota, main_tid=pid + self.rng.randrange(1, 40),
                       rss=int(self.rng.uniform(1.5, 9) * GIB))

    # ------------------------------------------------------------------ workloads
    def serve(self, cfg: EngineCfg, work, *, specials=(), knobs=None, name=None, cmdline="",
              scrape_s=2.0, user="svc", container="", quota=None, miss=0.01, api_cores=0.6,
              t_start=0.0, proc_names=None):
        rng = random.Random(seed_of(self.name + cfg.url))
        reqs = arrivals(work, -30.0, self.dur + 5, rng, specials)
        kind = cfg.kind
        main = self.proc(name or {"vllm": "VLLM::EngineCore", "sglang": "sglang::scheduler",
                                  "llamacpp": "llama-server", "tgi": "text-generation-server"}[kind],
                         cmdline or f"{kind} serve {cfg.model.name}", user=user, threads=48,
                         container=container, quota=quota)
        pids = [main.pid] + [main.pid + 7 + i for i in range(cfg.tp - 1)]
        eng = Engine(cfg, reqs, rng, self.tl, pids, -30.0, knobs)
        eng.host_cpu_rate = 0.3
        # warm: run the half minute before the trace so queues and the pool are in steady state
        env = dict(speed=1.0, mem_speed=1.0, share=1.0, host_stretch=1.0)
        tl = self.tl
        eng.tl = _Null()
        t = -30.0
        while t < 0:
            eng.advance(t, t + 1.0, env)
            t += 1.0
        eng.tl = tl
        wmem = eng.wbytes + 2.2 * GIB
        mem = tuple(int(wmem + eng.num_blocks * cfg.block_size * eng.kv_bpt + (0.6 + 0.2 * i) * GIB)
                    for i in range(cfg.tp))
        part = Serve(main, eng, mem, scrape_s=scrape_s, miss=miss, api_cores=api_cores)
        part.proc_names = proc_names
        self.parts.append(part)
        return part

    def train(self, gpus, *, name="python", cmdline="torchrun train.py", mem_gib=60, page=None,
              scrape_s=5.0, user="ubuntu", container="", cores_per_worker=1.0, **kw):
        main = self.proc(name, cmdline, user=user, threads=24, container=container)
        pids = [main.pid + i * 11 for i in range(len(gpus))]
        rng = random.Random(seed_of(self.name + cmdline))
        tr = Trainer(self.tl, tuple(gpus), pids, rng, t_start=-5.0, **kw)
        tr.worker_busy_frac = 0.5
        mem = tuple(int(mem_gib * GIB * self.rng.uniform(0.98, 1.02)) for _ in gpus)
        part = Train(main, tr, mem, page=page, scrape_s=scrape_s, cores_per_worker=cores_per_worker)
        self.parts.append(part)
        return part

    def gpu_load(self, gpus, pattern, *, name="python", cmdline="python", mem_gib=10, cores=0.5,
                 user="ubuntu", container="", launches_per_s=0, age=3600):
        proc = self.proc(name, cmdline, user=user, threads=12, container=container, age=age)
        part = GpuLoad(proc, gpus, tuple(int(mem_gib * GIB) for _ in gpus), pattern, cores,
                       launches_per_s)
        self.parts.append(part)
        return part

    def cpu_load(self, cores, *, name="python", cmdline="python prep.py", user="ubuntu", threads=16,
                 age=600):
        proc = self.proc(name, cmdline, user=user, threads=threads, age=age)
        part = CpuLoad(proc, cores)
        self.parts.append(part)
        return part

    # ------------------------------------------------------------------ run
    def run(self):
        frames = []
        seq = 0
        prev_bins = None
        nproc_host = 0
        for i in range(self.n):
            t0 = i * self.tick
            t1 = t0 + self.tick
            for k in self.knobs:
                k(t0, self)
            alive = [p for p in self.parts if p.alive(t0)]
            demands = [p.cpu_demand(t0) for p in alive]
            share = self.host.update(self.tick, demands)
            for p, d in zip(alive, demands):
                stretch = 1.0 if share >= 1 else (1 / share) ** 0.85
                qfrac = 0.0
                q = p.proc.quota
                if q and d > q:
                    stretch *= (d / q) ** 1.1
                    qfrac = min(1.0, (d - q) / q * 1.5 + 0.15)
                p._stretch = stretch
                p._qfrac = qfrac
                p._used = min(d, q) if q else d * min(1.0, share)
                p._contention = max(1 - share, qfrac * 0.8)
                envs = []
                for g in p.gpus:
                    other = sum(o.demand.get(g, 0.0) for o in alive if o is not p)
                    sh = 1.0 / (1.0 + 0.95 * other) if other > 0.03 else 1.0
                    gpu = self.gpus[g]
                    env = dict(speed=gpu.speed, mem_speed=gpu.mem_speed, share=sh,
                               host_stretch=stretch)
                    jf = self.jitter.get(id(p))
                    if jf:
                        j = jf(t0)
                        if j:
                            env["jitter"] = j
                            env["single_step"] = True
                    envs.append(env)
                if p.gpus:
                    p.advance(t0, t1, self, envs, stretch)
                else:
                    p.advance(t0, t1, self, [], stretch)
            for p in alive:
                p.proc.account(self.tick, p._used, min(1.0, p.main_demand(t0)) * min(1.0, share ** 0.5),
                               p._contention, self.rng, p._qfrac)
            bins = self.tl.bins[i]
            reads = [g.update(self.tick, bins[g.index]) for g in self.gpus]
            if i in self.drop:
                continue
            frames.append(self._frame(seq, i, t1, alive, bins, reads))
            seq += 1
        return frames

    def _frame(self, seq, i, t, alive, bins, reads):
        rng = self.rng
        tw = self.start_wall + t + rng.uniform(0, 0.004)
        tm = self.mono0 + t
        s = self.spec
        gpus = []
        for g, act, (busy, sm, tensor, dram) in zip(self.gpus, bins, reads):
            occ = min(1.0, act.occ / self.tick)
            used = 0
            for p in alive:
                if g.index in p.gpus:
                    used += p.mem[p.gpus.index(g.index)]
            used += 420 * MIB if used else 0
            used = min(used, s.mem_bytes - s.reserved_bytes)
            util = round(min(100, busy * 100 + (rng.uniform(0, 1.2) if busy > 0.01 else 0)))
            nsamp = max(1, int(round(self.tick * 6)))
            samples = tuple(float(max(0, min(100, round(util + rng.gauss(0, 3 if 5 < util < 95 else 0.6)))))
                            for _ in range(nsamp))
            kw = {}
            missing = {}
            if s.gpm:
                kw = dict(sm_active_pct=round(100 * sm, 3), sm_occupancy_pct=round(100 * occ, 3),
                          dram_bw_pct=round(100 * dram, 3), tensor_pct=round(100 * tensor, 3),
                          pcie_rx_mib_per_s=round(act.pcie_rx / self.tick / MIB + rng.uniform(5, 40), 2),
                          pcie_tx_mib_per_s=round(act.pcie_tx / self.tick / MIB + rng.uniform(1, 8), 2),
                          nvlink_rx_mib_per_s=round(act.nvl / self.tick / MIB, 2) if s.nvlink_gbs else 0.0,
                          nvlink_tx_mib_per_s=round(act.nvl / self.tick / MIB * 0.98, 2) if s.nvlink_gbs else 0.0)
            else:
                missing.update(GPM_MISSING)
            if not s.fan:
                missing["fan_pct"] = "not supported on this GPU"
            gpus.append(GpuSample(
                index=g.index, name=s.name, uuid=g.uuid, util_gpu_pct=float(util),
                util_gpu_samples_pct=samples, util_mem_pct=float(round(min(100, dram * 88))),
                mem_total_bytes=s.mem_bytes, mem_used_bytes=int(used),
                mem_reserved_bytes=s.reserved_bytes, power_w=round(g.power, 3),
                temp_c=float(round(g.temp)), sm_clock_mhz=float(round(g.clock)), throttle=g.reasons,
                bus_id=g.bus_id, fan_pct=g.fan(), pstate=g.pstate, power_limit_w=float(g.power_limit),
                mem_clock_mhz=float(s.mem_clock if g.pstate == 0 else 405), ecc_corrected=g.ecc_c,
                ecc_uncorrected=0, xid_count=g.xid, xid_last=None, mig_mode=False if not s.consumer else None,
                missing=missing, **kw))
        procs = []
        for p in alive:
            for k, gi in enumerate(p.gpus):
                pid = p.rank_pids[k] if k < len(p.rank_pids) else p.proc.pid
                bp = bins[gi].byproc.get(pid, [0.0, 0.0])
                name = p.proc.name
                if getattr(p, "proc_names", None):
                    name = p.proc_names[k]
                elif isinstance(p, Serve) and p.engine.cfg.kind == "vllm" and p.engine.cfg.tp > 1:
                    name = f"VLLM::Worker_TP{k}"
                elif isinstance(p, Serve) and p.engine.cfg.kind == "sglang":
                    name = f"sglang::scheduler_TP{k}"
                procs.append(ProcSample(
                    pid=pid, gpu_index=gi, name=name, cmdline=p.proc.cmdline, user=p.proc.user,
                    ppid=p.proc.pid if pid != p.proc.pid else 1, start_time_s=round(p.proc.start, 2),
                    mem_bytes=p.mem[k], sm_util_pct=float(round(min(100, 100 * bp[0] / self.tick))),
                    mem_util_pct=float(round(min(100, 88 * bp[1] / self.tick))),
                    cpu_s=round(p.proc.cpu_s / max(1, len(p.gpus)), 2), rss_bytes=p.proc.rss,
                    container=p.proc.container, cgroup=p.proc.cgroup))
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + rng.uniform(0, 0.003), 6)),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.0009),
                   "procfs": SourceStatus(True, detail="/proc", age_s=0.0, poll_s=0.0004)}
        # engine page
        engine = None
        for p in alive:
            if not p.url:
                continue
            if t + 1e-9 >= p.next_scrape:
                p.next_scrape = t + p.scrape_s
                down = isinstance(p, Serve) and p.engine.down_until is not None and t < p.engine.down_until
                if down:
                    p.sample, p.status = None, SourceStatus(False, f"{p.url}: connection refused")
                elif rng.random() < p.miss:
                    p.sample, p.status = None, SourceStatus(False, f"{p.url}: timed out after 2.0 s")
                else:
                    if isinstance(p, Serve):
                        text = pages.render(p.engine)
                        tp = p.engine.cfg.tp
                    else:
                        tr = p.trainer
                        text = pages.render_trainer(tr.tokens, tr.samples, tr.done_steps)
                        tp = None
                    lag = rng.uniform(0.003, 0.03)
                    p.sample = pages.to_sample(text, p.url, tm - lag, tw - lag, tp=tp if tp else 1,
                                               pids=p.pids, proc=p.proc)
                    p.sample_t = t - lag
                    p.status = SourceStatus(True, age_s=0.0, poll_s=round(lag, 4))
            if p.sample is not None:
                engine = p.sample
                sources["engine"] = SourceStatus(True, age_s=round(t - p.sample_t, 3),
                                                 poll_s=p.status.poll_s)
            else:
                sources["engine"] = p.status
            break
        # eBPF launch probes
        launch = ()
        offcpu = None
        if self.ebpf is True:
            hs = []
            offcpu = 0
            for p in alive:
                jf = self.jitter.get(id(p))
                j = jf(t - self.tick) if jf else None
                hits = getattr(getattr(p, "engine", None), "jit_hits", 0) or \
                    getattr(getattr(p, "trainer", None), "jit_hits", 0)
                contention = p._contention
                for api, pid, count in p.launch(t - self.tick, t):
                    med = {"cudaGraphLaunch": 11.0, "cudaLaunchKernel": 4.2, "cuLaunchKernel": 3.1}[api]
                    med *= 1 + 0.6 * contention
                    frac = 0.0004 + 0.02 * contention
                    mean = 40.0 + 600 * contention
                    if j:
                        frac = max(frac, j[0] * 0.5 + hits / max(1, count))
                        mean = max(mean, j[1] * 1e6 * 0.6)
                    h = launch_hist(api, pid, count, med, rng, min(0.3, frac), mean)
                    if h:
                        hs.append(h)
                offcpu += int(self.tick * (3 + 400 * contention)) + hits * 2
            launch = tuple(hs)
            sources["ebpf"] = SourceStatus(True, detail="uprobes: libcudart.so.12, libcuda.so.1",
                                           age_s=0.0, poll_s=0.0011)
        elif self.ebpf == "denied":
            sources["ebpf"] = SourceStatus(False, "needs root (CAP_BPF and CAP_PERFMON)")
        host = HostSample(cpu_pct=round(self.host.cpu_pct + rng.uniform(-0.5, 0.5), 1),
                          offcpu_switches=offcpu,
                          cpu_pressure_some_pct=round(max(0.0, self.host.psi), 2),
                          run_queue=self.host.run_queue, cpus=self.host.cpus,
                          ctx_switches_total=self.host.ctxt)
        pinned = None
        if self.pin is not None and self.pin in alive:
            p = self.pin
            sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.03)
            pinned = PinnedSample(label=p.proc.cmdline[:60], root_pids=(p.proc.pid,), tree_pids=p.pids or (p.proc.pid,),
                                  cpu_s=round(p.proc.cpu_s, 2), ctx_voluntary=p.proc.vol,
                                  ctx_involuntary=p.proc.invol,
                                  threads=(ThreadSample(p.proc.main_tid, p.proc.pid, p.proc.name[:15], round(p.proc.main_cpu_s, 2)),
                                           ThreadSample(p.proc.pid, p.proc.pid, p.proc.name[:15], round(p.proc.cpu_s * 0.1, 2))),
                                  cores=tuple(range(self.host.cpus)),
                                  cpu_pressure_some_pct=round(self.host.psi, 2), run_queue=self.host.run_queue,
                                  cpu_quota_cores=p.proc.quota,
                                  cpu_periods=p.proc.periods if p.proc.quota else None,
                                  cpu_throttled_periods=p.proc.throttled if p.proc.quota else None)
        return Frame(seq=seq, time_wall_s=round(tw, 6), time_mono_s=round(tm, 6), gpus=tuple(gpus),
                     processes=tuple(procs), engine=engine, launch=launch, host=host, pinned=pinned,
                     sources=sources)


class _Null:
    def emit(self, *a, **k):
        pass

    def io(self, *a, **k):
        pass
