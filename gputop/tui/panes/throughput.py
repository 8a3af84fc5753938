"""Pane 3: the useful work, tokens per second, next to the queue that feeds it."""

from __future__ import annotations

from rich.style import Style

from gputop.tui.panes.base import Ctx, Pane
from gputop.tui.widgets import clock_text
from gputop.tui.render import ALERT, BOLD, DIM, Row, count, hbar, na, rate, row

PLOT = Style(color="green")
PLOT_ALERT = Style(color="red")
KV_BAR = Style(color="magenta")


class ThroughputPane(Pane):
    key = "3"
    title = "Throughput"
    alert_sensitive = True
    definition = (
        "Generation tokens/s: the per-second increase of the engine's generated-token counter "
        "(vllm:generation_tokens_total, sglang:generation_tokens_total, ...) between two "
        "scrapes; a counter that drops (engine restart) counts from zero, never negative. "
        "Prompt tokens/s: the same for prefill tokens. Baseline: the median tokens/s of the "
        "last 60 s of healthy ticks, frozen during an episode. Running / waiting: the engine's "
        "request gauges. KV usage: the fraction of the pre-reserved KV-cache pool in use."
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        engine = ctx.view.engine
        if engine is None:
            reason = ctx.source_reason("engine") or "no engine: pass --engine URL"
            return [row(("tokens/s " + na(reason), DIM))]
        s = engine.sample
        big = ALERT if ctx.alerting else BOLD
        unit = "train tok/s" if s.kind == "trainer" else "gen tok/s"
        baseline = engine.baseline_tokens_per_s
        change = ""
        if baseline and engine.tokens_per_s is not None:
            change = f"  {engine.tokens_per_s / baseline:.0%} of baseline {rate(baseline)}"
        out = [row((f"{rate(engine.tokens_per_s):>6}", big), f" {unit}", (change, ALERT if ctx.alerting else DIM))]
        if s.kind != "trainer":
            out.append(row(f"prompt {rate(engine.prompt_tokens_per_s)} tok/s   "
                           f"finished {rate(engine.requests_per_s)} req/s"))
            waiting_style = ALERT if (s.requests_waiting or 0) > max(4, (s.requests_running or 0)) else None
            out.append(row(f"running {count(s.requests_running)}   ",
                           (f"waiting {count(s.requests_waiting)}", waiting_style)))
            kv = s.kv_usage_ratio
            label = f"KV used {kv:>4.0%} " if kv is not None else "KV used " + na("not reported")
            out.append(row(label, *hbar(kv, max(0, width - len(label)), KV_BAR) if kv is not None else ""))
        else:
            out.append(row((f"{s.model} · {len(s.gpu_indices)} GPU(s)", DIM)))
        episodes = self.episode_rows(ctx, width, max_rows=3 if height >= 14 else 0)
        plot_h = max(0, height - len(out) - len(episodes) - 1)

        def tokens(_frame, state):
            return state.point.tokens_per_s

        style = PLOT_ALERT if ctx.alerting else PLOT
        plot, top = ctx.plot(self.sweep, tokens, width, plot_h, style, floor=(baseline or 0) * 1.1)
        out += plot
        out += episodes
        out.append(self.footer_row(ctx, width, f"0-{rate(top)} tok/s"))
        return out

    @staticmethod
    def episode_rows(ctx: Ctx, width: int, max_rows: int) -> list[Row]:
        """The latest "busy but unproductive" episodes, newest last (also in snapshot alerts)."""
        state = ctx.view.detector
        episodes = list(state.episodes) + ([state.active] if state.active else [])
        if not episodes or max_rows <= 0:
            return []
        rows = []
        for ep in episodes[-max_rows:]:
            until = "now" if ep.end_wall_s is None else clock_text(ep.end_wall_s)
            cause = ep.suspects[0][0].replace("_", " ") if ep.suspects else "unknown"
            style = ALERT if ep.end_wall_s is None else DIM
            rows.append(row((f"{clock_text(ep.start_wall_s)}-{until} {ep.kind.replace('_', ' ')}: "
                             f"{cause}"[:width], style)))
        return rows
    def provenance(self, ctx: Ctx) -> list[str]:
        engine = ctx.view.engine
        if engine is None:
            return [f"no engine source ({ctx.source_reason('engine') or 'none configured'})"]
        s = engine.sample
        lines = [f"engine: {s.kind} at {s.url}", f"model: {s.model or 'unknown'}",
                 f"tensor parallel {s.tensor_parallel or '?'}, data-parallel engines "
                 f"{s.data_parallel or 1}, process tree {', '.join(map(str, s.pids)) or 'unknown'}"]
        if s.note:
            lines.append(f"note: {s.note}")
        for ep in ctx.view.detector.episodes[-5:]:
            lines.append(f"episode {ep.headline}: " + "; ".join(ep.evidence))
        return lines
