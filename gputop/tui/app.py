"""The live dashboard: six panes over one session's timeline.

The session appends frames on the sampler's thread; this app takes an immutable View of
the position it shows (``Session.view``) and draws from it alone, so a slow redraw never
holds the session's lock nor delays a tick.  Frames and keys are coalesced, never
queued: a new frame posts one message unless one is already waiting, and a key only
changes what is shown and asks for one refresh.  At ``-d 0.01`` or under a key storm the
screen shows the newest state once per redraw, and ``q`` is always next in line."""

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
from gputop.model import words
from gputop.model.derive import selectable
from gputop.schema import Frame
from gputop.session import RECORD_MAX_BYTES, Session
from gputop.tui import theme
from gputop.tui.keys import KEYS
from gputop.tui.lines import DiffLines
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.panes.gpus import GpusPane
from gputop.tui.panes.host import HostPane
from gputop.tui.panes.procs import ProcessesPane
from gputop.tui.panes.launch import LaunchPane
from gputop.tui.panes.sm import SmPane
from gputop.tui.panes.throughput import ThroughputPane
from gputop.tui.panes.util import UtilPane
from gputop.tui.panes.vram import VramPane
from gputop.tui.render import ALERT, BOLD, OK, WARN, clip, row
from gputop.tui.view_settings import ViewSettings
from gputop.units import printable
from gputop.tui.widgets import (LIVE_STYLE, PAUSED_STYLE, Banner, KeyBar, StatusBar, Summary,
                                TextScreen, clock_text, help_text)


WINDOWS_S = (15, 30, 60, 120, 300, 600, 1800, 3600)
MIN_SIZE = (40, 12)
WIDE_SIZE = (110, 30)  # below this, one pane at a time with a summary strip

STALE_KEY_S = 0.3  # a key that waited longer than this behind a busy screen is dropped
NEVER_DROPPED = {"q", "f10", "ctrl+c", "escape"}
FLASH_S = 8.0  # how long an action's result stays on the status line
GRID_PANES = tuple("123456")  # 7 (GPUs) and 8 (processes) are shown zoomed, not in the grid



def source_line(name: str, status) -> str:
    """One source on the explain page: delivering or why not, how old, what a poll costs."""
    def ms(seconds):
        return "n/a" if seconds is None else f"{seconds * 1000:.1f} ms"

    state = f"ok, reading {status.age_s:.1f}s old" if status.ok and status.age_s is not None \
        else ("ok" if status.ok else f"n/a ({status.reason})")
    return f"{name:<8} {state}; poll {ms(status.poll_s)} / {ms(status.poll_median_s)}"


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


class GputopApp(App):
    CSS_PATH = Path(__file__).with_name("gputop.tcss")
    TITLE = "gputop"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q,f10", "quit", "quit"),
        # a top-like tool quits on Ctrl-C (Textual's default only hints at ctrl+q); with the
        # shell's code for an interrupt, as a SIGINT would give
        Binding("ctrl+c", "interrupt", "quit", show=False, priority=True),
        Binding("question_mark,h,f1", "help", "help", key_display="?"),
        Binding("a", "all_gpus", "all GPUs", show=False),
        Binding("T", "theme", "theme", show=False),
        Binding("S", "save_layout", "save layout", show=False),
        Binding("space", "pause", "pause"),
        Binding("left", "step(-1)", "back", key_display="←"),
        Binding("right", "step(1)", "fwd", key_display="→"),
        Binding("left_square_bracket", "gpu(-1)", "GPU-", key_display="["),
        Binding("right_square_bracket", "gpu(1)", "GPU+", key_display="]"),
        Binding("plus,equals_sign", "window(1)", "window+", key_display="+"),
        Binding("minus", "window(-1)", "window-", key_display="-"),
        Binding("e", "explain", "explain"),
        Binding("r", "record", "rec"),
        Binding("p", "pick", "pin"),
        Binding("P", "unpin", "unpin", show=False),
        Binding("escape", "unzoom", "all panes", show=False),
        # Panes hidden in the narrow layout cannot take focus, so tab walks the panes itself.
        Binding("tab", "cycle(1)", "next pane", show=False, priority=True),
        Binding("shift+tab", "cycle(-1)", "previous pane", show=False, priority=True),
        *[Binding(str(i), f"pane('{i}')", f"pane {i}", show=False) for i in range(1, 9)],
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

    def action_quit(self) -> None:
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

    def action_pick(self) -> None:
        from gputop.tui.picker import PickerScreen, candidates

        ctx = self.ctx()
        processes = ctx.view.frame.processes if ctx is not None else ()
        # the GPU processes at once; the /proc scan for CUDA processes and their CPU% (a
        # tenth of a second at least, more on a crowded host) runs off the UI thread
        screen = PickerScreen(candidates(processes))
        self.push_screen(screen, self._pinned)
        if self.pin_state is not None:
            pids = [p.pid for p in processes]

            def scan() -> None:
                found = candidates(processes, self.session.scan_processes(pids))
                self.call_from_thread(screen.set_options, found)
            self.run_worker(scan, thread=True, exclusive=True, group="picker-scan")

    def _pinned(self, choice) -> None:
        if choice is None:
            return
        if self.pin_state is not None:
            error = self.session.pin(choice.pid, choice.pattern)
            if error is not None:
                self.notify(error, severity="error")
                return
            self.notify("pinned; every pane follows it from the next tick (P unpins)")
        else:
            self.pin_override = ((choice.pid,), None) if choice.pid is not None \
                else ((), choice.pattern)
        self.refresh_view()

    def action_unpin(self) -> None:
        self.session.unpin()
        self.pin_override = None
        self.refresh_view()

    def action_record(self) -> None:
        from gputop.record.store import RecordingError

        if self.session.recorder is not None:
            recorder = self.session.stop_recording()
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

    # ------------------------------------------------------------ keys

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

    def action_gpu(self, step: int) -> None:
        ctx = self.ctx()
        if ctx is None or not ctx.view.gpus:
            return
        targets = selectable(ctx.view.gpus)  # each GPU, then each of its MIG instances
        here = (self.gpu_index, self.mig_index)
        position = targets.index(here) if here in targets else 0
        self.gpu_index, self.mig_index = targets[(position + step) % len(targets)]
        self.schedule_refresh()

    def action_window(self, step: int) -> None:
        position = min(range(len(WINDOWS_S)), key=lambda i: abs(WINDOWS_S[i] - self.window_s))
        self.window_s = float(WINDOWS_S[max(0, min(len(WINDOWS_S) - 1, position + step))])
        self.schedule_refresh()

    def action_pane(self, key: str) -> None:
        pane = self._pane(key)
        if self.zoomed == key:
            self.zoomed = None
            if key not in GRID_PANES:  # back to the grid, on the pane shown before
                key = self._last_grid_pane
                pane = self._pane(key)
        elif not self.has_class("-narrow") or key not in GRID_PANES:
            self.zoomed = key
        self.current_pane = key
        self._apply_layout()
        pane.focus()
        self.schedule_refresh()

    _last_grid_pane = "1"

    def action_cycle(self, step: int) -> None:
        if isinstance(self.screen, ModalScreen):
            self.screen.focus_next() if step > 0 else self.screen.focus_previous()
            return
        # in the grid, the panes it shows; zoomed, every pane (7 and 8 too)
        keys = [p.key for p in self.panes if p.key not in self.hidden
                and (self.zoomed is not None or p.key in GRID_PANES)]
        if self.current_pane not in keys:
            keys.append(self.current_pane)
            keys.sort()
        key = keys[(keys.index(self.current_pane) + step) % len(keys)]
        self.current_pane = key
        if self.zoomed is not None:
            self.zoomed = key
        self._apply_layout()
        self._pane(key).focus()
        self.schedule_refresh()

    def action_unzoom(self) -> None:
        if self.zoomed is not None:
            if self.zoomed not in GRID_PANES:
                self.current_pane = self._last_grid_pane
            self.zoomed = None
            self._apply_layout()
            self._pane(self.current_pane).focus()
            self.schedule_refresh()

    # ------------------------------------------------------------ GPUs, processes, settings

    def select_gpu(self, index: int, mig: int | None = None) -> None:
        """The overview's Enter: make ``index`` (or its MIG instance ``mig``) the GPU of
        every pane, back on the grid."""
        self.gpu_index, self.mig_index = index, mig
        self.flash(f"GPU {index} selected" if mig is None else f"GPU {index} MIG {mig} selected")
        if self.zoomed == "7":
            self.action_pane("7")
        else:
            self.schedule_refresh()

    def flash(self, text: str, error: bool = False) -> None:
        """An action's result on the status line for a few seconds."""
        self._flash = (printable(text), error, time.monotonic() + FLASH_S)
        self._status()
        self.set_timer(FLASH_S + 0.1, self._status)

    def action_all_gpus(self) -> None:
        self.all_gpus = not self.all_gpus
        self.flash("panes 1-2: every GPU" if self.all_gpus else "panes 1-2: the selected GPU")
        self.schedule_refresh()

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

    @property
    def simulated(self) -> bool:
        """The demo: its processes exist only in the simulator, so actions on them are
        walked through and then not sent (a replay or a remote host's are refused)."""
        return self.source_label.startswith("demo:")

    @property
    def live_processes(self) -> bool:
        """Whether the listed PIDs are this machine's (not the demo's, a replay's or a
        remote host's), so that acting on them means anything."""
        return self.pin_state is not None

    def signal_process(self, proc_row) -> None:
        """k / F9 in the process list: refused at once, or a menu of signals, then a
        confirmation naming the process, then the result on the status line."""
        from gputop.actions import SIGNALS, refusal
        from gputop.tui.dialogs import MenuScreen

        if proc_row is None:
            self.flash("no process selected", error=True)
            return
        proc = proc_row.sample
        if proc_row.context:
            self.flash(f"pid {proc.pid} holds no GPU memory and is not listed: select one of "
                       "its GPU processes", error=True)
            return
        why = refusal(proc, readonly=self.readonly, live=self.live_processes,
                      simulated=self.simulated)
        if why:
            self.flash(why, error=True)
            return
        options = [(name, f"SIG{name}") for name in SIGNALS]
        self.push_screen(MenuScreen(f"signal pid {proc.pid} ({proc.name})", options),
                         lambda name: self._confirm_signal(proc, name))

    def _confirm_signal(self, proc, name: str | None) -> None:
        from gputop.tui.dialogs import ConfirmScreen

        if name is None:
            return
        command = clip(proc.cmdline or proc.name, 60)
        question = (f"Send SIG{name} to pid {proc.pid}, user {proc.user or '?'}, on GPU "
                    f"{proc.gpu_index}:\n  {command}\n?")
        if self.simulated:
            question += "\n(demo: this process is simulated, nothing will be sent)"
        self.push_screen(ConfirmScreen(question), lambda yes: self._send(proc, name, yes))

    def _send(self, proc, name: str, yes: bool) -> None:
        from gputop.actions import send_signal

        if not yes:
            self.flash("not sent")
            return
        sent, text = send_signal(proc, name, readonly=self.readonly, live=self.live_processes,
                                 simulated=self.simulated)
        self.flash(text, error=not sent and not self.simulated)

    def on_descendant_focus(self, event) -> None:
        widget = event.widget
        if isinstance(widget, Pane) and widget.key in GRID_PANES:
            self._last_grid_pane = widget.key  # where Esc from pane 7 or 8 comes back to
        if isinstance(widget, Pane) and widget.key != self.current_pane:
            self.current_pane = widget.key
            if self.zoomed is not None:
                self.zoomed = widget.key
            self._apply_layout()
            self.schedule_refresh()

    def _page(self, name: str, title: str, text: str) -> None:
        """Show the installed text page ``name`` (made once, reused on every press)."""
        if not self.is_screen_installed(name):
            self.install_screen(TextScreen(title, text), name=name)
        else:
            self.get_screen(name).show(title, text)
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

    def _pane(self, key: str) -> Pane:
        return next(p for p in self.panes if p.key == key)
