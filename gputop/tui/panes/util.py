"""Pane 1: GPU-Util over time, with what it really measures next to the number."""

from __future__ import annotations

from rich.style import Style

from gputop.model.detect import sm_far_below_util
from gputop.tui.panes.base import PLOT_NOTE, Ctx, Pane
from gputop.tui.render import ALERT, BOLD, DIM, Row, first_fitting, fit_parts, na, pct, row

PLOT = Style(color="bright_blue")
PLOT_ALERT = Style(color="red")


def mfu_text(ratio: float | None) -> str:
    if ratio is None:
        return "n/a"
    return f"{100 * ratio:.1f}%" if ratio >= 0.001 else f"{100 * ratio:.2f}%"


def sm_cells(s) -> Row:
    """ "   SM 11%": what the busy time achieved, next to GPU-Util itself."""
    if s.sm_active_pct is None:
        return []
    low = sm_far_below_util(s.util_gpu_pct, s.sm_active_pct)
    return row("   SM ", (f"{s.sm_active_pct:.0f}%", ALERT if low else BOLD))


def mfu_cells(ctx: Ctx) -> Row:
    engine = ctx.view.engine
    if engine is None or engine.mfu_ratio is None:
        return []
    return row("  MFU ", (mfu_text(engine.mfu_ratio), BOLD), (" est.", DIM))


def util_header(ctx: Ctx, s, width: int, big) -> Row:
    """GPU-Util with what it means, SM activity and MFU beside it: the fullest that fits
    (the meaning shortens, MFU goes, before SM activity does)."""
    util = pct(s.util_gpu_pct) if s.util_gpu_pct is not None \
        else na(s.missing.get("util_gpu_pct"))
    value = row((f"{util:>4}", big))
    full, short = row(("  of the time ≥1 kernel ran", DIM)), row(("  ≥1 kernel ran", DIM))
    sm, mfu = sm_cells(s), mfu_cells(ctx)
    return first_fitting([value + full + sm + mfu, value + full + sm, value + short + sm + mfu,
                          value + short + sm, value + sm, value], width)


def clocks_row(s, width: int) -> Row:
    """Memory-controller util, power, temperature, SM clock: whole items, the least
    telling dropped first."""
    power = f"{s.power_w:.0f} W" if s.power_w is not None \
        else "power " + na(s.missing.get("power_w"))
    parts = [(row(f"mem ctrl {pct(s.util_mem_pct)}"), 1), (row(f"  {power}"), 0)]
    if s.temp_c is not None:
        parts.append((row(f"  {s.temp_c:.0f}°C"), 3))
    if s.sm_clock_mhz is not None:
        parts.append((row(f"  {s.sm_clock_mhz:.0f} MHz"), 2))
    return fit_parts(parts, width)


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
        + PLOT_NOTE
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
        out = [util_header(ctx, s, width, big), clocks_row(s, width)]
        if s.throttle:
            out.append(row(("throttled: " + ", ".join(s.throttle), ALERT)))
        style = PLOT_ALERT if ctx.alerting else PLOT
        out += self.plot_block(ctx, ctx.util_series(s.index), width, height - len(out), style,
                               "0-100%", top=100.0)
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
