"""The catalogue: 36 pathologies (3 per cause) and 24 healthy look-alikes."""
from __future__ import annotations

import math
from dataclasses import replace

from . import minnp as np
from .build import (Box, GiB, Hog, Intruder, Other, ServeTrace, _time_base, assemble, serving,
                    vllm_pool_tokens)
from .frames import GpuState, Host, Pinned, Proc, rng_for, smooth_step
from .hw import (A100, B200, H100, H200, L40S, LLAMA1B, LLAMA70B, LLAMA8B, MIXTRAL, QWEN7B,
                 ModelSpec)
from .serve import EngineCfg, Mods, ReqClass, Traffic
from .train import TrainTrace, training

LLAMA8B_Q8 = ModelSpec("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0", 8.03e9, 8.03e9, 32, 131072,
                       dtype_bytes=1)


def ln(mu, sigma):
    return lambda r: r.lognormal(math.log(mu), sigma)


def C(name, p, o, ps=0.6, os=0.6, mt=1024, **kw):
    return ReqClass(name, ln(p, ps), ln(o, os), max_tokens=mt, **kw)


def step(t0, a, b, ramp=0.0):
    return lambda t: a + (b - a) * smooth_step(t, t0, ramp)


def pulse(t0, t1, a, b, ramp=0.0):
    return lambda t: (a + (b - a) * smooth_step(t, t0, ramp)) if t < t1 else a


def vcfg(model, gpu, tp=1, gpus=None, kind="vllm", gmu=0.9, **kw):
    pool, _ = vllm_pool_tokens(gpu, model, tp, gmu)
    return EngineCfg(kind, model, gpu, gpus=gpus or tuple(range(tp)), tp=tp, kv_pool_tokens=pool, **kw)


def launch_pair(t0, frac, ms, off, per_step=32, t1=1e9):
    """(eBPF view, the gap it leaves per step): a fraction of launches delayed off-CPU."""
    def view(t):
        on = t0 <= t < t1
        return (frac if on else 0.0005, ms if on else 0.05, off if on else 3.0)

    def gap(t):
        f, m, _ = view(t)
        return per_step * f * m
    return view, gap


CATALOGUE = []  # (truth kwargs, builder)


def entry(name, family, cause, culprit, window, engine, gpus, gpu, tick, note):
    def deco(fn):
        CATALOGUE.append(dict(name=name, family=family, cause=cause, culprit_gpus=culprit, window=window,
                              engine=engine, gpus=gpus, gpu_model=gpu.name, tick_s=tick, note=note), )
        CATALOGUE[-1]["build"] = fn
        return fn
    return deco


CHAT = C("chat", 700, 220, mt=1024, think_s=1.5)
CHAT_H = C("chat", 900, 260, mt=2048, think_s=1.0)


def others_box(skip, n=8, spec=H100, seed=0):
    out = []
    for gi in range(n):
        if gi == skip:
            continue
        base = 0.55 + 0.08 * ((gi * 7 + seed) % 5)
        ph = gi * 1.3
        out.append(Other(gi, (lambda b, p: lambda t: b + 0.12 * math.sin(t / 47 + p))(base, ph),
                         0.9 * (spec.mem_total - spec.reserved), 31000 + 97 * gi, "VLLM::EngineCore",
                         "VLLM::EngineCore"))
    return out


# =============================================================== oversized_request
@entry("os_vllm_h100_n8_logprobs", "serving", "oversized_request", None, (110, 260), "vllm", 1, H100, 1.0,
       "one n=8, logprobs=20, max_tokens=2048 request joins 32 chat clients; its per-step logprob work "
       "stretches every decode step ~5x until it finishes")
def _():
    big = C("n8lp", 512, 1900, ps=0.05, os=0.02, mt=2048, n=8, logprobs=20, host_ms_per_step=58,
            gpu_ms_per_step=7)
    cfg = vcfg(LLAMA8B, H100, max_seqs=256, budget=8192)
    return serving(ServeTrace("os_vllm_h100_n8_logprobs", cfg,
                              [Traffic(CHAT, lambda t: 32, closed=True), Traffic(big, None, at=(110.0,))],
                              300, seed=(41, 3000, 0.013, 230)))


@entry("os_vllm_h200_prompt_logprobs", "serving", "oversized_request", None, (100, 175), "vllm", 1, H200, 1.0,
       "one request with a 30k-token prompt, prompt_logprobs=20 and n=4 materialises vocab-wide logits "
       "every step; open-loop chat queues up behind it")
def _():
    big = C("plp", 30000, 700, ps=0.02, os=0.02, mt=800, n=4, logprobs=20, host_ms_per_step=45,
            gpu_ms_per_step=22)
    cfg = vcfg(LLAMA8B, H200, budget=8192)
    return serving(ServeTrace("os_vllm_h200_prompt_logprobs", cfg,
                              [Traffic(C("chat", 800, 240, mt=1024), lambda t: 6.0),
                               Traffic(big, None, at=(100.0,))], 280, seed=(12, 1400, 0.012, 240)))


@entry("os_sglang_a100_n8_repeat", "serving", "oversized_request", None, (90, 245), "sglang", 1, A100, 1.0,
       "a client sends an n=8, top-20 logprobs, 1k-token request twice; each time the whole batch slows "
       "(A100, no GPM)")
def _():
    big = C("n8", 600, 1000, ps=0.05, os=0.02, mt=1024, n=8, logprobs=20, host_ms_per_step=40,
            gpu_ms_per_step=8)
    cfg = vcfg(QWEN7B, A100, kind="sglang", gmu=0.88, budget=8192)
    return serving(ServeTrace("os_sglang_a100_n8_repeat", cfg,
                              [Traffic(C("chat", 600, 200, mt=1024, think_s=1.2), lambda t: 24, closed=True),
                               Traffic(big, None, at=(90.0, 170.0))], 280, seed=(20, 1500, 0.018, 200)))


# =============================================================== prefill_interference
@entry("pi_vllm_h100_rag_onset", "serving", "prefill_interference", None, (110, 300), "vllm", 1, H100, 1.0,
       "a RAG client starts sending 16k-token prompts; every step carries an 8k prefill chunk and "
       "chat decode slows ~3x")
def _():
    rag = C("rag", 16000, 120, ps=0.15, os=0.3, mt=256)
    cfg = vcfg(LLAMA8B, H100, budget=8192)
    return serving(ServeTrace("pi_vllm_h100_rag_onset", cfg,
                              [Traffic(CHAT, lambda t: 40, closed=True), Traffic(rag, step(110, 0, 0.9))],
                              300, seed=(55, 3200, 0.013, 220)))


@entry("pi_sglang_h200_tp4_extend", "serving", "prefill_interference", None, (100, 280), "sglang", 4, H200, 1.0,
       "Llama-70B TP4 on SGLang: 24k-token prompts arrive at 1/s and extend batches pause decode for "
       "hundreds of ms at a time")
def _():
    long = C("doc", 24000, 200, ps=0.2, os=0.3, mt=512)
    cfg = vcfg(LLAMA70B, H200, tp=4, kind="sglang", gmu=0.88, budget=16384, host_ms=3.0)
    return serving(ServeTrace("pi_sglang_h200_tp4_extend", cfg,
                              [Traffic(C("chat", 900, 300, mt=1024, think_s=1.0), lambda t: 64, closed=True),
                               Traffic(long, step(100, 0, 0.3))], 280, seed=(70, 2100, 0.03, 300)))


@entry("pi_vllm_h200_slow_onset", "serving", "prefill_interference", None, (115, 300), "vllm", 1, H200, 2.0,
       "summarisation traffic (12k-token prompts) grows over a minute; chunked prefill stretches decode "
       "steps: ITL/TTFT p99 up while tokens/s sags (2 s ticks)")
def _():
    summ = C("summ", 12000, 180, ps=0.2, os=0.3, mt=400)
    cfg = vcfg(LLAMA8B, H200, budget=4096)
    return serving(ServeTrace("pi_vllm_h200_slow_onset", cfg,
                              [Traffic(CHAT_H, lambda t: 48, closed=True), Traffic(summ, step(85, 0, 1.1, 60))],
                              300, tick=2.0, seed=(33, 3500, 0.012, 260)))


# =============================================================== memory_bandwidth
@entry("mb_vllm_h200_longctx", "serving", "memory_bandwidth", None, (110, 300), "vllm", 1, H200, 1.0,
       "the client mix moves to 28k-token contexts; every decode step reads ~90 GB of KV, DRAM saturates "
       "and ITL triples, tokens/s falls")
def _():
    lc = C("longctx", 28000, 1800, ps=0.08, os=0.3, mt=4096, think_s=0.5, cached_frac=0.95)
    cfg = vcfg(LLAMA8B, H200, budget=8192, max_seqs=128)
    return serving(ServeTrace("mb_vllm_h200_longctx", cfg,
                              [Traffic(C("chat", 900, 300, mt=1024, think_s=1.0), step(90, 40, 0, 20), closed=True),
                               Traffic(lc, step(90, 0, 26, 20), closed=True)], 300,
                              seed=(18, 3300, 0.012, 300)))


@entry("mb_sglang_h100_growing_history", "serving", "memory_bandwidth", None, (120, 300), "sglang", 1, H100, 1.0,
       "multi-turn sessions accumulate history: contexts grow from 2k to 22k tokens at a constant 30 "
       "sessions; KV reads dominate the decode step")
def _():
    r0 = rng_for("mb_sglang_h100_growing_history", "ctx")
    cls = ReqClass("session", lambda r: 0, ln(900, 0.4), max_tokens=2048, think_s=0.8, cached_frac=0.94)
    grow = lambda t: 2000 + 20000 * smooth_step(t, 80, 90)  # noqa: E731
    sim_cls = replace(cls)
    cfg = vcfg(QWEN7B, H100, kind="sglang", gmu=0.88, budget=8192)
    tr = Traffic(sim_cls, lambda t: 30, closed=True)
    st = ServeTrace("mb_sglang_h100_growing_history", cfg, [tr], 300, seed=(9, 2500, 0.01, 400))
    # prompt length follows the session history (time-dependent)
    state = {"t": 0.0}
    orig = tr.level
    def level(t):
        state["t"] = t
        return orig(t)
    tr.level = level
    sim_cls.prompt = lambda r: grow(state["t"]) * r.uniform(0.85, 1.15)
    return serving(st)


@entry("mb_vllm_a100_long_docs", "serving", "memory_bandwidth", None, (100, 280), "vllm", 1, A100, 1.0,
       "document QA with 12k-token contexts at 30 clients on an A100: memory controller busy ~90%, "
       "step time grows ~2.5x (no GPM: only util.memory shows it)")
def _():
    doc = C("docqa", 12000, 900, ps=0.1, os=0.3, mt=2048, think_s=0.6, cached_frac=0.92)
    cfg = vcfg(LLAMA8B, A100, budget=8192)
    return serving(ServeTrace("mb_vllm_a100_long_docs", cfg,
                              [Traffic(C("chat", 700, 250, mt=1024, think_s=1.0), step(85, 36, 0, 15), closed=True),
                               Traffic(doc, step(85, 0, 30, 15), closed=True)], 280, seed=(26, 1500, 0.02, 250)))


# =============================================================== kv_pressure
@entry("kv_vllm_h100_long_outputs", "serving", "kv_pressure", None, (130, 300), "vllm", 1, H100, 1.0,
       "the app switches to long reasoning outputs (~6k tokens); the KV pool fills, vLLM preempts and "
       "recomputes, requests wait for capacity")
def _():
    reason = C("reason", 1200, 6000, ps=0.4, os=0.25, mt=8192)
    cfg = vcfg(LLAMA8B, H100, budget=8192)
    return serving(ServeTrace("kv_vllm_h100_long_outputs", cfg,
                              [Traffic(C("chat", 900, 250, mt=1024), step(100, 9.0, 2.0, 20)),
                               Traffic(reason, step(100, 0, 1.6, 20))], 300, seed=(48, 2600, 0.014, 260)))


@entry("kv_sglang_h200_tp2_retract", "serving", "kv_pressure", None, (115, 290), "sglang", 2, H200, 1.0,
       "agent traffic with 16k-token prompts and 2k outputs overfills a 70B TP2 pool; SGLang retracts "
       "requests and re-prefills them")
def _():
    agent = C("agent", 16000, 2000, ps=0.2, os=0.3, mt=4096)
    cfg = vcfg(LLAMA70B, H200, tp=2, kind="sglang", gmu=0.88, budget=16384, new_token_ratio=0.12)
    return serving(ServeTrace("kv_sglang_h200_tp2_retract", cfg,
                              [Traffic(C("chat", 800, 250, mt=1024, think_s=1.0), lambda t: 24, closed=True),
                               Traffic(agent, step(100, 0, 0.55, 10))], 290, seed=(60, 900, 0.03, 250)))


@entry("kv_vllm_h200_tp4_flood", "serving", "kv_pressure", None, (100, 300), "vllm", 4, H200, 2.0,
       "a batch job floods 8k-prompt/4k-output requests into a 70B TP4 server: the pool fills in a "
       "minute, preemptions climb, the queue grows (2 s ticks)")
def _():
    batch = C("batch", 8000, 4000, ps=0.15, os=0.2, mt=4096)
    cfg = vcfg(LLAMA70B, H200, tp=4, budget=8192, host_ms=3.0)
    return serving(ServeTrace("kv_vllm_h200_tp4_flood", cfg,
                              [Traffic(C("chat", 900, 260, mt=1024), lambda t: 5.0),
                               Traffic(batch, pulse(100, 125, 0, 9.0))], 300, tick=2.0,
                              seed=(90, 1300, 0.025, 260)))


# =============================================================== gpu_shared
@entry("gs_vllm_h200_notebook", "serving", "gpu_shared", (0,), (100, 280), "vllm", 1, H200, 1.0,
       "a user's notebook starts fine-tuning on the serving GPU; time-slicing halves the engine's "
       "GPU time (a second process in NVML's list)")
def _():
    cfg = vcfg(LLAMA8B, H200, gmu=0.82)
    return serving(ServeTrace("gs_vllm_h200_notebook", cfg, [Traffic(CHAT, lambda t: 40, closed=True)], 280,
                              mods=Mods(gpu_share=step(100, 1, 0.48)),
                              intruders=[Intruder(0, 100, 400, 0.55, mem=18 * GiB, name="python3",
                                                  cmdline="/home/bob/.venv/bin/python -m ipykernel_launcher -f kernel-5c1e.json",
                                                  user="bob", pid=77812)],
                              seed=(21, 3000, 0.013, 230)))


@entry("gs_box8_h100_gpu4_job", "serving", "gpu_shared", (4,), (120, 300), "vllm", 8, H100, 1.0,
       "eight independent servers on an 8xH100 box; someone starts a training job on GPU 4 beside "
       "the pinned server")
def _():
    cfg = vcfg(LLAMA8B, H100, gpus=(4,), gmu=0.72)
    return serving(ServeTrace("gs_box8_h100_gpu4_job", cfg, [Traffic(CHAT, lambda t: 36, closed=True)], 300,
                              box=Box(H100, 8, cpus=112), mods=Mods(gpu_share=step(120, 1, 0.42, 5)),
                              gmu=0.72, others=others_box(4),
                              intruders=[Intruder(4, 120, 500, 0.6, mem=16 * GiB, name="python",
                                                  cmdline="python finetune.py --model mistral-7b --bs 4",
                                                  user="carol", pid=91233, ramp=5)],
                              seed=(70, 2800, 0.013, 230)))


def _plain_intruder_train(name, gpu, share_fn, intr):
    return TrainTrace(name, gpu, 1, 290, t_compute=0.42, batch=64, seq=0, counter="samples", workers=8,
                      t_load=lambda t: 0.9, gpu_share=lambda t, r: share_fn(t), intruders=[intr],
                      mem_per_gpu=38 * GiB)


@entry("gs_train_a100_inference_tenant", "training", "gpu_shared", (0,), (110, 290), "trainer", 1, A100, 1.0,
       "another tenant's inference server lands on the training GPU (no MIG, no MPS); samples/s halves")
def _():
    return training(_plain_intruder_train(
        "gs_train_a100_inference_tenant", A100, step(110, 1, 0.5),
        Intruder(0, 110, 400, 0.5, sm=0.7, tensor=0.2, dram=0.5, mem=22 * GiB, name="tritonserver",
                 cmdline="/opt/tritonserver/bin/tritonserver --model-repository=/models", user="dave", pid=66120)))


# =============================================================== spec_decode_rejected
@entry("sd_vllm_h100_eagle_collapse", "serving", "spec_decode_rejected", None, (110, 300), "vllm", 1, H100, 1.0,
       "EAGLE-3 drafts 3 tokens; traffic switches to a language the draft head never saw and acceptance "
       "drops from 0.72 to 0.1: each step verifies 4 tokens to keep ~1")
def _():
    cfg = vcfg(LLAMA8B, H100, spec_k=3, draft_ms=0.9)
    return serving(ServeTrace("sd_vllm_h100_eagle_collapse", cfg, [Traffic(CHAT, lambda t: 40, closed=True)], 300,
                              mods=Mods(accept=step(110, 0.72, 0.10)), seed=(30, 4200, 0.011, 230)))


@entry("sd_sglang_h200_eagle_drift", "serving", "spec_decode_rejected", None, (120, 300), "sglang", 1, H200, 1.0,
       "SGLang EAGLE (4 draft tokens): acceptance drifts from 0.75 to 0.15 over a minute as a new "
       "client's code-completion traffic takes over")
def _():
    cfg = vcfg(QWEN7B, H200, kind="sglang", gmu=0.88, spec_k=4, draft_ms=0.8)
    return serving(ServeTrace("sd_sglang_h200_eagle_drift", cfg, [Traffic(CHAT, lambda t: 36, closed=True)], 300,
                              mods=Mods(accept=step(95, 0.75, 0.15, 50)), seed=(14, 4800, 0.009, 230)))


@entry("sd_llamacpp_l40s_draft", "serving", "spec_decode_rejected", None, (100, 280), "llamacpp", 1, L40S, 1.0,
       "llama-server with a 1B draft model (8 drafts): a prompt-template change makes drafts miss; "
       "acceptance 0.65 -> 0.08, tokens/s falls")
def _():
    cfg = EngineCfg("llamacpp", LLAMA8B_Q8, L40S, kv_pool_tokens=65536, max_seqs=4, budget=2048, spec_k=8,
                    draft_ms=1.1, host_ms=0.8, overlap=0.0)
    return serving(ServeTrace("sd_llamacpp_l40s_draft", cfg,
                              [Traffic(C("chat", 600, 300, mt=1024, think_s=2.0), lambda t: 4, closed=True)], 280,
                              mods=Mods(accept=step(100, 0.65, 0.08)), seed=(70, 150, 0.02, 300)))


# =============================================================== host_cpu_contention
@entry("hc_vllm_h100_noisy_build", "serving", "host_cpu_contention", None, (100, 280), "vllm", 1, H100, 1.0,
       "a neighbour container starts make -j64 on a 32-core host; the engine core thread gets ~45% of the "
       "CPU it needs (PSI, run queue, involuntary switches up)")
def _():
    cfg = vcfg(LLAMA8B, H100, host_ms=4.0)
    return serving(ServeTrace("hc_vllm_h100_noisy_build", cfg, [Traffic(CHAT, lambda t: 40, closed=True)], 280,
                              box=Box(H100, 1, cpus=32), mods=Mods(cpu_share=step(100, 1, 0.28, 8)),
                              hogs=[Hog(100, 400, 30, 0.62, 48, invol=900, ramp=8)], seed=(40, 3000, 0.013, 230)))


@entry("hc_train_h200_cfs_quota", "training", "host_cpu_contention", None, (120, 300), "trainer", 1, H200, 1.0,
       "a training pod's CPU quota is eaten by a log-shipping sidecar; the launch thread and loader "
       "workers are throttled, GPU idles between kernels")
def _():
    return training(TrainTrace("hc_train_h200_cfs_quota", H200, 1, 300, t_compute=0.30, launches=20000, launch_us=9,
                               batch=8, seq=4096, workers=6, t_load=lambda t: 0.8,
                               cpu_share=step(120, 1, 0.35, 6), cpus=48,
                               hogs=[Hog(120, 400, 6, 0.35, 10, invol=600, ramp=6)]))


@entry("hc_sglang_h100_tp4_hogs", "serving", "host_cpu_contention", None, (90, 270), "sglang", 4, H100, 1.0,
       "CPU hogs pinned onto the cores of SGLang's TP4 schedulers: the schedulers get a third of a core, "
       "GPU-Util falls to ~50% and tokens/s halves")
def _():
    cfg = vcfg(LLAMA70B, H100, tp=4, kind="sglang", gmu=0.88, host_ms=6.0, host_ms_per_seq=0.03)
    return serving(ServeTrace("hc_sglang_h100_tp4_hogs", cfg, [Traffic(CHAT, lambda t: 48, closed=True)], 270,
                              box=Box(H100, 4, cpus=64), mods=Mods(cpu_share=step(90, 1, 0.33)),
                              cores=(8, 9, 10, 11, 12, 13, 14, 15),
                              hogs=[Hog(90, 400, 8, 0.8, 24, invol=1500)], seed=(80, 1500, 0.03, 230)))


# =============================================================== host_launch_jitter (eBPF on)
@entry("hj_vllm_h100_1b_gc_pauses", "serving", "host_launch_jitter", None, (100, 280), "vllm", 1, H100, 1.0,
       "a 1B model is launch-bound; after a config change the engine thread hits GC/page-fault pauses: "
       "3% of launches take ~6 ms (eBPF tails), the GPU idles between steps")
def _():
    view, gap = launch_pair(100, 0.03, 6.0, 40)
    cfg = vcfg(LLAMA1B, H100, host_ms=2.5)
    return serving(ServeTrace("hj_vllm_h100_1b_gc_pauses", cfg, [Traffic(CHAT, lambda t: 48, closed=True)], 280,
                              mods=Mods(launch_gap_ms=gap), launch=view, seed=(22, 6000, 0.006, 230)))


@entry("hj_train_h100_gil_logger", "training", "host_launch_jitter", None, (120, 300), "trainer", 1, H100, 1.0,
       "an eager PyTorch loop: a metrics thread starts holding the GIL in bursts, 1% of kernel launches "
       "wait ~4 ms, the GPU starves between launches")
def _():
    view, _ = launch_pair(120, 0.004, 4.0, 25)
    return training(TrainTrace("hj_train_h100_gil_logger", H100, 1, 300, t_compute=0.12, launches=12000,
                               launch_us=6.0, batch=16, seq=2048, workers=6, t_load=lambda t: 0.6,
                               launch_tail=view))


@entry("hj_sglang_h200_irq_core", "serving", "host_launch_jitter", None, (110, 290), "sglang", 1, H200, 1.0,
       "NIC interrupts are steered onto the scheduler's core: its launches are preempted (off-CPU "
       "switches, launch tails ~2.5 ms); PSI and run queue stay calm")
def _():
    view, gap = launch_pair(110, 0.06, 2.5, 600)
    cfg = vcfg(QWEN7B, H200, kind="sglang", gmu=0.88)
    return serving(ServeTrace("hj_sglang_h200_irq_core", cfg, [Traffic(CHAT, lambda t: 40, closed=True)], 290,
                              mods=Mods(launch_gap_ms=gap), launch=view, seed=(15, 4500, 0.009, 230)))


# =============================================================== tiny_kernels
@entry("tk_train_h200_nan_hooks", "training", "tiny_kernels", None, (110, 300), "trainer", 1, H200, 1.0,
       "debug hooks (isfinite checks on every tensor) are switched on: 150k tiny kernels a step keep "
       "GPU-Util at ~99% while SM activity collapses and tokens/s halves")
def _():
    return training(TrainTrace("tk_train_h200_nan_hooks", H200, 1, 300, t_compute=0.5, launches=3000, launch_us=5,
                               batch=8, seq=4096, workers=6, t_load=lambda t: 0.9,
                               tiny=lambda t: 150000 if t >= 110 else 0, tiny_us=3.4, tiny_host_us=1.0))


@entry("tk_train_h100_unfused_optimizer", "training", "tiny_kernels", None, (100, 280), "trainer", 1, H100, 1.0,
       "a vision job's optimizer loses its fused/foreach path: 60k per-parameter micro-kernels a step, "
       "busy GPU with ~5% SM, samples/s -55%")
def _():
    return training(TrainTrace("tk_train_h100_unfused_optimizer", H100, 1, 280, t_compute=0.24, launches=1800,
                               launch_us=5, batch=256, seq=0, counter="samples", workers=10,
                               t_load=lambda t: 2.0, tiny=lambda t: 60000 if t >= 100 else 0, tiny_us=5.0,
                               tiny_host_us=1.1))


@entry("tk_ddp4_h100_grad_clip", "multi-gpu", "tiny_kernels", None, (120, 300), "trainer", 4, H100, 2.0,
       "a per-parameter gradient-norm loop is added to a 4-GPU DDP job: every rank runs 80k tiny "
       "kernels a step (2 s ticks)")
def _():
    return training(TrainTrace("tk_ddp4_h100_grad_clip", H100, 4, 300, tick=2.0, t_compute=0.55, launches=3000,
                               launch_us=5, batch=8, seq=4096, t_load=lambda t: 0.8,
                               tiny=lambda t: 80000 if t >= 120 else 0, tiny_us=4.0, tiny_host_us=1.0))


# =============================================================== throttling
def _thermal(start, clk, reasons, r_from, r_to, r_t0, r_ramp, gpu_idx=0):
    def forced(gpus, n, tick):
        g = gpus[gpu_idx]
        for k in range(n):
            t = (k + 0.5) * tick
            g.r_th[k] = r_from + (r_to - r_from) * smooth_step(t, r_t0, r_ramp)
            if t >= start:
                g.clk_factor[k] = clk
                g.forced_reasons[k] = reasons
    return forced


@entry("th_vllm_h100_thermal", "serving", "throttling", (0,), (135, 300), "vllm", 1, H100, 1.0,
       "a failed chassis fan: the GPU heats to ~87 C and the driver cuts clocks to ~60% (thermal, HW "
       "slowdown flags); a prefill-heavy workload loses a third of its throughput")
def _():
    cfg = vcfg(LLAMA8B, H100, budget=8192)
    return serving(ServeTrace("th_vllm_h100_thermal", cfg,
                              [Traffic(C("chat", 2500, 150, mt=512, think_s=0.6), lambda t: 48, closed=True)], 300,
                              mods=Mods(clk=step(135, 1, 0.6)),
                              forced=_thermal(135, 0.6, ("hw slowdown", "thermal (sw)"), 0.041, 0.135, 85, 45),
                              seed=(19, 2200, 0.018, 150)))


@entry("th_train8_h200_power_brake", "multi-gpu", "throttling", None, (120, 215), "trainer", 8, H200, 1.0,
       "a rack power event asserts the power brake on all eight GPUs for 95 s: clocks to ~35%, samples/s "
       "-55%, then recovery")
def _():
    def forced(gpus, n, tick):
        for g in gpus:
            for k in range(n):
                t = (k + 0.5) * tick
                if 120 <= t < 215:
                    g.clk_factor[k] = 0.35
                    g.forced_reasons[k] = ("power brake", "hw slowdown")
    return training(TrainTrace("th_train8_h200_power_brake", H200, 8, 300, t_compute=0.7, batch=4, seq=8192,
                               t_load=lambda t: 0.8, clk=lambda t, r: 0.35 if 120 <= t < 215 else 1.0,
                               forced=forced, mem_per_gpu=118 * GiB))


@entry("th_box8_h100_gpu6_inlet", "serving", "throttling", (6,), (130, 300), "vllm", 8, H100, 1.0,
       "eight independent servers; GPU 6's inlet is blocked, it heats and throttles (thermal) while its "
       "neighbours are fine; the pinned server on GPU 6 slows")
def _():
    cfg = vcfg(LLAMA8B, H100, gpus=(6,), gmu=0.9)
    return serving(ServeTrace("th_box8_h100_gpu6_inlet", cfg,
                              [Traffic(C("chat", 2000, 180, mt=512, think_s=0.7), lambda t: 40, closed=True)], 300,
                              box=Box(H100, 8, cpus=112), mods=Mods(clk=step(130, 1, 0.55)),
                              forced=_thermal(130, 0.55, ("thermal (sw)",), 0.041, 0.15, 80, 50, gpu_idx=6),
                              others=others_box(6, seed=3), seed=(50, 2200, 0.018, 180)))


# =============================================================== collective_straggler
@entry("cs_ddp8_h100_slow_gpu5", "multi-gpu", "collective_straggler", (5,), (120, 300), "trainer", 8, H100, 1.0,
       "in 8-GPU DDP, GPU 5 drops to ~74% clocks with no throttle reason (a degraded board); the other "
       "seven spin in the all-reduce: busy, few SMs")
def _():
    def forced(gpus, n, tick):
        for k in range(n):
            if (k + 0.5) * tick >= 120:
                gpus[5].clk_factor[k] = 0.74
    return training(TrainTrace("cs_ddp8_h100_slow_gpu5", H100, 8, 300, t_compute=0.62, batch=8, seq=4096,
                               t_load=lambda t: 0.7, clk=lambda t, r: 0.74 if (r == 5 and t >= 120) else 1.0,
                               forced=forced))


@entry("cs_fsdp4_h200_rank2_imbalance", "multi-gpu", "collective_straggler", (2,), (100, 280), "trainer", 4, H200, 1.0,
       "FSDP on 4xH200 without sequence packing: rank 2's shard of the data has long documents, most steps "
       "it computes ~60% longer and the others wait in reduce-scatter")
def _():
    r = rng_for("cs_fsdp4_h200_rank2_imbalance", "imb")
    draws = [r.random() for _ in range(5000)]
    def imb(t, rank):
        if rank != 2 or t < 100:
            return 0.0
        return 0.65 if draws[int(t * 3) % 5000] < 0.7 else 0.1
    return training(TrainTrace("cs_fsdp4_h200_rank2_imbalance", H200, 4, 280, t_compute=0.8, batch=4, seq=8192,
                               t_load=lambda t: 0.9, imbalance=imb, fsdp=True, t_comm=0.15,
                               mem_per_gpu=121 * GiB))


@entry("cs_vllm_tp8_h200_hot_expert", "multi-gpu", "collective_straggler", (3,), (110, 290), "vllm", 8, H200, 1.0,
       "Mixtral-8x22B on 8xH200: traffic shifts to a domain whose tokens route to experts on GPU 3; it "
       "computes ~60% longer per step while the other ranks wait in the collective")
def _():
    cfg = vcfg(MIXTRAL, H200, tp=8, gmu=0.9, host_ms=3.0)
    return serving(ServeTrace("cs_vllm_tp8_h200_hot_expert", cfg, [Traffic(CHAT, lambda t: 64, closed=True)], 290,
                              mods=Mods(straggle=step(110, 0, 0.6), straggler=3), seed=(60, 2500, 0.02, 230)))


# =============================================================== input_stall
@entry("is_h100_jpeg_decode", "training", "input_stall", None, (100, 280), "trainer", 1, H100, 1.0,
       "a vision job switches to full-resolution JPEGs: 8 loader workers cannot decode fast enough, the "
       "GPU waits in a saw-tooth, samples/s -60%")
def _():
    return training(TrainTrace("is_h100_jpeg_decode", H100, 1, 280, t_compute=0.22, batch=256, seq=0,
                               counter="samples", workers=8, t_load=step(100, 0.9, 4.6), load_cpu=1.0,
                               launches=1500, mem_per_gpu=44 * GiB))


@entry("is_a100x8_nfs_stall", "multi-gpu", "input_stall", None, (110, 290), "trainer", 8, A100, 1.0,
       "8xA100 DDP reads shards from NFS; the filer slows down and every rank's loader waits on I/O "
       "(workers idle in D state, little CPU)")
def _():
    return training(TrainTrace("is_a100x8_nfs_stall", A100, 8, 290, t_compute=0.9, batch=8, seq=2048, workers=4,
                               t_load=step(110, 1.2, 9.0), load_cpu=0.12, mem_per_gpu=70 * GiB))


@entry("is_h200x4_shard_fetch", "multi-gpu", "input_stall", None, (90, 280), "trainer", 4, H200, 2.0,
       "a streaming dataset fetches new shards from object storage every ~40 s; for ~15 s each time the "
       "loaders starve and all four GPUs idle (2 s ticks)")
def _():
    def tl(t):
        if t < 90:
            return 0.5
        return 12.0 if ((t - 90) % 40) < 16 else 0.5
    return training(TrainTrace("is_h200x4_shard_fetch", H200, 4, 280, tick=2.0, t_compute=0.6, batch=8, seq=4096,
                               workers=4, t_load=tl, load_cpu=0.2, mem_per_gpu=96 * GiB))


# =============================================================== healthy look-alikes
def H(name, family, engine, gpus, gpu, tick, note):
    return entry(name, family, None, None, None, engine, gpus, gpu, tick, note)


@H("h_demand_drop_vllm_h100", "healthy", "vllm", 1, H100, 1.0,
   "evening: traffic falls to a tenth over 30 s; tokens/s and GPU-Util fall, latency improves")
def _():
    cfg = vcfg(LLAMA8B, H100)
    return serving(ServeTrace("h_demand_drop_vllm_h100", cfg, [Traffic(C("chat", 800, 250), step(120, 10, 1.0, 30))],
                              300, seed=(30, 2800, 0.013, 250)))


@H("h_restart_vllm_h200", "healthy", "vllm", 1, H200, 1.0,
   "the server is restarted to load a new model revision: endpoint gone 55 s, VRAM empties and refills, "
   "counters restart from zero, traffic resumes")
def _():
    cfg = vcfg(LLAMA8B, H200)
    return serving(ServeTrace("h_restart_vllm_h200", cfg, [Traffic(CHAT, lambda t: 32, closed=True)], 300,
                              mods=Mods(up=lambda t: not (120 <= t < 175)), restart=(120, 175),
                              seed=(50, 3000, 0.012, 230)))


@H("h_long_request_growing_vllm_h100", "healthy", "vllm", 1, H100, 1.0,
   "clients grow 16 -> 48 over three minutes; one 12k-token generation runs alongside without "
   "hurting anyone")
def _():
    long = C("long", 3000, 12000, ps=0.05, os=0.02, mt=16384)
    cfg = vcfg(LLAMA8B, H100)
    return serving(ServeTrace("h_long_request_growing_vllm_h100", cfg,
                              [Traffic(CHAT, step(40, 16, 48, 200), closed=True), Traffic(long, None, at=(80.0,))],
                              300, seed=(10, 1800, 0.012, 230)))


@H("h_bursty_sglang_h100", "healthy", "sglang", 1, H100, 1.0,
   "bursty batch clients: 20-40 s bursts at 14 req/s between quiet spells at 2 req/s")
def _():
    r = rng_for("h_bursty_sglang_h100", "bursts")
    edges, t, on = [], 0.0, False
    while t < 400:
        d = r.uniform(20, 40)
        edges.append((t, t + d, on))
        t += d
        on = not on
    def lvl(x):
        for a, b, o in edges:
            if a <= x < b:
                return 14.0 if o else 2.0
        return 2.0
    cfg = vcfg(QWEN7B, H100, kind="sglang", gmu=0.88)
    return serving(ServeTrace("h_bursty_sglang_h100", cfg, [Traffic(C("chat", 700, 220), lvl)], 300,
                              seed=(25, 2000, 0.01, 230)))


@H("h_prefix_cache_vllm_h200", "healthy", "vllm", 1, H200, 1.0,
   "a shared 6k-token system prompt: ~90% of prompt tokens are prefix-cache hits, prompt tokens/s is "
   "huge while the GPU does little prefill")
def _():
    cfg = vcfg(LLAMA8B, H200)
    return serving(ServeTrace("h_prefix_cache_vllm_h200", cfg,
                              [Traffic(C("sys", 6500, 200, ps=0.1, cached_frac=0.93, think_s=1.0), lambda t: 40,
                                       closed=True)], 240, seed=(44, 3000, 0.012, 200)))


@H("h_train_ckpt_h100x8", "healthy", "trainer", 8, H100, 1.0,
   "8-GPU DDP writing a checkpoint every 90 s: ~12 s of idle GPUs and frozen counters each time")
def _():
    ck = {}
    def pause(t):
        slot = int(t // 90)
        if slot >= 1 and slot not in ck and t >= slot * 90:
            ck[slot] = True
            return ("ckpt", 12.0)
        return None
    return training(TrainTrace("h_train_ckpt_h100x8", H100, 8, 300, t_compute=0.62, batch=8, seq=4096,
                               t_load=lambda t: 0.7, pause=pause))


@H("h_train_eval_h200", "healthy", "trainer", 1, H200, 1.0,
   "every ~100 s the job evaluates for 20 s: the training counter stops while the GPU runs forward passes")
def _():
    ev = {}
    def pause(t):
        slot = int(t // 100)
        if slot >= 1 and slot not in ev:
            ev[slot] = True
            return ("eval", 20.0)
        return None
    return training(TrainTrace("h_train_eval_h200", H200, 1, 300, t_compute=0.45, batch=8, seq=4096,
                               t_load=lambda t: 0.7, pause=pause))


def plain(name, gpu, duration, tick, busy, sm, tensor, dram, mem, cmd, n_gpus=1, cpu=1.0):
    rng = rng_for(name, "sim")
    n = int(round(duration / tick))
    start_wall, _ = _time_base(name)
    gpus = [GpuState(gpu, i, n, tick, name) for i in range(n_gpus)]
    procs = []
    for i, g in enumerate(gpus):
        for k in range(n):
            t = k * tick
            b = busy(t)
            g.add(t, t + tick, b, sm(t) * b, tensor(t) * b, dram(t) * b)
        g.mem_used[:] = mem
        p = Proc(40100 + i, cmd.split()[0].split("/")[-1], cmd, (i,), n, start_wall - 1800, user="perf")
        p.mem[:] = mem
        p.cpu[:] = cpu
        procs.append(p)
    host = Host(64, n, tick, rng_for(name, "host"))
    host.busy_cores += cpu * n_gpus
    pinned = Pinned(cmd[:60], (40100,), n, tuple(range(64)))
    for i in range(n_gpus):
        pinned.thread(40100 + i, 40100 + i, cmd.split()[0].split("/")[-1][:15], cpu, 1500)
    pinned.tree_pids = [tuple(40100 + i for i in range(n_gpus))] * n
    return assemble(name, n, tick, gpus, procs, host, pinned, None)


@H("h_powercap_h200_gemm", "healthy", "none", 1, H200, 1.0,
   "a bf16 GEMM benchmark (no engine) holds an H200 at its 700 W cap: 'power cap' set, clocks 1.5-1.9 "
   "GHz, ~760 TFLOP/s: healthy")
def _():
    return plain("h_powercap_h200_gemm", H200, 200, 1.0, lambda t: 0.995, lambda t: 0.9, lambda t: 0.78,
                 lambda t: 0.2, 22 * GiB, "/opt/bench/bin/gemm_bench --dtype bf16 --m 8192 --n 8192 --k 8192 --loop")


@H("h_small_model_hostbound_vllm_h100", "healthy", "vllm", 1, H100, 1.0,
   "a 1B model on an H100 is launch/host-bound by nature: GPU-Util ~50-65% with steady tokens/s")
def _():
    cfg = vcfg(LLAMA1B, H100, host_ms=3.0)
    return serving(ServeTrace("h_small_model_hostbound_vllm_h100", cfg, [Traffic(CHAT, lambda t: 40, closed=True)],
                              240, seed=(60, 6000, 0.006, 230)))


@H("h_idle_full_vram_vllm_h100", "healthy", "vllm", 1, H100, 1.0,
   "an idle vLLM server: 90% of VRAM held (KV pool pre-reserved), no requests but the odd health check")
def _():
    cfg = vcfg(LLAMA8B, H100)
    return serving(ServeTrace("h_idle_full_vram_vllm_h100", cfg, [Traffic(C("ping", 20, 8, mt=16), lambda t: 0.05)],
                              200, seed=(70, 300, 0.012, 200)))


@H("h_onoff_clients_vllm_a100", "healthy", "vllm", 1, A100, 1.0,
   "a handful of interactive users come and go: tokens/s jumps between 0 and ~2k every few seconds")
def _():
    r = rng_for("h_onoff_clients_vllm_a100", "users")
    lv = [int(r.integers(0, 9)) for _ in range(100)]
    cfg = vcfg(LLAMA8B, A100)
    return serving(ServeTrace("h_onoff_clients_vllm_a100", cfg,
                              [Traffic(C("chat", 500, 300, think_s=4.0), lambda t: lv[int(t // 7) % 100], closed=True)],
                              240, seed=(90, 600, 0.018, 300)))


@H("h_slow_scrapes_vllm_h100", "healthy", "vllm", 1, H100, 1.0,
   "steady serving while the metrics endpoint is slow: some scrapes arrive late (carried with an age), "
   "a few time out")
def _():
    def scrape(k, r):
        x = r.random()
        if k > 5 and x < 0.06:
            return "timeout"
        if k > 5 and x < 0.2:
            return ("slow", k - 1, round(r.uniform(0.6, 1.9), 3))
        return "ok"
    cfg = vcfg(LLAMA8B, H100)
    return serving(ServeTrace("h_slow_scrapes_vllm_h100", cfg, [Traffic(CHAT, lambda t: 36, closed=True)], 240,
                              scrape=scrape, seed=(35, 3000, 0.013, 230)))


@H("h_box8_independent_h100", "healthy", "vllm", 8, H100, 1.0,
   "eight independent servers on one box with different loads; the pinned one (GPU 2) is lightly used")
def _():
    cfg = vcfg(LLAMA8B, H100, gpus=(2,))
    return serving(ServeTrace("h_box8_independent_h100", cfg, [Traffic(CHAT, lambda t: 10, closed=True)], 240,
                              box=Box(H100, 8, cpus=112), others=others_box(2, seed=1), seed=(80, 900, 0.011, 230)))


@H("h_tp8_h200_mixtral_day", "healthy", "vllm", 8, H200, 2.0,
   "Mixtral-8x22B TP8 with traffic drifting 40 -> 80 clients; all ranks in step (2 s ticks)")
def _():
    cfg = vcfg(MIXTRAL, H200, tp=8, host_ms=3.0)
    return serving(ServeTrace("h_tp8_h200_mixtral_day", cfg, [Traffic(CHAT, step(30, 40, 80, 200), closed=True)],
                              300, tick=2.0, seed=(100, 2500, 0.02, 230)))


@H("h_ddp8_h100_steady", "healthy", "trainer", 8, H100, 1.0,
   "8-GPU DDP at steady state: small step-to-step jitter, counters move each step")
def _():
    r = rng_for("h_ddp8_h100_steady", "jit")
    j = [r.uniform(0, 0.05) for _ in range(4000)]
    return training(TrainTrace("h_ddp8_h100_steady", H100, 8, 240, t_compute=0.62, batch=8, seq=4096,
                               t_load=lambda t: 0.7, imbalance=lambda t, rk: j[(int(t * 5) + rk * 13) % 4000]))


@H("h_llamacpp_l40s_single_user", "healthy", "llamacpp", 1, L40S, 1.0,
   "llama-server on an L40S with one or two chat users: low GPU-Util between turns, no GPM")
def _():
    cfg = EngineCfg("llamacpp", LLAMA8B_Q8, L40S, kv_pool_tokens=65536, max_seqs=4, budget=2048, host_ms=0.8,
                    overlap=0.0)
    return serving(ServeTrace("h_llamacpp_l40s_single_user", cfg,
                              [Traffic(C("chat", 500, 350, think_s=8.0), lambda t: 2, closed=True)], 240,
                              seed=(120, 40, 0.02, 300)))


@H("h_sglang_rag_steady_h200", "healthy", "sglang", 1, H200, 1.0,
   "a RAG service that always sends 8k-token prompts: prefill-heavy by design, steady latency")
def _():
    cfg = vcfg(QWEN7B, H200, kind="sglang", gmu=0.88, budget=16384)
    return serving(ServeTrace("h_sglang_rag_steady_h200", cfg,
                              [Traffic(C("rag", 8000, 200, ps=0.2, think_s=1.0), lambda t: 24, closed=True)], 240,
                              seed=(60, 900, 0.012, 200)))


@H("h_a100_train_grad_accum", "healthy", "trainer", 1, A100, 1.0,
   "gradient accumulation over 4 micro-batches: the step counter moves every ~3 s, so per-tick "
   "samples/s is a saw-tooth (A100, no GPM)")
def _():
    return training(TrainTrace("h_a100_train_grad_accum", A100, 1, 240, t_compute=2.9, batch=32, seq=2048,
                               t_load=lambda t: 2.0, workers=8, launches=12000, mem_per_gpu=71 * GiB))


@H("h_kv_high_vllm_h100", "healthy", "vllm", 1, H100, 1.0,
   "a long-context service that keeps the KV pool 75-90% full with no preemptions and no queue")
def _():
    cfg = vcfg(LLAMA8B, H100, max_seqs=40)
    return serving(ServeTrace("h_kv_high_vllm_h100", cfg,
                              [Traffic(C("ctx", 8000, 600, ps=0.15, os=0.3, think_s=0.5), lambda t: 40, closed=True)],
                              240, seed=(20, 1500, 0.02, 600)))


@H("h_spec_steady_vllm_h200", "healthy", "vllm", 1, H200, 1.0,
   "EAGLE speculative decoding whose acceptance wanders 0.55-0.75 with the prompt mix: normal")
def _():
    cfg = vcfg(LLAMA8B, H200, spec_k=3, draft_ms=0.9)
    return serving(ServeTrace("h_spec_steady_vllm_h200", cfg, [Traffic(CHAT, lambda t: 40, closed=True)], 240,
                              mods=Mods(accept=lambda t: 0.65 + 0.1 * math.sin(t / 23)),
                              seed=(28, 4000, 0.011, 230)))


@H("h_tick5_vllm_h100_ramp", "healthy", "vllm", 1, H100, 5.0,
   "5 s ticks over ten minutes of morning ramp-up: 8 -> 56 clients")
def _():
    cfg = vcfg(LLAMA8B, H100)
    return serving(ServeTrace("h_tick5_vllm_h100_ramp", cfg, [Traffic(CHAT, step(60, 8, 56, 420), closed=True)],
                              600, tick=5.0, seed=(8, 1000, 0.011, 230)))


@H("h_b200_train_tick2", "healthy", "trainer", 1, B200, 2.0,
   "a B200 training job at steady state, 2 s ticks")
def _():
    return training(TrainTrace("h_b200_train_tick2", B200, 1, 240, tick=2.0, t_compute=0.35, batch=8, seq=8192,
                               t_load=lambda t: 0.6, sm=0.85, tensor=0.5, mem_per_gpu=150 * GiB))


@H("h_compile_warmup_trainer_h100", "healthy", "trainer", 1, H100, 1.0,
   "a job starts with 70 s of torch.compile: the main thread burns a core while the GPU idles, then "
   "training runs normally")
def _():
    return training(TrainTrace("h_compile_warmup_trainer_h100", H100, 1, 240, t_compute=0.4, batch=8, seq=4096,
                               t_load=lambda t: 0.7, warmup_s=70.0, start_step=0))


@H("h_benign_second_proc_h200", "healthy", "vllm", 1, H200, 1.0,
   "a monitoring sidecar opens a CUDA context on the serving GPU (600 MB, no kernels): two processes "
   "listed, nothing slows")
def _():
    cfg = vcfg(LLAMA8B, H200, gmu=0.85)
    return serving(ServeTrace("h_benign_second_proc_h200", cfg, [Traffic(CHAT, lambda t: 36, closed=True)], 240,
                              intruders=[Intruder(0, 90, 500, 0.0, sm=0, tensor=0, dram=0, mem=0.6 * GiB,
                                                  name="dcgm-exporter", cmdline="/usr/bin/dcgm-exporter -f /etc/dcgm/counters.csv",
                                                  user="root", pid=5521)],
                              seed=(40, 3000, 0.012, 230)))
