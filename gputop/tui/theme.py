"""Colour themes: dark (the default), light, colour-blind safe and high contrast.

Panes draw with a handful of named colours (red for alerts, yellow warnings, the plot
colours).  A theme is a Textual theme for the chrome (backgrounds, borders) plus a map
from those names to the colours that read well on it; ``restyle`` applies the map when
a row becomes a strip (``lines.DiffLines``), cached per style, so a pane never knows
which theme is on and switching (T) costs one repaint.

The colour-blind palette is Okabe and Ito's (2008), distinguishable with the common
forms of colour blindness: vermilion for alerts, blue and sky blue where red/green
would otherwise carry meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.color import Color
from rich.style import Style
from textual.theme import Theme as TextualTheme

from gputop.config import THEMES


@dataclass(frozen=True)
class Palette:
    name: str
    textual: str  # the Textual theme for the chrome
    colors: dict[str, str] = field(default_factory=dict)  # named colour -> replacement
    undim: bool = False  # dim text is hard to read in high contrast: shown plain
    bold_colors: bool = False
    mono: bool = False  # no colour at all: meaning carried by bold, reverse and underline


HIGH_CONTRAST = TextualTheme(
    name="gputop-high-contrast", primary="#FFFFFF", secondary="#FFFF00", accent="#00FFFF",
    warning="#FFFF00", error="#FF3030", success="#00FF00", foreground="#FFFFFF",
    background="#000000", surface="#000000", panel="#202020", dark=True)

PALETTES = {p.name: p for p in (
    Palette("dark", "textual-dark"),
    Palette("light", "textual-light", {
        "yellow": "#8a6d00", "cyan": "#00727a", "bright_blue": "#1f4fbf", "green": "#1a7f1a",
        "magenta": "#8e2a8e", "white": "#303030", "bright_black": "#6a6a6a", "red": "#c00000",
        "blue": "#1f3f9f"}),
    Palette("colorblind", "textual-dark", {  # Okabe-Ito
        "red": "#D55E00", "green": "#009E73", "yellow": "#E69F00", "cyan": "#56B4E9",
        "bright_blue": "#0072B2", "blue": "#0072B2", "magenta": "#CC79A7", "white": "#F0F0F0",
        "bright_black": "#999999"}),
    Palette("high-contrast", HIGH_CONTRAST.name, {
        "red": "#FF3030", "green": "#00FF00", "yellow": "#FFFF00", "cyan": "#00FFFF",
        "bright_blue": "#66B2FF", "blue": "#66B2FF", "magenta": "#FF66FF", "white": "#FFFFFF",
        "bright_black": "#C0C0C0"}, undim=True, bold_colors=True),
)}
# NO_COLOR (no-color.org) or --no-color: no colour at all, not a grey rendering of the
# colours (alarm red became grey 237 on 233: the alarms were the hardest text to read)
MONO = Palette("mono", "textual-dark", mono=True)  # not a theme to choose: NO_COLOR's
THEME_NAMES = THEMES  # the config's list, in the order T cycles them
ALARM = "alarm"  # a style's meta key: this text is an alarm (reverse video without colour)

_current = PALETTES["dark"]
_cache: dict[Style, Style] = {}


def current() -> Palette:
    return _current


def use(name: str) -> Palette:
    """Make ``name`` the theme every strip is drawn in from now on."""
    global _current
    _current = MONO if name == MONO.name else PALETTES[name]
    _cache.clear()
    return _current


def _mono(style: Style) -> Style:
    """``style`` without colour, its meaning kept: an alarm (red and bold, or marked as an
    alarm) in bold reverse video, a warning (yellow) underlined, the rest as it was."""
    color = style.color.name if style.color is not None else None
    alarm = bool(style.meta.get(ALARM)) or (color == "red" and bool(style.bold))
    return Style(bold=True if alarm or style.bold else None, dim=style.dim,
                 italic=style.italic, underline=True if color == "yellow" else style.underline,
                 reverse=True if alarm else style.reverse, meta=style.meta or None)


def restyle(style: Style | None) -> Style | None:
    """``style`` in the current theme's colours (identity for the dark theme)."""
    if style is None or (not _current.colors and not _current.undim and not _current.mono):
        return style
    done = _cache.get(style)
    if done is not None:
        return done
    if _current.mono:
        done = _mono(style)
        _cache[style] = done
        return done
    changes = {}
    if style.color is not None and style.color.name in _current.colors:
        changes["color"] = Color.parse(_current.colors[style.color.name])
        if _current.bold_colors:
            changes["bold"] = True
    if _current.undim and style.dim:
        changes["dim"] = False
    done = style + Style(**changes) if changes else style
    if len(_cache) > 512:
        _cache.clear()
    _cache[style] = done
    return done


def apply(app, name: str) -> Palette:
    """Use theme ``name`` for strips and ``app``'s chrome (any Textual app of gputop's);
    with NO_COLOR set, the monochrome palette whatever the name."""
    if getattr(app, "no_color", False):
        _no_colour_at_all(app)
        name = MONO.name
    palette = use(name)
    if HIGH_CONTRAST.name not in app.available_themes:
        app.register_theme(HIGH_CONTRAST)
    app.theme = palette.textual
    app.set_class(palette.mono, "-mono")
    return palette


def _no_colour_at_all(app) -> None:
    """Textual answers NO_COLOR with greys of the colours (its Monochrome filter); the
    standard asks for no colour: the terminal's own foreground and background.  Its
    truecolor filter goes too: it turns "dim" into a blended colour, which then has no
    colour left to be dim with."""
    from textual.filter import ANSIToTruecolor, Monochrome, NoColor

    filters = getattr(app, "_filters", None)
    if isinstance(filters, list):
        app._filters = [NoColor() if isinstance(f, Monochrome) else f for f in filters
                        if not isinstance(f, ANSIToTruecolor)]
