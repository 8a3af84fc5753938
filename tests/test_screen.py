"""What the user sees at a glance, at the four sizes people run it at (200x50, 132x40,
110x30, 80x24): plot scales and the time axis never overwritten across a whole sweep,
text that fits by rule (whole parts dropped, "…" where cut), a banner that is never cut,
the storm readable without colour, and a demo that says what it shows."""

from __future__ import annotations

import re

import pytest

from gputop.session import Session
from gputop.tui.app import GputopApp
from gputop.tui.fitting import ELLIPSIS, Col, column_widths, fit, fit_parts, flow, plural
from gputop.tui.panes.base import Ctx
from gputop.tui.render import row
from gputop.tui.widgets import banner_rows
from tests.conftest import sim_timeline, sim_frames
from tests.test_tui import text_rows

SIZES = [(200, 50), (132, 40), (110, 30), (80, 24)]
PLOT_GLYPHS = set(" ▁▂▃▄▅▆▇█")
WINDOW_S = 60.0


def text(cells) -> str:
    return "".join(ch for ch, _ in cells)


async def pane_sizes(make_app, size) -> dict[str, tuple[int, int]]:
    """The size each grid pane gets at this terminal size (one at a time when narrow)."""
    sizes = {}
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in "123456":
            if app.has_class("-narrow"):
                await pilot.press(key)
                await pilot.pause()
            pane = app._pane(key)
            sizes[key] = (pane.size.width, pane.size.height)
    return sizes


# ---------------------------------------------------------------- 1. plots

def axis_and_scale(rows: list[str]) -> tuple[int, str, str]:
    """(the row index of the time axis, that row, the scale row under it)."""
    marked = [i for i, r in enumerate(rows) if "▲" in r and "─" in r]
    assert len(marked) == 1, rows  # one "now", on one row
    assert all("▲" not in r or "wraps at ▲" in r for j, r in enumerate(rows) if j != marked[0])
    i = marked[0]
    return i, rows[i], rows[i + 1]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_no_marker_lands_on_a_label_across_a_whole_sweep(size):
    """Every frame of a window's worth (the "now" marker goes once around the plot): the
    marker is on a row of its own, the scale and window text under it is whole, and the
    plot rows above hold only bars."""
    frames = sim_frames("logprobs-storm", 130)

    def make_app():
        return GputopApp(Session("demo:logprobs-storm", frames=frames))

    sizes = await pane_sizes(make_app, size)
    app = make_app()
    scales = {"1": r"0-100% · 60s window", "2": r"SM active 0-100% · 60s window",
              "3": r"0-2,500 tok/s · 60s window"}
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        newest = app.session.seq_bounds()[1]
        positions: dict[str, list[int]] = {key: [] for key in scales}
        for index in range(newest - 61, newest + 1):  # the sim's seqs count frames from 0
            ctx = Ctx(app.session.view(index), 0, WINDOW_S, "demo:logprobs-storm")
            for key, scale in scales.items():
                width, height = sizes[key]
                rows = [text(fit(r, width)) for r in app._pane(key).rows(ctx, width, height)]
                i, axis, label = axis_and_scale(rows)
                bare = re.sub(r"now▲|▲", "▲", axis)
                bare = re.sub(r"▲\d+s ago", "▲", bare)
                assert set(bare) <= {"─", "▲"}, (key, index, axis)  # nothing else there
                assert label.startswith(scale[: min(len(scale), width)].split(" · ")[0]), label
                assert scale in label or len(scale) > width, (key, index, label)
                assert set(rows[i - 1]) <= PLOT_GLYPHS, rows[i - 1]  # the plot's last row
                positions[key].append(axis.index("▲"))
        for key, seen in positions.items():
            width = sizes[key][0]
            # a whole sweep: the marker reached both edges and wrapped around once
            assert min(seen) <= 1 and max(seen) >= width - 2, (key, width, sorted(set(seen)))
            assert sum(1 for a, b in zip(seen, seen[1:]) if b < a) == 1


def test_the_axis_says_which_side_is_now_and_which_is_older():
    frames = sim_frames("serving", 40)
    app = GputopApp(Session("demo:serving", frames=frames))
    ctx = Ctx(app.session.view(), 0, WINDOW_S, "demo:serving")
    axis, label = (text(r) for r in app._pane("1").axis_rows(ctx, 64, "0-100%"))
    assert "now▲60s ago" in axis  # left of the marker: newest; right of it: a window ago
    assert label == "0-100% · 60s window, time → wraps at ▲".ljust(64)


async def test_help_and_explain_say_how_to_read_the_sweep():
    app = GputopApp(Session("demo:serving", frames=sim_frames("serving", 10)))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert "right of it the oldest part of the window" in app.screen._text
        await pilot.press("escape", "2", "e")
        await pilot.pause()
        assert "now▲60s ago" in app.screen._text  # the SM pane's explain page


# ---------------------------------------------------------------- 4. text that fits

def test_fit_cuts_with_an_ellipsis_and_never_leaves_half_a_word_looking_whole():
    assert text(fit(row("systemd:jupyter.service"), 22)) == "systemd:jupyter.servi…"
    assert text(fit(row("abc"), 6)) == "abc   "
    assert text(fit(row("ran   SM 11%"), 6)) == "ran …"[:6].ljust(6)
    assert text(fit(row("wider"), 4)) == "wid…"
    assert text(fit(row("wide  "), 4)) == "wide"
    assert text(fit(row("ok    "), 2)) == "ok"  # only blanks cut: nothing to mark


def test_parts_go_whole_by_priority_and_columns_follow_their_content():
    parts = [(row("GPU 0"), 0), (row(" busy"), 2), (row(" 98%"), 1)]
    assert text(fit_parts(parts, 9)) == "GPU 0 98%"
    assert text(fit_parts(parts, 14)) == "GPU 0 busy 98%"
    columns = [Col("pid", "PID", 4), Col("owner", "CONTAINER", 23, priority=1, most=40),
               Col("command", "COMMAND", 60, least=16, grows=True)]
    wide = column_widths(columns, 180)
    assert wide["owner"] == 23 and wide["command"] == 180 - 4 - 23 - 2  # free space: command
    narrow = column_widths(columns, 30)
    assert "owner" not in narrow and narrow["command"] == 30 - 4 - 1
    assert plural(1, "GPU") == "1 GPU" and plural(8, "GPU") == "8 GPUs"
    assert plural(1, "process") == "1 process" and plural(2, "process") == "2 processes"
    lines, left = flow(["aaaa", "bb", "cccccccc", "d"], [8, 5])
    assert lines == [["aaaa", "bb"], ["d"]] and left == 1  # later, shorter ones still fit


BARS = set("▏▎▍▌▋▊▉█▓░▒▚·─|!▁▂▃▄▅▆▇")


async def screens(scenario: str, size, keys=()) -> dict[str, list[str]]:
    """What each shown pane, the status line, the banner and the key bar show; for each
    pane also (under "wide:KEY") its rows for the same frame 400 columns wide, the text
    every shown word must come from."""
    app = GputopApp(Session(f"demo:{scenario}", frames=sim_frames(scenario, 30)))
    out = {}
    async with app.run_test(size=size) as pilot:
        await pilot.press(*keys)
        await pilot.pause()
        for key in "12345678":
            pane = app._pane(key)
            if pane.display:
                out[key] = text_rows(pane)
                out[f"wide:{key}"] = [text(r) for r in pane.rows(pane.ctx, 400, pane.size.height)]
                pane.redraw()  # the pane's own state (its sweep) back at its size
        out["status"] = text_rows(app.query_one("#status"))
        out["banner"] = text_rows(app.query_one("#banner"))
        out["keys"] = text_rows(app.query_one("#keys"))
    return out


def cut_words(shown: list[str], wide: list[str]) -> list[str]:
    """Words at the right edge of ``shown`` rows that are not whole words of the same
    pane drawn wide and carry no "…": text cut mid-word ("servic", "1980 MH")."""
    vocabulary = {word.strip("─") for r in wide for word in r.split()}
    bad = []
    for r in shown:
        if not r or r[-1] == " ":
            continue
        word = r.split()[-1].rstrip("─")  # the time axis: "60s ago─────"
        if not word or word.endswith(ELLIPSIS) or set(word) <= BARS or word in vocabulary:
            continue
        bad.append(r)
    return bad


async def test_200_columns_show_names_whole_and_size_columns_to_them():
    shown = await screens("logprobs-storm", (200, 50), ("8",))
    table = "\n".join(shown["8"])
    assert "serving/vllm-llama-7d9f " in table and "systemd:jupyter.service " in table
    assert "--gpu-memory-utilization 0.9" in table
    grid = await screens("logprobs-storm", (200, 50))
    vram = [r for r in grid["4"] if "vllm serve" in r][0].rstrip()
    assert vram.endswith(ELLIPSIS) or vram.endswith("0.9")  # cut, and saying so
    assert "while running stays 8" in "\n".join(grid["banner"])


async def test_132_columns_keep_api_names_and_numbers_whole():
    shown = await screens("serving", (132, 40))
    launch = "\n".join(shown["5"])
    for api in ("cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch"):
        assert re.search(rf"^{api} ", launch, re.M), launch
    assert re.search(r"^cudaStreamSyn\w*… ", launch, re.M), launch  # shortened, visibly
    storm = await screens("logprobs-storm", (132, 40))
    header = storm["3"][0]
    # the baseline whole, as the model has it, or not at all: never a number cut short
    from gputop.tui.render import rate
    baseline = sim_timeline("logprobs-storm", 30).state(29).baseline_tokens_per_s
    assert f"of baseline {rate(baseline)} " in header + " " or "of baseline" not in header


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_no_text_is_cut_without_an_ellipsis(size):
    """The legend keeps its shares, the clocks row its units; any row that had to be cut
    ends in "…"; plurals agree with their numbers."""
    for scenario in ("logprobs-storm", "serving", "launch-jitter"):
        shown = await screens(scenario, size, ("4",) if size == (80, 24) else ())
        legend = [r for r in shown["4"] if r[:2] in ("██", "▓▓", "░░", "▒▒", "▚▚", "··")]
        assert legend and all(re.search(r"\d+%$", r.rstrip()) for r in legend), legend
        for r in shown["4"]:
            assert not re.search(r"\d MH\b|\d M…", r), r
        for name, rows in shown.items():
            for r in rows:
                assert "1 GPUs" not in r and "1 processes" not in r, (name, r)
            if not name.startswith("wide:") and name in "12345678":
                assert not cut_words(rows, shown[f"wide:{name}"]), (scenario, name)
        assert ELLIPSIS not in "".join(shown["keys"])  # the key bar drops hints whole
        banner = shown["banner"]
        if any(banner):
            assert len(banner) == 2 and ELLIPSIS not in "".join(banner), banner


def test_the_banner_fits_its_parts_into_two_rows_by_rule():
    evidence = ["a request with n=8 finished by 06:26:14", "SM active 11%",
                "waiting requests 0 -> 34 while running stays 8"]
    why = "one oversized request (e.g. n x logprobs over the vocabulary) stalls the batch"
    headline = "GPU 0 busy 98% but 35 tok/s (baseline 1,914) for 25s"
    for width in (80, 110, 132, 200):
        rows = [text(r).rstrip() for r in banner_rows(headline, evidence, "oversized request",
                                                     why, width)]
        assert len(rows) == 2 and all(len(r) <= width for r in rows)
        assert rows[0].startswith("⚠ " + headline)
        assert "likely: oversized request" in rows[1]
        joined = "\n".join(rows)
        assert ELLIPSIS not in joined
        whole = [item for item in evidence if item in joined]
        counted = re.search(r"\+(\d+) more: e explains", joined)
        assert len(whole) + (int(counted.group(1)) if counted else 0) == len(evidence), rows
        if width >= 200:
            assert not counted and why in joined  # room for everything
    narrow = [text(r).rstrip() for r in banner_rows(headline, evidence, "x", why, 40)]
    assert narrow[0].startswith("⚠ GPU 0 busy") and len(narrow) == 2  # by words, not cut
    assert " ".join(narrow).replace("⚠ ", "").split() == headline.split()


# ---------------------------------------------------------------- 2. without colour

def segments(app):
    """(row, text, style) of every drawn segment of the screen."""
    return [(y, seg.text, seg.style) for y, strip in
            enumerate(app.screen._compositor.render_strips()) for seg in strip if seg.text]


def styled(found, needle: str, row_text: dict[int, str]):
    """The styles of the segments that draw ``needle`` (found as a whole in one row; in
    "SM [11%]" only the bracketed part is the value looked at)."""
    context = needle.replace("[", "").replace("]", "")
    for y, line in row_text.items():
        at = line.find(context)
        if at < 0:
            continue
        if "[" in needle:
            at += needle.index("[")
            needle = needle[needle.index("[") + 1:needle.index("]")]
        x, styles = 0, []
        for sy, seg_text, style in found:
            if sy != y:
                continue
            if x < at + len(needle) and at < x + len(seg_text) and seg_text.strip():
                styles.append(style)
            x += len(seg_text)
        return styles
    raise AssertionError(f"{needle!r} is not on the screen")


@pytest.mark.parametrize("size", [(200, 50), (80, 24)], ids=["200x50", "80x24"])
async def test_the_storm_reads_without_colour(monkeypatch, size):
    """NO_COLOR: no colour at all (the terminal's own), and every alarm value in reverse
    video, which no normal text uses; Textual's own answer was greys (alarm red: 237)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = GputopApp(Session("demo:logprobs-storm", frames=sim_frames("logprobs-storm", 30)))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        found = segments(app)
        for _y, _text, style in found:
            assert style is None or ((style.color is None or style.color.is_default)
                                     and (style.bgcolor is None or style.bgcolor.is_default)), style
        rows: dict[int, str] = {}
        for y, seg_text, _ in found:
            rows[y] = rows.get(y, "") + seg_text
        alarms = ["⚠ [GPU 0 busy 98%]", "[ 98%]  ", "SM [11%]"]
        if size[0] >= 132:
            alarms += ["[2% of baseline]", "ITL p99 [2.23 s]", "[(89.3x)]", "[waiting 34]",
                       "SM active   [11%]"]
        for needle in alarms:
            assert all(s is not None and s.reverse for s in styled(found, needle, rows)), needle
        for needle in ("mem ctrl 18%",) if size[0] >= 132 else ("of the time",):
            assert not any(s is not None and s.reverse for s in styled(found, needle, rows))
        await pilot.press("T")  # themes need colour: T says so instead of changing one
        await pilot.pause()
        assert "themes are off" in text_rows(app.query_one("#status"))[0]


# ---------------------------------------------------------------- 3. the demo

def test_the_default_demo_opens_in_an_episode_and_says_which_phase():
    """``gputop --demo`` (the cycle): the storm comes first, and the live demo makes its
    lead-in before the first screen, so that screen already shows the open episode."""
    from gputop.demo import lead_frames
    from gputop.feed import compose
    from gputop.sources.registry import SourceOptions
    from gputop.sources.sim import CYCLE_ORDER, SCENARIOS

    assert sorted(CYCLE_ORDER) == sorted(SCENARIOS)  # each scenario once
    sampler, label = compose(SourceOptions(demo="cycle", demo_lead_frames=lead_frames(1.0)))
    session = Session(label, sampler)
    session.open()
    try:
        session.ticks(lead_frames(1.0))  # what cmd_live does before the first screen
        view = session.view()
        assert lead_frames(1.0) <= 13
        assert view.detector.active is not None and view.alert is not None
        # its cause already named: not the first tick's guess (it read "tiny kernels")
        assert view.alert.suspects[0][0] == "oversized_request", view.alert.suspects
        phase = view.sources["sim"].detail
        assert phase.startswith("logprobs-storm · the storm: ") and "1/8" in phase
        import time
        assert abs(view.frame.time_wall_s - time.time()) < 5  # the newest frame is "now"
    finally:
        session.close()


def test_the_cycle_names_each_scenario_s_own_cause():
    """The whole default cycle: each scenario is a server or job of its own, so the verdict
    of one (the storm's open episode, a baseline) never carries into the next. Past its
    lead-in, every scenario's ticks are named its true cause or nothing, most of them its
    cause; the healthy ones raise nothing (the cycle named 5 of 8 wrong before)."""
    from collections import Counter

    from gputop.sources.sim import CYCLE_ORDER, CYCLE_S, SCENARIOS

    timeline = sim_timeline(None, int(CYCLE_S) * len(CYCLE_ORDER))
    named: dict[str, Counter] = {name: Counter() for name in CYCLE_ORDER}
    for index in range(len(timeline)):
        t = timeline.frame(index).time_mono_s
        name = CYCLE_ORDER[int(t // CYCLE_S)]
        if t % CYCLE_S < 20:  # its lead-in, the onset and the episode's hold
            continue
        active = timeline.state(index).active
        named[name][active.suspects[0][0] if active and active.suspects else None] += 1
    for name, seen in named.items():
        cause = SCENARIOS[name].cause
        assert set(seen) <= {cause, None}, (name, seen)
        assert seen[cause] >= 0.9 * sum(seen.values()), (name, seen)


async def test_the_status_line_names_the_scenario_and_phase_at_80_columns():
    for scenario, phase in (("logprobs-storm", "the storm"), ("launch-jitter", "CPU contention"),
                            ("serving", "healthy serving")):
        shown = await screens(scenario, (80, 24))
        assert f"demo {scenario} · {phase}" in shown["status"][0], shown["status"]
    frames = sim_frames("logprobs-storm", 3)  # in the lead-in it says what comes next
    assert frames[-1].sources["sim"].detail.startswith(
        "logprobs-storm · healthy lead-in: it sets the baseline · the storm in ")


async def test_reasons_in_the_demo_are_true_for_the_demo():
    idle = await screens("idle-reserved", (200, 50))
    launch = "\n".join(idle["5"])
    assert "launch latency n/a (the simulated GPU makes no CUDA calls now)" in launch
    assert "--ebpf" not in launch and "root" not in launch
    storm = await screens("logprobs-storm", (200, 50))
    assert "MBU est. n/a (the engine estimates no bytes)" in "\n".join(storm["2"])


# ---------------------------------------------------------------- 5. pane 6 and n/a

async def test_host_pane_unpinned_shows_what_the_banner_cites():
    """Launch jitter cites CPU pressure, the run queue and involuntary switches: pane 6
    shows them for the host and the engine's tree, and the busiest GPU processes."""
    from gputop.model.point import counter_rate

    frames = sim_frames("launch-jitter", 30)
    app = GputopApp(Session("demo:launch-jitter", frames=frames))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        pane = app._pane("6")
        shown = "\n".join(text_rows(pane))
        assert pane.border_title == "6 Host"
        last, before = frames[-1], frames[-2]
        host = last.host
        assert f"host CPU {host.cpu_pct:.0f}% of 64 CPUs" in shown
        assert f"CPU pressure (some, 10 s) {host.cpu_pressure_some_pct:.0f}%" in shown
        assert f"run queue {host.run_queue}" in shown
        switches = counter_rate(before.host.ctx_switches_total, host.ctx_switches_total, 1.0)
        assert f"context switches/s {switches / 1000:,.0f}k" in shown
        involuntary = counter_rate(before.engine.ctx_involuntary, last.engine.ctx_involuntary,
                                   1.0)
        assert f"engine vllm (pid 4121): CPU 90%  involuntary {involuntary:,.0f}/s" in shown
        assert re.search(r"^ +4121 vllm +90%  vllm serve", shown, re.M), shown
        await pilot.press("p", "enter")  # pinned in the demo: the title says so
        await pilot.pause()
        await pilot.pause()
        shown = "\n".join(text_rows(pane))
        assert pane.border_title == "6 Host (pinned tree)"
        assert "CPU n/a" not in shown  # the tree's CPU from the recorded processes
        assert "needs two ticks" not in shown and "no threads in a demo's" in shown


@pytest.mark.parametrize("scenario", ["idle-reserved", "logprobs-storm", "launch-jitter",
                                      "allreduce-straggler"])
async def test_every_n_a_in_panes_1_to_6_says_why(scenario):
    shown = await screens(scenario, (200, 50))
    for key in "123456":
        for r in shown[key]:
            for match in re.finditer(r"n/a", r):
                assert r[match.end():match.end() + 2] == " (", (scenario, key, r)


def test_counted_words_agree_with_their_numbers():
    from gputop.units import plural

    assert [plural(n, "GPU") for n in (0, 1, 2)] == ["0 GPUs", "1 GPU", "2 GPUs"]
    assert plural(1, "process") == "1 process" and plural(3, "process") == "3 processes"
    assert plural(1, "damaged frame") == "1 damaged frame"
    assert plural(1_000, "frame") == "1,000 frames"


async def test_one_gpu_and_one_process_are_singular():
    shown = await screens("serving", (160, 45), ("7",))
    assert "1 GPU ·" in shown["7"][-1]
    app = GputopApp(Session("demo:serving", frames=sim_frames("serving", 10)))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("8", "slash", *"alice", "enter")
        await pilot.pause()
        assert text_rows(app._pane("8"))[-1].startswith("1 process matching /alice/")
        await pilot.press("escape", "space", "left")
        await pilot.pause()
        assert "PAUSED -1 frame " in text_rows(app.query_one("#status"))[0]


async def test_e_shows_all_the_evidence_the_banner_had_to_leave_out():
    app = GputopApp(Session("demo:logprobs-storm", frames=sim_frames("logprobs-storm", 30)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        banner = "\n".join(text_rows(app.query_one("#banner")))
        assert "more: e explains" in banner
        await pilot.press("e")
        await pilot.pause()
        page = app.screen._text
        alert = app.ctx().view.alert
        assert page.startswith("The open episode: " + alert.headline)
        assert all(item in page for item in alert.evidence)
