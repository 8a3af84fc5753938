"""The traces of corpus P: what a platform team running a mixed inference-and-training fleet
meets week to week.  Each entry builds a World; ``window`` is when the cause is materially on
(seconds from the trace's start), or a function of the built engines for faults whose end
the simulation decides (an oversized request ends when it finishes)."""

from __future__ import annotations

from .build import (contended_host, healthy_host, job, lognorm, mix, ramp, serve_box, switch,
                    traffic, train_box)

ENTRIES = []


def entry(name, family, cause, window=None, culprit=None, note=""):
    def deco(fn):
        ENTRIES.append(dict(name=name, family=family, cause=cause, window=window,
                            culprit=culprit, note=note, fn=fn))
        return fn
    return deco


def special_window(engines, start, fallback_end):
    """From the first special request's arrival to the last one's completion."""
    recs = [rec for e in engines for rec in e.special_log]
    if not recs:
        return (start, fallback_end)
    end = max((rec[1] if rec[1] is not None else fallback_end) for rec in recs)
    return (min(rec[0] for rec in recs), end)


CHAT_PROMPT = mix([(0.6, lognorm(600, 0.8, 16, 8000)), (0.3, lognorm(1800, 0.6, 200, 16000)),
                   (0.1, lognorm(4000, 0.5, 1000, 30000))])
CHAT_OUT = mix([(0.7, lognorm(180, 0.8, 4, 2000)), (0.3, lognorm(600, 0.6, 20, 4000))])
AGENT_PROMPT = mix([(0.8, lognorm(3500, 0.5, 500, 20000)), (0.2, lognorm(9000, 0.4, 2000, 32000))])
SHORT_OUT = lognorm(90, 0.7, 4, 800)

# =============================================================== oversized_request


@entry("os-vllm032-h100-n16-logprobs", "vllm-serving", "oversized_request",
       window=lambda es: special_window(es, 95, 230),
       note="vLLM 0.32 (Llama 3.1 8B, H100): one client sends n=16, logprobs=20, max_tokens=1200;"
            " every co-scheduled request's inter-token latency climbs while tokens/s hold")
def _os1(rng, t0):
    w, es = serve_box("os1", rng, version="0.32", gpu="H100", rate=traffic(rng, 4.5),
                      prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=260, t0=t0,
                      specials=[(95.0, dict(prompt=540, out=1100, n=16, extra_ms=1.4,
                                            max_tokens=1200))])
    return w, es


@entry("os-sglang-h200-tp2-toplogprobs", "sglang-serving", "oversized_request",
       window=lambda es: special_window(es, 100, 240),
       note="SGLang (Qwen3-32B TP2 on H200): a batch-eval client asks n=8, top_logprobs_num=20 "
            "with max_new_tokens 3000 on a 6k-token prompt; decode batch stalls on the logprob "
            "gathers, realtime tokens/s dips about a third")
def _os2(rng, t0):
    w, es = serve_box("os2", rng, kind="sglang", gpu="H200", n_gpus=2, tp=2, model="qwen32b",
                      rate=traffic(rng, 2.5), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=270,
                      t0=t0, specials=[(100.0, dict(prompt=6000, out=2200, n=8, extra_ms=2.5,
                                                    max_tokens=3000))])
    return w, es


@entry("os-vllm011-a100-n12-longgen", "vllm-serving", "oversized_request",
       window=lambda es: special_window(es, 90, 250),
       note="vLLM 0.11 on A100 (no GPM): a research notebook sends n=12, logprobs=5, "
            "max_tokens=16000 twice; mild (ITL ~1.5-2x), GPU-Util unchanged")
def _os3(rng, t0):
    w, es = serve_box("os3", rng, version="0.11", gpu="A100", model="qwen7b",
                      rate=traffic(rng, 1.6), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=270,
                      t0=t0, scrape=2.0,
                      specials=[(90.0, dict(prompt=900, out=1500, n=12, extra_ms=1.5,
                                            max_tokens=16000)),
                                (150.0, dict(prompt=900, out=1300, n=12, extra_ms=1.5,
                                             max_tokens=16000))])
    return w, es


@entry("os-llamacpp-l40s-nprobs", "llamacpp-serving", "oversized_request",
       window=lambda es: special_window(es, 85, 220),
       note="llama-server (4 slots, L40S): one request with n_probs=100 and a long generation; the"
            " server loop sorts the full vocabulary on the CPU every token, all slots slow")
def _os4(rng, t0):
    w, es = serve_box("os4", rng, kind="llamacpp", gpu="L40S", model="qwen14b_q4",
                      rate=traffic(rng, 0.35), prompt=lognorm(600, 0.7, 20, 6000),
                      out=lognorm(350, 0.6, 10, 2000), hit=0.5, dur=250, t0=t0,
                      pool_tokens=32768, extra_gpu_frac=0.05,
                      specials=[(85.0, dict(prompt=700, out=1500, n=1, extra_ms=14.0,
                                            max_tokens=2048))])
    return w, es


# =============================================================== prefill_interference


@entry("pi-vllm032-h100-rag-tenant", "vllm-serving", "prefill_interference", window=(80, 200),
       note="vLLM 0.32 chunked prefill (8192-token budget): a RAG tenant starts sending 30-60k "
            "token prompts (no prefix hits); every step carries a prefill chunk, decode ITL x10")
def _pi1(rng, t0):
    base = traffic(rng, 4.5)
    longp = lognorm(42000, 0.25, 20000, 90000)
    prompt = lambda r, t: longp(r, t) if 80 <= t < 200 and r.random() < 0.07 else CHAT_PROMPT(r, t)  # noqa
    rate = lambda t: base(t) * (1.12 if 80 <= t < 200 else 1.0)  # noqa: E731
    return serve_box("pi1", rng, gpu="H100", rate=rate, prompt=prompt, out=CHAT_OUT, hit=0.5,
                     dur=260, t0=t0)


@entry("pi-sglang-h200-longdocs-mild", "sglang-serving", "prefill_interference",
       window=(90, 210),
       note="SGLang (separate prefill batches) on H200: a summarisation job adds 12-20k token "
            "prompts at ~0.4/s; decodes wait behind prefill batches, ITL p99 up, gen tok/s -30%")
def _pi2(rng, t0):
    base = traffic(rng, 7.0)
    longp = lognorm(22000, 0.2, 12000, 32000)
    prompt = lambda r, t: longp(r, t) if 90 <= t < 210 and r.random() < 0.07 else CHAT_PROMPT(r, t)  # noqa
    return serve_box("pi2", rng, kind="sglang", gpu="H200", model="qwen7b", rate=base,
                     prompt=prompt, out=CHAT_OUT, hit=0.45, dur=270, t0=t0)


@entry("pi-llamacpp-a10g-pasted-docs", "llamacpp-serving", "prefill_interference",
       window=(75, 190),
       note="llama-server on an A10G (no GPM), 4 slots: one user pastes 12-20k token documents "
            "back to back; n_batch 2048 prompt work rides in every decode iteration")
def _pi3(rng, t0):
    base = traffic(rng, 0.5)
    longp = lognorm(15000, 0.2, 9000, 20000)
    prompt = lambda r, t: longp(r, t) if 75 <= t < 190 and r.random() < 0.45 else lognorm(  # noqa
        500, 0.7, 20, 4000)(r, t)
    return serve_box("pi3", rng, kind="llamacpp", gpu="A10G", model="llama8b_q8", rate=base,
                     prompt=prompt, out=lognorm(260, 0.6, 10, 1500), hit=0.3, dur=250, t0=t0,
                     pool_tokens=65536, max_seqs=4)


@entry("pi-vllm010-a100x4-tp4-70b-slowscrape", "vllm-serving", "prefill_interference",
       window=(90, 230),
       note="vLLM 0.10 TP4 Llama 3.3 70B on 4x A100 (2048-token budget), engine page every 5 s: "
            "an agent framework sends 20-30k token tool transcripts; ITL triples")
def _pi4(rng, t0):
    base = traffic(rng, 0.9)
    longp = lognorm(24000, 0.2, 15000, 32000)
    prompt = lambda r, t: longp(r, t) if 90 <= t < 230 and r.random() < 0.1 else CHAT_PROMPT(r, t)  # noqa
    return serve_box("pi4", rng, version="0.10", gpu="A100", n_gpus=4, tp=4, model="llama70b",
                     rate=base, prompt=prompt, out=CHAT_OUT, hit=0.5, dur=280, t0=t0, scrape=5.0)


# =============================================================== collective_straggler


@entry("cs-ddp-h100x8-hot-expert-gpu5", "training", "collective_straggler", window=(100, 240),
       culprit=(5,),
       note="8x H100 expert-parallel MoE fine-tune with a tokens counter: after a data-mix change "
            "rank 5 hosts the hot experts and computes 1.7x longer; the other seven spin in NCCL")
def _cs1(rng, t0):
    slow = lambda t, g: (1 / 1.7 if g == 5 and t >= 100 else 1.0)  # noqa: E731
    return train_box("cs1", rng, gpu="H100", n_gpus=8, comp_s=0.42, comm_s=0.05, batch=65536,
                     unit="tokens", slow_fn=slow, dur=260, t0=t0, scrape=5.0)


@entry("cs-fsdp-a100x4-gpu2-nocounter", "training", "collective_straggler", window=(80, 220),
       culprit=(2,),
       note="FSDP on 4x A100 (no GPM, no throughput counter): rank 2's shard gets the long "
            "sequences after a packing bug; GPU-Util stays ~100% on all four (NCCL spins), only "
            "power and memory-controller util tell rank 2 apart")
def _cs2(rng, t0):
    slow = lambda t, g: (1 / 1.5 if g == 2 and 80 <= t < 220 else 1.0)  # noqa: E731
    return train_box("cs2", rng, gpu="A100", n_gpus=4, comp_s=0.9, comm_s=0.12, batch=16,
                     counter=False, slow_fn=slow, dur=250, t0=t0, tick=2.0)


@entry("cs-vllm-h200x4-tp4-gpu1", "vllm-serving", "collective_straggler", window=(90, 250),
       culprit=(1,),
       note="vLLM TP4 (Llama 3.3 70B, H200): GPU 1 runs its kernels 1.6x slower (a degraded "
            "board: retired HBM rows, ECC replay) with clocks normal; the other ranks wait in "
            "every all-reduce, ITL +50%")
def _cs3(rng, t0):
    speed = lambda t, g: (1 / 1.6 if g == 1 and t >= 90 else 1.0)  # noqa: E731
    return serve_box("cs3", rng, gpu="H200", n_gpus=4, tp=4, model="llama70b",
                     rate=traffic(rng, 2.5), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5,
                     dur=260, t0=t0, speed_fn=speed)


@entry("cs-ddp-h100x2-finetune-mild", "training", "collective_straggler", window=(90, 250),
       culprit=(1,),
       note="2x H100 DDP LoRA fine-tune with samples counter: rank 1 ~1.35x slower "
            "(variable-length batches without packing on that rank); throughput -25%")
def _cs4(rng, t0):
    slow = lambda t, g: (1 / 1.35 if g == 1 and t >= 90 else 1.0)  # noqa: E731
    return train_box("cs4", rng, gpu="H100", n_gpus=2, comp_s=0.3, comm_s=0.03, batch=8,
                     unit="samples", slow_fn=slow, dur=260, t0=t0, scrape=2.0, cpus=64)


# =============================================================== input_stall


@entry("is-ddp-h100x4-dataloader-oom", "training", "input_stall", window=(90, 240),
       note="4x H100 DDP with samples counter: dataloader workers OOM-killed and respawned with "
            "num_workers=2; every step waits ~0.3 s for its batch, GPU-Util falls to ~50%")
def _is1(rng, t0):
    data = ramp(90, 1e9, 0.0, 0.32, r=10)
    return train_box("is1", rng, gpu="H100", n_gpus=4, comp_s=0.28, comm_s=0.03, batch=256,
                     unit="samples", data_s_fn=data, dur=250, t0=t0, scrape=5.0, cpus=96)


@entry("is-l40s-lora-nfs-nocounter", "training", "input_stall", window=(80, 230),
       note="1x L40S LoRA fine-tune (no GPM, no counter) reading shards from NFS; the filer "
            "slows and each step waits 0.5 s for input")
def _is2(rng, t0):
    data = ramp(80, 230, 0.02, 0.5, r=8)
    return train_box("is2", rng, gpu="L40S", n_gpus=1, comp_s=0.45, batch=4, counter=False,
                     data_s_fn=data, dur=260, t0=t0, cpus=32)


@entry("is-fsdp-b200x8-objectstore-mild", "training", "input_stall", window=(100, 250),
       note="8x B200 FSDP pretraining with tokens counter, streaming from object storage: the "
            "bucket throttles, ~35% of step time waiting for input; 15 s scrape... of a 2 s tick")
def _is3(rng, t0):
    data = ramp(100, 1e9, 0.0, 0.28, r=12)
    return train_box("is3", rng, gpu="B200", n_gpus=8, comp_s=0.55, comm_s=0.06, batch=1 << 20,
                     unit="tokens", data_s_fn=data, dur=270, t0=t0, tick=2.0, scrape=10.0,
                     cpus=224)


@entry("is-a100x2-jpeg-decode", "training", "input_stall", window=(85, 240),
       note="2x A100 (no GPM) ResNet-50 training with samples counter: augmentation moved to "
            "the CPU after a library upgrade; JPEG decode cannot keep up, GPU-Util 95% -> 55%")
def _is4(rng, t0):
    data = ramp(85, 1e9, 0.005, 0.16, r=10)
    return train_box("is4", rng, gpu="A100", n_gpus=2, comp_s=0.14, comm_s=0.015, batch=512,
                     unit="samples", data_s_fn=data, dur=250, t0=t0, cpus=64,
                     tensor_eff=0.45, dram_eff=0.45)


# =============================================================== host_launch_jitter


def _jitter_host(rng, a, b):
    healthy = healthy_host(rng, 64, 0.2)
    x = ramp(a, b, 0.0, 1.0, 5)

    def f(t):
        c, p, q = healthy(t)
        k = x(t)
        return (c + 8 * k, p + 3.5 * k, q + int(4 * k))
    return f


@entry("hj-vllm025-h100-irq-core", "vllm-serving", "host_launch_jitter", window=(85, 220),
       note="vLLM 0.25 on H100 with eBPF probes: a NIC's interrupts are steered onto the engine "
            "core's CPU; cudaGraphLaunch / cuLaunchKernel calls now and then take milliseconds, "
            "steps stretch ~40%; host-wide PSI barely moves")
def _hj1(rng, t0):
    frac = ramp(85, 220, 0.0, 0.035, r=5)
    jit = lambda t: frac(t) * 45 * 0.0038  # noqa: E731
    return serve_box("hj1", rng, version="0.25", gpu="H100", rate=traffic(rng, 4.5),
                     prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=250, t0=t0, ebpf=True,
                     jitter_fn=jit, jitter_gpu=frac, host=_jitter_host(rng, 85, 220))


@entry("hj-train-a10g-eager-noisy-neighbour", "training", "host_launch_jitter",
       window=(90, 240),
       note="eager PyTorch training of a small model on an A10G (launch-bound, ~3000 launches a "
            "step) with eBPF: a co-located VM's vCPU steals the launch thread's core; launch "
            "calls get a millisecond tail and the GPU drains between them")
def _hj2(rng, t0):
    frac = ramp(90, 1e9, 0.0, 0.0025, r=6)
    jit = lambda t: frac(t) * 3.8e-3 * 1000  # noqa: E731
    return train_box("hj2", rng, gpu="A10G", n_gpus=1, comp_s=0.09, batch=64, unit="samples",
                     jitter_fn=jit, jitter_gpu=frac, ebpf=True, launches_per_step=3000, dur=250,
                     t0=t0, cpus=16, host=_jitter_host(rng, 90, 1e9), scrape=1.0)


@entry("hj-sglang-h200-cgroup-throttle-mild", "sglang-serving", "host_launch_jitter",
       window=(80, 230),
       note="SGLang on H200 with eBPF: the pod's CPU quota is hit in short bursts (CFS "
            "throttling), the scheduler thread stalls inside launch calls; a mild 25% loss")
def _hj3(rng, t0):
    frac = ramp(80, 230, 0.0, 0.02, r=5)
    jit = lambda t: frac(t) * 45 * 0.0038  # noqa: E731
    return serve_box("hj3", rng, kind="sglang", gpu="H200", model="qwen7b",
                     rate=traffic(rng, 7.0), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5,
                     dur=260, t0=t0, ebpf=True, jitter_fn=jit, jitter_gpu=frac,
                     host=_jitter_host(rng, 80, 230))


@entry("hj-llamacpp-l40s-smt-sibling", "llamacpp-serving", "host_launch_jitter",
       window=(90, 230),
       note="llama-server on L40S with eBPF: a batch ETL job lands on the SMT sibling of the "
            "server's main thread; cuLaunchKernel calls show a long tail, decode slows 35%")
def _hj4(rng, t0):
    frac = ramp(90, 230, 0.0, 0.004, r=5)
    jit = lambda t: frac(t) * 420 * 0.0038  # noqa: E731
    return serve_box("hj4", rng, kind="llamacpp", gpu="L40S", model="llama8b_q8",
                     rate=traffic(rng, 0.9), prompt=lognorm(700, 0.7, 20, 6000),
                     out=lognorm(300, 0.6, 10, 1500), hit=0.4, dur=250, t0=t0, ebpf=True,
                     pool_tokens=32768, max_seqs=8, jitter_fn=jit, jitter_gpu=frac,
                     host=_jitter_host(rng, 90, 230))


# =============================================================== host_cpu_contention


@entry("hc-vllm032-h100-ci-build", "vllm-serving", "host_cpu_contention", window=(90, 220),
       note="vLLM 0.32 on an H100 box whose CI runner starts a make -j128 build: PSI some ~45%, "
            "run queue 150 on 64 CPUs, the EngineCore thread gets ~35% of a core")
def _hc1(rng, t0):
    share = ramp(90, 220, 1.0, 0.22, r=6)
    return serve_box("hc1", rng, version="0.32", gpu="H100", rate=traffic(rng, 5.0),
                     prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=250, t0=t0,
                     cpu_share_fn=share, host=contended_host(rng, 90, 220))


@entry("hc-sglang-a100-tokenizer-storm", "sglang-serving", "host_cpu_contention",
       window=(80, 230),
       note="SGLang on A100 (no GPM): a sidecar re-indexes embeddings on all cores; the "
            "scheduler's threads lose CPU, involuntary switches x20, PSI 35%")
def _hc2(rng, t0):
    share = ramp(80, 230, 1.0, 0.3, r=6)
    return serve_box("hc2", rng, kind="sglang", gpu="A100", model="qwen7b",
                     rate=traffic(rng, 2.2), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5,
                     dur=250, t0=t0, cpu_share_fn=share, async_sched="partial",
                     host=contended_host(rng, 80, 230, psi=35.0, cpus=32), cpus=32)


@entry("hc-train-h200x4-oversubscribed-workers", "training", "host_cpu_contention",
       window=(100, 250),
       note="4x H200 training (eager, ~5000 launches/step, samples counter): someone raised "
            "num_workers to 24 per rank on 48 cores; the main threads wait for a core, PSI 55%")
def _hc3(rng, t0):
    share = ramp(100, 1e9, 1.0, 0.22, r=10)
    return train_box("hc3", rng, gpu="H200", n_gpus=4, comp_s=0.06, comm_s=0.01, batch=128,
                     unit="samples", cpu_share_fn=share, launches_per_step=5000, dur=260,
                     t0=t0, cpus=48, host=contended_host(rng, 100, 1e9, cpus=48, psi=55.0))


@entry("hc-llamacpp-a10g-shared-vm-mild", "llamacpp-serving", "host_cpu_contention",
       window=(85, 230),
       note="llama-server on an A10G cloud VM (8 vCPU) next to a log shipper that spins up; a "
            "mild 30% decode loss, PSI 30%")
def _hc4(rng, t0):
    share = ramp(85, 230, 1.0, 0.3, r=6)
    return serve_box("hc4", rng, kind="llamacpp", gpu="A10G", model="llama8b_q8",
                     rate=traffic(rng, 0.5), prompt=lognorm(500, 0.7, 20, 4000),
                     out=lognorm(300, 0.6, 10, 1500), hit=0.3, dur=250, t0=t0, pool_tokens=32768,
                     max_seqs=8, cpu_share_fn=share, async_sched=False,
                     host=contended_host(rng, 85, 230, cpus=8, psi=30.0), cpus=8)


# =============================================================== tiny_kernels


@entry("tk-vllm032-h100-grammar-bitmask", "vllm-serving", "tiny_kernels", window=(90, 230),
       note="vLLM 0.32 on H100: a tenant switches on JSON-schema guided decoding for every "
            "request; per-request bitmask and logits-processor kernels (a few SMs each) fill "
            "each step: GPU-Util 100%, SM active ~25%, tokens/s -60%")
def _tk1(rng, t0):
    tiny = ramp(90, 230, 0.0, 0.07, r=6)
    return serve_box("tk1", rng, gpu="H100", rate=traffic(rng, 3.5), prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.5, dur=250, t0=t0, tiny_fn=tiny)


@entry("tk-train-h200-foreach-off", "training", "tiny_kernels", window=(100, 260),
       note="1x H200 fine-tune with a samples counter: a config change turns off foreach/fused "
            "AdamW and adds per-parameter clipping; thousands of tiny kernels a step")
def _tk2(rng, t0):
    tiny = ramp(100, 1e9, 0.0, 0.6, r=5)
    return train_box("tk2", rng, gpu="H200", n_gpus=1, comp_s=0.35, batch=16, unit="samples",
                     tiny_fn=tiny, dur=270, t0=t0, cpus=48)


@entry("tk-cuda-b200-perpixel-kernels", "cuda-program", "tiny_kernels", window=(80, 240),
       note="a plain CUDA feature-extraction service (no engine, no counter) on a B200: a new "
            "build launches one small kernel per item instead of a batched one; GPU-Util 100%, "
            "SM active ~3%")
def _tk3(rng, t0):
    def shape(t):
        if t < 80:
            return (0.78 * rng.uniform(0.9, 1.05), 0.7, 0.25, 0.35, 0.3)
        return (0.99, 0.035, 0.006, 0.0, 0.01)
    j = job(rng, 0, 9100, "featsvc", "/opt/featsvc/bin/featsvc --port 9000", shape, 22.0,
            user="svc-vision", container="docker:9c2b7e1a44f0")
    from .build import GPUS, World
    w = World(rng, "tk3", GPUS["B200"], 1, 250, 1.0, t0, [j], host_cpu_fn=healthy_host(rng, 128),
              cpus=128)
    return w, []


@entry("tk-ddp-h100x2-tiny-model-mild", "training", "tiny_kernels", window=(90, 250),
       note="2x H100 DDP of a small recommender with samples counter: after a refactor the "
            "embedding bag runs as per-feature tiny kernels; SM active halves, throughput -40%")
def _tk4(rng, t0):
    tiny = ramp(90, 1e9, 0.02, 0.14, r=6)
    return train_box("tk4", rng, gpu="H100", n_gpus=2, comp_s=0.16, comm_s=0.02, batch=8192,
                     unit="samples", tiny_fn=tiny, dur=260, t0=t0, cpus=64, tensor_eff=0.3,
                     dram_eff=0.5)


# =============================================================== memory_bandwidth


@entry("mb-vllm032-h200-longctx-saturated", "vllm-serving", "memory_bandwidth",
       window=(90, 240),
       note="vLLM 0.32, Qwen3-32B on H200: a coding-agent tenant keeps ~120 sessions of 20-40k "
            "tokens resident; each decode step reads tens of GB of KV, DRAM ~95%, ITL x3, "
            "queue builds")
def _mb1(rng, t0):
    base = traffic(rng, 3.0)
    longp = lognorm(26000, 0.2, 16000, 40000)
    prompt = lambda r, t: longp(r, t) if t >= 90 and r.random() < 0.3 else CHAT_PROMPT(r, t)  # noqa
    rate = lambda t: base(t)  # noqa: E731
    hit = lambda t: 0.92 if t >= 90 else 0.5  # noqa: E731
    out = lambda r, t: lognorm(2500, 0.3, 800, 5000)(r, t) if t >= 90 and r.random() < 0.5 else CHAT_OUT(r, t)  # noqa
    return serve_box("mb1", rng, gpu="H200", model="llama8b", rate=rate, prompt=prompt, out=out,
                     hit_fn=hit, dur=260, t0=t0)


@entry("mb-train-a100-fp32-attention", "training", "memory_bandwidth", window=(90, 240),
       note="1x A100 (no GPM) fine-tune with tokens counter: a flag falls back from the fused "
            "attention kernel to eager fp32 attention; memory-controller util ~95%, step 1.8x")
def _mb2(rng, t0):
    bw = ramp(90, 1e9, 0.0, 1.3, r=4)
    return train_box("mb2", rng, gpu="A100", n_gpus=1, comp_s=0.62, batch=32768, unit="tokens",
                     bw_fn=bw, dur=250, t0=t0, cpus=32)


@entry("mb-sglang-b200-longctx-eval-mild", "sglang-serving", "memory_bandwidth",
       window=(100, 250),
       note="SGLang (Llama 3.1 8B) on B200: a long-context evaluation keeps many 20-30k token "
            "sequences resident; attention reads dominate, DRAM near saturation, ITL up")
def _mb3(rng, t0):
    base = traffic(rng, 3.0)
    longp = lognorm(24000, 0.2, 16000, 32000)
    prompt = lambda r, t: longp(r, t) if t >= 100 and r.random() < 0.3 else CHAT_PROMPT(r, t)  # noqa
    hit = lambda t: 0.9 if t >= 100 else 0.35  # noqa: E731
    return serve_box("mb3", rng, kind="sglang", gpu="B200", model="llama8b", rate=base,
                     prompt=prompt, out=lognorm(2500, 0.3, 800, 5000), hit_fn=hit, dur=270, t0=t0)


@entry("mb-vllm011-l40s-gddr-bound", "vllm-serving", "memory_bandwidth", window=(85, 235),
       note="vLLM 0.11 on L40S (GDDR6, no GPM): contexts grow after a product launch (chat "
            "history kept), the 864 GB/s bus saturates, memory-controller util ~95%, ITL x2.5")
def _mb4(rng, t0):
    base = traffic(rng, 1.3)
    longp = lognorm(5000, 0.3, 3000, 8000)
    prompt = lambda r, t: longp(r, t) if t >= 85 and r.random() < 0.5 else lognorm(  # noqa
        900, 0.8, 16, 8000)(r, t)
    hit = lambda t: 0.85 if t >= 85 else 0.4  # noqa: E731
    return serve_box("mb4", rng, version="0.11", gpu="L40S", model="llama3b", rate=base,
                     prompt=prompt, out=lognorm(1500, 0.4, 300, 4000), hit_fn=hit, dur=260,
                     t0=t0)


# =============================================================== throttling


def thermal(g_bad, a, factor, reasons):
    def f(t, g):
        if g in g_bad and t >= a:
            k = min(1.0, (t - a) / 15.0)
            return 1.0 - (1.0 - factor) * k, reasons
        return 1.0, ()
    return f


@entry("th-train-h100x8-gpu3-fan-fail", "training", "throttling", window=(100, 250),
       culprit=(3,),
       note="8x H100 DDP: GPU 3's cooling degrades (clogged cold plate), it crosses 87 C and "
            "drops clocks to ~55% (thermal + HW slowdown); the job runs at its pace")
def _th1(rng, t0):
    thr = thermal({3}, 100, 0.55, ("thermal (sw)", "hw slowdown"))
    cf = lambda t: 1.0  # noqa: E731
    slow = lambda t, g: (1.0 / (1.0 + (1 / thr(t, g)[0] - 1) * 0.9) if g == 3 else 1.0)  # noqa
    temp = lambda t, g: (min(1.0, max(0.0, (t - 85) / 20)) * 34 if g == 3 else 0.0)  # noqa
    return train_box("th1", rng, gpu="H100", n_gpus=8, comp_s=0.5, comm_s=0.05, batch=512,
                     unit="samples", slow_fn=slow, throttle=thr, temp=temp, dur=260, t0=t0,
                     cf_fn=cf)


@entry("th-vllm-a100-power-brake", "vllm-serving", "throttling", window=(90, 200),
       note="vLLM on an A100 (no GPM): the rack's PSU fails over and asserts the power brake; "
            "clocks held at ~50% for two minutes, tokens/s -35%")
def _th2(rng, t0):
    thr = thermal({0}, 90, 0.5, ("power brake",))
    thr2 = lambda t, g: thr(t, g) if t < 200 else (1.0, ())  # noqa: E731
    cf = lambda t: thr2(t, 0)[0]  # noqa: E731
    return serve_box("th2", rng, version="0.32", gpu="A100", model="qwen7b",
                     rate=traffic(rng, 1.4), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5,
                     dur=250, t0=t0, throttle=thr2, cf_fn=cf)


@entry("th-vllm-l40s-power-limit-lowered", "vllm-serving", "throttling", window=(80, 240),
       note="vLLM on an L40S whose power limit an admin lowers from 350 W to 150 W (nvidia-smi "
            "-pl) to fit a rack budget; clocks sit far below boost under the power cap, "
            "prefill-heavy steps slow")
def _th3(rng, t0):
    pl = lambda t, g: 150.0 if t >= 80 else 350.0  # noqa: E731
    thr = lambda t, g: ((0.52, ("power cap",)) if t >= 80 else (1.0, ()))  # noqa: E731
    cf = lambda t: 0.52 if t >= 80 else 1.0  # noqa: E731
    return serve_box("th3", rng, version="0.26", gpu="L40S", model="llama8b",
                     rate=traffic(rng, 1.0), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=250,
                     t0=t0, power_limit=pl, throttle=thr, cf_fn=cf)


@entry("th-sglang-b200x2-hw-slowdown", "sglang-serving", "throttling", window=(95, 230),
       note="SGLang TP2 on 2x B200: the chassis reports an over-current event, both GPUs get "
            "HW slowdown (clocks ~45%) for two minutes")
def _th4(rng, t0):
    thr0 = thermal({0, 1}, 95, 0.45, ("hw slowdown",))
    thr = lambda t, g: thr0(t, g) if t < 230 else (1.0, ())  # noqa: E731
    cf = lambda t: thr(t, 0)[0]  # noqa: E731
    return serve_box("th4", rng, kind="sglang", gpu="B200", n_gpus=2, tp=2, model="qwen32b",
                     rate=traffic(rng, 7.0), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=260,
                     t0=t0, throttle=thr, cf_fn=cf)


# =============================================================== kv_pressure


@entry("kv-vllm032-h100-reasoning-burst", "vllm-serving", "kv_pressure", window=(90, 240),
       note="vLLM 0.32 (Qwen3-32B, H100): a reasoning-model rollout with max_tokens 16k; long "
            "generations fill the KV pool, preemptions climb, waiting grows, recompute eats "
            "the GPU")
def _kv1(rng, t0):
    base = traffic(rng, 1.6)
    out = lambda r, t: lognorm(6000, 0.5, 500, 16000)(r, t) if t >= 90 and r.random() < 0.6 \
        else CHAT_OUT(r, t)  # noqa
    rate = lambda t: base(t) * (1.8 if t >= 90 else 1.0)  # noqa: E731
    return serve_box("kv1", rng, gpu="H100", model="qwen32b_fp8", rate=rate, prompt=CHAT_PROMPT,
                     out=out, hit=0.3, dur=270, t0=t0, gpu_mem_util=0.9)


@entry("kv-sglang-h200-retractions", "sglang-serving", "kv_pressure", window=(85, 240),
       note="SGLang (Llama 3.3 70B TP2 on H200, small mem-fraction-static): agent sessions "
            "with long outputs; the pool fills, decode requests are retracted again and again")
def _kv2(rng, t0):
    base = traffic(rng, 1.2)
    out = lambda r, t: lognorm(3500, 0.5, 300, 12000)(r, t) if t >= 85 and r.random() < 0.7 \
        else CHAT_OUT(r, t)  # noqa
    prompt = lambda r, t: AGENT_PROMPT(r, t) if t >= 85 else CHAT_PROMPT(r, t)  # noqa
    return serve_box("kv2", rng, kind="sglang", gpu="H200", n_gpus=2, tp=2, model="llama70b",
                     rate=base, prompt=prompt, out=out, hit=0.5, dur=270, t0=t0,
                     gpu_mem_util=0.78)


@entry("kv-vllm010-a10g-small-pool", "vllm-serving", "kv_pressure", window=(80, 230),
       note="vLLM 0.10 on an A10G (no GPM, no waiting-by-reason): a new client sends 6k-token "
            "prompts with long answers; a 4 GiB pool thrashes, preemptions every second")
def _kv3(rng, t0):
    base = traffic(rng, 0.9)
    prompt = lambda r, t: lognorm(6000, 0.3, 2000, 12000)(r, t) if t >= 80 and r.random() < 0.6 \
        else lognorm(700, 0.8, 16, 6000)(r, t)  # noqa
    out = lambda r, t: lognorm(1500, 0.5, 100, 4000)(r, t) if t >= 80 else lognorm(  # noqa
        200, 0.7, 4, 1500)(r, t)
    return serve_box("kv3", rng, version="0.10", gpu="A10G", model="llama3b", rate=base,
                     prompt=prompt, out=out, hit=0.2, dur=250, t0=t0, gpu_mem_util=0.9,
                     max_seqs=64)


@entry("kv-vllm-dp2-h100-sticky-tenant-gpu1", "vllm-serving", "kv_pressure", window=(90, 250),
       culprit=(1,),
       note="vLLM 0.32 data-parallel (2 engines behind one port, engine= labels) on 2x H100: "
            "session affinity pins a long-context tenant to engine 1; only that replica "
            "preempts")
def _kv4(rng, t0):
    base0 = traffic(rng, 1.5)
    base1 = traffic(rng, 1.5)
    heavy_out = lognorm(5000, 0.5, 400, 12000)

    def per(r):
        if r == 0:
            return dict(rate=base0)
        out = lambda rr, t: heavy_out(rr, t) if t >= 90 and rr.random() < 0.55 else CHAT_OUT(rr, t)  # noqa
        prompt = lambda rr, t: AGENT_PROMPT(rr, t) if t >= 90 else CHAT_PROMPT(rr, t)  # noqa
        return dict(rate=lambda t: base1(t) * (1.4 if t >= 90 else 1.0), out=out, prompt=prompt)
    return serve_box("kv4", rng, gpu="H100", n_gpus=2, replicas=2, mode="dp", model="qwen32b_fp8",
                     prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=270, t0=t0, per_replica=per,
                     gpu_mem_util=0.88)


# =============================================================== gpu_shared


@entry("gs-vllm-h100-notebook-training", "vllm-serving", "gpu_shared", window=(90, 220),
       note="vLLM on an H100 that a data scientist's Jupyter kernel also sees: at 90 s the "
            "notebook starts a training loop on the same GPU; time-slicing gives the engine "
            "~55% of the GPU")
def _gs1(rng, t0):
    share = lambda t, g: 0.55 if 90 <= t < 220 else 1.0  # noqa: E731

    def shape(t):
        if 90 <= t < 220:
            return (0.45, 0.42, 0.15, 0.28, 0.12)
        return (0.0, 0.0, 0.0, 0.0, 0.0)
    nb = job(rng, 0, 31337, "python", "/opt/conda/bin/python -m ipykernel_launcher -f "
             "/root/.local/share/jupyter/runtime/kernel-4f1.json", shape, 9.5, user="dana",
             container="docker:jupyter-dana")
    return serve_box("gs1", rng, gpu="H100", rate=traffic(rng, 4.0), prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.5, dur=250, t0=t0, share_fn=share, jobs=[nb],
                     gpu_mem_util=0.8)


@entry("gs-ddp-a100x4-second-job-gpu2", "training", "gpu_shared", window=(80, 240),
       culprit=(2,),
       note="4x A100 DDP (no GPM, samples counter): a second user's job is started with "
            "CUDA_VISIBLE_DEVICES=2 on the same node; rank 2 time-slices with it and the whole "
            "job slows to its pace")
def _gs2(rng, t0):
    share = lambda t, g: 0.5 if g == 2 and t >= 80 else 1.0  # noqa: E731

    def shape(t):
        return (0.48, 0.45, 0.12, 0.25, 0.2) if t >= 80 else (0.0, 0, 0, 0, 0)
    other = job(rng, 2, 45120, "python", "python bench_resnet.py --batch 256", shape, 14.0,
                user="bob", alive=(80, 1e9))
    return train_box("gs2", rng, gpu="A100", n_gpus=4, comp_s=0.4, comm_s=0.05, batch=128,
                     unit="samples", speed_fn=share, jobs=[other], dur=260, t0=t0,
                     mem_frac=0.6)


@entry("gs-llamacpp-l40s-gpuburn", "llamacpp-serving", "gpu_shared", window=(85, 215),
       note="llama-server on an L40S where an operator runs a burn-in test on the wrong host; "
            "the server's decodes get ~40% of the GPU")
def _gs3(rng, t0):
    share = lambda t, g: 0.42 if 85 <= t < 215 else 1.0  # noqa: E731

    def shape(t):
        return (0.58, 0.57, 0.3, 0.55, 0.2) if 85 <= t < 215 else (0.0, 0, 0, 0, 0)
    burn = job(rng, 0, 52001, "gpu_burn", "./gpu_burn -tc 600", shape, 30.0, user="root",
               alive=(85, 215))
    return serve_box("gs3", rng, kind="llamacpp", gpu="L40S", model="llama8b_q8",
                     rate=traffic(rng, 0.6), prompt=lognorm(600, 0.7, 20, 5000),
                     out=lognorm(300, 0.6, 10, 1500), hit=0.4, dur=250, t0=t0, pool_tokens=16384,
                     max_seqs=8, share_fn=share, jobs=[burn])


@entry("gs-sglang-h200-tp2-eval-on-gpu0", "sglang-serving", "gpu_shared", window=(95, 235),
       culprit=(0,),
       note="SGLang TP2 on 2x H200: an eval script pinned to GPU 0 (leftover "
            "CUDA_VISIBLE_DEVICES) takes ~45% of it; both ranks slow because TP waits for rank 0")
def _gs4(rng, t0):
    share = lambda t, g: 0.55 if g == 0 and t >= 95 else 1.0  # noqa: E731

    def shape(t):
        return (0.42, 0.4, 0.14, 0.3, 0.25) if t >= 95 else (0.0, 0, 0, 0, 0)
    ev = job(rng, 0, 60777, "python", "python run_eval.py --model ckpt-4200 --tasks mmlu",
             shape, 40.0, user="carol", alive=(95, 1e9))
    return serve_box("gs4", rng, kind="sglang", gpu="H200", n_gpus=2, tp=2, model="qwen32b",
                     rate=traffic(rng, 2.5), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=260,
                     t0=t0, share_fn=share, jobs=[ev], gpu_mem_util=0.7)


# =============================================================== spec_decode_rejected


@entry("sd-vllm032-h100-ngram-traffic-shift", "vllm-serving", "spec_decode_rejected",
       window=(90, 240),
       note="vLLM 0.32 n-gram speculation (k=4) tuned for code edits; a creative-writing "
            "tenant takes over, acceptance falls from ~65% to ~8%, verification wastes steps")
def _sd1(rng, t0):
    alpha = ramp(90, 1e9, 0.72, 0.1, r=20)
    return serve_box("sd1", rng, gpu="H100", rate=traffic(rng, 5.0), prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.5, dur=260, t0=t0, spec_k=4, alpha_fn=alpha)


@entry("sd-vllm-h200-eagle-target-upgrade-mild", "vllm-serving", "spec_decode_rejected",
       window=(85, 240),
       note="vLLM 0.30 EAGLE-3 (k=3) on H200 after the target model was swapped for a new "
            "fine-tune without retraining the drafter: acceptance 70% -> 35%, ~30% slower")
def _sd2(rng, t0):
    alpha = ramp(85, 1e9, 0.75, 0.38, r=10)
    return serve_box("sd2", rng, version="0.30", gpu="H200", model="llama70b", n_gpus=2, tp=2,
                     rate=traffic(rng, 1.6), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5,
                     dur=260, t0=t0, spec_k=3, alpha_fn=alpha, spec_eagle=True)


@entry("sd-sglang-b200-eagle-language-mix", "sglang-serving", "spec_decode_rejected",
       window=(95, 245),
       note="SGLang EAGLE (k=4) on B200: traffic moves to languages the draft head never saw; "
            "spec_accept_rate gauge falls to ~0.12")
def _sd3(rng, t0):
    alpha = ramp(95, 1e9, 0.7, 0.13, r=15)
    return serve_box("sd3", rng, kind="sglang", gpu="B200", model="qwen32b",
                     rate=traffic(rng, 4.0), prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=260,
                     t0=t0, spec_k=4, alpha_fn=alpha, spec_eagle=True)


@entry("sd-llamacpp-a10g-draft-mismatch", "llamacpp-serving", "spec_decode_rejected",
       window=(80, 230),
       note="llama-server with a 0.5B draft model (--draft 8) on an A10G: a user switches to a "
            "chat template the draft does not follow; accepted/draft tokens 60% -> 10%")
def _sd4(rng, t0):
    alpha = ramp(80, 1e9, 0.68, 0.12, r=10)
    return serve_box("sd4", rng, kind="llamacpp", gpu="A10G", model="llama8b_q8",
                     rate=traffic(rng, 0.25), prompt=lognorm(500, 0.7, 20, 4000),
                     out=lognorm(400, 0.6, 20, 2000), hit=0.3, dur=250, t0=t0, pool_tokens=16384,
                     max_seqs=2, spec_k=8, alpha_fn=alpha, spec_eagle=True)


# =============================================================== healthy look-alikes

def diurnal(lo, hi, rise_at, rise_s, fall=False):
    def f(t):
        x = min(1.0, max(0.0, (t - rise_at) / rise_s))
        x = x * x * (3 - 2 * x)
        if fall:
            x = 1 - x
        return lo + (hi - lo) * x
    return f


@entry("ok-vllm032-h100-morning-ramp", "vllm-serving", None,
       note="traffic rises 4x over three minutes as Europe wakes up: util 45% -> 100%, batch and "
            "ITL grow with it, tokens/s follow demand")
def _ok1(rng, t0):
    return serve_box("ok1", rng, gpu="H100", rate=traffic(rng, 5.0, shape=diurnal(0.25, 1.0, 30, 170)),
                     prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=260, t0=t0)


@entry("ok-sglang-h200-evening-decline", "sglang-serving", None,
       note="SGLang: the evening decline, batch shrinks from ~90 to ~15, GPU-Util stays high "
            "(memory-bound decode at small batch) while tokens/s fall with demand")
def _ok2(rng, t0):
    return serve_box("ok2", rng, kind="sglang", gpu="H200", model="qwen7b",
                     rate=traffic(rng, 8.0, shape=diurnal(0.15, 1.0, 40, 150, fall=True)),
                     prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=250, t0=t0)


@entry("ok-vllm032-h200-tp2-longctx-tenant-fine", "vllm-serving", None,
       note="a new tenant with 20-30k token contexts (prefix-cached documents) arrives; DRAM "
            "activity and KV usage rise, ITL +20%, the GPUs keep up: no queue, tokens/s up")
def _ok3(rng, t0):
    base = traffic(rng, 1.6)
    longp = lognorm(24000, 0.2, 15000, 32000)
    prompt = lambda r, t: longp(r, t) if t >= 100 and r.random() < 0.06 else CHAT_PROMPT(r, t)  # noqa
    hit = lambda t: 0.8 if t >= 100 else 0.5  # noqa: E731
    return serve_box("ok3", rng, gpu="H200", n_gpus=2, tp=2, model="llama70b", rate=base,
                     prompt=prompt, out=CHAT_OUT, hit_fn=hit, dur=260, t0=t0)


@entry("ok-vllm-a100-offline-batch-ends", "vllm-serving", None,
       note="an offline batch (vLLM on A100, no GPM) drains its last requests and finishes at "
            "~120 s: util and tokens/s fall to zero, the engine idles with its KV pool allocated")
def _ok4(rng, t0):
    rate = lambda t: 3.0 if t < 105 else 0.0  # noqa: E731
    return serve_box("ok4", rng, version="0.32", gpu="A100", model="qwen7b", rate=rate,
                     prompt=lognorm(1200, 0.5, 100, 6000), out=lognorm(300, 0.5, 20, 1200),
                     hit=0.6, dur=240, t0=t0, max_seqs=256)


@entry("ok-vllm-dp4-h100-lb-slow-start", "vllm-serving", None,
       note="4 data-parallel engines behind one port; engine 3 was restarted and the load "
            "balancer's slow start feeds it 10% -> 100% of its share over two minutes")
def _ok5(rng, t0):
    def per(r):
        base = traffic(rng, 2.2)
        if r == 3:
            return dict(rate=lambda t: base(t) * diurnal(0.1, 1.0, 20, 120)(t))
        return dict(rate=lambda t: base(t) * (1.25 - 0.25 * diurnal(0.0, 1.0, 20, 120)(t)))
    return serve_box("ok5", rng, gpu="H100", n_gpus=4, replicas=4, mode="dp", model="llama8b",
                     prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.3, dur=240, t0=t0, per_replica=per)


@entry("ok-vllm-h100-restart-graph-capture", "vllm-serving", None,
       note="the engine is redeployed: idle, then weights load and CUDA-graph capture (~20 s of "
            "small captured kernels: GPU-Util high, SM low), then traffic returns")
def _ok6(rng, t0):
    def shape(t):
        if 70 <= t < 88:
            return (0.05, 0.03, 0.01, 0.0, 0.2)  # weight loading: copies
        if 88 <= t < 108:
            return (0.85, 0.12, 0.03, 0.02, 0.05)  # profile run + graph capture
        return None
    loader = job(rng, 0, 22001, "python3", "python3 -m vllm.entrypoints.openai.api_server "
                 "--model meta-llama/Llama-3.1-8B-Instruct (starting)", shape, 60.0,
                 user="svc-infer", alive=(70, 108))
    rate = lambda t: 0.0 if 40 <= t < 112 else 4.0 * (1.0 if t < 40 else min(1.0, (t - 112) / 25))  # noqa
    return serve_box("ok6", rng, gpu="H100", rate=rate, prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.3,
                     dur=240, t0=t0, jobs=[loader])


@entry("ok-vllm-h200-power-capped-healthy", "vllm-serving", None,
       note="prefill-heavy summarisation on an H200 runs at its 700 W cap with 'power cap' "
            "reported and clocks ~1.75 GHz, exactly as the healthy H200 matmul check did")
def _ok7(rng, t0):
    return serve_box("ok7", rng, gpu="H200", model="llama8b", rate=traffic(rng, 2.2),
                     prompt=lognorm(9000, 0.4, 2000, 30000), out=lognorm(150, 0.5, 10, 600),
                     hit=0.05, dur=240, t0=t0,
                     power_limit=lambda t, g: 560.0)


@entry("ok-train-h100x8-eval-pass", "training", None,
       note="8x H100 DDP with samples counter: every 1,000 steps a 50 s evaluation pass runs "
            "(forward only, the training counter stands still, SM/tensor lower)")
def _ok8(rng, t0):
    return train_box("ok8", rng, gpu="H100", n_gpus=8, comp_s=0.45, comm_s=0.05, batch=512,
                     unit="samples", eval_windows=((110, 160),), dur=240, t0=t0)


@entry("ok-fsdp-h200x8-sync-checkpoint", "training", None,
       note="8x H200 FSDP with tokens counter: a synchronous checkpoint; rank 0 writes to disk "
            "while ranks 1-7 wait in a barrier for 25 s (NCCL spin: util 100%, SM ~2%)")
def _ok9(rng, t0):
    return train_box("ok9", rng, gpu="H200", n_gpus=8, comp_s=0.6, comm_s=0.06, batch=1 << 19,
                     unit="tokens", ckpt_windows=((120, 145),), dur=240, t0=t0, scrape=5.0)


@entry("ok-ddp-a100x4-async-checkpoint", "training", None,
       note="4x A100 DDP (no GPM, no counter): checkpoints are written asynchronously; a "
            "10 s dip while state is copied to the host, otherwise steady")
def _ok10(rng, t0):
    data = ramp(130, 140, 0.0, 0.2, r=2)
    return train_box("ok10", rng, gpu="A100", n_gpus=4, comp_s=0.5, comm_s=0.06, batch=64,
                     counter=False, data_s_fn=data, dur=240, t0=t0, tick=2.0)


@entry("ok-sglang-h100-cache-warming", "sglang-serving", None,
       note="after a restart the radix cache warms: cache hits climb 0 -> 70%, TTFT and prompt "
            "compute fall, tokens/s steady")
def _ok11(rng, t0):
    hit = diurnal(0.0, 0.7, 10, 180)
    return serve_box("ok11", rng, kind="sglang", gpu="H100", model="llama8b",
                     rate=traffic(rng, 3.0), prompt=AGENT_PROMPT, out=SHORT_OUT,
                     hit_fn=hit, dur=240, t0=t0)


@entry("ok-llamacpp-a10g-single-user-chat", "llamacpp-serving", None,
       note="one developer chatting with llama-server on an A10G: bursts of decode between "
            "long idle gaps; util swings 0 <-> 95%")
def _ok12(rng, t0):
    bursts = [(10, 30), (60, 75), (100, 140), (170, 185), (205, 230)]
    rate = lambda t: 0.12 if any(a <= t < b for a, b in bursts) else 0.0  # noqa: E731
    return serve_box("ok12", rng, kind="llamacpp", gpu="A10G", model="llama8b_q8", rate=rate,
                     prompt=lognorm(1500, 0.8, 50, 8000), out=lognorm(400, 0.5, 20, 1500),
                     hit=0.7, dur=240, t0=t0, pool_tokens=16384, max_seqs=1)


@entry("ok-llamacpp-l40s-long-prompt-bursts", "llamacpp-serving", None,
       note="llama-server summarising uploaded PDFs one at a time: 20k-token prompt phases "
            "(compute-bound, tensor busy) then short answers; nobody else is waiting")
def _ok13(rng, t0):
    return serve_box("ok13", rng, kind="llamacpp", gpu="L40S", model="qwen14b_q4",
                     rate=traffic(rng, 0.08), prompt=lognorm(18000, 0.3, 8000, 30000),
                     out=lognorm(300, 0.4, 50, 800), hit=0.0, dur=250, t0=t0,
                     pool_tokens=65536, max_seqs=1)


@entry("ok-vllm-h100-idle-notebook-holds-memory", "vllm-serving", None,
       note="a second process (an idle Jupyter kernel) holds 9 GiB on the engine's GPU but "
            "runs nothing; two processes on the GPU, no time-slicing")
def _ok14(rng, t0):
    def shape(t):
        if 150 <= t < 153:
            return (0.3, 0.25, 0.1, 0.1, 0.1)
        return (0.0, 0.0, 0.0, 0.0, 0.0)
    nb = job(rng, 0, 31338, "python", "/opt/conda/bin/python -m ipykernel_launcher", shape, 9.0,
             user="dana", container="docker:jupyter-dana")
    return serve_box("ok14", rng, gpu="H100", rate=traffic(rng, 4.0), prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.3, dur=240, t0=t0, jobs=[nb], gpu_mem_util=0.8)


@entry("ok-vllm-h100-benchmark-concurrency-sweep", "vllm-serving", None,
       note="a benchmark_serving sweep: concurrency steps 1, 4, 16, 64, 128 every 45 s; ITL and "
            "TTFT rise with concurrency as they should, tokens/s climbs")
def _ok15(rng, t0):
    steps = [0.2, 0.8, 2.5, 6.0, 9.0]
    rate = lambda t: steps[min(4, int(t // 48))]  # noqa: E731
    return serve_box("ok15", rng, gpu="H100", model="llama8b", rate=rate,
                     prompt=lognorm(1000, 0.05, 900, 1100), out=lognorm(512, 0.05, 480, 540),
                     hit=0.0, dur=240, t0=t0)


@entry("ok-train-l40s-small-batch-finetune", "training", None,
       note="QLoRA fine-tune on one L40S (no GPM, samples counter): small batch, GPU-Util "
            "85-95% with visible optimizer gaps, steady throughput")
def _ok16(rng, t0):
    return train_box("ok16", rng, gpu="L40S", n_gpus=1, comp_s=0.5, batch=4, unit="samples",
                     data_s_fn=lambda t: 0.03, dur=240, t0=t0, cpus=32, tensor_eff=0.4,
                     dram_eff=0.5)


@entry("ok-fsdp-h100x8-steady-nccl-share", "training", None,
       note="8x H100 FSDP with tokens counter: normal all-gather / reduce-scatter share (~25% "
            "of each step in NCCL), SM active ~70%, nothing changes")
def _ok17(rng, t0):
    return train_box("ok17", rng, gpu="H100", n_gpus=8, comp_s=0.45, comm_s=0.15,
                     batch=1 << 19, unit="tokens", dur=240, t0=t0, scrape=15.0, tick=2.0)


@entry("ok-ddp-a100x4-one-warm-gpu", "training", None,
       note="4x A100 DDP (no GPM, no counter): GPU 3 sits in the hot aisle and runs 8 C warmer "
            "with the same clocks and pace")
def _ok18(rng, t0):
    temp = lambda t, g: 8.0 if g == 3 else 0.0  # noqa: E731
    return train_box("ok18", rng, gpu="A100", n_gpus=4, comp_s=0.5, comm_s=0.05, batch=64,
                     counter=False, temp=temp, dur=240, t0=t0)


@entry("ok-vllm032-h100-spec-accept-varies", "vllm-serving", None,
       note="EAGLE speculation (k=3) whose acceptance wanders 0.55-0.75 with the traffic mix; "
            "throughput tracks demand")
def _ok19(rng, t0):
    import math as _m
    alpha = lambda t: 0.65 + 0.1 * _m.sin(t / 23.0)  # noqa: E731
    return serve_box("ok19", rng, gpu="H100", rate=traffic(rng, 4.5), prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.5, dur=240, t0=t0, spec_k=3, alpha_fn=alpha,
                     spec_eagle=True)


@entry("ok-sglang-h200-burst-few-retractions", "sglang-serving", None,
       note="a 15 s arrival burst pushes token usage to ~95% and SGLang retracts a handful of "
            "requests once, then the queue drains and all is steady")
def _ok20(rng, t0):
    base = traffic(rng, 0.9, burst=0.1)
    rate = lambda t: base(t) * (4.0 if 110 <= t < 125 else 1.0)  # noqa: E731
    return serve_box("ok20", rng, kind="sglang", gpu="H200", model="llama70b", n_gpus=2, tp=2,
                     rate=rate, prompt=AGENT_PROMPT, out=lognorm(900, 0.5, 50, 3000), hit=0.5,
                     dur=250, t0=t0, gpu_mem_util=0.8)


@entry("ok-vllm-h200-high-kv-no-preemption", "vllm-serving", None,
       note="long chat sessions keep KV usage at 85-90% all along; no preemptions, no queue")
def _ok21(rng, t0):
    return serve_box("ok21", rng, gpu="H200", model="qwen32b", rate=traffic(rng, 0.28),
                     prompt=lognorm(14000, 0.3, 4000, 30000), out=lognorm(700, 0.4, 50, 2000),
                     hit=0.8, dur=240, t0=t0, gpu_mem_util=0.6, max_seqs=96)


@entry("ok-vllm-b200-retry-burst-drains", "vllm-serving", None,
       note="a client's retry storm triples arrivals for 20 s on a B200: queue builds, TTFT "
            "spikes, the queue drains within 30 s")
def _ok22(rng, t0):
    base = traffic(rng, 4.0, burst=0.1)
    rate = lambda t: base(t) * (2.5 if 120 <= t < 140 else 1.0)  # noqa: E731
    return serve_box("ok22", rng, gpu="B200", model="qwen32b", rate=rate, prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.3, dur=240, t0=t0)


@entry("ok-vllm-h100-lora-adapters-rotate", "vllm-serving", None,
       note="vLLM 0.32 serving four LoRA adapters (max_loras 4); adapters come and go in "
            "lora_requests_info, throughput steady")
def _ok23(rng, t0):
    return serve_box("ok23", rng, gpu="H100", rate=traffic(rng, 4.0), prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.5, dur=240, t0=t0,
                     lora=("sql-gen", "support-de", "legal-summ", "code-review"))


@entry("ok-box-4xl40s-independent-llamaservers", "multi-server", None,
       note="four independent llama-server instances, one per L40S, each with its own port and "
            "users; loads differ and drift")
def _ok24(rng, t0):
    def per(r):
        return dict(rate=traffic(rng, [0.3, 0.6, 0.15, 0.45][r]))
    return serve_box("ok24", rng, kind="llamacpp", gpu="L40S", n_gpus=4, replicas=4,
                     mode="multi", model="llama8b_q8", prompt=lognorm(700, 0.7, 20, 6000),
                     out=lognorm(300, 0.6, 10, 1500), hit=0.4, dur=240, t0=t0, per_replica=per,
                     pool_tokens=32768, max_seqs=8)


@entry("ok-vllm-h100-host-busy-engine-isolated", "vllm-serving", None,
       note="a nightly ETL job loads the host (CPU 85%, PSI 12%) but the engine runs in a "
            "cpuset of its own: its threads get their CPU, throughput unchanged")
def _ok25(rng, t0):
    host = contended_host(rng, 80, 200, psi=12.0, rq_mult=0.9)
    return serve_box("ok25", rng, gpu="H100", rate=traffic(rng, 4.0), prompt=CHAT_PROMPT,
                     out=CHAT_OUT, hit=0.5, dur=240, t0=t0, host=host)


@entry("ok-vllm-h200-reasoning-long-outputs", "vllm-serving", None,
       note="a reasoning model with 4-8k token answers: e2e latencies of minutes, steady ITL, "
            "KV usage ~60%")
def _ok26(rng, t0):
    return serve_box("ok26", rng, gpu="H200", model="qwen30a3", rate=traffic(rng, 0.8),
                     prompt=lognorm(1200, 0.6, 50, 8000), out=lognorm(5000, 0.3, 1500, 12000),
                     hit=0.4, dur=240, t0=t0)


@entry("ok-cuda-h100-stream-benchmark", "cuda-program", None,
       note="a memory-bandwidth acceptance test (STREAM-like, no engine) on a new H100 node: "
            "DRAM ~92% by design, then it ends and the GPU idles")
def _ok27(rng, t0):
    def shape(t):
        if t < 170:
            return (0.99, 0.95, 0.6, 0.0, 0.92)
        return None
    j = job(rng, 0, 8801, "stream_cuda", "./stream_cuda -n 2000000000 -t 180", shape, 48.0,
            user="root", alive=(-1e9, 170))
    from .build import GPUS, World
    w = World(rng, "ok27", GPUS["H100"], 1, 240, 1.0, t0, [j], host_cpu_fn=healthy_host(rng, 64),
              cpus=64)
    return w, []


@entry("ok-cuda-a10g-notebook-interactive", "cuda-program", None,
       note="a notebook on an A10G (no GPM, no engine): cells run for 5-20 s at full util, "
            "idle in between")
def _ok28(rng, t0):
    cells = [(20, 35), (70, 80), (95, 115), (160, 170), (190, 215)]

    def shape(t):
        if any(a <= t < b for a, b in cells):
            return (0.97, 0.9, 0.35, 0.5, 0.4)
        return (0.0, 0.0, 0.0, 0.0, 0.0)
    j = job(rng, 0, 12044, "python", "python -m ipykernel_launcher", shape, 11.0, user="erin")
    from .build import GPUS, World
    w = World(rng, "ok28", GPUS["A10G"], 1, 240, 2.0, t0, [j], host_cpu_fn=healthy_host(rng, 8),
              cpus=8, idle_clock_drop=True)
    return w, []


@entry("ok-sglang-dp2-h100-uneven-replicas", "sglang-serving", None,
       note="SGLang with --dp 2 behind one port (dp_rank replicas): the router's cache-aware "
            "policy sends 70% of traffic to rank 0; both healthy")
def _ok29(rng, t0):
    def per(r):
        return dict(rate=traffic(rng, 7.0 if r == 0 else 3.0))
    return serve_box("ok29", rng, kind="sglang", gpu="H100", n_gpus=2, replicas=2, mode="dp",
                     model="qwen7b", prompt=CHAT_PROMPT, out=CHAT_OUT, hit=0.5, dur=240, t0=t0,
                     per_replica=per)
