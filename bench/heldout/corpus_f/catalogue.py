"""The traces: one function each, (truth fields, Trace).  Windows are seconds from the
trace's start (turned into wall-clock by __init__)."""

from __future__ import annotations

import math

from .frames import Job, Proc, Trace
from .jobs import GiB, engine_job, plain_job, ramp, train_job

CATALOGUE = []


def trace(name, family, cause=None, window=None, culprit=None, note=""):
    def wrap(fn):
        CATALOGUE.append(dict(name=name, family=family, cause=cause, window=window,
                              culprit=culprit, note=note, build=fn))
        return fn
    return wrap


def diurnal(base, amp, period=900.0, phase=0.0):
    return lambda t: base * (1 + amp * math.sin(2 * math.pi * t / period + phase))


def bursty(tr, base, every=45.0, height=3.0, width=8.0):
    starts = [every * k + tr.rng.uniform(-10, 10) for k in range(1, 40)]
    return lambda t: base * (1 + sum(height for s in starts if s <= t < s + width))


def other_process(tr, gpu, mods, pid=30500, name="python3", cmd="python3 -m ipykernel_launcher "
                  "-f /root/.local/share/jupyter/runtime/kernel-7f3e.json", mem=12 * GiB,
                  alive=None, user="alice"):
    job = plain_job(tr, gpus=(gpu,), mods=mods, pid=pid, name=name, cmdline=cmd, user=user,
                    mem=mem)
    job.alive = alive
    return tr.add(job)


# =========================================================== oversized_request
@trace("os_vllm_h100_n8_logprobs", "oversized_request", "oversized_request", (130, 215),
       note="one n=8, logprobs=20 request among ~40 chats: every step carries its sampler work")
def _():
    tr = Trace("os_vllm_h100_n8_logprobs", "H100", 1, 1, 300, cpus=48)
    big = lambda t: ramp(t, 130, 215)
    tr.add(engine_job(tr, "vllm", "qwen7b", rate=lambda t: 3.2, prompt=600, out=220,
                      mods=lambda t: dict(extra_s=0.055 * big(t),
                                          big_done={"n": 8, "max_tokens": 16} if 215 <= t < 216 else None)))
    return tr


@trace("os_sglang_a100_huge_max_tokens_mild", "oversized_request", "oversized_request", (160, 340),
       note="mild: a client's n=4 request with top_logprobs over 32k max_tokens slows each step ~35%")
def _():
    tr = Trace("os_sglang_a100_huge_max_tokens_mild", "A100", 1, 2, 420, cpus=32)
    tr.add(engine_job(tr, "sglang", "llama8b", rate=diurnal(2.5, 0.15, 1200), prompt=900,
                      out=300, mods=lambda t: dict(extra_s=0.011 * ramp(t, 160, 340))))
    return tr


@trace("os_vllm_tp2_l40s_best_of", "oversized_request", "oversized_request", (100, 190),
       note="n=16 with logprobs=5 from a batch evaluator on a TP2 L40S pair")
def _():
    tr = Trace("os_vllm_tp2_l40s_best_of", "L40S", 2, 1, 260, cpus=32)
    tr.add(engine_job(tr, "vllm", "llama8b", gpus=(0, 1), rate=lambda t: 2.0, prompt=700,
                      out=200, max_len=16384, mods=lambda t: dict(
                          extra_s=0.045 * ramp(t, 100, 190),
                          big_done={"n": 16, "max_tokens": 512} if 190 <= t < 191 else None)))
    return tr


@trace("os_llamacpp_a10g_n_probs", "oversized_request", "oversized_request", (120, 260),
       note="llama-server, one slot asks n_probs=200 for every token; tokens counted at finish")
def _():
    tr = Trace("os_llamacpp_a10g_n_probs", "A10G", 1, 2, 360, cpus=8)
    tr.add(engine_job(tr, "llamacpp", "mistral7b_q4", rate=lambda t: 0.35, prompt=500, out=300,
                      slots=4, kv_pool_tokens=16384, graphs=False,
                      mods=lambda t: dict(extra_s=0.03 * ramp(t, 120, 260))))
    return tr


# =========================================================== prefill_interference
@trace("pi_vllm_h200_rag_burst", "prefill_interference", "prefill_interference", (110, 230),
       note="a RAG tenant starts sending 24k-token contexts; decodes share every step with prefill")
def _():
    tr = Trace("pi_vllm_h200_rag_burst", "H200", 1, 1, 320, cpus=64)
    on = lambda t: ramp(t, 110, 230)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 6.0 + 0.6 * on(t), prompt=700,
                      out=260, budget=8192, mods=lambda t: dict(
                          prompt=700 + 2100 * on(t), out=260 - 40 * on(t))))
    return tr


@trace("pi_sglang_h100_tp4_docs_gradual", "prefill_interference", "prefill_interference",
       (150, 420), note="a summarisation batch ramps in over 3 minutes on a TP4 70B")
def _():
    tr = Trace("pi_sglang_h100_tp4_docs_gradual", "H100", 4, 2, 480, cpus=96)
    on = lambda t: ramp(t, 150, 420, rin=180, rout=30)
    tr.add(engine_job(tr, "sglang", "llama70b", gpus=(0, 1, 2, 3), rate=lambda t: 2.0 + 0.3 * on(t),
                      prompt=1200, out=350, mods=lambda t: dict(prompt=1200 + 2500 * on(t))))
    return tr


@trace("pi_vllm_a100_new_request_storm", "prefill_interference", "prefill_interference",
       (95, 170), note="a cron job fires 400 requests of 4k-token prompts at once")
def _():
    tr = Trace("pi_vllm_a100_new_request_storm", "A100", 1, 1, 260, cpus=32)
    on = lambda t: ramp(t, 95, 150)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 3.0 + 1.5 * on(t), prompt=600,
                      out=200, budget=2048, mods=lambda t: dict(prompt=600 + 1500 * on(t), out=200 - 80 * on(t))))
    return tr


@trace("pi_llamacpp_l40s_long_prompts", "prefill_interference", "prefill_interference",
       (100, 250), note="llama-server: 16k-token pastes into a 4-slot server stall the other slots")
def _():
    tr = Trace("pi_llamacpp_l40s_long_prompts", "L40S", 1, 2, 330, cpus=16)
    on = lambda t: ramp(t, 100, 250)
    tr.add(engine_job(tr, "llamacpp", "llama8b_q8", rate=lambda t: 0.5 + 0.1 * on(t), prompt=400,
                      out=300, slots=4, kv_pool_tokens=65536,
                      mods=lambda t: dict(prompt=400 + 7000 * on(t))))
    return tr


# =========================================================== collective_straggler
@trace("cs_ddp_h100x8_rank5_thermal", "collective_straggler", "collective_straggler", (150, 480),
       culprit=(5,), note="DDP 8xH100: GPU 5's fan shroud loose, it heats and clocks down; "
       "the other 7 spin in NCCL all-reduce")
def _():
    tr = Trace("cs_ddp_h100x8_rank5_thermal", "H100", 8, 2, 480, cpus=128)
    tr.board_mods = lambda t: {5: {"cool": 1.0 + 2.2 * ramp(t, 150, 1e9, rin=120)}}
    tr.add(train_job(tr, gpus=tuple(range(8)), params=7e9, tokens_step=8 * 4096 * 4,
                     mem_bytes=71 * GiB, script="pretrain.py"))
    return tr


@trace("cs_vllm_tp4_a100_gpu2_hw_slowdown", "collective_straggler", "collective_straggler",
       (120, 300), culprit=(2,), note="vLLM TP4 70B: GPU 2 enters HW slowdown (clock ~50%)")
def _():
    tr = Trace("cs_vllm_tp4_a100_gpu2_hw_slowdown", "A100", 4, 1, 300, cpus=64)
    tr.board_mods = lambda t: {2: {"clock": 0.5, "reason": ("hw slowdown",)}} if 120 <= t else {}
    tr.add(engine_job(tr, "vllm", "llama70b", gpus=(0, 1, 2, 3), rate=lambda t: 2.2, prompt=800,
                      out=280))
    return tr


@trace("cs_fsdp_h200x4_heavy_shard_mild", "collective_straggler", "collective_straggler",
       (100, 360), culprit=(3,), note="FSDP 4xH200: rank 3 gets the long-sequence bucket "
       "(+30% work); the job's trainer counter exported")
def _():
    tr = Trace("cs_fsdp_h200x4_heavy_shard_mild", "H200", 4, 2, 400, cpus=96)
    job = train_job(tr, gpus=(0, 1, 2, 3), params=13e9, tokens_step=4 * 8192 * 2, style="fsdp",
                    mem_bytes=118 * GiB, counter=True, script="fsdp_train.py",
                    mods=lambda t: dict(slow={3: 1.0 + 0.3 * ramp(t, 100)}))
    job.scrape = True
    tr.add(job)
    return tr


@trace("cs_ddp_b200x8_rank0_extra_work", "collective_straggler", "collective_straggler",
       (140, 300), culprit=(0,), note="rank 0 also computes eval metrics and logs images each step "
       "(+18%); mild")
def _():
    tr = Trace("cs_ddp_b200x8_rank0_extra_work", "B200", 8, 1, 300, cpus=144)
    tr.add(train_job(tr, gpus=tuple(range(8)), params=8e9, tokens_step=8 * 8192 * 4,
                     mem_bytes=150 * GiB, mods=lambda t: dict(slow={0: 1.0 + 0.18 * ramp(t, 140, 300)})))
    return tr


# =========================================================== input_stall
@trace("is_a10g_jpeg_decode_workers", "input_stall", "input_stall", (90, 300),
       note="ResNet fine-tune: switched to the 4k-resolution shard; 3 DataLoader workers on 8 "
       "vCPUs can't decode fast enough; GPU saw-tooth; pinned with --match")
def _():
    tr = Trace("is_a10g_jpeg_decode_workers", "A10G", 1, 1, 300, cpus=8)
    job = train_job(tr, gpus=(0,), params=25e6 * 40, tokens_step=1, mfu=0.3, workers=3,
                    mem_bytes=17 * GiB, prof="infer_cnn", script="finetune.py",
                    mods=lambda t: dict(load_x=0.7 + 1.9 * ramp(t, 90),
                                        loader_cpu=1.6 + 1.35 * ramp(t, 90)))
    job.sim.tokens_step = 64
    tr.add(job)
    tr.pin = job
    tr.other_cpu = 0.4
    return tr


@trace("is_ddp_h100x4_nfs_gradual", "input_stall", "input_stall", (120, 420),
       note="4xH100 DDP reading shards over NFS; the filer slows over minutes; CPUs idle (I/O wait)")
def _():
    tr = Trace("is_ddp_h100x4_nfs_gradual", "H100", 4, 2, 480, cpus=96)
    tr.add(train_job(tr, gpus=(0, 1, 2, 3), params=3e9, tokens_step=4 * 4096 * 8,
                     mem_bytes=62 * GiB, cpu_loader=False, mods=lambda t: dict(load_x=0.5 + 1.6 * ramp(t, 120, 1e9, rin=150),
                                                             loader_cpu=2.0)))
    return tr


@trace("is_l40s_notebook_tokenize_mild", "input_stall", "input_stall", (100, 330),
       note="notebook fine-tune tokenising on the fly in __getitem__; mild: ~25% idle per step")
def _():
    tr = Trace("is_l40s_notebook_tokenize_mild", "L40S", 1, 2, 360, cpus=16)
    tr.add(train_job(tr, gpus=(0,), params=1.1e9, tokens_step=8 * 2048, workers=0,
                     torchrun=False, mem_bytes=38 * GiB, script="-m ipykernel_launcher",
                     mods=lambda t: dict(load_x=0.8 + 0.55 * ramp(t, 100), loader_cpu=0.95)))
    return tr


@trace("is_fsdp_a100x8_cpu_tokenizer", "input_stall", "input_stall", (130, 420),
       note="8xA100 FSDP: a data-mix change puts on-the-fly tokenisation in 4 workers per rank; "
       "loader processes peg the CPUs; trainer counter exported")
def _():
    tr = Trace("is_fsdp_a100x8_cpu_tokenizer", "A100", 8, 2, 460, cpus=64)
    on = lambda t: ramp(t, 130, 1e9, rin=20)
    job = train_job(tr, gpus=tuple(range(8)), params=7e9, tokens_step=8 * 4096 * 2, style="fsdp",
                    mem_bytes=74 * GiB, workers=32, counter=True,
                    mods=lambda t: dict(load_x=0.6 + 1.2 * on(t), loader_cpu=10 + 44 * on(t)))
    job.scrape = True
    tr.add(job)
    return tr


# =========================================================== host_launch_jitter (eBPF)
@trace("hlj_vllm_h100_irq_core_ebpf", "host_launch_jitter", "host_launch_jitter", (120, 270),
       note="eBPF on: the EngineCore thread shares a core with NIC interrupts after a driver "
       "update; launches stall up to ms; the host looks calm")
def _():
    tr = Trace("hlj_vllm_h100_irq_core_ebpf", "H100", 1, 1, 300, cpus=64, ebpf="on")
    on = lambda t: ramp(t, 120, 270)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 5.0, prompt=600, out=240,
                      mods=lambda t: dict(launch_s=0.006 * on(t), jitter_frac=0.06 * on(t),
                                          jitter_ns=600000 * on(t))))
    return tr


@trace("hlj_train_h200_taskset_ebpf", "host_launch_jitter", "host_launch_jitter", (110, 400),
       note="eBPF on: the job is pinned (taskset) to 2 cores shared with a log-compression "
       "sidecar; the launch thread is preempted mid-call, more so over minutes")
def _():
    tr = Trace("hlj_train_h200_taskset_ebpf", "H200", 1, 2, 420, cpus=32, ebpf="on")
    on = lambda t: ramp(t, 110, 1e9, rin=120)
    tr.add(train_job(tr, gpus=(0,), params=0.35e9, tokens_step=8 * 2048, mem_bytes=40 * GiB,
                     torchrun=False, mods=lambda t: dict(launch_s=0.10 * on(t),
                                                         jitter_frac=0.03 * on(t),
                                                         jitter_ns=900000 * on(t))))
    return tr


@trace("hlj_sglang_a100_mild_ebpf", "host_launch_jitter", "host_launch_jitter", (100, 240),
       note="eBPF on: mild: the scheduler thread is preempted now and then (cpuset shared with "
       "a sidecar); ~12% slower steps")
def _():
    tr = Trace("hlj_sglang_a100_mild_ebpf", "A100", 1, 1, 270, cpus=16, ebpf="on")
    on = lambda t: ramp(t, 100, 240)
    tr.add(engine_job(tr, "sglang", "qwen7b", rate=lambda t: 4.0, prompt=500, out=220,
                      mods=lambda t: dict(launch_s=0.0035 * on(t), jitter_frac=0.025 * on(t),
                                          jitter_ns=350000 * on(t))))
    return tr


# =========================================================== host_cpu_contention (no eBPF)
@trace("hcc_vllm_h100_make_j96", "host_cpu_contention", "host_cpu_contention", (120, 300),
       note="someone runs make -j96 on the 32-core serving box; PSI and run queue climb")
def _():
    tr = Trace("hcc_vllm_h100_make_j96", "H100", 1, 1, 300, cpus=32)
    tr.host_mods = lambda t: dict(threads=96 * ramp(t, 120, 300), cores=30 * ramp(t, 120, 300))
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 5.0, prompt=500, out=240,
                      host_ms=2.5))
    return tr


@trace("hcc_llamacpp_a10g_etl_gradual", "host_cpu_contention", "host_cpu_contention", (100, 340),
       note="8-vCPU VM: a co-located ETL job ramps from 2 to 20 busy threads")
def _():
    tr = Trace("hcc_llamacpp_a10g_etl_gradual", "A10G", 1, 2, 360, cpus=8)
    on = lambda t: ramp(t, 100, 1e9, rin=120)
    tr.host_mods = lambda t: dict(threads=18 * on(t), cores=6 * on(t))
    tr.add(engine_job(tr, "llamacpp", "mistral7b_q4", rate=lambda t: 0.45, prompt=400, out=250,
                      slots=4, kv_pool_tokens=16384, graphs=False, host_ms=3.0))
    return tr


@trace("hcc_ddp_a100x2_ffmpeg_pinned", "host_cpu_contention", "host_cpu_contention", (90, 280),
       note="2xA100 DDP pinned with --match; a video-transcode job with 40 threads lands on the "
       "16-core node")
def _():
    tr = Trace("hcc_ddp_a100x2_ffmpeg_pinned", "A100", 2, 1, 300, cpus=16)
    tr.host_mods = lambda t: dict(threads=40 * ramp(t, 90, 280), cores=12 * ramp(t, 90, 280))
    job = train_job(tr, gpus=(0, 1), params=1.3e9, tokens_step=2 * 8 * 2048, mem_bytes=52 * GiB,
                    workers=4, mods=lambda t: dict(load_x=0.75, loader_cpu=3.6))
    tr.add(job)
    tr.pin = job
    return tr


@trace("hcc_sglang_h200_tp2_noisy_pods", "host_cpu_contention", "host_cpu_contention", (150, 330),
       note="k8s node: batch pods without CPU limits take the node; SGLang TP2's schedulers lose CPU")
def _():
    tr = Trace("hcc_sglang_h200_tp2_noisy_pods", "H200", 2, 2, 400, cpus=64)
    on = lambda t: ramp(t, 150, 330, rin=20)
    tr.host_mods = lambda t: dict(threads=150 * on(t), cores=58 * on(t))
    tr.add(engine_job(tr, "sglang", "qwen32b", gpus=(0, 1), rate=lambda t: 3.0, prompt=800,
                      out=260, pod="llm/sglang-qwen32b-7c9f", host_ms=2.0))
    return tr


# =========================================================== tiny_kernels
@trace("tk_a10g_notebook_token_loop", "tiny_kernels", "tiny_kernels", (100, 300),
       note="notebook: a hand-written per-token generate loop, batch 1, eager: GPU-Util ~90%, "
       "power near idle; no GPM on A10G")
def _():
    tr = Trace("tk_a10g_notebook_token_loop", "A10G", 1, 1, 300, cpus=8)
    on = lambda t: ramp(t, 100, 300)

    def mods(t):
        if on(t):
            return dict(busy=0.9, prof="tiny", period=0.004, cpu=1.0, mem=9 * GiB)
        return dict(busy=0.95, prof="train", period=0.3, cpu=0.9, mem=14 * GiB)
    tr.add(plain_job(tr, mods=mods, name="python3", user="bob",
                     cmdline="/opt/conda/bin/python -m ipykernel_launcher -f "
                     "/home/bob/.local/share/jupyter/runtime/kernel-21.json"))
    return tr


@trace("tk_h100_tiny_batch_restart", "tiny_kernels", "tiny_kernels", (95, 360),
       note="trainer restarted with batch 2 for a debugging run and forgot to switch back; "
       "GPU-Util 90+%, SM ~8%, 160 W")
def _():
    tr = Trace("tk_h100_tiny_batch_restart", "H100", 1, 2, 360, cpus=32)
    on = lambda t: ramp(t, 95)
    job = train_job(tr, gpus=(0,), params=0.35e9, tokens_step=64 * 1024, mem_bytes=30 * GiB,
                    torchrun=False, counter=True,
                    mods=lambda t: dict(batch_scale=0.04, tiny=0.15) if on(t) else {})
    job.scrape = True
    job.alive = lambda t: not (88 <= t < 95)
    tr.add(job)
    return tr


@trace("tk_h200_graph_replay_small_ops", "tiny_kernels", "tiny_kernels", (90, 240),
       note="a CUDA-graph'd control loop replaying one-element kernels (like the real H200 "
       "check): 100% GPU-Util, SM 0.3%")
def _():
    tr = Trace("tk_h200_graph_replay_small_ops", "H200", 1, 1, 240, cpus=32)

    def mods(t):
        if t >= 90:
            return dict(busy=1.0, prof="tiny", period=0.002, bound=0.0, cpu=1.0, mem=6 * GiB)
        return dict(busy=0.97, prof="stencil", period=0.02, cpu=1.0, mem=40 * GiB)
    tr.add(plain_job(tr, mods=mods, name="mpc_ctrl", cmdline="./build/mpc_ctrl --horizon 64 "
                     "--graphs", user="ctrl"))
    return tr


@trace("tk_b200_rl_env_eager", "tiny_kernels", "tiny_kernels", (120, 400),
       note="RL fine-tune: the rollout phase steps a vectorised env with thousands of tiny eager "
       "ops, gradually taking over the step")
def _():
    tr = Trace("tk_b200_rl_env_eager", "B200", 1, 2, 420, cpus=64)
    on = lambda t: ramp(t, 120, 1e9, rin=100)
    tr.add(train_job(tr, gpus=(0,), params=1.5e9, tokens_step=32 * 2048, mem_bytes=90 * GiB,
                     torchrun=False, mods=lambda t: dict(tiny=1.4 * on(t), batch_scale=1.0)))
    return tr


# =========================================================== memory_bandwidth
@trace("mb_vllm_h100_context_growth", "memory_bandwidth", "memory_bandwidth", (120, 420),
       note="long agent sessions: contexts grow from 2k to ~12k tokens; KV streaming dominates "
       "each decode step")
def _():
    tr = Trace("mb_vllm_h100_context_growth", "H100", 1, 2, 440, cpus=48)
    on = lambda t: ramp(t, 120, 1e9, rin=200)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 1.6, prompt=2000, out=500,
                      max_seqs=256, mods=lambda t: dict(prompt=2000 + 10000 * on(t), hit=0.9 * on(t))))
    return tr


@trace("mb_sglang_h200_big_batch", "memory_bandwidth", "memory_bandwidth", (110, 300),
       note="an offline job joins: ~150 concurrent 6k-token decodes on a 7B; DRAM near its limit, "
       "tokens/s flat while ITL climbs")
def _():
    tr = Trace("mb_sglang_h200_big_batch", "H200", 1, 1, 300, cpus=64)
    on = lambda t: ramp(t, 110, 1e9, rin=40)
    tr.add(engine_job(tr, "sglang", "qwen7b", rate=lambda t: 3.0 + 6.0 * on(t), prompt=1500,
                      max_seqs=1024,
                      out=500, mods=lambda t: dict(prompt=1500 + 4500 * on(t), out=500 + 100 * on(t),
                                                   hit=0.85 * on(t))))
    return tr


@trace("mb_vllm_a100_tp2_long_docs_nogpm", "memory_bandwidth", "memory_bandwidth", (130, 330),
       note="A100 TP2 (no GPM): long-document Q&A sessions; only NVML memory util and ITL show it")
def _():
    tr = Trace("mb_vllm_a100_tp2_long_docs_nogpm", "A100", 2, 2, 360, cpus=64)
    on = lambda t: ramp(t, 130, 1e9, rin=90)
    tr.add(engine_job(tr, "vllm", "qwen32b", gpus=(0, 1), rate=lambda t: 0.6, prompt=1500,
                      out=500, mods=lambda t: dict(prompt=1500 + 8000 * on(t), hit=0.85 * on(t))))
    return tr


@trace("mb_llamacpp_l40s_full_context", "memory_bandwidth", "memory_bandwidth", (100, 330),
       note="llama-server -c 131072 -np 4: chats fill their 32k slots; each token streams the "
       "whole KV over GDDR6")
def _():
    tr = Trace("mb_llamacpp_l40s_full_context", "L40S", 1, 2, 360, cpus=16)
    on = lambda t: ramp(t, 100, 1e9, rin=120)
    tr.add(engine_job(tr, "llamacpp", "llama8b_q8", rate=lambda t: 0.15, prompt=1000, out=400,
                      slots=4, kv_pool_tokens=131072,
                      mods=lambda t: dict(prompt=1000 + 26000 * on(t), hit=0.95 * on(t))))
    return tr


# =========================================================== throttling
@trace("th_vllm_h100_thermal_ramp", "throttling", "throttling", (130, 420),
       note="CRAC failure: inlet climbs; GPU reaches its slowdown temperature and SW thermal "
       "slowdown takes clocks down over minutes")
def _():
    tr = Trace("th_vllm_h100_thermal_ramp", "H100", 1, 2, 440, cpus=48)
    tr.board_mods = lambda t: {0: {"cool": 1.0 + 2.6 * ramp(t, 130, 1e9, rin=150)}}
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 9.0, prompt=1500, out=300,
                      budget=8192))
    return tr


@trace("th_a100_train_power_brake", "throttling", "throttling", (150, 270),
       note="rack PSU event asserts the power brake: clocks forced to ~35% for two minutes")
def _():
    tr = Trace("th_a100_train_power_brake", "A100", 1, 1, 330, cpus=32)
    tr.board_mods = lambda t: ({0: {"clock": 0.35, "reason": ("hw slowdown", "power brake")}}
                               if 150 <= t < 270 else {})
    tr.add(train_job(tr, gpus=(0,), params=1.3e9, tokens_step=16 * 2048, mem_bytes=70 * GiB,
                     torchrun=False))
    return tr


@trace("th_l40s_power_limit_lowered", "throttling", "throttling", (120, 360),
       note="an admin script sets nvidia-smi -pl 150 on the L40S; prefill-heavy SGLang slows")
def _():
    tr = Trace("th_l40s_power_limit_lowered", "L40S", 1, 2, 360, cpus=32)
    tr.board_mods = lambda t: {0: {"limit": 150.0 if t >= 120 else 350.0}}
    tr.add(engine_job(tr, "sglang", "llama8b", rate=lambda t: 2.2, prompt=1500, out=200))
    return tr


@trace("th_b200_hw_slowdown_mild", "throttling", "throttling", (100, 240),
       note="B200: HW slowdown at ~80% clock (a flaky power sensor); mild")
def _():
    tr = Trace("th_b200_hw_slowdown_mild", "B200", 1, 1, 270, cpus=64)
    tr.board_mods = lambda t: ({0: {"clock": 0.78, "reason": ("hw slowdown",)}}
                               if 100 <= t < 240 else {})
    tr.add(engine_job(tr, "vllm", "qwen32b", rate=lambda t: 6.0, prompt=1200, out=300))
    return tr


# =========================================================== kv_pressure
@trace("kv_vllm_a10g_small_pool", "kv_pressure", "kv_pressure", (110, 300),
       note="3B on an A10G at gpu_memory_utilization 0.80: evening traffic with longer answers "
       "fills the pool; preemptions and a queue")
def _():
    tr = Trace("kv_vllm_a10g_small_pool", "A10G", 1, 1, 300, cpus=8)
    on = lambda t: ramp(t, 110, 1e9, rin=30)
    tr.add(engine_job(tr, "vllm", "llama3b", gmu=0.8, rate=lambda t: 2.0 + 2.0 * on(t), prompt=900,
                      out=300, max_len=8192, mods=lambda t: dict(out=300 + 900 * on(t))))
    return tr


@trace("kv_sglang_h100_reasoning_retract", "kv_pressure", "kv_pressure", (150, 420),
       note="a reasoning model's 6k-token answers: SGLang retracts requests, the queue grows")
def _():
    tr = Trace("kv_sglang_h100_reasoning_retract", "H100", 1, 2, 450, cpus=48)
    on = lambda t: ramp(t, 150, 1e9, rin=60)
    tr.add(engine_job(tr, "sglang", "r1q14b", gmu=0.85, rate=lambda t: 1.5 + 1.5 * on(t),
                      prompt=800, out=900, mods=lambda t: dict(out=900 + 5500 * on(t))))
    return tr


@trace("kv_vllm_l40s_tp2_gradual_mild", "kv_pressure", "kv_pressure", (150, 420),
       note="mild: concurrency creeps up over the afternoon until the pool runs out now and then")
def _():
    tr = Trace("kv_vllm_l40s_tp2_gradual_mild", "L40S", 2, 2, 450, cpus=32)
    tr.add(engine_job(tr, "vllm", "r1q14b", gpus=(0, 1), gmu=0.9,
                      rate=lambda t: 1.0 + 1.5 * ramp(t, 90, 1e9, rin=240) + 0.25 * math.sin(t / 23), prompt=1800, out=700,
                      max_len=32768))
    return tr


# =========================================================== gpu_shared
@trace("gs_vllm_h100_jupyter_neighbour", "gpu_shared", "gpu_shared", (120, 290),
       note="a data scientist's notebook starts training on the serving GPU (CUDA_VISIBLE_DEVICES "
       "unset); time-slicing halves the engine's share")
def _():
    tr = Trace("gs_vllm_h100_jupyter_neighbour", "H100", 1, 1, 300, cpus=48)
    tr.add(engine_job(tr, "vllm", "llama8b", gmu=0.75, rate=lambda t: 5.0, prompt=600, out=240,
                      mods=lambda t: dict(share={0: 0.45 * ramp(t, 120, 290)})))
    other_process(tr, 0, lambda t: dict(busy=0.45, prof="train", period=0.2, cpu=1.0,
                                        mem=14 * GiB), alive=lambda t: 120 <= t < 290)
    return tr


@trace("gs_a100_train_second_job", "gpu_shared", "gpu_shared", (100, 330),
       note="the scheduler places a second user's job on the same A100; both run at ~half speed")
def _():
    tr = Trace("gs_a100_train_second_job", "A100", 1, 2, 360, cpus=32)
    tr.add(train_job(tr, gpus=(0,), params=1.3e9, tokens_step=16 * 2048, mem_bytes=44 * GiB,
                     torchrun=False, mods=lambda t: dict(share={0: 0.5 * ramp(t, 100)})))
    other_process(tr, 0, lambda t: dict(busy=0.5, prof="train", period=0.3, cpu=1.0, mem=30 * GiB),
                  pid=41200, cmd="/usr/bin/python3 -u sweep.py --trial 17", user="carol",
                  alive=lambda t: t >= 100)
    return tr


@trace("gs_llamacpp_l40s_comfyui_mild", "gpu_shared", "gpu_shared", (100, 300),
       note="mild: a ComfyUI image pipeline on the same L40S takes ~25% of the SMs in bursts")
def _():
    tr = Trace("gs_llamacpp_l40s_comfyui_mild", "L40S", 1, 2, 330, cpus=16)
    tr.add(engine_job(tr, "llamacpp", "llama8b_q8", rate=lambda t: 0.5, prompt=500, out=300,
                      slots=4, kv_pool_tokens=32768, mods=lambda t: dict(share={0: 0.25 * ramp(t, 100, 300)})))
    other_process(tr, 0, lambda t: dict(busy=0.28, prof="infer_cnn", period=1.5, cpu=0.8,
                                        mem=11 * GiB), pid=5120, name="python",
                  cmd="python main.py --listen 0.0.0.0 --port 8188", user="art",
                  alive=lambda t: 100 <= t < 300)
    return tr


@trace("gs_sglang_h200_tp2_gpu1_intruder", "gpu_shared", "gpu_shared", (140, 330), culprit=(1,),
       note="SGLang TP2: an embedding-batch process lands on GPU 1 only; rank 1 slows, rank 0 waits")
def _():
    tr = Trace("gs_sglang_h200_tp2_gpu1_intruder", "H200", 2, 2, 380, cpus=64)
    tr.add(engine_job(tr, "sglang", "qwen32b", gpus=(0, 1), gmu=0.8, rate=lambda t: 3.0,
                      prompt=700, out=250, mods=lambda t: dict(share={1: 0.4 * ramp(t, 140, 330)})))
    other_process(tr, 1, lambda t: dict(busy=0.4, prof="gemm", period=0.5, cpu=1.0, mem=20 * GiB),
                  pid=61800, cmd="python3 embed_corpus.py --batch 512", user="etl",
                  alive=lambda t: 140 <= t < 330)
    return tr


# =========================================================== spec_decode_rejected
@trace("sd_vllm_h100_ngram_chat_shift", "spec_decode_rejected", "spec_decode_rejected", (120, 300),
       note="ngram speculation (k=4) tuned on code edits; traffic shifts to free-form chat and "
       "acceptance drops from 0.7 to 0.1")
def _():
    tr = Trace("sd_vllm_h100_ngram_chat_shift", "H100", 1, 1, 300, cpus=48)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 6.0, prompt=900, out=300, spec_k=4,
                      accept=0.7, max_seqs=24,
                      mods=lambda t: dict(accept=0.7 - 0.6 * ramp(t, 120, 1e9, rin=15))))
    return tr


@trace("sd_sglang_h200_eagle_drift", "spec_decode_rejected", "spec_decode_rejected", (130, 440),
       note="EAGLE drafts after the target was swapped for a fine-tune; acceptance decays gradually")
def _():
    tr = Trace("sd_sglang_h200_eagle_drift", "H200", 1, 2, 460, cpus=64)
    tr.add(engine_job(tr, "sglang", "llama8b", rate=lambda t: 5.0, prompt=700, out=300, spec_k=3,
                      accept=0.75, max_seqs=48,
                      mods=lambda t: dict(accept=0.75 - 0.6 * ramp(t, 130, 1e9, rin=200))))
    return tr


@trace("sd_llamacpp_a10g_draft_model", "spec_decode_rejected", "spec_decode_rejected", (110, 330),
       note="llama-server with a 0.5B draft model: a new user population writes in Thai; drafts "
       "mostly rejected (counters move at request finish)")
def _():
    tr = Trace("sd_llamacpp_a10g_draft_model", "A10G", 1, 2, 360, cpus=8)
    tr.add(engine_job(tr, "llamacpp", "mistral7b_q4", rate=lambda t: 0.5, prompt=300, out=250,
                      slots=2, kv_pool_tokens=8192, spec_k=8, accept=0.65, graphs=False,
                      mods=lambda t: dict(accept=0.65 - 0.55 * ramp(t, 110, 1e9, rin=20))))
    return tr


# =========================================================== healthy look-alikes
@trace("h_vllm_h100_diurnal_fall", "healthy_traffic")
def _():
    tr = Trace("h_vllm_h100_diurnal_fall", "H100", 1, 2, 480, cpus=48)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 7.0 * (1 - 0.75 * ramp(t, 120, 1e9, rin=300)),
                      prompt=700, out=250))
    return tr


@trace("h_vllm_h200_bursty_arrivals", "healthy_traffic")
def _():
    tr = Trace("h_vllm_h200_bursty_arrivals", "H200", 1, 1, 300, cpus=64)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=bursty(tr, 3.0, every=40, height=3.0, width=6),
                      prompt=800, out=220))
    return tr


@trace("h_sglang_h100_tp2_restart", "healthy_lifecycle",
       note="engine restarted for a config change: processes exit, endpoint refuses, reload")
def _():
    tr = Trace("h_sglang_h100_tp2_restart", "H100", 2, 1, 330, cpus=64)
    job = engine_job(tr, "sglang", "qwen32b", gpus=(0, 1), rate=lambda t: 3.0, prompt=700, out=250,
                     mods=lambda t: dict(rate=0.0) if 140 <= t < 200 else {})
    job.alive = lambda t: not (140 <= t < 165)
    tr.engine_down = lambda t: "engine unreachable: <urlopen error [Errno 111] Connection refused> (retry in 8s)" \
        if 140 <= t < 200 else None
    tr.add(job)
    return tr


@trace("h_ddp_h100x8_checkpoint", "healthy_training",
       note="rank 0 writes a checkpoint for ~20 s every 4 min; the other ranks wait in NCCL")
def _():
    tr = Trace("h_ddp_h100x8_checkpoint", "H100", 8, 2, 480, cpus=128)

    def mods(t):
        for s in (110, 350):
            if s <= t < s + 20:
                return dict(pause=("rank0", 1.0))
        return {}
    tr.add(train_job(tr, gpus=tuple(range(8)), params=7e9, tokens_step=8 * 4096 * 4,
                     mem_bytes=71 * GiB, mods=mods, script="pretrain.py"))
    return tr


@trace("h_fsdp_a100x4_eval_pass", "healthy_training",
       note="a 60 s eval pass every few hundred steps: forward only, the token counter pauses")
def _():
    tr = Trace("h_fsdp_a100x4_eval_pass", "A100", 4, 2, 420, cpus=64)
    job = train_job(tr, gpus=(0, 1, 2, 3), params=3e9, tokens_step=4 * 4096 * 4, style="fsdp",
                    mem_bytes=66 * GiB, counter=True,
                    mods=lambda t: dict(eval=True, load_x=1.15) if 180 <= t < 240 else {})
    job.scrape = True
    tr.add(job)
    return tr


@trace("h_h200_compile_warmup", "healthy_training",
       note="torch.compile warm-up: a minute of spiky GPU use and busy compile workers, then steady")
def _():
    tr = Trace("h_h200_compile_warmup", "H200", 1, 1, 300, cpus=32)
    warm = lambda t: t < 75
    tr.add(train_job(tr, gpus=(0,), params=1.5e9, tokens_step=16 * 2048, mem_bytes=72 * GiB,
                     torchrun=False, mods=lambda t: dict(load_s=2.5 * (1 - t / 80), loader_cpu=12)
                     if warm(t) else {}))
    tr.host_mods = lambda t: dict(threads=10 if warm(t) else 0, cores=10 if warm(t) else 0)
    return tr


@trace("h_vllm_a100_rag_long_prompts_steady", "healthy_traffic",
       note="a RAG service whose prompts are always ~7k tokens: prefill-heavy from the start, steady")
def _():
    tr = Trace("h_vllm_a100_rag_long_prompts_steady", "A100", 1, 2, 400, cpus=32)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=diurnal(0.6, 0.1, 1500), prompt=7000, out=180,
                      budget=8192))
    return tr


@trace("h_b200_gemm_bench_finishes", "healthy_lifecycle",
       note="a cuBLAS benchmark runs at the power cap, then finishes; the process exits")
def _():
    tr = Trace("h_b200_gemm_bench_finishes", "B200", 1, 1, 280, cpus=64)
    job = plain_job(tr, mods=lambda t: dict(busy=0.99, prof="gemm", period=0.01, bound=1.0,
                                            mem=60 * GiB), name="gemm_bench",
                    cmdline="./gemm_bench --m 16384 --n 16384 --k 16384 --iters 40000", user="qa")
    job.alive = lambda t: t < 200
    tr.add(job)
    return tr


@trace("h_vllm_l40s_prefix_cache_hits", "healthy_traffic",
       note="agent traffic reusing a 6k-token system prompt: 85% of prompt tokens from the cache")
def _():
    tr = Trace("h_vllm_l40s_prefix_cache_hits", "L40S", 1, 1, 300, cpus=32)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=bursty(tr, 0.8, every=60, height=1.5, width=15),
                      prompt=6500, out=200, hit=0.85, max_len=16384))
    return tr


@trace("h_vllm_h100_second_small_process", "healthy_shared",
       note="a small embedding server shares the GPU: 3 GiB, rare short bursts")
def _():
    tr = Trace("h_vllm_h100_second_small_process", "H100", 1, 2, 400, cpus=48)
    tr.add(engine_job(tr, "vllm", "llama8b", gmu=0.85, rate=diurnal(4.0, 0.2, 1800), prompt=600,
                      out=240))
    other_process(tr, 0, lambda t: dict(busy=0.04 if int(t) % 60 < 4 else 0.003, prof="infer_cnn",
                                        period=0.1, cpu=0.1, mem=3 * GiB), pid=7300, name="python3",
                  cmd="python3 -m infinity_emb v2 --model-id BAAI/bge-small-en-v1.5", user="svc")
    return tr


@trace("h_vllm_h100_tp4_ranks_differ", "healthy_multi_gpu",
       note="TP4: one board runs 4 C warmer and a little slower; within noise of serving")
def _():
    tr = Trace("h_vllm_h100_tp4_ranks_differ", "H100", 4, 1, 300, cpus=96)
    tr.board_mods = lambda t: {3: {"cool": 1.12}}
    tr.add(engine_job(tr, "vllm", "llama70b", gpus=(0, 1, 2, 3), rate=diurnal(2.5, 0.15, 600),
                      prompt=800, out=260, mods=lambda t: dict(slow={3: 1.03})))
    return tr


@trace("h_a100_train_power_capped", "healthy_power",
       note="the site caps A100s at 300 W: 'power cap' is set the whole time, clocks steady")
def _():
    tr = Trace("h_a100_train_power_capped", "A100", 1, 2, 360, cpus=32, power_limit=300.0)
    tr.add(train_job(tr, gpus=(0,), params=1.3e9, tokens_step=16 * 2048, mem_bytes=60 * GiB,
                     torchrun=False))
    return tr


@trace("h_llamacpp_a10g_quiet_chat", "healthy_traffic",
       note="a team's llama-server: a few chats, tokens counted at each request's finish")
def _():
    tr = Trace("h_llamacpp_a10g_quiet_chat", "A10G", 1, 2, 400, cpus=8)
    tr.add(engine_job(tr, "llamacpp", "mistral7b_q4", rate=bursty(tr, 0.12, every=70, height=2, width=20),
                      prompt=600, out=350, slots=4, kv_pool_tokens=16384, graphs=False))
    return tr


@trace("h_sglang_old_release_varying", "healthy_traffic",
       note="an older SGLang without realtime counters: tokens counted at finish; traffic varies")
def _():
    tr = Trace("h_sglang_old_release_varying", "A100", 1, 1, 300, cpus=32)
    tr.add(engine_job(tr, "sglang", "qwen7b", realtime=False,
                      rate=diurnal(3.5, 0.35, 400), prompt=700, out=260))
    return tr


@trace("h_h100_stencil_memory_bound", "healthy_cuda",
       note="an MPI CFD stencil: DRAM ~86% by design, steady; it is what the code does")
def _():
    tr = Trace("h_h100_stencil_memory_bound", "H100", 1, 1, 300, cpus=32)
    tr.add(plain_job(tr, mods=lambda t: dict(busy=0.97, prof="stencil", period=0.03, bound=0.1,
                                             mem=62 * GiB), name="lbm3d",
                     cmdline="mpirun -np 1 ./lbm3d -n 1024 -steps 200000"))
    return tr


@trace("h_l40s_notebook_interactive", "healthy_notebook",
       note="interactive notebook: a cell runs for 20-40 s, then the user reads for a while")
def _():
    tr = Trace("h_l40s_notebook_interactive", "L40S", 1, 1, 360, cpus=16)
    cells = [(30, 55), (95, 130), (170, 190), (230, 270), (310, 330)]

    def mods(t):
        on = any(a <= t < b for a, b in cells)
        return dict(busy=0.93 if on else 0.0, prof="eager", period=0.2, cpu=1.0 if on else 0.05,
                    mem=21 * GiB)
    tr.add(plain_job(tr, mods=mods, name="python", user="dana",
                     cmdline="/opt/conda/bin/python -m ipykernel_launcher -f kernel-3.json"))
    return tr


@trace("h_vllm_h200_morning_ramp_ebpf", "healthy_traffic",
       note="eBPF on, healthy: launch latencies stay in microseconds while traffic ramps up")
def _():
    tr = Trace("h_vllm_h200_morning_ramp_ebpf", "H200", 1, 2, 420, cpus=64, ebpf="on")
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 1.5 + 5.0 * ramp(t, 90, 1e9, rin=240),
                      prompt=700, out=240))
    return tr


@trace("h_ddp_a10g_x2_warm_boards", "healthy_training",
       note="2xA10G DDP: boards settle at 80 C, below slowdown; steady")
def _():
    tr = Trace("h_ddp_a10g_x2_warm_boards", "A10G", 2, 2, 360, cpus=16, inlet=34.0)
    tr.add(train_job(tr, gpus=(0, 1), params=0.35e9, tokens_step=2 * 8 * 1024, mem_bytes=20 * GiB,
                     workers=4))
    return tr


@trace("h_vllm_b200_tp8_diurnal_rise", "healthy_traffic",
       note="TP8 70B on B200s, traffic rising through the morning")
def _():
    tr = Trace("h_vllm_b200_tp8_diurnal_rise", "B200", 8, 2, 420, cpus=192)
    tr.add(engine_job(tr, "vllm", "llama70b", gpus=tuple(range(8)),
                      rate=lambda t: 3.0 + 6.0 * ramp(t, 60, 1e9, rin=330), prompt=900, out=280,
                      mfu=True))
    return tr


@trace("h_h100_train_seqlen_buckets", "healthy_training",
       note="step time swings with sequence-length buckets; the token counter rate follows")
def _():
    tr = Trace("h_h100_train_seqlen_buckets", "H100", 1, 1, 300, cpus=32)
    job = train_job(tr, gpus=(0,), params=1.3e9, tokens_step=16 * 2048, mem_bytes=64 * GiB,
                    torchrun=False, counter=True,
                    mods=lambda t: dict(batch_scale=1.0 + 0.35 * math.sin(t / 17.0)))
    job.scrape = True
    tr.add(job)
    return tr


@trace("h_sglang_a100_spec_healthy", "healthy_traffic",
       note="EAGLE speculation with acceptance wandering between 0.6 and 0.75")
def _():
    tr = Trace("h_sglang_a100_spec_healthy", "A100", 1, 1, 300, cpus=32)
    tr.add(engine_job(tr, "sglang", "llama8b", rate=diurnal(4.0, 0.2, 500), prompt=700, out=280,
                      spec_k=3, accept=0.7, max_seqs=48,
                      mods=lambda t: dict(accept=0.68 + 0.07 * math.sin(t / 40))))
    return tr


@trace("h_vllm_h100_kv_high_no_preempt", "healthy_traffic",
       note="KV usage sits at ~85% at peak, the pool never runs out")
def _():
    tr = Trace("h_vllm_h100_kv_high_no_preempt", "H100", 1, 2, 400, cpus=48)
    tr.add(engine_job(tr, "vllm", "llama8b", gmu=0.5, rate=diurnal(5.7, 0.25, 800), prompt=1500,
                      out=500))
    return tr


@trace("h_mixed_box_h100x8_serve_and_train", "healthy_mixed",
       note="GPUs 0-3: vLLM TP4 serving; GPUs 4-7: a DDP fine-tune; both healthy")
def _():
    tr = Trace("h_mixed_box_h100x8_serve_and_train", "H100", 8, 2, 400, cpus=128)
    tr.add(engine_job(tr, "vllm", "llama70b", gpus=(0, 1, 2, 3), rate=diurnal(2.0, 0.2, 900),
                      prompt=800, out=260))
    tr.add(train_job(tr, gpus=(4, 5, 6, 7), params=3e9, tokens_step=4 * 4096 * 4,
                     mem_bytes=64 * GiB, pid=22100, user="ft"))
    return tr


@trace("h_vllm_h200_cpu_busy_not_contended", "healthy_host",
       note="128-core host: an analytics job uses 70 cores; no run-queue pressure, serving unaffected")
def _():
    tr = Trace("h_vllm_h200_cpu_busy_not_contended", "H200", 1, 1, 300, cpus=128)
    tr.host_mods = lambda t: dict(threads=70 * ramp(t, 100), cores=70 * ramp(t, 100))
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 5.0, prompt=600, out=250))
    return tr


@trace("h_vllm_a100_nightly_batch_load", "healthy_traffic",
       note="a nightly batch-generation job raises load 4x: more tokens/s, a bit higher ITL, "
       "no queue")
def _():
    tr = Trace("h_vllm_a100_nightly_batch_load", "A100", 1, 2, 420, cpus=32)
    tr.add(engine_job(tr, "vllm", "llama8b", rate=lambda t: 2.0 + 6.0 * ramp(t, 150, 1e9, rin=30),
                      prompt=500, out=300))
    return tr


@trace("h_ddp_h200x2_ebpf_denied", "healthy_training",
       note="asked for --ebpf without root: the eBPF source says why; training is steady")
def _():
    tr = Trace("h_ddp_h200x2_ebpf_denied", "H200", 2, 1, 240, cpus=32, ebpf="denied")
    job = train_job(tr, gpus=(0, 1), params=3e9, tokens_step=2 * 4096 * 8, mem_bytes=90 * GiB)
    tr.add(job)
    tr.pin = job
    return tr


@trace("h_llamacpp_l40s_docs_normal", "healthy_traffic",
       note="llama-server for document Q&A: 12k-token prompts are the workload, from the start")
def _():
    tr = Trace("h_llamacpp_l40s_docs_normal", "L40S", 1, 2, 400, cpus=16)
    tr.add(engine_job(tr, "llamacpp", "llama8b_q8", rate=diurnal(0.08, 0.2, 900), prompt=12000,
                      out=250, slots=2, kv_pool_tokens=32768))
    return tr


@trace("h_vllm_h100_tp2_deploy_warmup", "healthy_lifecycle",
       note="a new deployment: processes appear, weights load and graphs are captured while the "
       "endpoint refuses, then the load balancer ramps traffic in")
def _():
    tr = Trace("h_vllm_h100_tp2_deploy_warmup", "H100", 2, 1, 330, cpus=64)
    job = engine_job(tr, "vllm", "qwen32b", gpus=(0, 1),
                     rate=lambda t: 4.0 * ramp(t, 100, 1e9, rin=150), prompt=700, out=250)
    job.alive = lambda t: t >= 30
    tr.engine_down = lambda t: ("engine unreachable: <urlopen error [Errno 111] Connection "
                                "refused> (retry in 4s)") if t < 95 else None
    tr.add(job)
    return tr
