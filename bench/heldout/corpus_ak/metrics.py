"""Each engine's /metrics page rendered with its real names and bucket layouts, and parsed
with gputop's own parser (gputop.sources.engine_metrics) into the frame's EngineSample."""
from __future__ import annotations
import bisect
import math

from gputop.schema import EngineSample
from gputop.sources import engine_metrics as em

VLLM_B = {
    "ttft": [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0],
    "itl": [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0],
    "e2e": [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0],
}
VLLM_B["queue"] = VLLM_B["e2e"]
VLLM_B["tpot"] = VLLM_B["itl"]
SGL_B = {
    "ttft": [0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0],
    "itl": [0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0],
    "e2e": [0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0],
    "queue": [0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0],
}
TGI_B = {
    "tpot": [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0],
    "e2e": [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0],
    "queue": [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0],
}
VLLM_FAM = {"ttft": "vllm:time_to_first_token_seconds", "itl": "vllm:inter_token_latency_seconds",
            "e2e": "vllm:e2e_request_latency_seconds", "queue": "vllm:request_queue_time_seconds",
            "tpot": "vllm:request_time_per_output_token_seconds"}
SGL_FAM = {"ttft": "sglang:time_to_first_token_seconds", "itl": "sglang:inter_token_latency_seconds",
           "e2e": "sglang:e2e_request_latency_seconds", "queue": "sglang:queue_time_seconds"}
TGI_FAM = {"tpot": "tgi_request_mean_time_per_token_duration", "e2e": "tgi_request_duration",
           "queue": "tgi_request_queue_duration"}


class Hists:
    """Cumulative bucket counts of one engine's histograms (the engine's own layout)."""

    def __init__(self, layout):
        self.layout = layout
        self.b = {k: [0.0] * (len(v) + 1) for k, v in layout.items()}
        self.sum = {k: 0.0 for k in layout}

    def flush(self, obs: dict):
        for name, items in obs.items():
            if name not in self.layout:
                continue
            bounds, arr = self.layout[name], self.b[name]
            for value, count in items:
                arr[bisect.bisect_left(bounds, value)] += count
                self.sum[name] += value * count
        obs.clear()

    def lines(self, fam, labels):
        out = []
        for name, family in fam.items():
            if name not in self.b:
                continue
            out.append(f"# TYPE {family} histogram")
            cum = 0.0
            for bound, c in zip(self.layout[name] + [math.inf], self.b[name]):
                cum += c
                le = "+Inf" if bound == math.inf else repr(float(bound))
                out.append(f'{family}_bucket{{{labels}le="{le}"}} {round(cum)}.0')
            out.append(f"{family}_count{{{labels[:-1]}}} {round(cum)}.0")
            out.append(f"{family}_sum{{{labels[:-1]}}} {self.sum[name]:.6f}")
        return out


def render(kind, model, engines, hists, *, url_model=None, cfg=None, dp_label=True):
    """The page: one block per engine replica (vLLM's engine label, SGLang's dp_rank)."""
    L = []
    if kind == "vllm":
        for i, (e, h) in enumerate(zip(engines, hists)):
            lab = f'engine="{i}",model_name="{model}",'
            lb = lab[:-1]
            c = e.c
            L += [f"# TYPE vllm:num_requests_running gauge", f"vllm:num_requests_running{{{lb}}} {float(len(e.running) + len(e.prefilling))}",
                  f"# TYPE vllm:num_requests_waiting gauge", f"vllm:num_requests_waiting{{{lb}}} {float(len(e.waiting))}",
                  f"# TYPE vllm:kv_cache_usage_perc gauge", f"vllm:kv_cache_usage_perc{{{lb}}} {min(1.0, e.kv_used() / c.pool_tokens):.6f}",
                  f"# TYPE vllm:num_preemptions_total counter", f"vllm:num_preemptions_total{{{lb}}} {float(e.preempt)}",
                  f"# TYPE vllm:prompt_tokens_total counter", f"vllm:prompt_tokens_total{{{lb}}} {round(e.prompt_total)}.0",
                  f"# TYPE vllm:prompt_tokens_cached_total counter", f"vllm:prompt_tokens_cached_total{{{lb}}} {round(e.cached_total)}.0",
                  f"# TYPE vllm:generation_tokens_total counter", f"vllm:generation_tokens_total{{{lb}}} {round(e.gen_total)}.0",
                  f"# TYPE vllm:request_success_total counter",
                  f'vllm:request_success_total{{{lab}finished_reason="stop"}} {round(e.finished * 0.8)}.0',
                  f'vllm:request_success_total{{{lab}finished_reason="length"}} {e.finished - round(e.finished * 0.8)}.0',
                  f"# TYPE vllm:num_requests_waiting_by_reason gauge",
                  f'vllm:num_requests_waiting_by_reason{{{lab}reason="capacity"}} {float(len(e.waiting))}',
                  f'vllm:num_requests_waiting_by_reason{{{lab}reason="deferred"}} 0.0',
                  f"# TYPE vllm:request_prefill_time_seconds histogram",
                  f"vllm:request_prefill_time_seconds_sum{{{lb}}} {e.prefill_s:.4f}",
                  f"# TYPE vllm:request_decode_time_seconds histogram",
                  f"vllm:request_decode_time_seconds_sum{{{lb}}} {e.decode_s:.4f}",
                  f"# TYPE vllm:estimated_flops_per_gpu_total counter", f"vllm:estimated_flops_per_gpu_total{{{lb}}} {e.flops_total:.6e}",
                  f"# TYPE vllm:estimated_read_bytes_per_gpu_total counter", f"vllm:estimated_read_bytes_per_gpu_total{{{lb}}} {e.read_total:.6e}",
                  f"# TYPE vllm:estimated_write_bytes_per_gpu_total counter", f"vllm:estimated_write_bytes_per_gpu_total{{{lb}}} {e.write_total:.6e}",
                  f"# TYPE vllm:cache_config_info gauge",
                  f'vllm:cache_config_info{{block_size="{c.block}",cache_dtype="{"fp8_e4m3" if c.model.kvbytes == 1 else "auto"}",enable_prefix_caching="{c.prefix_cache}",'
                  f'engine="{i}",gpu_memory_utilization="0.9",num_gpu_blocks="{c.pool_tokens // c.block}",kv_cache_size_tokens="{c.pool_tokens}"}} 1.0']
            if c.spec_k:
                L += [f"# TYPE vllm:spec_decode_num_drafts_total counter", f"vllm:spec_decode_num_drafts_total{{{lb}}} {round(e.spec_drafts)}.0",
                      f"# TYPE vllm:spec_decode_num_draft_tokens_total counter", f"vllm:spec_decode_num_draft_tokens_total{{{lb}}} {round(e.spec_draft_tok)}.0",
                      f"# TYPE vllm:spec_decode_num_accepted_tokens_total counter", f"vllm:spec_decode_num_accepted_tokens_total{{{lb}}} {round(e.spec_acc)}.0"]
            L += h.lines(VLLM_FAM, lab)
    elif kind == "sglang":
        for i, (e, h) in enumerate(zip(engines, hists)):
            lab = f'engine_type="unified",model_name="{model}",moe_ep_rank="0",pp_rank="0",tp_rank="0",' + (f'dp_rank="{i}",' if len(engines) > 1 else "")
            lb = lab[:-1]
            c = e.c
            used = min(c.pool_tokens, e.kv_used())
            evict = min(e.evictable, c.pool_tokens - used)
            L += [f"# TYPE sglang:num_running_reqs gauge", f"sglang:num_running_reqs{{{lb}}} {float(len(e.running) + len(e.prefilling))}",
                  f"# TYPE sglang:num_queue_reqs gauge", f"sglang:num_queue_reqs{{{lb}}} {float(len(e.waiting))}",
                  f"# TYPE sglang:token_usage gauge", f"sglang:token_usage{{{lb}}} {used / c.pool_tokens:.4f}",
                  f"# TYPE sglang:max_total_num_tokens gauge", f"sglang:max_total_num_tokens{{{lb}}} {float(c.pool_tokens)}",
                  f"# TYPE sglang:kv_used_tokens gauge", f"sglang:kv_used_tokens{{{lb}}} {float(round(used))}",
                  f"# TYPE sglang:kv_available_tokens gauge", f"sglang:kv_available_tokens{{{lb}}} {float(round(c.pool_tokens - used - evict))}",
                  f"# TYPE sglang:kv_evictable_tokens gauge", f"sglang:kv_evictable_tokens{{{lb}}} {float(round(evict))}",
                  f"# TYPE sglang:realtime_tokens_total counter",
                  f'sglang:realtime_tokens_total{{{lab}mode="prefill_compute"}} {round(e.prompt_total - e.cached_total)}.0',
                  f'sglang:realtime_tokens_total{{{lab}mode="prefill_cache"}} {round(e.cached_total)}.0',
                  f'sglang:realtime_tokens_total{{{lab}mode="decode"}} {round(e.gen_total)}.0',
                  f"# TYPE sglang:cached_tokens_total counter", f"sglang:cached_tokens_total{{{lb}}} {round(e.cached_total)}.0",
                  f"# TYPE sglang:num_requests_total counter", f"sglang:num_requests_total{{{lb}}} {float(e.finished)}",
                  f"# TYPE sglang:num_retracted_requests_total counter", f"sglang:num_retracted_requests_total{{{lb}}} {float(e.preempt)}",
                  f"# TYPE sglang:num_retracted_input_tokens_total counter", f"sglang:num_retracted_input_tokens_total{{{lb}}} {round(e.retract_in_tok)}.0",
                  f"# TYPE sglang:forward_execution_seconds_total counter",
                  f'sglang:forward_execution_seconds_total{{{lab}category="decode"}} {e.forward_s * 0.8:.4f}',
                  f'sglang:forward_execution_seconds_total{{{lab}category="extend"}} {e.forward_s * 0.2:.4f}',
                  f"# TYPE sglang:spec_accept_rate gauge", f"sglang:spec_accept_rate{{{lb}}} {(e.spec_accept if c.spec_k else 0.0):.4f}",
                  f"# TYPE sglang:spec_accept_length gauge", f"sglang:spec_accept_length{{{lb}}} {(e.last_accept_len if c.spec_k else 0.0):.4f}",
                  f"# TYPE sglang:num_grammar_queue_reqs gauge", f"sglang:num_grammar_queue_reqs{{{lb}}} 0.0"]
            L += h.lines(SGL_FAM, lab)
    elif kind == "tgi":
        e, h = engines[0], hists[0]
        L += ["# TYPE tgi_batch_current_size gauge", f"tgi_batch_current_size {len(e.running) + len(e.prefilling)}",
              "# TYPE tgi_queue_size gauge", f"tgi_queue_size {len(e.waiting)}",
              "# TYPE tgi_request_success counter", f"tgi_request_success {e.finished}",
              "# TYPE tgi_request_generated_tokens histogram", f'tgi_request_generated_tokens_bucket{{le="+Inf"}} {e.finished}',
              f"tgi_request_generated_tokens_sum {round(e.gen_total)}", f"tgi_request_generated_tokens_count {e.finished}",
              "# TYPE tgi_request_input_length histogram", f'tgi_request_input_length_bucket{{le="+Inf"}} {e.finished}',
              f"tgi_request_input_length_sum {round(e.prompt_total)}", f"tgi_request_input_length_count {e.finished}",
              "# TYPE tgi_batch_forward_duration histogram",
              f'tgi_batch_forward_duration_sum{{method="prefill"}} {e.forward_s * 0.25:.4f}',
              f'tgi_batch_forward_duration_count{{method="prefill"}} {e.finished}',
              f'tgi_batch_forward_duration_sum{{method="decode"}} {e.forward_s * 0.75:.4f}',
              f'tgi_batch_forward_duration_count{{method="decode"}} {round(e.steps)}']
        L += [x.replace("{}", "").replace("{,", "{") for x in h.lines(TGI_FAM, "")]
    elif kind == "llamacpp":
        e = engines[0]
        L += ["# TYPE llamacpp:prompt_tokens_total counter", f"llamacpp:prompt_tokens_total {round(e.prompt_total - e.cached_total)}",
              "# TYPE llamacpp:prompt_tokens_cached_total counter", f"llamacpp:prompt_tokens_cached_total {round(e.cached_total)}",
              "# TYPE llamacpp:prompt_seconds_total counter", f"llamacpp:prompt_seconds_total {e.prefill_s:.4f}",
              "# TYPE llamacpp:tokens_predicted_total counter", f"llamacpp:tokens_predicted_total {round(e.gen_total)}",
              "# TYPE llamacpp:tokens_predicted_seconds_total counter", f"llamacpp:tokens_predicted_seconds_total {e.decode_s:.4f}",
              "# TYPE llamacpp:n_decode_total counter", f"llamacpp:n_decode_total {round(e.steps)}",
              "# TYPE llamacpp:requests_processing gauge", f"llamacpp:requests_processing {len(e.running) + len(e.prefilling)}",
              "# TYPE llamacpp:requests_deferred gauge", f"llamacpp:requests_deferred {len(e.waiting)}"]
        if e.c.spec_k:
            L += ["# TYPE llamacpp:spec_decode_num_drafts_total counter", f"llamacpp:spec_decode_num_drafts_total {round(e.spec_drafts)}",
                  "# TYPE llamacpp:spec_decode_num_draft_tokens_total counter", f"llamacpp:spec_decode_num_draft_tokens_total {round(e.spec_draft_tok)}",
                  "# TYPE llamacpp:spec_decode_num_accepted_tokens_total counter", f"llamacpp:spec_decode_num_accepted_tokens_total {round(e.spec_acc)}"]
    return "\n".join(L) + "\n"


def render_trainer(tokens, steps, samples=None):
    L = ["# TYPE trainer_tokens_total counter", f"trainer_tokens_total {tokens:.1f}",
         "# TYPE trainer_steps_total counter", f"trainer_steps_total {steps:.1f}"]
    return "\n".join(L) + "\n"


def _sample(p: em.ParsedMetrics, url, **kw) -> EngineSample:
    v = p.values
    cache = p.cache
    return EngineSample(
        kind=p.kind, url=url, model=p.model,
        generation_tokens_total=v.get("generation_tokens_total"), prompt_tokens_total=v.get("prompt_tokens_total"),
        prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"), requests_finished_total=v.get("requests_finished_total"),
        requests_running=v.get("requests_running"), requests_waiting=v.get("requests_waiting"),
        kv_usage_ratio=v.get("kv_usage_ratio"),
        num_gpu_blocks=em.config_int(cache.get("num_gpu_blocks")), block_size=em.config_int(cache.get("block_size")),
        kv_pool_tokens=em.config_int(cache.get("kv_pool_tokens")), cache_dtype=cache.get("cache_dtype", ""),
        histograms=p.histograms, preemptions_total=v.get("preemptions_total"),
        retracted_requests_total=v.get("retracted_requests_total"), work_unit=p.work_unit,
        waiting_by_reason=dict(p.waiting_by_reason), flops_total=v.get("flops_total"),
        read_bytes_total=v.get("read_bytes_total"), write_bytes_total=v.get("write_bytes_total"),
        kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
        kv_evictable_tokens=v.get("kv_evictable_tokens"), retracted_input_tokens_total=v.get("retracted_input_tokens_total"),
        spec_drafts_total=v.get("spec_drafts_total"), spec_draft_tokens_total=v.get("spec_draft_tokens_total"),
        spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"), spec_accept_ratio=v.get("spec_accept_ratio"),
        spec_accept_length=v.get("spec_accept_length"), prefill_seconds_total=v.get("prefill_seconds_total"),
        decode_seconds_total=v.get("decode_seconds_total"), forward_seconds_total=v.get("forward_seconds_total"),
        decode_steps_total=v.get("decode_steps_total"), replica=em.replica_label(p.replica), **kw)


def parse(text, url, **kw) -> EngineSample:
    p = em.recognise(text, url)
    reps = tuple(_sample(r, url) for r in p.replicas)
    return _sample(p, url, replicas=reps, **kw)
