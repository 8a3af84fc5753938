"""The traces of corpus M, each a small function over the drivers (README.md's catalogue)."""

from __future__ import annotations

from dataclasses import dataclass

from . import Truth
from .drivers import (Box, Foreign, Proc, TrainPlan, deploy, diurnal, ramp, run_program,
                      run_serving, run_training)
from .phys import SPECS
from .serving import Req, Traffic

CATALOGUE: list = []


@dataclass
class Entry:
    name: str
    family: str
    cause: str | None
    fn: object
    culprit: tuple | None = None
    window: tuple | None = None  # seconds from the trace's start
    note: str = ""

    def build(self):
        box, frames, engine = self.fn(self)
        w = None
        if callable(self.window):
            w = self.window(frames)
        elif self.window is not None:
            w = (box.start_wall + self.window[0], box.start_wall + self.window[1])
        truth = Truth(self.name, self.family, self.cause, self.culprit, w, engine, box.n_gpus,
                      SPECS[box.gpu].name, box.tick, self.note,
                      frames[0].time_wall_s if frames else box.start_wall)
        return truth, frames


def trace(name, family, cause=None, culprit=None, window=None, note=""):
    def wrap(fn):
        CATALOGUE.append(Entry(name, family, cause, fn, culprit, window, note))
        return fn
    return wrap


def at(t, a, b):
    return a <= t < b


def poisson(rng, lam):
    n, p = 0, __import__("math").exp(-lam)
    s, u = p, rng.random()
    while u > s and n < 200:
        n += 1
        p *= lam / n
        s += p
    return n


def inject(box, server, t, rate, prompt, out, cached=0.0, shared=0, n=1, tick=None):
    """Another client's requests this tick (Poisson at ``rate``), straight into the queue."""
    rng = box.rng
    import math
    for _ in range(poisson(rng, rate * (tick or box.tick))):
        p = int(prompt[0] * math.exp(rng.gauss(0, prompt[1])))
        o = max(4, int(out[0] * math.exp(rng.gauss(0, out[1]))))
        r = Req(t + rng.random() * box.tick, p, o, cached=min(p - 1, int(p * cached)), n=n,
                max_tokens=int(o * 1.5))
        r.shared = min(shared, r.cached)
        server.waiting.append(r)


def chat(rng, rate, prompt=(900, 0.9), out=(230, 0.8), cached=0.35):
    return Traffic(rng, rate=rate, prompt=prompt, out=out, cached_frac=cached)


def wave(t, period=41.0, depth=0.18):
    """Short-term swings of a real service's arrival rate."""
    import math
    return 1 + depth * math.sin(2 * math.pi * t / period) + 0.6 * depth * math.sin(
        2 * math.pi * t / (period * 0.37) + 1.3)


def kv_window(frames, level=0.97, gpus=None):
    """The stretch where the engine's KV pool is full and it preempts/retracts."""
    hot = []
    prev = None
    for f in frames:
        e = f.engine
        if e is None:
            continue
        ev = (e.preemptions_total or 0) + (e.retracted_requests_total or 0)
        full = (e.kv_usage_ratio or 0) >= level or (prev is not None and ev > prev)
        if full:
            hot.append(f.time_wall_s)
        prev = ev
    return (hot[0], hot[-1]) if hot else None


# ======================================================================= vLLM, one GPU

@trace("vllm_h100_n8_logprobs", "vllm", "oversized_request", window=(150, 182),
       note="one n=8, logprobs=20, max_tokens=480 request among ~25 chat streams (vLLM #37343 shape)")
def _(e):
    box = Box(e.name, "H100", 1, duration=330)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 5.5 * wave(t)),
                 mfu_metrics=True)

    def hook(t, box, deps, foreign):
        if abs(t - 150) < 0.5:
            deps[0].server.waiting.append(Req(t + 0.3, 1400, 480, n=8, extra_gpu=0.030,
                                              extra_host=0.024, max_tokens=480))
    return box, run_serving(box, [dep], hook), "vllm"


@trace("vllm_h100_rag_burst", "vllm", "prefill_interference", window=(150, 330),
       note="a batch RAG job sends 12k-token prompts at ~1/s for 3 min; chunked prefill rides "
            "in every decode step")
def _(e):
    box = Box(e.name, "H100", 1, duration=480)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)))

    def hook(t, box, deps, foreign):
        if 150 <= t < 330:
            inject(box, deps[0].server, t, 1.1, (12000, 0.25), (60, 0.5), cached=0.05)
    return box, run_serving(box, [dep], hook), "vllm"


@trace("vllm_h100_kv_long_outputs", "vllm", "kv_pressure", window=kv_window,
       note="gpu_memory_utilization 0.55 (a small pool); an agent tenant sends requests without max_tokens (2-4k outputs): the pool fills,"
            " vLLM preempts and recomputes")
def _(e):
    box = Box(e.name, "H100", 1, duration=600)
    tr = chat(box.rng, lambda t: 5.0 * wave(t))
    dep = deploy(box, "vllm", "llama8b", (0,), tr, gpu_mem_util=0.55)

    def hook(t, box, deps, foreign):
        if 140 <= t < 460:
            inject(box, deps[0].server, t, 0.6, (2500, 0.5), (3000, 0.3), cached=0.2)
    return box, run_serving(box, [dep], hook), "vllm"


@trace("vllm_h100_cotenant_notebook", "vllm", "gpu_shared", window=(200, 420),
       note="a Jupyter kernel starts fine-tuning on the serving GPU: time-sliced, ~45% of GPU time")
def _(e):
    box = Box(e.name, "H100", 1, duration=420)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 4.5 * wave(t)),
                 gpu_mem_util=0.72)
    nb = Foreign(0, Proc(31337, 0, "python3", "/opt/conda/bin/python3 -m ipykernel_launcher -f "
                         "/root/.local/share/jupyter/runtime/kernel-7f3e.json",
                         box.start_wall + 150, mem=14 * 2**30, user="alice"),
                 share=0.45, sm=0.9, tensor=0.55, dram=0.35)

    def hook(t, box, deps, foreign):
        foreign[0].active = t >= 200
        deps[0].server.gpu_share = 0.55 if t >= 200 else 1.0
    return box, run_serving(box, [dep], hook, foreign=[nb]), "vllm"


@trace("vllm_h100_compile_storm", "vllm", "host_cpu_contention", window=(180, 400),
       note="a CI build (make -j160) lands on the serving host; no eBPF; util falls, not rises")
def _(e):
    box = Box(e.name, "H100", 1, duration=540, cpus=64)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 6.0 * wave(t)))
    return box, run_serving(box, [dep], other_cpu=lambda t: 118.0 if 180 <= t < 400 else 5.0), "vllm"


@trace("vllm_h100_eagle_domain_shift", "vllm", "spec_decode_rejected", window=(200, 420),
       note="EAGLE k=3 drafts; a tenant switches to a language the draft head never saw: "
            "acceptance 0.72 -> 0.12, draft work wasted")
def _(e):
    box = Box(e.name, "H100", 1, duration=480)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)),
                 spec_k=3, spec_accept=0.72)

    def hook(t, box, deps, foreign):
        s = deps[0].server
        s.spec_accept = 0.12 + 0.02 * box.rng.random() if 200 <= t < 420 else 0.72 + 0.03 * box.rng.random()
    return box, run_serving(box, [dep], hook), "vllm"


@trace("vllm_h200_power_brake", "vllm", "throttling", window=(240, 330),
       note="the PSU raises the power-brake line: clocks held at ~700 MHz, HW slowdown")
def _(e):
    box = Box(e.name, "H200", 1, duration=420)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 8.0 * wave(t),
                                                    prompt=(1800, 0.8)))

    def hook(t, box, deps, foreign):
        b = box.boards[0]
        if 240 <= t < 330:
            b.clock_cap, b.forced = 0.36, ("hw slowdown", "power brake")
        else:
            b.clock_cap, b.forced = 1.0, ()
    return box, run_serving(box, [dep], hook), "vllm"


@trace("vllm_h200_longdoc_chat", "vllm", "memory_bandwidth", window=(180, 480),
       note="a 'chat with this 90k-token filing' tenant: the prefix is cached (little prefill), "
            "but every decode step reads ~90k tokens of KV per request: HBM-bound")
def _(e):
    box = Box(e.name, "H200", 1, duration=480)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 6.0 * wave(t)))

    def hook(t, box, deps, foreign):
        s = deps[0].server
        if 180 <= t < 480:
            if s.shared_tokens == 0:
                s.shared_tokens = 90000
            inject(box, s, t, 0.55, (91000, 0.01), (350, 0.4), cached=0.985, shared=89600)
    return box, run_serving(box, [dep], hook), "vllm"


@trace("vllm_h100_eager_jitter", "vllm", "host_launch_jitter", window=(200, 360),
       note="--enforce-eager server; a backup agent is cpuset onto the engine's cores: eBPF sees "
            "launch calls held 1-10 ms off CPU; host-wide PSI stays low")
def _(e):
    box = Box(e.name, "H100", 1, duration=480, ebpf="on")
    dep = deploy(box, "vllm", "qwen7b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)),
                 host_gap_ms=2.5)

    def hook(t, box, deps, foreign):
        deps[0].server.jitter_gap_s = (0.004 + 0.003 * box.rng.random()) if 200 <= t < 360 else 0.0
    return box, run_serving(box, [dep], hook, other_cpu=lambda t: 14.0 if 200 <= t < 360 else 6.0,
                            launch_tail=lambda t: (0.03, 2500.0) if 200 <= t < 360
                            else (0.0005, 200.0)), "vllm"


# ---- healthy vLLM

@trace("h_vllm_h100_diurnal_rise", "vllm", note="morning ramp: 2 -> 9 req/s over 8 min, then plateau")
def _(e):
    box = Box(e.name, "H100", 1, duration=720)
    dep = deploy(box, "vllm", "llama8b", (0,),
                 chat(box.rng, lambda t: ramp(t, 60, 540, 2.0, 9.0) * wave(t)))
    return box, run_serving(box, [dep]), "vllm"


@trace("h_vllm_h200_evening_fall", "vllm", note="evening: 10 -> 0.5 req/s; GPU-Util and power fall")
def _(e):
    box = Box(e.name, "H200", 1, duration=600)
    dep = deploy(box, "vllm", "llama8b", (0,),
                 chat(box.rng, lambda t: ramp(t, 90, 520, 10.0, 0.5) * wave(t, depth=0.25)))
    return box, run_serving(box, [dep]), "vllm"


@trace("h_vllm_h200_deploy_restart", "vllm",
       note="a deploy: engine down 75 s, VRAM emptied and refilled, counters reset, warm-up")
def _(e):
    box = Box(e.name, "H200", 1, duration=540)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 6.0 * wave(t)))

    def hook(t, box, deps, foreign):
        d = deps[0]
        if abs(t - 200) < 0.5:
            d.down_until, d.load_from = 275.0, 212.0
            d.server.reset_counters()
            d.traffic.rate = lambda t: 0.0
            for p in d.procs:
                p.pid += 211
                p.start = box.start_wall + 212
                p.cpu_s = 0.0
        if abs(t - 275) < 0.5:
            d.traffic.rate = lambda t: 6.0 * wave(t) * min(1.0, (t - 270) / 40)
    return box, run_serving(box, [dep], hook), "vllm"


@trace("h_vllm_h100_kv_high_no_preempt", "vllm",
       note="a long-output service (5k prompts, 1.5k outputs) with KV usage swinging 0.3-0.7 and no preemption")
def _(e):
    box = Box(e.name, "H100", 1, duration=480)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 1.1 * wave(t),
                                                    prompt=(5000, 0.3), out=(1500, 0.3), cached=0.1))
    return box, run_serving(box, [dep]), "vllm"


@trace("h_vllm_h100_spec_steady", "vllm",
       note="EAGLE k=3 with acceptance wandering 0.55-0.75 as the mix of prompts changes")
def _(e):
    box = Box(e.name, "H100", 1, duration=540)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)),
                 spec_k=3, spec_accept=0.65)

    def hook(t, box, deps, foreign):
        import math
        deps[0].server.spec_accept = 0.65 + 0.09 * math.sin(t / 53.0) + 0.02 * box.rng.random()
    return box, run_serving(box, [dep], hook), "vllm"


@trace("h_vllm_h100_cotenant_small", "vllm",
       note="an embedding sidecar on the same GPU takes ~3% of GPU time")
def _(e):
    box = Box(e.name, "H100", 1, duration=420)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)),
                 gpu_mem_util=0.8)
    side = Foreign(0, Proc(8812, 0, "python3", "python3 embed_server.py --model bge-small",
                           box.start_wall - 9000, mem=3 * 2**30), share=0.03, sm=0.5, tensor=0.2,
                   dram=0.2, active=True)

    def hook(t, box, deps, foreign):
        deps[0].server.gpu_share = 0.97
    return box, run_serving(box, [dep], hook, foreign=[side]), "vllm"


@trace("h_vllm_h100_prefill_heavy_power_cap", "vllm",
       note="offline summarisation batch: prompts 6k, outputs 150, all day; 690 W at power cap, "
            "clocks ~1.5 GHz: normal for this job")
def _(e):
    box = Box(e.name, "H100", 1, duration=480)
    dep = deploy(box, "vllm", "llama8b", (0,), Traffic(box.rng, clients=48, think_s=0.0,
                                                       prompt=(6000, 0.3), out=(150, 0.4),
                                                       cached_frac=0.05))
    return box, run_serving(box, [dep]), "vllm"


@trace("h_vllm_h200_decode_membound", "vllm",
       note="a high-concurrency chat service: decode is HBM-bound (DRAM ~60-70%) and that is normal")
def _(e):
    box = Box(e.name, "H200", 1, duration=480)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 14.0 * wave(t),
                                                    prompt=(600, 0.7), out=(400, 0.6)))
    return box, run_serving(box, [dep]), "vllm"


@trace("h_vllm_h100_occasional_long_prompt", "vllm",
       note="a service whose users sometimes paste 20k-token documents (every ~2 min): a short "
            "ITL blip each time, normal for it")
def _(e):
    box = Box(e.name, "H100", 1, duration=600)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)))

    def hook(t, box, deps, foreign):
        if int(t) % 127 == 60:
            deps[0].server.waiting.append(Req(t, 20000, 300, cached=0, max_tokens=512))
    return box, run_serving(box, [dep], hook), "vllm"


@trace("h_vllm_h100_autoscale_drain", "vllm",
       note="the autoscaler drains this replica for 2 min (traffic to zero, GPU idle) then "
            "sends traffic back")
def _(e):
    box = Box(e.name, "H100", 1, duration=540)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(
        box.rng, lambda t: 6.0 * wave(t) * (0.0 if 200 <= t < 320 else ramp(t, 320, 360, 0.2, 1.0)
                                            if t >= 320 else 1.0)))
    return box, run_serving(box, [dep]), "vllm"


@trace("h_vllm_h100_host_busy_fine", "vllm",
       note="other jobs keep the host at ~60% CPU; PSI a few %, the engine is not starved")
def _(e):
    box = Box(e.name, "H100", 1, duration=420, cpus=96)
    dep = deploy(box, "vllm", "llama8b", (0,), chat(box.rng, lambda t: 5.5 * wave(t)))
    return box, run_serving(box, [dep], other_cpu=lambda t: 48 + 12 * wave(t, 90, 0.5)), "vllm"


@trace("h_vllm_h100_closed_loop_bench", "vllm",
       note="a closed-loop benchmark stepping 8 -> 32 -> 96 concurrent clients (large but "
            "normal swings of ITL and tokens/s)")
def _(e):
    box = Box(e.name, "H100", 1, duration=540)
    tr = Traffic(box.rng, clients=lambda t: 8 if t < 180 else (32 if t < 360 else 96),
                 think_s=0.2, prompt=(1000, 0.4), out=(300, 0.4))
    dep = deploy(box, "vllm", "llama8b", (0,), tr)
    return box, run_serving(box, [dep]), "vllm"


# ======================================================================= SGLang, one GPU

@trace("sglang_h100_huge_prompt", "sglang", "oversized_request", window=(180, 193),
       note="one 127k-token prompt: 16 prefill chunks of 8192, each a prefill batch that stops "
            "every decode for 0.3-1 s")
def _(e):
    box = Box(e.name, "H100", 1, duration=360)
    dep = deploy(box, "sglang", "llama8b", (0,), chat(box.rng, lambda t: 6.0 * wave(t)),
                 host_gap_ms=0.6)

    def hook(t, box, deps, foreign):
        if abs(t - 180) < 0.5:
            deps[0].server.waiting.append(Req(t + 0.2, 127000, 400, max_tokens=1024))
    return box, run_serving(box, [dep], hook), "sglang"


@trace("sglang_h200_longdocs", "sglang", "prefill_interference", window=(200, 600),
       note="a document-QA tenant starts sending 16k-token prompts (~0.7/s); SGLang runs each "
            "chunk as its own prefill batch and decode stalls; it does not stop")
def _(e):
    box = Box(e.name, "H200", 1, duration=600)
    dep = deploy(box, "sglang", "llama8b", (0,), chat(box.rng, lambda t: 7.0 * wave(t)),
                 host_gap_ms=0.6)

    def hook(t, box, deps, foreign):
        if t >= 200:
            inject(box, deps[0].server, t, 0.7, (16000, 0.3), (120, 0.5), cached=0.02)
    return box, run_serving(box, [dep], hook), "sglang"


@trace("sglang_h200_retract", "sglang", "kv_pressure", window=kv_window,
       note="long-form generation (6k outputs) fills the token pool; SGLang retracts decode "
            "requests back to the queue")
def _(e):
    box = Box(e.name, "H200", 1, duration=600)
    dep = deploy(box, "sglang", "qwen32b", (0,), chat(box.rng, lambda t: 2.2 * wave(t)),
                 host_gap_ms=0.6)

    def hook(t, box, deps, foreign):
        if 120 <= t < 360:
            inject(box, deps[0].server, t, 0.15, (3000, 0.4), (6000, 0.2), cached=0.1)
    return box, run_serving(box, [dep], hook), "sglang"


@trace("sglang_h100_eagle_collapse", "sglang", "spec_decode_rejected", window=(180, 400),
       note="EAGLE-2 with 4 draft steps; a batch of random-string extraction requests drops the "
            "accept length from ~3 to ~1.2")
def _(e):
    box = Box(e.name, "H100", 1, duration=480)
    dep = deploy(box, "sglang", "llama8b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)),
                 spec_k=4, spec_accept=0.75, host_gap_ms=0.6)

    def hook(t, box, deps, foreign):
        deps[0].server.spec_accept = (0.15 + 0.03 * box.rng.random()) if 180 <= t < 400 else \
            (0.75 + 0.03 * box.rng.random())
    return box, run_serving(box, [dep], hook), "sglang"


@trace("sglang_h100_etl_neighbour", "sglang", "host_cpu_contention", window=(200, 380),
       note="a Spark ETL executor with 180 task threads starts on the serving host; PSI high, "
            "involuntary switches of the scheduler process; no eBPF (not root)")
def _(e):
    box = Box(e.name, "H100", 1, duration=480, cpus=96, ebpf="noroot")
    dep = deploy(box, "sglang", "llama8b", (0,), chat(box.rng, lambda t: 6.0 * wave(t)),
                 host_gap_ms=0.6)
    return box, run_serving(box, [dep], other_cpu=lambda t: 170.0 if 200 <= t < 380 else 8.0), "sglang"


@trace("h_sglang_h100_summarise_service", "sglang",
       note="a summarisation API: 15-30k-token prompts are its normal traffic, all the time")
def _(e):
    box = Box(e.name, "H100", 1, duration=480)
    dep = deploy(box, "sglang", "llama8b", (0,), chat(box.rng, lambda t: 0.45 * wave(t),
                                                      prompt=(20000, 0.25), out=(300, 0.4),
                                                      cached=0.05), host_gap_ms=0.6)
    return box, run_serving(box, [dep]), "sglang"


@trace("h_sglang_h100_restart", "sglang",
       note="rolling upgrade of the server: counters reset, the pool re-allocated")
def _(e):
    box = Box(e.name, "H100", 1, duration=480)
    dep = deploy(box, "sglang", "qwen7b", (0,), chat(box.rng, lambda t: 5.0 * wave(t)),
                 host_gap_ms=0.6)

    def hook(t, box, deps, foreign):
        d = deps[0]
        if abs(t - 180) < 0.5:
            d.down_until, d.load_from = 250.0, 190.0
            d.server.reset_counters()
            d.traffic.rate = lambda t: 0.0
            for p in d.procs:
                p.pid += 97
                p.start = box.start_wall + 190
                p.cpu_s = 0.0
        if abs(t - 250) < 0.5:
            d.traffic.rate = lambda t: 5.0 * wave(t)
    return box, run_serving(box, [dep], hook), "sglang"


@trace("h_sglang_h200_spec_steady", "sglang",
       note="EAGLE with accept length 2.6-3.3 over a normal mix")
def _(e):
    box = Box(e.name, "H200", 1, duration=420)
    dep = deploy(box, "sglang", "llama8b", (0,), chat(box.rng, lambda t: 6.0 * wave(t)),
                 spec_k=4, spec_accept=0.72, host_gap_ms=0.6)

    def hook(t, box, deps, foreign):
        import math
        deps[0].server.spec_accept = 0.70 + 0.07 * math.sin(t / 37.0) + 0.02 * box.rng.random()
    return box, run_serving(box, [dep], hook), "sglang"


# ======================================================================= tensor-parallel servers

@trace("vllm_h200_tp4_logprobs", "vllm-tp", "oversized_request", window=(200, 262),
       note="Llama-70B TP4: one n=16, logprobs=20 request (an eval harness) for ~60 s")
def _(e):
    box = Box(e.name, "H200", 4, duration=420)
    dep = deploy(box, "vllm", "llama70b", (0, 1, 2, 3), chat(box.rng, lambda t: 4.0 * wave(t)))

    def hook(t, box, deps, foreign):
        if abs(t - 200) < 0.5:
            deps[0].server.waiting.append(Req(t + 0.4, 2000, 600, n=16, extra_gpu=0.060,
                                              extra_host=0.030, max_tokens=600))
    return box, run_serving(box, [dep], hook), "vllm"


@trace("vllm_h200_tp8_summarize", "vllm-tp", "prefill_interference", window=(180, 420),
       note="Llama-70B TP8 chat; a summarisation backfill job sends 30k-token prompts")
def _(e):
    box = Box(e.name, "H200", 8, duration=480)
    dep = deploy(box, "vllm", "llama70b", tuple(range(8)), chat(box.rng, lambda t: 6.0 * wave(t)))

    def hook(t, box, deps, foreign):
        if 180 <= t < 420:
            inject(box, deps[0].server, t, 0.33, (30000, 0.2), (80, 0.4), cached=0.02)
    return box, run_serving(box, [dep], hook, slices=2), "vllm"


@trace("sglang_h100_tp8_gpu6_thermal", "sglang-tp", "throttling", culprit=(6,), window=(170, 480),
       note="TP8 on H100: GPU 6's cold plate loses flow; it heats to 87 C, thermal slowdown; "
            "the other seven wait for it inside every all-reduce")
def _(e):
    box = Box(e.name, "H100", 8, duration=480)
    dep = deploy(box, "sglang", "llama70b", tuple(range(8)), chat(box.rng, lambda t: 10.0 * wave(t)),
                 host_gap_ms=0.6)

    def hook(t, box, deps, foreign):
        box.boards[6].r_factor = ramp(t, 120, 200, 1.0, 4.5)
    frames = run_serving(box, [dep], hook, slices=2)
    return box, frames, "sglang"


@trace("vllm_h200_tp4_ngram", "vllm-tp", "spec_decode_rejected", window=(160, 420),
       note="ngram prompt-lookup speculation (k=5) on a TP4 70B; a tenant's free-form creative "
            "writing shares nothing with the prompt: acceptance 0.45 -> 0.03")
def _(e):
    box = Box(e.name, "H200", 4, duration=420)
    dep = deploy(box, "vllm", "llama70b", (0, 1, 2, 3), chat(box.rng, lambda t: 4.0 * wave(t)),
                 spec_k=5, spec_accept=0.45, spec_kind="ngram")

    def hook(t, box, deps, foreign):
        deps[0].server.spec_accept = 0.03 + 0.02 * box.rng.random() if t >= 160 else \
            0.45 + 0.05 * box.rng.random()
    return box, run_serving(box, [dep], hook), "vllm"


@trace("h_sglang_h200_tp4_spiky", "sglang-tp",
       note="TP4 70B with a bursty batch client: 2x swings of load every minute")
def _(e):
    box = Box(e.name, "H200", 4, duration=480)
    dep = deploy(box, "sglang", "llama70b", (0, 1, 2, 3),
                 chat(box.rng, lambda t: 5.0 * (0.5 + (1.0 if (t // 60) % 2 else 0.0)) * wave(t)),
                 host_gap_ms=0.6)
    return box, run_serving(box, [dep]), "sglang"


@trace("h_vllm_h100_tp8_steady", "vllm-tp", note="TP8 70B chat at a steady 7 req/s")
def _(e):
    box = Box(e.name, "H100", 8, duration=360)
    dep = deploy(box, "vllm", "llama70b", tuple(range(8)), chat(box.rng, lambda t: 7.0 * wave(t)))
    return box, run_serving(box, [dep], slices=2), "vllm"


# ======================================================================= 8-GPU boxes of servers

def box8(e, rates, kinds="vllm", gpu="H100", duration=420, slices=2, models=None, **kw):
    box = Box(e.name, gpu, 8, duration=duration, cpus=128, **kw)
    deps = []
    for g in range(8):
        kind = kinds if isinstance(kinds, str) else kinds[g]
        model = (models or ["llama8b", "qwen7b"] * 4)[g]
        deps.append(deploy(box, kind, model, (g,), chat(box.rng, rates[g]), port=8000 + g,
                           host_gap_ms=1.2 if kind == "vllm" else 0.6))
    return box, deps


def _rates(box_name, base=5.0):
    import random
    import zlib
    r = random.Random(zlib.crc32(box_name.encode()))
    out = []
    for g in range(8):
        level = base * r.uniform(0.4, 1.4)
        period = r.uniform(30, 70)
        out.append(lambda t, level=level, period=period: level * wave(t, period))
    return out


@trace("box8_vllm_gpu5_logprobs", "box8", "oversized_request", culprit=(5,), window=(200, 240),
       note="8 independent vLLM servers; the one on GPU 5 gets an n=8, logprobs=20, max_tokens=640 "
            "request")
def _(e):
    box, deps = box8(e, _rates(e.name))

    def hook(t, box, deps, foreign):
        if abs(t - 200) < 0.5:
            deps[5].server.waiting.append(Req(t + 0.5, 1200, 640, n=8, extra_gpu=0.030,
                                              extra_host=0.024, max_tokens=640))
    return box, run_serving(box, deps, hook, slices=2), "vllm"


@trace("box8_sglang_gpu2_longdocs", "box8", "prefill_interference", culprit=(2,), window=(180, 420),
       note="8 SGLang servers; GPU 2's gets a contract-review tenant (14k-token prompts)")
def _(e):
    box, deps = box8(e, _rates(e.name), kinds="sglang")

    def hook(t, box, deps, foreign):
        if t >= 180:
            inject(box, deps[2].server, t, 0.45, (14000, 0.3), (100, 0.5), cached=0.03)
    return box, run_serving(box, deps, hook, slices=2), "sglang"


@trace("box8_vllm_gpu3_kv", "box8", "kv_pressure", culprit=(3,),
       window=lambda frames: _replica_kv_window(frames, 3),
       note="8 vLLM servers; GPU 3's server (gpu_memory_utilization 0.35 beside a sidecar: a small pool) gets "
            "long-output traffic and preempts")
def _(e):
    box, deps = box8(e, _rates(e.name))
    s = deps[3].server
    s.pool_tokens = int(s.pool_tokens * 0.13) // 16 * 16
    s.pool_bytes = s.pool_tokens * s.kvb
    s.mem_used = int(s.weights + s.pool_bytes + 4.0e9)

    def hook(t, box, deps, foreign):
        if 150 <= t < 380:
            inject(box, deps[3].server, t, 1.0, (2000, 0.5), (2500, 0.3), cached=0.2)
    return box, run_serving(box, deps, hook, slices=2), "vllm"


def _replica_kv_window(frames, gpu):
    hot, prev = [], None
    for f in frames:
        e = f.engine
        if e is None or not e.replicas:
            continue
        r = e.replicas[gpu]
        ev = r.preemptions_total or 0
        if (r.kv_usage_ratio or 0) >= 0.97 or (prev is not None and ev > prev):
            hot.append(f.time_wall_s)
        prev = ev
    return (hot[0], hot[-1]) if hot else None


@trace("box8_sglang_gpu1_foreign", "box8", "gpu_shared", culprit=(1,), window=(200, 420),
       note="8 SGLang servers; someone runs a benchmark script on GPU 1 (CUDA_VISIBLE_DEVICES=1)")
def _(e):
    box, deps = box8(e, _rates(e.name), kinds="sglang")
    fp = Foreign(1, Proc(41414, 1, "python", "python bench_gemm.py --iters 100000",
                         box.start_wall + 199, mem=9 * 2**30, user="bob"),
                 share=0.5, sm=0.95, tensor=0.85, dram=0.2)

    def hook(t, box, deps, foreign):
        foreign[0].active = t >= 200
        deps[1].server.gpu_share = 0.5 if t >= 200 else 1.0
    return box, run_serving(box, deps, hook, slices=2, foreign=[fp]), "sglang"


@trace("box8_vllm_gpu4_thermal", "box8", "throttling", culprit=(4,), window=(160, 420),
       note="8 vLLM servers; GPU 4's fan wall section fails: it climbs to 87 C and holds its "
            "clock down (thermal slowdown)")
def _(e):
    box, deps = box8(e, _rates(e.name, 7.0))

    def hook(t, box, deps, foreign):
        box.boards[4].r_factor = ramp(t, 100, 170, 1.0, 2.9)
    return box, run_serving(box, deps, hook, slices=2), "vllm"


@trace("h_box8_independent_mixed", "box8",
       note="8 servers with their own loads: one nearly idle, one saturated, swings on each")
def _(e):
    rates = _rates(e.name)
    rates[6] = lambda t: 0.2
    rates[0] = lambda t: 11.0 * wave(t, 50, 0.3)
    box, deps = box8(e, rates)
    return box, run_serving(box, deps, slices=2), "vllm"


@trace("h_box8_rolling_restart", "box8",
       note="a rolling deploy restarts servers 0..3 one after another (each down ~60 s)")
def _(e):
    box, deps = box8(e, _rates(e.name), duration=540)

    def hook(t, box, deps, foreign):
        for k in range(4):
            t0 = 120 + 90 * k
            d = deps[k]
            if abs(t - t0) < 0.5:
                d.down_until, d.load_from = t0 + 60, t0 + 8
                d.server.reset_counters()
                d._rate = d.traffic.rate
                d.traffic.rate = lambda t: 0.0
                for p in d.procs:
                    p.pid += 301
                    p.start = box.start_wall + t0 + 8
                    p.cpu_s = 0.0
            if abs(t - (t0 + 60)) < 0.5:
                d.traffic.rate = d._rate
    return box, run_serving(box, deps, hook, slices=2), "vllm"


# ======================================================================= training

def plan(n, fwd, **kw):
    return TrainPlan(n_ranks=n, fwd_s=fwd, **kw)


@trace("train_fsdp8_h100_rank5_seqlen", "training", "collective_straggler", culprit=(5,),
       window=(200, 430),
       note="FSDP 8xH100, variable-length batches without packing: a shard of long documents "
            "lands on rank 5 (40% more tokens per step); the other seven wait in reduce-scatter")
def _(e):
    box = Box(e.name, "H100", 8, duration=540, cpus=192)
    p = plan(8, 0.42, opt_s=0.06, comm_s=0.12, workers=6, batch_load_s=0.5, nvlink_gbs=160)
    return box, run_training(box, p, slow=lambda t, r: 1.42 if (r == 5 and 200 <= t < 430) else 1.0,
                             cmd="python -m torch.distributed.run train_fsdp.py"), None


@trace("train_ddp4_a100_rank0_extra", "training", "collective_straggler", culprit=(0,),
       window=(150, 420),
       note="DDP 4xA100 (no GPM): someone enabled per-step validation metrics on rank 0 only; "
            "ranks 1-3 idle in the all-reduce at full GPU-Util and low power")
def _(e):
    box = Box(e.name, "A100", 4, duration=420, cpus=64)
    p = plan(4, 0.55, opt_s=0.05, comm_s=0.10, workers=8, batch_load_s=0.6, nvlink_gbs=90)
    return box, run_training(box, p, extra=lambda t, r: ("eval", 0.65) if (r == 0 and t >= 150) else None,
                             cmd="python train.py"), None


@trace("train_ep8_h200_rank3_hot_expert", "training", "collective_straggler", culprit=(3,),
       window=(240, 480),
       note="MoE with expert parallelism on 8xH200: the router collapses onto experts held by rank "
            "3 (load balancing loss mis-set after a resume); rank 3 computes ~2x, others wait")
def _(e):
    box = Box(e.name, "H200", 8, duration=480, cpus=192)
    p = plan(8, 0.8, opt_s=0.08, comm_s=0.25, workers=4, batch_load_s=0.4, nvlink_gbs=220,
             tokens_per_step=8 * 4 * 4096)
    return box, run_training(box, p, slow=lambda t, r: ramp(t, 240, 270, 1.0, 1.9) if r == 3 else
                             ramp(t, 240, 270, 1.0, 0.93), trainer_counter=True,
                             cmd="python -m torch.distributed.run pretrain_moe.py"), "trainer"


@trace("train_ddp8_h100_rank4_nan_check", "training", "collective_straggler", culprit=(4,),
       window=(180, 360),
       note="DDP 8xH100: a debugging env var left on rank 4's launcher checks every gradient "
            "bucket's norm with .item() (a device sync each): +0.3 s per step of a mostly idle GPU on "
            "that rank while the other seven wait in the all-reduce")
def _(e):
    box = Box(e.name, "H100", 8, duration=480, cpus=192)
    p = plan(8, 0.30, opt_s=0.04, comm_s=0.08, workers=8, batch_load_s=0.45, nvlink_gbs=150)
    return box, run_training(box, p, extra=lambda t, r: ("sync", 0.30) if (r == 4 and 180 <= t < 360) else None,
                             cmd="python -m torch.distributed.run train.py"), None


@trace("train_h100_two_workers", "training", "input_stall", window=(150, 420),
       note="single H100 image fine-tune: a config change drops DataLoader workers 12 -> 2; JPEG "
            "decode cannot keep up, GPU-Util falls to ~35%, the two workers peg their cores")
def _(e):
    box = Box(e.name, "H100", 1, duration=420, cpus=64)
    p = plan(1, 0.12, opt_s=0.02, workers=12, batch_load_s=2.2, samples_per_step=256)
    return box, run_training(box, p, workers=lambda t: 2 if t >= 150 else 12, pinned=True,
                             cmd="python finetune_vit.py"), None


@trace("train_ddp4_h200_nfs_slow", "training", "input_stall", window=(200, 330),
       note="DDP 4xH200 reading shards from NFS; the filer degrades for ~2 min: every rank waits "
            "for data, GPU-Util drops together, host CPU idle (iowait)")
def _(e):
    box = Box(e.name, "H200", 4, duration=480, cpus=96)
    p = plan(4, 0.35, opt_s=0.05, comm_s=0.09, workers=8, batch_load_s=4.0,
             tokens_per_step=4 * 8 * 4096)
    return box, run_training(box, p, loader=lambda t, r: 5.0 if 200 <= t < 330 else 1.0,
                             trainer_counter=True, loader_cpu_bound=False, cmd="python -m torch.distributed.run train.py"), "trainer"


@trace("train_l40s_tokenize_inline", "training", "input_stall", window=(120, 360),
       note="L40S (no GPM) LoRA fine-tune switched to a new dataset that is tokenised on the fly "
            "in the workers: batches arrive slower than steps")
def _(e):
    box = Box(e.name, "L40S", 1, duration=360, cpus=32)
    p = plan(1, 0.35, opt_s=0.03, workers=4, batch_load_s=2.4)
    return box, run_training(box, p, loader=lambda t, r: 3.0 if t >= 120 else 1.0, pinned=True,
                             cmd="python lora_train.py"), None


@trace("train_fsdp8_h100_s3_stream", "training", "input_stall", window=(240, 400),
       note="FSDP 8xH100 streaming WebDataset shards from object storage; the bucket throttles "
            "requests for ~2.5 min")
def _(e):
    box = Box(e.name, "H100", 8, duration=540, cpus=192)
    p = plan(8, 0.5, opt_s=0.06, comm_s=0.12, workers=6, batch_load_s=4.5, nvlink_gbs=160)
    return box, run_training(box, p, loader=lambda t, r: ramp(t, 240, 250, 1.0, 4.0) if t < 400 else 1.0,
                             loader_cpu_bound=False,
                             cmd="python -m torch.distributed.run train_fsdp.py"), None


@trace("train_h200_irq_launch_jitter", "training", "host_launch_jitter", window=(180, 360),
       note="single H200 with eBPF: a NIC's interrupts get steered onto the core the training "
            "thread runs on; launch calls held 0.5-5 ms, GPU idles between kernels")
def _(e):
    box = Box(e.name, "H200", 1, duration=480, cpus=64, ebpf="on")
    p = plan(1, 0.20, opt_s=0.03, workers=8, batch_load_s=0.6, tokens_per_step=16 * 4096)
    win = lambda t: 180 <= t < 360
    return box, run_training(box, p, gap=lambda t, r: 0.33 if win(t) else 0.0,
                             launch_tail=lambda t: (0.02, 1800.0) if win(t) else (0.0003, 150.0),
                             cmd="python train.py"), None


@trace("train_ddp4_a100_omp_oversubscribed", "training", "host_cpu_contention", window=(200, 420),
       note="DDP 4xA100 (no GPM, no eBPF): a new image pipeline sets OMP_NUM_THREADS=64 per "
            "worker on a 64-core host; the ranks' main threads lose the CPU")
def _(e):
    box = Box(e.name, "A100", 4, duration=480, cpus=64)
    p = plan(4, 0.45, opt_s=0.05, comm_s=0.10, workers=6, batch_load_s=0.5)
    win = lambda t: 200 <= t < 420
    return box, run_training(box, p, gap=lambda t, r: 0.30 + 0.05 * (r % 2) if win(t) else 0.0,
                             other_cpu=lambda t: 110.0 if win(t) else 3.0, pinned=True,
                             cmd="python -m torch.distributed.run train.py"), None


@trace("train_h100_metric_loop_tiny", "training", "tiny_kernels", window=(180, 420),
       note="single H100: a per-sample metric written as a Python loop over tensors launches "
            "~30k tiny kernels per step; GPU-Util stays ~95% while SM activity collapses")
def _(e):
    box = Box(e.name, "H100", 1, duration=420, cpus=64)
    p = plan(1, 0.18, opt_s=0.03, workers=8, batch_load_s=0.5, samples_per_step=64)
    return box, run_training(box, p, extra=lambda t, r: ("tiny", 1.6) if t >= 180 else None,
                             cmd="python train.py", trainer_counter=False), None


@trace("train_h100_unfused_optimizer", "training", "memory_bandwidth", window=(160, 420),
       note="single H100, 7B full fine-tune: a resume drops the fused AdamW and keeps fp32 "
            "master weights + per-parameter clipping: the optimizer phase grows to ~1.3 s of "
            "HBM-bound work per step")
def _(e):
    box = Box(e.name, "H100", 1, duration=420, cpus=64)
    p = plan(1, 0.45, opt_s=0.08, workers=8, batch_load_s=0.5, tokens_per_step=8 * 4096)
    return box, run_training(box, p, extra=lambda t, r: ("hbm", 1.25) if t >= 160 else None,
                             trainer_counter=True, cmd="python finetune.py"), "trainer"


@trace("train_ddp4_h100_rank2_thermal", "training", "throttling", culprit=(2,), window=(170, 480),
       note="DDP 4xH100: GPU 2's cold plate loses flow; thermal slowdown at 87 C; ranks 0,1,3 "
            "wait for it (the straggler pattern is the symptom, the clock is the cause)")
def _(e):
    box = Box(e.name, "H100", 4, duration=480, cpus=96)
    p = plan(4, 0.40, opt_s=0.05, comm_s=0.10, workers=8, batch_load_s=0.5)
    # the rank's compute slows with its clock: the timeline is precomputed from the same model
    state = {"f": 1.0}

    def slow(t, r):
        if r != 2:
            return 1.0
        # steady-state clock of the hot GPU from its thermal balance
        return 1.0 / max(0.55, ramp(t, 140, 230, 1.0, 0.62))
    return box, run_training(box, p, slow=slow, cooling=lambda t, r: ramp(t, 120, 200, 1.0, 2.7)
                             if r == 2 else 1.0, cmd="python -m torch.distributed.run train.py"), None


@trace("train_h200_second_job", "training", "gpu_shared", window=(200, 480),
       note="single H200 pretraining; a second user's job starts on the same GPU (no MPS, "
            "time-sliced): the first job's step time doubles")
def _(e):
    box = Box(e.name, "H200", 1, duration=480, cpus=64)
    p = plan(1, 0.30, opt_s=0.04, workers=8, batch_load_s=0.5, tokens_per_step=16 * 2048)
    other = Foreign(0, Proc(52001, 0, "python", "python train_other.py --bs 32",
                            box.start_wall + 198, mem=40 * 2**30, user="carol"),
                    share=0.48, sm=0.9, tensor=0.6, dram=0.3)

    other.when = lambda t: t >= 200

    def share(t):
        return 0.52 if t >= 200 else 1.0
    return box, run_training(box, p, share=share, foreign=[other], trainer_counter=True,
                             cmd="python pretrain.py"), "trainer"


# ---- healthy training

@trace("h_train_h100_checkpoints", "training",
       note="single H100 with a checkpoint every 3 min: GPU idle ~25 s each time (a normal dip)")
def _(e):
    box = Box(e.name, "H100", 1, duration=600, cpus=64)
    p = plan(1, 0.5, opt_s=0.06, workers=8, batch_load_s=0.6, ckpt_every_s=180, ckpt_s=25,
             tokens_per_step=8 * 4096)
    return box, run_training(box, p, trainer_counter=True, cmd="python train.py"), "trainer"


@trace("h_train_ddp4_h100_eval_pass", "training",
       note="DDP 4xH100 with a 40 s eval pass every 150 s (lower SM, no backward)")
def _(e):
    box = Box(e.name, "H100", 4, duration=540, cpus=96)
    p = plan(4, 0.40, opt_s=0.05, comm_s=0.10, workers=8, batch_load_s=0.5, eval_every_s=150,
             eval_s=40)
    return box, run_training(box, p, cmd="python -m torch.distributed.run train.py"), None


@trace("h_train_fsdp8_h200_rank0_checkpoint", "training",
       note="FSDP 8xH200 saving a full state dict on rank 0 every 4 min; ranks 1-7 wait in the "
            "barrier for ~40 s (GPU-Util 100%, SM low): normal checkpointing")
def _(e):
    box = Box(e.name, "H200", 8, duration=600, cpus=192)
    p = plan(8, 0.6, opt_s=0.07, comm_s=0.14, workers=6, batch_load_s=0.6, nvlink_gbs=180,
             ckpt_every_s=240, ckpt_s=40, ckpt_rank0_only=True)
    return box, run_training(box, p, cmd="python -m torch.distributed.run train_fsdp.py"), None


@trace("h_train_ddp4_a100_batch_change", "training",
       note="DDP 4xA100 (no GPM): the job is restarted with half the batch size (shorter steps, "
            "lower power); 40 s gap while it restarts")
def _(e):
    box = Box(e.name, "A100", 4, duration=480, cpus=64)
    p = plan(4, 0.55, opt_s=0.05, comm_s=0.10, workers=8, batch_load_s=0.6)

    def slow(t, r):
        return 1.0 if t < 200 else 0.55

    def extra(t, r):
        return ("idle", 40.0) if 200 <= t < 201.5 else None
    return box, run_training(box, p, slow=slow, extra=extra, cmd="python train.py"), None


@trace("h_train_l40s_finetune", "training", note="L40S (no GPM) LoRA fine-tune, noisy but steady")
def _(e):
    box = Box(e.name, "L40S", 1, duration=360, cpus=32, tick=2.0)
    p = plan(1, 0.35, opt_s=0.03, workers=6, batch_load_s=0.9, noise=0.06)
    return box, run_training(box, p, pinned=True, cmd="python lora_train.py"), None


@trace("h_train_ddp8_h100_startup", "training",
       note="DDP 8xH100 job start: 90 s of model load / NCCL init / compile, then steps")
def _(e):
    box = Box(e.name, "H100", 8, duration=420, cpus=192)
    p = plan(8, 0.35, opt_s=0.05, comm_s=0.10, workers=8, batch_load_s=0.5)
    return box, run_training(box, p, start_at=90.0, cmd="python -m torch.distributed.run train.py"), None


@trace("h_train_ddp4_h100_epoch_boundary", "training",
       note="DDP 4xH100: at each epoch boundary the DataLoader workers restart (6-8 s dip)")
def _(e):
    box = Box(e.name, "H100", 4, duration=540, cpus=96)
    p = plan(4, 0.30, opt_s=0.04, comm_s=0.08, workers=8, batch_load_s=0.5)

    def loader(t, r):
        return 14.0 if int(t) % 170 in (100, 101, 102) else 1.0
    return box, run_training(box, p, loader=loader, cmd="python -m torch.distributed.run train.py"), None


@trace("h_train_h100_ebpf_gc", "training",
       note="single H100 with eBPF on: launch latency normal, a Python GC pause every ~40 s")
def _(e):
    box = Box(e.name, "H100", 1, duration=420, cpus=64, ebpf="on")
    p = plan(1, 0.2, opt_s=0.03, workers=8, batch_load_s=0.5)
    return box, run_training(box, p, launch_tail=lambda t: (0.002, 400.0) if int(t) % 41 == 0
                             else (0.0003, 120.0), cmd="python train.py"), None


@trace("h_train_ddp8_h200_power_cap", "training",
       note="DDP 8xH200 dense pretraining at 690-700 W: power cap on all eight, clocks ~1.5 GHz")
def _(e):
    box = Box(e.name, "H200", 8, duration=420, cpus=192, tick=0.5)
    p = plan(8, 0.9, opt_s=0.06, comm_s=0.10, workers=6, batch_load_s=0.8, nvlink_gbs=200,
             tokens_per_step=8 * 8 * 4096)
    return box, run_training(box, p, trainer_counter=True,
                             cmd="python -m torch.distributed.run pretrain.py"), "trainer"


# ======================================================================= plain CUDA programs

@trace("prog_h200_graph_tiny", "program", "tiny_kernels", window=(120, 300),
       note="a solver replays a CUDA graph of one-element kernels after its matmul phase: "
            "GPU-Util 100%, SM ~0 (what the real H200 showed)")
def _(e):
    box = Box(e.name, "H200", 1, duration=300, cpus=32)
    return box, run_program(box, [(5, 120, "matmul", 1.0), (120, 300, "graph_tiny", 1.0)],
                            cmd="./solver --graph", graph=True), None


@trace("prog_h100_polling_kernel", "program", "tiny_kernels", window=(150, 330),
       note="a plain CUDA app with a 1-block kernel spinning on a host flag between batches: "
            "GPU-Util high, SM activity a sliver")
def _(e):
    box = Box(e.name, "H100", 1, duration=420, cpus=32)
    ph = [(2, 150, "mixed", 1.0), (150, 330, "tiny", 1.0), (330, 420, "mixed", 1.0)]
    return box, run_program(box, ph, cmd="./pipeline_worker --poll"), None


@trace("prog_h200_embedding_gather", "program", "memory_bandwidth", window=(140, 360),
       note="a recommender's feature job switches from its GEMM phase to a random embedding "
            "gather: DRAM ~93%, tensor ~0, throughput bound by bytes")
def _(e):
    box = Box(e.name, "H200", 1, duration=360, cpus=32)
    return box, run_program(box, [(3, 140, "matmul", 1.0), (140, 360, "hbm", 1.0)],
                            cmd="./featgen --tables 64"), None


@trace("prog_a100_hw_slowdown", "program", "throttling", window=(200, 330),
       note="A100 (no GPM) matmul benchmark; an external power-brake signal: HW slowdown, "
            "clocks ~600 MHz, power falls, GPU-Util still 100%")
def _(e):
    box = Box(e.name, "A100", 1, duration=420, cpus=32)
    return box, run_program(box, [(3, 418, "matmul", 1.0)], cmd="./gemm_bench",
                            clock_cap=lambda t, g: (0.42, ("hw slowdown",)) if 200 <= t < 330
                            else (1.0, ())), None


@trace("prog_a10g_backup_jitter", "program", "host_launch_jitter", window=(150, 300),
       note="A10G (no GPM) inference loop with eBPF: a backup agent pinned to the same core "
            "preempts the launching thread; launch p99 0.1 -> 4 ms")
def _(e):
    box = Box(e.name, "A10G", 1, duration=390, cpus=8, ebpf="on")
    win = lambda t: 150 <= t < 300
    return box, run_program(box, [(2, 150, "mixed", 0.92), (150, 300, "mixed", 0.58),
                                  (300, 390, "mixed", 0.92)],
                            cmd="./detector_infer --batch 8", launch_tail=lambda t: (0.03, 3500.0)
                            if win(t) else (0.0005, 100.0), other_cpu=lambda t: 3.5 if win(t) else 1.5), None


@trace("prog_h100_cotenant_cpu", "program", "host_cpu_contention", window=(180, 360),
       note="pinned CUDA app on a shared H100 node; a co-tenant container runs 90 busy threads "
            "on the 32 cores; no eBPF; GPU-Util falls from 90% to ~55%")
def _(e):
    box = Box(e.name, "H100", 1, duration=420, cpus=32, ebpf="noroot")
    win = lambda t: 180 <= t < 360
    return box, run_program(box, [(2, 180, "mixed", 0.92), (180, 360, "mixed", 0.55),
                                  (360, 420, "mixed", 0.92)], cmd="./md_sim --steps 1e9",
                            pinned=True, other_cpu=lambda t: 90.0 if win(t) else 2.0), None


@trace("h_prog_h200_matmul_power_cap", "program",
       note="bf16 matmul at ~690 W: power cap, 1.4-1.5 GHz, tensor ~93% (the real H200 run)")
def _(e):
    box = Box(e.name, "H200", 1, duration=240, cpus=16)
    return box, run_program(box, [(10, 230, "matmul", 1.0)], cmd="python3 scripts/gpu_check.py"), None


@trace("h_prog_h100_phases", "program",
       note="a CFD code alternating compute and memory-heavy phases every 20-40 s")
def _(e):
    box = Box(e.name, "H100", 1, duration=480, cpus=32)
    ph, t = [], 3.0
    import random
    r = random.Random(7)
    while t < 470:
        d = r.uniform(20, 40)
        ph.append((t, min(478, t + d), "matmul" if len(ph) % 2 == 0 else "mixed", 1.0))
        t += d
    return box, run_program(box, ph, cmd="./cfd3d -i case.yaml"), None


@trace("h_prog_a10g_batch_infer", "program",
       note="A10G (no GPM) batch inference with 5 s pauses between files")
def _(e):
    box = Box(e.name, "A10G", 1, duration=360, cpus=8, tick=2.0)
    ph, t = [], 2.0
    while t < 350:
        ph.append((t, t + 25, "mixed", 0.9))
        t += 30
    return box, run_program(box, ph, cmd="python infer_batch.py"), None
