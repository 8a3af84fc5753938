"""The verdict: when a GPU's work is unproductive, and the likely cause with its evidence.

A pure fold over frames (``fold(previous_state, recent_frames) -> state``); the timeline
keeps the state after every frame, so pause, replay, ``report`` and the exporter show what
the live screen showed.

Each *subject* (an engine on its GPUs, or any CUDA job on its, ``subjects.py``) is judged
against its own healthy baseline (``baseline.py``).  An episode opens when a *trigger* holds
for ``hold_s`` (a job's GPU patterns: ``job_hold_s``) and closes when it has been false as
long, with looser thresholds to clear than to fire so a value at the threshold does not
flap.  Triggers say the work is unproductive, whatever GPU-Util reads:
- an engine: inter-token latency (or TTFT, while fewer tokens come out) at >= 2x its healthy
  value *at the same batch size*, with many slow observations in several readings (one slow
  request is one); tokens/s at <= 50% of baseline while demand is still there (a fall in
  traffic is no collapse); the queue growing while tokens/s does not; GPU-Util falling while
  requests wait (the GPU waits on the host);
- any job: GPU-Util high on a sliver of the SMs (hollow); steps and waits alternating (a
  saw-tooth) well below its own util; one GPU of a multi-GPU job out of step while the
  others wait; another process taking its GPU's SM time; its clocks held down; a trainer's
  counter (steps or samples) falling, over whole steps; a job without a counter idling
  20+ points under its own util for half a minute (its busy time is its only measure).
The kind says which: ``busy_unproductive`` (the GPU is busy but its work is not) or
``starved`` (GPU-Util fell: the GPU waits on the host).  The causes are scored from declared
signatures (``signatures.py``) on every tick the trigger holds, and the verdict is their
mean over those ticks: recovery ticks never change it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import cast

from gputop.model import enginehist, signatures, words
from gputop.model.baseline import Baseline, Sample
from gputop.model.enginehist import HistDelta
from gputop.model.evidence import Evidence, merge
from gputop.model.features import (FINISH_COUNTED, Features, Values, batch_decodes,
                                   finish_counted_tau_s, own_and_sharers, phase_of_its_own,
                                   signals, token_slowdown)
from gputop.model.point import Point, point, replica_points, work_rate_now
from gputop.model.signatures import BY_CAUSE, CAUSES
from gputop.model.subjects import (ENGINE, Subject, engine_key, is_engine_key, replica_of,
                                   subjects_of)
from gputop.model.thresholds import t
from gputop.schema import Frame

__all__ = ("CAUSES", "DetectConfig", "DetectState", "Episode", "make_fold", "step",
           "sm_far_below_util")


@dataclass(frozen=True)
class DetectConfig:
    busy_util_pct: float = 90.0  # at or above: "busy" (the kind of an episode)
    collapse_ratio: float = 0.5  # tokens/s at or below this x baseline is a collapse
    hold_s: float = 3.0
    clear_util_margin_pct: float = 5.0
    clear_ratio: float = 0.6  # clears when tokens/s >= clear_ratio x baseline
    baseline_window_s: float = 120.0
    min_baseline_points: int = 3
    smooth_points: int = 3
    latency_factor: float = 2.0  # ITL / TTFT p99 at or above this x baseline is a collapse
    latency_window_s: float = 5.0  # engine latency percentiles cover this many seconds
    min_latency_observations: int = 20  # fewer ITL observations in the window: too few
    min_slow_observations: int = 3
    large_n: float = 8  # a request with n >= this (vllm:request_params_n) is evidence
    large_max_tokens: float = 8192  # likewise for max_tokens

    @property
    def latency_clear_factor(self) -> float:
        """Clears below this (a looser threshold than the one that fires)."""
        return 1.0 + 0.7 * (self.latency_factor - 1.0)


LATENCY_MEASURES = ("itl", "ttft")
TPOT_AS_ITL_MIN = 3  # requests in the latency window whose mean time per token stands for ITL
# judged on the engine's histograms
HISTOGRAM_MEASURES = ("itl", "ttft", "step", "share", "prefill", "slow", "reads")
# ...of them, those judged on the typical token (p50, mean), whose normal is a median: a
# few samples hold it, unlike a tail's upper quartile (a baseline renewed as traffic grew)
TYPICAL_MEASURES = ("step", "reads")
ENGINE_MEASURES = ("itl", "ttft", "tokens", "queue", "util", "kv", "step", "spec", "share",
                   "cpu", "launch", "prompts", "prefill", "host", "slow", "reads")
MAX_EPISODES = 50
RECENT_S = 12.0  # points kept for windows (the saw-tooth reads 10 s)
QUEUE_TREND_S = 5.0  # a queue rising: more waiting than the engine read this long before
READINGS_KEEP_S = 40.0  # the engine's queue readings kept (two or more at 15 s scrapes)
# an engine's reading stands for its latency until the next one, at most this long (a
# 15 s scrape interval and its jitter; an engine silent longer is not answering)
MAX_READING_GAP_S = 20.0
RECENT_MAX = 48
NOTABLE_KEEP_S = 120.0
NOTABLE_GRACE_S = 30.0  # a notable request this close before an episode is its cause, not routine
NOTABLE_ROUTINE = 3  # ...unless this many were seen while all was well: clients' habit
FANOUT_KEEP_S = 180.0
REOPEN_S = 30.0
# a jump of the batch stays evidence while its sequences may run: a fan-out's batch is
# judged as the change for at most this long
JUMP_KEEP_S = 120.0
ENGINE_GRACE_S = 120.0  # an engine gone this long is forgotten (its GPUs become jobs)


@dataclass(frozen=True, slots=True)
class Tally:
    """The causes' scores summed over the ticks an episode's trigger held."""

    ticks: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    # oversized_request as it would score with evidence that shows late or briefly but stands
    # for the whole episode: a request with n=8 (vLLM observes n when the request ends), the
    # batch doubling at once as its n sequences join (they may finish in bursts)
    latched: dict[str, float] = field(default_factory=dict)
    seen: frozenset[str] = frozenset()  # which of those were seen during the episode
    where: dict[str, tuple[int, ...]] = field(default_factory=dict)  # at the cause's best
    best: dict[str, float] = field(default_factory=dict)
    losing: dict[str, str] = field(default_factory=dict)  # why each cause scored less

    def add(self, scores: dict[str, float], latched: dict[str, float], seen: set[str],
            where: dict[str, tuple[int, ...]], losing: dict[str, str]) -> Tally:
        sums = {c: self.sums.get(c, 0.0) + s for c, s in scores.items()}
        best, at = dict(self.best), dict(self.where)
        for cause, score in scores.items():
            if score >= best.get(cause, 0.0) and where.get(cause):
                best[cause], at[cause] = score, where[cause]
        return Tally(self.ticks + 1, sums,
                     {k: self.latched.get(k, 0.0) + x for k, x in latched.items()},
                     self.seen | frozenset(seen), at, best, {**self.losing, **losing})

    def merged(self, other: Tally) -> Tally:
        """This tally and ``other`` as one (an episode reopened after a short lull)."""
        return Tally(self.ticks + other.ticks,
                     {c: self.sums.get(c, 0.0) + other.sums.get(c, 0.0)
                      for c in {*self.sums, *other.sums}},
                     {k: self.latched.get(k, 0.0) + other.latched.get(k, 0.0)
                      for k in {*self.latched, *other.latched}},
                     self.seen | other.seen, {**self.where, **other.where},
                     {c: max(self.best.get(c, 0.0), other.best.get(c, 0.0))
                      for c in {*self.best, *other.best}}, {**self.losing, **other.losing})

    def ranked(self, notable: bool = False) -> tuple[tuple[str, float], ...]:
        if not self.ticks:
            return ()
        means = {c: s / self.ticks for c, s in self.sums.items()}
        seen = self.seen | ({"notable"} if notable else set())
        for name in ("notable", "fanout"):
            if name in seen:
                means["oversized_request"] = max(means.get("oversized_request", 0.0),
                                                 self.latched.get(name, 0.0) / self.ticks)
        order = sorted(((c, round(s, 3)) for c, s in means.items()),
                       key=lambda cs: (-cs[1], CAUSES.index(cs[0])))
        # a cause near 0.05 beside a stronger one is noise; the only cause that scored
        # steadily, if weakly (its harm mild), is the episode's best explanation: an open
        # episode does not lose its verdict on a tick its mean dips under the floor (half
        # the floor: not one tick's blip in a long episode)
        ranked = [cs for cs in order if cs[1] > t("suspect_floor")]
        return tuple(ranked or [cs for cs in order[:1] if cs[1] >= t("suspect_floor") / 2])


@dataclass(frozen=True, slots=True)
class Episode:
    kind: str  # "busy_unproductive" | "starved"
    gpus: tuple[int, ...]  # the GPUs it names, the one it is about first
    start_wall_s: float
    end_wall_s: float | None
    baseline_tokens_per_s: float
    tokens_per_s: float | None
    util_pct: float
    facts: tuple[Evidence, ...]
    suspects: tuple[tuple[str, float], ...]
    measure: str = "tokens"  # what tripped it: tokens itl ttft queue util hollow stall ...
    latency_p99_s: float | None = None  # of that measure, when it is a latency
    latency_baseline_s: float | None = None
    subject: str = "engine"
    subject_label: str = ""
    job_gpus: tuple[int, ...] = ()  # all the GPUs of its subject
    values: dict[str, float | None] = field(default_factory=dict)  # what the headline quotes
    history: tuple[tuple[float, str], ...] = ()  # (wall time, top cause) when it changed
    why_not: dict[str, str] = field(default_factory=dict)  # why each other cause lost

    @property
    def headline(self) -> str:
        return words.headline(self)

    def covers(self, gpu_index: int) -> bool:
        """Whether the episode is about this GPU: the ones it names and the rest of its
        job (a straggler's peers wait too); one naming no GPU covers all."""
        return gpu_index in self.gpus or gpu_index in self.job_gpus or not self.gpus

    @property
    def evidence(self) -> tuple[str, ...]:
        return words.evidence_lines(self)


@dataclass(frozen=True, slots=True)
class SubjectState:
    subject: Subject
    first_seen_mono_s: float
    last_seen_mono_s: float
    base: Baseline = Baseline()
    warmup_since_mono_s: float | None = None  # restarted: baselines wait for steady service
    settle_until_mono_s: float = -math.inf
    pending: tuple[float, float] | None = None  # (mono, wall) the trigger began
    pending_measure: str | None = None
    pending_barrier: bool = False  # it began with every rank on a sliver at once
    pending_stopped: bool = False  # a trainer's counter stopped altogether while it waited
    pending_tally: Tally = Tally()
    clearing: tuple[float, float] | None = None
    active: Episode | None = None
    tally: Tally = Tally()
    slow_times: tuple[tuple[str, float], ...] = ()  # readings with slow observations
    # healthy samples not yet in the baseline: an onset's first ticks look almost healthy,
    # so samples wait PROBATION_S and are dropped when a trigger starts
    probation: tuple[Sample, ...] = ()
    engine_url: str | None = None
    engine_pids: frozenset[int] = frozenset()
    # ticks on which a notable request was seen while all was well (the last NOTABLE_KEEP_S)
    notable_healthy: tuple[float, ...] = ()
    # when notable requests were last judged routine: an episode reopened, or one that
    # outlasts NOTABLE_KEEP_S, still has the clients' habit behind it
    notable_routine_mono_s: float | None = None
    # the episode that closed last, kept REOPEN_S: one that starts again so soon is the same
    # episode (one cause's phases: long prompts, then the KV pool full), not a new one
    last_closed: Episode | None = None
    last_tally: Tally = Tally()
    last_closed_mono_s: float = -math.inf
    pause_since_mono_s: float | None = None  # a rank off the GPU, the others in a barrier
    paused_gpu: int | None = None  # ...which one
    paused_before: frozenset[int] = frozenset()  # GPUs whose pause ended: they pause by design
    jump: tuple[float, float] | None = None  # (when, batch before): the batch doubled at once
    surge_since_mono_s: float | None = None  # more prompts of the usual length arriving
    grown_since_mono_s: float | None = None  # the batch 1.3x its usual size since then
    # what its baseline held before the engine restarted at the same url (BEFORE_KEPT)
    before: tuple[tuple[str, float], ...] = ()
    # per sustained measure (SUSTAINED), (mono, whether it held that tick) over the last
    # sustained_span_s: findings that show on a share of the ticks, not on every one
    sustained: tuple[tuple[str, tuple[tuple[float, bool], ...]], ...] = ()
    # the ticks on which prompts stalled the decodes, over the last prefill_memory_s: a stall
    # of theirs that recurs is judged at once, the first one held as a burst admitted
    prefill_stalls_mono_s: tuple[float, ...] = ()
    # (when, tokens/s) averaged exponentially, for engines whose counter moves as requests end
    tokens_smooth: tuple[float, float] | None = None
    # (mono, whether an engine trigger fired, whether its queue grew by the queue trigger's
    # scale) for ticks outside episodes over noise_span_s: how often the service dips by
    # itself, and whether its own dips ever fill a queue
    fired: tuple[tuple[float, bool, bool], ...] = ()
    # since when no tick was clean enough to learn while nothing fired: a baseline that no
    # longer describes the service (learned from its first readings) and blocks its own renewal
    unclean_since_mono_s: float | None = None
    # the engine's last distinct readings of its queue, (read mono, waiting), over
    # READINGS_KEEP_S: scraped every 15 s, a queue's trend spans more than the recent points
    readings: tuple[tuple[float, float], ...] = ()
    # the engine's last distinct read times, whatever its page has (its scrape interval)
    read_times: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class DetectState:
    point: Point
    recent: tuple[Point, ...]  # the last RECENT_S of points, newest last
    subjects: tuple[SubjectState, ...] = ()
    episodes: tuple[Episode, ...] = ()  # closed ones, newest last, bounded
    config: DetectConfig = DetectConfig()
    # (engine subject's key, mono time, request) seen recently: the engine's, or each
    # replica's where they are judged apart
    notable: tuple[tuple[str, float, Evidence], ...] = ()
    # the newest frame with an engine reading: rates after a gap of any length start there
    last_reading: Frame | None = None
    # the last two points whose engine reading brought histograms, the page's ("") and each
    # replica's (its label: replicas may be read at other moments): the newest stands for
    # the latency window until the next (scraped every 15 s, it is older than ``recent``)
    hist_readings: tuple[tuple[str, tuple[Point, ...]], ...] = ()

    @property
    def actives(self) -> tuple[Episode, ...]:
        """Open episodes, the most severe first (an engine's before a job's)."""
        found = [s.active for s in self.subjects if s.active is not None]
        return tuple(sorted(found, key=lambda e: (not is_engine_key(e.subject), -(e.suspects[0][1]
                                                  if e.suspects else 0.0), e.start_wall_s)))

    @property
    def active(self) -> Episode | None:
        actives = self.actives
        return actives[0] if actives else None

    def subject(self, key: str) -> SubjectState | None:
        for s in self.subjects:
            if s.subject.key == key:
                return s
        return None

    @property
    def _engines(self) -> tuple[SubjectState, ...]:
        """The engine's subject, or its replicas' where they are judged apart."""
        return tuple(s for s in self.subjects if is_engine_key(s.subject.key))

    @property
    def _engine(self) -> SubjectState | None:
        engines = self._engines
        return self.subject(ENGINE) or (engines[0] if engines else None)

    @property
    def baseline_tokens_per_s(self) -> float | None:
        """The engine's; for replicas judged apart, the sum of theirs (the page's tokens/s
        is their sum), unknown while any of them has none."""
        total = 0.0
        engines = self._engines
        for engine in engines:
            value = engine.base.get("work" if engine.subject.kind == "trainer" else "tokens")
            if value is None:
                return None
            total += value
        return total if engines else None

    @property
    def baseline_latency_s(self) -> tuple[tuple[str, float], ...]:
        """Each latency's baseline at the batch running now; for replicas judged apart, the
        mean of theirs, each at its own batch."""
        out = []
        for name in LATENCY_MEASURES:
            values = []
            for engine in self._engines:
                label = replica_of(engine.subject.key)
                p = self.point.replica(label) if label is not None else self.point
                value = engine.base.latency_at(name, p.requests_running if p else None)
                if value:
                    values.append(value)
            if values:
                out.append((name, sum(values) / len(values)))
        return tuple(out)

    def latency_baseline(self, name: str) -> float | None:
        return dict(self.baseline_latency_s).get(name)

    @property
    def note(self) -> str | None:
        """What the detector cannot judge right now (None when it can)."""
        if not self.subjects:
            return "no GPU readings to judge"
        engine = self._engine
        if engine is not None and self.point.engine_kind is None:
            return "the engine is not answering: its GPUs are judged when it is back"
        if engine is not None and engine.warmup_since_mono_s is not None:
            return "the engine restarted: learning its baseline from steady service"
        if engine is not None and not engine.base.ready:
            return "learning the throughput baseline"
        if engine is None and self.point.engine_kind is None:
            return "judging from the GPU alone (no engine metrics: --engine URL adds them)"
        return None


def make_fold(config: DetectConfig = DetectConfig()
              ) -> Callable[[DetectState | None, list[Frame]], DetectState]:
    def fold(previous: DetectState | None, frames: list[Frame]) -> DetectState:
        last = previous.last_reading if previous is not None else None
        before = previous.point if previous else None
        now = point(frames, before, last)
        replicas = replica_points(now, frames, before, last)
        state = step(previous, replace(now, replicas=replicas) if replicas else now, config)
        frame = frames[-1]
        return replace(state, last_reading=frame if frame.engine is not None else last)
    return fold


def sm_far_below_util(util_pct: float | None, sm_pct: float | None) -> bool:
    """SM activity under half of GPU-Util: busy time spent with most SMs idle (the
    detector's evidence, and what the panes show in red)."""
    return bool(util_pct) and sm_pct is not None and sm_pct < 0.5 * util_pct  # type: ignore[operator]


# ---------------------------------------------------------------- the fold

def reading_stands(age_s: float, gap_s: float, window_s: float) -> bool:
    """Whether an engine reading ``age_s`` old still stands for its latency: until the next
    is due (its interval ``gap_s``, at least the window, at most MAX_READING_GAP_S) and a
    second; older, the engine has stopped answering.  The detector's window and the
    screen's replicas judge by this one rule."""
    return age_s <= min(max(gap_s, window_s), MAX_READING_GAP_S) + 1.0


def _windows(points: tuple[Point, ...], now: Point, config: DetectConfig,
             kept: tuple[Point, ...] = ()) -> tuple[Point, dict[str, HistDelta]]:
    """``now`` with p50 / p99 of each engine histogram over the latency window (each reading
    counted once: carried readings have no observations), and the merged windows.  An
    engine scraped less often than the window (5-15 s) has none in it between scrapes: its
    newest reading (``kept``: the last readings with histograms, older than ``points`` may
    hold) stands until the next is due."""
    horizon = now.time_mono_s - config.latency_window_s
    window = [p for p in points if p.time_mono_s > horizon]
    stood = False
    if not any(p.engine_hist for p in window) and now.engine_kind is not None:
        readings = sorted({p.time_mono_s: p for p in kept + points if p.engine_hist
                           and p.engine_url == now.engine_url}.values(),
                          key=lambda p: p.time_mono_s)[-2:]
        reads = [p.engine_read_mono_s for p in readings]
        gap = reads[1] - reads[0] if len(reads) == 2 and reads[0] is not None \
            and reads[1] is not None else 0.0
        if readings and reading_stands(now.time_mono_s - readings[-1].time_mono_s, gap,
                                       config.latency_window_s):
            window, stood = readings[-1:], True
    names = {name for p in window for name in p.engine_hist}
    latency: dict[str, tuple[float | None, float | None]] = {}
    merged_by_name: dict[str, HistDelta] = {}
    for name in sorted(names):
        merged = enginehist.merge(p.engine_hist[name] for p in window if name in p.engine_hist)
        # (an engine's per-request time per token stands for its ITL: one observation per
        # request, each a mean over its tokens, so a few are enough)
        enough = merged is not None and merged.total >= (
            (TPOT_AS_ITL_MIN if now.itl_per_request else config.min_latency_observations)
            if name == "itl" else 1)
        if not enough:
            continue
        merged = cast(HistDelta, merged)  # enough: merged is not None
        latency[name] = enginehist.median_and_p99(merged)
        merged_by_name[name] = merged
    return replace(now, latency=latency, latency_stood=stood and bool(latency)), merged_by_name


def _notable(now: Point, config: DetectConfig) -> list[Evidence]:
    """Requests that are evidence by themselves, from this interval's parameter histograms."""
    found = []
    for name, threshold, label in (("params_n", config.large_n, "n"),
                                   ("params_max_tokens", config.large_max_tokens, "max_tokens")):
        big = enginehist.large_values(now.engine_hist.get(name), threshold)
        if big is not None:
            count, size = big
            found.append(Evidence(f"notable_{label}", None, count=count, detail=size,
                                  when_wall_s=now.time_wall_s))
    return found


def step(previous: DetectState | None, now: Point, config: DetectConfig) -> DetectState:
    if previous is None:
        previous = DetectState(point=now, recent=(), config=config)
    stood = dict(previous.hist_readings)
    now, windows = _windows(previous.recent + (now,), now, config, stood.get("", ()))
    # each replica judged apart gets its latency windows over its own readings
    replica_windows: dict[str, dict[str, HistDelta]] = {}
    if now.replicas:
        windowed = []
        for label, r in now.replicas:
            earlier = tuple(q for q in (p.replica(label) for p in previous.recent)
                            if q is not None)
            r, replica_windows[label] = _windows(earlier + (r,), r, config,
                                                 stood.get(label, ()))
            windowed.append((label, r))
        now = replace(now, replicas=tuple(windowed))
    horizon = now.time_mono_s - RECENT_S
    recent = tuple(p for p in previous.recent if p.time_mono_s > horizon)[-(RECENT_MAX - 1):]
    recent += (now,)
    engines = [(engine_key(label), r) for label, r in now.replicas] or [(ENGINE, now)]
    notable = tuple(x for x in previous.notable if now.time_mono_s - x[1] <= NOTABLE_KEEP_S)
    notable += tuple((key, now.time_mono_s, e) for key, p in engines for e in _notable(p, config))

    tick_s = now.time_mono_s - previous.recent[-1].time_mono_s if previous.recent else 1.0
    old = {s.subject.key: s for s in previous.subjects}
    kept = [st for st in old.values() if _kept(st, now, tick_s)]
    # an engine away (restarting) keeps its GPUs a while; a job's GPUs whose processes went
    # unlisted a moment (an NVML process query that failed, a list read mid-update) are
    # still the job's: no GPU subject of their own meanwhile
    held = _gpus_of(st for st in kept if is_engine_key(st.subject.key)) \
        if now.engine_kind is None else ()
    quiet = _gpus_of(st for st in kept if st.subject.kind in ("job", "trainer"))
    closed = list(previous.episodes)
    states = []
    for subject in subjects_of(now, held, quiet):
        which = replica_of(subject.key)
        mine, my_windows = recent, windows
        if which is not None:  # a replica: its own points and windows
            mine = tuple(q for q in (p.replica(which) for p in recent) if q is not None)
            my_windows = replica_windows.get(which, {})
        st = old.pop(subject.key, None)
        if st is not None and _another_engine(st, mine[-1]):
            st, ended = _absent(st, now, config, final=True)  # the old one's story ends
            if ended is not None:
                closed.append(ended)
            st = None
            # and so do the requests seen on it: none of them is the new engine's
            notable = tuple(x for x in notable if x[0] != subject.key or x[1] >= now.time_mono_s)
        my_notable = tuple((m, e) for key, m, e in notable if key == subject.key)
        st = _identify(st, subject, mine[-1], tick_s)
        before = st.last_closed
        st, ended = _advance(st, subject, mine, my_windows, config, my_notable)
        if ended is not None:
            closed.append(ended)
        if before is not None and st.last_closed is None and st.active is not None:
            # reopened: the closed copy gives way to the open one (same subject and start)
            closed = [e for e in closed if (e.subject, e.start_wall_s)
                      != (before.subject, before.start_wall_s)]
        states.append(st)
    for st in old.values():  # gone this tick
        keep = _kept(st, now, tick_s)
        st, ended = _absent(st, now, config, final=not keep)
        if ended is not None:
            closed.append(ended)
        if keep:
            states.append(st)
    for label, p in (("", now), *now.replicas):
        if p.engine_hist:
            stood[label] = (stood.get(label, ()) + (p,))[-2:]
    hist_readings = tuple(sorted(stood.items()))
    return replace(previous, point=now, recent=recent, subjects=tuple(states),
                   episodes=tuple(closed[-MAX_EPISODES:]), config=config, notable=notable,
                   hist_readings=hist_readings)


AWAY_S = 10.0  # an engine that answered nothing this long and comes back has restarted


def _away_s(tick_s: float) -> float:
    """How long a subject unseen is only a reading or two missed: an engine back later has
    restarted; a job's processes unlisted no longer is gone."""
    return max(AWAY_S, 3 * tick_s)


def _kept(st: SubjectState, now: Point, tick_s: float) -> bool:
    """Whether a subject unseen this tick is still kept: an engine's restart takes minutes
    (ENGINE_GRACE_S); a job's processes unlisted a tick or two are no exit, its story,
    baseline and any finding go on when it is listed again."""
    grace = ENGINE_GRACE_S if is_engine_key(st.subject.key) else _away_s(tick_s)
    return now.time_mono_s - st.last_seen_mono_s <= grace


def _gpus_of(states: Iterable[SubjectState]) -> tuple[int, ...]:
    return tuple(sorted({g for st in states for g in st.subject.gpus}))


def _another_engine(st: SubjectState, now: Point) -> bool:
    """Another engine, not the same one restarted: another endpoint, and none of the old
    one's processes (both known).  It is judged as one seen for the first time (as at
    gputop's start), with no restart's warm-up, and the old one's episode ends."""
    return is_engine_key(st.subject.key) and now.engine_url is not None \
        and st.engine_url is not None and now.engine_url != st.engine_url \
        and bool(st.engine_pids) and bool(now.engine_pids) \
        and not (st.engine_pids & set(now.engine_pids))


def _identify(st: SubjectState | None, subject: Subject, now: Point,
              tick_s: float) -> SubjectState:
    """The subject's state, fresh when it is new or restarted: an engine whose url changed,
    whose counters went down, whose processes are all new or that was away (a scrape or
    two that failed is not a restart); a job whose processes are all new."""
    t_now = now.time_mono_s
    if st is None:
        return SubjectState(subject, t_now, t_now, engine_url=now.engine_url,
                            engine_pids=frozenset(now.engine_pids))
    restarted = False
    if is_engine_key(subject.key):
        away = t_now - st.last_seen_mono_s > _away_s(tick_s)
        new_pids = bool(st.engine_pids) and bool(now.engine_pids) \
            and not (st.engine_pids & set(now.engine_pids))
        restarted = now.engine_url != st.engine_url or now.counters_reset or new_pids or away
    elif st.subject.pids and subject.pids and not (st.subject.pids & subject.pids):
        restarted = True
    if restarted:
        same = is_engine_key(subject.key) and now.engine_url == st.engine_url
        kept = dict(st.before)
        kept.update({k: x for k in BEFORE_KEPT if (x := st.base.get(k)) is not None})
        fresh = SubjectState(subject, t_now, t_now, engine_url=now.engine_url,
                             engine_pids=frozenset(now.engine_pids),
                             warmup_since_mono_s=t_now if is_engine_key(subject.key) else None,
                             before=tuple(sorted(kept.items())) if same else ())
        return replace(fresh, active=st.active, clearing=st.clearing or (
            (t_now, now.time_wall_s) if st.active else None), tally=st.tally)
    return replace(st, subject=subject, last_seen_mono_s=t_now,
                   engine_pids=frozenset(now.engine_pids) or st.engine_pids)


# what a restarted engine's run before stands for (same url, for `accept_carry_s`): how well
# its drafts matched (the models', not the load's), and the contexts it served (its users')
BEFORE_KEPT = ("spec_accept", "kv_per_seq")


def _absent(st: SubjectState, now: Point, config: DetectConfig,
            final: bool) -> tuple[SubjectState, Episode | None]:
    """A subject not seen this tick: its episode cannot be judged, so it clears, from the
    first tick it went unseen, once it has been away AWAY_S (an engine's scrape or two that
    failed, a process list read a tick late, is no recovery: back sooner, it is judged on).
    A finding still pending is kept the same way: one missed scrape in a slow hold (a
    trainer's lighter phase must last minutes) would otherwise start the hold over."""
    if st.active is None:
        if final:
            return replace(st, pending=None, pending_tally=Tally()), None
        return st, None
    clearing = st.clearing or (now.time_mono_s, now.time_wall_s)
    if final or now.time_mono_s - clearing[0] >= max(config.hold_s, AWAY_S):
        ended = replace(st.active, end_wall_s=clearing[1])
        return replace(st, active=None, clearing=None, tally=Tally()), ended
    return replace(st, clearing=clearing), None


def _advance(st: SubjectState, subject: Subject, recent: tuple[Point, ...],
             windows: dict[str, HistDelta], config: DetectConfig,
             notable: tuple[tuple[float, Evidence], ...]) -> tuple[SubjectState, Episode | None]:
    now = recent[-1]
    if (st.pending is not None or st.active is not None) and st.unclean_since_mono_s is not None:
        st = replace(st, unclean_since_mono_s=None)  # (judged, not merely unlearned)
    since = st.pending[0] if st.pending else (
        _episode_start_mono(st, now) if st.active else now.time_mono_s)
    mine = tuple(e for m, e in notable if m >= since - 2 * config.hold_s) \
        if subject.kind == "engine" else ()
    # requests as large seen while all was well are routine: one a while before the episode,
    # or several lately (clients that always ask max_tokens of the whole context); one just
    # before it, alone, is its likely cause
    healthy = [m for m in st.notable_healthy if since - NOTABLE_KEEP_S <= m < since]
    routine = subject.kind == "engine" and (
        any(m < since - NOTABLE_GRACE_S for m in healthy) or len(healthy) >= NOTABLE_ROUTINE
        or (st.notable_routine_mono_s is not None
            and now.time_mono_s - st.notable_routine_mono_s <= NOTABLE_KEEP_S))
    if routine and mine:
        st = replace(st, notable_routine_mono_s=now.time_mono_s)
    strength = (0.3 if routine else 1.0) if mine else 0.0
    jump = st.jump if st.jump is not None and now.time_mono_s - st.jump[0] <= JUMP_KEEP_S \
        else None
    smooth = _smoothed_tokens(st, now)
    if smooth != st.tokens_smooth:
        st = replace(st, tokens_smooth=smooth)
    st, waiting_before = _queue_readings(st, now)
    feats = signals(subject, recent, st.base, windows, config, strength,
                    jump[1] if jump is not None else None,
                    smooth[1] if smooth is not None else None, waiting_before,
                    dict(st.before) if now.time_mono_s - st.first_seen_mono_s
                    < t("accept_carry_s") else None)
    if feats.v.get("jump_from") is not None and jump is None:
        jump = (now.time_mono_s, cast(float, feats.v["jump_from"]))
    if jump != st.jump:
        st = replace(st, jump=jump)
    paused_rank = feats.v.get("paused_rank")
    paused = None if paused_rank is None else int(paused_rank)
    if paused != st.paused_gpu:
        # (a rank back from a pause as long as a hang's: a pause of its own, by design, if it
        # comes again; a few seconds' hiccup, or a tick's flicker inside a hang, is none)
        came_back = st.paused_before | (
            {st.paused_gpu} if st.paused_gpu is not None and st.pause_since_mono_s is not None
            and now.time_mono_s - st.pause_since_mono_s >= t("rank_hang_s") else set())
        st = replace(st, pause_since_mono_s=now.time_mono_s if paused is not None else None,
                     paused_gpu=paused, paused_before=frozenset(came_back))
    surging = feats.s.get("surge", 0.0) >= 0.5
    if surging != (st.surge_since_mono_s is not None):
        st = replace(st, surge_since_mono_s=now.time_mono_s if surging else None)
    grown = (feats.v.get("batch_grown") or 0.0) >= 1.0
    if grown != (st.grown_since_mono_s is not None):
        st = replace(st, grown_since_mono_s=now.time_mono_s if grown else None)
    if (grown_since := st.grown_since_mono_s) is not None:  # (a span only the state knows)
        feats = replace(feats, v={**feats.v, "grown_s": now.time_mono_s - grown_since})
    before = st
    st = replace(st, sustained=_sustained_ticks(st, subject, feats, now.time_mono_s))
    if feats.s.get("prefill_mild", 0.0) > 0.0 and not _sustained_holds(
            st, "prefill_mild", clearing=st.active is not None and st.active.measure == "prefill"):
        # a burst's seconds of it name nothing and hold no prefill finding: its strength
        # stands once it held over its own span (the other measures' ticks read it so)
        mild = dict(st.sustained)["prefill_mild"]
        feats = replace(feats, s={**feats.s, "prefill_mild": 0.0})
        st = replace(st, sustained=tuple(
            (m, mild if m == "prefill_mild" else ticks) for m, ticks in
            _sustained_ticks(before, subject, feats, now.time_mono_s)))
    for alone, its_measure in ALONE.items():
        if feats.s.get(alone, 0.0) > 0.0 and not _sustained_holds(
                st, alone, clearing=st.active is not None and st.active.measure == its_measure):
            # a cause measured with no cost beside it is named once it held its span
            feats = replace(feats, s={**feats.s, alone: 0.0})
    if subject.kind == "engine":
        kept = tuple(x for x in st.prefill_stalls_mono_s
                     if now.time_mono_s - x < t("prefill_memory_s"))
        # (this tick's reading of the prefill measure, just taken among the sustained ones)
        stalled = (now.time_mono_s,) if dict(st.sustained)["prefill"][-1][1] else ()
        if kept != st.prefill_stalls_mono_s or stalled:
            st = replace(st, prefill_stalls_mono_s=kept + stalled)
    # slow observations must come from min_slow_readings separate readings: at a 2 s
    # interval three readings span 4 s, longer than the hold, so the span follows the tick,
    # or the engine's scrape interval where it reads less often than the tick (5-15 s)
    last = recent[-5:]
    gaps = [b.time_mono_s - a.time_mono_s for a, b in zip(last, last[1:])]
    tick_s = statistics.median(gaps) if gaps else 0.0  # one late tick moves no window
    span_s = max(config.hold_s, (t("min_slow_readings") - 1)
                 * max(tick_s, _reading_interval_s(st))) + 0.5
    slow = tuple((n, m) for n, m in st.slow_times if now.time_mono_s - m <= 2 * span_s)
    slow += tuple((n, now.time_mono_s) for n, hit in feats.slow_reading.items() if hit)
    if slow != st.slow_times:
        st = replace(st, slow_times=slow)

    def judged() -> tuple[dict[str, float], dict[str, float], set[str],
                          dict[str, tuple[int, ...]], dict[str, str]]:
        # the causes' scores: only while a trigger holds
        scores = signatures.scores(feats.s)
        oversized = BY_CAUSE["oversized_request"]
        harm = feats.s.get("harm", 0.0)
        latched = {"notable": oversized.score({**feats.s, "notable": 1.0}),
                   "fanout": oversized.score({**feats.s, "fanout": 1.0,
                                              "fanout_harm": 0.7 * harm})}
        seen = {name for name in latched if feats.s.get(name, 0.0) >= 0.5}
        return scores, latched, seen, _where(subject, feats), _losing(feats.s, scores)

    if st.active is None:
        measure = _trigger(st, subject, feats, config, clearing=False)
        if measure is not None and measure in LATENCY_MEASURES:
            hits = {m for n, m in slow if n == measure
                    and now.time_mono_s - m <= span_s}
            if len(hits) < t("min_slow_readings"):
                measure = None if st.pending is None else st.pending_measure
        if subject.kind == "engine":
            scale = feats.v.get("queue_scale")
            queued = bool(scale) and (feats.v.get("queue_growth") or 0.0) >= (scale or 0.0)
            st = replace(st, fired=tuple(
                x for x in st.fired if now.time_mono_s - x[0] <= t("noise_span_s"))
                + ((now.time_mono_s, measure in NOISY_MEASURES, queued),))
        if measure is None:
            if mine and st.pending is None and subject.kind == "engine":
                st = replace(st, notable_healthy=tuple(
                    m for m in st.notable_healthy if now.time_mono_s - m <= NOTABLE_KEEP_S
                )[-(2 * NOTABLE_ROUTINE):] + (now.time_mono_s,))
            if st.pending is not None:
                st = replace(st, pending=None, pending_measure=None, pending_tally=Tally())
            return _feed(st, subject, recent, feats, config), None
        if st.pending is not None and st.pending_measure == "idle" and measure != "idle":
            # the weak, slow idle lends neither its start nor its name to another finding
            # (a launch-bound phase at lower util, then a CUDA graph's hollow busy time)
            st = replace(st, pending=None, pending_measure=None, pending_tally=Tally())
        stopped = feats.v.get("work_stopped_s") is not None
        if st.pending is not None and st.pending_stopped and not stopped:
            # the counter moving again after it stopped altogether ends the job's own phase
            # (an eval pass) the finding waited on: what follows it holds on its own (the
            # first step back, timed across the pause, reads as a slow one)
            st = replace(st, pending=None, pending_measure=None, pending_tally=Tally())
        if st.pending is None:
            st = replace(st, probation=(), pending_barrier=False, pending_stopped=False)
        if stopped and not st.pending_stopped:
            st = replace(st, pending_stopped=True)
        pending = st.pending or (now.time_mono_s, now.time_wall_s)
        if feats.v.get("all_hollow") and not st.pending_barrier \
                and now.time_mono_s - pending[0] <= config.hold_s:
            # (a collective's first tick, averaged with the steps before it, reads as less)
            st = replace(st, pending_barrier=True)
        tally = st.pending_tally.add(*judged())
        st = replace(st, pending=pending, pending_measure=st.pending_measure or measure,
                     pending_tally=tally)
        hold = config.hold_s if measure in ENGINE_MEASURES else max(config.hold_s,
                                                                     t("job_hold_s"))
        if measure in LATENCY_MEASURES and (feats.v.get(f"{measure}_ratio") or 0.0) < \
                t("latency_severe") and not any(
                    _trigger_holds(m, st, subject, feats, config, clearing=False)
                    for m in ENGINE_MEASURES if m not in LATENCY_MEASURES):
            hold *= 2  # a moderate latency rise alone must last: bursts give a few seconds
        if measure == "step" and (feats.v.get("dram_rise") or 0.0) < t("dram_rise_pts") \
                and feats.s.get("kv_read", 0.0) < 0.5:
            hold = max(hold, t("step_alone_hold_s"))  # the typical step alone must last
        top = tally.ranked()[:1]
        prefilling = bool(top) and top[0][0] == "prefill_interference"
        if (_admitting(recent) and not _fanned_out(feats, now, strength) and (
                measure in ENGINE_MEASURES or prefilling)) or (
                measure in ENGINE_MEASURES and prefilling
                and not _prefill_before(st, pending[0])):
            # an engine admitting a burst of arrivals (the batch swelling), or a few long
            # prompts arriving together for once, stalls the decodes for seconds by design
            # while their prompts are prefilled, whatever its counters say (SGLang counts
            # prompt tokens only as requests finish); a stall that outlasts the admission,
            # or prompts that stall the decodes again and again, is the news
            hold = max(hold, t("prefill_hold_s"))
        if measure in SLOW_MEASURE_HOLD:
            hold = max(hold, t(SLOW_MEASURE_HOLD[measure]))
        if measure in NOISY_MEASURES and _noisy(st, pending[0]) \
                and not _queue_unheard_of(st, subject, feats, config, pending[0]):
            hold = max(hold, t("noisy_hold_s"))
        if measure in ("idle", "work") and _lighter_phase(measure, feats):
            hold = max(hold, t("job_idle_alone_hold_s"))
        if measure in ("stall", "work") and subject.kind == "trainer" \
                and now.work_step_s is not None and (now.work_changed_mono_s or 0.0) < pending[0] \
                and feats.s.get("input_cpu_new", 0.0) < 0.8:
            # a trainer's counter tells a saw-tooth of waiting steps (they come slower) from
            # a phase of its own (an eval pass: no step at all) by a step since it began, or
            # once it has gone three steps and a reading without one: until then, wait
            # (an input thread pegged anew says the steps wait: no need)
            hold = max(hold, min(t("work_known_max_s"), max(t("work_stopped_s"), 3.0 * (
                now.work_step_s)) + _reading_interval_s(st)))
        if (subject.kind != "engine" and feats.v.get("all_hollow") and (
                {measure, st.pending_measure} & {"hollow", "work", "stall", "idle"})) \
                or (st.pending_barrier and (subject.kind != "engine"
                                            or st.pending_measure == "hollow")):
            # every rank in a collective at once: a barrier the job passes (a checkpoint's
            # gather; an RL rollout engine's weights broadcast, its output stopped for its
            # seconds) unless it lasts; small kernels slow the steps for good
            hold = max(hold, t("barrier_hold_s"))
        if now.time_mono_s - pending[0] < hold:
            return st, None
        if (not top or top[0][1] < t("verdict_min")) and (
                _mild(measure, feats) or (measure == "tokens" and _admitting(recent)
                                          and (feats.v.get("prompt_ratio") or 0.0) >= 0.8)) and \
                now.time_mono_s - pending[0] < t("unclear_hold_s"):
            # no cause explains a mild reading yet: a blip of one signal; or tokens/s low
            # while the batch swells and prompts are processed as usual or more: arrivals
            # being prefilled
            return st, None
        old = None
        if st.last_closed is not None and pending[0] - st.last_closed_mono_s <= REOPEN_S \
                and _same_trouble(st.last_closed, tally.ranked(), _kind(
                    st.pending_measure or measure, feats.v, config)):
            old = replace(st.last_closed, end_wall_s=None)  # the same episode, again
            tally = st.last_tally.merged(tally)
        episode = _episode(st, subject, feats, tally, strength >= 0.5,
                           old.start_wall_s if old else pending[1],
                           old.measure if old else st.pending_measure or measure, old, config)
        return replace(st, active=episode, tally=tally, pending=None, pending_measure=None,
                       pending_tally=Tally(), clearing=None, last_closed=None), None

    measure = _trigger(st, subject, feats, config, clearing=True)
    if measure is not None:
        keep = st.active.measure
        if keep != measure and _trigger_holds(keep, st, subject, feats, config):
            measure = keep
        tally = st.tally.add(*judged())
        episode = _shown(_episode(st, subject, feats, tally, strength >= 0.5,
                                  st.active.start_wall_s, measure, st.active, config),
                         st.active, feats,
                         recovering=not _trigger_holds(measure, st, subject, feats, config,
                                                       clearing=False))
        return replace(st, active=episode, tally=tally, clearing=None), None
    clearing = st.clearing or (now.time_mono_s, now.time_wall_s)
    episode = st.active
    if strength >= 0.5 and not any(e.signal.startswith("notable") for e in episode.facts):
        # a request that ends as the episode clears (vLLM observes n when it ends) is still
        # its evidence: the verdict takes it as if seen all along
        suspects = st.tally.ranked(True)
        episode = replace(episode, facts=merge(episode.facts, mine), suspects=suspects,
                          gpus=_gpus_for(suspects, st.tally, subject),
                          history=_history(episode, suspects, now.time_wall_s))
    st = replace(st, clearing=clearing, active=episode)
    if now.time_mono_s - clearing[0] >= config.hold_s:
        ended = replace(episode, end_wall_s=clearing[1])
        return replace(st, active=None, clearing=None, tally=Tally(), last_closed=ended,
                       last_tally=st.tally, last_closed_mono_s=clearing[0],
                       settle_until_mono_s=now.time_mono_s + t("settle_s")), ended
    return st, None


def _serves_nothing(subject: Subject, v: Values) -> bool:
    """An engine with no request running or waiting: another process's kernels on its GPU
    slow no one's work (a redeploy's next engine capturing its CUDA graphs beside the old
    one), whatever its own SM time and tokens/s read against its baseline."""
    return subject.kind == "engine" and v.get("running") == 0 and not v.get("waiting")


def _queue_unheard_of(st: SubjectState, subject: Subject, feats: Features,
                      config: DetectConfig, since_mono_s: float) -> bool:
    """Whether a queue grows (the queue trigger holds) where the service's healthy baseline
    had none waiting and none of its own dips before ``since_mono_s`` (outside episodes,
    over noise_span_s) grew one: dips that never filled a queue are no reason to wait for
    this one (a prompt storm deferring two dozen requests on a lumpy server); a service
    whose own bursts queue still waits."""
    base = feats.v.get("waiting_base")
    queued_before = any(q for m, _, q in st.fired if m < since_mono_s)
    return base is not None and base < 1.0 and not queued_before \
        and _trigger_holds("queue", st, subject, feats, config, clearing=False)


def _same_trouble(closed: Episode, ranked: tuple[tuple[str, float], ...], kind: str) -> bool:
    """Whether a finding that starts within REOPEN_S of the last episode's end is that
    episode again: unless both its leading cause and the episode's are clear
    (reopen_distinct) and differ (a DataLoader stall that ends, then CUDA-graph replays of
    tiny kernels, are two troubles, not one), or the GPU is in another state (``kind``:
    busy, now waiting on the host) and the episode's cause shows no more at all while
    another does (a second process on the GPU gone, then busy loops on the trainer's
    cores: the lab's H200 run glued the two; the same collapse read first as one cause,
    then another, stays one).  ``ranked``: the finding's causes, best first."""
    if not ranked or not closed.suspects or ranked[0][0] == closed.suspects[0][0]:
        return True
    clear = t("reopen_distinct")
    if ranked[0][1] >= clear and closed.suspects[0][1] >= clear:
        return False
    gone = closed.suspects[0][0] not in dict(ranked)  # (ranked keeps scores over the floor)
    return not (gone and kind != closed.kind and ranked[0][1] >= t("verdict_min"))


def _noisy(st: SubjectState, since_mono_s: float) -> bool:
    """Whether the service's engine triggers fired on a noise_share of its ticks before
    ``since_mono_s`` (outside episodes, over at least noise_min_s): dips are its normal.
    Sooner than that, whether the tokens/s its baseline was learned from spread by
    noise_cv of their mean: a lumpy service from its first minute."""
    before = [hit for m, hit, _ in st.fired if m < since_mono_s]
    if len(before) < 2 or since_mono_s - st.fired[0][0] < t("noise_min_s"):
        # too soon to count its dips: the tokens/s it was learned at says how lumpy it is
        tokens = [s.values["tokens"] for s in st.base.samples if "tokens" in s.values]
        mean = statistics.fmean(tokens) if len(tokens) >= 5 else 0.0
        return mean > 0 and statistics.pstdev(tokens) / mean >= t("noise_cv")
    return sum(before) / len(before) >= t("noise_share")


def _smoothed_tokens(st: SubjectState, now: Point) -> tuple[float, float] | None:
    """The engine's tokens/s as an exponential mean over a couple of request lifetimes, for
    engines whose counter moves only when a request finishes; None for the others."""
    if now.engine_kind not in FINISH_COUNTED or now.tokens_per_s is None:
        return None
    if st.tokens_smooth is None:
        return (now.time_mono_s, now.tokens_per_s)
    then, value = st.tokens_smooth
    dt = max(0.0, now.time_mono_s - then)
    alpha = 1.0 - math.exp(-dt / finish_counted_tau_s(st.base))
    return (now.time_mono_s, value + alpha * (now.tokens_per_s - value))


def _fanned_out(feats: Features, now: Point, notable: float) -> bool:
    """The batch grew by one request's sequences, not by arrivals: a notable request (n >= 8)
    seen, or the batch doubled at once with no new prompt work where the engine counts
    prompts as they are computed (vLLM; SGLang and llama.cpp count them as requests end, so
    a burst of arrivals reads as no prompt work there)."""
    return notable >= 0.5 or (feats.s.get("fanout", 0.0) >= 0.5
                              and now.engine_kind not in FINISH_COUNTED)


def _admitting(recent: tuple[Point, ...]) -> bool:
    """The batch swelled within the last 10 s (1.4x its smallest, and 4 more): arrivals
    being admitted."""
    now = recent[-1]
    before = [p.requests_running for p in recent if p.requests_running is not None
              and p.time_mono_s >= now.time_mono_s - 10.0]
    return now.requests_running is not None and bool(before) \
        and now.requests_running >= 1.4 * min(before) + 4


def _sustained_ticks(st: SubjectState, subject: Subject, feats: Features, now_mono_s: float
                     ) -> tuple[tuple[str, tuple[tuple[float, bool], ...]], ...]:
    """Each sustained measure's ticks over the span, this one's added."""
    old = dict(st.sustained)
    out = []
    for measure, (kinds, holds) in SUSTAINED.items():
        if subject.kind in kinds:
            span = t(SUSTAINED_SPAN.get(measure, "sustained_span_s"))
            kept = tuple(x for x in old.get(measure, ()) if now_mono_s - x[0] < span)
            out.append((measure, kept + ((now_mono_s, holds(feats)),)))
    return tuple(out)


def _sustained_holds(st: SubjectState, measure: str, clearing: bool) -> bool:
    """The measure held on ``sustained_share`` of the ticks of a whole span (and on this one,
    to open): a finding that flickers tick by tick (one reading's histograms, a gauge read
    between steps) but is there most of the time."""
    ticks = dict(st.sustained).get(measure, ())
    span = t(SUSTAINED_SPAN.get(measure, "sustained_span_s"))
    # (a pending finding read in periods, a saw-tooth or a step from histogram buckets, is
    # kept by its share: the tick at the peak of a period does not start its hold again)
    if not ticks or ticks[-1][0] - ticks[0][0] < span - 2.5 or not (
            clearing or ticks[-1][1] or (st.pending_measure == measure
                                         and measure in PERIODIC_MEASURES)):
        return False
    linger = t("alone_linger_s" if measure in ALONE else "sustained_linger_s")
    if clearing and not any(held for when, held in ticks if ticks[-1][0] - when <= linger):
        return False  # gone for a while: what the span still holds is the past
    share = sum(1 for _, held in ticks if held) / len(ticks)
    if measure in SUSTAINED_SHARE:
        return share >= t(SUSTAINED_SHARE[measure]) * (0.6 if clearing else 1.0)
    if not clearing and measure in NOISY_SPANS and _noisy(st, st.pending[0] if st.pending
                                                          else ticks[-1][0]):
        # a service that dips by itself shows a span finding on half its ticks as routine:
        # it must hold on most of them
        return share >= t("noisy_span_share")
    return share >= t("sustained_share") * (0.6 if clearing else 1.0)


def _prefill_before(st: SubjectState, since_mono_s: float) -> bool:
    """Prompts stalled the decodes within the last minute too, apart from the stall that
    began at ``since_mono_s``: they recur, no burst of one."""
    return any(when < since_mono_s - t("prefill_apart_s") for when in st.prefill_stalls_mono_s)


def _host_costs(feats: Features) -> bool:
    """The host contended (/proc: the tree's lost CPU, pressure, run queue, switches) while
    the work shows any harm: GPU-Util falling, the first tokens waiting, a queue, the token
    tail or the typical token slower, each sequence slower than its batch explains (the
    batch swelling at the same tokens/s), fewer tokens or steps."""
    s, v = feats.s, feats.v
    if s.get("host", 0.0) < t("host_sustained"):
        return False
    if s.get("ttft", 0.0) >= 0.5 or s.get("queue_soft", 0.0) >= 0.5 \
            or s.get("util_drop", 0.0) >= 0.3 or s.get("seq_slow", 0.0) >= 0.5 \
            or s.get("tokens_down", 0.0) >= 0.3 or s.get("work_down", 0.0) >= 0.3 \
            or (v.get("itl_ratio") or 0.0) >= 1.6 or (v.get("step_ratio") or 0.0) >= 1.4:
        return True
    # (the tree's own CPU taken, its quota running out or a crowd on its cores, beside
    # strong contention: a milder cost)
    return s.get("host_mild_harm", 0.0) >= 1.0


def _odd_waits(feats: Features) -> bool:
    """One GPU of the subject out of step (clock, heat, power, the only one still computing)
    while the others wait, the GPUs busy: a mild straggler reads so on most ticks, not all."""
    s = feats.s
    return (feats.v.get("util") or 0.0) >= 50 and s.get("odd", 0.0) >= 0.4 \
        and s.get("peers_wait", 0.0) >= 0.3


def _job_dram(feats: Features) -> bool:
    """A job's DRAM traffic risen to near saturation, above any level it ran at before, and
    paid for: its rate (a counter) or its SM share fell (the SMs wait on memory); without
    either, the memory controller all but always busy.  A new phase of memory-bound work (a
    larger embedding table, an unfused optimizer, an eager fallback of a fused kernel)."""
    s, v = feats.s, feats.v
    rate, share = v.get("tokens_ratio"), v.get("sm_share_ratio")
    # a rate far down lets a lower level count: memory-bound phases within each step (an
    # optimizer's) average out under saturation over a tick; not a counter all but stopped,
    # another phase (an evaluation pass): such a share costs each step a part, not all of it
    # ...and so does each step reading half again the bytes it did (DRAM activity over the
    # job's own, per unit of its counter's work) while it slowed: the step's time moved to
    # its memory (a dense scatter, an unfused optimizer's states streamed).  (Without a
    # counter, an RL loop's decoding rollouts between its training steps read as more
    # traffic too.)
    dram, rise = v.get("dram"), v.get("dram_rise")
    level = 0.5
    if rate is not None and t("job_dram_rate_stopped") < rate:
        per_work = dram / (dram - rise) / rate \
            if dram is not None and rise is not None and dram - rise > 0 else 0.0
        if rate <= t("job_dram_rate_far") or (
                rate <= t("job_dram_rate") and per_work >= t("job_dram_per_work")):
            level = 0.25
    if s.get("dram", 0.0) < level or min(s.get("dram_new", 0.0), s.get("dram_unseen", 0.0)) < 0.5:
        return False
    if rate is not None or share is not None:
        return (rate is not None and rate <= t("job_dram_rate")) \
            or (share is not None and share <= t("job_dram_share"))
    return (v.get("mem_ctrl") or 0.0) >= 90.0


def _hollow_long(feats: Features) -> bool:
    """GPU-Util claims the card busy while under a quarter of that time has SMs working."""
    v = feats.v
    ratio = v.get("sm_ratio")
    return ratio is not None and (v.get("util") or 0.0) >= t("hollow_util_pct") \
        and ratio <= t("hollow_sustained_ratio")


def _full(strength: str) -> Callable[[Features], bool]:
    """A tick on which a cause measured directly (ALONE: features' launch_alone, stalls at a
    scheduler slice's scale; host_alone, the tree's own CPU taken) reads at full strength."""
    return lambda feats: feats.s.get(strength, 0.0) >= 1.0


def _shared_costs(feats: Features) -> bool:
    """Another process on the subject's GPU with a milder cost than the shared trigger's
    own (features' shared_mild_harm: a job's rate, or an engine's tokens/s per sequence at
    its usual batch, at 0.9x; each token 1.15x)."""
    return feats.s.get("shared", 0.0) >= 0.5 and feats.s.get("shared_mild_harm", 0.0) >= 1.0


def _steps_slow(feats: Features) -> bool:
    """Every token 1.6x slower (ITL p50 at the batch demand explains) with the batch swollen at
    the same tokens/s (each sequence slower: Little's law), and nothing that reads more
    (prompts, DRAM traffic, longer contexts) or more work arriving (tokens/s 1.6x+, or requests
    finishing more often with their usual replies): work beside the forward pass in every
    step, such as n sequences' logprobs over the vocabulary.
    Its histogram buckets move the p50 between readings, so it is judged over a span."""
    s, v = feats.s, feats.v
    return (v.get("step_ratio") or 0.0) >= t("slow_step") and s.get("seq_slow", 0.0) >= 0.4 \
        and max(s.get("prefill", 0.0), s.get("dram_new", 0.0), s.get("kv_read", 0.0)) < 0.5 \
        and (v.get("tokens_ratio") or 1.0) <= 1.6 and batch_decodes(v) and not _more_arrivals(v)


def _more_arrivals(v: Values) -> bool:
    """Requests finishing `arrivals_grown` (1.2x) as often as usual, each with its usual
    number of tokens or fewer, the batch grown for `arrivals_grown_s` (30 s) before the
    steps slowed: traffic grew, and the batch with it.  (n sequences of one request are
    counted as n requests by vLLM and SGLang alike, but they join the batch at once.)"""
    grown = t("arrivals_grown")
    return (v.get("finished_ratio") or 0.0) >= grown \
        and (v.get("tokens_per_request_ratio") or math.inf) <= grown \
        and (v.get("grown_s") or 0.0) >= t("arrivals_grown_s")


def _reads_cost(feats: Features) -> bool:
    """Every token `step_reads_slow` (1.3x) slower while each step reads more (DRAM 6+
    points over its baseline, or the KV per sequence up), and the output down with it
    (tokens/s at `step_reads_tokens` or less, demand kept): longer contexts costing the
    service, not only its tail.  A batch that grew keeps its output; this one did not.
    Milder than ``step``, and read from the p50 (or the exact mean: a step time moving
    inside one bucket) and a noisy tokens/s, it is judged over a span."""
    s, v = feats.s, feats.v
    tokens, rise = v.get("tokens_ratio"), v.get("dram_rise")
    ratio = token_slowdown(v)
    reads = (rise is not None and rise >= 0.6 * t("dram_rise_pts")) \
        or s.get("kv_read", 0.0) >= 0.3
    if not reads or ratio is None or tokens is None or not v.get("demand_kept"):
        return False
    # (the output kept: contexts far longer, every token markedly slower, is the users' wait)
    return (ratio >= t("step_reads_slow") and tokens <= t("step_reads_tokens")) \
        or (ratio >= t("reads_latency_slow") and s.get("kv_read", 0.0) >= 0.5
            and s.get("kv_read_before", 1.0) >= 0.5 and tokens <= t("reads_latency_tokens")
            and not _more_arrivals(v))


def _steps_wait(feats: Features, clearing: bool = False) -> bool:
    """Steps and waits alternating: a saw-tooth, or a weaker one where the busy time fell
    with it.  A step's wait shows on some ticks of its period and not on the one at its
    peak (the window's lowest sample, or the util at its best): also judged over a span."""
    s = feats.s
    if _paced(feats) or feats.v.get("work_stopped_s") is not None:
        # (a counter stopped altogether: the job is in a phase of its own, a checkpoint or
        # an eval pass; waiting steps come slower, not never)
        return False
    return s.get("sawtooth", 0.0) >= (0.3 if clearing or s.get("util_drop", 0.0) >= 0.5
                                      else 0.5)


def _paced(feats: Features) -> bool:
    """A job whose counter says its steps are back at their pace, its GPU as busy as ever:
    no longer waiting, while the saw-tooth's window (and a span's share of ticks) still
    holds the seconds before (the H200 lab's stall ran on into the next trouble)."""
    ratio = feats.v.get("tokens_ratio")
    return ratio is not None and ratio >= 0.9 and feats.s.get("util_drop", 0.0) < 0.3


def _alone(v: Values) -> bool:
    """One request in flight (running and waiting: SGLang counts a prompt being prefilled as
    waiting); unknown where the engine reports no batch."""
    running = v.get("running")
    return running is not None and running + (v.get("waiting") or 0.0) < t(
        "prefill_min_requests")


def _prefill_costs(feats: Features) -> bool:
    """Longer prompts than usual being prefilled while the decodes pay for it: the first
    tokens wait, the inter-token tail or the typical token slows, or tokens/s falls (and
    tokens/s not far above its normal: more output is more work arriving, not harm).  A
    server with one request in flight has no other decodes to pay for it."""
    s, v = feats.s, feats.v
    if _alone(v):
        return False  # one request in flight: its own prompt delays no one else's tokens
    if s.get("prefill_mild", 0.0) >= 0.5:
        return True  # (its strength holds the decodes' cost: every token slower, output down)
    return s.get("prefill", 0.0) >= 0.5 and (v.get("tokens_ratio") or 1.0) <= t(
        "prefill_tokens_max") and (s.get("ttft", 0.0) >= 0.5 or s.get("tokens_down", 0.0) >= 0.5
                                   or (v.get("itl_ratio") or 0.0) >= t("step_slow")
                                   or (v.get("step_ratio") or 0.0) >= t("step_slow"))


def _prefill_mild(feats: Features) -> bool:
    """Prompts somewhat longer taking twice their share of the steps, the decodes paying
    (features' ``prefill_mild``), with other requests in flight to pay for them."""
    return feats.s.get("prefill_mild", 0.0) >= 0.5 and not _alone(feats.v)


def _lighter_phase(measure: str, feats: Features) -> bool:
    """Nothing says the steps wait (no input thread pegged, no contended host, no launch
    stalls, no saw-tooth) and, for a counter's fall, nothing else on the GPU but its lower
    busy time: a lighter phase of the job's own (an eval pass, forward only) lowers its
    busy time and its train steps for a minute or so; only a longer loss is its steps
    waiting."""
    s = feats.s
    # (a thread of the job pegged while its counter stopped altogether is the job's own
    # phase too: a checkpoint serialised on the main thread; one pegged all along, a loop
    # spinning on the GPU, is no input pipeline's)
    stopped = feats.v.get("work_stopped_s") is not None
    pegged = s.get("input_cpu_new", 0.0) >= 0.8 and not stopped
    # (nor is a saw-tooth while no step comes at all: the eval pass's own batches, not
    # waiting steps, which come slower)
    waits = ("host", "jitter") if stopped else ("host", "jitter", "sawtooth")
    if pegged or max(s.get(x, 0.0) for x in waits) >= 0.3:
        return False
    return measure == "idle" or max(
        s.get("hollow_new", 0.0), s.get("hollow_match", 0.0), s.get("clock_all", 0.0),
        s.get("shared", 0.0), s.get("odd", 0.0) * s.get("peers_wait", 0.0)) < 0.3


def _mild(measure: str, feats: Features) -> bool:
    """A throughput or latency trigger only just past its threshold (tokens/s above 0.3x,
    a latency under 4x): such a reading alone can be a lumpy counter or a burst."""
    v = feats.v
    if measure == "tokens":
        return (v.get("tokens_ratio") or 0.0) > 0.3
    if measure in LATENCY_MEASURES or measure == "step":
        key = "step_ratio" if measure == "step" else f"{measure}_ratio"
        return (v.get(key) or 0.0) < t("latency_severe")
    return measure == "share"


def _queue_readings(st: SubjectState, now: Point) -> tuple[SubjectState, float | None]:
    """The queue as the engine read it at least QUEUE_TREND_S before its latest reading (a
    distinct reading, however many ticks repeat one between scrapes), and the state that
    keeps the readings; None where no such reading is kept."""
    read, waiting = now.engine_read_mono_s, now.requests_waiting
    if read is None:
        return st, None
    readings = st.readings
    if waiting is not None and (not readings or readings[-1][0] != read):
        readings = tuple(r for r in readings if read - r[0] <= READINGS_KEEP_S) \
            + ((read, waiting),)
        st = replace(st, readings=readings)
    before = next((w for r, w in reversed(readings) if r <= read - QUEUE_TREND_S), None)
    if not st.read_times or st.read_times[-1] != read:
        st = replace(st, read_times=(st.read_times + (read,))[-4:])
    return st, before


def _reading_interval_s(st: SubjectState) -> float:
    """The engine's usual interval between distinct readings (its scrape interval), from
    the last few kept; 0 where fewer than two are kept (a job, an engine just seen)."""
    reads = st.read_times
    gaps = [b - a for a, b in zip(reads, reads[1:])]
    return min(statistics.median(gaps), MAX_READING_GAP_S) if gaps else 0.0


def _episode_start_mono(st: SubjectState, now: Point) -> float:
    return now.time_mono_s - (now.time_wall_s - cast(Episode, st.active).start_wall_s)


def _losing(s: dict[str, float], scores: dict[str, float]) -> dict[str, str]:
    """Why each cause scored what it did, for the explain page: the veto that cost it most,
    else its weakest requirement."""
    out = {}
    for cause, score in scores.items():
        sig = BY_CAUSE[cause]
        veto = sig.strongest_veto(s)
        if veto is not None and veto[1] >= 0.2:
            out[cause] = f"{words.signal_text(veto[0])} speaks against it"
        else:
            name, value = sig.weakest_requirement(s)
            out[cause] = f"weakest sign: {words.signal_text(name)} ({value:.2f})"
    return out


def _where(subject: Subject, feats: Features) -> dict[str, tuple[int, ...]]:
    named = {"odd": (feats.odd_gpu,) if feats.odd_gpu is not None else (),
             "shared": feats.shared_gpus, "throttled": feats.throttled_gpus,
             "dram": feats.dram_gpus, "stalled": feats.stalled_gpus,
             "launch": feats.launch_gpus}
    return {sig.cause: named.get(sig.where) or subject.gpus for sig in signatures.SIGNATURES}


def _gpus_for(suspects: tuple[tuple[str, float], ...], tally: Tally,
              subject: Subject) -> tuple[int, ...]:
    if not suspects:
        return subject.gpus
    return tally.where.get(suspects[0][0]) or subject.gpus


def _history(old: Episode | None, suspects: tuple[tuple[str, float], ...],
             wall_s: float) -> tuple[tuple[float, str], ...]:
    history = old.history if old is not None else ()
    top = suspects[0][0] if suspects else "unknown"
    if not history or history[-1][1] != top:
        history = (history + ((wall_s, top),))[-10:]
    return history


def _episode(st: SubjectState, subject: Subject, feats: Features, tally: Tally, notable: bool,
             start_wall_s: float, measure: str, old: Episode | None,
             config: DetectConfig) -> Episode:
    v = feats.v
    suspects = tally.ranked(notable or (old is not None and any(
        e.signal.startswith("notable") for e in old.facts)))
    facts = merge(old.facts if old is not None else (), feats.evidence)
    # the features stamp every piece of evidence with the tick's wall time
    horizon = feats.evidence[0].when_wall_s - 15.0 if feats.evidence else None  # type: ignore[operator]
    if horizon is not None:  # findings that stopped showing fall off, requests stay
        facts = tuple(e for e in facts if e.signal.startswith("notable")
                      or (e.until_wall_s or e.when_wall_s or 0.0) >= horizon)
    util = v.get("util") or 0.0
    kind = old.kind if old is not None else _kind(measure, v, config)
    latency = measure in LATENCY_MEASURES
    wall = cast(float, feats.evidence[0].when_wall_s) if feats.evidence else start_wall_s
    return Episode(
        kind=kind, gpus=_gpus_for(suspects, tally, subject), start_wall_s=start_wall_s,
        end_wall_s=None, baseline_tokens_per_s=v.get("tokens_base") or 0.0,
        tokens_per_s=v.get("tokens"), util_pct=util, facts=facts, suspects=suspects,
        measure=measure,
        latency_p99_s=v.get(f"{measure}_p99") if latency else None,
        latency_baseline_s=v.get(f"{measure}_expected") if latency else None,
        subject=subject.key, subject_label=subject.label, job_gpus=subject.gpus,
        values={k: x for k, x in v.items() if isinstance(x, (int, float))},
        history=_history(old, suspects, wall),
        why_not={c: why for c, why in tally.losing.items()
                 if suspects and c != suspects[0][0]})


def _kind(measure: str, v: Values, config: DetectConfig) -> str:
    """"starved" (the GPU waits on the host: the measure says so, or its busy time fell
    well under its baseline while the work fell) or "busy_unproductive"."""
    util, util_base = v.get("util") or 0.0, v.get("util_base")
    if measure in ("util", "stall", "launch", "idle", "host", "cpu") or (
            util_base is not None and util < config.busy_util_pct - 5
            and util_base - util >= 10 and (measure in ("tokens", "queue", "work")
                                            or measure in LATENCY_MEASURES)):
        return "starved"
    return "busy_unproductive"


def _badness(episode: Episode) -> float | None:
    """How bad the tick an episode's numbers come from was, by what tripped it: a latency
    measure's ratio to its baseline, else the work lost (baseline over tokens/s)."""
    if episode.measure in LATENCY_MEASURES:
        return episode.values.get(f"{episode.measure}_ratio")
    ratio = episode.values.get("tokens_ratio")
    return None if ratio is None else 1.0 / max(ratio, 1e-6)


def _shown(episode: Episode, old: Episode, feats: Features, recovering: bool) -> Episode:
    """The numbers an open episode quotes are those of its harm: a tick that recovers (the
    trigger holds only at the looser clearing thresholds: ``recovering``) or is milder than
    the peak so far keeps the peak's numbers and what tripped it (a CUDA-graph phase ending
    must not read "busy 83% but SM active 25%"), and a finding judged over a span keeps the
    numbers of the last tick that showed it (the tick between two long prompts).  A finding
    that names the harm better (prompts, a span-judged one) takes over with its own."""
    kept = replace(episode, values=old.values, tokens_per_s=old.tokens_per_s,
                   util_pct=old.util_pct, baseline_tokens_per_s=old.baseline_tokens_per_s,
                   latency_p99_s=old.latency_p99_s, latency_baseline_s=old.latency_baseline_s)
    alike = (episode.measure in LATENCY_MEASURES) == (old.measure in LATENCY_MEASURES)
    # a recovering tick keeps the peak unless it is worse than it (a block on opening, such
    # as a surge of arrivals, is no recovery)
    calmer = alike and (_milder(episode, old) or (recovering and not _milder(old, episode)))
    if old.measure != episode.measure:
        if episode.measure in SUSTAINED or episode.measure in SLOW_MEASURE_HOLD:
            return episode
        return replace(kept, measure=old.measure) if calmer else episode
    if calmer:
        return kept
    shows = SUSTAINED.get(episode.measure)
    return episode if shows is None or shows[1](feats) else kept


def _milder(episode: Episode, old: Episode) -> bool:
    """Whether ``episode``'s tick hurt much less (peak_keep) than the one ``old`` quotes,
    judged alike: a latency measure against itself, the others by the work lost; within
    that, the screen's newest numbers are quoted."""
    latency = {episode.measure, old.measure} & set(LATENCY_MEASURES)
    if latency and episode.measure != old.measure:
        return False
    now, then = _badness(episode), _badness(old)
    return now is not None and then is not None and now < t("peak_keep") * then


# ---------------------------------------------------------------- triggers

def _trigger(st: SubjectState, subject: Subject, feats: Features, config: DetectConfig,
             clearing: bool) -> str | None:
    """What says the work is unproductive now (the measure), or None.  ``clearing`` applies
    the looser thresholds an open episode needs to close."""
    order = _ENGINE_ORDER if subject.kind == "engine" else _JOB_ORDER
    for measure in order:
        if _trigger_holds(measure, st, subject, feats, config, clearing):
            return measure
    return None


_ENGINE_ORDER = ("itl", "tokens", "queue", "util", "ttft", "kv", "step", "spec", "share", "cpu",
                 "launch", "host", "prompts", "prefill", "slow", "reads", "straggler", "odd",
                 "shared", "clock", "hollow")
_JOB_ORDER = ("work", "hollow", "stall", "idle", "straggler", "odd", "shared", "launch", "cpu",
              "host", "clock", "dram")
# an engine's tick-to-tick measures: a service's routine dips fire them for a few ticks
# (the span-judged ones, SUSTAINED, weigh their own share of ticks)
NOISY_MEASURES = ("itl", "ttft", "tokens", "queue", "step", "util")
NOISY_SPANS = ("prefill", "slow")  # ...and the engine's span-judged ones they echo
# measures that must hold longer than the hold, whatever else reads: one pasted document
# (prompts) is a burst; a phase of lighter work (idle) is no stall
SLOW_MEASURE_HOLD = {"prompts": "prefill_hold_s", "idle": "job_idle_hold_s"}
# measures judged by their share of a span's ticks: the subject kinds, what holds on a tick
SUSTAINED: dict[str, tuple[tuple[str, ...], Callable[[Features], bool]]] = {
    "prefill": (("engine",), _prefill_costs),
    "host": (("engine", "trainer", "job", "gpu"), _host_costs),
    "odd": (("engine", "trainer", "job", "gpu"), _odd_waits),
    "slow": (("engine",), _steps_slow),
    "reads": (("engine",), _reads_cost),
    "stall": (("trainer", "job", "gpu"), _steps_wait),
    "dram": (("trainer", "job", "gpu"), _job_dram),
    # (judged inside "hollow" and "shared", not measures of their own)
    "hollow_long": (("engine", "trainer", "job", "gpu"), _hollow_long),
    "shared_mild": (("engine", "trainer", "job", "gpu"), _shared_costs),
    "launch_alone": (("engine", "trainer", "job", "gpu"), _full("launch_alone")),
    "host_alone": (("engine", "trainer", "job", "gpu"), _full("host_alone")),
    # (judged inside "prefill": its mild strength counts only once it holds over a span)
    "prefill_mild": (("engine",), _prefill_mild)}
# measures judged over a span of their own
SUSTAINED_SPAN = {"slow": "slow_span_s", "reads": "slow_span_s", "hollow_long": "hollow_span_s",
                  "shared_mild": "shared_mild_span_s", "prefill_mild": "slow_span_s",
                  "launch_alone": "alone_span_s", "host_alone": "alone_span_s"}
SUSTAINED_SHARE = {"hollow_long": "hollow_sustained_share",  # ...and a share of their own
                   "shared_mild": "shared_mild_share", "prefill_mild": "prefill_mild_share",
                   "launch_alone": "alone_share", "host_alone": "alone_share"}
# causes measured directly (eBPF's stalled launches; /proc's CPU taken from the tree) whose
# strength stands with no cost beside it once it held over its span: strength -> measure
ALONE = {"launch_alone": "launch", "host_alone": "host"}
PERIODIC_MEASURES = ("slow", "stall")  # ...whose readings come and go within a period


def _pausing(st: SubjectState, subject: Subject, v: Values, clearing: bool) -> bool:
    """Whether a rank is off the GPU, the others waiting in a barrier, for less time than
    names it: the job's first rank (its checkpoint, its evaluation: a pause by design), or a
    rank that paused as long before and came back, for ``pause_s``; another rank (stuck:
    features._rank_off) for ``rank_hang_s``."""
    paused = v.get("paused_rank")
    if clearing or st.pause_since_mono_s is None or paused is None:
        return False
    by_design = paused == v.get("first_rank") or int(paused) in st.paused_before
    hold = t("pause_s") if by_design else t("rank_hang_s")
    return st.last_seen_mono_s - st.pause_since_mono_s < hold


def _trigger_holds(measure: str, st: SubjectState, subject: Subject, feats: Features,
                   config: DetectConfig, clearing: bool = True) -> bool:
    s, v = feats.s, feats.v
    base = st.base
    now_age = st.last_seen_mono_s - st.first_seen_mono_s
    if st.warmup_since_mono_s is not None:
        return False
    if measure in HISTOGRAM_MEASURES and not clearing and (
            now_age < t("learn_s") or (base.latency_young and measure not in TYPICAL_MEASURES)):
        return False  # a few seconds' histograms (or samples of them) are no normal to judge by
    util = v.get("util")
    if measure in ("itl", "ttft", "tokens", "queue", "slow") and not clearing and \
            s.get("surge", 0.0) >= 0.5 and st.surge_since_mono_s is not None and \
            st.last_seen_mono_s - st.surge_since_mono_s < t("surge_s"):
        return False  # arrivals beyond capacity for a while: queueing, not a stall
    if measure in LATENCY_MEASURES:
        if not clearing and (_outgrown(v) or _batch_tail(v)):
            return False
        ratio = v.get(f"{measure}_ratio")
        gate = v.get(f"{measure}_clear_gate" if clearing else f"{measure}_gate")
        factor = config.latency_clear_factor if clearing else config.latency_factor
        if ratio is None or not gate or ratio < factor:
            return False
        if (v.get("running") or 0) <= 0 and v.get("running") is not None:
            return False
        if measure == "ttft":  # a longer wait for the first token alone is demand, not harm
            # (and one request at a time with longer prompts waits on its own prompt)
            own = _alone(v) and (v.get("prompt_ratio") or 0.0) >= t("own_prompt_ratio")
            return (v.get("tokens_ratio") or 1.0) <= 0.7 and bool(v.get("demand_kept")) \
                and (clearing or not own)
        # a tail while the server makes far more tokens than its normal, each typical token
        # as fast as ever: a burst of arrivals being absorbed (their prefills), not harm
        step = v.get("step_ratio")
        absorbed = (v.get("tokens_ratio") or 0.0) >= t("itl_burst_tokens") \
            and step is not None and step < 1.4
        return clearing or not absorbed
    if measure == "tokens":
        # a quiet server's tokens/s follows its one or two requests: no collapse to judge
        if v.get("running_base") is not None and v["running_base"] < 3:  # type: ignore[operator]
            return False
        ratio = v.get("tokens_ratio")
        limit = config.clear_ratio if clearing else config.collapse_ratio
        return ratio is not None and ratio < limit + (0.0 if clearing else 1e-9) \
            and bool(v.get("demand_kept"))
    if measure == "queue":
        growth, scale = v.get("queue_growth"), v.get("queue_scale")
        if growth is None or not scale:
            return False
        # an engine at capacity queues too, producing as much as ever: only a queue that grows
        # while tokens/s fell well below its baseline is the engine's own doing
        if clearing:
            return growth >= 0.5 * scale and (v.get("tokens_ratio") or 1.0) <= 0.8
        # every token as fast as ever from a batch as large as ever: arrivals beyond its
        # capacity queue (a finish-counted tokens/s dips by itself), the engine is not slower
        step, running, running_base = v.get("step_ratio"), v.get("running"), v.get("running_base")
        if step is not None and step < 1.2 and running is not None and running_base \
                and running >= running_base:
            return False
        return growth >= scale and bool(v.get("queue_rising")) \
            and (v.get("tokens_ratio") or 1.0) <= 0.7 and s.get("running_flat", 0.0) >= 0.5
    if measure == "util":
        # the GPU less busy while the work did not shrink: it waits on something (the host)
        base_util, waiting, running = v.get("util_base"), v.get("waiting"), v.get("running")
        if util is None or base_util is None:
            return False
        drop = t("util_drop_pts") * (0.6 if clearing else 1.0)
        if base_util - util < drop:
            return False
        need = max(4.0, 0.25 * (v.get("running_base") or 0.0))
        queued = waiting is not None and v.get("waiting_base") is not None and \
            waiting - v["waiting_base"] >= (0.5 * need if clearing else need)  # type: ignore[operator]
        # (one or two requests' GPU-Util follows their own phases, a user's pauses: no
        # batch to hold the same; a queue still says so)
        same_batch = running is not None and v.get("running_base") is not None and \
            v["running_base"] >= 3 and running >= 0.9 * v["running_base"]  # type: ignore[operator]
        less_prompt = (v.get("prompt_ratio") or 1.0) <= 0.5  # less prefill work explains it
        # the same output from no larger a batch at its usual latency: nothing waited
        held = not clearing and (v.get("tokens_ratio") or 0.0) >= t("util_output_held") \
            and running is not None \
            and running <= t("util_batch_grown") * (v.get("running_base") or 0.0) \
            and max(s.get("itl", 0.0), s.get("ttft", 0.0), s.get("queue", 0.0)) < 0.3
        return not held and (queued or (same_batch and not less_prompt))
    if measure == "cpu":
        # the engine's processes get a third less CPU with the run queue over the CPUs, and
        # its output fell with demand still there: the host starves it (seen from /proc,
        # whatever the GPU reads; a stand-in or a GPU without util says nothing)
        lost = s.get("cpu_lost", 0.0) >= (0.3 if clearing else 0.5)
        if subject.kind != "engine":
            # a job (no demand to keep): its processes lose CPU on a crowded host and its GPU
            # waits for them (busy time, or its own steps, fell): the host starves it
            return lost and (s.get("util_drop", 0.0) >= (0.3 if clearing else 0.5)
                             or _output_fell(subject, v, 0.92 if clearing else 0.85))
        if (v.get("running_base") or 0) < 1:
            return False
        return lost and _output_fell(subject, v, 0.85 if clearing else 0.75)
    if measure == "launch":
        # launch calls measured (eBPF) lasting a scheduler slice, and the GPU idling for it:
        # the host-side stall is measured, so a smaller loss of busy time is enough
        base_util = v.get("util_base")
        if util is None or base_util is None or _serves_nothing(subject, v):
            return False  # (an engine serving no one: its stalls cost no one)
        drop = base_util - util
        # (a job's own counter is exact: its steps down a sixth with the launches stalled is
        # the stall's cost, though the peers' NCCL waits keep its GPU-Util where it was)
        # (stalls measured on most ticks of a minute: a cost the GPU's queue hides now; not
        # in a job's start-up, loading and compiling, however its calls read; the finding
        # stays while they came within alone_linger_s, whatever this tick reads)
        alone = _sustained_holds(st, "launch_alone", clearing) and (
            clearing or now_age >= t("job_min_age_s") + t("alone_span_s")) \
            and util >= t("alone_util_pct")
        return alone or s.get("jitter", 0.0) >= (0.5 if clearing else 0.7) and (
            drop >= t("launch_util_drop_pts") * (0.6 if clearing else 1.0)
            or s.get("harm", 0.0) >= (0.3 if clearing else 0.5)
            or (subject.kind != "engine" and _output_fell(subject, v, 0.9 if clearing else 0.85)))
    if measure == "share":
        # the requests finish at half their rate or less while tokens/s holds and every
        # token is slower: the batch's work goes to a few requests (n sequences of one)
        ratio, step = v.get("finished_ratio"), v.get("step_ratio")
        per_request = v.get("tokens_per_request_ratio")
        if ratio is None or step is None or per_request is None \
                or (v.get("running_base") or 0) < 3:
            return False
        # (longer contexts slow every token too, and show as DRAM traffic: that is the
        # bandwidth's, not a few requests'; n sequences of one prompt add little KV to read)
        # (and the output shows that step: a p50 nine times its usual while tokens/s holds
        # from a batch a third larger is a histogram's reading, not every token slower)
        return ratio <= (0.65 if clearing else 0.5) and step >= (1.4 if clearing else 1.8) \
            and per_request >= (1.6 if clearing else 2.0) and bool(v.get("demand_kept")) \
            and (v.get("dram_rise") or 0.0) < 6.0 and (clearing or _step_shows(v, step))
    if measure == "kv":
        # the pool full and work thrown away (preempted, retracted: computed again later);
        # requests that only wait for blocks are an engine at its capacity
        # (SGLang reserves room at admission and mostly holds requests back instead: a queue
        # growing with the pool all but full is the same shortage)
        full = s.get("kv_full", 0.0) >= (0.3 if clearing else 0.5)
        thrown = s.get("preempt", 0.0) >= (0.3 if clearing else 0.5)
        held_back = (v.get("kv") or 0.0) >= t("kv_full") and s.get("queue", 0.0) >= (
            0.3 if clearing else 0.5) and (clearing or bool(v.get("queue_rising")))
        return full and (thrown or held_back)
    if measure == "step":
        # every token slower while the memory traffic rose (measured, or the KV every step
        # reads: longer contexts in a fuller pool): decode at the bandwidth roofline
        ratio, rise = v.get("step_ratio"), v.get("dram_rise")
        if ratio is None or ratio < (1.6 if clearing else t("step_slow")) \
                or (not clearing and _batch_tail(v)):
            return False
        if (rise is not None and rise >= t("dram_rise_pts") * (0.6 if clearing else 1.0)) \
                or s.get("kv_read", 0.0) >= (0.3 if clearing else 0.5):
            return True
        # every token far slower than at the batch the arrivals explain, with no prefill to
        # account for it: the service itself slowed (the seed's n=8 / logprobs=20 request:
        # each step samples 160 top-k lists over the vocabulary; more requests in flight)
        # (tokens/s far above its baseline is more work arriving, whatever the step reads)
        return ratio >= (1.8 if clearing else t("step_alone")) and s.get("prefill", 0.0) < 0.5 \
            and (v.get("tokens_ratio") or 1.0) <= 1.6 and (
                clearing or _step_shows(v, ratio) or s.get("notable", 0.0) >= 0.5)
    if measure == "prompts":
        # an engine that counts its prompt seconds (llama.cpp, no latency histograms): the
        # prompts taking a far larger share of its time while tokens/s fell with demand still
        # there: the other slots' decodes wait on them.  With one request in flight there is
        # no other slot to wait: its own prompt is its time to first token, not interference
        # (the batch's mean over the last 8 ticks: a second slot that empties now and then
        # still decodes beside the prompts most of the time)
        if not clearing and (v.get("running_mean") or 0.0) < t("prompts_batch"):
            return False
        return s.get("prefill_time", 0.0) >= (0.3 if clearing else 0.5) \
            and _output_fell(subject, v, 0.9 if clearing else 0.8)
    if measure in ("stall", "idle") and subject.serves:
        return False  # a server we do not scrape: its busy time follows its unknown demand
    if measure in ("straggler", "odd") and feats.odd_gpu == v.get("paused_rank") \
            and _pausing(st, subject, v, clearing):
        return False  # the one out of step is off the GPU: a pause until it is a hang
    if measure in SUSTAINED:
        # prefill: long prompts arriving steadily stall the steps that carry their chunks (a
        # few percent of the tokens, far slower) and the first tokens behind them; one
        # pasted document or a burst of arrivals admitted is a few seconds of it.  host: a
        # contended host costs the work in whichever way the batch absorbs it.  odd, slow:
        # a mild straggler, one oversized request, read strong on some ticks only.  A job
        # that just appeared is starting up (loading, capturing graphs): not yet judged
        if subject.kind != "engine" and now_age < t("job_min_age_s") and not clearing:
            return False
        # (a saw-tooth strong on every tick holds at once, as it always did)
        if measure == "stall" and _paced(feats):
            return False
        return (measure == "stall" and _steps_wait(feats, clearing)) \
            or _sustained_holds(st, measure, clearing) \
            or (measure == "host" and _sustained_holds(st, "host_alone", clearing))
    if measure == "spec":
        # the drafts mostly rejected and the service slower for it: the GPU verifies tokens
        # it throws away (a batch growing to absorb it keeps tokens/s, not each user's rate)
        # (drafts accepted 35%+ less often is enough where every token is markedly slower
        # for it and nothing else explains that: no cut clock, no longer prompts or
        # contexts, no more work arriving; each step keeps fewer tokens, which users wait on)
        slower = (v.get("step_ratio") or 0.0) >= t("spec_mild_step") \
            and (v.get("tokens_ratio") or 1.0) <= 1.2 and max(
                s.get(x, 0.0) for x in ("clock_slow", "prefill", "kv_read", "dram_new")) < 0.5
        if s.get("spec_drop", 0.0) < (0.3 if clearing or slower else 0.5):
            return False
        # drafts almost all rejected are wasted work by themselves: each step drafts k
        # tokens and verifies them to keep one, slower than decoding without speculation
        wasted = (v.get("spec_accept") or 1.0) <= (0.2 if clearing else t("spec_wasted"))
        # each sequence keeping a quarter fewer tokens per step is every user slower, even
        # when a batch grown to absorb it keeps the GPU's tokens/s
        kept = (v.get("spec_yield") or 1.0) <= (0.8 if clearing else 0.75)
        return wasted or kept or (v.get("step_ratio") or 0.0) >= (1.2 if clearing else 1.4) \
            or (v.get("tokens_ratio") or 1.0) <= (0.85 if clearing else 0.75)
    if measure == "work":
        # fewer steps while the GPU looks as it always did is the job's own doing (an eval
        # pass, a checkpoint: the counter stops, the GPU idles or runs forward passes); fewer
        # steps *with* a GPU-side finding is an episode, unless that finding is the others
        # spinning in a barrier while one rank writes a checkpoint (a pause, _pausing)
        if _pausing(st, subject, v, clearing):
            return False
        ratio = v.get("tokens_ratio")
        if ratio is not None and ratio <= (0.88 if clearing else 0.8) \
                and s.get("hollow_match", 0.0) >= (0.3 if clearing else 0.5):
            return True  # a milder loss, with the SM share falling by as much: smaller kernels
        gpu_side = max(s.get("util_drop", 0.0), s.get("hollow_new", 0.0), s.get("sawtooth", 0.0),
                       s.get("odd", 0.0) * s.get("peers_wait", 0.0), s.get("clock_all", 0.0),
                       s.get("shared", 0.0))
        return ratio is not None and ratio <= (0.7 if clearing else t("work_drop")) \
            and (util or 0.0) >= 20 and gpu_side >= (0.2 if clearing else 0.3)
    if now_age < t("job_min_age_s") and not clearing:
        return False
    if measure == "hollow":
        # the others wait in a barrier for a rank that is off the GPU (rank 0 writing a
        # checkpoint): a pause, unless it lasts long enough to be a hang (_pausing)
        if _pausing(st, subject, v, clearing):
            return False
        if _serves_nothing(subject, v) and s.get("shared", 0.0) >= 0.5 \
                and s.get("own_drop", 0.0) >= 0.9:
            return False  # another process's tiny kernels, beside an engine serving no one
        ratio = v.get("sm_ratio")
        if util is None or util < (70.0 if clearing else t("hollow_util_pct")):
            return False
        if ratio is None:  # no SM counter: the power the busy time draws
            return s.get("hollow_power", 0.0) >= (0.3 if clearing else 0.5)
        if ratio <= (0.2 if clearing else t("hollow_sm_ratio")):
            return True
        ratio_base = base.get("sm_ratio")
        # a quarter of the SMs' share or less on nearly every tick of the subject's first
        # minute or two, its own normal as hollow or unknown: so since gputop first saw it,
        # with no fuller normal to fall from (a later phase, an eval pass, is judged against
        # the job's normal, below); not every rank of a job at once: the ranks in collectives
        if ratio <= t("hollow_sustained_ratio") * (1.2 if clearing else 1.0) \
                and not v.get("all_hollow") and (
                    clearing or now_age <= 2 * t("hollow_span_s")) and (
                    ratio_base is None or ratio_base <= t("hollow_sustained_base")) \
                and _sustained_holds(st, "hollow_long", clearing):
            return True
        if ratio_base is None or ratio_base < 0.25:
            return False
        slack = 1.3 if clearing else 1.0
        if ratio <= 0.3 and ratio <= t("hollow_relative") * ratio_base * slack:
            return True
        # half the SMs' share gone at the same util, and the card drawing far less power for
        # it: the busy time went to kernels that occupy few SMs (a loop of tiny ones)
        return ratio <= 0.45 and ratio <= 0.5 * ratio_base * slack \
            and (v.get("power_ratio") or 1.0) <= t("hollow_power_ratio") + 0.2
    if measure == "idle":
        # a job without a counter whose GPU idles a good share of its healthy busy time, for
        # long: its steps wait on something (its input, the host); busy time is its only
        # measure of work (a job with a counter is judged on that: "work")
        # (weak and slow by itself: it keeps open only an episode it opened, not another
        # finding's as its GPU-Util passes through on the way down to a job's end)
        if clearing and st.active is not None and st.active.measure != "idle":
            return False
        base_util = v.get("util_base")
        if not s.get("job_idle") or util is None or base_util is None \
                or base_util < 60 or util < 10:
            return False  # (job_idle: features' one reading of "a job without a counter")
        # (a level it ran at for a good part of its healthy window is a phase of its own,
        # one it returns to: an RL loop's rollouts between its training phases)
        return base_util - util >= t("job_idle_pts") * (0.6 if clearing else 1.0) and (
            clearing or not phase_of_its_own(base, util))
    if measure == "straggler":
        return len(subject.gpus) >= 2 and (util or 0.0) >= 50 \
            and s.get("odd", 0.0) >= (0.3 if clearing else 0.5) \
            and s.get("peers_wait", 0.0) >= (0.3 if clearing else 0.4)
    if measure == "shared":
        # another process's time slices cost the job its own SM time or its output, or (a
        # batch growing to hold tokens/s) make every step of the engine slower; an engine
        # serving no one loses nothing (its SM time and its output fell for want of requests)
        return not _serves_nothing(subject, v) and s.get("shared", 0.0) >= (
            0.3 if clearing else 0.5) and (max(
            s.get("own_drop", 0.0), s.get("work_down", 0.0), s.get("tokens_down", 0.0))
            >= (0.2 if clearing else 0.3)
            # (0.7: SM time measured; features give a newcomer known only by its memory 0.6)
            or (s.get("shared", 0.0) >= 0.7 and (v.get("step_ratio") or 0.0) >= (
                1.2 if clearing else t("shared_step_slow")))
            # (features: a saturated job's time slices taken, whatever its own reading says)
            or s.get("shared_taken", 0.0) >= (0.3 if clearing else 0.5)
            # a milder cost that lasts: a tenant that takes a tenth for minutes
            or _sustained_holds(st, "shared_mild", clearing))
    if measure == "clock":
        if (util or 0.0) < 50:
            return False
        drop = v.get("clock_drop") or 0.0  # the least-slowed of the job's busy GPUs
        reasons = s.get("throttle_new", 0.0) >= 1.0
        # a milder slowdown with its reason (thermal, HW slowdown) named by the driver costs
        # the work its clock does: the job's own rate (or, demand there, tokens/s) fell with it
        costs = _output_fell(subject, v, 0.9 if clearing else 0.85)
        # (a quarter of the clock gone under the usual "power cap" and the output with it is
        # a lowered limit or a hotter board: a capped card's healthy wobble is smaller)
        # a fault reason the card did not show healthy (thermal or HW slowdown, a power
        # brake) with its clock measurably down costs a job that has no other measure of
        # its rate that clock (a counter or tokens/s that held say it cost nothing; a
        # fan-cooled board at its temperature target is no fault: judged as any clock is)
        faulted = s.get("throttle_fault", 0.0) >= 1.0
        fault = faulted and v.get("tokens_ratio") is None
        # ...and a fault reason on a card whose work held (a memory-bound decode barely feels
        # its SM clock), every busy GPU's clock cut by more than a power-capped card wobbles:
        # the card protecting itself, its headroom gone.  Cleared at the looser bar only in
        # its own episode: a mildly warm card must not hold another episode open for good
        held_fault = faulted and drop >= (
            0.05 if clearing and st.active is not None and st.active.measure == "clock"
            else t("fault_held_clock_drop"))
        # ...and a power limit someone lowered under the one it ran with, the clock cut by as
        # much as names a slower clock at all (an admin's -pl 170 on a 350 W L40S: -18%)
        lowered = v.get("limit_lowered") is not None and v.get("tokens_ratio") is None
        return (fault and drop >= (0.02 if clearing else t("fault_clock_drop"))) or held_fault \
            or (lowered and drop >= (0.08 if clearing else t("clock_drop"))) \
            or (reasons and drop >= (0.12 if clearing else 0.2)) \
            or (reasons and costs and drop >= (0.06 if clearing else 0.08)) \
            or (costs and drop >= (0.18 if clearing else 0.25)) \
            or drop >= (0.25 if clearing else 0.35)
    return False


def _step_shows(v: Values, step_ratio: float) -> bool:
    """Every token ``step_ratio`` slower is harm the output shows: tokens/s is the batch over
    the step time, so at the batch's growth over its baseline it should read about
    batch / step.  A batch grown at as much output as ever or more pays for its size in
    longer steps (a busier service, not a slower one); output at twice what the typical
    token implies says that reading is off (a histogram's few slow buckets).  The batch is
    counted in requests: one that fans out into n sequences (a notable request, checked by
    the caller) makes it undercount, and its word is not taken."""
    tokens, running, base = v.get("tokens_ratio"), v.get("running"), v.get("running_base")
    if tokens is None or running is None or not base:
        return True
    batch = running / base
    if tokens >= 1.0 and batch >= t("step_batch_grown"):
        return False
    return tokens <= 2.0 * batch / step_ratio


def _outgrown(v: Values) -> bool:
    """The engine serves a load its baseline never saw: the batch 3x and tokens/s 2x what it
    was learned at (a service ramping up from its first few requests, a load test): a
    latency tail scaled up from a handful of sequences is no normal to judge it by, and the
    output that grew with the batch says the service keeps up."""
    running, base = v.get("running"), v.get("running_base")
    return (v.get("tokens_ratio") or 0.0) >= t("outgrown_tokens") and running is not None \
        and base is not None and running >= t("outgrown_batch") * max(base, 1.0)


def _batch_tail(v: Values) -> bool:
    """A batch emptying with no one waiting, its contexts far longer than usual: the last
    of a batch of generations (an RL rollout's, an offline job's) are its longest, and each
    of their tokens reads their whole context; slower tokens there are their length's
    cost, not a fault (a service whose contexts grow while its users stay is judged)."""
    waiting, kv, kv_base = v.get("waiting"), v.get("kv"), v.get("kv_base")
    # (the KV every step reads, the pool's use, at its normal or more: a draining batch's
    # total falls as sequences finish, and each token with it; slower tokens while it fell
    # are something else reading memory, a fault)
    return not v.get("demand_kept", 1.0) and (v.get("ctx_ratio") or 0.0) >= t(
        "tail_ctx_ratio") and waiting is not None and waiting < 1 \
        and kv is not None and kv_base is not None and kv >= kv_base


def _output_fell(subject: Subject, v: Values, limit: float) -> bool:
    """Its output fell to ``limit`` of its baseline or less: a job's own rate, an engine's
    tokens/s with demand still there (fewer requests asking is no fault)."""
    ratio = v.get("tokens_ratio")
    return ratio is not None and ratio <= limit and (
        subject.kind != "engine" or bool(v.get("demand_kept")))


# ---------------------------------------------------------------- baselines

def _feed(st: SubjectState, subject: Subject, recent: tuple[Point, ...], feats: Features,
          config: DetectConfig) -> SubjectState:
    """A healthy tick joins the subject's baseline: never while a trigger is pending or an
    episode open (the caller), while the backlog of one settles, or after a restart until
    service looks steady (a load balancer's slow start is no baseline)."""
    now = recent[-1]
    if now.time_mono_s < st.settle_until_mono_s:
        return st
    if st.warmup_since_mono_s is not None:
        if not _steady(recent, now, st.warmup_since_mono_s):
            return st
        st = replace(st, warmup_since_mono_s=None)
    learning = now.time_mono_s - st.first_seen_mono_s < t("learn_s")
    clean = _clean(feats, learning, st.base.latency_young)
    if clean or not st.base.ready or subject.kind != "engine" or not now.requests_running:
        # (an idle tick says nothing of the baseline: a quiet night's bursts are no service)
        st = replace(st, unclean_since_mono_s=None) if st.unclean_since_mono_s is not None \
            else st
    elif st.unclean_since_mono_s is None:
        st = replace(st, unclean_since_mono_s=now.time_mono_s)
    elif now.time_mono_s - st.unclean_since_mono_s >= t("stale_baseline_s"):
        # nothing fired for minutes, yet no tick was clean: the baseline, not the service, is
        # off (a few first readings of a sparse scrape); learn afresh from what runs now
        return replace(st, base=Baseline(), probation=(), unclean_since_mono_s=None,
                       first_seen_mono_s=now.time_mono_s)
    sample = _sample(subject, now, feats) if clean else None
    probation = st.probation + ((sample,) if sample is not None else ())
    base = st.base
    while probation and now.time_mono_s - probation[0].time_mono_s >= PROBATION_S:
        added = base.add(probation[0], config.baseline_window_s)
        base = added.renewed() if added is not base else base
        probation = probation[1:]
    return replace(st, base=base, probation=probation)


PROBATION_S = 1.0


def _clean(feats: Features, learning: bool = False, tail_young: bool = False) -> bool:
    """A tick that is healthy beyond doubt: no degradation signal even half on, by this
    tick's own value (a trigger smooths over ticks; the baseline must not learn an onset).
    While the subject is first ``learning`` (nothing is judged yet), what it compares against
    is a few seconds old: only the steadiness of the batch counts, or a first reading taken
    before the latency windows filled would hold every later one to itself.  A latency
    normal of fewer samples than a tail needs (``tail_young``: its first readings, taken as
    the engine ramped up) judges no tail either: an engine whose decodes always stall behind
    prefill batches (SGLang) reads 3-10x such a normal from its first minute, and holding
    every tick to it would keep the baseline from ever learning the service."""
    v, s = feats.v, feats.s
    if not v.get("batch_steady", 1.0):
        return False
    if learning:
        return True
    if v.get("demand_kept", 1.0) and (
            (v.get("tokens_ratio_now") or 1.0) < 0.7 or (v.get("tokens_ratio") or 1.0) < 0.7):
        return False  # fewer tokens while demand is there; with demand gone, the new normal
    if not tail_young:
        if any((v.get(f"{m}_ratio") or 0.0) >= 1.5 and v.get(f"{m}_gate")
               for m in LATENCY_MEASURES):
            return False
        if (v.get("itl_ratio") or 0.0) >= t("baseline_tail_ratio"):
            return False  # a tail 3x its normal, however few requests carry it, is no normal
    if (v.get("step_ratio") or 1.0) >= 1.5 or s.get("kv_read", 0.0) >= 0.5:
        return False  # every token slower, or every step reading far more KV: an onset
    if (v.get("ctx_ratio") or 1.0) >= t("ctx_onset"):
        return False  # contexts growing (a ramp learned tick by tick would hide the rest)
    if (v.get("prompt_ratio") or 1.0) >= 2.0 and ((v.get("tokens_ratio") or 1.0) < 0.9 or (
            not tail_young and (v.get("itl_ratio") or 1.0) >= 1.3)):
        return False  # a prefill burst that costs the decodes (more prompts that cost
        # nothing, as demand rises through the morning, are the new normal to learn)
    if s.get("prefill", 0.0) >= 0.5 and s.get("prefill_cost", 0.0) >= 0.5:
        return False  # longer prompts taking a fifth more of the GPU: an onset, until it costs
    if (v.get("prefill_mild") or 0.0) >= 0.5:
        return False  # somewhat longer prompts costing the decodes, not yet held over its span
        # (its strength counts once it held 30 s: learned meanwhile, it would never hold)
    if s.get("throttle_new", 0.0) >= 1.0:
        return False  # a throttle reason beyond the power cap, new: a slowdown, not normal
    if s.get("jitter", 0.0) >= 0.5 or s.get("host", 0.0) >= 0.5:
        return False  # launch calls preempted, or the host starving the engine: not normal
    return max(s.get("queue", 0.0), s.get("util_drop", 0.0), s.get("sawtooth", 0.0),
               s.get("work_down", 0.0), s.get("odd", 0.0) * s.get("peers_wait", 0.0),
               s.get("shared", 0.0), s.get("clock_all", 0.0), s.get("spec_drop", 0.0),
               s.get("hollow_match", 0.0)) < 0.5


def _steady(recent: tuple[Point, ...], now: Point, since: float) -> bool:
    """Service after a restart looks steady: running long enough, and tokens/s over the
    last 10 s neither climbing nor falling (the two halves within 25% of each other)."""
    if now.time_mono_s - since < t("restart_warmup_s"):
        return False
    first = [p.tokens_per_s for p in recent if now.time_mono_s - 10 < p.time_mono_s
             <= now.time_mono_s - 5 and p.tokens_per_s is not None]
    last = [p.tokens_per_s for p in recent if p.time_mono_s > now.time_mono_s - 5
            and p.tokens_per_s is not None]
    if not first or not last:
        return False
    a, b = sum(first) / len(first), sum(last) / len(last)
    return a > 0 and b > 0 and 0.8 <= b / a <= 1.25


def _sample(subject: Subject, now: Point, feats: Features) -> Sample | None:
    v = feats.v
    learned = {} if now.latency_stood else now.latency
    values: dict[str, float] = {}

    def put(name: str, value: float | None) -> None:
        if value is not None and math.isfinite(value):
            values[name] = float(value)

    util = v.get("util")
    busy = util is not None and util >= 5
    if busy:
        put("util", util)
        put("sm", v.get("sm"))
        put("dram", v.get("dram"))
        put("mem_ctrl", v.get("mem_ctrl"))
        put("sm_ratio", v.get("sm_ratio"))
        tensor = [now.tensor_pct[g] for g in subject.gpus if g in now.tensor_pct]
        put("tensor", sum(tensor) / len(tensor) if tensor else None)
    if subject.has_engine:
        if subject.kind == "trainer":
            put("work", work_rate_now(now))
        elif (now.tokens_per_s or 0) > 0 or (now.requests_running or 0) > 0:
            put("tokens", v.get("tokens") if now.engine_kind in FINISH_COUNTED
                else now.tokens_per_s)
            put("prompt", now.compute_prompt_tokens_per_s)
            put("prompt_len", v.get("prompt_len"))
            put("finished", now.requests_per_s)
            put("token_time", v.get("token_time"))
            put("prefill_share", v.get("prefill_share"))
        put("running", now.requests_running)
        put("waiting", now.requests_waiting)
        put("kv", now.kv_usage_ratio)
        if now.kv_usage_ratio is not None and (now.requests_running or 0) >= 1:
            put("kv_per_seq", now.kv_usage_ratio / cast(float, now.requests_running))
        put("spec_accept", v.get("spec_accept"))
        if now.preemptions_per_s is not None or now.retractions_per_s is not None:
            put("preempt", (now.preemptions_per_s or 0.0) + (now.retractions_per_s or 0.0))
        put("tree_cpu", now.tree_cpu_pct)
        put("busiest_thread", now.busiest_thread_pct)
    elif subject.pids & now.pinned_pids:
        put("tree_cpu", now.tree_cpu_pct)
        put("busiest_thread", now.pinned_thread_pct)
    if subject.has_engine or subject.pids & now.pinned_pids:
        put("involuntary", now.tree_involuntary_per_s)
    put("throttled", now.tree_throttled_share)
    put("psi", now.cpu_pressure_pct)
    put("run_queue", now.run_queue)
    put("host_cpu", now.host_cpu_pct)
    put("launch_p99", now.launch_p99_us)
    put("launch_p50", now.launch_p50_us)
    put("launch_max", now.launch_max_us)
    put("launch_stalled", now.launch_stalled_share)
    for api, p99 in now.launch_p99_by_api_us.items():
        put(f"launch_p99:{api}", p99)
    per_gpu: dict[str, dict[int, float]] = {"clock": {}, "sm": {}, "util": {}, "own_sm": {},
                                            "other_sm": {}, "power": {}, "power_limit": {},
                                            "temp": {}, "nvlink": {}}
    pids: dict[int, frozenset[int]] = {}
    for g in subject.gpus:
        if now.util_pct.get(g, 0.0) >= 40 and g in now.clock_mhz:
            per_gpu["clock"][g] = now.clock_mhz[g]
            if g in now.temp_c:  # how warm it runs loaded (its place in the chassis' airflow)
                per_gpu["temp"][g] = now.temp_c[g]
            if g in now.nvlink_mib_per_s:  # its share of the job's traffic (its place in it)
                per_gpu["nvlink"][g] = now.nvlink_mib_per_s[g]
        if now.util_pct.get(g, 0.0) >= 80 and g in now.power_w:
            per_gpu["power"][g] = now.power_w[g]  # what its busy time draws
        if g in now.power_limit_w:
            per_gpu["power_limit"][g] = now.power_limit_w[g]
        for name, attr in (("sm", "sm_active_pct"), ("util", "util_pct")):
            if g in getattr(now, attr):
                per_gpu[name][g] = getattr(now, attr)[g]
        procs = now.gpu_procs.get(g, ())
        pids[g] = frozenset(p.pid for p in procs)
        own_procs, sharers = own_and_sharers(procs, subject.pids)
        own = [p.sm_util_pct for p in own_procs if p.sm_util_pct is not None]
        other = [p.sm_util_pct for p in sharers if p.sm_util_pct is not None]
        if own:
            per_gpu["own_sm"][g] = sum(own)
        if subject.pids:
            per_gpu["other_sm"][g] = sum(other)
    if not values and not any(per_gpu.values()):
        return None
    return Sample(now.time_mono_s, values, per_gpu,
                  {g: frozenset(now.throttle.get(g, ())) for g in subject.gpus}, pids,
                  running=now.requests_running,
                  # (a reading standing between scrapes was learned when it was new: one
                  # reading 15 ticks over would outweigh the readings before it)
                  itl_p99_s=learned.get("itl", (None, None))[1],
                  itl_p50_s=learned.get("itl", (None, None))[0],
                  itl_mean_s=None if now.latency_stood else v.get("itl_mean"),
                  ttft_p99_s=learned.get("ttft", (None, None))[1])
