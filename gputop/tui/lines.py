"""A widget that shows rows of cells and repaints only the cells that changed.

A terminal repaint costs CPU and, over SSH, bytes.  Textual repaints whatever
region a widget marks dirty, so instead of ``refresh()`` (the whole widget)
this marks, per row, only the span between the first and the last changed
cell.  With the sweep plots that is one or two columns per tick.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from gputop.tui.render import Row, fit
from gputop.tui.theme import restyle


def _strip(cells: Row, cuts: tuple[int, ...], base: Style) -> Strip:
    """Cells as a strip of runs of one style on the widget's ``base`` style, also cut at
    ``cuts``.

    Textual's partial update writes whole segments from the one containing the first
    dirty cell, so cutting at the changed span's edges keeps an update to those cells.
    The base style is combined here rather than by a second pass (``Strip.apply_style``)."""
    segments: list[Segment] = []
    text, style = "", None
    for x, (ch, ch_style) in enumerate(cells):
        if text and (ch_style is not style or x in cuts):
            segments.append(Segment(text, base + restyle(style) if style else base))
            text = ""
        text += ch
        style = ch_style
    if text:
        segments.append(Segment(text, base + restyle(style) if style else base))
    return Strip(segments, len(cells))


class DiffLines(Widget):
    """Base for panes: subclasses call ``show(rows)`` with the rows for the current size."""

    DEFAULT_CSS = "DiffLines { height: 1fr; }"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._rows: list[Row] = []
        self._strips: dict[int, Strip] = {}
        self._cuts: dict[int, tuple[int, int]] = {}  # per row: the last changed span
        self._base_style = None
        self._width = 0
        self.repainted_cells = 0  # cells marked dirty so far: what the benchmark and tests read

    def show(self, rows: list[Row]) -> None:
        width, height = self.size.width, self.size.height
        rows = [fit(r, width) for r in rows[:height]]
        rows += [fit([], width)] * (height - len(rows))
        if width != self._width or len(rows) != len(self._rows):
            self._width, self._rows, self._strips, self._cuts = width, rows, {}, {}
            self.repainted_cells += width * height
            self.refresh()
            return
        regions = []
        for y, (old, new) in enumerate(zip(self._rows, rows)):
            if old == new:
                continue
            first = next(i for i in range(width) if old[i] != new[i])
            last = next(i for i in range(width - 1, -1, -1) if old[i] != new[i])
            regions.append(Region(first, y, last - first + 1, 1))
            self._strips.pop(y, None)
            self._cuts[y] = (first, last + 1)
            self.repainted_cells += last - first + 1
        self._rows = rows
        if regions:
            self.refresh(*regions)

    def render_line(self, y: int) -> Strip:
        """The row as a strip on the widget's base style, cached until the row or the
        widget's style changes (computing ``rich_style`` per line is costly)."""
        if self._base_style is None:
            self._base_style = self.rich_style
        if y >= len(self._rows):  # styled: filters such as NO_COLOR's need a style
            return Strip.blank(self.size.width, self._base_style)
        strip = self._strips.get(y)
        if strip is None:
            strip = _strip(self._rows[y], self._cuts.get(y, ()), self._base_style)
            self._strips[y] = strip
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None
        self._strips.clear()

    def repaint_all(self) -> None:
        """Draw every cell again on the next show (after a theme change)."""
        self._strips.clear()
        self._base_style = None
        self._width = -1
        self.refresh()

    def on_resize(self) -> None:
        self._width = -1  # next show() repaints everything at the new size
        self.redraw()

    def redraw(self) -> None:
        """Rebuild rows from the current view; subclasses override."""
