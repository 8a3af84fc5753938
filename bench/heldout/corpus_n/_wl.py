"""Workloads as the runner sees them: a serving engine (with its lifecycle: load, profile,
CUDA-graph capture, serve, restart), a training job or CUDA program, a co-tenant."""

from __future__ import annotations

from gputop.schema import EngineSample

from ._gpu import GIB, Activity
from ._run import Proc
from ._serve import Engine


class ServeWL:
    def __init__(self, engine: Engine, gpus: list[int], pid0: int, url: str | None = None,
                 model_name: str | None = None, start: float = 0.0, version: str = "0.11",
                 ready_at: float = -1.0, load_s: float = 40.0, capture_s: float = 14.0,
                 extra_gpu_mem: int = 0, replica_of: list | None = None, name_suffix: str = "",
                 cmd_extra: str = "", export: bool = True):
        self.e = engine
        self.gpus = gpus
        self.kind = engine.kind
        port = {"vllm": 8000, "sglang": 30000, "llamacpp": 8080}[self.kind]
        self.url = url or f"http://127.0.0.1:{port}/metrics"
        self.model_name = model_name or engine.model.name
        self.version = version
        self.pid0 = pid0
        self.start_wall = start
        self.cmd_extra = cmd_extra
        self.export = export
        self.state_until = ready_at  # offset when serving begins (negative: serving at t=0)
        self.load_s, self.capture_s = load_s, capture_s
        self.phase_t0 = None
        self.restarts = 0
        self.extra_gpu_mem = extra_gpu_mem
        self.inv_rate = 60.0  # involuntary switches / s of the tree, healthy
        self.cpu_demand = 1.0
        self.cpu_s = 0.0
        self.inv = 0
        self.thread_cpu = 0.0
        self._make_procs()
        self.last_busy = 0.0

    # ------------------------------------------------------------ processes
    def _make_procs(self) -> None:
        e, tp = self.e, self.e.tp
        base = self.pid0 + 97 * self.restarts
        self.api_pid = base
        self.procs = []
        if self.kind == "vllm":
            cmd = (f"python3 -m vllm.entrypoints.openai.api_server --model {self.model_name} "
                   f"--tensor-parallel-size {tp} --gpu-memory-utilization 0.9 {self.cmd_extra}").strip()
            if tp == 1:
                self.procs.append(Proc(base + 2, self.gpus[0], "VLLM::EngineCore", "VLLM::EngineCore",
                                       self.start_wall, ppid=base))
            else:
                for i, g in enumerate(self.gpus):
                    self.procs.append(Proc(base + 4 + i, g, f"VLLM::Worker_TP{i}",
                                           f"VLLM::Worker_TP{i}", self.start_wall, ppid=base + 2))
            self.tree = (base, base + 2, *(p.pid for p in self.procs if p.pid != base + 2))
        elif self.kind == "sglang":
            cmd = (f"python3 -m sglang.launch_server --model-path {self.model_name} --tp {tp} "
                   f"--enable-metrics {self.cmd_extra}").strip()
            for i, g in enumerate(self.gpus):
                self.procs.append(Proc(base + 3 + i, g, "sglang::scheduler" + (f"_TP{i}" if tp > 1 else ""),
                                       cmd, self.start_wall, ppid=base))
            self.tree = (base, base + 1, *(p.pid for p in self.procs))
        else:
            cmd = (f"llama-server -m /models/{self.model_name} --ctx-size "
                   f"{e.num_blocks * e.block_size} -ngl 99 --metrics {self.cmd_extra}").strip()
            self.procs.append(Proc(base, self.gpus[0], "llama-server", cmd, self.start_wall, ppid=1))
            self.tree = (base,)
        self.cmd = cmd
        for p in self.procs:
            p.rss = 3 * GIB
            p.cpu_s = 40.0 + 10 * self.restarts

    def restart(self, t: float, down_s: float = 8.0) -> None:
        """The process exits (deploy), comes back, loads, profiles, captures graphs."""
        self.e.up = False
        self.phase_t0 = t
        self.down_s = down_s
        self.restarts += 1
        self.state_until = t + down_s + self.load_s + 6 + self.capture_s
        self.e.waiting.clear()
        self.e.running.clear()

    # ------------------------------------------------------------ a tick
    def tick(self, tr, t: float, dt: float, clocks: dict) -> dict:
        e = self.e
        out = {"acts": {}, "mem": {}, "procs": [], "cores": 0.0}
        wall = tr.start_wall + t
        if t < self.state_until:  # not serving yet: down / loading / profiling / capturing
            t0 = self.phase_t0 if self.phase_t0 is not None else self.state_until - (self.load_s + 6 + self.capture_s)
            since = t - t0
            down = self.down_s if self.phase_t0 is not None else 0.0
            if since < 0:
                out["engine"] = None
                out["engine_reason"] = (f"engine unreachable: cannot reach {self.url}: "
                                        "Connection refused") if tr.engine_url else None
                return out
            if since < down:
                out["engine"] = None
                out["engine_reason"] = f"engine unreachable: cannot reach {self.url}: Connection refused"
                return out
            if since - down < 0.5 and self.restarts and not getattr(self, "_renewed", False):
                self._renewed = True
                self.start_wall = wall
                self._make_procs()
                e.reset_counters()
            s2 = since - down
            load, prof, _cap = self.load_s, 6.0, self.capture_s
            if s2 < load:
                frac = s2 / load
                mem = int(0.5 * GIB + e.weights_gpu * frac)
                act = Activity(busy=0.02 * frac, sm=0.01)
            elif s2 < load + prof:
                mem = int(0.5 * GIB + e.weights_gpu + 3 * GIB)
                act = Activity(busy=0.9, sm=0.7, tensor=0.45, dram=0.4, occ=0.15)
            else:
                mem = e.mem_steady
                act = Activity(busy=0.72, sm=0.06, tensor=0.01, dram=0.03, occ=0.02)
            for p in self.procs:
                p.mem = mem
                p.cpu_rate = 1.0
                out["acts"][p.gpu] = act
                out["mem"][p.gpu] = mem
                out["procs"].append(p)
            out["cores"] = 1.2 * len(self.procs)
            out["engine"] = None
            out["engine_reason"] = f"engine unreachable: cannot reach {self.url}: Connection refused"
            return out
        self._renewed = False
        e.up = True
        clock = min(clocks.get(g, 1.0) for g in self.gpus)
        if not getattr(self, "_warmed", False):
            self._warmed = True
            if t == 0.0 and self.state_until < 0:
                self._warm_up(tr, wall, clock)
        nsub = max(1, int(round(dt / 0.25)))
        sub = dt / nsub
        tot = Activity()
        for k in range(nsub):
            a = e.advance(wall + k * sub, sub, clock)
            tot.add(a, 1.0 / nsub)
        self.last_busy = tot.busy
        for p in self.procs:
            p.mem = e.mem_steady + self.extra_gpu_mem
            out["acts"][p.gpu] = tot
            out["mem"][p.gpu] = p.mem
            out["procs"].append(p)
        # the engine's process tree on the CPU: the busy loop wants ~1 core per process
        busy = 1.0 if e.running else 0.15
        want = (0.25 + 0.9 * busy) * len(self.procs) + 0.3 + 0.002 * len(e.running)
        got = want * e.cpu_share
        for p in self.procs:
            p.cpu_rate = got / max(1, len(self.procs)) * 0.9
        self.cpu_s += got * dt
        self.thread_cpu += min(1.0, got) * 0.85 * dt
        inv = self.inv_rate * (1 + tr.rng.gauss(0, 0.1))
        if e.cpu_share < 1.0:
            inv *= 1 + 60 * (1 - e.cpu_share)
        self.inv += int(max(0, inv) * dt)
        out["cores"] = got
        out["engine"] = self.sample(tr, wall, dt) if self.export else None
        if not self.export:
            out.pop("engine")
        return out

    def _warm_up(self, tr, wall: float, clock: float, span: float = 90.0) -> None:
        """The server has been up for hours: run 90 s before the first frame (so the batch
        is in its steady state) and scale what was counted to the hours it has been up."""
        e = self.e
        inj, e.wl.injections = e.wl.injections, []
        t = wall - span
        while t < wall - 1e-6:
            e.advance(t, 0.25, clock)
            t += 0.25
        e.wl.injections = inj
        scale = max(1.0, (wall - self.start_wall) / span)
        for k in e.c:
            e.c[k] *= scale
        for h in e.h.values():
            h.counts = [c * scale for c in h.counts]
            h.count *= scale
            h.sum *= scale
        self.cpu_s = 1.4 * (wall - self.start_wall)
        self.thread_cpu = 0.9 * (wall - self.start_wall)
        self.inv = int(60 * (wall - self.start_wall))

    # ------------------------------------------------------------ the scrape
    def sample(self, tr, wall: float, dt: float) -> EngineSample:
        e, c = self.e, self.e.c
        taken = wall - 0.012 - 0.01 * tr.rng.random()
        mono = tr.mono0 + (taken - tr.start_wall)
        common = dict(url=self.url, tensor_parallel=e.tp, data_parallel=1, pids=self.tree,
                      time_mono_s=round(mono, 6), time_wall_s=round(taken, 6),
                      cpu_s=round(self.cpu_s + 60.0, 3), ctx_involuntary=int(self.inv),
                      requests_finished_total=float(round(c["finished"])) if self.kind != "llamacpp" else None,
                      busiest_thread_cpu_s=round(self.thread_cpu + 30.0, 3),
                      requests_running=float(len(e.running)),
                      requests_waiting=float(len(e.waiting)))
        if self.kind == "vllm":
            names = ("ttft", "itl", "tpot", "e2e", "queue", "params_n", "params_max_tokens",
                     "max_generation_tokens")
            hists = tuple(e.h[n].snapshot(n) for n in names)
            kvw = e.waiting_for_kv()
            spec = {}
            if e.spec_k:
                spec = dict(spec_drafts_total=round(c["drafts"]),
                            spec_draft_tokens_total=round(c["draft_tok"]),
                            spec_accepted_tokens_total=round(c["accepted"]))
            newer = self.version >= "0.2"
            return EngineSample(
                kind="vllm", model=self.model_name,
                generation_tokens_total=float(round(c["gen"])),
                prompt_tokens_total=float(round(c["prompt"])),
                prompt_tokens_cached_total=float(round(c["cached"])),
                kv_usage_ratio=round(e.kv_usage(), 6), num_gpu_blocks=e.num_blocks,
                block_size=e.block_size,
                kv_pool_bytes=e.pool_bytes if newer else None,
                kv_pool_tokens=e.num_blocks * e.block_size if newer else None,
                kv_config=e.model.kv_config(), cache_dtype="auto" if e.kv_dtype_bytes == 2 else "fp8",
                weights_bytes=e.weights_gpu, weights_source="size of 4 .safetensors file(s)",
                histograms=hists, preemptions_total=float(c["preempt"]),
                waiting_by_reason={"capacity": float(kvw), "deferred": 0.0},
                prefill_seconds_total=round(c["prefill_s"], 3),
                decode_seconds_total=round(c["decode_s"], 3),
                busiest_thread=f"{self.tree[1]} VLLM::EngineCore",
                lora_running=e.lora_running, lora_max=e.lora_max,
                **spec, **common)
        if self.kind == "sglang":
            hists = tuple(e.h[n].snapshot(n) for n in ("ttft", "itl", "e2e", "queue"))
            pool = e.num_blocks * e.block_size
            used = e.used_blocks() * e.block_size
            evict = int(min(pool - used, c["cached"] * 0.02 + 0.15 * pool)) if e.prefix_caching else 0
            spec = {}
            if e.spec_k:
                spec = dict(spec_accept_ratio=round(e.last_accept, 4),
                            spec_accept_length=round(e.last_accept_len, 4))
            return EngineSample(
                kind="sglang", model=self.model_name,
                generation_tokens_total=float(round(c["gen"])),
                prompt_tokens_total=float(round(c["prompt"])),
                prompt_tokens_cached_total=float(round(c["cached"])),
                kv_usage_ratio=round(used / max(1, pool), 6), kv_pool_tokens=pool,
                kv_used_tokens=float(used), kv_free_tokens=float(pool - used - evict),
                kv_evictable_tokens=float(evict),
                retracted_requests_total=float(c["retract"]),
                retracted_input_tokens_total=float(c["retract_tok"]),
                forward_seconds_total=round(c["forward_s"], 3), histograms=hists,
                busiest_thread=f"{self.tree[-1]} sglang::scheduler",
                **spec, **common)
        spec = {}
        if e.spec_k:
            spec = dict(spec_drafts_total=float(round(c["drafts"])),
                        spec_draft_tokens_total=float(round(c["draft_tok"])),
                        spec_accepted_tokens_total=float(round(c["accepted"])))
        return EngineSample(
            kind="llamacpp", model="",
            generation_tokens_total=float(round(c["gen"])),
            prompt_tokens_total=float(round(c["prompt"])),
            prompt_tokens_cached_total=float(round(c["cached"])),
            prefill_seconds_total=round(c["prefill_s"], 4),
            decode_seconds_total=round(c["decode_s"], 4),
            decode_steps_total=float(round(c["steps"])),
            kv_pool_tokens=e.num_blocks * e.block_size, busiest_thread=f"{self.tree[0]} llama-server",
            **spec, **common)


class JobWL:
    """A training job or CUDA program: its Job timeline on its GPUs, one process per GPU,
    optionally a progress counter scraped as a trainer."""

    def __init__(self, job, procs: list[Proc], mem: dict, counter: str | None = None,
                 url: str = "http://127.0.0.1:9400/metrics", unit_per_work: float = 1.0,
                 cpu_rate: float = 1.1):
        self.job, self.procs, self.mem = job, procs, mem
        self.counter, self.url, self.unit = counter, url, unit_per_work
        self.cpu_rate = cpu_rate
        self.cpu_share = 1.0
        self.inv = 0
        self.inv_rate = 40.0
        self.tree_cpu = 100.0
        self.down = None  # fn(offset) -> True while the job is stopped (relaunch)
        self._was_down = False

    def tick(self, tr, t: float, dt: float, clocks: dict) -> dict:
        acts = self.job.tick(tr.start_wall + t, tr.start_wall + t + dt, clocks)
        out = {"acts": acts, "mem": {}, "procs": [], "cores": 0.0}
        if self.down is not None and self.down(t):
            self._was_down = True
            return {"acts": acts}
        if self._was_down:  # relaunched: new processes, fresh counters
            self._was_down = False
            for p in self.procs:
                p.pid += 700
                p.ppid += 700
                p.start = tr.start_wall + t
                p.cpu_s = 0.0
        for p in self.procs:
            if not p.alive:
                continue
            m = self.mem[p.gpu](t) if callable(self.mem[p.gpu]) else self.mem[p.gpu]
            p.mem = m
            p.cpu_rate = self.cpu_rate * self.cpu_share
            out["mem"][p.gpu] = m
            out["procs"].append(p)
        out["cores"] = self.cpu_rate * len(self.procs) * self.cpu_share
        self.tree_cpu += out["cores"] * dt
        self.inv += int(self.inv_rate * len(self.procs) * dt * (1 + 50 * (1 - self.cpu_share)))
        if self.counter:
            taken = tr.start_wall + t + dt - 0.008
            out["engine"] = EngineSample(
                kind="trainer", url=self.url,
                generation_tokens_total=float(round(self.job.work_total * self.unit)),
                requests_finished_total=float(self.job.steps_total),
                work_unit=self.counter, pids=tuple(p.pid for p in self.procs),
                time_mono_s=round(tr.mono0 + taken - tr.start_wall, 6),
                time_wall_s=round(taken, 6))
        return out


class StaticWL:
    """A co-tenant: its own activity and memory on one GPU by time (None: not running)."""

    def __init__(self, proc: Proc, act, mem, cores: float = 1.0):
        self.proc, self.act, self.memf, self.cores = proc, act, mem, cores

    def tick(self, tr, t, dt, clocks):
        a = self.act(t)
        if a is None:
            return {}
        self.proc.mem = self.memf(t) if callable(self.memf) else self.memf
        self.proc.cpu_rate = self.cores
        return {"acts": {self.proc.gpu: a}, "mem": {self.proc.gpu: self.proc.mem},
                "procs": [self.proc], "cores": self.cores}
