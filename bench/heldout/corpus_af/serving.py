"""LLM serving: one fluid simulation of a continuous-batching engine per trace.

Per tick: arrivals, admission under max-num-seqs and the KV pool, decode step time from
bytes read (weights + KV) against HBM bandwidth or FLOPs against the clock, prefill time from
FLOPs, CPU gaps between steps from the engine's CPU share; every GPU, host, process and
engine signal is derived from that.  Events (kind, t0, t1, severity) change the situation.
"""

from __future__ import annotations

import math

from gputop.schema import EngineSample

from .common import (BOARDS, GiB, MiB, SGL_E2E, SGL_ITL, SGL_QUEUE, SGL_TTFT, TGI_E2E, TGI_TPOT,
                     VLLM_E2E, VLLM_ITL, VLLM_MAXTOK, VLLM_N, VLLM_TTFT, GpuState, Hist, HostModel,
                     Load, Proc, clamp, launch_hist, make_frame, ramp, rng_for, status)

PORTS = {"vllm": 8000, "sglang": 30000, "tgi": 8080, "llamacpp": 8081, "ollama": 11434}


def _ev(spec, kind, t):
    """Strength 0..1 x severity of an event kind at relative time t (max over events)."""
    s = 0.0
    for k, t0, t1, sev in spec.get("events", ()):
        if k == kind:
            s = max(s, ramp(t, t0, t1, spec.get("rise", 8.0)) * sev)
    return s


def serve(spec, start):
    rng = rng_for(spec["name"])
    b = BOARDS[spec["board"]]
    eng = spec["engine"]
    tp = spec.get("tp", 1)
    ngpu = spec.get("ngpu", tp)
    gpus_used = tuple(spec.get("gpu_indices", range(tp)))
    dt = spec.get("tick", 1.0)
    dur = spec["dur"]
    params = spec["params_b"] * 1e9
    wbytes = spec.get("wbytes", 2.0)
    layers, kvh, hd = spec.get("arch", (32, 8, 128))
    kvdt = spec.get("kv_bytes", 2)
    kvB = 2 * layers * max(kvh / tp, 1) * hd * kvdt
    Wg = params * wbytes / tp
    total = b.mem_gib * GiB - b.reserved_mib * MiB
    gmu = spec.get("gmu", 0.9 if eng in ("vllm",) else 0.88)
    act = spec.get("act_gib", 2.5) * GiB
    if eng in ("vllm", "sglang"):
        pool = max(total * gmu - Wg - act, 0.5 * GiB)
    else:  # TGI / llama.cpp: pool sized by max batch tokens / ctx
        pool = spec.get("pool_gib", 4) * GiB
    block = 16
    pool_tokens = int(pool // kvB) // block * block
    mem_engine = int(Wg + pool + act * 0.6 + 0.9 * GiB)
    max_seqs = spec.get("max_seqs", 256)
    rate0 = spec["rate"]
    P0, O0 = spec["prompt"], spec["out"]
    hit0 = spec.get("prefix_hit", 0.0)
    graphs = spec.get("cuda_graphs", eng in ("vllm", "sglang"))
    ebpf = spec.get("ebpf", False)
    spec_k = spec.get("spec_k", 0)
    accept0 = spec.get("accept", 0.7)
    cpus = spec.get("cpus", 64)
    host = HostModel(cpus, rng, psi=spec.get("psi", True))
    gstates = [GpuState(b, i, rng, inlet_c=spec.get("inlet", 24), power_limit_w=spec.get("plimit"),
                        prof=spec.get("prof", "auto"), uuid_seed=spec["name"][:6],
                        ecc_corr=spec.get("ecc", 0)) for i in range(ngpu)]
    port = PORTS.get(eng, 8000)
    container = spec.get("container", "docker:%012x" % (rng.getrandbits(48)))
    pid0 = spec.get("pid", 2000 + rng.randrange(40000))
    base_cmd = spec.get("cmd") or {
        "vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {spec['model']} --tensor-parallel-size {tp} --port {port}",
        "sglang": f"python3 -m sglang.launch_server --model-path {spec['model']} --tp {tp} --port {port} --enable-metrics",
        "tgi": f"text-generation-launcher --model-id {spec['model']} --num-shard {tp} --port {port}",
        "llamacpp": f"llama-server -m /models/{spec['model']}.gguf -ngl 99 -c 16384 --port {port} --metrics",
        "ollama": "ollama serve",
    }[eng]
    user = spec.get("user", "svc-llm")
    quota = spec.get("quota")

    def new_procs(t_start, gen):
        main = Proc(pid0 + gen * 731, {"tgi": "text-generation-launcher", "llamacpp": "llama-server",
                                       "ollama": "ollama"}.get(eng, "python3"),
                    base_cmd, user, t_start, container=container,
                    cgroup=spec.get("cgroup", f"/system.slice/docker-{container[7:]}.scope"),
                    rss=int(6 * GiB), quota=quota)
        workers = []
        if tp > 1 and eng in ("vllm", "sglang", "tgi"):
            wname = {"vllm": "VllmWorker", "sglang": "sglang::schedul", "tgi": "text-generation-server"}[eng]
            for r in range(tp):
                workers.append(Proc(main.pid + 40 + r, "python3" if eng != "tgi" else "text-generation",
                                    f"{wname} rank {r}", user, t_start + 3, container=container,
                                    cgroup=main.cgroup, ppid=main.pid, rss=int(4 * GiB)))
        return main, workers

    gen = 0
    main, workers = new_procs(start - spec.get("uptime", 3600 * 20), gen)
    hists = {}

    def mk_hists():
        if eng == "vllm":
            return {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                    "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
                    "queue": Hist("queue", VLLM_E2E), "params_n": Hist("params_n", VLLM_N),
                    "params_max_tokens": Hist("params_max_tokens", VLLM_MAXTOK)}
        if eng == "sglang":
            return {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                    "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
        if eng == "tgi":
            return {"tpot": Hist("tpot", TGI_TPOT), "e2e": Hist("e2e", TGI_E2E),
                    "queue": Hist("queue", TGI_E2E)}
        return {}

    hists = mk_hists()
    C = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, preempt=0.0, retract=0.0,
             prefill_s=0.0, decode_s=0.0, steps=0.0, drafts=0.0, dtok=0.0, acc=0.0, fwd=0.0,
             flops=0.0, rbytes=0.0, wbytes=0.0)
    # counters accumulated before the recording began
    warm_hours = spec.get("uptime", 3600 * 20) / 3600
    for k, v in (("gen", 4.0e5), ("prompt", 2.2e6), ("fin", 1500.0)):
        C[k] = v * warm_hours * rate0 * rng.uniform(0.7, 1.3)
    for h in hists.values():
        h.add(0.15, 0.6, int(C["fin"]), rng)
    R, W = spec.get("r0", rate0 * O0 * 0.03), 0.0
    frames = []
    t_mono0 = spec.get("mono0", 86400.0 * 3 + rng.uniform(0, 5000))
    other = spec.get("cotenant")   # dict(gpu, pid, name, cmd, mem_gib, busy, sm, tensor, dram)
    other_proc = None
    if other:
        other_proc = Proc(other["pid"], other["name"], other["cmd"], other.get("user", "ds-user"),
                          start - 7200, container=other.get("container", ""), rss=int(8 * GiB))
    down_until = -1.0
    n = int(dur / dt)
    for k in range(n):
        t = k * dt
        tw = start + t + rng.gauss(0, 0.004)
        if rng.random() < 0.006 and k > 2:
            continue  # sampler missed this tick (GIL stall / slow NVML): a gap in the recording
        # --- restart (redeploy) ----------------------------------------------
        restarting = False
        for kk, t0, t1, sev in spec.get("events", ()):
            if kk == "restart" and t0 <= t < t1:
                restarting = True
                if down_until < 0:
                    down_until = t1
                    gen += 1
                    main, workers = new_procs(start + t1 - 45, gen)
                    hists = mk_hists()
                    for key in C:
                        C[key] = 0.0
                    R, W = 0.0, 0.0
        # --- load -------------------------------------------------------------
        diurnal = spec.get("diurnal")
        rate = rate0
        if diurnal:  # (t_ramp_start, t_ramp_end, factor): morning log-in ramp
            a, z, fac = diurnal
            rate = rate0 * (1 + (fac - 1) * clamp((t - a) / max(z - a, 1), 0, 1))
        if spec.get("bursty"):
            rate *= 0.25 + 1.5 * (math.sin(t / spec["bursty"]) > 0.3) + 0.25 * rng.random()
        rate *= 1 + 0.12 * math.sin(t / 47.0) + rng.gauss(0, 0.05)
        rate = max(rate, 0)
        idle = _ev(spec, "idle", t)
        rate *= (1 - idle)
        longp = _ev(spec, "long_prompts", t)
        P = P0 * (1 + longp * spec.get("long_factor", 10))
        hit = hit0 * (1 - 0.8 * longp)
        ctxg = _ev(spec, "ctx_growth", t)
        Cavg = (P + O0 / 2) * (1 + ctxg * spec.get("ctx_factor", 6))
        O = O0 * (1 + _ev(spec, "long_outputs", t) * spec.get("out_factor", 6))
        # --- clocks ----------------------------------------------------------
        th = _ev(spec, "thermal", t)
        for g in gstates:
            g.inlet = spec.get("inlet", 24) + th * spec.get("inlet_rise", 18) * (1 if g.i in spec.get("hot_gpus", range(ngpu)) else 0)
        pb = _ev(spec, "power_brake", t)
        for g in gstates:
            if pb > 0 and g.i in spec.get("brake_gpus", range(ngpu)):
                g.clock_cap, g.cap_reasons = 1 - 0.65 * pb, ("power brake", "hw slowdown")
            elif spec.get("aged") is not None and g.i == spec["aged"]:
                g.clock_cap, g.cap_reasons = spec.get("aged_cap", 0.82), ("hw slowdown",)
            else:
                g.clock_cap, g.cap_reasons = 1.0, ()
        pcap = _ev(spec, "power_cap", t)
        if pcap:
            for g in gstates:
                g.limit = (spec.get("plimit") or b.tdp_w) * (1 - 0.45 * pcap)
        util_guess = clamp(R / 64, 0.2, 1.0) * 0.75 + longp * 0.2
        fs = [g.speed(util_guess) for g in gstates[:tp]]
        f = min(fs)  # the TP group steps at the slowest rank's pace
        bw = b.hbm_gbs * 1e9 * 0.78 * (0.9 + 0.1 * f)
        flops = b.tflops * 1e12 * f * (2.0 if wbytes <= 1.0 and b.gpm else 1.0)
        # --- step model ------------------------------------------------------
        share = 1.0
        starve = _ev(spec, "cpu_starve", t)
        if starve:
            share = 1 - 0.75 * starve
        gap = spec.get("gap_ms", 2.5 if graphs else 1.0) / 1000 / share + 0.02 * starve
        if quota:
            gap *= 1 + _ev(spec, "quota_tight", t) * 3
        jit = _ev(spec, "launch_jitter", t)
        gap += jit * 0.012
        eager_launch = 0.0 if graphs else layers * 11 * 6e-6
        tiny = _ev(spec, "eager", t)
        eager_launch += tiny * layers * 14 * 9e-6
        Rb = max(R, 0.0)
        kv_read = Rb * Cavg * kvB
        t_mem = (Wg + kv_read) / bw
        t_comp = 2 * params / tp * max(Rb, 1) * (1 + spec_k) / (flops * 0.45)
        t_comm = (2 * layers * 14e-6 + Rb * 8192 * 2 * 2 / 150e9) if tp > 1 else 0.0
        t_dec = max(t_mem, t_comp) + t_comm + eager_launch
        ovs = _ev(spec, "oversized", t)
        t_dec_gpu = t_dec * (1 + 1.3 * ovs)
        gap += t_dec * 1.1 * ovs + (0.0 if not ovs else 0.004)
        strag = _ev(spec, "straggler", t)
        t_dec_gpu *= 1 + strag * 0.6
        shared = _ev(spec, "cotenant", t)
        if shared:
            t_dec_gpu *= 1 + shared * other.get("slow", 0.8)
        arr = max(0.0, rate * dt + rng.gauss(0, math.sqrt(max(rate * dt, 0.01))))
        new_prompt_tokens = arr * P
        pre_tok = new_prompt_tokens * (1 - hit)
        t_pre = 2 * params / tp * pre_tok / (flops * 0.62) * (1 + P / 60000) + (arr * 0.004 if arr else 0)
        if restarting:
            R, W = 0.0, 0.0
            arr = pre_tok = new_prompt_tokens = t_pre = 0.0
        # acceptance
        acc = accept0 * (1 - 0.85 * _ev(spec, "spec_collapse", t))
        tok_per_step = 1 + (sum(acc ** i for i in range(1, spec_k + 1)) if spec_k else 0)
        draft_cost = spec_k * spec.get("draft_step_ms", 1.2) / 1000 if spec_k else 0.0
        step = t_dec_gpu + gap + draft_cost
        avail = max(dt - t_pre, 0.1 * dt)
        nsteps = avail / step if Rb > 0.05 else 0.0
        itl = step * (dt / avail) / tok_per_step
        # --- admission / KV ---------------------------------------------------
        kv_cap_seqs = pool_tokens / max(Cavg * 1.05, 1)
        cap = min(max_seqs, kv_cap_seqs)
        W += arr
        admit = clamp(min(W, cap - Rb), 0, W)
        fin = min(Rb, Rb * dt / max(O * itl, 1e-3)) if Rb > 0 else 0.0
        kvfull = (Rb * Cavg) / max(pool_tokens, 1)
        pre_n = 0.0
        if kvfull > 0.93 and eng in ("vllm", "sglang"):
            pre_n = Rb * 0.04 * (kvfull - 0.9) * 10 * dt * rng.uniform(0.5, 1.5)
            fin *= 0.8
        R = max(Rb + admit - fin - pre_n, 0.0)
        W = max(W - admit + pre_n, 0.0)
        qwait = W / max(fin / dt, rate, 0.05) if W > 0.5 else 0.002
        ttft = qwait + t_pre / max(arr, 1) + step * 2 + 0.01
        gen_tok = Rb * nsteps * tok_per_step if Rb > 0.05 else 0.0
        # --- counters ----------------------------------------------------------
        C["gen"] += gen_tok
        C["prompt"] += new_prompt_tokens
        C["cached"] += new_prompt_tokens * hit
        C["fin"] += fin
        C["preempt"] += pre_n
        C["prefill_s"] += t_pre * 1.0 + arr * qwait * 0
        C["decode_s"] += Rb * dt
        C["steps"] += nsteps
        C["fwd"] += t_pre + nsteps * t_dec_gpu
        C["flops"] += 2 * params / tp * (gen_tok + pre_tok)
        C["rbytes"] += nsteps * (Wg + kv_read) + (pre_tok / 2048) * Wg
        C["wbytes"] += (gen_tok + pre_tok) * kvB
        if spec_k:
            C["drafts"] += Rb * nsteps
            C["dtok"] += Rb * nsteps * spec_k
            C["acc"] += Rb * nsteps * (tok_per_step - 1)
        nf = int(fin + rng.random())
        na = int(arr + rng.random())
        sig = 0.25 + 0.5 * min(t_pre / dt, 1) + 0.3 * jit + 0.2 * ovs + 0.05 * starve
        if hists:
            if "itl" in hists:
                hists["itl"].add(itl, sig, int(gen_tok / max(tok_per_step, 1)), rng)
            if "ttft" in hists:
                hists["ttft"].add(ttft, 0.5, na, rng)
            if "tpot" in hists:
                hists["tpot"].add(itl * 1.02, sig * 0.5, nf, rng)
            hists["e2e"].add(ttft + O * itl, 0.5, nf, rng)
            hists["queue"].add(max(qwait, 0.001), 0.6, na, rng)
            if "params_n" in hists:
                hists["params_n"].add_value(1.0, max(na - 1, 0))
                hists["params_max_tokens"].add(spec.get("max_tokens", 1024), 0.3, max(na - 1, 0), rng)
                if na:
                    hists["params_n"].add_value(float(spec.get("oversized_n", 1) if ovs > 0.5 and rng.random() < 0.3 else 1))
                    hists["params_max_tokens"].add_value(float(spec.get("oversized_max", 1024) if ovs > 0.5 and rng.random() < 0.3 else 512))
        # --- GPU loads -----------------------------------------------------------
        busy_t = min(dt, t_pre + nsteps * t_dec_gpu) if not restarting else 0.0
        loads = []
        for i in range(ngpu):
            ld = Load()
            if i in gpus_used and not restarting:
                r = gpus_used.index(i)
                dec_frac = nsteps * t_dec_gpu / dt
                pre_frac = t_pre / dt
                tens_dec = clamp(0.03 + Rb * (1 + spec_k) / 900, 0.03, 0.45) * (1 - 0.7 * tiny)
                ld.busy = clamp(busy_t / dt + (0.995 - busy_t / dt) * 0.0, 0, 0.995)
                smq = (0.62 - 0.45 * tiny) * (1 - 0.3 * ovs)
                ld.sm = clamp(dec_frac * smq + pre_frac * 0.93, 0, 0.99)
                ld.occ = ld.sm * 0.35
                ld.tensor = clamp(dec_frac * tens_dec + pre_frac * 0.6, 0, 0.95)
                ld.dram = clamp((nsteps * (Wg + kv_read) + pre_tok / 2048 * Wg) / (b.hbm_gbs * 1e9 * dt), 0, 0.93)
                ld.pcie_mib_s = 12 + arr * 0.3
                ld.nvlink_mib_s = (nsteps * Rb * 8192 * 2 * 2 * layers / tp / MiB / dt * 0.05) if tp > 1 else 0.0
                if strag and i != spec.get("straggler_gpu"):
                    # the healthy ranks finish early and spin in the all-reduce
                    ld.sm *= 1 - 0.25 * strag
                    ld.tensor *= 1 - 0.3 * strag
                    ld.dram *= 1 - 0.3 * strag
                ld.burst = 0.2 if Rb > 2 else 0.9
            if other and i == other["gpu"] and shared:
                ld.busy = clamp(ld.busy + other["busy"] * shared * (1 - ld.busy * 0.5), 0, 1)
                ld.sm = clamp(ld.sm + other["sm"] * shared, 0, 1)
                ld.tensor = clamp(ld.tensor + other.get("tensor", 0.1) * shared, 0, 1)
                ld.dram = clamp(ld.dram + other.get("dram", 0.1) * shared, 0, 1)
            loads.append(ld)
        # --- processes -------------------------------------------------------------
        procs = []
        cpu_engine = (min(1.0, 0.15 + nsteps * 0.0025 + arr * 0.02) * share + 0.2 * ovs) if not restarting else 0.3
        main.run(dt, cpu_engine + 0.3, {main.pid: ("python3" if eng in ("vllm", "sglang") else main.name, cpu_engine),
                                          main.pid + 11: ("api_server" if eng == "vllm" else "tokenizer", 0.3)},
                 invol_rate=20 + 4000 * starve + 900 * jit, demand_cores=cpu_engine / share + 0.3)
        for i in gpus_used:
            if restarting:
                continue
            owner = workers[gpus_used.index(i)] if workers else main
            if workers:
                owner.run(dt, 0.95 * share, {owner.pid: (owner.name, 0.95 * share)}, invol_rate=10 + 3000 * starve)
            procs.append(owner.gpu_proc(i, mem_engine, sm=100 * loads[i].busy * 0.9 if not shared else None,
                                        mem_util=100 * loads[i].dram))
        if other and (other.get("always") or shared) :
            other_proc.run(dt, 0.9, {other_proc.pid: (other_proc.name, 0.9)})
            procs.append(other_proc.gpu_proc(other["gpu"], int(other["mem_gib"] * GiB),
                                             sm=None, mem_util=None))
        gpus = []
        for i, g in enumerate(gstates):
            mem = sum(p.mem_bytes for p in procs if p.gpu_index == i)
            if i not in gpus_used:
                g.speed(0.0)
            gpus.append(g.sample(dt, loads[i], mem))
        # --- host --------------------------------------------------------------
        bg = spec.get("host_bg", 2.0) + starve * spec.get("starve_threads", cpus * 1.6)
        busy_cores = min(cpus, bg + cpu_engine + 1 + tp)
        runnable = bg + 1 + tp + 1
        offcpu = int(jit * 600 * dt + rng.random() * 3) if ebpf else None
        hs = host.sample(dt, busy_cores, runnable, offcpu)
        # --- engine sample ---------------------------------------------------------
        url = f"http://127.0.0.1:{port}/metrics"
        es = None
        up = eng != "ollama" and not restarting and rng.random() > 0.01 + 0.1 * starve
        if up:
            te = tw - rng.uniform(0.005, 0.06) - 0.3 * starve * rng.random()
            busiest, bname = main.busiest()
            common = dict(kind=eng, url=url, model=spec["model"], time_mono_s=round(t_mono0 + t + te - tw, 6),
                          time_wall_s=round(te, 6), pids=(main.pid, *(w.pid for w in workers)),
                          tensor_parallel=tp, data_parallel=1,
                          cpu_s=round(main.cpu_s + sum(w.cpu_s for w in workers), 2),
                          ctx_involuntary=main.invol + sum(w.invol for w in workers),
                          busiest_thread_cpu_s=busiest, busiest_thread=bname,
                          cpu_quota_cores=quota,
                          cpu_periods=main.periods if quota else None,
                          cpu_throttled_periods=main.throttled if quota else None,
                          histograms=tuple(h.snap() for h in hists.values()))
            rq, wq = float(round(R)), float(round(W))
            if eng == "vllm":
                es = EngineSample(**common, generation_tokens_total=float(int(C["gen"])),
                                  prompt_tokens_total=float(int(C["prompt"])),
                                  prompt_tokens_cached_total=float(int(C["cached"])),
                                  requests_finished_total=float(int(C["fin"])),
                                  requests_running=rq, requests_waiting=wq,
                                  kv_usage_ratio=round(clamp(kvfull, 0, 1), 6),
                                  num_gpu_blocks=pool_tokens // block, block_size=block,
                                  kv_pool_bytes=int(pool), kv_pool_tokens=pool_tokens,
                                  cache_dtype=spec.get("cache_dtype", "auto"),
                                  preemptions_total=float(int(C["preempt"])),
                                  waiting_by_reason={"capacity": wq if kvfull > 0.9 else 0.0, "deferred": 0.0},
                                  prefill_seconds_total=round(C["prefill_s"], 3),
                                  decode_seconds_total=round(C["decode_s"], 3),
                                  flops_total=float(int(C["flops"])), read_bytes_total=float(int(C["rbytes"])),
                                  write_bytes_total=float(int(C["wbytes"])),
                                  spec_drafts_total=float(int(C["drafts"])) if spec_k else None,
                                  spec_draft_tokens_total=float(int(C["dtok"])) if spec_k else None,
                                  spec_accepted_tokens_total=float(int(C["acc"])) if spec_k else None,
                                  lora_max=spec.get("lora_max"))
            elif eng == "sglang":
                used = int(clamp(kvfull, 0, 1) * pool_tokens)
                evict = int((pool_tokens - used) * hit0 * 0.8)
                es = EngineSample(**common, generation_tokens_total=float(int(C["gen"])),
                                  prompt_tokens_total=float(int(C["prompt"])),
                                  prompt_tokens_cached_total=float(int(C["cached"])),
                                  requests_finished_total=float(int(C["fin"])),
                                  requests_running=rq, requests_waiting=wq,
                                  kv_usage_ratio=round(clamp(kvfull, 0, 1), 4), kv_pool_tokens=pool_tokens,
                                  kv_used_tokens=float(used), kv_free_tokens=float(pool_tokens - used - evict),
                                  kv_evictable_tokens=float(evict),
                                  retracted_requests_total=float(int(C["preempt"])),
                                  forward_seconds_total=round(C["fwd"], 3),
                                  spec_accept_ratio=round(acc, 4) if spec_k else None,
                                  spec_accept_length=round(tok_per_step, 3) if spec_k else None)
            elif eng == "tgi":
                es = EngineSample(**common, generation_tokens_total=float(int(C["gen"])),
                                  prompt_tokens_total=float(int(C["prompt"])),
                                  requests_finished_total=float(int(C["fin"])),
                                  requests_running=rq, requests_waiting=wq)
            else:  # llama.cpp: prompt counter excludes cached tokens
                es = EngineSample(**common, generation_tokens_total=float(int(C["gen"])),
                                  prompt_tokens_total=float(int(C["prompt"] - C["cached"])),
                                  prompt_tokens_cached_total=float(int(C["cached"])),
                                  requests_running=rq, requests_waiting=wq,
                                  prefill_seconds_total=round(C["prefill_s"], 3),
                                  decode_seconds_total=round(C["decode_s"], 3),
                                  decode_steps_total=float(int(C["steps"])),
                                  spec_drafts_total=float(int(C["drafts"])) if spec_k else None,
                                  spec_draft_tokens_total=float(int(C["dtok"])) if spec_k else None,
                                  spec_accepted_tokens_total=float(int(C["acc"])) if spec_k else None)
        sources = {"nvml": status(poll=0.004 * ngpu, rng=rng), "host": status(poll=0.0009, rng=rng),
                   "procfs": status(detail="/proc", poll=0.0005, rng=rng),
                   "pin": status(poll=0.03, rng=rng)}
        if eng == "ollama":
            sources["engine"] = status(False, "no metrics endpoint (ollama serves none)")
        elif restarting:
            sources["engine"] = status(False, f"connection refused ({url})")
        elif es is None:
            sources["engine"] = status(False, "timed out after 1.0 s")
        else:
            sources["engine"] = status(poll=0.04, rng=rng)
        if spec.get("prof") == "dcgm":
            sources["dcgm"] = status(detail="http://127.0.0.1:9400/metrics", poll=0.02, rng=rng)
        launches = ()
        if ebpf and not restarting:
            sources["ebpf"] = status(detail=f"cudaLaunchKernel, cuLaunchKernel, cuGraphLaunch in pid {main.pid}", poll=0.002, rng=rng)
            api = "cuGraphLaunch" if graphs else "cuLaunchKernel"
            cnt = int(nsteps * (1 if graphs else layers * 9))
            launches = (launch_hist(api, workers[0].pid if workers else main.pid, cnt,
                                    6.0 if graphs else 3.5, 0.35, rng, tail_frac=0.04 * jit + 0.0005,
                                    tail_ms=0.2 + 4.0 * jit),)
        pinned = main.pinned(hs, ports=(port,), cores=tuple(range(spec.get("core0", 0), spec.get("core0", 0) + min(cpus, 32))))
        frames.append(make_frame(len(frames), tw, t_mono0 + t, gpus, procs, es, hs, pinned, sources, launches))
    return frames
