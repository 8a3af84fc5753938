"""An engine's /metrics page rendered as text with the engine's own names and bucket
layouts, then read back with gputop's parser, so a frame carries what gputop would read."""
from __future__ import annotations
import bisect
from dataclasses import dataclass, field

from gputop.schema import EngineHistogram, EngineSample
from gputop.sources.engine_metrics import recognise, config_int

# bucket layouts as the real pages have them (data/metrics)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
             10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
            20.0, 40.0, 80.0)
VLLM_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
            240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
SG_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0)
SG_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1,
          0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SG_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
          200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SG_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0,
            30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0)
# TGI (metrics-exporter-prometheus): guessed layouts, exponential like its router's
TGI_DUR = tuple(round(0.001 * 1.5 ** i, 6) for i in range(30))
TGI_TOK = tuple(float(2 ** i) for i in range(14))


def max_tokens_bounds(max_len: int) -> tuple[float, ...]:
    out, m = [], 1
    while m <= max_len:
        for k in (1, 2, 5):
            if k * m <= max_len:
                out.append(float(k * m))
        m *= 10
    return tuple(out)


class Hist:
    __slots__ = ("bounds", "counts", "count", "sum")

    def __init__(self, bounds):
        self.bounds = tuple(bounds)
        self.counts = [0.0] * (len(self.bounds) + 1)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, v: float, w: float = 1.0):
        self.counts[bisect.bisect_left(self.bounds, v)] += w
        self.count += w
        self.sum += v * w

    def lines(self, name: str, labels: str) -> list[str]:
        out = [f"# TYPE {name} histogram"]
        c = 0.0
        sep = "," if labels else ""
        for b, n in zip(self.bounds, self.counts):
            c += n
            out.append(f'{name}_bucket{{{labels}{sep}le="{b}"}} {c}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.count}')
        out.append(f"{name}_count{{{labels}}} {self.count}")
        out.append(f"{name}_sum{{{labels}}} {self.sum}")
        return out


@dataclass
class EngineStats:
    kind: str
    model: str
    max_len: int = 8192
    gen: float = 0.0
    prompt: float = 0.0
    cached: float = 0.0
    finished_stop: float = 0.0
    finished_length: float = 0.0
    running: float = 0.0
    waiting: float = 0.0
    kv_used_tokens: float = 0.0
    pool_tokens: int = 0
    block_size: int = 16
    preemptions: float = 0.0
    retracted: float = 0.0
    retracted_tokens: float = 0.0
    spec: bool = False
    spec_drafts: float = 0.0
    spec_draft_tokens: float = 0.0
    spec_accepted: float = 0.0
    spec_rate_now: float = 0.0
    spec_len_now: float = 0.0
    prefill_s: float = 0.0
    decode_s: float = 0.0
    forward_s: float = 0.0
    decode_steps: float = 0.0
    flops: float = 0.0
    read_bytes: float = 0.0
    write_bytes: float = 0.0
    gen_rate_now: float = 0.0
    cache_dtype: str = "auto"
    gpu_mem_util: float = 0.9
    kv_bytes_per_token: float = 0.0
    lora_running: tuple = ()
    lora_max: int = 0
    hists: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind == "vllm":
            mt = max_tokens_bounds(max(5000, self.max_len))
            self.hists = {"vllm:time_to_first_token_seconds": Hist(VLLM_TTFT),
                          "vllm:inter_token_latency_seconds": Hist(VLLM_ITL),
                          "vllm:request_time_per_output_token_seconds": Hist(VLLM_ITL),
                          "vllm:e2e_request_latency_seconds": Hist(VLLM_REQ),
                          "vllm:request_queue_time_seconds": Hist(VLLM_REQ),
                          "vllm:request_prefill_time_seconds": Hist(VLLM_REQ),
                          "vllm:request_decode_time_seconds": Hist(VLLM_REQ),
                          "vllm:request_params_n": Hist(VLLM_N),
                          "vllm:request_params_max_tokens": Hist(mt),
                          "vllm:request_max_num_generation_tokens": Hist(mt)}
        elif self.kind == "sglang":
            self.hists = {"sglang:time_to_first_token_seconds": Hist(SG_TTFT),
                          "sglang:inter_token_latency_seconds": Hist(SG_ITL),
                          "sglang:e2e_request_latency_seconds": Hist(SG_E2E),
                          "sglang:queue_time_seconds": Hist(SG_QUEUE)}
        elif self.kind == "tgi":
            self.hists = {"tgi_request_mean_time_per_token_duration": Hist(TGI_DUR),
                          "tgi_request_duration": Hist(TGI_DUR),
                          "tgi_request_queue_duration": Hist(TGI_DUR),
                          "tgi_request_generated_tokens": Hist(TGI_TOK),
                          "tgi_request_input_length": Hist(TGI_TOK)}
        else:
            self.hists = {}

    # what the simulation observes, in gputop's words
    def obs(self, what: str, v: float, w: float = 1.0):
        names = {"vllm": {"ttft": "vllm:time_to_first_token_seconds", "itl": "vllm:inter_token_latency_seconds",
                          "tpot": "vllm:request_time_per_output_token_seconds", "e2e": "vllm:e2e_request_latency_seconds",
                          "queue": "vllm:request_queue_time_seconds", "prefill": "vllm:request_prefill_time_seconds",
                          "decode": "vllm:request_decode_time_seconds", "n": "vllm:request_params_n",
                          "max_tokens": "vllm:request_params_max_tokens", "gen_tokens": "vllm:request_max_num_generation_tokens"},
                 "sglang": {"ttft": "sglang:time_to_first_token_seconds", "itl": "sglang:inter_token_latency_seconds",
                            "e2e": "sglang:e2e_request_latency_seconds", "queue": "sglang:queue_time_seconds"},
                 "tgi": {"tpot": "tgi_request_mean_time_per_token_duration", "e2e": "tgi_request_duration",
                         "queue": "tgi_request_queue_duration", "gen_tokens": "tgi_request_generated_tokens",
                         "input": "tgi_request_input_length"}}.get(self.kind, {})
        h = names.get(what)
        if h:
            self.hists[h].observe(v, w)

    def render(self) -> str:
        m = self.model
        if self.kind == "vllm":
            L = f'engine="0",model_name="{m}"'
            blocks = self.pool_tokens // self.block_size
            out = [
                "# TYPE vllm:num_requests_running gauge", f"vllm:num_requests_running{{{L}}} {float(self.running)}",
                "# TYPE vllm:num_requests_waiting gauge", f"vllm:num_requests_waiting{{{L}}} {float(self.waiting)}",
                "# TYPE vllm:num_requests_waiting_by_reason gauge",
                f'vllm:num_requests_waiting_by_reason{{{L},reason="capacity"}} {float(self.waiting)}',
                f'vllm:num_requests_waiting_by_reason{{{L},reason="deferred"}} 0.0',
                "# TYPE vllm:kv_cache_usage_perc gauge",
                f"vllm:kv_cache_usage_perc{{{L}}} {min(1.0, self.kv_used_tokens / max(1, self.pool_tokens))}",
                "# TYPE vllm:prefix_cache_queries_total counter", f"vllm:prefix_cache_queries_total{{{L}}} {self.prompt}",
                "# TYPE vllm:prefix_cache_hits_total counter", f"vllm:prefix_cache_hits_total{{{L}}} {self.cached}",
                "# TYPE vllm:num_preemptions_total counter", f"vllm:num_preemptions_total{{{L}}} {self.preemptions}",
                "# TYPE vllm:prompt_tokens_total counter", f"vllm:prompt_tokens_total{{{L}}} {self.prompt}",
                "# TYPE vllm:prompt_tokens_cached_total counter", f"vllm:prompt_tokens_cached_total{{{L}}} {self.cached}",
                "# TYPE vllm:generation_tokens_total counter", f"vllm:generation_tokens_total{{{L}}} {self.gen}",
                "# TYPE vllm:request_success_total counter",
                f'vllm:request_success_total{{{L},finished_reason="stop"}} {self.finished_stop}',
                f'vllm:request_success_total{{{L},finished_reason="length"}} {self.finished_length}',
                f'vllm:request_success_total{{{L},finished_reason="abort"}} 0.0',
                "# TYPE vllm:estimated_flops_per_gpu_total counter", f"vllm:estimated_flops_per_gpu_total{{{L}}} {self.flops}",
                "# TYPE vllm:estimated_read_bytes_per_gpu_total counter", f"vllm:estimated_read_bytes_per_gpu_total{{{L}}} {self.read_bytes}",
                "# TYPE vllm:estimated_write_bytes_per_gpu_total counter", f"vllm:estimated_write_bytes_per_gpu_total{{{L}}} {self.write_bytes}",
                "# TYPE vllm:cache_config_info gauge",
                f'vllm:cache_config_info{{block_size="{self.block_size}",cache_dtype="{self.cache_dtype}",enable_prefix_caching="True",'
                f'engine="0",gpu_memory_utilization="{self.gpu_mem_util}",kv_cache_memory_bytes="{int(self.pool_tokens * self.kv_bytes_per_token)}",'
                f'kv_cache_size_tokens="{self.pool_tokens}",num_cpu_blocks="None",num_gpu_blocks="{blocks}",sliding_window="None"}} 1.0',
            ]
            if self.spec:
                out += ["# TYPE vllm:spec_decode_num_drafts_total counter", f"vllm:spec_decode_num_drafts_total{{{L}}} {self.spec_drafts}",
                        "# TYPE vllm:spec_decode_num_draft_tokens_total counter", f"vllm:spec_decode_num_draft_tokens_total{{{L}}} {self.spec_draft_tokens}",
                        "# TYPE vllm:spec_decode_num_accepted_tokens_total counter", f"vllm:spec_decode_num_accepted_tokens_total{{{L}}} {self.spec_accepted}"]
            if self.lora_max:
                out += ["# TYPE vllm:lora_requests_info gauge",
                        f'vllm:lora_requests_info{{max_lora="{self.lora_max}",running_lora_adapters="{",".join(self.lora_running)}",waiting_lora_adapters=""}} 1.7e9']
            for name, h in self.hists.items():
                out += h.lines(name, L)
            return "\n".join(out) + "\n"
        if self.kind == "sglang":
            L = f'model_name="{m}"'
            used = self.kv_used_tokens
            out = [
                "# TYPE sglang:num_running_reqs gauge", f"sglang:num_running_reqs{{{L}}} {float(self.running)}",
                "# TYPE sglang:num_queue_reqs gauge", f"sglang:num_queue_reqs{{{L}}} {float(self.waiting)}",
                "# TYPE sglang:num_used_tokens gauge", f"sglang:num_used_tokens{{{L}}} {float(int(used))}",
                "# TYPE sglang:token_usage gauge", f"sglang:token_usage{{{L}}} {round(used / max(1, self.pool_tokens), 4)}",
                "# TYPE sglang:gen_throughput gauge", f"sglang:gen_throughput{{{L}}} {round(self.gen_rate_now, 2)}",
                "# TYPE sglang:max_total_num_tokens gauge", f"sglang:max_total_num_tokens{{{L}}} {float(self.pool_tokens)}",
                "# TYPE sglang:kv_used_tokens gauge", f"sglang:kv_used_tokens{{{L}}} {float(int(used))}",
                "# TYPE sglang:kv_available_tokens gauge", f"sglang:kv_available_tokens{{{L}}} {float(int(max(0, self.pool_tokens - used)))}",
                "# TYPE sglang:kv_evictable_tokens gauge", f"sglang:kv_evictable_tokens{{{L}}} {float(int(min(max(0, self.pool_tokens - used), self.cached * 0.02)))}",
                "# TYPE sglang:cache_hit_rate gauge", f"sglang:cache_hit_rate{{{L}}} {round(self.cached / max(1, self.prompt), 3)}",
                "# TYPE sglang:prompt_tokens_total counter", f"sglang:prompt_tokens_total{{{L}}} {self.prompt}",
                "# TYPE sglang:generation_tokens_total counter", f"sglang:generation_tokens_total{{{L}}} {self.gen}",
                "# TYPE sglang:cached_tokens_total counter", f"sglang:cached_tokens_total{{{L}}} {self.cached}",
                "# TYPE sglang:num_requests_total counter", f"sglang:num_requests_total{{{L}}} {self.finished_stop + self.finished_length}",
                "# TYPE sglang:num_retracted_requests_total counter", f"sglang:num_retracted_requests_total{{{L}}} {self.retracted}",
                "# TYPE sglang:num_retracted_input_tokens_total counter", f"sglang:num_retracted_input_tokens_total{{{L}}} {self.retracted_tokens}",
                "# TYPE sglang:gpu_execution_seconds_total counter", f'sglang:gpu_execution_seconds_total{{{L},category="forward"}} {self.forward_s}',
                "# TYPE sglang:spec_accept_rate gauge", f"sglang:spec_accept_rate{{{L}}} {round(self.spec_rate_now, 4) if self.spec else 0.0}",
                "# TYPE sglang:spec_accept_length gauge", f"sglang:spec_accept_length{{{L}}} {round(self.spec_len_now, 4) if self.spec else 0.0}",
            ]
            for name, h in self.hists.items():
                out += h.lines(name, L)
            return "\n".join(out) + "\n"
        if self.kind == "llamacpp":
            out = ["# TYPE llamacpp:prompt_tokens_total counter", f"llamacpp:prompt_tokens_total {int(self.prompt - self.cached)}",
                   "# TYPE llamacpp:prompt_tokens_cached_total counter", f"llamacpp:prompt_tokens_cached_total {int(self.cached)}",
                   "# TYPE llamacpp:prompt_seconds_total counter", f"llamacpp:prompt_seconds_total {round(self.prefill_s, 6)}",
                   "# TYPE llamacpp:tokens_predicted_total counter", f"llamacpp:tokens_predicted_total {int(self.gen)}",
                   "# TYPE llamacpp:tokens_predicted_seconds_total counter", f"llamacpp:tokens_predicted_seconds_total {round(self.decode_s, 6)}",
                   "# TYPE llamacpp:n_decode_total counter", f"llamacpp:n_decode_total {int(self.decode_steps)}",
                   "# TYPE llamacpp:spec_decode_num_draft_tokens_total counter", f"llamacpp:spec_decode_num_draft_tokens_total {int(self.spec_draft_tokens)}",
                   "# TYPE llamacpp:spec_decode_num_accepted_tokens_total counter", f"llamacpp:spec_decode_num_accepted_tokens_total {int(self.spec_accepted)}",
                   "# TYPE llamacpp:spec_decode_num_drafts_total counter", f"llamacpp:spec_decode_num_drafts_total {int(self.spec_drafts)}",
                   "# TYPE llamacpp:prompt_tokens_seconds gauge", "llamacpp:prompt_tokens_seconds 0",
                   "# TYPE llamacpp:predicted_tokens_seconds gauge", f"llamacpp:predicted_tokens_seconds {round(self.gen_rate_now, 3)}",
                   "# TYPE llamacpp:requests_processing gauge", f"llamacpp:requests_processing {int(self.running)}",
                   "# TYPE llamacpp:requests_deferred gauge", f"llamacpp:requests_deferred {int(self.waiting)}"]
            return "\n".join(out) + "\n"
        if self.kind == "tgi":
            out = ["# TYPE tgi_batch_current_size gauge", f"tgi_batch_current_size {int(self.running)}",
                   "# TYPE tgi_queue_size gauge", f"tgi_queue_size {int(self.waiting)}",
                   "# TYPE tgi_request_count counter", f"tgi_request_count {int(self.finished_stop + self.finished_length + self.running + self.waiting)}",
                   "# TYPE tgi_request_success counter", f"tgi_request_success {int(self.finished_stop + self.finished_length)}",
                   "# TYPE tgi_batch_forward_duration histogram",
                   f'tgi_batch_forward_duration_bucket{{method="prefill",le="+Inf"}} {int(self.decode_steps * 0.1)}',
                   f'tgi_batch_forward_duration_sum{{method="prefill"}} {self.prefill_s}',
                   f'tgi_batch_forward_duration_count{{method="prefill"}} {int(self.decode_steps * 0.1)}',
                   f'tgi_batch_forward_duration_bucket{{method="decode",le="+Inf"}} {int(self.decode_steps)}',
                   f'tgi_batch_forward_duration_sum{{method="decode"}} {self.decode_s}',
                   f'tgi_batch_forward_duration_count{{method="decode"}} {int(self.decode_steps)}']
            for name, h in self.hists.items():
                out += h.lines(name, "")
            return "\n".join(out).replace("{}", "") + "\n"
        if self.kind == "trainer":
            return ("# TYPE trainer_tokens_total counter\n" f"trainer_tokens_total {self.gen}\n"
                    "# TYPE trainer_steps_total counter\n" f"trainer_steps_total {self.finished_stop}\n")
        raise ValueError(self.kind)


def engine_sample(stats: EngineStats, url: str, *, pids, tp=1, wall=0.0, mono=0.0, proc=None,
                  gpu_indices=()) -> EngineSample:
    """Parse the page with gputop's parser and fill the frame's engine part as gputop does."""
    p = recognise(stats.render(), url)
    v = p.values
    cache = p.cache
    nb = config_int(cache.get("num_gpu_blocks"))
    bs = config_int(cache.get("block_size"))
    pool_tokens = config_int(cache.get("kv_pool_tokens"))
    pool_bytes = config_int(cache.get("kv_cache_memory_bytes"))
    if pool_bytes is None and pool_tokens and stats.kv_bytes_per_token and stats.kind == "sglang":
        pool_bytes = int(pool_tokens * stats.kv_bytes_per_token)
    running, waiting, maxl = p.lora
    extra = proc or {}
    return EngineSample(
        kind=p.kind, url=url, model=p.model or ("" if stats.kind == "trainer" else stats.model),
        generation_tokens_total=v.get("generation_tokens_total"), prompt_tokens_total=v.get("prompt_tokens_total"),
        prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"),
        requests_finished_total=v.get("requests_finished_total"), requests_running=v.get("requests_running"),
        requests_waiting=v.get("requests_waiting"), kv_usage_ratio=v.get("kv_usage_ratio"),
        num_gpu_blocks=nb, block_size=bs, kv_pool_bytes=pool_bytes, kv_pool_tokens=pool_tokens,
        cache_dtype=cache.get("cache_dtype", ""), tensor_parallel=tp, data_parallel=1,
        gpu_indices=tuple(gpu_indices), pids=tuple(pids), time_mono_s=mono, time_wall_s=wall,
        histograms=p.histograms, preemptions_total=v.get("preemptions_total"),
        retracted_requests_total=v.get("retracted_requests_total"), work_unit=p.work_unit,
        waiting_by_reason=p.waiting_by_reason, flops_total=v.get("flops_total"),
        read_bytes_total=v.get("read_bytes_total"), write_bytes_total=v.get("write_bytes_total"),
        kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
        kv_evictable_tokens=v.get("kv_evictable_tokens"),
        retracted_input_tokens_total=v.get("retracted_input_tokens_total"),
        spec_drafts_total=v.get("spec_drafts_total"), spec_draft_tokens_total=v.get("spec_draft_tokens_total"),
        spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"),
        spec_accept_ratio=v.get("spec_accept_ratio"), spec_accept_length=v.get("spec_accept_length"),
        prefill_seconds_total=v.get("prefill_seconds_total"), decode_seconds_total=v.get("decode_seconds_total"),
        forward_seconds_total=v.get("forward_seconds_total"), decode_steps_total=v.get("decode_steps_total"),
        lora_running=running, lora_waiting=waiting, lora_max=maxl, **extra)
