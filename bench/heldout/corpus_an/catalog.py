"""One builder per trace, with its truth.  Every reading comes from the simulation: a
fault changes a physical parameter (a power limit, an inlet temperature, a rank's link,
a CPU quota, a request), and the readings follow."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from corpus_an import Truth, seed_of
from corpus_an.hw import SPECS
from corpus_an.serving import Model, Req, ServeCfg, Serving
from corpus_an.sim import Proc, Setup, run
from corpus_an.training import Job, TrainCfg, Training

DAY = 86400.0
Q0 = 1_790_812_800.0  # a Monday 00:00 UTC at the start of the quarter

LLAMA8 = Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 8, 128, 4096, 128256)
QWEN32 = Model("bank/docai-qwen2.5-32b-v3", 32.5e9, 64, 8, 128, 5120, 152064)
CODER14 = Model("Qwen/Qwen2.5-Coder-14B-Instruct", 14.7e9, 48, 8, 128, 5120, 152064)
LLAMA70 = Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 8, 128, 8192, 128256)
MISTRAL7 = Model("mistralai/Mistral-7B-Instruct-v0.2", 7.24e9, 32, 8, 128, 4096, 32000)
LLAMA8Q4 = Model("bartowski/Meta-Llama-3.1-8B-Instruct-Q4_K_M", 8.03e9, 32, 8, 128, 4096, 128256, wbytes=0.6)
QWEN32AWQ = Model("bank/docai-qwen2.5-32b-awq", 32.5e9, 64, 8, 128, 5120, 152064, wbytes=0.56)
EMBED = Model("BAAI/bge-m3", 0.57e9, 24, 16, 64, 1024, 250002)


@dataclass
class Entry:
    meta: dict
    make: callable

    def build(self):
        return self.make()


CATALOG: list[Entry] = []


def _truth(name, family, cause, culprit, window, engine, gpus, model, tick, note, start):
    return Truth(name, family, cause, tuple(culprit) if culprit else None,
                 (start + window[0], start + window[1]) if window else None,
                 engine, gpus, model, tick, note, start)


def entry(name, family, cause, engine, gpus, model, tick, note, window=None, culprit=None):
    def deco(fn):
        def make():
            seed = seed_of(name)
            setup, workload, events = fn(random.Random(seed), seed)
            frames = run(setup, workload, events, seed)
            start = frames[0].time_wall_s
            return _truth(name, family, cause, culprit, window, engine, gpus, model, tick, note,
                          start), frames
        CATALOG.append(Entry({"name": name, "family": family, "cause": cause}, make))
        return fn
    return deco


# ------------------------------------------------------------------ demand shapes

def lognorm(rng, median, sigma, lo=1, hi=10**7):
    return int(min(hi, max(lo, median * math.exp(rng.gauss(0, sigma)))))


def gen_docai(rng, t):
    return Req(t, lognorm(rng, 7000, 0.55, 800, 60000), lognorm(rng, 450, 0.4, 50, 2000))


def gen_rag(rng, t):
    return Req(t, lognorm(rng, 2400, 0.45, 200, 12000), lognorm(rng, 260, 0.5, 20, 1024))


def gen_code(rng, t):
    return Req(t, lognorm(rng, 1500, 0.7, 100, 16000), lognorm(rng, 140, 0.7, 8, 1024))


def gen_summ(rng, t):
    return Req(t, lognorm(rng, 6000, 0.5, 1000, 30000), lognorm(rng, 1100, 0.3, 300, 3000))


def gen_chat(rng, t):
    return Req(t, lognorm(rng, 600, 0.6, 50, 3000), lognorm(rng, 200, 0.5, 20, 800))


def gen_embed(rng, t):
    return Req(t, lognorm(rng, 350, 0.6, 16, 4000), 1)


def gen_analyst(rng, t):
    return Req(t, lognorm(rng, 900, 0.8, 50, 8000), lognorm(rng, 350, 0.5, 30, 1500))


def const(r):
    return lambda t: r


def nothing(t, w, wl):
    pass


def serve_setup(gpu, n, tick, dur, start, url, kind, scrape, **kw):
    return Setup(gpu, n, tick, dur, start, engine_url=url, engine_kind=kind, scrape_s=scrape, **kw)


def mk_serving(rng, model, cfg, rate, gen, gpu, n_gpus=None):
    return Serving(model, cfg, rate, gen, random.Random(rng.random()), SPECS[gpu], n_gpus=n_gpus)


def ramp(t, t0, t1, a, b):
    if t <= t0:
        return a
    if t >= t1:
        return b
    return a + (b - a) * (t - t0) / (t1 - t0)


# ============================================================ SERVING PATHOLOGIES

@entry("docai-contract-wave-prefill-h200", "serving", "prefill_interference", "vllm", 1, "H200", 1.0,
       "Document-AI: a scanning batch pushed 40-90k-token contracts among interactive requests; "
       "chunked prefill eats each step's token budget and inter-token latency doubles for everyone",
       window=(120, 240))
def _(rng, seed):
    st = serve_setup("H200", 1, 1.0, 330, Q0 + 2 * DAY + 10 * 3600, "http://10.40.3.21:8000/metrics", "vllm", 5)
    cfg = ServeCfg(max_batched=16384, user="svc-docai", pod="docai-prod/docai-vllm-7d9f4-x2kq", port=8000)
    state = {"long": False}

    def gen(r, t):
        if state["long"] and r.random() < 0.45:
            return Req(t, lognorm(r, 60000, 0.25, 30000, 110000), lognorm(r, 300, 0.3, 50, 800))
        return gen_docai(r, t)
    wl = mk_serving(rng, QWEN32, cfg, const(0.4), gen, "H200")

    def ev(t, w, wl):
        state["long"] = 120 <= t < 240
    return st, wl, ev


@entry("rag-chunked-prefill-off-rollback-l40s", "serving", "prefill_interference", "vllm", 1, "L40S", 1.0,
       "RAG assistant: a config rollback left chunked prefill off; when relationship managers start pasting "
       "long research notes, each prompt runs as its own prefill step and every stream stalls",
       window=(110, 260))
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 330, Q0 + 8 * DAY + 11 * 3600, "http://10.41.7.12:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(chunked=False, max_batched=32768, max_model_len=32768, user="svc-rag", pod="rag-prod/rag-vllm-0")
    state = {"long": 0.0}

    def gen(r, t):
        if r.random() < state["long"]:
            return Req(t, lognorm(r, 14000, 0.3, 6000, 30000), lognorm(r, 300, 0.4, 50, 800))
        return gen_rag(r, t)
    wl = mk_serving(rng, LLAMA8, cfg, const(2.2), gen, "L40S")

    def ev(t, w, wl):
        state["long"] = 0.35 if 110 <= t < 260 else 0.0
    return st, wl, ev


@entry("rag-9am-long-docs-prefill-sglang-h100", "serving", "prefill_interference", "sglang", 1, "H100", 2.0,
       "Mild: at 09:00 research analysts attach 20k-token reports to RAG questions; prefill chunks crowd the "
       "decode batch and p99 inter-token latency rises about 2x while GPU stays busy",
       window=(100, 260))
def _(rng, seed):
    st = serve_setup("H100", 1, 2.0, 360, Q0 + 9 * DAY + 8.9 * 3600, "http://10.40.5.33:30000/metrics", "sglang", 10)
    cfg = ServeCfg(kind="sglang", max_batched=8192, user="svc-rag", pod="rag-prod/rag-sglang-1", port=30000, block_size=1)
    state = {"p": 0.0}

    def gen(r, t):
        if r.random() < state["p"]:
            return Req(t, lognorm(r, 20000, 0.25, 8000, 40000), lognorm(r, 250, 0.4, 40, 700))
        return gen_rag(r, t)
    wl = mk_serving(rng, LLAMA8, cfg, lambda t: 4.0, gen, "H100")

    def ev(t, w, wl):
        state["p"] = 0.22 if 100 <= t < 260 else 0.0
    return st, wl, ev


@entry("code-assistant-whole-repo-context-h100", "serving", "prefill_interference", "vllm", 1, "H100", 1.0,
       "Intermittent, mild: a few developers' IDE plugin sends whole-repository context (30k tokens) every "
       "few seconds; each one's prefill stretches the steps of the short completions around it",
       window=(90, 250))
def _(rng, seed):
    st = serve_setup("H100", 1, 1.0, 320, Q0 + 15 * DAY + 14 * 3600, "http://10.40.5.40:8000/metrics", "vllm", 2,
                     ebpf=False)
    cfg = ServeCfg(max_batched=8192, user="svc-code", pod="devtools/code-assist-vllm-0")
    wl = mk_serving(rng, CODER14, cfg, const(6.0), gen_code, "H100")

    def ev(t, w, wl):
        if 90 <= t < 250 and int(t) % 4 == 0 and abs(t - round(t)) < 1e-6:
            wl.inject(Req(t + 0.3, lognorm(wl.rng, 30000, 0.15, 20000, 40000), 80))
    return st, wl, ev


@entry("docai-150k-contract-bundle-h200", "serving", "oversized_request", "vllm", 1, "H200", 1.0,
       "A relationship manager pasted a 150k-token contract bundle; its prefill fills most of the KV pool "
       "and the short requests behind it queue", window=(110, 200))
def _(rng, seed):
    st = serve_setup("H200", 1, 1.0, 300, Q0 + 20 * DAY + 15 * 3600, "http://10.40.3.22:8000/metrics", "vllm", 5)
    cfg = ServeCfg(max_batched=8192, mem_util=0.9, user="svc-docai", pod="docai-prod/docai-vllm-7d9f4-b8rt",
                   max_model_len=163840)
    wl = mk_serving(rng, QWEN32, cfg, const(0.4), gen_docai, "H200")

    def ev(t, w, wl):
        if t == 110:
            wl.inject(Req(110.2, 150000, 1500))
    return st, wl, ev


@entry("rag-eval-script-n10-logprobs-l40s", "serving", "oversized_request", "vllm", 1, "L40S", 1.0,
       "Model-risk's evaluation script sends n=10, logprobs=20 requests into the production RAG endpoint; "
       "full-vocabulary log-softmax for 10 samples each step slows every co-scheduled stream",
       window=(100, 230))
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 320, Q0 + 30 * DAY + 16 * 3600, "http://10.41.7.13:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(user="svc-rag", pod="rag-prod/rag-vllm-1")
    wl = mk_serving(rng, LLAMA8, cfg, const(1.8), gen_rag, "L40S")

    def ev(t, w, wl):
        if 100 <= t < 230 and int(t) % 12 == 0:
            wl.inject(Req(t + 0.5, 1200, 200, n=10, logprobs=20))
    return st, wl, ev


@entry("docai-giant-scan-sglang-h200", "serving", "oversized_request", "sglang", 1, "H200", 2.0,
       "A 600-page scanned loan file uploaded as one request: the vision encoder and a 90k-token prompt run "
       "inside the forward passes and the batch stalls for tens of seconds", window=(120, 200))
def _(rng, seed):
    st = serve_setup("H200", 1, 2.0, 320, Q0 + 33 * DAY + 10.5 * 3600, "http://10.40.3.30:30000/metrics", "sglang", 10)
    cfg = ServeCfg(kind="sglang", block_size=1, user="svc-docai", pod="docai-prod/docai-sglang-0", port=30000)
    wl = mk_serving(rng, QWEN32, cfg, const(0.4), gen_docai, "H200")

    def ev(t, w, wl):
        if t == 120:
            wl.inject(Req(120.5, 90000, 2000, image_tokens=24000, prompt_logprobs=False))
    return st, wl, ev


@entry("legacy-chatbot-best-of-logprobs-tgi-a10g", "serving", "oversized_request", "tgi", 1, "A10G", 1.0,
       "Mild: an internal tester replays best_of=8, max_new_tokens=4096 with logprobs against the legacy "
       "chatbot; the batch's per-token time rises for 2 minutes", window=(100, 240))
def _(rng, seed):
    st = serve_setup("A10G", 1, 1.0, 330, Q0 + 41 * DAY + 13 * 3600, "http://10.42.0.8:8080/metrics", "tgi", 5,
                     host_cores=8, pinned=True)
    cfg = ServeCfg(kind="tgi", user="svc-chat", max_seqs=64, max_batched=4096, port=8080, mem_util=0.9)
    wl = mk_serving(rng, MISTRAL7, cfg, const(0.9), gen_chat, "A10G")

    def ev(t, w, wl):
        if t in (100, 150, 200):
            wl.inject(Req(t + 0.2, 900, 4096, n=8, logprobs=5))
    return st, wl, ev


@entry("summaries-kv-pool-too-small-h100", "serving", "kv_pressure", "vllm", 1, "H100", 1.0,
       "Overnight filings summariser redeployed with gpu_memory_utilization 0.55 (a copy-paste from the "
       "shared-GPU template): long summaries outgrow the KV pool, preemptions and recomputation",
       window=(90, 300))
def _(rng, seed):
    st = serve_setup("H100", 1, 1.0, 300, Q0 + 3 * DAY + 1 * 3600, "http://10.40.5.50:8000/metrics", "vllm", 5)
    cfg = ServeCfg(mem_util=0.45, user="svc-batch", pod="batch-lane/summarise-vllm-0", max_seqs=128)
    state = {"r": 0.6}
    wl = mk_serving(rng, LLAMA8, cfg, lambda t: state["r"], gen_summ, "H100")

    def ev(t, w, wl):
        state["r"] = 0.6 if t < 90 else 2.2
    return st, wl, ev


@entry("docai-sglang-retractions-h200", "serving", "kv_pressure", "sglang", 1, "H200", 2.0,
       "Document-AI SGLang: month-end contract volume with long JSON outputs; the token pool sits full and "
       "the scheduler retracts requests", window=(100, 320))
def _(rng, seed):
    st = serve_setup("H200", 1, 2.0, 320, Q0 + 30 * DAY + 17 * 3600, "http://10.40.3.31:30000/metrics", "sglang", 5)
    cfg = ServeCfg(kind="sglang", block_size=1, mem_util=0.62, user="svc-docai", pod="docai-prod/docai-sglang-1", port=30000)
    state = {"r": 0.3}

    def gen(r, t):
        q = gen_docai(r, t)
        if t > 100:
            q.max_out = lognorm(r, 2500, 0.3, 800, 6000)
        return q
    wl = mk_serving(rng, QWEN32, cfg, lambda t: state["r"], gen, "H200")

    def ev(t, w, wl):
        state["r"] = 0.3 if t < 100 else 0.9
    return st, wl, ev


@entry("quarter-end-long-context-kv-l40s", "serving", "kv_pressure", "vllm", 1, "L40S", 2.0,
       "Mild: quarter-end portfolio reviews send longer contexts to the RAG assistant; the pool touches full "
       "and a trickle of preemptions appears", window=(120, 330))
def _(rng, seed):
    st = serve_setup("L40S", 1, 2.0, 340, Q0 + 89 * DAY + 16 * 3600, "http://10.41.7.14:8000/metrics", "vllm", 10, dcgm=True)
    cfg = ServeCfg(mem_util=0.85, user="svc-rag", pod="rag-prod/rag-vllm-2")
    state = {"k": 1.0}

    def gen(r, t):
        q = gen_rag(r, t)
        q.prompt = int(q.prompt * state["k"])
        q.max_out = int(q.max_out * (1 + 0.5 * (state["k"] - 1)))
        return q
    wl = mk_serving(rng, LLAMA8, cfg, const(2.0), gen, "L40S")

    def ev(t, w, wl):
        state["k"] = 1.0 if t < 120 else 3.2
    return st, wl, ev


@entry("stale-draft-after-target-update-h100", "serving", "spec_decode_rejected", "vllm", 1, "H100", 1.0,
       "Code assistant: the target was updated to the new fine-tune at 14:02 but the draft model stayed "
       "the old one; acceptance fell from ~0.7 to ~0.15 and each token costs more than without drafts",
       window=(140, 330))
def _(rng, seed):
    st = serve_setup("H100", 1, 1.0, 330, Q0 + 46 * DAY + 14 * 3600, "http://10.40.5.41:8000/metrics", "vllm", 5)
    cfg = ServeCfg(spec_k=4, spec_alpha=0.72, draft_frac=0.08, user="svc-code", pod="devtools/code-assist-vllm-1")
    wl = mk_serving(rng, CODER14, cfg, const(3.0), gen_code, "H100")

    def ev(t, w, wl):
        if t == 110:
            wl.restart(t, 25)
        if t >= 135:
            wl.c.spec_alpha = 0.15
    return st, wl, ev


@entry("eagle-domain-shift-sglang-h200", "serving", "spec_decode_rejected", "sglang", 1, "H200", 2.0,
       "Mild: the EAGLE head was trained on English chat; the afternoon lane sends German legal JSON and "
       "acceptance length drops from 3.1 to 1.6 tokens", window=(110, 320))
def _(rng, seed):
    st = serve_setup("H200", 1, 2.0, 320, Q0 + 52 * DAY + 13 * 3600, "http://10.40.3.32:30000/metrics", "sglang", 5)
    cfg = ServeCfg(kind="sglang", block_size=1, spec_k=3, spec_alpha=0.78, draft_frac=0.03, user="svc-docai",
                   pod="docai-prod/docai-sglang-2", port=30000)
    wl = mk_serving(rng, QWEN32, cfg, const(0.4), gen_docai, "H200")

    def ev(t, w, wl):
        wl.c.spec_alpha = 0.78 if t < 110 else 0.3
    return st, wl, ev


@entry("analyst-llamacpp-draft-mismatch-4090", "serving", "spec_decode_rejected", "llamacpp", 1, "4090", 1.0,
       "A fraud analyst swapped the main model to the team's fine-tune but kept the 1B draft from stock "
       "Llama; llama-server accepts few drafts and generation drops below plain decoding",
       window=(120, 300))
def _(rng, seed):
    st = serve_setup("4090", 1, 1.0, 300, Q0 + 12 * DAY + 15 * 3600, "http://127.0.0.1:8080/metrics", "llamacpp", 2,
                     host_cores=24, base_other_cores=2.0)
    cfg = ServeCfg(kind="llamacpp", spec_k=8, spec_alpha=0.7, draft_frac=0.12, max_seqs=1, parallel_slots=1,
                   user="a.kowalski", port=8080, graphs=True, prefix_hit=0.5, num_blocks=8192 // 16)
    state = {"r": 0.0}
    wl = mk_serving(rng, LLAMA8Q4, cfg, lambda t: 0.12, gen_analyst, "4090")

    def ev(t, w, wl):
        if t == 100:
            wl.restart(t, 15)
        if t >= 115:
            wl.c.spec_alpha = 0.12
    return st, wl, ev


# tiny kernels ---------------------------------------------------------------

def job_proc(pid, gpu, name, cmd, start, mem_gib, user="svc-ml", pod="", container="", in_tree=True, slurm=""):
    return Proc(pid, gpu, name, cmd, user, container, pod, f"/kubepods.slice/{pod}" if pod else "",
                slurm, start_time_s=start - 3600, mem=int(mem_gib * 2**30), in_tree=in_tree)


@entry("xgboost-per-row-scoring-h100", "batch", "tiny_kernels", "none", 1, "H100", 1.0,
       "Fraud scoring job switched from batched to per-transaction predict() after a refactor: GPU-Util "
       "reads 95% but SM activity is a few percent", window=(100, 300))
def _(rng, seed):
    start = Q0 + 5 * DAY + 2 * 3600
    st = Setup("H100", 1, 1.0, 300, start, host_cores=96)
    p = [job_proc(33100, 0, "python3", "python3 score_transactions.py --model xgb_fraud_v41.ubj --device cuda", start, 6)]

    def shape(t, job, w):
        if t < 100:  # batched predict of 100k rows: big kernels, bursts between batches
            return [{33100: (0.72, 0.78, 0.0, 0.45, 0.15)}]
        return [{33100: (0.95, 0.04, 0.0, 0.02, 0.6)}]
    return st, Job(p, shape, rng, 1, cpu_cores=1.0, cpu_bound=0.2), nothing


@entry("reranker-enforce-eager-batch1-l40s", "serving", "tiny_kernels", "vllm", 1, "L40S", 1.0,
       "Reranker redeployed with --enforce-eager and max-num-seqs 1 by a config rollback: one tiny kernel "
       "after another, GPU-Util high, SM activity low, throughput a third", window=(120, 300))
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 300, Q0 + 18 * DAY + 10 * 3600, "http://10.41.7.20:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(user="svc-search", pod="search/reranker-vllm-0", sm_eff=0.5, kernels_per_layer=18)
    wl = mk_serving(rng, EMBED, cfg, const(160.0), gen_embed, "L40S")

    def ev(t, w, wl):
        if t == 100:
            wl.restart(t, 18)
        if t >= 118:
            wl.c.graphs = False
            wl.c.max_seqs = 1
            wl.c.sm_eff = 0.05
            wl.c.host_base_ms = 0.9
    return st, wl, ev


@entry("liquidity-forecast-python-loop-per-series-a100", "training", "tiny_kernels", "none", 1, "A100", 2.0,
       "Liquidity forecasting retrain: a new feature loops in Python over 40k time series, one small kernel "
       "each; GPU-Util stays ~90% while SM activity collapses", window=(120, 360))
def _(rng, seed):
    start = Q0 + 22 * DAY + 1.5 * 3600
    st = Setup("A100", 1, 2.0, 360, start, host_cores=128, dcgm=True)
    p = [job_proc(44100, 0, "python3", "python3 -m lqf.train --config nightly.yaml", start, 22, slurm="88412")]

    def shape(t, job, w):
        if t < 120:
            return [{44100: (0.9, 0.82, 0.38, 0.4, 0.05)}]
        return [{44100: (0.9, 0.07, 0.01, 0.03, 0.5)}]
    return st, Job(p, shape, rng, 1, cpu_cores=1.1, counter=400), nothing


@entry("risk-engine-graph-polling-phase-h200", "batch", "tiny_kernels", "none", 1, "H200", 1.0,
       "Market-risk engine's new build replays a CUDA graph of one-element kernels while it polls for the "
       "next scenario block: 100% GPU-Util, ~0% SM active (as seen on the lab H200)", window=(90, 240))
def _(rng, seed):
    start = Q0 + 26 * DAY + 19 * 3600
    st = Setup("H200", 1, 1.0, 280, start, host_cores=64)
    p = [job_proc(51200, 0, "risk_mc", "/opt/risk/bin/risk_mc --scenarios 200000 --desk rates", start, 40, user="svc-risk")]

    def shape(t, job, w):
        if 90 <= t < 240:
            return [{51200: (1.0, 0.006, 0.0, 0.001, 0.0)}]
        ph = (t % 20) < 14
        return [{51200: (0.93 if ph else 0.3, 0.85, 0.15, 0.55, 0.0)}]
    return st, Job(p, shape, rng, 1, cpu_cores=1.0, launches_per_s=2000, launch_api="cudaGraphLaunch"), nothing


# memory bandwidth --------------------------------------------------------

@entry("docai-long-context-decode-membw-h200", "serving", "memory_bandwidth", "vllm", 1, "H200", 1.0,
       "Document-AI switched to whole-file context (64k-token histories per request); each decode step "
       "reads the KV of every running request, DRAM bandwidth pins and tokens/s falls", window=(120, 300))
def _(rng, seed):
    st = serve_setup("H200", 1, 1.0, 300, Q0 + 60 * DAY + 11 * 3600, "http://10.40.3.23:8000/metrics", "vllm", 5)
    cfg = ServeCfg(user="svc-docai", pod="docai-prod/docai-vllm-7d9f4-ppq2", max_model_len=131072, prefix_hit=0.9)
    state = {"k": False}

    def gen(r, t):
        if state["k"]:
            return Req(t, lognorm(r, 64000, 0.15, 40000, 90000), lognorm(r, 500, 0.3, 100, 1500))
        return gen_docai(r, t)
    wl = mk_serving(rng, QWEN32, cfg, const(0.35), gen, "H200")

    def ev(t, w, wl):
        state["k"] = t >= 120
    return st, wl, ev


@entry("awq-dequant-fallback-l40s", "serving", "memory_bandwidth", "vllm", 1, "L40S", 1.0,
       "AWQ checkpoint on a vLLM build whose Marlin kernel is unavailable on this image: the fallback "
       "dequantises to fp16 each step, memory traffic triples and decode slows", window=(110, 300))
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 300, Q0 + 64 * DAY + 10 * 3600, "http://10.41.7.15:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(user="svc-docai", pod="docai-uat/docai-awq-vllm-0", mem_util=0.92)
    wl = mk_serving(rng, QWEN32AWQ, cfg, const(0.35), gen_rag, "L40S")

    def ev(t, w, wl):
        if t == 95:
            wl.restart(t, 15)
        wl.mem_mult = 1.0 if t < 110 else 4.2
    return st, wl, ev


def mk_train(rng, cfg, gpu, n=None):
    return Training(cfg, random.Random(rng.random()), SPECS[gpu], n)


@entry("fraud-gnn-embedding-lookup-membw-a100", "training", "memory_bandwidth", "trainer", 1, "A100", 1.0,
       "Fraud GNN retrain: the merchant-embedding table grew 6x after a feature change and neighbour "
       "sampling now gathers from it each step; DRAM pinned, tensor idle, steps 60% slower",
       window=(100, 300))
def _(rng, seed):
    st = Setup("A100", 1, 1.0, 300, Q0 + 35 * DAY + 0.5 * 3600, host_cores=128, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(compute_s=0.35, comp_frac=0.6, sm=0.8, tensor=0.35, dram=0.45, work_unit="samples", samples=4096,
                   cmd="python3 -m fraudgnn.train --graph txn_90d", mem_gib=62, batch_cpu_s=0.3, workers=8, pod="quant/fraud-gnn-retrain")
    wl = mk_train(rng, cfg, "A100")

    def ev(t, w, wl):
        if t >= 100:
            wl.c.compute_s = 0.58
            wl.c.comp_frac = 0.15
            wl.c.sm = 0.92
            wl.c.tensor = 0.08
            wl.c.dram = 0.93
    return st, wl, ev


@entry("llm-finetune-fp32-optimizer-membw-h100", "training", "memory_bandwidth", "trainer", 1, "H100", 2.0,
       "Mild: LoRA merged into a full fine-tune with fused AdamW off (a pinned older torch): the per-step "
       "optimizer sweep over fp32 states is bandwidth-bound and steps take 30% longer", window=(120, 360))
def _(rng, seed):
    st = Setup("H100", 1, 2.0, 360, Q0 + 38 * DAY + 21 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(compute_s=0.9, opt_s=0.08, cmd="torchrun --nproc-per-node 1 finetune.py --model llama-8b", mem_gib=74,
                   batch_tokens=16384, pod="mrm/llm-ft-job-4")
    wl = mk_train(rng, cfg, "H100")

    def ev(t, w, wl):
        if t >= 120:
            wl.c.opt_s = 0.40
    return st, wl, ev


# throttling --------------------------------------------------------------

@entry("cooling-fault-row-c-h100x8", "training", "throttling", "trainer", 8, "H100", 2.0,
       "CRAH unit in row C failed at 02:14; inlet rose from 24 to 41 C, all eight GPUs of the FSDP job hit "
       "thermal slowdown and steps slowed", window=(140, 420))
def _(rng, seed):
    st = Setup("H100", 8, 2.0, 420, Q0 + 44 * DAY + 2.2 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5, r_th=0.055)
    cfg = TrainCfg(ranks=8, compute_s=1.4, sm=0.88, tensor=0.6, dram=0.3, grad_bytes=4e9, link_gbs=180,
                   cmd="torchrun --nproc-per-node 8 train_fsdp.py --model docai-32b", mem_gib=70, slurm="91770")
    wl = mk_train(rng, cfg, "H100")

    def ev(t, w, wl):
        for g in w.gpus:
            g.inlet_c = 24 + min(28, max(0, (t - 100) * 0.3)) if t >= 100 else g.inlet_c
    return st, wl, ev


@entry("heatwave-facility-power-cap-a100x4", "training", "throttling", "trainer", 4, "A100", 2.0,
       "Heat wave: the facility asked for a power reduction and the DCIM pushed a 250 W limit to every A100 "
       "in hall 2; clocks drop and the overnight retrain's steps slow", window=(120, 360))
def _(rng, seed):
    st = Setup("A100", 4, 2.0, 360, Q0 + 70 * DAY + 23 * 3600, host_cores=128, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=10)
    cfg = TrainCfg(ranks=4, compute_s=0.9, sm=0.88, tensor=0.62, dram=0.3, grad_bytes=1.5e9, link_gbs=120,
                   cmd="torchrun --nproc-per-node 4 train.py --task txn-transformer", mem_gib=60, slurm="92011")
    wl = mk_train(rng, cfg, "A100")

    def ev(t, w, wl):
        for g in w.gpus:
            g.power_limit = 400 if t < 120 else 250
    return st, wl, ev


@entry("admin-script-lowers-power-limit-l40s", "serving", "throttling", "vllm", 1, "L40S", 1.0,
       "A platform admin's energy script meant for the dev pool ran on a prod node: power limit 350 -> 180 W; "
       "the RAG engine's steps slow", window=(100, 300))
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 300, Q0 + 55 * DAY + 14 * 3600, "http://10.41.7.16:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(user="svc-rag", pod="rag-prod/rag-vllm-3")
    wl = mk_serving(rng, LLAMA8, cfg, const(1.6), gen_rag, "L40S")

    def ev(t, w, wl):
        w.gpus[0].power_limit = 350 if t < 100 else 180
    return st, wl, ev


@entry("workstation-4090-clogged-fan-thermal", "serving", "throttling", "llamacpp", 1, "4090", 2.0,
       "Mild, slow onset: a trading-floor 4090 workstation with a clogged filter; as the analyst's batch of "
       "prompts runs the card heats past slowdown and generation drops about 25%", window=(150, 420))
def _(rng, seed):
    st = serve_setup("4090", 1, 2.0, 420, Q0 + 58 * DAY + 15 * 3600, "http://127.0.0.1:8080/metrics", "llamacpp", 5,
                     host_cores=24, r_th=0.05, inlet_c=30)
    cfg = ServeCfg(kind="llamacpp", max_seqs=4, parallel_slots=4, user="m.ibrahim", port=8080, num_blocks=32768 // 16)
    wl = mk_serving(rng, LLAMA8Q4, cfg, const(0.9), gen_analyst, "4090")

    def ev(t, w, wl):
        w.gpus[0].r_th = 0.05 * 1.556 if t < 100 else 0.05 * 1.556 * min(3.2, 1 + (t - 100) / 60)
    return st, wl, ev


# collective stragglers ---------------------------------------------------

@entry("fsdp-rank5-locked-clock-h100x8", "training", "collective_straggler", "trainer", 8, "H100", 1.0,
       "A leftover `nvidia-smi -lgc 1200` from a benchmarking session on GPU 5; its rank is slower and the "
       "other seven wait in the all-reduce every step", window=(90, 300), culprit=(5,))
def _(rng, seed):
    st = Setup("H100", 8, 1.0, 300, Q0 + 16 * DAY + 20 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(ranks=8, compute_s=0.8, sm=0.86, tensor=0.55, dram=0.3, grad_bytes=3e9, link_gbs=180,
                   cmd="torchrun --nproc-per-node 8 finetune_fsdp.py --model llama-70b --lora", mem_gib=72,
                   pod="mrm/llm70b-lora-2")
    wl = mk_train(rng, cfg, "H100")

    def ev(t, w, wl):
        w.gpus[5].clock_cap = None if t < 90 else 1200
    return st, wl, ev


@entry("ddp-rank3-degraded-nvlink-a100x8", "training", "collective_straggler", "trainer", 8, "A100", 2.0,
       "NVLink on GPU 3 trained down to a fraction of its lanes after a reseat (XID-free); its all-reduce "
       "share crawls and the job's steps stretch", window=(120, 360), culprit=(3,))
def _(rng, seed):
    st = Setup("A100", 8, 2.0, 360, Q0 + 19 * DAY + 22 * 3600, host_cores=128, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=10)
    cfg = TrainCfg(ranks=8, compute_s=0.6, sm=0.86, tensor=0.55, dram=0.3, grad_bytes=2.5e9, link_gbs=150,
                   cmd="torchrun --nproc-per-node 8 train_ddp.py --task doc-layout", mem_gib=55, slurm="90555")
    wl = mk_train(rng, cfg, "A100")

    def ev(t, w, wl):
        if t >= 120:
            wl.link[3] = 0.2
            wl.slow[3] = 1.25  # its share of the ring also waits on its own slow sends
    return st, wl, ev


@entry("fsdp-rank2-host-cores-log-shipper-h100x4", "training", "collective_straggler", "trainer", 4, "H100", 1.0,
       "Mild: the log shipper's DaemonSet was pinned to the NUMA node of rank 2; that rank's launch thread "
       "loses its core and the others wait at each all-reduce", window=(100, 300), culprit=(2,))
def _(rng, seed):
    st = Setup("H100", 4, 1.0, 300, Q0 + 27 * DAY + 3 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(ranks=4, compute_s=0.55, sm=0.85, tensor=0.5, dram=0.3, grad_bytes=1.5e9, link_gbs=170,
                   cmd="torchrun --nproc-per-node 4 train_fsdp.py --task txn-seq", mem_gib=66, pod="quant/txn-seq-fsdp")
    wl = mk_train(rng, cfg, "H100")

    def ev(t, w, wl):
        wl.slow[2] = 1.0 if t < 100 else 1.3
        w.host.others = 3.0 if t < 100 else 9.0
    return st, wl, ev


@entry("ib-link-flap-after-switch-firmware-h100x8", "training", "collective_straggler", "trainer", 8, "H100", 1.0,
       "Intermittent: after the leaf-switch firmware update, rank 6's IB port flaps; its collective stalls "
       "for 5-12 s every half minute while the others spin in NCCL", window=(100, 320), culprit=(6,))
def _(rng, seed):
    st = Setup("H100", 8, 1.0, 320, Q0 + 48 * DAY + 1 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(ranks=8, compute_s=0.7, sm=0.86, tensor=0.55, dram=0.3, grad_bytes=3e9, link_gbs=40,
                   cmd="torchrun --nnodes 4 --nproc-per-node 8 train_fsdp.py --model docai-32b", mem_gib=70, slurm="93302")
    wl = mk_train(rng, cfg, "H100")
    r2 = random.Random(seed)
    flaps = []
    t = 100.0
    while t < 310:
        d = r2.uniform(5, 12)
        flaps.append((t, t + d))
        t += d + r2.uniform(15, 30)
    wl.hang[6] = None

    def ev(t, w, wl):
        cur = next(((a, b) for a, b in flaps if a - 1 <= t < b), None)
        wl.hang[6] = cur
    return st, wl, ev


# input stalls ------------------------------------------------------------

@entry("txn-transformer-warehouse-bridge-starved-a100x2", "training", "input_stall", "trainer", 2, "A100", 2.0,
       "Transaction-sequence transformer: the feature join goes through the JDBC/Arrow bridge to the "
       "warehouse, which slowed under month-end ETL; DataLoader queues run dry and GPUs idle between steps",
       window=(120, 380))
def _(rng, seed):
    st = Setup("A100", 2, 2.0, 380, Q0 + 31 * DAY + 1 * 3600, host_cores=128, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=10)
    cfg = TrainCfg(ranks=2, compute_s=0.45, grad_bytes=0.8e9, link_gbs=150, workers=6, batch_cpu_s=0.9,
                   work_unit="samples", samples=2048, cmd="torchrun --nproc-per-node 2 -m txnseq.train", mem_gib=40,
                   slurm="90012")
    wl = mk_train(rng, cfg, "A100")

    def ev(t, w, wl):
        wl.io_latency_s = 0.0 if t < 120 else 1.1
    return st, wl, ev


@entry("doc-layout-nas-backup-window-h100x4", "training", "input_stall", "trainer", 4, "H100", 2.0,
       "Document-layout vision model reads page images from the NAS; the nightly backup job started at "
       "01:00 and NFS reads fell to a fifth; GPUs wait on the loader", window=(120, 400))
def _(rng, seed):
    st = Setup("H100", 4, 2.0, 400, Q0 + 37 * DAY + 0.95 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(ranks=4, compute_s=0.5, sm=0.8, tensor=0.4, dram=0.35, grad_bytes=0.6e9, link_gbs=170, workers=8,
                   batch_cpu_s=0.6, batch_io_mb=180, io_mbs=600, work_unit="samples", samples=256,
                   cmd="torchrun --nproc-per-node 4 layout/train.py --data /mnt/nas/docscan", mem_gib=48, slurm="91006")
    wl = mk_train(rng, cfg, "H100")

    def ev(t, w, wl):
        wl.io_factor = 1.0 if t < 120 else 0.18
    return st, wl, ev


@entry("tabular-tokenise-two-workers-l40s", "training", "input_stall", "trainer", 1, "L40S", 1.0,
       "Mild: a job template reset num_workers to 2 for the tabular-row tokeniser when the team moved to the "
       "new namespace; after the restart the GPU waits on tokenisation a quarter of the time",
       window=(110, 300))
def _(rng, seed):
    st = Setup("L40S", 1, 1.0, 300, Q0 + 24 * DAY + 10 * 3600, host_cores=64, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(compute_s=0.3, sm=0.82, tensor=0.4, dram=0.3, workers=8, batch_cpu_s=1.5, work_unit="samples",
                   samples=1024, cmd="python3 train_tabular.py", mem_gib=30, pod="fraud/tab-transformer")
    wl = mk_train(rng, cfg, "L40S")

    def ev(t, w, wl):
        if t == 90:
            wl.pause_until = 108
        if t >= 90:
            wl.c.workers = 2
            wl.c.batch_cpu_s = 0.76
    return st, wl, ev


@entry("s3-throttled-intermittent-h200", "training", "input_stall", "trainer", 1, "H200", 1.0,
       "Intermittent: the object store rate-limits the bucket with 503 SlowDown; shards arrive in bursts and "
       "the GPU idles for 10-20 s stretches", window=(100, 320))
def _(rng, seed):
    st = Setup("H200", 1, 1.0, 320, Q0 + 67 * DAY + 4 * 3600, host_cores=96,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(compute_s=0.6, sm=0.85, tensor=0.5, dram=0.3, workers=8, batch_cpu_s=0.5, batch_io_mb=60,
                   io_mbs=900, cmd="python3 pretrain_docai_encoder.py --data s3://docai-shards", mem_gib=110,
                   pod="docai-train/encoder-pt")
    wl = mk_train(rng, cfg, "H200")
    r2 = random.Random(seed + 1)
    slow = []
    t = 100.0
    while t < 310:
        d = r2.uniform(10, 20)
        slow.append((t, t + d))
        t += d + r2.uniform(12, 25)

    def ev(t, w, wl):
        wl.io_factor = 0.05 if any(a <= t < b for a, b in slow) else 1.0
    return st, wl, ev


# host CPU contention -----------------------------------------------------

@entry("security-scan-eats-engine-cores-l40s", "serving", "host_cpu_contention", "vllm", 1, "L40S", 1.0,
       "The compliance scanner's weekly full scan started on the inference node and took the cores of the "
       "engine's cpuset; the scheduler loop loses CPU, steps stretch, run queue and PSI climb",
       window=(110, 300))
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 300, Q0 + 13 * DAY + 12 * 3600, "http://10.41.7.17:8000/metrics", "vllm", 5,
                     dcgm=True, host_cores=32, tree_cores=8)
    cfg = ServeCfg(user="svc-rag", pod="rag-prod/rag-vllm-4", host_base_ms=4.0)
    wl = mk_serving(rng, LLAMA8, cfg, const(3.0), gen_rag, "L40S")

    def ev(t, w, wl):
        w.host.others_on_set = 0.4 if t < 110 else 14.0
        w.host.others = 3.0 if t < 110 else 17.0
    return st, wl, ev


@entry("quota-template-reapplied-sglang-h100", "serving", "host_cpu_contention", "sglang", 1, "H100", 1.0,
       "The namespace's quota template was re-applied by the operator (in-place resize): the SGLang pod's "
       "CPU limit went from 8 to 0.8 cores; CFS throttles the scheduler every period", window=(100, 300))
def _(rng, seed):
    st = serve_setup("H100", 1, 1.0, 300, Q0 + 62 * DAY + 9.5 * 3600, "http://10.40.5.34:30000/metrics", "sglang", 5)
    cfg = ServeCfg(kind="sglang", block_size=1, user="svc-rag", pod="rag-prod/rag-sglang-2", port=30000,
                   host_base_ms=3.0, api_cores=0.9)
    wl = mk_serving(rng, LLAMA8, cfg, const(4.0), gen_rag, "H100")

    def ev(t, w, wl):
        w.host.quota = 8.0 if t < 100 else 0.8
    return st, wl, ev


@entry("log-shipper-storm-tgi-vm-a10g", "serving", "host_cpu_contention", "tgi", 1, "A10G", 1.0,
       "Legacy chatbot VM (8 vCPU, GPU passed through): a debug log level left on makes the log shipper "
       "parse and forward 40k lines/s; the router and shard lose CPU", window=(100, 300))
def _(rng, seed):
    st = serve_setup("A10G", 1, 1.0, 300, Q0 + 40 * DAY + 11 * 3600, "http://10.42.0.9:8080/metrics", "tgi", 5,
                     host_cores=8, base_other_cores=0.8)
    cfg = ServeCfg(kind="tgi", user="svc-chat", max_seqs=64, max_batched=4096, port=8080, host_base_ms=3.5, api_cores=0.6)
    wl = mk_serving(rng, MISTRAL7, cfg, const(2.5), gen_chat, "A10G")

    def ev(t, w, wl):
        w.host.others = 0.8 if t < 100 else 9.5
        w.host.others_on_set = w.host.others
    return st, wl, ev


@entry("compliance-agent-starves-trainer-a100", "training", "host_cpu_contention", "trainer", 1, "A100", 2.0,
       "Mild: the endpoint-compliance agent's hash scan of a 2 TB dataset directory ran on the training node "
       "and took most cores; the trainer's main thread and workers lose CPU, steps ~30% slower",
       window=(120, 360))
def _(rng, seed):
    st = Setup("A100", 1, 2.0, 360, Q0 + 50 * DAY + 22 * 3600, host_cores=16, dcgm=True, base_other_cores=1.5,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=10)
    cfg = TrainCfg(compute_s=0.25, comp_frac=0.6, workers=3, batch_cpu_s=0.35, launches_per_step=6000, work_unit="samples",
                   samples=512, cmd="python3 forecast/train.py --model tft", mem_gib=24, slurm="92877")
    wl = mk_train(rng, cfg, "A100")

    def ev(t, w, wl):
        w.host.others = 1.5 if t < 120 else 22.0
        w.host.others_on_set = w.host.others
        wl.slow[0] = 1.0 if t < 120 else 1.0 / max(0.3, w.host.share(wl.demand))
    return st, wl, ev


# launch jitter (eBPF) ----------------------------------------------------

@entry("eager-engine-launch-thread-preempted-h100", "serving", "host_launch_jitter", "vllm", 1, "H100", 1.0,
       "NIC interrupts were re-balanced onto the core the eager-mode engine's launch thread runs on; launch "
       "calls are delayed by hundreds of microseconds (eBPF), steps stretch", window=(100, 300))
def _(rng, seed):
    st = serve_setup("H100", 1, 1.0, 300, Q0 + 17 * DAY + 15 * 3600, "http://10.40.5.42:8000/metrics", "vllm", 5,
                     ebpf=True, host_cores=112)
    cfg = ServeCfg(graphs=False, user="svc-code", pod="devtools/code-assist-eager-0", host_base_ms=1.5)
    wl = mk_serving(rng, LLAMA8, cfg, const(3.0), gen_code, "H100")

    def ev(t, w, wl):
        if t >= 100:
            wl.launch_tail = (0.04, 900.0)
            wl.c.host_base_ms = 1.5 + 0.04 * 0.9 * 46 * 14
        else:
            wl.launch_tail = (0.0, 0.0)
    return st, wl, ev


@entry("edr-agent-rt-priority-trainer-a100", "training", "host_launch_jitter", "trainer", 1, "A100", 1.0,
       "Mild: the EDR agent's new version runs a real-time-priority thread that preempts the trainer's "
       "launch thread every few ms; eBPF shows launch latency tails, steps ~20% slower", window=(110, 300))
def _(rng, seed):
    st = Setup("A100", 1, 1.0, 300, Q0 + 66 * DAY + 3 * 3600, host_cores=128, dcgm=True, ebpf=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(compute_s=0.3, comp_frac=0.5, launches_per_step=9000, cmd="python3 train_forecaster.py",
                   mem_gib=30, pod="quant/forecaster-retrain", work_unit="samples", samples=512)
    wl = mk_train(rng, cfg, "A100")

    def ev(t, w, wl):
        if t >= 110:
            wl.launch_tail = (0.02, 1200.0)
            wl.slow[0] = 1.22
    return st, wl, ev


@entry("mc-risk-launch-thread-irq-h100", "batch", "host_launch_jitter", "none", 1, "H100", 1.0,
       "Monte Carlo VaR engine launches ~20k kernels/s from one thread; an IRQ affinity change put the "
       "storage NIC's interrupts on its core; eBPF launch p99 jumps and GPU gaps appear", window=(100, 280))
def _(rng, seed):
    start = Q0 + 43 * DAY + 18 * 3600
    st = Setup("H100", 1, 1.0, 280, start, host_cores=112, ebpf=True)
    p = [job_proc(61000, 0, "risk_mc", "/opt/risk/bin/risk_mc --var --paths 5e6", start, 30, user="svc-risk")]
    job = Job(p, None, rng, 1, cpu_cores=1.0, launches_per_s=20000)

    def shape(t, job, w):
        b = 0.92 if t < 100 else 0.62
        return [{61000: (b, 0.7, 0.05, 0.4, 0.0)}]
    job.shape = shape

    def ev(t, w, wl):
        wl.launch_tail = (0.0, 0.0) if t < 100 else (0.05, 600.0)
    return st, job, ev


# GPU shared --------------------------------------------------------------

@entry("forgotten-notebook-on-rag-gpu-l40s", "serving", "gpu_shared", "vllm", 1, "L40S", 1.0,
       "A quant's Jupyter kernel, started on the RAG serving GPU during a maintenance window, began a "
       "training cell; the GPU is time-sliced and the engine's steps slow", window=(100, 300))
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 300, Q0 + 23 * DAY + 11 * 3600, "http://10.41.7.18:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(user="svc-rag", pod="rag-prod/rag-vllm-5", mem_util=0.85)
    wl = mk_serving(rng, LLAMA8, cfg, const(1.4), gen_rag, "L40S")
    nb = Proc(77120, 0, "python3", "/opt/conda/bin/python -m ipykernel_launcher -f /home/j.chen/.local/share/jupyter/runtime/kernel-3f1.json",
              "j.chen", "", "quant-nb/jupyter-jchen", "", start_time_s=st.start_wall - 7200, mem=int(6 * 2**30), in_tree=False)

    def ev(t, w, wl):
        if not any(p.pid == 77120 for p in wl.procs):
            wl.procs.append(nb)
        wl.neighbor = (77120, 0.02, 0.3, 0.0, 0.05) if t < 100 else (77120, 0.55, 0.85, 0.5, 0.3)
    return st, wl, ev


@entry("second-team-pod-timeslicing-a100", "training", "gpu_shared", "trainer", 1, "A100", 2.0,
       "The GPU operator's time-slicing config (replicas: 2) let the model-risk team's pod land on the "
       "fraud team's training GPU; both contexts alternate and the trainer slows", window=(120, 360))
def _(rng, seed):
    st = Setup("A100", 1, 2.0, 360, Q0 + 53 * DAY + 14 * 3600, host_cores=128, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=10)
    cfg = TrainCfg(compute_s=0.4, cmd="python3 train_fraud_seq.py", mem_gib=38, pod="fraud/seq-train-7", work_unit="samples",
                   samples=1024)
    wl = mk_train(rng, cfg, "A100")
    other = Proc(88300, 0, "python3", "python3 mrm_backtest.py --gpu", "svc-mrm", "", "model-risk/backtest-5c7",
                 "", start_time_s=st.start_wall + 118, mem=int(22 * 2**30), in_tree=False)

    def ev(t, w, wl):
        if t >= 120 and other not in wl.procs:
            wl.procs.append(other)
        if t >= 120:
            wl.neighbor[0] = (88300, 0.5, 0.8, 0.4, 0.3)
    return st, wl, ev


@entry("sweep-misscheduled-onto-docai-h200", "serving", "gpu_shared", "vllm", 1, "H200", 2.0,
       "Mild: a hyper-parameter sweep's small trials were scheduled onto the document-AI GPU by a wrong "
       "node selector; they take slices of the GPU and p99 latency rises ~1.6x", window=(120, 360))
def _(rng, seed):
    st = serve_setup("H200", 1, 2.0, 360, Q0 + 57 * DAY + 16 * 3600, "http://10.40.3.24:8000/metrics", "vllm", 5)
    cfg = ServeCfg(user="svc-docai", pod="docai-prod/docai-vllm-7d9f4-zz81", mem_util=0.7)
    wl = mk_serving(rng, QWEN32, cfg, const(0.4), gen_docai, "H200")
    sw = Proc(90410, 0, "python3", "python3 sweep_trial.py --trial 17 --lr 3e-4", "svc-quant", "", "quant/sweep-trial-17",
              "", start_time_s=st.start_wall + 119, mem=int(12 * 2**30), in_tree=False)

    def ev(t, w, wl):
        if t >= 120 and sw not in wl.procs:
            wl.procs.append(sw)
        wl.neighbor = None if t < 120 else (90410, 0.3, 0.6, 0.3, 0.2)
    return st, wl, ev


# ============================================================ HEALTHY LOOK-ALIKES

@entry("fsdp-eval-and-checkpoint-h100x8", "lookalike", None, "trainer", 8, "H100", 2.0,
       "Healthy: the LLM fine-tune runs an evaluation pass and writes a checkpoint to the NAS every 150 steps")
def _(rng, seed):
    st = Setup("H100", 8, 2.0, 420, Q0 + 4 * DAY + 22 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(ranks=8, compute_s=0.8, grad_bytes=3e9, link_gbs=180, eval_every=150, eval_s=30, ckpt_every=150,
                   ckpt_s=40, cmd="torchrun --nproc-per-node 8 finetune_fsdp.py --model llama-70b", mem_gib=72, slurm="90077")
    wl = mk_train(rng, cfg, "H100")
    wl.step = 40
    return st, wl, nothing


@entry("loader-epoch-boundary-a100", "lookalike", None, "trainer", 1, "A100", 1.0,
       "Healthy: at each epoch end the loader re-shuffles and re-spawns workers; the GPU idles ~15 s then "
       "training resumes at full speed")
def _(rng, seed):
    st = Setup("A100", 1, 1.0, 360, Q0 + 6 * DAY + 2 * 3600, host_cores=128, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(compute_s=0.35, work_unit="samples", samples=512, cmd="python3 train_forecaster.py --epochs 40",
                   mem_gib=20, pod="quant/forecaster-retrain")
    wl = mk_train(rng, cfg, "A100")

    def ev(t, w, wl):
        if t in (120, 290):
            wl.pause_until = t + 14
    return st, wl, ev


@entry("torch-compile-warmup-h100", "lookalike", None, "trainer", 1, "H100", 1.0,
       "Healthy: a new job's first minutes: torch.compile traces and recompiles (GPU bursts, host CPU high), "
       "then steady steps")
def _(rng, seed):
    st = Setup("H100", 1, 1.0, 300, Q0 + 7 * DAY + 9 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(compute_s=0.45, cmd="python3 train.py --compile", mem_gib=50, pod="docai-train/layout-ft")
    wl = mk_train(rng, cfg, "H100")

    def ev(t, w, wl):
        if t == 0:
            wl.pause_until = 25
        if t in (25, 45, 70):
            wl.pause_until = t + 8
            wl.extra_host = 3.0
        if t > 95:
            wl.extra_host = 0.0
    return st, wl, ev


@entry("grad-accum-uneven-steps-a100x4", "lookalike", None, "trainer", 4, "A100", 1.0,
       "Healthy: gradient accumulation of 8: seven micro-steps without communication, then an all-reduce and "
       "optimizer step; step counter moves in bursts")
def _(rng, seed):
    st = Setup("A100", 4, 1.0, 300, Q0 + 10 * DAY + 23 * 3600, host_cores=128, dcgm=True,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=2)
    cfg = TrainCfg(ranks=4, compute_s=0.5, accum=8, grad_bytes=6e9, link_gbs=150, overlap=0.2,
                   cmd="torchrun --nproc-per-node 4 finetune.py --grad-accum 8", mem_gib=70, slurm="90190")
    return st, mk_train(rng, cfg, "A100"), nothing


@entry("rl-rollouts-and-updates-h100x4", "lookalike", None, "none", 4, "H100", 1.0,
       "Healthy: an RL fine-tune alternates generation rollouts (memory-bound decode) and policy updates "
       "(dense GEMMs) every ~40 s")
def _(rng, seed):
    start = Q0 + 11 * DAY + 13 * 3600
    st = Setup("H100", 4, 1.0, 320, start, host_cores=112)
    ps = [job_proc(70100 + 11 * i, i, "python3", "python3 -m verl.trainer.main_ppo", start, 70, pod="mrm/rl-ppo-3") for i in range(4)]

    def shape(t, job, w):
        ph = (t % 70) < 40
        out = []
        for i in range(4):
            if ph:
                out.append({70100 + 11 * i: (0.88, 0.6, 0.08, 0.7, 0.0)})
            else:
                out.append({70100 + 11 * i: (0.96, 0.88, 0.55, 0.3, 0.0)})
        return out
    return st, Job(ps, shape, rng, 4, cpu_cores=4.5), nothing


@entry("quant-notebook-idle-memory-held-a6000", "lookalike", None, "none", 1, "A6000", 2.0,
       "Healthy: a quant's notebook holds 30 GB on the workstation GPU for days and runs a cell now and then")
def _(rng, seed):
    start = Q0 + 14 * DAY + 16 * 3600
    st = Setup("A6000", 1, 2.0, 360, start, host_cores=32)
    p = [job_proc(12345, 0, "python3", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-9a.json", start - 3 * DAY,
                  30, user="p.novak")]

    def shape(t, job, w):
        on = 180 <= t < 196
        return [{12345: (0.85 if on else 0.0, 0.8, 0.4, 0.4, 0.0)}]
    return st, Job(p, shape, rng, 1, cpu_cores=0.05), nothing


@entry("overnight-summaries-saturated-tp4-h100", "lookalike", None, "vllm", 4, "H100", 2.0,
       "Healthy: the overnight filings lane runs large batches and long outputs at steady saturation; queue "
       "steady, KV high but no preemption")
def _(rng, seed):
    st = serve_setup("H100", 4, 2.0, 400, Q0 + 18 * DAY + 2 * 3600, "http://10.40.5.60:8000/metrics", "vllm", 15)
    cfg = ServeCfg(tp=4, max_seqs=96, user="svc-batch", pod="batch-lane/summarise-70b-0", mem_util=0.92)
    wl = mk_serving(rng, LLAMA70, cfg, const(0.18), gen_summ, "H100")
    return st, wl, nothing


@entry("docai-long-outputs-step-time-grows-h200", "lookalike", None, "vllm", 1, "H200", 1.0,
       "Healthy: a burst of long JSON extractions; inter-token latency grows with context as the outputs get "
       "long, then falls back as they finish")
def _(rng, seed):
    st = serve_setup("H200", 1, 1.0, 330, Q0 + 21 * DAY + 10 * 3600, "http://10.40.3.25:8000/metrics", "vllm", 5)
    cfg = ServeCfg(user="svc-docai", pod="docai-prod/docai-vllm-7d9f4-c1c1")

    def gen(r, t):
        q = gen_docai(r, t)
        q.max_out = lognorm(r, 1800, 0.3, 600, 4000)
        return q
    wl = mk_serving(rng, QWEN32, cfg, lambda t: 0.16 + 0.1 * math.sin(t / 60), gen, "H200")
    return st, wl, nothing


@entry("rag-server-restart-warm-caches-l40s", "lookalike", None, "vllm", 1, "L40S", 1.0,
       "Healthy: the RAG engine is rolled to a new image at 07:30; traffic drains, the server restarts and "
       "warms its prefix cache while the first requests come back")
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 320, Q0 + 25 * DAY + 7.5 * 3600, "http://10.41.7.19:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(user="svc-rag", pod="rag-prod/rag-vllm-6")
    wl = mk_serving(rng, LLAMA8, cfg, lambda t: 1.2, gen_rag, "L40S")

    def ev(t, w, wl):
        if t == 130:
            wl.restart(t, 40)
    return st, wl, ev


@entry("rag-9am-surge-l40s", "lookalike", None, "vllm", 1, "L40S", 2.0,
       "Healthy: relationship managers log in at 09:00; request rate quadruples within minutes and the "
       "engine keeps up (batch grows, latency within SLO)")
def _(rng, seed):
    st = serve_setup("L40S", 1, 2.0, 420, Q0 + 29 * DAY + 8.95 * 3600, "http://10.41.7.12:8000/metrics", "vllm", 10, dcgm=True)
    cfg = ServeCfg(user="svc-rag", pod="rag-prod/rag-vllm-0")
    wl = mk_serving(rng, LLAMA8, cfg, lambda t: ramp(t, 60, 240, 0.6, 2.6), gen_rag, "L40S")
    return st, wl, nothing


@entry("rack-power-capped-by-design-h100x2", "lookalike", None, "trainer", 2, "H100", 1.0,
       "Healthy: rack B4 runs its H100s at a 550 W limit by design (power budget); GEMM-heavy steps sit on "
       "the cap with the 'power cap' reason set the whole time")
def _(rng, seed):
    st = Setup("H100", 2, 1.0, 300, Q0 + 32 * DAY + 20 * 3600, host_cores=112, power_limit=550,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(ranks=2, compute_s=0.9, sm=0.9, tensor=0.7, dram=0.3, grad_bytes=1e9, link_gbs=180,
                   cmd="torchrun --nproc-per-node 2 train_docai_encoder.py", mem_gib=60, slurm="91800")
    return st, mk_train(rng, cfg, "H100"), nothing


@entry("warm-aisle-within-limits-a100x4", "lookalike", None, "trainer", 4, "A100", 2.0,
       "Healthy: the hot aisle of row F runs warm in summer; GPUs sit at 76-80 C, below slowdown, clocks "
       "steady")
def _(rng, seed):
    st = Setup("A100", 4, 2.0, 360, Q0 + 74 * DAY + 15 * 3600, host_cores=128, dcgm=True, inlet_c=33,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=10)
    cfg = TrainCfg(ranks=4, compute_s=0.7, grad_bytes=1.2e9, link_gbs=150, cmd="torchrun --nproc-per-node 4 train.py",
                   mem_gib=58, slurm="93001")
    return st, mk_train(rng, cfg, "A100"), nothing


@entry("ddp-ranks-wait-briefly-h100x8", "lookalike", None, "trainer", 8, "H100", 1.0,
       "Healthy: data-parallel ranks finish backward a few ms apart and wait briefly at each all-reduce, as "
       "normal")
def _(rng, seed):
    st = Setup("H100", 8, 1.0, 300, Q0 + 36 * DAY + 21 * 3600, host_cores=112,
               engine_url="http://127.0.0.1:9102/metrics", engine_kind="trainer", scrape_s=5)
    cfg = TrainCfg(ranks=8, compute_s=0.6, grad_bytes=2e9, link_gbs=180, overlap=0.6,
                   cmd="torchrun --nproc-per-node 8 train_ddp.py --task doc-layout", mem_gib=45, slurm="92300")
    wl = mk_train(rng, cfg, "H100")
    for r in range(8):
        wl.slow[r] = 1.0 + 0.02 * ((r * 7) % 5) / 4
    return st, wl, nothing


@entry("mc-risk-engine-bursty-h100", "lookalike", None, "none", 1, "H100", 1.0,
       "Healthy: the intraday risk engine simulates a scenario block every 30 s: GPU bursts, then idle while "
       "results are aggregated on the CPU")
def _(rng, seed):
    start = Q0 + 39 * DAY + 12 * 3600
    st = Setup("H100", 1, 1.0, 300, start, host_cores=112)
    p = [job_proc(62000, 0, "risk_mc", "/opt/risk/bin/risk_mc --intraday", start, 35, user="svc-risk")]

    def shape(t, job, w):
        on = (t % 30) < 12
        return [{62000: (0.97 if on else 0.0, 0.9, 0.3, 0.5, 0.0)}]
    return st, Job(p, shape, rng, 1, cpu_cores=2.0), nothing


@entry("sweep-small-jobs-share-gpu-a100", "lookalike", None, "none", 1, "A100", 2.0,
       "Healthy: a hyper-parameter sweep packs four small trials onto one A100 by design; each gets a "
       "quarter of the GPU")
def _(rng, seed):
    start = Q0 + 45 * DAY + 20 * 3600
    st = Setup("A100", 1, 2.0, 360, start, host_cores=128, dcgm=True)
    ps = [job_proc(93000 + i * 13, 0, "python3", f"python3 sweep_trial.py --trial {i}", start, 14, slurm=f"9440{i}")
          for i in range(4)]

    def shape(t, job, w):
        return [{93000 + i * 13: (0.24, 0.7, 0.3, 0.35, 0.0) for i in range(4)}]
    return st, Job(ps, shape, rng, 1, cpu_cores=4.0), nothing


@entry("analyst-llamacpp-occasional-4090", "lookalike", None, "llamacpp", 1, "4090", 1.0,
       "Healthy: an analyst's llama-server answers a question now and then; idle in between")
def _(rng, seed):
    st = serve_setup("4090", 1, 1.0, 300, Q0 + 47 * DAY + 10 * 3600, "http://127.0.0.1:8080/metrics", "llamacpp", 5,
                     host_cores=24)
    cfg = ServeCfg(kind="llamacpp", max_seqs=2, parallel_slots=2, user="r.silva", port=8080, num_blocks=16384 // 16)
    return st, mk_serving(rng, LLAMA8Q4, cfg, const(0.05), gen_analyst, "4090"), nothing


@entry("legacy-chatbot-quiet-tgi-a10g", "lookalike", None, "tgi", 1, "A10G", 1.0,
       "Healthy: the legacy chatbot's steady low traffic in its VM")
def _(rng, seed):
    st = serve_setup("A10G", 1, 1.0, 300, Q0 + 49 * DAY + 14 * 3600, "http://10.42.0.8:8080/metrics", "tgi", 5, host_cores=8,
                     base_other_cores=0.8)
    cfg = ServeCfg(kind="tgi", user="svc-chat", max_seqs=64, max_batched=4096, port=8080)
    return st, mk_serving(rng, MISTRAL7, cfg, const(0.7), gen_chat, "A10G"), nothing


@entry("embedding-service-steady-l40s", "lookalike", None, "vllm", 1, "L40S", 1.0,
       "Healthy: the embedding service indexing new research notes at a steady rate")
def _(rng, seed):
    st = serve_setup("L40S", 1, 1.0, 300, Q0 + 51 * DAY + 11 * 3600, "http://10.41.7.21:8000/metrics", "vllm", 5, dcgm=True)
    cfg = ServeCfg(user="svc-search", pod="search/embed-vllm-0", sm_eff=0.8)
    return st, mk_serving(rng, EMBED, cfg, const(40.0), gen_embed, "L40S"), nothing


@entry("code-assistant-lunch-dip-sglang-h100", "lookalike", None, "sglang", 1, "H100", 2.0,
       "Healthy: developers go to lunch; the code assistant's load falls by two thirds and GPU-Util with it")
def _(rng, seed):
    st = serve_setup("H100", 1, 2.0, 400, Q0 + 54 * DAY + 11.9 * 3600, "http://10.40.5.35:30000/metrics", "sglang", 10)
    cfg = ServeCfg(kind="sglang", block_size=1, user="svc-code", pod="devtools/code-assist-sglang-0", port=30000)
    return st, mk_serving(rng, CODER14, cfg, lambda t: ramp(t, 100, 250, 7.0, 2.2), gen_code, "H100"), nothing


@entry("quarter-end-batch-ramp-sglang-h200", "lookalike", None, "sglang", 1, "H200", 2.0,
       "Healthy: quarter-end document volume ramps up; the SGLang engine batches more, token usage rises to "
       "~60% and the queue stays short")
def _(rng, seed):
    st = serve_setup("H200", 1, 2.0, 400, Q0 + 88 * DAY + 9 * 3600, "http://10.40.3.31:30000/metrics", "sglang", 5)
    cfg = ServeCfg(kind="sglang", block_size=1, user="svc-docai", pod="docai-prod/docai-sglang-1", port=30000)
    return st, mk_serving(rng, QWEN32, cfg, lambda t: ramp(t, 80, 280, 0.15, 0.5), gen_docai, "H200"), nothing


@entry("spec-decode-normal-acceptance-h100", "lookalike", None, "vllm", 1, "H100", 1.0,
       "Healthy: speculative decoding with a matched draft; acceptance wanders between 0.6 and 0.75 with the "
       "mix of prompts")
def _(rng, seed):
    st = serve_setup("H100", 1, 1.0, 300, Q0 + 59 * DAY + 15 * 3600, "http://10.40.5.43:8000/metrics", "vllm", 5)
    cfg = ServeCfg(spec_k=4, spec_alpha=0.7, draft_frac=0.08, user="svc-code", pod="devtools/code-assist-vllm-2")
    wl = mk_serving(rng, CODER14, cfg, const(3.0), gen_code, "H100")

    def ev(t, w, wl):
        wl.c.spec_alpha = 0.68 + 0.06 * math.sin(t / 45)
    return st, wl, ev


@entry("fsdp-70b-finetune-steady-h100x8", "lookalike", None, "none", 8, "H100", 2.0,
       "Healthy: a 70B LoRA fine-tune on 8 GPUs in steady state; power near the limit, short all-reduce "
       "waits, NAS idle")
def _(rng, seed):
    st = Setup("H100", 8, 2.0, 360, Q0 + 63 * DAY + 23 * 3600, host_cores=112)
    cfg = TrainCfg(ranks=8, compute_s=1.6, sm=0.9, tensor=0.62, grad_bytes=1.2e9, link_gbs=180, exports=False,
                   cmd="deepspeed --num_gpus 8 finetune.py --zero 3 --model llama-70b", mem_gib=76, slurm="93550")
    return st, mk_train(rng, cfg, "H100"), nothing
