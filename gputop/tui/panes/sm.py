"""Pane 2: SM activity next to GPU-Util, so "97% busy, 11% SM active" is visible at a glance."""

from __future__ import annotations

from rich.style import Style

from gputop.model.detect import sm_far_below_util
from gputop.tui.panes.base import PLOT_NOTE, Ctx, Pane, gpu_field
from gputop.tui.panes.util import mfu_text
from gputop.tui.render import ALERT, BOLD, DIM, Row, fit_parts, hbar, na, row

BAR = Style(color="cyan")
UTIL_BAR = Style(color="bright_blue")
PLOT = Style(color="cyan")

METRICS = (
    ("GPU-Util", "util_gpu_pct", UTIL_BAR),
    ("SM active", "sm_active_pct", BAR),
    ("SM occup.", "sm_occupancy_pct", BAR),
    ("DRAM bw", "dram_bw_pct", BAR),
    ("Tensor", "tensor_pct", BAR),
)


def estimate_reason(engine, estimate_per_s: float | None, what: str) -> str:
    """Why an MFU / MBU estimate is missing: the engine gives none, or the card's peak is
    not in gputop's table."""
    if estimate_per_s is None:
        return f"the engine estimates no {what}"
    return "this GPU is not in the table of peaks"


class SmPane(Pane):
    key = "2"
    title = "SM activity"
    alert_sensitive = True
    definition = (
        "SM active: the fraction of time-and-SMs with at least one warp resident, averaged over "
        "all SMs (NVML GPM SM_UTIL on Hopper+, or DCGM_FI_PROF_SM_ACTIVE). Unlike GPU-Util it "
        "drops when kernels use few SMs. It is still a time ratio: a kernel at 5% of peak "
        "reads 100% while it runs. SM occupancy: resident warps over the maximum. DRAM bw: "
        "fraction of peak device-memory bandwidth used. Tensor: fraction of time the tensor "
        "pipes were active. MFU est.: the engine's own estimate of model FLOPs per second per "
        "GPU (vllm:estimated_flops_per_gpu_total, with --enable-mfu-metrics) over the card's "
        "dense bf16 datasheet peak; MBU est.: its estimated bytes read and written per second "
        "over the HBM bandwidth. Estimates twice over, but the only ones that say how much "
        "of the GPU the busy time achieved: 'util 97%, SM 11%, MFU 0.4%'."
        + PLOT_NOTE
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        gpu = ctx.gpu
        if gpu is None:
            return [row(("n/a (no GPU)", ALERT))]
        s = gpu.sample
        if ctx.all_gpus and len(ctx.view.gpus) > 1:
            return self.all_gpu_rows(ctx, "sm_active_pct", "SM active", width, height, PLOT)
        label_w, value_w = 10, 5
        bar_w = max(0, width - label_w - value_w - 1)
        out = []
        for label, field, style in METRICS:
            value = getattr(s, field)
            if value is None:
                out.append(row(f"{label:<{label_w}}", (na(s.missing.get(field)), DIM)))
                continue
            low = field == "sm_active_pct" and sm_far_below_util(s.util_gpu_pct, value)
            out.append(row(f"{label:<{label_w}}", (f"{value:>4.0f}%", ALERT if low else None), " ",
                           *[(c, st) for c, st in hbar(value / 100, bar_w, style)]))
        engine = ctx.view.engine
        if engine is not None and (engine.flops_per_s is not None or engine.mem_bytes_per_s):
            mbu = mfu_text(engine.mbu_ratio) if engine.mbu_ratio is not None \
                else na(estimate_reason(engine, engine.mem_bytes_per_s, "bytes"))
            mfu = mfu_text(engine.mfu_ratio) if engine.mfu_ratio is not None \
                else na(estimate_reason(engine, engine.flops_per_s, "FLOPs"))
            out.append(fit_parts([
                (row(f"{'MFU est.':<{label_w}}", (f"{mfu:>5}", BOLD)), 0),
                (row(f"   MBU est. {mbu}"), 1),
                (row(("   the engine's estimate / datasheet peak", DIM)), 2)], width))
        out += self.plot_block(ctx, gpu_field(s.index, "sm_active_pct"), width,
                               height - len(out), PLOT, "SM active 0-100%", top=100.0)
        return out

    def provenance(self, ctx: Ctx) -> list[str]:
        lines = [f"source: {ctx.source_label}"]
        engine = ctx.view.engine
        if engine is not None and engine.peak is not None:
            lines.append(f"peak for MFU/MBU: {engine.peak.model}, {engine.peak.tflops_bf16:g} "
                         f"TFLOPS bf16 dense, {engine.peak.mem_tb_per_s:g} TB/s "
                         f"({engine.peak.source})")
        elif engine is not None:
            lines.append("MFU/MBU n/a: this GPU model is not in gputop's table of peaks")
        if engine is not None and engine.flops_per_s is None:
            lines.append("the engine reports no FLOPs estimate (vLLM: --enable-mfu-metrics)")
        return lines
