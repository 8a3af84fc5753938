"""A host with GPUs: training jobs, other GPU processes, and the frame each tick becomes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import (EngineSample, Frame, HostSample, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from .physics import GIB, GPUS, MODELS, GpuPhysics, rng_for, util_samples
from .serving import Serving, ServeCfg, _f

BIN = 0.2  # the driver's GPU-Util sample period used here (5 a second)

KIND_ACT = {  # per second of the kind: (sm, occ, tensor, dram)
    "compute": (0.82, 0.36, 0.50, 0.33),
    "eval": (0.68, 0.30, 0.36, 0.30),
    "nccl": (0.085, 0.02, 0.0, 0.012),
    "comm": (0.16, 0.05, 0.0, 0.26),
    "tiny": (0.035, 0.008, 0.0, 0.01),
    "other": (0.80, 0.40, 0.45, 0.30),
}


@dataclass
class TrainCfg:
    gpus: tuple[int, ...] = (0,)
    gpu: str = "H100"
    model: str = "llama8b"
    step_s: float = 0.55  # compute per step per rank at full clocks
    comm_s: float = 0.04  # exposed all-reduce / reduce-scatter time
    tokens_per_step: int = 262144
    unit: str = "tokens"  # tokens or samples
    samples_per_step: int = 64
    workers: int = 8
    loader_s: float = 0.2  # one batch per rank per worker-cycle: batch time / workers
    loader_cpu_bound: bool = True
    seq_var: float = 0.04  # step-to-step variation (sequence lengths)
    ckpt_every: float = 0.0
    ckpt_s: float = 0.0
    ckpt_sharded: bool = True
    eval_every: float = 0.0
    eval_s: float = 0.0
    host_step_s: float = 0.012  # the launching thread's CPU per step
    mem_frac: float = 0.82
    port: int = 9100
    scrape_s: float = 1.0
    ebpf: bool = False
    pid0: int = 52000
    fsdp: bool = False
    uptime_h: float = 5.0


class Trainer:
    def __init__(self, cfg: TrainCfg, rng, fault, t_end):
        self.c, self.r, self.fault = cfg, rng, fault
        self.n = len(cfg.gpus)
        self.bins: dict[int, dict[str, list[float]]] = {}
        nb = int(t_end / BIN) + 50
        self.nb = nb
        self.acc = {g: {k: [0.0] * nb for k in KIND_ACT} for g in cfg.gpus}
        self.ckpt_bins = [0.0] * nb
        self.events: list[tuple[float, int]] = []  # (time, tokens) at step ends
        self.host_bins = {"main": [0.0] * nb, "loader": [0.0] * nb, "ckpt": [0.0] * nb}
        self._simulate(t_end)
        up = cfg.uptime_h * 3600
        self.tok0 = float(int(up / (cfg.step_s + cfg.comm_s) * 0.9) * cfg.tokens_per_step)
        self.steps0 = float(int(up / (cfg.step_s + cfg.comm_s) * 0.9))
        self.samp0 = self.steps0 * cfg.samples_per_step

    def _add(self, g, kind, a, b):
        if b <= a:
            return
        arr = self.acc[g][kind] if g is not None else self.ckpt_bins
        i = int(a / BIN)
        while a < b and i < self.nb:
            edge = (i + 1) * BIN
            seg = min(b, edge) - a
            arr[i] += seg
            a = min(b, edge)
            i += 1

    def _host(self, key, a, b, cores):
        arr = self.host_bins[key]
        i = int(a / BIN)
        while a < b and i < self.nb:
            edge = (i + 1) * BIN
            arr[i] += (min(b, edge) - a) * cores
            a = min(b, edge)
            i += 1

    def _simulate(self, t_end):
        c, r = self.c, self.r
        now = 0.0
        ready = [r.uniform(0, 0.1) for _ in c.gpus]
        next_ckpt = c.ckpt_every if c.ckpt_every else 1e18
        next_eval = c.eval_every if c.eval_every else 1e18
        while now < t_end:
            fx = self.fault(now)
            if now >= next_ckpt:
                dur = c.ckpt_s * r.uniform(0.9, 1.15)
                for g in c.gpus:
                    if c.ckpt_sharded or g == c.gpus[0]:
                        self._add(g, "tiny", now, now + 0.05 * dur)
                    else:  # waiting at the next collective for rank 0 to finish writing
                        self._add(g, "nccl", now, now + dur)
                self._add(None, "ckpt", now, now + dur)
                self._host("ckpt", now, now + dur, 1.6)
                now += dur
                next_ckpt += c.ckpt_every
                continue
            if now >= next_eval:
                end = now + c.eval_s
                while now < end:
                    st = c.step_s * 0.36 * r.uniform(0.9, 1.1)
                    for g in c.gpus:
                        self._add(g, "eval", now, now + st)
                    self._host("main", now, now + st, 0.5 * self.n)
                    now += st + 0.004
                next_eval += c.eval_every
                continue
            common = r.lognormvariate(0, c.seq_var) * fx.get("work", 1.0)
            loader_s = c.loader_s * fx.get("loader", 1.0)
            ends = []
            waits = []
            for k, g in enumerate(c.gpus):
                # DataLoader: a batch is ready loader_s after the previous one was taken
                w = max(0.0, ready[k] - now)
                waits.append(w)
                comp = c.step_s * common * r.lognormvariate(0, 0.012)
                comp *= fx.get("rank_factor", {}).get(g, 1.0)
                comp /= fx.get("clock", {}).get(g, 1.0) ** 0.85
                sh = fx.get("shared", {}).get(g, 0.0)
                tiny = fx.get("tiny_s", 0.0)
                host = c.host_step_s * fx.get("host_mult", 1.0) / fx.get("cpu_share", 1.0)
                stall = fx.get("jitter_s", 0.0) * (r.random() < fx.get("jitter_p", 1.0))
                gpu_time = (comp + tiny) / (1 - sh)
                span = max(gpu_time, host + 0.15 * gpu_time) if host > 0.3 * gpu_time else \
                    gpu_time
                start = now + w
                if span > gpu_time:  # host-bound: the GPU idles between launches
                    frac = gpu_time / span
                    self._add(g, "compute", start, start + comp * frac / (1 - sh) if sh else
                              start + comp * frac)
                    self._add(g, "tiny", start + comp * frac, start + (comp + tiny) * frac)
                else:
                    self._add(g, "compute", start, start + comp / (1 - sh) if sh else
                              start + comp)
                    if tiny:
                        e0 = start + comp / (1 - sh)
                        self._add(g, "tiny", e0, e0 + tiny)
                if sh:
                    self._add(g, "other", start, start + gpu_time * sh)
                if stall:  # launches held on the host: the GPU drains and idles
                    span += stall
                ends.append(start + span)
                self._host("main", start, start + span, min(1.0, host / span + 0.25))
            barrier = max(ends)
            comm = c.comm_s * (1 + 0.05 * r.random()) if self.n > 1 else 0.0
            for k, g in enumerate(c.gpus):
                if self.n > 1:
                    self._add(g, "nccl", ends[k], barrier)
                    self._add(g, "comm", barrier, barrier + comm)
            step_end = barrier + comm + 0.002
            for k in range(len(c.gpus)):
                # workers prefetch: the next batch is ready loader_s after this one was
                # ready (pipelined over workers), never before the step that takes it
                ready[k] = max(ready[k], now) + loader_s * r.lognormvariate(0, 0.15)
            lw = min(c.workers, c.workers * min(1.0, (step_end - now) and
                                                loader_s / max(1e-3, step_end - now)))
            self._host("loader", now, step_end, lw * (0.95 if c.loader_cpu_bound else 0.12)
                       * self.n)
            self.events.append((step_end, 1))
            now = step_end

    # per tick summary
    def gpu_act(self, g, t, dt):
        a, b = int(round(t / BIN)), int(round((t + dt) / BIN))
        acc = self.acc[g]
        tot = {k: sum(acc[k][a:b]) / dt for k in acc}
        busy = min(1.0, sum(tot.values()))
        sm = sum(tot[k] * KIND_ACT[k][0] for k in tot)
        occ = sum(tot[k] * KIND_ACT[k][1] for k in tot)
        ten = sum(tot[k] * KIND_ACT[k][2] for k in tot) * (1.0 if self.c.model != "qwen05b"
                                                          else 0.35)
        dram = sum(tot[k] * KIND_ACT[k][3] for k in tot)
        samples = []
        for i in range(a, b):
            v = min(1.0, sum(acc[k][i] for k in acc) / BIN)
            samples.append(float(round(min(100.0, max(0.0, 100 * v + self.r.gauss(0, 1.5))))))
        m = MODELS[self.c.model]
        nvl = (tot["comm"] * 2 * m.params * 2 / (2**20) * 0.9 / max(self.c.comm_s, 1e-3)
               * 0.02) if self.n > 1 else 0.0
        ck = sum(self.ckpt_bins[a:b]) / dt
        return {"busy": busy, "sm": sm, "occ": occ, "tensor": ten, "dram": dram,
                "util_samples": tuple(samples), "nvl": nvl,
                "pcie_tx": 60.0 + ck * 12000.0, "pcie_rx": 300.0 + busy * 200,
                "mem_used": int(GPUS[self.c.gpu].mem_total * self.c.mem_frac)}

    def counters(self, t):
        steps = sum(1 for e, _ in self.events if e <= t)
        return steps

    def host_cores(self, key, t, dt):
        a, b = int(round(t / BIN)), int(round((t + dt) / BIN))
        return sum(self.host_bins[key][a:b])


@dataclass
class Other:
    """Another GPU process (a notebook, a second job, a monitoring agent, an idle holder)."""
    gpu: int
    name: str
    cmdline: str
    user: str
    mem: int
    act: object  # f(t) -> dict(busy, sm, tensor, dram) or None when not running
    pid: int = 0
    start: float = 0.0
    cpu: float = 0.05


@dataclass
class Plan:
    name: str
    gpu: str
    ngpus: int
    tick: float
    duration: float
    start_wall: float
    cpus: int = 96
    serve: ServeCfg | None = None
    train: TrainCfg | None = None
    extra_serves: list = field(default_factory=list)  # (ServeCfg, fault) on other GPUs
    extra_trains: list = field(default_factory=list)  # (TrainCfg, fault)
    others: list = field(default_factory=list)
    fault: object = None  # f(t) -> dict for the watched workload
    box_fault: object = None  # f(t) -> dict: power_limit {g: W}, cooling {g}, brake {g},
    # hidden_cap {g}, psi, runq, hog_cores, endpoint_down, scrape_timeout
    pinned: bool = True
    idle_procs: bool = True


def _no_fault(t):
    return {}


def build(plan: Plan) -> list[Frame]:
    r = rng_for(plan.name, "box")
    spec = GPUS[plan.gpu]
    phys = [GpuPhysics(spec, i, rng_for(plan.name, f"gpu{i}"), 0x18 + i * 0x10)
            for i in range(plan.ngpus)]
    fault = plan.fault or _no_fault
    import dataclasses
    if plan.serve is not None:
        plan.serve = dataclasses.replace(plan.serve, gpu=plan.gpu)
    if plan.train is not None:
        plan.train = dataclasses.replace(plan.train, gpu=plan.gpu)
    plan.extra_serves = [(dataclasses.replace(c, gpu=plan.gpu), f) for c, f in plan.extra_serves]
    plan.extra_trains = [(dataclasses.replace(c, gpu=plan.gpu), f) for c, f in plan.extra_trains]
    bfault = plan.box_fault or _no_fault
    serv = Serving(plan.serve, rng_for(plan.name, "serve"), fault, plan.start_wall) \
        if plan.serve else None
    trn = Trainer(plan.train, rng_for(plan.name, "train"), fault, plan.duration + 2) \
        if plan.train else None
    xserv = [(Serving(cfg, rng_for(plan.name, f"xs{i}"), f or _no_fault, plan.start_wall), f or
              _no_fault) for i, (cfg, f) in enumerate(plan.extra_serves)]
    xtrn = [Trainer(cfg, rng_for(plan.name, f"xt{i}"), f or _no_fault, plan.duration + 2)
            for i, (cfg, f) in enumerate(plan.extra_trains)]
    # processes and the pinned tree
    boot = plan.start_wall - (plan.serve.uptime_h if plan.serve else
                              (plan.train.uptime_h if plan.train else 6.0)) * 3600
    tree_cpu0 = {}
    frames: list[Frame] = []
    dt = plan.tick
    nt = int(plan.duration / dt)
    psi = r.uniform(0.2, 1.5)
    ctx_total = int(r.uniform(1e9, 5e9))
    cum = {}  # thread cumulative CPU
    inv = {"tree": int(r.uniform(200, 3000))}
    vol = {"tree": int(r.uniform(1e5, 1e6))}
    last_es = None
    last_scrape = -1e9
    reset_offset = 0.0
    prev_down = False
    for i in range(nt):
        t = i * dt
        fx = fault(t)
        bx = bfault(t)
        acts: dict[int, list[dict]] = {g: [] for g in range(plan.ngpus)}
        procs: list[ProcSample] = []
        host_cores = bx.get("bg_cores", 3.0 + 1.5 * math.sin(t / 97.0)) + bx.get("hog_cores",
                                                                                    0.0)
        launch = ()
        # clocks from the previous tick feed the step-time model
        clock = {g: phys[g].clock_factor for g in range(plan.ngpus)}
        engine = None
        tree_pids: tuple[int, ...] = ()
        threads: list[tuple[int, int, str, float]] = []
        label = ""
        ports: tuple[int, ...] = ()
        down = bx.get("endpoint_down", False)
        if serv is not None:
            c = serv.c
            sfx = dict(fx)
            sfx["clock"] = min(clock[g] for g in c.gpus) * fx.get("clock_mult", 1.0)
            if bx.get("thermal_mem"):
                sfx["memf"] = 0.85
            if down:
                act = {"busy": bx.get("load_busy", 0.0), "sm": bx.get("load_busy", 0.0) * 0.3,
                       "mem_used": bx.get("load_mem", 0)}
                serv.tick_stats = {"gen_rate": 0.0, "launches": {}}
            else:
                if prev_down:  # the restarted engine: counters from zero
                    _reset(serv)
                act = serv.tick(t, dt, sfx)
            prev_down = down
            for g in c.gpus:
                a = dict(act)
                if c.tp > 1:
                    a["busy"] = min(1.0, a["busy"] * r.uniform(0.985, 1.0))
                acts[g].append(a)
            api_pid, core_pid = c.pid0, c.pid0 + 37
            workers = [c.pid0 + 60 + k for k in range(c.tp)] if c.tp > 1 else []
            tree_pids = (api_pid, core_pid, *workers)
            label = {"vllm": f"vllm serve {serv.m.name} --port {c.url_port}",
                     "sglang": f"sglang.launch_server --model-path {serv.m.name} --port…",
                     "llamacpp": f"llama-server -m /models/{serv.m.name.split('/')[-1]}"
                                 f"-Q4_K_M.gguf --port {c.url_port}"}[c.engine]
            ports = (c.url_port,)
            hc = serv.host_cpu
            ecore = "VLLM::EngineCor" if c.engine == "vllm" else (
                "sglang::schedul" if c.engine == "sglang" else "llama-server")
            threads = [(core_pid, core_pid, ecore, hc["core"]),
                       (api_pid, api_pid, "python3" if c.engine != "llamacpp" else
                        "llama-server", hc["api"]),
                       (core_pid + 5, core_pid, "python3", 0.01 * dt),
                       (api_pid + 3, api_pid, "python3", 0.004 * dt),
                       (core_pid + 9, core_pid, "cuda-EvtHandlr", 0.0005 * dt)]
            for k, w in enumerate(workers):
                threads.append((w, w, f"VLLM::Worker_TP{k}" if c.engine == "vllm"
                                else f"sglang::sched_TP{k}", hc["workers"] / max(1, c.tp)))
            if c.engine == "llamacpp":
                threads = [(api_pid, api_pid, "llama-server", hc["core"]),
                           (api_pid + 2, api_pid, "llama-server", hc["api"])]
                tree_pids = (api_pid,)
            host_cores += sum(x[3] for x in threads) / dt
            gpu_pids = workers or [core_pid if c.engine != "llamacpp" else api_pid]
            for k, g in enumerate(c.gpus):
                pid = gpu_pids[k % len(gpu_pids)]
                procs.append(ProcSample(
                    pid=pid, gpu_index=g, name=ecore if c.tp == 1 else f"VLLM::Worker_TP{k}"[:15],
                    cmdline=_cmdline(c, serv, k), user="svc-llm", ppid=api_pid,
                    start_time_s=round(boot + 35.0, 2),
                    mem_bytes=int(act.get("mem_used", 0) - 0.52 * GIB) if act.get("mem_used")
                    else None,
                    sm_util_pct=float(round(100 * act["busy"])) if act.get("busy") is not None
                    else None,
                    cpu_s=None, rss_bytes=int(3.1 * GIB), cgroup="/system.slice/vllm.service"
                    if c.engine == "vllm" else "/kubepods/burstable/pod7f3e/"
                    + "c" * 12, mem_util_pct=float(round(100 * act.get("dram", 0) * 0.9))))
            if c.ebpf and not down:
                launch = serv.launch_hists(core_pid if c.engine != "llamacpp" else api_pid,
                                           dt, fx)
        if trn is not None:
            c = trn.c
            tree_pids = (c.pid0, *[c.pid0 + 10 + k for k in range(trn.n)],
                         *[c.pid0 + 100 + k for k in range(min(16, trn.n * c.workers))])
            label = f"torchrun --nproc-per-node {trn.n} train.py --config cfg/{c.model}.yaml"
            ports = (c.port,)
            main = trn.host_cores("main", t, dt)
            loader = trn.host_cores("loader", t, dt)
            ck = trn.host_cores("ckpt", t, dt)
            host_cores += (main + loader + ck) / dt
            threads = []
            for k in range(trn.n):
                pid = c.pid0 + 10 + k
                threads.append((pid, pid, "python3", main / trn.n + (ck if k == 0 else 0)))
                threads.append((pid + 1000, pid, "pt_autograd_0", main / trn.n * 0.3))
            nw = min(16, trn.n * c.workers)
            for k in range(nw):
                pid = c.pid0 + 100 + k
                threads.append((pid, pid, "pt_data_worker", loader / nw))
            for k, g in enumerate(c.gpus):
                a = trn.gpu_act(g, t, dt)
                acts[g].append(a)
                procs.append(ProcSample(
                    pid=c.pid0 + 10 + k, gpu_index=g, name="python3",
                    cmdline=f"/opt/conda/bin/python3 -u train.py --config cfg/{c.model}.yaml "
                            f"--local-rank {k}", user="mlops", ppid=c.pid0,
                    start_time_s=round(boot + 12.0, 2), mem_bytes=int(a["mem_used"] - 0.5 * GIB),
                    sm_util_pct=float(round(100 * a["busy"])), rss_bytes=int(14 * GIB),
                    cgroup="/slurm/uid_1000/job_88120/step_0", slurm_job="88120", slurm_step="0",
                    mem_util_pct=float(round(100 * a["dram"]))))
        for k, (xs, xf) in enumerate(xserv):
            xa = xs.tick(t, dt, dict(xf(t), clock=min(clock[g] for g in xs.c.gpus)))
            for g in xs.c.gpus:
                acts[g].append(xa)
                procs.append(ProcSample(pid=xs.c.pid0 + 37, gpu_index=g, name="VLLM::EngineCor",
                                        cmdline=_cmdline(xs.c, xs, 0), user=f"tenant{k + 1}",
                                        ppid=xs.c.pid0, start_time_s=round(boot - 3600 * k, 2),
                                        mem_bytes=int(xa["mem_used"] - 0.52 * GIB),
                                        sm_util_pct=float(round(100 * xa["busy"])),
                                        rss_bytes=int(3 * GIB)))
            host_cores += sum(xs.host_cpu.values()) / dt
        for k, xt in enumerate(xtrn):
            for j, g in enumerate(xt.c.gpus):
                a = xt.gpu_act(g, t, dt)
                acts[g].append(a)
                procs.append(ProcSample(pid=xt.c.pid0 + 10 + j, gpu_index=g, name="python3",
                                        cmdline=f"python3 finetune.py --rank {j}", user="research",
                                        ppid=xt.c.pid0, start_time_s=round(boot + 999, 2),
                                        mem_bytes=a["mem_used"] - int(0.5 * GIB),
                                        sm_util_pct=float(round(100 * a["busy"])),
                                        rss_bytes=int(9 * GIB)))
            host_cores += (xt.host_cores("main", t, dt) + xt.host_cores("loader", t, dt)) / dt
        for o in plan.others:
            a = o.act(t)
            if a is None:
                continue
            acts[o.gpu].append(dict(a, mem_used=o.mem + int(0.5 * GIB)))
            procs.append(ProcSample(pid=o.pid, gpu_index=o.gpu, name=o.name, cmdline=o.cmdline,
                                    user=o.user, ppid=1, start_time_s=round(
                                        plan.start_wall + o.start, 2), mem_bytes=o.mem,
                                    sm_util_pct=float(round(100 * a.get("busy", 0))),
                                    rss_bytes=int(1.2 * GIB)))
            host_cores += o.cpu
        # GPUs
        gsamples = []
        for g in range(plan.ngpus):
            lst = acts[g]
            comb = _combine(lst)
            if comb.get("busy", 0) > 0 and "util_samples" not in comb:
                comb["util_samples"] = util_samples(r, comb["busy"], dt)
            elif "util_samples" not in comb:
                comb["util_samples"] = tuple(0.0 for _ in range(max(1, round(dt * 5))))
            comb["util"] = comb["util_samples"][-1] if comb["util_samples"] else 0.0
            lim = bx.get("power_limit", {}).get(g)
            gsamples.append(phys[g].step(dt, comb, lim, bx.get("cooling", {}).get(g, 1.0),
                                         bx.get("brake", {}).get(g, False),
                                         bx.get("hidden_cap", {}).get(g)))
        # host and pinned tree
        cpus = plan.cpus
        sat = host_cores / cpus
        psi_t = bx.get("psi", max(0.1, 100 * max(0.0, sat - 0.55) * 1.3) + r.uniform(0, 0.6))
        psi += (psi_t - psi) * (1 - math.exp(-dt / 10.0))
        runq = bx.get("runq", max(1, int(round(host_cores * 0.55 + r.uniform(0, 3)))))
        ctx_total += int(cpus * 1800 * dt * r.uniform(0.9, 1.1) + bx.get("ctx_extra", 0) * dt)
        host = HostSample(cpu_pct=round(min(100.0, 100 * sat), 1),
                          offcpu_switches=None,
                          cpu_pressure_some_pct=round(psi, 2), run_queue=int(runq), cpus=cpus,
                          ctx_switches_total=ctx_total)
        pinned = None
        tree_cpu = 0.0
        busiest = ("", 0.0)
        if threads:
            for tid, pid, nm, c_s in threads:
                cum[tid] = cum.get(tid, r.uniform(50, 3000) * (1 if "Evt" not in nm else 0.01)) \
                    + c_s
            tree_cpu = sum(cum[x[0]] for x in threads)
            top = sorted(threads, key=lambda x: -cum[x[0]])[:12]
            busiest = (f"{top[0][0]} {top[0][2]}", cum[top[0][0]])
            if serv is not None and not down:
                inv["tree"] = serv.inv
                vol["tree"] = serv.vol
            else:
                share = fx.get("cpu_share", 1.0)
                inv["tree"] += int((3 + (1 - share) * 2400 + fx.get("inv_extra", 0)) * dt
                                   * r.uniform(0.8, 1.2))
                vol["tree"] += int(400 * dt)
            if any(L.api for L in launch) or (serv and serv.c.ebpf) or (trn and trn.c.ebpf):
                off = int((2 + (1 - fx.get("cpu_share", 1.0)) * 900 + fx.get("offcpu", 0))
                          * dt * r.uniform(0.7, 1.3))
                host = HostSample(cpu_pct=host.cpu_pct, offcpu_switches=off,
                                  cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                                  run_queue=host.run_queue, cpus=cpus,
                                  ctx_switches_total=host.ctx_switches_total)
            if plan.pinned:
                pinned = PinnedSample(
                    label=label[:60] + ("…" if len(label) > 60 else ""), root_pids=tree_pids[:1],
                    tree_pids=tree_pids, cpu_s=round(tree_cpu, 2), ctx_voluntary=vol["tree"],
                    ctx_involuntary=inv["tree"],
                    threads=tuple(ThreadSample(tid=x[0], pid=x[1], name=x[2],
                                               cpu_s=round(cum[x[0]], 2)) for x in top),
                    cores=tuple(range(bx.get("cores", cpus))),
                    cpu_pressure_some_pct=host.cpu_pressure_some_pct, run_queue=int(runq),
                    listening_ports=ports)
        if trn is not None and trn.c.ebpf:
            launch = _train_launch(trn, t, dt, fx, r)
        # engine scrape
        sources = {"nvml": SourceStatus(ok=True, age_s=0.0, poll_s=round(0.004 + 0.0012 *
                                                                          plan.ngpus, 6)),
                   "host": SourceStatus(ok=True, age_s=0.0, poll_s=0.0008),
                   "procfs": SourceStatus(ok=True, detail="/proc", age_s=0.0, poll_s=0.0003)}
        if plan.pinned and threads:
            sources["pin"] = SourceStatus(ok=True, age_s=0.0, poll_s=0.013)
        ebpf_on = (serv and serv.c.ebpf) or (trn and trn.c.ebpf)
        if ebpf_on:
            sources["ebpf"] = SourceStatus(ok=True, detail="uprobes on libcudart.so.12, "
                                           "libcuda.so.1 (pid-filtered)", age_s=0.0)
        wall = plan.start_wall + t + dt
        scrape_s = (serv.c.scrape_s if serv else (trn.c.scrape_s if trn else 0))
        if serv or trn:
            timeout = bx.get("scrape_timeout", False)
            due = (t + dt) - last_scrape >= scrape_s - 1e-6
            if down:
                engine = None
                last_es = None
                sources["engine"] = SourceStatus(ok=False, reason="connection refused "
                                                 f"(http://127.0.0.1:{ports[0]}/metrics)")
            elif due and not timeout:
                if serv:
                    engine = serv.scrape(t, wall, tree_pids, tree_cpu, inv["tree"], busiest)
                else:
                    engine = _trainer_sample(trn, t + dt, wall, tree_pids, tree_cpu,
                                             inv["tree"], busiest)
                last_es, last_scrape = engine, t + dt
                sources["engine"] = SourceStatus(ok=True, age_s=0.0,
                                                 poll_s=round(r.uniform(0.02, 0.06), 4))
            else:
                age = round(t + dt - last_scrape, 3)
                stale = max(10.0, 3 * scrape_s)
                if last_es is not None and age <= stale:
                    engine = last_es
                    sources["engine"] = SourceStatus(
                        ok=not timeout, reason="timed out after 2.0 s" if timeout else None,
                        age_s=age, poll_s=2.0 if timeout else None)
                else:
                    engine = None
                    sources["engine"] = SourceStatus(ok=False, reason="timed out after 2.0 s")
        frames.append(Frame(seq=i, time_wall_s=round(wall, 4), time_mono_s=round(
            880000.0 + plan.start_wall % 1000 + t + dt, 4), gpus=tuple(gsamples),
            processes=tuple(procs), engine=engine, launch=launch, host=host, pinned=pinned,
            sources=sources, launch_armed_s=None))
    return frames


def _reset(serv: Serving):
    serv.gen = serv.prompt_c = serv.cached_c = serv.finished = 0.0
    serv.preempt = serv.retract = serv.retract_tok = 0.0
    serv.prefill_s = serv.decode_s = serv.forward_s = serv.steps_c = 0.0
    serv.flops = serv.readb = serv.writeb = 0.0
    serv.drafts = serv.draft_tok = serv.accepted = 0.0
    for h in serv.h.values():
        h.counts = [0.0] * len(h.counts)
        h.sum = 0.0
    serv.waiting.clear()
    serv.running.clear()
    serv.inv = 12
    serv.vol = 800


def _combine(lst):
    if not lst:
        return {}
    if len(lst) == 1:
        return dict(lst[0])
    out = {}
    for k in ("busy", "sm", "occ", "tensor", "dram", "nvl", "pcie_tx", "pcie_rx"):
        vals = [a[k] for a in lst if k in a]
        if vals:
            out[k] = min(1.0, sum(vals)) if k in ("busy", "sm", "occ", "tensor", "dram") \
                else sum(vals)
    out["mem_used"] = sum(a.get("mem_used", 0) for a in lst)
    us = [a["util_samples"] for a in lst if a.get("util_samples")]
    if us:
        n = max(len(u) for u in us)
        out["util_samples"] = tuple(min(100.0, sum(u[i] for u in us if i < len(u)))
                                    for i in range(n))
    return out


def _cmdline(c: ServeCfg, serv: Serving, k: int) -> str:
    m = serv.m.name
    if c.engine == "vllm":
        s = (f"/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model {m} --port "
             f"{c.url_port} --gpu-memory-utilization {c.mem_util} --max-num-seqs {c.max_seqs} "
             f"--max-num-batched-tokens {c.budget}")
        if c.tp > 1:
            s += f" --tensor-parallel-size {c.tp}"
        if c.spec_k:
            s += f' --speculative-config {{"method":"eagle3","num_speculative_tokens":{c.spec_k}}}'
        return "VLLM::EngineCore" if c.tp == 1 else f"VLLM::Worker_TP{k}"
    if c.engine == "sglang":
        return (f"python3 -m sglang.launch_server --model-path {m} --port {c.url_port} "
                f"--tp {c.tp} --enable-metrics --chunked-prefill-size {c.budget}"
                + (f" --speculative-algorithm EAGLE --speculative-num-draft-tokens {c.spec_k}"
                   if c.spec_k else ""))
    return (f"/opt/llama.cpp/build/bin/llama-server -m /models/{m.split('/')[-1]}-Q4_K_M.gguf "
            f"--port {c.url_port} --metrics -np {c.slots} -ngl 99")


def _trainer_sample(trn: Trainer, t, wall, pids, tree_cpu, inv, busiest):
    c = trn.c
    steps = trn.counters(t - 0.05)
    if c.unit == "tokens":
        gen = trn.tok0 + steps * c.tokens_per_step
        unit = "tokens"
    else:
        gen = trn.samp0 + steps * c.samples_per_step
        unit = "samples"
    return EngineSample(kind="trainer", url=f"http://127.0.0.1:{c.port}/metrics",
                        generation_tokens_total=float(gen),
                        requests_finished_total=float(trn.steps0 + steps), tensor_parallel=1,
                        data_parallel=1, pids=pids, time_mono_s=round(70000.0 + t, 4),
                        time_wall_s=round(wall - 0.01, 4), work_unit=unit,
                        cpu_s=round(tree_cpu, 2), ctx_involuntary=inv,
                        busiest_thread_cpu_s=round(busiest[1], 2), busiest_thread=busiest[0])


def _train_launch(trn: Trainer, t, dt, fx, r):
    from gputop.buckets import bucket_index
    from gputop.schema import LaunchHist
    c = trn.c
    steps = trn.counters(t + dt) - trn.counters(t)
    out = []
    frac, ms = fx.get("launch_tail_frac", 0.0), fx.get("launch_tail_ms", 0.0)
    share = fx.get("cpu_share", 1.0)
    for k in range(min(trn.n, 8)):
        pid = c.pid0 + 10 + k
        n = int(steps * 900 * r.uniform(0.95, 1.05))
        if n <= 0:
            continue
        kk = min(n, 250)
        buckets: dict[int, int] = {}
        tot = 0.0
        mx = 0
        for _ in range(kk):
            v = r.lognormvariate(math.log(4.2e3), 0.4)
            if frac and (k in fx.get("jitter_ranks", range(99))) and r.random() < frac:
                v += r.lognormvariate(math.log(ms * 1e6), 0.6)
            elif share < 1 and r.random() < (1 - share) * 0.04:
                v += r.uniform(0.5e6, 6e6)
            iv = int(v)
            b = bucket_index(iv)
            buckets[b] = buckets.get(b, 0) + 1
            tot += v
            mx = max(mx, iv)
        sc = n / kk
        buckets = {b: max(1, int(round(x * sc))) for b, x in buckets.items()}
        out.append(LaunchHist(api="cuLaunchKernel", pid=pid, count=sum(buckets.values()),
                              sum_ns=int(tot * sc), max_ns=mx, buckets=buckets))
    return tuple(out)
