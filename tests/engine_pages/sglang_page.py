"""SGLang /metrics pages written from SGLang's own metric definitions (no SGLang runs here:
it needs an AMX Xeon for CPU or a GPU).

Names, types, HELP texts, label sets and bucket bounds follow
``python/sglang/srt/observability/metrics_collector.py`` (SchedulerMetricsCollector and
TokenizerMetricsCollector) of sgl-project/sglang as read with the fetch tool: scheduler
series carry ``model_name, engine_type, tp_rank, pp_rank, moe_ep_rank`` (+ ``dp_rank`` with
data parallelism), the tokenizer's ``model_name``.  The numbers are one coherent state
(token counts add up: KV used + available + evictable = the pool, prompt = compute +
cache).  ``underscore`` writes the spelling of SGLang's router ``/engine_metrics`` (and
some releases), which turns every ``:`` of a name and its HELP text into ``_`` and adds a
``worker_addr`` label per worker.

Usage: python -m tests.engine_pages.sglang_page [--underscore] [--dp N] [--workers N]
"""

from __future__ import annotations

import argparse

MODEL = "Qwen/Qwen2.5-7B-Instruct"
TTFT = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400]
ITL = [0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
       0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000]
E2E = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200,
       1800, 2400]
QUEUE = [0.0, 0.001, 0.005, 0.010, 0.050, 0.100, 0.200, 0.500, 1, 2, 3, 4, 5, 10, 15, 20, 30,
         40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400,
         1600, 1800, 2000, 2500, 3000]
STAGE = [0.001 * 1.62 ** i for i in range(30)]  # exponential_buckets(0.001, 1.62, 30)


def _labels(**labels) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _fmt(value: float) -> str:
    return repr(float(value))


class Page:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.declared: set[str] = set()

    def family(self, name: str, kind: str, doc: str) -> None:
        if name not in self.declared:
            self.declared.add(name)
            self.lines += [f"# HELP {name} {doc}", f"# TYPE {name} {kind}"]

    def gauge(self, name: str, doc: str, labels: dict, value: float) -> None:
        self.family(name, "gauge", doc)
        self.lines.append(f"{name}{_labels(**labels)} {_fmt(value)}")

    def counter(self, name: str, doc: str, labels: dict, value: float) -> None:
        self.family(name, "counter", doc)
        self.lines.append(f"{name}_total{_labels(**labels)} {_fmt(value)}")

    def histogram(self, name: str, doc: str, labels: dict, bounds: list[float],
                  observations: list[float]) -> None:
        self.family(name, "histogram", doc)
        for bound in bounds:
            count = sum(1 for o in observations if o <= bound)
            self.lines.append(f"{name}_bucket{_labels(**labels, le=_fmt(bound))} {_fmt(count)}")
        self.lines.append(f"{name}_bucket{_labels(**labels, le='+Inf')} {_fmt(len(observations))}")
        self.lines.append(f"{name}_count{_labels(**labels)} {_fmt(len(observations))}")
        self.lines.append(f"{name}_sum{_labels(**labels)} {_fmt(sum(observations))}")


def scheduler(page: Page, labels: dict, scale: float) -> None:
    """One scheduler's series (one data-parallel rank): its queue, its KV pool, its own
    token counters (realtime_tokens_total{mode}) and stage latencies."""
    pool = 80000
    used, evictable = int(20000 * scale), int(12000 * scale)
    page.gauge("sglang:num_running_reqs", "The number of running requests.", labels, 12 * scale)
    page.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", labels,
               3 * scale)
    page.gauge("sglang:num_grammar_queue_reqs",
               "The number of requests in the grammar waiting queue.", labels, 0)
    page.gauge("sglang:gen_throughput", "The generation throughput (token/s).", labels,
               812.5 * scale)
    page.gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", labels, 0.36)
    page.gauge("sglang:token_usage", "The token usage.", labels, used / pool)
    page.gauge("sglang:full_token_usage", "The token usage for full attention layers.", labels,
               used / pool)
    page.gauge("sglang:num_used_tokens", "The number of used tokens.", labels, used)
    page.gauge("sglang:kv_available_tokens", "Number of free token slots in the KV cache pool.",
               labels, pool - used - evictable)
    page.gauge("sglang:kv_evictable_tokens",
               "Number of evictable (radix-cached) token slots in the KV cache pool.", labels,
               evictable)
    page.gauge("sglang:kv_used_tokens", "Number of actively used token slots in the KV cache pool.",
               labels, used)
    page.gauge("sglang:spec_accept_length",
               "Mean acceptance length of speculative decoding (accepted drafts + bonus token per "
               "forward).", labels, 2.4)
    page.gauge("sglang:spec_accept_rate",
               "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
               labels, 0.7)
    page.gauge("sglang:num_retracted_reqs", "The number of retracted requests.", labels, 0)
    page.counter("sglang:num_retracted_requests", "Total number of retracted requests.", labels,
                 7 * scale)
    page.counter("sglang:num_retracted_input_tokens", "Total number of retracted input tokens.",
                 labels, 9100 * scale)
    page.counter("sglang:num_retracted_output_tokens", "Total number of retracted output tokens.",
                 labels, 2300 * scale)
    page.gauge("sglang:num_prefill_bootstrap_queue_reqs",
               "The number of requests in the prefill bootstrap queue.", labels, 0)
    page.gauge("sglang:num_decode_transfer_queue_reqs",
               "The number of requests in the decode transfer queue.", labels, 0)
    page.gauge("sglang:utilization", "The utilization.", labels, 0.92)
    doc = ("Total number of tokens processed (updated on each log interval). "
           "mode: prefill_compute, prefill_cache, decode.")
    for mode, value in (("prefill_compute", 560000), ("prefill_cache", 320000),
                        ("decode", 412000)):
        page.counter("sglang:realtime_tokens", doc, {**labels, "mode": mode}, value * scale)
    doc = ("Total time that GPU is busy executing model forward passes. "
           "Refer to ForwardMode for category labels.")
    for category, value in (("decode", 610.5), ("extend", 95.25)):
        page.counter("sglang:forward_execution_seconds", doc, {**labels, "category": category},
                     value * scale)
    page.histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", labels,
                   QUEUE, [0.004] * 300 + [0.3] * 20 + [2.5] * 4)
    for stage, values in (("request_process", [0.002] * 320 + [0.02] * 4),
                          ("prefill_forward", [0.03] * 300 + [0.4] * 24)):
        page.histogram("sglang:per_stage_req_latency_seconds",
                       "The latency of each stage of requests.", {**labels, "stage": stage},
                       STAGE, values)
    page.gauge("sglang:max_total_num_tokens",
               "Maximum total number of tokens in the KV cache pool.", labels, pool)
    page.gauge("sglang:page_size", "KV cache page size in tokens.", labels, 1)
    page.gauge("sglang:context_len", "Maximum context length.", labels, 32768)


def tokenizer(page: Page, labels: dict, scale: float) -> None:
    """The tokenizer manager's series: counted per request, no data-parallel rank (``scale``:
    the schedulers' scales added up)."""
    page.counter("sglang:prompt_tokens", "Number of prefill tokens processed.", labels,
                 880000 * scale)
    page.counter("sglang:generation_tokens", "Number of generation tokens processed.", labels,
                 412000 * scale)
    doc = "Number of cached prompt tokens by source (device/host/storage)."
    for source, value in (("device", 300000), ("host", 20000)):
        page.counter("sglang:cached_tokens", doc, {**labels, "cache_source": source},
                     value * scale)
    page.counter("sglang:num_requests", "Number of requests processed.", labels, 1296 * scale)
    page.counter("sglang:num_aborted_requests", "Number of requests aborted.", labels, 2)
    page.histogram("sglang:time_to_first_token_seconds",
                   "Histogram of time to first token in seconds.", labels, TTFT,
                   ([0.15] * 1200 + [0.7] * 90 + [3.0] * 6) * int(scale))
    page.histogram("sglang:inter_token_latency_seconds",
                   "Histogram of inter-token latency in seconds.", labels, ITL,
                   ([0.009] * 380000 + [0.03] * 30000 + [0.3] * 2000) * int(scale))
    page.histogram("sglang:e2e_request_latency_seconds",
                   "Histogram of End-to-end request latency in seconds", labels, E2E,
                   ([3.5] * 1200 + [9.0] * 96) * int(scale))


def page_text(dp: int = 1, workers: int = 0, underscore: bool = False) -> str:
    """A server (``dp`` data-parallel ranks) or, with ``workers``, a router's aggregate of
    that many one-rank servers (worker_addr label, ``_`` spelling)."""
    page = Page()
    servers = [{}] if not workers else [{"worker_addr": f"http://127.0.0.1:{30001 + i}"}
                                         for i in range(workers)]
    for extra in servers:
        base = {"engine_type": "unified", "model_name": MODEL, "moe_ep_rank": "0", "pp_rank": "0"}
        if dp == 1:
            scheduler(page, {**base, "tp_rank": "0", **extra}, 1.0)
        else:  # rank r carries r + 1 shares of the work
            for rank in range(dp):
                scheduler(page, {**base, "tp_rank": str(rank), "dp_rank": str(rank), **extra},
                          rank + 1.0)
        tokenizer(page, {"model_name": MODEL, **extra}, dp * (dp + 1) / 2)
    text = "\n".join(page.lines) + "\n"
    if underscore or workers:
        text = text.replace("sglang:", "sglang_").replace("mode: ", "mode_ ")
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--underscore", action="store_true")
    parser.add_argument("--dp", type=int, default=1)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    print(page_text(args.dp, args.workers, args.underscore), end="")


if __name__ == "__main__":
    main()
