"""Pane 5: host-side CUDA call durations per API, and a histogram of the slowest one."""

from __future__ import annotations

from rich.style import Style

from gputop.model.derive import OFF_CPU
from gputop.buckets import bucket_bounds_ns
from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.fitting import Col, column_widths, wrapped
from gputop.tui.render import (ALERT, DIM, Row, clip, duration_us, first_fitting, fit, fit_parts,
                               hbar, na, rate, row)

HIST = Style(color="yellow")
DECADES_US = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)


def decade_counts(buckets: dict[int, int]) -> list[tuple[str, int]]:
    """Fold log-linear buckets into decades (<10 us, <100 us, ...) for a compact drawing."""
    counts = [0] * len(DECADES_US)
    for index, count in buckets.items():
        low_us = bucket_bounds_ns(index)[0] / 1000
        slot = sum(1 for edge in DECADES_US[1:] if low_us >= edge)
        counts[slot] += count
    labels = ["<10us", "<100us", "<1ms", "<10ms", "<100ms", "<1s", ">=1s"]
    return list(zip(labels, counts))


class LaunchPane(Pane):
    key = "5"
    title = "Launch latency (host)"
    alert_sensitive = False
    definition = (
        "Launch latency: how long the host thread spent inside each CUDA API call "
        "(cudaLaunchKernel, cuLaunchKernel, cudaGraphLaunch, cudaStreamSynchronize, ...), "
        "measured with eBPF uprobes on entry and return. It is host-side call duration: not GPU "
        "execution time and not launch-to-start. A p99 far above p50 means the launching thread "
        "was preempted or stalled (CPU contention). Synchronize calls wait for the GPU by design. "
        "Percentiles come from log-linear histograms (8 sub-buckets per power of two: within "
        "6.25%); calls/s over the stats window. With --ebpf-duty the probes are attached part "
        "of the time (1 s in 10 at 0.1) so traced threads pay less: durations are unchanged, "
        "call counts cover only the attached seconds, calls/s is per attached second, and the "
        "window widens to 30 s."
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        offcpu = next((a for a in ctx.view.launch if a.api == OFF_CPU), None)
        apis = tuple(a for a in ctx.view.launch if a.api != OFF_CPU)
        if not apis:
            return wrapped("launch latency " + na(self.missing_reason(ctx)), width, DIM)
        out = self.api_rows(apis, width)
        worst = None
        for a in apis:
            if "Launch" in a.api and (worst is None or (a.stats.p99_us or 0) > (worst.stats.p99_us or 0)):
                worst = a
        worst = worst or apis[0]
        space = height - len(out) - 1
        traced_s = ctx.view.launch_traced_s
        sampled = "" if traced_s is None else f" ({traced_s:.0f}s traced)"
        if space >= 3:
            out.append(fit(row((f"{worst.api} call durations, last "
                                f"{ctx.view.launch_window_s:.0f}s{sampled}:", DIM)), width))
            decades = decade_counts(worst.buckets)
            total = sum(c for _, c in decades) or 1
            for label, count in decades[: space - 1]:
                out.append(row(f"{label:>7} {count:>8,} ", *hbar(count / total, max(0, width - 17), HIST)))
        out = out[: height - 2 if offcpu else height - 1]
        if offcpu is not None:
            st = offcpu.stats
            out.append(fit_parts([(row(("off-CPU of launch threads: ", DIM)), 2),
                                  (row(f"{rate(st.calls_per_s)}/s, p50 {duration_us(st.p50_us)}, "), 1),
                                  (row((f"p99 {duration_us(st.p99_us)}",
                                        ALERT if (st.p99_us or 0) >= 1000 else None)), 0)], width))
        sampled_note = "" if traced_s is None else ", sampled: calls/s per traced second"
        out.append(first_fitting([
            row(("host-side call duration (eBPF uprobes), not GPU time" + sampled_note, DIM)),
            row(("host-side call time, not GPU time" + sampled_note, DIM)),
            row(("host-side, not GPU time", DIM))], width))
        return out

    @staticmethod
    def missing_reason(ctx: Ctx) -> str:
        """Why there is nothing to show, true for where the frames come from."""
        reason = ctx.source_reason("ebpf")
        if reason:
            return reason
        if ctx.simulated:
            return "the simulated GPU makes no CUDA calls now" if not ctx.view.frame.launch \
                else "no CUDA calls in the window"
        return "eBPF probes not enabled: --ebpf full, as root"

    @staticmethod
    def api_rows(apis, width: int) -> list[Row]:
        """The per-API table, columns as wide as their values; the max column goes first,
        then the names are shortened (with "…")."""
        texts = [(a.api, rate(a.stats.calls_per_s), duration_us(a.stats.p50_us),
                  duration_us(a.stats.p99_us), duration_us(a.stats.max_us)) for a in apis]
        widest = [max(len(t[i]) for t in texts) for i in range(5)]
        columns = [Col("api", "API", widest[0], least=min(widest[0], 14), most=widest[0],
                       grows=True),
                   Col("calls", "calls/s", widest[1], priority=1), Col("p50", "p50", widest[2]),
                   Col("p99", "p99", widest[3]), Col("max", "max", widest[4], priority=2)]
        widths = column_widths(columns, width)
        keys = [c.key for c in columns]

        def cells(values: tuple[str, ...], p99_style=None, style=None) -> Row:
            out: Row = []
            for key, text in zip(keys, values):
                if key not in widths:
                    continue
                w = widths[key]
                text = clip(text, w).ljust(w) if key == "api" else text.rjust(w)
                out += row(("" if not out else " ", None), (text, p99_style if key == "p99" else style))
            return fit(out, width)

        out = [cells(tuple(c.header for c in columns), style=DIM)]
        for a, values in zip(apis, texts):
            st = a.stats
            jitter = st.p50_us and st.p99_us and st.p99_us / st.p50_us >= 20 and "Launch" in a.api
            out.append(cells(values, ALERT if jitter else None))
        return out

    def provenance(self, ctx: Ctx) -> list[str]:
        status = ctx.view.sources.get("ebpf")
        if status is None:
            return [f"source: {ctx.source_label} (eBPF off: gputop --ebpf full, as root)"]
        lines = [f"eBPF: {'ok' if status.ok else 'n/a (' + str(status.reason) + ')'}",
                 *([f"attached: {status.detail}"] if status.detail else []),
                 f"per-API stats over the last {ctx.view.launch_window_s:.0f}s"
                 + ("" if ctx.view.launch_traced_s is None else
                    f", probes attached {ctx.view.launch_traced_s:.1f}s of it (--ebpf-duty)")]
        pids = sorted({h.pid for h in ctx.view.frame.launch})
        if pids:
            lines.append("processes: " + ", ".join(map(str, pids[:10])))
        return lines
