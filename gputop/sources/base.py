"""The protocol every source follows, and the partial reading a poll returns.

A source is opened once, polled once per tick from its own worker thread and
closed once; a source never has two polls in flight.  ``poll`` returns a ``Reading``: the
parts of a frame this source knows.  A source that fails raises ``SourceError`` (or anything else); the
sampler turns that into ``SourceStatus(ok=False, reason)`` so the screen shows
"n/a (reason)" while every other source keeps running.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gputop.schema import FrameParts


class SourceError(RuntimeError):
    """A source cannot deliver this tick; the message is shown to the user as the reason."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading(FrameParts):
    detail: str | None = None  # shown on the explain page while the source works
    # Seconds into the poll at which the data was read (e.g. when an engine's response
    # arrived); None means at the poll's end.  The sampler stamps the reading with it.
    taken_after_s: float | None = None


class Source(Protocol):
    name: str

    def open(self) -> None: ...

    def poll(self, time_mono_s: float) -> Reading: ...

    def close(self) -> None: ...
