"""SVG snapshots of every scenario at a fixed frame (update with --snapshot-update)."""

import pytest

from gputop.sources.sim import SCENARIOS
from gputop.session import Session
from gputop.tui.app import GputopApp
from tests.conftest import sim_frames


def app_at(scenario, seconds=30, **kwargs):
    return GputopApp(Session(f"demo:{scenario}", frames=sim_frames(scenario, seconds, **kwargs)))


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scenario_screen(snap_compare, scenario):
    assert snap_compare(app_at(scenario), terminal_size=(160, 45))


def test_narrow_screen(snap_compare):
    assert snap_compare(app_at("logprobs-storm"), terminal_size=(80, 24))


def test_zoomed_vram_pane(snap_compare):
    assert snap_compare(app_at("idle-reserved"), press=["4"], terminal_size=(120, 36))


def test_help_screen(snap_compare):
    assert snap_compare(app_at("serving", 5), press=["question_mark"], terminal_size=(120, 40))
