"""One session for every mode: a feed -> timeline with the detector fold -> recorder, subscribers.

No Textual here.  The live dashboard, ``record``, ``snapshot``, ``serve`` and the
replay and export of recordings are thin users of a ``Session``: none of them builds a
timeline or appends to a recorder itself.  Frames are appended on the sampler's thread
under the session's lock, which is private to this module: readers take an immutable
``View`` (``view``) or the frames themselves (``frames_since``), and the lock is held
only while that is taken, never while a screen draws or an answer is encoded, so
drawing time never sits on the sampling path.  Each View carries its plots' window
series (``model/plots.py``), appended here once per tick.  Subscribers are called
after each frame on the sampler's thread and must only take note (the dashboard posts
one message and coalesces the rest).  The recorder writes on a thread of its own with
one size policy for every mode, so a slow disk never delays a tick or the screen.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from gputop.model.derive import View, derive
from gputop.model.detect import DetectConfig, DetectState, make_fold
from gputop.model.plots import PlotLog, tick_of
from gputop.model.point import shown_tokens_per_s
from gputop.model.timeline import Timeline
from gputop.sampler import Sampler
from gputop.schema import Frame, ProcessScan

if TYPE_CHECKING:  # the store (sqlite3, zstandard: ~2 MiB resident) loads when recording
    from gputop.feed import FrameFeed
    from gputop.record.store import Recorder

HISTORY_BYTES = 32 * 2**20  # what the live timeline may hold (an estimate; see timeline.py)
HISTORY_FRAMES = 36000  # and at most this many frames (1 h at -d 0.1)
RECORD_MAX_BYTES = 500 * 2**20  # one size policy: record, --record and the r key
RECORD_QUEUE_FRAMES = 3600  # frames waiting for a slow disk before the newest are dropped


class RecorderThread:
    """A ``Recorder`` fed through a queue by its own thread: ``submit`` never waits."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.path = recorder.path
        self.error: str | None = None
        self.dropped_frames = 0  # frames the queue had no room for (the disk stalled)
        self._queue: queue.Queue = queue.Queue(maxsize=RECORD_QUEUE_FRAMES)
        self._abandoned = False
        self._thread = threading.Thread(target=self._run, name="gputop-recorder", daemon=True)
        self._thread.start()

    @property
    def frames_written(self) -> int:
        return self.recorder.frames_written

    @property
    def frames_capped(self) -> int:
        return self.recorder.frames_dropped

    def size_bytes(self) -> int:
        return self.recorder.size_bytes()

    def submit(self, frame: Frame) -> None:
        if self.error is not None:
            return
        try:
            self._queue.put_nowait(frame)
        except queue.Full:
            self.dropped_frames += 1

    def _run(self) -> None:
        from gputop.record.store import RecordingError

        try:
            while not self._abandoned:
                frame = self._queue.get()
                if frame is None:
                    break
                if self.error is not None:
                    continue  # drained, so that submit never meets a full queue
                try:
                    self.recorder.append(frame)
                except RecordingError as exc:  # e.g. disk full: the rest of gputop goes on
                    self.error = str(exc)
                except Exception as exc:  # the thread must outlive any error
                    self.error = f"cannot write to {self.path}: {exc}"
        finally:
            self.recorder.close()

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued (within ``timeout_s``) and close the file.  Never waits
        longer: a queue that stays full (a disk that stopped) is abandoned, the frames
        already written stay readable."""
        deadline = time.monotonic() + timeout_s
        try:
            self._queue.put(None, timeout=timeout_s)
        except queue.Full:
            self._abandoned = True
        self._thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            self._abandoned = True  # it closes the file after the frame it is writing


class Session:
    def __init__(self, label: str, feed: FrameFeed | None = None, *,
                 detect_config: DetectConfig = DetectConfig(), frames: list[Frame] = (),
                 history_bytes: int | None = HISTORY_BYTES,
                 history_frames: int = HISTORY_FRAMES, pin_state=None):
        self.label = label
        self.feed = feed  # the sampler over local sources, or a remote host's /frames
        self.pin_state = pin_state  # what the live sources follow (the p key changes it)
        self.detect_config = detect_config
        self._lock = threading.RLock()
        self._timeline: Timeline[DetectState] = Timeline(
            history_frames, make_fold(detect_config), max_bytes=history_bytes)
        self._plots = PlotLog()
        self.recorder: RecorderThread | None = None
        self._subscribers: list[Callable[[Frame], None]] = []
        self._view_subscribers: list[Callable[[View], None]] = []
        self._closed = False
        for frame in frames:
            self.add_frame(frame)

    # ------------------------------------------------------------ frames

    def subscribe(self, callback: Callable[[Frame], None]) -> None:
        """``callback(frame)`` after each frame, on the sampler's thread: take note only."""
        self._subscribers.append(callback)

    def subscribe_views(self, callback: Callable[[View], None]) -> None:
        """``callback(view)`` with the view derived once per frame, on the sampler's thread
        (the exporter: a scrape then never derives, nor calls NVML or an engine)."""
        self._view_subscribers.append(callback)

    def add_frame(self, frame: Frame) -> bool:
        """Append, record and tell subscribers; False when the frame was refused."""
        with self._lock:
            if not self._append(self._timeline, self._plots, frame):
                return False  # out of order (a clock stepped back): not part of the story
            if self.recorder is not None:
                self.recorder.submit(frame)
            view = self._view_at(self._timeline.last_index) if self._view_subscribers else None
        for callback in list(self._subscribers):
            callback(frame)
        for view_callback in list(self._view_subscribers):
            view_callback(view)
        return True

    @staticmethod
    def _append(timeline: Timeline[DetectState], plots: PlotLog, frame: Frame) -> bool:
        dropped = timeline.dropped_frames
        try:
            state = timeline.append(frame)
        except ValueError:
            return False
        plots.append(tick_of(frame, shown_tokens_per_s(state.point)))
        plots.drop_front(timeline.dropped_frames - dropped)
        return True

    def replace_timeline(self, frames: list[Frame], capacity_frames: int) -> None:
        """A new timeline from ``frames`` (replay loads a window around its cursor)."""
        timeline: Timeline[DetectState] = Timeline(max(2, capacity_frames),
                                                   make_fold(self.detect_config))
        plots = PlotLog()
        for frame in frames:
            self._append(timeline, plots, frame)
        with self._lock:
            self._timeline, self._plots = timeline, plots

    # ------------------------------------------------------------ running

    def open(self) -> None:
        if self.feed is not None:
            self.feed.open()

    def start(self) -> None:
        """Sample in the background (the dashboard, serve)."""
        if self.feed is not None:
            self.feed.start(self.add_frame)

    def run(self, max_frames: int | None = None) -> None:
        """Sample on this thread until ``stop()`` or ``max_frames`` (record, snapshot)."""
        if self.feed is not None:
            self.feed.run(self.add_frame, max_frames=max_frames)

    def ticks(self, count: int) -> None:
        """``count`` ticks at once, without waiting: the simulator's virtual clock (the
        sampler's; a remote host's frames come when they come)."""
        if not isinstance(self.feed, Sampler):
            raise ValueError("only the sampler has a virtual clock to tick")
        for _ in range(count):
            self.add_frame(self.feed.tick())

    @property
    def feed_error(self) -> str | None:
        """Why the feed delivers no frames now (a remote host that does not answer)."""
        return self.feed.error if self.feed is not None else None

    def stop(self) -> None:
        if self.feed is not None:
            self.feed.stop()

    def close(self) -> None:
        """Stop sampling (detaching probes) and close the recording; safe to call twice and
        from another thread (the exit guard)."""
        if self._closed:
            return
        self._closed = True
        if self.feed is not None:
            self.feed.close()
        self.stop_recording()

    # ------------------------------------------------------------ pinning, the picker

    def pin(self, pid: int | None, pattern: str | None = None) -> str | None:
        """Make the live sources follow ``pid``'s process tree (or, without a pid, the
        processes matching ``pattern``) from the next tick; the reason when that cannot
        be done (no live sources to pin, no such process, a bad pattern)."""
        if self.pin_state is None:
            return "pinning follows the live sources; here the frames are pinned as shown"
        from gputop.sources.proctree import PinError, pin_pattern, pin_pid

        try:
            self.pin_state.set(pin_pid(pid) if pid is not None else pin_pattern(pattern))
        except PinError as exc:
            return str(exc)
        return None

    def unpin(self) -> None:
        if self.pin_state is not None:
            from gputop.sources.proctree import Pin

            self.pin_state.set(Pin())

    def scan_processes(self, known_pids: list[int]) -> ProcessScan:
        """The pin picker's look at this machine: the processes that map a CUDA library
        and the CPU% of those and of ``known_pids`` (a source's scan of /proc: a tenth of
        a second at least, so call it off the UI thread)."""
        from gputop.sources.procscan import scan

        return scan(known_pids)

    # ------------------------------------------------------------ recording

    def record(self, path: str, max_bytes: int | None = RECORD_MAX_BYTES) -> RecorderThread:
        """Start recording every frame from now on (RecordingError when the file cannot be
        made); one recording at a time."""
        from gputop.record.store import Recorder, RecordingError

        if self.recorder is not None:
            raise RecordingError(f"already recording to {self.recorder.path}")
        recorder = RecorderThread(Recorder(path, self.label, max_bytes=max_bytes))
        with self._lock:
            self.recorder = recorder
        return recorder

    def stop_recording(self) -> RecorderThread | None:
        with self._lock:
            recorder, self.recorder = self.recorder, None
        if recorder is not None:
            recorder.close()
        return recorder

    # ------------------------------------------------------------ views

    def __len__(self) -> int:
        return len(self._timeline)

    def view(self, seq: int | None = None,
             pin: tuple[tuple[int, ...], str | None] | None = None) -> View | None:
        """The View at frame ``seq`` (the nearest kept at or before it), or at the newest
        frame; None before the first frame.  The lock is held only while it is taken."""
        with self._lock:
            if not len(self._timeline):
                return None
            index = self._timeline.last_index if seq is None \
                else self._timeline.index_of_seq(seq)
            return self._view_at(index, pin)

    def _view_at(self, index: int,
                 pin: tuple[tuple[int, ...], str | None] | None = None) -> View:
        return derive(self._timeline, index, pin=pin, plots=self._plots.snapshot(index))

    def frames_since(self, seq: int, limit: int) -> tuple[list[Frame], int]:
        """(up to ``limit`` frames after ``seq``, oldest first; the newest seq, -1 when
        there is none): references only, so whoever encodes them does it unlocked."""
        with self._lock:
            timeline = self._timeline
            if not len(timeline):
                return [], -1
            chosen = []
            for index in range(timeline.index_of_seq(seq), len(timeline)):
                frame = timeline.frame(index)
                if frame.seq > seq:
                    chosen.append(frame)
                    if len(chosen) >= limit:
                        break
            return chosen, timeline.frame(timeline.last_index).seq

    def seq_bounds(self) -> tuple[int, int] | None:
        """(oldest, newest) seq of the frames kept; None before the first frame."""
        with self._lock:
            if not len(self._timeline):
                return None
            return self._timeline.frame(0).seq, self._timeline.frame(self._timeline.last_index).seq

    def seq_moved(self, seq: int, frames: int, clamp: bool = True) -> int | None:
        """The seq ``frames`` kept frames after (before, when negative) ``seq``: the
        oldest or newest kept where that is outside them (None instead, without
        ``clamp``, or before the first frame)."""
        with self._lock:
            timeline = self._timeline
            if not len(timeline):
                return None
            index = timeline.index_of_seq(seq) + frames
            if not 0 <= index <= timeline.last_index:
                if not clamp:
                    return None
                index = max(0, min(timeline.last_index, index))
            return timeline.frame(index).seq

    def frames_after(self, seq: int) -> int:
        """How many kept frames are newer than ``seq`` (a paused screen's distance to now)."""
        with self._lock:
            if not len(self._timeline):
                return 0
            return self._timeline.last_index - self._timeline.index_of_seq(seq)

    def frame(self, seq: int | None = None) -> Frame | None:
        """The kept frame at ``seq`` (the nearest before it), or the newest; None before
        the first frame.  Frames are immutable: read it with no lock."""
        with self._lock:
            if not len(self._timeline):
                return None
            return self._timeline.frame(self._timeline.last_index if seq is None
                                        else self._timeline.index_of_seq(seq))

