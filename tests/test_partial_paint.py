"""The patch of Textual's private ChopsUpdate.render_segments: gated by version, verified
against Textual's own rendering before it is applied, and worth its bytes."""

from __future__ import annotations

import pytest
from rich.control import Control
from rich.segment import Segment
from textual._compositor import ChopsUpdate
from textual.strip import Strip

from gputop.tui import partial_paint


@pytest.fixture(autouse=True)
def unpatched():
    partial_paint.uninstall()
    yield
    partial_paint.uninstall()


def sweep_update(width: int = 60, changed: int = 40):
    """A plot row of ``width`` cells in one chop where only cell ``changed`` changed."""
    return ChopsUpdate([{0: Strip([Segment("▁" * width)])}], [(0, changed, changed + 1)],
                       [[width]])


def test_installs_on_the_verified_textual_and_writes_from_the_first_changed_cell():
    console = partial_paint._plain_console()
    before = ChopsUpdate.render_segments(sweep_update(), console)
    assert partial_paint.install() and partial_paint.status.startswith("active")
    after = ChopsUpdate.render_segments(sweep_update(), console)
    assert after == Control.move_to(40, 0).segment.text + "▁"
    assert before == Control.move_to(0, 0).segment.text + "▁" * 41  # from the left edge
    assert len(after.encode()) * 10 < len(before.encode())


def test_another_major_version_is_left_alone():
    original = ChopsUpdate.render_segments
    assert not partial_paint.install(version="9.0.0")
    assert ChopsUpdate.render_segments is original
    assert "not the verified 8.x" in partial_paint.status


def test_a_textual_whose_update_data_means_something_else_is_left_alone(monkeypatch):
    original = ChopsUpdate.render_segments
    # as if a release had made x2 inclusive: the known update would render one more cell
    monkeypatch.setattr(partial_paint, "verify",
                        lambda render: "Textual's update renders '0123456' + '7'")
    assert not partial_paint.install()
    assert ChopsUpdate.render_segments is original
    assert partial_paint.status.startswith("skipped")


def test_verify_reads_textuals_own_method_correctly():
    assert partial_paint.verify(ChopsUpdate.render_segments) is None
    assert partial_paint.verify(lambda update, console: "something else") is not None


def test_importing_the_app_does_not_patch():
    import importlib

    import gputop.tui.app as app

    importlib.reload(app)
    assert not getattr(ChopsUpdate, "_gputop_patched", False)
