"""The tickets.  Each: what the customer ran, what happened, the quantity the window is
measured from.  Fault times are where the change was made; windows come from the physics."""

from __future__ import annotations

import math

from .job import Job, Profile
from .scenarios import (chat, clock_of, dram_of, env_series, finish, job_series, mean,
                        multipliers, other_tenant, pool_for, preempt_rate, ramp, rate,
                        shared_busy, start_wall, ticket, util_of, waste)
from .serve import Req, Serve
from .sim import GiB, World

POD = "inference/{}-7c9f{}"


def W(name, board, ngpu, tick=1.0, dur=360, cpus=64, **kw):
    return World(name, board, ngpu, tick, dur, start_wall(name), cpus=cpus, **kw)


def T(family, cause, engine, note, culprit=None):
    return dict(family=family, cause=cause, engine=engine, note=note, culprit_gpus=culprit)


def serving(w, kind, model, gpus, base, req, burst=0.25, diurnal=None, util=0.9, **kw):
    mult = multipliers(w, w.n * w.tick, burst, diurnal)
    pool = kw.pop("pool", None) or pool_for(w, model, len(gpus), util)
    return Serve(w, kind, model, gpus, pool, rate(mult, base), req, **kw)


def heavy_req(a, b, every, prompt, out, n, heavy, cached=0):
    """From a to b, one oversized request every ``every`` seconds (an eval harness)."""
    state = {"next": a}

    def extra(rng, t):
        if a <= t < b and t >= state["next"]:
            state["next"] = t + every * rng.uniform(0.8, 1.2)
            return Req(t, prompt, cached, out, n=n, heavy=heavy, max_tokens=out, tag="heavy")
        return None
    return extra


def long_prompts(a, b, share, plen, out=120, r=10.0):
    def extra(rng, t):
        if rng.random() < share * ramp(t, a, b, r):
            p = int(plen * rng.uniform(0.6, 1.4))
            return Req(t, p, 0, int(out * rng.uniform(0.5, 1.5)), max_tokens=512, tag="long")
        return None
    return extra


# =============================================================== oversized_request
@ticket
def s01_vllm_llama8b_h100_n8_logprobs():
    w = W("s01_vllm_llama8b_h100_n8_logprobs", "H100", 1, dur=360, cpus=32, pinned=True)
    e = serving(w, "vllm", "llama8b", [0], 9.0,
                chat(extra=heavy_req(140, 290, 9.0, 600, 256, 8, 0.05)), pod=POD.format("chat", "a"))
    tr = T("serving", "oversized_request", "vllm", "eval harness sends n=8, logprobs=20 requests one after another from t=140 s to 290 s; every co-scheduled request's step waits for the logprobs work")
    return finish(w, tr, lambda w: [s["heavy"] for s in e.stat], rel=0, absolute=0.25, workloads=[e], pin=e)


@ticket
def s02_sglang_qwen32b_h200x2_prompt_logprobs():
    w = W("s02_sglang_qwen32b_h200x2_prompt_logprobs", "H200", 2, dur=420, cpus=96)
    e = serving(w, "sglang", "qwen32b", [0, 1], 5.0,
                chat(prompt=1400, out=300, extra=heavy_req(150, 260, 14.0, 22000, 64, 4, 0.11)),
                burst=0.3)
    tr = T("serving", "oversized_request", "sglang", "a customer's scoring job asks return_logprob with top_logprobs_num=20 over 22k-token documents, n=4, every ~14 s from t=150 s; each stalls the batch")
    return finish(w, tr, lambda w: [s["heavy"] for s in e.stat], rel=0, absolute=0.25, workloads=[e])


@ticket
def s03_vllm_llama70b_h100x4_best_of():
    w = W("s03_vllm_llama70b_h100x4_best_of", "H100", 4, dur=400, cpus=128)
    e = serving(w, "vllm", "llama70b", [0, 1, 2, 3], 3.2,
                chat(prompt=1200, out=260, extra=heavy_req(130, 230, 20.0, 3000, 1800, 16, 0.035)))
    tr = T("serving", "oversized_request", "vllm", "one tenant sends n=16 sampling requests with max_tokens=1800 and logprobs (best-of reranking) from t=130 s; each holds 16 sequences and slows every step")
    return finish(w, tr, lambda w: [s["heavy"] for s in e.stat], rel=0, absolute=0.25, workloads=[e])


# =============================================================== prefill_interference
@ticket
def s04_vllm_llama8b_h200_rag_prefill():
    w = W("s04_vllm_llama8b_h200_rag_prefill", "H200", 1, dur=400, cpus=48, ebpf=True)
    e = serving(w, "vllm", "llama8b", [0], 10.0,
                chat(extra=long_prompts(150, 320, 0.22, 16000)), budget=8192)
    tr = T("serving", "prefill_interference", "vllm", "a RAG customer starts sending 10-22k-token uncached prompts at t=150 s; chunked prefill shares every step with the decodes, ITL p99 climbs")
    return finish(w, tr, lambda w: [s["pre_dec"] for s in e.stat], rel=0.0, absolute=0.1, workloads=[e])


def _prefill_share(w, e):
    out = []
    prev = 0.0
    for i in range(w.n):
        es = w.engine_samples[i]
        cur = es.prompt_tokens_total - (es.prompt_tokens_cached_total or 0) if es else prev
        out.append(max(0.0, cur - prev) / 40000.0)
        prev = cur
    return out


@ticket
def s05_sglang_qwen32b_h100x2_agentic_prefill():
    w = W("s05_sglang_qwen32b_h100x2_agentic_prefill", "H100", 2, dur=420, cpus=64, pinned=True)
    e = serving(w, "sglang", "qwen32b", [0, 1], 5.0,
                chat(prompt=1500, out=180, cached=0.6, extra=long_prompts(180, 330, 0.3, 9000, out=60)),
                burst=0.4, budget=8192)
    tr = T("serving", "prefill_interference", "sglang", "an agent framework rewrites its system prompt per turn from t=180 s: 6-13k-token prompts with no prefix-cache hits arrive among the chat decodes")
    return finish(w, tr, lambda w: [s["pre_dec"] for s in e.stat], rel=0.0, absolute=0.15, span=9, workloads=[e], pin=e)


@ticket
def s06_vllm_qwen7b_a100_prefill_moderate():
    w = W("s06_vllm_qwen7b_a100_prefill_moderate", "A100", 1, dur=360, cpus=32)
    e = serving(w, "vllm", "qwen7b", [0], 5.0,
                chat(prompt=700, out=200, extra=long_prompts(120, 280, 0.1, 12000)), budget=4096)
    tr = T("serving", "prefill_interference", "vllm", "summarisation traffic (8-17k-token prompts, ~12% of requests) added at t=120 s on an A100 with a 4096-token step budget; decodes share steps with prefill chunks")
    return finish(w, tr, lambda w: [s["pre_dec"] for s in e.stat], rel=0.0, absolute=0.25, span=9, workloads=[e])


# =============================================================== kv_pressure
@ticket
def s07_vllm_llama70b_h100x4_kv_preempt():
    w = W("s07_vllm_llama70b_h100x4_kv_preempt", "H100", 4, dur=420, cpus=128)
    def extra(rng, t):
        if rng.random() < 0.55 * ramp(t, 150, 330, 15):
            return Req(t, int(rng.uniform(3000, 7000)), 0, int(rng.uniform(1500, 3500)), max_tokens=4096)
    e = serving(w, "vllm", "llama70b", [0, 1, 2, 3], 3.0, chat(prompt=1000, out=250, extra=extra),
                util=0.80, max_seqs=256)
    tr = T("serving", "kv_pressure", "vllm", "gpu-memory-utilization 0.80; a long-form writing tenant (3-7k prompts, 1.5-3.5k outputs) arrives at t=150 s: the KV pool fills, vLLM preempts and recomputes, the queue grows")
    return finish(w, tr, lambda w: preempt_rate(w, e), rel=0, absolute=0.3, workloads=[e])


@ticket
def s08_sglang_qwen7b_l40s_retract():
    w = W("s08_sglang_qwen7b_l40s_retract", "L40S", 1, dur=360, cpus=32)
    def extra(rng, t):
        if rng.random() < 0.5 * ramp(t, 120, 290, 10):
            return Req(t, int(rng.uniform(2000, 6000)), 0, int(rng.uniform(800, 2000)), max_tokens=2048)
    e = serving(w, "sglang", "qwen7b", [0], 2.2, chat(prompt=600, out=180, extra=extra), pool=48000,
                max_seqs=64, container="docker:4be1c02a9f3e")
    tr = T("serving", "kv_pressure", "sglang", "L40S with a 7B model: long-document requests from t=120 s overflow the token pool; SGLang retracts running requests and re-queues them")
    return finish(w, tr, lambda w: preempt_rate(w, e), rel=0, absolute=0.3, workloads=[e])


@ticket
def s09_vllm_gemma27b_h200_kv_moderate():
    w = W("s09_vllm_gemma27b_h200_kv_moderate", "H200", 1, dur=400, cpus=48, pinned=True)
    def extra(rng, t):
        if rng.random() < 0.28 * ramp(t, 160, 330, 20):
            return Req(t, int(rng.uniform(6000, 12000)), 0, int(rng.uniform(1000, 2500)), max_tokens=3000)
    e = serving(w, "vllm", "gemma27b", [0], 4.0, chat(prompt=1200, out=260, extra=extra), util=0.72)
    tr = T("serving", "kv_pressure", "vllm", "gpu-memory-utilization 0.72 (left room for a sidecar); long-context traffic from t=160 s keeps the pool full and causes steady preemptions")
    return finish(w, tr, lambda w: preempt_rate(w, e), rel=0, absolute=0.3, workloads=[e], pin=e)


# =============================================================== gpu_shared
@ticket
def s10_vllm_llama8b_h100_shared_diffusion():
    w = W("s10_vllm_llama8b_h100_shared_diffusion", "H100", 1, dur=380, cpus=32)
    a, b = 150, 320
    e = serving(w, "vllm", "llama8b", [0], 10.0, chat())
    op = other_tenant(w, (0,), "python3", "python3 sdxl_batch.py --steps 30 --batch 4", 21 * GiB,
                      int(a / w.tick), int(b / w.tick), user="mlops")
    e.shared_fn = lambda g, t: 0.55 * ramp(t, a, b, 3)
    e.shared_proc = {0: op}
    tr = T("serving", "gpu_shared", "vllm", "a teammate's SDXL batch job was scheduled onto the same H100 at t=150 s (no MIG, time-slicing); it leaves at t=320 s")
    return finish(w, tr, lambda w: shared_busy(w, op, 0), rel=0, absolute=0.15, workloads=[e])


@ticket
def s11_ddp8_h100_notebook_on_gpu5():
    w = W("s11_ddp8_h100_notebook_on_gpu5", "H100", 8, tick=1.0, dur=420, cpus=192)
    a, b = 170, 360
    prof = Profile(step_s=0.82, units=8 * 8 * 4096, allreduce_s=0.06, host_s=0.12, launches=2400)
    j = Job(w, range(8), prof, cmdline="torchrun --nproc_per_node=8 pretrain.py --model 1.3b",
            counter="tokens", data_s=0.25, workers=6)
    op = other_tenant(w, (5,), "python3", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-7a1.json",
                      14 * GiB, int(a / w.tick), int(b / w.tick), user="jkim")
    j.shared_fn = lambda g, t: 0.45 * ramp(t, a, b, 4) if g == 5 else 0.0
    j.shared_proc = {5: op}
    tr = T("training", "gpu_shared", "trainer", "a notebook user got CUDA_VISIBLE_DEVICES=5 on the training box at t=170 s and runs a model eval loop on it; GPU 5 time-slices and its rank drags the DDP step", culprit=(5,))
    return finish(w, tr, lambda w: shared_busy(w, op, 5), rel=0, absolute=0.15, workloads=[j])


@ticket
def s12_vllm_qwen7b_l40s_shared_transcode():
    w = W("s12_vllm_qwen7b_l40s_shared_transcode", "L40S", 1, dur=360, cpus=32)
    a, b = 130, 300
    e = serving(w, "vllm", "qwen7b", [0], 4.0, chat(prompt=700, out=200))
    op = other_tenant(w, (0,), "ffmpeg", "ffmpeg -hwaccel cuda -i rtsp://cam/… -vf scale_cuda=1920:1080,… -c:v h264_nvenc",
                      3 * GiB, int(a / w.tick), int(b / w.tick), user="media")
    e.shared_fn = lambda g, t: 0.4 * ramp(t, a, b, 3)
    e.shared_proc = {0: op}
    tr = T("serving", "gpu_shared", "vllm", "another tenant's GPU video pipeline (CUDA filters + NVENC) lands on the same L40S at t=130 s; the model server's steps time-slice with it")
    return finish(w, tr, lambda w: shared_busy(w, op, 0), rel=0, absolute=0.15, workloads=[e])


# =============================================================== spec_decode_rejected
def accept(base, low, a, b, r=15):
    return lambda t: base - (base - low) * ramp(t, a, b, r)


@ticket
def s13_vllm_llama70b_h100x4_eagle_collapse():
    w = W("s13_vllm_llama70b_h100x4_eagle_collapse", "H100", 4, dur=400, cpus=128)
    e = serving(w, "vllm", "llama70b", [0, 1, 2, 3], 2.5, chat(prompt=900, out=300),
                spec=(4, accept(0.74, 0.16, 150, 340), 1.6e9))
    tr = T("serving", "spec_decode_rejected", "vllm", "EAGLE head trained on English chat; from t=150 s most traffic is a customer's Japanese/code mix: acceptance per draft token falls from ~0.74 to ~0.16 and the draft work is wasted")
    return finish(w, tr, waste, rel=0, absolute=0.2, workloads=[e])


@ticket
def s14_sglang_qwen32b_h200x2_spec_drop():
    w = W("s14_sglang_qwen32b_h200x2_spec_drop", "H200", 2, dur=380, cpus=96)
    e = serving(w, "sglang", "qwen32b", [0, 1], 4.0, chat(prompt=1100, out=260),
                spec=(3, accept(0.68, 0.22, 140, 300), 1.0e9))
    tr = T("serving", "spec_decode_rejected", "sglang", "speculative decoding with a small draft model; a client switched to temperature 1.3 sampling at t=140 s and acceptance collapsed")
    return finish(w, tr, waste, rel=0, absolute=0.2, workloads=[e])


@ticket
def s15_llamacpp_l40s_draft_rejected():
    w = W("s15_llamacpp_l40s_draft_rejected", "L40S", 1, dur=360, cpus=16)
    e = serving(w, "llamacpp", "llama3b_q4", [0], 1.2, chat(prompt=500, out=250, cached=0.5),
                spec=(4, accept(0.62, 0.12, 120, 290), 0.4e9), max_seqs=4, budget=2048,
                base_over=0.0009, per_seq_over=1e-5, overlap=0.0)
    tr = T("serving", "spec_decode_rejected", "llamacpp", "llama-server with a 0.5B draft model (--draft 4); a user's structured-output workload from t=120 s: per-position acceptance falls from ~0.62 to ~0.12, the accepted share of draft tokens from ~35% to ~3%")
    return finish(w, tr, waste, rel=0, absolute=0.2, workloads=[e])


# =============================================================== memory_bandwidth
@ticket
def s16_vllm_llama8b_h200_long_context_decode():
    w = W("s16_vllm_llama8b_h200_long_context_decode", "H200", 1, dur=400, cpus=48)
    def extra(rng, t):
        if rng.random() < 0.35 * ramp(t, 150, 330, 30):
            p = int(rng.uniform(14000, 30000))
            return Req(t, p, int(p * 0.97) // 16 * 16, int(rng.uniform(150, 400)), max_tokens=512)
    e = serving(w, "vllm", "llama8b", [0], 8.0, chat(prompt=800, out=260, extra=extra), max_seqs=256)
    tr = T("serving", "memory_bandwidth", "vllm", "a code-assistant customer moves to 14-30k-token repository contexts (prefix-cached, so prefill is cheap) from t=150 s; every decode step reads far more KV: DRAM-bound, ITL up, tokens/s down")
    return finish(w, tr, lambda w: [s["kvshare"] for s in e.stat], rel=0, absolute=0.2, workloads=[e])


@ticket
def s17_sglang_qwen3moe_h200_kv_reads():
    w = W("s17_sglang_qwen3moe_h200_kv_reads", "H200", 1, dur=380, cpus=32)
    def extra(rng, t):
        if rng.random() < 0.3 * ramp(t, 140, 320, 25):
            p = int(rng.uniform(20000, 40000))
            return Req(t, p, int(p * 0.95) // 16 * 16, int(rng.uniform(150, 450)), max_tokens=512)
    e = serving(w, "sglang", "qwen3moe", [0], 9.0, chat(prompt=700, out=240, extra=extra), max_seqs=192)
    tr = T("serving", "memory_bandwidth", "sglang", "an MoE model serving chat; a batch of long-context multi-turn sessions (20-40k cached tokens each, ~30% of requests) from t=140 s makes decode KV-read bound")
    return finish(w, tr, lambda w: [s["kvshare"] for s in e.stat], rel=0, absolute=0.2, workloads=[e])


# =============================================================== host_cpu_contention
@ticket
def s18_vllm_pod_quota_sidecar():
    w = W("s18_vllm_pod_quota_sidecar", "H100", 1, dur=380, cpus=96, pinned=True)
    a, b = 150, 320
    def cpu(i):
        x = ramp(w.t(i), a, b, 5)
        return dict(phi=1 - 0.6 * x, quota=2.0, psi=0.02)
    e = serving(w, "vllm", "llama8b", [0], 10.0, chat(), cpu_fn=cpu, pod=POD.format("llm", "b"))
    tr = T("serving", "host_cpu_contention", "vllm", "pod limit 2 CPUs; at t=150 s a log-shipping sidecar in the same pod starts re-parsing its backlog and eats the quota: cpu.max throttling, the engine core gets ~40% of the CPU it wants (host PSI stays low)")
    return finish(w, tr, lambda w: [1 - x for x in env_series(w, cpu, "phi", 1.0)], rel=0, absolute=0.2, workloads=[e], pin=e)


@ticket
def s19_sglang_host_noisy_neighbour():
    w = W("s19_sglang_host_noisy_neighbour", "H200", 2, dur=400, cpus=32)
    a, b = 160, 340
    def cpu(i):
        x = ramp(w.t(i), a, b, 6)
        return dict(phi=1 - 0.5 * x, psi=0.45 * x, hog=34 * x)
    e = serving(w, "sglang", "qwen32b", [0, 1], 4.5, chat(prompt=1100, out=240), cpu_fn=cpu)
    tr = T("serving", "host_cpu_contention", "sglang", "a shared 32-vCPU host: another tenant's CPU video encode (34 threads) starts at t=160 s; run queue and CPU PSI climb, the schedulers lose half their CPU")
    return finish(w, tr, lambda w: [1 - x for x in env_series(w, cpu, "phi", 1.0)], rel=0, absolute=0.2, workloads=[e])


@ticket
def s20_lightning_a100_container_quota():
    w = W("s20_lightning_a100_container_quota", "A100", 1, dur=400, cpus=64, pinned=True)
    a = 170
    def cpu(i):
        x = ramp(w.t(i), a, 10**9, 5)
        return dict(phi=1 - 0.6 * x, quota=4.0 - 2.5 * x, loader_contended=True, psi=0.03)
    prof = Profile(step_s=0.30, units=16, host_s=0.10, launches=1500, dram=0.3, tensor=0.4)
    j = Job(w, [0], prof, cmdline="python train.py fit --config vit_l.yaml --trainer.devices=1",
            counter="samples", data_s=0.45, workers=3, cpu_fn=cpu, container="docker:9a3e77c01b2d")
    tr = T("training", "host_cpu_contention", "trainer", "a Lightning fine-tune in a container; at t=170 s the customer's orchestrator lowered the container's CPU limit from 4 to 1.5 cores (docker update --cpus 1.5): loader workers and the training loop are throttled")
    return finish(w, tr, lambda w: [1 - x for x in env_series(w, cpu, "phi", 1.0)], rel=0, absolute=0.2, workloads=[j], pin=j)


# =============================================================== host_launch_jitter
@ticket
def s21_vllm_h100_irq_launch_jitter():
    w = W("s21_vllm_h100_irq_launch_jitter", "H100", 1, tick=0.5, dur=300, cpus=64, ebpf=True)
    a, b = 120, 250
    jit = lambda t: (0.02 * ramp(t, a, b, 4), 0.006 * ramp(t, a, b, 4))
    e = serving(w, "vllm", "llama8b", [0], 9.0, chat(), jitter_fn=jit,
                cpu_fn=lambda i: dict(phi=1.0, psi=0.05 * ramp(w.t(i), a, b, 4)))
    tr = T("serving", "host_launch_jitter", "vllm", "irqbalance was restarted at t=120 s and steered the NIC's interrupts onto the engine core's CPU: its launching thread is switched out mid-launch (eBPF: launch calls of 0.3-4 ms)")
    return finish(w, tr, lambda w: [jit(w.t(i))[0] for i in range(w.n)], rel=0, absolute=0.005, workloads=[e])


@ticket
def s22_finetune_a100_launch_jitter():
    w = W("s22_finetune_a100_launch_jitter", "A100", 1, dur=380, cpus=32, ebpf=True)
    a, b = 150, 330
    jit = lambda t: (0.015 * ramp(t, a, b, 5), 0.16 * ramp(t, a, b, 5))
    prof = Profile(step_s=0.22, units=8 * 2048, host_s=0.12, launches=2600, dram=0.3, tensor=0.45)
    j = Job(w, [0], prof, cmdline="python sft.py --model Qwen2.5-1.5B --bf16 --no-compile",
            counter="tokens", data_s=0.1, workers=4, jitter_fn=jit,
            cpu_fn=lambda i: dict(phi=1.0, psi=0.04 * ramp(w.t(i), a, b, 5)))
    tr = T("training", "host_launch_jitter", "trainer", "an eager-mode fine-tune (2,600 launches a step, launch-bound); from t=150 s a realtime-priority monitoring agent wakes every few ms on the training thread's core and preempts it inside launches")
    return finish(w, tr, lambda w: [jit(w.t(i))[0] for i in range(w.n)], rel=0, absolute=0.005, workloads=[j])


@ticket
def s23_llamacpp_l40s_backup_jitter():
    w = W("s23_llamacpp_l40s_backup_jitter", "L40S", 1, dur=360, cpus=16, ebpf=True, pinned=True)
    a, b = 140, 300
    jit = lambda t: (0.03 * ramp(t, a, b, 4), 0.004 * ramp(t, a, b, 4))
    e = serving(w, "llamacpp", "llama3b_q4", [0], 1.6, chat(prompt=400, out=220, cached=0.5),
                max_seqs=4, budget=2048, base_over=0.0009, per_seq_over=1e-5, overlap=0.0,
                jitter_fn=jit, cpu_fn=lambda i: dict(phi=1.0, psi=0.06 * ramp(w.t(i), a, b, 4)))
    tr = T("serving", "host_launch_jitter", "llamacpp", "a nightly backup (zstd -T0, nice 10) pinned to all cores starts at t=140 s; llama-server's decode thread is switched out inside its launches")
    return finish(w, tr, lambda w: [jit(w.t(i))[0] for i in range(w.n)], rel=0, absolute=0.005, workloads=[e], pin=e, cores=tuple(range(16)))


# =============================================================== collective_straggler
@ticket
def s24_ddp8_h100_reshard_straggler():
    w = W("s24_ddp8_h100_reshard_straggler", "H100", 8, tick=2.0, dur=480, cpus=208)
    a = 180
    prof = Profile(step_s=0.9, units=8 * 8 * 4096, allreduce_s=0.07, host_s=0.1, launches=2200)
    j = Job(w, range(8), prof, cmdline="torchrun --nproc_per_node=8 pretrain.py --model 1.3b --packing",
            counter="tokens", data_s=0.2, workers=6,
            rank_slow=lambda r, t: 1 + 0.38 * ramp(t, a, 10**9, 10) if r == 3 else 1.0)
    tr = T("training", "collective_straggler", "trainer", "after a dataset re-shard at t=180 s rank 3's shard holds the long documents: its packed batches carry ~40% more attention work; the other seven wait in NCCL all-reduce", culprit=(3,))
    return finish(w, tr, lambda w: mean_nccl(j, 3), rel=0, absolute=0.1, workloads=[j])


def mean_nccl(j, culprit):
    n = j.w.n
    others = [r for r in range(len(j.gpus)) if r != culprit]
    return [mean(j.st["nccl_wait"][r][i] / j.w.tick for r in others) for i in range(n)]


@ticket
def s25_fsdp4_h200_pcie_straggler():
    w = W("s25_fsdp4_h200_pcie_straggler", "H200", 4, dur=420, cpus=96, pinned=True)
    a, b = 150, 360
    prof = Profile(step_s=1.3, units=4 * 4 * 8192, allreduce_s=0.12, host_s=0.15, launches=3500,
                   tensor=0.42)
    j = Job(w, range(4), prof, cmdline="accelerate launch --config fsdp.yaml train.py --model llama-8b",
            counter="tokens", data_s=0.3, workers=8,
            rank_slow=lambda r, t: 1 + 0.22 * ramp(t, a, b, 10) if r == 1 else 1.0)
    tr = T("training", "collective_straggler", "trainer", "FSDP with CPU-offloaded optimizer state; from t=150 s rank 1's host-device copies run on a PCIe link that retrained down to Gen4 x4, its step stretches ~22% (clock intact); ranks 0, 2, 3 wait in all-gather / reduce-scatter", culprit=(1,))
    return finish(w, tr, lambda w: mean_nccl(j, 1), rel=0, absolute=0.06, workloads=[j], pin=j)


@ticket
def s26_moe_ep8_h200_hot_expert():
    w = W("s26_moe_ep8_h200_hot_expert", "H200", 8, dur=420, cpus=224)
    a = 160
    prof = Profile(step_s=1.1, units=8 * 4 * 4096, allreduce_s=0.15, host_s=0.2, launches=5000,
                   tensor=0.33, dram=0.3)
    j = Job(w, range(8), prof, cmdline="torchrun --nproc_per_node=8 train_moe.py --ep 8 --experts 64",
            counter="tokens", data_s=0.3, workers=6,
            rank_slow=lambda r, t: 1 + 0.5 * ramp(t, a, 10**9, 20) if r == 6 else 1.0)
    tr = T("training", "collective_straggler", "trainer", "expert-parallel MoE pre-training; the router collapses onto experts that live on rank 6 from t=160 s (aux loss disabled by a config typo): rank 6 computes ~50% more tokens, the others wait in the all-to-all", culprit=(6,))
    return finish(w, tr, lambda w: mean_nccl(j, 6), rel=0, absolute=0.1, workloads=[j])


# =============================================================== input_stall
@ticket
def s27_ddp8_h100_object_store_stall():
    w = W("s27_ddp8_h100_object_store_stall", "H100", 8, dur=420, cpus=208)
    a, b = 160, 350
    prof = Profile(step_s=0.7, units=8 * 8 * 2048, allreduce_s=0.05, host_s=0.1, launches=2000)
    j = Job(w, range(8), prof, cmdline="torchrun --nproc_per_node=8 train.py --data s3://corpus/shards",
            counter="tokens", data_s=1.6, workers=4,
            data_slow=lambda t: 1 + 2.4 * ramp(t, a, b, 10))
    tr = T("training", "input_stall", "trainer", "streaming shards from object storage; the bucket starts rate-limiting the account at t=160 s (503 SlowDown, retries with backoff): every rank waits for its next batch")
    return finish(w, tr, lambda w: job_series(j, "data_wait", w.n), rel=0, absolute=0.12, workloads=[j])


@ticket
def s28_finetune_a100_augment_stall_no_counter():
    w = W("s28_finetune_a100_augment_stall_no_counter", "A100", 1, dur=380, cpus=16, pinned=True)
    a = 150
    prof = Profile(step_s=0.25, units=64, host_s=0.05, launches=900, dram=0.35, tensor=0.4)
    j = Job(w, [0], prof, name="python", cmdline="python finetune_resnet.py --epochs 30 --bs 64",
            counter=None, data_s=0.5, workers=4,
            data_slow=lambda t: 1 + 3.0 * ramp(t, a, 10**9, 3))
    tr = T("training", "input_stall", "none", "an image fine-tune with no metrics; a new epoch at t=150 s switches on heavy augmentation (RandAugment at full resolution) with only 4 loader workers: the GPU waits for batches")
    return finish(w, tr, lambda w: job_series(j, "data_wait", w.n), rel=0, absolute=0.12, workloads=[j], pin=j, cores=tuple(range(16)))


@ticket
def s29_ddp4_l40s_nfs_stall():
    w = W("s29_ddp4_l40s_nfs_stall", "L40S", 4, dur=400, cpus=64)
    a, b = 170, 330
    prof = Profile(step_s=0.5, units=4 * 32, allreduce_s=0.05, host_s=0.08, launches=1200)
    j = Job(w, range(4), prof, cmdline="torchrun --nproc_per_node=4 train_detector.py --data /mnt/nfs/coco",
            counter="samples", data_s=1.6, workers=6,
            data_slow=lambda t: 1 + 1.6 * ramp(t, a, b, 10))
    tr = T("training", "input_stall", "trainer", "object-detection training reading JPEGs from NFS; a backup job saturates the filer from t=170 s: reads slow ~2x and the loaders fall behind (moderate)")
    return finish(w, tr, lambda w: job_series(j, "data_wait", w.n), rel=0, absolute=0.1, workloads=[j])


# =============================================================== tiny_kernels
@ticket
def s30_train_h100_unfused_optimizer():
    w = W("s30_train_h100_unfused_optimizer", "H100", 1, dur=380, cpus=32, ebpf=True)
    a = 160
    prof = Profile(step_s=0.32, units=8 * 2048, host_s=0.06, launches=1800, tensor=0.45)
    j = Job(w, [0], prof, cmdline="python train.py --model gpt2-xl --optim adamw_torch",
            counter="tokens", data_s=0.05, workers=4,
            tiny_fn=lambda t: (int(38000 * ramp(t, a, 10**9, 2)), 6e-6))
    tr = T("training", "tiny_kernels", "trainer", "a code change at t=160 s (custom per-parameter gradient clipping and EMA update in a Python loop over 580 tensors) adds ~38k tiny kernels a step: GPU-Util stays high, SM activity and tokens/s fall")
    return finish(w, tr, lambda w: job_series(j, "tiny", w.n), rel=0, absolute=0.15, workloads=[j])


@ticket
def s31_embedding_h100_batching_off():
    w = W("s31_embedding_h100_batching_off", "H100", 1, dur=360, cpus=32)
    a = 140
    def tiny(t):
        x = ramp(t, a, 10**9, 2)
        return (int(2400 * x), 9e-6)
    prof = Profile(step_s=0.05, comp=0.6, fill=0.8, dram=0.3, tensor=0.35, launches=300, host_s=0.01)
    j = Job(w, [0], prof, name="python3", cmdline="python3 -m embed_server --model bge-large --port 7997",
            counter=None, tiny_fn=tiny, duty_fn=lambda t: 0.92,
            profiles={}, occ=0.3)
    j.prof_for = lambda phase, _j=j: (Profile(step_s=0.05 * (1 - 0.92 * ramp(_j.T, a, 10**9, 2)), comp=0.6, fill=0.8,
                                              dram=0.3, tensor=0.35, launches=300, host_s=0.01))
    tr = T("other", "tiny_kernels", "none", "an embedding server with no /metrics; a deploy at t=140 s dropped dynamic batching (max_batch_size=1): the GPU runs a stream of tiny per-request kernels, busy but nearly empty")
    return finish(w, tr, lambda w: job_series(j, "tiny", w.n), rel=0, absolute=0.15, workloads=[j])


@ticket
def s32_notebook_h200_python_loop():
    w = W("s32_notebook_h200_python_loop", "H200", 1, dur=360, cpus=32, pinned=True)
    a, b = 130, 310
    prof = Profile(step_s=0.4, units=0, launches=600, host_s=0.02, tensor=0.5)
    j = Job(w, [0], prof, cmdline="/opt/conda/bin/python -m ipykernel_launcher -f kernel-3f.json",
            counter=None, tiny_fn=lambda t: (int(60000 * ramp(t, a, b, 2)), 4e-6),
            duty_fn=lambda t: 0.95)
    j.prof_for = lambda phase, _j=j: Profile(step_s=0.4 * (1 - 0.95 * ramp(_j.T, a, b, 2)), units=0,
                                             launches=600, host_s=0.02, tensor=0.5)
    tr = T("other", "tiny_kernels", "none", "a notebook's batched generation is replaced at t=130 s by a hand-written per-token sampling loop (element-wise torch ops on scalars): tens of thousands of tiny kernels a second")
    return finish(w, tr, lambda w: job_series(j, "tiny", w.n), rel=0, absolute=0.15, workloads=[j], pin=j)


# =============================================================== throttling
@ticket
def s33_ddp8_h100_gpu6_thermal():
    w = W("s33_ddp8_h100_gpu6_thermal", "H100", 8, dur=480, cpus=208)
    a = 120
    prof = Profile(step_s=0.85, units=8 * 8 * 4096, allreduce_s=0.06, host_s=0.1, launches=2400,
                   tensor=0.55, comp=0.85)
    j = Job(w, range(8), prof, cmdline="torchrun --nproc_per_node=8 pretrain.py --model 3b",
            counter="tokens", data_s=0.2, workers=6)
    orig = w.govern
    def govern(i):
        w.cooling[6] = 1.0 + 1.9 * ramp(w.t(i), a, 10**9, 60)
        orig(i)
    w.govern = govern
    tr = T("training", "throttling", "trainer", "a fan module on the tray holding GPU 6 fails at t=120 s; GPU 6 heats past its slowdown temperature and its clock is cut (thermal), the other ranks wait for it", culprit=(6,))
    return finish(w, tr, lambda w: [1 - x for x in clock_of(w, [6])], rel=0, absolute=0.08, workloads=[j])


@ticket
def s34_vllm_llama70b_a100x4_power_brake():
    w = W("s34_vllm_llama70b_a100x4_power_brake", "A100", 4, dur=400, cpus=128)
    a, b = 160, 300
    w.cap_fn = lambda g, t: ((0.42, ("hw slowdown", "power brake")) if ramp(t, a, b, 0) > 0 else (1.0, ()))
    e = serving(w, "vllm", "llama70b", [0, 1, 2, 3], 2.0, chat(prompt=1000, out=250))
    tr = T("serving", "throttling", "vllm", "one of the chassis' power supplies fails at t=160 s; the BMC asserts power brake on all four A100s (clocks ~590 MHz) until the PSU is reseated at t=300 s")
    return finish(w, tr, lambda w: [1 - x for x in clock_of(w, [0, 1, 2, 3])], rel=0, absolute=0.08, workloads=[e])


@ticket
def s35_llamacpp_l40s_hot_aisle():
    w = W("s35_llamacpp_l40s_hot_aisle", "L40S", 1, dur=420, cpus=16)
    a = 100
    e = serving(w, "llamacpp", "qwen1.5b", [0], 3.0, chat(prompt=600, out=200, cached=0.4),
                max_seqs=8, budget=2048, base_over=0.0008, per_seq_over=1e-5, overlap=0.0)
    orig = w.govern
    def govern(i):
        w.cooling[0] = 1.0 + 2.3 * ramp(w.t(i), a, 10**9, 90)
        orig(i)
    w.govern = govern
    tr = T("serving", "throttling", "llamacpp", "the colo's hot-aisle containment door was left open from t=100 s: inlet air warms, the L40S climbs to its slowdown temperature and its clock steps down")
    return finish(w, tr, lambda w: [1 - x for x in clock_of(w, [0])], rel=0, absolute=0.06, workloads=[e])


from . import healthy  # noqa: E402,F401
