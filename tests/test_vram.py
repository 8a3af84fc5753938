import pytest
from hypothesis import given
from hypothesis import strategies as st

from gputop.model.vram import split_vram

GiB = 2**30


def parts_sum(s):
    return ((s.weights_bytes or 0) + (s.kv_pool_bytes or 0) + (s.other_bytes or 0)
            + (s.other_processes_bytes or 0) + s.free_bytes + s.unsplit_bytes)


@pytest.mark.parametrize("case, expected", [
    # no engine: used memory is unsplit, never guessed
    (dict(total_bytes=80 * GiB, used_bytes=30 * GiB),
     dict(weights_bytes=None, kv_pool_bytes=None, unsplit_bytes=30 * GiB, free_bytes=50 * GiB,
          overflow_bytes=0)),
    # idle-reserved vLLM: pool reserved, nothing used inside it
    (dict(total_bytes=80 * GiB, used_bytes=74 * GiB, engine_process_bytes=72 * GiB,
          weights_bytes=15 * GiB, kv_pool_bytes=54 * GiB, kv_usage_ratio=0.0),
     dict(weights_bytes=15 * GiB, kv_pool_bytes=54 * GiB, kv_used_bytes=0, other_bytes=3 * GiB,
          other_processes_bytes=2 * GiB, free_bytes=6 * GiB, unsplit_bytes=0, overflow_bytes=0)),
    # KV used lives inside the pool: the totals do not change with usage
    (dict(total_bytes=80 * GiB, used_bytes=74 * GiB, engine_process_bytes=72 * GiB,
          weights_bytes=15 * GiB, kv_pool_bytes=54 * GiB, kv_usage_ratio=0.5),
     dict(kv_used_bytes=27 * GiB, other_bytes=3 * GiB, free_bytes=6 * GiB, overflow_bytes=0)),
    # a model size that is too big for what the process holds: overflow, not clipping
    (dict(total_bytes=80 * GiB, used_bytes=78 * GiB, engine_process_bytes=70 * GiB,
          weights_bytes=30 * GiB, kv_pool_bytes=54 * GiB, kv_usage_ratio=0.1),
     dict(other_bytes=0, other_processes_bytes=8 * GiB, free_bytes=2 * GiB, overflow_bytes=14 * GiB)),
    # engine memory unknown: the rest of the used memory is unsplit
    (dict(total_bytes=80 * GiB, used_bytes=74 * GiB, weights_bytes=15 * GiB,
          kv_pool_bytes=54 * GiB),
     dict(other_bytes=None, other_processes_bytes=None, unsplit_bytes=5 * GiB, overflow_bytes=0)),
    # the card reports more used than it has
    (dict(total_bytes=80 * GiB, used_bytes=81 * GiB),
     dict(free_bytes=0, unsplit_bytes=81 * GiB, overflow_bytes=1 * GiB)),
])
def test_split_table(case, expected):
    split = split_vram(**case)
    for name, value in expected.items():
        assert getattr(split, name) == value, name


sizes = st.integers(min_value=0, max_value=200 * GiB)
maybe = lambda s: st.none() | s


@given(total=sizes, used=sizes, engine=maybe(sizes), weights=maybe(sizes), pool=maybe(sizes),
       usage=maybe(st.floats(min_value=-0.5, max_value=1.5, allow_nan=False)))
def test_split_properties(total, used, engine, weights, pool, usage):
    s = split_vram(total, used, engine, weights, pool, usage)
    values = [s.weights_bytes, s.kv_pool_bytes, s.kv_used_bytes, s.other_bytes,
              s.other_processes_bytes, s.free_bytes, s.unsplit_bytes, s.overflow_bytes]
    assert all(v is None or v >= 0 for v in values)
    # parts add up to the card exactly, or the excess is overflow
    assert parts_sum(s) == s.total_bytes + s.overflow_bytes
    # KV used is inside the pool and never counted on top of it
    if s.kv_used_bytes is not None:
        assert s.kv_used_bytes <= s.kv_pool_bytes
        assert s.kv_free_bytes == s.kv_pool_bytes - s.kv_used_bytes
    drawn = sum(size for _, size in s.parts())
    assert drawn == parts_sum(s)
