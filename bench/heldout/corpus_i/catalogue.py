"""The traces: one builder per trace, registered with its truth.

Times inside a builder are seconds from the trace's start; the window is turned into
wall-clock seconds when the trace is generated.  A builder returns the Box (and may
return a function that computes the window from the run, when its end is where the
simulated work really ended, e.g. when the last oversized request finished).
"""

from __future__ import annotations

import math

from .serve import Req, Server, Traffic
from .train import Program, Tenant, Trainer

REG: list = []
L8 = "meta-llama/Llama-3.1-8B-Instruct"
L70 = "meta-llama/Llama-3.1-70B-Instruct"
L70F = "meta-llama/Llama-3.3-70B-Instruct-FP8"
Q7 = "Qwen/Qwen2.5-7B-Instruct"
Q14 = "Qwen/Qwen2.5-14B-Instruct"
Q32 = "Qwen/Qwen2.5-32B-Instruct"
MIS = "mistral-7b-instruct-v0.3.Q4_K_M.gguf"


def trace(name, family, cause, engine, gpu, n, tick, dur, window=None, culprit=None, note=""):
    def wrap(fn):
        REG.append(dict(name=name, family=family, cause=cause, engine=engine, gpu=gpu, n=n,
                        tick=tick, dur=dur, window=window, culprit=culprit, note=note, fn=fn))
        return fn
    return wrap


def ramp(t, a, r=0.0, b=1e12):
    """0 before a, rising to 1 over r seconds, 1 until b, 0 after."""
    if t < a or t >= b:
        return 0.0
    return 1.0 if r <= 0 else min(1.0, (t - a) / r)


def wave(t, period, amp, phase=0.0):
    return 1 + amp * math.sin(2 * math.pi * (t / period + phase))


def onoff(t, on, off, hi, lo, phase=0.0):
    return hi if (t + phase) % (on + off) < on else lo


def server(box, kind, gpus, model, rate, *, port=8000, **kw):
    traffic_kw = {k: kw.pop(k) for k in ("prompt", "out", "sig_p", "sig_o", "cached", "max_prompt",
                                          "max_out") if k in kw}
    tr = Traffic(rate, **traffic_kw)
    s = Server(kind, gpus, box.boards, model, box.rng, tr, url=f"http://127.0.0.1:{port}/metrics", **kw)
    return box.add(s)


def heavy_requests(s, times, heavy, out=1500, n=8, prompt=700):
    for t in times:
        s.traffic.inject.append((t, lambda w, h=heavy: Req(w, prompt, 0, out, n=n, max_tokens=4096, heavy=h)))
    s.traffic.inject.sort(key=lambda x: x[0])


def heavy_window(s, start):
    def win():
        return (start, s.heavy_end or start + 60)
    return win


def cpu_cap(job, fn):
    def ev(t, box):
        job.cpu_cap = fn(t)
    return ev


def at(fn):
    return lambda t, box: fn(t)


# ====================================================================== healthy
@trace("vllm-h100-diurnal-rise", "serving", None, "vllm", "H100", 1, 1, 360,
       note="morning ramp: 2 -> 9 req/s over five minutes; batch and tokens/s follow")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 2 + 7 * min(1, t / 300) * wave(t, 47, 0.08))


@trace("vllm-h200-traffic-falls-to-a-tenth", "serving", None, "vllm", "H200", 1, 2, 360,
       note="evening: 10 -> 1 req/s within two minutes; long generations keep util up")
def _(box):
    server(box, "vllm", [0], Q14, lambda t: 7 - 6.3 * ramp(t, 140, 120), out=600, sig_o=1.0)


@trace("sglang-h100-bursty-onoff", "serving", None, "sglang", "H100", 1, 1, 300,
       note="a batch client: 15 s bursts of 14 req/s, 20 s of 1 req/s")
def _(box):
    server(box, "sglang", [0], L8, lambda t: onoff(t, 15, 20, 14, 1), realtime=True, port=30000)


@trace("vllm-h100-long-context-tenant-steady", "serving", None, "vllm", "H100", 1, 2, 300,
       note="a document-QA tenant: 14k-token prompts all along; DRAM high and steady")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 1.2 * wave(t, 61, 0.15), prompt=14000, sig_p=0.3, out=350,
           cached=0.3)


@trace("vllm-h100-warmup-after-deploy", "serving", None, "vllm", "H100", 1, 1, 300,
       note="engine starts: weights load, KV reserved, graphs captured, then a load balancer ramps traffic")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 6 * ramp(t, 55, 90))
    s.up = False

    def ev(t, b):
        s.mem_cur[0] = 0 if t < 8 else (int(s.weights * min(1, (t - 8) / 20)) if t < 30 else s.mem)
        if t >= 50 and not s.up:
            s.up = True
            s.reset_counters()
    box.events.append(ev)


@trace("vllm-h100-model-reload", "serving", None, "vllm", "H100", 1, 1, 420,
       note="rolling update: endpoint gone 45 s, VRAM empties and refills, counters restart, slow start")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 7 * wave(t, 53, 0.1) * (1 if t < 160 else ramp(t, 215, 100)))

    def ev(t, b):
        if 160 <= t < 170:
            s.up = False
            s.mem_cur[0] = 0
            s.waiting.clear()
            s.running.clear()
        elif 170 <= t < 205:
            s.mem_cur[0] = int(s.weights * min(1, (t - 170) / 18))
        elif t >= 205 and not s.up:
            s.mem_cur[0] = s.mem
            s.up = True
            s.reset_counters()
            s.core_pid = s.worker_pids[0] = b.pid()
            s.api_pid = b.pid()
    box.events.append(ev)


@trace("train-h100-checkpoint-pauses", "training", None, "trainer", "H100", 1, 1, 400,
       note="a 1-GPU fine-tune saving a checkpoint every 2 minutes (15 s of idle GPU, CPU serialising)")
def _(box):
    box.add(Trainer([0], box.rng, step_s=0.62, tokens=16 * 2048, ckpt_every=120, ckpt_s=15, ckpt_at=70,
                    mem_gb=71, workers=6))


@trace("ddp-8xh100-eval-pass", "training", None, "trainer", "H100", 8, 2, 420,
       note="DDP pre-training; an eval pass every 150 s for 30 s (forward only, train counter stops)")
def _(box):
    box.add(Trainer(list(range(8)), box.rng, step_s=0.9, comm_s=0.05, tokens=8 * 8 * 4096,
                    eval_every=150, eval_s=30, eval_at=100, mem_gb=68, workers=8))


@trace("ddp-4xh100-grad-accum-coarse-counter", "training", None, "trainer", "H100", 4, 1, 300,
       note="gradient accumulation x8: the step counter moves once every ~3 s")
def _(box):
    box.add(Trainer(list(range(4)), box.rng, step_s=0.36, comm_s=0.02, accum=8, tokens=4 * 8 * 8 * 2048,
                    publish_s=3.0, mem_gb=64))


@trace("fsdp-4xa100-ranks-differ-a-little", "training", None, "none", "A100", 4, 2, 360,
       note="FSDP, no throughput counter; ranks differ 2-3% in power and temperature")
def _(box):
    tr = box.add(Trainer(list(range(4)), box.rng, step_s=1.1, comm_s=0.12, counter=None, mem_gb=74,
                         cmd="torchrun --nproc-per-node 4 train_fsdp.py"))
    tr.rank_mult = {0: 1.0, 1: 1.02, 2: 0.99, 3: 1.03}


@trace("mig-h100-two-instances", "serving", None, "vllm", "H100", 1, 2, 300,
       note="MIG 3g.40gb x2, a small vLLM on each; no GPU-Util in MIG mode")
def _(box):
    a = server(box, "vllm", [0], Q7, lambda t: 3 * wave(t, 71, 0.2), gpu_mem_util=0.42)
    b = server(box, "vllm", [0], Q7, lambda t: 2 * wave(t, 53, 0.3, 0.3), gpu_mem_util=0.42, port=8001)
    box.mig = {0: [("3g.40gb", a), ("3g.40gb", b)]}


@trace("vllm-4xh100-second-process-other-gpu", "serving", None, "vllm", "H100", 4, 1, 300,
       note="vLLM TP2 on GPUs 0-1; a colleague's notebook trains on GPU 3 (its own GPU)")
def _(box):
    server(box, "vllm", [0, 1], Q32, lambda t: 4 * wave(t, 59, 0.1))
    box.add_tenant(Tenant(3, 95, 22, lambda t: 0.7 + 0.2 * math.sin(t / 9)))


@trace("ddp-8xh100-at-power-cap-steady", "training", None, "none", "H100", 8, 2, 360,
       note="bf16 pre-training at the 700 W cap: clocks held ~1.5 GHz, 'power cap' set, work steady")
def _(box):
    box.add(Trainer(list(range(8)), box.rng, step_s=1.4, tensor=0.85, comm_s=0.06, counter=None,
                    mem_gb=76, cmd="torchrun --nproc-per-node 8 pretrain.py"))


@trace("vllm-h100-offline-batch-finishing", "serving", None, "vllm", "H100", 1, 1, 330,
       note="an offline batch of 3000 prompts submitted at once; the queue drains, the GPU goes idle")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 0.0, out=300)
    for i in range(2400):
        s.traffic.inject.append((0.5 + i * 0.001, lambda w: s.traffic.request(w, box.rng)))


@trace("vllm-h200-prefix-cache-rag", "serving", None, "vllm", "H200", 1, 1, 300,
       note="RAG with a 5k-token shared system prompt: prompt tokens/s high, 85% from the prefix cache")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 5 * wave(t, 43, 0.2), prompt=6500, sig_p=0.25, cached=0.85,
           out=200)


@trace("llamacpp-a10g-chat-bursts", "serving", None, "llamacpp", "A10G", 1, 1, 300,
       note="llama-server -np 4 on an A10G; a small team's chat, bursty")
def _(box):
    server(box, "llamacpp", [0], MIS, lambda t: onoff(t, 20, 25, 0.9, 0.15), slots=4, port=8080,
           prompt=500, out=250, host_ms=1.5)


@trace("sglang-8xh200-independent-servers-healthy", "serving", None, "sglang", "H200", 8, 2, 300,
       note="eight SGLang servers, one per GPU, behind a router; traffic differs a little")
def _(box):
    for g in range(8):
        server(box, "sglang", [g], L8, lambda t, g=g: (3 + 0.3 * g) * wave(t, 50 + 7 * g, 0.15),
               port=30000 + g, realtime=True)


@trace("vllm-h100-summarization-long-prompts-normal", "serving", None, "vllm", "H100", 1, 1, 300,
       note="a summarisation service: 8k-token prompts all along; ITL p99 high but steady")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 1.4 * wave(t, 40, 0.2), prompt=8000, sig_p=0.35, out=300)


@trace("pp-4xh100-pipeline-bubbles", "training", None, "trainer", "H100", 4, 2, 360,
       note="pipeline-parallel 4 stages, 16 micro-batches; the last stage (loss) 8% heavier, as always")
def _(box):
    box.add(Trainer(list(range(4)), box.rng, step_s=2.4, pp=4, micro=16, counter="samples",
                    tokens=64 * 4096, stage_mult={3: 1.08}, mem_gb=58,
                    cmd="torchrun --nproc-per-node 4 train_pp.py"))


@trace("cuda-h200-matmul-at-power-cap", "cuda", None, "none", "H200", 1, 1, 240,
       note="a bf16 matmul benchmark: 700 W cap, clock ~1455 MHz, as the real H200 showed")
def _(box):
    box.add(Program([0], [dict(dur=1e9, busy=0.99, sm=0.956, tensor=0.929, dram=0.172, occ=0.141)],
                    mem_gb=88, cmd="python3 bench_matmul.py"))


@trace("vllm-h100-ebpf-healthy", "serving", None, "vllm", "H100", 1, 1, 300,
       note="eBPF probes on; normal launch latencies; mild traffic wave")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 5 * wave(t, 90, 0.25))
    box.ebpf = True


@trace("vllm-tp4-h100-ranks-differ", "serving", None, "vllm", "H100", 4, 2, 360,
       note="Llama-70B TP4; ranks differ a little in power and temperature")
def _(box):
    s = server(box, "vllm", [0, 1, 2, 3], L70, lambda t: 5 * wave(t, 77, 0.15))
    s.rank_mult = {0: 1.0, 1: 1.015, 2: 0.99, 3: 1.02}


@trace("vllm-h100-spec-acceptance-varies", "serving", None, "vllm", "H100", 1, 1, 300,
       note="EAGLE k=3; acceptance wanders 0.55-0.72 with the traffic mix")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 4 * wave(t, 80, 0.2), spec_k=3, accept=0.65)
    box.events.append(at(lambda t: setattr(s, "accept", 0.635 + 0.085 * math.sin(t / 41))))


@trace("vllm-h100-kv-high-no-preemption", "serving", None, "vllm", "H100", 1, 2, 300,
       note="a KV pool sized tight on purpose (gpu_memory_utilization 0.5): usage ~85%, no preemption")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 2.2 * wave(t, 60, 0.05), gpu_mem_util=0.43, prompt=3000,
           out=900, sig_o=0.4, sig_p=0.3)


@trace("vllm-l40s-evening-decline", "serving", None, "vllm", "L40S", 1, 2, 360,
       note="an L40S serving Qwen-7B; traffic halves over the trace")
def _(box):
    server(box, "vllm", [0], Q7, lambda t: 3 - 1.5 * min(1, t / 360))


@trace("sglang-b200-70b-fp8-bursty", "serving", None, "sglang", "B200", 1, 1, 300,
       note="SGLang, 70B FP8 on one B200, Poisson with minute-scale surges")
def _(box):
    server(box, "sglang", [0], L70F, lambda t: 4 * wave(t, 65, 0.35), realtime=False, port=30000)


@trace("train-a100-dataloader-fine", "training", None, "trainer", "A100", 1, 1, 300,
       note="1-GPU A100 training pinned; loader keeps up (small step-boundary dips)")
def _(box):
    tr = box.add(Trainer([0], box.rng, step_s=0.5, data_s=0.42, workers=8, tokens=32 * 1024, mem_gb=60))
    box.pin = tr


@trace("llamacpp-l40s-restart", "serving", None, "llamacpp", "L40S", 1, 1, 300,
       note="llama-server restarted by its operator at 150 s: counters reset, VRAM refills")
def _(box):
    s = server(box, "llamacpp", [0], L8, lambda t: 0.8, slots=8, port=8080, prompt=900, out=300,
               host_ms=1.5)

    def ev(t, b):
        if 150 <= t < 158:
            s.up = False
            s.mem_cur[0] = 0 if t < 153 else int(s.mem * (t - 153) / 5)
            s.waiting.clear()
            s.running.clear()
        elif t >= 158 and not s.up:
            s.up = True
            s.mem_cur[0] = s.mem
            s.reset_counters()
            s.core_pid = s.api_pid = s.worker_pids[0] = b.pid()
    box.events.append(ev)


# ====================================================================== oversized_request
@trace("vllm-h100-n8-logprobs-request", "serving", "oversized_request", "vllm", "H100", 1, 1, 330,
       note="vLLM #37343's shape: n=8 with logprobs over the vocab; every step slow, ITL ~3x")
def _(box):
    s = server(box, "vllm", [0], Q7, lambda t: 5 * wave(t, 70, 0.1))
    heavy_requests(s, [130, 175, 215], 0.020, out=900)
    return heavy_window(s, 130)


@trace("sglang-h200-giant-sampling-request", "serving", "oversized_request", "sglang", "H200", 1, 2, 360,
       note="return_logprob with top_logprobs_num=20, n=6: moderate (ITL ~1.7x)")
def _(box):
    s = server(box, "sglang", [0], L8, lambda t: 6 * wave(t, 55, 0.1), realtime=True, port=30000)
    heavy_requests(s, [140, 190], 0.0065, out=1400, n=6)
    return heavy_window(s, 140)


@trace("vllm-8xh100-one-server-oversized", "serving", "oversized_request", "vllm", "H100", 8, 2, 360,
       culprit=(5,), note="eight independent vLLM servers; GPU 5's gets best-of-8 + logprobs requests")
def _(box):
    ss = [server(box, "vllm", [g], L8, lambda t, g=g: 4 * wave(t, 60 + 5 * g, 0.12), port=8000 + g)
          for g in range(8)]
    heavy_requests(ss[5], [150, 200, 240], 0.022, out=1000)
    return heavy_window(ss[5], 150)


@trace("llamacpp-l40s-n-probs-request", "serving", "oversized_request", "llamacpp", "L40S", 1, 1, 330,
       note="llama-server: a client asks n_probs=100 with 3000 tokens; all slots slow ~2x")
def _(box):
    s = server(box, "llamacpp", [0], L8, lambda t: 0.7 * wave(t, 45, 0.2), slots=8, port=8080,
               prompt=700, out=280, host_ms=1.5)
    heavy_requests(s, [140], 0.030, out=3000, n=1)
    return heavy_window(s, 140)


# ====================================================================== prefill_interference
@trace("vllm-h100-rag-burst-long-prompts", "serving", "prefill_interference", "vllm", "H100", 1, 1, 330,
       window=(140, 240), note="a RAG tenant adds 16k-token contexts (~1/s): ITL 3-4x, prompt tokens dominate")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 5 * wave(t, 50, 0.1) + 1.1 * ramp(t, 140, 0, 240))
    s.traffic.mods.append((140, 240, lambda t: {"prompt": 900 if box.rng.random() < 0.9 else 16000,
                                                 "max_prompt": 22000}))


@trace("sglang-h100-new-request-storm", "serving", "prefill_interference", "sglang", "H100", 1, 1, 330,
       window=(150, 230), note="SGLang: a burst of 4k-token prompts; prefill batches stall the decodes")
def _(box):
    s = server(box, "sglang", [0], L8, lambda t: 4 * wave(t, 60, 0.1) + 2.5 * ramp(t, 150, 0, 230),
               realtime=True, port=30000)
    s.traffic.mods.append((150, 230, lambda t: {"prompt": 800 if box.rng.random() < 0.45 else 4000}))


@trace("vllm-h200-10k-prompts-in-growing-load", "serving", "prefill_interference", "vllm", "H200", 1, 2, 400,
       window=(170, 400), note="load grows; from 170 s a tenant adds 10k-token prompts at rising rate: ITL ~1.6x")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 3 + 2.5 * t / 400)
    s.traffic.mods.append((170, 1e9, lambda t: {"prompt": 800 if box.rng.random() < 1 - 0.13 * min(1, (t - 170) / 90) else 10000}))


@trace("vllm-tp2-a100-long-prompt-tenant", "serving", "prefill_interference", "vllm", "A100", 2, 2, 360,
       window=(160, 290), note="A100 TP2 Qwen-14B: a code-review bot sends 12k-token diffs; moderate")
def _(box):
    s = server(box, "vllm", [0, 1], Q14, lambda t: 2.5 * wave(t, 60, 0.1) + 0.3 * ramp(t, 160, 20, 290))
    s.traffic.mods.append((160, 290, lambda t: {"prompt": 800 if box.rng.random() < 0.88 else 12000}))


# ====================================================================== collective_straggler
@trace("vllm-tp4-h100-gridlock-one-gpu-750mhz", "serving", "collective_straggler", "vllm", "H100", 4, 1, 330,
       window=(150, 330), culprit=(2,), note="TP4: GPU 2 left at locked clocks 600-900 MHz; the others wait in all-reduce")
def _(box):
    server(box, "vllm", [0, 1, 2, 3], L70, lambda t: 3 * wave(t, 66, 0.1), prompt=1000)
    b = box.boards[2]

    def ev(t, bx):
        if t >= 150:
            b.forced_mhz = 750 + 150 * math.sin(t / 13)
            b.forced_reasons = ()
    box.events.append(ev)


@trace("ddp-8xh100-one-rank-overheats", "training", "collective_straggler", "trainer", "H100", 8, 2, 420,
       window=(130, 420), culprit=(5,), note="a fan wall fails behind GPU 5: it heats over minutes, thermal slowdown, 7 ranks wait")
def _(box):
    box.add(Trainer(list(range(8)), box.rng, step_s=0.8, tensor=0.8, comm_s=0.05, tokens=8 * 8 * 4096,
                    mem_gb=70))
    b = box.boards[5]
    box.events.append(at(lambda t: setattr(b, "extra_r", 0.062 * ramp(t, 130, 120))))


@trace("fsdp-4xa100-rank-hw-slowdown", "training", "collective_straggler", "none", "A100", 4, 2, 360,
       window=(160, 360), culprit=(3,), note="FSDP, no counter: GPU 3's board asserts HW slowdown (PSU): 1410 -> 1005 MHz")
def _(box):
    box.add(Trainer(list(range(4)), box.rng, step_s=1.0, tensor=0.8, comm_s=0.1, counter=None,
                    mem_gb=74, cmd="torchrun --nproc-per-node 4 train_fsdp.py"))
    b = box.boards[3]

    def ev(t, bx):
        if t >= 160:
            b.forced_mhz, b.forced_reasons = 1005, ("hw slowdown",)
    box.events.append(ev)


@trace("pp-4xh100-stage-gpu-downclocked", "training", "collective_straggler", "trainer", "H100", 4, 2, 360,
       window=(150, 360), culprit=(1,), note="pipeline-parallel: stage 1's GPU drops to 1200 MHz (HW slowdown); every stage waits")
def _(box):
    box.add(Trainer(list(range(4)), box.rng, step_s=2.4, pp=4, micro=16, counter="samples",
                    tokens=64 * 4096, mem_gb=58, cmd="torchrun --nproc-per-node 4 train_pp.py"))
    b = box.boards[1]

    def ev(t, bx):
        if t >= 150:
            b.forced_mhz, b.forced_reasons = 1200, ("hw slowdown",)
    box.events.append(ev)


# ====================================================================== input_stall
@trace("train-h100-jpeg-decode-loader", "training", "input_stall", "trainer", "H100", 1, 1, 360,
       window=(150, 360), note="a vision job's augmentation gets heavier (new transform): loader 0.55 s/batch vs 0.3 s steps; pinned")
def _(box):
    tr = box.add(Trainer([0], box.rng, step_s=0.3, data_s=0.2, workers=6, tokens=256 * 4096 // 4096 * 4096,
                         counter="samples", mem_gb=40))
    box.pin = tr
    box.events.append(at(lambda t: setattr(tr, "data_s", 0.2 + 0.38 * ramp(t, 150, 30))))


@trace("ddp-8xa100-slow-storage-no-counter", "training", "input_stall", "none", "A100", 8, 2, 420,
       window=(170, 420), note="no throughput counter; the object store slows: every rank waits for data (~35%)")
def _(box):
    tr = box.add(Trainer(list(range(8)), box.rng, step_s=0.7, data_s=0.5, counter=None, workers=4,
                         mem_gb=62, cmd="torchrun --nproc-per-node 8 train.py"))
    box.events.append(at(lambda t: setattr(tr, "data_s", 0.5 + 0.6 * ramp(t, 170, 40))))


@trace("train-l40s-on-the-fly-tokenize", "training", "input_stall", "trainer", "L40S", 1, 2, 360,
       window=(160, 360), note="L40S fine-tune; a dataset switch to on-the-fly tokenisation: GPU waits ~30%; counter every 2 s")
def _(box):
    tr = box.add(Trainer([0], box.rng, step_s=0.8, data_s=0.4, workers=4, tokens=8 * 2048, publish_s=2.0,
                         mem_gb=40))
    box.events.append(at(lambda t: setattr(tr, "data_s", 0.4 + 0.75 * ramp(t, 160, 10))))


@trace("ddp-4xh100-nfs-stalls-intermittent", "training", "input_stall", "trainer", "H100", 4, 1, 360,
       window=(140, 330), note="NFS hiccups: 20 s of slow reads every ~50 s; util saw-tooth in the stalls")
def _(box):
    tr = box.add(Trainer(list(range(4)), box.rng, step_s=0.5, data_s=0.3, workers=6, tokens=4 * 16 * 2048,
                         mem_gb=66))
    box.pin = tr
    box.events.append(at(lambda t: setattr(tr, "data_s", 0.3 + (1.0 if 140 <= t < 330 and (t - 140) % 50 < 20 else 0.0))))


# ====================================================================== host_launch_jitter
def jitter(job, t0, stall_s, p, ns, off_ns, t1=1e12):
    def ev(t, box):
        on = t0 <= t < t1
        if isinstance(job, Server):
            job.host_s = job.base_host + (stall_s if on else 0.0)
        else:
            job.stall_s = stall_s if on else 0.0
        job.jitter_p = p if on else 0.0
        job.jitter_ns = ns
        job.jitter_off_ns = off_ns if on else 0
        job.jitter_inv = 900.0 if on else 0.0
    return ev


@trace("vllm-h100-irq-on-launch-core", "serving", "host_launch_jitter", "vllm", "H100", 1, 1, 330,
       window=(150, 330), note="eBPF on: NIC interrupts moved onto the launch thread's core; ITL ~2x, util falls")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 6 * wave(t, 60, 0.1))
    s.base_host = s.host_s
    box.ebpf = True
    box.events.append(jitter(s, 150, 0.009, 0.06, 450000, 350000))


@trace("train-h100-eager-launch-jitter", "training", "host_launch_jitter", "trainer", "H100", 1, 1, 330,
       window=(140, 330), note="eBPF on: an eager trainer's launch thread preempted ~0.4 ms at a time; GPU idles between kernels")
def _(box):
    tr = box.add(Trainer([0], box.rng, step_s=0.25, host_s=0.2, tokens=8 * 2048, mem_gb=50))
    box.ebpf = True
    box.events.append(jitter(tr, 140, 0.14, 0.05, 380000, 300000))


@trace("cuda-a100-program-preempted-launcher", "cuda", "host_launch_jitter", "none", "A100", 1, 1, 300,
       window=(130, 300), note="eBPF on: a plain CUDA solver's launch thread shares its core with a real-time thread")
def _(box):
    p = box.add(Program([0], [dict(dur=1e9, busy=0.93, sm=0.7, tensor=0.1, dram=0.5)], mem_gb=30,
                        cmd="./lbm_solver --steps 1000000"))
    box.ebpf = True

    def ev(t, b):
        on = t >= 130
        p.jitter_p, p.jitter_ns, p.jitter_off_ns = (0.08 if on else 0.0), 600000, (500000 if on else 0)
        p.jitter_inv = 1200.0 if on else 0.0
        p.phases[0]["busy"] = 0.93 - 0.35 * ramp(t, 130, 5)
        p.phases[0]["sm"] = 0.7 * p.phases[0]["busy"] / 0.93
        p.phases[0]["dram"] = 0.5 * p.phases[0]["busy"] / 0.93
    box.events.append(ev)
    p.last_T = 0.002


# ====================================================================== host_cpu_contention
@trace("vllm-h100-launch-thread-third-of-core", "serving", "host_cpu_contention", "vllm", "H100", 1, 1, 360,
       window=(150, 360), note="a CPU job floods a 26-vCPU VM: the engine's thread gets ~1/3 core; util 45-70%, ITL 2-3x, queue grows")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 10 * wave(t, 60, 0.05), out=280, max_seqs=128)
    box.neighbors.append(lambda t: 72 * ramp(t, 150, 10))


@trace("sglang-h200-transcode-neighbour", "serving", "host_cpu_contention", "sglang", "H200", 1, 2, 360,
       window=(160, 360), note="ffmpeg transcodes land on the host: SGLang's scheduler gets ~60% of a core; moderate")
def _(box):
    server(box, "sglang", [0], L8, lambda t: 8 * wave(t, 60, 0.1), realtime=True, port=30000, host_ms=6.0)
    box.neighbors.append(lambda t: 60 * ramp(t, 160, 30))


@trace("ddp-4xh100-cpu-neighbour", "training", "host_cpu_contention", "trainer", "H100", 4, 1, 330,
       window=(140, 330), note="DDP on a shared 64-core box: someone's make -j128; ranks' Python threads starve")
def _(box):
    box.add(Trainer(list(range(4)), box.rng, step_s=0.35, host_s=0.24, tokens=4 * 8 * 2048, publish_s=2.0,
                    workers=4, mem_gb=60))
    box.neighbors.append(lambda t: 120 * ramp(t, 140, 20))


@trace("llamacpp-a10g-host-build", "serving", "host_cpu_contention", "llamacpp", "A10G", 1, 1, 330,
       window=(150, 330), note="an 8-vCPU g5: a docker build beside llama-server; tokens/s down ~35%")
def _(box):
    server(box, "llamacpp", [0], MIS, lambda t: 1.0, slots=4, port=8080, prompt=500, out=250, host_ms=6.0)
    box.neighbors.append(lambda t: 14 * ramp(t, 150, 10))


# ====================================================================== tiny_kernels
@trace("cuda-h200-graph-phase-sliver", "cuda", "tiny_kernels", "none", "H200", 1, 1, 300,
       window=(140, 300), note="a job switches from a matmul to replaying a CUDA graph of one-element kernels: 100% util, 0.3% SM")
def _(box):
    box.add(Program([0], [dict(dur=140, busy=0.99, sm=0.9, tensor=0.78, dram=0.2),
                          dict(dur=1e9, busy=1.0, sm=0.0031, occ=0.0002, tensor=0.0, dram=0.0)],
                    mem_gb=89, cmd="python3 scripts/gpu_check.py", loop=False))


@trace("train-h100-foreach-false-ema", "training", "tiny_kernels", "trainer", "H100", 1, 1, 330,
       window=(150, 330), note="a per-parameter EMA loop (foreach=False) added: util stays ~98%, SM falls, tokens/s -40%")
def _(box):
    tr = box.add(Trainer([0], box.rng, step_s=0.5, host_s=0.2, tokens=16 * 2048, mem_gb=60))
    box.events.append(at(lambda t: setattr(tr, "tiny_s", 0.33 * ramp(t, 150))))


@trace("train-a100-small-batch-eager", "training", "tiny_kernels", "trainer", "A100", 1, 2, 360,
       window=(160, 360), note="A100 (no GPM): an RL rollout phase with batch 4 in eager mode; util 95%, power falls by half")
def _(box):
    tr = box.add(Trainer([0], box.rng, step_s=0.6, tokens=64 * 1024, mem_gb=50))
    box.events.append(at(lambda t: setattr(tr, "tiny_s", 0.55 * ramp(t, 160))))


# ====================================================================== memory_bandwidth
@trace("vllm-h100-context-growth-hbm", "serving", "memory_bandwidth", "vllm", "H100", 1, 2, 420,
       window=(150, 420), note="agent sessions grow their context over minutes: DRAM ~85%, ITL ~2x, tokens/s flat")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 2.6, prompt=1500, out=900, sig_o=0.3, sig_p=0.3, cached=0.6)
    s.traffic.mods.append((150, 1e9, lambda t: {"prompt": 1500 + 4500 * min(1, (t - 150) / 150), "cached": 0.93}))


@trace("sglang-h200-big-batch-long-context", "serving", "memory_bandwidth", "sglang", "H200", 1, 1, 360,
       window=(150, 360), note="SGLang: a tenant's 24k-token chats pile up in the batch; HBM-bound decode, ITL ~1.6x")
def _(box):
    s = server(box, "sglang", [0], L8, lambda t: 5.0, realtime=True, port=30000, out=500, sig_o=0.3)
    s.traffic.mods.append((150, 1e9, lambda t: {"prompt": 800 if box.rng.random() < 0.75 else 24000,
                                                 "out": 700, "cached": 0.93, "sig_p": 0.2}))


@trace("vllm-l40s-kv-heavy-decode", "serving", "memory_bandwidth", "vllm", "L40S", 1, 1, 330,
       window=(140, 330), note="L40S (864 GB/s, no GPM): long chats fill the batch; memory util high, ITL ~1.8x")
def _(box):
    s = server(box, "vllm", [0], Q7, lambda t: 2.0, prompt=900, out=400, sig_o=0.3)
    s.traffic.mods.append((140, 1e9, lambda t: {"prompt": 900 + 5000 * min(1, (t - 140) / 90), "out": 500,
                                                 "cached": 0.92}))


# ====================================================================== throttling
@trace("vllm-h100-power-brake", "serving", "throttling", "vllm", "H100", 1, 1, 330,
       window=(150, 270), note="the PDU asserts power brake for two minutes: clock to ~700 MHz, tokens/s -45%")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 4.5 * wave(t, 60, 0.05), prompt=1500)
    b = box.boards[0]

    def ev(t, bx):
        if 150 <= t < 270:
            b.forced_mhz, b.forced_reasons = 705, ("hw slowdown", "power brake")
        else:
            b.forced_mhz = None
    box.events.append(ev)


@trace("train-h100-thermal-gradual", "training", "throttling", "trainer", "H100", 1, 2, 420,
       window=(140, 420), note="a CRAC unit fails: inlet warms 20 C over four minutes; thermal slowdown, tokens/s -30%")
def _(box):
    box.add(Trainer([0], box.rng, step_s=0.6, tensor=0.85, tokens=16 * 2048, mem_gb=70))
    b = box.boards[0]
    box.events.append(at(lambda t: setattr(b, "inlet_add", 42 * ramp(t, 140, 220))))


@trace("ddp-8xh100-chassis-power-cap-lowered", "training", "throttling", "none", "H100", 8, 2, 400,
       window=(160, 400), note="no counter; the facility lowers every GPU's power limit 700 -> 450 W: all ranks slow alike")
def _(box):
    box.add(Trainer(list(range(8)), box.rng, step_s=1.2, tensor=0.85, comm_s=0.05, counter=None,
                    mem_gb=74, cmd="torchrun --nproc-per-node 8 pretrain.py"))

    def ev(t, bx):
        for b in bx.boards:
            b.power_limit = 450.0 if t >= 160 else 700.0
    box.events.append(ev)


@trace("cuda-l40s-fan-failure", "cuda", "throttling", "none", "L40S", 1, 1, 360,
       window=(140, 360), note="an L40S's fan fails under a CUDA render job: temperature climbs, thermal slowdown")
def _(box):
    box.add(Program([0], [dict(dur=1e9, busy=0.99, sm=0.85, tensor=0.5, dram=0.35)], mem_gb=30,
                    cmd="./render_farm_worker"))
    b = box.boards[0]
    box.events.append(at(lambda t: setattr(b, "extra_r", 0.11 * ramp(t, 140, 90))))


# ====================================================================== kv_pressure
@trace("vllm-h100-preemption-storm", "serving", "kv_pressure", "vllm", "H100", 1, 1, 360,
       window=(150, 360), note="a tenant switches to 3k-token generations: KV pool full, preemptions, queue grows")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 4 * wave(t, 60, 0.1) + 1.5 * ramp(t, 150), gpu_mem_util=0.55,
               prompt=1200, out=300)
    s.traffic.mods.append((150, 1e9, lambda t: {"out": 3000, "max_tokens": 4096}))


@trace("sglang-h100-retractions", "serving", "kv_pressure", "sglang", "H100", 1, 2, 360,
       window=(160, 360), note="SGLang with --mem-fraction-static 0.6: long answers fill the pool, decode retractions")
def _(box):
    s = server(box, "sglang", [0], L8, lambda t: 4 * wave(t, 60, 0.1) + 1.5 * ramp(t, 160), gpu_mem_util=0.5,
               realtime=True, port=30000, prompt=1500, out=300)
    s.traffic.mods.append((160, 1e9, lambda t: {"out": 2600, "max_tokens": 4096}))


@trace("vllm-tp2-h200-kv-gradual", "serving", "kv_pressure", "vllm", "H200", 2, 2, 420,
       window=(170, 420), note="70B TP2: a growing share of long-form requests; KV fills over minutes, then preemptions")
def _(box):
    s = server(box, "vllm", [0, 1], L70, lambda t: 1.5 + 1.0 * ramp(t, 170, 150), prompt=1500, out=400,
               gpu_mem_util=0.80)
    s.traffic.mods.append((170, 1e9, lambda t: {"out": 400 + 2600 * min(1, (t - 170) / 150),
                                                 "max_tokens": 4096}))


# ====================================================================== gpu_shared
@trace("vllm-h100-notebook-joins", "serving", "gpu_shared", "vllm", "H100", 1, 1, 330,
       window=(150, 330), note="a notebook starts training on the serving GPU: time-slicing, ITL ~1.8x")
def _(box):
    server(box, "vllm", [0], L8, lambda t: 6 * wave(t, 60, 0.1), gpu_mem_util=0.85)
    box.add_tenant(Tenant(0, 150, 7.5, lambda t: 0.85))


@trace("ddp-4xa100-colleague-on-gpu2", "training", "gpu_shared", "trainer", "A100", 4, 2, 360,
       window=(160, 360), culprit=(2,), note="a colleague's job lands on GPU 2 of a DDP run: rank 2 slow, the others wait")
def _(box):
    box.add(Trainer(list(range(4)), box.rng, step_s=0.9, comm_s=0.08, tokens=4 * 8 * 2048, mem_gb=60))
    box.add_tenant(Tenant(2, 160, 14, lambda t: 0.8, cmd="python3 finetune_lora.py"))


@trace("vllm-8xh100-one-gpu-shared", "serving", "gpu_shared", "vllm", "H100", 8, 2, 360,
       window=(150, 360), culprit=(6,), note="eight independent servers; a stray eval script lands on GPU 6 (moderate)")
def _(box):
    for g in range(8):
        server(box, "vllm", [g], L8, lambda t, g=g: 4 * wave(t, 55 + 4 * g, 0.12), port=8000 + g,
               gpu_mem_util=0.85)
    box.add_tenant(Tenant(6, 150, 6, lambda t: 0.75, cmd="python3 eval_harness.py"))


# ====================================================================== spec_decode_rejected
@trace("vllm-h100-eagle-acceptance-collapse", "serving", "spec_decode_rejected", "vllm", "H100", 1, 1, 330,
       window=(150, 330), note="EAGLE k=4: a multilingual tenant arrives; acceptance 0.7 -> 0.12: each request 2x slower, the batch grows")
def _(box):
    s = server(box, "vllm", [0], L8, lambda t: 4 * wave(t, 60, 0.1), spec_k=4, accept=0.7)
    box.events.append(at(lambda t: setattr(s, "accept", 0.7 - 0.58 * ramp(t, 150, 15))))


@trace("sglang-h200-spec-accept-falls", "serving", "spec_decode_rejected", "sglang", "H200", 1, 2, 360,
       window=(160, 360), note="SGLang EAGLE: high-temperature sampling traffic; accept length 3.1 -> 1.8 (moderate)")
def _(box):
    s = server(box, "sglang", [0], L8, lambda t: 5 * wave(t, 60, 0.1), spec_k=3, accept=0.7, realtime=True,
               port=30000)
    box.events.append(at(lambda t: setattr(s, "accept", 0.7 - 0.43 * ramp(t, 160, 30))))


@trace("vllm-h200-ngram-rejected-gradual", "serving", "spec_decode_rejected", "vllm", "H200", 1, 1, 420,
       window=(150, 420), note="ngram drafts: the code-completion share falls over 3 min; acceptance 0.6 -> 0.15")
def _(box):
    s = server(box, "vllm", [0], Q7, lambda t: 4 * wave(t, 60, 0.1), spec_k=3, accept=0.6)
    box.events.append(at(lambda t: setattr(s, "accept", 0.6 - 0.45 * ramp(t, 150, 180))))
