"""Keys that move around the dashboard: the panes (1-8, Tab, Esc), the GPU ([ ]), every
GPU in panes 1-2 (a) and the plots' window (+ -)."""

from __future__ import annotations

from textual.binding import Binding
from textual.screen import ModalScreen

from gputop.model.derive import selectable
from gputop.tui.panes.base import Pane
from gputop.tui.shell import GRID_PANES, Shell

WINDOWS_S = (15, 30, 60, 120, 300, 600, 1800, 3600)


class PaneActions(Shell):
    BINDINGS = [
        Binding("a", "all_gpus", "all GPUs", show=False),
        Binding("left_square_bracket", "gpu(-1)", "GPU-", key_display="["),
        Binding("right_square_bracket", "gpu(1)", "GPU+", key_display="]"),
        Binding("plus,equals_sign", "window(1)", "window+", key_display="+"),
        Binding("minus", "window(-1)", "window-", key_display="-"),
        Binding("escape", "unzoom", "all panes", show=False),
        # Panes hidden in the narrow layout cannot take focus, so tab walks the panes itself.
        Binding("tab", "cycle(1)", "next pane", show=False, priority=True),
        Binding("shift+tab", "cycle(-1)", "previous pane", show=False, priority=True),
        *[Binding(str(i), f"pane('{i}')", f"pane {i}", show=False) for i in range(1, 9)],
    ]

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

    def select_gpu(self, index: int, mig: int | None = None) -> None:
        """The overview's Enter: make ``index`` (or its MIG instance ``mig``) the GPU of
        every pane, back on the grid."""
        self.gpu_index, self.mig_index = index, mig
        self.flash(f"GPU {index} selected" if mig is None else f"GPU {index} MIG {mig} selected")
        if self.zoomed == "7":
            self.action_pane("7")
        else:
            self.schedule_refresh()

    def action_all_gpus(self) -> None:
        self.all_gpus = not self.all_gpus
        self.flash("panes 1-2: every GPU" if self.all_gpus else "panes 1-2: the selected GPU")
        self.schedule_refresh()
