"""The engines as users run them: SGLang in both spellings, vLLM's newer families, llama.cpp's
page, and pages that hold several engines (data-parallel ranks, a router's workers, models).

Every expected number is worked out from a full prometheus_client parse of the page itself
(the reference), never typed in twice."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gputop.model import engine_rates
from gputop.schema import EngineSample
from gputop.sources.engine_metrics import prefilter, recognise, replica_label
from tests.engine_pages import sglang_page, vllm_pages

DATA = Path(__file__).parent / "data" / "metrics"


def samples(text: str):
    return [(s.name, s.labels, s.value) for f in text_string_to_metric_families(text)
            for s in f.samples]


def total(text: str, name: str, **match) -> float:
    """The reference: the page's samples of ``name`` whose labels include ``match``."""
    found = [v for n, labels, v in samples(text)
             if n == name and all(labels.get(k) == str(val) for k, val in match.items())]
    assert found, (name, match)
    return sum(found)


# ---------------------------------------------------------------- SGLang, both spellings

def test_sglang_reads_identically_in_both_spellings():
    colon = sglang_page.page_text()
    underscore = sglang_page.page_text(underscore=True)
    assert "sglang:" not in underscore and "sglang_num_running_reqs" in underscore
    a, b = recognise(colon), recognise(underscore)
    assert a.kind == b.kind == "sglang"
    assert (a.spelling, b.spelling) == ("", "sglang_")
    assert a.values == b.values and a.cache == b.cache and a.histograms == b.histograms
    assert a.waiting_by_reason == b.waiting_by_reason and a.model == b.model
    # the committed pages are the generator's: a change to one shows in the other
    assert (DATA / "sglang-source.txt").read_text() == colon
    assert (DATA / "sglang-source-underscore.txt").read_text() == underscore


def test_sglang_values_against_a_full_parse():
    text = sglang_page.page_text()
    v = recognise(text).values
    assert v["requests_running"] == total(text, "sglang:num_running_reqs")
    assert v["requests_waiting"] == total(text, "sglang:num_queue_reqs")
    assert v["kv_usage_ratio"] == total(text, "sglang:token_usage")
    assert v["kv_used_tokens"] == total(text, "sglang:kv_used_tokens")
    assert v["kv_free_tokens"] == total(text, "sglang:kv_available_tokens")
    assert v["kv_evictable_tokens"] == total(text, "sglang:kv_evictable_tokens")
    pool = total(text, "sglang:max_total_num_tokens")
    assert v["kv_used_tokens"] + v["kv_free_tokens"] + v["kv_evictable_tokens"] == pool
    # cached_tokens_total is split by cache_source; gputop's counter is all of them
    assert v["prompt_tokens_cached_total"] == total(text, "sglang:cached_tokens_total")
    assert v["retracted_requests_total"] == total(text, "sglang:num_retracted_requests_total")
    assert v["retracted_input_tokens_total"] == total(
        text, "sglang:num_retracted_input_tokens_total")
    assert v["forward_seconds_total"] == total(text, "sglang:forward_execution_seconds_total")
    assert v["spec_accept_ratio"] == total(text, "sglang:spec_accept_rate")
    assert v["generation_tokens_total"] == total(text, "sglang:generation_tokens_total")
    parsed = recognise(text)
    stages = sorted(h.name for h in parsed.histograms if h.name.startswith("stage:"))
    assert stages == ["stage:prefill_forward", "stage:request_process"]
    forward = next(h for h in parsed.histograms if h.name == "stage:prefill_forward")
    assert forward.count == total(text, "sglang:per_stage_req_latency_seconds_count",
                                  stage="prefill_forward")
    assert parsed.cache["kv_pool_tokens"] == str(int(pool))
    assert set(parsed.waiting_by_reason) == {"prefill bootstrap", "decode transfer", "grammar"}


def test_sglang_older_names_still_read():
    """gpu_execution_seconds_total before its 2026 rename; no KV token gauges yet."""
    old = (DATA / "sglang.txt").read_text()
    v = recognise(old).values
    assert v["generation_tokens_total"] == 412000.0 and v["kv_used_tokens"] is None
    renamed = sglang_page.page_text().replace("sglang:forward_execution_seconds",
                                              "sglang:gpu_execution_seconds")
    assert recognise(renamed).values["forward_seconds_total"] == \
        total(renamed, "sglang:gpu_execution_seconds_total")


def test_sglang_spec_decoding_off_is_unknown_not_zero():
    text = sglang_page.page_text()
    for name in ("sglang:spec_accept_rate", "sglang:spec_accept_length"):
        text = "\n".join(line.rsplit(" ", 1)[0] + " 0.0" if line.startswith(name + "{") else line
                         for line in text.splitlines()) + "\n"
    v = recognise(text).values
    assert v["spec_accept_ratio"] is None and v["spec_accept_length"] is None


def test_sglang_ranks_and_priorities_count_once():
    """--enable-metrics-for-all-schedulers writes each number once per TP rank; priority
    scheduling adds per-priority series beside the priority="" total."""
    base = sglang_page.page_text()
    extra = []
    for line in base.splitlines():
        if 'tp_rank="0"' in line and not line.startswith("#"):
            extra.append(line.replace('tp_rank="0"', 'tp_rank="1"'))
        if line.startswith("sglang:num_running_reqs{"):
            labels = line[line.index("{") + 1:line.index("}")]
            extra.append(line.replace(labels, labels + ',priority=""'))
            extra.append("sglang:num_running_reqs{" + labels + ',priority="10"} 4.0')
    text = "\n".join([line for line in base.splitlines()
                      if not line.startswith("sglang:num_running_reqs{")] + extra) + "\n"
    assert recognise(text).values == recognise(base).values


def test_sglang_data_parallel_ranks_are_replicas():
    text = sglang_page.page_text(dp=2)
    parsed = recognise(text)
    assert [r.replica.get("dp_rank") for r in parsed.replicas] == ["0", "1"]
    for r in parsed.replicas:
        rank = r.replica["dp_rank"]
        # the tokenizer's counters have no rank: a rank's tokens are its scheduler's
        assert r.values["generation_tokens_total"] == total(
            text, "sglang:realtime_tokens_total", dp_rank=rank, mode="decode")
        assert r.values["prompt_tokens_cached_total"] == total(
            text, "sglang:realtime_tokens_total", dp_rank=rank, mode="prefill_cache")
        assert r.values["requests_running"] == total(text, "sglang:num_running_reqs",
                                                     dp_rank=rank)
        assert r.cache["kv_pool_tokens"] == "80000" and r.model == sglang_page.MODEL
    # the page as a whole: the ranks' per-step counts, the sum of the queues, a per-GPU pool
    assert parsed.values["generation_tokens_total"] == total(
        text, "sglang:realtime_tokens_total", mode="decode")
    assert parsed.values["requests_running"] == total(text, "sglang:num_running_reqs")
    assert parsed.cache["kv_pool_tokens"] == "80000"


def test_sglang_tokens_come_from_the_per_step_counter():
    """SGLang's tokenizer adds a request's tokens to generation_tokens_total when it ends;
    the scheduler's realtime_tokens_total moves every step.  With long requests running the
    first lags: gputop reads the second, and the first only where the second is missing."""
    base = sglang_page.page_text()
    lagging = "\n".join(
        line.rsplit(" ", 1)[0] + " 1000.0" if line.startswith("sglang:generation_tokens_total")
        else line for line in base.splitlines()) + "\n"
    v = recognise(lagging).values
    assert v["generation_tokens_total"] == total(lagging, "sglang:realtime_tokens_total",
                                                 mode="decode") != 1000.0
    assert v["prompt_tokens_total"] == total(lagging, "sglang:realtime_tokens_total",
                                             mode="prefill_compute") + total(
        lagging, "sglang:realtime_tokens_total", mode="prefill_cache")
    older = "\n".join(line for line in lagging.splitlines()
                      if not line.startswith("sglang:realtime_tokens_total")) + "\n"
    assert recognise(older).values["generation_tokens_total"] == 1000.0


def test_sglang_router_workers_are_replicas():
    text = sglang_page.page_text(workers=2)
    assert text == (DATA / "sglang-router-2-workers.txt").read_text()
    parsed = recognise(text)
    assert parsed.kind == "sglang" and parsed.spelling == "sglang_"
    addrs = [r.replica["worker_addr"] for r in parsed.replicas]
    assert addrs == ["http://127.0.0.1:30001", "http://127.0.0.1:30002"]
    one = recognise(sglang_page.page_text(underscore=True))
    for r in parsed.replicas:  # each worker reads as the one server alone
        assert r.values == one.values and r.histograms == one.histograms
    assert parsed.values["generation_tokens_total"] == 2 * one.values["generation_tokens_total"]


# ---------------------------------------------------------------- vLLM

def test_vllm_data_parallel_engines_are_replicas():
    text = vllm_pages.data_parallel(engines=2)
    parsed = recognise(text)
    assert parsed.engines == 2
    assert [replica_label(r.replica) for r in parsed.replicas] == \
        ["model_name=tiny-llama,engine=0", "model_name=tiny-llama,engine=1"]
    for r in parsed.replicas:
        engine = r.replica["engine"]
        for key, name in (("generation_tokens_total", "vllm:generation_tokens_total"),
                          ("prompt_tokens_total", "vllm:prompt_tokens_total"),
                          ("requests_running", "vllm:num_requests_running"),
                          ("kv_usage_ratio", "vllm:kv_cache_usage_perc"),
                          ("prompt_tokens_cached_total", "vllm:prompt_tokens_cached_total"),
                          ("prefill_seconds_total", "vllm:request_prefill_time_seconds_sum"),
                          ("decode_seconds_total", "vllm:request_decode_time_seconds_sum")):
            assert r.values[key] == pytest.approx(total(text, name, engine=engine)), key
        itl = next(h for h in r.histograms if h.name == "itl")
        assert itl.count == total(text, "vllm:inter_token_latency_seconds_count", engine=engine)
        assert r.cache["num_gpu_blocks"] == "8192"
    assert parsed.values["generation_tokens_total"] == total(text, "vllm:generation_tokens_total")
    one = recognise(vllm_pages.real_page())
    assert one.replicas == ()  # one engine: no replicas, the page is the engine


def test_vllm_optional_families():
    text = vllm_pages.with_optional()
    parsed = recognise(text)
    v = parsed.values
    assert v["spec_drafts_total"] == total(text, "vllm:spec_decode_num_drafts_total")
    assert v["spec_draft_tokens_total"] == total(text, "vllm:spec_decode_num_draft_tokens_total")
    assert v["spec_accepted_tokens_total"] == total(
        text, "vllm:spec_decode_num_accepted_tokens_total")
    assert v["corrupted_requests_total"] == 0.0
    # lora_requests_info: the series set most recently (its value is the time) is current
    assert parsed.lora == (("sql-lora",), ("chat-lora",), 4)
    lifetime = next(h for h in parsed.histograms if h.name == "kv_block_lifetime")
    assert lifetime.count == total(text, "vllm:kv_block_lifetime_seconds_count")
    kept, _ = prefilter(text)
    assert "accepted_tokens_per_pos" not in kept  # read as the total, not per position


def test_spec_acceptance_from_two_readings():
    before = recognise(vllm_pages.with_optional(drafts=1000, draft_tokens=3000, accepted=2100))
    after = recognise(vllm_pages.with_optional(drafts=1100, draft_tokens=3300, accepted=2160))
    rates = engine_rates.rates(EngineSample("vllm", **before.values),
                               EngineSample("vllm", **after.values), 2.0)
    assert rates["spec_acceptance_ratio"] == pytest.approx(60 / 300)  # the interval's, not 70%
    assert rates["spec_acceptance_length"] == pytest.approx(1 + 60 / 100)
    assert rates["prefix_cache_hit_ratio"] is None or 0 <= rates["prefix_cache_hit_ratio"] <= 1
    none = engine_rates.rates(EngineSample("vllm", **before.values),
                              EngineSample("vllm", **before.values), 2.0)
    assert none["spec_acceptance_ratio"] is None  # no drafts in the interval: unknown


def test_prefill_share_and_cache_hits_from_two_readings():
    a = EngineSample("vllm", prompt_tokens_total=1000.0, prompt_tokens_cached_total=100.0,
                     prefill_seconds_total=10.0, decode_seconds_total=90.0)
    b = EngineSample("vllm", prompt_tokens_total=2000.0, prompt_tokens_cached_total=850.0,
                     prefill_seconds_total=16.0, decode_seconds_total=100.0)
    rates = engine_rates.rates(a, b, 5.0)
    assert rates["cached_prompt_tokens_per_s"] == 150.0
    assert rates["prefix_cache_hit_ratio"] == pytest.approx(750 / 1000)
    assert rates["prefill_time_ratio"] == pytest.approx(6 / 16)


def test_forward_busy_of_data_parallel_ranks_is_their_mean():
    """A page's forward seconds are its ranks' sum: two ranks each busy 6 s of 10 read 60%,
    not a sum clamped to 100%; each rank on its own reads its own 60%."""
    def page(seconds_each: float) -> EngineSample:
        ranks = tuple(EngineSample("sglang", forward_seconds_total=seconds_each,
                                   replica=f"dp_rank={r}") for r in range(2))
        return EngineSample("sglang", forward_seconds_total=2 * seconds_each, replicas=ranks)
    before, after = page(0.0), page(6.0)
    assert engine_rates.rates(before, after, 10.0)["forward_busy_ratio"] == pytest.approx(0.6)
    for b, a in zip(before.replicas, after.replicas, strict=True):
        assert engine_rates.rates(b, a, 10.0)["forward_busy_ratio"] == pytest.approx(0.6)


# ---------------------------------------------------------------- llama.cpp

def test_llamacpp_page_of_the_real_server():
    """A page taken from the real llama-server built here (scripts/llamacpp-env.sh)."""
    text = (DATA / "llamacpp-0.3.36.txt").read_text()
    parsed = recognise(text)
    v = parsed.values
    assert parsed.kind == "llamacpp"
    # its prompt counter leaves cached tokens out; gputop's includes them, as vLLM's does
    assert v["prompt_tokens_total"] == total(text, "llamacpp:prompt_tokens_total") + \
        total(text, "llamacpp:prompt_tokens_cached_total")
    assert v["prompt_tokens_cached_total"] == total(text, "llamacpp:prompt_tokens_cached_total")
    assert v["generation_tokens_total"] == total(text, "llamacpp:tokens_predicted_total")
    assert v["prefill_seconds_total"] == total(text, "llamacpp:prompt_seconds_total")
    assert v["decode_seconds_total"] == total(text, "llamacpp:tokens_predicted_seconds_total")
    assert v["decode_steps_total"] == total(text, "llamacpp:n_decode_total")
    assert v["spec_draft_tokens_total"] == total(
        text, "llamacpp:spec_decode_num_draft_tokens_total")
    assert v["requests_running"] == total(text, "llamacpp:requests_processing")
    assert v["requests_waiting"] == total(text, "llamacpp:requests_deferred")
    assert v["kv_usage_ratio"] is None and v["kv_used_tokens"] is None  # removed upstream
    old = recognise((DATA / "llamacpp.txt").read_text()).values  # a build that had them
    assert old["kv_usage_ratio"] == 0.0625 and old["kv_used_tokens"] == 512


def test_replica_labels_are_capped():
    lines = ["# TYPE vllm:num_requests_running gauge"]
    lines += [f'vllm:num_requests_running{{engine="{i}",model_name="m"}} 1.0' for i in range(200)]
    parsed = recognise("\n".join(lines) + "\n")
    assert len(parsed.replicas) == 64
    assert parsed.values["requests_running"] == 200.0  # the page's sum keeps every engine
    assert all(math.isfinite(r.values["requests_running"]) for r in parsed.replicas)


def test_the_vram_split_says_why_llamacpp_has_no_pool():
    from gputop.model.derive import vram_split
    from gputop.schema import GpuSample, ProcSample

    gpu = GpuSample(0, "H100", mem_total_bytes=80 << 30, mem_used_bytes=10 << 30)
    engine = EngineSample("llamacpp", pids=(42,), note="llama-server's context size is the "
                          "model's (no --ctx-size)")
    split = vram_split(gpu, (ProcSample(42, 0, mem_bytes=9 << 30),), engine)
    assert split.kv_pool_bytes is None
    assert any("#13660" in line and "--ctx-size" in line for line in split.provenance)
    assert any("reports no KV usage" in line for line in split.provenance)


@pytest.mark.parametrize("argv, expected", [
    (["/opt/bin/llama-server", "-m", "x.gguf", "-c", "8192"], (8192, "fp16", "")),
    (["llama-server", "--ctx-size=4096", "-ctk", "bf16", "-ctv", "bf16"], (4096, "bf16", "")),
    (["llama-server", "-m", "x.gguf"], (None, "", "no --ctx-size")),
    (["llama-server", "-c", "0"], (None, "", "no --ctx-size")),
    (["llama-server", "-c", "8192", "-ctk", "q8_0"], (None, "", "q8_0")),
    (["python", "-m", "llama_cpp.server", "-c", "8192"], (None, "", "")),  # not llama-server
])
def test_llamacpp_pool_from_the_command_line(argv, expected):
    from gputop.sources.engine_replicas import llamacpp_pool

    tokens, dtype, why = llamacpp_pool({1: argv})
    assert (tokens, dtype) == expected[:2]
    assert expected[2] in why and (not expected[2]) == (not why)
