"""``gputop fleet``: every GPU of many hosts on one screen, worst first.

A worker thread asks the hosts (or Prometheus) once per interval and posts the rows;
the screen draws only the rows that fit, so a thousand GPUs cost what a screenful does.
``/`` filters (host, GPU name, episode, suspect), Enter opens the highlighted host's own
dashboard (the app exits with its URL; the command line runs ``--remote`` on it and
comes back here when that is quit).  The table shows a position of the one cursor's
fleet kind (``gputop/cursor.py``'s ``PollCursor`` over the last polls): it follows the
newest poll; space holds it still to be read while polls go on landing, ← → step
through the polls kept, space again follows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from rich.style import Style
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from gputop.cursor import PollCursor
from gputop.fleet import GpuRow, ranked
from gputop.tui.lines import DiffLines
from gputop.tui.picker import PromptScreen
from gputop.tui.render import (ALERT, BOLD, DIM, WARN, Row, clip, hbar, highlighted, pct, rate,
                               row, scroll_start)
from gputop.units import plural, seconds_text, size_text

VRAM = Style(color="magenta")
BAR_CELLS = 12


def header_cells(host_w: int) -> Row:
    """Column titles with the widths ``row_cells`` uses."""
    return row((f"{'HOST':<{host_w}} {'GPU':>3} {'UTIL':>5} {'SM':>5} {'GAP':>5} {'TOK/S':>7} "
                f"{'ITL P99':>14} {'VRAM':<{BAR_CELLS}} {'USED':>8} EPISODE / SUSPECT", DIM))


def row_cells(r: GpuRow, width: int, host_w: int) -> Row:
    """One GPU as a table row of exactly ``width`` cells."""
    if r.error is not None:
        return row((f"{clip(r.host, host_w):<{host_w}} ", BOLD), (f"  n/a ({r.error})", WARN))
    gap = r.gap_pct
    ratio = r.latency_ratio
    itl = seconds_text(r.itl_p99_s) + (f" {ratio:.1f}x" if ratio else "")
    used = r.mem_used_bytes
    total = r.mem_total_bytes
    vram = hbar(used / total if used is not None and total else None, BAR_CELLS, VRAM)
    episode = ""
    if r.episode:
        episode = r.episode.replace("_", " ") + (f": {r.suspect.replace('_', ' ')}"
                                                 if r.suspect else "")
    hot = ALERT if r.episode else None
    return row((f"{clip(r.host, host_w):<{host_w}} ", BOLD),
               f"{r.gpu if r.gpu is not None else '-':>3} ",
               (f"{pct(r.util_pct):>5} ", hot), f"{pct(r.sm_pct):>5} ",
               (f"{'n/a' if gap is None else f'{gap:.0f}':>5} ", WARN if (gap or 0) >= 50 else None),
               f"{rate(r.tokens_per_s):>7} ", (f"{itl:>14} ", ALERT if (ratio or 0) >= 2 else None),
               *vram, f" {size_text(used, 0) if used is not None else 'n/a':>8} ",
               (episode, ALERT))


class FleetTable(DiffLines):
    """The ranked rows, the highlighted one reversed; only the visible slice is built."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rows: list[GpuRow] = []
        self.cursor = 0
        self.top = 0
        self.note = "asking the hosts..."

    def set_rows(self, rows: list[GpuRow]) -> None:
        keep = (self.rows[self.cursor].host, self.rows[self.cursor].gpu) \
            if 0 <= self.cursor < len(self.rows) else None
        self.rows = rows
        if keep is not None:
            self.cursor = next((i for i, r in enumerate(rows) if (r.host, r.gpu) == keep), 0)
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        self.redraw()

    def move(self, step: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + step))
            self.redraw()

    def redraw(self) -> None:
        width, height = self.size.width, self.size.height
        if width <= 0 or height <= 0:
            return
        host_w = max(8, min(28, max((len(r.host) for r in self.rows), default=8)))
        header = header_cells(host_w)
        visible = max(1, height - 1)
        self.top = scroll_start(self.cursor, self.top, visible, len(self.rows))
        out = [header]
        if not self.rows:
            out.append(row((self.note, DIM)))
        for i in range(self.top, min(len(self.rows), self.top + visible)):
            cells = row_cells(self.rows[i], width, host_w)
            out.append(highlighted(cells, width) if i == self.cursor else cells)
        self.show(out)


class Answer(NamedTuple):
    """One poll of the fleet: its rows, ranked, and how long asking took."""
    rows: list[GpuRow]
    took_s: float


class RowsArrived(Message):
    def __init__(self, rows: list[GpuRow], took_s: float):
        super().__init__()
        self.rows = rows
        self.took_s = took_s


class FleetApp(App):
    TITLE = "gputop fleet"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #head { height: 1; background: $panel; }
    FleetTable { height: 1fr; }
    #keys { height: 1; background: $panel; }
    """
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
        Binding("down,j", "move(1)", show=False), Binding("up,k", "move(-1)", show=False),
        Binding("pagedown", "page(1)", show=False), Binding("pageup", "page(-1)", show=False),
        Binding("home", "edge(0)", show=False), Binding("end", "edge(1)", show=False),
        Binding("slash", "filter", "filter"), Binding("enter", "open", "open"),
        Binding("r", "refresh", "refresh"),
        Binding("space", "hold", "hold"),
        Binding("left", "step(-1)", show=False), Binding("right", "step(1)", show=False),
    ]

    def __init__(self, ask: Callable[[], list[GpuRow]], source: str, interval_s: float = 5.0):
        super().__init__()
        self.ask = ask
        self.source = source
        self.interval_s = interval_s
        self.all_rows: list[GpuRow] = []  # the rows of the poll shown
        self.filter_text = ""
        self.took_s = 0.0
        self.updated: str | None = None
        # the poll shown: the newest, or held on one (space) while polls go on landing
        self.cursor: PollCursor[Answer] = PollCursor(weight=lambda answer: len(answer.rows))
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.chosen_url: str | None = None
        self.chosen_gpu: int | None = None  # the row's GPU, shown first in its dashboard

    def compose(self) -> ComposeResult:
        yield Static(id="head")
        yield FleetTable(id="table")
        # 78 cells: whole on an 80-column terminal
        yield Static("q quit  ↑↓ move  / filter  Enter open a host  r refresh  space hold  "
                     "← → polls", id="keys")

    def on_mount(self) -> None:
        self._render_head()
        threading.Thread(target=self._poll, name="gputop-fleet", daemon=True).start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                rows = self.ask()
            except Exception as exc:  # shown, never fatal
                rows = [GpuRow(host=self.source, url=None, gpu=None, error=str(exc)[:160])]
            self.post_message(RowsArrived(rows, time.monotonic() - started))
            self._wake.wait(max(0.5, self.interval_s - (time.monotonic() - started)))
            self._wake.clear()

    def on_rows_arrived(self, message: RowsArrived) -> None:
        self.cursor.add(Answer(ranked(message.rows), message.took_s), time.time())
        self._apply()  # held: the same rows, and the count of newer polls

    def _apply(self) -> None:
        poll = self.cursor.view_at()
        if poll is not None:
            self.all_rows, self.took_s = poll.value
            self.updated = time.strftime("%H:%M:%S", time.localtime(poll.time_wall_s))
        needle = self.filter_text.strip().lower()
        rows = [r for r in self.all_rows if needle in r.text()] if needle else self.all_rows
        table = self.query_one(FleetTable)
        table.note = "no GPU matches the filter" if needle else table.note
        table.set_rows(rows)
        self._render_head()

    def _render_head(self) -> None:
        hosts = {r.host for r in self.all_rows}
        gpus = sum(1 for r in self.all_rows if r.gpu is not None)
        episodes = sum(1 for r in self.all_rows if r.episode)
        silent = len({r.host for r in self.all_rows if r.error})
        parts = [f"gputop fleet │ {self.source} │ {plural(len(hosts), 'host')}, "
                 f"{plural(gpus, 'GPU')}",
                 f"{episodes} in an episode"]
        if silent:
            parts.append(f"{silent} not answering")
        if self.updated:
            parts.append(f"updated {self.updated} ({self.took_s:.1f}s)")
        if not self.cursor.following:
            back = -self.cursor.behind()
            parts.append(f"PAUSED {back:+d} poll{'' if abs(back) == 1 else 's'} (space: live)")
        if self.filter_text:
            parts.append(f"filter: {self.filter_text}")
        self.query_one("#head", Static).update(" │ ".join(parts))

    def on_unmount(self) -> None:
        self._stop.set()
        self._wake.set()

    def action_move(self, step: int) -> None:
        self.query_one(FleetTable).move(step)

    def action_page(self, step: int) -> None:
        table = self.query_one(FleetTable)
        table.move(step * max(1, table.size.height - 2))

    def action_edge(self, end: int) -> None:
        table = self.query_one(FleetTable)
        table.move(len(table.rows) if end else -len(table.rows))

    def action_refresh(self) -> None:
        self._wake.set()

    def action_hold(self) -> None:
        if self.cursor.following:
            self.cursor.hold()
        else:
            self.cursor.follow()
        self._apply()

    def action_step(self, polls: int) -> None:
        self.cursor.step(polls)
        self._apply()

    def action_filter(self) -> None:
        def done(text):
            if text is not None:
                self.filter_text = text
                self._apply()
        self.push_screen(PromptScreen("filter: host, GPU name, episode or suspect (empty: all)",
                                      self.filter_text, "filter"), done)

    def action_open(self) -> None:
        table = self.query_one(FleetTable)
        if 0 <= table.cursor < len(table.rows) and table.rows[table.cursor].url:
            self.chosen_url = table.rows[table.cursor].url
            self.chosen_gpu = table.rows[table.cursor].gpu
            self.exit()
