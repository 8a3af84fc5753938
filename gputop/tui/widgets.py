"""The dashboard's chrome: status bar, alert banner, narrow-mode summary, help and explain."""

from __future__ import annotations

import time

from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gputop.model import signals, words
from gputop.model.detect import Episode
from gputop.tui.lines import DiffLines
from gputop.tui.theme import ALARM
from gputop.tui.panes.base import Ctx
from gputop.tui.fitting import flow, wrapped
from gputop.tui.render import (ALERT, BOLD, DIM, WARN, Row, duration_us, fit, fit_parts, pct,
                               printable, rate, row)

def clock_text(time_wall_s: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(time_wall_s))


def gpu_parts(ctx: Ctx) -> list[tuple[Row, int]]:
    """The selected GPU: "GPU 0 of 4", then its name (which goes first when narrow)."""
    gpu = ctx.gpu
    if gpu is None:
        return [(row(" │ no GPU"), 2)]
    mig = "" if ctx.mig is None else f" MIG {ctx.mig.sample.index}"
    return [(row(f" │ GPU {ctx.gpu_index}{mig} of {len(ctx.view.gpus)}"), 1),
            (row(f" {gpu.sample.name}"), 4)]


def source_parts(ctx: Ctx) -> list[tuple[Row, int]]:
    """Where the frames come from; for the demo, which scenario and which phase of it
    (the simulator's status detail: "scenario · phase · timing")."""
    detail = ctx.view.sources.get("sim")
    detail = detail.detail if detail is not None else None
    if not detail:
        return [(row(" │ ", ctx.source_label), 2)]
    scenario, _, rest = detail.partition(" · ")
    phase, _, timing = rest.partition(" · ")
    short, _, what = phase.partition(": ")
    parts = [(row(" │ ", ("demo ", DIM), (scenario, BOLD)), 2)]
    if short:
        parts.append((row(" · ", (short, BOLD)), 2))
    if what:
        parts.append((row(f": {what}"), 3))
    if timing:
        parts.append((row((f" ({timing})", DIM)), 3))
    return parts


class StatusBar(DiffLines):
    DEFAULT_CSS = "StatusBar { height: 1; background: $panel; }"

    def render_status(self, ctx: Ctx, mode: str, mode_style: Style, extra: str = "",
                      message: tuple[str, Style] | None = None) -> None:
        """The status line, its parts dropped whole from the least needed as the terminal
        narrows: the mode and an action's result (``message``) first, where they are read."""
        width = self.size.width
        parts: list[tuple[Row, int]] = [
            (row((" gputop ", BOLD), "│ "), 5),
            (row(clock_text(ctx.view.frame.time_wall_s), " ", (mode, mode_style)), 0)]
        if message:
            parts.append((row(" │ ", message), 0))
        if extra:
            parts.append((row(extra), 1))
        parts += source_parts(ctx) + gpu_parts(ctx)
        parts.append((row(f" │ window {ctx.window_s:.0f}s"), 4))
        self.show([fit_parts(parts, width)])


class KeyBar(DiffLines):
    """The key hints on the last line: a fixed text, drawn once (no widget per key); hints
    that do not fit go whole, the least needed first (their order in the list)."""

    DEFAULT_CSS = "KeyBar { height: 1; dock: bottom; background: $panel; }"

    def __init__(self, hints: list[tuple[str, str]], **kwargs):
        super().__init__(**kwargs)
        self.hints = hints

    def redraw(self) -> None:
        if self.size.width > 0:
            parts = [(row((f" {key}", BOLD), f" {what} "), KEEP_ORDER.get(key, 1))
                     for key, what in self.hints]
            self.show([fit_parts(parts, self.size.width)])

    def on_mount(self) -> None:
        self.redraw()


KEEP_ORDER = {"q": 0, "?": 0, "1-6": 0, "7": 0, "8": 0, "e": 0, "space": 1, "p": 1}


LIVE_STYLE = Style(color="green", bold=True)
PAUSED_STYLE = Style(color="yellow", bold=True)
SUSPECT_STYLE = Style(bold=True)
HEADLINE_STYLE = Style(bold=True, meta={ALARM: True})  # reverse video without colour


def banner_rows(headline: str, evidence: list[str], suspect: str | None, why: str | None,
                width: int) -> list[Row]:
    """The banner's two rows from the parts it is given, fitted by rule, never cut:
    row 1 the headline and as much evidence as fits whole; row 2 the likely cause (with
    its explanation when there is room) and the rest of the evidence; items that fit
    nowhere are counted ("+2 more: e explains")."""
    head = row(("⚠ ", ALERT), (headline, HEADLINE_STYLE))
    if len(head) > width:  # too narrow even for the headline: it takes both rows, by words
        first, *rest = wrapped(headline, width - 2, HEADLINE_STYLE, rows=2)
        return [row(("⚠ ", ALERT)) + first, row("  ") + (rest[0] if rest else [])]
    for explained in ((True, False) if why else (False,)):
        likely = row(("  likely: ", None), (suspect, SUSPECT_STYLE)) if suspect else row(" ")
        if explained:
            likely += row(f": {why}")
        lines, left = flow(evidence, [width - len(head) - 2, width - len(likely) - 3])
        more = row((f" (+{left} more: e explains)", DIM)) if left else []
        if left:  # the count needs its room on row 2
            lines, left = flow(evidence, [width - len(head) - 2,
                                          width - len(likely) - 3 - len(more)])
            more = row((f" (+{left} more: e explains)", DIM)) if left else []
        first = head + (row(": ", "; ".join(lines[0])) if lines[0] else [])
        second = likely + (row((" · ", DIM), "; ".join(lines[1])) if lines[1] else []) + more
        if len(second) <= width:
            break
    return [fit(first, width), fit(second, width)]


class Banner(DiffLines):
    """The "busy but unproductive" banner: headline, evidence and the best suspect."""

    DEFAULT_CSS = """
    Banner { height: 2; background: $error 35%; display: none; }
    Banner.-show { display: block; }
    """

    def render_alert(self, alert: Episode | None, now_wall_s: float,
                     notice: str | None = None) -> None:
        self.set_class(alert is not None or notice is not None, "-show")
        if alert is None:
            self.show([fit(row(("⚠ ", WARN), (notice, BOLD)), self.size.width)] if notice else [])
            return
        seconds = max(0, now_wall_s - alert.start_wall_s)
        cause = alert.suspects[0][0] if alert.suspects else None
        self.show(banner_rows(f"{alert.headline} for {seconds:.0f}s",
                              list(alert.evidence) or ["no supporting evidence"],
                              cause.replace("_", " ") if cause else None,
                              words.cause_text(cause) if cause else None, self.size.width))


class Summary(DiffLines):
    """One line of every pane's headline number, in narrow terminals where only one pane
    fits at a time (hidden while the banner needs the rows)."""

    DEFAULT_CSS = "Summary { height: 1; display: none; }"

    def render_summary(self, ctx: Ctx) -> None:
        gpu = ctx.gpu
        s = gpu.sample if gpu else None
        engine = ctx.view.engine
        worst_p99 = max((a.stats.p99_us for a in ctx.view.launch
                         if "Launch" in a.api and a.stats.p99_us is not None), default=None)
        alert = ALERT if ctx.alerting else None
        used = s.mem_used_bytes if s else None
        total = s.mem_total_bytes if s else None
        vram = f"{used / total:.0%}" if used is not None and total else "n/a"
        self.show([fit_parts([
            (row((" 1", BOLD), (f" util {pct(s.util_gpu_pct if s else None)}", alert)), 0),
            (row(("  2", BOLD), f" SM {pct(s.sm_active_pct if s else None)}"), 0),
            (row(("  3", BOLD), (f" {rate(engine.tokens_per_s) if engine else 'n/a'} tok/s",
                                 alert)), 0),
            (row(("  4", BOLD), f" VRAM {vram}"), 1),
            (row(("  5", BOLD), f" launch p99 {duration_us(worst_p99)}"), 2),
            (row(("  · tab: next pane", DIM)), 3)], self.size.width)])


class TextScreen(ModalScreen):
    """A scrollable page of text (help, explain); Escape, q or ? closes it.

    The app installs one for help and one for explain pages and shows them again and again
    (``show``), rather than composing a new screen per key press."""

    BINDINGS = [Binding("escape,q,question_mark,e", "app.pop_screen", "close")]
    DEFAULT_CSS = """
    TextScreen { align: center middle; }
    TextScreen > VerticalScroll { width: 90%; height: 90%; border: round $accent;
                                  background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str = "", text: str = ""):
        super().__init__()
        self._title, self._text = "", ""
        self.show(title, text)

    def show(self, title: str, text: str) -> None:
        """Set the page (text from outside is made printable first)."""
        self._title = printable(title)
        self._text = "\n".join(printable(line) for line in text.split("\n"))
        if self.is_mounted:
            scroll = self.query_one(VerticalScroll)
            scroll.border_title = self._title
            scroll.scroll_home(animate=False)
            self.query_one(Static).update(self._text)

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = self._title
        scroll.border_subtitle = "Esc closes"
        with scroll:
            yield Static(self._text, markup=False)


def help_text(panes, keys: list[tuple[str, str]]) -> str:
    lines = ["gputop shows what the GPU is really doing: GPU-Util next to the signals that "
             "explain it.", "", "Keys"]
    lines += [f"  {k:<14} {what}" for k, what in keys]
    lines += ["", "What each pane measures"]
    for pane in panes:
        lines += ["", f"{pane.key} {pane.title}", "  " + pane.definition]
    lines += ["", "Every signal (the name in snapshot --json and export CSV, its unit, what it means, "
              "[its Prometheus family in gputop serve])"] + signals.help_lines()
    lines += ["", "The banner: it lights when GPU-Util >= 90% while tokens/s has fallen to <= 50% "
              "of its recent baseline, or the engine's inter-token latency or time-to-first-"
              "token p99 has risen to >= 2x its baseline with requests running, for >= 3 s "
              "(configurable: --busy-util-pct, --collapse-ratio, --latency-factor, --hold-s); it "
              "names the evidence and ranks the likely causes."]
    return "\n".join(lines)
