"""Training jobs: single GPU, DDP and FSDP, step by step.  Each step a rank waits for its
batch (the DataLoader's prefetch buffer), computes (slower at a lower clock, with more work
when imbalanced, longer when host-launch-bound), waits for the slowest rank in the
gradient all-reduce (busy GPU, few SMs: NCCL's spinning kernels), and steps the optimizer.
The per-step counters move once per step, when it has finished on the device."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import EngineSample

from . import minnp as np
from .build import Box, Hog, Intruder, apply_hogs, apply_intruders, assemble, _time_base, GiB
from .frames import GpuState, Host, Pinned, Proc, launch_hist, rng_for
from .hw import GpuSpec


@dataclass
class TrainTrace:
    name: str
    gpu: GpuSpec
    world: int
    duration: float
    tick: float = 1.0
    t_compute: float = 0.6  # s per step per rank at full clock
    sm: float = 0.82
    tensor: float = 0.42
    dram: float = 0.3
    t_comm: float = 0.08  # all-reduce time; exposed fraction below
    comm_exposed: float = 0.35
    t_opt: float = 0.03
    batch: int = 8  # per rank
    seq: int = 4096  # tokens per sample (0: samples counter)
    workers: int = 8
    t_load: Callable = lambda t: 0.5  # s per batch per worker
    load_cpu: float = 1.0  # worker CPU busy while loading (1: decode-bound, 0.1: I/O-bound)
    launches: int = 2500  # kernel launches per step
    launch_us: float = 7.0  # host cost per launch (eager)
    imbalance: Callable = lambda t, r: 0.0  # extra compute fraction on rank r
    clk: Callable = lambda t, r: 1.0
    cpu_share: Callable = lambda t: 1.0
    gpu_share: Callable = lambda t, r: 1.0
    tiny: Callable = lambda t: 0  # tiny kernels per step added (debug hooks)
    tiny_us: float = 4.0  # GPU time of one tiny kernel (launch-limited in a graph: less)
    tiny_host_us: float = 1.2
    pause: Callable = lambda t: None  # (kind, seconds) pause starting at this step: ckpt / eval
    launch_tail: Callable | None = None  # t -> (frac, ms, offcpu/s): eBPF on
    hogs: list = field(default_factory=list)
    intruders: list = field(default_factory=list)
    forced: Callable | None = None  # (gpu_state_list, n, tick) -> None: throttling schedules
    mem_per_gpu: float = 62 * GiB
    counter: str = "tokens"  # tokens | samples
    cpus: int = 96
    start_step: int = 42000
    fsdp: bool = False
    up_after: float = 0.0  # job starts (compile/warm-up before)
    warmup_s: float = 0.0  # torch.compile: CPU busy, GPU idle


def training(tt: TrainTrace):
    rng = rng_for(tt.name, "sim")
    n = int(round(tt.duration / tt.tick))
    tick = tt.tick
    start_wall, _ = _time_base(tt.name)
    gpus = [GpuState(tt.gpu, i, n, tick, tt.name) for i in range(tt.world)]
    W = tt.world
    # counters over time: (time, samples, tokens, steps)
    events = []
    samples = tt.start_step * tt.batch * W
    steps = tt.start_step
    t = tt.warmup_s
    buf = [2.0 * tt.workers] * W  # prefetched batches per rank
    last = [0.0] * W
    main_cpu = np.zeros(n)
    worker_cpu = np.zeros(n)
    launch_count = np.zeros(n)
    for g in gpus:
        g.context[:] = True
        g.mem_used[:] = tt.mem_per_gpu
    if tt.warmup_s:
        for k in range(n):
            if k * tick < tt.warmup_s:
                main_cpu[k] += 1.0
                for g in gpus:
                    g.mem_used[k] = tt.mem_per_gpu * min(1.0, 0.15 + k * tick / tt.warmup_s)
                    if rng.random() < 0.15:
                        g.add(k * tick, (k + 1) * tick, 0.3, 0.2, 0.05, 0.1)

    def cpu_add(arr, t0, t1, rate):
        i = int(t0 / tick)
        while t0 < t1 and i < n:
            e = min(t1, (i + 1) * tick)
            arr[i] += (e - t0) * rate / tick
            t0 = e
            i += 1

    while t < tt.duration:
        p = tt.pause(t)
        if p is not None and p[1] > 0:
            kind, secs = p
            for r, g in enumerate(gpus):
                if kind == "eval":
                    g.add(t, t + secs, 0.93, 0.62, 0.22, 0.35)
                else:  # checkpoint: GPU mostly idle, D2H copies
                    g.add(t, t + secs, 0.08, 0.03, 0.0, 0.05)
            cpu_add(main_cpu, t, t + secs, 0.9)
            t += secs
            continue
        share = tt.cpu_share(t)
        # data: each rank's loader refills its buffer while the previous step ran
        rate = tt.workers / max(1e-3, tt.t_load(t)) * min(1.0, share * 1.0 if tt.load_cpu > 0.5 else 1.0)
        wait = 0.0
        for r in range(W):
            buf[r] = min(2.0 * tt.workers, buf[r] + (t - last[r]) * rate)
            if buf[r] < 1.0:
                wait = max(wait, (1.0 - buf[r]) / rate)
        for r in range(W):
            buf[r] += wait * rate - 1.0
            last[r] = t + wait
        cpu_add(worker_cpu, t, t + wait + 0.001, 0.0)
        t0 = t + wait
        tiny = tt.tiny(t0)
        host = (tt.launches * tt.launch_us + tiny * tt.tiny_host_us) / 1e6 / max(0.05, share)
        gap_frac, gap_ms = 0.0, 0.0
        if tt.launch_tail is not None:
            gap_frac, gap_ms, _ = tt.launch_tail(t0)
        host += tt.launches * gap_frac * gap_ms / 1000
        comp = []
        for r in range(W):
            c = tt.t_compute * (1 + tt.imbalance(t0, r)) / max(0.2, tt.clk(t0, r)) / max(0.05, tt.gpu_share(t0, r))
            c += tiny * tt.tiny_us / 1e6
            comp.append(max(c, host))
        slow = max(comp)
        comm = tt.t_comm * (tt.comm_exposed if W > 1 else 0)
        step_end = t0 + slow + comm + tt.t_opt
        for r, g in enumerate(gpus):
            gpu_time = tt.t_compute * (1 + tt.imbalance(t0, r)) / max(0.2, tt.clk(t0, r))
            tiny_t = tiny * tt.tiny_us / 1e6
            span = comp[r]
            busy = min(1.0, (gpu_time + tiny_t) / span / max(0.05, tt.gpu_share(t0, r)) * tt.gpu_share(t0, r)) \
                if span > 0 else 0
            dense = gpu_time / span if span > 0 else 0
            g.add(t0, t0 + span, busy, tt.sm * dense + 0.01 * (busy - dense), tt.tensor * dense, tt.dram * dense + 0.01)
            if W > 1:  # wait for the slowest rank in the collective, then the exposed all-reduce
                g.add(t0 + span, t0 + slow, 1.0, 0.11, 0.0, 0.03,
                      nvlink_bytes=2e7 * (slow - span))
                g.add(t0 + slow, t0 + slow + comm, 1.0, 0.16, 0.0, 0.12, nvlink_bytes=4e10 * comm)
            g.add(t0 + slow + comm, step_end, 0.98, 0.55, 0.0, 0.6)
        cpu_add(main_cpu, t0, step_end, min(1.0, host / max(slow, 1e-6) + 0.15))
        la = tt.launches + tiny
        cpu_add(launch_count, t0, step_end, la / max(step_end - t0, 1e-6) * tick)
        steps += 1
        samples += tt.batch * W
        events.append((step_end, samples, steps))
        t = step_end
    # loader workers: CPU while producing at the consumed rate
    for k in range(n):
        consumed = sum(1 for e in events if k * tick <= e[0] < (k + 1) * tick)
        per = consumed / tick  # batches/s per rank
        demand = per * tt.t_load(k * tick) / tt.workers  # fraction of each worker busy
        worker_cpu[k] = min(1.0, demand) * tt.load_cpu * min(1.0, tt.cpu_share(k * tick)) + 0.01
    # processes, host, pinned
    procs, pinned_threads = [], []
    base_pid = 2000 + rng.integers(100, 50000)
    launcher = base_pid
    ranks = [base_pid + 7 + r for r in range(W)]
    script = "train.py --config configs/pretrain.yaml" if tt.counter == "tokens" else "train_vision.py --data /data/imagenet"
    for r in range(W):
        cmd = (f"/opt/conda/bin/python -u {script} --local-rank {r}" if W > 1 else f"/opt/conda/bin/python -u {script}")
        p = Proc(ranks[r], "python", cmd, (r,), n, start_wall - 3600 * 5, user="mlops", ppid=launcher, rss=9e9)
        p.mem = np.A(gpus[r].mem_used)
        p.cpu = main_cpu + 0.2
        p.cpu0 = 3600 * 5 * 0.9
        procs.append(p)
    apply_intruders(gpus, procs, tt.intruders, n, tick, start_wall)
    for it in tt.intruders:
        for k in range(n):
            if (k + 1) * tick >= it.start - 3 and k * tick <= it.end + 2:
                gpus[it.gpu].mem_used[k] += it.mem
    if tt.forced is not None:
        tt.forced(gpus, n, tick)
    host = Host(tt.cpus, n, tick, rng_for(tt.name, "host"))
    host.busy_cores += main_cpu * W + worker_cpu * (tt.workers * W) + 0.3 * W
    host.runnable += main_cpu * W + worker_cpu * (tt.workers * W)
    pinned = Pinned((f"torchrun {script}" if W > 1 else f"python {script}")[:60], (launcher if W > 1 else ranks[0],),
                    n, tuple(range(tt.cpus)), (29500 if W > 1 else 9400,))
    tree = ((launcher,) if W > 1 else ()) + tuple(ranks)
    wid = []
    for r in range(W):
        pinned.thread(ranks[r], ranks[r], "python", main_cpu, 3600 * 5 * 0.8)
        pinned.thread(ranks[r] + 1, ranks[r], "pt_autograd_0", main_cpu * 0.45, 3600 * 5 * 0.3)
        pinned.thread(ranks[r] + 2, ranks[r], "pt_data_pin", worker_cpu * 0.05 + 0.01)
        for w in range(tt.workers):
            wp = ranks[r] + 100 + w * 3
            wid.append(wp)
            pinned.thread(wp, wp, "pt_data_worker", worker_cpu, 3600 * 5 * 0.5)
    if W > 1:
        pinned.thread(launcher, launcher, "torchrun", 0.01)
    tree = tree + tuple(wid)
    pinned.tree_pids = [tree] * n
    pinned.invol[:] = 3.0 * W
    pinned.vol[:] = 800.0 * W
    for k in range(n):
        s = tt.cpu_share((k + 0.5) * tick)
        if s < 0.999:
            pinned.invol[k] += 300 * (1 - s) * W * (1 + tt.workers / 4)
    apply_hogs(host, pinned, tt.hogs, n, tick)

    unit = tt.counter

    def engine_fn(k, tw, tm):
        tt_ = (k + 1) * tick
        sm_, st_ = tt.start_step * tt.batch * W, tt.start_step
        for e in events:
            if e[0] <= tt_:
                sm_, st_ = e[1], e[2]
            else:
                break
        if tt_ < tt.up_after:
            return None
        gen = sm_ * tt.seq if unit == "tokens" else sm_
        return EngineSample(kind="trainer", url=f"http://127.0.0.1:{9400}/metrics", model="",
                            generation_tokens_total=float(gen), requests_finished_total=float(st_),
                            work_unit=unit, pids=tree, tensor_parallel=1, data_parallel=W,
                            time_mono_s=round(tm - 0.02, 6), time_wall_s=round(tw - 0.02, 6),
                            cpu_s=pinned.total(k), ctx_involuntary=pinned.invol_total(k),
                            busiest_thread=pinned.busiest(k)[0], busiest_thread_cpu_s=pinned.busiest(k)[1])

    launch_fn = None
    if tt.launch_tail is not None:
        lrng = rng_for(tt.name, "launch")

        def launch_fn(k):
            frac, ms, off = tt.launch_tail((k + 0.5) * tick)
            c = launch_count[k]
            return ([launch_hist("cudaLaunchKernel", ranks[0], c * 0.7, lrng, 4.2, 0.35, frac, ms),
                     launch_hist("cuLaunchKernel", ranks[0], c * 0.3, lrng, 3.1, 0.3, frac, ms)],
                    int(max(0, off * tick + lrng.normal(0, 3))))
    frames = assemble(tt.name, n, tick, gpus, procs, host, pinned, engine_fn, launch_fn)
    return frames
