"""The traces: an on-call engineer's week of pages, real and false.

Each entry: (name, family, cause, builder).  A builder returns
(frames, window_in_sim_seconds or None, culprit_gpus or None, meta dict, note).
Sim second 0 is the end of the warm-up; frame k ends at (k + 1) x tick.
"""

from __future__ import annotations

import math

from . import gpu as G
from .build import chat, diurnal, lognorm, prewarm, program_box, serving_box, training_box
from .serve import Req
from .world import Proc, Program


def ramp(t, a, b):
    return 0.0 if t <= a else 1.0 if t >= b else (t - a) / (b - a)


def between(a, b):
    return lambda t: a <= t < b


def meta(w, engine, gpu_model):
    return dict(engine=engine, gpus=len(w.gpus), gpu_model=gpu_model, tick_s=w.tick_s)


def frames_window(frames, pred, t_tick, after=0.0):
    """(first, last) sim seconds of frames where pred(frame, previous) holds."""
    hits = [(k + 1) * t_tick for k in range(1, len(frames))
            if (k + 1) * t_tick >= after and pred(frames[k], frames[k - 1])]
    return (hits[0], hits[-1]) if hits else None


# ------------------------------------------------------------------ serving helpers

def _serve(name, *, warm_rate, mean_prompt=900, mean_out=260, itl=0.02, **kw):
    w, engs = serving_box(name, **kw)
    return w, engs


def _run_serve(w, engs, warm_rate, mean_prompt=900, mean_out=260, itl=0.02, ttft=0.15):
    prewarm(w, engs, rate=warm_rate, mean_prompt=mean_prompt, mean_out=mean_out, itl=itl,
            ttft=ttft)
    return w.run()


def inject(engine, at, **req):
    """Add one request at sim time ``at``; returns the request (for its window)."""
    holder = {}

    def hook(w, now, done=[False]):
        if not done[0] and now >= at:
            done[0] = True
            r = Req(now, **req)
            holder["r"] = r
            engine.arrive(r)
    return hook, holder


def _req_window(holder, default_end):
    r = holder.get("r")
    if r is None:
        return None
    a = r.sched if r.sched is not None else r.arr
    b = r.fin if r.fin is not None else default_end
    return (a, b)


# ------------------------------------------------------------------ oversized_request

def over_n16_logprobs(name):
    w, engs = serving_box(name, gpu="H100", version=0.32, model="llama8b", rate=diurnal(7.0, 0.15, 1200),
                          make=chat(900, 240), duration=300, mfu=True)
    hook, h = inject(engs[0], 104.0, prompt=540, cached=32, out=700, n=16, lp=20,
                     heavy=(0.085, 0.030), maxtok=1024)
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 7.0)
    return fr, _req_window(h, 300), None, meta(w, "vllm", "H100"), \
        "n=16, logprobs=20 request scheduled at ~104 s; every step carries its logprob work"


def over_bestof_tp2(name):
    w, engs = serving_box(name, gpu="H200", n_gpus=2, tp=2, version=0.11, model="llama70b",
                          rate=diurnal(2.2, 0.1, 1800), make=chat(1400, 300), duration=280,
                          tick_s=2.0, scrape_s=2.0)
    hook, h = inject(engs[0], 96.0, prompt=2200, cached=0, out=1200, n=32, lp=5,
                     heavy=(0.060, 0.022), maxtok=2048)
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 2.2, 1400, 300, itl=0.028)
    return fr, _req_window(h, 280), None, meta(w, "vllm", "H200"), \
        "n=32 best-of style request with logprobs on a TP2 70B: latency of all co-scheduled requests"


def over_prompt_logprobs_sglang(name):
    w, engs = serving_box(name, gpu="A100", kind="sglang", model="qwen7b",
                          rate=diurnal(4.0, 0.2, 900), make=chat(700, 200), duration=260)
    hook, h = inject(engs[0], 110.0, prompt=3000, cached=0, out=900, n=8, lp=20,
                     heavy=(0.110, 0.04), maxtok=1000)
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 4.0, 700, 200, itl=0.025)
    return fr, _req_window(h, 260), None, meta(w, "sglang", "A100"), \
        "a batch client sends n=8 with return_logprob/top_logprobs_num=20 over a 152k vocabulary"


def over_dp2_one_replica(name):
    w, engs = serving_box(name, gpu="H100", n_gpus=2, engines=2, dp_port=True, version=0.22,
                          model="qwen7b", rate=diurnal(10.0, 0.1, 1500), make=chat(800, 250),
                          duration=300, scrape_s=2.0)
    hook, h = inject(engs[1], 130.0, prompt=600, cached=0, out=800, n=16, lp=20,
                     heavy=(0.07, 0.03), maxtok=800)
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 10.0, 800, 250)
    return fr, _req_window(h, 300), (1,), meta(w, "vllm", "H100"), \
        "data-parallel 2 behind one port; the n=16 logprobs request lands on engine=1 (GPU 1)"


# ------------------------------------------------------------------ prefill_interference

def _tenant(base_make, long_rate, long_prompt, long_out=120, a=0, b=1e9):
    """A second tenant's long prompts mixed into the stream between a and b."""
    def make(rng, t):
        if a <= t < b and rng.random() < long_rate(t):
            p = lognorm(rng, long_prompt, 0.3)
            return dict(prompt=p, cached=0, out=lognorm(rng, long_out, 0.4))
        return base_make(rng, t)
    return make


def pf_rag_tenant(name):
    base = 6.0
    frac = lambda t: 0.03 if 120 <= t < 235 else 0.0
    w, engs = serving_box(name, gpu="H100", version=0.32, model="llama8b",
                          rate=diurnal(base, 0.1, 2000),
                          make=_tenant(chat(800, 300), frac, 42000, 150, 120, 235), duration=320)
    fr = _run_serve(w, engs, base, 800, 300)
    return fr, (121.0, 245.0), None, meta(w, "vllm", "H100"), \
        "a RAG tenant starts sending ~40k-token prompts (0.4/s) at 120 s; chunked prefill 8192 starves decodes"


def pf_sglang_tp4_longdoc(name):
    frac = lambda t: 0.035 if 100 <= t < 220 else 0.0
    w, engs = serving_box(name, gpu="H200", n_gpus=4, tp=4, kind="sglang", model="llama70b",
                          rate=diurnal(4.0, 0.0, 900, burst=[(100, 220, 1.3)]),
                          make=_tenant(chat(1000, 280), frac, 30000, 200, 100, 220), duration=300)
    fr = _run_serve(w, engs, 4.0, 1000, 280, itl=0.03)
    return fr, (101.0, 228.0), None, meta(w, "sglang", "H200"), \
        "TP4 70B: long-document summarisation batch arrives with the morning peak (rate x1.3)"


def pf_llamacpp_paste(name):
    frac = lambda t: 0.12 if 90 <= t < 210 else 0.0
    w, engs = serving_box(name, gpu="L40S", kind="llamacpp", model="qwen7b", slots=8, ctx=131072,
                          chunk=2048, rate=diurnal(0.9, 0.1, 600),
                          make=_tenant(chat(500, 350, cached=0.5), frac, 18000, 250, 90, 210),
                          duration=280, max_seqs=8)
    fr = _run_serve(w, engs, 0.9, 500, 350, itl=0.03)
    return fr, (92.0, 222.0), None, meta(w, "llamacpp", "L40S"), \
        "llama-server 8 slots: users paste 18k-token files; each prompt batch of 2048 stalls the other slots"


def pf_vllm010_a100_tp2(name):
    frac = lambda t: 0.025 if 80 <= t < 200 else 0.0
    w, engs = serving_box(name, gpu="A100", n_gpus=2, tp=2, version=0.10, model="qwen32b",
                          rate=diurnal(3.0, 0.1, 1000),
                          make=_tenant(chat(700, 220), frac, 28000, 100, 80, 200), duration=290,
                          tick_s=2.0, scrape_s=4.0)
    fr = _run_serve(w, engs, 3.0, 700, 220, itl=0.035)
    return fr, (82.0, 212.0), None, meta(w, "vllm", "A100"), \
        "vLLM 0.10 (time_per_output_token), 2 s ticks, 4 s scrape: 28k-token prompts mixed in"


# ------------------------------------------------------------------ collective_straggler

def cs_ddp_rank5(name):
    w, tr = training_box(name, gpu="H100", n_gpus=8, compute_s=0.55, comm_s=0.05,
                         tokens_per_step=8 * 16 * 4096, counter="tokens", duration=300)
    tr.work[5] = lambda t: 1.0 + 0.45 * ramp(t, 100, 112)
    return w.run(), (104.0, 300.0), (5,), meta(w, "none", "H100"), \
        "sequence-packing bug: rank 5's shard has longer sequences from 100 s; seven ranks spin in NCCL"


def cs_moe_hot_expert(name):
    w, engs = serving_box(name, gpu="H100", n_gpus=4, tp=4, version=0.32, model="mixtral",
                          rate=diurnal(9.0, 0.1, 1200), make=chat(700, 260), duration=300)
    e = engs[0]
    w.hooks.append(lambda w_, t: setattr(e, "imbalance", (2, 1.0 + 0.7 * ramp(t, 90, 105))
                                         if t >= 90 else None))
    fr = _run_serve(w, engs, 9.0, 700, 260)
    return fr, (95.0, 300.0), (2,), meta(w, "vllm", "H100"), \
        "expert-parallel MoE: traffic in one language routes to hot experts on GPU 2; the other ranks wait"


def cs_fsdp_rank1(name):
    w, tr = training_box(name, gpu="H200", n_gpus=4, compute_s=0.9, comm_s=0.08, fsdp=True,
                         samples_per_step=64, counter="samples", duration=320, tick_s=2.0,
                         scrape_s=4.0, script="finetune_vlm.py")
    tr.work[1] = lambda t: 1.0 + 0.55 * ramp(t, 80, 150)
    return w.run(), (110.0, 320.0), (1,), meta(w, "none", "H200"), \
        "FSDP VLM fine-tune: the data mix shifts to many-tile images that all land on rank 1 (slow onset)"


def cs_ddp_a100_rank3(name):
    w, tr = training_box(name, gpu="A100", n_gpus=4, compute_s=0.7, comm_s=0.06, duration=280,
                         host_cpus=64)
    tr.work[3] = lambda t: 1.5 if t >= 120 else 1.0
    return w.run(), (120.0, 280.0), (3,), meta(w, "none", "A100"), \
        "DDP on A100 (no GPM), no throughput counter: rank 3 gets 1.5x work from 120 s"


# ------------------------------------------------------------------ input_stall

def is_jpeg_slow_onset(name):
    def dec(t):
        return 0.55 * 12 * 0.6 * (1 + 2.4 * ramp(t, 80, 170))
    w, tr = training_box(name, gpu="H100", n_gpus=8, compute_s=0.55, workers=12, decode_s=dec,
                         samples_per_step=8 * 256, counter="samples", duration=320)
    return w.run(), (115.0, 320.0), None, meta(w, "none", "H100"), \
        "ImageNet-style DDP: a shard of larger JPEGs; per-batch decode cost creeps up from 80 s"


def is_a10g_tokenize(name):
    def dec(t):
        return 0.35 * 2 * (0.5 if t < 100 else 1.7)
    w, tr = training_box(name, gpu="A10G", n_gpus=1, compute_s=0.35, comm_s=0.0, workers=2,
                         decode_s=dec, tokens_per_step=8 * 2048, counter="tokens", duration=260,
                         host_cpus=8, script="sft_lora.py", launcher="python {script}")
    return w.run(), (100.0, 260.0), None, meta(w, "none", "A10G"), \
        "LoRA fine-tune on one A10G: new data mix tokenised on the fly by 2 workers from 100 s"


def is_nfs_slow(name):
    def dec(t):
        return 0.5 * 6 * (0.5 if not (90 <= t < 215) else 1.9)
    w, tr = training_box(name, gpu="A100", n_gpus=2, compute_s=0.5, workers=6, decode_s=dec,
                         duration=300, host_cpus=32)
    return w.run(), (90.0, 216.0), None, meta(w, "none", "A100"), \
        "DDP reads from NFS; the filer is slow 90-215 s (workers wait on I/O, CPUs idle)"


def is_object_store_intermittent(name):
    def dec(t):
        return 0.6 * 8 * (0.5 if (t < 120 or (t % 60) > 30) else 3.5)
    w, tr = training_box(name, gpu="B200", n_gpus=8, compute_s=0.6, workers=8, decode_s=dec,
                         tokens_per_step=8 * 8 * 8192, counter="tokens", duration=320,
                         host_cpus=128, scrape_s=5.0)
    return w.run(), (125.0, 300.0), None, meta(w, "none", "B200"), \
        "streaming dataset from an object store that throttles for ~30 s every minute from 120 s"


# ------------------------------------------------------------------ host_launch_jitter

def _jitter(prob, ms, a, b, period=None, on=None):
    def active(t):
        if not (a <= t < b):
            return False
        return True if period is None else (t - a) % period < on
    def lost(rng, dt, t=[0.0]):
        return 0.0
    return active


def lj_vllm_cfs_quota(name):
    w, engs = serving_box(name, gpu="H100", version=0.32, model="llama8b", rate=diurnal(7.0, 0.1, 1500),
                          make=chat(800, 250), duration=300, ebpf=True)
    e = engs[0]
    act = lambda t: 100 <= t < 300
    e.jitter = None

    def hook(w_, t):
        if act(t):
            e.jitter = lambda rng, dt: dt * (0.25 + 0.15 * rng.random())
            w_.ebpf.preempt = lambda tt: 0.06
            w_.ebpf.preempt_ms = 22.0
        else:
            e.jitter = None
            w_.ebpf.preempt = lambda tt: 0.0
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 7.0, 800, 250)
    return fr, (100.0, 300.0), None, meta(w, "vllm", "H100"), \
        "container CPU quota (CFS) throttles the launching thread for tens of ms each 100 ms period from 100 s"


def lj_training_irq(name):
    w, tr = training_box(name, gpu="H100", n_gpus=1, compute_s=0.25, comm_s=0.0, workers=6,
                         tokens_per_step=16 * 2048, counter="tokens", duration=300, ebpf=True,
                         launcher="python {script}", script="train_gpt.py")
    on = lambda t: t >= 90 and (t - 90) % 45 < 18
    tr.launch_gap = lambda rng, t: (0.12 + 0.06 * rng.random()) if on(t) else 0.0

    def hook(w_, t):
        w_.ebpf.preempt = (lambda tt: 0.05) if on(t) else (lambda tt: 0.0)
        w_.ebpf.preempt_ms = 9.0
    w.hooks.append(hook)
    return w.run(), (90.0, 288.0), None, meta(w, "none", "H100"), \
        "eager-mode trainer; a NIC IRQ storm on the launch thread's core for 18 s every 45 s from 90 s"


def lj_sglang_l40s(name):
    w, engs = serving_box(name, gpu="L40S", kind="sglang", model="llama8b", rate=diurnal(3.0, 0.1, 900),
                          make=chat(600, 220), duration=270, ebpf=True, tick_s=2.0)
    e = engs[0]

    def hook(w_, t):
        if 110 <= t < 230:
            e.jitter = lambda rng, dt: dt * (0.2 + 0.2 * rng.random())
            w_.ebpf.preempt = lambda tt: 0.05
            w_.ebpf.preempt_ms = 12.0
        else:
            e.jitter = None
            w_.ebpf.preempt = lambda tt: 0.0
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 3.0, 600, 220, itl=0.03)
    return fr, (110.0, 230.0), None, meta(w, "sglang", "L40S"), \
        "kswapd and a log shipper pinned to the scheduler's core preempt it 110-230 s (2 s ticks)"


# ------------------------------------------------------------------ host_cpu_contention

def hc_compile_job(name):
    w, engs = serving_box(name, gpu="H200", version=0.3, model="qwen32b", rate=diurnal(5.0, 0.1, 1500),
                          make=chat(900, 280), duration=300, host_cpus=32)
    w.host.extra = lambda t: 80.0 if 110 <= t < 215 else 0.0
    fr = _run_serve(w, engs, 5.0, 900, 280, itl=0.025)
    return fr, (110.0, 218.0), None, meta(w, "vllm", "H200"), \
        "someone runs make -j96 on the serving box 110-215 s: PSI, run queue, the engine's CPU share drop"


def hc_noisy_neighbour(name):
    w, engs = serving_box(name, gpu="A10G", version=0.25, model="llama8b", rate=diurnal(0.7, 0.1, 900),
                          make=chat(600, 200), duration=320, host_cpus=8, max_seqs=64)
    w.host.extra = lambda t: 22.0 if (t >= 90 and (t - 90) % 60 < 20) else 0.0
    fr = _run_serve(w, engs, 0.7, 600, 200, itl=0.03)
    return fr, (90.0, 290.0), None, meta(w, "vllm", "A10G"), \
        "cloud VM: a noisy neighbour steals CPU for 20 s every minute from 90 s"


def hc_trainer_preproc(name):
    w, tr = training_box(name, gpu="L40S", n_gpus=4, compute_s=0.45, comm_s=0.07, workers=4,
                         tokens_per_step=4 * 8 * 2048, counter="tokens", duration=300,
                         host_cpus=24, pin=True)
    w.host.extra = lambda t: 70.0 if 100 <= t < 240 else 0.0
    return w.run(), (100.0, 242.0), None, meta(w, "none", "L40S"), \
        "another team's preprocessing (70 busy processes) lands on the training box 100-240 s; tree pinned"


def hc_llamacpp_box(name):
    w, engs = serving_box(name, gpu="A100", n_gpus=4, engines=4, kind="llamacpp", model="llama8b",
                          slots=6, ctx=65536, rate=diurnal(2.4, 0.1, 900), make=chat(500, 300),
                          duration=300, host_cpus=16, max_seqs=6)
    w.host.extra = lambda t: 40.0 if 120 <= t < 250 else 0.0
    fr = _run_serve(w, engs, 2.4, 500, 300, itl=0.02)
    return fr, (120.0, 252.0), None, meta(w, "llamacpp", "A100"), \
        "four llama-server instances on one box; a backup with compression takes every core 120-250 s"


# ------------------------------------------------------------------ tiny_kernels

def _tiny_mix(a, b, base=None):
    def mix(rng, t, gi):
        if a <= t < b:
            return [(0.97 + 0.03 * rng.random(), G.TINY)]
        return base(rng, t, gi) if base else []
    return mix


def tk_notebook(name):
    def base(rng, t, gi):
        return [(0.05, G.GEMM)] if rng.random() < 0.1 else []
    procs = [Proc(41234, (0,), "python", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-7.json",
                  22 << 30, user="alice", start=0.0)]
    w, _ = program_box(name, gpu="H100", mix=_tiny_mix(70, 260, base), procs=procs, duration=300)
    w.procs[0].start = w.start_wall - 5000
    return w.run(), (70.0, 260.0), None, meta(w, "none", "H100"), \
        "notebook cell loops over a dataframe row by row, one tiny CUDA op each: Util 100 %, SM ~1 %"


def tk_rollout_env(name):
    w, tr = training_box(name, gpu="B200", n_gpus=1, compute_s=0.4, comm_s=0.0, workers=4,
                         samples_per_step=256, counter="samples", duration=280,
                         launcher="python {script}", script="ppo_rollout.py")
    orig = tr._one_step

    def step():
        orig()
    tr.tiny_from = 100.0

    def hook(w_, t):
        tr.tiny = t >= 100
        tr.compute_s = 0.4 if t < 100 else 0.9
    w.hooks.append(hook)
    return w.run(), (101.0, 280.0), None, meta(w, "none", "B200"), \
        "RL rollout: the vectorised env is replaced by a per-env Python loop on GPU tensors at 100 s"


def tk_cuda_postproc(name):
    def base(rng, t, gi):
        return [(0.80 + 0.05 * rng.random(), G.FFT)]
    procs = [Proc(9911, (0,), "detect_pipeline", "/srv/bin/detect_pipeline --batch 1 --per-box-nms",
                  9 << 30, user="vision", start=0.0, cpu_rate=1.0)]
    w, _ = program_box(name, gpu="H200", mix=_tiny_mix(95, 250, base), procs=procs, duration=300,
                       ebpf=True)
    w.procs[0].start = w.start_wall - 86000
    return w.run(), (95.0, 250.0), None, meta(w, "none", "H200"), \
        "plain CUDA pipeline: a config push switches post-processing to per-box kernels at 95 s"


# ------------------------------------------------------------------ memory_bandwidth

def _creep(mean_out, p0, p1, a, b, cached=0.92):
    def make(rng, t):
        p = lognorm(rng, p0 + (p1 - p0) * ramp(t, a, b), 0.25)
        return dict(prompt=p, cached=int(p * cached) // 16 * 16, out=lognorm(rng, mean_out, 0.5))
    return make


def mb_agent_context_creep(name):
    w, engs = serving_box(name, gpu="H100", version=0.32, model="llama8b", rate=lambda t: 1.3,
                          make=_creep(300, 3000, 16000, 60, 200), duration=320, max_seqs=128)
    fr = _run_serve(w, engs, 1.3, 3000, 300, itl=0.012)
    return fr, (150.0, 320.0), None, meta(w, "vllm", "H100"), \
        "agent product: conversation context grows 3k -> 16k tokens (prefix-cached) over minutes; KV reads dominate each step"


def mb_h200_tp2_long(name):
    w, engs = serving_box(name, gpu="H200", n_gpus=2, tp=2, version=0.2, model="llama70b",
                          rate=lambda t: 0.42, make=_creep(500, 4000, 20000, 90, 110), duration=300,
                          tick_s=2.0)
    fr = _run_serve(w, engs, 0.42, 4000, 500, itl=0.025)
    return fr, (115.0, 300.0), None, meta(w, "vllm", "H200"), \
        "a customer switches to 20k-token multi-turn sessions at 90 s: DRAM bandwidth saturates"


def mb_sglang_b200(name):
    w, engs = serving_box(name, gpu="B200", kind="sglang", model="qwen32b", rate=lambda t: 1.0,
                          make=_creep(400, 2500, 16000, 80, 170), duration=300)
    fr = _run_serve(w, engs, 1.0, 2500, 400, itl=0.012)
    return fr, (140.0, 300.0), None, meta(w, "sglang", "B200"), \
        "SGLang radix cache hits keep prefill cheap while contexts creep to 16k: attention is DRAM-bound"


# ------------------------------------------------------------------ throttling

def th_fan_failing(name):
    w, engs = serving_box(name, gpu="L40S", kind="vllm", version=0.28, model="llama8b",
                          rate=diurnal(3.0, 0.05, 1200), make=chat(700, 260), duration=330,
                          ambient=30.0, max_seqs=96)
    g = w.gpus[0]

    def hook(w_, t):
        g.fan_fault = 1.0 - 0.95 * ramp(t, 40, 170)
        g.cooling = 1.0 + 0.4 * ramp(t, 40, 170)
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 3.0, 700, 260, itl=0.03)
    win = frames_window(fr, lambda f, p: "thermal (sw)" in f.gpus[0].throttle or
                        "hw slowdown" in f.gpus[0].throttle, w.tick_s)
    return fr, win, (0,), meta(w, "vllm", "L40S"), \
        "the board's fan bearing fails over minutes; temperature climbs until thermal slowdown"


def th_ddp_gpu3_thermal(name):
    w, tr = training_box(name, gpu="H100", n_gpus=8, compute_s=0.5, comm_s=0.05,
                         tokens_per_step=8 * 8 * 4096, counter="tokens", duration=320)
    g = w.gpus[3]

    def hook(w_, t):
        g.cooling = 1.0 + 1.0 * ramp(t, 30, 150)
    w.hooks.append(hook)
    fr = w.run()
    win = frames_window(fr, lambda f, p: "thermal (sw)" in f.gpus[3].throttle or
                        "hw slowdown" in f.gpus[3].throttle, w.tick_s)
    return fr, win, (3,), meta(w, "none", "H100"), \
        "a failing chassis fan in front of GPU 3: it throttles and the other seven wait in NCCL (labelled throttling, see README)"


def th_power_brake(name):
    w, engs = serving_box(name, gpu="H200", version=0.32, model="qwen32b", rate=diurnal(5.0, 0.1, 1500),
                          make=chat(900, 280), duration=320)
    g = w.gpus[0]

    def hook(w_, t):
        g.brake = t >= 90 and (t - 90) % 60 < 9
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 5.0, 900, 280, itl=0.025)
    return fr, (90.0, 279.0), (0,), meta(w, "vllm", "H200"), \
        "the rack's power shelf asserts power brake for 9 s every minute from 90 s"


def th_power_limit(name):
    w, engs = serving_box(name, gpu="A100", version=0.24, model="qwen32b", rate=diurnal(1.1, 0.1, 1500),
                          make=chat(900, 260), duration=300, tick_s=2.0)
    g = w.gpus[0]

    def hook(w_, t):
        g.limit = 400.0 if t < 120 else 190.0
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 1.1, 900, 260, itl=0.03)
    return fr, (120.0, 300.0), (0,), meta(w, "vllm", "A100"), \
        "an energy-saving script sets nvidia-smi -pl 190 at 120 s on a busy A100"


# ------------------------------------------------------------------ kv_pressure

def _long_out(base_make, a, out_mean, frac=1.0):
    def make(rng, t):
        kw = base_make(rng, t)
        if t >= a and rng.random() < frac:
            kw["out"] = lognorm(rng, out_mean, 0.4)
        return kw
    return make


def kv_reasoning(name):
    w, engs = serving_box(name, gpu="H200", version=0.32, model="qwen32b", rate=diurnal(4.0, 0.1, 1500),
                          make=_long_out(chat(1200, 300), 100, 5000, 0.7), duration=330,
                          mem_util=0.9)
    fr = _run_serve(w, engs, 4.0, 1200, 300, itl=0.025)
    win = frames_window(fr, lambda f, p: (f.engine.preemptions_total or 0) > (p.engine.preemptions_total or 0)
                        if f.engine and p.engine else False, w.tick_s, after=100)
    return fr, win, None, meta(w, "vllm", "H200"), \
        "a reasoning model's thinking mode is switched on for most clients at 100 s: outputs 5k tokens, KV pool fills"


def kv_sglang_retract(name):
    w, engs = serving_box(name, gpu="A100", kind="sglang", model="llama8b",
                          rate=diurnal(2.5, 0.0, 900, burst=[(110, 400, 2.2)]),
                          make=_long_out(chat(2500, 500), 110, 1500, 0.5), duration=300)
    fr = _run_serve(w, engs, 2.5, 2500, 500, itl=0.03)
    win = frames_window(fr, lambda f, p: (f.engine.retracted_requests_total or 0) >
                        (p.engine.retracted_requests_total or 0) if f.engine and p.engine else False,
                        w.tick_s, after=110)
    return fr, win, None, meta(w, "sglang", "A100"), \
        "peak-hour traffic x2.2 with longer answers: SGLang retracts decodes again and again"


def kv_dp2_sticky(name):
    w, engs = serving_box(name, gpu="L40S", n_gpus=2, engines=2, version=0.26, model="llama8b",
                          rate=diurnal(3.0, 0.05, 1200), make=_long_out(chat(1500, 300), 1e9, 300),
                          split=None, duration=300, max_seqs=128)
    traffic = w.actors[0]
    # sticky sessions: from 100 s a big customer's long sessions all go to server 2 (GPU 1)
    base_make = traffic.make

    def hook(w_, t):
        traffic.split = [1.0, 1.0] if t < 100 else [0.35, 1.0]
        traffic.make = base_make if t < 100 else _long_out(chat(6000, 300), 100, 1800, 0.5)
        traffic.rate = diurnal(3.0, 0.05, 1200) if t < 100 else (lambda tt: 3.6)
    w.hooks.append(hook)
    fr = _run_serve(w, engs, 3.0, 1500, 300, itl=0.03)

    def pred(f, p):
        if not f.engine or not p.engine or len(f.engine.replicas) < 2:
            return False
        return (f.engine.replicas[1].preemptions_total or 0) > (p.engine.replicas[1].preemptions_total or 0)
    win = frames_window(fr, pred, w.tick_s, after=100)
    return fr, win, (1,), meta(w, "vllm", "L40S"), \
        "two independent vLLM servers; sticky sessions pin a big customer's long chats to the second (GPU 1)"


def kv_a10g_growth(name):
    w, engs = serving_box(name, gpu="A10G", version=0.10, model="llama8b",
                          rate=lambda t: 0.3 + 0.9 * ramp(t, 80, 160), make=chat(2000, 700),
                          duration=320, tick_s=2.0, scrape_s=4.0, mem_util=0.92, max_seqs=64)
    fr = _run_serve(w, engs, 0.3, 2000, 700, itl=0.03)
    win = frames_window(fr, lambda f, p: (f.engine.preemptions_total or 0) > (p.engine.preemptions_total or 0)
                        if f.engine and p.engine else False, w.tick_s, after=80)
    return fr, win, None, meta(w, "vllm", "A10G"), \
        "vLLM 0.10 on a 24 GB A10G: a marketing campaign ramps traffic; the small KV pool overflows"


# ------------------------------------------------------------------ gpu_shared

def _intruder(w, pid, gi, a, b, name, cmd, mem, share_of=lambda t: 0.5):
    p = Proc(pid, (gi,), name, cmd, mem, user="bob", start=w.start_wall + a, alive_from=a,
             alive_to=b, cpu_rate=1.0,
             sm_of=lambda w_, g: float(round((g.util_gpu_pct or 0) * 0.5)))
    w.procs.append(p)
    return p


def gs_cron_eval(name):
    w, engs = serving_box(name, gpu="H100", version=0.32, model="llama8b", rate=diurnal(7.0, 0.1, 1500),
                          make=chat(800, 250), duration=300)
    e = engs[0]
    _intruder(w, 51377, 0, 120, 215, "python", "python eval_harness.py --model ckpt-1830 --tasks mmlu",
              14 << 30)

    def hook(w_, t):
        e.shared = (0.5, G.GEMM) if 120 <= t < 215 else None
    w.hooks.append(hook)
    w.procs[0].sm_of = lambda w_, g: float(round((g.util_gpu_pct or 0) * (0.5 if e.shared else 1.0)))
    fr = _run_serve(w, engs, 7.0, 800, 250)
    return fr, (120.0, 215.0), (0,), meta(w, "vllm", "H100"), \
        "a co-tenant's nightly eval cron job starts on the serving GPU at 120 s and time-slices with it"


def gs_ddp_notebook_gpu2(name):
    w, tr = training_box(name, gpu="A100", n_gpus=4, compute_s=0.6, comm_s=0.05, duration=300)
    _intruder(w, 60231, 2, 110, 300, "python", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-3.json",
              11 << 30)
    tr.work[2] = lambda t: 2.0 if t >= 110 else 1.0
    orig = tr.advance

    def adv(world, now, dt):
        out, nvl = orig(world, now, dt)
        if now >= 110:
            busy = sum(s for s, _ in out[2])
            out[2] = [(s * 0.5, sig) for s, sig in out[2]] + [(max(0.0, dt - busy * 0.5) * 0.9, G.GEMM)]
        return out, nvl
    tr.advance = adv
    return w.run(), (110.0, 300.0), (2,), meta(w, "none", "A100"), \
        "a researcher's notebook grabs GPU 2 of a 4-GPU DDP job at 110 s; the whole job slows"


def gs_llamacpp_sd(name):
    w, engs = serving_box(name, gpu="L40S", kind="llamacpp", model="mistral7b", slots=4, ctx=32768,
                          rate=diurnal(0.8, 0.1, 600), make=chat(600, 300), duration=300, max_seqs=4)
    e = engs[0]
    on = lambda t: 100 <= t < 230
    _intruder(w, 70112, 0, 100, 230, "python", "python sd_batch.py --prompts nightly.txt", 12 << 30)
    w.hooks.append(lambda w_, t: setattr(e, "shared", (0.55, G.PREFILL) if on(t) else None))
    fr = _run_serve(w, engs, 0.8, 600, 300, itl=0.025)
    return fr, (100.0, 230.0), (0,), meta(w, "llamacpp", "L40S"), \
        "a Stable Diffusion batch is started on the chat server's GPU 100-230 s"


def gs_sglang_h200_train(name):
    w, engs = serving_box(name, gpu="H200", n_gpus=2, engines=2, kind="sglang", model="qwen7b",
                          rate=diurnal(8.0, 0.1, 1500), make=chat(700, 250), duration=300,
                          tick_s=2.0, scrape_s=2.0)
    e = engs[1]
    _intruder(w, 80555, 1, 90, 300, "python", "torchrun --nproc_per_node=1 pretrain_small.py", 40 << 30)
    w.hooks.append(lambda w_, t: setattr(e, "shared", (0.45, G.GEMM) if t >= 90 else None))
    fr = _run_serve(w, engs, 8.0, 700, 250)
    return fr, (90.0, 300.0), (1,), meta(w, "sglang", "H200"), \
        "two SGLang servers; a small pretraining run is launched on GPU 1 by mistake at 90 s"


# ------------------------------------------------------------------ spec_decode_rejected

def sd_vllm_domain_shift(name):
    w, engs = serving_box(name, gpu="H200", version=0.32, model="llama70b", n_gpus=2, tp=2,
                          rate=diurnal(1.5, 0.1, 1500), make=chat(800, 300), duration=300,
                          spec_k=4, accept=0.72)
    e = engs[0]
    e.accept_fn = lambda t: 0.72 - 0.64 * ramp(t, 100, 112)
    fr = _run_serve(w, engs, 1.5, 800, 300, itl=0.012)
    return fr, (104.0, 300.0), None, meta(w, "vllm", "H200"), \
        "EAGLE drafts, k=4: a new tenant's traffic (code in a language the draft never saw) from 100 s"


def sd_sglang_structured(name):
    w, engs = serving_box(name, gpu="H200", kind="sglang", model="llama8b", rate=diurnal(6.0, 0.1, 900),
                          make=chat(700, 250), duration=280, spec_k=3, accept=0.75)
    e = engs[0]
    e.accept_fn = lambda t: 0.1 if 95 <= t < 225 else 0.75
    fr = _run_serve(w, engs, 6.0, 700, 250, itl=0.008)
    return fr, (95.0, 225.0), None, meta(w, "sglang", "H200"), \
        "structured-output clients (JSON schema) 95-225 s: the draft head's guesses are rejected"


def sd_llamacpp_language(name):
    w, engs = serving_box(name, gpu="A10G", kind="llamacpp", model="llama8b", slots=4, ctx=16384,
                          rate=diurnal(0.7, 0.1, 600), make=chat(400, 300), duration=300,
                          spec_k=8, accept=0.6, max_seqs=4)
    e = engs[0]
    e.accept_fn = lambda t: 0.6 - 0.52 * ramp(t, 110, 130)
    fr = _run_serve(w, engs, 0.7, 400, 300, itl=0.03)
    return fr, (118.0, 300.0), None, meta(w, "llamacpp", "A10G"), \
        "llama-server with a 1B draft model: users switch to Japanese; acceptance collapses"


# ------------------------------------------------------------------ healthy look-alikes

def ok_diurnal(name):
    w, engs = serving_box(name, gpu="H100", version=0.32, model="llama8b",
                          rate=diurnal(6.0, 0.45, 400), make=chat(900, 260), duration=360)
    return _run_serve(w, engs, 6.0), None, None, meta(w, "vllm", "H100"), \
        "diurnal traffic (compressed): load and tokens/s follow the users, nothing is wrong"


def ok_graph_decode(name):
    w, engs = serving_box(name, gpu="H200", version=0.3, model="llama70b", n_gpus=2, tp=2,
                          rate=lambda t: 0.5, make=chat(300, 900, cached=0.0), duration=240)
    return _run_serve(w, engs, 0.5, 300, 900, itl=0.012), None, None, meta(w, "vllm", "H200"), \
        "few long decodes on a TP2 70B: CUDA-graph decode keeps GPU-Util at 100 % with modest SM and tensor"


def ok_deploy_restart(name):
    from .serve import Engine
    w, engs = serving_box(name, gpu="H100", version=0.32, model="llama8b", rate=diurnal(6.0, 0.1, 1500),
                          make=chat(800, 250), duration=330)
    e = engs[0]
    down = (100.0, 175.0)
    proc = w.procs[0]
    new_pid = proc.pid + 977
    state = {"swapped": False}

    def hook(w_, t):
        if down[0] <= t < down[1]:
            e.alive = False
            e.running.clear()
            e.waiting.clear()
            e.kv_used = 0.0
        elif t >= down[1] and not state["swapped"]:
            state["swapped"] = True
            e.alive = True
            for k in ("c_gen", "c_prompt", "c_cached", "c_fin", "c_pre", "c_steps", "c_pf_s",
                      "c_dec_s", "c_fwd", "c_flops", "c_read", "c_write", "host_cpu_s", "busiest_s"):
                setattr(e, k, 0.0)
            e.invol = 0
            for h in e.h.values():
                h.counts = [0.0] * len(h.counts)
                h.sum = 0.0
    w.hooks.append(hook)
    # the old process exits at 100 s; the new one loads weights (memory grows) from 130 s
    proc.alive_to = down[0]
    w.procs.append(Proc(new_pid, (0,), "VLLM::EngineCore", proc.cmdline, proc.mem, ppid=new_pid - 41,
                        start=w.start_wall + 128, alive_from=128.0))
    e.pids = (new_pid - 41, new_pid)
    warmup = lambda t: 150 <= t < 172
    w.actors.append(Program(w.gpus, lambda rng, t, gi: [(0.9, G.TINY), (0.08, G.GEMM)] if warmup(t) else []))
    w.engine_url_down = lambda t: ("connection refused" if down[0] <= t < down[1] else None)
    traffic = w.actors[0]
    traffic_rate = traffic.rate
    traffic.rate = lambda t: 0.0 if down[0] <= t < down[1] else traffic_rate(t) * (1.6 if down[1] <= t < down[1] + 30 else 1.0)
    return _run_serve(w, engs, 6.0, 800, 250), None, None, meta(w, "vllm", "H100"), \
        "a deploy restarts vLLM at 100 s: engine down, weights load, CUDA-graph capture, counters restart, backlog drains"


def ok_benchmark(name):
    w, engs = serving_box(name, gpu="B200", version=0.32, model="qwen32b", rate=lambda t: 0.0,
                          make=chat(1000, 1000, cached=0.0), duration=300, mfu=True)
    e = engs[0]
    traffic = w.actors[0]

    def hook(w_, t):  # closed-loop benchmark: keep 256 requests in flight from 60 s
        if t >= 60:
            while len(e.running) + len(e.waiting) < 128:
                e.arrive(Req(t, prompt=1000, cached=0, out=1000))
    w.hooks.append(hook)
    return _run_serve(w, engs, 0.5, 1000, 1000, itl=0.02), None, None, meta(w, "vllm", "B200"), \
        "vllm bench serve --max-concurrency 128 from 60 s: 100 % util, big batch, tokens/s way up"


def ok_nightly_batch(name):
    w, engs = serving_box(name, gpu="A100", n_gpus=4, engines=4, dp_port=True, kind="sglang",
                          model="qwen7b", rate=lambda t: 0.0, make=chat(600, 350), duration=300,
                          tick_s=2.0, scrape_s=6.0)

    def hook(w_, t):
        for e in engs:
            while len(e.waiting) < 2500:
                e.arrive(Req(t - 600, prompt=lognorm(w_.rng, 600, 0.4), cached=0,
                             out=lognorm(w_.rng, 350, 0.5)))
    w.hooks.append(hook)
    return _run_serve(w, engs, 4.0, 600, 350, itl=0.03), None, None, meta(w, "sglang", "A100"), \
        "nightly offline batch: 10k requests queued by design, data-parallel 4, KV well used"


def ok_ddp_steady(name):
    w, tr = training_box(name, gpu="H100", n_gpus=8, compute_s=0.55, comm_s=0.05,
                         tokens_per_step=8 * 16 * 4096, counter="tokens", duration=300, ebpf=True)
    return w.run(), None, None, meta(w, "none", "H100"), "steady DDP pretraining with a tokens counter and eBPF"


def ok_checkpoint(name):
    w, tr = training_box(name, gpu="H200", n_gpus=8, compute_s=0.8, comm_s=0.07, fsdp=True,
                         tokens_per_step=8 * 8 * 8192, counter="tokens", duration=330, tick_s=2.0)
    done = set()

    def pause(t):
        for at in (90.0, 240.0):
            if t >= at and at not in done:
                done.add(at)
                return ("ckpt", 38.0)
        return None
    tr.pause = pause
    w.host.extra = lambda t: 10.0 if (90 <= t < 128 or 240 <= t < 278) else 0.0
    return w.run(), None, None, meta(w, "none", "H200"), \
        "FSDP job writes a sharded checkpoint twice (38 s each): GPUs idle, counter flat, by design"


def ok_eval_pass(name):
    w, tr = training_box(name, gpu="A100", n_gpus=4, compute_s=0.6, comm_s=0.05,
                         samples_per_step=4 * 32, counter="samples", duration=300)
    done = set()

    def pause(t):
        if t >= 150 and 150 not in done:
            done.add(150)
            return ("eval", 45.0)
        return None
    tr.pause = pause
    return w.run(), None, None, meta(w, "none", "A100"), \
        "DDP job runs its periodic validation pass at 150 s for 45 s: training counter stops, util changes"


def ok_power_capped(name):
    w, engs = serving_box(name, gpu="H200", version=0.32, model="qwen32b", rate=diurnal(2.5, 0.1, 1500),
                          make=chat(1500, 250), duration=260, power_limit=450.0)
    return _run_serve(w, engs, 2.5, 1500, 250, itl=0.025), None, None, meta(w, "vllm", "H200"), \
        "the fleet runs H200s capped at 450 W all the time: 'power cap' reason steady, throughput as planned"


def ok_evening_drop(name):
    w, engs = serving_box(name, gpu="L40S", version=0.29, model="llama8b",
                          rate=lambda t: 4.0 - 3.0 * ramp(t, 60, 200), make=chat(700, 250), duration=300,
                          max_seqs=128)
    return _run_serve(w, engs, 4.0, 700, 250, itl=0.03), None, None, meta(w, "vllm", "L40S"), \
        "evening: traffic falls to a quarter, util and tokens/s fall with it"


def ok_100k_tenant(name):
    frac = lambda t: 0.01
    w, engs = serving_box(name, gpu="H200", n_gpus=2, tp=2, version=0.32, model="llama70b",
                          rate=lambda t: 1.5, make=_tenant(chat(800, 200), frac, 100000, 300),
                          duration=300, chunk=2048)
    return _run_serve(w, engs, 1.5, 1800, 210, itl=0.03), None, None, meta(w, "vllm", "H200"), \
        "a tenant sends 100k-token contracts now and then; small prefill chunks keep decodes smooth"


def ok_idle_full_vram(name):
    w, engs = serving_box(name, gpu="A10G", version=0.32, model="llama8b", rate=lambda t: 0.0,
                          make=chat(), duration=240, mem_util=0.92)
    return _run_serve(w, engs, 0.0), None, None, meta(w, "vllm", "A10G"), \
        "vLLM with no traffic: VRAM 92 % used by the KV pool, GPU idle"


def ok_sglang_radix(name):
    w, engs = serving_box(name, gpu="H100", kind="sglang", model="llama8b", rate=diurnal(9.0, 0.15, 900),
                          make=chat(1500, 200, cached=0.45), duration=280)
    return _run_serve(w, engs, 9.0, 1500, 200, itl=0.015), None, None, meta(w, "sglang", "H100"), \
        "SGLang with a hot radix cache: evictable tokens fill the pool, no retractions"


def ok_llamacpp_chat(name):
    w, engs = serving_box(name, gpu="A10G", kind="llamacpp", model="llama8b", slots=2, ctx=16384,
                          rate=lambda t: 0.08, make=chat(300, 400, cached=0.6), duration=300,
                          max_seqs=2)
    return _run_serve(w, engs, 0.08, 300, 400, itl=0.03), None, None, meta(w, "llamacpp", "A10G"), \
        "one developer chatting with llama-server: bursts of decode, idle between"


def ok_rl_phases(name):
    w, tr = training_box(name, gpu="H100", n_gpus=2, compute_s=0.7, comm_s=0.05, samples_per_step=512,
                         counter="samples", duration=300)
    done = set()

    def pause(t):  # rollout generation phases: decode kernels, no training steps
        k = int(t // 75)
        if (t % 75) < 5 and k not in done:
            done.add(k)
            return ("eval", 32.0)
        return None
    tr.pause = pause
    return w.run(), None, None, meta(w, "none", "H100"), \
        "GRPO loop on 2 GPUs: 32 s of rollout generation, then training, alternating"


def ok_notebook_idle(name):
    def mix(rng, t, gi):
        if 70 <= t < 95 or 200 <= t < 212:
            return [(0.85, G.GEMM)]
        return []
    procs = [Proc(30211, (0,), "python", "/usr/bin/python -m ipykernel_launcher -f kernel-1.json",
                  18 << 30, user="carol", start=0.0)]
    w, _ = program_box(name, gpu="L40S", mix=mix, procs=procs, duration=280)
    return w.run(), None, None, meta(w, "none", "L40S"), \
        "a notebook holding 18 GB, idle but for two cells that train for a few seconds"


def ok_stencil(name):
    def mix(rng, t, gi):
        return [(0.985 + 0.01 * rng.random(), G.STENCIL)]
    procs = [Proc(12001, (0,), "lbm_solver", "/apps/lbm/lbm_solver -i wing.cfg", 61 << 30,
                  user="cfd", start=0.0)]
    w, _ = program_box(name, gpu="H100", mix=mix, procs=procs, duration=260)
    return w.run(), None, None, meta(w, "none", "H100"), \
        "a lattice-Boltzmann solver: DRAM-bound by nature at 91 %, steady, productive"


def ok_montecarlo(name):
    def mix(rng, t, gi):
        return [(0.99, G.MONTE)]
    procs = [Proc(14501, (i,), "mc_pricer", "/opt/risk/mc_pricer --paths 1e10", 5 << 30,
                  user="risk", start=0.0) for i in range(2)]
    w, _ = program_box(name, gpu="A100", n_gpus=2, mix=mix, procs=procs, duration=240)
    return w.run(), None, None, meta(w, "none", "A100"), \
        "Monte Carlo pricing on 2 A100s: 100 % util, power high, nothing to fix"


def ok_multi_llamacpp(name):
    w, engs = serving_box(name, gpu="L40S", n_gpus=4, engines=4, kind="llamacpp", model="llama8b",
                          slots=4, ctx=32768, rate=lambda t: 1.2, make=chat(500, 250), duration=300,
                          split=[1.0, 0.6, 0.3, 0.0], max_seqs=4)
    return _run_serve(w, engs, 1.2, 500, 250, itl=0.03), None, None, meta(w, "llamacpp", "L40S"), \
        "four llama-servers on four L40S, uneven load by design, one idle"


def ok_dp_uneven(name):
    w, engs = serving_box(name, gpu="H100", n_gpus=4, engines=4, dp_port=True, version=0.27,
                          model="llama8b", rate=diurnal(16.0, 0.1, 1500), make=chat(800, 250),
                          split=[1.0, 1.0, 0.7, 0.5], duration=280, scrape_s=3.0)
    return _run_serve(w, engs, 16.0, 800, 250), None, None, meta(w, "vllm", "H100"), \
        "vLLM data-parallel 4 behind one port; the router's hash sends unequal load, all healthy"


def ok_burst_drain(name):
    w, engs = serving_box(name, gpu="A100", version=0.32, model="llama8b",
                          rate=diurnal(5.0, 0.0, 900, burst=[(120, 140, 5.0)]), make=chat(700, 220),
                          duration=280)
    return _run_serve(w, engs, 5.0, 700, 220, itl=0.02), None, None, meta(w, "vllm", "A100"), \
        "a batch client fires 500 requests in 20 s: queue spikes and drains, no preemptions"


def ok_spec_healthy(name):
    w, engs = serving_box(name, gpu="H200", version=0.32, model="llama8b", rate=diurnal(5.0, 0.2, 600),
                          make=chat(700, 300), duration=280, spec_k=3, accept=0.7)
    engs[0].accept_fn = lambda t: 0.65 + 0.1 * math.sin(t / 40.0)
    return _run_serve(w, engs, 5.0, 700, 300, itl=0.008), None, None, meta(w, "vllm", "H200"), \
        "n-gram speculative decoding with acceptance wandering 0.55-0.75 with the traffic mix"


def ok_moe_mild(name):
    w, engs = serving_box(name, gpu="H100", n_gpus=2, tp=2, version=0.32, model="mixtral",
                          rate=diurnal(6.0, 0.1, 1000), make=chat(700, 260), duration=260)
    engs[0].imbalance = (1, 1.06)
    return _run_serve(w, engs, 6.0, 700, 260), None, None, meta(w, "vllm", "H100"), \
        "MoE on TP2 with the usual few-percent expert imbalance"


def ok_warm_card(name):
    w, engs = serving_box(name, gpu="L40S", version=0.32, model="llama8b", rate=diurnal(3.5, 0.05, 900),
                          make=chat(700, 260), duration=260, ambient=40.0, max_seqs=128)
    return _run_serve(w, engs, 3.5, 700, 260, itl=0.03), None, None, meta(w, "vllm", "L40S"), \
        "hot aisle: the L40S runs at ~80 C with fans high, below its slowdown temperature"


def ok_fsdp_comm(name):
    w, tr = training_box(name, gpu="H100", n_gpus=4, compute_s=0.9, comm_s=0.12, fsdp=True,
                         tokens_per_step=4 * 4 * 8192, counter="tokens", duration=300, tick_s=2.0)
    return w.run(), None, None, meta(w, "none", "H100"), \
        "FSDP fine-tune: all-gathers take ~20 % of every step on all ranks, equal and steady"


def ok_rare_preempt(name):
    w, engs = serving_box(name, gpu="H100", version=0.32, model="qwen32b", rate=diurnal(4.2, 0.1, 1200),
                          make=_long_out(chat(1500, 500), 0, 700, 0.3), duration=280)
    return _run_serve(w, engs, 4.2, 1500, 500, itl=0.025), None, None, meta(w, "vllm", "H100"), \
        "busy hour with KV usage near 80 %: maybe a preemption or two, latency fine"


def ok_sglang_tp8(name):
    w, engs = serving_box(name, gpu="B200", n_gpus=8, tp=8, kind="sglang", model="llama70b",
                          rate=diurnal(12.0, 0.1, 1500), make=chat(1200, 300), duration=300,
                          tick_s=2.0, scrape_s=10.0)
    return _run_serve(w, engs, 12.0, 1200, 300, itl=0.015), None, None, meta(w, "sglang", "B200"), \
        "SGLang TP8 on B200, 2 s ticks, engine read every 10 s, steady"


def ok_busy_loader(name):
    w, tr = training_box(name, gpu="H100", n_gpus=4, compute_s=0.6, comm_s=0.05, workers=24,
                         decode_s=lambda t: 0.6 * 24 * 0.75, samples_per_step=4 * 256,
                         counter="samples", duration=280, host_cpus=48)
    return w.run(), None, None, meta(w, "none", "H100"), \
        "CPU-heavy augmentation: 24 loader workers keep the host ~60 % busy yet every batch is ready in time"


CATALOGUE = [
    ("over-vllm032-h100-n16-logprobs", "vllm-serving", "oversized_request", over_n16_logprobs),
    ("over-vllm011-h200-tp2-n32", "vllm-serving", "oversized_request", over_bestof_tp2),
    ("over-sglang-a100-topk-logprobs", "sglang-serving", "oversized_request", over_prompt_logprobs_sglang),
    ("over-vllm-dp2-h100-engine1", "vllm-dp", "oversized_request", over_dp2_one_replica),
    ("pf-vllm-h100-rag-tenant", "vllm-serving", "prefill_interference", pf_rag_tenant),
    ("pf-sglang-h200-tp4-longdoc-peak", "sglang-serving", "prefill_interference", pf_sglang_tp4_longdoc),
    ("pf-llamacpp-l40s-pasted-files", "llamacpp", "prefill_interference", pf_llamacpp_paste),
    ("pf-vllm010-a100-tp2-2s", "vllm-serving", "prefill_interference", pf_vllm010_a100_tp2),
    ("cs-ddp-h100x8-rank5-packing", "training", "collective_straggler", cs_ddp_rank5),
    ("cs-vllm-mixtral-h100x4-hot-expert", "vllm-tp", "collective_straggler", cs_moe_hot_expert),
    ("cs-fsdp-h200x4-rank1-tiles", "training", "collective_straggler", cs_fsdp_rank1),
    ("cs-ddp-a100x4-rank3-nocounter", "training", "collective_straggler", cs_ddp_a100_rank3),
    ("is-ddp-h100x8-jpeg-creep", "training", "input_stall", is_jpeg_slow_onset),
    ("is-a10g-lora-tokenize", "training", "input_stall", is_a10g_tokenize),
    ("is-ddp-a100x2-nfs", "training", "input_stall", is_nfs_slow),
    ("is-b200x8-object-store-intermittent", "training", "input_stall", is_object_store_intermittent),
    ("lj-vllm-h100-cfs-quota", "vllm-serving", "host_launch_jitter", lj_vllm_cfs_quota),
    ("lj-train-h100-irq-storm", "training", "host_launch_jitter", lj_training_irq),
    ("lj-sglang-l40s-kswapd", "sglang-serving", "host_launch_jitter", lj_sglang_l40s),
    ("hc-vllm-h200-make-j96", "vllm-serving", "host_cpu_contention", hc_compile_job),
    ("hc-vllm-a10g-noisy-neighbour", "vllm-serving", "host_cpu_contention", hc_noisy_neighbour),
    ("hc-ddp-l40s-preproc-pinned", "training", "host_cpu_contention", hc_trainer_preproc),
    ("hc-llamacpp-a100x4-backup", "multi-server", "host_cpu_contention", hc_llamacpp_box),
    ("tk-notebook-h100-row-loop", "notebook", "tiny_kernels", tk_notebook),
    ("tk-rl-b200-python-env", "training", "tiny_kernels", tk_rollout_env),
    ("tk-cuda-h200-per-box-nms", "cuda-program", "tiny_kernels", tk_cuda_postproc),
    ("mb-vllm-h100-agent-creep", "vllm-serving", "memory_bandwidth", mb_agent_context_creep),
    ("mb-vllm-h200-tp2-40k-sessions", "vllm-tp", "memory_bandwidth", mb_h200_tp2_long),
    ("mb-sglang-b200-radix-creep", "sglang-serving", "memory_bandwidth", mb_sglang_b200),
    ("th-vllm-l40s-fan-failing", "vllm-serving", "throttling", th_fan_failing),
    ("th-ddp-h100x8-gpu3-thermal", "training", "throttling", th_ddp_gpu3_thermal),
    ("th-vllm-h200-power-brake", "vllm-serving", "throttling", th_power_brake),
    ("th-vllm-a100-pl-190", "vllm-serving", "throttling", th_power_limit),
    ("kv-vllm-h100-thinking-mode", "vllm-serving", "kv_pressure", kv_reasoning),
    ("kv-sglang-a100-peak-retract", "sglang-serving", "kv_pressure", kv_sglang_retract),
    ("kv-vllm-l40s-two-servers-sticky", "multi-server", "kv_pressure", kv_dp2_sticky),
    ("kv-vllm010-a10g-campaign", "vllm-serving", "kv_pressure", kv_a10g_growth),
    ("gs-vllm-h100-cron-eval", "vllm-serving", "gpu_shared", gs_cron_eval),
    ("gs-ddp-a100x4-notebook-gpu2", "training", "gpu_shared", gs_ddp_notebook_gpu2),
    ("gs-llamacpp-l40s-stable-diffusion", "llamacpp", "gpu_shared", gs_llamacpp_sd),
    ("gs-sglang-h200x2-stray-pretrain", "multi-server", "gpu_shared", gs_sglang_h200_train),
    ("sd-vllm-h100-tp2-eagle-shift", "vllm-tp", "spec_decode_rejected", sd_vllm_domain_shift),
    ("sd-sglang-h200-json-schema", "sglang-serving", "spec_decode_rejected", sd_sglang_structured),
    ("sd-llamacpp-a10g-japanese", "llamacpp", "spec_decode_rejected", sd_llamacpp_language),
    ("ok-vllm-h100-diurnal", "vllm-serving", None, ok_diurnal),
    ("ok-vllm-h200-tp2-graph-decode", "vllm-tp", None, ok_graph_decode),
    ("ok-vllm-h100-deploy-restart", "vllm-serving", None, ok_deploy_restart),
    ("ok-vllm-b200-benchmark", "vllm-serving", None, ok_benchmark),
    ("ok-sglang-a100x4-nightly-batch", "sglang-dp", None, ok_nightly_batch),
    ("ok-ddp-h100x8-steady-ebpf", "training", None, ok_ddp_steady),
    ("ok-fsdp-h200x8-checkpoint", "training", None, ok_checkpoint),
    ("ok-ddp-a100x4-eval-pass", "training", None, ok_eval_pass),
    ("ok-vllm-h200-power-capped", "vllm-serving", None, ok_power_capped),
    ("ok-vllm-l40s-evening-drop", "vllm-serving", None, ok_evening_drop),
    ("ok-vllm-h200-tp2-100k-tenant", "vllm-tp", None, ok_100k_tenant),
    ("ok-vllm-a10g-idle-full-vram", "vllm-serving", None, ok_idle_full_vram),
    ("ok-sglang-h100-radix-hot", "sglang-serving", None, ok_sglang_radix),
    ("ok-llamacpp-a10g-one-user", "llamacpp", None, ok_llamacpp_chat),
    ("ok-rl-h100x2-grpo-phases", "training", None, ok_rl_phases),
    ("ok-notebook-l40s-mostly-idle", "notebook", None, ok_notebook_idle),
    ("ok-cuda-h100-lbm-stencil", "cuda-program", None, ok_stencil),
    ("ok-cuda-a100x2-montecarlo", "cuda-program", None, ok_montecarlo),
    ("ok-llamacpp-l40sx4-uneven", "multi-server", None, ok_multi_llamacpp),
    ("ok-vllm-dp4-h100-uneven-router", "vllm-dp", None, ok_dp_uneven),
    ("ok-vllm-a100-burst-drains", "vllm-serving", None, ok_burst_drain),
    ("ok-vllm-h200-spec-wandering", "vllm-serving", None, ok_spec_healthy),
    ("ok-vllm-h100-tp2-moe-mild", "vllm-tp", None, ok_moe_mild),
    ("ok-vllm-l40s-hot-aisle", "vllm-serving", None, ok_warm_card),
    ("ok-fsdp-h100x4-comm-share", "training", None, ok_fsdp_comm),
    ("ok-vllm-h100-rare-preempt", "vllm-serving", None, ok_rare_preempt),
    ("ok-sglang-b200-tp8-slow-scrape", "sglang-serving", None, ok_sglang_tp8),
    ("ok-ddp-h100x4-busy-loader", "training", None, ok_busy_loader),
]
