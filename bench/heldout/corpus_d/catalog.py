"""The traces: who runs what, and what happens to them.  One builder per trace; each returns
(Truth, frames).  Times are seconds from the trace's start; the truth window is what the
physics makes abnormal (wall-clock in the Truth)."""

from __future__ import annotations

import math

from corpus_d import Truth
from corpus_d.run import GIB, Proc, Scene, ebpf_serving, serve, train
from corpus_d.serving import LLAMA8B, LLAMA70B, QWEN3MOE, QWEN7B, Req, Server
from corpus_d.training import Trainer

BUILDERS: dict = {}


def trace(family, cause=None):
    def deco(fn):
        BUILDERS[fn.__name__] = (family, cause, fn)
        return fn
    return deco


def truth(scene: Scene, family, cause, window=None, culprit=None, note="", engine=None):
    w = None
    if window is not None:
        w = (scene.start_wall + window[0], scene.start_wall + window[1])
    eng = engine or (scene.server.kind if scene.server else
                     ("trainer" if scene.counter else "none"))
    return Truth(scene.name, family, cause, tuple(culprit) if culprit else None, w, eng,
                 len(scene.gpus), scene.gpu_model, scene.tick_s, note, scene.start_wall)


# ---------------------------------------------------------------- workloads

def lognorm(rng, median, sigma, lo, hi):
    return int(max(lo, min(hi, median * math.exp(rng.gauss(0, sigma)))))


def chat(prompt=900, out=220, sigma=0.9, out_sigma=0.8, cached=0.0, max_ctx=32000):
    def gen(rng, t):
        p = lognorm(rng, prompt, sigma, 16, max_ctx - 512)
        o = lognorm(rng, out, out_sigma, 2, 4096)
        return Req(t, p, o, cached=int(p * cached * rng.uniform(0.7, 1.0)),
                   max_tokens=max(o, 1024 if rng.random() < 0.7 else 4096))
    return gen


def mix(*parts):
    """parts: (weight fn(t), generator)"""
    def gen(rng, t):
        ws = [w(t) for w, _ in parts]
        x = rng.random() * sum(ws)
        for w, (_, g) in zip(ws, parts):
            if x < w:
                return g(rng, t)
            x -= w
        return parts[-1][1](rng, t)
    return gen


def const(v):
    return lambda t: v


def ramp(t0, t1, a, b):
    """a before t0, b after t1, linear between."""
    def f(t):
        if t <= t0:
            return a
        if t >= t1:
            return b
        return a + (b - a) * (t - t0) / (t1 - t0)
    return f


def step(t0, a, b, t1=math.inf):
    return lambda t: b if t0 <= t < t1 else a


def wave(base, amp, period, phase=0.0):
    return lambda t: max(0.0, base + amp * math.sin(2 * math.pi * (t + phase) / period))


def once(t0, fn):
    state = {"done": False}

    def hook(scene, t):
        if not state["done"] and t >= t0:
            state["done"] = True
            fn(scene)
    return hook


def each(fn):
    return lambda scene, t: fn(scene, t)


# ================================================================ healthy serving

@trace("serving", None)
def healthy_vllm_8b_h100_low():
    sc = Scene("healthy_vllm_8b_h100_low", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(1.6))
    serve(sc, srv)
    return truth(sc, "serving", None, note="chat at 1.6 req/s, batch ~4"), sc.run()


@trace("serving", None)
def healthy_vllm_8b_h100_busy():
    sc = Scene("healthy_vllm_8b_h100_busy", gpu="H100", tick_s=0.5, duration_s=360)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(prompt=1100, out=260),
                 rate=wave(5.0, 1.0, 240))
    serve(sc, srv)
    sc.mfu_metrics = True
    return truth(sc, "serving", None, note="chat at ~5 req/s, batch 25-40, steady"), sc.run()


@trace("oversized_request", "oversized_request")
def oversized_n8_logprobs_seed():
    """The seed case: one n=8, logprobs=20, max_tokens=16 request among chat traffic; every
    step it shares pays for 8 x 20 top-logprobs over a 152k vocabulary; co-scheduled requests
    stall ~10 s at ~97% util."""
    sc = Scene("oversized_n8_logprobs_seed", gpu="H100", tick_s=1.0, duration_s=300)
    srv = Server("vllm", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=520, out=180), rate=const(2.2))
    serve(sc, srv)
    t0 = 120.0

    def inject(s):
        s.server.waiting.append(Req(s.t, 512, 16, n=8, tag="big", extra=0.6, max_tokens=16))
    sc.hooks.append(once(t0, inject))
    return truth(sc, "oversized_request", "oversized_request", (t0, t0 + 11),
                 note="n=8 logprobs=20 max_tokens=16"), sc.run()


@trace("serving", None)
def healthy_vllm_70b_tp4_h100():
    sc = Scene("healthy_vllm_70b_tp4_h100", gpu="H100", n_gpus=4, tick_s=2.0, duration_s=480)
    srv = Server("vllm", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=1500, out=350),
                 rate=wave(2.6, 0.5, 300))
    serve(sc, srv)
    return truth(sc, "serving", None, note="70B TP4, ~2.6 req/s"), sc.run()


@trace("serving", None)
def healthy_sglang_qwen7b_h200():
    sc = Scene("healthy_sglang_qwen7b_h200", gpu="H200", tick_s=1.0, duration_s=420)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=1000, out=280, cached=0.3),
                 rate=const(4.0), gmu=0.88)
    serve(sc, srv)
    return truth(sc, "serving", None, note="SGLang, 4 req/s"), sc.run()


@trace("serving", None)
def healthy_demand_falling():
    sc = Scene("healthy_demand_falling", gpu="H200", tick_s=1.0, duration_s=540)
    srv = Server("vllm", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=900, out=300),
                 rate=ramp(60, 480, 7.0, 0.6))
    serve(sc, srv)
    return truth(sc, "serving", None, note="evening: 7 -> 0.6 req/s over 7 min"), sc.run()


@trace("serving", None)
def healthy_demand_rising_sglang_tp4():
    sc = Scene("healthy_demand_rising_sglang_tp4", gpu="H100", n_gpus=4, tick_s=2.0, duration_s=600)
    srv = Server("sglang", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=1200, out=260),
                 rate=ramp(60, 540, 0.8, 4.0))
    serve(sc, srv)
    return truth(sc, "serving", None, note="morning ramp 0.8 -> 4 req/s"), sc.run()


@trace("serving", None)
def healthy_bursty_arrivals():
    sc = Scene("healthy_bursty_arrivals", gpu="H100", tick_s=0.5, duration_s=360)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(prompt=700, out=200),
                 rate=lambda t: 11.0 if (t % 45) < 12 else 0.4)
    serve(sc, srv)
    return truth(sc, "serving", None, note="12 s bursts at 11 req/s every 45 s"), sc.run()


@trace("serving", None)
def healthy_saturated_at_max_seqs():
    sc = Scene("healthy_saturated_at_max_seqs", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(prompt=600, out=400, sigma=0.5,
                                                                 out_sigma=0.4),
                 rate=wave(6.9, 0.6, 200), max_seqs=48)
    serve(sc, srv)
    return truth(sc, "serving", None,
                 note="max_num_seqs=48 reached, a short queue comes and goes, steady latency"), sc.run()


@trace("serving", None)
def healthy_restart_slow_start():
    """Serving, then a rolling restart: the process exits, a new one loads weights, captures
    CUDA graphs (many tiny kernels for a few seconds), warms up and takes traffic again."""
    sc = Scene("healthy_restart_slow_start", gpu="H100", tick_s=1.0, duration_s=480)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(3.0))
    serve(sc, srv)
    down, load, capture, up = 150.0, 185.0, 235.0, 250.0
    p = sc.procs[0]
    full = srv.mem_used

    def hook(s, t):
        g = s.gpus[0]
        if down <= t < up:
            s.server.paused = True
            s.server.running.clear()
            s.server.waiting.clear()
        if down <= t < load:
            g.context, g.mem_used = False, 0
            p.alive = (up + 1e6, math.inf) if t < load else p.alive
        elif load <= t < capture:
            g.context = True
            g.mem_used = int(min(full, (t - load) / (capture - load) * 16.5 * GIB))
        elif capture <= t < up:
            g.mem_used = full
            s.server.paused = False
            s.server.tiny = 0.0
        elif t >= up:
            s.server.paused = False
    sc.hooks.append(hook)
    sc.engine_up = lambda t: not (down <= t < capture + 8)

    # the new process: appears at load
    def spawn(s):
        p.pid = s.pid(40)
        p.start = s.start_wall + load
        p.alive = (load, math.inf)
        p.mem = full
    sc.hooks.append(once(load, spawn))

    def capture_phase(s, t):
        if capture <= t < capture + 8:
            s.server.paused = True
            from corpus_d.hw import Act
            s.server.last_act = [Act(busy=0.97, sm=0.02, occ=0.003, dram=0.01)]
    sc.hooks.append(capture_phase)
    orig = srv.advance

    def advance(t, dt):
        if capture <= t < capture + 8:
            from corpus_d.hw import Act
            return [Act(busy=0.97, sm=0.02, occ=0.003, dram=0.01)]
        return orig(t, dt)
    srv.advance = advance
    return truth(sc, "serving", None, note="restart: down 35 s, load 50 s, graph capture 8 s"), sc.run()


@trace("serving", None)
def healthy_idle_kv_reserved():
    sc = Scene("healthy_idle_kv_reserved", gpu="H100", tick_s=2.0, duration_s=600)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(prompt=400, out=120),
                 rate=const(1 / 70.0))
    serve(sc, srv)
    return truth(sc, "serving", None, note="90% of VRAM reserved, a request a minute"), sc.run()


@trace("serving", None)
def healthy_one_long_request():
    sc = Scene("healthy_one_long_request", gpu="H200", tick_s=1.0, duration_s=420)
    srv = Server("vllm", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=300, out=60), rate=const(0.02),
                 max_len=131072)
    serve(sc, srv)
    sc.hooks.append(once(40, lambda s: s.server.waiting.append(Req(s.t, 96000, 30000, max_tokens=32768))))
    return truth(sc, "serving", None, note="one 96k-token document, 30k tokens out, alone"), sc.run()


@trace("serving", None)
def healthy_prefix_cache_heavy():
    sc = Scene("healthy_prefix_cache_heavy", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng,
                 workload=chat(prompt=3500, out=150, sigma=0.4, cached=0.9), rate=const(6.0))
    serve(sc, srv)
    return truth(sc, "serving", None, note="agent loop, 90% of prompts from the radix cache"), sc.run()


@trace("serving", None)
def healthy_powercap_prefill():
    sc = Scene("healthy_powercap_prefill", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng,
                 workload=chat(prompt=5000, out=1, sigma=0.4, out_sigma=0.01), rate=const(4.4))
    serve(sc, srv)
    return truth(sc, "serving", None,
                 note="scoring long documents, 1 token out: compute-bound at the power cap"), sc.run()


@trace("serving", None)
def healthy_small_pool_half():
    sc = Scene("healthy_small_pool_half", gpu="H100", tick_s=2.0, duration_s=480)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=1500, out=300, sigma=0.5),
                 rate=const(2.2), pool_tokens=60000)
    serve(sc, srv)
    return truth(sc, "serving", None, note="mem_fraction_static small: pool 60k tokens, ~half used"), sc.run()


@trace("serving", None)
def healthy_vllm_a100():
    sc = Scene("healthy_vllm_a100", gpu="A100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(2.5))
    serve(sc, srv)
    return truth(sc, "serving", None, note="A100: no GPM"), sc.run()


@trace("serving", None)
def healthy_vllm_ebpf():
    sc = Scene("healthy_vllm_ebpf", gpu="H100", tick_s=1.0, duration_s=360)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=wave(3.0, 1.0, 150))
    serve(sc, srv, pin=True)
    ebpf_serving(sc, jitter=lambda t: (0.0008, 3.0))
    return truth(sc, "serving", None, note="eBPF launch probes on, nothing wrong"), sc.run()


@trace("serving", None)
def healthy_spec_decode():
    sc = Scene("healthy_spec_decode", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(2.5), spec_k=3,
                 accept=lambda t: 0.68 + 0.06 * math.sin(t / 37.0))
    serve(sc, srv)
    return truth(sc, "serving", None, note="EAGLE k=3, acceptance 0.62-0.74"), sc.run()


@trace("serving", None)
def healthy_sglang_tp8_mixed_prompts():
    sc = Scene("healthy_sglang_tp8_mixed_prompts", gpu="H200", n_gpus=8, tick_s=2.0, duration_s=480)
    srv = Server("sglang", LLAMA70B, sc.gpus, sc.rng,
                 workload=mix((const(0.93), chat(prompt=900, out=300)),
                              (const(0.07), chat(prompt=12000, out=400, sigma=0.3))),
                 rate=const(5.0))
    serve(sc, srv)
    return truth(sc, "serving", None, note="TP8, 7% long prompts mixed in all along"), sc.run()


# ================================================================ healthy training

@trace("training", None)
def healthy_ddp8_ckpt_eval():
    sc = Scene("healthy_ddp8_ckpt_eval", gpu="H100", n_gpus=8, tick_s=1.0, duration_s=600)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.55, eval_every=150, eval_steps=60, ckpt_every=260,
                 ckpt_s=5.0, loader_s=0.3)
    train(sc, tr, counter=("tokens", 8 * 4 * 8192))
    return truth(sc, "training", None, note="DDP 8, eval every 150 steps, sync checkpoint 5 s"), sc.run()


@trace("training", None)
def healthy_ddp4_no_counter():
    sc = Scene("healthy_ddp4_no_counter", gpu="H200", n_gpus=4, tick_s=2.0, duration_s=540)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.8, comm_s=0.05, loader_s=0.4)
    train(sc, tr)
    return truth(sc, "training", None, note="DDP 4, no progress counter"), sc.run()


@trace("training", None)
def healthy_fsdp8_a100():
    sc = Scene("healthy_fsdp8_a100", gpu="A100", n_gpus=8, tick_s=1.0, duration_s=480)
    tr = Trainer(sc.gpus, sc.rng, compute_s=1.3, comm_s=0.09, opt_s=0.05, loader_s=0.6, fsdp=True)
    train(sc, tr, counter=("samples", 64), mem_gib=70)
    return truth(sc, "training", None, note="FSDP 8 on A100"), sc.run()


@trace("training", None)
def healthy_single_gpu_eval_async_ckpt():
    sc = Scene("healthy_single_gpu_eval_async_ckpt", gpu="H100", tick_s=0.5, duration_s=420)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.3, comm_s=0.0, loader_s=0.15, eval_every=250,
                 eval_steps=80, eval_s=0.09, ckpt_every=400, ckpt_async=True)
    train(sc, tr, counter=("tokens", 16 * 4096), mem_gib=55)
    return truth(sc, "training", None, note="1 GPU, eval passes and async checkpoints"), sc.run()


# ================================================================ oversized_request

@trace("oversized_request", "oversized_request")
def oversized_n4_logprobs_client_h200():
    """One client's evaluation job sends n=4, logprobs=5, max_tokens=400 requests for three
    minutes; each step that holds one pays ~12 ms more of sampler work; ITL 1.6-2x."""
    sc = Scene("oversized_n4_logprobs_client_h200", gpu="H200", tick_s=2.0, duration_s=540)
    base = chat(prompt=800, out=250)

    def gen(rng, t):
        if 150 <= t < 330 and rng.random() < 0.12:
            return Req(t, 600, 400, n=4, extra=0.012, max_tokens=400, tag="eval")
        return base(rng, t)
    srv = Server("vllm", QWEN7B, sc.gpus, sc.rng, workload=gen, rate=const(4.0))
    serve(sc, srv)
    return truth(sc, "oversized_request", "oversized_request", (150, 345),
                 note="n=4 logprobs=5 requests, 12% of traffic for 3 min"), sc.run()


@trace("oversized_request", "oversized_request")
def oversized_prompt_logprobs_sglang():
    """SGLang: a scoring client asks return_logprob with logprob_start_len=0 on 16k-token
    prompts every ~20 s: each extend chunk also computes logprobs over the 152k vocabulary for
    every prompt position (~1.4 s more GPU time per chunk); decodes wait behind it."""
    sc = Scene("oversized_prompt_logprobs_sglang", gpu="H100", tick_s=0.5, duration_s=360)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=700, out=220),
                 rate=const(3.0))
    serve(sc, srv)
    for k in range(7):
        t0 = 110 + 20 * k
        sc.hooks.append(once(t0, lambda s: s.server.waiting.insert(
            0, Req(s.t, 16000, 8, extra=1.4, max_tokens=8, tag="score"))))
    return truth(sc, "oversized_request", "oversized_request", (110, 240),
                 note="prompt-logprobs requests, 7 of them 20 s apart"), sc.run()


@trace("oversized_request", "oversized_request")
def oversized_n8_logprobs_tp4_twice():
    sc = Scene("oversized_n8_logprobs_tp4_twice", gpu="H100", n_gpus=4, tick_s=1.0, duration_s=360)
    srv = Server("vllm", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=900, out=200), rate=const(2.0))
    serve(sc, srv)
    for t0 in (130.0, 175.0):
        sc.hooks.append(once(t0, lambda s: s.server.waiting.append(
            Req(s.t, 512, 24, n=8, extra=0.42, max_tokens=24, tag="big"))))
    return truth(sc, "oversized_request", "oversized_request", (130, 188),
                 note="two n=8 logprobs=20 requests 45 s apart, TP4"), sc.run()


# ================================================================ prefill_interference

@trace("prefill_interference", "prefill_interference")
def prefill_burst_summaries_vllm():
    sc = Scene("prefill_burst_summaries_vllm", gpu="H100", tick_s=1.0, duration_s=420)
    base = chat(prompt=700, out=250)

    def gen(rng, t):
        if 150 <= t < 170 and rng.random() < 0.3:
            return Req(t, lognorm(rng, 16000, 0.15, 9000, 24000), 20, max_tokens=32, tag="doc")
        return base(rng, t)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=gen, rate=step(150, 3.0, 6.0, 170))
    serve(sc, srv)
    return truth(sc, "prefill_interference", "prefill_interference", (150, 215),
                 note="~36 documents of ~16k tokens in 20 s (20-token labels); chunked prefill "
                 "fills every step"), sc.run()


@trace("prefill_interference", "prefill_interference")
def prefill_long_prompts_sglang_ramp():
    sc = Scene("prefill_long_prompts_sglang_ramp", gpu="H200", tick_s=0.5, duration_s=420)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng,
                 workload=mix((const(1.0), chat(prompt=800, out=300)),
                              (ramp(120, 180, 0.0, 0.35), chat(prompt=12000, out=60, sigma=0.3))),
                 rate=const(4.0))
    serve(sc, srv)
    return truth(sc, "prefill_interference", "prefill_interference", (135, 420),
                 note="12k-token prompts rise to 35% of arrivals; extend batches stall decodes"), sc.run()


@trace("prefill_interference", "prefill_interference")
def prefill_rag_context_growth_tp4():
    sc = Scene("prefill_rag_context_growth_tp4", gpu="H100", n_gpus=4, tick_s=2.0, duration_s=600)
    srv = Server("vllm", LLAMA70B, sc.gpus, sc.rng,
                 workload=lambda rng, t: chat(prompt=ramp(120, 300, 1500, 6000)(t), out=300,
                                              sigma=0.4)(rng, t),
                 rate=const(1.4))
    serve(sc, srv)
    return truth(sc, "prefill_interference", "prefill_interference", (200, 600),
                 note="retrieval grows prompts 1.5k -> 6k over 3 min; tokens/s holds, ITL rises"), sc.run()


# ================================================================ collective_straggler

@trace("collective_straggler", "collective_straggler")
def straggler_ddp8_data_imbalance():
    sc = Scene("straggler_ddp8_data_imbalance", gpu="H100", n_gpus=8, tick_s=1.0, duration_s=480)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.5, loader_s=0.3)
    train(sc, tr, counter=("tokens", 8 * 4 * 8192))

    def hook(s, t):
        s.trainer.rank_slow[5] = 1.45 if t >= 150 else 1.0
    sc.hooks.append(hook)
    return truth(sc, "collective_straggler", "collective_straggler", (150, 480), culprit=[5],
                 note="a new data mix packs rank 5's batches 45% longer; 7 ranks wait in NCCL"), sc.run()


@trace("collective_straggler", "collective_straggler")
def straggler_ddp4_pcie_degraded():
    sc = Scene("straggler_ddp4_pcie_degraded", gpu="H200", n_gpus=4, tick_s=2.0, duration_s=540)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.6, h2d_s=0.012, loader_s=0.2)
    train(sc, tr)

    def hook(s, t):
        s.trainer.h2d_slow[2] = 22.0 if t >= 120 else 1.0
    sc.hooks.append(hook)
    return truth(sc, "collective_straggler", "collective_straggler", (120, 540), culprit=[2],
                 note="GPU 2's link retrained at Gen3 x4: its batch copy takes 0.26 s"), sc.run()


@trace("collective_straggler", "collective_straggler")
def straggler_moe_hot_expert_ep8():
    sc = Scene("straggler_moe_hot_expert_ep8", gpu="H100", n_gpus=8, tick_s=1.0, duration_s=420)
    srv = Server("sglang", QWEN3MOE, sc.gpus, sc.rng, workload=chat(prompt=900, out=300),
                 rate=const(9.0))
    serve(sc, srv)

    def hook(s, t):
        s.server.rank_slow[3] = ramp(120, 240, 1.0, 1.7)(t)
    sc.hooks.append(hook)
    return truth(sc, "collective_straggler", "collective_straggler", (150, 420), culprit=[3],
                 note="experts on GPU 3 get hot (code traffic); the all-to-all waits on it"), sc.run()


# ================================================================ input_stall

@trace("input_stall", "input_stall")
def input_stall_ddp4_cpu_augment():
    sc = Scene("input_stall_ddp4_cpu_augment", gpu="H100", n_gpus=4, tick_s=1.0, duration_s=420,
               cpus=64)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.45, loader_s=0.25, tokens_per_step=0)
    train(sc, tr, counter=("samples", 4 * 32))

    def hook(s, t):
        on = t >= 120
        s.trainer.loader_s = [0.95 if on else 0.25] * 4
        s.host.extra_load = 44.0 if on else 10.0
    sc.hooks.append(hook)
    return truth(sc, "input_stall", "input_stall", (120, 420),
                 note="heavier augmentation: 6 workers per rank cannot keep up (CPU-bound)"), sc.run()


@trace("input_stall", "input_stall")
def input_stall_nfs_single_a100():
    sc = Scene("input_stall_nfs_single_a100", gpu="A100", tick_s=2.0, duration_s=600, cpus=96)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.5, comm_s=0.0, loader_s=0.2)
    train(sc, tr, mem_gib=58)

    def hook(s, t):
        s.trainer.loader_s = [ramp(150, 330, 0.2, 0.8)(t)]
    sc.hooks.append(hook)
    return truth(sc, "input_stall", "input_stall", (200, 600),
                 note="epoch 2 outgrows the page cache: reads from NFS, the GPU waits"), sc.run()


@trace("input_stall", "input_stall")
def input_stall_fsdp8_object_store():
    sc = Scene("input_stall_fsdp8_object_store", gpu="H200", n_gpus=8, tick_s=0.5, duration_s=420)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.7, comm_s=0.06, loader_s=0.35, fsdp=True)
    train(sc, tr, counter=("tokens", 8 * 8 * 4096))

    def hook(s, t):
        s.trainer.loader_s = [1.3 if 180 <= t < 300 else 0.35] * 8
    sc.hooks.append(hook)
    return truth(sc, "input_stall", "input_stall", (180, 300),
                 note="the object store slows for 2 min: every rank's loader starves"), sc.run()


# ================================================================ host_launch_jitter

def _preempted_calls(p, calls_per_step, lo=3e-4, hi=1.2e-2):
    ln = math.log(hi / lo)

    def extra(rng):
        k = 0
        lam = p * calls_per_step
        if lam > 0:
            L, q = math.exp(-lam), 1.0
            while True:
                q *= rng.random()
                if q <= L:
                    break
                k += 1
        return sum(lo * math.exp(rng.random() * ln) for _ in range(k))
    return extra


@trace("host_launch_jitter", "host_launch_jitter")
def launch_jitter_vllm_shared_core():
    sc = Scene("launch_jitter_vllm_shared_core", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(3.0))
    serve(sc, srv, pin=True)
    t0 = 130.0
    ebpf_serving(sc, jitter=lambda t: (0.03, 420.0) if t >= t0 else (0.0008, 3.0))

    def hook(s, t):
        on = t >= t0
        s.server.host_extra_fn = _preempted_calls(0.03, 39) if on else None
        s.host.extra_load = 3.0 if on else 0.0
        s.invol_rate = 420.0 if on else 40.0
    sc.hooks.append(hook)
    return truth(sc, "host_launch_jitter", "host_launch_jitter", (t0, 420),
                 note="an IRQ-heavy agent pinned to the EngineCore's core: 3% of launches "
                 "preempted"), sc.run()


@trace("host_launch_jitter", "host_launch_jitter")
def launch_jitter_sglang_tp4_one_rank():
    sc = Scene("launch_jitter_sglang_tp4_one_rank", gpu="H100", n_gpus=4, tick_s=0.5, duration_s=360)
    srv = Server("sglang", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=1000, out=250),
                 rate=const(2.5))
    serve(sc, srv)
    t0 = 110.0
    sc.ebpf = True
    last = {"steps": 0.0}
    from corpus_d.host import launch_hist, offcpu_hist
    lagger = _preempted_calls(0.05, 30)

    def launch(s, t, tick):
        steps = srv.c["steps"] - last["steps"]
        last["steps"] = srv.c["steps"]
        out = []
        for i in range(4):
            pid = s.procs[i].pid
            bad = t >= t0 and i == 2
            p_tail, invol = (0.05, 600.0) if bad else (0.0008, 4.0)
            for api, per, base in (("cudaGraphLaunch", 1.0, 5600.0), ("cuLaunchKernel", 30.0, 2700.0)):
                h = launch_hist(s.rng, api, pid, steps * per, base, tail_p=p_tail, tail_ns=(3e5, 1.2e7))
                if h is not None:
                    out.append(h)
            o = offcpu_hist(s.rng, pid, short=steps * 0.6 + 40 * tick, long=invol * tick)
            if o is not None:
                out.append(o)
        return tuple(out), int((600.0 if t >= t0 else 4.0) * tick)
    sc.launch = launch

    def hook(s, t):
        s.server.lag = {2: lagger(s.rng)} if t >= t0 else {}
    sc.hooks.append(hook)
    return truth(sc, "host_launch_jitter", "host_launch_jitter", (t0, 360), culprit=[2],
                 note="TP rank 2's scheduler thread shares its core with a log shipper"), sc.run()


@trace("host_launch_jitter", "host_launch_jitter")
def launch_jitter_eager_training_rank0():
    sc = Scene("launch_jitter_eager_training_rank0", gpu="H200", n_gpus=4, tick_s=1.0, duration_s=420)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.35, loader_s=0.2)
    train(sc, tr, counter=("tokens", 4 * 8 * 4096))
    t0 = 140.0
    sc.ebpf = True
    from corpus_d.host import launch_hist, offcpu_hist

    def gap(rng, i):
        if i != 0 or sc.t < t0:
            return 0.0
        return _preempted_calls(0.004, 2400, 5e-4, 2e-2)(rng)

    tr.gap_fn = gap
    last = {"steps": 0}

    def launch(s, t, tick):
        steps = tr.steps - last["steps"]
        last["steps"] = tr.steps
        out = []
        for i in range(4):
            pid = s.procs[i].pid
            bad = t >= t0 and i == 0
            h = launch_hist(s.rng, "cuLaunchKernel", pid, steps * 2400, 2900.0,
                            tail_p=0.004 if bad else 0.00005, tail_ns=(5e5, 2e7))
            if h is not None:
                out.append(h)
            o = offcpu_hist(s.rng, pid, short=30 * tick, long=(350.0 if bad else 2.0) * tick)
            if o is not None:
                out.append(o)
        return tuple(out), int((350.0 if t >= t0 else 2.0) * tick)
    sc.launch = launch
    return truth(sc, "host_launch_jitter", "host_launch_jitter", (t0, 420), culprit=[0],
                 note="eager-mode training; rank 0's launching thread preempted by a metrics agent"), sc.run()


# ================================================================ host_cpu_contention

def _contend(scene, load_fn, slow_per_share=1.0):
    def hook(s, t):
        s.host.extra_load = load_fn(t)
        share = s.host.share
        if s.server is not None:
            s.server.host_slow = (1.0 / share) ** 1.3 + (0 if share > 0.97 else 6.0 * (1 - share))
        s.invol_rate = 40.0 + 4000.0 * (1 - share)
    scene.hooks.append(hook)


@trace("host_cpu_contention", "host_cpu_contention")
def cpu_contention_batch_job_vllm():
    sc = Scene("cpu_contention_batch_job_vllm", gpu="H100", tick_s=1.0, duration_s=420, cpus=64)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(3.0))
    serve(sc, srv, pin=True)
    _contend(sc, step(120, 0.0, 110.0))
    return truth(sc, "host_cpu_contention", "host_cpu_contention", (120, 420),
                 note="a 110-thread preprocessing job lands on the 64-CPU node"), sc.run()


@trace("host_cpu_contention", "host_cpu_contention")
def cpu_contention_gradual_tp8_a100():
    sc = Scene("cpu_contention_gradual_tp8_a100", gpu="A100", n_gpus=8, tick_s=2.0, duration_s=600,
               cpus=128)
    srv = Server("vllm", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=1200, out=300), rate=const(2.4))
    serve(sc, srv)
    _contend(sc, ramp(100, 280, 0.0, 260.0))
    return truth(sc, "host_cpu_contention", "host_cpu_contention", (190, 600),
                 note="log compression ramps up over 3 min until the cores are oversubscribed"), sc.run()


@trace("host_cpu_contention", "host_cpu_contention")
def cpu_contention_sglang_burst():
    sc = Scene("cpu_contention_sglang_burst", gpu="H200", tick_s=0.5, duration_s=360, cpus=96)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=900, out=250), rate=const(4.0))
    serve(sc, srv, pin=True)
    _contend(sc, step(100, 0.0, 150.0, 250))
    return truth(sc, "host_cpu_contention", "host_cpu_contention", (100, 250),
                 note="a CI build with make -j150 on the serving node for 150 s"), sc.run()


# ================================================================ tiny_kernels

@trace("tiny_kernels", "tiny_kernels")
def tiny_kernels_logits_processor():
    sc = Scene("tiny_kernels_logits_processor", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(2.5))
    serve(sc, srv)

    def hook(s, t):
        s.server.tiny = 0.11 if t >= 120 else 0.0
    sc.hooks.append(hook)
    return truth(sc, "tiny_kernels", "tiny_kernels", (120, 420),
                 note="a deploy adds a per-request logits processor: 1-block kernels, 110 ms "
                 "a step"), sc.run()


@trace("tiny_kernels", "tiny_kernels")
def tiny_kernels_rl_rollout_eager():
    sc = Scene("tiny_kernels_rl_rollout_eager", gpu="H100", tick_s=2.0, duration_s=540)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.35, comm_s=0.0, loader_s=0.05)
    train(sc, tr, counter=("samples", 64), mem_gib=40)

    def hook(s, t):
        s.trainer.tiny_s = 3.2 if t >= 150 else 0.0
    sc.hooks.append(hook)
    return truth(sc, "tiny_kernels", "tiny_kernels", (150, 540),
                 note="RL stage: rollouts with batch 1 in eager mode, thousands of tiny kernels"), sc.run()


@trace("tiny_kernels", "tiny_kernels")
def tiny_kernels_ddp4_python_loss():
    sc = Scene("tiny_kernels_ddp4_python_loss", gpu="H200", n_gpus=4, tick_s=0.5, duration_s=360)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.4, loader_s=0.2)
    train(sc, tr)

    def hook(s, t):
        s.trainer.tiny_s = 1.3 if t >= 100 else 0.0
    sc.hooks.append(hook)
    return truth(sc, "tiny_kernels", "tiny_kernels", (100, 360),
                 note="a per-token Python loop in the new loss: small kernels, 1.3 s a step"), sc.run()


# ================================================================ memory_bandwidth

@trace("memory_bandwidth", "memory_bandwidth")
def membw_agent_long_contexts_h200():
    sc = Scene("membw_agent_long_contexts_h200", gpu="H200", tick_s=1.0, duration_s=480)
    srv = Server("vllm", QWEN7B, sc.gpus, sc.rng,
                 workload=mix((const(1.0), chat(prompt=900, out=250)),
                              (ramp(90, 270, 0.0, 0.75), chat(prompt=30000, out=1500, sigma=0.2,
                                                             out_sigma=0.3, cached=0.98,
                                                             max_ctx=65000))),
                 rate=const(2.2), max_len=65536)
    serve(sc, srv)
    return truth(sc, "memory_bandwidth", "memory_bandwidth", (200, 480),
                 note="agent sessions with ~30k-token contexts grow to 60% of traffic"), sc.run()


@trace("memory_bandwidth", "memory_bandwidth")
def membw_batch_growth_sglang_tp4():
    sc = Scene("membw_batch_growth_sglang_tp4", gpu="H200", n_gpus=4, tick_s=2.0, duration_s=600)
    srv = Server("sglang", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=6000, out=1500, sigma=0.4,
                                                                  out_sigma=0.35, cached=0.7),
                 rate=ramp(90, 300, 0.3, 1.6))
    serve(sc, srv)
    return truth(sc, "memory_bandwidth", "memory_bandwidth", (240, 600),
                 note="long-output traffic: the batch grows to ~90 x 7k tokens of KV"), sc.run()


@trace("memory_bandwidth", "memory_bandwidth")
def membw_rag_a100():
    sc = Scene("membw_rag_a100", gpu="A100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng,
                 workload=lambda rng, t: chat(prompt=ramp(100, 160, 1000, 14000)(t), out=500,
                                              sigma=0.3, out_sigma=0.4, cached=0.8)(rng, t),
                 rate=ramp(100, 160, 2.0, 0.65))
    serve(sc, srv)
    return truth(sc, "memory_bandwidth", "memory_bandwidth", (160, 420),
                 note="a RAG tenant: 14k-token contexts; decode reads KV at the HBM limit"), sc.run()


# ================================================================ throttling

@trace("throttling", "throttling")
def throttle_thermal_ddp8_half_node():
    sc = Scene("throttle_thermal_ddp8_half_node", gpu="H100", n_gpus=8, tick_s=2.0, duration_s=600)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.5, loader_s=0.3)
    train(sc, tr, counter=("tokens", 8 * 4 * 8192))

    def hook(s, t):
        for g in s.gpus[4:]:
            g.ambient = ramp(100, 250, 31.0, 60.0)(t)
    sc.hooks.append(hook)
    return truth(sc, "throttling", "throttling", (200, 600), culprit=[4, 5, 6, 7],
                 note="a chassis fan fails: GPUs 4-7 reach the slowdown temperature"), sc.run()


@trace("throttling", "throttling")
def throttle_power_brake_vllm():
    sc = Scene("throttle_power_brake_vllm", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(3.0))
    serve(sc, srv)

    def hook(s, t):
        s.gpus[0].brake = ("power brake", 690.0) if 150 <= t < 250 else None
    sc.hooks.append(hook)
    return truth(sc, "throttling", "throttling", (150, 250),
                 note="the rack's PSU asserts power brake for 100 s"), sc.run()


@trace("throttling", "throttling")
def throttle_hw_slowdown_a100():
    sc = Scene("throttle_hw_slowdown_a100", gpu="A100", tick_s=0.5, duration_s=360)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(2.0))
    serve(sc, srv)

    def hook(s, t):
        s.gpus[0].brake = ("hw slowdown", 705.0) if t >= 120 else None
    sc.hooks.append(hook)
    return truth(sc, "throttling", "throttling", (120, 360),
                 note="HW slowdown: clocks held at half"), sc.run()


@trace("throttling", "throttling")
def throttle_inlet_temp_h200():
    sc = Scene("throttle_inlet_temp_h200", gpu="H200", tick_s=1.0, duration_s=540)
    srv = Server("vllm", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=1200, out=300),
                 rate=const(5.0))
    serve(sc, srv)

    def hook(s, t):
        s.gpus[0].ambient = ramp(90, 330, 30.0, 66.0)(t)
    sc.hooks.append(hook)
    return truth(sc, "throttling", "throttling", (250, 540),
                 note="the aisle's cooling degrades: inlet +36 C over 4 min"), sc.run()


# ================================================================ kv_pressure

@trace("kv_pressure", "kv_pressure")
def kv_pressure_long_docs_tp4():
    sc = Scene("kv_pressure_long_docs_tp4", gpu="H100", n_gpus=4, tick_s=1.0, duration_s=480)
    srv = Server("vllm", LLAMA70B, sc.gpus, sc.rng,
                 workload=mix((const(1.0), chat(prompt=1200, out=300)),
                              (ramp(90, 150, 0.0, 0.8), chat(prompt=24000, out=700, sigma=0.2))),
                 rate=const(2.2), max_len=32768)
    serve(sc, srv)
    return truth(sc, "kv_pressure", "kv_pressure", (150, 480),
                 note="contract-review tenant: 24k-token documents fill the pool; preemptions"), sc.run()


@trace("kv_pressure", "kv_pressure")
def kv_pressure_reasoning_sglang():
    sc = Scene("kv_pressure_reasoning_sglang", gpu="H100", tick_s=2.0, duration_s=600)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng,
                 workload=lambda rng, t: chat(prompt=800, out=ramp(100, 240, 600, 5000)(t),
                                              out_sigma=0.5)(rng, t),
                 rate=const(1.3), pool_tokens=140000)
    serve(sc, srv)
    return truth(sc, "kv_pressure", "kv_pressure", (200, 600),
                 note="reasoning mode turned on: outputs 0.6k -> 5k tokens; retractions"), sc.run()


@trace("kv_pressure", "kv_pressure")
def kv_pressure_small_pool_a100_burst():
    sc = Scene("kv_pressure_small_pool_a100_burst", gpu="A100", tick_s=0.5, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(prompt=1500, out=400, sigma=0.6),
                 rate=step(120, 1.8, 4.2, 220), gmu=0.45)
    serve(sc, srv)
    return truth(sc, "kv_pressure", "kv_pressure", (130, 300),
                 note="gpu_memory_utilization 0.45 (a co-tenant planned), then a 100 s surge"), sc.run()


# ================================================================ gpu_shared

def _intruder(scene, gpu, t0, t1, share, name="python", cmd="python train_lora.py", mem=18, user="alice"):
    p = Proc(scene.pid(90 + gpu), gpu, name, cmd, int(mem * GIB), scene.start_wall + t0,
             user=user, role="other", share_of=lambda t: share if t0 <= t < t1 else 0.0)
    p.alive = (t0, t1)
    scene.procs.append(p)

    def hook(s, t):
        on = t0 <= t < t1
        g = s.gpus[gpu]
        base = s.server.mem_used + 540 * 2**20 if s.server is not None else g.mem_used
        if s.server is not None:
            s.server.share[gpu] = share if on else 0.0
            g.mem_used = base + (int(mem * GIB) if on else 0)
        elif s.trainer is not None:
            s.trainer.rank_slow[gpu] = 1.0 / (1.0 - share) if on else 1.0
    scene.hooks.append(hook)


@trace("gpu_shared", "gpu_shared")
def shared_notebook_on_tp4_rank():
    sc = Scene("shared_notebook_on_tp4_rank", gpu="H100", n_gpus=4, tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=1000, out=250), rate=const(2.2),
                 gmu=0.75)
    serve(sc, srv)
    _intruder(sc, 2, 120, 420, 0.45, cmd="/opt/conda/bin/python -m ipykernel_launcher -f kernel-7.json",
              mem=11)
    return truth(sc, "gpu_shared", "gpu_shared", (120, 420), culprit=[2],
                 note="a notebook kernel trains on GPU 2 of the TP4 server"), sc.run()


@trace("gpu_shared", "gpu_shared")
def shared_inference_on_training_gpu():
    sc = Scene("shared_inference_on_training_gpu", gpu="H200", tick_s=2.0, duration_s=540)
    tr = Trainer(sc.gpus, sc.rng, compute_s=0.4, comm_s=0.0, loader_s=0.2)
    train(sc, tr, counter=("tokens", 16 * 4096), mem_gib=80)
    _intruder(sc, 0, 150, 540, 0.35, cmd="python eval_server.py --port 9000", mem=30, user="bob")
    sc.hooks.append(lambda s, t: setattr(s.gpus[0], "mem_used",
                                         int((80 + (30 if t >= 150 else 0)) * GIB) + 530 * 2**20))
    return truth(sc, "gpu_shared", "gpu_shared", (150, 540), culprit=[0],
                 note="someone starts an eval server on the training GPU"), sc.run()


@trace("gpu_shared", "gpu_shared")
def shared_benchmark_on_sglang():
    sc = Scene("shared_benchmark_on_sglang", gpu="H100", tick_s=0.5, duration_s=360)
    srv = Server("sglang", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=900, out=250), rate=const(3.5),
                 gmu=0.7)
    serve(sc, srv)
    _intruder(sc, 0, 100, 220, 0.6, cmd="./gemm_bench --m 8192 --n 8192 --iters 100000", mem=4,
              name="gemm_bench", user="ops")
    return truth(sc, "gpu_shared", "gpu_shared", (100, 220), culprit=[0],
                 note="a GEMM burn-in run on the serving GPU for 2 min"), sc.run()


# ================================================================ spec_decode_rejected

@trace("spec_decode_rejected", "spec_decode_rejected")
def spec_eagle_language_shift():
    sc = Scene("spec_eagle_language_shift", gpu="H100", tick_s=1.0, duration_s=420)
    srv = Server("vllm", LLAMA8B, sc.gpus, sc.rng, workload=chat(), rate=const(3.0), spec_k=3,
                 accept=step(120, 0.72, 0.17))
    serve(sc, srv)
    return truth(sc, "spec_decode_rejected", "spec_decode_rejected", (120, 420),
                 note="a new market's traffic (another language): EAGLE drafts mostly rejected"), sc.run()


@trace("spec_decode_rejected", "spec_decode_rejected")
def spec_ngram_gradual_h200():
    sc = Scene("spec_ngram_gradual_h200", gpu="H200", tick_s=2.0, duration_s=600)
    srv = Server("vllm", QWEN7B, sc.gpus, sc.rng, workload=chat(prompt=2500, out=400), rate=const(3.0),
                 spec_k=5, accept=ramp(120, 260, 0.62, 0.08))
    serve(sc, srv)
    return truth(sc, "spec_decode_rejected", "spec_decode_rejected", (200, 600),
                 note="n-gram lookup: code-edit traffic gives way to chat; acceptance 0.62 -> 0.08"), sc.run()


@trace("spec_decode_rejected", "spec_decode_rejected")
def spec_sglang_eagle_tp4():
    sc = Scene("spec_sglang_eagle_tp4", gpu="H100", n_gpus=4, tick_s=0.5, duration_s=360)
    srv = Server("sglang", LLAMA70B, sc.gpus, sc.rng, workload=chat(prompt=1000, out=300), rate=const(2.0),
                 spec_k=4, accept=step(150, 0.76, 0.22))
    serve(sc, srv)
    return truth(sc, "spec_decode_rejected", "spec_decode_rejected", (150, 360),
                 note="SGLang EAGLE: the draft head does not fit a fine-tuned target"), sc.run()
