"""Make Textual's partial screen updates start at the first changed cell.

Textual (8.x) marks dirty spans per line exactly, but when it writes an update it crops
each widget's line only at the end (``ChopsUpdate.render_segments`` has a "TODO: crop to x
extents"; upstream: Textualize/textual#5625), so every changed row is rewritten from the
widget's left edge.  For sweep plots that is most of each row, every tick, over SSH.  This
replaces that one private method with the same code plus the start crop.

A private method can change under us, so the patch is guarded three ways: pyproject pins
Textual below its next major version; ``install`` checks the installed version against
the ones verified (8.x); and before patching it renders a known update with Textual's own
method and checks that the data means what this code assumes (spans are (y, x1, x2) with
x2 exclusive, chops map x to a Strip, chop_ends give each chop's end), then renders it
with the patch and checks the start crop.  Any mismatch leaves Textual as it is: only
bandwidth is lost.  The commands that draw call ``install``; importing does nothing.
"""

from __future__ import annotations

import importlib.metadata

from rich.console import Console
from rich.control import Control
from rich.segment import Segment

try:
    from textual._compositor import ChopsUpdate
    from textual.strip import Strip
except ImportError:  # pragma: no cover - a Textual without it keeps its own behaviour
    ChopsUpdate = Strip = None

VERIFIED_MAJOR = 8  # textual 8.2.8
UPSTREAM_ISSUE = "Textualize/textual#5625"
_original = None
status = "not installed"  # why the patch is or is not active, for `gputop doctor`


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


def _known_update():
    """One line of ten cells in one chop; cells 3..6 changed."""
    return ChopsUpdate([{0: Strip([Segment("0123456789")])}], [(0, 3, 7)], [[10]])


def _plain_console() -> Console:
    return Console(width=20, color_system=None, force_terminal=True, legacy_windows=False)


def verify(render_segments) -> str | None:
    """None when ``render_segments`` (Textual's own, before patching) treats the known update
    as this module assumes; else what differs."""
    expected = Control.move_to(0, 0).segment.text + "0123456"  # end-crop only
    got = render_segments(_known_update(), _plain_console())
    return None if got == expected else f"Textual's update renders {got!r}, not {expected!r}"


def install(version: str | None = None) -> bool:
    """Patch once, if this Textual is one we verified; returns whether the patch is active."""
    global _original, status
    if ChopsUpdate is None or not hasattr(ChopsUpdate, "render_segments"):
        status = "skipped: this Textual has no ChopsUpdate.render_segments"
        return False
    if getattr(ChopsUpdate, "_gputop_patched", False):
        return True
    version = version or importlib.metadata.version("textual")
    major = version.split(".")[0]
    if not major.isdigit() or int(major) != VERIFIED_MAJOR:
        status = f"skipped: Textual {version} is not the verified {VERIFIED_MAJOR}.x"
        return False
    try:
        problem = verify(ChopsUpdate.render_segments)
        if problem is None:
            cropped = _render_segments(_known_update(), _plain_console())
            if cropped != Control.move_to(3, 0).segment.text + "3456":
                problem = f"the patch renders {cropped!r}"
    except Exception as exc:  # any surprise means: leave Textual alone
        problem = f"{type(exc).__name__}: {exc}"
    if problem is not None:
        status = f"skipped: {problem}"
        return False
    _original = ChopsUpdate.render_segments
    ChopsUpdate.render_segments = _render_segments
    ChopsUpdate._gputop_patched = True
    status = f"active (Textual {version}; {UPSTREAM_ISSUE})"
    return True


def uninstall() -> None:
    """Textual's own method back (tests)."""
    global _original, status
    if _original is not None:
        ChopsUpdate.render_segments = _original
        ChopsUpdate._gputop_patched = False
        _original = None
        status = "not installed"
