"""One builder per trace and its truth.  Every reading comes from the simulations in
serving.py / jobs.py / hw.py / host.py; a fault is a change of the physics (a knob that
moves at the window's start), never a change of the readings."""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

from corpus_ao import Truth
from corpus_ao.hw import SPECS
from corpus_ao.jobs import Job, JobCfg, Service
from corpus_ao.serving import Engine, EngineCfg, Model, Req, Workload, lognorm
from corpus_ao.sim import GiB, Env, Proc, Scrape, run, trainer_page

BASE_WALL = 1796688000.0  # 2026-12-07 00:00 UTC, the sale fortnight


@dataclass
class Entry:
    name: str
    family: str
    cause: str | None
    fn: Callable
    kw: dict = field(default_factory=dict)

    def build(self):
        return self.fn(self.name, self.family, self.cause, **self.kw)


CATALOG: list[Entry] = []


def add(name, family, cause, fn, **kw):
    CATALOG.append(Entry(name, family, cause, fn, kw))


def seed_of(name):
    return zlib.crc32(name.encode())


def start_wall(name):
    return BASE_WALL + (seed_of(name) % (14 * 86400))


def setall(attr, value):
    def f(env):
        for g in env.gpus:
            setattr(g, attr, value)
    return f


def inlet_ramp(t0, t1, c0, c1, step=10.0):
    out = []
    t = t0
    while t <= t1:
        out.append((t, setall("inlet", c0 + (c1 - c0) * (t - t0) / (t1 - t0))))
        t += step
    return out


def on(w, val, off):
    """A knob that is ``val`` inside the window w=(a, b) and ``off`` outside."""
    a, b = w
    return lambda t: val if a <= t < b else off


def ramp(w, val, off, rise=60.0):
    """Slow onset: moves from off to val over ``rise`` seconds after w[0]."""
    a, b = w

    def f(t):
        if t < a or t >= b:
            return off
        x = min(1.0, (t - a) / rise)
        if isinstance(val, dict):
            return {k: off.get(k, 1.0) + (v - off.get(k, 1.0)) * x for k, v in val.items()}
        return off + (val - off) * x
    return f


def pulses(w, val, off, period, width):
    """Intermittent: on for ``width`` s every ``period`` s inside w."""
    a, b = w
    return lambda t: val if a <= t < b and ((t - a) % period) < width else off


def truth(name, family, cause, *, culprit, window, engine, gpus, gpu, tick, note):
    return Truth(name, family, cause, culprit, window, engine, gpus, SPECS[gpu].name, tick, note,
                 0.0)


# ------------------------------------------------------------------ models
M8B = Model("shop-assistant-8b", 8.03e9, 32, 4096, 8, 128)
M70B = Model("shop-assistant-70b", 70.6e9, 80, 8192, 8, 128)
QWEN7 = Model("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 28, 3584, 4, 128, vocab=152064)
QWEN32AWQ = Model("Qwen/Qwen2.5-32B-Instruct-AWQ", 32.8e9, 64, 5120, 8, 128, vocab=152064, wbytes=0.56)
REWRITE = Model("query-rewriter-1.5b", 1.54e9, 28, 1536, 2, 128, vocab=151936)
MISTRAL7 = Model("mistralai/Mistral-7B-Instruct-v0.2", 7.24e9, 32, 4096, 8, 128, vocab=32000)
LLAMA8Q4 = Model("llama-3.1-8b-instruct-Q4_K_M.gguf", 8.03e9, 32, 4096, 8, 128, wbytes=0.6)


def kv_blocks(gpu, model, tp, util, block, other=2.5 * GiB):
    spec = SPECS[gpu]
    avail = spec.mem_total * util - model.weight_bytes(tp) - other
    return max(256, int(avail / (block * model.kv_bytes_tok(tp))))


def chat_maker(prompt=(1800, 0.6, 64, 12000), out=(220, 0.6, 8, 1500), extra=None):
    def make(rng, rid, t):
        r = Req(rid, t, lognorm(rng, *prompt), lognorm(rng, *out))
        if extra:
            extra(rng, r)
        return r
    return make


def diurnal(base, w=None, peak=None):
    return lambda t: base


# ------------------------------------------------------------------ serving traces
def serve(name, family, cause, *, note, window=None, culprit=None, kind="vllm", gpu="H200",
          ngpu=1, tp=1, model=M8B, rate=lambda t: 4.0, maker=None, inject=(), duration=360.0,
          tick=1.0, scrape_s=5.0, knobs=None, cfg=None, ebpf=False, host=None, tenants=(),
          util=0.9, block=16, restart=None, label=None, miss_p=0.01, gate=None, events=None):
    seed = seed_of(name)
    env = Env(name, seed, gpu, ngpu, tick, duration, start_wall(name), **(host or {}))
    env.events += list(events or ())
    env.knobs.update(knobs or {})
    gpus = tuple(range(tp))
    c = dict(kind=kind, model=model, gpus=gpus, tp=tp, block_size=block,
             num_blocks=kv_blocks(gpu, model, tp, util, block), gpu_mem_util=util)
    if kind == "llamacpp":
        c.update(max_seqs=4, max_batched=2048, graphs=True, prefix_cache=True)
    if kind == "tgi":
        c.update(chunked=False, max_batched=16384, graphs=True)
    c.update(cfg or {})
    ecfg = EngineCfg(**c)
    wl = Workload(env.rng, rate, maker or chat_maker(), inject)
    eng = Engine(ecfg, env.rng, env, wl)
    base = 40000 + seed % 20000
    img = {"vllm": "vllm/vllm-openai:v0.11.2", "sglang": "lmsysorg/sglang:v0.5.4",
           "tgi": "ghcr.io/huggingface/text-generation-inference:2.0.4",
           "llamacpp": "llama-server"}[kind]
    pod = {"vllm": "assistant/vllm-assistant-6f9c7-x2k4p", "sglang": "assistant/sglang-assistant-5c8d-q7m2w",
           "tgi": "support/tgi-supportbot-7d4f9-h6j8n", "llamacpp": ""}[kind]
    cont = f"containerd:{seed:08x}{seed % 9973:04x}" if pod else ""
    user = "svc" if pod else "mlee"
    mem = SPECS[gpu].mem_total * util - 0.4 * GiB
    mname = model.name
    if kind == "llamacpp":
        mem = model.weight_bytes() + ecfg.num_blocks * ecfg.block_size * model.kv_bytes_tok() * 0.25 + 1.1 * GiB
    cmd = {"vllm": f"python3 -m vllm.entrypoints.openai.api_server --model /models/{mname} --tensor-parallel-size {tp} --gpu-memory-utilization {util}",
           "sglang": f"python3 -m sglang.launch_server --model-path {mname} --tp {tp} --port 30000 --enable-metrics",
           "tgi": f"text-generation-launcher --model-id {mname} --port 80",
           "llamacpp": f"llama-server -m /home/mlee/models/{mname} -c 65536 -np 4 --metrics --port 8080"}[kind]
    procs = []
    if kind in ("vllm", "sglang"):
        procs.append(Proc(base, None, "python3", cmd, 0, user, cont, pod, 1, -3600, 3 * GiB, 0.25))
        if tp == 1:
            procs.append(Proc(base + 1, 0, "VLLM::EngineCor" if kind == "vllm" else "sglang::schedul",
                              cmd, mem, user, cont, pod, base, -3590, 6 * GiB, 1.0))
        else:
            procs.append(Proc(base + 1, None, "VLLM::EngineCor" if kind == "vllm" else "sglang::schedul",
                              cmd, 0, user, cont, pod, base, -3590, 2 * GiB, 0.6))
            for g in range(tp):
                procs.append(Proc(base + 2 + g, g, f"VLLM::Worker_TP{g}", cmd, mem, user, cont, pod,
                                  base + 1, -3588, 5 * GiB, 0.8))
    else:
        procs.append(Proc(base, 0, "text-generation" if kind == "tgi" else "llama-server", cmd, mem,
                          user, cont, pod, 1, -7200, 4 * GiB, 1.0))
    port = {"vllm": 8000, "sglang": 30000, "tgi": 80, "llamacpp": 8080}[kind]
    ip = f"10.{40 + seed % 20}.{seed % 250}.{(seed >> 8) % 250}"
    url = f"http://{ip}:{port}/metrics" if pod else f"http://127.0.0.1:{port}/metrics"
    sc = Scrape(kind, url, mname, scrape_s, miss_p=miss_p, tp=tp)
    ten, tprocs = _tenants(env, tenants, seed, procs)
    if restart:
        restart(env, eng, procs)
    if gate:
        wl.gate = lambda: gate(eng)
    frames = run(env, eng, procs + tprocs, label or cmd[:60] + "…", tenants=ten, scrape=sc,
                 page=lambda: eng.page(mname) if eng.up else None, ebpf=ebpf)
    tr = truth(name, family, cause, culprit=culprit, window=window, engine=kind, gpus=ngpu,
               gpu=gpu, tick=tick, note=note)
    return _stamp(tr, frames)


def _stamp(tr, frames):
    from dataclasses import replace
    sw = start_wall(tr.name)
    w = tr.window
    window = (round(sw + w[0], 3), round(sw + w[1], 3)) if w else None
    return replace(tr, window=window, start_wall_s=frames[0].time_wall_s), frames


class Group:
    """Several services (one per GPU) pinned as one tree."""

    def __init__(self, members):
        self.members = members

    @property
    def cpu_demand(self):
        return sum(m.cpu_demand for m in self.members)

    def advance(self, t1):
        for m in self.members:
            m.advance(t1)


def _tenants(env, tenants, seed, procs):
    out, tprocs = [], []
    for i, t in enumerate(tenants):
        svc = Service(env.rng, env, t["gpu"], rate=lambda x: 0, other=True, sm=t.get("sm", 0.9),
                      tensor=t.get("tensor", 0.5), dram=t.get("dram", 0.35), duty=t["duty"],
                      start=t["start"], end=t.get("end", 1e18))
        out.append(svc)
        tprocs.append(Proc(30000 + seed % 9000 + i * 17, t["gpu"], t.get("name", "python3"),
                           t["cmd"], t["mem"], t.get("user", "dsci"), t.get("container", f"containerd:{(seed * 31 + i):012x}"),
                           t.get("pod", "datasci/jupyter-anna-0"), 1, t["start"] - 5, 3 * GiB, 1.0,
                           tenant=True, alive=(t["start"], t.get("end", 1e18))))
    return out, tprocs


# ------------------------------------------------------------------ training traces
def train(name, family, cause, *, note, window=None, culprit=None, gpu="H100", ngpu=8, phases=None,
          job=None, duration=360.0, tick=1.0, knobs=None, export="tokens", scrape_s=5.0,
          host=None, tenants=(), ebpf=False, label="torchrun train.py", cmd=None, mem_frac=0.82,
          events=None, job_start=0.0, job_end=None, alive_end=1e18):
    seed = seed_of(name)
    env = Env(name, seed, gpu, ngpu, tick, duration, start_wall(name), **(host or {}))
    env.knobs.update(knobs or {})
    jc = JobCfg(ranks=tuple(range(ngpu)), phases=phases, **(job or {}))
    j = Job(jc, env.rng, env, start=job_start, end=job_end)
    if events:
        for e in events:
            env.events.append(e)
    base = 50000 + seed % 20000
    cmd = cmd or f"python3 -m torch.distributed.run --nproc-per-node {ngpu} train.py"
    pod = "ml-train/" + name[:30].strip("-") + "-" + f"{seed % 100000:05d}" + "-worker-0"
    cont = f"containerd:{seed:012x}"[:23]
    procs = [Proc(base, None, "torchrun", cmd, 0, "mltrain", cont, pod, 1, -600, 1 * GiB, 0.05,
                  alive=(0.0, alive_end))]
    total = SPECS[gpu].mem_total
    for r in range(ngpu):
        procs.append(Proc(base + 1 + r, r, "python3", cmd.replace("torch.distributed.run", "train.py --local-rank " + str(r)),
                          total * mem_frac, "mltrain", cont, pod, base, -598, 18 * GiB, 1.0,
                          alive=(0.0, alive_end)))
    for r in range(min(ngpu, 4)):
        for w in range(2):
            procs.append(Proc(base + 100 + r * 10 + w, None, "pt_data_worker", "python3 train.py (DataLoader worker)",
                              0, "mltrain", cont, pod, base + 1 + r, -590, 3 * GiB, 0.6,
                              alive=(0.0, alive_end)))
    ten, tprocs = _tenants(env, tenants, seed, procs)
    sc = None
    page = None
    if export:
        ip = f"10.{60 + seed % 20}.{seed % 250}.{(seed >> 8) % 250}"
        sc = Scrape("trainer", f"http://{ip}:9400/metrics", "", scrape_s, miss_p=0.005)
        page = lambda: trainer_page(j, export)
    frames = run(env, j, procs + tprocs, label, tenants=ten, scrape=sc, page=page, ebpf=ebpf)
    tr = truth(name, family, cause, culprit=culprit, window=window, engine="trainer" if export else "none",
               gpus=ngpu, gpu=gpu, tick=tick, note=note)
    return _stamp(tr, frames)


# ------------------------------------------------------------------ services without a page
def service(name, family, cause, *, note, window=None, culprit=None, gpu="L40S", ngpu=1,
            svc=None, duration=360.0, tick=1.0, knobs=None, host=None, tenants=(), ebpf=False,
            label="python3 serve.py", cmd="python3 serve.py", mem=12 * GiB, pod="ranking/ctr-ranker-0",
            events=None):
    seed = seed_of(name)
    env = Env(name, seed, gpu, ngpu, tick, duration, start_wall(name), **(host or {}))
    env.events += list(events or ())
    env.knobs.update(knobs or {})
    s = Group([Service(env.rng, env, g, **svc) for g in range(ngpu)])
    base = 20000 + seed % 20000
    cont = f"containerd:{seed:012x}"
    procs = [Proc(base + g, g, "python3", cmd, mem(g) if callable(mem) else mem, "svc", cont, pod, 1, -5000, 6 * GiB, 1.0)
             for g in range(ngpu)]
    ten, tprocs = _tenants(env, tenants, seed, procs)
    frames = run(env, s, procs + tprocs, label, tenants=ten, ebpf=ebpf)
    tr = truth(name, family, cause, culprit=culprit, window=window, engine="none", gpus=ngpu,
               gpu=gpu, tick=tick, note=note)
    return _stamp(tr, frames)


from corpus_ao.entries import *  # noqa: E402,F401,F403  (the trace list)
