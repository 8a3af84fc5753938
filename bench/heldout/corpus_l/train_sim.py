"""Training jobs (DDP / FSDP / one GPU) and plain CUDA programs.

One optimizer step per rank: forward+backward 6 * params * tokens / (peak * MFU * clock),
the gradient all-reduce / reduce-scatter (exposed part only: the rest overlaps backward),
the optimizer (HBM-bound), and the data the step needs.  Ranks meet in every collective,
so the step is the slowest rank's; faster ranks spend the difference inside NCCL kernels
(GPU-Util counts them; few SMs, no tensor work, little power).  The DataLoader delivers
``loader_rate`` samples/s; when that is below what the GPUs eat the prefetch queue runs dry
and every step waits: the GPU idles and the driver's sub-second samples show the saw-tooth.
Progress counters (when the job exports one) move when a step completes.
"""

from __future__ import annotations

import math

from gputop.schema import EngineSample, Frame

from . import frames as fr
from .physics import GIB, Act, make_boards
from .serve_sim import _forced, _heat, ev_of, level


def _cycle_pattern(phase0, period, busy_len, dt, n, rng):
    """Busy fractions at n sub-tick samples of a periodic busy/idle cycle."""
    def busy_until(x):  # busy time in [0, x)
        whole, rest = divmod(x, period)
        return whole * busy_len + min(rest, busy_len)
    out = []
    for k in range(n):
        a = phase0 + k * dt / n
        b = a + dt / n
        out.append(max(0.0, min(1.0, (busy_until(b) - busy_until(a)) / (b - a))))
    return tuple(out)


def simulate(spec, rng):
    cfg = dict(spec.knobs)
    gpu = spec.gpu
    n_gpu = cfg.get("ranks", 1)
    ev = list(cfg.get("events", ()))
    boards = make_boards(gpu, n_gpu, rng)
    dt = spec.tick_s
    n = int(spec.duration_s / dt)
    t0w = spec.start_wall_s
    mono0 = 3000.0 + rng.random() * 50000
    host = fr.Host(cfg.get("cpus", 96), rng, cfg.get("host_base", 2.0))
    program = cfg.get("program")  # plain CUDA: scripted phases instead of a step model
    P = cfg.get("params", 8.0) * 1e9
    tok = cfg.get("tokens", 16384)  # per rank per step
    samples_per_step = cfg.get("samples", 8)  # per rank
    mfu = cfg.get("mfu", 0.42)
    base = 20000 + rng.randrange(30000)
    start = t0w - rng.uniform(600, 20000)
    user = cfg.get("user", "mlops")
    cmd = cfg.get("cmd", "torchrun --nproc-per-node %d train.py --config sft.yaml" % n_gpu)
    ranks = [fr.Proc(base + 10 + r, "python3" if not program else cfg.get("pname", "bench"),
                     (cmd if not program else cfg.get("cmd", "./gemm_bench")) +
                     (f"  (rank {r})" if n_gpu > 1 and not program else ""),
                     start, user=user, ppid=base, rss=int(18 * GIB)) for r in range(n_gpu)]
    workers = [fr.Proc(base + 100 + j, "python3", cmd + "  (DataLoader worker)", start + 30,
                       user=user, ppid=ranks[j % n_gpu].pid, rss=int(3 * GIB))
               for j in range(0 if program else cfg.get("workers", 8) * n_gpu)]
    intr = [e for e in ev if e["kind"] == "intruder"]
    iprocs = {id(e): fr.Proc(e.get("pid", 50000 + rng.randrange(9000)), e["name"], e["cmdline"],
                             t0w + e["t0"], user=e.get("user", "bob")) for e in intr}
    mem = [int(cfg.get("mem_gib", 60) * GIB)] * n_gpu
    phase = [0.0] * n_gpu
    steps_done = 0.0
    steps_frac = 0.0
    prev_act = {}
    frames_out = []
    tokens_total = cfg.get("tokens_start", 3.1e9 * (1 + rng.random()))
    steps_total = float(int(tokens_total / (tok * n_gpu)))
    for i in range(n):
        t = i * dt
        tw, tm = t0w + t + rng.gauss(0, 0.004), mono0 + t
        ck = ev_of(ev, "checkpoint")
        in_ck = ck is not None and t >= ck["t0"] and ((t - ck["t0"]) % ck["every"]) < ck["lasts"]
        evl = ev_of(ev, "eval")
        in_eval = evl is not None and t >= evl["t0"] and ((t - evl["t0"]) % evl["every"]) < evl["lasts"]
        warm = cfg.get("compile_s", 0) > t
        stall = ev_of(ev, "input_stall")
        st = level(stall, t) if stall else 0.0
        cont = max((level(e, t) for e in ev if e["kind"] in ("host_contention", "launch_jitter")),
                   default=0.0)
        cev = ev_of(ev, "host_contention") or ev_of(ev, "launch_jitter")
        tiny = ev_of(ev, "eager")
        tiny_lv = level(tiny, t) if tiny else 0.0
        share = max((e["share"] * level(e, t) for e in intr), default=0.0)
        # ---- clocks
        facts = []
        for r in range(n_gpu):
            a = Act(power_limit=_limit(cfg, ev, t, r, gpu), heat=_heat(ev, t, r))
            _forced(a, ev, t, r)
            if r in prev_act:
                a.sm, a.tensor, a.dram = prev_act[r]
            facts.append(boards[r].clock_factor(a))
        acts = []
        work = 0.0
        if program:
            ph = next((p for p in program if p[0] <= t < p[1]), None)
            prof = dict(ph[2]) if ph else dict(busy=0, sm=0, tensor=0, dram=0)
            if tiny_lv:
                prof = dict(busy=tiny.get("busy", 0.93), sm=tiny.get("sm", 0.06), tensor=0.0,
                            dram=0.03)
            for r in range(n_gpu):
                f = facts[r][0]
                b = min(1.0, prof["busy"] * (1 + rng.gauss(0, 0.01)))
                a = Act(busy=b, sm=b * prof["sm"] * (1 + rng.gauss(0, 0.01)),
                        tensor=b * prof["tensor"], dram=b * prof["dram"],
                        power_limit=_limit(cfg, ev, t, r, gpu), heat=_heat(ev, t, r))
                _forced(a, ev, t, r)
                acts.append(a)
            work = prof["busy"] * facts[0][0]
        else:
            # ---- one step, per rank
            link = cfg.get("link_bw", 1.5e11 if gpu.sxm else 2.0e10)
            slow = [facts[r][0] / _wf(ev, t, r) for r in range(n_gpu)]
            t_fb = [(2 if in_eval else 6) * P * tok / (gpu.flops * mfu * s) for s in slow]
            shard = n_gpu if cfg.get("strategy", "ddp") == "fsdp" else 1
            t_opt = 0.0 if in_eval else P * 16 / shard / (gpu.bw * 0.8)
            comm = 0.0 if (in_eval or n_gpu == 1) else 2 * P * 2 * (n_gpu - 1) / n_gpu / link
            if cfg.get("strategy") == "fsdp" and not in_eval:
                comm *= 1.5
            t_exp = comm * cfg.get("exposed", 0.3)
            t_gpu = max(t_fb) + t_exp + t_opt
            kernels = cfg.get("kernels", 2500)
            t_host = kernels * 5e-6 * (1 / max(0.15, 1 - (cev["steal"] if cev else 0) * cont))
            t_host += (cev.get("delay_ms", 0) / 1000 * cont * kernels / 200) if cev else 0.0
            if tiny_lv:
                t_host = tiny.get("host_s", 1.2) * tiny_lv + t_host * (1 - tiny_lv)
            need = samples_per_step / max(1e-6, cfg.get("loader_rate", 1e9) / n_gpu
                                          * (1 - (stall["drop"] if stall else 0) * st))
            # a stalled launching thread (GIL, preemption) lets the GPU queue drain
            stall_s = cev.get("stall_s", 0.0) * cont if cev else 0.0
            t_step = (max(t_gpu, t_host, need) + stall_s) / (1 - share)
            if cfg.get("jitter_steps"):
                t_step *= 1 + 0.03 * rng.gauss(0, 1)
            if warm or in_ck:
                t_step = float("inf")
            steps = 0.0 if math.isinf(t_step) else dt / t_step
            steps_frac += steps
            whole = int(steps_frac)
            steps_frac -= whole
            if not in_eval:
                steps_total += whole
                tokens_total += whole * tok * n_gpu
            work = steps
            for r in range(n_gpu):
                f = facts[r][0]
                if steps == 0:
                    b = 0.04 if in_ck and rng.random() < 0.3 else 0.0
                    acts.append(Act(busy=b, sm=b * 0.3, dram=b * 0.5,
                                    power_limit=_limit(cfg, ev, t, r, gpu), heat=_heat(ev, t, r)))
                    continue
                t_gpu_r = t_fb[r]
                t_wait = max(t_fb) - t_fb[r] + t_exp  # inside NCCL kernels
                busy_len = min(t_step, t_gpu_r + t_wait + t_opt)
                if tiny_lv:
                    busy_len = t_step * tiny.get("busy", 0.9)
                busy = busy_len / t_step + share
                sm_in = tiny.get("sm", 0.08) if tiny_lv else 0.95
                sm = steps * (t_gpu_r * sm_in + t_wait * 0.13 + t_opt * 0.85) / dt
                tensor = 0.0 if tiny_lv else steps * t_gpu_r * 0.78 * mfu / 0.42 / dt
                dram = steps * (t_gpu_r * 0.22 + t_opt * 0.85 + t_wait * 0.05) / dt
                if tiny_lv:
                    sm, dram = busy * sm_in, busy * 0.04
                sm = sm * (1 - share) + share * 0.6
                tensor = tensor * (1 - share) + share * 0.3
                npat = max(1, int(6 * dt))
                pat = _cycle_pattern(phase[r], t_step, busy_len, dt, npat, rng) \
                    if t_step > dt / 6 else ()
                phase[r] = (phase[r] + dt) % t_step
                nv = (steps * comm * link / 2**20 / dt) if (gpu.sxm and n_gpu > 1) else 0.0
                a = Act(busy=min(1.0, busy), sm=min(1.0, sm), tensor=min(1.0, tensor),
                        dram=min(1.0, dram), pattern=pat, nvlink_mib=nv,
                        pcie_mib=steps * samples_per_step * cfg.get("sample_mib", 2) / dt,
                        power_limit=_limit(cfg, ev, t, r, gpu), heat=_heat(ev, t, r))
                _forced(a, ev, t, r)
                acts.append(a)
        gs = []
        for r, a in enumerate(acts):
            a.mem_used = mem[r] + sum(int(e["mem_gib"] * GIB) for e in intr
                                      if e["t0"] <= t < e["t1"] and r in e.get("gpus", (0,)))
            fc, reasons = boards[r].clock_factor(a, a)
            fc = min(fc, facts[r][0]) if a.busy > 0.02 else 1.0
            if a.busy < 0.05:
                reasons = tuple(x for x in reasons if x != "power cap")
            gs.append(boards[r].sample(a, fc, reasons, dt, rng))
            prev_act[r] = (a.sm, a.tensor, a.dram)
        # ---- CPU
        running = work > 0
        phi = 1 - (cev["steal"] if cev else 0) * cont
        for p in ranks:
            rate = (1.0 if running else (1.0 if (warm or in_ck) else 0.1)) * phi
            p.run(rate, dt, 30 + 3000 * cont * (cev["steal"] if cev else 0))
        wrate = 0.0
        if workers:
            per = cfg.get("worker_cpu", 0.35)
            if stall and st and stall.get("mode") == "decode":
                per = 0.98
            elif stall and st and stall.get("mode") == "storage":
                per = 0.08
            wrate = per if running or st else 0.02
            for w in workers:
                w.run(wrate * phi, dt, 10 + 400 * cont)
        noisy = (cev["cores"] * cont) if cev else 0.0
        busy_cores = n_gpu * (1.0 if running or warm else 0.1) + len(workers) * wrate
        if warm:
            busy_cores += cfg.get("compile_cores", 16)
        offcpu = None
        launch = ()
        if cfg.get("ebpf"):
            launch, offcpu = _launch(cfg, ranks[0], work, tiny_lv, cev, cont, dt, rng)
        hs = host.sample(dt, busy_cores + noisy, extra_runnable=noisy * 0.5, offcpu=offcpu)
        procs = []
        for r in range(n_gpu):
            sm_p = float(round(100 * acts[r].busy * (1 - share))) if cfg.get("proc_sm", True) else None
            procs.append(ranks[r].sample(r, mem[r] - 530 * 2**20, sm_p))
        for e in intr:
            if e["t0"] <= t < e["t1"]:
                p = iprocs[id(e)]
                p.run(e.get("cpu", 1.0), dt)
                for g in e.get("gpus", (0,)):
                    procs.append(p.sample(g, int(e["mem_gib"] * GIB),
                                          float(round(100 * share)) if cfg.get("proc_sm", True) else None))
        srcs = {"nvml": fr.ok(0.01 * (1 + 0.1 * n_gpu)), "host": fr.ok(0.0004), "pin": fr.ok(3e-5)}
        engine = None
        if cfg.get("counter"):
            engine = EngineSample(kind="trainer", url="http://127.0.0.1:9100/metrics",
                                  generation_tokens_total=float(tokens_total),
                                  requests_finished_total=float(steps_total), work_unit="tokens",
                                  pids=tuple(p.pid for p in ranks), time_mono_s=tm, time_wall_s=tw)
            srcs["engine"] = fr.ok(0.004)
        else:
            srcs["engine"] = fr.failed(fr.NO_ENGINE)
        pin = None
        if cfg.get("pinned"):
            tree = ranks + workers
            thr = [(p.pid, p.pid, "pt_main_thread" if p in ranks else "pt_data_worker",
                    p.cpu_s * (0.9 if p in ranks else 0.97)) for p in tree[:8]]
            pin = fr.pinned(cfg["pinned"], cfg["pinned"], tree, thr, hs, host.cpus)
        if cfg.get("ebpf"):
            srcs["ebpf"] = fr.ok(0.002, detail="full mode; libcudart.so.12: cudaLaunchKernel, "
                                 "cudaMemcpyAsync, cudaStreamSynchronize; libcuda.so.1: "
                                 "cuLaunchKernel, cuLaunchKernelEx")
        frames_out.append(Frame(gpus=tuple(gs), processes=tuple(procs), engine=engine,
                                launch=launch, host=hs, pinned=pin, seq=i, time_wall_s=tw,
                                time_mono_s=tm, sources=srcs))
    return frames_out


def _wf(ev, t, r):
    e = ev_of(ev, "hot_shard")
    if e and r in e["gpus"] and level(e, t):
        return 1 + (e["factor"] - 1) * level(e, t)
    return 1.0


def _limit(cfg, ev, t, r, gpu):
    base = cfg.get("power_limit")
    cap = ev_of(ev, "power_cap")
    if cap and level(cap, t) and r in cap.get("gpus", range(64)):
        full = base or gpu.tdp
        return full - (full - cap["watts"]) * level(cap, t)
    return base


def _launch(cfg, proc, work, tiny_lv, cev, cont, dt, rng):
    kernels = cfg.get("kernels", 2500)
    calls = work * kernels if not cfg.get("program") else work * 20000 * dt
    if tiny_lv:
        calls = max(calls, 40000 * dt * tiny_lv)
    tail = (cev["tail"] * cont) if cev else 0.0
    tmed = cev.get("tail_us", 300) * 1000 if cev else 200e3
    out = []
    h = fr.launch_hist("cudaLaunchKernel", proc.pid, calls * 0.7, 3800, 0.35, tail + 0.0005, tmed, 0.9, rng)
    if h:
        out.append(h)
    h = fr.launch_hist("cuLaunchKernel", proc.pid, calls * 0.3, 4500, 0.4, tail, tmed, 0.9, rng)
    if h:
        out.append(h)
    h = fr.launch_hist("cudaStreamSynchronize", proc.pid, work * 2, 2e6, 1.0, 0, 0, 0.9, rng)
    if h:
        out.append(h)
    sw = int((40 + 3000 * tail * 10) * dt)
    h = fr.launch_hist("off-cpu", proc.pid, sw, 40e3, 0.9, min(0.9, tail * 8), tmed * 2, 0.8, rng)
    if h:
        out.append(h)
    return tuple(out), sw
