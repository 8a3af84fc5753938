"""The incidents and their healthy look-alikes, one Spec each (README.md lists them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .physics import GPUS, GpuModel

M = {
    "llama8b": dict(name="meta-llama/Llama-3.1-8B-Instruct", params=8.03, layers=32, heads=32,
                    kv_heads=8, head_dim=128, hidden=4096, ctx=32768),
    "qwen7b": dict(name="Qwen/Qwen2.5-7B-Instruct", params=7.6, layers=28, heads=28, kv_heads=4,
                   head_dim=128, hidden=3584, ctx=32768),
    "qwen32b": dict(name="Qwen/Qwen2.5-32B-Instruct", params=32.8, layers=64, heads=40,
                    kv_heads=8, head_dim=128, hidden=5120, ctx=32768),
    "llama70b": dict(name="meta-llama/Llama-3.3-70B-Instruct", params=70.6, layers=80, heads=64,
                     kv_heads=8, head_dim=128, hidden=8192, ctx=65536),
    "llama70b_fp8": dict(name="RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", params=70.6, wbytes=1,
                         layers=80, heads=64, kv_heads=8, head_dim=128, hidden=8192, ctx=65536),
    "qwen3moe": dict(name="Qwen/Qwen3-30B-A3B", params=30.5, active=3.3, layers=48, heads=32,
                     kv_heads=4, head_dim=128, hidden=2048, ctx=40960),
    "llama405b_fp8": dict(name="meta-llama/Llama-3.1-405B-Instruct-FP8", params=405, wbytes=1,
                          layers=126, heads=128, kv_heads=8, head_dim=128, hidden=16384,
                          ctx=131072, kvbytes=1),
    "gguf32b": dict(name="Qwen2.5-32B-Instruct-Q4_K_M", params=32.8, wbytes=0.61, layers=64,
                    heads=40, kv_heads=8, head_dim=128, hidden=5120, ctx=16384),
    "gguf8b": dict(name="Meta-Llama-3.1-8B-Instruct-Q8_0", params=8.03, wbytes=1.06, layers=32,
                   heads=32, kv_heads=8, head_dim=128, hidden=4096, ctx=32768),
}

CHAT = ((0.72, 900, 0.35), (0.28, 2600, 0.62))  # (weight, prompt tokens, prefix-cache hit)
TENANTS = ((0.55, 1400, 0.7), (0.35, 700, 0.2), (0.10, 5200, 0.35))  # long system prompts
RAG = ((0.5, 1100, 0.4), (0.5, 6500, 0.15))
CODE = ((0.6, 3000, 0.55), (0.4, 8000, 0.45))


@dataclass
class Spec:
    name: str
    family: str
    cause: str | None
    gpu_key: str
    kind: str  # serve | train
    tick_s: float
    duration_s: float
    window: tuple[float, float] | None  # seconds from the start
    culprit: tuple[int, ...] | None = None
    note: str = ""
    knobs: dict = field(default_factory=dict)
    start_wall_s: float = 0.0

    @property
    def gpu(self) -> GpuModel:
        return GPUS[self.gpu_key]

    @property
    def n_gpus(self) -> int:
        k = self.knobs
        return k.get("tp", 1) * k.get("dp", 1) if self.kind == "serve" else k.get("ranks", 1)

    @property
    def engine(self) -> str:
        if self.kind == "serve":
            return self.knobs["engine"]
        if self.knobs.get("program"):
            return "cuda"
        return "trainer" if self.knobs.get("counter") else "none"


def E(kind, t0, t1, **kw):
    return dict(kind=kind, t0=t0, t1=t1, **kw)


def serve(engine, model, rate, out=260, mix=CHAT, tp=1, dp=1, max_seqs=256, events=(), **kw):
    d = dict(engine=engine, model=M[model], rate=rate, out=out, mix=mix, tp=tp, dp=dp,
             max_seqs=max_seqs, events=list(events))
    if engine == "sglang":
        d.setdefault("max_batched", 8192)
    if engine == "llamacpp":
        d.update(max_batched=2048, host_step_s=0.0022, launch_s=3e-6)
    d.update(kw)
    return d


def S(name, family, cause, gpu, kind, tick, dur, win=None, culprit=None, note="", knobs=None):
    return Spec(name, family, cause, gpu, kind, tick, dur, win, culprit, note, dict(knobs or {}))


SPECS = [
    # ================================================================ oversized_request
    S("l01-vllm-h100-deploy-n8-logprobs", "vllm", "oversized_request", "H100", "serve", 1, 360,
      (140, 330), note="a client release turns on n=8, logprobs=20 for 'regenerate'; every "
      "step slows, everyone's ITL ~2x, GPU stays at 100 %",
      knobs=serve("vllm", "llama8b", 9, events=[E("oversized", 140, 330, every=12, lasts=40, n=8,
                                                  max_tokens=2048, per_child_s=0.0012)])),
    S("l02-vllm-h200-tp2-huge-max-tokens", "vllm", "oversized_request", "H200", "serve", 2, 300,
      (96, 300), note="one tenant's job sends n=4, max_tokens=16384 with logprobs; moderate: "
      "ITL x1.5, tokens/s -25 %, until the end of the trace",
      knobs=serve("vllm", "qwen32b", 6, tp=2, mix=TENANTS,
                  events=[E("oversized", 96, 300, every=14, lasts=70, n=4, max_tokens=16384,
                            per_child_s=0.0009)])),
    S("l03-sglang-a100-batch-n16-sampling", "sglang", "oversized_request", "A100", "serve", 2, 420,
      (110, 380), note="a batch-API job of n=16 best-of sampling comes in waves (30 s on, 40 s "
      "off); each wave slows every step ~1.6x; no GPM on A100",
      knobs=serve("sglang", "qwen7b", 4, events=[E("oversized", 110, 380, onset="intermittent",
                                                    on=30, off=40, every=6, lasts=22, n=16,
                                                    max_tokens=1024, per_child_s=0.0004)])),
    # ================================================================ prefill_interference
    S("l04-vllm-h100-lunch-rag-30k", "vllm", "prefill_interference", "H100", "serve", 1, 400,
      (120, 360), note="a tenant starts sending 30k-token RAG contexts at lunchtime (ramp over "
      "a minute); prompt tokens/s x4, ITL ~1.8x, TTFT up for everyone",
      knobs=serve("vllm", "llama8b", 8, events=[E("long_prompts", 120, 360, onset="ramp", ramp=60,
                                                   rate=0.5, tokens=30000)])),
    S("l05-sglang-h200-tp4-rag-bursts", "sglang", "prefill_interference", "H200", "serve", 2, 320,
      (80, 300), note="bursts of 20k-token document prompts (25 s on, 30 s off) starve the "
      "decodes of a 70B TP4; ITL 1.4x in the bursts",
      knobs=serve("sglang", "llama70b", 2.0, tp=4, mix=RAG,
                  events=[E("long_prompts", 80, 300, onset="intermittent", on=25, off=30,
                            rate=0.3, tokens=20000)])),
    S("l06-vllm-l40s-summarisation-batch", "vllm", "prefill_interference", "L40S", "serve", 1, 320,
      (150, 300), note="a document-summarisation batch (12k-token prompts, short outputs) lands "
      "on a chat server; mild: ITL ~1.35x; eBPF on, launches normal",
      knobs=serve("vllm", "qwen7b", 4, events=[E("long_prompts", 150, 300, rate=0.22,
                                                  tokens=12000)], ebpf=True)),
    S("l07-vllm-b200-tp8-agent-tool-dumps", "vllm", "prefill_interference", "B200", "serve", 2, 300,
      (70, 250), note="an agent framework pastes 40k-token tool outputs into prompts right after "
      "the healthy minute; 405B FP8 TP8 decodes stall: ITL ~2x",
      knobs=serve("vllm", "llama405b_fp8", 1.2, tp=8, mix=CODE,
                  events=[E("long_prompts", 70, 250, rate=0.05, tokens=40000)])),
    # ================================================================ collective_straggler
    S("l08-vllm-h100-tp4-gpu2-psu-slowdown", "vllm", "collective_straggler", "H100", "serve", 2, 360,
      (130, 330), culprit=(2,), note="GPU 2's board asserts HW slowdown (failing PSU rail): its "
      "clock halves, the other three ranks wait in NCCL all-reduce; ITL 1.5x",
      knobs=serve("vllm", "llama70b", 6, tp=4, ebpf=True, events=[E("hw_slowdown", 130, 330, gpus=(2,),
                                                          clock=0.55)])),
    S("l09-fsdp-h100x8-rank5-heavy-packing", "training", "collective_straggler", "H100", "train", 2, 420,
      (100, 400), culprit=(5,), note="sequence packing drifts so rank 5 gets the long documents "
      "(ramp over 2 min): its compute 1.35x, the other ranks idle in reduce-scatter",
      knobs=dict(ranks=8, strategy="fsdp", params=8.0, tokens=32768, mfu=0.45, counter=True,
                 events=[E("hot_shard", 100, 400, onset="ramp", ramp=120, gpus=(5,),
                           factor=1.35)], mem_gib=62)),
    S("l10-ddp-l40s-x2-card1-airflow", "training", "collective_straggler", "L40S", "train", 1, 300,
      (90, 300), culprit=(1,), note="a cable blocks card 1's intake: it heats up and clocks down "
      "(thermal), card 0 waits at every all-reduce; gradual",
      knobs=dict(ranks=2, params=1.5, tokens=16384, mfu=0.40, pinned="train.py", mem_gib=38,
                 events=[E("fan_fail", 90, 300, onset="ramp", ramp=120, gpus=(1,), heat=1.9)])),
    S("l11-sglang-h200-tp8-moe-hot-experts", "sglang", "collective_straggler", "H200", "serve", 2, 330,
      (110, 330), culprit=(6,), note="a traffic mix shift routes most tokens to experts living on "
      "GPU 6 (expert parallel); the other ranks wait in all-to-all; moderate",
      knobs=serve("sglang", "qwen3moe", 14, tp=8, mix=TENANTS,
                  events=[E("hot_shard", 110, 330, onset="ramp", ramp=60, gpus=(6,), factor=1.6)],
                  ebpf=True)),
    S("l12-ddp-a100x4-rank1-slow-link", "training", "collective_straggler", "A100", "train", 2, 360,
      (120, 340), culprit=(1,), note="rank 1's host-to-device path degrades (PCIe link retrained "
      "narrow) so its input copies and step finish late; others wait; mild, no GPM",
      knobs=dict(ranks=4, params=3.0, tokens=16384, mfu=0.38, counter=True, mem_gib=55,
                 events=[E("hot_shard", 120, 340, gpus=(1,), factor=1.22)])),
    # ================================================================ input_stall
    S("l13-ddp-h100x8-nfs-dataloader", "training", "input_stall", "H100", "train", 2, 420,
      (120, 360), note="the NFS server behind the dataset stalls in spells (40 s on, 30 s off): "
      "loader workers sleep in I/O, GPUs idle between steps, samples/s halves",
      knobs=dict(ranks=8, params=7.0, tokens=16384, samples=16, loader_rate=8 * 16 / 1.1,
                 counter=True, workers=6, mem_gib=70,
                 events=[E("input_stall", 120, 360, onset="intermittent", on=40, off=30,
                           drop=0.6, mode="storage")])),
    S("l14-a100-vision-finetune-jpeg-decode", "training", "input_stall", "A100", "train", 1, 300,
      (90, 270), note="the epoch reaches a shard of 4k JPEGs: 6 loader workers pegged decoding, "
      "GPU-Util saw-tooth, step time x2; pinned to train.py",
      knobs=dict(ranks=1, params=0.6, tokens=8192, samples=64, loader_rate=64 / 0.16, workers=6,
                 pinned="train.py", cpus=16, mem_gib=40,
                 events=[E("input_stall", 90, 270, drop=0.55, mode="decode")])),
    S("l15-ddp-l40s-x4-s3-streaming", "training", "input_stall", "L40S", "train", 2, 320,
      (80, 320), note="a streaming dataset from object storage slows as the bucket throttles "
      "(gradual over 150 s); no engine, no GPM",
      knobs=dict(ranks=4, params=1.2, tokens=8192, samples=32, loader_rate=4 * 32 / 0.45,
                 workers=4, mem_gib=36,
                 events=[E("input_stall", 80, 320, onset="ramp", ramp=150, drop=0.5,
                           mode="storage")])),
    # ================================================================ host_launch_jitter
    S("l16-vllm-h100-ebpf-irq-storm", "vllm", "host_launch_jitter", "H100", "serve", 1, 300,
      (100, 280), note="a NIC IRQ storm lands on the engine core's CPU: eBPF shows cudaGraphLaunch "
      "p99 from 20 us to ms, off-CPU waits; GPU gaps, ITL 1.5x",
      knobs=serve("vllm", "llama8b", 8, ebpf=True,
                  events=[E("launch_jitter", 100, 280, steal=0.35, delay_ms=5.0, tail=0.12,
                            tail_us=900, cores=2)])),
    S("l17-train-a100-logger-gil", "training", "host_launch_jitter", "A100", "train", 1, 320,
      (120, 300), note="an experiment-tracker thread that syncs every few seconds holds the GIL: "
      "the launching thread stalls in spells; eBPF launch tails, GPU idle gaps",
      knobs=dict(ranks=1, params=1.3, tokens=8192, mfu=0.40, ebpf=True, kernels=3000,
                 pinned="train.py", mem_gib=46,
                 events=[E("launch_jitter", 120, 300, onset="intermittent", on=15, off=15,
                           steal=0.4, delay_ms=0.25, stall_s=0.18, tail=0.08, tail_us=600, cores=0.5)])),
    S("l18-sglang-h200-tp2-launch-jitter-ramp", "sglang", "host_launch_jitter", "H200", "serve", 2, 330,
      (90, 330), note="CPU frequency scaling misconfigured after a BIOS update: launch latency "
      "creeps up over minutes (eBPF), GPU busy falls, tokens/s -25 %",
      knobs=serve("sglang", "qwen32b", 7, tp=2, mix=TENANTS, ebpf=True,
                  events=[E("launch_jitter", 90, 330, onset="ramp", ramp=150, steal=0.3,
                            delay_ms=4.0, tail=0.1, tail_us=500, cores=1)])),
    # ================================================================ host_cpu_contention
    S("l19-vllm-h100-log-shipper-runaway", "vllm", "host_cpu_contention", "H100", "serve", 1, 360,
      (150, 330), note="the log shipper loops on a malformed file and eats 60 of 64 cores: PSI "
      "40 %+, run queue 90, engine involuntary switches x50, ITL 1.6x",
      knobs=serve("vllm", "llama8b", 9, cpus=64,
                  events=[E("host_contention", 150, 330, steal=0.5, delay_ms=5.0, cores=60,
                            tail=0.1)])),
    S("l20-vllm-a10g-cron-backup", "vllm", "host_cpu_contention", "A10G", "serve", 2, 260,
      (90, 230), note="a nightly backup cron (tar | zstd -T0) on an 8-vCPU g5 box starves the "
      "engine: tokens/s -40 %, PSI 60 %",
      knobs=serve("vllm", "qwen7b", 0.7, out=200, cpus=8, max_seqs=64, mem_util=0.92,
                  activation_gib=1.5,
                  events=[E("host_contention", 90, 230, steal=0.6, delay_ms=9.0, cores=8,
                            tail=0.1)])),
    S("l21-ddp-h200x4-foreign-preprocessing", "training", "host_cpu_contention", "H200", "train", 2, 380,
      (100, 360), note="another project's preprocessing job shares the node's CPUs in spells: the "
      "trainer ranks lose CPU, launches lag, GPU busy drops 20 %; no eBPF",
      knobs=dict(ranks=4, params=8.0, tokens=8192, mfu=0.42, counter=True, cpus=64, kernels=6000,
                 pinned="torchrun", mem_gib=90,
                 events=[E("host_contention", 100, 360, onset="intermittent", on=45, off=35,
                           steal=0.55, delay_ms=0.4, stall_s=0.3, cores=62, tail=0.1)])),
    # ================================================================ tiny_kernels
    S("l22-vllm-h200-debug-build-eager", "vllm", "tiny_kernels", "H200", "serve", 1, 380,
      (150, 380), note="a rollout ships a debug image (enforce-eager, unfused kernels): after the "
      "restart GPU-Util reads 90 % but SM 12 %, power low, tokens/s -60 %",
      knobs=serve("vllm", "qwen7b", 6, ebpf=True,
                  events=[E("restart", 95, 125, warm=25), E("eager", 150, 380, sm=0.06)],
                  launch_s=9e-6, eager_kernels=40, tiny_kernel_s=1e-5)),
    S("l23-notebook-h100-python-loop", "cuda", "tiny_kernels", "H100", "train", 1, 280,
      (80, 260), note="a notebook switches from a batched op to a per-row Python loop: GPU-Util "
      "93 %, SM 5 %, 140 W",
      knobs=dict(ranks=1, program=[(0, 400, dict(busy=0.97, sm=0.92, tensor=0.6, dram=0.35))],
                 pname="python3", cmd="/opt/conda/bin/python -m ipykernel_launcher -f kernel.json",
                 user="alice", mem_gib=22, proc_sm=True,
                 events=[E("eager", 80, 260, busy=0.93, sm=0.05)])),
    S("l24-eval-a100-per-token-metrics", "cuda", "tiny_kernels", "A100", "train", 2, 320,
      (100, 300), note="an eval harness finishes batched generation and scores per token in a "
      "Python loop on the GPU: 95 % util at 90 W; A100 has no GPM",
      knobs=dict(ranks=1, program=[(0, 100, dict(busy=0.98, sm=0.85, tensor=0.3, dram=0.7)),
                                   (100, 400, dict(busy=0.98, sm=0.85, tensor=0.3, dram=0.7))],
                 pname="python3", cmd="python -m lm_eval --model hf --tasks gsm8k", mem_gib=30,
                 events=[E("eager", 100, 300, busy=0.95, sm=0.07)])),
    # ================================================================ memory_bandwidth
    S("l25-vllm-h200-agent-long-context", "vllm", "memory_bandwidth", "H200", "serve", 2, 380,
      (90, 380), note="agent sessions grow to 40k-token contexts over three minutes: DRAM 90 %+, "
      "ITL grows with context, tokens/s flat then down",
      knobs=serve("vllm", "llama8b", 2.2, out=400, mix=CODE,
                  events=[E("long_context", 90, 380, onset="ramp", ramp=180, tokens=30000)])),
    S("l26-sglang-b200-long-doc-chat", "sglang", "memory_bandwidth", "B200", "serve", 1, 300,
      (100, 300), note="a legal tenant chats over 25k-token documents held in context; moderate: "
      "ITL 1.5x, DRAM near its limit",
      knobs=serve("sglang", "qwen32b", 3, out=350, mix=RAG,
                  events=[E("long_context", 100, 300, onset="ramp", ramp=80, tokens=8000)])),
    S("l27-vllm-a100-tp2-context-growth", "vllm", "memory_bandwidth", "A100", "serve", 2, 340,
      (110, 340), note="long multi-turn sessions accumulate 14k tokens each; KV reads dominate "
      "every step: ITL 1.4x; no GPM so DRAM is not visible",
      knobs=serve("vllm", "qwen32b", 2, tp=2, out=300,
                  events=[E("long_context", 110, 340, onset="ramp", ramp=140, tokens=7000)])),
    # ================================================================ throttling
    S("l28-vllm-h100x8-datacentre-power-cap", "vllm", "throttling", "H100", "serve", 2, 420,
      (120, 400), note="facilities lower the rack's cap: every GPU's power limit ramps 700 -> "
      "400 W, clocks fall, ITL 1.4x on both DP replicas",
      knobs=serve("vllm", "llama70b", 10, tp=4, dp=2, mix=TENANTS,
                  events=[E("power_cap", 120, 400, onset="ramp", ramp=60, watts=350)])),
    S("l29-llamacpp-rtx6000-fan-failure", "llamacpp", "throttling", "RTX6000", "serve", 1, 330,
      (90, 330), note="the workstation's GPU fan bearing fails: temperature climbs to the slowdown "
      "point, clocks drop, tokens/s falls 30 %",
      knobs=serve("llamacpp", "gguf32b", 0.15, out=450, max_seqs=4, cpus=24, user="dev",
                  events=[E("fan_fail", 90, 330, onset="ramp", ramp=90, gpus=(0,), heat=2.8)])),
    S("l30-sglang-h200-tp4-power-brake", "sglang", "throttling", "H200", "serve", 2, 300,
      (100, 280), note="the BMC asserts power brake in spells while a PSU is replaced: clocks "
      "to ~50 % with 'power brake' + 'hw slowdown' on all four GPUs",
      knobs=serve("sglang", "llama70b", 5, tp=4,
                  events=[E("power_brake", 100, 280, onset="intermittent", on=30, off=30,
                            clock=0.35)])),
    # ================================================================ kv_pressure
    S("l31-vllm-h100-model-swap-undersized-kv", "vllm", "kv_pressure", "H100", "serve", 1, 380,
      (110, 380), note="yesterday's swap to a 32B model left a 30k-token KV pool; the morning "
      "rise fills it: preemptions climb, queue grows, TTFT explodes",
      knobs=serve("vllm", "qwen32b", 2.5, out=300, shape="rise", max_seqs=128,
                  events=[E("surge", 110, 380, onset="ramp", ramp=100, x=1.9)])),
    S("l32-sglang-a100-retractions", "sglang", "kv_pressure", "A100", "serve", 2, 320,
      (100, 300), note="a tenant's long-output jobs (2k tokens) overfill the pool "
      "(mem-fraction-static lowered for a sidecar): retractions, queue, tokens/s down",
      knobs=serve("sglang", "llama8b", 7, out=380, mem_util=0.45, max_seqs=256,
                  events=[E("surge", 100, 300, x=2.2)])),
    S("l33-vllm-l40s-tp2-lunch-kv-full", "vllm", "kv_pressure", "L40S", "serve", 2, 360,
      (130, 330), note="lunchtime load on a 32B over two L40S: the KV pool sits at 100 %, a few "
      "preemptions a second, waiting-by-reason 'capacity'; mild",
      knobs=serve("vllm", "qwen32b", 1.5, tp=2, out=280, max_seqs=128,
                  events=[E("surge", 130, 330, onset="ramp", ramp=40, x=1.7)])),
    S("l34-vllm-h200-dp2-long-chats-kv", "vllm", "kv_pressure", "H200", "serve", 2, 330,
      (100, 310), note="a 70B on DP2 x TP2: long chat histories (8k) plus a traffic rise fill "
      "both replicas' pools; preemptions on both engines",
      knobs=serve("vllm", "llama70b", 1.5, tp=2, dp=2, out=500,
                  mix=((0.5, 6000, 0.5), (0.5, 9000, 0.6)), max_seqs=256,
                  events=[E("surge", 100, 310, onset="ramp", ramp=60, x=2.6)])),
    # ================================================================ gpu_shared
    S("l35-vllm-h100-foreign-training-job", "vllm", "gpu_shared", "H100", "serve", 1, 360,
      (120, 330), note="another team's fine-tune lands on GPU 0 (wrong CUDA_VISIBLE_DEVICES): "
      "time-slicing takes ~40 % of SM time, ITL 1.7x, a second process in the list",
      knobs=serve("vllm", "llama8b", 7, mem_util=0.78, ebpf=True,
                  events=[E("intruder", 120, 330, share=0.4, mem_gib=14, name="python",
                            cmdline="python finetune_lora.py --model mistral-7b", user="bob",
                            sm=0.9, tensor=0.6, dram=0.3)])),
    S("l36-llamacpp-rtx-notebook-training", "llamacpp", "gpu_shared", "RTX6000", "serve", 1, 280,
      (90, 240), note="a colleague's notebook starts a training loop on the workstation GPU; "
      "this driver gives no per-process SM util; tokens/s -35 %",
      knobs=serve("llamacpp", "gguf8b", 0.5, out=300, max_seqs=4, cpus=24, proc_sm=False,
                  events=[E("intruder", 90, 240, share=0.35, mem_gib=9, name="python3",
                            cmdline="/home/carol/.venv/bin/python -m ipykernel_launcher",
                            user="carol")])),
    S("l37-train-a100-eval-job-lands", "training", "gpu_shared", "A100", "train", 2, 330,
      (100, 300), note="an evaluation job is scheduled onto the training GPU by mistake: "
      "the trainer's steps slow ~30 %, a second process holds 12 GiB",
      knobs=dict(ranks=1, params=2.0, tokens=8192, mfu=0.40, counter=True, mem_gib=50,
                 events=[E("intruder", 100, 300, share=0.3, mem_gib=12, name="python",
                           cmdline="python eval.py --ckpt latest", user="ci")])),
    # ================================================================ spec_decode_rejected
    S("l38-vllm-h200-eagle-new-tenant-language", "vllm", "spec_decode_rejected", "H200", "serve", 1, 360,
      (100, 330), note="a new tenant sends Japanese/legal text the EAGLE head never saw: "
      "acceptance 0.72 -> 0.18, tokens/s -35 %, TPOT up, ITL flat",
      knobs=serve("vllm", "llama8b", 7, spec=dict(k=3, alpha=0.72),
                  extra_args=" --speculative-config {\"method\":\"eagle\",\"num_speculative_tokens\":3}",
                  events=[E("spec_reject", 100, 330, onset="ramp", ramp=40, alpha=0.18)])),
    S("l39-sglang-h100-tp2-eagle-json-tenant", "sglang", "spec_decode_rejected", "H100", "serve", 2, 300,
      (80, 260), note="structured-output JSON traffic starts: SGLang's accept length 2.6 -> 1.3; "
      "moderate throughput loss",
      knobs=serve("sglang", "qwen32b", 6, tp=2, spec=dict(k=4, alpha=0.68),
                  extra_args=" --speculative-algorithm EAGLE",
                  events=[E("spec_reject", 80, 260, alpha=0.25)])),
    S("l40-llamacpp-rtx-draft-mismatch", "llamacpp", "spec_decode_rejected", "RTX6000", "serve", 1, 300,
      (90, 300), note="the main model is updated, the draft is not: after a quick restart "
      "acceptance collapses, tokens/s halves (counters move at request end)",
      knobs=serve("llamacpp", "gguf32b", 0.3, out=500, max_seqs=4, cpus=24,
                  spec=dict(k=5, alpha=0.8), extra_args=" -md /models/qwen2.5-0.5b-q8.gguf",
                  events=[E("restart", 70, 82, warm=6), E("spec_reject", 90, 300, alpha=0.15)])),
    # ================================================================ healthy look-alikes
    S("h01-vllm-h100-morning-rise", "vllm", None, "H100", "serve", 1, 420, note="traffic "
      "doubles from 8 to 9 a.m.; batch grows, tokens/s up, ITL +10 %", knobs=serve(
          "vllm", "llama8b", 7, shape="rise", ebpf=True)),
    S("h02-vllm-h100-tp2-night-drop", "vllm", None, "H100", "serve", 2, 400, note="traffic "
      "falls to 15 % at night: util, power and tokens/s drop, ITL improves",
      knobs=serve("vllm", "qwen32b", 6, tp=2, shape="fall")),
    S("h03-sglang-h200-tp4-bursty-arrivals", "sglang", None, "H200", "serve", 2, 360,
      note="a chatbot with bursty arrivals: queue spikes for a few seconds every 45 s",
      knobs=serve("sglang", "llama70b", 2.5, tp=4, shape="bursty", burst_every=45, burst_len=8)),
    S("h04-vllm-a100-rolling-restart", "vllm", None, "A100", "serve", 2, 330, note="a rolling "
      "restart: engine unreachable 50 s, new pids, counters restart, graph-capture warm-up",
      knobs=serve("vllm", "llama8b", 4, events=[E("restart", 120, 170, warm=30)])),
    S("h05-vllm-h100-cold-start-graph-capture", "vllm", None, "H100", "serve", 1, 300,
      note="engine starting: weights load, profiling run, CUDA graph capture, then traffic",
      knobs=serve("vllm", "qwen7b", 5, ebpf=True, events=[E("restart", 0, 40, warm=35)])),
    S("h06-vllm-h200-batch-api-job", "vllm", None, "H200", "serve", 2, 420, note="a batch-API "
      "job arrives and finishes: 2.5x requests for 2 minutes, KV up to ~60 %, no preemption",
      knobs=serve("vllm", "llama8b", 10, out=500,
                  events=[E("surge", 120, 260, onset="ramp", ramp=20, x=2.5)])),
    S("h07-fsdp-h100x8-checkpoint-pauses", "training", None, "H100", "train", 2, 420,
      note="FSDP pre-training with a 25 s checkpoint every 150 s: GPUs idle, CPU writes",
      knobs=dict(ranks=8, strategy="fsdp", params=8.0, tokens=32768, mfu=0.45, counter=True,
                 mem_gib=66, events=[E("checkpoint", 80, 420, every=150, lasts=25)])),
    S("h08-train-a100-eval-pass", "training", None, "A100", "train", 2, 380, note="a fine-tune "
      "runs a 30 s eval pass every 120 s: forward only, lower power, counter pauses",
      knobs=dict(ranks=1, params=3.0, tokens=8192, mfu=0.40, counter=True, mem_gib=60,
                 pinned="train.py", events=[E("eval", 90, 380, every=120, lasts=30)])),
    S("h09-train-h200-at-power-cap", "training", None, "H200", "train", 1, 300, note="a "
      "matmul-heavy job sits at its 700 W cap with 'power cap' set by design; steady throughput",
      knobs=dict(ranks=1, params=13.0, tokens=16384, mfu=0.62, counter=True, mem_gib=120)),
    S("h10-vllm-h100-embedding-sidecar", "vllm", None, "H100", "serve", 1, 330, note="a small "
      "embedding server shares the GPU all along (a second healthy process)",
      knobs=serve("vllm", "llama8b", 7, mem_util=0.8, ebpf=True,
                  events=[E("neighbour", 0, 330, share=0.03, duty=0.5, mem_gib=3, name="python3",
                            cmdline="python -m infinity_emb v2 --model-id BAAI/bge-m3",
                            user="svc")])),
    S("h11-sglang-h100-prefix-hit-drop", "sglang", None, "H100", "serve", 1, 360, note="a "
      "tenant rotates its system prompt: cache hit 70 % -> 35 %, prompt compute up, ITL +10 %",
      knobs=serve("sglang", "llama8b", 6, mix=TENANTS,
                  events=[E("hit_change", 150, 360, onset="ramp", ramp=60, to=0.35)])),
    S("h12-vllm-l40s-prompt-mix-shift", "vllm", None, "L40S", "serve", 2, 380, note="the "
      "prompt mix drifts toward long prompts over the afternoon; within capacity",
      knobs=serve("vllm", "qwen7b", 3, mix=((0.8, 800, 0.3, 0.45), (0.2, 4000, 0.3, 0.55)),
                  events=[E("mix_shift", 100, 380, onset="ramp", ramp=250)])),
    S("h13-vllm-h100-tp8-ranks-differ", "vllm", None, "H100", "serve", 2, 330, note="TP8: "
      "GPU 3 runs 3 C warmer and a few watts higher; ranks differ a little, nothing waits",
      knobs=serve("vllm", "llama405b_fp8", 2.5, tp=8, ebpf=True,
                  events=[E("fan_fail", 0, 330, gpus=(3,), heat=1.08)])),
    S("h14-vllm-h100-stale-scrape", "vllm", None, "H100", "serve", 1, 300, note="the metrics "
      "endpoint answers late for 16 s: engine counters freeze (age grows), then jump",
      knobs=serve("vllm", "llama8b", 7, ebpf_refused=True, events=[E("stale_scrape", 150, 166)])),
    S("h15-llamacpp-rtx-single-user", "llamacpp", None, "RTX6000", "serve", 1, 300, note="one "
      "developer chatting: GPU bursts to 100 % per answer, idle between",
      knobs=serve("llamacpp", "gguf32b", 0.04, out=350, max_seqs=1, cpus=24, shape="wave",
                  waves=2.5, noise=0.3)),
    S("h16-llamacpp-rtx-spec-healthy", "llamacpp", None, "RTX6000", "serve", 1, 300, note="llama"
      ".cpp with a draft model; acceptance varies with the prompt but holds ~0.6",
      knobs=serve("llamacpp", "gguf32b", 0.3, out=400, max_seqs=4, cpus=24,
                  spec=dict(k=5, alpha=0.8), extra_args=" -md /models/qwen2.5-0.5b-q8.gguf")),
    S("h17-vllm-h200-eagle-healthy", "vllm", None, "H200", "serve", 1, 330, note="EAGLE "
      "speculative decoding at ~0.7 acceptance with diurnal wave",
      knobs=serve("vllm", "llama8b", 7, spec=dict(k=3, alpha=0.7), shape="wave")),
    S("h18-vllm-h200-dp2-replicas", "vllm", None, "H200", "serve", 2, 330, note="two data-"
      "parallel engines behind one port; their loads differ by ~10 %",
      knobs=serve("vllm", "qwen32b", 12, tp=2, dp=2, mix=TENANTS, ebpf=True)),
    S("h19-cuda-h100-gemm-benchmark", "cuda", None, "H100", "train", 1, 300, note="a GEMM "
      "benchmark: 40 s runs at the power cap with 20 s pauses; clocks at the cap by design",
      knobs=dict(ranks=1, pname="gemm_bench", cmd="./gemm_bench --m 8192 --iters 20000",
                 ebpf=True, mem_gib=6, program=[(a, a + 40, dict(busy=0.99, sm=0.97, tensor=0.94,
                                                                   dram=0.18)) for a in range(10, 300, 60)])),
    S("h20-vllm-a10g-night-trickle", "vllm", None, "A10G", "serve", 2, 330, note="a small "
      "internal bot at night: a request every ~10 s, long idle stretches",
      knobs=serve("vllm", "qwen7b", 0.03, out=200, cpus=8, max_seqs=64, mem_util=0.92,
                  activation_gib=1.5, noise=0.4)),
    S("h21-vllm-b200-surge-absorbed", "vllm", None, "B200", "serve", 1, 360, note="a product "
      "launch doubles traffic for 2 minutes; batch grows, ITL +15 %, no queue",
      knobs=serve("vllm", "llama70b_fp8", 3, events=[E("surge", 120, 250, onset="ramp", ramp=30, x=1.6)])),
    S("h22-ddp-a100x4-steady", "training", None, "A100", "train", 2, 360, note="DDP fine-tune "
      "with small step-time noise and a short eval every 3 minutes",
      knobs=dict(ranks=4, params=3.0, tokens=16384, mfu=0.40, counter=True, mem_gib=58,
                 jitter_steps=True, events=[E("eval", 150, 360, every=180, lasts=15)])),
    S("h23-vllm-h100-notebook-beside", "vllm", None, "H100", "serve", 1, 330, note="a data "
      "scientist's notebook beside the server runs short cells; tiny SM share",
      knobs=serve("vllm", "llama8b", 6, mem_util=0.8,
                  events=[E("neighbour", 60, 330, share=0.05, duty=0.2, mem_gib=5, name="python3",
                            cmdline="python -m ipykernel_launcher", user="dana")])),
    S("h24-sglang-h200-kv-high-steady", "sglang", None, "H200", "serve", 2, 330, note="long "
      "chats keep the KV pool at ~85 % all along, no retractions",
      knobs=serve("sglang", "qwen32b", 0.6, out=600, mix=((1.0, 9000, 0.6),), mem_util=0.8)),
    S("h25-vllm-h100-rag-normal-long-prompts", "vllm", None, "H100", "serve", 1, 330,
      note="a RAG product whose prompts are long all day: high prompt tokens/s is normal",
      knobs=serve("vllm", "llama8b", 6, mix=RAG, ebpf=True)),
    S("h26-train-l40s-compile-warmup", "training", None, "L40S", "train", 1, 300, note="torch."
      "compile warm-up: 60 s of CPU-busy compile with an idle GPU, then training",
      knobs=dict(ranks=1, params=1.0, tokens=8192, mfu=0.40, compile_s=60, compile_cores=14,
                 cpus=32, counter=True, mem_gib=30)),
    S("h27-sglang-h100-old-release-counters", "sglang", None, "H100", "serve", 1, 300,
      note="an older SGLang whose generation counter moves only when requests finish",
      knobs=serve("sglang", "qwen7b", 5, sglang_new=False, config_known=False, ebpf=True)),
]
