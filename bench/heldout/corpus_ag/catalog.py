"""The week of tickets: ~60 traces, each a situation the SRE team attached a recording to."""

from __future__ import annotations

import math

from .common import BOARDS, GiB, Proc
from .serving import serve
from .training import job

WEEK0 = 1781049600.0  # Monday 00:00 UTC of the week
E = []  # (name, family, cause, culprit, window_rel, engine, gpus, board, tick, note, start, build)


def at(day, hour, minute=0):
    return WEEK0 + day * 86400 + hour * 3600 + minute * 60


def add(name, family, cause, culprit, window, engine, gpus, board, tick, note, start, build):
    E.append((name, family, cause, culprit, window, engine, gpus, board, tick, note, start, build))


def win(a, b, d, base=None):
    base = base or {}
    return lambda t: d if a <= t < b else base


def episodes(spans, d):
    return lambda t: d if any(a <= t < b for a, b in spans) else {}


def diurnal(lo, hi, period=900, phase=0.0):
    return lambda t: lo + (hi - lo) * 0.5 * (1 + math.sin(2 * math.pi * t / period + phase))


def bursty(base, peak, every=120, width=25):
    return lambda t: peak if (t % every) < width else base


def other_tenant(gpu, mem_gib, name="python3", cmd="python3 eval_sweep.py --model qwen7b", pid=77123, user="research"):
    return Proc(pid, gpu, name, cmd, WEEK0 - 5000, mem=mem_gib * GiB, rss=5 * GiB, user=user)


# ======================================================================= pathologies
# --- oversized_request
S = at(0, 14, 5)
add("p99-ttft-70b-pool-n16-logprobs", "serving", "oversized_request", None, (240, 470), "vllm", 4, "H100 SXM", 1.0,
    "One tenant's n=16, logprobs=20, max_tokens=4096 request co-scheduled with everyone on the 70B pool; ITL and TTFT tripled for ~4 minutes.",
    S, lambda s: serve("p99-ttft-70b-pool-n16-logprobs", board="H100 SXM", model="llama70b-fp8", tp=4, start=s, duration=720,
                       rate=lambda t: 3.0, prompt=lambda t: 1800, out=lambda t: 350,
                       mods=lambda t: dict(inject=((900, 4096, 16),)) if 240 <= t < 241 else
                       (dict(extra_host_s=0.030, extra_gpu_s=0.012) if 240 <= t < 470 else {})))
S = at(1, 10, 20)
add("sglang-a100-n8-logprobs-mild", "serving", "oversized_request", None, (180, 300), "sglang", 1, "A100 80GB", 1.0,
    "Customer sends n=8 with top-20 logprobs on the Qwen 7B endpoint; ITL up ~40% for two minutes while it ran.",
    S, lambda s: serve("sglang-a100-n8-logprobs-mild", engine="sglang", board="A100 80GB", model="qwen7b", start=s, duration=480,
                       rate=lambda t: 5.0, prompt=lambda t: 1200, out=lambda t: 250,
                       mods=lambda t: dict(inject=((700, 1500, 8),)) if 180 <= t < 181 else
                       (dict(extra_host_s=0.006) if 180 <= t < 300 else {})))
S = at(2, 16, 40)
add("h200-best-of-json-huge-max-tokens", "serving", "oversized_request", None, (120, 560), "vllm", 1, "H200", 1.0,
    "JSON-mode request with n=12 and max_tokens=16k from the eval team on the public Llama 8B pool; everyone's ITL doubled for 7 minutes.",
    S, lambda s: serve("h200-best-of-json-huge-max-tokens", board="H200", model="llama8b", start=s, duration=780,
                       rate=lambda t: 9.0, prompt=lambda t: 900, out=lambda t: 220,
                       mods=lambda t: dict(inject=((2200, 5600, 12),)) if 120 <= t < 121 else
                       (dict(extra_host_s=0.014, extra_gpu_s=0.004) if 120 <= t < 560 else {})))

# --- prefill_interference
S = at(0, 9, 30)
add("cheap-tier-100k-prompts-l40s", "serving", "prefill_interference", None, (200, 560), "vllm", 1, "L40S", 1.0,
    "Cheap-tier customer pasting 100k-token documents every ~20 s; chunked prefill of those prompts doubles everyone's ITL.",
    S, lambda s: serve("cheap-tier-100k-prompts-l40s", board="L40S", model="llama8b-fp8", start=s, duration=720, kv_fp8=True,
                       rate=lambda t: 2.5, prompt=lambda t: 1000, out=lambda t: 300, chunk=4096,
                       mods=lambda t: dict(inject=((100000, 200, 1),)) if 200 <= t < 560 and int(t) % 20 == 0 else {}))
S = at(3, 11, 0)
add("rag-burst-sglang-h100-tp2", "serving", "prefill_interference", None, (300, 420), "sglang", 2, "H100 SXM", 1.0,
    "A RAG customer's batch of 32k-token prompts landed at once on the 70B TP2 replica; decode ITL up 3x for two minutes.",
    S, lambda s: serve("rag-burst-sglang-h100-tp2", engine="sglang", board="H100 SXM", model="llama70b-fp8", tp=2, start=s, duration=660,
                       rate=lambda t: 2.0, prompt=lambda t: 1500, out=lambda t: 300, chunk=16384,
                       mods=lambda t: dict(inject=tuple((32000, 150, 1) for _ in range(5))) if 300 <= t < 420 and int(t) % 8 == 0 else {}))
S = at(4, 15, 10)
add("tgi-legacy-long-prompts-mild", "serving", "prefill_interference", None, (120, 330), "tgi", 2, "A100 80GB", 1.0,
    "Legacy customer on TGI started sending 12k-token contracts; TPOT of the other requests up ~40%.",
    S, lambda s: serve("tgi-legacy-long-prompts-mild", engine="tgi", board="A100 80GB", model="mistral24b", tp=2, start=s, duration=480,
                       rate=lambda t: 1.5, prompt=lambda t: 900, out=lambda t: 250, chunk=2048,
                       mods=lambda t: dict(inject=((12000, 200, 1),)) if 120 <= t < 330 and int(t) % 6 == 0 else {}))

# --- collective_straggler
S = at(1, 2, 0)
add("fsdp-rank5-row-remap-clock", "training", "collective_straggler", (5,), (0, 900), "trainer", 8, "H100 SXM", 1.0,
    "RL post-training FSDP job: GPU 5 has a pending row remap and runs ~15% slower clocks; the other seven ranks wait in NCCL every step.",
    S, lambda s: job("fsdp-rank5-row-remap-clock", start=s, duration=900, mods=lambda t: dict(slow_gpu=(5, 1.15), cap_mhz=1710),
                     cmd="torchrun --nproc-per-node 8 -m openrlhf.cli.train_ppo --actor llama8b --fsdp"))
S = at(2, 3, 30)
add("gb200-tp4-degraded-nvlink-gpu2", "serving", "collective_straggler", (2,), (150, 600), "vllm", 4, "GB200", 1.0,
    "GB200 tray: GPU 2's NVLink dropped to a degraded width mid-trace; the TP4 DeepSeek-style replica serves ~30% fewer tokens, GPU 2's link traffic lags.",
    S, lambda s: serve("gb200-tp4-degraded-nvlink-gpu2", board="GB200", model="gptoss120b", tp=4, start=s, duration=600,
                       rate=lambda t: 14.0, prompt=lambda t: 1500, out=lambda t: 400,
                       mods=win(150, 600, dict(slow_gpu=(2, 1.45), nvlink_frac=0.35, step_mult=1.3))))
S = at(5, 1, 0)
add("b200-ddp-rank3-thermal-straggler", "training", "collective_straggler", (3,), (240, 720), "trainer", 8, "B200", 1.0,
    "Reward-model training on B200: GPU 3's cold plate has poor contact; it hits thermal slowdown and the other ranks wait in all-reduce.",
    S, lambda s: job("b200-ddp-rank3-thermal-straggler", board="B200", start=s, duration=720, comp_s=0.5, mem_gib=120,
                     mods=lambda t: dict(cool_gpu=(3,), cooling=1.0 + min(1.0, t / 240) * 1.8),
                     cmd="torchrun --nproc-per-node 8 train_rm.py --model llama70b --ddp"))

# --- input_stall
S = at(0, 22, 0)
add("fsdp-loader-stalls-20pct-mild", "training", "input_stall", None, (120, 600), "trainer", 8, "H100 SXM", 1.0,
    "SFT job reading shards from object storage: about every fifth step waits ~1 s for the data loader; tokens/s down ~20%.",
    S, lambda s: job("fsdp-loader-stalls-20pct-mild", start=s, duration=600,
                     mods=win(120, 600, dict(data_wait=1.0, data_every=5, loader_busy=0.15)),
                     cmd="torchrun --nproc-per-node 8 sft.py --data s3://ft-data/shards"))
S = at(3, 2, 0)
add("reward-scoring-object-store-stall", "other", "input_stall", None, (60, 540), "trainer", 4, "L40S", 2.0,
    "Reward-model scoring job: the rollout parquet fetch from object storage slowed; GPUs sit idle most of each step waiting for batches.",
    S, lambda s: job("reward-scoring-object-store-stall", board="L40S", n_gpus=4, start=s, duration=540, tick=2.0, comp_s=0.35, comm_s=0.0,
                     mem_gib=30, mods=win(60, 540, dict(data_wait=1.1, loader_busy=0.05)), work_unit="samples", tokens_per_step=256,
                     cmd="python3 score_rollouts.py --rm skywork-rm-8b --data s3://rl/rollouts", loader_cores=6))
S = at(4, 23, 0)
add("rl-trainer-tokenize-loader-bound", "training", "input_stall", None, (0, 480), "trainer", 4, "H200", 1.0,
    "RL trainer's data loader tokenizes on the fly with 2 workers; GPUs idle ~45% of the time waiting for batches.",
    S, lambda s: job("rl-trainer-tokenize-loader-bound", board="H200", n_gpus=4, start=s, duration=480, comp_s=0.6, loader_cores=2,
                     mods=lambda t: dict(data_wait=0.55, loader_busy=1.0), cmd="torchrun --nproc-per-node 4 grpo_train.py"))

# --- host_launch_jitter (eBPF probes on)
S = at(1, 13, 0)
add("eager-lora-launch-jitter-h100", "serving", "host_launch_jitter", None, (180, 480), "vllm", 1, "H100 SXM", 1.0,
    "Per-customer LoRA endpoint runs eager (no CUDA graphs); a log shipper waking on the same cores preempts the launch thread, eBPF shows ms-long launches.",
    S, lambda s: serve("eager-lora-launch-jitter-h100", model="llama8b", graphs=False, ebpf=True, start=s, duration=600,
                       rate=lambda t: 4.0, lora=("cust-acme-v3", "cust-zeta-sql", "cust-nimbus"),
                       mods=win(180, 480, dict(jitter=0.004, other_cpu=2.0))))
S = at(3, 17, 0)
add("sglang-h200-launch-jitter-episodes-mild", "serving", "host_launch_jitter", None, (150, 450), "sglang", 1, "H200", 1.0,
    "Intermittent: the metrics agent's 30 s scrape bursts preempt the SGLang scheduler thread; launch p99 spikes to ms, ITL +40% in those bursts.",
    S, lambda s: serve("sglang-h200-launch-jitter-episodes-mild", engine="sglang", board="H200", model="qwen7b", ebpf=True, start=s,
                       duration=600, rate=lambda t: 6.0,
                       mods=lambda t: dict(jitter=0.0025, other_cpu=1.0) if 150 <= t < 450 and (t % 30) < 12 else {}))
S = at(5, 9, 0)
add("a100-trainer-launch-jitter", "training", "host_launch_jitter", None, (100, 600), "trainer", 2, "A100 80GB", 1.0,
    "Eval-time fine-tune with small kernels: launch thread descheduled by a co-located backup agent; eBPF shows multi-ms cudaLaunchKernel tails, steps 2x slower.",
    S, lambda s: job("a100-trainer-launch-jitter", board="A100 80GB", n_gpus=2, start=s, duration=600, comp_s=0.25, ebpf=True,
                     kernels_per_step=6000, mods=win(100, 600, dict(jitter=0.00006, launch_bound=0.9, other_cpu=1.5)),
                     cmd="torchrun --nproc-per-node 2 lora_ft.py"))

# --- host_cpu_contention
S = at(0, 11, 0)
add("cost-migration-cgroup-quota-h100", "serving", "host_cpu_contention", None, (0, 600), "vllm", 2, "H100 SXM", 1.0,
    "After the cost-saving migration the pod's CPU limit is 2 cores for a TP2 engine; cgroup throttles most periods and tokens/s fell.",
    S, lambda s: serve("cost-migration-cgroup-quota-h100", model="qwen32b-awq", tp=2, start=s, duration=600, quota=2.0,
                       rate=lambda t: 5.0, cpus=32))
S = at(2, 20, 0)
add("log-shipper-sidecar-eats-cpu-mild", "serving", "host_cpu_contention", None, (240, 600), "vllm", 1, "L4", 1.0,
    "Log shipper sidecar started compressing a backlog on a 4-vCPU L4 node; run queue and PSI up, ITL +35%.",
    S, lambda s: serve("log-shipper-sidecar-eats-cpu-mild", board="L4", model="llama3b", start=s, duration=600, cpus=4,
                       rate=lambda t: 2.0, prompt=lambda t: 800, out=lambda t: 200, mods=win(240, 600, dict(other_cpu=3.2))))
S = at(4, 12, 0)
add("vlm-image-preproc-too-few-cores", "serving", "host_cpu_contention", None, (90, 600), "vllm", 1, "H100 PCIe", 1.0,
    "VLM endpoint on the new 8-core-per-GPU hosts: image decoding/resizing in the API process saturates the CPUs, the engine core loses CPU.",
    S, lambda s: serve("vlm-image-preproc-too-few-cores", board="H100 PCIe", model="qwen-vl7b", start=s, duration=600, cpus=8,
                       rate=lambda t: 4.0, prompt=lambda t: 2500, out=lambda t: 200, vision=True,
                       mods=win(90, 600, dict(tree_demand=9.0, other_cpu=1.0))))

# --- tiny_kernels
S = at(1, 8, 0)
add("embed-pool-l4-batch1-tiny", "serving", "tiny_kernels", None, (0, 480), "vllm", 1, "L4", 1.0,
    "Embedding pool: a client switched to one-text-per-request; the L4 reads 95% util but does little work, embeddings/s down 4x.",
    S, lambda s: job("embed-pool-l4-batch1-tiny", board="L4", n_gpus=1, start=s, duration=480, comp_s=0.004, comm_s=0.0, mem_gib=3,
                     sm_frac=0.12, tensor_frac=0.01, dram_frac=0.05, work_unit="samples", tokens_per_step=1, loader_cores=0,
                     host_gap=0.0002, engine=True, kind="vllm", cmd="python3 -m vllm.entrypoints.openai.api_server --model BAAI/bge-m3 --task embed"))
S = at(2, 1, 0)
add("rerank-eager-tiny-kernels-a10g", "other", "tiny_kernels", None, (100, 480), "none", 1, "A10G", 1.0,
    "Rerank batch job re-run without batching: thousands of tiny kernels per query; util pegged, throughput a fraction of yesterday.",
    S, lambda s: job("rerank-eager-tiny-kernels-a10g", board="A10G", n_gpus=1, start=s, duration=480, comp_s=0.02, comm_s=0.0, mem_gib=4,
                     engine=False, loader_cores=1, cmd="python3 rerank_batch.py --model bge-reranker-v2-m3",
                     mods=lambda t: dict(sm_mult=0.15, tensor_mult=0.03, comp_mult=0.1) if t >= 100 else {}))
S = at(5, 4, 0)
add("rl-reward-scoring-small-batches-h100", "other", "tiny_kernels", None, (0, 420), "trainer", 1, "H100 SXM", 1.0,
    "Reward scoring with batch size 1 on a 1B verifier: GPU-Util 97% with ~15% SM activity; samples/s far below the plan.",
    S, lambda s: job("rl-reward-scoring-small-batches-h100", n_gpus=1, start=s, duration=420, comp_s=0.006, comm_s=0.0, mem_gib=6,
                     sm_frac=0.14, tensor_frac=0.02, dram_frac=0.04, work_unit="samples", tokens_per_step=1, loader_cores=1,
                     host_gap=0.0003, cmd="python3 verify_rollouts.py --batch-size 1"))

# --- memory_bandwidth
S = at(0, 18, 0)
add("128k-tier-long-context-decode-h200", "serving", "memory_bandwidth", None, (200, 720), "sglang", 1, "H200", 1.0,
    "128k-context tier: agent sessions grew to 60-100k tokens each; decode is dominated by KV reads, ITL up 3x, DRAM bandwidth pegged.",
    S, lambda s: serve("128k-tier-long-context-decode-h200", engine="sglang", board="H200", model="llama8b", start=s, duration=720,
                       rate=lambda t: 0.25 if t >= 200 else 3.0, prompt=lambda t: 80000 if t >= 200 else 2000,
                       out=lambda t: 900 if t >= 200 else 300, hit=0.85))
S = at(3, 14, 0)
add("canary-dropped-fp8-kv-h100", "serving", "memory_bandwidth", None, (0, 600), "vllm", 1, "H100 SXM", 1.0,
    "Canary of the new engine version came up without --kv-cache-dtype fp8; KV reads doubled on the 16k-context pool, ITL +60%.",
    S, lambda s: serve("canary-dropped-fp8-kv-h100", model="llama8b", start=s, duration=600, rate=lambda t: 1.2,
                       prompt=lambda t: 16000, out=lambda t: 800, hit=0.7, version="0.12.0"))
S = at(4, 20, 0)
add("multi-turn-context-growth-a100-mild", "serving", "memory_bandwidth", None, (240, 600), "vllm", 2, "A100 80GB", 1.0,
    "Chat sessions on the Mistral 24B pool kept growing; contexts went 4k -> 24k and ITL rose ~45% at the same load.",
    S, lambda s: serve("multi-turn-context-growth-a100-mild", board="A100 80GB", model="mistral24b", tp=2, start=s, duration=600,
                       rate=lambda t: 1.5 if t < 240 else 0.9, prompt=lambda t: 4000 if t < 240 else 20000, out=lambda t: 500, hit=0.8))

# --- throttling
S = at(1, 15, 0)
add("rack-power-brake-h200-tp8", "serving", "throttling", None, (180, 480), "vllm", 8, "H200", 1.0,
    "Rack hit its power budget; the PDU asserted the power brake on all 8 boards of the DeepSeek node; clocks halved, tokens/s -35%.",
    S, lambda s: serve("rack-power-brake-h200-tp8", board="H200", model="dsv3", tp=8, start=s, duration=600, rate=lambda t: 3.5,
                       prompt=lambda t: 2000, out=lambda t: 500, mods=win(180, 480, dict(brake=True))))
S = at(2, 13, 0)
add("weak-pump-h200-gpu1-thermal", "serving", "throttling", (0,), (330, 900), "vllm", 1, "H200", 1.0,
    "Liquid-cooling loop with a weak pump on this node: the single-GPU Qwen replica's board climbs to the slowdown temperature and clocks down.",
    S, lambda s: _two_replicas(s))
S = at(5, 16, 0)
add("rtx-pro-hw-slowdown-mild", "serving", "throttling", (0,), (200, 330), "vllm", 1, "RTX PRO 6000", 1.0,
    "Workstation-class RTX PRO 6000 node: HW slowdown asserted for ~2 minutes (PSU sensor); ITL +40% while it was on.",
    S, lambda s: serve("rtx-pro-hw-slowdown-mild", board="RTX PRO 6000", model="gemma27b", start=s, duration=540, rate=lambda t: 1.5,
                       prompt=lambda t: 1200, out=lambda t: 300, mods=win(200, 330, dict(hw_gpu=(0,)))))

# --- kv_pressure
S = at(0, 16, 0)
add("70b-pool-kv-full-preemptions", "serving", "kv_pressure", None, (240, 660), "vllm", 4, "H100 SXM", 1.0,
    "p99 TTFT alert on the 70B pool: evening peak with long outputs filled the KV pool; preemptions every second and the queue grows.",
    S, lambda s: serve("70b-pool-kv-full-preemptions", model="llama70b", tp=4, start=s, duration=720, mem_util=0.9,
                       rate=lambda t: 2.0 if t < 240 else 6.0, prompt=lambda t: 3000, out=lambda t: 1500, max_seqs=256))
S = at(1, 20, 0)
add("moe-replica-sglang-retractions", "serving", "kv_pressure", None, (120, 600), "sglang", 8, "H200", 1.0,
    "One replica of the DeepSeek-style MoE deployment serves 30% fewer tokens: its KV pool is smaller (mem-fraction typo) and it retracts requests.",
    S, lambda s: serve("moe-replica-sglang-retractions", engine="sglang", model="dsv3", tp=8, board="H200", start=s, duration=600,
                       mem_util=0.68, pool_override=60000, rate=lambda t: 1.5 if t < 120 else 5.0, prompt=lambda t: 5000, out=lambda t: 1200))
S = at(3, 1, 0)
add("batch-lane-overnight-kv-thrash-mild", "serving", "kv_pressure", None, (300, 900), "vllm", 1, "L40S", 2.0,
    "Batch API lane overnight: jobs with 4k outputs pushed KV usage to 100%; mild preemption rate, queue slowly growing.",
    S, lambda s: serve("batch-lane-overnight-kv-thrash-mild", board="L40S", model="llama8b-fp8", kv_fp8=True, start=s, duration=900, tick=2.0,
                       pool_override=70000, rate=lambda t: 0.5 if t < 300 else 1.0, prompt=lambda t: 2000, out=lambda t: 3000))

# --- gpu_shared
S = at(1, 3, 0)
add("embed-node-mps-second-tenant", "serving", "gpu_shared", (0,), (120, 480), "vllm", 1, "L40S", 1.0,
    "Embedding/chat node uses time-slicing: another team's batch encoder landed on GPU 0 and takes ~half the SM time; ITL doubled.",
    S, lambda s: serve("embed-node-mps-second-tenant", board="L40S", model="llama8b-fp8", start=s, duration=480, rate=lambda t: 3.0,
                       mods=win(120, 480, dict(share=0.45, share_gpus=(0,), other_mem=10 * GiB,
                                               other_proc=other_tenant(0, 10, cmd="python3 encode_corpus.py --batch 512", pid=41777, user="search")))))
S = at(2, 9, 0)
add("stray-eval-on-serving-gpu3", "serving", "gpu_shared", (0,), (200, 600), "vllm", 1, "H100 SXM", 1.0,
    "A researcher's eval sweep was scheduled onto the GPU of this serving pod (the node's GPU 3, index 0 in the pod); that replica's ITL up 2x.",
    S, lambda s: _four_replicas_shared(s))
S = at(4, 5, 0)
add("a100-research-second-job-mild", "training", "gpu_shared", (1,), (180, 540), "trainer", 2, "A100 80GB", 1.0,
    "Someone started a notebook on GPU 1 of the DDP job; it takes ~20% of the SM time and the job's steps slowed ~20%.",
    S, lambda s: job("a100-research-second-job-mild", board="A100 80GB", n_gpus=2, start=s, duration=540, comp_s=0.7,
                     mods=win(180, 540, dict(slow_gpu=(1, 1.22), other_proc=other_tenant(1, 14, "python3", "python3 -m ipykernel_launcher -f kernel.json", 51234))),
                     extra=lambda t, i: dict(util=1.0, sm=0.95) if (i == 1 and 180 <= t < 540) else None,
                     cmd="torchrun --nproc-per-node 2 train.py"))

# --- spec_decode_rejected
S = at(0, 20, 0)
add("eagle3-acceptance-collapse-h200", "serving", "spec_decode_rejected", None, (240, 720), "vllm", 1, "H200", 1.0,
    "After the target model was swapped to the new fine-tune, the EAGLE-3 draft no longer matches: acceptance fell from 70% to 8%, tokens/s -45%.",
    S, lambda s: serve("eagle3-acceptance-collapse-h200", board="H200", model="llama8b", start=s, duration=720, rate=lambda t: 6.0,
                       spec=dict(kind="eagle3", k=4, accept=0.72), mods=win(240, 720, dict(accept=0.08))))
S = at(3, 19, 0)
add("ngram-spec-on-creative-traffic-sglang", "serving", "spec_decode_rejected", None, (180, 540), "sglang", 2, "H100 SXM", 1.0,
    "n-gram lookup speculation helped code traffic; a creative-writing customer arrived and acceptance collapsed, ITL per token worse than no spec.",
    S, lambda s: serve("ngram-spec-on-creative-traffic-sglang", engine="sglang", model="qwen32b-awq", tp=2, start=s, duration=540,
                       rate=lambda t: 3.0, spec=dict(kind="NGRAM", k=5, accept=0.55), mods=win(180, 540, dict(accept=0.12))))
S = at(5, 11, 0)
add("lora-eagle-mismatch-mild", "serving", "spec_decode_rejected", None, (150, 600), "vllm", 1, "H100 SXM", 1.0,
    "Customer LoRA traffic on the EAGLE-3 endpoint: the draft matches the base model only; acceptance went 65% -> 38%, ITL +40%.",
    S, lambda s: serve("lora-eagle-mismatch-mild", model="llama8b", start=s, duration=600, rate=lambda t: 5.0, lora=("cust-legal-v2",),
                       spec=dict(kind="eagle3", k=3, accept=0.65), mods=win(150, 600, dict(accept=0.38))))


def _two_replicas(s):
    """Two TP1 replicas on one H200 node; the weak pump cools GPU 1 badly."""
    return serve("weak-pump-h200-gpu1-thermal", board="H200", model="qwen7b", tp=1, start=s, duration=900,
                 rate=lambda t: 12.0, prompt=lambda t: 1500, out=lambda t: 400, n_gpus=1,
                 mods=lambda t: dict(cool_gpu=(0,), cooling=1.0 + 2.1 * min(1.0, t / 300)),
                 extra_procs=())


def _four_replicas_shared(s):
    return serve("stray-eval-on-serving-gpu3", model="llama8b", tp=1, start=s, duration=600, rate=lambda t: 6.0,
                 mods=win(200, 600, dict(share=0.5, share_gpus=(0,), other_mem=22 * GiB,
                                         other_proc=other_tenant(0, 22, cmd="python3 -m lm_eval --model hf --tasks mmlu", pid=60412))))


# ======================================================================= more pathologies (second wave)
S = at(6, 10, 0)
add("grammar-compile-huge-schema-cpu", "serving", "host_cpu_contention", None, (180, 420), "vllm", 1, "H100 SXM", 1.0,
    "Customers complain JSON mode is slow: one tenant's 3 MB JSON schema keeps the grammar backend compiling on the engine's CPU; scheduler thread starved.",
    S, lambda s: serve("grammar-compile-huge-schema-cpu", model="llama8b", start=s, duration=600, cpus=16, cores=4, rate=lambda t: 5.0,
                       mods=win(180, 420, dict(tree_demand=5.5))))
S = at(6, 14, 0)
add("b200-tp8-power-cap-lowered", "serving", "throttling", None, (0, 540), "sglang", 8, "B200", 1.0,
    "New B200 node type looks slower: its power limit was set to 600 W by the provisioning profile; all 8 boards sit at the cap with clocks cut.",
    S, lambda s: serve("b200-tp8-power-cap-lowered", engine="sglang", board="B200", model="dsv3", tp=8, start=s, duration=540,
                       rate=lambda t: 16.0, prompt=lambda t: 3000, out=lambda t: 400, chunk=16384,
                       mods=lambda t: dict(power_limit=560)))
S = at(6, 3, 0)
add("nccl-allreduce-stuck-rank6", "training", "collective_straggler", (6,), (300, 380), "trainer", 8, "H200", 1.0,
    "FSDP job: rank 6 stalled for ~80 s (its host thread stuck in a page-fault storm); seven ranks spin in the all-reduce at 100% util, tokens/s 0.",
    S, lambda s: job("nccl-allreduce-stuck-rank6", board="H200", start=s, duration=600, mem_gib=110,
                     mods=win(300, 380, dict(slow_gpu=(6, 12.0))),
                     extra=lambda t, i: dict(util=0.15, sm=0.02, tensor=0.0) if (i == 6 and 300 <= t < 380) else None,
                     cmd="torchrun --nproc-per-node 8 fsdp_pretrain.py"))
S = at(6, 18, 0)
add("cold-start-kv-pool-small-gemma-mild", "serving", "kv_pressure", None, (200, 540), "vllm", 1, "L40S", 1.0,
    "Autoscaled Gemma 27B replica came up with --gpu-memory-utilization 0.80 on an L40S: pool too small for the afternoon load, some preemptions and a queue.",
    S, lambda s: serve("cold-start-kv-pool-small-gemma-mild", board="L40S", model="gemma27b", start=s, duration=540, mem_util=0.95,
                       pool_override=28000, kv_fp8=False, rate=lambda t: 0.4 if t < 200 else 1.1, prompt=lambda t: 2500, out=lambda t: 600))
S = at(6, 21, 0)
add("eval-sweep-offline-tiny-batches", "other", "tiny_kernels", None, (60, 420), "none", 1, "H100 PCIe", 1.0,
    "Eval sweep harness switched to per-example HF generate with batch 1 on a 3B model; util 95%, SM activity ~12%, hours behind schedule.",
    S, lambda s: job("eval-sweep-offline-tiny-batches", board="H100 PCIe", n_gpus=1, start=s, duration=420, comp_s=0.3, comm_s=0.0,
                     mem_gib=9, engine=False, loader_cores=1, cmd="python3 -m lm_eval --model hf --batch_size 1",
                     mods=lambda t: dict(sm_mult=0.13, tensor_mult=0.02, comp_mult=0.05) if t >= 60 else {}))
S = at(6, 7, 0)
add("rollout-engine-long-cot-bandwidth", "other", "memory_bandwidth", None, (120, 600), "vllm", 2, "H100 SXM", 1.0,
    "RL rollouts on vLLM: the policy learned to think longer; responses went 2k -> 14k tokens and decode became KV-read bound, rollouts/s halved.",
    S, lambda s: serve("rollout-engine-long-cot-bandwidth", model="qwen32b-awq", tp=2, start=s, duration=600,
                       rate=lambda t: 0.8 if t < 120 else 0.5, prompt=lambda t: 1000, out=lambda t: 2000 if t < 120 else 14000, hit=0.9))


# ======================================================================= healthy look-alikes
def H(name, family, engine, gpus, board, note, start, build, tick=1.0):
    add(name, family, None, None, None, engine, gpus, board, tick, note, start, build)


H("idle-70b-vram-full-overnight", "serving", "vllm", 4, "H100 SXM",
  "Ticket 'VRAM 90% full on an idle node': it's the KV pool vLLM pre-reserves; no traffic after 02:00.",
  at(0, 2), lambda s: serve("idle-70b-vram-full-overnight", model="llama70b-fp8", tp=4, start=s, duration=600, rate=lambda t: 0.0))
H("diurnal-ramp-8b-pool", "serving", "vllm", 1, "H100 SXM",
  "Morning ramp on the 8B pool: util from 20% to 95%, all latencies inside SLO.",
  at(1, 7), lambda s: serve("diurnal-ramp-8b-pool", model="llama8b", start=s, duration=900, rate=lambda t: 1 + 9 * t / 900))
H("bursty-api-traffic-sglang", "serving", "sglang", 1, "H200",
  "Burst every two minutes from a cron-driven customer; queue drains within seconds each time.",
  at(1, 11), lambda s: serve("bursty-api-traffic-sglang", engine="sglang", board="H200", model="qwen7b", start=s, duration=600,
                             rate=bursty(1.0, 14.0)))
H("warmup-cuda-graph-capture-restart", "serving", "vllm", 1, "H100 SXM",
  "Canary deploy: engine restarted on the new version, loaded weights, captured CUDA graphs, then served normally.",
  at(2, 10), lambda s: serve("warmup-cuda-graph-capture-restart", model="llama8b", start=s, duration=600, rate=lambda t: 4.0,
                             restart_at=180, version="0.12.0",
                             mods=lambda t: dict(restart_s=80, load_util=(0.0 if t < 230 else 0.9), load_mem=(12 * GiB if t < 230 else 60 * GiB))))
H("checkpoint-saves-fsdp", "training", "trainer", 8, "H100 SXM",
  "GPU util drops to ~0 for 25 s every 5 minutes: the FSDP checkpoint save to the shared filesystem, as configured.",
  at(2, 4), lambda s: job("checkpoint-saves-fsdp", start=s, duration=900, mods=lambda t: dict(idle=True) if (t % 300) >= 275 else {},
                          cmd="torchrun --nproc-per-node 8 fsdp_pretrain.py --ckpt-every 300s"))
H("eval-phase-between-epochs", "training", "trainer", 4, "H200",
  "Eval phase every epoch: forward-only, lower tensor activity and power for 2 minutes, then training resumes.",
  at(3, 5), lambda s: job("eval-phase-between-epochs", board="H200", n_gpus=4, start=s, duration=720,
                          mods=lambda t: dict(comp_mult=0.35, tensor_mult=0.6, tok_mult=0.0) if 300 <= t < 420 else {},
                          cmd="torchrun --nproc-per-node 4 sft.py --eval-every-epoch"))
H("steady-decode-memory-bound-8b", "serving", "vllm", 1, "H200",
  "Low-DRAM-pressure question: steady chat decode on an 8B model at batch ~40 reads weights each step: memory-bound by nature, SLO fine.",
  at(3, 13), lambda s: serve("steady-decode-memory-bound-8b", board="H200", model="llama8b", start=s, duration=600, rate=lambda t: 6.0,
                             prompt=lambda t: 600, out=lambda t: 500))
H("configured-power-cap-l40s-steady", "serving", "vllm", 1, "L40S",
  "Boards deliberately capped at 275 W on this rack since launch; 'power cap' flag always set, throughput steady and as planned.",
  at(0, 13), lambda s: serve("configured-power-cap-l40s-steady", board="L40S", model="llama8b-fp8", kv_fp8=True, start=s, duration=600,
                             rate=lambda t: 6.0, prompt=lambda t: 2000, mods=lambda t: dict(power_limit=275)))
H("idle-second-process-on-gpu", "serving", "vllm", 1, "H100 SXM",
  "A debugging shell left a CUDA context (2 GiB) on the serving GPU; it computes nothing.",
  at(4, 9), lambda s: serve("idle-second-process-on-gpu", model="llama8b", start=s, duration=480, rate=lambda t: 4.0, mem_util=0.85,
                            extra_procs=(other_tenant(0, 2, "python3", "python3 -i debug_nccl.py", 33001, "sre"),)))
H("batch-lane-full-util-overnight", "serving", "vllm", 8, "H100 SXM",
  "Is the batch API lane healthy overnight? 100% util, big batches, queue deep by design; throughput at plan, no preemptions.",
  at(1, 1), lambda s: serve("batch-lane-full-util-overnight", model="llama70b-fp8", tp=8, start=s, duration=900, tick=2.0,
                            rate=lambda t: 5.0, prompt=lambda t: 1500, out=lambda t: 600, max_seqs=256))
H("engine-restart-config-reload", "serving", "sglang", 2, "H100 SXM",
  "Planned restart to rotate the LoRA set; 90 s of no engine, then normal service.",
  at(4, 14), lambda s: serve("engine-restart-config-reload", engine="sglang", model="qwen32b-awq", tp=2, start=s, duration=540,
                             rate=lambda t: 3.0, restart_at=240, mods=lambda t: dict(restart_s=90)))
H("rag-prefill-heavy-within-slo", "serving", "vllm", 2, "H200",
  "RAG tier: 20k-token prompts all day, prefill dominates GPU time; TTFT p99 1.8 s is within the 3 s SLO, ITL steady.",
  at(5, 10), lambda s: serve("rag-prefill-heavy-within-slo", board="H200", model="llama70b-fp8", tp=2, start=s, duration=600,
                             rate=lambda t: 0.7, prompt=lambda t: 20000, out=lambda t: 250, hit=0.4))
H("eagle3-normal-acceptance", "serving", "vllm", 1, "H100 SXM",
  "EAGLE-3 speculative decoding with ~70% acceptance; drafts rejected 30% of the time is normal.",
  at(5, 13), lambda s: serve("eagle3-normal-acceptance", model="llama8b", start=s, duration=600, rate=lambda t: 5.0,
                             spec=dict(kind="eagle3", k=4, accept=0.7)))
H("moe-ep-dp-attention-steady", "serving", "sglang", 8, "H200",
  "DeepSeek-style MoE with expert parallelism and DP attention at steady afternoon load.",
  at(2, 15), lambda s: serve("moe-ep-dp-attention-steady", engine="sglang", board="H200", model="dsv3", tp=8, start=s, duration=600,
                             rate=lambda t: 6.0, prompt=lambda t: 2500, out=lambda t: 500))
H("tgi-legacy-steady", "serving", "tgi", 1, "A10G",
  "Legacy customer's TGI on A10G: low steady load, nothing to see.",
  at(3, 10), lambda s: serve("tgi-legacy-steady", engine="tgi", board="A10G", model="llama3b", start=s, duration=480,
                             rate=lambda t: 0.8, prompt=lambda t: 700, out=lambda t: 200))
H("scale-to-zero-cold-start", "serving", "vllm", 1, "L4",
  "Scale-from-zero: the pod streamed weights from object storage for a minute, then served a trickle.",
  at(4, 6), lambda s: serve("scale-to-zero-cold-start", board="L4", model="llama3b", start=s, duration=420, rate=lambda t: 0.5,
                            restart_at=0, mods=lambda t: dict(restart_s=70, load_mem=(0 if t < 20 else 6 * GiB))))
H("gb200-steady-high-load", "serving", "vllm", 4, "GB200",
  "New GB200 pool at high steady load; util 99%, tokens/s as benchmarked.",
  at(5, 15), lambda s: serve("gb200-steady-high-load", board="GB200", model="gptoss120b", tp=4, start=s, duration=600,
                             rate=lambda t: 16.0, prompt=lambda t: 1500, out=lambda t: 400))
H("fsdp-steady-8xh100", "training", "trainer", 8, "H100 SXM",
  "RL post-training job's FSDP phase, all ranks in step; NCCL time normal.",
  at(0, 5), lambda s: job("fsdp-steady-8xh100", start=s, duration=900, cmd="torchrun --nproc-per-node 8 -m openrlhf.cli.train_ppo"))
H("a100-ddp-steady-power-cap", "training", "trainer", 8, "A100 80GB",
  "A100 DDP job at 100% util sitting at its 400 W power limit, as every day.",
  at(1, 19), lambda s: job("a100-ddp-steady-power-cap", board="A100 80GB", start=s, duration=600, tensor_frac=0.8, sm_frac=0.97,
                           dram_frac=0.5, cmd="torchrun --nproc-per-node 8 train.py"))
H("embedding-pool-batched-l4", "serving", "vllm", 1, "L4",
  "Embedding pool with proper batching: util 60%, throughput fine.",
  at(2, 12), lambda s: job("embedding-pool-batched-l4", board="L4", n_gpus=1, start=s, duration=480, comp_s=0.05, comm_s=0.0, mem_gib=4,
                           sm_frac=0.85, tensor_frac=0.5, dram_frac=0.4, work_unit="samples", tokens_per_step=64, loader_cores=0,
                           kind="vllm", mods=lambda t: dict(data_wait=0.03), cmd="python3 -m vllm.entrypoints.openai.api_server --model BAAI/bge-m3 --task embed"))
H("reward-model-scoring-steady", "other", "trainer", 4, "H100 PCIe",
  "Reward-model scoring of yesterday's rollouts, batched 64, all GPUs steady.",
  at(3, 3), lambda s: job("reward-model-scoring-steady", board="H100 PCIe", n_gpus=4, start=s, duration=480, comp_s=0.4, comm_s=0.0,
                          work_unit="samples", tokens_per_step=256, loader_cores=4, cmd="python3 score_rollouts.py --rm skywork-rm-8b"))
H("rtx-pro-vlm-steady-hot-room", "serving", "vllm", 1, "RTX PRO 6000",
  "VLM endpoint on RTX PRO 6000 in a warm aisle: 78 C, below slowdown, clocks steady.",
  at(5, 18), lambda s: serve("rtx-pro-vlm-steady-hot-room", board="RTX PRO 6000", model="qwen-vl7b", start=s, duration=540,
                             rate=lambda t: 3.0, prompt=lambda t: 2500, out=lambda t: 200, mods=lambda t: dict(cool_gpu=(0,), cooling=1.12)))
H("eval-sweep-idle-gaps-between-tasks", "other", "none", 1, "A100 80GB",
  "Eval sweep loads a new task every few minutes; GPU idle 20-40 s while datasets load, as expected.",
  at(6, 1), lambda s: job("eval-sweep-idle-gaps-between-tasks", board="A100 80GB", n_gpus=1, start=s, duration=600, comp_s=0.5, comm_s=0.0,
                          engine=False, mem_gib=40, mods=lambda t: dict(idle=True) if (t % 200) < 30 else {},
                          cmd="python3 -m lm_eval --model vllm --tasks gsm8k,mmlu,ifeval"))
H("prefix-cache-shared-system-prompt", "serving", "vllm", 2, "H100 SXM",
  "Shared 6k-token system prompt across customers: 90% prefix-cache hits, TTFT low, nothing wrong.",
  at(4, 16), lambda s: serve("prefix-cache-shared-system-prompt", model="llama70b-fp8", tp=2, start=s, duration=600, rate=lambda t: 4.0,
                             prompt=lambda t: 7000, out=lambda t: 300, hit=0.9))
H("vllm-night-trickle-lora", "serving", "vllm", 1, "A100 80GB",
  "Per-customer LoRA endpoint at night: a request every few seconds, util flickers 0-40%.",
  at(5, 3), lambda s: serve("vllm-night-trickle-lora", board="A100 80GB", model="llama8b", start=s, duration=600, rate=lambda t: 0.3,
                            lora=("cust-acme-v3", "cust-zeta-sql")))
