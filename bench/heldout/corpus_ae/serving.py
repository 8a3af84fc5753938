"""Serving (and engine-less "other") traces: one request-level simulation per tick drives
the engine page, the GPU activity, VRAM, processes and the host."""
from __future__ import annotations

import math
import random
from dataclasses import replace

from gputop.schema import EngineSample, Frame
from .common import (BOARDS, GIB, GpuModel, Hist, Host, Load, Proc, clamp, down, launch_hist,
                     ok, pinned, SGL_E2E, SGL_ITL, SGL_TTFT, TGI_E2E, TGI_TPOT, VLLM_E2E,
                     VLLM_ITL, VLLM_MAXTOK, VLLM_N, VLLM_TTFT)

PORTS = {"vllm": 8000, "sglang": 30000, "tgi": 80, "llamacpp": 8080, None: None}
CMD = {"vllm": "python3 -m vllm.entrypoints.openai.api_server --model {m} --tensor-parallel-size {tp} --gpu-memory-utilization 0.90",
       "sglang": "python3 -m sglang.launch_server --model-path {m} --tp {tp} --enable-metrics --port 30000",
       "tgi": "text-generation-launcher --model-id {m} --num-shard {tp} --port 80",
       "llamacpp": "/app/llama-server -m /models/{m} -ngl 99 -c 16384 --metrics --port 8080",
       None: "python3 serve.py --model {m}"}


def in_win(t, w):
    return w is not None and w[0] <= t < w[1]


def episodes(t, w, period=None, on=None):
    """Inside window w, optionally on for `on` seconds out of every `period`."""
    if not in_win(t, w):
        return False
    return period is None or ((t - w[0]) % period) < on


def simulate(spec, seed, start):
    """spec: dict (see catalog).  Returns frames."""
    rng = random.Random(seed)
    b = BOARDS[spec["board"]]
    tp = spec.get("tp", 1)
    kind = spec.get("engine")
    tick = spec.get("tick", 1.0)
    dur = spec["dur"]
    cause = spec.get("cause")
    sev = spec.get("sev", 0.6)
    win = spec.get("win")  # relative seconds
    period, on = spec.get("period"), spec.get("on")
    params_b = spec["params_b"]
    wbytes = params_b * 1e9 * spec.get("wdtype", 2) / tp
    kvb = spec.get("kvb", 131072) / tp  # KV bytes per token per rank
    mig = spec.get("mig")
    gmem = (mig[0][2] if mig else b.mem_gib) * GIB
    util_frac = spec.get("gmu", 0.9 if kind in ("vllm", "sglang") else 0.0)
    act = 1.2 * GIB + 0.04 * wbytes
    if kind in ("vllm", "sglang"):
        pool = max(0.5 * GIB, gmem * util_frac - wbytes - act - 0.6 * GIB)
    elif kind == "tgi":
        pool = max(0.5 * GIB, gmem * 0.85 - wbytes - act)
    else:
        pool = spec.get("ctx", 16384) * kvb
    pool_tokens = int(pool // kvb)
    block = 16 if kind == "vllm" else 1
    gpus = [GpuModel(b, i, rng, power_limit_w=spec.get("plimit"), ambient_c=spec.get("amb", 30),
                     mig=mig if i == 0 else None) for i in range(max(tp, spec.get("ngpus", tp)))]
    host = Host(rng, spec.get("cpus", 64), spec.get("host_base", 0.10), spec.get("psi", True))
    pod = spec.get("pod", "default/" + spec["name"])
    model = spec["model"]
    pid0 = 1000 + rng.randrange(200000)
    cmd = CMD[kind].format(m=model, tp=tp)
    procs = []
    name = {"tgi": "text-generation", "llamacpp": "llama-server"}.get(kind, "python3")

    def new_procs(t0):
        nonlocal pid0
        pid0 += 37 + rng.randrange(50)
        return [Proc(pid0 + i, i, name, cmd if i == 0 else cmd + f" (rank {i})", pod, t0,
                     mig_index=0 if mig else None) for i in range(tp)]

    procs = new_procs(start - spec.get("uptime", 3600))
    other = spec.get("other")  # (pid, gpu, name, cmd, pod, mem_gib, sm) or None
    other_proc = None
    H = {}

    def reset_hists():
        if kind == "vllm":
            H.update(ttft=Hist("ttft", VLLM_TTFT), itl=Hist("itl", VLLM_ITL), tpot=Hist("tpot", VLLM_ITL),
                     e2e=Hist("e2e", VLLM_E2E), queue=Hist("queue", VLLM_E2E), params_n=Hist("params_n", VLLM_N),
                     params_max_tokens=Hist("params_max_tokens", VLLM_MAXTOK))
        elif kind == "sglang":
            H.update(ttft=Hist("ttft", SGL_TTFT), itl=Hist("itl", SGL_ITL), e2e=Hist("e2e", SGL_E2E),
                     queue=Hist("queue", SGL_E2E))
        elif kind == "tgi":
            H.update(tpot=Hist("tpot", TGI_TPOT), e2e=Hist("e2e", TGI_E2E), queue=Hist("queue", TGI_E2E))
    reset_hists()
    C = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, drafts=0.0, dtok=0.0, acc=0.0,
             pfs=0.0, dcs=0.0, steps=0.0, flops=0.0, rb=0.0, wb=0.0, fwd=0.0)
    if spec.get("warm_counters", True):
        scale = spec.get("uptime", 3600) * spec["rate"](0)
        C.update(gen=scale * spec["out"], prompt=scale * spec["prompt"], fin=scale, cached=scale * spec["prompt"] * spec.get("hit", 0.1))
        for h in H.values():
            h.observe(0.05, int(scale * 0.1))
    cpu = dict(s=50.0, main=40.0, inv=500, vol=20000, periods=0, thr=0)
    waiting = 0.0
    running = 0.0
    kv_used = 0.0
    restart = spec.get("restart")  # (t_down, t_up, graph_capture_s)
    frames = []
    n = int(dur / tick)
    for k in range(n):
        t = k * tick
        wall = start + t + rng.gauss(0, 0.004)
        lam = max(0.0, spec["rate"](t) * (1 + rng.gauss(0, 0.08)))
        prompt, out = spec["prompt"], spec["out"]
        active = episodes(t, win, period, on) and cause is not None
        s = sev if active else 0.0
        ctx_mult = 1.0 + (4.0 * s if cause == "memory_bandwidth" else 0.0) + spec.get("ctx_mult", 0.0)
        state = "up"
        if restart and restart[0] <= t < restart[1]:
            state = "down"
        elif restart and restart[1] <= t < restart[1] + restart[2]:
            state = "capture"
        if restart and abs(t - restart[1]) < tick / 2:
            procs = new_procs(wall)
            for key in C:
                C[key] = 0.0
            reset_hists()
            cpu.update(s=5.0, main=1.0, inv=10, vol=100, periods=0, thr=0)
            running = waiting = kv_used = 0.0
        # --- the step-time model ---
        bw = b.hbm_tbs * 1e12 * 0.82
        clock_cap = 1.0
        reasons = ()
        if cause == "throttling" and active:
            clock_cap = 1 - 0.5 * s
            reasons = spec.get("reasons", ("thermal (sw)",))
        comp_eff = 1.0 / clock_cap
        acc_rate = spec.get("accept", 0.0)
        k_spec = spec.get("k_spec", 0)
        if cause == "spec_decode_rejected" and active:
            acc_rate = max(0.04, acc_rate * (1 - 0.85 * s))
        for _ in range(6):
            ctx = (prompt + out / 2) * ctx_mult
            kv_read = running * ctx * kvb
            step = (wbytes + kv_read) / bw * (1 + 0.25 * (comp_eff - 1)) + 0.004 + 0.0025 * (tp > 1)
            step += running * 2 * params_b * 1e9 / tp / (b.tflops * 1e12 * 0.5) * comp_eff
            if k_spec:
                step *= 1 + 0.12 * k_spec
            # chunked prefill shares steps with decode
            pf_rate = lam * prompt * (1 - spec.get("hit", 0.1))
            if cause == "prefill_interference" and active:
                pf_rate += s * spec.get("long_prompt_tps", 20000)
            pf_time = pf_rate * 2 * params_b * 1e9 / tp / (b.tflops * 1e12 * 0.55) * comp_eff
            pf_frac = clamp(pf_time, 0, 0.85)
            step = step / (1 - pf_frac * 0.8)
            if cause == "oversized_request" and active:
                step *= 1 + 2.2 * s
            if cause == "gpu_shared" and active:
                step *= 1 + 1.4 * s
            if cause in ("host_cpu_contention", "host_launch_jitter") and active:
                step *= 1 + 1.2 * s
            if cause == "collective_straggler" and active:
                step *= 1 + 1.0 * s
            if cause == "tiny_kernels":
                step = step * (1.6 + 2 * s) if active else step
            if cause == "kv_pressure" and active:
                step *= 1 + 0.3 * s
            tok_per_step = 1 + k_spec * acc_rate
            itl = step / tok_per_step
            ttft = step * 2 + prompt * 2 * params_b * 1e9 / tp / (b.tflops * 1e12 * 0.55)
            want = lam * (out * itl + ttft)
            running = min(spec.get("max_seqs", 256), want)
        if cause == "kv_pressure" and active:
            cap_tokens = pool_tokens * (1.0 - 0.02 * rng.random())
            need = want * ctx * (1 + 0.8 * s)
            running = min(running, cap_tokens / max(ctx * (1 + 0.8 * s), 1))
        queue_in = max(0.0, want - running)
        if state != "up":
            running, queue_in = 0.0, 0.0
        waiting = max(0.0, 0.6 * waiting + 0.4 * queue_in + (rng.gauss(0, 0.3) if queue_in > 0 else 0))
        gen_tps = running / itl if running > 0.05 else 0.0
        if kind == "llamacpp":
            running = min(running, spec.get("max_seqs", 4))
        kv_used = clamp((running * ctx) / pool_tokens if pool_tokens else 0, 0, 1)
        if cause == "kv_pressure" and active:
            kv_used = clamp(0.93 + 0.06 * s + rng.gauss(0, 0.01), 0, 1)
        gen_tps *= (1 + rng.gauss(0, 0.04))
        # --- GPU activity ---
        if state == "down":
            load = Load(busy=0.0, sm=0.0, pcie_mib=800 if t > restart[0] + 10 else 5)
        elif state == "capture":
            load = Load(busy=0.85 + 0.1 * rng.random(), sm=0.12, tensor=0.02, dram=0.05, pcie_mib=40)
        else:
            occ_busy = clamp(lam * (out * itl + ttft)) if running < 1 else 0.985
            busy = clamp(occ_busy * (1 + rng.gauss(0, 0.01)))
            bytes_s = (gen_tps / max(tok_per_step, 1)) * (wbytes + running * ctx * kvb) / max(running, 1)
            dram = clamp(bytes_s / (b.hbm_tbs * 1e12))
            flops_s = (gen_tps * (1 + 0.7 * k_spec) + pf_rate) * 2 * params_b * 1e9 / tp
            tensor = clamp(flops_s / (b.tflops * 1e12) * 1.3)
            sm = clamp(busy * (0.45 + 0.4 * dram + 0.5 * tensor))
            if cause == "tiny_kernels":
                sm, tensor, dram = busy * (0.06 + 0.04 * (1 - s)), tensor * 0.2, dram * 0.3
                busy = clamp(0.97 + 0.02 * rng.random())
            if cause in ("host_cpu_contention", "host_launch_jitter") and active:
                gap = 0.45 * s * (0.6 + 0.4 * rng.random())
                busy, sm, tensor, dram = busy * (1 - gap), sm * (1 - gap), tensor * (1 - gap), dram * (1 - gap)
            if cause == "oversized_request" and active:
                tensor = clamp(tensor + 0.12 * s)
                sm = clamp(sm + 0.1 * s)
            load = Load(busy=busy, sm=sm, tensor=tensor, dram=dram, clock_cap=clock_cap, reasons=reasons,
                        extra_heat_c=25 * s if cause == "throttling" and "thermal" in " ".join(reasons) else 0,
                        pcie_mib=20 + gen_tps * 0.002, nvlink_mib=(gen_tps * 40 if tp > 1 else 0))
        loads = [load for _ in gpus]
        if cause == "collective_straggler" and active and tp > 1:
            cg = spec.get("culprit", 0)
            for i in range(len(gpus)):
                if i != cg:
                    loads[i] = replace(load, sm=load.sm * 0.6, tensor=load.tensor * 0.55, dram=load.dram * 0.6)
            loads[cg] = replace(load, clock_cap=1 - 0.45 * s, reasons=spec.get("reasons", ("hw slowdown",)))
        if cause == "throttling" and active and spec.get("culprit") is not None:
            for i in range(len(gpus)):
                if i != spec["culprit"]:
                    loads[i] = replace(load, clock_cap=1.0, reasons=(), extra_heat_c=0)
        # other tenant on the GPU
        shared_on = other is not None and (cause != "gpu_shared" or active)
        if shared_on and other_proc is None:
            opid, og, oname, ocmd, opod, omem, osm = other
            other_proc = Proc(opid, og, oname, ocmd, opod, wall - 5, mem=omem * GIB)
        if other_proc is not None and cause == "gpu_shared" and not active and t > (win[1] if win else 0):
            other_proc = None
        if other_proc is not None:
            osm = other[6]
            g = other_proc.gpu
            if osm > 0:
                L = loads[g]
                loads[g] = replace(L, busy=clamp(L.busy + osm * (1 - L.busy) + 0.02), sm=clamp(L.sm * (1 - 0.4 * osm) + osm * 0.7),
                                   tensor=clamp(L.tensor * (1 - 0.4 * osm) + osm * 0.35), dram=clamp(L.dram * (1 - 0.3 * osm) + osm * 0.2))
            other_proc.sm = 100 * osm * (0.9 + 0.2 * rng.random())
            other_proc.cpu_s += tick * (0.9 if osm > 0 else 0.02)
        # VRAM
        eng_mem = 0 if state == "down" else (wbytes + act + pool + 0.5 * GIB) if kind in ("vllm", "sglang", "tgi") \
            else wbytes + act + kv_used * pool + 0.3 * GIB
        if state == "capture":
            eng_mem = wbytes + act + pool * min(1.0, (t - restart[1]) / 5)
        for p in procs:
            p.mem = eng_mem
            busyf = loads[p.gpu].busy
            p.sm = 100 * loads[p.gpu].sm if other_proc is None else 100 * loads[p.gpu].sm * 0.5
        gsamples = []
        for i, g in enumerate(gpus):
            used = (eng_mem if i < tp and state != "down" else 0) + 0.55 * GIB
            if other_proc is not None and other_proc.gpu == i:
                used += other_proc.mem
            ml = {0: loads[0], 1: Load(sm=0.1 * rng.random()), 2: Load(sm=0.05)} if mig else None
            mu = {0: used, 1: 3.1 * GIB, 2: 1.2 * GIB} if mig else None
            gsamples.append(g.sample(loads[i], used, ml, mu))
        # host / CPU of the engine tree
        quota = spec.get("quota")
        need_cores = 0.9 + 0.25 * (gen_tps / 2000) + 0.15 * lam if state == "up" else 0.2
        got = need_cores
        thr = 0
        if quota:
            if cause == "host_cpu_contention" and active:
                need_cores *= 1 + 1.5 * s
            got = min(need_cores, quota * (0.98 + 0.02 * rng.random()))
            periods = int(10 * tick)
            thr = int(periods * clamp((need_cores - got) / max(need_cores, 1e-6) * 2.2 + rng.gauss(0, 0.02)))
            if need_cores < quota * 0.85:
                thr = 0 if rng.random() < 0.9 else 1
            cpu["periods"] += periods
            cpu["thr"] += thr
        noisy = spec.get("neighbour_cores", 0.0)
        if cause in ("host_cpu_contention", "host_launch_jitter") and active and not quota:
            noisy += spec.get("storm_cores", host.cpus * (0.9 + 0.4 * s))
        hs = host.sample(need_cores + noisy + (0.9 if other_proc else 0), tick)
        if not quota and hs.cpu_pct and hs.cpu_pct > 90:
            got = need_cores * (1 - 0.35 * s)
        cpu["s"] += got * tick
        cpu["main"] += min(1.0, got * 0.8) * tick
        inv_rate = 20 + (1500 * s if cause in ("host_cpu_contention", "host_launch_jitter") and active else 0) + thr * 3
        cpu["inv"] += int(inv_rate * tick * (0.8 + 0.4 * rng.random()))
        cpu["vol"] += int(3000 * tick)
        for p in procs:
            p.cpu_s = cpu["s"] if p.gpu == 0 else p.cpu_s + tick * 0.4
        # --- engine counters ---
        dt = tick
        fin = lam * dt if state == "up" else 0.0
        if state == "up":
            C["gen"] += gen_tps * dt
            C["prompt"] += (lam * prompt + (s * spec.get("long_prompt_tps", 20000) * 0.2 if cause == "prefill_interference" and active else 0)) * dt
            C["cached"] += lam * prompt * spec.get("hit", 0.1) * dt
            C["fin"] += fin
            C["pfs"] += fin * ttft
            C["dcs"] += fin * out * itl
            C["steps"] += dt / max(step, 1e-3)
            C["fwd"] += dt * loads[0].busy
            C["flops"] += dt * loads[0].tensor * b.tflops * 1e12 * 0.75
            C["rb"] += dt * loads[0].dram * b.hbm_tbs * 1e12
            C["wb"] += dt * loads[0].dram * b.hbm_tbs * 1e10
            if cause == "kv_pressure" and active:
                ev = rng.random() * 6 * s * dt
                C["pre"] += int(ev)
                C["retr"] += int(ev)
            if k_spec:
                drafts = gen_tps * dt / tok_per_step
                C["drafts"] += drafts
                C["dtok"] += drafts * k_spec
                C["acc"] += drafts * k_spec * acc_rate * (1 + rng.gauss(0, 0.03))
            qt = waiting / max(lam, 0.1) if waiting > 0.5 else 0.002
            sig = 0.25 + (0.4 * s if cause in ("oversized_request", "prefill_interference", "host_launch_jitter") else 0)
            if "itl" in H:
                H["itl"].observe_lognormal(rng, itl, sig, gen_tps * dt)
            if "tpot" in H:
                H["tpot"].observe_lognormal(rng, itl, 0.2, fin + (1 if rng.random() < fin % 1 else 0))
            if "ttft" in H:
                H["ttft"].observe_lognormal(rng, ttft + qt, 0.4 + 0.3 * s, round(fin))
            if "e2e" in H:
                H["e2e"].observe_lognormal(rng, ttft + qt + out * itl, 0.5, round(fin))
            if "queue" in H:
                H["queue"].observe_lognormal(rng, qt, 0.6, round(fin))
            if "params_n" in H:
                H["params_n"].observe(1, round(fin))
                H["params_max_tokens"].observe_lognormal(rng, spec.get("max_tokens", 1024), 0.3, round(fin))
                if cause == "oversized_request" and active and rng.random() < 0.25 * tick:
                    H["params_n"].observe(spec.get("bad_n", 8))
                    H["params_max_tokens"].observe(spec.get("bad_max", 2000))
        engine = None
        estat = None
        if kind is not None:
            if state != "up" or (restart and t < restart[1] + restart[2] + 8 and t >= restart[0]):
                estat = down("connection refused")
            elif rng.random() < spec.get("scrape_miss", 0.01):
                estat = down("timed out after 1.0 s")
            else:
                engine = engine_sample(kind, spec, C, H, running, waiting, kv_used, pool, pool_tokens, block,
                                       wbytes, tp, procs, cpu, quota, acc_rate, k_spec, wall, t, rng,
                                       cause == "kv_pressure" and active)
                estat = ok(age=round(0.05 + 0.1 * rng.random(), 3))
        sources = {"nvml": ok(), "host": ok(), "procfs": ok(), "pin": ok()}
        if kind is not None:
            sources["engine"] = estat
        launch = ()
        armed = None
        if spec.get("ebpf"):
            jit = cause == "host_launch_jitter" and active
            tail_frac = (0.04 + 0.25 * s) if jit else 0.002
            tail_us = 400 + 3000 * s if jit else 60
            api = "cudaGraphLaunch" if kind in ("vllm", "sglang") else "cudaLaunchKernel"
            calls = int((dt / max(step, 1e-3)) * (1 if api == "cudaGraphLaunch" else 300)) if state == "up" else 0
            if calls:
                launch = (launch_hist(rng, api, procs[0].pid, calls, 6.0 if api == "cudaGraphLaunch" else 3.5, tail_frac, tail_us),
                          launch_hist(rng, "cudaMemcpyAsync", procs[0].pid, int(calls * 2), 8.0, tail_frac, tail_us))
            sources["ebpf"] = ok(detail=f"uprobes on libcudart.so.12 of pid {procs[0].pid}")
        procs_s = [p.sample(mem_util=None) for p in procs] if state != "down" else []
        if other_proc is not None:
            procs_s.append(other_proc.sample())
        pin = pinned(spec["model"].split("/")[-1], procs[0].pid, cpu["s"], cpu["inv"], cpu["vol"], cpu["main"],
                     quota=quota, periods=cpu["periods"] if quota else None, throttled=cpu["thr"] if quota else None,
                     psi=hs.cpu_pressure_some_pct, rq=hs.run_queue, port=PORTS[kind])
        hs2 = replace(hs, offcpu_switches=(int(inv_rate * dt * 0.3) if spec.get("ebpf") else None))
        if rng.random() < 0.006 and k > 2:
            continue  # a missed tick (sampler late): no frame
        frames.append(Frame(seq=len(frames), time_wall_s=round(wall, 4), time_mono_s=round(5000.0 + t, 4),
                            gpus=tuple(gsamples), processes=tuple(procs_s), engine=engine, launch=launch,
                            host=hs2, pinned=pin, sources=sources))
    return frames


def engine_sample(kind, spec, C, H, running, waiting, kv_used, pool, pool_tokens, block, wbytes, tp, procs,
                  cpu, quota, acc_rate, k_spec, wall, t, rng, kv_event):
    # (edit before measuring: the address was drawn anew each scrape, so no two readings
    # were of the same engine; the draws are kept so every other number stays as written)
    rng.randrange(2, 250), rng.randrange(2, 250)
    url = f"http://10.{procs[0].pid % 248 + 2}.3.{procs[0].pid // 248 % 248 + 2}:{PORTS[kind]}/metrics"
    r = round(running + rng.gauss(0, 0.3)) if running > 0.3 else 0
    common = dict(kind=kind, url=url, model=spec["model"], pids=tuple(p.pid for p in procs),
                  time_mono_s=5000.0 + t + 0.05, time_wall_s=round(wall + 0.05, 4),
                  cpu_s=round(cpu["s"], 2), ctx_involuntary=cpu["inv"], busiest_thread_cpu_s=round(cpu["main"], 2),
                  busiest_thread=f"{procs[0].pid + 35} python3", cpu_quota_cores=quota,
                  cpu_periods=cpu["periods"] if quota else None, cpu_throttled_periods=cpu["thr"] if quota else None,
                  tensor_parallel=tp)
    hists = tuple(h.sample() for h in H.values())
    if kind == "vllm":
        e = EngineSample(**common, generation_tokens_total=round(C["gen"]), prompt_tokens_total=round(C["prompt"]),
                         prompt_tokens_cached_total=round(C["cached"]), requests_finished_total=round(C["fin"]),
                         requests_running=float(max(0, r)), requests_waiting=float(round(waiting)),
                         kv_usage_ratio=round(kv_used, 5), num_gpu_blocks=int(pool_tokens // 16), block_size=16,
                         cache_dtype=spec.get("cache_dtype", "auto"), histograms=hists,
                         preemptions_total=float(C["pre"]), data_parallel=1,
                         waiting_by_reason={"capacity": float(round(waiting)) if kv_event else 0.0, "deferred": 0.0 if kv_event else float(round(waiting))},
                         flops_total=C["flops"], read_bytes_total=C["rb"], write_bytes_total=C["wb"],
                         prefill_seconds_total=round(C["pfs"], 3), decode_seconds_total=round(C["dcs"], 3),
                         spec_drafts_total=round(C["drafts"]) if k_spec else None,
                         spec_draft_tokens_total=round(C["dtok"]) if k_spec else None,
                         spec_accepted_tokens_total=round(C["acc"]) if k_spec else None,
                         lora_running=tuple(spec.get("loras", ())[:max(0, min(r, 3))]), lora_max=4 if spec.get("loras") else None,
                         corrupted_requests_total=0.0)
    elif kind == "sglang":
        used = kv_used * pool_tokens
        e = EngineSample(**common, generation_tokens_total=round(C["gen"]), prompt_tokens_total=round(C["prompt"]),
                         prompt_tokens_cached_total=round(C["cached"]), requests_finished_total=round(C["fin"]),
                         requests_running=float(max(0, r)), requests_waiting=float(round(waiting)),
                         kv_usage_ratio=round(kv_used, 4), kv_pool_tokens=pool_tokens,
                         kv_used_tokens=float(round(used)), kv_free_tokens=float(round(pool_tokens - used)),
                         kv_evictable_tokens=float(round((pool_tokens - used) * 0.3)) if not kv_event else 0.0,
                         retracted_requests_total=float(C["retr"]), retracted_input_tokens_total=float(C["retr"] * spec["prompt"]),
                         histograms=hists, forward_seconds_total=round(C["fwd"], 3),
                         spec_accept_ratio=round(acc_rate + rng.gauss(0, 0.02), 3) if k_spec else None,
                         spec_accept_length=round(1 + k_spec * acc_rate, 3) if k_spec else None,
                         data_parallel=1)
    elif kind == "tgi":
        e = EngineSample(**common, generation_tokens_total=round(C["gen"]), prompt_tokens_total=round(C["prompt"]),
                         requests_finished_total=round(C["fin"]), requests_running=float(max(0, r)),
                         requests_waiting=float(round(waiting)), histograms=hists)
    else:
        e = EngineSample(**common, generation_tokens_total=round(C["gen"]), prompt_tokens_total=round(C["prompt"] - C["cached"]),
                         prompt_tokens_cached_total=round(C["cached"]), requests_running=float(max(0, r)),
                         requests_waiting=float(round(waiting)), prefill_seconds_total=round(C["pfs"], 3),
                         decode_seconds_total=round(C["dcs"], 3), decode_steps_total=round(C["steps"]),
                         spec_drafts_total=round(C["drafts"]) if k_spec else None,
                         spec_draft_tokens_total=round(C["dtok"]) if k_spec else None,
                         spec_accepted_tokens_total=round(C["acc"]) if k_spec else None)
    return e
