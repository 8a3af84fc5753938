"""``gputop report FILE``: what happened in a recording, in a screenful of text."""

from __future__ import annotations

import statistics
import time

from gputop.model import words
from gputop.record.export import RecordingViews

WINDOW_S = 10.0


def _fmt(values: list[float], unit: str = "%") -> str:
    if not values:
        return "n/a"
    return f"avg {statistics.mean(values):.0f}{unit}, peak {max(values):.0f}{unit}"


def report(cursor: RecordingViews) -> str:
    """The summary of every View of the recording (the cursor's detector settings)."""
    recording = cursor.recording
    per_gpu: dict[int, dict[str, list[float]]] = {}
    names: dict[int, str] = {}
    tokens: list[float] = []
    launch: list[tuple[float, float]] = []  # (p99 us, time)
    episodes = {}
    frames = 0
    first = last = None
    for view in cursor.views():
        frames += 1
        t = view.frame.time_wall_s
        first = t if first is None else first
        last = t
        for g in view.gpus:
            s = g.sample
            names[s.index] = s.name
            stats = per_gpu.setdefault(s.index, {"util": [], "sm": [], "mem": []})
            if s.util_gpu_pct is not None:
                stats["util"].append(s.util_gpu_pct)
            if s.sm_active_pct is not None:
                stats["sm"].append(s.sm_active_pct)
            if s.mem_used_bytes is not None and s.mem_total_bytes:
                stats["mem"].append(100.0 * s.mem_used_bytes / s.mem_total_bytes)
        if view.engine and view.engine.tokens_per_s is not None:
            tokens.append(view.engine.tokens_per_s)
        p99s = [a.stats.p99_us for a in view.launch
                if "Launch" in a.api and a.stats.p99_us is not None]
        if p99s:
            launch.append((max(p99s), t))
        for ep in list(view.detector.episodes) + list(view.detector.actives):
            episodes[(ep.subject, ep.kind, ep.start_wall_s)] = ep
    if frames == 0:
        return f"{recording.path}: no frames"
    lines = [f"{recording.path}: {recording.meta.get('source', '?')}, recorded on "
             f"{recording.meta.get('host', '?')}",
             f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(first))} to "
             f"{time.strftime('%H:%M:%S', time.localtime(last))} "
             f"({(last - first) / 60:.1f} min, {frames} frames)"]
    if recording.skipped_frames:
        lines.append(f"({recording.skipped_frames} damaged frame(s) skipped)")
    lines.append("")
    for index in sorted(per_gpu):
        stats = per_gpu[index]
        lines.append(f"GPU {index} {names[index]}: GPU-Util {_fmt(stats['util'])}; "
                     f"SM active {_fmt(stats['sm'])}; VRAM used {_fmt(stats['mem'])}")
    lines.append(f"throughput: {_fmt(tokens, ' tok/s')}")
    lines.append("")
    lines.append(f"busy-but-unproductive episodes: {len(episodes)}")
    for ep in sorted(episodes.values(), key=lambda e: e.start_wall_s):
        until = "end" if ep.end_wall_s is None else words.clock(ep.end_wall_s)
        cause = f"{ep.suspects[0][0]} ({ep.suspects[0][1]:.2f})" if ep.suspects else "unknown"
        lines.append(f"  {words.clock(ep.start_wall_s)}-{until} {ep.headline}; likely {cause}")
        if ep.evidence:
            lines.append(f"    evidence: {'; '.join(ep.evidence)}")
        if len(ep.history) > 1:  # how the verdict formed while the evidence came in
            lines.append("    verdict: " + " -> ".join(f"{c} ({words.clock(t)})"
                                                      for t, c in ep.history))
        runner_up = words.runner_up(ep)
        if runner_up:
            lines.append(f"    {runner_up}")
    if launch:
        lines.append("")
        lines.append(f"worst launch-latency moments (p99 over {WINDOW_S:.0f} s):")
        shown: list[float] = []
        for p99, t in sorted(launch, reverse=True):
            if all(abs(t - s) > WINDOW_S for s in shown):
                shown.append(t)
                lines.append(f"  {time.strftime('%H:%M:%S', time.localtime(t))}  p99 "
                             f"{p99 / 1000:.1f} ms" if p99 >= 1000 else
                             f"  {time.strftime('%H:%M:%S', time.localtime(t))}  p99 {p99:.0f} us")
            if len(shown) == 3:
                break
    return "\n".join(lines)
