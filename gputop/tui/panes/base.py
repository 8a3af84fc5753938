"""What every pane shares: the context it is drawn from and its self-explanation.

A pane is a function of a ``Ctx``: one immutable ``View`` (its plots' window series
included, kept per tick by the session) and what the user selected.  Nothing here reads
the timeline, so drawing never holds the session's lock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gputop.model.derive import GpuView, MigView, View
from gputop.model.plots import Point, Tick, gpu_field
from gputop.tui.lines import DiffLines
from gputop.tui.render import (BOLD, DIM, Row, SweepPlot, first_fitting, fit_parts, nice_top, row, spark,
                               sweep_columns, sweep_cursor)


@dataclass(frozen=True)
class Ctx:
    """Everything a pane may read: the derived view (its plots' history in ``view.plots``)
    and the selection."""

    view: View
    gpu_index: int
    window_s: float
    source_label: str
    all_gpus: bool = False  # panes 1-2 show every GPU, one line each
    mig_index: int | None = None  # a MIG instance of the GPU, selected with [ ] or in pane 7

    @property
    def gpu(self) -> GpuView | None:
        """The selected GPU, or its selected MIG instance seen as one."""
        gpu = self.view.gpu(self.gpu_index)
        if gpu is not None and self.mig_index is not None:
            return gpu.instance(self.mig_index) or gpu
        return gpu

    @property
    def mig(self) -> MigView | None:
        gpu = self.view.gpu(self.gpu_index)
        return gpu.mig(self.mig_index) if gpu is not None else None

    def field(self, name: str) -> Callable[[Tick], float | None]:
        """A series accessor for the selected GPU's (or MIG instance's) ``name``."""
        return gpu_field(self.gpu_index, name, self.mig_index)

    @property
    def interval_s(self) -> float:
        """Seconds between the view's frame and the one before it (1 when unknown)."""
        return self.view.interval_s

    @property
    def alerting(self) -> bool:
        return self.view.alert_covers(self.gpu_index)

    def series(self, value: Callable[[Tick], float | None]) -> list[Point]:
        """(time_mono_s, value) over the window, from the View's own plot history."""
        plots = self.view.plots
        return plots.series(self.window_s, value) if plots is not None else []

    def util_series(self, index: int) -> list[Point]:
        """GPU-Util points at driver resolution (``Plots.util_points``)."""
        plots = self.view.plots
        return plots.util_points(self.window_s, index) if plots is not None else []

    def plot(self, plot: SweepPlot, value, width: int, height: int, style,
             top: float | None = None, floor: float = 1.0) -> tuple[list[Row], float]:
        """(rows, axis top) of a sweep plot of ``value`` (an accessor, or ready points) over
        the window.  The axis top is ``top``, or a round number above the data and
        ``floor``.  ``plot`` is the pane's own ``SweepPlot``, so unchanged columns are not
        recomputed."""
        points = value if isinstance(value, list) else self.series(value)
        end = self.view.frame.time_mono_s
        columns = sweep_columns(points, end, self.window_s, width)
        axis_top = top if top is not None else nice_top([*columns, floor])
        # no gap at the sweep's cursor: a gap redraws every row with a bar twice a tick,
        # where without it a steady signal changes a row or two (the axis row marks "now")
        return plot.rows(columns, height, axis_top, style), axis_top

    @property
    def simulated(self) -> bool:
        """Whether the frames come from the simulator (the demo, or a recording of it):
        reasons that send a user to a root shell or an engine URL are not true there."""
        return "sim" in self.view.sources

    def source_reason(self, name: str) -> str | None:
        status = self.view.sources.get(name)
        return None if status is None or status.ok else status.reason


class Pane(DiffLines, can_focus=True):
    """A dashboard pane: a pure function from ``Ctx`` to rows, plus its definitions."""

    key = "0"
    title = ""
    # What the metrics in this pane mean (shown by ? and e).
    definition = ""

    def __init__(self, **kwargs):
        super().__init__(id=f"pane-{self.key}", classes="pane", **kwargs)
        self.ctx: Ctx | None = None
        self.sweep = SweepPlot()
        self.border_title = f"{self.key} {self.title}"

    def retitle(self, title: str) -> None:
        """Set the border's title only when it changes (setting it repaints the pane)."""
        if self.border_title != title:
            self.border_title = title

    def update_ctx(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.set_class(ctx.alerting and self.alert_sensitive, "alert")
        self.redraw()

    alert_sensitive = False

    def on_click(self, event) -> None:
        """A click focuses the pane (Textual does that); a double click zooms it, or
        un-zooms it, as its number key does."""
        if getattr(event, "chain", 1) >= 2:
            self.app.action_pane(self.key)

    wheel_rows = 0  # a list pane (7, 8) moves its cursor this many rows a wheel notch

    def on_mouse_scroll_down(self, event) -> None:
        if self.wheel_rows:
            self.action_move(self.wheel_rows)
            event.stop()

    def on_mouse_scroll_up(self, event) -> None:
        if self.wheel_rows:
            self.action_move(-self.wheel_rows)
            event.stop()

    def all_gpu_rows(self, ctx: Ctx, field: str, label: str, width: int, height: int,
                     style) -> list[Row]:
        """Every GPU on one line each: index, a sparkline of ``field`` over the window
        (sweep order, like the plots) and its value now; the selected GPU in bold."""
        out = [first_fitting([row((f"{label}, every GPU; the gap is now, time → "
                                   "(a: the selected GPU only)", DIM)),
                              row((f"{label}, every GPU (a: the selected GPU only)", DIM)),
                              row((f"{label}, every GPU", DIM))], width)]
        spark_w = max(0, width - 10)
        end = ctx.view.frame.time_mono_s
        for g in ctx.view.gpus[: max(0, height - 1)]:
            s = g.sample
            columns = sweep_columns(ctx.series(gpu_field(s.index, field)), end, ctx.window_s,
                                    spark_w) if spark_w else []
            cursor = sweep_cursor(end, ctx.window_s, spark_w) if spark_w else None
            cells = spark([None if i == cursor else v for i, v in enumerate(columns)], 100.0,
                          style)
            value = getattr(s, field)
            now = "n/a" if value is None else f"{value:.0f}%"
            mark = BOLD if s.index == ctx.gpu_index else None
            out.append(row((f"{s.index:>2} ", mark)) + cells + row((f" {now:>5}", mark)))
        return out

    def redraw(self) -> None:
        if self.ctx is None or self.size.width <= 0 or self.size.height <= 0:
            return
        self.show(self.rows(self.ctx, self.size.width, self.size.height))

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        raise NotImplementedError

    def provenance(self, ctx: Ctx) -> list[str]:
        """Where this pane's numbers came from right now (shown by e)."""
        return [f"source: {ctx.source_label}"]

    def plot_block(self, ctx: Ctx, value, width: int, rows: int, style, scale,
                   top: float | None = None, floor: float = 1.0) -> list[Row]:
        """A sweep plot of ``value`` in ``rows`` rows, its axis and scale rows included
        (``scale``: the scale's text, or a function of the axis top giving it); nothing
        when there is no room for a plot row."""
        plot_h = rows - AXIS_ROWS
        if plot_h <= 0 or width <= 0:
            return []
        plot, axis_top = ctx.plot(self.sweep, value, width, plot_h, style, top=top, floor=floor)
        return plot + self.axis_rows(ctx, width, scale(axis_top) if callable(scale) else scale)

    @staticmethod
    def axis_rows(ctx: Ctx, width: int, scale: str) -> list[Row]:
        """The two rows under a sweep plot: the time axis, then the scale.

        The sweep writes left to right and wraps, so "now" moves along the plot: the axis
        row marks it (``now▲``) with the oldest column right after it (``60s ago``), and
        nothing else is on that row; the scale and window sit on a row of their own, where
        no marker can land on them."""
        if width <= 0:
            return [[], []]
        now = (sweep_cursor(ctx.view.frame.time_mono_s, ctx.window_s, width) - 1) % width
        axis: Row = [("─", DIM)] * width
        axis[now] = ("▲", BOLD)
        if now >= len(NOW_TEXT):
            axis[now - len(NOW_TEXT):now] = row((NOW_TEXT, BOLD))
        ago = f"{ctx.window_s:.0f}s ago"
        if now + 1 + len(ago) <= width:
            axis[now + 1:now + 1 + len(ago)] = row((ago, DIM))
        label = fit_parts([(row((scale, DIM)), 0),
                           (row((f" · {ctx.window_s:.0f}s window", DIM)), 1),
                           (row((", time → wraps at ▲", DIM)), 2)], width)
        return [axis, label]


NOW_TEXT = "now"
# what the help and the explain page of every pane with a plot say about reading it
PLOT_NOTE = (
    " The plot sweeps: each new reading is drawn one column right of the last and the plot "
    "wraps at the right edge (only one column changes a tick), so the newest column is above "
    "the ▲ of the time axis (now▲60s ago): left of it the readings up to now, right of it "
    "the oldest part of the window; time runs left to right on both sides. The row "
    "under the axis gives the scale and the window (+ and - change it).")
AXIS_ROWS = 2  # rows a sweep plot needs below it (axis_rows)
