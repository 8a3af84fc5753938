"""The traces.  Each is a function that sets up a World (GPUs, workloads, what happens
when); ``run`` turns it into frames and a Truth.  t is seconds since the trace began."""

from __future__ import annotations

from dataclasses import dataclass

from . import Truth
from .build import (between, const, fixed, hog_unit, idle_proc, llamacpp_unit, lognorm, ramp,
                    sglang_unit, trainer_unit, vllm_unit)
from .hw import SPECS
from .models import (LLAMA3B_Q4, LLAMA8, LLAMA8_FP8, LLAMA8_Q4, LLAMA70, LLAMA70_FP8, QWEN05,
                     QWEN7, QWEN7_Q8, QWEN15, QWEN3_8, QWEN3_30A3, QWEN3_235_FP8, QWEN32_FP8)
from .serving import Client, Engine
from .training import Trainer
from .world import EngineGroup, World

GiB = 2**30


@dataclass
class Def:
    name: str
    family: str
    cause: str | None
    engine: str
    gpu: str
    n: int
    tick: float
    duration: float
    window: tuple[float, float] | None
    culprit: tuple[int, ...] | None
    note: str
    fn: object
    world_kw: dict


REGISTRY: list[Def] = []


def trace(name, family, cause, engine, gpu, n, *, duration, tick=1.0, window=None, culprit=None,
          note="", **world_kw):
    def deco(fn):
        REGISTRY.append(Def(name, family, cause, engine, gpu, n, tick, duration, window, culprit, note,
                            fn, world_kw))
        return fn
    return deco


def run(d: Def):
    w = World(d.name, d.gpu, d.n, d.duration, d.tick, **d.world_kw)
    d.fn(w)
    frames = w.frames()
    start = frames[0].time_wall_s - d.tick  # the first frame closes the first tick
    window = None
    if d.window is not None:
        window = (round(w.start_wall + d.window[0], 3), round(w.start_wall + d.window[1], 3))
    truth = Truth(name=d.name, family=d.family, cause=d.cause, culprit_gpus=d.culprit, window=window,
                  engine=d.engine, gpus=d.n, gpu_model=SPECS[d.gpu].name, tick_s=d.tick, note=d.note,
                  start_wall_s=round(start, 3))
    return truth, frames


def rng_of(w: World, tag: str):
    import random

    from .world import seed_of
    return random.Random(seed_of(w.name + "/" + tag))


def mods(w: World, fn):
    w.mods = fn


# ============================================================================ helpers
def vllm(w, model, gpus, clients, tag="e", **kw):
    kw.setdefault("max_model_len", 32768)
    return Engine("vllm", model, w.spec, gpus, rng_of(w, tag), clients, **kw)


def sglang(w, model, gpus, clients, tag="e", **kw):
    kw.setdefault("h0", 0.0022)
    kw.setdefault("h1", 18e-6)
    kw.setdefault("overlap", 0.85)
    kw.setdefault("block", 1)
    kw.setdefault("mem_util", 0.88)
    kw.setdefault("url", "http://127.0.0.1:30000/metrics")
    return Engine("sglang", model, w.spec, gpus, rng_of(w, tag), clients, **kw)


def llamacpp(w, model, clients, tag="e", **kw):
    kw.setdefault("h0", 0.0015)
    kw.setdefault("h1", 0.00025)
    kw.setdefault("overlap", 0.0)
    kw.setdefault("budget", 2048)
    kw.setdefault("kernels_per_layer", 10)
    kw.setdefault("url", "http://127.0.0.1:8080/metrics")
    return Engine("llamacpp", model, w.spec, [0], rng_of(w, tag), clients, **kw)


def _fn(v):
    return v if callable(v) else const(v)


def chat(rate, *, prompt=900, out=220, max_tokens=1024, cached=0.3, name="chat", **kw):
    return Client(name, lognorm(prompt, 0.8, 16, 12000), lognorm(out, 0.75, 4, max_tokens), rate=_fn(rate),
                  max_tokens=max_tokens, cached=cached, **kw)


def users(n, *, prompt=900, out=220, max_tokens=1024, think=(1.0, 6.0), cached=0.3, name="users", **kw):
    return Client(name, lognorm(prompt, 0.7, 16, 16000), lognorm(out, 0.7, 4, max_tokens), users=_fn(n),
                  think=think, max_tokens=max_tokens, cached=cached, **kw)


def llm_trainer(w, gpus, *, compute_s, tokens_per_step, comm_s=0.2, mem=62 * GiB, **kw):
    kw.setdefault("duty", 0.97)
    kw.setdefault("sm_fill", 0.9)
    kw.setdefault("tensor", 0.55)
    kw.setdefault("dram", 0.33)
    kw.setdefault("occ", 0.4)
    kw.setdefault("workers", 4)
    kw.setdefault("batch_cpu_s", 0.25)
    kw.setdefault("host_s", 0.35 * compute_s)
    kw.setdefault("launches_per_step", 24000)
    kw.setdefault("nvl_gb_per_step", 40.0 if len(gpus) > 1 else 0.0)
    return Trainer(w.spec, gpus, rng_of(w, "t"), w.duration, work_per_step=tokens_per_step,
                   compute_s=compute_s, comm_s=comm_s if len(gpus) > 1 else 0.0, mem_bytes=mem, **kw)


# ============================================================================ HEALTHY
@trace("healthy-h200-hostbound-small-model", "healthy", None, "vllm", "H200", 1, duration=300, cpus=16,
       note="Qwen2.5-0.5B behind a Python serving loop on an H200: ~15% GPU-Util and ~1.5% SM at "
            "~480 tok/s (the real lab's numbers); the client fleet grows from 16 to 24 users and back.")
def _(w):
    e = vllm(w, QWEN05, [0], [Client("fleet", fixed(128), fixed(128), max_tokens=128,
                                     users=ramp((0, 16), (140, 16), (150, 24), (230, 24), (240, 16)))],
             **LAB_SERVE)
    vllm_unit(w, e, pid0=598, cores=(2, 3))


LAB_SERVE = dict(kv_tokens=491520, h0=0.0235, h1=0.0002, overlap=0.0, graphs=False, kernels_per_layer=28,
                 t_kernel=7.5e-6, proc_mem=int(8.84 * GiB), max_model_len=8192, kv_read_mult=2.5,
                 url="http://127.0.0.1:48103/metrics")


@trace("healthy-h200-lab-trainer", "healthy", None, "trainer", "H200", 1, duration=240, cpus=16,
       note="Qwen2.5-0.5B training step loop (batch 8x512, 4 DataLoader workers) at ~13 steps/s, "
            "the lab's numbers: the token counter moves by ~53k every 1 s tick; steady.")
def _(w):
    tr = Trainer(w.spec, [0], rng_of(w, "t"), w.duration, **LAB_TRAIN)
    trainer_unit(w, tr, pid0=597, script=LAB_SCRIPT)


LAB_TRAIN = dict(work_per_step=4096, compute_s=0.072, duty=0.72, sm_fill=0.85, tensor=0.25, dram=0.40,
                 occ=0.42, workers=4, batch_cpu_s=0.02, host_s=0.06, launches_per_step=900,
                 mem_bytes=int(17.74 * GiB), step_jitter=0.12, main_cpu=0.5)
LAB_SCRIPT = "-m lab.train_loop --preset qwen2.5-0.5b --batch 8 --seq-len 512 --workers 4"


@trace("healthy-h100-vllm-night-decline", "healthy", None, "vllm", "H100", 1, duration=330,
       note="Llama-3.1-8B on an H100 as the evening ends: arrivals fall from 7 to 0.6 req/s over "
            "three minutes; tokens/s falls 5x while GPU-Util stays high (any request in flight "
            "makes every step read all weights); nothing is wrong.")
def _(w):
    e = vllm(w, LLAMA8, [0], [chat(ramp((0, 7.0), (90, 7.0), (270, 0.6)))])
    vllm_unit(w, e, pid0=31200)


@trace("healthy-h200-vllm-restart", "healthy", None, "vllm", "H200", 1, duration=360,
       note="Qwen3-8B on an H200 is redeployed: the process exits at 120 s, a new one loads "
            "weights, allocates its KV pool and answers from 185 s with counters back at zero.")
def _(w):
    e = vllm(w, QWEN3_8, [0], [chat(5.0), users(6, name="batch", think=(0.5, 2))])
    u = vllm_unit(w, e, pid0=88120)
    w.restart(u, down=120, up=136, ready=185, new_pid=91544)


@trace("healthy-8xh100-fsdp-eval-phase", "healthy", None, "trainer", "H100", 8, duration=330, cpus=192,
       note="Llama-3.1-8B FSDP on 8 H100s (3.4 s steps, power-capped at 700 W as such jobs are) "
            "runs its periodic evaluation from 150 to 196 s: forward only, lower SM, the token "
            "counter stops; then training resumes.")
def _(w):
    tr = llm_trainer(w, list(range(8)), compute_s=2.7, tokens_per_step=8 * 8 * 4096, comm_s=0.22)
    trainer_unit(w, tr, pid0=40210, script="train_fsdp.py --model llama3-8b --seq 4096 --mbs 8")
    w.mods = lambda t: {"mode": "eval" if between(t, 150, 196) else "train"}


@trace("healthy-h200-trainer-steady-powercap", "healthy", None, "trainer", "H200", 1, duration=300, cpus=32,
       note="A matmul-heavy 7B fine-tune on one H200 sits at its 700 W cap the whole time "
            "('power cap' set, clocks 1400-1550 MHz), as the real H200 did under bf16 matmul.")
def _(w):
    tr = llm_trainer(w, [0], compute_s=1.9, tokens_per_step=16 * 4096, sm_fill=0.97, tensor=0.72,
                     dram=0.30, mem=118 * GiB)
    trainer_unit(w, tr, pid0=7311, script="finetune.py --model qwen2.5-7b --bf16 --mbs 16")


@trace("healthy-h100-sglang-onoff-client", "healthy", None, "sglang", "H100", 1, duration=330,
       note="SGLang (an older release whose token counters move only when requests finish) serving "
            "Qwen2.5-7B to a trickle plus a batch client that bursts every ~40 s and goes quiet.")
def _(w):
    def burst(t):
        ph = t % 41.0
        return 18.0 if 8 <= ph < 21 else 0.0
    e = sglang(w, QWEN7, [0], [chat(0.6), chat(burst, prompt=600, out=160, name="batch")], sgl_realtime=False)
    sglang_unit(w, e, pid0=5120)


@trace("healthy-h200-vllm-high-kv-no-preemption", "healthy", None, "vllm", "H200", 1, duration=300,
       note="Llama-3.1-8B with a deliberately small KV pool (gpu_memory_utilization 0.3): 40 RAG "
            "users with 5k-token prompts and short answers keep KV usage near 90% without "
            "preemption; new requests wait briefly for blocks.")
def _(w):
    e = vllm(w, LLAMA8, [0], [Client("rag-users", lognorm(5200, 0.25, 1000, 9000), lognorm(60, 0.4, 4, 120),
                                     users=const(40), think=(0.3, 1.5), max_tokens=128, cached=0.5)],
             mem_util=0.3)
    vllm_unit(w, e, pid0=14222)


@trace("healthy-8xl40s-vllm-dp-one-drained", "healthy", None, "vllm", "L40S", 8, duration=300, cpus=128,
       note="vLLM data-parallel over 8 L40S (one engine per GPU behind one port): the router drains "
            "engine 3 for maintenance at 150 s, so GPU 3 goes quiet while the others carry on.")
def _(w):
    engs = []
    for i in range(8):
        rate = ramp((0, 2.2), (150, 2.2), (160, 0.05)) if i == 3 else const(2.2)
        engs.append(vllm(w, LLAMA8_FP8, [i], [chat(rate, out=180)], tag=f"e{i}", max_seqs=128))
    vllm_unit(w, EngineGroup(engs), pid0=22100, cores=tuple(range(0, 32)))


@trace("healthy-l40s-llamacpp-single-user", "healthy", None, "llamacpp", "L40S", 1, duration=300, cpus=32,
       note="llama.cpp serving Llama-3.2-3B Q4 to two people chatting: bursts of decoding between "
            "long pauses; its token counters move only when an answer completes.")
def _(w):
    e = llamacpp(w, LLAMA3B_Q4, [users(2, prompt=400, out=300, think=(8, 30), cached=0.8)])
    llamacpp_unit(w, e, pid0=1880)


@trace("healthy-h100-vllm-scrape-gaps", "healthy", None, "vllm", "H100", 1, duration=300,
       note="Llama-3.1-8B serving steadily while the /metrics scrape times out twice (15 s and "
            "25 s): readings are carried, then missing, then resume with the counters jumped.")
def _(w):
    e = vllm(w, LLAMA8, [0], [chat(5.5)])
    vllm_unit(w, e, pid0=3310)
    w.gaps = [(95, 110), (200, 225)]


@trace("healthy-4xa100-trainer-grad-accum-5s", "healthy", None, "trainer", "A100", 4, duration=400, tick=5.0,
       cpus=96, note="A 4xA100 fine-tune with gradient accumulation: an optimizer step every ~11.5 s, "
                     "a samples counter that moves once per step, sampled every 5 s; steady.")
def _(w):
    tr = llm_trainer(w, [0, 1, 2, 3], compute_s=11.2, tokens_per_step=4 * 64, comm_s=0.3, unit="samples",
                     counter="trainer_samples_total", tensor=0.5, mem=71 * GiB, nvl_gb_per_step=14)
    trainer_unit(w, tr, pid0=66000, script="sft.py --grad-accum 16 --model mistral-7b")


@trace("healthy-h100-vllm-spec-natural-variation", "healthy", None, "vllm", "H100", 1, duration=300,
       note="vLLM with EAGLE (4 draft tokens): per-token acceptance wanders between ~0.55 and "
            "~0.77 as the mix of prompts shifts; throughput follows a little; nothing breaks.")
def _(w):
    e = vllm(w, LLAMA8, [0], [chat(4.5)], spec_k=4, draft_frac=0.05)
    vllm_unit(w, e, pid0=9920, extra_args=" --speculative-config {\"method\":\"eagle\",\"num_speculative_tokens\":4}")
    import math
    w.mods = lambda t: {"spec_p": 0.66 + 0.1 * math.sin(t / 37.0) + 0.03 * math.sin(t / 7.3)}


@trace("healthy-h200-trainer-checkpoints", "healthy", None, "trainer", "H200", 1, duration=330, cpus=32,
       note="A LoRA fine-tune on one H200 (1.6 s steps) pauses twice to write checkpoints (25 s "
            "each): the GPU idles, the token counter stops, then training resumes.")
def _(w):
    tr = llm_trainer(w, [0], compute_s=1.55, tokens_per_step=8 * 2048, tensor=0.42, mem=54 * GiB)
    trainer_unit(w, tr, pid0=12877, script="train_lora.py --model llama3-8b --r 64")
    w.mods = lambda t: {"mode": "ckpt" if (between(t, 100, 125) or between(t, 232, 257)) else "train"}


@trace("healthy-h100-vllm-idle-notebook", "healthy", None, "vllm", "H100", 1, duration=300,
       note="Llama-3.1-8B serving; at 130 s someone's Jupyter kernel opens a CUDA context on the same "
            "GPU and holds 2.1 GiB without running anything.")
def _(w):
    e = vllm(w, LLAMA8, [0], [chat(5.0)], mem_util=0.85)
    vllm_unit(w, e, pid0=45001)
    idle_proc(w, 0, pid=51877, name="python3", cmdline="/home/alice/.venv/bin/python3 -m ipykernel_launcher -f kernel-3.json",
              mem=int(2.1 * GiB), start=130)


@trace("healthy-2xh100-vllm-rag-prefill-steady", "healthy", None, "vllm", "H100", 2, duration=300,
       note="Qwen2.5-32B (TP=2) answering RAG queries with 6-14k-token prompts from the start: "
            "prefill-heavy, high SM and tensor activity, long but steady inter-token latency.")
def _(w):
    e = vllm(w, QWEN32_FP8, [0, 1], [chat(0.9, prompt=9000, out=260, cached=0.1, name="rag")])
    vllm_unit(w, e, pid0=27000)


@trace("healthy-b200-sglang-morning-ramp", "healthy", None, "sglang", "B200", 1, duration=330,
       note="SGLang serving Qwen3-30B-A3B on a B200 as the morning starts: arrivals ramp from 2 to 9 "
            "req/s, power and temperature climb, clocks hold; nothing is wrong.")
def _(w):
    e = sglang(w, QWEN3_30A3, [0], [chat(ramp((0, 2.0), (60, 2.0), (300, 9.0)), out=300)])
    sglang_unit(w, e, pid0=6400)


@trace("healthy-2xh200-trainer-variable-steps-2s", "healthy", None, "trainer", "H200", 2, duration=360,
       tick=2.0, cpus=64,
       note="A 2xH200 DDP job packing variable-length sequences: steps take 0.8-1.6 s, the counter "
            "moves unevenly at 2 s ticks; steady on average.")
def _(w):
    tr = llm_trainer(w, [0, 1], compute_s=1.1, tokens_per_step=2 * 16 * 2048, comm_s=0.12, step_jitter=0.22,
                     mem=96 * GiB, nvl_gb_per_step=12)
    trainer_unit(w, tr, pid0=30500, script="train_ddp.py --pack --model qwen2.5-3b")


# ============================================================================ OVERSIZED REQUEST
@trace("oversized-h100-vllm-n8-logprobs", "serving", "oversized_request", "vllm", "H100", 1, duration=330,
       window=(110, 262),
       note="Qwen2.5-7B chat on an H100; at 110 s one request arrives with n=8, logprobs=20, a "
            "22k-token prompt and max_tokens=7000 that never hits EOS (152k vocabulary): eight ever "
            "longer sequences plus a batch-wide full-vocab logprob pass slow every co-scheduled "
            "request until it completes.")
def _(w):
    big = Client("eval-harness", fixed(22000), fixed(7000), users=const(1), think=(9999, 9999),
                 max_tokens=7000, n=8, logprobs=20, start=110, end=111)
    e = vllm(w, QWEN7, [0], [users(30, think=(0.5, 3), out=200), big], mfu_metrics=True)
    vllm_unit(w, e, pid0=17400)


@trace("oversized-h200-vllm-n64-shared-prompt", "serving", "oversized_request", "vllm", "H200", 1, duration=330,
       window=(120, 235),
       note="Llama-3.1-8B on an H200; at 120 s one best-of request arrives with n=64 over a "
            "30k-token prompt: the prompt is cached once but each of the 64 sequences reads its "
            "30k-token context every step, so every request's inter-token latency balloons until "
            "its 1200 tokens are out.")
def _(w):
    big = Client("best-of-64", fixed(30000), lognorm(1100, 0.1, 800, 1200), users=const(1), think=(9999, 9999),
                 max_tokens=1200, n=64, start=120, end=121)
    e = vllm(w, LLAMA8, [0], [chat(6.0), big])
    vllm_unit(w, e, pid0=20011)


@trace("oversized-l40s-llamacpp-nprobs", "serving", "oversized_request", "llamacpp", "L40S", 1, duration=330,
       cpus=32, window=(100, 265),
       note="llama.cpp (4 slots) serving Qwen2.5-7B Q8 on an L40S; at 100 s a client asks for "
            "n_probs=20 with max_tokens 6000: the server sorts the 152k-token vocabulary on the CPU "
            "for that slot each step, and every slot's decode slows while it runs.")
def _(w):
    big = Client("probs", fixed(800), fixed(6000), users=const(1), think=(9999, 9999), max_tokens=6000,
                 logprobs=20, start=100, end=101)
    e = llamacpp(w, QWEN7_Q8, [users(5, prompt=500, out=260, think=(2, 6), cached=0.6), big])
    llamacpp_unit(w, e, pid0=2290)


# ============================================================================ PREFILL INTERFERENCE
@trace("prefill-h100-vllm-rag-burst", "serving", "prefill_interference", "vllm", "H100", 1, duration=330,
       window=(100, 238),
       note="Llama-3.1-8B chat on an H100; from 100 to 230 s a RAG service sends 24k-token prompts "
            "at 0.6 req/s: chunked prefill of 8192 tokens per step stretches every decode step "
            "and the chat's inter-token latency and tokens/s suffer.")
def _(w):
    rag = Client("rag", lognorm(24000, 0.15, 12000, 32000), lognorm(180, 0.4, 20, 400), rate=const(0.6),
                 max_tokens=512, start=100, end=230)
    e = vllm(w, LLAMA8, [0], [chat(6.0), rag])
    vllm_unit(w, e, pid0=8870)


@trace("prefill-h200-sglang-mild-long-docs", "serving", "prefill_interference", "sglang", "H200", 1,
       duration=330, window=(140, 268),
       note="SGLang serving Qwen2.5-7B on an H200; a summarisation client ramps up from 120 s to "
            "0.45 req/s of 10k-token documents: each extend batch pauses all decodes, a mild but "
            "steady loss of decode throughput and latency.")
def _(w):
    docs = Client("summarise", lognorm(10000, 0.2, 5000, 16000), lognorm(250, 0.3, 50, 512),
                  rate=ramp((120, 0.0), (170, 0.45), (260, 0.45), (261, 0.0)), max_tokens=512, start=120, end=261)
    e = sglang(w, QWEN7, [0], [users(48, think=(0.5, 3), out=240), docs])
    sglang_unit(w, e, pid0=4410)


@trace("prefill-2xh100-vllm-batch-backlog", "serving", "prefill_interference", "vllm", "H100", 2, duration=330,
       window=(130, 225),
       note="Qwen2.5-32B-FP8 (TP=2) serving chat; at 130 s a batch job submits 150 documents of ~8k "
            "tokens at once with 16k-token prefill chunks: for about a minute and a half every "
            "decode step carries a huge prefill chunk.")
def _(w):
    batch = Client("batch", lognorm(8000, 0.15, 4000, 12000), lognorm(120, 0.3, 20, 300), rate=const(30.0),
                   max_tokens=300, start=130, end=135)
    e = vllm(w, QWEN32_FP8, [0, 1], [chat(3.0, out=200), batch], budget=16384)
    vllm_unit(w, e, pid0=61200)


# ============================================================================ COLLECTIVE STRAGGLER
@trace("straggler-8xh100-fsdp-packing-imbalance", "multi-gpu", "collective_straggler", "trainer", "H100", 8,
       duration=330, culprit=(5,), window=(110, 262), cpus=192,
       note="Llama-3.1-8B FSDP on 8 H100s; from 110 to 260 s rank 5's shard packs longer "
            "sequences (35% more attention work): the other seven ranks sit in NCCL waiting for "
            "it each step, their SM activity drops, steps stretch.")
def _(w):
    tr = llm_trainer(w, list(range(8)), compute_s=2.7, tokens_per_step=8 * 8 * 4096, comm_s=0.22)
    trainer_unit(w, tr, pid0=40210, script="train_fsdp.py --model llama3-8b --seq 4096 --mbs 8")
    w.mods = lambda t: {"rank_factor": {5: 1.35} if between(t, 110, 260) else {}}


@trace("straggler-4xh200-mild-gradual", "multi-gpu", "collective_straggler", "trainer", "H200", 4,
       duration=330, culprit=(2,), window=(135, 330), cpus=96,
       note="Qwen2.5-7B full fine-tune on 4 H200s (1.2 s steps); from 120 s rank 2's share of "
            "long samples grows until it computes 18% longer than the others, who wait for it.")
def _(w):
    tr = llm_trainer(w, [0, 1, 2, 3], compute_s=1.05, tokens_per_step=4 * 8 * 4096, comm_s=0.1,
                     mem=120 * GiB, nvl_gb_per_step=22)
    trainer_unit(w, tr, pid0=9001, script="train.py --model qwen2.5-7b --zero 2")
    f = ramp((120, 1.0), (180, 1.18))
    w.mods = lambda t: {"rank_factor": {2: f(t)}}


@trace("straggler-8xb200-sglang-ep-hot-expert", "multi-gpu", "collective_straggler", "sglang", "B200", 8,
       duration=330, culprit=(6,), window=(130, 258), cpus=224,
       note="SGLang serving Qwen3-235B-A22B-FP8 with expert parallelism over 8 B200s; from 130 to 250 s "
            "a traffic shift to code makes the experts on GPU 6 hot: it computes 60% longer per "
            "step and the other ranks wait in the all-to-all.")
def _(w):
    e = sglang(w, QWEN3_235_FP8, list(range(8)), [users(96, think=(0.5, 3), out=300)], max_seqs=512)
    sglang_unit(w, e, pid0=3100, cores=tuple(range(0, 64)))
    w.mods = lambda t: {"rank_factor": {6: 1.6} if between(t, 130, 250) else {}}


# ============================================================================ INPUT STALL
@trace("inputstall-h100-vit-nfs-cold", "training", "input_stall", "trainer", "H100", 1, duration=330, cpus=48,
       window=(135, 290),
       note="ViT-L image training on one H100 (samples counter, 0.42 s steps, 10 DataLoader "
            "workers); from 120 s the dataset is read from a cold NFS tier: workers wait on I/O, "
            "the prefetch queue drains and the GPU idles between steps until 280 s.")
def _(w):
    tr = Trainer(w.spec, [0], rng_of(w, "t"), w.duration, work_per_step=256, unit="samples",
                 counter="trainer_samples_total", compute_s=0.40, duty=0.93, sm_fill=0.88, tensor=0.5,
                 dram=0.35, occ=0.45, workers=10, batch_cpu_s=1.2, batch_io_s=0.4, host_s=0.12,
                 launches_per_step=3000, mem_bytes=58 * GiB, step_jitter=0.04)
    trainer_unit(w, tr, pid0=11800, script="train_vit.py --arch vit_l_16 --bs 256 --workers 10")
    io = ramp((120, 1.0), (150, 18.0), (270, 18.0), (280, 1.0))
    w.mods = lambda t: {"io_mult": io(t)}


@trace("inputstall-4xa100-resnet-jpeg-cpu", "training", "input_stall", "trainer", "A100", 4, duration=400,
       tick=2.0, cpus=64, window=(150, 400),
       note="ResNet-50 on 4 A100s (no GPM) with 6 DataLoader workers per rank, sampled every 2 s; "
            "at 150 s a shard of 4K-resolution JPEGs enters the mix: decoding costs 2.2x CPU, the "
            "workers run flat out and the GPUs wait for batches.")
def _(w):
    tr = Trainer(w.spec, [0, 1, 2, 3], rng_of(w, "t"), w.duration, work_per_step=4 * 256, unit="samples",
                 counter="trainer_samples_total", compute_s=0.34, comm_s=0.03, duty=0.95, sm_fill=0.85,
                 tensor=0.45, dram=0.5, occ=0.5, workers=6, batch_cpu_s=1.6, host_s=0.1,
                 launches_per_step=1200, mem_bytes=31 * GiB, nvl_gb_per_step=0.2, step_jitter=0.04)
    trainer_unit(w, tr, pid0=24400, script="train_resnet.py --arch resnet50 --bs 256 --workers 6 --amp")
    w.mods = lambda t: {"cpu_mult": 2.2 if t >= 150 else 1.0}


@trace("inputstall-8xh200-streaming-shards-5s", "training", "input_stall", "trainer", "H200", 8, duration=420,
       tick=5.0, cpus=224, window=(245, 345),
       note="LLM pretraining on 8 H200s (2.6 s steps) sampled every 5 s: a checkpoint pause at 95 s "
            "is benign; from 230 to 330 s the streaming shard server slows and all ranks idle "
            "together waiting for token batches.")
def _(w):
    tr = llm_trainer(w, list(range(8)), compute_s=2.3, tokens_per_step=8 * 16 * 4096, comm_s=0.2,
                     mem=122 * GiB, workers=2, batch_cpu_s=0.05, batch_io_s=0.6, nvl_gb_per_step=48)
    trainer_unit(w, tr, pid0=70100, script="pretrain.py --model llama-8b --data s3://corpus/shards")
    io = ramp((230, 1.0), (240, 30.0), (325, 30.0), (330, 1.0))
    w.mods = lambda t: {"mode": "ckpt" if between(t, 95, 118) else "train", "io_mult": io(t)}


# ============================================================================ HOST LAUNCH JITTER
@trace("jitter-h100-vllm-irq-affinity", "serving", "host_launch_jitter", "vllm", "H100", 1, duration=330,
       window=(110, 252), ebpf=True,
       note="Llama-3.1-8B chat on an H100 with eBPF launch probes; from 110 to 250 s NIC interrupts "
            "are steered onto the EngineCore's core: ~3% of launches are delayed ~12 ms, the GPU "
            "idles waiting for them, tokens/s drops while CPU totals barely move.")
def _(w):
    e = vllm(w, LLAMA8, [0], [users(28, think=(0.5, 3.0))])
    vllm_unit(w, e, pid0=33010)
    w.mods = lambda t: ({"jitter": (0.04, 0.015), "offcpu_rate": 420.0, "invol_rate": 50.0, "psi": 2.5}
                        if between(t, 110, 250) else {})


@trace("jitter-h200-trainer-thp-compaction", "training", "host_launch_jitter", "trainer", "H200", 1,
       duration=330, cpus=32, window=(150, 330), ebpf=True,
       note="A launch-bound small-model trainer on an H200 with eBPF probes; from 140 s memory "
            "compaction stalls start hitting the launching thread (a growing share of launches "
            "takes milliseconds): steps slow down gradually.")
def _(w):
    tr = Trainer(w.spec, [0], rng_of(w, "t"), w.duration, **{**LAB_TRAIN, "host_s": 0.064})
    trainer_unit(w, tr, pid0=597, script=LAB_SCRIPT)
    p = ramp((140, 0.0), (200, 0.006), (330, 0.006))
    w.mods = lambda t: ({"jitter": (p(t), 0.006), "offcpu_rate": 40 + 20000 * p(t), "invol_rate": 3 + 4000 * p(t)}
                        if t >= 140 else {})


@trace("jitter-8xh100-sglang-tp8-rank3", "multi-gpu", "host_launch_jitter", "sglang", "H100", 8,
       duration=330, culprit=(3,), window=(120, 262), ebpf=True, cpus=192,
       note="SGLang serving Llama-3.1-70B with TP=8 on 8 H100s; from 120 to 255 s the scheduler "
            "process of rank 3 shares its core with a noisy kworker: its launches are delayed, its "
            "GPU idles while the other seven wait for it in NCCL.")
def _(w):
    e = sglang(w, LLAMA70, list(range(8)), [users(64, think=(1, 5), out=260)])
    sglang_unit(w, e, pid0=14500, cores=tuple(range(0, 64)))
    w.mods = lambda t: ({"jitter_rank": {3: (0.05, 0.009)}, "offcpu_rate": 260.0, "invol_rate": 30.0}
                        if between(t, 120, 255) else {})


# ============================================================================ HOST CPU CONTENTION
@trace("hostcpu-h200-vllm-smallmodel-hogs", "serving", "host_cpu_contention", "vllm", "H200", 1, duration=300,
       cpus=16, window=(110, 205),
       note="The lab's host-bound Qwen2.5-0.5B server on an H200 (17% GPU-Util); from 110 to 200 s "
            "a log shipper's threads land on the engine's two cores: the engine gets a quarter of "
            "its CPU, PSI climbs to ~80%, tokens/s falls to a third (as measured on the real H200).")
def _(w):
    e = vllm(w, QWEN05, [0], [Client("fleet", fixed(128), fixed(128), max_tokens=128, users=const(16))],
             **LAB_SERVE)
    vllm_unit(w, e, pid0=598, cores=(2, 3))
    w.mods = lambda t: ({"cpu_avail": 0.3, "psi": 88.0, "rq_add": 7, "host_cpu_add": 1.9, "invol_rate": 0.05,
                         "rq_pin": 8, "api_avail": 0.4, "scrape_slow": 0.25} if between(t, 110, 200) else {})


@trace("hostcpu-h100-sglang-cgroup-quota", "serving", "host_cpu_contention", "sglang", "H100", 1, duration=330,
       cpus=64, window=(130, 330),
       note="SGLang serving Llama-3.1-8B-FP8 on an H100 inside a Kubernetes pod; at 130 s its CPU "
            "limit is cut (CFS quota): the scheduler thread is throttled, host-wide PSI barely "
            "moves, tokens/s drops by a third for the rest of the trace.")
def _(w):
    e = sglang(w, LLAMA8_FP8, [0], [users(64, prompt=300, think=(0.2, 1.0), out=200, cached=0.6)])
    sglang_unit(w, e, pid0=7700, cores=tuple(range(0, 64)))
    w.mods = lambda t: ({"cpu_avail": 0.42, "psi": 3.5, "invol_rate": 14.0, "api_avail": 0.6, "scrape_slow": 0.06}
                        if t >= 130 else {})


@trace("hostcpu-4xh100-trainer-compile-storm", "training", "host_cpu_contention", "trainer", "H100", 4,
       duration=330, cpus=64, window=(140, 268),
       note="A 4xH100 trainer with CPU-heavy data workers; from 140 to 260 s someone runs make -j96 "
            "on the same host: run queue ~90, PSI ~70%, the trainer's launch threads and workers "
            "get less than half a core each and steps slow by ~40%.")
def _(w):
    tr = Trainer(w.spec, [0, 1, 2, 3], rng_of(w, "t"), w.duration, work_per_step=4 * 32, unit="samples",
                 counter="trainer_samples_total", compute_s=0.45, comm_s=0.04, duty=0.93, sm_fill=0.85,
                 tensor=0.45, dram=0.35, occ=0.45, workers=6, batch_cpu_s=0.9, host_s=0.32,
                 launches_per_step=9000, mem_bytes=44 * GiB, nvl_gb_per_step=3.0)
    trainer_unit(w, tr, pid0=19900, script="train.py --model unet-xl --bs 32")
    w.mods = lambda t: ({"cpu_avail": 0.45, "worker_avail": 0.35, "psi": 72.0, "rq_add": 88,
                         "host_cpu_add": 52.0, "invol_rate": 180.0} if between(t, 140, 260) else {})


# ============================================================================ TINY KERNELS
@trace("tiny-h200-trainer-graph-replay", "training", "tiny_kernels", "trainer", "H200", 1, duration=300,
       cpus=16, window=(120, 222),
       note="The lab's Qwen2.5-0.5B trainer on an H200; from 120 to 220 s each step replays a CUDA "
            "graph of one-element kernels instead of its real work: GPU-Util 99%, SM ~0.3%, 123 W, "
            "tokens/s down to a quarter (the real H200's graph phase).")
def _(w):
    tr = Trainer(w.spec, [0], rng_of(w, "t"), w.duration, **LAB_TRAIN)
    trainer_unit(w, tr, pid0=597, script=LAB_SCRIPT)
    w.mods = lambda t: ({"tiny_s": 0.225, "rank_factor": {0: 0.02}, "host_mult": 0.2} if between(t, 120, 220) else {})


@trace("tiny-b200-trainer-debug-stats-hook", "training", "tiny_kernels", "trainer", "B200", 1, duration=330,
       cpus=64, window=(130, 330),
       note="A 3B-parameter fine-tune on a B200 (0.8 s steps); at 130 s a debugging hook starts "
            "computing per-tensor statistics as thousands of one-element kernels each step: "
            "GPU-Util rises to ~99% while SM activity falls and steps take 70% longer.")
def _(w):
    tr = llm_trainer(w, [0], compute_s=0.8, tokens_per_step=16 * 2048, tensor=0.5, mem=96 * GiB)
    trainer_unit(w, tr, pid0=5566, script="finetune.py --model llama-3.2-3b --debug-hooks")
    w.mods = lambda t: ({"tiny_s": 0.56, "host_mult": 1.3} if t >= 130 else {})


@trace("tiny-h200-sglang-lora-sgmv", "serving", "tiny_kernels", "sglang", "H200", 1, duration=330,
       window=(130, 262),
       note="SGLang serving Qwen2.5-1.5B on an H200 (CUDA graphs); from 130 to 255 s most requests "
            "carry LoRA adapters: each step adds hundreds of tiny shrink/expand kernels, GPU-Util "
            "stays high while SM activity sinks and inter-token latency doubles.")
def _(w):
    e = sglang(w, QWEN15, [0], [users(48, think=(0.5, 3), out=200)])
    sglang_unit(w, e, pid0=8120)
    km = ramp((130, 1.0), (140, 6.0), (250, 6.0), (255, 1.0))
    w.mods = lambda t: {"kernels_mult": km(t)}


# ============================================================================ MEMORY BANDWIDTH
@trace("membw-h200-vllm-long-context-shift", "serving", "memory_bandwidth", "vllm", "H200", 1, duration=330,
       window=(120, 285),
       note="Llama-3.1-8B on an H200; from 120 s the traffic shifts from short chats to agent "
            "sessions with 20-28k-token contexts (mostly prefix-cached): each decode step reads "
            "~60 GB of KV, DRAM bandwidth saturates and inter-token latency triples.")
def _(w):
    chat_u = users(ramp((0, 36), (120, 36), (150, 6), (270, 6), (285, 36)), think=(0.5, 3))
    agents = Client("agents", lognorm(24000, 0.1, 18000, 30000), lognorm(400, 0.4, 50, 1200),
                    users=ramp((120, 0), (150, 26), (270, 26), (285, 0)), think=(1, 4), max_tokens=1500,
                    cached=0.92, start=120, end=285)
    e = vllm(w, LLAMA8, [0], [chat_u, agents])
    vllm_unit(w, e, pid0=12012)


@trace("membw-4xh200-vllm-70b-context-growth", "serving", "memory_bandwidth", "vllm", "H200", 4, duration=330,
       window=(140, 330),
       note="Llama-3.3-70B-FP8 with TP=4 on 4 H200s serving 96 users; from 140 s their contexts grow "
            "from ~2k to ~9k tokens (long documents pasted into chats): KV reads per step quadruple, "
            "DRAM bandwidth pins at ~90% and per-user throughput falls.")
def _(w):
    prompt = lambda rng: (2000 if not w._long else 9000) * (0.8 + 0.4 * rng.random())
    w._long = False
    cl = Client("users", prompt, lognorm(300, 0.5, 20, 900), users=const(96), think=(1, 4), max_tokens=1024,
                cached=0.97)
    e = vllm(w, LLAMA70_FP8, [0, 1, 2, 3], [cl])
    vllm_unit(w, e, pid0=50010, cores=tuple(range(0, 32)))

    def m(t):
        w._long = t >= 140
        return {}
    w.mods = m


@trace("membw-l40s-llamacpp-long-context", "serving", "memory_bandwidth", "llamacpp", "L40S", 1, duration=330,
       cpus=32, window=(120, 330),
       note="llama.cpp (4 slots, 32k context each) serving Llama-3.1-8B Q4 on an L40S (GDDR6, no "
            "GPM); from 120 s users chat over 25k-token documents kept in the slot cache: every "
            "decode step reads ~13 GB of KV, the memory controller saturates, tokens/s falls ~3x.")
def _(w):
    short = users(ramp((0, 6), (120, 6), (140, 0)), prompt=600, out=300, think=(2, 6), cached=0.7)
    longd = Client("docs", lognorm(25000, 0.08, 20000, 30000), lognorm(350, 0.4, 50, 900),
                   users=ramp((120, 0), (140, 5)), think=(3, 8), max_tokens=1024, cached=0.95, start=120)
    e = llamacpp(w, LLAMA8_Q4, [short, longd], kv_tokens=4 * 32768)
    llamacpp_unit(w, e, pid0=3030, args=" -fa on")


# ============================================================================ THROTTLING
@trace("throttle-8xh100-thermal-gpu6", "multi-gpu", "throttling", "trainer", "H100", 8, duration=360,
       culprit=(6,), window=(150, 360), cpus=192,
       note="Llama-3.1-8B FSDP on 8 H100s; from 100 s the fans of GPU 6's zone fail: its temperature "
            "climbs to the 87 C slowdown point (~150 s), 'thermal (sw)' cuts its clock and the "
            "whole job waits for it.")
def _(w):
    tr = llm_trainer(w, list(range(8)), compute_s=2.7, tokens_per_step=8 * 8 * 4096, comm_s=0.22)
    trainer_unit(w, tr, pid0=40210, script="train_fsdp.py --model llama3-8b --seq 4096 --mbs 8")
    r = ramp((100, 1.0), (150, 3.2))
    w.mods = lambda t: {"r_mult": {6: r(t)}}


@trace("throttle-h200-vllm-power-limit-cut", "serving", "throttling", "vllm", "H200", 1, duration=330,
       window=(130, 255),
       note="Llama-3.1-8B on an H200 with a prefill-heavy mix (~600 W; a benign 13 s scrape gap at "
            "62 s); at 130 s the datacenter's power manager caps the board at 300 W until 250 s: "
            "'power cap', clocks fall to ~1 GHz, prefill and decode slow.")
def _(w):
    e = vllm(w, LLAMA8, [0], [users(40, prompt=3000, out=200, think=(0.5, 3), cached=0.2)])
    vllm_unit(w, e, pid0=41414)
    w.gaps = [(62, 75)]  # a scrape timeout well before the fault: benign
    w.mods = lambda t: {"power_limit": {0: 300.0} if between(t, 130, 250) else {}}


@trace("throttle-4xa100-vllm-power-brake", "serving", "throttling", "vllm", "A100", 4, duration=300, cpus=128,
       window=(120, 196),
       note="Llama-3.1-70B (TP=4) on 4 A100s (no GPM); from 120 to 190 s a PSU fault makes the BMC "
            "assert the power brake: 'power brake' and 'hw slowdown' on every GPU, clocks to about "
            "a third, throughput collapses, then recovers.")
def _(w):
    e = vllm(w, LLAMA70, [0, 1, 2, 3], [users(40, think=(1, 4), out=250)], mem_util=0.92)
    vllm_unit(w, e, pid0=36036, cores=tuple(range(0, 32)))
    w.mods = lambda t: {"brake": {g: True for g in range(4)} if between(t, 120, 190) else {}}


# ============================================================================ KV PRESSURE
@trace("kv-h200-vllm-restart-then-long-gen", "serving", "kv_pressure", "vllm", "H200", 1, duration=380,
       window=(215, 380),
       note="Qwen3-8B on an H200 (gpu_memory_utilization 0.5) is redeployed at 60 s (benign: back at "
            "115 s); from 200 s a fleet of agents with 6k-token prompts and long generations floods "
            "it: the KV pool fills, requests are preempted and recomputed, throughput sags.")
def _(w):
    agents = Client("agents", lognorm(6000, 0.2, 2000, 12000), lognorm(1600, 0.5, 200, 4096),
                    users=ramp((200, 0), (230, 90)), think=(0.5, 2), max_tokens=4096, cached=0.3, start=200)
    e = vllm(w, QWEN3_8, [0], [users(24, think=(1, 5)), agents], mem_util=0.5, watermark=0.0)
    u = vllm_unit(w, e, pid0=88120)
    w.restart(u, down=60, up=72, ready=115, new_pid=90210)


@trace("kv-h100-sglang-growing-conversations", "serving", "kv_pressure", "sglang", "H100", 1, duration=330,
       window=(145, 330),
       note="SGLang serving Qwen2.5-7B on an H100 (mem-fraction-static 0.45); multi-turn "
            "conversations grow from ~2k to ~12k tokens of context between 120 and 165 s: the "
            "pool fills, running requests are retracted and the queue grows.")
def _(w):
    ctx = ramp((120, 2000), (165, 12000))
    cl = Client("conversations", lambda rng: ctx(w._t) * (0.8 + 0.4 * rng.random()), lognorm(500, 0.5, 50, 2000),
                users=const(56), think=(1, 4), max_tokens=2048, cached=0.85)
    e = sglang(w, QWEN7, [0], [cl], mem_util=0.45)
    sglang_unit(w, e, pid0=5050)
    w._t = 0.0

    def m(t):
        w._t = t
        return {}
    w.mods = m


@trace("kv-4xl40s-vllm-dp-engine2-sticky", "multi-gpu", "kv_pressure", "vllm", "L40S", 4, duration=330,
       culprit=(2,), window=(150, 330), cpus=64,
       note="vLLM data-parallel over 4 L40S (Llama-3.1-8B-FP8); from 140 s the prefix-aware router "
            "sends every long-document session to engine 2: its KV pool fills and it preempts, "
            "while engines 0, 1 and 3 carry on.")
def _(w):
    engs = []
    for i in range(4):
        cls = [users(14, think=(1, 4), out=200, name=f"u{i}")]
        if i == 2:
            cls.append(Client("sticky-docs", lognorm(14000, 0.3, 6000, 30000), lognorm(1500, 0.4, 200, 3000),
                              users=ramp((140, 0), (170, 26)), think=(1, 3), max_tokens=3000, cached=0.7, start=140))
        engs.append(vllm(w, LLAMA8_FP8, [i], cls, tag=f"e{i}", mem_util=0.9, watermark=0.0))
    vllm_unit(w, EngineGroup(engs), pid0=19191, cores=tuple(range(0, 32)))


# ============================================================================ GPU SHARED
@trace("shared-h200-vllm-notebook-matmul", "serving", "gpu_shared", "vllm", "H200", 1, duration=330,
       window=(120, 236),
       note="Llama-3.1-8B on an H200; from 120 to 230 s a researcher's notebook multiplies bf16 "
            "matrices on the same GPU: time-slicing halves the engine's share, GPU-Util reads 100%, "
            "the board sits at its power cap, NVML splits SM util between the two processes; the "
            "engine is restarted (benign) at 285 s.")
def _(w):
    e = vllm(w, LLAMA8, [0], [users(36, think=(0.5, 3))], mem_util=0.8)
    u = vllm_unit(w, e, pid0=2200)
    w.restart(u, down=285, up=296, ready=322, new_pid=2780)  # the operator restarts it afterwards
    hog_unit(w, 0, const(1.0), pid=61003, name="python3", cmdline="/home/bob/.venv/bin/python3 -m ipykernel_launcher -f kernel-7.json",
             mem=int(10.5 * GiB), start=120, end=230, sm=0.95, tensor=0.75, dram=0.22, user="bob")


@trace("shared-8xh100-vllm-dp-gpu5-foreign-container", "multi-gpu", "gpu_shared", "vllm", "H100", 8,
       duration=330, culprit=(5,), window=(130, 285), cpus=192,
       note="vLLM data-parallel over 8 H100s; from 130 to 280 s a training job in another container "
            "is pinned to GPU 5 (its process has no name here, only a pid): engine 5 gets about half "
            "the GPU and its latency doubles; the other seven are untouched.")
def _(w):
    engs = [vllm(w, LLAMA8, [i], [users(20, think=(0.5, 3), name=f"u{i}")], tag=f"e{i}", mem_util=0.8)
            for i in range(8)]
    vllm_unit(w, EngineGroup(engs), pid0=10100, cores=tuple(range(0, 64)))
    hog_unit(w, 5, const(0.9), pid=377801, name="", cmdline="", mem=int(11.8 * GiB), start=130, end=280,
             sm=0.9, tensor=0.55, dram=0.3, visible=False, user="")


@trace("shared-l40s-llamacpp-comfyui-bursts", "serving", "gpu_shared", "llamacpp", "L40S", 1, duration=330,
       cpus=32, window=(110, 258),
       note="llama.cpp serving Qwen2.5-7B Q8 on an L40S; from 110 to 250 s a ComfyUI process on the "
            "same GPU renders SDXL images (6 s of full GPU every ~10 s): decoding slows in bursts.")
def _(w):
    e = llamacpp(w, QWEN7_Q8, [users(6, prompt=500, out=280, think=(1, 4), cached=0.6)])
    llamacpp_unit(w, e, pid0=2290)
    hog_unit(w, 0, lambda t: 1.0 if (t % 10.0) < 6.0 else 0.0, pid=7711, name="python3",
             cmdline="python3 main.py --listen 0.0.0.0 --port 8188", mem=int(9.6 * GiB), start=110, end=250,
             sm=0.93, tensor=0.6, dram=0.35, user="comfy")


# ============================================================================ SPEC DECODE REJECTED
@trace("spec-h100-vllm-eagle-language-shift", "serving", "spec_decode_rejected", "vllm", "H100", 1,
       duration=330, window=(120, 275),
       note="vLLM with EAGLE (4 draft tokens) serving Llama-3.1-8B on an H100: per-token acceptance "
            "~0.8 on English chat (accepted/draft tokens 0.59); from 120 to 270 s traffic shifts to "
            "code-mixed Korean and it collapses to ~0.25 (0.08): the GPU verifies drafts it throws "
            "away, tokens/s falls.")
def _(w):
    e = vllm(w, LLAMA8, [0], [users(32, think=(0.5, 3))], spec_k=4, draft_frac=0.05)
    vllm_unit(w, e, pid0=9920, extra_args=' --speculative-config {"method":"eagle","num_speculative_tokens":4}')
    p = ramp((120, 0.8), (130, 0.25), (265, 0.25), (275, 0.8))
    w.mods = lambda t: {"spec_p": p(t)}


@trace("spec-h200-sglang-eagle3-temperature-drift", "serving", "spec_decode_rejected", "sglang", "H200", 1,
       duration=330, window=(150, 330),
       note="SGLang with EAGLE3 (3 draft steps) serving Qwen3-8B on an H200; from 130 s a tenant "
            "sampling at temperature 1.3 grows to most of the traffic: the acceptance-rate gauge "
            "drifts from 0.58 to 0.14 and the accept length from 2.7 to 1.4.")
def _(w):
    e = sglang(w, QWEN3_8, [0], [users(40, think=(0.5, 3), out=260)], spec_k=3, draft_frac=0.06)
    sglang_unit(w, e, pid0=6161)
    p = ramp((130, 0.75), (200, 0.3))
    w.mods = lambda t: {"spec_p": p(t)}


@trace("spec-l4-llamacpp-draft-mismatch", "serving", "spec_decode_rejected", "llamacpp", "L4", 1,
       duration=330, cpus=16, window=(110, 272),
       note="llama.cpp on an L4 with a Qwen2.5-0.5B draft model (8 draft tokens) for Qwen2.5-7B Q8: "
            "from 110 to 260 s users switch to another language and per-token acceptance falls from "
            "~0.7 to ~0.2 (accepted/draft 0.27 -> 0.03); the spec-decode counters move only when "
            "requests finish.")
def _(w):
    e = llamacpp(w, QWEN7_Q8, [users(3, prompt=400, out=350, think=(1, 4), cached=0.6)], spec_k=8,
                 draft_frac=0.035, slots=2, kv_tokens=2 * 8192)
    llamacpp_unit(w, e, pid0=1717, args=" -md /models/qwen2.5-0.5b-instruct-q8_0.gguf --draft-max 8")
    p = ramp((110, 0.7), (118, 0.2), (255, 0.2), (262, 0.7))
    w.mods = lambda t: {"spec_p": p(t)}
