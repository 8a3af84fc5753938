"""The traces: what runs, on what box, what goes wrong when (wall-clock window), and who."""

from __future__ import annotations

import math

from .box import HostLoad
from .hw import GIB, Proc
from .serving import Req


def ramp(t, a, b, lo, hi):
    if t <= a:
        return lo
    if t >= b:
        return hi
    return lo + (hi - lo) * (t - a) / (b - a)


def win(t, a, b):
    return a <= t < b


def pulses(t, a, b, on, off):
    return a <= t < b and ((t - a) % (on + off)) < on


def wave(t, period, lo, hi, phase=0.0):
    return lo + (hi - lo) * 0.5 * (1 + math.sin(2 * math.pi * (t / period) + phase))


def eng(kind, model, gpus, rate, prompt=(900, 0.8), out=(220, 0.7), tp=None, **kw):
    d = dict(kind=kind, model=model, gpus=tuple(gpus), tp=tp or len(gpus), rate=rate,
             prompt=prompt, out=out)
    d.update(kw)
    d.setdefault("kw", {})
    return d


def contended(cpus, extra_cores, psi, runq_extra):
    base = min(6.0, cpus * 0.35)
    return lambda t: HostLoad(cpu_pct=min(100.0, 100 * (base + extra_cores(t)) / cpus),
                              psi=psi(t), runq=base + runq_extra(t),
                              ctx_per_s=30000 + 4000 * extra_cores(t), launcher_invol_per_s=40)


def heavy_injector(times, n=8, heavy=0.05, out=400, prompt=512, max_tokens=None):
    """Requests that make every step slow while they decode (n sequences, logprobs over the
    vocabulary, huge max_tokens): injected at the given times."""
    def inject(t, dt):
        return [Req(x, prompt, 32, out, n=n, max_tokens=max_tokens or out, heavy=heavy)
                for x in times if t <= x < t + dt]
    return inject


def other_proc(gpu, pid, name, cmd, act, user="alice"):
    return {"act": act, "proc": Proc(pid, gpu, name, cmd, 0, user=user, start=0.0)}


def _other(fn, mem_gib):
    def act(t):
        o = fn(t)
        if o is None:
            return None
        o = dict(o)
        o["mem"] = int(mem_gib * GIB)
        return o
    return act


T = []  # (name, family, cause, culprit, window, engine, gpu, n, tick, dur, note, driver, cfg)


def add(name, family, cause, culprit, window, engine, gpu, n, tick, dur, note, driver, **cfg):
    cfg.update(gpu=gpu, n=n, tick=tick, dur=dur)
    T.append((name, family, cause, culprit, window, engine, gpu, n, tick, dur, note, driver, cfg))


# =============================================================== oversized_request
add("vllm-h100-n8-logprobs", "serving-vllm", "oversized_request", None, (150, 215), "vllm",
    "H100", 1, 1, 330, "one n=8 logprobs=20 request among 40 chats: every step 3x slower",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 6.0, users=lambda t: 40,
                          inject=heavy_injector([150], n=8, heavy=0.014, out=2600))])
add("sglang-h200-n16-maxtok", "serving-sglang", "oversized_request", None, (120, 230), "sglang",
    "H200", 1, 2, 360, "n=16 sampling with top_logprobs, max_tokens 4096: moderate 1.6x",
    "serve", engines=[eng("sglang", "qwen7b", [0], lambda t: 9.0,
                          users=lambda t: 48, inject=heavy_injector([120], n=16, heavy=0.006, out=3300,
                                                max_tokens=4096))])
add("vllm-b200-tp2-intermittent-heavy", "serving-vllm", "oversized_request", None, (110, 280),
    "vllm", "B200", 2, 1, 380, "a batch client sends n=8 logprobs requests in bursts",
    "serve", ebpf=True, engines=[eng("vllm", "llama70b", [0, 1], lambda t: 5.0,
                                     inject=heavy_injector([110, 170, 235], n=8, heavy=0.04,
                                                           out=300))])
add("vllm-h100-rag-burst", "serving-vllm", "prefill_interference", None, (140, 230), "vllm",
    "H100", 1, 1, 330, "RAG tenant sends 16k-token contexts at 1.1/s: ITL p99 4x",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 6.0, prompt=(800, 0.7),
                          streams=[(lambda t: 1.1 if win(t, 140, 230) else 0.0, (16000, 0.2), (60, 0.4))])])
add("sglang-h200-prompts-grow", "serving-sglang", "prefill_interference", None, (120, 300),
    "sglang", "H200", 1, 2, 400, "prompt lengths grow from 1k to 5.5k over 3 minutes (agents)",
    "serve", engines=[eng("sglang", "qwen14b", [0], lambda t: 3.0,
                          prompt_t=lambda t: (int(ramp(t, 120, 300, 1000, 5500)), 0.3),
                          out=(200, 0.6))])
add("vllm-h200-tp4-bursts", "serving-vllm", "prefill_interference", None, (100, 260), "vllm",
    "H200", 4, 1, 360, "bursts of document-summarisation prompts every 40 s (20 s on)",
    "serve", engines=[eng("vllm", "llama70b", [0, 1, 2, 3],
                          lambda t: 4.0,
                          streams=[(lambda t: 0.9 if pulses(t, 100, 260, 20, 20) else 0.0, (8000, 0.2), (40, 0.3))])])
add("llamacpp-a10g-long-prompts", "serving-llamacpp", "prefill_interference", None, (150, 270),
    "llamacpp", "A10G", 1, 2, 360, "a user pastes 6k-token files into a 4-slot server",
    "serve", engines=[eng("llamacpp", "gguf8b", [0], lambda t: 0.35, prompt=(300, 0.6),
                          streams=[(lambda t: 0.12 if win(t, 150, 270) else 0.0, (6000, 0.2), (180, 0.5))],
                          out=(180, 0.5), kw=dict(slots=4, pool_tokens=32768, budget=2048,
                                                  host_ms=1.0))])

# =============================================================== collective_straggler
add("vllm-h200-tp4-gridlock", "serving-vllm", "collective_straggler", (2,), (130, 300), "vllm",
    "H200", 4, 1, 400, "GPU 2 held at 750 MHz (HW slowdown); ranks 0,1,3 wait in all-reduce",
    "serve", limit=lambda t, g: (750, "hw slowdown") if g == 2 and win(t, 130, 300) else None,
    engines=[eng("vllm", "llama70b", [0, 1, 2, 3], lambda t: 6.0)])
add("ddp-h100x8-slow-rank", "training-ddp", "collective_straggler", (5,), (150, 330), None,
    "H100", 8, 2, 420, "8-GPU DDP pretraining, GPU 5 at 690 MHz from thermal, no counter",
    "train", step_s=0.42, comm_s=0.05,
    limit=lambda t, g: (690, "thermal (hw)") if g == 5 and win(t, 150, 330) else None,
    temp_floor=lambda t, g: 89 if g == 5 and win(t, 140, 330) else None)
add("fsdp-a100x4-degraded-link", "training-fsdp", "collective_straggler", (1,), (120, 280), None,
    "A100", 4, 2, 360, "FSDP: rank 1's NVLink falls back to PCIe, its all-gathers 4x slower",
    "train", step_s=0.5, comm_s=0.08, link=lambda t: 6.0 if win(t, 120, 280) else 1.0,
    heavier=lambda t, g: 1.3 if g == 1 and win(t, 120, 280) else 1.0,
    counter=("samples", 2.0))
add("sglang-b200-tp8-intermittent", "serving-sglang", "collective_straggler", (6,), (110, 290),
    "sglang", "B200", 8, 2, 380, "GPU 6 power brake asserted 20 s on / 25 s off",
    "serve", limit=lambda t, g: (650, "power brake") if g == 6 and pulses(t, 110, 290, 20, 25) else None,
    engines=[eng("sglang", "llama70b", list(range(8)), lambda t: 10.0)])
add("finetune-h100-few-workers", "training-single", "input_stall", (0,), (120, 300), None,
    "H100", 1, 1, 380, "num_workers=2 after a config change: util saw-tooth 35-60%",
    "train", step_s=0.18, data=lambda t: 2.8 if win(t, 120, 300) else 50.0, workers=2,
    decode_cpu_s=0.7, sawtooth=True, pinned=True, prefetch=4)
add("ddp-a100x4-nfs-slow", "training-ddp", "input_stall", None, (150, 330), None,
    "A100", 4, 2, 400, "shards on NFS: read rate falls over 2 minutes, steps wait for data",
    "train", step_s=0.3, comm_s=0.03, data=lambda t: ramp(t, 150, 270, 40.0, 1.6),
    counter=("samples", 2.0), prefetch=6)
add("l40s-jpeg-decode", "training-single", "input_stall", (0,), (90, 250), None,
    "L40S", 1, 2, 320, "image model: JPEG decode in 4 workers pegged, GPU waits",
    "train", step_s=0.22, data=lambda t: 2.2 if win(t, 90, 250) else 30.0, workers=4,
    decode_cpu_s=1.8, pinned=True, prefetch=3, cpus=16)
add("ddp-h200x8-storage-hiccups", "training-ddp", "input_stall", None, (100, 300), None,
    "H200", 8, 1, 380, "object-store reads stall 15 s every 45 s: all ranks starve together",
    "train", step_s=0.35, comm_s=0.04,
    data=lambda t: 0.4 if pulses(t, 100, 300, 15, 30) else 40.0, counter=("samples", 1.0),
    prefetch=4)

# =============================================================== host_launch_jitter
add("vllm-h100-launcher-third-core", "serving-vllm", "host_launch_jitter", None, (130, 290),
    "vllm", "H100", 1, 1, 380, "the EngineCore thread gets a third of a core (cgroup quota): "
    "eBPF launch tail, GPU-Util 55%", "serve", ebpf=True,
    host_share=lambda t: 0.33 if win(t, 130, 290) else 1.0,
    jitter=lambda t: (0.08, 6.0) if win(t, 130, 290) else (0.0, 0.0),
    engines=[eng("vllm", "llama8b", [0], lambda t: 9.0, kw=dict(host_ms=6.0))])
add("sglang-h200-gil-jitter", "serving-sglang", "host_launch_jitter", None, (110, 280), "sglang",
    "H200", 1, 2, 360, "tokenizer threads fight the scheduler for the GIL in bursts",
    "serve", ebpf=True, host_share=lambda t: 0.45 if pulses(t, 110, 280, 25, 20) else 1.0,
    jitter=lambda t: (0.06, 4.0) if pulses(t, 110, 280, 25, 20) else (0.0, 0.0),
    engines=[eng("sglang", "qwen7b", [0], lambda t: 12.0, kw=dict(host_ms=5.0))])
add("sim-l40s-irq-jitter", "cuda-program", "host_launch_jitter", (0,), (100, 250), None,
    "L40S", 1, 1, 330, "a stencil simulation launching 20k small kernels/s; its core takes NIC IRQs",
    "prog", ebpf=True, cmd="./lbm_solver --grid 512", pname="lbm_solver",
    act=lambda t, g: dict(busy=0.55 if win(t, 100, 250) else 0.93, sm=0.5 if win(t, 100, 250) else 0.86,
                          tensor=0.0, dram=0.38 if win(t, 100, 250) else 0.64, mem=18,
                          launch_per_s=11000 if win(t, 100, 250) else 19000),
    jitter=lambda t: (0.04, 3.0) if win(t, 100, 250) else (0.0, 0.0))

# =============================================================== host_cpu_contention
add("vllm-h100-compile-neighbour", "serving-vllm", "host_cpu_contention", None, (120, 300), "vllm",
    "H100", 1, 1, 400, "a make -j64 on the same 32-core host: engine thread gets 1/3 core, "
    "queue in the hundreds", "serve", cpus=32, ebpf_listed=True,
    host_share=lambda t: 0.34 if win(t, 120, 300) else 1.0,
    host=contended(32, lambda t: 58 if win(t, 120, 300) else 0,
                   lambda t: 62.0 if win(t, 120, 300) else 0.5,
                   lambda t: 70 if win(t, 120, 300) else 0),
    engines=[eng("vllm", "llama8b", [0], lambda t: 9.5, kw=dict(host_ms=6.0, max_seqs=128))])
add("llamacpp-a10g-noisy-containers", "serving-llamacpp", "host_cpu_contention", None,
    (100, 260), "llamacpp", "A10G", 1, 2, 340, "other containers on a 4-vCPU instance",
    "serve", cpus=4, host_share=lambda t: 0.3 if win(t, 100, 260) else 1.0,
    host=contended(4, lambda t: 5 if win(t, 100, 260) else 0,
                   lambda t: 55.0 if win(t, 100, 260) else 1.0,
                   lambda t: 9 if win(t, 100, 260) else 0),
    engines=[eng("llamacpp", "gguf8b", [0], lambda t: 0.6, prompt=(400, 0.6), out=(200, 0.5),
                 kw=dict(slots=4, pool_tokens=32768, budget=2048, host_ms=7.0))])
add("ddp-h100x2-tokenizer-job", "training-ddp", "host_cpu_contention", None, (150, 320), None,
    "H100", 2, 2, 400, "a dataset tokenisation job with 48 processes starts on the training box",
    "train", cpus=48, step_s=0.09, comm_s=0.01, kernels=5.0, host_ms=6.0, pinned=True,
    host_share=lambda t: 0.38 if win(t, 150, 320) else 1.0,
    host=contended(48, lambda t: 48 if win(t, 150, 320) else 0,
                   lambda t: 48.0 if win(t, 150, 320) else 0.6,
                   lambda t: 40 if win(t, 150, 320) else 0))
add("sglang-b200-gradual-contention", "serving-sglang", "host_cpu_contention", None, (120, 330),
    "sglang", "B200", 1, 2, 420, "a log shipper's CPU grows over 3 minutes until the scheduler starves",
    "serve", cpus=16, host_share=lambda t: ramp(t, 120, 300, 1.0, 0.4),
    host=contended(16, lambda t: ramp(t, 120, 300, 0, 14),
                   lambda t: ramp(t, 120, 300, 1.0, 50.0), lambda t: ramp(t, 120, 300, 0, 18)),
    engines=[eng("sglang", "llama8b", [0], lambda t: 22.0, kw=dict(host_ms=5.0))])

# =============================================================== tiny_kernels
add("notebook-h200-python-loop", "cuda-program", "tiny_kernels", (0,), (120, 300), None,
    "H200", 1, 1, 380, "a notebook replaces a batched op by a per-row Python loop: 100% util, 2% SM",
    "prog", cmd="python -m ipykernel_launcher -f kernel-3f2.json", user="alice",
    act=lambda t, g: dict(busy=0.99, sm=0.02, tensor=0.0, dram=0.004, mem=30, launch_per_s=60000)
    if win(t, 120, 300) else dict(busy=0.97, sm=0.9, tensor=0.7, dram=0.3, mem=30, launch_per_s=3000))
add("rl-policy-a100-tiny", "training-rl", "tiny_kernels", (0,), (100, 260), None,
    "A100", 1, 2, 340, "RL: env-step loop runs a 2-layer MLP batch 1 per step, no graphs",
    "prog", cmd="python ppo.py --env-batch 1",
    act=lambda t, g: dict(busy=0.96, sm=0.04, tensor=0.0, dram=0.01, mem=6)
    if win(t, 100, 260) else dict(busy=0.95, sm=0.85, tensor=0.55, dram=0.35, mem=6))
add("bench-b200-small-problem", "cuda-program", "tiny_kernels", (0,), (90, 240), None,
    "B200", 1, 1, 300, "a benchmark sweep reaches N=64 matrices: full util, a sliver of SMs",
    "prog", cmd="./gemm_sweep --sizes 8192..64", pname="gemm_sweep", ebpf=True,
    act=lambda t, g: dict(busy=0.98, sm=0.05, tensor=0.01, dram=0.01, mem=4, launch_per_s=80000)
    if win(t, 90, 240) else dict(busy=0.99, sm=0.96, tensor=0.9, dram=0.2, mem=4, launch_per_s=400))

# =============================================================== memory_bandwidth
add("vllm-h200-context-growth", "serving-vllm", "memory_bandwidth", None, (120, 330), "vllm",
    "H200", 1, 2, 420, "24 chat sessions grow to 30k tokens each: KV reads saturate HBM, ITL 2x",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 2.5, users=lambda t: 24,
                          prompt_t=lambda t: (int(ramp(t, 120, 300, 3000, 30000)), 0.15),
                          cached_t=lambda t: 0.95 if t > 120 else 0.5, out=(800, 0.3),
                          kw=dict(max_seqs=128))])
add("llamacpp-l40s-long-context", "serving-llamacpp", "memory_bandwidth", None, (110, 300),
    "llamacpp", "L40S", 1, 2, 380, "4 slots at 28k context each on an L40S (no GPM)",
    "serve", engines=[eng("llamacpp", "gguf14b", [0], lambda t: 0.15,
                          prompt_t=lambda t: (int(ramp(t, 110, 260, 1500, 28000)), 0.1),
                          cached_t=lambda t: 0.95 if t > 110 else 0.0, out=(700, 0.3),
                          kw=dict(slots=4, pool_tokens=131072, budget=2048, host_ms=0.8))])
add("vllm-a100-gradual-bandwidth", "serving-vllm", "memory_bandwidth", None, (140, 340), "vllm",
    "A100", 1, 2, 420, "a summarisation tenant's contexts creep from 4k to 30k (no GPM)",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 3.0, users=lambda t: 10,
                          prompt_t=lambda t: (int(ramp(t, 140, 320, 4000, 30000)), 0.2),
                          cached_t=lambda t: 0.9, out=(500, 0.4), kw=dict(max_seqs=96))])

# =============================================================== throttling
add("l40s-fan-failure-thermal", "serving-llamacpp", "throttling", (0,), (120, 330), "llamacpp",
    "L40S", 1, 2, 420, "chassis fan fails: temperature climbs to 90 C, clocks 2520 -> 1100 MHz",
    "serve", temp_floor=lambda t, g: ramp(t, 100, 200, 0, 91) if t > 100 else None,
    limit=lambda t, g: (ramp(t, 120, 240, 2400, 1100), "thermal (sw)") if t >= 120 else None,
    engines=[eng("llamacpp", "gguf14b", [0], lambda t: 0.8, prompt=(600, 0.5), out=(300, 0.5), users=lambda t: 8,
                 kw=dict(slots=8, pool_tokens=65536, budget=2048, host_ms=0.8))])
add("box-h100x8-one-power-brake", "serving-vllm", "throttling", (3,), (150, 320), "vllm",
    "H100", 8, 2, 420, "8 independent vLLM servers, GPU 3's board asserts power brake (600 MHz)",
    "serve", limit=lambda t, g: (600, "power brake") if g == 3 and win(t, 150, 320) else None,
    engines=[eng("vllm", "llama8b", [g], (lambda gg: (lambda t: 4.0 + gg * 0.3))(g))
             for g in range(8)], focus=3)
add("a10g-power-cap-lowered", "serving-vllm", "throttling", (0,), (100, 260), "vllm",
    "A10G", 1, 1, 340, "an admin sets nvidia-smi -pl 150 on a busy A10G",
    "serve", cap=lambda t, g: 150.0 if t >= 100 else None,
    engines=[eng("vllm", "qwen7b", [0], lambda t: 2.5, prompt=(1500, 0.6), users=lambda t: 24,
                 kw=dict(max_seqs=64, budget=2048, mem_util=0.92))])
add("train-h200-hw-slowdown-pulses", "training-single", "throttling", (0,), (120, 300), None,
    "H200", 1, 2, 380, "HW slowdown toggles (PSU event) 20 s on, 20 s off during a fine-tune",
    "train", step_s=0.4, counter=("samples", 2.0),
    limit=lambda t, g: (840, "hw slowdown") if pulses(t, 120, 300, 20, 20) else None)
add("vllm-h100-preemption-storm", "serving-vllm", "kv_pressure", None, (130, 300), "vllm",
    "H100", 1, 1, 380, "long outputs fill a 0.5-utilisation pool: preemptions, recompute, queue",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 4.0 + (1.5 if win(t, 130, 300) else 0),
                          out_t=lambda t: (2500, 0.3) if win(t, 130, 300) else (200, 0.6),
                          prompt=(2000, 0.5), kw=dict(mem_util=0.32))])
add("sglang-h200-retractions", "serving-sglang", "kv_pressure", None, (110, 290), "sglang",
    "H200", 1, 2, 360, "SGLang retracts decodes when a long-output tenant fills the pool",
    "serve", engines=[eng("sglang", "qwen32b", [0], lambda t: 1.5 + (1.5 if win(t, 110, 290) else 0),
                          out_t=lambda t: (3000, 0.3) if win(t, 110, 290) else (250, 0.6),
                          prompt=(3000, 0.5), kw=dict(pool_tokens=220000))])
add("vllm-a100-kv-gradual", "serving-vllm", "kv_pressure", None, (140, 340), "vllm",
    "A100", 1, 2, 420, "traffic and output length rise over 3 minutes until blocks run out",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: ramp(t, 120, 300, 3.0, 6.0),
                          out_t=lambda t: (int(ramp(t, 120, 300, 250, 1800)), 0.4),
                          prompt=(1500, 0.5), kw=dict(pool_tokens=110000, budget=4096))])
add("vllm-h100-notebook-shares", "serving-vllm", "gpu_shared", (0,), (130, 300), "vllm",
    "H100", 1, 1, 380, "someone starts a training notebook on the serving GPU: 40% of SM time",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 8.0, users=lambda t: 36, kw=dict(mem_util=0.7))],
    gpu_share=lambda t, g: 0.55 if win(t, 130, 300) else 1.0,
    others={0: other_proc(0, 41234, "python3", "python -m ipykernel_launcher -f k1.json",
                          _other(lambda t: dict(busy=0.45, sm=0.9, tensor=0.6, dram=0.3)
                                 if win(t, 130, 300) else None, 18))})
add("train-a100-second-job", "training-single", "gpu_shared", (0,), (120, 300), None,
    "A100", 1, 2, 380, "a second fine-tune lands on the same GPU (no scheduler): step time 1.8x",
    "train", step_s=0.3, counter=("samples", 2.0), mem_frac=0.45,
    other={"gpu": 0, "act": _other(lambda t: dict(busy=0.45, sm=0.9, tensor=0.55, dram=0.3)
                                   if win(t, 120, 300) else None, 30),
           "proc": Proc(51515, 0, "python3", "python finetune_lora.py", 0, user="bob")})
add("box-h100x8-gpu5-shared", "serving-vllm", "gpu_shared", (5,), (140, 320), "vllm",
    "H100", 8, 2, 420, "8 one-GPU servers; a user's job is pinned by mistake to GPU 5",
    "serve", engines=[eng("vllm", "llama8b", [g], (lambda gg: (lambda t: 5.0 + 0.2 * gg))(g),
                          kw=dict(mem_util=0.75)) for g in range(8)],
    gpu_share=lambda t, g: 0.5 if g == 5 and win(t, 140, 320) else 1.0,
    others={5: other_proc(5, 71717, "python3", "python train_resnet.py",
                          _other(lambda t: dict(busy=0.5, sm=0.92, tensor=0.5, dram=0.35)
                                 if win(t, 140, 320) else None, 16))}, focus=5)

# =============================================================== spec_decode_rejected
add("vllm-h100-eagle-rejects", "serving-vllm", "spec_decode_rejected", None, (130, 300), "vllm",
    "H100", 1, 1, 380, "EAGLE drafts (k=4): traffic switches to creative writing, acceptance 0.75 -> 0.12",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 6.0, users=lambda t: 32,
                          accept=lambda t: 0.12 if win(t, 130, 300) else 0.75,
                          kw=dict(spec_k=4, accept=0.75))])
add("sglang-h200-spec-gauge-drop", "serving-sglang", "spec_decode_rejected", None, (110, 290),
    "sglang", "H200", 1, 2, 360, "SGLang EAGLE3: accept rate gauge falls 0.7 -> 0.2 gradually",
    "serve", engines=[eng("sglang", "llama8b", [0], lambda t: 8.0, users=lambda t: 40,
                          accept=lambda t: ramp(t, 110, 230, 0.7, 0.2) if t < 290 else 0.7,
                          kw=dict(spec_k=3, accept=0.7))])
add("llamacpp-l40s-draft-mismatch", "serving-llamacpp", "spec_decode_rejected", None, (100, 250),
    "llamacpp", "L40S", 1, 2, 330, "draft model swapped for one with another tokenizer family",
    "serve", engines=[eng("llamacpp", "gguf14b", [0], lambda t: 0.5, out=(300, 0.5), users=lambda t: 6,
                          accept=lambda t: 0.08 if win(t, 100, 250) else 0.65,
                          kw=dict(slots=4, pool_tokens=32768, budget=2048, spec_k=8, accept=0.65,
                                  host_ms=0.8))])

# =============================================================== healthy look-alikes
H = None
add("h-vllm-h100-traffic-falls-tenth", "serving-vllm", H, None, None, "vllm", "H100", 1, 1, 380,
    "evening: arrivals fall to a tenth over two minutes; a few long generations keep util high",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: ramp(t, 120, 240, 10.0, 1.0),
                          out_t=lambda t: (220, 0.7) if t < 200 else (1500, 0.3))])
add("h-vllm-h200-model-reload", "serving-vllm", H, None, None, "vllm", "H200", 1, 2, 420,
    "engine restarted for a new checkpoint: endpoint gone 70 s, VRAM empties and refills, "
    "counters restart, slow first minute", "serve", reload=(150, 220),
    engines=[eng("vllm", "qwen32b", [0], lambda t: 3.0 if not win(t, 150, 260) else 1.5)])
add("h-vllm-h100-one-10k-prompt", "serving-vllm", H, None, None, "vllm", "H100", 1, 1, 330,
    "a growing workload with one 10k-token prompt at 170 s", "serve",
    engines=[eng("vllm", "llama8b", [0], lambda t: ramp(t, 0, 330, 3.0, 7.0),
                 inject=lambda t, dt: [Req(170.2, 10000, 0, 300)] if t <= 170 < t + dt else [])])
add("h-sglang-h200-diurnal-up", "serving-sglang", H, None, None, "sglang", "H200", 1, 2, 420,
    "morning ramp: arrivals 1.5 -> 6.5 req/s over 4 minutes", "serve",
    engines=[eng("sglang", "qwen14b", [0], lambda t: ramp(t, 60, 300, 1.5, 6.5))])
add("h-sglang-b200-bursty-poisson", "serving-sglang", H, None, None, "sglang", "B200", 1, 1, 360,
    "bursty arrivals: rate itself wanders 4-20 req/s", "serve",
    engines=[eng("sglang", "llama8b", [0], lambda t: wave(t, 47, 4, 20) * wave(t, 13, 0.7, 1.2))])
add("h-vllm-a100-onoff-client", "serving-vllm", H, None, None, "vllm", "A100", 1, 2, 380,
    "a cron client sends 30 s of work then 30 s of nothing", "serve",
    engines=[eng("vllm", "llama8b", [0], lambda t: 6.0 if (t % 60) < 30 else 0.2)])
add("h-vllm-h100-batch-2-to-40", "serving-vllm", H, None, None, "vllm", "H100", 1, 1, 330,
    "a load test jumps concurrency from 2 to 40 within seconds: ITL up a little, tokens/s 10x",
    "serve", engines=[eng("vllm", "llama8b", [0], lambda t: 0.4 if t < 160 else 8.0,
                          out=(300, 0.4))])
add("h-sglang-h200-long-context-tenant", "serving-sglang", H, None, None, "sglang", "H200", 1, 2, 400,
    "a steady long-context tenant (32k documents, prefix cached): DRAM high and flat all along",
    "serve", engines=[eng("sglang", "qwen7b", [0], lambda t: 1.2, prompt=(32000, 0.1),
                          cached=0.94, out=(500, 0.3))])
add("h-vllm-h100-warmup", "serving-vllm", H, None, None, "vllm", "H100", 1, 1, 330,
    "fresh engine: idle, then first requests with cold caches, then steady", "serve",
    engines=[eng("vllm", "qwen7b", [0], lambda t: 0.0 if t < 70 else ramp(t, 70, 130, 0.5, 6.0),
                 cached_t=lambda t: ramp(t, 70, 200, 0.0, 0.5))])
add("h-ddp-h100x8-checkpoints", "training-ddp", H, None, None, None, "H100", 8, 2, 420,
    "DDP pretraining with a 20 s checkpoint save every 2 minutes (GPUs idle, PCIe busy)",
    "train", step_s=0.42, comm_s=0.05,
    phase=lambda t: "ckpt" if 100 <= (t % 120) < 120 and t > 60 else "train")
add("h-fsdp-a100x4-eval-pass", "training-fsdp", H, None, None, None, "A100", 4, 2, 400,
    "FSDP fine-tune with a 50 s eval pass (forward only, lower util) at 180 s",
    "train", step_s=0.5, comm_s=0.08, counter=("samples", 2.0),
    phase=lambda t: "eval" if win(t, 180, 230) else "train")
add("h-l40s-grad-accum", "training-single", H, None, None, None, "L40S", 1, 1, 360,
    "LoRA fine-tune with gradient accumulation 8: optimizer step every few seconds",
    "train", step_s=0.3, counter=("samples", 4.0), batch=8)
add("h-h100-mig-slices", "inference-mig", H, None, None, None, "H100", 1, 2, 360,
    "MIG 3g.40gb x2: two small inference services, GPU-Util not available in MIG mode",
    "mig")
add("h-l40sx2-second-healthy-process", "serving-llamacpp", H, None, None, "llamacpp", "L40S", 2, 2, 380,
    "llama-server on GPU 0; a notebook trains on GPU 1 from 150 s on", "serve",
    engines=[eng("llamacpp", "gguf8b", [0], lambda t: 0.8, kw=dict(slots=6, pool_tokens=49152,
                                                                  budget=2048, host_ms=0.8))],
    others={1: other_proc(1, 33333, "python3", "python -m ipykernel_launcher -f k9.json",
                          _other(lambda t: dict(busy=0.9, sm=0.85, tensor=0.5, dram=0.3)
                                 if t >= 150 else None, 20))})
add("h-h200x8-power-cap-steady", "training-ddp", H, None, None, None, "H200", 8, 2, 420,
    "8-GPU training at its power cap all along: clocks ~1450 MHz, 'power cap' set, work steady",
    "train", step_s=0.45, comm_s=0.04, tensor=0.9, counter=("tokens", 2.0), batch=1048576)
add("h-vllm-h100-tp4-ranks-differ", "serving-vllm", H, None, None, "vllm", "H100", 4, 1, 360,
    "TP=4 ranks differ by a few percent (rank 2 a bit cooler, less power)", "serve",
    engines=[eng("vllm", "llama70b", [0, 1, 2, 3], lambda t: 5.0, rank_skew=[1.0, 0.99, 0.96, 1.0])])
add("h-vllm-h200-prefix-cache-hits", "serving-vllm", H, None, None, "vllm", "H200", 1, 1, 360,
    "a agent framework resends 20k-token histories: 97% prefix-cached, prompt tokens/s huge, "
    "little prefill work", "serve",
    engines=[eng("vllm", "llama8b", [0], lambda t: 5.0, prompt_t=lambda t: (20000, 0.2) if t > 140 else (1500, 0.5),
                 cached_t=lambda t: 0.97 if t > 140 else 0.4, out=(150, 0.5))])
add("h-llamacpp-a10g-single-user", "serving-llamacpp", H, None, None, "llamacpp", "A10G", 1, 2, 360,
    "one developer chatting: bursts of generation, long idle gaps", "serve",
    engines=[eng("llamacpp", "gguf8b", [0], lambda t: 0.08 if (t % 90) < 45 else 0.01,
                 kw=dict(slots=1, pool_tokens=8192, budget=2048, host_ms=0.8))])
add("h-bench-h200-matmul-at-cap", "cuda-program", H, None, None, None, "H200", 1, 1, 300,
    "a bf16 matmul benchmark: 100% util, power at the cap, clocks ~1460 MHz (as on the real H200)",
    "prog", cmd="python bench_matmul.py --dtype bf16", act=lambda t, g:
    dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, mem=2) if t < 30 else
    dict(busy=0.995, sm=0.956, occ=0.141, tensor=0.929, dram=0.172, mem=89))
add("h-sim-a100x2-io-dumps", "cuda-program", H, None, None, None, "A100", 2, 2, 400,
    "a CFD code writes a snapshot every 90 s (15 s of GPU idle), otherwise steady", "prog",
    cmd="mpirun -np 2 ./cfd_solver case.cfg", pname="cfd_solver", act=lambda t, g:
    dict(busy=0.03, sm=0.0, tensor=0.0, dram=0.01, mem=60) if (t % 90) > 75 else
    dict(busy=0.97, sm=0.9, tensor=0.05, dram=0.7, mem=60, nvlink=3000))
add("h-rl-h100x4-rollout-train", "training-rl", H, None, None, None, "H100", 4, 2, 420,
    "RL: 60 s of rollout generation (decode-like, DRAM bound) then 40 s of training, repeated",
    "prog", cmd="python grpo_train.py", act=lambda t, g:
    dict(busy=0.92, sm=0.7, tensor=0.18, dram=0.72, mem=70) if (t % 100) < 60 else
    dict(busy=0.97, sm=0.93, tensor=0.68, dram=0.3, mem=70, nvlink=9000))
add("h-vllm-h100-batch-job-ends", "serving-vllm", H, None, None, "vllm", "H100", 1, 1, 330,
    "an offline batch job finishes at 200 s: the queue drains, util falls to zero", "serve",
    engines=[eng("vllm", "llama8b", [0], lambda t: 8.5 if t < 200 else 0.0, out=(300, 0.4))])
add("h-pp-h100x4-bubbles", "training-pp", H, None, None, None, "H100", 4, 2, 380,
    "pipeline parallel with steady bubbles: ~80% util on every stage", "train",
    step_s=0.6, comm_s=0.15, counter=("tokens", 3.0), batch=65536)
add("h-box-h100x8-independent", "serving-vllm", H, None, None, "vllm", "H100", 8, 2, 420,
    "8 independent one-GPU servers with different loads, all healthy", "serve",
    engines=[eng("vllm", "llama8b", [g], (lambda gg: (lambda t: 1.0 + 1.3 * gg + wave(t, 80 + gg * 7, 0, 2)))(g))
             for g in range(8)])
add("h-sglang-b200-tp8-ebpf", "serving-sglang", H, None, None, "sglang", "B200", 8, 1, 330,
    "TP=8 serving, eBPF on: launch latencies tight, steady traffic with a diurnal slope", "serve",
    ebpf=True, engines=[eng("sglang", "llama70b", list(range(8)), lambda t: ramp(t, 0, 330, 6, 12))])
add("h-notebook-a10g-idle-kernel", "cuda-program", H, None, None, None, "A10G", 1, 2, 360,
    "an idle Jupyter kernel holds 14 GiB; short cells run now and then", "prog",
    cmd="python -m ipykernel_launcher -f k2.json", act=lambda t, g:
    dict(busy=0.85, sm=0.8, tensor=0.4, dram=0.3, mem=14) if (t % 120) < 12 else
    dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, mem=14))
add("h-finetune-h100-counter-4s", "training-single", H, None, None, None, "H100", 1, 1, 360,
    "steady fine-tune whose samples counter updates once every 4 s, eBPF on", "train",
    step_s=0.25, counter=("samples", 4.0), ebpf=True)
add("h-ddp-a100x8-no-counter", "training-ddp", H, None, None, None, "A100", 8, 2, 400,
    "DDP on A100s without any throughput counter, ranks a few % apart, loader keeps up", "train",
    step_s=0.55, comm_s=0.06, heavier=lambda t, g: 1.0 + 0.01 * (g % 3), pinned=True)
