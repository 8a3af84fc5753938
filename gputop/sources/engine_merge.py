"""Several engine readings as one service: repeated ``--engine`` endpoints, or every engine
discovery finds on this machine.  Counters and queues add up, KV usage averages, the process
trees join, and each endpoint stays a replica of its own (judged apart on its own GPUs);
what differs is left unknown."""

from __future__ import annotations

import dataclasses
from typing import Any

from gputop.schema import EngineHistogram, EngineSample

SUMMED = ("generation_tokens_total", "prompt_tokens_total", "requests_finished_total",
          "requests_running", "requests_waiting", "preemptions_total", "cpu_s",
          "ctx_involuntary", "prompt_tokens_cached_total", "retracted_requests_total",
          "retracted_input_tokens_total", "spec_drafts_total", "spec_draft_tokens_total",
          "spec_accepted_tokens_total", "prefill_seconds_total", "decode_seconds_total",
          "forward_seconds_total", "decode_steps_total", "corrupted_requests_total",
          "kv_used_tokens", "kv_free_tokens", "kv_evictable_tokens")
AVERAGED = ("kv_usage_ratio", "flops_total", "read_bytes_total", "write_bytes_total",
            "spec_accept_ratio", "spec_accept_length")  # per GPU


def _summed_histograms(samples: list[EngineSample]) -> tuple[EngineHistogram, ...]:
    """Replicas' histograms added bucket by bucket (only where every replica has the
    histogram with the same bounds: otherwise the sum would mean nothing)."""
    out = []
    for hist in samples[0].histograms:
        found = [next((h for h in s.histograms if h.name == hist.name
                       and h.upper_bounds == hist.upper_bounds), None) for s in samples]
        same = [h for h in found if h is not None]
        if len(same) < len(found):
            continue
        out.append(EngineHistogram(
            hist.name, hist.upper_bounds,
            tuple(sum(values) for values in zip(*(h.cumulative for h in same))),
            sum(h.count for h in same), sum(h.sum for h in same)))
    return tuple(out)


def merge_engines(samples: list[EngineSample]) -> EngineSample | None:
    """Several endpoints (repeated --engine) read as one service: counters and queues add
    up, KV usage averages, the process trees join; what differs is left unknown."""
    if len(samples) <= 1:
        return samples[0] if samples else None
    first = samples[0]

    def total(name: str) -> float | None:
        values: list[float | None] = [getattr(s, name) for s in samples]
        known = [v for v in values if v is not None]
        return None if len(known) < len(values) else sum(known)

    def same(name: str) -> Any:
        values = {getattr(s, name) for s in samples}
        return values.pop() if len(values) == 1 else None

    def mean(name: str) -> float | None:
        return _mean([getattr(s, name) for s in samples])

    reasons: dict[str, float] = {}
    for sample in samples:
        for reason, count in sample.waiting_by_reason.items():
            reasons[reason] = reasons.get(reason, 0.0) + count
    summed: dict[str, Any] = {name: total(name) for name in SUMMED}
    averaged: dict[str, Any] = {name: mean(name) for name in AVERAGED}
    return dataclasses.replace(
        first, **summed, **averaged,
        histograms=_summed_histograms(samples), waiting_by_reason=reasons,
        busiest_thread_cpu_s=None, busiest_thread="",
        kind=same("kind") or "mixed", url=" + ".join(s.url for s in samples),
        model=same("model") or ", ".join(sorted({s.model for s in samples})),
        pids=tuple(sorted({p for s in samples for p in s.pids})),
        time_mono_s=_mean([s.time_mono_s for s in samples]),
        time_wall_s=_mean([s.time_wall_s for s in samples]),
        gpu_indices=tuple(sorted({g for s in samples for g in s.gpu_indices})),
        **{name: same(name) for name in ("num_gpu_blocks", "block_size", "kv_pool_bytes",
                                          "kv_pool_tokens", "kv_bytes_per_token", "weights_bytes",
                                          "tensor_parallel")},
        kv_config=samples[0].kv_config if all(s.kv_config == samples[0].kv_config
                                              for s in samples) else {},
        cache_dtype=same("cache_dtype") or "",
        data_parallel=sum(s.data_parallel or 1 for s in samples),
        # each endpoint is a replica (or brings its own): shown, and judged, on its own GPUs
        replicas=tuple(r for s in samples
                       for r in (s.replicas or (dataclasses.replace(s, replica=s.url),))),
        lora_running=tuple(dict.fromkeys(n for s in samples for n in s.lora_running)),
        lora_waiting=tuple(dict.fromkeys(n for s in samples for n in s.lora_waiting)),
        note="; ".join(s.note for s in samples if s.note))


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return None if len(known) < len(values) or not known else sum(known) / len(known)
