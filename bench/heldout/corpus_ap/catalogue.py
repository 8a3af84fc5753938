"""The corpus: 44 faults and 22 healthy look-alikes."""
from __future__ import annotations

from corpus_ap.hw import GiB
from corpus_ap.scenarios import (TraceSpec, bump, diurnal, gpu_ctl, job_mod, launch_other, mix_of, model, mul,
                                 other_cpu, quota_fn, serve, steps, tenant)

RAG = mix_of(3000, 0.6, 280, 0.6, p_max=24000, o_max=1024)
COPILOT = mix_of(1400, 0.5, 220, 0.6, p_max=8000, o_max=1024)
BATCH = mix_of(6000, 0.4, 500, 0.4, p_max=20000, o_max=1500)
LEGACY = mix_of(700, 0.5, 180, 0.5, p_max=4000, o_max=512)
CHAT = mix_of(600, 0.6, 300, 0.5, p_max=6000, o_max=1024)


def longmix(base, t0, t1, frac, p_mu, o_mu=200, period=None, duty=1.0):
    """``base`` with, inside [t0, t1], a share ``frac`` of requests that are long prompts."""
    on = bump(t0, t1, 1.0, base=0.0, ramp=3, off=0.1, period=period, duty=duty)

    def f(t, rng):
        if on(t) > 0.5 and rng.random() < frac:
            return dict(prompt=int(p_mu * rng.uniform(0.7, 1.3)), out=int(o_mu * rng.uniform(0.6, 1.4)), maxtok=1024,
                        tag="long")
        return base(t, rng)
    return f


def once(t_list, req):
    """Inject these requests (one client's few) at these times."""
    pending = sorted(t_list)

    def f(t, rng):
        if pending and t >= pending[0]:
            pending.pop(0)
            return dict(req)
        return None
    return f


def sequence(items):
    """Inject these (time, request) pairs in order (one client's few requests)."""
    pending = sorted(items, key=lambda x: x[0])

    def f(t, rng):
        if pending and t >= pending[0][0]:
            return dict(pending.pop(0)[1])
        return None
    return f


def S(name, family, cause, note, **kw):
    return TraceSpec(name, family, cause, note, **kw)


def rag_vllm(tr, rate=4.0, mix=RAG, **kw):
    return serve(tr, "vllm", model("llama8b"), rate=lambda t: rate, mix=mix, prefix_hit=0.55, prefix_len=1500, **kw)


def fsdp(tr, *, counter="trainer_tokens_total", flops=1.3e14, nbytes=4e10, kernels=1500, coll=1.3e9, link=200e9,
         workers=4, batch_cpu=0.15, io=lambda t: 0.01, **kw):
    return steps(tr, cmd="torchrun --nproc-per-node %d -m esmtrain.fsdp --model esm2_650m --seq-len 1024" % tr.ngpu,
                 counter=counter, flops=flops, nbytes=nbytes, kernels=kernels, coll_bytes=coll, link_bw=link,
                 workers=workers, batch_cpu_s=batch_cpu, io_s=io, opt_bytes=1.3e9, samples=32, tokens=32768,
                 mem_frac=0.72, **kw)


def md(tr, *, atoms_gpu_s=0.00025, kernels=28, fill=0.35, inner=200, coll=0.0, **kw):
    """OpenMM/GROMACS-like: per MD step ~28 kernels, GPU time per step from system size."""
    fl = atoms_gpu_s * tr_spec_flops(tr) * 0.72
    return steps(tr, cmd="python3 run_md.py --platform CUDA --system complex_%s.xml --steps 50000000" % tr.name[-4:],
                 user="md", flops=fl, nbytes=0, kernels=kernels, launch_us=4.0, host_ms=0.02, fill=fill, inner=inner,
                 coll_bytes=coll, link_bw=50e9, coll_lat=25e-6, mem_frac=0.08, jitter=0.01, **kw)


def tr_spec_flops(tr):
    from corpus_ap.hw import Spec
    return Spec(tr.gpu).flops


def W(t0, t1):
    return (float(t0), float(t1))


def catalogue():
    L = []
    add = L.append
    # ================================================================ memory_bandwidth (4)
    t = S("af2_triangle_attn_long_target", "structure-prediction", "memory_bandwidth",
          "AlphaFold-like inference on an H100 SXM meets a 2,700-residue complex: the unfused triangle-attention "
          "path is HBM-bound (DRAM ~90%) and each recycle takes ~2.6x longer until the target is done.",
          gpu="H100 SXM", tick=1.0, duration=620, window=W(200, 440), cpus=48, day=2)
    steps(t, cmd="python3 run_alphafold.py --model_preset=multimer --use_precomputed_msas --fasta targets/batch_17.fa",
          flops=2.2e14, nbytes=2.0e11, kernels=2600, inner=1, mem_frac=0.55)
    t.setups += [job_mod("bytes", bump(200, 440, 6.5, ramp=8, off=2)), job_mod("flops", bump(200, 440, 0.6, ramp=8, off=2)),
                 job_mod("fill", bump(200, 440, 1.05, ramp=8, off=2))]
    add(t)
    t = S("gnn_embedding_lookup_bw", "property-prediction", "memory_bandwidth",
          "GNN property predictor on an A100 80GB: a shard of large macrocycle graphs makes the atom/bond embedding "
          "gather and scatter dominate; memory-controller busy ~85% and samples/s fall ~30% (mild). No GPM on A100.",
          gpu="A100 80GB", tick=2.0, duration=640, window=W(230, 470), mild=True, cpus=32, day=3)
    steps(t, cmd="python3 train_gnn.py --arch mpnn --dataset admet_v4 --batch 256", counter="trainer_samples_total",
          flops=2.0e13, nbytes=6e10, kernels=420, workers=6, batch_cpu_s=0.08, samples=256, mem_frac=0.4)
    t.setups += [job_mod("bytes", bump(230, 470, 2.1, ramp=20, off=10))]
    add(t)
    t = S("diffusion_design_unfused_attn_bw", "protein-design", "memory_bandwidth",
          "Backbone diffusion sampling on an H200: a design campaign switches to 1,024-residue scaffolds and the "
          "pair-attention falls back to an unfused kernel; DRAM saturates and denoising steps take ~2x longer.",
          gpu="H200", tick=1.0, duration=600, window=W(180, 420), cpus=64, day=5)
    steps(t, cmd="python3 sample_backbones.py --ckpt rfd_v3.pt --num_designs 2000 --length 256", user="design",
          flops=1.6e14, nbytes=6e10, kernels=900, mem_frac=0.35)
    t.setups += [job_mod("bytes", bump(180, 420, 9.0, ramp=2, off=1)), job_mod("flops", bump(180, 420, 1.1, ramp=2, off=1))]
    add(t)
    t = S("esm_long_crop_attn_bw", "protein-lm-training", "memory_bandwidth",
          "ESM-2 fine-tune on 4x H100 SXM moves to the 4k-token crop bucket of its curriculum; attention runs "
          "unfused, all ranks become HBM-bound alike (DRAM ~85%), tokens/s -25% (mild).",
          gpu="H100 SXM", ngpu=4, tick=1.0, duration=660, window=W(240, 480), mild=True, cpus=96, day=6)
    fsdp(t)
    t.setups += [job_mod("bytes", bump(240, 480, 3.2, ramp=15, off=5))]
    add(t)
    # ================================================================ throttling (4)
    t = S("chem_copilot_rack_power_brake", "llm-serving", "throttling",
          "Chemistry copilot (vLLM, Qwen2.5-32B TP4 on A100 80GB): the rack PDU hits its budget and the BMC "
          "engages the power brake on all four boards; SM clocks fall ~40%, TTFT and ITL rise.",
          gpu="A100 80GB", ngpu=4, tick=1.0, duration=600, window=W(200, 400), cpus=96, day=7, scrape_s=5)
    serve(t, "vllm", model("qwen32b"), rate=lambda t: 5.0, mix=COPILOT, prefix_hit=0.6, prefix_len=900)
    t.controls.append(gpu_ctl("brake", bump(200, 400, 0.45, ramp=3, off=3)))
    add(t)
    t = S("esm_fsdp_hot_room", "protein-lm-training", "throttling",
          "ESM-2 FSDP pretraining on 8x H100 SXM: a CRAC unit fails, inlet air climbs ~20 C over a few minutes "
          "(slow onset), every GPU hits its thermal slowdown and clocks drop together.",
          gpu="H100 SXM", ngpu=8, tick=2.0, duration=720, window=W(200, 480), cpus=128, day=8)
    fsdp(t, flops=1.6e14)
    t.controls.append(gpu_ctl("inlet", bump(200, 480, 64.0, base=24.0, ramp=110, off=60)))
    add(t)
    t = S("l40s_admin_power_limit", "protein-design-training", "throttling",
          "Molecule-diffusion training on one L40S: an admin runs nvidia-smi -pl 200 for a 'power test' and restores "
          "350 W four minutes later; clocks -30%, steps slower (mild).",
          gpu="L40S", tick=1.0, duration=600, window=W(200, 440), mild=True, cpus=32, day=9)
    steps(t, cmd="python3 train_moldiff.py --config configs/geom_drugs.yaml", counter="trainer_steps_total",
          flops=1.2e14, nbytes=6e9, kernels=700, workers=4, batch_cpu_s=0.05, mem_frac=0.55)
    t.counter = "trainer_samples_total"
    t.controls.append(gpu_ctl("limit", bump(200, 440, 200.0, base=350.0, ramp=1, off=1)))
    add(t)
    t = S("rtx4090_failing_fan_md", "molecular-dynamics", "throttling",
          "OpenMM on a lab RTX 4090 workstation (large membrane system): the GPU fan bearing fails and stalls "
          "intermittently; die temperature hits the slowdown and ns/day drops while it lasts.",
          gpu="RTX 4090", tick=1.0, duration=660, window=W(220, 500), cpus=24, day=10)
    md(t, atoms_gpu_s=0.0016, kernels=30, fill=0.95, inner=30)
    t.controls.append(gpu_ctl("rth", bump(220, 500, 0.24, base=0.11, ramp=30, off=40, period=90, duty=0.75)))
    t.note += " Intermittent: the fan stalls for ~70 s of every 90 s."
    add(t)
    # ================================================================ prefill_interference (4)
    t = S("rag_vllm_paper_ingest_stream", "llm-serving", "prefill_interference",
          "Literature RAG assistant (vLLM, Llama-3.1-8B, H100 SXM): a new ingestion client streams 24k-token full "
          "papers for summarisation at ~1/s; their prefill chunks share every step and everyone's ITL rises ~3x.",
          gpu="H100 SXM", tick=1.0, duration=600, window=W(200, 420), cpus=64, day=11)
    rag_vllm(t, mix=longmix(RAG, 200, 420, 0.05, 20000))
    add(t)
    t = S("rag_sglang_patent_stream", "llm-serving", "prefill_interference",
          "Patent-search assistant on SGLang (Qwen2.5-14B, A100 80GB): a bulk job submits long patent claims "
          "(~16k tokens) for a few minutes; decode latency of interactive users rises.",
          gpu="A100 80GB", tick=1.0, duration=700, window=W(210, 450), cpus=64, day=12, scrape_s=10)
    serve(t, "sglang", model("qwen14b"), rate=lambda t: 0.6, mix=longmix(RAG, 210, 450, 0.1, 16000), pool_frac=0.88,
          prefix_hit=0.5, prefix_len=1200)
    add(t)
    t = S("tgi_legacy_long_prompt_stream", "llm-serving", "prefill_interference",
          "Legacy assay-notes app on TGI (Mistral-7B, A10G): a script pastes long instrument logs (~6k tokens) "
          "every few seconds; TGI prefills whole prompts between decode steps and mean time per token rises (mild).",
          gpu="A10G", tick=2.0, duration=600, window=W(200, 440), mild=True, cpus=16, day=13, scrape_s=15)
    serve(t, "tgi", model("mistral7b"), rate=lambda t: 1.2, mix=longmix(LEGACY, 200, 440, 0.12, 6000),
          chunked=False, budget=8192, pool_frac=0.9)
    add(t)
    t = S("vllm_v0_summariser_no_chunked_prefill", "llm-serving", "prefill_interference",
          "Older vLLM (V0 metrics, chunked prefill off) summarising preprints on an L40S: the arXiv-digest cron pushes "
          "8-12k-token prompts for ~3 minutes; whole-prompt prefills stall decode (TPOT p99 ~2.5x, mild).",
          gpu="L40S", tick=1.0, duration=600, window=W(180, 380), mild=True, cpus=32, day=14)
    serve(t, "vllm", model("llama8b"), rate=lambda t: 1.5, mix=longmix(COPILOT, 180, 380, 0.2, 10000), chunked=False,
          v0=True, budget=16384)
    add(t)
    # ================================================================ tiny_kernels (4)
    t = S("docking_batch1_ligand_chunk", "virtual-screening", "tiny_kernels",
          "GPU docking screen on an H100 PCIe: a library chunk of mixed-size ligands defeats the batcher and each "
          "ligand is scored alone (batch 1): GPU-Util stays ~90% while SM activity drops to ~10%, ligands/s -70%.",
          gpu="H100 PCIe", tick=1.0, duration=600, window=W(190, 430), cpus=32, day=15)
    steps(t, cmd="./unidock --receptor 7XYZ.pdbqt --ligand_index chunk_0412.txt --batch 64 --search_mode balance",
          pname="unidock", user="screening", flops=5e12, nbytes=4e9, kernels=180, fill=0.9, workers=3,
          batch_cpu_s=0.02, samples=64, mem_frac=0.2)
    t.setups += [job_mod("kernels", bump(190, 430, 12.0, ramp=1, off=1)), job_mod("flops", bump(190, 430, 0.05, ramp=1, off=1)),
                 job_mod("bytes", bump(190, 430, 0.05, ramp=1, off=1)), job_mod("fill", bump(190, 430, 0.12, ramp=1, off=1))]
    add(t)
    t = S("esm_embed_batch1_client", "embedding-serving", "tiny_kernels",
          "ESM-2 embedding service on an H100 SXM (plain PyTorch, eager): one lab's notebook sends sequences one at a "
          "time; the server runs batch 1 of short sequences, launch-bound (SM ~10%, GPU-Util ~95%).",
          gpu="H100 SXM", tick=0.5, duration=560, window=W(180, 400), cpus=32, day=16)
    steps(t, cmd="python3 -m embedsvc.server --model esm2_t33_650M --max-batch 64 --port 7100", user="svc-embed",
          flops=3e13, nbytes=3e9, kernels=450, fill=0.85, mem_frac=0.15, counter="trainer_samples_total", samples=48)
    t.setups += [job_mod("flops", bump(180, 400, 0.02, ramp=2, off=2)), job_mod("bytes", bump(180, 400, 0.5, ramp=2, off=2)),
                 job_mod("fill", bump(180, 400, 0.13, ramp=2, off=2))]
    t.note += " Its samples counter is the service's own (embeddings done)."
    add(t)
    t = S("gnn_eval_batch1_loop", "property-prediction", "tiny_kernels",
          "GNN trainer on an H200: the validation loop was configured with batch_size=1; for ~3 minutes of each "
          "epoch-end it scores molecules one at a time, busy GPU with SM activity near 5%.",
          gpu="H200", tick=1.0, duration=600, window=W(200, 390), cpus=32, day=17)
    steps(t, cmd="python3 train_gnn.py --arch egnn --dataset qm9_plus --batch 512", counter="trainer_samples_total",
          flops=4e13, nbytes=1e10, kernels=380, workers=4, batch_cpu_s=0.05, samples=512, mem_frac=0.3)
    t.setups += [job_mod("flops", bump(200, 390, 0.004, ramp=1, off=1)), job_mod("bytes", bump(200, 390, 0.01, ramp=1, off=1)),
                 job_mod("fill", bump(200, 390, 0.08, ramp=1, off=1)), job_mod("kernels", bump(200, 390, 0.6, ramp=1, off=1)),
                 job_mod("kdev", bump(200, 390, 2.4, ramp=1, off=1)), job_mod("batch_cpu", bump(200, 390, 0.01, ramp=1, off=1))]
    add(t)
    t = S("vina_gpu_eager_fallback", "virtual-screening", "tiny_kernels",
          "GPU docking on an L40S with eBPF on: CUDA-graph capture fails for a new receptor's grid size and the code "
          "falls back to per-ligand eager launches; cudaLaunchKernel rate x10, throughput -45% (mild). No GPM on L40S.",
          gpu="L40S", tick=1.0, duration=620, window=W(200, 420), mild=True, cpus=32, ebpf=True, day=18)
    steps(t, cmd="./vina-gpu --config screen_kinase.conf --thread 8000", pname="vina-gpu", user="screening",
          flops=2e13, nbytes=3e9, kernels=120, fill=0.9, workers=2, batch_cpu_s=0.02, samples=32, mem_frac=0.15)
    t.setups += [job_mod("kernels", bump(200, 420, 14.0, ramp=1, off=1)), job_mod("fill", bump(200, 420, 0.35, ramp=1, off=1)),
                 job_mod("flops", bump(200, 420, 0.25, ramp=1, off=1))]
    add(t)
    # ================================================================ host_cpu_contention (4)
    t = S("rag_vllm_msa_search_same_cores", "llm-serving", "host_cpu_contention",
          "RAG engine (vLLM, H100 SXM) shares a 16-core cpuset with the structure team's jackhmmer/hhblits MSA "
          "searches that Slurm placed there; run queue and PSI climb, the engine's scheduler loses CPU, ITL +2.5x.",
          gpu="H100 SXM", tick=1.0, duration=600, window=W(200, 440), cpus=96, cores=range(16), day=19)
    rag_vllm(t)
    t.setups.append(other_cpu(bump(200, 440, 44.0, base=1.0, ramp=10, off=5)))
    add(t)
    t = S("gnn_pod_cpu_limit_resized", "property-prediction", "host_cpu_contention",
          "GNN trainer pod (A100 40GB) with CPU-side RDKit featurisation: an in-place pod resize drops its CPU limit "
          "from 12 to 3 cores; the cgroup is throttled most periods and the loader starves the GPU.",
          gpu="A100 40GB", tick=2.0, duration=640, window=W(220, 470), cpus=64, quota=12.0, day=20)
    steps(t, cmd="python3 train_gnn.py --arch dimenet --featurize online --workers 8", counter="trainer_samples_total",
          flops=1.5e13, nbytes=5e9, kernels=300, workers=8, batch_cpu_s=0.35, samples=128, mem_frac=0.35)
    t.setups.append(quota_fn(bump(220, 470, 3.0, base=12.0, ramp=0.1, off=0.1)))
    t.pod, t.container = "ml-train/gnn-dimenet-7c9f", "containerd:4be1c0d2a9f3"
    t.cgroup = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c9f.slice/cri-containerd-4be1c0d2a9f3.scope"
    add(t)
    t = S("chem_sglang_db_reindex_cpuset", "llm-serving", "host_cpu_contention",
          "Chemistry copilot on SGLang (A100 80GB): the vector database on the same 8-core cpuset starts a reindex "
          "(slow onset); the scheduler and tokenizer threads wait for CPU, TTFT and ITL rise.",
          gpu="A100 80GB", tick=1.0, duration=640, window=W(200, 470), cpus=64, cores=range(8), day=21)
    serve(t, "sglang", model("chem7b"), rate=lambda t: 4.0, mix=COPILOT, pool_frac=0.85, prefix_hit=0.6, prefix_len=800)
    t.setups.append(other_cpu(bump(200, 470, 26.0, base=0.5, ramp=60, off=10)))
    add(t)
    t = S("tgi_backup_agent_compress", "llm-serving", "host_cpu_contention",
          "Legacy TGI on an A10G VM: the backup agent's compression threads run on all 8 vCPUs; PSI and involuntary "
          "switches rise, the router and shard lose CPU and latency p99 rises ~1.8x (mild).",
          gpu="A10G", tick=2.0, duration=620, window=W(220, 440), mild=True, cpus=8, day=22, scrape_s=10)
    serve(t, "tgi", model("mistral7b"), rate=lambda t: 1.0, mix=LEGACY, chunked=False, sched_us=3000)
    t.setups.append(other_cpu(bump(220, 440, 16.0, base=0.3, ramp=5, off=5)))
    add(t)
    # ================================================================ input_stall (4)
    t = S("cryoem_refine_cold_lustre", "cryo-em", "input_stall",
          "Cryo-EM 3D refinement on 4x A100 40GB reads a new particle stack from Lustre with a cold cache; every "
          "rank waits on reads (GPU-Util drops to ~25% on all four), then the cache warms.",
          gpu="A100 40GB", ngpu=4, tick=2.0, duration=660, window=W(210, 480), cpus=64, day=23)
    steps(t, cmd="mpirun -np 4 relion_refine_mpi --i particles_J412.star --gpu --j 4", pname="relion_refine_mpi",
          user="cryoem", flops=4e13, nbytes=2e10, kernels=300, workers=4, batch_cpu_s=0.08,
          io_s=bump(210, 480, 1.6, base=0.02, ramp=5, off=30), coll_bytes=2e8, link_bw=100e9, mem_frac=0.6)
    add(t)
    t = S("microscopy_seg_tiff_decode", "microscopy", "input_stall",
          "U-Net segmentation training on 2x L40S: the next shard is 4k x 4k TIFF tiles; JPEG/TIFF decoding in 6 "
          "loader workers per rank cannot keep up and both ranks wait for batches.",
          gpu="L40S", ngpu=2, tick=1.0, duration=620, window=W(200, 430), cpus=32, day=24)
    steps(t, cmd="torchrun --nproc-per-node 2 train_unet.py --data /lustre/imaging/organoids --workers 6",
          counter="trainer_samples_total", flops=6e13, nbytes=1e10, kernels=500, workers=6, batch_cpu_s=0.25,
          samples=16, coll_bytes=6e7, link_bw=25e9, mem_frac=0.5)
    t.setups.append(job_mod("batch_cpu", bump(200, 430, 12.0, ramp=5, off=5)))
    add(t)
    t = S("esm_ft_nfs_latency", "protein-lm-training", "input_stall",
          "ESM fine-tune on 8x H100 SXM reads tokenised shards from an NFS server that another team saturates; "
          "per-batch read latency rises and all ranks idle ~25% of the time (mild).",
          gpu="H100 SXM", ngpu=8, tick=1.0, duration=640, window=W(220, 460), mild=True, cpus=128, day=25)
    fsdp(t, workers=2, io=bump(220, 460, 0.7, base=0.01, ramp=10, off=10))
    add(t)
    t = S("gnn_rdkit_macrocycle_featurise", "property-prediction", "input_stall",
          "GNN predictor on an A10G with online RDKit conformer featurisation: a macrocycle-heavy shard makes each "
          "batch ~3x costlier on the CPU; 4 workers fall behind and the GPU waits (no step counter exported).",
          gpu="A10G", tick=2.0, duration=620, window=W(210, 450), cpus=16, day=26)
    steps(t, cmd="python3 train_gnn.py --arch schnet --featurize rdkit-online --workers 4", flops=1.2e13, nbytes=3e9,
          kernels=260, workers=4, batch_cpu_s=0.35, mem_frac=0.4)
    t.setups.append(job_mod("batch_cpu", bump(210, 450, 8.0, ramp=10, off=10)))
    add(t)
    # ================================================================ collective_straggler (4)
    t = S("esm_fsdp_rank5_hot_gpu", "protein-lm-training", "collective_straggler",
          "ESM-2 FSDP on 8x H100 SXM: GPU 5 sits behind a blocked air baffle, overheats and clocks down; the other "
          "seven ranks wait for it in every all-gather (busy, SM low).",
          gpu="H100 SXM", ngpu=8, tick=1.0, duration=660, window=W(220, 480), culprit=(5,), cpus=128, day=27)
    fsdp(t, flops=1.6e14)
    t.controls.append(gpu_ctl("inlet", bump(220, 480, 58.0, base=25.0, ramp=40, off=30), gpus=[5]))
    add(t)
    t = S("md_halo_rank2_irq_cores", "molecular-dynamics", "collective_straggler",
          "GROMACS-like multi-GPU MD (4x A100 80GB, halo exchange every step): rank 2's launch thread shares its "
          "cores with a NIC's interrupt-heavy ksoftirqd; rank 2 launches late and the other ranks wait.",
          gpu="A100 80GB", ngpu=4, tick=1.0, duration=620, window=W(200, 430), culprit=(2,), cpus=64, day=28)
    md(t, atoms_gpu_s=0.0004, kernels=40, fill=0.7, inner=100, coll=2e6, sync_ms=4.0)

    def slow2(job, node, rng):
        job.slow_rank[2] = bump(200, 430, 12.0, ramp=5, off=5)
    t.setups.append(slow2)
    add(t)
    t = S("diffusion_ddp_rank3_nvlink_degraded", "protein-design-training", "collective_straggler",
          "Protein-diffusion DDP on 4x H200: GPU 3's NVLink drops to a degraded link after an XID-less retrain; "
          "every all-reduce runs at its link's speed and the ring waits on rank 3 (slow link).",
          gpu="H200", ngpu=4, tick=1.0, duration=620, window=W(210, 440), culprit=(3,), cpus=96, day=29)
    steps(t, cmd="torchrun --nproc-per-node 4 train_design.py --model se3diff_large", counter="trainer_steps_total",
          flops=1.2e14, nbytes=3e10, kernels=900, workers=4, batch_cpu_s=0.05, coll_bytes=1.6e9, link_bw=300e9,
          opt_bytes=3e9, mem_frac=0.5)
    t.counter = "trainer_samples_total"

    def link3(job, node, rng):
        job.link_slow[3] = bump(210, 440, 0.05, ramp=1, off=1)
    t.setups.append(link3)
    t.note += " Borderline: the slowdown shows in the collective; GPU 3's NVLink throughput is what points at it."
    add(t)
    t = S("a6000_ddp_lower_slot_hot", "protein-lm-training", "collective_straggler",
          "Two RTX A6000 in a lab workstation training a small protein LM with DDP: the lower card breathes the upper "
          "card's exhaust on a warm afternoon, throttles, and GPU 0 waits for it (mild, ~20% slower steps).",
          gpu="RTX A6000", ngpu=2, tick=2.0, duration=640, window=W(220, 470), culprit=(1,), mild=True, cpus=24, day=30)
    steps(t, cmd="torchrun --nproc-per-node 2 train_plm.py --model plm_150m", counter="trainer_tokens_total",
          flops=1.1e14, nbytes=1e10, kernels=700, workers=4, batch_cpu_s=0.05, coll_bytes=3e8, link_bw=20e9,
          tokens=16384, mem_frac=0.6)
    t.controls.append(gpu_ctl("inlet", bump(220, 470, 45.0, base=28.0, ramp=50, off=30), gpus=[1]))
    add(t)
    # ================================================================ oversized_request (4)
    t = S("chem_vllm_n16_logprobs_client", "llm-serving", "oversized_request",
          "Chemistry copilot on vLLM (chem-7B, H100 SXM): one client's reaction-enumeration script sends a few "
          "n=16, logprobs=20, max_tokens=1024 requests; the logprob work per step stalls the batch, ITL ~3x.",
          gpu="H100 SXM", tick=1.0, duration=600, window=W(200, 360), cpus=64, day=1)
    serve(t, "vllm", model("chem7b"), rate=lambda t: 3.0, mix=COPILOT, prefix_hit=0.5, prefix_len=700)
    t.setups.append(job_mod_inject(once([200.0, 250.0, 300.0], dict(prompt=900, out=900, n=16, lp=20, maxtok=1024,
                                                                    tag="n16"))))
    add(t)
    t = S("rag_sglang_150k_patent_bundle", "llm-serving", "oversized_request",
          "Patent RAG on SGLang (Llama-3.1-8B, H200): one analyst submits a 150k-token patent bundle with a long "
          "answer; its chunked prefill and then its huge KV read slow every other request's decode.",
          gpu="H200", tick=1.0, duration=620, window=W(210, 360), cpus=64, day=4, scrape_s=5)
    serve(t, "sglang", model("llama8b"), rate=lambda t: 4.0, mix=RAG, pool_frac=0.88, prefix_hit=0.5, prefix_len=1500,
          budget=4096)
    t.setups.append(job_mod_inject(once([210.0, 212.0], dict(prompt=150000, out=3000, maxtok=4096, tag="giant"))))
    add(t)
    t = S("rag_vllm_a100_full_paper_n8", "llm-serving", "oversized_request",
          "RAG assistant on vLLM (Llama-3.1-8B, A100 80GB, prefix caching on): a user asks for 8 alternative "
          "summaries (n=8) of a 90k-token review with max_tokens 2048; the batch's ITL rises ~2x while it runs (mild).",
          gpu="A100 80GB", tick=1.0, duration=600, window=W(190, 330), mild=True, cpus=48, day=2)
    rag_vllm(t, rate=1.1)
    t.setups.append(job_mod_inject(once([190.0], dict(prompt=90000, out=1800, n=8, maxtok=2048, tag="n8"))))
    add(t)
    t = S("llamacpp_workstation_60k_paste", "llm-serving", "oversized_request",
          "llama.cpp server on a lab RTX 4090 (4 parallel slots): one scientist pastes a 60k-token thesis into "
          "the shared server and asks two follow-ups (each re-sends the whole conversation; busy chat traffic has "
          "reused its slot, so it is prefilled again); its prompt processing takes the batch for minutes and the "
          "other slots crawl.",
          gpu="RTX 4090", tick=1.0, duration=560, window=W(180, 330), cpus=24, day=3, scrape_s=3)
    serve(t, "llamacpp", model("llama8b", wbytes=4.9e9), rate=lambda t: 0.8, mix=CHAT, chunked=True, budget=2048,
          slots=4, pool_tokens=65536, graphs=False, user="lab")
    t.setups.append(job_mod_inject(sequence([(180.0, dict(prompt=60000, out=800, maxtok=2048, tag="paste")),
                                             (228.0, dict(prompt=60900, out=700, maxtok=2048, tag="paste")),
                                             (276.0, dict(prompt=61700, out=700, maxtok=2048, tag="paste"))])))
    add(t)
    # ================================================================ kv_pressure (3)
    t = S("rag_vllm_small_pool_long_papers", "llm-serving", "kv_pressure",
          "RAG on vLLM (Llama-3.1-8B, H100 SXM) runs with gpu_memory_utilization 0.35 because a reranker shares the "
          "GPU; when users move to whole-paper questions (~12k tokens) the pool fills, requests are preempted "
          "and wait for blocks.",
          gpu="H100 SXM", tick=1.0, duration=720, window=W(200, 440), cpus=64, day=5)
    rag_vllm(t, rate=2.5, pool_frac=0.45, mix=longmix(RAG, 200, 440, 0.2, 12000, o_mu=600))
    t.tenants.append(None)
    t.tenants.pop()
    add(t)
    t = S("sglang_a100_40g_retractions", "llm-serving", "kv_pressure",
          "Literature Q&A on SGLang (Qwen2.5-14B, A100 40GB): a journal club posts long multi-paper contexts with long "
          "answers; the token pool runs out and the scheduler retracts running requests.",
          gpu="A100 40GB", tick=1.0, duration=780, window=W(210, 400), cpus=48, day=7, scrape_s=5)
    serve(t, "sglang", model("qwen14b"), rate=bump(210, 400, 0.2, base=0.14, ramp=3, off=0.1),
          mix=longmix(RAG, 210, 400, 0.35, 9000, o_mu=900), pool_frac=0.88, prefix_hit=0.3, prefix_len=1000)
    add(t)
    t = S("vllm_batch_lane_long_outputs", "llm-serving", "kv_pressure",
          "Night batch lane on vLLM (Llama-3.1-8B, L40S): a new 'extended abstract' job doubles output lengths; "
          "KV usage pins at 100% and preemptions start (mild: throughput -20%).",
          gpu="L40S", tick=2.0, duration=760, window=W(220, 460), mild=True, cpus=32, day=8, scrape_s=10)
    serve(t, "vllm", model("llama8b"), rate=bump(220, 460, 0.34, base=0.2, ramp=3, off=0.1),
          mix=longmix(BATCH, 220, 460, 0.6, 6000, o_mu=2400),
          pool_frac=0.9, max_seqs=64)
    add(t)
    # ================================================================ gpu_shared (3)
    t = S("rag_vllm_notebook_training_cell", "llm-serving", "gpu_shared",
          "RAG engine on an H100 SXM (vLLM): a researcher's Jupyter kernel on the same GPU (outside the engine's "
          "tree) runs a fine-tuning cell for a few minutes; time-slicing slows every decode step ~1.8x.",
          gpu="H100 SXM", tick=1.0, duration=600, window=W(200, 420), cpus=64, day=9)
    rag_vllm(t, pool_frac=0.75)
    tenant(t, 0, 200, 420, 0.85, sm=0.8, ten=0.5, dram=0.3, mem=14 * GiB)
    add(t)
    t = S("diffusion_sampler_forgotten_sweep", "protein-design", "gpu_shared",
          "Ligand-diffusion sampling on an L4: a colleague's forgotten hyper-parameter sweep worker (another user, "
          "another container) lands on the same GPU; the sampler's throughput halves.",
          gpu="L4", tick=2.0, duration=640, window=W(220, 480), cpus=16, day=10)
    steps(t, cmd="python3 sample_ligands.py --ckpt diffsbdd.ckpt --pockets pockets_v2.csv", counter="trainer_samples_total",
          flops=1.5e13, nbytes=2e9, kernels=500, mem_frac=0.4, samples=8)
    tenant(t, 0, 220, 480, 0.9, sm=0.7, ten=0.4, dram=0.3, mem=7 * GiB, user="kpatel",
           cmdline="python3 sweep_agent.py --sweep moldiff-lr/8kq2", name="python3")
    add(t)
    t = S("af2_h200_misplaced_docking_job", "structure-prediction", "gpu_shared",
          "AlphaFold-like inference on an H200: another team's docking job started with the wrong CUDA_VISIBLE_DEVICES "
          "shares the GPU for ~4 minutes; recycles slow ~1.6x (mild).",
          gpu="H200", tick=1.0, duration=620, window=W(200, 440), mild=True, cpus=64, day=11)
    steps(t, cmd="python3 run_alphafold.py --model_preset=monomer --use_precomputed_msas --fasta queue/prod_2291.fa",
          flops=1.8e14, nbytes=4e10, kernels=2000, mem_frac=0.45)
    tenant(t, 0, 200, 440, 0.55, sm=0.5, ten=0.1, dram=0.2, mem=10 * GiB, user="dock",
           name="unidock", cmdline="./unidock --receptor 8ABC.pdbqt --ligand_index chunk_0091.txt")
    add(t)
    # ================================================================ spec_decode_rejected (3)
    t = S("chem_vllm_eagle_smiles_shift", "llm-serving", "spec_decode_rejected",
          "Chemistry copilot on vLLM with EAGLE (k=4, H100 SXM): traffic shifts to SMILES/reaction-string outputs "
          "the EAGLE head never saw; acceptance falls from ~0.7 to ~0.15 and tokens/s per request drop.",
          gpu="H100 SXM", tick=1.0, duration=600, window=W(200, 430), cpus=64, day=12)
    serve(t, "vllm", model("chem7b"), rate=lambda t: 3.0, mix=COPILOT, prefix_hit=0.5, prefix_len=700,
          spec_dec=dict(k=4, method="eagle", draft_s=0.0025, alpha=bump(200, 430, 0.15, base=0.72, ramp=10, off=10)))
    add(t)
    t = S("rag_vllm_ngram_novel_generation", "llm-serving", "spec_decode_rejected",
          "RAG on vLLM with n-gram speculation (k=5, A100 80GB): quotes from retrieved papers usually match; a "
          "hypothesis-generation campaign asks for novel text, acceptance collapses and per-token latency rises (mild).",
          gpu="A100 80GB", tick=2.0, duration=620, window=W(210, 450), mild=True, cpus=48, day=13)
    rag_vllm(t, rate=1.1, spec_dec=dict(k=5, method="ngram", draft_s=0.0004,
                                        alpha=bump(210, 450, 0.12, base=0.55, ramp=20, off=10)))
    add(t)
    t = S("sglang_stale_draft_model", "llm-serving", "spec_decode_rejected",
          "SGLang with a draft model (Qwen2.5-0.5B drafting for a fine-tuned Qwen2.5-14B, H200): the target is "
          "hot-swapped to a new fine-tune but the draft is stale; accept length falls from ~3 to ~1.3.",
          gpu="H200", tick=1.0, duration=620, window=W(210, 450), cpus=64, day=14, scrape_s=5)
    serve(t, "sglang", model("qwen14b"), rate=lambda t: 3.0, mix=COPILOT, pool_frac=0.85,
          spec_dec=dict(k=4, method="draft", draft_s=0.004, alpha=bump(210, 450, 0.25, base=0.75, ramp=3, off=3)))
    add(t)
    # ================================================================ host_launch_jitter (3)
    t = S("vllm_eager_av_scanner_launch_cores", "llm-serving", "host_launch_jitter",
          "vLLM in eager mode (custom protein-text model, L40S, eBPF on): the endpoint-security scanner's threads "
          "are pinned to the engine's launch cores; cudaLaunchKernel calls get preempted (ms tails), ITL +2x.",
          gpu="L40S", tick=1.0, duration=600, window=W(200, 420), cpus=32, ebpf=True, day=15)
    serve(t, "vllm", model("mistral7b"), rate=lambda t: 2.0, mix=COPILOT, graphs=False)
    t.setups.append(launch_other(bump(200, 420, 1.6, base=0.0, ramp=2, off=2)))
    add(t)
    t = S("openmm_backup_agent_launch_thread", "molecular-dynamics", "host_launch_jitter",
          "OpenMM (small solvated ligand system, H100 PCIe, eBPF on): the nightly backup agent's compression "
          "threads land on the MD launch thread's core; launches stall in ms tails and ns/day falls.",
          gpu="H100 PCIe", tick=1.0, duration=620, window=W(210, 450), cpus=32, ebpf=True, day=16)
    md(t, atoms_gpu_s=0.00012, kernels=26, fill=0.4, inner=200)
    t.setups.append(launch_other(bump(210, 450, 1.3, base=0.0, ramp=2, off=2)))
    add(t)
    t = S("docking_a10g_edr_agent", "virtual-screening", "host_launch_jitter",
          "Docking on an A10G VM (eBPF on): the EDR agent rescans the ligand library directory with threads on the "
          "docking process's core; launch latency tails grow and throughput drops ~25% (mild, intermittent bursts).",
          gpu="A10G", tick=2.0, duration=620, window=W(200, 440), mild=True, cpus=8, ebpf=True, day=17)
    steps(t, cmd="./unidock --receptor 5R7Y.pdbqt --ligand_index chunk_0007.txt --batch 32", pname="unidock",
          user="screening", flops=2e12, nbytes=1e9, kernels=400, fill=0.6, workers=1, batch_cpu_s=0.01, mem_frac=0.2)
    t.setups.append(launch_other(bump(200, 440, 1.0, base=0.0, ramp=2, off=2, period=40, duty=0.7)))
    add(t)
    # ================================================================ healthy look-alikes (22)
    h = healthy_traces()
    L += h
    return L


def job_mod_inject(fn):
    def s(job, node, rng):
        job.mods["inject"] = fn
    return s


def healthy_traces():
    L = []
    add = L.append
    t = S("rag_vllm_night_traffic_fall", "llm-serving", None,
          "RAG assistant (vLLM, H100 SXM) as the working day ends: arrivals fall ~8x over ten minutes; GPU-Util and "
          "tokens/s drop with the load, latencies stay normal.", gpu="H100 SXM", tick=1.0, duration=720, cpus=64, day=3)
    rag_vllm(t, rate=1.0)
    t.setups.append(job_mod("rate", lambda x: 5.0 * max(0.12, 1 - x / 650)))
    add(t)
    t = S("vllm_drained_model_reload", "llm-serving", None,
          "The router drains the chemistry copilot's vLLM (sleep mode) for a weight update: no traffic for ~90 s, "
          "then traffic returns. Planned; no request waits.", gpu="H100 SXM", tick=1.0, duration=660, cpus=64, day=6)
    serve(t, "vllm", model("chem7b"), rate=lambda t: 3.0, mix=COPILOT, prefix_hit=0.5, prefix_len=700)
    t.setups.append(job_mod("rate", bump(250, 340, 0.001, ramp=1, off=1)))
    add(t)
    t = S("esm_fsdp_checkpoint_phases", "protein-lm-training", None,
          "ESM-2 FSDP on 8x H100 SXM writes a sharded checkpoint every ~2.5 min: GPUs idle ~25 s each time while "
          "rank threads serialise. Normal.", gpu="H100 SXM", ngpu=8, tick=2.0, duration=780, cpus=128, day=9)
    fsdp(t, ckpt_every=700, ckpt_s=25.0)
    add(t)
    t = S("plm_eval_pass_each_epoch", "protein-lm-training", None,
          "Protein LM on 4x A100 80GB runs an evaluation pass (forward only, no all-reduce) every few minutes: "
          "util and power dip, then training resumes.", gpu="A100 80GB", ngpu=4, tick=1.0, duration=720, cpus=96, day=12)
    fsdp(t, flops=0.8e14, eval_every=500, eval_steps=400, counter="trainer_samples_total")
    add(t)
    t = S("af2_msa_phase_gpu_idle", "structure-prediction", None,
          "AlphaFold-like pipeline on an A100 80GB: jackhmmer/hhblits MSA search (in the job's own tree, on its "
          "own cores) runs ~4 min with the GPU idle by design, then the model runs.",
          gpu="A100 80GB", tick=2.0, duration=780, cpus=64, day=15)
    steps(t, cmd="python3 run_alphafold.py --model_preset=monomer --fasta queue/prod_3310.fa --db_preset full_dbs",
          flops=1.2e14, nbytes=3e10, kernels=1800, mem_frac=0.5, msa_threads=14.0,
          phase=lambda x: "msa" if (x % 390) < 230 else "train")
    add(t)
    t = S("openmm_small_system_steady", "molecular-dynamics", None,
          "OpenMM on an H100 SXM with a small (20k-atom) system for its whole run: launch-bound at steady state "
          "(GPU-Util ~70%, SM ~25%). That is what this job always looks like.",
          gpu="H100 SXM", tick=1.0, duration=600, cpus=32, day=18)
    md(t, atoms_gpu_s=0.00006, kernels=26, fill=0.4, inner=300)
    add(t)
    t = S("sglang_patent_rag_long_context_normal", "llm-serving", None,
          "Patent RAG on SGLang (Llama-3.1-8B, H200) whose prompts are always 20-40k tokens: high prefill share and "
          "ITL that would be slow elsewhere are this deployment's normal.", gpu="H200", tick=1.0, duration=640,
          cpus=64, day=20, scrape_s=5)
    serve(t, "sglang", model("llama8b"), rate=lambda t: 0.3, mix=mix_of(28000, 0.2, 400, 0.4, p_max=40000),
          pool_frac=0.88, prefix_hit=0.6, prefix_len=12000)
    add(t)
    t = S("sweep_packed_one_gpu_starts", "hyperparameter-sweep", None,
          "A hyper-parameter sweep packed on one A100 40GB (same user, same job tree): a second trial process starts "
          "and per-trial speed drops as they share the GPU, as the sweep owner planned.",
          gpu="A100 40GB", tick=1.0, duration=600, cpus=32, day=21)
    steps(t, cmd="python3 sweep.py --trials-per-gpu 2 --study gnn_lr_wd", flops=1.0e13, nbytes=3e9, kernels=300,
          mem_frac=0.3, counter="trainer_samples_total", samples=64)
    tenant(t, 0, 240, 700, 0.6, sm=0.6, ten=0.3, dram=0.3, mem=9 * GiB, user="ml", inside=True, cpu=1.0,
           cmdline="python3 sweep.py --trial 2 --study gnn_lr_wd", ramp=20)
    add(t)
    t = S("rag_vllm_long_prompt_burst_absorbed", "llm-serving", None,
          "RAG on vLLM (H100 SXM): a 20-s burst of ~10 long prompts (a lab uploading a reading list) is absorbed; "
          "a short TTFT bump, ITL barely moves.", gpu="H100 SXM", tick=1.0, duration=600, cpus=64, day=22)
    rag_vllm(t, mix=longmix(RAG, 300, 320, 0.12, 12000))
    add(t)
    t = S("l40s_power_capped_fleet_normal", "protein-design-training", None,
          "Diffusion training on an L40S fleet that is power-capped to 275 W by policy, always: clocks sit under the "
          "cap with 'power cap' set the whole time. Normal for this fleet.", gpu="L40S", tick=1.0, duration=600,
          cpus=32, power_limit=275, day=23)
    steps(t, cmd="python3 train_moldiff.py --config configs/crossdocked.yaml", counter="trainer_samples_total",
          flops=1.2e14, nbytes=6e9, kernels=700, workers=4, batch_cpu_s=0.05, mem_frac=0.55, samples=32)
    add(t)
    t = S("vllm_night_batch_lane_saturated", "llm-serving", None,
          "Night batch lane on vLLM (Llama-3.1-8B, 2x H100 SXM TP2): a batch client keeps ~40 requests in flight "
          "with a fixed concurrency; the GPU is busy, the queue steady, no preemption.", gpu="H100 SXM", ngpu=2,
          tick=2.0, duration=660, cpus=64, day=24, scrape_s=10)
    serve(t, "vllm", model("llama8b"), rate=lambda t: 2.2, mix=BATCH, max_seqs=128)
    add(t)
    t = S("llamacpp_workstation_bursty_user", "llm-serving", None,
          "llama.cpp on an RTX 4090 workstation with one scientist chatting now and then: long idle gaps, short "
          "bursts of generation.", gpu="RTX 4090", tick=1.0, duration=600, cpus=24, day=25, scrape_s=3)
    serve(t, "llamacpp", model("llama8b", wbytes=4.9e9), rate=lambda t: 0.08, mix=CHAT, budget=2048, slots=4,
          pool_tokens=65536, graphs=False, user="lab")
    add(t)
    t = S("tgi_legacy_steady_low_traffic", "llm-serving", None,
          "Legacy TGI (Mistral-7B, A10G) serving its assay-notes app at a steady trickle: low util, normal latency.",
          gpu="A10G", tick=2.0, duration=600, cpus=8, day=26, scrape_s=15)
    serve(t, "tgi", model("mistral7b"), rate=lambda t: 0.7, mix=LEGACY, chunked=False)
    add(t)
    t = S("esm_embed_pool_small_batches", "embedding-serving", None,
          "ESM embedding pool on an L4: small batches all day, launch-bound and steady (GPU-Util ~60%). Its normal.",
          gpu="L4", tick=2.0, duration=600, cpus=16, day=27)
    steps(t, cmd="python3 -m embedsvc.server --model esm2_t12_35M --max-batch 16 --port 7100", user="svc-embed",
          flops=4e11, nbytes=3e8, kernels=220, fill=0.3, mem_frac=0.1)
    add(t)
    t = S("cryoem_2d_class_steady_partial_io", "cryo-em", None,
          "Cryo-EM 2D classification on 2x A100 40GB with a warm cache whose reads take ~20% of each iteration, "
          "every iteration, for the whole run: steady, not a stall.", gpu="A100 40GB", ngpu=2, tick=2.0, duration=620,
          cpus=32, day=28)
    steps(t, cmd="mpirun -np 2 relion_refine_mpi --i particles_J388.star --K 200 --gpu", pname="relion_refine_mpi",
          user="cryoem", flops=4e13, nbytes=2e10, kernels=300, workers=2, batch_cpu_s=0.08, io_s=lambda x: 0.12,
          coll_bytes=1e8, link_bw=100e9, mem_frac=0.6)
    add(t)
    t = S("diffusion_sampling_steady_h100", "protein-design", None,
          "Backbone diffusion sampling on an H100 SXM running steadily for 10 minutes.", gpu="H100 SXM", tick=0.5,
          duration=560, cpus=32, day=29)
    steps(t, cmd="python3 sample_backbones.py --ckpt rfd_v3.pt --num_designs 5000 --length 150", user="design",
          flops=1.0e14, nbytes=3e10, kernels=900, mem_frac=0.3)
    add(t)
    t = S("notebook_idle_memory_held", "notebooks", None,
          "A JupyterLab kernel on an RTX A6000 holds 30 GB of tensors and does nothing for 10 minutes.",
          gpu="RTX A6000", tick=2.0, duration=600, cpus=24, day=30)
    steps(t, cmd="python3 -m ipykernel_launcher -f /home/amira/.local/share/jupyter/runtime/kernel-a1.json",
          user="amira", flops=1e10, nbytes=1e8, kernels=10, mem_frac=0.62, phase=lambda x: "idle")
    add(t)
    t = S("chem_vllm_spec_acceptance_drift", "llm-serving", None,
          "Chemistry copilot on vLLM with EAGLE (H100 SXM): acceptance drifts 0.62-0.75 with the prompt mix, as it "
          "always does; no collapse.", gpu="H100 SXM", tick=1.0, duration=600, cpus=64, day=2)
    serve(t, "vllm", model("chem7b"), rate=lambda t: 3.0, mix=COPILOT, prefix_hit=0.5, prefix_len=700,
          spec_dec=dict(k=4, method="eagle", draft_s=0.0025, alpha=diurnal(0.75, 0.83, period=400)))
    add(t)
    t = S("esm_grad_accum_cycles", "protein-lm-training", None,
          "ESM fine-tune on 4x H100 SXM with gradient accumulation 8: a short all-reduce and optimizer burst every "
          "eighth micro-step; periodic, steady.", gpu="H100 SXM", ngpu=4, tick=1.0, duration=600, cpus=96, day=4)
    fsdp(t, accum=8, counter="trainer_tokens_total")
    add(t)
    t = S("gnn_cpu_featurise_steady", "property-prediction", None,
          "GNN predictor on an A10G whose RDKit featurisation always leaves the GPU ~45% busy; steady for the run.",
          gpu="A10G", tick=2.0, duration=600, cpus=16, day=6)
    steps(t, cmd="python3 train_gnn.py --arch schnet --featurize rdkit-online --workers 3", flops=1.2e13, nbytes=3e9,
          kernels=260, workers=3, batch_cpu_s=0.8, mem_frac=0.4)
    add(t)
    t = S("rtx4090_warm_room_steady_clocks", "molecular-dynamics", None,
          "OpenMM on an RTX 4090 in a warm lab (inlet 33 C): the card runs at its thermal target with clocks a bit "
          "under max all the time. Steady.", gpu="RTX 4090", tick=1.0, duration=600, cpus=24, inlet=33.0, day=8)
    md(t, atoms_gpu_s=0.0016, kernels=30, fill=0.95, inner=30)
    add(t)
    t = S("rag_vllm_morning_ramp", "llm-serving", None,
          "RAG on vLLM (2x A100 80GB TP2): the morning ramp triples traffic over ten minutes; the engine absorbs it "
          "with more running requests and no queue.", gpu="A100 80GB", ngpu=2, tick=1.0, duration=720, cpus=64, day=11)
    rag_vllm(t, rate=1.0)
    t.setups.append(job_mod("rate", lambda x: 1.5 + 3.5 * min(1.0, x / 600)))
    add(t)
    return L
