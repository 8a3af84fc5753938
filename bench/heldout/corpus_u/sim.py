"""Physics of corpus_u: a request-level continuous-batching engine, a step-level training
job, GPU power/clock/thermal behaviour, the host's /proc view, and the frames gputop
would record from all of it.  Everything is deterministic given the trace name."""

from __future__ import annotations

import hashlib
import math

import bisect
import random
import statistics

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, EngineSample, Frame, GpuSample, HostSample,
                           LaunchHist, PinnedSample, ProcSample, SourceStatus, ThreadSample)


class Rng:
    """The few draws the simulation needs, on Python's Mersenne Twister (no numpy)."""

    def __init__(self, seed):
        self.r = random.Random(seed)

    def uniform(self, a=0.0, b=1.0):
        return self.r.uniform(a, b)

    def random(self):
        return self.r.random()

    def normal(self, mu=0.0, sigma=1.0):
        return self.r.gauss(mu, sigma)

    def integers(self, a, b):
        return self.r.randrange(int(a), int(b))

    def lognormal(self, mu, sigma, n=None):
        if n is None:
            return self.r.lognormvariate(mu, sigma)
        return [self.r.lognormvariate(mu, sigma) for _ in range(n)]

    def poisson(self, lam):
        if lam <= 0:
            return 0
        if lam > 40:
            return max(0, int(round(self.r.gauss(lam, math.sqrt(lam)))))
        L, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= self.r.random()
            if p <= L:
                return k
            k += 1


def rng_for(name: str, salt: str = "") -> Rng:
    digest = hashlib.sha256(f"corpus_u:{name}:{salt}".encode()).digest()
    return Rng(int.from_bytes(digest[:8], "little"))


# ------------------------------------------------------------------ hardware
GPUS = {
    "H100": dict(name="NVIDIA H100 80GB HBM3", mem=85520809984, reserved=566231040,
                 bw=3.35e12, flops=989e12, clock=1980.0, mclk=2619.0, tdp=700.0, idle=72.0,
                 gpm=True),
    "H200": dict(name="NVIDIA H200", mem=150754820096, reserved=644939776, bw=4.8e12,
                 flops=989e12, clock=1980.0, mclk=3201.0, tdp=700.0, idle=76.0, gpm=True),
    "A100": dict(name="NVIDIA A100-SXM4-80GB", mem=85899345920, reserved=531628032, bw=2.0e12,
                 flops=312e12, clock=1410.0, mclk=1593.0, tdp=400.0, idle=58.0, gpm=False),
}

# model facts per GPU (tensor-parallel rank): params per rank, weights bytes, KV bytes/token
MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": dict(params=8.03e9, kvb=131072, vocab=128256),
    "Qwen/Qwen2.5-7B-Instruct": dict(params=7.6e9, kvb=57344, vocab=152064),
    "Qwen/Qwen2.5-32B-Instruct": dict(params=32.8e9, kvb=262144, vocab=152064),
    "meta-llama/Llama-3.1-70B-Instruct": dict(params=70.6e9, kvb=327680, vocab=128256),
    "Qwen/Qwen2.5-0.5B-Instruct": dict(params=0.49e9, kvb=12288, vocab=151936),
}

VLLM_BOUNDS = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0),
    "tpot": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
             10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "queue": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
              120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "params_n": (1.0, 2.0, 5.0, 10.0, 20.0),
    "params_max_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0,
                          2000.0, 5000.0, 10000.0, 20000.0, 50000.0, 100000.0),
    "max_generation_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0,
                              2000.0, 5000.0, 10000.0, 20000.0, 50000.0, 100000.0),
}
SGLANG_BOUNDS = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
             100.0, 200.0, 400.0),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06,
            0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    "queue": (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0,
              15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0,
              400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0,
              1800.0, 2000.0, 2500.0, 3000.0),
}


class Hist:
    def __init__(self, name, bounds):
        self.name, self.bounds = name, [float(b) for b in bounds]
        self.counts = [0.0] * (len(bounds) + 1)
        self.sum = 0.0

    def add(self, values, weights=None):
        if not isinstance(values, (list, tuple)):
            values = [values]
        if weights is None:
            weights = [1.0] * len(values)
        for v, w in zip(values, weights):
            self.counts[bisect.bisect_left(self.bounds, v)] += w
            self.sum += v * w

    def scale(self, k):
        self.counts = [c * k for c in self.counts]
        self.sum *= k

    def sample(self) -> EngineHistogram:
        cum, acc = [], 0.0
        for c in self.counts:
            acc += c
            cum.append(acc)
        return EngineHistogram(self.name, tuple(float(b) for b in self.bounds),
                               tuple(float(round(c)) for c in cum[:-1]),
                               float(round(cum[-1])), float(self.sum))


# ------------------------------------------------------------------ GPU physics
def power_model(spec, sm, tensor, dram):
    """Watts a GPU would draw uncapped: fitted to the real H200 (decode 210 W at SM 50%,
    training 490 W, bf16 GEMMs at the 700 W cap)."""
    scale = spec["tdp"] / 700.0
    return spec["idle"] + scale * (95 * sm + 820 * tensor + 470 * dram)


class GpuPhys:
    """Power cap, clocks and a first-order thermal model of one board."""

    def __init__(self, spec, rng, ambient=30.0, r_th=0.045, tau=35.0):
        self.spec, self.rng = spec, rng
        self.ambient, self.r_th, self.tau = ambient, r_th, tau
        self.temp = ambient + spec["idle"] * r_th
        self.limit = spec["tdp"]

    def step(self, dt, sm, tensor, dram, *, limit=None, cooling=1.0, slowdown=None,
             reasons=()):
        """(power, clock MHz, clock factor, throttle reasons, temp) for this tick's work.
        ``cooling`` < 1: poorer heat removal (a failed fan wall); ``slowdown``: a clock
        factor forced by the board (power brake, HW slowdown)."""
        spec = self.spec
        lim = limit or self.limit
        want = power_model(spec, sm, tensor, dram)
        factor, thr = 1.0, list(reasons)
        if slowdown is not None:
            factor = slowdown
        if want > lim:
            # dynamic power ~ f^2.5 for the compute part at these voltages
            cap_f = max(0.35, ((lim - spec["idle"]) / max(1.0, want - spec["idle"])) ** 0.45)
            if cap_f < factor:
                factor = cap_f
            thr.append("power cap")
        # thermal: slowdown at 87 C (sw), hard at 92 C
        if self.temp > 87.0:
            tf = max(0.45, 1.0 - (self.temp - 87.0) * 0.06)
            if tf < factor:
                factor = tf
            thr.append("thermal (sw)")
            if self.temp > 92.0:
                thr.append("hw slowdown")
        power = spec["idle"] + (want - spec["idle"]) * factor ** 2.2 if want > spec["idle"] \
            else want
        power = min(power, lim + 3.0) * (1 + self.rng.normal(0, 0.008))
        target = self.ambient + power * self.r_th / cooling
        self.temp += (target - self.temp) * (1 - math.exp(-dt / self.tau))
        clock = spec["clock"] * factor
        if clock < spec["clock"] - 1:
            clock = round(clock / 15.0) * 15.0  # NVML clocks move in 15 MHz steps
        seen = tuple(r for r in ("power cap", "hw slowdown", "sync boost", "thermal (sw)",
                                 "thermal (hw)", "power brake") if r in thr)
        return power, clock, factor, seen, self.temp


def util_samples(busy_frac, rng, n=6, wobble=0.06):
    """NVML GPU-Util samples (1/6 s periods) around a tick's busy fraction."""
    out = []
    for _ in range(n):
        v = busy_frac + rng.normal(0, wobble * min(busy_frac, 1 - busy_frac + 0.05) * 2)
        out.append(float(int(min(100, max(0, round(v * 100))))))
    return tuple(out)


def gpu_sample(spec, index, uuid, *, busy, sm, occ, tensor, dram, mem_used, power, clock,
               throttle, temp, limit, rng, samples=None, first=False, pcie=(0.0, 0.0),
               nvlink=(0.0, 0.0), lost=False):
    missing = {"fan_pct": "not supported on this GPU"}
    gpm = spec["gpm"] and not first
    if not spec["gpm"]:
        for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
            missing[k] = "needs Hopper+ (GPM) or a dcgm-exporter"
    util = min(100.0, max(0.0, round(busy * 100)))
    s = samples if samples is not None else util_samples(busy, rng)
    mem_util = min(100.0, max(0.0, round(dram * 100 * 0.82)))
    return GpuSample(
        index=index, name=spec["name"], uuid=uuid, util_gpu_pct=float(util),
        util_gpu_samples_pct=s, util_mem_pct=float(mem_util),
        sm_active_pct=round(min(100.0, sm * 100), 3) if gpm else None,
        sm_occupancy_pct=round(min(100.0, occ * 100), 3) if gpm else None,
        dram_bw_pct=round(min(100.0, dram * 100), 3) if gpm else None,
        tensor_pct=round(min(100.0, tensor * 100), 3) if gpm else None,
        mem_total_bytes=spec["mem"] - spec["reserved"], mem_used_bytes=int(mem_used),
        mem_reserved_bytes=spec["reserved"], power_w=round(power, 3), temp_c=float(round(temp)),
        sm_clock_mhz=float(clock), throttle=tuple(throttle),
        bus_id=f"00000000:{0x18 + 0x10 * index:02X}:00.0", fan_pct=None, pstate=0,
        power_limit_w=float(limit), mem_clock_mhz=spec["mclk"],
        pcie_rx_mib_per_s=round(pcie[0], 2) if spec["gpm"] else None,
        pcie_tx_mib_per_s=round(pcie[1], 2) if spec["gpm"] else None,
        nvlink_rx_mib_per_s=round(nvlink[0], 2) if spec["gpm"] else None,
        nvlink_tx_mib_per_s=round(nvlink[1], 2) if spec["gpm"] else None,
        ecc_corrected=0, ecc_uncorrected=0, xid_count=0, xid_last=None, mig_mode=False,
        missing=missing, lost=lost)


def launch_hist(api, pid, count, median_us, sigma, rng, tail_frac=0.0, tail_us=0.0):
    """A tick's histogram of host-side call durations (lognormal body, optional tail)."""
    count = int(count)
    if count <= 0:
        return LaunchHist(api=api, pid=pid)
    n = min(count, 600)
    body = rng.lognormal(math.log(median_us), sigma, n)
    if tail_frac > 0:
        body = [rng.lognormal(math.log(tail_us), 0.7) if rng.random() < tail_frac else b
                for b in body]
    ns = [int(b * 1000) for b in body]
    w = count / n
    buckets: dict[int, int] = {}
    for v in ns:
        b = bucket_index(int(max(1, v)))
        buckets[b] = buckets.get(b, 0) + 1
    scaled = {b: max(1, int(round(c * w))) for b, c in buckets.items()}
    total = sum(scaled.values())
    return LaunchHist(api=api, pid=pid, count=total, sum_ns=int(sum(ns) / len(ns) * total),
                      max_ns=int(max(ns)), buckets=scaled)


# ------------------------------------------------------------------ serving engine
class ServeSim:
    """Request-level continuous batching (vLLM V1 chunked prefill, or SGLang with
    prefill/extend batches) on one tensor-parallel group.  Times are seconds."""

    def __init__(self, rng, *, engine="vllm", model="meta-llama/Llama-3.1-8B-Instruct",
                 gpu="H100", tp=1, pool_tokens=None, max_seqs=256, max_batched=8192,
                 block=16, mem_util=0.90, spec_k=0, step_floor=0.0022, host_step=0.0035,
                 async_sched=True, chunked=True):
        self.rng, self.engine = rng, engine
        self.m = MODELS[model]
        self.model = model
        self.spec = GPUS[gpu]
        self.tp = tp
        self.params_rank = self.m["params"] / tp
        self.kvb = self.m["kvb"] // tp
        self.weights = int(self.params_rank * 2 * 1.02)
        total = self.spec["mem"] - self.spec["reserved"]
        if pool_tokens is None:
            avail = total * mem_util - self.weights - 4.5e9
            pool_tokens = int(avail // self.kvb)
        self.block = block
        self.pool = int(pool_tokens // block * block)
        self.num_blocks = self.pool // block
        self.max_seqs, self.max_batched = max_seqs, max_batched
        self.step_floor, self.host_step = step_floor, host_step
        self.async_sched, self.chunked = async_sched, chunked
        self.spec_k = spec_k
        self.mem_used_engine = int(total * mem_util) if engine == "vllm" else \
            int(self.weights + self.pool * self.kvb + 3.2e9)
        self.t = 0.0
        # running: list of dicts; waiting: list of dicts (FIFO, preempted at the front)
        self.running: list[dict] = []
        self.waiting: list[dict] = []
        b = VLLM_BOUNDS if engine == "vllm" else SGLANG_BOUNDS
        names = ("ttft", "itl", "tpot", "e2e", "queue", "params_n", "params_max_tokens",
                 "max_generation_tokens") if engine == "vllm" else ("ttft", "itl", "e2e", "queue")
        self.h = {n: Hist(n, b[n]) for n in names}
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, finished=0.0, preempt=0.0,
                      retract=0.0, retract_tok=0.0, drafts=0.0, draft_tok=0.0, accepted=0.0,
                      prefill_s=0.0, decode_s=0.0, forward_s=0.0, flops=0.0, rbytes=0.0,
                      wbytes=0.0, steps=0.0, host_cpu=0.0, api_cpu=0.0)
        # per-tick accumulators
        self.acc = None
        self.reset_acc()

    def reset_acc(self):
        self.acc = dict(busy=0.0, smw=0.0, occw=0.0, flops=0.0, bytes=0.0, spin=0.0,
                        tiny=0.0, steps=0.0, host=0.0, other=0.0)

    # -- work arriving
    def arrive(self, t, prompt, out, n=1, heavy=0.0, cached=0, max_tokens=None, tag=""):
        self.waiting.append(dict(arr=t, prompt=int(prompt), out=int(out), n=n, heavy=heavy,
                                 cached=int(cached), done=0.0, gen=0.0, first=None, last=None,
                                 admit=None, max_tokens=max_tokens or int(out * 1.6 + 16),
                                 tag=tag, resumed=False))

    def kv_used(self):
        return sum(r["done"] + r["gen"] * r["n"] for r in self.running)

    def step(self, dt, mods):
        """Advance dt seconds under the modifiers of this moment."""
        rng, t0 = self.rng, self.t
        pool = self.pool
        # admission (FCFS); KV must hold the prompt's first chunk plus a watermark
        used = self.kv_used()
        seqs = sum(r["n"] for r in self.running)
        while self.waiting and seqs + self.waiting[0]["n"] <= self.max_seqs:
            r = self.waiting[0]
            need = min(r["prompt"], self.max_batched) + 32
            if used + need > pool * 0.985:
                break
            self.waiting.pop(0)
            if r["admit"] is None:
                r["admit"] = t0
            # prefix-cached tokens are ready at once (counted, never computed)
            if r["done"] == 0 and r["cached"]:
                r["done"] = float(r["cached"])
            self.running.append(r)
            used += need
            seqs += r["n"]
        dec = [r for r in self.running if r["done"] >= r["prompt"]]
        pre = [r for r in self.running if r["done"] < r["prompt"]]
        d_seq = sum(r["n"] for r in dec)
        ctx = sum((r["prompt"] + r["gen"]) * r["n"] for r in dec)  # KV read per step (tokens)
        heavy = sum(r["heavy"] for r in self.running)
        spec = self.spec
        clk = mods.get("clock", 1.0)
        memf = mods.get("mem_factor", 1.0)
        bw = spec["bw"] * 0.82 * memf
        fl = spec["flops"] * 0.62 * clk
        spec_k = self.spec_k
        alpha = mods.get("alpha", 0.0)
        # GPU time of one decode step (memory bound: weights + KV; plus GEMM compute)
        verify = (spec_k + 1) if spec_k else 1
        t_dec = (self.step_floor / clk + self.weights / bw + ctx * self.kvb / bw
                 + 2 * self.params_rank * d_seq * verify / fl)
        if spec_k:
            t_dec += spec_k * (0.0009 / clk + 0.04 * self.weights / bw)  # draft passes
        t_dec += heavy / clk + mods.get("extra_gpu", 0.0)
        tiny = mods.get("tiny_s", 0.0)  # per-step tiny-kernel busy time
        t_dec += tiny
        pending = sum(r["prompt"] - r["done"] for r in pre)
        budget = max(256, self.max_batched - d_seq) if self.chunked else self.max_batched
        n_need = math.ceil(pending / budget) if pending > 0 else 0
        chunk = pending / n_need if n_need else 0.0
        avg_p = sum(r["prompt"] for r in pre) / max(1, len(pre))
        # GEMMs over the chunk, its KV writes, and attention over the prompt so far
        t_chunk_gpu = chunk * 2 * self.params_rank / fl + chunk * self.kvb / bw \
            + chunk * avg_p * self.m["params"] ** 0.5 * 4.5e-5 / fl * 1e4 / self.tp
        # TP collective per step
        coll = 0.0
        if self.tp > 1:
            coll = 0.00035 * (1 + d_seq / 128)
        slow = mods.get("rank_slow", 1.0)  # the slowest rank's extra time factor
        gshare = mods.get("gpu_share", 1.0)  # fraction of the SMs' time this engine gets
        host_share = mods.get("host_share", 1.0)
        host_c = (self.host_step + 0.000012 * d_seq + mods.get("host_extra", 0.0)) \
            * (1 + 0.6 * bool(heavy))
        gap = 0.0004 if self.async_sched else 0.0018
        jitter_gap = mods.get("launch_gap", 0.0)  # launch thread blocked inside CUDA calls

        def wall_of(tg):
            tg_eff = (tg * slow + coll) / gshare
            host = host_c / host_share
            if self.async_sched:
                return max(tg_eff + gap, host) + jitter_gap, tg_eff
            return tg_eff + gap + host + jitter_gap, tg_eff

        w_dec, g_dec = wall_of(t_dec)
        w_mix, g_mix = wall_of(t_dec + t_chunk_gpu)
        if not self.chunked and pending > 0:  # SGLang extend batch: decode paused
            w_mix, g_mix = wall_of(t_chunk_gpu + self.step_floor)
        n_mix_need = n_need
        if n_mix_need * w_mix >= dt:
            n_mix, n_dec = dt / w_mix, 0.0
        else:
            n_mix = float(n_mix_need)
            n_dec = (dt - n_mix * w_mix) / w_dec if (dec or pre) else 0.0
        if not dec and not pre:
            n_dec = 0.0
        steps = n_mix + n_dec
        # accounting of GPU activity
        a = self.acc
        busy_own = n_mix * g_mix + n_dec * g_dec
        a["busy"] += busy_own
        spin = (steps * (t_dec * (slow - 1))) / gshare if slow > 1 else 0.0
        a["spin"] += spin
        tiny_t = steps * tiny / gshare
        a["tiny"] += tiny_t
        a["steps"] += steps
        work_flops = 2 * self.params_rank * d_seq * verify * steps \
            + 2 * self.params_rank * min(pending, n_mix * chunk)
        a["flops"] += work_flops
        a["bytes"] += steps * (self.weights + ctx * self.kvb) + min(pending, n_mix * chunk) * self.kvb
        a["host"] += steps * host_c
        mix_frac = n_mix / steps if steps else 0.0
        self.c["flops"] += work_flops
        self.c["rbytes"] += steps * (self.weights + ctx * self.kvb)
        self.c["wbytes"] += steps * d_seq * self.kvb + min(pending, n_mix * chunk) * self.kvb
        self.c["forward_s"] += busy_own
        self.c["steps"] += steps
        # prefill progress (FCFS)
        left = n_mix * chunk
        t_mix_end = t0 + n_mix * w_mix
        order = 0.0
        for r in pre:
            if left <= 0:
                break
            need = r["prompt"] - r["done"]
            take = min(need, left)
            r["done"] += take
            left -= take
            order += take
            if r["done"] >= r["prompt"]:
                tf = t0 + min(dt, (order / max(1.0, chunk)) * w_mix)
                self.c["prompt"] += r["prompt"] - (r["gen"] if r["resumed"] else 0)
                self.c["cached"] += r["cached"] if not r["resumed"] else 0
                if r["first"] is None:
                    r["first"] = tf
                    self.h["ttft"].add(tf - r["arr"])
                    self.c["gen"] += r["n"]
                    r["gen"] += 1
                else:
                    self.h["itl"].add(tf - (r["last"] or r["admit"]))
                r["last"] = tf
        # decode progress
        if dec and steps > 0:
            acc_tok = 1.0
            if spec_k:
                acc_tok = 1.0 + sum(alpha ** i for i in range(1, spec_k + 1))
            per = steps * acc_tok
            # ITL observations: one per step per sequence (spec: per verification)
            obs = d_seq * steps
            jit = rng.lognormal(0, 0.07, 24)
            vals, wts = [], []
            if n_mix > 0:
                vals += [w_mix * j for j in jit[:12]]
                wts += [d_seq * n_mix / 12] * 12
            if n_dec > 0:
                vals += [w_dec * j for j in jit[12:]]
                wts += [d_seq * n_dec / 12] * 12
            if self.engine == "vllm" and heavy:
                pass
            self.h["itl"].add(vals, wts)
            if spec_k:
                self.c["drafts"] += obs
                self.c["draft_tok"] += obs * spec_k
                self.c["accepted"] += obs * (acc_tok - 1)
            fin = []
            for r in dec:
                g = min(per, r["out"] - r["gen"])
                r["gen"] += g
                self.c["gen"] += g * r["n"]
                r["last"] = t0 + dt
                if r["gen"] >= r["out"] - 1e-9:
                    fin.append(r)
            for r in fin:
                self.running.remove(r)
                tf = t0 + dt * rng.uniform(0.3, 1.0)
                e2e = tf - r["arr"]
                self.c["finished"] += 1
                self.h["e2e"].add(e2e)
                self.h["queue"].add(r["admit"] - r["arr"])
                if "tpot" in self.h:
                    self.h["tpot"].add((tf - r["first"]) / max(1, r["out"] - 1))
                    self.h["params_n"].add(r["n"])
                    self.h["params_max_tokens"].add(r["max_tokens"])
                    self.h["max_generation_tokens"].add(r["out"])
                self.c["prefill_s"] += r["first"] - r["admit"]
                self.c["decode_s"] += tf - r["first"]
        # KV growth beyond the pool: preempt (vLLM recompute) / retract (SGLang)
        used = self.kv_used()
        while used > pool and len(self.running) > 1:
            victim = self.running.pop()  # the newest
            used -= victim["done"] + victim["gen"] * victim["n"]
            if self.engine == "sglang":
                self.c["retract"] += 1
                self.c["retract_tok"] += victim["prompt"]
            else:
                self.c["preempt"] += 1
            # recompute: prompt plus what it generated must be prefilled again
            victim["prompt"] = int(victim["prompt"] + victim["gen"]) if not victim["resumed"] \
                else victim["prompt"]
            victim["resumed"] = victim["first"] is not None
            victim["done"] = 0.0
            victim["cached"] = 0
            self.waiting.insert(0, victim)
        self.c["host_cpu"] += steps * host_c
        self.c["api_cpu"] += dt * (0.05 + 0.002 * len(self.running)) + 0.004 * self.c["finished"] * 0
        self.t = t0 + dt
        return mix_frac

    def scale_history(self, k):
        for key in self.c:
            self.c[key] *= k
        for h in self.h.values():
            h.scale(k)

    def engine_sample(self, *, url, pids, gpu_indices, time_wall, time_mono, cpu=None,
                      spec_on=False, replica="", kind=None):
        kind = kind or self.engine
        c = self.c
        hs = tuple(h.sample() for h in self.h.values())
        running = float(sum(r["n"] for r in self.running))
        waiting = float(sum(r["n"] for r in self.waiting))
        used = self.kv_used()
        usage = min(1.0, used / self.pool)
        common = dict(kind=kind, url=url, model=self.model,
                      generation_tokens_total=float(round(c["gen"])),
                      prompt_tokens_total=float(round(c["prompt"])),
                      prompt_tokens_cached_total=float(round(c["cached"])),
                      requests_finished_total=float(round(c["finished"])),
                      requests_running=running, requests_waiting=waiting,
                      kv_usage_ratio=round(usage, 6), block_size=self.block,
                      tensor_parallel=self.tp, data_parallel=1,
                      gpu_indices=tuple(gpu_indices), pids=tuple(pids),
                      time_mono_s=time_mono, time_wall_s=time_wall, histograms=hs,
                      flops_total=float(round(c["flops"])),
                      read_bytes_total=float(round(c["rbytes"])),
                      write_bytes_total=float(round(c["wbytes"])), replica=replica)
        if cpu:
            common.update(cpu)
        if kind == "vllm":
            cap = sum(r["n"] for r in self.waiting if r["admit"] is None or r["resumed"])
            kv_blocked = waiting > 0 and usage > 0.9
            return EngineSample(
                num_gpu_blocks=self.num_blocks, kv_pool_tokens=self.pool,
                kv_pool_bytes=self.pool * self.kvb, cache_dtype="auto",
                preemptions_total=float(c["preempt"]),
                waiting_by_reason={"capacity": float(cap if kv_blocked else 0.0),
                                   "deferred": 0.0},
                prefill_seconds_total=round(c["prefill_s"], 4),
                decode_seconds_total=round(c["decode_s"], 4),
                spec_drafts_total=float(round(c["drafts"])) if spec_on else None,
                spec_draft_tokens_total=float(round(c["draft_tok"])) if spec_on else None,
                spec_accepted_tokens_total=float(round(c["accepted"])) if spec_on else None,
                corrupted_requests_total=0.0, **common)
        if kind == "sglang":
            evict = float(round(min(self.pool - used, c["cached"] * 0 + self._evictable())))
            return EngineSample(
                kv_pool_tokens=self.pool, retracted_requests_total=float(c["retract"]),
                retracted_input_tokens_total=float(round(c["retract_tok"])),
                kv_used_tokens=float(round(used)),
                kv_free_tokens=float(round(max(0.0, self.pool - used - evict))),
                kv_evictable_tokens=evict, forward_seconds_total=round(c["forward_s"], 4),
                spec_accept_ratio=self._sg_alpha if spec_on else None,
                spec_accept_length=self._sg_len if spec_on else None, **common)
        raise ValueError(kind)

    _sg_alpha = None
    _sg_len = None
    evictable_frac = 0.0

    def _evictable(self):
        return self.evictable_frac * (self.pool - self.kv_used())


# ------------------------------------------------------------------ host / process tree
class Tree:
    """A pinned process tree: processes, threads with cumulative CPU seconds, context
    switches; what /proc/PID/task/*/stat and status give."""

    def __init__(self, rng, label, procs, threads, cores):
        self.rng, self.label = rng, label
        self.procs = procs  # list of (pid, name)
        self.threads = {tid: [pid, name, cpu0] for tid, pid, name, cpu0 in threads}
        self.cores = tuple(cores)
        self.vol = int(rng.integers(20000, 90000))
        self.invol = int(rng.integers(300, 3000))

    def run(self, dt, rates, vol_rate=400.0, invol_rate=5.0):
        for tid, rate in rates.items():
            self.threads[tid][2] += max(0.0, rate) * dt * (1 + self.rng.normal(0, 0.01))
        self.vol += int(vol_rate * dt * (1 + self.rng.normal(0, 0.05)))
        self.invol += int(max(0.0, invol_rate * dt * (1 + self.rng.normal(0, 0.1))))

    def cpu_s(self):
        return sum(v[2] for v in self.threads.values())

    def busiest(self):
        tid = max(self.threads, key=lambda k: self.threads[k][2])
        return tid, self.threads[tid]

    def pinned(self, psi, runq):
        ths = sorted(self.threads.items(), key=lambda kv: -kv[1][2])[:24]
        return PinnedSample(
            label=self.label, root_pids=(self.procs[0][0],),
            tree_pids=tuple(p for p, _ in self.procs), cpu_s=round(self.cpu_s(), 2),
            ctx_voluntary=self.vol, ctx_involuntary=self.invol,
            threads=tuple(ThreadSample(tid=tid, pid=v[0], name=v[1], cpu_s=round(v[2], 2))
                          for tid, v in ths),
            cores=self.cores, cpu_pressure_some_pct=round(psi, 2), run_queue=int(runq))

    def engine_cpu(self):
        tid, v = self.busiest()
        return dict(cpu_s=round(self.cpu_s(), 2), ctx_involuntary=self.invol,
                    busiest_thread_cpu_s=round(v[2], 2), busiest_thread=f"{tid} {v[1]}")


class HostState:
    """Host CPU %, PSI some avg10 (exponentially smoothed like the kernel's), run queue."""

    def __init__(self, rng, cpus):
        self.rng, self.cpus = rng, cpus
        self.psi = 0.0
        self.ctxt = int(rng.integers(10**8, 5 * 10**9))

    def sample(self, dt, demand_cores, stall_frac):
        """demand_cores: runnable threads on average; stall_frac: share of time some task
        waited for a CPU (what PSI some measures)."""
        self.psi += (stall_frac * 100 - self.psi) * (1 - math.exp(-dt / 10.0))
        cpu_pct = min(100.0, demand_cores / self.cpus * 100)
        runq = max(1, int(round(demand_cores + self.rng.normal(0, 0.7))))
        self.ctxt += int((12000 + 300 * demand_cores) * dt)
        return HostSample(cpu_pct=round(cpu_pct * (1 + self.rng.normal(0, 0.02)), 1),
                          cpu_pressure_some_pct=round(max(0.0, self.psi), 2), run_queue=runq,
                          cpus=self.cpus, ctx_switches_total=self.ctxt), self.psi, runq


def sources(engine_ok=True, engine_reason=None, ebpf=False, engine=True, age=0.0, pin=True):
    s = {"nvml": SourceStatus(ok=True, age_s=0.0, poll_s=0.0051, poll_median_s=0.0052),
         "host": SourceStatus(ok=True, age_s=0.0, poll_s=0.0009, poll_median_s=0.0008),
         "procfs": SourceStatus(ok=True, detail="/proc", age_s=0.0, poll_s=0.0001,
                                poll_median_s=0.0001)}
    if pin:
        s["pin"] = SourceStatus(ok=True, age_s=0.0, poll_s=0.014, poll_median_s=0.014)
    if engine:
        s["engine"] = SourceStatus(ok=engine_ok, reason=engine_reason,
                                   age_s=age if engine_ok else None,
                                   poll_s=0.026 if engine_ok else 2.0, poll_median_s=0.026)
    if ebpf:
        s["ebpf"] = SourceStatus(ok=True, detail="uprobes: libcudart.so.12, libcuda.so.1",
                                 age_s=0.0, poll_s=0.002, poll_median_s=0.002)
    return s


def make_frame(seq, wall, mono, *, gpus, processes, engine, host, pinned, srcs, launch=()):
    return Frame(seq=seq, time_wall_s=round(wall, 6), time_mono_s=round(mono, 6),
                 gpus=tuple(gpus), processes=tuple(processes), engine=engine,
                 launch=tuple(launch), host=host, pinned=pinned, sources=srcs)


def uuid_for(name, i):
    h = hashlib.md5(f"{name}/{i}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
