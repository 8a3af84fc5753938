"""The same dashboard over a recording, with time travel.

The position is a ``RecordingCursor`` (``gputop/cursor.py``): it decodes only a window
of frames around it (bounded memory for a 24-hour file), reloading the window from the
store by time or sequence number, which SQLite finds through its index.  This app plays,
steps, seeks and jumps that cursor and draws the View it hands out.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.binding import Binding

from gputop.cursor import RecordingCursor
from gputop.model.detect import DetectConfig
from gputop.record.timespec import HELP, parse_time
from gputop.tui.view_settings import ViewSettings
from gputop.tui.app import GputopApp
from gputop.tui.picker import PromptScreen
from gputop.tui.widgets import LIVE_STYLE, PAUSED_STYLE, clock_text

if TYPE_CHECKING:
    from gputop.record.store import Recording

SPEEDS = (0.25, 0.5, 1, 2, 4, 8, 16, 64)
PLAY_TICK_S = 0.05
PLAY_FRAMES_MAX = 4096  # frames one play tick may pass (64x over frames at -d 0.01: 320)


class ReplayApp(GputopApp):
    BINDINGS = [
        Binding("space", "play", "play/pause"),
        Binding("shift+left", "jump_seconds(-60)", "-1 min", key_display="⇧←"),
        Binding("shift+right", "jump_seconds(60)", "+1 min", key_display="⇧→"),
        Binding("j", "jump_prompt", "jump"),
        Binding("less_than_sign", "speed(-1)", "slower", key_display="<"),
        Binding("greater_than_sign", "speed(1)", "faster", key_display=">"),
        Binding("home", "edge(0)", "start", show=False),
        Binding("end", "edge(1)", "end", show=False),
        Binding("r", "noop", show=False),
    ]

    def __init__(self, recording: Recording, detect_config: DetectConfig = DetectConfig(),
                 window_s: float | None = None, view: ViewSettings = ViewSettings()):
        cursor = RecordingCursor(recording, detect_config)
        super().__init__(cursor.session, window_s=window_s, view=view, cursor=cursor)
        self.cursor: RecordingCursor = cursor
        self.recording = recording
        self.detect_config = detect_config
        self.total_frames = cursor.total_frames
        self.first_seq, self.last_seq = cursor.first_seq, cursor.last_seq
        self.playing = False
        self.speed = 1.0
        self._play_clock = 0.0
        self._rank_cache: tuple[int, int] | None = None
        cursor.seek(self.first_seq)

    def key_hints(self) -> list[tuple[str, str]]:
        return [("q", "quit"), ("space", "play"), ("← →", "frame"), ("⇧← ⇧→", "minute"),
                ("j", "jump"), ("< >", "speed"), ("Home End", "ends"), ("e", "explain"),
                ("p", "pin"), ("?", "help")]

    # ------------------------------------------------------------ the position

    def seek(self, seq: int) -> None:
        self.cursor.seek(seq)
        self.refresh_view()

    def cursor_frame(self):
        return self.cursor.frame()

    # ------------------------------------------------------------ status

    def status_mode(self):
        seq = self.paused_seq
        if self._rank_cache is None or self._rank_cache[0] != seq:
            self._rank_cache = (seq, self.recording.rank_of(seq) + 1)
        state = f"▶ {self.speed:g}x" if self.playing else "❚❚"
        text = (f"REPLAY {time.strftime('%Y-%m-%d', time.localtime(self.cursor_frame().time_wall_s))}"
                f" frame {self._rank_cache[1]}/{self.total_frames} {state}")
        return text, LIVE_STYLE if self.playing else PAUSED_STYLE

    # ------------------------------------------------------------ keys

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(PLAY_TICK_S, self._play_tick)

    def action_noop(self) -> None:
        pass

    def action_play(self) -> None:
        if self.paused_seq == self.last_seq and not self.playing:
            self.seek(self.first_seq)
        self.playing = not self.playing
        self._play_clock = 0.0
        self._status()

    def action_pause(self) -> None:  # the live view's space binding; replay plays instead
        self.action_play()

    def _play_tick(self) -> None:
        if not self.playing:
            return
        self._play_clock += PLAY_TICK_S * self.speed
        current = self.cursor_frame()
        target = None  # the newest decoded frame the play clock has reached
        for later in self.cursor.frames_ahead(PLAY_FRAMES_MAX):
            if later.time_wall_s - current.time_wall_s > self._play_clock:
                break
            target = later
        if target is not None:
            self._play_clock -= target.time_wall_s - current.time_wall_s
            self.seek(target.seq)
        elif self.paused_seq >= self.last_seq:
            self.playing = False
            self._status()
        elif self.cursor.behind() == 0:  # the decoded window's end: the cursor reloads it
            self.seek(self.paused_seq + 1)

    def action_step(self, frames: int) -> None:
        self.cursor.step(frames)
        self.refresh_view()

    def action_jump_seconds(self, seconds: float) -> None:
        target = self.cursor_frame().time_wall_s + seconds
        self.seek(self.recording.seq_at(target))

    def action_edge(self, end: int) -> None:
        self.playing = False
        self.seek(self.last_seq if end else self.first_seq)

    def action_speed(self, step: int) -> None:
        position = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self.speed))
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, position + step))]
        self._status()

    def action_jump_prompt(self) -> None:
        def done(text: str | None) -> None:
            if text:
                self.jump_to(text)
        self.push_screen(PromptScreen("jump to: 10:32, 10:32:05, -5m, +30s, 2024-05-01T10:32",
                                      input_id="when"), done)

    def jump_to(self, text: str) -> bool:
        now = self.cursor_frame().time_wall_s
        first, _last = self.recording.time_range()
        try:
            target = parse_time(text, now, now, first)
        except ValueError:
            self.notify(f"cannot read time {text!r}: {HELP}", severity="error")
            return False
        self.seek(self.recording.seq_at(target))
        self.notify(f"at {clock_text(self.cursor_frame().time_wall_s)}")
        return True
