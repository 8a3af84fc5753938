"""Runs one trace: the node's grains (DT) -> the collector's ticks -> gputop Frames."""
from __future__ import annotations

import hashlib
import math
import random

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, GpuSample, HostSample, LaunchHist, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)
from gputop.sources.engine_metrics import config_int, recognise

from corpus_ap.hw import DT, Gpu, Host, Spec
from corpus_ap.jobs import Bins, Env

ENGINE_FIELDS = set(EngineSample.__dataclass_fields__)
NO_GPM = {k: "needs Hopper+ (GPM); DCGM profiling not enabled" for k in
          ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct", "pcie_rx_mib_per_s",
           "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s")}


def seed_of(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")


class Node:
    def __init__(self, rng, gpu_key, ngpu, host, limit=None, inlet=24.0):
        self.spec = Spec(gpu_key)
        self.gpus = [Gpu(i, self.spec, rng, inlet=inlet + rng.uniform(-1, 2), limit=limit) for i in range(ngpu)]
        self.host = host
        self.avail = [1.0] * ngpu


def engine_sample(text, url, t_wall, t_mono, extra):
    p = recognise(text, url)
    kw = {k: v for k, v in p.values.items() if k in ENGINE_FIELDS}
    c = p.cache
    kw.update(kind=p.kind, url=url, model=p.model, histograms=p.histograms, work_unit=p.work_unit,
              waiting_by_reason=dict(p.waiting_by_reason), time_wall_s=t_wall, time_mono_s=t_mono,
              num_gpu_blocks=config_int(c.get("num_gpu_blocks")), block_size=config_int(c.get("block_size")),
              kv_pool_tokens=config_int(c.get("kv_pool_tokens")),
              kv_pool_bytes=config_int(c.get("kv_cache_memory_bytes")), cache_dtype=c.get("cache_dtype", ""))
    kw.update(extra)
    return EngineSample(**kw)


def run(tr):
    """tr: scenarios.TraceSpec.  Returns the list of Frames."""
    rng = random.Random(seed_of(tr.name))
    host = Host(rng, tr.cpus, tuple(tr.cores), quota=tr.quota, bg=tr.host_bg)
    node = Node(rng, tr.gpu, tr.ngpu, host, limit=tr.power_limit, inlet=tr.inlet)
    job = tr.make_job(rng, node)
    for setup in tr.setups:
        setup(job, node, rng)
    env = Env(node)
    bins = Bins(tr.ngpu, tr.duration + 60)
    spec = node.spec
    ngpu = tr.ngpu
    nb = int(round(tr.duration / DT))
    tick_n = max(1, int(round(tr.tick / DT)))
    samp_n = max(1, int(round(spec.sample_s / DT)))
    frames = []
    acc = [[0.0] * 6 for _ in range(ngpu)]  # sm, ten, dram, power, busy, n
    samples = [[] for _ in range(ngpu)]
    samp_acc = [[0.0, 0.0] for _ in range(ngpu)]
    proc_busy = {}  # (pid, gpu) -> busy seconds this tick
    cpu_s = 0.0
    thread_cpu = {name: 0.0 for name, _ in tr.threads}
    tenants = tr.tenants
    seq = 0
    scrape_next = tr.scrape_first
    eng = None
    eng_age = None
    eng_poll = 0.0
    last_launch = [0.0, 0.0]
    last_invol = 0.0
    last_throttled = 0
    mono0 = 3600.0 + rng.uniform(0, 5000)
    proc_cpu = {}
    tenant_cpu = 0.0
    for i in range(nb):
        t = i * DT
        for ctl in tr.controls:
            ctl(t, node, job)
        tcpu = sum(tn.cpu for tn in tenants if tn.want(t) > 0 and tn.inside)
        host.step(t, job.demand + tcpu, job.launch_demand, job.threads)
        wants = [0.0] * ngpu
        for tn in tenants:
            w = tn.want(t)
            if w:
                wants[tn.gpu] += w
        for g in range(ngpu):
            node.avail[g] = 1.0 - 0.5 * min(1.0, wants[g]) if wants[g] else 1.0
        job.advance(t + DT, env, bins)
        for g in range(ngpu):
            busy, sm, ten, dram = bins.get(g, i)
            for pid in tr.gpu_pids[g]:
                proc_busy[(pid, g)] = proc_busy.get((pid, g), 0.0) + busy * DT / len(tr.gpu_pids[g])
            if wants[g]:
                for tn in tenants:
                    w = tn.want(t)
                    if w and tn.gpu == g:
                        tb = min(1.0 - busy, w * (1.0 - 0.5 * busy)) if not tn.inside else w * (1 - 0.5 * busy)
                        tb = max(0.0, tb)
                        proc_busy[(tn.pid, g)] = proc_busy.get((tn.pid, g), 0.0) + tb * DT
                        busy = min(1.0, busy + tb)
                        sm = min(1.0, sm + tb * tn.sm)
                        ten = min(1.0, ten + tb * tn.ten)
                        dram = min(1.0, dram + tb * tn.dram)
            gp = node.gpus[g]
            gp.step(busy, sm, ten, dram)
            a = acc[g]
            a[0] += sm
            a[1] += ten
            a[2] += dram
            a[3] += gp.power
            a[4] += busy
            a[5] += 1
            sa = samp_acc[g]
            sa[0] += busy
            sa[1] += dram
            if (i + 1) % samp_n == 0:
                samples[g].append((sa[0] / samp_n, sa[1] / samp_n))
                sa[0] = sa[1] = 0.0
        used = host.used_tree
        cpu_s += used * DT
        for name, share in tr.threads:
            if name == "launch":
                thread_cpu[name] += job.launch_demand * host.grant_launch * DT
            else:
                thread_cpu[name] += max(0.0, used - job.launch_demand) * share * DT
        if (i + 1) % tick_n:
            continue
        tw = tr.start_wall + t + DT
        tm = mono0 + t + DT
        if rng.random() < 0.004 and i > tick_n * 3:  # a dropped tick: its readings go to the next one
            continue
        seq += 1
        tick = tick_n * DT
        gsamples = []
        procs = []
        for g in range(ngpu):
            gp = node.gpus[g]
            a = acc[g]
            n = max(a[5], 1)
            smp = samples[g]
            util_samples = tuple(float(round(100 * s[0])) for s in smp)
            util = util_samples[-1] if util_samples else float(round(100 * a[4] / n))
            memu = float(round(100 * min(1.0, smp[-1][1] * 1.0))) if smp else 0.0
            mem_used = 0
            for pid, pname, cmd, user, mem_fn in tr.procs_on(g, t):
                mb = int(mem_fn(t))
                mem_used += mb
                b = proc_busy.get((pid, g), 0.0) / tick
                procs.append(ProcSample(pid=pid, gpu_index=g, name=pname, cmdline=cmd, user=user,
                                        ppid=tr.ppid.get(pid, 1), start_time_s=tr.start_wall - tr.age.get(pid, 3600),
                                        mem_bytes=mb, sm_util_pct=float(round(min(100, 100 * b))),
                                        cpu_s=round(tr.pid_cpu(pid, cpu_s, t), 2), rss_bytes=tr.rss.get(pid, 3 * 2**30),
                                        container=tr.container, pod=tr.pod, cgroup=tr.cgroup,
                                        mem_util_pct=float(round(100 * min(1.0, a[2] / n * b / max(a[4] / n, 1e-3))))))
            mem_used = min(mem_used + 530 * 2**20, spec.mem - 700 * 2**20)
            missing = {}
            kw = {}
            if spec.gpm:
                kw = dict(sm_active_pct=100 * a[0] / n * (1 + rng.gauss(0, 0.01)),
                          sm_occupancy_pct=100 * a[0] / n * 0.42 * (1 + rng.gauss(0, 0.02)),
                          dram_bw_pct=100 * a[2] / n * (1 + rng.gauss(0, 0.01)),
                          tensor_pct=100 * a[1] / n * (1 + rng.gauss(0, 0.01)),
                          pcie_rx_mib_per_s=job.pcie[min(g, len(job.pcie) - 1)] / 2**20 / max(t, 1) * (1 + rng.gauss(0, .05)),
                          pcie_tx_mib_per_s=3.0 + rng.random(),
                          nvlink_rx_mib_per_s=job.nvlink[min(g, len(job.nvlink) - 1)] / 2**20 / max(t, 1),
                          nvlink_tx_mib_per_s=job.nvlink[min(g, len(job.nvlink) - 1)] / 2**20 / max(t, 1))
                kw = {k: (max(0.0, min(100.0, v)) if k.endswith("pct") else max(0.0, v)) for k, v in kw.items()}
            else:
                missing.update(NO_GPM)
            if gp.fan is None:
                missing["fan_pct"] = "not supported on this GPU"
            gsamples.append(GpuSample(
                index=g, name=spec.nvml, uuid=tr.uuids[g], util_gpu_pct=util, util_gpu_samples_pct=util_samples,
                util_mem_pct=memu, mem_total_bytes=spec.mem, mem_used_bytes=int(mem_used),
                mem_reserved_bytes=int(spec.mem * 0.0045), power_w=round(a[3] / n * (1 + rng.gauss(0, 0.004)), 3),
                temp_c=float(round(gp.temp)), sm_clock_mhz=gp.mhz(a[4] / n), throttle=gp.reasons,
                bus_id=f"00000000:{0x18 + 0x10 * g:02X}:00.0", fan_pct=None if gp.fan is None else float(round(gp.fan)),
                pstate=0, power_limit_w=float(round(gp.limit * (gp.brake if gp.brake < 1 else 1.0))), mem_clock_mhz=float(spec.mclk),
                ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False, missing=missing, **kw))
            acc[g] = [0.0] * 6
            samples[g] = []
        proc_busy.clear()
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + rng.random() * 0.003, 6)),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.0006),
                   "pin": SourceStatus(True, age_s=0.0, poll_s=0.015),
                   "procfs": SourceStatus(True, detail="/proc", age_s=0.0, poll_s=0.0003)}
        # host and pinned tree
        invol = int(host.ctx_invol + host.launch_invol)
        threads = []
        for k, (name, _) in enumerate(tr.threads):
            tid = tr.tids[k]
            threads.append(ThreadSample(tid=tid, pid=tr.thread_pid[k], name=tr.thread_names[k], cpu_s=round(thread_cpu[name], 2)))
        threads.sort(key=lambda x: -x.cpu_s)
        qcores = host.quota_at(t)
        pinned = PinnedSample(label=tr.label, root_pids=(tr.root_pid,), tree_pids=tuple(tr.tree_pids(t)),
                              cpu_s=round(cpu_s, 2), ctx_voluntary=int(host.ctx_vol), ctx_involuntary=invol,
                              threads=tuple(threads), cores=tuple(tr.cores),
                              cpu_pressure_some_pct=round(host.psi, 2), run_queue=host.runq,
                              listening_ports=tr.ports, cpu_quota_cores=qcores,
                              cpu_periods=host.periods if qcores else None,
                              cpu_throttled_periods=host.throttled if qcores else None)
        hs = HostSample(cpu_pct=round(100 * host.used_all / host.cpus, 1),
                        offcpu_switches=int(host.launch_invol - last_invol) if tr.ebpf else None,
                        cpu_pressure_some_pct=round(host.psi, 2), run_queue=host.runq, cpus=host.cpus,
                        ctx_switches_total=host.ctxt_total)
        launch = ()
        if tr.ebpf:
            sources["ebpf"] = SourceStatus(True, detail=f"uprobes on libcudart.so.12 in pid {tr.launch_pids[0]}",
                                           age_s=0.0, poll_s=0.001)
            launch = launch_hists(rng, tr, job, host, last_launch, last_invol, tick)
        else:
            sources["ebpf"] = SourceStatus(False, reason=tr.ebpf_reason)
        last_launch = [job.launches, job.graph_launches]
        last_invol = host.launch_invol
        # engine scrape
        if tr.url:
            if tw >= scrape_next:
                scrape_next = tw + tr.scrape_s
                if rng.random() < 0.015 and eng is not None:
                    sources["engine"] = SourceStatus(False, reason="timed out after 2.0 s", age_s=round(tw - eng.time_wall_s, 3))
                else:
                    text = tr.metrics_text(job, t)
                    extra = dict(pids=tuple(tr.engine_pids), tensor_parallel=tr.tp, data_parallel=1,
                                 gpu_indices=tuple(range(ngpu)) if tr.tp > 1 else (),
                                 cpu_s=round(cpu_s, 2), ctx_involuntary=invol,
                                 busiest_thread_cpu_s=threads[0].cpu_s, busiest_thread=f"{threads[0].tid} {threads[0].name}",
                                 cpu_quota_cores=qcores, cpu_periods=host.periods if qcores else None,
                                 cpu_throttled_periods=host.throttled if qcores else None)
                    eng = engine_sample(text, tr.url, tw - 0.01, tm - 0.01, extra)
                    eng_poll = 0.003 + 0.03 * (1 - host.grant) + rng.random() * 0.004
                    sources["engine"] = SourceStatus(True, age_s=0.0, poll_s=round(eng_poll, 4))
            else:
                sources["engine"] = SourceStatus(True, age_s=round(tw - eng.time_wall_s, 3) if eng else None,
                                                 poll_s=round(eng_poll, 4))
        else:
            sources["engine"] = SourceStatus(False, reason="no engine found (pass --engine URL)")
        frames.append(Frame(seq=seq, time_wall_s=round(tw, 4), time_mono_s=round(tm, 4), gpus=tuple(gsamples),
                            processes=tuple(procs), engine=eng, launch=launch, host=hs, pinned=pinned,
                            sources=sources))
    return frames


def launch_hists(rng, tr, job, host, last, last_invol, tick):
    """eBPF cudaLaunchKernel / cudaGraphLaunch call durations this tick, per launching pid."""
    out = []
    n_pids = len(tr.launch_pids)
    hits_total = max(0.0, host.launch_invol - last_invol)
    for api, now, before, base in (("cudaLaunchKernel", job.launches, last[0], 2600),
                                   ("cudaGraphLaunch", job.graph_launches, last[1], 9000)):
        calls = now - before
        if calls <= 0.5:
            continue
        for pid in tr.launch_pids:
            n = int(calls / n_pids)
            if n <= 0:
                continue
            frac = min(0.85, n * base * 1e-9 / max(job.launch_demand * host.grant_launch * tick, 1e-3) * 6)
            hits = min(n, int(hits_total / n_pids * frac + rng.random()))
            buckets = {}
            s = 0
            mx = 0
            rest = n - hits
            for share, mul in ((0.22, 0.7), (0.45, 1.0), (0.25, 1.35), (0.07, 2.2), (0.01, 6.0)):
                k = int(rest * share + rng.random())
                if k <= 0:
                    continue
                v = int(base * mul * (1 + rng.gauss(0, 0.05)))
                buckets[bucket_index(v)] = buckets.get(bucket_index(v), 0) + k
                s += k * v
                mx = max(mx, v)
            for _ in range(min(hits, 60)):
                v = int(rng.uniform(0.25e6, 4.5e6))
                buckets[bucket_index(v)] = buckets.get(bucket_index(v), 0) + max(1, hits // 60)
                s += v * max(1, hits // 60)
                mx = max(mx, v)
            cnt = sum(buckets.values())
            out.append(LaunchHist(api=api, pid=pid, count=cnt, sum_ns=s, max_ns=mx, buckets=buckets))
    return tuple(out)
