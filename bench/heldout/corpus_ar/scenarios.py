"""The 66 traces: what happens on each node, and the label an on-call engineer would give."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from corpus_ar import work
from corpus_ar.build import (DAY, T0, diurnal, lin, serve_node, service_node, tenant,
                             train_node, win)
from corpus_ar.serve import Stream

H = 3600.0


@dataclass(frozen=True)
class Spec:
    name: str
    family: str
    cause: str | None
    culprit: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str
    note: str
    make: Callable


SPECS: list[Spec] = []


def spec(name, family, cause, culprit, window, engine, note):
    def deco(fn):
        SPECS.append(Spec(name, family, cause, culprit, window, engine, note, fn))
        return fn
    return deco


# models: (params B, layers, hidden, KV bytes/token over all ranks)
LLAMA8 = dict(model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.03, layers=32, hidden=4096, kvb=131072)
GUARD8 = dict(model="meta-llama/Llama-Guard-3-8B", params_b=8.03, layers=32, hidden=4096, kvb=131072)
QWEN7 = dict(model="Qwen/Qwen2.5-7B-Instruct", params_b=7.6, layers=28, hidden=3584, kvb=57344)
QWEN14 = dict(model="Qwen/Qwen2.5-14B-Instruct", params_b=14.7, layers=48, hidden=5120, kvb=196608)
QWEN3B = dict(model="Qwen/Qwen2.5-3B-Instruct", params_b=3.1, layers=36, hidden=2048, kvb=36864)
LLAMA70 = dict(model="meta-llama/Llama-3.1-70B-Instruct", params_b=70.6, layers=80, hidden=8192, kvb=327680)
MISTRAL7 = dict(model="mistralai/Mistral-7B-Instruct-v0.3", params_b=7.24, layers=32, hidden=4096, kvb=131072)
LLAMA3B = dict(model="meta-llama/Llama-3.2-3B-Instruct", params_b=3.2, layers=28, hidden=3072, kvb=114688)


def npc_streams(rate, personas=16, plen=(1400, 3200), out=(90, 35), structured=0.35, loras=(),
                accept=0.72):
    return [Stream(rate, prompt=(110, 40), out=out, personas=personas, persona_len=plen,
                   structured=structured, loras=loras, accept=accept, tag="npc")]


# ====================================================================== memory_bandwidth
@spec("npc_dialogue_long_sessions_h200", "npc-dialogue", "memory_bandwidth", (0,), (300.0, 540.0), "vllm",
      "Launch-week quest chains keep long dialogue sessions alive: the decode batch's cached history grows "
      "from ~2k to ~15k tokens per request, KV reads push DRAM activity up ~10 points and ITL rises ~1.8x; slow onset over ~60 s, "
      "no preemption, pool never full.")
def _(S):
    rate = diurnal(14.0, 0.05)
    f = win(300, 540, rin=60, rout=40)
    streams = npc_streams(rate) + [Stream(lambda t: 5.0 * f(t), prompt=(120, 40), out=(160, 50), personas=400,
                                          persona_len=(11000, 20000), tag="session", accept=0.7)]
    node, e = serve_node(S, kind="vllm", board="h200", streams=streams, start=T0 + 3 * DAY + 19 * H, dur=780,
                         tick=1.0, flags="--gpu-memory-utilization 0.92 --enable-prefix-caching --max-num-seqs 256",
                         gmu=0.92, **LLAMA8)
    return node


@spec("toxicity_guild_history_b200", "chat-moderation", "memory_bandwidth", (0,), (240.0, 420.0), "sglang",
      "A chat-client update sends each toxicity check with the guild channel's last 8-20k tokens of history "
      "(radix-cached, so little prefill): decode reads far more KV per step, DRAM saturates and ITL rises ~1.6x.")
def _(S):
    f = win(240, 420, rin=20, rout=20)
    streams = [Stream(diurnal(22.0, 0.05), prompt=(180, 60), out=(24, 8), personas=4, persona_len=(900, 1400), tag="mod"),
               Stream(lambda t: 20.0 * f(t), prompt=(150, 50), out=(40, 10), personas=600,
                      persona_len=(14000, 28000), tag="guild")]
    node, e = serve_node(S, kind="sglang", board="b200", streams=streams, start=T0 + 12 * DAY + 20 * H, dur=660,
                         flags="--mem-fraction-static 0.88 --tp 1", gmu=0.88, block=1, max_batched=8192,
                         graph_max_bs=256, scrape_s=5.0, **GUARD8)
    return node


@spec("churn_embedding_growth_a100", "churn-recsys-nightly", "memory_bandwidth", (0,), (270.0, 480.0), "trainer",
      "Nightly churn/recommendation trainer: launch-week players add millions of new ids, the sparse embedding "
      "tables and their optimizer state go HBM-bound; step time +45%, DRAM (memory util) pinned, SM falls.")
def _(S):
    node, t = train_node(S, board="a100_80", start=T0 + 9 * DAY + 2 * H, dur=720, cpus=48, script="train_churn.py",
                         args="--config conf/churn_dlrm.yaml --batch 8192", t_comp=0.16, profile=work.mix(work.GEMM, work.EMBED, 0.35),
                         t_opt=0.03, batch=8192, workers=6, cpu_per_batch=0.12, counter="samples", mem_gib=52, scrape_s=10.0)
    f = win(270, 480, rin=40, rout=20)
    t.mods["comp_mult"] = lambda tt, i: 1.0 + 0.35 * f(tt)
    t.mods["profile"] = lambda tt, i: work.mix(work.mix(work.GEMM, work.EMBED, 0.35), work.EMBED, 0.75 * f(tt))
    t.mods["opt_mult"] = lambda tt, i: 1.0 + 2.5 * f(tt)
    t.mods["opt_profile"] = lambda tt, i: work.EMBED if f(tt) > 0.3 else work.OPTIM
    return node


@spec("anticheat_seq_unfreeze_embed_h100x4", "anticheat-seq", "memory_bandwidth", None, (300.0, 510.0), "trainer",
      "Anti-cheat sequence model: the curriculum unfreezes the 6 GB event-embedding table at step 20k; the fp32 "
      "AdamW update over it is bandwidth-bound on all four ranks alike (step +30%, mild); no single culprit.")
def _(S):
    node, t = train_node(S, n_gpus=4, board="h100sxm", start=T0 + 5 * DAY + 23 * H, dur=780, cpus=96,
                         script="train_seq.py", args="--model anticheat-tx-350m --bf16 --ddp", t_comp=0.21, t_opt=0.02,
                         batch=256, tokens_per_sample=512, workers=6, cpu_per_batch=0.15, grad_bytes=0.7e9,
                         counter="tokens", mem_gib=38)
    f = win(300, 510, rin=10, rout=10)
    t.mods["opt_mult"] = lambda tt, i: 1.0 + 4.2 * f(tt)
    t.mods["opt_profile"] = lambda tt, i: work.EMBED if f(tt) > 0.5 else work.OPTIM
    return node


# ====================================================================== throttling
@spec("texture_diffusion_heatwave_a100x8", "texture-diffusion-train", "throttling", None, (330.0, 600.0), "none",
      "Studio server room in a heat wave: the CRAC unit fails and inlet air climbs from 24 to 46 C over ~2 min, all eight A100s reach "
      "their slowdown temperature and clocks fall 15-25% together; slow onset, slow recovery. No step counter.")
def _(S):
    node, t = train_node(S, n_gpus=8, board="a100_40", start=T0 + 4 * DAY + 14 * H, dur=840, cpus=128,
                         script="train_sdxl_textures.py", args="--resolution 1024 --mixed-precision bf16",
                         t_comp=0.55, profile=work.CONV, t_opt=0.05, batch=8, workers=8, cpu_per_batch=0.6,
                         grad_bytes=2.6e9, counter=None, mem_gib=34, tick=2.0)
    f = win(330, 600, rin=120, rout=150)
    base = [g.inlet for g in node.gpus]
    def heat(n, tt):
        for g, b in zip(n.gpus, base):
            g.inlet = b + 22.0 * f(tt)
    node.hooks.append(heat)
    return node


@spec("designer_4090_fan_failing", "designer-workstation", "throttling", (0,), (300.0, 520.0), "llamacpp",
      "A designer's RTX 4090 running llama.cpp for bark generation: the fan bearing fails, airflow collapses, the "
      "board hits its thermal limit and clocks drop ~30% while the script keeps generating; slow onset.")
def _(S):
    streams = [Stream(lambda t: 0.9, prompt=(500, 120), out=(220, 60), tag="barks")]
    node, e = serve_node(S, kind="llamacpp", board="rtx4090", streams=streams, start=T0 + 2 * DAY + 15 * H, dur=760,
                         model="Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", params_b=8.03, layers=32, hidden=4096, kvb=131072,
                         wbytes=0.6, pool_tokens=32768, block=1, max_seqs=4, max_batched=2048, graphs=True,
                         flags="-c 32768 -np 4 -ngl 99 -fa", user="jmartin", cpus=24, cpuset=tuple(range(24)),
                         scrape_s=5.0, act_gib=1.0, launch_us=4.0)
    f = win(300, 520, rin=60, rout=30)
    def fan(n, tt):
        n.gpus[0].r_scale = 1.0 + 2.6 * f(tt)
    node.hooks.append(fan)
    return node


@spec("support_rack_power_cap_h100x4", "player-support", "throttling", None, (280.0, 500.0), "vllm",
      "Player-support assistant (70B, TP=4): the rack's PDU budget kicks in during the launch peak and the BMC "
      "caps each board at 350 W; all four GPUs clock down ~15% alike; memory-bound decode hides most of it "
      "(ITL +5-10%, mild, borderline: visible mainly in clocks and the power-cap reason).")
def _(S):
    streams = [Stream(diurnal(5.0, 0.06), prompt=(350, 120), out=(180, 60), personas=3, persona_len=(2500, 3500),
                      structured=0.2, tag="support")]
    node, e = serve_node(S, kind="vllm", board="h100sxm", n_gpus=4, streams=streams, start=T0 + 6 * DAY + 18 * H,
                         dur=720, flags="--tensor-parallel-size 4 --max-model-len 65536 --enable-prefix-caching",
                         gmu=0.9, max_len=65536, max_batched=8192, scrape_s=5.0, cpus=96, cpuset=tuple(range(16)),
                         **LLAMA70)
    f = win(280, 500, rin=3, rout=3)
    def cap(n, tt):
        for g in n.gpus:
            g.power_limit = 700.0 - 350.0 * (1.0 if f(tt) > 0.5 else 0.0)
    node.hooks.append(cap)
    return node


@spec("tts_l40s_admin_power_limit", "voice-tts", "throttling", (0,), (250.0, 430.0), "none",
      "Character TTS service on an L40S: an admin testing power savings runs nvidia-smi -pl 200 on the wrong "
      "host; clocks drop ~20% and synthesis slows (mild) until the limit is restored.")
def _(S):
    node, st = service_node(S, board="l40s", start=T0 + 10 * DAY + 11 * H, dur=660,
                            cmd="/opt/tts/bin/python3 -m tts_server --voices /models/voices --port 9100 --device cuda:0",
                            name="python3", mem_gib=18, load=diurnal(0.72, 0.04), profile=work.CONV, kps=5000)
    f = win(250, 430, rin=2, rout=2)
    def pl(n, tt):
        n.gpus[0].power_limit = 350.0 - 150.0 * (1.0 if f(tt) > 0.5 else 0.0)
    node.hooks.append(pl)
    return node


# ====================================================================== prefill_interference
@spec("localisation_docs_into_npc_vllm_h100", "npc-dialogue", "prefill_interference", (0,), (260.0, 470.0), "vllm",
      "The localisation team points a batch of long source documents (6-10k-token prompts, short outputs) at the "
      "NPC dialogue endpoint: chunked prefill of that stream shares every step with decode and NPC ITL p99 rises ~3x.")
def _(S):
    f = win(260, 470, rin=5, rout=5)
    streams = npc_streams(diurnal(12.0, 0.05)) + [Stream(lambda t: 0.7 * f(t), prompt=(8000, 1500), out=(60, 20), tag="l10n")]
    node, e = serve_node(S, kind="vllm", board="h100sxm", streams=streams, start=T0 + 1 * DAY + 16 * H, dur=720,
                         flags="--enable-prefix-caching --max-num-batched-tokens 2048", max_batched=2048,
                         scrape_s=5.0, **LLAMA8)
    return node


@spec("wikibot_tgi_long_pages_a10g", "wiki-bot", "prefill_interference", (0,), (240.0, 420.0), "tgi",
      "Legacy wiki bot on TGI (no chunked prefill): a stream of users asks about the new patch notes and the bot "
      "stuffs 4-7k-token wiki pages into each prompt; every whole-prompt prefill stalls all decodes.")
def _(S):
    f = win(240, 420, rin=5, rout=5)
    streams = [Stream(diurnal(1.4, 0.1), prompt=(400, 150), out=(150, 50), tag="wiki"),
               Stream(lambda t: 0.35 * f(t), prompt=(5500, 900), out=(150, 40), tag="patch")]
    node, e = serve_node(S, kind="tgi", board="a10g", streams=streams, start=T0 + 8 * DAY + 13 * H, dur=660,
                         flags="--max-input-tokens 8000 --max-total-tokens 8192", chunked=False, max_batched=16384,
                         max_seqs=64, block=16, gmu=0.92, act_gib=1.2, scrape_s=10.0, cpus=8, cpuset=tuple(range(8)),
                         **MISTRAL7)
    return node


@spec("support_kb_rag_sglang_h100pcie", "player-support", "prefill_interference", (0,), (300.0, 520.0), "sglang",
      "A retrieval change attaches ~7k tokens of knowledge-base articles to a slice of support chats: a steady "
      "stream of long prefills interleaves with decode and ITL p99 rises ~2.5x.")
def _(S):
    f = win(300, 520, rin=10, rout=5)
    streams = [Stream(diurnal(6.0, 0.05), prompt=(300, 100), out=(160, 50), personas=2, persona_len=(1800, 2200), tag="support"),
               Stream(lambda t: 0.9 * f(t), prompt=(7000, 1200), out=(180, 50), personas=2, persona_len=(1800, 2200), tag="support")]
    node, e = serve_node(S, kind="sglang", board="h100pcie", streams=streams, start=T0 + 7 * DAY + 10 * H, dur=780,
                         flags="--chunked-prefill-size 4096 --mem-fraction-static 0.85", max_batched=4096, block=1,
                         gmu=0.85, scrape_s=5.0, pod="support/sglang-qwen7b-0", container="containerd:7c1f0e2a9b3d",
                         **QWEN7)
    return node


@spec("lore_qa_vllm0_nochunk_h200", "lore-qa", "prefill_interference", (0,), (270.0, 450.0), "vllm",
      "Lore QA bot on an older vLLM (V0, chunked prefill off): the writers' QA tool starts a stream of 14-18k-token "
      "lore prompts (~1/s); each whole-prompt prefill freezes decode for ~0.4 s and ITL p99 jumps.")
def _(S):
    f = win(270, 450, rin=5, rout=5)
    streams = [Stream(diurnal(7.0, 0.05), prompt=(250, 80), out=(120, 40), personas=1, persona_len=(600, 600), tag="qa"),
               Stream(lambda t: 1.0 * f(t), prompt=(12000, 1500), out=(100, 30), tag="lore")]
    node, e = serve_node(S, kind="vllm0", board="h200", streams=streams, start=T0 + 3 * DAY + 11 * H, dur=690,
                         flags="--max-model-len 32768 --enable-chunked-prefill=False", chunked=False,
                         max_batched=32768, max_len=32768, scrape_s=10.0, **LLAMA8)
    return node


# ====================================================================== tiny_kernels
@spec("npc_sglang_batch_over_graph_bs_h100", "npc-dialogue", "tiny_kernels", (0,), (300.0, 510.0), "sglang",
      "Launch-event traffic pushes the decode batch past --cuda-graph-max-bs 32: SGLang runs those batches eagerly, "
      "the 3B model's decode becomes launch-bound (GPU busy, SM activity falls) and ITL rises ~1.7x.")
def _(S):
    f = win(300, 510, rin=40, rout=30)
    streams = npc_streams(lambda t: 9.0 + 24.0 * f(t), out=(230, 60))
    node, e = serve_node(S, kind="sglang", board="h100sxm", streams=streams, start=T0 + 14 * DAY + 19 * H, dur=780,
                         flags="--cuda-graph-max-bs 32 --mem-fraction-static 0.85", graph_max_bs=32, block=1, gmu=0.85,
                         max_batched=8192, scrape_s=5.0, **QWEN3B)
    return node


@spec("churn_scorer_batch1_fallback_h200", "churn-scoring", "tiny_kernels", (0,), (240.0, 450.0), "none",
      "Per-player churn scorer: its micro-batcher crashes and the service falls back to one player per forward "
      "pass; thousands of tiny kernels keep GPU-Util near 100% while SM activity drops to a few percent.")
def _(S):
    f = win(240, 450, rin=3, rout=3)
    node, st = service_node(S, board="h200", start=T0 + 9 * DAY + 21 * H, dur=690,
                            cmd="/opt/venv/bin/python3 -m churn_scorer.serve --batch-timeout-ms 20 --max-batch 512",
                            name="python3", user="svc-ml", mem_gib=9, load=lambda t: 0.38 + 0.55 * f(t),
                            profile=lambda t: work.mix(work.mix(work.GEMM, work.EMBED, 0.4), work.TINY, f(t)),
                            kps=1500, host_want=0.55)
    st[0].mods = {}
    base = st[0].kps
    def k(n, tt):
        st[0].kps = base * (1 + 60 * f(tt))
        st[0].threads[0].want = 0.5 + 0.45 * f(tt)
    node.hooks.append(k)
    return node


@spec("charlora_debug_hook_h100", "character-lora-finetune", "tiny_kernels", (0,), (280.0, 470.0), "trainer",
      "Character LoRA fine-tune: a debug flag in the control file turns on per-parameter gradient-norm logging; "
      "tens of thousands of tiny kernels per step make it launch-bound (GPU busy, SM low) and tokens/s drop ~40%.")
def _(S):
    node, t = train_node(S, board="h100sxm", start=T0 + 11 * DAY + 9 * H, dur=720, script="train_lora.py",
                         args="--base meta-llama/Llama-3.1-8B --lora-r 64 --character captain_mara", t_comp=0.19,
                         t_opt=0.006, batch=8, tokens_per_sample=2048, workers=4, cpu_per_batch=0.2,
                         counter="tokens", mem_gib=61, n_kernels=1800)
    f = win(280, 470, rin=2, rout=2)
    t.mods["kern_mult"] = lambda tt, i: 1.0 + 45.0 * f(tt)
    return node


@spec("rl_learner_per_entity_loop_b200", "rl-agents", "tiny_kernels", (0,), (300.0, 500.0), "trainer",
      "RL learner for bot agents: the raid event puts ~5x more entities in each match and the policy's "
      "per-entity Python loop launches small kernels one entity at a time; busy GPU, low SM, samples/s down.")
def _(S):
    node, t = train_node(S, board="b200", start=T0 + 13 * DAY + 4 * H, dur=720, script="learner.py",
                         args="--algo appo --env raid-sim --replay redis://rl-replay:6379", t_comp=0.09, t_opt=0.01,
                         batch=4096, workers=4, cpu_per_batch=0.05, counter="samples", mem_gib=30, n_kernels=900,
                         launch_us=4.5)
    f = win(300, 500, rin=30, rout=20)
    t.mods["kern_mult"] = lambda tt, i: 1.0 + 60.0 * f(tt)
    return node


# ====================================================================== host_cpu_contention
@spec("shader_compile_on_vllm_cores_l40s", "npc-dialogue", "host_cpu_contention", (0,), (280.0, 500.0), "vllm",
      "A shader-compile burst from the build farm (dxc workers) lands on the cores of the vLLM engine's cpuset: "
      "the engine loop gets ~1/6 of a core, PSI and involuntary switches climb, ITL rises ~2x.")
def _(S):
    streams = npc_streams(diurnal(6.0, 0.05), out=(100, 35))
    node, e = serve_node(S, kind="vllm", board="l40s", streams=streams, start=T0 + 2 * DAY + 10 * H, dur=760,
                         flags="--enable-prefix-caching --gpu-memory-utilization 0.9", cpus=32, cpuset=(4, 5, 6, 7),
                         scrape_s=5.0, **LLAMA3B)
    f = win(280, 500, rin=8, rout=8)
    node.host.other_on_set = lambda t: 0.4 + 20.0 * f(t)
    node.host.other_elsewhere = lambda t: 6.0 + 10.0 * f(t)
    return node


@spec("rl_sim_workers_oversubscribed_h100", "rl-agents", "host_cpu_contention", (0,), (300.0, 520.0), "trainer",
      "Another team's game-simulator workers (36 of them) are scheduled onto the RL learner's cores; the learner's "
      "Python step loop and loaders lose CPU, PSI and run queue climb, samples/s fall ~35%.")
def _(S):
    node, t = train_node(S, board="h100sxm", start=T0 + 15 * DAY + 1 * H, dur=780, cpus=64, cpuset=tuple(range(12)),
                         script="learner.py", args="--algo ppo --env arena-sim --num-envs 0", t_comp=0.11,
                         t_opt=0.01, batch=2048, workers=4, cpu_per_batch=0.08, counter="samples", mem_gib=24,
                         host_step_s=0.035)
    f = win(300, 520, rin=10, rout=10)
    node.host.other_on_set = lambda tt: 1.0 + 30.0 * f(tt)
    return node


@spec("sglang_pod_quota_cut_h100", "player-support", "host_cpu_contention", (0,), (270.0, 470.0), "sglang",
      "The support SGLang pod's CPU limit is cut from 6 to 0.8 cores by a bad autoscaler recommendation: the "
      "scheduler and tokenizer are throttled in most 100 ms periods and ITL doubles; no other tenant involved.")
def _(S):
    streams = [Stream(diurnal(8.0, 0.05), prompt=(320, 110), out=(150, 50), personas=2, persona_len=(1800, 2200),
                      structured=0.4, tag="support")]
    node, e = serve_node(S, kind="sglang", board="h100sxm", streams=streams, start=T0 + 5 * DAY + 17 * H, dur=720,
                         flags="--mem-fraction-static 0.85", block=1, gmu=0.85, quota=6.0, cpus=96,
                         cpuset=tuple(range(96)), pod="support/sglang-qwen7b-2", container="containerd:1be0c44d7a2f",
                         scrape_s=5.0, **QWEN7)
    f = win(270, 470, rin=1, rout=1)
    node.host.quota_fn = lambda t: 6.0 - 5.2 * (1.0 if f(t) > 0.5 else 0.0)
    return node


@spec("logshipper_on_support_vllm_a100x2", "player-support", "host_cpu_contention", None, (300.0, 500.0), "vllm",
      "Launch-day log flood: the node's log shipper and anti-cheat log scanner spin on the same 6-core cpuset as "
      "the 14B support engine (TP=2); the engine's threads wait for CPU, ITL rises ~1.6x. Intermittent bursts.")
def _(S):
    streams = [Stream(diurnal(4.0, 0.05), prompt=(300, 100), out=(160, 50), personas=2, persona_len=(1600, 2000), tag="support")]
    node, e = serve_node(S, kind="vllm", board="a100_40", n_gpus=2, streams=streams, start=T0 + 0 * DAY + 21 * H, dur=720,
                         flags="--tensor-parallel-size 2 --enable-prefix-caching", cpus=48, cpuset=tuple(range(6)),
                         scrape_s=5.0, **QWEN14)
    f = win(300, 500, rin=4, rout=4, pulses=(40, 12))
    node.host.other_on_set = lambda t: 0.5 + 24.0 * f(t)
    return node


# ====================================================================== input_stall
@spec("texture_diffusion_loader_4k_h100x8", "texture-diffusion-train", "input_stall", None, (320.0, 560.0), "trainer",
      "Diffusion fine-tune switches to the 4k DDS texture shard: decoding and resizing each batch costs ~4x the "
      "CPU, 6 loader workers per rank can't keep up and all eight ranks wait for data together.")
def _(S):
    node, t = train_node(S, n_gpus=8, board="h100sxm", start=T0 + 4 * DAY + 1 * H, dur=780, cpus=192,
                         script="train_texture_diffusion.py", args="--data s3://tex-lake/shards --workers 6 --res 1024",
                         t_comp=0.42, profile=work.CONV, t_opt=0.03, batch=16, workers=6, cpu_per_batch=1.6,
                         grad_bytes=2.4e9, counter="samples", mem_gib=58, scrape_s=10.0)
    f = win(320, 560, rin=15, rout=15)
    t.mods["cpu_per_batch_mult"] = lambda tt: 1.0 + 3.0 * f(tt)
    return node


@spec("churn_cold_object_store_a100_40", "churn-recsys-nightly", "input_stall", (0,), (300.0, 540.0), "trainer",
      "Nightly churn trainer reaches the launch-week partitions, which are not in the node's cache: reads come "
      "from the object store at ~1/8 the speed and the GPU idles between batches; slow recovery as the cache warms.")
def _(S):
    node, t = train_node(S, board="a100_40", start=T0 + 16 * DAY + 3 * H, dur=780, cpus=32, script="train_churn.py",
                         args="--config conf/churn_gbdt_nn.yaml --data s3://player-events/daily", t_comp=0.12,
                         t_opt=0.01, batch=4096, workers=4, cpu_per_batch=0.12, io_bytes=400e6, storage_bw=3.0e9,
                         counter="samples", mem_gib=22)
    f = win(300, 540, rin=20, rout=90)
    t.mods["storage_mult"] = lambda tt: 1.0 - 0.88 * f(tt)
    return node


@spec("anticheat_nfs_intermittent_l40s_x2", "anticheat-seq", "input_stall", None, (280.0, 520.0), "trainer",
      "Anti-cheat trainer on two L40S reading replay features over NFS: the filer stalls in bursts (~25 s of "
      "every 45 s) during the launch backup window; both ranks starve together. Intermittent.")
def _(S):
    node, t = train_node(S, n_gpus=2, board="l40s", start=T0 + 18 * DAY + 2 * H, dur=760, cpus=48,
                         script="train_seq.py", args="--model anticheat-tx-120m --data /mnt/nfs/replays", t_comp=0.2,
                         t_opt=0.02, batch=128, tokens_per_sample=512, workers=4, cpu_per_batch=0.08, io_bytes=250e6,
                         storage_bw=1.6e9, grad_bytes=0.24e9, counter="tokens", mem_gib=30)
    f = win(280, 520, rin=3, rout=3, pulses=(25, 20))
    t.mods["storage_mult"] = lambda tt: 1.0 - 0.93 * f(tt)
    return node


@spec("conceptart_lora_uncached_latents_rtx6000", "concept-art-lora", "input_stall", (0,), (260.0, 440.0), "none",
      "Concept-art SDXL LoRA on an RTX 6000 Ada workstation: a new art dump without pre-computed latents is "
      "appended; two loader workers decode 8k PNGs and augment on the CPU, the GPU waits ~50% of the time.")
def _(S):
    node, t = train_node(S, board="rtx6000ada", start=T0 + 10 * DAY + 15 * H, dur=660, cpus=24, script="train_lora_sdxl.py",
                         args="--dataset /data/conceptart --cache-latents --dataloader-workers 2", t_comp=0.6,
                         profile=work.CONV, t_opt=0.03, batch=4, workers=2, cpu_per_batch=0.7, counter=None,
                         mem_gib=38, user="akim", launcher="python")
    f = win(260, 440, rin=5, rout=5)
    t.mods["cpu_per_batch_mult"] = lambda tt: 1.0 + 3.2 * f(tt)
    return node


# ====================================================================== collective_straggler
@spec("llm_finetune_8xh100_rank5_hot", "character-lora-finetune", "collective_straggler", (5,), (300.0, 560.0), "trainer",
      "Full fine-tune of the character model on 8x H100: a failed chassis fan starves GPU 5 of airflow, it reaches "
      "its slowdown temperature and runs ~20% slower; the seven others spin in NCCL waiting for it each step.")
def _(S):
    node, t = train_node(S, n_gpus=8, board="h100sxm", start=T0 + 6 * DAY + 3 * H, dur=840, cpus=192,
                         script="train_fsdp.py", args="--model llama-3.1-8b --fsdp full_shard --bf16", t_comp=0.65,
                         t_opt=0.03, batch=4, tokens_per_sample=4096, workers=4, cpu_per_batch=0.1,
                         grad_bytes=8e9, counter="tokens", mem_gib=70, scrape_s=10.0)
    f = win(300, 560, rin=60, rout=60)
    def hot(n, tt):
        n.gpus[5].r_scale = 1.0 + 1.1 * f(tt)
    node.hooks.append(hot)
    return node


@spec("rl_learner_4xh200_rank3_cores", "rl-agents", "collective_straggler", (3,), (280.0, 480.0), "trainer",
      "4-GPU RL learner: the asset build farm's shader jobs land on the NUMA node that hosts rank 3's process; "
      "its Python step loop runs ~2.5x slower and ranks 0-2 wait in the all-reduce. Only rank 3 is slowed.")
def _(S):
    node, t = train_node(S, n_gpus=4, board="h200", start=T0 + 17 * DAY + 22 * H, dur=720, cpus=128,
                         script="learner.py", args="--algo appo --ddp --env arena-sim", t_comp=0.16, t_opt=0.01,
                         batch=2048, workers=4, cpu_per_batch=0.06, grad_bytes=0.5e9, counter="samples", mem_gib=40,
                         host_step_s=0.03)
    f = win(280, 480, rin=8, rout=8)
    t.mods["main_share"] = lambda tt, i: (1.0 - 0.62 * f(tt)) if i == 3 else 1.0
    t.mods["worker_share"] = lambda tt, i: (1.0 - 0.5 * f(tt)) if i == 3 else 1.0
    node.host.other_on_set = lambda tt: 0.5 + 3.0 * f(tt)
    return node


@spec("churn_ddp_2xl40s_power_brake", "churn-recsys-nightly", "collective_straggler", (1,), (300.0, 500.0), "trainer",
      "Two-GPU churn trainer: GPU 1's board asserts its power-brake line (a failing PSU rail), its clock is "
      "held at ~60%, rank 0 waits in every all-reduce; ~30% of the work lost (mild-moderate).")
def _(S):
    node, t = train_node(S, n_gpus=2, board="l40s", start=T0 + 19 * DAY + 1 * H, dur=720, cpus=48,
                         script="train_churn.py", args="--config conf/churn_seq.yaml --ddp", t_comp=0.18,
                         t_opt=0.02, batch=4096, workers=4, cpu_per_batch=0.08, grad_bytes=0.3e9,
                         counter="samples", mem_gib=30)
    f = win(300, 500, rin=1, rout=1)
    def brake(n, tt):
        n.gpus[1].power_brake = f(tt) > 0.5
    node.hooks.append(brake)
    return node


@spec("charlora_8xb200_rank6_link", "character-lora-finetune", "collective_straggler", (6,), (300.0, 540.0), "trainer",
      "8x B200 FSDP fine-tune: GPU 6's NVLink retrains to fewer lanes in bursts, its parameter all-gathers arrive "
      "late and its steps run ~35% longer; the other ranks wait in NCCL. Intermittent (link flaps).")
def _(S):
    node, t = train_node(S, n_gpus=8, board="b200", start=T0 + 20 * DAY + 5 * H, dur=780, cpus=224,
                         script="train_fsdp.py", args="--model qwen2.5-14b --fsdp full_shard --bf16", t_comp=0.5,
                         t_opt=0.03, batch=4, tokens_per_sample=4096, workers=4, cpu_per_batch=0.1, grad_bytes=14e9,
                         counter="tokens", mem_gib=120, scrape_s=10.0)
    f = win(300, 540, rin=2, rout=2, pulses=(50, 15))
    t.mods["comp_mult"] = lambda tt, i: (1.0 + 0.4 * f(tt)) if i == 6 else 1.0
    t.mods["nvl_share"] = lambda tt, i: (1.0 - 0.7 * f(tt)) if i == 6 else 1.0
    return node


# ====================================================================== oversized_request
@spec("support_lore_bible_paste_h100x4", "player-support", "oversized_request", None, (270.0, 430.0), "vllm",
      "A player pastes the whole 100k-token lore bible into the support chat and the client retries every ~25 s: "
      "each giant prefill takes every step's budget and everyone's ITL spikes to ~0.5 s; one client's few requests.")
def _(S):
    f = win(270, 400, rin=0.1, rout=0.1)
    streams = [Stream(diurnal(5.0, 0.06), prompt=(350, 120), out=(180, 60), personas=3, persona_len=(2500, 3500), tag="support"),
               Stream(lambda t: 0.04 * (1.0 if f(t) > 0.5 else 0.0), prompt=(100000, 0), out=(300, 0), tag="paste")]
    node, e = serve_node(S, kind="vllm", board="h100sxm", n_gpus=4, streams=streams, start=T0 + 1 * DAY + 20 * H, dur=720,
                         flags="--tensor-parallel-size 4 --max-model-len 131072 --enable-prefix-caching", max_len=131072,
                         max_batched=8192, gmu=0.92, scrape_s=5.0, cpus=96, cpuset=tuple(range(16)), **LLAMA70)
    return node


@spec("npc_qa_tool_n8_logprobs_h200", "npc-dialogue", "oversized_request", (0,), (300.0, 480.0), "vllm",
      "The QA team's regression tool sends n=8, logprobs=20 requests (one client, one at a time): every step now "
      "computes and serialises full-vocabulary logprobs for 8 extra sequences and NPC ITL rises ~2x.")
def _(S):
    f = win(300, 480, rin=0.5, rout=0.5)
    streams = npc_streams(diurnal(10.0, 0.05)) + [Stream(None, clients=lambda t: 1 if f(t) > 0.5 else 0, prompt=(500, 60), out=(256, 0), n=8,
                                              logprobs=20, tag="qa")]
    node, e = serve_node(S, kind="vllm", board="h200", streams=streams, start=T0 + 8 * DAY + 16 * H, dur=720,
                         flags="--enable-prefix-caching --max-logprobs 20", scrape_s=5.0, **LLAMA8)
    return node


@spec("designer_llamacpp_doc_paste_5090", "designer-workstation", "oversized_request", (0,), (260.0, 420.0), "llamacpp",
      "Shared llama-server on a design-team RTX 5090: one designer pastes a 60k-token design document, then "
      "re-pastes it every ~20 s for two minutes; each prompt's chunks crowd the other slots' decode and their token rate halves.")
def _(S):
    f = win(260, 400, rin=0.1, rout=0.1)
    streams = [Stream(lambda t: 0.5, prompt=(600, 200), out=(200, 60), tag="designers"),
               Stream(lambda t: 0.05 * (1.0 if f(t) > 0.5 else 0.0), prompt=(60000, 0), out=(400, 0), tag="doc")]
    node, e = serve_node(S, kind="llamacpp", board="rtx5090", streams=streams, start=T0 + 12 * DAY + 14 * H, dur=660,
                         model="Qwen2.5-7B-Instruct-Q5_K_M.gguf", params_b=7.6, layers=28, hidden=3584, kvb=57344,
                         wbytes=0.7, pool_tokens=131072, block=1, max_seqs=4, max_batched=2048, user="rlopez",
                         flags="-c 131072 -np 4 -ngl 99 -fa", cpus=32, cpuset=tuple(range(32)), scrape_s=5.0, act_gib=1.5)
    return node


@spec("wikibot_tgi_one_client_megaprompt_l40s", "wiki-bot", "oversized_request", (0,), (280.0, 440.0), "tgi",
      "One Discord integration sends whole 14k-token wiki exports to the TGI wiki bot, one after another (a "
      "client's few requests): each whole-prompt prefill stalls the batch for over a second.")
def _(S):
    f = win(280, 440, rin=0.1, rout=0.1)
    streams = [Stream(diurnal(2.0, 0.1), prompt=(400, 150), out=(150, 50), tag="wiki"),
               Stream(lambda t: 0.07 * (1.0 if f(t) > 0.5 else 0.0), prompt=(14000, 500), out=(120, 0), tag="export")]
    node, e = serve_node(S, kind="tgi", board="l40s", streams=streams, start=T0 + 21 * DAY + 12 * H, dur=700,
                         flags="--max-input-tokens 16000 --max-total-tokens 16384", chunked=False, max_batched=16384,
                         max_seqs=64, gmu=0.9, scrape_s=10.0, cpus=16, cpuset=tuple(range(16)), **MISTRAL7)
    return node


# ====================================================================== kv_pressure
@spec("npc_launch_day_kv_small_h100", "npc-dialogue", "kv_pressure", (0,), (300.0, 540.0), "vllm",
      "Launch-day peak on an NPC engine started with --gpu-memory-utilization 0.45 (left from a co-location plan): "
      "long quest dialogues fill the small KV pool, requests preempt and queue, TTFT climbs.")
def _(S):
    f = win(300, 540, rin=60, rout=40)
    streams = npc_streams(lambda t: 10.0 + 6.0 * f(t), out=(140, 50)) + \
        [Stream(None, clients=lambda t: 140 * f(t), prompt=(900, 300), out=(700, 150), personas=16,
                persona_len=(1400, 3200), tag="quest")]
    node, e = serve_node(S, kind="vllm", board="h100sxm", streams=streams, start=T0 + 0 * DAY + 18 * H, dur=780,
                         flags="--gpu-memory-utilization 0.45 --enable-prefix-caching", gmu=0.45, scrape_s=5.0, **LLAMA8)
    return node


@spec("toxicity_sglang_retractions_l4", "chat-moderation", "kv_pressure", (0,), (270.0, 470.0), "sglang",
      "Toxicity LLM on an L4 at the launch chat surge: concurrency outgrows the 24 GB card's token pool, SGLang "
      "retracts requests back to the queue (appeal checks ask for a written reason, ~400 tokens) and the moderation backlog grows until traffic subsides.")
def _(S):
    f = win(270, 470, rin=30, rout=30)
    streams = [Stream(lambda t: 6.0, prompt=(150, 50), out=(120, 30), personas=200, persona_len=(700, 1100), tag="tox"),
               Stream(None, clients=lambda t: 110 * f(t), prompt=(150, 50), out=(420, 80), personas=200,
                      persona_len=(700, 1100), tag="surge")]
    node, e = serve_node(S, kind="sglang", board="l4", streams=streams, start=T0 + 0 * DAY + 16 * H, dur=720,
                         flags="--mem-fraction-static 0.88 --max-running-requests 128", gmu=0.88, block=1, max_seqs=128,
                         scrape_s=5.0, cpus=16, cpuset=tuple(range(8)), act_gib=1.5, **LLAMA3B)
    return node


@spec("npc_lora_monologues_a100_80", "npc-dialogue", "kv_pressure", (0,), (280.0, 500.0), "vllm",
      "NPC engine with per-character LoRA adapters: the 'Night Market' event makes merchants deliver 1-2k-token "
      "monologues; the KV pool fills, vLLM preempts running requests and the waiting queue grows.")
def _(S):
    f = win(280, 500, rin=30, rout=30)
    loras = ("merchant_ysolde", "guard_bram", "captain_mara", "oracle_tey")
    streams = npc_streams(diurnal(9.0, 0.05), loras=loras) + \
        [Stream(None, clients=lambda t: 150 * f(t), prompt=(150, 50), out=(1500, 300), personas=4,
                persona_len=(2500, 3000), loras=loras[:1], tag="market")]
    node, e = serve_node(S, kind="vllm", board="a100_80", streams=streams, start=T0 + 22 * DAY + 20 * H, dur=720,
                         flags="--enable-lora --max-loras 4 --max-lora-rank 32 --gpu-memory-utilization 0.5",
                         gmu=0.5, loras=loras, scrape_s=5.0, **LLAMA8)
    return node


# ====================================================================== gpu_shared
@spec("localisation_vllm_cloudgaming_night_l40s", "batch-localisation", "gpu_shared", (0,), (300.0, 560.0), "vllm",
      "Night batch localisation on a cloud-gaming render node's L40S: a late-night player session starts on the "
      "same GPU (time-sliced), the render process takes ~45% of the GPU and translation tokens/s drop ~40%.")
def _(S):
    streams = [Stream(None, clients=lambda t: 32, prompt=(700, 200), out=(600, 150), personas=1, persona_len=(900, 900), tag="l10n")]
    node, e = serve_node(S, kind="vllm", board="l40s", streams=streams, start=T0 + 11 * DAY + 2 * H, dur=780,
                         flags="--gpu-memory-utilization 0.7 --max-num-seqs 128", gmu=0.7, scrape_s=10.0, user="svc-l10n",
                         **LLAMA8)
    alive = lambda t: 300 <= t <= 560
    tenant(node, S, 0, alive, lambda t: 0.55, (1.0, 0.72, 0.05, 0.42), name="gs-render-work",
           cmd="/opt/cloudgame/bin/gs-render-worker --session 7f3a91 --encoder nvenc --fps 60", user="cloudgame",
           mem_gib=7.5, cgroup="/system.slice/cloudgame-session@7f3a91.service")
    return node


@spec("charlora_forgotten_notebook_h100pcie", "character-lora-finetune", "gpu_shared", (0,), (270.0, 480.0), "trainer",
      "A researcher's forgotten notebook kernel re-runs a benchmark cell in a loop on the LoRA fine-tune's GPU; "
      "the ipykernel process (another user, outside the job) takes ~40% of the SM time and steps slow ~35%.")
def _(S):
    node, t = train_node(S, board="h100pcie", start=T0 + 14 * DAY + 13 * H, dur=720, script="train_lora.py",
                         args="--base Qwen/Qwen2.5-7B --lora-r 32 --character oracle_tey", t_comp=0.3, t_opt=0.006,
                         batch=8, tokens_per_sample=2048, workers=4, cpu_per_batch=0.15, counter="tokens", mem_gib=44,
                         launcher="python")
    alive = lambda tt: 270 <= tt <= 480
    tenant(node, S, 0, alive, lambda tt: 0.6, work.GEMM, name="python3",
           cmd="/home/pchen/.venv/bin/python3 -m ipykernel_launcher -f /home/pchen/.local/share/jupyter/runtime/kernel-4e1b.json",
           user="pchen", mem_gib=14, cgroup="/user.slice/user-1042.slice/session-12.scope")
    return node


@spec("asr_lightmap_bake_h100", "voice-asr", "gpu_shared", (0,), (250.0, 470.0), "none",
      "Voice-chat ASR service on an H100: the asset farm's scheduler puts a GPU lightmap bake on the same GPU; "
      "the baker takes most of the SM time and ASR latency suffers until the bake is moved.")
def _(S):
    node, st = service_node(S, board="h100sxm", start=T0 + 3 * DAY + 22 * H, dur=720,
                            cmd="/opt/asr/bin/python3 -m asr_service --model whisper-large-v3-turbo --batch 16 --port 9200",
                            name="python3", user="svc-voice", mem_gib=12, load=diurnal(0.42, 0.08), profile=work.mix(work.GEMM, work.CONV, 0.5))
    alive = lambda t: 250 <= t <= 470
    tenant(node, S, 0, alive, lambda t: 0.85, (1.0, 0.8, 0.1, 0.35), name="lightmass-gpu",
           cmd="/opt/buildfarm/bin/lightmass-gpu --job 88213 --level Harbor_P --quality production", user="buildfarm",
           mem_gib=21, cgroup="/system.slice/buildfarm-agent.service")
    return node


# ====================================================================== spec_decode_rejected
@spec("npc_stale_draft_after_finetune_vllm_h100", "npc-dialogue", "spec_decode_rejected", (0,), (300.0, 520.0), "vllm",
      "The fine-tuned 'Captain Mara' character goes live; the 1B draft model was not re-distilled and most of its "
      "tokens are rejected: per-draft-token acceptance falls from ~0.5 to ~0.1, fewer tokens per verify step, "
      "per-request time per output token rises while the draft's cost stays.")
def _(S):
    f = win(300, 520, rin=20, rout=20)
    acc = lambda t: 0.74 - 0.46 * f(t)
    streams = npc_streams(diurnal(11.0, 0.05), accept=acc)
    node, e = serve_node(S, kind="vllm", board="h100sxm", streams=streams, start=T0 + 5 * DAY + 12 * H, dur=720,
                         flags="--speculative-config {\"model\":\"studio/npc-draft-1b\",\"num_speculative_tokens\":4}",
                         spec=dict(k=4, draft_bytes=2.5e9, kind="draft"), scrape_s=5.0, **LLAMA8)
    return node


@spec("localisation_eagle_new_languages_sglang_h200", "batch-localisation", "spec_decode_rejected", (0,), (280.0, 500.0), "sglang",
      "Localisation on SGLang with an EAGLE head trained on EFIGS text: the Korean and Thai jobs start and the "
      "draft head's acceptance falls from ~0.7 to ~0.35; tokens per verify step drop and throughput falls ~30%.")
def _(S):
    f = win(280, 500, rin=15, rout=15)
    streams = [Stream(diurnal(5.0, 0.03), prompt=(600, 200), out=(450, 120), personas=1, persona_len=(800, 800),
                      accept=lambda t: 0.72 - 0.38 * f(t), tag="l10n")]
    node, e = serve_node(S, kind="sglang", board="h200", streams=streams, start=T0 + 12 * DAY + 1 * H, dur=720,
                         flags="--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1",
                         spec=dict(k=3, draft_bytes=0.45e9, kind="eagle", draft_fix=0.2e-3), block=1, scrape_s=5.0,
                         user="svc-l10n", **QWEN7)
    return node


@spec("npc_barks_temperature_push_vllm_h200", "npc-dialogue", "spec_decode_rejected", (0,), (290.0, 470.0), "vllm",
      "A design config push raises NPC bark sampling temperature to 1.3 for 'more variety'; the EAGLE draft's "
      "acceptance drops from ~0.6 to ~0.25 per draft token (mild: throughput -6%, time per output token up) until the push is rolled back.")
def _(S):
    f = win(290, 470, rin=3, rout=3)
    streams = npc_streams(diurnal(12.0, 0.05), accept=lambda t: 0.76 - 0.3 * f(t))
    node, e = serve_node(S, kind="vllm", board="h200", streams=streams, start=T0 + 23 * DAY + 17 * H, dur=690,
                         flags="--speculative-config {\"method\":\"eagle3\",\"model\":\"studio/npc-eagle3\",\"num_speculative_tokens\":3}",
                         spec=dict(k=3, draft_bytes=0.5e9, kind="eagle", draft_fix=0.2e-3), scrape_s=5.0, **LLAMA8)
    return node


# ====================================================================== host_launch_jitter
@spec("support_vllm_edr_scan_launch_core_h100", "player-support", "host_launch_jitter", (0,), (270.0, 480.0), "vllm",
      "An endpoint-security scanner rolled out for launch periodically scans the engine's memory on its launch "
      "core: the engine thread is preempted mid-launch, cudaLaunchKernel p99 goes from ~5 us to ms, ITL +40%; bursty.")
def _(S):
    streams = [Stream(diurnal(7.0, 0.05), prompt=(300, 100), out=(160, 50), personas=2, persona_len=(1800, 2200), tag="support")]
    node, e = serve_node(S, kind="vllm", board="h100sxm", streams=streams, start=T0 + 2 * DAY + 20 * H, dur=720,
                         flags="--enable-prefix-caching", ebpf=True, scrape_s=5.0, **LLAMA8)
    f = win(270, 480, rin=1, rout=1, pulses=(12, 4))
    e.mods["jitter_s"] = lambda t: 0.0035 * f(t)
    node.jitter_p = lambda t: 0.05 * f(t)
    node.host.other_on_set = lambda t: 0.4 + 0.5 * f(t)
    return node


@spec("anticheat_trainer_irq_on_launch_core_h100", "anticheat-seq", "host_launch_jitter", (0,), (300.0, 500.0), "trainer",
      "Telemetry NIC interrupts from the launch-day firehose are steered onto the core running the anti-cheat "
      "trainer's launch thread: launches stall in bursts, the GPU idles between kernels, steps +25% (mild).")
def _(S):
    node, t = train_node(S, board="h100sxm", start=T0 + 7 * DAY + 23 * H, dur=720, script="train_seq.py",
                         args="--model anticheat-tx-120m --compile=False", t_comp=0.06, t_opt=0.006, batch=512,
                         tokens_per_sample=256, workers=4, cpu_per_batch=0.04, counter="tokens", mem_gib=20,
                         n_kernels=2600, ebpf=True, launcher="python")
    f = win(300, 500, rin=2, rout=2)
    t.mods["jitter_s"] = lambda tt, i: 7e-6 * f(tt)
    node.jitter_p = lambda tt: 0.035 * f(tt)
    return node


@spec("toxicity_sglang_logshipper_bursts_l40s", "chat-moderation", "host_launch_jitter", (0,), (260.0, 460.0), "sglang",
      "The log shipper's compression bursts run on the SGLang scheduler's core (same IRQ/housekeeping core): "
      "the scheduler is preempted inside launches, eBPF shows a ms tail on cudaLaunchKernel, ITL p99 x2.5.")
def _(S):
    streams = [Stream(diurnal(14.0, 0.05), prompt=(600, 200), out=(30, 10), personas=2, persona_len=(500, 700), tag="tox")]
    node, e = serve_node(S, kind="sglang", board="l40s", streams=streams, start=T0 + 4 * DAY + 19 * H, dur=720,
                         flags="--mem-fraction-static 0.85", block=1, gmu=0.85, ebpf=True, scrape_s=5.0, **LLAMA3B)
    f = win(260, 460, rin=1, rout=1, pulses=(8, 3))
    e.mods["jitter_s"] = lambda t: 0.004 * f(t)
    node.jitter_p = lambda t: 0.06 * f(t)
    node.host.other_on_set = lambda t: 0.3 + 0.6 * f(t)
    return node


# ====================================================================== healthy look-alikes
def healthy(name, family, engine, note):
    return spec(name, family, None, None, None, engine, note)


@healthy("npc_launch_day_ramp_absorbed_h200", "npc-dialogue", "vllm",
         "Launch-day ramp: NPC traffic triples over five minutes and stays; batches grow, KV usage rises to ~10%, "
         "ITL creeps up a few percent. The engine absorbs it.")
def _(S):
    ramp = lambda t: 7.0 + 16.0 * min(1.0, max(0.0, (t - 240) / 300))
    node, e = serve_node(S, kind="vllm", board="h200", streams=npc_streams(ramp), start=T0 + 0 * DAY + 15 * H,
                         dur=840, flags="--enable-prefix-caching", scrape_s=5.0, **LLAMA8)
    return node


@healthy("support_night_traffic_fall_sglang_h100", "player-support", "sglang",
         "Traffic falls from evening peak to the small hours: running requests, tokens/s and GPU-Util drop ~5x; "
         "latency improves.")
def _(S):
    fall = lambda t: 3.0 + 15.0 * max(0.0, 1.0 - t / 600)
    streams = [Stream(fall, prompt=(320, 110), out=(150, 50), personas=2, persona_len=(1800, 2200), tag="support")]
    node, e = serve_node(S, kind="sglang", board="h100sxm", streams=streams, start=T0 + 9 * DAY + 23 * H, dur=780,
                         block=1, gmu=0.85, scrape_s=5.0, **QWEN7)
    return node


@healthy("npc_lora_swap_vllm_a100_80", "npc-dialogue", "vllm",
         "Character LoRA adapters are swapped in as the evening's event characters go live (adapter set changes, "
         "a short dip while they load); traffic unchanged.")
def _(S):
    loras = ("merchant_ysolde", "guard_bram", "captain_mara", "oracle_tey")
    node, e = serve_node(S, kind="vllm", board="a100_80", streams=npc_streams(diurnal(8.0, 0.05), loras=loras),
                         start=T0 + 13 * DAY + 18 * H, dur=720, flags="--enable-lora --max-loras 4", loras=loras,
                         gmu=0.85, scrape_s=5.0, **LLAMA8)
    new = ("merchant_ysolde", "guard_bram", "festival_host", "bard_ilse")
    def swap(n, t, e=e, done=[False]):
        if t >= 330 and not done[0]:
            done[0] = True
            e.streams[0].loras = new
    node.hooks.append(swap)
    e.mods["host_extra_s"] = lambda t: 0.004 if 330 <= t <= 333 else 0.0
    return node


@healthy("wikibot_tgi_quiet_a10g", "wiki-bot", "tgi",
         "The legacy wiki bot on a quiet afternoon: a trickle of short questions with idle gaps; GPU-Util jumps "
         "between 0 and 100 as requests come and go.")
def _(S):
    streams = [Stream(lambda t: 0.35, prompt=(450, 150), out=(160, 60), tag="wiki")]
    node, e = serve_node(S, kind="tgi", board="a10g", streams=streams, start=T0 + 24 * DAY + 14 * H, dur=600,
                         chunked=False, max_batched=16384, max_seqs=64, gmu=0.92, act_gib=1.2, scrape_s=10.0, cpus=8,
                         cpuset=tuple(range(8)), **MISTRAL7)
    return node


@healthy("charlora_checkpoint_phase_h100x2", "character-lora-finetune", "trainer",
         "2-GPU character fine-tune writing a checkpoint to the object store every 4 minutes (~25 s with the GPUs "
         "nearly idle, PCIe busy); steps resume at full speed after each.")
def _(S):
    node, t = train_node(S, n_gpus=2, board="h100sxm", start=T0 + 16 * DAY + 10 * H, dur=780, cpus=64,
                         script="train_lora.py", args="--base meta-llama/Llama-3.1-8B --ddp --save-every-min 4",
                         t_comp=0.35, t_opt=0.01, batch=8, tokens_per_sample=2048, workers=4, cpu_per_batch=0.2,
                         grad_bytes=0.3e9, counter="tokens", mem_gib=62, ck_every=240, ck_s=25, ck_at=200)
    return node


@healthy("anticheat_eval_phase_h100x4", "anticheat-seq", "trainer",
         "Anti-cheat trainer running its evaluation pass every 5 minutes (60 s of forward-only batches, no "
         "training steps counted); a scheduled phase, not a fault.")
def _(S):
    node, t = train_node(S, n_gpus=4, board="h100sxm", start=T0 + 18 * DAY + 21 * H, dur=840, cpus=96,
                         script="train_seq.py", args="--model anticheat-tx-350m --eval-every-min 5", t_comp=0.21,
                         t_opt=0.02, batch=256, tokens_per_sample=512, workers=6, cpu_per_batch=0.15,
                         grad_bytes=0.7e9, counter="tokens", mem_gib=38, ev_every=300, ev_s=60, ev_at=260)
    return node


@healthy("rl_rollout_learner_phases_h100", "rl-agents", "trainer",
         "PPO agent for the arena mode: 45 s rollouts where 24 simulator workers play on the CPU and the GPU mostly "
         "idles (small policy batches), then 25 s learner phases at full GPU; by design.")
def _(S):
    node, t = train_node(S, board="h100sxm", start=T0 + 20 * DAY + 0 * H, dur=840, cpus=64, cpuset=tuple(range(32)),
                         script="ppo_arena.py", args="--num-envs 24 --rollout-steps 2048", t_comp=0.12, t_opt=0.01,
                         batch=4096, workers=2, cpu_per_batch=0.05, counter="samples", mem_gib=18, rollout_s=45,
                         learn_s=25, envs=24, env_workers=24, launcher="python")
    return node


@healthy("lore_longctx_vllm_b200", "lore-qa", "vllm",
         "The lore-archive assistant runs 24-48k-token contexts by design: DRAM activity sits high and ITL sits at "
         "its usual 2-3x of the short-prompt engines, all the time.")
def _(S):
    streams = [Stream(diurnal(1.2, 0.08), prompt=(600, 200), out=(300, 80), personas=60, persona_len=(24000, 48000), tag="lore")]
    node, e = serve_node(S, kind="vllm", board="b200", streams=streams, start=T0 + 19 * DAY + 10 * H, dur=720,
                         flags="--max-model-len 65536 --enable-prefix-caching", max_len=65536, scrape_s=5.0, **LLAMA8)
    return node


@healthy("sweep_agent_trials_start_a100_80", "churn-recsys-nightly", "none",
         "A hyperparameter sweep agent starts its first trial after idling: the GPU goes from idle to busy and "
         "stays there; nothing else changes.")
def _(S):
    node, st = service_node(S, board="a100_80", start=T0 + 15 * DAY + 22 * H, dur=660,
                            cmd="/opt/venv/bin/python3 /opt/venv/bin/wandb agent studio-ml/churn/8x2k1q", name="python3",
                            user="mlops", mem_gib=30, load=lambda t: 0.0 if t < 200 else 0.9, profile=work.GEMM, kps=8000)
    return node


@healthy("localisation_burst_long_prompts_absorbed_vllm_h100", "batch-localisation", "vllm",
         "A 30-second burst of long glossary prompts arrives at the localisation engine; chunked prefill absorbs it, "
         "a brief TTFT bump, decode barely moves.")
def _(S):
    f = win(330, 360, rin=1, rout=1)
    streams = [Stream(diurnal(4.0, 0.03), prompt=(700, 200), out=(400, 120), personas=1, persona_len=(900, 900), tag="l10n"),
               Stream(lambda t: 0.3 * f(t), prompt=(5000, 800), out=(100, 30), tag="glossary")]
    node, e = serve_node(S, kind="vllm", board="h100sxm", streams=streams, start=T0 + 17 * DAY + 3 * H, dur=720,
                         flags="--max-num-batched-tokens 8192", max_batched=8192, scrape_s=5.0, user="svc-l10n", **LLAMA8)
    return node


@healthy("diffusion_powercapped_always_h200", "texture-diffusion-train", "trainer",
         "Texture-diffusion training with dense bf16 convolutions: the H200 sits at its 700 W cap with 'power cap' "
         "set and clocks ~8% under max for the whole run. Normal for this job.")
def _(S):
    node, t = train_node(S, board="h200", start=T0 + 21 * DAY + 4 * H, dur=720, script="train_texture_diffusion.py",
                         args="--res 1024 --bf16", t_comp=0.5, profile=(1.0, 0.97, 0.9, 0.4), t_opt=0.02, batch=16,
                         workers=8, cpu_per_batch=0.5, counter="samples", mem_gib=90, launcher="python")
    return node


@healthy("npc_eager_mode_always_vllm_h100", "npc-dialogue", "vllm",
         "A debugging deployment of the NPC model runs with --enforce-eager: launch-bound all the time (GPU busy, SM "
         "modest, eBPF shows steady launch rates); nothing changes during the trace.")
def _(S):
    node, e = serve_node(S, kind="vllm", board="h100sxm", streams=npc_streams(diurnal(4.0, 0.05), personas=4),
                         start=T0 + 6 * DAY + 10 * H, dur=660, flags="--enforce-eager", graphs=False, ebpf=True,
                         scrape_s=5.0, **LLAMA3B)
    return node


@healthy("cloudgaming_render_sessions_l40s", "cloud-gaming", "none",
         "A cloud-gaming render node in the evening: the render worker's load follows the number of sessions "
         "(players joining and leaving), no ML job on it.")
def _(S):
    load = lambda t: 0.35 + 0.25 * (1 if (t // 140) % 2 else 0) + 0.05 * ((t // 37) % 3)
    node, st = service_node(S, board="l40s", start=T0 + 1 * DAY + 21 * H, dur=720,
                            cmd="/opt/cloudgame/bin/gs-render-worker --sessions auto --encoder nvenc", name="gs-render-work",
                            user="cloudgame", mem_gib=26, load=load, profile=(1.0, 0.72, 0.05, 0.42), kps=20000)
    return node


@healthy("designer_llamacpp_bursty_4090", "designer-workstation", "llamacpp",
         "llama.cpp on a designer's 4090: a few questions a minute with idle gaps between; GPU-Util jumps between "
         "0 and 100.")
def _(S):
    streams = [Stream(lambda t: 0.06, prompt=(900, 400), out=(300, 120), tag="designer")]
    node, e = serve_node(S, kind="llamacpp", board="rtx4090", streams=streams, start=T0 + 25 * DAY + 16 * H, dur=600,
                         model="Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", params_b=8.03, layers=32, hidden=4096, kvb=131072,
                         wbytes=0.6, pool_tokens=16384, block=1, max_seqs=1, max_batched=2048, user="tnguyen",
                         flags="-c 16384 -ngl 99", cpus=16, cpuset=tuple(range(16)), scrape_s=5.0, act_gib=1.0)
    return node


@healthy("localisation_batch_steady_vllm_h100", "batch-localisation", "vllm",
         "Offline batch localisation (all game text into 20 languages) keeping the engine busy: large steady batch, "
         "KV usage steady, a small queue that comes and goes.")
def _(S):
    streams = [Stream(None, clients=lambda t: 96, prompt=(500, 150), out=(420, 120), personas=1, persona_len=(900, 900), tag="l10n")]
    node, e = serve_node(S, kind="vllm", board="h100sxm", streams=streams, start=T0 + 26 * DAY + 1 * H, dur=720,
                         flags="--max-num-seqs 256", scrape_s=10.0, user="svc-l10n", **LLAMA8)
    return node


@healthy("asr_voicechat_diurnal_l4", "voice-asr", "none",
         "Voice-chat ASR on an L4: load follows the evening peak, busy between 30% and 60%.")
def _(S):
    node, st = service_node(S, board="l4", start=T0 + 7 * DAY + 19 * H, dur=720,
                            cmd="/opt/asr/bin/python3 -m asr_service --model whisper-small --port 9200", name="python3",
                            mem_gib=6, load=diurnal(0.45, 0.3, period=700), profile=work.mix(work.GEMM, work.CONV, 0.5))
    return node


@healthy("moderation_classifier_launch_spike_a10g", "chat-moderation", "none",
         "The BERT-style chat moderation classifier at the launch spike: load doubles within a minute and the "
         "service keeps up (busy ~70%).")
def _(S):
    load = lambda t: 0.32 + 0.38 * min(1.0, max(0.0, (t - 250) / 60))
    node, st = service_node(S, board="a10g", start=T0 + 0 * DAY + 17 * H, dur=660,
                            cmd="/opt/venv/bin/python3 -m modclf.serve --model chat-tox-deberta --max-batch 256",
                            name="python3", user="svc-trust", mem_gib=4, load=load, profile=(1.0, 0.7, 0.45, 0.35))
    return node


@healthy("spec_decode_mixed_accept_sglang_h100", "npc-dialogue", "sglang",
         "NPC engine with EAGLE: acceptance moves a little with the mix of characters (0.65-0.75) as players move "
         "between zones; nothing is wrong.")
def _(S):
    acc = lambda t: 0.70 + 0.04 * ((t // 90) % 3 - 1)
    node, e = serve_node(S, kind="sglang", board="h100sxm", streams=npc_streams(diurnal(10.0, 0.06), accept=acc),
                         start=T0 + 22 * DAY + 12 * H, dur=720, block=1, gmu=0.85,
                         flags="--speculative-algorithm EAGLE --speculative-num-steps 3",
                         spec=dict(k=3, draft_bytes=0.45e9, kind="eagle", draft_fix=0.2e-3), scrape_s=5.0, **QWEN7)
    return node


@healthy("shader_build_other_cores_vllm_l40s", "npc-dialogue", "vllm",
         "A shader build runs on the same host but inside its own cpuset: host CPU% jumps to ~80%, the engine's "
         "cores stay quiet and its latency does not move.")
def _(S):
    node, e = serve_node(S, kind="vllm", board="l40s", streams=npc_streams(diurnal(6.0, 0.05), out=(100, 35)),
                         start=T0 + 27 * DAY + 11 * H, dur=720, cpus=32, cpuset=(4, 5, 6, 7), scrape_s=5.0, **LLAMA8)
    f = win(250, 500, rin=5, rout=5)
    node.host.other_elsewhere = lambda t: 2.0 + 22.0 * f(t)
    return node


@healthy("charlora_8xb200_steady_eval", "character-lora-finetune", "trainer",
         "8x B200 fine-tune at steady state with a short uniform evaluation pass: all ranks alike, NCCL waits "
         "short and even.")
def _(S):
    node, t = train_node(S, n_gpus=8, board="b200", start=T0 + 23 * DAY + 2 * H, dur=720, cpus=224,
                         script="train_fsdp.py", args="--model qwen2.5-14b --fsdp full_shard", t_comp=0.5, t_opt=0.03,
                         batch=4, tokens_per_sample=4096, workers=4, cpu_per_batch=0.1, grad_bytes=14e9,
                         counter="tokens", mem_gib=120, ev_every=400, ev_s=40, ev_at=380, scrape_s=10.0)
    return node


@healthy("pod_quota_steady_sglang_h100", "player-support", "sglang",
         "Support SGLang pod under a 3-core CPU limit that it brushes against at peak: a few percent of periods "
         "throttled all along, latency steady.")
def _(S):
    streams = [Stream(diurnal(7.0, 0.08), prompt=(320, 110), out=(150, 50), personas=2, persona_len=(1800, 2200), tag="support")]
    node, e = serve_node(S, kind="sglang", board="h100sxm", streams=streams, start=T0 + 28 * DAY + 15 * H, dur=720,
                         block=1, gmu=0.85, quota=2.2, cpus=96, cpuset=tuple(range(96)), pod="support/sglang-qwen7b-1",
                         container="containerd:55ad0e61c9f3", scrape_s=5.0, **QWEN7)
    return node


@healthy("texture_sampling_steady_rtx6000", "texture-diffusion-sampling", "none",
         "Concept-art/texture sampling service on an RTX 6000 Ada: continuous sampling jobs, power at the 300 W "
         "limit, clocks a little under max all the time.")
def _(S):
    node, st = service_node(S, board="rtx6000ada", start=T0 + 29 * DAY + 10 * H, dur=660,
                            cmd="/opt/venv/bin/python3 -m texture_sampler --model sdxl-texture-v4 --steps 30", name="python3",
                            user="svc-art", mem_gib=22, load=lambda t: 0.96, profile=work.CONV)
    return node
