"""The config file and GPUTOP_* variables: precedence, where each value came from, bad
files refused in one line with the line number, and S saving the layout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import pytest

from gputop.config import key_line, save_layout
from gputop.session import Session
from gputop.tui.app import GputopApp
from gputop.tui.view_settings import ViewSettings
from tests.conftest import sim_frames
from tests.test_tui import text_of


def gputop(tmp_path, *args, env=None, config: str | None = None):
    home = tmp_path / "xdg"
    if config is not None:
        (home / "gputop").mkdir(parents=True, exist_ok=True)
        (home / "gputop" / "config.toml").write_text(config)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GPUTOP_")}
    environ.update({"XDG_CONFIG_HOME": str(home), "PYTHONPATH": os.getcwd(), **(env or {})})
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True,
                          text=True, timeout=60, env=environ)


def printed(result) -> dict[str, tuple[str, str]]:
    """key -> (value, source) from `gputop config --print`."""
    out = {}
    for line in result.stdout.splitlines():
        if line.startswith("#"):
            continue
        key, value, source, _ = re.split(r"\s{2,}", line.strip())
        out[key] = (value, source)
    return out


CONFIG = """# my gputop
delay_s = 2.5
theme = "light"
readonly = true
hidden_panes = [5, 6]
engines = ["http://127.0.0.1:8000/metrics"]

[detector]
hold_s = 5
busy_util_pct = 80

[serve]
listen = "0.0.0.0:9500"
"""


def test_precedence_command_line_environment_file_default(tmp_path):
    result = gputop(tmp_path, "-d", "0.5", "config", "--print", config=CONFIG,
                    env={"GPUTOP_THEME": "colorblind", "GPUTOP_DETECTOR_HOLD_S": "7"})
    assert result.returncode == 0, result.stderr
    got = printed(result)
    assert got["delay_s"] == ("0.5", "command line")
    assert got["theme"] == ('"colorblind"', "environment GPUTOP_THEME")
    assert got["detector.hold_s"] == ("7.0", "environment GPUTOP_DETECTOR_HOLD_S")
    assert got["readonly"] == ("true", "file line 4")
    assert got["hidden_panes"] == ('["5", "6"]', "file line 5")
    assert got["detector.busy_util_pct"] == ("80.0", "file line 10")
    assert got["serve.listen"] == ('"0.0.0.0:9500"', "file line 13")
    assert got["window_s"] == ("60.0", "default")


def test_settings_reach_the_commands(tmp_path):
    """The file's detector threshold and the environment's delay act on a snapshot."""
    result = gputop(tmp_path, "--demo", "serving", "snapshot", "--samples", "2",
                    config="[detector]\nbusy_util_pct = 80\n", env={"GPUTOP_DELAY_S": "0.2"})
    assert result.returncode == 0, result.stderr
    from gputop import cli

    args = cli.build_parser().parse_args(["--demo", "serving"])
    os.environ["GPUTOP_READONLY"] = "yes"
    try:
        cli._apply_config(args, ["--demo", "serving"])
    finally:
        del os.environ["GPUTOP_READONLY"]
    assert args.readonly is True


@pytest.mark.parametrize("config, message", [
    ('theme = "light"\ndelay_s = "fast"\n', "line 2: delay_s"),
    ('theme = "light"\n\n[detector]\nhold_s = true\n',
     "line 4: detector.hold_s expected a number, got True"),
    ('[detector]\nhold_s = "x"\n', "line 2: detector.hold_s expected seconds from 0 to 600, got 'x'"),
    ('theme = "purple"\n', "line 1: theme expected a theme (dark, light, colorblind, "
     "high-contrast), got 'purple'"),
    ('theme = "drak"\n', "got 'drak'; did you mean 'dark'?"),
    ('ebpf = "ful"\n', "line 1: ebpf expected full, light or off, got 'ful'; did you mean 'full'?"),
    ('bogus = 1\n', "line 1: unknown key 'bogus'"),
    ('thmee = "dark"\n', "line 1: unknown key 'thmee'; did you mean 'theme'?"),
    ('hold_s = 3\n', "line 1: unknown key 'hold_s'; did you mean 'detector.hold_s'?"),
    ('[detector]\nbusy_util_pct = 250\n', "line 2: detector.busy_util_pct"),
    ('hidden_panes = [9]\n', "line 1: hidden_panes"),
    ('theme = "light\n', "at line 1"),
    ('readonly = "maybe"\n', "line 1: readonly expected true or false, got 'maybe'"),
])
def test_a_bad_config_is_one_line_with_its_line_and_exit_2(tmp_path, config, message):
    for args in (("--demo", "serving", "snapshot"), ("config",)):
        result = gputop(tmp_path, *args, config=config)
        assert result.returncode == 2, result
        assert result.stdout == "" and "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], lines


def test_a_bad_environment_value_names_the_variable(tmp_path):
    result = gputop(tmp_path, "config", env={"GPUTOP_WINDOW_S": "forever"})
    assert result.returncode == 2 and "environment GPUTOP_WINDOW_S: window_s" in result.stderr


def test_a_config_that_is_a_fifo_or_huge_is_refused_without_hanging(tmp_path):
    (tmp_path / "xdg" / "gputop").mkdir(parents=True)
    os.mkfifo(tmp_path / "xdg" / "gputop" / "config.toml")
    result = gputop(tmp_path, "config")
    assert result.returncode == 2 and "not a regular file" in result.stderr


def test_save_layout_keeps_comments_and_other_settings(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    save_layout({"pane": "4", "zoom": True, "theme": "high-contrast", "window_s": 300.0,
                 "all_gpus": False}, path)
    text = path.read_text()
    data = tomllib.loads(text)
    assert text.startswith("# my gputop\n") and data["theme"] == "high-contrast"
    assert data["pane"] == "4" and data["zoom"] is True and data["window_s"] == 300.0
    assert data["detector"] == {"hold_s": 5, "busy_util_pct": 80} and data["readonly"] is True
    assert key_line(text, "pane") < key_line(text, "detector.hold_s")  # above [detector]
    save_layout({"pane": "2"}, path)  # again: replaced in place, not added twice
    assert path.read_text().count("pane =") == 1


async def test_S_saves_what_the_app_shows_and_it_starts_that_way_again(tmp_path):
    path = tmp_path / "gputop" / "config.toml"
    app = GputopApp(Session("demo:serving", frames=sim_frames("serving", 5)),
                    view=ViewSettings(config_path=path))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("4", "T", "plus", "a", "S")
        await pilot.pause()
        status = text_of(app.query_one("#status"))
        assert "layout saved to" in status, status
    saved = tomllib.loads(path.read_text())
    assert saved == {"pane": "4", "zoom": True, "window_s": 120.0, "theme": "light",
                     "all_gpus": True}
    from gputop import cli

    args = cli.build_parser().parse_args([])
    os.environ["GPUTOP_CONFIG"] = str(path)
    try:
        cli._apply_config(args, [])
    finally:
        del os.environ["GPUTOP_CONFIG"]
    again = GputopApp(Session("demo:serving", frames=sim_frames("serving", 5)),
                      view=cli.view_settings(args))
    async with again.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert again.zoomed == "4" and again.theme_name == "light" and again.all_gpus
        assert again.window_s == 120.0 and again.theme == "textual-light"


async def test_hidden_panes_leave_the_grid_and_tab_skips_them():
    app = GputopApp(Session("demo:serving", frames=sim_frames("serving", 5)),
                    view=ViewSettings(hidden=("5", "6")))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert [p.key for p in app.panes if p.display] == ["1", "2", "3", "4"]
        await pilot.press("tab", "tab", "tab", "tab")
        assert app.current_pane == "1"
    app = GputopApp(Session("demo:serving", frames=sim_frames("serving", 5)),
                    view=ViewSettings(hidden=("1",), pane="1"))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert app.current_pane == "2" and app.focused is app._pane("2")
