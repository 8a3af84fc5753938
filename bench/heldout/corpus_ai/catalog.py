"""One builder per trace and its truth.  Every reading comes from the simulation: a fault
changes the physics (a clock, a pool, a rate, a CPU share) and the readings follow."""
from __future__ import annotations
import math
import random
import zlib

from corpus_ai import Truth
from corpus_ai.hw import BOARDS, MODELS
from corpus_ai.host import CpuLoad
from corpus_ai.serve import Req, ServeSim
from corpus_ai.train import TrainSim
from corpus_ai.world import EngineJob, ProfileJob, Proc, TrainJob, World, container_id

GIB = 2**30
DAY = 86400.0
MONTH0 = 1_798_761_600.0   # 2027-01-01 UTC: the month the marketplace recorded


def seed(name):
    return zlib.crc32(name.encode())


def poisson(rng, lam):
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1


def ln(rng, med, sig, lo=1, hi=10**6):
    return int(max(lo, min(hi, rng.lognormvariate(math.log(med), sig))))


def arrivals(T0, rate, prompt, out, *, cached=0.0, specials=(), lora=()):
    """rate(tr) req/s; prompt(tr) and out(tr) -> (median, sigma); cached(tr) fraction."""
    specials = sorted(specials)
    state = {"i": 0}

    def gen(t0, dt, rng):
        tr = t0 - T0
        n = poisson(rng, rate(tr) * dt)
        reqs = []
        for _ in range(n):
            pm, ps = prompt(tr)
            om, os_ = out(tr)
            p = ln(rng, pm, ps, 8, 120000)
            c = cached(tr) if callable(cached) else cached
            reqs.append(Req(t0 + rng.random() * dt, p, ln(rng, om, os_, 1, 8000), cached=int(p * c * rng.uniform(0.8, 1.0))))
        while state["i"] < len(specials) and specials[state["i"]][0] < tr + dt:
            ts, p, o, nn, lp = specials[state["i"]]
            reqs.append(Req(T0 + ts, p, o, n=nn, lp=lp))
            state["i"] += 1
        reqs.sort(key=lambda r: r.arr)
        return reqs
    return gen


def const(v):
    return lambda tr: v


def step(base, val, t0, t1=1e9):
    return lambda tr: val if t0 <= tr < t1 else base


def ramp(base, val, t0, t1, t2=1e9):
    def f(tr):
        if tr < t0 or tr >= t2:
            return base
        if tr >= t1:
            return val
        x = (tr - t0) / (t1 - t0)
        if isinstance(base, tuple):
            return tuple(a + (b - a) * x for a, b in zip(base, val))
        return base + (val - base) * x
    return f


def pstep(base, val, t0, t1=1e9):
    """(median, sigma) that changes in a window."""
    return lambda tr: val if t0 <= tr < t1 else base


def make_world(name, board, n, *, tick=1.0, dur=360, cpus=32, ebpf="absent", gk=None, miss=0.01, drop=0.003):
    rng = random.Random(seed(name))
    start = MONTH0 + (seed(name + "#day") % (29 * 86400)) + 0.0
    start = float(int(start))
    w = World(name, rng, [BOARDS[board]] * n if isinstance(board, str) else [BOARDS[b] for b in board],
              tick_s=tick, duration_s=dur, start_wall=start, host_cpus=cpus, ebpf=ebpf,
              gpu_kwargs=gk, miss_p=miss, drop_p=drop)
    return w, rng, start


def procs_for(rng, gpus, name, cmd, mem, start, user="renter", base_pid=None):
    cid = container_id(rng)
    pid0 = base_pid or rng.randint(3000, 90000)
    return [Proc(pid0 + i * 3, g, name, cmd if len(gpus) == 1 else f"{cmd}", cid, mem, user=user,
                 start=start - rng.uniform(600, 20000)) for i, g in enumerate(gpus)]


def filler(w, rng, gpus, kind, start):
    """Other renters' containers on the other GPUs of the machine."""
    for g in gpus:
        if kind == "idle":
            prof = lambda t, g: (0.0, 0.0, 0.0, 0.0)
            mem = rng.uniform(1, 6) * GIB
            nm, cmd = "python3", "python3 -m ipykernel_launcher -f /root/.local/share/jupyter/runtime/kernel.json"
        elif kind == "diffusion":
            ph = rng.random() * 20

            def prof(t, g, ph=ph):
                x = ((t + ph) % 23.0)
                return (0.97, 0.9, 0.55, 0.35) if x < 17 else (0.05, 0.02, 0.0, 0.0)
            mem = rng.uniform(9, 14) * GIB
            nm, cmd = "python", "python main.py --listen 0.0.0.0 --port 8188"
        else:  # steady training of another renter
            def prof(t, g):
                return (0.93, 0.8, 0.45, 0.4)
            mem = rng.uniform(14, 22) * GIB
            nm, cmd = "python", "python train.py --config configs/sdxl_lora.yaml"
        w.add(ProfileJob((g,), procs_for(rng, (g,), nm, cmd, mem, start), prof, cpu=0.6))


def serving(name, *, cause=None, family="serving", board="h100sxm", n=1, gpus=None, model="llama3-8b",
            kind="vllm", tp=1, link="nvlink", rate=const(4.0), prompt=const((800, 0.8)), out=const((250, 0.7)),
            cached=0.0, specials=(), dur=360, tick=1.0, scrape=5.0, window=None, culprit=None, note="",
            max_seqs=128, budget=2048, pool=None, graphs=True, host_ms=2.5, spec_k=0, spec_cost=0.0,
            accept=None, bytes_factor=None, kv_factor=None, host_extra=None, jitter=None, ebpf="absent",
            load=None, gk=None, events=(), others="idle", intruder=None, cpus=32, max_len=8192,
            window_from=None, mem_util=0.9, port=8000, miss=0.01):
    w, rng, T0 = make_world(name, board, n, tick=tick, dur=dur, cpus=cpus, ebpf=ebpf, gk=gk, miss=miss)
    gpus = tuple(gpus or range(tp))
    b, m = BOARDS[board] if isinstance(board, str) else BOARDS[board[gpus[0]]], MODELS[model]
    kw = dict(kind=kind, tp=tp, gpus=gpus, max_seqs=max_seqs, budget=budget, pool_tokens=pool,
              graphs=graphs, host_ms=host_ms, spec_k=spec_k, spec_draft_cost=spec_cost, link=link,
              max_len=max_len, mem_util=mem_util,
              arrivals=arrivals(T0, rate, prompt, out, cached=cached, specials=specials),
              accept=(lambda t: accept(t - T0)) if accept else None,
              bytes_factor=(lambda t: bytes_factor(t - T0)) if bytes_factor else None,
              kv_factor=(lambda t: kv_factor(t - T0)) if kv_factor else None,
              host_extra=(lambda t: host_extra(t - T0)) if host_extra else None,
              launch_jitter=(lambda t: jitter(t - T0)) if jitter else None)
    sim = ServeSim(rng, b, m, **kw)
    cmds = {"vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {m.name} --tensor-parallel-size {tp} --port {port}",
            "sglang": f"python3 -m sglang.launch_server --model-path {m.name} --tp {tp} --port {port} --enable-metrics",
            "llamacpp": f"/app/llama-server -m /models/{m.name.split('/')[-1]}.gguf -ngl 99 -c {max_len} --metrics --port {port}",
            "tgi": f"text-generation-launcher --model-id {m.name} --num-shard {tp} --port {port}"}
    pname = {"vllm": "python3", "sglang": "python3", "llamacpp": "llama-server", "tgi": "text-generation"}[kind]
    procs = procs_for(rng, gpus, pname, cmds[kind], sim.mem_used, T0)
    url = f"http://172.17.0.{2 + seed(name) % 200}:{port}/metrics"
    job = w.add(EngineJob(sim, procs, url, scrape_s=scrape), watched=True)
    rest = [g for g in range(n) if g not in gpus]
    if others and rest:
        filler(w, rng, rest, others, T0)
    if intruder:
        g, t0, t1, prof, nm, cmd, mem = intruder
        w.add(ProfileJob((g,), procs_for(rng, (g,), nm, cmd, mem, T0 + t0), prof, start=T0 + t0, stop=T0 + t1, cpu=1.0))
    w.load_fn = (lambda t: load(t - T0)) if load else (lambda t: CpuLoad(1.0, 8))
    for ev in events:
        w.gpu_events.append(lambda t, world, ev=ev: ev(t - T0, world))
    frames = w.frames()
    win = None
    if window:
        win = (T0 + window[0], T0 + window[1])
    if window_from:
        win = window_from(frames, T0)
    return Truth(name, family, cause, culprit, win, kind, n, b.name, tick, note, frames[0].time_wall_s), frames


def training(name, *, cause=None, family="training", board="a100sxm", n=1, ranks=None, link="nvlink",
             step_tflop=200, grad_gb=2.0, tokens=16384, dur=360, tick=1.0, window=None, culprit=None, note="",
             data_s=None, ckpt_every=0, ckpt_s=20, eval_every=0, eval_s=15, overlap=0.6, comm_factor=1.0,
             rank_cpu=None, rank_slow=None, link_slow=None, rank_delay=None, tiny=None, load=None, gk=None, events=(),
             engine=True, ebpf="absent", others="idle", intruder=None, cpus=32, workers=4, host_frac=0.08,
             window_from=None, cmd="torchrun --nproc-per-node {n} train.py", mem_gb=None, prefetch=2, opt_s=0.03):
    w, rng, T0 = make_world(name, board, n, tick=tick, dur=dur, cpus=cpus, ebpf=ebpf, gk=gk)
    ranks = tuple(ranks or range(n))
    b = BOARDS[board] if isinstance(board, str) else BOARDS[board[ranks[0]]]
    sim = TrainSim(rng, b, len(ranks), step_tflop=step_tflop, grad_gb=grad_gb, link=link, overlap=overlap,
                   tokens_per_step=tokens, data_s=(lambda t: data_s(t - T0)) if data_s else None,
                   ckpt_every=ckpt_every, ckpt_s=ckpt_s, eval_every=eval_every, eval_s=eval_s,
                   comm_factor=comm_factor, host_frac=host_frac, prefetch=prefetch, opt_s=opt_s,
                   rank_cpu=(lambda t, r: rank_cpu(t - T0, r)) if rank_cpu else None,
                   rank_slow=(lambda t, r: rank_slow(t - T0, r)) if rank_slow else None,
                   link_slow=(lambda t, r: link_slow(t - T0, r)) if link_slow else None,
                   rank_delay=(lambda t, r: rank_delay(t - T0, r)) if rank_delay else None,
                   tiny=(lambda t: tiny(t - T0)) if tiny else None)
    mem = (mem_gb or b.mem_gib * 0.8) * GIB
    procs = procs_for(rng, ranks, "python3", cmd.format(n=len(ranks)), mem, T0)
    url = f"http://172.17.0.{2 + seed(name) % 200}:9400/metrics" if engine else None
    w.add(TrainJob(sim, procs, url=url, scrape_s=5.0, workers=workers), watched=True)
    rest = [g for g in range(n) if g not in ranks]
    if others and rest:
        filler(w, rng, rest, others, T0)
    if intruder:
        g, t0, t1, prof, nm, cmd2, memb = intruder
        w.add(ProfileJob((g,), procs_for(rng, (g,), nm, cmd2, memb, T0 + t0), prof, start=T0 + t0, stop=T0 + t1, cpu=1.0))
    w.load_fn = (lambda t: load(t - T0)) if load else (lambda t: CpuLoad(1.0, 8))
    for ev in events:
        w.gpu_events.append(lambda t, world, ev=ev: ev(t - T0, world))
    frames = w.frames()
    win = (T0 + window[0], T0 + window[1]) if window else None
    if window_from:
        win = window_from(frames, T0)
    return Truth(name, family, cause, culprit, win, "trainer" if engine else "none", n, b.name, tick, note,
                 frames[0].time_wall_s), frames


def job(name, *, cause=None, family="jobs", board="h100sxm", n=1, profile=None, dur=360, tick=1.0, window=None,
        culprit=None, note="", load=None, ebpf="absent", others="idle", cpus=16, cmd="python3 run.py", mem_gb=20,
        intruder=None, gk=None, events=(), window_from=None, stop=None, gpus=(0,)):
    w, rng, T0 = make_world(name, board, n, tick=tick, dur=dur, cpus=cpus, ebpf=ebpf, gk=gk)
    b = BOARDS[board]
    procs = procs_for(rng, gpus, "python3", cmd, mem_gb * GIB, T0)
    pj = ProfileJob(gpus, procs, lambda t, g: profile(t - T0, g), cpu=1.0,
                    stop=(T0 + stop) if stop else 1e18)
    w.add(pj, watched=True)
    rest = [g for g in range(n) if g not in gpus]
    if others and rest:
        filler(w, rng, rest, others, T0)
    if intruder:
        g, t0, t1, prof, nm, cmd2, memb = intruder
        w.add(ProfileJob((g,), procs_for(rng, (g,), nm, cmd2, memb, T0 + t0), prof, start=T0 + t0, stop=T0 + t1, cpu=1.0))
    w.load_fn = (lambda t: load(t - T0)) if load else (lambda t: CpuLoad(1.0, 8))
    for ev in events:
        w.gpu_events.append(lambda t, world, ev=ev: ev(t - T0, world))
    frames = w.frames()
    win = (T0 + window[0], T0 + window[1]) if window else None
    if window_from:
        win = window_from(frames, T0)
    return Truth(name, family, cause, culprit, win, "none", n, b.name, tick, note, frames[0].time_wall_s), frames


# ------------------------------------------------------------------ fault physics helpers
def throttle_window(gpus=None, after=60, min_len=20):
    """The window is when the clocks were really cut (read from the simulation itself)."""
    def f(frames, T0):
        on = [fr.time_wall_s for fr in frames if fr.time_wall_s - T0 >= after and any(
            g.throttle and any(r != "power cap" or True for r in g.throttle) and g.sm_clock_mhz is not None
            and (gpus is None or g.index in gpus) and _cut(g) for g in fr.gpus)]
        if not on:
            return None
        return (on[0], on[-1])
    return f


def _cut(g):
    from corpus_ai.hw import BOARDS as B
    mx = next(b.max_clock for b in B.values() if b.name == g.name)
    return g.sm_clock_mhz < 0.88 * mx and (g.util_gpu_pct or 0) > 20


def limit_event(gpu_ids, t0, watts, t1=1e9):
    def ev(tr, world):
        for i in gpu_ids:
            g = world.gpus[i]
            if not hasattr(g, "_lim0"):
                g._lim0 = g.limit
            g.limit = watts if t0 <= tr < t1 else g._lim0
    return ev


def brake_event(gpu_ids, periods, factor, reason):
    def ev(tr, world):
        on = any(a <= tr < b for a, b in periods)
        for i in gpu_ids:
            world.gpus[i].brake = factor if on else 1.0
            world.gpus[i].brake_reason = reason
    return ev


def mining(busy=0.99):
    return lambda t, g: (busy, 0.96, 0.0, 0.75)


def contention(t0, t1, cpuset=8, neighbours=10.0, bg=4.0, quota=None, base_nb=0.5):
    def f(tr):
        on = t0 <= tr < t1
        return CpuLoad(1.0, cpuset, neighbours if on else base_nb, bg + (neighbours * 0.3 if on else 0),
                       quota)
    return f


def quota_load(t0, t1, q_before, q_after, cpuset=16, bg=2.0):
    return lambda tr: CpuLoad(1.0, cpuset, 0.3, bg, q_after if t0 <= tr < t1 else q_before)


def jitter_load(t0, t1, cpuset=8, burst=0.6):
    return lambda tr: CpuLoad(1.0, cpuset, 0.6, 3.0, None, burst if t0 <= tr < t1 else 0.0)


def chat(r=4.0):
    return dict(rate=const(r), prompt=const((900, 0.9)), out=const((280, 0.7)))


from corpus_ai.catalog_list import BUILDERS  # noqa: E402
