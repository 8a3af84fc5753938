"""The rest of the catalog: GPU sharing, training pathologies, host and board causes, healthy look-alikes."""
from __future__ import annotations

from . import common as C
from .catalog import MODELS, W, bystanders, first_when, lengths, mk, res, trace
from .serving import Serve
from .training import Trainer
from .world import Steady


def tr(nd, gpus, user, cmd, **kw):
    return nd.add(Trainer(nd.rng, gpus, nd.board, start_wall=nd.start, user=user, job=kw.pop("job", C.slurm_job(nd.rng)),
                          cmd=cmd, **kw))


# ------------------------------------------------------------ gpu_shared
@trace("training", "gpu_shared")
def shared_notebook_on_lora_gpu_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 8, 128, 15, 10)
    bystanders(nd, [0, 1], "dkim", "train")
    tr(nd, [3], "spatel", "python finetune_lora.py --model llama3-8b --bs 8", t_compute=0.55, tensor=0.5, mem_gib=34,
       workers=4, cores=8, t_load=0.12)
    nd.add(Steady(nd.rng, [3], "jwu", "", "python", "python -m ipykernel_launcher -f /home/jwu/.local/share/jupyter/runtime/kernel-7c1.json",
                  21, 0.7, 0.6, 0.35, 0.3, cores=1.0, start=nd.start + 140, on=lambda t: t >= 140, proc_name="python"))
    bystanders(nd, [5, 6], "mruiz", "md")
    fr = nd.run(420)
    return res(nd, fr, "", W(nd, 140, 420), (3,),
               "A Jupyter kernel started outside Slurm by another user is training on GPU 3, which Slurm gave to spatel's LoRA job; the LoRA step time went up ~2x.")


@trace("serving", "gpu_shared")
def shared_k8s_timeslice_l40s(name):
    nd = mk(name, "L40S", 2, 48, 27, 14, style="pcie")
    nd.add(Serve(nd.rng, "vllm", MODELS["qwen-7b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 2.0,
                 lengths=lengths(500, 0.5, 250, 0.5), user="svc-course", pod="cv-course/vllm-qwen7b-0", mem_util=0.6))
    on = lambda t: 120 <= t < 300 or 360 <= t < 480
    nd.add(Steady(nd.rng, [0], "sd-demo", "", "python", "python app.py --model stabilityai/sdxl-turbo", 11, 0.85, 0.8, 0.55, 0.4,
                  cores=1.0, start=nd.start - 500, on=on, proc_name="python"))
    nd.procs_pod = True
    fr = nd.run(540)
    return res(nd, fr, "vllm", W(nd, 120, 480), (0,),
               "The node's time-slicing plugin put an SDXL demo pod on the same L40S as the course's vLLM; whenever it generates images the chat ITL doubles.")


@trace("training", "gpu_shared")
def shared_sweep_packed_4090(name):
    nd = mk(name, "RTX4090", 2, 32, 38, 21, style="pcie")
    tr(nd, [0], "ebrown", "python sweep_agent.py --trial 17 --lr 3e-4", t_compute=0.08, tensor=0.35, sm_c=0.7, mem_gib=5,
       workers=2, cores=8, t_load=0.02, job="4411873")
    for k in range(3):
        nd.add(Steady(nd.rng, [0], "ebrown", "4411873", "python", f"python sweep_agent.py --trial {18 + k}", 5, 0.75, 0.6, 0.3, 0.25,
                      cores=1.0, start=nd.start + 30 * k, on=(lambda t, k=k: t >= 40 + 30 * k), proc_name="python"))
    fr = nd.run(360)
    return res(nd, fr, "", W(nd, 40, 360), (0,),
               "The W&B sweep agent packed four trials onto one 4090 (the second GPU idle); each trial now runs ~4x slower than alone.")


# ------------------------------------------------------------ collective straggler
@trace("training", "collective_straggler")
def straggler_ddp_thermal_rank5_a100(name):
    def envs(t):
        return {5: C.Env(cooling=2.4, inlet_c=27)}
    nd = mk(name, "A100-SXM4-80GB", 8, 128, 22, 3, envs=envs)
    tr(nd, list(range(8)), "okafor", "torchrun --nproc_per_node 8 train.py --model vit_h14 --bs 64",
       t_compute=0.62, comm_s=0.04, comm_total=1.3e9, tensor=0.55, mem_gib=62, workers=6, cores=96, t_load=0.2)
    fr = nd.run(600)
    a = first_when(fr, lambda f: "thermal (sw)" in f.gpus[5].throttle, nd.start + 200)
    return res(nd, fr, "", (round(a, 3), round(nd.start + 600, 3)), (5,),
               "GPU 5's heatsink airflow is blocked: it heats past 88 C and slows its clocks; the other seven ranks wait in NCCL each step.")


@trace("training", "collective_straggler")
def straggler_fsdp_riser_gen1_h100(name):
    nd = mk(name, "H100-SXM", 8, 112, 47, 12)
    tr(nd, [0, 1, 2, 3], "hlindqvist", "torchrun --nproc_per_node 4 fsdp_train.py --model llama-7b --seq 4096",
       t_compute=0.9, comm_s=0.05, comm_total=3.5e9, tensor=0.6, mem_gib=71, workers=4, cores=56, t_load=0.15,
       rank_mods=lambda t: {2: {"host_extra": 1.45}}, exporter="tokens", tokens_per_step=4 * 8 * 4096)
    bystanders(nd, [4, 5, 6, 7], "pgarcia", "train")
    fr = nd.run(420)
    return res(nd, fr, "trainer", W(nd, 0, 420), (2,),
               "GPU 2 trained at PCIe Gen1 x8 after a riser fault: its host-to-device input copies take ~0.8 s a step and ranks 0,1,3 wait for it in NCCL.")


@trace("training", "collective_straggler")
def straggler_megatron_mild_h200(name):
    nd = mk(name, "H200", 8, 128, 99, 2)
    tr(nd, list(range(8)), "rsingh", "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2",
       t_compute=1.1, comm_s=0.06, comm_total=6e9, tensor=0.62, mem_gib=118, workers=2, cores=112, t_load=0.1,
       rank_mods=lambda t: ({6: {"slow": 1.17}} if t >= 120 else {}), bubble={k: 0.05 for k in range(8)})
    fr = nd.run(480)
    return res(nd, fr, "", W(nd, 120, 480), (6,),
               "From minute 2 rank 6 runs ~17% slower than its tensor-parallel peers (its GPU shows higher busy share, the rest wait in NCCL); mild but steady.")


# ------------------------------------------------------------ input stall
@trace("training", "input_stall")
def input_lustre_mds_stall_a100(name):
    nd = mk(name, "A100-SXM4-40GB", 4, 64, 10, 16)
    ep = lambda t: 130 <= t < 230 or 330 <= t < 400
    tr(nd, [0, 1, 2, 3], "mfischer", "torchrun --nproc_per_node 4 train_vit.py --data /lustre/datasets/imagenet21k",
       t_compute=0.35, comm_s=0.02, comm_total=0.35e9, tensor=0.5, mem_gib=31, workers=8, cores=64, t_load=1.8, load_io=0.85,
       mods=lambda t: {"load_mult": 5.0} if ep(t) else {})
    fr = nd.run(480)
    return res(nd, fr, "", W(nd, 130, 400), None,
               "Lustre metadata server overloaded twice: JPEG reads stall, GPUs idle most of each step for 1-2 minutes at a time; workers sit in I/O wait, not on CPU.")


@trace("training", "input_stall")
def input_gnn_cpu_sampler_mild_h100pcie(name):
    nd = mk(name, "H100-PCIE", 2, 32, 60, 14, style="pcie")
    tr(nd, [1], "yzhang", "python train_graphsage.py --dataset ogbn-papers100M --num-workers 3", t_compute=0.16, tensor=0.2,
       sm_c=0.6, dram_c=0.5, mem_gib=22, workers=3, cores=16, t_load=0.58, load_io=0.1)
    fr = nd.run(360)
    return res(nd, fr, "", W(nd, 0, 360), (1,),
               "GraphSAGE neighbour sampling on 3 CPU workers cannot keep up: the GPU waits for the next mini-batch ~20% of each step.")


@trace("training", "input_stall")
def input_lora_tokenize_one_worker_4090(name):
    nd = mk(name, "RTX4090", 4, 32, 66, 20, style="pcie")
    tr(nd, [2], "cmorales", "python qlora.py --model mistral-7b --num_workers 1 --tokenize-on-the-fly", t_compute=0.3,
       tensor=0.45, mem_gib=19, workers=1, cores=8, t_load=0.55, load_io=0.05)
    bystanders(nd, [0], "vpetrov", "train")
    fr = nd.run(300)
    return res(nd, fr, "", W(nd, 0, 300), (2,),
               "QLoRA run tokenises on the fly in a single dataloader worker; the 4090 waits ~45% of every step.")


# ------------------------------------------------------------ host CPU contention
@trace("training", "host_cpu_contention")
def cpu_workers_over_cpuset_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 8, 128, 18, 9)
    tr(nd, [4, 5, 6, 7], "bnovak", "torchrun --nproc_per_node 4 train.py --num_workers 16 --aug randaugment",
       t_compute=0.28, comm_s=0.02, comm_total=0.5e9, tensor=0.5, mem_gib=40, workers=16, cores=8, t_load=0.9,
       t_host=0.06, mods=lambda t: {"worker_cpu": 0.95})
    bystanders(nd, [0, 1, 2, 3], "gkumar", "train")
    fr = nd.run(420)
    return res(nd, fr, "", W(nd, 0, 420), None,
               "Job asked Slurm for 8 CPUs but starts 64 dataloader workers: the cpuset's run queue is ~70, the rank threads get a fraction of a core and the GPUs idle between kernels.")


@trace("serving", "host_cpu_contention")
def cpu_k8s_quota_vllm_l40s(name):
    nd = mk(name, "L40S", 4, 64, 31, 11, style="pcie", psi=False)
    mods = lambda t: ({"cpu_slow": 6.0, "throttled_frac": 0.55, "cpu_starve": 0.1, "invol_rate": 160} if t >= 90 else {})
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [2], nd.board, start_wall=nd.start,
                 rate=lambda t: 1.0 if t < 90 else 4.0, lengths=lengths(500, 0.5, 220, 0.5), user="svc-course",
                 pod="llm-101/vllm-llama8b-demo-0", quota=1.0, mods=mods, cores_granted=None))
    bystanders(nd, [0, 1], "ssato", "train")
    fr = nd.run(420)
    return res(nd, fr, "vllm", W(nd, 90, 420), None,
               "The demo pod's CPU limit is 1 core: once traffic rose, the engine core spent half its CFS periods throttled and ITL rose ~1.5-2x while the L40S idled between steps.")


@trace("training", "host_cpu_contention")
def cpu_workstation_neighbour_mild_3090(name):
    nd = mk(name, "RTX3090", 4, 24, 74, 13, style="pcie")
    mods = lambda t: ({"other_cores": 20, "other_runnable": 30, "host_mult": 1.7, "invol_rate": 900}
                      if 100 <= t < 330 else {})
    tr(nd, [0, 1], "lmeyer", "torchrun --nproc_per_node 2 train_unet.py", t_compute=0.4, comm_s=0.03, comm_total=0.1e9,
       tensor=0.45, mem_gib=18, workers=3, cores=24, t_load=0.2, t_host=0.12, nvlink=False, mods=mods)
    fr = nd.run(420)
    return res(nd, fr, "", W(nd, 100, 330), None,
               "Someone ran a 20-process CPU job (no cgroups on this old workstation node); PSI ~35%, the trainer's Python threads lose their cores and steps are ~15% slower.")


# ------------------------------------------------------------ host launch jitter (eBPF on)
@trace("training", "host_launch_jitter")
def jitter_irq_core_h100(name):
    nd = mk(name, "H100-SXM", 8, 112, 52, 15)
    nd.ebpf = "uprobes: libcudart.so.12 cudaLaunchKernel, libcuda.so.1 cuLaunchKernel (4 pids)"
    mods = lambda t: ({"jitter": (0.02, 1800.0), "host_extra": 0.06, "offcpu": 2400} if 150 <= t < 390 else
                      {"jitter": (0.0005, 40.0), "offcpu": 60})
    tr(nd, [0, 1, 2, 3], "acosta", "torchrun --nproc_per_node 4 train.py --compile none --bs 4", t_compute=0.09,
       comm_s=0.01, comm_total=0.3e9, tensor=0.45, mem_gib=30, workers=2, cores=56, t_load=0.02, t_host=0.07,
       kernels=1500, ebpf=True, mods=mods)
    bystanders(nd, [4, 5, 6, 7], "pgarcia", "train")
    fr = nd.run(480)
    return res(nd, fr, "", W(nd, 150, 390), None,
               "The ranks' launch threads share cores with the InfiniBand IRQs and ptlrpcd; eBPF shows 2% of launches taking ms and GPU idle gaps between kernels.")


@trace("serving", "host_launch_jitter")
def jitter_vllm_eager_l40s(name):
    nd = mk(name, "L40S", 2, 48, 57, 10, style="pcie")
    nd.ebpf = "uprobes: libcudart.so.12 cudaLaunchKernel (1 pid)"
    mods = lambda t: ({"jitter": (0.01, 900.0), "host_delay": 0.004, "offcpu": 800} if t >= 160 else {"jitter": (0.0003, 30.0), "offcpu": 20})
    sv = nd.add(Serve(nd.rng, "vllm", MODELS["mistral-7b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 1.5,
                      lengths=lengths(400, 0.5, 250, 0.5), graphs=False, user="svc-lab", slurm=C.slurm_job(nd.rng),
                      mods=mods, cmd_extra=" --enforce-eager"))
    sv.ebpf = True
    fr = nd.run(400)
    return res(nd, fr, "vllm", W(nd, 160, 400), None,
               "Eager-mode vLLM (no CUDA graphs): its launch thread is preempted by a co-scheduled job's threads on the same cores; launch tail ~1 ms, ITL up ~35%.")


@trace("training", "host_launch_jitter")
def jitter_ddp_slurm_a100(name):
    nd = mk(name, "A100-SXM4-40GB", 4, 64, 88, 8)
    nd.ebpf = "uprobes: libcudart.so.12 cudaLaunchKernel, libcuda.so.1 cuLaunchKernel (2 pids)"
    ep = lambda t: (60 <= t < 120) or (200 <= t < 260) or (330 <= t < 390)
    mods = lambda t: ({"jitter": (0.04, 3000.0), "host_extra": 0.12, "offcpu": 5000} if ep(t) else {"jitter": (0.0005, 40.0), "offcpu": 40})
    tr(nd, [0, 1], "twilson", "torchrun --nproc_per_node 2 train_bert.py --bs 16", t_compute=0.11, comm_s=0.01,
       comm_total=0.4e9, tensor=0.5, mem_gib=20, workers=2, cores=32, t_load=0.02, t_host=0.08, kernels=1200, ebpf=True, mods=mods)
    fr = nd.run(420)
    return res(nd, fr, "", W(nd, 60, 390), None,
               "Every few minutes the node's health-check script and a Lustre client burst preempt the launch threads; eBPF shows ms-long cudaLaunchKernel calls and the A100s idle between kernels.")


# ------------------------------------------------------------ tiny kernels
@trace("training", "tiny_kernels")
def tiny_rl_eager_mlp_h100(name):
    nd = mk(name, "H100-SXM", 4, 64, 13, 23)
    tr(nd, [1], "kowalski", "python ppo_train.py --env HalfCheetah --num-envs 16 --device cuda", t_compute=0.004, tensor=0.01,
       sm_c=0.07, dram_c=0.02, mem_gib=2.5, workers=0, cores=8, t_load=0.0, t_host=0.0035, kernels=300, step_jitter=0.05)
    fr = nd.run(360)
    return res(nd, fr, "", W(nd, 0, 360), (1,),
               "nvidia-smi says 100%, but it is a PPO loop of tiny MLP kernels: SM activity ~7%, tensor ~1%. The H100 is the wrong tool, or batch the envs.")


@trace("other", "tiny_kernels")
def tiny_lammps_small_system_gh200(name):
    nd = mk(name, "GH200", 1, 72, 41, 18)
    nd.add(Steady(nd.rng, [0], "nbose", C.slurm_job(nd.rng), "lmp", "lmp -sf kk -k on g 1 -in in.lj_small (32k atoms)",
                  1.8, 0.97, 0.11, 0.0, 0.05, cores=1.0, start=nd.start - 900, proc_name="lmp"))
    fr = nd.run(300)
    return res(nd, fr, "lammps", W(nd, 0, 300), (0,),
               "A 32k-atom LAMMPS system on a GH200: GPU-Util 97% but SM activity ~11%; thousands of tiny kernels per timestep, the GPU is mostly waiting on launches.")


@trace("training", "tiny_kernels")
def tiny_batch_shrunk_mild_h200(name):
    nd = mk(name, "H200", 8, 128, 77, 16)
    mods = lambda t: ({"tc_mult": 0.2, "sm_mult": 0.45, "tensor_mult": 0.3} if t >= 150 else {})
    tr(nd, [2], "aolsen", "python train_ddpm.py --bs 4 --grad-accum 64", t_compute=0.25, tensor=0.5, sm_c=0.8, mem_gib=16,
       workers=4, cores=16, t_load=0.02, t_host=0.04, mods=mods, kernels=2500)
    bystanders(nd, [4, 5, 6, 7], "zhao", "train")
    fr = nd.run(420)
    return res(nd, fr, "", W(nd, 150, 420), (2,),
               "After dropping the micro-batch to 4 (grad-accum 64) the diffusion run's kernels are small: util still ~100%, SM activity fell from ~80% to ~35%.")


# ------------------------------------------------------------ throttling
@trace("training", "throttling")
def throttle_bad_fan_a6000(name):
    envs = lambda t: {1: C.Env(cooling=2.1, fan_stuck=22.0, inlet_c=26)}
    nd = mk(name, "A6000", 2, 32, 54, 13, style="pcie", envs=envs)
    tr(nd, [1], "iyilmaz", "python train_seg.py --model mask2former --bs 8", t_compute=0.5, tensor=0.5, mem_gib=36,
       workers=6, cores=16, t_load=0.2)
    fr = nd.run(600)
    a = first_when(fr, lambda f: "thermal (sw)" in f.gpus[1].throttle, nd.start + 200)
    return res(nd, fr, "", (round(a, 3), round(nd.start + 600, 3)), (1,),
               "GPU 1's fan reads 22% and does not spin up: the board reaches its slowdown temperature within minutes and its clocks fall by a third.")


@trace("training", "throttling")
def throttle_power_emergency_cap_a100(name):
    envs = lambda t: {g: C.Env(power_limit=400 if t < 200 else 225) for g in range(8)}
    nd = mk(name, "A100-SXM4-80GB", 8, 128, 300 - 290 + 2, 15, envs=envs)
    tr(nd, [0, 1, 2, 3], "hnakamura", "torchrun --nproc_per_node 4 pretrain.py --model 1.3b",
       t_compute=0.6, comm_s=0.03, comm_total=2.6e9, tensor=0.62, sm_c=0.9, dram_c=0.4, mem_gib=70, workers=4, cores=64,
       t_load=0.1, exporter="tokens", tokens_per_step=4 * 16 * 2048)
    bystanders(nd, [4, 5], "dkim", "train")
    fr = nd.run(480)
    return res(nd, fr, "trainer", W(nd, 200, 480), None,
               "Summer power emergency: facilities capped the node's GPUs at 225 W mid-run; all four ranks sit on 'power cap' at lower clocks, tokens/s down ~25%.")


@trace("other", "throttling")
def throttle_rack_inlet_mild_h100pcie(name):
    envs = lambda t: {g: C.Env(inlet_c=24 if t < 100 else 41) for g in range(2)}
    nd = mk(name, "H100-PCIE", 2, 48, 90, 14, style="pcie", envs=envs)
    nd.add(Steady(nd.rng, [0], "ekaya", C.slurm_job(nd.rng), "python", "python -m jax_md_run --system water_1M",
                  40, 0.96, 0.9, 0.35, 0.45, cores=2.0, start=nd.start - 3000))
    fr = nd.run(600)
    a = first_when(fr, lambda f: "thermal (sw)" in f.gpus[0].throttle, nd.start + 300)
    return res(nd, fr, "jax", (round(a, 3), round(nd.start + 600, 3)), (0,),
               "The rack's rear-door chiller tripped: inlet air rose to ~41 C and the busy H100 PCIe began thermal slowdown, clocks ~5-8% lower.")

from . import healthy  # noqa: E402,F401
