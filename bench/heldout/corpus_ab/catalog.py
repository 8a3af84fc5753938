"""The on-call fortnight: every trace's configuration, label and ticket note.

Each entry: (name, family, cause, culprit, window, config, note).  ``window`` is in seconds
from the trace's start, or "special" (while the oversized requests were in the batch, as
the simulation recorded), or ("throttle", gpu) (while that GPU's clocks were cut), or
"all"; it is turned into wall-clock seconds by ``traces()``.
"""

from __future__ import annotations

from .common import GiB, Act
from .serving import (GGUF8B, LLAMA8B, LLAMA8B_AWQ, LLAMA8B_LONG, LLAMA70B_FP8, MISTRAL7B_GPTQ,
                      MIXTRAL, QWEN05B, QWEN7B, QWEN32B_AWQ, QWEN3_MOE, QWEN_CODER14B, Serve, const,
                      window)
from .training import Job


def ln(mu, sd, lo=8):
    return lambda t, r: max(lo, int(r.lognormvariate(mu, sd)))


def mix(base, other, t0, t1, p):
    """``other`` with probability p while t in [t0, t1), else ``base``."""
    return lambda t, r: other(t, r) if t0 <= t < t1 and r.random() < p else base(t, r)


def ramp(a, b, t0, t1):
    return lambda t: a if t < t0 else b if t >= t1 else a + (b - a) * (t - t0) / (t1 - t0)


def tenant(busy, sm, tensor, dram, mem, label, pod=""):
    return Act(busy=busy, sm=sm, tensor=tensor, dram=dram, mem_used=int(mem), label=label, pod=pod)


def on_gpu(g, t0, t1, act):
    return lambda t, gg: act if gg == g and t0 <= t < t1 else None


def episodes(spans, on, off):
    return lambda t: on if any(a <= t < b for a, b in spans) else off


def gpu_forced(g, spans, reasons, clock):
    return lambda t, gg: (reasons, clock) if (g is None or gg == g) and any(
        a <= t < b for a, b in spans) else ((), 1.0)


H = 3600.0
POD = "prod-inference/"
TRAIN8 = "torchrun --nnodes 4 --nproc-per-node 8 pretrain.py --config configs/7b_base.yaml"

ENTRIES = [
    # ----------------------------------------------------------- oversized_request
    ("p01-codecomp-n8-logprobs", "serving", "oversized_request", None, "special",
     Serve("p01", "vllm", QWEN_CODER14B, "H100-SXM", minutes=8, rate=const(6.0), start=0.4 * H,
           prompt=ln(7.0, 0.6), out=ln(4.5, 0.6), specials=((200, 8, 20, 700, 480, 1),),
           pod=POD + "code-complete-7d9f"),
     "Severe: one eval-harness request (n=8, logprobs=20, 480 tokens) stalled every completion "
     "for ~40 s; ITL x5. Rate-limit n*logprobs per key."),
    ("p02-sglang-n16-sampling", "serving", "oversized_request", None, "special",
     Serve("p02", "sglang", QWEN7B, "A100-80", minutes=7, rate=const(3.0), start=9.1 * H,
           specials=((150, 16, 5, 1200, 600, 1), (170, 16, 5, 900, 500, 1)),
           cpu_step=0.003, overlap=0.85),
     "Severe: a research notebook sent three best-of-16 requests with logprobs to the shared chat "
     "endpoint; every stream's ITL went from ~20 ms to >100 ms for over a minute."),
    ("p03-awq-logprobs-episodes", "serving", "oversized_request", None, "special",
     Serve("p03", "vllm", LLAMA8B_AWQ, "L40S", minutes=9, rate=const(3.0), start=26.5 * H,
           specials=((120, 1, 1, 400, 260, 1), (300, 2, 1, 500, 200, 1), (430, 1, 1, 300, 220, 1)),
           new_metrics=False),
     "Mild, intermittent: a partner integration asks logprobs on every few requests; each one "
     "lifts ITL of the whole batch by 50-70% for its duration."),
    # ----------------------------------------------------------- prefill_interference
    ("p04-rag-32k-prefill-tp2", "serving", "prefill_interference", None, (180, 360),
     Serve("p04", "vllm", LLAMA70B_FP8,
           "H100-SXM", tp=2, minutes=9, rate=const(2.5), start=30.2 * H,
           prompt=mix(ln(7.2, 0.5), lambda t, r: r.randint(24000, 32000), 180, 360, 0.04),
           gmu=0.92,
           out=ln(5.0, 0.5), pod=POD + "chat-70b-fp8"),
     "Moderate: the docs-QA team pointed a 32k-token RAG pipeline at the chat endpoint; chat ITL "
     "doubled while their prompts prefilled."),
    ("p05-sglang-128k-docs", "serving", "prefill_interference", None, (240, 420),
     Serve("p05", "sglang", LLAMA8B_LONG, "H200", minutes=9, rate=const(4.0), start=50.0 * H,
           prompt=mix(ln(7.0, 0.5), lambda t, r: r.randint(90000, 120000), 240, 420, 0.03),
           out=ln(5.2, 0.5), chunk=8192, cpu_step=0.003, overlap=0.85),
     "Severe: long-document summarisation (100k+ token prompts) started on the long-context "
     "endpoint; interactive streams stalled for whole seconds between tokens."),
    ("p06-tgi-long-prompts-mild", "serving", "prefill_interference", None, (100, 300),
     Serve("p06", "tgi", MISTRAL7B_GPTQ, "A10G", minutes=7, rate=const(1.5), start=61.0 * H,
           prompt=mix(ln(6.3, 0.5), lambda t, r: r.randint(5000, 7000), 100, 300, 0.08),
           out=ln(4.8, 0.5), cpu_step=0.004, overlap=0.3, cpus=8, host_load=0.5),
     "Mild: a support-bot tenant started attaching whole tickets (6k tokens); other users' "
     "time per token rose ~40% while those prefilled."),
    # ----------------------------------------------------------- collective_straggler
    ("p07-ddp8-rank5-thermal", "training", "collective_straggler", (5,), ("throttle", 5),
     Job("p07", "H100-SXM", gpus=8, minutes=10, step_s=0.9, comm_s=0.12, mfu=0.5, unit="tokens",
         work_per_step=8 * 8 * 4096, start=3.3 * H, cooling=lambda t, g: 2.1 if g == 5 and t > 60 else 1.0,
         nvlink_mib=90000, mem=71 * GiB, cmd=TRAIN8),
     "Severe: rank 5 (GPU 5) hits thermal slowdown (its cold plate), the other 7 ranks spin in "
     "NCCL waiting for it; step time +25%. Drain node, file a hardware ticket."),
    ("p08-fsdp4-rank2-slow-mild", "training", "collective_straggler", (2,), "all",
     Job("p08", "A100-80", gpus=4, minutes=8, step_s=1.1, comm_s=0.15, mfu=0.5, start=75.5 * H,
         forced=lambda t, g: (("hw slowdown",), 0.86) if g == 2 else ((), 1.0), mem=62 * GiB,
         cmd="accelerate launch --config fsdp.yaml finetune.py --model llama-3.1-8b",
         nvlink_mib=60000),
     "Mild: GPU 2 sits at HW-slowdown clocks the whole run (PSU-side issue on that board), so "
     "rank 2 is ~15% slower and ranks 0,1,3 wait on it in every reduce-scatter."),
    ("p09-tp4-pcie-gpu3-airflow", "serving", "collective_straggler", (3,), ("throttle", 3),
     Serve("p09", "vllm", LLAMA70B_FP8,
           "H100-PCIe", tp=4, minutes=10, rate=const(3.0), start=90.0 * H,
           cooling=lambda t, g: 2.5 if g == 3 else 1.0, out=ln(5.3, 0.6)),
     "Moderate: GPU 3 of the TP4 group runs hot (blocked airflow in the PCIe chassis) and clocks "
     "down; the whole TP group decodes at its pace."),
    ("p10-h200-rank7-episodes", "training", "collective_straggler", (7,), (100, 380),
     Job("p10", "H200", gpus=8, minutes=8, step_s=1.4, comm_s=0.18, mfu=0.52, start=100.0 * H,
         slow=lambda t, g: 1.4 if g == 7 and (100 <= t < 170 or 300 <= t < 380) else 1.0,
         nvlink_mib=110000, mem=120 * GiB, cmd=TRAIN8),
     "Moderate, intermittent: rank 7 slows by 40% in bursts (its host's page-migration storm); "
     "the other ranks wait in all-reduce during each burst."),
    # ----------------------------------------------------------- input_stall
    ("p11-lora-l40s-loader-mild", "training", "input_stall", None, "all",
     Job("p11", "L40S", gpus=1, minutes=7, step_s=0.6, mfu=0.45, unit="samples", work_per_step=16,
         data_wait=lambda t, r: r.uniform(0.4, 0.9) if r.random() < 0.2 else 0.0, workers=2,
         loader_cpu=0.8, start=110.0 * H, mem=38 * GiB, host_step=0.02, cpus=16,
         cmd="python finetune_lora.py --model mistral-7b --num-workers 2 --image-aug"),
     "Mild: LoRA job with 2 loader workers doing image augmentation; about 1 step in 5 waits "
     "0.4-0.9 s for a batch. More workers."),
    ("p12-pretrain-s3fuse-stall", "training", "input_stall", None, (200, 420),
     Job("p12", "H100-SXM", gpus=8, minutes=10, step_s=0.8, comm_s=0.1, mfu=0.5, unit="tokens",
         work_per_step=8 * 8 * 4096, io_bound=True, workers=6,
         data_wait=lambda t, r: r.uniform(1.0, 2.2) if 200 <= t < 420 else 0.0,
         start=125.0 * H, nvlink_mib=90000, mem=70 * GiB, cmd=TRAIN8),
     "Severe: the shard reader on the S3 FUSE mount stalled (throttled bucket); GPUs idle most "
     "of every step for ~4 minutes, tokens/s down 70%."),
    ("p13-whisper-ffmpeg-stall", "other", "input_stall", None, "all",
     Job("p13", "L4", gpus=1, minutes=6, step_s=0.35, mfu=0.3, sm_fill=0.75, workers=2,
         data_wait=lambda t, r: r.uniform(0.2, 0.5), loader_cpu=0.7, start=140.0 * H,
         mem=9 * GiB, cpus=8, host_load=0.3, proc_name="python3",
         cmd="python3 transcribe_batch.py --model whisper-large-v3 --decode-workers 2"),
     "Moderate: transcription batch runs with 2 ffmpeg decode workers on an 8-vCPU box; the GPU "
     "waits for audio ~50% of the time."),
    # ----------------------------------------------------------- host_launch_jitter
    ("p14-l4-eager-logshipper", "serving", "host_launch_jitter", None, (150, 330),
     Serve("p14", "vllm", LLAMA8B_AWQ, "L4", minutes=8, rate=const(1.2), graphs=False,
           jitter=window(150, 330, (0.004, 6.0), (0.0, 0.0)), ebpf=True, cpus=16, host_load=1.0,
           intruder_cores=window(150, 330, 3.0, 0.0), start=150.0 * H, new_metrics=False),
     "Moderate: fluent-bit restarted with a busy regex pinned to the engine's cores; eBPF shows "
     "launch calls stretched to milliseconds, ITL +30%."),
    ("p15-ada-eager-trainer-jitter", "training", "host_launch_jitter", None, (60, 420),
     Job("p15", "RTX6000Ada", gpus=1, minutes=7, step_s=0.15, mfu=0.35, host_step=0.02,
         async_launch=0.6, jitter=lambda t: (0.01, 3.0) if t >= 60 else (0.0, 0.0), ebpf=True,
         start=163.0 * H, cpus=24, host_load=3.0, mem=30 * GiB, intruder_cores=lambda t: 6.0 if t >= 60 else 0.0,
         cmd="python train_small.py --eager --batch 32", user="jlee"),
     "Severe: on the shared workstation another user's job pins the same cores; the trainer's "
     "launch thread is descheduled mid-launch (eBPF p99 in ms), step time nearly doubles."),
    ("p16-sglang-graph-launch-mild", "serving", "host_launch_jitter", None, (100, 360),
     Serve("p16", "sglang", QWEN7B, "H100-PCIe", minutes=8, rate=const(4.0), ebpf=True,
           jitter=episodes(((100, 200), (300, 360)), (0.15, 8.0), (0.0, 0.0)), cpus=32,
           intruder_cores=episodes(((100, 200), (300, 360)), 2.0, 0.0), start=175.0 * H,
           cpu_step=0.003, overlap=0.85),
     "Mild, two episodes: a cron backup on the engine's cores preempts the scheduler thread at "
     "graph launch; ITL +35% during each."),
    # ----------------------------------------------------------- host_cpu_contention
    ("p17-k8s-quota-2cores", "serving", "host_cpu_contention", None, (180, 480),
     Serve("p17", "vllm", QWEN7B, "H100-SXM", minutes=9, rate=ramp(3.0, 9.0, 150, 200), quota=2.0,
           cpu_share=lambda t: 0.42 if t >= 180 else 1.0, psi=False, pod=POD + "qwen7b-chat-5c6d",
           start=190.0 * H, cpu_step=0.005),
     "Severe: the pod's CPU limit is 2 cores; once traffic rose the API server and engine core "
     "were CFS-throttled most periods, GPU-Util fell to ~40% and ITL tripled."),
    ("p18-tgi-preproc-neighbour", "serving", "host_cpu_contention", None, (120, 300),
     Serve("p18", "tgi", MISTRAL7B_GPTQ, "A10G", minutes=7, rate=const(2.0), cpus=16,
           intruder_cores=window(120, 300, 30.0, 0.0), cpu_share=window(120, 300, 0.55, 1.0),
           start=205.0 * H, overlap=0.3, cpu_step=0.005),
     "Moderate: a feature-extraction job with 30 threads landed on the 16-vCPU TGI box; run "
     "queue ~35, PSI high, time per token +60%."),
    ("p19-llamacpp-compile-mild", "serving", "host_cpu_contention", None, (90, 250),
     Serve("p19", "llamacpp", GGUF8B, "RTX6000Ada", minutes=6, rate=const(0.6), cpus=24,
           intruder_cores=window(90, 250, 60.0, 0.0), cpu_share=window(90, 250, 0.7, 1.0),
           start=214.0 * H, overlap=0.0, cpu_step=0.003, max_seqs=4),
     "Mild: someone ran make -j64 on the workstation that hosts the team's llama-server; "
     "predicted tokens/s down ~25% while it compiled."),
    # ----------------------------------------------------------- tiny_kernels
    ("p20-embed-batch1-h100", "other", "tiny_kernels", None, "all",
     Job("p20", "H100-SXM", gpus=1, minutes=6, step_s=0.004, mfu=0.03, sm_fill=0.12, dram_fill=0.05,
         opt_s=0.0, host_step=0.0035, async_launch=0.9, start=230.0 * H, mem=6 * GiB,
         proc_name="python3", cmd="python3 -m embed_service --model bge-m3 --max-batch 1",
         pod=POD + "embed-bge-m3-2b1c"),
     "Moderate: embedding service redeployed with max-batch 1: GPU-Util 95%+ on an H100 while "
     "SMs are ~10% active; throughput per GPU collapsed."),
    ("p21-a100-tiny-model-eager", "training", "tiny_kernels", None, "all",
     Job("p21", "A100-40", gpus=1, minutes=6, step_s=0.05, mfu=0.04, sm_fill=0.18, dram_fill=0.06,
         opt_s=0.004, host_step=0.04, async_launch=0.97, dcgm=True, start=236.0 * H, mem=5 * GiB,
         cmd="python train_tabular_mlp.py --batch 64", unit="samples", work_per_step=64),
     "Moderate: a tiny MLP trained with batch 64 on an A100: util near 100%, SM active under "
     "20% (DCGM); the GPU is busy launching small kernels."),
    ("p22-h200-router-05b-eager", "serving", "tiny_kernels", None, "all",
     Serve("p22", "vllm", QWEN05B, "H200", minutes=6, rate=const(3.0), graphs=False,
           cpu_step=0.0012, overlap=0.9, out=ln(2.5, 0.4), prompt=ln(6.0, 0.4), start=250.0 * H),
     "Severe: the intent-router 0.5B model runs eager on a whole H200; GPU-Util ~90%, SM ~8%. "
     "Move it to a small GPU or enable CUDA graphs."),
    # ----------------------------------------------------------- memory_bandwidth
    ("p23-h200-agents-128k-growth", "serving", "memory_bandwidth", None, (200, 600),
     Serve("p23", "vllm", LLAMA8B_LONG, "H200", minutes=10, rate=const(0.15), start=260.0 * H,
           prompt=lambda t, r: int(min(120000, 4000 + max(0, t - 120) * 220) * r.uniform(0.8, 1.1)),
           out=ln(5.8, 0.4), max_seqs=8),
     "Moderate: agent sessions grew to ~100k-token histories; decode now reads GBs of KV per "
     "step, DRAM ~90% busy, ITL x3 with the same request rate."),
    ("p24-l40s-16k-client-mild", "serving", "memory_bandwidth", None, (240, 540),
     Serve("p24", "vllm", LLAMA8B_AWQ, "L40S", minutes=9, rate=const(2.0), start=272.0 * H,
           prompt=mix(ln(6.8, 0.5), lambda t, r: r.randint(12000, 16000), 240, 540, 0.12),
           out=ln(5.5, 0.4), new_metrics=False),
     "Mild: a new client sends 16k-token contexts; KV reads per step rise, ITL +40% at the same "
     "batch size. Expected cost, but worth a capacity note."),
    ("p25-llamacpp-long-chat", "serving", "memory_bandwidth", None, (120, 420),
     Serve("p25", "llamacpp", GGUF8B, "RTX6000Ada", minutes=7, rate=const(0.12), max_seqs=4,
           prompt=lambda t, r: 1500 if t < 120 else r.randint(24000, 30000), out=ln(5.5, 0.3),
           overlap=0.0, cpu_step=0.002, start=281.0 * H, cpus=24),
     "Mild: the legal team's assistant moved to 30k-token conversations on the llama-server box; "
     "decode is KV-read bound, tokens/s per slot down ~35%."),
    # ----------------------------------------------------------- throttling
    ("p26-pretrain-power-brake", "training", "throttling", None, (200, 290),
     Job("p26", "H100-SXM", gpus=8, minutes=8, step_s=0.9, comm_s=0.12, mfu=0.5, unit="tokens",
         work_per_step=8 * 8 * 4096, forced=gpu_forced(None, ((200, 290),), ("power brake",), 0.42),
         start=290.0 * H, nvlink_mib=90000, mem=71 * GiB, cmd=TRAIN8),
     "Moderate: the rack PDU asserted power brake on all 8 GPUs for 90 s; every rank clocked "
     "down alike, tokens/s -55%. Facilities ticket."),
    ("p27-l40s-failed-fan", "serving", "throttling", None, ("throttle", 0),
     Serve("p27", "vllm", LLAMA8B, "L40S", minutes=10, rate=const(4.0), start=300.0 * H,
           cooling=lambda t, g: 1.0 if t < 60 else 2.4, new_metrics=False),
     "Severe: a chassis fan failed at ~1 min; the L40S climbs past its slowdown temperature and "
     "runs at reduced clocks; ITL +40-60%."),
    ("p28-a10g-hw-slowdown-mild", "serving", "throttling", None, (90, 390),
     Serve("p28", "tgi", MISTRAL7B_GPTQ, "A10G", minutes=8, rate=const(2.0), cpus=8, host_load=0.5,
           forced=gpu_forced(0, ((90, 150), (230, 270), (330, 390)), ("hw slowdown",), 0.78),
           start=310.0 * H, overlap=0.3),
     "Mild, intermittent: the A10G reports HW slowdown in bursts (host power supply), clocks "
     "drop ~20% for a minute at a time."),
    ("p29-diffusion-pcie-thermal", "other", "throttling", None, ("throttle", 0),
     Job("p29", "H100-PCIe", gpus=1, minutes=10, step_s=0.8, opt_s=0.0, mfu=0.6, sm_fill=0.95,
         dram_fill=0.3, cooling=lambda t, g: 1.55, start=322.0 * H, mem=52 * GiB,
         proc_name="python3", cmd="python3 -m videogen.worker --model wan2.1-14b --steps 50"),
     "Mild: the video-generation worker's PCIe H100 reaches thermal slowdown after a few minutes "
     "of full load (hot aisle); denoise steps ~10% slower."),
    ("p30-a100-64k-kv-preempt", "serving", "kv_pressure", None, (150, 540),
     Serve("p30", "vllm", LLAMA8B, "A100-80", minutes=9, gmu=0.55, start=330.0 * H,
           rate=ramp(0.1, 0.5, 120, 180), prompt=lambda t, r: r.randint(20000, 48000),
           out=ln(6.3, 0.4), new_metrics=False),
     "Severe: long-context chat (64k) deployed with gpu-memory-utilization 0.55; the KV pool "
     "fills, requests are preempted and recomputed, queue grows."),
    ("p31-sglang-tp2-retract", "serving", "kv_pressure", None, (180, 480),
     Serve("p31", "sglang", QWEN32B_AWQ, "H100-SXM", tp=2, minutes=9, gmu=0.8, start=345.0 * H,
           rate=ramp(1.0, 3.0, 150, 200), prompt=ln(8.6, 0.5), out=ln(6.5, 0.4),
           cpu_step=0.003, overlap=0.85),
     "Moderate: traffic to the 32B coder doubled with long files attached; SGLang retracts "
     "running requests, token usage pinned near 1.0, queue builds."),
    ("p32-multilora-l40s-mild", "serving", "kv_pressure", None, (200, 480),
     Serve("p32", "vllm", LLAMA8B, "L40S", minutes=8, gmu=0.7, start=355.0 * H,
           rate=ramp(2.0, 3.0, 180, 220), prompt=ln(7.6, 0.5), out=ln(6.0, 0.4),
           lora=tuple(f"cust-{i:03d}" for i in range(24)), max_lora=8, new_metrics=False),
     "Mild: multi-LoRA endpoint at peak; KV at 95-100% with a few preemptions a minute and a "
     "short queue."),
    # ----------------------------------------------------------- gpu_shared
    ("p33-dp4-jupyter-on-gpu3", "serving", "gpu_shared", (3,), (150, 420),
     Serve("p33", "vllm", LLAMA8B, "H100-SXM", dp=4, minutes=9, rate=const(12.0), start=8.0 * H,
           tenant=on_gpu(3, 150, 420, tenant(0.75, 0.55, 0.35, 0.3, 14 * GiB,
                                             "python -m ipykernel_launcher -f kernel-3f1.json",
                                             "research/jupyter-hkim-0"))),
     "Moderate: a researcher's notebook started a training loop on GPU 3 of the DP4 chat node "
     "(wrong CUDA_VISIBLE_DEVICES); replica 3's ITL doubled."),
    ("p34-ddp4-eval-on-gpu1", "training", "gpu_shared", (1,), (100, 300),
     Job("p34", "A100-80", gpus=4, minutes=7, step_s=0.9, comm_s=0.12, mfu=0.5, start=160.0 * H,
         tenant=on_gpu(1, 100, 300, tenant(0.5, 0.4, 0.25, 0.2, 18 * GiB,
                                            "python eval_ckpt.py --ckpt step_12000")),
         unit="samples", work_per_step=256, mem=55 * GiB,
         cmd="torchrun --nproc-per-node 4 finetune.py --ddp"),
     "Moderate: an intern's eval script ran on GPU 1 of the DDP job's node; rank 1 slowed and "
     "held up every all-reduce."),
    ("p35-l4-tgi-whisper-tenant", "serving", "gpu_shared", (0,), (60, 400),
     Serve("p35", "tgi", MISTRAL7B_GPTQ, "L4", minutes=8, rate=const(0.8), cpus=16, host_load=0.6,
           tenant=on_gpu(0, 60, 400, tenant(0.35, 0.3, 0.15, 0.1, 3 * GiB,
                                             "python3 transcribe.py --model whisper-small")),
           start=215.0 * H, overlap=0.3),
     "Mild: a transcription job of another team was scheduled onto the TGI L4 (no GPU isolation "
     "on that node pool); time per token +35%."),
    # ----------------------------------------------------------- spec_decode_rejected
    ("p36-tp4-eagle-accept-collapse", "serving", "spec_decode_rejected", None, (240, 540),
     Serve("p36", "vllm", LLAMA70B_FP8,
           "H100-SXM", tp=4, minutes=9, rate=const(4.0), spec_k=4, draft_cost=0.06,
           spec_accept=lambda t: 0.75 if t < 240 else 0.14, start=245.0 * H, pod=POD + "chat-70b-eagle"),
     "Moderate: traffic shifted to Korean-language code review at ~4 min; EAGLE acceptance fell "
     "from 0.75 to ~0.15, drafts are wasted and ITL is worse than without speculation."),
    ("p37-sglang-canary-draft-mismatch", "serving", "spec_decode_rejected", None, (165, 480),
     Serve("p37", "sglang", LLAMA8B, "H200", minutes=8, rate=const(5.0), spec_k=3, draft_cost=0.1,
           spec_accept=lambda t: 0.72 if t < 130 else 0.07, down=((90, 130),), start=360.0 * H,
           cpu_step=0.003, overlap=0.85),
     "Severe: the canary rollout restarted the engine with new target weights but the old EAGLE3 "
     "draft; acceptance ~0.07 since, every step pays for 3 rejected drafts."),
    ("p38-llamacpp-draft-mild", "serving", "spec_decode_rejected", None, (200, 420),
     Serve("p38", "llamacpp", GGUF8B, "RTX6000Ada", minutes=7, rate=const(0.5), max_seqs=4,
           spec_k=8, draft_cost=0.03, spec_accept=lambda t: 0.78 if t < 200 else 0.42,
           overlap=0.0, cpu_step=0.002, start=370.0 * H, cpus=24),
     "Mild: users moved to JSON-heavy prompts the 1B draft predicts poorly; acceptance 0.78 -> "
     "0.42, predicted tokens/s down ~30%."),
]

HEALTHY = [
    ("h01-idle-vram-full", "serving",
     Serve("h01", "vllm", LLAMA8B, "H100-SXM", minutes=6, rate=const(0.03), start=1.0 * H),
     "Idle overnight endpoint; VRAM 90% used is the pre-reserved KV pool. No action."),
    ("h02-sglang-diurnal-ramp", "serving",
     Serve("h02", "sglang", QWEN7B, "A100-80", minutes=10, rate=ramp(0.5, 9.0, 30, 570),
           start=14.0 * H, cpu_step=0.003, overlap=0.85),
     "Morning ramp on the chat endpoint; throughput follows traffic, latency flat."),
    ("h03-h200-warmup-graph-capture", "serving",
     Serve("h03", "vllm", LLAMA8B, "H200", minutes=6, rate=const(5.0), loading=90, start=20.0 * H),
     "New replica scaled up: weight load and CUDA-graph capture, then normal serving."),
    ("h04-pretrain-ckpt-saves", "training",
     Job("h04", "H100-SXM", gpus=8, minutes=10, step_s=0.9, comm_s=0.12, mfu=0.5, unit="tokens",
         work_per_step=8 * 8 * 4096, phases=((180, 225, "ckpt"), (430, 475, "ckpt")),
         nvlink_mib=90000, mem=71 * GiB, start=27.0 * H, cmd=TRAIN8),
     "Pre-training with checkpoint saves every ~4 min; GPUs idle ~45 s while shards write."),
    ("h05-finetune-eval-phase", "training",
     Job("h05", "A100-40", gpus=1, minutes=8, step_s=0.5, mfu=0.45, phases=((200, 270, "eval"),),
         mem=34 * GiB, start=33.0 * H, cmd="python sft.py --model qwen2.5-3b --eval-steps 500"),
     "SFT run with a periodic eval pass (forward only); util dips then recovers."),
    ("h06-l40s-memory-bound-decode", "serving",
     Serve("h06", "vllm", LLAMA8B, "L40S", minutes=7, rate=const(5.0), start=40.0 * H,
           out=ln(5.8, 0.4), new_metrics=False),
     "Steady decode on an L40S: DRAM busy, tensor low. That is what decode is."),
    ("h07-power-capped-4xh100", "training",
     Job("h07", "H100-SXM", gpus=4, minutes=8, step_s=0.8, comm_s=0.1, mfu=0.55, power_limit=450,
         mem=66 * GiB, nvlink_mib=80000, start=46.0 * H,
         cmd="torchrun --nproc-per-node 4 train.py --config 3b.yaml"),
     "Boards are capped at 450 W by datacenter policy; 'power cap' is steady and expected."),
    ("h08-idle-notebook-beside-vllm", "serving",
     Serve("h08", "vllm", QWEN7B, "H100-SXM", minutes=7, rate=const(4.0), gmu=0.8, start=52.0 * H,
           extra_procs=((0, "python", "python -m ipykernel_launcher -f kernel-9a2.json", 6 * GiB,
                         "hkim"),)),
     "A forgotten notebook holds 6 GiB on the serving GPU but runs nothing."),
    ("h09-synthetic-datagen-100pct", "other",
     Job("h09", "H200", gpus=1, minutes=8, step_s=2.5, opt_s=0.0, mfu=0.62, sm_fill=0.96,
         dram_fill=0.4, mem=128 * GiB, start=58.0 * H, proc_name="python3",
         cmd="python3 gen_synthetic.py --engine offline --model llama-3.1-70b-fp8 --batch 512"),
     "Offline synthetic-data generation at 100% util near TDP: a big, healthy batch job."),
    ("h10-engine-rolling-restart", "serving",
     Serve("h10", "vllm", LLAMA8B, "A100-40", minutes=8, rate=const(3.0), down=((200, 240),),
           start=64.0 * H, new_metrics=False),
     "Rolling update restarted the engine; counters reset, ~75 s unavailable. Planned."),
    ("h11-sglang-rag-prefill-heavy", "serving",
     Serve("h11", "sglang", QWEN7B, "H100-SXM", minutes=7, rate=const(2.0), prompt=ln(8.7, 0.2),
           out=ln(4.6, 0.4), start=70.0 * H, cpu_step=0.003, overlap=0.85),
     "RAG endpoint, 6k-token prompts all day; prefill-heavy by design and within SLO."),
    ("h12-vllm-spec-normal", "serving",
     Serve("h12", "vllm", LLAMA8B, "H100-SXM", minutes=7, rate=const(4.0), spec_k=3,
           spec_accept=lambda t: 0.68, start=78.0 * H),
     "Speculative decoding with normal acceptance (~0.7)."),
    ("h13-llamacpp-l4-bursty", "serving",
     Serve("h13", "llamacpp", GGUF8B, "L4", minutes=8, max_seqs=4,
           rate=lambda t: 1.2 if (t // 40) % 3 == 0 else 0.05, overlap=0.0, cpu_step=0.002,
           cpus=8, host_load=0.4, start=84.0 * H),
     "Internal helpdesk bot: bursts when a team meeting ends, idle otherwise."),
    ("h14-autoscale-drain", "serving",
     Serve("h14", "vllm", LLAMA8B_AWQ, "L40S", minutes=8, rate=lambda t: 3.0 if t < 240 else 0.0,
           start=95.0 * H, new_metrics=False),
     "Autoscaler drained this replica at ~4 min; in-flight requests finished, now idle."),
    ("h15-spot-resume-ckpt-load", "training",
     Job("h15", "H200", gpus=8, minutes=8, step_s=1.4, comm_s=0.18, mfu=0.52, unit="tokens",
         work_per_step=8 * 8 * 8192, phases=((0, 100, "load"),), nvlink_mib=110000, mem=120 * GiB,
         start=105.0 * H, cmd=TRAIN8),
     "Spot node came back; job resumed from checkpoint (load ~100 s) and trains normally."),
    ("h16-video-diffusion-steady", "other",
     Job("h16", "H100-SXM", gpus=1, minutes=7, step_s=0.8, opt_s=0.0, mfu=0.6, sm_fill=0.95,
         dram_fill=0.3, mem=60 * GiB, start=116.0 * H, proc_name="python3",
         cmd="python3 -m videogen.worker --model wan2.1-14b --steps 50"),
     "Video generation worker at full load, near TDP, steady."),
    ("h17-whisper-l4-steady", "other",
     Job("h17", "L4", gpus=1, minutes=6, step_s=0.35, mfu=0.3, sm_fill=0.75, workers=6,
         loader_cpu=0.4, mem=9 * GiB, cpus=16, host_load=0.3, start=122.0 * H, proc_name="python3",
         cmd="python3 transcribe_batch.py --model whisper-large-v3 --decode-workers 6"),
     "Transcription batch with enough decode workers; GPU busy, steady."),
    ("h18-embed-a10g-bursts", "other",
     Job("h18", "A10G", gpus=1, minutes=7, step_s=0.06, mfu=0.35, sm_fill=0.8, opt_s=0.0,
         host_step=0.004, mem=5 * GiB, cpus=8, host_load=0.4, start=131.0 * H,
         idle=lambda t: (t // 25) % 2 == 1, proc_name="python3",
         cmd="python3 -m embed_service --model bge-base --max-batch 64"),
     "Embedding service with batching on; nightly re-index arrives in bursts."),
    ("h19-notebook-idle-ada", "other",
     Job("h19", "RTX6000Ada", gpus=1, minutes=6, mem=20 * GiB, idle=lambda t: True, cpus=24,
         start=145.0 * H, user="mpatel", cmd="python -m ipykernel_launcher -f kernel-77c.json"),
     "Jupyter kernel left open holding 20 GiB; nothing running. Not a page."),
    ("h20-zero3-cpu-offload", "training",
     Job("h20", "A100-80", gpus=4, minutes=8, step_s=0.9, comm_s=0.2, mfu=0.45, offload_s=0.8,
         mem=48 * GiB, start=152.0 * H, unit="samples", work_per_step=64,
         cmd="deepspeed --num_gpus 4 train.py --deepspeed ds_zero3_offload.json"),
     "ZeRO-3 with optimizer offloaded to CPU: GPU idles during the CPU Adam step by design."),
    ("h21-distill-teacher-student", "training",
     Job("h21", "H100-SXM", gpus=8, minutes=7, step_s=0.7, comm_s=0.1, mfu=0.45, mem=58 * GiB,
         nvlink_mib=70000, start=170.0 * H,
         cmd="torchrun --nproc-per-node 8 distill.py --teacher llama-70b --student llama-8b"),
     "Distillation: teacher and student on the same node, steady."),
    ("h22-multilora-healthy", "serving",
     Serve("h22", "vllm", LLAMA8B, "L40S", minutes=7, rate=const(2.0), prompt=ln(6.5, 0.5),
           lora=tuple(f"cust-{i:03d}" for i in range(12)), max_lora=8, start=182.0 * H,
           new_metrics=False),
     "Multi-LoRA endpoint, adapters swap in and out; normal."),
    ("h23-sglang-moe-ep8", "serving",
     Serve("h23", "sglang", QWEN3_MOE, "H200", tp=8, minutes=7, rate=const(6.0), start=196.0 * H,
           cpu_step=0.004, overlap=0.85),
     "235B MoE with expert parallelism on 8xH200, moderate load."),
    ("h24-a100-kv-high-no-preempt", "serving",
     Serve("h24", "vllm", MIXTRAL, "A100-80", tp=2, minutes=7, rate=const(1.6), prompt=ln(7.8, 0.4),
           out=ln(6.0, 0.3), start=222.0 * H, new_metrics=False),
     "Mixtral TP2 on A100s with long prompts, steady moderate load; no preemptions, queue empty."),
]
