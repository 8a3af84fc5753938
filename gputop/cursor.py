"""One cursor over the frames, whatever their origin: live, a recording, a remote host;
and the same moves over the fleet's polls.

Every reader of the model goes through a cursor and gets immutable Views: the dashboard
and replay (a position that follows the newest frame or is held, stepped and sought),
``snapshot`` (the newest View), ``export`` and ``report`` (every View of a recording in
order, ``views``), ``serve`` (the newest View and the frames after a position).  The
kinds differ only in where frames come from:

- ``LiveCursor`` over a session the sampler (``kind="live"``) or a remote host's
  ``/frames`` (``kind="remote"``) feeds: the position is a seq within the frames kept.
- ``RecordingCursor`` over a recording: only a window of frames around the position is
  decoded into a session of its own (bounded memory for a 24-hour file), reloaded from
  the store when the position leaves it; the window starts ``LEAD_S`` before the
  position so the detector has history to fold over, which makes a replayed screen match
  what was live unless an episode began more than ``LEAD_S`` earlier.
- ``PollCursor`` (``kind="fleet"``) over what the fleet asked: it holds no frames, since
  the fleet reads each host's ``/snapshot.json`` (the newest View of that host's own
  cursor) or PromQL, never frames, so its positions are the last polls (their ranked
  rows), with the same moves: follow the newest, hold one still while polls go on
  landing (the table stands still to be read), step and seek through those kept.

Nothing here draws or encodes: callers do that with the View they were handed, after the
session's lock was let go of.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from gputop.model.derive import View
from gputop.model.detect import DetectConfig
from gputop.schema import Frame
from gputop.session import Session

if TYPE_CHECKING:  # the store (sqlite3, zstandard) loads with a recording only
    from gputop.record.store import Recording

Pin = tuple[tuple[int, ...], str | None]

LEAD_S = 600.0  # the detector's history decoded before a recording's position
AHEAD_FRAMES = 600  # and frames decoded after it
EDGE_FRAMES = 5  # a position this close to the decoded window's end reloads the window
VIEWS_FRAMES = 4096  # frames kept while a recording's views are walked (export, report)
POLLS_KEPT = 120  # the fleet's polls a PollCursor keeps (10 minutes at the default 5 s)...
POLL_ITEMS_KEPT = 50_000  # ...and rows in all (a big fleet keeps fewer polls; the newest always)

T = TypeVar("T")


class LiveCursor:
    """A position in a live session: following the newest frame (``seq`` None) or held."""

    def __init__(self, session: Session, kind: str = "live"):
        self.session = session
        self.kind = kind
        self.seq: int | None = None  # None: follow the newest frame

    @property
    def following(self) -> bool:
        return self.seq is None

    def view_at(self, seq: int | None = None, pin: Pin | None = None) -> View | None:
        """The View at ``seq``, or at the cursor (the newest frame while following)."""
        return self.session.view(self.seq if seq is None else seq, pin=pin)

    def frame(self) -> Frame | None:
        """The frame at the cursor (no derive: a status line's date, a play clock)."""
        return self.session.frame(self.seq)

    def follow(self) -> None:
        self.seq = None

    def hold(self) -> None:
        """Stop at the newest frame (pause)."""
        bounds = self.session.seq_bounds()
        if bounds is not None:
            self.seq = bounds[1]

    def step(self, frames: int) -> None:
        """``frames`` kept frames later (earlier, when negative), held there; within the
        frames kept."""
        bounds = self.session.seq_bounds()
        if bounds is None:
            return
        self.seq = self.session.seq_moved(bounds[1] if self.seq is None else self.seq, frames)

    def seek(self, seq: int) -> None:
        """Hold at ``seq`` (the nearest kept frame at or before it)."""
        self.seq = self.session.seq_moved(seq, 0)

    def behind(self) -> int:
        """How many frames newer than the cursor are kept (0 while following)."""
        return 0 if self.seq is None else self.session.frames_after(self.seq)

    def frames_after(self, seq: int, limit: int) -> tuple[list[Frame], int]:
        """(up to ``limit`` kept frames after ``seq``, the newest seq): references, for
        the caller to encode without the session's lock (serve's ``/frames``)."""
        return self.session.frames_since(seq, limit)


class RecordingCursor(LiveCursor):
    """A position in a recording; its session holds the decoded window around it."""

    def __init__(self, recording: Recording, detect_config: DetectConfig = DetectConfig()):
        super().__init__(Session(f"replay:{recording.path.name}", detect_config=detect_config,
                                 history_bytes=None), kind="recording")
        self.recording = recording
        self.detect_config = detect_config
        bounds = recording.seq_bounds()
        self.first_seq, self.last_seq = bounds if bounds is not None else (0, 0)
        self.total_frames = recording.count()  # nothing is decoded before the first seek

    @property
    def following(self) -> bool:
        return False  # a recording has no "now" to follow

    def follow(self) -> None:
        """To the recording's last frame (it has no "now" to follow)."""
        self.seek(self.last_seq)

    def hold(self) -> None:
        pass

    def _load_around(self, seq: int) -> None:
        """Decode the frames from LEAD_S before ``seq`` to AHEAD_FRAMES after it."""
        start_seq = self.recording.seq_before(seq, LEAD_S)
        frames = list(self.recording.frames(start_seq, seq + AHEAD_FRAMES))
        self.session.replace_timeline(frames, len(frames) + 1)

    def seek(self, seq: int) -> None:
        """Hold at ``seq`` (within the recording), decoding a new window when needed."""
        seq = max(self.first_seq, min(self.last_seq, seq))
        bounds = self.session.seq_bounds()
        if bounds is None or not bounds[0] <= seq <= bounds[1] or (
                seq > bounds[1] - EDGE_FRAMES and seq + EDGE_FRAMES < self.last_seq):
            self._load_around(seq)
        self.seq = self.session.seq_moved(seq, 0)

    def step(self, frames: int) -> None:
        """``frames`` recorded frames later or earlier, across the decoded window's edge."""
        if self.seq is None:
            return
        moved = self.session.seq_moved(self.seq, frames, clamp=False)
        self.seek(moved if moved is not None else self.seq + frames)

    def frames_ahead(self, limit: int) -> list[Frame]:
        """Up to ``limit`` decoded frames after the cursor (a play clock walks them)."""
        if self.seq is None:
            return []
        return self.session.frames_since(self.seq, limit)[0]

    def views(self, from_seq: int | None = None, to_seq: int | None = None,
              pin: Pin | None = None) -> Iterator[View]:
        """Every View of the recording from ``from_seq`` to ``to_seq`` in order, folded
        from ``LEAD_S`` earlier so the detector has its history (export, report); memory
        stays bounded, and the cursor's own position is not moved.  Where the frames'
        clock goes back (a source that restarted), the fold starts again from that
        frame: a new segment, not frames thrown away."""
        def fresh() -> Session:
            return Session(self.session.label, detect_config=self.detect_config,
                           history_bytes=None, history_frames=VIEWS_FRAMES)

        session = fresh()
        start = None if from_seq is None else self.recording.seq_before(from_seq, LEAD_S)
        for frame in self.recording.frames(start, to_seq):
            if not session.add_frame(frame):  # out of time order: a new segment
                session = fresh()
                session.add_frame(frame)
            if from_seq is None or frame.seq >= from_seq:
                view = session.view(pin=pin)
                if view is not None:
                    yield view


@dataclass(frozen=True)
class Poll(Generic[T]):
    """One answer of a poll, numbered in the order they landed."""
    seq: int
    time_wall_s: float
    value: T


class PollCursor(Generic[T]):
    """A position in the last polls (the fleet's kind): following the newest (``seq`` None)
    or held on one, stepped and sought within those kept: at most ``keep`` polls and
    ``budget`` of ``weight`` in all (the fleet: rows), the newest always.  A held poll that
    falls out of them moves the position to the oldest kept."""

    def __init__(self, keep: int = POLLS_KEPT, budget: int = POLL_ITEMS_KEPT,
                 weight: Callable[[T], int] = lambda value: 1, kind: str = "fleet"):
        self.kind = kind
        self.keep, self.budget, self.weight = max(1, keep), budget, weight
        self.seq: int | None = None  # None: follow the newest poll
        self._polls: deque[Poll[T]] = deque()
        self._weight = 0
        self._next_seq = 0

    @property
    def following(self) -> bool:
        return self.seq is None

    def __len__(self) -> int:
        return len(self._polls)

    def add(self, value: T, time_wall_s: float) -> Poll[T]:
        """A poll landed: kept as the newest, the oldest let go of beyond the bounds."""
        poll = Poll(self._next_seq, time_wall_s, value)
        self._next_seq += 1
        self._polls.append(poll)
        self._weight += self.weight(value)
        while len(self._polls) > 1 and (len(self._polls) > self.keep
                                        or self._weight > self.budget):
            self._weight -= self.weight(self._polls.popleft().value)
        if self.seq is not None:
            self.seq = max(self.seq, self._polls[0].seq)
        return poll

    def view_at(self, seq: int | None = None) -> Poll[T] | None:
        """The poll at ``seq``, or at the cursor (the newest while following)."""
        if not self._polls:
            return None
        seq = self.seq if seq is None else seq
        if seq is None:
            return self._polls[-1]
        oldest = self._polls[0].seq
        return self._polls[max(0, min(len(self._polls) - 1, seq - oldest))]

    def follow(self) -> None:
        self.seq = None

    def hold(self) -> None:
        """Stop at the newest poll; later ones are kept, not shown."""
        if self._polls:
            self.seq = self._polls[-1].seq

    def step(self, polls: int) -> None:
        """``polls`` polls later (earlier, when negative), held there; within those kept."""
        shown = self.view_at()
        if shown is not None:
            self.seek(shown.seq + polls)

    def seek(self, seq: int) -> None:
        """Hold at ``seq`` (the nearest kept poll)."""
        poll = self.view_at(seq)
        if poll is not None:
            self.seq = poll.seq

    def behind(self) -> int:
        """How many polls newer than the cursor are kept (0 while following)."""
        if self.seq is None or not self._polls:
            return 0
        return self._polls[-1].seq - self.seq
