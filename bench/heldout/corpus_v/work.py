"""Workloads: a training job (per-step timeline over 1-8 ranks, DataLoader workers, an
optional progress counter) and a continuous-batching server (fluid queue model with
vLLM / SGLang / llama.cpp metrics), both rendered into Frames by sim.Builder."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import EngineSample, Frame, SourceStatus

from .sim import (GIB, SGLANG_BOUNDS, VLLM_BOUNDS, Builder, GpuIn, GpuModel, Hist, HostIn,
                  Proc, Seg, Thread, Timeline, TreeIn, launch_hist, seeded)


# ------------------------------------------------------------------ pods and hosts
@dataclass
class Pod:
    kind: str  # "k8s", "slurm", "bare"
    name: str  # namespace/pod or the Slurm job id
    uid: str = ""

    @property
    def container(self) -> str:
        if self.kind == "k8s":
            return "containerd:" + hashlib.md5(self.name.encode()).hexdigest()[:12]
        return f"slurm:{self.name}.0" if self.kind == "slurm" else ""

    @property
    def cgroup(self) -> str:
        h = hashlib.md5(self.name.encode()).hexdigest()
        if self.kind == "k8s":
            uid = f"{h[:8]}_{h[8:12]}_{h[12:16]}_{h[16:20]}_{h[20:32]}"
            return (f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{uid}.slice/"
                    f"cri-containerd-{h}{h[:32]}.scope")
        if self.kind == "slurm":
            return f"/system.slice/slurmstepd.scope/job_{self.name}/step_0/user/task_0"
        return "/user.slice/user-1000.slice/session-4.scope"

    def proc(self, pid: int, name: str, cmdline: str, mem: int, start: float, ppid: int = 1,
             rss: int = 3 * GIB, user: str = "root") -> Proc:
        return Proc(pid=pid, name=name, cmdline=cmdline, mem=mem, start=start,
                    container=self.container, pod=self.name if self.kind == "k8s" else "",
                    cgroup=self.cgroup, slurm_job=self.name if self.kind == "slurm" else "",
                    slurm_step="0" if self.kind == "slurm" else "", user=user, ppid=ppid, rss=rss)


@dataclass
class HostEnv:
    """The node around the pod: CPUs, the other tenants' load (cores busy, runnable tasks)."""
    cpus: int
    base_busy: Callable[[float], float]  # cores busy by other tenants
    base_rq: Callable[[float], float]  # their runnable tasks (procs_running)
    base_psi: Callable[[float], float] = lambda t: 1.0


def const(v):
    return lambda t: v


def ramp(t, a, b, v0, v1):
    """v0 before a, v1 after b, linear between."""
    if t <= a:
        return v0
    if t >= b:
        return v1
    return v0 + (v1 - v0) * (t - a) / (b - a)


def host_in(env: HostEnv, t: float, own_cores: float, own_runnable: float, rng,
            extra_pressure: float = 0.0) -> HostIn:
    busy = env.base_busy(t) + own_cores
    rq = env.base_rq(t) + own_runnable
    over = max(0.0, rq - env.cpus) / env.cpus
    pressure = env.base_psi(t) + 100 * min(1.0, over * 1.5) + extra_pressure
    return HostIn(cpus=env.cpus, busy_cores=min(env.cpus, busy),
                  run_queue=max(1, int(round(rq + rng.gauss(0, max(1.0, 0.06 * rq))))),
                  pressure=min(100.0, pressure * (1 + rng.gauss(0, 0.05))))


# ------------------------------------------------------------------ training
@dataclass
class TrainCfg:
    name: str
    model: GpuModel
    ranks: tuple[int, ...]  # GPU index of each rank
    tick: float
    dur: float
    start: float
    env: HostEnv
    pod: Pod
    cores: tuple[int, ...]
    step: Callable  # (t, i, rng) -> StepPlan
    host: Callable  # (t, rng) -> HostPlan
    unit: str | None = "tokens"  # None: a CUDA job with no counter
    per_step: float = 65536.0  # tokens or samples per global step
    workers: int = 4  # DataLoader workers per rank
    mem_gib: float = 60.0
    others: Callable | None = None  # (t) -> {gpu index: [(Proc, busy demand, sm eff)]}
    launch: Callable | None = None  # (t, rng, pid) -> tuple[LaunchHist]
    quota: Callable | None = None  # (t) -> cores or None
    cmd: str = "python train.py"
    port: int = 9400
    all_gpus: tuple[int, ...] | None = None  # the node's GPUs NVML shows (others idle/used)
    neighbours: Callable | None = None  # (t) -> {gpu: GpuIn} for other tenants' GPUs


@dataclass
class StepPlan:
    gpu_s: float  # compute per step on a healthy rank
    gap_s: float = 0.0  # GPU idle before the step (data wait, host-bound launch gap)
    slow: dict[int, float] = field(default_factory=dict)  # rank -> compute multiplier
    comm_s: float = 0.02  # collective after compute (multi-rank)
    sm: float = 0.8
    density: float = 1.0  # kernel time fraction inside the compute (launch-bound <1)
    spread_gap: bool = False  # gap is interleaved with kernels (host-bound), not a block
    own: dict[int, float] = field(default_factory=dict)  # rank -> own share under sharing
    count: bool = True  # the counter moves for this step (eval/checkpoint: False)
    work: float | None = None  # units this step (default per_step)


@dataclass
class HostPlan:
    main: float  # cores per rank main thread
    autograd: float  # cores per rank backward thread
    worker: float  # cores per DataLoader worker
    invol: float  # involuntary switches/s over the tree
    vol: float = 3000.0
    throttled: float | None = None  # fraction of CFS periods throttled
    extra_rq: float = 0.0  # runnable tasks beyond the tree (busy loops on its cores)
    extra_pressure: float = 0.0
    eng_ok: bool = True


def run_trainer(c: TrainCfg) -> list[Frame]:
    rng = seeded(c.name, "work")
    nr = len(c.ranks)
    base_pid = 1000 + rng.randrange(50000)
    threads: list[Thread] = []
    rank_pids, tids = [], []
    tid = base_pid
    launcher = None
    if nr > 1:
        launcher = base_pid
        threads.append(Thread(base_pid, base_pid, "torchrun"))
        tid += 1
    for r in range(nr):
        pid = tid
        rank_pids.append(pid)
        main = Thread(pid, pid, "python3" if nr == 1 else f"pt_main_thread")
        ag = Thread(pid + 1, pid, "pt_autograd_0")
        pin = Thread(pid + 2, pid, "pt_data_pin")
        ev = Thread(pid + 3, pid, "cuda-EvtHandlr")
        rt = [main, ag, pin, ev]
        if nr > 1:
            rt.append(Thread(pid + 4, pid, "NCCL Progress"))
        ws = [Thread(pid + 10 + w, pid + 10 + w, "pt_data_worker") for w in range(c.workers)]
        threads += rt + ws
        tids.append((main, ag, pin, ev, rt[4] if nr > 1 else None, ws))
        tid += 10 + c.workers + 3
    label = c.cmd[:58] + ("…" if len(c.cmd) > 58 else "")
    all_gpus = c.all_gpus or c.ranks
    b = Builder(c.name, c.model, len(all_gpus), c.tick, c.start, threads, c.cores, label,
                (launcher or rank_pids[0],), (c.port,) if c.unit else (), gpu_indices=all_gpus,
                host_cpus=c.env.cpus)
    t0 = c.start - 3600 * (1 + rng.random() * 20)
    procs = [c.pod.proc(rank_pids[r], "python3", c.cmd + (f" --local-rank {r}" if nr > 1 else ""),
                        int(c.mem_gib * GIB * (1 + 0.01 * r)), t0, ppid=launcher or 1, rss=6 * GIB)
             for r in range(nr)]
    tls = [Timeline() for _ in range(nr)]
    ends: list[tuple[float, float]] = []  # (time, units)
    t, i = -2.0, 0
    while t < c.dur + 2:
        p: StepPlan = c.step(max(0.0, t), i, rng)
        jit = math.exp(rng.gauss(0, 0.02))
        gap = max(0.0, p.gap_s * math.exp(rng.gauss(0, 0.08)))
        comp = [p.gpu_s * jit * p.slow.get(r, 1.0) for r in range(nr)]
        slowest = max(comp)
        comm = p.comm_s if nr > 1 else 0.0
        for r in range(nr):
            own = p.own.get(r, 1.0)
            if p.spread_gap and gap > 0:
                tot = gap + comp[r]
                tls[r].add(Seg(t, t + tot, p.density * comp[r] / tot, p.sm, own))
            else:
                tls[r].add(Seg(t + gap, t + gap + comp[r], p.density, p.sm, own))
            if nr > 1:  # waiting in the all-reduce: an NCCL kernel spins on few SMs
                tls[r].add(Seg(t + gap + comp[r], t + gap + slowest + comm, 1.0, 0.12, own))
        end = t + gap + slowest + comm
        if p.count:
            ends.append((end, p.work if p.work is not None else c.per_step))
        t = end
        i += 1
    frames = []
    work = 0.0
    steps = 0
    k = 0
    per = max(1, round(c.model.samples_per_s * c.tick))
    nticks = int(round(c.dur / c.tick))
    for n in range(nticks):
        tt = n * c.tick
        scrape = tt + 0.045
        while k < len(ends) and ends[k][0] <= scrape:
            work += ends[k][1]
            steps += 1
            k += 1
        hp: HostPlan = c.host(tt, rng)
        quota = c.quota(tt) if c.quota else None
        gins = {}
        others = c.others(tt) if c.others else {}
        if c.neighbours:
            gins.update(c.neighbours(tt))
        for r, g in enumerate(c.ranks):
            busy, sm, own = tls[r].sample(tt, c.tick, per)
            mb = sum(busy) / len(busy)
            plist = [(procs[r], (own / mb) if mb > 0 else 1.0, hp.main + hp.autograd)]
            for op, demand, osm in others.get(g, []):
                # the other process fills the gaps the job leaves, and takes its slice
                fill = [min(1.0, x + (1 - x) * demand) for x in busy]
                add = sum(fill) / len(fill) - mb
                sm += add * osm
                mb2 = sum(fill) / len(fill)
                oshare = (mb2 - own) / mb2 if mb2 > 0 else 0.0
                plist = [(procs[r], own / mb2 if mb2 else 0.0, hp.main + hp.autograd),
                         (op, oshare, 0.9)]
                busy = fill
            gins[g] = GpuIn(busy=busy, sm_override=sm, occ_eff=0.42, dram_eff=0.3 * (sm / max(
                0.01, sum(busy) / len(busy))), tensor_eff=0.55 * (sm / max(0.01, sum(busy) / len(busy))),
                procs=plist, nvlink_mib_s=(42000.0 * sum(busy) / len(busy)) if nr > 1 else 0.0,
                pcie_mib_s=200.0 + 600.0 * hp.worker)
        for g in all_gpus:
            if g not in gins:
                gins[g] = GpuIn(busy=[0.0] * per, procs=[])
        rates = {}
        for main, ag, pin, ev, nccl, ws in tids:
            rates[main.tid] = hp.main
            rates[ag.tid] = hp.autograd
            rates[pin.tid] = 0.02 + 0.01 * hp.worker
            rates[ev.tid] = 0.003
            if nccl is not None:
                rates[nccl.tid] = 0.04
            for w in ws:
                rates[w.tid] = hp.worker * (1 + rng.gauss(0, 0.05))
        if launcher:
            rates[launcher] = 0.002
        own_cores = sum(rates.values())
        runnable = nr * (1.0 + c.workers * min(1.0, hp.worker)) + hp.extra_rq
        hs = host_in(c.env, tt, own_cores, runnable, rng, hp.extra_pressure)
        tree = TreeIn(rates, hp.vol, hp.invol, hp.throttled, quota)
        eng = None
        status = None
        if c.unit:
            if hp.eng_ok:
                eng = EngineSample(kind="trainer", url=f"http://127.0.0.1:{c.port}/metrics",
                                   generation_tokens_total=float(work),
                                   requests_finished_total=float(steps), work_unit=c.unit,
                                   tensor_parallel=1, data_parallel=nr,
                                   gpu_indices=tuple(c.ranks))
            else:
                status = SourceStatus(False, reason="timeout", detail="no answer in 1.0 s")
        launch = c.launch(tt, rng, rank_pids[0]) if c.launch else ()
        frames.append(b.frame(gins, hs, tree, eng, status, launch))
    return frames


# ------------------------------------------------------------------ serving
@dataclass
class ServeCfg:
    name: str
    engine: str  # vllm | sglang | llamacpp
    model: GpuModel
    gpus: tuple[int, ...]  # the engine's GPUs (tensor parallel)
    tick: float
    dur: float
    start: float
    env: HostEnv
    pod: Pod
    cores: tuple[int, ...]
    cond: Callable  # (t) -> dict of the moment's conditions
    model_name: str = "meta-llama/Llama-3.1-8B-Instruct"
    weights_gib: float = 15.0
    kv_pool_tokens: int = 400000
    kv_bytes_per_token: int = 131072
    block_size: int = 16
    max_seqs: int = 256
    quota: Callable | None = None
    port: int = 8000
    all_gpus: tuple[int, ...] | None = None
    neighbours: Callable | None = None
    others: Callable | None = None  # (t) -> {gpu: [(Proc, demand, sm)]}
    spec: bool = False
    launch: bool = False
    clients: int | None = None  # closed loop (a fixed set of clients); None: open-loop arrivals


DEFAULTS = dict(
    rate=4.0,  # requests/s
    prompt=900.0, out=220.0, cached=0.2, n=1.0,
    step_ms=12.0,  # decode step GPU time at batch 0
    per_seq_ms=0.12,  # GPU time per running sequence per step
    kv_ms_per_mtok=20.0,  # attention reads per million context tokens in the batch
    prefill_us_per_tok=55.0,  # GPU time per prompt token computed
    chunk=2048,  # chunked prefill budget per step (tokens)
    host_ms=4.0, host_per_seq_ms=0.03,  # scheduler/sampling CPU per step
    overlap=0.6,  # share of host time hidden under the GPU step
    cpu_share=1.0,  # what the engine's busiest thread gets of what it needs
    gpu_slow=1.0,  # GPU kernel stretch (time-slicing, clocks)
    extra_ms=0.0,  # per-step extra GPU time (oversized request's logprobs)
    sm=0.62, dram=0.45, tensor=0.22, occ=0.35,
    accept=0.7, k=4, draft_ms=2.2,  # speculative decoding
    preempt=0.0,  # preemptions per second forced
    kv_limit=1.0,  # fraction of the pool usable
    clock=1.0, throttle=(), temp=None,
    up=True, restart=False, loaded=1.0,  # engine endpoint answering; weights+pool loaded
    host_busy_extra=0.0, extra_rq=0.0, invol=40.0, throttled=None, extra_pressure=0.0,
    jitter_frac=0.0, jitter_ms=0.0,  # eBPF-visible launch-call preemption
    logprobs=0.0,
)


def run_server(c: ServeCfg) -> list[Frame]:
    rng = seeded(c.name, "work")
    pid = 2000 + rng.randrange(50000)
    t0 = c.start - 3600 * (2 + rng.random() * 40)
    tp = len(c.gpus)
    if c.engine == "vllm":
        threads = [Thread(pid, pid, "vllm"), Thread(pid + 1, pid, "python3"),
                   Thread(pid + 40, pid + 40, "VLLM::EngineCor"),
                   Thread(pid + 41, pid + 40, "python3"), Thread(pid + 42, pid + 40, "cuda-EvtHandlr")]
        gpu_pids = [pid + 40] if tp == 1 else [pid + 60 + r for r in range(tp)]
        if tp > 1:
            threads += [Thread(p, p, f"VLLM::Worker_TP") for p in gpu_pids]
        hot = pid + 40 if tp == 1 else gpu_pids[0]
        tok = pid
        det = pid + 1
        cmd = f"vllm serve {c.model_name} --port {c.port}" + (f" --tensor-parallel-size {tp}" if tp > 1 else "")
        gname = "VLLM::EngineCor"
        gcmd = "VLLM::EngineCore"
    elif c.engine == "sglang":
        threads = [Thread(pid, pid, "python3"), Thread(pid + 30, pid + 30, "sglang::schedul"),
                   Thread(pid + 31, pid + 30, "python3"), Thread(pid + 50, pid + 50, "sglang::detoken")]
        gpu_pids = [pid + 30]
        hot, tok, det = pid + 30, pid, pid + 50
        cmd = f"python3 -m sglang.launch_server --model-path {c.model_name} --port {c.port}"
        gname = "sglang::schedul"
        gcmd = "sglang::scheduler_TP0"
    else:
        threads = [Thread(pid, pid, "llama-server")] + [Thread(pid + 1 + k, pid, "llama-server")
                                                          for k in range(4)]
        gpu_pids = [pid]
        hot, tok, det = pid, pid + 1, pid + 2
        cmd = f"/app/llama-server -m /models/{c.model_name} --port {c.port} -ngl 99 --metrics -np 8"
        gname = "llama-server"
        gcmd = cmd
    label = cmd[:58] + ("…" if len(cmd) > 58 else "")
    all_gpus = c.all_gpus or c.gpus
    b = Builder(c.name, c.model, len(all_gpus), c.tick, c.start, threads, c.cores, label, (pid,),
                (c.port,), gpu_indices=all_gpus, host_cpus=c.env.cpus)
    pool_bytes = c.kv_pool_tokens * c.kv_bytes_per_token // tp
    mem = int(c.weights_gib * GIB / tp + pool_bytes + 2.6 * GIB)
    gprocs = [c.pod.proc(gpu_pids[r], gname, gcmd, mem, t0, ppid=pid, rss=5 * GIB)
              for r in range(len(c.gpus))]
    bounds = VLLM_BOUNDS if c.engine == "vllm" else SGLANG_BOUNDS
    hists = {k: Hist(k, v) for k, v in bounds.items()} if c.engine != "llamacpp" else {}
    # cumulative state
    S = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, drafts=0.0, dtok=0.0, acc=0.0,
             pf_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0, flops=0.0, rbytes=0.0, wbytes=0.0,
             retr=0.0, retr_tok=0.0)
    if rng.random() < 2:  # an engine that has run for a while before the recording
        warm = 3600 * (0.5 + rng.random() * 3)
        S["gen"] = 2.0e5 * warm / 3600 * 40
        S["prompt"] = S["gen"] * 4
        S["cached"] = S["prompt"] * 0.2
        S["fin"] = S["gen"] / 220
        S["steps"] = S["gen"] / 20
        S["pf_s"] = S["fin"] * 0.12
        S["dec_s"] = S["fin"] * 6.0
        S["fwd_s"] = warm * 0.7
        for h in hists.values():
            pass
    running, waiting = 0.0, 0.0
    per = max(1, round(c.model.samples_per_s * c.tick))
    frames = []
    nticks = int(round(c.dur / c.tick))
    up_prev = True
    for nt in range(nticks):
        tt = nt * c.tick
        d = dict(DEFAULTS)
        d["clients"] = c.clients
        d.update(c.cond(tt))
        dt = c.tick
        lam = max(0.0, d["rate"] * (1 + rng.gauss(0, 0.08)))
        nseq = d["n"]
        if not d["up"]:
            if up_prev:
                S = {k: 0.0 for k in S}
                hists = {k: Hist(k, v) for k, v in bounds.items()} if c.engine != "llamacpp" else {}
                running = waiting = 0.0
            up_prev = False
        else:
            up_prev = True
        ctx = d["prompt"] + d["out"] / 2
        loaded = d["loaded"]
        serving = d["up"] and loaded >= 1.0
        if serving:
            # decode step: GPU part and host part (the busiest thread)
            def tau_of(B):
                g = (d["step_ms"] + d["per_seq_ms"] * B + d["kv_ms_per_mtok"] * B * ctx / 1e6
                     + d["extra_ms"]) * d["gpu_slow"] / d["clock"] / 1000.0
                if c.spec:
                    g += d["k"] * d["draft_ms"] * d["gpu_slow"] / d["clock"] / 1000.0
                h = (d["host_ms"] + d["host_per_seq_ms"] * B) / 1000.0 / max(0.05, d["cpu_share"])
                # asynchronous scheduling hides the host loop under the GPU step, up to a point
                # a preempted launch thread leaves the GPU idle for the time it is off the CPU
                jit = d["jitter_frac"] * d["jitter_ms"] / 1000.0
                return g, max(g, h) + (1 - d["overlap"]) * min(g, h) * 0.25 + jit
            tok_per_step = 1.0
            if c.spec:
                a, k = d["accept"], d["k"]
                tok_per_step = (1 - a ** (k + 1)) / (1 - a) if a < 0.999 else k + 1
            kv_cap = c.kv_pool_tokens * d["kv_limit"] / max(1.0, ctx)
            cap = min(c.max_seqs, kv_cap)
            if d.get("clients"):  # closed loop: a fixed set of clients, each waits for its answer
                N = d["clients"] * nseq
                running = min(cap, N)
                g, tau = tau_of(max(1.0, running))
                seq_time = d["out"] * tau / tok_per_step
                waiting = max(0.0, (N - running) / max(1.0, nseq))
                finish_rate = running / max(1e-6, seq_time) / max(1.0, nseq)
                admit = finish_rate * dt
            else:  # open loop: requests arrive whatever the latency; a queue builds past capacity
                waiting += lam * dt
                g, tau = tau_of(max(1.0, running))
                for _ in range(3):
                    g, tau = tau_of(max(1.0, running))
                    seq_time = d["out"] * tau / tok_per_step
                    want = lam * nseq * seq_time
                    running = min(cap, 0.6 * running + 0.4 * want) if want > 0 else running * 0.5
                finish_rate = running / max(1e-6, seq_time) / max(1.0, nseq)  # requests/s
                admit = min(waiting, (finish_rate * dt + max(0.0, cap - running) / max(1.0, nseq) * 0.5))
                admit = max(0.0, admit)
                waiting = max(0.0, waiting - admit)
                if waiting < 0.5 and rng.random() < 0.5:
                    waiting = 0.0
            xpf = d.get("pf_rate", 0.0) * dt
            ptoks = admit * d["prompt"] + xpf * d.get("pf_tokens", 0.0)
            computed = admit * d["prompt"] * (1 - d["cached"]) + xpf * d.get("pf_tokens", 0.0)
            pf_gpu = computed * d["prefill_us_per_tok"] * d["gpu_slow"] / d["clock"] / 1e6
            pre_rate = d["preempt"]
            recompute = pre_rate * dt * ctx * d["prefill_us_per_tok"] * d["gpu_slow"] / 1e6
            frac_pf = min(0.8, (pf_gpu + recompute) / dt)
            active = 1.0 if running > 0.5 else running
            dec_frac = (1 - frac_pf) * active
            gen = dec_frac * dt * running / tau * tok_per_step
            busy = (g / tau) * dec_frac + frac_pf
            fin = finish_rate * dt * (1 - frac_pf)
            # latencies
            chunk_t = d["chunk"] * d["prefill_us_per_tok"] * d["gpu_slow"] / 1e6
            steps = dec_frac * dt / tau
            chunk_steps = (pf_gpu + recompute) / max(1e-6, chunk_t)
            itl_base = tau / tok_per_step
            w_chunk = min(0.95, chunk_steps / max(1e-6, steps + chunk_steps)) if steps > 0 else 0.0
            parts = [(1 - w_chunk - d["jitter_frac"], itl_base, 0.18 + (0.25 if c.spec else 0)),
                     (w_chunk, tau + chunk_t, 0.25)]
            if d["jitter_frac"]:
                parts.append((d["jitter_frac"], itl_base + d["jitter_ms"] / 1000, 0.5))
            if (d["throttled"] or 0) > 0.3 and c.quota is not None:
                stall = 0.1 * (1 - min(0.95, c.quota(tt) / max(0.2, c.quota(tt) / max(0.05, d["cpu_share"]))))
                wq = 0.08 * d["throttled"]
                parts[0] = (parts[0][0] - wq, parts[0][1], parts[0][2])
                parts.append((wq, itl_base + stall, 0.4))
            qwait = waiting / max(0.05, admit / dt) if admit > 0 else (waiting / max(lam, 0.1))
            prefill_lat = d["prompt"] * (1 - d["cached"]) * d["prefill_us_per_tok"] * d["gpu_slow"] / 1e6
            ttft_med = qwait + prefill_lat + tau * (1 + 2 * min(1, frac_pf * 3)) + 0.03 + d.get("ttft_extra", 0.0)
            e2e_med = ttft_med + d["out"] * itl_base * (1 + w_chunk)
            if hists:
                hists["itl"].observe(gen, [p for p in parts if p[0] > 0])
                hists["ttft"].observe(admit, [(1.0, ttft_med, 0.45)])
                if xpf:
                    hists["ttft"].observe(xpf, [(1.0, ttft_med + d["pf_tokens"] * d["prefill_us_per_tok"] / 1e6, 0.4)])
                hists["e2e"].observe(fin, [(1.0, e2e_med, 0.4)])
                hists["queue"].observe(admit, [(1.0, max(0.002, qwait), 0.6)])
                if "tpot" in hists:
                    hists["tpot"].observe(fin, [(1.0, itl_base * (1 + w_chunk), 0.2)])
                    hists["params_n"].observe_values(admit * (1 - d.get("big_frac", 0.0)), 1.0)
                    if d.get("big_frac", 0.0):
                        hists["params_n"].observe_values(admit * d["big_frac"], d.get("big_n", 8.0))
                    hists["params_max_tokens"].observe(admit, [(1.0, d["out"] * 2, 0.5)])
                    hists["max_generation_tokens"].observe(fin, [(1.0, d["out"], 0.5)])
            S["gen"] += gen
            S["prompt"] += ptoks
            S["cached"] += ptoks - computed
            S["fin"] += fin
            S["pre"] += pre_rate * dt
            S["pf_s"] += admit * (prefill_lat + qwait * 0.0)
            S["dec_s"] += running * dt * dec_frac
            S["fwd_s"] += busy * dt
            S["steps"] += steps
            S["flops"] += 2 * 8.0e9 * (gen + computed) / tp
            S["rbytes"] += (steps * c.weights_gib * GIB + gen * ctx * c.kv_bytes_per_token) / tp
            S["wbytes"] += (gen + computed) * c.kv_bytes_per_token / tp
            S["retr"] += d.get("retract", 0.0) * dt
            S["retr_tok"] += d.get("retract", 0.0) * dt * ctx
            if c.spec:
                drafts = steps * running
                S["drafts"] += drafts
                S["dtok"] += drafts * d["k"]
                S["acc"] += drafts * (tok_per_step - 1)
            kv_used = min(1.0, running * ctx / c.kv_pool_tokens)
            # host side
            need = (d["host_ms"] + d["host_per_seq_ms"] * running) / 1000.0 * steps / dt
            hot_rate = min(1.0, need * 1.0 + 0.25 * active) * min(1.0, d["cpu_share"] + 0.0)
            if d["cpu_share"] < 0.999:
                hot_rate = min(hot_rate, d["cpu_share"])
            tok_rate = min(0.9, 0.02 + lam * d["prompt"] * 2e-5 + gen / dt * 4e-5)
            if d["cpu_share"] < 0.999:
                tok_rate *= d["cpu_share"]
            det_rate = min(0.6, gen / dt * 3e-5) * min(1.0, d["cpu_share"] + 0.2)
        else:
            gen = fin = admit = 0.0
            busy = 0.0
            running = waiting = 0.0
            kv_used = 0.0
            hot_rate = 0.6 if d["up"] or loaded > 0 else 0.0
            tok_rate = det_rate = 0.01 if d["up"] else 0.0
            steps = 0.0
        # GPUs
        gins = {}
        busy_s = [max(0.0, min(1.0, busy * (1 + rng.gauss(0, 0.04)))) for _ in range(per)]
        others = c.others(tt) if c.others else {}
        if c.neighbours:
            gins.update(c.neighbours(tt))
        loaded_mem = int(mem * min(1.0, max(0.0, loaded))) if (d["up"] or loaded > 0) else 0
        for r, g in enumerate(c.gpus):
            gp = gprocs[r]
            gp.mem = loaded_mem
            plist = [(gp, 1.0, hot_rate)] if loaded_mem > 0 else []
            sm_eff = d["sm"]
            bl = busy_s
            for op, demand, osm in others.get(g, []):
                fill = [min(1.0, x + (1 - x) * demand) for x in bl]
                mb, mf = sum(bl) / per, sum(fill) / per
                own = mb / d["gpu_slow"] if d["gpu_slow"] > 1 else mb
                share = own / mf if mf else 0.0
                plist = [(gp, share, hot_rate), (op, 1 - share, 0.9)]
                sm_eff = (mb * d["sm"] + (mf - mb) * osm) / max(1e-6, mf)
                bl = fill
            gins[g] = GpuIn(busy=bl, sm_eff=sm_eff, occ_eff=d["occ"], dram_eff=d["dram"],
                            tensor_eff=d["tensor"], clock_factor=d["clock"],
                            throttle=tuple(d["throttle"]), temp_target=d["temp"], procs=plist,
                            nvlink_mib_s=(9000.0 * busy) if tp > 1 else 0.0)
        for g in all_gpus:
            gins.setdefault(g, GpuIn(busy=[0.0] * per, procs=[]))
        rates = {x.tid: 0.0 for x in threads}
        rates[hot] = hot_rate
        rates[tok] = tok_rate
        rates[det] = det_rate
        for x in threads:
            if x.tid not in (hot, tok, det) and serving:
                rates[x.tid] = 0.01
        if tp > 1 and c.engine == "vllm":
            for p in gpu_pids[1:]:
                rates[p] = hot_rate * 0.8
        own_cores = sum(rates.values())
        quota = c.quota(tt) if c.quota else None
        hs = host_in(c.env, tt, own_cores + d["host_busy_extra"], 2 + running * 0.02 + d["extra_rq"],
                     rng, d["extra_pressure"])
        tree = TreeIn(rates, 800 + 30 * steps / dt if serving else 200, d["invol"], d["throttled"],
                      quota)
        eng = None
        status = None
        if d["up"]:
            eng = _engine_sample(c, S, hists, running, waiting, kv_used, d, loaded)
            if d.get("scrape_fail"):
                eng, status = None, SourceStatus(False, reason="timeout",
                                                 detail="no answer in 1.0 s")
        else:
            status = SourceStatus(False, reason="connection refused",
                                  detail=f"http://127.0.0.1:{c.port}/metrics")
        launch = ()
        if c.launch and serving:
            calls = int(steps * (1 if c.engine == "vllm" else 30))
            launch = (launch_hist(rng, "cudaGraphLaunch", hot, calls, 9000, 0.35,
                                  d["jitter_frac"] * 3, d["jitter_ms"] * 1e6 * 0.8),
                      launch_hist(rng, "cuLaunchKernel", hot, calls * 6, 4200, 0.3,
                                  d["jitter_frac"], d["jitter_ms"] * 1e6 * 0.8))
        frames.append(b.frame(gins, hs, tree, eng, status, launch,
                              tree_visible=d["up"] or loaded > 0))
    return frames


def _engine_sample(c: ServeCfg, S, hists, running, waiting, kv_used, d, loaded) -> EngineSample:
    tp = len(c.gpus)
    common = dict(url=f"http://127.0.0.1:{c.port}/metrics", model=c.model_name,
                  generation_tokens_total=round(S["gen"]), prompt_tokens_total=round(S["prompt"]),
                  requests_running=float(round(running)), requests_waiting=float(round(waiting)),
                  tensor_parallel=tp, data_parallel=1, gpu_indices=tuple(c.gpus))
    if c.engine == "vllm":
        blocks = c.kv_pool_tokens // c.block_size
        spec = {}
        if c.spec:
            spec = dict(spec_drafts_total=round(S["drafts"]), spec_draft_tokens_total=round(S["dtok"]),
                        spec_accepted_tokens_total=round(S["acc"]))
        return EngineSample(
            kind="vllm", **common, prompt_tokens_cached_total=round(S["cached"]),
            requests_finished_total=round(S["fin"]), kv_usage_ratio=round(kv_used, 5),
            num_gpu_blocks=blocks, block_size=c.block_size,
            kv_pool_tokens=c.kv_pool_tokens,
            kv_pool_bytes=c.kv_pool_tokens * c.kv_bytes_per_token // tp,
            cache_dtype="auto", histograms=tuple(h.sample() for h in hists.values()),
            preemptions_total=round(S["pre"]),
            waiting_by_reason={"capacity": float(round(waiting)) if d["kv_limit"] < 1 or d["preempt"]
                               else 0.0,
                               "deferred": 0.0 if (d["kv_limit"] < 1 or d["preempt"]) else float(round(waiting))},
            flops_total=S["flops"], read_bytes_total=S["rbytes"], write_bytes_total=S["wbytes"],
            prefill_seconds_total=round(S["pf_s"], 3), decode_seconds_total=round(S["dec_s"], 3),
            corrupted_requests_total=0.0, **spec)
    if c.engine == "sglang":
        used = kv_used * c.kv_pool_tokens
        evict = max(0.0, (1 - kv_used) * c.kv_pool_tokens * 0.3) if kv_used < 0.9 else 0.0
        spec = {}
        if c.spec:
            a, k = d["accept"], d["k"]
            spec = dict(spec_accept_ratio=a, spec_accept_length=(1 - a ** (k + 1)) / (1 - a))
        return EngineSample(
            kind="sglang", **common, prompt_tokens_cached_total=round(S["cached"]),
            requests_finished_total=round(S["fin"]), kv_usage_ratio=round(kv_used, 5),
            kv_pool_tokens=c.kv_pool_tokens, histograms=tuple(h.sample() for h in hists.values()),
            retracted_requests_total=round(S["retr"]), retracted_input_tokens_total=round(S["retr_tok"]),
            kv_used_tokens=float(round(used)), kv_free_tokens=float(round(c.kv_pool_tokens - used - evict)),
            kv_evictable_tokens=float(round(evict)), forward_seconds_total=round(S["fwd_s"], 3),
            flops_total=S["flops"], read_bytes_total=S["rbytes"], write_bytes_total=S["wbytes"], **spec)
    spec = {}
    if c.spec:
        spec = dict(spec_drafts_total=round(S["drafts"]), spec_draft_tokens_total=round(S["dtok"]),
                    spec_accepted_tokens_total=round(S["acc"]))
    return EngineSample(
        kind="llamacpp", **common, prompt_tokens_cached_total=round(S["cached"]),
        prefill_seconds_total=round(S["pf_s"], 3), decode_seconds_total=round(S["dec_s"], 3),
        decode_steps_total=round(S["steps"]), **spec)
