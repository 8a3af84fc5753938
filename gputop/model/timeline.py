"""A bounded, append-only ring of frames with the detector state after each one.

The detector is a fold over frames; keeping its state beside each frame lets
pause, history stepping and replay show exactly what the live screen showed
at that moment without re-running the fold.

The ring is bounded in frames and, optionally, in bytes (an estimate of what a frame
and its state hold in memory): at ``-d 0.1`` a frame count sized for an hour at 1 Hz
would hold ten times the memory; a byte budget holds the same memory at any rate.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from gputop.schema import Frame

State = TypeVar("State")


def approx_bytes(frame: Frame) -> int:
    """What a frame and its detector state hold in memory, roughly (calibrated with
    tracemalloc on simulated frames of 1, 4 and 8 GPUs: within ~20%).  What grows with
    input from outside is counted by its size: an engine histogram's buckets (~64 B each:
    two tuples of floats) and the processes' strings; a count per histogram let a page
    of 125,000 buckets fill gigabytes under a 32 MiB budget."""
    size = 1000 + 1100 * len(frame.gpus)
    size += sum(400 + len(p.cmdline) + len(p.name) + len(p.user) + len(p.cgroup)
                + len(p.container) + len(p.pod) for p in frame.processes)
    size += sum(700 + 80 * len(h.buckets) for h in frame.launch)
    if frame.engine is not None:
        engine = frame.engine
        size += 1500 + len(engine.note) + len(engine.url) + len(engine.model)
        size += sum(700 + 64 * len(h.upper_bounds) for h in engine.histograms)
    if frame.pinned is not None:
        size += 800 + 100 * len(frame.pinned.threads)
    return int(size * 1.4)


class Timeline(Generic[State]):
    def __init__(self, capacity_frames: int, fold: Callable[[State | None, list[Frame]], State],
                 lookback_frames: int = 8, max_bytes: int | None = None):
        if capacity_frames < 2:
            raise ValueError("a timeline needs room for at least two frames")
        self.capacity_frames = capacity_frames
        self.max_bytes = max_bytes
        self._frames: deque[Frame] = deque()
        self._states: deque[State] = deque()
        self._sizes: deque[int] = deque()
        self.bytes = 0  # the estimate of what the ring holds now
        self._fold = fold
        self._lookback = lookback_frames
        self.dropped_frames = 0  # frames that fell off the front

    def __len__(self) -> int:
        return len(self._frames)

    def append(self, frame: Frame) -> State:
        if self._frames and frame.time_mono_s < self._frames[-1].time_mono_s:
            raise ValueError("frames must be appended in time order")
        previous_state = self._states[-1] if self._states else None
        self._frames.append(frame)
        recent = self.window_frames(len(self._frames) - 1, self._lookback)
        state = self._fold(previous_state, recent)
        self._states.append(state)
        size = approx_bytes(frame) if self.max_bytes is not None else 0
        self._sizes.append(size)
        self.bytes += size
        while len(self._frames) > 2 and (
                len(self._frames) > self.capacity_frames
                or (self.max_bytes is not None and self.bytes > self.max_bytes)):
            self._frames.popleft()
            self._states.popleft()
            self.bytes -= self._sizes.popleft()
            self.dropped_frames += 1
        return state

    def frame(self, index: int) -> Frame:
        return self._frames[index]

    def state(self, index: int) -> State:
        return self._states[index]

    @property
    def last_index(self) -> int:
        return len(self._frames) - 1

    def window_frames(self, end_index: int, count: int) -> list[Frame]:
        """Up to ``count`` frames ending at ``end_index`` (inclusive), oldest first."""
        start = max(0, end_index - count + 1)
        return [self._frames[i] for i in range(start, end_index + 1)]

    def frames_since(self, end_index: int, seconds: float) -> list[Frame]:
        """Frames in (t_end - seconds, t_end], oldest first, by monotonic time."""
        if not self._frames:
            return []
        t_end = self._frames[end_index].time_mono_s
        start = self.index_at(t_end - seconds, end_index)
        if start <= end_index and self._frames[start].time_mono_s <= t_end - seconds:
            start += 1
        return [self._frames[i] for i in range(start, end_index + 1)]

    def index_of_seq(self, seq: int) -> int:
        """Index of the frame with ``seq`` (or the nearest before it; 0 if before all)."""
        position = bisect.bisect_right(_SeqView(self._frames), seq)
        return max(0, position - 1)

    def index_at(self, time_mono_s: float, hi: int | None = None) -> int:
        """Index of the last frame at or before ``time_mono_s`` (0 if before the first)."""
        hi = len(self._frames) if hi is None else hi + 1
        times = _TimesView(self._frames)
        position = bisect.bisect_right(times, time_mono_s, 0, hi)
        return max(0, position - 1)


class _TimesView:
    """Sequence view of frame times for bisect without copying the ring."""

    def __init__(self, frames: deque[Frame]):
        self._frames = frames

    def __len__(self) -> int:
        return len(self._frames)

    def __getitem__(self, index: int) -> float:
        return self._frames[index].time_mono_s


class _SeqView(_TimesView):
    def __getitem__(self, index: int) -> int:
        return self._frames[index].seq
