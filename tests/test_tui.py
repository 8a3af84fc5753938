"""Keys and layouts of the dashboard, driven with Textual's Pilot over simulated frames."""

import subprocess
import sys


from gputop.session import Session
from gputop.tui.app import GputopApp
from gputop.tui.widgets import Banner, StatusBar, Summary, TextScreen
from tests.conftest import sim_frames


def text_rows(widget) -> list[str]:
    """What a DiffLines widget shows, one string per row."""
    return ["".join(ch for ch, _ in r) for r in widget._rows]


def text_of(widget) -> str:
    return "\n".join(text_rows(widget))


def make_app(scenario="logprobs-storm", count=20, gpus=None):
    frames = sim_frames(scenario, count + 30, gpus=gpus)
    app = GputopApp(Session(f"demo:{scenario}", frames=frames[:count]))
    app.spare_frames = frames[count:]
    return app


def shown_index(app) -> int:
    """The timeline index of the frame the screen shows (the View the panes draw)."""
    return app.ctx().view.index


def pane(app, key):
    return app.query_one(f"#pane-{key}")


async def test_all_six_panes_render_with_the_banner():
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        util = app.session.frame().gpus[0].util_gpu_pct
        assert util >= 90 and f"{util:.0f}%" in text_of(pane(app, "1"))
        assert "SM active" in text_of(pane(app, "2"))
        assert "tok/s" in text_of(pane(app, "3"))
        assert "KV free" in text_of(pane(app, "4"))
        assert "cudaLaunchKernel" in text_of(pane(app, "5"))
        assert "p pins a process tree" in text_of(pane(app, "6"))
        banner = app.query_one(Banner)
        assert banner.display and "busy" in text_of(banner) and "oversized request" in text_of(banner)
        assert pane(app, "1").has_class("alert") and pane(app, "3").has_class("alert")


async def test_healthy_scenario_has_no_banner():
    app = make_app("serving")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert not app.query_one(Banner).display
        assert not pane(app, "1").has_class("alert")


async def test_number_keys_zoom_and_unzoom():
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        for key in "123456":
            await pilot.press(key)
            await pilot.pause()
            assert app.zoomed == key
            shown = [p.key for p in app.panes if p.display]
            assert shown == [key]
            assert app.focused is pane(app, key)
            assert pane(app, key).size.width == 158  # the whole width inside its border
        await pilot.press("6")
        await pilot.pause()
        assert app.zoomed is None and [p.key for p in app.panes if p.display] == list("123456")
        await pilot.press("3", "escape")
        await pilot.pause()
        assert app.zoomed is None


async def test_tab_cycles_focus_through_panes():
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        seen = []
        for _ in range(6):
            seen.append(app.focused.id)
            await pilot.press("tab")
        assert seen == [f"pane-{k}" for k in "123456"]
        assert app.focused.id == "pane-1"


async def test_space_pauses_view_while_sampling_continues():
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("space")
        paused_at = shown_index(app)
        before = text_of(pane(app, "1"))
        for frame in app.spare_frames[:5]:
            app.add_frame(frame)
        await pilot.pause()
        assert len(app.session) == 25  # frames kept arriving
        assert shown_index(app) == paused_at
        assert text_of(pane(app, "1")) == before
        assert "PAUSED -5 frames" in text_of(app.query_one(StatusBar))
        await pilot.press("left", "left")
        assert shown_index(app) == paused_at - 2
        await pilot.press("right")
        assert shown_index(app) == paused_at - 1
        await pilot.press("space")
        await pilot.pause()
        assert app.paused_seq is None and shown_index(app) == 24
        assert "LIVE" in text_of(app.query_one(StatusBar))


async def test_history_stepping_shows_what_was_live_then():
    app = make_app(count=12)
    async with app.run_test(size=(160, 45)) as pilot:
        for _ in range(8):  # back to frame 3: before the storm, no banner
            await pilot.press("left")
        await pilot.pause()
        assert shown_index(app) == 3
        assert not app.query_one(Banner).display
        for _ in range(20):
            await pilot.press("right")
        await pilot.pause()
        assert shown_index(app) == 11
        assert app.query_one(Banner).display


async def test_brackets_switch_gpu():
    app = make_app("allreduce-straggler", gpus=4)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("right_square_bracket")
        assert app.gpu_index == 1
        await pilot.press("right_square_bracket", "right_square_bracket")
        await pilot.pause()
        assert app.gpu_index == 3
        assert "GPU 3 of 4" in text_of(app.query_one(StatusBar))
        await pilot.press("right_square_bracket")
        assert app.gpu_index == 0
        await pilot.press("left_square_bracket")
        assert app.gpu_index == 3
        await pilot.press("left_square_bracket")  # GPU 2 is the straggler: SM busy
        await pilot.pause()
        assert ">GPU2" in text_of(pane(app, "4"))


async def test_plus_minus_change_the_window():
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("plus")
        assert app.window_s == 120
        await pilot.press("minus", "minus")
        await pilot.pause()
        assert app.window_s == 30
        assert "30s window" in text_of(pane(app, "1"))
        for _ in range(10):
            await pilot.press("minus")
        assert app.window_s == 15


async def test_help_and_explain_screens():
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        assert "at least one kernel was running" in app.screen._text
        assert "space" in app.screen._text
        await pilot.press("escape")
        assert not isinstance(app.screen, TextScreen)
        await pilot.press("4", "e")
        await pilot.pause()
        text = app.screen._text
        assert "KV pool" in text and "from vllm cache config" in text and "weights:" in text
        await pilot.press("q")  # q closes the page, not the app
        assert not isinstance(app.screen, TextScreen)
        assert app.is_running


async def test_q_quits():
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_80x24_is_one_pane_under_at_most_three_rows_of_chrome():
    for scenario, banner in (("serving", False), ("logprobs-storm", True)):
        app = make_app(scenario)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.has_class("-narrow")
            assert [p.key for p in app.panes if p.display] == ["1"]
            summary = app.query_one(Summary)
            # the summary line, or the two-line banner in its place: never both
            assert app.query_one(Banner).display is banner
            assert summary.display is not banner
            if not banner:
                assert "tok/s" in text_of(summary)
            assert pane(app, "1").region.y <= 3  # status + at most two more rows above it
            await pilot.press("3")
            await pilot.pause()
            assert [p.key for p in app.panes if p.display] == ["3"]
            assert "gen tok/s" in text_of(pane(app, "3"))
            await pilot.press("tab")
            await pilot.pause()
            assert [p.key for p in app.panes if p.display] == ["4"]


async def test_too_small_terminal_says_so():
    app = make_app()
    async with app.run_test(size=(30, 10)) as pilot:
        await pilot.pause()
        notice = app.query_one("#too-small")
        assert notice.display
        assert "too small" in str(notice.render())
        assert not app.query_one("#body").display


async def test_only_changed_cells_are_repainted():
    app = make_app(count=12)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        util = pane(app, "1")
        before = util.repainted_cells
        app.add_frame(app.spare_frames[0])
        await pilot.pause()
        changed = util.repainted_cells - before
        area = util.size.width * util.size.height
        assert 0 < changed < area // 4  # the sweep plot moves a column, the numbers change


def test_nothing_outside_tui_imports_textual():
    code = ("import sys, gputop.cli, gputop.model.derive, gputop.sampler, gputop.sources.sim;"
            "sys.exit(1 if any(m == 'textual' or m.startswith('textual.') for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def late_engine_frames(late: int = 4):
    """The storm, with the engine answering nothing fresh enough for the last ``late`` ticks."""
    import dataclasses
    from gputop.schema import SourceStatus
    frames = sim_frames("logprobs-storm", 20)
    slow = SourceStatus(False, "slow: last reading 5s old, poll still running")
    return frames[:-late] + [dataclasses.replace(f, engine=None,
                                                 sources={**f.sources, "engine": slow})
                             for f in frames[-late:]]


async def test_a_late_engine_keeps_the_history_and_says_how_old():
    app = GputopApp(Session("demo:logprobs-storm", frames=late_engine_frames()))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        pane = text_of(app.query_one("#pane-3"))
        assert "tokens/s n/a (slow: last reading 5s old" in pane
        assert "last reading" in pane and "4s ago" in pane
        assert "busy unproductive" in pane  # the episode list is still there
        assert "█" in pane  # and the plot


def test_snapshot_reports_the_last_engine_reading_with_its_age():
    from gputop.model.derive import derive
    from gputop.export.snapshot import snapshot_dict
    from gputop.model.detect import make_fold
    from gputop.model.timeline import Timeline
    timeline = Timeline(100, make_fold())
    for frame in late_engine_frames():
        timeline.append(frame)
    data = snapshot_dict(derive(timeline, timeline.last_index), "demo")
    engine = data["engine"]
    assert engine["stale"] is True and engine["reading_age_s"] == 4.0
    assert engine["generation_tokens_per_s"] is not None
    assert data["gpus"][0]["vram"]["weights_bytes"] is not None  # still split, not "unsplit"
    # not "needs a throughput source": the engine is configured, its answer is late
    assert data["detector"]["note"].startswith("waiting for the engine: slow")


async def test_esc_from_pane_8_returns_to_the_pane_focused_last():
    from gputop.demo import demo_frames
    from gputop.session import Session
    from gputop.tui.app import GputopApp

    app = GputopApp(Session("demo:serving", frames=demo_frames("serving", 5)))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("tab", "tab")  # pane 3, reached without its number key
        await pilot.press("8", "escape")
        await pilot.pause()
        assert app.current_pane == "3" and app.focused is app._pane("3")
