"""Step-based training loops: per rank, data wait (a DataLoader whose workers' batch rate
depends on their CPU share and on storage), compute scaled by the rank's clock, then the
gradient all-reduce in which early ranks wait (NCCL kernels spin: the GPU is "busy" but
its SMs and tensor pipes are nearly idle), the optimizer step, and the job's evaluation
passes and checkpoints.  Remote ranks (other nodes) take part in the collective."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .world import EngineFeed, World


@dataclass
class TCfg:
    ranks: tuple = (0,)  # local GPUs
    remote: int = 0  # ranks on other nodes
    comp_s: float = 0.40  # forward+backward at full clock
    comp_alpha: float = 0.75  # share of it that scales with the SM clock
    comp_sm: float = 0.88
    comp_tensor: float = 0.55
    comp_dram: float = 0.35
    comp_jitter: float = 0.02
    allreduce_s: float = 0.06  # exposed gradient all-reduce on a healthy fabric
    ar_fn: object = None  # t -> multiplier on the all-reduce (a degraded link)
    opt_s: float = 0.03
    opt_dram: float = 0.75
    opt_fn: object = None  # t -> multiplier on optimizer time (bandwidth-bound growth)
    opt_dram_fn: object = None
    workers: int = 8  # DataLoader workers per rank
    batch_cpu_s: float = 0.9  # CPU seconds a worker needs per batch (decode, augment)
    io_s: float = 0.02  # storage time per batch per worker
    io_fn: object = None  # t -> io seconds per batch (a metadata storm)
    cpu_fn: object = None  # t -> multiplier on batch_cpu_s (heavier preprocessing)
    prefetch: int = 2
    host_s: float = 0.03  # main thread Python per step (overlapped with the GPU)
    kernels: int = 2500  # launches per step
    compiled: bool = False
    accum: int = 1  # micro-steps per optimizer step (no all-reduce on the others)
    eval_every: int = 0
    eval_steps: int = 0
    eval_s: float = 0.12
    ckpt_every_s: float = 0.0
    ckpt_s: float = 20.0
    ckpt_at: tuple = ()  # sim times a checkpoint starts
    tokens_per_step: int = 0  # per optimizer step, global
    samples_per_step: int = 0
    export: str = ""  # metrics url or ""
    scrape_s: float = 5.0
    pid0: int = 40000
    rank_slow: dict = field(default_factory=dict)  # rank -> fn(t) extra multiplier on compute (noisy neighbour, etc.)
    pipeline: int = 1  # pipeline stages across the local ranks (bubbles)
    microbatches: int = 8
    tiny: object = None  # fn(t) -> (busy, sm) override for tiny-kernel phases
    warm_fn: object = None  # t -> compute multiplier (compile/warm-up)
    pause: tuple = ()  # (t0, t1) the job is stopped (a hung collective keeps NCCL spinning)
    hang: tuple = ()  # (t0, t1): a collective hung: NCCL kernels spin, nothing progresses
    start: float = 0.0
    end: float = 1e9


def run(w: World, c: TCfg):
    rng = w.rng
    h = w.host
    t = c.start
    n_all = len(c.ranks) + c.remote
    q = {r: float(c.prefetch * c.workers) for r in range(n_all)}
    steps = 0
    micro = 0
    tokens = 0.0
    samples = 0.0
    feed = EngineFeed(url=c.export)
    next_scrape = c.start + rng.random() * c.scrape_s
    last_ckpt = c.start
    ck_i = 0
    trace = []
    while t < min(w.T, c.end):
        while c.export and next_scrape <= t:
            feed.scrapes.append((next_scrape, _trainer_sample(c, tokens, samples, steps, w, next_scrape), ""))
            next_scrape += c.scrape_s
        if c.hang and c.hang[0] <= t < c.hang[1]:
            for i, g in enumerate(c.ranks):
                w.add(g, t, c.hang[1], 1.0, 0.03, 0.0, 0.01, pid=c.pid0 + i)
            t = c.hang[1]
            continue
        if c.pause and c.pause[0] <= t < c.pause[1]:
            t = c.pause[1]
            continue
        # checkpoint: rank 0 writes (GPU idle, D2H copies), the others wait in a barrier
        due = (c.ckpt_every_s and t - last_ckpt >= c.ckpt_every_s) or (ck_i < len(c.ckpt_at) and t >= c.ckpt_at[ck_i])
        if due and micro == 0:
            if ck_i < len(c.ckpt_at) and t >= c.ckpt_at[ck_i]:
                ck_i += 1
            last_ckpt = t
            d = c.ckpt_s * (1 + 0.05 * rng.normal())
            for i, g in enumerate(c.ranks):
                if i == 0:
                    w.add(g, t, t + min(2.0, d), 0.3, 0.05, 0.0, 0.3, pid=c.pid0 + i)
                else:
                    w.add(g, t, t + d, 1.0, 0.03, 0.0, 0.01, pid=c.pid0 + i)  # barrier spin
            trace.append((t, "ckpt", d))
            t += d
            continue
        evaling = c.eval_every and steps > 0 and steps % c.eval_every == 0 and micro == 0
        if evaling:
            for _ in range(c.eval_steps):
                dur = c.eval_s * (1 + c.comp_jitter * rng.normal())
                for i, g in enumerate(c.ranks):
                    f = w.clock(g, t)
                    w.add(g, t, t + dur / (c.comp_alpha / f + 1 - c.comp_alpha), 0.97, 0.8, 0.4, 0.4, pid=c.pid0 + i)
                    w.launches(c.pid0 + i, "cudaLaunchKernel", t, t + dur, c.kernels * 0.3)
                t += dur / max(0.5, min(w.gpus[g].f for g in c.ranks)) * (c.comp_alpha + (1 - c.comp_alpha))
            steps += 1  # the eval pass is charged to this step
            trace.append((t, "eval", c.eval_steps * c.eval_s))
        st = h.stretch(t) if h else 1.0
        io = c.io_fn(t) if c.io_fn else c.io_s
        rate = c.workers / (c.batch_cpu_s * (c.cpu_fn(t) if c.cpu_fn else 1.0) * st + io)  # batches/s per rank
        ends = {}
        waits = {}
        comps = {}
        for r in range(n_all):
            wait = 0.0
            if q[r] < 1:
                wait = (1 - q[r]) / rate
                q[r] = 1
            q[r] -= 1
            if r < len(c.ranks):
                g = c.ranks[r]
                f = w.clock(g, t)
            else:
                f = 1.0
            mult = c.rank_slow[r](t) if r in c.rank_slow else 1.0
            warm = c.warm_fn(t) if c.warm_fn else 1.0
            comp = c.comp_s * (c.comp_alpha / f + 1 - c.comp_alpha) * mult * warm * (1 + c.comp_jitter * rng.normal())
            host_t = c.host_s * st * (1.0 if not c.compiled else 0.4)
            comp = max(comp, host_t)  # the GPU waits when the launching thread is slower than it
            waits[r], comps[r] = wait, comp
            ends[r] = t + wait + comp
        sync = max(ends.values())
        do_ar = (micro + 1) % c.accum == 0
        ar = c.allreduce_s * (c.ar_fn(t) if c.ar_fn else 1.0) if (do_ar and n_all > 1) else 0.0
        opt = c.opt_s * (c.opt_fn(t) if c.opt_fn else 1.0) if do_ar else 0.0
        opt_dram = c.opt_dram_fn(t) if c.opt_dram_fn else c.opt_dram
        ar_wait = ar > 0 or (n_all > 1 and do_ar)
        for i, g in enumerate(c.ranks):
            pid = c.pid0 + i
            t1 = t + waits[i]
            t2 = t1 + comps[i]
            tiny = c.tiny(t) if c.tiny is not None else None
            if tiny is not None:
                b, s = tiny
                w.add(g, t1, t2, b, s, s * 0.1, s * 0.5, pid=pid)
            elif c.pipeline > 1:
                p, m = c.pipeline, c.microbatches
                bubble = (p - 1) / (m + p - 1)
                w.add(g, t1, t2, 1 - bubble * 0.95, c.comp_sm * (1 - bubble), c.comp_tensor * (1 - bubble), c.comp_dram * (1 - bubble), pid=pid)
            else:
                w.add(g, t1, t2, 0.98, c.comp_sm, c.comp_tensor, c.comp_dram, pid=pid)
            # waiting for the slowest rank + the exposed all-reduce: NCCL spins
            if ar_wait:
                w.add(g, t2, sync + ar, 1.0, 0.06, 0.0, 0.05, pid=pid)
            w.add(g, sync + ar, sync + ar + opt, 0.95, 0.6, 0.02, opt_dram, pid=pid)
            kl = c.kernels * (0.25 if c.compiled else 1.0)
            w.launches(pid, "cuLaunchKernel" if c.compiled else "cudaLaunchKernel", t1, t2, kl)
            w.launches(pid, "cuLaunchKernel", t1, t2, 120)
        dur = sync + ar + opt - t
        for r in range(n_all):
            q[r] = min(c.prefetch * c.workers, q[r] + rate * dur)
        t = sync + ar + opt
        micro = (micro + 1) % c.accum
        if micro == 0:
            steps += 1
            tokens += c.tokens_per_step
            samples += c.samples_per_step
        trace.append((t, "step", dur, max(waits.values()), sync - min(ends.values())))
    if c.export:
        feed.scrapes.append((w.T, _trainer_sample(c, tokens, samples, steps, w, w.T), ""))
    return feed, trace


def _trainer_sample(c, tokens, samples, steps, w, t):
    from gputop.sources.engine_metrics import recognise
    from gputop.schema import EngineSample
    from .world import MONO0
    lines = []
    if c.tokens_per_step:
        lines += ["# TYPE trainer_tokens_total counter", f"trainer_tokens_total {tokens:.1f}"]
    else:
        lines += ["# TYPE trainer_samples_total counter", f"trainer_samples_total {samples:.1f}"]
    lines += ["# TYPE trainer_steps_total counter", f"trainer_steps_total {float(steps)}"]
    p = recognise("\n".join(lines) + "\n", c.export)
    v = p.values
    return EngineSample(kind="trainer", url=c.export, generation_tokens_total=v.get("generation_tokens_total"),
                        requests_finished_total=v.get("requests_finished_total"), work_unit=p.work_unit,
                        tensor_parallel=1, data_parallel=len(c.ranks) + c.remote,
                        time_mono_s=round(MONO0 + (w.seed % 10000) + t, 4))
