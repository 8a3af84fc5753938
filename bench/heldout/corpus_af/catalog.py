"""The trace list: one quarter of tickets from a bank's and its telecom subsidiary's GPU estate.

Each entry: name, family, cause (None: healthy), culprit GPUs, engine, which simulator, its
spec, and the ticket note.  The label window is the span of the event that carries the cause
(or the whole trace when the cause is on from the start).
"""

from __future__ import annotations

L8 = (32, 8, 128)     # Llama 3.x 8B
L70 = (80, 8, 128)    # Llama 3.x 70B
Q32 = (64, 8, 128)    # Qwen2.5 32B
M7 = (32, 8, 128)     # Mistral 7B


def S(**kw):
    kw.setdefault("kind", "serve")
    return kw


def T(**kw):
    kw.setdefault("kind", "train")
    return kw


def _entries():
    E = []

    def add(name, family, cause, culprit, note, spec, window=None):
        spec["name"] = name
        E.append((name, family, cause, culprit, note, spec, window))

    # ------------------------------------------------------------------ oversized_request
    add("copilot-n8-logprobs-h100", "serving", "oversized_request", None,
        "Form-extraction team sent n=8, logprobs=20 requests to the copilot; every chat's tokens crawled for two minutes.",
        S(engine="vllm", board="H100-SXM", tp=2, model="meta-llama/Llama-3.1-70B-Instruct-FP8", params_b=70.6,
          wbytes=1.0, arch=L70, dur=600, rate=1.6, prompt=1800, out=280, prefix_hit=0.45,
          oversized_n=8, oversized_max=4096, events=[("oversized", 300, 420, 1.0)]))
    add("codeassist-longgen-sglang-l40s", "serving", "oversized_request", None,
        "One IDE plugin asked for max_tokens=32768 with 4 parallel samples; ITL of the other users up ~40% for a minute.",
        S(engine="sglang", board="L40S", tp=1, model="Qwen/Qwen2.5-Coder-7B-Instruct-AWQ", params_b=7.6, wbytes=0.55,
          arch=(28, 4, 128), dur=420, rate=2.0, prompt=900, out=160, events=[("oversized", 200, 262, 0.35)]))
    add("summarise-bestof-a100", "serving", "oversized_request", None,
        "A batch script set best_of=6 with logprobs on the summariser; interactive users saw stalls for three minutes.",
        S(engine="vllm", board="A100-SXM4-80GB", tp=1, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0,
          arch=L8, dur=540, rate=3.0, prompt=1200, out=200, prof="dcgm", oversized_n=6, oversized_max=2048,
          events=[("oversized", 150, 330, 0.6)]))
    # ------------------------------------------------------------------ prefill_interference
    add("copilot-9am-policy-docs-nvl", "serving", "prefill_interference", None,
        "At 9:00 compliance staff paste 30k-token policy PDFs into the copilot; chat streaming stutters until ~9:06.",
        S(engine="vllm", board="H100-NVL", tp=2, model="meta-llama/Llama-3.3-70B-Instruct-FP8", params_b=70.6,
          wbytes=1.0, arch=L70, dur=720, rate=1.2, prompt=1500, out=300, long_factor=14,
          events=[("long_prompts", 240, 600, 0.8)]))
    add("rag-legacy-tgi-a10-longctx", "serving", "prefill_interference", None,
        "Legacy RAG app now retrieves 12 chunks instead of 4; TGI token latency for other users up about a third.",
        S(engine="tgi", board="A10", tp=1, model="mistralai/Mistral-7B-Instruct-v0.3", params_b=7.2, arch=M7,
          dur=540, rate=0.8, prompt=1400, out=180, pool_gib=5, long_factor=4, events=[("long_prompts", 120, 420, 0.4)]))
    add("codeassist-repo-context-sglang-h100", "serving", "prefill_interference", None,
        "Someone pointed the code assistant at a whole repository (60k-token prompts); decode latency tripled for two minutes.",
        S(engine="sglang", board="H100-SXM", tp=4, model="Qwen/Qwen2.5-Coder-32B-Instruct", params_b=32.8, arch=Q32,
          dur=480, rate=3.0, prompt=2000, out=220, long_factor=20, events=[("long_prompts", 180, 300, 1.0)]))
    # ------------------------------------------------------------------ collective_straggler
    add("dgx-a100-gpu5-aged-fsdp", "training", "collective_straggler", (5,),
        "This DGX's GPU 5 (many retired pages) clocks lower; the FSDP fine-tune waits on it every step (~15% slower).",
        T(board="A100-SXM4-80GB", ngpu=8, compute_s=0.62, comm_s=0.06, data_s=0.3, workers=6, mem_gib=71,
          aged=5, aged_cap=0.80, prof="dcgm", dur=600, slurm=48211, cmd="torchrun train_fsdp.py --model llama3-8b",
          work_per_step=8 * 4096 * 8, nvlink_gb=30, ecc={5: 412}, events=[("straggler", 0, 10**6, 0.2, (5,))]),
        window="all")
    add("hgx-h100-gpu3-pcie-x4-zero3", "training", "collective_straggler", (3,),
        "Mid-run GPU 3's PCIe link fell to x4 (switch fault); ZeRO-3 offload on that rank lags and all 8 ranks wait.",
        T(board="H100-SXM", ngpu=8, compute_s=0.9, comm_s=0.1, data_s=0.4, workers=8, mem_gib=74, dur=720,
          slurm=50390, cmd="deepspeed --num_gpus 8 finetune.py --zero 3 --offload-optimizer cpu", strag_factor=0.7,
          work_per_step=8 * 8192 * 4, nvlink_gb=40, events=[("straggler", 260, 720, 1.0, (3,))]))
    add("copilot-tp4-rank2-slow-a100", "serving", "collective_straggler", (2,),
        "The TP-4 copilot on the old DGX is slower than its twin; rank 2's board runs hot-clocked-down and the others wait in all-reduce.",
        S(engine="vllm", board="A100-SXM4-40GB", tp=4, model="hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4",
          params_b=70.6, wbytes=0.55, arch=L70, dur=480, rate=1.0, prompt=1200, out=250, prof="dcgm",
          aged=2, aged_cap=0.72, straggler_gpu=2, events=[("straggler", 0, 10**6, 0.5)]), window="all")
    # ------------------------------------------------------------------ input_stall
    add("cv-jpeg-decode-a6000", "training", "input_stall", None,
        "Cheque-image classifier: 4 loader workers can't decode JPEGs fast enough; about one step in five waits for data.",
        T(board="RTX A6000", ngpu=4, compute_s=0.25, comm_s=0.02, data_s=1.2, workers=4, mem_gib=30, cpus=32,
          dur=480, cmd="python train_cls.py --arch resnet50 --workers 4", unit="samples", work_per_step=256,
          tensor=0.45), window="all")
    add("dgx-finetune-nfs-slow", "training", "input_stall", None,
        "Fine-tune slowed to half speed at 14:05: the NFS share with the tokenised shards was saturated by a backup.",
        T(board="A100-SXM4-80GB", ngpu=8, compute_s=0.55, comm_s=0.05, data_s=0.4, io_s=1.6, workers=4, nfs_factor=5,
          mem_gib=66, prof="dcgm", dur=900, slurm=49007, cmd="torchrun sft.py --data /mnt/nfs/ds/shards",
          work_per_step=8 * 4096 * 8, events=[("nfs_slow", 300, 700, 1.0)]))
    add("whisper-batch-smb-a10", "other", "input_stall", None,
        "Call-centre transcription batch: audio pulled from the SMB share stalled the decoders for several minutes.",
        T(board="A10", ngpu=2, compute_s=0.8, data_s=1.0, io_s=0.9, workers=6, nfs_factor=6, mem_gib=9, cpus=32,
          dur=600, exporter=False, cmd="python transcribe_batch.py --model large-v3 --src smb://callrec",
          tensor=0.4, events=[("nfs_slow", 100, 500, 0.7)]))
    # ------------------------------------------------------------------ host_launch_jitter
    add("edge-l4-irq-launch-jitter", "serving", "host_launch_jitter", None,
        "Branch edge box: NIC interrupts land on the core vLLM launches from; eBPF shows millisecond launch stalls and ITL spikes.",
        S(engine="vllm", board="L4", tp=1, model="hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", params_b=8.0,
          wbytes=0.55, arch=L8, dur=420, rate=0.7, prompt=700, out=200, cpus=16, ebpf=True,
          events=[("launch_jitter", 120, 300, 0.7)]))
    add("train-logshipper-pinned-jitter", "training", "host_launch_jitter", None,
        "Log shipper's burst at 02:00 pinned to cores 0-3 where rank threads launch; eBPF launch latency tails to ms.",
        T(board="H100-PCIe", ngpu=2, compute_s=0.3, comm_s=0.03, data_s=0.1, workers=6, mem_gib=60, cpus=48,
          dur=480, ebpf=True, jitter_s=0.09, kernels_per_step=2500, cmd="python finetune_lora.py",
          events=[("launch_jitter", 180, 360, 0.8)]))
    add("sglang-copilot-mild-jitter-h100", "serving", "host_launch_jitter", None,
        "Short ITL hiccups on the SGLang copilot; eBPF launch histogram has a tail while a security agent rescans libs.",
        S(engine="sglang", board="H100-SXM", tp=2, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0, arch=L8,
          dur=360, rate=4.0, prompt=900, out=180, ebpf=True, events=[("launch_jitter", 200, 262, 0.35)]))
    # ------------------------------------------------------------------ host_cpu_contention
    add("dgx-night-av-backup-vllm", "serving", "host_cpu_contention", None,
        "Overnight summarisation slowed from 01:10: antivirus full scan plus backup agent saturate the DGX's CPUs.",
        S(engine="vllm", board="A100-SXM4-80GB", tp=2, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0,
          arch=L8, dur=1080, rate=6.0, prompt=2500, out=300, cpus=128, prof="dcgm", starve_threads=260,
          events=[("cpu_starve", 400, 900, 0.9)]))
    add("l40s-docker-cpus2-quota", "serving", "host_cpu_contention", None,
        "The code-assistant container was started with --cpus=2; CFS throttles the engine every period.",
        S(engine="vllm", board="L40S", tp=1, model="Qwen/Qwen2.5-Coder-14B-Instruct-AWQ", params_b=14.7,
          wbytes=0.55, arch=(48, 8, 128), dur=480, rate=2.5, prompt=900, out=180, quota=2.0, cpus=64,
          events=[("quota_tight", 0, 10**6, 0.6)]), window="all")
    add("fraud-features-cpu-starved", "training", "host_cpu_contention", None,
        "Fraud-model training slowed mildly at 23:00 when the log shipper and backup started on the same box.",
        T(board="A30", ngpu=2, compute_s=0.18, data_s=0.4, workers=8, host_gap_s=0.02, mem_gib=14, cpus=32,
          dur=540, cmd="python train_fraud_gbdt.py --device cuda", unit="samples", work_per_step=65536,
          tensor=0.15, smq=0.7, starve_threads=40, events=[("cpu_starve", 180, 480, 0.35)]))
    # ------------------------------------------------------------------ tiny_kernels
    add("embed-triton-batch1-t4", "other", "tiny_kernels", None,
        "Embedding service shows GPU 100% but embeds few docs/s: requests hit the model one by one (batching off).",
        T(board="T4", ngpu=1, compute_s=0.05, data_s=0.0, mem_gib=3, cpus=16, dur=360, exporter=False,
          cmd="tritonserver --model-repository=/models", tensor=0.3, kernels_per_step=400, tiny_gap_s=0.0,
          events=[("tiny", 0, 10**6, 0.85)]), window="all")
    add("gbdt-fraud-tiny-kernels-a30", "training", "tiny_kernels", None,
        "New fraud GBDT with depth 12 / many small trees: GPU at 95% util but SM active low, training much slower than vendor's figure.",
        T(board="A30", ngpu=1, compute_s=0.12, data_s=0.05, mem_gib=10, cpus=32, dur=420, prof="dcgm",
          cmd="python train_fraud_gbdt.py --max-depth 12", unit="samples", work_per_step=65536, tensor=0.05,
          smq=0.75, events=[("tiny", 120, 420, 0.7)]))
    add("vllm-enforce-eager-rtx6000", "serving", "tiny_kernels", None,
        "After a redeploy with --enforce-eager for debugging, the form-filler's GPU shows busy but tokens/s dropped.",
        S(engine="vllm", board="RTX 6000 Ada", tp=1, model="meta-llama/Llama-3.2-3B-Instruct", params_b=3.2,
          arch=(28, 8, 128), dur=420, rate=4.0, prompt=400, out=120, events=[("eager", 150, 420, 1.0)]))
    # ------------------------------------------------------------------ memory_bandwidth
    add("copilot-32k-threads-h100-fp8", "serving", "memory_bandwidth", None,
        "Long-running compliance chats reach 30k tokens; decode became HBM-bound and ITL doubled though KV pool has room.",
        S(engine="vllm", board="H100-SXM", tp=2, model="meta-llama/Llama-3.1-70B-Instruct-FP8", params_b=70.6,
          wbytes=1.0, arch=L70, kv_bytes=1, cache_dtype="fp8", dur=720, rate=0.8, prompt=2500, out=350,
          ctx_factor=11, events=[("ctx_growth", 200, 620, 1.0)]))
    add("llamacpp-4090-longctx", "serving", "memory_bandwidth", None,
        "Analyst's 4090 box: token rate fell ~30% once the contract-review chats grew past 12k tokens.",
        S(engine="llamacpp", board="RTX 4090", tp=1, model="Meta-Llama-3.1-8B-Instruct-Q4_K_M", params_b=8.0,
          wbytes=0.6, arch=L8, dur=420, rate=0.15, prompt=3000, out=300, pool_gib=3, max_seqs=4, cpus=24,
          ctx_factor=3, events=[("ctx_growth", 150, 420, 0.6)]))
    add("sglang-a100-multiturn-kvread", "serving", "memory_bandwidth", None,
        "Code assistant's multi-turn sessions get longer during the afternoon; DRAM activity near the roof and ITL up.",
        S(engine="sglang", board="A100-SXM4-80GB", tp=1, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0,
          arch=L8, dur=600, rate=2.0, prompt=1800, out=250, prof="dcgm", ctx_factor=4,
          events=[("ctx_growth", 240, 600, 0.8)]))
    # ------------------------------------------------------------------ throttling
    add("hgx-row-c-cooling-fault", "training", "throttling", None,
        "Row C CRAH failed at 15:20; all 8 H100s on this HGX hit thermal slowdown and the fine-tune slowed.",
        T(board="H100-SXM", ngpu=8, compute_s=0.8, comm_s=0.07, data_s=0.3, workers=8, mem_gib=70, dur=1080,
          slurm=51120, cmd="torchrun train.py --fsdp", inlet_rise=24, work_per_step=8 * 8192 * 4, nvlink_gb=35,
          rise=60, events=[("thermal", 300, 1080, 1.0)]))
    add("l40s-psu-power-brake", "serving", "throttling", None,
        "One PSU on the L40S server faulted: power brake asserted, clocks collapsed for two minutes, copilot ITL tripled.",
        S(engine="vllm", board="L40S", tp=1, model="meta-llama/Llama-3.1-8B-Instruct-FP8", params_b=8.0, wbytes=1.0,
          arch=L8, dur=480, rate=3.0, prompt=900, out=200, rise=2, events=[("power_brake", 200, 330, 1.0)]))
    add("dgx-facilities-powercap", "training", "throttling", None,
        "Facilities lowered the DGX power limit at 10:40 (summer budget); the nightly eval's step time grew ~20%.",
        T(board="A100-SXM4-80GB", ngpu=8, compute_s=0.5, comm_s=0.04, data_s=0.2, workers=6, mem_gib=50,
          prof="dcgm", tensor=0.7, dur=720, slurm=52001, cmd="python run_eval_suite.py", rise=3,
          events=[("power_cap", 400, 720, 1.0)]))
    add("ada-workstation-dusty-thermal", "serving", "throttling", None,
        "Branch workstation in a closet: RTX 4000 Ada reaches thermal slowdown after lunch, llama.cpp slower by ~25%.",
        S(engine="llamacpp", board="RTX 4000 Ada", tp=1, model="Mistral-7B-Instruct-v0.3-Q5_K_M", params_b=7.2,
          wbytes=0.7, arch=M7, dur=600, rate=0.3, prompt=800, out=250, pool_gib=2, max_seqs=4, cpus=16,
          inlet=30, inlet_rise=22, rise=90, events=[("thermal", 150, 600, 1.0)]))
    # ------------------------------------------------------------------ kv_pressure
    add("a10-guided-json-kv-full", "serving", "kv_pressure", None,
        "Form-extraction jobs with long JSON outputs filled the A10's KV pool: preemptions and a growing queue.",
        S(engine="vllm", board="A10", tp=1, model="hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", params_b=8.0,
          wbytes=0.55, arch=L8, dur=600, rate=1.5, prompt=1500, out=250, out_factor=10, gmu=0.9,
          events=[("long_outputs", 200, 500, 1.0)]))
    add("sglang-l40s-retractions", "serving", "kv_pressure", None,
        "SGLang on the L40S retracting requests while the doc-QA team ran a big eval through it; queue built up.",
        S(engine="sglang", board="L40S", tp=1, model="Qwen/Qwen2.5-14B-Instruct", params_b=14.7, arch=(48, 8, 128),
          dur=540, rate=2.0, prompt=2500, out=300, out_factor=6, max_seqs=128, rate_boost=True,
          events=[("long_outputs", 180, 420, 0.8)]))
    add("overnight-batch-h100pcie-preempt", "serving", "kv_pressure", None,
        "Overnight document batch at max-num-seqs 512: KV pool saturated, vLLM preempting and recomputing continuously (mild).",
        S(engine="vllm", board="H100-PCIe", tp=2, model="Qwen/Qwen2.5-32B-Instruct-AWQ", params_b=32.8,
          wbytes=0.55, arch=Q32, dur=600, rate=6.0, prompt=4000, out=400, max_seqs=512, out_factor=2.5,
          events=[("long_outputs", 0, 10**6, 0.6)]), window="all")
    # ------------------------------------------------------------------ gpu_shared
    add("a100-notebook-on-copilot-gpu0", "serving", "gpu_shared", (0,),
        "A data scientist's notebook ran a training cell on GPU 0 of the copilot server; copilot latency up while it ran.",
        S(engine="vllm", board="A100-SXM4-40GB", tp=1, ngpu=2, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0,
          arch=L8, dur=600, rate=2.5, prompt=900, out=200, gmu=0.7, prof="dcgm",
          cotenant=dict(gpu=0, pid=77102, name="python", cmd="/opt/conda/bin/python -m ipykernel_launcher -f kernel-4c1.json",
                        mem_gib=9, busy=0.8, sm=0.5, tensor=0.3, dram=0.2, slow=0.9),
          events=[("cotenant", 180, 480, 1.0)]))
    add("a5000-ddp-other-team-gpu1", "training", "gpu_shared", (1,),
        "Another team's Slurm job was scheduled onto GPU 1 of our 2-GPU workstation node; our DDP job slowed ~25%.",
        T(board="RTX A5000", ngpu=2, compute_s=0.4, comm_s=0.05, data_s=0.2, workers=4, mem_gib=15, cpus=24,
          dur=540, cmd="python train_ddp.py", cotenant_slow=0.6,
          cotenant=dict(gpus=(1,), pid=55410, name="python", cmd="python infer_ocr.py --gpu 1", mem_gib=6),
          events=[("cotenant", 150, 450, 0.8, (1,))]))
    add("ocr-l4-timeslice-neighbour", "other", "gpu_shared", (0,),
        "OCR service on the L4 shares the board with the scanning team's container; page throughput dips while theirs runs.",
        T(board="L4", ngpu=1, compute_s=0.2, data_s=0.1, workers=4, mem_gib=8, cpus=16, dur=420, exporter=False,
          cmd="tritonserver --model-repository=/ocr", cotenant_slow=0.5, tensor=0.35,
          cotenant=dict(gpus=(0,), pid=31877, name="python3", cmd="python3 scan_classify.py", mem_gib=5),
          events=[("cotenant", 120, 300, 0.5, (0,))]))
    # ------------------------------------------------------------------ spec_decode_rejected
    add("copilot-spec-collapse-french-forms", "serving", "spec_decode_rejected", None,
        "Telecom subsidiary started French JSON forms; the copilot's 8B draft stopped matching, tokens/s fell.",
        S(engine="vllm", board="H100-SXM", tp=2, model="meta-llama/Llama-3.1-70B-Instruct-FP8", params_b=70.6,
          wbytes=1.0, arch=L70, dur=720, rate=1.0, prompt=1200, out=300, spec_k=4, accept=0.72, draft_step_ms=2.2,
          events=[("spec_collapse", 300, 600, 1.0)]))
    add("sglang-eagle-mild-drop-nvl", "serving", "spec_decode_rejected", None,
        "EAGLE acceptance on the SGLang copilot dropped after the system-prompt change; ITL up ~35%.",
        S(engine="sglang", board="H100-NVL", tp=1, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0, arch=L8,
          dur=600, rate=3.0, prompt=1000, out=200, spec_k=3, accept=0.75, draft_step_ms=0.8,
          events=[("spec_collapse", 200, 500, 0.45)]))
    add("llamacpp-draft-mismatch-a6000", "serving", "spec_decode_rejected", None,
        "Branch server's llama.cpp draft model was swapped for a different tokenizer family; drafts rejected.",
        S(engine="llamacpp", board="RTX A6000", tp=1, model="Qwen2.5-14B-Instruct-Q4_K_M", params_b=14.7, wbytes=0.6,
          arch=(48, 8, 128), dur=480, rate=0.4, prompt=800, out=300, pool_gib=4, max_seqs=4, cpus=24, spec_k=8,
          accept=0.7, draft_step_ms=0.7, events=[("spec_collapse", 160, 480, 0.75)]))
    return E


def _healthy():
    E = []

    def add(name, family, engine_note, spec):
        spec["name"] = name
        E.append((name, family, None, None, engine_note, spec, None))

    add("copilot-idle-vram-full-h100", "serving",
        "Ticket: 'GPU memory 90% full but nobody uses it' at 06:00: the vLLM KV pool is pre-reserved; idle is fine.",
        S(engine="vllm", board="H100-SXM", tp=2, model="meta-llama/Llama-3.1-70B-Instruct-FP8", params_b=70.6,
          wbytes=1.0, arch=L70, dur=420, rate=0.02, prompt=900, out=150, r0=0))
    add("copilot-9am-ramp-normal", "serving",
        "The 9:00 login ramp: load triples, latency stays within SLO. Nothing to fix.",
        S(engine="vllm", board="H100-NVL", tp=2, model="meta-llama/Llama-3.3-70B-Instruct-FP8", params_b=70.6,
          wbytes=1.0, arch=L70, dur=900, rate=0.5, prompt=1200, out=250, diurnal=(60, 600, 3.0)))
    add("sglang-bursty-branch-traffic", "serving",
        "Bursty traffic from branch offices (batch uploads every few minutes); gaps are just no requests.",
        S(engine="sglang", board="L40S", tp=1, model="Qwen/Qwen2.5-7B-Instruct", params_b=7.6, arch=(28, 4, 128),
          dur=600, rate=2.0, prompt=800, out=180, bursty=25.0))
    add("copilot-redeploy-restart", "serving",
        "Planned redeploy of the copilot container at 12:30: engine down a minute, counters restart, warm-up and graph capture.",
        S(engine="vllm", board="A100-SXM4-80GB", tp=2, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0,
          arch=L8, dur=600, rate=2.0, prompt=900, out=200, prof="dcgm", events=[("restart", 240, 330, 1.0)]))
    add("fsdp-dgx-checkpoint-saves", "training",
        "FSDP fine-tune pausing ~40 s every few minutes to save a checkpoint to local NVMe: expected.",
        T(board="A100-SXM4-80GB", ngpu=8, compute_s=0.6, comm_s=0.05, data_s=0.2, workers=8, mem_gib=70, prof="dcgm",
          dur=900, slurm=47700, cmd="torchrun train_fsdp.py", work_per_step=8 * 4096 * 8,
          events=[("ckpt", 200, 240, 1.0), ("ckpt", 500, 540, 1.0), ("ckpt", 800, 840, 1.0)]))
    add("sft-eval-phases-h100", "training",
        "Periodic eval passes during the SFT run lower tensor activity for a minute: normal.",
        T(board="H100-SXM", ngpu=8, compute_s=0.7, comm_s=0.06, data_s=0.2, workers=8, mem_gib=72, dur=720,
          slurm=50001, cmd="accelerate launch sft.py", work_per_step=8 * 8192 * 2,
          events=[("eval", 240, 300, 1.0), ("eval", 540, 600, 1.0)]))
    add("overnight-batch-100pct-a100", "serving",
        "Overnight summarisation of 2M documents: GPUs at 100% with a deep queue by design. Finished on time.",
        S(engine="vllm", board="A100-SXM4-80GB", tp=1, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0,
          arch=L8, dur=900, rate=9.0, prompt=1800, out=220, max_seqs=256, prof="dcgm", gmu=0.92))
    add("l40s-powercap-250w-steady", "serving",
        "L40S boards capped at 250 W by the facilities budget since install; steady 'power cap' reason, SLO met.",
        S(engine="vllm", board="L40S", tp=1, model="meta-llama/Llama-3.1-8B-Instruct-FP8", params_b=8.0, wbytes=1.0,
          arch=L8, dur=600, rate=4.0, prompt=1000, out=200, plimit=250))
    add("idle-notebook-holding-memory", "serving",
        "'Someone else is on our GPU': a Jupyter kernel holds 6 GiB on GPU 0 but computes nothing.",
        S(engine="vllm", board="A100-SXM4-40GB", tp=1, ngpu=2, model="meta-llama/Llama-3.1-8B-Instruct",
          params_b=8.0, arch=L8, dur=480, rate=2.0, prompt=800, out=200, gmu=0.75, prof="dcgm",
          cotenant=dict(gpu=0, pid=66021, name="python", cmd="/opt/conda/bin/python -m ipykernel_launcher",
                        mem_gib=6, busy=0, sm=0, always=True)))
    add("tgi-rag-prefill-heavy-ok", "serving",
        "Legacy RAG: prefill dominates (3k-token contexts, short answers), TTFT under the 2 s SLO.",
        S(engine="tgi", board="A10", tp=1, model="mistralai/Mistral-7B-Instruct-v0.3", params_b=7.2, arch=M7,
          dur=540, rate=0.6, prompt=3000, out=80, pool_gib=5))
    add("copilot-spec-decode-normal", "serving",
        "Speculative decoding with the 8B draft: acceptance ~70%, as in the vendor's sizing.",
        S(engine="vllm", board="H100-SXM", tp=2, model="meta-llama/Llama-3.1-70B-Instruct-FP8", params_b=70.6,
          wbytes=1.0, arch=L70, dur=600, rate=1.0, prompt=1200, out=300, spec_k=4, accept=0.7, draft_step_ms=2.2))
    add("branch-llamacpp-a4000-light", "serving",
        "Branch office llama.cpp: a handful of users, GPU mostly idle between questions.",
        S(engine="llamacpp", board="RTX A4000", tp=1, model="Meta-Llama-3.1-8B-Instruct-Q4_K_M", params_b=8.0,
          wbytes=0.6, arch=L8, dur=480, rate=0.08, prompt=600, out=250, pool_gib=2, max_seqs=4, cpus=12))
    add("ollama-4090-analyst", "serving",
        "Analyst's Ollama box: no metrics page, occasional bursts of GPU use. Fine.",
        S(engine="ollama", board="RTX 4090", tp=1, model="llama3.1:8b", params_b=8.0, wbytes=0.6, arch=L8,
          dur=360, rate=0.1, prompt=500, out=300, pool_gib=2, max_seqs=2, cpus=16))
    add("decode-bound-steady-h100-8b", "serving",
        "High DRAM activity and low tensor on the 8B copilot: that is what batched decode is. Steady.",
        S(engine="vllm", board="H100-SXM", tp=1, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0, arch=L8,
          dur=600, rate=8.0, prompt=600, out=400))
    add("whisper-batch-t4-steady", "other",
        "Weekly transcription batch on the old T4s: steady, as sized.",
        T(board="T4", ngpu=2, compute_s=0.9, data_s=1.2, workers=8, mem_gib=6, cpus=32, dur=600, exporter=False,
          cmd="python transcribe_batch.py --model medium", tensor=0.35))
    add("gbdt-fraud-healthy-a30", "training",
        "Weekly fraud-model retrain (GBDT on GPU): moderate SM activity, finished in the usual 40 minutes.",
        T(board="A30", ngpu=1, compute_s=0.35, data_s=0.1, workers=4, mem_gib=12, cpus=32, dur=480, prof="dcgm",
          cmd="python train_fraud_gbdt.py --max-depth 8", unit="samples", work_per_step=65536, tensor=0.08, smq=0.8))
    add("cv-training-a6000-enough-workers", "training",
        "Document-layout CV training with 12 loader workers: GPU-bound, no data waits.",
        T(board="RTX A6000", ngpu=4, compute_s=0.3, comm_s=0.02, data_s=1.4, workers=12, mem_gib=32, cpus=48,
          dur=480, cmd="python train_layout.py --workers 12", unit="samples", work_per_step=128, tensor=0.5))
    add("deepspeed-2node-roce-steady", "training",
        "2-node ZeRO-2 fine-tune over RoCE: exposed all-reduce ~15% of the step on every rank, as on the last run.",
        T(board="H100-SXM", ngpu=8, compute_s=0.75, comm_s=0.14, data_s=0.2, workers=8, mem_gib=68, dur=720,
          slurm=51555, cmd="deepspeed --hostfile hosts finetune.py --zero 2", work_per_step=16 * 4096 * 4, nvlink_gb=30))
    add("embed-triton-l4-batched", "other",
        "Embedding service with dynamic batching on: moderate util, steady.",
        T(board="L4", ngpu=1, compute_s=0.12, data_s=0.02, mem_gib=5, cpus=16, dur=420, exporter=False,
          cmd="tritonserver --model-repository=/embed", tensor=0.5, host_gap_s=0.06))
    add("v100-legacy-training", "training",
        "Old V100 box running the marketing churn model training: slow but as it always is.",
        T(board="V100-SXM2-32GB", ngpu=4, compute_s=0.9, comm_s=0.08, data_s=0.5, workers=6, mem_gib=26, cpus=40,
          dur=600, cmd="python train_churn.py", tensor=0.4))
    add("vllm-coldstart-graph-capture", "serving",
        "Fresh start of the code assistant after patching: model load, CUDA-graph capture, then traffic. Expected.",
        S(engine="vllm", board="RTX 6000 Ada", tp=1, model="Qwen/Qwen2.5-Coder-7B-Instruct", params_b=7.6,
          arch=(28, 4, 128), dur=420, rate=2.0, prompt=700, out=160, uptime=0, events=[("restart", 0, 75, 1.0)]))
    add("nightly-eval-h100-powercap-reason", "training",
        "Nightly eval on the HGX: boards sit at 'power cap' at 700 W with matmul-heavy work. That's normal for H100.",
        T(board="H100-SXM", ngpu=8, compute_s=0.5, comm_s=0.02, data_s=0.1, workers=8, mem_gib=60, tensor=0.85,
          dur=600, slurm=52300, cmd="python eval_harness.py --tasks all"))
    add("sglang-prefix-cache-long-sysprompt", "serving",
        "Copilot with an 8k-token system prompt: 90% prefix-cache hits, KV mostly evictable cache. Healthy.",
        S(engine="sglang", board="H100-SXM", tp=2, model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.0, arch=L8,
          dur=600, rate=3.0, prompt=9000, out=200, prefix_hit=0.9))
    add("tp8-70b-lora-steady", "serving",
        "TP-8 70B with three LoRA adapters for the business units: modest traffic, steady latency.",
        S(engine="vllm", board="H100-SXM", tp=8, model="meta-llama/Llama-3.1-70B-Instruct", params_b=70.6,
          arch=L70, dur=600, rate=2.5, prompt=1500, out=250, lora_max=4))
    return E


ENTRIES = _entries() + _healthy()
