"""The traces: one Sc each, with its truth.  Times are seconds from the trace's start."""

from __future__ import annotations

import math

from .scenario import Sc, env
from .train import Step

CATALOG: list[Sc] = []


def add(sc: Sc) -> Sc:
    CATALOG.append(sc)
    return sc


def wobble(t, base, seed=0.0, amp=0.15):
    return base * (1 + amp * math.sin(2 * math.pi * t / 97 + seed)
                   + 0.6 * amp * math.sin(2 * math.pi * t / 31 + 2 * seed))


def traffic(rate, prompt=900, out=250, hit=0.3, seed=0.0):
    def f(t, ld):
        ld.rate, ld.prompt, ld.out, ld.hit = wobble(t, rate, seed), prompt, out, hit
    return f


def then(base, extra):
    def f(t, ld):
        base(t, ld)
        extra(t, ld)
    return f


def on_of(segs):
    return lambda t: any(a <= t < b for a, b in segs)


# =============================================================== oversized_request
def _os1(t, ld):
    traffic(5, 600, 220, 0.4)(t, ld)
    if 90 <= t < 150:  # one request: n=8, logprobs=20 over a 152k vocabulary
        ld.extra_step_s, ld.oversized_n = 0.045, 8


add(Sc("os_vllm_h100_n8_logprobs", "serve_vllm", "oversized_request", "H100", 1, 240, 1.0,
       (90, 150), engine="vllm", model="qwen7b", load=_os1, ekw=dict(mfu_metrics=True),
       note="one client sends n=8, logprobs=20, max_tokens=2048: every step samples 8 "
            "sequences over the vocabulary; everyone's ITL x4, GPU stays busy"))


def _os2(t, ld):
    traffic(1.4, 1500, 300, 0.3, 1.0)(t, ld)
    if 120 <= t < 200:  # prompt_logprobs=20 on 30k-token prompts: logits for every prompt token
        ld.extra_step_s = 0.011


add(Sc("os_vllm_h200_tp2_prompt_logprobs", "serve_vllm", "oversized_request", "H200", 2, 300,
       2.0, (120, 200), engine="vllm", model="llama70b_fp8", tp=2, load=_os2, scrape_s=4,
       note="an eval harness asks prompt_logprobs=20 on long prompts: each step does vocabulary "
            "work; ITL ~1.5x, moderate"))


def _os3(t, ld):
    traffic(6, 700, 200, 0.5, 2.0)(t, ld)
    if on_of([(80, 120), (160, 200)])(t):
        ld.extra_step_s, ld.oversized_n = 0.02, 4


add(Sc("os_sglang_a100_top_logprobs_intermittent", "serve_sglang", "oversized_request", "A100",
       1, 270, 1.0, (80, 200), engine="sglang", model="qwen7b", load=_os3,
       note="a batch client with n=4, return_logprob, top_logprobs_num=20, twice; ITL ~2.5x "
            "while it runs"))


def _os4(t, ld):
    traffic(0.5, 700, 300, 0.6, 3.0)(t, ld)
    e = env(t, 100, 220, ramp=40)
    ld.extra_step_s = 0.015 * e  # one slot at 100k context: every decode reads its KV


add(Sc("os_llamacpp_l40s_100k_context_slot", "serve_llamacpp", "oversized_request", "L40S", 1,
       260, 1.0, (100, 220), engine="llamacpp", model="gguf8b",
       ekw=dict(slots=4, ctx=131072), load=_os4,
       note="one user pastes a whole repository (100k tokens) into one slot; every decode of "
            "the batch attends over it: the other slots' tokens/s fall 2-3x"))

# =============================================================== prefill_interference


def _pi1(t, ld):
    traffic(5, 800, 250, 0.3)(t, ld)
    if 90 <= t < 170:
        ld.long_rate, ld.long_prompt, ld.long_out = 0.7, 12000, 150


add(Sc("pi_vllm_h100_rag_burst", "serve_vllm", "prefill_interference", "H100", 1, 240, 1.0,
       (90, 170), engine="vllm", model="llama8b", load=_pi1,
       note="a RAG backfill job sends 12k-token contexts at ~1.6/s: chunked prefill fills "
            "every step, decodes' ITL ~2x, prompt tokens/s dominate"))


def _pi2(t, ld):
    traffic(4, 900, 250, 0.3, 1.5)(t, ld)
    ld.long_rate = 0.07 * env(t, 100, 320, ramp=120)
    ld.long_prompt, ld.long_out = 20000, 120


add(Sc("pi_sglang_h200_longprompt_ramp", "serve_sglang", "prefill_interference", "H200", 1, 340,
       2.0, (100, 320), engine="sglang", model="qwen32b", load=_pi2, ekw=dict(sgl_realtime=True),
       note="a document-QA tenant ramps up 20k-token prompts over two minutes; ITL rises "
            "gradually to ~1.5x (mild)"))


def _pi3(t, ld):
    traffic(1.5, 900, 300, 0.3, 0.7)(t, ld)
    if on_of([(90, 130), (180, 220)])(t):
        ld.long_rate, ld.long_prompt, ld.long_out = 0.6, 6000, 200


add(Sc("pi_vllm_a100_tp4_batch_upload", "serve_vllm", "prefill_interference", "A100", 4, 300,
       2.0, (90, 220), engine="vllm", model="llama70b", tp=4, load=_pi3, scrape_s=6,
       note="a summarisation batch is uploaded twice (6k-token documents): prefill chunks "
            "share every step with decodes"))


def _pi4(t, ld):
    traffic(0.4, 500, 250, 0.5, 0.3)(t, ld)
    if 70 <= t < 150:
        ld.long_rate, ld.long_prompt, ld.long_out, ld.long_hit = 0.12, 8000, 300, 0.0


add(Sc("pi_llamacpp_a10g_pasted_documents", "serve_llamacpp", "prefill_interference", "A10G", 1,
       200, 1.0, (70, 150), engine="llamacpp", model="gguf8b", ekw=dict(slots=4, ctx=65536),
       load=_pi4, note="users paste 8k-token documents: llama.cpp evaluates them in n_batch "
                        "chunks between the other slots' decodes; no latency histograms"))

# =============================================================== collective_straggler


def _cs1(t):
    e = env(t, 80, 330, ramp=90)
    rf = tuple(1.0 + (0.6 * e if i == 3 else 0.0) + 0.01 * math.sin(t / 7 + i) for i in range(8))
    return Step(compute=0.9, comm=0.12, opt=0.03, rank_f=rf, mfu=0.4, tokens=8 * 16384)


add(Sc("cs_moe_ep8_h200_hot_expert", "train_moe", "collective_straggler", "H200", 8, 330, 2.0,
       (80, 330), (3,), kind="train", step=_cs1, counter="tokens", job_mem=120e9, cpus=96,
       note="MoE training with expert parallelism: the data mix shifts and GPU 3 hosts the hot "
            "experts; the other ranks wait in all-to-all (GPU-Util high, SM and power down)"))


def _cs2(t, ld):
    traffic(6, 700, 250, 0.4)(t, ld)
    if on_of([(70, 110), (150, 200)])(t):
        ld.rank_f = (1.0, 1.0, 1.55, 1.0)


add(Sc("cs_vllm_ep4_h100_expert_imbalance", "serve_vllm", "collective_straggler", "H100", 4, 240,
       1.0, (70, 200), (2,), engine="vllm", model="mixtral", tp=4, load=_cs2,
       note="Mixtral with --enable-expert-parallel: a prompt family routes to experts on GPU 2; "
            "the step waits for it (comes and goes)"))


def _cs3(t):
    rf = (1.0, 1.0, 1.0, 1.45 if t >= 90 else 1.0)
    return Step(compute=0.45, comm=0.06, opt=0.02, rank_f=rf, mfu=0.42)


add(Sc("cs_ddp4_a100_sorted_shard", "train_ddp", "collective_straggler", "A100", 4, 260, 1.0,
       (90, 260), (3,), kind="train", step=_cs3, pinned=True, workers=4,
       worker_need=lambda t: 0.4, job_mem=61e9,
       note="DDP without a throughput counter: after the epoch boundary a non-shuffled "
            "DistributedSampler hands rank 3 the long documents; the others wait in allreduce"))


def _cs4(t):
    return Step(compute=0.25, comm=0.05, opt=0.01, rank_f=(1.3 if t >= 75 else 1.0, 1.0),
                mfu=0.38, tokens=64)


add(Sc("cs_ddp2_l40s_mild", "train_ddp", "collective_straggler", "L40S", 2, 240, 2.0, (75, 240),
       (0,), kind="train", step=_cs4, counter="samples", job_mem=38e9, cpus=24,
       note="2-GPU DDP image model: rank 0 also computes the EMA model and metrics each step "
            "(+30%); rank 1 waits (mild, ~20% throughput lost)"))

# =============================================================== input_stall


def _is1(t):
    return Step(compute=0.35, comm=0.0, opt=0.02, wait=0.45 * env(t, 80, 240, ramp=20),
                mfu=0.45, tokens=4 * 2048)


add(Sc("is_lora_h100_vlm_images", "train_single", "input_stall", "H100", 1, 240, 1.0, (80, 240),
       kind="train", step=_is1, counter="tokens", pinned=True, workers=6, cpus=16,
       worker_need=lambda t: 0.6 + 0.4 * env(t, 80, 240, ramp=20), job_mem=52e9,
       note="LoRA fine-tune of a vision-language model moves to a shard of 4k images: six "
            "DataLoader workers pegged decoding/resizing; GPU-Util saw-tooths"))


def _is2(t):
    w = 0.8 if on_of([(70, 110), (150, 185), (230, 260)])(t) else 0.0
    return Step(compute=0.5, comm=0.07, opt=0.02, wait=w, mfu=0.45)


add(Sc("is_ddp4_a100_nfs_hiccups", "train_ddp", "input_stall", "A100", 4, 300, 2.0, (70, 260),
       kind="train", step=_is2, workers=4, worker_need=lambda t: 0.15, job_mem=70e9, cpus=64,
       note="DDP reading from NFS: three storage hiccups of 30-40 s; every rank waits for its "
            "batch, loader CPU stays low (I/O wait, not CPU)"))


def _is3(t):
    return Step(compute=0.5, comm=0.06, opt=0.02, wait=0.13 * env(t, 90, 330, ramp=100),
                mfu=0.45, tokens=8 * 8192)


add(Sc("is_ddp8_h200_tokenize_on_the_fly", "train_ddp", "input_stall", "H200", 8, 330, 2.0,
       (90, 330), kind="train", step=_is3, counter="tokens", pinned=True, workers=2, cpus=64,
       worker_need=lambda t: 0.55 + 0.45 * env(t, 90, 330, ramp=100), job_mem=110e9,
       note="the pre-tokenized shards run out and the loader tokenizes raw text with 2 workers "
            "per rank: gradual, mild (~20% lost)"))


def _is4(t):
    return Step(compute=0.12, comm=0.0, opt=0.01, wait=0.15 if t >= 65 else 0.0, mfu=0.35,
                tokens=256, dram=0.45)


add(Sc("is_b200_jpeg_decode", "train_single", "input_stall", "B200", 1, 200, 1.0, (65, 200),
       kind="train", step=_is4, counter="samples", workers=8, cpus=16, pinned=True,
       worker_need=lambda t: 1.0 if t >= 65 else 0.7, job_mem=90e9,
       note="ViT training switches from a cached tensor dataset to raw JPEGs: 8 workers cannot "
            "decode 2000 images/s; the B200 waits more than half of each step"))

# =============================================================== host_launch_jitter


add(Sc("lj_vllm_h100_cfs_quota", "serve_vllm", "host_launch_jitter", "H100", 1, 260, 1.0,
       (80, 200), engine="vllm", model="llama8b", load=traffic(5), ebpf=True, cpus=32,
       jitter=lambda t: (0.25, 12e6) if 80 <= t < 200 else (0.002, 40e3),
       note="the pod's CPU limit (cpu.max) throttles the engine core: its graph launches wait "
            "for the next CFS period; host PSI stays low, eBPF shows the launch tail"))
add(Sc("lj_train_h200_irq_storm", "train_single", "host_launch_jitter", "H200", 1, 270, 1.0,
       (70, 240), kind="train", counter="tokens", ebpf=True, cpus=32,
       step=lambda t: Step(compute=0.08, opt=0.01, comm=0.0, mfu=0.3, tokens=4096),
       jitter=lambda t: (0.05, 1.1e6) if on_of([(70, 100), (140, 175), (210, 240)])(t)
       else (0.001, 30e3),
       note="an eager fine-tune (2500 launches a step); a NIC's interrupts land on the launch "
            "thread's core in three bursts"))
add(Sc("lj_sglang_a100_tp2_shared_core", "serve_sglang", "host_launch_jitter", "A100", 2, 270,
       2.0, (90, 270), engine="sglang", model="llama8b", tp=2, load=traffic(6, 700, 220, 0.5),
       ebpf=True, cpus=48,
       jitter=lambda t: (0.15, 9e6) if t >= 90 else (0.002, 30e3),
       note="a monitoring agent pinned with taskset to the scheduler's core preempts it; mild "
            "(~1.3x ITL), onset after the required healthy minute and a half"))


def _lj4(t, i):
    return dict(busy=0.97, sm=0.85, tensor=0.4, dram=0.45, mem=12e9, launches=20000)


add(Sc("lj_cuda_l40s_benchmark_noisy_core", "cuda_program", "host_launch_jitter", "L40S", 1, 220,
       1.0, (75, 180), kind="cuda", cuda=_lj4, ebpf=True, cpus=16,
       jitter=lambda t: (0.1, 2.5e6) if 75 <= t < 180 else (0.001, 30e3),
       note="an nvcc-built benchmark (static cudart: only libcuda's cuLaunchKernel is probed); "
            "a stress job on its core delays launches; no engine"))

# =============================================================== host_cpu_contention
add(Sc("hc_vllm_h100_etl_on_host", "serve_vllm", "host_cpu_contention", "H100", 1, 250, 1.0,
       (80, 200), engine="vllm", model="llama8b", load=traffic(5, 700), cpus=12,
       other_cpu=lambda t: 36.0 if 80 <= t < 200 else 2.5,
       note="a Spark ETL container lands on the 12-vCPU inference VM: run queue 40, PSI high, "
            "the engine core loses CPU and ITL rises ~1.7x; no eBPF"))
add(Sc("hc_llamacpp_a10g_build", "serve_llamacpp", "host_cpu_contention", "A10G", 1, 220, 1.0,
       (70, 170), engine="llamacpp", model="gguf8b", load=traffic(0.5, 500, 250, 0.5),
       ekw=dict(slots=4, ctx=32768), cpus=8,
       other_cpu=lambda t: 18.0 if 70 <= t < 170 else 1.5,
       note="someone runs cmake --build -j16 on the 8-vCPU box: llama-server's threads lose "
            "CPU; mild (~25% tokens/s)"))
add(Sc("hc_ddp2_l40s_pandas", "train_ddp", "host_cpu_contention", "L40S", 2, 240, 2.0,
       (90, 240), kind="train", cpus=16, counter="tokens",
       step=lambda t: Step(compute=0.25, comm=0.04, opt=0.01, mfu=0.4, tokens=2 * 4096),
       other_cpu=lambda t: 2 + 30 * env(t, 90, 240, ramp=30),
       note="another user's pandas feature job fills the 16 cores; the trainers' launch "
            "threads wait on the run queue; gradual"))

# =============================================================== tiny_kernels


def _tk1(t):
    if t < 80:
        return Step(compute=0.3, opt=0.02, comm=0.0, mfu=0.5, tokens=8192)
    return Step(compute=0.12, tiny=0.37, opt=0.02, comm=0.0, mfu=0.5, tokens=8192)


add(Sc("tk_h200_compile_fallback_eager", "train_single", "tiny_kernels", "H200", 1, 240, 1.0,
       (80, 240), kind="train", step=_tk1, counter="tokens", job_mem=70e9,
       note="torch.compile hits its recompile limit on dynamic shapes and falls back to eager: "
            "GPU-Util stays 99%, SM activity and power fall, tokens/s -35%"))


def _tk2(t, i):
    if t < 70:
        return dict(busy=0.98, sm=0.9, tensor=0.6, dram=0.35, mem=30e9)
    if t < 200:
        return dict(busy=0.97, sm=0.06, tensor=0.005, dram=0.03, mem=30e9, launches=40000)
    return dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, mem=30e9)


add(Sc("tk_notebook_a100_python_loop", "cuda_program", "tiny_kernels", "A100", 1, 240, 2.0,
       (70, 200), kind="cuda", cuda=_tk2, proc_sm=False,
       note="a notebook cell loops over samples one at a time: 100% GPU-Util at ~90 W of 400; "
            "no GPM on A100, so SM activity is unknown"))


def _tk3(t):
    return Step(compute=0.35, comm=0.05, opt=0.02, tiny=0.18 if t >= 90 else 0.0, mfu=0.45,
                tokens=4 * 8192)


add(Sc("tk_ddp4_h100_foreach_off", "train_ddp", "tiny_kernels", "H100", 4, 260, 2.0, (90, 260),
       kind="train", step=_tk3, counter="tokens", job_mem=64e9, pinned=True,
       note="a config change sets foreach=False: the optimizer launches ~6 tiny kernels per "
            "parameter tensor; -30% throughput on all four ranks"))


def _tk4(t, i):
    if t < 80:
        return dict(busy=0.95, sm=0.6, tensor=0.25, dram=0.7, mem=60e9)
    return dict(busy=0.93, sm=0.07, tensor=0.01, dram=0.12, mem=30e9, launches=30000)


add(Sc("tk_b200_hf_generate_bs1", "cuda_program", "tiny_kernels", "B200", 1, 240, 1.0, (80, 240),
       kind="cuda", cuda=_tk4,
       note="a benchmark script moves from batch 64 to batch-1 HF generate without CUDA graphs: "
            "GPU-Util 93%, SM 7%, 250 W of 1000"))

# =============================================================== memory_bandwidth


def _mb1(t, ld):
    e = env(t, 80, 300, ramp=120)
    ld.rate, ld.prompt, ld.out, ld.hit = wobble(t, 1.2, 0.3), 2000 + 26000 * e, 300, 0.5 + 0.45 * e
    ld.prompt_sigma = 0.3


add(Sc("mb_vllm_h100_agent_contexts_grow", "serve_vllm", "memory_bandwidth", "H100", 1, 300, 1.0,
       (110, 300), engine="vllm", model="llama8b", load=_mb1,
       note="coding agents' sessions grow to 24k tokens (prefix-cached): each decode step reads "
            "their KV; DRAM near its limit, ITL ~2x, tokens/s flat"))


def _mb2(t, ld):
    e = env(t, 90, 300, ramp=90)
    ld.rate, ld.prompt, ld.out, ld.hit = wobble(t, 3 + 7 * e, 0.5), 6000, 500, 0.9


add(Sc("mb_sglang_a100_tp2_bigbatch", "serve_sglang", "memory_bandwidth", "A100", 2, 300, 2.0,
       (120, 300), engine="sglang", model="llama8b", tp=2, load=_mb2, ekw=dict(sgl_realtime=False),
       note="batch grows to ~150 requests of 5-6k context on A100 (no GPM: only NVML's memory "
            "util); older SGLang whose token counters move at finish"))


def _mb3(t, ld):
    e = env(t, 80, 260, ramp=60)
    ld.rate, ld.prompt, ld.out, ld.hit = wobble(t, 0.2), 1500 + 12500 * e, 350, 0.92 * e
    ld.prompt_sigma = 0.2


add(Sc("mb_llamacpp_l40s_long_slots", "serve_llamacpp", "memory_bandwidth", "L40S", 1, 260, 1.0,
       (100, 260), engine="llamacpp", model="gguf27b", ekw=dict(slots=4, ctx=65536), load=_mb3,
       note="four long chats (cache_prompt reuse) on a 27B GGUF: GDDR6 bandwidth saturates"))

# =============================================================== throttling


def _th1(t, i):
    e = env(t, 90, 300, ramp=100)
    if e <= 0:
        return {}
    return dict(clock_cap=1980 - 700 * e, heat=30 * e,
                reasons=("thermal (sw)",) + (("hw slowdown",) if e > 0.7 else ()))


add(Sc("th_vllm_h100_chassis_fans", "serve_vllm", "throttling", "H100", 1, 300, 2.0, (90, 300),
       engine="vllm", model="llama8b", load=traffic(3, 3000, 250, 0.1), gpu_mod=_th1,
       note="the chassis fans fail: temperature climbs, software thermal slowdown then HW "
            "slowdown; clocks 1980 -> 1280 MHz, ITL up gradually"))


def _th2(t, i):
    if on_of([(70, 100), (150, 170), (220, 250)])(t):
        return dict(clock_cap=600.0, reasons=("hw slowdown", "power brake"))
    return {}


add(Sc("th_ddp8_a100_power_brake", "train_ddp", "throttling", "A100", 8, 280, 1.0, (70, 250),
       kind="train", counter="tokens", gpu_mod=_th2, job_mem=72e9, cpus=128,
       step=lambda t: Step(compute=0.6, comm=0.08, opt=0.03, mfu=0.45, tokens=8 * 4096),
       note="the PSU signals power brake three times: all eight GPUs drop to 600 MHz"))


def _th3(t, i):
    if t >= 90:
        return dict(power_cap=800.0)
    return {}


add(Sc("th_b200_power_limit_lowered", "train_single", "throttling", "B200", 1, 240, 2.0,
       (90, 240), kind="train", counter="samples", gpu_mod=_th3, job_mem=150e9,
       step=lambda t: Step(compute=0.4, comm=0.0, opt=0.02, mfu=0.55, tokens=512),
       note="facilities lower the power limit to 800 W (nvidia-smi -pl): the compute-bound "
            "job's clocks fall, -25% samples/s (moderate)"))

# =============================================================== kv_pressure


def _kv1(t, ld):
    traffic(2.2, 900, 300, 0.3)(t, ld)
    if t >= 80:
        ld.out, ld.out_sigma = 300 + 4700 * env(t, 80, 300, ramp=30), 0.5


add(Sc("kv_vllm_h100_reasoning_outputs", "serve_vllm", "kv_pressure", "H100", 1, 300, 1.0,
       (120, 300), engine="vllm", model="llama8b", load=_kv1, ekw=dict(mem_util=0.45),
       note="clients switch to a reasoning model prompt with 5k-token outputs on a pool sized "
            "for chat (gpu_memory_utilization 0.45): KV full, preemptions, queue grows"))


def _kv2(t, ld):
    traffic(1.0, 3000, 400, 0.2)(t, ld)
    if t >= 90:
        ld.rate, ld.out = wobble(t, 2.5), 2500


add(Sc("kv_sglang_h200_retractions", "serve_sglang", "kv_pressure", "H200", 1, 300, 2.0,
       (120, 300), engine="sglang", model="qwen32b", load=_kv2, ekw=dict(mem_util=0.75),
       note="longer outputs at a higher rate: SGLang retracts decoding requests, token_usage "
            "~0.98, the queue grows"))


def _kv3(t, ld):
    traffic(2, 800, 300, 0.3)(t, ld)
    if on_of([(80, 130), (170, 215)])(t):
        ld.long_rate, ld.long_prompt, ld.long_out = 0.8, 9000, 1500


add(Sc("kv_vllm_a10g_tp2_bursts", "serve_vllm", "kv_pressure", "A10G", 2, 260, 1.0, (90, 230),
       engine="vllm", model="llama8b", tp=2, load=_kv3, ekw=dict(mem_util=0.9), proc_sm=False,
       note="two bursts of long-context long-output requests on 2x A10G: the small pool fills, "
            "preemptions come and go"))

# =============================================================== gpu_shared


def _gs1(t, i):
    if 90 <= t < 220:
        return dict(share=0.5, other_mem=20e9, other_sm=0.85, other_tensor=0.5)
    return {}


add(Sc("gs_vllm_h100_notebook_training", "serve_vllm", "gpu_shared", "H100", 1, 260, 1.0,
       (90, 220), engine="vllm", model="llama8b", load=traffic(5), ekw=dict(mem_util=0.7),
       gpu_mod=_gs1, other_name="python", other_cmd="python -m ipykernel_launcher -f kernel.json",
       note="a researcher's notebook starts training on the serving GPU (vLLM left 30% free): "
            "time-slicing, ITL ~1.7x, a second process in the list"))


def _gs2(t, i):
    if i == 1 and t >= 100:
        return dict(share=0.5, other_mem=25e9, other_sm=0.9, other_tensor=0.55)
    return {}


add(Sc("gs_ddp2_a100_second_job_on_gpu1", "train_ddp", "gpu_shared", "A100", 2, 260, 2.0,
       (100, 260), (1,), kind="train", gpu_mod=_gs2, proc_sm=False, job_mem=50e9,
       step=lambda t: Step(compute=0.4, comm=0.05, opt=0.02, mfu=0.45),
       other_cmd="python finetune.py --device cuda:1",
       note="a colleague's job starts on GPU 1 of the 2-GPU DDP box; per-process SM util is "
            "not available on this driver; no throughput counter"))


def _gs3(t, i):
    if on_of([(70, 95), (130, 150), (190, 215)])(t):
        return dict(share=0.55, other_mem=12e9, other_sm=0.9, other_tensor=0.6)
    return {}


add(Sc("gs_llamacpp_l40s_comfyui", "serve_llamacpp", "gpu_shared", "L40S", 1, 240, 1.0,
       (70, 215), engine="llamacpp", model="gguf8b", ekw=dict(slots=4, ctx=32768),
       load=traffic(0.5, 600, 300, 0.5), gpu_mod=_gs3, other_name="python",
       other_cmd="python main.py --listen (ComfyUI)",
       note="ComfyUI on the same L40S renders three images; llama.cpp's decodes slow while it "
            "runs"))


def _gs4(t, i):
    if i == 1 and t >= 80:
        return dict(share=0.3, other_mem=30e9, other_sm=0.7, other_tensor=0.3)
    return {}


add(Sc("gs_sglang_h200_tp2_tenant_gpu1", "serve_sglang", "gpu_shared", "H200", 2, 260, 2.0,
       (80, 260), (1,), engine="sglang", model="llama70b", tp=2, load=traffic(3, 900, 300),
       ekw=dict(mem_util=0.75), gpu_mod=_gs4, proc_sm=False,
       other_cmd="python embed_server.py --gpu 1",
       note="another tenant's embedding server lands on GPU 1 of a TP2 engine: the whole TP "
            "step waits for rank 1 (mild, ~1.4x)"))

# =============================================================== spec_decode_rejected


def _sd1(t, ld):
    traffic(5, 800, 300, 0.3)(t, ld)
    ld.accept = 0.75 - 0.6 * env(t, 90, 260, ramp=60)


add(Sc("sd_vllm_h100_eagle_domain_shift", "serve_vllm", "spec_decode_rejected", "H100", 1, 260,
       1.0, (90, 260), engine="vllm", model="llama8b", load=_sd1, ekw=dict(spec_k=3),
       note="EAGLE drafts trained on English chat; traffic shifts to Japanese code review: "
            "acceptance 0.75 -> 0.15, tokens/s -35%"))


def _sd2(t, ld):
    traffic(2, 900, 350, 0.3)(t, ld)
    ld.accept = 0.2 if t >= 100 else 0.8


add(Sc("sd_sglang_h200_high_temperature", "serve_sglang", "spec_decode_rejected", "H200", 1, 280,
       2.0, (100, 280), engine="sglang", model="qwen32b", load=_sd2, ekw=dict(spec_k=4),
       note="a client starts sampling at temperature 1.3: SGLang's spec_accept_rate gauge "
            "falls 0.8 -> 0.2"))


def _sd3(t, ld):
    traffic(0.45, 500, 300, 0.5)(t, ld)
    ld.accept = 0.15 if on_of([(80, 130), (170, 210)])(t) else 0.7


add(Sc("sd_llamacpp_a10g_draft_model", "serve_llamacpp", "spec_decode_rejected", "A10G", 1, 240,
       1.0, (80, 210), engine="llamacpp", model="gguf8b", ekw=dict(slots=4, ctx=32768, spec_k=8),
       load=_sd3, note="llama-server with a 1B draft model: two bursts of creative-writing "
                        "requests the draft cannot predict (counters move at finish)"))

# =============================================================== healthy look-alikes


def _h_diurnal(t, ld):
    traffic(8 - 5 * env(t, 90, 300, ramp=150), 800, 250, 0.35)(t, ld)


add(Sc("h_vllm_h100_diurnal_fall", "serve_vllm", None, "H100", 1, 300, 2.0, engine="vllm",
       load=_h_diurnal, note="evening: traffic falls 60% over 2.5 minutes"))


def _h_bursty(t, ld):
    traffic(4, 800, 250, 0.3, 0.4)(t, ld)
    if (t % 40) < 8:
        ld.rate *= 3


add(Sc("h_vllm_h100_bursty_arrivals", "serve_vllm", None, "H100", 1, 240, 1.0, engine="vllm",
       load=_h_bursty, note="a client fans out every 40 s: short bursts, queue drains at once"))


def _h_restart(t, ld):
    traffic(4, 1200, 250, 0.1 if 175 <= t < 230 else 0.6)(t, ld)
    if 175 <= t < 230:
        ld.hit = 0.6 * (t - 175) / 55


add(Sc("h_vllm_h200_restart_prefix_warmup", "serve_vllm", None, "H200", 1, 320, 2.0,
       engine="vllm", model="llama8b", load=_h_restart, down=(120, 175),
       note="a rolling update restarts the engine: unreachable for a minute, weights reload, "
            "counters restart at 0, the prefix cache warms up again"))


def _h_prompt_shift(t, ld):
    e = env(t, 80, 260, ramp=120)
    traffic(5 - 1.5 * e, 800 + 1400 * e, 250, 0.4)(t, ld)


add(Sc("h_sglang_h100_prompt_mix_shift", "serve_sglang", None, "H100", 1, 260, 1.0,
       engine="sglang", model="qwen7b", load=_h_prompt_shift,
       note="the prompt-length mix shifts from 800 to 2200 tokens as a product launches; "
            "fewer requests, ITL barely moves"))


def _h_tenant(t, ld):
    traffic(2.5, 800, 300, 0.3)(t, ld)
    if t >= 90:
        ld.long_rate, ld.long_prompt, ld.long_out, ld.long_hit = 0.06, 16000, 400, 0.8


add(Sc("h_vllm_a100_tp2_tenant_long_context", "serve_vllm", None, "A100", 2, 270, 1.0,
       engine="vllm", model="qwen32b", tp=2, load=_h_tenant,
       note="a new tenant's 16k-context requests (mostly prefix-cached), normal for them"))


def _h_autoscale(t, ld):
    traffic(9 if t < 120 else 4.5, 700, 250, 0.35)(t, ld)


add(Sc("h_vllm_h100_autoscaler_adds_replica", "serve_vllm", None, "H100", 1, 260, 1.0,
       engine="vllm", load=_h_autoscale, note="the autoscaler adds a replica: traffic halves"))


def _h_eval(t):
    if (t % 100) >= 80:
        return Step(compute=0.15, comm=0.0, opt=0.0, mfu=0.35, tokens=0, eval_mode=True)
    return Step(compute=0.35, comm=0.0, opt=0.02, mfu=0.45, tokens=4 * 2048)


add(Sc("h_lora_h100_eval_every_n_steps", "train_single", None, "H100", 1, 300, 1.0, kind="train",
       step=_h_eval, counter="tokens", job_mem=48e9, workers=4, worker_need=lambda t: 0.35,
       note="LoRA fine-tune with an eval pass every 250 steps: the token counter stops, "
            "forward-only kernels, then training resumes"))


def _h_ckpt(t):
    p = 1.0 if (t % 110) >= 95 else 0.0
    return Step(compute=0.6, comm=0.07, opt=0.02, mfu=0.45, tokens=4 * 8192, pause=p)


add(Sc("h_ddp4_h200_checkpoint_saves", "train_ddp", None, "H200", 4, 330, 1.0, kind="train",
       step=_h_ckpt, counter="tokens", job_mem=100e9, pinned=True,
       other_cpu=lambda t: 8.0 if (t % 110) >= 95 else 2.0,
       note="a synchronous checkpoint every ~110 s: 15 s with the GPUs idle, host CPU busy"))
add(Sc("h_ddp4_a100_ranks_differ_a_little", "train_ddp", None, "A100", 4, 260, 2.0, kind="train",
       step=lambda t: Step(compute=0.5, comm=0.06, opt=0.02, mfu=0.45,
                           rank_f=(1.0, 1.03, 0.98, 1.05)), job_mem=66e9,
       note="DDP ranks differ by 2-5% (board variation); no counter"))


add(Sc("h_vllm_h100_power_capped_box", "serve_vllm", None, "H100", 1, 260, 1.0, engine="vllm",
       model="llama8b", load=traffic(4, 900, 250, 0.3),
       gpu_mod=lambda t, i: dict(power_cap=450.0),
       note="the rack's power budget caps the board at 450 W from the start: clocks held, "
            "'power cap' always set, work steady"))


def _mig(profile, sms, mem, act):
    return (profile, sms, mem, act)


def _h_mig_cuda(t, i):
    return dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, mem=0)


add(Sc("h_mig_h100_three_slices", "cuda_program", None, "H100", 1, 240, 2.0, kind="cuda",
       cuda=_h_mig_cuda,
       mig=[_mig("3g.40gb", 60, 42949672960, dict(sm=0.7, tensor=0.3, dram=0.25, mem=30e9)),
            _mig("2g.20gb", 32, 21474836480, dict(sm=0.4, tensor=0.1, dram=0.2, mem=15e9)),
            _mig("1g.10gb", 16, 10737418240, dict(sm=0.15, tensor=0.0, dram=0.05, mem=4e9))],
       note="MIG mode with three instances, each with its own small job; no GPU-Util per "
            "instance"))
add(Sc("h_vllm_h200_prefix_cache_hits", "serve_vllm", None, "H200", 1, 240, 1.0, engine="vllm",
       load=traffic(10, 3000, 200, 0.85), note="a system-prompt-heavy chatbot: 85% of prompt "
                                               "tokens are prefix-cache hits"))


def _h_llama_chat(t, ld):
    traffic(0.25 if (t % 90) < 60 else 0.02, 400, 300, 0.6)(t, ld)


add(Sc("h_llamacpp_a10g_office_chat", "serve_llamacpp", None, "A10G", 1, 240, 1.0,
       engine="llamacpp", model="gguf8b", ekw=dict(slots=4, ctx=32768), load=_h_llama_chat,
       note="a team's chat server: a few users, idle gaps"))


def _h_warm(t, ld):
    traffic(3 if t >= 50 else 0.0, 800, 250, 0.3)(t, ld)


add(Sc("h_sglang_h200_tp2_startup_warmup", "serve_sglang", None, "H200", 2, 240, 2.0,
       engine="sglang", model="llama70b", tp=2, load=_h_warm, ekw=dict(mem_util=0.8),
       note="fresh start: no traffic for 50 s, then clients connect"))


def _h_bench(t, i):
    ph = int(t // 60) % 4
    if ph == 0:
        return dict(busy=0.99, sm=0.96, tensor=0.93, dram=0.17, mem=90e9)
    if ph == 1:
        return dict(busy=1.0, sm=0.99, tensor=0.0, dram=0.88, mem=90e9)
    if ph == 2:
        return dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, mem=90e9)
    return dict(busy=0.99, sm=0.95, tensor=0.9, dram=0.2, mem=90e9)


add(Sc("h_cuda_b200_matmul_copy_bench", "cuda_program", None, "B200", 1, 240, 1.0, kind="cuda",
       cuda=_h_bench, note="a burn-in benchmark: matmul at the power cap, device copy, pause, "
                           "matmul"))
add(Sc("h_fsdp8_b200_steady", "train_fsdp", None, "B200", 8, 300, 2.0, kind="train",
       step=lambda t: Step(compute=1.1 * (1 + 0.03 * math.sin(t / 11)), comm=0.1, opt=0.04,
                           mfu=0.5, tokens=8 * 16384), counter="tokens", job_mem=160e9, cpus=112,
       note="FSDP pre-training, steady with noise"))


def _h_second(t, i):
    return dict(share=0.02, other_mem=3e9, other_sm=0.5, other_tensor=0.1)


add(Sc("h_vllm_h100_small_second_process", "serve_vllm", None, "H100", 1, 240, 1.0,
       engine="vllm", load=traffic(4), ekw=dict(mem_util=0.85), gpu_mod=_h_second,
       other_cmd="python rerank_server.py", note="a small reranker shares the GPU from the "
                                                  "start, using ~2% of its time: healthy"))


def _h_batch(t, ld):
    traffic(60 if t < 8 else 0.0, 600, 350, 0.5)(t, ld)


add(Sc("h_vllm_h100_offline_batch_finishing", "serve_vllm", None, "H100", 1, 260, 1.0,
       engine="vllm", load=_h_batch, ekw=dict(max_seqs=256),
       note="an offline batch of ~500 prompts drains: queue, full batch, tail, then idle"))


def _h_radix(t, ld):
    traffic(3, 2000, 200, min(0.75, 0.1 + 0.65 * t / 150))(t, ld)


add(Sc("h_sglang_a100_radix_cache_warming", "serve_sglang", None, "A100", 1, 240, 2.0,
       engine="sglang", model="qwen7b", load=_h_radix, ekw=dict(sgl_realtime=False),
       note="after a restart the radix cache warms: cached tokens rise, prefill falls"))
add(Sc("h_llamacpp_l40s_rag_long_prompts", "serve_llamacpp", None, "L40S", 1, 240, 1.0,
       engine="llamacpp", model="gguf8b", ekw=dict(slots=4, ctx=65536),
       load=traffic(0.25, 6000, 200, 0.2), note="internal RAG: 6k-token prompts are the norm"))


def _h_pp(t):
    return Step(compute=0.9, comm=0.15, opt=0.03, mfu=0.42, tokens=8 * 4096,
                rank_f=(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.06, 1.06))


add(Sc("h_megatron_tp2pp4_h100_steady", "train_megatron", None, "H100", 8, 300, 2.0,
       kind="train", step=_h_pp, counter="tokens", job_mem=72e9, cpus=96,
       note="TP2 x PP4: the last stage (loss) is 6% heavier, pipeline bubbles, steady"))
add(Sc("h_vllm_h100_ebpf_on_healthy", "serve_vllm", None, "H100", 1, 240, 1.0, engine="vllm",
       load=traffic(5), ebpf=True, jitter=lambda t: (0.002, 60e3),
       note="eBPF on, healthy: launch calls a few microseconds, rare slow ones"))


def _h_epoch(t):
    return Step(compute=0.3, comm=0.04, opt=0.02, mfu=0.45, tokens=2 * 2048,
                pause=1.0 if 150 <= t < 160 else 0.0)


add(Sc("h_ddp2_h200_epoch_boundary", "train_ddp", None, "H200", 2, 260, 1.0, kind="train",
       step=_h_epoch, counter="tokens", workers=4, worker_need=lambda t: 0.6, pinned=True,
       job_mem=90e9, note="workers restart at the epoch boundary: a 10 s gap, loaders at 60%"))


def _h_spec(t, ld):
    traffic(3, 700, 300, 0.3)(t, ld)
    ld.accept = 0.62 + 0.08 * math.sin(t / 23)


add(Sc("h_vllm_l40s_spec_decode_healthy", "serve_vllm", None, "L40S", 1, 240, 2.0,
       engine="vllm", model="qwen7b", load=_h_spec, ekw=dict(spec_k=4),
       note="ngram speculative decoding with acceptance wandering 0.55-0.7"))
add(Sc("h_vllm_h200_kv_high_no_preemption", "serve_vllm", None, "H200", 1, 260, 1.0,
       engine="vllm", model="llama8b", load=traffic(2.0, 6000, 400, 0.5), ekw=dict(pool=200000),
       note="a long-context workload keeps the KV pool half full or more without preempting"))
add(Sc("h_vllm_h100_busy_host_ok", "serve_vllm", None, "H100", 1, 240, 1.0, engine="vllm",
       load=traffic(5), cpus=64, other_cpu=lambda t: 40 + 5 * math.sin(t / 17),
       note="a 64-CPU host 70% busy with other work, no run-queue pressure: engine unaffected"))
add(Sc("h_sglang_l40s_scrape_every_10s", "serve_sglang", None, "L40S", 1, 240, 1.0,
       engine="sglang", model="qwen7b", load=traffic(3, 700, 250, 0.4), scrape_s=10,
       note="the engine is scraped every 10 s through a slow proxy: readings age"))
