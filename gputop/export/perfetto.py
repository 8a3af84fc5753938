"""Perfetto (Chrome trace events) from a recording's Views: a counter track per metric per
GPU, instants for episodes (``export --format perfetto``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gputop.export.csv_rows import worst_launch
from gputop.model.derive import View

if TYPE_CHECKING:
    from gputop.record.store import Recording


def perfetto_events(recording: Recording, all_views: Iterator[View]) -> Iterator[dict]:
    """Chrome/Perfetto trace events: a counter track per metric per GPU, instants for
    episodes.  One "process" per GPU plus one for the engine."""
    named: set[int] = set()
    open_episode = None
    for view in all_views:
        ts = view.frame.time_wall_s * 1e6
        for g in view.gpus:
            pid = g.sample.index + 1
            if pid not in named:
                named.add(pid)
                yield {"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": f"GPU {g.sample.index} {g.sample.name}"}}
            tracks: dict[str, float | dict[str, float] | None] = {
                "GPU-Util %": g.sample.util_gpu_pct, "SM active %": g.sample.sm_active_pct,
                "DRAM bw %": g.sample.dram_bw_pct}
            if g.vram:
                tracks["VRAM GiB"] = {k: round(v / 2**30, 3) for k, v in g.vram.parts()}
            for name, value in tracks.items():
                if value is None:
                    continue
                args = value if isinstance(value, dict) else {"value": value}
                yield {"ph": "C", "name": name, "pid": pid, "ts": ts, "args": args}
        if view.engine and view.engine.tokens_per_s is not None:
            if 0 not in named:
                named.add(0)
                yield {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "engine"}}
            yield {"ph": "C", "name": "tokens/s", "pid": 0, "ts": ts,
                   "args": {"generation": view.engine.tokens_per_s,
                            "prompt": view.engine.prompt_tokens_per_s or 0}}
        p50, p99 = worst_launch(view)
        if p99 is not None:
            yield {"ph": "C", "name": "launch p99 us", "pid": 0, "ts": ts, "args": {"value": p99}}
        alert = view.alert
        if alert is not None and open_episode is None:
            open_episode = alert
            yield {"ph": "i", "s": "g", "name": f"episode: {alert.headline}", "pid": 0,
                   "ts": alert.start_wall_s * 1e6,
                   "args": {"evidence": list(alert.evidence),
                            "suspects": [c for c, _ in alert.suspects]}}
        elif alert is None and open_episode is not None:
            yield {"ph": "i", "s": "g", "name": "episode ended", "pid": 0, "ts": ts}
            open_episode = None
