"""Keys that explain: the help page (? / h / F1: every key and metric) and the focused
pane explained (e: its definition, where its numbers came from, the verdict, the
sources)."""

from __future__ import annotations

from typing import cast

from textual.binding import Binding

from gputop.model import words
from gputop.tui.shell import Shell
from gputop.tui.widgets import TextScreen, help_text


def source_line(name: str, status) -> str:
    """One source on the explain page: delivering or why not, how old, what a poll costs."""
    def ms(seconds):
        return "n/a" if seconds is None else f"{seconds * 1000:.1f} ms"

    state = f"ok, reading {status.age_s:.1f}s old" if status.ok and status.age_s is not None \
        else ("ok" if status.ok else f"n/a ({status.reason})")
    return f"{name:<8} {state}; poll {ms(status.poll_s)} / {ms(status.poll_median_s)}"


class HelpActions(Shell):
    BINDINGS = [
        Binding("question_mark,h,f1", "help", "help", key_display="?"),
        Binding("e", "explain", "explain"),
    ]

    def _page(self, name: str, title: str, text: str) -> None:
        """Show the installed text page ``name`` (made once, reused on every press)."""
        if not self.is_screen_installed(name):
            self.install_screen(TextScreen(title, text), name=name)
        else:
            cast(TextScreen, self.get_screen(name)).show(title, text)
        if self.screen is not self.get_screen(name):
            self.push_screen(name)

    def action_help(self) -> None:
        if not self.is_screen_installed("help"):
            self.install_screen(TextScreen("gputop help", help_text(self.panes, self.keys)),
                                name="help")
        if self.screen is not self.get_screen("help"):
            self.push_screen("help")

    def action_explain(self) -> None:
        pane = self._pane(self.current_pane)
        ctx = self.ctx()
        lines = [pane.definition, "", "Where the numbers come from now:"]
        if ctx is not None and ctx.view.alert is not None:  # all of it: the banner fits a part
            alert = ctx.view.alert
            lines[:0] = ["The open episode: " + alert.headline, "  evidence:",
                         *[f"    {item}" for item in alert.evidence],
                         "  likely causes, best first: " + ", ".join(
                             f"{cause.replace('_', ' ')} ({score:.2f})"
                             for cause, score in alert.suspects), ""]
        if ctx is not None:
            lines += ["  " + line for line in pane.provenance(ctx)]
            episode = ctx.view.alert_for(ctx.gpu_index) or ctx.view.alert
            if episode is not None:
                lines += ["", "The verdict:"] + ["  " + line for line in words.explain_lines(episode)]
            lines += ["", "Sources (reading age at this frame, cost of a poll: last / median):"]
            lines += ["  " + source_line(name, st) for name, st in ctx.view.sources.items()]
        self._page("explain", f"{pane.key} {pane.title}: explained", "\n".join(lines))
