"""One builder per trace, with its truth.  Every reading comes from the simulation: a fault
changes the physics (a clock, a pool, a competitor for the GPU or CPU, a request), never a
reading directly."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from corpus_ah import Truth
from corpus_ah.build import Scene, seed_of
from corpus_ah.serving import MODELS, EngineCfg, Req, Workload


@dataclass
class Entry:
    name: str
    family: str
    cause: str | None
    fn: object

    def build(self):
        return self.fn(self.name, self.family, self.cause)


ENTRIES: list[Entry] = []


def trace(name, family, cause=None):
    def deco(fn):
        ENTRIES.append(Entry(name, family, cause, fn))
        return fn
    return deco


def truth(scene, family, cause, note, window=None, culprit=None, engine="none"):
    return Truth(name=scene.name, family=family, cause=cause, culprit_gpus=culprit,
                 window=(round(scene.start_wall + window[0], 3), round(scene.start_wall + window[1], 3))
                 if window else None,
                 engine=engine, gpus=len(scene.gpus), gpu_model=scene.gpu_model, tick_s=scene.tick,
                 note=note, start_wall_s=round(scene.start_wall + scene.tick, 6))


def done(scene, family, cause, note, window=None, culprit=None, engine="none"):
    frames = scene.run()
    t = truth(scene, family, cause, note, window, culprit, engine)
    t = Truth(**{**t.__dict__, "start_wall_s": frames[0].time_wall_s})
    return t, frames


# ---------------------------------------------------------------------- helpers
def lognorm(med, sigma, lo, hi):
    def f(rng, t):
        return int(min(hi, max(lo, rng.lognormvariate(math.log(med), sigma))))
    return f


def const(r):
    return lambda t: r


def ramp(r0, r1, a, b):
    return lambda t: r0 if t < a else r1 if t > b else r0 + (r1 - r0) * (t - a) / (b - a)


def within(a, b):
    return lambda t: a <= t < b


def cached_frac(frac, jitter=0.1):
    return lambda rng, p, t: int(p * max(0.0, min(0.98, rng.gauss(frac, jitter))))


def mix(base, extra, on):
    """A prompt sampler that draws from ``extra`` while on(t)."""
    def f(rng, t):
        return extra(rng, t) if on(t) and rng.random() < 0.5 else base(rng, t)
    return f


def url(host, port):
    return f"http://{host}:{port}/metrics"


def vllm(model, spec, gpus=(0,), **kw):
    from corpus_ah.physics import SPECS
    return EngineCfg("vllm", MODELS[model], SPECS[spec], gpus=tuple(gpus), **kw)


def sgl(model, spec, gpus=(0,), **kw):
    from corpus_ah.physics import SPECS
    kw.setdefault("block_size", 1)
    kw.setdefault("host_ms", 2.6)
    return EngineCfg("sglang", MODELS[model], SPECS[spec], gpus=tuple(gpus), **kw)


def lcpp(model, spec, gpus=(0,), **kw):
    from corpus_ah.physics import SPECS
    kw.setdefault("host_ms", 0.6)
    kw.setdefault("overlap", False)
    kw.setdefault("max_batched", 2048)
    kw.setdefault("block_size", 256)
    kw.setdefault("gemm_eff", 0.3)  # ggml's quantized matmuls reach a smaller share of peak
    return EngineCfg("llamacpp", MODELS[model], SPECS[spec], gpus=tuple(gpus), **kw)


def tgi(model, spec, gpus=(0,), **kw):
    from corpus_ah.physics import SPECS
    kw.setdefault("chunked", False)
    kw.setdefault("graphs", True)
    kw.setdefault("overlap", False)
    kw.setdefault("host_ms", 1.2)
    return EngineCfg("tgi", MODELS[model], SPECS[spec], gpus=tuple(gpus), **kw)


CODER_PROMPT = lognorm(9000, 0.7, 800, 60000)
CODER_OUT = lognorm(280, 0.6, 20, 2000)
CHAT_PROMPT = lognorm(900, 0.8, 30, 8000)
CHAT_OUT = lognorm(220, 0.7, 10, 1500)


# ====================================================================== oversized_request
@trace("vllm-n16-logprobs-stalls-coder-api", "serving", "oversized_request")
def _(name, family, cause):
    s = Scene(name, "H100", 2, tick=1.0, dur=300, cpus=96, ebpf="denied")
    W = (150, 215)
    cfg = vllm("qwen32", "H100", (0, 1), url=url("10.0.1.11", 8000), max_num_seqs=128)
    work = Workload(const(0.9), CODER_PROMPT, CODER_OUT, cached_frac(0.82))
    big = [(150.0, dict(prompt=3000, out=2048, n=16, lp=20, maxtok=4096, extra_host=0.00006 * 16 * 21))]
    p = s.serve(cfg, work, specials=big, cmdline="python -m vllm.entrypoints.openai.api_server "
                "--model Qwen/Qwen2.5-Coder-32B-Instruct -tp 2 --enable-prefix-caching --port 8000",
                scrape_s=2.0)
    s.pin = p
    return done(s, family, cause, "eval harness sent n=16, logprobs=20, max_tokens=4096 to the "
                "product endpoint; every agent's inter-token latency doubled until it finished",
                W, engine="vllm")


@trace("sglang-100k-agent-context-retries", "serving", "oversized_request")
def _(name, family, cause):
    s = Scene(name, "H200", 4, tick=1.0, dur=330, cpus=128, ebpf="denied")
    cfg = sgl("llama70fp8", "H200", (0, 1, 2, 3), url=url("10.0.2.21", 30000), max_batched=8192)
    work = Workload(const(2.2), CHAT_PROMPT, CHAT_OUT, cached_frac(0.5))
    big = [(t, dict(prompt=104000 + 900 * k, out=900, maxtok=4096)) for k, t in enumerate((140.0, 162.0, 185.0))]
    s.serve(cfg, work, specials=big, cmdline="python -m sglang.launch_server --model-path "
            "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tp 4 --port 30000 --enable-metrics",
            scrape_s=5.0)
    return done(s, family, cause, "one customer's agent sent a 104k-token context three times "
                "(client retries); each prefill held every step for seconds", (140, 215), engine="sglang")


@trace("llamacpp-support-pastes-giant-log", "serving", "oversized_request")
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=2.0, dur=360, cpus=32, ebpf="denied")
    cfg = lcpp("llama8q8", "L40S", (0,), url=url("127.0.0.1", 8080), max_num_seqs=4,
               pool_tokens=131072, graphs=False)
    work = Workload(const(0.35), lognorm(700, 0.7, 50, 4000), lognorm(250, 0.5, 20, 900))
    big = [(170.0, dict(prompt=58000, out=3600, maxtok=8192))]
    s.serve(cfg, work, specials=big, cmdline="llama-server -m /models/support-bot-8b-Q8_0.gguf "
            "-c 131072 -np 4 -ngl 99 --metrics --port 8080", scrape_s=4.0, user="support")
    return done(s, family, cause, "a support agent pasted a 58k-token log file into the internal "
                "bot; its prompt processing and long answer stalled the other three slots", (170, 250),
                engine="llamacpp")


@trace("vllm-a100-passk-n8-maxtokens-mild", "serving", "oversized_request")
def _(name, family, cause):
    s = Scene(name, "A100", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = vllm("qwen7", "A100", (0,), url=url("10.0.3.5", 8001), max_num_seqs=128)
    work = Workload(const(3.0), CHAT_PROMPT, CHAT_OUT, cached_frac(0.3))
    big = [(120.0, dict(prompt=1500, out=6000, n=8, lp=20, maxtok=16384, extra_host=0.0001 * 8 * 21))]
    s.serve(cfg, work, specials=big, cmdline="vllm serve Qwen/Qwen2.5-Coder-7B-Instruct --port 8001",
            scrape_s=5.0)
    return done(s, family, cause, "a pass@8 eval request (n=8, max_tokens=16384) on the shared A100 "
                "endpoint; other users' latency rose by about half while it ran (mild)", (120, 290),
                engine="vllm")


# ====================================================================== prefill_interference
@trace("vllm-eval-harness-32k-prompts", "serving", "prefill_interference")
def _(name, family, cause):
    s = Scene(name, "H100", 2, tick=1.0, dur=300, cpus=96, ebpf="denied")
    on = within(120, 220)
    cfg = vllm("qwen32", "H100", (0, 1), url=url("10.0.1.12", 8000), max_num_seqs=128)
    work = Workload(lambda t: 0.7 + (0.8 if on(t) else 0), mix(CODER_PROMPT, lognorm(30000, 0.2, 20000, 40000), on),
                    CODER_OUT, lambda rng, p, t: 0 if p > 19000 else int(p * 0.8))
    s.serve(cfg, work, cmdline="vllm serve Qwen/Qwen2.5-Coder-32B-Instruct -tp 2 --port 8000",
            scrape_s=2.0)
    return done(s, family, cause, "the eval harness fired uncached 30k-token repository prompts at "
                "the product replica; chunked prefill took most of each step", (120, 220), engine="vllm")


@trace("sglang-agent-cache-miss-context-growth", "serving", "prefill_interference")
def _(name, family, cause):
    s = Scene(name, "H200", 2, tick=1.0, dur=360, cpus=128, ebpf="denied")
    cfg = sgl("qwen32", "H200", (0, 1), url=url("10.0.2.22", 30001))
    miss = ramp(0.85, 0.12, 130, 230)  # the radix cache stops matching: a proxy rewrote headers
    work = Workload(const(1.1), lognorm(14000, 0.5, 2000, 60000), CODER_OUT,
                    lambda rng, p, t: int(p * max(0.0, rng.gauss(miss(t), 0.05))))
    s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path "
            "Qwen/Qwen2.5-Coder-32B-Instruct --tp 2 --port 30001 --enable-metrics", scrape_s=3.0)
    return done(s, family, cause, "after the proxy began injecting a timestamp into the system "
                "prompt, agent sessions stopped hitting the prefix cache; whole repo contexts were "
                "prefilled again (slow onset)", (150, 360), engine="sglang")


@trace("vllm-l40s-synthetic-mix-mild", "serving", "prefill_interference")
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=1.0, dur=300, cpus=48, ebpf="denied")
    on = within(130, 300)
    cfg = vllm("llama8", "L40S", (0,), url=url("10.0.4.2", 8000), max_batched=2048)
    work = Workload(lambda t: 2.0 + (0.35 if on(t) else 0), mix(CHAT_PROMPT, lognorm(6000, 0.2, 4000, 9000), on),
                    CHAT_OUT, cached_frac(0.2))
    s.serve(cfg, work, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 2048",
            scrape_s=5.0)
    return done(s, family, cause, "synthetic-data job pointed at the chat replica through the "
                "round-robin proxy with 6k-token prompts: ITL p99 up ~2x (mild)", (130, 300), engine="vllm")


@trace("tgi-a10g-long-inputs-pause-decode", "serving", "prefill_interference")
def _(name, family, cause):
    s = Scene(name, "A10G", 1, tick=2.0, dur=360, cpus=8, ebpf="denied", host_base=0.4)
    on = within(150, 300)
    cfg = tgi("mistral7", "A10G", (0,), url=url("127.0.0.1", 3000), max_batched=8192, max_num_seqs=64)
    work = Workload(lambda t: 1.2 + (0.25 if on(t) else 0), mix(lognorm(500, 0.6, 30, 2000), lognorm(3500, 0.15, 2500, 4000), on),
                    lognorm(150, 0.6, 10, 600))
    s.serve(cfg, work, cmdline="text-generation-launcher --model-id mistralai/Mistral-7B-Instruct-v0.3 --port 3000",
            scrape_s=10.0, name="text-generation-server")
    return done(s, family, cause, "old TGI (no chunked prefill) got 3.5k-token code-search "
                "summaries: every prefill batch paused all decodes", (150, 300), engine="tgi")


# ====================================================================== kv_pressure
@trace("vllm-upgrade-72b-pool-too-small", "serving", "kv_pressure")
def _(name, family, cause):
    s = Scene(name, "H100", 2, tick=1.0, dur=330, cpus=96, ebpf="denied")
    cfg = vllm("qwen72", "H100", (0, 1), url=url("10.0.1.13", 8000), max_num_seqs=128)
    work = Workload(ramp(0.25, 0.9, 60, 180), lognorm(7000, 0.6, 500, 40000), CODER_OUT, cached_frac(0.5))
    s.serve(cfg, work, cmdline="vllm serve Qwen/Qwen2.5-72B-Instruct -tp 2 --port 8000", scrape_s=2.0)
    return done(s, family, cause, "after upgrading 32B->72B on the same two H100s the KV pool "
                "shrank to ~40k tokens; as morning traffic rose requests were preempted", (170, 330), engine="vllm")


@trace("sglang-long-sessions-retract", "serving", "kv_pressure")
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = sgl("qwen32", "H200", (0,), url=url("10.0.2.23", 30002), pool_tokens=260000)
    long = within(110, 300)
    work = Workload(const(0.9), mix(lognorm(6000, 0.5, 500, 30000), lognorm(60000, 0.2, 40000, 90000), long),
                    lognorm(1500, 0.5, 200, 6000), cached_frac(0.6))
    s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path Qwen/Qwen2.5-Coder-32B-Instruct "
            "--port 30002 --mem-fraction-static 0.8 --enable-metrics", scrape_s=2.0)
    return done(s, family, cause, "agent sessions grew past 60k tokens; the SGLang token pool "
                "filled and requests were retracted and re-queued", (130, 300), engine="sglang")


@trace("vllm-a100-occasional-preemptions-mild", "serving", "kv_pressure")
def _(name, family, cause):
    s = Scene(name, "A100", 1, tick=2.0, dur=360, cpus=64, ebpf="denied")
    cfg = vllm("qwen14", "A100", (0,), url=url("10.0.3.6", 8002), pool_tokens=90000, max_num_seqs=64)
    work = Workload(ramp(0.8, 1.6, 100, 160), lognorm(3500, 0.6, 200, 16000), lognorm(500, 0.6, 30, 3000),
                    cached_frac(0.3))
    s.serve(cfg, work, cmdline="vllm serve Qwen/Qwen2.5-14B-Instruct --gpu-memory-utilization 0.7",
            scrape_s=5.0)
    return done(s, family, cause, "gpu-memory-utilization 0.7 left from a shared-GPU experiment: "
                "with afternoon load the pool ran full and a few requests a minute were preempted (mild)",
                (150, 360), engine="vllm")


# ====================================================================== spec_decode_rejected
@trace("vllm-eagle-head-wrong-version", "serving", "spec_decode_rejected")
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = vllm("llama8", "H100", (0,), url=url("10.0.1.14", 8003), spec_k=4)
    knobs = lambda t: {"alpha": 0.78 if t < 120 else 0.16}
    work = Workload(const(3.5), CHAT_PROMPT, CHAT_OUT, cached_frac(0.4))
    s.serve(cfg, work, knobs=knobs, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct "
            "--speculative-config '{\"method\":\"eagle\",\"model\":\"yuhuili/EAGLE-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":4}'",
            scrape_s=2.0)
    return done(s, family, cause, "hot-swapped a fine-tuned 8B but kept the EAGLE head trained for "
                "the base model: acceptance fell from ~0.75 to ~0.15", (120, 300), engine="vllm")


@trace("sglang-json-toolcalls-reject-drafts", "serving", "spec_decode_rejected")
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=330, cpus=64, ebpf="denied")
    cfg = sgl("llama8", "H200", (0,), url=url("10.0.2.24", 30003), spec_k=3)
    knobs = lambda t: {"alpha": 0.74 if t < 130 else max(0.3, 0.74 - (t - 130) / 60 * 0.44)}
    work = Workload(const(4.0), CHAT_PROMPT, CHAT_OUT, cached_frac(0.5))
    s.serve(cfg, work, knobs=knobs, cmdline="python -m sglang.launch_server --model-path "
            "meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE --speculative-num-steps 3",
            scrape_s=2.0)
    return done(s, family, cause, "tool-call traffic with grammar-constrained JSON rose; the grammar "
                "masks rejected most drafts (acceptance 0.74 -> 0.3, slow onset)", (140, 330), engine="sglang")


@trace("llamacpp-draft-model-multilingual-mild", "serving", "spec_decode_rejected")
def _(name, family, cause):
    s = Scene(name, "RTX4090", 1, tick=1.0, dur=300, cpus=24, ebpf="denied")
    cfg = lcpp("llama8q4", "RTX4090", (0,), url=url("127.0.0.1", 8081), spec_k=6, max_num_seqs=2,
               pool_tokens=32768)
    knobs = lambda t: {"alpha": 0.7 if t < 140 else 0.42}
    work = Workload(const(0.25), lognorm(600, 0.6, 40, 3000), lognorm(300, 0.5, 30, 900))
    s.serve(cfg, work, knobs=knobs, cmdline="llama-server -m support-bot-8b-Q4_K_M.gguf -md "
            "llama-3.2-1b-Q4.gguf --draft-max 6 -np 2 --metrics --port 8081", scrape_s=2.0, user="dev")
    return done(s, family, cause, "the support team's Japanese queue came online; the small draft "
                "model guesses worse there and tokens/s fell ~30% (mild)", (140, 300), engine="llamacpp")


# ====================================================================== memory_bandwidth
@trace("vllm-fp8-kv-unfused-dequant", "serving", "memory_bandwidth")
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = vllm("llama8", "H100", (0,), url=url("10.0.1.15", 8004), cache_dtype="fp8_e4m3")
    knobs = lambda t: {"kv_amp": 1.0 if t < 120 else 3.2}
    work = Workload(const(3.0), lognorm(12000, 0.5, 1000, 60000), CHAT_OUT, cached_frac(0.8))
    s.serve(cfg, work, knobs=knobs, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct "
            "--kv-cache-dtype fp8 --max-model-len 131072", scrape_s=2.0)
    return done(s, family, cause, "a long-context batch hit the attention backend's unfused fp8-KV "
                "path (dequantize to bf16 in HBM, then attend): DRAM pinned, tokens/s down", (120, 300),
                engine="vllm")


@trace("vllm-mixtral-dense-moe-fallback", "serving", "memory_bandwidth")
def _(name, family, cause):
    s = Scene(name, "A100", 2, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = vllm("mixtral", "A100", (0, 1), url=url("10.0.3.7", 8005), version="v0")
    knobs = lambda t: {"weight_amp": 1.0 if t < 110 else 2.6}
    work = Workload(const(1.4), CHAT_PROMPT, CHAT_OUT)
    s.serve(cfg, work, knobs=knobs, cmdline="python -m vllm.entrypoints.openai.api_server --model "
            "mistralai/Mixtral-8x7B-Instruct-v0.1 -tp 2 --port 8005", scrape_s=5.0)
    return done(s, family, cause, "once the batch grew past the tuned fused-MoE configs the old vLLM "
                "fell back to a dense expert layout reading every expert's weights each step",
                (110, 300), engine="vllm")


@trace("llamacpp-l40s-mmq-disabled-dequant", "serving", "memory_bandwidth")
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=1.0, dur=300, cpus=32, ebpf="denied")
    cfg = lcpp("llama8q4", "L40S", (0,), url=url("127.0.0.1", 8082), max_num_seqs=8, pool_tokens=65536)
    knobs = lambda t: {"weight_amp": 1.0 if t < 125 else 4.2}
    work = Workload(const(0.9), lognorm(800, 0.6, 40, 4000), lognorm(250, 0.5, 30, 900))
    s.serve(cfg, work, knobs=knobs, cmdline="llama-server -m support-bot-8b-Q4_K_M.gguf -np 8 "
            "-ngl 99 --metrics --port 8082", scrape_s=2.0, user="support")
    return done(s, family, cause, "the new llama.cpp build dequantizes Q4 weights to fp16 buffers "
                "for batched decode (MMQ off for this arch); weight traffic x4", (125, 300), engine="llamacpp")


@trace("sglang-dsv2-mla-not-absorbed-mild", "serving", "memory_bandwidth")
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=330, cpus=64, ebpf="denied")
    cfg = sgl("dsv2lite", "H200", (0,), url=url("10.0.2.25", 30004))
    knobs = lambda t: {"kv_amp": 1.0 if t < 140 else 2.0}
    work = Workload(const(5.0), lognorm(6000, 0.6, 300, 30000), CHAT_OUT, cached_frac(0.6))
    s.serve(cfg, work, knobs=knobs, cmdline="python -m sglang.launch_server --model-path "
            "deepseek-ai/DeepSeek-V2-Lite-Chat --attention-backend triton --enable-metrics",
            scrape_s=3.0)
    return done(s, family, cause, "past a batch size the triton backend ran MLA without weight "
                "absorption, expanding latents per head: KV traffic doubled, ITL +35% (mild)",
                (140, 330), engine="sglang")


# ====================================================================== tiny_kernels
def _poll(on, base):
    def f(t):
        if on(t):
            return (1.0, 0.006, 0.0, 0.004)
        return base
    return f


@trace("notebook-spin-loop-h200", "notebooks", "tiny_kernels")
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=300, cpus=64, ebpf=True)
    on = within(120, 300)
    pat = _poll(on, (0.62, 0.55, 0.32, 0.22))
    p = s.gpu_load((0,), pat, name="python", cmdline="/home/cto/.venv/bin/python -m ipykernel_launcher "
                   "-f /home/cto/.local/share/jupyter/runtime/kernel-7c1.json", mem_gib=38, cores=1.0,
                   user="cto", launches_per_s=4000)
    p2 = _Spin(p, on)
    return done(s, family, cause, "a founder's notebook cell waits on a GPU flag with a tight loop "
                "of one-element kernels: GPU-Util 100%, SMs idle", (120, 300))


class _Spin:
    """Raises the launch rate of a GpuLoad while its spin loop runs."""
    def __init__(self, part, on):
        orig = part.launch
        def launch(t0, t1):
            if on(t0):
                return [("cudaLaunchKernel", part.proc.pid, int(90000 * (t1 - t0)))]
            return orig(t0, t1)
        part.launch = launch


@trace("tgi-embeddings-unbatched-reindex", "serving", "tiny_kernels")
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    on = within(110, 300)
    # batched embedding calls: big GEMMs; per-snippet calls: kernels of a few microseconds
    pat = lambda t: (0.95, 0.11, 0.03, 0.05) if on(t) else (0.35, 0.82, 0.6, 0.35)
    s.gpu_load((0,), pat, name="text-embeddings-router", cmdline="text-embeddings-router --model-id "
               "BAAI/bge-m3 --port 3001 --max-batch-tokens 16384", mem_gib=6, cores=3.0, user="svc",
               container="docker:6f1e2a9b0c44")
    return done(s, family, cause, "the code-search re-index job was rewritten to embed one snippet "
                "per request: the GPU is busy with tiny kernels, SM activity a sliver", (110, 300))


@trace("rtx5090-reward-model-batch1-eager", "research", "tiny_kernels")
def _(name, family, cause):
    s = Scene(name, "RTX5090", 1, tick=0.5, dur=240, cpus=32, ebpf="denied")
    on = within(100, 240)
    pat = lambda t: (0.9, 0.17, 0.05, 0.08) if on(t) else (0.8, 0.74, 0.55, 0.3)
    s.gpu_load((0,), pat, name="python", cmdline="python score_rollouts.py --reward-model rm-1.5b "
               "--batch-size 1", mem_gib=9, cores=1.0, user="ml")
    return done(s, family, cause, "the scoring script fell back to batch size 1 in eager mode after "
                "a padding bug: launch-bound tiny kernels", (100, 240))


@trace("h100-grpo-ref-logprobs-microbatch1-mild", "research", "tiny_kernels")
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    on = within(125, 300)
    # reference-model log-prob pass: micro-batch 64 -> 1 after a config refactor
    pat = lambda t: (0.96, 0.4, 0.16, 0.2) if on(t) else (0.9, 0.78, 0.52, 0.34)
    s.gpu_load((0,), pat, name="python", cmdline="python grpo.py --ref-logprob-micro-batch 1",
               mem_gib=52, cores=1.0, user="ml")
    return done(s, family, cause, "GRPO's reference log-prob pass ran with micro-batch 1 after a "
                "config refactor: busy GPU, half the SM activity, ~30% slower (mild)", (125, 300))


# ====================================================================== gpu_shared
@trace("vllm-tp2-notebook-lands-on-gpu1", "serving", "gpu_shared")
def _(name, family, cause):
    s = Scene(name, "H100", 2, tick=1.0, dur=300, cpus=96, ebpf="denied")
    cfg = vllm("qwen32", "H100", (0, 1), url=url("10.0.1.16", 8000))
    work = Workload(const(0.8), CODER_PROMPT, CODER_OUT, cached_frac(0.85))
    s.serve(cfg, work, cmdline="vllm serve Qwen/Qwen2.5-Coder-32B-Instruct -tp 2 --port 8000",
            scrape_s=2.0)
    nb = s.gpu_load((1,), lambda t: (0.7, 0.85, 0.6, 0.3) if t >= 125 else (0, 0, 0, 0),
                    name="python", cmdline="python -m ipykernel_launcher (finetune-lora.ipynb)",
                    mem_gib=6, cores=1.0, user="ceo", age=10)
    nb.alive = lambda t: t >= 122
    return done(s, family, cause, "a notebook with CUDA_VISIBLE_DEVICES=1 started a LoRA run on "
                "the product node's GPU 1; time-slicing slowed the TP pair", (125, 300), culprit=(1,),
                engine="vllm")


@trace("sglang-a100-kaggle-run-shares-gpu", "serving", "gpu_shared")
def _(name, family, cause):
    s = Scene(name, "A100", 4, tick=2.0, dur=360, cpus=64, ebpf="denied")
    cfg = sgl("llama8", "A100", (3,), url=url("10.0.3.8", 30005))
    work = Workload(const(2.0), CHAT_PROMPT, CHAT_OUT, cached_frac(0.3))
    s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
            "--port 30005 --base-gpu-id 3", scrape_s=4.0)
    kg = s.gpu_load((3,), lambda t: (0.85, 0.8, 0.5, 0.4) if t >= 150 else (0, 0, 0, 0), name="python",
                    cmdline="python train_effnet.py --fold 2", mem_gib=14, cores=4.0, user="intern", age=10)
    kg.alive = lambda t: t >= 146
    s.train((0, 1, 2), cmdline="torchrun --nproc-per-node 3 sft.py", mem_gib=70, step_s=1.1,
            comm_s=0.08, tokens_per_step=3 * 8 * 4096, workers=6, prep_s=0.3)
    return done(s, family, cause, "a colleague's Kaggle training picked the 'free' A100 3, which "
                "serves the internal SGLang model", (150, 360), culprit=(3,), engine="sglang")


@trace("vllm-l40s-tts-container-joins-mild", "serving", "gpu_shared")
def _(name, family, cause):
    s = Scene(name, "L40S", 2, tick=1.0, dur=300, cpus=48, ebpf="denied")
    cfg = vllm("llama8", "L40S", (1,), url=url("10.0.4.3", 8000))
    work = Workload(const(1.6), CHAT_PROMPT, CHAT_OUT, cached_frac(0.3))
    s.serve(cfg, work, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000", scrape_s=5.0,
            container="docker:0a7c3e55d1f2")
    s.gpu_load((0,), lambda t: (0.3, 0.5, 0.3, 0.2), name="python", cmdline="python tts_server.py",
               mem_gib=8, cores=1.5, container="docker:91bd00ac7e13")
    tts = s.gpu_load((1,), lambda t: (0.32, 0.6, 0.35, 0.25) if t >= 130 else (0, 0, 0, 0),
                     name="python", cmdline="python tts_server.py --device cuda:1", mem_gib=8,
                     cores=1.5, container="docker:e2c4f8a1b3d5", age=5)
    tts.alive = lambda t: t >= 127
    return done(s, family, cause, "a second TTS container was started with --gpus all and chose "
                "GPU 1, which vLLM uses; ITL p99 +60% (mild)", (130, 300), culprit=(1,), engine="vllm")


# ====================================================================== host_cpu_contention
@trace("vllm-tmux-dataprep-eats-cores", "serving", "host_cpu_contention")
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=32, ebpf="denied")
    cfg = vllm("llama8", "H100", (0,), url=url("10.0.1.17", 8006), host_ms=3.5)
    work = Workload(const(6.0), CHAT_PROMPT, CHAT_OUT, cached_frac(0.4))
    p = s.serve(cfg, work, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8006", scrape_s=2.0)
    s.pin = p
    prep = s.cpu_load(lambda t: 60.0 if t >= 120 else 0.0, cmdline="python dedup_minhash.py "
                      "--workers 64 /data/crawl", threads=64)
    prep.alive = lambda t: t >= 118
    return done(s, family, cause, "a tmux session's 64-process dedup script on the inference node: "
                "run queue ~90 on 32 cores; the engine's scheduler thread gets a slice", (120, 300),
                engine="vllm")


@trace("sglang-container-quota-pip-build", "serving", "host_cpu_contention")
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=1.0, dur=300, cpus=48, ebpf="denied")
    cfg = sgl("llama8", "L40S", (0,), url=url("10.0.4.4", 30006))
    work = Workload(const(2.5), CHAT_PROMPT, CHAT_OUT, cached_frac(0.3))
    p = s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                "--port 30006", scrape_s=2.0, container="docker:5d3a9e1c7b20", quota=3.0)
    s.pin = p
    base = p.cpu_demand
    p.cpu_demand = lambda t: base(t) + (6.0 if t >= 115 else 0.0)  # pip compiling inside the container
    return done(s, family, cause, "someone ran 'pip install flash-attn' inside the serving container "
                "(--cpus=3): the compile shares the quota; CFS throttles the scheduler", (115, 300),
                engine="sglang")


@trace("a10g-noisy-neighbour-vm-mild", "serving", "host_cpu_contention")
def _(name, family, cause):
    s = Scene(name, "A10G", 1, tick=2.0, dur=360, cpus=8, ebpf="denied", host_base=0.5)
    cfg = vllm("qwen7", "A10G", (0,), url=url("127.0.0.1", 8000), host_ms=3.0, max_num_seqs=32)
    work = Workload(const(0.8), CHAT_PROMPT, lognorm(180, 0.6, 10, 800))
    p = s.serve(cfg, work, cmdline="vllm serve Qwen/Qwen2.5-Coder-7B-Instruct --max-model-len 16384",
                scrape_s=10.0, api_cores=0.8)
    s.pin = p
    def steal(t, sc):
        sc.host.steal = 4.6 if 150 <= t else 0.0
    s.knobs.append(steal)
    return done(s, family, cause, "cloud VM: a noisy neighbour on the hypervisor takes ~55% of "
                "the vCPUs (steal); the engine's host work stretches (mild)", (150, 360), engine="vllm")


@trace("llamacpp-4090-security-scan", "serving", "host_cpu_contention")
def _(name, family, cause):
    s = Scene(name, "RTX4090", 1, tick=1.0, dur=300, cpus=16, ebpf="denied")
    cfg = lcpp("llama8q4", "RTX4090", (0,), url=url("127.0.0.1", 8083), max_num_seqs=4,
               pool_tokens=32768, host_ms=1.8)
    work = Workload(const(0.7), lognorm(500, 0.6, 40, 3000), lognorm(250, 0.5, 30, 900))
    p = s.serve(cfg, work, cmdline="llama-server -m support-bot-8b-Q4_K_M.gguf -np 4 --metrics "
                "--port 8083 -t 8", scrape_s=2.0, user="dev")
    s.pin = p
    base = p.cpu_demand
    p.cpu_demand = lambda t: base(t) + 7.0  # llama.cpp's own CPU threads spin
    scan = s.cpu_load(lambda t: 22.0 if 130 <= t < 280 else 0.0, name="falcon-sensor",
                      cmdline="/opt/CrowdStrike/falcon-sensor", user="root", threads=24)
    return done(s, family, cause, "the endpoint-security agent's full scan on the dev workstation "
                "took every core; llama.cpp's threads were starved", (130, 280), engine="llamacpp")


# ====================================================================== host_launch_jitter
@trace("vllm-irq-storm-on-engine-core", "serving", "host_launch_jitter")
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=96, ebpf=True)
    cfg = vllm("llama8", "H100", (0,), url=url("10.0.1.18", 8007))
    work = Workload(const(6.0), CHAT_PROMPT, CHAT_OUT, cached_frac(0.4))
    p = s.serve(cfg, work, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8007", scrape_s=2.0)
    s.pin = p
    s.jitter[id(p)] = lambda t: (0.25, 0.006) if t >= 130 else None
    return done(s, family, cause, "after a NIC driver update irqbalance put the RX queues on the "
                "core running EngineCore; its launches stall for milliseconds at a time", (130, 300),
                engine="vllm")


@trace("sglang-l40s-rt-audio-thread", "serving", "host_launch_jitter")
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=1.0, dur=300, cpus=48, ebpf=True)
    cfg = sgl("llama8", "L40S", (0,), url=url("10.0.4.5", 30007))
    work = Workload(const(2.2), CHAT_PROMPT, CHAT_OUT, cached_frac(0.3))
    p = s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                "--port 30007", scrape_s=2.0)
    s.jitter[id(p)] = lambda t: (0.18, 0.008) if 120 <= t < 270 else None
    s.cpu_load(lambda t: 1.0 if 120 <= t < 270 else 0.0, name="tts-stream", cmdline="chrt -f 80 "
               "taskset -c 0-3 python stream_audio.py", threads=2)
    return done(s, family, cause, "the TTS streamer was moved to SCHED_FIFO on cores 0-3, where "
                "the SGLang scheduler runs: it is preempted in bursts", (120, 270), engine="sglang")


@trace("a100-eager-training-launcher-preempted-mild", "training", "host_launch_jitter")
def _(name, family, cause):
    s = Scene(name, "A100", 1, tick=1.0, dur=300, cpus=64, ebpf=True)
    tr = s.train((0,), cmdline="python train_small_lm.py --compile false", mem_gib=30, step_s=0.25,
                 tokens_per_step=16 * 1024, workers=6, prep_s=0.2, launch_frac=0.35,
                 page="http://127.0.0.1:9100/metrics", scrape_s=5.0)
    s.jitter[id(tr)] = lambda t: (0.06, 0.004) if t >= 130 else None
    s.pin = tr
    return done(s, family, cause, "a taskset'ed log shipper shares the training loop's core; the "
                "eager launcher (thousands of small launches a step) is preempted (mild)", (130, 300),
                engine="trainer")


# ====================================================================== throttling
def _sft(s, gpus, page=None, **kw):
    n = len(gpus)
    base = dict(step_s=1.6, comm_s=0.12, tokens_per_step=n * 8 * 4096, samples_per_step=n * 8,
                workers=8, prep_s=0.4, opt_s=0.05)
    base.update(kw)
    return s.train(gpus, cmdline=f"torchrun --nproc-per-node {n} sft.py --fsdp full_shard", mem_gib=68,
                   page=page, **base)


@trace("h100x8-rack-power-brake", "training", "throttling")
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=2.0, dur=360, cpus=192, ebpf="denied")
    _sft(s, range(8), page="http://127.0.0.1:9100/metrics")
    def brake(t, sc):
        for g in sc.gpus:
            g.brake = 140 <= t < 290
    s.knobs.append(brake)
    return done(s, family, cause, "the colo rack went over its power budget; the PDU asserted the "
                "power-brake line on the whole node: all 8 GPUs at ~700 MHz", (140, 290), engine="trainer")


@trace("l40s-colo-fan-failing-thermal", "serving", "throttling")
def _(name, family, cause):
    s = Scene(name, "L40S", 4, tick=2.0, dur=480, cpus=64, ebpf="denied")
    cfg = vllm("qwen32", "L40S", (0, 1, 2, 3), url=url("10.0.4.6", 8000))
    work = Workload(const(1.0), lognorm(3000, 0.6, 200, 12000), CHAT_OUT, cached_frac(0.4))
    s.serve(cfg, work, cmdline="vllm serve Qwen/Qwen2.5-Coder-32B-Instruct -tp 4", scrape_s=5.0)
    def fan(t, sc):
        for g in sc.gpus:
            g.cooling = 1.0 if t < 120 else min(1.75, 1.0 + (t - 120) / 150 * 0.75)
            g.ambient = 27 if t < 120 else min(38, 27 + (t - 120) / 150 * 11)
    s.knobs.append(fan)
    return done(s, family, cause, "a chassis fan in the colo L40S box is failing: inlet and board "
                "temperatures climb until all four GPUs slow down (slow onset)", (230, 480), engine="vllm")


@trace("rtx4090-dusty-cooler-mild", "research", "throttling")
def _(name, family, cause):
    s = Scene(name, "RTX4090", 1, tick=1.0, dur=360, cpus=24, ebpf="denied", ambient=30)
    s.train((0,), cmdline="python train.py --model convnext_small --amp", mem_gib=19, step_s=0.4,
            samples_per_step=128, workers=10, prep_s=0.9, sm=0.9, tensor=0.6, dram=0.45)
    def dust(t, sc):
        sc.gpus[0].cooling = 1.0 if t < 110 else 1.55
    s.knobs.append(dust)
    return done(s, family, cause, "a developer's 4090 with a clogged cooler (the side panel went "
                "back on): thermal slowdown cycles, ~20% slower steps (mild)", (150, 360))


@trace("a100-power-limit-lowered-by-hand", "training", "throttling")
def _(name, family, cause):
    s = Scene(name, "A100", 4, tick=1.0, dur=300, cpus=64, ebpf="denied")
    _sft(s, range(4), page="http://127.0.0.1:9100/metrics", step_s=2.2)
    def pl(t, sc):
        for g in sc.gpus:
            g.power_limit = 300 if t < 125 else 150
    s.knobs.append(pl)
    return done(s, family, cause, "someone testing power savings ran 'nvidia-smi -pl 150' on the "
                "A100 node mid-run: all four GPUs power-capped", (125, 300), engine="trainer")


@trace("h200-vllm-hw-slowdown-intermittent", "serving", "throttling")
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=330, cpus=64, ebpf="denied")
    cfg = vllm("llama70fp8", "H200", (0,), url=url("10.0.2.26", 8008))
    work = Workload(const(1.5), CHAT_PROMPT, CHAT_OUT, cached_frac(0.4))
    s.serve(cfg, work, cmdline="vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --port 8008",
            scrape_s=2.0)
    def hw(t, sc):
        sc.gpus[0].hw_slow = 130 <= t < 330 and int((t - 130) / 12) % 2 == 0
    s.knobs.append(hw)
    return done(s, family, cause, "a failing PSU on the H200 node: HW slowdown asserts for ~12 s "
                "at a time (intermittent)", (130, 330), engine="vllm")


# ====================================================================== input_stall
@trace("h100x8-sft-nfs-slows", "training", "input_stall")
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=2.0, dur=420, cpus=192, ebpf="denied")
    kn = lambda t: {"io_mult": 1.0 if t < 150 else min(6.0, 1.0 + (t - 150) / 60 * 5)}
    kn = lambda t: {"io_mult": 1.0 if t < 150 else min(10.0, 1.0 + (t - 150) / 60 * 9)}
    _sft(s, range(8), page="http://127.0.0.1:9100/metrics", knobs=kn, prep_s=2.0, workers=6)
    return done(s, family, cause, "the NFS server behind /data started serving reads slowly "
                "(another team's rsync); dataloader workers block on I/O, GPUs wait (slow onset)",
                (170, 420), engine="trainer")


@trace("rtx4090-kaggle-two-workers-raw-jpeg", "research", "input_stall")
def _(name, family, cause):
    s = Scene(name, "RTX4090", 1, tick=1.0, dur=300, cpus=24, ebpf="denied")
    kn = lambda t: {"prep_mult": 1.0 if t < 120 else 5.5, "workers": 8 if t < 120 else 2}
    s.train((0,), cmdline="python train.py --data raw_jpeg --num-workers 2", mem_gib=17, step_s=0.35,
            samples_per_step=64, workers=8, prep_s=0.5, knobs=kn, cores_per_worker=1.0)
    return done(s, family, cause, "stage 2 of the Kaggle pipeline reads raw JPEGs with heavy "
                "augmentation and only two DataLoader workers", (120, 300))


@trace("a100x4-tokenize-on-the-fly-mild", "training", "input_stall")
def _(name, family, cause):
    s = Scene(name, "A100", 4, tick=1.0, dur=330, cpus=64, ebpf="denied")
    kn = lambda t: {"prep_mult": 1.0 if t < 130 else 2.1}
    _sft(s, range(4), page="http://127.0.0.1:9100/metrics", step_s=1.3, workers=4, prep_s=4.0,
         knobs=kn)
    return done(s, family, cause, "the data mix reached the long-document shard; on-the-fly "
                "tokenization with 4 workers per rank no longer keeps up (~25% lost, mild)",
                (130, 330), engine="trainer")


@trace("h200x2-dpo-s3fs-mount-stalls", "training", "input_stall")
def _(name, family, cause):
    s = Scene(name, "H200", 2, tick=1.0, dur=300, cpus=64, ebpf="denied")
    kn = lambda t: {"io_mult": 1.0 if t < 120 or t >= 260 else 10.0}
    s.train((0, 1), cmdline="accelerate launch --num_processes 2 dpo.py --dataset /mnt/s3/prefs",
            mem_gib=120, step_s=1.2, comm_s=0.1, tokens_per_step=2 * 4 * 8192, workers=4, prep_s=1.0,
            knobs=kn, opt_s=0.05)
    return done(s, family, cause, "the s3fs mount holding the preference data stalled (throttled "
                "bucket); both GPUs idle between steps", (120, 260))


# ====================================================================== collective_straggler
@trace("h100x8-fsdp-gpu5-thermal-straggler", "training", "collective_straggler")
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=1.0, dur=360, cpus=192, ebpf="denied")
    _sft(s, range(8), page="http://127.0.0.1:9100/metrics")
    def fan(t, sc):
        g = sc.gpus[5]
        g.cooling = 1.0 if t < 100 else min(1.6, 1.0 + (t - 100) / 60 * 0.6)
        g.ambient = 26 if t < 100 else 36
    s.knobs.append(fan)
    return done(s, family, cause, "the fan in front of GPU 5's slot failed; GPU 5 slows down "
                "thermally and the other seven wait in every all-gather", (150, 360), culprit=(5,),
                engine="trainer")


@trace("h100-ddp-rank2-noisy-cores", "training", "collective_straggler")
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=1.0, dur=300, cpus=128, ebpf="denied")
    _sft(s, range(4, 8), page=None)
    kn = lambda t: {"rank_host": {2: 3.0}} if t >= 120 else {}
    s.train(range(4), cmdline="torchrun --nproc-per-node 4 ddp_train.py", mem_gib=40, step_s=0.9,
            comm_s=0.06, tokens_per_step=4 * 16 * 1024, workers=6, prep_s=0.4, launch_frac=0.25,
            knobs=kn, page="http://127.0.0.1:9100/metrics")
    s.cpu_load(lambda t: 12.0 if t >= 118 else 0.0, cmdline="taskset -c 32-47 python "
               "build_index.py", threads=16)
    return done(s, family, cause, "an index build pinned to cores 32-47, the NUMA node of rank 2's "
                "launcher: rank 2's launches lag and everyone waits for it", (120, 300), culprit=(2,),
                engine="trainer")


@trace("h200x8-zero3-gpu3-clock-stuck-mild", "training", "collective_straggler")
def _(name, family, cause):
    s = Scene(name, "H200", 8, tick=2.0, dur=360, cpus=192, ebpf="denied")
    s.train(range(8), cmdline="deepspeed --num_gpus 8 dpo.py --zero 3", mem_gib=110, step_s=2.0,
            comm_s=0.3, tokens_per_step=8 * 4 * 8192, workers=6, prep_s=0.5, opt_s=0.08,
            page="http://127.0.0.1:9100/metrics", scrape_s=10.0)
    def cap(t, sc):
        sc.gpus[3].clock_cap = 1530 if t >= 130 else None
    s.knobs.append(cap)
    return done(s, family, cause, "after the driver update GPU 3 came back with application clocks "
                "locked at 1530 MHz; every ZeRO-3 gather waits for it (~20% lost, mild)",
                (130, 360), culprit=(3,), engine="trainer")


# ====================================================================== healthy look-alikes
H = "lookalike"


@trace("ok-vllm-night-traffic-falls", H)
def _(name, family, cause):
    s = Scene(name, "H100", 2, tick=2.0, dur=480, cpus=96, ebpf="denied")
    cfg = vllm("qwen32", "H100", (0, 1), url=url("10.0.1.11", 8000))
    work = Workload(ramp(1.0, 0.12, 120, 400), CODER_PROMPT, CODER_OUT, cached_frac(0.82))
    s.serve(cfg, work, cmdline="vllm serve Qwen/Qwen2.5-Coder-32B-Instruct -tp 2 --port 8000", scrape_s=4.0)
    return done(s, family, cause, "US evening: traffic falls eightfold, tokens/s follows demand", engine="vllm")


@trace("ok-vllm-model-reload", H)
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=330, cpus=64, ebpf="denied")
    cfg = vllm("llama70fp8", "H200", (0,), url=url("10.0.2.26", 8008))
    work = Workload(const(1.3), CHAT_PROMPT, CHAT_OUT, cached_frac(0.4))
    p = s.serve(cfg, work, cmdline="vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --port 8008", scrape_s=2.0)
    eng = p.engine
    def rl(t, sc, fired=[False]):
        if t >= 140 and not fired[0]:
            fired[0] = True
            p.restart(t, 55.0, sc)
    s.knobs.append(rl)
    return done(s, family, cause, "planned reload of the new checkpoint: ~55 s down, then back at "
                "the same speed", engine="vllm")


@trace("ok-sglang-long-context-customer-arrives", H)
def _(name, family, cause):
    s = Scene(name, "H200", 4, tick=1.0, dur=330, cpus=128, ebpf="denied")
    cfg = sgl("llama70fp8", "H200", (0, 1, 2, 3), url=url("10.0.2.21", 30000))
    on = within(120, 400)
    work = Workload(lambda t: 1.6 + (0.1 if on(t) else 0), mix(CHAT_PROMPT, lognorm(40000, 0.25, 30000, 70000), on),
                    CHAT_OUT, lambda rng, p, t: int(p * 0.9) if p > 20000 else int(p * 0.4))
    s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path "
            "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tp 4 --port 30000 --enable-metrics", scrape_s=5.0)
    return done(s, family, cause, "a new customer with 50k-token repository contexts, mostly prefix-"
                "cached: prompt tokens/s and KV use rise, latency stays in budget", engine="sglang")


@trace("ok-h100x8-sft-eval-phase", H)
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=2.0, dur=420, cpus=192, ebpf="denied")
    _sft(s, range(8), page="http://127.0.0.1:9100/metrics", eval_every=120, eval_steps=40)
    return done(s, family, cause, "nightly SFT's periodic evaluation: forward-only steps, no "
                "all-reduce, training counter pauses", engine="trainer")


@trace("ok-h100x8-fsdp-checkpoint-saves", H)
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=1.0, dur=420, cpus=192, ebpf="denied")
    _sft(s, range(8), page="http://127.0.0.1:9100/metrics", ckpt_every=60, ckpt_s=25.0)
    return done(s, family, cause, "FSDP saves a sharded checkpoint every 60 steps: ~25 s of idle "
                "GPUs and busy CPUs, as designed", engine="trainer")


@trace("ok-a100x4-intended-power-cap", H)
def _(name, family, cause):
    s = Scene(name, "A100", 4, tick=1.0, dur=300, cpus=64, ebpf="denied", power_limit=225)
    _sft(s, range(4), page="http://127.0.0.1:9100/metrics", step_s=2.2)
    return done(s, family, cause, "the A100 node has always run at 225 W (colo power budget); "
                "'power cap' is set from the first tick and nothing changes", engine="trainer")


@trace("ok-vllm-offline-batch-saturated", H)
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = vllm("llama8", "H200", (0,), url=url("127.0.0.1", 8200), max_num_seqs=256, client_cap=320)
    work = Workload(const(38.0), lognorm(700, 0.4, 100, 3000), lognorm(400, 0.4, 50, 1200))
    s.serve(cfg, work, cmdline="python gen_synthetic.py --engine vllm --model meta-llama/Llama-3.1-8B-Instruct",
            scrape_s=5.0, user="ml")
    return done(s, family, cause, "synthetic-data generation: a steady saturated batch, full GPU, "
                "queue bounded by the client's concurrency", engine="vllm")


@trace("ok-sglang-prefix-cache-hits", H)
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = sgl("qwen7", "H100", (0,), url=url("10.0.1.19", 30008))
    work = Workload(ramp(1.5, 4.0, 120, 160), lognorm(16000, 0.3, 4000, 40000), CODER_OUT,
                    lambda rng, p, t: int(p * (0.5 if t < 120 else 0.95)))
    s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path Qwen/Qwen2.5-Coder-7B-Instruct "
            "--port 30008 --enable-metrics", scrape_s=2.0)
    return done(s, family, cause, "a team onboarded one big monorepo: prompt tokens/s x3 but "
                "95% served from the radix cache", engine="sglang")


@trace("ok-vllm-autoscaled-bursts", H)
def _(name, family, cause):
    s = Scene(name, "H100", 2, tick=1.0, dur=360, cpus=96, ebpf="denied")
    cfg = vllm("llama8", "H100", (0,), url=url("10.0.1.20", 8000))
    burst = lambda t: 2.4 if int(t / 45) % 3 == 1 else 1.0
    work = Workload(const(4.0), CHAT_PROMPT, CHAT_OUT, cached_frac(0.3), burst=burst)
    s.serve(cfg, work, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000", scrape_s=2.0)
    cfg2 = vllm("llama8", "H100", (1,), url=url("10.0.1.20", 8001))
    s.serve(cfg2, work, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8001", scrape_s=2.0)
    return done(s, family, cause, "CI bursts every few minutes from a customer's agents; both "
                "replicas absorb them with a short queue", engine="vllm")


@trace("ok-llamacpp-support-morning-ramp", H)
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=2.0, dur=420, cpus=32, ebpf="denied")
    cfg = lcpp("llama8q8", "L40S", (0,), url=url("127.0.0.1", 8080), max_num_seqs=4, pool_tokens=131072)
    work = Workload(ramp(0.02, 0.45, 60, 300), lognorm(700, 0.7, 50, 4000), lognorm(250, 0.5, 20, 900))
    s.serve(cfg, work, cmdline="llama-server -m /models/support-bot-8b-Q8_0.gguf -c 131072 -np 4 --metrics",
            scrape_s=4.0, user="support")
    return done(s, family, cause, "support shift starts: from idle to four busy slots", engine="llamacpp")


@trace("ok-tgi-a10g-steady", H)
def _(name, family, cause):
    s = Scene(name, "A10G", 1, tick=2.0, dur=360, cpus=8, ebpf="denied", host_base=0.4)
    cfg = tgi("mistral7", "A10G", (0,), url=url("127.0.0.1", 3000), max_num_seqs=64)
    work = Workload(const(1.0), lognorm(450, 0.6, 30, 1800), lognorm(150, 0.6, 10, 600))
    s.serve(cfg, work, cmdline="text-generation-launcher --model-id mistralai/Mistral-7B-Instruct-v0.3",
            scrape_s=15.0, name="text-generation-server", miss=0.03)
    return done(s, family, cause, "old TGI summarising code-search hits, steady", engine="tgi")


def _grpo_phase(t):
    return "train" if int(t / 60) % 2 == 1 else "rollout"


@trace("ok-grpo-rollout-train-alternation", H)
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=1.0, dur=360, cpus=192, ebpf="denied")
    cfg = vllm("qwen7", "H100", (0, 1, 2, 3), url=url("127.0.0.1", 8300))
    on = lambda t: _grpo_phase(t) == "rollout"
    work = Workload(lambda t: 22.0 if on(t) else 0.0, lognorm(600, 0.3, 100, 2000), lognorm(700, 0.5, 50, 3000),
                    cached_frac(0.7))
    s.serve(cfg, work, cmdline="python grpo.py --rollout-engine vllm --tp 4", scrape_s=2.0, user="ml")
    s.train((4, 5, 6, 7), cmdline="python grpo.py --trainer fsdp", mem_gib=66, step_s=1.4, comm_s=0.15,
            tokens_per_step=4 * 16 * 2048, workers=2, prep_s=0.05, phases=_grpo_phase)
    return done(s, family, cause, "GRPO: vLLM rollouts and FSDP updates take turns each minute; "
                "each half idles while the other works", engine="vllm")


@trace("ok-a100x4-ddp-steady", H)
def _(name, family, cause):
    s = Scene(name, "A100", 4, tick=1.0, dur=300, cpus=64, ebpf=True)
    tr = s.train(range(4), cmdline="torchrun --nproc-per-node 4 ddp_train.py", mem_gib=40, step_s=0.9,
                 comm_s=0.06, tokens_per_step=4 * 16 * 1024, workers=6, prep_s=0.4, launch_frac=0.2,
                 page="http://127.0.0.1:9100/metrics")
    s.pin = tr
    return done(s, family, cause, "4-GPU DDP run, steady; eBPF probes attached", engine="trainer")


@trace("ok-rtx4090-kaggle-steady", H)
def _(name, family, cause):
    s = Scene(name, "RTX4090", 1, tick=1.0, dur=300, cpus=24, ebpf="denied")
    s.train((0,), cmdline="python train.py --model convnext_small --amp", mem_gib=19, step_s=0.4,
            samples_per_step=128, workers=10, prep_s=0.9)
    return done(s, family, cause, "weekend Kaggle training on a 4090: loud fan, steady steps")


@trace("ok-rtx5090-notebook-interactive", H)
def _(name, family, cause):
    s = Scene(name, "RTX5090", 1, tick=0.5, dur=300, cpus=32, ebpf="denied")
    pat = lambda t: (0.85, 0.7, 0.5, 0.35) if int(t / 25) % 3 == 0 else (0.0, 0, 0, 0)
    s.gpu_load((0,), pat, name="python", cmdline="python -m ipykernel_launcher", mem_gib=14, cores=1.0,
               user="dev")
    return done(s, family, cause, "a developer runs notebook cells now and then; idle between")


@trace("ok-l40s-asr-streaming-no-metrics", H)
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=1.0, dur=300, cpus=32, ebpf="denied")
    rng = random.Random(seed_of(name))
    lv = [0.35 + 0.1 * rng.random() for _ in range(400)]
    pat = lambda t: (lv[int(t)] if t >= 0 else 0.4, 0.45, 0.3, 0.3)
    s.gpu_load((0,), pat, name="python", cmdline="python asr_stream_server.py --model whisper-large-v3-turbo",
               mem_gib=7, cores=2.5, user="svc", container="docker:aa31c0e9f442")
    return done(s, family, cause, "voice product's streaming ASR: no /metrics page, steady load")


@trace("ok-h200-matmul-bench-at-power-cap", H)
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=240, cpus=64, ebpf="denied")
    s.gpu_load((0,), lambda t: (0.995, 0.97, 0.86, 0.35), name="python", cmdline="python bench_matmul.py "
               "--dtype bf16 --n 8192", mem_gib=3, cores=1.0, user="ops")
    return done(s, family, cause, "burn-in after the node arrived: bf16 matmul runs into the 700 W "
                "limit ('power cap' set) at full health")


@trace("ok-vllm-spec-acceptance-varies", H)
def _(name, family, cause):
    s = Scene(name, "H200", 1, tick=1.0, dur=330, cpus=64, ebpf="denied")
    cfg = vllm("llama8", "H200", (0,), url=url("10.0.2.27", 8009), spec_k=3)
    knobs = lambda t: {"alpha": 0.72 + 0.06 * math.sin(t / 40)}
    work = Workload(const(4.0), CHAT_PROMPT, CHAT_OUT, cached_frac(0.4))
    s.serve(cfg, work, knobs=knobs, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
            "'{\"method\":\"eagle3\",\"num_speculative_tokens\":3}'", scrape_s=2.0)
    return done(s, family, cause, "EAGLE acceptance wanders 0.66-0.78 with the prompt mix: normal",
                engine="vllm")


@trace("ok-h200x8-zero3-dpo-steady", H)
def _(name, family, cause):
    s = Scene(name, "H200", 8, tick=2.0, dur=360, cpus=192, ebpf="denied")
    s.train(range(8), cmdline="deepspeed --num_gpus 8 dpo.py --zero 3", mem_gib=110, step_s=2.0,
            comm_s=0.3, tokens_per_step=8 * 4 * 8192, workers=6, prep_s=0.5, opt_s=0.08,
            page="http://127.0.0.1:9100/metrics", scrape_s=10.0)
    return done(s, family, cause, "ZeRO-3 DPO, communication-heavy but even across ranks", engine="trainer")


@trace("ok-vllm-tp8-70b-contexts-grow", H)
def _(name, family, cause):
    s = Scene(name, "H100", 8, tick=1.0, dur=360, cpus=192, ebpf="denied")
    cfg = vllm("llama70", "H100", tuple(range(8)), url=url("10.0.1.30", 8000))
    med = lambda t: 8000 + 60 * t
    work = Workload(const(1.8), lambda rng, t: int(min(100000, max(500, rng.lognormvariate(math.log(med(t)), 0.5)))),
                    CODER_OUT, cached_frac(0.85))
    s.serve(cfg, work, cmdline="vllm serve meta-llama/Llama-3.3-70B-Instruct -tp 8 --max-model-len 131072",
            scrape_s=2.0)
    return done(s, family, cause, "agent sessions lengthen through the afternoon on TP8; KV use and "
                "DRAM rise slowly, within capacity", engine="vllm")


@trace("ok-vllm-startup-warmup", H)
def _(name, family, cause):
    s = Scene(name, "H100", 1, tick=1.0, dur=300, cpus=64, ebpf="denied")
    cfg = vllm("llama8", "H100", (0,), url=url("10.0.1.21", 8000))
    work = Workload(lambda t: 0 if t < 70 else 4.0, CHAT_PROMPT, CHAT_OUT, cached_frac(0.3))
    p = s.serve(cfg, work, cmdline="vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000", scrape_s=2.0)
    p.restart(-1.0, 62.0, s)
    return done(s, family, cause, "a fresh engine start: weights load, the proxy sends traffic once "
                "it answers health checks", engine="vllm")


@trace("ok-sglang-eval-harness-at-capacity", H)
def _(name, family, cause):
    s = Scene(name, "L40S", 1, tick=1.0, dur=300, cpus=48, ebpf="denied")
    cfg = sgl("llama8", "L40S", (0,), url=url("10.0.4.7", 30009), max_num_seqs=96)
    work = Workload(const(3.8), lognorm(1500, 0.4, 200, 5000), lognorm(250, 0.5, 20, 800), cached_frac(0.6))
    s.serve(cfg, work, cmdline="python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
            "--port 30009 --enable-metrics", scrape_s=2.0)
    return done(s, family, cause, "eval harness at a fixed concurrency: busy, bounded queue, flat latency",
                engine="sglang")
