"""Healthy look-alikes: nothing an on-call engineer should be paged for."""
from __future__ import annotations

import math

from . import common as C
from .catalog import MODELS, W, bystanders, lengths, mk, res, trace
from .serving import Serve
from .training import Trainer
from .world import Steady


def tr(nd, gpus, user, cmd, **kw):
    return nd.add(Trainer(nd.rng, gpus, nd.board, start_wall=nd.start, user=user, job=kw.pop("job", C.slurm_job(nd.rng)),
                          cmd=cmd, **kw))


def H(nd, fr, engine, note, model=None):
    return res(nd, fr, engine, None, None, note, model)


@trace("serving")
def ok_vllm_idle_night_vram_full_h100(name):
    nd = mk(name, "H100-SXM", 1, 32, 14, 3)
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 0.01,
                 user="svc-course", pod="nlp-course/vllm-llama8b-0"))
    return H(nd, nd.run(600, ), "vllm", "3 a.m.: the course endpoint holds 72 GB (weights + pre-reserved KV pool) and serves nothing. Normal.")


@trace("serving")
def ok_vllm_lecture_bursts_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 2, 64, 16, 10)
    rate = lambda t: 0.3 + (3.0 if (t % 240) < 50 else 0.0)
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=rate,
                 lengths=lengths(600, 0.6, 250, 0.6), user="svc-course", pod="llm-101/vllm-llama8b-0"))
    return H(nd, nd.run(720), "vllm", "Lecture exercises every few minutes: bursts of requests, short queues, within the course SLO.")


@trace("serving")
def ok_vllm_startup_graph_capture_h200(name):
    nd = mk(name, "H200", 1, 32, 17, 8)
    nd.add(Serve(nd.rng, "vllm", MODELS["qwen-14b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 0.0 if t < 120 else 1.5,
                 lengths=lengths(500, 0.5, 250, 0.5), user="svc-course", pod="nlp-course/vllm-qwen14b-0", startup=95.0))
    return H(nd, nd.run(420), "vllm", "Endpoint restart for the morning: weights load, profiling run, CUDA graph capture (busy, low SM), then normal traffic.")


@trace("training")
def ok_ddp_checkpoint_save_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 8, 128, 19, 2)
    tr(nd, list(range(8)), "okafor", "torchrun --nproc_per_node 8 train.py --model vit_l16 --save-every 1000",
       t_compute=0.5, comm_s=0.04, comm_total=0.6e9, tensor=0.55, mem_gib=55, workers=6, cores=96, t_load=0.25,
       ckpt=(400, 45, 180), ckpt_style="rank0")
    return H(nd, nd.run(720), "", "Every ~7 min rank 0 writes a checkpoint for 45 s while the other ranks wait at a barrier (100% util, low power). Normal.")


@trace("training")
def ok_fsdp_eval_phases_h100(name):
    nd = mk(name, "H100-SXM", 8, 112, 23, 14)
    tr(nd, list(range(8)), "hlindqvist", "torchrun --nproc_per_node 8 fsdp_train.py --eval-every 500",
       t_compute=0.8, comm_s=0.05, comm_total=3e9, tensor=0.6, mem_gib=70, workers=4, cores=112, t_load=0.15,
       evals=(300, 60, 150), exporter="tokens", tokens_per_step=8 * 8 * 4096)
    return H(nd, nd.run(720), "trainer", "FSDP pre-training with a 1-minute eval pass every 5 minutes; throughput dips during eval by design.")


@trace("serving")
def ok_llamacpp_decode_membound_3090(name):
    nd = mk(name, "RTX3090", 2, 24, 24, 16, style="pcie")
    nd.add(Serve(nd.rng, "llamacpp", MODELS["llama3-8b-q4"], [1], nd.board, start_wall=nd.start, rate=lambda t: 0.3,
                 lengths=lengths(200, 0.5, 500, 0.4), max_seqs=4, budget=2048, pool_tokens=32768, user="tnguyen",
                 slurm=C.slurm_job(nd.rng)))
    return H(nd, nd.run(480), "llamacpp", "Steady single-user decode on a 3090: memory-bound (high memory util), ~95 tok/s per stream, as expected.")


@trace("training")
def ok_power_capped_by_config_a100(name):
    envs = lambda t: {g: C.Env(power_limit=250) for g in range(4)}
    nd = mk(name, "A100-SXM4-40GB", 4, 64, 26, 13, envs=envs)
    tr(nd, [0, 1, 2, 3], "pgarcia", "torchrun --nproc_per_node 4 train.py --model resnet152",
       t_compute=0.45, comm_s=0.03, comm_total=0.25e9, tensor=0.55, sm_c=0.9, dram_c=0.45, mem_gib=30, workers=8, cores=64, t_load=0.2)
    return H(nd, nd.run(600), "", "Node in the energy-saving partition: limit set to 250 W since boot, 'power cap' always on, clocks steady. Configured, not a fault.")


@trace("training")
def ok_idle_second_process_on_gpu_a40(name):
    nd = mk(name, "A40", 4, 64, 28, 11, style="pcie")
    tr(nd, [0], "mruiz", "python train_tts.py --bs 24", t_compute=0.4, tensor=0.4, mem_gib=30, workers=6, cores=16, t_load=0.15)
    nd.add(Steady(nd.rng, [0], "mruiz", nd.comps[0].root.slurm[0], "python", "python -m tensorboard.main --logdir runs (torch profiler plugin)",
                  0.6, 0.0, 0.0, 0.0, 0.0, cores=0.02, start=nd.start - 800))
    bystanders(nd, [2], "vpetrov", "idle")
    return H(nd, nd.run(480), "", "A second process (the user's TensorBoard profiler plugin) holds 600 MiB on the training GPU but runs no kernels.")


@trace("serving")
def ok_vllm_offline_batch_labeling_h100(name):
    nd = mk(name, "H100-SXM", 4, 64, 30, 1)
    sp = [(1.0 + k * 0.01, dict(prompt=700 + (k * 37) % 500, out=180 + (k * 53) % 200)) for k in range(9000)]
    nd.add(Serve(nd.rng, "vllm", MODELS["qwen-7b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 0.0,
                 user="atran", slurm=C.slurm_job(nd.rng), specials=sp, max_seqs=256))
    return H(nd, nd.run(600), "vllm", "Offline labeling of 9,000 documents submitted at once: thousands waiting, KV busy, GPU at 100%. A batch job doing its job.")


@trace("serving")
def ok_sglang_restart_counters_reset_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 2, 64, 34, 15)
    nd.add(Serve(nd.rng, "sglang", MODELS["qwen-7b"], [1], nd.board, start_wall=nd.start, rate=lambda t: 1.5,
                 lengths=lengths(500, 0.5, 250, 0.5), user="svc-lab", slurm=C.slurm_job(nd.rng), restarts=[(200, 20)]))
    return H(nd, nd.run(540), "sglang", "The lab restarted SGLang to pick up a new model revision: 20 s down, new pid, counters from zero, back to normal.")


@trace("serving")
def ok_tgi_rag_prefill_heavy_slo_l40s(name):
    nd = mk(name, "L40S", 2, 48, 36, 11, style="pcie")
    nd.add(Serve(nd.rng, "tgi", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 0.25,
                 lengths=lengths(4000, 0.3, 120, 0.3), user="ragdemo", pod="lab-rag/tgi-llama-0", max_seqs=32))
    return H(nd, nd.run(600), "tgi", "RAG demo: every request carries 4k tokens of retrieved context and a short answer; prefill dominates, latency within the demo SLO.")


@trace("serving")
def ok_vllm_spec_normal_acceptance_h100(name):
    nd = mk(name, "H100-SXM", 1, 32, 39, 14)
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 1.8,
                 lengths=lengths(700, 0.5, 400, 0.5), spec=dict(k=3, accept=lambda t: 0.62 + 0.05 * math.sin(t / 40), draft_cost=0.12),
                 user="svc-course", pod="nlp-course/vllm-ngram-0"))
    return H(nd, nd.run(480), "vllm", "n-gram speculative decoding with a steady ~60% acceptance; nothing wrong.")


@trace("serving")
def ok_lmeval_loglikelihood_hammer_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 4, 64, 42, 20)
    nd.add(Serve(nd.rng, "vllm", MODELS["llama3-8b"], [2], nd.board, start_wall=nd.start, rate=lambda t: 16.0,
                 lengths=lengths(450, 0.4, 1, 0.01), user="jpark", slurm=C.slurm_job(nd.rng), mfu=True))
    bystanders(nd, [0, 1], "rsingh", "train")
    return H(nd, nd.run(480), "vllm", "lm-eval hammering its own vLLM with loglikelihood requests (prompt-only, max_tokens=1): prefill-bound, huge prompt rate, no decode. Expected.")


@trace("other")
def ok_gromacs_v100_fp32(name):
    nd = mk(name, "V100-32GB", 4, 40, 45, 9, psi=False)
    nd.add(Steady(nd.rng, [0, 1, 2, 3], "cortiz", C.slurm_job(nd.rng), "gmx", "gmx mdrun -deffnm prod -nb gpu -pme gpu -bonded gpu -ntmpi 4 -ntomp 8",
                  1.6, 0.9, 0.8, 0.0, 0.45, cores=8.0, start=nd.start - 5000, proc_name="gmx"))
    return H(nd, nd.run(900), "gromacs", "GROMACS on an old V100 node: util ~90%, no tensor cores, many fields unsupported by the old driver; running at the expected ns/day.", None)


@trace("other")
def ok_jax_preallocate_a100(name):
    nd = mk(name, "A100-PCIE-80GB", 2, 32, 48, 17, style="pcie")
    nd.add(Steady(nd.rng, [0], "lvargas", C.slurm_job(nd.rng), "python", "python train_flax.py --model wide_resnet (XLA_PYTHON_CLIENT_PREALLOCATE default)",
                  60.5, 0.93, 0.85, 0.5, 0.4, cores=1.2, start=nd.start - 400))
    return H(nd, nd.run(480), "jax", "JAX pre-allocated 75% of the 80 GB card at start; the model uses far less. That is JAX's default, not a leak.")


@trace("other")
def ok_jupyter_idle_holding_a40(name):
    nd = mk(name, "A40", 4, 64, 50, 15, style="pcie")
    nd.add(Steady(nd.rng, [1], "s2093345", C.slurm_job(nd.rng), "python", "python -m ipykernel_launcher -f /run/user/4312/jupyter/kernel-91a.json",
                  9.7, 0.0, 0.0, 0.0, 0.0, cores=0.01, start=nd.start - 7000))
    bystanders(nd, [0], "cmorales", "train")
    return H(nd, nd.run(600), "", "A student's Jupyter session holds GPU 1 with 10 GB and no kernels for hours; wasteful but not an incident.")


@trace("training")
def ok_qlora_4090_hot_but_within_limits(name):
    nd = mk(name, "RTX4090", 2, 32, 53, 22, style="pcie")
    tr(nd, [0], "abaker", "python qlora.py --model llama3-8b --bs 4 --gradient_checkpointing", t_compute=0.9, tensor=0.45,
       sm_c=0.85, mem_gib=21, workers=4, cores=16, t_load=0.1)
    return H(nd, nd.run(600), "", "QLoRA on a workstation 4090: 100% util, ~75-80 C, fans at speed, clocks normal. Healthy.")


@trace("training")
def ok_megatron_pipeline_bubbles_h100(name):
    nd = mk(name, "H100-SXM", 8, 112, 56, 4)
    bub = {0: 0.04, 1: 0.04, 2: 0.08, 3: 0.08, 4: 0.12, 5: 0.12, 6: 0.16, 7: 0.16}
    tr(nd, list(range(8)), "rsingh", "torchrun --nproc_per_node 8 pretrain_gpt.py --tp 2 --pp 4 --num-microbatches 16",
       t_compute=1.2, comm_s=0.05, comm_total=4e9, tensor=0.6, mem_gib=68, workers=2, cores=112, t_load=0.1, bubble=bub)
    return H(nd, nd.run(600), "", "TP2 x PP4: later pipeline stages show the expected bubble (lower busy share); every step is the same length.")


@trace("training")
def ok_sweep_sequential_trials_l40s(name):
    nd = mk(name, "L40S", 2, 48, 59, 19, style="pcie")
    r = nd.rng
    job = C.slurm_job(r)
    for k, (a, b) in enumerate([(0, 170), (185, 350), (362, 540)]):
        nd.add(Steady(r, [0], "ebrown", job, "python", f"python sweep_agent.py --trial {k + 31}", 7 + k, 0.92, 0.75, 0.4, 0.3,
                      cores=1.5, start=nd.start + a - (0 if k else 200), on=(lambda t, a=a, b=b: a <= t < b)))
    return H(nd, nd.run(540), "", "A sweep runs trials one after another: each exits, a new process starts 10-15 s later. GPU idles only in those gaps.")


@trace("serving")
def ok_sglang_router_prefix_cache_high_usage_h100(name):
    nd = mk(name, "H100-SXM", 2, 64, 61, 12)
    nd.add(Serve(nd.rng, "sglang", MODELS["qwen-7b"], [0], nd.board, start_wall=nd.start, rate=lambda t: 2.5 + 1.5 * math.sin(t / 60),
                 lengths=lengths(1500, 0.4, 200, 0.5), prefix_hit=0.4, user="svc-course", pod="nlp-course/sglang-qwen7b-0"))
    return H(nd, nd.run(540), "sglang", "SGLang's radix cache keeps token_usage near 0.9 (mostly evictable prefix KV); no retractions, no queue. Looks full, is fine.")


@trace("other")
def ok_t4_old_node_llamacpp(name):
    nd = mk(name, "T4", 2, 16, 64, 11, style="pcie", psi=False)
    nd.add(Serve(nd.rng, "llamacpp", MODELS["qwen-1.5b-q8"], [0], nd.board, start_wall=nd.start, rate=lambda t: 0.2,
                 lengths=lengths(200, 0.5, 200, 0.5), max_seqs=2, budget=512, pool_tokens=8192, user="teachbot",
                 slurm=C.slurm_job(nd.rng)))
    return H(nd, nd.run(480), "llamacpp", "A teaching bot on an old T4 node: old driver, no per-process util, no PSI in the container. Slow but as designed.")


@trace("training")
def ok_h200_full_power_cap_flag(name):
    nd = mk(name, "H200", 8, 128, 67, 2)
    tr(nd, list(range(8)), "zhao", "torchrun --nproc_per_node 8 train_llm.py --model 8b --bs 16",
       t_compute=1.3, comm_s=0.06, comm_total=8e9, tensor=0.78, sm_c=0.95, dram_c=0.45, mem_gib=121, workers=2,
       cores=128, t_load=0.05, exporter="tokens", tokens_per_step=8 * 16 * 4096)
    return H(nd, nd.run(480), "trainer", "Large dense training at ~690 W per H200 with 'power cap' flickering on: the boards are simply at their limit, clocks near max.")


@trace("training")
def ok_zero_offload_gh200(name):
    nd = mk(name, "GH200", 1, 72, 72, 10)
    tr(nd, [0], "fschmidt", "deepspeed train.py --zero-stage 3 --offload-optimizer cpu", t_compute=2.0, tensor=0.6,
       mem_gib=70, workers=4, cores=72, t_load=0.05, t_host=0.0, mods=lambda t: {"gap": 0.45, "other_cores": 24})
    return H(nd, nd.run(600), "", "ZeRO-3 with CPU-offloaded optimizer on a GH200: the GPU idles during the CPU Adam step by design; 72 cores, no contention.")


@trace("training")
def ok_two_node_ddp_ib_a100(name):
    nd = mk(name, "A100-SXM4-80GB", 8, 128, 82, 23)
    tr(nd, list(range(8)), "gkumar", "srun torchrun --nnodes 2 --nproc_per_node 8 train.py --model deit_b",
       t_compute=0.7, comm_s=0.12, comm_total=0.7e9, tensor=0.55, mem_gib=48, workers=6, cores=120, t_load=0.25)
    return H(nd, nd.run(600), "", "Two-node DDP over InfiniBand: every rank waits ~15% of a step on inter-node all-reduce; same for all, every step. Normal.")
