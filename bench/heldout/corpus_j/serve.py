"""A continuous-batching serving engine (vLLM V1, SGLang, llama.cpp server) as a step-time model.

Every sub-interval (<= 0.5 s) the engine admits waiting requests while KV blocks and batch
slots allow, then runs steps whose duration comes from the roofline of the batch on the
board: decode reads the weights and every running request's KV once per step (HBM bound),
prefill chunks add 2 x params FLOPs per prompt token plus attention (compute bound), a TP
group adds two all-reduces per layer, and the host adds its non-overlapped scheduling time.
Tokens/s, ITL, TTFT, KV use, preemptions and the GPU's busy/SM/tensor/DRAM fractions all
come from that one step time.  Counters move when the engine moves them:
  vLLM V1    generation/prompt tokens per iteration (prompt at the request's first token),
             e2e / queue / TPOT / params_n / max_tokens histograms at finish, TTFT at first
             token, ITL per generated token, preemptions when the KV pool runs out.
  SGLang     realtime_tokens_total{mode} per step (newer releases); generation/prompt/cached
             tokens_total and num_requests_total only when a request finishes (tokenizer
             manager); retractions when the pool runs out; forward seconds per step.
  llama.cpp  n_decode_total per decode call; prompt tokens/seconds when a slot's prompt is
             evaluated; tokens_predicted(_seconds)_total and the spec counters when a slot
             finishes (server_metrics::on_prediction); no latency histograms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import EngineSample

from .common import (SGL_E2E, SGL_ITL, SGL_QUEUE, SGL_TTFT, VLLM_E2E, VLLM_ITL, VLLM_N,
                     VLLM_TTFT, Hist, poisson, vllm_len_buckets)
from .hw import Activity


@dataclass(frozen=True)
class Model:
    name: str
    params: float  # parameters
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    wbytes: float = 2.0  # bytes per weight (bf16 2, fp8 1, Q4_K_M ~0.56)

    @property
    def kv_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * 2

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.hidden // self.head_dim,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


LLAMA8B = Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 8, 128, 4096)
QWEN7B = Model("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 28, 4, 128, 3584)
QWEN32B = Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 64, 8, 128, 5120)
LLAMA70B = Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 8, 128, 8192)
MISTRAL24B = Model("mistralai/Mistral-Small-24B-Instruct-2501", 23.6e9, 40, 8, 128, 5120)
GGUF8B = Model("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03e9, 32, 8, 128, 4096, 0.57)
GGUF14B = Model("qwen2.5-14b-instruct-q4_k_m.gguf", 14.7e9, 48, 8, 128, 5120, 0.57)
QWEN3_30B = Model("Qwen/Qwen3-30B-A3B", 30.5e9, 48, 4, 128, 2048)  # MoE: ~3.3B active


class Req:
    __slots__ = ("arr", "prompt", "cached", "out", "gen", "pre_left", "t_first", "t_admit",
                 "n", "big", "acc", "t_end", "prefilled", "max_tokens")

    def __init__(self, arr, prompt, cached, out, n=1, big=False, max_tokens=None):
        self.arr, self.prompt, self.cached, self.out = arr, prompt, cached, out
        self.gen, self.acc = 0, 0.0
        self.pre_left = prompt - cached
        self.t_first = self.t_admit = None
        self.n, self.big, self.t_end, self.prefilled = n, big, None, False
        self.max_tokens = max_tokens or out


class ServeJob:
    """One engine on ``gpus`` (a TP group).  ``spec`` keys are documented in catalogue.py."""

    def __init__(self, spec: dict, boards, rng, knobs, t_wall0: float):
        s = self.s = spec
        self.rng, self.knobs, self.t_wall0 = rng, knobs, t_wall0
        self.kind = s.get("engine", "vllm")
        self.gpus = list(s.get("gpus", [0]))
        self.tp = len(self.gpus)
        self.board = boards[self.gpus[0]]
        m: Model = s["model"]
        self.m = m
        self.w_gpu = m.params * m.wbytes / self.tp
        self.kv_gpu = m.kv_per_token / self.tp
        total = self.board.mem_total
        self.mem_gpu = int(total * s.get("mem_frac", 0.9))
        pool_bytes = self.mem_gpu - self.w_gpu - 2.5 * 2**30
        self.block = 16 if self.kind == "vllm" else 1
        self.pool = int(pool_bytes / self.kv_gpu) // 16 * 16
        if self.kind == "llamacpp":
            self.pool = s.get("ctx", 32768)
            self.mem_gpu = int(self.w_gpu + self.pool * self.kv_gpu + 1.1 * 2**30)
        self.pool = int(s.get("pool_tokens", self.pool * s.get("pool_scale", 1.0)))
        self.max_seqs = s.get("max_seqs", 256 if self.kind != "llamacpp" else 4)
        self.budget = s.get("budget", 8192 if self.kind == "vllm" else (8192 if self.kind == "sglang" else 2048))
        self.max_len = s.get("max_len", 32768)
        self.host_base = s.get("host_s", 0.0012 if self.kind == "vllm" else 0.0008)
        self.host_s = self.host_base
        self.jitter_s = 0.0
        self.active_frac = s.get("active_frac", 1.0)  # MoE: share of weights read / computed
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.ctr = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0,
                        retr_tok=0.0, drafts=0.0, draft_tok=0.0, acc_tok=0.0, pre_s=0.0,
                        dec_s=0.0, fwd_s=0.0, steps=0.0, flops=0.0, rd=0.0, wr=0.0,
                        rt_dec=0.0, rt_pre=0.0, rt_cache=0.0)
        self.cpu_s, self.invol, self.busy_thread_s = 50.0 + rng.random() * 30, 9000 + rng.randrange(5000), 20.0
        self._make_hists()
        self.pid0 = s.get("pid0", 4000 + rng.randrange(3000))
        self.started = t_wall0 - s.get("uptime_s", 3600 * (2 + rng.random() * 20))
        self.last_sample: EngineSample | None = None
        self.last_read_t = -1e9
        self.down_since = None
        self.spec_acc_gauge = 0.0
        self.launches = 0.0
        self.host_delays: list[float] = []

    def _make_hists(self):
        if self.kind == "vllm":
            lb = vllm_len_buckets(self.max_len)
            self.h = {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                      "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
                      "queue": Hist("queue", VLLM_E2E), "params_n": Hist("params_n", VLLM_N),
                      "params_max_tokens": Hist("params_max_tokens", lb),
                      "max_generation_tokens": Hist("max_generation_tokens", lb)}
        elif self.kind == "sglang":
            self.h = {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                      "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
        else:
            self.h = {}
        # history before the recording began: the server has been up a while
        if self.h:
            warm = int(self.s.get("rate", 2.0) * 3600)
            for name, hist in self.h.items():
                base = {"ttft": 0.12, "itl": 0.022, "tpot": 0.022, "e2e": 6.0, "queue": 0.01,
                        "params_n": 1.0, "params_max_tokens": 512.0,
                        "max_generation_tokens": 300.0}[name]
                n = warm * (180 if name == "itl" else 1)
                hist.spread(base, n, self.rng, 0.4)
        per_req = {"gen": 180, "prompt": 900, "fin": 1, "cached": 200, "rt_dec": 180,
                   "rt_pre": 700, "rt_cache": 200, "fin_gen": 180, "fin_prompt": 900,
                   "fin_cached": 200, "ll_pred": 180, "ll_pred_s": 4.0, "pre_s": 0.2,
                   "dec_s": 4.0, "steps": 40}
        for key, v in per_req.items():
            self.ctr[key] = self.s.get("rate", 2.0) * 3600 * v

    # ------------------------------------------------------------ traffic

    def _arrivals(self, t: float, sub: float):
        s, k, rng = self.s, self.knobs, self.rng
        rate = s.get("rate", 2.0) * k.get("rate", t)
        if s.get("diurnal"):
            rate *= 1 + s["diurnal"] * math.sin(2 * math.pi * (t / s.get("period_s", 900.0)))
        if s.get("bursty"):
            rate *= 3.0 if (int(t // 7) * 2654435761) % 5 == 0 else 0.5
        pm = s.get("prompt_med", 600) * k.get("prompt", t)
        om = s.get("out_med", 200) * k.get("out", t)
        hit = min(0.95, max(0.0, s.get("prefix_hit", 0.1) * k.get("hit", t)))
        for _ in range(poisson(rng, rate * sub)):
            p = int(min(self.max_len * 0.8, max(16, rng.lognormvariate(math.log(pm), s.get("prompt_sigma", 0.7)))))
            o = int(min(s.get("max_tokens", 2048), max(4, rng.lognormvariate(math.log(om), s.get("out_sigma", 0.6)))))
            cached = int(p * hit * rng.uniform(0.7, 1.0)) // 16 * 16
            self.waiting.append(Req(t + rng.random() * sub, p, cached, o))

    def inject_big(self, t: float, n: int, prompt: int, out: int, max_tokens: int):
        """One oversized request (n sequences, a large max_tokens, logprobs) arriving at t."""
        for _ in range(n):
            self.waiting.insert(0, Req(t, prompt, 0, out, n=n, big=True, max_tokens=max_tokens))

    # ------------------------------------------------------------ one tick

    def tick(self, t: float, dt: float, clocks: dict[int, float], share: dict[int, float]) -> dict:
        k = self.knobs
        if k.on("down", t) > 0:
            return self._down(t, dt)
        if self.down_since is not None:
            self._restart(t)
        sub_n = max(1, int(round(dt / 0.5)))
        sub = dt / sub_n
        acc = {g: [0.0, 0.0, 0.0, 0.0, 0.0] for g in self.gpus}  # busy, sm*, tensor*, dram*, spin
        nvl = 0.0
        for i in range(sub_n):
            nvl += self._sub(t + i * sub, sub, clocks, share, acc)
        acts = {}
        for g, (busy, sm, ten, dram, spin) in acc.items():
            b = busy / dt
            tot = max(busy, 1e-9)
            acts[g] = Activity(busy=b, sm=sm / tot, occ=0.28, tensor=ten / tot, dram=dram / tot,
                               nvlink_mib_s=nvl / dt if self.tp > 1 else 0.0,
                               pcie_mib_s=40.0 + 5 * len(self.running))
        warm = k.on("warmup", t)
        if warm:
            for g in acts:
                a = acts[g]
                acts[g] = Activity(busy=min(1.0, a.busy * 0.4 + 0.5 * self.rng.random()), sm=0.35,
                                   tensor=0.1, dram=0.2)
        cores = self.s.get("cpu_cores", 1.6 + 0.9 * (self.tp - 1)) * (0.6 + 0.4 * min(1.0, len(self.running) / 8))
        cores += k.get("oversized_cpu", t, 0.0)
        return {"act": acts, "cores": cores, "up": True}

    def _tok_per_step(self, t: float) -> tuple[int, float]:
        spec = self.s.get("spec")
        if not spec:
            return 0, 1.0
        a = max(0.02, min(0.98, self.knobs.get("accept", t, spec["accept"])))
        kk = spec["k"]
        return kk, (1 - a ** (kk + 1)) / (1 - a)

    def _sub(self, t, sub, clocks, share, acc) -> float:
        s, k, rng, m, b = self.s, self.knobs, self.rng, self.m, self.board
        self._arrivals(t, sub)
        big = s.get("big")
        if big and not getattr(self, "_big_in", False) and t >= big["t"]:
            self._big_in = True
            self.inject_big(t, big["n"], big.get("prompt", 900), 10**6, big["max_tokens"])
        # clients give up on requests queued too long (the waiting queue is bounded in time)
        limit = s.get("timeout", 90.0)
        if self.waiting and t - self.waiting[-1].arr > limit * 0.5:
            self.waiting = [r for r in self.waiting if t - r.arr < limit or r.big or r.gen]
        # admission: batch slots and KV room
        used = sum(r.prompt + r.gen for r in self.running)
        while self.waiting and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            if used + r.prompt + 64 > self.pool * 0.97:
                break
            self.waiting.pop(0)
            r.t_admit = max(t, r.arr)
            self.running.append(r)
            used += r.prompt
        dec = [r for r in self.running if r.prefilled]
        pre = [r for r in self.running if not r.prefilled]
        B = len(dec)
        C = sum(r.prompt + r.gen for r in dec)
        Q = sum(r.pre_left for r in pre)
        kk, tps = self._tok_per_step(t)
        f_min = min(clocks[g] for g in self.gpus)
        extra = k.get("extra_step", t, 0.0)
        if s.get("big") and not any(r.big for r in self.running):
            extra = 0.0
        jitter = k.get("host_delay", t, 0.0) * (0.5 + rng.random())
        host = self.host_s * k.get("host_mult", t) + jitter
        tiny = k.get("tiny", t, s.get("tiny", 0.0))
        peak = b.bf16_flops * 0.55
        bw = b.hbm_bytes_s * 0.82 * k.get("bw_scale", t) * min(1.0, 0.45 + f_min)
        w_read = self.w_gpu * (self.active_frac if B > 0 else 1.0)
        p_act = m.params * self.active_frac / self.tp

        def step_time(np_tok: float):
            bytes_ = w_read + C * self.kv_gpu
            t_mem = bytes_ / bw
            ctx_pre = (sum(r.prompt for r in pre) / max(1, len(pre))) if pre else 0.0
            flops = 2 * p_act * (B * (kk + 1) + np_tok) + 2 * m.layers * m.hidden * np_tok * ctx_pre / self.tp
            per = {}
            for g in self.gpus:
                sh = k.get(f"shard{g}", t)
                t_comp = flops * sh / (peak * clocks[g])
                per[g] = (max(t_mem, t_comp) + 0.25 * min(t_mem, t_comp), t_mem, t_comp * clocks[g] / max(clocks[g], 1e-3))
            comm = 0.0
            if self.tp > 1:
                link = max(k.get(f"link{g}", t) for g in self.gpus)
                gbs = 150e9 if b.nvlink else 12e9
                comm = m.layers * 2 * (9e-6 + (B * (kk + 1) + np_tok) * m.hidden * 2 / gbs) * link
            t_gpu = max(v[0] for v in per.values()) + comm + extra * 0.8 + tiny * 0.02
            return t_gpu, per, comm, flops, bytes_

        np_tok = min(max(0, self.budget - B * (kk + 1)), Q) if Q else 0.0
        t_gpu, per, comm, flops, bytes_ = step_time(np_tok)
        t_step = t_gpu / max(0.05, min(share[g] for g in self.gpus)) + host + extra * 0.2
        if B == 0 and Q == 0:
            n_steps, t_step = 0.0, 0.0
        else:
            n_steps = sub / t_step
            if Q and n_steps * np_tok > Q:  # prefill drains inside this sub-interval
                np_tok = Q / n_steps
                t_gpu, per, comm, flops, bytes_ = step_time(np_tok)
                t_step = t_gpu / max(0.05, min(share[g] for g in self.gpus)) + host + extra * 0.2
                n_steps = sub / t_step
        busy_s = n_steps * t_gpu
        for g in self.gpus:
            own, t_mem, _ = per[g]
            own_s = n_steps * (own + extra * 0.8 + tiny * 0.02)
            spin_s = max(0.0, busy_s - own_s)
            a = acc[g]
            a[0] += min(sub, busy_s)
            if own > 0:
                dram_f = min(0.95, (bytes_ / (b.hbm_bytes_s)) / own) if B or np_tok else 0
                ten_f = min(0.95, flops * k.get(f"shard{g}", t) / (b.bf16_flops * clocks[g]) / own)
                sm_f = min(0.97, 0.62 + 0.3 * ten_f + 0.1 * dram_f)
                work = n_steps * own
                tiny_s = n_steps * tiny * 0.02
                ex_s = n_steps * extra * 0.8
                a[1] += work * sm_f + tiny_s * 0.04 + ex_s * 0.45 + spin_s * 0.14
                a[2] += work * ten_f
                a[3] += work * dram_f + tiny_s * 0.02 + ex_s * 0.25 + spin_s * 0.05
        self.launches += n_steps * (1 if s.get("graphs", True) else 6 * m.layers) + n_steps * (np_tok > 0) * 4 * m.layers
        self.host_delays.append(host)
        self.jitter_s += n_steps * jitter
        # flops/bytes the engine itself estimates (vLLM --enable-mfu-metrics)
        self.ctr["flops"] += n_steps * flops
        self.ctr["rd"] += n_steps * bytes_
        self.ctr["wr"] += n_steps * (B + np_tok) * self.kv_gpu
        self.ctr["steps"] += n_steps
        self.ctr["fwd_s"] += busy_s
        # prefill progress (FCFS)
        cap = n_steps * np_tok
        cum = 0.0
        t_end = t + sub
        for r in pre:
            if cap <= 0:
                break
            take = min(r.pre_left, cap)
            r.pre_left -= take
            cap -= take
            cum += take
            if r.pre_left <= 0.5:
                r.prefilled = True
                when = t + sub * (cum / max(1.0, n_steps * np_tok))
                first = r.t_first is None
                if first:
                    r.t_first = when
                    self.h.get("ttft") and self.h["ttft"].observe(max(0.005, when - r.arr))
                    self.ctr["prompt"] += r.prompt
                    self.ctr["cached"] += r.cached
                    self.ctr["rt_pre"] += r.prompt - r.cached
                    self.ctr["rt_cache"] += r.cached
                    self.ctr["pre_s"] += when - (r.t_admit or when)
                r.gen = max(r.gen, 1)
        # decode progress
        if B and n_steps:
            itl = t_step / tps
            itl_h = self.h.get("itl")
            gen_total = 0.0
            for r in dec:
                r.acc += n_steps * tps
                step = int(r.acc)
                r.acc -= step
                if r.big:
                    step = min(step, max(0, r.out - r.gen - 1))
                step = min(step, r.out - r.gen)
                r.gen += step
                gen_total += step
            if itl_h:
                itl_h.spread(itl * (1 + 0.15 * (np_tok > 0)), gen_total, rng, 0.15 + 0.3 * (extra > 0))
            self.ctr["gen"] += gen_total
            self.ctr["rt_dec"] += gen_total
            if kk:
                drafts = n_steps * B
                self.ctr["drafts"] += drafts
                self.ctr["draft_tok"] += drafts * kk
                self.ctr["acc_tok"] += drafts * (tps - 1)
                self.spec_acc_gauge = (tps - 1) / kk
        # finished requests
        for r in list(self.running):
            done = r.prefilled and r.gen >= r.out
            if r.big:
                done = k.on("big_done", t) > 0
            if done:
                self.running.remove(r)
                self._finish(r, t_end)
        # KV pool overflow: preempt (vLLM, recompute) or retract (SGLang) the newest
        used = sum(r.prompt + r.gen for r in self.running)
        while used > self.pool and len(self.running) > 1:
            victim = max(self.running, key=lambda r: (not r.big, r.t_admit or 0))
            self.running.remove(victim)
            used -= victim.prompt + victim.gen
            self.ctr["pre"] += 1
            self.ctr["retr"] += 1
            self.ctr["retr_tok"] += victim.prompt
            victim.prefilled = False
            victim.pre_left = victim.prompt + victim.gen
            self.waiting.insert(0, victim)
        self.kv_used = used
        return n_steps * comm * 40e9 / 2**20 if self.tp > 1 else 0.0

    def _finish(self, r: Req, when: float):
        h, c = self.h, self.ctr
        e2e = when - r.arr
        c["fin"] += 1
        c["dec_s"] += when - (r.t_first or when)
        if self.kind == "llamacpp":
            c["ll_pred"] = c.get("ll_pred", 0.0) + r.gen
            c["ll_pred_s"] = c.get("ll_pred_s", 0.0) + (when - (r.t_first or when))
            kk, tps = self._tok_per_step(when)
            if kk:
                steps = r.gen / tps
                c["ll_drafts"] = c.get("ll_drafts", 0.0) + steps
                c["ll_dtok"] = c.get("ll_dtok", 0.0) + steps * kk
                c["ll_acc"] = c.get("ll_acc", 0.0) + steps * (tps - 1)
            return
        c["fin_gen"] = c.get("fin_gen", 0.0) + r.gen
        c["fin_prompt"] = c.get("fin_prompt", 0.0) + r.prompt
        c["fin_cached"] = c.get("fin_cached", 0.0) + r.cached
        if not h:
            return
        h["e2e"].observe(max(0.01, e2e))
        h["queue"].observe(max(0.0, (r.t_admit or r.arr) - r.arr))
        if "tpot" in h and r.gen > 1:
            h["tpot"].observe((when - (r.t_first or when)) / (r.gen - 1))
        if "params_n" in h:
            h["params_n"].observe(r.n)
            h["params_max_tokens"].observe(r.max_tokens)
            h["max_generation_tokens"].observe(r.gen)

    # ------------------------------------------------------------ restart

    def _down(self, t, dt):
        if self.down_since is None:
            self.down_since = t
            self.running.clear()
        self.waiting = self.waiting[-50:]
        self._arrivals(t, dt)  # clients keep retrying; they queue at the load balancer
        return {"act": {g: Activity() for g in self.gpus}, "cores": 1.0, "up": False,
                "loading": min(1.0, (t - self.down_since) / 40.0)}

    def _restart(self, t):
        self.down_since = None
        for key in self.ctr:
            self.ctr[key] = 0.0
        self._make_hists()
        for hist in self.h.values():  # a fresh process: empty histograms
            hist.counts = [0.0] * len(hist.counts)
            hist.count = hist.sum = 0.0
        for key in self.ctr:
            self.ctr[key] = 0.0
        self.started = self.t_wall0 + t
        self.pid0 += 211
        self.cpu_s, self.invol = 30.0, 400

    # ------------------------------------------------------------ the scrape

    def sample(self, t: float, dt: float, mono0: float, cpu_rate: float, invol_rate: float) -> EngineSample:
        c, s = self.ctr, self.s
        self.cpu_s += cpu_rate * dt
        self.invol += int(invol_rate * dt)
        self.busy_thread_s += min(1.0, cpu_rate * 0.55) * dt
        pids = tuple(range(self.pid0, self.pid0 + 3 + self.tp))
        common = dict(url=s.get("url", "http://127.0.0.1:8000/metrics"), model=self.m.name,
                      time_wall_s=self.t_wall0 + t - 0.02, time_mono_s=mono0 + t - 0.02,
                      pids=pids, tensor_parallel=self.tp, data_parallel=1,
                      kv_config=self.m.kv_config() if s.get("config", True) else {},
                      weights_bytes=int(self.w_gpu) if s.get("config", True) else None,
                      weights_source="metadata.total_size of model.safetensors.index.json"
                      if s.get("config", True) else "",
                      note="" if s.get("config", True) else
                      f"model {self.m.name}: no config.json found; pass --model PATH",
                      cpu_s=round(self.cpu_s, 2), ctx_involuntary=self.invol,
                      busiest_thread_cpu_s=round(self.busy_thread_s, 2))
        run = float(sum(1 for _ in self.running))
        wait = float(len(self.waiting))
        hists = tuple(h.sample() for h in self.h.values())
        if self.kind == "vllm":
            spec = {}
            if s.get("spec"):
                spec = dict(spec_drafts_total=c["drafts"], spec_draft_tokens_total=c["draft_tok"],
                            spec_accepted_tokens_total=c["acc_tok"])
            return EngineSample(
                kind="vllm", **common, generation_tokens_total=c["gen"],
                prompt_tokens_total=c["prompt"], prompt_tokens_cached_total=c["cached"],
                requests_finished_total=c["fin"], requests_running=run, requests_waiting=wait,
                kv_usage_ratio=min(1.0, self.kv_used / self.pool) if hasattr(self, "kv_used") else 0.0,
                num_gpu_blocks=self.pool // 16, block_size=16,
                kv_pool_bytes=int(self.pool * self.kv_gpu), kv_pool_tokens=self.pool,
                cache_dtype="auto", histograms=hists, preemptions_total=c["pre"],
                waiting_by_reason={"capacity": float(wait if run >= self.max_seqs or
                                                    getattr(self, "kv_used", 0) > 0.9 * self.pool else 0),
                                   "deferred": 0.0},
                prefill_seconds_total=round(c["pre_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
                busiest_thread="%d VLLM::EngineCore" % (self.pid0 + 2),
                flops_total=c["flops"] if s.get("mfu") else None,
                read_bytes_total=c["rd"] if s.get("mfu") else None,
                write_bytes_total=c["wr"] if s.get("mfu") else None, **spec)
        if self.kind == "sglang":
            rt = s.get("realtime", True)
            spec = {}
            if s.get("spec"):
                kk, tps = self._tok_per_step(t)
                spec = dict(spec_accept_ratio=round(self.spec_acc_gauge, 4),
                            spec_accept_length=round(tps, 3))
            used = getattr(self, "kv_used", 0)
            evict = int(min(self.pool - used, self.pool * 0.25 * s.get("prefix_hit", 0.1) * 4))
            return EngineSample(
                kind="sglang", **common,
                generation_tokens_total=c["rt_dec"] if rt else c.get("fin_gen", 0.0) + c["gen"] * 0,
                prompt_tokens_total=(c["rt_pre"] + c["rt_cache"]) if rt else c.get("fin_prompt", 0.0),
                prompt_tokens_cached_total=c.get("fin_cached", 0.0),
                requests_finished_total=c["fin"], requests_running=run, requests_waiting=wait,
                kv_usage_ratio=min(1.0, used / self.pool), kv_pool_tokens=self.pool,
                kv_used_tokens=float(used), kv_free_tokens=float(self.pool - used - evict),
                kv_evictable_tokens=float(evict), retracted_requests_total=c["retr"],
                retracted_input_tokens_total=c["retr_tok"], histograms=hists,
                forward_seconds_total=round(c["fwd_s"], 3),
                busiest_thread="%d sglang::scheduler" % (self.pid0 + 2), **spec)
        # llama.cpp
        spec = {}
        if s.get("spec"):
            spec = dict(spec_drafts_total=c.get("ll_drafts", 0.0),
                        spec_draft_tokens_total=c.get("ll_dtok", 0.0),
                        spec_accepted_tokens_total=c.get("ll_acc", 0.0))
        common.update(kv_config={}, weights_bytes=int(self.w_gpu), weights_source="GGUF file size",
                      note="", tensor_parallel=1)
        return EngineSample(
            kind="llamacpp", **common, generation_tokens_total=c.get("ll_pred", 0.0),
            prompt_tokens_total=c["rt_pre"] + c["rt_cache"],
            prompt_tokens_cached_total=c["rt_cache"], requests_running=run,
            requests_waiting=wait, kv_pool_tokens=self.pool, cache_dtype="f16",
            prefill_seconds_total=round(c["pre_s"], 4),
            decode_seconds_total=round(c.get("ll_pred_s", 0.0), 4),
            decode_steps_total=float(int(c["steps"])),
            busiest_thread="%d llama-server" % self.pid0, **spec)
