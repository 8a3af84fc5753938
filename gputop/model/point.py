"""The per-tick numbers derived from two consecutive frames.

One ``Point`` per frame is what both the detector fold and the view read, so
the rate arithmetic (reset-safe counters) lives here once.
"""

from __future__ import annotations

from dataclasses import dataclass

from gputop.model import latency
from gputop.schema import Frame


@dataclass(frozen=True)
class Point:
    time_mono_s: float
    time_wall_s: float
    engine_kind: str | None
    tokens_per_s: float | None
    prompt_tokens_per_s: float | None
    requests_per_s: float | None
    requests_running: float | None
    requests_waiting: float | None
    kv_usage_ratio: float | None
    util_pct: dict[int, float]  # per GPU index, only GPUs that reported it
    sm_active_pct: dict[int, float]
    dram_bw_pct: dict[int, float]
    throttle: dict[int, tuple[str, ...]]
    launch_p50_us: float | None  # over all launch APIs and processes, this tick
    launch_p99_us: float | None
    host_cpu_pct: float | None


def counter_rate(previous: float | None, current: float | None, seconds: float) -> float | None:
    """Per-second increase of a cumulative counter, Prometheus-style: a drop means a reset
    (the counter restarted from 0), so the increase is the new value, never negative."""
    if previous is None or current is None or seconds <= 0:
        return None
    increase = current - previous if current >= previous else current
    return increase / seconds


def point(previous: Frame | None, frame: Frame) -> Point:
    seconds = (frame.time_mono_s - previous.time_mono_s) if previous else 0.0
    engine, prev_engine = frame.engine, previous.engine if previous else None
    same_engine = (engine is not None and prev_engine is not None
                   and (engine.kind, engine.url) == (prev_engine.kind, prev_engine.url))

    def rate(name: str) -> float | None:
        if not same_engine:
            return None
        return counter_rate(getattr(prev_engine, name), getattr(engine, name), seconds)

    # Synchronize calls wait for the GPU by design; only launches say anything about jitter.
    buckets = latency.merge(h.buckets for h in frame.launch if "Launch" in h.api)
    return Point(
        time_mono_s=frame.time_mono_s,
        time_wall_s=frame.time_wall_s,
        engine_kind=engine.kind if engine else None,
        tokens_per_s=rate("generation_tokens_total"),
        prompt_tokens_per_s=rate("prompt_tokens_total"),
        requests_per_s=rate("requests_finished_total"),
        requests_running=engine.requests_running if engine else None,
        requests_waiting=engine.requests_waiting if engine else None,
        kv_usage_ratio=engine.kv_usage_ratio if engine else None,
        util_pct={g.index: g.util_gpu_pct for g in frame.gpus if g.util_gpu_pct is not None},
        sm_active_pct={g.index: g.sm_active_pct for g in frame.gpus if g.sm_active_pct is not None},
        dram_bw_pct={g.index: g.dram_bw_pct for g in frame.gpus if g.dram_bw_pct is not None},
        throttle={g.index: g.throttle for g in frame.gpus if g.throttle},
        launch_p50_us=_us(latency.percentile_ns(buckets, 0.5)),
        launch_p99_us=_us(latency.percentile_ns(buckets, 0.99)),
        host_cpu_pct=frame.host.cpu_pct if frame.host else None,
    )


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1000.0
