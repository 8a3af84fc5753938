"""The plots' history kept per tick (model/plots.py) against the timeline it follows."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gputop.model.plots import COMPACT_MIN, PlotLog, gpu_field, tick_of
from gputop.model.timeline import Timeline
from gputop.schema import Frame, GpuSample
from gputop.session import Session
from tests.conftest import sim_frames


def frame(seq: int, t: float, util: float | None) -> Frame:
    return Frame(seq=seq, time_wall_s=1000.0 + t, time_mono_s=t,
                 gpus=(GpuSample(index=0, name="H100", util_gpu_pct=util),))


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0]), min_size=1, max_size=400),
       capacity=st.integers(2, 300), window_s=st.sampled_from([0.5, 2.0, 15.0, 60.0]))
def test_a_views_window_is_the_timelines_window_however_the_ring_drops(steps, capacity,
                                                                       window_s):
    timeline: Timeline[int] = Timeline(capacity, lambda previous, frames: 0)
    log = PlotLog()
    taken = []  # (snapshot, the frames_since it must equal) at every tick
    t = 0.0
    for seq, step in enumerate(steps):
        t += step
        dropped = timeline.dropped_frames
        timeline.append(frame(seq, t, float(seq % 101)))
        log.append(tick_of(timeline.frame(timeline.last_index), None))
        log.drop_front(timeline.dropped_frames - dropped)
        assert len(log) == len(timeline)
        index = seq % len(timeline)  # any kept position, not only the newest
        expected = [(f.time_mono_s, f.gpus[0].util_gpu_pct)
                    for f in timeline.frames_since(index, window_s)]
        taken.append((log.snapshot(index), expected))
    value = gpu_field(0, "util_gpu_pct")
    for plots, expected in taken:  # a snapshot reads the same after the log moved on
        assert plots.series(window_s, value) == expected


def test_dropped_ticks_are_let_go_of():
    log = PlotLog()
    timeline: Timeline[int] = Timeline(10, lambda previous, frames: 0)
    for seq in range(COMPACT_MIN * 4):
        dropped = timeline.dropped_frames
        timeline.append(frame(seq, float(seq), 1.0))
        log.append(tick_of(timeline.frame(timeline.last_index), None))
        log.drop_front(timeline.dropped_frames - dropped)
    assert len(log) == 10 and len(log._ticks) <= COMPACT_MIN + 10


def test_the_session_hands_every_view_its_plots_and_the_frame_before():
    frames = sim_frames("logprobs-storm", 40)
    session = Session("demo", frames=frames)
    view = session.view(20)
    assert view is not None and view.frame.seq == 20 and view.previous.seq == 19
    assert view.interval_s == frames[20].time_mono_s - frames[19].time_mono_s
    ticks = view.plots.window(1e9)
    assert [tick.time_mono_s for tick in ticks] == [f.time_mono_s for f in frames[:21]]
    storm = [tick.tokens_per_s for tick in ticks]
    assert any(v is not None and v > 0 for v in storm)  # the engine's rate, per tick
    first = session.view(0)
    assert first.previous is None and first.interval_s == 1.0
