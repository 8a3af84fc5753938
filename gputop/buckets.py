"""The launch-latency histogram bucket layout: part of the frame format, beside the schema.

Each power of two is split into ``SUB_BUCKETS`` (8) linear sub-buckets, so a bucket's
width is at most 1/8 of its lower bound and a percentile read from the bucket midpoint
is within 6.25% of the true value.  The BPF program (``sources/ebpf/launch.bpf.c``)
computes the same indexes in the kernel, so frames carry bucket indexes, and every
reader of a frame (the model, a recording's decoder) agrees on what they mean.
"""

from __future__ import annotations

SUB_BITS = 3
SUB_BUCKETS = 1 << SUB_BITS  # 8
# the bucket of the largest u64 nanosecond count: no valid frame holds a higher index
MAX_BUCKET_INDEX = SUB_BUCKETS + (63 - SUB_BITS) * SUB_BUCKETS + SUB_BUCKETS - 1


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
