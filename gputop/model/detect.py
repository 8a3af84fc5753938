""""Busy but unproductive": GPU-Util high while throughput collapsed, with evidence.

A pure fold over frames (``fold(previous_state, recent_frames) -> state``); the
timeline keeps the state after every frame so pause and replay show what the
live screen showed.  Hysteresis: an episode opens after the condition holds
``hold_s`` and closes after it has been false ``hold_s``; the thresholds to
clear are looser than those to fire, so a value sitting at the threshold does
not flap.

Two kinds of episode:
- ``busy_unproductive``: GPU-Util >= busy_util_pct while tokens/s <= collapse_ratio
  x baseline (the GPU is busy doing something that is not the user's work);
- ``starved``: tokens/s collapsed and GPU-Util fell too, while demand is still
  there (requests waiting, or a training loop): the GPU waits on the host.
Traffic that simply drops (util falls, nothing waiting) is no episode.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

from gputop.model.point import Point, point
from gputop.schema import Frame

CAUSES = (
    "oversized_request", "prefill_interference", "collective_straggler", "input_stall",
    "host_launch_jitter", "tiny_kernels", "memory_bandwidth", "throttling",
)


@dataclass(frozen=True)
class DetectConfig:
    busy_util_pct: float = 90.0
    collapse_ratio: float = 0.5
    hold_s: float = 3.0
    clear_util_margin_pct: float = 5.0  # clears below busy_util_pct - margin
    clear_ratio: float = 0.6  # clears when tokens/s >= clear_ratio x baseline
    baseline_window_s: float = 60.0
    min_baseline_points: int = 3
    smooth_points: int = 3  # GPU-Util is averaged over this many ticks


@dataclass(frozen=True)
class Episode:
    kind: str
    gpus: tuple[int, ...]
    start_wall_s: float
    end_wall_s: float | None
    baseline_tokens_per_s: float
    tokens_per_s: float | None
    util_pct: float
    evidence: tuple[str, ...]
    suspects: tuple[tuple[str, float], ...]

    @property
    def headline(self) -> str:
        gpus = ",".join(str(g) for g in self.gpus)
        tps = "n/a" if self.tokens_per_s is None else f"{self.tokens_per_s:,.0f}"
        verb = "busy" if self.kind == "busy_unproductive" else "starved at"
        return (f"GPU {gpus} {verb} {self.util_pct:.0f}% but {tps} tok/s "
                f"(baseline {self.baseline_tokens_per_s:,.0f})")


@dataclass(frozen=True)
class DetectState:
    point: Point
    recent: tuple[Point, ...]  # last few points, newest last
    healthy: tuple[Point, ...]  # points that feed the baseline (inside baseline_window_s)
    baseline_tokens_per_s: float | None
    pending_since: Point | None = None
    clearing_since: Point | None = None
    active: Episode | None = None
    episodes: tuple[Episode, ...] = ()  # closed ones, newest last, bounded
    config: DetectConfig = DetectConfig()

    @property
    def note(self) -> str | None:
        """Why the detector cannot judge right now (None when it can)."""
        if self.point.engine_kind is None:
            return "needs a throughput source (engine metrics)"
        if self.baseline_tokens_per_s is None:
            return "learning the throughput baseline"
        return None


MAX_EPISODES = 50
RECENT_POINTS = 10


def make_fold(config: DetectConfig = DetectConfig()):
    def fold(previous: DetectState | None, frames: list[Frame]) -> DetectState:
        before = frames[-2] if len(frames) >= 2 else None
        return step(previous, point(before, frames[-1]), config)
    return fold


def _mean_util(points: tuple[Point, ...], gpus: list[int]) -> dict[int, float]:
    out = {}
    for g in gpus:
        values = [p.util_pct[g] for p in points if g in p.util_pct]
        if values:
            out[g] = sum(values) / len(values)
    return out


def step(previous: DetectState | None, now: Point, config: DetectConfig) -> DetectState:
    if previous is None:
        previous = DetectState(point=now, recent=(), healthy=(), baseline_tokens_per_s=None,
                               config=config)
    recent = (previous.recent + (now,))[-RECENT_POINTS:]
    smooth = recent[-config.smooth_points:]
    util = _mean_util(smooth, sorted(now.util_pct))
    baseline = previous.baseline_tokens_per_s
    tps = now.tokens_per_s
    top_util = max(util.values()) if util else None
    waiting = now.requests_waiting or 0
    demand = now.engine_kind == "trainer" or waiting > 0

    def condition(ratio: float, util_threshold: float) -> str | None:
        if tps is None or baseline is None or baseline <= 0 or top_util is None:
            return None
        if tps > ratio * baseline:
            return None
        if top_util >= util_threshold:
            return "busy_unproductive"
        return "starved" if demand else None

    state = replace(previous, point=now, recent=recent, config=config)
    if state.active is None:
        kind = condition(config.collapse_ratio, config.busy_util_pct)
        if kind is None:
            state = replace(state, pending_since=None)
            return _feed_baseline(state, now, config)
        pending = state.pending_since or now
        state = replace(state, pending_since=pending)
        if now.time_mono_s - pending.time_mono_s >= config.hold_s:
            state = replace(state, pending_since=None, clearing_since=None,
                            active=_episode(kind, pending.time_wall_s, state, util, config))
        return state

    relaxed = condition(config.clear_ratio, config.busy_util_pct - config.clear_util_margin_pct)
    if relaxed is not None:
        return replace(state, clearing_since=None,
                       active=_episode(state.active.kind, state.active.start_wall_s, state,
                                       util, config))
    clearing = state.clearing_since or now
    state = replace(state, clearing_since=clearing)
    if now.time_mono_s - clearing.time_mono_s >= config.hold_s:
        closed = replace(state.active, end_wall_s=clearing.time_wall_s)
        state = replace(state, active=None, clearing_since=None,
                        episodes=(state.episodes + (closed,))[-MAX_EPISODES:])
    return state


def _feed_baseline(state: DetectState, now: Point, config: DetectConfig) -> DetectState:
    if now.tokens_per_s is None:
        return state
    horizon = now.time_mono_s - config.baseline_window_s
    healthy = tuple(p for p in state.healthy if p.time_mono_s > horizon) + (now,)
    values = [p.tokens_per_s for p in healthy if p.tokens_per_s is not None]
    baseline = statistics.median(values) if len(values) >= config.min_baseline_points else None
    return replace(state, healthy=healthy, baseline_tokens_per_s=baseline)


def _episode(kind: str, start_wall_s: float, state: DetectState, util: dict[int, float],
             config: DetectConfig) -> Episode:
    if kind == "busy_unproductive":
        gpus = tuple(g for g, u in sorted(util.items()) if u >= config.busy_util_pct - config.clear_util_margin_pct)
    else:
        gpus = tuple(sorted(util))
    evidence, features = _evidence(state, util)
    return Episode(
        kind=kind,
        gpus=gpus or tuple(sorted(util)),
        start_wall_s=start_wall_s,
        end_wall_s=None,
        baseline_tokens_per_s=state.baseline_tokens_per_s or 0.0,
        tokens_per_s=state.point.tokens_per_s,
        util_pct=max(util.values()) if util else 0.0,
        evidence=evidence,
        suspects=_suspects(features),
    )


def _mean_sm(points: tuple[Point, ...]) -> dict[int, float]:
    out: dict[int, list[float]] = {}
    for p in points:
        for g, v in p.sm_active_pct.items():
            out.setdefault(g, []).append(v)
    return {g: sum(v) / len(v) for g, v in out.items()}


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


def _avg(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _evidence(state: DetectState, util: dict[int, float]) -> tuple[tuple[str, ...], dict[str, float]]:
    """Human-readable evidence lines and the 0..1 features the suspects are scored from."""
    now, recent, healthy = state.point, state.recent[-5:], state.healthy
    evidence: list[str] = []
    f: dict[str, float] = {}
    top_gpu = max(util, key=util.get) if util else None

    sm = _mean_sm(state.recent[-state.config.smooth_points:])
    if top_gpu is not None and top_gpu in sm and util[top_gpu] > 0:
        gap = (util[top_gpu] - sm[top_gpu]) / util[top_gpu]
        f["sm_gap"] = _clamp((gap - 0.2) / 0.6)
        if sm[top_gpu] < 0.5 * util[top_gpu]:
            evidence.append(f"SM active {sm[top_gpu]:.0f}%")
    if len(sm) >= 2:
        spread = max(sm.values()) - min(sm.values())
        f["spread"] = _clamp((spread - 20) / 40)
        if f["spread"] > 0.3:
            hi = max(sm, key=sm.get)
            others = ",".join(str(g) for g in sorted(sm) if g != hi)
            evidence.append(f"GPU {hi} SM active {sm[hi]:.0f}% while GPUs {others} "
                            f"wait at {min(sm.values()):.0f}-{max(v for g, v in sm.items() if g != hi):.0f}%")

    waiting_base = _avg([p.requests_waiting for p in healthy if p.requests_waiting is not None])
    running_base = _avg([p.requests_running for p in healthy if p.requests_running is not None])
    if now.requests_waiting is not None and waiting_base is not None:
        growth = now.requests_waiting - waiting_base
        scale = max(4.0, running_base or 0.0)
        flat = running_base is None or (now.requests_running or 0) <= running_base * 1.25 + 1
        f["waiting"] = _clamp(growth / scale) if flat else 0.0
        if f["waiting"] > 0.2:
            evidence.append(f"waiting requests {waiting_base:.0f} -> {now.requests_waiting:.0f} "
                            f"while running stays {now.requests_running or 0:.0f}")

    prompt_base = _avg([p.prompt_tokens_per_s for p in healthy if p.prompt_tokens_per_s is not None])
    prompt_now = _avg([p.prompt_tokens_per_s for p in recent if p.prompt_tokens_per_s is not None])
    if prompt_now is not None and prompt_base:
        ratio = prompt_now / prompt_base
        f["prefill"] = _clamp((ratio - 1.5) / 2.5)
        if ratio >= 2:
            evidence.append(f"prompt tokens/s {ratio:.1f}x baseline (prefill)")

    if now.launch_p50_us and now.launch_p99_us:
        ratio = now.launch_p99_us / now.launch_p50_us
        f["jitter"] = _clamp(math.log10(max(ratio, 1.0)) / 2.5 - 0.2)
        if ratio >= 20 and now.launch_p99_us >= 1000:
            evidence.append(f"launch p99 {_fmt_us(now.launch_p99_us)} (p50 {_fmt_us(now.launch_p50_us)})")

    if top_gpu is not None:
        series = [p.util_pct[top_gpu] for p in recent if top_gpu in p.util_pct]
        if len(series) >= 3:
            dip, mean = min(series), sum(series) / len(series)
            swing = max(series) - dip
            f["input"] = _clamp((swing - 30) / 40) if mean < state.config.busy_util_pct else 0.0
            if f["input"] > 0.3:
                evidence.append(f"GPU-Util dips to {dip:.0f}% between steps")
    if now.host_cpu_pct is not None and now.host_cpu_pct >= 90:
        evidence.append(f"host CPU {now.host_cpu_pct:.0f}%")

    dram = now.dram_bw_pct.get(top_gpu) if top_gpu is not None else None
    if dram is not None:
        f["dram"] = _clamp((dram - 80) / 12)
        if dram >= 85:
            evidence.append(f"DRAM bandwidth {dram:.0f}%")

    throttled = sorted({r for reasons in now.throttle.values() for r in reasons})
    if throttled:
        f["throttle"] = 1.0
        evidence.append("clocks throttled: " + ", ".join(throttled))
    return tuple(evidence), f


def _suspects(f: dict[str, float]) -> tuple[tuple[str, float], ...]:
    g = f.get
    scores = {
        "oversized_request": g("waiting", 0) * (0.6 + 0.4 * g("sm_gap", 0)),
        "prefill_interference": g("prefill", 0),
        "collective_straggler": g("spread", 0),
        "input_stall": g("input", 0),
        "host_launch_jitter": g("jitter", 0),
        "tiny_kernels": 0.8 * g("sm_gap", 0) * (1 - g("waiting", 0)) * (1 - g("spread", 0))
        * (1 - g("prefill", 0)),
        "memory_bandwidth": g("dram", 0),
        "throttling": g("throttle", 0),
    }
    ranked = sorted(((c, round(s, 3)) for c, s in scores.items() if s > 0.05),
                    key=lambda cs: (-cs[1], CAUSES.index(cs[0])))
    return tuple(ranked)


def _fmt_us(value_us: float) -> str:
    return f"{value_us / 1000:.1f} ms" if value_us >= 1000 else f"{value_us:.0f} us"
