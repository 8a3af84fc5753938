"""Pane 4: VRAM per GPU split into weights | KV pool (used, free) | other | other processes | free.

Each part has its own glyph as well as its own colour, so the bar reads on a
no-colour terminal too.  Overflow (parts beyond the card) is drawn past the
card's edge marker, never clipped.
"""

from __future__ import annotations

from rich.style import Style

from gputop.model.vram import VramSplit
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.render import ALERT, BOLD, DIM, Row, gib, na, row, size_text

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
            overflow = [("overflow", split.overflow_bytes)] if split.overflow_bytes else []
            for name, size in split.parts(include_zero=True) + overflow:
                label, glyph, style = PARTS[name]
                if name == "unsplit" and ctx.view.pinned is not None:
                    label = "pinned tree"
                share = size / split.total_bytes if split.total_bytes else 0
                out.append(row((glyph * 2, style), f" {label:<15}{size_text(size):>11}  {share:>4.0%}"))
            if split.kv_pool_bytes is not None:
                out.append(row((f"   KV pool {size_text(split.kv_pool_bytes)} (used+free), "
                                "reserved at start", DIM)))
        procs = selected.processes
        if procs and len(out) + 2 < height:
            out.append(row(""))
            out.append(row(("   pid user     VRAM GiB  SM%  command", DIM)))
            for p in procs[: max(0, height - len(out))]:
                sm = "n/a" if p.sm_util_pct is None else f"{p.sm_util_pct:.0f}"
                out.append(row(f"{p.pid:>6} {p.user[:8]:<8} {gib(p.mem_bytes, 2):>8} {sm:>4}  "
                               f"{p.cmdline or p.name}"))
        return out

    def provenance(self, ctx: Ctx) -> list[str]:
        gpu = ctx.gpu
        if gpu is None or gpu.vram is None:
            return ["no memory readings for this GPU"]
        return [f"card total/used: {ctx.source_label}", *gpu.vram.provenance]
