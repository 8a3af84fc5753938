"""corpus_u: a blind corpus of simulated gputop recordings with their true root causes.

Each trace is generated from a request-level serving engine (vLLM V1 / SGLang continuous
batching with a KV pool) or a step-level training job, with GPU power/clock/thermal
physics and the host's /proc view; see README.md.  Deterministic: every random stream
is seeded from the trace name; no clock is read.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass

from gputop.schema import Frame

from .runners import run_serving, run_training

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    cause: str | None
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


def _win(t, a, b):
    return a <= t < b


def _ramp(t, a, b):
    """0 before a, 1 after b, linear between."""
    return 0.0 if t < a else 1.0 if t >= b else (t - a) / (b - a)


L8 = dict(rate=6.0, prompt=900, out=260)  # Llama-3.1-8B chat traffic on one H100


# ------------------------------------------------------------------ catalogue
# (name, family, cause, culprit, window(rel), engine, gpus, gpu, tick, note, builder)
CATALOGUE: list[tuple] = []


def entry(name, family, cause, culprit, window, engine, gpus, gpu, tick, note):
    def deco(fn):
        CATALOGUE.append((name, family, cause, culprit, window, engine, gpus, gpu, tick, note, fn))
        return fn
    return deco


# ---------------- oversized_request
@entry("vllm_n8_logprobs_h100", "serving", "oversized_request", None, (90, 190), "vllm", 1,
       "H100", 1.0, "One n=8, logprobs=20, max_tokens=2048 request joins steady chat traffic; "
       "every step pays for 8 sequences' top-20 logprobs over the 128k vocabulary and their "
       "detokenisation, ITL p99 and TTFT of everyone rise until it finishes.")
def _(name, start):
    return run_serving(name, duration=260, start=start, load=lambda t: L8,
                       events=[(90.0, dict(prompt=600, out=1500, n=8, heavy=0.042,
                                           max_tokens=2048))])


@entry("sglang_n16_sampling_h200", "serving", "oversized_request", None, (80, 175), "sglang",
       1, "H200", 1.0, "A client sends one n=16 parallel-sampling request with return_logprob and "
                       "4k max tokens; the SGLang batch is dominated by its 16 sequences and "
                       "per-step logprob work.")
def _(name, start):
    return run_serving(name, duration=240, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct",
                       load=lambda t: dict(rate=9.0, prompt=700, out=220),
                       events=[(80.0, dict(prompt=1200, out=1700, n=16, heavy=0.038,
                                           max_tokens=4096))])


@entry("vllm_32b_prompt_logprobs_h200", "serving", "oversized_request", None, (100, 200),
       "vllm", 1, "H200", 2.0, "A 28k-token prompt with prompt_logprobs, n=4 and 6k max tokens "
                              "lands on a 32B model; its prefill and per-step logprob work stall "
                              "the batch (scrape every 2 s).")
def _(name, start):
    return run_serving(name, duration=280, tick=2.0, start=start, gpu="H200",
                       model="Qwen/Qwen2.5-32B-Instruct",
                       load=lambda t: dict(rate=2.6, prompt=1100, out=300),
                       events=[(100.0, dict(prompt=28000, out=1300, n=4, heavy=0.05,
                                            max_tokens=6144))])


# ---------------- prefill_interference
@entry("vllm_rag_long_prompts_h100", "serving", "prefill_interference", None, (80, 200), "vllm",
       1, "H100", 1.0, "A RAG client starts sending 12k-token prompts (1 per second) into chat "
                       "traffic; chunked prefill fills each 8192-token step budget and decode "
                       "steps stretch from ~12 ms to ~200 ms.")
def _(name, start):
    def load(t):
        if _win(t, 80, 200):
            return dict(rate=7.0, prompt=2500, psig=1.1, out=200, pmax=16000)
        return L8
    return run_serving(name, duration=260, start=start, load=load)


@entry("sglang_extend_batches_h200", "serving", "prefill_interference", None, (90, 210),
       "sglang", 1, "H200", 1.0, "SGLang without chunked prefill: 16k-token prompts arrive "
                                "and each extend batch pauses all decoding for its duration.")
def _(name, start):
    def load(t):
        base = dict(rate=8.0, prompt=600, out=300)
        if _win(t, 90, 210):
            return dict(rate=9.0, prompt=2600, psig=1.3, out=260, pmax=20000)
        return base
    return run_serving(name, duration=270, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct", load=load, sim_kw=dict(chunked=False,
                                                                     max_batched=16384))


@entry("vllm_tp4_70b_summaries_h200", "serving", "prefill_interference", None, (100, 250),
       "vllm", 4, "H200", 1.0, "A summarisation batch ramps up over a minute on a TP4 70B engine: "
                              "20k-token documents share every step with decoding chat streams.")
def _(name, start):
    def load(t):
        f = _ramp(t, 100, 160) * (1.0 if t < 250 else 0.0)
        return dict(rate=3.0 + 1.2 * f, prompt=700 + 9000 * f, psig=0.5 + 0.6 * f, out=300 - 150 * f,
                    pmax=24000)
    return run_serving(name, duration=300, start=start, gpu="H200", tp=4,
                       model="meta-llama/Llama-3.1-70B-Instruct", load=load)


# ---------------- collective_straggler
@entry("ddp8_thermal_straggler_h100", "multi-gpu", "collective_straggler", (5,), (90, 240),
       "trainer", 8, "H100", 1.0, "DDP over 8 H100s: GPU 5's cooling degrades, it throttles to "
                                  "~68% clocks and the other seven spin in all-reduce each step.")
def _(name, start):
    def phys(t):
        if t >= 90:
            return dict(gpu=5, slowdown=0.68, reasons=("thermal (sw)",), clock={5: 0.68})
        return {}
    return run_training(name, duration=260, start=start, ranks=8, compute=lambda t, r: 0.42,
                        allreduce=0.06, batch=16, unit="samples", phys=phys, ebpf=True,
                        producer=lambda t: 0.9, workers=32)


@entry("fsdp4_rank_imbalance_h200", "multi-gpu", "collective_straggler", (2,), (80, 230),
       "trainer", 4, "H200", 1.0, "FSDP over 4 H200s with sequence packing off: rank 2 starts "
                                  "drawing 1.7x longer sequences, the others wait in the "
                                  "reduce-scatter (tokens/s counter).")
def _(name, start):
    return run_training(name, duration=250, start=start, gpu="H200", ranks=4,
                        compute=lambda t, r: 0.55 * (1.7 if (r == 2 and 80 <= t < 230) else 1.0),
                        allreduce=0.08, batch=8, unit="tokens", tokens_per_sample=4096,
                        producer=lambda t: 0.6, workers=16)


@entry("vllm_tp4_slow_rank_gridlock_h100", "multi-gpu", "collective_straggler", (3,),
       (90, 170), "vllm", 4, "H100", 1.0, "TP4 70B engine: GPU 3 is held at low clocks (HW "
                                          "slowdown) for 80 s; every step waits for it, the "
                                          "queue grows to hundreds and keeps draining after.")
def _(name, start):
    def phys(t):
        if _win(t, 90, 170):
            return dict(gpu=3, slowdown=0.42, reasons=("hw slowdown",), rank=3)
        return {}
    return run_serving(name, duration=300, start=start, tp=4,
                       model="meta-llama/Llama-3.1-70B-Instruct",
                       load=lambda t: dict(rate=5.5, prompt=900, out=260), phys=phys,
                       mods=lambda t: dict(slow_rank=3) if _win(t, 90, 172) else {})


# ---------------- input_stall
@entry("train_dataloader_stall_h100", "training", "input_stall", None, (80, 240), "trainer", 1,
       "H100", 1.0, "A vision fine-tune's dataset moves to network storage with heavier "
                    "augmentation: 4 DataLoader workers need 1.3 s per batch, the GPU computes "
                    "0.25 s and waits in a saw-tooth; workers at 100% of a core.")
def _(name, start):
    return run_training(name, duration=260, start=start, compute=lambda t, r: 0.25,
                        producer=lambda t: 1.3 if t >= 80 else 0.5, workers=4, batch=64,
                        unit="samples")


@entry("ddp8_decode_bound_loader_h200", "multi-gpu", "input_stall", None, (90, 260), "trainer",
       8, "H200", 2.0, "DDP over 8 H200s: a new JPEG decode path makes the loader CPU-bound; "
                       "all ranks wait for batches together (counter scraped every 2 s).")
def _(name, start):
    return run_training(name, duration=280, tick=2.0, start=start, gpu="H200", ranks=8,
                        compute=lambda t, r: 0.35, allreduce=0.05,
                        producer=lambda t: 0.35 * 12 / 0.9 if t < 90 else 0.35 * 12 / 0.45,
                        workers=12, batch=32, unit="samples", ebpf=True)


@entry("train_no_counter_loader_h100", "training", "input_stall", None, (100, 260), "none", 1,
       "H100", 1.0, "A training script with no metrics endpoint: num_workers=1 after a config "
                    "change, the single worker decodes at 100% of a core and the GPU idles "
                    "between short bursts.")
def _(name, start):
    return run_training(name, duration=280, start=start, compute=lambda t, r: 0.18,
                        producer=lambda t: 0.2 if t < 100 else 0.7, workers=1 if True else 4,
                        batch=32, counter=False, ebpf=True)


# ---------------- host_launch_jitter
def _jitter_serving(name, start, *, engine, gpu, model, load, t0, t1, tail, tail_us, **kw):
    gap = lambda t: tail * tail_us * 1e-6 if _win(t, t0, t1) else 0.0  # noqa: E731
    return run_serving(name, duration=kw.pop("duration", 260), start=start, engine=engine,
                       gpu=gpu, model=model, load=load, ebpf=True,
                       mods=lambda t: dict(launch_gap=gap(t)),
                       launch=lambda t: dict(tail=tail, tail_us=tail_us) if _win(t, t0, t1) else {},
                       **kw)


@entry("vllm_driver_lock_jitter_h100", "serving", "host_launch_jitter", None, (90, 200),
       "vllm", 1, "H100", 1.0, "A KV-offload thread's cudaHostRegister calls hold the CUDA "
                              "driver lock; half the engine's graph launches block ~18 ms and "
                              "the GPU idles between steps (eBPF launch tails, PSI quiet).")
def _(name, start):
    return _jitter_serving(name, start, engine="vllm", gpu="H100",
                           model="meta-llama/Llama-3.1-8B-Instruct", load=lambda t: L8,
                           t0=90, t1=200, tail=0.5, tail_us=18000)


@entry("sglang_thp_compaction_jitter_h200", "serving", "host_launch_jitter", None, (70, 190),
       "sglang", 1, "H200", 1.0, "Transparent-hugepage compaction stalls the scheduler's "
                                "launch path: a third of launches take 10-40 ms.")
def _(name, start):
    return _jitter_serving(name, start, engine="sglang", gpu="H200",
                           model="Qwen/Qwen2.5-7B-Instruct",
                           load=lambda t: dict(rate=9.0, prompt=700, out=240),
                           t0=70, t1=190, tail=0.33, tail_us=22000)


@entry("train_launch_jitter_h100", "training", "host_launch_jitter", None, (90, 230), "trainer",
       1, "H100", 1.0, "A logging thread's synchronous cudaMemcpy contends for the driver lock: "
                       "3% of the training loop's kernel launches block for ~4 ms and the GPU "
                       "starves between kernels.")
def _(name, start):
    return run_training(name, duration=260, start=start, compute=lambda t, r: 0.2,
                        kernels=1400, producer=lambda t: 0.4, workers=8, batch=32,
                        ebpf=True, ltail=lambda t: dict(tail=0.03, tail_us=4000) if _win(t, 90, 230) else {})


# ---------------- host_cpu_contention
@entry("vllm_cpu_hog_h100", "serving", "host_cpu_contention", None, (90, 230), "vllm", 1,
       "H100", 1.0, "A batch ETL job floods the 16-core host; the EngineCore thread gets ~30% "
                    "of a core, GPU-Util falls, the batch grows, ITL p99 2-3x, queue to hundreds.")
def _(name, start):
    return run_serving(name, duration=260, start=start, cpus=16,
                       load=lambda t: dict(rate=14.0, prompt=900, out=260),
                       sim_kw=dict(host_step=0.0095, max_seqs=256),
                       host=lambda t: dict(hog=40.0, share=0.26) if _win(t, 90, 230) else {})


@entry("sglang_cfs_quota_h200", "serving", "host_cpu_contention", None, (80, 220), "sglang", 1,
       "H200", 2.0, "The container's CPU quota is cut to 1.5 CPUs while other tenants saturate "
                    "the node; the SGLang scheduler is throttled (involuntary switches, PSI).")
def _(name, start):
    return run_serving(name, duration=260, tick=2.0, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct", cpus=32,
                       load=lambda t: dict(rate=19.0, prompt=700, out=260),
                       sim_kw=dict(host_step=0.009),
                       host=lambda t: dict(hog=60.0, share=0.27) if _win(t, 80, 220) else {})


@entry("train_noisy_neighbour_h100", "training", "host_cpu_contention", None, (100, 240),
       "trainer", 1, "H100", 1.0, "A small-model trainer (launch-heavy, 4000 kernels a step) "
                                  "shares its host with a compile job; its Python thread gets "
                                  "a third of a core and steps slow down 1.7x.")
def _(name, start):
    return run_training(name, duration=260, start=start, cpus=16, kernels=4000,
                        compute=lambda t, r: 0.045, producer=lambda t: 0.1, workers=4, batch=128,
                        host=lambda t: dict(hog=48.0, share=0.32, workers_starve=True) if _win(t, 100, 240) else {})


# ---------------- tiny_kernels
@entry("train_unfused_optimizer_h100", "training", "tiny_kernels", None, (90, 240), "trainer", 1,
       "H100", 1.0, "A code change disables the fused/foreach AdamW: thousands of tiny per-"
                    "parameter kernels run back to back after each backward; GPU-Util stays "
                    "~100% while SM activity collapses and samples/s halves.")
def _(name, start):
    return run_training(name, duration=260, start=start, compute=lambda t, r: 0.3,
                        tiny=lambda t: 0.34 if t >= 90 else 0.012, producer=lambda t: 0.5,
                        workers=8, batch=32, kernels=2400)


@entry("vllm_logits_processor_tiny_h100", "serving", "tiny_kernels", None, (80, 220), "vllm", 1,
       "H100", 1.0, "A deployment enables a per-request logits processor that replays tiny "
                    "kernels (one block each) inside every step; steps triple, SM activity falls.")
def _(name, start):
    return run_serving(name, duration=260, start=start, load=lambda t: L8,
                       mods=lambda t: dict(tiny_s=0.024) if _win(t, 80, 220) else {})


@entry("cuda_app_graph_replay_tiny_h200", "no-engine", "tiny_kernels", None, (90, 250), "none", 1,
       "H200", 1.0, "A plain CUDA simulation code (no counter) switches to a CUDA-graph path of "
                    "one-element kernels: GPU-Util 100%, SM active near 0.")
def _(name, start):
    return run_training(name, duration=270, start=start, gpu="H200", counter=False,
                        compute=lambda t, r: 0.08 if t < 90 else 0.004,
                        tiny=lambda t: 0.0 if t < 90 else 0.3, producer=None, workers=0,
                        kernels=300)


# ---------------- memory_bandwidth
@entry("vllm_32b_long_context_h200", "serving", "memory_bandwidth", None, (90, 250), "vllm", 1,
       "H200", 1.0, "Agent sessions with 24k-token cached histories take over a 32B engine; KV "
                    "reads per step dwarf the weights, DRAM ~90% busy, ITL up, tokens/s down.")
def _(name, start):
    def load(t):
        f = _ramp(t, 80, 100)
        return dict(rate=3.0, prompt=900 + 23000 * f, psig=0.3, out=300, cached=0.95 * f,
                    pmax=32000)
    return run_serving(name, duration=270, start=start, gpu="H200",
                       model="Qwen/Qwen2.5-32B-Instruct", load=load,
                       sim_kw=dict(max_seqs=256))


@entry("sglang_chat_history_growth_h100", "serving", "memory_bandwidth", None, (100, 260),
       "sglang", 1, "H100", 1.0, "Conversation histories grow (radix cache hits) to ~14k tokens "
                                "at a large batch; decode becomes KV-read bound.")
def _(name, start):
    def load(t):
        f = _ramp(t, 60, 110)
        return dict(rate=10.0, prompt=800 + 13000 * f, psig=0.35, out=280, cached=0.93 * f,
                    pmax=20000)
    return run_serving(name, duration=280, start=start, engine="sglang",
                       model="Qwen/Qwen2.5-7B-Instruct", load=load, evictable=0.3)


@entry("vllm_8b_agent_contexts_h100", "serving", "memory_bandwidth", None, (90, 230), "vllm",
       1, "H100", 1.0, "A coding agent fleet sends 9k-token cached contexts at 512 sequences; the "
                       "8B engine's decode turns bandwidth-bound.")
def _(name, start):
    def load(t):
        f = _ramp(t, 85, 95)
        return dict(rate=6.0 + 4 * f, prompt=900 + 8500 * f, psig=0.3, out=260, cached=0.96 * f,
                    pmax=16000)
    return run_serving(name, duration=250, start=start, load=load, sim_kw=dict(max_seqs=512))


# ---------------- throttling
@entry("vllm_thermal_h100", "serving", "throttling", None, (110, 260), "vllm", 1, "H100", 1.0,
       "The server's fans fail at 60 s; the board heats past 87 C, thermal slowdown cuts "
       "clocks and decode slows.")
def _(name, start):
    def phys(t):
        return dict(cooling=0.33, ambient=42.0) if t >= 60 else {}
    return run_serving(name, duration=270, start=start, load=lambda t: dict(rate=7.0, prompt=1400, out=260),
                       phys=phys)


@entry("sglang_power_brake_h200", "serving", "throttling", None, (90, 210), "sglang", 1, "H200",
       1.0, "The chassis asserts the power-brake signal (PSU fault): HW slowdown holds clocks "
            "near half for two minutes.")
def _(name, start):
    def phys(t):
        if _win(t, 90, 210):
            return dict(slowdown=0.45, reasons=("hw slowdown", "power brake"))
        return {}
    return run_serving(name, duration=260, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct",
                       load=lambda t: dict(rate=10.0, prompt=1200, out=250), phys=phys)


@entry("vllm_32b_dcmi_power_cap_h200", "serving", "throttling", None, (80, 240), "vllm", 1,
       "H200", 2.0, "The rack's power manager caps the GPU at 300 W (power_limit_w drops): clocks "
                    "fall and the prefill-heavy 32B service slows.")
def _(name, start):
    return run_serving(name, duration=260, tick=2.0, start=start, gpu="H200",
                       model="Qwen/Qwen2.5-32B-Instruct",
                       load=lambda t: dict(rate=1.5, prompt=3000, out=250),
                       phys=lambda t: dict(limit=300.0) if _win(t, 80, 240) else {})


# ---------------- kv_pressure
@entry("vllm_kv_full_preemptions_h100", "serving", "kv_pressure", None, (90, 240), "vllm", 1,
       "H100", 1.0, "Long prompts with long answers fill a 120k-token KV pool; vLLM preempts "
                    "and recomputes, requests wait for blocks.")
def _(name, start):
    def load(t):
        if t >= 90:
            return dict(rate=2.5, prompt=5000, out=1400, osig=0.5, pmax=12000)
        return dict(rate=5.0, prompt=900, out=260)
    return run_serving(name, duration=260, start=start, load=load,
                       sim_kw=dict(pool_tokens=120000))


@entry("sglang_retractions_h200", "serving", "kv_pressure", None, (80, 240), "sglang", 1,
       "H200", 1.0, "Reasoning traffic with 4k-token outputs outgrows SGLang's KV pool: decode "
                    "retracts requests back to the queue and re-prefills them.")
def _(name, start):
    def load(t):
        if t >= 80:
            return dict(rate=2.0, prompt=2500, out=3500, osig=0.4, omax=8000)
        return dict(rate=3.5, prompt=700, out=250)
    return run_serving(name, duration=260, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-32B-Instruct", load=load,
                       sim_kw=dict(pool_tokens=200000))


@entry("vllm_kv_slow_fill_h200", "serving", "kv_pressure", None, (130, 280), "vllm", 1, "H200",
       2.0, "Prompt lengths creep up over two minutes on a small pool (gpu_memory_utilization "
            "0.5); the pool fills slowly, then preemptions and capacity waits start.")
def _(name, start):
    def load(t):
        f = _ramp(t, 60, 180)
        return dict(rate=4.0, prompt=900 + 6000 * f, out=500 + 700 * f, pmax=16000)
    return run_serving(name, duration=300, tick=2.0, start=start, gpu="H200", load=load,
                       sim_kw=dict(pool_tokens=160000))


# ---------------- gpu_shared
@entry("vllm_notebook_shares_gpu_h100", "serving", "gpu_shared", (0,), (90, 230), "vllm", 1,
       "H100", 1.0, "A researcher's notebook starts a fine-tune on the serving GPU; the two "
                    "contexts time-slice and the engine's steps take twice as long.")
def _(name, start):
    return run_serving(name, duration=260, start=start, load=lambda t: L8,
                       other=lambda t: dict(gpu=0, busy=0.95, contend=0.5, mem=22e9, sm=0.85,
                                            tensor=0.5, pid=81234, since=90.0,
                                            cmd="/home/alice/.venv/bin/python -m ipykernel_launcher -f kernel.json")
                       if _win(t, 90, 230) else {})


@entry("eight_servers_one_shared_h100", "multi-gpu", "gpu_shared", (6,), (100, 250), "sglang", 8,
       "H100", 1.0, "Eight independent SGLang servers behind a router on one 8-GPU box; a stray "
                    "batch-embedding job lands on GPU 6 and time-slices with its server.")
def _(name, start):
    def sload(si, t):
        return dict(rate=4.0 + 0.4 * si, prompt=700, out=240)

    def smods(si, t):
        return {}
    return run_serving(name, duration=270, start=start, engine="sglang", servers=8,
                       model="Qwen/Qwen2.5-7B-Instruct", server_load=sload, server_mods=smods,
                       router=True,
                       other=lambda t: dict(gpu=6, busy=0.9, contend=0.55, mem=9e9, sm=0.8,
                                            tensor=0.4, pid=99120, since=100.0, user="batch",
                                            cmd="python embed_corpus.py --device cuda:6")
                       if _win(t, 100, 250) else {})


@entry("sglang_embedder_colocated_h200", "serving", "gpu_shared", (0,), (70, 210), "sglang", 1,
       "H200", 2.0, "An embedding server is co-located on the same H200 and takes ~40% of its "
                    "time slices under its own load.")
def _(name, start):
    return run_serving(name, duration=250, tick=2.0, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct",
                       load=lambda t: dict(rate=9.0, prompt=700, out=260),
                       other=lambda t: dict(gpu=0, busy=0.8, contend=0.45, mem=6e9, sm=0.7,
                                            tensor=0.45, pid=45100, since=70.0, user="svc-embed",
                                            cmd="text-embeddings-router --model-id BAAI/bge-large-en")
                       if _win(t, 70, 210) else {})


# ---------------- spec_decode_rejected
@entry("vllm_eagle_acceptance_collapse_h100", "serving", "spec_decode_rejected", None, (90, 230),
       "vllm", 1, "H100", 1.0, "EAGLE (k=3) drafts stop matching when traffic shifts to "
                              "high-temperature creative writing: acceptance falls from ~0.8 to "
                              "~0.12 per token while each step still verifies 4 tokens.")
def _(name, start):
    return run_serving(name, duration=260, start=start, load=lambda t: dict(rate=7.0, prompt=900, out=300),
                       sim_kw=dict(spec_k=3), spec_on=True,
                       mods=lambda t: dict(alpha=0.12 if _win(t, 90, 230) else 0.8))


@entry("sglang_eagle_collapse_h200", "serving", "spec_decode_rejected", None, (80, 220),
       "sglang", 1, "H200", 1.0, "SGLang EAGLE (4 draft tokens): a new tenant's code-mixed "
                                "language traffic drops spec_accept_rate from 0.75 to 0.1.")
def _(name, start):
    def m(t):
        a = 0.1 if _win(t, 80, 220) else 0.75
        return dict(alpha=a, sg_alpha=a, sg_len=1 + sum(a ** i for i in range(1, 5)))
    return run_serving(name, duration=250, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct", sim_kw=dict(spec_k=4), spec_on=True,
                       load=lambda t: dict(rate=9.0, prompt=700, out=280), mods=m)


@entry("vllm_ngram_slow_collapse_h200", "serving", "spec_decode_rejected", None, (110, 270),
       "vllm", 1, "H200", 1.0, "n-gram speculation (k=5) on a 32B model: as summarisation "
                              "traffic is replaced by open chat over 60 s, acceptance slides "
                              "from 0.6 to 0.05.")
def _(name, start):
    return run_serving(name, duration=280, start=start, gpu="H200", model="Qwen/Qwen2.5-32B-Instruct",
                       load=lambda t: dict(rate=3.0, prompt=1200, out=300),
                       sim_kw=dict(spec_k=5), spec_on=True,
                       mods=lambda t: dict(alpha=0.6 - 0.55 * _ramp(t, 80, 140)))


# ================================================================== healthy look-alikes
@entry("healthy_traffic_falls_tenfold", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "Evening: request rate falls to a tenth over two minutes; a few long generations keep "
       "GPU-Util high while tokens/s drops with demand.")
def _(name, start):
    def load(t):
        f = _ramp(t, 60, 180)
        return dict(rate=8.0 * (1 - 0.9 * f), prompt=900, out=260 + 900 * f, osig=0.8)
    return run_serving(name, duration=240, start=start, load=load)


@entry("healthy_model_reload", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "The operator reloads the model: the endpoint is gone for 40 s, VRAM empties and refills, "
       "counters restart at zero and the load balancer's slow start ramps traffic back.")
def _(name, start):
    def mods(t):
        if _win(t, 100, 101):
            return dict(wipe=True, mem_scale=0.0)
        if _win(t, 100, 115):
            return dict(mem_scale=0.0)
        if _win(t, 115, 140):
            return dict(mem_scale=min(1.0, (t - 115) / 12))
        return {}

    def load(t):
        if _win(t, 100, 140):
            return dict(rate=0.0)
        return dict(L8, rate=6.0 * (0.1 + 0.9 * _ramp(t, 140, 200)))
    return run_serving(name, duration=260, start=start, load=load, mods=mods,
                       scrape=lambda t: dict(down=True) if _win(t, 100, 140) else {})


@entry("healthy_one_10k_prompt_growing", "healthy", None, None, None, "vllm", 1, "H200", 1.0,
       "Traffic grows steadily; one 10k-token prompt passes through in a few chunked steps.")
def _(name, start):
    return run_serving(name, duration=220, start=start, gpu="H200",
                       load=lambda t: dict(rate=3.0 + 4.0 * _ramp(t, 0, 220), prompt=900, out=260),
                       events=[(110.0, dict(prompt=10000, out=300))])


@entry("healthy_prefix_cached_burst", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "A batch of requests sharing an 8k-token system prompt arrives: prompt_tokens_total jumps "
       "but 97% are prefix-cache hits, no prefill burst.")
def _(name, start):
    def load(t):
        if _win(t, 90, 150):
            return dict(rate=8.0, prompt=8200, psig=0.1, out=200, cached=0.97)
        return L8
    return run_serving(name, duration=220, start=start, load=load)


@entry("healthy_power_cap_prefill_h200", "healthy", None, None, None, "vllm", 1, "H200", 1.0,
       "A prefill-heavy 32B batch service runs at the 700 W cap all along (\"power cap\" set, "
       "clocks 1800-1900 MHz): normal for dense GEMMs.")
def _(name, start):
    return run_serving(name, duration=180, start=start, gpu="H200", model="Qwen/Qwen2.5-32B-Instruct",
                       load=lambda t: dict(rate=0.9, prompt=6000, psig=0.3, out=60))


@entry("healthy_train_step_staircase", "healthy", None, None, None, "trainer", 1, "H200", 1.0,
       "A 2.6 s training step scraped every second: the samples counter moves once per step, "
       "a staircase, with GPU-Util dipping at each step boundary.")
def _(name, start):
    return run_training(name, duration=200, start=start, gpu="H200", compute=lambda t, r: 2.5,
                        producer=lambda t: 3.0, workers=8, batch=256, unit="samples")


@entry("healthy_train_eval_phase", "healthy", None, None, None, "trainer", 1, "H100", 1.0,
       "Every ~100 s the trainer runs a 25 s evaluation pass: the GPU stays busy, the training "
       "counter stops, as designed.")
def _(name, start):
    return run_training(name, duration=240, start=start, compute=lambda t, r: 0.3,
                        producer=lambda t: 0.6, workers=8, batch=32,
                        pause=lambda t: 25.0 if int(t) % 100 >= 97 else 0.0)


@entry("healthy_ddp8_balanced", "healthy", None, None, None, "trainer", 8, "H100", 1.0,
       "Balanced DDP over 8 GPUs: NCCL all-reduce keeps everyone at ~100% util, SM activity "
       "moderate and equal across ranks.")
def _(name, start):
    return run_training(name, duration=180, start=start, ranks=8,
                        compute=lambda t, r: 0.42 * (1 + 0.02 * ((r * 7) % 3)), allreduce=0.07,
                        producer=lambda t: 0.9, workers=32, batch=16, ebpf=True)


@entry("healthy_eight_servers", "healthy", None, None, None, "sglang", 8, "H100", 1.0,
       "Eight independent SGLang servers behind a router with uneven but steady loads; one "
       "gets a short burst.")
def _(name, start):
    def sload(si, t):
        r = 2.0 + 1.0 * si
        if si == 3 and _win(t, 100, 130):
            r *= 1.8
        return dict(rate=r, prompt=700, out=240)
    return run_serving(name, duration=200, start=start, engine="sglang", servers=8,
                       model="Qwen/Qwen2.5-7B-Instruct", server_load=sload, router=True)


@entry("healthy_diurnal_ramp_sglang", "healthy", None, None, None, "sglang", 1, "H200", 1.0,
       "Morning ramp: traffic grows 4x over 150 s, the batch grows and ITL rises modestly.")
def _(name, start):
    return run_serving(name, duration=220, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct",
                       load=lambda t: dict(rate=3.0 + 9.0 * _ramp(t, 40, 190), prompt=700, out=260))


@entry("healthy_spec_wobble", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "EAGLE speculation with acceptance wandering 0.7-0.82 with the traffic mix.")
def _(name, start):
    import math
    return run_serving(name, duration=200, start=start, load=lambda t: dict(rate=7.0, prompt=900, out=300),
                       sim_kw=dict(spec_k=3), spec_on=True,
                       mods=lambda t: dict(alpha=0.76 + 0.06 * math.sin(t / 23.0)))


@entry("healthy_small_model_low_sm", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "A 0.5B model with CUDA graphs at moderate load: GPU-Util middling, SM activity low, "
       "steadily so.")
def _(name, start):
    return run_serving(name, duration=180, start=start, model="Qwen/Qwen2.5-0.5B-Instruct",
                       load=lambda t: dict(rate=10.0, prompt=400, out=200))


@entry("healthy_host_busy_no_impact", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "A compile job uses 40 of 64 cores; PSI stays low and the engine's thread keeps its core.")
def _(name, start):
    return run_serving(name, duration=200, start=start, load=lambda t: L8, cpus=64,
                       host=lambda t: dict(hog=40.0, stall=0.03) if _win(t, 70, 170) else {})


@entry("healthy_scrape_timeouts", "healthy", None, None, None, "vllm", 1, "H100", 2.0,
       "The metrics endpoint answers late now and then (2 s scrape interval): readings carried "
       "or missing, the service itself fine.")
def _(name, start):
    bad = {30, 31, 64, 90, 91, 92, 93, 130, 160, 161}
    return run_serving(name, duration=240, tick=2.0, start=start, load=lambda t: L8,
                       scrape=lambda t: dict(timeout=True) if int(t) in bad else {})


@entry("healthy_a100_no_gpm", "healthy", None, None, None, "vllm", 1, "A100", 1.0,
       "An A100 (no GPM: SM/DRAM/tensor activity unknown) serving steady traffic with a "
       "mid-trace surge.")
def _(name, start):
    return run_serving(name, duration=200, start=start, gpu="A100",
                       load=lambda t: dict(rate=3.0 * (1.6 if _win(t, 90, 130) else 1.0), prompt=900, out=260))


@entry("healthy_sglang_radix_full", "healthy", None, None, None, "sglang", 1, "H200", 1.0,
       "SGLang's radix cache keeps token_usage near 0.9 with most of it evictable; no "
       "retractions.")
def _(name, start):
    return run_serving(name, duration=180, start=start, engine="sglang", gpu="H200",
                       model="Qwen/Qwen2.5-7B-Instruct", evictable=0.85,
                       load=lambda t: dict(rate=8.0, prompt=2000, out=250, cached=0.6))


@entry("healthy_offline_batch_queue", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "An offline batch job submits 1500 requests at once: the queue jumps to ~1300 and "
       "drains at full throughput, ITL flat.")
def _(name, start):
    ev = [(60.0 + i * 0.002, dict(prompt=800, out=250)) for i in range(1500)]
    return run_serving(name, duration=240, start=start, load=lambda t: dict(rate=1.0, prompt=900, out=260),
                       events=ev)


@entry("healthy_idle_notebook_on_gpu", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "A notebook holds 6 GB on the serving GPU but computes nothing.")
def _(name, start):
    return run_serving(name, duration=180, start=start, load=lambda t: L8,
                       other=lambda t: dict(gpu=0, busy=0.0, mem=6e9, pid=70222, since=40.0,
                                            cmd="python -m ipykernel_launcher") if t >= 40 else {})


@entry("healthy_train_no_counter_accum", "healthy", None, None, None, "none", 1, "H100", 1.0,
       "A training script without metrics, gradient accumulation of 4 with an optimizer step "
       "every fourth micro-batch; busy and steady.")
def _(name, start):
    return run_training(name, duration=180, start=start, counter=False,
                        compute=lambda t, r: 0.22, producer=lambda t: 0.4, workers=6,
                        tiny=lambda t: 0.01, batch=16)


@entry("healthy_tp4_70b", "healthy", None, None, None, "vllm", 4, "H200", 1.0,
       "A TP4 70B engine on H200s serving steady chat traffic.")
def _(name, start):
    return run_serving(name, duration=180, start=start, gpu="H200", tp=4,
                       model="meta-llama/Llama-3.1-70B-Instruct",
                       load=lambda t: dict(rate=5.0, prompt=900, out=260))


@entry("healthy_sglang_5s_scrape", "healthy", None, None, None, "sglang", 1, "H100", 5.0,
       "SGLang scraped every 5 s with bursty client arrivals.")
def _(name, start):
    import math
    return run_serving(name, duration=300, tick=5.0, start=start, engine="sglang",
                       model="Qwen/Qwen2.5-7B-Instruct",
                       load=lambda t: dict(rate=6.0 + 3.0 * math.sin(t / 30.0), prompt=800, out=240))


@entry("healthy_warm_room_no_throttle", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
       "The machine room warms by 8 C; the GPU runs hotter (~78 C) but never throttles.")
def _(name, start):
    return run_serving(name, duration=220, start=start, load=lambda t: L8,
                       phys=lambda t: dict(ambient=30.0 + 8.0 * _ramp(t, 30, 150), cooling=0.75))


# ------------------------------------------------------------------ interface
BASE_WALL = 1_790_000_000.0


def _truths():
    out = []
    for i, (name, family, cause, culprit, window, engine, gpus, gpu, tick, note, fn) in \
            enumerate(CATALOGUE):
        start = BASE_WALL + i * 86_400.0 + 3_600.0
        w = None if window is None else (start + window[0], start + window[1])
        out.append((Truth(name=name, family=family, cause=cause, culprit_gpus=culprit,
                          window=w, engine=engine, gpus=int(gpus), gpu_model=gpu,
                          tick_s=float(tick), note=note, start_wall_s=start), fn))
    return out


def _matches(truth: Truth, filter: str | None) -> bool:
    if filter is None:
        return True
    if filter == "healthy":
        return truth.cause is None
    return filter in (truth.name, truth.family, truth.cause)


def traces(filter: str | None = None) -> Iterator[tuple[Truth, list[Frame]]]:
    for truth, fn in _truths():
        if _matches(truth, filter):
            yield truth, fn(truth.name, truth.start_wall_s)


def write_recordings(directory: str) -> list[str]:
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    paths = []
    for truth, frames in traces():
        path = os.path.join(directory, f"{truth.name}.gputop")
        rec = Recorder(path, source_label=f"corpus_u:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        with open(os.path.join(directory, f"{truth.name}.truth.json"), "w") as fh:
            json.dump(dataclasses.asdict(truth), fh, indent=1)
        paths.append(path)
    return paths
