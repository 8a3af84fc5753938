"""Healthy look-alikes: what an on-call engineer sees that should not page."""

from __future__ import annotations

import math

from . import run as R
from .catalogue import GIB, H, boards, pulse, ramp, serve, trace, train, wob
from .frames import Proc
from .hw import SPECS, Act, Board
from .serving import MODELS, Serving
from .training import THooks, Training


@trace("vllm-h100-evening-fall", "serve-vllm", None, "vllm", 1, "H100", 2, 480,
       note="diurnal: traffic falls from 12 to 2 requests/s over eight minutes; tokens/s, batch, "
       "GPU-Util and power fall together, latency improves")
def _(rng, start):
    return serve("vllm", "llama8b", "H100", 1, 2, 480, rng, start,
                 H(rate=lambda t: ramp(t, 0, 480, 12, 2) * (1 + 0.08 * math.sin(t / 13))))


@trace("vllm-h200-bursty-arrivals", "serve-vllm", None, "vllm", 1, "H200", 1, 300,
       note="a batch client sends bursts of ~14 requests/s for 10-20 s between quiet spells: queue "
       "blips, ITL rises a little with the batch, all served; eBPF probes on")
def _(rng, start):
    marks = sorted(rng.uniform(0, 300) for _ in range(9))
    burst = lambda t: any(m <= t < m + 15 for m in marks)
    return serve("vllm", "qwen7b", "H200", 1, 1, 300, rng, start,
                 H(rate=lambda t: 14.0 if burst(t) else 2.0), ebpf=True)


@trace("sglang-h100-tp2-rolling-upgrade", "serve-sglang", None, "sglang", 2, "H100", 1, 330,
       note="a rolling upgrade: the engine stops at 150 s (metrics unreachable, GPU memory freed), "
       "reloads weights, captures CUDA graphs and takes traffic again; counters restart at 0")
def _(rng, start):
    down = lambda t: "stopped" if 150 <= t < 168 else ("loading" if 168 <= t < 200 else (
        "warmup" if 200 <= t < 214 else None))
    return serve("sglang", "qwen32b", "H100", 2, 1, 330, rng, start,
                 H(rate=lambda t: wob(t, 2.5) if t < 150 or t > 230 else wob(t, 1.0), down=down))


@trace("train-h100x8-checkpoints", "train", None, "trainer", 8, "H100", 2, 480,
       note="DDP pretraining that checkpoints every 150 s: 24 s with the GPUs idle and the counter "
       "still while rank 0 writes the state; then full speed")
def _(rng, start):
    hk = THooks(phase=lambda t: "checkpoint" if (t % 150) >= 126 else "train")
    return train("H100", 8, 2, 480, rng, start, hk, counter="tokens", step_s=0.9, comm_s=0.15)


@trace("train-a100x4-eval-pass", "train", None, None, 4, "A100", 2, 400,
       note="a mid-epoch evaluation pass (forward only) for a minute: shorter steps, less power, no "
       "all-reduce; then training resumes; no progress counter")
def _(rng, start):
    hk = THooks(phase=lambda t: "eval" if 200 <= t < 262 else "train")
    return train("A100", 4, 2, 400, rng, start, hk, step_s=1.0, comm_s=0.15)


@trace("vllm-a10g-cold-start", "serve-vllm", None, "vllm", 1, "A10G", 1, 260,
       note="a fresh pod: the engine loads a 7B model on an A10G (metrics unreachable), profiles, "
       "captures graphs, then traffic ramps up from zero")
def _(rng, start):
    down = lambda t: "stopped" if t < 8 else ("loading" if t < 55 else ("warmup" if t < 75 else None))
    return serve("vllm", "qwen7b", "A10G", 1, 1, 260, rng, start,
                 H(rate=lambda t: ramp(t, 75, 160, 0.2, 1.6), prompt=lambda t: 600, out=lambda t: 220,
                   down=down), cpus=8, max_len=8192)


@trace("vllm-h100-rag-long-prompts-normal", "serve-vllm", None, "vllm", 1, "H100", 2, 360,
       note="a RAG service whose prompts are always ~9k tokens: prompt tokens/s dominate and ITL "
       "sits at its (higher) normal all along; nothing changes")
def _(rng, start):
    return serve("vllm", "llama8b", "H100", 1, 2, 360, rng, start,
                 H(rate=lambda t: wob(t, 1.2, 0.1), prompt=lambda t: 9000, out=lambda t: 220,
                   cached=lambda t: 0.2))


@trace("vllm-h200-batch-job-drains", "serve-vllm", None, "vllm", 1, "H200", 2, 360,
       note="an offline batch job submits its last requests at 200 s: the queue drains, the batch "
       "shrinks to zero, tokens/s and GPU-Util fall to idle (clocks stay up)")
def _(rng, start):
    return serve("vllm", "llama8b", "H200", 1, 2, 360, rng, start,
                 H(rate=lambda t: 16.0 if t < 200 else 0.0, prompt=lambda t: 700, out=lambda t: 400))


@trace("sglang-h200-prefix-cache-hits", "serve-sglang", None, "sglang", 1, "H200", 1, 300,
       note="a shared 6k-token system prompt: 92% of prompt tokens come from the radix cache, so "
       "prompt tokens/s look enormous while the GPU works lightly")
def _(rng, start):
    return serve("sglang", "llama8b", "H200", 1, 1, 300, rng, start,
                 H(rate=lambda t: wob(t, 3.0), prompt=lambda t: 6000, out=lambda t: 250,
                   cached=lambda t: 0.92))


@trace("mig-h100-three-tenants", "multi-tenant", None, None, 1, "H100", 2, 360,
       note="an H100 in MIG mode (3g.40gb + 2g.20gb + 1g.10gb) for three teams: a notebook, a "
       "small inference server and a CI job that starts and stops; no GPU-Util in MIG mode")
def _(rng, start):
    b = Board(SPECS["H100"], 0, rng)
    tenants = [Proc(41001, 0, "python", "python serve_embeddings.py", start - 7200, user="search", mig=0),
               Proc(41502, 0, "jupyter", "python -m ipykernel_launcher", start - 900, user="carol", mig=1),
               Proc(42003, 0, "pytest", "pytest tests/gpu -x", start + 100, user="ci", mig=2)]

    def parts(t):
        a0 = Act(wob(t, 0.7, 0.15), 0.7, 0.3, 0.45, 0.2)
        a1 = Act(0.35 if pulse(t, 0, 360, 70, 25) else 0.02, 0.8, 0.3, 0.3, 0.5)
        a2 = Act(0.8 if 100 <= t < 260 else 0.0, 0.6, 0.3, 0.3, 0.1, ctx=100 <= t < 260)
        return [("3g.40gb", 40 * GIB, int(31 * GIB), 60, a0), ("2g.20gb", 20 * GIB, int(9 * GIB), 32, a1),
                ("1g.10gb", 10 * GIB, int((6 if 100 <= t < 260 else 0.05) * GIB), 16, a2)]
    return R.run_mig(b, parts, 180, 2, rng, start, tenants)


@trace("vllm-h100-embedding-sidecar", "serve-vllm", None, "vllm", 1, "H100", 1, 300,
       note="an embedding sidecar shares the GPU all along (3 GiB, ~3% of SM time): a second healthy "
       "process, nothing changes")
def _(rng, start):
    nb = lambda t, g: (0.03 * (1 + 0.3 * math.sin(t / 5)), 3 * GIB, "python3|embed_server.py --port 7000")
    return serve("vllm", "llama8b", "H100", 1, 1, 300, rng, start,
                 H(rate=lambda t: wob(t, 4.5), neighbor=nb), mem_util=0.85)


@trace("vllm-h200-tp4-ranks-differ", "serve-vllm", None, "vllm", 4, "H200", 2, 400,
       note="TP4: the boards run a few degrees and watts apart (slot position, silicon), rank 2 a "
       "hair slower; steady service")
def _(rng, start):
    off = [0.0, 3.0, 6.0, 2.0]
    return serve("vllm", "llama70b", "H200", 4, 2, 400, rng, start,
                 H(rate=lambda t: wob(t, 3.0), heat=lambda t, g: off[g],
                   slow_rank=lambda t, g: 1.03 if g == 2 else 1.0))


@trace("cuda-h200-gemm-burn-in", "cuda", None, None, 1, "H200", 1, 240,
       note="a bf16 GEMM burn-in (plain CUDA) held at the 700 W cap: clocks ~1450 MHz with 'power "
       "cap' set all along while the work is steady, as the real H200 showed")
def _(rng, start):
    return train("H200", 1, 1, 240, rng, start, THooks(), step_s=0.02, cmd="./gemm_burn --bf16 -t 600",
                 proc_name="gemm_burn", workers=0, loader_cost=0.0, cpus=64,
                 compute=Act(1.0, 0.96, 0.147, 0.18, 0.93), launches_per_step=2)


@trace("llamacpp-l40s-single-user", "serve-llamacpp", None, "llamacpp", 1, "L40S", 1, 300,
       note="one developer chatting with llama-server: GPU busy while an answer streams, idle while "
       "they read; counters jump when each answer ends")
def _(rng, start):
    return serve("llamacpp", "gguf32b_q4", "L40S", 1, 1, 300, rng, start,
                 H(rate=lambda t: 0.05, prompt=lambda t: 400, out=lambda t: 350), slots=1, cpus=16)


@trace("two-vllm-engines-one-host", "serve-vllm", None, "vllm", 2, "H100", 2, 360,
       note="two engines on one host: gputop scrapes the one on GPU 0; GPU 1 holds another team's "
       "engine with its own (varying) load")
def _(rng, start):
    b0, b1 = boards("H100", 2, rng)
    s0 = Serving("vllm", MODELS["llama8b"], [b0], 2, rng, H(rate=lambda t: wob(t, 4.0)))
    s1 = Serving("vllm", MODELS["qwen7b"], [b1], 2, rng, H(rate=lambda t: ramp(t, 0, 360, 1, 8)), port=8001)
    return R.run_serving([s0, s1], 180, 2, rng, start)


@trace("train-h200x4-pipeline-bubbles", "train", None, "trainer", 4, "H200", 2, 420,
       note="4-stage pipeline parallel (1F1B): the bubble keeps every stage ~80% busy, steady")
def _(rng, start):
    return train("H200", 4, 2, 420, rng, start, THooks(), counter="tokens", step_s=1.6, comm_s=0.5,
                 overlap=0.2, cmd="torchrun --nproc-per-node {n} pretrain_gpt.py --pipeline-model-parallel-size 4")


@trace("vllm-h100-long-steady-drift", "serve-vllm", None, "vllm", 1, "H100", 2, 480,
       note="eight quiet minutes: traffic drifts up 20%, prompts grow slowly, the room warms a few "
       "degrees")
def _(rng, start):
    return serve("vllm", "llama8b", "H100", 1, 2, 480, rng, start,
                 H(rate=lambda t: ramp(t, 0, 480, 5.0, 6.0) * (1 + 0.05 * math.sin(t / 17)),
                   prompt=lambda t: ramp(t, 0, 480, 900, 1200), heat=lambda t, g: ramp(t, 0, 480, 0, 4)))


@trace("sglang-a100-tp4-kv-high-no-retract", "serve-sglang", None, "sglang", 4, "A100", 2, 360,
       note="SGLang keeps finished requests' KV in its radix cache: token usage high, evictable "
       "tokens large, no retractions, queue small")
def _(rng, start):
    return serve("sglang", "llama70b", "A100", 4, 2, 360, rng, start,
                 H(rate=lambda t: wob(t, 1.2, 0.08), prompt=lambda t: 2500, out=lambda t: 300,
                   cached=lambda t: 0.5), pool_tokens=90000)


@trace("train-l40s-lora-finishes", "train", None, "trainer", 1, "L40S", 1, 320,
       note="a LoRA fine-tune on one L40S reaches its last step at 250 s and exits: GPU-Util to 0, "
       "memory freed, the counter stops")
def _(rng, start):
    hk = THooks(phase=lambda t: "done" if t >= 250 else "train")
    return train("L40S", 1, 1, 320, rng, start, hk, counter="samples", step_s=0.7, tokens_per_step=16,
                 cmd="python finetune_lora.py", cpus=32)


@trace("vllm-b200-tp8-heavy-steady", "serve-vllm", None, "vllm", 8, "B200", 2, 360,
       note="405B FP8 on TP8 B200 under steady heavy load: power brushes the cap now and then, work "
       "steady")
def _(rng, start):
    return serve("vllm", "llama405fp8", "B200", 8, 2, 360, rng, start,
                 H(rate=lambda t: wob(t, 4.0, 0.1), prompt=lambda t: 1500, out=lambda t: 300), max_len=16384)


@trace("vllm-h100-spec-decode-varying", "serve-vllm", None, "vllm", 1, "H100", 1, 300,
       note="EAGLE speculative decoding whose acceptance wanders 0.55-0.75 with the mix of prompts")
def _(rng, start):
    return serve("vllm", "llama8b", "H100", 1, 1, 300, rng, start,
                 H(rate=lambda t: wob(t, 5.0), accept=lambda t: 0.65 + 0.1 * math.sin(t / 23)), spec_k=3)


@trace("ddp-h100x2-ebpf-healthy", "train", None, None, 2, "H100", 1, 240,
       note="DDP on two H100 with gputop's eBPF probes on: launch and sync durations as they always "
       "are, DataLoader keeping up")
def _(rng, start):
    return train("H100", 2, 1, 240, rng, start, THooks(), step_s=0.45, comm_s=0.08, ebpf=True,
                 launches_per_step=5000, cpus=64)
