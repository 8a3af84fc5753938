"""Log-linear latency histograms: bucket layout, merging, percentiles.

Each power of two is split into ``SUB_BUCKETS`` (8) linear sub-buckets, so a
bucket's width is at most 1/8 of its lower bound and a percentile read from
the bucket midpoint is within 6.25% of the true value.  The same layout is
computed in the BPF program (``sources/ebpf``), so frames carry bucket indexes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

SUB_BITS = 3
SUB_BUCKETS = 1 << SUB_BITS  # 8


def bucket_index(value_ns: int) -> int:
    """Bucket of a duration in ns: exact below 8 ns, 8 sub-buckets per power of two above."""
    if value_ns < SUB_BUCKETS:
        return max(0, int(value_ns))
    exponent = value_ns.bit_length() - 1  # >= SUB_BITS
    sub = (value_ns >> (exponent - SUB_BITS)) - SUB_BUCKETS
    return SUB_BUCKETS + (exponent - SUB_BITS) * SUB_BUCKETS + sub


def bucket_bounds_ns(index: int) -> tuple[int, int]:
    """[lower, upper) of a bucket in ns."""
    if index < SUB_BUCKETS:
        return index, index + 1
    exponent = (index - SUB_BUCKETS) // SUB_BUCKETS + SUB_BITS
    sub = (index - SUB_BUCKETS) % SUB_BUCKETS
    shift = exponent - SUB_BITS
    return (SUB_BUCKETS + sub) << shift, (SUB_BUCKETS + sub + 1) << shift


def bucket_mid_ns(index: int) -> float:
    low, high = bucket_bounds_ns(index)
    return (low + high) / 2


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
    if max_ns and p50 is not None:
        p50, p99 = min(p50, max_ns), min(p99, max_ns)
    return LatencyStats(
        calls=calls,
        calls_per_s=(calls / seconds) if seconds else None,
        p50_us=us(p50),
        p99_us=us(p99),
        max_us=us(max_ns) if calls else None,
        mean_us=us(sum_ns / calls) if calls else None,
    )
