"""`gputop fleet` over real `gputop serve` processes: worst first, silent hosts shown as
such, `/` filters, Enter hands the chosen host's URL to the dashboard (--remote)."""

from __future__ import annotations

import time

from gputop import fleet
from gputop.tui.fleet import FleetApp, FleetTable
from tests.test_serve import serve  # noqa: F401 (fixture)


async def wait_rows(app, pilot, predicate, timeout_s: float = 40.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = app.query_one(FleetTable).rows
        if rows and predicate(rows):
            return rows
        await pilot.pause(0.3)
    raise AssertionError(f"rows never matched: {app.query_one(FleetTable).rows}")


async def test_the_storm_host_comes_first_and_enter_opens_it(serve):
    storm = serve("--demo", "logprobs-storm", "-d", "0.25")
    calm = serve("--demo", "serving", "--gpus", "2", "-d", "0.25")
    dead = "http://127.0.0.1:9"
    urls = [calm.url, dead, storm.url]
    app = FleetApp(lambda: fleet.ask_serves(urls, timeout_s=2.0), "test", interval_s=0.5)
    async with app.run_test(size=(140, 20)) as pilot:
        rows = await wait_rows(app, pilot, lambda rows: rows[0].episode == "busy_unproductive"
                               and rows[0].suspect == "oversized_request")
        assert rows[0].url == storm.url
        assert [r.url for r in rows].count(calm.url) == 2
        assert rows[-1].url == dead and rows[-1].error  # silent hosts last, with why
        head = str(app.query_one("#head").render())
        assert "3 hosts, 3 GPUs" in head and "1 not answering" in head
        calm_port = calm.url.rsplit(":", 1)[1]
        await pilot.press("slash")
        await pilot.pause(0.2)
        for ch in calm_port:
            await pilot.press(ch)
        await pilot.press("enter")
        rows = await wait_rows(app, pilot, lambda rows: all(r.url == calm.url for r in rows))
        assert len(rows) == 2
        await pilot.press("slash")
        await pilot.pause(0.2)
        for _ in range(len(calm_port)):
            await pilot.press("backspace")
        await pilot.press("enter")
        await wait_rows(app, pilot, lambda rows: len(rows) == 4)
        await pilot.press("home")
        await pilot.press("enter")
        await pilot.pause(0.2)
    assert app.chosen_url == storm.url and app.chosen_gpu == 0


def test_a_thousand_gpus_rank_in_well_under_a_second():
    rows = [fleet.GpuRow(host=f"h{h:03}", url=None, gpu=g, util_pct=90.0, sm_pct=float(g * h % 97),
                         episode="busy_unproductive" if (h, g) == (77, 3) else None)
            for h in range(125) for g in range(8)]
    started = time.perf_counter()
    ordered = fleet.ranked(rows)
    assert time.perf_counter() - started < 1.0
    assert (ordered[0].host, ordered[0].gpu) == ("h077", 3)
    gaps = [r.gap_pct for r in ordered[1:]]
    assert gaps == sorted(gaps, reverse=True)


async def test_enter_leads_to_the_hosts_own_panes_over_remote(serve):
    """What Enter in the fleet opens: the dashboard over the host's /frames, with the
    storm host's panes and banner, as on the host itself."""
    from gputop import cli
    from gputop.tui.app import GputopApp
    from tests.test_tui import text_of

    storm = serve("--demo", "logprobs-storm", "-d", "0.25")
    args = cli.build_parser().parse_args(["--remote", storm.url])
    session, pin = cli._setup(args)
    session.open()
    app = GputopApp(session, interval_s=0.25, pin=pin)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline and not app.query_one("#banner").display:
                await pilot.pause(0.3)
            assert app.query_one("#banner").display  # the storm's episode, read remotely
            assert "tok/s" in text_of(app.query_one("#pane-3"))
            assert session.label.startswith("remote") or storm.url in session.label
    finally:
        session.close()


async def test_space_holds_the_table_still_while_polls_go_on_and_arrows_step_through_them():
    """The 3 a.m. reader: the worst rows re-rank on every poll; held, the table stands
    still (the polls still land, counted in the head), ← → walk the polls kept."""
    import itertools

    polls = itertools.count()

    def ask():
        n = next(polls)
        return [fleet.GpuRow(host=f"poll{n}", url=f"http://h{n}:9464", gpu=0, util_pct=90.0,
                             sm_pct=10.0)]

    app = FleetApp(ask, "test", interval_s=3600.0)  # polls only when r asks

    async def shown(pilot, polls_seen: int) -> str:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(app.cursor) < polls_seen:
            await pilot.pause(0.05)
        await pilot.pause(0.05)
        return app.query_one(FleetTable).rows[0].host

    async with app.run_test(size=(140, 12)) as pilot:
        assert await shown(pilot, 1) == "poll0"
        await pilot.press("r")
        assert await shown(pilot, 2) == "poll1"  # following: the newest poll
        await pilot.press("space")
        for seen in (3, 4):
            await pilot.press("r")
            assert await shown(pilot, seen) == "poll1"  # held while polls land
        head = str(app.query_one("#head").render())
        assert "PAUSED -2 polls" in head
        await pilot.press("left")
        assert await shown(pilot, 4) == "poll0"
        await pilot.press("right", "right")
        assert await shown(pilot, 4) == "poll2"
        await pilot.press("space")
        assert await shown(pilot, 4) == "poll3"  # following again: the newest
        assert "PAUSED" not in str(app.query_one("#head").render())
        await pilot.press("space", "left")
        assert await shown(pilot, 4) == "poll2"
        await pilot.press("enter")  # opens the host of the table as shown
        await pilot.pause(0.2)
    assert app.chosen_url == "http://h2:9464"

