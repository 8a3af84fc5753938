"""The scenario driver: ticks of the collector over a simulated node, each frame built from
what the simulations did (GPU timeline, host CPU accounting, the engine's page as scraped)."""
from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, LaunchHist, ProcSample, SourceStatus)
from gputop.sources.engine_metrics import config_int, recognise

from corpus_ao.host import Host
from corpus_ao.hw import SPECS, Activity, GpuState

GiB = 2**30


@dataclass
class Proc:
    pid: int
    gpu: int | None  # None: not a GPU process (API server, loader worker)
    name: str
    cmdline: str
    mem: float = 0.0  # bytes on the GPU
    user: str = "svc"
    container: str = ""
    pod: str = ""
    ppid: int = 1
    start: float = 0.0
    rss: float = 2 * GiB
    cpu_w: float = 1.0  # share of the tree's CPU time
    tenant: bool = False  # another workload, not the pinned tree
    alive: tuple[float, float] = (0.0, 1e18)
    cpu_s: float = 0.0


class Env:
    def __init__(self, name, seed, gpu_model, ngpu, tick, duration, start_wall, *, cpus=64,
                 cores=None, quota=None, base_other=1.5, inlet=24.0, power_limit=None):
        self.name = name
        self.rng = random.Random(seed)
        self.seed = seed
        self.model = gpu_model
        self.tick = tick
        self.duration = duration
        self.start_wall = start_wall
        self.gpus = [GpuState(i, gpu_model, self.rng, inlet, power_limit, seed) for i in range(ngpu)]
        self.act = Activity(ngpu, duration + 30)
        self.host = Host(self.rng, cpus, cores, quota, base_other)
        self.knobs: dict = {}
        self.now = 0.0
        self.events: list = []  # (t, fn(env))
        self.lcalls = 0
        self.ldelays: list[float] = []
        self.graph_launches = 0

    # --- what the simulations read
    def spec(self, g):
        return self.gpus[g].spec

    def knob(self, name, default=None):
        v = self.knobs.get(name, default)
        return v(self.now) if callable(v) else v

    def gpu_speed(self, g):
        return self.gpus[g].speed * self.knob("gpu_share", {}).get(g, 1.0)

    def host_speed(self):
        return max(0.05, self.host.share * self.knob("main_thread_share", 1.0))

    def rank_host_speed(self, r):
        return max(0.05, self.host.share / self.knob("rank_host_slow", {}).get(r, 1.0))

    def loader_share(self, r):
        return self.host.share * self.knob("loader_share", 1.0) / self.knob("rank_host_slow", {}).get(r, 1.0)

    def quota_stall(self, step):
        q = self.host.quota_share
        if q >= 0.999:
            return 0.0
        return step * (1 / q - 1) * (0.6 + 0.8 * self.rng.random())

    def launch_delay(self, ncalls):
        p, mean = self.knob("launch_preempt", (0.0, 0.0))
        p2 = (1 - self.host.share) * 0.004
        lam = ncalls * (p + p2)
        self.lcalls += ncalls
        if lam <= 0:
            return 0.0
        k = _poisson(self.rng, lam)
        tot = 0.0
        m = mean if p > 0 else 0.0002
        for _ in range(k):
            d = self.rng.expovariate(1 / m)
            tot += d
            if len(self.ldelays) < 400:
                self.ldelays.append(d)
        return tot


def _poisson(rng, lam):
    if lam > 30:
        return max(0, int(rng.gauss(lam, math.sqrt(lam)) + 0.5))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1


@dataclass
class Scrape:
    kind: str  # engine kind or "trainer"
    url: str
    model: str
    interval: float
    miss_p: float = 0.01
    tp: int = 1
    kv_cfg: dict = field(default_factory=dict)
    weights: int | None = None


def engine_sample(text, sc: Scrape, pids, gpus, t_wall, t_mono, host, busiest) -> EngineSample:
    p = recognise(text, sc.url)
    v = p.values
    cache = p.cache
    nb = config_int(cache.get("num_gpu_blocks"))
    bs = config_int(cache.get("block_size"))
    pool_tok = config_int(cache.get("kv_pool_tokens"))
    return EngineSample(
        kind=p.kind, url=sc.url, model=p.model or sc.model,
        generation_tokens_total=v.get("generation_tokens_total"),
        prompt_tokens_total=v.get("prompt_tokens_total"),
        prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"),
        requests_finished_total=v.get("requests_finished_total"),
        requests_running=v.get("requests_running"), requests_waiting=v.get("requests_waiting"),
        kv_usage_ratio=v.get("kv_usage_ratio"), num_gpu_blocks=nb, block_size=bs,
        kv_pool_tokens=pool_tok, cache_dtype=cache.get("cache_dtype", ""),
        tensor_parallel=sc.tp if p.kind != "trainer" else None, data_parallel=1 if p.kind != "trainer" else None,
        gpu_indices=tuple(gpus), pids=tuple(pids), time_mono_s=t_mono, time_wall_s=t_wall,
        histograms=p.histograms, preemptions_total=v.get("preemptions_total"),
        retracted_requests_total=v.get("retracted_requests_total"), work_unit=p.work_unit,
        waiting_by_reason=p.waiting_by_reason, flops_total=v.get("flops_total"),
        read_bytes_total=v.get("read_bytes_total"), write_bytes_total=v.get("write_bytes_total"),
        cpu_s=round(host.cpu_s, 2), ctx_involuntary=host.ctx_invol,
        busiest_thread_cpu_s=round(busiest[1], 2), busiest_thread=busiest[0],
        cpu_quota_cores=host.quota, cpu_periods=host.periods if host.quota is not None else None,
        cpu_throttled_periods=host.throttled if host.quota is not None else None,
        kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
        kv_evictable_tokens=v.get("kv_evictable_tokens"),
        retracted_input_tokens_total=v.get("retracted_input_tokens_total"),
        spec_drafts_total=v.get("spec_drafts_total"), spec_draft_tokens_total=v.get("spec_draft_tokens_total"),
        spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"),
        spec_accept_ratio=v.get("spec_accept_ratio"), spec_accept_length=v.get("spec_accept_length"),
        prefill_seconds_total=v.get("prefill_seconds_total"), decode_seconds_total=v.get("decode_seconds_total"),
        forward_seconds_total=v.get("forward_seconds_total"), decode_steps_total=v.get("decode_steps_total"))


def trainer_page(job, unit):
    lines = []
    if unit == "tokens":
        lines += ["# TYPE trainer_tokens_total counter", f"trainer_tokens_total {float(job.tokens)}"]
    else:
        lines += ["# TYPE trainer_samples_total counter", f"trainer_samples_total {float(job.samples)}"]
    lines += ["# TYPE trainer_steps_total counter", f"trainer_steps_total {float(job.steps)}"]
    return "\n".join(lines) + "\n"


def run(env: Env, primary, procs: list[Proc], label: str, *, tenants=(), scrape: Scrape | None = None,
        page=None, ebpf=False, drop_p=0.004, mono0=None, pinned_roots=None):
    """Tick the node; returns frames.  ``primary``: the engine/job/service whose tree is pinned;
    ``page()``: its /metrics text (None when it exports nothing or is down)."""
    rng = env.rng
    frames = []
    tick = env.tick
    n = int(env.duration / tick)
    mono0 = mono0 if mono0 is not None else 1000.0 + rng.random() * 5e5
    last_engine = None
    last_scrape_t = -1e9
    next_scrape = rng.random() * (scrape.interval if scrape else 1)
    host = env.host
    tree = [p for p in procs if not p.tenant]
    events = sorted(env.events, key=lambda e: e[0])
    seq = 0
    lcalls_prev = 0
    for k in range(n):
        t0, t1 = k * tick, (k + 1) * tick
        env.now = t0
        while events and events[0][0] <= t0:
            events.pop(0)[1](env)
        # host: CPU shares for this tick from the demands of the last one
        demand = getattr(primary, "cpu_demand", 1.0)
        host.other_on_cores = env.knob("other_cores", 0.0)
        tenant_cpu = sum(getattr(x, "cpu_demand", 0.0) for x in tenants)
        host.tick(tick, demand, stall_extra=tenant_cpu + env.knob("host_extra", 0.0))
        env.lcalls, env.ldelays = 0, []
        primary.advance(t1)
        for x in tenants:
            x.advance(t1)
        results = [g.step(env.act, t0, t1) for g in env.gpus]
        # CPU time of the tree's processes (split by weight), tenants by their own use
        got = demand * host.share * host.quota_share * tick
        live = [p for p in tree if p.alive[0] <= t1 < p.alive[1]]
        wsum = sum(p.cpu_w for p in live) or 1.0
        for p in live:
            p.cpu_s += got * p.cpu_w / wsum
        for p in procs:
            if p.tenant and p.alive[0] <= t1 < p.alive[1]:
                p.cpu_s += tick * sum(getattr(x, "cpu_demand", 0.0) for x in tenants) / max(1, len([q for q in procs if q.tenant]))
        # dropped tick: the collector missed it (work still happened)
        if k > 5 and rng.random() < drop_p:
            continue
        wall = env.start_wall + t1 + rng.gauss(0, 0.0008)
        mono = mono0 + t1
        # processes and memory
        psamples = []
        used = [0.0] * len(env.gpus)
        for p in procs:
            if not (p.alive[0] <= t1 < p.alive[1]) or p.gpu is None:
                continue
            mem = p.mem(t1) if callable(p.mem) else p.mem
            if mem <= 0:
                continue
            used[p.gpu] += mem
            r = results[p.gpu]
            smu = (r["other"] if p.tenant else r["busy"] - r["other"]) * 100
            psamples.append(ProcSample(
                pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline, user=p.user,
                ppid=p.ppid, start_time_s=round(env.start_wall + p.start, 2), mem_bytes=int(mem),
                sm_util_pct=float(int(max(0.0, smu) + 0.5)), cpu_s=round(p.cpu_s, 2),
                rss_bytes=int(p.rss), container=p.container, pod=p.pod,
                cgroup=f"/kubepods/burstable/pod{zlib.crc32((p.pod + str(env.seed)).encode()):08x}/{p.container[-12:]}" if p.pod else "/user.slice",
                mem_util_pct=float(int(r["dram"] * 92 * (0 if p.tenant and r["other"] == 0 else 1))) ))
        gsamples = tuple(g.sample(r, int(used[i] + 300 * 2**20 * (1 if used[i] else 0.1)))
                         for i, (g, r) in enumerate(zip(env.gpus, results)))
        sources = {"nvml": SourceStatus(True, poll_s=0.004, poll_median_s=0.004)}
        # engine scrape
        eng = None
        if scrape is not None:
            if t1 >= next_scrape:
                next_scrape += scrape.interval
                text = page() if page else None
                if text is None:
                    sources["engine"] = SourceStatus(False, f"cannot reach {scrape.url}: Connection refused")
                    last_engine = None
                elif rng.random() < scrape.miss_p:
                    sources["engine"] = SourceStatus(False, f"no answer from {scrape.url} within 2s")
                else:
                    tp = [p.pid for p in tree if p.alive[0] <= t1 < p.alive[1]]
                    busiest = max(live, key=lambda p: p.cpu_w) if live else None
                    bt = (f"{busiest.pid} {busiest.name}", busiest.cpu_s) if busiest else ("", 0.0)
                    gl = sorted({p.gpu for p in tree if p.gpu is not None})
                    last_engine = engine_sample(text, scrape, tp, gl, wall - 0.01, mono - 0.01, host, bt)
                    last_scrape_t = t1
                    sources["engine"] = SourceStatus(True, age_s=0.0, poll_s=round(0.01 + rng.random() * 0.02, 4))
            elif last_engine is not None:
                sources["engine"] = SourceStatus(True, age_s=round(t1 - last_scrape_t, 3), poll_s=0.015)
            else:
                sources["engine"] = SourceStatus(False, f"cannot reach {scrape.url}: Connection refused")
            if sources["engine"].ok:
                eng = last_engine
        else:
            sources["engine"] = SourceStatus(False, "no engine found (pass --engine URL)")
        sources["host"] = SourceStatus(True, poll_s=0.001)
        sources["pin"] = SourceStatus(True, poll_s=0.012)
        sources["procfs"] = SourceStatus(True, detail="/proc")
        launch = ()
        hs = host.host_sample()
        if ebpf:
            launch = _launch_hists(env, procs, tree, tick)
            sources["ebpf"] = SourceStatus(True, detail="uprobes on libcudart.so.12, libcuda.so.1")
            from dataclasses import replace
            hs = replace(hs, offcpu_switches=len(env.ldelays) + int(host.offcpu * 0.05))
        else:
            sources["ebpf"] = SourceStatus(False, "off (start gputop with --ebpf as root)")
        live_tree = [p for p in tree if p.alive[0] <= t1 < p.alive[1]]
        threads = []
        for p in sorted(live_tree, key=lambda p: -p.cpu_s)[:8]:
            threads.append((p.pid + 35, p.pid, p.name[:15], p.cpu_s * 0.85))
        roots = pinned_roots(t1) if pinned_roots else [live_tree[0].pid] if live_tree else []
        pin = host.pinned(label, roots, [p.pid for p in live_tree], threads)
        frames.append(Frame(gpus=gsamples, processes=tuple(psamples), engine=eng, launch=launch,
                            host=hs, pinned=pin, seq=seq, time_wall_s=round(wall, 6),
                            time_mono_s=round(mono, 6), sources=sources))
        seq += 1
    return frames


def _launch_hists(env, procs, tree, tick):
    rng = env.rng
    launcher = next((p for p in tree if p.gpu is not None), None)
    if launcher is None or env.lcalls == 0:
        return ()
    count = env.lcalls
    base_med = 3600 * env.knob("launch_base", 1.0)
    nsamp = min(count, 300)
    scale = count / nsamp
    buckets: dict[int, float] = {}
    tot = 0.0
    mx = 0
    delays = env.ldelays
    nd = len(delays)
    for i in range(nsamp):
        v = base_med * math.exp(rng.gauss(0, 0.35))
        tot += v * scale
        b = bucket_index(int(v))
        buckets[b] = buckets.get(b, 0) + scale
        mx = max(mx, int(v))
    # the preempted calls: their off-CPU time is in the call's duration
    for d in delays:
        v = int(base_med + d * 1e9)
        b = bucket_index(v)
        buckets[b] = buckets.get(b, 0) + 1
        tot += v
        mx = max(mx, v)
    ib = {k: int(round(v)) for k, v in buckets.items() if int(round(v)) > 0}
    return (LaunchHist(api="cudaLaunchKernel", pid=launcher.pid, count=sum(ib.values()),
                       sum_ns=int(tot), max_ns=mx, buckets=ib),)
