"""Text building blocks for panes: rows of styled cells, bars, the sweep plot, formatting.

Panes build plain ``Row`` lists (no widgets), which keeps them pure functions of
the view and lets ``DiffLines`` repaint only the cells that changed.  Only
single-width characters are used, so one character is one terminal cell.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from rich.style import Style

from gputop.tui.fitting import (clip, first_fitting, fit, fit_parts,  # noqa: F401 (re-exported)
                                plural)
from gputop.units import (duration_us, printable, seconds_text,  # noqa: F401 (re-exported)
                          size_text)

Cell = tuple[str, Style | None]
Row = list[Cell]

EIGHTHS_VERTICAL = " ▁▂▃▄▅▆▇█"
EIGHTHS_HORIZONTAL = " ▏▎▍▌▋▊▉█"

DIM = Style(dim=True)
BOLD = Style(bold=True)
ALERT = Style(color="red", bold=True)
WARN = Style(color="yellow")
OK = Style(color="green")


_PART_CACHE: dict[tuple[str, Style | None], tuple[Cell, ...]] = {}
_PART_CACHE_MAX = 512  # parts, each at most _PART_CACHED_CHARS: well under 1 MiB
_PART_CACHED_CHARS = 48


def row(*parts: tuple[str, Style | None] | str) -> Row:
    """A row from strings (unstyled) and (text, style) pairs.  Every string goes through
    ``printable``: this is the one door to the screen for text from outside.

    Most parts repeat from tick to tick (labels, the same value), so each part's cells are
    kept: building a cell tuple per character was the dashboard's costliest line of Python."""
    cells: Row = []
    for part in parts:
        key = (part, None) if isinstance(part, str) else part
        done = _PART_CACHE.get(key)
        if done is None:
            text, style = key
            done = tuple((ch, style) for ch in printable(text))
            if len(text) <= _PART_CACHED_CHARS:
                if len(_PART_CACHE) >= _PART_CACHE_MAX:
                    _PART_CACHE.clear()
                _PART_CACHE[key] = done
        cells.extend(done)
    return cells


def hbar(fraction: float | None, width: int, style: Style | None = None) -> Row:
    """A horizontal bar of ``width`` cells with eighth-cell resolution; blank when unknown."""
    if width <= 0:
        return []
    if fraction is None or not math.isfinite(fraction):
        return [("·", DIM)] * width
    eighths = int(round(max(0.0, min(1.0, fraction)) * width * 8))
    full, rest = divmod(eighths, 8)
    text = "█" * full + (EIGHTHS_HORIZONTAL[rest] if rest and full < width else "")
    return [(ch, style) for ch in text.ljust(width)]


def sweep_columns(points: Sequence[tuple[float, float | None]], end_time_s: float,
                  window_s: float, width: int) -> list[float | None]:
    """Sweep-style plot columns: slot k (of width window_s/width seconds) is drawn at
    column k % width, so each new sample overwrites one column instead of scrolling
    every column.  Values in a slot average; a slot narrower than the sampling interval
    holds the previous sample, while a real gap in the data (a missing reading, more
    than one interval) stays blank, as do slots older than the window."""
    if width <= 0:
        return []
    slot_s = window_s / width
    end_slot = math.floor(end_time_s / slot_s + 1e-9)
    sums: dict[int, list[float]] = {}
    times = [t for t, value in points if value is not None]
    for t, value in points:
        if value is None:
            continue
        slot = math.floor(t / slot_s + 1e-9)
        if end_slot - width < slot <= end_slot:
            sums.setdefault(slot, []).append(value)
    spacing = statistics.median(b - a for a, b in zip(times, times[1:])) if len(times) > 2 else 0
    hold_slots = math.ceil(spacing / slot_s - 1e-9) if spacing > slot_s else 0
    columns: list[float | None] = [None] * width
    last_value, last_slot = None, None
    for slot in range(end_slot - width + 1, end_slot + 1):
        values = sums.get(slot)
        if values:
            last_value, last_slot = sum(values) / len(values), slot
            columns[slot % width] = last_value
        elif last_slot is not None and slot - last_slot < hold_slots:
            columns[slot % width] = last_value
    return columns


def sweep_cursor(end_time_s: float, window_s: float, width: int) -> int:
    """Column just after the newest slot (the footer's "now" mark sits one before it)."""
    slot_s = window_s / width
    return (math.floor(end_time_s / slot_s + 1e-9) + 1) % width


def _glyph_column(value: float | None, height: int, top: float, style: Style | None) -> list[Cell]:
    """One column of a bar plot, top row first, with eighth-cell resolution."""
    if value is None or not top > 0 or not math.isfinite(value):
        level = 0
    else:
        level = int(round(max(0.0, min(1.0, value / top)) * height * 8))
        if level == 0 and value > 0:
            level = 1  # a small value is not "no data": it keeps a sliver
    column: list[Cell] = []
    for r in range(height):
        fill = max(0, min(8, level - (height - 1 - r) * 8))
        column.append((EIGHTHS_VERTICAL[fill], style if fill else None))
    return column


class SweepPlot:
    """Bar-plot rows for sweep columns, recomputing only the columns that changed.

    Between ticks a sweep plot changes one column, so the glyphs of the others are kept;
    any change of size, scale or style rebuilds all of them."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._values: list[float | None] = []
        self._columns: list[list[Cell]] = []

    def rows(self, values: Sequence[float | None], height: int, top: float,
             style: Style | None) -> list[Row]:
        key = (len(values), height, top, style)
        if key != self._key:
            self._key, self._values = key, []
            self._columns = [[] for _ in values]
        for x, value in enumerate(values):
            if not self._values or self._values[x] != value:
                self._columns[x] = _glyph_column(value, height, top, style)
        self._values = list(values)
        return [[column[r] for column in self._columns] for r in range(height)]


def nice_top(values: Sequence[float | None], floor: float = 1.0) -> float:
    """A round axis maximum (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k) at or above the
    largest value; values that are not finite, or beyond 1e15, are ignored (no plot of a
    counter that jumped to 1.7e308 is worth drawing, nor worth a crash)."""
    peak = max((v for v in values if v is not None and math.isfinite(v) and abs(v) < 1e15),
               default=0.0)
    peak = max(peak, floor if math.isfinite(floor) and 0 < floor < 1e15 else 1.0)
    exponent = 10 ** math.floor(math.log10(peak))
    for step in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if step * exponent >= peak:
            return step * exponent
    return 10 * exponent


# ---------------------------------------------------------------- formatting

def na(reason: str | None) -> str:
    return f"n/a ({reason})" if reason else "n/a"


def _known(value) -> bool:
    return value is not None and math.isfinite(value) and abs(value) < 1e18


def pct(value: float | None) -> str:
    return f"{value:.0f}%" if _known(value) else "n/a"


def gib(value_bytes: int | float | None, digits: int = 1) -> str:
    return f"{value_bytes / 2**30:.{digits}f}" if _known(value_bytes) else "n/a"




def rate(value: float | None) -> str:
    if not _known(value):
        return "n/a"
    if value >= 100_000:
        return f"{value / 1000:,.0f}k"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def count(value: float | None) -> str:
    return f"{value:,.0f}" if _known(value) else "n/a"


def spark(values: Sequence[float | None], top: float, style: Style | None = None) -> Row:
    """One row of eighth-block columns: a sparkline, blank where a value is unknown."""
    out: Row = []
    for value in values:
        if value is None or not math.isfinite(value) or not top > 0:
            out.append((" ", None))
            continue
        level = int(round(max(0.0, min(1.0, value / top)) * 8))
        out.append((EIGHTHS_VERTICAL[level] if level else "▁", style if level else DIM))
    return out


def gap_bar(util_pct: float | None, sm_pct: float | None, width: int, sm_style: Style | None,
            gap_style: Style | None) -> Row:
    """GPU-Util and SM activity in one bar: solid up to SM active, shaded from there to
    GPU-Util.  The shaded part is time the GPU counted as busy with its SMs idle."""
    if width <= 0:
        return []
    if util_pct is None:
        return [("·", DIM)] * width
    util_cells = int(round(max(0.0, min(100.0, util_pct)) / 100 * width))
    if sm_pct is None:
        return [("▒", gap_style)] * util_cells + [(" ", None)] * (width - util_cells)
    sm_cells = min(util_cells, int(round(max(0.0, min(100.0, sm_pct)) / 100 * width)))
    return ([("█", sm_style)] * sm_cells + [("░", gap_style)] * (util_cells - sm_cells)
            + [(" ", None)] * (width - util_cells))


CURSOR = Style(reverse=True)


def highlighted(cells: Row, width: int) -> Row:
    """A list's cursor row: ``cells`` fitted to ``width``, every cell in reverse video."""
    return [(ch, (style + CURSOR) if style else CURSOR) for ch, style in fit(cells, width)]


def scroll_start(cursor: int, first: int, visible: int, count: int) -> int:
    """The first row a list of ``count`` rows shows in ``visible`` lines so that ``cursor``
    stays in view, moving from ``first`` (the last start) only as far as it must."""
    if cursor < first:
        first = cursor
    elif cursor >= first + visible:
        first = cursor - visible + 1
    return max(0, min(first, count - visible))
