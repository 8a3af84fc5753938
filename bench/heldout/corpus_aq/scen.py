"""The 66 traces: a media and streaming company's GPU estate over a month."""
from __future__ import annotations

import math

from .build import serve, stream, train
from .serve import Klass
from .sim import Other, Spec, ramp

SPECS: list[Spec] = []


def P(name, family, cause, culprit, engine, board, ngpu, build, dur, w, note, tick=None, **kw):
    from .sim import seed_of
    h = seed_of("tick:" + name)
    if tick is None:
        tick = (0.5, 1.0, 1.0, 1.0, 2.0)[h % 5] if ngpu < 8 else (1.0, 2.0)[h % 2]
    kw.setdefault("scrape_s", max(tick, (2.0, 5.0, 5.0, 10.0, 15.0)[(h >> 8) % 5]))
    SPECS.append(Spec(name, family, cause, culprit, engine, board, ngpu, tick, dur, w, note, build, **kw))


def wob(r0, amp=0.12, per=240.0, ph=0.0):
    return lambda t: r0 * (1 + amp * math.sin(2 * math.pi * t / per + ph))


def env(w0, w1, rise=8.0, fall=8.0):
    return lambda t: ramp(t, w0, w1, rise, fall)


def pulses(w0, w1, on, off, rise=3.0):
    def f(t):
        if t < w0 or t > w1 + rise:
            return 0.0
        x = (t - w0) % (on + off)
        return ramp(x, 0, on, rise, rise) if t <= w1 else ramp(t, w0, w1, rise, rise)
    return f


def mix(base, e, add):
    return lambda t: base(t) + e(t) * add


# ====================================================================== memory_bandwidth
e = env(190, 420, 30, 10)
P("dit_lora_unfused_attention_long_clips", "video-dit-finetune", "memory_bandwidth", (0,), "trainer",
  "H100", 1, train(wc=0.55, wm=0.12, ar_s=0, opt_wm=0.04, workers=6, batch_cpu_s=0.9, io_s=lambda t: 0.15,
                   samples_per_step=4, wm_extra=lambda t, e=e: 0.55 * e(t), kernels=3000,
                   script="finetune_dit_lora.py"),
  620, (190, 420), "A LoRA fine-tune of the video DiT picks up 257-frame clips; the attention falls back to an "
  "unfused path that materialises the scores in HBM: DRAM saturates and steps take ~2x longer.",
  cpuset=24)
e = env(160, 380, 60, 20)
P("recsys_embedding_lookup_catalogue_growth", "recsys-nightly", "memory_bandwidth", None, "none",
  "H100", 4, train(counter=None, wc=0.18, wm=0.22, ar_s=0.05, opt_wm=0.06, workers=4, batch_cpu_s=0.6,
                   io_s=lambda t: 0.08, samples_per_step=65536, kernels=900,
                   wm_extra=lambda t, e=e: 0.30 * e(t), script="train_two_tower.py"),
  600, (160, 380), "Two-tower recommender, nightly: the new catalogue's item table spreads lookups over cold "
  "rows; the gather/scatter kernels become HBM-bound on all four GPUs (slow onset, ~60 s). Step time +55%.",
  cpuset=32)
e = env(200, 360, 6, 6)
P("embed_pool_fp32_checkpoint_h200", "embedding-pool", "memory_bandwidth", (0,), "none",
  "H200", 1, stream(lambda t, g, e=e: (0.004, 0.010, 0.010 + 0.028 * e(t), 180, "gemm"),
                    rate=lambda t, g: 30.0 * (1 + 0.1 * math.sin(t / 40)), graphs=True, script="embed_server.py"),
  560, (200, 360), "Embedding pool: a rollout loads the fp32 (dequantised) checkpoint; every batch reads "
  "twice the bytes and the encoder turns bandwidth-bound: DRAM near saturation, batches queue.")
e = env(180, 330, 10, 10)
P("seqrec_adam_dense_embedding_update", "recsys-nightly", "memory_bandwidth", None, "trainer",
  "H100", 2, train(wc=0.22, wm=0.10, ar_s=0.05, opt_wm=0.05, workers=4, batch_cpu_s=0.7, io_s=lambda t: 0.1,
                   samples_per_step=8192, kernels=1500, wm_extra=lambda t, e=e: 0.15 * e(t),
                   script="train_seqrec.py"),
  560, (180, 330), "Sequence recommender: a flag turns the sparse Adam into a dense update of the whole "
  "embedding table; the optimizer pass is bandwidth-bound. Mild: steps ~25% slower.", cpuset=32)

# ====================================================================== throttling
P("fsdp_video_rack_power_brake", "video-dit-pretrain", "throttling", None, "trainer",
  "H100", 8, train(wc=0.9, wm=0.1, ar_s=0.12, opt_wm=0.05, workers=5, batch_cpu_s=1.2, io_s=lambda t: 0.2,
                   samples_per_step=64, kernels=4000, script="train_video_dit.py"),
  640, (200, 440), "8x H100 FSDP pre-training: the rack's power controller asserts the power brake "
  "(PDU over budget) on every board; clocks fall to ~1.7 GHz on all eight GPUs and steps slow ~15%.",
  brake=lambda t: 420.0 if 200 <= t <= 440 else None, cpuset=48, host_cpus=128)
P("thumbnail_l40s_admin_power_limit", "thumbnail-gen", "throttling", None, "none",
  "L40S", 4, stream(lambda t, g: (0.05, 1.1, 0.15, 900, "gemm"), rate=lambda t, g: 0.55, script="thumbgen.py"),
  600, (170, 400), "Thumbnail/artwork diffusion on 4x L40S: an admin sets a 200 W power limit on every "
  "board for a facility test; clocks drop on all four and each image takes ~40% longer.",
  power_limit=lambda t, i: 200.0 if 170 <= t <= 400 else None)
P("workstation_4090_failing_fan", "editor-workstation", "throttling", (0,), "none",
  "RTX4090", 1, stream(lambda t, g: (0.08, 1.6, 0.2, 1200, "gemm"), rate=lambda t, g: 0.45,
                       script="upscale_preview.py"),
  660, (200, 460), "An editor's RTX 4090 runs frame upscaling previews; its fan bearing fails and the "
  "thermal resistance climbs over ~2 minutes: thermal slowdown, clocks down ~30% (slow onset).",
  r_scale=lambda t, i: 1.0 + 0.9 * ramp(t, 200, 460, 90, 20), inlet=lambda t, i: 26.0)
P("edit_suite_hot_rtx6000", "editor-workstation", "throttling", None, "none",
  "RTX6000ADA", 2, stream(lambda t, g: (0.06, 1.3, 0.2, 1100, "gemm"), rate=lambda t, g: 0.55,
                          script="render_preview.py"),
  620, (190, 450), "Edit suite's air conditioning fails: inlet rises from 24 to ~50 C over minutes and "
  "both RTX 6000 Ada boards reach thermal slowdown. Mild: ~20% slower renders.",
  inlet=lambda t, i: 24.0 + 33.0 * ramp(t, 190, 450, 40, 40))

# ====================================================================== prefill_interference
base = Klass(wob(5.0), 700, 220, prefix=500)
P("translate_vllm_transcript_stream", "subtitle-translation", "prefill_interference", None, "vllm",
  "H100", 1, serve("vllm", classes=[base, Klass(lambda t: 0.45 * ramp(t, 180, 400, 5, 5), 14000, 60)]),
  600, (180, 400), "Subtitle translation: a batch job streams whole-episode transcripts (~14k tokens) "
  "into the chat deployment; every step carries a prefill chunk and everyone's ITL rises ~2x.")
P("moderation_sglang_frame_prompts", "content-moderation", "prefill_interference", None, "sglang",
  "H200", 1, serve("sglang", model="qwenvl7b", structured=True,
                   classes=[Klass(wob(6.0), 1800, 120, prefix=1200),
                            Klass(lambda t: 0.55 * ramp(t, 200, 420, 5, 5), 22000, 80)]),
  620, (200, 420), "Moderation VLM: a re-review of long-form videos sends 80-frame prompts (~22k image "
  "tokens each) as a steady stream; prefill chunks slow all decodes.")
P("legacy_tgi_long_documents", "legacy-tool", "prefill_interference", None, "tgi",
  "A10G", 1, serve("tgi", model="mistral7b", mem_frac=0.92, max_batched=4096, chunked=False,
                   classes=[Klass(wob(1.2), 400, 160), Klass(lambda t: 0.35 * ramp(t, 170, 380, 5, 5), 4000, 60)]),
  560, (170, 380), "Legacy metadata tool on TGI (A10G): an archive team pastes long shot lists (~3.5k "
  "tokens) every few seconds; TGI's whole-prompt prefills stall the decode batch. Mild: p99 ITL ~2x.")
P("assistant_vllm_chunked_off_bursts", "viewer-assistant", "prefill_interference", None, "vllm",
  "L40S", 1, serve("vllm", model="llama3b", chunked=False,
                   classes=[Klass(wob(4.0), 600, 200, prefix=400),
                            Klass(lambda t: 1.6 * pulses(190, 400, 20, 15)(t), 7000, 40)]),
  600, (190, 400), "Viewer assistant on L40S with chunked prefill disabled: bursts of 7k-token episode "
  "recaps (20 s on, 15 s off) each stall the decode batch; intermittent.")

# ====================================================================== tiny_kernels
def _mod_item(w0, w1):
    def f(t, g):
        if w0 <= t <= w1:  # batch 1 per frame: one frame per forward, small kernels
            return (0.0004, 0.0016, 0.0006, 420, "small")
        return (0.004, 0.020, 0.006, 420, "gemm")
    return f
P("moderation_frames_batch1_deploy", "content-moderation", "tiny_kernels", (0,), "none",
  "H100", 1, stream(_mod_item(180, 400), rate=lambda t, g: 1e9 if 180 <= t <= 400 else 1e9,
                    script="frame_classifier.py"),
  600, (180, 400), "Frame-level moderation classifier: a deploy drops the batching env var and runs one "
  "frame per forward in eager mode; GPU-Util stays ~95% while SM activity falls to ~15%.")
P("asr_live_captions_batch1", "asr-streaming", "tiny_kernels", (0,), "none",
  "H100", 1, stream(lambda t, g: ((0.0008, 0.0012, 0.0004, 600, "small") if 160 <= t <= 380
                                  else (0.002, 0.012, 0.004, 600, "gemm")),
                    rate=lambda t, g: (170.0 if 160 <= t <= 380 else 30.0), script="asr_stream.py"),
  560, (160, 380), "Streaming ASR for live captions: the dynamic batcher's window is set to 0 ms by a "
  "config push; each 200 ms audio chunk runs alone through the encoder: launch-bound, SM mostly idle.")
P("tts_vocoder_eager_fallback", "tts-dubbing", "tiny_kernels", (0,), "none",
  "H200", 1, stream(lambda t, g: ((0.003, 0.004, 0.002, 2600, "gemm") if 200 <= t <= 430
                                  else (0.003, 0.030, 0.008, 2600, "gemm")),
                    rate=None, graphs=True, script="dub_tts.py"),
  620, (200, 430), "Dubbing TTS: torch.compile hits its recompile limit on a new speaker embedding shape "
  "and the vocoder falls back to eager; thousands of tiny launches per utterance.",
  )
P("reranker_pool_batch1_client", "embedding-pool", "tiny_kernels", (0,), "none",
  "H100", 1, stream(lambda t, g: ((0.0004, 0.0010, 0.0003, 150, "small") if 180 <= t <= 360
                                  else (0.002, 0.012, 0.003, 150, "gemm")),
                    rate=lambda t, g: (520.0 if 180 <= t <= 360 else 40.0), script="reranker.py"),
  560, (180, 360), "Reranker pool: a search client update sends candidates one by one instead of in "
  "lists; batch-1 forwards, launch-bound. Mild: throughput -25%, SM activity halves.")
SPECS[-4].build = stream(_mod_item(180, 400), rate=None, script="frame_classifier.py")
SPECS[-2].build = stream(lambda t, g: ((0.001, 0.004, 0.002, 2600, "small") if 200 <= t <= 430
                                       else (0.003, 0.030, 0.008, 2600, "gemm")),
                         rate=None, graphs=False, launch_us=3.0, script="dub_tts.py")
SPECS[-2].build = (lambda old: (lambda rng, spec: _graph_switch(old(rng, spec), 200, 430)))(SPECS[-2].build)


def _graph_switch(job, w0, w1):
    """Graphs outside the window (compiled), eager inside."""
    s = job.sims[0]
    orig = s.step
    def step(t, dt, *a, s=s, orig=orig):
        s.graphs = not (w0 <= t <= w1)
        return orig(t, dt, *a)
    s.step = step
    return job

# ====================================================================== host_cpu_contention
P("vllm_ffmpeg_on_engine_cores", "viewer-assistant", "host_cpu_contention", None, "vllm",
  "H100", 1, serve("vllm", classes=[Klass(wob(6.0), 800, 200, prefix=500)], sched_ms=2.5),
  600, (180, 420), "Assistant on vLLM: the transcode scheduler places six ffmpeg jobs on the engine's "
  "cpuset; run queue and PSI climb, the engine core gets ~40% of a CPU and ITL rises ~2x.",
  cpuset=4, other_cpu=lambda t: 9.0 * ramp(t, 180, 420, 10, 10))
P("sglang_pod_cpu_limit_cut", "subtitle-translation", "host_cpu_contention", None, "sglang",
  "L40S", 1, serve("sglang", model="qwen7b", structured=True, classes=[Klass(wob(5.0), 900, 180, prefix=600)],
                   sched_ms=2.0),
  600, (200, 400), "SGLang translation pod: a namespace LimitRange change cuts the pod to 1.2 CPUs; the "
  "scheduler and tokenizer are quota-throttled most 100-ms periods; tokens/s fall ~35%.",
  quota=lambda t: 1.2 if 200 <= t <= 400 else 8.0)
P("tgi_drm_packager_cores", "legacy-tool", "host_cpu_contention", None, "tgi",
  "A100", 1, serve("tgi", model="mistral7b", classes=[Klass(wob(3.0), 500, 180)], chunked=False, sched_ms=3.0),
  580, (190, 360), "Legacy TGI on a shared A100 host: a DRM packaging batch runs on the same cores; the "
  "router and shard lose CPU (PSI ~40%, involuntary switches x20); per-token latency +60%.",
  cpuset=4, other_cpu=lambda t: 6.0 * ramp(t, 190, 360, 15, 10))
P("llamacpp_workstation_export", "editor-workstation", "host_cpu_contention", None, "llamacpp",
  "RTX4090", 1, serve("llamacpp", model="qwen7b", n_ctx=32768, max_seqs=4, graphs=False,
                      classes=[Klass(wob(0.35), 900, 300)], sched_ms=4.0),
  620, (210, 420), "Editor's workstation: a ProRes export in the NLE takes every core; llama-server's "
  "sampling and launch threads queue behind it. Mild: generation ~25% slower.",
  cpuset=16, host_cpus=16, other_cpu=lambda t: 20.0 * ramp(t, 210, 420, 20, 10), other_host=lambda t: 0.0)

# ====================================================================== input_stall
P("dit_finetune_4k_clips_decode_workers", "video-dit-finetune", "input_stall", None, "trainer",
  "H100", 4, train(wc=0.7, wm=0.1, ar_s=0.1, opt_wm=0.04, workers=4, samples_per_step=16,
                   batch_cpu_s=2.0, io_s=lambda t: 0.3 + (3.5 if 200 <= t <= 430 else 0.0),
                   kernels=3000, script="finetune_dit.py"),
  620, (200, 430), "Video DiT fine-tune on 4x H100: the mix switches to 4K source clips; four decode "
  "workers per rank cannot keep up and every rank waits for batches; GPUs idle ~60% of the time.",
  cpuset=48, host_cpus=96)
P("recsys_cold_object_store_cache", "recsys-nightly", "input_stall", None, "none",
  "A100", 2, train(counter=None, wc=0.25, wm=0.1, ar_s=0.04, opt_wm=0.04, workers=6, batch_cpu_s=0.5,
                   io_s=lambda t: 0.4 + 3.0 * ramp(t, 170, 400, 5, 60), samples_per_step=32768,
                   kernels=900, script="train_two_tower.py"),
  620, (170, 400), "Nightly two-tower training starts on a freshly rotated dataset: the object-store cache "
  "is cold and each parquet shard takes seconds; both ranks wait for data, recovering as the cache warms.",
  cpuset=32)
P("asr_backcatalogue_resample_masters", "asr-batch", "input_stall", (0,), "none",
  "H100", 1, stream(lambda t, g: ((0.012 + 0.020 * ramp(t, 190, 380, 10, 10)) , 0.030, 0.012, 800, "gemm"),
                    rate=None, graphs=True, script="transcribe_backcatalogue.py"),
  580, (190, 380), "Back-catalogue ASR batch reaches 96 kHz studio masters; host-side resampling per file "
  "grows and the GPU waits between batches. Mild: ~30% of the GPU time lost.")
P("vae_train_object_store_throttling", "video-vae-train", "input_stall", None, "trainer",
  "H200", 8, train(wc=0.5, wm=0.1, ar_s=0.08, opt_wm=0.04, workers=4, batch_cpu_s=0.9,
                   io_s=lambda t: 0.2 + 9.0 * pulses(200, 440, 25, 20)(t), samples_per_step=64,
                   kernels=2500, script="train_vae.py"),
  660, (200, 440), "VAE training on 8x H200: the object store returns 503 SlowDown in waves; loader "
  "queues on all ranks drain and refill (intermittent, ~25 s stalls every ~45 s).", cpuset=64, host_cpus=128)
SPECS[-4].window = (200, 440)
SPECS[-1].window = (200, 445)

# ====================================================================== collective_straggler
P("fsdp_h100x8_gpu5_hot_slot", "video-dit-pretrain", "collective_straggler", (5,), "trainer",
  "H100", 8, train(wc=0.8, wm=0.1, ar_s=0.1, opt_wm=0.05, workers=5, batch_cpu_s=1.0, io_s=lambda t: 0.2,
                   samples_per_step=64, kernels=4000, script="train_video_dit.py"),
  640, (200, 430), "8x H100 FSDP: GPU 5's heatsink fan tray fails; it hits thermal slowdown and its "
  "clock drops; the other seven spin in NCCL waiting for it each step.",
  r_scale=lambda t, i: 1.0 + (1.5 * ramp(t, 200, 430, 40, 20) if i == 5 else 0.0), cpuset=48, host_cpus=128)
P("fsdp_a100x4_rank2_ffmpeg_cores", "video-dit-finetune", "collective_straggler", (2,), "none",
  "A100", 4, train(counter=None, wc=0.6, wm=0.1, ar_s=0.08, opt_wm=0.04, workers=4, batch_cpu_s=1.0,
                   io_s=lambda t: 0.2, samples_per_step=16, kernels=3000, host_gap=0.05,
                   rank_cpu=lambda t, r: (0.12 if (r == 2 and 180 <= t <= 400) else 1.0),
                   script="finetune_dit.py"),
  600, (180, 400), "4x A100 fine-tune with per-rank cpusets: ffmpeg transcodes land on rank 2's cores; "
  "its launcher and decode workers starve, rank 2 arrives late and the others wait in all-reduce.",
  cpuset=32)
P("seqrec_h100x2_gpu1_power_limit", "recsys-nightly", "collective_straggler", (1,), "trainer",
  "H100", 2, train(wc=0.5, wm=0.05, ar_s=0.05, opt_wm=0.03, workers=4, batch_cpu_s=0.6, io_s=lambda t: 0.1,
                   samples_per_step=8192, kernels=1500, script="train_seqrec.py"),
  560, (170, 360), "Sequence recommender on 2x H100: someone leaves `nvidia-smi -i 1 -pl 350` from a "
  "power test on GPU 1 only; it runs at lower clocks and GPU 0 waits. Mild: steps ~25% slower.",
  power_limit=lambda t, i: 350.0 if (i == 1 and 170 <= t <= 360) else None)
P("dit_h200x4_rank3_uneven_shards", "video-dit-finetune", "collective_straggler", (3,), "trainer",
  "H200", 4, train(wc=0.7, wm=0.1, ar_s=0.08, opt_wm=0.04, workers=5, batch_cpu_s=1.0, io_s=lambda t: 0.2,
                   samples_per_step=16, kernels=3000,
                   rank_slow=lambda t, r: (1.0 + 0.7 * ramp(t, 190, 410, 5, 5) if r == 3 else 1.0),
                   script="finetune_dit.py"),
  600, (190, 410), "4x H200 fine-tune: a new bucket of long clips is sharded unevenly and rank 3 gets the "
  "longest sequences; its forward/backward takes 1.7x and the others idle in NCCL.", cpuset=48, host_cpus=96)

# ====================================================================== oversized_request
P("assistant_vllm_three_hour_transcript", "viewer-assistant", "oversized_request", None, "vllm",
  "H100", 1, serve("vllm", classes=[Klass(wob(4.0), 800, 220, prefix=500)],
                   inject=[(200.0, 118000, 5200)]),
  560, (200, 330), "A producer pastes a three-hour programme transcript (~118k tokens) and asks for a "
  "chapter-by-chapter summary: prefill, then every decode step reads its 14 GiB of KV; ITL rises for all.")
P("moderation_vllm_n16_logprobs_client", "content-moderation", "oversized_request", None, "vllm",
  "H200", 1, serve("vllm", model="qwenvl7b", classes=[Klass(wob(5.0), 1500, 150, prefix=1000)],
                   inject=[(190.0 + 18 * i, 1400, 400, 16, 20) for i in range(10)]),
  560, (190, 370), "One calibration client sends n=16, logprobs=20 requests back to back; the logprobs "
  "work for 16 sequences rides every step and stalls the batch (ITL ~2x, TTFT up).")
P("sglang_season_consistency_check", "subtitle-translation", "oversized_request", None, "sglang",
  "H100", 1, serve("sglang", model="llama8b", classes=[Klass(wob(5.0), 800, 200, prefix=500)],
                   inject=[(180.0, 95000, 6000), (240.0, 98000, 6000), (300.0, 92000, 6000)]),
  560, (180, 380), "A subtitle QA client sends a whole season's subtitles (~95k tokens) three times in a "
  "row for a consistency check; each long prefill and its huge KV reads slow every other request.")
P("tgi_legacy_max_new_tokens_client", "legacy-tool", "oversized_request", None, "tgi",
  "A100", 1, serve("tgi", model="mistral7b", classes=[Klass(wob(2.0), 500, 160)], chunked=False,
                   inject=[(190.0 + 40 * i, 30000, 3000) for i in range(4)]),
  560, (190, 350), "Legacy TGI: one script sends four 30k-token rights documents with max_new_tokens=3000; "
  "the prefills stall the batch and the long decodes read a big KV. Mild: p99 ITL ~2x.")

# ====================================================================== kv_pressure
P("transcripts_vllm_small_kv_pool", "subtitle-translation", "kv_pressure", None, "vllm",
  "L40S", 1, serve("vllm", mem_frac=0.52, classes=[Klass(wob(1.5), 1500, 300, prefix=600),
                                                   Klass(lambda t: 0.18 * ramp(t, 190, 330, 20, 10), 3000, 1500)]),
  620, (190, 420), "Transcript summaries on L40S with gpu_memory_utilization=0.52: a nightly batch of "
  "long-output summaries fills the small KV pool; requests wait for blocks and are preempted.")
P("sglang_moderation_long_rationales", "content-moderation", "kv_pressure", None, "sglang",
  "L40S", 1, serve("sglang", model="qwenvl7b", mem_frac=0.5, structured=True,
                   classes=[Klass(wob(3.0), 1800, 100, prefix=1200),
                            Klass(lambda t: 0.6 * ramp(t, 200, 330, 20, 10), 2500, 1500)]),
  600, (200, 400), "Moderation VLM on SGLang: a policy prompt change makes the model write long JSON "
  "rationales; decode lengths grow until the token pool is full and requests are retracted.")
P("assistant_l4_partner_long_contexts", "viewer-assistant", "kv_pressure", None, "vllm",
  "L4", 1, serve("vllm", model="gemma2b", mem_frac=0.5, max_seqs=64,
                 classes=[Klass(wob(1.0), 900, 250, prefix=500),
                          Klass(lambda t: 0.15 * ramp(t, 180, 290, 20, 10), 6000, 800)]),
  560, (180, 360), "Small assistant on an L4: a partner integration sends 6k-token episode contexts with "
  "long answers; the pool sits near full and a few preemptions a minute follow. Mild.")

# ====================================================================== gpu_shared
P("rtx6000_editor_notebook_training", "editor-workstation", "gpu_shared", (0,), "llamacpp",
  "RTX6000ADA", 1, serve("llamacpp", model="qwen7b", n_ctx=32768, max_seqs=8,
                         classes=[Klass(wob(0.35), 900, 250)]),
  600, (180, 420), "Shared edit-suite workstation: another editor starts a Jupyter fine-tune of a style "
  "model on the GPU serving llama-server; time-slicing halves the server's throughput.",
  others=[Other(0, 180, 420, lambda t: 0.9, 14 * 1024 ** 3, "python3",
                "/home/jlee/.venv/bin/python -m ipykernel_launcher -f kernel-3.json", user="jlee")])
P("h100x4_tts_forgotten_blender_render", "tts-dubbing", "gpu_shared", (2,), "none",
  "H100", 4, stream(lambda t, g: (0.004, 0.06, 0.01, 600, "gemm"), rate=None, graphs=True, script="dub_tts.py"),
  600, (200, 440), "4x H100 dubbing TTS node: an artist's forgotten Blender Cycles render lands on GPU 2; "
  "the TTS worker there gets ~half the GPU time.",
  others=[Other(2, 200, 440, lambda t: 0.95, 9 * 1024 ** 3, "blender",
                "/opt/blender/blender -b shot_041.blend -E CYCLES -a -- --cycles-device CUDA", user="artist")])
P("l40s_thumbnail_adhoc_eval_neighbour", "thumbnail-gen", "gpu_shared", (0,), "none",
  "L40S", 1, stream(lambda t, g: (0.05, 1.0, 0.15, 900, "gemm"), rate=lambda t, g: 0.6, script="thumbgen.py"),
  560, (180, 370), "A data scientist's ad-hoc CLIP evaluation runs on the thumbnail service's L40S at "
  "a modest duty cycle. Mild: thumbnails ~25% slower.",
  others=[Other(0, 180, 370, lambda t: 0.35 + 0.1 * math.sin(t / 9), 6 * 1024 ** 3, "python3",
                "python3 eval_clip.py --split holdout", user="mchen")])

# ====================================================================== spec_decode_rejected
P("assistant_vllm_stale_draft", "viewer-assistant", "spec_decode_rejected", None, "vllm",
  "H100", 1, serve("vllm", classes=[Klass(wob(5.0), 700, 250, prefix=500)], spec_k=4,
                   spec_alpha=lambda t: 0.78 - 0.45 * ramp(t, 190, 400, 10, 10)),
  600, (190, 400), "Viewer assistant with a draft model: a new style adapter is rolled onto the target but "
  "not the draft; acceptance falls from ~0.78 to ~0.33 per token and tokens/s drop.")
P("sglang_eagle_korean_catalogue", "subtitle-translation", "spec_decode_rejected", None, "sglang",
  "H200", 1, serve("sglang", model="llama8b", classes=[Klass(wob(5.0), 800, 250, prefix=500)], spec_k=3,
                   spec_alpha=lambda t: 0.80 - 0.50 * ramp(t, 200, 420, 15, 15)),
  620, (200, 420), "Translation with EAGLE on SGLang: a Korean catalogue batch arrives; the draft head, "
  "trained on English/Spanish, is rejected most of the time (accept length 3.1 -> 1.4).")
P("llamacpp_draft_edl_prompts", "editor-workstation", "spec_decode_rejected", None, "llamacpp",
  "RTX4090", 1, serve("llamacpp", model="qwen7b", n_ctx=16384, max_seqs=2, spec_k=8,
                      classes=[Klass(wob(0.3), 600, 350)],
                      spec_alpha=lambda t: 0.72 - 0.22 * ramp(t, 180, 380, 10, 10)),
  560, (180, 380), "Editor's llama-server with a draft model: the editor switches to generating EDL/XML "
  "edit lists, which the small draft predicts poorly. Mild: acceptance 0.72 -> 0.5, ~25% slower.")

# ====================================================================== host_launch_jitter
P("vllm_eager_log_shipper_launch_core", "content-moderation", "host_launch_jitter", None, "vllm",
  "H100", 1, serve("vllm", model="qwenvl7b", graphs=False, classes=[Klass(wob(4.0), 1500, 140, prefix=1000)]),
  600, (190, 410), "Moderation VLM in eager mode (vision encoder): the log shipper's compression threads "
  "are pinned onto the engine core's CPU during a log flood; launch calls straddle preemptions.",
  ebpf=True, launch_core=lambda t: 2.5 * ramp(t, 190, 410, 5, 5))
P("tts_l40s_drm_packager_launch_core", "tts-dubbing", "host_launch_jitter", (0,), "none",
  "L40S", 1, stream(lambda t, g: (0.003, 0.012, 0.004, 1400, "gemm"), rate=None, launch_us=5.0,
                    script="dub_tts.py"),
  580, (180, 400), "TTS on L40S with eBPF on: a DRM packager's worker threads share the TTS launcher's "
  "core; the launch thread is preempted mid-call and kernel launches arrive in clumps.",
  ebpf=True, launch_core=lambda t: 1.4 * ramp(t, 180, 400, 5, 5))
P("dit_train_backup_compressor_rank0", "video-dit-finetune", "host_launch_jitter", (0,), "trainer",
  "H100", 1, train(wc=0.25, wm=0.05, ar_s=0, opt_wm=0.03, workers=4, batch_cpu_s=0.4, io_s=lambda t: 0.1,
                   samples_per_step=4, kernels=9000, script="finetune_dit_lora.py"),
  580, (200, 380), "Single-GPU LoRA run with eBPF: a nightly backup's zstd threads share the launcher's "
  "core; launch latency p99 goes from ~10 us to milliseconds. Mild: ~20% slower steps.",
  ebpf=True, launch_core=lambda t: 0.9 * ramp(t, 200, 380, 5, 5))

# ====================================================================== healthy look-alikes
def H(name, family, engine, board, ngpu, build, dur, note, **kw):
    P(name, family, None, None, engine, board, ngpu, build, dur, None, note, **kw)


H("assistant_evening_traffic_falloff", "viewer-assistant", "vllm", "H100", 1,
  serve("vllm", classes=[Klass(lambda t: 7.0 * (1 - 0.8 * min(1, max(0, (t - 200) / 400))), 700, 220, prefix=500)]),
  840, "Traffic falls after the evening peak (7 -> 1.4 req/s); GPU-Util and tokens/s fall with it, latency does not.")
H("vllm_sleep_wake_model_swap", "subtitle-translation", "vllm", "H100", 1,
  serve("vllm", classes=[Klass(lambda t: 0.0 if 300 <= t <= 345 else 4.0, 800, 200, prefix=500)]),
  720, "The router drains the instance for 45 s while a LoRA set is reloaded (no traffic, GPU idle, same processes), then traffic returns.")
H("fsdp_h100x8_checkpoint_phases", "video-dit-pretrain", "trainer", "H100", 8,
  train(wc=0.8, wm=0.1, ar_s=0.1, opt_wm=0.05, workers=5, batch_cpu_s=1.0, io_s=lambda t: 0.2,
        samples_per_step=64, kernels=4000, ckpt_every=180, ckpt_s=22, script="train_video_dit.py"),
  780, "8x H100 FSDP with a sharded checkpoint every 180 steps: ~22 s of low GPU activity each time, by design.",
  cpuset=48, host_cpus=128)
H("dit_finetune_eval_phases", "video-dit-finetune", "trainer", "H200", 4,
  train(wc=0.7, wm=0.1, ar_s=0.08, opt_wm=0.04, workers=5, batch_cpu_s=1.0, io_s=lambda t: 0.2,
        samples_per_step=16, kernels=3000, eval_every=200, eval_s=25, script="finetune_dit.py"),
  720, "4x H200 fine-tune with a 25 s evaluation pass every 200 steps: no collectives, different kernel mix.",
  cpuset=48, host_cpus=96)
H("videogen_vae_decode_phases", "video-generation", "none", "H100", 1,
  stream(lambda t, g: ((0.02, 2.6, 0.3, 4000, "gemm") if int(t // 11) % 3 else (0.02, 1.2, 2.2, 1500, "vae")),
         rate=None, script="videogen_worker.py"),
  720, "Video generation worker alternates DiT denoising (tensor-heavy) with VAE decode (conv, DRAM-heavy); the profile swings every few seconds.")
H("asr_batch_launch_bound_by_design", "asr-batch", "none", "A10G", 1,
  stream(lambda t, g: (0.002, 0.004, 0.001, 900, "gemm"), rate=None, script="transcribe_backcatalogue.py"),
  600, "Back-catalogue ASR with a small CTC model at batch 1 per file on an A10G: launch-bound the whole time, as it always is.")
H("sglang_long_transcript_deployment", "subtitle-translation", "sglang", "H200", 1,
  serve("sglang", model="qwen7b", classes=[Klass(wob(0.9), 16000, 400, prefix=2000)]),
  720, "This SGLang deployment only serves whole-episode transcripts (~16k tokens): long prefills and a busy KV pool are its normal state.")
H("tts_new_worker_same_tree", "tts-dubbing", "none", "H100", 2,
  stream(lambda t, g: (0.004, 0.05, 0.01, 600, "gemm"), rate=lambda t, g: (0.0 if (g == 1 and t < 300) else 12.0),
         graphs=True, script="dub_tts.py"),
  660, "A second TTS worker of the same launcher starts on GPU 1 at 300 s (a new job beside its sibling, same tree).")
H("assistant_long_prompt_burst_absorbed", "viewer-assistant", "vllm", "H200", 1,
  serve("vllm", classes=[Klass(wob(5.0), 700, 220, prefix=500),
                         Klass(lambda t: 1.0 if 320 <= t <= 332 else 0.0, 9000, 60)]),
  660, "Twelve seconds of long recap prompts (a dozen 9k-token requests); the H200 absorbs them with a short TTFT bump.")
H("l40s_power_capped_always", "thumbnail-gen", "none", "L40S", 2,
  stream(lambda t, g: (0.05, 1.0, 0.15, 900, "gemm"), rate=lambda t, g: 0.6, script="thumbgen.py"),
  600, "Thumbnail L40S boards are capped at 260 W fleet-wide and run at the cap all the time ('power cap' set throughout).",
  power_limit=lambda t, i: 260.0)
H("recsys_nightly_epoch_boundaries", "recsys-nightly", "trainer", "A100", 4,
  train(wc=0.25, wm=0.12, ar_s=0.05, opt_wm=0.05, workers=6, batch_cpu_s=0.5, io_s=lambda t: 0.1,
        samples_per_step=65536, kernels=900, epoch_every=450, epoch_s=6, script="train_two_tower.py"),
  720, "Nightly two-tower training with a step counter; at each epoch boundary the loaders restart (6 s idle).",
  cpuset=48, host_cpus=96)
H("editor_llamacpp_bursty_use", "editor-workstation", "llamacpp", "RTX4090", 1,
  serve("llamacpp", model="qwen7b", n_ctx=32768, max_seqs=4,
        classes=[Klass(lambda t: 0.6 if int(t // 60) % 3 == 0 else 0.05, 800, 300)]),
  720, "An editor uses the local llama-server in bursts while logging footage: idle minutes, then a few requests.",
  host_cpus=16, cpuset=16)
H("tgi_legacy_quiet_day", "legacy-tool", "tgi", "A10G", 1,
  serve("tgi", model="mistral7b", mem_frac=0.92, max_batched=4096, chunked=False,
        classes=[Klass(wob(0.8, 0.3, 300), 450, 150)]),
  600, "Legacy TGI tool on a quiet day: a handful of requests per second, batch of 1-3.")
H("embedding_pool_batch_jobs", "embedding-pool", "none", "L4", 1,
  stream(lambda t, g: (0.003, 0.03, 0.008, 200, "gemm"), rate=lambda t, g: (24.0 if int(t // 90) % 2 else 4.0),
         graphs=True, script="embed_server.py"),
  720, "Embedding pool on L4: catalogue re-embedding jobs come in 90 s waves; utilisation swings between waves.")
H("assistant_spec_decode_content_mix", "viewer-assistant", "vllm", "H100", 1,
  serve("vllm", classes=[Klass(wob(5.0), 700, 250, prefix=500)], spec_k=4,
        spec_alpha=lambda t: 0.74 + 0.05 * math.sin(t / 50)),
  660, "Assistant with speculative decoding: acceptance wanders between 0.69 and 0.79 as the content mix changes; nothing to fix.")
H("thumbnail_queue_drains", "thumbnail-gen", "none", "A100", 1,
  stream(lambda t, g: (0.05, 0.4, 0.06, 900, "gemm"), rate=lambda t, g: (1.8 if t < 380 else 0.2), script="thumbgen.py"),
  660, "Artwork generation: a campaign's queue drains at ~380 s and the A100 goes mostly idle.")
H("ffmpeg_neighbour_isolated_cpuset", "viewer-assistant", "vllm", "H100", 1,
  serve("vllm", classes=[Klass(wob(5.0), 700, 220, prefix=500)]),
  660, "ffmpeg transcodes fill the host's other cores from 250 s; the engine's cpuset is isolated and unaffected (host CPU% up only).",
  other_host=lambda t: 4.0 + 40.0 * ramp(t, 250, 520, 20, 20), host_cpus=64, cpuset=8)
H("t4_transcode_cluster_inference_hot", "asr-batch", "none", "T4", 1,
  stream(lambda t, g: (0.01, 0.10, 0.03, 500, "gemm"), rate=None, script="scene_detect.py"),
  600, "Old T4 transcoding node running scene detection: runs at ~75 C and its 70 W cap all day, as T4s do.",
  inlet=lambda t, i: 34.0)
H("asr_live_event_ramp_up", "asr-streaming", "none", "H100", 1,
  stream(lambda t, g: (0.002, 0.006, 0.002, 260, "gemm"), graphs=True,
         rate=lambda t, g: 6.0 + 40.0 * min(1, max(0, (t - 240) / 60)), script="asr_stream.py"),
  660, "Live captions: a sports broadcast starts at 240 s and streams ramp up 7x; batches get bigger, no fault.")
H("recsys_embedding_bound_by_design", "recsys-nightly", "none", "A100", 2,
  train(counter=None, wc=0.12, wm=0.35, ar_s=0.04, opt_wm=0.08, workers=4, batch_cpu_s=0.4, io_s=lambda t: 0.08,
        samples_per_step=65536, kernels=900, script="train_dlrm.py"),
  600, "DLRM-style model whose embedding gathers keep the A100s' memory bandwidth busy all the time; steady and normal.",
  cpuset=32)
H("reranker_pod_quota_steady", "embedding-pool", "none", "L4", 1,
  stream(lambda t, g: (0.004, 0.01, 0.003, 150, "gemm"), rate=lambda t, g: 30.0, graphs=True, script="reranker.py"),
  600, "Reranker pod under a 2-CPU quota that it rarely reaches: a few throttled periods a minute, steady.",
  quota=lambda t: 2.0)
H("moderation_vllm_prefix_cache_warming", "content-moderation", "vllm", "H200", 1,
  serve("vllm", model="qwenvl7b", classes=[Klass(wob(5.0), 1800, 120, prefix=1400)]),
  600, "Moderation VLM shortly after a deploy: style-guide prefixes warm the prefix cache, steady state follows.")
