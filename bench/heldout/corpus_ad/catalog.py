"""The traces: one function each, returning (fields of Truth, frames)."""
from __future__ import annotations

from . import common as C
from .serving import MODELS, Serve
from .training import Trainer
from .world import Node, Steady

SEM0 = 1788220800.0  # 2026-09-01 00:00 UTC, the autumn semester
CATALOG = []


def trace(family, cause=None):
    def deco(fn):
        CATALOG.append((fn.__name__, family, cause, fn))
        return fn
    return deco


def t0(day, hour):
    return SEM0 + day * 86400 + hour * 3600 + (day * 37 % 60)


def mk(name, board, n, cpus, day, hour, tick=1.0, style="sxm", envs=None, psi=True):
    nd = Node(name, board, n, cpus, t0(day, hour), tick, style, envs, psi)
    return nd


def res(nd, frames, engine, window, culprit, note, model=None):
    return dict(engine=engine, gpus=len(nd.gpus), gpu_model=model or nd.board.name, tick_s=nd.tick,
                note=note, start_wall_s=nd.start, window=window, culprit_gpus=culprit), frames


def W(nd, a, b):
    return (round(nd.start + a, 3), round(nd.start + b, 3))


def first_when(frames, pred, default=None):
    for f in frames:
        if pred(f):
            return f.time_wall_s
    return default


def bystanders(nd, gpus, user, kind="train"):
    r = nd.rng
    job = C.slurm_job(r)
    lv = {"train": (0.97, 0.78, 0.5, 0.35), "idle": (0.0, 0.0, 0.0, 0.0), "md": (0.9, 0.82, 0.0, 0.4)}[kind]
    cmd = {"train": "python train.py --config configs/vit_b16.yaml", "idle": "python -m ipykernel_launcher -f kernel.json",
           "md": "gmx mdrun -deffnm npt -nb gpu -pme gpu -ntomp 8"}[kind]
    nd.add(Steady(r, gpus, user, job, "python", cmd, {"train": 38, "idle": 3.1, "md": 2.4}[kind], *lv,
                  cores=2.0 if kind != "idle" else 0.01, start=nd.start, burst_s=0.0,
                  nvl=(9000 if kind == "train" and len(gpus) > 1 else 0), proc_name="gmx" if kind == "md" else "python"))


def lengths(mu_p, sg_p, mu_o, sg_o, cap_p=30000, cap_o=4000):
    import math

    def f(r):
        return (min(cap_p, int(r.lognormvariate(math.log(mu_p), sg_p))),
                min(cap_o, int(r.lognormvariate(math.log(mu_o), sg_o))))
    return f


# ============================================================ serving pathologies
@trace("serving", "oversized_request")
def oversized_vllm_n8_logprobs_h100(name):
    nd = mk(name, "H100-SXM", 1, 32, 12, 14)
    sv = nd.add(Serve(nd.rng, "vllm", MODELS["qwen-7b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 2.5,
                      lengths=lengths(700, 0.6, 180, 0.6), user="svc-course", pod="nlp-course/vllm-qwen7b-6d9f8c-x2kqp",
                      specials=[(150, dict(prompt=520, out=600, n=8, logprobs=20, max_tokens=600, tag="n8"))]))
    fr = nd.run(420)
    a, b = sv.log[0] if sv.log else (150, 420)
    return res(nd, fr, "vllm", W(nd, a, min(b, 420)), None,
               "A student's request with n=8, logprobs=20 made every co-scheduled request crawl for its whole lifetime; ITL jumped ~10x for everyone.")


@trace("serving", "oversized_request")
def oversized_lmeval_prompt_logprobs_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 1, 64, 20, 22)
    sp = [(200 + 9 * k, dict(prompt=6000, out=1, plp=20, max_tokens=1, tag="plp")) for k in range(8)]
    sv = nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 4.0,
                      lengths=lengths(600, 0.5, 120, 0.5), user="jpark", slurm=C.slurm_job(nd.rng), specials=sp, mfu=True))
    fr = nd.run(480)
    a = min(x for x, _ in sv.log) if sv.log else 200
    b = max(y for _, y in sv.log) if sv.log else 290
    return res(nd, fr, "vllm", W(nd, a, b), None,
               "An lm-eval run sent 8 loglikelihood requests with prompt_logprobs=20 on 6k-token prompts into the shared endpoint; everyone's TTFT and ITL stalled while they ran.")


@trace("serving", "oversized_request")
def oversized_tgi_max_new_tokens_l40s(name):
    nd = mk(name, "L40S", 2, 48, 33, 10, style="pcie")
    sv = nd.add(Serve(nd.rng, "tgi", MODELS["mistral-7b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 1.2,
                      lengths=lengths(900, 0.5, 200, 0.5), pool_tokens=48000, max_seqs=64, user="ragdemo",
                      pod="lab-rag/tgi-mistral-0", specials=[(180, dict(prompt=7000, out=9000, max_tokens=30000, tag="big"))]))
    bystanders(nd, [1], "hwang", "idle")
    fr = nd.run(600)
    a = sv.log[0][0] if sv.log else 180
    b = sv.log[0][1] if sv.log else 600
    return res(nd, fr, "tgi", W(nd, a, min(b, 600)), None,
               "One RAG request with max_new_tokens=30000 reserved most of TGI's batch token budget; other requests queued behind it for minutes.")


# ------------------------------------------------------------ prefill interference
@trace("serving", "prefill_interference")
def prefill_tgi_rag_docs_a40(name):
    nd = mk(name, "A40", 4, 64, 40, 15, style="pcie")

    def rate(t):
        return 1.0
    sp = []
    r = nd.rng
    tt = 150.0
    while tt < 420:
        sp.append((tt, dict(prompt=int(7000 + 1500 * r.random()), out=150, tag="")))
        tt += r.expovariate(0.35)
    nd.add(Serve(r, "tgi", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=rate,
                 lengths=lengths(300, 0.4, 250, 0.4), max_seqs=64, user="ragdemo", pod="lab-rag/tgi-llama-0", specials=sp))
    bystanders(nd, [2, 3], "okafor", "train")
    fr = nd.run(540)
    return res(nd, fr, "tgi", W(nd, 150, 425), None,
               "The RAG demo started stuffing 7-8k-token documents into prompts; each prefill pass holds up every chat stream's decode (TPOT doubled).")


@trace("serving", "prefill_interference")
def prefill_vllm_longdocs_h200(name):
    nd = mk(name, "H200", 1, 32, 44, 11)
    r = nd.rng
    sp = [(t, dict(prompt=int(14000 + 4000 * r.random()), out=64)) for t in
          [100 + k * 2.2 for k in range(120)]]
    nd.add(Serve(r, "vllm", MODELS["qwen-14b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 6.0,
                 lengths=lengths(400, 0.5, 300, 0.5), user="svc-course", pod="nlp-course/vllm-qwen14b-0", budget=8192))
    nd.comps[0].specials = sp
    fr = nd.run(480)
    return res(nd, fr, "vllm", W(nd, 100, 366), None,
               "A summarisation assignment sent 14-18k-token papers every ~2 s; their chunked prefill rides on every decode step and chat ITL rose ~2x.")


@trace("serving", "prefill_interference")
def prefill_llamacpp_mild_4090(name):
    nd = mk(name, "RTX4090", 1, 16, 51, 16, style="pcie")
    r = nd.rng
    sp = []
    for ep in (90, 260):
        sp += [(ep + k * 6 + 3 * r.random(), dict(prompt=2500 + int(800 * r.random()), out=80)) for k in range(14)]
    nd.add(Serve(r, "llamacpp", MODELS["llama3-8b-q4"], [0], nd.board, start_wall=nd.start, rate=lambda t: 0.25,
                 lengths=lengths(150, 0.4, 300, 0.4), max_seqs=4, budget=2048, pool_tokens=32768, graphs=True,
                 user="tnguyen", slurm=C.slurm_job(r), specials=sp))
    fr = nd.run(420)
    return res(nd, fr, "llamacpp", W(nd, 90, 350), None,
               "A lab member's code-review bot sends 3k-token diffs in bursts; while they are processed the other slots' token rate drops ~40%.")


# ------------------------------------------------------------ KV pressure
@trace("serving", "kv_pressure")
def kv_vllm_lecture_rush_a100_40(name):
    nd = mk(name, "A100-SXM4-40GB", 1, 32, 58, 9)
    rate = lambda t: 0.4 if t < 180 else 9.0
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=rate, mem_util=0.80,
                 lengths=lengths(3500, 0.5, 900, 0.5), user="svc-course", pod="llm-101/vllm-llama8b-0"))
    fr = nd.run(540)
    a = first_when(fr, lambda f: f.engine is not None and (f.engine.kv_usage_ratio or 0) > 0.97, nd.start + 200)
    return res(nd, fr, "vllm", (round(a, 3), round(nd.start + 540, 3)), None,
               "Lecture exercise: 200 students pasted long essays at once; the 40 GB card's KV pool filled, vLLM preempted and the queue grew to hundreds.")


@trace("serving", "kv_pressure")
def kv_sglang_retract_l40s(name):
    nd = mk(name, "L40S", 4, 64, 63, 13, style="pcie")
    rate = lambda t: 0.8 if t < 120 or t > 400 else 5.5
    nd.add(Serve(nd.rng, "sglang", MODELS["qwen-7b"], [1], nd.board, start_wall=nd.start, rate=rate, mem_util=0.80,
                 lengths=lengths(4000, 0.5, 1200, 0.5), user="svc-course", pod="llm-101/sglang-qwen7b-0", max_seqs=128))
    bystanders(nd, [0], "mruiz", "train")
    fr = nd.run(600)
    a = first_when(fr, lambda f: f.engine is not None and (f.engine.retracted_requests_total or 0) > 0, nd.start + 150)
    b = nd.start + 460
    return res(nd, fr, "sglang", (round(a - 10, 3), round(b, 3)), None,
               "During the exam-prep rush SGLang retracted running requests repeatedly (KV full); the queue grew and TTFT hit tens of seconds.")


@trace("serving", "kv_pressure")
def kv_vllm_tp2_mild_h100(name):
    nd = mk(name, "H100-SXM", 8, 96, 70, 20)
    rate = lambda t: 3.4 if 150 < t < 360 else 1.5
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-70b"], [4, 5, 6, 7], nd.board, start_wall=nd.start, tp=4, rate=rate,
                 mem_util=0.90, lengths=lengths(6000, 0.4, 1200, 0.4), user="svc-lab", slurm=C.slurm_job(nd.rng)))
    bystanders(nd, [0, 1, 2, 3], "lchen", "train")
    fr = nd.run(480)
    a = first_when(fr, lambda f: f.engine is not None and (f.engine.preemptions_total or 0) > 0, nd.start + 200)
    return res(nd, fr, "vllm", (round(a - 10, 3), round(nd.start + 380, 3)), None,
               "The lab's 70B endpoint on four H100s (TP4) ran its KV pool full in the afternoon peak: a few preemptions a minute and a short queue.")


# ------------------------------------------------------------ spec decode
@trace("serving", "spec_decode_rejected")
def spec_vllm_ngram_collapse_h100(name):
    nd = mk(name, "H100-SXM", 1, 32, 75, 15)
    acc = lambda t: 0.72 if t < 200 else 0.07
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 2.0,
                 lengths=lengths(800, 0.5, 400, 0.5), spec=dict(k=5, accept=acc, draft_cost=0.35), user="svc-course",
                 pod="nlp-course/vllm-spec-0", cmd_extra=" --speculative-config '{\"method\":\"eagle\",\"num_speculative_tokens\":5}'"))
    fr = nd.run(450)
    return res(nd, fr, "vllm", W(nd, 200, 450), None,
               "After the assignment switched to Korean-language prompts the EAGLE drafter's acceptance fell from ~70% to ~7%; every step now verifies 5 wasted drafts.")


@trace("serving", "spec_decode_rejected")
def spec_sglang_eagle_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 2, 64, 80, 10)
    acc = lambda t: 0.78 if t < 240 or t > 520 else 0.30
    nd.add(Serve(nd.rng, "sglang", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 2.5,
                 lengths=lengths(600, 0.5, 350, 0.5), spec=dict(k=4, accept=acc, draft_cost=0.3), user="svc-course",
                 pod="nlp-course/sglang-eagle-0"))
    fr = nd.run(600)
    return res(nd, fr, "sglang", W(nd, 240, 520), None,
               "A batch of code-generation requests dropped EAGLE acceptance from 0.78 to 0.30 for about 5 minutes; decode slower than without speculation.")


@trace("serving", "spec_decode_rejected")
def spec_llamacpp_draft_mild_3090(name):
    nd = mk(name, "RTX3090", 2, 24, 86, 17, style="pcie")
    acc = lambda t: 0.62 if t < 150 else 0.38
    nd.add(Serve(nd.rng, "llamacpp", MODELS["llama3-8b-q4"], [0], nd.board, start_wall=nd.start, rate=lambda t: 0.4,
                 lengths=lengths(300, 0.5, 350, 0.5), max_seqs=4, budget=2048, pool_tokens=32768,
                 spec=dict(k=8, accept=acc, draft_cost=0.25), user="abaker", slurm=C.slurm_job(nd.rng),
                 cmd_extra=" -md /scratch/models/Llama-3.2-1B-Instruct-Q8_0.gguf --draft-max 8"))
    fr = nd.run(360)
    return res(nd, fr, "llamacpp", W(nd, 150, 360), None,
               "Draft model acceptance on the workstation endpoint slid from ~0.6 to ~0.4 after the prompts changed domain; a mild token-rate loss.")


# ------------------------------------------------------------ memory bandwidth (serving + one trainer)
@trace("serving", "memory_bandwidth")
def membw_vllm_long_context_a100pcie(name):
    nd = mk(name, "A100-PCIE-80GB", 2, 48, 92, 13, style="pcie")
    ln_short = lengths(600, 0.4, 300, 0.4)
    ln_long = lengths(16000, 0.25, 400, 0.4)
    sv = nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 1.5,
                      lengths=ln_short, prefix_hit=0.0, user="svc-lab", slurm=C.slurm_job(nd.rng), max_seqs=128))
    def lsw(r, sv=sv):
        return ln_long(r) if r.random() < (0 if sv._tnow < 150 else 0.9) else ln_short(r)
    sv._tnow = 0

    def rate(t, sv=sv):
        sv._tnow = t
        return 1.5
    sv.rate, sv.lengths, sv.prefix_hit, sv.prefix_fixed = (lambda t, sv=sv: (rate(t), 1.5 if t < 150 else 0.45)[1]), lsw, 0.95, True
    fr = nd.run(540)
    return res(nd, fr, "vllm", W(nd, 200, 540), None,
               "Long-document multi-turn chats (16k contexts, mostly prefix-cached) made every decode step read gigabytes of KV; DRAM-bound decode, ITL ~2.5x.")


@trace("serving", "memory_bandwidth")
def membw_sglang_multiturn_gh200(name):
    nd = mk(name, "GH200", 1, 72, 97, 19)
    sv = nd.add(Serve(nd.rng, "sglang", MODELS["qwen-14b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 2.0,
                      lengths=lengths(700, 0.4, 300, 0.4), prefix_hit=0.0, user="svc-lab", slurm=C.slurm_job(nd.rng), max_seqs=160))
    ln_long = lengths(20000, 0.25, 500, 0.4)
    sv._tnow = 0
    old = sv.lengths

    def rate(t, sv=sv):
        sv._tnow = t
        return 2.0
    sv.rate = rate
    sv.lengths = lambda r, sv=sv: ln_long(r) if sv._tnow > 120 else old(r)
    sv.prefix_hit, sv.prefix_fixed = 0.95, True
    sv.rate = lambda t, sv=sv: (rate(t), 2.0 if t < 120 else 0.7)[1]
    fr = nd.run(480)
    return res(nd, fr, "sglang", W(nd, 170, 480), None,
               "The agent workshop's sessions grew to ~20k tokens of history; decode became HBM-bound (DRAM ~90%) and ITL tripled though the GPU is 'only' serving 100 streams.")


@trace("training", "memory_bandwidth")
def membw_train_unfused_optimizer_h100(name):
    nd = mk(name, "H100-SXM", 4, 64, 103, 11)
    mods = lambda t: {} if t < 180 else {"tc_mult": 1.55, "tensor_mult": 0.45, "dram_mult": 2.6, "sm_mult": 1.0}
    nd.add(Trainer(nd.rng, [0, 1, 2, 3], nd.board, start_wall=nd.start, user="fschmidt", job=C.slurm_job(nd.rng),
                   cmd="torchrun --nproc_per_node 4 train_gpt.py --model 1.3b --fp32-master --no-fused-adam",
                   t_compute=0.42, comm_s=0.03, comm_total=2.6e9, tensor=0.55, sm_c=0.85, dram_c=0.33, mem_gib=58,
                   workers=4, cores=32, t_load=0.1, mods=mods, exporter="tokens", tokens_per_step=4 * 16 * 2048))
    fr = nd.run(420)
    return res(nd, fr, "trainer", W(nd, 180, 420), None,
               "After the switch to unfused fp32-master AdamW plus long-sequence attention without flash kernels the step became DRAM-bound: tensor activity halved, DRAM ~90%, step 1.5x.")
