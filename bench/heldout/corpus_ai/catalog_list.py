"""The traces: (name, family, cause, builder)."""
from __future__ import annotations
from functools import partial as P

from corpus_ai.catalog import (serving, training, job, const, step, ramp, pstep, chat, mining, contention,
                               quota_load, jitter_load, limit_event, brake_event, throttle_window, GIB)
from corpus_ai.host import CpuLoad

B = []


def add(name, family, cause, fn, **kw):
    B.append((name, family, cause, P(fn, name, cause=cause, family=family, **kw)))


S, T, J = serving, training, job
# ------------------------------------------------------------ memory_bandwidth
add("mb-agent-sessions-h100sxm", "serving", "memory_bandwidth", S, board="h100sxm", model="llama3-8b", max_len=65536,
    rate=const(1.0), prompt=ramp((2000, 0.5), (8000, 0.2), 100, 200), out=const((600, 0.4)), max_seqs=256, cached=0.9,
    window=(120, 360), note="agent framework sessions keep growing their context; every decode step reads ~4x the KV it did at start, DRAM pinned, tokens/s per session down 35% (slow onset)")
add("mb-awq-dequant-fallback-a6000", "serving", "memory_bandwidth", S, board="a6000", model="qwen14b-awq",
    rate=const(1.6), prompt=const((220, 0.5)), out=const((300, 0.5)), max_seqs=256,
    bytes_factor=step(1.0, 3.5, 130, 330), window=(130, 330),
    note="renter's load test raised concurrency past 256 batched tokens: vLLM's AWQ path dequantises whole weights to fp16 every step; DRAM pinned, ITL up 2.5x")
add("mb-rag-32k-h200", "serving", "memory_bandwidth", S, board="h200", model="llama3-8b", max_len=32768, cached=0.96,
    rate=const(1.5), prompt=pstep((1500, 0.5), (20000, 0.2), 120, 330), out=const((400, 0.5)), max_seqs=128,
    window=(125, 340), note="RAG tenant switched to 24k-token contexts at the same request rate: decode is KV-read bound, DRAM ~90%, ITL doubled")
add("mb-gemma-dense-kv-l40s", "serving", "memory_bandwidth", S, board="l40s", n=2, gpus=(0, 1), tp=2, link="pcie",
    model="gemma-27b", max_len=32768, rate=const(0.18), prompt=const((2000, 0.4)), out=const((350, 0.5)), cached=0.5,
    kv_factor=step(1.0, 3.2, 140, 340), window=(140, 340), others=None,
    note="after the renter's image update the sliding-window layers read the full dense KV (no SWA kernel on this build): KV bytes per step 3x, mild 25% tokens/s loss")
# ------------------------------------------------------------ throttling
add("th-dried-paste-3090", "serving", "throttling", S, board="rtx3090", n=1, model="gguf-8b-q4", kind="llamacpp",
    max_seqs=4, budget=512, graphs=True, rate=step(0.15, 0.45, 90), prompt=const((1400, 0.6)), out=const((500, 0.5)),
    gk={0: dict(r_thermal=2.0, ambient_c=32)}, window_from=throttle_window((0,), after=60), max_len=16384,
    note="gamer's 3090 with dried thermal paste: once the afternoon's traffic warms it past 83C the board slows itself to hold the limit; tokens/s -30%")
add("th-power-cap-after-bill-4090", "serving", "throttling", S, board="rtx4090", n=2, gpus=(0,), model="llama3-8b-fp8",
    rate=const(5.0), prompt=const((2500, 0.6)), out=const((220, 0.6)), budget=4096, events=(limit_event((0, 1), 150, 200.0),),
    window=(150, 360), others="diffusion", note="host ran nvidia-smi -pl 200 on both boards after his electricity bill; prefill-heavy chat loses 30% throughput, power pinned at 200 W")
add("th-psu-brake-8x3090-ddp", "training", "throttling", T, board="rtx3090", n=8, link="pcie-x4", step_tflop=60, grad_gb=1.0,
    events=(brake_event(range(8), [(130, 175), (205, 250), (280, 330)], 0.45, "power brake"),), window=(130, 330),
    cpus=16, note="converted mining rig: the PSU asserts power brake on all eight boards under full DDP load (intermittent); steps 2x slower while braked")
add("th-summer-afternoon-a6000-fsdp", "training", "throttling", T, board="a6000", n=2, link="pcie", step_tflop=120, grad_gb=3.0,
    gk={0: dict(ambient_c=30), 1: dict(ambient_c=30)}, dur=480, tick=2.0, window_from=throttle_window(None, after=90),
    note="small-business server room without AC: ambient climbs through the afternoon, both A6000s hit thermal slowdown together (slow onset, mild)",
    events=(lambda tr, w: [setattr(g, "ambient", 30 + max(0, min(22, (tr - 100) * 0.12))) for g in w.gpus],))
# ------------------------------------------------------------ prefill_interference
add("pf-rag-bursts-h100pcie", "serving", "prefill_interference", S, board="h100pcie", tick=0.5, scrape=1.0, model="llama3-8b", max_len=32768,
    rate=const(3.0), budget=16384, specials=[(130 + 6 * i, 14000, 8, 1, 0) for i in range(30)] + [(133 + 6 * i, 12000, 8, 1, 0) for i in range(30)],
    window=(130, 310), note="a RAG pipeline pushes 12-14k-token prompts every few seconds among chat sessions; with a 16k batched-token budget decodes wait behind prefill, ITL p99 4x")
add("pf-llamacpp-long-prompts-4090", "serving", "prefill_interference", S, board="rtx4090", model="gguf-13b-q5", kind="llamacpp",
    max_seqs=8, budget=2048, rate=const(0.6), prompt=const((600, 0.5)), out=const((400, 0.5)), max_len=32768,
    specials=[(120 + 9 * i, 9000, 10, 1, 0) for i in range(24)], window=(120, 340), scrape=10.0,
    note="Ollama-style server with 8 slots: a renter's document-summariser sends 9k-token prompts; every 2048-token batch stalls the chatting slots")
add("pf-sglang-tp2-a100", "serving", "prefill_interference", S, board="a100pcie", n=2, tp=2, gpus=(0, 1), link="pcie",
    kind="sglang", model="mistral-small", rate=const(3.0), budget=8192, max_len=32768,
    specials=[(140 + 10 * i, 7000, 16, 1, 0) for i in range(18)], window=(140, 330),
    note="mild: long support-ticket prompts arrive among chat decodes on TP2 over PCIe; ITL p99 up ~2x")
add("pf-tgi-l40s-bursts", "serving", "prefill_interference", S, board="l40s", kind="tgi", model="qwen7b", rate=const(4.0),
    budget=8192, max_len=32768, specials=[(120 + 3 * i, 7500, 6, 1, 0) for i in range(70)], window=(120, 330), scrape=15.0,
    note="TGI on an L40S: burst of long RAG prompts for three minutes; decode batches wait behind prefill")
# ------------------------------------------------------------ tiny_kernels
add("tk-graph-small-kernels-h200", "jobs", "tiny_kernels", J, board="h200", cmd="python3 sim_rollout.py --envs 1 --cuda-graph",
    profile=lambda t, g: (0.99, 0.012, 0.0, 0.004) if 120 <= t < 330 else (0.72, 0.62, 0.35, 0.25), window=(120, 330),
    note="RL rollout switched to a CUDA-graph of one-element kernels per env step: GPU-Util 99%, SM activity ~1%")
add("tk-batch1-embed-loop-h100pcie", "jobs", "tiny_kernels", J, board="h100pcie", cmd="jupyter-notebook embed.ipynb",
    profile=lambda t, g: (0.93, 0.06, 0.01, 0.02) if 110 <= t < 320 else (0.85, 0.7, 0.4, 0.3), window=(110, 320),
    note="notebook embeds 2M passages one at a time in a Python loop after the batched cell errored: busy but SM a sliver")
add("tk-gnn-per-node-h100sxm", "training", "tiny_kernels", T, board="h100sxm", n=1, step_tflop=30, grad_gb=0.1,
    tiny=step(0.0, 0.7, 130, 340), window=(130, 340), engine=False, note="mild: GNN job's neighbour sampler moved to per-node torch ops: a third of each step is tiny kernels")
add("tk-polling-kernel-h200-tp", "jobs", "tiny_kernels", J, board="h200", cmd="python3 serve_custom.py --spin-wait",
    profile=lambda t, g: (1.0, 0.008, 0.0, 0.001) if 150 <= t < 340 else (0.45, 0.38, 0.2, 0.2), window=(150, 340),
    note="renter's custom server leaves a persistent polling kernel spinning on one SM between requests: 100% GPU-Util, ~1% SM")
# ------------------------------------------------------------ host_cpu_contention
add("hc-neighbour-compile-4090", "serving", "host_cpu_contention", S, board="rtx4090", n=4, gpus=(1,), model="llama3-8b-fp8",
    rate=const(3.0), host_ms=4.0, graphs=True, load=contention(130, 320, cpuset=4, neighbours=14), window=(130, 320), cpus=8, others="diffusion",
    note="neighbour container runs make -j16 on the 4 shared cores of a weak host: the vLLM scheduler loses the CPU, tokens/s halves")
add("hc-docker-cpus2-8gpu-train", "training", "host_cpu_contention", T, board="rtx3090", n=8, link="pcie-x4", step_tflop=40, grad_gb=0.6,
    host_frac=0.35, load=quota_load(140, 400, None, 2.0, cpuset=16), rank_cpu=None, window=(140, 360), cpus=16, workers=0,
    note="host's automation set --cpus 2 on the 8-GPU container (docker update): eight rank processes share two cores, steps 3x slower")
add("hc-decompress-neighbour-a100-sglang", "serving", "host_cpu_contention", S, board="a100sxm", n=2, gpus=(0,), kind="sglang", model="qwen7b",
    rate=const(5.0), host_ms=3.0, load=contention(140, 330, cpuset=6, neighbours=9.0), window=(140, 330), cpus=12,
    note="mild: another tenant decompresses a dataset with pigz on the shared cores; SGLang's scheduler loses ~25% of its CPU")
add("hc-quota-llamacpp-l40s", "serving", "host_cpu_contention", S, board="l40s", kind="llamacpp", model="gguf-32b-q4", max_seqs=4,
    budget=512, graphs=False, host_ms=1.0, rate=const(0.5), prompt=const((800, 0.6)), out=const((400, 0.5)), max_len=16384,
    load=quota_load(120, 330, None, 0.4, cpuset=8), window=(120, 330),
    note="host lowered the container's CPU quota to 0.4 cores: llama-server's launch thread is throttled every period")
# ------------------------------------------------------------ input_stall
add("in-network-volume-a100-train", "training", "input_stall", T, board="a100pcie", tick=2.0, n=4, link="pcie", step_tflop=150, grad_gb=1.5,
    data_s=step(0.1, 2.8, 130, 330), window=(130, 330), workers=8,
    note="dataset on the marketplace's network volume: throughput collapses when the volume's burst credit runs out; GPUs idle waiting for batches")
add("in-jpeg-decode-weak-cpu-4090", "training", "input_stall", T, board="rtx4090", n=1, step_tflop=35, grad_gb=0.3, cpus=6,
    data_s=step(0.15, 0.9, 120, 360), window=(120, 360), workers=3, load=lambda tr: CpuLoad(1.0, 6, 0.2, 0.5),
    note="image fine-tune: epoch 2 reads full-size JPEGs not in the resized cache; 3 DataLoader workers on a 6-core CPU cannot keep up")
add("in-spinning-disk-3090x2", "training", "input_stall", T, board="rtx3090", n=2, link="pcie-x8", step_tflop=50, grad_gb=0.5,
    data_s=lambda tr: 4.0 if 150 <= tr < 330 and int(tr / 20) % 3 != 0 else 0.2, window=(150, 330),
    note="intermittent: shards past the page cache come from a spinning disk; seek storms stall both ranks for tens of seconds")
add("in-tokenize-on-the-fly-h100", "training", "input_stall", T, board="h100sxm", n=1, step_tflop=300, grad_gb=1.0,
    data_s=step(0.2, 0.95, 140, 360), window=(140, 360), workers=2,
    note="mild: renter switched to a dataset tokenised on the fly with 2 workers; the GPU waits ~25% of each step")
# ------------------------------------------------------------ collective_straggler
add("cs-thermal-rank-8x4090-ddp", "training", "collective_straggler", T, board="rtx4090", n=8, link="pcie-x8", step_tflop=90,
    grad_gb=1.0, gk={5: dict(r_thermal=1.75, ambient_c=36)}, culprit=(5,), window_from=throttle_window((5,), after=60),
    note="one 4090 in the middle of the rack has a failed fan curve; it hits thermal slowdown and the other seven wait in NCCL all-reduce")
add("cs-neighbour-cores-rank-4xa6000", "training", "collective_straggler", T, board="a6000", n=4, link="pcie", step_tflop=70,
    grad_gb=1.2, host_frac=0.3, rank_cpu=lambda tr, r: 0.12 if (r == 2 and 130 <= tr < 330) else 1.0, culprit=(2,), window=(130, 330),
    load=contention(130, 330, cpuset=16, neighbours=3.0), note="a neighbour's compile job lands on the cores rank 2 is pinned to: its launches lag, ranks 0,1,3 wait")
add("cs-x1-riser-retrain-6x3090", "training", "collective_straggler", T, board="rtx3090", n=6, link="pcie-x4", step_tflop=55,
    grad_gb=0.8, link_slow=lambda tr, r: 1.6 if (150 <= tr < 340) else 1.0,
    rank_delay=lambda tr, r: 0.3 if (r == 4 and 150 <= tr < 340) else 0.0, culprit=(4,), window=(150, 340), cpus=8,
    note="a riser on board 4 retrained from x4 to x1 after a PCIe error: the ring's all-reduce runs at its pace")
add("cs-power-limited-rank-2xh100pcie", "training", "collective_straggler", T, board="h100pcie", n=2, link="pcie", step_tflop=400,
    grad_gb=2.0, events=(limit_event((1,), 140, 210.0),), culprit=(1,), window=(140, 360),
    note="mild: host capped board 1 at 210 W (it shares a circuit with his fridge); rank 0 waits for rank 1 every step")
# ------------------------------------------------------------ oversized_request
add("ov-n16-logprobs-4090", "serving", "oversized_request", S, board="rtx4090", model="llama3-8b-fp8", rate=const(3.0),
    specials=[(130 + 14 * i, 600, 256, 16, 20) for i in range(14)], window=(130, 330),
    note="a renter's eval harness sends n=16, logprobs=20 requests one after another; every co-scheduled stream's ITL rises 2-3x")
add("ov-100k-prompt-h200", "serving", "oversized_request", S, board="h200", model="llama3-70b-fp8", max_len=131072, budget=8192,
    rate=const(1.5), specials=[(140, 100000, 600, 1, 0), (235, 100000, 600, 1, 0)], window=(140, 320),
    note="a customer pastes a 100k-token contract twice; its prefill and then its long KV reads stall the batch")
add("ov-beam-n8-sglang-a100", "serving", "oversized_request", S, board="a100sxm", kind="sglang", model="qwen7b", rate=const(3.0),
    specials=[(150, 3000, 1500, 16, 20), (230, 3000, 1500, 16, 20), (300, 3000, 800, 16, 20)], window=(150, 330),
    note="an eval script sends n=16, logprobs=20, max_tokens=1500 requests one at a time; the batch's ITL rises ~2x while each runs")
add("ov-giant-doc-tgi-l40s", "serving", "oversized_request", S, board="l40s", kind="tgi", model="llama3-8b-fp8", rate=const(3.0),
    max_len=65536, budget=16384, specials=[(150, 60000, 1200, 1, 0)], window=(150, 260), scrape=10.0,
    note="one 60k-token document summarisation request among chat traffic on TGI")
# ------------------------------------------------------------ host_launch_jitter
add("lj-irq-storm-h100-vllm", "serving", "host_launch_jitter", S, board="h100sxm", tick=0.5, scrape=2.0, model="llama3-8b", rate=const(6.0), ebpf="ok",
    graphs=False, jitter=step(0.0, 0.004, 130, 320), load=jitter_load(130, 320), window=(130, 320),
    note="NIC interrupts of a neighbour's download land on the vLLM launch thread's core: cudaLaunchKernel p99 jumps to ms")
add("lj-rt-neighbour-4090-sglang", "serving", "host_launch_jitter", S, board="rtx4090", n=2, gpus=(0,), kind="sglang", model="llama3-8b-fp8",
    rate=const(3.0), ebpf="ok", graphs=True, jitter=step(0.0, 0.02, 140, 330), load=jitter_load(140, 330, burst=0.4), window=(140, 330),
    note="mild: host's audio/streaming service with real-time priority preempts SGLang's launch thread in short bursts")
add("lj-smt-sibling-train-a100", "training", "host_launch_jitter", T, board="a100sxm", n=2, link="nvlink", step_tflop=60, grad_gb=0.5,
    host_frac=0.6, ebpf="ok", rank_cpu=lambda tr, r: 0.7 if 120 <= tr < 330 else 1.0, load=jitter_load(120, 330, burst=0.8),
    window=(120, 330), note="small-model training that is launch-bound; a neighbour pins a busy loop on the SMT siblings of the launch threads")
# ------------------------------------------------------------ kv_pressure
add("kv-pool-small-4090-vllm", "serving", "kv_pressure", S, board="rtx4090", tick=2.0, scrape=2.0, model="llama3-8b", max_len=32768,
    rate=const(2.0), prompt=pstep((700, 0.6), (7000, 0.4), 130, 330), out=const((500, 0.5)), window=(130, 340),
    note="KV pool sized for 8k-context chat (bf16 weights leave ~3 GB); a renter's 7k-token sessions arrive and the pool overflows: preemptions, queue")
add("kv-sglang-retract-a6000", "serving", "kv_pressure", S, board="a6000", kind="sglang", model="qwen14b-awq", max_len=32768,
    mem_util=0.55, rate=const(2.5), prompt=pstep((800, 0.6), (4000, 0.5), 130, 330), out=pstep((300, 0.5), (1500, 0.4), 130, 330),
    window=(130, 345), note="SGLang with --mem-fraction-static 0.55 (host keeps room for his own apps); long generations fill the pool: retractions")
add("kv-agent-growth-h100pcie", "serving", "kv_pressure", S, board="h100pcie", model="llama3-70b-awq", max_len=65536, mem_util=0.9,
    rate=const(0.8), prompt=ramp((3000, 0.4), (16000, 0.3), 90, 230), out=const((700, 0.4)), window=(180, 360), dur=390,
    note="slow onset: agent sessions' contexts grow until the 70B AWQ's pool is full; preemptions climb, waiting queue forms")
# ------------------------------------------------------------ gpu_shared
add("gs-two-containers-3090", "serving", "gpu_shared", S, board="rtx3090", n=4, gpus=(2,), model="gguf-8b-q4", kind="llamacpp",
    max_seqs=4, budget=512, rate=const(0.8), prompt=const((600, 0.5)), out=const((300, 0.5)), culprit=(2,), window=(130, 320),
    intruder=(2, 130, 320, lambda t, g: (0.95, 0.85, 0.5, 0.4), "python", "python train_lora.py", 9 * GIB), others="idle",
    note="the marketplace scheduler placed a second renter's LoRA job on board 2 (time-sliced): the llama.cpp renter's tokens/s halves")
add("gs-host-miner-4090-train", "training", "gpu_shared", T, board="rtx4090", n=2, ranks=(0,), step_tflop=80, grad_gb=0.3,
    intruder=(0, 140, 340, mining(), "t-rex", "./t-rex -a kawpow -o stratum+tcp://pool:4444", 3 * GIB), culprit=(0,), window=(140, 340),
    note="host's miner auto-started on the 'free' GPU that is actually rented: QLoRA steps 2x slower")
add("gs-notebook-timeslice-h100", "serving", "gpu_shared", S, board="h100pcie", n=2, gpus=(1,), model="qwen7b", rate=const(6.0),
    intruder=(1, 150, 300, lambda t, g: (0.8, 0.7, 0.6, 0.3), "python3", "python3 -m ipykernel_launcher", 20 * GIB), culprit=(1,),
    window=(150, 300), note="mild: host enabled time-slicing and rented the same H100 to a notebook user; vLLM's ITL up ~1.6x")
# ------------------------------------------------------------ spec_decode_rejected
add("sd-eagle-language-shift-h100", "serving", "spec_decode_rejected", S, board="h100sxm", model="llama3-8b", rate=const(5.0),
    spec_k=4, spec_cost=0.04, accept=step(0.78, 0.18, 130, 330), window=(130, 330),
    note="EAGLE head trained on English chat; a new tenant's traffic is Korean legal text: acceptance falls from ~0.8 to ~0.2, each token costs more")
add("sd-draft-tokenizer-mismatch-llamacpp-3090", "serving", "spec_decode_rejected", S, board="rtx3090", model="gguf-13b-q5", kind="llamacpp",
    max_seqs=2, budget=512, rate=const(0.3), prompt=const((500, 0.5)), out=const((500, 0.5)), spec_k=8, spec_cost=0.08,
    accept=step(0.7, 0.08, 120, 330), window=(120, 330), scrape=10.0,
    note="renter swapped the draft GGUF for one converted with a newer tokenizer version: almost every draft token rejected")
add("sd-sglang-eagle-code-a100", "serving", "spec_decode_rejected", S, board="a100sxm", kind="sglang", model="qwen7b", rate=const(4.0),
    spec_k=3, spec_cost=0.05, accept=step(0.72, 0.3, 140, 340), window=(140, 340),
    note="mild: traffic shifts to JSON tool calls with grammar-constrained output; EAGLE acceptance halves")

# ============================================================ healthy look-alikes
add("ok-loadtest-ends-vllm-h100", "lookalike", None, S, board="h100sxm", model="llama3-8b", rate=step(14.0, 0.3, 200),
    note="renter's load test ends at 200 s: tokens/s and GPU-Util fall to near zero; nothing wrong")
add("ok-bursty-loadtest-4090", "lookalike", None, S, board="rtx4090", tick=0.5, scrape=1.0, model="llama3-8b-fp8",
    rate=lambda tr: 3.5 if int(tr / 25) % 2 else 0.5, max_seqs=48, note="locust load test in 25 s bursts: queues form and drain each burst")
add("ok-ollama-model-swap-3090", "lookalike", None, S, board="rtx3090", model="gguf-8b-q4", kind="llamacpp", max_seqs=4, budget=512,
    rate=lambda tr: 0.0 if 170 <= tr < 200 else 0.4, prompt=const((500, 0.5)), out=const((300, 0.6)), scrape=10.0,
    note="Ollama-style server idles 30 s while the renter swaps models (no requests); back at normal speed")
add("ok-long-context-user-sglang-h200", "lookalike", None, S, board="h200", kind="sglang", model="llama3-8b", max_len=131072,
    rate=const(3.0), specials=[(150 + 20 * i, 30000, 400, 1, 0) for i in range(8)],
    note="a new user with 30k-token prompts every 20 s: TTFT for those is long, everyone else's ITL unchanged on an H200")
add("ok-finetune-eval-ckpt-a100", "lookalike", None, T, board="a100sxm", n=4, link="nvlink", step_tflop=200, grad_gb=2,
    eval_every=60, eval_s=25, ckpt_every=120, ckpt_s=30, dur=480, note="HF Trainer fine-tune: evaluation and checkpoint phases dip GPU-Util on schedule")
add("ok-always-power-limited-4090", "lookalike", None, S, board="rtx4090", model="llama3-8b-fp8", rate=const(1.6), max_seqs=24,
    prompt=const((1500, 0.5)), events=(limit_event((0,), -1, 250.0),), note="host has capped the 4090 at 250 W since day one: 'power cap' always on, steady")
add("ok-pcie-collectives-5x-3090", "lookalike", None, T, board="rtx3090", n=6, link="pcie-x4", step_tflop=40, grad_gb=1.5, cpus=12,
    note="DDP over x4 risers: all-reduce is always a large share of each step; GPU-Util high, SM low the whole run")
add("ok-batch-job-saturation-l40s", "lookalike", None, S, board="l40s", model="llama3-8b-fp8", rate=const(3.5), prompt=const((1200, 0.5)),
    out=const((500, 0.4)), max_seqs=128, note="offline batch job keeps the L40S saturated at a steady pace")
add("ok-prefix-cache-hits-vllm-a100", "lookalike", None, S, board="a100pcie", model="qwen7b", rate=const(5.0), prompt=const((5000, 0.3)),
    cached=step(0.05, 0.92, 150), note="RAG app starts sharing a 4.5k-token system prompt: prompt tokens/s high but computed prefill falls")
add("ok-comfyui-diffusion-5090", "lookalike", None, J, board="rtx5090", cmd="python main.py --listen 0.0.0.0 --port 8188",
    profile=lambda t, g: (0.98, 0.9, 0.6, 0.4) if (t % 30) < 22 else (0.03, 0.01, 0.0, 0.0), mem_gb=18,
    note="ComfyUI batch renders: 22 s of sampling, 8 s of VAE decode and save, repeatedly")
add("ok-whisper-batch-h100pcie", "lookalike", None, J, board="h100pcie", cmd="python3 transcribe.py --model large-v3 --batch 16",
    profile=lambda t, g: (0.8 + 0.1 * ((int(t) * 7919) % 11) / 11, 0.7, 0.35, 0.3), mem_gb=12, note="Whisper batch transcription, steady")
add("ok-notebook-idle-then-work-a6000", "lookalike", None, J, board="a6000", cmd="jupyter-lab --allow-root",
    profile=lambda t, g: (0.0, 0.0, 0.0, 0.0) if t < 180 else (0.88, 0.8, 0.5, 0.35), mem_gb=30,
    note="Jupyter notebook idles with 30 GB held, then the renter starts a training cell")
add("ok-diurnal-ramp-tgi-a100", "lookalike", None, S, board="a100sxm", kind="tgi", model="llama3-8b", rate=ramp(1.0, 4.5, 60, 300), scrape=15.0,
    note="morning ramp of chat traffic on TGI: tokens/s follows demand")
add("ok-eagle-spec-normal-h100", "lookalike", None, S, board="h100sxm", model="llama3-8b", rate=const(5.0), spec_k=4, spec_cost=0.04,
    accept=lambda tr: 0.72 + 0.06 * ((int(tr / 30) % 3) - 1), note="EAGLE speculation with normal acceptance swings between 0.66 and 0.78")
add("ok-hot-but-fine-3090", "lookalike", None, S, board="rtx3090", model="gguf-8b-q4", kind="llamacpp", max_seqs=4, budget=512,
    rate=const(0.7), gk={0: dict(ambient_c=33)}, note="summer room, 3090 runs at 75-80C with fans high, below slowdown")
add("ok-fsdp-8xh100-steady", "lookalike", None, T, board="h100sxm", n=8, link="nvlink", step_tflop=700, grad_gb=6, overlap=0.7, dur=300, tick=2.0,
    note="8xH100 FSDP pre-training run, steady; power cap reached on some boards as usual under dense matmul")
add("ok-qlora-4bit-4090", "lookalike", None, T, board="rtx4090", n=1, step_tflop=50, grad_gb=0.1, engine=False,
    note="QLoRA with a 4-bit base on one 4090: dequant kernels keep GPU-Util high with modest tensor use; steady")
add("ok-ollama-sporadic-user-5090", "lookalike", None, S, board="rtx5090", model="gguf-32b-q4", kind="llamacpp", max_seqs=1, budget=512,
    rate=const(0.05), prompt=const((300, 0.6)), out=const((500, 0.5)), max_len=8192, note="single chat user: the GPU idles between answers")
add("ok-sglang-tp2-structured-a100", "lookalike", None, S, board="a100sxm", n=2, tp=2, kind="sglang", model="mistral-small",
    rate=const(4.0), host_ms=4.0, note="SGLang TP2 with JSON-schema constrained decoding: host time per step higher than plain chat, steady")
add("ok-kv-high-no-preempt-h100", "lookalike", None, S, board="h100pcie", model="llama3-8b", rate=const(1.0), prompt=const((6000, 0.3)),
    out=const((900, 0.3)), max_seqs=64, max_len=16384, note="long-context tenant keeps the KV pool 60-85% full; no preemptions")
add("ok-70b-fp8-longer-outputs-h200", "lookalike", None, S, board="h200", model="llama3-70b-fp8", rate=const(0.7),
    out=pstep((300, 0.5), (700, 0.4), 170), note="traffic shifts to longer answers: batch grows, tokens/s rises, ITL slightly up")
add("ok-mining-farm-renters-8x3090", "lookalike", None, T, board="rtx3090", n=8, ranks=(0, 1, 2, 3), link="pcie-x1", step_tflop=30,
    grad_gb=0.2, others="diffusion", cpus=8, note="converted mining farm on x1 risers: a 4-GPU renter with a small model, other renters on the other boards")

BUILDERS = B
