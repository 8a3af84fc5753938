"""Log-linear latency histograms: merging and percentiles.

The bucket layout is part of the frame format and lives beside the schema
(``gputop/buckets.py``); it is re-exported here for the model's readers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gputop.buckets import (SUB_BITS, SUB_BUCKETS, bucket_bounds_ns,  # noqa: F401
                            bucket_index, bucket_mid_ns)

@dataclass(frozen=True)
class LatencyStats:
    calls: int
    calls_per_s: float | None
    p50_us: float | None
    p99_us: float | None
    max_us: float | None
    mean_us: float | None


def merge(histograms: Iterable[Mapping[int, int]]) -> dict[int, int]:
    merged: dict[int, int] = {}
    for hist in histograms:
        for index, count in hist.items():
            merged[index] = merged.get(index, 0) + count
    return merged


def percentile_ns(buckets: Mapping[int, int], fraction: float) -> float | None:
    """Value at ``fraction`` (0..1) of the calls, from bucket midpoints; None when empty."""
    total = sum(buckets.values())
    if total <= 0:
        return None
    rank = max(1, -(-fraction * total // 1))  # ceil, at least the first call
    seen = 0
    for index in sorted(buckets):
        seen += buckets[index]
        if seen >= rank:
            return bucket_mid_ns(index)
    return bucket_mid_ns(max(buckets))


def stats(buckets: Mapping[int, int], calls: int, sum_ns: int, max_ns: int,
          seconds: float | None) -> LatencyStats:
    """Summary of merged histograms; percentiles never exceed the exact max."""
    def us(ns: float | None) -> float | None:
        return None if ns is None else ns / 1000.0

    p50 = percentile_ns(buckets, 0.50)
    p99 = percentile_ns(buckets, 0.99)
    if max_ns and p50 is not None and p99 is not None:  # both or neither: one histogram
        p50, p99 = min(p50, max_ns), min(p99, max_ns)
    return LatencyStats(
        calls=calls,
        calls_per_s=(calls / seconds) if seconds else None,
        p50_us=us(p50),
        p99_us=us(p99),
        max_us=us(max_ns) if calls else None,
        mean_us=us(sum_ns / calls) if calls else None,
    )
