"""The tick loop shared by every trace: world state (GPUs, host), the workload, the
scenario's events, and the frame gputop's collector would write each tick."""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)
from gputop.sources.engine_metrics import config_int, recognise

from corpus_an.hw import SPECS, Activity, GpuPhysics, HostPhysics

GPM_MISSING = "needs Hopper+ (GPM)"


@dataclass
class Proc:
    pid: int
    gpu: int
    name: str
    cmdline: str
    user: str = "svc-ml"
    container: str = ""
    pod: str = ""
    cgroup: str = ""
    slurm_job: str = ""
    start_time_s: float = 0.0
    mem: int = 0
    cpu_s: float = 0.0
    rss: int = 2 * 2**30
    alive: bool = True
    in_tree: bool = True  # part of the pinned / engine process tree


@dataclass
class LaunchStat:
    api: str
    pid: int
    count: int
    base_us: float          # typical host-side call duration
    tail_frac: float = 0.0  # share of calls delayed by the thread losing its CPU
    tail_us: float = 0.0    # typical delay of those


@dataclass
class Setup:
    gpu_model: str
    n_gpus: int
    tick_s: float
    duration_s: float
    start_wall: float
    host_cores: int = 128
    hostname: str = "gpu-node"
    ebpf: bool = False
    ebpf_reason: str = "needs root (CAP_BPF, CAP_PERFMON)"
    dcgm: bool = False    # a dcgm-exporter with profiling fields gives SM/DRAM/tensor pre-Hopper
    engine_url: str | None = None
    engine_kind: str = "none"
    scrape_s: float = 5.0
    scrape_miss: float = 0.01
    drop_tick: float = 0.004
    pinned: bool = True
    inlet_c: float = 24.0
    r_th: float = 0.045
    power_limit: float | None = None
    base_other_cores: float = 3.0
    tree_cores: int | None = None
    gpu_offset: int = 0   # first GPU index the trace shows (the node may have more)


class World:
    def __init__(self, setup: Setup, seed: int):
        self.s = setup
        self.rng = random.Random(seed)
        spec = SPECS[setup.gpu_model]
        self.spec = spec
        self.gpus = [GpuPhysics(spec, random.Random(seed + 17 * i), setup.inlet_c + self.rng.uniform(-1, 1.5),
                                setup.r_th * self.rng.uniform(0.93, 1.07), setup.power_limit)
                     for i in range(setup.n_gpus)]
        self.host = HostPhysics(setup.host_cores, random.Random(seed + 991), setup.base_other_cores)
        self.host.tree_cores = setup.tree_cores or setup.host_cores
        self.t = 0.0
        self.uuids = [f"GPU-{zlib.crc32(f'{seed}-{i}'.encode()):08x}-{(seed >> 3) & 0xffff:04x}-"
                      f"{i:04x}-a1b2-{zlib.crc32(f'{i}{seed}'.encode()):012x}"[:40] for i in range(setup.n_gpus)]
        self.bus = [f"00000000:{0x18 + 0x10 * i:02X}:00.0" for i in range(setup.n_gpus)]
        self.ecc = [self.rng.randrange(0, 3) for _ in range(setup.n_gpus)]


def _jit(rng, v, rel=0.02, ab=0.0):
    return v * (1 + rng.gauss(0, rel)) + rng.gauss(0, ab)


def gpu_sample(w: World, i: int, a: Activity, mem_used: int) -> GpuSample:
    g = w.gpus[i]
    sp = w.spec
    rng = w.rng
    busy = min(1.0, max(0.0, a.busy))
    util = int(round(min(100, max(0, 100 * busy + rng.gauss(0, 1.2 if busy > 0.02 else 0)))))
    # driver samples: the tick seen at ~1/6 s resolution
    n = 5
    samples = tuple(float(int(round(min(100, max(0, 100 * busy + rng.gauss(0, 6 if 0.05 < busy < 0.95 else 1.0))))))
                    for _ in range(n)) if busy > 0.005 else (0.0,) * n
    missing = {}
    sm = occ = dram = ten = None
    pcie_rx = pcie_tx = nvl_rx = nvl_tx = None
    if sp.gpm or w.s.dcgm:
        sm = max(0.0, min(100.0, 100 * a.sm * (1 + rng.gauss(0, 0.025))))
        occ = max(0.0, min(sm, 100 * a.occ * (1 + rng.gauss(0, 0.04))))
        dram = max(0.0, min(100.0, 100 * a.dram * (1 + rng.gauss(0, 0.03))))
        ten = max(0.0, min(100.0, 100 * a.tensor * (1 + rng.gauss(0, 0.03))))
        if busy < 0.005:
            sm = occ = ten = 0.0
            dram = abs(rng.gauss(0, 0.001))
    else:
        for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
            missing[k] = GPM_MISSING
    if sp.gpm:
        pcie_rx = max(0.0, a.pcie_rx * rng.uniform(0.8, 1.2) + rng.uniform(5, 40))
        pcie_tx = max(0.0, a.pcie_tx * rng.uniform(0.8, 1.2) + rng.uniform(2, 15))
        nvl_rx = max(0.0, a.nvlink * rng.uniform(0.9, 1.1)) if sp.nvlink else 0.0
        nvl_tx = max(0.0, a.nvlink * rng.uniform(0.9, 1.1)) if sp.nvlink else 0.0
    else:
        for k in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s"):
            missing[k] = GPM_MISSING
    fan = None
    if sp.fan:
        fan = float(int(max(30, min(100, 30 + 1.6 * (g.temp - 40)))))
    else:
        missing["fan_pct"] = "not supported on this GPU"
    util_mem = int(round(min(100, 100 * a.dram * 0.85 + rng.gauss(0, 0.8)))) if busy > 0.005 else 0
    return GpuSample(
        index=i + w.s.gpu_offset, name=sp.name, uuid=w.uuids[i], util_gpu_pct=float(util),
        util_gpu_samples_pct=samples, util_mem_pct=float(max(0, util_mem)),
        sm_active_pct=sm, sm_occupancy_pct=occ, dram_bw_pct=dram, tensor_pct=ten,
        mem_total_bytes=sp.mem_total, mem_used_bytes=int(mem_used), mem_reserved_bytes=sp.reserved,
        power_w=round(g.power, 3), temp_c=float(round(g.temp)), sm_clock_mhz=float(g.clk),
        throttle=g.throttle, bus_id=w.bus[i], fan_pct=fan, pstate=0 if busy > 0.01 or mem_used > 2**30 else 8,
        power_limit_w=float(g.power_limit), mem_clock_mhz=float(sp.mem_clk),
        pcie_rx_mib_per_s=pcie_rx, pcie_tx_mib_per_s=pcie_tx,
        nvlink_rx_mib_per_s=nvl_rx, nvlink_tx_mib_per_s=nvl_tx,
        ecc_corrected=w.ecc[i], ecc_uncorrected=0, xid_count=0, xid_last=None, mig_mode=False,
        missing=missing)


def launch_hists(rng, stats: list[LaunchStat]) -> tuple[LaunchHist, ...]:
    out = []
    for st in stats:
        if st.count <= 0:
            continue
        buckets: dict[int, int] = {}
        m = min(st.count, 300)
        scale = st.count / m
        tot = 0
        mx = 0
        for _ in range(m):
            v = st.base_us * math.exp(rng.gauss(0, 0.35))
            if st.tail_frac and rng.random() < st.tail_frac:
                v += st.tail_us * rng.expovariate(1.0)
            ns = int(v * 1000)
            b = bucket_index(ns)
            buckets[b] = buckets.get(b, 0) + 1
            tot += ns
            mx = max(mx, ns)
        if scale != 1:
            scaled = {k: max(1, int(round(c * scale))) for k, c in buckets.items()}
            diff = st.count - sum(scaled.values())
            kmax = max(scaled, key=scaled.get)
            scaled[kmax] = max(1, scaled[kmax] + diff)
            buckets = scaled
        out.append(LaunchHist(api=st.api, pid=st.pid, count=sum(buckets.values()),
                              sum_ns=int(tot * scale), max_ns=mx, buckets=dict(sorted(buckets.items()))))
    return tuple(out)


def engine_sample(parsed, url, kind, when_wall, when_mono, tree: dict) -> EngineSample:
    v = parsed.values
    c = parsed.cache
    return EngineSample(
        kind=parsed.kind, url=url, model=parsed.model,
        generation_tokens_total=v.get("generation_tokens_total"),
        prompt_tokens_total=v.get("prompt_tokens_total"),
        prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"),
        requests_finished_total=v.get("requests_finished_total"),
        requests_running=v.get("requests_running"), requests_waiting=v.get("requests_waiting"),
        kv_usage_ratio=v.get("kv_usage_ratio"),
        num_gpu_blocks=config_int(c.get("num_gpu_blocks")), block_size=config_int(c.get("block_size")),
        kv_pool_bytes=config_int(c.get("kv_cache_memory_bytes")),
        kv_pool_tokens=config_int(c.get("kv_pool_tokens")),
        cache_dtype=c.get("cache_dtype", ""),
        tensor_parallel=tree.get("tp", 1), data_parallel=1,
        pids=tuple(tree.get("pids", ())),
        time_mono_s=when_mono, time_wall_s=when_wall,
        histograms=parsed.histograms,
        preemptions_total=v.get("preemptions_total"),
        retracted_requests_total=v.get("retracted_requests_total"),
        work_unit=parsed.work_unit, waiting_by_reason=parsed.waiting_by_reason,
        flops_total=v.get("flops_total"), read_bytes_total=v.get("read_bytes_total"),
        write_bytes_total=v.get("write_bytes_total"),
        cpu_s=tree.get("cpu_s"), ctx_involuntary=tree.get("inv"),
        busiest_thread_cpu_s=tree.get("busiest_s"), busiest_thread=tree.get("busiest", ""),
        cpu_quota_cores=tree.get("quota"), cpu_periods=tree.get("periods"),
        cpu_throttled_periods=tree.get("throttled"),
        kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
        kv_evictable_tokens=v.get("kv_evictable_tokens"),
        retracted_input_tokens_total=v.get("retracted_input_tokens_total"),
        spec_drafts_total=v.get("spec_drafts_total"), spec_draft_tokens_total=v.get("spec_draft_tokens_total"),
        spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"),
        spec_accept_ratio=v.get("spec_accept_ratio"), spec_accept_length=v.get("spec_accept_length"),
        prefill_seconds_total=v.get("prefill_seconds_total"), decode_seconds_total=v.get("decode_seconds_total"),
        forward_seconds_total=v.get("forward_seconds_total"), decode_steps_total=v.get("decode_steps_total"),
    )


def run(setup: Setup, workload, events, seed: int) -> list[Frame]:
    """Tick the world; events(t, world, workload) applies the scenario's changes."""
    w = World(setup, seed)
    rng = w.rng
    dt = setup.tick_s
    frames: list[Frame] = []
    n_ticks = int(round(setup.duration_s / dt))
    mono0 = 3000.0 + rng.uniform(0, 5000)
    engine_last = None
    engine_last_t = None
    next_scrape = rng.uniform(0, setup.scrape_s) if setup.engine_url else None
    workload.init(w)
    busy_threads: dict = {}
    seq = 0
    for k in range(n_ticks):
        t = k * dt
        w.t = t
        events(t, w, workload)
        acts, tree = workload.advance(t, dt, w)
        for i, g in enumerate(w.gpus):
            g.update(acts[i], dt)
        seq += 1
        if k > 3 and rng.random() < setup.drop_tick:
            continue  # the collector missed this tick (a stalled poll)
        wall = setup.start_wall + t + dt + rng.uniform(0.0, 0.004)
        mono = mono0 + t + dt
        procs = []
        mems = [0] * setup.n_gpus
        for p in workload.procs:
            if not p.alive:
                continue
            mems[p.gpu] += p.mem
            share = acts[p.gpu].procs.get(p.pid, (0.0, p.mem))[0]
            procs.append(ProcSample(
                pid=p.pid, gpu_index=p.gpu + setup.gpu_offset, name=p.name, cmdline=p.cmdline, user=p.user,
                ppid=1 if not p.in_tree else p.pid - 3, start_time_s=p.start_time_s, mem_bytes=p.mem,
                sm_util_pct=float(int(round(100 * share))), cpu_s=round(p.cpu_s, 2),
                rss_bytes=p.rss, container=p.container, pod=p.pod, cgroup=p.cgroup,
                slurm_job=p.slurm_job, slurm_step="0" if p.slurm_job else "",
                mem_util_pct=float(int(round(100 * acts[p.gpu].dram * 0.85 * (share / max(acts[p.gpu].busy, 1e-9) if acts[p.gpu].busy > 0 else 0))))))
        gpus = tuple(gpu_sample(w, i, acts[i], mems[i] + 420 * 2**20 * (1 if mems[i] else 0))
                     for i in range(setup.n_gpus))
        h = w.host
        host = HostSample(cpu_pct=h.cpu_pct, offcpu_switches=tree.get("offcpu") if setup.ebpf else None,
                          cpu_pressure_some_pct=round(h.psi, 2), run_queue=h.run_queue,
                          cpus=setup.host_cores, ctx_switches_total=h.ctxt)
        tree_info = {"cpu_s": round(h.tree_cpu_s, 2), "inv": h.tree_inv, "pids": tree.get("pids", ()),
                     "busiest": tree.get("busiest", ""), "busiest_s": round(tree.get("busiest_s", 0.0), 2),
                     "tp": tree.get("tp", 1)}
        if h.quota is not None:
            tree_info.update(quota=h.quota, periods=h.periods, throttled=h.throttled)
        sources = {"nvml": SourceStatus(True, None, None, 0.0, round(rng.uniform(0.003, 0.007) * setup.n_gpus, 6), 0.005 * setup.n_gpus)}
        engine = None
        if setup.engine_url:
            if next_scrape is not None and t + dt >= next_scrape:
                next_scrape += setup.scrape_s
                if rng.random() < setup.scrape_miss + tree.get("scrape_miss", 0.0):
                    pass  # the answer did not come in time: the last reading is carried
                else:
                    text = workload.page(t + dt, w)
                    if text is not None:
                        parsed = recognise(text, setup.engine_url)
                        delay = rng.uniform(0.002, 0.03) * (1 + 10 * tree.get("scrape_slow", 0.0))
                        engine_last = engine_sample(parsed, setup.engine_url, setup.engine_kind,
                                                    wall - delay, mono - delay, tree_info)
                        engine_last_t = t + dt
            if engine_last is not None:
                age = t + dt - engine_last_t
                if age > 3 * max(setup.scrape_s, 2.0) + 1:
                    sources["engine"] = SourceStatus(False, f"{setup.engine_url}: timed out after 2.0 s", None, None)
                else:
                    engine = engine_last
                    sources["engine"] = SourceStatus(True, None, None, round(age, 3),
                                                     round(rng.uniform(0.004, 0.03), 6), 0.012)
            else:
                sources["engine"] = SourceStatus(False, "waiting for the first answer", None, None)
        else:
            sources["engine"] = SourceStatus(False, "no engine found (pass --engine URL)", None, None)
        sources["host"] = SourceStatus(True, None, None, 0.0, round(rng.uniform(0.0003, 0.0009), 6), 0.0006)
        sources["procfs"] = SourceStatus(True, None, "/proc", 0.0, round(rng.uniform(0.0001, 0.0004), 6), 0.0002)
        pinned = None
        if setup.pinned and tree.get("pids"):
            th = tree.get("threads", ())
            pinned = PinnedSample(
                label=tree.get("label", ""), root_pids=tuple(tree["pids"][:1]), tree_pids=tuple(tree["pids"]),
                cpu_s=round(h.tree_cpu_s, 2), ctx_voluntary=h.tree_vol, ctx_involuntary=h.tree_inv,
                threads=tuple(ThreadSample(tid, pid, name, round(cs, 2)) for tid, pid, name, cs in th),
                cores=tuple(range(min(setup.host_cores, setup.tree_cores or setup.host_cores))),
                cpu_pressure_some_pct=round(h.psi, 2), run_queue=h.run_queue,
                listening_ports=tuple(tree.get("ports", ())),
                cpu_quota_cores=h.quota, cpu_periods=h.periods if h.quota is not None else None,
                cpu_throttled_periods=h.throttled if h.quota is not None else None)
            sources["pin"] = SourceStatus(True, None, None, 0.0, round(rng.uniform(0.005, 0.02), 6), 0.012)
        if setup.dcgm:
            sources["dcgm"] = SourceStatus(True, None, "dcgm-exporter :9400 (DCGM_FI_PROF_*)", 0.0,
                                           round(rng.uniform(0.004, 0.012), 6), 0.008)
        launch = ()
        if setup.ebpf:
            launch = launch_hists(rng, tree.get("launch", []))
            sources["ebpf"] = SourceStatus(True, None, "uprobes on libcudart.so.12, libcuda.so.1", 0.0,
                                           round(rng.uniform(0.0005, 0.002), 6), 0.001)
        else:
            sources["ebpf"] = SourceStatus(False, setup.ebpf_reason, None, None)
        frames.append(Frame(gpus=gpus, processes=tuple(procs), engine=engine, launch=launch,
                            host=host, pinned=pinned, seq=seq, time_wall_s=round(wall, 6),
                            time_mono_s=round(mono, 6), sources=sources))
    return frames
