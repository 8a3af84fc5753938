"""Pane 2: SM activity next to GPU-Util, so "97% busy, 11% SM active" is visible at a glance."""

from __future__ import annotations

from rich.style import Style

from gputop.model.detect import sm_far_below_util
from gputop.tui.panes.base import Ctx, Pane, gpu_field
from gputop.tui.panes.util import mfu_text
from gputop.tui.render import ALERT, BOLD, DIM, Row, hbar, na, row

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
                out.append(row(f"{label:<{label_w}}", (na(s.missing.get(field))[: width - label_w], DIM)))
                continue
            low = field == "sm_active_pct" and sm_far_below_util(s.util_gpu_pct, value)
            out.append(row(f"{label:<{label_w}}", (f"{value:>4.0f}%", ALERT if low else None), " ",
                           *[(c, st) for c, st in hbar(value / 100, bar_w, style)]))
        engine = ctx.view.engine
        if engine is not None and (engine.flops_per_s is not None or engine.mem_bytes_per_s):
            out.append(row(f"{'MFU est.':<{label_w}}", (f"{mfu_text(engine.mfu_ratio):>5}", BOLD),
                           f"   MBU est. {mfu_text(engine.mbu_ratio)}",
                           ("   vLLM's FLOPs / datasheet peak", DIM)))
        plot_h = max(0, height - len(out) - 1)
        plot, _ = ctx.plot(self.sweep, gpu_field(s.index, "sm_active_pct"), width, plot_h, PLOT,
                           top=100.0)
        out += plot
        out.append(self.footer_row(ctx, width, "SM active 0-100%"))
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
