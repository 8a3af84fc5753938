"""A subject's healthy baseline: what its signals read while it served (or trained) normally.

Healthy ticks are sampled (every ``SAMPLE_S`` once a few are in, so a long window costs a few
dozen entries per subject, shared between the immutable states of consecutive frames) and
summarised as medians.  Latency is kept with the batch size it was seen at, so a latency is
compared with the baseline *at the same load*: a larger batch has a longer step by physics,
and a model reloaded under a load balancer's slow start learns at a tenth of the traffic.
"""

from __future__ import annotations

import bisect
import statistics
from typing import Any, cast
from dataclasses import dataclass, field

from gputop.model.thresholds import t

SAMPLE_S = 3.0  # one sample per this many seconds once FAST_SAMPLES are in
FAST_SAMPLES = 8  # the first samples are taken every tick: a baseline within seconds
MIN_SAMPLES = 3  # medians of fewer are no baseline
RENEW_SAMPLES = 5  # this many samples in a row of better service are the new normal
MEMO_MAX = 512  # answers kept per baseline, at most


@dataclass(frozen=True, slots=True)
class Sample:
    """One healthy tick of a subject, reduced to what the signatures compare."""

    time_mono_s: float
    values: dict[str, float]  # scalar signals (subject means), only those known
    # "clock", "temp" (loaded), "sm", "util", "own_sm", "other_sm", "power", "power_limit"
    per_gpu: dict[str, dict[int, float]]
    throttle: dict[int, frozenset[str]]
    pids: dict[int, frozenset[int]]  # processes seen on each GPU
    running: float | None = None
    itl_p99_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p50_s: float | None = None
    itl_mean_s: float | None = None


@dataclass(frozen=True, slots=True)
class Baseline:
    samples: tuple[Sample, ...] = ()
    # medians are taken when first asked for (a job never asks for engine medians)
    _memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)
    # what the medians are taken from, handed to the next baseline by add() and updated there
    # by the samples in and out, not built anew: each signal's values sorted, by key ("v",
    # name) or ("g", name, gpu); "pairs"; ("with_load", name); ("counts", attr).  Handed
    # over, not copied: the timeline keeps a state per tick, and with it every baseline.
    # Read with .get() only (another thread may read a baseline as it is handed over; what
    # is gone is built again from the samples)
    _carried: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def ready(self) -> bool:
        return len(self.samples) >= MIN_SAMPLES

    def _values(self, key: tuple[Any, ...]) -> list[float]:
        """The samples' values under ``key``, sorted (shared: never modified)."""
        values: list[float] | None = self._carried.get(key)
        if values is None:
            values = sorted(x for s in self.samples if (x := _value(s, key)) is not None)
            self._carried[key] = values
        return values

    def get(self, name: str) -> float | None:
        key = ("v", name)
        if key not in self._memo:
            values = self._values(key)
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

    def share_near(self, name: str, value: float, within: float) -> float:
        """The share of the samples whose ``name`` lies within ``within`` of ``value`` (0
        without samples): how much of its healthy window the subject ran at that level."""
        values = self._values(("v", name))
        if not values:
            return 0.0
        near = bisect.bisect_right(values, value + within) - bisect.bisect_left(
            values, value - within)
        return near / len(values)

    def gpu(self, name: str, gpu: int) -> float | None:
        key = ("g", name, gpu)
        if key not in self._memo:
            self._memo[key] = _median(self._values(key))
        value: float | None = self._memo[key]
        return value

    def _counts(self, attr: str) -> dict[int, dict[Any, int]]:
        """How many samples saw each item of a per-GPU set (``throttle``: its reasons,
        ``pids``: its processes), by GPU."""
        key = ("counts", attr)
        counts: dict[int, dict[Any, int]] | None = self._carried.get(key)
        if counts is None:
            counts = {}
            for s in self.samples:
                _count(counts, getattr(s, attr), 1)
            self._carried[key] = counts
        return counts

    @property
    def usual_throttle(self) -> dict[int, frozenset[str]]:
        """Reasons seen in a third or more of the samples, per GPU: a healthy loaded card's
        normal (an H100 at its power cap reports "power cap" all day)."""
        if "usual" not in self._memo:
            need = max(1, len(self.samples) // 3)
            self._memo["usual"] = {g: frozenset(r for r, n in per.items() if n >= need)
                                   for g, per in self._counts("throttle").items()}
        usual: dict[int, frozenset[str]] = self._memo["usual"]
        return usual

    @property
    def known_pids(self) -> dict[int, frozenset[int]]:
        if "known" not in self._memo:
            self._memo["known"] = {g: frozenset(pid for pid, n in per.items() if n > 0)
                                   for g, per in self._counts("pids").items()}
        known_pids: dict[int, frozenset[int]] = self._memo["known"]
        return known_pids

    @property
    def pairs(self) -> dict[str, tuple[tuple[float | None, float], ...]]:
        """(batch size, p99) of each latency's healthy samples, by name."""
        pairs: dict[str, tuple[tuple[float | None, float], ...]] | None = \
            self._carried.get("pairs")
        if pairs is None:
            pairs = {name: tuple(pair for s in self.samples
                                 if (pair := _pair(s, attr)) is not None)
                     for name, attr in LATENCIES}
            self._carried["pairs"] = pairs
        return pairs

    def add(self, sample: Sample, window_s: float) -> Baseline:
        """This baseline with ``sample`` (when one is due), older samples beyond the window
        dropped."""
        if self.samples and len(self.samples) >= FAST_SAMPLES \
                and sample.time_mono_s - self.samples[-1].time_mono_s < SAMPLE_S:
            return self
        horizon = sample.time_mono_s - window_s
        kept = tuple(s for s in self.samples if s.time_mono_s > horizon)
        added = Baseline(kept + (sample,))
        gone = self.samples[:len(self.samples) - len(kept)]
        # (handed over, whatever happens next: this baseline keeps only its answers)
        carried = {key: value for key in tuple(self._carried)
                   if (value := self._carried.pop(key, None)) is not None}
        if all(s.time_mono_s <= horizon for s in gone):  # (the oldest went, in order)
            for key, value in carried.items():
                moved = _carry(key, value, gone, sample)
                if moved is not None:
                    added._carried[key] = moved
        return added

    def renewed(self, recent: int = RENEW_SAMPLES) -> Baseline:
        """Only the newest ``recent`` samples, when they all show better service than the
        rest (more tokens/s, shorter latency): an engine warming up as gputop starts made
        the older ones, and the better state is the normal to hold the engine to."""
        if len(self.samples) < recent + MIN_SAMPLES:
            return self
        new, old = self.samples[-recent:], Baseline(self.samples[:-recent])
        mine = self._carried.get("pairs")
        if mine is not None:  # (the older samples' pairs: all but the newest ones')
            old._carried["pairs"] = {
                name: pairs[:len(pairs) - sum(1 for s in new if _pair(s, attr) is not None)]
                for (name, attr), pairs in zip(LATENCIES, mine.values())}
        tokens = old.get("tokens")
        if not tokens:
            return self
        if all(s.values.get("tokens", 0.0) >= 1.2 * tokens for s in new):
            return Baseline(new)  # faster
        # or quicker at no less output (a lull between bursts is quicker with fewer tokens/s,
        # and its calm is no normal to hold the next burst to); the old tail only then
        if not all(s.itl_p99_s is not None and s.values.get("tokens", 0.0) >= 0.9 * tokens
                   for s in new):
            return self
        itl = old.latency_at("itl", None)
        quicker = itl and all(s.itl_p99_s <= 0.7 * itl for s in new)  # type: ignore[operator]
        return Baseline(new) if quicker else self

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
        key = ("latency", name, running)  # (a batch gauge repeats its values tick to tick)
        if key in self._memo:
            memo: float | None = self._memo[key]
            return memo
        value = self._latency_at(name, running)
        if len(self._memo) < MEMO_MAX:  # (a baseline held through a long episode stays small)
            self._memo[key] = value
        return value

    def _with_load(self, name: str) -> list[tuple[float, float]]:
        """(batch size, p99) of ``name``'s samples with a batch, by batch size.
        A latency was observed in a batch of one or more, whatever the gauge read at the
        tick (a request that came and went between scrapes): an idle server's normal is a
        batch of one, scaled to the batch it serves now."""
        key = ("with_load", name)
        with_load: list[tuple[float, float]] | None = self._carried.get(key)
        if with_load is None:
            with_load = sorted(_loaded(pair) for pair in self.pairs.get(name, ())
                               if pair[0] is not None)
            self._carried[key] = with_load
        return with_load

    def _latency_at(self, name: str, running: float | None) -> float | None:
        pairs = self.pairs.get(name, ())
        if len(pairs) < MIN_SAMPLES:
            return None
        # a tail's usual range is its upper quartile: bursts that are part of the traffic
        # (a p99 over 5 s moves with each one) are not above the baseline
        level = _upper_or_median if name in ("itl", "ttft") else statistics.median
        if running is None or running <= 0:
            return level([v for _, v in pairs])
        with_load = self._with_load(name)
        if len(with_load) < MIN_SAMPLES:
            return level([v for _, v in pairs])
        match = t("load_match")
        # (the samples by load: only those near the bounds are tested one by one)
        first = bisect.bisect_left(with_load, running / match * (1 - 1e-9), key=_load)
        last = bisect.bisect_right(with_load, running * match * (1 + 1e-9), key=_load)
        near = [v for r, v in with_load[first:last] if r / match <= running <= r * match]
        if len(near) >= MIN_SAMPLES:
            return level(near)
        if running > with_load[-1][0]:
            top = [(r, v) for r, v in with_load if r >= with_load[-1][0] / match]
            r_ref = statistics.median(r for r, _ in top)
            base = level([v for _, v in top])
            if name == "ttft":  # a prefill's time grows with the batch it joins, at most linearly
                return base * running / r_ref
            exponent = t("itl_load_exponent") if name == "itl" else t("itl50_load_exponent")
            scaled: float = base * (running / r_ref) ** exponent
            return scaled
        low = [v for r, v in with_load if r <= with_load[0][0] * match]
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


# each latency's name in the baseline and its sample's attribute
LATENCIES = (("itl", "itl_p99_s"), ("ttft", "ttft_p99_s"), ("itl50", "itl_p50_s"),
             ("itlmean", "itl_mean_s"))


def _pair(sample: Sample, attr: str) -> tuple[float | None, float] | None:
    """(batch size, latency) of a sample with a latency ``attr`` over 0."""
    value: float | None = getattr(sample, attr)
    return (sample.running, value) if value is not None and value > 0 else None


def _value(sample: Sample, key: tuple[Any, ...]) -> float | None:
    if key[0] == "v":
        return sample.values.get(key[1])
    per_gpu = sample.per_gpu.get(key[1])
    return per_gpu.get(key[2]) if per_gpu is not None else None


def _carry(key: Any, value: Any, gone: tuple[Sample, ...], new: Sample) -> Any:
    """A carried structure (see ``Baseline._carried``) without the ``gone`` samples and with
    ``new``; None where it cannot be (the next ask builds it from the samples)."""
    if key == "pairs":
        return {name: pairs[sum(1 for s in gone if _pair(s, attr) is not None):]
                + tuple(pair for pair in (_pair(new, attr),) if pair is not None)
                for (name, attr), pairs in zip(LATENCIES, value.values())}
    if key[0] == "with_load":
        return _moved_pairs(value, gone, new, dict(LATENCIES)[key[1]])
    if key[0] == "counts":
        counts = {g: dict(per) for g, per in value.items()}
        for sample in gone:
            _count(counts, getattr(sample, key[1]), -1)
        _count(counts, getattr(new, key[1]), 1)
        return {g: {x: n for x, n in per.items() if n} for g, per in counts.items()}
    return _moved(value, gone, new, key)


def _moved(values: list[float], gone: tuple[Sample, ...], new: Sample,
           key: tuple[Any, ...]) -> list[float] | None:
    """``values`` (sorted) without those of the ``gone`` samples and with ``new``'s, sorted;
    None where one is not found (a NaN sorts nowhere): the next ask sorts them anew."""
    out = values.copy()
    for sample in gone:
        x = _value(sample, key)
        if x is None:
            continue
        i = bisect.bisect_left(out, x)
        if i == len(out) or out[i] != x:
            return None
        del out[i]
    x = _value(new, key)
    if x is not None:
        if x != x:  # NaN
            return None
        bisect.insort(out, x)
    return out


def _count(counts: dict[int, dict[Any, int]], sets: dict[int, frozenset[Any]],
           by: int) -> None:
    for g, items in sets.items():
        per = counts.setdefault(g, {})
        for x in items:
            per[x] = per.get(x, 0) + by


def _loaded(pair: tuple[float | None, float]) -> tuple[float, float]:
    """A (batch size, latency) pair with its batch of one or more."""
    return max(cast(float, pair[0]), 1.0), pair[1]


def _load(pair: tuple[float, float]) -> float:
    return pair[0]


def _moved_pairs(with_load: list[tuple[float, float]], gone: tuple[Sample, ...], new: Sample,
                 attr: str) -> list[tuple[float, float]] | None:
    """``_with_load``'s sorted pairs without the ``gone`` samples' and with ``new``'s; None
    where one is not found (a NaN sorts nowhere)."""
    pairs = with_load.copy()
    for sample in gone:
        pair = _pair(sample, attr)
        if pair is None or pair[0] is None:
            continue
        loaded = _loaded(pair)
        i = bisect.bisect_left(pairs, loaded)
        if i == len(pairs) or pairs[i] != loaded:
            return None
        del pairs[i]
    pair = _pair(new, attr)
    if pair is not None and pair[0] is not None:
        loaded = _loaded(pair)
        if loaded[0] != loaded[0] or loaded[1] != loaded[1]:  # NaN
            return None
        bisect.insort_right(pairs, loaded)
    return pairs


def _median(values: list[float]) -> float | None:
    if len(values) < MIN_SAMPLES:
        return None
    values = sorted(values)  # (a sorted list sorts in one pass; the caller's is not touched)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


