"""The month of escalations: one entry per trace, its simulator configuration and its label.

Windows are seconds from the trace's start (converted to wall-clock seconds in __init__);
every entry's situation is written from what the customer's setup would do, not from what
a detector might look at.
"""

from __future__ import annotations

from .common import clamp, in_window
from .other import Job, JobProc, Work, idle_holder, requests_burst, steady
from .serving import Serve
from .training import Train


def U(lo, hi):
    return lambda rng, t: (int(rng.uniform(lo, hi)), 0)


def G(lo, hi):
    return lambda rng, t: int(rng.uniform(lo, hi))


def chat():
    return U(300, 2500), G(120, 700)


def cached(lo, hi, fresh=400):
    return lambda rng, t: ((n := int(rng.uniform(lo, hi))), max(0, n - fresh))


def after(t0, a, b):
    return lambda t: b if t >= t0 else a


def between(t0, t1, a, b):
    return lambda t: b if t0 <= t < t1 else a


E = []  # (name, family, cause, culprit, window, engine, note, cfg, kind)


def add(name, family, cause, culprit, window, engine, note, cfg):
    E.append((name, family, cause, culprit, window, engine, note, cfg))


# ============================================================ oversized_request
p, g = chat()
add("os_vllm_h100_n8_logprobs", "serving", "oversized_request", None, ("big", 200), "vllm",
    "One client sent n=8, logprobs=20, max_tokens=1500 to the shared 8B endpoint; every other "
    "stream's ITL went 3-4x until it finished.",
    Serve("os_vllm_h100_n8_logprobs", "vllm", "llama8b", "H100-SXM", 480, lambda t: 5.0, p, g,
          big=[(200, dict(n=8, logprobs=20, max_tokens=1500, prompt=700))]))
add("os_sglang_a100_n4_logprobs", "serving", "oversized_request", None, ("big", 120), "sglang",
    "An eval script hit the production SGLang endpoint with n=4, logprobs=5 and max_tokens=3000: "
    "chat ITL roughly doubled for a minute and a half.",
    Serve("os_sglang_a100_n4_logprobs", "sglang", "qwen7b", "A100-80GB", 360, lambda t: 4.0,
          U(300, 1800), G(100, 500), big=[(120, dict(n=4, logprobs=5, max_tokens=3000, prompt=900))]))
add("os_vllm_l40s_n2_mild", "serving", "oversized_request", None, ("big", 300), "vllm",
    "A customer's scorer asked for n=2 with logprobs=10 on a 2,000-token completion; ITL up ~35% "
    "for everyone while it ran.",
    Serve("os_vllm_l40s_n2_mild", "vllm", "mistral7b", "L40S", 600, lambda t: 2.5, U(200, 1200),
          G(150, 500), big=[(300, dict(n=2, logprobs=10, max_tokens=2000, prompt=500))]))

# ============================================================ prefill_interference
add("pi_vllm_h100_rag32k", "serving", "prefill_interference", None, (240, 480), "vllm",
    "A new RAG tenant started sending 24-32k-token prompts to the chat endpoint at 240 s; chat "
    "ITL p99 tripled until they were moved off at 480 s.",
    Serve("pi_vllm_h100_rag32k", "vllm", "llama8b", "H100-SXM", 600, lambda t: 6.0 + (1.2 if 240 <= t < 480 else 0),
          lambda rng, t: (int(rng.uniform(24000, 32000)), 0) if 240 <= t < 480 and rng.random() < 0.2
          else (int(rng.uniform(300, 2000)), 0), G(150, 600)))
add("pi_sglang_h200_agent_bursts", "serving", "prefill_interference", None, (180, 420), "sglang",
    "Agent framework replays 12-20k-token histories in bursts; during the bursts SGLang's decode "
    "stalls behind prefill batches and users see stutter.",
    Serve("pi_sglang_h200_agent_bursts", "sglang", "qwen32b", "H200", 540, lambda t: 4.0, 
          lambda rng, t: (int(rng.uniform(12000, 20000)), 0)
          if 180 <= t < 420 and (t % 60) < 30 and rng.random() < 0.45 else (int(rng.uniform(300, 1500)), 0),
          G(200, 600), tp=2))
add("pi_tgi_a10g_mild", "serving", "prefill_interference", None, (150, 420), "tgi",
    "Document summarisation traffic (3-4k-token prompts) was added to a small TGI chat box; "
    "time per token up ~40%.",
    Serve("pi_tgi_a10g_mild", "tgi", "phi3mini", "A10G", 540, lambda t: 1.5 + (0.4 if 150 <= t < 420 else 0),
          lambda rng, t: (int(rng.uniform(3000, 3900)), 0) if 150 <= t < 420 and rng.random() < 0.25
          else (int(rng.uniform(200, 800)), 0), G(100, 400), budget=4096))

# ============================================================ collective_straggler
add("cs_fsdp_8xh100_rank5_clock", "training", "collective_straggler", (5,), (300, 720), "none",
    "FSDP pre-training on 8xH100: GPU 5 dropped to ~1.3 GHz (HW slowdown) at 300 s; the other "
    "seven ranks sit in NCCL waiting for it every step.",
    Train("cs_fsdp_8xh100_rank5_clock", "H100-SXM", 8, 720, 13.0, 8 * 8 * 4096, "fsdp",
          mods=lambda t: {"clock_cap": {5: 1305}, "reasons": {5: ("hw slowdown",)}} if t >= 300 else {}))
add("cs_vllm_tp4_a100_gpu2", "serving", "collective_straggler", (2,), (200, 600), "vllm",
    "70B on 4xA100 TP=4: GPU 2 went into HW slowdown at 200 s; the whole TP group runs at its "
    "pace, ITL +45%.",
    Serve("cs_vllm_tp4_a100_gpu2", "vllm", "llama70b", "A100-80GB", 600, lambda t: 3.0, U(300, 2000),
          G(150, 600), tp=4, dcgm=True,
          mods=lambda t: {"clock_cap": {2: 820}, "reasons": {2: ("hw slowdown",)}} if t >= 200 else {}))
add("cs_ddp_4xa100_rank1_mild", "training", "collective_straggler", (1,), (0, 600), "trainer",
    "DDP fine-tune on 4xA100-40GB has run ~12% slower than the last job; rank 1's board sits at a "
    "lower clock (power brake) all along.",
    Train("cs_ddp_4xa100_rank1_mild", "A100-40GB", 4, 600, 1.3, 4 * 16 * 2048, "ddp", exporter="tokens",
          dcgm=True, mods=lambda t: {"clock_cap": {1: 1230}, "reasons": {1: ("power brake", "hw slowdown")}}))

# ============================================================ input_stall
add("is_ddp_8xh100_s3fuse", "training", "input_stall", None, (240, 720), "trainer",
    "Vision pre-training reading shards through an S3 FUSE mount; after a cache eviction at 240 s "
    "every step waits 1-2 s for data and GPUs idle half the time.",
    Train("is_ddp_8xh100_s3fuse", "H100-SXM", 8, 720, 0.6, 8 * 256 * 576, "ddp", mfu=0.35, exporter="samples",
          samples_per_step=8 * 256, data_s=lambda rng, t, s: rng.uniform(0.9, 2.0) if t >= 240 else 0.0,
          loader_workers=8))
add("is_lora_l4_loader_mild", "training", "input_stall", None, (0, 480), "trainer",
    "LoRA fine-tune on one L4 with 2 dataloader workers doing on-the-fly tokenisation: about one "
    "step in five waits for its batch.",
    Train("is_lora_l4_loader_mild", "L4", 1, 480, 0.25, 8 * 1024, "single", mfu=0.35, exporter="samples",
          samples_per_step=8, loader_workers=2, loader_cpu=0.95,
          data_s=lambda rng, t, s: rng.uniform(0.5, 1.1) if rng.random() < 0.2 else 0.0, cpus=8))
add("is_deepspeed_a100_nfs_episodes", "training", "input_stall", None, (200, 560), "none",
    "DeepSpeed ZeRO-2 job on 4xA100-80GB reading from a shared NFS: two episodes where another "
    "team's job saturated the filer and steps stalled on data.",
    Train("is_deepspeed_a100_nfs_episodes", "A100-80GB", 4, 720, 3.0, 4 * 8 * 4096, "deepspeed",
          data_s=lambda rng, t, s: rng.uniform(1.5, 3.0) if (200 <= t < 330 or 470 <= t < 560) else 0.0))

# ============================================================ host_launch_jitter
add("hlj_train_h100_eager_irq", "training", "host_launch_jitter", None, (180, 480), "none",
    "Eager-mode PyTorch training on one H100 with eBPF on: from 180 s the launch thread shares "
    "its core with a NIC IRQ storm; cudaLaunchKernel p99 jumps to ~1 ms and steps slow.",
    Train("hlj_train_h100_eager_irq", "H100-SXM", 1, 540, 0.35, 16 * 1024, "single", mfu=0.3,
          launches_per_step=3000, eager_cpu_s=0.012, ebpf=True,
          mods=lambda t: {"launch_tail": (0.02, 900.0), "invol": 400} if 180 <= t < 480 else {}))
add("hlj_vllm_l40s_eager", "serving", "host_launch_jitter", None, (120, 360), "vllm",
    "vLLM in eager mode on an L40S (graphs disabled for a custom op); eBPF shows launch calls "
    "descheduled for 1-2 ms from 120 s while a co-scheduled container shares the cores.",
    Serve("hlj_vllm_l40s_eager", "vllm", "qwen7b", "L40S", 480, lambda t: 2.0, U(200, 1200), G(100, 400),
          graphs=False, ebpf=True, mods=lambda t: {"launch_tail": (0.008, 1500.0)} if 120 <= t < 360 else {}))
add("hlj_custom_h200_mild", "other", "host_launch_jitter", None, (100, 400), "none",
    "A customer's C++/CUDA inference loop with probes on: a fraction of launches stall ~0.5 ms "
    "(launch thread migrated between sockets); throughput down ~15%.",
    Job("hlj_custom_h200_mild", "H200", 1, 480, [JobProc(4711, "infer_loop", "./infer_loop --batch 32", 0,
        lambda rng, t, sp: (lambda bad: Work(clamp(0.82 - (0.12 if bad else 0) + rng.gauss(0, 0.02)),
                                            0.7 - (0.1 if bad else 0), 0.45 - (0.07 if bad else 0), 0.3,
                                            int(38e9), 1.0, launches=40000,
                                            launch_tail=(0.004, 500.0) if bad else (0.0002, 40.0)))(100 <= t < 400))],
        ebpf=True))

# ============================================================ host_cpu_contention
add("hcc_vllm_l40s_pod_quota", "serving", "host_cpu_contention", None, (200, 540), "vllm",
    "Kubernetes VPA cut the vLLM pod's CPU limit to 1 core at 200 s; the engine core is CFS-"
    "throttled most periods and the GPU idles between steps.",
    Serve("hcc_vllm_l40s_pod_quota", "vllm", "qwen7b", "L40S", 540, lambda t: 3.0, U(200, 1500), G(100, 500),
          quota=4.0, pod="inference/chat-7b-5d8f", container="containerd:8c1f2a9b3e4d",
          mods=lambda t: {"quota": 1.0} if t >= 200 else {}))
add("hcc_sglang_h100pcie_transcode", "serving", "host_cpu_contention", None, (150, 450), "sglang",
    "A video transcoding job landed on the same 16-core host at 150 s; run queue 40+, CPU PSI "
    "above 60% and SGLang's scheduler loses its core.",
    Serve("hcc_sglang_h100pcie_transcode", "sglang", "llama8b", "H100-PCIe", 540, lambda t: 4.0, U(200, 1500),
          G(100, 500), cpus=16, neighbour=lambda t: 38.0 if 150 <= t < 450 else 0.5))
add("hcc_train_a10g_quota_mild", "training", "host_cpu_contention", None, (0, 480), "trainer",
    "Fine-tune in a pod with a 3-core limit: 4 loader workers plus the launch thread keep the "
    "cgroup throttled in ~30% of periods; steps ~20% slower than on the dev box.",
    Train("hcc_train_a10g_quota_mild", "A10G", 1, 480, 0.5, 8 * 1024, "single", mfu=0.35, exporter="tokens",
          eager_cpu_s=0.55, quota=3.0, loader_workers=4, loader_cpu=0.35, cpus=16,
          pod="research/ft-job-7", container="containerd:1a2b3c4d5e6f"))

# ============================================================ tiny_kernels
add("tk_vllm_h100_logits_processor", "serving", "tiny_kernels", None, (240, 600), "vllm",
    "Customer rolled out a custom per-request logits processor at 240 s: thousands of tiny "
    "kernels per step, GPU-Util stays ~95% while SM activity falls and tokens/s halves.",
    Serve("tk_vllm_h100_logits_processor", "vllm", "qwen7b", "H100-SXM", 600, lambda t: 6.0, U(200, 1500),
          G(100, 500), mods=lambda t: {"tiny_ms": 14.0} if t >= 240 else {}))
add("tk_train_a100_foreach_off", "training", "tiny_kernels", None, (0, 600), "none",
    "Trainer with a hand-written per-parameter optimizer loop (thousands of tensors, no foreach): "
    "each step spends ~1 s in tiny kernels, util 95%, SM active (DCGM) low.",
    Train("tk_train_a100_foreach_off", "A100-80GB", 2, 600, 1.5, 2 * 8 * 2048, "ddp", dcgm=True,
          mods=lambda t: {"tiny_s": 1.1}))
add("tk_notebook_l4_loop_mild", "other", "tiny_kernels", None, (120, 420), "none",
    "A notebook on an L4 scores items one at a time in a Python loop of small torch ops: util "
    "~70%, real work near zero (DCGM SM active ~6%).",
    Job("tk_notebook_l4_loop_mild", "L4", 1, 480, [JobProc(3321, "python3", "python3 -m ipykernel_launcher -f kernel-8a1.json", 0,
        lambda rng, t, sp: Work(clamp(0.7 + rng.gauss(0, 0.04)), 0.06, 0.01, 0.03, int(5.5e9), 1.0)
        if 120 <= t < 420 else Work(0.0, 0.0, 0.0, 0.0, int(5.5e9), 0.05))], dcgm=True))

# ============================================================ memory_bandwidth
add("mb_vllm_h200_agent_longctx", "serving", "memory_bandwidth", None, (150, 600), "vllm",
    "Coding-agent sessions on an H200 grow from 4k to ~90k tokens of cached context; decode "
    "becomes KV-read bound, HBM near saturation and ITL 2.5x.",
    Serve("mb_vllm_h200_agent_longctx", "vllm", "llama8b", "H200", 600, lambda t: 2.0,
          lambda rng, t: ((n := int(4000 + max(0.0, t - 150) * 190 * rng.uniform(0.8, 1.2))), n - 300),
          G(200, 500), max_seqs=128))
add("mb_sglang_l40s_docqa_mild", "serving", "memory_bandwidth", None, (200, 540), "sglang",
    "Document-QA tenant moved to 10-14k-token contexts (mostly radix-cached); the L40S decode "
    "becomes bandwidth-bound, ITL +40%.",
    Serve("mb_sglang_l40s_docqa_mild", "sglang", "qwen7b", "L40S", 540, lambda t: 2.5,
          cached(10000, 14000) if False else (lambda rng, t: ((n := int(rng.uniform(10000, 14000) if t >= 200 else rng.uniform(800, 2000))), n - 250)),
          G(150, 400)))
add("mb_llamacpp_a10g_32k", "serving", "memory_bandwidth", None, (100, 480), "llamacpp",
    "llama.cpp on an A10G with 8 slots: users pasted long transcripts and contexts hit 20-28k "
    "per slot; predicted tokens/s fell to a third.",
    Serve("mb_llamacpp_a10g_32k", "llamacpp", "mistral7b", "A10G", 480, lambda t: 0.6,
          lambda rng, t: ((n := int(rng.uniform(20000, 28000) if t >= 100 else rng.uniform(500, 2000))), n - 200),
          G(200, 600), pool_tokens=229376, max_seqs=8))

# ============================================================ throttling
add("th_vllm_h100pcie_fan_fail", "serving", "throttling", None, (300, 600), "vllm",
    "Chassis fan failure on a single H100 PCIe: temperature climbs, driver cuts clocks to ~1.1 GHz "
    "(thermal, HW slowdown) from 300 s; tokens/s down 35%.",
    Serve("th_vllm_h100pcie_fan_fail", "vllm", "llama8b", "H100-PCIe", 600, lambda t: 6.0, U(300, 1500), G(200, 600),
          mods=lambda t: {"clock_cap": {0: 1110}, "reasons": {0: ("thermal (sw)", "hw slowdown")}, "heat": {0: 250}}
          if t >= 300 else ({"heat": {0: 120}} if t >= 200 else {})))
add("th_train_8xa100_power_brake", "training", "throttling", None, (200, 500), "trainer",
    "Rack PSU event: all eight A100s of the node under power brake (HW slowdown) for 5 minutes; "
    "every rank slowed alike, tokens/s down 40%.",
    Train("th_train_8xa100_power_brake", "A100-80GB", 8, 660, 7.0, 8 * 4 * 4096, "fsdp", exporter="tokens",
          mods=lambda t: {"clock_cap": {r: 810 for r in range(8)},
                          "reasons": {r: ("hw slowdown", "power brake") for r in range(8)}} if 200 <= t < 500 else {}))
add("th_diffusion_l4_thermal_mild", "other", "throttling", None, (240, 540), "none",
    "SDXL image service on an L4 in a hot colo row: thermal slowdown from 240 s pulls clocks "
    "from 2.04 to ~1.7 GHz; images take ~18% longer.",
    Job("th_diffusion_l4_thermal_mild", "L4", 1, 540, [JobProc(5120, "python3", "python3 serve_sdxl.py --port 7860", 0,
        (lambda base: lambda rng, t, sp: (lambda w: Work(w.busy, w.sm, w.tensor, w.dram, w.mem, w.cpu,
                                                           1695 if t >= 240 else None,
                                                           ("thermal (sw)",) if t >= 240 else (),
                                                           flicker=0.3))(base(rng, t, sp)))(
            requests_burst(lambda t: 0.13, 5.5, 0.98, 0.85, 0.6, 0.35, 13.0)))], ambient=38.0))

# ============================================================ kv_pressure
add("kv_vllm_a100_40_agents", "serving", "kv_pressure", None, (180, 600), "vllm",
    "Agent traffic with 20-30k-token contexts on an A100-40GB: the KV pool is full from 180 s, "
    "vLLM preempts and recomputes requests and the queue grows.",
    Serve("kv_vllm_a100_40_agents", "vllm", "llama8b", "A100-40GB", 600, lambda t: 2.0 if t < 180 else 1.2,
          lambda rng, t: (int(rng.uniform(20000, 30000)), int(rng.uniform(0, 8000))) if t >= 180
          else (int(rng.uniform(500, 3000)), 0),
          lambda rng, t: int(rng.uniform(800, 2000) if t >= 180 else rng.uniform(300, 900))))
add("kv_sglang_h100_tp2_retract", "serving", "kv_pressure", None, (240, 540), "sglang",
    "Long-form generation tenant (4-8k output tokens) on a 32B TP=2 SGLang: the pool ran out, "
    "SGLang retracts requests and the queue backs up.",
    Serve("kv_sglang_h100_tp2_retract", "sglang", "qwen32b", "H100-SXM", 540,
          lambda t: 1.5 + (2.5 if t >= 240 else 0), U(1000, 4000),
          lambda rng, t: int(rng.uniform(4000, 8000)) if t >= 240 and rng.random() < 0.5 else int(rng.uniform(200, 600)),
          tp=2, gmu=0.80))
add("kv_vllm_l40s_peak_mild", "serving", "kv_pressure", None, (300, 540), "vllm",
    "Lunchtime peak on an L40S with gpu-memory-utilization 0.7: from 300 s the pool is full, with "
    "preemptions and requests waiting for blocks until the backlog drains.",
    Serve("kv_vllm_l40s_peak_mild", "vllm", "llama8b", "L40S", 540, lambda t: 1.7 if 300 <= t < 420 else 0.5,
          U(2000, 5000), G(300, 800), gmu=0.7))

# ============================================================ gpu_shared
_nb = lambda t: 0.45 if 200 <= t < 500 else 0.0
add("gs_vllm_h100_foreign_notebook", "serving", "gpu_shared", (0,), (200, 500), "vllm",
    "A data scientist's notebook on the same H100 started a fine-tune at 200 s; it time-slices "
    "with vLLM and ITL goes up 70%.",
    Serve("gs_vllm_h100_foreign_notebook", "vllm", "llama8b", "H100-SXM", 600, lambda t: 5.0, U(300, 1500), G(150, 500),
          gmu=0.75, others=[dict(gpu=0, pid=7777, name="python3", cmd="python3 -m ipykernel_launcher -f kernel-3f.json",
                                 mem=int(14e9), sm=_nb, tensor=0.5, user="dsci", cpu=1.0)],
          mods=lambda t: {"straggle": {0: 1 - 0.8 * _nb(t)}} if _nb(t) else {}))
_bench = lambda t: 0.65 if 150 <= t < 400 else 0.0
add("gs_sglang_tp2_gpu1_stray_bench", "serving", "gpu_shared", (1,), (150, 400), "sglang",
    "Someone ran a benchmark with the wrong CUDA_VISIBLE_DEVICES and it landed on GPU 1 of the "
    "TP=2 SGLang group; both ranks slow to GPU 1's pace.",
    Serve("gs_sglang_tp2_gpu1_stray_bench", "sglang", "qwen32b", "H100-SXM", 480, lambda t: 4.0, U(300, 1500),
          G(150, 500), tp=2, gmu=0.8, others=[dict(gpu=1, pid=9191, name="python3", cmd="python3 bench_matmul.py",
                                                   mem=int(9e9), sm=_bench, tensor=0.9, user="ops", from_=0, cpu=1.0)],
          mods=lambda t: {"straggle": {1: 1 - 0.85 * _bench(t)}} if _bench(t) else {}))
_inf = lambda t: (0.18 if (t % 90) < 50 else 0.0) if t >= 120 else 0.0
add("gs_train_a10g_side_inference_mild", "training", "gpu_shared", (0,), (120, 540), "trainer",
    "A small inference sidecar was scheduled onto the A10G of a fine-tune pod from 120 s; it takes "
    "~15% of the GPU in bursts.",
    Train("gs_train_a10g_side_inference_mild", "A10G", 1, 540, 0.4, 8 * 1024, "single", mfu=0.35, exporter="samples",
          samples_per_step=8, cpus=16,
          mods=lambda t: {"others": [dict(gpu=0, pid=6262, name="python3", cmd="python3 sidecar_infer.py",
                                          mem=int(3e9), sm=_inf(t), since=120)], "rank_speed": {0: 1 - 0.9 * _inf(t)}}
          if t >= 120 else {}))

# ============================================================ spec_decode_rejected
add("sd_vllm_h100_eagle_collapse", "serving", "spec_decode_rejected", None, (240, 600), "vllm",
    "EAGLE drafts for a chat model; at 240 s the traffic shifted to a Korean-language customer "
    "the draft head never saw: acceptance 0.75 to 0.12, ITL up 2x.",
    Serve("sd_vllm_h100_eagle_collapse", "vllm", "llama8b", "H100-SXM", 600, lambda t: 3.0, U(300, 1500), G(150, 500),
          spec=dict(method="eagle", k=4, accept=after(240, 0.78, 0.12), draft_ms=2.5)))
add("sd_sglang_h200_ngram_drop", "serving", "spec_decode_rejected", None, (180, 450), "sglang",
    "N-gram speculation tuned for code completion; a batch of free-form prose requests from 180 "
    "to 450 s drops acceptance to ~0.2 and wastes verify compute.",
    Serve("sd_sglang_h200_ngram_drop", "sglang", "qwen32b", "H200", 540, lambda t: 3.0, U(300, 1500), G(150, 500),
          spec=dict(method="NGRAM", k=5, accept=between(180, 450, 0.62, 0.18), draft_ms=0.4)))
add("sd_llamacpp_l40s_draft_mild", "serving", "spec_decode_rejected", None, (120, 480), "llamacpp",
    "llama.cpp with a 0.5B draft model; after the target was swapped for a new fine-tune at "
    "120 s acceptance fell from 0.68 to 0.42.",
    Serve("sd_llamacpp_l40s_draft_mild", "llamacpp", "qwen7b", "L40S", 480, lambda t: 0.8, U(200, 1200), G(200, 600),
          max_seqs=4, spec=dict(method="draft", k=8, accept=after(120, 0.72, 0.38), draft_ms=6.0)))

# ============================================================ healthy look-alikes
H = []


def healthy(name, family, engine, note, cfg):
    add(name, family, None, None, None, engine, note, cfg)


healthy("ok_vllm_h200_idle_full_vram", "serving", "vllm",
        "Customer asks why their idle H200 shows 126 GiB used: vLLM pre-reserved the KV pool; "
        "no traffic on a Sunday.",
        Serve("ok_vllm_h200_idle_full_vram", "vllm", "llama8b", "H200", 420, lambda t: 0.01, U(200, 800), G(50, 200)))
healthy("ok_vllm_h100_diurnal_ramp", "serving", "vllm",
        "Morning ramp: traffic goes from 1 to 14 req/s over ten minutes; latency stays flat.",
        Serve("ok_vllm_h100_diurnal_ramp", "vllm", "llama8b", "H100-SXM", 600, lambda t: 1 + 13 * t / 600, U(300, 1500), G(150, 500)))
healthy("ok_sglang_a100_bursty", "serving", "sglang",
        "Batchy client: 20-second bursts every minute then nothing; GPU-Util saw-tooths 0-90%.",
        Serve("ok_sglang_a100_bursty", "sglang", "qwen7b", "A100-80GB", 480,
              lambda t: 9.0 if (t % 60) < 20 else 0.2, U(300, 1500), G(100, 300)))
healthy("ok_vllm_tp4_h100_coldstart", "serving", "vllm",
        "Deployment of a 70B TP=4: load, profiling and CUDA-graph capture bursts, then traffic.",
        Serve("ok_vllm_tp4_h100_coldstart", "vllm", "llama70b", "H100-SXM", 420, lambda t: 3.0, U(300, 1500),
              G(150, 500), tp=4, cold_start=True))
healthy("ok_train_8xh100_checkpoints", "training", "trainer",
        "Pre-training with a 45-s checkpoint every 4 minutes: GPUs drop to ~0% during saves, by design.",
        Train("ok_train_8xh100_checkpoints", "H100-SXM", 8, 720, 7.0, 8 * 4 * 4096, "fsdp", exporter="tokens",
              ckpt_every=240, ckpt_s=45))
healthy("ok_fsdp_a100_eval_phases", "training", "none",
        "FSDP fine-tune with an eval pass every 3 minutes (forward only, lower power).",
        Train("ok_fsdp_a100_eval_phases", "A100-80GB", 4, 600, 3.0, 4 * 8 * 4096, "fsdp", eval_every=180, eval_s=40))
healthy("ok_vllm_h100_membound_decode", "serving", "vllm",
        "Escalated as 'tensor cores at 10%': a steady large-batch decode is memory-bound; that is "
        "what decode is.",
        Serve("ok_vllm_h100_membound_decode", "vllm", "qwen32b", "H100-SXM", 480, lambda t: 8.0, U(500, 2500), G(300, 800), tp=2))
healthy("ok_vllm_h100pcie_powercap_250w", "serving", "vllm",
        "Customer set a 250 W power limit on their H100 PCIe for a power budget; 'power cap' is "
        "always on, clocks steady, latency in SLO.",
        Serve("ok_vllm_h100pcie_powercap_250w", "vllm", "qwen7b", "H100-PCIe", 480, lambda t: 7.0, U(300, 1500),
              G(150, 500), power_limit=250.0))
healthy("ok_vllm_l40s_idle_jupyter_beside", "serving", "vllm",
        "A second process (an idle Jupyter kernel holding 3 GiB) sits on the serving L40S; it runs no kernels.",
        Serve("ok_vllm_l40s_idle_jupyter_beside", "vllm", "mistral7b", "L40S", 480, lambda t: 2.5, U(300, 1500),
              G(150, 500), gmu=0.8, others=[dict(gpu=0, pid=4545, name="python3", cmd="python3 -m ipykernel_launcher",
                                                  mem=int(3.2e9), sm=lambda t: 0.0, cpu=0.01)]))
healthy("ok_vllm_h200_offline_batch", "serving", "vllm",
        "Offline batch inference pushes 20k prompts at once: 100% util, thousands waiting, KV "
        "high, but that is the job.",
        Serve("ok_vllm_h200_offline_batch", "vllm", "llama8b", "H200", 540, lambda t: 2000.0 if t < 3 else 30.0,
              U(500, 1500), G(200, 400), max_seqs=384))
healthy("ok_vllm_l4_rolling_restart", "serving", "vllm",
        "Rolling deploy restarts the engine at 240 s: endpoint gone ~80 s, counters restart from zero.",
        Serve("ok_vllm_l4_rolling_restart", "vllm", "qwen05b", "L4", 540, lambda t: 3.0, U(200, 1200), G(100, 400),
              restarts=[(240, 262)]))
healthy("ok_vllm_h100_rag_prefill_heavy", "serving", "vllm",
        "RAG endpoint with 8-12k-token prompts from the start: TTFT ~0.5-1 s and ITL steady, inside the customer's SLO.",
        Serve("ok_vllm_h100_rag_prefill_heavy", "vllm", "llama8b", "H100-SXM", 480, lambda t: 1.5,
              lambda rng, t: ((n := int(rng.uniform(8000, 12000))), int(n * rng.uniform(0.3, 0.6))), G(150, 400)))
healthy("ok_sglang_h200_eagle_normal", "serving", "sglang",
        "EAGLE speculative decoding with steady ~0.7 acceptance; GPU-Util lower than without spec, by design.",
        Serve("ok_sglang_h200_eagle_normal", "sglang", "llama8b", "H200", 480, lambda t: 3.0, U(300, 1500), G(150, 500),
              spec=dict(method="EAGLE", k=4, accept=lambda t: 0.7, draft_ms=2.0)))
healthy("ok_vllm_dp2_h100_uneven", "serving", "vllm",
        "Two data-parallel replicas behind one port; the load balancer's hashing leaves one busier, within capacity.",
        Serve("ok_vllm_dp2_h100_uneven", "vllm", "qwen7b", "H100-SXM", 480, lambda t: 8.0, U(300, 1500), G(150, 500), dp=2))
healthy("ok_sglang_mixtral_tp2_h100", "serving", "sglang",
        "Mixtral MoE on TP=2 at moderate load: expert weights make decode read-heavy; steady.",
        Serve("ok_sglang_mixtral_tp2_h100", "sglang", "mixtral", "H100-SXM", 480, lambda t: 4.0, U(300, 1500), G(150, 500), tp=2))
healthy("ok_llamacpp_a10g_chat", "serving", "llamacpp",
        "Internal chat bot on llama.cpp: a request every few seconds, GPU idle most of the time.",
        Serve("ok_llamacpp_a10g_chat", "llamacpp", "mistral7b", "A10G", 480, lambda t: 0.15, U(200, 1500), G(100, 500), max_seqs=8))
healthy("ok_tgi_l4_steady", "serving", "tgi",
        "TGI serving a 3.8B model on an L4 at steady low load.",
        Serve("ok_tgi_l4_steady", "tgi", "phi3mini", "L4", 420, lambda t: 1.0, U(200, 1000), G(100, 300)))
healthy("ok_embedding_l4_bursts", "other", "none",
        "Embedding service (bge-large, no decode, no metrics endpoint): short bursts of 100% util per batch.",
        Job("ok_embedding_l4_bursts", "L4", 1, 420, [JobProc(3030, "infinity_emb", "infinity_emb v2 --model-id BAAI/bge-large-en-v1.5", 0,
            requests_burst(lambda t: 2.5 + 2 * (t % 120 < 40), 0.18, 0.95, 0.7, 0.5, 0.3, 2.1, 0.2, 1.2))]))
healthy("ok_diffusion_l40s_requests", "other", "none",
        "Flux image generation service: each request pins the L40S at 100% for ~6 s; queue-free.",
        Job("ok_diffusion_l40s_requests", "L40S", 1, 480, [JobProc(8080, "python3", "python3 app.py --model flux-dev", 0,
            requests_burst(lambda t: 0.08, 6.0, 0.99, 0.9, 0.7, 0.4, 31.0))]))
healthy("ok_rl_8xh100_rollout_train", "training", "none",
        "RL post-training: 90-s rollout generation (memory-bound decode) alternating with 60-s training; by design.",
        Train("ok_rl_8xh100_rollout_train", "H100-SXM", 8, 660, 7.0, 8 * 4 * 4096, "rl", rollout_s=90, train_s=60))
healthy("ok_notebook_a100_idle", "other", "none",
        "A research notebook holds 30 GiB on an A100-40GB with nothing running; customer asks why it is 'full'.",
        Job("ok_notebook_a100_idle", "A100-40GB", 1, 420, [JobProc(2468, "python3", "python3 -m ipykernel_launcher", 0,
            idle_holder(30.5))]))
healthy("ok_lmeval_a100_harness", "other", "none",
        "lm-eval-harness with HF generate on one A100: moderate util with small-batch decode, as expected.",
        Job("ok_lmeval_a100_harness", "A100-80GB", 1, 480, [JobProc(1357, "python3", "lm_eval --model hf --tasks mmlu,gsm8k --batch_size 8", 0,
            steady(0.72, 0.45, 0.12, 0.35, 22.0, 1.0, 0.04))]))
healthy("ok_train_h100_ebpf_baseline", "training", "none",
        "Probes switched on during a healthy single-GPU fine-tune to get a launch-latency baseline.",
        Train("ok_train_h100_ebpf_baseline", "H100-SXM", 1, 420, 0.35, 16 * 1024, "single", mfu=0.3,
              launches_per_step=3000, eager_cpu_s=0.012, ebpf=True))
healthy("ok_pretrain_8xh200_powercap", "training", "trainer",
        "Dense pre-training on 8xH200: every board sits at its 700 W cap with clocks ~1.5 GHz; "
        "'power cap' is normal under matmul load.",
        Train("ok_pretrain_8xh200_powercap", "H200", 8, 600, 30.0, 8 * 4 * 4096, "fsdp", mfu=0.5, exporter="tokens"))
