"""The traces: each a function of its own seeded random generator, registered with its truth.
Times in the scenario functions are seconds since the trace began; the Truth's window is
wall-clock (start + those seconds)."""

from __future__ import annotations

import math

from . import run as R
from .frames import Proc
from .hw import SPECS, Act, Board
from .serving import MODELS, Hooks, Serving
from .training import COMPUTE, THooks, Training

GIB = 2**30
REGISTRY = []  # (name, family, cause, engine, gpus, model, tick, dur, window, culprit, note, fn)


def trace(name, family, cause, engine, gpus, model, tick, dur, window=None, culprit=None, note=""):
    def deco(fn):
        REGISTRY.append((name, family, cause, engine, gpus, model, tick, dur, window, culprit, note, fn))
        return fn
    return deco


def boards(key, n, rng, first=0):
    return [Board(SPECS[key], first + i, rng) for i in range(n)]


def ramp(t, a, b, v0, v1):
    if t <= a:
        return v0
    if t >= b:
        return v1
    return v0 + (v1 - v0) * (t - a) / (b - a)


def pulse(t, a, b, period, on):
    """Inside [a, b), the first ``on`` seconds of every ``period``."""
    return a <= t < b and (t - a) % period < on


def wob(t, base, amp=0.12, p1=97.0, p2=31.0, ph=0.0):
    return base * (1 + amp * math.sin(2 * math.pi * t / p1 + ph) + amp * 0.5 * math.sin(2 * math.pi * t / p2 + 2 * ph))


def H(**kw):
    kw.setdefault("prompt", lambda t: 900)
    kw.setdefault("out", lambda t: 260)
    return Hooks(**kw)


def serve(kind, model, gkey, n, tick, dur, rng, start, hooks, *, ebpf=False, host_busy=None,
          runnable_extra=None, **opts):
    sv = Serving(kind, MODELS[model], boards(gkey, n, rng), tick, rng, hooks, ebpf=ebpf, **opts)
    return R.run_serving([sv], int(dur / tick), tick, rng, start, ebpf=ebpf, host_busy=host_busy,
                         runnable_extra=runnable_extra)


def train(gkey, n, tick, dur, rng, start, hooks, *, counter=None, pinned=True, ebpf=False,
          workers=6, loader_cost=0.6, cmd=None, cpus=96, proc_name="python3", extra_gpu=None, **opts):
    tr = Training(boards(gkey, n, rng), tick, rng, hooks, **opts)
    return R.run_training(tr, int(dur / tick), tick, rng, start, counter=counter, pinned=pinned,
                          ebpf=ebpf, workers=workers, loader_cost=loader_cost,
                          cmd=cmd or "torchrun --nproc-per-node {n} train.py", cpus=cpus,
                          proc_name=proc_name, extra_gpu=extra_gpu)


# =============================================================== oversized_request

@trace("vllm-h100-n8-logprobs-loop", "serve-vllm", "oversized_request", "vllm", 1, "H100", 1, 300,
       (150, 220), note="a client loops n=8, logprobs=20 requests (vLLM #37343 shape): every step "
       "computes logprobs over the vocabulary for 8 sequences; ITL 12 ms -> ~170 ms, GPU stays busy")
def _(rng, start):
    inj = lambda t: [dict(prompt=520, cached=32, out=16, n=8, max_tokens=16, extra=0.15)] \
        if 150 <= t < 212 and int(t) % 4 == 0 else []
    return serve("vllm", "llama8b", "H100", 1, 1, 300, rng, start,
                 H(rate=lambda t: wob(t, 6.0), inject=inj))


@trace("sglang-h200-tp2-prompt-logprobs", "serve-sglang", "oversized_request", "sglang", 2, "H200",
       2, 360, (140, 270), note="eval harness sends return_logprob with top_logprobs_num=20 from "
       "the first prompt token on 24k-token prompts; every batch carries the logprob work; older "
       "SGLang: generation counted only when requests finish")
def _(rng, start):
    inj = lambda t: [dict(prompt=24000, cached=0, out=200, n=1, max_tokens=256, extra=0.012)] \
        if 140 <= t < 262 and int(t) % 10 == 0 else []
    return serve("sglang", "qwen32b", "H200", 2, 2, 360, rng, start,
                 H(rate=lambda t: wob(t, 2.5, ph=1), prompt=lambda t: 1500, out=lambda t: 350, inject=inj),
                 new_sglang=False)


@trace("vllm-a100-tp4-best-of-intermittent", "serve-vllm", "oversized_request", "vllm", 4, "A100",
       2, 420, (120, 345), note="a batch client fires n=16 best-of requests with logprobs=5 for "
       "20 s every 50 s: mild (ITL ~1.7x) and intermittent; A100: no GPM")
def _(rng, start):
    inj = lambda t: [dict(prompt=700, cached=0, out=120, n=16, max_tokens=128, extra=0.03)] \
        if pulse(t, 120, 345, 50, 20) and int(t) % 4 == 0 else []
    return serve("vllm", "llama70b", "A100", 4, 2, 420, rng, start,
                 H(rate=lambda t: wob(t, 1.5, ph=2), inject=inj), max_len=8192)


# =============================================================== prefill_interference

@trace("vllm-h100-rag-burst", "serve-vllm", "prefill_interference", "vllm", 1, "H100", 1, 300,
       (140, 215), note="a RAG batch pushes 12k-token prompts at 1/s for a minute; chunked "
       "prefill (8192 tokens a step) stretches every decode step: ITL ~15x, prompt tokens/s dominate")
def _(rng, start):
    inj = lambda t: [dict(prompt=12000, cached=0, out=150, max_tokens=256)] if 140 <= t < 200 else []
    return serve("vllm", "llama8b", "H100", 1, 1, 300, rng, start,
                 H(rate=lambda t: wob(t, 5.0, ph=0.5), prompt=lambda t: 800, inject=inj))


@trace("sglang-h100-tp4-summarize-ramp", "serve-sglang", "prefill_interference", "sglang", 4, "H100",
       2, 420, (170, 420), note="summarization traffic (16k-token documents) ramps in over three "
       "minutes; SGLang runs prefill batches between decode steps, so the chat users' ITL climbs")
def _(rng, start):
    inj = lambda t: [dict(prompt=16000, cached=0, out=200, max_tokens=400)] \
        if t >= 120 and rng.random() < ramp(t, 120, 300, 0.0, 0.9) * 2 else []
    return serve("sglang", "llama70b", "H100", 4, 2, 420, rng, start,
                 H(rate=lambda t: wob(t, 5.0, ph=1.3), prompt=lambda t: 700, out=lambda t: 300, inject=inj))


@trace("llamacpp-a10g-long-paste", "serve-llamacpp", "prefill_interference", "llamacpp", 1, "A10G",
       1, 300, (120, 200), note="users paste 6k-token documents into a 4-slot llama-server; prompt "
       "chunks (n_batch 2048) share each decode: predicted tokens/s (counted at slot release) sags")
def _(rng, start):
    inj = lambda t: [dict(prompt=6000, cached=0, out=250, max_tokens=512)] if 120 <= t < 192 and int(t) % 6 == 0 else []
    return serve("llamacpp", "gguf8b_q4", "A10G", 1, 1, 300, rng, start,
                 H(rate=lambda t: wob(t, 0.35), prompt=lambda t: 300, out=lambda t: 300, inject=inj),
                 slots=4, max_len=32768, cpus=8)


# =============================================================== collective_straggler

@trace("ddp-h100x8-thermal-rank5", "train", "collective_straggler", "trainer", 8, "H100", 2, 420,
       (195, 420), culprit=(5,), note="rank 5's board heats up (failing fan tray): thermal slowdown "
       "from ~200 s; the other seven wait in the all-reduce (GPU-Util high, SM low, power down)")
def _(rng, start):
    hk = THooks(heat=lambda t, g: ramp(t, 150, 260, 0, 40) if g == 5 else 0.0)
    return train("H100", 8, 2, 420, rng, start, hk, counter="tokens", step_s=0.9, comm_s=0.15)


@trace("vllm-h200-tp8-hwslowdown-rank3", "serve-vllm", "collective_straggler", "vllm", 8, "H200",
       1, 300, (130, 300), culprit=(3,), note="GPU 3 enters HW slowdown (clocks halved, PSU sense "
       "line) under TP8 serving: every step waits for rank 3 in the all-reduce")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 2.0), prompt=lambda t: 1200, out=lambda t: 300,
           forced=lambda t, g: {"hw slowdown": 0.5} if g == 3 and t >= 130 else {})
    return serve("vllm", "llama405fp8", "H200", 8, 1, 300, rng, start, hk, max_len=16384)


@trace("fsdp-a100x4-uneven-packing-rank2", "train", "collective_straggler", None, 4, "A100", 2, 400,
       (130, 360), culprit=(2,), note="sequence packing sends rank 2 the long-document batches for "
       "20 s every 45 s: its compute is 45% longer, the others wait in reduce-scatter; no counter")
def _(rng, start):
    hk = THooks(slow_rank=lambda t, g: 1.45 if g == 2 and pulse(t, 130, 360, 45, 20) else 1.0)
    return train("A100", 4, 2, 400, rng, start, hk, step_s=1.1, comm_s=0.2, overlap=0.6,
                 cmd="torchrun --nproc-per-node {n} fsdp_train.py")


# =============================================================== input_stall

@trace("ddp-a100x8-jpeg-decode", "train", "input_stall", "trainer", 8, "A100", 2, 360, (150, 360),
       note="a new shard of 4k JPEGs: the 8 loader workers per rank cannot decode fast enough; "
       "GPUs wait 0.6 s of each 1.5 s step, the loader processes peg the host's cores")
def _(rng, start):
    hk = THooks(data_wait=lambda t: 0.6 * (1 + 0.15 * math.sin(t / 7)) if t >= 150 else 0.0,
                loader_cores=lambda t: 78.0 if t >= 150 else 26.0)
    return train("A100", 8, 2, 360, rng, start, hk, counter="samples", step_s=0.9, comm_s=0.1,
                 tokens_per_step=2048, workers=8, cpus=96)


@trace("h100-streaming-dataset-stall", "train", "input_stall", None, 1, "H100", 1, 300, (120, 290),
       note="a streaming dataset from object storage stalls for 15-20 s every 40 s (network): the "
       "GPU idles waiting for batches, loader CPU stays low (I/O bound); no progress counter")
def _(rng, start):
    hk = THooks(data_wait=lambda t: 1.2 if pulse(t, 120, 290, 40, 18) else 0.0,
                loader_cores=lambda t: 0.6 if pulse(t, 120, 290, 40, 18) else 2.5)
    return train("H100", 1, 1, 300, rng, start, hk, step_s=0.5, cmd="python train.py --streaming s3://corpus",
                 cpus=32)


@trace("fsdp-h200x2-tokenize-ramp", "train", "input_stall", "trainer", 2, "H200", 2, 420, (200, 420),
       note="on-the-fly tokenization of a growing sequence-length schedule: the loader falls "
       "behind gradually, the GPUs' GPU-Util saw-tooths, loader workers peg the 32 cores")
def _(rng, start):
    hk = THooks(data_wait=lambda t: ramp(t, 150, 330, 0.0, 0.55),
                loader_cores=lambda t: ramp(t, 150, 330, 8, 29))
    return train("H200", 2, 2, 420, rng, start, hk, counter="tokens", step_s=0.7, comm_s=0.1, cpus=32)


# =============================================================== host_launch_jitter

@trace("vllm-h100-eager-irq-jitter", "serve-vllm", "host_launch_jitter", "vllm", 1, "H100", 1, 300,
       (140, 230), note="--enforce-eager engine; NIC interrupts moved onto the launch thread's core: "
       "4% of kernel launches take ~1 ms (eBPF), the GPU waits between kernels; CPU not saturated")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 5.0), jitter=lambda t: (0.04, 900.0) if 140 <= t < 230 else (0.0, 0.0))
    return serve("vllm", "qwen7b", "H100", 1, 1, 300, rng, start, hk, ebpf=True, eager=True)


@trace("ddp-h100x2-cron-preempts-launcher", "train", "host_launch_jitter", None, 2, "H100", 2, 360,
       (120, 330), note="a cron job pinned to the trainers' cores for 20 s every minute: launches "
       "delayed by ~1.5 ms (eBPF), steps 25% longer; host CPU has room")
def _(rng, start):
    hk = THooks(jitter=lambda t: (0.02, 1500.0) if pulse(t, 120, 330, 60, 20) else (0.0, 0.0))
    return train("H100", 2, 2, 360, rng, start, hk, step_s=0.45, comm_s=0.08, ebpf=True,
                 launches_per_step=5000, cpus=64)


@trace("sglang-h200-numa-launch-jitter", "serve-sglang", "host_launch_jitter", "sglang", 1, "H200",
       2, 360, (160, 360), note="after a cgroup change the scheduler thread runs on the far NUMA "
       "node and is preempted inside launch calls: 15% of launches take ~2.5 ms (eBPF)")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 7.0, ph=2), jitter=lambda t: (0.15, 2500.0) if t >= 160 else (0.0, 0.0))
    return serve("sglang", "llama8b", "H200", 1, 2, 360, rng, start, hk, ebpf=True)


# =============================================================== host_cpu_contention

@trace("vllm-l40s-preprocess-neighbor", "serve-vllm", "host_cpu_contention", "vllm", 1, "L40S", 1,
       300, (130, 250), note="a 24-process preprocessing job lands on the 16-core host: the engine "
       "core gets under half a core, involuntary switches x30, PSI ~60%; no eBPF")
def _(rng, start):
    on = lambda t: 130 <= t < 250
    hk = H(rate=lambda t: wob(t, 3.0), cpu_share=lambda t: 0.3 if on(t) else 1.0)
    return serve("vllm", "llama8b", "L40S", 1, 1, 300, rng, start, hk, cpus=16,
                 host_busy=lambda t: 14.5 if on(t) else 0.8, runnable_extra=lambda t: 20 if on(t) else 0)


@trace("train-h100x4-transcode-neighbor", "train", "host_cpu_contention", "trainer", 4, "H100", 2,
       400, (160, 400), note="an ffmpeg transcoding pod shares the node's 48 cores, growing to all "
       "of them: the trainers' launch threads lose CPU (pinned tree), steps slow; PSI, run queue up")
def _(rng, start):
    hk = THooks(cpu_share=lambda t: ramp(t, 160, 260, 1.0, 0.45),
                host_busy=lambda t: ramp(t, 160, 260, 2, 44))
    return train("H100", 4, 2, 400, rng, start, hk, counter="tokens", step_s=0.35, comm_s=0.05,
                 host_frac=0.35, cpus=48, workers=3, loader_cost=0.3)


@trace("llamacpp-a10g-make-j16", "serve-llamacpp", "host_cpu_contention", "llamacpp", 1, "A10G", 2,
       360, (150, 300), note="a developer runs make -j16 on the 8-core box serving llama-server: "
       "the server thread loses the CPU, decode slows; tokens counted when slots finish")
def _(rng, start):
    on = lambda t: 150 <= t < 300
    hk = H(rate=lambda t: wob(t, 0.3), prompt=lambda t: 500, out=lambda t: 350,
           cpu_share=lambda t: 0.35 if on(t) else 1.0)
    return serve("llamacpp", "gguf8b_q4", "A10G", 1, 2, 360, rng, start, hk, slots=4, cpus=8,
                 host_busy=lambda t: 7.6 if on(t) else 0.3, runnable_extra=lambda t: 12 if on(t) else 0)


# =============================================================== tiny_kernels

@trace("cuda-a10g-per-item-loop", "cuda", "tiny_kernels", None, 1, "A10G", 1, 300, (120, 300),
       note="an embedding job finishes its batched pass and enters a per-item eager loop (batch 1): "
       "GPU-Util stays ~95%, power falls to ~70 W; A10G has no GPM, so only util vs power tells")
def _(rng, start):
    hk = THooks(phase=lambda t: "tiny" if t >= 120 else "train")
    return train("A10G", 1, 1, 300, rng, start, hk, step_s=0.25, cmd="python embed_corpus.py --batch 256",
                 cpus=8, launches_per_step=800)


@trace("h100-rl-scoring-eager", "train", "tiny_kernels", "trainer", 1, "H100", 2, 360, (150, 270),
       note="an RL loop's reward-model scoring phase runs token by token in eager PyTorch at batch "
       "4: GPU-Util 97%, SM active ~7%, power ~140 W for two minutes; then training resumes")
def _(rng, start):
    hk = THooks(phase=lambda t: "tiny" if 150 <= t < 270 else "train")
    return train("H100", 1, 2, 360, rng, start, hk, counter="samples", step_s=0.6, tokens_per_step=64,
                 cmd="python rl_train.py", cpus=32)


@trace("vllm-h200-restart-enforce-eager-05b", "serve-vllm", "tiny_kernels", "vllm", 1, "H200", 1,
       330, (175, 330), note="the engine is restarted at 110 s with --enforce-eager for debugging and "
       "left so: a 0.5B model at low concurrency launches thousands of tiny kernels per step")
def _(rng, start):
    def config(t, sv):
        sv.eager = t >= 150
    down = lambda t: "stopped" if 110 <= t < 125 else ("loading" if 125 <= t < 145 else (
        "warmup" if 145 <= t < 150 else None))
    hk = H(rate=lambda t: wob(t, 5.0), prompt=lambda t: 400, out=lambda t: 200, down=down, config=config)
    return serve("vllm", "qwen05b", "H200", 1, 1, 330, rng, start, hk)


# =============================================================== memory_bandwidth

@trace("vllm-h100-agent-context-growth", "serve-vllm", "memory_bandwidth", "vllm", 1, "H100", 2, 480,
       (210, 480), note="agent sessions grow their context from 3k to 40k tokens (prefix-cached): "
       "each decode step reads the whole KV; DRAM ~90%, ITL grows with context, tokens/s flat")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 0.5, 0.08), prompt=lambda t: ramp(t, 120, 400, 3000, 40000),
           out=lambda t: 500, cached=lambda t: 0.97)
    return serve("vllm", "llama8b", "H100", 1, 2, 480, rng, start, hk, max_len=131072)


@trace("sglang-a100-tp2-batch-swell", "serve-sglang", "memory_bandwidth", "sglang", 2, "A100", 1, 300,
       (150, 300), note="traffic triples and the batch swells to ~150 with 1.5k contexts: decode "
       "is HBM-bound (NVML memory util ~90%, no GPM on A100), ITL x3")
def _(rng, start):
    hk = H(rate=lambda t: ramp(t, 100, 180, 5.0, 10.0) * (1 + 0.05 * math.sin(t / 9)),
           prompt=lambda t: 1100, out=lambda t: 400)
    return serve("sglang", "llama8b", "A100", 2, 1, 300, rng, start, hk, mem_util=0.88)


@trace("vllm-b200-tp4-longdoc-rag", "serve-vllm", "memory_bandwidth", "vllm", 4, "B200", 2, 400,
       (200, 400), note="legal-document RAG moves from 8k to 90k-token cached contexts on TP4 B200: "
       "attention reads of the KV dominate each step, DRAM near its limit")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 1.0, 0.06), prompt=lambda t: ramp(t, 130, 330, 8000, 90000),
           out=lambda t: 400, cached=lambda t: 0.95)
    return serve("vllm", "llama70b", "B200", 4, 2, 400, rng, start, hk, max_len=131072)


# =============================================================== throttling

@trace("vllm-a100-power-cap-lowered", "serve-vllm", "throttling", "vllm", 1, "A100", 1, 300,
       (140, 300), culprit=(0,), note="facilities lower the power limit to 220 W (nvidia-smi -pl) "
       "on a busy prefill-heavy server: clocks fall, 'power cap', ITL and TTFT up")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 3.2), prompt=lambda t: 1500, out=lambda t: 200,
           power_limit=lambda t, g: 400.0 if t < 140 else 220.0)
    return serve("vllm", "llama8b", "A100", 1, 1, 300, rng, start, hk)


@trace("train-h200x8-hall-cooling", "train", "throttling", "trainer", 8, "H200", 2, 480, (230, 480),
       note="the hall's cooling degrades: all eight GPUs warm by ~30 degrees over three minutes and "
       "hit thermal slowdown together; no rank stands out")
def _(rng, start):
    off = [rng.uniform(-3, 3) for _ in range(8)]
    hk = THooks(heat=lambda t, g: ramp(t, 150, 330, 0, 30) + off[g])
    return train("H200", 8, 2, 480, rng, start, hk, counter="tokens", step_s=1.2, comm_s=0.2)


@trace("cuda-l40s-fan-failure", "cuda", "throttling", None, 1, "L40S", 2, 360, (175, 360),
       culprit=(0,), note="a CFD solver (plain CUDA) on an L40S whose chassis fan fails: the board "
       "heats past slowdown, then thermal (hw); iterations slow")
def _(rng, start):
    hk = THooks(heat=lambda t: 0.0, )
    hk.heat = lambda t, g: ramp(t, 140, 200, 0, 36)
    return train("L40S", 1, 2, 360, rng, start, hk, step_s=0.05, cmd="./solver --mesh wing_fine.cgns",
                 proc_name="solver", workers=0, loader_cost=0.0, cpus=32,
                 compute=Act(1.0, 0.97, 0.45, 0.55, 0.3), launches_per_step=40)


# =============================================================== kv_pressure

@trace("vllm-h100-kv-preempt-after-upgrade", "serve-vllm", "kv_pressure", "vllm", 1, "H100", 1, 300,
       (140, 300), note="after an upgrade the pod runs with gpu_memory_utilization 0.35: a 60k-token "
       "KV pool; when long answers arrive at 9 rps the pool fills, requests are preempted, the queue grows")
def _(rng, start):
    hk = H(rate=lambda t: ramp(t, 120, 150, 2.2, 6.5) * (1 + 0.06 * math.sin(t / 11)),
           prompt=lambda t: 900, out=lambda t: 700)
    return serve("vllm", "llama8b", "H100", 1, 1, 300, rng, start, hk, pool_tokens=60000, mem_util=0.35)


@trace("sglang-h200-tp4-reasoning-retract", "serve-sglang", "kv_pressure", "sglang", 4, "H200", 2,
       420, (200, 420), note="a reasoning model's answers grow from 800 to 6000 tokens: SGLang retracts "
       "running requests (their KV freed, prompts re-queued), the queue builds")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 3.0, 0.05), prompt=lambda t: 1200, out=lambda t: ramp(t, 120, 300, 800, 6000))
    return serve("sglang", "qwen32b", "H200", 4, 2, 420, rng, start, hk, pool_tokens=180000)


@trace("vllm-l40s-mild-preempt-waves", "serve-vllm", "kv_pressure", "vllm", 1, "L40S", 2, 360,
       (150, 335), note="an L40S serving an 8B model close to its 180k-token pool: two waves of "
       "long-answer traffic bring occasional preemptions and a modest queue")
def _(rng, start):
    hk = H(rate=lambda t: (2.3 if pulse(t, 150, 335, 120, 60) else 1.1) * (1 + 0.05 * math.sin(t / 7)),
           prompt=lambda t: 2000, out=lambda t: 800)
    return serve("vllm", "llama8b", "L40S", 1, 2, 360, rng, start, hk, cpus=32)


# =============================================================== gpu_shared

@trace("vllm-h100-notebook-lora", "serve-vllm", "gpu_shared", "vllm", 1, "H100", 1, 300, (140, 260),
       note="a data scientist's notebook starts a LoRA fine-tune on the serving GPU: time-slicing "
       "gives it ~45% of the SM time; vLLM's ITL doubles")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 5.0),
           neighbor=lambda t, g: (0.45, 22 * GIB, "python|jupyter-kernel train_lora.ipynb") if 140 <= t < 260 else None)
    return serve("vllm", "llama8b", "H100", 1, 1, 300, rng, start, hk, mem_util=0.6)


@trace("ddp-a100x4-foreign-job-gpu2", "train", "gpu_shared", "trainer", 4, "A100", 2, 400, (150, 400),
       culprit=(2,), note="a colleague's fine-tune is started with CUDA_VISIBLE_DEVICES=2 on the "
       "training node: rank 2 gets half the SM time, the other ranks wait for it")
def _(rng, start):
    nb = lambda t, g: (0.5, 18 * GIB, "python3|python finetune.py --gpu 2") if g == 2 and t >= 150 else None
    return train("A100", 4, 2, 400, rng, start, THooks(neighbor=nb), counter="tokens", step_s=1.0,
                 comm_s=0.15, mem_frac=0.7)


@trace("llamacpp-l40s-comfyui-bursts", "serve-llamacpp", "gpu_shared", "llamacpp", 1, "L40S", 1, 360,
       (130, 335), note="ComfyUI on the same L40S renders images for 20 s every 50 s: llama-server's "
       "decode slows while each render runs (intermittent)")
def _(rng, start):
    nb = lambda t, g: ((0.6 if pulse(t, 130, 335, 50, 20) else 0.0), 10 * GIB, "python|ComfyUI main.py --listen") if t >= 130 else None
    hk = H(rate=lambda t: wob(t, 0.2), prompt=lambda t: 600, out=lambda t: 400, neighbor=nb)
    return serve("llamacpp", "gguf32b_q4", "L40S", 1, 1, 360, rng, start, hk, slots=4, cpus=24)


# =============================================================== spec_decode_rejected

@trace("vllm-h100-eagle-domain-shift", "serve-vllm", "spec_decode_rejected", "vllm", 1, "H100", 2, 420,
       (190, 420), note="EAGLE drafts (k=3) trained on chat; traffic shifts to code in another "
       "language: acceptance falls from 0.75 to 0.15 over two minutes, tokens/s below no-spec")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 5.0), accept=lambda t: ramp(t, 150, 270, 0.75, 0.15))
    return serve("vllm", "llama8b", "H100", 1, 2, 420, rng, start, hk, spec_k=3)


@trace("sglang-h200-stale-draft-after-upgrade", "serve-sglang", "spec_decode_rejected", "sglang", 1,
       "H200", 1, 330, (170, 330), note="an upgrade swaps in a fine-tuned target but keeps the old "
       "draft model: after the restart acceptance is 0.12 (spec_accept_rate gauge)")
def _(rng, start):
    down = lambda t: "stopped" if 120 <= t < 132 else ("loading" if 132 <= t < 155 else (
        "warmup" if 155 <= t < 165 else None))
    hk = H(rate=lambda t: wob(t, 6.0), down=down, accept=lambda t: 0.72 if t < 120 else 0.12)
    return serve("sglang", "llama8b", "H200", 1, 1, 330, rng, start, hk, spec_k=4)


@trace("llamacpp-a100-draft-mismatch", "serve-llamacpp", "spec_decode_rejected", "llamacpp", 1, "A100",
       2, 360, (160, 360), note="llama-server with a small draft model (--draft-max 8); users switch "
       "to Japanese prompts at 160 s and almost every draft is rejected")
def _(rng, start):
    hk = H(rate=lambda t: wob(t, 0.06), prompt=lambda t: 500, out=lambda t: 300,
           accept=lambda t: 0.7 if t < 160 else 0.1)
    return serve("llamacpp", "gguf70b_q8", "A100", 1, 2, 360, rng, start, hk, spec_k=8, slots=2, cpus=32)
