"""A machine over time: GPUs, host, one workload (a serving engine or a training job, with
or without metrics), and the frames gputop would record of it, tick by tick."""

from __future__ import annotations

import dataclasses
import hashlib
import random
from dataclasses import dataclass, field

from gputop.schema import (EngineHistogram, EngineSample, Frame, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from . import hw
from .host import Host, launch_hists
from .serving import Controls, ServeCfg, Serving
from .training import TrainCfg, Training


def seeded(name: str, salt: str = "") -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256((name + "|" + salt).encode()).digest()[:8],
                                        "big"))


@dataclass
class Setup:
    """Everything a scenario decides; the runner does the rest."""

    name: str
    gpu: str
    ngpu: int
    tick: float
    dur: float
    start_wall: float
    kind: str  # "serve" | "train"
    serve: ServeCfg | None = None
    ctl: Controls | None = None
    train: TrainCfg | None = None
    train_kw: dict = field(default_factory=dict)
    metrics: bool = True  # the engine/trainer exports /metrics
    ebpf: bool = False
    events: list = field(default_factory=list)  # (t, fn(world)) applied once at t
    # how the window is measured: (metric, threshold) over the simulated run, e.g.
    # ("itl", 1.3): mean inter-token latency >= 1.3x its healthy baseline
    probe: tuple = ()
    onset: float = 0.0  # when the fault was injected (the window is searched from here - 5 s)
    cpus: int = 64
    set_cores: int = 8
    base_busy: float = 3.0
    warm: dict = field(default_factory=dict)  # gpu -> degrees warmer
    power_limit: dict = field(default_factory=dict)
    extra_procs: object = None  # fn(world, t) -> list of (gpu, pid, name, cmd, mem, sm_share)
    other_gpu: object = None  # fn(t, gpu) -> share of GPU time taken by another process
    cmd: str = ""
    url: str = "http://127.0.0.1:8000/metrics"
    container: str = ""
    pod: str = ""
    miss_p: float = 0.015
    up: object = None  # t -> process running (restart scenarios)
    train_counter: str = "tokens"  # "tokens" | "samples" | "" (no counter)
    launch_threads: int = 1
    done_at: float | None = None  # workload exits (processes gone, memory freed)
    level: object = None  # t -> 0..1 injected level, for probe ("lvl", thr)


class World:
    def __init__(self, s: Setup):
        self.s = s
        self.rng = seeded(s.name)
        self.t = 0.0
        spec = hw.SPECS[s.gpu]
        self.spec = spec
        self.gpus = []
        for i in range(s.ngpu):
            uid = seeded(s.name, f"uuid{i}").getrandbits(128)
            h = f"{uid:032x}"
            self.gpus.append(hw.GpuState(
                spec, i, seeded(s.name, f"gpu{i}"), warm_offset_c=s.warm.get(i, 0.0),
                power_limit=s.power_limit.get(i), uuid=f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-"
                f"{h[16:20]}-{h[20:32]}", bus_id=f"00000000:{0x18 + 0x10 * i:02X}:00.0"))
        self.host = Host(seeded(s.name, "host"), s.cpus, s.set_cores, s.base_busy)
        self.share = 1.0
        self.off_len = 0.0
        self.jitter = (0.0, 0.0)
        self.m: dict = {}
        self.pid0 = 1000 + seeded(s.name, "pid").randrange(200000)
        self.thread_cpu: dict[str, float] = {}
        self.ctx_invol = 0
        self.ctx_vol = 0
        self.tree_cpu = 0.0
        self.proc_cpu: dict[int, float] = {}
        self.prev_engine = None
        self.pending = sorted(s.events, key=lambda e: e[0])
        self.tags: dict = {}
        if s.kind == "serve":
            self._init_serve()
        else:
            self._init_train()

    # ------------------------------------------------------------ set-up
    def _init_serve(self):
        s, c = self.s, self.s.serve
        m = c.model
        self.kvb_gpu = m.kv_bytes_tok * c.kv_dtype_bytes / 2 / c.tp
        act = (1.5 + 0.25 * c.budget / 2048) * hw.GIB
        usable = self.spec.mem_total * c.gpu_mem_util
        pool_bytes = usable - m.weights / c.tp - act - 0.6 * hw.GIB
        tokens = int(pool_bytes // self.kvb_gpu // c.block_size * c.block_size)
        if c.kind == "llamacpp":
            tokens = min(tokens, c.max_seqs * 16384)
            pool_bytes = tokens * self.kvb_gpu
        c.pool_tokens = tokens
        self.pool_bytes = int(tokens * self.kvb_gpu)
        self.mem_engine = int(m.weights / c.tp + self.pool_bytes + act + 0.55 * hw.GIB)
        ctl = s.ctl
        ctl.clock_of = lambda r: self.gpus[r].speed()
        ctl.host_share = (lambda f: (lambda t: f(t) * self.share))(ctl.host_share)
        base_jit = ctl.jitter
        ctl.jitter = lambda t: base_jit(t)
        if s.up:
            ctl.up = s.up
        if s.other_gpu:
            ctl.other_gpu = lambda t: s.other_gpu(t, 0)
        ctl.host_off = lambda t: ((1 - self.share, self.off_len / 2) if self.share < 0.999
                                  else (0.0, 0.0))
        self.sim = Serving(c, ctl, seeded(s.name, "serve"))

    def _init_train(self):
        s = self.s
        kw = dict(s.train_kw)
        base_share = kw.pop("host_share", None)
        kw["host_share"] = (lambda t, r: (base_share(t, r) if base_share else 1.0) * self.share)
        kw["clock_of"] = lambda r: self.gpus[r].speed()
        if s.other_gpu:
            kw["other_gpu"] = s.other_gpu
        self.trainer = Training(s.train, seeded(s.name, "train"), **kw)

    # ------------------------------------------------------------ the run
    def run(self):
        s = self.s
        n = int(round(s.dur / s.tick))
        frames = []
        bins = max(1, int(round(self.spec.util_samples_per_s * s.tick)))
        mono0 = 86400 * 3 + seeded(s.name, "mono").random() * 86400 * 20
        for k in range(n):
            t0, t1 = k * s.tick, (k + 1) * s.tick
            self.t = t0
            while self.pending and self.pending[0][0] <= t0 + 1e-9:
                self.pending.pop(0)[1](self)
            acts = [hw.Activity(t0, s.tick, bins) for _ in self.gpus]
            alive = s.done_at is None or t0 < s.done_at
            if s.kind == "serve":
                if alive:
                    self.sim.run(t1, acts[: s.serve.tp], self.spec)
                    for extra in range(s.serve.tp, len(acts)):
                        pass
            else:
                if alive:
                    self.trainer.advance(t1, self.spec)
                    self.trainer.take(acts, t0, t1)
            if s.other_gpu and s.kind == "serve":
                pass  # the sim put the other tenant's kernels on its ranks
            # contexts exist while the workload's processes do
            up = alive and (s.up is None or s.up(t0))
            for g in self.gpus:
                g.has_context = up or bool(self.extra_on(g.index, t0))
            gsamples = [g.step(a) for g, a in zip(self.gpus, acts)]
            gsamples = self._memory(gsamples, t0, up)
            demand, calls = self._host_demand(t0, t1, up)
            share, hs = self.host.tick(s.tick, demand, s.launch_threads)
            self.share = share
            # how long the job's threads stay off CPU once descheduled: the rest of a CFS
            # period under a quota, a few slices when the run queue is long
            if self.host.quota is not None and share < 0.999:
                self.off_len = 0.1 * (1 - share)
            elif share < 0.999:
                self.off_len = 0.004 * (1 / share - 1)
            else:
                self.off_len = 0.0
            self._measure(t1, gsamples)
            frames.append(self._frame(k, t0, t1, mono0, gsamples, hs, up, calls, share))
        return frames, self._window()

    def extra_on(self, gpu: int, t: float):
        if not self.s.extra_procs:
            return []
        return [p for p in self.s.extra_procs(self, t) if p[0] == gpu]

    def _measure(self, t1, gsamples):
        """What the simulation did this tick (not what a counter shows): for the window."""
        s, m = self.s, self.m
        m.setdefault("t", []).append(t1)
        if s.kind == "serve":
            sim = self.sim
            c, sm = sim.itl_all.count, sim.itl_all.sum
            pc, ps = self.tags.get("itl_prev", (0.0, 0.0))
            self.tags["itl_prev"] = (c, sm)
            itl = (sm - ps) / (c - pc) if c > pc and c >= pc else None
            m.setdefault("itl", []).append(itl)
            g = sim.gen_tokens
            m.setdefault("gen", []).append(max(0.0, g - self.tags.get("gen_prev", 0.0)))
            self.tags["gen_prev"] = g
            m.setdefault("waiting", []).append(len(sim.waiting))
            m.setdefault("preempt", []).append(sim.preemptions)
        else:
            tr = self.trainer
            m.setdefault("gen", []).append(tr.tokens - self.tags.get("gen_prev", 0.0))
            self.tags["gen_prev"] = tr.tokens
            st = tr.step_times[-1] if tr.step_times else None
            m.setdefault("step", []).append(st)
        m.setdefault("clk", []).append([g.sm_clock_mhz for g in gsamples])
        m.setdefault("share", []).append(self.share)
        m.setdefault("other", []).append(s.other_gpu(t1, 0) if s.other_gpu else 0.0)
        m.setdefault("lvl", []).append(s.level(t1) if getattr(s, "level", None) else 0.0)

    def _window(self):
        """When the cause was materially on, measured: the metric of ``probe`` beyond its
        threshold (5-tick mean) relative to its healthy baseline before the onset."""
        s, m = self.s, self.m
        if not s.probe:
            return None
        kind, thr = s.probe[0], s.probe[1]
        ts = m["t"]
        k5 = max(1, int(round(5 / s.tick)))

        def series(name):
            if name == "clock":
                gs = s.probe[2] if len(s.probe) > 2 else range(s.ngpu)
                return [min(c[i] for i in gs) for c in m["clk"]]
            return m[name]

        vals = series({"itl": "itl", "gen_drop": "gen", "clock": "clock", "share": "share",
                       "other": "other", "waiting": "waiting", "step": "step", "lvl": "lvl",
                       "preempt": "preempt"}[kind])
        base_vals = [v for t, v in zip(ts, vals) if 25 <= t < s.onset and v is not None]
        base_vals.sort()
        base = base_vals[len(base_vals) // 2] if base_vals else None
        on = []
        for i, t in enumerate(ts):
            if t < s.onset - 5:
                continue
            win = [v for v in vals[max(0, i - k5 + 1): i + 1] if v is not None]
            if not win:
                continue
            v = sum(win) / len(win)
            if kind == "itl" or kind == "step":
                hit = base and v >= base * thr
            elif kind == "gen_drop":
                hit = base and v <= base * (1 - thr)
            elif kind == "clock":
                hit = base and v <= base * (1 - thr)
            elif kind == "share":
                hit = v <= thr
            elif kind == "preempt":
                hit = vals[i] - vals[max(0, i - k5)] > 0 or m["waiting"][i] >= thr
            else:
                hit = v >= thr
            if hit:
                on.append(t)
        if not on:
            return None
        # the 5-tick mean lags: the window starts when the first of those ticks did
        start = on[0] - (k5 - 1) * s.tick if kind not in ("share", "other", "lvl") else on[0]
        return (round(s.start_wall + max(s.onset - 1, start) - s.tick, 3),
                round(s.start_wall + on[-1], 3))

    # ------------------------------------------------------------ parts of a frame
    def _memory(self, gsamples, t, up):
        import dataclasses
        s = self.s
        out = []
        for g, gs in zip(self.gpus, gsamples):
            used = 0
            if s.kind == "serve":
                if g.index < s.serve.tp and up:
                    used = self.mem_engine
                elif g.index < s.serve.tp and s.up is not None and not s.up(t):
                    # restarting: weights load back before the pool is reserved
                    since = t - self.tags.get("down_since", t)
                    used = int(min(1.0, since / 25.0) * s.serve.model.weights / s.serve.tp) \
                        if since > 6 else 0
            else:
                if up:
                    used = int(self.spec.mem_total * self.tags.get("train_mem_frac", 0.72))
            for p in self.extra_on(g.index, t):
                used += p[4]
            g.mem_used = used
            out.append(dataclasses.replace(gs, mem_used_bytes=int(used)))
        return out

    def _host_demand(self, t0, t1, up):
        """Cores the job's threads want, and this tick's launch calls per API."""
        s = self.s
        calls = {}
        if not up:
            return 0.2, calls
        if s.kind == "serve":
            busy = self.sim.seqs > 0 or bool(self.sim.prefill)
            rate = s.ctl.rate(t0)
            demand = (1.0 if busy else 0.15) + 0.15 + 0.012 * rate + 0.1 * (s.serve.tp - 1)
            if self.sim.x_cpu:
                demand += 0.3
            steps = self.sim.steps - self.tags.get("steps_prev", 0)
            self.tags["steps_prev"] = self.sim.steps
            if s.serve.kernels_per_step:
                calls["cudaLaunchKernel"] = steps * (s.serve.kernels_per_step + 6)
            else:
                calls["cudaGraphLaunch"] = steps
                calls["cudaLaunchKernel"] = steps * 6
            calls["cudaMemcpyAsync"] = steps * 3
        else:
            c = s.train
            ph = self.trainer.phase(t0)
            demand = c.ranks * (1.1 if ph not in ("ckpt", "idle", "done") else 0.4)
            fetch = self.trainer.fetch(t0)
            # the loader workers decode/augment: busy CPU unless the storage is the wait
            cpu_per_s = min(c.workers * c.ranks, c.ranks * c.fetch_s /
                            max(1e-3, sum(self.trainer.step_times[-3:]) / 3
                                if self.trainer.step_times else 1.0))
            if ph in ("train",):
                demand += cpu_per_s
            launches = self.trainer.launches - self.tags.get("launch_prev", 0)
            self.tags["launch_prev"] = self.trainer.launches
            calls["cuLaunchKernel"] = launches * 0.55 / max(1, c.ranks)
            calls["cudaLaunchKernel"] = launches * 0.45 / max(1, c.ranks)
            del fetch
        return demand, calls

    def _threads(self, t0, t1, up, share):
        """Cumulative CPU of the pinned tree's threads."""
        s = self.s
        dt = t1 - t0
        tc = self.thread_cpu
        if not up:
            return
        if s.kind == "serve":
            sim = self.sim
            core = sim.cpu_busy
            tc["core"] = core
            rate = s.ctl.rate(t0)
            tc["api"] = tc.get("api", 0.0) + dt * min(share, 1.0) * (0.06 + 0.01 * rate)
            tc["tok"] = tc.get("tok", 0.0) + dt * min(share, 1.0) * 0.004 * rate
            for i in range(1, s.serve.tp):
                tc[f"w{i}"] = tc.get(f"w{i}", 0.0) + dt * min(share, 1.0) * 0.9
        else:
            tr = self.trainer
            for r in range(s.train.ranks):
                tc[f"main{r}"] = tr.main_cpu[r]
                tc[f"auto{r}"] = tr.main_cpu[r] * 0.55
                tc[f"load{r}"] = tr.worker_cpu[r]

    def _frame(self, k, t0, t1, mono0, gsamples, hs, up, calls, share):
        s = self.s
        rng = self.rng
        wall = s.start_wall + t1
        mono = mono0 + t1
        self._threads(t0, t1, up, share)
        procs = []
        pid = self.pid0
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.0015 * s.ngpu, 4)),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.0008),
                   "procfs": SourceStatus(True, detail="/proc", age_s=0.0, poll_s=0.0002),
                   "pin": SourceStatus(True, age_s=0.0, poll_s=0.015)}
        tree_cpu = sum(self.thread_cpu.values())
        # involuntary switches follow lost CPU (share) and preemptions of the launch thread
        inv_rate = 2 + 400 * (1 - min(1.0, share)) + 60 * self.host.irq
        self.ctx_invol += int(inv_rate * (t1 - t0))
        self.ctx_vol += int((900 if up else 20) * (t1 - t0))
        gpu_sm = [g.sm_active_pct if g.sm_active_pct is not None else g.util_gpu_pct
                  for g in gsamples]
        pids = []
        if up:
            if s.kind == "serve":
                names = {"vllm": "VLLM::EngineCor", "sglang": "sglang::schedul",
                         "llamacpp": "llama-server"}
                for i in range(s.serve.tp):
                    p = pid + 7 + i
                    nm = names[s.serve.kind] if s.serve.tp == 1 or s.serve.kind == "llamacpp" \
                        else ("VLLM::Worker_TP%d" % i if s.serve.kind == "vllm"
                              else "sglang::scheduler_TP%d" % i)[:15]
                    pids.append(p)
                    self.proc_cpu[p] = self.thread_cpu.get("core" if i == 0 else f"w{i}", 0.0)
                    procs.append(ProcSample(
                        pid=p, gpu_index=i, name=nm, cmdline=s.cmd, user="svc-inference",
                        ppid=pid, start_time_s=s.start_wall - 3600 * 5 - self.tags.get("restart", 0),
                        mem_bytes=gsamples[i].mem_used_bytes, sm_util_pct=float(round(
                            gsamples[i].util_gpu_pct * (1 - (s.other_gpu(t0, i) if s.other_gpu
                                                             else 0.0)))),
                        cpu_s=round(self.proc_cpu[p], 2), rss_bytes=int(3.1 * hw.GIB),
                        container=s.container, pod=s.pod, cgroup=f"/kubepods/{s.pod or 'job'}",
                        mem_util_pct=gsamples[i].util_mem_pct))
            else:
                for r in range(s.train.ranks):
                    p = pid + 3 + r
                    pids.append(p)
                    procs.append(ProcSample(
                        pid=p, gpu_index=r, name="python3", cmdline=s.cmd + f" --local-rank {r}"
                        if s.train.ranks > 1 else s.cmd, user="trainer", ppid=pid,
                        start_time_s=s.start_wall - 7200, mem_bytes=gsamples[r].mem_used_bytes,
                        sm_util_pct=float(round(gsamples[r].util_gpu_pct * (1 - (
                            s.other_gpu(t0, r) if s.other_gpu else 0.0)))),
                        cpu_s=round(self.thread_cpu.get(f"main{r}", 0) * 1.6
                                    + self.thread_cpu.get(f"load{r}", 0), 2),
                        rss_bytes=int(14 * hw.GIB), container=s.container, pod=s.pod,
                        cgroup=f"/kubepods/{s.pod or 'job'}", mem_util_pct=gsamples[r].util_mem_pct))
        for (gi, xpid, xname, xcmd, xmem, xsm) in (self.s.extra_procs(self, t0)
                                                   if self.s.extra_procs else []):
            procs.append(ProcSample(pid=xpid, gpu_index=gi, name=xname, cmdline=xcmd,
                                    user="other", ppid=1, start_time_s=wall - 100,
                                    mem_bytes=xmem, sm_util_pct=float(round(xsm)),
                                    cpu_s=round(0.4 * t1, 2), rss_bytes=int(2 * hw.GIB)))
        del gpu_sm
        # threads of the pinned tree
        threads = []
        tid = pid + 30
        for key, v in sorted(self.thread_cpu.items(), key=lambda kv: -kv[1]):
            nm = {"core": "python3" if s.kind == "serve" and s.serve.kind != "llamacpp"
                  else "llama-server", "api": "python3", "tok": "tokenizer"}.get(key)
            if nm is None:
                nm = ("pt_data_worker" if key.startswith("load") else
                      "pt_autograd_0" if key.startswith("auto") else
                      "python3")
            threads.append(ThreadSample(tid=tid, pid=pid, name=nm, cpu_s=round(v, 2)))
            tid += 1
        busiest = threads[0] if threads else None
        quota = self.host.quota
        pinned = PinnedSample(
            label=(s.cmd[:60] + "…") if len(s.cmd) > 60 else s.cmd, root_pids=(pid,),
            tree_pids=tuple([pid] + pids), cpu_s=round(tree_cpu, 2),
            ctx_voluntary=self.ctx_vol, ctx_involuntary=self.ctx_invol,
            threads=tuple(threads[:12]), cores=tuple(range(2, 2 + s.set_cores)),
            cpu_pressure_some_pct=hs.cpu_pressure_some_pct,
            run_queue=max(1, hs.run_queue - rng.randrange(0, 3)),
            listening_ports=(int(s.url.rsplit(":", 1)[1].split("/")[0]),)
            if s.kind == "serve" or s.train_counter else (),
            cpu_quota_cores=quota, cpu_periods=self.host.periods if quota else None,
            cpu_throttled_periods=self.host.throttled if quota else None) if up else PinnedSample(
            label=s.cmd[:60], waiting="no process matches the pattern")
        # eBPF launch histograms
        launch = ()
        if s.ebpf and up:
            if s.kind == "serve":
                p_j, d_j = s.ctl.jitter(t0)
                p_j = p_j / 5.0  # one preemption per ~10 calls of a step
            else:
                jf = s.train_kw.get("jitter")
                r_j, d_j = jf(t0, 0) if jf else (0.0, 0.0)
                per_s = max(1.0, sum(calls.values()) / (t1 - t0))
                p_j = min(0.5, 2 * r_j / per_s)
            launch, switches = launch_hists(rng, pid + 7, calls, p_j, d_j, share)
            hs = dataclasses.replace(hs, offcpu_switches=switches + int(inv_rate * (t1 - t0) * 0.3))
            sources["launch"] = SourceStatus(True, detail="uprobes: libcudart.so.12, libcuda.so.1",
                                             age_s=0.0, poll_s=0.002)
        engine = None
        if s.kind == "serve":
            engine, st = self._engine_serve(wall, mono, up, pids, tree_cpu, busiest, quota, k)
        elif s.train_counter:
            engine, st = self._engine_train(wall, mono, up, pids, tree_cpu, busiest, quota, k)
        else:
            st = SourceStatus(False, "no engine found (pass --engine URL)")
        sources["engine"] = st
        return Frame(gpus=tuple(gsamples), processes=tuple(procs), engine=engine, launch=launch,
                     host=hs, pinned=pinned, seq=k, time_wall_s=round(wall, 6),
                     time_mono_s=round(mono, 6), sources=sources)

    def _miss(self, k):
        """An engine scrape that did not answer in time now and then (never two in a row)."""
        r = seeded(self.s.name, f"miss{k}").random()
        if k < 3 or self.tags.get("missed") == k - 1:
            return 0
        if r < self.s.miss_p:
            self.tags["missed"] = k
            return 1 if r < self.s.miss_p / 2 else 2
        return 0

    def _common(self, wall, mono, pids, tree_cpu, busiest, quota):
        rng = self.rng
        lat = 0.002 + 0.01 * rng.random() + (0.2 * (1 - self.share) if self.share < 1 else 0)
        return dict(url=self.s.url, time_mono_s=round(mono - 0.5 * lat, 6),
                    time_wall_s=round(wall - 0.5 * lat, 6), pids=tuple([self.pid0] + pids),
                    cpu_s=round(tree_cpu, 2), ctx_involuntary=self.ctx_invol,
                    busiest_thread_cpu_s=busiest.cpu_s if busiest else None,
                    busiest_thread=f"{busiest.tid} {busiest.name}" if busiest else "",
                    cpu_quota_cores=quota, cpu_periods=self.host.periods if quota else None,
                    cpu_throttled_periods=self.host.throttled if quota else None), lat

    def _engine_serve(self, wall, mono, up, pids, tree_cpu, busiest, quota, k):
        s, sim, c = self.s, self.sim, self.s.serve
        if not up:
            return None, SourceStatus(False, f"connection refused ({s.url.split('/metrics')[0]})")
        if not s.metrics:
            return None, SourceStatus(False, "no engine found (pass --engine URL)")
        miss = self._miss(k)
        if miss == 1:
            return None, SourceStatus(False, "timed out after 1.0 s")
        if miss == 2 and self.prev_engine is not None:
            return self.prev_engine, SourceStatus(True, age_s=round(s.tick, 3), poll_s=1.0)
        common, lat = self._common(wall, mono, pids, tree_cpu, busiest, quota)
        g = sim.gauges()
        hists = tuple(EngineHistogram(name=n, upper_bounds=h.bounds,
                                      cumulative=tuple(float(int(v)) for v in h.cumulative()),
                                      count=float(int(h.count)), sum=round(h.sum, 6))
                      for n, h in sim.h.items())
        if c.kind == "vllm":
            blocked = float(len(sim.waiting)) if sim.waiting and g["kv"] > 0.9 else 0.0
            e = EngineSample(
                kind="vllm", model=c.model.name, generation_tokens_total=float(int(sim.gen_tokens)),
                prompt_tokens_total=float(int(sim.prompt_tokens)),
                prompt_tokens_cached_total=float(int(sim.cached_tokens)),
                requests_finished_total=float(sim.finished), requests_running=g["running"],
                requests_waiting=g["waiting"], kv_usage_ratio=round(g["kv"], 6),
                num_gpu_blocks=c.pool_tokens // c.block_size, block_size=c.block_size,
                kv_pool_bytes=self.pool_bytes, kv_pool_tokens=c.pool_tokens,
                cache_dtype=c.cache_dtype, tensor_parallel=c.tp, data_parallel=1,
                histograms=hists, preemptions_total=float(sim.preemptions),
                waiting_by_reason={"capacity": blocked, "deferred": 0.0},
                flops_total=float(int(sim.flops)), read_bytes_total=float(int(sim.rbytes)),
                write_bytes_total=float(int(sim.wbytes)),
                prefill_seconds_total=round(sim.prefill_s, 4),
                decode_seconds_total=round(sim.decode_s, 4),
                spec_drafts_total=float(int(sim.drafts)) if c.spec_k else None,
                spec_draft_tokens_total=float(int(sim.draft_tokens)) if c.spec_k else None,
                spec_accepted_tokens_total=float(int(sim.accepted)) if c.spec_k else None,
                corrupted_requests_total=0.0, **common)
        elif c.kind == "sglang":
            acc = s.ctl.spec_accept(self.t) if c.spec_k else None
            alen = (1 + sum(acc ** i for i in range(1, c.spec_k + 1))) if c.spec_k else None
            used = int(min(c.pool_tokens, sim.kv_used))
            evict = int((c.pool_tokens - used) * 0.35)
            e = EngineSample(
                kind="sglang", model=c.model.name, generation_tokens_total=float(int(sim.gen_tokens)),
                prompt_tokens_total=float(int(sim.prompt_tokens)),
                prompt_tokens_cached_total=float(int(sim.cached_tokens)),
                requests_finished_total=float(sim.finished), requests_running=g["running"],
                requests_waiting=g["waiting"], kv_usage_ratio=round(g["kv"], 6),
                kv_pool_tokens=c.pool_tokens, tensor_parallel=c.tp, data_parallel=1,
                histograms=hists, retracted_requests_total=float(sim.preemptions),
                retracted_input_tokens_total=float(int(sim.retracted_tokens)),
                kv_used_tokens=float(used), kv_free_tokens=float(c.pool_tokens - used - evict),
                kv_evictable_tokens=float(evict), forward_seconds_total=round(sim.forward_s, 4),
                spec_accept_ratio=round(acc, 4) if acc is not None else None,
                spec_accept_length=round(alen, 4) if alen is not None else None, **common)
        else:  # llama.cpp: counters move when a slot finishes (prediction) or its prompt is done
            e = EngineSample(
                kind="llamacpp", model="", generation_tokens_total=float(int(sim.ll_gen)),
                prompt_tokens_total=float(int(sim.ll_prompt + sim.cached_tokens)),
                prompt_tokens_cached_total=float(int(sim.cached_tokens)),
                requests_running=g["running"], requests_waiting=g["waiting"],
                prefill_seconds_total=round(sim.ll_prompt_s, 4),
                decode_seconds_total=round(sim.ll_gen_s, 4),
                decode_steps_total=float(sim.steps), tensor_parallel=1, **common)
        self.prev_engine = e
        return e, SourceStatus(True, age_s=0.0, poll_s=round(lat, 4))

    def _engine_train(self, wall, mono, up, pids, tree_cpu, busiest, quota, k):
        s, tr = self.s, self.trainer
        if not up:
            return None, SourceStatus(False, f"connection refused ({s.url.split('/metrics')[0]})")
        miss = self._miss(k)
        if miss:
            return None, SourceStatus(False, "timed out after 1.0 s")
        common, lat = self._common(wall, mono, pids, tree_cpu, busiest, quota)
        unit = s.train_counter
        val = tr.tokens if unit == "tokens" else tr.samples
        e = EngineSample(kind="trainer", generation_tokens_total=float(int(val)),
                         requests_finished_total=float(tr.steps), tensor_parallel=1,
                         data_parallel=s.train.ranks, work_unit=unit, **common)
        return e, SourceStatus(True, age_s=0.0, poll_s=round(lat, 4))
