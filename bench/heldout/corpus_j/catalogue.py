"""The traces of corpus J: a platform team's mixed fleet (one line of README per entry).

Job keys (serve): engine, model, gpus, rate (req/s), prompt_med/out_med (tokens, lognormal),
prefix_hit, max_seqs, budget (tokens per step), pool_tokens, spec {k, accept}, graphs,
realtime (SGLang's per-step counters), big (an oversized request), config (model config found).
Job keys (train): gpus, t_compute (s/step at full clock), alpha (clock-bound share), t_comm,
eff {sm, tensor, dram}, batch, loader_cap (samples/s), phases [(t0, t1, name)], accum, mem_gb.
Knobs (events): rate, prompt, out, hit, accept, extra_step, host_delay, tiny, shard<g>, link<g>,
amb<g>, cap/cap<g>, brake<g>, hwslow<g>, input, slice (another process), cpu_hog (cores),
down (engine restart), warmup.
"""

from __future__ import annotations

from .common import Ev
from .serve import (GGUF8B, GGUF14B, LLAMA8B, LLAMA70B, MISTRAL24B, QWEN3_30B, QWEN7B, QWEN32B,
                    Model)
from .trace import big_events


LLAMA70B_FP8 = Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6e9, 80, 8, 128, 8192, 1.0)
LLAMA70B_AWQ = Model("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", 70.6e9, 80, 8, 128, 8192, 0.55)


def V(model, gpus=(0,), **kw):
    return dict(type="serve", engine="vllm", model=model, gpus=list(gpus), **kw)


def S(model, gpus=(0,), **kw):
    return dict(type="serve", engine="sglang", model=model, gpus=list(gpus), **kw)


def L(model, gpus=(0,), **kw):
    return dict(type="serve", engine="llamacpp", model=model, gpus=list(gpus), host_s=0.0009, **kw)


def T(gpus=(0,), **kw):
    return dict(type="train", gpus=list(gpus), **kw)


def O(gpus=(0,), **kw):
    return dict(type="other", gpus=list(gpus), **kw)


def tr(name, family, cause, gpu, jobs, n=1, tick=1, dur=300, window=None, culprit=None,
       events=(), note="", **kw):
    return dict(name=name, family=family, cause=cause, gpu=gpu, jobs=jobs, n=n, tick=tick,
                dur=dur, window=window, culprit=culprit, events=list(events), note=note, **kw)


DDP = dict(t_compute=0.42, alpha=0.8, eff={"sm": 0.93, "tensor": 0.62, "dram": 0.3},
           cmd="torchrun --nproc-per-node 8 train.py --config cfg/llama_ft.yaml", mem_gb=62)
FT = dict(t_compute=0.3, alpha=0.78, eff={"sm": 0.9, "tensor": 0.55, "dram": 0.32},
          cmd="python finetune.py --model Qwen2.5-7B --lora", mem_gb=38, batch=16,
          tokens_per_sample=2048)
CNN = dict(t_compute=0.18, alpha=0.7, eff={"sm": 0.88, "tensor": 0.4, "dram": 0.45},
           cmd="python train_resnet.py --data /data/imagenet --workers 8", mem_gb=14, batch=256)
SIM = dict(t_compute=0.05, alpha=0.35, eff={"sm": 0.9, "tensor": 0.0, "dram": 0.7},
           proc="lbm_solver", cmd="./lbm_solver --grid 1024 --steps 1000000", mem_gb=20,
           kernels_per_step=40, host_s=0.0002)

PATHOLOGY = [
    # ---------------------------------------------------------------- oversized_request
    tr("os_vllm_h100_n8_logprobs", "vllm", "oversized_request", "H100",
       [V(LLAMA8B, rate=4.0, prompt_med=700, out_med=220, proc_util=True,
          big=dict(t=100, n=8, max_tokens=4096, prompt=520))],
       dur=300, window=(100, 190), events=big_events(100, 190, 0.016, 0.9), proc_util=True,
       note="one n=8 logprobs=20 request; every stream's ITL ~2.3x, GPU stays busy"),
    tr("os_vllm_a100_tp2_maxtokens", "vllm", "oversized_request", "A100",
       [V(LLAMA70B_AWQ, gpus=(0, 1), rate=0.6, prompt_med=900, out_med=260, max_len=32768,
          big=dict(t=80, n=4, max_tokens=30000, prompt=1200))],
       n=2, tick=2, dur=360, window=(80, 230), scrape=10,
       events=big_events(80, 230, 0.02, 0.7),
       note="n=4 with max_tokens=30000 and top-20 logprobs on TP2 A100s, scraped every 10 s"),
    tr("os_sglang_l40s_sampling_batch", "sglang", "oversized_request", "L40S",
       [S(QWEN7B, rate=3.0, prompt_med=500, out_med=180, big=dict(t=70, n=16, max_tokens=2048))],
       dur=240, window=(70, 150), events=big_events(70, 150, 0.007, 0.6),
       note="a client's n=16 best-of sampling batch; mild (ITL ~1.4x)"),
    # ---------------------------------------------------------------- prefill_interference
    tr("pi_vllm_h200_rag_bursts", "vllm", "prefill_interference", "H200",
       [V(LLAMA8B, rate=5.0, prompt_med=800, out_med=250, budget=8192, prefix_hit=0.2)],
       dur=360, window=(90, 270),
       events=[Ev("prompt", 90, 270, 6.0, "onoff", on_s=30, off_s=30)],
       note="RAG tenant sends 10-12k-token contexts in 30 s bursts: ITL up while prompt tok/s dominate"),
    tr("pi_sglang_a100_prompt_mix_ramp", "sglang", "prefill_interference", "A100",
       [S(QWEN7B, rate=3.0, prompt_med=600, out_med=300, budget=8192, realtime=True)],
       tick=2, dur=420, window=(90, 400), events=[Ev("prompt", 90, 420, 4.0, "ramp", ramp_s=200)],
       note="prompt lengths grow over minutes (document summarisation rolled out); no GPM"),
    tr("pi_llamacpp_a10g_new_long_prompts", "llamacpp", "prefill_interference", "A10G",
       [L(GGUF8B, rate=0.5, prompt_med=400, out_med=200, max_seqs=4, ctx=32768, budget=2048)],
       tick=2, dur=300, window=(80, 220), events=[Ev("prompt", 80, 220, 8.0), Ev("rate", 80, 220, 1.3)],
       note="llama-server with 4 slots; new 5k-token prompts stall the running slots' decode"),
    # ---------------------------------------------------------------- collective_straggler
    tr("cs_ddp_a100x8_rank5_thermal", "training", "collective_straggler", "A100",
       [T(gpus=range(8), **DDP, batch=512, pcie=200)], n=8, tick=2, dur=420,
       window=(120, 400), culprit=(5,), events=[Ev("amb5", 120, 420, 48.0, "ramp", ramp_s=120)],
       pin="torchrun", note="rank 5's inlet gets hot (failed fan in the chassis): it throttles, 7 ranks spin in NCCL"),
    tr("cs_fsdp_h100x4_nvlink_degraded_gpu2", "training", "collective_straggler", "H100",
       [T(gpus=range(4), **dict(DDP, t_comm=0.09, cmd="torchrun --nproc-per-node 4 fsdp_train.py"), batch=256)],
       n=4, dur=300, window=(75, 300), culprit=(2,), events=[Ev("link2", 75, 300, 2.2), Ev("shard2", 75, 300, 1.18)],
       note="GPU 2's NVLink degraded to fewer lanes (replays): its shard's all-gather lags"),
    tr("cs_vllm_tp4_h100_moe_hot_rank", "vllm", "collective_straggler", "H100",
       [V(QWEN3_30B, gpus=range(4), rate=6.0, prompt_med=600, out_med=250, active_frac=0.2)],
       n=4, dur=300, window=(70, 300), culprit=(1,), events=[Ev("shard1", 70, 300, 2.6, "ramp", ramp_s=60)],
       note="expert-parallel MoE: a hot expert set lands on rank 1; the other 3 ranks wait in all-reduce"),
    tr("cs_b200x8_rank3_hw_slowdown", "training", "collective_straggler", "B200",
       [T(gpus=range(8), **dict(DDP, t_compute=0.3, mem_gb=140), batch=1024)], n=8, dur=300,
       window=(90, 270), culprit=(3,), events=[Ev("hwslow3", 90, 270, 0.45, "onoff", on_s=25, off_s=20)],
       note="GPU 3 reports HW slowdown in bursts (power delivery); the job's step time follows it"),
    tr("cs_pp_l40s_x2_last_stage_heavy", "training", "collective_straggler", "L40S",
       [T(gpus=(0, 1), **dict(FT, cmd="torchrun --nproc-per-node 2 pipe_train.py --pp 2", mem_gb=40), t_comm=0.03)],
       n=2, tick=2, dur=360, window=(100, 360), culprit=(1,), events=[Ev("shard1", 100, 360, 1.7, "ramp", ramp_s=150)],
       note="pipeline stage 1 (LM head, loss) grows heavier with the sequence-length curriculum"),
    # ---------------------------------------------------------------- input_stall
    tr("is_resnet_a10g_jpeg_decode", "training", "input_stall", "A10G",
       [T(**CNN, loader_cap=2600, workers=4)], dur=300, window=(70, 300), cpus=8,
       events=[Ev("input", 70, 300, 0.45)], pin="train_resnet.py",
       note="a new augmentation pipeline makes JPEG decode the bottleneck: loader workers pegged, util saw-tooth"),
    tr("is_ddp_a100x4_nfs_bursts", "training", "input_stall", "A100",
       [T(gpus=range(4), **dict(CNN, mem_gb=30, cmd="torchrun --nproc-per-node 4 train.py --data /mnt/nfs/ds",
                                 batch=1024), loader_cap=9000, workers=16)],
       n=4, tick=2, dur=420, window=(90, 390), events=[Ev("input", 90, 390, 0.35, "onoff", on_s=40, off_s=50)],
       note="NFS read latency spikes in 40 s bursts; all four ranks idle together"),
    tr("is_h100_ft_tokenize_on_the_fly", "training", "input_stall", "H100",
       [T(**FT, loader_cap=70, workers=2)], dur=360, window=(80, 360),
       events=[Ev("input", 80, 360, 0.35, "ramp", ramp_s=120)], trainer_counter="samples", pin="finetune.py",
       note="tokenisation in 2 workers; longer documents make it slower and slower"),
    # ---------------------------------------------------------------- host_launch_jitter (eBPF)
    tr("hlj_vllm_h100_cfs_quota", "vllm", "host_launch_jitter", "H100",
       [V(LLAMA8B, rate=4.0, prompt_med=600, out_med=200, graphs=False)], dur=300,
       window=(90, 240), ebpf=True, events=[Ev("host_delay", 90, 240, 0.009)],
       note="container CPU quota throttles the launch thread: cudaLaunchKernel tail in ms, GPU gaps"),
    tr("hlj_train_l40s_eager_irq", "training", "host_launch_jitter", "L40S",
       [T(**dict(FT, t_compute=0.12, kernels_per_step=2500, mem_gb=30, batch=8))], dur=300,
       window=(60, 300), ebpf=True, pin="finetune.py",
       events=[Ev("host_delay", 60, 300, 0.06, "onoff", on_s=30, off_s=25)],
       note="eager training; a NIC IRQ storm on the launch thread's core delays launches in bursts"),
    tr("hlj_cuda_a100_sim_smt", "cuda", "host_launch_jitter", "A100",
       [T(**SIM)], tick=2, dur=360, window=(100, 300), ebpf=True,
       events=[Ev("host_delay", 100, 300, 0.03, "ramp", ramp_s=60)],
       note="a CFD code launching 40 kernels a step; its core's SMT sibling got a busy neighbour"),
    # ---------------------------------------------------------------- host_cpu_contention
    tr("hcc_vllm_a10g_build_job", "vllm", "host_cpu_contention", "A10G",
       [V(QWEN7B, rate=1.0, prompt_med=500, out_med=200, max_len=8192)], dur=300, cpus=8,
       window=(80, 230), events=[Ev("cpu_hog", 80, 230, 14.0)],
       note="someone runs make -j16 on the 8-vCPU serving box: run queue, PSI, involuntary switches up"),
    tr("hcc_train_h200_preproc_neighbour", "training", "host_cpu_contention", "H200",
       [T(**dict(FT, host_s=0.03, mem_gb=90), workers=4)], dur=360, cpus=16,
       window=(100, 360), events=[Ev("cpu_hog", 100, 360, 26.0, "ramp", ramp_s=90)], pin="finetune.py",
       note="a preprocessing job on the same node takes the cores gradually"),
    tr("hcc_sglang_l40s_x2_neighbour_bursts", "sglang", "host_cpu_contention", "L40S",
       [S(QWEN7B, gpus=(0, 1), rate=3.0, prompt_med=500, out_med=200, host_s=0.004)], n=2, dur=300, cpus=12,
       scrape=5, window=(75, 285), events=[Ev("cpu_hog", 75, 285, 14.0, "onoff", on_s=30, off_s=30)],
       note="a neighbour's cron batch hogs the CPUs in 30 s bursts; engine scraped every 5 s"),
    # ---------------------------------------------------------------- tiny_kernels
    tr("tk_notebook_a100_python_loop", "notebook", "tiny_kernels", "A100",
       [T(**dict(t_compute=0.5, alpha=0.85, eff={"sm": 0.95, "tensor": 0.7, "dram": 0.25}, proc="python",
                 cmd="python -m ipykernel_launcher -f kernel-3f1.json", mem_gb=22, tiny_mult=4.0))],
       dur=300, window=(90, 300), events=[Ev("tiny", 90, 300, 1.0)],
       note="a notebook cell moves from batched matmuls to a per-row Python loop: 100% util, tiny kernels"),
    tr("tk_cuda_h200_small_grid", "cuda", "tiny_kernels", "H200",
       [T(**dict(SIM, alpha=0.5, tiny_mult=2.0))], dur=300, window=(80, 260),
       events=[Ev("tiny", 80, 260, 0.95, "ramp", ramp_s=40)],
       note="AMR simulation coarsens to tiny grids: kernels of 1-2 blocks, SM 3%, low power"),
    tr("tk_rl_h100_per_sample_reward", "training", "tiny_kernels", "H100",
       [T(**dict(FT, cmd="python rl_train.py --algo grpo", tiny_mult=3.0, mem_gb=60))],
       tick=2, dur=360, window=(90, 250), events=[Ev("tiny", 90, 250, 0.85)], trainer_counter="samples",
       note="a new reward function scores samples one by one in eager PyTorch"),
    # ---------------------------------------------------------------- memory_bandwidth
    tr("mb_vllm_h200_context_growth", "vllm", "memory_bandwidth", "H200",
       [V(LLAMA8B, rate=2.0, prompt_med=1500, out_med=300, max_len=131072, max_seqs=512, prefix_hit=0.9)],
       dur=420, window=(100, 420), events=[Ev("prompt", 100, 420, 8.0, "ramp", ramp_s=200),
                                          Ev("out", 100, 420, 2.0, "ramp", ramp_s=200)],
       note="agent sessions carry ever longer histories: DRAM ~90%, ITL grows with context"),
    tr("mb_vllm_a100_batch_growth", "vllm", "memory_bandwidth", "A100",
       [V(LLAMA8B, rate=1.2, prompt_med=1500, out_med=500, max_seqs=512, max_len=32768, prefix_hit=0.88)],
       tick=2, dur=420, window=(90, 420), events=[Ev("rate", 90, 420, 2.2, "ramp", ramp_s=180),
                                                 Ev("prompt", 90, 420, 1.5, "ramp", ramp_s=180)],
       note="traffic x4 with long contexts: batch of hundreds, NVML memory-controller util ~95%"),
    tr("mb_cuda_l40s_stencil_spill", "cuda", "memory_bandwidth", "L40S",
       [T(**dict(SIM, eff={"sm": 0.9, "tensor": 0.0, "dram": 0.45}, alpha=0.5))], dur=300,
       window=(75, 300), events=[Ev("shard0", 75, 300, 2.2, "ramp", ramp_s=60),
                                 Ev("dram", 75, 300, 0.45, "ramp", ramp_s=60)],
       note="the grid outgrows L2: every step streams from GDDR6; step time x2"),
    tr("mb_train_h100_embedding_tables", "training", "memory_bandwidth", "H100",
       [T(**dict(t_compute=0.2, alpha=0.3, eff={"sm": 0.8, "tensor": 0.1, "dram": 0.6},
                 cmd="python train_dlrm.py", mem_gb=70, batch=65536))],
       dur=300, window=(90, 300), events=[Ev("shard0", 90, 300, 1.7, "ramp", ramp_s=60),
                                 Ev("dram", 90, 300, 0.32, "ramp", ramp_s=60)],
       note="recommender: embedding tables grow past cache; step bound by HBM"),
    # ---------------------------------------------------------------- throttling
    tr("th_llamacpp_l40s_thermal_ramp", "llamacpp", "throttling", "L40S",
       [L(GGUF14B, rate=0.45, prompt_med=3000, out_med=120, max_seqs=4, ctx=32768, budget=2048)],
       tick=2, dur=420, window=(120, 420), events=[Ev("amb", 120, 420, 45.0, "ramp", ramp_s=180)],
       note="summarisation server; the rack's cooling fails slowly: thermal slowdown, prompt tok/s falls"),
    tr("th_train_h100_power_cap_lowered", "training", "throttling", "H100",
       [T(**FT)], dur=300, window=(90, 300), events=[Ev("cap", 90, 300, 450.0)],
       trainer_counter="samples",
       note="facility lowers the cap 700 -> 450 W (nvidia-smi -pl): clocks 1450 -> ~950 MHz, samples/s -30%"),
    tr("th_vllm_a10g_x4_gpu2_hot", "vllm", "throttling", "A10G",
       [V(QWEN7B, gpus=(0,), rate=0.8, prompt_med=800, out_med=150, max_len=8192),
        V(QWEN7B, gpus=(1,), rate=0.8, prompt_med=800, out_med=150, max_len=8192, pid0=7000),
        V(QWEN7B, gpus=(2,), rate=0.8, prompt_med=800, out_med=150, max_len=8192, pid0=8000),
        V(QWEN7B, gpus=(3,), rate=0.8, prompt_med=800, out_med=150, max_len=8192, pid0=9000)],
       n=4, dur=360, window=(100, 360), culprit=(2,), cpus=48,
       events=[Ev("amb2", 100, 360, 42.0, "ramp", ramp_s=120)],
       note="4 single-GPU replicas (g5.12xlarge); GPU 2's heatsink clogged; the page scraped is replica 0's"),
    tr("th_sglang_b200_power_brake", "sglang", "throttling", "B200",
       [S(LLAMA70B, gpus=(0,), rate=2.5, prompt_med=800, out_med=250)], dur=300,
       window=(90, 250), events=[Ev("brake", 90, 250, 1.0, "onoff", on_s=20, off_s=25)],
       note="PSU event asserts the power brake in 20 s bursts: clocks to ~40%"),
    # ---------------------------------------------------------------- kv_pressure
    tr("kv_vllm_h100_long_outputs", "vllm", "kv_pressure", "H100",
       [V(QWEN32B, rate=0.9, prompt_med=1200, out_med=250, max_tokens=8192, pool_tokens=60000)],
       dur=420, window=(100, 420), events=[Ev("out", 100, 420, 6.0, "ramp", ramp_s=90)],
       note="reasoning-style outputs lengthen: KV pool full, preemptions, waiting queue grows"),
    tr("kv_sglang_a100_retractions", "sglang", "kv_pressure", "A100",
       [S(MISTRAL24B, rate=0.7, prompt_med=1200, out_med=300, max_tokens=8192, pool_tokens=90000)],
       tick=2, dur=360, window=(90, 360), events=[Ev("rate", 90, 360, 2.0), Ev("out", 90, 360, 3.0)],
       note="a batch client floods long prompts: token_usage ~1, retractions, queue"),
    tr("kv_vllm_l40s_mild", "vllm", "kv_pressure", "L40S",
       [V(QWEN7B, rate=1.0, prompt_med=2500, out_med=250, max_tokens=8192, pool_tokens=110000)],
       dur=360, scrape=15, tick=2, window=(100, 360), events=[Ev("rate", 100, 360, 1.7, "ramp", ramp_s=120),
                                                              Ev("out", 100, 360, 2.0, "ramp", ramp_s=120)],
       note="mild: occasional preemptions as the pool saturates; scraped every 15 s"),
    # ---------------------------------------------------------------- gpu_shared
    tr("gs_vllm_a100_notebook_joins", "vllm", "gpu_shared", "A100",
       [V(LLAMA8B, rate=3.0, prompt_med=600, out_med=220, mem_frac=0.7),
        O(t0=90, t1=400, slice=0.45, proc="python", cmd="python -m ipykernel_launcher -f k-77.json",
          mem_gb=18, user="alice", eff={"sm": 0.9, "tensor": 0.6, "dram": 0.3})],
       dur=300, window=(90, 300),
       note="a data scientist's notebook lands on the serving GPU; no per-process util on this driver"),
    tr("gs_train_l40s_eval_job_colocated", "training", "gpu_shared", "L40S",
       [T(**dict(FT, mem_gb=26)), O(t0=70, t1=240, slice=0.35, proc="python", cmd="python eval_harness.py --ckpt last",
                                    mem_gb=12, user="bob")],
       dur=300, window=(70, 240), proc_util=True, trainer_counter="samples",
       note="an eval harness is started on the training GPU; per-process SM util shows both"),
    tr("gs_sglang_h200_embedding_tenant", "sglang", "gpu_shared", "H200",
       [S(LLAMA8B, rate=4.0, prompt_med=700, out_med=220, mem_frac=0.75),
        O(t0=100, t1=300, slice=0.3, proc="python", cmd="python embed_batch.py --model bge-m3",
          mem_gb=9, eff={"sm": 0.85, "tensor": 0.5, "dram": 0.35})],
       dur=300, window=(100, 300), proc_util=True,
       note="a batch embedding job time-slices the H200; the engine's tokens/s drops ~25%"),
    # ---------------------------------------------------------------- spec_decode_rejected
    tr("sd_vllm_h100_ngram_code_to_chat", "vllm", "spec_decode_rejected", "H100",
       [V(LLAMA8B, rate=3.5, prompt_med=900, out_med=250, spec={"k": 4, "accept": 0.72})],
       dur=300, window=(90, 300), events=[Ev("accept", 90, 300, 0.12, "ramp", ramp_s=40)],
       note="ngram speculation tuned on code; traffic moves to chat and drafts are rejected"),
    tr("sd_sglang_a100_eagle_mismatch", "sglang", "spec_decode_rejected", "A100",
       [S(LLAMA8B, rate=3.0, prompt_med=700, out_med=250, spec={"k": 3, "accept": 0.75}, realtime=False)],
       tick=2, dur=300, window=(80, 300), events=[Ev("accept", 80, 300, 0.18)],
       note="target model updated, EAGLE draft head not: acceptance falls; SGLang reports gauges only"),
    tr("sd_llamacpp_l40s_draft_new_domain", "llamacpp", "spec_decode_rejected", "L40S",
       [L(GGUF14B, rate=0.6, prompt_med=300, out_med=250, max_seqs=4, spec={"k": 8, "accept": 0.7})],
       dur=300, window=(90, 300), events=[Ev("accept", 90, 300, 0.15)],
       note="llama-server with a 0.5B draft; users switch to another language: counters move at finish"),
]

HEALTHY = [
    tr("h_vllm_h100_traffic_falls_to_third", "vllm", None, "H100",
       [V(LLAMA8B, rate=5.0, prompt_med=700, out_med=220)], dur=360,
       events=[Ev("rate", 120, 360, 0.33, "ramp", ramp_s=120)], note="evening: traffic falls to a third"),
    tr("h_vllm_a100_traffic_doubles", "vllm", None, "A100",
       [V(LLAMA8B, rate=2.5, prompt_med=350, out_med=220)], tick=2, dur=360,
       events=[Ev("rate", 100, 360, 2.0, "ramp", ramp_s=60)], note="morning: traffic doubles, batch grows, ITL +10%"),
    tr("h_sglang_h200_bursty_arrivals", "sglang", None, "H200",
       [S(LLAMA8B, rate=4.0, prompt_med=600, out_med=200, bursty=True, realtime=False)], dur=300, note="bursty client arrivals"),
    tr("h_vllm_l40s_engine_restart", "vllm", None, "L40S",
       [V(QWEN7B, rate=2.0, prompt_med=600, out_med=200)], dur=360,
       events=[Ev("down", 120, 170, 1.0), Ev("warmup", 170, 195, 1.0)],
       note="rolling update: engine down 50 s, reload, CUDA-graph capture, backlog served"),
    tr("h_llamacpp_a10g_quiet_night", "llamacpp", None, "A10G",
       [L(GGUF8B, rate=0.08, prompt_med=300, out_med=250, max_seqs=2)], tick=2, dur=360,
       note="a few requests an hour-minute: long idle gaps"),
    tr("h_vllm_h200_long_context_tenant", "vllm", None, "H200",
       [V(QWEN32B, rate=0.25, prompt_med=24000, out_med=300, max_len=131072, prefix_hit=0.6, prompt_sigma=0.4)], dur=300,
       note="a legal-docs tenant: 24k-token prompts are the normal workload, steady"),
    tr("h_sglang_a100_prefix_cache_warms", "sglang", None, "A100",
       [S(QWEN7B, rate=3.0, prompt_med=1800, out_med=200, prefix_hit=0.2)], tick=2, dur=360,
       events=[Ev("hit", 90, 360, 4.0, "ramp", ramp_s=120)], note="system-prompt reuse rises: TTFT falls"),
    tr("h_vllm_h100_tp2_ranks_differ", "vllm", None, "H100",
       [V(LLAMA70B_FP8, gpus=(0, 1), rate=2.0, prompt_med=800, out_med=250)], n=2, dur=300,
       events=[Ev("shard1", 0, 300, 1.06)], note="TP2: rank 1 ~6% busier (its shard + the sampler), steady"),
    tr("h_vllm_h100_mig_slices", "vllm", None, "H100",
       [V(QWEN7B, rate=1.5, prompt_med=500, out_med=200, mem_frac=0.45, mig_index=0)], dur=300, mig=True,
       note="H100 in MIG mode (3g.40gb engine + two idle slices): no GPU-Util, GPM per instance"),
    tr("h_vllm_b200_cold_start_warmup", "vllm", None, "B200",
       [V(LLAMA70B, rate=3.0, prompt_med=600, out_med=250)], dur=300,
       events=[Ev("warmup", 0, 45, 1.0), Ev("rate", 0, 70, 0.3)], note="first minute: compile + warm-up, then steady"),
    tr("h_vllm_a10g_at_power_cap", "vllm", None, "A10G",
       [V(QWEN7B, rate=0.5, prompt_med=500, out_med=200, max_len=8192)], dur=300, cap=150,
       note="the board is capped at 150 W by the operator; clocks held, throughput steady"),
    tr("h_sglang_l40s_prompt_mix_shift", "sglang", None, "L40S",
       [S(QWEN7B, rate=2.5, prompt_med=500, out_med=220)], tick=2, dur=360,
       events=[Ev("prompt", 120, 360, 1.8, "ramp", ramp_s=120), Ev("rate", 120, 360, 0.8, "ramp", ramp_s=120)],
       note="prompt mix lengthens a little while rate eases: a load shift, not interference"),
    tr("h_vllm_h100_scraped_every_10s", "vllm", None, "H100",
       [V(MISTRAL24B, rate=3.0, prompt_med=700, out_med=250, diurnal=0.3, period_s=400)], dur=360, scrape=10,
       tick=2, note="engine page read every 10 s; readings carried between"),
    tr("h_llamacpp_l40s_batch_job_finishes", "llamacpp", None, "L40S",
       [L(GGUF14B, rate=0.7, prompt_med=800, out_med=300, max_seqs=6)], dur=300,
       events=[Ev("rate", 150, 300, 0.0)], note="an offline batch finishes at 150 s; the server idles"),
    tr("h_vllm_h100_ebpf_on_healthy", "vllm", None, "H100",
       [V(LLAMA8B, rate=4.0, prompt_med=600, out_med=200, graphs=False)], dur=240, ebpf=True,
       events=[Ev("rate", 120, 240, 1.5, "ramp", ramp_s=60)], note="eBPF on, eager decode: normal launch latencies"),
    tr("h_vllm_a100_second_healthy_process", "vllm", None, "A100",
       [V(LLAMA8B, rate=2.5, prompt_med=600, out_med=200, mem_frac=0.85),
        O(t0=80, t1=300, slice=0.0, proc="dcgm-exporter", cmd="/usr/bin/dcgm-exporter", mem_gb=0.4, cores=0.1)],
       dur=300, note="a monitoring agent opens a context on the GPU (no SM time)"),
    # ---------------------------------------------------------------- training / CUDA healthy
    tr("h_ddp_a100x8_checkpoint_pause", "training", None, "A100",
       [T(gpus=range(8), **DDP, batch=512, phases=[(150, 175, "ckpt")])], n=8, tick=2, dur=360,
       pin="torchrun", note="checkpoint every N steps: GPUs idle 25 s while rank 0 writes"),
    tr("h_h100x4_eval_pass", "training", None, "H100",
       [T(gpus=range(4), **dict(DDP, cmd="torchrun --nproc-per-node 4 train.py"), batch=256,
          phases=[(140, 200, "eval")])], n=4, dur=300, trainer_counter="samples",
       note="periodic eval pass: forward only, lower power, samples counter pauses"),
    tr("h_l40s_grad_accumulation", "training", None, "L40S",
       [T(**dict(FT, mem_gb=40), accum=8, t_opt=0.4)], tick=2, dur=300,
       note="gradient accumulation 8: optimizer spikes every few seconds"),
    tr("h_h200_job_finishes_next_starts", "training", None, "H200",
       [T(**dict(FT, mem_gb=100), phases=[(130, 160, "gone"), (160, 185, "loading"), (185, 215, "warm")])],
       dur=330, trainer_counter="samples", note="job ends at 130 s; the next one loads and warms up"),
    tr("h_a100x2_two_jobs_one_box", "training", None, "A100",
       [T(gpus=(0,), **FT), T(gpus=(1,), **dict(CNN, mem_gb=20), pid0=41000)], n=2, dur=300,
       note="two users' jobs on one box, one GPU each"),
    tr("h_h100x8_fsdp_ranks_differ", "training", None, "H100",
       [T(gpus=range(8), **dict(DDP, cmd="torchrun --nproc-per-node 8 fsdp.py", mem_gb=70), batch=512)],
       n=8, dur=300, events=[Ev("shard3", 0, 300, 1.04), Ev("shard6", 0, 300, 0.97)],
       note="FSDP ranks differ by a few % (uneven buckets), steady"),
    tr("h_cuda_a10g_benchmark_phases", "cuda", None, "A10G",
       [T(**dict(SIM, proc="gemm_bench", cmd="./gemm_bench --sizes 1024:16384",
                 eff={"sm": 0.95, "tensor": 0.8, "dram": 0.2}, alpha=0.9,
                 phases=[(60, 80, "gone"), (140, 160, "gone"), (220, 240, "gone")]))], dur=300,
       note="a benchmark sweep: runs, exits, restarts"),
    tr("h_rl_h100x2_rollout_then_train", "training", None, "H100",
       [T(gpus=(0, 1), **dict(FT, cmd="python rl_train.py --algo ppo", mem_gb=60),
          phases=[(0, 60, "rollout"), (120, 180, "rollout"), (240, 300, "rollout")])], n=2, dur=330,
       note="RL: generation (decode-like) and training phases alternate"),
    tr("h_b200x8_warm_at_power_cap", "training", None, "B200",
       [T(gpus=range(8), **dict(DDP, t_compute=0.3, mem_gb=150, eff={"sm": 0.96, "tensor": 0.85, "dram": 0.2}),
          batch=1024)], n=8, tick=2, dur=300, note="matmul-heavy pretraining at the power cap, clocks held, 70 C"),
    tr("h_notebook_l40s_interactive", "notebook", None, "L40S",
       [T(**dict(t_compute=0.3, proc="python", cmd="python -m ipykernel_launcher -f k-12.json", mem_gb=16,
                 phases=[(0, 40, "idle0"), (70, 130, "idle0"), (170, 240, "idle0")]))],
       dur=300, note="a notebook user runs cells now and then"),
    tr("h_a100_mig_finetunes", "training", None, "A100",
       [T(**dict(FT, mem_gb=30), mig_index=0), T(**dict(CNN, mem_gb=12), mig_index=1, pid0=42000)],
       dur=300, mig=True, note="A100 in MIG: two small jobs on slices; no util, no GPM"),
    tr("h_cuda_h200_md_sim_capped", "cuda", None, "H200",
       [T(**dict(SIM, proc="gmx", cmd="gmx mdrun -deffnm prod -nb gpu", eff={"sm": 0.95, "tensor": 0.3, "dram": 0.5},
                 alpha=0.8))], dur=300, cap=500, note="MD simulation on a 500 W-capped H200: power cap flag set, steady"),
]

# engines scraped every 5-15 s (by a central Prometheus-style poller): the reading carried
SCRAPED = {'pi_sglang_a100_prompt_mix_ramp': 10, 'mb_vllm_a100_batch_growth': 10, 'th_sglang_b200_power_brake': 5, 'kv_sglang_a100_retractions': 10, 'gs_vllm_a100_notebook_joins': 5, 'sd_sglang_a100_eagle_mismatch': 10, 'h_vllm_a100_traffic_doubles': 10, 'h_llamacpp_a10g_quiet_night': 10, 'h_sglang_a100_prefix_cache_warms': 10, 'h_sglang_l40s_prompt_mix_shift': 10}
SPECS = PATHOLOGY + HEALTHY
for _spec in SPECS:
    if _spec["name"] in SCRAPED:
        _spec["scrape"] = SCRAPED[_spec["name"]]
