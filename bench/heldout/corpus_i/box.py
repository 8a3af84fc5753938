"""One machine over time: boards, jobs, the host's CPUs, and the frames gputop would write.

Each tick: scenario events run (faults, restarts, traffic changes); every job advances
on the clocks its boards settled last tick; the activity of the jobs on a board (a
co-tenant time-slices with the job: the job's stretched time already holds the tenant's
slices) settles the board's power, temperature and clock; then the frame is written the
way gputop's sources write it: NVML + GPM per board, the process list (NVML per-process
memory and SM util), the engine's scrape (held between scrapes when the scrape interval
is longer than the tick), /proc (CPU, PSI, run queue, the trees' CPU and involuntary
switches), the pinned tree where the user pinned one, and eBPF launch histograms only
where the user runs with eBPF.
"""

from __future__ import annotations

import math

from gputop.schema import (EngineSample, Frame, HostSample, LaunchHist, MigSample, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)

from .gpu import Board
from .hist import launch_buckets
from .serve import Server
from .train import Program, Tenant, Trainer

WALL0 = 1_797_000_000.0


class Box:
    def __init__(self, rng, gpu_model, n_gpus, tick, dur, *, cpus=64, bg=2.0, ebpf=False,
                 scrape=None, pin=None, wall0=None, user="svc"):
        self.rng = rng
        self.tick, self.dur = tick, dur
        self.boards = [Board(gpu_model, i, rng, "00000000:%02X:00.0" % (0x18 + 0x10 * i))
                       for i in range(n_gpus)]
        self.cpus, self.bg = cpus, bg
        self.ebpf, self.scrape, self.pin = ebpf, scrape or tick, pin
        self.jobs: list = []
        self.tenants: list[Tenant] = []
        self.neighbors: list = []  # fn(t) -> busy cores of other work on the host
        self.events: list = []
        self.wall0 = wall0 if wall0 is not None else WALL0 + rng.randrange(0, 3_000_000)
        self.user = user
        self.pid_next = 1000 + rng.randrange(0, 50000)
        self.psi = 0.0
        self.ctxt = rng.randrange(10**8, 10**9)
        self.cpu_acc: dict[int, float] = {}
        self.invol: dict[int, float] = {}
        self.engine_cache = None
        self.engine_read_at = -1e9
        self.engine_err = None
        self.mig = None  # {gpu: [(profile, job)]}

    def pid(self):
        self.pid_next += self.rng.randrange(3, 40)
        return self.pid_next

    # ------------------------------------------------------------------ jobs
    def add(self, job):
        if isinstance(job, Server):
            job.api_pid = self.pid()
            job.core_pid = self.pid()
            job.worker_pids = {g: (job.core_pid if (len(job.gpus) == 1 and job.kind != "sglang")
                                   or job.kind == "llamacpp" else self.pid()) for g in job.gpus}
            if job.kind == "llamacpp":
                job.api_pid = job.core_pid
            job.mem_cur = {g: job.mem for g in job.gpus}
            job.started = self.rng.uniform(3600, 90000)
        elif isinstance(job, (Trainer, Program)):
            job.root_pid = self.pid()
            job.rank_pids = {g: self.pid() for g in job.gpus}
            job.loader_pids = [self.pid() for _ in range(min(4, getattr(job, "workers", 0)))]
            job.mem_cur = {g: job.mem for g in job.gpus}
            job.started = self.rng.uniform(600, 30000)
        self.jobs.append(job)
        return job

    def add_tenant(self, tenant: Tenant):
        tenant.pid = self.pid()
        self.tenants.append(tenant)
        return tenant

    # ------------------------------------------------------------------ run
    def run(self):
        frames = []
        n = int(round(self.dur / self.tick))
        for i in range(n):
            t = i * self.tick
            for ev in self.events:
                ev(t, self)
            frames.append(self._frame(i, t))
        return frames

    def _demand(self, t):
        d = self.bg * (1 + 0.1 * math.sin(t / 37.0)) + sum(fn(t) for fn in self.neighbors)
        for j in self.jobs:
            if isinstance(j, Server):
                d += (0.4 + 0.97 * len(set(j.worker_pids.values())) + 0.3 * (j.kind == "sglang")) if j.up else 0.1
            elif isinstance(j, Trainer):
                d += len(j.gpus) * (1.0 + j.loader_cpu)
            else:
                d += len(j.gpus)
        return max(0.1, d)

    def _frame(self, i, t):
        rng, dt = self.rng, self.tick
        demand = self._demand(t)
        share = min(1.0, self.cpus / demand)
        acts: dict[int, list] = {b.index: [] for b in self.boards}
        for tn in self.tenants:
            d = tn.d(t)
            for j in self.jobs:
                if tn.gpu in j.gpus and d > 0:
                    j.share[tn.gpu] = 1.0 / (1.0 + 0.92 * d)
                elif tn.gpu in j.gpus:
                    j.share[tn.gpu] = 1.0
        for j in self.jobs:
            j.cpu_share = share * getattr(j, "cpu_cap", 1.0)
            for g in j.gpus:
                j.clock[g] = self.boards[g].f
            a = j.advance(t, dt)
            for g, x in a.items():
                acts[g].append((j, x))
        gpus, procs = [], []
        for b in self.boards:
            g = b.index
            mine = acts[g]
            act = _combine([x for _, x in mine])
            ten = [tn for tn in self.tenants if tn.gpu == g and tn.alive(t)]
            for tn in ten:
                d = tn.d(t)
                act["busy"] = max(act.get("busy", 0.0), min(1.0, d))
                if not mine or act.get("sm", 0) < 0.45 * d:
                    act["sm"] = max(act.get("sm", 0.0), 0.55 * d)
                    act["tensor"] = max(act.get("tensor", 0.0), 0.35 * d)
                    act["dram"] = max(act.get("dram", 0.0), 0.3 * d)
                    act["subs"] = None
            mem = 0
            for j, _ in mine:
                mem += j.mem_cur.get(g, 0)
            for j in self.jobs:
                if g in j.gpus and not any(j is m for m, _ in mine):
                    mem += j.mem_cur.get(g, 0)
            mem += sum(tn.mem_at(t) for tn in self.tenants if tn.gpu == g)
            has_ctx = mem > 0
            b.step(dt, act, has_ctx)
            mig = None
            if self.mig and g in self.mig:
                mig = self._migs(g, mine, i == 0)
            gpus.append(b.sample(dt, act, mem, i == 0, mig))
            procs += self._procs(g, mine, t, dt, act, share)
            for tn in ten:
                d = tn.d(t)
                procs.append(ProcSample(pid=tn.pid, gpu_index=g, name=tn.name, cmdline=tn.cmd,
                                        user="alice", ppid=tn.pid - 7, start_time_s=self.wall0 + tn.start,
                                        mem_bytes=tn.mem_at(t),
                                        sm_util_pct=float(round(100 * min(1, d) * (0.5 if mine else 1.0))),
                                        cpu_s=round(self._acc(tn.pid, 1.0 * dt), 2),
                                        rss_bytes=3 * 2**30))
        host, launch, pinned = self._host(t, dt, demand, share)
        engine, est = self._engine(t, share)
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=0.004 + 0.001 * len(self.boards)),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.0004)}
        sources["engine"] = est
        if self.pin is not None:
            sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.0003)
        if self.ebpf:
            sources["ebpf"] = SourceStatus(True, detail="full mode; libcudart.so.12: cudaLaunchKernel, "
                                           "cudaGraphLaunch, cudaMemcpyAsync; libcuda.so.1: cuLaunchKernel",
                                           age_s=0.0, poll_s=0.002)
        return Frame(seq=i, time_wall_s=self.wall0 + t + rng.uniform(0, 0.002),
                     time_mono_s=40000.0 + t, gpus=tuple(gpus), processes=tuple(procs),
                     engine=engine, launch=launch, host=host, pinned=pinned, sources=sources)

    def _acc(self, pid, add):
        self.cpu_acc[pid] = self.cpu_acc.get(pid, self.rng.uniform(50, 4000)) + add
        return self.cpu_acc[pid]

    def _inv(self, pid, add):
        self.invol[pid] = self.invol.get(pid, self.rng.randrange(1000, 90000)) + add
        return int(self.invol[pid])

    def _procs(self, g, mine, t, dt, act, share):
        out = []
        for j in self.jobs:
            if g not in j.gpus or j.mem_cur.get(g, 0) <= 0:
                continue
            active = any(j is m for m, _ in mine)
            sm = float(min(100, round(100 * act.get("busy", 0.0) * (1 / (1 + sum(
                tn.d(t) for tn in self.tenants if tn.gpu == g)))))) if active else 0.0
            if isinstance(j, Server):
                pid = j.worker_pids[g]
                name = {"vllm": "VLLM::EngineCore" if len(j.gpus) == 1 else f"VLLM::Worker_TP{j.gpus.index(g)}",
                        "sglang": f"sglang::scheduler_TP{j.gpus.index(g)}" if len(j.gpus) > 1 else "sglang::scheduler",
                        "llamacpp": "llama-server"}[j.kind]
                cmd = j.cmdline if j.kind == "llamacpp" else name
                ppid = j.core_pid if pid != j.core_pid else j.api_pid
                cpu_rate = 0.97 * j.cpu_share if j.up else 0.05
                rss = 6 * 2**30
            else:
                pid = j.rank_pids[g]
                name, cmd, ppid = j.name, j.cmd, j.root_pid
                cpu_rate = min(1.0, 0.25 + j.host_busy) * j.cpu_share
                rss = 14 * 2**30
            mig_index = None
            if self.mig and g in self.mig:
                mig_index = next((k for k, (_, job) in enumerate(self.mig[g]) if job is j), None)
                sm = None
            out.append(ProcSample(pid=pid, gpu_index=g, name=name, cmdline=cmd, user=self.user,
                                  ppid=ppid, start_time_s=self.wall0 - j.started,
                                  mem_bytes=j.mem_cur[g], sm_util_pct=sm,
                                  cpu_s=round(self._acc(pid, cpu_rate * dt), 2), rss_bytes=rss,
                                  mig_index=mig_index))
        return out

    def _migs(self, g, mine, first):
        out = []
        for k, (profile, job) in enumerate(self.mig[g]):
            a = next((x for j, x in mine if j is job), {})
            size = int(profile.split(".")[1].rstrip("gb")) * 10**9
            vals = {}
            missing = {}
            if first:
                missing = {n: "GPM needs a second sample" for n in ("sm_active_pct", "sm_occupancy_pct",
                                                                      "tensor_pct", "dram_bw_pct")}
            else:
                vals = dict(sm_active_pct=100 * a.get("sm", 0.0), sm_occupancy_pct=38 * a.get("sm", 0.0),
                            tensor_pct=100 * a.get("tensor", 0.0), dram_bw_pct=100 * a.get("dram", 0.0))
            out.append(MigSample(index=k, name=f"{self.boards[g].s['name']} MIG {profile}",
                                 uuid=f"MIG-{self.rng.getrandbits(64):016x}", mem_total_bytes=size,
                                 mem_used_bytes=job.mem_cur.get(g, 0), gpu_instance_id=1 + k,
                                 compute_instance_id=0, profile=profile,
                                 sm_count=int(profile[0]) * 16 + (2 if profile[0] == "3" else 0),
                                 missing=missing, **vals))
        return tuple(out)

    def _host(self, t, dt, demand, share):
        rng = self.rng
        over = max(0.0, demand - 0.85 * self.cpus) / (0.3 * self.cpus)
        target = 100 * (1 - math.exp(-over)) if over > 0 else rng.uniform(0, 1.2)
        self.psi += (target - self.psi) * (1 - math.exp(-dt / 10.0))
        self.ctxt += int((1500 + 900 * demand) * dt)
        cpu = min(100.0, 100 * demand / self.cpus * (1 + rng.gauss(0, 0.03)))
        launch = []
        offcpu = None
        pinned = None
        pressure = max(0.0, demand / self.cpus - 0.9)
        for j in self.jobs:
            base = 60 if isinstance(j, Server) else 30
            j.inv_rate = base * (1 + rng.gauss(0, 0.15)) + 4000 * min(2.0, pressure) + getattr(j, "jitter_inv", 0.0)
        if self.ebpf:
            offcpu = 0
            for j in self.jobs:
                if not getattr(j, "up", True):
                    continue
                lp = getattr(j, "core_pid", None) or next(iter(j.rank_pids.values()))
                launch += self._launch(j, lp, dt)
                n_off = int(max(0, j.inv_rate * dt * (0.4 if not getattr(j, "jitter_off_ns", 0) else 1.0)))
                if n_off:
                    med = getattr(j, "jitter_off_ns", 0) or 18000 + 90000 * min(1.0, pressure)
                    bk, tot, top = launch_buckets(rng, n_off, med, 0.7)
                    launch.append(LaunchHist(api="off-cpu", pid=lp, count=n_off, sum_ns=tot,
                                             max_ns=top, buckets=bk))
                    offcpu += n_off
        host = HostSample(cpu_pct=round(cpu, 1), offcpu_switches=offcpu,
                          cpu_pressure_some_pct=round(max(0.0, self.psi + rng.gauss(0, 0.3)), 2),
                          run_queue=max(1, int(round(demand + rng.gauss(0, 1.0)))), cpus=self.cpus,
                          ctx_switches_total=self.ctxt)
        if self.pin is not None:
            pinned = self._pinned(self.pin, t, dt)
        return host, tuple(launch), pinned

    def _launch(self, j, pid, dt):
        rng = self.rng
        jit_p = getattr(j, "jitter_p", 0.0)
        jit_ns = getattr(j, "jitter_ns", 0.0)
        out = []
        if isinstance(j, Server):
            steps = max(1, int(getattr(j, "steps_tick", 50)))
            apis = (("cudaGraphLaunch", steps, 9000), ("cuLaunchKernel", steps * 14, 3600),
                    ("cudaLaunchKernel", steps * 9, 4200), ("cudaMemcpyAsync", steps * 3, 6500))
        else:
            steps = max(1, int(dt / max(0.01, getattr(j, "last_T", 0.5))))
            apis = (("cudaLaunchKernel", steps * 900, 4100), ("cuLaunchKernel", steps * 160, 3400),
                    ("cudaMemcpyAsync", steps * 6, 7000))
        for api, count, med in apis:
            bk, tot, top = launch_buckets(rng, count, med, 0.28, jit_p, jit_ns)
            out.append(LaunchHist(api=api, pid=pid, count=count, sum_ns=tot, max_ns=top, buckets=bk))
        return out

    def _pinned(self, j, t, dt):
        pids = list(getattr(j, "rank_pids", {}).values()) or list(j.worker_pids.values())
        root = getattr(j, "root_pid", None) or j.api_pid
        loaders = getattr(j, "loader_pids", [])
        tree = tuple(sorted({root, *pids, *loaders}))
        share = j.cpu_share
        main_rate = min(1.0, 0.25 + getattr(j, "host_busy", 0.9)) * share
        lrate = (getattr(j, "loader_cpu", 0.0) * len(j.gpus) / max(1, len(loaders))) * share if loaders else 0.0
        tot_rate = main_rate * len(pids) + lrate * len(loaders) + 0.05
        cpu = self._acc(-root, tot_rate * dt)
        threads = [ThreadSample(tid=p, pid=p, name=("pt_main_thread" if isinstance(j, Trainer) else j.name),
                                cpu_s=round(self._acc(-p - 1, main_rate * dt), 2)) for p in pids]
        threads += [ThreadSample(tid=p, pid=p, name="pt_data_worker", cpu_s=round(self._acc(-p - 1, lrate * dt), 2))
                    for p in loaders]
        threads.sort(key=lambda x: -x.cpu_s)
        inv = self._inv(-root, j.inv_rate * dt * max(1, len(pids)))
        return PinnedSample(label=j.cmd[:60], pattern=j.cmd.split()[-1], root_pids=(root,), tree_pids=tree,
                            cpu_s=round(cpu, 2), ctx_voluntary=self._inv(-root - 3, 900 * dt * len(tree)),
                            ctx_involuntary=inv, threads=tuple(threads[:8]),
                            cores=tuple(range(self.cpus)), cpu_pressure_some_pct=round(self.psi, 2),
                            run_queue=max(1, int(round(self._demand(t)))))

    # ------------------------------------------------------------------ engine scrape
    def _engine(self, t, share):
        servers = [j for j in self.jobs if isinstance(j, Server)]
        trainers = [j for j in self.jobs if isinstance(j, Trainer) and j.counter]
        if not servers and not trainers:
            return None, SourceStatus(False, "no engine found (pass --engine URL)")
        if t - self.engine_read_at < self.scrape - 1e-6 and self.engine_cache is not None:
            age = t - self.engine_read_at
            return self.engine_cache, SourceStatus(True, age_s=round(age, 3), poll_s=0.02)
        if t - self.engine_read_at < self.scrape - 1e-6 and self.engine_err is not None:
            return None, self.engine_err
        self.engine_read_at = t
        samples = []
        for s in servers:
            if s.up:
                samples.append(self._server_sample(s, t))
        for tr in trainers:
            samples.append(self._trainer_sample(tr, t))
        if not samples:
            self.engine_cache = None
            self.engine_err = SourceStatus(False, "engine unreachable: <urlopen error [Errno 111] "
                                           "Connection refused> (retry in 4s)")
            return None, self.engine_err
        self.engine_err = None
        eng = samples[0] if len(samples) == 1 else _merge(samples)
        self.engine_cache = eng
        return eng, SourceStatus(True, age_s=0.0, poll_s=0.02 + 0.01 * len(samples))

    def _server_sample(self, s, t):
        run, wait, kv = s.gauges()
        c = s.c
        pids = tuple(sorted({s.api_pid, s.core_pid, *s.worker_pids.values()}))
        rate = s.cpu_share
        tree_cpu = self._acc(-s.api_pid, (0.35 + 0.97 * len(set(s.worker_pids.values()))) * rate * self.scrape)
        busiest = self._acc(-s.core_pid - 9, 0.97 * rate * self.scrape)
        inv = self._inv(-s.api_pid, s.inv_rate * self.scrape * len(pids))
        kvc = {"num_hidden_layers": s.layers, "num_attention_heads": s.heads,
               "num_key_value_heads": s.kvh, "hidden_size": s.hidden, "head_dim": s.hd,
               "dtype": "bfloat16"}
        common = dict(url=s.url, model=s.model_name, requests_running=float(run),
                      requests_waiting=float(wait), kv_usage_ratio=kv, kv_config=kvc,
                      cache_dtype="auto", weights_bytes=s.weights, weights_source="size of 4 .safetensors file(s)",
                      tensor_parallel=s.tp, data_parallel=1, pids=pids,
                      time_mono_s=40000.0 + t + 0.01, time_wall_s=self.wall0 + t + 0.01,
                      cpu_s=round(tree_cpu, 2), ctx_involuntary=inv,
                      busiest_thread_cpu_s=round(busiest, 2))
        hists = tuple(h.frozen() for h in s.h.values())
        if s.kind == "vllm":
            return EngineSample(
                kind="vllm", **common, generation_tokens_total=float(int(c["gen"])),
                prompt_tokens_total=float(int(c["prompt"])), prompt_tokens_cached_total=float(int(c["cached"])),
                requests_finished_total=c["fin"], num_gpu_blocks=s.pool // 16, block_size=16,
                kv_pool_bytes=s.pool * s.kvb, kv_pool_tokens=s.pool, histograms=hists,
                preemptions_total=c["pre"], waiting_by_reason={"capacity": float(wait), "deferred": 0.0},
                busiest_thread=f"{s.core_pid} VLLM::EngineCor",
                prefill_seconds_total=round(c["pf_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
                spec_drafts_total=float(int(c["drafts"])) if s.spec_k else None,
                spec_draft_tokens_total=float(int(c["dtok"])) if s.spec_k else None,
                spec_accepted_tokens_total=float(int(c["acc"])) if s.spec_k else None,
                corrupted_requests_total=0.0)
        if s.kind == "sglang":
            evict = max(0.0, 0.25 * (s.pool - s.kv_used)) if s.traffic.cached else 0.0
            return EngineSample(
                kind="sglang", **common,
                generation_tokens_total=float(int(c["rt_dec"] if s.realtime else c["gen"])),
                prompt_tokens_total=float(int(c["rt_pc"] + c["rt_pch"] if s.realtime else c["prompt"])),
                prompt_tokens_cached_total=float(int(c["rt_pch"] if s.realtime else c["cached"])),
                requests_finished_total=c["fin"], kv_pool_tokens=s.pool, histograms=hists,
                retracted_requests_total=c["retr"], retracted_input_tokens_total=c["retr_tok"],
                kv_used_tokens=float(int(s.kv_used)), kv_free_tokens=float(int(s.pool - s.kv_used - evict)),
                kv_evictable_tokens=float(int(evict)), busiest_thread=f"{s.core_pid} sglang::schedul",
                spec_accept_ratio=s.accept if s.spec_k else None,
                spec_accept_length=(1 + s.accept * s.spec_k) if s.spec_k else None,
                forward_seconds_total=round(c["fwd_s"], 3) if s.forward_metric else None)
        return EngineSample(
            kind="llamacpp", **{**common, "kv_usage_ratio": None, "weights_source": "size of 1 .gguf file(s)"},
            generation_tokens_total=float(int(c["gen"])),
            prompt_tokens_total=float(int(c["prompt"] + c["cached"])),
            prompt_tokens_cached_total=float(int(c["cached"])), kv_pool_tokens=s.pool,
            busiest_thread=f"{s.core_pid} llama-server", prefill_seconds_total=round(c["pf_s"], 3),
            decode_seconds_total=round(c["dec_s"], 3), decode_steps_total=float(int(c["steps"])))

    def _trainer_sample(self, tr, t):
        steps = tr.counter_value(t)
        pids = tuple(sorted({tr.root_pid, *tr.rank_pids.values(), *tr.loader_pids}))
        rate = tr.cpu_share * (len(tr.gpus) * (0.25 + tr.host_busy) + tr.loader_cpu * len(tr.gpus))
        unit = tr.counter
        work = steps * (tr.tokens if unit == "tokens" else tr.tokens // 4096)
        return EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics", model="",
                            generation_tokens_total=float(work), requests_finished_total=float(steps),
                            work_unit=unit, pids=pids, time_mono_s=40000.0 + t,
                            time_wall_s=self.wall0 + t, cpu_s=round(self._acc(-tr.root_pid - 5, rate * self.scrape), 2),
                            ctx_involuntary=self._inv(-tr.root_pid - 5, tr.inv_rate * self.scrape * len(pids)),
                            busiest_thread_cpu_s=round(self._acc(-tr.root_pid - 6, tr.cpu_share * min(1, 0.25 + tr.host_busy) * self.scrape), 2),
                            busiest_thread=f"{next(iter(tr.rank_pids.values()))} pt_main_thread")


SUMMED = ("generation_tokens_total", "prompt_tokens_total", "requests_finished_total",
          "requests_running", "requests_waiting", "preemptions_total", "cpu_s", "ctx_involuntary",
          "prompt_tokens_cached_total", "retracted_requests_total", "kv_used_tokens", "kv_free_tokens")


def _merge(samples):
    """Several endpoints read as one service (as gputop merges discovered engines): counters
    add, KV usage averages, each endpoint a replica of its own."""
    import dataclasses
    first = samples[0]
    vals = {}
    for name in SUMMED:
        v = [getattr(s, name) for s in samples]
        vals[name] = None if any(x is None for x in v) else sum(v)
    kv = [s.kv_usage_ratio for s in samples]
    vals["kv_usage_ratio"] = None if any(x is None for x in kv) else sum(kv) / len(kv)
    hists = []
    for h in first.histograms:
        same = [next((x for x in s.histograms if x.name == h.name), None) for s in samples]
        if all(x is not None for x in same):
            hists.append(dataclasses.replace(
                h, cumulative=tuple(sum(v) for v in zip(*(x.cumulative for x in same))),
                count=sum(x.count for x in same), sum=sum(x.sum for x in same)))
    return dataclasses.replace(
        first, **vals, histograms=tuple(hists), url=" + ".join(s.url for s in samples),
        pids=tuple(sorted({p for s in samples for p in s.pids})), busiest_thread_cpu_s=None,
        busiest_thread="", data_parallel=len(samples),
        replicas=tuple(dataclasses.replace(s, replica=s.url) for s in samples))


def _combine(xs):
    if not xs:
        return dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, subs=None)
    if len(xs) == 1:
        return dict(xs[0])
    out = {}
    for k in ("busy", "sm", "tensor", "dram", "occ", "nvlink"):
        out[k] = min(1.0 if k != "nvlink" else 1e9, sum(x.get(k, 0.0) for x in xs))
    out["subs"] = None
    return out
