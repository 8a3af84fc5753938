"""Polls every source on the tick grid and builds one Frame per tick, off the UI thread.

Each source has its own daemon worker thread and never more than one poll in flight.
A tick asks every idle source for a new reading and waits for the answers at most
``source_timeout_s``; a poll that takes longer is *not* thrown away: its reading lands
whenever it is ready and is used by the next tick.  Every reading is stamped with
the time it was taken (the source can say when inside its poll, e.g. when an engine's
response arrived), so rates are computed over the readings' own interval, never the
ticks'.  A tick carries each source's newest reading with its age until that is
stale (``stale_after_s``), then "n/a (slow: ...)".  A source that fails outright
shows "n/a (reason)" at once.  Worker threads are daemons: a hung poll never keeps
gputop from exiting.  Ticks are scheduled on a fixed grid (start + k x interval).
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import queue
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gputop.schema import (MAX_PROCESSES, Frame, GpuSample, HostSample,
                           SourceStatus)
from gputop.sources.base import Reading, Source
from gputop.sources.engine_merge import merge_engines

STALE_INTERVALS = 5  # a reading older than this many intervals is stale...
STALE_MIN_S = 3.0  # ...and never sooner than this
COSTS_KEPT = 16  # recent poll costs per source, for the explain page


def parse_delay(text: str) -> float:
    """``-d/--delay`` in seconds: a positive number no larger than an hour."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number of seconds above 0 and at most 3600, got "
                         f"{text!r}") from None
    if not (value > 0) or value > 3600 or value != value:
        raise ValueError(f"expected a number of seconds above 0 and at most 3600, got {text!r}")
    return value


class _Worker:
    """One daemon thread running one job at a time (a ThreadPoolExecutor's threads are
    joined at interpreter exit, so one hung poll would keep the process alive)."""

    def __init__(self, name: str):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: Callable, *args) -> cf.Future:
        future: cf.Future = cf.Future()
        self._jobs.put((future, fn, args))
        return future

    def stop(self) -> None:
        self._jobs.put(None)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to whoever waits
                future.set_exception(exc)


@dataclass(frozen=True)
class _Taken:
    """A reading with the monotonic time it was taken and what the poll cost."""

    reading: Reading
    taken_mono_s: float
    poll_s: float


class _Slot:
    """One source's worker, its poll in flight and its newest reading (or failure)."""

    def __init__(self, source: Source):
        self.source = source
        self.name = source.name
        self.worker: _Worker | None = None
        self.pending: cf.Future | None = None
        self.pending_since_mono: float = 0.0
        self.open_error: str | None = None
        self._lock = threading.Lock()
        self._latest: _Taken | None = None
        self._error: str | None = None
        self._costs: deque[float] = deque(maxlen=COSTS_KEPT)

    def busy(self) -> bool:
        return self.pending is not None and not self.pending.done()

    def landed(self, taken: _Taken | None, error: str | None, cost_s: float) -> None:
        """Called from the worker when a poll ends, however late."""
        with self._lock:
            self._latest, self._error = (taken, None) if taken is not None else (None, error)
            self._costs.append(cost_s)

    def status_at(self, now_mono: float, stale_after_s: float,
                  waited_at_least_s: float = 0.0) -> tuple[SourceStatus, Reading | None]:
        if self.open_error is not None:
            return SourceStatus(False, self.open_error), None
        with self._lock:
            latest, error, costs = self._latest, self._error, list(self._costs)
        median = round(statistics.median(costs), 6) if costs else None
        if latest is None:
            if error is not None:
                return SourceStatus(False, error, poll_median_s=median), None
            waited = max(waited_at_least_s, now_mono - self.pending_since_mono)
            return SourceStatus(False, f"slow: no answer for {waited:.1f}s",
                                poll_median_s=median), None
        age = max(0.0, now_mono - latest.taken_mono_s)
        if age > stale_after_s:
            still = ", poll still running" if self.busy() else ""
            return SourceStatus(False, f"slow: last reading {age:.0f}s old{still}",
                                poll_s=round(latest.poll_s, 6), poll_median_s=median), None
        return SourceStatus(True, detail=latest.reading.detail, age_s=round(age, 3),
                            poll_s=round(latest.poll_s, 6), poll_median_s=median), latest.reading


class Sampler:
    """The local feed (``gputop/feed.py``'s ``FrameFeed``): one frame per tick on a fixed
    grid from the newest reading of each source."""

    # a FrameFeed says why no frames come; the sampler always makes one (n/a sources inside)
    error: str | None = None

    def __init__(self, sources: Sequence[Source], interval_s: float = 1.0,
                 source_timeout_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time,
                 frame_time: Callable[[int], tuple[float, float]] | None = None,
                 stale_after_s: float | None = None):
        self.sources = list(sources)
        self.interval_s = interval_s
        # how long a tick waits for fresh readings before using the newest it has
        self.source_timeout_s = source_timeout_s if source_timeout_s is not None else min(
            0.5 * interval_s, 1.0)
        self.stale_after_s = stale_after_s if stale_after_s is not None else max(
            STALE_MIN_S, STALE_INTERVALS * interval_s)
        self._clock = clock
        self._wall = wall_clock
        # (wall, monotonic) stamp of frame ``seq``; the simulator uses a virtual clock
        # so that its frames are identical on every run.
        self._frame_time = frame_time
        self._slots = [_Slot(s) for s in self.sources]
        self._seq = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    def open(self) -> None:
        for slot in self._slots:
            try:
                slot.source.open()
            except Exception as exc:  # a source that cannot open stays n/a, others run
                slot.open_error = _reason(exc)
                continue
            slot.worker = _Worker(f"gputop-{slot.name}")

    def close(self) -> None:
        self.stop()
        for slot in self._slots:
            if slot.worker is not None:
                slot.worker.stop()
            try:
                slot.source.close()
            except Exception:
                pass

    # ------------------------------------------------------------ ticks

    def tick(self) -> Frame:
        """Ask every idle source for a reading, wait for them at most ``source_timeout_s``,
        and build a frame from the newest reading of each source."""
        if self._frame_time is not None:
            now_wall, now_mono = self._frame_time(self._seq)
        else:
            now_wall, now_mono = self._wall(), self._clock()
        asked = []
        for slot in self._slots:
            if slot.worker is None and slot.open_error is None:  # opened by the caller
                slot.worker = _Worker(f"gputop-{slot.name}")
            if slot.worker is None or slot.busy():
                continue  # never two polls in flight: a slow one keeps its turn
            slot.pending_since_mono = now_mono
            slot.pending = slot.worker.submit(self._poll, slot, now_mono, now_wall)
            asked.append(slot.pending)
        if asked:
            cf.wait(asked, timeout=self.source_timeout_s)
        readings: list[Reading] = []
        statuses: dict[str, SourceStatus] = {}
        for slot in self._slots:
            statuses[slot.name], reading = slot.status_at(now_mono, self.stale_after_s,
                                                          self.source_timeout_s)
            if reading is not None:
                readings.append(reading)
        frame = _merge(self._seq, now_wall, now_mono, readings, statuses)
        self._seq += 1
        return frame

    def _poll(self, slot: _Slot, tick_mono: float, tick_wall: float) -> None:
        """Runs in the source's worker: poll, time it, stamp the reading, hand it over."""
        virtual = self._frame_time is not None
        start_mono, start_wall = (tick_mono, tick_wall) if virtual else (self._clock(), self._wall())
        started = time.perf_counter()
        try:
            reading = slot.source.poll(tick_mono)
        except Exception as exc:
            slot.landed(None, _reason(exc), time.perf_counter() - started)
            return
        cost = time.perf_counter() - started
        offset = 0.0 if virtual else cost
        if not virtual and reading.taken_after_s is not None:
            offset = min(max(0.0, reading.taken_after_s), cost)
        taken_mono, taken_wall = start_mono + offset, start_wall + offset
        if reading.engine is not None and reading.engine.time_mono_s is None:
            reading = dataclasses.replace(reading, engine=dataclasses.replace(
                reading.engine, time_mono_s=taken_mono, time_wall_s=taken_wall))
        slot.landed(_Taken(reading, taken_mono, cost), None, cost)

    def run(self, on_frame: Callable[[Frame], None], max_frames: int | None = None) -> None:
        """Tick on a fixed grid until stopped (or ``max_frames`` frames), calling ``on_frame``."""
        start = self._clock()
        produced = 0
        while not self._stop.is_set():
            on_frame(self.tick())
            produced += 1
            if max_frames is not None and produced >= max_frames:
                return
            next_at = start + produced * self.interval_s
            delay = next_at - self._clock()
            if delay < 0:  # fell behind: skip missed slots instead of bursting
                produced += int(-delay // self.interval_s) + 1
                delay = start + produced * self.interval_s - self._clock()
            self._stop.wait(max(0.0, delay))

    def start(self, on_frame: Callable[[Frame], None]) -> None:
        self._thread = threading.Thread(target=self.run, args=(on_frame,), name="gputop-sampler",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


def _merge_gpus(samples: list[GpuSample]) -> tuple[GpuSample, ...]:
    """One sample per GPU index: a later source fills what an earlier one left unknown
    (e.g. SM activity from a dcgm-exporter next to NVML's utilization)."""
    merged: dict[int, GpuSample] = {}
    for sample in samples:
        first = merged.get(sample.index)
        if first is None:
            merged[sample.index] = sample
            continue
        fill = _unknown_filled(first, sample, (None, (), ""))
        missing = {k: v for k, v in {**sample.missing, **first.missing}.items()
                   if k not in fill and getattr(first, k, None) is None}
        merged[sample.index] = dataclasses.replace(first, **fill, missing=missing)
    return tuple(merged[i] for i in sorted(merged))


def _unknown_filled(first: Any, later: Any, unknown: tuple[Any, ...]) -> dict[str, Any]:
    """The fields ``first`` left unknown that ``later`` (a sample of the same type) knows."""
    return {f.name: getattr(later, f.name) for f in dataclasses.fields(later)
            if getattr(first, f.name) in unknown and getattr(later, f.name) not in unknown}


def _fill(first: HostSample | None, later: HostSample | None) -> HostSample | None:
    """One host sample from two sources: the later fills what the first left unknown (the
    /proc source reads the CPU, eBPF the launch threads' involuntary switches)."""
    if first is None or later is None:
        return first or later
    fill = _unknown_filled(first, later, (None,))
    return dataclasses.replace(first, **fill) if fill else first


def _merge(seq: int, wall: float, mono: float, readings: list[Reading],
           statuses: dict[str, SourceStatus]) -> Frame:
    gpus, processes, launch, engines = [], [], [], []
    host = pinned = armed_s = None
    for reading in readings:
        gpus.extend(reading.gpus)
        processes.extend(reading.processes)
        launch.extend(reading.launch)
        if reading.engine is not None:
            engines.append(reading.engine)
        host = _fill(host, reading.host)
        pinned = pinned or reading.pinned
        armed_s = reading.launch_armed_s if armed_s is None else armed_s
    if len(processes) > MAX_PROCESSES:  # what a frame may hold: keep the largest
        processes = sorted(processes, key=lambda p: -(p.mem_bytes or 0))[:MAX_PROCESSES]
    return Frame(seq=seq, time_wall_s=wall, time_mono_s=mono, gpus=_merge_gpus(gpus),
                 processes=tuple(processes), engine=merge_engines(engines), launch=tuple(launch), host=host,
                 pinned=pinned, sources=statuses, launch_armed_s=armed_s)
