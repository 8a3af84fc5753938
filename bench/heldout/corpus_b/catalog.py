"""The traces: each builder returns (scenario, spec); spec gives the truth.

Times in builders are seconds from the first frame.  A spec's window is either fixed
(``window=(a, b)``) or measured from the simulation (``mark``: the ticks when the cause is
materially on, e.g. a throttle reason is set or the prefill backlog is non-empty).
"""

from __future__ import annotations

import math

from .hw import PROFILE_TINY
from .models import GEMMA27B, LLAMA8B, LLAMA70B, MISTRAL7B, QWEN7B, QWEN32B
from .scenario import Scenario
from .serving import EngineCfg, Stream
from .training import TrainCfg

TRACES: list = []

# kernel mixes of other programs (sm, occupancy, dram, tensor) -- tests/data/h200 readings
MATMUL = (0.956, 0.141, 0.172, 0.928)
COPY = (0.992, 0.80, 0.885, 0.0)
FINETUNE = (0.93, 0.19, 0.33, 0.55)
STENCIL = (0.97, 0.55, 0.62, 0.0)


def trace(family: str, cause: str | None):
    def wrap(fn):
        TRACES.append((fn.__name__[2:], family, cause, fn))
        return fn
    return wrap


def ramp(t, t0, t1, a, b):
    if t <= t0:
        return a
    if t >= t1:
        return b
    return a + (b - a) * (t - t0) / (t1 - t0)


def wobble(rng_seed: float, period: float, depth: float):
    """A slow, deterministic load wobble (users come and go)."""
    return lambda t: 1.0 + depth * math.sin(2 * math.pi * t / period + rng_seed)


def chat(rate, prompt=(650, 0.85, 24, 7000), out=(190, 0.8, 4, 1800), **kw):
    return Stream(rate=rate, prompt=prompt, out=out, **kw)


# ======================================================================= oversized_request

@trace("oversized_request", "oversized_request")
def t_os_vllm_h100_n8lp20_eval(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=330, cpus=48)
    w = wobble(0.3, 97, 0.12)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=256),
                         [0], [chat(lambda t: 9.0 * w(t)),
                               Stream(prompt=(512, 0.05, 480, 560), out=(44, 0.1, 30, 48),
                                      max_tokens=48, n=8, logprobs=20, closed=1, think=0.4,
                                      active=(120, 228), label="eval")])
    scn.view = eng
    scn.mark = lambda s, t: eng.S_lp_host > 0 or any(x.req.lp for x in eng.prefilling)
    return scn, {"culprit": (0,), "note": "an eval loop sends n=8 logprobs=20 requests back to back: "
                 "every step carries 160 full-vocabulary logprob entries"}


@trace("oversized_request", "oversized_request")
def t_os_sglang_h200_bestof16(name):
    scn = Scenario(name, gpu="h200", tick=2.0, duration=400, cpus=64)
    eng = scn.add_engine(EngineCfg("sglang", QWEN7B, max_num_seqs=512, max_batched_tokens=8192,
                                   mem_util=0.88, host_ms=1.4, host_seq_us=11),
                         [0], [chat(lambda t: 13.0 * (1 + 0.15 * math.sin(t / 40)))])
    scn.view = eng

    def big(s):
        from .serving import Req
        eng._enqueue(Req(10**7, 150.0, 900, 0, 1850, 2048, 16, 20, 0))
    scn.at(150.0, big)
    scn.mark = lambda s, t: eng.S_lp_host > 0
    return scn, {"culprit": (0,), "note": "one best-of-16 request with top-20 logprobs and 2k tokens "
                 "stalls every step it shares for about a minute"}


@trace("oversized_request", "oversized_request")
def t_os_vllm_tp4_h100_70b(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=360, cpus=128)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=4, max_num_seqs=256), [0, 1, 2, 3],
                         [chat(lambda t: 6.5 * (1 + 0.1 * math.sin(t / 31)))])
    scn.view = eng

    def big(s):
        from .serving import Req
        eng._enqueue(Req(10**7, 140.0, 1200, 0, 1400, 1500, 8, 20, 0))
    scn.at(140.0, big)
    scn.mark = lambda s, t: eng.S_lp_host > 0
    return scn, {"culprit": (0, 1, 2, 3), "note": "a single n=8 logprobs=20 max_tokens=1500 request "
                 "on a TP4 70B: the whole batch advances at its pace while it runs"}


@trace("oversized_request", "oversized_request")
def t_os_vllm_a100_two_amplifiers(name):
    scn = Scenario(name, gpu="a100", tick=0.5, duration=300, cpus=32)
    eng = scn.add_engine(EngineCfg("vllm", QWEN7B, max_num_seqs=192, max_batched_tokens=4096),
                         [0], [chat(lambda t: 4.5 * (1 + 0.2 * math.sin(t / 23)))])
    scn.view = eng

    def big(s):
        from .serving import Req
        eng._enqueue(Req(10**7, 100.0, 700, 0, 1450, 1500, 8, 20, 0))
        eng._enqueue(Req(10**7 + 1, 100.0, 400, 0, 1300, 1500, 6, 10, 0))
    scn.at(100.0, big)
    scn.mark = lambda s, t: eng.S_lp_host > 0
    return scn, {"culprit": (0,), "note": "two fan-out requests with logprobs arrive together on an A100"}


# ======================================================================= prefill_interference

@trace("prefill_interference", "prefill_interference")
def t_pi_vllm_h100_rag_burst(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=330, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=256, max_batched_tokens=8192),
                         [0], [chat(lambda t: 10.0 * (1 + 0.1 * math.sin(t / 19))),
                               Stream(rate=lambda t: 4.5 if 130 <= t < 140 else 0.0,
                                      prompt=(15000, 0.2, 10000, 22000), out=(30, 0.4, 8, 64),
                                      max_tokens=64, label="docs")])
    scn.view = eng
    scn.mark = lambda s, t: sum(x.pf_total - x.pf_done for x in eng.prefilling) > 20000 or \
        sum(1 for x in eng.waiting if x.pf_total > 10000) > 0
    return scn, {"culprit": (0,), "note": "45 long documents arrive in 10 s; chunked prefill fills "
                 "every step's token budget and decodes crawl"}


@trace("prefill_interference", "prefill_interference")
def t_pi_sglang_h200_gradual(name):
    scn = Scenario(name, gpu="h200", tick=1.0, duration=360, cpus=64)
    eng = scn.add_engine(EngineCfg("sglang", QWEN7B, max_num_seqs=512, max_batched_tokens=8192,
                                   mem_util=0.88, host_ms=1.4, host_seq_us=11),
                         [0], [chat(lambda t: 16.0 * (1 + 0.08 * math.sin(t / 27))),
                               Stream(rate=lambda t: ramp(t, 90, 200, 0.0, 1.7) if t < 262 else 0.0,
                                      prompt=(10000, 0.25, 5000, 20000), out=(120, 0.5, 10, 400),
                                      max_tokens=512)])
    scn.view = eng
    scn.mark = lambda s, t: 135 <= t <= 265
    return scn, {"culprit": (0,), "note": "long prompts grow to a fifth of arrivals; SGLang runs each "
                 "prefill batch before decoding, so decodes stall behind them"}


@trace("prefill_interference", "prefill_interference")
def t_pi_vllm_tp8_h200_70b(name):
    scn = Scenario(name, gpu="h200", n_gpus=8, tick=2.0, duration=420, cpus=224)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=8, max_num_seqs=256, max_batched_tokens=8192),
                         list(range(8)), [chat(lambda t: 11.0 * (1 + 0.1 * math.sin(t / 41))),
                                          Stream(rate=lambda t: 3.0 if 150 <= t < 170 else 0.0,
                                                 prompt=(16000, 0.2, 10000, 24000),
                                                 out=(60, 0.4, 10, 200), max_tokens=256)])
    scn.view = eng
    scn.mark = lambda s, t: sum(x.pf_total - x.pf_done for x in eng.prefilling) > 20000 or \
        any(x.pf_total > 10000 for x in eng.waiting)
    return scn, {"culprit": tuple(range(8)), "note": "a batch client submits 60 x 16k-token prompts "
                 "to a TP8 70B; prefill owns the token budget for minutes"}


@trace("prefill_interference", "prefill_interference")
def t_pi_vllm_a100_code_review(name):
    scn = Scenario(name, gpu="a100", tick=1.0, duration=300, cpus=32)
    eng = scn.add_engine(EngineCfg("vllm", MISTRAL7B, max_num_seqs=192, max_batched_tokens=4096,
                                   max_model_len=32768),
                         [0], [chat(lambda t: 5.0 * (1 + 0.1 * math.sin(t / 17))),
                               Stream(rate=lambda t: 1.3 if 100 <= t < 200 else 0.0,
                                      prompt=(7000, 0.15, 4000, 12000), out=(60, 0.4, 8, 200),
                                      max_tokens=256)])
    scn.view = eng
    scn.mark = lambda s, t: 100 <= t <= 200 or sum(x.pf_total - x.pf_done for x in eng.prefilling) > 8000
    return scn, {"culprit": (0,), "note": "a code-review bot sends 7k-token diffs at 1.3/s to an A100 "
                 "already at its power cap"}


# ======================================================================= collective_straggler

@trace("collective_straggler", "collective_straggler")
def t_cs_vllm_tp4_clock_held(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=360, cpus=128)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=4, max_num_seqs=256), [0, 1, 2, 3],
                         [chat(lambda t: 7.0 * (1 + 0.12 * math.sin(t / 29)))])
    scn.view = eng

    def hold(s):
        s.devs[2].user_clock_max = 750.0

    def release(s):
        s.devs[2].user_clock_max = None
    scn.at(120.0, hold)
    scn.at(270.0, release)
    return scn, {"culprit": (2,), "window": (120, 270), "note": "an ops script locks GPU 2's clocks at "
                 "750 MHz; the other three ranks wait for it in every all-reduce"}


@trace("collective_straggler", "collective_straggler")
def t_cs_sglang_tp8_thermal_gpu5(name):
    scn = Scenario(name, gpu="h100", n_gpus=8, tick=1.0, duration=420, cpus=224)
    eng = scn.add_engine(EngineCfg("sglang", QWEN32B, tp=8, max_num_seqs=384, mem_util=0.86,
                                   host_ms=1.5, host_seq_us=11),
                         list(range(8)), [chat(lambda t: 12.0 * (1 + 0.1 * math.sin(t / 37)))])
    scn.view = eng

    def drive(s, t):
        d = s.devs[5]
        d.cooling = ramp(t, 60, 160, 1.0, 5.0) if t < 330 else ramp(t, 330, 360, 5.0, 1.0)
    scn.drivers.append(drive)
    scn.mark = lambda s, t: "thermal (sw)" in s.devs[5].reasons or "hw slowdown" in s.devs[5].reasons
    return scn, {"culprit": (5,), "note": "GPU 5's fan wall degrades; it throttles thermally and the "
                 "seven other ranks wait in NCCL"}


def _lm_cfg(label, params, tokens, samples, mode="ddp", workers=6, worker_s=0.5, **kw):
    return TrainCfg(label=label, params=params, tokens_per_rank=tokens, samples_per_rank=samples,
                    mode=mode, workers=workers, worker_s=(worker_s if callable(worker_s)
                                                          else (lambda t, v=worker_s: v)), **kw)


@trace("collective_straggler", "collective_straggler")
def t_cs_ddp8_h100_one_hot_gpu(name):
    scn = Scenario(name, gpu="h100", n_gpus=8, tick=1.0, duration=400, cpus=224)
    tr = scn.add_trainer(_lm_cfg("gpt-1.3b", 1.3e9, 32768, 16, workers=4, worker_s=0.9,
                                 mem_bytes=58e9, cmdline="python -u train.py --model gpt-1.3b --bs 16"),
                         list(range(8)))
    scn.view = tr

    def drive(s, t):
        s.devs[6].cooling = ramp(t, 50, 140, 1.0, 2.45) if t < 320 else ramp(t, 320, 350, 2.45, 1.0)
    scn.drivers.append(drive)
    scn.mark = lambda s, t: "thermal (sw)" in s.devs[6].reasons or "hw slowdown" in s.devs[6].reasons
    return scn, {"culprit": (6,), "note": "DDP on 8 GPUs; GPU 6 heats up and throttles; the others "
                 "finish backward early and spin in the all-reduce"}


@trace("collective_straggler", "collective_straggler")
def t_cs_ddp4_a100_clock_locked(name):
    scn = Scenario(name, gpu="a100", n_gpus=4, tick=2.0, duration=380, cpus=96)
    tr = scn.add_trainer(_lm_cfg("vit-l", 0.30e9, 256 * 197, 256, workers=10, worker_s=2.2,
                                 mfu=0.38, mem_bytes=61e9, work_unit="samples",
                                 cmdline="python train_vit.py --arch vit_large_patch16 --bs 256"),
                         [0, 1, 2, 3])
    scn.view = tr
    scn.trainer_counter = True
    scn.at(100.0, lambda s: setattr(s.devs[1], "user_clock_max", 705.0))
    scn.at(250.0, lambda s: setattr(s.devs[1], "user_clock_max", None))
    return scn, {"culprit": (1,), "window": (100, 250), "note": "someone leaves GPU 1 locked at 705 "
                 "MHz after a power test; DDP runs at its pace"}


@trace("collective_straggler", "collective_straggler")
def t_cs_fsdp8_h200_gpu0_gradual(name):
    scn = Scenario(name, gpu="h200", n_gpus=8, tick=1.0, duration=420, cpus=224)
    tr = scn.add_trainer(_lm_cfg("llama-8b-fsdp", 8.0e9, 8192 * 2, 2, mode="fsdp", workers=3,
                                 worker_s=1.2, mfu=0.40, mem_bytes=121e9, work_unit="tokens",
                                 cmdline="torchrun --nproc_per_node 8 train.py --fsdp"),
                         list(range(8)))
    scn.view = tr
    scn.trainer_counter = True
    scn.pinned = tr

    def drive(s, t):
        s.devs[0].cooling = ramp(t, 40, 200, 1.0, 2.3) if t < 340 else ramp(t, 340, 360, 2.3, 1.0)
    scn.drivers.append(drive)
    scn.mark = lambda s, t: "thermal (sw)" in s.devs[0].reasons or "hw slowdown" in s.devs[0].reasons
    return scn, {"culprit": (0,), "note": "FSDP on 8 H200s; GPU 0's cold plate loses flow over minutes"}


# ======================================================================= input_stall

def _vision_cfg(label, workers, worker_s, gflops_fwd=4.1, batch=256, mfu=0.05, **kw):
    """A convnet: ~3x the forward GFLOPs per image for a training step; convs, batch norm
    and activations keep the tensor pipes far from peak (low MFU, more DRAM traffic)."""
    return TrainCfg(label=label, params=25.6e6, tokens_per_rank=batch, samples_per_rank=batch,
                    mode="single", workers=workers, worker_s=worker_s, mfu=mfu,
                    flops_per_token=3 * gflops_fwd * 1e9, profile=(0.95, 0.32, 0.46, 0.24), **kw)


@trace("input_stall", "input_stall")
def t_is_dataloader_h100_sawtooth(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=330, cpus=32)
    tr = scn.add_trainer(_vision_cfg("resnet50", 6, lambda t: 0.30 if not 100 <= t < 250 else 2.6,
                                     mem_bytes=38e9, worker_sigma=0.08,
                                     cmdline="python train.py --arch resnet50 --workers 6"), [0])
    scn.view = tr
    scn.pinned = tr
    return scn, {"culprit": (0,), "window": (100, 250), "note": "the dataset's NFS mount slows down: "
                 "six workers each take 2.6 s per batch, deliver in a burst, and the GPU waits"}


@trace("input_stall", "input_stall")
def t_is_ddp8_h200_shared_nfs(name):
    scn = Scenario(name, gpu="h200", n_gpus=8, tick=1.0, duration=400, cpus=224)
    tr = scn.add_trainer(_lm_cfg("gpt-3b", 3.0e9, 16384, 8, workers=4,
                                 worker_s=lambda t: 0.8 if not 120 <= t < 300 else 5.5,
                                 mem_bytes=96e9, cmdline="python -u pretrain.py --cfg gpt3b.yaml"),
                         list(range(8)))
    scn.view = tr
    return scn, {"culprit": tuple(range(8)), "window": (120, 300), "note": "a shared filesystem degrades "
                 "for every rank's loader at once"}


@trace("input_stall", "input_stall")
def t_is_a100_counter_gradual(name):
    scn = Scenario(name, gpu="a100", tick=2.0, duration=400, cpus=24)
    tr = scn.add_trainer(_vision_cfg("effnet-b4", 8, lambda t: ramp(t, 90, 210, 0.9, 3.2) if t < 320 else 0.9,
                                     gflops_fwd=4.5, batch=128, mfu=0.03,
                                     mem_bytes=44e9, worker_sigma=0.2, work_unit="samples",
                                     cmdline="python train.py --arch efficientnet_b4 -j 8"), [0])
    scn.view = tr
    scn.trainer_counter = True
    scn.mark = lambda s, t: 150 <= t < 320
    return scn, {"culprit": (0,), "note": "page cache is evicted by another tenant; the loader slowly "
                 "becomes disk-bound and the step rate falls"}


@trace("input_stall", "input_stall")
def t_is_ddp4_h100_one_rank_loader(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=360, cpus=96)
    # rank 3's workers lose their node-local cache (its cache daemon restarted)
    tr = scn.add_trainer(_lm_cfg("gpt-1.3b", 1.3e9, 32768, 16, workers=4, worker_s=0.8,
                                 mem_bytes=56e9, cmdline="python -u train.py --model gpt-1.3b",
                                 worker_factor=lambda r, t: 6.0 if r == 3 and 110 <= t < 260 else 1.0),
                         [0, 1, 2, 3])
    scn.view = tr
    return scn, {"culprit": (3,), "window": (110, 260), "note": "one rank's input pipeline slows; its GPU "
                 "idles waiting for data while the other ranks wait for it in NCCL"}


# ======================================================================= host_launch_jitter

@trace("host_launch_jitter", "host_launch_jitter")
def t_hj_vllm_h100_irq_core(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=330, cpus=64, ebpf=True)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=256),
                         [0], [chat(lambda t: 10.0 * (1 + 0.1 * math.sin(t / 21)))])
    scn.view = eng
    scn.host.collisions.append((110, 240, 3.0, 0.55, 0.38, 0.8e-3, 9e-3))
    return scn, {"culprit": (0,), "window": (110, 240), "note": "a NIC's interrupts move onto the core "
                 "the engine-core thread runs on; its launches are preempted"}


@trace("host_launch_jitter", "host_launch_jitter")
def t_hj_sglang_h200_pinned_agent(name):
    scn = Scenario(name, gpu="h200", tick=0.5, duration=300, cpus=96, ebpf=True)
    eng = scn.add_engine(EngineCfg("sglang", QWEN7B, max_num_seqs=512, host_ms=1.6, host_seq_us=12),
                         [0], [chat(lambda t: 14.0 * (1 + 0.1 * math.sin(t / 33)))])
    scn.view = eng
    scn.host.collisions.append((90, 210, 20.0, 0.45, 0.55, 1.5e-3, 16e-3))
    return scn, {"culprit": (0,), "window": (90, 210), "note": "a monitoring agent pinned with taskset to "
                 "the scheduler's core steals it in 2-16 ms slices"}


@trace("host_launch_jitter", "host_launch_jitter")
def t_hj_vllm_tp4_h100_ebpf(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=360, cpus=128, ebpf=True)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=4, max_num_seqs=256), [0, 1, 2, 3],
                         [chat(lambda t: 7.0 * (1 + 0.1 * math.sin(t / 25)))])
    scn.view = eng
    scn.host.collisions.append((150, 280, 2.0, 0.6, 0.42, 1.0e-3, 11e-3))
    return scn, {"culprit": (0, 1, 2, 3), "window": (150, 280), "note": "the engine core that drives all "
                 "four workers shares its core with a busy log shipper"}


# ======================================================================= host_cpu_contention

@trace("host_cpu_contention", "host_cpu_contention")
def t_hc_vllm_h100_build_job(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=360, cpus=16)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=96, max_batched_tokens=2048,
                                   host_ms=1.8, host_seq_us=14),
                         [0], [chat(lambda t: 13.0 * (1 + 0.06 * math.sin(t / 23)),
                                    prompt=(420, 0.7, 16, 3000), out=(200, 0.7, 8, 1500))])
    scn.view = eng
    scn.host.cpu_jobs.append((120, 280, 6.0, 30))
    return scn, {"culprit": (0,), "window": (120, 280), "note": "make -j32 on a 16-vCPU VM next to the "
                 "engine: its threads get ~half a core and wait for time slices"}


@trace("host_cpu_contention", "host_cpu_contention")
def t_hc_sglang_a100_preprocess(name):
    scn = Scenario(name, gpu="a100", tick=1.0, duration=330, cpus=12)
    eng = scn.add_engine(EngineCfg("sglang", MISTRAL7B, max_num_seqs=80, host_ms=4.5, host_seq_us=40,
                                   max_batched_tokens=4096),
                         [0], [chat(lambda t: 8.5 * (1 + 0.06 * math.sin(t / 19)),
                                    prompt=(300, 0.6, 16, 2000), out=(160, 0.7, 8, 1200))])
    scn.view = eng
    scn.host.cpu_jobs.append((90, 230, 10.0, 28))
    return scn, {"culprit": (0,), "window": (90, 230), "note": "a tokenization preprocessing job with 28 "
                 "processes lands on a 12-vCPU A100 box"}


@trace("host_cpu_contention", "host_cpu_contention")
def t_hc_vllm_h200_powercap_pandas(name):
    scn = Scenario(name, gpu="h200", tick=2.0, duration=380, cpus=24)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=64, host_ms=1.9, host_seq_us=15),
                         [0], [chat(lambda t: 4.5, prompt=(3500, 0.5, 200, 12000),
                                    out=(220, 0.6, 8, 1200))])
    scn.view = eng
    scn.host.cpu_jobs.append((100, 250, 15.0, 52))
    return scn, {"culprit": (0,), "window": (100, 250), "note": "prefill-heavy traffic keeps the H200 at "
                 "its power cap; then a 52-thread pandas job oversubscribes 24 vCPUs"}


@trace("host_cpu_contention", "host_cpu_contention")
def t_hc_vllm_tp4_h100_cpuset(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=420, cpus=32)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=4, max_num_seqs=96, max_batched_tokens=2048,
                                   host_ms=2.6, host_seq_us=20),
                         [0, 1, 2, 3], [chat(lambda t: 8.0 * (1 + 0.05 * math.sin(t / 31)),
                                             prompt=(450, 0.7, 16, 3000), out=(220, 0.7, 8, 1500))])
    scn.view = eng
    scn.host.cpu_jobs.append((140, 300, 8.0, 64))
    return scn, {"culprit": (0, 1, 2, 3), "window": (140, 300), "note": "a container with a 32-CPU cpuset "
                 "also runs a 64-thread feature-extraction job"}


# ======================================================================= tiny_kernels

@trace("tiny_kernels", "tiny_kernels")
def t_tk_plain_h200_graph_loop(name):
    scn = Scenario(name, gpu="h200", tick=1.0, duration=300, cpus=32)
    scn.add_plain(0, "python3", "python3 solver.py --graphs", "chen", 61e9,
                  [(-200, 100, STENCIL, 0.97), (100, 215, PROFILE_TINY, 1.0), (215, 400, STENCIL, 0.97)])
    return scn, {"culprit": (0,), "window": (100, 215), "note": "a solver's captured CUDA graph degenerates "
                 "to a loop of one-element kernels after a bad input (no engine)"}


@trace("tiny_kernels", "tiny_kernels")
def t_tk_plain_4gpu_h100_gpu2(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=330, cpus=96)
    tr = scn.add_trainer(_lm_cfg("bert-large", 0.34e9, 512 * 64, 64, workers=4, worker_s=0.4,
                                 mem_bytes=40e9, cmdline="python run_mlm.py --bs 64"), [0, 1])
    scn.view = tr
    scn.add_plain(2, "python", "python spin_bench.py --graph", "lee", 9e9,
                  [(-200, 90, MATMUL, 0.99), (90, 200, PROFILE_TINY, 1.0), (200, 400, MATMUL, 0.99)])
    return scn, {"culprit": (2,), "window": (90, 200), "note": "a benchmark on GPU 2 replays a graph of "
                 "one-element kernels; GPUs 0-1 train normally"}


@trace("tiny_kernels", "tiny_kernels")
def t_tk_vllm_h100_keepalive(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=330, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0],
                         [chat(lambda t: 0.35 * (1 + 0.2 * math.sin(t / 13)))])
    scn.view = eng
    scn.at(100.0, lambda s: setattr(eng, "hollow", True))
    scn.at(230.0, lambda s: setattr(eng, "hollow", False))
    return scn, {"culprit": (0,), "window": (100, 230), "note": "a keep-warm plugin inside the engine's "
                 "process replays a graph of one-element kernels between steps"}


@trace("tiny_kernels", "tiny_kernels")
def t_tk_train_h100_stuck_graph(name):
    scn = Scenario(name, gpu="h100", tick=2.0, duration=360, cpus=32)
    tr = scn.add_trainer(_lm_cfg("gpt-350m", 0.35e9, 16384, 16, mode="single", workers=4, worker_s=0.3,
                                 mem_bytes=33e9, hollow=(120, 236),
                                 cmdline="python train.py --compile --cudagraphs"), [0])
    scn.view = tr
    scn.trainer_counter = True
    scn.pinned = tr
    return scn, {"culprit": (0,), "window": (120, 236), "note": "a CUDA-graph-captured training step "
                 "spins in a loop of tiny kernels; the sample counter stops"}


# ======================================================================= memory_bandwidth

def _eight_servers(scn, rate_fns, long_gpu=None, long_rate=None):
    engs = []
    for g in range(8):
        streams = [chat(rate_fns[g])]
        if g == long_gpu:
            streams.append(Stream(rate=long_rate, prompt=(24000, 0.2, 14000, 32000),
                                  out=(600, 0.4, 100, 1500), max_tokens=2048, cached=0.9,
                                  cached_owned=True))
        e = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=256, port=8000 + g,
                                     max_model_len=65536), [g], streams)
        engs.append(e)
    return engs


@trace("memory_bandwidth", "memory_bandwidth")
def t_mb_8servers_gpu3_longctx(name):
    scn = Scenario(name, gpu="h100", n_gpus=8, tick=1.0, duration=400, cpus=224)
    rates = [(lambda t, g=g: (7 + g % 3) * (1 + 0.1 * math.sin(t / (20 + g)))) for g in range(8)]
    base3 = rates[3]
    rates[3] = lambda t: base3(t) * (0.5 if 120 <= t < 300 else 1.0)
    engs = _eight_servers(scn, rates, long_gpu=3, long_rate=lambda t: 0.7 if 120 <= t < 300 else 0.0)
    scn.view = engs[3]
    scn.mark = lambda s, t: 150 <= t <= 310
    return scn, {"culprit": (3,), "note": "eight independent servers; the one on GPU 3 (gputop points at "
                 "it) starts serving agent sessions with 24k-token cached histories and becomes HBM-bound"}


@trace("memory_bandwidth", "memory_bandwidth")
def t_mb_vllm_h200_longctx_ramp(name):
    scn = Scenario(name, gpu="h200", tick=1.0, duration=360, cpus=64)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=256, max_model_len=131072),
                         [0], [chat(lambda t: 7.0 * (1 + 0.1 * math.sin(t / 17))),
                               Stream(rate=lambda t: ramp(t, 100, 160, 0.0, 0.40) if t < 260 else 0.0,
                                      prompt=(40000, 0.3, 16000, 100000), out=(800, 0.4, 100, 2000),
                                      max_tokens=2048, cached=0.9, cached_owned=True)])
    scn.view = eng
    scn.mark = lambda s, t: 140 <= t <= 275
    return scn, {"culprit": (0,), "note": "follow-up questions on long cached documents ramp up: every "
                 "decode step reads tens of GB of KV"}


@trace("memory_bandwidth", "memory_bandwidth")
def t_mb_sglang_h100_agents_bigbatch(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=360, cpus=64)
    eng = scn.add_engine(EngineCfg("sglang", QWEN7B, max_num_seqs=512, mem_util=0.88, host_ms=1.4,
                                   host_seq_us=9),
                         [0], [chat(lambda t: 8.0 * (1 + 0.1 * math.sin(t / 23))),
                               Stream(rate=lambda t: 2.2 if 110 <= t < 270 else 0.0,
                                      prompt=(7500, 0.3, 3000, 16000), out=(1300, 0.4, 200, 3500),
                                      max_tokens=4096, cached=0.85, cached_owned=True)])
    scn.view = eng
    scn.mark = lambda s, t: 150 <= t <= 290
    return scn, {"culprit": (0,), "note": "agent sessions with 7.5k-token contexts and long outputs: "
                 "hundreds of sequences decoding at once saturate HBM (KV fills to ~80% too)"}


@trace("memory_bandwidth", "memory_bandwidth")
def t_mb_vllm_a100_rag(name):
    scn = Scenario(name, gpu="a100", tick=1.0, duration=340, cpus=32)
    eng = scn.add_engine(EngineCfg("vllm", MISTRAL7B, max_num_seqs=256, max_model_len=32768),
                         [0], [chat(lambda t: 4.0 * (1 + 0.1 * math.sin(t / 15))),
                               Stream(rate=lambda t: 0.35 if 120 <= t < 260 else 0.0,
                                      prompt=(16000, 0.25, 8000, 28000), out=(600, 0.4, 60, 1500),
                                      max_tokens=1536, cached=0.85, cached_owned=True)])
    scn.view = eng
    scn.mark = lambda s, t: 150 <= t <= 275
    return scn, {"culprit": (0,), "note": "RAG with 16k-token contexts on an A100 (no GPM: memory "
                 "controller utilization only)"}


# ======================================================================= throttling

@trace("throttling", "throttling")
def t_th_vllm_h100_fan_fail(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=400, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0],
                         [chat(lambda t: 7.0 * (1 + 0.1 * math.sin(t / 27)), prompt=(1500, 0.7, 50, 9000))])
    scn.view = eng

    def drive(s, t):
        s.devs[0].cooling = ramp(t, 60, 140, 1.0, 3.6) if t < 300 else ramp(t, 300, 330, 3.6, 1.0)
    scn.drivers.append(drive)
    scn.mark = lambda s, t: "thermal (sw)" in s.devs[0].reasons or "hw slowdown" in s.devs[0].reasons
    return scn, {"culprit": (0,), "note": "a chassis fan fails; the GPU reaches its slowdown temperature "
                 "and its clocks are pulled down until the fan is replaced"}


@trace("throttling", "throttling")
def t_th_sglang_tp4_power_brake(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=360, cpus=128)
    eng = scn.add_engine(EngineCfg("sglang", QWEN32B, tp=4, max_num_seqs=384, mem_util=0.86,
                                   host_ms=1.5, host_seq_us=11),
                         [0, 1, 2, 3], [chat(lambda t: 10.0 * (1 + 0.1 * math.sin(t / 29)))])
    scn.view = eng

    def brake(on):
        def f(s):
            for d in s.devs:
                d.power_brake = on
        return f
    scn.at(150.0, brake(True))
    scn.at(260.0, brake(False))
    return scn, {"culprit": (0, 1, 2, 3), "window": (150, 260), "note": "a PSU fault asserts the board's "
                 "power-brake line: every GPU of the TP group drops to ~780 MHz"}


@trace("throttling", "throttling")
def t_th_ddp8_h200_hw_slowdown(name):
    scn = Scenario(name, gpu="h200", n_gpus=8, tick=1.0, duration=380, cpus=224)
    tr = scn.add_trainer(_lm_cfg("gpt-6.7b", 6.7e9, 8192, 4, mode="fsdp", workers=3, worker_s=1.0,
                                 mem_bytes=118e9, cmdline="python -u train.py --model 6.7b"),
                         list(range(8)))
    scn.view = tr

    def slow(on):
        def f(s):
            for d in s.devs:
                d.hw_slowdown_ext = on
        return f
    scn.at(130.0, slow(True))
    scn.at(250.0, slow(False))
    return scn, {"culprit": tuple(range(8)), "window": (130, 250), "note": "HW slowdown on all eight GPUs "
                 "(a shelf power event) halves the clocks of the whole job"}


@trace("throttling", "throttling")
def t_th_vllm_h200_ambient_tick05(name):
    scn = Scenario(name, gpu="h200", tick=0.5, duration=330, cpus=64)
    eng = scn.add_engine(EngineCfg("vllm", QWEN7B, max_num_seqs=256), [0],
                         [chat(lambda t: 8.0 * (1 + 0.1 * math.sin(t / 19)), prompt=(1800, 0.7, 60, 9000))])
    scn.view = eng

    def drive(s, t):
        s.devs[0].t_amb_delta = ramp(t, 80, 130, 0.0, 40.0) if t < 250 else ramp(t, 250, 280, 40.0, 0.0)
    scn.drivers.append(drive)
    scn.mark = lambda s, t: any(r in s.devs[0].reasons for r in ("thermal (sw)", "hw slowdown"))
    return scn, {"culprit": (0,), "note": "the row's cooling unit trips: inlet air rises 40 C and the GPU "
                 "throttles"}


# ======================================================================= kv_pressure

@trace("kv_pressure", "kv_pressure")
def t_kv_vllm_h100_reasoning(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=440, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=256, mem_util=0.50,
                                   max_model_len=16384), [0],
                         [chat(lambda t: 6.0 * (1 + 0.1 * math.sin(t / 21))),
                          Stream(rate=lambda t: ramp(t, 100, 140, 0.0, 1.35) if t < 250 else 0.0,
                                 prompt=(900, 0.5, 100, 4000), out=(3000, 0.35, 600, 8000), max_tokens=8192)])
    scn.view = eng
    scn.mark = lambda s, t: eng._usage() > 0.965
    return scn, {"culprit": (0,), "note": "reasoning requests with ~3k-token answers on a pool sized for "
                 "chat: blocks run out and vLLM preempts by recompute"}


@trace("kv_pressure", "kv_pressure")
def t_kv_sglang_h200_qwen32b_retract(name):
    scn = Scenario(name, gpu="h200", tick=2.0, duration=480, cpus=64)
    eng = scn.add_engine(EngineCfg("sglang", QWEN32B, max_num_seqs=256, mem_util=0.80, host_ms=1.4,
                                   host_seq_us=10), [0],
                         [chat(lambda t: 1.6 * (1 + 0.1 * math.sin(t / 25))),
                          Stream(rate=lambda t: 16.0 if 110 <= t < 112 else 0.3 if 112 <= t < 230 else 0.0,
                                 prompt=(2500, 0.5, 200, 8000), out=(2800, 0.25, 800, 7000),
                                 max_tokens=8192)])
    scn.view = eng
    scn.mark = lambda s, t: eng._usage() > 0.95
    return scn, {"culprit": (0,), "note": "a batch of long generations lands on a 32B model whose token "
                 "pool is small: decode runs out of tokens and SGLang retracts requests"}


@trace("kv_pressure", "kv_pressure")
def t_kv_vllm_tp4_a100_70b(name):
    scn = Scenario(name, gpu="a100", n_gpus=4, tick=1.0, duration=480, cpus=128)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=4, max_num_seqs=256, mem_util=0.72,
                                   max_batched_tokens=2048, max_model_len=32768), [0, 1, 2, 3],
                         [chat(lambda t: 1.0 * (1 + 0.1 * math.sin(t / 27))),
                          Stream(rate=lambda t: ramp(t, 110, 125, 0.0, 0.85) if t < 215 else 0.0,
                                 prompt=(2500, 0.4, 500, 8000), out=(2500, 0.3, 600, 6000),
                                 max_tokens=8192)])
    scn.view = eng
    scn.mark = lambda s, t: eng._usage() > 0.965
    return scn, {"culprit": (0, 1, 2, 3), "note": "long multi-turn sessions on a 4xA100 70B with a small "
                 "gpu_memory_utilization: the KV pool fills; preemptions and a queue of requests waiting "
                 "for blocks"}


@trace("kv_pressure", "kv_pressure")
def t_kv_vllm_h100_longctx_two_signals(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=380, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=256, mem_util=0.62,
                                   max_model_len=32768), [0],
                         [chat(lambda t: 5.0 * (1 + 0.1 * math.sin(t / 19))),
                          Stream(rate=lambda t: 0.45 if 110 <= t < 250 else 0.0,
                                 prompt=(11000, 0.3, 5000, 20000), out=(1100, 0.4, 200, 3000),
                                 max_tokens=3072)])
    scn.view = eng
    scn.mark = lambda s, t: eng._usage() > 0.965
    return scn, {"culprit": (0,), "note": "11k-token contexts with 1k answers: DRAM traffic rises, but "
                 "what costs throughput is the pool running out (preemptions)"}


# ======================================================================= gpu_shared

@trace("gpu_shared", "gpu_shared")
def t_gs_vllm_h100_finetune(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=360, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, mem_util=0.72), [0],
                         [chat(lambda t: 9.0 * (1 + 0.1 * math.sin(t / 23)))])
    scn.view = eng
    scn.add_hog(0, "python", "python finetune_lora.py --model llama-3-8b --bs 4", "bob", 17e9,
                110, 260, lambda t: 0.92, FINETUNE)
    return scn, {"culprit": (0,), "window": (110, 260), "note": "a LoRA fine-tune is started on the "
                 "serving GPU; the two contexts time-slice"}


@trace("gpu_shared", "gpu_shared")
def t_gs_sglang_h200_notebook(name):
    scn = Scenario(name, gpu="h200", tick=2.0, duration=360, cpus=64)
    eng = scn.add_engine(EngineCfg("sglang", QWEN7B, mem_util=0.75, host_ms=1.4, host_seq_us=11), [0],
                         [chat(lambda t: 15.0 * (1 + 0.1 * math.sin(t / 23)))])
    scn.view = eng

    def duty(t):
        phase = (t - 90) % 23.0
        return 0.85 if phase < 14 else 0.05
    scn.add_hog(0, "python", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-7f3.json", "ana",
                22e9, 90, 240, duty, MATMUL)
    return scn, {"culprit": (0,), "window": (90, 240), "note": "a notebook runs matmul cells on the "
                 "serving GPU in bursts"}


@trace("gpu_shared", "gpu_shared")
def t_gs_vllm_tp4_h100_gpu2_eval(name):
    scn = Scenario(name, gpu="h100", n_gpus=4, tick=1.0, duration=380, cpus=128)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=4, mem_util=0.85), [0, 1, 2, 3],
                         [chat(lambda t: 6.5 * (1 + 0.1 * math.sin(t / 27)))])
    scn.view = eng
    scn.add_hog(2, "python", "python eval_harness.py --model ckpt-14000", "dana", 9e9, 130, 280,
                lambda t: 0.8, FINETUNE)
    return scn, {"culprit": (2,), "window": (130, 280), "note": "an evaluation job is launched with "
                 "CUDA_VISIBLE_DEVICES=2 on a TP4 server: GPU 2 becomes slow and the others wait for it "
                 "in NCCL, but the cause is the second process on GPU 2"}


@trace("gpu_shared", "gpu_shared")
def t_gs_vllm_a100_batch_job(name):
    scn = Scenario(name, gpu="a100", tick=1.0, duration=330, cpus=32)
    eng = scn.add_engine(EngineCfg("vllm", MISTRAL7B, mem_util=0.70), [0],
                         [chat(lambda t: 6.0 * (1 + 0.1 * math.sin(t / 17)))])
    scn.view = eng
    scn.add_hog(0, "trtexec", "trtexec --loadEngine=resnet.plan --iterations=100000", "ci", 6e9,
                100, 220, lambda t: 0.95, STENCIL)
    return scn, {"culprit": (0,), "window": (100, 220), "note": "a CI benchmark runs on the serving A100"}


# ======================================================================= healthy

@trace("healthy_serving", None)
def t_h_vllm_h100_low(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=300, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0], [chat(lambda t: 3.5 * (1 + 0.3 * math.sin(t / 31)))])
    scn.view = eng
    return scn, {"note": "steady light chat traffic"}


@trace("healthy_serving", None)
def t_h_sglang_h200_high(name):
    scn = Scenario(name, gpu="h200", tick=2.0, duration=360, cpus=64)
    eng = scn.add_engine(EngineCfg("sglang", QWEN7B, max_num_seqs=512, host_ms=1.4, host_seq_us=11), [0],
                         [chat(lambda t: 18.0 * (1 + 0.1 * math.sin(t / 29)))])
    scn.view = eng
    return scn, {"note": "steady heavy traffic, well inside capacity"}


@trace("healthy_serving", None)
def t_h_vllm_tp8_h200_mid(name):
    scn = Scenario(name, gpu="h200", n_gpus=8, tick=1.0, duration=330, cpus=224)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA70B, tp=8), list(range(8)),
                         [chat(lambda t: 12.0 * (1 + 0.15 * math.sin(t / 37)))])
    scn.view = eng
    return scn, {"note": "TP8 70B at mid load"}


@trace("healthy_lookalike", None)
def t_h_sglang_traffic_fall_long_seqs(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=400, cpus=48)
    eng = scn.add_engine(EngineCfg("sglang", QWEN7B, max_num_seqs=512, host_ms=1.3, host_seq_us=10), [0],
                         [chat(lambda t: ramp(t, 120, 240, 20.0, 2.0)),
                          Stream(prompt=(3000, 0.3, 1000, 6000), out=(7000, 0.15, 4000, 8000),
                                 max_tokens=8192, closed=4, think=1.0, label="agents")])
    scn.view = eng
    return scn, {"note": "traffic falls to a tenth over two minutes; four long agent generations keep "
                 "the GPU ~96% busy at a small batch"}


@trace("healthy_lookalike", None)
def t_h_vllm_h100_reload(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=420, cpus=48)

    def rate(t):
        if t < 150:
            return 10.0
        up = 150 + 35 + 45
        return 10.0 * ramp(t, up, up + 90, 0.05, 1.0)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0], [chat(rate)])
    eng.restarts.append((150.0, 35.0, 18.0, 27.0))
    scn.view = eng
    return scn, {"note": "a model reload: endpoint gone ~80 s, VRAM empties and refills, counters "
                 "restart, the load balancer ramps traffic back over 90 s"}


@trace("healthy_lookalike", None)
def t_h_sglang_tp4_h200_reload(name):
    scn = Scenario(name, gpu="h200", n_gpus=4, tick=2.0, duration=480, cpus=128)

    def rate(t):
        if t < 140:
            return 9.0
        up = 140 + 20 + 25 + 30
        return 9.0 * ramp(t, up, up + 120, 0.03, 1.0)
    eng = scn.add_engine(EngineCfg("sglang", QWEN32B, tp=4, max_num_seqs=384, host_ms=1.5), [0, 1, 2, 3],
                         [chat(rate)])
    eng.restarts.append((140.0, 20.0, 25.0, 30.0))
    scn.view = eng
    return scn, {"note": "TP4 SGLang restart with a two-minute slow start"}


@trace("healthy_lookalike", None)
def t_h_vllm_growing_10k_prompt(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=420, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0], [chat(lambda t: ramp(t, 0, 400, 3.0, 15.0))])
    scn.view = eng

    def one(s):
        from .serving import Req
        eng._enqueue(Req(10**7, 170.0, 10000, 0, 400, 1024, 1, 0, 0))
    scn.at(170.0, one)
    return scn, {"note": "load grows steadily; one 10k-token prompt arrives"}


@trace("healthy_lookalike", None)
def t_h_sglang_prefix_heavy(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=330, cpus=48)
    eng = scn.add_engine(EngineCfg("sglang", LLAMA8B, max_num_seqs=512, host_ms=1.3, host_seq_us=10,
                                   prefix_pool_tokens=24000), [0],
                         [chat(lambda t: 8.0 * (1 + 0.1 * math.sin(t / 19)), prompt=(3000, 0.3, 1500, 7000),
                               cached=0.9)])
    scn.view = eng
    return scn, {"note": "a chatbot with a long shared system prompt: ~90% of prompt tokens come from "
                 "the radix cache"}


@trace("healthy_lookalike", None)
def t_h_vllm_a100_bursty(name):
    scn = Scenario(name, gpu="a100", tick=1.0, duration=360, cpus=32)

    def rate(t):
        phase = (t + 20.0) % 41.0
        return 14.0 if phase < 5.0 else 2.5
    eng = scn.add_engine(EngineCfg("vllm", QWEN7B, max_num_seqs=256), [0], [chat(rate)])
    scn.view = eng
    return scn, {"note": "bursty arrivals: 6-second bursts at 7x the base rate every 41 s"}


@trace("healthy_lookalike", None)
def t_h_vllm_h100_saturated_demand(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=360, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_num_seqs=96), [0],
                         [chat(lambda t: ramp(t, 60, 120, 12.0, 21.0), out=(260, 0.6, 8, 1500))])
    scn.view = eng
    return scn, {"note": "demand above capacity: the queue grows while the engine runs flat out at "
                 "max_num_seqs with the per-token latency of that batch"}


@trace("healthy_lookalike", None)
def t_h_vllm_h200_idle_kv_reserved(name):
    scn = Scenario(name, gpu="h200", tick=2.0, duration=300, cpus=64)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0], [chat(lambda t: 0.0)])
    scn.view = eng
    return scn, {"note": "idle server: VRAM 90% reserved by the KV pool, 0% util"}


@trace("healthy_training", None)
def t_h_train_h100_eval_ckpt(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=420, cpus=32)
    tr = scn.add_trainer(_lm_cfg("gpt-760m", 0.76e9, 16384, 16, mode="single", workers=5, worker_s=0.6,
                                 mem_bytes=52e9, eval_every=150, eval_s=35, eval_first=110,
                                 ckpt_every=200, ckpt_s=22, ckpt_first=280,
                                 cmdline="python train.py --eval-every 1000 --save-every 2000"), [0])
    scn.view = tr
    scn.trainer_counter = True
    scn.pinned = tr
    return scn, {"note": "a single-GPU run with an eval pass and a checkpoint"}


@trace("healthy_training", None)
def t_h_ddp4_a100(name):
    scn = Scenario(name, gpu="a100", n_gpus=4, tick=2.0, duration=360, cpus=96)
    tr = scn.add_trainer(_lm_cfg("bert-large", 0.34e9, 512 * 48, 48, workers=6, worker_s=0.5,
                                 mem_bytes=60e9, cmdline="python run_mlm.py --bs 48"), [0, 1, 2, 3])
    scn.view = tr
    return scn, {"note": "healthy DDP on 4 A100s"}


@trace("healthy_training", None)
def t_h_ddp8_h100_pinned_ckpt(name):
    scn = Scenario(name, gpu="h100", n_gpus=8, tick=1.0, duration=420, cpus=224)
    tr = scn.add_trainer(_lm_cfg("gpt-1.3b", 1.3e9, 32768, 16, workers=4, worker_s=0.9, mem_bytes=58e9,
                                 ckpt_every=150, ckpt_s=24, ckpt_first=120, ckpt_style="rank0",
                                 cmdline="python -u train.py --model gpt-1.3b --save-every 500"),
                         list(range(8)))
    scn.view = tr
    scn.pinned = tr
    return scn, {"note": "healthy DDP on 8 GPUs; at each checkpoint rank 0 writes while the other ranks "
                 "spin in dist.barrier()"}


@trace("healthy_lookalike", None)
def t_h_vllm_h200_power_cap_prefill(name):
    scn = Scenario(name, gpu="h200", tick=1.0, duration=330, cpus=64)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B, max_batched_tokens=8192), [0],
                         [chat(lambda t: 3.4 * (1 + 0.1 * math.sin(t / 23)), prompt=(6000, 0.3, 2000, 14000),
                               out=(120, 0.5, 10, 400))])
    scn.view = eng
    return scn, {"note": "summarization traffic keeps the card at its 700 W cap, clocks floating "
                 "1500-1700 MHz, 'power cap' set: healthy"}


@trace("healthy_serving", None)
def t_h_8servers_h100(name):
    scn = Scenario(name, gpu="h100", n_gpus=8, tick=1.0, duration=330, cpus=224)
    rates = [(lambda t, g=g: (6 + 1.5 * (g % 4)) * (1 + 0.1 * math.sin(t / (17 + g)))) for g in range(8)]
    engs = _eight_servers(scn, rates)
    scn.view = engs[5]
    return scn, {"note": "eight healthy independent servers; gputop points at GPU 5's"}


@trace("healthy_lookalike", None)
def t_h_vllm_one_request_blip(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=300, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0], [chat(lambda t: 0.5)])
    scn.view = eng

    def one(s):
        from .serving import Req
        eng._enqueue(Req(10**7, 140.0, 8000, 0, 2900, 4096, 1, 0, 0))
    scn.at(140.0, one)
    return scn, {"note": "a quiet minute with one long request"}


@trace("healthy_serving", None)
def t_h_vllm_h100_ebpf_steady(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=300, cpus=64, ebpf=True)
    eng = scn.add_engine(EngineCfg("vllm", LLAMA8B), [0], [chat(lambda t: 9.0 * (1 + 0.15 * math.sin(t / 17)))])
    scn.view = eng
    scn.host.cpu_jobs.append((60, 200, 5.0, 6))  # a modest co-tenant, well inside 64 CPUs
    return scn, {"note": "steady serving with eBPF launch probes on; a small CPU job runs alongside"}


@trace("healthy_serving", None)
def t_h_sglang_a100_diurnal_rise(name):
    scn = Scenario(name, gpu="a100", tick=1.0, duration=480, cpus=32)
    eng = scn.add_engine(EngineCfg("sglang", MISTRAL7B, max_num_seqs=256, host_ms=1.5, host_seq_us=11), [0],
                         [chat(lambda t: ramp(t, 0, 450, 1.2, 7.0))])
    scn.view = eng
    return scn, {"note": "the morning ramp: load rises 6x over eight minutes, inside capacity"}


@trace("healthy_lookalike", None)
def t_h_gemma_h100_kv_high_no_evictions(name):
    scn = Scenario(name, gpu="h100", tick=1.0, duration=330, cpus=48)
    eng = scn.add_engine(EngineCfg("vllm", GEMMA27B, max_num_seqs=128, mem_util=0.92, max_model_len=8192),
                         [0], [chat(lambda t: 1.5 * (1 + 0.1 * math.sin(t / 21)), out=(350, 0.6, 8, 1200),
                                    max_tokens=1200)])
    scn.view = eng
    return scn, {"note": "a 27B model on one H100 leaves a small KV pool (~60k tokens) that runs "
                 "at about half occupancy without preemptions"}
