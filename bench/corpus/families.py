"""The traces: each a scene built from physics, with its truth.

Every trace starts with at least a minute of noisy healthy operation (Poisson arrivals with
a wandering rate and bursts, log-normal lengths, power-cap clock wobble), then - for the
pathology traces - one true cause for a window, usually followed by recovery.  A builder
returns the finished scene plus the window in scene seconds; the window is the time the
cause acts (for causes with thermal inertia: the time the throttle actually binds,
read back from the frames).  Seeds make every trace deterministic.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bench.corpus import workload as W
from bench.corpus.cuda import CudaProc, Intruder, Phase
from bench.corpus.llm import MODELS
from bench.corpus.scene import Scene
from bench.corpus.serving import Engine, EngineConfig
from bench.corpus.training import TrainConfig, Trainer

GIB = 2 ** 30
L8 = "meta-llama/Llama-3.1-8B-Instruct"
Q7 = "Qwen/Qwen2.5-7B-Instruct"
L70 = "meta-llama/Llama-3.1-70B-Instruct"
Q72 = "Qwen/Qwen2.5-72B-Instruct"
Q32 = "Qwen/Qwen2.5-32B-Instruct"
L13 = "meta-llama/Llama-2-13b-chat-hf"


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    engine: str | None  # "vllm" | "sglang" | "trainer" | None
    gpus: int
    gpu_model: str
    cause: str | None  # None: healthy
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None  # wall seconds (start, end) of the pathology
    note: str
    interval_s: float = 1.0
    duration_s: float = 0.0
    seed: int = 0
    ebpf: bool = False
    pinned: bool = False


@dataclass
class Built:
    scene: Scene
    window: tuple[float, float] | None  # scene seconds
    refine: object = None  # frames -> (t0, t1) scene seconds, when the window is physical


# ---------------------------------------------------------------------- helpers

def serve(seed: int, spec, n_gpus: int, dur: float, kind: str, model: str, rate: float,
          lengths: W.Lengths | None = None, gpus=None, scenario=None, extra=(), interval=1.0,
          ebpf=False, cpus=64, bursts=45.0, wander=0.15, pointed=True, pid=None, scene=None,
          port=None, **cfg_kw):
    """A scene (or an existing one) with one engine serving Poisson traffic."""
    sc = scene or Scene(seed, dur, spec, n_gpus, interval=interval, cpus=cpus, ebpf=ebpf)
    rng = random.Random(seed * 17 + (pid or 0) + 3)
    shape = W.RateShape(base=rate, duration=dur, burst_every_s=bursts, scenario=scenario,
                        wander_sigma=wander).build(rng)
    reqs = W.requests(rng, W.arrivals(rng, shape, 0.0, dur), lengths or W.Lengths()) + list(extra)
    if port is None:
        port = 8000 if kind == "vllm" else 30000
    cfg = EngineConfig(kind, MODELS[model], tuple(gpus if gpus is not None else range(n_gpus)),
                       port=port, **cfg_kw)
    if kind == "sglang":
        cfg.host_base_s = 0.9e-3
        cfg.overlap = 0.85  # the overlap scheduler hides most CPU work
        cfg.max_num_seqs = cfg_kw.get("max_num_seqs", 256)
    pid = pid or 2100 + (seed * 37) % 30000
    e = Engine(sc, cfg, reqs, pid, rng=random.Random(seed * 5 + pid))
    act = sc.add_engine(cfg, [e], pointed=pointed)
    return sc, e, act


def oneshot(t: float, prompt: int, out: int, max_tokens: int, **kw) -> W.ClientReq:
    return W.ClientReq(t, prompt, out, max_tokens, **kw)


def series(rng, t0: float, t1: float, every: float, make) -> list:
    out = []
    t = t0
    while t < t1:
        out.append(make(t))
        t += every * rng.uniform(0.85, 1.15)
    return out


def window_where(gpu: int, pred):
    """Window refinement: the span of frames where pred(gpu sample) holds."""
    def refine(frames, wall0):
        hits = [f.time_wall_s - wall0 for f in frames if pred(f.gpus[gpu])]
        return (hits[0], hits[-1]) if hits else None
    return refine


def ramp(t0: float, t1: float, a: float, b: float):
    def f(t):
        if t <= t0:
            return a
        if t >= t1:
            return b
        return a + (b - a) * (t - t0) / (t1 - t0)
    return f


def train_scene(seed, spec, n_gpus, dur, cfg: TrainConfig, interval=1.0, counter=False,
                pinned=False, batch_cost_fn=None, cpus=96, pid=None, scene=None):
    sc = scene or Scene(seed, dur, spec, n_gpus, interval=interval, cpus=cpus)
    pid = pid or 5200 + (seed * 53) % 20000
    tr = Trainer(sc, cfg, pid, random.Random(seed * 11 + 5), batch_cost_fn=batch_cost_fn)
    sc.add_trainer(tr, counter_url="http://127.0.0.1:9464/metrics" if counter else None,
                   pinned=pinned)
    return sc, tr


def llm_train_cfg(gpus, mode="ddp", **kw) -> TrainConfig:
    base = dict(gpus=tuple(gpus), mode=mode, compute_s=1.9, micro=4, tensor=0.56, sm=0.93,
                occ=0.31, dram=0.28, opt_s=0.11, comm_exposed_s=0.07, samples_per_step=32 * len(gpus),
                workers=4, batch_cpu_s=0.06, mem_bytes=int(68 * GIB), model_name="llama-3.2-3b-pretrain",
                cmdline="/opt/conda/bin/python3 -u train.py --config configs/llama3b.yaml")
    base.update(kw)
    return TrainConfig(**base)


def vision_train_cfg(gpus, **kw) -> TrainConfig:
    base = dict(gpus=tuple(gpus), mode="ddp" if len(gpus) > 1 else "single", compute_s=0.125,
                micro=1, tensor=0.42, sm=0.90, occ=0.38, dram=0.46, opt_s=0.012, host_launch_s=0.004,
                comm_exposed_s=0.012, samples_per_step=256 * len(gpus), workers=12,
                batch_cpu_s=0.85, mem_bytes=int(31 * GIB), model_name="resnet50",
                cmdline="python3 train_imagenet.py --arch resnet50 --batch-size 256 --workers 12")
    base.update(kw)
    return TrainConfig(**base)


# ---------------------------------------------------------------------- builders
# Each returns Built(scene, window).  ``v`` is the variant dict from the table below.

def b_healthy_serving(seed, v):
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), interval=v.get("interval", 1.0), ebpf=v.get("ebpf", False),
                     bursts=v.get("bursts", 45.0), scenario=v.get("scenario"),
                     extra=v.get("extra", ()), **v.get("cfg", {}))
    return Built(sc, None)


def b_fall_to_tenth(seed, v):
    dur = v["dur"]
    rng = random.Random(seed)
    fall = ramp(120, 240, 1.0, 0.1)
    extra = [oneshot(100 + 12 * i + rng.uniform(0, 5), rng.randint(800, 3000), 7800, 8192)
             for i in range(6)]
    lengths = W.Lengths(out_median=300, max_tokens=(1024, 2048))
    sc, e, _ = serve(seed, v["spec"], v["n"], dur, v["kind"], v["model"], v["rate"], lengths,
                     scenario=fall, extra=extra, bursts=0)
    return Built(sc, None)


def b_reload(seed, v):
    spec, n, dur, kind, model = v["spec"], v["n"], v["dur"], v["kind"], v["model"]
    sc = Scene(seed, dur, spec, n, interval=v.get("interval", 1.0), cpus=64)
    t_down, gone = v["t_down"], v["gone"]
    rng = random.Random(seed * 3)
    lengths = v.get("lengths") or W.Lengths()
    up = t_down + 1.0
    shape1 = W.RateShape(base=v["rate"], duration=dur, burst_every_s=50).build(rng)
    reqs1 = W.requests(rng, W.arrivals(rng, shape1, 0.0, t_down), lengths)
    slow = v.get("slow_start", 90.0)
    t_ready = up + gone
    shape2 = W.RateShape(base=v["rate"], duration=dur, burst_every_s=50,
                         scenario=ramp(t_ready, t_ready + slow, 0.05, 1.0)).build(rng)
    reqs2 = W.requests(rng, W.arrivals(rng, shape2, t_ready, dur), lengths)
    cfg = EngineConfig(kind, MODELS[model], tuple(range(n)), port=8000 if kind == "vllm" else 30000)
    if kind == "sglang":
        cfg.overlap, cfg.host_base_s = 0.85, 0.9e-3
    pid1 = 3100 + seed % 1000
    e1 = Engine(sc, cfg, reqs1, pid1, t_start=-30.0, t_stop=t_down, rng=random.Random(seed + 1))
    e1.t_ready = -30.0
    e1.t = 0.0
    e2 = Engine(sc, cfg, reqs2, pid1 + 900, t_start=up, rng=random.Random(seed + 2), load_s=gone)
    sc.add_engine(cfg, [e1, e2])
    return Built(sc, None)


def b_idle_reserved(seed, v):
    # an engine up with its KV pool allocated and nobody sending requests
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], 0.0001, bursts=0)
    e.pending.clear()
    return Built(sc, None)


def b_blip(seed, v):
    # a quiet stretch; one request with a long prompt and a long answer in the middle
    extra = [oneshot(150.0, 6500, 2000, 2048)]
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], 0.25,
                     W.Lengths(out_median=120), extra=extra, bursts=0, wander=0.3)
    return Built(sc, None)


def b_growing_10k(seed, v):
    grow = ramp(30, v["dur"] - 30, 0.3, 1.6)
    extra = [oneshot(170.0, 10240, 600, 1024)]
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     scenario=grow, extra=extra)
    return Built(sc, None)


def b_eight_servers(seed, v):
    """Eight independent single-GPU servers; gputop pointed at the one on GPU 3."""
    dur = v["dur"]
    sc = Scene(seed, dur, v["spec"], 8, cpus=128)
    target = v.get("target", 3)
    w0, w1 = v.get("w", (None, None))
    main = None
    for i in range(8):
        lengths = W.Lengths(prompt_median=rng_m(seed, i, 500, 900))
        scenario = None
        extra = ()
        rate = v["rate"] * (0.8 + 0.05 * ((seed + i) % 7))
        if i == target and v.get("patho") == "memory_bandwidth":
            # this server's clients switch to long-context agent sessions
            rng = random.Random(seed * 100 + i)
            extra = []
            for t in W.arrivals(rng, W.RateShape(base=v["long_rate"], duration=dur).build(rng), w0, w1):
                ctx = rng.randint(20000, 30000)  # an agent session's next turn: context cached
                extra.append(oneshot(t, ctx, rng.randint(600, 1800), 2048, cached=ctx - rng.randint(200, 900)))
            scenario = lambda t, a=w0, b=w1: 0.35 if a <= t < b else 1.0
        _, e, act = serve(seed + i, None, 8, dur, "vllm", v["model"], rate, lengths, gpus=(i,),
                          scenario=scenario, extra=extra, scene=sc, pointed=(i == target),
                          pid=2200 + 211 * i, port=8000 + i, mem_fraction=0.92)
        if i == target:
            main = e
    if v.get("patho") == "gpu_shared":
        sc.add_intruder(Intruder(
            sc, target, w0, w1, "notebook", 40771, "python3",
            "/opt/conda/bin/python3 -m ipykernel_launcher -f "
            "/home/alice/.local/share/jupyter/runtime/kernel-8c1f.json",
            "alice", int(5.2 * GIB), duty=0.85))
    return Built(sc, (w0, w1) if w0 is not None else None)


def rng_m(seed, i, lo, hi):
    return random.Random(seed * 1000 + i).randint(lo, hi)


def b_oversized(seed, v):
    rng = random.Random(seed)
    w0, w1 = v["w"]
    n, lp, plp = v.get("n_param", 8), v.get("logprobs", 20), v.get("prompt_logprobs", 0)
    prompt = v.get("prompt", 512)
    out = v.get("out", 400)
    every = v.get("every", 10.0)
    extra = series(rng, w0, w1 - 3, every, lambda t: oneshot(
        t, prompt + rng.randint(-40, 40), out, max(out, v.get("max_tokens", 512)), n=n,
        logprobs=lp, prompt_logprobs=plp, cached=32, shared_prefix=32, tag="oversized"))
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths") or W.Lengths(prefix=32, prefix_frac=1.0, prompt_median=480),
                     extra=extra, interval=v.get("interval", 1.0), **v.get("cfg", {}))
    return Built(sc, (w0, w1))


def b_prefill(seed, v):
    rng = random.Random(seed)
    w0, w1 = v["w"]
    times = W.arrivals(rng, W.RateShape(base=v["long_rate"], duration=v["dur"], wander_sigma=0.3).build(rng), w0, w1)
    extra = [oneshot(t, rng.randint(*v["long_prompt"]), rng.randint(*v.get("long_out", (20, 120))),
                     512, tag="long")
             for t in times]
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), extra=extra, interval=v.get("interval", 1.0), **v.get("cfg", {}))
    return Built(sc, (w0, w1 + 10))


def b_straggler_serving(seed, v):
    w0, w1 = v["w"]
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), interval=v.get("interval", 1.0), **v.get("cfg", {}))
    g = sc.gpus[v["slow"]]
    how = v["how"]
    refine = None
    if how == "hold":
        mhz = v["mhz"]
        g.clock_hold = lambda t: mhz if w0 <= t < w1 else None
    elif how == "thermal":
        base = g.r_th
        g.r_th_fn = lambda t: base * v.get("r_mult", 3.0) if w0 <= t < w1 else base
        refine = window_where(v["slow"], lambda s: "thermal (sw)" in s.throttle)
    elif how == "brake":
        g.brake = lambda t: v["mhz"] if w0 <= t < w1 else None
    return Built(sc, (w0, w1), refine)


def b_straggler_train(seed, v):
    w0, w1 = v["w"]
    n = v["n"]
    cfg = llm_train_cfg(range(n), mode=v.get("mode", "ddp"),
                        fsdp_layers=28 if v.get("mode") == "fsdp" else 0,
                        comm_exposed_s=0.22 if v.get("mode") == "fsdp" else 0.07)
    sc, tr = train_scene(seed, v["spec"], n, v["dur"], cfg, counter=v.get("counter", False),
                         pinned=v.get("pinned", False), interval=v.get("interval", 1.0))
    g = sc.gpus[v["slow"]]
    refine = None
    if v["how"] == "hold":
        g.clock_hold = lambda t: v["mhz"] if w0 <= t < w1 else None
    elif v["how"] == "thermal":
        base = g.r_th
        g.r_th_fn = lambda t: base * v.get("r_mult", 3.2) if w0 <= t < w1 else base
        refine = window_where(v["slow"], lambda s: "thermal (sw)" in s.throttle)
    else:
        g.brake = lambda t: v["mhz"] if w0 <= t < w1 else None
    return Built(sc, (w0, w1), refine)


def b_input_stall(seed, v):
    w0, w1 = v["w"]
    n = v["n"]
    slow = v.get("slow", 6.0)
    if v.get("llm"):
        cfg = llm_train_cfg(range(n), workers=v.get("workers", 4), batch_cpu_s=0.12)
    else:
        cfg = vision_train_cfg(range(n), workers=v.get("workers", 12),
                               batch_cpu_s=v.get("batch_cpu", 0.85))
    base = cfg.batch_cpu_s
    cost = lambda t: base * (slow if w0 <= t < w1 else 1.0)
    sc, tr = train_scene(seed, v["spec"], n, v["dur"], cfg, counter=v.get("counter", False),
                         pinned=v.get("pinned", False), batch_cost_fn=cost,
                         interval=v.get("interval", 1.0))
    return Built(sc, (w0, w1))


def b_host(seed, v):
    """CPU starvation of the engine's threads: a CPU-heavy job on the host (contention)
    or squeezed onto the engine's cpuset (jitter, seen through eBPF)."""
    w0, w1 = v["w"]
    cpus = v.get("cpus", 32)
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), interval=v.get("interval", 1.0), ebpf=v.get("ebpf", False),
                     cpus=cpus, **v.get("cfg", {}))
    hog = v["hog"]
    sc.host.contention = lambda t: hog if w0 <= t < w1 else None
    return Built(sc, (w0, w1))


def b_tiny_plain(seed, v):
    w0, w1 = v["w"]
    n = v["n"]
    sc = Scene(seed, v["dur"], v["spec"], n, interval=v.get("interval", 1.0), cpus=64)
    target = v["target"]
    for i in range(n):
        if i == target:
            phases = [Phase(0, w0, v.get("before", "train")), Phase(w0, w1, "graph_tiny"),
                      Phase(w1, v["dur"] + 5, v.get("after", "train"))]
            cmd = v.get("cmd", "python3 bench_loop.py --graphs")
        else:
            phases = [Phase(0, v["dur"] + 5, v.get("others", "train"))]
            cmd = f"python3 train.py --gpu {i} --config sweep/{i}.yaml"
        p = CudaProc(sc, i, 6100 + 17 * i, phases, "python3", cmd, "ml", int(38 * GIB),
                     t_start=-5.0, ppid=6000 + 17 * i, rng=random.Random(seed + i))
        sc.add_cuda(p)
    if v.get("pinned"):  # -p on the process: its tree, one thread spinning on replays
        sc.pin = _PinCuda(sc, sc.cuda[target])
    return Built(sc, (w0, w1))


class _PinCuda:
    """The pinned view of a plain CUDA process: one busy launching thread."""

    def __init__(self, sc, proc):
        self.sc, self.p = sc, proc

    def pinned(self, t):
        from gputop.schema import PinnedSample, ThreadSample
        p, host = self.p, self.sc.last_host
        cpu = round(p.cpu_s, 2)
        return PinnedSample(label=f"bench_loop.py ({p.pid})", pattern="bench_loop.py",
                            root_pids=(p.pid,), tree_pids=(p.pid, p.pid + 1, p.pid + 2),
                            cpu_s=cpu, ctx_voluntary=int(40 * t), ctx_involuntary=int(3 * t),
                            threads=(ThreadSample(p.pid, p.pid, "python3", round(cpu * 0.97, 2)),
                                     ThreadSample(p.pid + 1, p.pid, "cuda-EvtHandlr", round(0.01 * t, 2))),
                            cores=tuple(range(self.sc.host.cpus)),
                            cpu_pressure_some_pct=host.cpu_pressure_some_pct if host else None,
                            run_queue=host.run_queue if host else None)


def b_tiny_wedged(seed, v):
    w0, w1 = v["w"]
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), **v.get("cfg", {}))
    e.wedged = lambda t: w0 <= t < w1
    return Built(sc, (w0, w1))


def b_membw(seed, v):
    rng = random.Random(seed)
    w0, w1 = v["w"]
    times = W.arrivals(rng, W.RateShape(base=v["long_rate"], duration=v["dur"]).build(rng), w0, w1)
    extra = []
    for t in times:  # long multi-turn sessions: the context is a prefix-cache hit, the turn is new
        ctx = rng.randint(*v["ctx"])
        extra.append(oneshot(t, ctx, rng.randint(*v.get("out", (800, 2000))), 2048,
                             cached=ctx - rng.randint(200, 1200), tag="longctx"))
    scen = lambda t: v.get("short_scale", 0.5) if w0 <= t < w1 else 1.0
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), extra=extra, scenario=scen, **v.get("cfg", {}))
    return Built(sc, (w0, w1 + 20))


def b_throttle_serving(seed, v):
    w0, w1 = v["w"]
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), **v.get("cfg", {}))
    refine = None
    for gi in range(v["n"]):
        g = sc.gpus[gi]
        if v["how"] == "thermal":
            base = g.r_th
            g.r_th_fn = lambda t, b=base: b * v.get("r_mult", 3.3) if w0 <= t < w1 else b
            refine = window_where(0, lambda s: "thermal (sw)" in s.throttle)
        else:
            g.brake = lambda t: v["mhz"] if w0 <= t < w1 else None
    return Built(sc, (w0, w1), refine)


def b_throttle_train(seed, v):
    w0, w1 = v["w"]
    n = v["n"]
    cfg = llm_train_cfg(range(n), mode="ddp" if n > 1 else "single")
    sc, tr = train_scene(seed, v["spec"], n, v["dur"], cfg, counter=v.get("counter", False))
    refine = None
    for gi in range(n):
        g = sc.gpus[gi]
        if v["how"] == "thermal":
            base = g.r_th
            g.r_th_fn = lambda t, b=base: b * 3.4 if w0 <= t < w1 else b
            refine = window_where(0, lambda s: "thermal (sw)" in s.throttle)
        else:
            g.brake = lambda t: v["mhz"] if w0 <= t < w1 else None
    return Built(sc, (w0, w1), refine)


def b_kv(seed, v):
    rng = random.Random(seed)
    w0, w1 = v["w"]
    times = W.arrivals(rng, W.RateShape(base=v["long_rate"], duration=v["dur"]).build(rng), w0, w1)
    if v.get("batch"):  # a batch job submits groups of long generations at once
        every, size = v["batch"]
        times = [t + rng.uniform(0, 1.5) for t0 in range(int(w0), int(w1), int(every))
                 for t in [float(t0)] * size]
    extra = [oneshot(t, rng.randint(*v["ctx"]), rng.randint(*v["out"]), v.get("max_tokens", 4096),
                     tag="long") for t in sorted(times)]
    scen = lambda t: v.get("short_scale", 0.6) if w0 <= t < w1 else 1.0
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), extra=extra, scenario=scen, interval=v.get("interval", 1.0),
                     **v.get("cfg", {}))

    def refine(frames, wall0):
        # the pool stays full while the backlog of long requests drains
        full = [f.time_wall_s - wall0 for f in frames if f.engine is not None
                and f.engine.kv_usage_ratio is not None and f.engine.kv_usage_ratio >= 0.9
                and f.time_wall_s - wall0 >= w0]
        return (w0, max(w1, full[-1])) if full else None
    return Built(sc, (w0, w1 + 20), refine)


def b_shared_serving(seed, v):
    w0, w1 = v["w"]
    sc, e, _ = serve(seed, v["spec"], v["n"], v["dur"], v["kind"], v["model"], v["rate"],
                     v.get("lengths"), **v.get("cfg", {}))
    it = Intruder(sc, v.get("target", 0), w0, w1, v.get("mix", "notebook"), 41234 + seed % 1000,
                  "python3", v.get("cmd", "/opt/conda/bin/python3 -m ipykernel_launcher -f "
                                          "/home/alice/.local/share/jupyter/runtime/kernel-3f2a.json"),
                  v.get("user", "alice"), int(v.get("mem_gib", 6.5) * GIB), duty=v.get("duty", 0.85),
                  container=v.get("container", ""))
    sc.add_intruder(it)
    return Built(sc, (w0, w1))


def b_shared_train(seed, v):
    w0, w1 = v["w"]
    cfg = llm_train_cfg((0,), mode="single", mem_bytes=int(52 * GIB), workers=4)
    sc, tr = train_scene(seed, v["spec"], 1, v["dur"], cfg, pinned=v.get("pinned", False))
    it = Intruder(sc, 0, w0, w1, "train", 43210, "python3", "python3 finetune_lora.py --model "
                  "Qwen2.5-1.5B", "bob", int(21 * GIB), duty=0.92)
    sc.add_intruder(it)
    return Built(sc, (w0, w1))


def b_healthy_train(seed, v):
    n = v["n"]
    if v.get("vision"):
        cfg = vision_train_cfg(range(n), eval_every=v.get("eval_every", 0))
    else:
        cfg = llm_train_cfg(range(n), mode="ddp" if n > 1 else "single",
                            eval_every=v.get("eval_every", 0), eval_batches=v.get("eval_batches", 24),
                            ckpt_every_s=v.get("ckpt_every", 0.0), ckpt_s=v.get("ckpt_s", 18.0),
                            ckpt_rank0_only=v.get("rank0", True), **v.get("cfg", {}))
    sc, tr = train_scene(seed, v["spec"], n, v["dur"], cfg, counter=v.get("counter", False),
                         pinned=v.get("pinned", False), interval=v.get("interval", 1.0))
    return Built(sc, None)


def b_plain(seed, v):
    sc = Scene(seed, v["dur"], v["spec"], v["n"], interval=v.get("interval", 1.0))
    for i in range(v["n"]):
        phases = [Phase(0, v["dur"] + 5, v.get("mix", "matmul"))]
        sc.add_cuda(CudaProc(sc, i, 7000 + i, phases, "python3", "python3 gemm_bench.py --dtype bf16",
                             "ml", int(24 * GIB), t_start=-5.0, rng=random.Random(seed + i)))
    return Built(sc, None)
