"""Healthy look-alikes: what makes a naive monitor cry wolf."""

from __future__ import annotations

import math

from .job import Job, Profile
from .scenarios import finish, other_tenant, ramp, ticket
from .serve import Req
from .sim import GiB
from .tickets import POD, T, W, chat, serving


def H(family, engine, note):
    return T(family, None, engine, note)


@ticket
def h01_vllm_night_falloff():
    w = W("h01_vllm_night_falloff", "H100", 2, dur=480, cpus=64)
    night = lambda s: max(0.03, 1.0 - 0.97 * min(1.0, max(0.0, (s - 90) / 300.0)))
    e = serving(w, "vllm", "qwen32b", [0, 1], 6.0, chat(prompt=1000, out=240), diurnal=night)
    return finish(w, H("serving", "vllm", "a B2B chat product at the end of the US business day: traffic falls from ~6 req/s to almost nothing over five minutes; GPU-Util and tokens/s fall with it"), workloads=[e])


@ticket
def h02_sglang_gateway_drain():
    w = W("h02_sglang_gateway_drain", "H200", 1, dur=420, cpus=48)
    drain = lambda s: 1.0 if s < 200 else max(0.0, 1 - (s - 200) / 20.0)
    e = serving(w, "sglang", "qwen7b", [0], 8.0, chat(prompt=800, out=220), diurnal=drain)
    return finish(w, H("serving", "sglang", "the gateway drains this replica for a node upgrade at t=200 s: in-flight requests finish, then nothing; the server stays up and idle with its pool allocated"), workloads=[e])


@ticket
def h03_vllm_autoscale_reload():
    w = W("h03_vllm_autoscale_reload", "H100", 1, dur=480, cpus=32, pinned=True)
    down = (170, 235)
    up = lambda t: not (down[0] <= t < down[1])
    slow = lambda s: 1.0 if s < down[1] else min(1.0, 0.15 + (s - down[1]) / 120.0)
    e = serving(w, "vllm", "llama8b", [0], 9.0, chat(), diurnal=slow, up_fn=up, pod=POD.format("llm", "r"))
    mem = e.mem_bytes
    for p in e.workers:
        i0, i1 = int(down[0] / w.tick), int(down[1] / w.tick)
        p.mem = {0: (lambda i, m=mem, i0=i0, i1=i1: 0 if i0 <= i < i1 else (m if i < i0 or i >= i1 + 25 else int(m * (i - i1 + 1) / 25)))}
    return finish(w, H("serving", "vllm", "the autoscaler rolls the deployment to a new model revision at t=170 s: the endpoint is gone for ~65 s, VRAM empties and refills, counters restart from zero, traffic returns slowly"), workloads=[e], pin=e)


@ticket
def h04_trainer_restart_compile_warmup():
    w = W("h04_trainer_restart_compile_warmup", "H100", 1, dur=480, cpus=32)
    prof = Profile(step_s=0.45, units=16 * 2048, host_s=0.05, launches=400, tensor=0.5)
    j1 = Job(w, [0], prof, cmdline="python train.py --compile --run r1", counter="tokens", data_s=0.1, workers=4, end_s=150)
    j2 = Job(w, [0], prof, cmdline="python train.py --compile --run r2 --resume", counter="tokens",
             data_s=0.1, workers=4, start_s=175, compile_s=70, url="http://127.0.0.1:9401/metrics")
    return finish(w, H("training", "trainer", "run r1 finishes at t=150 s; r2 resumes at t=175 s and spends ~70 s in torch.compile and CUDA-graph capture (bursty, mostly idle GPU, high host CPU) before steady steps"), workloads=[j1, j2])


@ticket
def h05_ddp8_eval_and_checkpoint():
    w = W("h05_ddp8_eval_and_checkpoint", "H100", 8, tick=2.0, dur=600, cpus=208)
    prof = Profile(step_s=0.8, units=8 * 8 * 4096, allreduce_s=0.06, host_s=0.1, launches=2200)
    ev = Profile(step_s=0.3, units=0, allreduce_s=0.005, fill=0.75, tensor=0.3, launches=800, count=False)
    def phase(t, step):
        if step % 180 == 179 and step > 0:
            return ("ckpt", 14.0)
        return "eval" if step % 150 >= 135 else "train"
    j = Job(w, range(8), prof, cmdline="torchrun --nproc_per_node=8 pretrain.py --eval-every 150 --save-every 180",
            counter="tokens", data_s=0.2, workers=6, phase_fn=phase, profiles={"eval": ev})
    return finish(w, H("training", "trainer", "DDP pre-training with an eval pass every 150 steps and a checkpoint every 180 (GPUs idle ~14 s while rank 0 writes)"), workloads=[j])


@ticket
def h06_rl_rollout_train_alternation():
    w = W("h06_rl_rollout_train_alternation", "H200", 1, dur=480, cpus=48)
    train = Profile(step_s=0.9, units=4096, host_s=0.1, launches=2500, tensor=0.5, dram=0.25)
    roll = Profile(step_s=0.03, units=0, host_s=0.004, launches=2, fill=0.72, dram=0.65, tensor=0.04, count=False, comp=0.1)
    phase = lambda t, step: "rollout" if (t % 90) < 55 else "train"
    j = Job(w, [0], train, cmdline="python -m verl.trainer.main_ppo actor.fsdp=1 rollout.name=vllm",
            counter=None, phase_fn=phase, profiles={"rollout": roll}, mem=120 * GiB)
    return finish(w, H("training", "none", "GRPO on one H200: 55 s of rollout generation (memory-bound decode, low tensor use) then 35 s of policy update, repeating"), workloads=[j])


@ticket
def h07_sglang_long_context_customer():
    w = W("h07_sglang_long_context_customer", "H200", 2, dur=400, cpus=64)
    def req(rng, t):
        p = int(rng.uniform(60000, 110000))
        return Req(t, p, int(p * rng.uniform(0.7, 0.95)) // 16 * 16, int(rng.uniform(500, 1500)), max_tokens=2048)
    e = serving(w, "sglang", "qwen32b", [0, 1], 0.12, req, burst=0.0, max_seqs=32)
    return finish(w, H("serving", "sglang", "a legal-review customer sends 60-110k-token contracts all day: TTFT of seconds and a high ITL are steady and expected, nothing changes"), workloads=[e])


@ticket
def h08_power_capped_training():
    w = W("h08_power_capped_training", "H100", 4, dur=400, cpus=96, power_limit=450)
    prof = Profile(step_s=0.7, units=4 * 8 * 4096, allreduce_s=0.05, host_s=0.1, launches=2000, tensor=0.6, comp=0.85)
    j = Job(w, range(4), prof, cmdline="torchrun --nproc_per_node=4 train.py", counter="tokens", data_s=0.2, workers=6)
    return finish(w, H("training", "trainer", "the customer set nvidia-smi -pl 450 on all four GPUs for their rack's power budget; clocks sit steadily below max with 'power cap', the whole trace"), workloads=[j])


@ticket
def h09_batch_inference_sawtooth():
    w = W("h09_batch_inference_sawtooth", "H100", 1, dur=420, cpus=32)
    gen = Profile(step_s=0.028, units=0, host_s=0.003, launches=3, fill=0.75, dram=0.6, tensor=0.08, comp=0.2)
    pre = Profile(step_s=0.9, units=0, host_s=0.05, launches=600, fill=0.92, dram=0.2, tensor=0.7, comp=0.9)
    def phase(t, step):
        c = t % 48
        if c < 3:
            return "prefill"
        if c > 44:
            return ("ckpt", 3.0)  # write results, tokenize the next batch on the CPU
        return "gen"
    j = Job(w, [0], gen, cmdline="python offline_infer.py --model llama-3.1-8b --batch 512 --out s3://…",
            counter=None, phase_fn=phase, profiles={"prefill": pre})
    return finish(w, H("other", "none", "offline batch inference without /metrics: each 48 s batch is a prefill burst, a long decode tail that thins out, then a few seconds writing results; utilisation is a sawtooth"), workloads=[j])


@ticket
def h10_vllm_kv_full_no_preemption():
    w = W("h10_vllm_kv_full_no_preemption", "H100", 1, dur=400, cpus=32)
    def req(rng, t):
        return Req(t, int(rng.uniform(3000, 4600)), 0, int(rng.uniform(150, 300)), max_tokens=300)
    e = serving(w, "vllm", "llama8b", [0], 2.2, req, pool=60000, burst=0.0, max_seqs=12)
    return finish(w, H("serving", "vllm", "a small KV pool (60k tokens: a second model shares the GPU's memory) with max-num-seqs 12 sized so that 12 requests of 3-4.6k tokens always fit: usage sits at 70-98%, never a preemption"), workloads=[e])


@ticket
def h11_vllm_small_second_process():
    w = W("h11_vllm_small_second_process", "H200", 1, dur=380, cpus=48)
    e = serving(w, "vllm", "llama8b", [0], 10.0, chat())
    op = other_tenant(w, (0,), "python3", "python3 /opt/probe/gpu_health.py --interval 30", 600 * 2**20,
                      int(140 / w.tick), user="root")
    e.shared_fn = lambda g, t: 0.004 if t >= 140 and (t % 30) < 1 else 0.0
    e.shared_proc = {0: op}
    return finish(w, H("serving", "vllm", "at t=140 s the provider's health probe starts on the same GPU: 600 MiB and a tiny kernel every 30 s, nothing the server notices"), workloads=[e])


@ticket
def h12_sglang_agentic_bursts():
    w = W("h12_sglang_agentic_bursts", "H100", 2, dur=420, cpus=64, ebpf=True)
    e = serving(w, "sglang", "qwen32b", [0, 1], 1.0, chat(prompt=4000, out=150, cached=0.47), burst=1.5)
    return finish(w, H("serving", "sglang", "agent traffic: bursts of tool-calling turns with long shared prefixes (radix cache hits) and short outputs, then quiet; spiky but healthy"), workloads=[e])


@ticket
def h13_llamacpp_small_model_gaps():
    w = W("h13_llamacpp_small_model_gaps", "L40S", 1, tick=0.5, dur=300, cpus=16)
    e = serving(w, "llamacpp", "llama3b_q4", [0], 0.5, chat(prompt=300, out=180, cached=0.5), burst=1.0,
                max_seqs=4, budget=2048, base_over=0.0009, per_seq_over=1e-5, overlap=0.0)
    return finish(w, H("serving", "llamacpp", "a hobbyist's 3B model on llama-server: a request now and then, the GPU idle in between"), workloads=[e])


@ticket
def h14_diffusion_server_steady():
    w = W("h14_diffusion_server_steady", "H100", 1, dur=360, cpus=32)
    prof = Profile(step_s=0.055, units=0, host_s=0.01, launches=450, fill=0.9, dram=0.22, tensor=0.55, comp=0.9)
    j = Job(w, [0], prof, cmdline="python -m comfy.main --listen --port 8188", counter=None,
            duty_fn=lambda t: 0.93 if (t % 40) < 32 else 0.45)
    return finish(w, H("other", "none", "an image-generation service (SDXL, 30 denoising steps per image) with steady queue-driven load and short lulls"), workloads=[j])


@ticket
def h15_video_transcode_l40s():
    w = W("h15_video_transcode_l40s", "L40S", 1, dur=360, cpus=32)
    prof = Profile(step_s=0.004, units=0, host_s=0.003, launches=12, fill=0.35, dram=0.3, tensor=0.0, comp=0.3)
    j = Job(w, [0], prof, name="ffmpeg", cmdline="ffmpeg -hwaccel cuda -i in.mp4 -vf scale_cuda=1280:720 -c:v h264_nvenc out.mp4",
            counter=None, duty_fn=lambda t: 0.7)
    return finish(w, H("other", "none", "the customer's own GPU transcoding farm node: CUDA scaling filters and NVENC, moderate GPU-Util, nothing wrong (no GPM on L40S)"), workloads=[j])


@ticket
def h16_vllm_eagle_mild_drift():
    w = W("h16_vllm_eagle_mild_drift", "H100", 4, dur=400, cpus=128)
    acc = lambda t: 0.72 - 0.07 * math.sin(t / 70.0) ** 2
    e = serving(w, "vllm", "llama70b", [0, 1, 2, 3], 2.5, chat(prompt=900, out=300), spec=(4, acc, 1.6e9))
    return finish(w, H("serving", "vllm", "EAGLE speculative decoding whose acceptance drifts between ~0.65 and 0.72 with the traffic mix; normal"), workloads=[e])


@ticket
def h17_fsdp4_checkpoints():
    w = W("h17_fsdp4_checkpoints", "H200", 4, dur=480, cpus=96)
    prof = Profile(step_s=1.3, units=4 * 4 * 8192, allreduce_s=0.12, host_s=0.15, launches=3500, tensor=0.42)
    phase = lambda t, step: ("ckpt", 22.0) if step % 110 == 109 else "train"
    j = Job(w, range(4), prof, cmdline="accelerate launch --config fsdp.yaml train.py --save_steps 110",
            counter="tokens", data_s=0.3, workers=8, phase_fn=phase)
    return finish(w, H("training", "trainer", "FSDP fine-tune that writes a sharded checkpoint every 110 steps: ~22 s with the GPUs idle and the host busy"), workloads=[j])


@ticket
def h18_notebook_a100_interactive():
    w = W("h18_notebook_a100_interactive", "A100", 1, dur=420, cpus=16)
    prof = Profile(step_s=0.35, units=0, host_s=0.03, launches=500, tensor=0.4)
    j = Job(w, [0], prof, cmdline="/opt/conda/bin/python -m ipykernel_launcher -f kernel-91.json",
            counter=None, duty_fn=lambda t: 0.95 if (t % 100) < 25 else 0.01)
    return finish(w, H("other", "none", "a data scientist's notebook: a cell runs for ~25 s, then minutes of reading output; the GPU mostly idle"), workloads=[j])


@ticket
def h19_vllm_morning_ramp_ebpf():
    w = W("h19_vllm_morning_ramp_ebpf", "H100", 1, dur=420, cpus=32, ebpf=True)
    morning = lambda s: 0.25 + 0.75 * min(1.0, max(0.0, (s - 90) / 240.0))
    e = serving(w, "vllm", "llama8b", [0], 12.0, chat(), diurnal=morning)
    return finish(w, H("serving", "vllm", "Monday morning: traffic ramps from a quarter to full over four minutes; batch grows, ITL rises a little as it should (eBPF launch probes on)"), workloads=[e])


@ticket
def h20_moe_ep8_balanced():
    w = W("h20_moe_ep8_balanced", "H200", 8, dur=400, cpus=224)
    prof = Profile(step_s=1.1, units=8 * 4 * 4096, allreduce_s=0.15, host_s=0.2, launches=5000, tensor=0.33, dram=0.3)
    import random
    rr = random.Random(7)
    imb = [[1 + 0.04 * rr.random() for _ in range(8)] for _ in range(600)]
    j = Job(w, range(8), prof, cmdline="torchrun --nproc_per_node=8 train_moe.py --ep 8 --experts 64",
            counter="tokens", data_s=0.3, workers=6, rank_slow=lambda r, t: imb[int(t) % 600][r])
    return finish(w, H("training", "trainer", "expert-parallel MoE training with a healthy router: a few percent of per-step imbalance that moves between ranks"), workloads=[j])


@ticket
def h21_vllm_quota_headroom():
    w = W("h21_vllm_quota_headroom", "A100", 1, dur=360, cpus=64, pinned=True)
    e = serving(w, "vllm", "qwen7b", [0], 6.0, chat(prompt=700, out=200), pod=POD.format("llm", "q"),
                cpu_fn=lambda i: dict(phi=1.0, quota=4.0))
    return finish(w, H("serving", "vllm", "a pod with a 4-CPU limit that the server never reaches: cgroup quota configured, no throttling"), workloads=[e], pin=e)
