"""One machine: its GPUs as NVML reads them, its host as /proc reads it, and the frames
gputop's collector would write.  Workload simulations (serve.py, train.py) add GPU activity
(kernel time, SM/tensor/DRAM activity) and CPU demand; the GPU's power, clock, temperature
and throttle reasons follow from that activity here, tick by tick, and feed back into the
workload through ``clock()``."""
from __future__ import annotations

import dataclasses
import math
import random
import zlib
from dataclasses import dataclass, field


from gputop.buckets import bucket_index
from gputop.schema import (Frame, GpuSample, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)
from corpus_aj.hw import SPECS, MiB

BOOT_MONO = 86400.0 * 3 + 1234.5


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


@dataclass
class Proc:
    pid: int
    name: str
    cmdline: str
    gpus: tuple[int, ...]
    user: str = "svc-rl"
    ppid: int = 1
    start_time_s: float = 0.0
    t_start: float = -1e9
    t_end: float = 1e18
    mem: dict = field(default_factory=dict)       # gpu -> bytes (set by set_mem)
    rss: int = 8 * 2**30
    container: str = ""
    cgroup: str = ""
    slurm_job: str = ""
    slurm_step: str = ""
    in_tree: bool = True                            # part of the pinned tree
    cpu_s: float = 0.0
    base_cpu: float = 0.3                           # cores it burns beside what sims add


class Host:
    """CPU side: the job's tree on its cpuset, other tenants, a quota, interrupt storms."""

    def __init__(self, cpus: int, tree_cores: int, others=None, quota=None, irq=None,
                 base_load: float = 3.0):
        self.cpus = cpus
        self.tree_cores = tree_cores           # cores the tree may run on (cpuset)
        self.others = others or (lambda t: 0.0)  # other tenants' demand on those cores
        self.quota = quota or (lambda t: None)   # cgroup cpu.max in cores, None: no quota
        self.irq = irq or (lambda t: 0.0)        # rate of launch-thread preemptions (1/s)
        self.base_load = base_load             # whole-host background (cores)
        self.tree_demand = 2.0                 # nominal cores the tree wants (sims set it)

    def share(self, t: float, demand: float | None = None) -> float:
        """Fraction of its CPU demand the tree gets at time t."""
        d = self.tree_demand if demand is None else demand
        o = self.others(t)
        s = 1.0
        if d + o > self.tree_cores:
            s = self.tree_cores / (d + o)
        q = self.quota(t)
        if q is not None and d > q:
            s = min(s, q / d)
        return max(0.02, min(1.0, s))


class Node:
    def __init__(self, name: str, gpu: str, n_gpus: int, tick: float, duration: float,
                 host: Host, start_wall: float, ebpf: bool = False, power_limit: float | None = None,
                 hostname: str = "gpu-node", gpu_offset: int = 0):
        self.name = name
        self.rng = random.Random(seed_of(name))
        self.nprng = random.Random(seed_of(name) ^ 0x5A5A)
        self.spec = SPECS[gpu]
        self.n = n_gpus
        self.tick = tick
        self.nt = int(round(duration / tick))
        self.duration = self.nt * tick
        self.sub = max(1, int(round(tick / 0.2)))
        self.nb = self.nt * self.sub
        self.bw = tick / self.sub
        self.host = host
        self.start_wall = start_wall
        self.ebpf = ebpf
        self.hostname = hostname
        sp = self.spec
        z = lambda: [[0.0] * self.nb for _ in range(n_gpus)]
        self.busy, self.sm, self.tensor, self.dram, self.occ = z(), z(), z(), z(), z()
        self.nvl = [[0.0] * self.nt for _ in range(n_gpus)]    # NVLink bytes per tick
        self.pcie = [[0.0] * self.nt for _ in range(n_gpus)]
        self.pid_busy: dict[tuple[int, int], list] = {}
        # per GPU controls (functions of time) that faults change
        self.power_limit = [(lambda t, p=(power_limit or sp.tdp_w): p)] * n_gpus
        self.r_mult = [(lambda t: 1.0)] * n_gpus         # cooling: thermal resistance factor
        self.ceiling = [(lambda t: (1.0, ()))] * n_gpus  # external clock ceiling + reasons
        self.inlet = [sp.t_inlet_c + self.rng.uniform(-2, 3) for _ in range(n_gpus)]
        # state
        self.done = 0
        self.c_pow = [1.0] * n_gpus
        self.c_th = [1.0] * n_gpus
        self.temp = [self.inlet[g] + 12 for g in range(n_gpus)]
        self.clk = [[1.0] * (self.nt + 1) for _ in range(n_gpus)]
        self.power = [[0.0] * self.nt for _ in range(n_gpus)]
        self.temps = [[0.0] * self.nt for _ in range(n_gpus)]
        self.reasons: list[list[tuple]] = [[() for _ in range(self.nt)] for _ in range(n_gpus)]
        self.plim = [[0.0] * self.nt for _ in range(n_gpus)]
        self.mem_events: list[list[tuple[float, int, float]]] = [[] for _ in range(n_gpus)]
        self.procs: list[Proc] = []
        # host accounting per tick
        self.tree_cpu = [0.0] * self.nt      # CPU seconds the tree wanted
        self.launch_cpu = [0.0] * self.nt    # of which the launching thread
        self.launches = [0.0] * self.nt      # launch calls (kernel launches)
        self.graph_launches = [0.0] * self.nt
        self.launch_pid = 0
        self.engines = []                      # (EngineRecorder)
        self.engine_pids: tuple[int, ...] = ()
        self.pin_label = ""
        self.pin_roots: tuple[int, ...] = ()
        self.drop_ticks: set[int] = set()
        self.data_wait = [0.0] * self.nt     # for viewer: seconds GPUs waited for input

    # ------------------------------------------------------------------ activity
    def add(self, g: int, t0: float, t1: float, busy: float = 1.0, sm: float = 0.9,
            tensor: float = 0.0, dram: float = 0.0, occ: float | None = None, pid: int = 0):
        """GPU g ran kernels from t0 to t1: busy is the fraction of that time some kernel
        ran; sm/tensor/dram/occ are activity while it ran."""
        if t1 <= t0 or t0 >= self.duration:
            return
        t1 = min(t1, self.duration)
        b0 = int(t0 / self.bw)
        b1 = min(int(t1 / self.bw), self.nb - 1)
        if occ is None:
            occ = sm * 0.3
        B, S, T, D, O = self.busy[g], self.sm[g], self.tensor[g], self.dram[g], self.occ[g]
        for b in range(b0, b1 + 1):
            lo = t0 if b == b0 else b * self.bw
            hi = t1 if b == b1 else (b + 1) * self.bw
            dt = (hi - lo) * busy
            if dt <= 0:
                continue
            B[b] += dt
            S[b] += dt * sm
            T[b] += dt * tensor
            D[b] += dt * dram
            O[b] += dt * occ
        if pid:
            arr = self.pid_busy.get((g, pid))
            if arr is None:
                arr = self.pid_busy[(g, pid)] = [0.0] * self.nt
            k0, k1 = int(t0 / self.tick), min(int(t1 / self.tick), self.nt - 1)
            if k0 == k1:
                arr[k0] += (t1 - t0) * busy
            else:
                for k in range(k0, k1 + 1):
                    a, b = max(t0, k * self.tick), min(t1, (k + 1) * self.tick)
                    arr[k] += max(0.0, b - a) * busy

    def link(self, g: int, t: float, nvlink_bytes: float = 0.0, pcie_bytes: float = 0.0):
        k = int(t / self.tick)
        if 0 <= k < self.nt:
            self.nvl[g][k] += nvlink_bytes
            self.pcie[g][k] += pcie_bytes

    def cpu(self, t: float, seconds: float, launch_thread: float = 0.0, launches: float = 0,
            graphs: float = 0):
        k = int(t / self.tick)
        if 0 <= k < self.nt:
            self.tree_cpu[k] += seconds
            self.launch_cpu[k] += launch_thread
            self.launches[k] += launches
            self.graph_launches[k] += graphs

    def set_mem(self, g: int, t: float, pid: int, nbytes: float):
        self.mem_events[g].append((t, pid, nbytes))

    # ------------------------------------------------------------------ GPU physics
    def clock(self, g: int, t: float) -> float:
        """SM clock as a fraction of the maximum at time t (finalising ticks before it)."""
        k = int(t / self.tick)
        while self.done < min(k, self.nt):
            self._finalize(self.done)
            self.done += 1
        return float(self.clk[g][min(k, self.nt)])

    def _finalize(self, k: int):
        sp = self.spec
        s0, s1 = k * self.sub, (k + 1) * self.sub
        t = k * self.tick
        for g in range(self.n):
            busy = sum(self.busy[g][s0:s1]) / self.tick
            sm = sum(self.sm[g][s0:s1]) / self.tick
            ten = sum(self.tensor[g][s0:s1]) / self.tick
            dram = sum(self.dram[g][s0:s1]) / self.tick
            c = self.clk[g][k]
            idle = sp.idle_w if busy > 0.001 or k > 0 else sp.idle_w * 0.7
            fixed = (sp.tdp_w - sp.idle_w) * (0.12 * busy + 0.3 * dram)
            scal = (sp.tdp_w - sp.idle_w) * (0.25 * sm + 0.78 * ten)
            p = idle + fixed + scal * c ** 2.2 + self.rng.gauss(0, 0.004 * sp.tdp_w)
            lim = self.power_limit[g](t)
            self.plim[g][k] = lim
            self.power[g][k] = min(p, lim * 1.01 + self.rng.uniform(-3, 1))
            # temperature: first order, tau 25 s
            r = sp.r_k_per_w * self.r_mult[g](t)
            tss = self.inlet[g] + r * self.power[g][k]
            a = 1 - math.exp(-self.tick / 25.0)
            self.temp[g] += (tss - self.temp[g]) * a
            self.temps[g][k] = self.temp[g]
            reasons = []
            # power controller: the clock that holds P at the limit
            full = scal  # at c=1
            if p > lim and full > 1:
                target = ((lim - idle - fixed) / full) ** (1 / 2.2) if lim > idle + fixed else 0.3
                self.c_pow[g] = max(0.3, min(1.0, 0.5 * self.c_pow[g] + 0.5 * target))
                reasons.append("power cap")
            else:
                self.c_pow[g] = min(1.0, self.c_pow[g] + 0.04 * self.tick)
                if self.c_pow[g] < 0.995 and p > lim * 0.97:
                    reasons.append("power cap")
            # thermal slowdown
            if self.temp[g] > sp.t_slow_c:
                self.c_th[g] = max(0.35, self.c_th[g] - 0.025 * (self.temp[g] - sp.t_slow_c) * self.tick)
                reasons.append("thermal (sw)")
                if self.temp[g] > sp.t_slow_c + 5:
                    reasons.append("hw slowdown")
            else:
                self.c_th[g] = min(1.0, self.c_th[g] + 0.01 * self.tick)
                if self.c_th[g] < 0.99:
                    reasons.append("thermal (sw)")
            ceil, why = self.ceiling[g](t)
            if ceil < 0.999:
                reasons.extend(why)
            cn = min(self.c_pow[g], self.c_th[g], ceil)
            self.clk[g][k + 1] = cn
            self.reasons[g][k] = tuple(dict.fromkeys(reasons))

    def finish(self):
        self.clock(0, self.duration + self.tick)

    # ------------------------------------------------------------------ frames
    def mem_at(self, g: int, t: float) -> dict[int, float]:
        out: dict[int, float] = {}
        for te, pid, b in self.mem_events[g]:
            if te <= t:
                out[pid] = b
        return {p: b for p, b in out.items() if b > 0}

    def frames(self, truth_engine_kind: str = "none") -> list[Frame]:
        self.finish()
        sp = self.spec
        rng = self.rng
        frames = []
        psi = 0.2
        ctxt = 48_000_000 + rng.randrange(10**6)
        inv = 1000 + rng.randrange(500)
        vol = 50000 + rng.randrange(5000)
        thread_cpu = {}
        throttled = 0
        periods = 0
        mono0 = BOOT_MONO + rng.uniform(0, 1e5)
        bus = [f"00000000:{b:02X}:00.0" for b in (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)]
        uuids = [f"GPU-{seed_of(self.name + str(g)) & 0xffffffff:08x}-{(seed_of(str(g) + self.name)) & 0xffff:04x}-"
                 f"4{g:03x}-a{(g * 977) % 4096:03x}-{seed_of(self.hostname) & 0xffffffffffff:012x}" for g in range(self.n)]
        ecc = [rng.choice((0, 0, 0, 2, 14)) for _ in range(self.n)]
        for p in self.procs:
            p.cpu_s = rng.uniform(50, 4000)
        seq = 0
        for k in range(self.nt):
            t = (k + 1) * self.tick
            wall = self.start_wall + t + rng.uniform(0.0005, 0.004)
            # ---- host
            h = self.host
            share = h.share(t - self.tick / 2)
            wanted = self.tree_cpu[k] / self.tick
            used = wanted * share
            others = h.others(t - self.tick / 2)
            q = h.quota(t - self.tick / 2)
            # run queue: runnable tasks on the whole host
            runnable = h.base_load + others + wanted + (wanted * (1 - share) if share < 1 else 0)
            rq = max(1, int(round(runnable + rng.gauss(0, 0.8))))
            over = (wanted + others) / max(1, h.tree_cores)
            inst = min(100.0, max(0.0, (over - 0.85) * 120)) if over > 0.85 else 0.0
            dem = max(wanted, h.tree_demand if wanted > 0.05 else 0.0)
            if q is not None and dem > q:
                inst = max(inst, min(95.0, 100 * (1 - q / dem)))
            inst += rng.uniform(0, 0.6)
            psi += (inst - psi) * (1 - math.exp(-self.tick / 10.0))
            host_cpu = 100 * min(1.0, (h.base_load + others * min(1.0, h.tree_cores / max(1e-9, others + wanted)) + used) / h.cpus)
            ctxt += int((8000 + 900 * (others + wanted)) * self.tick * rng.uniform(0.9, 1.1))
            # involuntary switches of the tree: timer preemptions when others share the cores
            lost = wanted - used
            irq = h.irq(t - self.tick / 2)
            d_inv = int((15 + 400 * min(1.0, others / max(1, h.tree_cores)) * wanted + 900 * lost + irq) * self.tick * rng.uniform(0.8, 1.2))
            inv += d_inv
            vol += int((300 + 150 * wanted) * self.tick * rng.uniform(0.9, 1.1))
            if q is not None:
                periods += int(self.tick / 0.1)
                if dem > q:
                    throttled += int(self.tick / 0.1 * min(1.0, 0.6 + (dem - q) / max(dem, 1e-9)))
            # ---- processes
            procs = []
            tree_pids = []
            for p in self.procs:
                if not (p.t_start <= t <= p.t_end):
                    continue
                if p.in_tree:
                    tree_pids.append(p.pid)
                pshare = (used / max(1e-9, wanted)) if wanted > 0 else 1.0
                if p.in_tree:
                    # the tree's CPU is split: the launching process takes the launch thread's
                    lt = self.launch_cpu[k] / self.tick
                    p.cpu_s += ((lt if p.pid == self.launch_pid else 0.0)
                                + p.base_cpu * (wanted - lt) / max(1e-9, sum(x.base_cpu for x in self.procs if x.in_tree and x.t_start <= t <= x.t_end) or 1)) * self.tick * pshare
                else:
                    p.cpu_s += p.base_cpu * self.tick * rng.uniform(0.9, 1.1)
                for g in p.gpus:
                    mem = self.mem_at(g, t).get(p.pid)
                    if mem is None:
                        continue
                    arr = self.pid_busy.get((g, p.pid))
                    smu = None if arr is None else round(min(100.0, 100 * arr[k] / self.tick))
                    if smu is None:
                        smu = 0.0
                    procs.append(ProcSample(pid=p.pid, gpu_index=g, name=p.name, cmdline=p.cmdline, user=p.user,
                                            ppid=p.ppid, start_time_s=p.start_time_s, mem_bytes=int(mem),
                                            sm_util_pct=float(smu), cpu_s=round(p.cpu_s, 2), rss_bytes=p.rss,
                                            container=p.container, cgroup=p.cgroup, slurm_job=p.slurm_job,
                                            slurm_step=p.slurm_step,
                                            mem_util_pct=float(round(min(100, 100 * sum(self.dram[g][k * self.sub:(k + 1) * self.sub]) / self.tick * 0.9)))))
            # ---- GPUs
            gpus = []
            s0, s1 = k * self.sub, (k + 1) * self.sub
            for g in range(self.n):
                busy_bins = [min(1.0, x / self.bw) for x in self.busy[g][s0:s1]]
                busy = sum(busy_bins) / len(busy_bins)
                smv = min(1.0, sum(self.sm[g][s0:s1]) / self.tick)
                tv = min(1.0, sum(self.tensor[g][s0:s1]) / self.tick)
                dv = min(1.0, sum(self.dram[g][s0:s1]) / self.tick)
                ov = min(1.0, sum(self.occ[g][s0:s1]) / self.tick)
                samples = tuple(float(round(100 * min(1.0, b + (rng.uniform(0, 0.02) if b > 0.05 else 0)))) for b in busy_bins)
                mems = self.mem_at(g, t)
                used_b = int(sum(mems.values()) + (0 if not mems else 520 * MiB * len(mems)))
                clk = self.clk[g][k]
                mhz = round(sp.max_mhz * clk / 15) * 15 if busy > 0.02 or mems else (345 if sp.key in ("h100", "h200") else 210)
                if not mems and busy < 0.01:
                    clk_show = mhz
                else:
                    clk_show = mhz
                missing = {}
                if sp.key not in ("b200",):
                    missing["fan_pct"] = "not supported on this GPU"
                gpm = {}
                if sp.gpm and (k > 0):
                    n = lambda v: float(max(0.0, 100 * v + rng.gauss(0, 0.25))) if v > 0 else 0.0
                    gpm = dict(sm_active_pct=n(smv), sm_occupancy_pct=n(ov), dram_bw_pct=n(dv), tensor_pct=n(tv),
                               pcie_rx_mib_per_s=float(self.pcie[g][k] / self.tick / MiB * 0.6 + rng.uniform(20, 90)),
                               pcie_tx_mib_per_s=float(self.pcie[g][k] / self.tick / MiB * 0.4 + rng.uniform(5, 15)),
                               nvlink_rx_mib_per_s=float(self.nvl[g][k] / self.tick / MiB * rng.uniform(0.97, 1.03)) if sp.nvlink else None,
                               nvlink_tx_mib_per_s=float(self.nvl[g][k] / self.tick / MiB * rng.uniform(0.97, 1.03)) if sp.nvlink else None)
                elif sp.gpm:
                    for f in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                        missing[f] = "GPM needs a second sample"
                else:
                    for f in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                        missing[f] = "needs Hopper+ (GPM)"
                    for f in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s"):
                        missing[f] = "needs Hopper+ (GPM)"
                pw = float(round(self.power[g][k] if (busy > 0.005 or mems) else sp.idle_w * 0.75 + rng.uniform(-1, 1), 3))
                gpus.append(GpuSample(
                    index=g, name=sp.name, uuid=uuids[g], util_gpu_pct=float(round(100 * busy)),
                    util_gpu_samples_pct=samples, util_mem_pct=float(round(100 * dv * 0.92)),
                    mem_total_bytes=sp.mem_mib * MiB, mem_used_bytes=used_b,
                    mem_reserved_bytes=sp.reserved_mib * MiB, power_w=pw,
                    temp_c=float(round(self.temps[g][k])), sm_clock_mhz=float(clk_show),
                    throttle=self.reasons[g][k], bus_id=bus[g % 8].replace(":00.0", f":{g // 8:02X}.0") if g >= 8 else bus[g],
                    fan_pct=None, pstate=0 if (busy > 0.01 or mems) else 8,
                    power_limit_w=float(self.plim[g][k]), mem_clock_mhz=float(sp.mem_mhz),
                    ecc_corrected=ecc[g], ecc_uncorrected=0, xid_count=0, xid_last=None, mig_mode=False,
                    missing=missing, **gpm))
            # ---- engine
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.0006 * self.n + rng.uniform(0, 0.002), 6),
                                            poll_median_s=round(0.0045 + 0.0006 * self.n, 6))}
            engine = None
            if self.engines:
                engine, st = self.engines[0].at(wall, rng)
                sources["engine"] = st
            else:
                sources["engine"] = SourceStatus(False, reason="no engine found (pass --engine URL)", poll_median_s=3e-5)
            hsamp = HostSample(cpu_pct=round(host_cpu + rng.uniform(-0.3, 0.3), 1), offcpu_switches=None,
                               cpu_pressure_some_pct=round(psi, 2), run_queue=rq, cpus=h.cpus,
                               ctx_switches_total=ctxt)
            sources["host"] = SourceStatus(True, age_s=0.0, poll_s=round(0.0005 + rng.uniform(0, 0.0004), 6), poll_median_s=0.0006)
            # ---- pinned tree
            pinned = None
            tree_cpu = sum(p.cpu_s for p in self.procs if p.in_tree and p.t_start <= t <= p.t_end)
            if self.pin_roots:
                lt_pid = self.launch_pid
                thread_cpu.setdefault("main", 0.0)
                thread_cpu["main"] += self.launch_cpu[k] * share
                threads = [ThreadSample(tid=lt_pid + 35, pid=lt_pid, name="python3", cpu_s=round(thread_cpu["main"] + 100, 2)),
                           ThreadSample(tid=lt_pid, pid=lt_pid, name="python3", cpu_s=round(0.05 * tree_cpu, 2))]
                pinned = PinnedSample(label=self.pin_label, root_pids=self.pin_roots, tree_pids=tuple(tree_pids),
                                      cpu_s=round(tree_cpu, 2), ctx_voluntary=vol, ctx_involuntary=inv,
                                      threads=tuple(threads), cores=tuple(range(h.tree_cores)),
                                      cpu_pressure_some_pct=round(psi, 2), run_queue=rq,
                                      cpu_quota_cores=q, cpu_periods=periods if q is not None else None,
                                      cpu_throttled_periods=throttled if q is not None else None)
                sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=round(0.01 + rng.uniform(0, 0.006) + 0.02 * (1 - share), 6), poll_median_s=0.013)
                if engine is not None:
                    engine = _with_cpu(engine, tree_cpu, inv, thread_cpu["main"] + 100, f"{lt_pid + 35} python3", q,
                                       periods if q is not None else None, throttled if q is not None else None)
            sources["procfs"] = SourceStatus(True, detail="/proc", age_s=0.0, poll_s=0.00008, poll_median_s=0.00015)
            # ---- eBPF launch latency
            launch = ()
            offcpu = None
            if self.ebpf:
                launch, offcpu = self._launch(k, share, irq)
                sources["ebpf"] = SourceStatus(True, detail="uprobes on libcudart.so.12, libcuda.so.1", age_s=0.0,
                                               poll_s=0.002, poll_median_s=0.002)
                hsamp = dataclasses.replace(hsamp, offcpu_switches=offcpu)
            else:
                sources["ebpf"] = SourceStatus(False, reason="kernel headers missing: run scripts/setup-ebpf.sh")
            if k in self.drop_ticks:
                continue
            frames.append(Frame(seq=seq, time_wall_s=round(wall, 6), time_mono_s=round(mono0 + t, 6), gpus=tuple(gpus),
                                processes=tuple(procs), engine=engine, launch=launch, host=hsamp, pinned=pinned,
                                sources=sources))
            seq += 1
        return frames

    def _launch(self, k: int, share: float, irq: float):
        """Host-side durations of CUDA launch calls this tick as the uprobes bucket them."""
        rng = self.nprng
        out = []
        n_k = int(self.launches[k])
        n_g = int(self.graph_launches[k])
        # probability a call is hit by a preemption of the launching thread
        lost = 1 - share
        hit_rate = irq + 2000 * lost  # preemptions per second landing on the thread
        calls_per_s = (n_k + n_g) / self.tick if (n_k + n_g) else 1
        p_hit = min(0.5, hit_rate * 0.004 / max(1.0, calls_per_s * 0.004) / max(1.0, calls_per_s) * 4) if hit_rate else 0.0
        p_hit = min(0.4, hit_rate / max(1.0, calls_per_s) * 0.6)
        offcpu = _poisson(rng, max(0.1, hit_rate * self.tick + 2))
        for api, n, base in (("cudaLaunchKernel", n_k, 4.2e3), ("cudaGraphLaunch", n_g, 14e3)):
            if n <= 0:
                continue
            nh = _binom(rng, n, p_hit) if p_hit > 0 else 0
            nn = n - nh
            m = min(nn, 400)
            vals = [rng.lognormvariate(math.log(base), 0.25) for _ in range(m)]
            if nh:
                mh = min(nh, 400)
                hv = [base + rng.expovariate(1 / (600e3 if irq < 1000 else 900e3)) for _ in range(mh)]
            buckets: dict[int, int] = {}
            sc = nn / max(1, m)
            for v in vals:
                b = bucket_index(int(v))
                buckets[b] = buckets.get(b, 0) + 1
            buckets = {b: int(round(c * sc)) for b, c in buckets.items()}
            total = sum(vals) * sc
            mx = max(vals) if m else 0
            if nh:
                hb: dict[int, int] = {}
                for v in hv:
                    b = bucket_index(int(v))
                    hb[b] = hb.get(b, 0) + 1
                sch = nh / mh
                for b, c in hb.items():
                    buckets[b] = buckets.get(b, 0) + int(round(c * sch))
                total += sum(hv) * sch
                mx = max(mx, max(hv))
            cnt = sum(buckets.values())
            buckets = {b: c for b, c in buckets.items() if c > 0}
            out.append(LaunchHist(api=api, pid=self.launch_pid, count=cnt, sum_ns=int(total), max_ns=int(mx), buckets=buckets))
        return tuple(out), offcpu


def _with_cpu(engine, cpu_s, inv, busiest, name, q, periods, throttled):
    import dataclasses
    return dataclasses.replace(engine, cpu_s=round(cpu_s, 2), ctx_involuntary=inv, busiest_thread_cpu_s=round(busiest, 2),
                               busiest_thread=name, cpu_quota_cores=q, cpu_periods=periods,
                               cpu_throttled_periods=throttled)


def _poisson(rng, lam):
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1


def _binom(rng, n, p):
    mu = n * p
    if n > 60:
        return max(0, min(n, int(round(rng.gauss(mu, math.sqrt(max(1e-9, mu * (1 - p))))))))
    return sum(1 for _ in range(n) if rng.random() < p)
