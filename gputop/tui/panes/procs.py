"""Pane 8: the GPU processes as htop lists them, and what you can do to them.

All GPU processes (or the pinned tree's), sortable by any column (< > like htop, F6
for a menu, a click on a header; the same column again reverses), filtered with /
(a pattern over user, command, container and pod), as a tree with t, and sent a
signal with k or F9 (a menu, then a confirmation naming the process).  Actions are
checked and carried out by ``gputop.actions``; the result goes to the status bar.
"""

from __future__ import annotations

from rich.style import Style
from textual.binding import Binding

from gputop.model.processes import (COLUMN_KEYS, COLUMNS, FilterError, ProcRow, grouped,
                                    process_rows, row_filter, sort_rows, tree_order)
from gputop.model.tenants import KIND_WORDS, KINDS
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.fitting import Col, column_widths
from gputop.tui.render import (ALERT, BOLD, DIM, Row, clip, fit_parts, highlighted, plural, row,
                               scroll_start)
from gputop.units import seconds_text

HEADER = Style(bold=True, underline=True)
# as the pane narrows, the highest goes first: host memory, time, SM%, user, the owner;
# every column is as wide as its widest value (the owner at most OWNER_MAX), the command
# takes what is left
DROP_PRIORITY = {"mem": 5, "time": 4, "sm": 3, "user": 2, "owner": 1}
OWNER_MAX = 40
USER_MAX = 12
COMMAND_MIN = 16
NUMERIC = ("pid", "gpu", "vram", "sm", "cpu", "mem", "time")  # right-aligned
BIGGEST_FIRST = ("vram", "sm", "cpu", "mem", "time")  # sorted descending when first chosen


def _size(value_bytes: int | None) -> str:
    """Compact, for a narrow column: 71.5G, 812M."""
    if value_bytes is None:
        return "n/a"
    if value_bytes >= 2**30:
        return f"{value_bytes / 2**30:.1f}G"
    return f"{value_bytes / 2**20:.0f}M"


def _elapsed(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    s = int(seconds)
    if s >= 86400:
        return f"{s // 86400}d{s % 86400 // 3600:02d}h"
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _cell(key: str, r: ProcRow) -> str:
    s = r.sample
    if key == "pid":
        return str(s.pid)
    if key == "user":
        return s.user or "?"
    if key == "gpu":  # "0/1": GPU 0, MIG instance 1
        return str(s.gpu_index) if s.mig_index is None else f"{s.gpu_index}/{s.mig_index}"
    if key == "vram":
        return _size(s.mem_bytes)
    if key == "sm":
        return "n/a" if s.sm_util_pct is None else f"{s.sm_util_pct:.0f}"
    if key == "cpu":
        return "n/a" if r.cpu_pct is None else f"{r.cpu_pct:.0f}"
    if key == "mem":
        return _size(s.rss_bytes)
    if key == "time":
        return _elapsed(r.elapsed_s)
    if key == "owner":
        return r.owner or "-"
    return s.cmdline or s.name


def _key(r: ProcRow) -> tuple:
    """What the cursor stays on across redraws: (pid, GPU), or a tenant's row."""
    if r.group is not None:
        return ("tenant", r.group.name, r.group.gpu_index, r.group.mig_index)
    return (r.sample.pid, r.sample.gpu_index)


class ProcessesPane(Pane):
    key = "8"
    title = "Processes"
    definition = (
        "Processes: every process NVML lists on a GPU (or the pinned tree's), one row per "
        "process and GPU. VRAM: GPU memory it holds (NVML). SM%: its share of SM time in "
        "NVML's last per-process sample (reliable only with one process per GPU). CPU%: CPU "
        "time over the last tick, 100% = one core, from /proc/PID/stat. HOST MEM: resident "
        "memory. TIME: since it started. CONTAINER / POD: from /proc/PID/cgroup, the "
        "Kubernetes pod (namespace/name from the runtime's or kubelet's files, else its UID), "
        "else the container runtime and short id, else the systemd unit. Keys: ↑↓ select, "
        "< > or F6 sort column (again: reverse), / filter (a regular expression over user, "
        "command, container and pod; Esc clears), t tree, k or F9 send a signal (refused "
        "with --readonly, and for another user's process unless gputop runs as root), "
        "g group by container, pod or Slurm job (a row per tenant of each GPU: its VRAM, "
        "SM% and memory-controller util summed over its processes, what tells a shared "
        "GPU's tenants apart; again: the next key, then none). GPU 0/1: GPU 0, MIG "
        "instance 1. Slurm jobs show as slurm:JOB.STEP, from slurmstepd's cgroup."
    )
    wheel_rows = 3
    BINDINGS = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "move(-10)", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("home", "move(-100000)", show=False),
        Binding("end", "move(100000)", show=False),
        Binding("less_than_sign", "sort_step(-1)", "sort <", show=False),
        Binding("greater_than_sign", "sort_step(1)", "sort >", show=False),
        Binding("f6", "sort_menu", "sort", show=False),
        Binding("slash", "filter", "filter", show=False),
        Binding("t", "tree", "tree", show=False),
        Binding("g", "group", "group", show=False),
        Binding("k,f9", "signal", "signal", show=False),
    ]

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.sort_column = "vram"
        self.descending = True
        self.filter_text = ""
        self._keep = None  # the filter, compiled once when it is set
        self.tree_view = False
        self.group_by: str | None = None  # "container" | "pod" | "slurm_job" (tenants.KINDS)
        self.selected: tuple | None = None  # _key of the row under the cursor
        self.first_row = 0  # first listed row shown
        self._listed: list[tuple[ProcRow, int]] = []
        self._columns: list[tuple[str, int, int]] = []  # (key, x, width) as last drawn

    # ------------------------------------------------------------ the rows

    def listed(self, ctx: Ctx) -> list[tuple[ProcRow, int]]:
        """(row, tree depth) in display order, after filter and sort."""
        procs = tuple(p for g in ctx.view.gpus for p in g.processes)
        rows = process_rows(ctx.view.frame, ctx.view.previous, procs)
        if self._keep is not None:
            rows = [r for r in rows if self._keep(r)]
        rows = sort_rows(rows, self.sort_column, self.descending)
        if self.group_by is not None:
            return grouped(rows, self.group_by)
        return tree_order(rows) if self.tree_view else [(r, 0) for r in rows]

    def _cursor(self) -> int:
        for i, (r, _) in enumerate(self._listed):
            if _key(r) == self.selected:
                return i
        return 0

    def selected_row(self) -> ProcRow | None:
        return self._listed[self._cursor()][0] if self._listed else None

    def column_layout(self, width: int, texts: list[dict[str, str]] = ()) -> list[tuple[str, int, int]]:
        """(key, x, width) of each column shown: sized to the widest of ``texts`` (one dict
        of cell texts per row) and the header, dropped by priority when the pane narrows."""
        headers = {key: header for key, header, _ in COLUMNS}
        columns = []
        for key in COLUMN_KEYS:
            content = max((len(t[key]) for t in texts), default=0)
            header = headers[key] + " "  # room for the sort arrow
            if key == "command":
                columns.append(Col(key, header, content, least=COMMAND_MIN, grows=True))
            else:
                columns.append(Col(key, header, content, priority=DROP_PRIORITY.get(key, 0),
                                   most=OWNER_MAX if key == "owner"
                                   else USER_MAX if key == "user" else 0))
        widths = column_widths(columns, width)
        out, x = [], 0
        for key in COLUMN_KEYS:
            if key in widths:
                out.append((key, x, widths[key]))
                x += widths[key] + 1
        return out

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        self._listed = self.listed(ctx)
        texts = [self.cell_texts(r, depth) for r, depth in self._listed]
        self._columns = self.column_layout(width, texts)
        headers = {key: header for key, header, _ in COLUMNS}
        head: Row = []
        for key, x, w in self._columns:
            text = headers[key] + (("▼" if self.descending else "▲") if key == self.sort_column
                                   else "")
            text = text.rjust(w) if key in NUMERIC else text.ljust(w)
            head += row((clip(text, w), HEADER if key == self.sort_column else BOLD), " ")
        status = plural(sum(1 for r, _ in self._listed if r.group is None), "process")
        if self.filter_text:
            status += f" matching /{self.filter_text}/"
        if self.group_by is not None:
            status += f" · by {KIND_WORDS[self.group_by]}"
        elif self.tree_view:
            status += " · tree"
        if ctx.source_reason("procfs"):
            status += f" · {ctx.source_reason('procfs')}"
        if ctx.view.pinned is not None:
            status += " · pinned tree only"
        body_h = max(0, height - 2)
        cursor = self._cursor()
        self.first_row = scroll_start(cursor, self.first_row, body_h, len(self._listed))
        out = [head]
        if not self._listed:
            why = ctx.source_reason("nvml")
            out.append(row((f"no GPU processes{' match' if self.filter_text else ''}"
                            + (f" (nvml: {why})" if why else ""), DIM)))
        for i in range(self.first_row, min(len(self._listed), self.first_row + body_h)):
            r, _depth = self._listed[i]
            cells: Row = []
            for key, x, w in self._columns:
                text = clip(texts[i][key], w)
                text = text.rjust(w) if key in NUMERIC else text.ljust(w)
                style = DIM if r.context else BOLD if r.group is not None else \
                    ALERT if key == "cpu" and (r.cpu_pct or 0) >= 95 else None
                cells += row((text, style), " ")
            out.append(highlighted(cells, width) if i == cursor else cells)
        out += [[]] * max(0, height - len(out) - 1)
        out.append(fit_parts([(row((status, DIM)), 0)] + [
            (row((f" · {hint}", DIM)), n + 1) for n, hint in
            enumerate(("k signal", "t tree", "/ filter", "< > F6 sort"))][::-1], width))
        return out

    def cell_texts(self, r: ProcRow, depth: int) -> dict[str, str]:
        """Every column's text for a row (the command indented under its parent in tree view)."""
        if r.context:
            texts = {key: "" for key in COLUMN_KEYS}
            texts.update(pid=str(r.sample.pid), gpu="-",
                         command="(parent of the GPU processes below; holds no GPU memory)")
            return texts
        if r.group is not None:
            t = r.group
            texts = {key: _cell(key, r) for key in COLUMN_KEYS}
            mem_util = "n/a" if t.mem_util_pct is None else f"{t.mem_util_pct:.0f}%"
            texts.update(pid="", time="", mem="", owner=t.name or "-",
                         command=f"{t.label}: {plural(len(t.pids), 'process')}, memory "
                                 f"util {mem_util}")
            return texts
        texts = {key: _cell(key, r) for key in COLUMN_KEYS}
        if (self.tree_view or self.group_by is not None) and depth:
            texts["command"] = "  " * (depth - 1) + " └─ " + texts["command"]
        return texts

    # ------------------------------------------------------------ keys

    def action_move(self, step: int) -> None:
        if not self._listed:
            return
        i = max(0, min(len(self._listed) - 1, self._cursor() + step))
        r = self._listed[i][0]
        self.selected = _key(r)
        self.redraw()

    def sort_by(self, column: str) -> None:
        """Sort by ``column``; the same column again reverses the order."""
        if column == self.sort_column:
            self.descending = not self.descending
        else:
            self.sort_column = column
            self.descending = column in BIGGEST_FIRST
        self.redraw()

    def action_sort_step(self, step: int) -> None:
        i = COLUMN_KEYS.index(self.sort_column)
        self.sort_by(COLUMN_KEYS[(i + step) % len(COLUMN_KEYS)])

    def action_sort_menu(self) -> None:
        from gputop.tui.dialogs import MenuScreen

        headers = [(key, header) for key, header, _ in COLUMNS]
        self.app.push_screen(MenuScreen("sort by", headers), self._sorted)

    def _sorted(self, key: str | None) -> None:
        if key is not None:
            self.sort_by(key)

    def action_filter(self) -> None:
        from gputop.tui.picker import PromptScreen

        self.app.push_screen(PromptScreen("filter processes: a regular expression or text over "
                                          "user, command, container and pod (empty: all)",
                                          self.filter_text, input_id="filter"), self._filtered)

    def _filtered(self, text: str | None) -> None:
        if text is None:
            return
        text = text.strip()
        try:
            self._keep = row_filter(text) if text else None
        except FilterError as exc:
            self.app.flash(str(exc), error=True)
            return
        self.filter_text = text
        self.first_row = 0
        self.redraw()

    def action_tree(self) -> None:
        self.tree_view = not self.tree_view
        self.redraw()
        parents = sum(1 for r, _ in self._listed if r.context)
        nested = any(depth for _, depth in self._listed)
        if not self.tree_view:
            self.app.flash("tree off: a flat list")
        elif not nested:
            self.app.flash("tree: no listed process is another's child (nothing to nest)")
        else:
            self.app.flash("tree: children under their parents" + (
                f" ({plural(parents, 'parent')} without GPU memory, dim)" if parents else ""))

    def action_group(self) -> None:
        """g: by container, then pod, then Slurm job, then no grouping."""
        order = (None, *KINDS)
        self.group_by = order[(order.index(self.group_by) + 1) % len(order)]
        self.first_row = 0
        self.redraw()
        if self.group_by is None:
            self.app.flash("grouping off: one row per process")
        else:
            self.app.flash(f"by {KIND_WORDS[self.group_by]}: a row per tenant of each GPU, "
                           "its processes summed")

    def action_signal(self) -> None:
        row = self.selected_row()
        if row is not None and row.group is not None:
            self.app.flash(f"{row.group.label} is a group: select one of its processes",
                           error=True)
            return
        self.app.signal_process(row)

    # ------------------------------------------------------------ mouse

    def on_click(self, event) -> None:
        """A click on a header sorts by that column; on a row, selects the process."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            for key, x, w in self._columns:
                if x <= offset.x < x + w + 1:
                    self.sort_by(key)
                    event.prevent_default()  # a header double-click sorts, never zooms
                    return
        i = self.first_row + offset.y - 1
        if 0 <= i < len(self._listed) and offset.y >= 1:
            r = self._listed[i][0]
            self.selected = _key(r)
            self.redraw()

    def provenance(self, ctx: Ctx) -> list[str]:
        r = self.selected_row()
        lines = [f"source: {ctx.source_label}",
                 "owner from /proc/PID/cgroup; pod names from the runtime's config.json "
                 "annotations or the kubelet's pod directory"]
        if r is not None:
            s = r.sample
            lines += [f"selected: pid {s.pid} on GPU {s.gpu_index}, user {s.user or '?'}",
                      f"  command: {s.cmdline or s.name}",
                      f"  cgroup: {s.cgroup or 'n/a'}",
                      f"  container: {s.container or 'none found'}; pod: {s.pod or 'none found'}"
                      + (f"; Slurm job {s.slurm_job}" + (f" step {s.slurm_step}" if s.slurm_step
                                                         else "") if s.slurm_job else ""),
                      f"  SM {'n/a' if s.sm_util_pct is None else f'{s.sm_util_pct:.0f}%'}, "
                      f"memory util {'n/a' if s.mem_util_pct is None else f'{s.mem_util_pct:.0f}%'}"
                      " (NVML per-process samples)"
                      + ("" if s.mig_index is None else f"; on MIG instance {s.mig_index}"),
                      f"  CPU time so far: {seconds_text(s.cpu_s) if s.cpu_s is not None else 'n/a'}"]
        return lines
