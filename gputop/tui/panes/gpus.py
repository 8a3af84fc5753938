"""Pane 7: every GPU at a glance, one row each, as nvidia-smi's table and nvitop show them,
with GPU-Util and SM activity side by side so the gap shows per GPU.

Columns drop from the right by priority as the terminal narrows; at 80 columns the
row keeps the GPU, util, SM, the gap bar, memory, power, temperature and the alert.
Enter on a row makes it the GPU of the other panes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.style import Style
from textual.binding import Binding

from gputop.model.derive import GpuView
from gputop.tui.panes.base import Ctx, Pane
from gputop.model.detect import sm_far_below_util
from gputop.tui.render import (ALERT, BOLD, DIM, WARN, Row, fit, fit_parts, gap_bar, hbar,
                               clip, highlighted, na, plural, pct, row, scroll_start)

SM_BAR = Style(color="cyan")
GAP = Style(color="bright_blue")
MEM_BAR = Style(color="magenta")
SELECTED = Style(bold=True)


def _short_name(name: str) -> str:
    return name.removeprefix("NVIDIA ").replace(" (simulated)", "*")


def _mib_s(rx: float | None, tx: float | None) -> str:
    if rx is None and tx is None:
        return "n/a"

    def one(v):
        if v is None:
            return "?"
        return f"{v / 1024:.1f}G" if v >= 1024 else f"{v:.0f}M"
    return f"{one(rx)}/{one(tx)}"


def _power(s) -> str:
    if s.power_w is None:
        return "n/a"
    return f"{s.power_w:.0f}/{s.power_limit_w:.0f}W" if s.power_limit_w else f"{s.power_w:.0f}W"


def _memory(s) -> str:
    if s.mem_used_bytes is None or s.mem_total_bytes is None:
        return "n/a"
    return f"{s.mem_used_bytes / 2**30:.1f}/{s.mem_total_bytes / 2**30:.0f}G"


def _xid(s) -> str:
    if s.xid_count is None:
        return "n/a"
    return f"{s.xid_count} ({s.xid_last})" if s.xid_count and s.xid_last is not None \
        else str(s.xid_count)


@dataclass(frozen=True)
class Column:
    header: str
    width: int
    priority: int  # lower stays longer as the terminal narrows
    cells: Callable[[Ctx, GpuView, int], Row]  # (ctx, gpu, width) -> exactly width cells
    right: bool = True


def _text(fn, style_fn=None):
    def cells(ctx: Ctx, g: GpuView, width: int) -> Row:
        text = fn(g.sample)
        style = style_fn(g.sample) if style_fn else None
        text = text if len(text) <= width else "…" + text[len(text) - width + 1:]
        return row((text.rjust(width), style))
    return cells


def _sm_style(s):
    return ALERT if sm_far_below_util(s.util_gpu_pct, s.sm_active_pct) else None


EPISODE_TEXT = {"busy_unproductive": "⚠ busy, unproductive", "starved": "⚠ starved"}


def _alert_cells(ctx: Ctx, g: GpuView, width: int) -> Row:
    alert = ctx.view.alert
    if ctx.view.alert_covers(g.sample.index):
        return fit(row((EPISODE_TEXT.get(alert.kind, f"⚠ {alert.kind}"), ALERT)), width)
    if g.sample.lost:
        return fit(row(("lost", ALERT)), width)
    if g.sample.throttle:
        return fit(row(("throttled: " + ",".join(g.sample.throttle), WARN)), width)
    return fit([], width)


def _gap_cells(ctx: Ctx, g: GpuView, width: int) -> Row:
    return gap_bar(g.sample.util_gpu_pct, g.sample.sm_active_pct, width, SM_BAR, GAP)


def _mem_bar(ctx: Ctx, g: GpuView, width: int) -> Row:
    s = g.sample
    fraction = None if not s.mem_total_bytes or s.mem_used_bytes is None \
        else s.mem_used_bytes / s.mem_total_bytes
    return hbar(fraction, width, MEM_BAR)


def _ecc_style(s):
    return ALERT if s.ecc_uncorrected else None


COLUMNS = (
    Column("UTIL", 4, 0, _text(lambda s: pct(s.util_gpu_pct), lambda s: BOLD)),
    Column("SM", 4, 0, _text(lambda s: pct(s.sm_active_pct), _sm_style)),
    Column("util ░ / SM █", 13, 1, _gap_cells, right=False),
    Column("MEMORY", 10, 0, _text(_memory)),
    Column("", 8, 3, _mem_bar, right=False),
    Column("POWER/CAP", 9, 1, _text(_power)),
    Column("TEMP", 4, 1, _text(lambda s: "n/a" if s.temp_c is None else f"{s.temp_c:.0f}C")),
    Column("FAN", 4, 4, _text(lambda s: pct(s.fan_pct))),
    Column("P", 3, 4, _text(lambda s: "n/a" if s.pstate is None else f"P{s.pstate}")),
    Column("SMCLK", 5, 3, _text(lambda s: "n/a" if s.sm_clock_mhz is None
                                  else f"{s.sm_clock_mhz:.0f}")),
    Column("PCIE rx/tx", 11, 3, _text(lambda s: _mib_s(s.pcie_rx_mib_per_s, s.pcie_tx_mib_per_s))),
    Column("NVLINK rx/tx", 13, 3, _text(lambda s: _mib_s(s.nvlink_rx_mib_per_s,
                                                          s.nvlink_tx_mib_per_s))),
    Column("ECC", 4, 2, _text(lambda s: "n/a" if s.ecc_uncorrected is None
                              else str(s.ecc_uncorrected), _ecc_style)),
    Column("XID", 7, 2, _text(_xid, lambda s: ALERT if s.xid_count else None)),
    Column("BUS", 7, 5, _text(lambda s: s.bus_id[-7:] if s.bus_id else "n/a")),
    Column("MIG", 3, 5, _text(lambda s: "n/a" if s.mig_mode is None
                              else ("on" if s.mig_mode else "off"))),
)
ID_WIDTH = 4  # "▶ 0 " : cursor mark and index
NAME_WIDTH = 14
ALERT_WIDTH = 20  # "⚠ busy, unproductive" whole; what narrows first is the detail


def fit_columns(width: int) -> tuple[list[Column], bool, int]:
    """(columns that fit, whether the name fits, the alert column's width) for ``width``."""
    chosen = list(COLUMNS)
    def used(cols, name):
        return ID_WIDTH + (NAME_WIDTH + 1 if name else 0) + sum(c.width + 1 for c in cols)
    name = True
    while chosen and used(chosen, name) + ALERT_WIDTH > width:
        worst = max(c.priority for c in chosen)
        if name and worst <= 2:
            name = False  # the name goes before any column that matters more
            continue
        drop = max(i for i, c in enumerate(chosen) if c.priority == worst)
        chosen.pop(drop)
    return chosen, name, max(0, width - used(chosen, name))


class GpusPane(Pane):
    key = "7"
    title = "GPUs"
    alert_sensitive = True
    definition = (
        "GPUs: one row per GPU, as nvidia-smi's table. UTIL is GPU-Util (time with a kernel "
        "running), SM is SM activity (GPM); the bar draws SM activity solid and the rest of "
        "GPU-Util shaded, so a long shaded bar is a GPU busy with idle SMs. MEMORY is used / "
        "total as nvidia-smi counts it. POWER/CAP: draw and the enforced cap. FAN: percent of "
        "maximum (n/a on passively cooled SXM boards). P: performance state (P0 fastest). "
        "SMCLK: SM clock, MHz. PCIE and NVLINK: MiB or GiB per second received/sent over the "
        "tick (GPM, Hopper and newer). ECC: uncorrected volatile ECC errors since the driver "
        "loaded (corrected ones in the explain page). XID: critical XID events since gputop "
        "started, with the newest code (79: fell off the bus, 48: double-bit ECC, 13/31/43: an "
        "application fault). The last column is the detector's finding for that GPU. "
        "Up/down move, Enter selects the GPU for the other panes, a toggles all GPUs in "
        "panes 1-2."
    )
    wheel_rows = 1
    BINDINGS = [
        Binding("up", "move(-1)", "up", show=False),
        Binding("down", "move(1)", "down", show=False),
        Binding("home", "move(-1000)", show=False),
        Binding("end", "move(1000)", show=False),
        Binding("enter", "choose", "select GPU", show=False),
    ]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.cursor: int | None = None  # row of the GPU list; None: follow the selected GPU

    def _first_row(self, ctx: Ctx, height: int) -> int:
        """The first GPU shown: the list scrolls to keep the cursor in view."""
        return scroll_start(self._index_of_cursor(ctx), 0, max(1, height - 2), len(ctx.view.gpus))

    def _index_of_cursor(self, ctx: Ctx) -> int:
        indexes = [g.sample.index for g in ctx.view.gpus]
        if self.cursor is None:
            return indexes.index(ctx.gpu_index) if ctx.gpu_index in indexes else 0
        return max(0, min(len(indexes) - 1, self.cursor))

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        gpus = ctx.view.gpus
        if not gpus:
            return [row(("n/a (" + (ctx.source_reason("nvml") or "no GPU reported") + ")", ALERT))]
        columns, with_name, alert_w = fit_columns(width)
        header = row(("    ", DIM))
        if with_name:
            header += row((f"{'NAME':<{NAME_WIDTH}} ", DIM))
        for c in columns:
            title = clip(c.header, c.width)
            header += row(((title.rjust(c.width) if c.right else title.ljust(c.width)) + " ", DIM))
        header += row((clip("STATE", alert_w), DIM))
        out = [header]
        cursor = self._index_of_cursor(ctx)
        first = self._first_row(ctx, height)
        for position, g in enumerate(gpus[first:first + max(1, height - 2)], start=first):
            s = g.sample
            mark = "▶" if position == cursor else " "
            cells = row((f"{mark}{s.index:>2} ", SELECTED if s.index == ctx.gpu_index else None))
            if with_name:
                cells += row((f"{clip(_short_name(s.name), NAME_WIDTH):<{NAME_WIDTH}} ", None))
            for c in columns:
                cells += fit(c.cells(ctx, g, c.width), c.width) + [(" ", None)]
            cells += _alert_cells(ctx, g, alert_w)
            out.append(highlighted(cells, width) if position == cursor and self.has_focus
                       else cells)
        shown = min(len(gpus), height - 2)
        count = plural(len(gpus), "GPU") + (f", {shown} shown" if shown < len(gpus) else "")
        out += [[]] * max(0, height - len(out) - 1)
        out.append(fit_parts([(row((count, DIM)), 0),
                              (row((" · ↑↓ Enter: select GPU", DIM)), 1),
                              (row((" · a: all GPUs in panes 1-2", DIM)), 2)], width))
        return out

    def action_move(self, step: int) -> None:
        if self.ctx is None or not self.ctx.view.gpus:
            return
        self.cursor = max(0, min(len(self.ctx.view.gpus) - 1,
                                 self._index_of_cursor(self.ctx) + step))
        self.redraw()

    def action_choose(self) -> None:
        if self.ctx is None or not self.ctx.view.gpus:
            return
        gpu = self.ctx.view.gpus[self._index_of_cursor(self.ctx)]
        self.cursor = None
        self.app.select_gpu(gpu.sample.index)

    def on_click(self, event) -> None:
        """A click on a GPU's row puts the cursor there; a double click also selects it."""
        offset = event.get_content_offset(self)
        if self.ctx is None or offset is None or offset.y < 1:
            return
        position = self._first_row(self.ctx, self.size.height) + offset.y - 1
        if position < len(self.ctx.view.gpus):
            self.cursor = position
            self.redraw()
            if event.chain >= 2:
                self.action_choose()
                event.prevent_default()  # not also the base pane's double-click zoom

    def provenance(self, ctx: Ctx) -> list[str]:
        lines = [f"source: {ctx.source_label}"]
        for g in ctx.view.gpus:
            s = g.sample
            missing = ", ".join(f"{k}: {v}" for k, v in sorted(s.missing.items())
                                if k in ("fan_pct", "pstate", "power_limit_w", "ecc_uncorrected",
                                         "xid_count", "pcie_rx_mib_per_s", "sm_active_pct"))
            lines.append(f"GPU {s.index} {s.name} bus {s.bus_id or 'n/a'}: ECC corrected "
                         f"{na(None) if s.ecc_corrected is None else s.ecc_corrected}, "
                         f"mem clock {na(None) if s.mem_clock_mhz is None else f'{s.mem_clock_mhz:.0f} MHz'}"
                         + (f"; n/a: {missing}" if missing else ""))
        return lines
