"""The metric names each serving engine writes, as checked against its source.

vLLM: ``vllm/v1/metrics/loggers.py`` and ``vllm/v1/spec_decode/metrics.py`` of 0.32.0 (the
release the tests run) and of 0.8-0.10 (V1's first Prometheus loggers).  SGLang:
``python/sglang/srt/observability/metrics_collector.py`` (earlier
``srt/metrics/collector.py``).  llama.cpp: ``tools/server/server-task.cpp``
(``server_task_result_metrics::to_metrics``) of the tree vendored by llama-cpp-python
0.3.36.  TGI: its router's metric names.  In each tuple the first name the page has wins
(names renamed across releases); ``a+b`` adds two; ``name{label=value}`` reads one value
of a family split by a label (``split_by``).  The README's engine table lists what is
read and what is left out, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EngineNames:
    kind: str
    prefix: str
    generation: tuple[str, ...]
    prompt: tuple[str, ...]
    finished: tuple[str, ...]
    running: tuple[str, ...]
    waiting: tuple[str, ...]
    kv: tuple[str, ...]  # KV usage, 0..1
    aliases: tuple[str, ...] = ()  # other spellings of the prefix (SGLang's "sglang_")
    preemptions: tuple[str, ...] = ()
    cached: tuple[str, ...] = ()  # prompt tokens served from the prefix cache
    retracted: tuple[str, ...] = ()
    retracted_tokens: tuple[str, ...] = ()
    kv_used_tokens: tuple[str, ...] = ()
    kv_free_tokens: tuple[str, ...] = ()
    kv_evictable_tokens: tuple[str, ...] = ()
    spec_drafts: tuple[str, ...] = ()
    spec_draft_tokens: tuple[str, ...] = ()
    spec_accepted: tuple[str, ...] = ()
    spec_accept_ratio: tuple[str, ...] = ()  # a gauge 0..1
    spec_accept_length: tuple[str, ...] = ()
    prefill_seconds: tuple[str, ...] = ()  # counters; else the phase histograms' sums
    decode_seconds: tuple[str, ...] = ()
    forward_seconds: tuple[str, ...] = ()
    decode_steps: tuple[str, ...] = ()
    corrupted: tuple[str, ...] = ()
    flops: tuple[str, ...] = ()
    read_bytes: tuple[str, ...] = ()
    write_bytes: tuple[str, ...] = ()
    # llama.cpp's prompt counter leaves out cached tokens; gputop's includes them
    prompt_excludes_cached: bool = False
    waiting_by_reason: str = ""
    queues: dict[str, str] = field(default_factory=dict)  # waiting_by_reason: reason -> gauge
    cache_info: str = ""
    lora_info: str = ""
    pool_tokens: str = ""
    split_by: dict[str, str] = field(default_factory=dict)  # family -> the label splitting it
    # what the generation counter counts, by the name found ("tokens" for an engine)
    work_units: dict[str, str] = field(default_factory=dict)
    # gputop's histogram name -> the engine's family names (first found wins)
    histograms: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def families(self) -> set[str]:
        """Every family the page is cut to (without ``{label=value}`` selections)."""
        names: set[str] = set()
        for value in self.__dict__.values():
            if isinstance(value, tuple):
                names |= {part.split("{")[0] for entry in value for part in entry.split("+")}
        names |= {n for n in (self.waiting_by_reason, self.cache_info, self.lora_info,
                              self.pool_tokens) if n}
        names |= set(self.queues.values())
        for family in self.histograms.values():
            names |= set(family)
        return {n for n in names if n.startswith(self.prefix)}


VLLM = EngineNames(
    "vllm", "vllm:",
    generation=("vllm:generation_tokens_total",), prompt=("vllm:prompt_tokens_total",),
    finished=("vllm:request_success_total",), running=("vllm:num_requests_running",),
    waiting=("vllm:num_requests_waiting",),
    kv=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    preemptions=("vllm:num_preemptions_total",),
    # local + external cache hits (prompt_tokens_by_source{source} splits the same tokens,
    # added with it: not read, it would only lengthen the cut page)
    cached=("vllm:prompt_tokens_cached_total",),
    spec_drafts=("vllm:spec_decode_num_drafts_total",),
    spec_draft_tokens=("vllm:spec_decode_num_draft_tokens_total",),
    spec_accepted=("vllm:spec_decode_num_accepted_tokens_total",),
    # the phase histograms' sums (seconds over all requests) give the split; their buckets
    # (24 lines each) are not read: the cut page stays small
    prefill_seconds=("vllm:request_prefill_time_seconds_sum",),
    decode_seconds=("vllm:request_decode_time_seconds_sum",),
    corrupted=("vllm:corrupted_requests_total",),
    flops=("vllm:estimated_flops_per_gpu_total",),
    read_bytes=("vllm:estimated_read_bytes_per_gpu_total",),
    write_bytes=("vllm:estimated_write_bytes_per_gpu_total",),
    waiting_by_reason="vllm:num_requests_waiting_by_reason",
    cache_info="vllm:cache_config_info", lora_info="vllm:lora_requests_info",
    histograms={
        "ttft": ("vllm:time_to_first_token_seconds",),
        # V1 0.11+ calls it inter-token latency; older releases time_per_output_token
        "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
        "tpot": ("vllm:request_time_per_output_token_seconds",),
        "e2e": ("vllm:e2e_request_latency_seconds",),
        "queue": ("vllm:request_queue_time_seconds",),
        "params_n": ("vllm:request_params_n",),
        "params_max_tokens": ("vllm:request_params_max_tokens",),
        "max_generation_tokens": ("vllm:request_max_num_generation_tokens",),
        # opt-in (--kv-cache-metrics): sampled KV block residency
        "kv_block_lifetime": ("vllm:kv_block_lifetime_seconds",),
        "kv_block_idle": ("vllm:kv_block_idle_before_evict_seconds",),
        "kv_block_reuse_gap": ("vllm:kv_block_reuse_gap_seconds",),
    })

SGLANG = EngineNames(
    "sglang", "sglang:", aliases=("sglang_",),
    # the scheduler's realtime_tokens_total{mode} moves every forward step and carries the
    # dp_rank; the tokenizer's generation/prompt_tokens_total move only when a request
    # finishes (tokenizer_manager) and carry no dp_rank: the per-step counter first
    generation=("sglang:realtime_tokens_total{mode=decode}", "sglang:generation_tokens_total"),
    prompt=("sglang:realtime_tokens_total{mode=prefill_compute}"
            "+sglang:realtime_tokens_total{mode=prefill_cache}",
            "sglang:prompt_tokens_total"),
    finished=("sglang:num_requests_total",), running=("sglang:num_running_reqs",),
    waiting=("sglang:num_queue_reqs",), kv=("sglang:token_usage",),
    cached=("sglang:cached_tokens_total", "sglang:realtime_tokens_total{mode=prefill_cache}"),
    retracted=("sglang:num_retracted_requests_total",),
    retracted_tokens=("sglang:num_retracted_input_tokens_total",),
    kv_used_tokens=("sglang:kv_used_tokens",),
    kv_free_tokens=("sglang:kv_available_tokens",),
    kv_evictable_tokens=("sglang:kv_evictable_tokens",),
    spec_accept_ratio=("sglang:spec_accept_rate",),
    spec_accept_length=("sglang:spec_accept_length",),
    # renamed forward_execution_seconds_total in 2026; summed over its category label
    forward_seconds=("sglang:forward_execution_seconds_total",
                     "sglang:gpu_execution_seconds_total"),
    flops=("sglang:estimated_flops_per_gpu_total",),
    read_bytes=("sglang:estimated_read_bytes_per_gpu_total",),
    write_bytes=("sglang:estimated_write_bytes_per_gpu_total",),
    pool_tokens="sglang:max_total_num_tokens",
    # prefill/decode disaggregation and grammar queues, beside the main waiting queue
    queues={"prefill bootstrap": "sglang:num_prefill_bootstrap_queue_reqs",
            "prefill prealloc": "sglang:num_prefill_prealloc_queue_reqs",
            "prefill inflight": "sglang:num_prefill_inflight_queue_reqs",
            "decode prealloc": "sglang:num_decode_prealloc_queue_reqs",
            "decode transfer": "sglang:num_decode_transfer_queue_reqs",
            "grammar": "sglang:num_grammar_queue_reqs"},
    split_by={"sglang:realtime_tokens": "mode", "sglang:per_stage_req_latency_seconds": "stage"},
    histograms={
        "ttft": ("sglang:time_to_first_token_seconds",),
        "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
        "e2e": ("sglang:e2e_request_latency_seconds",),
        "queue": ("sglang:queue_time_seconds",),
        "stage": ("sglang:per_stage_req_latency_seconds",),  # one per stage: stage:NAME
    })

# TGI's exporter writes counters without the _total suffix
TGI = EngineNames(
    "tgi", "tgi_",
    generation=("tgi_request_generated_tokens_sum",), prompt=("tgi_request_input_length_sum",),
    finished=("tgi_request_success", "tgi_request_success_total"),
    running=("tgi_batch_current_size",), waiting=("tgi_queue_size",), kv=(),
    histograms={
        "tpot": ("tgi_request_mean_time_per_token_duration",),
        "e2e": ("tgi_request_duration",),
        "queue": ("tgi_request_queue_duration",),
    },
    # the seconds its forward passes took, per method: prefill batches beside decode ones
    prefill_seconds=("tgi_batch_forward_duration_sum{method=prefill}",),
    decode_seconds=("tgi_batch_forward_duration_sum{method=decode}",),
    split_by={"tgi_batch_forward_duration_sum": "method"})

LLAMACPP = EngineNames(
    "llamacpp", "llamacpp:",
    generation=("llamacpp:tokens_predicted_total",), prompt=("llamacpp:prompt_tokens_total",),
    prompt_excludes_cached=True,
    finished=(), running=("llamacpp:requests_processing",),
    waiting=("llamacpp:requests_deferred",),
    # both removed from llama.cpp (#13660); still read from builds that have them
    kv=("llamacpp:kv_cache_usage_ratio",), kv_used_tokens=("llamacpp:kv_cache_tokens",),
    cached=("llamacpp:prompt_tokens_cached_total",),
    spec_drafts=("llamacpp:spec_decode_num_drafts_total",),
    spec_draft_tokens=("llamacpp:spec_decode_num_draft_tokens_total",),
    spec_accepted=("llamacpp:spec_decode_num_accepted_tokens_total",),
    prefill_seconds=("llamacpp:prompt_seconds_total",),
    decode_seconds=("llamacpp:tokens_predicted_seconds_total",),
    decode_steps=("llamacpp:n_decode_total",))

# a training job (lab/train_loop.py writes these): progress counted when a step has
# finished on the device; no queue, no KV cache
TRAINER = EngineNames(
    "trainer", "trainer_",
    generation=("trainer_tokens_total", "trainer_samples_total"), prompt=(),
    finished=("trainer_steps_total",), running=(), waiting=(), kv=(),
    work_units={"trainer_tokens_total": "tokens", "trainer_samples_total": "samples"})

ENGINES = (VLLM, SGLANG, TGI, LLAMACPP, TRAINER)


def work_counter(name: str) -> EngineNames:
    """The names of a training job's own progress counter, given by name (``--work-counter
    samples_total``): whatever the job exports, read as a trainer whose work unit the name
    says (tokens, samples, steps, else "units")."""
    family = name.removesuffix("_total")
    unit = next((u for u in ("tokens", "samples", "steps", "images", "examples")
                 if u.rstrip("s") in family), "units")
    return EngineNames("trainer", family, generation=(f"{family}_total", family), prompt=(),
                       finished=(), running=(), waiting=(), kv=(),
                       work_units={f"{family}_total": unit, family: unit})
