"""One machine over time: its GPUs, the processes on them, the host, the pinned process
tree, eBPF launch latencies and the engine's scrape, composed into one Frame per tick.

A scenario supplies ``mods(t)`` (t in seconds since the trace began): what the world does
to the workloads at that moment (CPU share, another context's GPU time, cooling, power
limit, launch delays, draft acceptance, DataLoader speed...).  Everything measured comes
out of the simulators; nothing in a frame is written from the scenario's label.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
from dataclasses import dataclass, field

from gputop.buckets import bucket_bounds_ns, bucket_index
from gputop.schema import (EngineHistogram, EngineSample, Frame, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)

from .hw import SPECS, Activity, GpuState, uuid_for
from .serving import Engine, Env
from .training import TEnv, Trainer


def seed_of(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


# ------------------------------------------------------------------------- processes
@dataclass
class Thread:
    tid: int
    pid: int
    name: str
    role: str  # main | api | worker | autograd | loader | misc
    share: float = 1.0  # of its role's CPU
    cpu_s: float = 0.0


@dataclass
class Proc:
    pid: int
    name: str
    cmdline: str
    gpu: int | None = None  # holds a context on this GPU
    mem: int = 0
    ppid: int = 1
    user: str = "svc"
    start_time: float = 0.0
    rss: int = 2 * 2**30
    cpu_s: float = 0.0
    container: str = ""
    cgroup: str = ""
    visible: bool = True  # in our /proc (False: another container)


@dataclass
class Unit:
    name: str
    sim: object  # Engine | Trainer | EngineGroup | Hog | None
    procs: list[Proc]
    threads: list[Thread]
    pinned: bool = False
    cores: tuple = ()
    ports: tuple = ()
    start: float = -1e18
    end: float = 1e18
    ctx_vol: int = 0
    ctx_inv: int = 0
    last: dict = field(default_factory=dict)

    def alive(self, t: float) -> bool:
        return self.start <= t < self.end


class Hog:
    """Another process on a GPU: ``demand(t)`` of its time when it can get it."""

    def __init__(self, gpu: int, demand, sm=0.9, tensor=0.6, dram=0.2, occ=0.15, fair=0.5):
        self.gpu, self.demand, self.sm, self.tensor, self.dram, self.occ = gpu, demand, sm, tensor, dram, occ
        self.fair = fair


class EngineGroup:
    """Data-parallel engines behind one port (vLLM's engine label, SGLang's dp_rank)."""

    def __init__(self, engines: list[Engine], label: str = "engine"):
        self.engines, self.label = engines, label
        self.kind = engines[0].kind
        self.gpus = [g for e in engines for g in e.gpus]

    @property
    def up(self):
        return self.engines[0].up


# ------------------------------------------------------------------------- eBPF launch
LAUNCH_BODY = {"cudaLaunchKernel": (3.6e-6, 0.32), "cuLaunchKernel": (2.9e-6, 0.30),
               "cudaGraphLaunch": (11.5e-6, 0.28)}


def _lognorm_cdf(x: float, median: float, sigma: float) -> float:
    if x <= 0:
        return 0.0
    return 0.5 * (1 + math.erf(math.log(x / median) / (sigma * math.sqrt(2))))


def launch_hist(api: str, pid: int, count: int, rng: random.Random, tail_p: float, tail_s: float,
                body_mult: float = 1.0) -> LaunchHist | None:
    if count <= 0:
        return None
    med, sig = LAUNCH_BODY[api]
    med *= body_mult
    n_tail = count * tail_p
    comps = [(count - n_tail, med, sig)]
    if n_tail > 0.01:
        comps.append((n_tail, tail_s, 0.5))
    buckets: dict[int, int] = {}
    total_sum = 0.0
    assigned = 0
    for n, m, s in comps:
        lo, hi = bucket_index(int(m / 12 * 1e9)), bucket_index(int(m * 14 * 1e9))
        for idx in range(lo, hi + 1):
            a, b = bucket_bounds_ns(idx)
            p = _lognorm_cdf(b * 1e-9, m, s) - _lognorm_cdf(a * 1e-9, m, s)
            expect = n * p
            k = int(expect)
            if rng.random() < expect - k:
                k += 1
            if k:
                buckets[idx] = buckets.get(idx, 0) + k
                assigned += k
                total_sum += k * (a + b) / 2
    if not assigned:
        idx = bucket_index(int(med * 1e9))
        buckets[idx] = count
        assigned = count
        total_sum = count * med * 1e9
    top = max(buckets)
    a, b = bucket_bounds_ns(top)
    return LaunchHist(api=api, pid=pid, count=assigned, sum_ns=int(total_sum),
                      max_ns=int(a + (b - a) * rng.random()), buckets=buckets)


# ------------------------------------------------------------------------- the world
DEFAULT_MODS = dict(cpu_avail=1.0, api_avail=1.0, worker_avail=1.0, psi=None, rq_add=0,
                    host_cpu_add=0.0, invol_rate=None, share={}, r_mult={}, brake={},
                    power_limit={}, jitter=(0.0, 0.0), spec_p=0.0, rank_factor={}, io_mult=1.0,
                    cpu_mult=1.0, mode="train", tiny_s=0.0, kernels_mult=1.0, eager=False,
                    host_mult=1.0, offcpu_rate=None, scrape_slow=0.0, rq_pin=None, jitter_rank={})


class World:
    def __init__(self, name: str, gpu: str, n_gpus: int, duration: float, tick: float, *,
                 cpus: int = 64, base_cores: float = 1.2, base_psi: float = 0.4, base_rq: int = 3,
                 ebpf: bool = False, base_switch_rate: float = 12000.0, mem_extra: dict | None = None,
                 warm: float = 45.0):
        self.name = name
        self.rng = random.Random(seed_of(name))
        self.spec = SPECS[gpu]
        self.duration, self.tick = duration, tick
        self.start_wall = 1796400000.0 + (seed_of(name + "/t") % 4_000_000) + 0.0031
        self.mono0 = 1000.0 + (seed_of(name + "/m") % 500000) / 10.0
        self.gpus = [GpuState(self.spec, i, uuid_for(random.Random(seed_of(name + f"/uuid{i}"))),
                              random.Random(seed_of(name + f"/gpu{i}")))
                     for i in range(n_gpus)]
        for i, extra in (mem_extra or {}).items():
            self.gpus[i].mem_extra = extra
        self.cpus, self.base_cores, self.base_psi, self.base_rq = cpus, base_cores, base_psi, base_rq
        self.ebpf = ebpf
        self.warm = warm  # simulated before the first frame, so the trace opens in steady state
        self.uptime = self.rng.uniform(30.0, 400.0)  # cumulative counters = warm-up x this
        self.units: list[Unit] = []
        self.mods = lambda t: {}
        self.gaps: list[tuple[float, float]] = []
        self.restarts: list[dict] = []
        self.switches = int(self.rng.uniform(2e8, 9e8))
        self.switch_rate = base_switch_rate
        self.psi = base_psi
        self.psi_shown = base_psi
        self.last_engine: EngineSample | None = None
        self.last_engine_t = 0.0

    # -- building
    def add(self, unit: Unit) -> Unit:
        self.units.append(unit)
        return unit

    def restart(self, unit: Unit, down: float, up: float, ready: float, new_pid: int):
        """The engine's process exits at ``down``; a new one starts at ``up`` (loading
        weights, profiling, capturing graphs) and answers /metrics from ``ready``."""
        self.restarts.append(dict(unit=unit, down=down, up=up, ready=ready, pid=new_pid,
                                  done_down=False, done_up=False, done_ready=False))

    # -- running
    def frames(self) -> list[Frame]:
        """Warm up unrecorded, age the cumulative counters as if the processes had been up
        for hours, then one frame per tick."""
        for i in range(-int(round(self.warm / self.tick)), 0):
            self._tick(i)
        self._age()
        for g in self.gpus:
            g.tick_no = 0  # gputop starts here: GPM has no earlier sample
        out = []
        n = int(round(self.duration / self.tick))
        for i in range(n):
            out.append(self._tick(i))
        return out

    def _age(self):
        f = self.uptime
        for u in self.units:
            for th in u.threads:
                th.cpu_s *= f
            u.ctx_vol, u.ctx_inv = int(u.ctx_vol * f), int(u.ctx_inv * f)
            sims = u.sim.engines if isinstance(u.sim, EngineGroup) else [u.sim]
            for s in sims:
                if isinstance(s, Engine):
                    for k in s.c:
                        s.c[k] = s.c[k] * f if k.endswith("_s") else float(round(s.c[k] * f))
                    for h in s.h.values():
                        h.counts = [c * f for c in h.counts]
                        h.count *= f
                        h.sum *= f
                elif isinstance(s, Trainer):
                    s.steps = float(round(s.steps * f))
                    s.done_work = s.steps * s.work

    def _mods(self, t: float) -> dict:
        m = dict(DEFAULT_MODS)
        m.update(self.mods(t))
        return m

    def _tick(self, i: int) -> Frame:
        rng, tick = self.rng, self.tick
        t0 = i * tick  # the interval [t0, t0+tick) ends at this frame
        t1 = t0 + tick
        m = self._mods(t0)
        for rs in self.restarts:
            self._restart_step(rs, t0)
        # GPU-side modifiers
        for g in self.gpus:
            g.r_mult = m["r_mult"].get(g.index, 1.0)
            g.brake = bool(m["brake"].get(g.index, False))
            g.power_limit = m["power_limit"].get(g.index, self.spec.tdp)
        # other contexts (hogs) on each GPU
        hog_share: dict[int, float] = {}
        for u in self.units:
            if isinstance(u.sim, Hog) and u.alive(t0):
                d = u.sim.demand(t0)
                hog_share[u.sim.gpu] = max(hog_share.get(u.sim.gpu, 0.0), min(u.sim.fair, d))
        for k, v in m["share"].items():
            hog_share[k] = max(hog_share.get(k, 0.0), v)
        clk = {g.index: g.clock_factor for g in self.gpus}
        n_sl = max(1, int(round(tick / 0.2)))
        acts = {g.index: Activity(busy=[0.0] * n_sl) for g in self.gpus}
        per_unit_busy: dict[tuple, float] = {}
        results = {}
        for u in self.units:
            if not u.alive(t0) or u.sim is None or isinstance(u.sim, Hog):
                continue
            res = self._advance(u, t0, tick, m, clk, hog_share)
            results[u.name] = res
            for g, a in res["acts"].items():
                acts[g].add(a)
                per_unit_busy[(u.name, g)] = sum(a.busy) / len(a.busy)
        for u in self.units:
            if isinstance(u.sim, Hog) and u.alive(t0):
                h = u.sim
                d = h.demand(t0)
                a = acts[h.gpu]
                busy = [min(d, max(0.0, 1.0 - b)) if d > 0 else 0.0 for b in a.busy]
                bmean = sum(busy) / len(busy)
                a.add(Activity(busy=busy, sm=bmean * h.sm, occ=bmean * h.occ, dram=bmean * h.dram,
                               tensor=bmean * h.tensor, ctx=True))
                per_unit_busy[(u.name, h.gpu)] = bmean
            elif u.alive(t0) and u.sim is None:
                for p in u.procs:
                    if p.gpu is not None:
                        acts[p.gpu].ctx = True
        # GPUs
        mem = {g.index: 0 for g in self.gpus}
        nproc = {g.index: 0 for g in self.gpus}
        for u in self.units:
            if not u.alive(t0):
                continue
            for p in u.procs:
                if p.gpu is not None and p.mem > 0:
                    mem[p.gpu] += p.mem
                    nproc[p.gpu] += 1
                    acts[p.gpu].ctx = True
        gpu_samples = []
        for g in self.gpus:
            used = mem[g.index] + (12 * 2**20 if nproc[g.index] else 0)
            gpu_samples.append(g.sample(acts[g.index], used, tick))
        t_wall = self.start_wall + t1 + rng.uniform(-0.002, 0.004)
        mono = self.mono0 + t1
        # processes, CPU, host
        procs, pinned, engine, launch = [], None, None, []
        unit_cpu = 0.0
        for u in self.units:
            if not u.alive(t0):
                continue
            res = results.get(u.name)
            cpu = self._charge_cpu(u, res, tick, m)
            unit_cpu += cpu
            for p in u.procs:
                if p.gpu is None or p.mem <= 0 or not self._proc_alive(u, p):
                    continue
                b = per_unit_busy.get((u.name, p.gpu), 0.0)
                sm_u = self._proc_sm(b, nproc[p.gpu], gpu_samples[p.gpu].util_gpu_pct)
                if not p.visible:
                    procs.append(ProcSample(pid=p.pid, gpu_index=p.gpu, mem_bytes=p.mem, sm_util_pct=sm_u))
                    continue
                procs.append(ProcSample(
                    pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline, user=p.user,
                    ppid=p.ppid, start_time_s=round(self.start_wall + p.start_time, 2), mem_bytes=p.mem,
                    sm_util_pct=sm_u, cpu_s=round(p.cpu_s, 2), rss_bytes=p.rss, container=p.container,
                    cgroup=p.cgroup or f"/system.slice/{u.name}.service", mem_util_pct=0.0 if sm_u is not None else None))
            if u.pinned:
                pinned = self._pinned(u, m)
                engine = self._engine(u, t_wall, mono, t0, m)
                if self.ebpf and res is not None:
                    launch = self._launch(u, res, m)
        host = self._host(unit_cpu, m, tick, t0)
        if pinned is not None:
            rq_pin = m.get("rq_pin")
            rq_pin = rq_pin if rq_pin is not None else 1 + (1 if rng.random() < 0.35 else 0)
            pinned = PinnedSample(**{**_fields(pinned), "cpu_pressure_some_pct": host.cpu_pressure_some_pct,
                                     "run_queue": int(rq_pin)})
        sources = {"nvml": SourceStatus(ok=True, age_s=0.0, poll_s=round(0.004 + 0.0009 * len(self.gpus) + rng.uniform(0, 0.002), 6),
                                        poll_median_s=0.005 + 0.0009 * len(self.gpus)),
                   "host": SourceStatus(ok=True, age_s=0.0, poll_s=round(rng.uniform(0.0007, 0.0012), 6), poll_median_s=0.0009),
                   "procfs": SourceStatus(ok=True, detail="/proc", age_s=0.0, poll_s=round(rng.uniform(0.00015, 0.0003), 6), poll_median_s=0.0002)}
        if any(u.pinned for u in self.units):
            sources["pin"] = SourceStatus(ok=True, age_s=0.0, poll_s=round(rng.uniform(0.01, 0.02), 6), poll_median_s=0.014)
            sources["engine"] = self._engine_status
        if self.ebpf:
            sources["launch"] = SourceStatus(ok=True, detail="uprobes: libcudart.so.12, libcuda.so.1",
                                             age_s=0.0, poll_s=round(rng.uniform(0.001, 0.003), 6), poll_median_s=0.002)
        return Frame(seq=i + 1, time_wall_s=t_wall, time_mono_s=mono, gpus=tuple(gpu_samples),
                     processes=tuple(procs), engine=engine, launch=tuple(launch), host=host,
                     pinned=pinned, sources=sources)

    # -- pieces
    def _advance(self, u: Unit, t0: float, tick: float, m: dict, clk: dict, share: dict) -> dict:
        sim = u.sim
        if isinstance(sim, Trainer):
            env = TEnv(clk=clk, rank_factor=m["rank_factor"], cpu_avail=_scalar(m["cpu_avail"]),
                       worker_avail=m["worker_avail"], io_mult=m["io_mult"], cpu_mult=m["cpu_mult"],
                       mode=m["mode"], tiny_s=m["tiny_s"], jitter_p=m["jitter"][0],
                       jitter_s=m["jitter"][1], host_mult=m["host_mult"], share=share)
            return sim.advance(t0, tick, env, -self.warm)
        engines = sim.engines if isinstance(sim, EngineGroup) else [sim]
        res = dict(acts={}, cpu=dict(main=0.0, api=0.0, workers=0.0),
                   launches=dict(graph=0.0, kernel=0.0, driver=0.0, steps=0.0), active=0.0)
        for e in engines:
            env = Env(clk=clk, share=share, cpu_avail=_scalar(m["cpu_avail"]), api_avail=m["api_avail"],
                      jitter_p=m["jitter"][0], jitter_s=m["jitter"][1],
                      spec_p=_per(m["spec_p"], e.gpus[0]), rank_factor=m["rank_factor"],
                      kernels_mult=_per(m["kernels_mult"], e.gpus[0], 1.0), eager=m["eager"],
                      jitter_rank=m["jitter_rank"])
            if isinstance(m["cpu_avail"], dict):
                env.cpu_avail = _per(m["cpu_avail"], e.gpus[0], 1.0)
            r = e.advance(t0, tick, env)
            res["acts"].update(r["acts"])
            for k in res["cpu"]:
                res["cpu"][k] += r["cpu"][k]
            for k in res["launches"]:
                res["launches"][k] += r["launches"][k]
            res["active"] += r["active"]
        return res

    def _proc_alive(self, u: Unit, p: Proc) -> bool:
        return p.mem > 0

    def _proc_sm(self, busy: float, n_on_gpu: int, util: float | None) -> float | None:
        rng = self.rng
        if n_on_gpu <= 1:
            v = round(100 * busy + rng.gauss(0, 2.5)) if busy > 0.003 else 0
            return float(max(0, min(100, v)))
        if rng.random() < 0.15:
            return None
        v = 20 * round(5 * busy + rng.uniform(-0.5, 0.5))
        return float(max(0, min(100, v)))

    def _charge_cpu(self, u: Unit, res: dict | None, tick: float, m: dict) -> float:
        """Spread the CPU seconds a unit used over its threads and processes."""
        rng = self.rng
        cpu = dict(res["cpu"]) if res else {}
        if isinstance(u.sim, Hog) or u.sim is None:
            cpu = {"main": 0.02 * tick}
        total = 0.0
        for th in u.threads:
            got = cpu.get(th.role, 0.0) * th.share
            if th.role == "misc":
                got = 0.004 * tick * th.share
            got *= 1 + rng.gauss(0, 0.01)
            got = max(0.0, got)
            th.cpu_s += got
            total += got
        for p in u.procs:
            p.cpu_s = sum(th.cpu_s for th in u.threads if th.pid == p.pid)
        inv = m["invol_rate"]
        inv_rate = inv if inv is not None else 0.6 + 2.5 * max(0.0, 1 - _scalar(m["cpu_avail"]))
        u.ctx_inv += int(inv_rate * tick + rng.random())
        u.ctx_vol += int((180 + 40 * len(u.threads)) * tick * rng.uniform(0.9, 1.1))
        return total / tick

    def _pinned(self, u: Unit, m: dict) -> PinnedSample:
        top = sorted(u.threads, key=lambda th: -th.cpu_s)[:24]
        alive_pids = [p.pid for p in u.procs if self._proc_alive(u, p) or p.gpu is None]
        return PinnedSample(label=u.procs[0].cmdline[:60] + ("…" if len(u.procs[0].cmdline) > 60 else ""),
                            root_pids=(u.procs[0].pid,), tree_pids=tuple(alive_pids),
                            cpu_s=round(sum(th.cpu_s for th in u.threads), 2),
                            ctx_voluntary=u.ctx_vol, ctx_involuntary=u.ctx_inv,
                            threads=tuple(ThreadSample(tid=th.tid, pid=th.pid, name=th.name, cpu_s=round(th.cpu_s, 2)) for th in top),
                            cores=u.cores, listening_ports=u.ports)

    _engine_status = SourceStatus(ok=True)

    def _engine(self, u: Unit, t_wall: float, mono: float, t0: float, m: dict) -> EngineSample | None:
        rng = self.rng
        sim = u.sim
        if isinstance(sim, Hog) or sim is None:
            return None
        up = sim.up
        in_gap = any(a <= t0 < b for a, b in self.gaps)
        slow = m["scrape_slow"]
        if not up or in_gap:
            age = t_wall - self.last_engine_t if self.last_engine is not None else None
            if up and self.last_engine is not None and age is not None and age <= 3.0 * self.tick + 0.5:
                self._engine_status = SourceStatus(ok=True, age_s=round(age, 3), poll_s=2.0, poll_median_s=0.03)
                return self.last_engine
            reason = "timed out after 2.0 s" if up else "connection refused"
            self._engine_status = SourceStatus(ok=False, reason=reason, poll_s=2.0 if up else 0.001,
                                               poll_median_s=0.03)
            return None
        lat = rng.uniform(0.012, 0.045) + (rng.expovariate(1 / slow) if slow else 0.0)
        if lat > 0.9 * self.tick and self.last_engine is not None:
            # the answer comes after the tick: the previous reading is carried, aged
            age = t_wall - self.last_engine_t
            self._engine_status = SourceStatus(ok=True, age_s=round(age, 3), poll_s=round(lat, 6), poll_median_s=0.03)
            return self.last_engine
        lat = min(lat, 0.9 * self.tick)
        cpu = self._engine_cpu(u)
        pids = tuple(p.pid for p in u.procs if self._proc_alive(u, p) or p.gpu is None)
        if isinstance(sim, EngineGroup):
            sample = self._group_sample(sim, t_wall + lat, mono + lat, pids, cpu, u)
        else:
            sample = sim.sample(round(t_wall + lat, 6), round(mono + lat, 6), pids, cpu)
        self.last_engine, self.last_engine_t = sample, t_wall + lat
        self._engine_status = SourceStatus(ok=True, age_s=0.0, poll_s=round(lat, 6), poll_median_s=0.03)
        return sample

    def _engine_cpu(self, u: Unit) -> dict:
        top = max(u.threads, key=lambda th: th.cpu_s)
        return dict(cpu_s=round(sum(th.cpu_s for th in u.threads), 2), ctx_inv=u.ctx_inv,
                    busiest=round(top.cpu_s, 2), busiest_name=f"{top.tid} {top.name}")

    def _group_sample(self, grp: EngineGroup, t_wall, mono, pids, cpu, u: Unit) -> EngineSample:
        reps = []
        for i, e in enumerate(grp.engines):
            rp = tuple(p.pid for p in u.procs if p.gpu in e.gpus)
            s = e.sample(round(t_wall, 6), round(mono, 6), rp, {})
            reps.append(EngineSample(**{**_fields(s), "replica": f"model_name={e.model.name},{grp.label}={i}",
                                        "gpu_indices": tuple(e.gpus), "time_wall_s": None, "time_mono_s": None,
                                        "cpu_s": None, "ctx_involuntary": None, "busiest_thread_cpu_s": None,
                                        "busiest_thread": ""}))
        first = reps[0]
        add = lambda name: float(sum(getattr(r, name) or 0.0 for r in reps)) if getattr(first, name) is not None else None
        hists = []
        for j, h in enumerate(first.histograms):
            cum = [sum(r.histograms[j].cumulative[k] for r in reps) for k in range(len(h.cumulative))]
            hists.append(EngineHistogram(name=h.name, upper_bounds=h.upper_bounds, cumulative=tuple(cum),
                                         count=sum(r.histograms[j].count for r in reps),
                                         sum=round(sum(r.histograms[j].sum for r in reps), 6)))
        kw = _fields(first)
        for name in ("generation_tokens_total", "prompt_tokens_total", "prompt_tokens_cached_total",
                     "requests_finished_total", "requests_running", "requests_waiting", "preemptions_total",
                     "retracted_requests_total", "retracted_input_tokens_total", "prefill_seconds_total",
                     "decode_seconds_total", "forward_seconds_total", "spec_drafts_total",
                     "spec_draft_tokens_total", "spec_accepted_tokens_total", "kv_used_tokens",
                     "kv_free_tokens", "kv_evictable_tokens", "corrupted_requests_total", "decode_steps_total"):
            kw[name] = add(name)
        if first.kv_usage_ratio is not None:
            kw["kv_usage_ratio"] = sum(r.kv_usage_ratio for r in reps) / len(reps)
        kw["waiting_by_reason"] = {k: sum(r.waiting_by_reason.get(k, 0.0) for r in reps) for k in first.waiting_by_reason}
        kw.update(histograms=tuple(hists), replicas=tuple(reps), replica="", gpu_indices=(),
                  data_parallel=len(reps), time_wall_s=round(t_wall, 6), time_mono_s=round(mono, 6), pids=pids,
                  cpu_s=cpu["cpu_s"], ctx_involuntary=cpu["ctx_inv"], busiest_thread_cpu_s=cpu["busiest"],
                  busiest_thread=cpu["busiest_name"])
        return EngineSample(**kw)

    def _launch(self, u: Unit, res: dict, m: dict) -> list[LaunchHist]:
        """Host-side durations of the launch calls of each process holding a GPU."""
        rng = self.rng
        out = []
        launchers = [p for p in u.procs if p.gpu is not None and p.mem > 0] or u.procs[:1]
        la = res["launches"]
        for p in launchers:
            jp, js = m["jitter_rank"].get(p.gpu, m["jitter"]) if p.gpu is not None else m["jitter"]
            avail = _per(m["cpu_avail"], p.gpu, 1.0)
            # one preemption of the launching thread delays the one call in flight: about a
            # third of the per-step delay probability shows up per call
            tail_p = 0.0004 + 0.3 * jp + 0.01 * max(0.0, 1 - avail)
            tail_s = js if jp else 0.0006 + 0.004 * max(0.0, 1 - avail)
            for api, key in (("cudaLaunchKernel", "kernel"), ("cuLaunchKernel", "driver"), ("cudaGraphLaunch", "graph")):
                n = int(la.get(key, 0.0) / len(launchers) + rng.random())
                h = launch_hist(api, p.pid, n, rng, tail_p if api != "cudaGraphLaunch" else min(1.0, tail_p * 3), tail_s)
                if h is not None:
                    out.append(h)
        return out

    def _host(self, unit_cpu: float, m: dict, tick: float, t0: float) -> HostSample:
        rng = self.rng
        cores = self.base_cores + unit_cpu + m["host_cpu_add"] + rng.gauss(0, 0.05)
        cpu_pct = max(0.0, min(100.0, 100 * cores / self.cpus))
        inst = m["psi"] if m["psi"] is not None else self.base_psi * rng.uniform(0.5, 1.6)
        # /proc/pressure avg10 is an exponential average refreshed every 2 s
        self.psi += (inst - self.psi) * (1 - math.exp(-tick / 10.0))
        if int(t0) % 2 == 0 or self.tick >= 2:
            self.psi_shown = round(max(0.0, self.psi), 2)
        rq = self.base_rq + int(m["rq_add"]) + (1 if rng.random() < 0.2 else 0)
        self.switches += int((self.switch_rate + 900 * m["rq_add"]) * tick * rng.uniform(0.95, 1.05))
        off = None
        if self.ebpf:
            rate = m["offcpu_rate"] if m["offcpu_rate"] is not None else 6 + 40 * max(0.0, 1 - _scalar(m["cpu_avail"]))
            off = int(rate * tick * rng.uniform(0.8, 1.2))
        return HostSample(cpu_pct=round(cpu_pct, 1), offcpu_switches=off, cpu_pressure_some_pct=self.psi_shown,
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=self.switches)

    def _restart_step(self, rs: dict, t: float):
        u = rs["unit"]
        engines = u.sim.engines if isinstance(u.sim, EngineGroup) else [u.sim]
        if not rs["done_down"] and t >= rs["down"]:
            rs["done_down"] = True
            for e in engines:
                e.stop()
            for p in u.procs:
                if p.gpu is not None:
                    p._full = p.mem
                    p.mem = 0
        if not rs["done_up"] and t >= rs["up"]:
            rs["done_up"] = True
            for k, p in enumerate([p for p in u.procs if p.gpu is not None]):
                p.pid = rs["pid"] + k
                p.start_time = t
                p.cpu_s = 0.0
            for th in u.threads:
                if th.role in ("main", "workers"):
                    th.cpu_s = 0.0
        if rs["done_up"] and not rs["done_ready"]:
            # loading: memory grows as weights arrive, then the KV pool is allocated at once
            frac = min(1.0, (t - rs["up"]) / max(1.0, (rs["ready"] - rs["up"]) * 0.6))
            for p in u.procs:
                if p.gpu is not None:
                    w = engines[0].W
                    p.mem = int(w * frac + 0.6 * 2**30) if frac < 1 else p._full
        if not rs["done_ready"] and t >= rs["ready"]:
            rs["done_ready"] = True
            for p in u.procs:
                if p.gpu is not None:
                    p.mem = p._full
            for e in engines:
                e.start(t)


def _scalar(value) -> float:
    return min(value.values()) if isinstance(value, dict) and value else (1.0 if isinstance(value, dict) else value)


def _per(value, gpu, default=0.0):
    return value.get(gpu, value.get("default", default)) if isinstance(value, dict) else value


def _fields(obj) -> dict:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
