"""Where a session's frames come from: the ``FrameFeed`` protocol and its composition.

Two feeds make frames: the sampler (``sampler.py``), which polls the local sources a
registry names (``sources/registry.py`` returns sources only) on a tick grid, and the
remote feed (``remote.py``), which reads another host's ``gputop serve`` ``/frames``.
The session drives either through this protocol and does not ask which it has; only
the simulator's virtual clock (``Session.ticks``) needs the sampler itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from gputop.sampler import Sampler
from gputop.schema import Frame
from gputop.sources.registry import SetupError, Sources, SourceOptions, sources_for

if TYPE_CHECKING:
    from gputop.sources.proctree import PinState


class FrameFeed(Protocol):
    """Frames for a session, one ``on_frame`` call each, in time order."""

    # why no frames are coming now (a remote host that does not answer); None when they are
    error: str | None

    def open(self) -> None: ...

    def start(self, on_frame: Callable[[Frame], None]) -> None:
        """Feed in the background until ``stop``."""

    def run(self, on_frame: Callable[[Frame], None], max_frames: int | None = None) -> None:
        """Feed on this thread until ``stop`` or ``max_frames``."""

    def stop(self) -> None: ...

    def close(self) -> None: ...


def compose(options: SourceOptions, pin_state: PinState | None = None
            ) -> tuple[FrameFeed, str]:
    """(feed, label) for these options: the remote feed for ``--remote``, otherwise the
    sampler over the sources the registry returns; SetupError when nothing can be shown."""
    if options.remote is not None:
        from gputop.remote import RemoteFeed
        from gputop.sources.base import SourceError

        try:
            feed = RemoteFeed(options.remote, options.delay_s)
            feed.probe()  # refused, 404, not a gputop serve: one line now
        except (ValueError, SourceError) as exc:
            raise SetupError(f"--remote: {exc}") from None
        return feed, f"remote:{feed.base}"
    found: Sources = sources_for(options, pin_state)
    return Sampler(found.sources, found.interval_s, frame_time=found.frame_time), found.label
