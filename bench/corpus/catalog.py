"""The corpus: every trace with its variant parameters, cause, culprit and physics note.

Families (``family`` field): oversized, prefill, straggler, input, jitter, contention,
tiny, membw, throttle, kv, shared (one true cause each) and healthy (no episode is the
right answer).  Rates are chosen against each model's roofline capacity (llm.py): healthy
periods run at 30-80% of what the GPU can do, so the noise (bursts, long prompts) is real
but the engine keeps up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.corpus import families as F
from bench.corpus import workload as W
from bench.corpus.families import L8, L13, L70, Q7, Q32, Q72
from bench.corpus.hw import A100, H100, H200


@dataclass(frozen=True)
class Entry:
    name: str
    family: str
    cause: str | None
    builder: object
    culprit: object  # "engine" | "all" | tuple of GPU indexes | None
    note: str
    v: dict = field(default_factory=dict)
    seed: int = 0


LONG = W.Lengths(prompt_median=900, prompt_sigma=0.8, prompt_max=8000, out_median=220)
CHAT = W.Lengths(prefix=350, prefix_frac=0.85)
LOGP = W.Lengths(prefix=32, prefix_frac=1.0, prompt_median=480, prompt_sigma=0.3, out_median=160)

E: list[Entry] = []


def add(name, family, cause, builder, culprit, note, seed, **v):
    E.append(Entry(name, family, cause, builder, culprit, note, v, seed))


# ------------------------------------------------------------------ oversized_request
add("oversized_vllm_n8_logprobs20_h100", "oversized", "oversized_request", F.b_oversized, "engine",
    "n=8 x logprobs=20 over a 152k vocabulary: every step computes an fp32 log-softmax for the "
    "whole batch and the engine core turns 8x21 logprob entries into Python objects per token, "
    "synchronously (FACTS 10: ITL 2.4x, TTFT 4.4x)", 101,
    spec=H100, n=1, dur=330, kind="vllm", model=Q7, rate=3.5, w=(130, 235), every=9.0, out=420,
    lengths=LOGP)
add("oversized_vllm_promptlogprobs_h200", "oversized", "oversized_request", F.b_oversized, "engine",
    "prompt_logprobs=20 on ~18k-token prompts: each 8192-token chunk materialises full-vocabulary "
    "fp32 logits and ~170k Python logprob entries; the whole batch waits ~0.5 s per chunk", 102,
    spec=H200, n=1, dur=340, kind="vllm", model=L8, rate=5.0, w=(120, 230), every=3.0, n_param=1,
    logprobs=0, prompt_logprobs=20, prompt=18000, out=16, max_tokens=16, lengths=CHAT)
add("oversized_sglang_n8_logprobs20_h100", "oversized", "oversized_request", F.b_oversized, "engine",
    "SGLang, n=8 with top_logprobs_num=20: full-vocabulary logprobs for the batch every decode "
    "step plus per-token Python work for the 8 sequences", 103,
    spec=H100, n=1, dur=320, kind="sglang", model=Q7, rate=4.0, w=(110, 220), every=9.0, out=400,
    lengths=LOGP)
add("oversized_vllm_n64_tp4_h100", "oversized", "oversized_request", F.b_oversized, "engine",
    "one client asks n=64 (best-of sampling) with max_tokens 1024: 64 sequences join a 70B TP4 "
    "batch at once, the batch and its KV double and every other request's ITL rises", 104,
    spec=H100, n=4, dur=330, kind="vllm", model=L70, rate=1.6, w=(125, 230), every=28.0, n_param=64,
    logprobs=0, out=900, max_tokens=1024, prompt=700, lengths=CHAT)
add("oversized_sglang_n32_logprobs5_tp8_h200", "oversized", "oversized_request", F.b_oversized, "engine",
    "Qwen2.5-72B TP8 on H200, a client's n=32 + logprobs=5 requests: 32 sequences needing "
    "full-vocabulary logprobs each step", 105,
    spec=H200, n=8, dur=330, kind="sglang", model=Q72, rate=4.0, w=(135, 240), every=14.0,
    n_param=32, logprobs=5, out=450, max_tokens=512, lengths=LOGP)
add("oversized_vllm_n16_logprobs5_a100", "oversized", "oversized_request", F.b_oversized, "engine",
    "A100 (no GPM), n=16 logprobs=5 requests on Llama-3.1-8B", 106,
    spec=A100, n=1, dur=320, kind="vllm", model=L8, rate=1.6, w=(115, 215), every=14.0, n_param=16,
    logprobs=5, out=300, max_tokens=512, lengths=LOGP, cfg=dict(max_batched_tokens=2048))

# ------------------------------------------------------------------ prefill_interference
add("prefill_vllm_rag_burst_h100", "prefill", "prefill_interference", F.b_prefill, "engine",
    "a RAG batch job sends 10-16k-token prompts at ~1/s: every step carries an 8192-token "
    "prefill chunk (~0.2 s of GEMM at the power cap) and the running decodes' ITL follows it", 201,
    spec=H100, n=1, dur=330, kind="vllm", model=L8, rate=5.0, w=(120, 210), long_rate=1.0,
    long_prompt=(10000, 16000), lengths=CHAT)
add("prefill_vllm_tp4_h200", "prefill", "prefill_interference", F.b_prefill, "engine",
    "70B TP4 on H200: document summarisation prompts (8-16k) at 0.9/s, prefill-bound steps", 202,
    spec=H200, n=4, dur=330, kind="vllm", model=L70, rate=2.2, w=(130, 220), long_rate=0.9,
    long_prompt=(8000, 16000), lengths=CHAT)
add("prefill_sglang_h100", "prefill", "prefill_interference", F.b_prefill, "engine",
    "SGLang schedules prefill first: while long prompts (10-24k) keep arriving, extend batches "
    "run back to back and decodes get a step only between them", 203,
    spec=H100, n=1, dur=320, kind="sglang", model=Q7, rate=5.0, w=(115, 205), long_rate=1.1,
    long_prompt=(10000, 24000), lengths=CHAT)
add("prefill_sglang_tp8_h200", "prefill", "prefill_interference", F.b_prefill, "engine",
    "Qwen2.5-72B TP8 SGLang: a burst of 20-30k-token prompts", 204,
    spec=H200, n=8, dur=330, kind="sglang", model=Q72, rate=5.0, w=(140, 220), long_rate=1.0,
    long_prompt=(20000, 30000), lengths=CHAT)
add("prefill_vllm_a100", "prefill", "prefill_interference", F.b_prefill, "engine",
    "A100, max_num_batched_tokens 2048: 6-12k prompts at 0.8/s", 205,
    spec=A100, n=1, dur=320, kind="vllm", model=L8, rate=2.0, w=(120, 210), long_rate=0.8,
    long_prompt=(6000, 12000), lengths=CHAT, cfg=dict(max_batched_tokens=2048))

# ------------------------------------------------------------------ collective_straggler
add("straggler_vllm_tp4_clock750_h100", "straggler", "collective_straggler", F.b_straggler_serving, (2,),
    "TP4 70B: GPU 2's clocks locked at 750 MHz (nvidia-smi -lgc left from a power test; NVML shows "
    "no throttle reason for it); every all-reduce waits for rank 2, the other GPUs spin in it", 301,
    spec=H100, n=4, dur=330, kind="vllm", model=L70, rate=1.8, w=(125, 235), slow=2, how="hold",
    mhz=750, lengths=CHAT)
add("straggler_sglang_tp8_thermal_h200", "straggler", "collective_straggler", F.b_straggler_serving, (5,),
    "TP8 Qwen-72B: GPU 5's airflow blocked (thermal resistance x3): it heats to its slowdown "
    "point and drops clocks; the seven others wait in every all-reduce", 302,
    spec=H200, n=8, dur=380, kind="sglang", model=Q72, rate=4.5, w=(110, 290), slow=5, how="thermal",
    r_mult=5.5, lengths=CHAT)
add("gridlock_vllm_tp8_clock600_h100", "straggler", "collective_straggler", F.b_straggler_serving, (6,),
    "serving TP gridlock: TP8 70B where GPU 6 is held at 600 MHz; steps crawl at the slow rank's "
    "pace, the queue grows without bound while seven GPUs read ~100% util at ~10% SM", 303,
    spec=H100, n=8, dur=330, kind="vllm", model=L70, rate=4.0, w=(120, 230), slow=6, how="hold",
    mhz=600, lengths=CHAT)
add("straggler_ddp4_thermal_h100", "straggler", "collective_straggler", F.b_straggler_train, (1,),
    "DDP on 4 GPUs, GPU 1 thermally throttled (cooling fault): its backward ends late, the gradient "
    "all-reduce keeps the other three spinning", 304,
    spec=H100, n=4, dur=380, w=(100, 300), slow=1, how="thermal", r_mult=3.3)
add("straggler_ddp8_clock900_h100_counter", "straggler", "collective_straggler", F.b_straggler_train, (3,),
    "DDP on 8 GPUs with a samples counter: GPU 3 held at 900 MHz; steps stretch ~1.9x", 305,
    spec=H100, n=8, dur=330, w=(120, 230), slow=3, how="hold", mhz=900, counter=True)
add("straggler_fsdp8_brake_h200_pinned", "straggler", "collective_straggler", F.b_straggler_train, (7,),
    "FSDP on 8 H200s (ranks meet at every layer's all-gather), GPU 7 in HW power-brake slowdown "
    "at 660 MHz; pinned to the job", 306,
    spec=H200, n=8, dur=330, w=(130, 240), slow=7, how="brake", mhz=660, mode="fsdp", pinned=True)
add("straggler_ddp8_thermal_a100", "straggler", "collective_straggler", F.b_straggler_train, (4,),
    "DDP on 8 A100s (no GPM), GPU 4 overheating and throttled", 307,
    spec=A100, n=8, dur=380, w=(100, 300), slow=4, how="thermal", r_mult=4.6, counter=True)

# ------------------------------------------------------------------ input_stall
add("input_dataloader_1g_h100_pinned", "input", "input_stall", F.b_input_stall, "all",
    "ResNet-50, 12 DataLoader workers: a new shard of full-size JPEGs makes each batch cost ~6x the "
    "CPU; the workers run at 100% of a core each and the GPU waits between bursts (saw-tooth)", 401,
    spec=H100, n=1, dur=320, w=(120, 220), slow=6.0, pinned=True)
add("input_workers0_h200_pinned", "input", "input_stall", F.b_input_stall, "all",
    "num_workers=0: the training thread itself decodes every batch; when the page cache is cold "
    "each batch costs ~0.5 s of its CPU and the GPU idles meanwhile", 402,
    spec=H200, n=1, dur=320, w=(110, 210), slow=40.0, workers=0, batch_cpu=0.012, pinned=True)
add("input_ddp4_h100_counter", "input", "input_stall", F.b_input_stall, "all",
    "DDP LLM pretraining on 4 GPUs; the tokenised shards move to an NFS share that serves them "
    "~45x slower: every rank waits for its loader, the samples counter steps slower", 403,
    spec=H100, n=4, dur=330, w=(120, 230), slow=45.0, counter=True, llm=True)
add("input_ddp8_h100", "input", "input_stall", F.b_input_stall, "all",
    "DDP on 8 GPUs, vision, no pin and no exporter: only GPU and host signals", 404,
    spec=H100, n=8, dur=320, w=(115, 215), slow=4.5, interval=2.0)
add("input_llm_1g_a100", "input", "input_stall", F.b_input_stall, "all",
    "A100 LLM fine-tune with on-the-fly tokenisation of long documents: the 4 workers fall behind", 405,
    spec=A100, n=1, dur=330, w=(120, 230), slow=40.0, llm=True, workers=4)

# ------------------------------------------------------------------ host_launch_jitter (eBPF)
_J = dict(threads=10, share=0.55, preempt=120.0, psi_floor=0.22)
add("jitter_vllm_8b_h100_ebpf", "jitter", "host_launch_jitter", F.b_host, "engine",
    "a co-located service pinned to the engine's cores steals them in CFS slices: the launching "
    "thread is off CPU for ms inside launches and synchronizes (eBPF long tail)", 501,
    spec=H100, n=1, dur=320, kind="vllm", model=L8, rate=7.0, w=(120, 215), ebpf=True, hog=_J,
    lengths=CHAT, cpus=64)
add("jitter_vllm_tp4_h200_ebpf", "jitter", "host_launch_jitter", F.b_host, "engine",
    "TP4 70B on H200 with eBPF: each worker's launch thread preempted", 502,
    spec=H200, n=4, dur=320, kind="vllm", model=L70, rate=2.4, w=(130, 225), ebpf=True,
    hog=dict(_J, share=0.5), lengths=CHAT, cpus=96)
add("jitter_sglang_h100_ebpf", "jitter", "host_launch_jitter", F.b_host, "engine",
    "SGLang scheduler thread preempted by an IRQ-heavy neighbour on its core", 503,
    spec=H100, n=1, dur=320, kind="sglang", model=Q7, rate=7.0, w=(115, 210), ebpf=True,
    hog=dict(_J, share=0.5, preempt=160.0), lengths=CHAT, cpus=64)
add("jitter_vllm_tp8_h100_ebpf", "jitter", "host_launch_jitter", F.b_host, "engine",
    "TP8 70B with eBPF at 0.5 s ticks: all eight workers share four cores with a log shipper", 504,
    spec=H100, n=8, dur=320, kind="vllm", model=L70, rate=3.5, w=(120, 215), ebpf=True,
    hog=dict(_J, share=0.5, threads=14), lengths=CHAT, cpus=96, interval=0.5)

# ------------------------------------------------------------------ host_cpu_contention (/proc)
_C = dict(threads=84, share=0.38, preempt=0.0, slow_scrape=0.08)
add("contention_vllm_8b_h100", "contention", "host_cpu_contention", F.b_host, "engine",
    "a `make -j84` on a 32-CPU host: the engine tree gets ~0.4 of its cores, PSI near 100%, "
    "run queue ~90; the batch grows while ITL p99 and TTFT climb", 601,
    spec=H100, n=1, dur=330, kind="vllm", model=L8, rate=9.0, w=(120, 225), hog=_C, lengths=CHAT,
    cfg=dict(max_num_seqs=96))
add("contention_sglang_7b_h200", "contention", "host_cpu_contention", F.b_host, "engine",
    "SGLang on H200 while a data-preprocessing job runs 3x the host's CPUs", 602,
    spec=H200, n=1, dur=330, kind="sglang", model=Q7, rate=9.0, w=(125, 230),
    hog=dict(_C, threads=100, share=0.34), lengths=CHAT)
add("contention_vllm_tp4_h100", "contention", "host_cpu_contention", F.b_host, "engine",
    "70B TP4: five processes of the engine (API, core, 4 workers) squeezed by a CPU-bound "
    "batch job on 48 CPUs", 603,
    spec=H100, n=4, dur=330, kind="vllm", model=L70, rate=2.4, w=(120, 225),
    hog=dict(_C, threads=130, share=0.36), lengths=CHAT, cpus=48)
add("contention_vllm_a100", "contention", "host_cpu_contention", F.b_host, "engine",
    "A100 (no GPM), 16-CPU VM shared with a compile job", 604,
    spec=A100, n=1, dur=330, kind="vllm", model=L8, rate=2.8, w=(120, 225),
    hog=dict(_C, threads=52, share=0.3), lengths=CHAT, cpus=16,
    cfg=dict(max_batched_tokens=2048))

# ------------------------------------------------------------------ tiny_kernels
add("tiny_plain_graph_h200_1g", "tiny", "tiny_kernels", F.b_tiny_plain, (0,),
    "a plain CUDA process (no engine) trains, then sits in a CUDA-graph replay loop of "
    "one-element kernels: 100% GPU-Util, 0.3% SM, ~123 W (the real H200 phase)", 701,
    spec=H200, n=1, dur=300, w=(110, 200), target=0)
add("tiny_plain_graph_h100_4g", "tiny", "tiny_kernels", F.b_tiny_plain, (2,),
    "four independent single-GPU jobs; the one on GPU 2 goes hollow (graph of tiny kernels)", 702,
    spec=H100, n=4, dur=300, w=(120, 210), target=2, interval=0.5)
add("tiny_plain_graph_h100_8g_pinned", "tiny", "tiny_kernels", F.b_tiny_plain, (5,),
    "8-GPU box, matmul benchmarks; GPU 5's process pinned with -p spins on graph replays", 703,
    spec=H100, n=8, dur=300, w=(115, 205), target=5, before="matmul", after="matmul",
    others="matmul", pinned=True)
add("tiny_wedged_vllm_h100", "tiny", "tiny_kernels", F.b_tiny_wedged, "engine",
    "the vLLM worker is stuck replaying a graph of one-element kernels (a wedged step): "
    "GPU-Util 100%, SM ~1%, no tokens; requests pile up until it comes back", 704,
    spec=H100, n=1, dur=300, kind="vllm", model=L8, rate=4.0, w=(130, 200), lengths=CHAT)
add("tiny_wedged_sglang_h200", "tiny", "tiny_kernels", F.b_tiny_wedged, "engine",
    "SGLang scheduler TP0 wedged on a tiny-kernel loop for a minute", 705,
    spec=H200, n=1, dur=300, kind="sglang", model=Q7, rate=5.0, w=(120, 185), lengths=CHAT)

# ------------------------------------------------------------------ memory_bandwidth
add("membw_8servers_gpu3_h100", "membw", "memory_bandwidth", F.b_eight_servers, (3,),
    "eight independent vLLM servers; the one on GPU 3 (the one gputop watches) gets 20-30k-token "
    "agent contexts: paged attention reads tens of GB of KV per step, DRAM ~90%, ITL ~3x; the "
    "other seven stay busy and healthy", 801,
    spec=H100, dur=330, model=L8, rate=5.0, w=(120, 230), target=3, patho="memory_bandwidth",
    long_rate=0.35)
add("membw_vllm_longctx_h100", "membw", "memory_bandwidth", F.b_membw, "engine",
    "Qwen2.5-7B (GQA 4 KV heads) with 18-28k-token contexts, ~30 at once: decode reads KV, not "
    "weights; memory-bound at ~90% of HBM, tensor idle", 802,
    spec=H100, n=1, dur=330, kind="vllm", model=Q7, rate=5.0, w=(120, 230), long_rate=0.7,
    ctx=(18000, 28000), lengths=CHAT)
add("membw_sglang_longctx_a100", "membw", "memory_bandwidth", F.b_membw, "engine",
    "A100 SGLang, long contexts: only NVML's memory-controller util shows it (no GPM)", 803,
    spec=A100, n=1, dur=330, kind="sglang", model=Q7, rate=2.0, w=(120, 230), long_rate=0.4,
    ctx=(20000, 30000), lengths=CHAT)
add("membw_vllm_tp4_h200_bigbatch", "membw", "memory_bandwidth", F.b_membw, "engine",
    "70B TP4 on H200, a batch client with 12-20k contexts and long answers", 804,
    spec=H200, n=4, dur=330, kind="vllm", model=L70, rate=1.5, w=(125, 235), long_rate=0.6,
    ctx=(16000, 24000), lengths=CHAT)

# ------------------------------------------------------------------ throttling
add("throttle_thermal_vllm_h100", "throttle", "throttling", F.b_throttle_serving, "engine",
    "cooling fault on a 1-GPU server: the die reaches its slowdown temperature and clocks fall "
    "to ~1000 MHz ('thermal (sw)'), compute and, below ~60% clock, bandwidth follow", 901,
    spec=H100, n=1, dur=380, kind="vllm", model=L8, rate=8.0, w=(100, 300), how="thermal",
    r_mult=3.4, lengths=CHAT)
add("throttle_brake_sglang_h200", "throttle", "throttling", F.b_throttle_serving, "engine",
    "HW power brake asserted (PSU event): 'hw slowdown' + 'power brake' at ~700 MHz", 902,
    spec=H200, n=1, dur=320, kind="sglang", model=Q7, rate=7.0, w=(120, 220), how="brake",
    mhz=705, lengths=CHAT)
add("throttle_brake_vllm_tp4_h100", "throttle", "throttling", F.b_throttle_serving, "engine",
    "rack power brake on all four GPUs of a TP4 engine: uniformly slow, no odd one out", 903,
    spec=H100, n=4, dur=320, kind="vllm", model=L70, rate=1.8, w=(120, 220), how="brake",
    mhz=690, lengths=CHAT)
add("throttle_thermal_train_h100", "throttle", "throttling", F.b_throttle_train, "all",
    "single-GPU pretraining in a hot aisle: thermal slowdown, step time up ~1.6x", 904,
    spec=H100, n=1, dur=380, w=(100, 300), how="thermal")
add("throttle_brake_ddp8_h200_counter", "throttle", "throttling", F.b_throttle_train, "all",
    "all eight GPUs of a DDP job in HW slowdown at 660 MHz (chassis power event)", 905,
    spec=H200, n=8, dur=320, w=(120, 220), how="brake", mhz=660, counter=True)
add("throttle_thermal_vllm_a100", "throttle", "throttling", F.b_throttle_serving, "engine",
    "A100 with a failed fan: thermal slowdown on a serving GPU", 906,
    spec=A100, n=1, dur=380, kind="vllm", model=L8, rate=3.0, w=(100, 300), how="thermal",
    r_mult=5.2, lengths=CHAT, cfg=dict(max_batched_tokens=2048))

# ------------------------------------------------------------------ kv_pressure
add("kv_vllm_8b_h100_preempt", "kv", "kv_pressure", F.b_kv, "engine",
    "gpu_memory_utilization 0.5 and a wave of 16-28k-token conversations with long answers: the "
    "block pool fills, vLLM preempts (recompute) the newest requests, others wait for blocks", 1001,
    spec=H100, n=1, dur=340, kind="vllm", model=L8, rate=4.0, w=(120, 220), long_rate=0.35,
    ctx=(16000, 28000), out=(300, 1500), lengths=CHAT, cfg=dict(mem_fraction=0.5))
add("kv_sglang_8b_h100_retract", "kv", "kv_pressure", F.b_kv, "engine",
    "SGLang's new_token_ratio has decayed to 0.1 when a batch job submits 16 long generations "
    "(3.5-5.5k tokens) every 40 s: admitted together, they outgrow the token pool mid-decode and "
    "the scheduler retracts requests, then queues the rest", 1002,
    spec=H100, n=1, dur=380, kind="sglang", model=L8, rate=4.0, w=(120, 200), long_rate=0.2,
    ctx=(1500, 3000), out=(4000, 6000), max_tokens=8192, batch=(40, 22), lengths=CHAT,
    cfg=dict(mem_fraction=0.5))
add("kv_vllm_70b_tp4_h100", "kv", "kv_pressure", F.b_kv, "engine",
    "70B TP4 with a small pool (0.62): long-context agent traffic, preemption storm", 1003,
    spec=H100, n=4, dur=340, kind="vllm", model=L70, rate=1.5, w=(125, 225), long_rate=0.25,
    ctx=(18000, 30000), out=(800, 2500), lengths=CHAT, cfg=dict(mem_fraction=0.62))
add("kv_sglang_a100_retract", "kv", "kv_pressure", F.b_kv, "engine",
    "SGLang on A100 with mem_fraction_static 0.55 and the same batch job: retractions", 1004,
    spec=A100, n=1, dur=380, kind="sglang", model=L8, rate=1.5, w=(120, 200), long_rate=0.2, interval=2.0,
    ctx=(1500, 3000), out=(4000, 6000), max_tokens=8192, batch=(40, 22), lengths=CHAT,
    cfg=dict(mem_fraction=0.55))
add("kv_vllm_13b_mha_h200", "kv", "kv_pressure", F.b_kv, "engine",
    "Llama-2-13B (MHA: 800 KiB of KV per token) on H200: 3-4k-token chats with long answers "
    "fill the pool", 1005,
    spec=H200, n=1, dur=340, kind="vllm", model=L13, rate=3.0, w=(120, 225), long_rate=1.2,
    ctx=(3000, 4000), out=(600, 1000), lengths=W.Lengths(prompt_max=3500), cfg=dict(max_model_len=4096))

# ------------------------------------------------------------------ gpu_shared
add("shared_vllm_notebook_h100", "shared", "gpu_shared", F.b_shared_serving, "engine",
    "a notebook fine-tune starts on the engine's GPU (0.7 of VRAM left to the engine): the GPU "
    "time-slices the two contexts, the engine's steps take ~1.7x", 1101,
    spec=H100, n=1, dur=320, kind="vllm", model=L8, rate=5.0, w=(120, 220), lengths=CHAT,
    cfg=dict(mem_fraction=0.7), mem_gib=14)
add("shared_sglang_second_infer_h200", "shared", "gpu_shared", F.b_shared_serving, "engine",
    "another team's small inference server lands on the same H200", 1102,
    spec=H200, n=1, dur=320, kind="sglang", model=Q7, rate=6.0, w=(110, 215), mix="infer_small",
    duty=0.7, user="bob", cmd="python3 -m tgi_lite.serve --port 9001", mem_gib=18, lengths=CHAT,
    cfg=dict(mem_fraction=0.8))
add("shared_8servers_gpu5_h100", "shared", "gpu_shared", F.b_eight_servers, (5,),
    "eight servers; a notebook kernel opens a context on GPU 5 (the watched one) and trains", 1103,
    spec=H100, dur=320, model=L8, rate=5.0, w=(120, 220), target=5, patho="gpu_shared")
add("shared_train_1g_h100", "shared", "gpu_shared", F.b_shared_train, (0,),
    "a pretraining job; another user's LoRA fine-tune starts on the same GPU", 1104,
    spec=H100, dur=320, w=(120, 220), pinned=True)
add("shared_vllm_tp4_gpu2_h100", "shared", "gpu_shared", F.b_shared_serving, (2,),
    "TP4 engine; a profiling script opens a context on GPU 2 and runs a loop: rank 2 slows and "
    "the others wait in its all-reduces (a straggler whose cause is the second process)", 1105,
    spec=H100, n=4, dur=320, kind="vllm", model=L70, rate=1.8, w=(125, 225), target=2,
    mix="train", duty=0.9, user="carol", cmd="python3 profile_kernels.py", mem_gib=9, lengths=CHAT,
    cfg=dict(mem_fraction=0.85))

# ------------------------------------------------------------------ healthy look-alikes
add("healthy_vllm_low_h100", "healthy", None, F.b_healthy_serving, None,
    "steady low load (1 req/s): util in bursts, mostly idle gaps", 1201,
    spec=H100, n=1, dur=300, kind="vllm", model=L8, rate=1.0, lengths=CHAT)
add("healthy_vllm_tp4_high_h200", "healthy", None, F.b_healthy_serving, None,
    "70B TP4 at high but sustainable load", 1202,
    spec=H200, n=4, dur=300, kind="vllm", model=L70, rate=2.6, lengths=CHAT)
add("healthy_sglang_mid_h100", "healthy", None, F.b_healthy_serving, None,
    "SGLang at medium load with bursts", 1203,
    spec=H100, n=1, dur=300, kind="sglang", model=Q7, rate=6.0, lengths=CHAT)
add("healthy_traffic_falls_long_seqs_h100", "healthy", None, F.b_fall_to_tenth, None,
    "traffic falls to a tenth over two minutes while six 8k-token generations keep GPU-Util ~96%: "
    "tokens/s drops because demand did", 1204,
    spec=H100, n=1, dur=330, kind="vllm", model=L8, rate=9.0)
add("healthy_reload_vllm_h100", "healthy", None, F.b_reload, None,
    "model reload: endpoint gone ~40 s, VRAM empties and refills, counters restart, slow start", 1205,
    spec=H100, n=1, dur=330, kind="vllm", model=L8, rate=6.0, t_down=130, gone=40, lengths=CHAT)
add("healthy_reload_sglang_tp4_h200", "healthy", None, F.b_reload, None,
    "SGLang TP4 restart (~55 s to load), load balancer ramps traffic back over two minutes", 1206,
    spec=H200, n=4, dur=360, kind="sglang", model=L70, rate=2.2, t_down=120, gone=55,
    slow_start=120.0, lengths=CHAT)
add("healthy_growing_with_10k_prompt_h100", "healthy", None, F.b_growing_10k, None,
    "a workload growing 5x over the trace with one 10k-token prompt in the middle", 1207,
    spec=H100, n=1, dur=330, kind="vllm", model=L8, rate=4.0, lengths=CHAT)
add("healthy_prefix_heavy_sglang_h100", "healthy", None, F.b_healthy_serving, None,
    "multi-turn chat: ~85% of prompt tokens are radix-cache hits (never computed)", 1208,
    spec=H100, n=1, dur=300, kind="sglang", model=Q7, rate=7.0,
    lengths=W.Lengths(prompt_median=3000, prompt_max=12000, prefix=600, prefix_frac=1.0,
                      extra_cached_frac=0.85))
add("healthy_bursty_vllm_h100", "healthy", None, F.b_healthy_serving, None,
    "bursty arrivals: 3x bursts every ~25 s", 1209,
    spec=H100, n=1, dur=300, kind="vllm", model=L8, rate=4.0, bursts=25.0, lengths=CHAT)
add("healthy_saturated_by_demand_vllm_h100", "healthy", None, F.b_healthy_serving, None,
    "demand above capacity: the queue grows, throughput is at its max, per-token latency normal "
    "for a 256-sequence batch", 1210,
    spec=H100, n=1, dur=300, kind="vllm", model=L8, rate=30.0, bursts=0, lengths=CHAT)
add("healthy_idle_kv_reserved_h100", "healthy", None, F.b_idle_reserved, None,
    "an engine up and idle: VRAM ~90% (the KV pool is allocated), 0% util", 1211,
    spec=H100, n=1, dur=240, kind="vllm", model=L8)
add("healthy_train_eval_ckpt_1g_pinned", "healthy", None, F.b_healthy_train, None,
    "1-GPU pretraining, periodic eval (forward only) and checkpoints (GPU idle ~18 s)", 1212,
    spec=H100, n=1, dur=330, eval_every=40, ckpt_every=150.0, pinned=True)
add("healthy_ddp4_counter_h100", "healthy", None, F.b_healthy_train, None,
    "DDP on 4 GPUs, samples counter jumps once per ~2.2 s step", 1213,
    spec=H100, n=4, dur=300, counter=True)
add("healthy_ddp8_rank0_ckpt_h100", "healthy", None, F.b_healthy_train, None,
    "DDP on 8 GPUs; rank 0 checkpoints for ~18 s while ranks 1-7 spin in a barrier "
    "(100% util, ~10% SM): a healthy phase that looks hollow", 1214,
    spec=H100, n=8, dur=330, ckpt_every=160.0, ckpt_s=18.0, rank0=True)
add("healthy_power_cap_train_h100", "healthy", None, F.b_healthy_train, None,
    "a matmul-heavy step loop at the 700 W cap: 'power cap' and ~1450 MHz all along, healthy", 1215,
    spec=H100, n=1, dur=300, cfg=dict(tensor=0.88, sm=0.96, occ=0.2, dram=0.2, micro=8,
                                      compute_s=2.6, opt_s=0.05))
add("healthy_8servers_h100", "healthy", None, F.b_eight_servers, None,
    "eight healthy independent servers, watched on GPU 3", 1216,
    spec=H100, dur=300, model=L8, rate=5.0)
add("healthy_blip_one_request_h100", "healthy", None, F.b_blip, None,
    "a quiet minute with one slow request (6.5k prompt, 2k answer): one sequence decoding", 1217,
    spec=H100, n=1, dur=300, kind="vllm", model=L8)
add("healthy_vllm_a100", "healthy", None, F.b_healthy_serving, None,
    "A100 (no GPM) serving at moderate load", 1218,
    spec=A100, n=1, dur=300, kind="vllm", model=L8, rate=2.0, lengths=CHAT, interval=2.0,
    cfg=dict(max_batched_tokens=2048))
add("healthy_sglang_tp8_saturated_h200", "healthy", None, F.b_healthy_serving, None,
    "SGLang TP8 72B running at its maximum: queue present, throughput flat", 1219,
    spec=H200, n=8, dur=300, kind="sglang", model=Q72, rate=24.0, bursts=0, lengths=CHAT)
add("healthy_vllm_ebpf_h100", "healthy", None, F.b_healthy_serving, None,
    "vLLM with --ebpf on a quiet host: ~5 us launches, one graph launch per decode step", 1220,
    spec=H100, n=1, dur=300, kind="vllm", model=L8, rate=6.0, ebpf=True, lengths=CHAT)
add("healthy_plain_matmul_a100", "healthy", None, F.b_plain, None,
    "a GEMM benchmark on an A100 (no GPM) at its 400 W cap", 1221,
    spec=A100, n=1, dur=240)
add("healthy_ddp8_sharded_ckpt_h200", "healthy", None, F.b_healthy_train, None,
    "DDP on 8 H200s with sharded checkpoints: every rank writes, all GPUs idle ~12 s", 1222,
    spec=H200, n=8, dur=330, ckpt_every=150.0, ckpt_s=12.0, rank0=False, counter=True)
add("healthy_sglang_tp4_summaries_h100", "healthy", None, F.b_healthy_serving, None,
    "SGLang TP4 summarising 3k-token documents at a steady rate: prefill-heavy, the power cap "
    "binding in stretches, clocks wobbling", 1223,
    spec=H100, n=4, dur=300, kind="sglang", model=Q32, rate=4.0, bursts=0,
    lengths=W.Lengths(prompt_median=3000, prompt_sigma=0.5, prompt_max=12000, out_median=120,
                      prefix=350, prefix_frac=0.85))
