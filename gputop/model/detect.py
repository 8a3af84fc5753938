""""Busy but unproductive": GPU-Util high while throughput collapsed, with evidence.

A pure fold over frames (``fold(previous_state, recent_frames) -> state``); the
timeline keeps the state after every frame so pause and replay show what the
live screen showed.  Hysteresis: an episode opens after the condition holds
``hold_s`` and closes after it has been false ``hold_s``; the thresholds to
clear are looser than those to fire, so a value sitting at the threshold does
not flap.

Two kinds of episode:
- ``busy_unproductive``: GPU-Util >= busy_util_pct while the work is unproductive by
  either measure: tokens/s <= collapse_ratio x baseline, or the engine's inter-token
  latency p99 (or time-to-first-token p99) >= latency_factor x its baseline while
  requests are running.  One n=8 / logprobs=20 request can slow everyone else while
  total tokens/s even rises (it generates 8 sequences): latency shows it, tokens don't;
- ``starved``: tokens/s collapsed and GPU-Util fell too, while demand is still
  there (requests waiting, or a training loop): the GPU waits on the host.
Traffic that simply drops (util falls, nothing waiting) is no episode.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, replace

from gputop.model import enginehist
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
    latency_factor: float = 2.0  # ITL / TTFT p99 at or above this x baseline is a collapse
    latency_window_s: float = 5.0  # engine latency percentiles cover this many seconds
    min_latency_observations: int = 20  # fewer ITL observations in the window: too few
    # a latency p99 counts only when this many observations are beyond the threshold: one
    # slow request in a quiet 5 s window moves the p99 by itself, and is no collapse
    min_slow_observations: int = 3
    large_n: float = 8  # a request with n >= this (vllm:request_params_n) is evidence
    large_max_tokens: float = 8192  # likewise for max_tokens

    @property
    def latency_clear_factor(self) -> float:
        """Clears below this (a looser threshold than the one that fires)."""
        return 1.0 + 0.7 * (self.latency_factor - 1.0)


LATENCY_MEASURES = ("itl", "ttft")
MEASURE_TEXT = {"itl": "inter-token latency", "ttft": "time to first token"}
NOTABLE_KEEP_S = 120.0


@dataclass(frozen=True, slots=True)
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
    measure: str = "tokens"  # what collapsed: "tokens", "itl" or "ttft"
    latency_p99_s: float | None = None  # of that measure, when it is a latency
    latency_baseline_s: float | None = None

    @property
    def headline(self) -> str:
        gpus = ",".join(str(g) for g in self.gpus)
        verb = "busy" if self.kind == "busy_unproductive" else "starved at"
        if self.measure in MEASURE_TEXT and self.latency_p99_s and self.latency_baseline_s:
            return (f"GPU {gpus} {verb} {self.util_pct:.0f}% but {MEASURE_TEXT[self.measure]} "
                    f"p99 {self.latency_p99_s / self.latency_baseline_s:.1f}x baseline "
                    f"({_fmt_s(self.latency_p99_s)} vs {_fmt_s(self.latency_baseline_s)})")
        tps = "n/a" if self.tokens_per_s is None else f"{self.tokens_per_s:,.0f}"
        return (f"GPU {gpus} {verb} {self.util_pct:.0f}% but {tps} tok/s "
                f"(baseline {self.baseline_tokens_per_s:,.0f})")


@dataclass(frozen=True, slots=True)
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
    # p99 baselines of the engine's latencies (median over healthy points), by name
    baseline_latency_s: tuple[tuple[str, float], ...] = ()
    # requests that are evidence by themselves (n >= 8, huge max_tokens): (time, text)
    notable: tuple[tuple[float, str], ...] = ()
    # the newest frame with an engine reading: rates after a gap of any length start there
    last_reading: Frame | None = None

    def latency_baseline(self, name: str) -> float | None:
        return dict(self.baseline_latency_s).get(name)

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
        last = previous.last_reading if previous is not None else None
        state = step(previous, point(frames, previous.point if previous else None, last), config)
        frame = frames[-1]
        return replace(state, last_reading=frame if frame.engine is not None else last)
    return fold


def _with_window_latency(points: tuple[Point, ...], now: Point, previous: DetectState,
                         config: DetectConfig) -> Point:
    """``now`` with p50 / p99 of each engine histogram over the latency window (each engine
    reading counted once: carried readings have no observations), and how many
    observations lie beyond the firing and clearing thresholds of each latency measure."""
    horizon = now.time_mono_s - config.latency_window_s
    window = [p for p in points if p.time_mono_s > horizon]
    names = {name for p in window for name in p.engine_hist}
    latency, slow = {}, {}
    for name in sorted(names):
        merged = enginehist.merge(p.engine_hist[name] for p in window if name in p.engine_hist)
        enough = merged is not None and merged.total >= (
            config.min_latency_observations if name == "itl" else 1)
        if not enough:
            continue
        latency[name] = (enginehist.quantile(merged, 0.5), enginehist.quantile(merged, 0.99))
        base = previous.latency_baseline(name)
        if name in LATENCY_MEASURES and base:
            slow[name] = (enginehist.count_above(merged, config.latency_factor * base),
                          enginehist.count_above(merged, config.latency_clear_factor * base))
    return replace(now, latency=latency, latency_slow=slow)


def _notable(now: Point, config: DetectConfig) -> list[str]:
    """Requests that are evidence by themselves, from this interval's parameter histograms."""
    found = []
    clock = time.strftime("%H:%M:%S", time.localtime(now.time_wall_s))
    for name, threshold, label in (("params_n", config.large_n, "n"),
                                   ("params_max_tokens", config.large_max_tokens, "max_tokens")):
        big = enginehist.large_values(now.engine_hist.get(name), threshold)
        if big is not None:
            count, size = big
            many = f"{count:.0f} requests" if count > 1 else "a request"
            found.append(f"{many} with {label}={size} finished by {clock}")
    return found


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
    now = _with_window_latency(previous.recent + (now,), now, previous, config)
    recent = (previous.recent + (now,))[-RECENT_POINTS:]
    smooth = recent[-config.smooth_points:]
    util = _mean_util(smooth, sorted(now.util_pct))
    notable = tuple((t, text) for t, text in previous.notable
                    if now.time_mono_s - t <= NOTABLE_KEEP_S)
    notable += tuple((now.time_mono_s, text) for text in _notable(now, config))
    state = replace(previous, point=now, recent=recent, config=config, notable=notable)
    top_util = max(util.values()) if util else None

    if state.active is None:
        found = _condition(state, now, top_util, config, clearing=False)
        if found is None:
            state = replace(state, pending_since=None)
            return _feed_baseline(state, now, config)
        pending = state.pending_since or now
        state = replace(state, pending_since=pending)
        if now.time_mono_s - pending.time_mono_s >= config.hold_s:
            kind, measure = found
            state = replace(state, pending_since=None, clearing_since=None,
                            active=_episode(kind, measure, pending.time_wall_s, state, util, config))
        return state

    relaxed = _condition(state, now, top_util, config, clearing=True)
    if relaxed is not None:
        kind, measure = relaxed
        if measure != state.active.measure and state.active.measure in LATENCY_MEASURES \
                and measure in LATENCY_MEASURES:
            measure = state.active.measure  # keep naming what opened it while it still holds
        return replace(state, clearing_since=None,
                       active=_episode(state.active.kind, measure, state.active.start_wall_s,
                                       state, util, config, previous_episode=state.active))
    clearing = state.clearing_since or now
    state = replace(state, clearing_since=clearing,
                    active=_with_late_evidence(state.active, state))
    if now.time_mono_s - clearing.time_mono_s >= config.hold_s:
        closed = replace(state.active, end_wall_s=clearing.time_wall_s)
        state = replace(state, active=None, clearing_since=None,
                        episodes=(state.episodes + (closed,))[-MAX_EPISODES:])
    return state


def _condition(state: DetectState, now: Point, top_util: float | None, config: DetectConfig,
               clearing: bool) -> tuple[str, str] | None:
    """(episode kind, what collapsed) when the work is unproductive now, else None.
    ``clearing`` applies the looser thresholds an open episode needs to close."""
    if top_util is None:
        return None
    ratio = config.clear_ratio if clearing else config.collapse_ratio
    busy = config.busy_util_pct - (config.clear_util_margin_pct if clearing else 0.0)
    factor = config.latency_clear_factor if clearing else config.latency_factor
    baseline, tps = state.baseline_tokens_per_s, now.tokens_per_s
    if tps is not None and baseline is not None and baseline > 0 and tps <= ratio * baseline:
        if top_util >= busy:
            return "busy_unproductive", "tokens"
        demand = now.engine_kind == "trainer" or (now.requests_waiting or 0) > 0
        return ("starved", "tokens") if demand else None
    if top_util < busy or not (now.requests_running or 0) > 0:
        return None
    for name in LATENCY_MEASURES:
        p99 = now.latency.get(name, (None, None))[1]
        base = state.latency_baseline(name)
        slow = now.latency_slow.get(name, (0.0, 0.0))[1 if clearing else 0]
        if p99 is not None and base and p99 >= factor * base \
                and slow >= config.min_slow_observations:
            return "busy_unproductive", name
    return None


def _feed_baseline(state: DetectState, now: Point, config: DetectConfig) -> DetectState:
    """A healthy point joins the baselines (tokens/s and each latency p99: medians over
    the baseline window); baselines are frozen while a condition is pending or open."""
    if now.tokens_per_s is None and not now.latency:
        return state
    horizon = now.time_mono_s - config.baseline_window_s
    healthy = tuple(p for p in state.healthy if p.time_mono_s > horizon) + (now,)

    def median(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if len(values) >= config.min_baseline_points else None

    latency = []
    for name in LATENCY_MEASURES:
        value = median(p.latency.get(name, (None, None))[1] for p in healthy)
        if value is not None and value > 0:
            latency.append((name, value))
    return replace(state, healthy=healthy,
                   baseline_tokens_per_s=median(p.tokens_per_s for p in healthy),
                   baseline_latency_s=tuple(latency))


def _episode(kind: str, measure: str, start_wall_s: float, state: DetectState,
             util: dict[int, float], config: DetectConfig,
             previous_episode: Episode | None = None) -> Episode:
    if kind == "busy_unproductive":
        gpus = tuple(g for g, u in sorted(util.items()) if u >= config.busy_util_pct - config.clear_util_margin_pct)
    else:
        gpus = tuple(sorted(util))
    evidence, features = _evidence(state, util)
    p99 = state.point.latency.get(measure, (None, None))[1] if measure != "tokens" else None
    notable = _notable_since(state, start_wall_s)
    if previous_episode is not None:  # evidence named once stays named
        notable = tuple(dict.fromkeys(
            [e for e in previous_episode.evidence if e in notable or "finished by" in e]
            + list(notable)))
    return Episode(
        kind=kind,
        gpus=gpus or tuple(sorted(util)),
        start_wall_s=start_wall_s,
        end_wall_s=None,
        baseline_tokens_per_s=state.baseline_tokens_per_s or 0.0,
        tokens_per_s=state.point.tokens_per_s,
        util_pct=max(util.values()) if util else 0.0,
        evidence=tuple(notable) + evidence,
        suspects=_suspects({**features, "notable": 1.0 if notable else 0.0}),
        measure=measure,
        latency_p99_s=p99,
        latency_baseline_s=state.latency_baseline(measure) if measure != "tokens" else None,
    )


def _notable_since(state: DetectState, start_wall_s: float) -> tuple[str, ...]:
    """Notable requests seen since shortly before the episode began (a request that
    finished just before is still the likely culprit)."""
    start_mono = state.point.time_mono_s - (state.point.time_wall_s - start_wall_s)
    return tuple(text for t, text in state.notable if t >= start_mono - 2 * state.config.hold_s)


def _with_late_evidence(episode: Episode, state: DetectState) -> Episode:
    """While an episode is closing, a request that only now finished (vLLM observes
    ``request_params_n`` when the request ends) still joins its evidence and suspects."""
    late = [text for text in _notable_since(state, episode.start_wall_s)
            if text not in episode.evidence]
    if not late:
        return episode
    scores = dict(episode.suspects)
    scores["oversized_request"] = max(scores.get("oversized_request", 0.0), 1.0)
    ranked = tuple(sorted(scores.items(), key=lambda cs: (-cs[1], CAUSES.index(cs[0]))))
    return replace(episode, evidence=tuple(late) + episode.evidence, suspects=ranked)


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


def sm_far_below_util(util_pct: float | None, sm_pct: float | None) -> bool:
    """SM activity under half of GPU-Util: busy time spent with most SMs idle (the
    detector's evidence, and what the panes show in red)."""
    return bool(util_pct) and sm_pct is not None and sm_pct < 0.5 * util_pct


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
        if sm_far_below_util(util[top_gpu], sm[top_gpu]):
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
    f["host"] = _host_contention(state, evidence)

    dram = now.dram_bw_pct.get(top_gpu) if top_gpu is not None else None
    if dram is not None:
        f["dram"] = _clamp((dram - 80) / 12)
        if dram >= 85:
            evidence.append(f"DRAM bandwidth {dram:.0f}%")

    f["throttle"] = _throttling(state, evidence)

    preempt_base = _avg([p.preemptions_per_s for p in healthy if p.preemptions_per_s is not None])
    preempt = _avg([p.preemptions_per_s for p in recent if p.preemptions_per_s is not None])
    if preempt is not None and preempt > max(0.5, 3 * (preempt_base or 0.0)):
        f["preemptions"] = _clamp(preempt / 5)
        evidence.append(f"preemptions {preempt:.1f}/s (KV cache full: requests evicted)")
    return tuple(evidence), f


def _host_contention(state: DetectState, evidence: list[str]) -> float:
    """0..1: the CPU is contended, from what /proc gives without root or eBPF, each against
    the healthy baseline (a CPU-bound engine is always busy; what matters is what changed):
    the engine's (or pinned) tree getting less CPU than it had while the run queue is above
    the CPUs (measured here on a real vLLM with its core crowded: its CPU halved, its
    involuntary switches *fell*, as it ran less), CPU pressure rising, the run queue
    growing, and involuntary context switches jumping (a launch thread preempted often)."""
    recent, healthy = state.recent[-3:], state.healthy

    def now_and_base(name):
        return (_avg([getattr(p, name) for p in recent if getattr(p, name) is not None]),
                _avg([getattr(p, name) for p in healthy if getattr(p, name) is not None]))

    score = 0.0
    queue, queue_base = now_and_base("run_queue")
    cpus = state.point.cpus
    crowded = queue is not None and cpus is not None and queue > cpus
    losses = []
    for name, label in (("tree_cpu_pct", "the engine's processes"),
                        ("busiest_thread_pct", "its busiest thread")):
        value, base = now_and_base(name)
        if value is not None and base is not None and base >= 30:
            losses.append(((base - value) / base, label, value, base))
    if losses:
        loss, label, value, base = max(losses)
        score += 0.4 * _clamp((loss - 0.15) / 0.35) * (1.0 if crowded or queue is None else 0.5)
        if loss >= 0.3 and crowded:
            evidence.append(f"{label} at {value:.0f}% CPU (baseline {base:.0f}%) with the run "
                            f"queue at {queue:.0f} on {cpus} CPUs")
    psi, psi_base = now_and_base("cpu_pressure_pct")
    if psi is not None:
        base = psi_base or 0.0
        score += 0.25 * _clamp((psi - base - 10) / 30)
        if psi - base >= 15:
            evidence.append(f"CPU pressure {psi:.0f}% (baseline {base:.0f}%)")
    if queue is not None and cpus:
        excess = queue / cpus - max(1.0, (queue_base or 0) / cpus)
        score += 0.2 * _clamp(excess / 2)
        if excess >= 1 and not any("run queue" in e for e in evidence):
            evidence.append(f"run queue {queue:.0f} on {cpus} CPUs (baseline {queue_base or 0:.0f})")
    inv, inv_base = now_and_base("tree_involuntary_per_s")
    if inv is not None and inv_base is not None:
        ratio = inv / max(inv_base, 20.0)
        score += 0.15 * _clamp((ratio - 1.5) / 3)
        if ratio >= 2:
            evidence.append(f"involuntary context switches {inv:,.0f}/s (baseline {inv_base:,.0f}/s)")
    return _clamp(score)


def _throttling(state: DetectState, evidence: list[str]) -> float:
    """1 when throttle reasons are new against the healthy baseline or the SM clock fell:
    a loaded H100 reports "power cap" while healthy, which explains nothing."""
    now, healthy = state.point, state.healthy
    usual: set[str] = set()
    for reason in {r for p in healthy for reasons in p.throttle.values() for r in reasons}:
        seen = sum(1 for p in healthy if any(reason in rs for rs in p.throttle.values()))
        if seen >= max(1, len(healthy) // 2):
            usual.add(reason)
    new = sorted({r for reasons in now.throttle.values() for r in reasons} - usual)
    fell = []
    for gpu, clock in now.clock_mhz.items():
        base = _avg([p.clock_mhz[gpu] for p in healthy if gpu in p.clock_mhz])
        if base and clock < 0.85 * base and now.util_pct.get(gpu, 0) >= 50:
            fell.append(f"GPU {gpu} SM clock {clock:,.0f} MHz (baseline {base:,.0f})")
    if new:
        evidence.append("clocks throttled: " + ", ".join(new))
    evidence.extend(fell)
    return 1.0 if new or fell else 0.0


def _suspects(f: dict[str, float]) -> tuple[tuple[str, float], ...]:
    g = f.get
    host = max(g("jitter", 0), g("host", 0))
    scores = {
        "oversized_request": max(g("notable", 0),
                                 g("waiting", 0) * (0.6 + 0.4 * g("sm_gap", 0)),
                                 0.5 * g("preemptions", 0)),
        "prefill_interference": g("prefill", 0),
        "collective_straggler": g("spread", 0),
        "input_stall": g("input", 0),
        "host_launch_jitter": host,
        # busy time without SM work: unless something else explains the idle SMs (a host
        # that cannot feed the GPU explains them first)
        "tiny_kernels": 0.8 * g("sm_gap", 0) * (1 - g("waiting", 0)) * (1 - g("spread", 0))
        * (1 - g("prefill", 0)) * (1 - host) ** 2 * (1 - g("notable", 0)),
        "memory_bandwidth": g("dram", 0),
        "throttling": g("throttle", 0),
    }
    ranked = sorted(((c, round(s, 3)) for c, s in scores.items() if s > 0.05),
                    key=lambda cs: (-cs[1], CAUSES.index(cs[0])))
    return tuple(ranked)


def _fmt_s(value_s: float) -> str:
    return _fmt_us(value_s * 1e6)


def _fmt_us(value_us: float) -> str:
    return f"{value_us / 1000:.1f} ms" if value_us >= 1000 else f"{value_us:.0f} us"
