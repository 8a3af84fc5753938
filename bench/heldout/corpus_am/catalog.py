"""One builder per trace, with its truth.  Every reading comes from the simulation; a fault
changes the physics (a knob of the workload, host or board) inside its window."""
from __future__ import annotations

import math

from corpus_am import Truth
from corpus_am.common import GiB, SPECS, seed_of
from corpus_am.runner import Ctx, run_serving
from corpus_am.serving import Cfg, Knobs, Model, Req, Serve, Stats, arrivals, lognorm
from corpus_am.training import Train, run_training

BUILDERS: dict = {}


def reg(name, family, cause):
    def deco(fn):
        BUILDERS[name] = (family, cause, fn)
        return fn
    return deco


def inside(w, on, off=None):
    """Piecewise: `on` inside the window, `off` outside (values or callables of t)."""
    a, b = w
    return lambda t: (on(t) if callable(on) else on) if a <= t < b else (
        (off(t) if callable(off) else off) if off is not None else None)


def ramp(w, lo, hi, rise=30.0):
    """lo outside; inside, moves to hi over `rise` seconds (slow onset), back after."""
    a, b = w
    def f(t):
        if t < a or t >= b + rise:
            return lo
        if t < b:
            return lo + (hi - lo) * min(1.0, (t - a) / rise)
        return hi + (lo - hi) * min(1.0, (t - b) / rise)
    return f


# ------------------------------------------------------------------ models
VLM7 = Model("Qwen/Qwen2.5-VL-7B-Instruct", 8.3e9, 16.6e9, 57344, 28, 3584)
L8 = Model("meta-llama/Llama-3.1-8B-Instruct", 8.0e9, 16.1e9, 131072, 32, 4096, 128256)
R32 = Model("Qwen/QwQ-32B", 32.5e9, 65e9, 262144, 64, 5120)
L70Q = Model("am-internal/vla-planner-70b-awq-int4", 70e9, 39e9, 327680, 80, 8192, 128256)
GARAGE8 = Model("llama-3.1-8b-instruct-q4_k_m.gguf", 8.0e9, 4.9e9, 131072, 32, 4096, 128256)
M7 = Model("mistralai/Mistral-7B-Instruct-v0.2", 7.2e9, 14.5e9, 131072, 32, 4096, 32000)
MEMB = None


def truth(name, cause, family, w, engine, cx, note, culprit=None):
    return Truth(name=name, family=family, cause=cause, culprit_gpus=culprit,
                 window=((cx.start + w[0], cx.start + w[1]) if w else None), engine=engine,
                 gpus=len(cx.gpus), gpu_model=cx.spec.name, tick_s=cx.tick, note=note,
                 start_wall_s=cx.frames[0].time_wall_s)


def serve(name, *, gpu, ngpu=1, tick=1.0, dur=420.0, model, kind="vllm", util=0.9, blocks=None,
          rate, prompt, out, bursty=0.0, extra=(), knobs=None, scrape=5.0, cfg=None,
          port=8000, cx_kw=None, **run_kw):
    cx = Ctx(name, gpu, ngpu, tick, dur, **(cx_kw or {}))
    spec = SPECS[gpu]
    c = Cfg(kind=kind, tp=ngpu, **(cfg or {}))
    mem = spec.mem_bytes * util
    if blocks is None:
        pool = mem - model.weight_bytes - 2.5 * GiB - 0.6 * GiB
        blocks = int(pool // (c.block * model.kv_tok))
    c.blocks = blocks
    rng = cx.rng
    reqs = arrivals(rng, 0.0, dur, rate, prompt, out, bursty=bursty)
    reqs += [r for r in extra]
    sim = Serve(model, c, spec, reqs, cx.accs[0], rng, knobs or Knobs())
    seed = seed_of(name)
    url = f"http://10.{40 + seed % 50}.{seed // 50 % 250}.{seed // 12500 % 250}:{port}/metrics"
    if kind == "vllm":
        labels = {"_kind": "vllm", "block_size": str(c.block), "cache_dtype": "auto",
                  "enable_prefix_caching": "True", "gpu_memory_utilization": str(util),
                  "kv_cache_memory_bytes": str(int(blocks * c.block * model.kv_tok)),
                  "kv_cache_size_tokens": str(blocks * c.block), "num_cpu_blocks": "None",
                  "num_gpu_blocks": str(blocks), "sliding_window": "None"}
        cmd = (f"python3 -m vllm.entrypoints.openai.api_server --model {model.name} --port {port} "
               f"--gpu-memory-utilization {util} --max-num-seqs {c.max_seqs} --max-num-batched-tokens {c.budget}"
               + (f" --tensor-parallel-size {ngpu}" if ngpu > 1 else "")
               + ("" if c.chunked else " --no-enable-chunked-prefill")
               + ("" if c.graphs else " --enforce-eager")
               + (f" --speculative-config '{{\"num_speculative_tokens\": {c.spec_k}}}'" if c.spec_k else ""))
    elif kind == "sglang":
        labels = {"_kind": "sglang", "pool_tokens": blocks * c.block}
        cmd = f"python3 -m sglang.launch_server --model-path {model.name} --port {port} --enable-metrics --mem-fraction-static {util}" + (f" --tp {ngpu}" if ngpu > 1 else "")
    elif kind == "llamacpp":
        labels = {"_kind": "llamacpp"}
        cmd = f"/opt/llama.cpp/build/bin/llama-server -m /models/{model.name} --port {port} --metrics -ngl 99 -np {c.max_seqs} -c {blocks * c.block}"
    else:
        labels = {"_kind": "tgi"}
        cmd = f"text-generation-launcher --model-id {model.name} --port {port} --max-batch-total-tokens {blocks * c.block}"
    frames = run_serving(cx, sim, url=url, model_name=model.name, cfg_labels=labels, scrape=scrape,
                         mem_engine=mem if kind in ("vllm", "sglang") else model.weight_bytes + blocks * c.block * model.kv_tok + 1.2 * GiB,
                         cmd=cmd, fresh_stats=lambda: Stats(kind, c.spec_k > 0), **run_kw)
    return cx, sim


def train(name, *, gpu, ngpu, tick=1.0, dur=420.0, cmd, cx_kw=None, **kw):
    cx = Ctx(name, gpu, ngpu, tick, dur, **(cx_kw or {}))
    tr_kw = {k: v for k, v in kw.items() if k in Train.__dataclass_fields__}
    run_kw = {k: v for k, v in kw.items() if k not in Train.__dataclass_fields__}
    seed = seed_of(name)
    if run_kw.get("exports", True) and "url" not in run_kw:
        run_kw["url"] = f"http://10.{60 + seed % 40}.{seed // 40 % 250}.{seed // 10000 % 250}:9400/metrics"
    run_training(cx, Train(**tr_kw), cmd=cmd, **run_kw)
    return cx


P = "perception/"
BEV = "python -m bev.train --config configs/bev_occ_8cam.yaml"
VLA = "python -m vla.pretrain --fsdp --tp 2 --config vla_3b.yaml"


# ================================================================== memory_bandwidth
@reg("vlm-long-context-decode-h200", "serving", "memory_bandwidth")
def _():
    n, w = "vlm-long-context-decode-h200", (120.0, 260.0)
    def rate(t):
        return 2.5
    long = lambda t: w[0] <= t < w[1]
    # inside the window the batch lane re-labels whole drives: a 60k-token shared scenario context
    # (prefix-cached) per request, so each decode step reads several times more KV
    reqs = []
    import random
    rg = random.Random(seed_of(n) + 1)
    t = w[0]
    while t < w[1]:
        t += rg.expovariate(1.2)
        reqs.append(Req(t, int(60000 * rg.uniform(0.9, 1.1)), int(rg.uniform(300, 700)), hit=0.985))
    cx, _ = serve(n, gpu="H200", model=VLM7, rate=rate, prompt=lognorm(1500, 0.5, 200, 12000),
                  out=lognorm(180, 0.6, 8, 1500), extra=reqs, cfg=dict(prefix_hit=0.2, max_seqs=128),
                  knobs=None, scrape=5.0, dur=400)
    # the long requests' context is a cached prefix: mark them so
    return truth(n, "memory_bandwidth", "serving", w, "vllm", cx,
                 "Scenario lane started whole-drive re-labelling: 60k-token cached contexts, decode now "
                 "reads several GB of KV per step; DRAM pinned, tokens/s halved, no preemption."), cx.frames


@reg("int4-dequant-fallback-h100", "serving", "memory_bandwidth")
def _():
    n, w = "int4-dequant-fallback-h100", (150.0, 300.0)
    rate = lambda t: 1.3 if t < w[0] else 1.8
    # above batch 64 the AWQ/Marlin path falls back to dequantise-to-bf16 + GEMM: weights are
    # read as int4 and written/read again as bf16 each step (about 3.5x the HBM bytes)
    knobs = Knobs(bw_factor=lambda t: 3.6 if w[0] <= t < w[1] else 1.0)
    cx, _ = serve(n, gpu="H100", model=L70Q, rate=rate, prompt=lognorm(500, 0.6), out=lognorm(500, 0.5),
                  knobs=knobs, cfg=dict(max_seqs=192), scrape=2.0, tick=1.0)
    return truth(n, "memory_bandwidth", "serving", w, "vllm", cx,
                 "INT4 VLA planner: past batch 64 the quant kernel falls back to a dequantise path; DRAM "
                 "active ~90%, ITL up ~2x, tensor activity down."), cx.frames


@reg("bev-voxel-scatter-dense-h100x8", "training", "memory_bandwidth")
def _():
    n, w = "bev-voxel-scatter-dense-h100x8", (110.0, 330.0)
    cx = train(n, gpu="H100", ngpu=8, dur=420, cmd=BEV, compute_s=0.62, mem_frac=0.35, dram=0.4,
               dram_boost=lambda t: 1.9 if w[0] <= t < w[1] else 1.0, workers=10, decode_s=3.0,
               batch=4, scrape=15.0)
    return truth(n, "memory_bandwidth", "training", w, "trainer", cx,
                 "Mild: a config change switched the lidar voxel scatter to a dense BEV grid; step "
                 "time +30%, DRAM activity up on all 8 ranks."), cx.frames


@reg("vla-optimizer-unfused-h200x4", "training", "memory_bandwidth")
def _():
    n, w = "vla-optimizer-unfused-h200x4", (100.0, 300.0)
    cx = train(n, gpu="H200", ngpu=4, dur=400, cmd=VLA, compute_s=0.9, opt_s=0.05, workers=6, decode_s=1.5,
               phases=lambda t: {"opt_s": 0.75, "opt_dram": 0.93} if w[0] <= t < w[1] else {},
               tokens_per_sample=4096, batch=8, exports=False)
    return truth(n, "memory_bandwidth", "training", w, "none", cx,
                 "After a resume the fused AdamW was off (foreach=False, fp32 master weights): the "
                 "optimizer step streams the states from HBM, ~0.75 s per step at DRAM ~93%."), cx.frames


# ================================================================== throttling
@reg("hot-aisle-thermal-h100x8", "training", "throttling")
def _():
    n, w = "hot-aisle-thermal-h100x8", (100.0, 400.0)
    def hook(t, gpus):
        amb = ramp(w, 27.0, 46.0, rise=60.0)(t)
        for g in gpus:
            g.t_amb = amb + (g.index % 3)
    cx = train(n, gpu="H100", ngpu=8, dur=480, cmd=BEV, compute_s=0.55, workers=12, decode_s=2.5,
               gpu_hook=hook, scrape=10.0, cx_kw=dict(t_amb=27.0))
    a = next((f.time_wall_s - cx.start for f in cx.frames if any("thermal (sw)" in g.throttle for g in f.gpus)), w[0])
    return truth(n, "throttling", "training", (a - 5, w[1] + 30), "trainer", cx,
                 "CRAC unit failed in aisle 4: inlet temperature climbed over a minute, all 8 GPUs hit "
                 "thermal slowdown together, clocks down, steps slower (slow onset)."), cx.frames


@reg("workstation-fan-failing-a6000", "workstation", "throttling")
def _():
    n, w = "workstation-fan-failing-a6000", (120.0, 420.0)
    def hook(t, gpus):
        gpus[0].fan_fail = 0.55 if t >= w[0] else 1.0
    cx = train(n, gpu="A6000", ngpu=1, dur=480, tick=2.0, cmd="python finetune_grasp_policy.py --bs 64",
               compute_s=0.35, workers=6, decode_s=0.6, exports=False, gpu_hook=hook,
               cx_kw=dict(cpus=16, t_amb=30.0))
    a = next((f.time_wall_s - cx.start for f in cx.frames if f.gpus[0].throttle and "thermal (sw)" in f.gpus[0].throttle), w[0] + 60)
    return truth(n, "throttling", "workstation", (a - 5, w[1] + 30), "none", cx,
                 "Mild: a bearing in the A6000's blower failing: fan tops out low, the card heats to "
                 "slowdown and the grasp-policy fine-tune runs ~25% slower."), cx.frames


@reg("rack-power-brake-l40s-x8", "simulation", "throttling")
def _():
    n, w = "rack-power-brake-l40s-x8", (130.0, 290.0)
    def hook(t, gpus):
        for g in gpus:
            g.brake = 0.58 if w[0] <= t < w[1] else None
    cx = train(n, gpu="L40S", ngpu=8, dur=420, cmd="python -m simlab.render_batch --scenes nightly_rain",
               compute_s=0.25, mem_frac=0.15, sm=0.8, ten=0.2, dram=0.3, workers=4, decode_s=0.3,
               grad_bytes=0, exports=False, gpu_hook=hook)
    return truth(n, "throttling", "simulation", w, "none", cx,
                 "Rack PDU over budget when every L40S in the sim rack rendered at once: the BMC asserted "
                 "power brake on all 8, clocks ~58%, render batches slower."), cx.frames


@reg("power-limit-lowered-vla-h200", "serving", "throttling")
def _():
    n, w = "power-limit-lowered-vla-h200", (140.0, 420.0)
    def hook(t, gpus):
        gpus[0].power_limit = 430.0 if t >= w[0] else 700.0
    cx, _ = serve(n, gpu="H200", model=R32, rate=lambda t: 1.0, prompt=lognorm(2000, 0.6),
                  out=lognorm(700, 0.6), gpu_hook=hook, cfg=dict(budget=8192, max_seqs=128), dur=480, scrape=5.0)
    return truth(n, "throttling", "serving", (w[0], w[1]), "vllm", cx,
                 "Mild: an admin's power-capping script set 430 W on the triage server's H200; power "
                 "cap active, SM clock down, prefill-heavy steps slower."), cx.frames


# ================================================================== prefill_interference
def _img_burst(name, w, rate, prompt_len, out=256, seed_add=2):
    import random
    rg = random.Random(seed_of(name) + seed_add)
    res, t = [], w[0]
    while t < w[1]:
        t += rg.expovariate(rate)
        if t < w[1]:
            res.append(Req(t, int(prompt_len * rg.uniform(0.8, 1.25)), int(out * rg.uniform(0.5, 1.5))))
    return res


@reg("chunked-prefill-off-vlm-h100", "serving", "prefill_interference")
def _():
    n, w = "chunked-prefill-off-vlm-h100", (120.0, 270.0)
    extra = _img_burst(n, w, 1.2, 14000)
    cx, _ = serve(n, gpu="H100", model=VLM7, rate=lambda t: 6.0, prompt=lognorm(600, 0.5),
                  out=lognorm(220, 0.5), extra=extra, cfg=dict(chunked=False, budget=32768), dur=400)
    return truth(n, "prefill_interference", "serving", w, "vllm", cx,
                 "Chunked prefill left off after a config change; 8-camera labelling prompts (~14k image "
                 "tokens) arrive among chat decodes and every decode stalls behind whole-prompt prefills."), cx.frames


@reg("multi-image-burst-sglang-h200", "serving", "prefill_interference")
def _():
    n, w = "multi-image-burst-sglang-h200", (100.0, 220.0)
    extra = _img_burst(n, w, 0.8, 10000)
    cx, _ = serve(n, gpu="H200", model=VLM7, kind="sglang", rate=lambda t: 8.0, prompt=lognorm(500, 0.5),
                  out=lognorm(200, 0.5), extra=extra, cfg=dict(budget=16384, block=1), dur=360, tick=0.5, scrape=2.0)
    return truth(n, "prefill_interference", "serving", w, "sglang", cx,
                 "Mild: a labelling client sent bursts of 8-camera prompts with a 16k chunk size; ITL "
                 "p99 ~2x for the chat users while they were prefilled."), cx.frames


@reg("tgi-demo-long-documents-a10g", "serving", "prefill_interference")
def _():
    n, w = "tgi-demo-long-documents-a10g", (150.0, 300.0)
    extra = _img_burst(n, w, 0.25, 5000)
    cx, _ = serve(n, gpu="A10G", model=M7, kind="tgi", util=0.95, blocks=1500,
                  rate=lambda t: 1.5, prompt=lognorm(300, 0.4), out=lognorm(150, 0.5), extra=extra,
                  cfg=dict(chunked=False, budget=16000, max_seqs=32), dur=420, tick=2.0, scrape=10.0)
    return truth(n, "prefill_interference", "serving", w, "tgi", cx,
                 "Legacy TGI demo: visitors pasted 5k-token incident reports while others chatted; no "
                 "chunking, so each paste freezes the batch's decodes."), cx.frames


@reg("scenario-query-long-prompts-l40s", "serving", "prefill_interference")
def _():
    n, w = "scenario-query-long-prompts-l40s", (90.0, 240.0)
    extra = _img_burst(n, w, 0.6, 7000)
    cx, _ = serve(n, gpu="L40S", model=VLM7, rate=lambda t: 3.0, prompt=lognorm(400, 0.5),
                  out=lognorm(200, 0.5), extra=extra, cfg=dict(budget=8192), dur=360, scrape=5.0)
    return truth(n, "prefill_interference", "serving", w, "vllm", cx,
                 "Mild: engineers' scenario queries with 6-image context (7k tokens) mixed into the "
                 "L40S chat lane; chunked prefill on, but chunks take most of each step."), cx.frames


# ================================================================== tiny_kernels
@reg("rl-policy-graphs-off-h100", "rl", "tiny_kernels")
def _():
    n, w = "rl-policy-graphs-off-h100", (120.0, 330.0)
    ph = lambda t: ({"sm": 0.07, "ten": 0.01, "dram": 0.03, "compute_s": 0.18} if w[0] <= t < w[1] else
                    {"sm": 0.55, "ten": 0.25, "dram": 0.3, "compute_s": 0.05})
    cx = train(n, gpu="H100", ngpu=1, dur=420, cmd="python rl/actor_learner.py --env arm_pick --graphs 0",
               compute_s=0.05, workers=2, decode_s=0.02, batch=256, phases=ph, exports=False, ebpf=True)
    return truth(n, "tiny_kernels", "rl", w, "none", cx,
                 "Policy inference for 256 envs ran un-batched with CUDA graphs off (debug flag left on): "
                 "GPU-Util ~100% but SM active <10%, env steps/s down 3x."), cx.frames


@reg("voxelise-per-sample-op-h100x2", "training", "tiny_kernels")
def _():
    n, w = "voxelise-per-sample-op-h100x2", (100.0, 320.0)
    ph = lambda t: {"sm": 0.3, "ten": 0.18, "compute_s": 0.62} if w[0] <= t < w[1] else {}
    cx = train(n, gpu="H100", ngpu=2, dur=420, cmd=BEV + " --voxel-op custom", compute_s=0.45, workers=10,
               decode_s=2.0, phases=ph, scrape=10.0)
    return truth(n, "tiny_kernels", "training", w, "trainer", cx,
                 "Mild: a new custom CUDA voxelisation op is launched once per sample (thousands of small "
                 "kernels per step); SM active fell from ~85% to ~30% of the busy time, steps +35%."), cx.frames


@reg("embedding-unbatched-h200", "batch", "tiny_kernels")
def _():
    n, w = "embedding-unbatched-h200", (90.0, 300.0)
    ph = lambda t: {"sm": 0.09, "ten": 0.03, "dram": 0.05, "compute_s": 0.4} if w[0] <= t < w[1] else {}
    cx = train(n, gpu="H200", ngpu=1, dur=380, cmd="python embed_scenarios.py --model siglip-so400m",
               compute_s=0.12, sm=0.8, ten=0.5, dram=0.4, workers=8, decode_s=0.3, exports=False, phases=ph)
    return truth(n, "tiny_kernels", "batch", w, "none", cx,
                 "Scenario-search embedding job: a client change sent clips one at a time (batch 1); "
                 "GPU-Util stays ~95% while SM activity drops to <10%."), cx.frames


@reg("perception-service-spin-poll-h100", "perception", "tiny_kernels")
def _():
    n, w = "perception-service-spin-poll-h100", (100.0, 280.0)
    ph = lambda t: ({"sm": 0.015, "ten": 0.0, "dram": 0.005, "compute_s": 0.5, "decode_s": 0.01} if w[0] <= t < w[1]
                    else {"gap": 0.03})
    cx = train(n, gpu="H100", ngpu=1, dur=380, cmd="./perception_server --engine bevdet_trt.plan --port 7000",
               compute_s=0.02, sm=0.7, ten=0.4, dram=0.35, workers=1, decode_s=0.002, exports=False, phases=ph)
    return truth(n, "tiny_kernels", "perception", w, "none", cx,
                 "TensorRT perception service: after the upstream camera feed stalled, its sync loop spins "
                 "on a one-element polling kernel (CUDA-graph replay): GPU-Util 100%, SM ~1%."), cx.frames


# ================================================================== host_cpu_contention
@reg("physics-sim-same-cores-vllm-h100", "serving", "host_cpu_contention")
def _():
    n, w = "physics-sim-same-cores-vllm-h100", (120.0, 300.0)
    cx, _ = serve(n, gpu="H100", model=L8, rate=lambda t: 9.0, prompt=lognorm(700, 0.6), out=lognorm(250, 0.5),
                  contend=lambda t: 11.0 if w[0] <= t < w[1] else 0.0, cset=8, dur=420, scrape=5.0)
    return truth(n, "host_cpu_contention", "serving", w, "vllm", cx,
                 "Mild: the closed-loop simulator's physics workers were scheduled onto the 8 cores of "
                 "the chat engine's cpuset; its scheduler thread waits for CPU, ITL up ~1.8x, GPU idles."), cx.frames


@reg("pod-cpu-limit-resized-a100x4", "training", "host_cpu_contention")
def _():
    n, w = "pod-cpu-limit-resized-a100x4", (120.0, 360.0)
    q = lambda t: 10.0 if w[0] <= t < w[1] else 48.0
    cx = train(n, gpu="A100", ngpu=4, dur=450, cmd=BEV, compute_s=0.6, workers=8, decode_s=3.2,
               quota=q, cpu_factor=lambda t: min(1.0, q(t) / 40.0), scrape=10.0, pod="perception/bev-occ-ft-7f9c")
    return truth(n, "host_cpu_contention", "training", w, "trainer", cx,
                 "The VPA recommender resized the pod's CPU limit in place from 48 to 10 cores; the 32 "
                 "loader workers are throttled most CFS periods and the A100s starve."), cx.frames


@reg("noisy-neighbour-labelling-sglang-l40s", "serving", "host_cpu_contention")
def _():
    n, w = "noisy-neighbour-labelling-sglang-l40s", (100.0, 280.0)
    cx, _ = serve(n, gpu="L40S", model=VLM7, kind="sglang", rate=lambda t: 5.0, prompt=lognorm(600, 0.5),
                  out=lognorm(200, 0.5), contend=lambda t: 52.0 if w[0] <= t < w[1] else 6.0, cset=32,
                  cfg=dict(block=1, host_base=0.003), dur=380, scrape=5.0, cx_kw=dict(cpus=32))
    return truth(n, "host_cpu_contention", "serving", w, "sglang", cx,
                 "A neighbour pod's CPU image-rectification job (no CPU limit) saturated the node's 32 "
                 "cores; SGLang's scheduler lost CPU, PSI ~70%, throughput down."), cx.frames


@reg("indexer-scan-llamacpp-4090", "workstation", "host_cpu_contention")
def _():
    n, w = "indexer-scan-llamacpp-4090", (120.0, 300.0)
    cx, _ = serve(n, gpu="RTX4090", model=GARAGE8, kind="llamacpp", blocks=2048, rate=lambda t: 0.5,
                  prompt=lognorm(400, 0.6), out=lognorm(300, 0.5),
                  cfg=dict(max_seqs=4, budget=2048, host_base=0.004, kernels=300),
                  contend=lambda t: 30.0 if w[0] <= t < w[1] else 0.5, cset=16, dur=400, tick=2.0,
                  scrape=10.0, cx_kw=dict(cpus=16))
    return truth(n, "host_cpu_contention", "workstation", w, "llamacpp", cx,
                 "Mild: the garage workstation's backup/indexer scan took all 16 cores; llama-server's "
                 "token rate fell ~35% with the GPU idle between steps."), cx.frames


# ================================================================== input_stall
@reg("h265-eight-camera-few-workers-h100x8", "training", "input_stall")
def _():
    n, w = "h265-eight-camera-few-workers-h100x8", (120.0, 400.0)
    ph = lambda t: {"decode_s": 9.5} if w[0] <= t < w[1] else {}
    cx = train(n, gpu="H100", ngpu=8, dur=480, cmd=BEV + " --cams 8 --codec h265 --num-workers 6",
               compute_s=0.55, workers=6, decode_s=2.4, phases=ph, cpus_per_rank=24, scrape=10.0)
    return truth(n, "input_stall", "training", w, "trainer", cx,
                 "Switched to the 8-camera H.265 set with the same 6 workers per rank: decoding can't "
                 "keep up, GPUs idle ~50% of each step waiting for batches; host cores mostly free."), cx.frames


@reg("object-store-cache-cold-a100x8", "training", "input_stall")
def _():
    n, w = "object-store-cache-cold-a100x8", (100.0, 400.0)
    def io(t):
        if t < w[0] or t >= w[1]:
            return 0.0
        return 1.6 * math.exp(-(t - w[0]) / 400.0)
    cx = train(n, gpu="A100", ngpu=8, dur=460, cmd=BEV + " --dataset s3://am-logs/v7", compute_s=0.7, workers=8,
               decode_s=2.0, io_s=io, scrape=15.0)
    return truth(n, "input_stall", "training", w, "trainer", cx,
                 "New dataset version v7: the object-store cache was cold, every sample fetched from S3; "
                 "workers wait on I/O (low CPU), GPUs idle between steps."), cx.frames


@reg("nfs-stalls-intermittent-l40s-x4", "training", "input_stall")
def _():
    n, w = "nfs-stalls-intermittent-l40s-x4", (120.0, 400.0)
    def io(t):
        if not (w[0] <= t < w[1]):
            return 0.0
        x = (t - w[0]) % 37.0
        return 4.0 if x < 9.0 else 0.0
    cx = train(n, gpu="L40S", ngpu=4, dur=460, cmd="python train_lidar_seg.py --data /nfs/lidar", compute_s=0.4,
               workers=6, decode_s=1.0, io_s=io, prefetch=1, exports=False)
    return truth(n, "input_stall", "training", w, "none", cx,
                 "Intermittent: the NFS server behind /nfs/lidar stalled ~9 s every ~37 s; GPUs go idle "
                 "during each stall and resume."), cx.frames


@reg("lidar-preprocess-main-thread-h200x2", "training", "input_stall")
def _():
    n, w = "lidar-preprocess-main-thread-h200x2", (100.0, 300.0)
    ph = lambda t: {"decode_s": 1.2} if w[0] <= t < w[1] else {}
    cx = train(n, gpu="H200", ngpu=2, dur=380, cmd="python -m occ.train --workers 2", compute_s=0.3, workers=2,
               decode_s=0.35, phases=ph, scrape=5.0)
    return truth(n, "input_stall", "training", w, "trainer", cx,
                 "Mild: a new augmentation (ray-dropping) in the lidar pipeline made each batch ~3x "
                 "costlier on 2 workers; GPU waits ~30% of each step."), cx.frames


# ================================================================== collective_straggler
@reg("ddp-one-rank-clock-cut-h100x8", "training", "collective_straggler")
def _():
    n, w = "ddp-one-rank-clock-cut-h100x8", (120.0, 380.0)
    def hook(t, gpus):
        gpus[5].hw_slow = 0.55 if w[0] <= t < w[1] else None
    cx = train(n, gpu="H100", ngpu=8, dur=460, cmd=BEV, compute_s=0.5, workers=12, decode_s=2.0,
               gpu_hook=hook, scrape=10.0)
    return truth(n, "collective_straggler", "training", w, "trainer", cx,
                 "GPU 5 asserted HW slowdown (board power sensor fault) and ran at ~55% clock; the other "
                 "7 ranks spin in the all-reduce each step waiting for it.", culprit=(5,)), cx.frames


@reg("fsdp-degraded-nvlink-h100x8", "training", "collective_straggler")
def _():
    n, w = "fsdp-degraded-nvlink-h100x8", (100.0, 360.0)
    cx = train(n, gpu="H100", ngpu=8, dur=440, cmd=VLA, compute_s=0.8, grad_bytes=8e9, exposed=0.6,
               link_factor=lambda t, r: 0.15 if (r == 2 and w[0] <= t < w[1]) else 1.0, workers=6,
               decode_s=1.0, tokens_per_sample=4096, batch=4, scrape=10.0)
    return truth(n, "collective_straggler", "training", w, "trainer", cx,
                 "Mild: NVLink on GPU 2 retrained to fewer lanes; FSDP's all-gather/reduce-scatter ring "
                 "runs at that link's speed, every rank waits in collectives ~+35% step time."), cx.frames


@reg("noisy-neighbour-on-rank-cores-a100x8", "training", "collective_straggler")
def _():
    n, w = "noisy-neighbour-on-rank-cores-a100x8", (110.0, 350.0)
    cx = train(n, gpu="A100", ngpu=8, dur=440, cmd=BEV, compute_s=0.6, workers=8, decode_s=2.0,
               rank_slow=lambda t, r: 1.3 if (r == 3 and w[0] <= t < w[1]) else 1.0, scrape=10.0,
               contend=lambda t: 10.0 if w[0] <= t < w[1] else 0.0)
    return truth(n, "collective_straggler", "training", w, "trainer", cx,
                 "Mild: a pod without CPU limits landed on the NUMA node of rank 3's launcher cores; "
                 "rank 3's step is 30% slower and the others wait for it at the all-reduce.", culprit=(3,)), cx.frames


@reg("hung-collective-node-blip-h100x8", "training", "collective_straggler")
def _():
    n, w = "hung-collective-node-blip-h100x8", (150.0, 420.0)
    cx = train(n, gpu="H100", ngpu=8, dur=420, cmd=VLA + " --nnodes 4", compute_s=0.7, workers=6,
               decode_s=1.0, hang_at=w[0], scrape=10.0, tokens_per_sample=4096)
    return truth(n, "collective_straggler", "training", (w[0], w[1]), "trainer", cx,
                 "Node 3 of the 4-node job blipped (IB port flap); its rank never joined the all-reduce, "
                 "all 8 local GPUs spin in NCCL at 100% util, low SM, step counter frozen."), cx.frames


# ================================================================== oversized_request
@reg("n16-logprobs-eval-vllm-h100", "serving", "oversized_request")
def _():
    n, w = "n16-logprobs-eval-vllm-h100", (130.0, 0.0)
    big = Req(130.0, 800, 700, n=16, lp=20)
    cx, sim = serve(n, gpu="H100", model=L8, rate=lambda t: 8.0, prompt=lognorm(500, 0.5), out=lognorm(200, 0.5),
                    extra=[big], dur=380, scrape=2.0, tick=1.0)
    end = (big.t + 60) if big.first is None else big.first + 40
    done = sim.now
    fin = 130 + 60
    return truth(n, "oversized_request", "serving", (130.0, fin), "vllm", cx,
                 "An eval script sent one request with n=16, logprobs=20, max_tokens=700; sampling and "
                 "logprob serialisation for 16 sequences stretched every step, ITL ~2.5x for all users."), cx.frames


@reg("log-dump-100k-chat-vllm-h100", "serving", "oversized_request")
def _():
    n = "log-dump-100k-chat-vllm-h100"
    big = Req(140.0, 100000, 2500)
    cx, sim = serve(n, gpu="H100", model=L8, rate=lambda t: 5.0, prompt=lognorm(400, 0.5), out=lognorm(200, 0.5),
                    extra=[big], cfg=dict(prefix_hit=0.2), dur=420, scrape=5.0)
    return truth(n, "oversized_request", "serving", (140.0, 200.0), "vllm", cx,
                 "An engineer pasted a 100k-token CAN-bus log dump into the chat endpoint with a long "
                 "answer; its prefill chunks and then its 100k-context decode slowed every other request."), cx.frames


@reg("reasoning-n12-long-sglang-h200x2", "serving", "oversized_request")
def _():
    n = "reasoning-n12-long-sglang-h200x2"
    big = Req(120.0, 6000, 6000, n=12, lp=5)
    cx, sim = serve(n, gpu="H200", ngpu=2, model=R32, kind="sglang", rate=lambda t: 2.0, prompt=lognorm(2500, 0.5),
                    out=lognorm(600, 0.5), extra=[big], cfg=dict(block=1, max_seqs=64), dur=400, scrape=5.0)
    return truth(n, "oversized_request", "serving", (120.0, 240.0), "sglang", cx,
                 "Disengagement triage: one request asked for 12 parallel reasoning samples of 6k "
                 "tokens with logprobs; it takes a third of the batch and stretches every step."), cx.frames


@reg("giant-panorama-prompt-vlm-l40s", "serving", "oversized_request")
def _():
    n = "giant-panorama-prompt-vlm-l40s"
    big = Req(110.0, 90000, 3000, hit=0.0)
    cx, sim = serve(n, gpu="L40S", model=VLM7, rate=lambda t: 2.5, prompt=lognorm(500, 0.5), out=lognorm(200, 0.5),
                    extra=[big], cfg=dict(chunked=False, budget=65536), dur=360, scrape=5.0)
    return truth(n, "oversized_request", "serving", (110.0, 200.0), "vllm", cx,
                 "One auto-label request carried a 24-tile 360-degree panorama (90k image tokens) to an "
                 "engine without chunked prefill: a multi-second stall, then its long-context decode."), cx.frames


# ================================================================== host_launch_jitter
@reg("irq-storm-launch-thread-vllm-eager-h100", "serving", "host_launch_jitter")
def _():
    n, w = "irq-storm-launch-thread-vllm-eager-h100", (120.0, 300.0)
    cx, _ = serve(n, gpu="H100", model=VLM7, rate=lambda t: 6.0, prompt=lognorm(900, 0.5), out=lognorm(200, 0.5),
                  cfg=dict(graphs=False, kernels=350), jitter=lambda t: 0.06 if w[0] <= t < w[1] else 0.0,
                  ebpf=True, dur=400, scrape=5.0)
    return truth(n, "host_launch_jitter", "serving", w, "vllm", cx,
                 "Eager-mode VLM engine: the NIC's IRQs were steered to the launch thread's core after a "
                 "driver update; ~6% of kernel launches take 0.04-3 ms, ITL up."), cx.frames


@reg("rt-replay-preempts-launcher-h100x2", "training", "host_launch_jitter")
def _():
    n, w = "rt-replay-preempts-launcher-h100x2", (100.0, 320.0)
    j = lambda t: 0.05 if w[0] <= t < w[1] else 0.0
    cx = train(n, gpu="H100", ngpu=2, dur=400, cmd="python distill_student.py --teacher vit-h --student regnet",
               compute_s=0.12, workers=8, decode_s=0.5, ebpf=True, jitter=j, exports=False,
               rank_slow=lambda t, r: 1.35 if w[0] <= t < w[1] else 1.0)
    return truth(n, "host_launch_jitter", "training", w, "none", cx,
                 "A SCHED_FIFO sensor-replay process was pinned to the cores of the distillation job's "
                 "launch threads; launches stall for up to ms, short steps 35% slower."), cx.frames


@reg("softirq-launch-jitter-sglang-h100", "serving", "host_launch_jitter")
def _():
    n, w = "softirq-launch-jitter-sglang-h100", (110.0, 290.0)
    cx, _ = serve(n, gpu="H100", model=L8, kind="sglang", rate=lambda t: 7.0, prompt=lognorm(500, 0.5),
                  out=lognorm(250, 0.5), cfg=dict(block=1, graphs=False, kernels=300),
                  jitter=lambda t: 0.035 if w[0] <= t < w[1] else 0.0, ebpf=True, dur=380, scrape=5.0, tick=0.5)
    return truth(n, "host_launch_jitter", "serving", w, "sglang", cx,
                 "Mild: ksoftirqd on the SGLang scheduler's core (a storage NIC's interrupts); eBPF shows "
                 "launch p99 in the ms, ITL p99 up ~1.6x."), cx.frames


# ================================================================== kv_pressure
@reg("multi-image-long-output-kv-l40s", "serving", "kv_pressure")
def _():
    n, w = "multi-image-long-output-kv-l40s", (120.0, 330.0)
    extra = _img_burst(n, w, 0.7, 6000, out=1800)
    cx, _ = serve(n, gpu="L40S", model=VLM7, util=0.55, blocks=4200, rate=lambda t: 2.0,
                  prompt=lognorm(500, 0.5), out=lognorm(200, 0.5), extra=extra, dur=420, scrape=5.0)
    return truth(n, "kv_pressure", "serving", w, "vllm", cx,
                 "Labeller shares its L40S (gpu_memory_utilization 0.55): multi-image prompts with 1.8k-"
                 "token captions filled the 67k-token pool; preemptions and recomputation."), cx.frames


@reg("batch-lane-retractions-sglang-h100", "serving", "kv_pressure")
def _():
    n, w = "batch-lane-retractions-sglang-h100", (100.0, 330.0)
    out = lambda rng: 350 * math.exp(rng.gauss(0, 0.4))
    extra = _img_burst(n, w, 2.5, 3000, out=3000)
    cx, _ = serve(n, gpu="H100", model=L8, kind="sglang", util=0.85, blocks=150000, rate=lambda t: 3.0,
                  prompt=lognorm(2000, 0.4), out=out, extra=extra, cfg=dict(block=1, max_seqs=256), dur=420, scrape=5.0)
    return truth(n, "kv_pressure", "serving", w, "sglang", cx,
                 "The re-labelling lane switched to dense per-frame descriptions (3k-token outputs); "
                 "SGLang's pool runs full and it retracts requests over and over."), cx.frames


@reg("reasoning-long-cot-kv-a100x2", "serving", "kv_pressure")
def _():
    n, w = "reasoning-long-cot-kv-a100x2", (120.0, 360.0)
    extra = _img_burst(n, w, 0.5, 2500, out=7000)
    cx, _ = serve(n, gpu="A100", ngpu=2, model=R32, util=0.9, blocks=9000, rate=lambda t: 0.35,
                  prompt=lognorm(2500, 0.4), out=lognorm(800, 0.5), extra=extra, dur=440, scrape=5.0)
    return truth(n, "kv_pressure", "serving", w, "vllm", cx,
                 "Triage reasoning model on 2x A100: a batch of reports triggered 7k-token chains of "
                 "thought; the 144k-token pool fills, requests wait for blocks and get preempted."), cx.frames


# ================================================================== gpu_shared
@reg("notebook-on-serving-gpu-h100", "serving", "gpu_shared")
def _():
    n, w = "notebook-on-serving-gpu-h100", (130.0, 330.0)
    ct = lambda t: (dict(gpu=0, busy=0.45, sm=0.4, ten=0.25, dram=0.2, mem=9 * GiB, pid=777001,
                         name="python", cmd="/opt/conda/bin/python -m ipykernel_launcher -f kernel-3f1.json",
                         user="jlee", pod="research/jlee-notebook-0") if w[0] <= t < w[1] else None)
    cx, _ = serve(n, gpu="H100", model=L8, util=0.8, rate=lambda t: 7.0, prompt=lognorm(600, 0.5),
                  out=lognorm(220, 0.5), knobs=Knobs(gpu_share=lambda t: 0.55 if w[0] <= t < w[1] else 1.0),
                  cotenant=ct, dur=420, scrape=5.0)
    return truth(n, "gpu_shared", "serving", w, "vllm", cx,
                 "Someone's Jupyter kernel on the chat server's GPU started a training cell; time-sliced "
                 "with vLLM, ITL ~1.8x, a second process in the GPU's process list.", culprit=(0,)), cx.frames


@reg("second-pod-timeslice-train-a100", "training", "gpu_shared")
def _():
    n, w = "second-pod-timeslice-train-a100", (110.0, 360.0)
    ct = lambda t: (dict(gpu=0, busy=0.4, sm=0.35, ten=0.2, dram=0.2, mem=14 * GiB, pid=812233,
                         name="python", cmd="python eval_occ.py --ckpt latest", pod="perception/occ-eval-5d2")
                    if w[0] <= t < w[1] else None)
    cx = train(n, gpu="A100", ngpu=1, dur=440, cmd="python -m occ.finetune --bs 8", compute_s=0.4, workers=8,
               decode_s=1.2, cotenant=ct, rank_slow=lambda t, r: 1.7 if w[0] <= t < w[1] else 1.0, scrape=10.0,
               mem_bytes=52 * GiB)
    return truth(n, "gpu_shared", "training", w, "trainer", cx,
                 "The device plugin's time-slicing put an eval pod on the same A100; the fine-tune "
                 "gets ~60% of the GPU.", culprit=(0,)), cx.frames


@reg("eval-script-on-rank1-h200x4", "training", "gpu_shared")
def _():
    n, w = "eval-script-on-rank1-h200x4", (100.0, 300.0)
    ct = lambda t: (dict(gpu=1, busy=0.35, sm=0.3, ten=0.2, dram=0.2, mem=20 * GiB, pid=903311, name="python",
                         cmd="python quick_eval.py --ckpt /ckpt/vla/step_42000", user="mkim")
                    if w[0] <= t < w[1] else None)
    cx = train(n, gpu="H200", ngpu=4, dur=400, cmd=VLA, compute_s=0.8, workers=6, decode_s=1.0, cotenant=ct,
               rank_slow=lambda t, r: 1.45 if (r == 1 and w[0] <= t < w[1]) else 1.0, tokens_per_sample=4096,
               scrape=10.0)
    return truth(n, "gpu_shared", "training", w, "trainer", cx,
                 "An engineer ran a quick eval on GPU 1 of a running VLA job (CUDA_VISIBLE_DEVICES=1); "
                 "rank 1 is time-sliced and the other ranks wait for it.", culprit=(1,)), cx.frames


# ================================================================== spec_decode_rejected
@reg("old-draft-model-vllm-h100", "serving", "spec_decode_rejected")
def _():
    n, w = "old-draft-model-vllm-h100", (120.0, 330.0)
    cx, _ = serve(n, gpu="H100", model=L8, rate=lambda t: 5.0, prompt=lognorm(600, 0.5), out=lognorm(300, 0.5),
                  cfg=dict(spec_k=4, draft_bytes=1.0e9),
                  knobs=Knobs(accept=lambda t: 0.18 if w[0] <= t < w[1] else 0.74), dur=420, scrape=5.0)
    return truth(n, "spec_decode_rejected", "serving", w, "vllm", cx,
                 "Robot-arm scenario traffic began; the draft model (an older fine-tune) guesses wrong: "
                 "acceptance 74% -> 18%, each token costs more than without speculation."), cx.frames


@reg("eagle-accept-drop-sglang-h200", "serving", "spec_decode_rejected")
def _():
    n, w = "eagle-accept-drop-sglang-h200", (100.0, 300.0)
    cx, _ = serve(n, gpu="H200", model=VLM7, kind="sglang", rate=lambda t: 6.0, prompt=lognorm(700, 0.5),
                  out=lognorm(250, 0.5), cfg=dict(block=1, spec_k=3, draft_bytes=0.6e9),
                  knobs=Knobs(accept=lambda t: 0.38 if w[0] <= t < w[1] else 0.7), dur=400, scrape=2.0, tick=0.5)
    return truth(n, "spec_decode_rejected", "serving", w, "sglang", cx,
                 "Mild: EAGLE head trained on English captions; a Japanese supplier's annotation batch "
                 "dropped acceptance from 0.7 to ~0.38, ITL per token +40%."), cx.frames


@reg("llamacpp-draft-mismatch-4090", "workstation", "spec_decode_rejected")
def _():
    n, w = "llamacpp-draft-mismatch-4090", (120.0, 330.0)
    cx, _ = serve(n, gpu="RTX4090", model=GARAGE8, kind="llamacpp", blocks=2048, rate=lambda t: 0.6,
                  prompt=lognorm(300, 0.5), out=lognorm(350, 0.4),
                  cfg=dict(max_seqs=4, budget=2048, spec_k=8, draft_bytes=0.5e9, kernels=300),
                  knobs=Knobs(accept=lambda t: 0.2 if w[0] <= t < w[1] else 0.68), dur=420, tick=2.0,
                  scrape=10.0, cx_kw=dict(cpus=16))
    return truth(n, "spec_decode_rejected", "workstation", w, "llamacpp", cx,
                 "Garage llama-server with a 1B draft from an older fine-tune: after the model was swapped "
                 "for the new one, acceptance fell to ~20% and tokens/s halved."), cx.frames


# ================================================================== healthy look-alikes
@reg("train-eval-and-checkpoint-h100x8", "lookalike", None)
def _():
    n = "train-eval-and-checkpoint-h100x8"
    cx = train(n, gpu="H100", ngpu=8, dur=540, cmd=BEV, compute_s=0.55, workers=12, decode_s=2.0, eval_every=200.0,
               eval_s=45.0, ckpt_every=260.0, ckpt_s=18.0, scrape=10.0)
    return truth(n, None, "lookalike", None, "trainer", cx,
                 "BEV training with its periodic evaluation pass and a checkpoint (rank 0 writes, others at "
                 "the barrier): normal."), cx.frames


@reg("epoch-boundary-loader-respawn-a100x8", "lookalike", None)
def _():
    n = "epoch-boundary-loader-respawn-a100x8"
    io = lambda t: 2.5 if 200 <= t < 212 else 0.0
    cx = train(n, gpu="A100", ngpu=8, dur=420, cmd=BEV, compute_s=0.6, workers=8, decode_s=2.0, io_s=io,
               exports=False)
    return truth(n, None, "lookalike", None, "none", cx,
                 "Epoch boundary: DataLoader workers respawn and re-shuffle, ~12 s of idle GPUs, then "
                 "normal speed."), cx.frames


@reg("torch-compile-warmup-h200x4", "lookalike", None)
def _():
    n = "torch-compile-warmup-h200x4"
    cx = train(n, gpu="H200", ngpu=4, dur=420, cmd=VLA + " --compile", compute_s=0.7, workers=6, decode_s=1.0,
               warmup_s=110.0, tokens_per_sample=4096, scrape=10.0)
    return truth(n, None, "lookalike", None, "trainer", cx,
                 "Job start with torch.compile: ~2 minutes of compilation and recompiles (short GPU "
                 "bursts) before steady steps; expected."), cx.frames


@reg("grad-accum-uneven-steps-h100x8", "lookalike", None)
def _():
    n = "grad-accum-uneven-steps-h100x8"
    cx = train(n, gpu="H100", ngpu=8, dur=420, cmd=VLA + " --grad-accum 4", compute_s=0.35, accum=4,
               grad_bytes=5e9, exposed=0.8, workers=6, decode_s=0.8, tokens_per_sample=4096, scrape=5.0)
    return truth(n, None, "lookalike", None, "trainer", cx,
                 "Gradient accumulation x4: three short micro-steps then one with the all-reduce and "
                 "optimizer; uneven but steady."), cx.frames


@reg("rl-rollout-update-alternation-h100", "lookalike", None)
def _():
    n = "rl-rollout-update-alternation-h100"
    def ph(t):
        x = t % 55.0
        if x < 33:  # rollouts: the simulator on the CPU, small batched policy inference
            return {"compute_s": 0.02, "sm": 0.45, "ten": 0.15, "dram": 0.2, "gap": 0.06, "decode_s": 0.01}
        return {"compute_s": 0.25, "sm": 0.85, "ten": 0.5, "dram": 0.4}
    cx = train(n, gpu="H100", ngpu=1, dur=440, cmd="python rl/ppo_arm.py --num-envs 4096", compute_s=0.25,
               workers=1, decode_s=0.005, phases=ph, exports=False)
    return truth(n, None, "lookalike", None, "none", cx,
                 "PPO for the arm: 33 s of rollouts (CPU physics, GPU mostly idle) then ~22 s of updates; "
                 "a healthy alternation."), cx.frames


@reg("notebook-idle-memory-held-a6000", "lookalike", None)
def _():
    n = "notebook-idle-memory-held-a6000"
    ph = lambda t: {"gap": 30.0, "compute_s": 0.5} if not (200 <= t < 215) else {"compute_s": 0.3}
    cx = train(n, gpu="A6000", ngpu=1, dur=400, tick=2.0, cmd="python -m ipykernel_launcher", compute_s=0.5,
               workers=1, decode_s=0.01, phases=ph, exports=False, mem_bytes=31 * GiB, cx_kw=dict(cpus=16))
    return truth(n, None, "lookalike", None, "none", cx,
                 "An engineer's notebook holds 31 GiB and runs a cell now and then; idle otherwise."), cx.frames


@reg("labelling-lane-steady-saturation-vllm-h200", "lookalike", None)
def _():
    n = "labelling-lane-steady-saturation-vllm-h200"
    cx, _ = serve(n, gpu="H200", model=VLM7, rate=lambda t: 5.5, prompt=lognorm(2400, 0.3),
                  out=lognorm(350, 0.4), cfg=dict(budget=16384, max_seqs=256, prefix_hit=0.1), dur=420, scrape=5.0)
    return truth(n, None, "lookalike", None, "vllm", cx,
                 "Offline labelling lane at its steady saturation: GPU busy, batch large, queue bounded."), cx.frames


@reg("long-outputs-context-growth-sglang-h100", "lookalike", None)
def _():
    n = "long-outputs-context-growth-sglang-h100"
    cx, _ = serve(n, gpu="H100", model=L8, kind="sglang", rate=lambda t: 0.9, prompt=lognorm(1500, 0.3),
                  out=lognorm(3000, 0.3), cfg=dict(block=1), dur=420, scrape=5.0)
    return truth(n, None, "lookalike", None, "sglang", cx,
                 "Report-writing requests with 3k-token outputs: step time grows with context as they "
                 "run, within normal."), cx.frames


@reg("server-restart-warmup-vllm-h100", "lookalike", None)
def _():
    n = "server-restart-warmup-vllm-h100"
    cx, _ = serve(n, gpu="H100", model=L8, rate=lambda t: 5.0, prompt=lognorm(600, 0.5), out=lognorm(220, 0.5),
                  restart=(200.0, 245.0), dur=420, scrape=5.0)
    return truth(n, None, "lookalike", None, "vllm", cx,
                 "Planned rollout: vLLM restarted (45 s down, counters reset, new pid) and warmed its "
                 "prefix cache; normal."), cx.frames


@reg("working-day-traffic-ramp-vllm-l40s", "lookalike", None)
def _():
    n = "working-day-traffic-ramp-vllm-l40s"
    cx, _ = serve(n, gpu="L40S", model=VLM7, rate=lambda t: 0.8 + 3.5 * min(1.0, t / 500.0),
                  prompt=lognorm(600, 0.5), out=lognorm(200, 0.5), dur=540, tick=2.0, scrape=10.0)
    return truth(n, None, "lookalike", None, "vllm", cx,
                 "09:00 ramp: the engineers arrive, chat traffic rises ~5x over nine minutes; tokens/s "
                 "follows demand."), cx.frames


@reg("rack-power-capped-by-design-h100x8", "lookalike", None)
def _():
    n = "rack-power-capped-by-design-h100x8"
    cx = train(n, gpu="H100", ngpu=8, dur=420, cmd=VLA, compute_s=0.7, sm=0.92, ten=0.7, workers=6, decode_s=1.0,
               tokens_per_sample=4096, cx_kw=dict(power_limit=500.0), scrape=10.0)
    return truth(n, None, "lookalike", None, "trainer", cx,
                 "This rack's H100s are capped at 500 W by design: power cap always on, clocks steady."), cx.frames


@reg("warm-aisle-within-limits-a100x8", "lookalike", None)
def _():
    n = "warm-aisle-within-limits-a100x8"
    cx = train(n, gpu="A100", ngpu=8, dur=420, cmd=BEV, compute_s=0.6, workers=8, decode_s=2.0,
               cx_kw=dict(t_amb=36.0), exports=False)
    return truth(n, None, "lookalike", None, "none", cx,
                 "A warm aisle: the A100s run ~10 C hotter than elsewhere but below slowdown."), cx.frames


@reg("ddp-ranks-brief-allreduce-wait-h200x8", "lookalike", None)
def _():
    n = "ddp-ranks-brief-allreduce-wait-h200x8"
    cx = train(n, gpu="H200", ngpu=8, dur=420, cmd=BEV, compute_s=0.5, workers=12, decode_s=2.0,
               rank_slow=lambda t, r: 1.0 + 0.03 * ((r * 7 + int(t / 13)) % 4) / 3, scrape=10.0)
    return truth(n, None, "lookalike", None, "trainer", cx,
                 "DDP: ranks arrive at the all-reduce a few ms apart and wait briefly, as always."), cx.frames


@reg("simulator-bursty-gpu-l40s", "lookalike", None)
def _():
    n = "simulator-bursty-gpu-l40s"
    def ph(t):
        x = t % 12.0
        return {"compute_s": 0.15, "gap": 0.25 if x < 6 else 0.02, "sm": 0.75, "ten": 0.1, "dram": 0.3}
    cx = train(n, gpu="L40S", ngpu=1, dur=400, cmd="./carla_server -RenderOffScreen -quality-level=Epic",
               compute_s=0.15, workers=1, decode_s=0.01, phases=ph, exports=False)
    return truth(n, None, "lookalike", None, "none", cx,
                 "Closed-loop simulator: bursty rendering as scenes load and the ego agent steps."), cx.frames


@reg("garage-llamacpp-sporadic-4090", "lookalike", None)
def _():
    n = "garage-llamacpp-sporadic-4090"
    cx, _ = serve(n, gpu="RTX4090", model=GARAGE8, kind="llamacpp", blocks=2048, rate=lambda t: 0.15,
                  prompt=lognorm(500, 0.6), out=lognorm(300, 0.5), cfg=dict(max_seqs=4, budget=2048, kernels=300),
                  dur=420, tick=2.0, scrape=10.0, cx_kw=dict(cpus=16))
    return truth(n, None, "lookalike", None, "llamacpp", cx,
                 "Test-garage llama-server answering the odd question: long idle gaps, bursts."), cx.frames


@reg("tgi-legacy-demo-quiet-a10g", "lookalike", None)
def _():
    n = "tgi-legacy-demo-quiet-a10g"
    cx, _ = serve(n, gpu="A10G", model=M7, kind="tgi", util=0.95, blocks=1500, rate=lambda t: 0.4,
                  prompt=lognorm(300, 0.5), out=lognorm(150, 0.5), cfg=dict(chunked=False, max_seqs=32),
                  dur=420, tick=2.0, scrape=15.0)
    return truth(n, None, "lookalike", None, "tgi", cx, "Legacy TGI demo with a few visitors."), cx.frames


@reg("embedding-batch-steady-a10g", "lookalike", None)
def _():
    n = "embedding-batch-steady-a10g"
    cx = train(n, gpu="A10G", ngpu=1, dur=400, cmd="python embed_scenarios.py --bs 256", compute_s=0.3,
               sm=0.85, ten=0.6, workers=6, decode_s=0.9, exports=False, mem_bytes=18 * GiB, cx_kw=dict(cpus=16))
    return truth(n, None, "lookalike", None, "none", cx, "Embedding backfill at full, steady speed."), cx.frames


@reg("distillation-teacher-student-h100x4", "lookalike", None)
def _():
    n = "distillation-teacher-student-h100x4"
    cx = train(n, gpu="H100", ngpu=4, dur=420, cmd="python distill_student.py --teacher vit-h", compute_s=0.4,
               workers=10, decode_s=2.0, scrape=10.0)
    return truth(n, None, "lookalike", None, "trainer", cx,
                 "Distilling the teacher into the on-car student on 4 GPUs: steady."), cx.frames


@reg("spec-decode-healthy-vllm-h200", "lookalike", None)
def _():
    n = "spec-decode-healthy-vllm-h200"
    cx, _ = serve(n, gpu="H200", model=L8, rate=lambda t: 6.0, prompt=lognorm(500, 0.5), out=lognorm(300, 0.5),
                  cfg=dict(spec_k=4, draft_bytes=1e9),
                  knobs=Knobs(accept=lambda t: 0.68 + 0.07 * math.sin(t / 40.0)), dur=420, scrape=5.0)
    return truth(n, None, "lookalike", None, "vllm", cx,
                 "Speculative decoding with normal acceptance (61-75%, varying with the prompt mix)."), cx.frames


@reg("fsdp-async-shard-checkpoint-h100x8", "lookalike", None)
def _():
    n = "fsdp-async-shard-checkpoint-h100x8"
    cx = train(n, gpu="H100", ngpu=8, dur=480, cmd=VLA, compute_s=0.8, workers=6, decode_s=1.0, ckpt_every=170.0,
               ckpt_s=16.0, ckpt_barrier=False, tokens_per_sample=4096, scrape=10.0)
    return truth(n, None, "lookalike", None, "trainer", cx,
                 "FSDP sharded checkpoints every ~3 minutes: all ranks write shards to the object store, "
                 "GPUs idle ~16 s, then resume."), cx.frames


@reg("vla-pretrain-steady-h200x8", "lookalike", None)
def _():
    n = "vla-pretrain-steady-h200x8"
    cx = train(n, gpu="H200", ngpu=8, dur=420, tick=0.5, cmd=VLA, compute_s=0.9, workers=6, decode_s=1.2,
               tokens_per_sample=4096, scrape=5.0, ebpf=True)
    return truth(n, None, "lookalike", None, "trainer", cx, "VLA pre-training at steady state."), cx.frames


@reg("sglang-bursty-within-capacity-h100", "lookalike", None)
def _():
    n = "sglang-bursty-within-capacity-h100"
    cx, _ = serve(n, gpu="H100", model=VLM7, kind="sglang", rate=lambda t: 4.0, bursty=0.8, prompt=lognorm(800, 0.6),
                  out=lognorm(220, 0.5), cfg=dict(block=1), dur=420, scrape=5.0, tick=0.5, ebpf=True)
    return truth(n, None, "lookalike", None, "sglang", cx,
                 "Auto-label requests arrive in bursts as upload jobs finish; the queue drains each time."), cx.frames
