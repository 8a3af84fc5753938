"""A serving replica (vLLM / SGLang / TGI), simulated request by request at the tick level.

Every signal comes from one simulation: requests arrive, are admitted into the KV pool,
prefilled (chunked), decoded step by step; a step's time is the larger of its HBM traffic
(weights + KV read) and its tensor work, plus launch overhead and the scheduler's host gap.
GPU-Util, SM / tensor / DRAM activity, engine counters and histograms follow from it.
"""

from __future__ import annotations

import math
from collections import deque

from gputop.schema import EngineSample, LaunchHist
from gputop.buckets import bucket_index

from .common import (BOARDS, GiB, MODELS, SGL_B, TGI_B, VLLM_B, Hist, Host, Load, Proc, Tree, clip,
                     poisson, rng_for)
from .scene import Scene


class Req:
    __slots__ = ("prompt", "out", "gen", "arr", "adm", "pre_left", "n", "maxt", "first")

    def __init__(self, prompt, out, arr, n=1, maxt=None):
        self.prompt, self.out, self.arr, self.n = prompt, out, arr, n
        self.gen, self.adm, self.pre_left, self.first = 0.0, None, 0.0, None
        self.maxt = maxt or max(out, 256)


def serve(name, *, board="H100 SXM", model="llama8b", engine="vllm", tp=1, n_gpus=None,
          duration=600, tick=1.0, start=1780000000.0, rate=lambda t: 4.0, prompt=lambda t: 1500,
          out=lambda t: 300, max_seqs=256, mem_util=0.9, chunk=8192, graphs=True, hit=0.3,
          spec=None, mods=lambda t: {}, cpus=64, kv_fp8=False, host_other=lambda t: 2.0,
          quota=None, ebpf=False, lora=(), pool_override=None, extra_procs=(), restart_at=None,
          version="0.11.2", cores=None, psi=True, vision=False):
    B = BOARDS[board]
    M = MODELS[model]
    rng = rng_for(name)
    n_gpus = n_gpus or tp
    host = Host(cpus, f"{name}-node")
    scene = Scene(name, board, n_gpus, host, start, duration, tick)
    kvb_gpu = M.kv_bytes_tok / tp * (0.5 if kv_fp8 and M.wbytes >= 1 else 1)
    w_gpu = M.weights_bytes / tp
    total = B.mem_gib * GiB - B.reserve_gib * GiB
    act_gpu = 2.2 * GiB + 0.6 * GiB * (chunk / 8192)
    pool_bytes = max(1 * GiB, total * mem_util - w_gpu - act_gpu)
    block = 16 if engine == "vllm" else 1
    pool_tokens = int(pool_override or (pool_bytes / kvb_gpu if kvb_gpu else 0))
    if engine == "vllm":
        blocks = pool_tokens // 16
        pool_tokens = blocks * 16
    mem_proc = w_gpu + act_gpu + (pool_tokens * kvb_gpu if kvb_gpu else 0) + 0.5 * GiB
    if engine == "tgi":
        mem_proc = min(total * 0.97, mem_proc)
    peak = B.tflops * 1e12
    bw = B.bw_tbs * 1e12
    port = 8000 + (rng.randrange(10) if engine == "vllm" else 30000 - 8000 if engine == "sglang" else 80 - 8000 + 3000)
    base_pid = rng.randrange(3000, 90000)
    pod = f"inference/{M.name.split('/')[-1].lower()[:24]}-{rng.randrange(16**5):05x}"
    cont = f"containerd:{rng.randrange(16**12):012x}"
    cmd = {"vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {M.name} --tensor-parallel-size {tp} --port {port}"
                   f" --gpu-memory-utilization {mem_util} --max-num-seqs {max_seqs}" + (" --kv-cache-dtype fp8" if kv_fp8 else "")
                   + ("" if graphs else " --enforce-eager") + (f" --speculative-config {spec['kind']}" if spec else "")
                   + (" --enable-lora" if lora else ""),
           "sglang": f"python3 -m sglang.launch_server --model-path {M.name} --tp {tp} --port {port} --mem-fraction-static {mem_util}"
                     + (f" --speculative-algorithm {spec['kind']}" if spec else "") + ("" if graphs else " --disable-cuda-graph"),
           "tgi": f"text-generation-launcher --model-id {M.name} --num-shard {tp} --port {port}"}[engine]
    t0 = start - rng.uniform(3600, 86400 * 3)
    if engine == "vllm":
        procs = [Proc(base_pid, -1, "python3", cmd, t0, rss=6 * GiB, container=cont, pod=pod)]
        workers = [Proc(base_pid + 40 + i, i, "VLLM::Worker_TP%d" % i if tp > 1 else "VLLM::EngineCore",
                        cmd, t0 + 8, mem=mem_proc, rss=3 * GiB, container=cont, pod=pod, ppid=base_pid) for i in range(tp)]
    elif engine == "sglang":
        procs = [Proc(base_pid, -1, "python3", cmd, t0, rss=5 * GiB, container=cont, pod=pod)]
        workers = [Proc(base_pid + 30 + i, i, "sglang::scheduler" + (f"_TP{i}" if tp > 1 else ""), cmd, t0 + 6,
                        mem=mem_proc, rss=3 * GiB, container=cont, pod=pod, ppid=base_pid) for i in range(tp)]
    else:
        procs = [Proc(base_pid, -1, "text-generation-launcher", cmd, t0, rss=0.3 * GiB, container=cont, pod=pod)]
        workers = [Proc(base_pid + 20 + i, i, "python", f"/opt/conda/bin/python /opt/conda/bin/text-generation-server serve {M.name} --sharded", t0 + 3,
                        mem=mem_proc, rss=4 * GiB, container=cont, pod=pod, ppid=base_pid) for i in range(tp)]
    pids = tuple(p.pid for p in procs + workers)
    threads = [[workers[0].pid + 1 if engine != "tgi" else base_pid + 1, "EngineCore" if engine == "vllm" else "python3", 0.55],
               [base_pid, "python3" if engine != "tgi" else "text-generation", 0.25], [base_pid + 2, "tokenizer", 0.12],
               [base_pid + 3, "uvicorn", 0.05]]
    tree = Tree(base_pid, pids, cmd, threads, cores=tuple(range(cores)) if cores else tuple(range(cpus)),
                quota=quota, ports=(port,))
    bnds = {"vllm": VLLM_B, "sglang": SGL_B, "tgi": TGI_B}[engine]
    hnames = {"vllm": ("ttft", "itl", "tpot", "e2e", "queue", "params_n", "params_max_tokens"),
              "sglang": ("ttft", "itl", "e2e", "queue"), "tgi": ("tpot", "e2e", "queue")}[engine]

    class St:
        pass
    s = St()

    def reset():
        s.hist = {h: Hist(h, bnds[h]) for h in hnames}
        s.gen = s.prompt = s.cached = s.fin = s.pre = s.retr = s.retr_tok = 0.0
        s.drafts = s.dtoks = s.acc = 0.0
        s.pre_s = s.dec_s = s.fwd_s = 0.0
        s.flops = s.rd = s.wr = 0.0
        s.running, s.waiting = [], deque()
        s.down_until = -1.0
    reset()
    s.carry = 0.0

    def step(t, dt, t_wall):
        m = mods(t)
        if restart_at is not None and restart_at <= t < restart_at + dt:
            reset()
            s.down_until = t + m.get("restart_s", 75)
            nonlocal_pid_shift()
        down = t < s.down_until
        # ---- arrivals
        lam = rate(t) * dt * m.get("rate_mult", 1.0)
        if not down:
            for _ in range(poisson(rng, lam)):
                p = max(16, int(prompt(t) * math.exp(rng.gauss(0, 0.6)) * 0.8))
                o = max(4, int(out(t) * math.exp(rng.gauss(0, 0.7)) * 0.78))
                s.waiting.append(Req(p, o, t + rng.random() * dt))
                if "params_n" in s.hist:
                    s.hist["params_n"].observe_value(1)
                    s.hist["params_max_tokens"].observe_value(min(100000, max(o * 2, 1024)))
            for (p, o, nn) in m.get("inject", ()):  # special requests arriving now
                r = Req(p, o, t, n=nn, maxt=o)
                s.waiting.append(r)
                if "params_n" in s.hist:
                    s.hist["params_n"].observe_value(nn)
                    s.hist["params_max_tokens"].observe_value(o)
        # ---- admission into the KV pool
        kv_used = sum(r.prompt + r.gen * r.n for r in s.running)
        while s.waiting and len(s.running) < max_seqs and not down:
            r = s.waiting[0]
            need = r.prompt + 16 * r.n
            if pool_tokens and kv_used + need > pool_tokens * 0.99:
                break
            s.waiting.popleft()
            r.adm = t
            hitf = clip(hit * rng.uniform(0.7, 1.2), 0, 0.95) if r.prompt > 300 else 0
            r.pre_left = r.prompt * (1 - hitf)
            s.cached += r.prompt * hitf
            s.prompt += r.prompt
            s.running.append(r)
            kv_used += need
            if "queue" in s.hist:
                s.hist["queue"].observe(1, max(0.002, t - r.arr), 0.3)
        # ---- time per step
        slow = max(scene.slow[:tp])
        slow_g = m.get("slow_gpu")  # (gpu, factor): one rank's own slowness
        if slow_g:
            slow = max(slow, slow_g[1])
        share = m.get("share", 0.0)  # SM time taken by another process on the GPU(s)
        decs = [r for r in s.running if r.pre_left <= 0]
        Bn = sum(r.n for r in decs)
        ctx = sum((r.prompt + r.gen) * r.n for r in decs)
        acc = None
        tps = 1.0
        k = 0
        if spec:
            k = spec["k"]
            acc = m.get("accept", spec["accept"]) * rng.uniform(0.96, 1.04)
            tps = sum(acc ** i for i in range(k + 1))
        touch = 1.0 if M.active_b == M.params_b else clip(0.15 + Bn * M.active_b / M.params_b * 0.5, 0.15, 1.0)
        bytes_step = w_gpu * touch + ctx * kvb_gpu
        flops_step = Bn * (k + 1) * 2 * M.active_b * 1e9 / tp + Bn * (k + 1) * 4 * M.layers * M.d_model * (ctx / max(Bn, 1)) / tp
        t_mem = bytes_step / (bw * 0.8)
        t_cmp = flops_step / (peak * 0.5) * slow
        overhead = (0.0009 if graphs else M.layers * 0.00007) + (0.00004 * M.layers * 2 if tp > 1 else 0)
        overhead += m.get("extra_gpu_s", 0.0)
        t_dec = (max(t_mem * (0.35 + 0.65 * slow) if slow > 1.05 else t_mem, t_cmp) + overhead) * (1 + 0.05 * spec["k"] if spec else 1)
        t_dec *= m.get("step_mult", 1.0)
        t_dec /= max(0.05, 1 - share)
        # host gap: the scheduler's CPU work per step, longer when starved of CPU
        g = 0.0006 + 0.00002 * Bn + m.get("extra_host_s", 0.0)
        if engine == "tgi":
            g += 0.0015
        demand = 1.5 + 0.8 * tp + 0.002 * lam * prompt(t) / 100 + m.get("tree_demand", 0.0)
        other = host_other(t) + m.get("other_cpu", 0.0)
        got, hs = host.tick(rng, dt, demand, other, cores)
        starved_frac = clip(1 - got / demand) if demand else 0.0
        got = tree.tick(rng, dt, got, demand, starved_frac)
        starve = demand / max(0.05, got)
        if starve > 1.03:
            g *= 1 + (starve - 1) * 4.0
        if m.get("jitter"):
            g += m["jitter"] * rng.uniform(0.6, 1.4)
        # ---- prefill (chunked into the decode steps)
        pre_tok_s = (2 * M.active_b * 1e9 / tp) / (peak * 0.55) * slow / max(0.05, 1 - share)
        pend = sum(r.pre_left for r in s.running if r.pre_left > 0)
        avgp = (sum(r.prompt for r in s.running if r.pre_left > 0) / max(1, sum(1 for r in s.running if r.pre_left > 0)))
        pre_tok_s *= 1 + 4 * M.layers * M.d_model * avgp / 2 / (2 * M.active_b * 1e9)  # attention
        P_t = pend * pre_tok_s
        c = chunk * pre_tok_s
        if down:
            steps, pre_done_t, mixed = 0, 0.0, 0
        elif Bn == 0:
            pre_done_t = min(P_t, dt * 0.95)
            steps, mixed = 0, 0
        else:
            full = dt / (t_dec + g + c)
            if P_t >= full * c:
                steps, pre_done_t, mixed = full, full * c, full
            else:
                steps = (dt - P_t) / (t_dec + g)
                pre_done_t = P_t
                mixed = P_t / c if c else 0
        pre_tok = pre_done_t / pre_tok_s if pre_tok_s else 0
        # hand prefilled tokens to requests in order
        left = pre_tok
        for r in s.running:
            if r.pre_left > 0 and left > 0:
                d = min(r.pre_left, left)
                r.pre_left -= d
                left -= d
                if r.pre_left <= 0:
                    r.first = t + dt * 0.5
                    ttft = r.first - r.arr
                    if "ttft" in s.hist:
                        s.hist["ttft"].observe(1, max(0.01, ttft), 0.25)
        # ---- decode
        per_req = steps * tps
        gen_now = 0.0
        heavy_itl = 0
        done = []
        for r in decs:
            left_r = r.out - r.gen
            d = min(left_r, per_req)
            r.gen += d
            gen_now += d * r.n
            if r.gen >= r.out - 1e-9:
                done.append(r)
        for r in done:
            s.running.remove(r)
            s.fin += 1
            e2e = t + dt - r.arr
            if "e2e" in s.hist:
                s.hist["e2e"].observe(1, max(0.05, e2e), 0.15)
            if "tpot" in s.hist:
                s.hist["tpot"].observe(1, max(0.001, (t + dt - (r.first or t)) / max(1, r.out)), 0.2)
        # ---- preemption when the pool overflows (vLLM recompute / SGLang retract)
        kv_used = sum(r.prompt + r.gen * r.n for r in s.running)
        while pool_tokens and kv_used > pool_tokens and len(s.running) > 1:
            r = s.running.pop()  # newest first
            kv_used -= r.prompt + r.gen * r.n
            r.prompt = int(r.prompt + r.gen)
            r.out = max(1, int(r.out - r.gen))
            r.gen = 0
            r.pre_left = 0
            s.waiting.appendleft(r)
            s.pre += 1
            s.retr_tok += r.prompt
        s.gen += gen_now
        itl_mean = (t_dec + g) / tps
        if steps > 0 and "itl" in s.hist:
            mixed_f = clip(mixed / steps)
            s.hist["itl"].observe(gen_now * (1 - mixed_f), itl_mean, 0.18)
            s.hist["itl"].observe(gen_now * mixed_f, itl_mean + c / tps, 0.2)
        if spec and steps:
            s.drafts += steps * len(decs)
            s.dtoks += steps * len(decs) * k
            s.acc += steps * len(decs) * (tps - 1)
        busy = steps * t_dec * (1 - share) + pre_done_t * (1 - share)
        s.pre_s += pre_done_t
        s.dec_s += steps * (t_dec + g) * len(decs) / max(1, len(decs))
        s.fwd_s += busy
        flops_done = steps * flops_step + pre_tok * 2 * M.active_b * 1e9 / tp
        bytes_done = steps * bytes_step + pre_done_t / max(1e-9, pre_tok_s) * 0 + (pre_tok * kvb_gpu)
        s.flops += flops_done
        s.rd += bytes_done
        s.wr += gen_now * kvb_gpu + pre_tok * kvb_gpu
        # ---- GPU loads
        util = clip(busy / dt + (share if share and m.get("share_gpus") is None else 0))
        dec_sm = 0.5 + 0.42 * clip(Bn / 48)
        sm = clip((steps * t_dec * dec_sm + pre_done_t * 0.93) * (1 - share) / dt)
        tens = clip(flops_done / (peak * dt) * 1.25)
        dram = clip(bytes_done / (bw * dt))
        nv = (steps * Bn * M.d_model * 2 * M.layers * 2 * (tp - 1) / tp + pre_tok * M.d_model * 2 * M.layers * 2) / 2**20 / dt if tp > 1 else 0
        loads = []
        for i in range(n_gpus):
            if i >= tp:
                loads.append(Load(util=0, mem_bytes=0, has_procs=False))
                continue
            L = Load(util=util, sm=sm, tensor=tens, dram=dram, mem_bytes=mem_proc, nvlink_mib=nv,
                     occupancy=sm * (0.25 + 0.2 * clip(Bn / 64)))
            sg = m.get("share_gpus")
            if share and sg is not None:
                if i in sg:
                    L.util = clip(busy / dt + share * rng.uniform(0.85, 1.0))
                    L.sm = clip(sm + share * m.get("other_sm", 0.6))
                    L.tensor = clip(tens + share * m.get("other_tensor", 0.3))
                    L.mem_bytes += m.get("other_mem", 8 * GiB)
            if slow_g and i == slow_g[0]:
                L.clock_cap_mhz = m.get("cap_mhz")
                L.nvlink_mib = nv * m.get("nvlink_frac", 1.0)
            elif slow_g and tp > 1:
                # the others finish first and wait for the slow rank inside the all-reduce
                wait = clip((slow_g[1] - 1) * (steps * t_dec) / dt / slow_g[1])
                L.sm = clip(sm * (1 - wait) + wait * 0.14)
                L.tensor = clip(tens * (1 - wait))
            if m.get("brake"):
                L.brake = True
            if m.get("power_limit"):
                L.power_limit_w = m["power_limit"]
            if m.get("cool_gpu") is not None and i in m["cool_gpu"]:
                L.cooling = m.get("cooling", 1.6)
            if m.get("hw_gpu") is not None and i in m["hw_gpu"]:
                L.hw_slowdown = True
            if down:
                L = Load(util=m.get("load_util", 0.0), mem_bytes=m.get("load_mem", 0.0) if True else 0, has_procs=bool(m.get("load_mem")))
            loads.append(L)
        # ---- processes
        wsm = util * 100
        plist = []
        for p in procs + workers:
            p.cpu_s += got / len(procs + workers) * dt
        if not down:
            for w in workers:
                w.mem = mem_proc
                plist.append(w.sample(sm_util=wsm if not share else None))
        for ep in extra_procs:
            if ep.gpu < n_gpus and ep.mem:
                ep.cpu_s += 0.05 * dt
                plist.append(ep.sample(sm_util=None))
        if m.get("other_proc") is not None:
            op = m["other_proc"]
            op.cpu_s += 0.9 * dt
            plist.append(op.sample(sm_util=None))
        # ---- engine page
        eng = None
        running = len(s.running)
        if not down:
            ef = dict(kind=engine, url=f"http://127.0.0.1:{port}/metrics", model=M.name,
                      generation_tokens_total=float(round(s.gen)), prompt_tokens_total=float(round(s.prompt)),
                      requests_finished_total=float(s.fin), requests_running=float(running),
                      requests_waiting=float(len(s.waiting)), tensor_parallel=tp, data_parallel=1,
                      pids=pids, time_wall_s=round(t_wall - rng.uniform(0.005, 0.05), 6),
                      time_mono_s=None, histograms=tuple(h.sample() for h in s.hist.values()),
                      **tree.engine_fields())
            if engine == "vllm":
                ef.update(prompt_tokens_cached_total=float(round(s.cached)), kv_usage_ratio=clip(kv_used / pool_tokens) if pool_tokens else 0.0,
                          num_gpu_blocks=pool_tokens // 16, block_size=16, cache_dtype="fp8" if kv_fp8 else "auto",
                          kv_pool_bytes=int(pool_tokens * kvb_gpu), kv_pool_tokens=pool_tokens,
                          preemptions_total=float(s.pre), prefill_seconds_total=round(s.pre_s * 3, 3),
                          decode_seconds_total=round(s.dec_s * max(1, running), 3),
                          waiting_by_reason={"capacity": float(len(s.waiting)), "deferred": 0.0},
                          flops_total=round(s.flops), read_bytes_total=round(s.rd), write_bytes_total=round(s.wr))
                if spec:
                    ef.update(spec_drafts_total=float(round(s.drafts)), spec_draft_tokens_total=float(round(s.dtoks)),
                              spec_accepted_tokens_total=float(round(s.acc)))
                if lora:
                    ef.update(lora_running=tuple(lora[: max(1, min(len(lora), running // 8))]), lora_max=len(lora) + 4)
            elif engine == "sglang":
                ef.update(prompt_tokens_cached_total=float(round(s.cached)), kv_usage_ratio=clip(kv_used / pool_tokens),
                          kv_pool_tokens=pool_tokens, kv_used_tokens=float(kv_used),
                          kv_free_tokens=float(max(0, pool_tokens - kv_used)),
                          kv_evictable_tokens=float(int(min(pool_tokens - kv_used, s.cached * 0.2)) if pool_tokens > kv_used else 0),
                          retracted_requests_total=float(s.pre), retracted_input_tokens_total=float(round(s.retr_tok)),
                          forward_seconds_total=round(s.fwd_s, 3), cache_dtype="fp8_e4m3" if kv_fp8 else "auto")
                if spec:
                    ef.update(spec_accept_ratio=round(acc, 4) if steps else 0.0,
                              spec_accept_length=round(tps, 3) if steps else 0.0)
            eng = EngineSample(**ef)
        launch = None
        if ebpf:
            n_launch = int(steps * (1 if graphs else M.layers * 12)) + int(pre_tok / 2048 * M.layers * 10)
            api = "cudaGraphLaunch" if graphs else "cudaLaunchKernel"
            base_ns = 4500 if graphs else 3200
            bk = {}
            tail = m.get("jitter_tail", 0.002) if not m.get("jitter") else m.get("jitter_tail", 0.04)
            n_tail = int(n_launch * tail)
            bulk = n_launch - n_tail
            for q, fr in ((0.7, 0.25), (1.0, 0.5), (1.5, 0.2), (2.5, 0.05)):
                bi = bucket_index(int(base_ns * q))
                bk[bi] = bk.get(bi, 0) + int(bulk * fr)
            tmax = base_ns * 3
            for _ in range(min(n_tail, 60)):
                v = int(rng.uniform(0.05, 1) * (m.get("jitter", 0.0002) * 1e9 * 2.5 + 60000))
                tmax = max(tmax, v)
                bi = bucket_index(v)
                bk[bi] = bk.get(bi, 0) + max(1, n_tail // 60)
            cnt = sum(bk.values())
            sm_ns = int(sum(v * (1 << max(0, (i >> 3) - 1)) * 1.0 for i, v in bk.items()) * 0) or int(cnt * base_ns * 1.1 + n_tail * (m.get("jitter", 0.0) * 1e9 * 0.8))
            launch = (LaunchHist(api=api, pid=workers[0].pid, count=cnt, sum_ns=sm_ns, max_ns=int(tmax), buckets=bk),)
            hs = type(hs)(**{**hs.__dict__, "offcpu_switches": int(40 + (m.get("jitter", 0) > 0) * steps * 0.3 * rng.uniform(0.5, 1.5))}) if False else hs
        if not psi:
            hs = type(hs)(cpu_pct=hs.cpu_pct, run_queue=hs.run_queue, cpus=hs.cpus, ctx_switches_total=hs.ctx_switches_total)
        return {"loads": loads, "procs": plist, "engine": eng, "host": hs,
                "pinned": tree.pinned(hs) if not down else None, "launch": launch,
                "engine_reason": "connection refused (engine restarting)" if down else None}

    def nonlocal_pid_shift():
        # a restarted engine: new pids, new start times, counters from zero
        for p in procs + workers:
            p.pid += 700
            p.start = start + s.down_until - 80
            p.cpu_s = 0.0
        tree.root = procs[0].pid
        tree.pids = tuple(p.pid for p in procs + workers)
        tree.cpu_s, tree.tcpu = 0.0, {}
        for th in tree.threads:
            th[0] += 700
        nonlocal pids
        pids = tree.pids

    return scene.run(step)
