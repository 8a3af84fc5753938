"""Step-based training: data wait, per-rank compute scaled by the rank's clock, a gradient
collective that the early ranks wait in, checkpoints and evaluation passes."""
from __future__ import annotations
import math
import random

from gputop.schema import HostSample, PinnedSample, ProcSample, SourceStatus, ThreadSample
from corpus_ak import metrics
from corpus_ak.run import Builder, Scn, _arg, _launch_hist, seed_of, GiB


def run_training(scn: Scn):
    """scn.train keys: step_s (compute at full clock), comm_s, load_s (per batch, per rank after
    workers), tokens (per step, global), ckpt_every, ckpt_s, eval_every, eval_s, counter (bool),
    rank_slow fn(t, g) -> compute multiplier, link_slow fn(t, g) -> comm multiplier,
    hang fn(t, g) -> True when the rank stops arriving, workers, mem_gb, kernels_per_step."""
    rng = random.Random(seed_of(scn.name))
    b = Builder(scn, rng)
    T = scn.train
    n = scn.n_gpus
    dur = scn.duration
    # per-rank timelines of (start, end, kind): kind "c" compute, "n" nccl, "i" idle/data/ckpt
    tl = [[] for _ in range(n)]
    steps_end = []   # (time, tokens)
    t = 0.0 + rng.random() * 0.5
    step = 0
    launch_ct = []
    while t < dur:
        step += 1
        load = _arg(T["load_s"], t)
        loadv = [max(0.0, load * (1 + rng.gauss(0, 0.15))) for _ in range(n)]
        waits = [max(0.0, l - T["step_s"] * 0.9) for l in loadv]
        comps = []
        for g in range(n):
            mult = _arg(T.get("rank_slow", 1.0), t, g) or 1.0
            clk = b.gpus[g].ratio
            jit = _arg(scn.host.jitter, t) or 0.0
            jitter_cost = jit * T.get("kernels_per_step", 3000) * scn.host.jitter_ms * 1e-3 * 0.35
            comps.append(T["step_s"] * mult / (0.25 + 0.75 * clk) * (1 + rng.gauss(0, 0.01)) + jitter_cost)
        arrive = [t + waits[g] + comps[g] for g in range(n)]
        hung = [bool(_arg(T.get("hang", False), t, g)) for g in range(n)]
        if any(hung):
            # the others spin in the collective until the job is killed (the trace's end)
            for g in range(n):
                tl[g].append((t, t + waits[g], "i"))
                if hung[g]:
                    tl[g].append((t + waits[g], dur + 10, "i"))
                else:
                    tl[g].append((t + waits[g], arrive[g], "c"))
                    tl[g].append((arrive[g], dur + 10, "n"))
            break
        link = max((_arg(T.get("link_slow", 1.0), t, g) or 1.0) for g in range(n)) if n > 1 else 0
        comm = T["comm_s"] * link * (1 + rng.gauss(0, 0.03)) if n > 1 else 0.0
        end = max(arrive) + comm
        for g in range(n):
            tl[g].append((t, t + waits[g], "i"))
            tl[g].append((t + waits[g], arrive[g], "c"))
            if n > 1:
                tl[g].append((arrive[g], end, "n"))
        steps_end.append((end, T["tokens"]))
        t = end + 0.004
        if T.get("eval_every") and step % T["eval_every"] == 0:
            for g in range(n):
                tl[g].append((t, t + T["eval_s"], "e"))
            t += T["eval_s"]
        if T.get("ckpt_every") and step % T["ckpt_every"] == 0:
            for g in range(n):
                tl[g].append((t, t + T["ckpt_s"], "i"))
            t += T["ckpt_s"]
    # integrate per tick
    n_ticks = int(dur / scn.tick)
    idx = [0] * n
    tok_total, step_total = 5.0e9 + seed_of(scn.name) % 10**8, 12000.0 + seed_of(scn.name) % 1000
    si = 0
    base_pid = 3000 + seed_of(scn.name) % 30000
    cpu = [0.0] * n
    loader_cpu = 0.0
    url = "http://127.0.0.1:9400/metrics"
    mem = T.get("mem_gb", 60) * GiB
    for k in range(n_ticks):
        t0, t1 = k * scn.tick, (k + 1) * scn.tick
        acc = []
        for g in range(n):
            fr = {"c": 0.0, "n": 0.0, "i": 0.0, "e": 0.0}
            j = idx[g]
            while j < len(tl[g]) and tl[g][j][1] <= t0:
                j += 1
            idx[g] = j
            while j < len(tl[g]) and tl[g][j][0] < t1:
                a, e, kd = tl[g][j]
                fr[kd] += max(0.0, min(e, t1) - max(a, t0))
                j += 1
            c, nc, ev = fr["c"] / scn.tick, fr["n"] / scn.tick, fr["e"] / scn.tick
            mfu = T.get("mfu", 0.42)
            busy = min(1.0, c + nc + ev)
            acc.append(dict(busy=busy, sm=min(0.97, c * 0.93 + nc * 0.18 + ev * 0.8),
                            tensor=min(0.9, (c * mfu + ev * mfu * 0.6) * 1.0),
                            dram=min(0.95, c * T.get("dram", 0.32) + nc * 0.05 + ev * 0.4), occ=0.45, nccl=nc,
                            nvl=nc * T.get("nvl_mib", 120000) / max(1.0, _arg(T.get("link_slow", 1.0), t0, g) or 1.0)))
        for g, st in enumerate(b.gpus):
            a = acc[g]
            st.update(scn.tick, a["busy"], a["sm"], a["tensor"], a["dram"], inlet=_arg(scn.inlet, t0, g),
                      limit=_arg(scn.limit, t0, g), brake=_arg(scn.brake, t0, g), mystery=_arg(scn.mystery, t0, g),
                      r_th_mult=_arg(scn.r_th, t0, g) or 1.0)
        while si < len(steps_end) and steps_end[si][0] <= t1:
            tok_total += steps_end[si][1]
            step_total += 1
            si += 1
        # host: one launcher process per rank (busy while the GPU computes), loader workers
        launcher = sum(min(1.0, a["busy"] * 0.9 + 0.1) for a in acc)
        load_now = _arg(T["load_s"], t0)
        loader_dem = T.get("workers", 4) * n * (T.get("loader_cpu", 0.3))
        demand = launcher + loader_dem
        share, hinfo = b.host_step(t0, scn.tick, demand, launcher / max(1, n))
        loader_cpu += loader_dem * share * scn.tick
        procs = []
        for g in range(n):
            cpu[g] += min(1.0, acc[g]["busy"] * 0.9 + 0.1) * share * scn.tick
            procs.append(ProcSample(pid=base_pid + g, gpu_index=g, name="python3", cmdline=T.get("cmd", "torchrun --nproc-per-node %d train.py" % n),
                                    user=T.get("user", "ft-cust-4411"), ppid=base_pid - 1, start_time_s=round(b.t_wall0 - 1800, 2),
                                    mem_bytes=int(mem), sm_util_pct=float(round(acc[g]["busy"] * 100)), cpu_s=round(cpu[g], 2),
                                    rss_bytes=int(12 * GiB), container=f"containerd:{seed_of(scn.name) % 16**12:012x}",
                                    pod=f"finetune/{scn.name[:28]}-0", mem_util_pct=float(round(acc[g]["dram"] * 90))))
        gpus = b.gpu_samples(acc, [mem + 0.5 * GiB] * n, None)
        threads = tuple(ThreadSample(tid=base_pid + g, pid=base_pid + g, name="python3", cpu_s=round(cpu[g], 2)) for g in range(n)) + \
            (ThreadSample(tid=base_pid + 100, pid=base_pid + 100, name="pt_data_worker", cpu_s=round(loader_cpu / max(1, T.get("workers", 4) * n), 2)),)
        tree_cpu = sum(cpu) + loader_cpu
        quota = hinfo["quota"]
        pinned = PinnedSample(label=T.get("cmd", "train.py")[:60], root_pids=(base_pid - 1,), tree_pids=(base_pid - 1,) + tuple(base_pid + g for g in range(n)),
                              cpu_s=round(tree_cpu, 2), ctx_voluntary=b.ctx_vol, ctx_involuntary=b.ctx_invol, threads=threads,
                              cores=tuple(range(scn.host.cores)), cpu_pressure_some_pct=round(hinfo["psi"], 2), run_queue=hinfo["rq"],
                              cpu_quota_cores=quota, cpu_periods=b.periods if quota else None, cpu_throttled_periods=b.throttled if quota else None)
        host = HostSample(cpu_pct=round(hinfo["cpu_pct"], 1), cpu_pressure_some_pct=round(hinfo["psi"], 2), run_queue=hinfo["rq"],
                          cpus=scn.host.cores, ctx_switches_total=b.ctx_total)
        launch = ()
        if scn.ebpf:
            jit = _arg(scn.host.jitter, t0) or 0.0
            cnt = int(sum(a["busy"] for a in acc) / max(1e-9, T["step_s"]) * T.get("kernels_per_step", 3000) * scn.tick / n)
            hs = []
            for g in range(n):
                h1 = _launch_hist(rng, "cuLaunchKernel", base_pid + g, int(cnt * 0.7), 3.4, 0.4, min(0.2, jit), scn.host.jitter_ms)
                h2 = _launch_hist(rng, "cudaLaunchKernel", base_pid + g, int(cnt * 0.3), 4.0, 0.4, min(0.2, jit), scn.host.jitter_ms)
                hs += [h for h in (h1, h2) if h]
            launch = tuple(hs)
            host = HostSample(cpu_pct=host.cpu_pct, offcpu_switches=int(sum(h.count for h in hs) * min(0.2, jit) * 0.8 + rng.random() * 6),
                              cpu_pressure_some_pct=host.cpu_pressure_some_pct, run_queue=host.run_queue, cpus=host.cpus,
                              ctx_switches_total=host.ctx_switches_total)
            ebpf = SourceStatus(True, detail="uprobes on libcudart.so.12, libcuda.so.1", age_s=0.0, poll_s=0.003, poll_median_s=0.003)
        else:
            ebpf = SourceStatus(False, reason="bcc not installed")
        if T.get("counter", True):
            eng, est = b.engine_reading(t0, lambda: metrics.render_trainer(tok_total, step_total), url,
                                        dict(pids=(base_pid - 1,) + tuple(base_pid + g for g in range(n)), cpu_s=round(tree_cpu, 2),
                                             ctx_involuntary=b.ctx_invol, tensor_parallel=1, data_parallel=n))
        else:
            eng, est = None, None
        if rng.random() < scn.drop_ticks and 5 < k < n_ticks - 5:
            continue
        b.emit(t0, gpus, tuple(procs), eng, launch, host, pinned, est, ebpf)
    return b
