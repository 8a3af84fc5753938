"""Pane 3: the useful work, tokens per second, next to the queue that feeds it."""

from __future__ import annotations

from rich.style import Style

from gputop.model.plots import tokens_per_s
from gputop.tui.panes.base import PLOT_NOTE, Ctx, Pane
from gputop.tui.widgets import clock_text
from gputop.tui.fitting import wrapped
from gputop.tui.render import (ALERT, BOLD, DIM, WARN, Row, count, first_fitting, fit,
                               fit_parts, hbar, na, plural, rate, row, seconds_text)

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
        "scrapes, timed by when each scrape's answer arrived; a counter that drops (engine "
        "restart) counts from zero, never negative. Prompt tokens/s: the same for prefill "
        "tokens. A training job's counter moves once per step: its train tok/s is the rate over "
        "the last whole step (less once the next step is overdue), never the 0 or whole step "
        "of one scrape. Baseline: the median of the last 60 s of healthy ticks, frozen during an "
        "episode. ITL p99: the 99th percentile inter-token latency (vllm:inter_token_latency_"
        "seconds) and TTFT p99 the time to first token, both over the last 5 s, from the "
        "difference of two scrapes of the engine's histograms (interpolated inside a bucket, "
        "as Prometheus' histogram_quantile does); a collapse can show here while tokens/s "
        "rises. Preemptions/s: requests evicted from a full KV cache. Running / waiting: the "
        "engine's request gauges (waiting by reason when it reports one). KV usage: the "
        "fraction of the pre-reserved KV-cache pool in use."
        + PLOT_NOTE
    )

    def rows(self, ctx: Ctx, width: int, height: int) -> list[Row]:
        engine = ctx.view.engine
        last = ctx.view.last_engine
        baseline = (engine or last).baseline_tokens_per_s if (engine or last) else None
        if engine is None:
            reason = ctx.source_reason("engine") or "no engine: pass --engine URL"
            out = wrapped("tokens/s " + na(reason), width, DIM, rows=2)
            if last is not None:  # late: keep the history, say how old the last reading is
                out.append(row((f"last reading {rate(last.tokens_per_s)} tok/s, "
                                f"{last.age_s:.0f}s ago", DIM)))
            else:
                return out
        else:
            out = self.header_rows(ctx, engine, width)
        s = (engine or last).sample
        episodes = self.episode_rows(ctx, width, max_rows=3 if height >= 14 else 0)

        style = PLOT_ALERT if ctx.alerting else PLOT
        unit = "train tok/s" if s.kind == "trainer" else "tok/s"
        out += self.plot_block(ctx, tokens_per_s, width, height - len(out) - len(episodes), style,
                               lambda top: f"0-{rate(top)} {unit}", floor=(baseline or 0) * 1.1)
        out += episodes
        return out

    @staticmethod
    def header_rows(ctx: Ctx, engine, width: int) -> list[Row]:
        s = engine.sample
        big = ALERT if ctx.alerting else BOLD
        unit = "train tok/s" if s.kind == "trainer" else "gen tok/s"
        baseline = engine.baseline_tokens_per_s
        value = row((f"{rate(engine.tokens_per_s):>6}", big), f" {unit}")
        late = row((f"  ({engine.age_s:.1f}s old)", WARN)) \
            if engine.age_s >= 1.5 * ctx.interval_s else []
        variants = [value + late]
        if baseline and engine.tokens_per_s is not None:
            share = f"  {engine.tokens_per_s / baseline:.0%}"
            style = ALERT if ctx.alerting else DIM
            variants = [value + row((f"{share} of baseline {rate(baseline)}", style)) + late,
                        value + row((f"{share} of {rate(baseline)}", style)) + late,
                        value + row((share, style)) + late] + variants
        out = [first_fitting(variants, width)]
        if s.kind == "trainer":
            # its GPUs from NVML's process lists (the trainer's page names none; the view's
            # gpus include any it did name): unknown where NVML shows none, never "0 GPUs"
            gpus = engine.gpus
            where = (f"on {plural(len(gpus), 'GPU')} ({', '.join(map(str, gpus))})" if gpus
                     else "GPUs n/a (no process of its tree in NVML's lists)")
            out.append(fit(row((" · ".join(x for x in (s.model, where) if x), DIM)), width))
            return out
        latency = []
        for name, label in (("itl", "ITL"), ("ttft", "TTFT")):
            p99, base = engine.p99_s(name), engine.baseline_latency_s.get(name)
            if p99 is None and base is None:
                continue
            ratio = p99 / base if p99 is not None and base else None
            hot = ratio is not None and ratio >= 2
            latency.append((row(("  " if latency else ""), f"{label} p99 ",
                                (seconds_text(p99), ALERT if hot else BOLD),
                                (f" ({ratio:.1f}x)" if ratio is not None else " (learning)",
                                 ALERT if hot else DIM)), len(latency)))
        out.append(fit_parts(latency, width) if latency else
                   fit(row(("latency n/a (the engine reports no latency histograms)", DIM)), width))
        preempt = engine.preemptions_per_s
        out.append(fit_parts([(row(f"prompt {rate(engine.prompt_tokens_per_s)} tok/s"), 1),
                              (row(f"   finished {rate(engine.requests_per_s)} req/s"), 2),
                              (row((f"   preempted {rate(preempt)}/s" if preempt else "",
                                    ALERT if preempt else None)), 0)], width))
        waiting_style = ALERT if (s.requests_waiting or 0) > max(4, (s.requests_running or 0)) else None
        reasons = ", ".join(f"{k} {v:.0f}" for k, v in sorted(s.waiting_by_reason.items()) if v)
        out.append(fit_parts([(row(f"running {count(s.requests_running)}"), 0),
                              (row("   ", (f"waiting {count(s.requests_waiting)}", waiting_style)), 0),
                              (row((f" ({reasons})" if reasons else "", DIM)), 1)], width))
        kv = s.kv_usage_ratio
        label = f"KV used {kv:>4.0%} " if kv is not None else "KV used " + na(
            "llama.cpp removed its KV gauges" if s.kind == "llamacpp" else "not reported")
        out.append(row(label, *hbar(kv, max(0, width - len(label)), KV_BAR) if kv is not None else ""))
        extra = ThroughputPane.extra_text(engine)
        if extra:
            out.append(row((extra[:width], DIM)))
        out += ThroughputPane.replica_rows(engine, width)
        return out

    @staticmethod
    def extra_text(engine) -> str:
        """The newer families in one line, only those the engine reports."""
        r, s = engine.rates, engine.sample
        parts = []
        if r.get("prefix_cache_hit_ratio") is not None:
            parts.append(f"cache hit {r['prefix_cache_hit_ratio']:.0%}")
        if r.get("spec_acceptance_ratio") is not None:
            parts.append(f"spec accept {r['spec_acceptance_ratio']:.0%}")
        if r.get("prefill_time_ratio") is not None:
            parts.append(f"prefill {r['prefill_time_ratio']:.0%} of time")
        if r.get("forward_busy_ratio") is not None:
            parts.append(f"engine busy {r['forward_busy_ratio']:.0%}")
        if r.get("retractions_per_s"):
            parts.append(f"retracted {rate(r['retractions_per_s'])}/s")
        if s.kv_evictable_tokens is not None and s.kv_used_tokens is not None:
            parts.append(f"KV tok {count(s.kv_used_tokens)} used "
                         f"{count(s.kv_evictable_tokens)} cached")
        if s.lora_running or s.lora_waiting:
            parts.append(f"LoRA {len(s.lora_running)} run {len(s.lora_waiting)} wait")
        return "   ".join(parts)

    @staticmethod
    def replica_rows(engine, width: int, max_rows: int = 4) -> list[Row]:
        """One line per data-parallel engine / model behind the endpoint, on its GPUs."""
        rows = []
        for r in engine.replicas[:max_rows]:
            gpus = ",".join(map(str, r.gpus)) or "?"
            kv = r.sample.kv_usage_ratio
            text = (f" {r.sample.replica} GPU {gpus}: {rate(r.tokens_per_s)} tok/s  "
                    f"run {count(r.sample.requests_running)} wait "
                    f"{count(r.sample.requests_waiting)}"
                    + (f"  KV {kv:.0%}" if kv is not None else ""))
            rows.append(row(text[:width]))
        if len(engine.replicas) > max_rows:
            rows.append(row((f" +{len(engine.replicas) - max_rows} more (snapshot --json)", DIM)))
        return rows

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
            rows.append(fit(row((f"{clock_text(ep.start_wall_s)}-{until} "
                                 f"{ep.kind.replace('_', ' ')}: {cause}", style)), width))
        return rows
    def provenance(self, ctx: Ctx) -> list[str]:
        engine = ctx.view.engine or ctx.view.last_engine
        if engine is None:
            return [f"no engine source ({ctx.source_reason('engine') or 'none configured'})"]
        s = engine.sample
        lines = [f"engine: {s.kind} at {s.url}", f"model: {s.model or 'unknown'}",
                 f"reading taken {engine.age_s:.1f}s before this frame",
                 f"tensor parallel {s.tensor_parallel or '?'}, data-parallel engines "
                 f"{s.data_parallel or 1}, process tree {', '.join(map(str, s.pids)) or 'unknown'}",
                 "latency histograms read: " + (", ".join(h.name for h in s.histograms) or "none"),
                 f"latency window {ctx.view.detector.config.latency_window_s:.0f}s; "
                 + "; ".join(f"{name} p50 {seconds_text(engine.p50_s(name))} p99 "
                             f"{seconds_text(engine.p99_s(name))}"
                             for name in ("itl", "ttft", "tpot", "e2e", "queue")
                             if engine.p99_s(name) is not None)]
        for r in engine.replicas:
            lines.append(f"replica {r.sample.replica}: GPUs {', '.join(map(str, r.gpus)) or 'unknown'}"
                         f", pids {', '.join(map(str, r.sample.pids)) or 'none tied'}"
                         + (f" ({r.sample.note})" if r.sample.note else ""))
        if s.note:
            lines.append(f"note: {s.note}")
        for ep in ctx.view.detector.episodes[-5:]:
            lines.append(f"episode {ep.headline}: " + "; ".join(ep.evidence))
        return lines
