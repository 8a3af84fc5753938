import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gputop.model import latency


@given(st.integers(min_value=0, max_value=10**12))
def test_value_lies_in_its_bucket_and_bucket_is_narrow(value_ns):
    index = latency.bucket_index(value_ns)
    low, high = latency.bucket_bounds_ns(index)
    assert low <= value_ns < high
    if value_ns >= latency.SUB_BUCKETS:
        assert (high - low) / low <= 1 / latency.SUB_BUCKETS


def test_bucket_indexes_are_monotonic_and_contiguous():
    previous = -1
    for value in range(0, 5000):
        index = latency.bucket_index(value)
        assert index in (previous, previous + 1)
        previous = index


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=1_000, max_value=50_000_000), min_size=1, max_size=400),
       st.sampled_from([0.5, 0.9, 0.99]))
def test_percentiles_from_buckets_are_within_12_5_percent(values, fraction):
    buckets = {}
    for v in values:
        index = latency.bucket_index(v)
        buckets[index] = buckets.get(index, 0) + 1
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    truth = ordered[rank - 1]
    estimate = latency.percentile_ns(buckets, fraction)
    assert abs(estimate - truth) / truth <= 0.125


def test_stats_of_nothing_are_unknown_not_zero():
    s = latency.stats({}, 0, 0, 0, seconds=1.0)
    assert s.p50_us is None and s.p99_us is None and s.max_us is None and s.mean_us is None
    assert s.calls_per_s == 0.0


def test_stats_rates_and_max():
    buckets = {latency.bucket_index(100_000): 99, latency.bucket_index(13_000_000): 1}
    s = latency.stats(buckets, 100, 99 * 100_000 + 13_000_000, 13_000_000, seconds=2.0)
    assert s.calls_per_s == 50.0
    assert abs(s.p50_us - 100) / 100 < 0.07
    assert abs(s.p99_us - 100) / 100 < 0.07  # rank 99 of 100 is still the body
    assert s.max_us == 13_000
    merged = latency.merge([buckets, buckets])
    assert sum(merged.values()) == 200
