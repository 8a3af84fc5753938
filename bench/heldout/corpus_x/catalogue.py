"""The week's traces: what happened on each machine (the workload and the fault, if any)
and the label the on-call engineer would write.  Every number a frame shows is derived
by the simulators from these set-ups; the labels say what was done, the windows are
measured from the simulation (``world.World._window``)."""

from __future__ import annotations

from dataclasses import dataclass

from .serving import (GEMMA12Q, LLAMA8B, LLAMA70B, MISTRAL24, QWEN7B, QWEN30A3, QWEN32B,
                      Controls, Model, ServeCfg)
from .training import TrainCfg
from .world import Setup

WEEK0 = 1795392000.0  # Monday 2026-11-23 00:00 UTC


def when(day: int, hour: int, minute: int = 0) -> float:
    return WEEK0 + day * 86400 + hour * 3600 + minute * 60 + 0.137


def ramp(t, a, b):
    if t <= a:
        return 0.0
    if t >= b:
        return 1.0
    return (t - a) / (b - a)


def pulse(t, a, b, rise=0.0, fall=0.0):
    """0 before a, up to 1 over rise, 1 until b, down to 0 over fall."""
    up = ramp(t, a, a + rise) if rise else (1.0 if t >= a else 0.0)
    down = 1.0 - (ramp(t, b, b + fall) if fall else (1.0 if t >= b else 0.0))
    return min(up, down)


def chat(pmu=6.8, psig=0.7, omu=5.3, osig=0.6, cache=0.3, pmax=12000, omax=2048):
    def draw(t, rng):
        p = min(pmax, 16 + int(rng.lognormvariate(pmu, psig)))
        o = min(omax, 2 + int(rng.lognormvariate(omu, osig)))
        return dict(prompt=p, cached=int(p * cache * rng.random() * 2) if cache else 0, out=o)
    return draw


def mix(base, special, frac):
    def draw(t, rng):
        f = frac(t)
        if f > 0 and rng.random() < f:
            return special(t, rng)
        return base(t, rng)
    return draw


@dataclass(frozen=True)
class Entry:
    name: str
    family: str
    cause: str | None
    culprit: tuple | None
    engine: str
    note: str
    build: object  # () -> Setup


REG: list[Entry] = []


def entry(name, family, cause, engine, note, culprit=None):
    def deco(fn):
        REG.append(Entry(name, family, cause, culprit, engine, note, fn))
        return fn
    return deco


VLLM_CMD = ("/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model {m} "
            "--tensor-parallel-size {tp} --gpu-memory-utilization 0.90 --max-num-batched-tokens "
            "{b} --enable-prefix-caching --port 8000")
SGL_CMD = ("python3 -m sglang.launch_server --model-path {m} --tp {tp} --enable-metrics "
           "--chunked-prefill-size {b} --mem-fraction-static 0.88 --port 30000")
LLAMA_CMD = ("/opt/llama.cpp/build/bin/llama-server -m /models/{m} -ngl 99 -c {c} -np {np} "
             "--metrics --port 8080")


def serve(name, gpu, engine, model: Model, tp, rate, draw, dur, onset=0.0, probe=(), tick=1.0,
          day=0, hour=10, ngpu=None, cfg=None, ctl=None, **kw):
    cfg = dict(cfg or {})
    cfg.setdefault("mixed", engine != "sglang")
    if engine == "sglang":
        cfg.setdefault("h0", 0.0013)
    if engine == "llamacpp":
        cfg.setdefault("max_seqs", 4)
        cfg.setdefault("budget", 2048)
        cfg.setdefault("h0", 0.0009)
        cfg.setdefault("kernels_per_step", 0)
    sc = ServeCfg(engine, model, tp=tp, **cfg)
    c = Controls(rate=rate, draw=draw, **(ctl or {}))
    if engine == "vllm":
        cmd = VLLM_CMD.format(m=model.name, tp=tp, b=sc.budget)
        url = "http://127.0.0.1:8000/metrics"
    elif engine == "sglang":
        cmd = SGL_CMD.format(m=model.name, tp=tp, b=sc.budget)
        url = "http://127.0.0.1:30000/metrics"
    else:
        cmd = LLAMA_CMD.format(m=model.name, c=sc.max_seqs * 16384, np=sc.max_seqs)
        url = "http://127.0.0.1:8080/metrics"
    kw.setdefault("cmd", cmd)
    kw.setdefault("url", url)
    return Setup(name=name, gpu=gpu, ngpu=ngpu or tp, tick=tick, dur=dur,
                 start_wall=when(day, hour), kind="serve", serve=sc, ctl=c, onset=onset,
                 probe=probe, **kw)


def train(name, gpu, ranks, params, tokens, dur, phase=None, onset=0.0, probe=(), tick=1.0,
          day=0, hour=3, counter="tokens", mfu=0.42, tkw=None, **cfgkw):
    from .hw import SPECS
    spec = SPECS[gpu]
    setup_early = cfgkw.pop("setup", None)
    if setup_early is not None:
        tkw = dict(tkw or {})
        tkw.setdefault("setup", {}).update(setup_early)
    t_comp = 6 * params * tokens / ranks / (spec.flops * mfu)
    cfgkw.setdefault("grad_bytes", params * 2 if ranks > 1 else 0.0)
    cfgkw.setdefault("link_bw", 160e9 if spec.nvlink else 22e9)
    c = TrainCfg(ranks=ranks, params=params, tokens_per_step=tokens, t_compute=t_comp,
                 work_unit=counter or "tokens", **cfgkw)
    kw = dict(tkw or {})
    setup_kw = dict(cfgkw.pop("setup", {}))
    setup_kw.update(kw.pop("setup", {}))
    tkw2 = {k: v for k, v in kw.items()}
    tkw2.setdefault("phase", phase or (lambda t: "train"))
    cmd = setup_kw.pop("cmd", "/opt/venv/bin/python -m torch.distributed.run --nproc-per-node "
                       f"{ranks} train.py --config configs/run.yaml")
    setup_kw.setdefault("set_cores", max(8, 6 * ranks))
    setup_kw.setdefault("cpus", max(64, 16 * ranks))
    return Setup(name=name, gpu=gpu, ngpu=ranks, tick=tick, dur=dur, start_wall=when(day, hour),
                 kind="train", train=c, train_kw=tkw2, onset=onset, probe=probe,
                 train_counter=counter, cmd=cmd, url="http://127.0.0.1:9400/metrics",
                 **setup_kw)


def ev(t, fn):
    return (t, fn)


def setattr_ev(t, path, value):
    def fn(w):
        obj = w
        parts = path.split(".")
        for p in parts[:-1]:
            obj = obj[int(p)] if p.isdigit() else getattr(obj, p)
        if isinstance(obj, dict):
            obj[parts[-1]] = value
        else:
            setattr(obj, parts[-1], value)
    return (t, fn)


# =====================================================================================
# memory_bandwidth (5)
# =====================================================================================

@entry("mb-vllm-h100-agent-history", "serving", "memory_bandwidth", "vllm",
       "An agent feature rolls out: requests carry 8-14k tokens of cached conversation "
       "history (prefix-cache hits, little new prefill); decode reads far more KV per step; "
       "rolled back at 230 s.")
def _():
    long = lambda t, rng: dict(prompt=7000 + int(rng.random() * 5000), cached=0, out=200 +
                               int(rng.random() * 200))

    def draw(t, rng):
        f = 0.6 * pulse(t, 90, 230, rise=40, fall=15)
        if rng.random() < f:
            d = long(t, rng)
            d["cached"] = d["prompt"] - 300
            return d
        return chat(cache=0.25)(t, rng)
    return serve("mb-vllm-h100-agent-history", "H100", "vllm", LLAMA8B, 1, lambda t: 6.0, draw,
                 300, onset=90, probe=("itl", 1.3), day=0, hour=14)


@entry("mb-sglang-h200x2-longdoc-batch", "serving", "memory_bandwidth", "sglang",
       "A QA batch over long shared documents (16k tokens, radix-cached) joins interactive "
       "traffic: the decode batch grows to ~150 sequences over 16k contexts; every step "
       "streams the KV; ends at 215 s.")
def _():
    def draw(t, rng):
        if rng.random() < pulse(t, 100, 215) * 0.3:
            p = 10000 + int(rng.random() * 2500)
            return dict(prompt=p, cached=p - 150, out=250 + int(rng.random() * 250))
        return chat(cache=0.3)(t, rng)
    return serve("mb-sglang-h200x2-longdoc-batch", "H200", "sglang", QWEN32B, 2,
                 lambda t: 5.0 + 2.0 * pulse(t, 100, 215), draw, 300, onset=100,
                 probe=("itl", 1.3), day=0, hour=16, cfg=dict(budget=8192))


@entry("mb-vllm-h100x2-kvdtype-bf16", "serving", "memory_bandwidth", "vllm",
       "Redeploy at 80 s changes --kv-cache-dtype fp8 to auto (bf16): after the restart the "
       "same long-chat traffic reads twice the KV bytes per step; ITL stays up (no rollback "
       "in the trace).")
def _():
    fp8 = Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6e9, 70.6e9, 80, 8192, 327680,
                wbytes=1.0)

    def up(t):
        return not (80 <= t < 125)
    draw = chat(pmu=8.3, psig=0.4, omu=5.6, cache=0.45, pmax=20000)
    s = serve("mb-vllm-h100x2-kvdtype-bf16", "H100", "vllm", fp8, 2, lambda t: 1.1, draw, 320,
              onset=125, probe=("itl", 1.2), day=1, hour=9,
              cfg=dict(kv_dtype_bytes=1.0, cache_dtype="fp8_e4m3"), up=up)
    s.events.append(setattr_ev(80, "tags.down_since", 80))

    def switch(w):
        w.sim.cfg.kv_dtype_bytes = 2.0
        w.sim.cfg.cache_dtype = "auto"
        w.kvb_gpu *= 2
        w.sim.cfg.pool_tokens //= 2
        w.pool_bytes = int(w.sim.cfg.pool_tokens * w.kvb_gpu)
    s.events.append(ev(80, switch))
    return s


@entry("mb-vllm-a100-nogpm-context-creep", "serving", "memory_bandwidth", "vllm",
       "A100 (no GPM): multi-turn sessions keep their history (prefix-cached); average "
       "context creeps from 2k to ~18k over two minutes; only memory-controller util and "
       "latency show it; a history cap is pushed at 275 s.")
def _():
    def draw(t, rng):
        g = ramp(t, 90, 210) * (1 - ramp(t, 275, 290))
        hist = int(g * (7000 + rng.random() * 7000))
        p = 600 + hist + int(rng.random() * 400)
        return dict(prompt=p, cached=hist, out=120 + int(rng.random() * 250))
    return serve("mb-vllm-a100-nogpm-context-creep", "A100", "vllm", QWEN7B, 1,
                 lambda t: 4.0, draw, 330, onset=90, probe=("itl", 1.25), day=1, hour=20)


@entry("mb-vllm-h100x4-reasoning-long-outputs", "serving", "memory_bandwidth", "vllm",
       "Moderate, slow: a reasoning prompt template makes answers ~6x longer; contexts grow "
       "through generation, the batch fills with 4-8k-token sequences and each step reads "
       "more KV (ITL about +30%); template reverted at 250 s.")
def _():
    def draw(t, rng):
        if rng.random() < 0.22 * pulse(t, 95, 250, rise=20):
            return dict(prompt=900 + int(rng.random() * 800), cached=600,
                        out=1500 + int(rng.random() * 2000))
        return chat(pmu=7.0, omu=5.5)(t, rng)
    return serve("mb-vllm-h100x4-reasoning-long-outputs", "H100", "vllm", LLAMA70B, 4,
                 lambda t: 5.0, draw, 330, onset=95,
                 probe=("itl", 1.2), day=2, hour=11)


# =====================================================================================
# prefill_interference (4)
# =====================================================================================

@entry("pf-vllm-h100-summarize-burst", "serving", "prefill_interference", "vllm",
       "A document-summarization client starts at 100 s: 16-28k-token uncached prompts at "
       "~1/s; chunked prefill fills every step's 8k-token budget and chat ITL doubles; the "
       "job ends at 175 s.")
def _():
    big = lambda t, rng: dict(prompt=14000 + int(rng.random() * 8000), cached=0,
                              out=150 + int(rng.random() * 100))
    return serve("pf-vllm-h100-summarize-burst", "H100", "vllm", LLAMA8B, 1,
                 lambda t: 9.0 + 0.6 * pulse(t, 100, 175), mix(chat(cache=0.3), big,
                                                              lambda t: 0.0625 * pulse(t, 100, 175)),
                 280, onset=100, probe=("itl", 1.3), day=0, hour=11,
                 cfg=dict(max_model_len=32768))


@entry("pf-sglang-h200-gradual-long-prompts", "serving", "prefill_interference", "sglang",
       "SGLang (prefill batches between decode batches): the share of 10-14k-token prompts "
       "rises from 0 to ~25% over 60 s as a new integration ramps up; decode stalls behind "
       "prefill batches; moderate.")
def _():
    big = lambda t, rng: dict(prompt=10000 + int(rng.random() * 4000), cached=200,
                              out=120 + int(rng.random() * 200))
    return serve("pf-sglang-h200-gradual-long-prompts", "H200", "sglang", QWEN7B, 1,
                 lambda t: 6.0, mix(chat(cache=0.3), big, lambda t: 0.25 * pulse(
                     t, 95, 240, rise=60, fall=20)), 320, onset=95, probe=("itl", 1.25),
                 day=2, hour=15, cfg=dict(budget=8192))


@entry("pf-vllm-a100x2-rag-topk", "serving", "prefill_interference", "vllm",
       "A100 TP2 (no GPM): the RAG service raises top-k from 4 to 12 chunks at 90 s; "
       "prompts go from ~2k to ~6k uncached tokens; with a 2048-token budget every step "
       "carries a prefill chunk; fixed at 220 s.")
def _():
    def draw(t, rng):
        on = pulse(t, 90, 220)
        p = int((1500 + rng.random() * 1200) * (1 + 1.8 * on))
        return dict(prompt=p, cached=300, out=150 + int(rng.random() * 150))
    return serve("pf-vllm-a100x2-rag-topk", "A100", "vllm", MISTRAL24, 2, lambda t: 1.2, draw,
                 300, onset=90, probe=("itl", 1.3), day=3, hour=10, cfg=dict(budget=2048))


@entry("pf-llamacpp-l40s-log-paste", "serving", "prefill_interference", "llamacpp",
       "llama-server on an L40S, 4 slots: from 105 s users paste 12-20k-token logs; prompt "
       "tokens ride in the decode batches (n_batch 2048) and the other slots' generation "
       "slows; counters only.")
def _():
    big = lambda t, rng: dict(prompt=12000 + int(rng.random() * 8000), cached=0,
                              out=200 + int(rng.random() * 200))
    return serve("pf-llamacpp-l40s-log-paste", "L40S", "llamacpp", GEMMA12Q, 1,
                 lambda t: 0.6, mix(chat(pmu=6.0, omu=5.6, cache=0.5), big,
                                    lambda t: 0.25 * pulse(t, 105, 215)),
                 300, onset=105, probe=("itl", 1.3), day=3, hour=13, cfg=dict(max_seqs=6))


# =====================================================================================
# oversized_request (4)
# =====================================================================================

def oversized_draw(base, t_on, t_off, every, fields):
    """A client that sends one heavy request at a time, in a loop, between t_on and t_off."""
    state = {"next": t_on}

    def draw(t, rng):
        if t_on <= t < t_off and t >= state["next"]:
            state["next"] = t + every
            return dict(fields)
        return base(t, rng)
    return draw


@entry("or-vllm-h100-n8-logprobs", "serving", "oversized_request", "vllm",
       "An evaluation script loops one request n=8, logprobs=20, max_tokens=512 from 95 s to "
       "200 s (vLLM #37343's shape): its per-step logprob work stalls every co-scheduled "
       "request; ITL ~2.5x, tokens/s barely moves.")
def _():
    heavy = dict(prompt=1500, cached=32, out=512, n=8, logprobs=20, max_tokens=512,
                 cpu_x=0.018, gpu_x=0.004)
    base = chat(cache=0.3)
    return serve("or-vllm-h100-n8-logprobs", "H100", "vllm", LLAMA8B, 1, lambda t: 8.0,
                 oversized_draw(base, 95, 200, 13.0, heavy), 290, onset=95,
                 probe=("itl", 1.3), day=0, hour=15)


@entry("or-vllm-a100-maxtokens-logprobs", "serving", "oversized_request", "vllm",
       "A100 (no GPM): a single request with max_tokens=30000 and logprobs=5 from a data-"
       "generation job runs for minutes; each step carries its logprob processing (moderate: "
       "ITL about +40%) until it is cancelled at 235 s.")
def _():
    heavy = dict(prompt=3000, cached=0, out=30000, n=1, logprobs=5, max_tokens=30000,
                 cpu_x=0.012, gpu_x=0.002)
    state = {"sent": False}
    base = chat(cache=0.3)

    def draw(t, rng):
        if t >= 100 and not state["sent"]:
            state["sent"] = True
            return dict(heavy)
        return base(t, rng)
    s = serve("or-vllm-a100-maxtokens-logprobs", "A100", "vllm", QWEN7B, 1, lambda t: 6.0, draw,
              300, onset=100, probe=("itl", 1.25), day=4, hour=9)

    def cancel(w):
        for r in list(w.sim.running):
            if r.out == 30000:
                w.sim.remove(r)
                w.sim.finish(r)
    s.events.append(ev(235, cancel))
    return s


@entry("or-sglang-h200-n16-toplogprobs", "serving", "oversized_request", "sglang",
       "A customer sends n=16 requests with return_logprob and top_logprobs_num=20 over "
       "6k-token prompts, a few at a time, from 110 s to 190 s: each one multiplies the "
       "per-step sampling work and everyone's ITL rises.")
def _():
    heavy = dict(prompt=6000, cached=0, out=400, n=16, logprobs=20, max_tokens=1024,
                 cpu_x=0.016, gpu_x=0.005)
    return serve("or-sglang-h200-n16-toplogprobs", "H200", "sglang", QWEN7B, 1, lambda t: 10.0,
                 oversized_draw(chat(cache=0.3), 110, 190, 8.0, heavy), 290, onset=110,
                 probe=("itl", 1.3), day=4, hour=17)


@entry("or-llamacpp-l40s-nprobs", "serving", "oversized_request", "llamacpp",
       "llama-server: one client sets n_probs=50 with n_predict=4096 at 95 s; the probabilities "
       "are sorted over the 262k vocabulary on the CPU for every token, so every decode call "
       "waits; the request ends at ~205 s.")
def _():
    heavy = dict(prompt=800, cached=0, out=4096, n=1, logprobs=50, max_tokens=4096,
                 cpu_x=0.028, gpu_x=0.0)
    state = {"sent": False}
    base = chat(pmu=6.0, omu=5.4, cache=0.5)

    def draw(t, rng):
        if t >= 95 and not state["sent"]:
            state["sent"] = True
            return dict(heavy)
        return base(t, rng)
    return serve("or-llamacpp-l40s-nprobs", "L40S", "llamacpp", GEMMA12Q, 1, lambda t: 0.8,
                 draw, 300, onset=95, probe=("itl", 1.3), day=5, hour=11)


# =====================================================================================
# throttling (5)
# =====================================================================================

@entry("th-vllm-h100x8-tp8-thermal-rank5", "serving", "throttling", "vllm",
       "8x H100, TP8 70B: GPU 5's cooling degrades at 80 s (blocked airflow); it heats "
       "slowly, reaches its slowdown temperature and the driver cuts its clock; every TP "
       "step waits for it.  Airflow restored at 260 s.", culprit=(5,))
def _():
    s = serve("th-vllm-h100x8-tp8-thermal-rank5", "H100", "vllm", LLAMA70B, 8, lambda t: 9.0,
              chat(pmu=7.2, cache=0.3), 340, onset=80, probe=("clock", 0.06, (5,)),
              day=1, hour=13, cfg=dict(max_seqs=256))
    s.events += [setattr_ev(80, "gpus.5.cooling", 4.6), setattr_ev(260, "gpus.5.cooling", 1.0)]
    return s


@entry("th-train-h200x4-power-brake", "training", "throttling", "trainer",
       "4x H200 FSDP with a tokens counter: the node's power brake is asserted at 100 s (a "
       "PSU fault): every GPU drops to ~35% clock with HW slowdown / power brake; cleared at "
       "170 s.")
def _():
    s = train("th-train-h200x4-power-brake", "H200", 4, 8e9, 4 * 8 * 4096, 280, onset=100,
              probe=("clock", 0.15), day=2, hour=2)
    for i in range(4):
        s.events += [setattr_ev(100, f"gpus.{i}.external", "power brake"),
                     setattr_ev(100, f"gpus.{i}.external_factor", 0.35),
                     setattr_ev(170, f"gpus.{i}.external", None)]
    return s


@entry("th-ddp-a100x4-hwslowdown-gpu2", "training", "throttling", "none",
       "4x A100 DDP, no work counter: GPU 2 reports HW slowdown from 90 s to 205 s (a "
       "failing power stage): its clock halves, the other ranks wait in NCCL.",
       culprit=(2,))
def _():
    s = train("th-ddp-a100x4-hwslowdown-gpu2", "A100", 4, 1.3e9, 4 * 16 * 2048, 300,
              onset=90, probe=("clock", 0.15, (2,)), day=3, hour=4, counter="")
    s.events += [setattr_ev(90, "gpus.2.external", "hw slowdown"),
                 setattr_ev(90, "gpus.2.external_factor", 0.48),
                 setattr_ev(205, "gpus.2.external", None)]
    return s


@entry("th-vllm-l40s-admin-power-cap", "serving", "throttling", "vllm",
       "An admin caps the L40S at 170 W (nvidia-smi -pl) at 100 s to fit a rack budget; "
       "'power cap' holds the clock down under load; ITL +30-40%; cap lifted at 235 s.")
def _():
    s = serve("th-vllm-l40s-admin-power-cap", "L40S", "vllm", QWEN7B, 1, lambda t: 5.0,
              chat(cache=0.3, omu=5.0), 300, onset=100, probe=("clock", 0.1), day=5, hour=16)
    s.events += [setattr_ev(100, "gpus.0.power_limit", 170.0),
                 setattr_ev(235, "gpus.0.power_limit", 350.0)]
    return s


@entry("th-train-h100x8-inlet-heat", "training", "throttling", "trainer",
       "8x H100 DDP: a CRAC unit fails at 70 s and the inlet air warms ~28-31 C over two "
       "minutes; the hottest boards reach their slowdown temperature and clocks sag one "
       "after another; cooling back at 250 s.")
def _():
    s = train("th-train-h100x8-inlet-heat", "H100", 8, 7e9, 8 * 8 * 4096, 340, onset=70,
              probe=("clock", 0.05), day=6, hour=14, tick=2.0)
    for k in range(0, 36):
        t = 70 + 5 * k
        for i in range(8):
            val = min(28.0, 28.0 * (t - 70) / 120) if t < 250 else max(0.0, 28 - (t - 250) * 1.2)
            s.events.append(setattr_ev(t, f"gpus.{i}.inlet_extra", val * (1 + 0.06 * (i % 3))))
            # recirculating hot air also makes each heatsink less effective
            s.events.append(setattr_ev(t, f"gpus.{i}.cooling", 1 + 0.5 * val / 28.0))
    return s


# =====================================================================================
# collective_straggler (3)
# =====================================================================================

@entry("cs-fsdp-h100x8-uneven-packing", "training", "collective_straggler", "trainer",
       "8x H100 FSDP: after a data-shard rotation at 90 s rank 3's packed sequences are ~1.7x "
       "longer (a packing bug); it computes longer with its clock intact, the other seven "
       "sit in NCCL; fixed at 230 s.", culprit=(3,))
def _():
    return train("cs-fsdp-h100x8-uneven-packing", "H100", 8, 7e9, 8 * 4 * 4096, 300, onset=90,
                 probe=("step", 1.2), day=2, hour=6,
                 tkw=dict(slow=lambda t, r: 1.7 if (r == 3 and 90 <= t < 230) else 1.0))


@entry("cs-ep-h200x4-hot-expert", "training", "collective_straggler", "none",
       "4x H200 MoE training with expert parallelism, no counter: router collapse sends "
       "~45% more tokens to the experts on GPU 1 from 100 s; GPU 1 is the slow rank (clock "
       "intact), the others wait in the all-to-all; load-balancing loss recovers it by 250 s.",
       culprit=(1,))
def _():
    return train("cs-ep-h200x4-hot-expert", "H200", 4, 3.0e9, 4 * 8 * 4096, 320, onset=100,
                 probe=("step", 1.15), day=4, hour=1, counter="",
                 tkw=dict(slow=lambda t, r: 1 + 0.45 * pulse(t, 100, 220, rise=10, fall=30)
                          if r == 1 else 1.0))


@entry("cs-lora-h100x2-rank1-long-seqs", "training", "collective_straggler", "trainer",
       "2x H100 DDP LoRA: rank 1's shard of a new dataset mix has longer examples (moderate, "
       "~1.3x compute) from 95 s; rank 0 waits in NCCL each step; the shard ends at 215 s.",
       culprit=(1,))
def _():
    return train("cs-lora-h100x2-rank1-long-seqs", "H100", 2, 8e9 * 0.4, 2 * 8 * 2048, 290,
                 onset=95, probe=("step", 1.12), day=5, hour=2, counter="samples",
                 grad_bytes=80e6, step_gap=0.06,
                 tkw=dict(slow=lambda t, r: 1.32 if (r == 1 and 95 <= t < 215) else 1.0))


# =====================================================================================
# input_stall (2)
# =====================================================================================

@entry("is-lora-h100-nfs-slowdown", "training", "input_stall", "trainer",
       "LoRA fine-tune on one H100 with a samples counter: the NFS server backing the "
       "dataset degrades at 100 s; each batch takes ~5 s to read with 4 workers, so the "
       "step waits for data; storage recovers at 225 s.")
def _():
    return train("is-lora-h100-nfs-slowdown", "H100", 1, 8e9 * 0.45, 8 * 2048, 300, onset=100,
                 probe=("step", 1.3), day=1, hour=3, counter="samples", workers=4, fetch_s=0.35,
                 tkw=dict(fetch=lambda t: 0.35 + 5.5 * pulse(t, 100, 225)),
                 setup=dict(cmd="/opt/venv/bin/python finetune_lora.py --base "
                                "meta-llama/Llama-3.1-8B --data /mnt/nfs/sft/v7"))


@entry("is-ddp-a100x4-objectstore-throttle", "training", "input_stall", "none",
       "4x A100 DDP streaming shards from an object store, no counter: the bucket starts "
       "throttling at 110 s (rate limit); batch fetches slow over ~30 s to ~4x the step "
       "time; the throttling lifts at 250 s.")
def _():
    return train("is-ddp-a100x4-objectstore-throttle", "A100", 4, 1.3e9, 4 * 16 * 2048, 320,
                 onset=110, probe=("step", 1.3), day=6, hour=5, counter="", workers=6,
                 fetch_s=1.2, tick=2.0,
                 tkw=dict(fetch=lambda t: 1.2 + 16.0 * pulse(t, 110, 250, rise=30, fall=10)))


# =====================================================================================
# host_launch_jitter (2)
# =====================================================================================

@entry("hj-vllm-h100-irq-on-launch-core", "serving", "host_launch_jitter", "vllm",
       "eBPF on.  At 90 s a NIC's interrupts are re-affined onto the CPU running vLLM's "
       "engine-core thread: softirq bursts preempt it for ~10-14 ms in ~40% of the steps; the "
       "launch histograms grow a millisecond tail; irqbalance fixed at 220 s.")
def _():
    s = serve("hj-vllm-h100-irq-on-launch-core", "H100", "vllm", QWEN7B, 1, lambda t: 14.0,
              chat(cache=0.3, omu=5.0), 300, onset=90, probe=("itl", 1.15), day=0, hour=19,
              ebpf=True,
              ctl=dict(jitter=lambda t: (0.4, 0.012) if 90 <= t < 220 else (0.0, 0.0)))
    s.events += [setattr_ev(90, "host.irq", 0.18), setattr_ev(220, "host.irq", 0.0)]
    return s


@entry("hj-train-h200x2-rt-agent", "training", "host_launch_jitter", "trainer",
       "eBPF on.  2x H200 training a small model (launch-bound): a security agent at "
       "real-time priority lands on rank 0's launch core at 100 s and preempts it ~80 "
       "times a second for ~5 ms; step time +20-25%; agent moved at 230 s.", culprit=(0,))
def _():
    return train("hj-train-h200x2-rt-agent", "H200", 2, 1.5e9, 2 * 8 * 2048, 300, onset=100,
                 probe=("step", 1.1), day=3, hour=22, launch_per_step=9000,
                 tkw=dict(jitter=lambda t, r: (120.0, 0.005) if (90 + 10 <= t < 230) else
                          (0.0, 0.0)), setup=dict(ebpf=True,
                                                  events=[(100, lambda w: setattr(w.host, "irq", 0.1)),
                                                          (230, lambda w: setattr(w.host, "irq", 0.0))]))


# =====================================================================================
# host_cpu_contention (3)
# =====================================================================================

@entry("hc-vllm-h100-cgroup-quota", "serving", "host_cpu_contention", "vllm",
       "An in-place pod resize at 90 s sets a 1-core CPU limit on the vLLM pod; the engine "
       "core, API server and detokenizer want ~1.4 cores: the cgroup is throttled most "
       "periods, steps wait for the CPU; limit removed at 225 s.")
def _():
    s = serve("hc-vllm-h100-cgroup-quota", "H100", "vllm", LLAMA8B, 1, lambda t: 10.0,
              chat(cache=0.3), 300, onset=90, probe=("share", 0.85), day=1, hour=11,
              container="containerd:8c1d2e3f4a5b", pod="inference/llama8b-7d9c6-x2f4q")
    s.events += [setattr_ev(90, "host.quota", 1.0), setattr_ev(225, "host.quota", None)]
    return s


@entry("hc-train-h100x4-compile-neighbour", "training", "host_cpu_contention", "trainer",
       "4x H100 DDP with a tokens counter on a 16-core cpuset: a neighbour's build job (40 "
       "threads) lands on the same cores at 100 s; run queue and PSI climb, the ranks' "
       "launch threads get ~35% of a core; build ends at 225 s.")
def _():
    s = train("hc-train-h100x4-compile-neighbour", "H100", 4, 0.35e9, 4 * 8 * 1024, 300,
              onset=100, probe=("share", 0.85), day=2, hour=20, launch_per_step=7000, fetch_s=0.04,
              setup=dict(set_cores=8, base_busy=6.0))
    s.events += [setattr_ev(100, "host.hogs", 26.0), setattr_ev(225, "host.hogs", 0.0)]
    return s


@entry("hc-sglang-h200-preprocess-pods", "serving", "host_cpu_contention", "sglang",
       "eBPF on.  SGLang on an 8-core cpuset; CPU-heavy preprocessing pods are scheduled onto "
       "the same cores at 95 s (no CPU limits): run queue ~30, PSI high, the scheduler thread "
       "gets a fraction of a core (launch tails follow); pods evicted at 215 s.")
def _():
    s = serve("hc-sglang-h200-preprocess-pods", "H200", "sglang", QWEN7B, 1, lambda t: 12.0,
              chat(cache=0.3, omu=5.0), 300, onset=95, probe=("share", 0.8), day=4, hour=13,
              ebpf=True)
    s.events += [setattr_ev(95, "host.hogs", 22.0), setattr_ev(215, "host.hogs", 0.0)]
    return s


# =====================================================================================
# tiny_kernels (2)
# =====================================================================================

@entry("tk-train-h200x2-per-param-gradnorm", "training", "tiny_kernels", "trainer",
       "2x H200: at 100 s a debugging hook turns on per-parameter gradient-norm logging with "
       "foreach off: ~25k small kernels (a few blocks each, ~14 us) per step keep the GPU "
       "'busy' while SMs idle; tokens/s -35%; hook off at 210 s.")
def _():
    return train("tk-train-h200x2-per-param-gradnorm", "H200", 2, 3e9, 2 * 8 * 2048, 290,
                 onset=100, probe=("step", 1.15), day=0, hour=4, step_gap=0.03,
                 tkw=dict(tiny=lambda t: 25000 if 100 <= t < 210 else 0))


@entry("tk-grpo-h100x4-debatched-reward", "training", "tiny_kernels", "none",
       "4x H100 RL job, no counter: a reward-function change at 110 s scores samples one by "
       "one with a small on-GPU classifier (thousands of tiny kernels per step instead of one "
       "batched pass); GPU-Util stays ~100%, SM activity collapses; reverted at 240 s.")
def _():
    return train("tk-grpo-h100x4-debatched-reward", "H100", 4, 1.5e9, 4 * 8 * 2048, 310,
                 onset=110, probe=("step", 1.2), day=5, hour=21, counter="",
                 tkw=dict(tiny=lambda t: 60000 if 110 <= t < 240 else 0))


# =====================================================================================
# kv_pressure (2)
# =====================================================================================

@entry("kv-vllm-l40s-codegen-preempt", "serving", "kv_pressure", "vllm",
       "L40S: a code-generation client with 6-8k-token outputs starts at 95 s; running "
       "sequences outgrow the ~190k-token KV pool: preemptions (recompute), requests "
       "waiting for blocks, KV usage pinned near 100%; client throttled at 220 s.")
def _():
    big = lambda t, rng: dict(prompt=1500 + int(rng.random() * 1500), cached=500,
                              out=6000 + int(rng.random() * 2000), max_tokens=8192)
    return serve("kv-vllm-l40s-codegen-preempt", "L40S", "vllm", LLAMA8B, 1,
                 lambda t: 2.5 + 1.0 * pulse(t, 95, 220), mix(chat(cache=0.3, omu=5.0), big,
                                                              lambda t: 0.4 * pulse(t, 95, 220)),
                 300, onset=95, probe=("preempt", 8), day=2, hour=17, cfg=dict(max_seqs=128))


@entry("kv-sglang-h100x2-retractions", "serving", "kv_pressure", "sglang",
       "SGLang TP2 on H100: a surge of long-context chats (20k-token histories, not cached) "
       "from 100 s fills the token pool; decode retracts requests back to the queue again "
       "and again; surge over at 210 s.")
def _():
    big = lambda t, rng: dict(prompt=18000 + int(rng.random() * 6000), cached=0,
                              out=600 + int(rng.random() * 800))
    return serve("kv-sglang-h100x2-retractions", "H100", "sglang", QWEN32B, 2,
                 lambda t: 4.0 + 2.0 * pulse(t, 100, 210), mix(chat(cache=0.3), big,
                                                               lambda t: 0.45 * pulse(t, 100, 210)),
                 300, onset=100, probe=("preempt", 8), day=3, hour=16)


# =====================================================================================
# gpu_shared (2)
# =====================================================================================

def tenant(gpu, t_on, t_off, pid, name, cmd, mem, share):
    def procs(w, t):
        if t_on <= t < t_off:
            return [(gpu, pid, name, cmd, mem, 100 * share)]
        return []

    def other(t, g):
        return share if (g == gpu and t_on <= t < t_off) else 0.0
    return procs, other


@entry("gs-vllm-h100-notebook-tenant", "serving", "gpu_shared", "vllm",
       "A data scientist's notebook kernel starts training on the serving GPU at 95 s (no "
       "MIG, time-slicing): it takes ~45% of GPU time and 14 GiB; vLLM's steps take twice "
       "as long; the kernel is killed at 215 s.", culprit=(0,))
def _():
    procs, other = tenant(0, 95, 215, 48213, "python3", "/home/jlee/.venv/bin/python -m "
                          "ipykernel_launcher -f /home/jlee/.local/share/jupyter/runtime/"
                          "kernel-5c2.json", 14 * 2**30, 0.45)
    return serve("gs-vllm-h100-notebook-tenant", "H100", "vllm", LLAMA8B, 1, lambda t: 9.0,
                 chat(cache=0.3), 300, onset=95, probe=("other", 0.1), day=1, hour=15,
                 extra_procs=procs, other_gpu=other, cfg=dict(gpu_mem_util=0.72))


@entry("gs-train-l40s-inference-sidecar", "training", "gpu_shared", "trainer",
       "LoRA training on one L40S with a samples counter: at 100 s a Triton inference "
       "sidecar is scheduled onto the same GPU and takes ~35% of its time; it stays.",
       culprit=(0,))
def _():
    procs, other = tenant(0, 100, 10**9, 77102, "tritonserver", "/opt/tritonserver/bin/"
                          "tritonserver --model-repository=/models", 9 * 2**30, 0.35)
    return train("gs-train-l40s-inference-sidecar", "L40S", 1, 3e9, 8 * 1024, 280, onset=100,
                 probe=("other", 0.1), day=4, hour=6, counter="samples",
                 setup=dict(extra_procs=procs, other_gpu=other))


# =====================================================================================
# spec_decode_rejected (2)
# =====================================================================================

@entry("sd-vllm-h100-eagle-traffic-shift", "serving", "spec_decode_rejected", "vllm",
       "vLLM with an EAGLE drafter (3 tokens): from 100 s a new customer's traffic (code in "
       "a language the drafter never saw) takes over; acceptance falls from ~0.7 to ~0.1, "
       "the verify steps' work is wasted: each step yields fewer tokens, TPOT rises and the batch swells; their batch ends at 240 s.")
def _():
    return serve("sd-vllm-h100-eagle-traffic-shift", "H100", "vllm", LLAMA8B, 1,
                 lambda t: 6.0, chat(cache=0.3, omu=5.6), 300, onset=100,
                 probe=("lvl", 0.3), day=2, hour=10, cfg=dict(spec_k=3, spec_method="eagle"),
                 ctl=dict(spec_accept=lambda t: 0.72 - 0.62 * pulse(t, 100, 240, rise=15)),
                 level=lambda t: 0.62 * pulse(t, 100, 240, rise=15) / 0.72)


@entry("sd-sglang-h200-eagle-high-temperature", "serving", "spec_decode_rejected", "sglang",
       "SGLang with EAGLE (4 draft tokens): a client switches to temperature 1.3 / top_p 1.0 "
       "sampling at 95 s and dominates the batch; accept length falls from ~3 to ~1.2; "
       "TPOT up, more requests in flight; client back to defaults at 220 s.")
def _():
    return serve("sd-sglang-h200-eagle-high-temperature", "H200", "sglang", LLAMA8B, 1,
                 lambda t: 7.0, chat(cache=0.3, omu=5.6), 300, onset=95,
                 probe=("lvl", 0.3), day=5, hour=19, cfg=dict(spec_k=4, spec_method="eagle"),
                 ctl=dict(spec_accept=lambda t: 0.68 - 0.55 * pulse(t, 95, 220, rise=10)),
                 level=lambda t: 0.55 * pulse(t, 95, 220, rise=10) / 0.68)


# =====================================================================================
# healthy look-alikes
# =====================================================================================

@entry("ok-vllm-h100-morning-ramp", "serving", None, "vllm",
       "Diurnal ramp: 08:00-08:05 traffic climbs from 2 to 16 req/s; util, tokens/s, TTFT "
       "and batch size all rise together; nothing is wrong.")
def _():
    return serve("ok-vllm-h100-morning-ramp", "H100", "vllm", LLAMA8B, 1,
                 lambda t: 2.0 + 14.0 * ramp(t, 40, 280), chat(cache=0.3), 320, day=0, hour=8)


@entry("ok-vllm-h200-rolling-restart", "serving", None, "vllm",
       "A rolling deployment restarts the engine at 110 s (same config): ~50 s without a "
       "scrape or a context, counters restart from zero, traffic returns.")
def _():
    s = serve("ok-vllm-h200-rolling-restart", "H200", "vllm", QWEN32B, 1, lambda t: 5.0,
              chat(cache=0.3), 300, day=1, hour=10, up=lambda t: not (110 <= t < 160))
    s.events.append(setattr_ev(110, "tags.down_since", 110))
    return s


def grpo_phase(t, t0=0.0, roll=45.0, tr=35.0):
    k = (t - t0) % (roll + tr)
    return "rollout" if k < roll else "train"


@entry("ok-grpo-h100x4-rollout-train", "training", None, "trainer",
       "GRPO on 4x H100: 45 s of rollout generation (memory-bound decode, the step counter "
       "still) alternate with 35 s of policy training (compute-bound, counter moving).")
def _():
    return train("ok-grpo-h100x4-rollout-train", "H100", 4, 7e9, 4 * 4 * 4096, 330, day=0,
                 hour=22, tkw=dict(phase=grpo_phase))


@entry("ok-fsdp-h100x8-eval-checkpoint", "training", None, "trainer",
       "8x H100 FSDP: an evaluation pass (25 s, forward only, no counter progress) at 120 s "
       "and a checkpoint write (20 s, GPUs nearly idle) at 200 s, as scheduled.")
def _():
    def ph(t):
        if 120 <= t < 145:
            return "eval"
        if 200 <= t < 220:
            return "ckpt"
        return "train"
    return train("ok-fsdp-h100x8-eval-checkpoint", "H100", 8, 7e9, 8 * 4 * 4096, 300, day=1,
                 hour=1, tkw=dict(phase=ph))


@entry("ok-vllm-h200-idle-reserved-pool", "serving", None, "vllm",
       "Overnight: vLLM holds 90% of VRAM (weights + pre-reserved KV pool) with almost no "
       "traffic; GPU-Util ~0 while memory looks full.")
def _():
    return serve("ok-vllm-h200-idle-reserved-pool", "H200", "vllm", LLAMA8B, 1,
                 lambda t: 0.05, chat(cache=0.3), 300, day=2, hour=3)


@entry("ok-vllm-h100x8-70b-memory-bound", "serving", None, "vllm",
       "A 70B model with long-context traffic is memory-bound from the start (DRAM ~45-50%, "
       "tensor low) and stays so at constant load.")
def _():
    return serve("ok-vllm-h100x8-70b-memory-bound", "H100", "vllm", LLAMA70B, 8,
                 lambda t: 1.6, chat(pmu=9.0, psig=0.3, cache=0.6, pmax=24000, omu=6.3), 300,
                 day=2, hour=12, cfg=dict(max_model_len=32768))


@entry("ok-ddp-h100x8-warm-card", "training", None, "trainer",
       "8x H100 DDP: GPU 6 sits behind a warmer part of the chassis and always reads ~12 C "
       "hotter than its peers, below any slowdown temperature.")
def _():
    return train("ok-ddp-h100x8-warm-card", "H100", 8, 7e9, 8 * 8 * 4096, 300, day=3, hour=7,
                 setup=dict(warm={6: 12.0}))


@entry("ok-offline-vllm-h100x2-batch-finishes", "other", None, "none",
       "Offline batch inference (vLLM's LLM class, no /metrics) over a dataset: saturated "
       "until the last prompts finish at ~175 s, then the process exits and the GPUs go idle.")
def _():
    s = serve("ok-offline-vllm-h100x2-batch-finishes", "H100", "vllm", MISTRAL24, 2,
              lambda t: 0.0, chat(cache=0.1, omu=5.8), 280, day=3, hour=2, metrics=False,
              cmd="/opt/venv/bin/python batch_generate.py --model mistralai/Mistral-Small-24B-"
                  "Instruct-2501 --tp 2 --input s3://evals/prompts-0412.jsonl",
              cfg=dict(backlog=200))

    def stop(w):
        w.sim.cfg.backlog = 0
        w.sim.waiting.clear()
    s.events.append(ev(150, stop))
    s.done_at = 185.0
    return s


@entry("ok-sglang-h200-long-prompts-with-headroom", "serving", None, "sglang",
       "Traffic shifts gradually to longer prompts (RAG adoption) over three minutes; the "
       "engine has headroom: TTFT and ITL rise a little, throughput holds.")
def _():
    def draw(t, rng):
        g = ramp(t, 60, 240)
        p = int((700 + rng.random() * 900) * (1 + 1.6 * g))
        return dict(prompt=p, cached=int(p * 0.4), out=150 + int(rng.random() * 200))
    return serve("ok-sglang-h200-long-prompts-with-headroom", "H200", "sglang", LLAMA8B, 1,
                 lambda t: 5.0, draw, 300, day=4, hour=10)


@entry("ok-train-h200-at-power-cap", "training", None, "trainer",
       "One H200 training a dense model flat out: it sits at its 700 W limit with 'power "
       "cap' set and the clock around 1.5 GHz the whole time (as the lab's matmul did).")
def _():
    return train("ok-train-h200-at-power-cap", "H200", 1, 2.5e9, 16 * 2048, 240, day=4, hour=3,
                 mfu=0.62, t_opt=0.01, tick=0.5)


@entry("ok-llamacpp-l40s-bursty-users", "serving", None, "llamacpp",
       "A team's llama-server: bursts of a few requests with idle minutes between; util "
       "swings 0-90%, nothing wrong.")
def _():
    return serve("ok-llamacpp-l40s-bursty-users", "L40S", "llamacpp", GEMMA12Q, 1,
                 lambda t: 1.6 if (t % 70) < 25 else 0.02, chat(pmu=6.2, omu=5.5, cache=0.5),
                 300, day=5, hour=10)


@entry("ok-lora-a100-steady", "training", None, "trainer",
       "A LoRA fine-tune on one A100 (no GPM), steady; a few scrapes time out.")
def _():
    return train("ok-lora-a100-steady", "A100", 1, 8e9 * 0.4, 8 * 2048, 260, day=5, hour=4,
                 counter="samples", step_gap=0.09, setup=dict(miss_p=0.04))


@entry("ok-vllm-h100-short-burst-drains", "serving", None, "vllm",
       "A 10 s burst of short requests at 130 s: a brief queue that drains within seconds.")
def _():
    return serve("ok-vllm-h100-short-burst-drains", "H100", "vllm", QWEN7B, 1,
                 lambda t: 8.0 + 40.0 * pulse(t, 130, 140), chat(cache=0.3, omu=4.5), 270,
                 day=6, hour=12, cfg=dict(max_seqs=64))


@entry("ok-vllm-h100-spec-natural-variation", "serving", None, "vllm",
       "Speculative decoding whose acceptance wanders 0.55-0.72 with the traffic mix, as it "
       "always does.")
def _():
    import math
    return serve("ok-vllm-h100-spec-natural-variation", "H100", "vllm", LLAMA8B, 1,
                 lambda t: 6.0, chat(cache=0.3, omu=5.6), 300, day=6, hour=16,
                 cfg=dict(spec_k=3, spec_method="ngram"),
                 ctl=dict(spec_accept=lambda t: 0.64 + 0.07 * math.sin(t / 23.0)))


@entry("ok-vllm-l40s-small-model", "serving", None, "vllm",
       "A 0.5B model on an L40S: GPU-Util modest and the kernels small from the very start "
       "(host-bound steps); nothing changes.")
def _():
    small = Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 0.49e9, 24, 896, 12288, vocab=151936)
    return serve("ok-vllm-l40s-small-model", "L40S", "vllm", small, 1, lambda t: 6.0,
                 chat(cache=0.3), 260, day=0, hour=13)


@entry("ok-vllm-h100-kv-fills-no-preemption", "serving", None, "vllm",
       "Long chat sessions accumulate: KV usage climbs from ~10% to ~60-70% over four minutes without a "
       "preemption or a queue.")
def _():
    def draw(t, rng):
        hist = int(ramp(t, 30, 260) * (2500 + rng.random() * 3500))
        p = 500 + hist
        return dict(prompt=p, cached=hist, out=400 + int(rng.random() * 400))
    return serve("ok-vllm-h100-kv-fills-no-preemption", "H100", "vllm", QWEN32B, 2,
                 lambda t: 2.0 + 1.0 * ramp(t, 30, 260), draw, 300, day=1, hour=18)


@entry("ok-vllm-h100-monitoring-process", "serving", None, "vllm",
       "A DCGM exporter pod starts at 100 s and opens a context on the GPU (a second process, "
       "~0.5 GiB, no kernels): nothing is shared but the process list.")
def _():
    procs, _ = tenant(0, 100, 10**9, 31877, "nv-hostengine", "/usr/bin/nv-hostengine -n "
                      "--service-account nvidia-dcgm", 2**29, 0.0)
    return serve("ok-vllm-h100-monitoring-process", "H100", "vllm", LLAMA8B, 1, lambda t: 8.0,
                 chat(cache=0.3), 280, day=3, hour=14, extra_procs=procs)


@entry("ok-ddp-a100x4-steady-nocounter", "training", None, "none",
       "4x A100 DDP without a counter, steady; ticks of 2 s.")
def _():
    return train("ok-ddp-a100x4-steady-nocounter", "A100", 4, 1.3e9, 4 * 16 * 2048, 300,
                 day=6, hour=2, counter="", tick=2.0, step_gap=0.05, mfu=0.36)


@entry("ok-train-h100x2-epoch-boundary", "training", None, "trainer",
       "2x H100: at the epoch boundary (150 s) the loader workers are re-spawned and the "
       "first batches of the new epoch take ~8 s; then steady again.")
def _():
    return train("ok-train-h100x2-epoch-boundary", "H100", 2, 3e9, 2 * 8 * 2048, 300, day=6,
                 hour=9, workers=8, fetch_s=0.8,
                 tkw=dict(fetch=lambda t: 0.8 + 40.0 * pulse(t, 150, 154)))


@entry("ok-vllm-a100-moe-steady-half-tick", "serving", None, "vllm",
       "Qwen3-30B-A3B (MoE) on one A100 at steady load, sampled every 0.5 s.")
def _():
    return serve("ok-vllm-a100-moe-steady-half-tick", "A100", "vllm", QWEN30A3, 1,
                 lambda t: 7.0, chat(cache=0.3), 200, day=4, hour=20, tick=0.5)
