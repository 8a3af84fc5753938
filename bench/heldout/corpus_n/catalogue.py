"""The traces: each builder sets up boards, workloads and events, runs them, and says the
truth (cause, culprit GPUs, window).  Offsets are seconds from the trace's first frame."""

from __future__ import annotations

import math

from ._common import (GIB, Ebpf, Proc, Req, StaticWL, Workload, chat_wl, diurnal, ln, new,
                      program, serve, smooth, train_job, win)
from ._gpu import Activity

REGISTRY: list = []


def trace(name, family, cause, engine, gpu_model, gpus, culprit=None, tick=1.0):
    def deco(fn):
        REGISTRY.append(dict(name=name, family=family, cause=cause, engine=engine,
                             gpu_model=gpu_model, gpus=gpus, culprit=culprit, tick=tick, fn=fn))
        return fn
    return deco


def at(tr, off):
    return tr.start_wall + off


def rel(tr, f):
    """A function of wall time from one of offset."""
    s = tr.start_wall
    return lambda t: f(t - s)


def throttled_window(frames, gpus, reasons=("thermal (sw)", "hw slowdown", "power brake"),
                     cap=False):
    """The span where the named boards' clocks were held down (from the frames themselves)."""
    hit = []
    for f in frames:
        for g in f.gpus:
            if g.index in gpus and (any(r in g.throttle for r in reasons)
                                    or (cap and "power cap" in g.throttle)):
                hit.append(f.time_wall_s)
                break
    return (hit[0], hit[-1]) if hit else None


def kv_window(frames, after_s=0.0):
    """From the first preemption / retraction (after ``after_s``) to the last one."""
    hits, prev = [], None
    t0 = frames[0].time_wall_s
    for f in frames:
        e = f.engine
        if e is None:
            continue
        v = (e.preemptions_total or 0) + (e.retracted_requests_total or 0)
        if prev is not None and v > prev and f.time_wall_s - t0 >= after_s:
            hits.append(f.time_wall_s)
        prev = v
    return (hits[0], hits[-1]) if hits else None


# ======================================================================= pathologies
# ---------------------------------------------------------------- oversized_request

@trace("vllm-h100-n8-logprobs-loop", "serving", "oversized_request", "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 8)
    wl = chat_wl(tr, diurnal(6.5), prompt=ln(600, 0.7, 32, 6000), out=ln(200, 0.6, 8, 1500))

    def big(r, t):
        return Req(t, 540, 256, n=8, cached=32, kind="logprobs", extra_s=0.045, max_tokens=256)
    wl.injections = [(at(tr, 150 + 14 * k), big) for k in range(14)]
    serve(tr, "vllm", "llama8b", [0], wl, 41200, version="0.11")
    return tr.run(), win(tr, 150, 150 + 14 * 13 + 30), None, \
        "an eval script loops n=8, logprobs=20 requests (vLLM #37343's shape); every step pays its sampler"


@trace("vllm-a100-prompt-logprobs-32k", "serving", "oversized_request", "vllm", "A100", 1, tick=0.5)
def _(name):
    tr = new(name, "A100", 1, 7, tick=0.5)
    wl = chat_wl(tr, diurnal(2.6), prompt=ln(900, 0.7, 32, 7000), out=ln(180, 0.6, 8, 1200))

    def ppl(r, t):
        return Req(t, 32000, 1, kind="prompt_logprobs", extra_prefill_s=0.95, max_tokens=1)
    wl.injections = [(at(tr, 200), ppl), (at(tr, 245), ppl), (at(tr, 290), ppl)]
    serve(tr, "vllm", "qwen7b", [0], wl, 30110, version="0.10", budget=2048)
    return tr.run(), win(tr, 200, 312), None, \
        "a perplexity job sends 32k-token prompts with prompt_logprobs=20: each chunk pays a vocabulary-wide logprob pass"


@trace("sglang-b200-n8-top-logprobs", "serving", "oversized_request", "sglang", "B200", 1)
def _(name):
    tr = new(name, "B200", 1, 9)
    wl = chat_wl(tr, diurnal(4.0), prompt=ln(1200, 0.7, 32, 9000), out=ln(260, 0.6, 8, 2000))

    def big(r, t):
        return Req(t, 800, 512, n=8, kind="logprobs", extra_s=0.04, max_tokens=512)
    wl.injections = [(at(tr, 240 + 30 * k), big) for k in range(5)]
    serve(tr, "sglang", "qwen32b", [0], wl, 52000, block_size=1, budget=8192)
    return tr.run(), win(tr, 240, 420), None, \
        "a best-of-8 ranking client with top_logprobs_num=20 stalls the shared batch"


# ---------------------------------------------------------------- prefill_interference

@trace("vllm-h200-doc-summaries-burst", "serving", "prefill_interference", "vllm", "H200", 1)
def _(name):
    tr = new(name, "H200", 1, 10)
    s0 = tr.start_wall
    longr = lambda t: 0.5 if 180 <= t - s0 < 380 else 0.0  # noqa: E731
    wl = Workload(rate=lambda t: diurnal(7.5)(t) + longr(t),
                  prompt=lambda r, t: (ln(28000, 0.15, 16000, 32000)(r, t)
                                       if r.random() < longr(t) / (7.5 + longr(t)) else ln(500, 0.7, 16, 6000)(r, t)),
                  out=ln(230, 0.6, 8, 1500), cache_hit=lambda t: 0.25)
    serve(tr, "vllm", "llama8b", [0], wl, 22000, version="0.32")
    return tr.run(), win(tr, 180, 380), None, \
        "a nightly job posts 28k-token documents for summaries; their chunks ride in every decode step"


@trace("sglang-h100-tp4-agent-long-context", "serving", "prefill_interference", "sglang", "H100", 4)
def _(name):
    tr = new(name, "H100", 4, 9, cpus=96)
    s0 = tr.start_wall
    burst = lambda t: 0.18 if 200 <= t - s0 < 350 else 0.0  # noqa: E731
    wl = Workload(rate=lambda t: diurnal(3.2)(t) + burst(t),
                  prompt=lambda r, t: (ln(50000, 0.1, 36000, 64000)(r, t)
                                       if r.random() < burst(t) / (3.2 + burst(t)) else ln(900, 0.7, 16, 8000)(r, t)),
                  out=ln(220, 0.6, 8, 2000), cache_hit=lambda t: 0.35)
    serve(tr, "sglang", "qwen32b", [0, 1, 2, 3], wl, 61000, block_size=1, budget=8192)
    return tr.run(), win(tr, 200, 350), None, \
        "an agent framework starts replaying 60k-token tool transcripts with no shared prefix"


@trace("vllm-l40s-12k-prompts-tenant", "serving", "prefill_interference", "vllm", "L40S", 1)
def _(name):
    tr = new(name, "L40S", 1, 7, cpus=32)
    s0 = tr.start_wall
    burst = lambda t: 0.22 if 140 <= t - s0 < 300 else 0.0  # noqa: E731
    wl = Workload(rate=lambda t: diurnal(2.2)(t) + burst(t),
                  prompt=lambda r, t: (ln(12000, 0.15, 8000, 16000)(r, t)
                                       if r.random() < burst(t) / (2.2 + burst(t)) else ln(500, 0.7, 16, 4000)(r, t)),
                  out=ln(200, 0.6, 8, 1200), cache_hit=lambda t: 0.2)
    serve(tr, "vllm", "llama8b", [0], wl, 9100, version="0.11", budget=2048)
    return tr.run(), win(tr, 140, 300), None, \
        "a new tenant pastes whole code files (12k tokens); chunked prefill at 2048 tokens stretches every step"


# ---------------------------------------------------------------- kv_pressure

@trace("vllm-h100-reasoning-outputs-preempt", "serving", "kv_pressure", "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 10)
    s0 = tr.start_wall
    wl = Workload(users=lambda t: 16 if t - s0 < 150 else 40, think_s=3.0,
                  prompt=ln(1500, 0.6, 64, 8000),
                  out=lambda r, t: ln(1200, 0.5, 16, 4000)(r, t) if t - s0 < 150 else ln(9000, 0.4, 500, 16000)(r, t),
                  cache_hit=lambda t: 0.4)
    serve(tr, "vllm", "llama8b", [0], wl, 18800, version="0.32", pool_tokens=160000)
    frames = tr.run()
    return frames, kv_window(frames, 150) or win(tr, 150, tr.duration_s), None, \
        "a reasoning mode ships (9k-token outputs) on a server started with --gpu-memory-utilization 0.45; the pool fills, vLLM preempts and recomputes"


@trace("sglang-a100-long-chats-retract", "serving", "kv_pressure", "sglang", "A100", 1)
def _(name):
    tr = new(name, "A100", 1, 8)
    s0 = tr.start_wall
    wl = Workload(rate=lambda t: diurnal(0.9)(t) * (1 if t - s0 < 160 else 1.8),
                  prompt=lambda r, t: ln(1500, 0.6, 64, 8000)(r, t) if t - s0 < 160 else ln(7000, 0.4, 1000, 20000)(r, t),
                  out=ln(700, 0.5, 16, 4000), cache_hit=lambda t: 0.5)
    serve(tr, "sglang", "llama8b", [0], wl, 27400, block_size=1, budget=2048, pool_tokens=120000)
    frames = tr.run()
    return frames, kv_window(frames, 160) or win(tr, 160, tr.duration_s), None, \
        "a support bot starts sending whole ticket histories; the 120k-token pool (mem-fraction 0.5) retracts requests"


@trace("vllm-h200-tp2-70b-docqa-kv", "serving", "kv_pressure", "vllm", "H200", 2)
def _(name):
    tr = new(name, "H200", 2, 10, cpus=96)
    s0 = tr.start_wall
    wl = Workload(rate=lambda t: 0.15 * (1 if t - s0 < 180 else 1.5) * (1 + 0.08 * math.sin((t - s0) / 50)),
                  prompt=ln(12000, 0.35, 2000, 24000), out=ln(2500, 0.4, 200, 6000),
                  cache_hit=lambda t: 0.2)
    serve(tr, "vllm", "llama70b", [0, 1], wl, 33000, version="0.32")
    frames = tr.run()
    return frames, kv_window(frames, 180) or win(tr, 180, tr.duration_s), None, \
        "document-QA traffic doubles: 12k-token contexts with 2.5k-token answers outgrow the KV pool; preemptions climb"


# ---------------------------------------------------------------- collective_straggler

@trace("ddp-h100x8-rank5-long-sequences", "training", "collective_straggler", "trainer", "H100", 8,
       culprit=(5,))
def _(name):
    tr = new(name, "H100", 8, 10, cpus=192)
    s0 = tr.start_wall
    mult = lambda t, g: 1.0 + (0.45 if g == 5 and 200 <= t - s0 < 520 else 0.0)  # noqa: E731
    train_job(tr, list(range(8)), 8800, "python3 train.py --config llama3-8b-sft.yaml", 71,
              counter="tokens", unit=8 * 8 * 4096, fwd_s=1.1, mult=mult, comm_s=0.09)
    return tr.run(), win(tr, 200, 520), (5,), \
        "a data-mix change without length-balanced packing gives rank 5 the long documents; seven ranks wait in all-reduce"


@trace("fsdp-a100x4-rank2-slow", "training", "collective_straggler", None, "A100", 4, culprit=(2,))
def _(name):
    tr = new(name, "A100", 4, 8, cpus=64)
    s0 = tr.start_wall
    mult = lambda t, g: 1.0 + (0.6 if g == 2 and t - s0 >= 150 else 0.0)  # noqa: E731
    train_job(tr, [0, 1, 2, 3], 5100, "torchrun --nproc_per_node 4 finetune_fsdp.py --model mistral-7b",
              74, fwd_s=2.2, mult=mult, comm_s=0.15, opt_s=0.12)
    return tr.run(), win(tr, 150, 480), (2,), \
        "rank 2's shard holds the multi-image samples (uneven sharding); the others sit in NCCL; no GPM on A100"


@trace("b200x4-rank1-uneven-shard", "training", "collective_straggler", None, "B200", 4, culprit=(1,))
def _(name):
    tr = new(name, "B200", 4, 6, cpus=112)
    s0 = tr.start_wall
    mult = lambda t, g: 1.0 + (0.38 if g == 1 and 120 <= t - s0 < 260 else 0.0)  # noqa: E731
    train_job(tr, [0, 1, 2, 3], 12000, "torchrun --nproc_per_node 4 pretrain.py --tp 1 --dp 4", 150,
              fwd_s=1.6, mult=mult, comm_s=0.06)
    return tr.run(), win(tr, 120, 260), (1,), \
        "a resumed run re-sharded the dataset unevenly: rank 1 carries 38% more tokens per step until the next shard"


# ---------------------------------------------------------------- input_stall

@trace("ddp-h100x4-nfs-latency", "training", "input_stall", "trainer", "H100", 4)
def _(name):
    tr = new(name, "H100", 4, 9, cpus=96)
    s0 = tr.start_wall
    loader = lambda t: (0.9 + 0.3 * math.sin((t - s0) / 7)) if 180 <= t - s0 < 420 else 0.0  # noqa: E731
    train_job(tr, [0, 1, 2, 3], 6400, "torchrun --nproc_per_node 4 train_vit.py --data /mnt/nfs/imagenet",
              52, counter="samples", unit=4 * 256, fwd_s=0.85, loader_s=loader)
    return tr.run(), win(tr, 180, 420), None, \
        "the NFS server behind the dataset slows (another job's rsync); every rank waits on its DataLoader"


@trace("lora-l40s-jpeg-decode-bound", "training", "input_stall", None, "L40S", 1)
def _(name):
    tr = new(name, "L40S", 1, 6, cpus=32)
    s0 = tr.start_wall
    loader = lambda t: 1.2 + 0.2 * math.sin(t) if t - s0 >= 90 else 0.0  # noqa: E731
    train_job(tr, [0], 7700, "python3 finetune_lora.py --model llava-1.6-7b --num_workers 2",
                  31, fwd_s=0.75, loader_s=loader, phases=("lora_fwd", "lora_bwd"))
    # two loader workers decoding JPEGs at 100% each: 2 of 32 cores
    tr.host.extra = lambda t: ((6.3, 0.4, 2.0) if t >= 90 else (0.0, 0.0, 0.0))
    return tr.run(), win(tr, 90, 360), None, \
        "after switching to the 4k-image dataset, 2 DataLoader workers cannot decode JPEGs fast enough"


@trace("train-h200x8-object-store-throttled", "training", "input_stall", None, "H200", 8, tick=2.0)
def _(name):
    tr = new(name, "H200", 8, 10, cpus=224, tick=2.0)
    s0 = tr.start_wall
    loader = lambda t: (0.5 + 1.3 * abs(math.sin((t - s0) / 11))) if 240 <= t - s0 < 400 else 0.0  # noqa: E731
    train_job(tr, list(range(8)), 9900, "torchrun --nproc_per_node 8 train.py --dataset s3://corpus/shards",
              118, fwd_s=1.9, loader_s=loader, comm_s=0.1)
    return tr.run(), win(tr, 240, 400), None, \
        "the object store throttles (HTTP 503 slow-down) the streaming dataset; all eight ranks starve together"


# ---------------------------------------------------------------- host_launch_jitter (eBPF)

@trace("train-h100x8-cgroup-cpu-quota-ebpf", "training", "host_launch_jitter", None, "H100", 8)
def _(name):
    tr = new(name, "H100", 8, 10, cpus=192)
    s0 = tr.start_wall
    on = lambda t: 200 <= t - s0 < 440  # noqa: E731
    train_job(tr, list(range(8)), 3300, "torchrun --nproc_per_node 8 train.py --compile false", 66,
              fwd_s=0.9, gap=lambda t, g: 0.38 if on(t) else 0.0)
    tr.ebpf = Ebpf(3300, (("cuLaunchKernel", 9000.0), ("cuLaunchKernelEx", 2500.0)),
                   jitter=lambda t: (0.035, 0.004) if 200 <= t < 440 else (0.0, 0.0))
    return tr.run(), win(tr, 200, 440), None, \
        "the pod's cgroup cpu.max was lowered by a policy push: launch threads are throttled each CFS period"


@trace("vllm-h200-ebpf-launch-preempted", "serving", "host_launch_jitter", "vllm", "H200", 1)
def _(name):
    tr = new(name, "H200", 1, 8, cpus=64)
    wl = chat_wl(tr, diurnal(7.0))
    s = serve(tr, "vllm", "llama8b", [0], wl, 14500, version="0.32")
    tr.ebpf = Ebpf(14502, (("cuGraphLaunch", 90.0), ("cudaLaunchKernel", 2400.0), ("cuLaunchKernel", 1800.0)),
                   median_us=2.8, jitter=lambda t: (0.06, 0.005) if 150 <= t < 300 else (0.0, 0.0))

    def on(tr_, t):
        s.e.extra_cpu_s = 0.006
        s.inv_rate = 400.0

    def off(tr_, t):
        s.e.extra_cpu_s = 0.0
        s.inv_rate = 60.0
    tr.events += [(150, on), (300, off)]
    return tr.run(), win(tr, 150, 300), None, \
        "a NIC's interrupts were re-balanced onto the engine core's CPU; its launches stall for milliseconds"


@trace("cuda-infer-a100-ebpf-jitter", "program", "host_launch_jitter", None, "A100", 1)
def _(name):
    tr = new(name, "A100", 1, 6, cpus=64)
    s0 = tr.start_wall
    rng = tr.rng

    def step(t, clocks):
        g = 0.35 if 120 <= t - s0 < 260 else 0.0
        f = 0.018 * (1 + rng.gauss(0, 0.03)) / clocks.get(0, 1.0)
        return {0: [(f * 0.4, "fwd"), (f * g * 0.5, "gap"), (f * 0.6, "gemm"), (f * g * 0.5, "gap"),
                    (0.002, "gap")]}, 1.0
    program(tr, 0, 23100, "/opt/detector/bin/infer_server --engine yolo.plan --batch 16", 11, step,
            name="infer_server", user="vision")
    tr.ebpf = Ebpf(23100, (("cuLaunchKernel", 6000.0),),
                   jitter=lambda t: (0.04, 0.003) if 120 <= t < 260 else (0.0, 0.0))
    tr.host.extra = lambda t: (20.0, 6.0, 20.0) if 120 <= t < 260 else (0.0, 0.0, 0.0)
    return tr.run(), win(tr, 120, 260), None, \
        "a build job shares the inference app's cores; eBPF sees its kernel launches wait milliseconds"


# ---------------------------------------------------------------- host_cpu_contention (no eBPF)

@trace("vllm-h100-etl-neighbour", "serving", "host_cpu_contention", "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 10, cpus=64)
    wl = chat_wl(tr, diurnal(6.0))
    s = serve(tr, "vllm", "llama8b", [0], wl, 15400, version="0.32")

    def on(tr_, t):
        s.e.cpu_share, s.e.extra_cpu_s = 0.45, 0.014
        tr_.host.extra = lambda t: (88.0, 72.0, 110.0)

    def off(tr_, t):
        s.e.cpu_share, s.e.extra_cpu_s = 1.0, 0.0
        tr_.host.extra = None
    tr.events += [(180, on), (420, off)]
    return tr.run(), win(tr, 180, 420), None, \
        "a tokenisation ETL job with 96 threads lands on the serving node; the engine core waits for a CPU"


@trace("sglang-l40s-make-j-beside", "serving", "host_cpu_contention", "sglang", "L40S", 1)
def _(name):
    tr = new(name, "L40S", 1, 7, cpus=32)
    wl = chat_wl(tr, diurnal(2.4))
    s = serve(tr, "sglang", "qwen7b", [0], wl, 8300, block_size=1, budget=2048)
    tr.ebpf = Ebpf(8303, (), reason="eBPF needs root (or CAP_BPF and CAP_PERFMON): run gputop with sudo")

    def on(tr_, t):
        s.e.cpu_share, s.e.extra_cpu_s = 0.5, 0.011
        tr_.host.extra = lambda t: (93.0, 81.0, 70.0)

    def off(tr_, t):
        s.e.cpu_share, s.e.extra_cpu_s = 1.0, 0.0
        tr_.host.extra = None
    tr.events += [(100, on), (250, off)]
    return tr.run(), win(tr, 100, 250), None, \
        "someone builds flash-attention with MAX_JOBS=64 on a 32-core serving box"


@trace("train-a100x4-cpu-oversubscribed", "training", "host_cpu_contention", None, "A100", 4)
def _(name):
    tr = new(name, "A100", 4, 8, cpus=48)
    s0 = tr.start_wall
    on = lambda t: 150 <= t - s0 < 330  # noqa: E731
    w = train_job(tr, [0, 1, 2, 3], 4400, "torchrun --nproc_per_node 4 train.py --num_workers 8", 70,
                  fwd_s=1.3, gap=lambda t, g: 0.45 if on(t) else 0.0)

    def c_on(tr_, t):
        w.cpu_share = 0.55
        tr_.host.extra = lambda t: (90.0, 68.0, 95.0)

    def c_off(tr_, t):
        w.cpu_share = 1.0
        tr_.host.extra = None
    tr.events += [(150, c_on), (330, c_off)]
    tr.pin = lambda tr_, t, dt, host: _pin_tree(tr_, w, host, "torchrun", 4399)
    return tr.run(), win(tr, 150, 330), None, \
        "a Ray preprocessing job from another team takes every core; the pinned trainer's tree loses CPU (no eBPF)"


def _pin_tree(tr, w, host, label, root):
    from ._run import pinned_sample
    pids = (root,) + tuple(p.pid for p in w.procs) + tuple(root + 100 + i for i in range(8))
    th = [(p.pid, "pt_main_thread", 50 + w.tree_cpu / len(w.procs) * 0.8) for p in w.procs]
    return pinned_sample(label, "train.py", pids, w.tree_cpu + 500, 120000 + w.inv // 3,
                         8000 + w.inv, th, tuple(range(host.cpus)), host)


# ---------------------------------------------------------------- tiny_kernels

@trace("notebook-h100-per-sample-loop", "program", "tiny_kernels", None, "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 8, cpus=32)
    s0 = tr.start_wall
    rng = tr.rng

    def step(t, clocks):
        x = t - s0
        if x < 120:
            f = 0.6 / clocks.get(0, 1.0)
            return {0: [(0.02, "h2d"), (f / 3, "fwd"), (2 * f / 3, "bwd"), (0.04, "opt"),
                        (0.05 * rng.random(), "gap")]}, 1.0
        if x < 430:
            return {0: [(0.5, "small_ops"), (0.01, "gap")]}, 1.0
        return {0: [(1.0, "idle")]}, 0.0
    program(tr, 0, 19800, "/opt/conda/bin/python -m ipykernel_launcher -f /root/.local/share/jupyter/runtime/kernel-7c1.json",
            21, step, user="alice")
    return tr.run(), win(tr, 120, 430), None, \
        "a notebook moves from batched training to a per-sample Python loop of tiny ops on 1-row tensors"


@trace("cuda-graph-replay-h200-bench", "program", "tiny_kernels", None, "H200", 1, tick=0.5)
def _(name):
    tr = new(name, "H200", 1, 6, cpus=16, tick=0.5)
    s0 = tr.start_wall

    def step(t, clocks):
        x = t - s0
        if 100 <= x < 260:
            return {0: [(0.2, "graph_tiny")]}, 1.0
        return {0: [(0.2, "gemm")]}, 1.0
    program(tr, 0, 452, "python3 scripts/kernel_bench.py --suite decode", 89, step, user="root")
    return tr.run(), win(tr, 100, 260), None, \
        "a kernel benchmark's harness replays a captured graph of one-element kernels (the real H200: 99% util, 0.3% SM)"


@trace("grpo-b200x4-hf-generate-rollout", "training", "tiny_kernels", None, "B200", 4)
def _(name):
    tr = new(name, "B200", 4, 8, cpus=112)
    s0 = tr.start_wall
    rollout = lambda t: 150 <= t - s0 < 330  # noqa: E731

    def events(t):
        if rollout(t):
            return {g: [(0.5, "small_ops")] for g in range(4)}, 0.0
        return None
    train_job(tr, [0, 1, 2, 3], 27000, "accelerate launch grpo.py --use_vllm false", 96,
              fwd_s=1.4, events=events)
    return tr.run(), win(tr, 150, 330), None, \
        "GRPO rollouts through HF generate at batch 1 without CUDA graphs: thousands of tiny kernels per token"


# ---------------------------------------------------------------- memory_bandwidth

@trace("vllm-h100-long-context-kv-reads", "serving", "memory_bandwidth", "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 10)
    s0 = tr.start_wall
    on = lambda t: 150 <= t - s0 < 450  # noqa: E731
    wl = Workload(rate=diurnal(6.0), users=lambda t: 11 if on(t) else 0, think_s=1.5,
                  prompt=ln(600, 0.7, 16, 5000), out=ln(220, 0.6, 8, 1500), cache_hit=lambda t: 0.3,
                  user_prompt=ln(27000, 0.06, 22000, 31000), user_out=ln(350, 0.3, 50, 1000),
                  user_hit=lambda t: 0.97)
    serve(tr, "vllm", "llama8b", [0], wl, 12700, version="0.32", max_seqs=64)
    return tr.run(), win(tr, 150, 450), None, \
        "11 agent sessions re-send 27k-token cached contexts: prefill is cache hits, but every decode step streams ~35 GB of KV"


@trace("recsys-h200x4-embedding-bound", "training", "memory_bandwidth", None, "H200", 4)
def _(name):
    tr = new(name, "H200", 4, 9, cpus=96)
    s0 = tr.start_wall
    rng = tr.rng

    def events(t):
        if 200 <= t - s0:
            plan = {}
            for g in range(4):
                plan[g] = [(0.01, "h2d"), (2.4 * (1 + rng.gauss(0, 0.02)), "embed"),
                           (0.2, "fwd"), (0.15, "bwd"), (0.06, "comm"), (0.05, "opt")]
            return plan, 1.0
        return None
    train_job(tr, [0, 1, 2, 3], 4000, "torchrun --nproc_per_node 4 train_dlrm.py --features v7", 120,
              fwd_s=0.95, events=events)
    return tr.run(), win(tr, 200, 540), None, \
        "feature set v7 triples embedding lookups: the step is HBM-bound (DRAM ~85%, tensor under 10%)"


@trace("sglang-b200-32k-sessions", "serving", "memory_bandwidth", "sglang", "B200", 1)
def _(name):
    tr = new(name, "B200", 1, 8, cpus=112)
    s0 = tr.start_wall
    on = lambda t: 160 <= t - s0 < 400  # noqa: E731
    wl = Workload(rate=diurnal(2.5), users=lambda t: 9 if on(t) else 0, think_s=2.0,
                  prompt=ln(900, 0.7, 16, 8000), out=ln(250, 0.6, 8, 2000), cache_hit=lambda t: 0.35,
                  user_prompt=ln(29000, 0.06, 24000, 33000), user_out=ln(400, 0.3, 50, 1200),
                  user_hit=lambda t: 0.97)
    serve(tr, "sglang", "qwen32b", [0], wl, 51000, block_size=1, max_seqs=64)
    return tr.run(), win(tr, 160, 400), None, \
        "a coding agent keeps 30k-token sessions hot in the radix cache; decode is bound by KV bytes"


# ---------------------------------------------------------------- throttling

@trace("llamacpp-l40s-chassis-fan-thermal", "serving", "throttling", "llamacpp", "L40S", 1)
def _(name):
    tr = new(name, "L40S", 1, 9, cpus=32)
    wl = chat_wl(tr, diurnal(0.3), prompt=ln(4000, 0.4, 500, 10000), out=ln(180, 0.5, 8, 800))
    serve(tr, "llamacpp", "gguf32b", [0], wl, 3100, max_seqs=4, budget=2048, block_size=1,
          pool_tokens=65536)

    def fan(tr_, t):
        tr_.boards[0].heat_mult = 2.4
    tr.events += [(120, fan)]
    frames = tr.run()
    w = throttled_window(frames, {0}) or win(tr, 200, 540)
    return frames, w, None, "a chassis fan fails; the passive L40S heats past its slowdown point and clocks fall"


@trace("fsdp-h100x8-gpu3-thermal", "training", "throttling", None, "H100", 8, culprit=(3,))
def _(name):
    tr = new(name, "H100", 8, 10, cpus=192)
    train_job(tr, list(range(8)), 17000, "torchrun --nproc_per_node 8 fsdp_train.py --model llama-13b",
              76, fwd_s=1.5, comm_s=0.1)

    def block(tr_, t):
        tr_.boards[3].heat_mult = 2.3
    tr.events += [(100, block)]
    frames = tr.run()
    w = throttled_window(frames, {3}) or win(tr, 160, 600)
    return frames, w, (3,), \
        "a blanking panel left out starves GPU 3 of airflow; it throttles (thermal, HW slowdown) and the ring waits on it"


@trace("vllm-a100x2-power-brake", "serving", "throttling", "vllm", "A100", 2)
def _(name):
    tr = new(name, "A100", 2, 8, cpus=64)
    wl = chat_wl(tr, diurnal(0.9), prompt=ln(1500, 0.6, 64, 8000), out=ln(220, 0.6, 8, 1500))
    serve(tr, "vllm", "qwen32b", [0, 1], wl, 26000, version="0.11", budget=2048)

    def brake(tr_, t):
        for b in tr_.boards:
            b.brake, b.brake_reason = 0.45, ("power brake", "hw slowdown")

    def release(tr_, t):
        for b in tr_.boards:
            b.brake, b.brake_reason = 1.0, ()
    tr.events += [(200, brake), (330, release)]
    return tr.run(), win(tr, 200, 330), None, \
        "a PSU fails over and the chassis asserts power brake: HW slowdown holds both A100s near half clock"


@trace("b200x4-dc-power-cap-lowered", "training", "throttling", None, "B200", 4)
def _(name):
    tr = new(name, "B200", 4, 8, cpus=112)
    train_job(tr, [0, 1, 2, 3], 31000, "torchrun --nproc_per_node 4 pretrain.py --mbs 4", 160,
              fwd_s=1.3, comm_s=0.07)

    def cap(tr_, t):
        for b in tr_.boards:
            b.power_limit = 600.0
    tr.events += [(180, cap)]
    return tr.run(), win(tr, 180, 480), None, \
        "datacentre power management lowers the cap from 1000 W to 600 W (nvidia-smi -pl); clocks fall under load"


# ---------------------------------------------------------------- gpu_shared

@trace("l40s-box4-notebook-on-engine-gpu", "shared-box", "gpu_shared", "vllm", "L40S", 4, culprit=(2,))
def _(name):
    tr = new(name, "L40S", 4, 9, cpus=64)
    wl = chat_wl(tr, diurnal(2.0))
    s = serve(tr, "vllm", "llama8b", [2], wl, 11900, version="0.32")
    tr.engine_url = s.url
    nb = Proc(24400, 2, "python3", "/usr/bin/python3 -m ipykernel_launcher -f kernel-93a.json",
              tr.start_wall + 150, user="bob")
    on = lambda t: 150 <= t < 420  # noqa: E731
    tr.workloads.append(StaticWL(nb, lambda t: Activity(busy=0.55, sm=0.5, tensor=0.35, dram=0.3, occ=0.2)
                                 if on(t) else None, 9 * GIB, cores=1.0))
    # other GPUs: an embedding service on 0, idle 1 and 3
    emb = Proc(9000, 0, "python3", "python3 -m text_embeddings_router --model bge-m3", tr.start_wall - 9000)
    tr.workloads.append(StaticWL(emb, lambda t: Activity(busy=0.25 + 0.05 * math.sin(t / 9), sm=0.2, tensor=0.1,
                                                          dram=0.1, occ=0.05), 6 * GIB, cores=0.4))

    def share_on(tr_, t):
        s.e.shared_factor = 0.5
        for p in s.procs:
            p.sm_share = 0.5
        nb.sm_share = 0.48

    def share_off(tr_, t):
        s.e.shared_factor = 1.0
        for p in s.procs:
            p.sm_share = None
    tr.events += [(150, share_on), (420, share_off)]
    return tr.run(), win(tr, 150, 420), (2,), \
        "a notebook started with the wrong CUDA_VISIBLE_DEVICES trains on the engine's GPU 2; time-slicing halves the engine"


@trace("h100-two-vllm-one-gpu", "shared-box", "gpu_shared", "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 8, cpus=64)
    wl = chat_wl(tr, diurnal(4.5))
    s = serve(tr, "vllm", "llama8b", [0], wl, 12000, version="0.32", gpu_mem_util=0.45)
    tr.engine_url = s.url
    other = Proc(12500, 0, "VLLM::EngineCore", "VLLM::EngineCore", tr.start_wall - 20000)
    on = lambda t: 140 <= t < 360  # noqa: E731
    tr.workloads.append(StaticWL(other, lambda t: Activity(busy=0.6, sm=0.45, tensor=0.22, dram=0.4, occ=0.15)
                                 if on(t) else Activity(busy=0.05, sm=0.03, dram=0.03), 35 * GIB, cores=1.1))

    def share_on(tr_, t):
        s.e.shared_factor = 0.55
        for p in s.procs:
            p.sm_share = 0.45
        other.sm_share = 0.53

    def share_off(tr_, t):
        s.e.shared_factor = 1.0
        for p in s.procs:
            p.sm_share = 0.93
        other.sm_share = 0.06
    share_off(tr, 0)
    tr.events += [(140, share_on), (360, share_off)]
    return tr.run(), win(tr, 140, 360), None, \
        "two vLLM servers split one H100 at 0.45 each; the second one's batch API burst takes SM time from the first"


@trace("a100x2-ddp-plus-intruder-on-gpu1", "shared-box", "gpu_shared", None, "A100", 2, culprit=(1,))
def _(name):
    tr = new(name, "A100", 2, 7, cpus=64)
    s0 = tr.start_wall
    on = lambda t: 120 <= t - s0 < 330  # noqa: E731
    w = train_job(tr, [0, 1], 2000, "torchrun --nproc_per_node 2 train.py", 58, fwd_s=1.0,
                  mult=lambda t, g: 1.9 if g == 1 and on(t) else 1.0)
    intr = Proc(31337, 1, "python3", "python3 sweep.py --trial 17", tr.start_wall + 120, user="carol")
    tr.workloads.append(StaticWL(intr, lambda t: Activity(busy=0.5, sm=0.45, tensor=0.3, dram=0.3, occ=0.2)
                                 if 120 <= t < 330 else None, 14 * GIB))

    def share_on(tr_, t):
        w.procs[1].sm_share = 0.5
        intr.sm_share = 0.47

    def share_off(tr_, t):
        w.procs[1].sm_share = None
    tr.events += [(120, share_on), (330, share_off)]
    return tr.run(), win(tr, 120, 330), (1,), \
        "another user's sweep lands on GPU 1 of a 2-GPU DDP job; NVML shows two processes time-slicing it"


# ---------------------------------------------------------------- spec_decode_rejected

@trace("vllm-h100-eagle-language-shift", "serving", "spec_decode_rejected", "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 9)
    s0 = tr.start_wall
    wl = chat_wl(tr, diurnal(6.0))
    serve(tr, "vllm", "llama8b", [0], wl, 13300, version="0.32", spec_k=3,
          alpha=lambda t: 0.78 + 0.03 * math.sin(t / 20) if not 200 <= t - s0 < 420 else 0.2)
    return tr.run(), win(tr, 200, 420), None, \
        "overnight batch translation (ja->en) replaces chat: the English-trained EAGLE head's drafts are rejected"


@trace("sglang-h200-eagle-high-temperature", "serving", "spec_decode_rejected", "sglang", "H200", 1)
def _(name):
    tr = new(name, "H200", 1, 8)
    s0 = tr.start_wall
    wl = chat_wl(tr, diurnal(2.4))
    serve(tr, "sglang", "qwen32b", [0], wl, 43000, block_size=1, spec_k=4,
          alpha=lambda t: 0.72 + 0.03 * math.sin(t / 17) if t - s0 < 180 else 0.14)
    return tr.run(), win(tr, 180, 480), None, \
        "a client switches to temperature 1.3 sampling for synthetic data; EAGLE acceptance collapses and stays down"


@trace("llamacpp-l40s-draft-model-mismatch", "serving", "spec_decode_rejected", "llamacpp", "L40S", 1)
def _(name):
    tr = new(name, "L40S", 1, 7, cpus=32)
    s0 = tr.start_wall
    wl = chat_wl(tr, diurnal(0.7), prompt=ln(600, 0.6, 16, 4000), out=ln(300, 0.5, 16, 1500))
    serve(tr, "llamacpp", "gguf8b", [0], wl, 2900, max_seqs=4, budget=2048, block_size=1,
          pool_tokens=32768, spec_k=8, draft_cost=0.03,
          alpha=lambda t: 0.82 if not 150 <= t - s0 < 330 else 0.22)
    return tr.run(), win(tr, 150, 330), None, \
        "users switch to Korean; the 0.5B draft model (-md) guesses wrong, 8 drafted tokens per step are thrown away"


# ======================================================================= healthy look-alikes

@trace("vllm-h100-night-traffic-rises", "serving", None, "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 12)
    s0 = tr.start_wall
    wl = chat_wl(tr, lambda t: diurnal(3.5)(t) * smooth(t - s0, 1.0, 2.1, 120, 620))
    serve(tr, "vllm", "llama8b", [0], wl, 12100, version="0.32")
    return tr.run(), None, None, "early-morning traffic in another region doubles the request rate over 8 minutes"


@trace("vllm-h200-tp4-deploy-restart", "serving", None, "vllm", "H200", 4)
def _(name):
    tr = new(name, "H200", 4, 12, cpus=128)
    wl = chat_wl(tr, diurnal(3.0), prompt=ln(1200, 0.7, 32, 10000), out=ln(300, 0.6, 8, 2000))
    s = serve(tr, "vllm", "llama70b", [0, 1, 2, 3], wl, 40000, version="0.32")
    s.load_s, s.capture_s = 75.0, 22.0
    tr.events += [(240, lambda tr_, t: s.restart(t, down_s=12.0))]
    return tr.run(), None, None, \
        "a rolling deploy restarts the 70B server: engine gone, VRAM freed, weights reload, profile run, CUDA-graph capture, counters from zero"


@trace("sglang-b200-traffic-triples", "serving", None, "sglang", "B200", 1)
def _(name):
    tr = new(name, "B200", 1, 9, cpus=112)
    s0 = tr.start_wall
    wl = chat_wl(tr, lambda t: diurnal(2.5)(t) * smooth(t - s0, 1.0, 3.0, 150, 240))
    serve(tr, "sglang", "qwen32b", [0], wl, 50500, block_size=1)
    return tr.run(), None, None, "a product launch in APAC triples traffic within 90 s; the batch grows, tokens/s follow"


@trace("llamacpp-l40s-single-user-membound", "serving", None, "llamacpp", "L40S", 1)
def _(name):
    tr = new(name, "L40S", 1, 7, cpus=32)
    wl = Workload(users=lambda t: 1, think_s=6.0, prompt=ln(400, 0.6, 16, 3000), out=ln(350, 0.5, 16, 1500))
    serve(tr, "llamacpp", "gguf8b", [0], wl, 2100, max_seqs=1, budget=2048, block_size=1,
          pool_tokens=16384)
    return tr.run(), None, None, "one developer chats with a Q4 8B on llama-server: batch 1, bound by weight reads, as it should be"


@trace("vllm-a100-rag-long-prompts-normal", "serving", None, "vllm", "A100", 1)
def _(name):
    tr = new(name, "A100", 1, 9)
    wl = chat_wl(tr, diurnal(1.3), prompt=ln(7000, 0.25, 3000, 12000), out=ln(250, 0.5, 16, 1000),
                 hit=lambda t: 0.15)
    serve(tr, "vllm", "qwen7b", [0], wl, 30500, version="0.11", budget=2048)
    return tr.run(), None, None, "a RAG service whose prompts are always 5-9k tokens: long prefills are its normal"


@trace("vllm-h100-dp2-autoscale-slow-start", "serving", None, "vllm", "H100", 2)
def _(name):
    tr = new(name, "H100", 2, 12, cpus=96)
    s0 = tr.start_wall
    wl0 = chat_wl(tr, lambda t: diurnal(5.0)(t) * (1.0 if t - s0 < 260 else 0.55))
    serve(tr, "vllm", "llama8b", [0], wl0, 10100, version="0.32")
    wl1 = chat_wl(tr, lambda t: 0.0 if t - s0 < 260 else diurnal(5.0)(t) * 0.45)
    s1 = serve(tr, "vllm", "llama8b", [1], wl1, 10600, version="0.32", ready_at=260)
    s1.url = "http://127.0.0.1:8001/metrics"
    s1.load_s, s1.capture_s = 95.0, 18.0
    s1.export = False
    return tr.run(), None, None, \
        "the autoscaler adds a second replica on GPU 1: 2 minutes of cold start (weights, profile, graph capture) before the router splits traffic"


@trace("ddp-h100x8-periodic-checkpoint", "training", None, "trainer", "H100", 8)
def _(name):
    tr = new(name, "H100", 8, 12, cpus=192)
    s0 = tr.start_wall

    def events(t):
        x = (t - s0) % 240
        if 200 <= x < 201.3:  # torch.save on rank 0 while the others wait at the barrier
            return {g: ([(22.0, "ckpt")] if g == 0 else [(22.0, "nccl")]) for g in range(8)}, 0.0
        return None
    train_job(tr, list(range(8)), 6000, "torchrun --nproc_per_node 8 train.py --save_every 240s", 72,
              counter="tokens", unit=8 * 8 * 4096, fwd_s=1.15, comm_s=0.09, events=events)
    return tr.run(), None, None, \
        "every 4 minutes rank 0 writes a checkpoint (22 s) while ranks 1-7 wait in the barrier's NCCL kernel"


@trace("fsdp-h200x8-eval-pass", "training", None, "trainer", "H200", 8, tick=2.0)
def _(name):
    tr = new(name, "H200", 8, 13, cpus=224, tick=2.0)
    s0 = tr.start_wall

    def events(t):
        x = (t - s0) % 300
        if 240 <= x < 280:
            return {g: [(0.9 * (1 + tr.rng.gauss(0, 0.02)), "eval"), (0.05, "comm")] for g in range(8)}, 0.0
        return None
    train_job(tr, list(range(8)), 7000, "torchrun --nproc_per_node 8 fsdp_train.py --eval_every 300s", 112,
              counter="tokens", unit=8 * 4 * 8192, fwd_s=2.4, comm_s=0.14, opt_s=0.1, events=events)
    return tr.run(), None, None, \
        "a 40-s eval pass every 5 minutes: forward only, the token counter stands still while the GPUs stay busy"


@trace("lora-finetune-a100-steady", "training", None, None, "A100", 1)
def _(name):
    tr = new(name, "A100", 1, 9, cpus=32)
    train_job(tr, [0], 8100, "python3 -m axolotl.cli.train lora-llama3-8b.yml", 38, fwd_s=2.2,
              opt_s=0.04, phases=("lora_fwd", "lora_bwd"))
    return tr.run(), None, None, "a LoRA fine-tune on one A100: 2.3-s steps, no GPM, nothing wrong"


@trace("notebook-h100-interactive-bursts", "program", None, None, "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 10, cpus=32)
    s0 = tr.start_wall
    rng = tr.rng

    def step(t, clocks):
        x = t - s0
        cyc = x % 150
        if cyc < 55:
            f = 0.5 / clocks.get(0, 1.0)
            return {0: [(0.01, "h2d"), (f / 3, "fwd"), (2 * f / 3, "bwd"), (0.03, "opt")]}, 1.0
        return {0: [(5.0 + rng.random(), "idle")]}, 0.0
    program(tr, 0, 19100, "/opt/conda/bin/python -m ipykernel_launcher -f kernel-1b2.json", 24, step,
            user="dana")
    return tr.run(), None, None, "a notebook runs a few epochs, the user reads plots, runs again: busy, then idle"


@trace("gemm-bench-h200-power-capped", "program", None, None, "H200", 1)
def _(name):
    tr = new(name, "H200", 1, 6, cpus=16)

    def step(t, clocks):
        return {0: [(0.25, "gemm"), (0.002, "gap")]}, 1.0
    program(tr, 0, 452, "python3 scripts/gpu_check.py --phase matmul", 89, step, user="root")
    return tr.run(), None, None, "a bf16 GEMM burn-in at ~690 W: 'power cap' and 1.4-1.6 GHz clocks are the H200's normal under it"


@trace("l40s-vllm-plus-small-cotenant", "shared-box", None, "vllm", "L40S", 1, tick=0.5)
def _(name):
    tr = new(name, "L40S", 1, 9, cpus=32, tick=0.5)
    wl = chat_wl(tr, diurnal(2.0))
    s = serve(tr, "vllm", "llama8b", [0], wl, 9300, version="0.32", gpu_mem_util=0.85)
    tr.engine_url = s.url
    emb = Proc(9700, 0, "python3", "python3 -m infinity_emb v2 --model-id BAAI/bge-small-en-v1.5", tr.start_wall + 200)
    tr.workloads.append(StaticWL(emb, lambda t: Activity(busy=0.04, sm=0.03, tensor=0.01, dram=0.01)
                                 if t >= 200 else None, 1.2 * GIB, cores=0.3))

    def share(tr_, t):
        for p in s.procs:
            p.sm_share = 0.96
        emb.sm_share = 0.04
    tr.events += [(200, share)]
    return tr.run(), None, None, "a tiny embedding service joins the engine's GPU at t=200 s and takes ~3% of its time"


@trace("h200-vllm-plus-batch-job-beside", "shared-box", None, "vllm", "H200", 2)
def _(name):
    tr = new(name, "H200", 2, 11, cpus=96)
    s0 = tr.start_wall
    wl = chat_wl(tr, diurnal(6.0))
    serve(tr, "vllm", "llama8b", [0], wl, 12800, version="0.32")
    on = lambda t: t - s0 >= 180  # noqa: E731

    def events(t):
        if not on(t):
            return {1: [(1.0, "idle")]}, 0.0
        return None
    train_job(tr, [1], 20000, "python3 batch_infer_embed.py --shard 14", 40, fwd_s=0.6, events=events)
    return tr.run(), None, None, "a batch embedding job starts on the box's other GPU; the server on GPU 0 is untouched"


@trace("sglang-h100-tp8-night-traffic-halves", "serving", None, "sglang", "H100", 8)
def _(name):
    tr = new(name, "H100", 8, 10, cpus=192)
    s0 = tr.start_wall
    wl = chat_wl(tr, lambda t: diurnal(7.0)(t) * smooth(t - s0, 1.0, 0.5, 100, 500),
                 prompt=ln(1500, 0.7, 32, 12000), out=ln(350, 0.6, 8, 2500))
    serve(tr, "sglang", "llama70b", list(range(8)), wl, 70000, block_size=1)
    return tr.run(), None, None, "US evening ends: the 70B TP8 server's traffic halves; batch shrinks, ITL improves"


@trace("vllm-b200-eagle-steady-accept", "serving", None, "vllm", "B200", 1)
def _(name):
    tr = new(name, "B200", 1, 9, cpus=112)
    wl = chat_wl(tr, diurnal(6.0))
    serve(tr, "vllm", "qwen32b", [0], wl, 47000, version="0.32", spec_k=3,
          alpha=lambda t: 0.62 + 0.06 * math.sin(t / 40) + 0.03 * math.sin(t / 7))
    return tr.run(), None, None, "EAGLE (k=3) with per-token acceptance wandering 0.55-0.7 (accepted/drafted ~0.4) as the prompt mix changes"


@trace("vllm-h100-lora-adapters-rotate", "serving", None, "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 10)
    wl = chat_wl(tr, diurnal(5.0))
    s = serve(tr, "vllm", "llama8b", [0], wl, 13700, version="0.32")
    s.e.lora_max = 4
    names = [("sql-v3",), ("sql-v3", "support-de"), ("support-de", "summarise-v2", "sql-v3"),
             ("summarise-v2",)]
    for k, n in enumerate(names):
        tr.events.append((60 + 130 * k, lambda tr_, t, n=n: setattr(s.e, "lora_running", n)))
    return tr.run(), None, None, "multi-LoRA serving: adapters come and go in the running set; per-step cost moves a little"


@trace("eval-harness-a100x4-loglikelihood", "training", None, None, "A100", 4)
def _(name):
    tr = new(name, "A100", 4, 10, cpus=64)
    s0 = tr.start_wall
    rng = tr.rng

    def make(g):
        def step(t, clocks):
            task = int((t - s0) // 140)
            f = (0.25, 0.6, 0.12, 0.4, 0.3)[task % 5] * (1 + rng.gauss(0, 0.15))
            return {g: [(0.02, "h2d"), (f, "eval"), (0.05 + 0.05 * rng.random(), "gap")]}, 1.0
        return step
    for g in range(4):
        program(tr, g, 15000 + g, f"python3 -m lm_eval --model hf --tasks mmlu,hellaswag,arc --device cuda:{g}",
                30, make(g))
    return tr.run(), None, None, "lm-eval-harness, one process per GPU, task after task: batch shapes change every few minutes"


@trace("vllm-l40s-tp2-config-redeploy", "serving", None, "vllm", "L40S", 2)
def _(name):
    tr = new(name, "L40S", 2, 11, cpus=48)
    wl = chat_wl(tr, diurnal(2.4))
    s = serve(tr, "vllm", "mistral24b", [0, 1], wl, 21000, version="0.11", budget=2048)
    s.load_s, s.capture_s = 60.0, 16.0
    tr.events += [(300, lambda tr_, t: s.restart(t, down_s=6.0))]
    return tr.run(), None, None, "the server is redeployed with a new chat template: counters reset, VRAM empties and refills"


@trace("llamacpp-h100-draft-spec-steady", "serving", None, "llamacpp", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 8)
    wl = chat_wl(tr, diurnal(1.2), prompt=ln(900, 0.6, 16, 6000), out=ln(300, 0.5, 16, 1500))
    serve(tr, "llamacpp", "gguf32b", [0], wl, 4100, max_seqs=8, budget=2048, block_size=1,
          pool_tokens=65536, spec_k=8, draft_cost=0.03, alpha=lambda t: 0.74 + 0.05 * math.sin(t / 30))
    return tr.run(), None, None, "llama-server with a draft model (k=8): per-token acceptance ~0.75 (accepted/drafted ~0.33), 8 slots"


@trace("ddp-a100x8-batch-size-change", "training", None, None, "A100", 8, tick=2.0)
def _(name):
    tr = new(name, "A100", 8, 12, cpus=128, tick=2.0)
    s0 = tr.start_wall

    def events(t):
        x = t - s0
        if 290 <= x < 360:  # the job is stopped and relaunched with a larger batch
            return {g: [(5.0, "idle")] for g in range(8)}, 0.0
        return None
    fwd = lambda t: 1.2 if t - s0 < 290 else 2.1  # noqa: E731
    w = train_job(tr, list(range(8)), 8000, "torchrun --nproc_per_node 8 train.py --global_batch 512", 66,
                  fwd_s=fwd, comm_s=0.12, events=events)
    w.down = lambda t: 292 <= t < 355
    return tr.run(), None, None, "the job is relaunched with global batch 512 -> 896: a minute idle, then longer steps"


@trace("vllm-h100-kv-high-no-preemption", "serving", None, "vllm", "H100", 1)
def _(name):
    tr = new(name, "H100", 1, 10)
    wl = Workload(users=lambda t: 30, think_s=4.0, prompt=ln(3000, 0.5, 200, 9000),
                  out=ln(1500, 0.4, 100, 4000), cache_hit=lambda t: 0.6)
    serve(tr, "vllm", "llama8b", [0], wl, 16100, version="0.32", pool_tokens=150000)
    return tr.run(), None, None, "long chats keep the KV pool 60-90% full without a preemption: a full pool is not a failing pool"


@trace("sglang-h200-restart-cache-warms", "serving", None, "sglang", "H200", 1)
def _(name):
    tr = new(name, "H200", 1, 10)
    s0 = tr.start_wall
    wl = chat_wl(tr, diurnal(5.0), prompt=ln(2500, 0.5, 100, 9000),
                 hit=lambda t: smooth(t - s0, 0.6, 0.6, 0, 1) if t - s0 < 150 else smooth(t - s0, 0.05, 0.6, 215, 420))
    s = serve(tr, "sglang", "qwen7b", [0], wl, 44100, block_size=1)
    s.load_s, s.capture_s = 35.0, 12.0
    tr.events += [(150, lambda tr_, t: s.restart(t, down_s=5.0))]
    return tr.run(), None, None, "after a restart the radix cache is cold: TTFT and prefill load are high until it warms"


@trace("ddp-h100x4-epoch-boundary", "training", None, "trainer", "H100", 4)
def _(name):
    tr = new(name, "H100", 4, 9, cpus=96)
    s0 = tr.start_wall
    loader = lambda t: 5.0 if int(t - s0) % 170 in (100, 101) else 0.0  # noqa: E731
    train_job(tr, [0, 1, 2, 3], 6600, "torchrun --nproc_per_node 4 train.py --persistent_workers false",
              60, counter="samples", unit=4 * 128, fwd_s=0.9, loader_s=loader)
    return tr.run(), None, None, "each epoch boundary restarts the DataLoader workers: one ~5-s gap, then steady"


@trace("cuda-h200-copy-bandwidth-burnin", "program", None, None, "H200", 1)
def _(name):
    tr = new(name, "H200", 1, 5, cpus=16)

    def step(t, clocks):
        return {0: [(0.5, "copy"), (0.003, "gap")]}, 1.0
    program(tr, 0, 600, "./nvbandwidth -t device_local_copy -i 1000", 80, step, name="nvbandwidth",
            user="root")
    return tr.run(), None, None, "an acceptance burn-in measures device-local copy bandwidth: DRAM at peak is its job"


@trace("vllm-a10g-quiet-night", "serving", None, "vllm", "A10G", 1)
def _(name):
    tr = new(name, "A10G", 1, 10, cpus=8)
    wl = chat_wl(tr, lambda t: 0.25 + 0.2 * math.sin(t / 90) ** 2, prompt=ln(400, 0.6, 16, 3000),
                 out=ln(150, 0.6, 8, 800))
    serve(tr, "vllm", "qwen05b", [0], wl, 3000, version="0.11", budget=2048)
    return tr.run(), None, None, "a small internal bot on an A10G at night: mostly idle, short bursts"


@trace("sglang-l40s-dp2-replicas", "serving", None, "sglang", "L40S", 2)
def _(name):
    tr = new(name, "L40S", 2, 8, cpus=48)
    wl0 = chat_wl(tr, diurnal(2.0))
    serve(tr, "sglang", "qwen7b", [0], wl0, 7000, block_size=1, budget=2048)
    wl1 = chat_wl(tr, diurnal(2.0, phase=0.3))
    s1 = serve(tr, "sglang", "qwen7b", [1], wl1, 7400, block_size=1, budget=2048)
    s1.export = False
    return tr.run(), None, None, "two SGLang replicas behind a router, one per L40S; gputop reads the first"


@trace("train-h100x8-warmup-compile", "training", None, None, "H100", 8)
def _(name):
    tr = new(name, "H100", 8, 9, cpus=192)
    s0 = tr.start_wall

    def events(t):
        x = t - s0
        if x < 45:
            return {g: [(2.0, "idle")] for g in range(8)}, 0.0
        if x < 110:  # torch.compile autotuning: short benchmark kernels with host work between
            return {g: [(0.3, "fwd"), (0.7, "gap")] for g in range(8)}, 0.0
        return None
    train_job(tr, list(range(8)), 12000, "torchrun --nproc_per_node 8 train.py --compile max-autotune",
              70, fwd_s=1.0, comm_s=0.08, events=events)
    return tr.run(), None, None, "a fresh job: idle while ranks start, torch.compile autotune, then steady steps"
