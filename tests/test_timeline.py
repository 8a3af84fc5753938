import pytest

from gputop.model.timeline import Timeline
from gputop.schema import Frame


def count_fold(previous, frames):
    return (previous or 0) + 1


def frame(seq, t=None):
    return Frame(seq=seq, time_wall_s=1000.0 + seq, time_mono_s=float(seq if t is None else t))


def test_bounded_ring_drops_oldest_and_keeps_states_aligned():
    tl = Timeline(5, count_fold)
    for i in range(12):
        tl.append(frame(i))
    assert len(tl) == 5
    assert tl.dropped_frames == 7
    assert [tl.frame(i).seq for i in range(5)] == [7, 8, 9, 10, 11]
    assert [tl.state(i) for i in range(5)] == [8, 9, 10, 11, 12]


def test_fold_sees_lookback_frames():
    seen = []
    tl = Timeline(10, lambda prev, frames: seen.append([f.seq for f in frames]) or 0,
                  lookback_frames=2)
    for i in range(3):
        tl.append(frame(i))
    assert seen == [[0], [0, 1], [1, 2]]


def test_windows_and_seek():
    tl = Timeline(100, count_fold)
    for i in range(50):
        tl.append(frame(i, t=i * 0.5))
    assert [f.seq for f in tl.frames_since(49, 2.0)] == [46, 47, 48, 49]
    assert tl.index_at(10.2) == 20
    assert tl.index_at(-5) == 0
    assert tl.index_at(1e9) == 49
    assert [f.seq for f in tl.window_frames(3, 10)] == [0, 1, 2, 3]


def test_out_of_order_frames_are_refused():
    tl = Timeline(10, count_fold)
    tl.append(frame(1, t=5))
    with pytest.raises(ValueError):
        tl.append(frame(2, t=4))


def test_capacity_must_hold_two_frames():
    with pytest.raises(ValueError):
        Timeline(1, count_fold)
