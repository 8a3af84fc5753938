"""Step-based training loops: data wait, per-rank compute scaled by each rank's clock,
collectives in which early ranks spin in NCCL, checkpoints, evaluation passes."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from corpus_am.common import GiB, Tree, launch_hist, proc, psi_inst, statuses
from corpus_am.engines import engine_sample, render_trainer

NCCL_SM = 0.13  # SMs holding NCCL's spinning channel blocks (16-24 of 132)


@dataclass
class Train:
    compute_s: float = 0.45  # fwd+bwd per step at full clock
    mem_frac: float = 0.3  # share of compute time bound by HBM (does not scale with clock)
    sm: float = 0.85
    ten: float = 0.45
    dram: float = 0.35
    workers: int = 8  # DataLoader workers per rank
    decode_s: float = 2.0  # CPU seconds per batch (video / lidar decode)
    io_s: object = lambda t: 0.0  # extra wall seconds per batch from storage
    prefetch: int = 2
    grad_bytes: float = 1.2e9
    link_bps: float = 150e9  # per-rank bus bandwidth (NVLink ring)
    exposed: float = 0.35  # share of the all-reduce not hidden behind backward
    opt_s: float = 0.03
    accum: int = 1
    batch: int = 16  # samples per rank per step
    ckpt_every: float = 0.0  # seconds between checkpoints (0: none)
    ckpt_s: float = 20.0
    ckpt_barrier: bool = True  # others spin at a barrier while rank 0 writes
    eval_every: float = 0.0
    eval_s: float = 40.0
    rank_slow: object = lambda t, r: 1.0  # multiplies a rank's compute (host noise, ...)
    link_factor: object = lambda t, r: 1.0  # multiplies a rank's link bandwidth
    cpu_factor: object = lambda t: 1.0  # loader CPU share (quota / contention)
    mem_bytes: float = 60 * GiB
    hang_at: float | None = None
    dram_boost: object = lambda t: 1.0  # extra HBM traffic (a bandwidth-bound op), stretches mem part
    warmup_s: float = 0.0  # torch.compile / cudnn autotune at start: irregular
    phases: object = None  # f(t) -> dict overriding fields for RL / sim alternation


def run_training(cx, tr: Train, *, cmd, exports=True, scrape=10.0, url=None, cpus_per_rank=24,
                 quota=None, contend=lambda t: 0.0, ebpf=False, gpu_hook=None, cotenant=None,
                 pod="", container="", tokens_per_sample=None, cset=None,
                 jitter=lambda t: 0.0):
    rng = cx.rng
    N = len(cx.gpus)
    pid = cx.pid0
    rank_pids = [pid + 1 + r for r in range(N)]
    worker_pids = [pid + 100 + r * 20 + w for r in range(N) for w in range(tr.workers)]
    threads = [(p, p, "python") for p in rank_pids] + [(p, p, "pt_data_worker") for p in worker_pids] + \
              [(p + 5000, p, "pt_autograd_0") for p in rank_pids]
    cores = cset or min(cx.host.cpus, cpus_per_rank * N)
    tree = Tree("torchrun " + cmd[:50] + "…", pid, [pid] + rank_pids + worker_pids, threads, range(cores),
                ports=(29500,) + ((int(url.split(":")[2].split("/")[0]),) if url else ()),
                quota=quota(0) if quota else None)
    t = tr.warmup_s
    # warm-up: compilation on the CPU, GPU mostly idle with bursts
    if tr.warmup_s:
        for r in range(N):
            x = 0.0
            while x < tr.warmup_s:
                d = rng.uniform(0.5, 3.0)
                cx.accs[r].add(x, x + d * 0.15, busy=0.8, sm=0.4, ten=0.1, dram=0.2)
                x += d
    ready = [t] * N  # next batch ready per rank
    steps, samples = 0, 0
    next_ckpt = tr.ckpt_every or 1e18
    next_eval = tr.eval_every or 1e18
    loader_busy = [0.0] * N  # CPU-seconds demanded by workers per tick (for host)
    end = cx.n * cx.tick
    stepmarks = []
    ckpt_win, eval_win = [], []
    hung = False
    while t < end:
        if tr.hang_at is not None and t >= tr.hang_at:
            for r in range(N):
                cx.accs[r].add(t, end, busy=1.0, sm=NCCL_SM, ten=0.0, dram=0.01)
            hung = True
            break
        ph = tr.phases(t) if tr.phases else {}
        if t >= next_ckpt:
            d = tr.ckpt_s * rng.uniform(0.9, 1.2)
            for r in range(N):
                cx.accs[r].add(t, t + 1.2, busy=0.9, sm=0.1, dram=0.5)  # state to host memory
                if r and tr.ckpt_barrier:
                    cx.accs[r].add(t + 1.2, t + d, busy=1.0, sm=NCCL_SM, dram=0.01)
            ckpt_win.append((t, t + d))
            t += d
            next_ckpt += tr.ckpt_every
            continue
        if t >= next_eval:
            d = tr.eval_s * rng.uniform(0.95, 1.05)
            x = t
            while x < t + d:
                sd = tr.compute_s * 0.35
                gap = sd * rng.uniform(0.3, 0.9)  # val loader is slower, smaller batches
                for r in range(N):
                    cx.accs[r].add(x + gap, x + gap + sd, busy=1.0, sm=tr.sm * 0.8, ten=tr.ten * 0.7, dram=tr.dram)
                x += gap + sd
            eval_win.append((t, t + d))
            t += d
            next_eval += tr.eval_every
            continue
        cfac = tr.cpu_factor(t)
        period = (ph.get("decode_s", tr.decode_s) / tr.workers) / max(0.05, cfac) + tr.io_s(t)
        comp_s = ph.get("compute_s", tr.compute_s)
        done = []
        starts = []
        for r in range(N):
            a = max(ready[r], t - tr.prefetch * tr.workers * period)
            wait = max(0.0, a - t)
            ready[r] = max(a, t) + period * rng.uniform(0.9, 1.1)
            clk = cx.gpus[r].clock_ratio
            mb = tr.dram_boost(t)
            c = ph.get("gap", 0.0) + comp_s * (tr.mem_frac * mb + (1 - tr.mem_frac) / clk) * tr.rank_slow(t, r) * rng.gauss(1, 0.015)
            s0 = t + wait
            sm, ten, dr = ph.get("sm", tr.sm), ph.get("ten", tr.ten), ph.get("dram", tr.dram)
            if mb > 1:
                f = tr.mem_frac * mb / (tr.mem_frac * mb + (1 - tr.mem_frac))
                dr, ten = min(0.95, 0.3 + 0.65 * f), ten * (1 - f) / (1 - tr.mem_frac)
            cx.accs[r].add(s0, s0 + c, busy=1.0, sm=sm, ten=ten, dram=dr)
            starts.append(s0)
            done.append(s0 + c)
        micro = (steps + 1) % tr.accum == 0
        if N > 1 and micro:
            sync = max(done)
            bw = min(tr.link_bps * tr.link_factor(t, r) for r in range(N))
            comm = tr.exposed * tr.grad_bytes * 2 * (N - 1) / N / bw + 0.002
            for r in range(N):
                cx.accs[r].add(done[r], sync, busy=1.0, sm=NCCL_SM, dram=0.01)
                cx.accs[r].add(sync, sync + comm, busy=1.0, sm=0.2, dram=0.3,
                               nvl_bytes=tr.grad_bytes * 2 * (N - 1) / N)
            t2 = sync + comm
        else:
            t2 = max(done)
        if micro:
            for r in range(N):
                cx.accs[r].add(t2, t2 + ph.get("opt_s", tr.opt_s), busy=1.0, sm=0.6, ten=0.02,
                               dram=ph.get("opt_dram", 0.75))
            t2 += ph.get("opt_s", tr.opt_s) + 0.004
        t = t2
        steps += 1
        samples += tr.batch * N
        stepmarks.append((t, steps, samples))
    # ---- frames
    si = 0
    last_es, last_scrape = None, -1e9
    next_scrape = rng.uniform(0, scrape)
    start_proc = cx.wall(0) - rng.uniform(600, 86400)
    cur_steps = cur_samples = 0
    for k in range(cx.n):
        t0, t1 = k * cx.tick, (k + 1) * cx.tick
        while si < len(stepmarks) and stepmarks[si][0] <= t1:
            _, cur_steps, cur_samples = stepmarks[si]
            si += 1
        ct = cotenant(t1) if cotenant else None
        if ct:
            cx.accs[ct["gpu"]].add(t0, t1, busy=ct["busy"], sm=ct["sm"], ten=ct.get("ten", 0.0), dram=ct.get("dram", 0.0))
        if gpu_hook:
            gpu_hook(t1, cx.gpus)
        dt = cx.tick
        in_ckpt = any(a <= t1 <= b for a, b in ckpt_win)
        in_eval = any(a <= t1 <= b for a, b in eval_win)
        cfac = tr.cpu_factor(t1)
        period = (tr.decode_s / tr.workers) / max(0.05, cfac) + tr.io_s(t1)
        worker_util = 0.0 if hung or in_ckpt else min(1.0, (tr.decode_s / tr.workers) / period) * cfac
        if in_eval:
            worker_util *= 0.5
        use = {}
        for r, p in enumerate(rank_pids):
            use[(p, p, "python")] = 0.0 if hung else (0.85 if not in_ckpt or r == 0 else 0.1) * min(1.0, cfac * 1.3)
            use[(p + 5000, p, "pt_autograd_0")] = 0.0 if hung else 0.5 * min(1.0, cfac * 1.3)
        for p in worker_pids:
            use[(p, p, "pt_data_worker")] = worker_util * rng.uniform(0.9, 1.05)
        demand = N * 1.35 + len(worker_pids) * (min(1.0, (tr.decode_s / tr.workers) / max(1e-3, (tr.decode_s / tr.workers) + tr.io_s(t1)))) + contend(t1)
        used = sum(use.values())
        thr = 0.0
        if quota:
            q = quota(t1)
            tree.quota = q
            thr = min(1.0, max(0.0, (demand - contend(t1) - q) / max(q, 0.1))) if demand - contend(t1) > q else 0.01
        sh = min(1.0, cores / demand) if demand > cores else 1.0
        invol = 40 * N + 3000 * (1 - sh) * N + (1500 * thr if quota else 0)
        tree.run(dt, use, invol * rng.uniform(0.85, 1.15), vol_rate=300 * N + 50 * len(worker_pids), throttled_frac=thr)
        psi_extra = 55 * thr if quota else 0.0
        host = cx.host.step(dt, demand if not quota else min(demand, quota(t1) + contend(t1)), used + contend(t1) * sh,
                            extra_psi=psi_extra)
        gs, procs = [], []
        for r, g in enumerate(cx.gpus):
            mem = tr.mem_bytes * (1 + 0.004 * rng.random()) + (ct["mem"] if ct and ct["gpu"] == r else 0)
            s = g.sample(k, cx.accs[r], dt, mem, pcie_mib=(900.0 * worker_util + 20, 40.0))
            gs.append(s)
            own = s.util_gpu_pct
            if ct and ct["gpu"] == r:
                procs.append(proc(ct["pid"], r, ct["name"], ct["cmd"], ct["mem"], 100 * ct["busy"], ct.get("cpu", 1) * t1,
                                  cx.wall(0) - 3000, container=ct.get("container", ""), pod=ct.get("pod", ""),
                                  user=ct.get("user", "ml")))
                own = max(0.0, own - 100 * ct["busy"])
            procs.append(proc(rank_pids[r], r, "python", cmd + f" --local_rank={r}", tr.mem_bytes, own,
                              tree.threads[(rank_pids[r], rank_pids[r], "python")], start_proc, pod=pod,
                              container=container, rss=18 * GiB, ppid=pid))
        es, ok, age, reason = None, None, None, "no engine found (pass --engine URL)"
        if exports and url:
            if t1 >= next_scrape:
                next_scrape += scrape
                if rng.random() > 0.01:
                    text = render_trainer(cur_steps, cur_samples,
                                          tokens=cur_samples * tokens_per_sample if tokens_per_sample else None)
                    last_es = engine_sample(text, url, pids=[pid] + rank_pids, t_wall=cx.wall(t1) - 0.01,
                                            t_mono=cx.mono0 + t1 - 0.01, tree=tree, gpus=range(N), dp=N)
                    last_scrape = t1
            ok = last_es is not None
            es = last_es
            age = round(t1 - last_scrape, 3)
            reason = None if ok else "connection refused"
        launch = []
        offcpu = None
        if ebpf and not hung:
            n_l = int(dt / max(tr.compute_s, 0.05) * 1800)
            sf = 0.002 + jitter(t1)
            launch = [launch_hist("cuLaunchKernel", rank_pids[0], int(n_l * 0.6), rng, 3400, 0.3, sf),
                      launch_hist("cudaLaunchKernel", rank_pids[0], int(n_l * 0.4), rng, 4200, 0.3, sf)]
            offcpu = int(invol * dt * 0.2 + 300 * jitter(t1) * dt)
        if offcpu is not None:
            host = dataclasses.replace(host, offcpu_switches=offcpu)
        st = statuses(rng, engine_ok=ok, engine_reason=reason, engine_age=age, ebpf=ebpf)
        cx.emit(k, gs, procs, host, tree.pinned(host.cpu_pressure_some_pct, host.run_queue), es, st, launch)
    return cx.frames
