"""The catalogue: each entry is its truth and a function making its frames."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .sim import A100, GIB, H100, H200, L40S, GpuIn, Proc, launch_hist
from .train import trainer
from .work import HostEnv, Pod, ServeCfg, ramp, run_server

T0 = 1_799_000_000.0


@dataclass(frozen=True)
class Entry:
    name: str
    family: str
    cause: str | None
    culprit: tuple[int, ...] | None
    window: tuple[float, float] | None  # seconds from the trace start
    engine: str
    gpus: int
    model: object
    tick: float
    note: str
    make: Callable  # (start_wall) -> frames


def wave(base, amp, period, phase=0.0):
    return lambda t: base + amp * math.sin(2 * math.pi * t / period + phase)


def node(cpus, busy, rq, psi=1.5, amp=0.1, period=97.0):
    return HostEnv(cpus, wave(busy, busy * amp, period), wave(rq, rq * amp, period * 0.7, 1.0),
                   lambda t: psi)


def cores(first, n):
    return tuple(range(first, first + n))


def k8s(name):
    return Pod("k8s", name)


def inwin(t, w):
    return w[0] <= t < w[1]


def intermittent(t, w, on, off):
    return inwin(t, w) and ((t - w[0]) % (on + off)) < on


E: list[Entry] = []


def add(name, family, cause, culprit, window, engine, gpus, model, tick, note, make):
    E.append(Entry(name, family, cause, culprit, window, engine, gpus, model, tick, note, make))


def other_proc(pid, name, cmd, mem_gib, pod="", container="", user="root"):
    return Proc(pid=pid, name=name, cmdline=cmd, mem=int(mem_gib * GIB), start=T0 - 50000,
                pod=pod, container=container, user=user,
                cgroup=f"/kubepods.slice/kubepods-besteffort.slice/{pod or name}")


# =========================================================== host_cpu_contention
W = (100.0, 190.0)
add("hc_train_quota_cut", "containers", "host_cpu_contention", None, W, "trainer", 1, H100, 1.0,
    "a resize cuts the trainer pod's CPU limit from 12 to 2 cores; main thread and 6 DataLoader "
    "workers throttled every period, GPU waits",
    lambda s, W=W: trainer("hc_train_quota_cut", H100, (0,), 240, s, node(96, 40, 45),
                      k8s("ml-train/llama-ft-0"), cores(32, 12),
                      lambda t: {"quota": 2.0 if inwin(t, W) else 12.0}, quota=12.0, workers=6,
                      gpu_s=0.7, load_s=2.4, all_gpus=(0, 1, 2, 3)))

W2 = (90.0, 180.0)
add("hc_train_busyloops_mild", "containers", "host_cpu_contention", None, W2, "trainer", 1, H200,
    1.0, "a neighbour's busy threads land on the trainer's shared cpuset; its main thread gets "
    "~65% of a core and a 58%-util trainer loses a quarter of its steps",
    lambda s, W=W: trainer("hc_train_busyloops_mild", H200, (0,), 230, s, node(128, 60, 70),
                      k8s("research/bert-pretrain-2"), cores(8, 6),
                      lambda t: ({"share": ramp(t, 90, 110, 1.0, 0.62), "extra_rq": 9,
                                  "invol": 900, "pressure": 6} if inwin(t, W2) else {}),
                      gpu_s=0.42, main_need=0.36, load_s=0.8, workers=4, sm=0.75))

W3 = (100.0, 200.0)
add("hc_vllm_quota_tokenizer", "containers", "host_cpu_contention", None, W3, "vllm", 1, H100,
    1.0, "the vLLM pod rolls to a model whose tokenizer/detokenizer threads need more CPU than its "
    "4-core limit: the engine core is throttled, ITL p99 doubles and tokens/s fall a third",
    lambda s, W=W: run_server(ServeCfg(
        "hc_vllm_quota_tokenizer", "vllm", H100, (0,), 1.0, 250, s, node(64, 30, 38),
        k8s("serving/chat-8b-6c9f"), cores(16, 8),
        lambda t: ({"cpu_share": 0.55, "throttled": 0.85, "invol": 160, "host_ms": 14.0,
                    "host_per_seq_ms": 0.3} if inwin(t, W3) else
                   {"throttled": 0.01, "host_ms": 14.0, "host_per_seq_ms": 0.2}),
        quota=lambda t: 4.0, clients=32)))

W4 = (80.0, 180.0)
add("hc_sglang_noisy_neighbour", "containers", "host_cpu_contention", None, W4, "sglang", 1,
    H200, 1.0, "another pod's compile job is scheduled onto the same 8 CPUs as the SGLang "
    "scheduler: run queue up, the tree's involuntary switches x20, tokens/s -35% at high util",
    lambda s, W=W: run_server(ServeCfg(
        "hc_sglang_noisy_neighbour", "sglang", H200, (1,), 1.0, 230, s, node(192, 90, 110),
        k8s("inference/sglang-qwen-72b-0"), cores(40, 8),
        lambda t: ({"cpu_share": 0.5, "invol": 1800, "extra_rq": 22, "host_busy_extra": 16,
                    "extra_pressure": 8, "host_ms": 12.0, "host_per_seq_ms": 0.2} if inwin(t, W4)
                   else {"host_ms": 12.0, "host_per_seq_ms": 0.2}), clients=40,
        model_name="Qwen/Qwen2.5-32B-Instruct", weights_gib=62, kv_pool_tokens=600000,
        kv_bytes_per_token=262144, all_gpus=(0, 1, 2, 3),
        neighbours=lambda t: {0: GpuIn(busy=[0.9] * 5, procs=[]), 2: GpuIn(busy=[0.6] * 5, procs=[])})))

W5 = (70.0, 160.0)
add("hc_llamacpp_quota_mild", "containers", "host_cpu_contention", None, W5, "llamacpp", 1, L40S,
    1.0, "a llama.cpp pod with a 2-core limit starts serving 8 parallel slots with long sampling "
    "chains; throttled most periods, ITL 1.6x",
    lambda s, W=W: run_server(ServeCfg(
        "hc_llamacpp_quota_mild", "llamacpp", L40S, (0,), 1.0, 210, s, node(64, 20, 24),
        k8s("edge/llama-cpp-7b"), cores(4, 4),
        lambda t: ({"cpu_share": 0.62, "throttled": 0.7, "invol": 120, "host_per_seq_ms": 1.2,
                    "overlap": 0.0, "step_ms": 14.0}
                   if inwin(t, W5) else {"host_per_seq_ms": 1.0, "overlap": 0.0, "step_ms": 14.0}),
        clients=6,
        model_name="llama-3-8b-q4_k_m.gguf", weights_gib=4.6, kv_pool_tokens=65536,
        max_seqs=8, quota=lambda t: 2.0)))

W6 = (110.0, 200.0)
add("hc_train_8gpu_quota", "training", "host_cpu_contention", None, W6, "trainer", 8, H100, 1.0,
    "an 8-GPU DDP job's namespace policy cuts its pod from 32 to 12 cores as a heavier augmentation "
    "lands: every rank throttled together, steps ~1.6x",
    lambda s, W=W: trainer("hc_train_8gpu_quota", H100, tuple(range(8)), 240, s, node(224, 80, 95),
                      k8s("train/vit-h-ddp"), cores(0, 48),
                      lambda t: ({"quota": 12.0, "load_mult": 2.0, "worker_cpu_frac": 0.95}
                                 if inwin(t, W6) else {"quota": 32.0}),
                      quota=32.0, workers=3, gpu_s=1.1, load_s=1.0, main_need=0.9,
                      unit="samples", per_step=2048, cmd="torchrun --nproc-per-node 8 train_vit.py"))

W7 = (80.0, 200.0)
add("hc_train_slow_onset", "containers", "host_cpu_contention", None, (95.0, 200.0), "trainer", 1,
    H100, 1.0, "a neighbour's ETL ramps over a minute onto the trainer's cpuset; the main thread "
    "loses its core gradually, util 95% to 60%",
    lambda s, W=W: trainer("hc_train_slow_onset", H100, (3,), 240, s, node(96, 50, 60),
                      Pod("slurm", "48213"), cores(24, 8),
                      lambda t: ({"share": ramp(t, 80, 140, 1.0, 0.45), "extra_rq": ramp(t, 80, 140, 0, 14),
                                  "invol": ramp(t, 80, 140, 0, 1500), "pressure": ramp(t, 80, 140, 0, 9)}
                                 if inwin(t, W7) else {}),
                      gpu_s=0.9, main_need=0.55, all_gpus=(0, 1, 2, 3)))

W8 = (100.0, 200.0)
add("hc_vllm_busyloop_lowutil", "containers", "host_cpu_contention", None, W8, "vllm", 1, A100,
    1.0, "on a pre-Hopper node a host-bound vLLM pod (util ~60%) shares cores with a misbehaving "
    "sidecar's spin loops; the engine core gets 45% of a core, ITL 2x",
    lambda s, W=W: run_server(ServeCfg(
        "hc_vllm_busyloop_lowutil", "vllm", A100, (2,), 1.0, 240, s, node(128, 50, 60),
        k8s("serving/mistral-7b-1"), cores(60, 6),
        lambda t: ({"cpu_share": 0.45, "invol": 1400, "extra_rq": 6, "host_busy_extra": 3,
                    "step_ms": 6.0, "host_ms": 12.0, "host_per_seq_ms": 0.1} if inwin(t, W8) else
                   {"step_ms": 6.0, "host_ms": 12.0, "host_per_seq_ms": 0.1}),
        model_name="mistralai/Mistral-7B-Instruct-v0.3", weights_gib=13.5, all_gpus=(0, 1, 2, 3),
        clients=16)))

# =========================================================== input_stall
W = (90.0, 190.0)
add("is_train_few_workers_severe", "training", "input_stall", None, W, "trainer", 1, H200, 1.0,
    "the dataset switches to full-size JPEG decoding with 2 DataLoader workers: both at 100% CPU, "
    "the GPU idle 80% of the time in a saw-tooth",
    lambda s, W=W: trainer("is_train_few_workers_severe", H200, (0,), 240, s, node(128, 40, 50),
                      k8s("vision/resnet-train"), cores(0, 16),
                      lambda t: {"load_mult": 6.0, "worker_cpu_frac": 1.0} if inwin(t, W) else {},
                      workers=2, gpu_s=0.5, load_s=0.8, unit="samples", per_step=512,
                      cmd="python train_resnet.py --workers 2"))

W = (80.0, 180.0)
add("is_train_nfs_mild", "training", "input_stall", None, W, "trainer", 1, H100, 1.0,
    "the NFS server holding shards slows down; workers sleep in I/O (low CPU, voluntary switches "
    "up), steps 1.3x longer for a trainer that healthy runs at 55% util",
    lambda s, W=W: trainer("is_train_nfs_mild", H100, (1,), 220, s, node(96, 30, 35),
                      Pod("slurm", "77120"), cores(12, 8),
                      lambda t: ({"load_mult": 1.75, "worker_cpu_frac": 0.12, "vol": 9000}
                                 if inwin(t, W) else {"worker_cpu_frac": 0.4}),
                      workers=4, gpu_s=0.55, main_need=0.5, load_s=1.6, density=0.6, sm=0.7,
                      all_gpus=(0, 1)))

W = (90.0, 200.0)
add("is_train_intermittent", "training", "input_stall", None, W, "trainer", 1, H200, 1.0,
    "shards come from object storage; every 30 s a shard boundary stalls the loader 8-12 s",
    lambda s, W=W: trainer("is_train_intermittent", H200, (0,), 240, s, node(128, 50, 60),
                      k8s("llm/pretrain-1b"), cores(16, 16),
                      lambda t: ({"load_mult": 12.0, "worker_cpu_frac": 0.05, "vol": 6000}
                                 if intermittent(t, W, 11, 19) else {}),
                      gpu_s=0.6, load_s=0.9, workers=6))

W = (100.0, 200.0)
add("is_train_4gpu_decode", "training", "input_stall", None, W, "trainer", 4, H100, 1.0,
    "a 4-GPU DDP job enables CPU-side video decoding in its 32-core pod; every rank waits on its "
    "loader, steps 1.35x (moderate)",
    lambda s, W=W: trainer("is_train_4gpu_decode", H100, (4, 5, 6, 7), 240, s, node(192, 60, 70),
                      k8s("video/clip-ddp"), cores(96, 32),
                      lambda t: {"load_mult": 3.8, "worker_cpu_frac": 1.0} if inwin(t, W) else {},
                      workers=6, gpu_s=0.9, load_s=2.0, unit="samples", per_step=1024,
                      all_gpus=tuple(range(8)), cmd="torchrun --nproc-per-node 4 train_clip.py"))

W = (105.0, 190.0)
add("is_train_after_ckpt_coldcache", "training", "input_stall", None, W, "trainer", 1, H100, 1.0,
    "after a checkpoint save the next epoch reads shards evicted from the page cache: loader-bound "
    "for 85 s",
    lambda s, W=W: trainer("is_train_after_ckpt_coldcache", H100, (2,), 230, s, node(96, 35, 40),
                      k8s("llm/sft-13b"), cores(48, 12),
                      lambda t: ({"ckpt": 6.0} if 92 <= t < 104 else
                                 {"load_mult": 5.0, "worker_cpu_frac": 0.15, "vol": 12000} if inwin(t, W)
                                 else {}),
                      gpu_s=1.4, load_s=2.4, workers=4, all_gpus=(0, 1, 2, 3)))

# =========================================================== gpu_shared
W = (90.0, 180.0)
add("gs_train_severe", "containers", "gpu_shared", (0,), W, "trainer", 1, H200, 1.0,
    "a second pod is handed the same GPU by a misconfigured device plugin and runs matmuls: "
    "the trainer's steps take 2x",
    lambda s, W=W: trainer("gs_train_severe", H200, (0,), 230, s, node(128, 50, 60),
                      k8s("llm/ft-7b"), cores(0, 12),
                      lambda t: {"shared": {0: 2.0}} if inwin(t, W) else {},
                      gpu_s=0.8,
                      others=lambda t: ({0: [(other_proc(88123, "python", "python bench_mm.py",
                                                         22, "dev/notebook-4", "containerd:a1b2c3d4e5f6"),
                                              0.95, 0.9)]} if inwin(t, W) else {})))

W = (80.0, 180.0)
add("gs_vllm_mild", "containers", "gpu_shared", (1,), W, "vllm", 1, H100, 1.0,
    "a notebook kernel on the vLLM pod's GPU runs matmuls ~25% of the time; ITL +30%",
    lambda s, W=W: run_server(ServeCfg(
        "gs_vllm_mild", "vllm", H100, (1,), 1.0, 220, s, node(96, 40, 45),
        k8s("serving/llama-8b-b"), cores(20, 8),
        lambda t: {"gpu_slow": 1.35} if inwin(t, W) else {},
        all_gpus=(0, 1), clients=32,
        others=lambda t: ({1: [(other_proc(90211, "python3", "ipykernel_launcher -f kernel.json",
                                           9, "dev/jupyter-ana"), 0.25, 0.85)]}
                          if inwin(t, W) else {}))))

W = (90.0, 210.0)
add("gs_train_intermittent", "training", "gpu_shared", (2,), W, "trainer", 1, A100, 1.0,
    "another user's evaluation job lands on the trainer's GPU every 40 s for 20 s (Slurm "
    "oversubscription); steps 2x while it runs",
    lambda s, W=W: trainer("gs_train_intermittent", A100, (2,), 240, s, node(64, 25, 30),
                      Pod("slurm", "55102"), cores(16, 8),
                      lambda t: {"shared": {2: 2.0}} if intermittent(t, W, 20, 20) else {},
                      gpu_s=0.7, all_gpus=(0, 1, 2, 3),
                      others=lambda t: ({2: [(other_proc(61007, "python", "python eval.py --ckpt last",
                                                         14, user="bob"), 0.8, 0.8)]}
                                        if intermittent(t, W, 20, 20) else {})))

W = (80.0, 180.0)
add("gs_sglang_multitenant", "multi-tenant", "gpu_shared", (2,), W, "sglang", 1, H100, 1.0,
    "on a 4-GPU node running three pods, a batch-inference job is scheduled onto GPU 2 with the "
    "SGLang pod (time-slicing); SGLang's tokens/s halve",
    lambda s, W=W: run_server(ServeCfg(
        "gs_sglang_multitenant", "sglang", H100, (2,), 1.0, 220, s, node(128, 70, 80),
        k8s("inference/sglang-8b-2"), cores(64, 8),
        lambda t: {"gpu_slow": 2.0} if inwin(t, W) else {},
        all_gpus=(0, 1, 2, 3), clients=32,
        neighbours=lambda t: {0: GpuIn(busy=[0.95] * 5, sm_eff=0.8, procs=[(other_proc(
            7001, "python3", "python train.py", 70, "train/a"), 1.0, 1.0)]),
            1: GpuIn(busy=[0.5] * 5, sm_eff=0.5, procs=[(other_proc(7002, "VLLM::EngineCor",
                                                                   "VLLM::EngineCore", 70, "serving/b"), 1.0, 0.8)])},
        others=lambda t: ({2: [(other_proc(93110, "python3", "python batch_infer.py --bs 64", 30,
                                           "batch/embed-job"), 0.9, 0.85)]} if inwin(t, W) else {}))))

# =========================================================== collective_straggler
W = (100.0, 200.0)
add("cs_fsdp_8gpu_rank5", "training", "collective_straggler", (5,), W, "trainer", 8, H200, 1.0,
    "rank 5's GPU computes 1.6x slower (its PCIe/NVLink link retrained at lower width); the other "
    "7 spin in NCCL all-reduce at 100% util with low SM",
    lambda s, W=W: trainer("cs_fsdp_8gpu_rank5", H200, tuple(range(8)), 240, s, node(224, 70, 85),
                      Pod("slurm", "90311"), cores(0, 96),
                      lambda t: {"slow": {5: 1.6}} if inwin(t, W) else {},
                      gpu_s=1.6, load_s=1.0, workers=4, per_step=8 * 65536,
                      cmd="torchrun --nproc-per-node 8 train_fsdp.py"))

W = (90.0, 190.0)
add("cs_ddp_4gpu_mild", "training", "collective_straggler", (2,), W, "trainer", 4, H100, 1.0,
    "uneven length-bucketed sharding gives rank 2 the long sequences: it computes 1.3x longer "
    "and ranks 0,1,3 wait in all-reduce",
    lambda s, W=W: trainer("cs_ddp_4gpu_mild", H100, (0, 1, 2, 3), 230, s, node(128, 50, 60),
                      k8s("llm/ddp-3b"), cores(0, 32),
                      lambda t: {"slow": {2: 1.32}} if inwin(t, W) else {},
                      gpu_s=1.0, per_step=4 * 32768,
                      cmd="torchrun --nproc-per-node 4 train.py"))

# =========================================================== throttling
W = (100.0, 210.0)
add("th_train_thermal", "training", "throttling", (1,), W, "trainer", 1, H100, 1.0,
    "a failed chassis fan: GPU 1 heats to 88 C and clocks fall from 1980 to ~1350 MHz "
    "(thermal slowdown); steps 1.4x",
    lambda s, W=W: _thermal(s))


def _thermal(s):
    def fault(t):
        if not inwin(t, (100.0, 210.0)):
            return {}
        x = ramp(t, 100, 130, 0.0, 1.0)
        return {"gpu_mult": 1 + 0.42 * x}
    fr = trainer("th_train_thermal", H100, (1,), 250, s, node(96, 40, 45), k8s("llm/ft-13b"),
                 cores(12, 12), fault, gpu_s=0.9, all_gpus=(0, 1))
    # clocks and temperature as NVML reads them (rewritten per GPU sample)
    import dataclasses
    out = []
    temp = None
    for f in fr:
        t = f.time_wall_s - s
        gs = []
        for g in f.gpus:
            if g.index == 1 and inwin(t, (100.0, 210.0)):
                x = ramp(t, 100, 130, 0.0, 1.0)
                clock = round((1980 - 620 * x) / 15) * 15
                temp = 68 + 20 * ramp(t, 95, 125, 0.0, 1.0)
                reasons = ("thermal (sw)", "hw slowdown") if x > 0.3 else ("thermal (sw)",)
                g = dataclasses.replace(g, sm_clock_mhz=float(clock), temp_c=float(round(temp)),
                                        throttle=reasons, power_w=round((g.power_w or 0) * (1 - 0.3 * x), 2))
            elif g.index == 1 and t >= 210:
                g = dataclasses.replace(g, temp_c=float(round(max(g.temp_c or 0, 88 - (t - 210) * 0.8))))
            gs.append(g)
        out.append(dataclasses.replace(f, gpus=tuple(gs)))
    return out


W = (80.0, 190.0)
add("th_vllm_powerbrake", "serving", "throttling", (0,), W, "vllm", 1, H200, 1.0,
    "a PSU fault asserts the power brake intermittently: clocks drop to ~700 MHz for 15 s of every "
    "25 s, ITL 2.3x during each",
    lambda s, W=W: run_server(ServeCfg(
        "th_vllm_powerbrake", "vllm", H200, (0,), 1.0, 230, s, node(128, 50, 60),
        k8s("serving/llama-70b-fp8"), cores(0, 16),
        lambda t: ({"clock": 0.36, "throttle": ("power brake", "hw slowdown"), "rate": 3.0,
                    "step_ms": 22.0} if intermittent(t, W, 15, 10) else {"rate": 3.0, "step_ms": 22.0}), clients=24,
        model_name="meta-llama/Llama-3.3-70B-Instruct-FP8", weights_gib=68, kv_pool_tokens=300000,
        kv_bytes_per_token=163840)))

# =========================================================== tiny_kernels
W = (100.0, 200.0)
add("tk_train_microbatch", "training", "tiny_kernels", (0,), W, "trainer", 1, H100, 1.0,
    "a config change sets micro-batch 1 with gradient accumulation and disables torch.compile: "
    "thousands of tiny kernels keep util at 97% while SM activity falls to 20%; samples/s -45%",
    lambda s, W=W: trainer("tk_train_microbatch", H100, (0,), 240, s, node(96, 40, 45),
                      k8s("nlp/roberta-ft"), cores(8, 8),
                      lambda t: ({"gpu_mult": 1.8, "sm_mult": 0.24, "main_mult": 1.6}
                                 if inwin(t, W) else {}),
                      gpu_s=0.6, main_need=0.3, unit="samples", per_step=256,
                      launch=lambda t, rng, pid: (launch_hist(
                          rng, "cuLaunchKernel", pid, 52000 if inwin(t, W) else 9000, 3800, 0.3),
                          launch_hist(rng, "cudaLaunchKernel", pid, 21000 if inwin(t, W) else 4000,
                                      4500, 0.3))))

W = (90.0, 190.0)
add("tk_cuda_job_nocounter", "training", "tiny_kernels", (3,), W, "none", 1, H100, 1.0,
    "a plain CUDA simulation (no progress counter) switches to a per-particle kernel loop: "
    "util stays 99%, its own log shows iterations 2x slower",
    lambda s, W=W: trainer("tk_cuda_job_nocounter", H100, (3,), 230, s, node(64, 20, 25),
                      Pod("slurm", "31777"), cores(48, 4),
                      lambda t: ({"gpu_mult": 2.0, "sm_mult": 0.2} if inwin(t, W) else {}),
                      gpu_s=0.25, main_need=0.05, load_s=0.01, workers=0, unit=None,
                      cmd="./md_sim --input big.tpr --gpu 3", all_gpus=(0, 1, 2, 3),
                      launch=lambda t, rng, pid: (launch_hist(
                          rng, "cudaLaunchKernel", pid, 150000 if inwin(t, W) else 3000, 2600, 0.25),)))

# =========================================================== memory_bandwidth
W = (90.0, 200.0)
add("mb_vllm_longctx", "serving", "memory_bandwidth", (0,), W, "vllm", 1, H100, 1.0,
    "a tenant starts sending 24k-token RAG contexts: attention KV reads saturate HBM (DRAM 92%), "
    "ITL 2.2x",
    lambda s, W=W: run_server(ServeCfg(
        "mb_vllm_longctx", "vllm", H100, (0,), 1.0, 240, s, node(96, 40, 45),
        k8s("serving/rag-8b"), cores(0, 8),
        lambda t: ({"prompt": 9000.0, "cached": 0.9, "kv_ms_per_mtok": 26.0, "dram": 0.93,
                    "sm": 0.55, "tensor": 0.08}
                   if inwin(t, W) else {}),
        kv_pool_tokens=480000, clients=32)))

W = (80.0, 180.0)
add("mb_sglang_batch", "serving", "memory_bandwidth", (0,), W, "sglang", 1, H200, 1.0,
    "an agent workload grows the running batch's contexts to ~16k tokens; decode is bound by "
    "HBM bandwidth (DRAM 90%), ITL 1.8x",
    lambda s, W=W: run_server(ServeCfg(
        "mb_sglang_batch", "sglang", H200, (0,), 1.0, 220, s, node(128, 50, 60),
        k8s("agents/sglang-14b"), cores(0, 12),
        lambda t: ({"prompt": ramp(t, 80, 100, 1200, 14000), "cached": 0.85, "kv_ms_per_mtok": 30.0,
                    "dram": 0.9, "sm": 0.5, "tensor": 0.07}
                   if inwin(t, W) else {}), clients=32,
        model_name="Qwen/Qwen2.5-14B-Instruct", weights_gib=28, kv_pool_tokens=1200000,
        kv_bytes_per_token=196608)))

# =========================================================== kv_pressure
W = (90.0, 200.0)
add("kv_vllm_preempt", "serving", "kv_pressure", (0,), W, "vllm", 1, H100, 1.0,
    "longer conversations fill the KV pool of a pod with gpu_memory_utilization 0.6: "
    "preemptions, requests waiting for capacity, TTFT 4x",
    lambda s, W=W: run_server(ServeCfg(
        "kv_vllm_preempt", "vllm", H100, (0,), 1.0, 240, s, node(96, 40, 45),
        k8s("serving/chat-8b-lowmem"), cores(0, 8),
        lambda t: ({"prompt": ramp(t, 90, 110, 900, 3800), "kv_limit": 0.97, "preempt": 1.6}
                   if inwin(t, W) else {}),
        kv_pool_tokens=140000, clients=48)))

W = (80.0, 190.0)
add("kv_sglang_retract", "serving", "kv_pressure", (0,), W, "sglang", 1, A100, 1.0,
    "SGLang's pool fills with long-output requests: decode retractions every few seconds, queue "
    "builds, TTFT 3x",
    lambda s, W=W: run_server(ServeCfg(
        "kv_sglang_retract", "sglang", A100, (0,), 1.0, 230, s, node(64, 30, 35),
        k8s("inference/sglang-8b-a100"), cores(0, 8),
        lambda t: ({"out": 600.0, "prompt": 5000.0, "kv_limit": 0.98, "preempt": 1.2,
                    "retract": 0.9} if inwin(t, W) else {"out": 600.0, "prompt": 1500.0}),
        kv_pool_tokens=160000, clients=40)))

# =========================================================== oversized_request
W = (90.0, 150.0)
add("os_vllm_n8_logprobs", "serving", "oversized_request", (0,), W, "vllm", 1, H200, 1.0,
    "one client sends n=8, logprobs=20 requests in a loop: every co-scheduled request's ITL 2.4x "
    "and TTFT 4x while tokens/s rise",
    lambda s, W=W: run_server(ServeCfg(
        "os_vllm_n8_logprobs", "vllm", H200, (0,), 1.0, 200, s, node(128, 40, 50),
        k8s("serving/qwen-7b"), cores(0, 8),
        lambda t: ({"extra_ms": 48.0, "big_frac": 0.06, "big_n": 8.0, "n": 1.45, "host_ms": 9.0,
                    "sm": 0.5, "ttft_extra": 1.4} if inwin(t, W) else {}),
        model_name="Qwen/Qwen2.5-7B-Instruct", clients=16)))

W = (100.0, 190.0)
add("os_vllm_intermittent", "serving", "oversized_request", (1,), W, "vllm", 2, H100, 1.0,
    "a batch client retries n=4, logprobs=10 requests in bursts; a TP=2 pod's ITL p99 1.8x in "
    "each burst",
    lambda s, W=W: run_server(ServeCfg(
        "os_vllm_intermittent", "vllm", H100, (1, 2), 1.0, 230, s, node(128, 50, 60),
        k8s("serving/llama-70b-tp2"), cores(0, 16),
        lambda t: ({"extra_ms": 26.0, "big_frac": 0.08, "big_n": 4.0, "n": 1.25, "host_ms": 7.0,
                    "ttft_extra": 0.6} if intermittent(t, W, 20, 10) else {}), clients=24,
        model_name="meta-llama/Llama-3.3-70B-Instruct", weights_gib=131, kv_pool_tokens=250000,
        kv_bytes_per_token=327680, all_gpus=(0, 1, 2, 3))))

# =========================================================== prefill_interference
W = (90.0, 190.0)
add("pi_vllm_longprompts", "serving", "prefill_interference", (0,), W, "vllm", 1, H100, 1.0,
    "document-summarisation traffic (8k-token prompts) joins chat traffic: chunked prefill in "
    "most steps, chat ITL p99 2.5x",
    lambda s, W=W: run_server(ServeCfg(
        "pi_vllm_longprompts", "vllm", H100, (0,), 1.0, 230, s, node(96, 40, 45),
        k8s("serving/chat-mixed"), cores(0, 8),
        lambda t: ({"pf_rate": 1.1, "pf_tokens": 8000.0, "tensor": 0.45}
                   if inwin(t, W) else {}), clients=32)))

W = (80.0, 170.0)
add("pi_sglang_moderate", "serving", "prefill_interference", (0,), W, "sglang", 1, H200, 1.0,
    "a batch of long-prompt classification requests interleaves prefill with decode: ITL p99 "
    "1.7x, TTFT up",
    lambda s, W=W: run_server(ServeCfg(
        "pi_sglang_moderate", "sglang", H200, (0,), 1.0, 220, s, node(128, 40, 50),
        k8s("inference/sglang-8b-c"), cores(8, 8),
        lambda t: ({"pf_rate": 1.0, "pf_tokens": 4000.0, "tensor": 0.4}
                   if inwin(t, W) else {}), clients=32)))

# =========================================================== host_launch_jitter
W = (90.0, 190.0)
add("hlj_vllm_irq", "serving", "host_launch_jitter", (0,), W, "vllm", 1, H100, 1.0,
    "NIC interrupts are steered onto the engine core's CPU: its launch calls are preempted for "
    "ms at a time (eBPF), ITL p99 2x, the tree's CPU and the host run queue unchanged",
    lambda s, W=W: run_server(ServeCfg(
        "hlj_vllm_irq", "vllm", H100, (0,), 1.0, 230, s, node(96, 40, 45),
        k8s("serving/chat-8b-ebpf"), cores(0, 8),
        lambda t: ({"jitter_frac": 0.2, "jitter_ms": 35.0, "invol": 300, "host_ms": 7.5}
                   if inwin(t, W) else {"host_ms": 7.5}),
        launch=True, clients=32)))

W = (100.0, 200.0)
add("hlj_train_irq", "training", "host_launch_jitter", (0,), W, "trainer", 1, H200, 1.0,
    "a launch-bound trainer's launch thread is preempted by softirq storms from a neighbour's "
    "network traffic: cuLaunchKernel tail to ms, steps 1.3x",
    lambda s, W=W: trainer("hlj_train_irq", H200, (0,), 240, s, node(128, 50, 60), k8s("rl/ppo-policy"),
                      cores(0, 8),
                      lambda t: ({"main_mult": 1.35, "invol": 400} if inwin(t, W) else {}),
                      gpu_s=0.35, main_need=0.33, density=0.7, sm=0.55,
                      launch=lambda t, rng, pid: (launch_hist(
                          rng, "cuLaunchKernel", pid, 30000, 4000, 0.3,
                          0.02 if inwin(t, W) else 0.0, 1.2e6),
                          launch_hist(rng, "cudaLaunchKernel", pid, 12000, 4800, 0.3,
                                      0.02 if inwin(t, W) else 0.0, 1.2e6))))

# =========================================================== spec_decode_rejected
W = (90.0, 200.0)
add("sd_vllm_eagle_shift", "serving", "spec_decode_rejected", (0,), W, "vllm", 1, H100, 1.0,
    "traffic shifts to code in another language: EAGLE draft acceptance falls from 0.72 to 0.15, "
    "ITL 1.7x at busy GPU",
    lambda s, W=W: run_server(ServeCfg(
        "sd_vllm_eagle_shift", "vllm", H100, (0,), 1.0, 240, s, node(96, 40, 45),
        k8s("serving/chat-8b-eagle"), cores(0, 8),
        lambda t: ({"accept": ramp(t, 90, 105, 0.72, 0.15), "cached": 0.7} if inwin(t, W)
                   else {"accept": 0.72, "cached": 0.7}),
        spec=True, clients=32)))

W = (80.0, 180.0)
add("sd_llamacpp_draft", "serving", "spec_decode_rejected", (0,), W, "llamacpp", 1, L40S, 1.0,
    "a llama.cpp pod's draft model mismatches a new fine-tune: acceptance 0.65 to 0.1, tokens/s -35%",
    lambda s, W=W: run_server(ServeCfg(
        "sd_llamacpp_draft", "llamacpp", L40S, (0,), 1.0, 220, s, node(64, 20, 24),
        k8s("edge/llama-cpp-spec"), cores(0, 8),
        lambda t: ({"accept": 0.1, "overlap": 0.0} if inwin(t, W) else {"accept": 0.65, "overlap": 0.0}),
        clients=6,
        model_name="llama-3-8b-ft-q8.gguf", weights_gib=8.5, kv_pool_tokens=65536, max_seqs=8,
        spec=True)))

# =========================================================== healthy look-alikes
H = None
add("h_busy_node_rq", "healthy", None, None, None, "vllm", 1, H100, 1.0,
    "a busy node: host run queue ~3x the pod's 8 cores all day, the pod's CPU holds",
    lambda s, W=W: run_server(ServeCfg(
        "h_busy_node_rq", "vllm", H100, (0,), 1.0, 160, s, node(64, 55, 24 * 1.0 + 0, 6.0, 0.2),
        k8s("serving/chat-8b-busy"), cores(0, 8), lambda t: {"host_ms": 12.0}, all_gpus=(0, 1),
        clients=32)))

add("h_neighbours_batch_start", "healthy", None, None, None, "trainer", 1, H200, 1.0,
    "neighbour pods start a big CPU batch job: host run queue 40 to 200 and PSI to 25%, the "
    "trainer on its own cpuset unaffected",
    lambda s, W=W: trainer("h_neighbours_batch_start", H200, (0,), 170, s,
                      HostEnv(128, lambda t: ramp(t, 60, 80, 40, 122), lambda t: ramp(t, 60, 80, 40, 200),
                              lambda t: ramp(t, 60, 80, 1, 22)),
                      k8s("llm/ft-steady"), cores(0, 12), lambda t: {}, gpu_s=0.8))

add("h_pod_at_quota", "healthy", None, None, None, "vllm", 1, H100, 1.0,
    "a vLLM pod runs steadily at its 4-core limit: 3-6% of periods throttled at peaks, work steady",
    lambda s, W=W: run_server(ServeCfg(
        "h_pod_at_quota", "vllm", H100, (0,), 1.0, 150, s, node(96, 40, 45),
        k8s("serving/chat-8b-tight"), cores(0, 16),
        lambda t: {"throttled": 0.04 + 0.03 * math.sin(t / 9.0), "rate": 4.5},
        quota=lambda t: 4.0, clients=32)))

add("h_train_eval_ckpt", "healthy", None, None, None, "trainer", 1, H100, 1.0,
    "a trainer with a forward-only evaluation of 10 s and a checkpoint of 6 s every minute "
    "(counter pauses, util dips)",
    lambda s, W=W: trainer("h_train_eval_ckpt", H100, (0,), 180, s, node(96, 40, 45),
                      k8s("llm/ft-eval"), cores(0, 12),
                      lambda t: ({"eval": True} if 40 <= (t % 60) < 50 else
                                 {"ckpt": 6.0} if 50 <= (t % 60) < 52 else {}),
                      gpu_s=0.8))

add("h_train_seqlen_buckets", "healthy", None, None, None, "trainer", 1, H200, 1.0,
    "step time varies 0.5-2.2 s with length-bucketed batches; tokens per step vary with it",
    lambda s, W=W: trainer("h_train_seqlen_buckets", H200, (0,), 170, s, node(128, 40, 50),
                      k8s("llm/pretrain-buckets"), cores(0, 12), lambda t: {},
                      gpu_s=0.5, seq_buckets=lambda t: 1 + 1.4 * (0.5 + 0.5 * math.sin(t / 7.3)) ** 2))

add("h_dataloader_epoch", "healthy", None, None, None, "trainer", 1, H100, 1.0,
    "at each epoch boundary (every 50 s) the DataLoader respawns workers: util dips for ~4 s",
    lambda s, W=W: trainer("h_dataloader_epoch", H100, (0,), 170, s, node(96, 40, 45),
                      k8s("vision/vit-b"), cores(0, 16),
                      lambda t: {"extra_gap": 3.5} if (t % 50) < 1.0 and t > 5 else {},
                      gpu_s=0.7, unit="samples", per_step=1024))

add("h_sidecar_1pct", "healthy", None, None, None, "vllm", 1, H200, 1.0,
    "a monitoring sidecar's health probe runs a tiny kernel: ~1% SM in NVML's process list",
    lambda s, W=W: run_server(ServeCfg(
        "h_sidecar_1pct", "vllm", H200, (0,), 1.0, 150, s, node(128, 40, 50),
        k8s("serving/chat-8b-probe"), cores(0, 8), lambda t: {}, clients=28,
        others=lambda t: {0: [(other_proc(4410, "gpu-probe", "/bin/gpu-probe --interval 1s", 0.3,
                                          "monitoring/gpu-probe-x7"), 0.01, 0.3)]})))

add("h_vllm_rolling_restart", "healthy", None, None, None, "vllm", 1, H100, 1.0,
    "a rolling restart: endpoint gone, VRAM empties, the new pod loads weights and profiles for "
    "40 s, counters restart from 0, traffic returns",
    lambda s, W=W: run_server(ServeCfg(
        "h_vllm_rolling_restart", "vllm", H100, (0,), 1.0, 180, s, node(96, 40, 45),
        k8s("serving/chat-8b-roll"), cores(0, 8),
        lambda t: ({"up": False, "loaded": 0.0} if 60 <= t < 70 else
                   {"up": False, "loaded": ramp(t, 70, 100, 0.05, 0.95)} if 70 <= t < 100 else
                   {"rate": ramp(t, 100, 130, 0.5, 4.0)} if 100 <= t < 130 else {"rate": 4.0}))))

add("h_night_demand_fall", "healthy", None, None, None, "sglang", 1, H200, 1.0,
    "demand falls at night from 8 to 0.5 requests/s over two minutes; GPU util follows",
    lambda s, W=W: run_server(ServeCfg(
        "h_night_demand_fall", "sglang", H200, (0,), 1.0, 180, s, node(128, 30, 35),
        k8s("inference/sglang-8b-night"), cores(0, 8),
        lambda t: {"rate": ramp(t, 40, 160, 8.0, 0.5)})))

add("h_idle_kv_reserved", "healthy", None, None, None, "vllm", 1, H200, 1.0,
    "an idle vLLM pod: no requests, 90% of VRAM held by weights and the reserved KV pool",
    lambda s, W=W: run_server(ServeCfg(
        "h_idle_kv_reserved", "vllm", H200, (0,), 1.0, 120, s, node(128, 40, 50),
        k8s("serving/chat-8b-idle"), cores(0, 8), lambda t: {"rate": 0.0},
        kv_pool_tokens=900000)))

add("h_train_8gpu_fsdp", "healthy", None, None, None, "trainer", 8, H200, 1.0,
    "a healthy 8-GPU FSDP job: all ranks equal, NCCL all-reduce each step",
    lambda s, W=W: trainer("h_train_8gpu_fsdp", H200, tuple(range(8)), 150, s, node(224, 70, 85),
                      Pod("slurm", "90400"), cores(0, 96), lambda t: {}, gpu_s=1.6,
                      per_step=8 * 65536, cmd="torchrun --nproc-per-node 8 train_fsdp.py"))

add("h_multitenant_node", "healthy", None, None, None, "vllm", 1, H100, 1.0,
    "one of four pods on a 4-GPU node: neighbours' GPUs busy and bursty, the pod's own work steady",
    lambda s, W=W: run_server(ServeCfg(
        "h_multitenant_node", "vllm", H100, (3,), 1.0, 150, s, node(128, 80, 95, 4.0, 0.25, 41.0),
        k8s("serving/tenant-d"), cores(96, 8), lambda t: {}, all_gpus=(0, 1, 2, 3), clients=24,
        neighbours=lambda t: {0: GpuIn(busy=[0.98] * 5, sm_eff=0.85, procs=[(other_proc(
            5101, "python3", "python train.py", 72, "train/a"), 1.0, 1.0)]),
            1: GpuIn(busy=[0.2 + 0.7 * (math.sin(t / 5) > 0)] * 5, sm_eff=0.6, procs=[(other_proc(
                5102, "python3", "python infer_batch.py", 40, "batch/b"), 1.0, 0.9)]),
            2: GpuIn(busy=[0.5] * 5, sm_eff=0.5, procs=[(other_proc(
                5103, "VLLM::EngineCor", "VLLM::EngineCore", 70, "serving/tenant-c"), 1.0, 0.8)])})))

add("h_train_55util", "healthy", None, None, None, "trainer", 1, H200, 1.0,
    "a small model's trainer healthy at 55% util (launch-bound, steady)",
    lambda s, W=W: trainer("h_train_55util", H200, (0,), 150, s, node(128, 40, 50),
                      k8s("rl/small-policy"), cores(0, 8), lambda t: {},
                      gpu_s=0.3, main_need=0.5, density=0.98, sm=0.6))

add("h_cuda_job_nocounter", "healthy", None, None, None, "none", 1, A100, 1.0,
    "a plain CUDA job with no counter, steady at 99%",
    lambda s, W=W: trainer("h_cuda_job_nocounter", A100, (0,), 130, s, node(64, 20, 25),
                      Pod("slurm", "31800"), cores(0, 4), lambda t: {}, gpu_s=0.25,
                      main_need=0.05, load_s=0.01, workers=0, unit=None, cmd="./md_sim --gpu 0"))

add("h_sglang_bursty", "healthy", None, None, None, "sglang", 1, H100, 1.0,
    "bursty but within capacity: 5-s bursts of 2x traffic every 40 s",
    lambda s, W=W: run_server(ServeCfg(
        "h_sglang_bursty", "sglang", H100, (0,), 1.0, 160, s, node(96, 40, 45),
        k8s("inference/sglang-bursty"), cores(0, 8),
        lambda t: {"rate": 6.0 if (t % 40) < 5 else 3.0})))

add("h_llamacpp_steady", "healthy", None, None, None, "llamacpp", 1, L40S, 1.0,
    "a llama.cpp pod with an 8-core limit, never throttled, steady",
    lambda s, W=W: run_server(ServeCfg(
        "h_llamacpp_steady", "llamacpp", L40S, (0,), 1.0, 130, s, node(64, 20, 24),
        k8s("edge/llama-cpp-steady"), cores(0, 8), lambda t: {"throttled": 0.0, "overlap": 0.0, "host_per_seq_ms": 1.0, "step_ms": 14.0},
        clients=6,
        model_name="llama-3-8b-q4_k_m.gguf", weights_gib=4.6, kv_pool_tokens=65536, max_seqs=8,
        quota=lambda t: 8.0)))

add("h_train_quota_peaks", "healthy", None, None, None, "trainer", 1, H100, 1.0,
    "a trainer pod at its quota at step peaks: ~5% of periods throttled all day, steps steady",
    lambda s, W=W: trainer("h_train_quota_peaks", H100, (0,), 150, s, node(96, 40, 45),
                      k8s("llm/ft-quota"), cores(0, 16), lambda t: {"quota": 2.6},
                      quota=2.6, workers=4, gpu_s=0.8))

add("h_scrape_timeouts", "healthy", None, None, None, "vllm", 1, H100, 1.0,
    "a busy node where ~5% of the engine's metric scrapes time out; serving steady",
    lambda s, W=W: run_server(ServeCfg(
        "h_scrape_timeouts", "vllm", H100, (0,), 1.0, 150, s, node(64, 50, 70, 5.0, 0.2),
        k8s("serving/chat-8b-slowscrape"), cores(0, 8),
        lambda t: {"scrape_fail": (int(t * 7.3) % 19) == 3}, clients=32)))

add("h_train_powercap", "healthy", None, None, None, "trainer", 1, H200, 1.0,
    "a matmul-heavy trainer at the 700 W power cap with clocks slightly down, as healthy H200s run",
    lambda s, W=W: trainer("h_train_powercap", H200, (0,), 140, s, node(128, 40, 50),
                      k8s("llm/pretrain-70b-shard"), cores(0, 12), lambda t: {},
                      gpu_s=1.8, sm=0.95))

add("h_spec_decode_steady", "healthy", None, None, None, "vllm", 1, H100, 1.0,
    "a vLLM pod with speculative decoding at a steady 0.6-0.7 acceptance",
    lambda s, W=W: run_server(ServeCfg(
        "h_spec_decode_steady", "vllm", H100, (0,), 1.0, 150, s, node(96, 40, 45),
        k8s("serving/chat-8b-spec"), cores(0, 8),
        lambda t: {"accept": 0.65 + 0.05 * math.sin(t / 13.0)}, spec=True, clients=32)))

add("h_train_2s_tick", "healthy", None, None, None, "trainer", 4, H100, 2.0,
    "a 4-GPU trainer with 3.5 s steps recorded at a 2 s tick: the counter moves every other tick",
    lambda s, W=W: trainer("h_train_2s_tick", H100, (0, 1, 2, 3), 180, s, node(128, 50, 60),
                      k8s("llm/ddp-7b-long"), cores(0, 32), lambda t: {}, tick=2.0,
                      gpu_s=3.4, per_step=4 * 131072, cmd="torchrun --nproc-per-node 4 train.py"))
