"""The plots' history, kept one record per tick so a View carries its own window series.

A pane's plot needs the window of readings before its frame.  Walking the timeline for
them at draw time meant holding the session's lock while drawing, on the sampler's path.
Instead the session appends one small ``Tick`` per frame to a ``PlotLog`` as the frame
arrives, and every View holds a ``Plots``: an O(1) snapshot of that log up to its own
frame.  The log only ever appends to its list and replaces the list when it drops its
front, so a snapshot reads stable items with no lock, however the log grows after it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from gputop.schema import Frame, GpuSample

Point = tuple[float, float | None]  # (time_mono_s, value)


@dataclass(frozen=True, slots=True)
class Tick:
    """What the plots read of one frame: the GPUs' readings and the engine's tokens/s."""

    time_mono_s: float
    gpus: tuple[GpuSample, ...]
    tokens_per_s: float | None  # None where the frame holds no engine reading


def tick_of(frame: Frame, tokens_per_s: float | None) -> Tick:
    return Tick(frame.time_mono_s, frame.gpus,
                tokens_per_s if frame.engine is not None else None)


COMPACT_MIN = 256  # dropped ticks are let go of once this many (and an eighth of the list) wait


class PlotLog:
    """The ticks of a timeline, index for index (``drop_front`` as the timeline drops)."""

    def __init__(self) -> None:
        self._ticks: list[Tick] = []
        self._first = 0  # position of the timeline's index 0 in _ticks

    def __len__(self) -> int:
        return len(self._ticks) - self._first

    def append(self, tick: Tick) -> None:
        self._ticks.append(tick)

    def drop_front(self, count: int) -> None:
        self._first = min(len(self._ticks), self._first + max(0, count))
        if self._first >= COMPACT_MIN and self._first * 8 >= len(self._ticks):
            # a new list: snapshots of the old one keep reading it unchanged
            self._ticks, self._first = self._ticks[self._first:], 0

    def snapshot(self, index: int) -> Plots:
        """The ticks up to the timeline's ``index`` (inclusive)."""
        return Plots(self._ticks, self._first, self._first + index + 1)


@dataclass(frozen=True, slots=True, eq=False)  # one log's slice: compared by identity
class Plots:
    """A View's history for its plots: ticks[lo:hi], the last one the View's own frame."""

    ticks: list[Tick]
    lo: int
    hi: int

    def window(self, window_s: float) -> list[Tick]:
        """Ticks in (t_end - window_s, t_end], oldest first (as Timeline.frames_since)."""
        if self.hi <= self.lo:
            return []
        t_end = self.ticks[self.hi - 1].time_mono_s
        start = bisect.bisect_right(self.ticks, t_end - window_s, self.lo, self.hi,
                                    key=lambda tick: tick.time_mono_s)
        return self.ticks[start:self.hi]

    def series(self, window_s: float, value: Callable[[Tick], float | None]) -> list[Point]:
        """(time_mono_s, value(tick)) for the ticks in the window."""
        return [(tick.time_mono_s, value(tick)) for tick in self.window(window_s)]

    def util_points(self, window_s: float, gpu_index: int) -> list[Point]:
        """GPU-Util at driver resolution: a tick's buffered samples are spread over the
        interval before it, so a short window shows sub-second spikes and gaps."""
        points: list[Point] = []
        previous_t = None
        for tick in self.window(window_s):
            gpu = next((g for g in tick.gpus if g.index == gpu_index), None)
            samples = gpu.util_gpu_samples_pct if gpu is not None else ()
            if samples and previous_t is not None:
                step = (tick.time_mono_s - previous_t) / len(samples)
                points += [(previous_t + step * (i + 1), v) for i, v in enumerate(samples)]
            else:
                points.append((tick.time_mono_s, gpu.util_gpu_pct if gpu else None))
            previous_t = tick.time_mono_s
        return points


def gpu_field(index: int, field: str, mig: int | None = None
              ) -> Callable[[Tick], float | None]:
    """A series accessor: ``field`` of GPU ``index`` (or of its MIG instance ``mig``) in
    each tick (None where absent)."""
    def value(tick: Tick) -> float | None:
        for gpu in tick.gpus:
            if gpu.index == index:
                if mig is None:
                    found: float | None = getattr(gpu, field)
                    return found
                instance = next((m for m in gpu.migs if m.index == mig), None)
                of_instance: float | None = getattr(instance, field, None)
                return of_instance
        return None
    return value


def tokens_per_s(tick: Tick) -> float | None:
    return tick.tokens_per_s
