"""Text building blocks for panes: rows of styled cells, bars, the sweep plot, formatting.

Panes build plain ``Row`` lists (no widgets), which keeps them pure functions of
the view and lets ``DiffLines`` repaint only the cells that changed.  Only
single-width characters are used, so one character is one terminal cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.style import Style

Cell = tuple[str, Style | None]
Row = list[Cell]

EIGHTHS_VERTICAL = " ▁▂▃▄▅▆▇█"
EIGHTHS_HORIZONTAL = " ▏▎▍▌▋▊▉█"

DIM = Style(dim=True)
BOLD = Style(bold=True)
ALERT = Style(color="red", bold=True)
WARN = Style(color="yellow")
OK = Style(color="green")


def row(*parts: tuple[str, Style | None] | str) -> Row:
    """A row from strings (unstyled) and (text, style) pairs."""
    cells: Row = []
    for part in parts:
        text, style = (part, None) if isinstance(part, str) else part
        cells.extend((ch, style) for ch in text)
    return cells


def fit(cells: Row, width: int) -> Row:
    """Cut or pad a row to exactly ``width`` cells."""
    if len(cells) >= width:
        return cells[:width]
    return cells + [(" ", None)] * (width - len(cells))


def hbar(fraction: float | None, width: int, style: Style | None = None) -> Row:
    """A horizontal bar of ``width`` cells with eighth-cell resolution; blank when unknown."""
    if width <= 0:
        return []
    if fraction is None:
        return [("·", DIM)] * width
    eighths = int(round(max(0.0, min(1.0, fraction)) * width * 8))
    full, rest = divmod(eighths, 8)
    text = "█" * full + (EIGHTHS_HORIZONTAL[rest] if rest and full < width else "")
    return [(ch, style) for ch in text.ljust(width)]


def sweep_columns(points: Sequence[tuple[float, float | None]], end_time_s: float,
                  window_s: float, width: int) -> list[float | None]:
    """Sweep-style plot columns: slot k (of width window_s/width seconds) is drawn at
    column k % width, so each new sample overwrites one column instead of scrolling
    every column.  Slots older than the window are None (blank); values average."""
    if width <= 0:
        return []
    slot_s = window_s / width
    end_slot = math.floor(end_time_s / slot_s + 1e-9)
    sums: dict[int, list[float]] = {}
    for t, value in points:
        if value is None:
            continue
        slot = math.floor(t / slot_s + 1e-9)
        if end_slot - width < slot <= end_slot:
            sums.setdefault(slot, []).append(value)
    columns: list[float | None] = [None] * width
    for slot, values in sums.items():
        columns[slot % width] = sum(values) / len(values)
    return columns


def sweep_cursor(end_time_s: float, window_s: float, width: int) -> int:
    """Column just after the newest slot: drawn as the moving cursor gap."""
    slot_s = window_s / width
    return (math.floor(end_time_s / slot_s + 1e-9) + 1) % width


def plot_rows(columns: Sequence[float | None], cursor: int | None, height: int, top: float,
              style: Style | None) -> list[Row]:
    """Vertical bars with eighth-cell resolution; ``top`` is the value of a full column."""
    rows: list[Row] = [[] for _ in range(height)]
    for x, value in enumerate(columns):
        if x == cursor:
            for r in range(height):
                rows[r].append(("│", DIM))
            continue
        level = 0 if value is None or top <= 0 else int(round(min(1.0, value / top) * height * 8))
        for r in range(height):
            from_bottom = height - 1 - r
            fill = max(0, min(8, level - from_bottom * 8))
            rows[r].append((EIGHTHS_VERTICAL[fill], style if fill else None))
    return rows


def nice_top(values: Sequence[float | None], floor: float = 1.0) -> float:
    """A round axis maximum (1, 2, 5 x 10^k) at or above the largest value."""
    peak = max((v for v in values if v is not None), default=0.0)
    peak = max(peak, floor)
    exponent = 10 ** math.floor(math.log10(peak))
    for step in (1, 2, 5, 10):
        if step * exponent >= peak:
            return step * exponent
    return 10 * exponent


# ---------------------------------------------------------------- formatting

def na(reason: str | None) -> str:
    return f"n/a ({reason})" if reason else "n/a"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"


def gib(value_bytes: int | float | None, digits: int = 1) -> str:
    return "n/a" if value_bytes is None else f"{value_bytes / 2**30:.{digits}f}"


def duration_us(value_us: float | None) -> str:
    if value_us is None:
        return "n/a"
    if value_us >= 1_000_000:
        return f"{value_us / 1e6:.2f} s"
    if value_us >= 1000:
        return f"{value_us / 1000:.1f} ms"
    return f"{value_us:.0f} us" if value_us >= 10 else f"{value_us:.1f} us"


def rate(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value >= 100_000:
        return f"{value / 1000:,.0f}k"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"
