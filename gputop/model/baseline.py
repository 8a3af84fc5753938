"""A subject's healthy baseline: what its signals read while it served (or trained) normally.

Healthy ticks are sampled (every ``SAMPLE_S`` once a few are in, so a long window costs a few
dozen entries per subject, shared between the immutable states of consecutive frames) and
summarised as medians.  Latency is kept with the batch size it was seen at, so a latency is
compared with the baseline *at the same load*: a larger batch has a longer step by physics,
and a model reloaded under a load balancer's slow start learns at a tenth of the traffic.
"""

from __future__ import annotations

import statistics
from typing import Any, cast
from dataclasses import dataclass, field

from gputop.model.thresholds import t

SAMPLE_S = 3.0  # one sample per this many seconds once FAST_SAMPLES are in
FAST_SAMPLES = 8  # the first samples are taken every tick: a baseline within seconds
MIN_SAMPLES = 3  # medians of fewer are no baseline
RENEW_SAMPLES = 5  # this many samples in a row of better service are the new normal


@dataclass(frozen=True, slots=True)
class Sample:
    """One healthy tick of a subject, reduced to what the signatures compare."""

    time_mono_s: float
    values: dict[str, float]  # scalar signals (subject means), only those known
    per_gpu: dict[str, dict[int, float]]  # "clock", "sm", "util", "own_sm", "other_sm"
    throttle: dict[int, frozenset[str]]
    pids: dict[int, frozenset[int]]  # processes seen on each GPU
    running: float | None = None
    itl_p99_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p50_s: float | None = None


@dataclass(frozen=True, slots=True)
class Baseline:
    samples: tuple[Sample, ...] = ()
    # medians are taken when first asked for (a job never asks for engine medians)
    _memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def ready(self) -> bool:
        return len(self.samples) >= MIN_SAMPLES

    def get(self, name: str) -> float | None:
        key = ("v", name)
        if key not in self._memo:
            values = [s.values[name] for s in self.samples if name in s.values]
            self._memo[key] = _upper(values) if name in SPIKY else _median(values)
        value: float | None = self._memo[key]
        return value

    def high_before(self, name: str, until_mono_s: float, rank: int = 3) -> float | None:
        """The ``rank``-th highest healthy value of ``name`` sampled before ``until_mono_s``
        (None with fewer samples): a level the subject has run at for a while, such as a
        phase it returns to (an RL job's rollouts between training steps), is no onset."""
        values = sorted((s.values[name] for s in self.samples
                         if s.time_mono_s < until_mono_s and name in s.values), reverse=True)
        return values[rank - 1] if len(values) >= rank else None

    def gpu(self, name: str, gpu: int) -> float | None:
        key = ("g", name, gpu)
        if key not in self._memo:
            self._memo[key] = _median([s.per_gpu[name][gpu] for s in self.samples
                                       if name in s.per_gpu and gpu in s.per_gpu[name]])
        value: float | None = self._memo[key]
        return value

    @property
    def usual_throttle(self) -> dict[int, frozenset[str]]:
        """Reasons seen in a third or more of the samples, per GPU: a healthy loaded card's
        normal (an H100 at its power cap reports "power cap" all day)."""
        if "usual" not in self._memo:
            seen: dict[int, dict[str, int]] = {}
            for s in self.samples:
                for g, reasons in s.throttle.items():
                    per = seen.setdefault(g, {})
                    for reason in reasons:
                        per[reason] = per.get(reason, 0) + 1
            need = max(1, len(self.samples) // 3)
            self._memo["usual"] = {g: frozenset(r for r, n in per.items() if n >= need)
                                   for g, per in seen.items()}
        usual: dict[int, frozenset[str]] = self._memo["usual"]
        return usual

    @property
    def known_pids(self) -> dict[int, frozenset[int]]:
        if "known" not in self._memo:
            known: dict[int, frozenset[int]] = {}
            for s in self.samples:
                for g, pids in s.pids.items():
                    known[g] = known.get(g, frozenset()) | pids
            self._memo["known"] = known
        known_pids: dict[int, frozenset[int]] = self._memo["known"]
        return known_pids

    @property
    def pairs(self) -> dict[str, tuple[tuple[float | None, float], ...]]:
        """(batch size, p99) of each latency's healthy samples, by name."""
        if "pairs" not in self._memo:
            self._memo["pairs"] = {
                name: tuple((s.running, getattr(s, attr)) for s in self.samples
                            if getattr(s, attr) is not None and getattr(s, attr) > 0)
                for name, attr in (("itl", "itl_p99_s"), ("ttft", "ttft_p99_s"),
                                   ("itl50", "itl_p50_s"))}
        pairs: dict[str, tuple[tuple[float | None, float], ...]] = self._memo["pairs"]
        return pairs

    def add(self, sample: Sample, window_s: float) -> Baseline:
        """This baseline with ``sample`` (when one is due), older samples beyond the window
        dropped."""
        if self.samples and len(self.samples) >= FAST_SAMPLES \
                and sample.time_mono_s - self.samples[-1].time_mono_s < SAMPLE_S:
            return self
        horizon = sample.time_mono_s - window_s
        return Baseline(tuple(s for s in self.samples if s.time_mono_s > horizon) + (sample,))

    def renewed(self, recent: int = RENEW_SAMPLES) -> Baseline:
        """Only the newest ``recent`` samples, when they all show better service than the
        rest (more tokens/s, shorter latency): an engine warming up as gputop starts made
        the older ones, and the better state is the normal to hold the engine to."""
        if len(self.samples) < recent + MIN_SAMPLES:
            return self
        new, old = self.samples[-recent:], Baseline(self.samples[:-recent])
        tokens, itl = old.get("tokens"), old.latency_at("itl", None)
        faster = tokens and all(s.values.get("tokens", 0.0) >= 1.2 * tokens for s in new)
        # (quicker at no less output: a lull between bursts is quicker with fewer tokens/s,
        # and its calm is no normal to hold the next burst to)
        quicker = itl and tokens and all(
            s.itl_p99_s is not None and s.itl_p99_s <= 0.7 * itl
            and s.values.get("tokens", 0.0) >= 0.9 * tokens for s in new)
        return Baseline(new) if faster or quicker else self

    @property
    def latency_young(self) -> bool:
        """Latency samples there, but too few to judge by: a tail's normal is its upper
        quartile, and of fewer than UPPER_MIN samples that is their median (a lull in the
        first seconds at 2 s ticks).  An engine without histograms has none: not young."""
        return 0 < len(self.pairs.get("itl", ())) < UPPER_MIN

    def latency_at(self, name: str, running: float | None) -> float | None:
        """The healthy p99 of ``name`` ("itl" or "ttft") at a batch of ``running``: the
        median of samples within ``load_match`` of it; above every sample, the nearest ones
        scaled by the batch-size allowance; below every sample, the smallest batch's."""
        pairs = self.pairs.get(name, ())
        if len(pairs) < MIN_SAMPLES:
            return None
        # a tail's usual range is its upper quartile: bursts that are part of the traffic
        # (a p99 over 5 s moves with each one) are not above the baseline
        level = _upper_or_median if name in ("itl", "ttft") else statistics.median
        # a latency was observed in a batch of one or more, whatever the gauge read at the
        # tick (a request that came and went between scrapes): an idle server's normal is
        # a batch of one, scaled to the batch it serves now
        with_load = [(max(r, 1.0), v) for r, v in pairs if r is not None]
        if running is None or running <= 0 or len(with_load) < MIN_SAMPLES:
            return level([v for _, v in pairs])
        match = t("load_match")
        near = [v for r, v in with_load if r / match <= running <= r * match]
        if len(near) >= MIN_SAMPLES:
            return level(near)
        loads = sorted(r for r, _ in with_load)
        if running > loads[-1]:
            top = [(r, v) for r, v in with_load if r >= loads[-1] / match]
            r_ref = statistics.median(r for r, _ in top)
            base = level([v for _, v in top])
            if name == "ttft":  # a prefill's time grows with the batch it joins, at most linearly
                return base * running / r_ref
            exponent = t("itl_load_exponent") if name == "itl" else t("itl50_load_exponent")
            scaled: float = base * (running / r_ref) ** exponent
            return scaled
        low = [v for r, v in with_load if r <= loads[0] * match]
        return level(low)


# signals whose healthy range is wide by nature: their baseline is the upper quartile
SPIKY = ("prompt",)


UPPER_MIN = 8  # an upper quartile of fewer samples is their maximum: the median instead


def _upper(values: list[float]) -> float | None:
    """The upper quartile (of at least UPPER_MIN values; of fewer, the median)."""
    if len(values) < UPPER_MIN:
        return _median(values)
    values = sorted(values)
    return values[(3 * len(values)) // 4]


def _upper_or_median(values: list[float]) -> float:
    """The upper quartile, or the median of a subset too small to have one."""
    # of UPPER_MIN values or more, _upper is a quartile, never None
    return cast(float, _upper(values)) if len(values) >= UPPER_MIN else statistics.median(values)


def _median(values: list[float]) -> float | None:
    if len(values) < MIN_SAMPLES:
        return None
    values.sort()
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


