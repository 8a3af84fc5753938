"""One builder per trace, with its truth.  Each fault changes the physics (a clock, the bytes
a kernel reads, the traffic, the host's load); every reading follows from the simulation."""
from __future__ import annotations
from dataclasses import dataclass, replace

from corpus_ak.run import Host, Scn, ramp, seed_of
from corpus_ak.run_serve import run_serving
from corpus_ak.run_train import run_training
from corpus_ak.serve import MODELS, EngineCfg, Traffic


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


def M(k):
    return MODELS[k]


# ------------------------------------------------------------------ traffic shapes
def chat(rate, cached=0.5, p=1100, o=350):
    return Traffic("chat", rate, (p, 0.8, 16000), (o, 0.8, 4000), cached)


def reasoning(rate, cached=0.3, o=3500):
    return Traffic("reasoning", rate, (900, 0.7, 8000), (o, 0.7, 32000), cached)


def agent(rate, cached=0.85, p=30000):
    return Traffic("agent", rate, (p, 0.45, 120000), (450, 0.6, 4000), cached, session=True)


def embed(rate):
    return Traffic("embed", rate, (180, 0.6, 512), (1, 0, 1), 0.0, embed=True)


def at(t0, v0, v1):
    return lambda t, *a: v1 if t >= t0 else v0


def on(a, b, v1, v0=None):
    return lambda t, *a_: v1 if a <= t < b else v0


def gpu_on(g0, a, b, v1, v0=None):
    return lambda t, g=None: v1 if (g == g0 and a <= t < b) else v0


# ------------------------------------------------------------------ the catalogue
SPECS: list[dict] = []


def add(name, family, cause, engine, note, scn, window=None, culprit=None, window_from=None):
    SPECS.append(dict(name=name, family=family, cause=cause, engine=engine, note=note, scn=scn,
                      window=window, culprit=culprit, window_from=window_from))


def S(name, gpu, n, dur, model, kind="vllm", tp=1, dp=1, traffic=(), tick=1.0, scrape=5.0, cfg=None, **kw):
    c = EngineCfg(kind=kind, model=M(model), tp=tp, **(cfg or {}))
    return Scn(name=name, gpu=gpu, n_gpus=n, duration=dur, tick=tick, scrape=scrape, engine_kind=kind,
               cfg=c, dp=dp, traffic=list(traffic), **kw)


def TR(name, gpu, n, dur, tick=1.0, scrape=5.0, **train):
    base = dict(step_s=0.8, comm_s=0.12, load_s=0.2, tokens=n * 8 * 4096, workers=4, mem_gb=62)
    base.update(train)
    host = base.pop("host", Host(cores=96))
    scn_kw = {k: base.pop(k) for k in list(base) if k in ("inlet", "limit", "brake", "mystery", "r_th", "ebpf")}
    return Scn(name=name, gpu=gpu, n_gpus=n, duration=dur, tick=tick, scrape=scrape, engine_kind="trainer",
               train=base, host=host, **scn_kw)


def throttled(frames, gpus=None, start=0.0):
    """The span of ticks where the clock in effect is cut (a reason set or the clock < 93%)."""
    ts = []
    for f in frames:
        for g in f.gpus:
            if gpus is not None and g.index not in gpus:
                continue
            if f.time_wall_s - frames[0].time_wall_s < start:
                continue
            spec_max = max(x.sm_clock_mhz or 0 for x in frames[0].gpus) or 1
            if g.throttle and any(r != "power cap" for r in g.throttle) or (g.sm_clock_mhz or 0) < 0.93 * 1980 * (spec_max / 1980):
                ts.append(f.time_wall_s - frames[0].time_wall_s)
                break
    return (min(ts), max(ts)) if ts else None


# ================================================================== pathologies
# ---- memory_bandwidth
add("mb-awq-dequant-fallback-70b-h100", "serving", "memory_bandwidth", "vllm",
    "70B AWQ endpoint 40% slower since the 14:10 image roll: the Marlin kernel refused the new group size and the "
    "fallback dequantises to bf16 in HBM each step; DRAM pinned, ITL up for everyone.",
    S("mb-awq-dequant-fallback-70b-h100", "H100", 2, 420, "llama70b-awq", tp=2, traffic=[chat(1.8), reasoning(0.18)],
      bytes_mult=at(130, 1.0, 2.3), scrape=5), window=(130, 420))
add("mb-longctx-decode-large-batch-h200", "serving", "memory_bandwidth", "vllm",
    "Batch-lane customer raised concurrency with 24k-token cached contexts: decode at batch ~100 reads the KV of "
    "2M tokens each step; HBM-bound, ITL p99 2x.",
    S("mb-longctx-decode-large-batch-h200", "H200", 1, 400, "qwen32b", traffic=[chat(1.5),
      Traffic("longctx", at(120, 0.0, 0.08), (24000, 0.2, 40000), (1200, 0.5, 6000), 0.97)], scrape=2,
      cfg=dict(max_seqs=256)), window=(130, 400))
add("mb-gptq-actorder-mild-a100", "serving", "memory_bandwidth", "vllm",
    "Mild: the new GPTQ act-order checkpoint gathers scales out of order; the memory controller is busier and "
    "tokens/s is ~25% lower than the previous revision at the same load.",
    S("mb-gptq-actorder-mild-a100", "A100", 1, 380, "qwen32b-gptq", traffic=[chat(1.6)], bytes_mult=at(140, 1.0, 1.5),
      scrape=10, tick=2.0), window=(140, 380))
add("mb-moe-expert-layout-fallback-b200", "serving", "memory_bandwidth", "sglang",
    "MoE reasoning model on B200: after the weight re-shard the grouped-GEMM path was skipped and each step streams "
    "the expert weights twice; DRAM activity pinned, tokens/s down.",
    S("mb-moe-expert-layout-fallback-b200", "B200", 8, 400, "reason-moe", kind="sglang", tp=8,
      traffic=[reasoning(1.2), chat(2.0)], bytes_mult=at(150, 1.0, 2.2), scrape=3), window=(150, 400))

# ---- throttling
add("thr-heatwave-afternoon-h100x8", "thermal", "throttling", "vllm",
    "Heatwave DC, 15:00: cold-aisle inlet rose ~14 C over minutes; all eight GPUs reach the slowdown temperature, "
    "clocks fall together and the 70B endpoint slows. Slow onset.",
    S("thr-heatwave-afternoon-h100x8", "H100", 8, 480, "llama70b", tp=8, traffic=[chat(5.0), reasoning(0.6)],
      inlet=lambda t, g=None: ramp(t, 100, 280, 27.0, 57.0 + (g or 0) % 3), scrape=5),
    window_from=lambda fr: throttled(fr))
add("thr-power-brake-capped-row-h200x4", "power", "throttling", "vllm",
    "Capped rack row: the PDU asserted the power brake under load at 11:42; all four GPUs drop to ~55% clocks for "
    "three minutes.",
    S("thr-power-brake-capped-row-h200x4", "H200", 4, 420, "qwen32b", tp=4, traffic=[chat(6.0), reasoning(0.8)],
      brake=on(150, 330, 0.55), scrape=5), window=(150, 330))
add("thr-fan-failed-l40s", "thermal", "throttling", "vllm",
    "L40S cheap-tier box: the GPU's fan bearing failed; temperature climbs to slowdown and the clock is cut.",
    S("thr-fan-failed-l40s", "L40S", 1, 480, "llama8b", traffic=[chat(2.5)], r_th=at(100, 1.0, 2.1),
      inlet=30.0, scrape=5), window_from=lambda fr: throttled(fr, start=100))
add("thr-a100-power-limit-lowered-mild", "power", "throttling", "tgi",
    "Mild: a facilities change set the A100's power limit to 250 W; under load it sits on the cap at lower clocks.",
    S("thr-a100-power-limit-lowered-mild", "A100", 1, 380, "qwen14b", kind="tgi", traffic=[chat(2.6, cached=0.0, o=300)],
      limit=at(140, 400.0, 215.0), scrape=10, cfg=dict(prefix_cache=False, max_seqs=128, budget=4096)),
    window=(140, 380))

# ---- prefill_interference
add("pi-100k-prompt-template-h100", "serving", "prefill_interference", "vllm",
    "A popular customer's new prompt template sends 100k-token prompts among short chats: chunked prefill shares "
    "every step with them; ITL for everyone 2-3x, TTFT 300 ms -> 4 s.",
    S("pi-100k-prompt-template-h100", "H100", 2, 420, "llama70b-fp8", tp=2, traffic=[chat(5.0),
      Traffic("template", at(130, 0.0, 0.035), (100000, 0.1, 120000), (300, 0.5, 2000), 0.0)], scrape=5,
      cfg=dict(max_model_len=131072)), window=(130, 420))
add("pi-system-prompt-timestamp-h200", "serving", "prefill_interference", "vllm",
    "A release put the current time into the 6k-token system prompt: prefix-cache hits collapse, every request "
    "prefills from scratch and decode slows for all.",
    S("pi-system-prompt-timestamp-h200", "H200", 1, 400, "qwen32b", traffic=[Traffic("assistant", 3.0, (6500, 0.3, 20000), (300, 0.7, 3000), at(140, 0.9, 0.02))],
      scrape=5), window=(140, 400))
add("pi-tgi-no-chunking-rag-mild-a100", "serving", "prefill_interference", "tgi",
    "Mild, legacy tier: a RAG customer's 12k-token prompts on TGI without chunked prefill; each prefill stops all "
    "decodes for its whole length, so streams stutter.",
    S("pi-tgi-no-chunking-rag-mild-a100", "A100", 1, 380, "llama8b", kind="tgi", traffic=[chat(4.0, cached=0.0),
      Traffic("rag", at(130, 0.0, 0.12), (12000, 0.2, 20000), (250, 0.5, 1000), 0.0)],
      cfg=dict(chunked=False, prefix_cache=False), scrape=10, tick=2.0), window=(130, 380))
add("pi-agent-cold-contexts-sglang-h100", "serving", "prefill_interference", "sglang",
    "Agent customer started a new run: 60k-token contexts with no cache hits stream in; the radix cache is cold and "
    "prefill crowds out decode for the chat traffic on the same replica.",
    S("pi-agent-cold-contexts-sglang-h100", "H100", 1, 400, "llama8b", kind="sglang", traffic=[chat(7.0),
      Traffic("agent-cold", on(130, 330, 0.1, 0.0), (60000, 0.2, 120000), (400, 0.5, 3000), 0.0)], scrape=2,
      cfg=dict(max_model_len=131072)), window=(130, 330))

# ---- tiny_kernels
def _set(**kw):
    def f(engines):
        for e in engines:
            for k, v in kw.items():
                setattr(e.c, k, v)
    return f


add("tk-embed-pool-eager-bs1-h100", "serving", "tiny_kernels", "vllm",
    "Embedding pool redeployed with enforce-eager and max batch 1 by a bad values file: GPU-Util stays ~90% but "
    "each kernel fills a few SMs; throughput per GPU collapses.",
    S("tk-embed-pool-eager-bs1-h100", "H100", 1, 380, "embed", traffic=[embed(120.0)], scrape=5,
      cfg=dict(max_seqs=64, budget=16384, max_model_len=512), tiny=at(130, None, 0.07),
      at=[(130, _set(graphs=False, max_seqs=1))]), window=(130, 380))
add("tk-guard-classifier-graph-replay-h200", "serving", "tiny_kernels", "vllm",
    "Safety classifier (1B) switched to one-request-at-a-time calls: CUDA-graph replay of tiny kernels reads 100% "
    "GPU-Util with SM activity a sliver.",
    S("tk-guard-classifier-graph-replay-h200", "H200", 1, 360, "guard", traffic=[Traffic("cls", 40.0, (600, 0.4, 2000), (4, 0.2, 8), 0.3)],
      scrape=5, tiny=at(140, None, 0.05), at=[(140, _set(max_seqs=1))]), window=(140, 360))
add("tk-reranker-unbatched-b200", "serving", "tiny_kernels", "vllm",
    "Reranker pool on B200: the client library stopped batching pairs, so every call is one short pair; busy GPU, "
    "SMs nearly idle.",
    S("tk-reranker-unbatched-b200", "B200", 1, 360, "rerank", traffic=[embed(150.0)], scrape=5,
      cfg=dict(max_seqs=128, budget=32768, max_model_len=1024), tiny=at(125, None, 0.06),
      at=[(125, _set(max_seqs=1, graphs=False))]), window=(125, 360))
add("tk-eager-fallback-small-batch-mild-h100", "serving", "tiny_kernels", "vllm",
    "Mild: after the upgrade the 8B replica fell back to eager mode (graph capture failed silently); at its small "
    "batch each decode is hundreds of short launches; SM activity down by a third.",
    S("tk-eager-fallback-small-batch-mild-h100", "H100", 1, 380, "llama8b", traffic=[chat(1.2, o=250)], scrape=5,
      tiny=at(140, None, 0.32), at=[(140, _set(graphs=False))]), window=(140, 380))

# ---- host_cpu_contention
add("hcc-two-cpu-quota-tp8-h100", "host", "host_cpu_contention", "vllm",
    "Platform rollout set the inference pod's CPU limit to 2 cores for an 8-GPU engine: CFS throttles it every "
    "period, the scheduler thread stalls and GPUs idle between steps.",
    S("hcc-two-cpu-quota-tp8-h100", "H100", 8, 400, "llama70b", tp=8, traffic=[chat(5.0), reasoning(0.5)], scrape=5,
      host=Host(cores=112, quota=at(130, 24.0, 2.0))), window=(130, 400))
add("hcc-log-shipper-eats-cores-h200", "host", "host_cpu_contention", "vllm",
    "The log shipper's backlog replay spawned ~90 busy threads on a 64-core host: run queue and CPU pressure jump, "
    "the engine's scheduler is preempted, ITL rises.",
    S("hcc-log-shipper-eats-cores-h200", "H200", 1, 400, "qwen32b", traffic=[chat(3.5)], scrape=5,
      host=Host(cores=64, other=on(140, 330, 150.0, 2.0))), window=(140, 330))
add("hcc-grammar-compile-threads-h100", "host", "host_cpu_contention", "sglang",
    "A JSON-schema customer's traffic makes the grammar backend compile on every host core; the engine's scheduler "
    "loses CPU and steps slow down.",
    S("hcc-grammar-compile-threads-h100", "H100", 1, 380, "llama8b", kind="sglang", traffic=[chat(6.0)], scrape=2,
      cfg=dict(grammar_s=2e-5), host=Host(cores=48, other=at(130, 1.5, 110.0))), window=(130, 380))
add("hcc-antivirus-scan-mild-a100", "host", "host_cpu_contention", "vllm",
    "Mild: the weekly security scan runs on the A100 embedding/chat box (32 cores) and takes most of them for a few "
    "minutes.",
    S("hcc-antivirus-scan-mild-a100", "A100", 1, 380, "llama8b", traffic=[chat(5.0)], scrape=5,
      host=Host(cores=32, other=on(140, 340, 48.0, 1.0))), window=(140, 340))

# ---- input_stall (training)
add("is-nfs-slow-dataloader-h100x4", "training", "input_stall", "trainer",
    "Customer LoRA fine-tune reads shards from the shared NFS; the filer degraded and each batch waits >1 s for "
    "reads; GPUs idle between steps.",
    TR("is-nfs-slow-dataloader-h100x4", "H100", 4, 400, step_s=0.8, load_s=at(130, 0.25, 1.7)), window=(130, 400))
add("is-tokenize-workers-mild-a100x2", "training", "input_stall", "trainer",
    "Mild: a new dataset is tokenised on the fly with two loader workers; each step waits ~0.3 s for its batch.",
    TR("is-tokenize-workers-mild-a100x2", "A100", 2, 380, step_s=0.75, load_s=at(140, 0.3, 0.98), workers=2,
       loader_cpu=0.95, host=Host(cores=64), tick=2.0, scrape=10), window=(140, 380))
add("is-image-decode-vlm-l40s", "training", "input_stall", "trainer",
    "VLM fine-tune on one L40S: the new image set is full-size JPEG, decoding on 4 workers cannot keep up.",
    TR("is-image-decode-vlm-l40s", "L40S", 1, 380, step_s=0.5, comm_s=0.0, load_s=at(120, 0.12, 1.0), loader_cpu=1.0,
       host=Host(cores=16), mem_gb=38, tokens=8 * 1024), window=(120, 380))
add("is-distill-teacher-logits-intermittent-h200x8", "training", "input_stall", "trainer",
    "Distillation run streams teacher logits from object storage; the store throttles the bucket in bursts, so "
    "steps stall for 20-40 s at a time (intermittent).",
    TR("is-distill-teacher-logits-intermittent-h200x8", "H200", 8, 480, step_s=1.1, comm_s=0.15,
       load_s=lambda t, g=None: 2.8 if (150 <= t < 185 or 240 <= t < 280 or 330 <= t < 360) else 0.3, mem_gb=110),
    window=(150, 360))

# ---- collective_straggler
add("cs-nvlink-degraded-rank5-fsdp-h100x8", "training", "collective_straggler", "trainer",
    "FSDP full fine-tune: GPU 5's NVLink trained down to a fraction of its lanes after a reset; every all-gather and "
    "reduce-scatter waits on it.",
    TR("cs-nvlink-degraded-rank5-fsdp-h100x8", "H100", 8, 400, step_s=0.9, comm_s=0.14,
       link_slow=gpu_on(5, 130, 1e9, 4.5, 1.0)), window=(130, 400), culprit=(5,))
add("cs-mystery-clock-tp8-h200", "serving", "collective_straggler", "vllm",
    "TP8 reasoning endpoint: GPU 3's SM clock fell to ~1.1 GHz with no throttle reason reported; the other seven "
    "wait for it in every all-reduce.",
    S("cs-mystery-clock-tp8-h200", "H200", 8, 400, "reason-moe", tp=8, traffic=[reasoning(1.5), chat(3.0)], scrape=5,
      mystery=gpu_on(3, 140, 1e9, 0.55)), window=(140, 400), culprit=(3,))
add("cs-fan-failed-gpu1-tp4-h100", "serving", "collective_straggler", "vllm",
    "One GPU of a TP4 node lost its fan-wall airflow: GPU 1 heats to slowdown and its clock falls; the engine steps "
    "at its pace.",
    S("cs-fan-failed-gpu1-tp4-h100", "H100", 4, 460, "llama70b", tp=4, traffic=[chat(4.0)], scrape=5,
      r_th=gpu_on(1, 90, 1e9, 1.9, 1.0), inlet=32.0), window_from=lambda fr: throttled(fr, gpus=(1,), start=90), culprit=(1,))
add("cs-stuck-collective-rank6-h100x8", "training", "collective_straggler", "trainer",
    "Distillation job hung: rank 6 stopped in its data path and never entered the all-reduce; the other seven spin "
    "in NCCL at 100% GPU-Util with no progress.",
    TR("cs-stuck-collective-rank6-h100x8", "H100", 8, 360, step_s=0.9, hang=gpu_on(6, 150, 1e9, True, False)),
    window=(150, 360), culprit=(6,))

# ---- oversized_request
add("os-n8-logprobs-request-h100", "serving", "oversized_request", "vllm",
    "One customer's eval harness sends n=8, logprobs=20 requests; while one runs the whole batch's ITL doubles.",
    S("os-n8-logprobs-request-h100", "H100", 1, 380, "llama8b", traffic=[chat(4.0),
      Traffic("eval", on(130, 250, 0.06, 0.0), (512, 0.1, 1000), (600, 0.1, 800), 0.0, n=8, logprobs=20)], scrape=2),
    window=(130, 280))
add("os-beam-search-huge-max-tokens-a100", "serving", "oversized_request", "vllm",
    "A request with beam width 8 and max_tokens 16k on the A100 tier: eight growing beams share the batch and "
    "stretch every step until it finishes.",
    S("os-beam-search-huge-max-tokens-a100", "A100", 1, 400, "llama8b", traffic=[chat(3.0),
      Traffic("beam", on(140, 141, 1.0, 0.0), (2000, 0.01, 3000), (14000, 0.01, 16000), 0.0, beam=8)], scrape=5),
    window=(140, 400))
add("os-prompt-fills-pool-h200", "serving", "oversized_request", "vllm",
    "A 120k-token prompt on a replica whose KV pool holds 160k tokens: it takes most of the pool, the short chats "
    "queue behind it and TTFT jumps for a minute.",
    S("os-prompt-fills-pool-h200", "H200", 1, 380, "qwen32b", traffic=[chat(3.0),
      Traffic("huge", on(140, 141, 1.0, 0.0), (120000, 0.01, 125000), (2500, 0.01, 3000), 0.0)], scrape=2,
      cfg=dict(pool_tokens=160000, max_model_len=131072)), window=(140, 300))
add("os-giant-document-sglang-mild-l40s", "serving", "oversized_request", "sglang",
    "Mild: a single 60k-token document summarisation on the L40S tier; its prefill and long decode slow the other "
    "streams for a while.",
    S("os-giant-document-sglang-mild-l40s", "L40S", 1, 380, "llama8b", kind="sglang", traffic=[chat(1.5),
      Traffic("doc", on(150, 151, 1.0, 0.0), (60000, 0.01, 62000), (3000, 0.01, 3500), 0.0)], scrape=2,
      cfg=dict(max_model_len=131072)), window=(150, 260))

# ---- kv_pressure
add("kv-chat-pool-reasoning-outputs-h100", "serving", "kv_pressure", "vllm",
    "Replica sized for chat (small pool, many seqs) given the new reasoning model's 8k-token outputs: the pool fills, "
    "requests are preempted and recomputed.",
    S("kv-chat-pool-reasoning-outputs-h100", "H100", 1, 420, "qwen32b", traffic=[chat(3.0), reasoning(at(120, 0.0, 0.6), o=8000)],
      scrape=5, cfg=dict(pool_tokens=180000)), window=(150, 420))
add("kv-sticky-router-agents-sglang-h200", "serving", "kv_pressure", "sglang",
    "Router switched to sticky sessions: every long agent conversation lands on replica 0; its pool fills and "
    "requests are retracted while replica 1 is half empty.",
    S("kv-sticky-router-agents-sglang-h200", "H200", 2, 420, "qwen32b", kind="sglang", dp=2,
      traffic=[chat(3.0), agent(0.35, p=40000, cached=0.9)], router=at(140, "rr", "sticky"), scrape=5,
      cfg=dict(pool_tokens=300000, max_model_len=131072)), window=(140, 420), culprit=None)
add("kv-pool-mild-l40s-tp2", "serving", "kv_pressure", "vllm",
    "Mild: an L40S pair's pool (TP2, 8B) with the longer outputs of a new customer: occasional preemptions and a "
    "short waiting queue.",
    S("kv-pool-mild-l40s-tp2", "L40S", 2, 400, "llama8b", tp=2, traffic=[chat(2.0), reasoning(at(130, 0.0, 0.25), o=5000)],
      scrape=5, cfg=dict(pool_tokens=70000)), window=(150, 400))

# ---- gpu_shared
add("gs-notebook-on-engine-gpu-h100", "shared", "gpu_shared", "vllm",
    "A researcher's notebook was scheduled onto the engine's GPU (no device isolation): its kernels time-slice with "
    "the engine's.",
    S("gs-notebook-on-engine-gpu-h100", "H100", 1, 380, "llama8b", traffic=[chat(4.0)], scrape=5,
      shared=on(140, 340, 0.7, None)), window=(140, 340))
add("gs-second-tenant-gpu1-dp2-a100", "shared", "gpu_shared", "vllm",
    "DP2 8B on two A100s: a second tenant's batch job landed on GPU 1; replica 1's steps stretch.",
    S("gs-second-tenant-gpu1-dp2-a100", "A100", 2, 380, "llama8b", dp=2, traffic=[chat(7.0)], scrape=5,
      shared=gpu_on(1, 130, 1e9, 0.8)), window=(130, 380), culprit=(1,))
add("gs-eval-job-gpu0-mild-h200x2", "shared", "gpu_shared", "sglang",
    "Mild: a small evaluation script shares GPU 0 of a DP2 SGLang node.",
    S("gs-eval-job-gpu0-mild-h200x2", "H200", 2, 380, "qwen14b", kind="sglang", dp=2, traffic=[chat(8.0)], scrape=5,
      shared=gpu_on(0, 140, 1e9, 0.35)), window=(140, 380), culprit=(0,))

# ---- spec_decode_rejected
add("sd-eagle-head-stale-after-update-h100", "serving", "spec_decode_rejected", "vllm",
    "The 70B checkpoint was updated but the EAGLE head was not retrained: acceptance falls from 0.75 to 0.15 and each "
    "token costs more than without speculation.",
    S("sd-eagle-head-stale-after-update-h100", "H100", 2, 400, "llama70b-fp8", tp=2, traffic=[chat(3.0)], scrape=5,
      cfg=dict(spec_k=3, spec_kind="eagle"), accept=at(140, 0.75, 0.13), restart_at=110, restart_s=25),
    window=(140, 400))
add("sd-ngram-mild-sglang-h200", "serving", "spec_decode_rejected", "sglang",
    "Mild: n-gram speculation tuned on code; a new customer's prose traffic halves acceptance.",
    S("sd-ngram-mild-sglang-h200", "H200", 1, 380, "qwen32b", kind="sglang", traffic=[chat(2.0)], scrape=5,
      cfg=dict(spec_k=4, spec_kind="ngram"), accept=at(140, 0.62, 0.3)), window=(140, 380))
add("sd-mtp-mismatch-b200", "serving", "spec_decode_rejected", "vllm",
    "MTP heads of the reasoning MoE were loaded from the previous revision: acceptance 0.85 -> 0.2.",
    S("sd-mtp-mismatch-b200", "B200", 8, 400, "reason-moe", tp=8, traffic=[reasoning(1.5)], scrape=5,
      cfg=dict(spec_k=2, spec_kind="mtp"), accept=at(150, 0.85, 0.2)), window=(150, 400))

# ---- host_launch_jitter
add("hlj-irq-on-launch-core-train-h100x2", "host", "host_launch_jitter", "trainer",
    "A NIC's interrupts were re-steered onto the cores of the trainer's launch threads: eager launches are preempted "
    "for milliseconds and the GPU runs dry between kernels.",
    TR("hlj-irq-on-launch-core-train-h100x2", "H100", 2, 380, step_s=0.6, kernels_per_step=4000, ebpf=True,
       host=Host(cores=96, jitter=at(130, 0.0, 0.012), jitter_ms=2.5)), window=(130, 380))
add("hlj-eager-vllm-rt-task-l40s", "host", "host_launch_jitter", "vllm",
    "An eager-mode 8B replica on L40S: a real-time-priority monitoring agent wakes on the launcher's core; launch "
    "calls wait milliseconds (eBPF), tokens/s falls.",
    S("hlj-eager-vllm-rt-task-l40s", "L40S", 1, 380, "llama8b", traffic=[chat(2.0)], scrape=5, ebpf=True,
      cfg=dict(graphs=False), host=Host(cores=32, jitter=at(140, 0.0, 0.008), jitter_ms=2.0)), window=(140, 380))
add("hlj-llamacpp-cron-l4", "host", "host_launch_jitter", "llamacpp",
    "llama.cpp on an L4: a per-minute cron job pinned to core 0 preempts the server's launch thread; launch p99 goes "
    "to milliseconds.",
    S("hlj-llamacpp-cron-l4", "L4", 1, 380, "llama3b-q4", kind="llamacpp", traffic=[chat(0.3, cached=0.3, o=250)], scrape=5,
      ebpf=True, cfg=dict(graphs=False, max_seqs=4, prefix_cache=True, max_model_len=8192, async_sched=False),
      host=Host(cores=8, jitter=at(130, 0.0, 0.01), jitter_ms=3.0)), window=(130, 380))

# ================================================================== healthy look-alikes
add("ok-launch-day-ramp-h100x8", "lookalike", None, "vllm",
    "Launch day: the new reasoning model's traffic triples over five minutes; capacity holds.",
    S("ok-launch-day-ramp-h100x8", "H100", 8, 480, "reason-moe", tp=8, traffic=[reasoning(lambda t: ramp(t, 60, 360, 0.4, 1.2)),
      chat(lambda t: ramp(t, 60, 360, 1.0, 3.0))], scrape=5))
add("ok-evening-fall-h200", "lookalike", None, "vllm",
    "Evening: traffic falls to a third; tokens/s follows it down.",
    S("ok-evening-fall-h200", "H200", 1, 420, "qwen32b", traffic=[chat(lambda t: ramp(t, 90, 360, 3.5, 1.0))], scrape=5))
add("ok-reasoning-contexts-grow-h100", "lookalike", None, "vllm",
    "A wave of long reasoning requests: step time grows as their contexts grow, then falls as they finish.",
    S("ok-reasoning-contexts-grow-h100", "H100", 1, 420, "llama8b", traffic=[reasoning(on(60, 120, 0.3, 0.04), o=9000)], scrape=5))
add("ok-batch-lane-draining-h200", "lookalike", None, "vllm",
    "Batch lane's last long requests finish after the submission window closes; the GPU empties.",
    S("ok-batch-lane-draining-h200", "H200", 1, 420, "qwen32b", traffic=[Traffic("batch", on(0, 150, 0.7, 0.0), (3000, 0.5, 20000), (1500, 0.7, 12000), 0.2)], scrape=10, tick=2.0))
add("ok-night-batch-saturation-h100x2", "lookalike", None, "vllm",
    "Night batch lane: a fixed 96 concurrent offline requests keep the GPUs saturated at a steady rate.",
    S("ok-night-batch-saturation-h100x2", "H100", 2, 400, "llama70b-fp8", tp=2,
      traffic=[Traffic("batch", None, (2500, 0.5, 16000), (1200, 0.6, 8000), 0.3, conc=96)], scrape=10))
add("ok-replica-restart-warmup-h100", "lookalike", None, "vllm",
    "Rolling restart: the replica goes away for 40 s (same address) and warms its prefix cache afterwards.",
    S("ok-replica-restart-warmup-h100", "H100", 1, 420, "llama8b", traffic=[chat(4.0, cached=0.7)], scrape=5,
      restart_at=150, restart_s=40))
add("ok-prefix-hits-follow-mix-sglang-h200", "lookalike", None, "sglang",
    "Prefix-cache hit rate swings with the traffic mix (agent sessions vs new chats); latency stays normal.",
    S("ok-prefix-hits-follow-mix-sglang-h200", "H200", 1, 420, "qwen14b", kind="sglang",
      traffic=[Traffic("mix", 2.5, (3000, 0.5, 20000), (300, 0.7, 3000), lambda t: 0.5 + 0.35 * (1 if (t // 60) % 2 else -1))], scrape=2))
add("ok-new-customer-long-prompts-h100", "lookalike", None, "vllm",
    "A new customer with 3k-token prompts joins at moderate load; served at normal speed.",
    S("ok-new-customer-long-prompts-h100", "H100", 2, 400, "llama70b-fp8", tp=2, traffic=[chat(2.5),
      Traffic("newcust", at(150, 0.0, 0.8), (3000, 0.4, 8000), (350, 0.6, 2000), 0.4)], scrape=5))
add("ok-spec-acceptance-follows-text-h100", "lookalike", None, "vllm",
    "EAGLE acceptance moves between 0.6 and 0.8 with code vs prose traffic; normal.",
    S("ok-spec-acceptance-follows-text-h100", "H100", 2, 400, "llama70b-fp8", tp=2, traffic=[chat(3.0)], scrape=5,
      cfg=dict(spec_k=3, spec_kind="eagle"), accept=lambda t: 0.7 + 0.09 * (1 if (t // 45) % 2 else -1)))
add("ok-finetune-checkpoint-eval-h100x8", "lookalike", None, "trainer",
    "Full fine-tune with a sharded checkpoint every 60 steps and an eval pass every 100: GPUs idle for the write, "
    "lighter during eval.",
    TR("ok-finetune-checkpoint-eval-h100x8", "H100", 8, 480, step_s=0.9, ckpt_every=60, ckpt_s=22, eval_every=100, eval_s=15))
add("ok-always-capped-rack-h100x4", "lookalike", None, "vllm",
    "Rack row permanently capped at 450 W per GPU: 'power cap' is always set under load, clocks steady.",
    S("ok-always-capped-rack-h100x4", "H100", 4, 400, "llama70b", tp=4, traffic=[chat(5.0)], scrape=5, limit=450.0))
add("ok-warm-dc-within-limits-a100", "lookalike", None, "vllm",
    "Warm datacentre: 36 C inlet, GPU at ~80 C but below slowdown.",
    S("ok-warm-dc-within-limits-a100", "A100", 1, 400, "llama8b", traffic=[chat(3.0)], scrape=5, inlet=36.0))
add("ok-embedding-pool-steady-h100", "lookalike", None, "vllm",
    "Embedding pool at its steady daytime load: many small batched kernels, SM activity modest, always like this.",
    S("ok-embedding-pool-steady-h100", "H100", 1, 360, "embed", traffic=[embed(lambda t: 900 + 200 * ((t // 40) % 2))], scrape=5,
      cfg=dict(max_seqs=64, budget=16384, max_model_len=512)))
add("ok-llamacpp-l4-steady", "lookalike", None, "llamacpp",
    "L4 cheap tier: llama.cpp serving four slots at normal speed.",
    S("ok-llamacpp-l4-steady", "L4", 1, 380, "llama3b-q4", kind="llamacpp", traffic=[chat(0.3, cached=0.3, o=250)], scrape=5,
      cfg=dict(max_seqs=4, max_model_len=8192, async_sched=False)))
add("ok-tgi-legacy-steady-a100", "lookalike", None, "tgi",
    "Legacy TGI tier at its usual load.",
    S("ok-tgi-legacy-steady-a100", "A100", 1, 380, "mistral7b", kind="tgi", traffic=[chat(3.0, cached=0.0)], scrape=10,
      cfg=dict(prefix_cache=False, chunked=True)))
add("ok-lora-finetune-no-counter-l40s", "lookalike", None, "none",
    "Customer LoRA job on one L40S, no metrics exported; steady steps with a checkpoint.",
    TR("ok-lora-finetune-no-counter-l40s", "L40S", 1, 380, step_s=0.45, comm_s=0.0, counter=False, ckpt_every=300, ckpt_s=12,
       host=Host(cores=16), mem_gb=30))
add("ok-distillation-steady-b200x8", "lookalike", None, "trainer",
    "Team's distillation run on the new B200 node at its steady pace.",
    TR("ok-distillation-steady-b200x8", "B200", 8, 400, step_s=1.0, comm_s=0.1, mem_gb=150, mfu=0.45))
add("ok-moe-ep-steady-b200x8", "lookalike", None, "sglang",
    "Expert-parallel MoE on B200 at a normal daytime load.",
    S("ok-moe-ep-steady-b200x8", "B200", 8, 400, "reason-moe", kind="sglang", tp=8, traffic=[reasoning(1.5), chat(3.0)], scrape=3))
add("ok-agent-long-contexts-cached-h200", "lookalike", None, "vllm",
    "Tool-calling agents with 64k contexts, mostly prefix-cache hits, served at normal speed.",
    S("ok-agent-long-contexts-cached-h200", "H200", 2, 420, "qwen32b", tp=2, traffic=[chat(2.0), agent(0.15, cached=0.95, p=60000)],
      scrape=5, cfg=dict(max_model_len=131072)))
add("ok-structured-output-normal-h100", "lookalike", None, "vllm",
    "Structured-output traffic with cached grammars: small host cost per step, normal.",
    S("ok-structured-output-normal-h100", "H100", 1, 380, "llama8b", traffic=[chat(4.0)], scrape=5,
      cfg=dict(grammar_s=1.5e-5), host=Host(cores=64, other=3.0), ebpf=True))
add("ok-dp4-router-balanced-a100x4", "lookalike", None, "vllm",
    "Four DP replicas of an 8B model behind the router, traffic balanced, a mid-day rise.",
    S("ok-dp4-router-balanced-a100x4", "A100", 4, 400, "llama8b", dp=4, traffic=[chat(lambda t: ramp(t, 100, 300, 8.0, 13.0))], scrape=5))
add("ok-heat-soak-stays-below-slowdown-h100x8", "lookalike", None, "trainer",
    "Afternoon in the warm datacentre: an 8-GPU fine-tune heats to ~80 C with inlet 33 C; no throttling.",
    TR("ok-heat-soak-stays-below-slowdown-h100x8", "H100", 8, 420, step_s=0.9, inlet=lambda t, g=None: ramp(t, 60, 300, 24, 29)))


def build(spec):
    scn = spec["scn"]
    b = run_training(scn) if scn.train is not None else run_serving(scn)
    frames = b.frames
    w = spec["window"]
    if spec["window_from"] is not None:
        w = spec["window_from"](frames)
    t0 = b.t_wall0
    window = (round(t0 + w[0], 3), round(t0 + min(w[1], scn.duration), 3)) if (w and spec["cause"]) else None
    truth = Truth(name=spec["name"], family=spec["family"], cause=spec["cause"], culprit_gpus=spec["culprit"],
                  window=window, engine=spec["engine"], gpus=scn.n_gpus, gpu_model=b.spec.name,
                  tick_s=scn.tick, note=spec["note"], start_wall_s=frames[0].time_wall_s)
    return truth, frames
