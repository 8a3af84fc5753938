"""A slow redraw must not move the sampler's tick grid (issue 24 items 1 and 7).

The dashboard draws from an immutable View it takes under the session's lock and then
lets go of, so the sampler's ``add_frame`` never waits for a pane.  Here a real sampler
ticks every 50 ms on the real clock while one pane takes 300 ms to draw; what is asserted
holds on crowded cores: frames land *during* every slow draw (impossible while a draw
held the lock: ``add_frame`` would have waited for it), the frames stamped inside a draw
reached the session before it ended, and every frame the sampler made was kept in order.
No durations are compared."""

from __future__ import annotations

import asyncio
import threading
import time

from gputop.sampler import Sampler
from gputop.session import Session
from gputop.sources.sim import SimSource
from gputop.tui.app import GputopApp

INTERVAL_S = 0.05
DRAW_S = 0.3
SLOW_DRAWS = 3


async def test_a_pane_taking_300_ms_to_draw_does_not_move_the_tick_grid():
    sampler = Sampler([SimSource("serving", gpus=1)], INTERVAL_S)
    session = Session("demo:serving", sampler, history_bytes=None)
    landed: list[tuple[int, float]] = []  # (seq, time_mono_s) as each frame reached the session
    landed_lock = threading.Lock()

    def note(frame) -> None:
        with landed_lock:
            landed.append((frame.seq, frame.time_mono_s))

    session.subscribe(note)
    app = GputopApp(session, interval_s=INTERVAL_S)
    pane = app._pane("1")
    draws: list[tuple[float, float, list[tuple[int, float]]]] = []  # (start, end, landed during)
    real_rows = pane.rows

    def slow_rows(ctx, width, height):
        start = time.monotonic()
        with landed_lock:
            before = len(landed)
        time.sleep(DRAW_S)  # drawing (Python drawing would hand over the GIL every 5 ms)
        with landed_lock:
            during = landed[before:]
        draws.append((start, time.monotonic(), during))
        return real_rows(ctx, width, height)

    pane.rows = slow_rows
    async with app.run_test(size=(160, 45)) as pilot:
        deadline = time.monotonic() + 60
        while len(draws) < SLOW_DRAWS + 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await pilot.pause()
    session.close()
    assert len(draws) > SLOW_DRAWS, f"only {len(draws)} slow draws in 60 s"
    for start, end, during in draws[1:]:  # the first draw may come before the first tick
        assert during, "no frame reached the session while a pane was drawing"
        stamped_inside = [seq for seq, t in during if start <= t <= end]
        assert stamped_inside, (f"the frames that landed during a draw were all taken before "
                                f"it: {during}")
    seqs = [seq for seq, _t in landed]
    assert seqs == list(range(len(seqs)))  # every tick's frame, in order, none refused
    times = [t for _seq, t in landed]
    assert times == sorted(times)
