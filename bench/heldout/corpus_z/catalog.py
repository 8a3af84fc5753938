"""The on-call week: every trace, its simulator settings and its label.

Times in a spec are seconds from the trace's first frame; ``win`` is the span the
on-call engineer would name (relative), or "special" for the span a hand-placed request
was in the engine (taken from the simulation)."""

from __future__ import annotations

from .common import GiB
from .serving import ServeSpec, Special, Tenant
from .training import TrainSpec

# tenants used across endpoints: (median, log-sigma, min, max)
CHAT = dict(prompt=(900, 0.7, 40, 6000), out=(280, 0.8, 8, 1500))
SHORT = dict(prompt=(350, 0.6, 20, 2000), out=(120, 0.7, 4, 600))
RAG = dict(prompt=(14000, 0.25, 6000, 24000), out=(220, 0.5, 20, 800), cached=0.55)
SUMM = dict(prompt=(3000, 0.5, 500, 12000), out=(900, 0.4, 100, 2500))


def chat(rate, **kw):
    return Tenant(rate, **{**CHAT, **kw})


def short(rate, **kw):
    return Tenant(rate, **{**SHORT, **kw})


E = []  # (name, family, cause, culprit, win, note, kind, spec)


def add(name, family, cause, culprit, win, note, spec):
    E.append((name, family, cause, culprit, win, note, spec))


def S(**kw):
    return ServeSpec(**kw)


def T(**kw):
    return TrainSpec(**kw)


def rank_cmd(n, script, extra=""):
    return f"torchrun --nnodes=1 --nproc-per-node={n} {script}{extra}"


# =============================================================== pathologies: serving

add("mon-chat-n8-logprobs", "serving", "oversized_request", None, "special",
    "vLLM chat endpoint on an H100: one client sends n=8 with logprobs=20; every co-scheduled "
    "request's ITL and TTFT rise until it finishes",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=300,
      tenants=[chat(7.0)], specials=[Special(150, 512, 700, n=8, logprobs=20, extra_step_s=0.034)]))
add("tue-sgl-best-of-16", "serving", "oversized_request", None, "special",
    "SGLang Qwen2.5-32B TP2 on H200s: an eval harness sends n=16, logprobs=5, max_tokens=2048",
    S(engine="sglang", gpu="H200", gpus=2, tp=2, model="qwen32b", duration=330,
      tenants=[chat(5.0)], specials=[Special(130, 900, 1100, n=16, logprobs=5, extra_step_s=0.045,
                                             max_tokens=2048)]))
add("wed-a100-n8-mild", "serving", "oversized_request", None, "special",
    "vLLM Qwen2.5-32B TP2 on A100s: one n=8 logprobs=10 request, mild (ITL +60%) but long",
    S(engine="vllm", gpu="A100", gpus=2, tp=2, model="qwen32b", duration=320, version="0.10",
      tenants=[chat(2.0)], specials=[Special(120, 700, 1400, n=8, logprobs=10, extra_step_s=0.02)],
      mfu_metrics=False))

add("mon-rag-long-prompts", "serving", "prefill_interference", None, (120, 260),
    "vLLM chat on an H100; a RAG tenant starts sending 24k-token uncached prompts: chunked "
    "prefill steps stretch every decode step",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=330,
      tenants=[chat(6.0), Tenant(0.5, prompt=(20000, 0.15, 14000, 26000), out=(150, 0.4, 20, 400),
                                 t0=120, t1=260, ramp=5)]))
add("thu-sgl-summarize-l40s", "serving", "prefill_interference", None, (100, 230),
    "SGLang Qwen2.5-7B on an L40S: a document-summarisation batch with 10k prompts shares "
    "the chat endpoint; ITL doubles",
    S(engine="sglang", gpu="L40S", gpus=1, tp=1, model="qwen7b", duration=300, budget=4096,
      cpus=48, tenants=[chat(3.0), Tenant(0.35, prompt=(10000, 0.2, 6000, 16000),
                                          out=(300, 0.3, 50, 600), t0=100, t1=230, ramp=5)]))
add("fri-70b-32k-prefill", "serving", "prefill_interference", None, (150, 270),
    "vLLM Llama-3.3-70B TP4 on H200s: a legal-docs tenant's 32k prompts stall decode",
    S(engine="vllm", gpu="H200", gpus=4, tp=4, model="llama70b", duration=330, cpus=192,
      tenants=[chat(4.0), Tenant(0.3, prompt=(32000, 0.1, 24000, 36000), out=(300, 0.3, 50, 600),
                                 t0=150, t1=270, ramp=4)]))

add("sat-vllm-tp4-gpu3-slow", "serving", "collective_straggler", (3,), (140, 260),
    "vLLM Llama-3.3-70B TP4 on H100s: GPU 3 reports HW slowdown and runs at 60% clock; the "
    "other three wait in the all-reduce every layer",
    S(engine="vllm", gpu="H100", gpus=4, tp=4, model="llama70b", duration=320, cpus=192,
      tenants=[chat(4.5)],
      events=[(140, 260, "clock3", 0.6), (140, 260, "reasons3", ("hw slowdown",))]))

# =============================================================== pathologies: training

add("tue-fsdp8-rank5-thermal", "training", "collective_straggler", (5,), (150, 300),
    "FSDP fine-tune of an 8B model on 8 H100s: rank 5's GPU overheats (cold plate) and "
    "clocks down; the other ranks wait in NCCL",
    T(gpu="H100", gpus=8, duration=360, step_s=1.1, comm_s=0.12, loader_s=0.3, counter="tokens",
      batch=4, seq=4096, cmd=rank_cmd(8, "finetune.py --fsdp full_shard"), params=8e9,
      events=[(150, 300, "clock5", 0.68, 20), (150, 300, "reasons5", ("thermal (hw)",)),
              (110, 300, "temp5", 28.0)]))
add("wed-ddp4-a100-hw-slowdown", "training", "collective_straggler", (2,), (120, 250),
    "DDP on 4 A100s, no metrics endpoint: GPU 2 asserts HW slowdown (PSU), its steps run 1.5x "
    "longer and the peers spin in all-reduce",
    T(gpu="A100", gpus=4, duration=330, step_s=0.42, tick=2.0, comm_s=0.05, loader_s=0.1,
      cmd=rank_cmd(4, "train_ddp.py --model resnet152 --bs 128"), batch=128, seq=0,
      tensor=0.45, events=[(120, 250, "clock2", 0.62), (120, 250, "reasons2", ("hw slowdown",))]))
add("thu-ddp2-l40s-rank1-host", "training", "collective_straggler", (1,), (130, 270),
    "DDP on 2 L40S: rank 1's process is slowed on the host (its launch thread shares cores "
    "with its own loader workers after a CPU-affinity change); rank 0 waits in NCCL",
    T(gpu="L40S", gpus=2, duration=330, step_s=0.5, comm_s=0.06, loader_s=0.15, counter="samples",
      batch=32, seq=0, host_launch_s=0.3, cpus=48, cmd=rank_cmd(2, "train.py --config vit_l.yaml"),
      events=[(130, 270, "hostslow1", 2.1)]))

add("mon-h200-s3-stall", "training", "input_stall", None, (140, 240),
    "8xH200 pre-training shard, no metrics endpoint: the FUSE-mounted object store slows; "
    "loader workers block on reads, every rank idles between steps",
    T(gpu="H200", gpus=8, duration=330, step_s=0.9, comm_s=0.1, loader_s=0.5, workers=6, tick=2.0,
      cmd=rank_cmd(8, "pretrain.py --data s3fs:/mnt/corpus"), events=[
          (140, 240, "loader", 4.5, 8), (140, 240, "storage", True)]))
add("wed-a10g-jpeg-decode", "training", "input_stall", None, (110, 220),
    "Fine-tuning a vision model on one A10G: a shard of 12 MP JPEGs makes the 4 loader "
    "workers CPU-bound; samples/s falls, GPU idles between steps",
    T(gpu="A10G", gpus=1, duration=300, step_s=0.35, loader_s=0.25, workers=4, batch=64, seq=0,
      counter="samples", cpus=8, cmd="python train_vision.py --data /data/shards --workers 4",
      tensor=0.4, events=[(110, 220, "loader", 2.6, 5)]))
add("fri-h100-stream-mild", "training", "input_stall", None, (120, 280),
    "4xH100 SFT with a streaming dataset: the object-store bandwidth is throttled, data "
    "wait adds ~35% to each step (mild)",
    T(gpu="H100", gpus=4, duration=340, step_s=0.8, comm_s=0.08, loader_s=0.75, counter="tokens",
      batch=8, seq=2048, cmd=rank_cmd(4, "sft.py --streaming"), events=[
          (120, 280, "loader", 1.55, 10), (120, 280, "storage", True)]))

add("tue-h100-trainer-jitter", "training", "host_launch_jitter", None, (130, 250),
    "A launch-bound small-model trainer on an H100 with eBPF on: an IRQ storm on its core "
    "deschedules the launching thread; cuLaunchKernel tails reach milliseconds",
    T(gpu="H100", gpus=1, duration=320, step_s=0.06, loader_s=0.01, workers=2, batch=256, seq=0,
      host_launch_s=0.045, ebpf=True, tensor=0.3, sm=0.7,
      cmd="python train_small.py --model mlp-mixer-s --bs 256",
      events=[(130, 250, "jitter", (0.04, 0.004)), (130, 250, "hostslow0", 1.9),
              (130, 250, "invol", 900.0)]))

add("tue-fsdp8-cpu-neighbour", "training", "host_cpu_contention", None, (150, 290),
    "DDP on 8 A100s: another team's CPU preprocessing job lands on the node; run queue past "
    "the core count, PSI 50%, the ranks' launch threads starve",
    T(gpu="A100", gpus=8, duration=340, step_s=0.3, comm_s=0.05, loader_s=0.1, counter="samples",
      batch=64, seq=0, host_launch_s=0.16, cpus=128, cmd=rank_cmd(8, "train.py --arch convnext_l"),
      events=[(150, 290, "cpu_share", 0.3, 8), (150, 290, "psi", 52.0), (150, 290, "rq", 190.0),
              (150, 290, "invol", 2500.0), (150, 290, "noise_cores", 110.0)]))

add("thu-h200-metric-loop", "training", "tiny_kernels", None, (120, 300),
    "Single-H200 fine-tune with a samples counter: a new callback computes per-sample "
    "metrics in a Python loop every step; util stays ~95%, SM activity collapses",
    T(gpu="H200", gpus=1, duration=330, step_s=0.55, loader_s=0.1, counter="samples", batch=16,
      seq=2048, host_launch_s=0.1, cmd="python finetune.py --callbacks per_sample_metrics",
      events=[(120, 300, "tiny", 0.8)]))

add("sat-ddp8-power-brake", "training", "throttling", None, (160, 230),
    "8xH100 pre-training: the rack's power brake engages (facility event) on every GPU alike; "
    "clocks halve for a minute",
    T(gpu="H100", gpus=8, duration=300, step_s=1.0, comm_s=0.1, loader_s=0.3, counter="tokens",
      batch=8, seq=4096, cmd=rank_cmd(8, "pretrain.py --config 13b.yaml"),
      events=[(160, 230, "clock", 0.5), (160, 230, "reasons", ("power brake",))]))

add("mon-l40s-second-tenant", "training", "gpu_shared", None, (130, 270),
    "A LoRA fine-tune on an L40S: a data scientist's eval script lands on the same GPU and "
    "takes ~40% of its time slices",
    T(gpu="L40S", gpus=1, duration=320, step_s=0.7, loader_s=0.2, counter="samples", batch=8,
      seq=2048, cpus=48, cmd="python lora_ft.py --base llama-3.1-8b", mem_frac=0.6,
      others=[(130, 270, 0, "python3", "python3 eval_rag.py --model /models/qwen7b", 14 * GiB,
               0.4, 0.6)]))

# =============================================================== pathologies: other CUDA jobs

add("wed-notebook-elementwise", "other", "tiny_kernels", None, (140, 300),
    "A Jupyter kernel on an H100 moves from batched matmuls to a per-row Python loop of "
    "element-wise ops: GPU-Util 97%, SM activity under 10%",
    T(gpu="H100", gpus=1, duration=320, step_s=0.2, loader_s=0.0, workers=0, batch=1, seq=0,
      host_launch_s=0.03, family_kind="other", proc_name="python3", user="jdoe",
      cmd="/opt/conda/bin/python3 -m ipykernel_launcher -f /run/jupyter/kernel-3f1.json",
      mem_frac=0.35, events=[(140, 300, "tiny", 0.95)]))
add("fri-embed-bs1", "other", "tiny_kernels", None, (110, 250),
    "A Ray embedding worker on an H200 (no metrics) falls back to batch size 1 after a "
    "config push: thousands of tiny kernels per second",
    T(gpu="H200", gpus=1, duration=300, step_s=0.25, loader_s=0.05, workers=2, batch=256, seq=512,
      host_launch_s=0.04, family_kind="other", proc_name="ray::EmbedWorker",
      cmd="ray::EmbedWorker.embed_batch", mem_frac=0.2, events=[(110, 250, "tiny", 0.85)]))
add("thu-a100-embed-hwslow", "other", "throttling", None, (120, 240),
    "A batch embedding job on one A100 (no metrics): HW slowdown asserted, clocks at 70%",
    T(gpu="A100", gpus=1, duration=300, step_s=0.3, loader_s=0.08, workers=4, batch=512, seq=256,
      family_kind="other", proc_name="python3", cmd="python3 embed_corpus.py --bs 512",
      mem_frac=0.5, events=[(120, 240, "clock", 0.7), (120, 240, "reasons", ("hw slowdown",))]))
add("sun-h200-notebook-neighbour", "other", "gpu_shared", None, (150, 280),
    "A nightly batch-scoring job on an H200 shares its GPU with a notebook that starts "
    "training a model; per-process util shows two tenants",
    T(gpu="H200", gpus=1, duration=330, step_s=0.4, loader_s=0.1, workers=4, batch=256, seq=0,
      family_kind="other", proc_name="python3", cmd="python3 score_nightly.py --shard 7",
      mem_frac=0.4, others=[(150, 280, 0, "python3",
                             "/opt/conda/bin/python3 -m ipykernel_launcher -f kernel-8a.json",
                             40 * GiB, 0.5, 0.7)]))

# =============================================================== more serving pathologies

add("tue-vllm-irq-jitter", "serving", "host_launch_jitter", None, (130, 250),
    "vLLM on an H100 with eBPF probes on: NIC interrupts moved onto the EngineCore's core; "
    "cudaGraphLaunch calls are descheduled for milliseconds",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=320, ebpf=True,
      tenants=[chat(6.0)], events=[(130, 250, "jitter", (0.3, 0.008)), (130, 250, "invol", 700.0),
                                  (130, 250, "psi", 4.0)]))
add("sat-sgl-jitter-mild", "serving", "host_launch_jitter", None, (120, 260),
    "SGLang Qwen2.5-7B on an H200 with eBPF on: a co-located monitoring agent preempts the "
    "scheduler thread now and then (mild)",
    S(engine="sglang", gpu="H200", gpus=1, tp=1, model="qwen7b", duration=320, ebpf=True,
      tenants=[chat(8.0)], events=[(120, 260, "jitter", (0.15, 0.006)), (120, 260, "invol", 350.0)]))

add("wed-l40s-pod-quota", "serving", "host_cpu_contention", None, (120, 250),
    "vLLM Mistral-7B on an L40S in a pod limited to 4 CPUs: a burst of long prompts makes "
    "tokenisation eat the quota; CFS throttling starves the EngineCore",
    S(engine="vllm", gpu="L40S", gpus=1, tp=1, model="mistral7b", duration=320, cpus=48, quota=4.0, tick=2.0,
      tenants=[chat(3.0)], host_step_s=0.02,
      events=[(120, 250, "cpu_share", 0.25), (120, 250, "throttled", 0.75), (120, 250, "psi", 6.0),
              (120, 250, "invol", 600.0)]))
add("sun-llamacpp-pip-build", "serving", "host_cpu_contention", None, (140, 260),
    "llama.cpp on a g5.2xlarge (A10G, 8 vCPUs): someone runs a parallel C++ build on the "
    "box; run queue 20, PSI 60%",
    S(engine="llamacpp", gpu="A10G", gpus=1, tp=1, model="llama8b-q4", duration=320, cpus=8,
      max_seqs=4, budget=512, mfu_metrics=False, tenants=[short(0.35)], host_step_s=0.006,
      events=[(140, 260, "cpu_share", 0.3), (140, 260, "psi", 62.0), (140, 260, "rq", 20.0),
              (140, 260, "invol", 1500.0), (140, 260, "noise_cores", 7.0)]))

add("mon-h200-agent-contexts", "serving", "memory_bandwidth", None, (130, 300),
    "vLLM Llama-3.1-8B on an H200: an agent tenant arrives with 30k-token, mostly cached "
    "contexts; each decode step reads tens of GB of KV, ITL doubles, HBM near saturated",
    S(engine="vllm", gpu="H200", gpus=1, tp=1, model="llama8b", duration=330,
      tenants=[chat(5.0), Tenant(0.6, prompt=(30000, 0.1, 22000, 38000), out=(500, 0.3, 200, 1000),
                                 cached=0.93, t0=130, t1=300, ramp=20)]))
add("thu-sgl-moe-longctx", "serving", "memory_bandwidth", None, (120, 300),
    "SGLang Qwen3-30B-A3B on an H100: the MoE's tiny active compute makes long-context "
    "sessions (cached 20k prefixes) HBM-bound",
    S(engine="sglang", gpu="H100", gpus=1, tp=1, model="qwen3moe-fp8", duration=320, tick=2.0,
      tenants=[chat(6.0), Tenant(0.5, prompt=(18000, 0.15, 12000, 26000), out=(600, 0.3, 200, 1200),
                                 cached=0.9, t0=120, t1=320, ramp=20)]))
add("fri-a100-multiturn-mild", "serving", "memory_bandwidth", None, (140, 320),
    "vLLM Qwen2.5-32B TP2 on A100s: multi-turn sessions grow their contexts (prefix-cached); "
    "ITL +50%, KV usage below 80%",
    S(engine="vllm", gpu="A100", gpus=2, tp=2, model="qwen32b", duration=330, mfu_metrics=False,
      tenants=[chat(1.8), Tenant(0.22, prompt=(12000, 0.2, 6000, 18000), out=(500, 0.3, 100, 1000),
                                 cached=0.92, t0=140, t1=330, ramp=25)]))

add("tue-l40s-thermal", "serving", "throttling", None, (150, 300),
    "vLLM Llama-3.1-8B on an L40S: a failed fan in the chassis; temperature climbs past 87 C "
    "and the clocks drop to ~60%",
    S(engine="vllm", gpu="L40S", gpus=1, tp=1, model="llama8b", duration=330, cpus=48,
      tenants=[chat(2.2)], events=[(110, 330, "temp", 30.0), (150, 330, "clock", 0.6, 15),
                                   (150, 330, "reasons", ("thermal (sw)",))]))

add("mon-vllm-small-pool", "serving", "kv_pressure", None, (140, 300),
    "vLLM Llama-3.1-8B on an H100 started with --gpu-memory-utilization 0.45 (sharing plan); "
    "a long-output tenant fills the KV pool: preemptions, queue grows",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=330, mem_util=0.45,
      pool_tokens=150000, tenants=[chat(4.0), Tenant(1.6, prompt=(2500, 0.3, 800, 6000),
                                                     out=(1500, 0.3, 400, 3000), t0=120, ramp=20)]))
add("wed-sgl-retract", "serving", "kv_pressure", None, (150, 320),
    "SGLang Qwen2.5-32B TP2 on A100s: a summarisation burst with long outputs; retractions "
    "climb, the queue builds",
    S(engine="sglang", gpu="A100", gpus=2, tp=2, model="qwen32b", duration=330, pool_tokens=160000,
      mem_util=0.8, reserve=0.1, tenants=[chat(2.5), Tenant(0.9, **SUMM, t0=130, ramp=20)]))
add("sat-h200-70b-fp8-mild", "serving", "kv_pressure", None, (160, 260),
    "vLLM Llama-3.3-70B FP8 TP2 on H200s: a traffic surge pushes KV to 100% for ~100 s; a "
    "few preemptions and a short queue (mild)",
    S(engine="vllm", gpu="H200", gpus=2, tp=2, model="llama70b-fp8", duration=320, pool_tokens=120000,
      tenants=[chat(3.0, out=(600, 0.5, 50, 2000))], events=[(160, 260, "rate", 1.5, 5)]))

add("tue-a10g-notebook-on-vllm", "serving", "gpu_shared", None, (140, 280),
    "vLLM Mistral-7B on an A10G: a notebook kernel grabs 1.5 GB and runs training steps on "
    "the same GPU; the engine's steps stretch",
    S(engine="vllm", gpu="A10G", gpus=1, tp=1, model="mistral7b", duration=320, cpus=48,
      mem_util=0.85, mfu_metrics=False, tenants=[short(2.0)],
      events=[(140, 280, "share", 0.4)],
      other_procs=[(140, 280, 0, "python3", "/opt/conda/bin/python3 -m ipykernel_launcher",
                    int(1.5 * GiB), 0.4)]))

add("wed-eagle-language-switch", "serving", "spec_decode_rejected", None, (140, 270),
    "vLLM Llama-3.1-8B with EAGLE (k=3) on an H100: a tenant switches to Japanese support "
    "traffic; acceptance falls from 0.75 to 0.2",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=320, spec=("eagle", 3, 0.75),
      tenants=[chat(5.0)], events=[(140, 270, "accept", 0.2, 10)]))
add("thu-sgl-eagle-70b", "serving", "spec_decode_rejected", None, (130, 290),
    "SGLang Llama-3.3-70B FP8 TP2 with EAGLE on H200s: after a system-prompt change the "
    "draft model's acceptance drops from 0.8 to 0.35",
    S(engine="sglang", gpu="H200", gpus=2, tp=2, model="llama70b-fp8", duration=320,
      spec=("eagle", 3, 0.8), tenants=[chat(3.0)], events=[(130, 290, "accept", 0.35, 10)]))
add("sun-llamacpp-draft", "serving", "spec_decode_rejected", None, (120, 260),
    "llama.cpp with a draft model on an A10G: a user pastes code in another language; the "
    "draft's tokens are almost all rejected",
    S(engine="llamacpp", gpu="A10G", gpus=1, tp=1, model="llama8b-q4", duration=300, cpus=8,
      max_seqs=4, budget=512, spec=("draft", 8, 0.78), tenants=[short(0.4)],
      events=[(120, 260, "accept", 0.15, 5)]))

# =============================================================== healthy look-alikes

add("ok-morning-ramp", "serving", None, None, None,
    "vLLM chat on an H100: the morning ramp, traffic x3 over four minutes, no queue",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=330,
      tenants=[chat(2.0)], events=[(60, 330, "rate", 3.0, 200)]))
add("ok-evening-fall", "serving", None, None, None,
    "SGLang Qwen2.5-7B on an H200: evening, traffic falls to a trickle",
    S(engine="sglang", gpu="H200", gpus=1, tp=1, model="qwen7b", duration=330,
      tenants=[chat(9.0)], events=[(80, 330, "rate", 0.12, 180)]))
add("ok-a100-diurnal-drift", "serving", None, None, None,
    "vLLM Qwen2.5-32B TP2 on A100s: slow diurnal growth with ordinary noise",
    S(engine="vllm", gpu="A100", gpus=2, tp=2, model="qwen32b", duration=360, mfu_metrics=False, tick=2.0,
      tenants=[chat(1.6)], diurnal=0.08))
add("ok-model-reload", "serving", None, None, None,
    "vLLM on an H100: the platform rolls a new model revision; the engine restarts, VRAM "
    "empties and refills, CUDA graphs are captured, counters start from zero",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=360,
      tenants=[chat(5.0)], restart=(140, 215)))
add("ok-cold-start-l40s", "serving", None, None, None,
    "vLLM Mistral-7B on an L40S starts: weights load, profiling and CUDA graph capture, then "
    "traffic ramps in from the router",
    S(engine="vllm", gpu="L40S", gpus=1, tp=1, model="mistral7b", duration=300, cpus=48,
      start_cold=45, tenants=[chat(3.0, t0=45, ramp=60)]))
add("ok-rag-long-context-normal", "serving", None, None, None,
    "vLLM Llama-3.1-8B on an H200 serving a RAG product: 14k-token prompts all along; this is "
    "what the endpoint always looks like",
    S(engine="vllm", gpu="H200", gpus=1, tp=1, model="llama8b", duration=320,
      tenants=[Tenant(0.9, **RAG), chat(1.5)]))
add("ok-one-slow-request", "serving", None, None, None,
    "vLLM chat on an H100: one legitimate request with max_tokens=8000 (n=1) runs for minutes; "
    "nobody else is slowed",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=330,
      tenants=[chat(5.0)], specials=[Special(110, 1200, 7800, max_tokens=8000)]))
add("ok-kv-near-full", "serving", None, None, None,
    "SGLang Llama-3.1-8B on an H100 with a small pool: a fixed-length generation workload "
    "keeps KV at 60-85%; the scheduler's reservation admits only what fits, no retractions",
    S(engine="sglang", gpu="H100", gpus=1, tp=1, model="llama8b", duration=320, pool_tokens=85000,
      max_seqs=96, reserve=1.0,
      tenants=[chat(2.4, prompt=(2000, 0.3, 500, 4000), out=(800, 0.0, 800, 800))]))
add("ok-batch-job-starts", "serving", None, None, None,
    "vLLM on an H100: an offline batch job (64 concurrent clients) starts at 2 minutes; "
    "throughput doubles, latency shifts a little",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=330,
      tenants=[chat(4.0), Tenant(2.6, prompt=(1200, 0.3, 300, 3000), out=(400, 0.3, 100, 800),
                                 t0=120, ramp=15)]))
add("ok-spec-accept-drift", "serving", None, None, None,
    "vLLM with EAGLE on an H200: acceptance drifts 0.72 -> 0.62 with the traffic mix; normal",
    S(engine="vllm", gpu="H200", gpus=1, tp=1, model="llama8b", duration=320, spec=("eagle", 3, 0.72),
      tenants=[chat(5.0)], events=[(100, 320, "accept", 0.62, 120)]))
add("ok-llamacpp-interactive", "serving", None, None, None,
    "llama.cpp on an A10G serving a small team: bursts of requests, idle gaps",
    S(engine="llamacpp", gpu="A10G", gpus=1, tp=1, model="llama3b-q4", duration=300, cpus=8,
      max_seqs=4, budget=512, mfu_metrics=False, tenants=[short(0.25)]))
add("ok-power-capped-offline", "serving", None, None, None,
    "vLLM offline batch on an H100 whose power limit the facility set to 450 W: 'power cap' "
    "set and clocks held down all along, steady",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=300, max_seqs=256,
      power_limit=450.0, tenants=[Tenant(8.0, prompt=(1500, 0.3, 400, 4000), out=(500, 0.3, 100, 1000))]))
add("ok-70b-new-client", "serving", None, None, None,
    "vLLM Llama-3.3-70B TP4 on H100s: a new client is onboarded, traffic steps up 1.8x",
    S(engine="vllm", gpu="H100", gpus=4, tp=4, model="llama70b", duration=330, cpus=192,
      tenants=[chat(2.5)], events=[(150, 330, "rate", 1.8, 10)]))
add("ok-short-burst", "serving", None, None, None,
    "vLLM on an H100 with prefix-cached RAG: a 30 s traffic burst is absorbed without a queue",
    S(engine="vllm", gpu="H100", gpus=1, tp=1, model="llama8b", duration=300,
      tenants=[Tenant(0.5, **RAG), chat(3.0)], events=[(150, 180, "rate", 1.9, 3)]))

add("ok-ddp8-checkpoints", "training", None, None, None,
    "DDP pre-training on 8 H100s: rank 0 saves a checkpoint every 2 minutes while the other "
    "ranks wait in the barrier",
    T(gpu="H100", gpus=8, duration=330, step_s=0.9, comm_s=0.1, loader_s=0.3, counter="tokens",
      batch=8, seq=4096, cmd=rank_cmd(8, "pretrain.py --save-every 120s"), ckpt=(110, 120, 14)))
add("ok-a100-eval-phases", "training", None, None, None,
    "DDP on 4 A100s with evaluation every 2 minutes for 25 s (no backward, no all-reduce)",
    T(gpu="A100", gpus=4, duration=330, step_s=0.45, comm_s=0.05, loader_s=0.12, counter="samples",
      batch=64, seq=0, cmd=rank_cmd(4, "train.py --eval-every 500"), evals=(100, 120, 25)))
add("ok-seq-len-warmup", "training", None, None, None,
    "Single-H200 pre-training with a sequence-length warmup 1k -> 4k tokens: steps lengthen, "
    "tokens/s rises",
    T(gpu="H200", gpus=1, duration=330, step_s=0.6, loader_s=0.1, counter="tokens", batch=8,
      seq=4096, cmd="python pretrain.py --seq-warmup 1024:4096", events=[
          (0, 90, "seq_scale", 0.3), (90, 240, "seq_scale", 1.0, 150), (240, 330, "seq_scale", 1.0)]))
add("ok-fsdp-sharded-ckpt", "training", None, None, None,
    "FSDP on 8 H200s, no metrics: sharded checkpoint every 150 s; all ranks pause to write",
    T(gpu="H200", gpus=8, duration=330, step_s=1.2, comm_s=0.15, loader_s=0.3, tick=2.0,
      cmd=rank_cmd(8, "train_fsdp.py --sharded-ckpt"), ckpt=(120, 150, 18), ckpt_sharded=True))
add("ok-l40s-ddp-power-capped", "training", None, None, None,
    "DDP on 2 L40S with the board power limit at 250 W: 'power cap' set all along, steady",
    T(gpu="L40S", gpus=2, power_limit=250.0, duration=300, step_s=0.6, comm_s=0.08, loader_s=0.2, cpus=48,
      cmd=rank_cmd(2, "train.py --config unet.yaml"), tensor=0.75, sm=0.95, dram=0.5))
add("ok-h100-ddp4-steady", "training", None, None, None,
    "DDP on 4 H100s with a tokens counter: ordinary step-to-step noise, one rank consistently "
    "2% slower (normal silicon spread)",
    T(gpu="H100", gpus=4, duration=300, step_s=0.7, comm_s=0.07, loader_s=0.2, counter="tokens",
      batch=8, seq=2048, cmd=rank_cmd(4, "sft.py"), events=[(0, 300, "slow1", 1.02)]))
add("ok-notebook-bursts", "other", None, None, None,
    "An interactive notebook on an H100: the user runs cells (bursts of work), then reads",
    T(gpu="H100", gpus=1, duration=300, step_s=0.3, loader_s=0.0, workers=0, batch=32, seq=0,
      family_kind="other", proc_name="python3", user="asmith",
      cmd="/opt/conda/bin/python3 -m ipykernel_launcher -f kernel-77.json", mem_frac=0.3,
      events=[(0, 40, "clock", 1.0), (40, 95, "seq_scale", 1.0), (95, 140, "idle", True),
              (180, 240, "idle", True)]))
add("ok-a10g-job-starts", "other", None, None, None,
    "A batch transcription job starts on an idle A10G two minutes in: VRAM fills, util rises",
    T(gpu="A10G", gpus=1, duration=300, step_s=0.4, loader_s=0.1, workers=2, batch=16, seq=0,
      family_kind="other", proc_name="python3", cmd="python3 transcribe.py --model whisper-large",
      cpus=8, mem_frac=0.7, mem_ramp=(120, 15), start_t=125))
