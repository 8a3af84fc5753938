"""The FrameFeed protocol (gputop/feed.py): the registry returns sources, the feed is
composed from them, and a session drives the sampler and a remote feed alike."""

from __future__ import annotations

import pytest

from gputop.feed import compose
from gputop.remote import RemoteFeed
from gputop.sampler import Sampler
from gputop.serve import Server
from gputop.session import Session
from gputop.sources.registry import SourceOptions, sources_for
from gputop.sources.sim import SimSource
from tests.conftest import sim_frames


def test_the_registry_returns_sources_and_the_feed_is_composed_from_them():
    found = sources_for(SourceOptions(demo="serving", delay_s=0.5))
    assert [type(s) for s in found.sources] == [SimSource]
    assert found.label == "demo:serving" and found.interval_s == 0.5
    assert found.frame_time is not None  # the demo's virtual clock
    feed, label = compose(SourceOptions(demo="serving", delay_s=0.5))
    assert isinstance(feed, Sampler) and label == "demo:serving" and feed.error is None
    session = Session(label, feed)
    session.open()
    try:
        session.ticks(3)
    finally:
        session.close()
    assert len(session) == 3 and session.feed_error is None


@pytest.fixture
def serving():
    """A real serve on 127.0.0.1 over 12 frames of the demo."""
    source = Session("demo:serving", frames=sim_frames("serving", 12), history_bytes=None)
    server = Server(source, "127.0.0.1:0")
    server.start()
    yield f"http://127.0.0.1:{server.port}"
    server.close()


def test_a_session_drives_a_remote_feed_through_the_same_protocol(serving):
    feed, label = compose(SourceOptions(remote=serving, delay_s=0.1))
    assert isinstance(feed, RemoteFeed) and label == f"remote:{serving}"
    session = Session(label, feed)
    session.open()
    try:
        session.run(max_frames=12)
        with pytest.raises(ValueError, match="only the sampler has a virtual clock"):
            session.ticks(1)
    finally:
        session.close()
    assert [session.frame(seq).seq for seq in range(12)] == list(range(12))
    assert session.feed_error is None


def test_a_remote_host_that_refuses_is_one_line_at_setup():
    from gputop.sources.registry import SetupError

    with pytest.raises(SetupError, match="^--remote: cannot reach"):
        compose(SourceOptions(remote="http://127.0.0.1:9/"))
