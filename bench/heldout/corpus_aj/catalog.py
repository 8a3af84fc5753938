"""The traces: one builder per trace, with its truth.  Windows are seconds from the trace's
start (converted to wall clock in the Truth).  Every reading comes from the simulation: a
builder only sets the workload and what changes in the physics (a power limit, a cooling
failure, another tenant's CPU demand, a draft model's acceptance ...)."""
from __future__ import annotations

import math

from corpus_aj import Truth
from corpus_aj.hw import GiB
from corpus_aj.node import Host, Node, Proc, seed_of
from corpus_aj.serve import Req, Serve, Spec, closed_loop, lognorm, poisson
from corpus_aj.train import RLLoop, Train

CPUS = {"h100": 224, "h200": 224, "b200": 224, "a100-80": 256, "a100-40": 256, "l40s": 64}
CATALOG = []


class Entry:
    def __init__(self, meta, fn):
        self.meta, self.fn = meta, fn

    def build(self):
        m = self.meta
        node = self.fn(m)
        frames = node.frames()
        w = m["window"]
        win = None if w is None else (round(node.start_wall + w[0], 3), round(node.start_wall + w[1], 3))
        return Truth(m["name"], m["family"], m["cause"], m["culprit"], win, m["engine"], m["n"],
                     node.spec.name, m["tick"], m["note"], frames[0].time_wall_s), frames


def T(name, family, cause, *, window=None, culprit=None, engine="vllm", gpu="h100", n=1, tick=1.0, note=""):
    def deco(fn):
        CATALOG.append(Entry(dict(name=name, family=family, cause=cause, window=window, culprit=culprit,
                                  engine=engine, gpu=gpu, n=n, tick=tick, note=note), fn))
        return fn
    return deco


def mk(m, dur, *, tree_cores=16, others=None, quota=None, irq=None, base_load=4.0, ebpf=False, plimit=None,
       drops=0):
    host = Host(CPUS[m["gpu"]], tree_cores, others, quota, irq, base_load)
    start = 1_799_000_000.0 + (seed_of(m["name"]) % 4_000_000)
    node = Node(m["name"], m["gpu"], m["n"], m["tick"], dur, host, start, ebpf=ebpf, power_limit=plimit,
                hostname=f"{m['gpu']}-{seed_of(m['name']) % 97:02d}")
    for _ in range(drops):
        node.drop_ticks.add(node.rng.randrange(5, node.nt - 2))
    return node


def step(t0, v0, v1):
    return lambda t: v1 if t >= t0 else v0


def window_fn(t0, t1, v0, v1):
    return lambda t: v1 if t0 <= t < t1 else v0


def ramp(t0, t1, v0, v1, end=None):
    def f(t):
        if end is not None and t >= end:
            return v0
        if t <= t0:
            return v0
        if t >= t1:
            return v1
        return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return f


def serving(m, dur, *, kind="vllm", model="llama3-8b", rate=4.0, prompt=(900, 0.8), out=(350, 0.9, 4096),
            scrape=2.0, node_kw=None, serve_kw=None, mids=(), extra=None, n=1):
    node = mk(m, dur, **(node_kw or {}))
    s = Serve(node, kind, model, tuple(range(m["n"])), scrape_s=scrape, **(serve_kw or {}))
    rng = node.rng
    if rate:
        rf = rate if callable(rate) else (lambda t, r=rate: r)
        poisson(s, rng, 0, dur, rf, lognorm(prompt[0], prompt[1], 16), lognorm(out[0], out[1], 4, out[2]), n=n)
    if extra:
        extra(node, s, rng)
    for tm, fn in sorted(mids, key=lambda x: x[0]):
        s.advance(tm)
        fn(node, s, rng)
    s.advance(dur)
    return node


def training(m, dur, *, node_kw=None, train_kw=None, hooks=None):
    node = mk(m, dur, **(node_kw or {}))
    tr = Train(node, range(m["n"]), **(train_kw or {}))
    if hooks:
        hooks(node, tr)
    tr.run(dur)
    return node


def other_proc(node, g, pid, name, cmd, user, t0, t1, mem_gb, busy, sm, tensor, dram, period=None, on=None):
    """Another process on GPU g (a notebook, a reward model): its own memory and kernels."""
    p = Proc(pid, name, cmd, (g,), user=user, start_time_s=node.start_wall + t0 - 3, t_start=t0, t_end=t1,
             in_tree=False, base_cpu=1.0, container="docker:" + f"{seed_of(cmd) & 0xffffffffffff:012x}")
    node.procs.append(p)
    node.set_mem(g, t0, pid, mem_gb * GiB)
    node.set_mem(g, t1, pid, 0)
    t = t0
    while t < t1:
        if period is None:
            node.add(g, t, min(t1, t + 1.0), busy, sm, tensor, dram, pid=pid)
            t += 1.0
        else:
            node.add(g, t, min(t1, t + on), busy, sm, tensor, dram, pid=pid)
            t += period


# ============================================================================ memory_bandwidth
@T("mb-needle-eval-long-kv-decode-h100", "serving", "memory_bandwidth", window=(120, 300), engine="vllm",
   note="demo endpoint slowed when the long-context eval started: 24 concurrent needle tests over one cached 32k haystack, "
        "decode reads ~32k tokens of KV per sequence per step; DRAM pinned, ITL 2-3x")
def _(m):
    def extra(node, s, rng):
        # the haystack is shared: the prefix cache serves almost all of each prompt
        orig = s.submit

        def sub(r):
            if r.tag.startswith("cl"):
                r.cached = r.shared = int(r.prompt * 0.97)
            orig(r)
        s.submit = sub
        closed_loop(s, rng, 120, 24, lambda r: int(r.uniform(30000, 34000)), lognorm(900, 0.4, 200, 2000))
    return serving(m, 300, rate=3.0, extra=extra, serve_kw=dict(max_seqs=128))


@T("mb-awq-dequant-fallback-tp2-a100", "serving", "memory_bandwidth", window=(150, 330), engine="vllm", gpu="a100-80", n=2,
   tick=2.0, note="after the image update the 70B AWQ endpoint restarted without its fused int4 kernel: weights are dequantised "
                  "to bf16 through HBM every step; tokens/s roughly halved, memory controller busy")
def _(m):
    def restart(node, s, rng):
        s.paused = True
        s.advance(node.rng.uniform(0, 0) + 150)  # noop, keeps order
    def down(node, s, rng):
        s.paused = True
        for i, g in enumerate(s.gpus):
            node.set_mem(g, 125, s.gpu_pids[i], 0.4 * GiB)
    def up(node, s, rng):
        s.paused = False
        s.dequant_read = 3.8
        for i, g in enumerate(s.gpus):
            node.set_mem(g, 148, s.gpu_pids[i], s.mem_engine)
    return serving(m, 330, model="llama3-70b-awq", rate=0.7, scrape=5.0, mids=[(125, down), (148, up)],
                   serve_kw=dict(max_seqs=128))


@T("mb-kv-fp8-dropped-h200-mild", "serving", "memory_bandwidth", window=(140, 330), engine="vllm", gpu="h200",
   note="mild: a config refactor dropped --kv-cache-dtype fp8; KV reads per step doubled on the 8k-16k agent traces, "
        "ITL up ~30%")
def _(m):
    def flip(node, s, rng):
        s.kvb *= 2
        s.state.cache_dtype = "auto"
    return serving(m, 330, model="qwen3-14b", rate=2.2, prompt=(9000, 0.35), out=(700, 0.6, 4096),
                   serve_kw=dict(kv_dtype=1.0, max_seqs=128), mids=[(140, flip)])


@T("mb-sliding-window-disabled-sglang-b200", "serving", "memory_bandwidth", window=(130, 320), engine="sglang",
   gpu="b200", tick=0.5, note="a model-config override turned sliding-window attention off: every layer attends the full "
                              "32k context, KV bytes per step x4; DRAM pinned, tokens/s down")
def _(m):
    def flip(node, s, rng):
        s.kvb *= 4
    return serving(m, 320, kind="sglang", model="qwen3-8b", rate=5.0, prompt=(14000, 0.5), out=(600, 0.7, 4096),
                   scrape=1.0, mids=[(130, flip)], serve_kw=dict(max_seqs=160))


# ============================================================================ throttling
@T("thr-rack-power-cap-fsdp-h100x8", "training", "throttling", window=(130, 330), engine="trainer", n=8, tick=2.0,
   note="rack PDU overload: the BMC lowered every GPU's power limit 700->400 W; all 8 ranks slowed alike, step time +35%")
def _(m):
    def hooks(node, tr):
        for g in range(8):
            node.power_limit[g] = step(130, 700.0, 400.0)
    return training(m, 330, train_kw=dict(compute_s=1.4, comm_s=0.35, tokens_per_step=8 * 16384, mem_gb=71),
                    hooks=hooks, node_kw=dict(tree_cores=64))


@T("thr-fan-failure-l40s-eval", "serving", "throttling", window=(150, 360), culprit=None, engine="vllm", gpu="l40s",
   note="eval box: two chassis fans died; the L40S heats past its slowdown point over a minute and holds its clock down")
def _(m):
    def extra(node, s, rng):
        node.r_mult[0] = ramp(90, 150, 1.0, 2.1)
        closed_loop(s, rng, 0, 24, lognorm(700, 0.6, 50, 4000), lognorm(300, 0.8, 8, 2048))
    return serving(m, 360, model="qwen2.5-7b", rate=0, extra=extra, node_kw=dict(tree_cores=12))


@T("thr-power-brake-tp4-b200", "serving", "throttling", window=(120, 200), engine="vllm", gpu="b200", n=4, tick=0.5,
   note="facility power event: the rack asserted power brake, clocks of all four B200s fell to ~45% for 80 s; ITL 2x")
def _(m):
    def extra(node, s, rng):
        for g in range(4):
            node.ceiling[g] = window_fn(120, 200, (1.0, ()), (0.45, ("power brake", "hw slowdown")))
    return serving(m, 300, model="llama3-70b", rate=6.0, prompt=(1500, 0.9), out=(400, 0.9, 4096), extra=extra,
                   scrape=1.0, serve_kw=dict(max_seqs=256))


@T("thr-clock-degradation-h200-mild", "serving", "throttling", window=(120, 400), engine="sglang", gpu="h200",
   note="mild, slow onset: XID-free degradation, the H200 reports HW slowdown and its clock sinks ~25% over minutes")
def _(m):
    def extra(node, s, rng):
        node.ceiling[0] = lambda t: (1.0, ()) if t < 120 else (max(0.72, 1 - (t - 120) / 700), ("hw slowdown",))
    return serving(m, 400, kind="sglang", model="qwen2.5-7b", rate=9.0, prompt=(1800, 0.7), out=(500, 0.8, 4096),
                   extra=extra, scrape=5.0)


# ============================================================================ prefill_interference
@T("pi-long-context-bench-on-demo-h100", "serving", "prefill_interference", window=(110, 300), engine="vllm",
   note="the long-context benchmark pointed at the staff demo endpoint: 30k-token prompts every few seconds, chunked "
        "prefill shares every step with decode, ITL p99 3-5x for chat users")
def _(m):
    def extra(node, s, rng):
        poisson(s, rng, 110, 300, lambda t: 0.3, lognorm(30000, 0.15, 8000, 60000), lognorm(200, 0.5, 16, 800))
    return serving(m, 300, rate=4.0, extra=extra)


@T("pi-rag-summaries-sglang-h200-mild", "serving", "prefill_interference", window=(150, 360), engine="sglang",
   gpu="h200", note="mild: a RAG summarisation job started sending 10k-token documents to the shared SGLang pool; ITL p99 ~2x")
def _(m):
    def extra(node, s, rng):
        poisson(s, rng, 150, 360, lambda t: 0.8, lognorm(10000, 0.3, 2000, 30000), lognorm(250, 0.5, 16, 800))
    return serving(m, 360, kind="sglang", model="qwen2.5-7b", rate=6.0, extra=extra, scrape=2.0)


@T("pi-tgi-long-prompts-a100", "serving", "prefill_interference", window=(120, 300), engine="tgi", gpu="a100-80",
   tick=2.0, note="TGI eval endpoint: a code benchmark with 8k-token repository contexts arrived among short QA prompts")
def _(m):
    def extra(node, s, rng):
        poisson(s, rng, 120, 300, lambda t: 0.6, lognorm(8000, 0.3, 3000, 16000), lognorm(300, 0.6, 16, 1000))
    return serving(m, 300, kind="tgi", rate=3.0, extra=extra, scrape=5.0, serve_kw=dict(max_batched=4096))


@T("pi-code-bench-bursts-tp2-h100", "serving", "prefill_interference", window=(100, 320), engine="vllm", n=2,
   note="intermittent: every ~40 s the code-benchmark runner fires 25 long repository prompts at once; each burst "
        "stalls decode for several seconds")
def _(m):
    def extra(node, s, rng):
        t = 100.0
        while t < 300:
            for i in range(25):
                s.submit(Req(t + i * 0.05, int(rng.uniform(12000, 20000)), int(rng.uniform(100, 500))))
            t += rng.uniform(35, 45)
    return serving(m, 320, model="qwen2.5-32b", rate=5.0, extra=extra, serve_kw=dict(max_batched=16384))


# ============================================================================ tiny_kernels
@T("tk-eval-sequential-eager-small-model-h100", "serving", "tiny_kernels", window=(130, 330), engine="vllm",
   note="eval rerun with --num-concurrent 1 on a 0.5B judge started with --enforce-eager: GPU-Util stays ~55% while SM "
        "activity falls to ~5%; the harness crawls")
def _(m):
    def extra(node, s, rng):
        left = closed_loop(s, rng, 0, 64, lognorm(500, 0.5, 30, 2000), lognorm(120, 0.7, 4, 1024), until=125)
        closed_loop(s, rng, 130, 1, lognorm(500, 0.5, 30, 2000), lognorm(120, 0.7, 4, 1024))
    return serving(m, 330, model="qwen2.5-0.5b", rate=0, extra=extra,
                   serve_kw=dict(graphs=False, sched_ms=0.6, launch_us=4.0, kmin_us=3.0))


@T("tk-debug-run-microbatch1-h100", "training", "tiny_kernels", window=(140, 330), engine="trainer",
   note="a researcher relaunched the SFT job from a debug config (micro-batch 1, no torch.compile, 1.5B): thousands of tiny "
        "kernels per step, GPU-Util high, SM activity ~10%")
def _(m):
    node = mk(m, 330)
    tr = Train(node, [0], compute_s=0.9, comm_s=0.0, tokens_per_step=16384, mem_gb=30, host_frac=0.4)
    tr.run(130)
    for i, g in enumerate(tr.gpus):
        node.set_mem(g, 130, tr.pids[i], 0)
    tr.t = 140
    tr.tiny = True
    tr.compute_s, tr.tokens_per_step, tr.host_frac, tr.kernels = 0.35, 2048, 0.95, 9000
    for i, g in enumerate(tr.gpus):
        node.set_mem(g, 139, tr.pids[i], 9 * GiB)
    tr.run(330)
    return node


@T("tk-reward-scoring-unbatched-h200", "rl", "tiny_kernels", window=(120, 320), engine="none", gpu="h200",
   note="the verifier refactor made the reward model score one sample per forward: GPU busy all the time in tiny kernels, "
        "SM ~10%, the reward stage takes 5x longer")
def _(m):
    node = mk(m, 320)
    tr = Train(node, [0], compute_s=0.25, comm_s=0.0, tokens_per_step=8192, mem_gb=20, host_frac=0.4, scrape_s=None,
               cmd="python3 -m rewards.serve_rm --model lab/reward-7b --batch-size 64")
    tr.run(120)
    tr.tiny = True
    tr.compute_s, tr.host_frac, tr.kernels = 0.08, 0.95, 2500
    tr.run(320)
    return node


@T("tk-weight-sync-spin-graph-h100", "rl", "tiny_kernels", window=(150, 330), engine="vllm",
   note="rollout node: a stuck weight-sync barrier left a CUDA-graph polling kernel spinning; GPU-Util 100%, SM ~1%, "
        "no tokens while the trainer retries")
def _(m):
    def extra(node, s, rng):
        pass

    def stuck(node, s, rng):
        s.paused = True
        for g in s.gpus:
            node.add(g, 150, 330, 1.0, 0.012, 0.0, 0.002, 0.01, pid=s.gpu_pids[0])
    return serving(m, 330, model="policy-7b", rate=6.0, prompt=(600, 0.6), out=(900, 0.8, 8192), mids=[(150, stuck)],
                   extra=extra)


# ============================================================================ host_cpu_contention
@T("hc-verifier-sandboxes-rollout-h100", "rl", "host_cpu_contention", window=(120, 320), engine="vllm",
   note="code-execution verifiers (200 sandboxes) started on the rollout node's cores; the engine's scheduler thread "
        "fights 400 runnable tasks for cores (PSI, run queue, involuntary switches up)")
def _(m):
    return serving(m, 320, model="policy-7b", rate=7.0, prompt=(700, 0.6), out=(700, 0.8, 8192),
                   node_kw=dict(tree_cores=224, others=window_fn(120, 1e9, 20.0, 430.0), base_load=10))


@T("hc-tokenizer-step-same-cpuset-h100x8", "training", "host_cpu_contention", window=(140, 340), engine="trainer",
   n=8, tick=2.0, note="a tokenisation job step was launched inside the same Slurm allocation (12 cores for 8 GPUs); "
                       "the ranks' launch threads and loaders fight for cores, step time 2x")
def _(m):
    return training(m, 340, node_kw=dict(tree_cores=12, others=step(140, 0.0, 14.0)),
                    train_kw=dict(compute_s=1.1, comm_s=0.3, tokens_per_step=8 * 16384, mem_gb=66, slurm="418233",
                                  data_s=0.3))


@T("hc-k8s-quota-cut-tgi-l40s", "serving", "host_cpu_contention", window=(130, 330), engine="tgi", gpu="l40s",
   note="eval TGI pod: a VPA update set its CPU limit to a quarter core; CFS throttling in every period, queue grows")
def _(m):
    return serving(m, 330, kind="tgi", model="qwen2.5-7b", rate=2.0, prompt=(700, 0.6), out=(250, 0.8, 2048),
                   node_kw=dict(tree_cores=16, quota=step(130, None, 0.25)), scrape=5.0,
                   serve_kw=dict(sched_ms=5.0))


@T("hc-harness-tokenizer-pool-sglang-h200-mild", "serving", "host_cpu_contention", window=(150, 360), engine="sglang",
   gpu="h200", note="mild: the eval harness's 40-process tokenizer pool shares the engine's 16 cores; ~25% fewer tokens/s")
def _(m):
    def extra(node, s, rng):
        closed_loop(s, rng, 0, 96, lognorm(900, 0.6, 50, 4000), lognorm(350, 0.8, 8, 2048))
    return serving(m, 360, kind="sglang", model="qwen2.5-7b", rate=0, extra=extra,
                   node_kw=dict(tree_cores=16, others=step(150, 1.0, 22.0)), serve_kw=dict(sched_ms=4.0))


# ============================================================================ input_stall
@T("is-lustre-congestion-sft-h100x8", "training", "input_stall", window=(130, 340), engine="trainer", n=8, tick=2.0,
   note="Lustre OSTs congested by a checkpoint storm from another project; the DataLoader waits, GPUs idle between steps")
def _(m):
    def hooks(node, tr):
        tr.data_mult = step(130, 1.0, 7.0)
    return training(m, 340, hooks=hooks, node_kw=dict(tree_cores=96),
                    train_kw=dict(compute_s=1.0, comm_s=0.3, data_s=0.5, tokens_per_step=8 * 16384, mem_gb=64,
                                  slurm="418977"))


@T("is-lustre-slow-onset-a100x4-mild", "training", "input_stall", window=(150, 400), engine="trainer", gpu="a100-80",
   n=4, tick=2.0, note="mild, slow onset: metadata load on the shared filesystem grows; data wait creeps up to ~25% of steps")
def _(m):
    def hooks(node, tr):
        tr.data_mult = ramp(150, 260, 1.0, 2.6)
    return training(m, 400, hooks=hooks, node_kw=dict(tree_cores=48),
                    train_kw=dict(compute_s=1.6, comm_s=0.4, data_s=1.6, tokens_per_step=4 * 8192, mem_gb=70))


@T("is-image-decode-multimodal-h200x2", "training", "input_stall", window=(140, 330), engine="trainer", gpu="h200", n=2,
   note="multimodal SFT reached a shard of 4k-resolution images; 4 loader workers cannot decode fast enough")
def _(m):
    def hooks(node, tr):
        tr.data_mult = step(140, 1.0, 4.5)
    return training(m, 330, hooks=hooks, node_kw=dict(tree_cores=32),
                    train_kw=dict(compute_s=0.8, comm_s=0.15, data_s=0.45, tokens_per_step=2 * 12288, mem_gb=110))


@T("is-nfs-hiccups-intermittent-b200", "training", "input_stall", window=(120, 330), engine="trainer", gpu="b200",
   note="intermittent: the NFS home server stalls ~10 s out of every 40; the single-GPU DPO run waits on each stall")
def _(m):
    def hooks(node, tr):
        tr.data_mult = lambda t: 25.0 if t >= 120 and (t - 120) % 40 < 10 else 1.0
    return training(m, 330, hooks=hooks, train_kw=dict(compute_s=0.6, comm_s=0.0, data_s=0.3, tokens_per_step=16384,
                                                       mem_gb=150))


# ============================================================================ collective_straggler
@T("cs-hot-gpu5-fsdp-h100x8", "training", "collective_straggler", window=(150, 360), culprit=(5,), engine="trainer",
   n=8, tick=2.0, note="cold-plate flow on GPU 5 dropped; it thermally throttles and the other seven ranks spin in "
                       "all-reduce waiting for it")
def _(m):
    def hooks(node, tr):
        node.r_mult[5] = ramp(90, 140, 1.0, 1.95)
    return training(m, 360, hooks=hooks, node_kw=dict(tree_cores=96),
                    train_kw=dict(compute_s=1.3, comm_s=0.3, tokens_per_step=8 * 16384, mem_gb=70))


@T("cs-degraded-clock-gpu2-h200x4-mild", "training", "collective_straggler", window=(130, 360), culprit=(2,),
   engine="trainer", gpu="h200", n=4, tick=2.0,
   note="mild: GPU 2 reports HW slowdown and runs ~20% slower; the DDP job's step time follows the slow rank")
def _(m):
    def hooks(node, tr):
        node.ceiling[2] = lambda t: (1.0, ()) if t < 130 else (0.78, ("hw slowdown",))
    return training(m, 360, hooks=hooks, node_kw=dict(tree_cores=64),
                    train_kw=dict(compute_s=1.2, comm_s=0.25, tokens_per_step=4 * 16384, mem_gb=120))


@T("cs-noisy-neighbour-rank3-h100x8", "training", "collective_straggler", window=(140, 340), culprit=(3,),
   engine="trainer", n=8, tick=2.0,
   note="a verifier pool pinned onto rank 3's cores; its launch thread gets ~40% of a core and the ring waits for it")
def _(m):
    def hooks(node, tr):
        tr.rank_host = lambda r, t: 0.42 if (r == 3 and t >= 140) else 1.0
    return training(m, 340, hooks=hooks, node_kw=dict(tree_cores=96),
                    train_kw=dict(compute_s=0.9, comm_s=0.25, tokens_per_step=8 * 16384, mem_gb=62, host_frac=0.55))


@T("cs-slow-nic-remote-node-h100x8", "training", "collective_straggler", window=(130, 340), engine="trainer", n=8,
   tick=2.0, note="2-node FSDP job: the other node's NIC renegotiated to a quarter of its speed; every local rank waits "
                  "in the inter-node all-gather (the straggler is remote)")
def _(m):
    def hooks(node, tr):
        tr.comm_mult = step(130, 1.0, 4.0)
    return training(m, 340, hooks=hooks, node_kw=dict(tree_cores=96),
                    train_kw=dict(compute_s=1.2, comm_s=0.5, exposed=0.4, tokens_per_step=16 * 16384, mem_gb=60))


# ============================================================================ kv_pressure
@T("kv-reasoning-outputs-small-pool-h100", "rl", "kv_pressure", window=(130, 330), engine="vllm",
   note="colocated rollout engine runs at gpu_memory_utilization 0.45; the new reasoning prompts generate 6-14k tokens "
        "and the pool overflows: preemptions, recomputation, waiting requests")
def _(m):
    def extra(node, s, rng):
        poisson(s, rng, 130, 330, lambda t: 0.9, lognorm(800, 0.4, 100, 3000), lognorm(9000, 0.35, 3000, 16000))
    return serving(m, 330, model="policy-7b", rate=lambda t: 3.0 if t < 130 else 0.8, prompt=(700, 0.5),
                   out=(700, 0.7, 4096), extra=extra, serve_kw=dict(gpu_mem_util=0.45, max_seqs=256))


@T("kv-sglang-retractions-rollout-h200", "rl", "kv_pressure", window=(120, 330), engine="sglang", gpu="h200",
   note="SGLang rollout worker: a curriculum switch to long chain-of-thought tasks; the token pool fills and the "
        "scheduler retracts running requests again and again")
def _(m):
    def extra(node, s, rng):
        poisson(s, rng, 120, 330, lambda t: 1.2, lognorm(1200, 0.4, 100, 4000), lognorm(10000, 0.3, 4000, 20000), n=1)
    return serving(m, 330, kind="sglang", model="qwen3-14b", rate=lambda t: 4.0 if t < 120 else 0.5,
                   out=(800, 0.6, 4096), extra=extra, serve_kw=dict(gpu_mem_util=0.6, max_seqs=256))


@T("kv-demo-long-chats-a100-mild", "serving", "kv_pressure", window=(140, 330), engine="vllm", gpu="a100-40",
   tick=2.0, note="mild: staff started long multi-turn sessions on the 40 GB demo box; occasional preemptions, "
                  "queue waits of a few seconds")
def _(m):
    def extra(node, s, rng):
        poisson(s, rng, 140, 330, lambda t: 0.6, lognorm(5000, 0.4, 1000, 12000), lognorm(1500, 0.5, 200, 4000))
    return serving(m, 330, model="llama3-8b", rate=2.0, extra=extra, scrape=5.0)


# ============================================================================ gpu_shared
@T("gs-notebook-on-rollout-gpu1-h100x2", "rl", "gpu_shared", window=(140, 340), culprit=(1,), engine="vllm", n=2,
   note="a research notebook was started on GPU 1 ('it looked free'); its training loop time-slices with the TP=2 "
        "rollout engine, both ranks wait")
def _(m):
    def extra(node, s, rng):
        other_proc(node, 1, 55123, "python3", "/home/bob/.conda/envs/nb/bin/python -m ipykernel_launcher -f kernel-7f1.json",
                   "bob", 140, 340, 22, 0.9, 0.75, 0.45, 0.3)
        s.gpu_slow = step(140, 1.0, 1.9)
    return serving(m, 340, model="qwen2.5-32b", rate=4.0, prompt=(700, 0.6), out=(600, 0.8, 8192), extra=extra)


@T("gs-reward-model-same-gpu-h200", "rl", "gpu_shared", window=(130, 330), engine="vllm", gpu="h200",
   note="Ray placement bug put the reward model actor on the rollout engine's GPU; the two contexts time-slice, "
        "generation ~40% slower")
def _(m):
    def extra(node, s, rng):
        other_proc(node, 0, 61877, "ray::RewardModelActor", "ray::RewardModelActor.score", "svc-rl", 130, 330, 18,
                   0.95, 0.85, 0.5, 0.25, period=3.0, on=2.0)
        s.gpu_slow = lambda t: 1.0 if t < 130 else (2.0 if (t - 130) % 3.0 < 2.0 else 1.0)
    return serving(m, 330, model="policy-7b", rate=6.0, prompt=(700, 0.6), out=(800, 0.8, 8192), extra=extra,
                   serve_kw=dict(gpu_mem_util=0.75))


@T("gs-second-container-timeslice-l40s", "serving", "gpu_shared", window=(150, 340), engine="llamacpp", gpu="l40s",
   note="a second container (a batch embedding job) was scheduled onto the eval L40S with time-slicing")
def _(m):
    def extra(node, s, rng):
        other_proc(node, 0, 70412, "python", "python embed_corpus.py --model bge-large --batch 256", "carol", 150, 340,
                   9, 0.9, 0.8, 0.5, 0.35)
        s.gpu_slow = step(150, 1.0, 1.8)
    return serving(m, 340, kind="llamacpp", model="qwen2.5-7b", rate=0.5, prompt=(600, 0.6), out=(300, 0.7, 2048),
                   extra=extra, serve_kw=dict(max_seqs=8, graphs=True), scrape=5.0)


# ============================================================================ spec_decode_rejected
@T("sd-draft-stale-after-policy-update-h100", "serving", "spec_decode_rejected", window=(150, 340), engine="vllm",
   note="demo endpoint serves the new policy checkpoint but still drafts with the old 1B draft model: acceptance "
        "0.75 -> 0.25, each token costs ~2x")
def _(m):
    return serving(m, 340, model="policy-7b", rate=2.0, prompt=(700, 0.6), out=(500, 0.8, 4096),
                   serve_kw=dict(spec=Spec(4, step(150, 0.76, 0.25), "draft", "llama3.2-1b")))


@T("sd-eagle-head-mismatch-h200-mild", "serving", "spec_decode_rejected", window=(140, 330), engine="vllm", gpu="h200",
   note="mild: EAGLE head trained on the previous SFT mix; after the update acceptance drops 0.68 -> 0.45")
def _(m):
    return serving(m, 330, model="llama3-8b", rate=3.0, prompt=(800, 0.6), out=(450, 0.8, 4096),
                   serve_kw=dict(spec=Spec(3, step(140, 0.68, 0.45), "eagle")))


@T("sd-llamacpp-draft-mismatch-l40s", "serving", "spec_decode_rejected", window=(130, 330), engine="llamacpp",
   gpu="l40s", note="llama-server with a draft model: the main model was swapped for the RL checkpoint, the draft was not; "
                    "acceptance collapses")
def _(m):
    return serving(m, 330, kind="llamacpp", model="qwen2.5-7b", rate=0.4, prompt=(500, 0.6), out=(400, 0.6, 2048),
                   scrape=3.0, serve_kw=dict(max_seqs=4, spec=Spec(8, step(130, 0.7, 0.18), "draft", "qwen2.5-0.5b")))


# ============================================================================ oversized_request
@T("ov-n8-logprobs20-requests-h100", "serving", "oversized_request", window=(140, 260), engine="vllm",
   note="an analysis script sent n=8, logprobs=20 requests with 2k max_tokens; sampling and logprob processing for 8 "
        "sequences x 20 over 128k vocab stalls every step, all users' ITL 3x")
def _(m):
    def extra(node, s, rng):
        for i in range(6):
            t = 140 + i * 18
            for j in range(8):
                s.submit(Req(t, 600, int(rng.uniform(1500, 2000)), n=8, shared=600 if j else 0, cached=600 if j else 0,
                             host_ms=9.0, gpu_ms=0.6, max_tokens=2048))
    return serving(m, 300, rate=4.0, extra=extra)


@T("ov-128k-needle-fills-pool-h200", "serving", "oversized_request", window=(130, 230), engine="vllm", gpu="h200",
   note="a benchmark item with a 128k-token prompt landed on the shared eval server: its prefill holds every step for "
        "tens of seconds and its KV takes most of the pool, short prompts queue behind it")
def _(m):
    def extra(node, s, rng):
        s.submit(Req(130, 127000, 1200, max_tokens=4096))
    return serving(m, 330, model="qwen3-8b", rate=5.0, extra=extra,
                   serve_kw=dict(gpu_mem_util=0.55, max_batched=8192))


@T("ov-beam-search-32-a100x2-mild", "serving", "oversized_request", window=(150, 300), engine="vllm", gpu="a100-80",
   n=2, tick=2.0, note="mild: one request with beam width 32 and max_tokens 6000 (a constrained-decoding experiment) "
                       "on the shared A100 endpoint; ITL p99 ~2x while it runs")
def _(m):
    def extra(node, s, rng):
        for j in range(32):
            s.submit(Req(150, 1500, 5000, n=32, shared=1500 if j else 0, cached=1500 if j else 0, host_ms=0.5,
                         max_tokens=6000))
    return serving(m, 330, model="qwen2.5-32b", rate=2.0, extra=extra, scrape=5.0)


@T("ov-n64-group-on-demo-sglang-b200", "serving", "oversized_request", window=(120, 260), engine="sglang", gpu="b200",
   tick=0.5, note="someone pointed a GRPO smoke test at the demo endpoint: one prompt with n=64 samples and 16k max "
                  "tokens; 64 long sequences with logprobs occupy the batch")
def _(m):
    def extra(node, s, rng):
        for j in range(64):
            s.submit(Req(120, 2000, int(rng.uniform(9000, 16000)), n=64, shared=2000 if j else 0,
                         cached=2000 if j else 0, host_ms=0.7, max_tokens=16384))
    return serving(m, 330, kind="sglang", model="qwen3-8b", rate=4.0, extra=extra, scrape=1.0,
                   serve_kw=dict(gpu_mem_util=0.5))


# ============================================================================ host_launch_jitter
@T("hj-nic-irqs-on-launch-core-h100", "training", "host_launch_jitter", window=(140, 340), engine="trainer",
   note="irqbalance moved the InfiniBand NIC's interrupts onto the core running the trainer's launch thread: launch "
        "calls wait behind softirqs, the GPU queue drains")
def _(m):
    def hooks(node, tr):
        tr.rank_host = lambda r, t: 0.62 if t >= 140 else 1.0
    return training(m, 340, hooks=hooks, node_kw=dict(tree_cores=16, ebpf=True, irq=step(140, 5.0, 6000.0)),
                    train_kw=dict(compute_s=0.5, comm_s=0.0, tokens_per_step=16384, mem_gb=50, host_frac=0.7,
                                  kernels_per_step=3500))


@T("hj-profiler-agent-eager-vllm-h200", "serving", "host_launch_jitter", window=(150, 340), engine="vllm", gpu="h200",
   note="a fleet profiling agent began sampling the eager-mode eval engine at high frequency; its launch thread is "
        "preempted thousands of times a second, launch p99 into milliseconds")
def _(m):
    def extra(node, s, rng):
        s.jitter = lambda t: rng.expovariate(1 / 2.5) if t >= 150 else 0.0
    return serving(m, 340, model="llama3-8b", rate=3.0, extra=extra, serve_kw=dict(graphs=False),
                   node_kw=dict(ebpf=True, irq=step(150, 5.0, 4500.0)))


@T("hj-rt-thread-launch-core-tp2-b200-mild", "serving", "host_launch_jitter", window=(130, 330), engine="vllm",
   gpu="b200", n=2, tick=0.5, note="mild: a real-time priority telemetry thread shares the launch core; sporadic "
                                   "millisecond launch stalls, ITL p99 ~1.6x")
def _(m):
    def extra(node, s, rng):
        s.jitter = lambda t: (rng.expovariate(1 / 1.2) if rng.random() < 0.5 else 0.0) if t >= 130 else 0.0
    return serving(m, 330, model="qwen2.5-32b", rate=5.0, extra=extra, scrape=1.0,
                   node_kw=dict(ebpf=True, irq=step(130, 5.0, 1500.0)), serve_kw=dict(graphs=False))


# ============================================================================ healthy look-alikes
def rl_colocated(m, dur, engine_kind, model, prompts, n, out, train_steps, compute_s, comm_s):
    node = mk(m, dur, tree_cores=96)
    s = Serve(node, engine_kind, model, tuple(range(m["n"])), scrape_s=2.0, gpu_mem_util=0.55, pin=False)
    tr = Train(node, range(m["n"]), compute_s=compute_s, comm_s=comm_s, tokens_per_step=m["n"] * 16384, mem_gb=4,
               pid=9100, scrape_s=None, cmd="python3 -m verl.trainer.main_ppo algorithm=grpo", pin=True)
    node.launch_pid = s.gpu_pids[0]
    rl = RLLoop(s, tr, prompts, n, lognorm(600, 0.5, 64, 3000), out, train_steps)
    rl.run(dur)
    return node


@T("ok-grpo-colocated-phases-h100x8", "lookalike", None, engine="vllm", n=8, tick=2.0,
   note="healthy: GRPO with vLLM colocated: rollout, engine sleeps, 8 training steps, weight sync, wake; GPU readings "
        "swing every phase")
def _(m):
    return rl_colocated(m, 420, "vllm", "policy-7b", 64, 8, lognorm(1800, 0.8, 50, 8000), 6, 2.2, 0.5)


@T("ok-rollout-long-tail-h200", "lookalike", None, engine="sglang", gpu="h200",
   note="healthy: separate rollout node; each batch of 48x8 samples ends with a few long generations finishing while "
        "the batch empties, then the node idles until the next weights arrive")
def _(m):
    node = mk(m, 420)
    s = Serve(node, "sglang", "policy-7b", (0,), scrape_s=2.0)
    rng = node.rng
    t = 5.0
    while t < 420:
        for i in range(48):
            p = int(rng.uniform(300, 1500))
            for j in range(8):
                s.submit(Req(t, p, int(min(12000, rng.lognormvariate(math.log(1500), 0.9))), n=8,
                             shared=p if j else 0, cached=p if j else 0, max_tokens=12288))
        s.advance(t + 1)
        while not s.idle() and s.t < 420:
            s.advance(s.t + 1)
        t = s.t + 25  # trainer step + weight broadcast elsewhere
        for g in s.gpus:
            node.add(g, s.t + 20, s.t + 23, 0.8, 0.1, 0.0, 0.3, pid=s.gpu_pids[0])
            node.link(g, s.t + 20, nvlink_bytes=0, pcie_bytes=s.W)
        s.advance(t)
    return node


@T("ok-engine-wakes-from-sleep-h100", "lookalike", None, engine="vllm",
   note="healthy: the colocated engine sleeps (weights offloaded, pool freed) then wakes and takes the rollout traffic")
def _(m):
    node = mk(m, 300)
    s = Serve(node, "vllm", "policy-7b", (0,), scrape_s=2.0)
    s.sleep(0.0)
    s.advance(110)
    s.wake(110, 2.0)
    poisson(s, node.rng, 112, 300, lambda t: 6.0, lognorm(700, 0.6, 32), lognorm(600, 0.8, 8, 8192))
    s.advance(300)
    return node


@T("ok-eval-harness-finishes-l40s", "lookalike", None, engine="vllm", gpu="l40s",
   note="healthy: the MMLU-style harness sends its last prompts; running requests fall to zero and the GPU goes idle")
def _(m):
    def extra(node, s, rng):
        closed_loop(s, rng, 0, 32, lognorm(600, 0.5, 50, 3000), lognorm(40, 0.8, 1, 400), until=190)
    return serving(m, 330, model="qwen2.5-7b", rate=0, extra=extra, node_kw=dict(tree_cores=12))


@T("ok-new-benchmark-longer-prompts-h100", "lookalike", None, engine="vllm",
   note="healthy: the harness moved to a benchmark with 3-4k-token prompts; TTFT and prompt tokens/s rise, decode "
        "speed normal, no queue")
def _(m):
    def extra(node, s, rng):
        closed_loop(s, rng, 0, 24, lognorm(400, 0.4, 50, 2000), lognorm(200, 0.6, 8, 1024), until=150)
        closed_loop(s, rng, 152, 24, lognorm(3500, 0.2, 1500, 6000), lognorm(200, 0.6, 8, 1024))
    return serving(m, 330, model="llama3-8b", rate=0, extra=extra)


@T("ok-sft-checkpoint-and-eval-h100x8", "lookalike", None, engine="trainer", n=8, tick=2.0,
   note="healthy: SFT with a checkpoint to Lustre every 60 steps and an eval pass every 90; GPU-Util dips are phases")
def _(m):
    return training(m, 420, node_kw=dict(tree_cores=96),
                    train_kw=dict(compute_s=1.0, comm_s=0.3, tokens_per_step=8 * 16384, mem_gb=70, ckpt_every=60,
                                  ckpt_s=25, eval_every=90, eval_s=30))


@T("ok-always-power-capped-h100x4", "lookalike", None, engine="trainer", n=4, tick=1.0,
   note="healthy: a node whose GPUs are capped at 500 W by policy since install; clocks always below max, "
        "'power cap' always set, steady step time")
def _(m):
    return training(m, 330, node_kw=dict(tree_cores=48, plimit=500.0),
                    train_kw=dict(compute_s=1.2, comm_s=0.3, tokens_per_step=4 * 16384, mem_gb=72))


@T("ok-collectives-heavy-pcie-l40s-x4", "lookalike", None, engine="trainer", gpu="l40s", n=4, tick=2.0,
   note="healthy: DDP over PCIe on the L40S box; all-reduce is ~40% of every step, always")
def _(m):
    return training(m, 330, node_kw=dict(tree_cores=32),
                    train_kw=dict(compute_s=0.9, comm_s=1.2, exposed=0.6, tokens_per_step=4 * 4096, mem_gb=40))


@T("ok-offline-batch-saturated-h200x2", "lookalike", None, engine="vllm", gpu="h200", n=2,
   note="healthy: offline batch inference over 6000 prompts keeps the engine saturated; a steady backlog drains")
def _(m):
    def extra(node, s, rng):
        for i in range(3000):
            s.submit(Req(1 + i * 0.11, int(rng.uniform(300, 1500)), int(rng.uniform(100, 700)), max_tokens=1024))
    return serving(m, 330, model="qwen2.5-32b", rate=0, extra=extra, serve_kw=dict(max_seqs=256))


@T("ok-prefix-cache-shared-system-prompt-sglang-h100", "lookalike", None, engine="sglang",
   note="healthy: every agent request shares a 6k-token system prompt; the radix cache serves it, prompt tokens/s "
        "high with little prefill compute")
def _(m):
    def extra(node, s, rng):
        orig = s.submit

        def sub(r):
            r.cached = r.shared = min(r.prompt - 10, 6000)
            orig(r)
        s.submit = sub
        poisson(s, rng, 0, 330, lambda t: 4.0, lognorm(6800, 0.1, 6100, 9000), lognorm(300, 0.7, 8, 2048))
    return serving(m, 330, kind="sglang", model="qwen2.5-7b", rate=0, extra=extra)


@T("ok-demo-morning-ramp-b200", "lookalike", None, engine="vllm", gpu="b200", tick=0.5,
   note="healthy: staff arrive; demo traffic ramps 1 -> 12 req/s over five minutes, tokens/s follow demand")
def _(m):
    return serving(m, 330, model="qwen3-14b", rate=ramp(30, 300, 1.0, 12.0), scrape=1.0)


@T("ok-spec-decode-steady-h100", "lookalike", None, engine="vllm",
   note="healthy: n-gram speculative decoding on the code-edit endpoint, acceptance steady ~0.6")
def _(m):
    return serving(m, 330, model="qwen2.5-7b", rate=3.0, prompt=(1500, 0.5), out=(400, 0.7, 4096),
                   serve_kw=dict(spec=Spec(4, lambda t: 0.6, "ngram")))


@T("ok-tp8-70b-steady-h100x8", "lookalike", None, engine="vllm", n=8, tick=2.0,
   note="healthy: the 70B judge on TP=8 serving the eval fleet at steady load")
def _(m):
    return serving(m, 330, model="llama3-70b", rate=8.0, prompt=(1200, 0.7), out=(300, 0.8, 2048), scrape=5.0)


@T("ok-sft-steady-a100-single", "lookalike", None, engine="trainer", gpu="a100-80",
   note="healthy: a single-GPU LoRA SFT on an A100, steady")
def _(m):
    return training(m, 300, train_kw=dict(compute_s=0.7, comm_s=0.0, tokens_per_step=8192, mem_gb=60))


@T("ok-llamacpp-single-user-bursty-l40s", "lookalike", None, engine="llamacpp", gpu="l40s",
   note="healthy: one researcher chatting with a GGUF model; bursts of generation, idle between")
def _(m):
    return serving(m, 330, kind="llamacpp", model="qwen2.5-7b", rate=0.08, prompt=(400, 0.8), out=(350, 0.6, 2048),
                   scrape=5.0, serve_kw=dict(max_seqs=4))


@T("ok-tgi-steady-a100", "lookalike", None, engine="tgi", gpu="a100-80", tick=2.0,
   note="healthy: TGI endpoint for the tokenizer team, steady moderate load")
def _(m):
    return serving(m, 330, kind="tgi", model="llama3-8b", rate=2.5, scrape=5.0)


@T("ok-training-job-ends-h200x4", "lookalike", None, engine="trainer", gpu="h200", n=4, tick=2.0,
   note="healthy: the DPO job finishes its last step, writes the final checkpoint and exits; GPUs idle")
def _(m):
    node = mk(m, 330, tree_cores=64)
    tr = Train(node, range(4), compute_s=1.0, comm_s=0.3, tokens_per_step=4 * 16384, mem_gb=100)
    tr.run(200)
    tr._pause(tr.t, 25, "ckpt")
    end = tr.t
    for i, g in enumerate(tr.gpus):
        node.set_mem(g, end + 3, tr.pids[i], 0)
    for p in node.procs:
        p.t_end = min(p.t_end, end + 3)
    return node


@T("ok-engine-startup-loading-h100", "lookalike", None, engine="vllm",
   note="healthy: a vLLM server starting: weights load from Lustre, CUDA graphs are captured, then traffic arrives")
def _(m):
    node = mk(m, 300)
    s = Serve(node, "vllm", "qwen3-14b", (0,), scrape_s=2.0)
    for i, g in enumerate(s.gpus):
        node.mem_events[g] = [(0.0, s.gpu_pids[i], 0.5 * GiB), (40.0, s.gpu_pids[i], s.W),
                              (70.0, s.gpu_pids[i], s.mem_engine)]
        node.add(g, 10, 40, 0.15, 0.02, 0.0, 0.1, pid=s.gpu_pids[i])
        node.add(g, 40, 70, 0.7, 0.3, 0.1, 0.2, pid=s.gpu_pids[i])
    s.rec.next = 75.0
    s.t = 75.0
    poisson(s, node.rng, 80, 300, lambda t: 5.0, lognorm(800, 0.7, 16), lognorm(350, 0.9, 4, 4096))
    s.advance(300)
    return node


@T("ok-pipeline-parallel-bubbles-h100x4", "lookalike", None, engine="trainer", n=4, tick=1.0,
   note="healthy: Megatron PP=4 with few micro-batches; every stage idles in the pipeline bubble, GPU-Util ~65% always")
def _(m):
    def hooks(node, tr):
        tr.rank_mult = lambda r, t: 1.0
    return training(m, 330, hooks=hooks, node_kw=dict(tree_cores=48),
                    train_kw=dict(compute_s=1.0, comm_s=1.1, exposed=0.5, tokens_per_step=4 * 8192, mem_gb=65,
                                  sm=0.88))


@T("ok-rollout-node-weight-sync-b200x4", "lookalike", None, engine="vllm", gpu="b200", n=4, tick=1.0,
   note="healthy: dedicated rollout node; every ~60 s generation pauses for a NCCL weight broadcast from the trainer")
def _(m):
    def pause(ts):
        def f(node, s, rng):
            s.paused = True
            for i, g in enumerate(s.gpus):
                node.add(g, ts, ts + 6, 0.95, 0.15, 0.0, 0.4, pid=s.gpu_pids[i])
                node.link(g, ts, nvlink_bytes=s.W * 3)
        return f

    def resume(node, s, rng):
        s.paused = False
    mids = []
    for ts in (70, 130, 190, 250, 310):
        mids += [(ts, pause(ts)), (ts + 6, resume)]
    return serving(m, 330, model="qwen2.5-32b", rate=5.0, prompt=(800, 0.6), out=(1200, 0.8, 8192), mids=mids)


@T("ok-dpo-steady-a100-40-x2", "lookalike", None, engine="none", gpu="a100-40", n=2, tick=2.0,
   note="healthy: DPO on two A100-40GB with activation checkpointing; no metrics endpoint")
def _(m):
    return training(m, 330, node_kw=dict(tree_cores=32),
                    train_kw=dict(compute_s=1.8, comm_s=0.3, tokens_per_step=2 * 4096, mem_gb=37, scrape_s=None))


@T("ok-high-kv-usage-no-preemption-h200", "lookalike", None, engine="vllm", gpu="h200",
   note="healthy: long-document QA keeps the KV pool ~80% full with a sized pool; no preemptions, no queue")
def _(m):
    def extra(node, s, rng):
        closed_loop(s, rng, 0, 14, lognorm(20000, 0.15, 12000, 28000), lognorm(300, 0.5, 20, 1000))
    return serving(m, 330, model="qwen3-8b", rate=0, extra=extra, serve_kw=dict(gpu_mem_util=0.3))
