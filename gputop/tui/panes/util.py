"""Pane 1: GPU-Util over time, with what it really measures next to the number."""

from __future__ import annotations

from rich.style import Style

from gputop.model.detect import sm_far_below_util
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.render import ALERT, BOLD, DIM, Row, na, pct, row

PLOT = Style(color="bright_blue")
PLOT_ALERT = Style(color="red")


def mfu_text(ratio: float | None) -> str:
    if ratio is None:
        return "n/a"
    return f"{100 * ratio:.1f}%" if ratio >= 0.001 else f"{100 * ratio:.2f}%"


def work_cells(ctx: Ctx, s) -> list:
    """ "   SM 11%  MFU 0.4%": what the busy time achieved, next to GPU-Util itself."""
    cells: list = []
    if s.sm_active_pct is not None:
        low = sm_far_below_util(s.util_gpu_pct, s.sm_active_pct)
        cells += ["   SM ", (f"{s.sm_active_pct:.0f}%", ALERT if low else BOLD)]
    engine = ctx.view.engine
    if engine is not None and engine.mfu_ratio is not None:
        cells += ["  MFU ", (mfu_text(engine.mfu_ratio), BOLD), (" est.", DIM)]
    return cells


class UtilPane(Pane):
    key = "1"
    title = "GPU-Util"
    alert_sensitive = True
    definition = (
        "GPU-Util (NVML utilization.gpu, nvidia-smi's GPU-Util): the percent of the last sample "
        "period (1/6 s to 1 s by product) during which at least one kernel was running. One tiny "
        "kernel running all the time reads 100%. It says nothing about how much of the GPU the "
        "kernels used: compare SM activity (pane 2) and throughput (pane 3). "
        "Memory-controller util is the same kind of time fraction for device-memory traffic, "
        "not memory occupancy."
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        gpu = ctx.gpu
        if gpu is None:
            return [row(("GPU n/a (" + (ctx.source_reason("nvml") or "no GPU reported") + ")", ALERT))]
        s = gpu.sample
        if ctx.all_gpus and len(ctx.view.gpus) > 1:
            return self.all_gpu_rows(ctx, "util_gpu_pct", "GPU-Util", width, height,
                                     PLOT_ALERT if ctx.alerting else PLOT)
        big = BOLD if not ctx.alerting else ALERT
        if s.lost:
            return [row((f"GPU {s.index} {s.name}: {s.missing.get('all', 'lost')}", ALERT)),
                    row(("the other GPUs keep updating; [ and ] switch GPU", DIM))]
        util = pct(s.util_gpu_pct) if s.util_gpu_pct is not None else na(s.missing.get("util_gpu_pct"))
        out = [
            row((f"{util:>4}", big), ("  of the time ≥1 kernel ran", DIM), *work_cells(ctx, s)),
            row(f"mem ctrl {pct(s.util_mem_pct)}  ",
                f"{s.power_w:.0f} W  " if s.power_w is not None else "power n/a  ",
                f"{s.temp_c:.0f}°C  " if s.temp_c is not None else "",
                f"{s.sm_clock_mhz:.0f} MHz" if s.sm_clock_mhz is not None else ""),
        ]
        if s.throttle:
            out.append(row(("throttled: " + ", ".join(s.throttle), ALERT)))
        plot_h = max(0, height - len(out) - 1)
        style = PLOT_ALERT if ctx.alerting else PLOT
        plot, _ = ctx.plot(self.sweep, ctx.util_series(s.index), width, plot_h, style, top=100.0)
        out += plot
        out.append(self.footer_row(ctx, width, "0-100%"))
        return out

    def provenance(self, ctx: Ctx) -> list[str]:
        gpu = ctx.gpu
        lines = [f"source: {ctx.source_label}",
                 "the plot uses the driver's buffered samples (about 6 a second) when NVML "
                 "gives them; zoom (1) and shorten the window (-) to see each"]
        if gpu is not None and gpu.sample.util_gpu_samples_pct:
            lines.append(f"{len(gpu.sample.util_gpu_samples_pct)} driver samples this tick: "
                         + " ".join(f"{v:.0f}" for v in gpu.sample.util_gpu_samples_pct))
        return lines
