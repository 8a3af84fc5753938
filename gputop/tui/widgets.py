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
from gputop.tui.panes.base import Ctx
from gputop.tui.render import (ALERT, BOLD, DIM, WARN, duration_us, gib, pct, printable, rate,
                               row)

def clock_text(time_wall_s: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(time_wall_s))


class StatusBar(DiffLines):
    DEFAULT_CSS = "StatusBar { height: 1; background: $panel; }"

    def render_status(self, ctx: Ctx, mode: str, mode_style: Style, extra: str = "",
                      message: tuple[str, Style] | None = None) -> None:
        """The status line; ``message`` (an action's result) comes right after the mode,
        where it is read first."""
        gpu = ctx.gpu
        gpus = ctx.view.gpus
        gpu_text = (f"GPU {ctx.gpu_index} ({len(gpus)}) {gpu.sample.name}" if gpu is not None
                    else "no GPU")
        flash = ((" │ ", None), message) if message else ()
        self.show([row((" gputop ", BOLD), "│ ", clock_text(ctx.view.frame.time_wall_s), " ",
                       (mode, mode_style), *flash, extra, " │ ", ctx.source_label, " │ ",
                       gpu_text, f" │ window {ctx.window_s:.0f}s")])


class KeyBar(DiffLines):
    """The key hints on the last line: a fixed text, drawn once (no widget per key)."""

    DEFAULT_CSS = "KeyBar { height: 1; dock: bottom; background: $panel; }"

    def __init__(self, hints: list[tuple[str, str]], **kwargs):
        super().__init__(**kwargs)
        self.hints = hints

    def redraw(self) -> None:
        if self.size.width > 0:
            self.show([row(*[part for key, what in self.hints
                             for part in ((f" {key}", BOLD), f" {what} ")])])

    def on_mount(self) -> None:
        self.redraw()


LIVE_STYLE = Style(color="green", bold=True)
PAUSED_STYLE = Style(color="yellow", bold=True)
REC_STYLE = Style(color="red", bold=True)


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
            self.show([row(("⚠ ", WARN), (notice, BOLD))] if notice else [])
            return
        seconds = max(0, now_wall_s - alert.start_wall_s)
        evidence = "; ".join(alert.evidence) or "no supporting evidence"
        suspect = words.suspect_line(alert)
        self.show([
            row(("⚠ ", ALERT), (f"{alert.headline} for {seconds:.0f}s", BOLD), f": {evidence}"),
            row(("  " + suspect, None)),
        ])


class Summary(DiffLines):
    """One line per pane in narrow terminals, where only one pane fits at a time."""

    DEFAULT_CSS = "Summary { height: 2; display: none; }"

    def render_summary(self, ctx: Ctx) -> None:
        gpu = ctx.gpu
        s = gpu.sample if gpu else None
        engine = ctx.view.engine
        worst_p99 = max((a.stats.p99_us for a in ctx.view.launch
                         if "Launch" in a.api and a.stats.p99_us is not None), default=None)
        alert = ALERT if ctx.alerting else None
        self.show([
            row((" 1", BOLD), (f" util {pct(s.util_gpu_pct if s else None)}", alert),
                ("  2", BOLD), f" SM {pct(s.sm_active_pct if s else None)}",
                ("  3", BOLD), (f" {rate(engine.tokens_per_s) if engine else 'n/a'} tok/s", alert),
                ("  4", BOLD), f" VRAM {gib(s.mem_used_bytes if s else None)}/"
                f"{gib(s.mem_total_bytes if s else None)} GiB",
                ("  5", BOLD), f" launch p99 {duration_us(worst_p99)}"),
            row(("keys 1-6 pane · 7 GPUs · 8 processes · tab next · p pin · ? help", DIM)),
        ])


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
