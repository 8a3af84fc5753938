"""One node: its GPUs, host, workloads and other tenants, stepped slot by slot; one Frame per
collector tick built from what the simulation did (never from the labels)."""
from __future__ import annotations

import math

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)
from gputop.sources.engine_metrics import config_int, recognise
from corpus_ar import pages
from corpus_ar.hw import BOARDS, GPM_FIELDS, Gpu
from corpus_ar.host import Host

GIB = 1 << 30


class Proc:
    def __init__(self, pid, name, cmdline, user="svc", ppid=1, start=0.0, ctx=None, mem=None,
                 in_tree=True, rss=2 * GIB, container="", pod="", cgroup="", launcher=False):
        self.pid, self.name, self.cmdline, self.user, self.ppid = pid, name, cmdline, user, ppid
        self.start = start
        self.ctx = ctx
        self.mem = mem or {}  # gpu -> bytes (a callable t -> bytes allowed)
        self.in_tree = in_tree
        self.rss = rss
        self.container, self.pod, self.cgroup = container, pod, cgroup
        self.launcher = launcher
        self.threads = []
        self.alive = lambda t: True


class Node:
    def __init__(self, rng, name, board, n_gpus, tick_s, duration, start_wall, cpus, cpuset,
                 quota=None, ebpf=False, inlet=24.0, power_limit=None, scrape_s=5.0):
        self.rng = rng
        self.name = name
        self.board = BOARDS[board]
        self.tick_s = tick_s
        n = max(1, round(tick_s / 0.2))
        self.slot_s = tick_s / n
        self.slots_per_tick = n
        self.duration = duration
        self.start_wall = start_wall
        self.gpus = [Gpu(i, self.board, rng, inlet_c=inlet + rng.uniform(-0.8, 0.8),
                         power_limit=power_limit, slot_s=self.slot_s) for i in range(n_gpus)]
        self.host = Host(rng, name, cpus, cpuset, quota, self.slot_s)
        self.ebpf = ebpf
        self.workloads = []
        self.procs: list[Proc] = []
        self.engine = None
        self.engine_url = ""
        self.trainer_page = None
        self.scrape_s = scrape_s
        self.hooks = []  # f(node, t) called every slot
        self.uuid = [f"GPU-{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-{rng.getrandbits(16):04x}-"
                     f"{rng.getrandbits(16):04x}-{rng.getrandbits(48):012x}" for _ in range(n_gpus)]
        self.bus = [f"00000000:{b:02X}:00.0" for b in (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)[:n_gpus]]
        self.pin_label = ""
        self.jitter_p = lambda t: 0.0
        self.listen = ()
        self.proc_util_mem = True
        self.mono0 = 86400.0 * rng.uniform(2, 40)

    # ------------------------------------------------------------------ run
    def run(self):
        frames = []
        seq = 0
        n_ticks = int(self.duration / self.tick_s)
        slot = 0
        last_scrape = -1e9
        engine_sample = None
        scrape_age = 0.0
        miss = False
        phase = self.rng.uniform(0, self.scrape_s)
        for k in range(1, n_ticks + 1):
            for _ in range(self.slots_per_tick):
                t = slot * self.slot_s
                for h in self.hooks:
                    h(self, t)
                self.host.step(t)
                for w in self.workloads:
                    w.run_until(t + self.slot_s)
                for g in self.gpus:
                    g.close_slot(slot)
                slot += 1
            t = k * self.tick_s
            gt = [g.take_tick() for g in self.gpus]
            ht = self.host.take_tick()
            wt = [w.take_tick(self.tick_s) for w in self.workloads]
            # engine scrape
            status_engine = None
            if self.engine is not None or self.trainer_page is not None:
                if t - last_scrape >= self.scrape_s - 1e-6 and t >= phase:
                    last_scrape = t
                    if self.rng.random() < 0.012 and engine_sample is not None:
                        miss = True
                        status_engine = SourceStatus(False, "timed out after 2.0 s", age_s=round(t - scrape_age, 3),
                                                     poll_s=2.0)
                    else:
                        miss = False
                        engine_sample = self._scrape(t)
                        scrape_age = t
                        status_engine = SourceStatus(True, age_s=0.0, poll_s=round(0.004 + self.rng.random() * 0.01, 4))
                else:
                    status_engine = SourceStatus(not miss, None if not miss else "timed out after 2.0 s",
                                                 age_s=round(t - scrape_age, 3)) if engine_sample is not None else \
                        SourceStatus(False, "no reading yet")
            if self.rng.random() < 0.004 or k == 1:
                continue  # the collector missed this tick
            seq += 1
            frames.append(self._frame(seq, t, gt, ht, wt, engine_sample, status_engine))
        return frames

    # ------------------------------------------------------------------ engine page
    def tree_pids(self):
        return tuple(sorted(p.pid for p in self.procs if p.in_tree))

    def _tree_cpu(self):
        cpu = 0.0
        best = None
        for th in self.host.threads:
            cpu += th.cpu_s
            if best is None or th.cpu_s > best.cpu_s:
                best = th
        return cpu, best

    def _scrape(self, t):
        wall = self.start_wall + t - 0.003
        if self.engine is not None:
            text = pages.RENDER[self.engine.kind](self.engine)
        else:
            text = pages.trainer(self.trainer_page.counters())
        pm = recognise(text, self.engine_url)
        v = pm.values
        cache = pm.cache
        cpu, best = self._tree_cpu()
        eng = self.engine
        return EngineSample(
            kind=pm.kind, url=self.engine_url, model=pm.model,
            generation_tokens_total=v.get("generation_tokens_total"),
            prompt_tokens_total=v.get("prompt_tokens_total"),
            prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"),
            requests_finished_total=v.get("requests_finished_total"),
            requests_running=v.get("requests_running"), requests_waiting=v.get("requests_waiting"),
            kv_usage_ratio=v.get("kv_usage_ratio"),
            num_gpu_blocks=config_int(cache.get("num_gpu_blocks")),
            block_size=config_int(cache.get("block_size")),
            kv_pool_bytes=config_int(cache.get("kv_cache_memory_bytes")),
            kv_pool_tokens=config_int(cache.get("kv_pool_tokens")),
            cache_dtype=cache.get("cache_dtype", ""),
            tensor_parallel=(eng.tp if eng is not None else 1), data_parallel=pm.engines,
            pids=self.tree_pids(), time_mono_s=self.mono0 + t - 0.003, time_wall_s=wall,
            histograms=pm.histograms, preemptions_total=v.get("preemptions_total"),
            retracted_requests_total=v.get("retracted_requests_total"), work_unit=pm.work_unit,
            waiting_by_reason=dict(pm.waiting_by_reason),
            cpu_s=round(cpu, 2), ctx_involuntary=self.host.ctx_invol,
            busiest_thread_cpu_s=round(best.cpu_s, 2) if best else None,
            busiest_thread=f"{best.tid} {best.name}" if best else "",
            cpu_quota_cores=self.host.quota_fn(t) if self.host.quota_fn else self.host.quota,
            cpu_periods=self.host.periods if (self.host.quota or self.host.quota_fn) else None,
            cpu_throttled_periods=self.host.throttled if (self.host.quota or self.host.quota_fn) else None,
            kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
            kv_evictable_tokens=v.get("kv_evictable_tokens"),
            retracted_input_tokens_total=v.get("retracted_input_tokens_total"),
            spec_drafts_total=v.get("spec_drafts_total"),
            spec_draft_tokens_total=v.get("spec_draft_tokens_total"),
            spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"),
            spec_accept_ratio=v.get("spec_accept_ratio"), spec_accept_length=v.get("spec_accept_length"),
            prefill_seconds_total=v.get("prefill_seconds_total"),
            decode_seconds_total=v.get("decode_seconds_total"),
            forward_seconds_total=v.get("forward_seconds_total"),
            decode_steps_total=v.get("decode_steps_total"),
            lora_running=pm.lora[0], lora_waiting=pm.lora[1], lora_max=pm.lora[2])

    # ------------------------------------------------------------------ launch histograms
    def _launch(self, t, wt):
        out = []
        launchers = [p for p in self.procs if p.launcher and p.in_tree]
        if not launchers:
            return ()
        total = sum(w.get("launches", 0) for w in wt)
        graphs = sum(w.get("graphs", 0) for w in wt)
        share = self.host.share
        pj = min(0.5, self.jitter_p(t) + (1 - share) * 0.01)
        per = max(0, total // len(launchers))
        for p in launchers:
            for api, count, med in (("cudaLaunchKernel", per, 3.4e3), ("cudaGraphLaunch", graphs // len(launchers), 11e3)):
                if count <= 0:
                    continue
                m = min(count, 120)
                buckets = {}
                tot = 0.0
                mx = 0
                for _ in range(m):
                    if self.rng.random() < pj:
                        ns = int(math.exp(self.rng.uniform(math.log(2.5e4), math.log(4e6))))
                    else:
                        ns = int(med * math.exp(self.rng.gauss(0, 0.3)))
                    buckets[bucket_index(ns)] = buckets.get(bucket_index(ns), 0) + 1
                    tot += ns
                    mx = max(mx, ns)
                scale = count / m
                scaled = {}
                acc = 0
                keys = sorted(buckets)
                for i, b in enumerate(keys):
                    c = int(round(buckets[b] * scale)) if i < len(keys) - 1 else count - acc
                    if c > 0:
                        scaled[b] = c
                        acc += c
                out.append(LaunchHist(api, p.pid, count, int(tot * scale), mx, scaled))
        return tuple(out)

    # ------------------------------------------------------------------ frame
    def _frame(self, seq, t, gt, ht, wt, engine_sample, status_engine):
        wall = self.start_wall + t + self.rng.uniform(-0.004, 0.004)
        gpus = []
        procs = []
        for g, r in zip(self.gpus, gt):
            b = g.b
            used = 0
            plist = []
            for p in self.procs:
                if g.index not in p.mem or not p.alive(t):
                    continue
                mem = p.mem[g.index](t) if callable(p.mem[g.index]) else p.mem[g.index]
                if mem <= 0:
                    continue
                used += mem
                busy = r["ctx"].get(p.ctx, 0.0) if p.ctx is not None else 0.0
                plist.append((p, mem, busy))
            reserved = int(b.mem_total * 0.0043)
            used = min(used + 400 * (1 << 20) * (1 if plist else 0), b.mem_total - reserved)
            n_active = sum(1 for x in plist if x[2] > 0.005)
            for p, mem, busy in plist:
                cpu = sum(th.cpu_s for th in p.threads)
                procs.append(ProcSample(
                    pid=p.pid, gpu_index=g.index, name=p.name, cmdline=p.cmdline, user=p.user,
                    ppid=p.ppid, start_time_s=p.start, mem_bytes=int(mem),
                    sm_util_pct=float(round(100 * min(1.0, busy) * (r["sm"] / max(r["busy"], 1e-6) if b.gpm and n_active > 1 else 1.0))),
                    cpu_s=round(cpu, 2), rss_bytes=p.rss, container=p.container, pod=p.pod,
                    cgroup=p.cgroup, mem_util_pct=float(round(100 * r["dram"] * (busy / max(r["busy"], 1e-6)))) if busy else 0.0))
            missing = {}
            if not b.gpm:
                for f in GPM_FIELDS:
                    missing[f] = "needs Hopper+ (GPM)"
            if not b.fan:
                missing["fan_pct"] = "not supported on this GPU"
            gm = b.gpm
            gpus.append(GpuSample(
                index=g.index, name=b.name, uuid=self.uuid[g.index],
                util_gpu_pct=float(r["util"]), util_gpu_samples_pct=r["samples"],
                util_mem_pct=float(round(100 * r["dram"] * 0.92)),
                sm_active_pct=100 * r["sm"] if gm else None,
                sm_occupancy_pct=100 * r["occ"] if gm else None,
                dram_bw_pct=100 * r["dram"] if gm else None,
                tensor_pct=100 * r["tensor"] if gm else None,
                mem_total_bytes=b.mem_total, mem_used_bytes=int(used), mem_reserved_bytes=reserved,
                power_w=round(r["power"], 3), temp_c=float(round(g.temp)), sm_clock_mhz=float(g.clock),
                throttle=g.throttle, bus_id=self.bus[g.index],
                fan_pct=float(round(g.fan)) if g.fan is not None else None, pstate=0,
                power_limit_w=float(g.power_limit), mem_clock_mhz=float(b.mem_clock),
                pcie_rx_mib_per_s=(r["pcie"] * 0.3 / 2**20 + 30) if gm else None,
                pcie_tx_mib_per_s=(r["pcie"] * 0.7 / 2**20 + 4) if gm else None,
                nvlink_rx_mib_per_s=(r["nvl"] / 2**20) if gm else None,
                nvlink_tx_mib_per_s=(r["nvl"] / 2**20) if gm else None,
                ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False, missing=missing))
        host = HostSample(cpu_pct=round(ht["cpu_pct"], 1),
                          offcpu_switches=int(ht["offcpu"]) if self.ebpf else None,
                          cpu_pressure_some_pct=round(ht["psi"], 2), run_queue=ht["runq"],
                          cpus=self.host.cpus, ctx_switches_total=self.host.ctx_host)
        cpu, _ = self._tree_cpu()
        ths = sorted(self.host.threads, key=lambda th: (-th.cpu_s, th.tid))[:24]
        quota = self.host.quota_fn(t) if self.host.quota_fn else self.host.quota
        pinned = PinnedSample(
            label=self.pin_label, root_pids=(min(self.tree_pids()),) if self.tree_pids() else (),
            tree_pids=self.tree_pids(), cpu_s=round(cpu, 2), ctx_voluntary=self.host.ctx_vol,
            ctx_involuntary=self.host.ctx_invol,
            threads=tuple(ThreadSample(th.tid, th.pid, th.name, round(th.cpu_s, 2)) for th in ths),
            cores=self.host.cpuset, cpu_pressure_some_pct=round(ht["psi"], 2), run_queue=ht["runq"],
            listening_ports=self.listen, cpu_quota_cores=quota,
            cpu_periods=self.host.periods if quota else None,
            cpu_throttled_periods=self.host.throttled if quota else None)
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=0.004),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.001),
                   "pin": SourceStatus(True, age_s=0.0, poll_s=0.02),
                   "procfs": SourceStatus(True, detail="/proc", age_s=0.0, poll_s=0.0005)}
        if status_engine is not None:
            sources["engine"] = status_engine
        if self.ebpf:
            sources["ebpf"] = SourceStatus(True, detail="uprobes on libcudart.so.12: cudaLaunchKernel, cudaGraphLaunch",
                                           age_s=0.0, poll_s=0.002)
            launch = self._launch(t, wt)
        else:
            sources["ebpf"] = SourceStatus(False, "off (start with --ebpf to measure launch latency)")
            launch = ()
        return Frame(gpus=tuple(gpus), processes=tuple(procs), engine=engine_sample, launch=launch,
                     host=host, pinned=pinned, seq=seq, time_wall_s=round(wall, 4),
                     time_mono_s=round(self.mono0 + t, 4), sources=sources)
