"""Turn a scenario (a dict of time functions) into frames: serving boxes, training jobs,
plain CUDA programs.  Each tick: the workload runs dt seconds under the conditions of that
moment, and the box writes what NVML, the engine page, /proc and (when on) eBPF would say."""

from __future__ import annotations

import math

from gputop.schema import EngineSample, PinnedSample, ThreadSample

from .box import Box, HostLoad, launch_hist
from .hw import GIB, Act, Proc, settle
from .serving import MODELS, Engine, Req, arrivals

DOWN = "engine unreachable: <urlopen error [Errno 111] Connection refused>"


def win_(t, a, b):
    return a <= t < b


def _noise(rng, v, sd=0.02):
    return max(0.0, v * (1 + rng.gauss(0, sd)))


def _ctx(cfg, box):
    return dict(rng=box.rng, fmax=box.spec.fmax)


def _limits(cfg, t, g, box, prev):
    """SM clock factor of GPU g now (from its limit, or the power cap at last tick's mix)."""
    lim = cfg.get("limit", lambda t, g: None)(t, g)
    cap = cfg.get("cap", lambda t, g: None)(t, g)
    a = prev[g]
    f, _, _ = settle(box.spec, a.busy, a.sm, a.tensor, a.dram, cap,
                     lim[0] if lim else None, lim[1] if lim else "")
    return f / box.spec.fmax, lim, cap


def host_default(box, busy_cores=6.0):
    return HostLoad(cpu_pct=100 * busy_cores / box.cpus, psi=0.8, runq=busy_cores * 0.6 + 1,
                    ctx_per_s=15000 + 800 * busy_cores, launcher_invol_per_s=40)


def _launches(box, pid, steps, graphs, tail, rng, kernels_per_step=9):
    frac, ms = tail
    out = []
    if graphs:
        out.append(launch_hist("cudaGraphLaunch", pid, int(steps), 9.0, rng, 0.3, frac, ms))
        out.append(launch_hist("cuLaunchKernel", pid, int(steps * kernels_per_step), 3.4, rng,
                               0.35, frac, ms))
    else:
        out.append(launch_hist("cuLaunchKernel", pid, int(steps * 420), 3.8, rng, 0.35, frac, ms))
        out.append(launch_hist("cudaLaunchKernel", pid, int(steps * 160), 2.6, rng, 0.35, frac, ms))
    return out


def _offcpu(box, pid, invol, tail, rng):
    frac, ms = tail
    n_short = int(300 * box.tick_s)
    h = [launch_hist("off-cpu", pid, n_short, 60.0, rng, 0.8)]
    if invol > 0:
        h.append(launch_hist("off-cpu", pid, int(invol), max(1.5, ms * 0.8) * 1000, rng, 0.5))
    buckets, total, mx, cnt = {}, 0, 0, 0
    for x in h:
        if x is None:
            continue
        for k, v in x.buckets.items():
            buckets[k] = buckets.get(k, 0) + v
        total += x.sum_ns
        mx = max(mx, x.max_ns)
        cnt += x.count
    from gputop.schema import LaunchHist
    return LaunchHist(api="off-cpu", pid=pid, count=cnt, sum_ns=total, max_ns=mx, buckets=buckets)


# ------------------------------------------------------------------------- serving
def run_serving(cfg, rng, start_wall):
    box = Box(cfg["gpu"], cfg["n"], cfg["tick"], start_wall, rng, cpus=cfg.get("cpus", 64),
              ebpf=cfg.get("ebpf", False), ebpf_listed=cfg.get("ebpf_listed", False),
              proc_sm=cfg.get("proc_sm", True), engine_expected=True)
    tick, dur = cfg["tick"], cfg["dur"]
    specs = cfg["engines"]
    engines = []
    pid = 2000 + rng.randrange(40000)
    procs = []  # (engine index, Proc)
    for k, es in enumerate(specs):
        pids = [pid + 1 + i for i in range(1 + es.get("tp", 1))]
        pid += 40
        e = _make_engine(es, box, rng, pids, start_wall, 8000 + k)
        engines.append(e)
        for r, g in enumerate(es["gpus"]):
            name = {"vllm": "VLLM::EngineCore" if e.tp == 1 else f"VLLM::Worker_TP{r}",
                    "sglang": f"sglang::scheduler_TP{r}", "llamacpp": "llama-server"}[e.kind]
            procs.append((k, Proc(pids[min(r + 1, len(pids) - 1)], g, name, es.get("cmd", _cmd(es, e)),
                                  e.mem_used - int(0.5 * GIB), ppid=pids[0],
                                  start=start_wall - 3600 * (1 + k))))
    others = cfg.get("others", {})  # gpu -> Proc of a second tenant
    prev = [Act() for _ in range(box.n)]
    last_sample = [None] * len(engines)
    last_scrape = [-1e9] * len(engines)
    scrape = cfg.get("scrape_s", tick)
    reload = cfg.get("reload")
    t = 0.0
    host_fn = cfg.get("host", lambda t: host_default(box, 4 + 2 * len(engines)))
    while t < dur - 1e-9:
        acts = [Act() for _ in range(box.n)]
        mem = [int(0.0) for _ in range(box.n)]
        plist, launch = [], []
        hs = cfg.get("host_share", lambda t: 1.0)(t)
        jit = cfg.get("jitter", lambda t: (0.0, 0.0))(t)
        engine_out, reason, age = None, None, 0.0
        for k, (e, es) in enumerate(zip(engines, specs)):
            gpus = es["gpus"]
            down = reload and k == 0 and reload[0] <= t < reload[1]
            if reload and k == 0 and abs(t - reload[1]) < tick / 2 + 1e-9:
                e = engines[k] = _make_engine(es, box, rng, [p + 7 for p in e.pids], start_wall,
                                              8000 + k)
                for _, p in procs:
                    if p.gpu in gpus:
                        p.pid += 7
                        p.start = start_wall + t
                        p.cpu_s = 0.0
                last_scrape[k] = -1e9
            if down:
                reason = DOWN
                into = t - reload[0]
                for g in gpus:
                    if into < 12:
                        mem[g] = 0
                    else:
                        loaded = min(1.0, (into - 12) / 25)
                        mem[g] = int(e.weights * loaded + (e.mem_used - e.weights) *
                                     (1.0 if into > 45 else 0.0))
                        acts[g] = Act(busy=0.35 if into > 45 else 0.02,
                                      sm=0.04 if into > 45 else 0.0, occ=0.01,
                                      dram=0.02 if into > 45 else 0.15 * loaded)
                    plist += [p.sample(None, 1.0, tick) for kk, p in procs
                              if kk == k and p.gpu == g and into >= 12]
                continue
            clocks = [_limits(cfg, t, g, box, prev)[0] for g in gpus]
            cmin = min(clocks)
            share = cfg.get("gpu_share", lambda t, g: 1.0)(t, gpus[0])
            if "accept" in es:
                e.accept_now = es["accept"](t)
            rate = es["rate"](t)
            if "users" in es:  # closed loop: each user sends again after a think time
                outstanding = len(e.running) + len(e.waiting)
                rate = max(0.0, es["users"](t) - outstanding) / es.get("think", 2.0)
            if "tiny" in cfg:
                e.graphs = not win_(t, *cfg["tiny"])
                e.host_ms = es.get("kw", {}).get("host_ms", 3.0) * (4.0 if not e.graphs else 1.0)
            arr = arrivals(rng, t, tick, rate,
                           es["prompt_t"](t) if "prompt_t" in es else es["prompt"],
                           es["out_t"](t) if "out_t" in es else es["out"],
                           es["cached_t"](t) if "cached_t" in es else es.get("cached", 0.0))
            for st_rate, st_prompt, st_out in es.get("streams", ()):  # a second tenant
                arr += arrivals(rng, t, tick, st_rate(t), st_prompt, st_out)
            for extra in es.get("inject", lambda t, dt: [])(t, tick):
                arr.append(extra)
            slow = cfg.get("slow", lambda t: 1.0)(t) if len(gpus) > 1 else 1.0
            a = e.advance(t, tick, arr, host_share=hs, clock=cmin, gpu_share=share, slow=slow,
                          host_jitter_ms=cfg.get("host_jitter_ms", lambda t: 0.0)(t))
            own = a.busy
            for r, g in enumerate(gpus):
                b = a.busy * (1 + rng.gauss(0, 0.01)) * es.get("rank_skew", [1.0] * 8)[r]
                comp = 1.0
                if len(gpus) > 1 and (clocks[r] > cmin * 1.05 or slow > 1.0):
                    # waits in the collective for the slowest rank: busy (NCCL spins), few SMs
                    comp = cmin / clocks[r] if clocks[r] > cmin * 1.05 else 1.0 / slow
                    if slow > 1.0 and r == es.get("slow_rank", -1):
                        comp = 1.0
                    b = min(1.0, a.busy * (slow if slow > 1 else 1.0))
                sm = b * comp * (a.sm / max(a.busy, 1e-9)) + b * (1 - comp) * 0.11
                acts[g] = Act(busy=min(1.0, b), sm=min(0.99, sm), occ=a.occ * comp + 0.02 * (1 - comp),
                              tensor=a.tensor * comp, dram=a.dram * (0.6 + 0.4 * comp),
                              nvlink_mib=a.nvlink_mib)
                mem[g] += e.mem_used
            if box.ebpf:
                steps = e.c["steps"] - getattr(e, "_steps_prev", 0.0)
                e._steps_prev = e.c["steps"]
                launch += _launches(box, e.pids[-1], steps, e.graphs, jit, rng)
                invol = jit[0] * steps * 2 if jit[0] else 0
                launch.append(_offcpu(box, e.pids[-1], invol, jit, rng))
            for kk, p in procs:
                if kk == k:
                    ag = acts[p.gpu]
                    plist.append(p.sample(ag.busy * 100 if box.proc_sm else None,
                                          0.97 * hs + 0.1, tick, ag.dram * 90))
            if t - last_scrape[k] >= scrape - 1e-9 or last_sample[k] is None:
                last_sample[k] = e.sample(start_wall + t + tick * 0.8, box.mono0 + t + tick * 0.8)
                last_scrape[k] = t
            if k == 0:
                engine_out, age = last_sample[k], t - last_scrape[k]
        for g, other in others.items():
            o = other["act"](t)
            if o is None:
                continue
            a = acts[g]
            q = o["busy"]
            acts[g] = Act(busy=min(1.0, a.busy + q * (1 - a.busy * 0.3)), sm=min(0.99, a.sm + q * o["sm"]),
                          occ=a.occ + q * 0.2, tensor=min(0.95, a.tensor + q * o.get("tensor", 0)),
                          dram=min(0.93, a.dram + q * o.get("dram", 0.2)), nvlink_mib=a.nvlink_mib)
            mem[g] += o["mem"]
            plist.append(other["proc"].sample(q * 100 if box.proc_sm else None, o.get("cpu", 1.0), tick))
        for g in range(box.n):
            acts[g].cap_w = cfg.get("cap", lambda t, g: None)(t, g)
            lim = cfg.get("limit", lambda t, g: None)(t, g)
            if lim:
                acts[g].limit_mhz, acts[g].limit_reason = lim
            acts[g].temp_floor = cfg.get("temp_floor", lambda t, g: None)(t, g)
            mem[g] += int(0.5 * GIB) if mem[g] else 0
        if len(engines) > 1:
            engine_out = _merge([s for s in last_sample if s is not None])
        box.emit(t, acts, mem, plist, engine_out, reason, age, host_fn(t), launch)
        prev = acts
        t += tick
    return box.frames


def _merge(samples):
    """Several engines found on one box: the page sum, each a replica (engine_merge's shape)."""
    import dataclasses
    tot = {}
    for f in ("generation_tokens_total", "prompt_tokens_total", "prompt_tokens_cached_total",
              "requests_finished_total", "requests_running", "requests_waiting",
              "preemptions_total"):
        vals = [getattr(s, f) for s in samples if getattr(s, f) is not None]
        tot[f] = float(sum(vals)) if vals else None
    reps = tuple(dataclasses.replace(s, replica=f"url={s.url}") for s in samples)
    first = samples[0]
    return dataclasses.replace(first, **tot, replicas=reps, histograms=(),
                               gpu_indices=(), pids=tuple(p for s in samples for p in s.pids),
                               kv_usage_ratio=sum(s.kv_usage_ratio or 0 for s in samples) / len(samples))


def _make_engine(es, box, rng, pids, start_wall, port):
    kw = dict(es.get("kw", {}))
    return Engine(es["kind"], MODELS[es["model"]], box.spec, es.get("tp", 1), rng,
                  gpus=es["gpus"], pids=pids, start_wall=start_wall, port=port, **kw)


def _cmd(es, e):
    if e.kind == "vllm":
        return f"vllm serve {e.model.name} --tensor-parallel-size {e.tp} --port {e.port}"
    if e.kind == "sglang":
        return f"python -m sglang.launch_server --model-path {e.model.name} --tp {e.tp} --enable-metrics"
    return f"llama-server -m /models/{e.model.name} -c {e.pool} -np {e.max_seqs} -ngl 99 --metrics"


# ------------------------------------------------------------------------- training
def run_training(cfg, rng, start_wall):
    """Data-parallel / pipeline training: each step every rank computes, then all meet in the
    gradient all-reduce (NCCL kernels spin on the GPU while a rank waits), and the next step
    needs a batch from the loader queue."""
    box = Box(cfg["gpu"], cfg["n"], cfg["tick"], start_wall, rng, cpus=cfg.get("cpus", 96),
              ebpf=cfg.get("ebpf", False), ebpf_listed=cfg.get("ebpf_listed", False),
              proc_sm=cfg.get("proc_sm", True), engine_expected=bool(cfg.get("counter")))
    tick, dur, n = cfg["tick"], cfg["dur"], cfg["n"]
    step_s, comm_s = cfg["step_s"], cfg.get("comm_s", 0.0)
    tensor, dram = cfg.get("tensor", 0.62), cfg.get("dram", 0.32)
    mem_g = int(cfg.get("mem_frac", 0.82) * box.spec.mem_total)
    base = 5000 + rng.randrange(30000)
    procs = [Proc(base + 1 + g, g, "python3", cfg.get("cmd", "torchrun --nproc_per_node=%d train.py" % n),
                  mem_g, user="ml", ppid=base, start=start_wall - 5000) for g in range(n)]
    q = cfg.get("prefetch", 8.0)
    q_max = q
    samples_done = steps_done = 0.0
    counter = cfg.get("counter")  # (unit, update every s)
    last_pub, pub_val = -1e9, (0.0, 0.0)
    prev = [Act() for _ in range(n)]
    tree_cpu, invol, vol = 0.0, 0, 0
    threads = [ThreadSample(base + 1 + g, base + 1 + g, "python3", 0.0) for g in range(min(n, 2))]
    workers = cfg.get("workers", 8)
    t = 0.0
    while t < dur - 1e-9:
        phase = cfg.get("phase", lambda t: "train")(t)
        clocks = [_limits(cfg, t, g, box, prev)[0] for g in range(n)]
        heavy = [cfg.get("heavier", lambda t, g: 1.0)(t, g) for g in range(n)]
        hs = cfg.get("host_share", lambda t: 1.0)(t)
        comp = [step_s * heavy[g] * (0.25 + 0.75 / clocks[g]) for g in range(n)]
        link = cfg.get("link", lambda t: 1.0)(t)
        T = max(comp) + comm_s * link
        host_t = cfg.get("host_ms", 4.0) * 1e-3 * cfg.get("kernels", 1.0) / hs
        T = max(T, host_t) + 0.1 * min(T, host_t)
        produce = cfg.get("data", lambda t: 1e9)(t)  # batches per second the loader makes
        acts = []
        if phase in ("ckpt", "idle", "load"):
            steps = 0.0
            for g in range(n):
                acts.append(Act(busy=0.02 if phase != "load" else 0.15, sm=0.01, dram=0.01,
                                pcie_mib=2400.0 if phase == "ckpt" else 0.0))
        else:
            frac = 1.0 if phase == "train" else 0.55
            want = tick / T * frac
            other = cfg.get("other")
            o_now = other["act"](t) if other else None
            if o_now is not None:  # time slices go to the other process too
                want *= max(0.1, 1 - 0.9 * o_now["busy"])
            avail = q + produce * tick
            steps = min(want, avail)
            q = min(q_max, avail - steps)
            for g in range(n):
                busy = steps * (T - (0 if n > 1 else comm_s * link)) / tick
                cfrac = steps * comp[g] / tick
                busy = max(busy, cfrac)
                e_t = tensor * (0.5 if phase == "eval" else 1.0)
                s = cfg.get("sm_scale", 1.0)
                a = Act(busy=min(1.0, busy), sm=min(0.99, cfrac * 0.93 * s + (busy - cfrac) * 0.12),
                        occ=cfrac * 0.45 * s, tensor=min(0.95, cfrac * e_t * s),
                        dram=min(0.93, cfrac * dram + (busy - cfrac) * 0.04),
                        nvlink_mib=steps * 9000 / tick if n > 1 else 0.0)
                if cfg.get("sawtooth"):
                    k = max(1, int(round(6 * tick)))
                    a.samples = tuple(100.0 if rng.random() < a.busy else rng.uniform(0, 30)
                                      for _ in range(k))
                acts.append(a)
        other = cfg.get("other")
        plist = []
        for g in range(n):
            lim = cfg.get("limit", lambda t, g: None)(t, g)
            if lim:
                acts[g].limit_mhz, acts[g].limit_reason = lim
            acts[g].cap_w = cfg.get("cap", lambda t, g: None)(t, g)
            acts[g].temp_floor = cfg.get("temp_floor", lambda t, g: None)(t, g)
        mem = [mem_g + int(0.5 * GIB)] * n
        if other:
            o = other["act"](t)
            g = other["gpu"]
            if o is not None:
                a = acts[g]
                qq = o["busy"]
                acts[g] = Act(busy=min(1.0, a.busy * (1 - qq) + qq), sm=a.sm * (1 - qq) + qq * o["sm"],
                              occ=a.occ, tensor=a.tensor * (1 - qq) + qq * o.get("tensor", 0.3),
                              dram=a.dram * (1 - qq) + qq * o.get("dram", 0.3))
                mem[g] += o["mem"]
                plist.append(other["proc"].sample(qq * 100 if box.proc_sm else None, 1.0, tick))
        for g in range(n):
            plist.append(procs[g].sample(acts[g].busy * 100 if box.proc_sm else None,
                                         0.9 * hs + 0.1, tick))
        steps_done += steps
        samples_done += steps * cfg.get("batch", 256)
        engine = None
        if counter and t - last_pub >= counter[1] - 1e-9:
            last_pub, pub_val = t, (samples_done, steps_done)
        if counter:
            engine = EngineSample(kind="trainer", url="http://127.0.0.1:9100/metrics",
                                  generation_tokens_total=float(round(pub_val[0])),
                                  requests_finished_total=float(round(pub_val[1])),
                                  work_unit=counter[0], pids=tuple(p.pid for p in procs),
                                  time_wall_s=round(start_wall + last_pub + 0.5, 3),
                                  time_mono_s=round(box.mono0 + last_pub + 0.5, 3))
        host = cfg.get("host", lambda t: None)(t)
        loader_busy = min(workers * n, produce * cfg.get("decode_cpu_s", 0.2) * n) \
            if produce < 1e8 else workers * n * 0.3
        if host is None:
            cores = loader_busy + n * (0.9 * hs + 0.1)
            host = HostLoad(cpu_pct=min(100, 100 * cores / box.cpus), psi=max(0.3, 30 * (cores / box.cpus - 0.8)),
                            runq=cores * 0.7 + 1, ctx_per_s=20000 + 3000 * cores,
                            launcher_invol_per_s=30)
        tree_cpu += (loader_busy + n * (0.9 * hs + 0.1)) * tick
        invol += int((60 + 1500 * (1 - hs)) * tick * n)
        vol += int(4000 * tick * n)
        threads = [ThreadSample(th.tid, th.pid, th.name, round(th.cpu_s + (0.9 * hs + 0.1) * tick, 2))
                   for th in threads[:2]]
        workers_ts = tuple(ThreadSample(base + 100 + w, base + 100 + w, "pt_data_worker",
                                        round(t * min(1.0, loader_busy / max(1, workers * n)) + 1, 2))
                           for w in range(min(6, workers)))
        pinned = PinnedSample(label="train.py", pattern="train.py", root_pids=(base,),
                              tree_pids=tuple([base] + [p.pid for p in procs]),
                              cpu_s=round(tree_cpu, 2), ctx_voluntary=vol, ctx_involuntary=invol,
                              threads=tuple(threads) + workers_ts, cores=tuple(range(box.cpus)),
                              cpu_pressure_some_pct=host.psi, run_queue=int(host.runq)) \
            if cfg.get("pinned") else None
        launch = []
        if box.ebpf:
            jit = cfg.get("jitter", lambda t: (0.0, 0.0))(t)
            for g in range(min(n, 2)):
                launch.append(launch_hist("cuLaunchKernel", procs[g].pid, int(steps * 900 * cfg.get("kernels", 1.0)),
                                          3.9, rng, 0.35, *jit))
                launch.append(launch_hist("cudaLaunchKernel", procs[g].pid, int(steps * 300), 2.8,
                                          rng, 0.35, *jit))
                launch.append(_offcpu(box, procs[g].pid, jit[0] * steps * 300, jit, rng))
        box.emit(t, acts, mem, plist, engine, None, t - last_pub, host, launch, pinned=pinned)
        prev = acts
        t += tick
    return box.frames


# ------------------------------------------------------------------------- CUDA programs
def run_program(cfg, rng, start_wall):
    """A plain CUDA program (benchmark, simulation, notebook): its phases say what each GPU
    does; no engine, no throughput counter."""
    box = Box(cfg["gpu"], cfg["n"], cfg["tick"], start_wall, rng, cpus=cfg.get("cpus", 32),
              ebpf=cfg.get("ebpf", False), ebpf_listed=cfg.get("ebpf_listed", False),
              proc_sm=cfg.get("proc_sm", True), no_gpm_reason=None)
    tick, dur, n = cfg["tick"], cfg["dur"], cfg["n"]
    base = 9000 + rng.randrange(30000)
    procs = [Proc(base + g, g, cfg.get("pname", "python3"), cfg.get("cmd", "python bench.py"),
                  int(cfg.get("mem", 20) * GIB), user=cfg.get("user", "dev"), ppid=base - 1,
                  start=start_wall - 600) for g in range(n)]
    others = cfg.get("others", {})
    t = 0.0
    while t < dur - 1e-9:
        acts, mem, plist, launch = [], [], [], []
        hs = cfg.get("host_share", lambda t: 1.0)(t)
        for g in range(n):
            d = dict(cfg["act"](t, g))
            for k in ("busy", "sm", "tensor", "dram"):
                d[k] = min(0.99 if k != "busy" else 1.0, _noise(rng, d.get(k, 0.0), 0.015))
            a = Act(busy=d["busy"], sm=d["sm"], occ=d.get("occ", d["sm"] * 0.4), tensor=d["tensor"],
                    dram=d["dram"], nvlink_mib=d.get("nvlink", 0.0))
            lim = cfg.get("limit", lambda t, g: None)(t, g)
            if lim:
                a.limit_mhz, a.limit_reason = lim
            a.cap_w = cfg.get("cap", lambda t, g: None)(t, g)
            a.temp_floor = cfg.get("temp_floor", lambda t, g: None)(t, g)
            m = int(d.get("mem", cfg.get("mem", 20)) * GIB)
            if g in others:
                o = others[g]["act"](t)
                if o is not None:
                    qq = o["busy"]
                    a.busy = min(1.0, a.busy * (1 - qq) + qq)
                    a.sm = a.sm * (1 - qq) + qq * o["sm"]
                    a.tensor = a.tensor * (1 - qq) + qq * o.get("tensor", 0.2)
                    a.dram = a.dram * (1 - qq) + qq * o.get("dram", 0.2)
                    m += o["mem"]
                    plist.append(others[g]["proc"].sample(qq * 100 if box.proc_sm else None, 1.0, tick))
            acts.append(a)
            procs[g].mem = m
            mem.append(m + int(0.5 * GIB))
            plist.append(procs[g].sample(a.busy * 100 if box.proc_sm else None, 0.95 * hs + 0.05, tick))
            if box.ebpf and g < 2:
                jit = cfg.get("jitter", lambda t: (0.0, 0.0))(t)
                rate = d.get("launch_per_s", 2000)
                launch.append(launch_hist("cudaLaunchKernel", procs[g].pid, int(rate * tick), 2.7,
                                          rng, 0.3, *jit))
                launch.append(_offcpu(box, procs[g].pid, jit[0] * rate * tick, jit, rng))
        host = cfg.get("host", lambda t: HostLoad(cpu_pct=100 * (n + 1) / box.cpus, psi=0.4,
                                                  runq=n + 1.5, ctx_per_s=9000))(t)
        box.emit(t, acts, mem, plist, None, None, 0.0, host, launch)
        t += tick
    return box.frames
