"""A request-level serving engine: arrivals, a continuous-batching scheduler over a KV pool in
blocks, chunked prefill, decode steps timed from HBM bytes and FLOPs, launch overhead with and
without CUDA graphs, host time stretched when the scheduler loses its CPU, speculative
decoding, preemption, per-request special parameters (n, logprobs, huge prompts)."""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from corpus_ao.hw import BIN_S


@dataclass
class Model:
    name: str
    params: float  # parameters (all, unsharded)
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int = 128256
    wbytes: float = 2.0  # bytes per weight
    kv_dtype_bytes: float = 2.0

    def kv_bytes_tok(self, tp=1):
        return int(2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * self.kv_dtype_bytes)

    def weight_bytes(self, tp=1):
        return int(self.params * self.wbytes / tp)


@dataclass
class Req:
    rid: int
    arrival: float
    prompt: int
    out: int
    n: int = 1
    logprobs: int = 0
    cached: int = 0
    done_prompt: int = 0
    gen: int = 0
    blocks: int = 0
    first_tok: float | None = None
    last_tok: float | None = None
    sched_time: float | None = None
    prefill_s: float = 0.0
    preempted: int = 0


@dataclass
class EngineCfg:
    kind: str  # vllm, sglang, tgi, llamacpp
    model: Model
    gpus: tuple[int, ...]
    tp: int = 1
    num_blocks: int = 20000
    block_size: int = 16
    max_seqs: int = 256
    max_batched: int = 8192
    chunked: bool = True
    graphs: bool = True
    prefix_cache: bool = True
    shared_prefix: int = 0  # tokens of a system prompt shared by every request
    host_base_s: float = 0.0016
    host_per_seq_s: float = 0.00004
    spec_k: int = 0
    spec_alpha: float = 0.7
    draft_frac: float = 0.08  # draft model's cost per token relative to the target's
    mem_eff: float = 0.82
    flop_eff: float = 0.55
    dequant_overhead: float = 0.0  # extra weight-bytes factor per step (a slow dequant path)
    gpu_mem_util: float = 0.9
    model_label: str = ""
    graph_max: int = 10**9  # largest batch with a captured CUDA graph; above it, eager


class Hist:
    __slots__ = ("bounds", "counts", "n", "sum")

    def __init__(self, bounds):
        self.bounds = list(bounds)
        self.counts = [0] * len(self.bounds)
        self.n = 0
        self.sum = 0.0

    def obs(self, v, k=1):
        i = bisect.bisect_left(self.bounds, v)
        if i < len(self.counts):
            self.counts[i] += k
        self.n += k
        self.sum += v * k

    def cum(self):
        out, c = [], 0
        for x in self.counts:
            c += x
            out.append(c)
        return out


VLLM_LAT = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_TOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
            10000.0, 20000.0, 50000.0, 100000.0)
SG_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
          0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SG_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0)
SG_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
            20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
            600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
            3000.0)
SG_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
          200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
# TGI (metrics-exporter-prometheus buckets as its router sets them; a guess, see README)
TGI_DUR = tuple(round(0.0001 * 1.5 ** i, 7) for i in range(24))
TGI_LEN = tuple(float(2 ** i) for i in range(20))


class Engine:
    """One serving engine process; ``advance(t1)`` runs its steps up to wall time t1."""

    def __init__(self, cfg: EngineCfg, rng, env, workload):
        self.cfg = cfg
        self.rng = rng
        self.env = env  # scenario: gpus, activity, knobs
        self.wl = workload  # callable(rng, t0, t1) -> list of Req
        m = cfg.model
        self.kvb = m.kv_bytes_tok(cfg.tp)
        self.wb = m.weight_bytes(cfg.tp)
        self.t = 0.0
        self.free_blocks = cfg.num_blocks
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.nid = 0
        self.up = True  # serving (False: restarting)
        # counters
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, finished=0.0, preempt=0.0, drafts=0.0,
                      draft_tok=0.0, accepted=0.0, prefill_s=0.0, decode_s=0.0, fwd_decode=0.0,
                      fwd_extend=0.0, steps=0.0, retract_tok=0.0, fwd_prefill_tgi=0.0,
                      prompt_computed=0.0, flops=0.0, read=0.0, write=0.0)
        k = cfg.kind
        if k == "sglang":
            self.h = dict(ttft=Hist(SG_TTFT), itl=Hist(SG_ITL), e2e=Hist(SG_E2E), queue=Hist(SG_QUEUE))
        elif k == "tgi":
            self.h = dict(tpot=Hist(TGI_DUR), e2e=Hist(TGI_DUR), queue=Hist(TGI_DUR),
                          gen=Hist(TGI_LEN), inp=Hist(TGI_LEN))
        else:
            self.h = dict(ttft=Hist(VLLM_TTFT), itl=Hist(VLLM_ITL), e2e=Hist(VLLM_LAT),
                          queue=Hist(VLLM_LAT), tpot=Hist(VLLM_ITL), n=Hist(VLLM_N),
                          maxtok=Hist(VLLM_TOK), maxgen=Hist(VLLM_TOK))
        self.last_accept = cfg.spec_alpha
        self.last_accept_len = 1.0
        self.launch_calls = []  # (api, count, host_s) per step since last read, for eBPF
        self.step_log = []  # (t, dur) recent steps
        self.busy_cpu = 0.0  # main-thread CPU seconds used

    # ---- helpers
    def blocks_for(self, tokens):
        return -(-tokens // self.cfg.block_size)

    def kv_used_tokens(self):
        return (self.cfg.num_blocks - self.free_blocks) * self.cfg.block_size

    def _preempt_one(self):
        victim = self.running.pop()  # the newest
        self.free_blocks += victim.blocks
        victim.blocks = 0
        victim.done_prompt = 0
        victim.preempted += 1
        # recompute: prompt and generated so far become the new prompt
        victim.prompt += victim.gen * victim.n
        victim.out = max(1, victim.out - victim.gen)
        victim.gen = 0
        self.waiting.insert(0, victim)
        self.c["preempt"] += 1
        if self.cfg.kind == "sglang":
            self.c["retract_tok"] += victim.prompt

    def advance(self, t1: float):
        env = self.env
        cfg = self.cfg
        rng = self.rng
        while self.t < t1:
            t = self.t
            if not self.up:
                self.t = t1
                break
            # arrivals up to now
            new = self.wl.take(t)
            for r in new:
                self.waiting.append(r)
                self._observe_params(r)
            if not self.running and not self.waiting:
                nxt = self.wl.peek()
                self.t = min(t1, max(t + 0.002, nxt if nxt is not None else t1))
                continue
            self._step(t)

    def _observe_params(self, r):
        if self.cfg.kind in ("vllm",):
            self.h["n"].obs(r.n)
            self.h["maxtok"].obs(r.out)

    def _step(self, t):
        cfg = self.cfg
        env = self.env
        rng = self.rng
        m = cfg.model
        budget = cfg.max_batched
        dec_seqs = 0
        dec_ctx = 0
        lp_seqs = 0
        lp_k = 0
        spec = cfg.spec_k if env.knob("spec_on", True) else 0
        # decode: every running request that finished its prompt needs its next tokens
        need_tok = spec + 1
        i = 0
        while i < len(self.running):
            r = self.running[i]
            if r.done_prompt >= r.prompt:
                ctx = r.prompt + r.gen
                need = self.blocks_for(ctx + need_tok) * r.n - r.blocks
                while need > self.free_blocks and len(self.running) > i + 1:
                    self._preempt_one()
                if need > self.free_blocks:
                    if len(self.running) == 1:  # alone and cannot grow: abort it (length)
                        self.running.remove(r)
                        self.free_blocks += r.blocks
                        self._finish(r, t)
                        continue
                    self._preempt_one()
                    continue
                if need > 0:
                    self.free_blocks -= need
                    r.blocks += need
                dec_seqs += r.n
                dec_ctx += ctx * r.n
                if r.logprobs:
                    lp_seqs += r.n
                    lp_k += r.n * r.logprobs
                budget -= r.n * need_tok
            i += 1
        # prefill: chunks of prompts in flight first, then the queue
        pre_tok = 0
        pre_attn = 0.0
        pre_done = []
        cands = [r for r in self.running if r.done_prompt < r.prompt]
        admit_ok = True
        for r in cands + list(self.waiting):
            if budget <= 0 or not admit_ok:
                break
            newreq = r not in cands
            if newreq and len(self.running) >= cfg.max_seqs:
                break
            if newreq and r.done_prompt == 0 and r.cached == 0 and cfg.prefix_cache and cfg.shared_prefix:
                r.cached = min(cfg.shared_prefix, r.prompt - 1)
            if newreq and r.done_prompt == 0 and r.cached and not r.preempted:
                r.done_prompt = r.cached
            remaining = r.prompt - r.done_prompt
            chunk = min(remaining, budget) if cfg.chunked else remaining
            if not cfg.chunked and chunk > budget and (dec_seqs > 0 or pre_tok > 0):
                break
            need = self.blocks_for(r.done_prompt + chunk) - r.blocks
            if need > self.free_blocks:
                admit_ok = False
                if newreq:
                    break
                continue
            self.free_blocks -= need
            r.blocks += need
            if newreq:
                self.waiting.remove(r)
                self.running.append(r)
                if r.sched_time is None:
                    r.sched_time = t
            pre_attn += chunk * (r.done_prompt + chunk / 2)
            r.done_prompt += chunk
            pre_tok += chunk
            budget -= chunk
            if r.done_prompt >= r.prompt:
                pre_done.append(r)
        if dec_seqs == 0 and pre_tok == 0:
            # nothing schedulable (pool full of prefills waiting): wait a little
            self.t = t + 0.005
            return
        g0 = env.gpus[cfg.gpus[0]]
        speed, mspeed = g0.speed, g0.mem_speed
        for gi in cfg.gpus[1:]:
            speed = min(speed, env.gpus[gi].speed)
            mspeed = min(mspeed, env.gpus[gi].mem_speed)
        bw_peak = env.spec(cfg.gpus[0]).bw
        bw = bw_peak * env.knob("mem_eff", cfg.mem_eff) * mspeed
        peak = env.spec(cfg.gpus[0]).tflops * cfg.flop_eff * speed
        p_gpu = m.params / cfg.tp
        wbytes = self.wb * (1 + cfg.dequant_overhead + env.knob("dequant_extra", 0.0))
        kvb = self.kvb * env.knob("kv_bytes_factor", 1.0)
        # target forward: decode (and verification of drafts) plus prefill chunks
        dtok = dec_seqs * need_tok
        kv_read = dec_ctx * kvb
        t_mem = (wbytes + kv_read + pre_tok * kvb) / bw
        fl_lin = 2 * p_gpu * (dtok + pre_tok)
        fl_att = 4 * m.layers * (m.hidden / cfg.tp) * (pre_attn + dec_ctx * need_tok)
        t_comp = (fl_lin + fl_att) / peak
        gpu_t = max(t_mem, t_comp) + 0.15 * min(t_mem, t_comp)
        # draft model (k sequential small forwards)
        t_draft = 0.0
        if spec and dec_seqs:
            t_draft = spec * cfg.draft_frac * (self.wb / bw + 0.0004)
        # logprobs over the vocabulary (GPU: log_softmax + top-k on every sequence)
        t_lp_gpu = lp_seqs * m.vocab * 4 * 3 / bw + (0.00025 * lp_seqs if lp_seqs else 0)
        kernels = m.layers * (9 if pre_tok else 7) + 30
        host_speed = env.host_speed()
        launch_host = 0.0
        # CUDA graphs are captured for batches up to graph_max tokens; with a prefill in the
        # batch only attention runs outside the (piecewise) graphs
        graphs = cfg.graphs and (dtok + pre_tok) <= cfg.graph_max and env.knob("graphs", True)
        if graphs:
            launch_calls = 1 + 25 + (2 * m.layers if pre_tok else 0)
        else:
            launch_calls = kernels
        jitter = env.launch_delay(launch_calls)  # seconds lost to preempted launch calls
        per_call = 4.5e-6 if graphs else 11e-6  # eager: PyTorch op dispatch per kernel
        launch_host = (launch_calls * per_call) / host_speed + jitter
        host_t = (cfg.host_base_s + cfg.host_per_seq_s * (dec_seqs + len(pre_done))
                  + lp_k * 9e-5 + lp_seqs * 4e-4) / host_speed
        # the GPU cannot run ahead of launches: eager steps are bounded by the launch rate
        kern_t = gpu_t + t_draft + t_lp_gpu
        if not graphs:
            kern_t = max(kern_t, launch_host)
        gpu_busy = kern_t
        step = host_t * 0.55 + max(kern_t, launch_host) + 0.00015
        # stall: a quota exhausted mid-period parks the whole tree
        step += env.quota_stall(step)
        t_end = t + step
        # activity on each GPU of the engine
        gs = t + host_t * 0.55
        small = not graphs
        if small and kern_t > 0:
            # eager decode: kernels trickle at the launch rate; each is short and narrow
            cover = min(1.0, gpu_t / max(kern_t, 1e-9))
            per_kernel = gpu_t / kernels
            sm_cov = (0.93 if pre_tok > dtok else 0.86) * cover * min(1.0, per_kernel / 12e-6)
        else:
            sm_cov = 0.93 if pre_tok > dtok else 0.86
        ten = min(0.9, 0.75 * t_comp / max(gpu_busy, 1e-9))
        moved = wbytes + kv_read + pre_tok * kvb + lp_seqs * m.vocab * 12
        dr = min(0.96, moved / (max(gpu_busy, 1e-9) * bw_peak) * 1.05)
        if lp_seqs:
            # the logprob work: memory-bound sorting, little tensor work
            share = t_lp_gpu / max(gpu_busy, 1e-9)
            ten *= 1 - share
            sm_cov = sm_cov * (1 - share) + 0.55 * share
        nvb = (dtok + pre_tok) * m.hidden * 2 * 2 * m.layers * (cfg.tp - 1) / cfg.tp if cfg.tp > 1 else 0
        busy_span = gpu_busy
        if small:
            busy_span = kern_t  # spread over the launch-bound time
        for gi in cfg.gpus:
            env.act.add(gi, gs, gs + busy_span, sm_cov, ten, dr, nvlink_bytes=nvb,
                        pcie_bytes=2e4 + 40 * (dtok + pre_tok))
        self.busy_cpu += host_t + launch_host
        
        # results at t_end
        self.c["steps"] += 1
        self.c["flops"] += fl_lin + fl_att
        self.c["read"] += wbytes + kv_read
        self.c["write"] += (dtok + pre_tok) * kvb
        self.c["prompt"] += 0
        if pre_tok:
            self.c["fwd_extend"] += step
        else:
            self.c["fwd_decode"] += step
        for r in pre_done:
            self.c["prompt"] += r.prompt
            self.c["cached"] += r.cached
            r.prefill_s = t_end - (r.sched_time or r.arrival)
            self.c["prefill_s"] += r.prefill_s
            if r.first_tok is None:
                r.first_tok = t_end
                self._ttft(r, t_end)
            r.gen = 1
            r.last_tok = t_end
            self.c["gen"] += r.n
        finished = []
        alpha = env.knob("spec_alpha", cfg.spec_alpha)
        acc_sum = 0
        ver = 0
        for r in self.running:
            if r in pre_done or r.done_prompt < r.prompt or r.gen == 0:
                continue
            ntok = 1
            if spec:
                a = 0
                while a < spec and rng.random() < alpha:
                    a += 1
                self.c["drafts"] += r.n
                self.c["draft_tok"] += spec * r.n
                self.c["accepted"] += a * r.n
                acc_sum += a
                ver += 1
                ntok = 1 + a
            ntok = min(ntok, r.out - r.gen)
            r.gen += ntok
            self.c["gen"] += ntok * r.n
            itl = (t_end - r.last_tok) / max(1, ntok)
            if self.cfg.kind != "tgi":
                self.h["itl"].obs(itl, ntok)
            r.last_tok = t_end
            if r.gen >= r.out:
                finished.append(r)
        if ver:
            self.last_accept = acc_sum / (ver * spec)
            self.last_accept_len = 1 + acc_sum / ver
        for r in finished:
            self.running.remove(r)
            self.free_blocks += r.blocks
            r.blocks = 0
            self._finish(r, t_end)
        self.c["decode_s"] += step * sum(1 for r in self.running if r.gen > 0)
        self.t = t_end

    def _ttft(self, r, now):
        if self.cfg.kind == "tgi":
            return
        self.h["ttft"].obs(now - r.arrival)
        self.h["queue"].obs(max(0.0, (r.sched_time or now) - r.arrival))

    def _finish(self, r, now):
        self.c["finished"] += 1
        e2e = now - r.arrival
        if self.cfg.kind == "tgi":
            self.h["e2e"].obs(e2e)
            self.h["queue"].obs(max(0.0, (r.sched_time or now) - r.arrival))
            self.h["gen"].obs(r.gen * r.n)
            self.h["inp"].obs(r.prompt)
            if r.gen > 1:
                self.h["tpot"].obs((now - (r.first_tok or now)) / max(1, r.gen - 1))
            return
        self.h["e2e"].obs(e2e)
        if self.cfg.kind == "vllm":
            self.h["maxgen"].obs(r.gen)
            if r.gen > 1 and r.first_tok is not None:
                self.h["tpot"].obs((now - r.first_tok) / (r.gen - 1))

    # ---- the /metrics page
    def page(self, label: str) -> str:
        k = self.cfg.kind
        return {"vllm": self._page_vllm, "sglang": self._page_sglang, "tgi": self._page_tgi,
                "llamacpp": self._page_llamacpp}[k](label)

    def _hist_lines(self, fam, h, labels):
        out = [f"# TYPE {fam} histogram"]
        lab = labels + "," if labels else ""
        for b, c in zip(h.bounds, h.cum()):
            out.append(f'{fam}_bucket{{{lab}le="{b}"}} {float(c)}')
        out.append(f'{fam}_bucket{{{lab}le="+Inf"}} {float(h.n)}')
        out.append(f"{fam}_count{{{labels}}} {float(h.n)}")
        out.append(f"{fam}_sum{{{labels}}} {h.sum:.6f}")
        return out

    def _page_vllm(self, model):
        c = self.c
        L = f'engine="0",model_name="{model}"'
        running = sum(1 for r in self.running)
        kv = (self.cfg.num_blocks - self.free_blocks) / self.cfg.num_blocks
        o = []
        g = lambda name, typ, v, lab=L: o.extend([f"# TYPE vllm:{name} {typ}", f"vllm:{name}{{{lab}}} {float(v)}"])
        g("num_requests_running", "gauge", running)
        g("num_requests_waiting", "gauge", len(self.waiting))
        o.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
        o.append(f'vllm:num_requests_waiting_by_reason{{{L},reason="capacity"}} {float(len(self.waiting))}')
        o.append(f'vllm:num_requests_waiting_by_reason{{{L},reason="deferred"}} 0.0')
        g("kv_cache_usage_perc", "gauge", round(kv, 6))
        g("num_preemptions_total", "counter", c["preempt"])
        g("prompt_tokens_total", "counter", c["prompt"])
        g("prompt_tokens_cached_total", "counter", c["cached"])
        g("generation_tokens_total", "counter", c["gen"])
        o.append("# TYPE vllm:request_success_total counter")
        o.append(f'vllm:request_success_total{{{L},finished_reason="stop"}} {float(c["finished"])}')
        o.append(f'vllm:request_success_total{{{L},finished_reason="length"}} 0.0')
        g("estimated_flops_per_gpu_total", "counter", c["flops"])
        g("estimated_read_bytes_per_gpu_total", "counter", c["read"])
        g("estimated_write_bytes_per_gpu_total", "counter", c["write"])
        if self.cfg.spec_k:
            g("spec_decode_num_drafts_total", "counter", c["drafts"])
            g("spec_decode_num_draft_tokens_total", "counter", c["draft_tok"])
            g("spec_decode_num_accepted_tokens_total", "counter", c["accepted"])
        h = self.h
        o += self._hist_lines("vllm:time_to_first_token_seconds", h["ttft"], L)
        o += self._hist_lines("vllm:inter_token_latency_seconds", h["itl"], L)
        o += self._hist_lines("vllm:request_time_per_output_token_seconds", h["tpot"], L)
        o += self._hist_lines("vllm:e2e_request_latency_seconds", h["e2e"], L)
        o += self._hist_lines("vllm:request_queue_time_seconds", h["queue"], L)
        o += self._hist_lines("vllm:request_params_n", h["n"], L)
        o += self._hist_lines("vllm:request_params_max_tokens", h["maxtok"], L)
        o += self._hist_lines("vllm:request_max_num_generation_tokens", h["maxgen"], L)
        for fam, v in (("request_prefill_time_seconds", c["prefill_s"]),
                       ("request_decode_time_seconds", c["decode_s"])):
            o.append(f"# TYPE vllm:{fam} histogram")
            o.append(f'vllm:{fam}_bucket{{{L},le="+Inf"}} {float(c["finished"])}')
            o.append(f"vllm:{fam}_count{{{L}}} {float(c['finished'])}")
            o.append(f"vllm:{fam}_sum{{{L}}} {v:.6f}")
        cfg = self.cfg
        o.append("# TYPE vllm:cache_config_info gauge")
        o.append(f'vllm:cache_config_info{{block_size="{cfg.block_size}",cache_dtype="'
                 f'{"fp8" if cfg.model.kv_dtype_bytes == 1 else "auto"}",enable_prefix_caching="'
                 f'{cfg.prefix_cache}",engine="0",gpu_memory_utilization="{cfg.gpu_mem_util}",'
                 f'kv_cache_size_tokens="{cfg.num_blocks * cfg.block_size}",num_cpu_blocks="None",'
                 f'num_gpu_blocks="{cfg.num_blocks}",sliding_window="None"}} 1.0')
        return "\n".join(o) + "\n"

    def _page_sglang(self, model):
        c = self.c
        L = f'engine_type="unified",model_name="{model}",moe_ep_rank="0",pp_rank="0",tp_rank="0"'
        pool = self.cfg.num_blocks * self.cfg.block_size
        used = sum(r.blocks for r in self.running) * self.cfg.block_size
        evict = min(pool - used, int(pool * 0.08)) if self.cfg.prefix_cache else 0
        o = []
        g = lambda name, typ, v, lab=L: o.extend([f"# TYPE sglang:{name} {typ}", f"sglang:{name}{{{lab}}} {float(v)}"])
        g("num_running_reqs", "gauge", len(self.running))
        g("num_queue_reqs", "gauge", len(self.waiting))
        g("num_used_tokens", "gauge", used)
        g("token_usage", "gauge", round(used / pool, 4))
        g("max_total_num_tokens", "gauge", pool)
        g("kv_used_tokens", "gauge", used)
        g("kv_available_tokens", "gauge", pool - used - evict)
        g("kv_evictable_tokens", "gauge", evict)
        g("num_retracted_requests_total", "counter", c["preempt"])
        g("num_retracted_input_tokens_total", "counter", c["retract_tok"])
        g("spec_accept_rate", "gauge", round(self.last_accept, 4) if self.cfg.spec_k else 0)
        g("spec_accept_length", "gauge", round(self.last_accept_len, 4) if self.cfg.spec_k else 0)
        o.append("# TYPE sglang:realtime_tokens_total counter")
        for mode, v in (("prefill_compute", c["prompt"] - c["cached"]), ("prefill_cache", c["cached"]),
                        ("decode", c["gen"])):
            o.append(f'sglang:realtime_tokens_total{{{L},mode="{mode}"}} {float(v)}')
        o.append("# TYPE sglang:forward_execution_seconds_total counter")
        for cat, v in (("decode", c["fwd_decode"]), ("extend", c["fwd_extend"])):
            o.append(f'sglang:forward_execution_seconds_total{{{L},category="{cat}"}} {v:.4f}')
        M = f'model_name="{model}"'
        g("prompt_tokens_total", "counter", c["prompt"], M)
        g("generation_tokens_total", "counter", c["gen"], M)
        g("cached_tokens_total", "counter", c["cached"], M)
        g("num_requests_total", "counter", c["finished"], M)
        h = self.h
        o += self._hist_lines("sglang:time_to_first_token_seconds", h["ttft"], M)
        o += self._hist_lines("sglang:inter_token_latency_seconds", h["itl"], M)
        o += self._hist_lines("sglang:e2e_request_latency_seconds", h["e2e"], M)
        o += self._hist_lines("sglang:queue_time_seconds", h["queue"], L)
        return "\n".join(o) + "\n"

    def _page_tgi(self, model):
        c = self.c
        o = ["# TYPE tgi_batch_current_size gauge", f"tgi_batch_current_size {len(self.running)}",
             "# TYPE tgi_queue_size gauge", f"tgi_queue_size {len(self.waiting)}",
             "# TYPE tgi_batch_current_max_tokens gauge",
             f"tgi_batch_current_max_tokens {sum(r.prompt + r.out for r in self.running)}",
             "# TYPE tgi_request_count counter", f"tgi_request_count {int(c['finished'] + len(self.running))}",
             "# TYPE tgi_request_success counter", f"tgi_request_success {int(c['finished'])}"]
        h = self.h
        o += self._hist_lines("tgi_request_generated_tokens", h["gen"], "")
        o += self._hist_lines("tgi_request_input_length", h["inp"], "")
        o += self._hist_lines("tgi_request_mean_time_per_token_duration", h["tpot"], "")
        o += self._hist_lines("tgi_request_duration", h["e2e"], "")
        o += self._hist_lines("tgi_request_queue_duration", h["queue"], "")
        o.append("# TYPE tgi_batch_forward_duration histogram")
        for meth, v in (("prefill", c["fwd_extend"]), ("decode", c["fwd_decode"])):
            o.append(f'tgi_batch_forward_duration_sum{{method="{meth}"}} {v:.5f}')
            o.append(f'tgi_batch_forward_duration_count{{method="{meth}"}} {int(c["steps"])}')
        return "\n".join(o).replace("{}", "") + "\n"

    def _page_llamacpp(self, model):
        c = self.c
        o = []
        g = lambda name, typ, v: o.extend([f"# TYPE llamacpp:{name} {typ}", f"llamacpp:{name} {v}"])
        g("prompt_tokens_total", "counter", int(c["prompt"] - c["cached"]))
        g("prompt_tokens_cached_total", "counter", int(c["cached"]))
        g("prompt_seconds_total", "counter", round(c["prefill_s"], 4))
        g("tokens_predicted_total", "counter", int(c["gen"]))
        g("tokens_predicted_seconds_total", "counter", round(c["decode_s"], 4))
        g("n_decode_total", "counter", int(c["steps"]))
        g("spec_decode_num_drafts_total", "counter", int(c["drafts"]))
        g("spec_decode_num_draft_tokens_total", "counter", int(c["draft_tok"]))
        g("spec_decode_num_accepted_tokens_total", "counter", int(c["accepted"]))
        g("requests_processing", "gauge", len(self.running))
        g("requests_deferred", "gauge", len(self.waiting))
        g("n_busy_slots_per_decode", "gauge", round(max(1, len(self.running)), 3))
        return "\n".join(o) + "\n"


class Workload:
    """Arrivals: a rate function (req/s) and a request maker; plus injected requests."""

    def __init__(self, rng, rate, make, injected=(), start=0.0):
        self.rate = rate
        self.make = make
        self.pending = sorted(injected, key=lambda r: r.arrival)
        self.rng = rng
        self.next_t = start
        self.nid = 0
        self._draw(start)

    def _draw(self, t):
        # thinning for a time-varying Poisson process
        lam_max = 1.0
        while True:
            lam = max(1e-6, self.rate(t))
            lam_max = lam * 1.5 + 0.05
            t += self.rng.expovariate(lam_max)
            if self.rng.random() < self.rate(t) / lam_max or t > 1e6:
                self.next_t = t
                return

    def __call__(self, rng, t0, t1):
        return ()

    def peek(self):
        p = self.pending[0].arrival if self.pending else None
        return min(self.next_t, p) if p is not None else self.next_t

    gate = None

    def take(self, t):
        out = []
        while self.next_t <= t:
            if self.gate is not None and not self.gate():
                self._draw(self.next_t)
                continue
            self.nid += 1
            r = self.make(self.rng, self.nid, self.next_t)
            out.append(r)
            self._draw(self.next_t)
        while self.pending and self.pending[0].arrival <= t:
            out.append(self.pending.pop(0))
        return out


def lognorm(rng, median, sigma, lo, hi):
    return int(min(hi, max(lo, median * math.exp(rng.gauss(0, sigma)))))
