"""The one way text is made to fit: whole parts dropped by priority, columns sized to their
content and the space free, and an ellipsis wherever something is cut.

A row that does not fit loses its least important parts first (a whole part, never half
of one); what still does not fit is cut with "…" so a cut never reads as a whole word
("systemd:jupyter.servic" was a unit that does not exist).  Only single-width characters
are used, so one character is one cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.style import Style

from gputop.units import plural  # noqa: F401 (re-exported: one place for counted words)

Cell = tuple[str, Style | None]
Row = list[Cell]

ELLIPSIS = "…"
BLANK: Cell = (" ", None)


def fit(cells: Row, width: int) -> Row:
    """``cells`` as exactly ``width`` cells: padded, or cut with "…" in the last cell when
    anything but blanks is cut off."""
    if width <= 0:
        return []
    if len(cells) <= width:
        return cells + [BLANK] * (width - len(cells))
    if all(ch == " " for ch, _ in cells[width:]):
        return cells[:width]
    kept = cells[: width - 1]
    style = cells[width - 1][1]
    if kept and kept[-1][0] == " ":  # cut between words: "ran …", never "ran…" (a cut word)
        while len(kept) > 1 and kept[-2][0] == " ":
            kept.pop()
    return kept + [(ELLIPSIS, style)] + [BLANK] * (width - 1 - len(kept))


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, ending in "…" when cut."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 1].rstrip() + ELLIPSIS


def fit_parts(parts: Sequence[tuple[Row, int]], width: int) -> Row:
    """A row from ``(cells, priority)`` parts: while they do not fit, the part with the
    highest priority number goes (the rightmost of equals), whole; the rest is ``fit``."""
    kept = list(parts)
    while len(kept) > 1 and sum(len(cells) for cells, _ in kept) > width:
        worst = max(priority for _, priority in kept)
        if worst == min(priority for _, priority in kept):
            break  # only equals left: the last one is cut instead
        drop = max(i for i, (_, priority) in enumerate(kept) if priority == worst)
        kept.pop(drop)
    return fit([cell for cells, _ in kept for cell in cells], width)


def wrapped(text: str, width: int, style: Style | None = None, rows: int = 3) -> list[Row]:
    """A message too long for one row, on up to ``rows`` rows broken between words (the
    last one cut with "…" if even that is not enough): a reason is read whole."""
    import textwrap

    from gputop.units import printable  # text from outside: control characters made visible

    lines = textwrap.wrap(printable(text), max(1, width)) or [""]
    if len(lines) > rows:
        lines = lines[: rows - 1] + [" ".join(lines[rows - 1:])]
    return [fit([(ch, style) for ch in line], width) for line in lines]


def first_fitting(variants: Sequence[Row], width: int) -> Row:
    """The first of ``variants`` (fullest first) that fits ``width``; else the last, cut."""
    for cells in variants:
        if len(cells) <= width:
            return fit(cells, width)
    return fit(list(variants[-1]) if variants else [], width)


@dataclass(frozen=True)
class Col:
    """A table column: its header, how wide its content is, and how it gives way."""

    key: str
    header: str
    content: int  # the widest value it has to show now
    priority: int = 0  # higher goes first when the row is too narrow
    least: int = 0  # narrower than this it is dropped (0: its header's width)
    most: int = 0  # never wider than this (0: no limit)
    grows: bool = False  # takes the space left over (the command line)


def column_widths(columns: Sequence[Col], width: int, gap: int = 1) -> dict[str, int]:
    """Widths for ``columns`` in ``width`` cells: each as wide as its content (and header),
    within its bounds; when they do not fit, the growing column shrinks to its least, then
    columns go by priority; space left over goes to the growing column."""
    def wanted(c: Col) -> int:
        w = max(c.content, len(c.header))
        return min(w, c.most) if c.most else w

    def least(c: Col) -> int:
        return c.least or len(c.header)

    chosen = list(columns)
    while chosen:
        widths = {c.key: (least(c) if c.grows else wanted(c)) for c in chosen}
        if sum(widths.values()) + gap * (len(chosen) - 1) <= width:
            break
        droppable = [c for c in chosen if c.priority > 0]
        if not droppable:
            break
        worst = max(c.priority for c in droppable)
        chosen.remove([c for c in droppable if c.priority == worst][-1])
    widths = {c.key: (least(c) if c.grows else wanted(c)) for c in chosen}
    free = width - sum(widths.values()) - gap * (len(chosen) - 1)
    grower = next((c for c in chosen if c.grows), None)
    if grower is not None and free < 0:  # nothing left to drop: the grower gives way
        widths[grower.key] = max(1, widths[grower.key] + free)
    elif grower is not None and free > 0:
        limit = wanted(grower)
        widths[grower.key] += min(free, max(0, limit - widths[grower.key])) if grower.most \
            else free
    return widths


def flow(items: Sequence[str], free: Sequence[int], sep: str = "; ") -> \
        tuple[list[list[str]], int]:
    """``items`` laid out whole over lines with ``free[i]`` cells on line i, in order, each
    on the first line with room.  Returns (the items of each line, how many fit nowhere):
    an item too long for every line is left out, later shorter ones still get their place."""
    lines: list[list[str]] = [[] for _ in free]
    room = list(free)
    left_out = 0
    for item in items:
        for n in range(len(room)):
            need = len(item) + (len(sep) if lines[n] else 0)
            if need <= room[n]:
                lines[n].append(item)
                room[n] -= need
                break
        else:
            left_out += 1
    return lines, left_out
