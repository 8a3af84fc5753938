"""The traces: each a function of its name only (every random stream is seeded from it)."""

from __future__ import annotations

import hashlib
import math

from ._core import GIB, rng_for
from ._run import serve_frames
from ._serve import Req, ServeSim
from ._train import train_frames


def ramp(t, t0, t1):
    if t <= t0:
        return 0.0
    if t >= t1:
        return 1.0
    return (t - t0) / (t1 - t0)


def start_of(name: str) -> float:
    """A night-time wall clock (UTC 01:00-04:59) on a day in 2026-2027, from the name."""
    h = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
    day = 20454 + h % 400
    return day * 86400.0 + 3600 + (h >> 9) % (4 * 3600)


def diurnal(t, base, amp=0.15, period=600.0, phase=0.0):
    return base * (1 + amp * math.sin(2 * math.pi * t / period + phase))


def waves(rng_name, t, base, every=40.0, boost=0.8, width=8.0):
    """Sessions arriving in waves: a bump every ``every`` seconds, phase from the name."""
    ph = (int(hashlib.sha256(rng_name.encode()).hexdigest()[:4], 16) % 100) / 100 * every
    x = ((t + ph) % every) / width
    return base * (1 + boost * math.exp(-x * x * 2))


def _serve(name, sim, T, dt, knobs, others=None, ticks=None):
    log = []
    frames = serve_frames(sim, T, dt, knobs, start_of(name), others=others, truth_log=log,
                          pstate_jitter=_jitter_ticks(name, T, dt), ticks=ticks)
    return frames, log


def _train(name, T, dt, knobs, **kw):
    log = []
    frames = train_frames(name, T, dt, knobs, start_of(name), truth_log=log, **kw)
    return frames, log


def _jitter_ticks(name, T, dt):
    r = rng_for(name, "pstate")
    n = int(T / dt)
    return {r.randrange(0, max(1, n)) for _ in range(3)}


def mixed_ticks(name, T):
    """1 s ticks with a stretch at 0.5 s and a stretch at 2 s (a user changed --interval)."""
    r = rng_for(name, "ticks")
    a = r.uniform(0.25, 0.35) * T
    b = r.uniform(0.6, 0.7) * T
    out, t = [], 0.0
    while t < T - 1e-9:
        out.append(round(t, 3))
        t += 0.5 if a <= t < a + 20 else (2.0 if b <= t < b + 30 else 1.0)
    return out


# ------------------------------------------------------------------ other tenants on a box
def neighbours(name, busy_map, base_pid=41000, model="Qwen2.5-7B-Instruct"):
    """Independent servers on the other GPUs: (pid, name, cmd, mem, share, busy, sm, ten, dram, cpu)."""
    r = rng_for(name, "neighbours")
    phase = {g: r.uniform(0, 6.28) for g in busy_map}

    def f(t, g):
        if g not in busy_map:
            return []
        lvl = busy_map[g] * (1 + 0.08 * math.sin(t / 23 + phase[g])) * r.uniform(0.95, 1.05)
        lvl = max(0.0, min(0.99, lvl))
        return [(base_pid + 13 * g, "python3",
                 f"python3 -m vllm.entrypoints.openai.api_server --model {model} --port {8000 + g}",
                 int(71 * GIB), lvl, lvl, lvl * 78, lvl * 14, lvl * 55, 1000 + t * 0.8)]
    return f


# ================================================================== pathologies
def oversized_logprobs_n8(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="Qwen/Qwen2.5-7B-Instruct",
                   params_b=7.6, kv_kib=56, ebpf=False)
    for i, t0 in enumerate((72.0, 85.0, 97.5, 110.0)):
        # n=8, logprobs=20: a softmax over the 152k vocabulary for 8 sequences every step
        sim.inject(Req(t0, 520, 32, 16, n=8, max_tokens=16, step_ms=640.0))
    return _serve(name, sim, 160, 1.0, lambda t: dict(rate=waves(name, t, 5.5, 45, 0.5)))


def oversized_llamacpp_32k(name):
    sim = ServeSim(name, engine="llamacpp", gpu="L40S", model="llama-3.1-8b-instruct-Q8_0.gguf",
                   params_b=8.5 / 2 * 1.06, kv_kib=128, slots=4, budget=2048, host_ms=1.2,
                   chat_prompt=400, chat_out=380, rag_frac=0.0, cache_frac=0.5)
    sim.inject(Req(66.0, 1800, 0, 30000, max_tokens=32768))
    sim.inject(Req(70.0, 2400, 0, 30000, max_tokens=32768))
    return _serve(name, sim, 220, 1.0, lambda t: dict(rate=diurnal(t, 0.48, 0.1, 300)))


def oversized_best_of(name):
    sim = ServeSim(name, engine="vllm", gpu="A100", model="mistralai/Mistral-7B-Instruct-v0.3",
                   params_b=7.25, kv_kib=128, max_seqs=128)
    # a reranking job: n=20 candidates (best_of style), 1500-token answers each
    for i in range(5):
        sim.inject(Req(75.0 + 9 * i, 3000, 0, 1500, n=20, max_tokens=2048, step_ms=6.0))
    return _serve(name, sim, 200, 2.0, lambda t: dict(rate=diurnal(t, 2.6, 0.1, 400)))


def prefill_rag_burst(name):
    sim = ServeSim(name, engine="vllm", gpu="H200", model="meta-llama/Llama-3.1-70B-Instruct",
                   params_b=70.6, kv_kib=320, tp=2, budget=8192, rag_frac=0.05, all_gpus=2)

    def k(t):
        extra = 1.0 * ramp(t, 75, 85) * (1 - ramp(t, 145, 150))
        return dict(rate=diurnal(t, 2.2, 0.1, 500) + 0.0, mix=0.05 + 0.6 * extra / (1 + extra) * 2,
                    prefill_scale=1.0)
    return _serve(name, sim, 190, 1.0, k)


def prefill_sglang_summaries(name):
    sim = ServeSim(name, engine="sglang", gpu="H100", model="Qwen/Qwen2.5-14B-Instruct",
                   params_b=14.7, kv_kib=192, budget=8192, rag_frac=0.05)

    def k(t):
        w = ramp(t, 80, 95) * (1 - ramp(t, 150, 160))
        return dict(rate=waves(name, t, 3.0 + 1.6 * w, 50, 0.4), mix=0.05 + 0.5 * w)
    return _serve(name, sim, 200, 1.0, k)


def straggler_moe_tp8(name):
    sim = ServeSim(name, engine="sglang", gpu="H200", model="deepseek-ai/DeepSeek-V3",
                   params_b=37.0 * 8 / 3, kv_kib=70, tp=8, budget=16384, max_seqs=256,
                   chat_prompt=900, cpus=192, all_gpus=8)

    def k(t):
        f = 1.0 + 0.85 * ramp(t, 70, 80) * (1 - ramp(t, 150, 155))
        # hot experts routed to rank 5 (expert parallel): it computes 1.85x the others
        return dict(rate=diurnal(t, 9.0, 0.1, 400), clock=1 / f,
                    rank_work={5: 1 / f} if f > 1.01 else {})
    return _serve(name, sim, 190, 1.0, k)


def straggler_nvlink_ddp(name):
    def k(t):
        w = ramp(t, 65, 70) * (1 - ramp(t, 140, 142))
        return dict(comm_extra=0.55 * w, nvlink_scale={6: 1 - 0.8 * w})
    return _train(name, 180, 1.0, k, gpus=8, gpu="H100", step_s=1.3, comm_s=0.12,
                  per_step=8 * 8 * 4096, unit="tokens")


def input_stall_a100(name):
    def k(t):
        w = ramp(t, 70, 78)
        return dict(data_s=0.45 * w, loader_rate=0.3 + 0.7 * w)
    return _train(name, 170, 1.0, k, gpus=1, gpu="A100", step_s=0.85, comm_s=0.0,
                  per_step=64, unit="samples", workers=4, sm=68, ten=30, dram=34)


def input_stall_8gpu_severe(name):
    def k(t):
        w = ramp(t, 80, 82) * (1 - ramp(t, 150, 152))
        return dict(data_s=2.2 * w, loader_rate=0.3 + 0.7 * w, psi=0.5 + 20 * w)
    return _train(name, 200, 1.0, k, gpus=8, gpu="H100", step_s=1.1, comm_s=0.1,
                  per_step=8 * 16 * 2048, unit="tokens", workers=8)


def _contended(cpu_share, psi, runnable, inv):
    return dict(cpu_share=cpu_share, psi=psi, runnable=runnable, inv_rate=inv)


def launch_jitter_vllm(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, ebpf=True, cpus=32, host_ms=9.0, host_seq_ms=0.2)

    def k(t):
        w = ramp(t, 75, 80) * (1 - ramp(t, 135, 138))
        d = dict(rate=diurnal(t, 7.0, 0.1, 500))
        if w > 0:
            d.update(_contended(1 - 0.62 * w, 1 + 60 * w, 4 + 50 * w, 5 + 900 * w),
                     launch_stall=0.04 * w, launch_stall_ms=4.0, noisy_cores=30 * w)
        return d
    return _serve(name, sim, 180, 1.0, k)


def launch_jitter_sglang(name):
    sim = ServeSim(name, engine="sglang", gpu="H200", model="Qwen/Qwen2.5-32B-Instruct",
                   params_b=32.8, kv_kib=256, ebpf=True, cpus=48, host_ms=9.0, host_seq_ms=0.2, chat_prompt=500, rag_frac=0.05)

    def k(t):
        w = ramp(t, 70, 100) * (1 - ramp(t, 160, 165))  # a slow onset: a build job ramps up
        d = dict(rate=diurnal(t, 3.0, 0.1, 500))
        if w > 0:
            d.update(_contended(1 - 0.62 * w, 1 + 55 * w, 3 + 70 * w, 5 + 1100 * w),
                     launch_stall=0.035 * w, launch_stall_ms=5.0, noisy_cores=44 * w)
        return d
    return _serve(name, sim, 200, 1.0, k)


def cpu_quota_vllm(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, cpus=96, host_ms=9.0, host_seq_ms=0.2,
                   container="docker:3f2a1b9c0d1e")

    def k(t):
        d = dict(rate=diurnal(t, 7.0, 0.1, 500))
        if 70 <= t < 140:  # a Kubernetes limit of 1.5 cores for the whole pod: 1/3 core left
            d.update(cpu_share=0.36, quota=1.5, psi=38.0)
        return d
    return _serve(name, sim, 180, 1.0, k)


def cpu_neighbour_trainer(name):
    def k(t):
        w = ramp(t, 70, 72) * (1 - ramp(t, 135, 136))
        if w == 0:
            return {}
        return dict(cpu_share=1 - 0.62 * w, psi=75 * w, runnable=10 + 40 * w, inv_rate=600 * w,
                    data_s=0.5 * w, noisy_cores=40 * w)
    return _train(name, 170, 1.0, k, gpus=1, gpu="H200", step_s=0.9, per_step=16 * 2048,
                  cpus=64, workers=4)


def tiny_ema_loop(name):
    def k(t):
        w = ramp(t, 75, 76) * (1 - ramp(t, 145, 146))
        return dict(tiny_s=2.1 * w)
    return _train(name, 180, 1.0, k, gpus=1, gpu="H200", step_s=0.7, per_step=32 * 1024,
                  label="train_ema.py")


def tiny_embedding_loop(name):
    def k(t):
        w = ramp(t, 62, 63)
        return dict(tiny_s=1.4 * w)
    return _train(name, 150, 1.0, k, gpus=1, gpu="H100", step_s=0.4, comm_s=0.0, per_step=512,
                  unit="samples", label="embed_index.py", sm=60, ten=45, dram=25)


def membw_box8(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, gpu_offset=5, all_gpus=8, port=8005,
                   max_seqs=128, chat_prompt=1200, chat_out=600)
    others = neighbours(name, {0: 0.93, 1: 0.88, 2: 0.95, 3: 0.9, 4: 0.85, 6: 0.92, 7: 0.8})

    def k(t):
        w = ramp(t, 70, 110)
        # an agent framework starts resending whole transcripts: contexts grow to 30-60k
        return dict(rate=diurnal(t, 2.4, 0.1, 500), mix=0.1 + 0.5 * w)
    sim_rag = sim.new_request

    def longer(t, mix=None):
        q = sim_rag(t, mix)
        if mix and mix > 0.3 and sim.arng.random() < mix:
            q.prompt = int(sim.arng.uniform(6000, 11000))
            q.cached = int(q.prompt * 0.96) // 16 * 16
            q.out = int(sim.arng.uniform(400, 1500))
        return q
    sim.new_request = longer
    return _serve(name, sim, 200, 1.0, k, others=others)


def membw_long_context_a100(name):
    sim = ServeSim(name, engine="vllm", gpu="A100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, max_seqs=96, chat_out=500)
    base = sim.new_request

    def longer(t, mix=None):
        q = base(t, mix)
        if t > 70:
            grow = min(1.0, (t - 70) / 40)
            q.prompt = int(q.prompt + grow * sim.arng.uniform(5000, 9000))
            q.cached = int(q.prompt * 0.97)
        return q
    sim.new_request = longer
    return _serve(name, sim, 190, 2.0, lambda t: dict(rate=diurnal(t, 1.6, 0.08, 300)))


def throttle_tp4_hw_slowdown(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.3-70B-Instruct",
                   params_b=70.6, kv_kib=320, tp=4, all_gpus=4, budget=8192)

    def k(t):
        w = ramp(t, 80, 84) * (1 - ramp(t, 150, 152))
        d = dict(rate=diurnal(t, 3.2, 0.1, 400))
        if w > 0:
            c = 1 - (1 - 0.38 * (1 + 0.1 * math.sin(t / 3))) * w  # 600-900 MHz on GPU 2
            d.update(clock=c, rank_clock={2: c}, rank_reason=("hw slowdown", "power brake"))
        return d
    return _serve(name, sim, 190, 1.0, k)


def throttle_fan_failure(name):
    sim = ServeSim(name, engine="llamacpp", gpu="RTX6000", model="qwen2.5-32b-instruct-q4_k_m.gguf",
                   params_b=32.8 * 0.3, kv_kib=256, slots=8, budget=2048, host_ms=1.0,
                   chat_prompt=500, chat_out=300, rag_frac=0.0)

    def k(t):
        w = ramp(t, 60, 100)  # the fan stops; the board heats for 40 s, then clocks fall
        fan = 34.0 * (1 - ramp(t, 60, 61))
        c = 1 - 0.45 * ramp(t, 95, 120)
        return dict(rate=diurnal(t, 1.6, 0.1, 300), fan=fan, temp_boost=35 * w, clock=c,
                    clock_cap=sim.spec["clock"] * c,
                    throttle=("thermal (sw)", "thermal (hw)") if c < 0.97 else ())
    return _serve(name, sim, 200, 1.0, k)


def throttle_ddp_thermal(name):
    def k(t):
        w = ramp(t, 70, 90) * (1 - ramp(t, 160, 165))
        s = 1 - 0.42 * w
        return dict(rank_speed={3: s} if w > 0 else None, clock_cap=1980 * s if w > 0 else None,
                    cap_gpus=(3,), throttle=("thermal (sw)",) if w > 0.2 else (), temp_boost=22 * w)
    return _train(name, 200, 1.0, k, gpus=8, gpu="H200", step_s=1.6, comm_s=0.15,
                  per_step=8 * 8 * 4096)


def kv_pressure_vllm(name):
    sim = ServeSim(name, engine="vllm", gpu="L40S", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, max_seqs=128, chat_out=400)

    def k(t):
        w = ramp(t, 70, 90) * (1 - ramp(t, 150, 160))
        return dict(rate=diurnal(t, 1.6, 0.1, 500) * (1 + 0.3 * w), mix=0.08 + 0.6 * w)
    base = sim.new_request

    def longer(t, mix=None):
        q = base(t, mix)
        if mix and mix > 0.2 and q.prompt > 2000:
            q.prompt = int(q.prompt * 1.8)
            q.out = int(q.out * 3)
            q.cached = 0
        return q
    sim.new_request = longer
    return _serve(name, sim, 200, 1.0, k)


def kv_pressure_sglang(name):
    sim = ServeSim(name, engine="sglang", gpu="A10G", model="Qwen/Qwen2.5-7B-Instruct-AWQ",
                   params_b=7.6 * 0.3, kv_kib=56, max_seqs=64, chat_out=350, budget=4096)

    def k(t):
        w = ramp(t, 65, 80) * (1 - ramp(t, 140, 150))
        return dict(rate=diurnal(t, 1.4, 0.1, 500) * (1 + 0.2 * w), mix=0.05 + 0.7 * w)
    base = sim.new_request

    def longer(t, mix=None):
        q = base(t, mix)
        if mix and mix > 0.2 and q.prompt > 2000:
            q.prompt = int(min(28000, q.prompt * 2.2))
            q.out = int(q.out * 3)
            q.cached = 0
        return q
    sim.new_request = longer
    return _serve(name, sim, 190, 2.0, k)


def shared_notebook(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, gpu_mem_util=0.82)

    def other(t, g):
        if not (70 <= t < 140):
            return []
        lvl = 0.55 + 0.05 * math.sin(t / 4)
        return [(61234, "python", "/home/amy/.venv/bin/python -m ipykernel_launcher -f kernel-1.json",
                 int(9 * GIB), lvl, lvl, 70 * lvl, 45 * lvl, 25 * lvl, 120.0 + t)]

    def k(t):
        d = dict(rate=diurnal(t, 7.0, 0.1, 500))
        if 70 <= t < 140:
            d["gpu_share"] = 0.55  # the driver time-slices the two contexts
        return d
    return _serve(name, sim, 180, 1.0, k, others=other)


def shared_trainer_matmul(name):
    def other(t, g):
        if not (65 <= t < 135):
            return []
        return [(52001, "python3", "python3 bench_matmul.py --size 8192", int(6 * GIB), 0.9, 0.9,
                 80.0, 55.0, 20.0, 30.0)]

    def k(t):
        w = 1.0 if 65 <= t < 135 else 0.0
        return dict(other=other, rank_speed={0: 1 - 0.45 * w} if w else None)
    return _train(name, 170, 1.0, k, gpus=1, gpu="H200", step_s=0.8, comm_s=0.0,
                  per_step=8 * 512, unit="tokens", sm=50, ten=14, dram=22)


def spec_decode_vllm(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-70B-Instruct",
                   params_b=70.6, kv_kib=320, tp=4, all_gpus=4, spec_k=4)

    def k(t):
        # a redeploy at t=70 points the draft model at a different tokenizer revision
        a = 0.74 - 0.62 * ramp(t, 70, 74)
        return dict(rate=diurnal(t, 2.4, 0.1, 400), accept=a)
    return _serve(name, sim, 170, 1.0, k)


def spec_decode_sglang(name):
    sim = ServeSim(name, engine="sglang", gpu="H200", model="Qwen/Qwen2.5-Coder-32B-Instruct",
                   params_b=32.8, kv_kib=256, spec_k=4, cache_frac=0.3)

    def k(t):
        # traffic shifts from English chat to code in a new language: EAGLE drafts miss
        a = 0.7 - 0.45 * ramp(t, 70, 110)
        return dict(rate=diurnal(t, 2.0, 0.1, 400), accept=a)
    return _serve(name, sim, 200, 1.0, k)


# ================================================================== healthy look-alikes
def h_traffic_falloff(name):
    sim = ServeSim(name, engine="vllm", gpu="H200", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, chat_out=600)
    for i in range(4):
        sim.inject(Req(100.0 + i, 900, 0, 4000, max_tokens=4096))
    return _serve(name, sim, 220, 1.0, lambda t: dict(rate=8.0 * (1 - 0.9 * ramp(t, 60, 180))))


def h_model_reload(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128)
    state = {"reset": False}

    def k(t):
        if 60 <= t < 85:
            return dict(rate=5.0, down=True)
        if 85 <= t < 110:
            if not state["reset"]:
                state["reset"] = True
                for key in sim.c:
                    sim.c[key] = 0.0
                for h in sim.h.values():
                    h.counts = [0] * len(h.counts)
                    h.sum = 0.0
                sim.waiting.clear()
                sim.running.clear()
            return dict(rate=0.0, reload=ramp(t, 85, 105))
        return dict(rate=5.0 * (0.1 + 0.9 * ramp(t, 110, 170)) if t >= 110 else 5.0)

    def k2(t):
        d = k(t)
        if "reload" in d and d["reload"] > 0:
            d["down"] = False
        return d
    return _serve(name, sim, 230, 1.0, k2)


def h_one_big_prompt(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128)
    sim.inject(Req(95.0, 10200, 0, 600, max_tokens=1024))
    return _serve(name, sim, 180, 1.0, lambda t: dict(rate=3.0 + 3.0 * ramp(t, 0, 180)))


def h_evening_peak(name):
    sim = ServeSim(name, engine="sglang", gpu="H200", model="Qwen/Qwen2.5-14B-Instruct",
                   params_b=14.7, kv_kib=192)
    return _serve(name, sim, 240, 1.0, lambda t: dict(rate=waves(name, t, 2.0 + 4.0 * ramp(t, 40, 180), 60, 0.3)),
                  ticks=mixed_ticks(name, 240))


def h_power_cap_allday(name):
    sim = ServeSim(name, engine="vllm", gpu="H200", model="meta-llama/Llama-3.1-405B-Instruct-FP8",
                   params_b=405 / 2, kv_kib=504, tp=8, all_gpus=8, budget=16384, rag_frac=0.5,
                   cpus=224)
    return _serve(name, sim, 180, 1.0, lambda t: dict(rate=diurnal(t, 2.5, 0.1, 300), mix=0.55))


def h_box8_mixed(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, all_gpus=8)
    others = neighbours(name, {1: 0.35, 2: 0.97, 3: 0.6, 4: 0.12, 5: 0.8, 6: 0.0, 7: 0.9})
    return _serve(name, sim, 180, 1.0, lambda t: dict(rate=diurnal(t, 4.0, 0.2, 200)), others=others)


def h_trainer_eval_ckpt(name):
    def k(t):
        c = t % 90
        if 40 <= c < 55:
            return dict(phase="eval")
        if 55 <= c < 67 and t > 100:
            return dict(phase="ckpt", psi=4.0)
        return {}
    return _train(name, 240, 1.0, k, gpus=4, gpu="H100", step_s=2.2, comm_s=0.2,
                  per_step=4 * 8 * 4096)


def h_prefix_burst(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, cache_frac=0.45)

    def k(t):
        b = ramp(t, 80, 82) * (1 - ramp(t, 110, 112))
        sim.cache_frac = 0.45 + 0.5 * b  # a batch of few-shot evals sharing one long prefix
        return dict(rate=4.0 + 5.0 * b, mix=0.15 + 0.1 * b)
    return _serve(name, sim, 170, 1.0, k)


def h_idle_reserved(name):
    sim = ServeSim(name, engine="vllm", gpu="A100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128)

    def k(t):
        return dict(rate=0.0 if t < 130 else 0.05)
    return _serve(name, sim, 160, 2.0, k)


def h_bursty_chat(name):
    sim = ServeSim(name, engine="llamacpp", gpu="A10G", model="llama-3.2-3b-instruct-q8_0.gguf",
                   params_b=3.2 / 2 * 1.06, kv_kib=112, slots=8, budget=2048, host_ms=1.0,
                   chat_prompt=300, chat_out=200, rag_frac=0.02)
    return _serve(name, sim, 200, 1.0, lambda t: dict(rate=waves(name, t, 1.4, 25, 1.8, 5)))


def h_ddp_fast_ticks(name):
    return _train(name, 120, 0.5, lambda t: {}, gpus=8, gpu="H200", step_s=0.35, comm_s=0.05,
                  per_step=8 * 4 * 2048)


def h_sglang_tp2_a100(name):
    sim = ServeSim(name, engine="sglang", gpu="A100", model="Qwen/Qwen2.5-32B-Instruct",
                   params_b=32.8, kv_kib=256, tp=2, all_gpus=2)
    return _serve(name, sim, 200, 2.0, lambda t: dict(rate=diurnal(t, 1.8, 0.25, 150)))


def h_plain_cuda_job(name):
    return _train(name, 150, 1.0, lambda t: {}, gpus=2, gpu="L40S", step_s=3.5, comm_s=0.3,
                  per_step=1, counter=False, label="simulate_md.py", sm=88, ten=5, dram=40)


def h_spec_steady(name):
    sim = ServeSim(name, engine="vllm", gpu="H100", model="meta-llama/Llama-3.1-8B-Instruct",
                   params_b=8.03, kv_kib=128, spec_k=3)

    def k(t):
        # acceptance wanders with the mix of prompts, as it does: 0.55-0.75
        return dict(rate=waves(name, t, 4.0, 30, 1.0, 6), accept=0.65 + 0.1 * math.sin(t / 17))
    return _serve(name, sim, 180, 1.0, k)


def h_ebpf_busy_host(name):
    sim = ServeSim(name, engine="vllm", gpu="H200", model="Qwen/Qwen2.5-32B-Instruct",
                   params_b=32.8, kv_kib=256, ebpf=True, cpus=96)

    def k(t):
        # a CI job on the other NUMA node: the host is busy, the engine's cores are not
        b = ramp(t, 60, 70) * (1 - ramp(t, 130, 140))
        return dict(rate=diurnal(t, 1.6, 0.1, 300), runnable=4 + 40 * b, psi=1 + 6 * b,
                    noisy_cores=45 * b)
    return _serve(name, sim, 180, 1.0, k)


def h_chat_l40s_waves(name):
    sim = ServeSim(name, engine="vllm", gpu="L40S", model="mistralai/Mistral-7B-Instruct-v0.3",
                   params_b=7.25, kv_kib=128, max_seqs=64)
    return _serve(name, sim, 200, 1.0, lambda t: dict(rate=waves(name, t, 1.6, 70, 1.5, 12)),
                  ticks=mixed_ticks(name, 200))


def h_trainer_slow_steps(name):
    return _train(name, 200, 1.0, lambda t: {}, gpus=1, gpu="A100", step_s=3.8, comm_s=0.0,
                  per_step=4, unit="samples", sm=82, ten=55, dram=30)


# name, family, cause, culprit, window, engine, gpus, model, tick, note, builder
P = "pathology"
CATALOGUE = [
    ("storm_n8_logprobs", "serving", "oversized_request", None, (72.0, 122.0), "vllm", 1, "H100", 1.0,
     "Four n=8, logprobs=20 requests in a row make every decode step compute a full-vocabulary softmax for 8 sequences: each stalls the whole batch ~10 s at ~97% GPU-Util.",
     oversized_logprobs_n8),
    ("llamacpp_32k_hog", "serving", "oversized_request", None, (66.0, 220.0), "llamacpp", 1, "L40S", 1.0,
     "Two max_tokens=32768 generations take 2 of the server's 4 slots for minutes; the other requests queue (requests_deferred) and their TTFT grows.",
     oversized_llamacpp_32k),
    ("a100_best_of_rerank", "serving", "oversized_request", None, (75.0, 200.0), "vllm", 1, "A100", 2.0,
     "A reranking job sends n=20 best-of style requests with 1500-token answers: each takes 20 of the 128 batch slots and slows every step with 20 samplers.",
     oversized_best_of),
    ("h200_tp2_rag_prefill", "serving", "prefill_interference", None, (75.0, 150.0), "vllm", 2, "H200", 1.0,
     "A RAG backfill sends 5-16k-token prompts to a TP2 70B; chunked prefill puts an 8k-token chunk into most decode steps and ITL p99 doubles.",
     prefill_rag_burst),
    ("sglang_summaries_prefill", "serving", "prefill_interference", None, (80.0, 160.0), "sglang", 1, "H100", 1.0,
     "A document-summarisation wave adds long prompts to a chat SGLang; prefill chunks stretch every decode step.",
     prefill_sglang_summaries),
    ("moe_tp8_hot_expert", "serving", "collective_straggler", (5,), (70.0, 155.0), "sglang", 8, "H200", 1.0,
     "Hot experts routed to rank 5 of an expert-parallel DeepSeek: GPU 5 computes at full clock while the 7 others wait in the all-to-all at low SM; no clock is cut, so the straggler, not throttling, is the cause.",
     straggler_moe_tp8),
    ("ddp8_nvlink_degraded", "training", "collective_straggler", (6,), (65.0, 142.0), "trainer", 8, "H100", 1.0,
     "NVLink on GPU 6 retrains to a fraction of its links: every all-reduce waits on rank 6 and all eight GPUs spin in NCCL; steps/s fall ~25%.",
     straggler_nvlink_ddp),
    ("a100_loader_stall", "training", "input_stall", None, (70.0, 170.0), "trainer", 1, "A100", 1.0,
     "After a switch to on-the-fly JPEG decoding the 4 DataLoader workers pin their cores at 100% and the GPU waits ~0.45 s per step (a moderate stall).",
     input_stall_a100),
    ("ddp8_loader_stall_severe", "training", "input_stall", None, (80.0, 152.0), "trainer", 8, "H100", 1.0,
     "The dataset moves to a network filesystem: every rank waits ~2 s for input per 1.1 s step, GPU-Util saw-tooths on all 8 GPUs.",
     input_stall_8gpu_severe),
    ("vllm_noisy_neighbour_ebpf", "containers", "host_launch_jitter", None, (75.0, 138.0), "vllm", 1, "H100", 1.0,
     "A batch job lands on the engine's cores: the EngineCore thread gets a third of a core, eBPF shows launch calls lasting milliseconds; the batch grows, tokens/s holds, ITL p99 2-3x.",
     launch_jitter_vllm),
    ("sglang_build_job_ebpf", "containers", "host_launch_jitter", None, (75.0, 165.0), "sglang", 1, "H200", 1.0,
     "A compile job ramps up over 30 s on the same cores as the SGLang scheduler; launch calls are preempted (eBPF long tail, involuntary switches), decode steps stretch.",
     launch_jitter_sglang),
    ("vllm_pod_cpu_limit", "containers", "host_cpu_contention", None, (70.0, 140.0), "vllm", 1, "H100", 1.0,
     "A redeploy gives the pod a 1.5-core CFS limit; the EngineCore thread is throttled in nearly every period and gets ~1/3 core; GPU-Util falls, the queue grows.",
     cpu_quota_vllm),
    ("trainer_cpu_hogs", "training", "host_cpu_contention", None, (70.0, 136.0), "trainer", 1, "H200", 1.0,
     "Another team's preprocessing is pinned onto the trainer's cores: PSI 70%, run queue ~50, the main thread gets ~40% of a core and steps slow.",
     cpu_neighbour_trainer),
    ("ema_python_loop", "training", "tiny_kernels", None, (75.0, 146.0), "trainer", 1, "H200", 1.0,
     "An upgrade turns the EMA update into a Python loop over 2,000 parameter tensors: one-element kernels keep GPU-Util at ~100% with ~1% SM and idle power, steps take 4x longer.",
     tiny_ema_loop),
    ("embedding_item_loop", "training", "tiny_kernels", None, (62.0, 150.0), "trainer", 1, "H100", 1.0,
     "An embedding indexer normalises vectors with a per-element loop: tiny kernels fill the GPU's time while the SMs sit idle; samples/s fall to a quarter.",
     tiny_embedding_loop),
    ("box8_gpu5_long_contexts", "serving", "memory_bandwidth", (5,), (85.0, 200.0), "vllm", 8, "H100", 1.0,
     "Eight independent servers; the one on GPU 5 starts receiving 6-11k-token agent transcripts: each decode step reads the whole KV, DRAM bandwidth saturates and its ITL grows ~2x.",
     membw_box8),
    ("a100_context_growth", "serving", "memory_bandwidth", None, (90.0, 190.0), "vllm", 1, "A100", 2.0,
     "Contexts grow from ~1k to 6-10k tokens (prefix-cached chat histories): decode becomes bound by KV reads on an A100, tokens/s per sequence and ITL degrade.",
     membw_long_context_a100),
    ("tp4_gpu2_hw_slowdown", "serving", "throttling", (2,), (80.0, 152.0), "vllm", 4, "H100", 1.0,
     "GPU 2 of a TP4 70B is held at 600-900 MHz by HW slowdown / power brake; the other three wait in the all-reduce at ~40% SM. The clock cut is the root cause, the collective wait its consequence.",
     throttle_tp4_hw_slowdown),
    ("rtx6000_fan_failure", "serving", "throttling", None, (95.0, 200.0), "llamacpp", 1, "RTX6000", 1.0,
     "The workstation card's fan stops: temperature climbs for 40 s, then thermal slowdown cuts clocks ~45% and llama.cpp tokens/s follow.",
     throttle_fan_failure),
    ("ddp8_gpu3_thermal", "training", "throttling", (3,), (75.0, 165.0), "trainer", 8, "H200", 1.0,
     "A blocked air inlet heats GPU 3 of a DDP job: thermal slowdown cuts its clock ~40% and the other seven spin in the all-reduce; the clock cut on GPU 3 is the root cause.",
     throttle_ddp_thermal),
    ("l40s_kv_preemptions", "serving", "kv_pressure", None, (75.0, 160.0), "vllm", 1, "L40S", 1.0,
     "Long RAG prompts with long answers fill the L40S's ~25 GB KV pool: vLLM preempts and recomputes, the queue grows and TTFT climbs.",
     kv_pressure_vllm),
    ("a10g_sglang_retractions", "serving", "kv_pressure", None, (70.0, 150.0), "sglang", 1, "A10G", 2.0,
     "On an A10G, long prompts exhaust SGLang's token pool: decode retracts requests back to the queue again and again.",
     kv_pressure_sglang),
    ("h100_jupyter_timeslice", "serving", "gpu_shared", None, (70.0, 140.0), "vllm", 1, "H100", 1.0,
     "A notebook kernel starts training on the serving GPU: the driver time-slices the two contexts, NVML lists both with their SM shares, the engine's steps slow ~45%.",
     shared_notebook),
    ("trainer_matmul_neighbour", "training", "gpu_shared", None, (65.0, 135.0), "trainer", 1, "H200", 1.0,
     "A benchmark script multiplies 8192^2 matrices on the trainer's GPU: GPU-Util reads 100%, power hits the cap, the trainer's tokens/s fall by ~45%.",
     shared_trainer_matmul),
    ("tp4_draft_mismatch", "serving", "spec_decode_rejected", None, (70.0, 170.0), "vllm", 4, "H100", 1.0,
     "A redeploy pairs the 70B with a draft model of another tokenizer revision: acceptance falls from ~0.74 to ~0.12 and speculative decoding now costs more than it saves.",
     spec_decode_vllm),
    ("sglang_eagle_domain_shift", "serving", "spec_decode_rejected", None, (85.0, 200.0), "sglang", 1, "H200", 1.0,
     "Traffic shifts to code in a language the EAGLE head never saw: acceptance slides from 0.7 to 0.25 over 40 s and tokens/s fall with it.",
     spec_decode_sglang),
    # healthy
    ("traffic_falloff_long_tails", "healthy", None, None, None, "vllm", 1, "H200", 1.0,
     "Traffic falls to a tenth over two minutes while a few 4k-token generations keep the GPU busy.",
     h_traffic_falloff),
    ("model_reload", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
     "A planned model reload: endpoint gone 25 s, VRAM empties and refills, counters restart, the load balancer ramps traffic back slowly.",
     h_model_reload),
    ("one_10k_prompt_growing", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
     "A workload doubling over three minutes with one 10k-token prompt in it.",
     h_one_big_prompt),
    ("evening_peak_sglang", "healthy", None, None, None, "sglang", 1, "H200", 1.0,
     "The evening peak: arrivals triple, the batch grows and tokens/s rise with it (ticks change 1 s / 0.5 s / 2 s).",
     h_evening_peak),
    ("tp8_power_cap_allday", "healthy", None, None, None, "vllm", 8, "H200", 1.0,
     "A TP8 405B FP8 server doing heavy prefill sits at its 700 W cap with 'power cap' as its throttle reason all day.",
     h_power_cap_allday),
    ("box8_uneven_loads", "healthy", None, None, None, "vllm", 8, "H100", 1.0,
     "Eight independent servers at different healthy loads, one idle.",
     h_box8_mixed),
    ("trainer_eval_checkpoints", "healthy", None, None, None, "trainer", 4, "H100", 1.0,
     "A 4-GPU trainer with a 15 s eval every 90 s and 12 s checkpoints: the counter pauses, GPUs change pace, by design.",
     h_trainer_eval_ckpt),
    ("prefix_cache_burst", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
     "A burst of few-shot evaluation requests sharing a long prefix: prompt tokens jump, most of them prefix-cache hits.",
     h_prefix_burst),
    ("idle_kv_reserved", "healthy", None, None, None, "vllm", 1, "A100", 2.0,
     "An engine at night with no traffic: VRAM full with its KV pool reserved, GPU-Util 0%.",
     h_idle_reserved),
    ("bursty_chat_llamacpp", "healthy", None, None, None, "llamacpp", 1, "A10G", 1.0,
     "Bursty chat on a small llama.cpp server: waves of sessions, slots fill and empty.",
     h_bursty_chat),
    ("ddp8_half_second_ticks", "healthy", None, None, None, "trainer", 8, "H200", 0.5,
     "A healthy 8-GPU DDP job sampled every 0.5 s with steps of 0.4 s.",
     h_ddp_fast_ticks),
    ("sglang_tp2_a100_2s", "healthy", None, None, None, "sglang", 2, "A100", 2.0,
     "A TP2 SGLang on A100s (no GPM fields) sampled every 2 s under a diurnal swing.",
     h_sglang_tp2_a100),
    ("plain_cuda_md_job", "healthy", None, None, None, "none", 2, "L40S", 1.0,
     "A molecular-dynamics job on two L40S with no counter, steady.",
     h_plain_cuda_job),
    ("spec_decode_steady", "healthy", None, None, None, "vllm", 1, "H100", 1.0,
     "Speculative decoding with acceptance wandering 0.55-0.75 as prompts vary.",
     h_spec_steady),
    ("busy_host_other_numa_ebpf", "healthy", None, None, None, "vllm", 1, "H200", 1.0,
     "A CI job loads the other NUMA node: host run queue and CPU% rise while the engine's own cores and launches are untouched.",
     h_ebpf_busy_host),
    ("l40s_chat_waves", "healthy", None, None, None, "vllm", 1, "L40S", 1.0,
     "Chat sessions arriving in waves on an L40S; p99 moves tick to tick (1 s / 0.5 s / 2 s ticks).",
     h_chat_l40s_waves),
    ("a100_slow_steps_trainer", "healthy", None, None, None, "trainer", 1, "A100", 1.0,
     "A diffusion trainer with 3.8 s steps: the samples counter moves once every few ticks.",
     h_trainer_slow_steps),
]
