"""The month's support tickets: one entry per trace, its configuration and its label."""

from __future__ import annotations

from .common import Env, Load
from .serving import M, ServeCfg
from .training import JobCfg

MONTH0 = 1772323200.0  # 2026-03-01 00:00 UTC


def on(t0, t1, v, base=1.0):
    return lambda t: v if t0 <= t < t1 else base


def ramp(t0, t1, v0, v1):
    return lambda t: v0 if t < t0 else v1 if t >= t1 else v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def episodes(spans, v, base=None):
    return lambda t: v if any(a <= t < b for a, b in spans) else base


def nb(gpu, t0, load, mem_gib, name, cmd, pid, user="root", t1=1e9, container="", cpu=0.9,
       age=0.0):
    return dict(gpu=gpu, t0=t0, t1=t1, load=load, mem=int(mem_gib * 2**30), name=name,
                cmd=cmd, pid=pid, user=user, container=container, cpu=cpu, age=age)


L8 = M["meta-llama/Llama-3.1-8B-Instruct"]
L70 = M["meta-llama/Llama-3.3-70B-Instruct"]
Q7 = M["Qwen/Qwen2.5-7B-Instruct"]
Q32 = M["Qwen/Qwen2.5-32B-Instruct"]
Q72 = M["Qwen/Qwen2.5-72B-Instruct"]
MIS = M["mistralai/Mistral-7B-Instruct-v0.3"]
MIX = M["mistralai/Mixtral-8x7B-Instruct-v0.1"]
DSL = M["deepseek-ai/DeepSeek-V2-Lite-Chat"]
G9 = M["google/gemma-2-9b-it"]
G27 = M["google/gemma-2-27b-it"]
Q3M = M["Qwen/Qwen3-30B-A3B"]
VL = M["Qwen/Qwen2-VL-7B-Instruct"]
BGE = M["BAAI/bge-large-en-v1.5"]
L3 = M["meta-llama/Llama-3.2-3B-Instruct"]
MS24 = M["mistralai/Mistral-Small-24B-Instruct-2501"]

NCCL = "torchrun --nproc-per-node 8 train.py"
# (name, family, cause, culprit, window (seconds from start) or None, note, kind, cfg)
T = []


def add(name, family, cause, culprit, window, note, kind, cfg):
    T.append((name, family, cause, culprit, window, note, kind, cfg))


# ------------------------------------------------------------- oversized_request
add("t01_vllm_n8_logprobs_h100", "serving", "oversized_request", None, (240, 345),
    "Chat endpoint ITL x3 for everyone from 240 s: one client sent n=8, logprobs=20, "
    "max_tokens=3000; the request fans out to 8 sequences with full-vocab logprobs.",
    "serve", ServeCfg("vllm", L8, "h100sxm", rate=3.0, duration=600, out=(200, 0.6),
                      inject=((240, 700, 3000, 8, 20),), container="cust-4412"))
add("t02_vllm_bestof_l40s_mild", "serving", "oversized_request", None, (400, 470),
    "Mild: ITL up ~40% for a minute; a best-of style request (n=4, logprobs=5) from a "
    "batch client shares the L40S with interactive traffic.",
    "serve", ServeCfg("vllm", Q7.q("Qwen/Qwen2.5-7B-Instruct-FP8", 1.0), "l40s", rate=1.5,
                      duration=720, inject=((400, 500, 1400, 4, 5),), mem_util=0.9,
                      cpus=8))
add("t03_vllm_tp2_a100_two_n8", "serving", "oversized_request", None, (200, 560),
    "Two episodes of n=8/logprobs=20 requests from the same API key stall a Qwen-32B TP2 "
    "endpoint on A100s (dcgm-exporter on the node).",
    "serve", ServeCfg("vllm", Q32, "a100sxm80", gpus=2, tp=2, rate=1.2, duration=780,
                      inject=((200, 900, 2500, 8, 20), (470, 900, 1500, 8, 20)), dcgm=True,
                      cpus=24))
# ------------------------------------------------------------- prefill_interference
add("t04_vllm_rag_longdocs_h200", "serving", "prefill_interference", None, (180, 540),
    "Moderate: a RAG tenant started sending 24k-token prompts at 180 s; chat users on the "
    "same Llama-70B FP8 endpoint see ITL spikes while those prefill.",
    "serve", ServeCfg("vllm", L70.q("RedHatAI/Llama-3.3-70B-Instruct-FP8", 1.0), "h200",
                      rate=1.5, duration=720, chunk=8192,
                      long=lambda t: (0.12, 24000) if 180 <= t < 540 else (0.0, 0),
                      mfu_metrics=True))
add("t05_sglang_agents_h100_tp2", "serving", "prefill_interference", None, (120, 600),
    "Severe: agent traffic with 60k-token contexts (no prefix reuse) arriving every few "
    "seconds; decode of the other requests stalls behind chunked prefills.",
    "serve", ServeCfg("sglang", Q32, "h100sxm", gpus=2, tp=2, rate=2.0, duration=660,
                      chunk=8192, long=lambda t: (0.2, 60000) if t >= 120 else (0.0, 0),
                      mem_util=0.88))
add("t06_tgi_l4_longprompts_mild", "serving", "prefill_interference", None, (300, 900),
    "Mild: TGI on an L4; a new document-QA feature sends 6k-token prompts from 300 s and "
    "per-token time creeps up ~40%.",
    "serve", ServeCfg("tgi", MIS.q("mistralai/Mistral-7B-Instruct-v0.3-AWQ", 0.55), "l4",
                      rate=0.6, duration=900, tick=2.0, out=(180, 0.5), cpus=8,
                      long=lambda t: (0.04, 6000) if t >= 300 else (0.0, 0), mem_util=0.92))
# ------------------------------------------------------------- collective_straggler
add("t07_ddp8_h100_rank5_fan", "training", "collective_straggler", (5,), (150, 720),
    "Pre-training on 8xH100: GPU 5's fan/air path failed, it heats to its slowdown point "
    "and clocks down; the other 7 ranks wait for it in NCCL.",
    "job", JobCfg("h100sxm", ranks=8, duration=720, compute_s=0.9, comm_s=0.08,
                  tokens_per_step=8 * 8 * 4096, mem_gib=71, nvl_mib=90000, cmd=NCCL,
                  env={5: Env()}, env_events=((60, 5, "cooling", 3.2),), cpus=96))
add("t08_fsdp8_a100_rank2_slow_mild", "training", "collective_straggler", (2,), (0, 600),
    "Mild: FSDP fine-tune on a bare-metal A100 node; rank 2 is ~15% slower the whole run "
    "(its NIC/GPU pair sits behind a PCIe Gen3 riser), everyone else idles in NCCL.",
    "job", JobCfg("a100sxm80", ranks=8, duration=600, compute_s=1.4, comm_s=0.15,
                  slow={2: 1.15}, tokens_per_step=8 * 4 * 4096, mem_gib=66, dcgm=True,
                  cmd="torchrun --nproc-per-node 8 finetune_fsdp.py", cpus=128))
add("t09_vllm_tp4_h100pcie_brake", "serving", "collective_straggler", (3,), (300, 720),
    "Severe: Llama-70B TP4 on 4x H100 PCIe; GPU 3's riser slot hits the chassis power brake "
    "at 300 s and the whole TP group runs at its pace.",
    "serve", ServeCfg("vllm", L70, "h100pcie", gpus=4, tp=4, rate=2.0, duration=720,
                      link_us=22.0, env={3: Env()}, env_events=((300, 3, "brake", 0.55),),
                      cpus=48))
# ------------------------------------------------------------- input_stall
add("t10_ddp8_h200_nfs_stall", "training", "input_stall", None, (200, 480),
    "Severe: shared NFS volume degraded 200-480 s; all 8 ranks wait on the data loader, "
    "GPU-Util drops to ~30% in waves.",
    "job", JobCfg("h200", ranks=8, duration=660, compute_s=0.7, comm_s=0.06, data_s=0.02,
                  data_fn=on(200, 480, 70.0), tokens_per_step=8 * 8 * 4096, mem_gib=110,
                  nvl_mib=80000, cmd=NCCL, cpus=112))
add("t11_lora_4090_loader_mild", "training", "input_stall", None, (150, 720),
    "Mild: LoRA on a rented RTX 4090 with num_workers=2 and on-the-fly tokenization; from "
    "150 s (longer samples) ~20% of each step waits for data.",
    "job", JobCfg("rtx4090", duration=720, compute_s=0.8, data_s=0.01,
                  data_fn=on(150, 1e9, 22.0), tokens_per_step=4 * 2048, mem_gib=19,
                  loader_workers=2, cpus=8, cmd="python train_lora.py --bf16"))
add("t12_diffusion_a100_jpeg_episodes", "training", "input_stall", None, (120, 640),
    "Diffusion fine-tune on A100 40GB: every few minutes the loader hits a shard of huge "
    "PNGs and the GPU idles for ~40 s at a time.",
    "job", JobCfg("a100sxm40", duration=700, compute_s=0.6, data_s=0.02, tensor_eff=0.45,
                  data_fn=episodes(((120, 165), (300, 345), (480, 520), (600, 640)), 45.0,
                                   1.0), mem_gib=31, tokens_per_step=0, cpus=16,
                  cmd="accelerate launch train_text_to_image.py --mixed_precision bf16"))
# ------------------------------------------------------------- host_launch_jitter
add("t13_vllm_eager_a10g_jitter", "serving", "host_launch_jitter", None, (200, 600),
    "vLLM with --enforce-eager on an A10G VM; from 200 s the launch thread gets descheduled "
    "(eBPF: cudaLaunchKernel p99 in ms), tokens/s down a third.",
    "serve", ServeCfg("vllm", L8.q("meta-llama/Llama-3.1-8B-Instruct-AWQ", 0.55), "a10g",
                      rate=1.2, duration=600, graphs=False, ebpf=True, cpus=8,
                      jitter=lambda t: (0.015, 4.0) if t >= 200 else None))
add("t14_train_h100_irq_jitter_mild", "training", "host_launch_jitter", None, (0, 480),
    "Mild: single-GPU fine-tune on H100 PCIe; an IRQ storm on the trainer's core deschedules "
    "the launch thread now and then (probes on), ~10% slower steps.",
    "job", JobCfg("h100pcie", duration=480, compute_s=0.25, host_s=0.02, ebpf=True,
                  jitter=lambda t: (0.0015, 3.0), kernels_per_step=2200,
                  tokens_per_step=8 * 1024, mem_gib=48, cpus=16,
                  cmd="python sft.py --model Qwen2.5-7B"))
add("t15_sglang_l40s_steal_jitter", "serving", "host_launch_jitter", None, (180, 520),
    "Severe episodes: hypervisor CPU steal on the SGLang VM (180-260 s, 420-520 s); eBPF "
    "shows launches taking 5-20 ms, ITL tail explodes.",
    "serve", ServeCfg("sglang", G9, "l40s", rate=2.0, duration=600, ebpf=True, cpus=8,
                      graphs=False,
                      jitter=episodes(((180, 260), (420, 520)), (0.01, 8.0))))
# ------------------------------------------------------------- host_cpu_contention
add("t16_vllm_quota_h100", "serving", "host_cpu_contention", None, (200, 600),
    "Severe: the customer's k8s limits set cpu=1 on redeploy of the sidecar at 200 s; the "
    "engine's cgroup is throttled every period and GPU-Util falls to ~20%.",
    "serve", ServeCfg("vllm", L8, "h100sxm", rate=3.0, duration=600, psi=False,
                      quota=lambda t: 1.0 if t >= 200 else 8.0, container="k8s-llm-7f9c",
                      cpus=32))
add("t17_vllm_l4_noisy_neighbour", "serving", "host_cpu_contention", None, (150, 450),
    "Moderate: another tenant's build job on the same 8-vCPU host (150-450 s); run queue "
    "~20, PSI up, the vLLM engine core loses CPU and ITL rises.",
    "serve", ServeCfg("vllm", L3, "l4", rate=1.5, duration=600, cpus=8,
                      nb_runnable=on(150, 450, 18.0, 0.0)))
add("t18_fsdp8_a100_fewcores_mild", "training", "host_cpu_contention", None, (0, 540),
    "Mild: 8 ranks with 2 loader workers each on a VM with 12 vCPUs; the trainer threads "
    "queue for CPU the whole run, steps ~20% slower than on the 96-core SKU.",
    "job", JobCfg("a100sxm40", ranks=8, duration=540, compute_s=0.8, comm_s=0.08,
                  host_s=0.05, data_s=0.01, loader_workers=2, cpus=12,
                  tokens_per_step=8 * 2 * 2048, mem_gib=34, nvl_mib=40000, cmd=NCCL))
# ------------------------------------------------------------- tiny_kernels
add("t19_rm_scoring_h100_tiny", "other", "tiny_kernels", None, (0, 480),
    "Reward-model scoring script doing one sample at a time in eager PyTorch: GPU-Util "
    "97% but SM ~10% and no tensor work; throughput a fraction of what it should be.",
    "job", JobCfg("h100sxm", duration=480, compute_s=0.004, host_s=0.0002, data_s=0.0,
                  tensor_eff=0.02, sm_eff=0.1, dram_eff=0.03, occ=0.05, mem_gib=9,
                  kernels_per_step=400, cmd="python score_rm.py --batch-size 1",
                  loader_workers=0, cpus=16))
add("t20_rl_env_a6000_tiny", "training", "tiny_kernels", None, (200, 600),
    "RL fine-tune on a workstation A6000: at 200 s the loop switches to its on-GPU "
    "environment rollout, thousands of tiny per-element kernels; util stays 95%+, SM ~15%.",
    "job", JobCfg("a6000", duration=600, compute_s=0.6, data_s=0.0, host_s=0.01,
                  phase_fn=lambda t: dict(compute_s=0.6, tensor_eff=0.01, sm_eff=0.15,
                                          dram_eff=0.04) if t >= 200 else None,
                  mem_gib=22, tokens_per_step=0, cpus=16, loader_workers=0,
                  cmd="python ppo_rollout.py --env gpu"))
add("t21_mc_pricing_gh200_tiny_mild", "other", "tiny_kernels", None, (0, 420),
    "Mild: a quant customer's Monte-Carlo pricer on GH200 launches one small kernel per "
    "path step; util ~75%, SM ~20%, nothing else wrong.",
    "job", JobCfg("gh200", duration=420, compute_s=0.02, host_s=0.006, data_s=0.0,
                  tensor_eff=0.0, sm_eff=0.26, dram_eff=0.05, occ=0.08, mem_gib=6,
                  loader_workers=0, cpus=72, cmd="python price_paths.py --paths 1e6"))
# ------------------------------------------------------------- memory_bandwidth
add("t22_vllm_agents_ctxgrow_h100", "serving", "memory_bandwidth", None, (250, 720),
    "Agent sessions grow their context from ~2k to ~30k tokens over the ticket's window; "
    "decode becomes KV-read bound (HBM ~90%), ITL doubles, nothing else changed.",
    "serve", ServeCfg("vllm", L8, "h100sxm", rate=2.5, duration=720, prompt=(2000, 0.4),
                      ctx=ramp(150, 600, 1.0, 15.0), prefix_hit=0.85, out=(250, 0.5),
                      max_seqs=64))
add("t23_sglang_longdoc_h200_tp2", "serving", "memory_bandwidth", None, (240, 660),
    "Severe: a summarisation tenant moved to 100k-token documents (prefix-cached) on a "
    "Qwen-72B FP8 TP2 SGLang endpoint; every decode step reads GBs of KV.",
    "serve", ServeCfg("sglang", Q72.q("Qwen/Qwen2.5-72B-Instruct-FP8", 1.0, 1.0), "h200",
                      gpus=2, tp=2, rate=1.0, duration=660, prompt=(3000, 0.4),
                      ctx=ramp(240, 300, 1.0, 30.0), prefix_hit=0.95, out=(400, 0.4),
                      max_seqs=48))
add("t24_llamacpp_4090_ctx_mild", "serving", "memory_bandwidth", None, (300, 720),
    "Mild: llama-server with 4 slots on a 4090; chats got longer (8k -> 24k ctx) and "
    "tokens/s per slot fell ~30%.",
    "serve", ServeCfg("llamacpp", L8.q("Llama-3.1-8B-Instruct", 0.6), "rtx4090", rate=0.4,
                      duration=720, prompt=(2500, 0.3), ctx=ramp(300, 500, 1.0, 2.6),
                      max_seqs=4, prefix_hit=0.8, cpus=16))
# ------------------------------------------------------------- throttling
add("t25_l40s_fan_failing", "serving", "throttling", None, (200, 780),
    "Severe: single L40S VM; the chassis fan serving its slot failed, the board reaches its "
    "slowdown temperature after a few minutes and clocks drop to ~60%.",
    "serve", ServeCfg("vllm", G9, "l40s", rate=2.5, duration=780, env={0: Env(cooling=2.6)},
                      cpus=16))
add("t26_ddp8_h100_chassis_brake", "training", "throttling", None, (300, 700),
    "A power-capped rack: at 300 s the BMC asserts power brake on all 8 GPUs of the node; "
    "the whole job slows ~40% alike.",
    "job", JobCfg("h100sxm", ranks=8, duration=700, compute_s=0.9, comm_s=0.08,
                  tokens_per_step=8 * 8 * 4096, mem_gib=70, nvl_mib=90000, cmd=NCCL,
                  env={i: Env() for i in range(8)},
                  env_events=tuple((300, i, "brake", 0.4) for i in range(8)), cpus=96))
add("t27_a100pcie_powerlimit_mild", "serving", "throttling", None, (250, 660),
    "Mild: facilities lowered the A100 PCIe power limit 300 -> 190 W at 250 s to fit a "
    "rack budget; the busy endpoint now sits at the cap, ~15% slower.",
    "serve", ServeCfg("vllm", MS24, "a100pcie80", rate=1.5, duration=660,
                      env={0: Env()}, env_events=((250, 0, "power_limit_w", 190.0),),
                      cpus=16))
add("t28_dp4_a6000_gpu2_fan", "serving", "throttling", (2,), (240, 780),
    "Workstation with 4x A6000 each serving its own replica (dp=4); GPU 2's blower is "
    "dying, it throttles on temperature while the other three are fine.",
    "serve", ServeCfg("vllm", L8, "a6000", gpus=4, dp=4, rate=1.2, duration=780,
                      env={2: Env(cooling=2.4)}, cpus=32))
# ------------------------------------------------------------- kv_pressure
add("t29_vllm_lowmem_kv_h100", "serving", "kv_pressure", None, (200, 660),
    "Severe: the endpoint runs with --gpu-memory-utilization 0.35 (was sharing with a "
    "retired reranker); a traffic surge with long outputs fills the pool: preemptions, "
    "queue grows.",
    "serve", ServeCfg("vllm", Q32.q("Qwen/Qwen2.5-32B-Instruct-FP8", 1.0), "h100sxm",
                      rate=on(200, 1e9, 5.0, 0.5), duration=660, mem_util=0.55,
                      prompt=(1500, 0.5), out=(900, 0.5)))
add("t30_sglang_retract_a100_40g", "serving", "kv_pressure", None, (180, 600),
    "Moderate: SGLang on A100 40GB with long generations (story writing app); the token "
    "pool fills and the scheduler retracts requests.",
    "serve", ServeCfg("sglang", L8, "a100sxm40", rate=on(180, 1e9, 2.8, 0.6), duration=600,
                      mem_util=0.78, prompt=(1200, 0.4), out=(1500, 0.4), cpus=16))
add("t31_vllm0_v100_kv_mild", "serving", "kv_pressure", None, (300, 720),
    "Mild: legacy vLLM 0.6 on V100 32GB; evening peak at 300 s brings occasional "
    "preemptions and a short waiting queue.",
    "serve", ServeCfg("vllm0", MIS, "v100", rate=on(300, 1e9, 1.5, 0.5), duration=720,
                      mem_util=0.9, prompt=(900, 0.5), out=(500, 0.5), tick=2.0,
                      graphs=True, cpus=16))
# ------------------------------------------------------------- gpu_shared
add("t32_notebook_on_gpu1_a100x4", "serving", "gpu_shared", (1,), (180, 720),
    "4 independent replicas behind a router; at 180 s someone's forgotten Jupyter kernel "
    "starts a training cell on GPU 1; replica 1's latency doubles.",
    "serve", ServeCfg("vllm", L8, "a100sxm80", gpus=4, dp=4, rate=1.5, duration=720,
                      mem_util=0.8, dcgm=True, cpus=64,
                      neighbors=(nb(1, 180, Load(0.7, 0.62, 0.3, 0.45, 0.28, 0, 0, 0, 0.3),
                                    9.5, "python3", "/opt/conda/bin/python -m ipykernel_launcher"
                                    " -f /home/jovyan/.local/share/jupyter/runtime/k-1.json",
                                    71234, user="jovyan", age=86000),)))
add("t33_miner_on_4090", "serving", "gpu_shared", None, (100, 600),
    "Severe: a crypto-miner-like process appeared next to the customer's llama-server at "
    "100 s (compromised container); tokens/s halves.",
    "serve", ServeCfg("llamacpp", Q7.q("Qwen2.5-7B-Instruct", 0.6), "rtx4090", rate=0.5,
                      duration=600, max_seqs=4, cpus=16,
                      neighbors=(nb(0, 100, Load(0.98, 0.95, 0.0, 0.55, 0.2, 0, 0, 0, 0.02),
                                    2.1, "xmrig-cuda", "/tmp/.x/kworkerd --cuda -o pool:3333",
                                    99102, user="www-data"),)))
add("t34_second_container_h100nvl_mild", "training", "gpu_shared", (0,), (300, 720),
    "Mild: the scheduler placed another customer's container on GPU 0 of this 2-GPU VM at "
    "300 s; their light inference uses ~15% of the GPU and the LoRA run slows a bit.",
    "job", JobCfg("h100nvl", ranks=1, gpus=2, duration=720, compute_s=0.5, mem_gib=40,
                  tokens_per_step=8 * 2048, cmd="python train_lora.py --model gemma-2-9b",
                  neighbors=(nb(0, 300, Load(0.18, 0.12, 0.06, 0.05, 0.04, 0, 0, 0, 0.3), 14,
                                "python3", "python serve.py --port 9000", 50211,
                                user="1001", container="docker:9be1c02a44d0"),), cpus=32))
# ------------------------------------------------------------- spec_decode_rejected
add("t35_vllm_eagle_accept_collapse_h100", "serving", "spec_decode_rejected", None,
    (240, 660),
    "Severe: EAGLE speculative decoding; at 240 s the tenant switched traffic to a Korean "
    "code-review workload and draft acceptance fell from ~0.75 to ~0.1.",
    "serve", ServeCfg("vllm", L8, "h100sxm", rate=2.0, duration=660,
                      spec=(4, on(240, 1e9, 0.1, 0.75), 0.12)))
add("t36_sglang_spec_h200_mild", "serving", "spec_decode_rejected", None, (300, 720),
    "Mild: SGLang with EAGLE (3 drafts): acceptance drifts from 0.72 to 0.45 after a "
    "system-prompt change at 300 s; throughput ~15% lower.",
    "serve", ServeCfg("sglang", L70.q("RedHatAI/Llama-3.3-70B-Instruct-FP8", 1.0), "h200",
                      rate=1.0, duration=720, spec=(3, on(300, 1e9, 0.45, 0.72), 0.08)))
add("t37_llamacpp_draft_a6000", "serving", "spec_decode_rejected", None, (200, 600),
    "llama-server with a draft model on an A6000; after the main model was swapped to a "
    "new fine-tune at 200 s the draft no longer matches (acceptance 0.65 -> 0.2).",
    "serve", ServeCfg("llamacpp", Q32.q("Qwen2.5-32B-Instruct", 0.6), "a6000", rate=0.3,
                      duration=600, max_seqs=4, spec=(8, on(200, 1e9, 0.2, 0.65), 0.04),
                      cpus=16))

# ------------------------------------------------------------- healthy look-alikes
H = "healthy"
add("h01_idle_vllm_vram_full_h100", "serving", None, None, None,
    "Customer asks why VRAM is 90% used with no traffic: vLLM pre-reserves its KV pool; "
    "one request every minute or so.", "serve",
    ServeCfg("vllm", L8, "h100sxm", rate=0.015, duration=600))
add("h02_diurnal_vllm_a100", "serving", None, None, None,
    "Morning ramp-up of a support chatbot; load triples, latency stays flat.", "serve",
    ServeCfg("vllm", Q7, "a100sxm80", rate=ramp(60, 840, 0.6, 4.0), duration=900, tick=2.0))
add("h03_bursty_sglang_l40s", "serving", None, None, None,
    "Bursty batch-API traffic: 30 s bursts then silence; util swings 0-100%.", "serve",
    ServeCfg("sglang", Q7, "l40s", rate=lambda t: 5.0 if (t % 120) < 30 else 0.05,
             duration=600))
add("h04_warmup_vllm_h200", "serving", None, None, None,
    "Recording from the moment the endpoint was (re)deployed: weight loading, profiling "
    "run, CUDA-graph capture, then normal traffic.", "serve",
    ServeCfg("vllm", Q32, "h200", rate=2.0, duration=600, warmup=True))
add("h05_ckpt_ddp8_h100", "training", None, None, None,
    "Is my training healthy? DDP on 8xH100 with a checkpoint save every 3 min (GPUs idle "
    "~20 s each time).", "job",
    JobCfg("h100sxm", ranks=8, duration=720, compute_s=0.9, comm_s=0.08, mem_gib=70,
           tokens_per_step=8 * 8 * 4096, nvl_mib=90000, cmd=NCCL, cpus=96,
           phase_fn=lambda t: dict(idle=1.0) if (t % 180) > 160 else None))
add("h06_eval_fsdp_a100", "training", None, None, None,
    "FSDP fine-tune with a 60 s eval pass every 5 minutes (forward only, lower util).",
    "job", JobCfg("a100sxm80", ranks=8, duration=720, compute_s=1.2, comm_s=0.12,
                  mem_gib=60, tokens_per_step=8 * 4 * 4096, dcgm=True, cpus=128,
                  cmd="torchrun --nproc-per-node 8 finetune_fsdp.py",
                  phase_fn=lambda t: dict(compute_s=0.4, tensor_eff=0.35, comm_s=0.01)
                  if (t % 300) > 240 else None))
add("h07_decode_membound_h200", "serving", None, None, None,
    "Why is DRAM 85% and tensor 10%? High-concurrency decode is memory-bound by nature; "
    "steady ITL within SLO.", "serve",
    ServeCfg("vllm", L8, "h200", rate=12.0, duration=600, prompt=(1500, 0.5),
             out=(400, 0.5)))
add("h08_powercapped_l40s_steady", "serving", None, None, None,
    "The provider runs these L40S at a 250 W cap; 'power cap' is always set under load and "
    "performance is what was sold.", "serve",
    ServeCfg("vllm", Q7.q("Qwen/Qwen2.5-7B-Instruct-FP8", 1.0), "l40s", rate=3.0,
             duration=600, env={0: Env(power_limit_w=250.0)}))
add("h09_idle_notebook_on_4090", "serving", None, None, None,
    "A second process (an idle Jupyter kernel holding 3 GB) on the llama.cpp GPU; it does "
    "no work.", "serve",
    ServeCfg("llamacpp", L8.q("Llama-3.1-8B-Instruct", 0.6), "rtx4090", rate=0.4,
             duration=600, max_seqs=4,
             neighbors=(nb(0, 0, Load(), 3.0, "python3", "python -m ipykernel_launcher",
                           4411, user="dev", cpu=0.01, age=20000),)))
add("h10_offline_batch_h100", "other", None, None, None,
    "Offline batch generation (vLLM LLM class, no server): 100% util for hours, which is "
    "the point.", "job",
    JobCfg("h100sxm", duration=600, compute_s=0.05, host_s=0.0004, data_s=0.0,
           tensor_eff=0.35, sm_eff=0.88, dram_eff=0.7, mem_gib=72, loader_workers=0,
           cmd="python batch_generate.py --model Qwen2.5-7B --input s3://bucket/prompts",
           cpus=26))
add("h11_restart_vllm_a10g", "serving", None, None, None,
    "Customer redeployed the endpoint at 300 s (90 s down); counters restart from zero.",
    "serve", ServeCfg("vllm", L3, "a10g", rate=1.0, duration=660, restart=((300, 90),),
                      cpus=8))
add("h12_rag_prefill_slo_h100nvl", "serving", None, None, None,
    "Prefill-heavy RAG (6k-token prompts, short answers): high prompt tokens/s, TTFT "
    "within its 1.5 s SLO.", "serve",
    ServeCfg("vllm", MS24, "h100nvl", rate=1.2, prompt=(6000, 0.25), out=(120, 0.4),
             duration=600, prefix_hit=0.3))
add("h13_spec_normal_l40s", "serving", None, None, None,
    "Speculative decoding (ngram, k=4) with the usual ~0.6 acceptance all along.", "serve",
    ServeCfg("vllm", L8.q("meta-llama/Llama-3.1-8B-Instruct-FP8", 1.0), "l40s", rate=1.5,
             duration=600, spec=(4, 0.6, 0.02)))
add("h14_lora_4090_steady", "training", None, None, None,
    "Consumer-board LoRA, steady: is it healthy? (yes)", "job",
    JobCfg("rtx4090", duration=600, compute_s=0.7, data_s=0.01, mem_gib=20,
           tokens_per_step=4 * 2048, cpus=16, cmd="python train_lora.py"))
add("h15_ddp8_h100_steady", "training", None, None, None,
    "Plain DDP on 8xH100 with normal NCCL overlap; ranks within 2% of each other.", "job",
    JobCfg("h100sxm", ranks=8, duration=600, compute_s=0.9, comm_s=0.08, mem_gib=70,
           slow={3: 1.01, 6: 1.02}, tokens_per_step=8 * 8 * 4096, nvl_mib=90000, cmd=NCCL,
           cpus=96))
add("h16_rlhf_alternating_h100", "training", None, None, None,
    "RLHF loop on 8xH100: 90 s generation phase (memory-bound decode) then 60 s training "
    "phase, repeatedly; util and power swing with the phases.", "job",
    JobCfg("h100sxm", ranks=8, duration=750, compute_s=1.0, comm_s=0.1, mem_gib=74,
           nvl_mib=60000, cmd="python -m openrlhf.cli.train_ppo_ray", cpus=96,
           phase_fn=lambda t: dict(compute_s=0.03, tensor_eff=0.08, sm_eff=0.8,
                                   dram_eff=0.85, comm_s=0.0) if (t % 150) < 90 else None))
add("h17_embedding_qps_l4", "serving", None, None, None,
    "Embedding service at ~150 req/s of short texts; tiny per-request work, steady.",
    "serve", ServeCfg("vllm", BGE, "l4", rate=150.0, prompt=(180, 0.5), out=(1, 0),
                      embed=True, duration=480, max_seqs=256, cpus=8))
add("h18_ollama_swaps_a10g", "serving", None, None, None,
    "Several small models on one A10G, loaded on demand: each swap unloads one model and "
    "loads another (5-8 s with no server).", "serve",
    ServeCfg("llamacpp", L3.q("Llama-3.2-3B-Instruct", 0.6), "a10g", rate=0.6,
             duration=720, max_seqs=4, restart=((200, 6), (430, 8), (610, 5)), cpus=8))
add("h19_vlm_cpu_preproc_h100", "serving", None, None, None,
    "Qwen2-VL endpoint: image decoding/resizing keeps 10 host cores busy; GPU side "
    "normal, latency within SLO.", "serve",
    ServeCfg("vllm", VL, "h100sxm", rate=2.0, prompt=(1800, 0.3), duration=600, cpus=32,
             nb_runnable=10.0))
add("h20_moe_dp2_h200", "serving", None, None, None,
    "DeepSeek-V2-Lite (MoE, MLA) as two data-parallel engines on 2xH200; steady.", "serve",
    ServeCfg("vllm", DSL, "h200", gpus=2, dp=2, rate=3.0, duration=600))
add("h21_tp4_llama70b_a100", "serving", None, None, None,
    "Llama-70B TP4 on A100 SXM; all four ranks look alike, steady evening load.", "serve",
    ServeCfg("vllm", L70, "a100sxm80", gpus=4, tp=4, rate=1.5, duration=600, dcgm=True,
             cpus=64))
add("h22_json_grammar_h100pcie", "serving", None, None, None,
    "Structured-output (JSON grammar) decoding: extra CPU per step, util ~80%, steady and "
    "as expected for xgrammar.", "serve",
    ServeCfg("vllm", MIX.q("mistralai/Mixtral-8x7B-Instruct-v0.1-FP8", 1.0), "h100pcie",
             rate=1.0, duration=600, host_ms=2.0, cpus=24))
add("h23_diffusion_ft_a100_steady", "training", None, None, None,
    "Diffusion fine-tune with a fast loader; steady 95% util.", "job",
    JobCfg("a100sxm40", duration=600, compute_s=0.6, data_s=0.01, tensor_eff=0.45,
           mem_gib=31, cpus=16, cmd="accelerate launch train_text_to_image.py"))
add("h24_gh200_rm_batch_scoring", "other", None, None, None,
    "Reward-model scoring in large batches on GH200: tensor-heavy, power near the cap.",
    "job", JobCfg("gh200", duration=480, compute_s=0.4, data_s=0.005, tensor_eff=0.7,
                  mem_gib=60, loader_workers=2, cpus=72,
                  cmd="python score_rm.py --batch-size 256"))
add("h25_v100_legacy_train", "training", None, None, None,
    "An old V100 node (driver 470) running a BERT fine-tune; several fields unsupported, "
    "nothing wrong.", "job",
    JobCfg("v100", ranks=4, duration=600, compute_s=0.5, comm_s=0.05, mem_gib=24,
           tokens_per_step=4 * 32 * 512, cpus=40, tick=2.0,
           cmd="python -m torch.distributed.launch --nproc_per_node 4 run_glue.py"))
