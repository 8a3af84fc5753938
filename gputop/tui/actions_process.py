"""Keys about processes: pin the dashboard to a process tree (p, the picker; P unpins)
and send a signal (k / F9 in pane 8, which calls ``signal_process``).  Pinning and the
picker's scan go through the session; the dialogs are ``tui/dialogs.py``'s."""

from __future__ import annotations

from textual.binding import Binding

from gputop.tui.render import clip
from gputop.tui.shell import Shell


class ProcessActions(Shell):
    BINDINGS = [
        Binding("p", "pick", "pin"),
        Binding("P", "unpin", "unpin", show=False),
    ]

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
