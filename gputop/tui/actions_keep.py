"""Keys that keep something: a recording of the session (r), the layout in the config
file (S) and the colour theme it saves (T)."""

from __future__ import annotations

import time

from textual.binding import Binding

from gputop.tui import theme
from gputop.tui.lines import DiffLines
from gputop.tui.shell import Shell


class KeepActions(Shell):
    BINDINGS = [
        Binding("T", "theme", "theme", show=False),
        Binding("S", "save_layout", "save layout", show=False),
        Binding("r", "record", "rec"),
    ]

    def action_record(self) -> None:
        from gputop.record.store import RecordingError

        recorder = self.session.stop_recording()  # the one running, if any
        if recorder is not None:
            self.notify(f"recording saved: {recorder.path}")
        else:
            name = time.strftime("gputop-%Y%m%d-%H%M%S.gtrec")
            try:
                self.session.record(name, self.record_max_bytes)
            except RecordingError as exc:
                self.notify(str(exc), severity="error")
                return
            self.notify(f"recording to {name} (r stops)")
        self._status()

    @property
    def theme_name(self) -> str:
        return theme.current().name

    def action_theme(self) -> None:
        if theme.current().mono:
            self.flash("no colour (NO_COLOR or --no-color): themes are off")
            return
        names = theme.THEME_NAMES
        theme.apply(self, names[(names.index(self.theme_name) + 1) % len(names)])
        for widget in self.query(DiffLines):
            widget.repaint_all()
        self.refresh_view()
        self.flash(f"theme: {self.theme_name} (S saves it)")

    def layout_settings(self) -> dict:
        """What S saves: the config file keys of the layout as it is now."""
        return {"pane": self.zoomed or self.current_pane, "zoom": self.zoomed is not None,
                "window_s": self.window_s, "all_gpus": self.all_gpus,
                # without colour the theme in use is "mono": the one chosen is kept
                "theme": self.view_settings.theme if theme.current().mono else self.theme_name}

    def action_save_layout(self) -> None:
        from gputop.config import ConfigError, save_layout

        try:
            path = save_layout(self.layout_settings(), self.view_settings.config_path)
        except (ConfigError, OSError, ValueError) as exc:
            self.flash(f"layout not saved: {exc}", error=True)
            return
        self.flash(f"layout saved to {path}")
