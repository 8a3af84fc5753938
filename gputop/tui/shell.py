"""The live dashboard's shell: composing, mounting, the refresh loop and the status line.

The session appends frames on the sampler's thread; this app takes an immutable View of
the position it shows (``Session.view``) and draws from it alone, so a slow redraw never
holds the session's lock nor delays a tick.  Frames and keys are coalesced, never
queued: a new frame posts one message unless one is already waiting, and a key only
changes what is shown and asks for one refresh.  At ``-d 0.01`` or under a key storm the
screen shows the newest state once per redraw, and ``q`` is always next in line.

The keys and what they do live in the ``actions_*`` modules, one per kind of key, each a
subclass of this shell with its own ``BINDINGS`` (Textual merges them); ``app.py``
assembles them into ``GputopApp``."""

from __future__ import annotations

import time
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from gputop import exitguard
from gputop.cursor import LiveCursor
from gputop.model.derive import selectable
from gputop.schema import Frame
from gputop.session import RECORD_MAX_BYTES, Session
from gputop.tui import theme
from gputop.tui.keys import KEYS
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.panes.gpus import GpusPane
from gputop.tui.panes.host import HostPane
from gputop.tui.panes.procs import ProcessesPane
from gputop.tui.panes.launch import LaunchPane
from gputop.tui.panes.sm import SmPane
from gputop.tui.panes.throughput import ThroughputPane
from gputop.tui.panes.util import UtilPane
from gputop.tui.panes.vram import VramPane
from gputop.tui.render import ALERT, BOLD, OK, WARN, row
from gputop.tui.view_settings import ViewSettings
from gputop.units import printable
from gputop.tui.widgets import (LIVE_STYLE, PAUSED_STYLE, Banner, KeyBar, StatusBar, Summary,
                                clock_text)


MIN_SIZE = (40, 12)
WIDE_SIZE = (110, 30)  # below this, one pane at a time with a summary strip

STALE_KEY_S = 0.3  # a key that waited longer than this behind a busy screen is dropped
NEVER_DROPPED = {"q", "f10", "ctrl+c", "escape"}
FLASH_S = 8.0  # how long an action's result stays on the status line
GRID_PANES = tuple("123456")  # 7 (GPUs) and 8 (processes) are shown zoomed, not in the grid


def exit_notice(ctx: Ctx) -> str | None:
    """ "pid 4121 exited at 10:32:07" while the pinned roots are gone."""
    pinned = ctx.view.pinned
    if pinned is None or pinned.sample.root_pids or not pinned.sample.exited:
        return None
    pid, when = max(pinned.sample.exited.items(), key=lambda item: item[1])
    again = " (waiting for a match to start again)" if pinned.sample.pattern else ""
    return f"pinned pid {pid} exited at {clock_text(when)}{again}"


class FramesArrived(Message):
    """One or more frames were appended since the last refresh."""


class Shell(App):
    CSS_PATH = Path(__file__).with_name("gputop.tcss")
    TITLE = "gputop"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q,f10", "quit", "quit"),
        # a top-like tool quits on Ctrl-C (Textual's default only hints at ctrl+q); with the
        # shell's code for an interrupt, as a SIGINT would give
        Binding("ctrl+c", "interrupt", "quit", show=False, priority=True),
    ]

    def __init__(self, session: Session, *, interval_s: float = 1.0, window_s: float | None = None,
                 pin: tuple[tuple[int, ...], str | None] | None = None,
                 record_max_bytes: int | None = RECORD_MAX_BYTES,
                 view: ViewSettings = ViewSettings(), cursor: LiveCursor | None = None):
        super().__init__()
        self.view_settings = view
        theme.apply(self, view.theme)
        self.readonly = view.readonly
        self.all_gpus = view.all_gpus
        self.hidden = tuple(k for k in view.hidden if k in GRID_PANES)
        self._flash: tuple[str, bool, float] | None = None  # (text, error, until monotonic)
        self.session = session
        # where the screen is: following the newest frame, or held (pause, history, replay)
        self.cursor = cursor if cursor is not None else LiveCursor(session)
        # Live pinning goes through the pin source (the session's pin_state); the demo and
        # replay pin from the frames' own process lists (pin).
        self.pin_state = session.pin_state
        self.pin_override = pin
        self.record_max_bytes = record_max_bytes
        self.source_label = session.label
        self._frames_posted = False  # a FramesArrived is waiting: later frames join it
        self._refresh_asked = False  # a refresh is scheduled: later keys join it
        self._record_error_shown: str | None = None
        self.window_s = window_s if window_s is not None else view.window_s
        self.gpu_index = 0
        self.mig_index: int | None = None  # a MIG instance of that GPU
        self.current_pane = view.pane
        self.zoomed: str | None = view.pane if view.zoom or view.pane not in GRID_PANES else None
        if self.zoomed is None and view.pane in self.hidden:  # never start on a hidden pane
            self.current_pane = next((k for k in GRID_PANES if k not in self.hidden), "7")
            self.zoomed = None if self.current_pane in GRID_PANES else self.current_pane
        self.panes: list[Pane] = [UtilPane(), SmPane(), ThroughputPane(), VramPane(), LaunchPane(),
                                  HostPane(), GpusPane(), ProcessesPane()]

    keys = KEYS

    @property
    def paused_seq(self) -> int | None:
        """The seq the screen is held at; None while it follows the newest frame."""
        return self.cursor.seq

    @paused_seq.setter
    def paused_seq(self, seq: int | None) -> None:
        if seq is None:
            self.cursor.follow()
        else:
            self.cursor.seek(seq)

    async def on_event(self, event) -> None:
        """Keys are coalesced, not queued: one that waited behind a busy screen (a held key
        repeats 30 times a second) is dropped, so the screen follows the hand and q is
        served at once; q, Ctrl-C and Escape are never dropped, nor typing in a dialog.
        (Textual stamps a message with time.monotonic on Linux.)"""
        if isinstance(event, events.Key) and event.key not in NEVER_DROPPED \
                and not isinstance(self.screen, ModalScreen) \
                and time.monotonic() - event.time > STALE_KEY_S:
            self.dropped_keys += 1
            return
        await super().on_event(event)

    dropped_keys = 0

    def notify(self, message: str, *, title: str = "", severity="information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Messages can carry text from outside (an endpoint's error, a file name): shown
        without markup and with control characters made visible."""
        super().notify(printable(str(message)), title=printable(title), severity=severity,
                       timeout=timeout, markup=False)

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield Banner(id="banner")
        yield Summary(id="summary")
        with Container(id="body"):
            yield from self.panes
        yield Static(f"terminal too small: gputop needs at least {MIN_SIZE[0]}x{MIN_SIZE[1]}",
                     id="too-small")
        # a static line of key hints: Textual's Footer recomposes on every focus change and
        # kept ~400 KB of widgets per Tab press
        yield KeyBar(self.key_hints(), id="keys")

    def key_hints(self) -> list[tuple[str, str]]:
        return [("q", "quit"), ("?", "help"), ("space", "pause"), ("← →", "step"),
                ("[ ]", "GPU"), ("+ -", "window"), ("e", "explain"), ("r", "rec"), ("p", "pin"),
                ("1-6", "pane"), ("7", "GPUs"), ("8", "procs")]

    def on_mount(self) -> None:
        # the palette is the process's: an app made after this one (a script making several)
        # must not draw this one in its colours
        theme.apply(self, self.view_settings.theme)
        self._apply_layout()
        self._pane(self.current_pane).focus()
        self.refresh_view()
        self.session.subscribe(self._frame_landed)
        self.session.start()
        if self.cursor.kind == "remote":  # say when the remote host cannot be reached
            self.set_interval(1.0, self._status)

    def on_unmount(self) -> None:
        self.release()

    def release(self) -> None:
        """Stop sampling (detaching probes) and close the recording; safe to call twice and
        from the exit guard's thread."""
        self.session.close()

    # Set by the command line only: the guard ends the whole process, which a test (or any
    # program embedding the app) must never have happen to it.
    exit_guard = False

    def action_quit(self) -> None:  # type: ignore[override]  # Textual awaits only awaitables
        if self.exit_guard:
            exitguard.arm(0, self.release)
        self.exit()

    def action_interrupt(self) -> None:
        if self.exit_guard:
            exitguard.arm(130, self.release)
        self.exit(return_code=130)

    def on_resize(self) -> None:
        self._apply_layout()
        self.schedule_refresh()

    def _apply_layout(self) -> None:
        width, height = self.size
        self.set_class(width < MIN_SIZE[0] or height < MIN_SIZE[1], "-too-small")
        narrow = width < WIDE_SIZE[0] or height < WIDE_SIZE[1]
        self.set_class(narrow, "-narrow")
        single = narrow or self.zoomed is not None
        self.set_class(single, "-single")
        shown = self.zoomed or self.current_pane
        for pane in self.panes:
            pane.set_class(pane.key == shown, "-current")
            pane.set_class(pane.key in self.hidden or pane.key not in GRID_PANES, "-extra")

    def _pane(self, key: str) -> Pane:
        return next(p for p in self.panes if p.key == key)

    # ------------------------------------------------------------ frames

    def _frame_landed(self, _frame: Frame) -> None:
        """On the sampler's thread: ask for one refresh, unless one is already asked for."""
        if not self._frames_posted:
            self._frames_posted = True
            self.post_message(FramesArrived())

    def on_frames_arrived(self, _message: FramesArrived) -> None:
        self._frames_posted = False
        if not self.query(StatusBar):  # shutting down: the sampler's last frames find no screen
            return
        self._check_recording()
        if self.paused_seq is None:
            self.refresh_view()
        else:
            self._status()  # the "frames behind" count changes

    def add_frame(self, frame: Frame) -> None:
        """Append a frame now (tests and the screenshot script drive the app this way)."""
        self.session.add_frame(frame)
        self.on_frames_arrived(FramesArrived())

    def schedule_refresh(self) -> None:
        """One refresh after the current batch of events, however many keys asked for it."""
        if not self._refresh_asked:
            self._refresh_asked = True
            self.call_after_refresh(self._scheduled_refresh)

    def _scheduled_refresh(self) -> None:
        self._refresh_asked = False
        self.refresh_view()

    def _check_recording(self) -> None:
        recorder = self.session.recorder
        if recorder is not None and recorder.error and recorder.error != self._record_error_shown:
            self._record_error_shown = recorder.error
            self.session.stop_recording()  # e.g. disk full: keep showing, stop recording
            self.notify(f"recording stopped: {recorder.error}", severity="error", timeout=10)

    def ctx(self) -> Ctx | None:
        """The context of the position shown (the newest frame, or the paused one)."""
        view = self.cursor.view_at(pin=self.pin_override if self.pin_state is None else None)
        if view is None:
            return None
        indexes = [g.sample.index for g in view.gpus]
        if indexes and self.gpu_index not in indexes:
            self.gpu_index = indexes[0]
        if (self.gpu_index, self.mig_index) not in selectable(view.gpus):
            self.mig_index = None  # MIG turned off, or the instance is gone
        return Ctx(view, self.gpu_index, self.window_s, self.source_label,
                   all_gpus=self.all_gpus, mig_index=self.mig_index)

    def refresh_view(self) -> None:
        ctx = self.ctx()
        if ctx is None:
            return
        for pane in self.panes:
            if pane.display and pane.parent is not None:
                pane.update_ctx(ctx)
            else:
                pane.ctx = ctx
        notice = exit_notice(ctx)
        self.query_one(Banner).render_alert(ctx.view.alert, ctx.view.frame.time_wall_s, notice)
        # narrow: the banner takes the summary's row (three rows of chrome at most)
        self.set_class(ctx.view.alert is not None or notice is not None, "-banner")
        if self.has_class("-narrow"):
            self.query_one(Summary).render_summary(ctx)
        self._status(ctx)

    # ------------------------------------------------------------ the status line

    def _status(self, ctx: Ctx | None = None) -> None:
        ctx = ctx or self.ctx()
        feed_error = self.session.feed_error
        if ctx is None:
            self.query_one(StatusBar).show([row((" gputop ", BOLD), f"│ {self.source_label} │ ",
                                                (f"waiting for frames: {feed_error}"
                                                 if feed_error else "waiting for frames", WARN))])
            return
        mode, style = self.status_mode()
        extra = f" │ remote unreachable: {feed_error}" if feed_error else ""
        if ctx.view.pinned is not None:
            extra += f" │ {ctx.view.pinned.title}"
        if ctx.source_reason("procfs"):  # host PIDs from a PID namespace of its own
            extra += f" │ {ctx.source_reason('procfs')}"
        recorder = self.session.recorder
        if recorder is not None:
            extra = f" REC {recorder.path.name} {recorder.size_bytes() / 1024:.0f} KiB"
        message = None
        if self._flash is not None and time.monotonic() < self._flash[2]:
            message = (self._flash[0], ALERT if self._flash[1] else OK)
        self.query_one(StatusBar).render_status(ctx, mode, style, extra, message)

    def status_mode(self):
        if self.paused_seq is None:
            return "LIVE", LIVE_STYLE
        back = -self.cursor.behind()
        return f"PAUSED {back:+d} frame{'' if abs(back) == 1 else 's'}", PAUSED_STYLE

    def flash(self, text: str, error: bool = False) -> None:
        """An action's result on the status line for a few seconds."""
        self._flash = (printable(text), error, time.monotonic() + FLASH_S)
        self._status()
        self.set_timer(FLASH_S + 0.1, self._status)
