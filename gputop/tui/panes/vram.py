"""Pane 4: VRAM per GPU split into weights | KV pool (used, free) | other | other processes | free.

Each part has its own glyph as well as its own colour, so the bar reads on a
no-colour terminal too.  Overflow (parts beyond the card) is drawn past the
card's edge marker, never clipped.
"""

from __future__ import annotations

from rich.style import Style

from gputop.model.vram import VramSplit
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.fitting import Col, column_widths
from gputop.tui.render import (ALERT, BOLD, DIM, Row, clip, first_fitting, fit, gib, na, row,
                               size_text)

PARTS = {
    # name: (label, glyph, style)
    "weights": ("weights", "█", Style(color="blue")),
    "kv_used": ("KV used", "▓", Style(color="magenta")),
    "kv_free": ("KV free", "░", Style(color="magenta")),
    "kv_pool": ("KV (use n/a)", "▤", Style(color="magenta")),
    "other": ("other (engine)", "▒", Style(color="yellow")),
    "other_processes": ("other procs", "▚", Style(color="white")),
    "unsplit": ("used (unsplit)", "▒", Style(color="bright_black")),
    "free": ("free", "·", Style(dim=True)),
    "overflow": ("OVERFLOW", "!", Style(color="red", bold=True)),
}


def bar(split: VramSplit, width: int) -> Row:
    """Cells for one card: parts proportional to size, overflow after a '|' card-edge marker."""
    scale_bytes = split.total_bytes + split.overflow_bytes
    if width <= 0 or scale_bytes <= 0:
        return []
    card_cells = round(width * split.total_bytes / scale_bytes)
    cells: Row = []
    edges, acc = [], 0
    for name, size in split.parts():
        acc += size
        edges.append((name, round(width * acc / scale_bytes)))
    start = 0
    for name, end in edges:
        _, glyph, style = PARTS[name]
        cells.extend((glyph, style) for _ in range(max(0, end - start)))
        start = max(start, end)
    cells = cells[:width]
    if split.overflow_bytes and card_cells < width:
        cells = cells[:card_cells] + [("|", ALERT)] + [("!", ALERT)] * (width - card_cells - 1)
    return cells


def legend_rows(split: VramSplit, pinned: bool, width: int) -> list[Row]:
    """One row per part: glyph, name, size, share of the card; the columns as wide as
    their widest entry, the share kept before the name is shortened."""
    overflow = [("overflow", split.overflow_bytes)] if split.overflow_bytes else []
    entries = []
    for name, size in split.parts(include_zero=True) + overflow:
        label, glyph, style = PARTS[name]
        if name == "unsplit" and pinned:
            label = "pinned tree"
        share = size / split.total_bytes if split.total_bytes else 0
        entries.append((glyph * 2, style, label, size_text(size), f"{share:.0%}"))
    size_w = max(len(e[3]) for e in entries)
    share_w = max(len(e[4]) for e in entries)
    label_w = min(max(len(e[2]) for e in entries), max(4, width - 3 - size_w - 2 - share_w - 1))
    out = [fit(row((glyph, style), f" {clip(label, label_w):<{label_w}} {size:>{size_w}}  "
                   f"{share:>{share_w}}"), width)
           for glyph, style, label, size, share in entries]
    if split.kv_pool_bytes is not None:
        out.append(first_fitting([
            row((f"   KV pool {size_text(split.kv_pool_bytes)} (used+free), reserved at start",
                 DIM)),
            row((f"   KV pool {size_text(split.kv_pool_bytes)} (used+free)", DIM))], width))
    return out


def process_rows(procs, width: int) -> list[Row]:
    """The selected card's processes: pid, user, VRAM, SM%, command (the rest of the row)."""
    columns = [Col("pid", "pid", max(len(str(p.pid)) for p in procs)),
               Col("user", "user", max(len(p.user) for p in procs), priority=2, most=12),
               Col("vram", "VRAM GiB", 6),
               Col("sm", "SM%", 3, priority=1),
               Col("command", "command", max(len(p.cmdline or p.name) for p in procs),
                   least=8, grows=True)]
    widths = column_widths(columns, width, gap=2)
    right = {"pid", "vram", "sm"}

    def cells(values: dict[str, str], style=None) -> Row:
        parts = [(clip(values[k], w).rjust(w) if k in right else clip(values[k], w).ljust(w))
                 for k, w in widths.items()]
        return fit(row(("  ".join(parts), style)), width)

    out = [cells({c.key: c.header for c in columns}, DIM)]
    for p in procs:
        out.append(cells({"pid": str(p.pid), "user": p.user or "?",
                          "vram": gib(p.mem_bytes, 2),
                          "sm": "n/a" if p.sm_util_pct is None else f"{p.sm_util_pct:.0f}",
                          "command": p.cmdline or p.name}))
    return out


class VramPane(Pane):
    key = "4"
    title = "VRAM"
    definition = (
        "VRAM: the card's memory split by owner. weights: the model's parameters (safetensors "
        "size, or parameters x dtype bytes), per GPU. KV pool: the KV cache the engine reserves "
        "at start-up (num_gpu_blocks x block_size x KV bytes per token); it stays allocated with "
        "zero requests, which is why VRAM reads full at 0% GPU-Util. KV used lives inside the "
        "pool (pool x KV usage), never on top of it. other (engine): the engine process's "
        "remaining memory (activations, CUDA graphs, allocator slack). other procs: other "
        "processes and the driver. unsplit: used memory whose kind is unknown. Overflow: the "
        "known parts exceed the card (wrong model size or a misconfiguration)."
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        out: list[Row] = []
        gpus = ctx.view.gpus
        if not gpus:
            return [row(("VRAM " + na(ctx.source_reason("nvml") or "no GPU reported"), DIM))]
        selected = ctx.view.gpu(ctx.gpu_index) or gpus[0]
        for g in gpus:
            s = g.sample
            mark = ">" if g is selected else " "
            head = f"{mark}GPU{s.index} {gib(s.mem_used_bytes)}/{gib(s.mem_total_bytes)} GiB "
            if g.vram is None:
                out.append(row(head, (na(s.missing.get("mem_used_bytes", "memory not reported")), DIM)))
                continue
            out.append(row((head, BOLD if g is selected else None), *bar(g.vram, max(0, width - len(head)))))
            for mig in s.migs:
                out.append(row((f"   MIG {mig.index} {mig.name}: {gib(mig.mem_used_bytes)}/"
                                f"{gib(mig.mem_total_bytes)} GiB (util n/a per instance)", DIM)))
        split = selected.vram
        if split is not None and len(out) < height:
            out.append(row(""))
            out += legend_rows(split, ctx.view.pinned is not None, width)
        procs = selected.processes
        if procs and len(out) + 2 < height:
            out.append(row(""))
            out += process_rows(procs[: max(0, height - len(out) - 1)], width)
        return out

    def provenance(self, ctx: Ctx) -> list[str]:
        gpu = ctx.gpu
        if gpu is None or gpu.vram is None:
            return ["no memory readings for this GPU"]
        return [f"card total/used: {ctx.source_label}", *gpu.vram.provenance]
