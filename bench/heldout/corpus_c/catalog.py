"""The traces: one builder per user's situation, each with its truth.

A builder returns (Truth, World); ``World.frames()`` makes the frames.  Windows are
seconds from the first frame: when the cause starts acting and when it stops (or the
trace ends).  Culprit GPUs are the GPUs where the cause lives (all of the job's GPUs for
an engine-wide cause)."""

from __future__ import annotations

import dataclasses

from corpus_c import models as M
from corpus_c.hw import GIB
from corpus_c.kit import (Truth, blend, bursts, clock_cap, const, cooling, mix, power_limit, ramp,
                  serving, step, wave, window_mix)
from corpus_c.serve import EngineCfg, Req
from corpus_c.training import CudaProgram, IdleProc, TrainingJob
from corpus_c.world import World

CATALOG: list = []

CHAT = mix(800, 0.8, 220, 0.7, cached=0.25)
CODE = mix(2500, 0.6, 380, 0.6, cached=0.45)
SHORT = mix(300, 0.6, 120, 0.6, cached=0.1)


def trace(fn):
    CATALOG.append((fn.__name__, fn))
    return fn


def T(name, cause, w, engine, window=None, culprit=None, note="", physics=""):
    kind = "training" if engine == "trainer" or engine.startswith("train") else (
        "cuda" if engine == "none" else "serving")
    fam = f"{kind}-{'healthy' if cause is None else 'pathology'}"
    return Truth(name, fam, cause, engine, len(w.boards), w.spec.model, w.tick_s, w.length,
                 window, tuple(culprit) if culprit is not None else None, note, physics)


# =================================================================== healthy serving
@trace
def h_vllm_h100_steady_chat(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, wave(9, 1.5, 300), CHAT)
    return T(name, None, w, "vllm", note="steady chat traffic, ~9 req/s"), w


@trace
def h_vllm_h200_demand_falling(name):
    w, _ = serving(name, "H200", 1, 2.0, 600, "vllm", M.QWEN7B, ramp(60, 540, 22, 2), CHAT)
    return T(name, None, w, "vllm", note="evening: demand falls 22 -> 2 req/s",
             physics="batch shrinks; tokens/s and util fall; latency improves"), w


@trace
def h_vllm_h100_demand_rising(name):
    w, _ = serving(name, "H100", 1, 1.0, 540, "vllm", M.LLAMA8B, ramp(60, 480, 2, 16), CHAT)
    return T(name, None, w, "vllm", note="morning: demand rises 2 -> 16 req/s",
             physics="batch grows; ITL rises ~1.3x from KV reads, tokens/s rises"), w


@trace
def h_sglang_h100_bursty(name):
    w, _ = serving(name, "H100", 1, 0.5, 300, "sglang", M.QWEN7B,
                   bursts(2, 22, 40, 12, start=20), CHAT)
    return T(name, None, w, "sglang", note="bursty arrivals: 12 s at 22 req/s every 40 s",
             physics="queue and TTFT spike briefly in each burst, drain in seconds"), w


@trace
def h_vllm_tp4_h100_saturated(name):
    w, _ = serving(name, "H100", 4, 1.0, 480, "vllm", M.LLAMA70B, const(9.2), CHAT,
                   cfg=EngineCfg(max_seqs=128))
    return T(name, None, w, "vllm", note="70B TP4 at its max_num_seqs: saturated, steady",
             physics="a small steady queue; latency high but flat"), w


@trace
def h_vllm_h100_restart(name):
    w, _ = serving(name, "H100", 1, 1.0, 480, "vllm", M.LLAMA8B,
                   lambda t: 0.0 if 150 <= t < 240 else (16 if 240 <= t < 270 else 8), CHAT,
                   down=[(150, 240)])
    return T(name, None, w, "vllm", note="engine restarted (new version): 90 s down, weights "
             "load, graph capture, then clients retry", physics="counters reset, new pids"), w


@trace
def h_vllm_h200_idle_reserved(name):
    w, _ = serving(name, "H200", 1, 2.0, 360, "vllm", M.LLAMA8B, const(0.0), CHAT)
    return T(name, None, w, "vllm", note="idle engine: KV pool reserved, no requests",
             physics="90% of memory used, 0% util, ~121 W"), w


@trace
def h_vllm_h100_one_long_request(name):
    w, job = serving(name, "H100", 1, 1.0, 360, "vllm", M.LLAMA8B, const(0.0), CHAT)
    job.inject(Req(arrival=40, prompt=2000, out=28000, max_tokens=30000))
    return T(name, None, w, "vllm", note="one long generation alone (12k tokens)",
             physics="batch 1: HBM-bound GEMV, ~130 tok/s, util high, SM moderate"), w


@trace
def h_sglang_h100_prefix_heavy(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "sglang", M.LLAMA8B, const(14),
                   mix(4000, 0.4, 150, 0.6, cached=0.9))
    return T(name, None, w, "sglang", note="agent traffic: long shared prefixes, 90% cached",
             physics="prompt tokens/s huge but little prefill compute"), w


@trace
def h_vllm_h100_powercap_prefill(name):
    w, _ = serving(name, "H100", 1, 1.0, 360, "vllm", M.LLAMA8B, const(4.6),
                   mix(6000, 0.3, 8, 0.4, cached=0.0))
    w.events.append(power_limit([0], 0, 600.0))
    return T(name, None, w, "vllm", note="classification / scoring: long prompts, 8 output "
             "tokens", physics="compute-bound prefill held at the site's 600 W cap the whole time"), w


@trace
def h_vllm_l40s_small_pool_half(name):
    cfg = EngineCfg(max_seqs=64, pool_tokens=42_000)
    w, _ = serving(name, "L40S", 2, 1.0, 360, "vllm", M.QWEN32B, const(0.35),
                   mix(1500, 0.6, 300, 0.6, cached=0.2), cfg=cfg, cpus=32)
    return T(name, None, w, "vllm", note="32B on 2x L40S: a small KV pool about half used"), w


@trace
def h_vllm_h100_second_idle_proc(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(8), CHAT,
                   gmu=0.85)
    w.jobs.append(IdleProc(w, 0, "python", "python -m ipykernel_launcher -f kernel.json",
                           2 * GIB + 300 * (1 << 20), appear=150))
    return T(name, None, w, "vllm", note="a notebook opens a CUDA context on the GPU, idle"), w


@trace
def h_vllm_h100_mig(name):
    w, _ = serving(name, "H100", 1, 1.0, 300, "vllm", M.LLAMA3B, const(3), SHORT, gmu=0.85)
    b = w.boards[0]
    b.mig = (("3g.40gb", 60, 40192 * (1 << 20)), ("3g.40gb", 60, 40192 * (1 << 20)))
    b.spec = dataclasses.replace(b.spec, hbm_bw=b.spec.hbm_bw * 3 / 8, flops=b.spec.flops * 3 / 7,
                                 mem_bytes=b.spec.mem_bytes)
    for job in w.jobs:
        for p in job.workers:
            p.mig_index = 0
            p.mem = int(40192 * (1 << 20) * 0.85)
    return T(name, None, w, "vllm", note="MIG mode: engine on one 3g.40gb instance"), w


@trace
def h_vllm_h200_nightly_batch(name):
    w, job = serving(name, "H200", 1, 2.0, 600, "vllm", M.QWEN7B, const(0.2),
                     mix(600, 0.5, 160, 0.5, cached=0.3), cfg=EngineCfg(max_seqs=256))
    for i in range(9000):
        job.inject(Req(arrival=60 + i * 0.002, prompt=500 + (i * 37) % 700,
                       out=150 + (i * 53) % 450, cached=0.3))
    return T(name, None, w, "vllm", note="nightly batch: 9,000 requests submitted at once",
             physics="a deep queue draining at full throughput; TTFT is queue time"), w


@trace
def h_llamacpp_a10g_steady(name):
    w, _ = serving(name, "A10G", 1, 1.0, 300, "llamacpp", M.GEMMA_GGUF, const(0.5),
                   mix(500, 0.6, 200, 0.5), ctx_size=16384, slots=4, cpus=8)
    return T(name, None, w, "llamacpp", note="llama-server, 4 slots, light steady traffic"), w


@trace
def h_sglang_tp2_h200_steady(name):
    w, _ = serving(name, "H200", 2, 2.0, 480, "sglang", M.LLAMA70B, wave(6, 1, 240), CHAT,
                   cfg=EngineCfg(retract_reserve=0.3))
    return T(name, None, w, "sglang", note="70B TP2 on H200, steady"), w


@trace
def h_vllm_a100_steady(name):
    w, _ = serving(name, "A100", 1, 1.0, 360, "vllm", M.LLAMA8B, const(5), CHAT)
    return T(name, None, w, "vllm", note="A100: no GPM, only NVML util and memory util"), w


@trace
def h_vllm_h100_spec_good(name):
    w, _ = serving(name, "H100", 1, 1.0, 300, "vllm", M.LLAMA8B, const(4), CODE,
                   cfg=EngineCfg(spec_k=3), accept=const(0.78))
    return T(name, None, w, "vllm", note="EAGLE speculative decoding on code: drafts accepted"), w


@trace
def h_vllm_tp8_h200_405b(name):
    w, _ = serving(name, "H200", 8, 2.0, 480, "vllm", M.LLAMA405FP8, wave(3, 0.8, 200), CHAT,
                   cfg=EngineCfg(max_seqs=128, budget=2048), cpus=224)
    return T(name, None, w, "vllm", note="405B FP8 TP8, steady"), w


@trace
def h_vllm_h100_host_busy_ok(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(8), CHAT, cpus=64)
    w.background = step(150, 6.0, 40.0)
    return T(name, None, w, "vllm", note="a backup job takes 40 of 64 cores: host busy, not "
             "oversubscribed", physics="PSI stays low; the engine keeps its cores"), w


@trace
def h_sglang_l40s_bursty_small(name):
    w, _ = serving(name, "L40S", 1, 1.0, 360, "sglang", M.LLAMA8B,
                   bursts(0.3, 3.5, 60, 15, start=30), SHORT, cpus=16)
    return T(name, None, w, "sglang", note="L40S, small bursty load"), w


@trace
def h_vllm_h100_two_signals(name):
    w, _ = serving(name, "H100", 1, 1.0, 480, "vllm", M.LLAMA8B, ramp(120, 300, 5, 11), CHAT,
                   gmu=0.85)
    w.jobs.append(IdleProc(w, 0, "nvidia-cuda-mps", "dcgm-exporter --collectors /etc/dcgm",
                           400 * (1 << 20), appear=200))
    w.events.append(cooling([0], 100, 300, 1.25))
    return T(name, None, w, "vllm", note="demand doubles, the room warms, an exporter opens a "
             "context: nothing wrong"), w


# =================================================================== healthy training / CUDA
def train(name, gpu_model, n, tick, length, cpus=96, **kw):
    w = World(name, gpu_model, n, tick, length, cpus=cpus)
    job = TrainingJob(w, range(n), **kw)
    w.jobs.append(job)
    return w, job


@trace
def h_train_ddp8_h100_checkpoints(name):
    w, _ = train(name, "H100", 8, 1.0, 600, step_s=1.1, ckpt=(180, 28), counter="tokens")
    return T(name, None, w, "trainer", note="DDP 8 GPUs, checkpoint every 3 min (rank 0 "
             "writes 28 s, the others wait in a NCCL barrier)"), w


@trace
def h_train_fsdp4_a100_eval(name):
    w, _ = train(name, "A100", 4, 2.0, 720, step_s=1.6, evals=(240, 50), counter="samples",
                 sharded=True, ckpt=(400, 20))
    return T(name, None, w, "trainer", note="FSDP on A100: eval pass every 4 min (no samples "
             "counted), sharded checkpoint"), w


@trace
def h_train_ddp4_h100_nocounter(name):
    w, _ = train(name, "H100", 4, 0.5, 300, step_s=0.7, counter=None)
    return T(name, None, w, "train-none", note="DDP, no metrics page: steady"), w


@trace
def h_train_ddp2_h200_uneven(name):
    w, _ = train(name, "H200", 2, 1.0, 420, step_s=0.9, counter="tokens", rank_var=0.12)
    return T(name, None, w, "trainer", note="packed variable-length batches: ranks take turns "
             "waiting in NCCL"), w


@trace
def h_train_fsdp8_h200_steady(name):
    w, _ = train(name, "H200", 8, 2.0, 480, step_s=2.4, comm_s=0.25, counter=None, cpus=192)
    return T(name, None, w, "train-none", note="FSDP 8 GPUs steady, no counter"), w


@trace
def h_train_ddp8_a100_steady(name):
    w, _ = train(name, "A100", 8, 1.0, 420, step_s=1.3, counter="tokens")
    return T(name, None, w, "trainer", note="DDP on A100, steady"), w


@trace
def h_cuda_h200_gpu_check(name):
    w = World(name, "H200", 1, 1.0, 150)
    w.jobs.append(CudaProgram(w, 0, [(0, "idle", 500 << 20), (10, "idle", 90 * GIB),
                                     (28, "matmul", 91 * GIB), (90, "copy", 91 * GIB),
                                     (120, "exit", 0)], name="python",
                              cmdline="python scripts/gpu_check.py"))
    return T(name, None, w, "none", note="a GPU check: reserve, bf16 matmul at the power cap, "
             "device copy"), w


# =================================================================== oversized_request
@trace
def p_vllm_h100_n8_logprobs(name):
    w, job = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(6), CHAT)
    job.inject(Req(arrival=150, prompt=600, out=4000, n=8, logprobs=20, max_tokens=4096))
    return T(name, "oversized_request", w, "vllm", window=(150, 225), culprit=[0],
             note="one n=8, logprobs=20, max_tokens=4096 request among chat traffic",
             physics="8 sequences with top-20 logprobs each step: host work per step grows, "
                     "ITL ~2x, tokens/s does not fall"), w


@trace
def p_vllm_h200_n16_fanout(name):
    w, job = serving(name, "H200", 1, 2.0, 600, "vllm", M.QWEN7B, const(9), CHAT)
    for i in range(3):
        job.inject(Req(arrival=200 + 25 * i, prompt=1500, out=7000, n=16, logprobs=5,
                       max_tokens=8192))
    return T(name, "oversized_request", w, "vllm", window=(200, 380), culprit=[0],
             note="a client sends three n=16, max_tokens=8192 best-of requests",
             physics="batch +48 sequences of growing context; tokens/s rises, ITL 1.5-2x"), w


@trace
def p_vllm_tp2_h100_logprob_client(name):
    w, job = serving(name, "H100", 2, 0.5, 360, "vllm", M.QWEN32B, const(5), CHAT)
    for i in range(5):
        job.inject(Req(arrival=130 + 12 * i, prompt=400, out=1200, n=4, logprobs=20,
                       max_tokens=1500))
    return T(name, "oversized_request", w, "vllm", window=(130, 260), culprit=[0, 1],
             note="an eval harness sends n=4, logprobs=20 requests"), w


@trace
def p_sglang_a100_n8(name):
    w, job = serving(name, "A100", 1, 1.0, 420, "sglang", M.LLAMA8B, const(4), CHAT)
    job.inject(Req(arrival=160, prompt=800, out=2500, n=8, logprobs=20, max_tokens=4096))
    return T(name, "oversized_request", w, "sglang", window=(160, 300), culprit=[0],
             note="SGLang on A100: one n=8 logprobs request; no GPM, no params histogram"), w


# =================================================================== prefill_interference
@trace
def p_vllm_h100_rag_bursts(name):
    long = mix(24000, 0.2, 200, 0.5, cached=0.0, pmax=32000)
    w, _ = serving(name, "H100", 1, 1.0, 480, "vllm", M.LLAMA8B,
                   lambda t: 7 + (0.5 if 150 <= t < 330 else 0.0),
                   window_mix(150, 330, CHAT, long, share=0.067))
    return T(name, "prefill_interference", w, "vllm", window=(150, 330), culprit=[0],
             note="a RAG client starts sending 24k-token prompts",
             physics="chunked prefill fills every step's token budget: decode ITL 2-3x"), w


@trace
def p_sglang_h200_longdoc_wave(name):
    long = mix(16000, 0.3, 300, 0.5, cached=0.05, pmax=32000)
    w, _ = serving(name, "H200", 1, 0.5, 360, "sglang", M.QWEN7B, const(12),
                   blend(120, 200, CHAT, long, share=0.06))
    return T(name, "prefill_interference", w, "sglang", window=(120, 360), culprit=[0],
             note="a document-summary product launches: long prompts grow to 6%"), w


@trace
def p_vllm_tp4_a100_ingest(name):
    long = mix(12000, 0.3, 150, 0.5, cached=0.0, pmax=30000)
    w, _ = serving(name, "A100", 4, 2.0, 600, "vllm", M.LLAMA70B,
                   lambda t: 2.5 + (0.16 if 200 <= t < 420 else 0.0),
                   window_mix(200, 420, CHAT, long, share=0.06))
    return T(name, "prefill_interference", w, "vllm", window=(200, 420), culprit=[0, 1, 2, 3],
             note="70B on 4x A100: a batch of long reports arrives among chat"), w


@trace
def p_llamacpp_l40s_long_prompts(name):
    long = mix(10000, 0.2, 150, 0.4, pmax=14000)
    w, _ = serving(name, "L40S", 1, 1.0, 420, "llamacpp", M.GEMMA_GGUF, const(0.9),
                   window_mix(150, 300, mix(400, 0.5, 220, 0.5), long, share=0.35),
                   ctx_size=65536, slots=4, cpus=16)
    return T(name, "prefill_interference", w, "llamacpp", window=(150, 300), culprit=[0],
             note="llama-server: long pasted documents stall the other slots' decoding"), w


# =================================================================== collective_straggler
@trace
def p_train_ddp8_h100_thermal_rank5(name):
    w, _ = train(name, "H100", 8, 1.0, 600, step_s=1.0, counter="tokens")
    w.events.append(cooling([5], 150, 260, 3.6))
    return T(name, "collective_straggler", w, "trainer", window=(200, 600), culprit=[5],
             note="GPU 5's fan tray fails: it throttles (thermal), 7 ranks wait in NCCL",
             physics="GPU 5 at lower clock, SM busy; others 100% util with few SMs busy"), w


@trace
def p_train_fsdp4_h200_hwslow_rank2(name):
    w, _ = train(name, "H200", 4, 2.0, 480, step_s=1.8, comm_s=0.2, counter=None, sharded=True)
    w.events.append(clock_cap([2], 180, 0.55, ("hw slowdown",)))
    return T(name, "collective_straggler", w, "train-none", window=(180, 480), culprit=[2],
             note="GPU 2 enters HW slowdown (a bad power connector)"), w


@trace
def p_vllm_tp4_h100_straggler(name):
    w, _ = serving(name, "H100", 4, 1.0, 480, "vllm", M.LLAMA70B, const(8), CHAT)
    w.events.append(clock_cap([1], 170, 0.6, ("hw slowdown",)))
    return T(name, "collective_straggler", w, "vllm", window=(170, 480), culprit=[1],
             note="70B TP4: GPU 1 held at half clock; every all-reduce waits for it"), w


@trace
def p_sglang_tp8_h200_straggler(name):
    w, _ = serving(name, "H200", 8, 2.0, 600, "sglang", M.LLAMA405FP8, const(4), CHAT,
                   cfg=EngineCfg(budget=2048), cpus=224)
    w.events.append(cooling([6], 150, 330, 3.0))
    return T(name, "collective_straggler", w, "sglang", window=(220, 600), culprit=[6],
             note="405B TP8: GPU 6 heats up slowly (blocked airflow) and throttles"), w


# =================================================================== input_stall
@trace
def p_train_ddp4_h100_loader(name):
    w, _ = train(name, "H100", 4, 0.5, 420, step_s=0.45, counter="samples", samples=256,
                 data_s=step(150, 0.15, 1.1), workers=4)
    return T(name, "input_stall", w, "trainer", window=(150, 420), culprit=[0, 1, 2, 3],
             note="heavy augmentation switched on: 4 workers per rank can't keep up",
             physics="GPUs idle between steps waiting for batches; util saw-tooth"), w


@trace
def p_train_single_a100_loader(name):
    w, _ = train(name, "A100", 1, 1.0, 360, step_s=0.35, counter=None, workers=2,
                 data_s=step(140, 0.1, 0.75), cpus=16)
    return T(name, "input_stall", w, "train-none", window=(140, 360), culprit=[0],
             note="fine-tune on one A100 with num_workers=2; JPEG decode dataset"), w


@trace
def p_train_ddp8_h200_nfs_slow(name):
    w, _ = train(name, "H200", 8, 2.0, 600, step_s=1.2, counter="tokens",
                 data_s=ramp(200, 380, 0.3, 2.6), cpus=192)
    return T(name, "input_stall", w, "trainer", window=(240, 600), culprit=list(range(8)),
             note="the shared filesystem slows down gradually"), w


@trace
def p_train_ddp2_l40s_loader_mild(name):
    w, _ = train(name, "L40S", 2, 1.0, 420, step_s=0.8, counter="tokens",
                 data_s=step(170, 0.3, 1.25), cpus=32)
    return T(name, "input_stall", w, "trainer", window=(170, 420), culprit=[0, 1],
             note="tokenisation on the fly: mild stall (~1.5x step time)"), w


# =================================================================== host_launch_jitter
def jitter(t0, rate, ms, t1=None, ramp_s=0.0):
    """(preemptions/s of the launch thread, mean off-CPU ms, share of its time lost)."""
    def f(t):
        if t < t0 or (t1 is not None and t >= t1):
            return (0.0, 0.0, 0.0)
        x = 1.0 if not ramp_s else min(1.0, (t - t0) / ramp_s)
        return (rate * x, ms, min(0.8, rate * x * ms * 1e-3))
    return f


@trace
def p_vllm_h100_jitter(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(8), CHAT, ebpf=True,
                   jitter=jitter(160, 120, 4.0))
    w.psi_extra = step(160, 0.0, 2.5)
    return T(name, "host_launch_jitter", w, "vllm", window=(160, 420), culprit=[0],
             note="a log shipper pinned to the engine core preempts the launch thread",
             physics="launch calls ms long when preempted; gaps between steps"), w


@trace
def p_sglang_h200_jitter_gradual(name):
    w, _ = serving(name, "H200", 1, 0.5, 360, "sglang", M.QWEN7B, const(10), CHAT, ebpf=True,
                   jitter=jitter(120, 150, 3.0, ramp_s=90))
    w.psi_extra = ramp(120, 210, 0.0, 2.0)
    return T(name, "host_launch_jitter", w, "sglang", window=(120, 360), culprit=[0],
             note="an IRQ-heavy NIC queue lands on the scheduler's core, growing"), w


@trace
def p_vllm_tp2_h100_jitter(name):
    w, _ = serving(name, "H100", 2, 2.0, 480, "vllm", M.QWEN32B, const(6), CHAT, ebpf=True,
                   jitter=jitter(200, 110, 5.0))
    w.psi_extra = step(200, 0.0, 3.0)
    return T(name, "host_launch_jitter", w, "vllm", window=(200, 480), culprit=[0, 1],
             note="cpuset misconfigured: both TP workers share two cores with a sidecar"), w


@trace
def p_vllm_a100_jitter_mild(name):
    w, _ = serving(name, "A100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(5), CHAT, ebpf=True,
                   jitter=jitter(180, 90, 2.5))
    return T(name, "host_launch_jitter", w, "vllm", window=(180, 420), culprit=[0],
             note="mild: a monitoring agent wakes often on the launch core"), w


# =================================================================== host_cpu_contention
@trace
def p_vllm_h100_make_j(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(8), CHAT, cpus=32)
    w.background = step(160, 3.0, 120.0, 360)
    return T(name, "host_cpu_contention", w, "vllm", window=(160, 360), culprit=[0],
             note="someone runs make -j128 on the 32-CPU serving host"), w


@trace
def p_sglang_h100_preprocess_gradual(name):
    w, _ = serving(name, "H100", 1, 2.0, 540, "sglang", M.LLAMA8B, const(9), CHAT, cpus=48)
    w.background = ramp(180, 300, 4.0, 150.0)
    return T(name, "host_cpu_contention", w, "sglang", window=(200, 540), culprit=[0],
             note="a data-prep container scales up to 150 processes on the node"), w


@trace
def p_vllm_tp4_h200_contention(name):
    w, _ = serving(name, "H200", 4, 1.0, 480, "vllm", M.LLAMA70B, const(9), CHAT, cpus=24)
    w.background = step(170, 4.0, 60.0)
    return T(name, "host_cpu_contention", w, "vllm", window=(170, 480), culprit=[0, 1, 2, 3],
             note="a small VM: 24 vCPUs, and a backup's compressors take 60"), w


@trace
def p_llamacpp_l40s_contention(name):
    w, _ = serving(name, "L40S", 1, 0.5, 360, "llamacpp", M.GEMMA_GGUF, const(1.0),
                   mix(500, 0.6, 250, 0.5), ctx_size=32768, slots=4, cpus=8)
    w.background = step(130, 1.0, 24.0)
    return T(name, "host_cpu_contention", w, "llamacpp", window=(130, 360), culprit=[0],
             note="a workstation: a video encode takes every core"), w


# =================================================================== tiny_kernels
@trace
def p_train_ddp4_h100_ema_loop(name):
    w, _ = train(name, "H100", 4, 1.0, 480, step_s=0.8, counter="tokens",
                 tiny=step(180, 0.0, 0.9))
    return T(name, "tiny_kernels", w, "trainer", window=(180, 480), culprit=[0, 1, 2, 3],
             note="an EMA of the weights added as a Python loop over 1,200 tensors",
             physics="thousands of tiny kernels per step: util 100%, SM active falls"), w


@trace
def p_cuda_h200_graph(name):
    w = World(name, "H200", 1, 1.0, 300)
    w.jobs.append(CudaProgram(w, 0, [(0, "matmul", 40 * GIB), (120, "graph", 40 * GIB)],
                              name="sim", cmdline="./particle_sim --steps 1e9"))
    return T(name, "tiny_kernels", w, "none", window=(120, 300), culprit=[0],
             note="a simulation switches to a CUDA graph of one-element kernels"), w


@trace
def p_train_single_h100_metric_loop(name):
    w, _ = train(name, "H100", 1, 2.0, 480, step_s=0.6, counter=None,
                 tiny=ramp(200, 260, 0.0, 1.2), cpus=32)
    return T(name, "tiny_kernels", w, "train-none", window=(200, 480), culprit=[0],
             note="a per-sample metric computed in a loop of tiny kernels each step"), w


@trace
def p_cuda_a100_tiny(name):
    w = World(name, "A100", 1, 1.0, 300, cpus=32)
    w.jobs.append(CudaProgram(w, 0, [(0, "copy", 30 * GIB), (130, "graph", 30 * GIB)],
                              name="solver", cmdline="./cg_solver --graph"))
    return T(name, "tiny_kernels", w, "none", window=(130, 300), culprit=[0],
             note="A100 (no GPM): a solver's graph of tiny kernels"), w


# =================================================================== memory_bandwidth
@trace
def p_vllm_h100_long_context_shift(name):
    longc = mix(22000, 0.25, 600, 0.4, cached=0.96, pmax=31000)
    w, _ = serving(name, "H100", 1, 1.0, 480, "vllm", M.LLAMA8B, const(6),
                   blend(150, 240, CHAT, longc, share=0.14))
    return T(name, "memory_bandwidth", w, "vllm", window=(150, 480), culprit=[0],
             note="long multi-turn sessions (history cached): every step reads GBs of KV",
             physics="HBM-bound decode: DRAM ~90%, ITL grows with context"), w


@trace
def p_sglang_h200_big_batch(name):
    big = mix(7000, 0.3, 400, 0.4, cached=0.9, pmax=16000)
    w, _ = serving(name, "H200", 1, 1.0, 480, "sglang", M.QWEN7B, ramp(150, 270, 8, 14),
                   blend(150, 270, CHAT, big, share=0.8),
                   cfg=EngineCfg(max_seqs=512, retract_reserve=0.1))
    return T(name, "memory_bandwidth", w, "sglang", window=(150, 480), culprit=[0],
             note="agent traffic with 7k contexts grows: batch of hundreds",
             physics="tokens/s rises while ITL rises: the batch's KV reads saturate HBM"), w


@trace
def p_vllm_tp2_a100_long_context(name):
    longc = mix(20000, 0.3, 500, 0.4, cached=0.95, pmax=30000)
    w, _ = serving(name, "A100", 2, 2.0, 600, "vllm", M.LLAMA8B, const(3),
                   blend(200, 300, CHAT, longc, share=0.3))
    return T(name, "memory_bandwidth", w, "vllm", window=(200, 600), culprit=[0, 1],
             note="A100 TP2: long-context traffic"), w


@trace
def p_vllm_l40s_long_context(name):
    longc = mix(12000, 0.3, 300, 0.4, cached=0.95, pmax=20000)
    w, _ = serving(name, "L40S", 1, 1.0, 420, "vllm", M.LLAMA3B, const(2),
                   blend(150, 220, SHORT, longc, share=0.35), cpus=32)
    return T(name, "memory_bandwidth", w, "vllm", window=(150, 420), culprit=[0],
             note="L40S (864 GB/s): long contexts make decode HBM-bound"), w


# =================================================================== throttling
@trace
def p_vllm_h100_power_limit_lowered(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(5),
                   mix(2500, 0.5, 220, 0.6, cached=0.1))
    w.events.append(power_limit([0], 190, 400.0))
    return T(name, "throttling", w, "vllm", window=(190, 420), culprit=[0],
             note="a facility power-capping script sets the limit to 400 W"), w


@trace
def p_train_ddp8_h200_hot_aisle(name):
    w, _ = train(name, "H200", 8, 2.0, 720, step_s=1.3, counter="tokens", cpus=192)
    w.events.append(cooling(list(range(8)), 150, 420, 3.4))
    return T(name, "throttling", w, "trainer", window=(230, 720), culprit=list(range(8)),
             note="the CRAC unit fails: the whole node heats and throttles"), w


@trace
def p_vllm_tp4_h100_power_brake(name):
    w, _ = serving(name, "H100", 4, 1.0, 420, "vllm", M.LLAMA70B, const(7), CHAT)
    w.events.append(clock_cap([0, 1, 2, 3], 170, 0.42, ("hw slowdown", "power brake"), 340))
    return T(name, "throttling", w, "vllm", window=(170, 340), culprit=[0, 1, 2, 3],
             note="the BMC asserts power brake (PSU failover) for ~3 minutes"), w


@trace
def p_sglang_a100_thermal(name):
    w, _ = serving(name, "A100", 2, 0.5, 480, "sglang", M.QWEN32B, const(1.5),
                   mix(2500, 0.5, 250, 0.6, cached=0.2))
    w.events.append(cooling([0, 1], 120, 240, 2.3))
    return T(name, "throttling", w, "sglang", window=(180, 480), culprit=[0, 1],
             note="A100 pair in a chassis whose fans were set to quiet mode"), w


# =================================================================== kv_pressure
@trace
def p_vllm_h100_kv_long_outputs(name):
    longo = mix(1500, 0.5, 3500, 0.3, cached=0.1, omax=8000)
    w, _ = serving(name, "H100", 1, 1.0, 480, "vllm", M.LLAMA8B, const(5),
                   window_mix(150, 400, CHAT, longo, share=0.55), gmu=0.42)
    return T(name, "kv_pressure", w, "vllm", window=(170, 430), culprit=[0],
             note="gpu_memory_utilization=0.42 (sharing plan); a reasoning model's long "
                  "answers fill the pool", physics="preemptions (recompute), waiting rises"), w


@trace
def p_sglang_h200_retractions(name):
    longo = mix(3000, 0.4, 3000, 0.3, cached=0.2, omax=8000)
    w, _ = serving(name, "H200", 1, 1.0, 480, "sglang", M.QWEN32B, const(3),
                   blend(140, 200, CHAT, longo, share=0.6),
                   cfg=EngineCfg(retract_reserve=0.15), gmu=0.62)
    return T(name, "kv_pressure", w, "sglang", window=(160, 480), culprit=[0],
             note="SGLang with mem-fraction 0.62: long outputs -> retractions"), w


@trace
def p_vllm_tp2_l40s_kv(name):
    cfg = EngineCfg(max_seqs=128, pool_tokens=42_000)
    w, _ = serving(name, "L40S", 2, 2.0, 540, "vllm", M.QWEN32B, ramp(150, 260, 0.25, 0.9),
                   mix(1500, 0.6, 500, 0.6, cached=0.2), cfg=cfg, cpus=32)
    return T(name, "kv_pressure", w, "vllm", window=(190, 540), culprit=[0, 1],
             note="32B on 2x L40S: the small pool fills as demand triples"), w


@trace
def p_vllm_a100_kv_gradual(name):
    grow = mix(2000, 0.5, 1800, 0.4, cached=0.1, omax=6000)
    w, _ = serving(name, "A100", 1, 0.5, 420, "vllm", M.LLAMA8B, const(4),
                   blend(120, 240, CHAT, grow, share=0.8), gmu=0.4)
    return T(name, "kv_pressure", w, "vllm", window=(150, 420), culprit=[0],
             note="A100: outputs lengthen gradually until the pool thrashes"), w


# =================================================================== gpu_shared
@trace
def p_vllm_h100_notebook_training(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(8), CHAT, gmu=0.7,
                   other=lambda t: {0: 0.9} if 170 <= t < 380 else {})
    w.jobs.append(IdleProc(w, 0, "python", "python train_lora.py --bs 8", 18 * GIB,
                           appear=165, leave=380, util=0.9))
    return T(name, "gpu_shared", w, "vllm", window=(170, 380), culprit=[0],
             note="a colleague starts a LoRA fine-tune on the serving GPU"), w


@trace
def p_vllm_tp4_h100_shared_gpu2(name):
    w, _ = serving(name, "H100", 4, 1.0, 480, "vllm", M.LLAMA70B, const(7), CHAT, gmu=0.8,
                   other=lambda t: {2: 0.45} if t >= 190 else {})
    w.jobs.append(IdleProc(w, 2, "python3", "python3 embed_batch.py --device cuda:2",
                           9 * GIB, appear=185, util=0.45))
    return T(name, "gpu_shared", w, "vllm", window=(190, 480), culprit=[2],
             note="an embedding batch job lands on GPU 2 of the TP group"), w


@trace
def p_sglang_a100_shared(name):
    w, _ = serving(name, "A100", 1, 2.0, 540, "sglang", M.LLAMA8B, const(4), CHAT, gmu=0.7,
                   other=lambda t: {0: 0.6} if t >= 220 else {})
    w.jobs.append(IdleProc(w, 0, "python", "python -m torch.distributed.run bench.py",
                           14 * GIB, appear=216, util=0.6))
    return T(name, "gpu_shared", w, "sglang", window=(220, 540), culprit=[0],
             note="A100: someone's benchmark time-slices with SGLang"), w


@trace
def p_llamacpp_l40s_shared_diffusion(name):
    w, _ = serving(name, "L40S", 1, 1.0, 420, "llamacpp", M.GEMMA_GGUF, const(0.8),
                   mix(500, 0.5, 300, 0.5), ctx_size=16384, slots=4, cpus=16,
                   other=lambda t: {0: 0.85} if 160 <= t < 360 else {})
    w.jobs.append(IdleProc(w, 0, "python", "python main.py --listen (ComfyUI)", 11 * GIB,
                           appear=150, util=lambda t: 0.85 if 160 <= t < 360 else 0.0))
    return T(name, "gpu_shared", w, "llamacpp", window=(160, 360), culprit=[0],
             note="an image-generation UI renders on the same L40S"), w


# =================================================================== spec_decode_rejected
@trace
def p_vllm_h100_eagle_domain_shift(name):
    w, _ = serving(name, "H100", 1, 1.0, 420, "vllm", M.LLAMA8B, const(6), CODE,
                   cfg=EngineCfg(spec_k=3), accept=ramp(160, 200, 0.78, 0.12))
    return T(name, "spec_decode_rejected", w, "vllm", window=(160, 420), culprit=[0],
             note="traffic moves from code to creative writing: EAGLE drafts rejected"), w


@trace
def p_sglang_h200_spec_reject(name):
    w, _ = serving(name, "H200", 1, 0.5, 360, "sglang", M.LLAMA8B, const(8), CHAT,
                   cfg=EngineCfg(spec_k=4), accept=step(140, 0.72, 0.1))
    return T(name, "spec_decode_rejected", w, "sglang", window=(140, 360), culprit=[0],
             note="a draft model of another tokenizer family deployed by mistake"), w


@trace
def p_vllm_tp4_h100_ngram_reject(name):
    w, _ = serving(name, "H100", 4, 2.0, 540, "vllm", M.LLAMA70B, const(5), CHAT,
                   cfg=EngineCfg(spec_k=4), accept=ramp(200, 320, 0.55, 0.05))
    return T(name, "spec_decode_rejected", w, "vllm", window=(220, 540), culprit=[0, 1, 2, 3],
             note="n-gram speculation on non-repetitive text: acceptance decays"), w


@trace
def p_llamacpp_a10g_draft_reject(name):
    w, _ = serving(name, "A10G", 1, 1.0, 360, "llamacpp", M.GEMMA_GGUF, const(0.4),
                   mix(400, 0.5, 300, 0.4), ctx_size=16384, slots=2, cpus=8,
                   cfg=EngineCfg(spec_k=8), accept=step(150, 0.7, 0.08))
    return T(name, "spec_decode_rejected", w, "llamacpp", window=(150, 360), culprit=[0],
             note="llama-server with a draft model; users switch language"), w
