"""The process list as htop users expect it: one row per (process, GPU), its CPU% from two
frames, sortable by any column, filtered by a pattern, or ordered as a tree.

Pure functions of the timeline, so the live view, pause and replay list the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from gputop.model.tenants import Tenant, tenants
from gputop.patterns import CmdlinePattern, PatternError
from gputop.schema import Frame, ProcSample

FILTER_MAX_CHARS = 200


@dataclass(frozen=True)
class ProcRow:
    sample: ProcSample
    cpu_pct: float | None  # over the last tick, 100% = one core
    elapsed_s: float | None  # since the process started, at the frame's wall time
    # a parent that holds no GPU memory, shown in tree view above its GPU children (vLLM's
    # engine core above its tensor-parallel workers, torchrun above its ranks)
    context: bool = False
    # a tenant's row (pane 8's g: the processes of one container, pod or Slurm job summed)
    group: Tenant | None = None

    @property
    def owner(self) -> str:
        """Pod where known, else the container or unit: what the table's column shows."""
        s = self.sample
        return s.pod or s.container


# (column key, header, what it sorts by; None last whatever the order)
COLUMNS: tuple[tuple[str, str, Callable[[ProcRow], Any]], ...] = (
    ("pid", "PID", lambda r: r.sample.pid),
    ("user", "USER", lambda r: r.sample.user),
    ("gpu", "GPU", lambda r: r.sample.gpu_index),
    ("vram", "VRAM", lambda r: r.sample.mem_bytes),
    ("sm", "SM%", lambda r: r.sample.sm_util_pct),
    ("cpu", "CPU%", lambda r: r.cpu_pct),
    ("mem", "HOST MEM", lambda r: r.sample.rss_bytes),
    ("time", "TIME", lambda r: r.elapsed_s),
    ("owner", "CONTAINER / POD", lambda r: r.owner),
    ("command", "COMMAND", lambda r: r.sample.cmdline or r.sample.name),
)
COLUMN_KEYS = tuple(c[0] for c in COLUMNS)
_SORT_KEY = {c[0]: c[2] for c in COLUMNS}


def process_rows(frame: Frame, before: Frame | None,
                 processes: tuple[ProcSample, ...] | None = None) -> list[ProcRow]:
    """Rows for ``frame`` (or for ``processes`` of it: the pinned tree's).  CPU% comes
    from the cumulative CPU seconds of the same process (pid and start time: PIDs recycle)
    in the frame ``before``; unknown on the first frame."""
    seconds = frame.time_mono_s - before.time_mono_s if before is not None else 0.0
    earlier = {(p.pid, p.start_time_s): p.cpu_s for p in before.processes} if before else {}
    rows = []
    for p in frame.processes if processes is None else processes:
        cpu = None
        old = earlier.get((p.pid, p.start_time_s))
        if p.cpu_s is not None and old is not None and seconds > 0:
            cpu = max(0.0, 100.0 * (p.cpu_s - old) / seconds)
        elif p.cpu_s is None and p.cpu_pct is not None:
            cpu = p.cpu_pct  # a recording made before cpu_s
        elapsed = None if p.start_time_s is None else max(0.0, frame.time_wall_s - p.start_time_s)
        rows.append(ProcRow(p, cpu, elapsed))
    return rows


def sort_rows(rows: list[ProcRow], column: str, descending: bool) -> list[ProcRow]:
    """Sorted by ``column``; unknown values last in either order, ties by pid and GPU."""
    key = _SORT_KEY[column]
    known = [r for r in rows if key(r) is not None]
    unknown = [r for r in rows if key(r) is None]
    known.sort(key=lambda r: (r.sample.pid, r.sample.gpu_index))
    known.sort(key=lambda r: (key(r).lower() if isinstance(key(r), str) else key(r)),
               reverse=descending)
    return known + sorted(unknown, key=lambda r: (r.sample.pid, r.sample.gpu_index))


class FilterError(ValueError):
    """A filter that is neither a usable pattern nor a plain string (too long)."""


def row_filter(text: str) -> Callable[[ProcRow], bool]:
    """A predicate over rows for the ``/`` filter: a regular expression over user, command,
    container and pod, case-insensitive, matched with a time limit (other users' command
    lines must not let a backtracking pattern freeze gputop: ``gputop.patterns``); text
    that is not a valid pattern ("python3 [") matches as a plain substring, so typing
    never fails half-way."""
    if len(text) > FILTER_MAX_CHARS:
        raise FilterError(f"a filter is at most {FILTER_MAX_CHARS} characters")
    search: Callable[[str], bool]
    try:
        search = CmdlinePattern("(?i)" + text).search
    except PatternError:
        needle = text.lower()

        def search(haystack: str) -> bool:
            return needle in haystack.lower()

    def keep(r: ProcRow) -> bool:
        s = r.sample
        return any(search(field) for field in (s.user, s.cmdline or s.name, s.container, s.pod,
                                               str(s.pid)) if field)
    return keep


def grouped(rows: list[ProcRow], kind: str) -> list[tuple[ProcRow, int]]:
    """(row, depth): a row per tenant (``kind``: container, pod or Slurm job, on one GPU or
    MIG instance) with its processes' VRAM, SM% and memory util summed, its processes
    under it in the given order."""
    out: list[tuple[ProcRow, int]] = []
    for tenant in tenants(tuple(r.sample for r in rows), kind):
        members = [r for r in rows if r.sample.pid in tenant.pids
                   and (r.sample.gpu_index, r.sample.mig_index) == (tenant.gpu_index,
                                                                    tenant.mig_index)]
        cpu = [r.cpu_pct for r in members if r.cpu_pct is not None]
        summary = ProcSample(pid=0, gpu_index=tenant.gpu_index, mig_index=tenant.mig_index,
                             mem_bytes=tenant.mem_bytes, sm_util_pct=tenant.sm_util_pct,
                             mem_util_pct=tenant.mem_util_pct, user=",".join(tenant.users))
        out.append((ProcRow(summary, sum(cpu) if cpu else None, None, group=tenant), 0))
        out += [(r, 1) for r in members]
    return out


def tree_order(rows: list[ProcRow]) -> list[tuple[ProcRow, int]]:
    """(row, depth) with every child under its parent (by ppid among the listed processes),
    siblings in the given order.  Processes that share a parent which is not listed (it
    holds no GPU memory: vLLM's engine core above its tensor-parallel workers, torchrun
    above its ranks) sit under a context row for that parent; a lone one is a root."""
    listed = {r.sample.pid for r in rows}
    unlisted = [r.sample.ppid for r in rows if r.sample.ppid is not None
                and r.sample.ppid not in listed and r.sample.ppid > 1]
    shared = {pid for pid in unlisted if unlisted.count(pid) >= 2}
    children: dict[int, list[ProcRow]] = {}
    roots = []
    contexts: dict[int, ProcRow] = {}
    for r in rows:
        parent = r.sample.ppid
        if parent is not None and parent in listed and parent != r.sample.pid:
            children.setdefault(parent, []).append(r)
        elif parent in shared:
            if parent not in contexts:
                contexts[parent] = ProcRow(ProcSample(pid=parent, gpu_index=-1), None, None,
                                           context=True)
                roots.append(contexts[parent])
            children.setdefault(parent, []).append(r)
        else:
            roots.append(r)
    rows = rows + list(contexts.values())
    out: list[tuple[ProcRow, int]] = []
    seen: set[int] = set()

    def walk(r: ProcRow, depth: int) -> None:
        out.append((r, depth))
        if r.sample.pid in seen:  # one pid on two GPUs lists its children once
            return
        seen.add(r.sample.pid)
        for child in children.get(r.sample.pid, ()):
            walk(child, depth + 1)

    for r in roots:
        walk(r, 0)
    if len(out) < len(rows):  # a parent cycle (pid reuse in a recording): list the rest flat
        placed = {id(r) for r, _ in out}
        out += [(r, 0) for r in rows if id(r) not in placed]
    return out
