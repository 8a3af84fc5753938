"""The traces of corpus O: each one a machine, its workloads and what goes wrong (or not).

``TRACES`` lists (name, family, cause, culprit_gpus, engine, note, build); ``build(name)``
returns (world, window) where window is ("marks", workload) - the fault is on while the
workload's own simulation says so - or ("fixed", a, b) in seconds from the start, or None.
"""

from __future__ import annotations

import math

from gputop.schema import ProcSample

from .metrics import MODELS
from .serve import Req, Server
from .train import COMPUTE, Program, Trainer
from .world import World

TRACES = []


def trace(family, cause, culprit=None, engine="", note=""):
    def deco(fn):
        TRACES.append((fn.__name__, family, cause, culprit, engine, note, fn))
        return fn
    return deco


def on(a, b):
    return lambda t: a <= t < b


def wave(base, amp=0.25, p1=37.0, p2=11.0, phase=0.0, bursts=0.0):
    """Arrivals per second: slow swings, faster ripples and (optionally) bursts."""
    def f(t):
        v = base * (1 + amp * math.sin(t / p1 + phase) + 0.5 * amp * math.sin(t / p2 + 2 * phase))
        if bursts and (int((t + 400) // 17) * 7919) % 5 == 0 and (t % 17) < 3:
            v *= 1 + bursts
        return max(0.0, v)
    return f


def chat(mu=6.2, sig=0.9, cached=0.15, lo=16, hi=16000):
    def f(rng, t):
        p = min(hi, lo + int(rng.lognormvariate(mu, sig)))
        return p, int(p * cached * rng.random() * 2) if cached else 0
    return f


def outs(mu=5.3, sig=0.75, cap=2048):
    return lambda rng, t: max(2, min(cap, int(rng.lognormvariate(mu, sig))))


def phase_prompt(t0, t1, normal, special, share):
    """Prompts from ``special`` with probability ``share`` while t0 <= t < t1."""
    def f(rng, t):
        if t0 <= t < t1 and rng.random() < share:
            return special(rng, t)
        return normal(rng, t)
    return f


def host_stall(a, b, share, p, s):
    return (lambda t: share if a <= t < b else 1.0), (lambda t: (p, s) if a <= t < b else (0.0, 0.0))


def running_tag(srv, tag):
    return any(r.tag == tag and r.left == 0 for r in srv.running)


# =========================================================================== pathologies

# ---------------------------------------------------------------- oversized_request

@trace("vllm", "oversized_request", engine="vllm 0.11",
       note="one n=16, logprobs=20, max_tokens=1500 request: vocabulary-wide logprobs for 16 sequences each step")
def vllm011_h100_n16_logprobs(name):
    w = World(name, "H100", 1, 260, 1.0, cpus=48)
    heavy = lambda t, s: ((0.0019 * 16, 0.0009 * 16) if running_tag(s, "big") else (0.0, 0.0))
    s = w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.11, load=wave(5.0, bursts=0.6),
                     prompt=chat(), output=outs(), heavy_fn=heavy,
                     events=[(96.0, dict(prompt=620, cached=0, out=1500, n=16, maxtok=1500, tag="big"))],
                     fault_fn=lambda t, s: running_tag(s, "big") or any(r.tag == "big" for r in s.waiting)))
    return w, ("marks", s)


@trace("sglang", "oversized_request", engine="sglang",
       note="a best_of-style n=16 request with max_tokens=8000: 16 long sequences and their sampling in every batch")
def sglang_h200_n16_huge_max_tokens(name):
    w = World(name, "H200", 1, 300, 1.0, cpus=64, scrape_s=2.0)
    heavy = lambda t, s: ((0.0011 * 16, 0.0003 * 16) if running_tag(s, "big") else (0.0, 0.0))
    s = w.add(Server(w, "sglang", MODELS["qwen32b"], [0], load=wave(2.4, bursts=0.5),
                     prompt=chat(6.4, 0.8), output=outs(5.6, 0.7, 3000), heavy_fn=heavy,
                     events=[(105.0, dict(prompt=1800, cached=0, out=5200, n=16, maxtok=8000, tag="big"))],
                     fault_fn=lambda t, s: running_tag(s, "big")))
    return w, ("marks", s)


@trace("vllm", "oversized_request", engine="vllm 0.20",
       note="an eval harness sends n=8, logprobs=20 requests (vLLM #37343 shape) to a 0.5B model: the sampler dominates every step")
def vllm020_a100_n8_logprobs_eval(name):
    w = World(name, "A100", 1, 270, 1.0, cpus=32)
    ev = [(100.0 + 6.0 * i, dict(prompt=512, cached=32, out=400, n=8, maxtok=400, tag="big")) for i in range(16)]
    heavy = lambda t, s: ((sum(0.0022 * r.n for r in s.running if r.tag == "big" and r.left == 0),
                           sum(0.0012 * r.n for r in s.running if r.tag == "big" and r.left == 0)))
    s = w.add(Server(w, "vllm", MODELS["qwen05b"], [0], version=0.20, load=wave(9.0, 0.3),
                     prompt=chat(6.0, 0.7), output=outs(5.0, 0.6), heavy_fn=heavy, events=ev,
                     fault_fn=lambda t, s: running_tag(s, "big")))
    return w, ("marks", s)


@trace("llamacpp", "oversized_request", engine="llama.cpp",
       note="one slot asks n_probs=100 with n_predict=3000: llama-server sorts the vocabulary on the CPU every token, all slots wait")
def llamacpp_l40s_nprobs_slot(name):
    w = World(name, "L40S", 1, 240, 1.0, cpus=16)
    heavy = lambda t, s: ((0.0, 0.021) if running_tag(s, "big") else (0.0, 0.0))
    s = w.add(Server(w, "llamacpp", MODELS["llama8b_q4"], [0], slots=4, ctx=32768,
                     load=wave(0.45, 0.3), prompt=chat(6.0, 0.8, 0.3, hi=6000),
                     output=outs(5.2, 0.6, 1500), heavy_fn=heavy, host_base_ms=2.5,
                     events=[(92.0, dict(prompt=900, cached=0, out=3000, tag="big"))],
                     fault_fn=lambda t, s: running_tag(s, "big")))
    return w, ("marks", s)


# ---------------------------------------------------------------- prefill_interference

def long_prompt(lo, hi, out_hi=96):
    return lambda rng, t: (int(lo + (hi - lo) * rng.random()), 0)


@trace("vllm", "prefill_interference", engine="vllm 0.10",
       note="a RAG client adds 16-30k-token prompts with short answers: 8192-token chunks ride in every decode step")
def vllm010_h100_rag_long_prompts(name):
    w = World(name, "H100", 1, 260, 1.0, cpus=48)
    base = chat()
    p = phase_prompt(100, 205, base, long_prompt(16000, 30000), 0.14)
    s = w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.10, load=wave(4.5, bursts=0.4),
                     prompt=p, output=outs(), max_batched=8192, max_len=32768,
                     fault_fn=lambda t, s: any(r.left > 4000 for r in s.running)))
    return w, ("marks", s)


@trace("sglang", "prefill_interference", engine="sglang TP2",
       note="long documents (24-32k tokens) submitted to a chat server: SGLang runs each prefill batch alone, decodes stall")
def sglang_h200tp2_long_documents(name):
    w = World(name, "H200", 2, 280, 1.0, cpus=96)
    p = phase_prompt(110, 225, chat(6.3), long_prompt(24000, 32000), 0.1)
    s = w.add(Server(w, "sglang", MODELS["qwen32b"], [0, 1], load=wave(3.0, bursts=0.5),
                     prompt=p, output=outs(5.4), max_batched=8192,
                     fault_fn=lambda t, s: any(r.left > 4000 for r in s.running)))
    return w, ("marks", s)


@trace("vllm", "prefill_interference", engine="vllm 0.25",
       note="6-8k-token prompts on an A10G with a 2048-token chunk budget: the small GPU spends most steps prefilling")
def vllm025_a10g_8k_prompts(name):
    w = World(name, "A10G", 1, 240, 2.0, cpus=8)
    p = phase_prompt(95, 999, chat(5.8, 0.7), long_prompt(6000, 8000), 0.22)
    s = w.add(Server(w, "vllm", MODELS["mistral7b_awq"], [0], version=0.25, load=wave(1.3, 0.3),
                     prompt=p, output=outs(5.0, 0.6, 1024), max_batched=2048, max_seqs=64,
                     gmu=0.92, max_len=16384,
                     fault_fn=lambda t, s: any(r.left > 1500 for r in s.running)))
    return w, ("marks", s)


# ---------------------------------------------------------------- collective_straggler

@trace("training", "collective_straggler", culprit=(3,), engine="trainer tokens",
       note="FSDP, 8xH100: rank 3's packed micro-batches hold 1.45x the tokens (unbalanced packing); the rest wait in reduce-scatter")
def fsdp8_h100_rank3_unbalanced(name):
    w = World(name, "H100", 8, 260, 1.0, cpus=192)
    tr = w.add(Trainer(w, list(range(8)), step_s=0.62, comm_s=0.05, opt_s=0.03, units_per_step=16384,
                       slow_fn=lambda t, r: 1.45 if (r == 3 and t >= 100) else 1.0,
                       fault_fn=lambda t, tr: t >= 100, cmdline="python -m torch.distributed.run train_fsdp.py"))
    return w, ("marks", tr)


@trace("training", "collective_straggler", culprit=(0,), engine="none",
       note="DDP, 4xA100: rank 0 also computes eval metrics and an EMA copy each step; ranks 1-3 spin in all-reduce")
def ddp4_a100_rank0_extra_work(name):
    w = World(name, "A100", 4, 260, 1.0, cpus=64, pinned=dict(label="train.py --ddp", pattern="train.py"))
    tr = w.add(Trainer(w, [0, 1, 2, 3], step_s=0.5, comm_s=0.06, units_per_step=64, unit="samples",
                       counter=False, slow_fn=lambda t, r: 1.38 if (r == 0 and 90 <= t < 215) else 1.0,
                       fault_fn=lambda t, tr: 90 <= t < 215))
    return w, ("marks", tr)


@trace("training", "collective_straggler", culprit=(1,), engine="trainer samples",
       note="DDP, 2xL40S: rank 1's shard switches to high-resolution images mid-epoch; rank 0 waits in the collective")
def ddp2_l40s_rank1_highres_shard(name):
    w = World(name, "L40S", 2, 250, 1.0, cpus=32)
    tr = w.add(Trainer(w, [0, 1], step_s=0.35, comm_s=0.08, units_per_step=32, unit="samples",
                       slow_fn=lambda t, r: 1.6 if (r == 1 and t >= 120) else 1.0,
                       fault_fn=lambda t, tr: t >= 120))
    return w, ("marks", tr)


@trace("training", "collective_straggler", culprit=(6,), engine="trainer tokens",
       note="DDP, 8xH200, 2 s ticks: rank 6's loader runs on the far NUMA node and is late every step; the other seven spin in all-reduce")
def ddp8_h200_rank6_late_input(name):
    w = World(name, "H200", 8, 300, 2.0, cpus=224)

    tr = w.add(Trainer(w, list(range(8)), step_s=0.8, comm_s=0.06, units_per_step=32768,
                       late_fn=lambda t, r: 0.42 if (r == 6 and t >= 110) else 0.0,
                       fault_fn=lambda t, tr: t >= 110))
    return w, ("marks", tr)


# ---------------------------------------------------------------- input_stall

@trace("training", "input_stall", engine="trainer samples",
       note="ResNet-50 on one A100: the dataset falls out of the page cache onto NFS; each step waits for its batch")
def a100_resnet_loader_nfs(name):
    w = World(name, "A100", 1, 240, 1.0, cpus=32)
    tr = w.add(Trainer(w, [0], step_s=0.12, opt_s=0.01, units_per_step=256, unit="samples",
                       loader_fn=lambda t: 0.05 if t < 100 else 0.26, workers=8,
                       fault_fn=lambda t, tr: t >= 100, cmdline="python train_resnet.py --workers 8"))
    return w, ("marks", tr)


@trace("training", "input_stall", engine="none",
       note="4xH100 fine-tune streaming from object storage: every few steps a multi-second fetch, all ranks idle together")
def ddp4_h100_object_storage_stalls(name):
    w = World(name, "H100", 4, 260, 1.0, cpus=96)

    def loader(t):
        if 90 <= t < 205 and int(t * 1.7) % 7 == 0:
            return 3.2
        return 0.2
    tr = w.add(Trainer(w, [0, 1, 2, 3], step_s=0.7, comm_s=0.05, units_per_step=8192, counter=False,
                       loader_fn=loader, prefetch=2, fault_fn=lambda t, tr: 90 <= t < 205))
    return w, ("marks", tr)


@trace("training", "input_stall", engine="none",
       note="L40S, JPEG decode and augmentation on 4 CPU workers can no longer keep up after a resolution change")
def l40s_jpeg_decode_bound(name):
    w = World(name, "L40S", 1, 240, 1.0, cpus=16, pinned=dict(label="train_vit.py", pattern="train_vit"),
              bg=lambda t: 1.5)
    tr = w.add(Trainer(w, [0], step_s=0.22, opt_s=0.02, units_per_step=128, unit="samples", counter=False,
                       loader_fn=lambda t: 0.12 if t < 110 else 0.5, workers=4,
                       fault_fn=lambda t, tr: t >= 110, cmdline="python train_vit.py --workers 4"))
    return w, ("marks", tr)


@trace("training", "input_stall", engine="trainer tokens",
       note="FSDP 8xH200, 2 s ticks: the streaming dataset crosses into shards that must be fetched and tokenised")
def fsdp8_h200_shard_fetch(name):
    w = World(name, "H200", 8, 300, 2.0, cpus=224)
    tr = w.add(Trainer(w, list(range(8)), step_s=0.9, comm_s=0.07, units_per_step=32768,
                       loader_fn=lambda t: 0.3 if not (120 <= t < 240) else 2.6, prefetch=3,
                       fault_fn=lambda t, tr: 120 <= t < 240))
    return w, ("marks", tr)


# ---------------------------------------------------------------- host_launch_jitter (eBPF)

@trace("vllm", "host_launch_jitter", engine="vllm 0.12 eager",
       note="vLLM in eager mode (no CUDA graphs); an IRQ storm on the launch core preempts the launching thread: long launch calls")
def vllm012_h100_eager_irq(name):
    jitter = lambda t: (0.006, 4.0) if t >= 100 else (0.0, 0.0)
    w = World(name, "H100", 1, 240, 1.0, cpus=64,
              ebpf=dict(api="cudaLaunchKernel", base_us=4.5, per_step=32 * 9, jitter=jitter),
              psi_extra=lambda t: 3.0 if t >= 100 else 0.0)
    share, stall = host_stall(100, 999, 0.72, 0.35, 0.006)
    s = w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.12, eager=True, load=wave(4.0),
                     prompt=chat(), output=outs(), cpu_share=share, stall=stall,
                     fault_fn=lambda t, s: t >= 100))
    return w, ("marks", s)


@trace("training", "host_launch_jitter", engine="none",
       note="eager PyTorch training of a small model on an A10G; a logging daemon pinned to the same core preempts the launch thread")
def a10g_eager_train_cotenant_core(name):
    jitter = lambda t: (0.01, 2.5) if 90 <= t < 200 else (0.0, 0.0)
    w = World(name, "A10G", 1, 240, 1.0, cpus=8,
              ebpf=dict(api="cudaLaunchKernel", base_us=5.0, jitter=jitter),
              psi_extra=lambda t: 4.0 if 90 <= t < 200 else 0.0)
    tr = w.add(Trainer(w, [0], step_s=0.09, opt_s=0.01, units_per_step=64, unit="samples", counter=False,
                       loader_s=0.02, host_ms=1.6, cpu_share=lambda t: 0.55 if 90 <= t < 200 else 1.0,
                       compute=(0.8, 0.3, 0.35, 0.3), fault_fn=lambda t, tr: 90 <= t < 200))
    return w, ("marks", tr)


@trace("cuda", "host_launch_jitter", engine="none",
       note="a CUDA program replaying small graphs at 500 Hz; from 100 s its launch thread is preempted (eBPF: long cudaGraphLaunch)")
def h200_graph_loop_preempted(name):
    jitter = lambda t: (0.05, 1.5) if t >= 100 else (0.0, 0.0)
    w = World(name, "H200", 1, 240, 1.0, cpus=32,
              ebpf=dict(api="cudaGraphLaunch", base_us=9.0, jitter=jitter),
              psi_extra=lambda t: 2.0 if t >= 100 else 0.0)
    p = w.add(Program(w, [0], [(0, 100, dict(period=0.002, busy=0.8, sm=0.7, occ=0.3, dram=0.4, ten=0.3, launches=500)),
                               (100, 999, dict(period=0.002, busy=0.42, sm=0.7, occ=0.3, dram=0.4, ten=0.3, launches=380))],
                      cmdline="./graph_bench --iters 0", name="graph_bench", mem_bytes=9e9,
                      fault_fn=lambda t, p: t >= 100))
    return w, ("marks", p)


# ---------------------------------------------------------------- host_cpu_contention

@trace("vllm", "host_cpu_contention", engine="vllm 0.32",
       note="a make -j64 build on a 32-core host: run queue, PSI up, the engine's threads lose CPU; batch grows, ITL p99 2-3x")
def vllm032_h100_build_job(name):
    bg = lambda t: 60.0 if 100 <= t < 215 else 3.0
    w = World(name, "H100", 1, 260, 1.0, cpus=32, bg=bg)
    share, stall = host_stall(100, 215, 0.5, 0.3, 0.03)
    s = w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.32, load=wave(7.0, bursts=0.4), max_seqs=48,
                     prompt=chat(), output=outs(), cpu_share=share, stall=stall, host_base_ms=3.0,
                     host_req_ms=0.12, mfu_metrics=True, fault_fn=lambda t, s: 100 <= t < 215))
    return w, ("marks", s)


@trace("sglang", "host_cpu_contention", engine="sglang",
       note="a data-preprocessing job with 40 processes on a 24-core host next to SGLang on an A100")
def sglang_a100_preprocessing(name):
    bg = lambda t: 42.0 if 90 <= t < 210 else 2.0
    w = World(name, "A100", 1, 250, 1.0, cpus=24, bg=bg)
    share, stall = host_stall(90, 210, 0.38, 0.3, 0.02)
    s = w.add(Server(w, "sglang", MODELS["qwen7b"], [0], load=wave(6.0), prompt=chat(), output=outs(),
                     cpu_share=share, stall=stall, host_base_ms=2.5, host_req_ms=0.1,
                     fault_fn=lambda t, s: 90 <= t < 210))
    return w, ("marks", s)


@trace("training", "host_cpu_contention", engine="trainer tokens",
       note="2xH100 DDP on a 16-core host; another user's job takes 30 cores' worth of runnable threads")
def ddp2_h100_oversubscribed_host(name):
    bg = lambda t: 32.0 if t >= 110 else 1.0
    w = World(name, "H100", 2, 240, 1.0, cpus=16, bg=bg, pinned=dict(label="torchrun train.py", pattern="train.py"))
    tr = w.add(Trainer(w, [0, 1], step_s=0.3, comm_s=0.03, units_per_step=4096, loader_s=0.1, host_ms=5.0,
                       cpu_share=lambda t: 0.4 if t >= 110 else 1.0, workers=4,
                       fault_fn=lambda t, tr: t >= 110))
    return w, ("marks", tr)


@trace("llamacpp", "host_cpu_contention", engine="llama.cpp",
       note="ffmpeg transcodes start on the same 16-core box as llama-server: its decode loop and CPU sampling lose the CPU")
def llamacpp_l40s_ffmpeg(name):
    bg = lambda t: 30.0 if 95 <= t < 205 else 1.0
    w = World(name, "L40S", 1, 240, 1.0, cpus=16, bg=bg)
    share, stall = host_stall(95, 205, 0.4, 0.3, 0.02)
    s = w.add(Server(w, "llamacpp", MODELS["llama8b_q4"], [0], slots=8, ctx=65536, load=wave(0.9),
                     prompt=chat(6.0, 0.8, 0.3, hi=6000), output=outs(5.3, 0.6, 1500), host_base_ms=2.5,
                     cpu_share=share, stall=stall, fault_fn=lambda t, s: 95 <= t < 205))
    return w, ("marks", s)


# ---------------------------------------------------------------- tiny_kernels

@trace("cuda", "tiny_kernels", engine="none",
       note="after a GEMM phase, CUDA-graph replay of one-element kernels: 100% GPU-Util, ~0.3% SM (as the real H200 showed)")
def h200_graph_one_element_kernels(name):
    w = World(name, "H200", 1, 240, 1.0, cpus=16)
    p = w.add(Program(w, [0], [(0, 95, dict(period=1.0, busy=0.93, sm=0.956, occ=0.141, dram=0.172, ten=0.93)),
                               (95, 999, dict(busy=1.0, sm=0.0031, occ=0.00015, dram=0.0000039, ten=0.0000177))],
                      cmdline="python3 scripts/gpu_check.py --phase graph", mem_bytes=5.2e9,
                      fault_fn=lambda t, p: t >= 95))
    return w, ("marks", p)


@trace("training", "tiny_kernels", engine="trainer tokens",
       note="B200 fine-tune restarted with micro-batch 1 and unfused ops: the GPU stays busy on kernels that fill a few SMs")
def b200_microbatch1_unfused(name):
    w = World(name, "B200", 1, 250, 1.0, cpus=64)
    ph = lambda t: dict(compute=(0.045, 0.012, 0.01, 0.008), step_s=0.5) if t >= 100 else None
    tr = w.add(Trainer(w, [0], step_s=0.5, opt_s=0.02, units_per_step=16384, phase_fn=ph,
                       loader_s=0.05, fault_fn=lambda t, tr: t >= 100))
    tr.units_fn = None
    orig = tr.advance

    def adv(s0, s1):  # the same steps move 1/16th of the tokens
        tr.units = 1024 if s0 >= 100 else 16384
        orig(s0, s1)
    tr.advance = adv
    return w, ("marks", tr)


@trace("cuda", "tiny_kernels", engine="none",
       note="an H100 simulation code whose main loop launches single-block reduction kernels back to back")
def h100_single_block_reductions(name):
    w = World(name, "H100", 1, 240, 1.0, cpus=32)
    p = w.add(Program(w, [0], [(0, 105, dict(period=0.5, busy=0.9, sm=0.88, occ=0.45, dram=0.62, ten=0.0)),
                               (105, 999, dict(busy=0.97, sm=0.0082, occ=0.0015, dram=0.0009, ten=0.0))],
                      cmdline="./mc_sim --steps 100000", name="mc_sim", mem_bytes=14e9,
                      fault_fn=lambda t, p: t >= 105))
    return w, ("marks", p)


# ---------------------------------------------------------------- memory_bandwidth

@trace("multi-server", "memory_bandwidth", culprit=(4,), engine="8x vllm 0.18",
       note="eight independent vLLM servers; the one on GPU 4 starts serving 20-28k-token conversations: KV reads saturate HBM")
def eight_servers_h100_gpu4_long_context(name):
    w = World(name, "H100", 8, 240, 1.0, cpus=128)
    servers = []
    for i in range(8):
        if i == 4:
            p = phase_prompt(100, 999, chat(), lambda rng, t: (lambda n: (n, int(n * 0.93)))(int(20000 + 8000 * rng.random())), 0.5)
            o = outs(5.9, 0.5)
        else:
            p, o = chat(), outs()
        s = w.add(Server(w, "vllm", MODELS["llama8b"], [i], version=0.18, url="http://127.0.0.1:%d/metrics" % (8000 + i),
                         load=(lambda t, b=wave(4.6, phase=i): b(t) * (0.45 if t >= 100 else 1.0)) if i == 4
                         else wave(3.0 + 0.4 * i, phase=i), prompt=p, output=o, max_len=32768,
                         pids=tuple(5000 + 100 * i + k for k in range(3)),
                         fault_fn=(lambda t, s: sum(r.prompt for r in s.running) > 150000) if i == 4 else None))
        servers.append(s)
    return w, ("marks", servers[4])


@trace("vllm", "memory_bandwidth", engine="vllm 0.15",
       note="multi-turn chats grow to 12-16k tokens of (prefix-cached) context on an H200: fewer but longer requests, decode becomes KV-read bound")
def vllm015_h200_multiturn_growth(name):
    w = World(name, "H200", 1, 260, 1.0, cpus=64)

    def p(rng, t):
        if t >= 95:
            n = int(12000 + 4000 * rng.random())
            return n, int(n * 0.92)
        return chat()(rng, t)
    s = w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.15,
                     load=lambda t: 5.0 if t < 95 else 3.2, prompt=p,
                     output=outs(5.6, 0.5), max_len=32768,
                     fault_fn=lambda t, s: sum(r.prompt for r in s.running) > 90000))
    return w, ("marks", s)


@trace("training", "memory_bandwidth", engine="trainer tokens",
       note="B200 training switches to an unfused fp32 optimizer and an elementwise-heavy loss: the step waits on HBM")
def b200_unfused_optimizer_membound(name):
    w = World(name, "B200", 1, 240, 1.0, cpus=64)
    ph = lambda t: dict(compute=(0.93, 0.62, 0.93, 0.07), step_s=0.75) if t >= 100 else None
    tr = w.add(Trainer(w, [0], step_s=0.45, opt_s=0.03, units_per_step=16384, phase_fn=ph, loader_s=0.05,
                       fault_fn=lambda t, tr: t >= 100))
    return w, ("marks", tr)


# ---------------------------------------------------------------- throttling

def set_at(t_at, fn):
    done = []

    def hook(t, w):
        if t >= t_at and not done:
            done.append(1)
            fn(w)
    return hook


@trace("training", "throttling", culprit=(5,), engine="trainer tokens",
       note="DDP 8xH100: GPU 5's airflow is blocked, it heats past its slowdown temperature and the driver pulls its clocks; the others spin in all-reduce")
def ddp8_h100_gpu5_thermal(name):
    w = World(name, "H100", 8, 280, 1.0, cpus=192)
    w.hooks.append(set_at(75, lambda w: setattr(w.gpus[5], "thermal_r", 0.13)))
    tr = w.add(Trainer(w, list(range(8)), step_s=0.6, comm_s=0.05, units_per_step=16384))
    return w, ("throttle", 5)


@trace("vllm", "throttling", culprit=(2,), engine="vllm 0.22 TP4",
       note="TP4 Llama-70B on 4xH100: GPU 2 is held at 960 MHz by an external power-brake signal (HW slowdown)")
def vllm022_tp4_h100_gpu2_slowdown(name):
    w = World(name, "H100", 4, 260, 1.0, cpus=128)

    def brake(t, w):
        g = w.gpus[2]
        if 110 <= t < 215:
            g.forced_clock, g.forced_reasons = 960.0, ("hw slowdown", "power brake")
        else:
            g.forced_clock, g.forced_reasons = None, ()
    w.hooks.append(brake)
    w.add(Server(w, "vllm", MODELS["llama70b"], [0, 1, 2, 3], version=0.22, load=wave(3.5, bursts=0.3),
                 prompt=chat(), output=outs()))
    return w, ("fixed", 110, 215)


@trace("vllm", "throttling", engine="vllm 0.18",
       note="an A10G in a clogged chassis: temperature climbs past slowdown, clocks fall from 1710 MHz, tokens/s follows")
def vllm018_a10g_thermal(name):
    w = World(name, "A10G", 1, 260, 1.0, cpus=8)
    w.hooks.append(set_at(70, lambda w: setattr(w.gpus[0], "thermal_r", 0.42)))
    w.add(Server(w, "vllm", MODELS["mistral7b_awq"], [0], version=0.18, load=wave(1.6), prompt=chat(5.8, 0.7),
                 output=outs(5.2, 0.6, 1024), max_seqs=64, max_len=16384))
    return w, ("throttle", 0)


@trace("training", "throttling", engine="trainer tokens",
       note="8xB200 training: an operator lowers every GPU's power limit from 1000 W to 600 W (nvidia-smi -pl); clocks fall, steps slow")
def b200x8_power_limit_lowered(name):
    w = World(name, "B200", 8, 280, 2.0, cpus=224)

    def lower(w):
        for g in w.gpus:
            g.power_limit = 600.0
    w.hooks.append(set_at(120, lower))
    w.add(Trainer(w, list(range(8)), step_s=0.7, comm_s=0.05, units_per_step=32768,
                  compute=(0.9, 0.3, 0.25, 0.6)))
    return w, ("fixed", 120, 280)


# ---------------------------------------------------------------- kv_pressure

@trace("vllm", "kv_pressure", engine="vllm 0.11",
       note="gpu_memory_utilization=0.5 leaves a small KV pool; reasoning requests with 3-6k-token outputs fill it: preemptions, a growing queue")
def vllm011_h100_small_pool_long_outputs(name):
    w = World(name, "H100", 1, 260, 1.0, cpus=48)

    def o(rng, t):
        if t >= 100 and rng.random() < 0.6:
            return int(3000 + 3000 * rng.random())
        return outs()(rng, t)
    s = w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.11, gmu=0.36, load=wave(3.0),
                     prompt=chat(), output=o,
                     fault_fn=lambda t, s: s.kv_used_tok > 0.93 * s.pool_tokens and bool(s.waiting)))
    return w, ("marks", s)


@trace("sglang", "kv_pressure", engine="sglang",
       note="SGLang with --mem-fraction-static 0.55 on an H200 and long agent transcripts: token usage ~1.0, retractions")
def sglang_h200_retractions(name):
    w = World(name, "H200", 1, 260, 1.0, cpus=64, scrape_s=5.0)

    def o(rng, t):
        if t >= 90 and rng.random() < 0.5:
            return int(2500 + 3000 * rng.random())
        return outs()(rng, t)
    s = w.add(Server(w, "sglang", MODELS["qwen32b"], [0], pool_tokens=140000, load=wave(2.2),
                     prompt=chat(7.0, 0.6), output=o,
                     fault_fn=lambda t, s: s.kv_used_tok > 0.93 * s.pool_tokens and bool(s.waiting)))
    return w, ("marks", s)


@trace("vllm", "kv_pressure", culprit=(1,), engine="vllm 0.30 DP2",
       note="two data-parallel engines behind one port; sticky routing sends long agent sessions to engine 1, whose KV pool fills")
def vllm030_dp2_a100_engine1_full(name):
    w = World(name, "A100", 2, 260, 1.0, cpus=64)
    w.add(Server(w, "vllm", MODELS["qwen7b"], [0], version=0.30, load=wave(3.0), prompt=chat(), output=outs(),
                 gmu=0.5, url="http://127.0.0.1:8000/metrics", pids=(700, 701, 702)))

    def o(rng, t):
        if t >= 100 and rng.random() < 0.65:
            return int(4000 + 4000 * rng.random())
        return outs()(rng, t)
    s = w.add(Server(w, "vllm", MODELS["qwen7b"], [1], version=0.30, load=wave(3.0, phase=1.0),
                     prompt=chat(6.8, 0.6), output=o, gmu=0.5, url="http://127.0.0.1:8000/metrics",
                     pids=(700, 711, 712),
                     fault_fn=lambda t, s: s.kv_used_tok > 0.93 * s.pool_tokens and bool(s.waiting)))
    return w, ("marks", s)


# ---------------------------------------------------------------- gpu_shared

def intruder(w, gpu, a, b, name, cmd, mem):
    w.extra_procs.append((a, b, ProcSample(pid=9000 + gpu, gpu_index=gpu, name=name, cmdline=cmd, user="alice",
                                           ppid=8999, start_time_s=w.start_wall + a, mem_bytes=int(mem),
                                           cpu_s=10.0, rss_bytes=int(3e9))))


@trace("vllm", "gpu_shared", engine="vllm 0.11",
       note="a notebook's training loop starts on the serving GPU: time-slicing takes ~45% of the SM time")
def vllm011_h100_notebook_cotenant(name):
    w = World(name, "H100", 1, 260, 1.0, cpus=48)
    intruder(w, 0, 100, 210, "python", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-1.json", 7e9)
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.11, load=wave(4.5), prompt=chat(), output=outs(),
                 gmu=0.8, other_tenant=lambda t: 0.45 if 100 <= t < 210 else 0.0))
    return w, ("fixed", 100, 210)


@trace("training", "gpu_shared", culprit=(3,), engine="none",
       note="4xA100 DDP: another user's job lands on GPU 3 and time-slices it; rank 3 falls behind, ranks 0-2 wait")
def ddp4_a100_gpu3_other_user(name):
    w = World(name, "A100", 4, 250, 1.0, cpus=64)
    intruder(w, 3, 110, 999, "python3", "python3 bench_resnet.py --gpu 3", 11e9)
    w.add(Trainer(w, [0, 1, 2, 3], step_s=0.5, comm_s=0.06, units_per_step=64, unit="samples", counter=False,
                  other_fn=lambda t, r: 0.5 if (r == 3 and t >= 110) else 0.0, mem_frac=0.7))
    return w, ("fixed", 110, 250)


@trace("llamacpp", "gpu_shared", engine="llama.cpp",
       note="ComfyUI (Stable Diffusion) starts generating images on the A10G that serves llama-server")
def llamacpp_a10g_comfyui(name):
    w = World(name, "A10G", 1, 240, 1.0, cpus=8)
    intruder(w, 0, 95, 200, "python", "python main.py --listen (ComfyUI)", 6.5e9)
    w.add(Server(w, "llamacpp", MODELS["llama8b_q4"], [0], slots=4, ctx=16384, load=wave(0.5),
                 prompt=chat(5.8, 0.8, 0.3, hi=4000), output=outs(5.2, 0.6, 1200), host_base_ms=2.5,
                 other_tenant=lambda t: 0.55 if 95 <= t < 200 else 0.0))
    return w, ("fixed", 95, 200)


# ---------------------------------------------------------------- spec_decode_rejected

@trace("vllm", "spec_decode_rejected", engine="vllm 0.20 EAGLE",
       note="EAGLE drafts (k=3) trained on code; traffic turns to creative writing in another language: acceptance 0.72 -> 0.12")
def vllm020_h100_eagle_language_shift(name):
    w = World(name, "H100", 1, 250, 1.0, cpus=48)
    s = w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.20, load=wave(4.0), prompt=chat(),
                     output=outs(), spec_k=3, accept=lambda t: 0.72 if t < 100 else 0.12,
                     fault_fn=lambda t, s: t >= 100))
    return w, ("marks", s)


@trace("sglang", "spec_decode_rejected", engine="sglang EAGLE",
       note="SGLang EAGLE (4 draft tokens): a new tenant's sampling at temperature 1.3 sends accept length from 3.2 to 1.2")
def sglang_h200_eagle_high_temperature(name):
    w = World(name, "H200", 1, 260, 1.0, cpus=64)
    s = w.add(Server(w, "sglang", MODELS["qwen32b"], [0], load=wave(2.0), prompt=chat(), output=outs(),
                     spec_k=4, accept=lambda t: 0.74 if not (110 <= t < 220) else 0.15,
                     fault_fn=lambda t, s: 110 <= t < 220))
    return w, ("marks", s)


@trace("llamacpp", "spec_decode_rejected", engine="llama.cpp draft",
       note="llama-server with a draft model (--draft 8) of another family after an upgrade: most drafts rejected")
def llamacpp_l40s_draft_mismatch(name):
    w = World(name, "L40S", 1, 240, 1.0, cpus=16)
    s = w.add(Server(w, "llamacpp", MODELS["qwen14b_q5"], [0], slots=2, ctx=16384, load=wave(0.3),
                     prompt=chat(6.0, 0.7, 0.3, hi=4000), output=outs(5.5, 0.5, 1500), spec_k=8,
                     accept=lambda t: 0.66 if t < 90 else 0.1, host_base_ms=2.5,
                     fault_fn=lambda t, s: t >= 90 and s.running))
    return w, ("marks", s)


# =========================================================================== healthy look-alikes

@trace("vllm", None, engine="vllm 0.11", note="traffic falls to a tenth over two minutes (end of the working day)")
def vllm011_h100_traffic_falls_tenth(name):
    w = World(name, "H100", 1, 260, 1.0, cpus=48)
    base = wave(8.0, bursts=0.5)
    load = lambda t: base(t) * (1.0 if t < 100 else max(0.1, 1 - 0.9 * (t - 100) / 120))
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.11, load=load, prompt=chat(), output=outs()))
    return w, None


@trace("vllm", None, engine="vllm 0.20",
       note="a model reload: endpoint refuses, VRAM empties and refills, CUDA-graph capture, counters restart, slow start")
def vllm020_h200_model_reload(name):
    down = lambda t: "engine unreachable: connection refused" if 95 <= t < 175 else None
    w = World(name, "H200", 1, 280, 1.0, cpus=64, engine_down=down)
    up = lambda t: not (95 <= t < 175)
    load = lambda t: 3.5 * (1.0 if t < 95 else min(1.0, 0.2 + (t - 175) / 60)) if up(t) else 0.0
    s = w.add(Server(w, "vllm", MODELS["qwen32b"], [0], version=0.20, load=load, prompt=chat(), output=outs(), up=up))
    full = s.w_gpu + s.pool_bytes + 2.2e9 + 520 * 2**20

    def mem(t):
        if t < 95:
            return full
        if t < 120:
            return 0.0 if t >= 97 else full
        if t < 150:
            return 1.5e9 + s.w_gpu * (t - 120) / 30
        if t < 165:
            return s.w_gpu + 4e9
        return full
    w.mem_fn[0] = mem
    w.extra_procs.append((120, 175, ProcSample(pid=4321, gpu_index=0, name="VLLM::EngineCore", cmdline="VLLM::EngineCore",
                                               user="svc", ppid=4300, start_time_s=w.start_wall + 118,
                                               mem_bytes=int(s.w_gpu), cpu_s=40.0)))
    w.add(Program(w, [0], [(150, 160, dict(period=1.0, busy=0.7, sm=0.9, occ=0.4, dram=0.3, ten=0.6)),
                           (160, 174, dict(period=0.5, busy=0.25, sm=0.3, occ=0.1, dram=0.2, ten=0.05))],
                  mem_bytes=0, cpu=1.0, pids=(4321,)))
    return w, None


@trace("vllm", None, engine="vllm 0.20", note="one 10k-token prompt arrives while the workload grows")
def vllm020_a100_one_10k_prompt(name):
    w = World(name, "A100", 1, 240, 1.0, cpus=32)
    load = lambda t: 3.0 + 3.0 * max(0.0, min(1.0, (t - 60) / 150))
    w.add(Server(w, "vllm", MODELS["qwen7b"], [0], version=0.20, load=load, prompt=chat(), output=outs(),
                 events=[(121.0, dict(prompt=10240, cached=0, out=350))]))
    return w, None


@trace("training", None, engine="trainer tokens", note="FSDP 8xH100 writes a sharded checkpoint for 25 s: GPUs idle, counter pauses")
def fsdp8_h100_checkpoint(name):
    w = World(name, "H100", 8, 260, 1.0, cpus=192)
    ph = lambda t: dict(idle=True, dur=25.0, cpu=8.0) if 120 <= t < 121.5 else None
    w.add(Trainer(w, list(range(8)), step_s=0.6, comm_s=0.05, units_per_step=16384, phase_fn=ph))
    return w, None


@trace("training", None, engine="trainer samples", note="4xA100 runs a 50 s evaluation pass: forward only, the training counter stops")
def ddp4_a100_eval_pass(name):
    w = World(name, "A100", 4, 250, 1.0, cpus=64)
    ph = lambda t: dict(compute=(0.78, 0.28, 0.35, 0.42), step_s=0.16, no_count=True) if 100 <= t < 150 else None
    w.add(Trainer(w, [0, 1, 2, 3], step_s=0.5, comm_s=0.06, units_per_step=64, unit="samples", phase_fn=ph))
    return w, None


@trace("sglang", None, engine="sglang", note="a new client reuses a 6k-token system prompt: prompt tokens/s soar, nearly all from the radix cache")
def sglang_h200_prefix_cached(name):
    w = World(name, "H200", 1, 250, 1.0, cpus=64)

    def p(rng, t):
        if t >= 100 and rng.random() < 0.6:
            n = 6000 + int(rng.lognormvariate(5.5, 0.7))
            return n, 6000
        return chat()(rng, t)
    w.add(Server(w, "sglang", MODELS["qwen32b"], [0], load=wave(2.5), prompt=p, output=outs()))
    return w, None


@trace("vllm", None, engine="vllm 0.32", note="an offline batch job: a full queue drains, then the server sits idle")
def vllm032_b200_batch_job_finishes(name):
    w = World(name, "B200", 1, 260, 1.0, cpus=64)
    load = lambda t: 10.0 if t < 120 else 0.0
    w.add(Server(w, "vllm", MODELS["llama70b_fp8"], [0], version=0.32, load=load, prompt=chat(6.5, 0.6),
                 output=outs(5.8, 0.5), max_seqs=256, mfu_metrics=True))
    return w, None


@trace("vllm", None, engine="vllm 0.18", note="bursty arrivals: a client fires 40 requests at once every ~30 s")
def vllm018_l40s_bursty(name):
    w = World(name, "L40S", 1, 250, 1.0, cpus=24)
    ev = [(20.0 + 31.0 * i + j * 0.02, dict(prompt=700 + 13 * j, cached=0, out=200 + 7 * j)) for i in range(7) for j in range(40)]
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.18, load=wave(1.0), prompt=chat(), output=outs(),
                 events=ev, max_seqs=128))
    return w, None


@trace("cuda", None, engine="none", note="bf16 GEMM loop held at the power cap (690-700 W, ~1440 MHz) as on the real H200: healthy")
def h200_matmul_at_power_cap(name):
    w = World(name, "H200", 1, 240, 1.0, cpus=16)
    w.add(Program(w, [0], [(0, 999, dict(busy=0.995, sm=0.956, occ=0.141, dram=0.172, ten=0.93))],
                  cmdline="python3 scripts/gpu_check.py --phase matmul", mem_bytes=95e9))
    return w, None


@trace("multi-server", None, engine="8x vllm 0.18", note="eight independent servers; the one on GPU 2 triples its traffic (healthy, busier)")
def eight_servers_h100_surge_gpu2(name):
    w = World(name, "H100", 8, 240, 1.0, cpus=128)
    for i in range(8):
        base = wave(2.5 + 0.3 * i, phase=i)
        load = (lambda t, b=base: b(t) * (3.0 if t >= 100 else 1.0)) if i == 2 else base
        w.add(Server(w, "vllm", MODELS["llama8b"], [i], version=0.18, url="http://127.0.0.1:%d/metrics" % (8000 + i),
                     load=load, prompt=chat(), output=outs(), pids=tuple(5000 + 100 * i + k for k in range(3))))
    return w, None


@trace("llamacpp", None, engine="llama.cpp", note="one user chatting: requests with think-time gaps, the GPU mostly idle")
def llamacpp_a10g_single_user(name):
    w = World(name, "A10G", 1, 240, 1.0, cpus=8)
    w.add(Server(w, "llamacpp", MODELS["llama8b_q4"], [0], slots=1, ctx=8192, load=lambda t: 0.05,
                 prompt=chat(6.0, 0.6, 0.6, hi=4000), output=outs(5.4, 0.6, 1200), host_base_ms=2.5))
    return w, None


@trace("training", None, engine="trainer tokens", note="steady DDP on 8xH200 (2 s ticks): NCCL all-reduce each step, power-capped")
def ddp8_h200_steady(name):
    w = World(name, "H200", 8, 300, 2.0, cpus=224, scrape_s=10.0)
    w.add(Trainer(w, list(range(8)), step_s=0.7, comm_s=0.08, units_per_step=32768))
    return w, None


@trace("vllm", None, engine="vllm 0.28 TP4", note="TP4 Llama-70B on 4xB200 under heavy steady load: big batches, high but stable ITL")
def vllm028_b200_tp4_heavy(name):
    w = World(name, "B200", 4, 240, 1.0, cpus=128)
    w.add(Server(w, "vllm", MODELS["llama70b"], [0, 1, 2, 3], version=0.28, load=wave(22.0, 0.15),
                 prompt=chat(), output=outs(), max_seqs=512))
    return w, None


@trace("vllm", None, engine="vllm 0.10", note="morning ramp on an A10G: traffic doubles over three minutes", )
def vllm010_a10g_morning_ramp(name):
    w = World(name, "A10G", 1, 260, 2.0, cpus=8)
    load = lambda t: 0.8 * (1 + min(1.0, max(0.0, (t - 60) / 180)))
    w.add(Server(w, "vllm", MODELS["mistral7b_awq"], [0], version=0.10, load=load, prompt=chat(5.8, 0.7),
                 output=outs(5.2, 0.6, 1024), max_seqs=64, max_len=16384))
    return w, None


@trace("cuda", None, engine="none", note="a cuBLAS benchmark sweeping sizes with host sync pauses between runs")
def h100_cublas_sweep(name):
    w = World(name, "H100", 1, 240, 1.0, cpus=32)
    ph = []
    t = 0.0
    i = 0
    while t < 240:
        d = 18.0 + 7 * (i % 3)
        sz = (i % 4) / 3
        ph.append((t, t + d, dict(period=0.3, busy=0.6 + 0.35 * sz, sm=0.6 + 0.35 * sz, occ=0.1 + 0.1 * sz,
                                  dram=0.5 - 0.3 * sz, ten=0.3 + 0.6 * sz)))
        ph.append((t + d, t + d + 3, dict(busy=0.0, sm=0, occ=0, dram=0, ten=0)))
        t += d + 3
        i += 1
    w.add(Program(w, [0], ph, cmdline="./cublas_bench --sweep", name="cublas_bench", mem_bytes=30e9))
    return w, None


@trace("training", None, engine="none", note="L40S training with gradient accumulation; every ~40 s a 3 s logging/metrics pause")
def l40s_grad_accum_logging(name):
    w = World(name, "L40S", 1, 240, 1.0, cpus=16)
    ph = lambda t: dict(idle=True, dur=3.0, cpu=1.0) if (t % 40) < 0.4 and t > 5 else None
    w.add(Trainer(w, [0], step_s=0.4, opt_s=0.03, units_per_step=32, unit="samples", counter=False, phase_fn=ph,
                  loader_s=0.15, workers=6))
    return w, None


@trace("training", None, engine="none", note="LoRA fine-tune on one A100, no metrics endpoint: steady ~95% util")
def a100_lora_finetune(name):
    w = World(name, "A100", 1, 240, 1.0, cpus=32, pinned=dict(label="finetune_lora.py", pattern="lora"))
    w.add(Trainer(w, [0], step_s=0.55, opt_s=0.01, units_per_step=4096, counter=False, loader_s=0.08,
                  compute=(0.85, 0.3, 0.35, 0.45), cmdline="python finetune_lora.py"))
    return w, None


@trace("sglang", None, engine="sglang DP2", note="SGLang DP2 on 2xH100 behind one port; the router sends 70% to rank 0 (both healthy)")
def sglang_dp2_h100_uneven(name):
    w = World(name, "H100", 2, 240, 1.0, cpus=96)
    w.add(Server(w, "sglang", MODELS["qwen7b"], [0], load=wave(7.0), prompt=chat(), output=outs(),
                 url="http://127.0.0.1:30000/metrics", pids=(800, 801)))
    w.add(Server(w, "sglang", MODELS["qwen7b"], [1], load=wave(3.0, phase=2), prompt=chat(), output=outs(),
                 url="http://127.0.0.1:30000/metrics", pids=(800, 811)))
    return w, None


@trace("vllm", None, engine="vllm 0.20 ngram", note="n-gram speculation with acceptance wandering between 0.55 and 0.75")
def vllm020_h100_spec_healthy(name):
    w = World(name, "H100", 1, 240, 1.0, cpus=48)
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.20, load=wave(4.0), prompt=chat(), output=outs(),
                 spec_k=3, accept=lambda t: 0.65 + 0.1 * math.sin(t / 29)))
    return w, None


@trace("vllm", None, engine="vllm 0.32", note="the workload turns to classification: short outputs, so prefill's share of the work rises")
def vllm032_h100_short_outputs(name):
    w = World(name, "H100", 1, 240, 1.0, cpus=48)
    o = lambda rng, t: outs()(rng, t) if t < 100 else max(1, int(rng.lognormvariate(2.5, 0.6)))
    load = lambda t: 5.0 if t < 100 else 14.0
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.32, load=load, prompt=chat(6.6, 0.7), output=o))
    return w, None


@trace("vllm", None, engine="vllm 0.25", note="a model loaded and mostly idle: a request every few seconds")
def vllm025_h200_idle_loaded(name):
    w = World(name, "H200", 1, 240, 1.0, cpus=64)
    w.add(Server(w, "vllm", MODELS["qwen32b"], [0], version=0.25, load=lambda t: 0.04, prompt=chat(), output=outs()))
    return w, None


@trace("vllm", None, engine="vllm 0.11 DP4", note="four data-parallel engines behind one port; engine 3 receives far fewer requests")
def vllm011_dp4_a100_one_quiet(name):
    w = World(name, "A100", 4, 240, 2.0, cpus=96)
    for i in range(4):
        w.add(Server(w, "vllm", MODELS["qwen7b"], [i], version=0.11, load=wave(5.0 if i < 3 else 0.7, phase=i),
                     prompt=chat(), output=outs(), url="http://127.0.0.1:8000/metrics", pids=(600, 601 + i)))
    return w, None


@trace("vllm", None, engine="vllm 0.15", note="long-context RAG from the start: HBM busy (DRAM ~80%) all along, nothing changes")
def vllm015_h200_longctx_steady(name):
    w = World(name, "H200", 1, 240, 1.0, cpus=64)
    p = lambda rng, t: (lambda n: (n, int(n * 0.9)))(int(9000 + 5000 * rng.random()))
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.15, load=wave(3.0, 0.15), prompt=p,
                 output=outs(5.4, 0.5)))
    return w, None


@trace("training", None, engine="trainer tokens", note="torch.compile recompiles for a new shape: 14 s with the GPU idle and one core busy, then back")
def h100_train_recompile(name):
    w = World(name, "H100", 1, 240, 1.0, cpus=32)
    ph = lambda t: dict(idle=True, dur=14.0, cpu=1.0) if 105 <= t < 105.6 else None
    w.add(Trainer(w, [0], step_s=0.4, opt_s=0.02, units_per_step=8192, phase_fn=ph, loader_s=0.05))
    return w, None


@trace("vllm", None, engine="vllm 0.32", note="a co-tenant keeps a 128-core host 75% busy; PSI stays low and the engine is unaffected")
def vllm032_h100_busy_host_fine(name):
    w = World(name, "H100", 1, 240, 1.0, cpus=128, bg=lambda t: 80.0 if t >= 90 else 10.0)
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.32, load=wave(5.0), prompt=chat(), output=outs()))
    return w, None


@trace("vllm", None, engine="vllm 0.12", note="eBPF attached to a healthy vLLM with CUDA graphs: a few graph launches per step, short")
def vllm012_h100_ebpf_healthy(name):
    w = World(name, "H100", 1, 240, 1.0, cpus=64,
              ebpf=dict(api="cudaGraphLaunch", base_us=11.0, per_step=2))
    w.add(Server(w, "vllm", MODELS["llama8b"], [0], version=0.12, load=wave(4.0, bursts=0.5), prompt=chat(), output=outs()))
    return w, None


@trace("training", None, engine="trainer tokens",
       note="DDP 4xH100: rank 0 gathers and writes a checkpoint for 20 s while ranks 1-3 wait in a barrier (NCCL spin)")
def ddp4_h100_rank0_checkpoint_barrier(name):
    w = World(name, "H100", 4, 250, 1.0, cpus=96)
    ph = lambda t: dict(idle=True, dur=20.0, cpu=2.0, spin_ranks=(1, 2, 3)) if 115 <= t < 115.8 else None
    w.add(Trainer(w, [0, 1, 2, 3], step_s=0.6, comm_s=0.05, units_per_step=8192, phase_fn=ph))
    return w, None
