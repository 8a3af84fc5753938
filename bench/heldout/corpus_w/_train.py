"""A data-parallel (or single-GPU) training loop: steps of input wait + compute + all-reduce,
a progress counter that moves when a step finishes, DataLoader workers, NCCL waits."""

from __future__ import annotations

from gputop.schema import EngineSample

from ._core import GIB, GpuState, Host, Tree, make_frame, poisson, proc, rng_for, sources
from ._run import NCCL_SM

DEFAULT = dict(data_s=0.0, rank_speed=None, comm_extra=0.0, tiny_s=0.0, clock_cap=None,
               throttle=(), cap_gpus=(), temp_boost=0.0, power_limit=None, phase="train",
               psi=0.5, runnable=None, inv_rate=3.0, quota=None, cpu_share=1.0, loader_rate=None,
               other=None, fan=None)


def train_frames(name, T, dt, knobs, start_wall, *, gpus=1, gpu="H100", step_s=1.0,
                 comm_s=0.08, per_step=8 * 4096, unit="tokens", counter=True, cpus=64,
                 workers=6, sm=72.0, ten=38.0, dram=30.0, mem_frac=0.82, truth_log=None,
                 scrape_miss=0.01, label="train.py"):
    rng = rng_for(name, "train")
    gs = [GpuState(rng_for(name, f"gpu{i}"), gpu, i) for i in range(gpus)]
    host = Host(rng_for(name, "host"), cpus, 2.0)
    pid0 = 3000 + rng.randrange(1000, 50000)
    rank_pids = [pid0 + 31 * i for i in range(gpus)]
    threads = []
    for i, p in enumerate(rank_pids):
        threads += [(p, p, "python3"), (p + 3, p, "pt_autograd_0"), (p + 4, p, "pt_data_pin")]
        for w in range(workers):
            threads.append((p + 10 + w, p + 10 + w, "pt_data_worker"))
    tree = Tree(rng_for(name, "tree"), f"torchrun --nproc-per-node {gpus} {label}",
                "torchrun" if gpus > 1 else "train.py", rank_pids[0], threads,
                tuple(range(0, min(cpus, max(8, 12 * gpus)))))
    mono0 = rng.uniform(20000, 900000)
    frames = []
    progress = 0.0  # fraction of the current step done
    steps_total = float(rng.randrange(2000, 90000))
    work_total = steps_total * per_step
    t = 0.0
    seq = 0
    mem = [int(GpuState.__init__ and gs[0].spec["mem"] * mem_frac * rng.uniform(0.97, 1.0)) for _ in gs]
    start_time = start_wall - rng.uniform(1800, 40000)
    while t < T - 1e-9:
        k = dict(DEFAULT)
        k.update(knobs(t))
        speeds = k["rank_speed"] or {}
        slow = min([1.0] + list(speeds.values()))
        compute = step_s / slow
        comm = comm_s + k["comm_extra"]
        data = k["data_s"]
        tiny = k["tiny_s"]
        phase = k["phase"]
        if phase == "train":
            step_time = max(data, 0.0) + compute + comm + tiny
            steps_here = dt / step_time
            frac_data = data * steps_here / dt
            frac_tiny = tiny * steps_here / dt
        elif phase == "eval":
            step_time, steps_here, frac_data, frac_tiny = 1.0, 0.0, 0.0, 0.0
        else:  # checkpoint: GPUs idle while rank 0 writes
            step_time, steps_here, frac_data, frac_tiny = 1.0, 0.0, 0.0, 0.0
        # the counter moves when a step finishes
        before = int(progress)
        progress += steps_here
        done = int(progress) - before
        steps_total += done
        work_total += done * per_step
        gpus_s = []
        procs = []
        for i, g in enumerate(gs):
            if phase == "train":
                own = step_s / speeds.get(i, 1.0)
                c_frac = own * steps_here / dt
                w_frac = (compute - own + comm) * steps_here / dt  # in NCCL (spinning) or all-reduce
                busy = min(0.995, c_frac + w_frac + frac_tiny)
                s_sm = c_frac * sm + w_frac * NCCL_SM + frac_tiny * 1.2
                s_ten = c_frac * ten
                s_dram = c_frac * dram + w_frac * 4 + frac_tiny * 0.3
                if data > 0 and dt >= step_time * 0.9:
                    pass
                if data > 0:
                    # a saw-tooth: the tick sees a step or an empty wait depending on phase
                    ph = (t / step_time) % 1.0
                    wig = 0.35 * (1 if ph < 0.5 else -1) * min(1.0, data / step_time)
                    busy = max(0.0, min(0.995, busy * (1 + wig)))
                    s_sm *= (1 + wig)
                    s_ten *= (1 + wig)
                    s_dram *= (1 + wig)
            elif phase == "eval":
                busy, s_sm, s_ten, s_dram = 0.9, sm * 0.6, ten * 0.5, dram * 0.7
            else:
                busy, s_sm, s_ten, s_dram = 0.02, 0.3, 0.0, 0.1
            oth = k["other"](t, i) if k["other"] else []
            o_busy = sum(o[5] for o in oth)
            if oth:  # time-slicing: the other context takes its share of every second
                share = 1.0 / (1.0 + o_busy)
                busy_tot = min(1.0, busy * share + o_busy * (1 - share) + 0.02)
            else:
                busy_tot = busy
            cap = k["clock_cap"] if i in k["cap_gpus"] else None
            gs_ = g.sample(dt, busy_tot, min(99, s_sm + sum(o[6] for o in oth)), s_sm * 0.45,
                           min(99, s_ten + sum(o[7] for o in oth)), min(99, s_dram + sum(o[8] for o in oth)),
                           mem[i] + sum(o[3] for o in oth), clock_cap=cap,
                           throttle=k["throttle"] if i in k["cap_gpus"] else (),
                           temp_boost=k["temp_boost"] if i in k["cap_gpus"] else 0.0,
                           power_limit=k["power_limit"], fan_pct=k["fan"] if i in k["cap_gpus"] else None,
                           nvlink_mib=((w_frac * 60000 if gpus > 1 and phase == "train" else 0.0)
                                       * (k.get("nvlink_scale") or {}).get(i, 1.0)),
                           pcie_mib=200 + 800 * (1 - frac_data))
            gpus_s.append(gs_)
            own_sm = busy * 100
            if oth:
                own_sm = 100 * busy / max(busy + o_busy, 1e-6)
            procs.append(proc(rank_pids[i], i, "python3", f"/opt/venv/bin/python3 -u {label} --local-rank {i}",
                              mem[i], own_sm, 0.0, start_time, int(18 * GIB), ppid=rank_pids[0] - 7,
                              user="ml"))
            for o in oth:
                procs.append(proc(o[0], i, o[1], o[2], o[3], 100 * o[5] / max(busy + o_busy, 1e-6),
                                  o[9] + t * 0.98, start_wall - 300, int(2 * GIB), user="intern"))
        # CPU: the main thread launches; loader workers decode/augment
        loader = k["loader_rate"] if k["loader_rate"] is not None else 0.25
        main = min(k["cpu_share"], 0.55 + 0.3 * (1 - frac_data)) if phase == "train" else 0.3
        rates = {"python3": main, "pt_autograd_0": min(k["cpu_share"], 0.35) if phase == "train" else 0.05,
                 "pt_data_pin": 0.02, "pt_data_worker": loader}
        tree.run(dt, rates, 400 + 200 * gpus, k["inv_rate"], k["quota"], 0.97 if k["quota"] else 0.0)
        tree_rate = sum(rates.get(th.name, 0.002) for th in tree.threads)
        runnable = k["runnable"] if k["runnable"] is not None else 2 + tree_rate * 0.6 + rng.uniform(0, 2)
        hs, psi, rq = host.step(dt, 2 + tree_rate + k.get("noisy_cores", 0.0), runnable, k["psi"],
                                12000 + 300 * runnable)
        pinned = tree.pinned(psi, max(1, rq + rng.choice([-1, 0, 1])))
        eng = None
        ok = None
        if counter:
            ok = rng.random() >= scrape_miss
            if ok:
                bt = tree.busiest()
                eng = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                                   generation_tokens_total=float(work_total),
                                   requests_finished_total=float(steps_total), work_unit=unit,
                                   gpu_indices=tuple(range(gpus)), pids=tree.pids,
                                   time_mono_s=round(mono0 + t + 0.01, 6),
                                   time_wall_s=round(start_wall + t + 0.01, 6),
                                   cpu_s=round(tree.cpu_s, 2), ctx_involuntary=tree.inv,
                                   busiest_thread_cpu_s=round(bt.cpu_s, 2),
                                   busiest_thread=f"{bt.tid} {bt.name}",
                                   cpu_quota_cores=tree.quota,
                                   cpu_periods=tree.periods if tree.quota is not None else None,
                                   cpu_throttled_periods=tree.throttled if tree.quota is not None else None)
        frames.append(make_frame(seq, start_wall + t, mono0 + t, gpus=tuple(gpus_s),
                                 processes=tuple(procs), engine=eng, host=hs, pinned=pinned,
                                 sources=sources(ok)))
        if truth_log is not None:
            truth_log.append(dict(t=t, dt=dt, tokens=steps_here * per_step, util=gpus_s[0].util_gpu_pct,
                                  sm=gpus_s[0].sm_active_pct, cpu=tree.cpu_s, itl_p99=None, ttfts=[],
                                  waiting=0, itl=None))
        t += dt
        seq += 1
    return frames
