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


def test_gpu_overview_8_gpus_wide(snap_compare):
    assert snap_compare(app_at("allreduce-straggler", gpus=8), press=["7"],
                        terminal_size=(200, 50))


def test_gpu_overview_8_gpus_80x24(snap_compare):
    assert snap_compare(app_at("allreduce-straggler", gpus=8), press=["7"],
                        terminal_size=(80, 24))


def test_process_list(snap_compare):
    assert snap_compare(app_at("logprobs-storm"), press=["8"], terminal_size=(160, 45))


def test_every_gpu_in_panes_1_and_2(snap_compare):
    assert snap_compare(app_at("allreduce-straggler", gpus=8), press=["a"],
                        terminal_size=(160, 45))


@pytest.mark.parametrize("theme", ["light", "colorblind", "high-contrast"])
def test_theme(snap_compare, theme):
    from gputop.tui.view_settings import ViewSettings

    app = GputopApp(Session("demo:logprobs-storm", frames=sim_frames("logprobs-storm", 30)),
                    view=ViewSettings(theme=theme))
    assert snap_compare(app, terminal_size=(160, 45))
