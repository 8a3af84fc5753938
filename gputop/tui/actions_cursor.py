"""Keys that move the cursor (``gputop/cursor.py``): hold / follow (space) and step
(← →).  Replay (``tui/replay.py``) binds its own play, seek and jump over the same cursor."""

from __future__ import annotations

from textual.binding import Binding

from gputop.tui.shell import Shell


class CursorActions(Shell):
    BINDINGS = [
        Binding("space", "pause", "pause"),
        Binding("left", "step(-1)", "back", key_display="←"),
        Binding("right", "step(1)", "fwd", key_display="→"),
    ]

    def action_pause(self) -> None:
        if self.cursor.following:
            self.cursor.hold()
        else:
            self.cursor.follow()
        self.refresh_view()

    def action_step(self, frames: int) -> None:
        if not len(self.session):
            return
        self.cursor.step(frames)
        self.refresh_view()
