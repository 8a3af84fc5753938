"""The one cursor (gputop/cursor.py): live positions and a recording's decoded window."""

from __future__ import annotations

from gputop.cursor import AHEAD_FRAMES, LiveCursor, RecordingCursor
from gputop.export.snapshot import snapshot_dict
from gputop.record.store import Recorder, Recording
from gputop.session import Session
from tests.conftest import sim_frames


def test_a_live_cursor_follows_holds_steps_and_seeks_within_the_frames_kept():
    frames = sim_frames("logprobs-storm", 30)
    session = Session("demo", frames=frames[:20])
    cursor = LiveCursor(session)
    assert cursor.following and cursor.view_at().frame.seq == 19 and cursor.behind() == 0
    cursor.hold()
    for frame in frames[20:25]:
        session.add_frame(frame)
    assert cursor.view_at().frame.seq == 19 and cursor.behind() == 5  # held while frames land
    cursor.step(-3)
    assert cursor.seq == 16 and cursor.view_at().frame.seq == 16
    cursor.step(-100)
    assert cursor.seq == 0  # within the frames kept
    cursor.seek(22)
    assert cursor.frame().seq == 22 and cursor.view_at(5).frame.seq == 5  # view_at: any seq
    cursor.follow()
    assert cursor.following and cursor.view_at().frame.seq == 24
    assert LiveCursor(Session("empty")).view_at() is None


def write(path, frames) -> Recording:
    recorder = Recorder(path, "demo:logprobs-storm")
    for frame in frames:
        recorder.append(frame)
    recorder.close()
    return Recording(path)


def test_a_recording_cursor_decodes_a_window_and_shows_what_was_live(tmp_path):
    frames = sim_frames("logprobs-storm", 2 * AHEAD_FRAMES + 100)
    live = Session("demo:logprobs-storm", frames=frames)
    recording = write(tmp_path / "r.gtrec", frames)
    cursor = RecordingCursor(recording)
    assert cursor.view_at() is None  # nothing decoded before the first seek
    cursor.seek(0)
    assert cursor.session.seq_bounds() == (0, AHEAD_FRAMES)  # a window, not the recording
    # 598: near the window's end, so decoded again around it (from 0: LEAD_S of history)
    for seq in (0, 150, AHEAD_FRAMES - 2, 30):
        cursor.seek(seq)
        shown, was_live = cursor.view_at(), live.view(seq)
        assert shown.frame.seq == seq
        assert snapshot_dict(shown, "x") == snapshot_dict(was_live, "x")  # what was live
    assert cursor.session.seq_bounds() == (0, 2 * AHEAD_FRAMES - 2)  # decoded again
    window_end = cursor.session.seq_bounds()[1]
    cursor.seek(window_end - 10)
    for _ in range(20):  # a frame at a time, past the decoded window's end
        cursor.step(1)
    assert cursor.seq == window_end + 10 and cursor.view_at().frame.seq == window_end + 10
    assert cursor.session.seq_bounds()[1] > window_end + 10  # the next window, decoded
    cursor.seek(10**9)
    assert cursor.seq == frames[-1].seq  # within the recording
    assert [f.seq for f in cursor.frames_ahead(10)] == []
    recording.close()


def test_a_recordings_views_walk_every_frame_in_order_without_moving_the_cursor(tmp_path):
    frames = sim_frames("logprobs-storm", 80)
    recording = write(tmp_path / "r.gtrec", frames)
    cursor = RecordingCursor(recording)
    cursor.seek(7)
    assert [v.frame.seq for v in cursor.views()] == [f.seq for f in frames]
    part = list(cursor.views(40, 49))
    assert [v.frame.seq for v in part] == list(range(40, 50))
    whole = {v.frame.seq: snapshot_dict(v, "x") for v in cursor.views()}
    assert all(snapshot_dict(v, "x") == whole[v.frame.seq] for v in part)  # folded with lead
    assert cursor.seq == 7
    recording.close()


def test_the_fleets_poll_cursor_holds_steps_and_keeps_only_the_last_polls():
    from gputop.cursor import PollCursor

    cursor = PollCursor(keep=5, budget=12, weight=len)
    assert cursor.view_at() is None and cursor.behind() == 0
    cursor.hold()
    cursor.step(-1)
    assert cursor.following  # nothing to hold on yet
    for n in range(3):
        cursor.add([n] * 2, 100.0 + n)
    assert cursor.following and cursor.view_at().value == [2, 2]
    cursor.hold()
    cursor.add([3] * 2, 103.0)
    assert cursor.view_at().seq == 2 and cursor.behind() == 1  # held while polls land
    cursor.step(-1)
    assert cursor.view_at().value == [1, 1] and cursor.view_at().time_wall_s == 101.0
    cursor.step(-10)
    assert cursor.seq == 0  # within the polls kept
    cursor.add([4] * 2, 104.0)
    cursor.add([5] * 2, 105.0)  # six polls: over the count, the oldest goes
    assert len(cursor) == 5 and cursor.seq == 1  # held on a poll let go of: the oldest kept
    cursor.add([6] * 8, 106.0)  # over the budget of rows: polls go until it fits
    assert len(cursor) == 3 and cursor.seq == 4 and cursor.behind() == 2
    cursor.add(list(range(20)), 107.0)  # heavier than the budget alone: the newest stays
    assert len(cursor) == 1 and cursor.view_at().seq == 7
    cursor.seek(3)
    assert cursor.seq == 7
    cursor.follow()
    cursor.add([8], 108.0)
    assert cursor.following and cursor.view_at().value == [8]
