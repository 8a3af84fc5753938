"""The trace list: (name, family, cause, culprit, spec, note)."""
import math

L8 = dict(model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.03, kvb=131072)
L70 = dict(model="meta-llama/Llama-3.3-70B-Instruct", params_b=70.6, kvb=327680)
Q7 = dict(model="Qwen/Qwen2.5-7B-Instruct", params_b=7.6, kvb=57344)
Q32 = dict(model="Qwen/Qwen2.5-32B-Instruct", params_b=32.8, kvb=262144)
M7 = dict(model="mistralai/Mistral-7B-Instruct-v0.3", params_b=7.25, kvb=131072)
G9 = dict(model="google/gemma-2-9b-it", params_b=9.2, kvb=344064)
LC = dict(model="qwen2.5-14b-instruct-q4_k_m.gguf", params_b=14.8, wdtype=0.56, kvb=196608)
EMB = dict(model="BAAI/bge-large-en-v1.5", params_b=0.335, kvb=1024)


def flat(r):
    return lambda t: r


def diurnal(lo, hi, per=900):
    return lambda t: lo + (hi - lo) * 0.5 * (1 - math.cos(2 * math.pi * t / per))


def bursty(base, peak, every=90, lasts=20):
    return lambda t: peak if (t % every) < lasts else base


def S(board, engine, m, rate, prompt, out, dur, **kw):
    d = dict(board=board, engine=engine, rate=rate, prompt=prompt, out=out, dur=dur, **m)
    d.update(kw)
    return d


def T(board, model, dur, **kw):
    d = dict(board=board, model=model, dur=dur)
    d.update(kw)
    return d


MILD, MOD, SEV = 0.3, 0.6, 1.0
TRACES = [
    # ---------------- pathologies ----------------
    ("chat-n8-logprobs-h100", "serving", "oversized_request", None,
     S("H100 SXM", "vllm", L8, flat(6), 900, 250, 420, cause="oversized_request", sev=MILD, win=(180, 240), bad_n=8),
     "p99 ITL on chat up ~45% for a minute; one eval client sent n=8 with logprobs=20."),
    ("agent-maxtokens-sglang-a100", "serving", "oversized_request", None,
     S("A100 80GB", "sglang", Q7, flat(1.5), 3000, 400, 480, cause="oversized_request", sev=MOD, win=(120, 330)),
     "Tool agent issued best_of-style fan-out with 32k max_tokens; every co-scheduled request stalled."),
    ("bestof-l40s-vllm", "serving", "oversized_request", None,
     S("L40S", "vllm", M7, flat(3), 700, 200, 360, cause="oversized_request", sev=SEV, win=(60, 300), bad_n=16, bad_max=30000),
     "Canary traffic included n=16 + logprobs requests; ITL 3x on the whole pod."),
    ("rag-longprompts-h200", "serving", "prefill_interference", None,
     S("H200", "vllm", L70 | dict(), flat(3), 1500, 300, 600, tp=4, cause="prefill_interference", sev=MOD, win=(240, 480), long_prompt_tps=60000),
     "A new RAG tenant started sending 60k-token prompts; chat TPOT on the shared deployment jumped."),
    ("agent-ctx-sglang-h100", "serving", "prefill_interference", None,
     S("H100 SXM", "sglang", Q7, flat(5), 2000, 300, 420, cause="prefill_interference", sev=MILD, win=(100, 400), period=60, on=25, long_prompt_tps=40000),
     "Bursts of long tool-calling contexts; ITL up ~40% during each burst."),
    ("tgi-docsumm-a100", "serving", "prefill_interference", None,
     S("A100 80GB", "tgi", M7, flat(4), 1000, 250, 360, cause="prefill_interference", sev=SEV, win=(90, 330), long_prompt_tps=30000),
     "Document summarisation batch pointed at the interactive TGI; TPOT up 3x."),
    ("fsdp-rank5-thermal-h100", "training", "collective_straggler", (5,),
     T("H100 SXM", "llama-3.1-8b-full-ft", 600, cause="collective_straggler", sev=MOD, win=(200, 600), culprit=5, straggler_clock=("thermal (sw)",)),
     "Nightly FSDP fine-tune 35% slower since 02:10; GPU5 on node gpu-h100-17 runs hot and clocks down."),
    ("ds-rank2-cpu-a100", "training", "collective_straggler", (2,),
     T("A100 80GB", "mistral-7b-lora", 480, cause="collective_straggler", sev=MILD, win=(0, 480), culprit=2, tensor=0.5),
     "DeepSpeed job ~15% slower than last week; rank 2 is consistently late into all-reduce."),
    ("tp4-gpu3-brake-h100", "serving", "collective_straggler", (3,),
     S("H100 SXM", "vllm", L70, flat(4), 800, 300, 420, tp=4, cause="collective_straggler", sev=SEV, win=(150, 420), culprit=3, reasons=("hw slowdown",)),
     "TP=4 Llama-70B pod: GPU3 shows HW slowdown, whole pod's ITL doubled."),
    ("ft-nfs-loader-h100", "training", "input_stall", None,
     T("H100 SXM", "qwen2.5-7b-sft", 540, cause="input_stall", sev=MILD, win=(0, 540), step_s=1.0),
     "SFT job reads shards from NFS; ~20% of steps wait on the data loader."),
    ("img-preproc-a100", "training", "input_stall", None,
     T("A100 40GB", "vit-l-finetune", 420, cause="input_stall", sev=SEV, win=(60, 420), step_s=0.5, loader_cores=30),
     "Vision fine-tune: JPEG decode in 4 workers can't feed 8 GPUs; GPUs idle half the time."),
    ("distill-s3-stall-h200", "training", "input_stall", None,
     T("H200", "distill-student-3b", 600, cause="input_stall", sev=MOD, win=(120, 560), period=120, on=50, ngpus=4),
     "Distillation student training stalls in episodes while the teacher's outputs sync from object storage."),
    ("vllm-logshipper-jitter-l40s", "serving", "host_launch_jitter", None,
     S("L40S", "vllm", L8, flat(5), 600, 200, 360, cause="host_launch_jitter", sev=MOD, win=(120, 300), ebpf=True, cpus=32, storm_cores=30),
     "Fluent-bit DaemonSet spikes on the node; eBPF shows graph launches taking milliseconds."),
    ("sglang-pcie-jitter-h100", "serving", "host_launch_jitter", None,
     S("H100 PCIe", "sglang", Q7, flat(6), 500, 200, 300, cause="host_launch_jitter", sev=MILD, win=(60, 300), period=40, on=15, ebpf=True, cpus=48, storm_cores=44),
     "Intermittent ITL spikes; launch-latency probes show the scheduler thread descheduled."),
    ("train-a10g-jitter", "training", "host_launch_jitter", None,
     T("A10G", "bert-large-classifier", 360, ngpus=1, cause="host_launch_jitter", sev=SEV, win=(90, 330), ebpf=True, cpus=16, step_s=0.25, comm_s=0.0, mem_gib=18),
     "Small trainer on a shared g5 node: launch calls wait milliseconds when the ETL pod runs."),
    ("vllm-quota-h200", "serving", "host_cpu_contention", None,
     S("H200", "vllm", L8, flat(8), 800, 250, 480, cause="host_cpu_contention", sev=MOD, win=(0, 480), quota=1.5),
     "Chat pod has limits.cpu=1500m; CFS throttles the engine and TPOT is 2x other replicas."),
    ("tgi-etl-neighbour-a10g", "serving", "host_cpu_contention", None,
     S("A10G", "tgi", M7 | dict(params_b=7.25), flat(3), 500, 200, 420, cause="host_cpu_contention", sev=SEV, win=(150, 390), cpus=16, storm_cores=20),
     "ETL pod landed on the node and pegs all 16 vCPUs; TGI tokens/s halved."),
    ("train-daemonset-cpu-h100", "training", "host_cpu_contention", None,
     T("H100 SXM", "llama-3.1-8b-lora", 480, cause="host_cpu_contention", sev=MILD, win=(200, 480), cpus=64),
     "A security-scan DaemonSet started on the node; step time up ~25%."),
    ("reranker-eager-l4", "serving", "tiny_kernels", None,
     S("L4", "vllm", dict(model="BAAI/bge-reranker-v2-m3", params_b=0.57, kvb=98304), flat(30), 512, 2, 300, cause="tiny_kernels", sev=MOD, win=(0, 300), max_seqs=8),
     "Reranker deployed with --enforce-eager and max-num-seqs 8: GPU at 100% but throughput tiny."),
    ("rl-rollout-tiny-a100", "training", "tiny_kernels", None,
     T("A100 80GB", "reward-model-ppo", 420, cause="tiny_kernels", sev=SEV, win=(0, 420), ngpus=4, step_s=0.8),
     "PPO loop with per-sample eager ops: 100% util, SM ~10%."),
    ("lcpp-tiny-gh200", "serving", "tiny_kernels", None,
     S("GH200", "llamacpp", dict(model="qwen2.5-0.5b-instruct-q8_0.gguf", params_b=0.5, wdtype=1.0, kvb=12288), flat(2), 300, 150, 300, cause="tiny_kernels", sev=MILD, win=(60, 300), max_seqs=4),
     "Tiny draft-size model on a GH200: GPU pegged, SM activity in single digits."),
    ("longctx-agent-a100-40", "serving", "memory_bandwidth", None,
     S("A100 40GB", "vllm", L8, flat(0.4), 6000, 500, 540, max_seqs=5, cause="memory_bandwidth", sev=MOD, win=(180, 540)),
     "Agent sessions grew to 30k+ tokens; decode became KV-read bound and ITL rose steadily."),
    ("sglang-32k-chat-h100", "serving", "memory_bandwidth", None,
     S("H100 SXM", "sglang", Q32, flat(0.8), 4000, 400, 480, tp=2, max_seqs=24, cause="memory_bandwidth", sev=MILD, win=(120, 480)),
     "Long multi-turn chat sessions; DRAM bandwidth near peak, ITL +40%."),
    ("lcpp-bigctx-rtx6000", "serving", "memory_bandwidth", None,
     S("RTX 6000 Ada", "llamacpp", LC, flat(0.12), 8000, 600, 420, cause="memory_bandwidth", sev=SEV, win=(60, 420), max_seqs=4, ctx=65536),
     "Internal code assistant on a workstation pool; 60k contexts made tokens/s collapse."),
    ("l40s-fan-thermal", "serving", "throttling", None,
     S("L40S", "vllm", M7, flat(4), 600, 200, 600, cause="throttling", sev=MOD, win=(200, 600), reasons=("thermal (sw)", "thermal (hw)")),
     "Fan failure on node l40s-04: GPU at 90C, clocks halved, ITL up 60%."),
    ("dc-powerbrake-fsdp-h100", "training", "throttling", None,
     T("H100 SXM", "llama-3.1-70b-ft", 600, cause="throttling", sev=SEV, win=(240, 420), reasons=("power brake",)),
     "Facility power brake asserted on the rack for 3 minutes; all 8 ranks clocked down."),
    ("a10g-hwslow-tgi", "serving", "throttling", None,
     S("A10G", "tgi", M7, flat(2), 500, 200, 360, cause="throttling", sev=MILD, win=(60, 360), reasons=("hw slowdown",)),
     "TGI pod ~30% slower than peers; GPU reports HW slowdown (PSU)."),
    ("vllm-preempt-h100", "serving", "kv_pressure", None,
     S("H100 SXM", "vllm", L70, flat(10), 3000, 800, 480, tp=2, cause="kv_pressure", sev=MOD, win=(150, 420)),
     "Launch-day traffic; KV pool 99% and preemptions every second, queue growing."),
    ("sglang-retract-a100", "serving", "kv_pressure", None,
     S("A100 80GB", "sglang", G9, flat(6), 2500, 600, 420, cause="kv_pressure", sev=SEV, win=(100, 400)),
     "SGLang retracting requests continuously; TTFT p99 at 40 s."),
    ("lora-kv-l40s", "serving", "kv_pressure", None,
     S("L40S", "vllm", L8, flat(5), 2000, 500, 420, cause="kv_pressure", sev=MILD, win=(200, 330), loras=("support-v3", "sales-v1", "legal-v2")),
     "Multi-LoRA pod: a few preemptions per minute during the lunch peak."),
    ("timeslice-l4-imagegen", "other", "gpu_shared", (0,),
     S("L4", None, dict(model="stable-diffusion-xl", params_b=3.5), flat(0.5), 77, 30, 420, cause="gpu_shared", sev=MOD, win=(150, 420),
       other=(77001, 0, "python3", "python3 batch_caption.py --bs 32", "batch/captioner-5d8f", 6, 0.7)),
     "Image service on a time-sliced L4; a captioning batch pod got scheduled on the same GPU."),
    ("notebook-hog-h100-vllm", "serving", "gpu_shared", (0,),
     S("H100 SXM", "vllm", L8, flat(6), 800, 250, 480, cause="gpu_shared", sev=SEV, win=(120, 400), gmu=0.7,
       other=(88123, 0, "python3", "python3 -m ipykernel_launcher -f kernel-42.json", "research/jupyter-alice", 18, 0.8)),
     "Someone's notebook pod grabbed GPU0 of the serving node (no device plugin isolation)."),
    ("eval-on-train-gpu-a100", "training", "gpu_shared", (4,),
     T("A100 80GB", "llama-3.1-8b-full-ft", 480, cause="gpu_shared", sev=MILD, win=(180, 400), culprit=4, mem_gib=55),
     "Nightly eval job was launched on GPU4 of a running fine-tune node."),
    ("eagle-canary-h200", "serving", "spec_decode_rejected", None,
     S("H200", "vllm", L70, flat(4), 800, 300, 480, tp=2, k_spec=4, accept=0.7, cause="spec_decode_rejected", sev=SEV, win=(120, 480)),
     "Canary with the new fine-tuned target model but the old EAGLE head: acceptance fell to ~10%."),
    ("sglang-spec-drift-h100", "serving", "spec_decode_rejected", None,
     S("H100 SXM", "sglang", Q7, flat(5), 600, 300, 420, k_spec=3, accept=0.65, cause="spec_decode_rejected", sev=MILD, win=(200, 420)),
     "Code-completion traffic mix changed; spec acceptance dropped from 0.65 to ~0.45."),
    ("lcpp-draft-rtx6000", "serving", "spec_decode_rejected", None,
     S("RTX 6000 Ada", "llamacpp", LC, flat(1), 500, 300, 360, k_spec=8, accept=0.6, cause="spec_decode_rejected", sev=MOD, win=(90, 360), max_seqs=4),
     "llama-server with a mismatched draft GGUF after an update; most drafts rejected."),
    # ---------------- healthy look-alikes ----------------
    ("idle-vram-full-h100", "serving", None, None, S("H100 SXM", "vllm", L8, flat(0.05), 600, 150, 600),
     "Night: chat replica idle, VRAM 90% used by the pre-reserved KV pool. Expected."),
    ("bursty-sglang-a100", "serving", None, None, S("A100 80GB", "sglang", Q7, bursty(0.3, 8), 700, 200, 540),
     "Batchy client sends bursts every 90 s; latency within SLO."),
    ("diurnal-ramp-h200", "serving", None, None, S("H200", "vllm", L8, diurnal(1, 12, 1200), 800, 250, 1200),
     "Morning ramp; HPA scaled out, per-replica load rose and fell. Fine."),
    ("startup-graphs-l40s", "serving", None, None, S("L40S", "vllm", M7, flat(3), 600, 200, 420, restart=(0, 45, 25), warm_counters=False),
     "New pod: model load from PVC, CUDA graph capture at 100% util, then serving. Normal."),
    ("ckpt-saves-fsdp-h100", "training", None, None, T("H100 SXM", "llama-3.1-8b-full-ft", 900, ckpt=(300, 25)),
     "Fine-tune drops to 0% for ~25 s every 5 minutes: checkpoint saves."),
    ("eval-phases-a100", "training", None, None, T("A100 80GB", "mistral-7b-lora", 720, eval=(240, 60)),
     "Periodic eval phases at lower util; training resumes. Healthy."),
    ("decode-membound-tp4-h100", "serving", None, None, S("H100 SXM", "vllm", L70, flat(5), 1200, 400, 600, tp=4),
     "70B TP4 steady decode, DRAM activity high, ITL flat and inside SLO."),
    ("powercap-a100-steady", "serving", None, None, S("A100 80GB", "vllm", L8, flat(10), 600, 200, 600, plimit=250),
     "Boards capped at 250 W by policy; 'power cap' reason always on, steady throughput."),
    ("idle-sidecar-h200", "serving", None, None,
     S("H200", "vllm", L8, flat(4), 800, 250, 480, gmu=0.85, other=(66001, 0, "python3", "python3 /opt/dcgm-probe/health.py", "monitoring/gpu-health-x2", 1, 0.0)),
     "A health-probe sidecar holds 1 GiB on GPU0 but does no work. Not an issue."),
    ("batch-offline-h100", "other", None, None, S("H100 SXM", None, L8, flat(40), 600, 300, 900, max_seqs=512),
     "Nightly offline batch inference (LLM class, no metrics endpoint) at 100% util."),
    ("pod-restart-sglang-h100", "serving", None, None, S("H100 SXM", "sglang", Q7, flat(4), 600, 200, 600, restart=(250, 320, 30)),
     "Rolling update restarted the pod; counters reset, back to normal."),
    ("rag-prefill-heavy-tgi", "serving", None, None, S("A10G", "tgi", M7, flat(1.5), 3000, 120, 480),
     "RAG service: prefill dominates but TTFT within SLO."),
    ("eagle-normal-h200", "serving", None, None, S("H200", "vllm", L8, flat(6), 700, 300, 480, k_spec=4, accept=0.68),
     "Spec decode with EAGLE, acceptance ~0.68 steady."),
    ("mig-small-services-h100", "other", None, None,
     S("H100 SXM", "vllm", dict(model="intfloat/e5-mistral-7b-instruct", params_b=7.1, kvb=131072), flat(2), 400, 1, 420,
       mig=[("3g.40gb", 60, 39.5), ("2g.20gb", 32, 19.6), ("1g.10gb", 16, 9.75)], gmu=0.85),
     "MIG-partitioned node with an embedding service on 3g.40gb; all fine."),
    ("timeslice-light-l4", "serving", None, None,
     S("L4", "llamacpp", dict(model="llama-3.2-3b-instruct-q4_k_m.gguf", params_b=3.2, wdtype=0.56, kvb=114688), flat(0.3), 400, 150, 420, max_seqs=2,
       other=(55120, 0, "python3", "python3 whisper_server.py --model small", "speech/whisper-small-7c", 2, 0.0)),
     "Two light pods time-sliced on an L4; both well within SLO."),
    ("lcpp-single-user-rtx6000", "serving", None, None, S("RTX 6000 Ada", "llamacpp", LC, flat(0.2), 1500, 400, 360, max_seqs=1),
     "Single developer using the workstation model; memory-bound decode, as expected."),
    ("embed-bursts-l4", "serving", None, None, S("L4", "tgi", EMB | dict(), bursty(2, 60, 120, 30), 256, 1, 480),
     "Embedding backfill bursts every 2 minutes; fine."),
    ("distill-teacher-h200", "serving", None, None, S("H200", "sglang", L70, flat(4), 1000, 600, 600, tp=4),
     "Distillation teacher generation at steady high batch; no retractions, latency flat."),
    ("lora-ondemand-l40s", "serving", None, None, S("L40S", "vllm", L8, diurnal(2, 5, 600), 700, 200, 600, loras=("support-v3", "sales-v1")),
     "Multi-LoRA serving with adapters loading on demand; latency fine."),
    ("zero3-a100-steady", "training", None, None, T("A100 80GB", "mistral-7b-full-ft", 600, comm_s=0.35, tensor=0.45),
     "ZeRO-3 full fine-tune: 100% util, lots of NCCL traffic, steady step time."),
    ("gh200-tokenizer-cpu", "serving", None, None, S("GH200", "vllm", L8, flat(15), 400, 150, 480, cpus=72, neighbour_cores=20),
     "Host CPU at ~40% from tokenisation and log shipping, plenty of headroom."),
    ("b200-fullft-warm", "training", None, None, T("B200", "llama-3.3-70b-sft", 720, amb=35, tensor=0.6),
     "B200 node running warm (80C) but no throttle reasons; steady."),
    ("canary-restart-vllm-h100", "serving", None, None, S("H100 SXM", "vllm", Q7, flat(5), 700, 250, 540, restart=(180, 230, 20)),
     "Canary rolled to the new vLLM version; brief outage and warm-up, then steady."),
    ("scale-down-idle-a100", "serving", None, None, S("A100 40GB", "vllm", M7, lambda t: 6.0 if t < 240 else 0.0, 600, 200, 540),
     "HPA scale-down: traffic moved off this replica; GPU idle, VRAM still reserved."),
    ("whisper-l4-noengine", "other", None, None, S("L4", None, dict(model="openai/whisper-large-v3", params_b=1.55), bursty(0.5, 4, 60, 15), 1500, 100, 420),
     "Speech-to-text service, no metrics endpoint; bursty load."),
    ("ddp-jitter-free-ebpf-a10g", "training", None, None, T("A10G", "bert-large-classifier", 360, ngpus=1, ebpf=True, cpus=16, step_s=0.25, comm_s=0.0, mem_gib=18),
     "Probes on for a check: launch latency tight, nothing wrong."),
    ("quota-ok-vllm-h200", "serving", None, None, S("H200", "vllm", L8, flat(3), 800, 250, 420, quota=6.0),
     "Pod with a 6-core limit that it never hits; healthy."),
]
