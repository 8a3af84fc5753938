"""One builder per trace.  Each sets up the physics (hardware, host, workload, the fault
as a change in that physics) and labels it; the readings come out of the simulation."""
from __future__ import annotations

import math

from . import serve as S
from . import train as TR
from .build import first_reason, on, ramp, serving, training
from .world import Proc

REG = []


def trace(fn):
    REG.append(fn)
    return fn


def A(rate, prompt=(600, 0.8), out=(250, 0.7), extra=(), **kw):
    """Arrivals: Poisson at rate(t) plus explicit requests [t, prompt, out, n, logprobs]."""
    def make(rng, T):
        r = S.arrivals(rng, T, rate if callable(rate) else (lambda t: rate), prompt, out, **kw)
        for e in extra:
            r += e(rng, T) if callable(e) else [list(e)]
        return r
    return make


def stream(rate, a, b, prompt, out, **kw):
    return lambda rng, T: S.arrivals(rng, b, lambda t: rate if t >= a else 0.0, prompt, out, t0=a, **kw)


# ======================================================================== serving faults

@trace
def pi_vllm_h100_rag_longprompts():
    return serving("pi-vllm-h100-rag-longprompts", cause="prefill_interference", win=(150, 280), gpu="H100",
                   cfg=S.Cfg("vllm", S.LLAMA8B, max_batched=16384, port=8011, scrape_s=5),
                   reqs=A(6.0, (500, 0.7), (300, 0.6), extra=[stream(1.4, 150, 280, (14000, 0.2), (16, 0.3))]),
                   note="group's 8B chat server: a RAG eval harness starts sending 14k-token prompts at ~1.4/s; "
                        "every decode step carries a 16k-token prefill chunk and ITL for chat users jumps")


@trace
def pi_vllm_a100_chunked_off():
    return serving("pi-vllm-a100-chunked-off", cause="prefill_interference", win=(130, 300), gpu="A100-80",
                   cfg=S.Cfg("vllm", S.LLAMA8B, chunked=False, max_batched=32768, port=8012, scrape_s=10),
                   reqs=A(5.0, (400, 0.6), (220, 0.6), extra=[stream(0.7, 130, 300, (3500, 0.3), (40, 0.5))]),
                   note="mild: an experiment runs vLLM with chunked prefill off; when a summarisation client starts "
                        "(3.5k-token prompts) prefill-only steps stall the decoders, ITL p99 about 2x")


@trace
def pi_sglang_l40s_longdocs():
    return serving("pi-sglang-l40s-longdocs", cause="prefill_interference", win=(140, 290), gpu="L40S", tick=2.0,
                   cfg=S.Cfg("sglang", S.QWEN7B, max_batched=8192, port=30000, overlap=0.8, scrape_s=6),
                   reqs=A(4.0, (500, 0.7), (260, 0.6), extra=[stream(1.2, 140, 290, (7000, 0.25), (24, 0.4))]),
                   note="SGLang on an L40S: long-document classification prompts (7k tokens) arrive among chat "
                        "decodes; prefill crowds out decode on a card with modest FLOPs")


@trace
def pi_vllm_gh200_mild():
    return serving("pi-vllm-gh200-mild", cause="prefill_interference", win=(120, 270), gpu="GH200", tick=0.5,
                   cfg=S.Cfg("vllm", S.QWEN7B, max_batched=8192, port=8013, scrape_s=2),
                   reqs=A(8.0, (400, 0.6), (250, 0.6), extra=[stream(1.6, 120, 270, (6000, 0.3), (12, 0.3))]),
                   note="mild: a few-shot eval (6k-token prompts) shares the group's GH200 server with interactive "
                        "users; ITL p99 up ~1.7x while it runs")


@trace
def or_vllm_h100_120k_doc():
    return serving("or-vllm-h100-120k-doc", cause="oversized_request", win=(160, 215), gpu="H100",
                   cfg=S.Cfg("vllm", S.LLAMA8B, max_batched=8192, max_model_len=131072, port=8014, scrape_s=5),
                   reqs=A(5.0, (500, 0.7), (250, 0.6), extra=[(160.0, 120000, 900, 1, 0)]),
                   note="an evaluation harness sends one 120k-token document to the group's 8B server among short "
                        "prompts; its prefill chunks (attention over 100k+ context) and then its decode (15 GB of KV "
                        "per step) slow every other request")


@trace
def or_vllm_a100_n8_logprobs():
    extra = [lambda rng, T: [[150 + i * 12 + rng.random() * 3, 700, 600, 8, 20] for i in range(8)]]
    return serving("or-vllm-a100-n8-logprobs", cause="oversized_request", win=(150, 260), gpu="A100-80",
                   cfg=S.Cfg("vllm", S.MISTRAL7B, port=8015, scrape_s=5, lp_ms=0.9),
                   reqs=A(4.0, (500, 0.7), (200, 0.6), extra=extra),
                   note="mild: a calibration study sends requests with n=8 and logprobs=20 one after another; each "
                        "holds 8 sequences whose per-step top-k over the vocabulary runs on the host; the batch's ITL "
                        "rises ~1.6x while one is in flight")


@trace
def or_sglang_h100_prompt_fills_pool():
    return serving("or-sglang-h100-prompt-fills-pool", cause="oversized_request", win=(150, 215), gpu="H100",
                   cfg=S.Cfg("sglang", S.QWEN7B, port=30001, pool_tokens=180000, max_model_len=131072, overlap=0.8,
                             max_batched=16384, scrape_s=5),
                   reqs=A(4.0, (800, 0.6), (300, 0.6), extra=[(150.0, 128000, 4000, 1, 0)]),
                   note="one 128k-token prompt on a server whose pool holds 180k tokens: it takes most of the pool, "
                        "other requests queue behind it and every step reads its KV")


@trace
def or_tgi_a6000_best_of():
    return serving("or-tgi-a6000-best-of", cause="oversized_request", win=(140, 260), gpu="A6000", tick=2.0,
                   cfg=S.Cfg("tgi", S.MISTRAL7B, port=8080, max_num_seqs=64, max_batched=4096, scrape_s=10, host_ms=2.0),
                   reqs=A(1.5, (300, 0.6), (150, 0.5), extra=[(140.0, 3000, 4000, 4, 0)]),
                   note="mild: the TGI demo on a lab A6000 gets one request with best_of=4 and max_new_tokens=4000 on a "
                        "3k prompt: four long sequences read their KV every step, demo users' time per token rises")


@trace
def kv_vllm_h100_synth_long():
    return serving("kv-vllm-h100-synth-long", cause="kv_pressure", win=(150, 330), gpu="H100", T=360,
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8016, pool_tokens=90000, scrape_s=5, mem_util=0.55),
                   reqs=A(lambda t: 3.0 if t < 130 else 5.0, (600, 0.5), (200, 0.5),
                          extra=[stream(2.5, 130, 360, (900, 0.4), (3000, 0.4))]),
                   win_fn=lambda w: (150, 330),
                   note="synthetic-data generation switches to long chain-of-thought outputs (~3k tokens) on a server "
                        "started with gpu-memory-utilization 0.55 (a 90k-token pool): the pool fills, requests are "
                        "preempted and recomputed, the queue grows")


@trace
def kv_sglang_a100_retract():
    return serving("kv-sglang-a100-retract", cause="kv_pressure", win=(160, 320), gpu="A100-40", tick=2.0,
                   cfg=S.Cfg("sglang", S.QWEN7B, port=30002, pool_tokens=70000, overlap=0.8, scrape_s=10, scrape_miss=0.05),
                   reqs=A(lambda t: 2.5, (700, 0.5), (250, 0.5), extra=[stream(1.8, 140, 330, (1500, 0.4), (2500, 0.3))]),
                   note="SGLang on an A100 40GB: long generations from a data-synthesis job overflow a 70k-token pool; "
                        "requests are retracted and re-queued")


@trace
def kv_vllm_l40s_mild():
    return serving("kv-vllm-l40s-mild", cause="kv_pressure", win=(150, 300), gpu="L40S",
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8017, pool_tokens=150000, scrape_s=5),
                   reqs=A(lambda t: 3.0, (800, 0.5), (300, 0.5), extra=[stream(0.9, 140, 300, (1200, 0.3), (2600, 0.3))]),
                   note="mild: an L40S server's pool runs full in bursts when a batch of long outputs arrives; a "
                        "handful of preemptions a minute, queue waits of seconds")


@trace
def spec_vllm_h100_wrong_draft():
    return serving("spec-vllm-h100-wrong-draft", cause="spec_decode_rejected", win=(150, 300), gpu="H100",
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8018, spec_k=4, draft=S.LLAMA1B, scrape_s=5,
                             accept_fn=lambda t: 0.72 if t < 150 or t >= 300 else 0.18),
                   reqs=A(4.0, (600, 0.6), (300, 0.6)),
                   note="speculative decoding with a 1B draft fine-tuned by another group; when the eval moves to their "
                        "code tasks the draft's tokens are rejected (acceptance 0.72 -> 0.18): each token costs more")


@trace
def spec_llamacpp_4090_draft():
    return serving("spec-llamacpp-4090-draft", cause="spec_decode_rejected", win=(140, 280), gpu="RTX4090", tick=1.0,
                   cfg=S.Cfg("llamacpp", S.LLAMA8B, port=8080, max_num_seqs=4, spec_k=8, draft=S.LLAMA1B, graphs=True,
                             scrape_s=3, host_ms=0.6, accept_fn=lambda t: 0.78 if t < 140 or t >= 280 else 0.45,
                             pool_tokens=32768),
                   reqs=A(0.35, (400, 0.6), (500, 0.5)),
                   note="mild: llama.cpp on a lab 4090 with a draft model; a student switches to a German corpus the "
                        "draft knows poorly: acceptance 0.78 -> 0.45, tokens/s down ~25%")


@trace
def spec_sglang_h100_eagle_temp():
    return serving("spec-sglang-h100-eagle-temp", cause="spec_decode_rejected", win=(160, 300), gpu="H100", tick=2.0,
                   cfg=S.Cfg("sglang", S.LLAMA8B, port=30003, spec_k=3, draft=S.LLAMA1B, overlap=0.8, scrape_s=4,
                             accept_fn=lambda t: 0.8 if t < 160 or t >= 300 else 0.22),
                   reqs=A(6.0, (500, 0.6), (300, 0.6)),
                   note="SGLang with EAGLE drafts: a diversity sweep raises temperature to 1.3; acceptance falls from "
                        "0.8 to ~0.2 and verification wastes most of each step")


@trace
def mb_vllm_h100_longctx():
    return serving("mb-vllm-h100-longctx", cause="memory_bandwidth", win=(150, 300), gpu="H100",
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8019, max_model_len=65536, scrape_s=5),
                   reqs=A(lambda t: 5.0 if t < 150 or t >= 300 else 0.4, (600, 0.6), (250, 0.6),
                          extra=[lambda rng, T: [r + [r[1] - 200] for r in stream(0.5, 150, 300, (30000, 0.1), (900, 0.3))(rng, T)]]),
                   note="an evaluation moves to 30k-token contexts (RULER-style) on the 8B server: every decode step "
                        "reads tens of GB of KV, DRAM activity pins near its peak and tokens/s per user halves")


@trace
def mb_vllm_h100_awq_dequant():
    return serving("mb-vllm-h100-awq-dequant", cause="memory_bandwidth", win=(150, 290), gpu="H100",
                   cfg=S.Cfg("vllm", S.LLAMA8B_AWQ, port=8020, dq_tokens=48, scrape_s=5, max_batched=2048),
                   reqs=A(lambda t: 1.5, (300, 0.5), (200, 0.5), extra=[stream(18.0, 150, 290, (100, 0.3), (600, 0.3))]),
                   note="INT4 AWQ checkpoint on an H100: when a batch job pushes steps past 48 tokens the group's AWQ build (a dequantise-then-GEMM path above a token threshold) "
                        "dequantises every weight to fp16 per step; memory traffic multiplies and ITL triples")


@trace
def mb_vllm_v100_unfused_attn():
    return serving("mb-vllm-v100-unfused-attn", cause="memory_bandwidth", win=(150, 300), gpu="V100", tick=2.0,
                   cfg=S.Cfg("vllm", S.LLAMA13B, port=8021, max_model_len=4096, scrape_s=10, graphs=True,
                             attn_mem_fn=lambda t: 1.0 if t < 150 or t >= 300 else 3.5, pool_tokens=12000),
                   reqs=A(lambda t: 1.2, (500, 0.5), (200, 0.5)),
                   note="V100 (no FlashAttention): an experiment's custom attention op falls back to the unfused path, "
                        "materialising scores in HBM; memory-controller utilisation pins and ITL rises 2x")


@trace
def tk_vllm_h100_grammar_op():
    return serving("tk-vllm-h100-grammar-op", cause="tiny_kernels", win=(150, 290), gpu="H100",
                   cfg=S.Cfg("vllm", S.QWEN7B, port=8022, scrape_s=5,
                             extra_fn=lambda t: 22.0 if 150 <= t < 290 else 0.0, extra_sm=0.02),
                   reqs=A(5.0, (500, 0.6), (200, 0.6)),
                   note="a group's grammar-constrained decoding op (one Triton program per step, a serial scan over the "
                        "vocabulary) runs 22 ms per step on two SMs: GPU-Util stays ~99%, SM activity falls to a sliver")


@trace
def tk_vllm_gh200_python_logits():
    return serving("tk-vllm-gh200-python-logits", cause="tiny_kernels", win=(130, 280), gpu="GH200", tick=1.0,
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8023, scrape_s=3,
                             extra_fn=lambda t: 7.0 if 130 <= t < 280 else 0.0, extra_sm=0.06),
                   reqs=A(6.0, (500, 0.6), (250, 0.6)),
                   note="mild: a student's per-request Python logits processor launches dozens of tiny kernels per "
                        "request per step; busy time without SM work, tokens/s down ~30%")


@trace
def hc_vllm_h100_neighbour_preproc():
    return serving("hc-vllm-h100-neighbour-preproc", cause="host_cpu_contention", win=(150, 290), gpu="H100",
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8024, scrape_s=5, host_ms=4.0, graphs=True),
                   reqs=A(6.0, (400, 0.6), (200, 0.6)),
                   host=dict(cpus=96, cores=12, demand=1.8, threads=6, node_busy=lambda t: 10 + on(t, 150, 290, 60),
                             other=lambda t: on(t, 150, 290, 44.0)),
                   note="a neighbour job (cores not constrained by the Slurm cgroup) runs a 48-process tokenisation "
                        "pass on the same cores: the engine's scheduler loop loses CPU, steps stretch, GPU-Util drops")


@trace
def hc_sglang_a100_quota():
    return serving("hc-sglang-a100-quota", cause="host_cpu_contention", win=(150, 300), gpu="A100-80", tick=2.0,
                   cfg=S.Cfg("sglang", S.QWEN7B, port=30004, overlap=0.5, host_ms=5.0, scrape_s=6),
                   reqs=A(6.0, (500, 0.6), (200, 0.6)),
                   host=dict(cpus=64, cores=16, demand=1.6, threads=6, quota=2.0, node_busy=lambda t: 8.0),
                   setup=lambda w: setattr(w.host, "demand_fn", lambda t: 1.6 + on(t, 150, 300, 2.9)),
                   note="mild: the job's cgroup has a 2-CPU quota; when its own eval harness starts tokenising inside the "
                        "same job, the tree wants ~2.8 cores, CFS throttles it every period and the scheduler stalls")


@trace
def lj_vllm_h100_irq():
    return serving("lj-vllm-h100-irq", cause="host_launch_jitter", win=(150, 290), gpu="H100", ebpf=True,
                   cfg=S.Cfg("vllm", S.QWEN7B, port=8025, scrape_s=5, graphs=False, host_ms=1.0),
                   reqs=A(6.0, (400, 0.6), (200, 0.6)),
                   host=dict(cpus=128, cores=8, demand=1.5, threads=5, node_busy=lambda t: 12.0,
                             irq=lambda t: on(t, 150, 290, 0.22)),
                   jitter=lambda t: (0.035, 900.0) if 150 <= t < 290 else (0.0005, 40.0),
                   note="eager-mode engine (admin runs gputop as root with eBPF): during a GPFS checkpoint storm the "
                        "InfiniBand/GPFS softirqs land on the launch thread's core; cudaLaunchKernel p99 goes from "
                        "~10 us to ~1 ms and decode steps jitter")


@trace
def lj_sglang_l40s_jitter():
    return serving("lj-sglang-l40s-jitter", cause="host_launch_jitter", win=(140, 280), gpu="L40S", ebpf=True,
                   cfg=S.Cfg("sglang", S.LLAMA8B, port=30005, graphs=False, overlap=0.6, scrape_s=5),
                   reqs=A(4.0, (400, 0.6), (200, 0.6)),
                   host=dict(cpus=64, cores=8, demand=1.5, threads=5, node_busy=lambda t: 6.0,
                             irq=lambda t: on(t, 140, 280, 0.12)),
                   jitter=lambda t: (0.02, 500.0) if 140 <= t < 280 else (0.0005, 40.0),
                   note="mild: the launching thread shares its core with a chatty monitoring agent's timer and NIC "
                        "interrupts; launch latency p99 grows, step time +20%")


@trace
def gs_vllm_a100_jupyter():
    def setup(w):
        w.share_fn = lambda t, g: 0.45 if 150 <= t < 290 else 0.0
        w.add(0, 150, 290, 0.5, 0.42, 0.3, 0.2, pid=777123)
    nb = Proc(777123, 0, "python3", "/opt/conda/bin/python -m ipykernel_launcher -f /run/user/jupyter/kernel-7f3a.json",
              "s.student", 9 * 2**30, 145, 1e9, cpu_cores=1.0, tree=False, slurm_job="4188702")
    return serving("gs-vllm-a100-jupyter", cause="gpu_shared", win=(150, 290), gpu="A100-80", setup=setup, others=(nb,),
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8026, scrape_s=5, mem_util=0.8),
                   reqs=A(5.0, (500, 0.6), (220, 0.6)),
                   note="a Jupyter kernel (another job on a mis-set GRES) starts a training loop on the A100 that the "
                        "group's vLLM server holds: time-slicing gives it ~45% of the GPU, ITL nearly doubles")


@trace
def th_vllm_l40s_hot_afternoon():
    def setup(w):
        w.inlet_fn = lambda t, g: ramp(t, 90, 190, 27.0, 55.0)
    def win(w):
        a = first_reason(w, 0, ("thermal (sw)", "hw slowdown")) or 200
        return (a, 360)
    return serving("th-vllm-l40s-hot-afternoon", cause="throttling", win=None, win_fn=win, gpu="L40S", setup=setup,
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8027, scrape_s=5, max_batched=8192),
                   reqs=A(1.1, (3000, 0.4), (60, 0.5)),
                   note="slow onset: a hot afternoon, a CRAC unit trips and the L40S row's inlet climbs from 27 to 55 C; the GPU reaches its "
                        "slowdown temperature and the clock is cut; prefill-heavy eval traffic slows with it")


# ======================================================================== training faults

def ddp(**kw):
    base = dict(ranks=tuple(range(8)), comp_s=0.42, allreduce_s=0.05, workers=8, batch_cpu_s=1.6, io_s=0.05,
                tokens_per_step=0, samples_per_step=2048, kernels=2600)
    base.update(kw)
    return TR.TCfg(**base)


@trace
def is_ddp_h100x8_gpfs_metadata():
    return training("is-ddp-h100x8-gpfs-metadata", cause="input_stall", win=(150, 300), gpu="H100", ngpu=8,
                    tcfg=ddp(io_fn=lambda t: ramp(t, 150, 175, 0.05, 6.0) if t < 300 else 0.05),
                    note="ViT pre-training reading small JPEG files from GPFS; every group checkpoints at once and the "
                         "metadata servers stall: each file open takes ~100 ms, workers wait on I/O (not CPU), GPUs idle "
                         "between steps")


@trace
def is_a100x4_jpeg_few_workers():
    return training("is-a100x4-jpeg-few-workers", cause="input_stall", win=(130, 330), gpu="A100-40", ngpu=4,
                    tcfg=ddp(ranks=(0, 1, 2, 3), workers=3, comp_s=0.5, batch_cpu_s=0.4,
                             io_fn=lambda t: 0.02 if t < 130 else 2.5, samples_per_step=256, export="http://localhost:9400/metrics"),
                    note="diffusion fine-tune with 3 DataLoader workers per GPU; at epoch 2 the data mixture switches "
                         "from pre-extracted latents to raw 1024px JPEGs and decoding can't keep up")


@trace
def is_l40s_video_decode_mild():
    return training("is-l40s-video-decode-mild", cause="input_stall", win=(150, 320), gpu="L40S", ngpu=4, tick=2.0,
                    tcfg=ddp(ranks=(0, 1, 2, 3), workers=6, comp_s=0.6, batch_cpu_s=2.0,
                             io_fn=lambda t: 0.05 if t < 150 else 4.2, samples_per_step=64),
                    note="mild: a video model's clips from a longer-duration shard need more decode per batch; workers "
                         "fall ~25% short and the GPUs wait part of each step")


@trace
def is_gh200_lustre_intermittent():
    io = lambda t: 15.0 if 120 <= t < 310 and (t - 120) % 45 < 14 else 0.03
    return training("is-gh200-lustre-intermittent", cause="input_stall", win=(120, 310), gpu="GH200", ngpu=1, tick=0.5,
                    tcfg=TR.TCfg(ranks=(0,), remote=3, comp_s=0.35, allreduce_s=0.05, workers=6, batch_cpu_s=0.6,
                                 io_fn=io, tokens_per_step=1 << 20, export="http://localhost:9100/metrics", scrape_s=2),
                    note="intermittent: a 4-node GH200 LM run streams token shards from Lustre; for ~14 s of every 45 s "
                         "an OST under checkpoint load stalls reads and the GPU idles")


@trace
def cs_h100x8_one_gpu_lowclock():
    return training("cs-h100x8-one-gpu-lowclock", cause="collective_straggler", win=(150, 330), gpu="H100", ngpu=8,
                    culprit=(5,), setup=lambda w: setattr(w, "brake_fn", lambda t, g: g == 5 and 150 <= t < 330),
                    tcfg=ddp(io_s=0.02, batch_cpu_s=0.8, tokens_per_step=4 << 20, samples_per_step=0,
                             export="http://localhost:9300/metrics"),
                    note="GPU 5's board asserts a slowdown (its clock drops to ~40%); the other seven ranks wait in "
                         "every all-reduce, their GPU-Util stays high on NCCL spin with low SM activity")


@trace
def cs_a100x4_noisy_rank_mild():
    return training("cs-a100x4-noisy-rank-mild", cause="collective_straggler", win=(140, 300), gpu="A100-80", ngpu=4,
                    culprit=(2,), tcfg=ddp(ranks=(0, 1, 2, 3), comp_s=0.5, rank_slow={2: lambda t: 1.35 if 140 <= t < 300 else 1.0},
                                           batch_cpu_s=0.8, samples_per_step=512),
                    note="mild: rank 2's CPU cores (NUMA node 1) are shared with a neighbour's preprocessing; its "
                         "launches fall behind and the other ranks wait ~25% of each step at the all-reduce")


@trace
def cs_h100x8_multinode_ib_degraded():
    return training("cs-h100x8-multinode-ib-degraded", cause="collective_straggler", win=(160, 320), gpu="H100", ngpu=8,
                    tcfg=ddp(remote=24, allreduce_s=0.08, ar_fn=lambda t: 5.5 if 160 <= t < 320 else 1.0, batch_cpu_s=0.8,
                             io_s=0.02, tokens_per_step=8 << 20, samples_per_step=0, export="http://localhost:9300/metrics"),
                    note="a 32-GPU FSDP job seen from one healthy node: another node's InfiniBand link retrained to 1x; "
                         "all local ranks wait in the collectives (no local culprit)")


@trace
def cs_v100x4_clogged_heatsink():
    def win(w):
        a = first_reason(w, 1, ("thermal (sw)", "hw slowdown")) or 240
        return (a, 480)
    return training("cs-v100x4-clogged-heatsink", cause="collective_straggler", win=None, win_fn=win, gpu="V100", ngpu=4,
                    T=480, tick=2.0, culprit=(1,), r_scale={1: 2.6},
                    tcfg=ddp(ranks=(0, 1, 2, 3), comp_s=0.7, comp_alpha=0.85, batch_cpu_s=0.9, samples_per_step=256),
                    note="slow onset: one V100 with a clogged heatsink heats up under load, reaches its slowdown "
                         "temperature and clocks down; the other three ranks wait for it at every all-reduce")


@trace
def th_h100x8_power_brake_row():
    return training("th-h100x8-power-brake-row", cause="throttling", win=(150, 290), gpu="H100", ngpu=8,
                    setup=lambda w: setattr(w, "brake_fn", lambda t, g: 150 <= t < 290 and (t % 20) < 16),
                    tcfg=ddp(io_s=0.02, batch_cpu_s=0.8, tokens_per_step=4 << 20, samples_per_step=0),
                    note="the breaker-limited row: when every node is busy the PDU asserts the power brake; all eight "
                         "GPUs drop to ~40% clock together, steps take ~2x (intermittent within the window)")


@trace
def th_a100x4_hot_afternoon_mild():
    def setup(w):
        w.inlet_fn = lambda t, g: ramp(t, 60, 260, 26.0, 49.0)
    def win(w):
        a = first_reason(w, 0, ("thermal (sw)", "hw slowdown")) or 250
        return (a, 420)
    return training("th-a100x4-hot-afternoon-mild", cause="throttling", win=None, win_fn=win, gpu="A100-80", ngpu=4,
                    T=420, tick=2.0, setup=setup, tcfg=ddp(ranks=(0, 1, 2, 3), comp_s=0.6, comp_alpha=0.85, batch_cpu_s=0.8),
                    note="mild, slow onset: the machine room warms through the afternoon (inlet 26 -> 49 C as one CRAC unit struggles); the A100 SXM node's GPUs "
                         "reach their slowdown temperature together and clocks sag")


@trace
def th_l40s_power_limit_lowered():
    return training("th-l40s-power-limit-lowered", cause="throttling", win=(150, 330), gpu="L40S", ngpu=2,
                    setup=lambda w: setattr(w, "limit_fn", lambda t, g: 170.0 if t >= 150 else 350.0),
                    tcfg=ddp(ranks=(0, 1), comp_s=0.55, comp_alpha=0.9, batch_cpu_s=0.8, samples_per_step=128),
                    note="an admin lowers the L40S nodes' power limit to 170 W to keep the row under its breaker budget; "
                         "clocks drop ~35% on both GPUs and the job slows")


@trace
def hc_h100x8_quota_4cpus():
    return training("hc-h100x8-quota-4cpus", cause="host_cpu_contention", win=(150, 320), gpu="H100", ngpu=8,
                    host=dict(cpus=128, cores=4, quota=4.0, threads=40, node_busy=lambda t: 20.0),
                    setup=lambda w: setattr(w.host, "demand_fn", lambda t: 3.6 if t < 150 else 13.0),
                    tcfg=ddp(workers=2, batch_cpu_s=0.25, io_s=0.01, host_s=0.05,
                             cpu_fn=lambda t: 1.0 if t < 150 else 4.0),
                    note="an 8-GPU job submitted with --cpus-per-task=4: fine while batches were pre-tokenised; at stage 2 "
                         "on-the-fly packing needs ~13 cores, the 4-CPU quota throttles every period, launch threads "
                         "and workers starve")


@trace
def hc_a100x4_neighbour_preproc():
    return training("hc-a100x4-neighbour-preproc", cause="host_cpu_contention", win=(140, 300), gpu="A100-40", ngpu=4,
                    host=dict(cpus=64, cores=32, threads=30, node_busy=lambda t: 6 + on(t, 140, 300, 32),
                              other=lambda t: on(t, 140, 300, 64.0)),
                    tcfg=ddp(ranks=(0, 1, 2, 3), workers=6, comp_s=0.5, batch_cpu_s=2.0, host_s=0.05),
                    note="a neighbour's CPU-heavy preprocessing (56 processes) lands on the same unconstrained cores; "
                         "run queue and CPU pressure climb, the job's workers and launch threads lose CPU")


@trace
def mb_h100_embedding_adam():
    return training("mb-h100-embedding-adam", cause="memory_bandwidth", win=(150, 310), gpu="H100", ngpu=1,
                    tcfg=TR.TCfg(ranks=(0,), comp_s=0.30, opt_s=0.03, opt_fn=lambda t: 12.0 if t >= 150 and t < 310 else 1.0,
                                 opt_dram_fn=lambda t: 0.93 if 150 <= t < 310 else 0.7, workers=4, batch_cpu_s=0.3,
                                 tokens_per_step=262144, export="http://localhost:9200/metrics"),
                    note="a student enlarges the vocabulary/embedding table to 4M rows with unfused Adam (foreach off): "
                         "the optimizer step streams GBs of state every step, DRAM pinned, tensor idle, step 2x")


@trace
def tk_h100_rl_rollout_batch1():
    return training("tk-h100-rl-rollout-batch1", cause="tiny_kernels", win=(150, 290), gpu="H100", ngpu=1,
                    tcfg=TR.TCfg(ranks=(0,), comp_s=0.35, workers=2, batch_cpu_s=0.1,
                                 tiny=lambda t: (0.97, 0.07) if 150 <= t < 290 else None),
                    setup=None,
                    note="RL fine-tuning: a config bug sets num_envs=1; the rollout phase replays CUDA graphs of batch-1 "
                         "generation with a 0.5B policy: GPU-Util 97%, SM activity ~7%, rollouts 10x slower")


@trace
def tk_gh200_debug_per_sample():
    return training("tk-gh200-debug-per-sample", cause="tiny_kernels", win=(130, 290), gpu="GH200", ngpu=1, tick=1.0,
                    tcfg=TR.TCfg(ranks=(0,), comp_s=0.3, workers=4, batch_cpu_s=0.3,
                                 tiny=lambda t: (0.92, 0.12) if 130 <= t < 290 else None),
                    note="mild: a debugging run loops over samples one at a time under torch.compile(mode='reduce-"
                         "overhead'): back-to-back tiny kernels, the GPU looks busy while SMs idle")


@trace
def gs_a6000_two_students():
    def setup(w):
        w.add(0, 150, 320, 0.48, 0.4, 0.25, 0.2, pid=880044)
    other = Proc(880044, 0, "python3", "python finetune_bert.py --bs 32", "j.doe", 11 * 2**30, 148, 1e9, cpu_cores=1.5,
                 tree=False, slurm_job="4190113")
    return training("gs-a6000-two-students", cause="gpu_shared", win=(150, 320), gpu="A6000", ngpu=1, setup=setup,
                    others=(other,), user="m.chen",
                    tcfg=TR.TCfg(ranks=(0,), comp_s=0.5, workers=6, batch_cpu_s=0.8, samples_per_step=32,
                                 rank_slow={0: lambda t: 1.9 if 150 <= t < 320 else 1.0}),
                    note="misconfigured GRES on a lab A6000: a second student's fine-tune lands on the same GPU; "
                         "time-slicing halves each job's share")


@trace
def gs_h100x4_forgotten_notebook():
    def setup(w):
        w.add(2, 150, 300, 0.4, 0.35, 0.25, 0.15, pid=881200)
    nb = Proc(881200, 2, "python3", "/opt/conda/bin/python -m ipykernel_launcher", "a.lee", 14 * 2**30, 0, 1e9,
              cpu_cores=1.0, tree=False, slurm_job="4170021")
    return training("gs-h100x4-forgotten-notebook", cause="gpu_shared", win=(150, 300), gpu="H100", ngpu=4, culprit=(2,),
                    setup=setup, others=(nb,),
                    tcfg=ddp(ranks=(0, 1, 2, 3), comp_s=0.45, batch_cpu_s=0.8, samples_per_step=512,
                             rank_slow={2: lambda t: 1.65 if 150 <= t < 300 else 1.0}),
                    note="an interactive session someone forgot holds GPU 2; at 150 s its notebook runs an evaluation "
                         "cell and takes SM time: rank 2 slows and the others wait for it")


@trace
def lj_h100_eager_irq():
    return training("lj-h100-eager-irq", cause="host_launch_jitter", win=(150, 300), gpu="H100", ngpu=1, ebpf=True,
                    host=dict(cpus=128, cores=8, demand=2.5, threads=8, node_busy=lambda t: 10.0,
                              irq=lambda t: on(t, 150, 300, 0.2)),
                    jitter=lambda t: (0.03, 800.0) if 150 <= t < 300 else (0.0005, 40.0),
                    tcfg=TR.TCfg(ranks=(0,), comp_s=0.12, host_s=0.10, kernels=9000, workers=4, batch_cpu_s=0.2),
                    note="an eager-mode small-model fine-tune (launch-bound, ~9k kernels a step); IB/NFS softirqs are "
                         "steered to its launch thread's core: cudaLaunchKernel p99 to ~1 ms, steps +30%")


# ======================================================================== healthy look-alikes

@trace
def ok_ddp_eval_checkpoint():
    return training("ok-ddp-eval-checkpoint", cause=None, win=None, gpu="H100", ngpu=8, T=420, family="lookalike",
                    tcfg=ddp(io_s=0.02, batch_cpu_s=0.8, eval_every=150, eval_steps=60, ckpt_at=(250.0,), ckpt_s=28,
                             tokens_per_step=4 << 20, samples_per_step=0, export="http://localhost:9300/metrics"),
                    note="healthy: a DDP run's periodic evaluation pass and a 28 s checkpoint to GPFS (rank 0 writes, "
                         "others spin in a barrier)")


@trace
def ok_pipeline_bubbles():
    return training("ok-pipeline-bubbles", cause=None, win=None, gpu="H100", ngpu=8, family="lookalike",
                    tcfg=ddp(pipeline=4, microbatches=8, comp_s=0.9, allreduce_s=0.04, batch_cpu_s=0.5),
                    note="healthy: Megatron TP=2 x PP=4; pipeline bubbles (~27%) are normal, steady")


@trace
def ok_compile_warmup():
    return training("ok-compile-warmup", cause=None, win=None, gpu="A100-80", ngpu=4, family="lookalike",
                    tcfg=ddp(ranks=(0, 1, 2, 3), compiled=True, comp_s=0.45, batch_cpu_s=0.8,
                             warm_fn=lambda t: 6.0 if t < 50 else (2.0 if t < 80 else 1.0),
                             tiny=None),
                    note="healthy: a torch.compile run's first minute and a half: compiling and recompiling graphs "
                         "(GPU mostly idle), then steady steps")


@trace
def ok_grad_accum():
    return training("ok-grad-accum", cause=None, win=None, gpu="L40S", ngpu=4, family="lookalike", tick=2.0,
                    tcfg=ddp(ranks=(0, 1, 2, 3), accum=8, comp_s=0.25, allreduce_s=0.35, opt_s=0.08, batch_cpu_s=0.4),
                    note="healthy: gradient accumulation over 8 micro-batches; every 8th step carries a long "
                         "all-reduce and the optimizer step (uneven steps)")


@trace
def ok_sweep_finishing():
    jobs = []
    for i, end in enumerate((130, 190, 250, 320)):
        jobs.append(TR.TCfg(ranks=(i,), comp_s=0.2 + 0.03 * i, workers=3, batch_cpu_s=0.3, end=end, pid0=150000 + i * 10))
    def build():
        b = training("ok-sweep-finishing", cause=None, win=None, gpu="A100-40", ngpu=4, family="lookalike", T=360,
                     tcfg=jobs[0], extra_jobs=jobs[1:],
                     note="healthy: a hyper-parameter sweep packs four small jobs onto one node; they finish one by one")
        return b
    return build()


@trace
def ok_jupyter_idle():
    def setup(w):
        for k in range(0, 360, 70):
            w.add(0, k + 20, k + 24, 0.9, 0.6, 0.3, 0.3, pid=5012)
    nb = Proc(5012, 0, "python3", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-2b1e.json", "p.ortiz",
              40 * 2**30, 0, 1e9, cpu_cores=0.05)
    return training("ok-jupyter-idle", cause=None, win=None, gpu="A6000", ngpu=1, family="lookalike", setup=setup,
                    others=(nb,),
                    tcfg=TR.TCfg(ranks=(0,), start=400, comp_s=0.3, workers=1), user="p.ortiz", script="ipykernel_launcher",
                    note="healthy: a Jupyter session holds 40 GB on a lab A6000 while its owner reads plots; an "
                         "occasional cell runs for a few seconds")


@trace
def ok_power_capped_row():
    return training("ok-power-capped-row", cause=None, win=None, gpu="H100", ngpu=8, family="lookalike",
                    limits={i: 500.0 for i in range(8)},
                    tcfg=ddp(comp_tensor=0.75, comp_sm=0.92, batch_cpu_s=0.8, io_s=0.02),
                    note="healthy: the breaker-limited row runs at a 500 W cap all the time; clocks sit at the cap with "
                         "'power cap' set, throughput steady")


@trace
def ok_warm_room():
    return training("ok-warm-room", cause=None, win=None, gpu="V100", ngpu=4, family="lookalike", inlet=30.0, tick=2.0,
                    tcfg=ddp(ranks=(0, 1, 2, 3), comp_s=0.7, batch_cpu_s=0.8),
                    note="healthy: a warm room (30 C inlet): V100s run in the high 70s, under their slowdown limit")


@trace
def ok_ddp_allreduce_waits():
    return training("ok-ddp-allreduce-waits", cause=None, win=None, gpu="GH200", ngpu=1, family="lookalike", tick=0.5,
                    tcfg=TR.TCfg(ranks=(0,), remote=7, comp_s=0.4, comp_jitter=0.05, allreduce_s=0.09, workers=6,
                                 batch_cpu_s=0.6, tokens_per_step=2 << 20, export="http://localhost:9100/metrics", scrape_s=2),
                    note="healthy: an 8-node GH200 data-parallel run; each rank waits briefly at every all-reduce for the "
                         "slowest of the others, as normal")


@trace
def ok_fsdp_multinode():
    return training("ok-fsdp-multinode", cause=None, win=None, gpu="H100", ngpu=8, family="lookalike", T=420,
                    tcfg=ddp(remote=8, allreduce_s=0.12, comp_s=0.6, batch_cpu_s=0.8, ckpt_at=(300.0,), ckpt_s=35,
                             tokens_per_step=8 << 20, samples_per_step=0),
                    note="healthy: a 16-GPU FSDP run over InfiniBand with a sharded checkpoint at 300 s")


@trace
def ok_rl_rollout_batched():
    ph = lambda t: (t % 90) < 35
    return training("ok-rl-rollout-batched", cause=None, win=None, gpu="H100", ngpu=1, family="lookalike", T=400,
                    tcfg=TR.TCfg(ranks=(0,), comp_s=0.35, workers=2, batch_cpu_s=0.1,
                                 tiny=lambda t: (0.9, 0.55) if ph(t) else (0.98, 0.88)),
                    note="healthy: RL fine-tuning alternating batched rollouts (256 envs, decode-heavy) with training")


@trace
def ok_4090_pair_ddp():
    return training("ok-4090-pair-ddp", cause=None, win=None, gpu="RTX4090", ngpu=2, family="lookalike",
                    tcfg=ddp(ranks=(0, 1), comp_s=0.35, allreduce_s=0.14, batch_cpu_s=0.6, workers=6),
                    note="healthy: two RTX 4090s in a lab workstation, DDP over PCIe (no P2P): long but steady all-reduce")


@trace
def ok_course_endpoint():
    rate = lambda t: 0.6 + 7.0 * math.exp(-((t - 200) / 70) ** 2)
    return serving("ok-course-endpoint", cause=None, win=None, gpu="A100-80", family="lookalike", T=420,
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8100, scrape_s=15, scrape_miss=0.03),
                   reqs=A(rate, (300, 0.7), (200, 0.6)),
                   note="healthy: the course's shared endpoint; students' traffic follows the lecture's exercise slot")


@trace
def ok_synth_saturation():
    return serving("ok-synth-saturation", cause=None, win=None, gpu="H100", family="lookalike",
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8101, max_num_seqs=192, scrape_s=5),
                   reqs=A(10.0, (400, 0.4), (900, 0.3)),
                   note="healthy: offline synthetic-data generation saturating the server (192 running, a bounded queue)")


@trace
def ok_long_outputs():
    return serving("ok-long-outputs", cause=None, win=None, gpu="H100", family="lookalike", tick=2.0,
                   cfg=S.Cfg("sglang", S.QWEN7B, port=30100, overlap=0.8, scrape_s=6),
                   reqs=A(0.0, extra=[lambda rng, T: [[5 + i * 0.3, 500, 9000, 1, 0] for i in range(48)]]),
                   note="healthy: 48 long generations (9k tokens each): step time grows slowly with context")


@trace
def ok_server_restart():
    return serving("ok-server-restart", cause=None, win=None, gpu="L40S", family="lookalike", T=420,
                   cfg=S.Cfg("vllm", S.QWEN7B, port=8102, scrape_s=5, prefix_hit=0.3),
                   reqs=A(3.0, (600, 0.6), (200, 0.6)), restart=(150, 210),
                   note="healthy: the group restarts its server to load a new checkpoint (same address); it loads "
                        "weights, captures graphs and warms up")


@trace
def ok_llamacpp_workstation():
    rate = lambda t: 0.25 if (t % 120) < 70 else 0.0
    return serving("ok-llamacpp-workstation", cause=None, win=None, gpu="RTX4090", family="lookalike", tick=1.0,
                   cfg=S.Cfg("llamacpp", S.LLAMA8B, port=8080, max_num_seqs=2, scrape_s=3, pool_tokens=16384, host_ms=0.5),
                   reqs=A(rate, (500, 0.6), (350, 0.5)),
                   note="healthy: one student chatting with llama.cpp on a lab 4090; bursts and pauses")


@trace
def ok_tgi_demo():
    return serving("ok-tgi-demo", cause=None, win=None, gpu="A6000", family="lookalike", tick=2.0,
                   cfg=S.Cfg("tgi", S.MISTRAL7B, port=8081, max_num_seqs=64, scrape_s=10, host_ms=2.0),
                   reqs=A(lambda t: 0.4 + 0.8 * (180 < t < 260), (300, 0.6), (180, 0.5)),
                   note="healthy: a TGI demo at an open day, low traffic with a visit at ~3 minutes")


@trace
def ok_embedding_job():
    return serving("ok-embedding-job", cause=None, win=None, gpu="L40S", family="lookalike",
                   cfg=S.Cfg("vllm", S.LLAMA1B, port=8103, scrape_s=5),
                   reqs=A(lambda t: 40.0 if 30 < t < 330 else 0.0, (400, 0.4), (1, 0.01)),
                   note="healthy: an embedding pass over a corpus (prefill only, one token out), steady")


@trace
def ok_spec_decode_steady():
    return serving("ok-spec-decode-steady", cause=None, win=None, gpu="H100", family="lookalike",
                   cfg=S.Cfg("vllm", S.LLAMA8B, port=8104, spec_k=4, draft=S.LLAMA1B, scrape_s=5,
                             accept_fn=lambda t: 0.7 + 0.03 * math.sin(t / 40)),
                   reqs=A(4.0, (600, 0.6), (300, 0.6)),
                   note="healthy: speculative decoding with a well-matched draft; acceptance steady near 0.7")


@trace
def ok_sglang_eval_bursts():
    def bursts(rng, T):
        out = []
        for b0 in (40, 160, 280):
            for i in range(180):
                out.append([b0 + rng.random() * 2, int(rng.lognormal(math.log(700), 0.5)), int(rng.lognormal(math.log(120), 0.5)), 1, 0])
        return out
    return serving("ok-sglang-eval-bursts", cause=None, win=None, gpu="H100", family="lookalike", T=380,
                   cfg=S.Cfg("sglang", S.QWEN7B, port=30101, overlap=0.8, scrape_s=4),
                   reqs=A(0.2, extra=[bursts]),
                   note="healthy: an eval harness submits 180 prompts at once every two minutes; the queue drains each time")


@trace
def ok_vllm_tp4_70b():
    return serving("ok-vllm-tp4-70b", cause=None, win=None, gpu="H100", ngpu=4, family="lookalike",
                   cfg=S.Cfg("vllm", S.LLAMA70B, gpus=(0, 1, 2, 3), port=8105, scrape_s=5),
                   reqs=A(3.0, (700, 0.6), (300, 0.6)),
                   note="healthy: a 70B model with tensor parallelism 4 serving a lab's assistants, steady")
