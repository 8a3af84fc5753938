"""The trace list: 44 pathologies and 22 healthy look-alikes (see README.md)."""
from __future__ import annotations

from corpus_ao.catalog import (inlet_ramp, setall, GiB, LLAMA8Q4, M70B, M8B, MISTRAL7, QWEN7, QWEN32AWQ, REWRITE, Req,
                               add, chat_maker, lognorm, on, pulses, ramp, serve, service, train)

# --------------------------------------------------------------- shared shapes
# per-step phases at full clock: ("c", s, sm, tensor, dram, launch_frac[, knob]), ("coll",
# bytes, "ar"|"a2a"), ("opt", s, sm, tensor, dram, launch_frac)
FSDP8B = [("c", 0.95, 0.93, 0.62, 0.33, 0.02), ("coll", 11e9, "ar"), ("opt", 0.05, 0.6, 0.0, 0.85, 0.05)]
DLRM = [("c", 0.035, 0.72, 0.06, 0.82, 0.06, "emb_factor"), ("coll", 0.5e9, "a2a"),
        ("c", 0.065, 0.9, 0.55, 0.3, 0.03), ("coll", 0.35e9, "ar"), ("opt", 0.015, 0.6, 0.0, 0.85, 0.1)]
TWOTOWER = [("c", 0.13, 0.88, 0.45, 0.36, 0.04), ("coll", 0.6e9, "ar"), ("opt", 0.012, 0.6, 0.0, 0.8, 0.1)]
VIT = [("c", 0.26, 0.94, 0.62, 0.3, 0.02), ("coll", 0.7e9, "ar"), ("opt", 0.02, 0.6, 0.0, 0.8, 0.05)]
SEQREC = [("c", 0.09, 0.8, 0.35, 0.45, 0.12), ("coll", 0.25e9, "ar"), ("opt", 0.01, 0.6, 0.0, 0.8, 0.1)]
LORA = [("c", 0.42, 0.9, 0.58, 0.35, 0.03), ("coll", 0.2e9, "ar"), ("opt", 0.03, 0.55, 0.0, 0.7, 0.2)]
SINGLE = [("c", 0.11, 0.86, 0.42, 0.4, 0.05), ("opt", 0.01, 0.6, 0.0, 0.8, 0.1)]

A100X = 2.6  # A100 vs H100 compute time for the same step


def scale(phases, k):
    return [(p[0], p[1] * k, *p[2:]) if p[0] != "coll" else p for p in phases]


def rag_maker(long_frac_knob, env_holder, long=(12000, 0.3, 6000, 16000)):
    def make(rng, rid, t):
        f = long_frac_knob(t)
        if rng.random() < f:
            return Req(rid, t, lognorm(rng, *long), lognorm(rng, 40, 0.5, 4, 200))
        return Req(rid, t, lognorm(rng, 1400, 0.5, 64, 6000), lognorm(rng, 200, 0.6, 8, 1200))
    return make


# ================================================================ memory_bandwidth
W = (150, 330)
add("mb-awq-dequant-fallback-l40s", "serving", "memory_bandwidth", serve, window=W, gpu="L40S",
    model=QWEN32AWQ, rate=lambda t: 0.45, duration=420, tick=1.0, scrape_s=5,
    maker=chat_maker((900, 0.5, 64, 4000), (200, 0.5, 8, 800)),
    cfg=dict(mem_eff=0.55), knobs={"dequant_extra": on(W, 3.0, 0.0), "mem_eff": on(W, 0.88, 0.55)},
    note="Shopping-assistant 32B AWQ on an L40S: after the node image update the Marlin kernel "
         "is not picked and weights are dequantised through a dense bf16 path every step; memory "
         "controller pinned, ITL ~2.5x. L40S has no GPM: only NVML's memory util shows it.")
W = (140, 340)
add("mb-chat-history-kv-reads-h200", "serving", "memory_bandwidth", serve, window=W, gpu="H200",
    model=M8B, rate=lambda t: 5.0, duration=420, tick=1.0, scrape_s=2,
    maker=(lambda W: (lambda rng, rid, t: (lambda r: (setattr(r, "cached", r.prompt - 300) if W[0] <= t < W[1] else None, r)[1])(
        Req(rid, t, lognorm(rng, 16000, 0.25, 8000, 24000) if W[0] <= t < W[1] else lognorm(rng, 1800, 0.5, 64, 8000),
            lognorm(rng, 220, 0.5, 8, 1200)))))(W),
    note="Assistant 8B on H200: a release started sending the whole chat history plus product cards "
         "each turn (prefix-cached, so prefill is cheap) - every decode step now reads ~16k tokens "
         "of KV per request; DRAM pinned, ITL ~2x, KV pool not full.")
W = (160, 360)
add("mb-dlrm-table-outgrew-cache-h100", "training", "memory_bandwidth", train, window=W, gpu="H100",
    ngpu=8, phases=DLRM, duration=420, export="samples",
    job=dict(samples_per_step=65536, workers=8, batch_s_per_worker=0.4, link_bw=180e9),
    knobs={"emb_factor": on(W, 3.4, 1.0)},
    note="Nightly DLRM retrain on 8x H100: at the epoch boundary the expanded item table (new "
         "snapshot, +40% ids) no longer fits the TBE hot-row cache; lookups go scattered to HBM, "
         "DRAM activity pinned on all ranks, step time +60%.")
W = (150, 330)
add("mb-embedding-service-table-growth-h100", "inference", "memory_bandwidth", service, window=W,
    gpu="H100", duration=400, mem=58 * GiB, pod="reco/item-embedding-svc-0",
    cmd="python3 -m embsvc.server --table /data/items_v42 --port 7070", label="embsvc.server",
    svc=dict(rate=lambda t: 900.0, kernels=40, item_s=0.000006, fixed_s=0.0009, sm=0.8, tensor=0.15,
             dram=0.55, max_batch=128),
    knobs={"svc_item_factor": ramp(W, 2.6, 1.0, 40), "svc_dram": on(W, 0.93, 0.55)},
    note="Mild: item-embedding lookup service on an H100 (no engine page): the table grew past the "
         "L2/hot-row cache after the catalogue import; gathers read DRAM hard, batch latency 1.7x.")

# ================================================================ throttling
W = (190, 470)
add("thr-hot-aisle-l40s-embedding", "inference", "throttling", service, window=W, gpu="L40S",
    ngpu=4, duration=480, tick=2.0, mem=30 * GiB, pod="search/text-embedder-0",
    cmd="python3 -m embed_server --model e5-large --port 9000", label="embed_server",
    svc=dict(rate=lambda t: 1600.0, kernels=60, item_s=0.00052, fixed_s=0.002, sm=0.92, tensor=0.6,
             dram=0.35, max_batch=128),
    host={"inlet": 30.0}, events=inlet_ramp(120, 240, 30.0, 53.0),
    note="Heat wave: the hot aisle's inlet rose from 30 to 53 C over two minutes (from ~120 s); all four L40S of "
         "the embedding node reach their slowdown temperature, clocks cut, QPS lags demand.")
W = (150, 390)
add("thr-admin-power-limit-h200", "serving", "throttling", serve, window=W, gpu="H200",
    model=M8B, rate=lambda t: 3.5, duration=420, scrape_s=5,
    maker=chat_maker((5000, 0.4, 500, 12000), (60, 0.5, 4, 400)),
    events=[(W[0], setall("limit", 300.0)), (W[1], setall("limit", 700.0))],
    note="An admin capped the assistant H200 at 300 W (nvidia-smi -pl) for a rack-budget test and "
         "forgot it: 'power cap' throttle, SM clock ~1.1 GHz, prefill-heavy RAG traffic slower.")
W = (110, 420)
add("thr-failing-fan-4090-llamacpp", "workstation", "throttling", serve, window=W, gpu="RTX4090",
    kind="llamacpp", model=LLAMA8Q4, rate=lambda t: 0.35, duration=480, tick=1.0, scrape_s=2,
    maker=chat_maker((900, 0.5, 50, 3000), (450, 0.4, 50, 1200)), util=0.6, block=256,
    note="A data scientist's RTX 4090 running llama-server: the fan's bearing is failing (fan reads "
         "100% but moves little air); temperature climbs over minutes to thermal slowdown.")
W = (150, 330)
add("thr-rack-power-brake-a100", "training", "throttling", train, window=W, gpu="A100", ngpu=8,
    phases=scale(TWOTOWER, A100X), duration=420, export=None,
    job=dict(samples_per_step=32768, workers=6, batch_s_per_worker=0.9, link_bw=120e9),
    events=[(W[0], setall("hw_slowdown", 1050.0)), (W[0], setall("power_brake", True)),
            (W[1], setall("hw_slowdown", None))],
    note="Mild: two-tower retrain on 8x A100; the rack PDU hit its cap when every node went busy "
         "and asserted the power brake: all eight GPUs drop to ~1 GHz alike (HW power brake).")

# ================================================================ prefill_interference
W = (150, 340)
add("pi-comparison-rag-chunking-off-h100", "serving", "prefill_interference", serve, window=W,
    gpu="H100", model=M8B, rate=lambda t: 6.0, duration=420, scrape_s=2,
    maker=rag_maker(on(W, 0.09, 0.0), None), cfg=dict(chunked=False, max_batched=16384),
    note="Assistant 8B on H100 with chunked prefill off (config rolled back last week): the new "
         "product-comparison feature sends 10-16k-token prompts; each runs as one long prefill "
         "step and every decoding chat stalls; ITL p99 10x.")
W = (140, 330)
add("pi-sglang-catalogue-stuffing-h200", "serving", "prefill_interference", serve, window=W,
    kind="sglang", gpu="H200", model=QWEN7, rate=lambda t: 8.0, duration=400, scrape_s=5,
    maker=rag_maker(on(W, 0.08, 0.0), None, (24000, 0.25, 12000, 32000)),
    cfg=dict(max_batched=8192),
    note="SGLang assistant on H200: retrieval started stuffing 20 product pages (24k tokens) into "
         "some prompts; 8k-token prefill chunks fill most steps and decode ITL for everyone rises.")
W = (150, 340)
add("pi-tgi-ticket-history-a10g", "serving", "prefill_interference", serve, window=W, kind="tgi",
    gpu="A10G", model=MISTRAL7, rate=lambda t: 0.9, duration=420, scrape_s=10, util=0.92,
    maker=rag_maker(on(W, 0.25, 0.0), None, (4500, 0.3, 2500, 6500)),
    note="Mild: legacy TGI support bot on A10G; escalated tickets now carry the full ticket history "
         "(3-6k tokens); TGI prefills them whole, between decode steps: time per token 1.8x.")
W = (150, 340)
add("pi-bulk-spec-prompts-l40s", "serving", "prefill_interference", serve, window=W, gpu="L40S",
    model=QWEN7, rate=lambda t: 2.5, duration=420, scrape_s=5,
    maker=rag_maker(on(W, 0.12, 0.0), None, (6000, 0.3, 3000, 9000)), cfg=dict(max_batched=4096),
    note="Mild: chat assistant on L40S; a merchandising script posts long spec sheets to the chat "
         "endpoint among the shoppers' short questions; 4k-token chunks slow decode steps.")

# ================================================================ tiny_kernels
W = (150, 340)
add("tk-reranker-bs1-eager-h200", "inference", "tiny_kernels", service, window=W, gpu="H200",
    duration=420, mem=9 * GiB, pod="assistant/rag-reranker-0", cmd="python3 rerank_server.py --port 7100",
    label="rerank_server.py",
    svc=dict(rate=lambda t: 160.0, kernels=340, item_s=0.00018, fixed_s=0.0012, sm=0.85,
             tensor=0.55, dram=0.3, max_batch=32, graphs=True, fill_batch=16),
    knobs={"svc_max_batch": on(W, 1, 32), "svc_graphs": on(W, False, True)},
    note="RAG reranker beside the assistant on an H200: a refactor scores each candidate with its "
         "own forward (batch 1) and the CUDA-graph wrapper was dropped; GPU-Util 90%+, SM active a "
         "sliver, p99 up 4x.")
W = (140, 330)
add("tk-per-product-python-loop-h100", "training", "tiny_kernels", service, window=W, gpu="H100",
    duration=400, mem=22 * GiB, pod="pricing/elasticity-eval-0", cmd="python3 eval_elasticity.py --day 2026-12-01",
    label="eval_elasticity.py",
    svc=dict(rate=lambda t: 4000.0, kernels=30, item_s=0.0000012, fixed_s=0.004, sm=0.9, tensor=0.5,
             dram=0.4, max_batch=4096, graphs=True, fill_batch=512),
    knobs={"svc_max_batch": on(W, 1, 4096), "svc_graphs": on(W, False, True)},
    note="Price-elasticity evaluation on an H100: its second stage loops in Python over products "
         "and launches a handful of tiny kernels per product; GPU-Util ~90%, SM active ~5%.")
W = (150, 360)
add("tk-lora-unfused-optimizer-h100", "training", "tiny_kernels", train, window=W, gpu="H100",
    ngpu=4, phases=LORA, duration=420, export="tokens",
    job=dict(tokens_per_step=4 * 8 * 4096, workers=4, batch_s_per_worker=0.3, link_bw=150e9),
    knobs={"opt_factor": on(W, 30.0, 1.0), "launch_frac": on(W, 0.95, 0.2)},
    note="LoRA fine-tune of the assistant on 4x H100: a dependency bump made AdamW fall back to "
         "its per-tensor loop over ~2,000 adapter tensors; the optimizer is now thousands of tiny "
         "kernels, most of the step.")
W = (150, 350)
add("tk-rewriter-graph-size-exceeded-h100", "serving", "tiny_kernels", serve, window=W, gpu="H100",
    model=REWRITE, rate=lambda t: 200.0 if W[0] <= t < W[1] else 10.0, duration=420, scrape_s=5,
    maker=chat_maker((120, 0.4, 16, 400), (60, 0.4, 8, 150)), cfg=dict(graph_max=16),
    note="Query rewriter (1.5B) on an H100 spare: the rollback restored cudagraph_capture_sizes up "
         "to 16; at the sale's traffic the batch exceeds 16 and decode runs eager, launch-bound: "
         "GPU-Util high, SM active low, ITL 3x.")

# ================================================================ host_cpu_contention
W = (150, 350)
add("hc-cgroup-quota-vllm-l40s", "serving", "host_cpu_contention", serve, window=W, gpu="L40S",
    model=QWEN7, rate=lambda t: 3.0, duration=420, scrape_s=5, host={"quota": 8.0, "cpus": 48},
    restart=lambda env, eng, procs: env.events.append((W[0], lambda e: setattr(e.host, "quota", 0.8))),
    note="The resource template change resized the assistant pod's CPU limit in place from 8 to "
         "0.8 cores: the cgroup throttles the engine core every period; tokens/s halves.")
W = (140, 330)
add("hc-log-shipper-sglang-h200", "serving", "host_cpu_contention", serve, window=W, kind="sglang",
    gpu="H200", model=QWEN7, rate=lambda t: 7.0, duration=400, scrape_s=5,
    host={"cpus": 96, "cores": tuple(range(8, 16))}, knobs={"other_cores": on(W, 22.0, 0.0)},
    note="A log shipper (fluent-bit) stuck re-reading a rotated log spins on the SGLang pod's "
         "cores (same cpuset): run queue and PSI up, the scheduler loses CPU, ITL 2x.")
W = (150, 340)
add("hc-noisy-neighbour-etl-a100", "training", "host_cpu_contention", train, window=W, gpu="A100",
    ngpu=2, phases=scale(SEQREC, A100X), duration=420, export="samples",
    job=dict(samples_per_step=8192, workers=4, batch_s_per_worker=0.25, link_bw=100e9, main_cpu=1.2),
    host={"cpus": 32}, knobs={"other_cores": on(W, 70.0, 0.0)},
    note="Sequence recommender on 2x A100: a Spark ETL pod with no CPU limit landed on the node and "
         "takes 70 runnable threads on 32 CPUs; trainer and loaders lose CPU (PSI 80%).")
W = (150, 340)
add("hc-kafka-consumer-ctr-l4", "inference", "host_cpu_contention", service, window=W, gpu="L4",
    duration=420, mem=7 * GiB, pod="ranking/ctr-ranker-2", cmd="python3 -m ctr.serve --port 8500",
    label="ctr.serve", host={"cpus": 16, "cores": (4, 5, 6, 7)},
    svc=dict(rate=lambda t: 900.0, kernels=90, item_s=0.00001, fixed_s=0.0015, sm=0.8, tensor=0.4,
             dram=0.4, max_batch=64, host_item_s=0.00022, host_fixed_s=0.002),
    knobs={"other_cores": on(W, 4.5, 0.0)},
    note="Mild: CTR ranking service on an L4 (no engine page): a clickstream Kafka consumer "
         "sidecar was scheduled onto the same four cores during the sale backlog; feature "
         "assembly on the CPU slows, GPU idles between batches.")

# ================================================================ input_stall
W = (150, 360)
add("is-parquet-schema-decode-a100", "training", "input_stall", train, window=W, gpu="A100", ngpu=8,
    phases=scale(DLRM, A100X), duration=420, export="samples",
    job=dict(samples_per_step=65536, workers=6, batch_s_per_worker=1.2, link_bw=120e9),
    knobs={"batch_cost": on(W, 3.2, 1.0)},
    note="DLRM training on 8x A100: the new clickstream schema adds nested list columns; Parquet "
         "decode per batch is 3x the CPU and 6 workers per rank cannot keep up: GPUs idle between "
         "steps, loader workers at 100%.")
W = (130, 400)
add("is-cold-cache-snapshot-h100", "training", "input_stall", train, window=W, gpu="H100", ngpu=4,
    phases=TWOTOWER, duration=460, export="samples",
    job=dict(samples_per_step=16384, workers=8, batch_s_per_worker=0.5, link_bw=150e9),
    knobs={"io_slow": lambda t: 1.0 if not (W[0] <= t < W[1]) else 1.0 + 5.0 * max(0.0, 1 - (t - W[0]) / 330)},
    note="Two-tower retrieval retrain on 4x H100 reads the new dataset snapshot: the object-store "
         "cache is cold, loaders wait on network reads (workers mostly idle in I/O); recovers slowly "
         "as the cache warms.")
W = (150, 330)
add("is-feature-store-hiccup-a100", "training", "input_stall", train, window=W, gpu="A100", ngpu=2,
    phases=scale(SEQREC, A100X), duration=420, export=None,
    job=dict(samples_per_step=8192, workers=4, batch_s_per_worker=0.25, link_bw=100e9),
    knobs={"io_slow": pulses(W, 9.0, 1.0, 30, 18)},
    note="Intermittent: sequence recommender on 2x A100 reads user features from the feature store "
         "over the network; a flapping ToR port makes lookups time out in bursts of ~18 s every "
         "30 s for three minutes.")
W = (150, 360)
add("is-image-decode-encoder-h100", "training", "input_stall", train, window=W, gpu="H100", ngpu=8,
    phases=VIT, duration=420, export="samples",
    job=dict(samples_per_step=8 * 256, workers=10, batch_s_per_worker=2.2, link_bw=200e9),
    knobs={"batch_cost": on(W, 2.0, 1.0)},
    note="Mild: product-image encoder on 8x H100; the new snapshot has 2048-px merchant images "
         "instead of 800-px thumbnails; JPEG decode and resize on the CPU now lag the GPUs ~30%.")

# ================================================================ collective_straggler
W = (150, 360)
add("cs-rank5-clock-stuck-h100", "training", "collective_straggler", train, window=W, gpu="H100",
    ngpu=8, phases=FSDP8B, duration=420, export="tokens", culprit=(5,),
    job=dict(tokens_per_step=8 * 8 * 4096, workers=4, batch_s_per_worker=0.4, link_bw=160e9),
    events=[(W[0], lambda e: setattr(e.gpus[5], "hw_slowdown", 1110.0)),
            (W[1], lambda e: setattr(e.gpus[5], "hw_slowdown", None))],
    note="FSDP fine-tune of the assistant on 8x H100: GPU 5 asserts HW slowdown (its clock held at "
         "1.1 GHz); seven ranks spin in NCCL waiting for it every step.")
W = (150, 360)
add("cs-degraded-nvlink-gpu2-dlrm-h100", "training", "collective_straggler", train, window=W,
    gpu="H100", ngpu=8, phases=DLRM, duration=420, export="samples", culprit=(2,),
    job=dict(samples_per_step=65536, workers=8, batch_s_per_worker=0.4, link_bw=180e9),
    knobs={"link_slow": on(W, {2: 7.0}, {})},
    note="DLRM on 8x H100: two of GPU 2's NVLinks went down after a retrain-node blip (NVLink "
         "errors); its all-to-all and all-reduce traffic is slow and every other rank waits on it.")
W = (130, 400)
add("cs-rank3-airflow-a100", "training", "collective_straggler", train, window=W, gpu="A100",
    ngpu=4, phases=scale(TWOTOWER, A100X), duration=460, export="samples", culprit=(3,),
    job=dict(samples_per_step=16384, workers=6, batch_s_per_worker=0.9, link_bw=120e9),
    events=[(W[0], lambda e: setattr(e.gpus[3], "cooling", 2.1))],
    note="Slow onset: two-tower retrain on 4x A100; a cable bundle blocks GPU 3's airflow after "
         "maintenance; it heats over minutes into thermal slowdown and the other three wait.")
W = (150, 340)
add("cs-rank1-noisy-cores-h100", "training", "collective_straggler", train, window=W, gpu="H100",
    ngpu=4, phases=[("c", 0.2, 0.85, 0.45, 0.35, 0.3), ("coll", 0.4e9, "ar"), ("opt", 0.015, 0.6, 0.0, 0.8, 0.1)],
    duration=420, export="samples", culprit=(1,),
    job=dict(samples_per_step=16384, workers=6, batch_s_per_worker=0.5, link_bw=150e9),
    knobs={"rank_host_slow": on(W, {1: 1.9}, {})},
    note="Mild: distillation into the small ranker on 4x H100; rank 1's launch thread is pinned "
         "to NUMA cores where a noisy neighbour pod runs; rank 1 steps ~25% slower, the rest wait.")

# ================================================================ oversized_request
W = (150, 260)
add("os-merchant-catalogue-120k-h200", "serving", "oversized_request", serve, window=W, gpu="H200",
    model=M8B, rate=lambda t: 5.0, duration=400, scrape_s=2, util=0.5,
    inject=[Req(900000 + i, W[0] + i * 35, 118000 + i * 900, 900) for i in range(3)],
    note="A merchant pasted a 120k-token catalogue into the assistant three times in a row; each "
         "prompt occupies the prefill budget for seconds and its 120k-token KV is read every "
         "decode step; everyone's ITL and TTFT jump.")
W = (150, 300)
add("os-client-n12-logprobs-l40s", "serving", "oversized_request", serve, window=W, gpu="L40S",
    model=QWEN7, rate=lambda t: 3.0, duration=400, scrape_s=5,
    inject=[Req(800000 + i, W[0] + i * 12.5, 600, 400, n=12, logprobs=20) for i in range(12)],
    note="A partner's evaluation client sends n=12, logprobs=20 requests one after another; each "
         "fans out to 12 sequences with vocabulary-wide logprobs and the whole batch slows ~2.5x.")
W = (150, 280)
add("os-feed-paste-llamacpp-a6000", "workstation", "oversized_request", serve, window=W,
    gpu="A6000", kind="llamacpp", model=LLAMA8Q4, rate=lambda t: 0.25, duration=400, scrape_s=2,
    maker=chat_maker((600, 0.5, 50, 2000), (300, 0.4, 40, 900)), util=0.7, block=256,
    inject=[Req(700000 + i, W[0] + i * 16, 24000, 500) for i in range(8)],
    note="Data-science workstation (A6000, llama-server with 4 slots): a colleague pastes a "
         "product feed (24k tokens) eight times; its prompt batches of 2048 tokens stall the other slots.")
W = (150, 300)
add("os-n4-logprobs-mild-h100", "serving", "oversized_request", serve, window=W, gpu="H100",
    model=M8B, rate=lambda t: 5.0, duration=400, scrape_s=5,
    inject=[Req(600000 + i, W[0] + i * 10, 800, 300, n=6, logprobs=10) for i in range(15)],
    note="Mild: an A/B analysis job sends n=5, logprobs=8 requests to the assistant; ITL p99 1.6x.")

# ================================================================ kv_pressure
W = (150, 380)
add("kv-sale-long-chats-70b-h200", "serving", "kv_pressure", serve, window=W, gpu="H200", ngpu=2,
    tp=2, model=M70B, rate=lambda t: 2.2, duration=440, scrape_s=5, util=0.68,
    maker=lambda rng, rid, t: Req(rid, t, lognorm(rng, 5500 if W[0] <= t < W[1] else 1500, 0.35, 200, 14000),
                                  lognorm(rng, 600 if W[0] <= t < W[1] else 250, 0.4, 20, 1500)),
    note="Assistant 70B (TP2, H200) with gpu_memory_utilization cut to 0.68 by a template change; "
         "the sale's long multi-turn chats fill the KV pool: preemptions every few seconds, queue "
         "builds, TTFT 10x.")
W = (150, 360)
add("kv-sglang-retractions-l40s", "serving", "kv_pressure", serve, window=W, kind="sglang",
    gpu="L40S", model=QWEN7, rate=lambda t: 4.5 if W[0] <= t < W[1] else 1.2, duration=420,
    scrape_s=5, util=0.62,
    maker=chat_maker((3000, 0.4, 100, 9000), (500, 0.4, 16, 1500)),
    note="SGLang assistant on L40S sized for last month's traffic (mem fraction 0.62): at the "
         "evening peak running requests outgrow the pool and the scheduler retracts requests.")
W = (150, 330)
add("kv-mild-preemptions-a100", "serving", "kv_pressure", serve, window=W, gpu="A100", model=M8B,
    rate=lambda t: 2.6 if W[0] <= t < W[1] else 1.1, duration=400, scrape_s=5, util=0.4,
    maker=chat_maker((3500, 0.4, 100, 9000), (450, 0.4, 16, 1500)),
    note="Mild: assistant 8B on an A100 sharing memory with a reserved embedding cache (util 0.4); "
         "the peak brings occasional preemptions and a short queue.")

# ================================================================ gpu_shared
W = (150, 360)
add("gs-forgotten-notebook-serving-h200", "serving", "gpu_shared", serve, window=W, gpu="H200",
    model=M8B, rate=lambda t: 6.0, duration=420, scrape_s=5, util=0.6,
    knobs={"gpu_share": on(W, {0: 0.5}, {})},
    tenants=[dict(gpu=0, start=W[0], end=W[1] + 200, duty=lambda t: 0.55 if W[0] <= t < W[1] else 0.0,
                  mem=38 * GiB, cmd="/opt/conda/bin/python -m ipykernel_launcher -f /root/.local/share/jupyter/runtime/kernel-7f.json")],
    note="A data scientist's notebook, left on a serving node with the assistant at 60% memory, "
         "starts a fine-tuning cell on GPU 0: time-slicing halves the engine's GPU time.")
W = (150, 360)
add("gs-second-pod-timeslice-a100", "training", "gpu_shared", train, window=W, gpu="A100", ngpu=1,
    phases=scale(SINGLE, A100X), duration=420, export="samples", mem_frac=0.45,
    job=dict(samples_per_step=4096, workers=6, batch_s_per_worker=0.3),
    knobs={"gpu_share": on(W, {0: 0.55}, {})},
    tenants=[dict(gpu=0, start=W[0], end=W[1], duty=lambda t: 0.45, mem=30 * GiB, pod="ml-train/hpo-trial-17-0",
                  cmd="python3 tune_trial.py --trial 17", user="mltrain")],
    note="Distillation job on an A100: Kueue admitted a second pod onto the same GPU through "
         "time-slicing (a mislabelled node); the distiller's steps take ~1.8x.")
W = (150, 330)
add("gs-eval-notebook-embedding-l40s", "inference", "gpu_shared", service, window=W, gpu="L40S",
    duration=400, mem=20 * GiB, pod="search/text-embedder-1", cmd="python3 -m embed_server --model e5-large",
    label="embed_server",
    svc=dict(rate=lambda t: 450.0, kernels=60, item_s=0.00055, fixed_s=0.002, sm=0.92, tensor=0.6,
             dram=0.35, max_batch=128),
    knobs={"gpu_share": pulses(W, {0: 0.62}, {}, 40, 28)},
    tenants=[dict(gpu=0, start=W[0], end=W[1], duty=pulses(W, 0.38, 0.0, 40, 28), mem=14 * GiB,
                  cmd="python -m ipykernel_launcher (eval_recall.ipynb)")],
    note="Mild, intermittent: a notebook runs recall evaluations in bursts on the embedding "
         "service's GPU; the service's batches slow ~1.5x while it runs.")

# ================================================================ spec_decode_rejected
W = (150, 360)
add("sd-stale-draft-after-update-h200", "serving", "spec_decode_rejected", serve, window=W,
    gpu="H200", model=M8B, rate=lambda t: 5.0, duration=420, scrape_s=5,
    cfg=dict(spec_k=4, spec_alpha=0.72, draft_frac=0.09), knobs={"spec_alpha": on(W, 0.2, 0.72)},
    note="Assistant updated to the sale fine-tune but its draft model is still the old fine-tune's; "
         "on the new catalogue-style answers acceptance collapses from ~70% to ~20%: each token "
         "costs more than without speculation.")
W = (150, 340)
add("sd-sglang-eagle-heads-stale-h200", "serving", "spec_decode_rejected", serve, window=W,
    kind="sglang", gpu="H200", model=QWEN7, rate=lambda t: 6.0, duration=400, scrape_s=5,
    cfg=dict(spec_k=3, spec_alpha=0.75, draft_frac=0.06), knobs={"spec_alpha": on(W, 0.25, 0.75)},
    note="SGLang with EAGLE heads trained for the previous checkpoint; after the tool-call format "
         "change the heads' guesses are rejected: accept length 3.2 -> 1.3.")
W = (150, 330)
add("sd-llamacpp-draft-mismatch-a6000", "workstation", "spec_decode_rejected", serve, window=W,
    gpu="A6000", kind="llamacpp", model=LLAMA8Q4, rate=lambda t: 0.3, duration=400, scrape_s=2,
    maker=chat_maker((500, 0.5, 40, 2000), (400, 0.4, 50, 1000)), util=0.7, block=256,
    cfg=dict(spec_k=6, spec_alpha=0.68, draft_frac=0.1), knobs={"spec_alpha": on(W, 0.32, 0.68)},
    note="Mild: llama-server with a 0.5B draft; the analyst switched to asking for JSON product "
         "attributes, which the draft predicts badly; generation ~1.5x slower.")

# ================================================================ host_launch_jitter
W = (150, 340)
add("lj-irq-on-launch-core-ctr-h100", "inference", "host_launch_jitter", service, window=W,
    gpu="H100", duration=400, mem=11 * GiB, ebpf=True, pod="ranking/ctr-ranker-h100-0",
    cmd="python3 -m ctr.serve --port 8500 --device cuda:0", label="ctr.serve",
    svc=dict(rate=lambda t: 1200.0, kernels=220, item_s=0.000004, fixed_s=0.0016, sm=0.8, tensor=0.4,
             dram=0.4, max_batch=64, graphs=False),
    knobs={"launch_preempt": on(W, (0.03, 0.00045), (0.0, 0.0))},
    note="CTR ranking on an H100 (eager PyTorch, ~220 launches per batch): after a NIC driver "
         "update its IRQs land on the launch thread's core; eBPF shows cudaLaunchKernel p99 from "
         "~6 us to ~1 ms, batch latency up; CPU totals barely change.")
W = (150, 330)
add("lj-workstation-trainer-a6000", "workstation", "host_launch_jitter", train, window=W,
    gpu="A6000", ngpu=1, phases=[("c", 0.05, 0.7, 0.3, 0.4, 0.45), ("opt", 0.006, 0.6, 0.0, 0.8, 0.5)],
    duration=400, export=None, ebpf=True, mem_frac=0.5, host={"cpus": 24},
    job=dict(samples_per_step=512, workers=4, batch_s_per_worker=0.05),
    knobs={"launch_preempt": pulses(W, (0.012, 0.0009), (0.0, 0.0), 20, 14)},
    note="Mild, intermittent: a session recommender trains on an A6000 workstation; a backup "
         "agent's real-time-priority thread preempts the launch thread in bursts; eBPF launch "
         "latency tail grows, steps ~25% slower.")
W = (150, 340)
add("lj-rewriter-eager-l40s", "serving", "host_launch_jitter", serve, window=W, gpu="L40S",
    model=REWRITE, rate=lambda t: 14.0, duration=400, scrape_s=5, ebpf=True,
    maker=chat_maker((150, 0.4, 16, 500), (40, 0.5, 4, 150)), cfg=dict(graphs=False),
    knobs={"launch_preempt": on(W, (0.02, 0.0005), (0.0, 0.0))},
    note="Query rewriter on L40S (eager mode for a custom op): a kernel worker thread bound to its "
         "core preempts the engine's launch thread; eBPF launch p99 ~1 ms, ITL 1.6x.")

# ================================================================ healthy look-alikes
add("ok-finetune-eval-and-checkpoint-h100", "lookalike", None, train, gpu="H100", ngpu=8,
    phases=FSDP8B, duration=480, export="tokens",
    job=dict(tokens_per_step=8 * 8 * 4096, workers=4, batch_s_per_worker=0.4, link_bw=160e9,
             eval_every_s=170, eval_s=30, ckpt_every_s=240, ckpt_s=45, ckpt_first_s=300, eval_first_s=120),
    note="Healthy: FSDP fine-tune with an evaluation pass (30 s) and a 45-s checkpoint write to "
         "the object store; GPUs dip by design.")
add("ok-two-tower-epoch-boundary-a100", "lookalike", None, train, gpu="A100", ngpu=4,
    phases=scale(TWOTOWER, A100X), duration=420, export="samples",
    job=dict(samples_per_step=16384, workers=6, batch_s_per_worker=0.9, link_bw=120e9),
    knobs={"io_slow": pulses((200, 216), 6.0, 1.0, 100, 16)},
    note="Healthy: two-tower retrain on 4x A100 crossing an epoch boundary: loader workers are "
         "re-spawned and the first batches of the new shuffle take ~15 s, once.")
add("ok-torch-compile-warmup-h100", "lookalike", None, train, gpu="H100", ngpu=2, phases=TWOTOWER,
    duration=400, export="samples", job_start=75.0,
    job=dict(samples_per_step=8192, workers=8, batch_s_per_worker=0.5, link_bw=150e9),
    knobs={"host_extra": lambda t: 2.0 if t < 75 else 0.0, "compute_factor": lambda t: 3.0 if 75 <= t < 100 else 1.0},
    note="Healthy: job start with torch.compile: 75 s of compilation on the CPU with the GPU idle, "
         "then slow first steps while shapes recompile, then steady.")
add("ok-grad-accumulation-dlrm-h100", "lookalike", None, train, gpu="H100", ngpu=8, phases=DLRM,
    duration=400, export="samples",
    job=dict(samples_per_step=4 * 65536, workers=8, batch_s_per_worker=0.4, link_bw=180e9, accum=4),
    note="Healthy: DLRM with gradient accumulation over 4 micro-batches; every 4th step carries the "
         "all-reduce and optimizer, so steps are uneven.")
add("ok-rl-rollouts-and-updates-h100", "lookalike", None, train, gpu="H100", ngpu=4, phases=LORA,
    duration=420, export="tokens",
    job=dict(tokens_per_step=4 * 8 * 4096, workers=2, batch_s_per_worker=0.1, link_bw=150e9,
             rl_rollout_s=35, rl_update_steps=40),
    note="Healthy: GRPO-style RL on the assistant: 35-s rollout phases (generation, memory-bound) "
         "alternate with update phases (compute-bound).")
add("ok-notebook-idle-holding-memory-a6000", "lookalike", None, service, gpu="A6000", duration=400,
    mem=31 * GiB, pod="", cmd="/opt/conda/bin/python -m ipykernel_launcher -f kernel-3a.json",
    label="ipykernel_launcher",
    svc=dict(rate=lambda t: 0.05, kernels=200, item_s=0.02, fixed_s=0.4, sm=0.9, tensor=0.5, dram=0.4,
             max_batch=1),
    note="Healthy: a data scientist's notebook holding 31 GiB with occasional cells; GPU mostly "
         "idle, memory held.")
add("ok-description-lane-saturated-h100", "lookalike", None, serve, gpu="H100", model=M8B,
    rate=lambda t: 40.0, duration=420, scrape_s=5,
    maker=chat_maker((700, 0.3, 200, 2000), (700, 0.3, 200, 1600)),
    gate=lambda eng: len(eng.running) + len(eng.waiting) < 96,
    note="Healthy: the product-description batch lane keeps 96 requests in flight (closed loop); "
         "the GPU is saturated by design, queue steady, no preemptions.")
add("ok-long-outputs-context-growth-l40s", "lookalike", None, serve, gpu="L40S", model=M8B,
    rate=lambda t: 0.05, duration=420, scrape_s=5,
    maker=chat_maker((500, 0.3, 200, 1000), (3000, 0.1, 2000, 4000)),
    inject=[Req(500000 + i, 60 + (i % 40) * 0.2 + (i // 40) * 170, 600, 3200) for i in range(80)],
    note="Healthy: two waves of 40 long product-description generations; step time grows as their "
         "contexts grow, then drops as they finish.")


def _restart(env, eng, procs, t_down=150.0, t_up=205.0):
    def down(e):
        eng.up = False
        eng.running.clear()
        eng.waiting.clear()
        eng.free_blocks = eng.cfg.num_blocks
    def up(e):
        eng.up = True
        eng.t = max(eng.t, t_up + 25)
        for k in eng.c:
            eng.c[k] = 0.0
        for h in eng.h.values():
            h.counts = [0] * len(h.counts)
            h.n, h.sum = 0, 0.0
        eng.wl.next_t = max(eng.wl.next_t, t_up + 25)
    env.events += [(t_down, down), (t_up, up)]
    new = []
    for p in procs:
        p.alive = (p.alive[0], t_down + 2)
        from dataclasses import replace
        q = replace(p, pid=p.pid + 400, ppid=p.ppid + 400 if p.ppid > 1 else 1, start=t_down + 8,
                    alive=(t_down + 8, 1e18), cpu_s=0.0)
        if q.gpu is not None:
            full = q.mem
            q.mem = (lambda full: lambda t: full * min(1.0, max(0.02, (t - t_down - 10) / 30)))(full)
        new.append(q)
    procs += new
    # weights loading and graph capture: bursts on the GPU before serving
    for g in eng.cfg.gpus:
        k = t_up
        while k < t_up + 25:
            env.act.add(g, k, k + 0.3, 0.5, 0.2, 0.5)
            k += 0.8


add("ok-server-restart-warmup-h200", "lookalike", None, serve, gpu="H200", model=M8B,
    rate=lambda t: 4.0, duration=420, scrape_s=5, restart=_restart,
    note="Healthy: planned restart of the assistant for a config roll-out: the engine exits, the new "
         "one loads weights, captures graphs and warms its prefix cache; scrapes fail meanwhile.")
add("ok-evening-peak-sglang-h200", "lookalike", None, serve, kind="sglang", gpu="H200", model=QWEN7,
    rate=lambda t: 3.0 + 6.0 * min(1.0, t / 400), duration=480, scrape_s=5, tick=2.0,
    note="Healthy: the daily evening peak: traffic triples over eight minutes; the engine keeps up, "
         "tokens/s follows demand.")
add("ok-midnight-sale-surge-70b-h200", "lookalike", None, serve, gpu="H200", ngpu=2, tp=2,
    model=M70B, rate=lambda t: 1.0 if t < 180 else 3.2, duration=420, scrape_s=5,
    maker=chat_maker((1500, 0.5, 64, 6000), (250, 0.5, 8, 1000)),
    note="Healthy: 00:00, the sale opens; planned surge to 3x the traffic within seconds; TTFT rises "
         "briefly, queue drains, no preemptions.")
add("ok-rack-power-capped-by-design-h100", "lookalike", None, train, gpu="H100", ngpu=8,
    phases=[("c", 0.9, 0.97, 0.85, 0.3, 0.02), ("coll", 6e9, "ar"), ("opt", 0.04, 0.6, 0.0, 0.85, 0.05)],
    duration=400, export="tokens", host={"power_limit": 600.0},
    job=dict(tokens_per_step=8 * 16 * 2048, workers=4, batch_s_per_worker=0.4, link_bw=160e9),
    note="Healthy: image-text encoder pre-training on 8x H100 in a rack budgeted at 600 W per GPU; "
         "dense matmuls sit on the power cap ('power cap' set) all the time, as designed.")
add("ok-warm-aisle-within-limits-l40s", "lookalike", None, service, gpu="L40S", ngpu=4,
    duration=400, tick=2.0, mem=30 * GiB, pod="search/text-embedder-2", cmd="python3 -m embed_server --model e5-large",
    label="embed_server", host={"inlet": 36.0},
    svc=dict(rate=lambda t: 550.0, kernels=60, item_s=0.00052, fixed_s=0.002, sm=0.92, tensor=0.6,
             dram=0.35, max_batch=128),
    note="Healthy: the warm aisle (36 C inlet) during the heat wave; the L40S run in the high 70s, "
         "below slowdown, clocks steady.")
add("ok-ddp-allreduce-waits-a100", "lookalike", None, train, gpu="A100", ngpu=8,
    phases=scale(TWOTOWER, A100X), duration=400, export="samples",
    job=dict(samples_per_step=32768, workers=6, batch_s_per_worker=0.9, link_bw=120e9, noise=0.05),
    note="Healthy: data-parallel two-tower on 8x A100: each step some rank is a few percent late "
         "and the others wait briefly at the all-reduce, as always.")
add("ok-ad-creative-bursty-l40s", "lookalike", None, service, gpu="L40S", duration=420,
    mem=26 * GiB, pod="ads/creative-gen-0", cmd="python3 -m diffusers_server --model sdxl",
    label="diffusers_server",
    svc=dict(rate=lambda t: 0.25 if int(t / 60) % 2 == 0 else 0.03, kernels=1500, item_s=3.2,
             fixed_s=0.2, sm=0.95, tensor=0.7, dram=0.3, max_batch=4),
    note="Healthy: the ad-creative generator renders in bursts when campaign jobs arrive; GPU swings "
         "between saturated and idle.")
add("ok-embedding-lookups-dram-hard-h100", "lookalike", None, train, gpu="H100", ngpu=8,
    phases=[("c", 0.07, 0.72, 0.05, 0.9, 0.05), ("coll", 0.5e9, "a2a"), ("c", 0.03, 0.9, 0.55, 0.3, 0.03),
            ("coll", 0.3e9, "ar"), ("opt", 0.02, 0.6, 0.0, 0.88, 0.1)],
    duration=400, export="samples",
    job=dict(samples_per_step=65536, workers=8, batch_s_per_worker=0.4, link_bw=180e9),
    note="Healthy: DLRM with huge embedding tables; lookups read HBM hard (DRAM ~80%) every step, "
         "as they always do.")
add("ok-llamacpp-interactive-4090", "lookalike", None, serve, gpu="RTX4090", kind="llamacpp",
    model=LLAMA8Q4, rate=lambda t: 0.12, duration=400, scrape_s=2, util=0.6, block=256,
    maker=chat_maker((700, 0.6, 50, 3000), (350, 0.5, 30, 1000)),
    note="Healthy: llama-server on a workstation used interactively; idle gaps between questions.")
add("ok-tgi-support-bot-a10g", "lookalike", None, serve, kind="tgi", gpu="A10G", model=MISTRAL7,
    rate=lambda t: 0.8, duration=400, scrape_s=10, util=0.92,
    maker=chat_maker((700, 0.5, 50, 2500), (180, 0.5, 8, 600)),
    note="Healthy: the legacy TGI support bot at its usual load.")
add("ok-query-rewrite-steady-l4", "lookalike", None, serve, gpu="L4", model=REWRITE,
    rate=lambda t: 10.0, duration=400, scrape_s=15, tick=2.0,
    maker=chat_maker((150, 0.4, 16, 500), (40, 0.5, 4, 150)),
    note="Healthy: query rewriting on an L4 at steady QPS; 15-s scrapes.")
add("ok-hparam-sweep-trials-a100", "lookalike", None, train, gpu="A100", ngpu=1,
    phases=scale(SINGLE, A100X), duration=420, export="samples", mem_frac=0.6,
    job=dict(samples_per_step=4096, workers=6, batch_s_per_worker=0.3, ckpt_every_s=130, ckpt_s=14,
             ckpt_first_s=120),
    label="ray::ImplicitFunc.train", cmd="ray::ImplicitFunc.train (tune sweep ranker-lr)",
    note="Healthy: a Ray Tune sweep; between trials the worker reports, saves and builds the next "
         "model (~15 s of idle GPU).")
add("ok-nightly-retrain-finishes-h100", "lookalike", None, train, gpu="H100", ngpu=4, phases=TWOTOWER,
    duration=420, export="samples", job_end=260.0, alive_end=268.0,
    job=dict(samples_per_step=16384, workers=8, batch_s_per_worker=0.5, link_bw=150e9),
    note="Healthy: the nightly incremental retrain finishes at 05:40, before traffic rises; the "
         "processes exit and the GPUs go idle.")
add("ok-spec-decode-content-mix-h100", "lookalike", None, serve, gpu="H100", model=M8B,
    rate=lambda t: 4.0, duration=420, scrape_s=5,
    cfg=dict(spec_k=3, spec_alpha=0.68, draft_frac=0.09),
    knobs={"spec_alpha": lambda t: 0.66 + 0.08 * __import__("math").sin(t / 45.0)},
    note="Healthy: speculative decoding whose acceptance drifts 58-74% with the mix of questions.")
