"""The serving loop: requests arrive, the engine(s) step, the GPUs heat, the host is shared."""
from __future__ import annotations
import math
import random

from gputop.schema import PinnedSample, ProcSample, HostSample, SourceStatus, ThreadSample
from corpus_ak import metrics
from corpus_ak.run import Builder, Scn, _arg, _launch_hist, _lognorm, seed_of, GiB
from corpus_ak.serve import Engine, Req, SLICE_S, _cum


PREROLL_S = 150.0


def run_serving(scn: Scn):
    rng = random.Random(seed_of(scn.name))
    b = Builder(scn, rng)
    spec = b.spec
    cfg = scn.cfg
    tp = cfg.tp
    engines = [Engine(cfg, spec, rng) for _ in range(scn.dp)]
    layout = {"vllm": metrics.VLLM_B, "sglang": metrics.SGL_B, "tgi": metrics.TGI_B}.get(scn.engine_kind, {})
    hists = [metrics.Hists(layout) for _ in engines]
    # which GPUs each replica holds
    gpus_of = [list(range(i * tp, (i + 1) * tp)) for i in range(scn.dp)]
    # pool: what the memory leaves after weights and activations, unless given
    if not cfg.pool_tokens:
        free = spec.mem_bytes * 0.9 - engines[0].weights - 3 * GiB
        cfg.pool_tokens = int(free / engines[0].kvb) // cfg.block * cfg.block
    mem_engine = spec.mem_bytes * 0.9 - 0.3 * GiB if scn.engine_kind in ("vllm", "sglang") else \
        engines[0].weights + cfg.pool_tokens * engines[0].kvb + 1.2 * GiB
    rid = 0
    base_pid = 2000 + seed_of(scn.name) % 30000
    port = {"vllm": 8000, "sglang": 30000, "tgi": 8080, "llamacpp": 8081}[scn.engine_kind]
    url = f"http://127.0.0.1:{port}/metrics"
    model = cfg.model.name
    start_time = b.t_wall0 - 3600 * 5
    worker_pids = [base_pid + 40 + g * 7 for g in range(scn.n_gpus)]
    main_pid = base_pid
    core_pid = base_pid + 20
    restart_pid_shift = 0
    threads = {"main": 0.0, "api": 0.0, "detok": 0.0}
    worker_cpu = [0.0] * scn.n_gpus
    other_cpu = 0.0
    share = 1.0
    sessions = {}
    t = 0.0
    n_ticks = int(scn.duration / scn.tick)
    nsl = max(1, int(round(scn.tick / SLICE_S)))
    dts = scn.tick / nsl
    other_pid = base_pid + 900
    down_until = -1
    npre = int(PREROLL_S / scn.tick)  # the engine has been running: reach its steady state first
    for k in range(-npre, n_ticks):
        t = k * scn.tick
        # restarts: the replica goes away, comes back with empty caches (same address)
        up = True
        if scn.restart_at is not None and scn.restart_at <= t < scn.restart_at + scn.restart_s:
            up = False
            if engines[0].up:
                for e in engines:
                    e.up = False
                    e.waiting.clear(); e.prefilling.clear(); e.running.clear(); e.heap.clear()
                    e.sum_offset = 0; e.sum_prompt_run = 0; e.sum_width_run = 0; e.evictable = 0
                    e.gen_total = e.prompt_total = e.cached_total = 0.0
                    e.finished = e.preempt = 0
                    e.spec_drafts = e.spec_draft_tok = e.spec_acc = 0.0
                    e.prefill_s = e.decode_s = e.forward_s = e.steps = 0.0
                    e.flops_total = e.read_total = e.write_total = e.retract_in_tok = 0.0
                hists = [metrics.Hists(layout) for _ in engines]
                restart_pid_shift += 500
                threads = {"main": 0.0, "api": 0.0, "detok": 0.0}
                worker_cpu = [0.0] * scn.n_gpus
        elif not engines[0].up:
            for e in engines:
                e.up = True
        for when, fn in scn.at:
            if when <= t < when + scn.tick:
                fn(engines)
        warm = 1.0
        if scn.restart_at is not None and t >= scn.restart_at + scn.restart_s:
            warm = min(1.0, (t - scn.restart_at - scn.restart_s) / 90.0)
        clocks = [st.ratio for st in b.gpus]
        acc = [dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, nccl=0.0, occ=0.0, nvl=0.0) for _ in range(scn.n_gpus)]
        host_busy = 0.0
        for e in engines:
            e.spec_accept = _arg(scn.accept, t)
        stretch = 1.0 / max(0.05, share)
        qshare = getattr(b, '_qshare', 1.0)
        jit = _arg(scn.host.jitter, t) or 0.0
        launch_extra = jit * scn.host.jitter_ms * 1e-3
        for sl in range(nsl):
            ts = t + sl * dts
            if up:
                for tr in scn.traffic:
                    if tr.conc is not None:
                        insys = sum(1 for e in engines for r in list(e.running.values()) + e.prefilling + list(e.waiting) if r.cls == tr.name)
                        n = max(0, int(_arg(tr.conc, ts)) - insys)
                    else:
                        n = _poisson(rng, _arg(tr.rate, ts) * dts)
                    for _ in range(n):
                        rid += 1
                        p = _lognorm(rng, *tr.prompt)
                        o = _lognorm(rng, *tr.out) if not tr.embed else 0
                        cf = _cum(tr.cached, ts) * (warm if cfg.prefix_cache else 0)
                        r = Req(rid, ts, p, max(1, o), int(p * cf), tr.name, n=tr.n, logprobs=tr.logprobs, beam=tr.beam, embed=tr.embed)
                        if scn.dp > 1:
                            if _arg(scn.router, ts) == "sticky" and tr.session:
                                i = 0
                            else:
                                i = min(range(scn.dp), key=lambda j: len(engines[j].waiting) * 4 + len(engines[j].running) + len(engines[j].prefilling) + rng.random())
                        else:
                            i = 0
                        engines[i].add(r, ts)
            for i, e in enumerate(engines):
                gs = gpus_of[i]
                clk = min(clocks[g] for g in gs)
                share_gpu = 1.0
                if scn.shared is not None:
                    other = max((_arg(scn.shared, ts, g) or 0.0) for g in gs)
                    share_gpu = 1.0 / (1.0 + other) if other else 1.0
                a = e.advance(ts, dts, clk, host_stretch=stretch, bytes_mult=_arg(scn.bytes_mult, ts),
                              gpu_share=share_gpu, launch_extra_s=launch_extra, tiny=_arg(scn.tiny, ts), quota_share=qshare)
                host_busy += a["host"] / nsl
                for g in gs:
                    # a rank with the faster clock finishes its compute first and waits in the collective
                    wait = 0.0
                    if len(gs) > 1 and clocks[g] > clk * 1.01:
                        wait = a["busy"] * (1 - clk / clocks[g]) * 0.8
                    o = acc[g]
                    o["busy"] += a["busy"] / nsl
                    o["sm"] += (a["sm"] - wait * 0.75 * (a["sm"] / max(a["busy"], 1e-9)) + wait * 0.2) / nsl
                    o["tensor"] += a["tensor"] * (1 - wait / max(a["busy"], 1e-9)) / nsl * (clocks[g] / max(clk, 1e-6)) ** 0 if a["busy"] else 0
                    o["dram"] += a["dram"] * (1 - 0.7 * wait / max(a["busy"], 1e-9)) / nsl if a["busy"] else 0
                    o["nccl"] += (a["nccl"] + wait) / nsl
                    o["occ"] += a.get("occ", 0.4) / nsl
                    o["nvl"] += (a["nccl"] * 90000 + (a["tokens"] * 40 if len(gs) > 1 else 0)) / nsl
        # other tenants' kernels on the GPU (time-sliced)
        for g in range(scn.n_gpus):
            other = _arg(scn.shared, t, g) if scn.shared is not None else 0
            if other:
                o = acc[g]
                o["busy"] = min(1.0, o["busy"] + other * (1 - o["busy"]) + other * 0.3)
                o["sm"] = min(0.98, o["sm"] + other * 0.55)
                o["tensor"] = min(0.9, o["tensor"] + other * 0.35)
                o["dram"] = min(0.95, o["dram"] + other * 0.2)
        for g, st in enumerate(b.gpus):
            a = acc[g]
            st.update(scn.tick, a["busy"], a["sm"], a["tensor"], a["dram"], inlet=_arg(scn.inlet, t, g),
                      limit=_arg(scn.limit, t, g), brake=_arg(scn.brake, t, g), mystery=_arg(scn.mystery, t, g),
                      r_th_mult=_arg(scn.r_th, t, g) or 1.0)
        # host: the engine's threads (scheduler, API server, one worker per GPU) and others
        rate = sum(_arg(tr.rate, t) for tr in scn.traffic if tr.conc is None) if up else 0.0
        api = 0.15 + 0.004 * rate + (0.5 * cfg.grammar_s * 2000 if cfg.grammar_s else 0)
        workers = (0.9 * scn.n_gpus if tp > 1 else 0) if up else 0.0
        demand = (host_busy * stretch if up else 0.02) + api + workers + 0.1
        share, hinfo = b.host_step(t, scn.tick, demand, host_busy)
        b._qshare = hinfo['share_q']
        # per-thread CPU time
        threads["main"] += host_busy * scn.tick * min(1.0, share * stretch) if up else 0.0
        threads["api"] += api * share * scn.tick
        threads["detok"] += 0.05 * scn.tick * share
        for g in range(scn.n_gpus):
            worker_cpu[g] += (0.9 if tp > 1 and up else 0.02) * share * scn.tick
        # frame parts
        mem_used = []
        procs = []
        for g in range(scn.n_gpus):
            used = mem_engine + 0.5 * GiB if up else 0.4 * GiB
            wpid = (worker_pids[g] if tp > 1 else core_pid + (g * 3 if scn.dp > 1 else 0)) + restart_pid_shift
            if up:
                procs.append(ProcSample(pid=wpid, gpu_index=g, name="python3" if tp == 1 else f"VLLM::Worker_TP{g % tp}" if scn.engine_kind == "vllm" else "python3",
                                        cmdline=_cmd(scn, cfg), user="svc-infer", ppid=main_pid + restart_pid_shift,
                                        start_time_s=round(start_time + (scn.restart_at + scn.restart_s if restart_pid_shift else 0), 2),
                                        mem_bytes=int(mem_engine), sm_util_pct=float(round(acc[g]["busy"] * 100 * (0.6 if scn.shared and _arg(scn.shared, t, g) else 1))),
                                        cpu_s=round(worker_cpu[g] + (threads["main"] if g == 0 else 0), 2), rss_bytes=int(6.5 * GiB),
                                        container=f"containerd:{seed_of(scn.name) % 16**12:012x}", pod=f"inference/{scn.name[:30]}-0",
                                        cgroup=f"/kubepods.slice/kubepods-pod{seed_of(scn.name) % 99999}.slice", mem_util_pct=float(round(acc[g]["dram"] * 90))))
            other = _arg(scn.shared, t, g) if scn.shared is not None else 0
            if other:
                om = 9 * GiB
                used += om
                other_cpu += 0.8 * scn.tick
                procs.append(ProcSample(pid=other_pid, gpu_index=g, name="python", cmdline="python /home/jovyan/eval_sweep.py --device cuda",
                                        user="tenant-b", ppid=1, start_time_s=round(b.t_wall0 + 60, 2), mem_bytes=int(om),
                                        sm_util_pct=float(round(other * 100 * 0.5)), cpu_s=round(other_cpu, 2),
                                        rss_bytes=int(3 * GiB), container="containerd:9f1e22aa01bc", pod="research/notebook-7c9f",
                                        mem_util_pct=float(round(other * 20))))
            mem_used.append(min(spec.mem_bytes - spec.reserve, used))
        gpus = b.gpu_samples(acc, mem_used, None)
        ctx = b.ctx_invol
        tree_cpu = threads["main"] + threads["api"] + threads["detok"] + sum(worker_cpu)
        host = HostSample(cpu_pct=round(hinfo["cpu_pct"], 1), offcpu_switches=None, cpu_pressure_some_pct=round(hinfo["psi"], 2),
                          run_queue=hinfo["rq"], cpus=scn.host.cores, ctx_switches_total=b.ctx_total)
        tids = [ThreadSample(tid=core_pid + restart_pid_shift + 13, pid=core_pid + restart_pid_shift, name="VLLM::EngineCor" if scn.engine_kind == "vllm" else "python3", cpu_s=round(threads["main"], 2)),
                ThreadSample(tid=main_pid + restart_pid_shift, pid=main_pid + restart_pid_shift, name="python3", cpu_s=round(threads["api"], 2)),
                ThreadSample(tid=main_pid + restart_pid_shift + 5, pid=main_pid + restart_pid_shift, name="detokenizer", cpu_s=round(threads["detok"], 2))]
        tids += [ThreadSample(tid=worker_pids[g] + restart_pid_shift, pid=worker_pids[g] + restart_pid_shift, name=f"Worker_TP{g}", cpu_s=round(worker_cpu[g], 2)) for g in range(scn.n_gpus) if tp > 1]
        tree_pids = (main_pid + restart_pid_shift, core_pid + restart_pid_shift) + tuple(worker_pids[g] + restart_pid_shift for g in range(scn.n_gpus) if tp > 1)
        quota = hinfo["quota"]
        pinned = PinnedSample(label=f"{scn.engine_kind} serve {model}", root_pids=(main_pid + restart_pid_shift,), tree_pids=tree_pids,
                              cpu_s=round(tree_cpu, 2), ctx_voluntary=b.ctx_vol, ctx_involuntary=ctx, threads=tuple(tids),
                              cores=tuple(range(scn.host.cores)), cpu_pressure_some_pct=round(hinfo["psi"], 2), run_queue=hinfo["rq"],
                              listening_ports=(port,), cpu_quota_cores=quota, cpu_periods=b.periods if quota else None,
                              cpu_throttled_periods=b.throttled if quota else None)
        launch = ()
        if scn.ebpf:
            steps = sum(e.steps for e in engines)
            lp = []
            dsteps = steps - getattr(b, "_last_steps", 0.0)
            b._last_steps = steps
            pid = core_pid + restart_pid_shift
            tail = min(0.2, jit)
            if cfg.graphs:
                h1 = _launch_hist(rng, "cudaGraphLaunch", pid, int(dsteps), 9.0, 0.35, tail, scn.host.jitter_ms)
                h2 = _launch_hist(rng, "cudaLaunchKernel", pid, int(dsteps * 14), 3.5, 0.4, tail, scn.host.jitter_ms)
                lp = [h for h in (h1, h2) if h]
            else:
                nk = cfg.model.layers * 9 + 20
                h1 = _launch_hist(rng, "cudaLaunchKernel", pid, int(dsteps * nk * 0.4), 3.8, 0.4, tail, scn.host.jitter_ms)
                h2 = _launch_hist(rng, "cuLaunchKernel", pid, int(dsteps * nk * 0.6), 3.2, 0.4, tail, scn.host.jitter_ms)
                lp = [h for h in (h1, h2) if h]
            launch = tuple(lp)
            host = HostSample(cpu_pct=host.cpu_pct, offcpu_switches=int(sum(h.count for h in lp) * tail * 0.8 + 5 * (1 - share) * 100 + rng.random() * 4),
                              cpu_pressure_some_pct=host.cpu_pressure_some_pct, run_queue=host.run_queue, cpus=host.cpus,
                              ctx_switches_total=host.ctx_switches_total)
            ebpf = SourceStatus(True, detail="uprobes on libcudart.so.12, libcuda.so.1", age_s=0.0, poll_s=0.003, poll_median_s=0.003)
        else:
            ebpf = SourceStatus(False, reason="needs root (CAP_BPF)")
        for i, e in enumerate(engines):
            hists[i].flush(e.hist)
        def text():
            if not up:
                return None
            return metrics.render(scn.engine_kind, model, engines, hists)
        ename = {"vllm": "vllm", "sglang": "sglang", "tgi": "text-generation-launcher", "llamacpp": "llama-server"}[scn.engine_kind]
        extra = dict(tensor_parallel=tp, data_parallel=scn.dp, pids=tree_pids, cpu_s=round(tree_cpu, 2), ctx_involuntary=ctx,
                     busiest_thread_cpu_s=round(threads["main"], 2), busiest_thread=f"{core_pid + restart_pid_shift + 13} {ename}",
                     cpu_quota_cores=quota, cpu_periods=b.periods if quota else None, cpu_throttled_periods=b.throttled if quota else None)
        if t < 0:
            continue
        eng, est = b.engine_reading(t, text, url, extra)
        if rng.random() < scn.drop_ticks and 5 < k < n_ticks - 5:
            continue  # the collector missed this tick
        b.emit(t, gpus, tuple(procs), eng, launch, host, pinned, est, ebpf)
    return b


def _poisson(rng, lam):
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p < L:
            return k
        k += 1


def _cmd(scn, cfg):
    m = cfg.model.name
    if scn.engine_kind == "vllm":
        return (f"python3 -m vllm.entrypoints.openai.api_server --model {m} --tensor-parallel-size {cfg.tp} "
                f"--max-num-seqs {cfg.max_seqs} --max-num-batched-tokens {cfg.budget} --max-model-len {cfg.max_model_len}"
                + (" --enforce-eager" if not cfg.graphs else "") + (" --enable-prefix-caching" if cfg.prefix_cache else ""))
    if scn.engine_kind == "sglang":
        return f"python3 -m sglang.launch_server --model-path {m} --tp {cfg.tp} --dp {scn.dp} --enable-metrics --port 30000"
    if scn.engine_kind == "tgi":
        return f"text-generation-launcher --model-id {m} --num-shard {cfg.tp} --port 8080"
    return f"llama-server -m /models/{m} -ngl 99 -c {cfg.max_model_len} --metrics --port 8081 -np 4"
