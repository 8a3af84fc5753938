"""Step-based jobs: FSDP/DDP training, RL trainers, reward scoring, eval sweeps, embedding
batches.  Each step: data wait on the host, compute per rank (its clock included), then the
collective in which the early ranks wait for the slowest.  Signals follow from the step."""

from __future__ import annotations

from gputop.buckets import bucket_index
from gputop.schema import EngineSample, LaunchHist

from .common import BOARDS, GiB, Host, Load, Proc, Tree, clip, rng_for
from .scene import Scene


def job(name, *, board="H100 SXM", n_gpus=8, duration=600, tick=1.0, start=1780000000.0,
        comp_s=0.8, comm_s=0.08, tokens_per_step=8 * 4096 * 8, mem_gib=62.0, sm_frac=0.9,
        tensor_frac=0.55, dram_frac=0.35, loader_cores=8, cpus=96, mods=lambda t: {},
        engine=True, cmd="torchrun --nproc-per-node 8 train.py", work_unit="tokens",
        host_other=lambda t: 3.0, quota=None, ebpf=False, kernels_per_step=3000, psi=True,
        proc_name="python3", user="research", pod="", extra=lambda t, i: None, host_gap=0.004,
        ranks=None, kind="trainer"):
    B = BOARDS[board]
    rng = rng_for(name)
    ranks = ranks if ranks is not None else n_gpus
    host = Host(cpus, f"{name}-node")
    scene = Scene(name, board, n_gpus, host, start, duration, tick)
    base = rng.randrange(5000, 90000)
    t0 = start - rng.uniform(600, 40000)
    cont = f"containerd:{rng.randrange(16**12):012x}" if pod else ""
    workers = [Proc(base + 10 + i, i, proc_name, cmd + f" --local-rank {i}" * (ranks > 1), t0 + 5, mem=mem_gib * GiB,
                    rss=12 * GiB, user=user, container=cont, pod=pod, ppid=base) for i in range(ranks)]
    loaders = [base + 200 + j for j in range(max(0, loader_cores))]
    pids = tuple([base] + [w.pid for w in workers] + loaders)
    threads = [[workers[0].pid, "python3", 0.45], [workers[0].pid + 1, "pt_autograd_0", 0.2],
               [loaders[0] if loaders else base + 1, "pt_data_worker", 0.3], [base, "torchrun", 0.02]]
    tree = Tree(base, pids, cmd, threads, cores=tuple(range(cpus)), quota=quota, ports=(29500,))
    s = type("S", (), {})()
    s.steps = s.tokens = s.carry = 0.0
    port = 9100 + rng.randrange(50)

    def step(t, dt, t_wall):
        m = mods(t)
        if m.get("idle"):  # between phases: model loaded, nothing launched
            loads = [Load(util=0, mem_bytes=w.mem, has_procs=True) for w in workers] + \
                    [Load(has_procs=False) for _ in range(n_gpus - ranks)]
            got, hs = host.tick(rng, dt, 0.3 + m.get("tree_demand", 0), host_other(t) + m.get("other_cpu", 0))
            tree.tick(rng, dt, got, 0.3, 0)
            return _out(loads, hs, m, 0.0, 0.0, t_wall)
        slows = [scene.slow[i] for i in range(ranks)]
        sg = m.get("slow_gpu")
        if sg:
            slows[sg[0]] = max(slows[sg[0]], sg[1])
        comp = [comp_s * m.get("comp_mult", 1.0) * sl for sl in slows]
        slowest = max(comp)
        # host side: loader demand and the launching thread's gap
        demand = 1.5 + loader_cores * m.get("loader_busy", 0.35) + m.get("tree_demand", 0.0)
        got, hs = host.tick(rng, dt, demand, host_other(t) + m.get("other_cpu", 0.0))
        starved = clip(1 - got / demand)
        got = tree.tick(rng, dt, got, demand, starved)
        starve = demand / max(0.05, got)
        gap = host_gap * (1 + max(0, starve - 1) * 6) + m.get("jitter", 0.0) * kernels_per_step * 0.002
        # the launch thread's gaps stretch the step when launches can't keep ahead
        comp = [c + gap * (m.get("launch_bound", 0.3)) for c in comp]
        slowest = max(comp)
        data = m.get("data_wait", 0.0)
        if m.get("data_every"):  # a stall every Nth step
            data = data / m["data_every"]
        st = slowest + comm_s * m.get("comm_mult", 1.0) + data + gap * (1 - m.get("launch_bound", 0.3))
        nsteps = dt / st
        s.steps += nsteps
        s.tokens += nsteps * tokens_per_step * m.get("tok_mult", 1.0)
        busy_frac = (slowest + comm_s * m.get("comm_mult", 1.0)) / st
        loads = []
        idle_gap = data / st
        for i in range(ranks):
            w_frac = (slowest - comp[i]) / st  # waiting in the collective (NCCL kernel spinning)
            c_frac = comp[i] / st
            k_frac = comm_s * m.get("comm_mult", 1.0) / st
            util = clip(busy_frac * rng.uniform(0.985, 1.0) * m.get("util_mult", 1.0))
            sm = clip((c_frac * sm_frac * m.get("sm_mult", 1.0) + (w_frac + k_frac) * 0.16))
            ten = clip(c_frac * tensor_frac * m.get("tensor_mult", 1.0) / slows[i])
            dr = clip(c_frac * dram_frac + k_frac * 0.1)
            sub = ()
            if idle_gap > 0.05 or m.get("bursty"):
                n = max(1, round(dt / B.util_period_s))
                sub = tuple(clip(util + (rng.random() < idle_gap * 1.5) * -util * rng.uniform(0.6, 1.0)) for _ in range(n))
            L = Load(util=util, sm=sm, tensor=ten, dram=dr, mem_bytes=workers[i].mem + m.get("mem_extra", 0),
                     sub=sub, nvlink_mib=0 if ranks == 1 else 60000 * k_frac * B.bw_tbs, pcie_mib=300 + 2000 * idle_gap,
                     occupancy=sm * 0.4)
            if sg and i == sg[0] and m.get("cap_mhz"):
                L.clock_cap_mhz = m["cap_mhz"]
            if m.get("cool_gpu") is not None and i in m["cool_gpu"]:
                L.cooling = m.get("cooling", 1.6)
            if m.get("brake"):
                L.brake = True
            if m.get("power_limit"):
                L.power_limit_w = m["power_limit"]
            if m.get("hw_gpu") is not None and i in m["hw_gpu"]:
                L.hw_slowdown = True
            x = extra(t, i)
            if x:
                for k, v in x.items():
                    setattr(L, k, v)
            loads.append(L)
        loads += [Load(has_procs=False) for _ in range(n_gpus - ranks)]
        return _out(loads, hs, m, nsteps, got, t_wall, gap, data)

    def _out(loads, hs, m, nsteps, got, t_wall, gap=0.0, data=0.0):
        plist = []
        for i, w in enumerate(workers):
            w.cpu_s += (got / max(1, ranks)) * tick
            plist.append(w.sample(sm_util=loads[i].util * 100 if not m.get("other_proc") else None))
        op = m.get("other_proc")
        if op is not None:
            op.cpu_s += 0.5 * tick
            plist.append(op.sample())
        eng = None
        if engine and kind == "vllm":  # an embedding server: prompt tokens and requests
            eng = EngineSample(kind="vllm", url=f"http://127.0.0.1:8000/metrics", model="BAAI/bge-m3",
                               prompt_tokens_total=float(round(s.tokens * 180)), generation_tokens_total=0.0,
                               requests_finished_total=float(round(s.tokens)), requests_running=float(min(8, round(nsteps / tick * 0.01 + (nsteps > 0)))),
                               requests_waiting=0.0, kv_usage_ratio=0.0, tensor_parallel=1, data_parallel=1, pids=pids,
                               time_wall_s=round(t_wall - rng.uniform(0.005, 0.03), 6), **tree.engine_fields())
        elif engine:
            eng = EngineSample(kind="trainer", url=f"http://127.0.0.1:{port}/metrics", work_unit=work_unit,
                               generation_tokens_total=float(round(s.tokens)) if work_unit != "steps" else float(int(s.steps)),
                               requests_finished_total=float(int(s.steps)), tensor_parallel=1, data_parallel=ranks,
                               pids=pids, time_wall_s=round(t_wall - rng.uniform(0.005, 0.03), 6),
                               **tree.engine_fields())
        launch = None
        if ebpf:
            n = int(nsteps * kernels_per_step)
            jit = m.get("jitter", 0.0)
            tail = int(n * (0.03 if jit else 0.001))
            bk = {bucket_index(2800): int(n * 0.3), bucket_index(3600): int(n * 0.5), bucket_index(5200): int(n * 0.17)}
            mx = 9000
            for _ in range(min(40, tail)):
                v = int(rng.uniform(0.1, 1.0) * (jit * 1e9 * 3 + 40000))
                mx = max(mx, v)
                bk[bucket_index(v)] = bk.get(bucket_index(v), 0) + max(1, tail // 40)
            cnt = sum(bk.values())
            launch = (LaunchHist(api="cudaLaunchKernel", pid=workers[0].pid, count=cnt,
                                 sum_ns=int(cnt * 3800 + tail * jit * 1e9 * 1.5), max_ns=mx, buckets=bk),)
        if not psi:
            hs = type(hs)(cpu_pct=hs.cpu_pct, run_queue=hs.run_queue, cpus=hs.cpus, ctx_switches_total=hs.ctx_switches_total)
        return {"loads": loads, "procs": plist, "engine": eng, "host": hs, "pinned": tree.pinned(hs),
                "launch": launch, "engine_reason": None if engine else "no metrics endpoint for this job"}

    return scene.run(step)
