"""The traces: each a Plan (what runs, what goes wrong) and its truth."""

from __future__ import annotations

import math

from .box import Other, Plan
from .physics import GIB
from .serving import ServeCfg
from .box import TrainCfg


def ramp(t, a, b):
    return 0.0 if t <= a else 1.0 if t >= b else (t - a) / (b - a)


def pulses(t, start, on, off, n):
    if t < start:
        return False
    k = int((t - start) // (on + off))
    return k < n and (t - start) - k * (on + off) < on


def lerp(x, a, b):
    return a + (b - a) * x


BASE_WALL = 1796400000.0
E = []  # (name, family, cause, culprits, window, engine, note, plan builder)


def add(name, family, cause, culprits, window, engine, note):
    def deco(fn):
        E.append((name, family, cause, culprits, window, engine, note, fn))
        return fn
    return deco


def P(name, gpu, ngpus, tick, dur, **kw):
    idx = len(E)
    return Plan(name=name, gpu=gpu, ngpus=ngpus, tick=tick, duration=dur,
                start_wall=BASE_WALL + idx * 7919.0, **kw)


# ===================================================================== pathologies
# ---- oversized_request
@add("or_n8_logprobs_h100", "serving", "oversized_request", None, (100, 170), "vllm",
     "one n=8 logprobs=20 request joins 24 chat clients; every step pythonises its logprobs")
def _(n):
    return P(n, "H100", 1, 1.0, 240, serve=ServeCfg(model="llama8b", mode="closed", clients=24,
             injections=[(100, dict(prompt=600, out=1400, n=8, lp=20))]))


@add("or_bestof_sglang_h200", "serving", "oversized_request", None, (100, 235), "sglang",
     "a script sends n=6 logprobs=20 requests back to back; the shared batch slows")
def _(n):
    return P(n, "H200", 1, 1.0, 270, serve=ServeCfg(engine="sglang", model="qwen32b", mode="open",
             rate=lambda t: 0.7 + 0.15 * math.sin(t / 23), prompt=(1200, 0.8, 8000),
             out=(300, 0.6, 2000), budget=8192,
             injections=[(100, dict(prompt=900, out=2000, n=6, lp=20)),
                         (165, dict(prompt=900, out=2000, n=6, lp=20))]))


@add("or_huge_prompt_tp4_h200", "serving", "oversized_request", None, (120, 215), "vllm",
     "a 110k-token prompt with max_tokens 6000 lands on a TP4 70B server")
def _(n):
    return P(n, "H200", 4, 1.0, 260, serve=ServeCfg(model="llama70b", tp=4, gpus=(0, 1, 2, 3),
             mode="open", rate=2.2, prompt=(1500, 0.7, 6000), out=(250, 0.6, 1500),
             injections=[(120, dict(prompt=110000, out=6000, n=1))]))


# ---- prefill_interference
@add("pi_rag_ramp_h100", "serving", "prefill_interference", None, (100, 260), "vllm",
     "a RAG tenant ramps 10k-token prompts in over 60 s; chunked prefill stretches decode steps")
def _(n):
    return P(n, "H100", 1, 1.0, 270, serve=ServeCfg(model="llama8b", mode="open", rate=5.0,
             budget=4096), fault=lambda t: {"burst": [(0.9 * ramp(t, 100, 160), 12000, 40)]})


@add("pi_extend_sglang_h100", "serving", "prefill_interference", None, (95, 220), "sglang",
     "16k-token prompts at 0.35/s: SGLang's extend batches pause every decode")
def _(n):
    return P(n, "H100", 1, 1.0, 240, serve=ServeCfg(engine="sglang", model="qwen7b",
             mode="closed", clients=40, prompt=(700, 0.6, 4000), out=(260, 0.5, 1500)),
             fault=lambda t: {"burst": [(0.35 if 95 <= t < 220 else 0.0, 16000, 30)]})


@add("pi_intermittent_a100", "serving", "prefill_interference", None, (90, 200), "vllm",
     "a batch job sends 6k-token prompts in 10 s bursts every 30 s (A100, no GPM)")
def _(n):
    return P(n, "A100", 1, 1.0, 230, serve=ServeCfg(model="llama8b", mode="open", rate=3.5,
             budget=4096, prompt=(600, 0.6, 3000)),
             fault=lambda t: {"burst": [(2.0 if pulses(t, 90, 10, 20, 4) else 0.0, 6000, 20)]})


# ---- collective_straggler
@add("cs_slow_gpu_ddp8_h100", "multi-gpu", "collective_straggler", (5,), (90, 240), "trainer",
     "GPU 5 runs at 82% clocks with no NVML throttle reason; seven ranks spin in NCCL")
def _(n):
    f = lambda t: {"clock": {5: 0.82}} if t >= 90 else {}
    return P(n, "H100", 8, 1.0, 240, train=TrainCfg(gpus=tuple(range(8)), step_s=0.62,
             comm_s=0.05, tokens_per_step=8 * 16384), fault=f,
             box_fault=lambda t: {"hidden_cap": {5: 0.82}} if t >= 90 else {})


@add("cs_hot_expert_fsdp4_h200", "multi-gpu", "collective_straggler", (2,), (100, 260), "trainer",
     "MoE router imbalance grows: rank 2 hosts the hot experts and the others wait")
def _(n):
    f = lambda t: {"rank_factor": {2: 1 + 0.32 * ramp(t, 100, 190)}}
    return P(n, "H200", 4, 1.0, 270, train=TrainCfg(gpus=(0, 1, 2, 3), gpu="H200", model="mixtral",
             step_s=0.8, comm_s=0.08, tokens_per_step=4 * 8192, fsdp=True), fault=f)


@add("cs_packing_ddp8_a100", "multi-gpu", "collective_straggler", (6,), (80, 220), "trainer",
     "a packing bug gives rank 6 1.6x the tokens; A100 without GPM, 2 s ticks")
def _(n):
    f = lambda t: {"rank_factor": {6: 1.6}} if t >= 80 else {}
    return P(n, "A100", 8, 2.0, 220, train=TrainCfg(gpus=tuple(range(8)), gpu="A100",
             step_s=0.9, comm_s=0.09, tokens_per_step=8 * 8192), fault=f)


# ---- input_stall
@add("is_jpeg_workers_h100", "training", "input_stall", None, (100, 240), "trainer",
     "half the DataLoader workers die (OOM); JPEG decode can't keep the GPU fed")
def _(n):
    f = lambda t: {"loader": 2.2} if t >= 100 else {}
    return P(n, "H100", 1, 1.0, 240, train=TrainCfg(step_s=0.3, comm_s=0, unit="samples",
             samples_per_step=256, loader_s=0.2, workers=12, model="llama3b"), fault=f)


@add("is_nfs_ddp8_h100", "training", "input_stall", None, (90, 250), "trainer",
     "the shared NFS slows over 90 s; every rank waits on I/O-bound loaders")
def _(n):
    f = lambda t: {"loader": 1 + 1.35 * ramp(t, 90, 180)}
    return P(n, "H100", 8, 1.0, 260, train=TrainCfg(gpus=tuple(range(8)), step_s=0.55,
             comm_s=0.05, loader_s=0.5, loader_cpu_bound=False), fault=f)


@add("is_s3_intermittent_l40s", "training", "input_stall", None, (90, 210), "trainer",
     "object-store throttling: the loader is 3x slower for 10 s of every 30 (4x L40S)")
def _(n):
    f = lambda t: {"loader": 3.2} if pulses(t, 90, 10, 20, 4) else {}
    return P(n, "L40S", 4, 1.0, 230, train=TrainCfg(gpus=(0, 1, 2, 3), gpu="L40S",
             model="llama3b", step_s=0.45, comm_s=0.06, loader_s=0.4,
             loader_cpu_bound=False), fault=f)


# ---- host_launch_jitter
@add("hj_graph_launch_tail_h100", "serving", "host_launch_jitter", None, (100, 240), "vllm",
     "allocator lock contention delays the engine core's graph launches (eBPF tails)")
def _(n):
    f = lambda t: ({"jitter_ms": 3.2, "launch_tail_frac": 0.35, "launch_tail_ms": 8.0,
                    "offcpu": 20} if t >= 100 else {})
    return P(n, "H100", 1, 1.0, 240, serve=ServeCfg(model="llama3b", mode="closed", clients=32,
             ebpf=True), fault=f)


@add("hj_irq_core_trainer_h200", "training", "host_launch_jitter", None, (90, 230), "trainer",
     "NIC interrupts land on the launching core; eager launches stall a few ms at a time")
def _(n):
    f = lambda t: ({"jitter_s": 0.07, "launch_tail_frac": 0.03, "launch_tail_ms": 2.5,
                    "offcpu": 350} if t >= 90 else {})
    return P(n, "H200", 1, 1.0, 230, train=TrainCfg(gpu="H200", step_s=0.26, comm_s=0,
             ebpf=True, model="llama3b", tokens_per_step=65536), fault=f)


@add("hj_gc_pauses_sglang_h100", "serving", "host_launch_jitter", None, (90, 210), "sglang",
     "Python GC pauses in the scheduler: launch tails 15 s on / 15 s off")
def _(n):
    f = lambda t: ({"jitter_ms": 11.0, "launch_tail_frac": 0.5, "launch_tail_ms": 20.0}
                   if pulses(t, 90, 15, 15, 4) else {})
    return P(n, "H100", 1, 1.0, 230, serve=ServeCfg(engine="sglang", model="qwen7b",
             mode="closed", clients=48, ebpf=True), fault=f)


# ---- host_cpu_contention
def hogs(t0, t1, share, psi, runq, hog, cpus=96):
    def f(t):
        x = ramp(t, t0, t1)
        return {"cpu_share": lerp(x, 1.0, share)} if x > 0 else {}

    def b(t):
        x = ramp(t, t0, t1)
        return {"psi": lerp(x, 0.8, psi), "runq": int(lerp(x, 5, runq)), "hog_cores": hog * x} \
            if x > 0 else {}
    return f, b


@add("hc_noisy_neighbour_h100", "serving", "host_cpu_contention", None, (100, 250), "vllm",
     "transcode jobs land on the serving cores over 60 s; the engine core gets a third of a CPU")
def _(n):
    f, b = hogs(100, 160, 0.3, 68, 150, 110)
    return P(n, "H100", 1, 1.0, 250, serve=ServeCfg(model="llama8b", mode="closed", clients=32,
             host_ms=3.5), fault=f, box_fault=b)


@add("hc_cfs_quota_trainer_h100", "training", "host_cpu_contention", None, (100, 240), "trainer",
     "a lowered CFS quota throttles the trainer's tree: involuntary switches, PSI up")
def _(n):
    f = lambda t: {"cpu_share": 0.42} if t >= 100 else {}
    b = lambda t: {"psi": 22.0, "runq": 14} if t >= 100 else {}
    return P(n, "H100", 1, 1.0, 240, cpus=32, train=TrainCfg(step_s=0.2, comm_s=0,
             host_step_s=0.11, model="llama3b", tokens_per_step=32768), fault=f, box_fault=b)


@add("hc_build_job_llamacpp_l40s", "serving", "host_cpu_contention", None, (90, 210), "llamacpp",
     "a make -j build on the host runs 15 s on / 15 s off; llama-server's threads starve")
def _(n):
    f = lambda t: {"cpu_share": 0.35} if pulses(t, 90, 15, 15, 4) else {}
    b = lambda t: ({"psi": 75.0, "runq": 70, "hog_cores": 30} if pulses(t, 90, 15, 15, 4)
                   else {})
    return P(n, "L40S", 1, 2.0, 240, cpus=32, serve=ServeCfg(engine="llamacpp", model="llama8b",
             mode="closed", clients=4, slots=4, host_ms=6.0, scrape_s=2.0), fault=f, box_fault=b)


# ---- tiny_kernels
@add("tk_anomaly_hook_h100", "training", "tiny_kernels", None, (100, 240), "trainer",
     "a NaN-check debug hook launches a tiny reduction per tensor; util stays 98%, SM falls")
def _(n):
    f = lambda t: {"tiny_s": 0.16} if t >= 100 else {}
    return P(n, "H100", 1, 1.0, 240, train=TrainCfg(step_s=0.45, comm_s=0), fault=f)


@add("tk_logits_proc_h200", "serving", "tiny_kernels", None, (100, 250), "vllm",
     "a deploy adds a per-token logits processor of tiny kernels to every decode step")
def _(n):
    f = lambda t: {"tiny_ms": 3.2} if t >= 100 else {}
    return P(n, "H200", 1, 1.0, 250, serve=ServeCfg(model="llama8b", mode="closed", clients=48),
             fault=f)


@add("tk_unfused_optim_b200", "multi-gpu", "tiny_kernels", None, (110, 260), "trainer",
     "foreach optimizer disabled by a config change: thousands of tiny per-parameter kernels")
def _(n):
    f = lambda t: {"tiny_s": 0.17 * ramp(t, 110, 150)}
    return P(n, "B200", 4, 1.0, 260, train=TrainCfg(gpus=(0, 1, 2, 3), gpu="B200", step_s=0.6,
             comm_s=0.04), fault=f)


# ---- memory_bandwidth
@add("mb_long_chats_h100", "serving", "memory_bandwidth", None, (100, 250), "vllm",
     "conversations grow to 7k cached tokens; KV reads push DRAM past 85% and steps grow")
def _(n):
    f = lambda t: {"prompt": (lerp(ramp(t, 100, 150), 900, 7000), 0.3, 9000),
                   "prefix_hit": lerp(ramp(t, 100, 150), 0.15, 0.93)}
    return P(n, "H100", 1, 1.0, 250, serve=ServeCfg(model="llama8b", mode="closed", clients=24,
             out=(200, 0.5, 800)), fault=f)


@add("mb_agent_ctx_b200", "serving", "memory_bandwidth", None, (100, 260), "sglang",
     "agent tool outputs grow contexts from 3k to 20k tokens (radix-cached) over 90 s")
def _(n):
    f = lambda t: {"prompt": (lerp(ramp(t, 100, 190), 3000, 20000), 0.25, 26000),
                   "prefix_hit": lerp(ramp(t, 100, 190), 0.5, 0.96)}
    return P(n, "B200", 1, 1.0, 260, serve=ServeCfg(engine="sglang", model="qwen32b",
             mode="closed", clients=14, out=(250, 0.5, 900)), fault=f)


@add("mb_docs_a100", "serving", "memory_bandwidth", None, (110, 250), "vllm",
     "document QA with 5k cached contexts on A100 (2 TB/s): step time up ~1.5x")
def _(n):
    f = lambda t: {"prompt": (lerp(ramp(t, 110, 170), 800, 5200), 0.3, 7000),
                   "prefix_hit": lerp(ramp(t, 110, 170), 0.1, 0.92)}
    return P(n, "A100", 1, 2.0, 250, serve=ServeCfg(model="llama8b", mode="closed", clients=20,
             out=(220, 0.5, 900), scrape_s=2.0), fault=f)


# ---- throttling
@add("th_power_policy_ddp8_h100", "multi-gpu", "throttling", None, (100, 240), "trainer",
     "demand response lowers the power cap to 400 W on all eight GPUs")
def _(n):
    return P(n, "H100", 8, 1.0, 240, train=TrainCfg(gpus=tuple(range(8)), step_s=0.6,
             comm_s=0.04), fault=lambda t: {"clock": {g: 0.73 for g in range(8)}} if t >= 100
             else {}, box_fault=lambda t: {"power_limit": {g: 400.0 for g in range(8)}}
             if t >= 100 else {})


@add("th_fan_failure_h200", "serving", "throttling", (0,), (150, 300), "vllm",
     "a chassis fan fails: the GPU heats for two minutes, then thermal slowdown cuts clocks")
def _(n):
    return P(n, "H200", 1, 1.0, 300, serve=ServeCfg(model="qwen32b", mode="open", rate=1.4,
             prompt=(3000, 0.5, 8000), out=(150, 0.5, 600), prefix_hit=0.0),
             fault=lambda t: {"clock_mult": 1.0},
             box_fault=lambda t: {"cooling": {0: lerp(ramp(t, 90, 200), 1.0, 0.56)},
                                  "thermal_mem": t > 150})


@add("th_power_brake_ddp8_h100", "multi-gpu", "throttling", None, (90, 210), "trainer",
     "a PSU fault asserts the power brake 10 s of every 30")
def _(n):
    on = lambda t: pulses(t, 90, 10, 20, 4)
    return P(n, "H100", 8, 1.0, 230, train=TrainCfg(gpus=tuple(range(8)), step_s=0.6,
             comm_s=0.05), fault=lambda t: {"clock": {g: 0.42 for g in range(8)}} if on(t)
             else {}, box_fault=lambda t: {"brake": {g: True for g in range(8)}} if on(t) else {})


# ---- kv_pressure
@add("kv_reasoning_outputs_h100", "serving", "kv_pressure", None, (100, 250), "vllm",
     "a client switches to 4k-token reasoning outputs; the pool fills, preemptions recompute")
def _(n):
    f = lambda t: {"out": (lerp(ramp(t, 100, 140), 250, 3500), 0.4, 4096)}
    return P(n, "H100", 1, 1.0, 250, serve=ServeCfg(model="llama8b", mode="closed", clients=90,
             mem_util=0.5, prompt=(1500, 0.5, 6000)), fault=f)


@add("kv_retract_sglang_tp2_h100", "serving", "kv_pressure", None, (90, 230), "sglang",
     "long documents arrive faster than the pool drains: SGLang retracts and re-queues")
def _(n):
    f = lambda t: {"clients": 120 if t >= 90 else 40, "prompt": (6000, 0.4, 12000)
                   if t >= 90 else (1500, 0.5, 6000)}
    return P(n, "H100", 2, 1.0, 230, serve=ServeCfg(engine="sglang", model="qwen32b", tp=2,
             gpus=(0, 1), mode="closed", clients=40, mem_util=0.85, out=(600, 0.5, 2000)),
             fault=f)


@add("kv_intermittent_l40s", "serving", "kv_pressure", None, (90, 210), "vllm",
     "a small 48 GB pool: 15 s waves of long requests preempt the running batch")
def _(n):
    f = lambda t: {"clients": 120 if pulses(t, 90, 15, 15, 4) else 24,
                   "out": (2200, 0.3, 3000) if pulses(t, 90, 15, 15, 4) else (900, 0.4, 2000)}
    return P(n, "L40S", 1, 1.0, 230, serve=ServeCfg(model="llama8b", mode="closed", clients=24,
             prompt=(2500, 0.4, 6000), out=(900, 0.4, 2000), mem_util=0.92), fault=f)


# ---- gpu_shared
def intruder(gpu, t0, busy, name="python3", cmd="python3 train_lora.py --bs 8",
             user="alice", mem=14 * GIB, on=None):
    def act(t):
        if t < t0 or (on is not None and not on(t)):
            return None
        return {"busy": busy, "sm": busy * 0.8, "tensor": busy * 0.45, "dram": busy * 0.3}
    return Other(gpu=gpu, name=name, cmdline=cmd, user=user, mem=mem, act=act, pid=77120,
                 start=t0)


@add("gs_notebook_h100", "serving", "gpu_shared", (0,), (100, 240), "vllm",
     "a notebook fine-tune lands on the serving GPU and time-slices with vLLM")
def _(n):
    return P(n, "H100", 1, 1.0, 240, serve=ServeCfg(model="llama8b", mode="closed", clients=32),
             fault=lambda t: {"shared": 0.4} if t >= 100 else {},
             others=[intruder(0, 100, 0.4)])


@add("gs_second_job_ddp8_h100", "multi-gpu", "gpu_shared", (3,), (90, 240), "trainer",
     "a second Slurm job shares GPU 3 with an 8-rank DDP run; the other ranks wait on it")
def _(n):
    return P(n, "H100", 8, 1.0, 240, train=TrainCfg(gpus=tuple(range(8)), step_s=0.6,
             comm_s=0.05), fault=lambda t: {"shared": {3: 0.3}} if t >= 90 else {},
             others=[intruder(3, 90, 0.3, cmd="python3 eval_harness.py --model ckpt-1200",
                              user="bob", mem=22 * GIB)])


@add("gs_embedder_intermittent_h200", "serving", "gpu_shared", (0,), (90, 210), "sglang",
     "an embedding server on the same GPU works in 15 s bursts every 30 s")
def _(n):
    on = lambda t: pulses(t, 90, 15, 15, 4)
    return P(n, "H200", 1, 1.0, 230, serve=ServeCfg(engine="sglang", model="qwen7b",
             mode="closed", clients=48), fault=lambda t: {"shared": 0.5} if on(t) else {},
             others=[intruder(0, 90, 0.5, name="text-embeddin", user="search",
                              cmd="text-embeddings-router --model-id BAAI/bge-large-en-v1.5",
                              mem=3 * GIB, on=on)])


# ---- spec_decode_rejected
@add("sd_eagle_collapse_h100", "serving", "spec_decode_rejected", None, (100, 240), "vllm",
     "traffic shifts to a language the EAGLE head was not trained on; acceptance 0.75 -> 0.25")
def _(n):
    return P(n, "H100", 1, 1.0, 240, serve=ServeCfg(model="llama8b", mode="closed", clients=16,
             spec_k=3, accept=0.75), fault=lambda t: {"accept": 0.25} if t >= 100 else {})


@add("sd_slow_drift_sglang_h200", "serving", "spec_decode_rejected", None, (110, 270), "sglang",
     "after a target-model update the draft drifts: acceptance falls 0.72 -> 0.42 over 2 min")
def _(n):
    return P(n, "H200", 1, 1.0, 270, serve=ServeCfg(engine="sglang", model="qwen32b",
             mode="closed", clients=10, spec_k=4, accept=0.72),
             fault=lambda t: {"accept": lerp(ramp(t, 110, 200), 0.72, 0.42)})


@add("sd_draft_llamacpp_l40s", "serving", "spec_decode_rejected", None, (100, 240), "llamacpp",
     "llama-server's draft model stops matching (temperature raised): acceptance 0.8 -> 0.3")
def _(n):
    return P(n, "L40S", 1, 2.0, 240, serve=ServeCfg(engine="llamacpp", model="llama8b",
             mode="closed", clients=2, slots=2, spec_k=6, accept=0.8, host_ms=1.5,
             scrape_s=2.0), fault=lambda t: {"accept": 0.3} if t >= 100 else {})


# ===================================================================== healthy look-alikes
def H(name, engine, note, family="healthy"):
    return add(name, family, None, None, None, engine, note)


@H("ok_traffic_falls_h100", "vllm", "evening: traffic falls to a tenth over three minutes")
def _(n):
    return P(n, "H100", 1, 1.0, 240, serve=ServeCfg(model="llama8b", mode="open",
             rate=lambda t: 8.0 * lerp(ramp(t, 40, 220), 1.0, 0.1)))


@H("ok_load_test_h200", "vllm", "a load test starts: 8 -> 96 clients, queue briefly, tokens/s up")
def _(n):
    return P(n, "H200", 1, 1.0, 200, serve=ServeCfg(model="llama8b", mode="closed",
             clients=lambda t: 8 if t < 90 else 96))


@H("ok_long_prompt_burst_h200", "vllm", "a 12 s burst of 6k-token prompts is absorbed")
def _(n):
    return P(n, "H200", 1, 1.0, 180, serve=ServeCfg(model="qwen7b", mode="open", rate=4.0),
             fault=lambda t: {"burst": [(1.0 if 90 <= t < 102 else 0.0, 6000, 80)]})


@H("ok_prefix_cache_repeat_h100", "vllm", "a client sends the same 8k prompt 50 times: cache hits")
def _(n):
    return P(n, "H100", 1, 1.0, 180, serve=ServeCfg(model="llama8b", mode="open", rate=4.0),
             fault=lambda t: {"burst": [(2.5 if 80 <= t < 100 else 0.0, 8000, 60)],
                              "burst_hit": 0.98})


@H("ok_single_long_generation_h100", "vllm", "2 a.m.: one user's 8k-token generation, GPU mostly idle")
def _(n):
    return P(n, "H100", 1, 1.0, 180, serve=ServeCfg(model="llama8b", mode="closed", clients=1,
             out=(8000, 0.01, 8000), think_s=2.0))


@H("ok_eval_phases_h100", "trainer", "training with a 15 s forward-only eval every minute",
   family="healthy-training")
def _(n):
    return P(n, "H100", 1, 1.0, 200, train=TrainCfg(step_s=0.5, comm_s=0, eval_every=60,
             eval_s=15))


@H("ok_checkpoint_minutely_h200", "trainer", "a 7 s checkpoint every minute: counters stall, GPU idles",
   family="healthy-training")
def _(n):
    return P(n, "H200", 1, 1.0, 200, train=TrainCfg(gpu="H200", step_s=0.45, comm_s=0,
             ckpt_every=60, ckpt_s=7))


@H("ok_seqlen_var_ddp8_h100", "trainer", "8-rank DDP with steps varying by sequence length, sharded checkpoints",
   family="healthy-training")
def _(n):
    return P(n, "H100", 8, 1.0, 200, train=TrainCfg(gpus=tuple(range(8)), step_s=0.6,
             comm_s=0.05, seq_var=0.25, ckpt_every=90, ckpt_s=6))


@H("ok_restart_reload_h100", "vllm", "a rolling restart: endpoint gone, VRAM empties, warm-up, counters reset")
def _(n):
    def b(t):
        if 80 <= t < 130:
            x = ramp(t, 88, 120)
            return {"endpoint_down": True, "load_mem": int(70 * GIB * x) if t >= 88 else 0,
                    "load_busy": 0.85 if 118 <= t < 130 else 0.0}
        return {}
    return P(n, "H100", 1, 1.0, 220, serve=ServeCfg(model="llama8b", mode="closed", clients=24),
             box_fault=b)


@H("ok_power_capped_all_day_h200", "vllm", "prefill-heavy summarisation holds the H200 at its 700 W cap")
def _(n):
    return P(n, "H200", 1, 1.0, 180, serve=ServeCfg(model="llama8b", mode="open", rate=3.2,
             prompt=(5000, 0.3, 9000), out=(120, 0.4, 400), prefix_hit=0.0, budget=8192))


@H("ok_monitoring_process_h100", "vllm", "a monitoring agent holds a CUDA context and 1% SM on the GPU")
def _(n):
    mon = Other(gpu=0, name="dcgm-exporter", cmdline="/usr/bin/dcgm-exporter -f /etc/dcgm.csv",
                user="root", mem=300 * 2**20, act=lambda t: {"busy": 0.01, "sm": 0.01},
                pid=2231, start=-9000)
    return P(n, "H100", 1, 1.0, 180, serve=ServeCfg(model="llama8b", mode="open", rate=5.0),
             others=[mon])


@H("ok_small_model_host_bound_h200", "vllm", "a 0.5B model is host-bound: GPU-Util ~40%, all steady")
def _(n):
    return P(n, "H200", 1, 1.0, 180, serve=ServeCfg(model="qwen05b", mode="closed", clients=16,
             host_ms=4.0))


@H("ok_idle_full_vram_h100", "vllm", "no traffic overnight; the KV pool stays reserved")
def _(n):
    return P(n, "H100", 1, 1.0, 150, serve=ServeCfg(model="llama8b", mode="open", rate=0.02))


@H("ok_on_off_clients_h100", "vllm", "clients switch between 4 and 40 every 20 s: noisy tokens/s")
def _(n):
    return P(n, "H100", 1, 1.0, 200, serve=ServeCfg(model="llama8b", mode="closed",
             clients=lambda t: 40 if int(t // 20) % 2 else 4))


@H("ok_scrape_timeouts_sglang_h100", "sglang", "5 s scrapes, some timing out; serving steady")
def _(n):
    return P(n, "H100", 1, 1.0, 200, serve=ServeCfg(engine="sglang", model="qwen7b",
             mode="open", rate=6.0, scrape_s=5.0),
             box_fault=lambda t: {"scrape_timeout": (int(t) % 47) < 8})


@H("ok_eight_servers_one_box", "vllm", "eight independent servers; GPU 5's tenant goes quiet",
   family="healthy-multi")
def _(n):
    xs = []
    for g in range(1, 8):
        rate = (lambda t: 3.0 if t < 80 else 0.15) if g == 5 else 2.0 + 0.4 * g
        xs.append((ServeCfg(model="llama8b", gpus=(g,), mode="open", rate=rate,
                            pid0=41200 + 1000 * g, url_port=8000 + g), None))
    return P(n, "H100", 8, 1.0, 180, cpus=192, serve=ServeCfg(model="llama8b", mode="open",
             rate=4.0), extra_serves=xs)


@H("ok_tp4_70b_h200_2s", "vllm", "TP4 70B server, steady, 2 s ticks", family="healthy-multi")
def _(n):
    return P(n, "H200", 4, 2.0, 200, serve=ServeCfg(model="llama70b", tp=4, gpus=(0, 1, 2, 3),
             mode="open", rate=3.0, scrape_s=2.0))


@H("ok_multitenant_15s_scrape", "vllm", "TP2 server + a 4-GPU fine-tune + an idle notebook; 15 s scrapes",
   family="healthy-multi")
def _(n):
    nb = Other(gpu=6, name="python3", cmdline="/opt/conda/bin/python -m ipykernel_launcher",
               user="carol", mem=20 * GIB, act=lambda t: {"busy": 0.0}, pid=90011, start=-4000)
    return P(n, "H100", 8, 1.0, 200, cpus=192, serve=ServeCfg(model="qwen32b", tp=2,
             gpus=(0, 1), mode="open", rate=3.0, scrape_s=15.0),
             extra_trains=[(TrainCfg(gpus=(2, 3, 4, 5), step_s=0.7, comm_s=0.06, pid0=61000,
                                     seq_var=0.1), None)], others=[nb])


@H("ok_sglang_radix_hits_h200", "sglang", "SGLang with heavy radix-cache reuse, 15 s scrapes")
def _(n):
    return P(n, "H200", 1, 1.0, 200, serve=ServeCfg(engine="sglang", model="llama8b",
             mode="open", rate=7.0, prefix_hit=0.7, scrape_s=15.0))


@H("ok_llamacpp_single_user_l40s", "llamacpp", "llama-server with one chatty user, host-bound, 2 s ticks")
def _(n):
    return P(n, "L40S", 1, 2.0, 200, cpus=32, serve=ServeCfg(engine="llamacpp", model="llama8b",
             mode="closed", clients=1, think_s=4.0, host_ms=2.0, scrape_s=2.0, slots=2))


@H("ok_ddp8_a100_natural_imbalance", "trainer", "8x A100 DDP, rank 3 about 3% slower (normal)",
   family="healthy-training")
def _(n):
    return P(n, "A100", 8, 1.0, 200, train=TrainCfg(gpus=tuple(range(8)), gpu="A100",
             step_s=0.9, comm_s=0.08), fault=lambda t: {"rank_factor": {3: 1.03}})


@H("ok_spec_accept_varies_h100", "vllm", "EAGLE acceptance drifts 0.55-0.75 with the prompt mix")
def _(n):
    return P(n, "H100", 1, 1.0, 200, serve=ServeCfg(model="llama8b", mode="closed", clients=16,
             spec_k=3), fault=lambda t: {"accept": 0.65 + 0.1 * math.sin(t / 17)})


@H("ok_kv_high_steady_h100", "vllm", "KV pool sits at ~80% with long chats, no preemptions")
def _(n):
    return P(n, "H100", 1, 1.0, 180, serve=ServeCfg(model="llama8b", mode="closed", clients=48,
             mem_util=0.55, prompt=(2500, 0.3, 5000), out=(400, 0.3, 900)))


@H("ok_cuda_bench_no_engine", "none", "a cuBLAS benchmark (no engine) at the power cap, 5 s ticks")
def _(n):
    bench = Other(gpu=0, name="gemm_bench", cmdline="./gemm_bench --m 8192 --n 8192 --iters 1e6",
                  user="perf", mem=6 * GIB, act=lambda t: {"busy": 0.99, "sm": 0.9,
                                                          "tensor": 0.62, "dram": 0.2, "occ": 0.3},
                  pid=31337, start=-60)
    return P(n, "H100", 1, 5.0, 200, others=[bench], pinned=False)


@H("ok_trainer_l40s_5s", "trainer", "a 4x L40S fine-tune at 5 s ticks, loaders keeping up",
   family="healthy-training")
def _(n):
    return P(n, "L40S", 4, 5.0, 240, train=TrainCfg(gpus=(0, 1, 2, 3), gpu="L40S", model="llama3b",
             step_s=0.5, comm_s=0.07, scrape_s=5.0))


@H("ok_daily_ramp_up_b200", "vllm", "morning ramp on a B200: rate 2 -> 12 req/s")
def _(n):
    return P(n, "B200", 1, 1.0, 200, serve=ServeCfg(model="llama8b", mode="open",
             rate=lambda t: lerp(ramp(t, 30, 180), 2.0, 9.0)))
