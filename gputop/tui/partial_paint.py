"""Make Textual's partial screen updates start at the first changed cell.

Textual (8.x) marks dirty spans per line exactly, but when it writes an update it
crops each widget's line only at the end (``ChopsUpdate.render_segments`` has a
"TODO: crop to x extents"), so every changed row is rewritten from the widget's
left edge.  For sweep plots that is most of each row, every tick, over SSH.  This
replaces that one method with the same code plus the start crop.  If a future
Textual changes the class, the patch is skipped and only bandwidth is lost.
"""

from __future__ import annotations

from rich.console import Console
from rich.control import Control

try:
    from textual._compositor import ChopsUpdate
except ImportError:  # pragma: no cover - a Textual without it keeps its own behaviour
    ChopsUpdate = None


def _render_segments(self, console: Console) -> str:
    sequences: list[str] = []
    append = sequences.append
    move_to = Control.move_to
    last_y = self.spans[-1][0]
    for y, x1, x2 in self.spans:
        line = self.chops[y]
        for end, (x, strip) in zip(self.chop_ends[y], line.items()):
            if strip is None or x > x2 or end <= x1:
                continue
            start = max(x, x1)
            if start == x and end <= x2:
                piece = strip
            else:
                piece = strip.crop(start - x, min(end, x2) - x)
            append(move_to(start, y).segment.text)
            append(piece.render(console))
        if y != last_y:
            append("\n")
    return "".join(sequences)


def install() -> bool:
    """Patch once; returns whether the patch is active."""
    if ChopsUpdate is None or not all(hasattr(ChopsUpdate, a) for a in ("render_segments",)):
        return False
    if getattr(ChopsUpdate, "_gputop_patched", False):
        return True
    ChopsUpdate.render_segments = _render_segments
    ChopsUpdate._gputop_patched = True
    return True
