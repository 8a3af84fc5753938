"""Engine latency histograms: per-interval deltas of Prometheus histograms and their quantiles.

A frame keeps an engine's histograms cumulative, as scraped.  The difference of two
readings is what happened in between (reset-safe: a histogram whose count went down was
restarted, so the newer reading is the whole interval).  Quantiles follow Prometheus'
``histogram_quantile``: linear interpolation inside the bucket that holds the rank, the
highest finite bound when the rank falls in the +Inf bucket.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from gputop.model.thresholds import t
from gputop.schema import EngineHistogram


@dataclass(frozen=True, slots=True)
class HistDelta:
    """Observations in one interval: counts per bucket (not cumulative), the last one
    being everything above the highest finite bound."""

    upper_bounds: tuple[float, ...]
    counts: tuple[float, ...]  # len(upper_bounds) + 1
    total: float
    sum: float

    @property
    def mean(self) -> float | None:
        return self.sum / self.total if self.total > 0 else None


def _buckets(hist: EngineHistogram) -> tuple[float, ...]:
    """Per-bucket counts (+Inf last) from a cumulative histogram."""
    counts, previous = [], 0.0
    for cumulative in hist.cumulative:
        counts.append(max(0.0, cumulative - previous))
        previous = max(previous, cumulative)
    counts.append(max(0.0, hist.count - previous))
    return tuple(counts)


def delta(previous: EngineHistogram | None, current: EngineHistogram) -> HistDelta | None:
    """What ``current`` observed since ``previous`` (None when the layouts differ)."""
    now = _buckets(current)
    if previous is None or previous.upper_bounds != current.upper_bounds \
            or current.count < previous.count:
        if previous is not None and previous.upper_bounds != current.upper_bounds:
            return None
        return HistDelta(current.upper_bounds, now, max(0.0, current.count), current.sum)
    before = _buckets(previous)
    counts = tuple(max(0.0, a - b) for a, b in zip(now, before))
    return HistDelta(current.upper_bounds, counts, sum(counts), max(0.0, current.sum - previous.sum))


def merge(deltas: Iterable[HistDelta]) -> HistDelta | None:
    """The sum of deltas with the same layout (others are skipped); None when empty."""
    merged: HistDelta | None = None
    for d in deltas:
        if merged is None:
            merged = d
        elif d.upper_bounds == merged.upper_bounds:
            merged = HistDelta(merged.upper_bounds,
                               tuple(a + b for a, b in zip(merged.counts, d.counts)),
                               merged.total + d.total, merged.sum + d.sum)
    return merged


def _holding(d: HistDelta, rank: float) -> tuple[int, float, float] | None:
    """(index, lower bound, observations below it) of the finite bucket that holds the
    ``rank``-th observation; None when it lies beyond the highest finite bound."""
    seen, lower = 0.0, 0.0
    for k, (bound, count) in enumerate(zip(d.upper_bounds, d.counts)):
        if count > 0 and seen + count >= rank:
            return k, lower, seen
        seen += count
        lower = bound
    return None


def quantile(d: HistDelta | None, q: float) -> float | None:
    """Prometheus-style quantile of an interval's observations; None when there were none."""
    if d is None or d.total <= 0 or not d.upper_bounds:
        return None
    rank = q * d.total
    found = _holding(d, rank)
    if found is None:
        return d.upper_bounds[-1]
    k, lower, seen = found
    bound = d.upper_bounds[k]
    if bound <= 0:
        return bound
    return lower + (bound - lower) * max(0.0, rank - seen) / d.counts[k]


def median_and_p99(d: HistDelta) -> tuple[float | None, float | None]:
    """(p50, p99) of an interval's observations.  A steady step time sits in one bucket, and
    interpolating inside it puts every reading at the bucket's middle (in the first bucket,
    at a fraction of it): a step time that crosses a bound (9.5 ms to 10.5 ms over vLLM's
    10 ms bound) would read as 5 ms to 17.5 ms, a threefold slowdown that never happened.
    Where the bucket holding the median holds most observations, the median is their mean
    instead: the exact sum less the other buckets' (each at its middle), kept in the bucket.
    A step time straddling a bound (10 ms +- 2 over vLLM's 10 ms) splits between two
    buckets, the median in one or the other as the split moves, and the middle of a bucket
    is far from values clustered at its bound (5.8 ms against 16 ms read for the same 10 ms
    tokens, a threefold slowdown): where the larger neighbour holds `straddle_share` of the
    observations and the two `straddle_held`, the median is the two buckets' exact mean,
    kept in the median's bucket.  (Two modes in adjacent buckets, 12 ms steps and a quarter
    at 40 ms, read as their mean, 19 ms, and the reading jumps as the neighbour's share
    crosses a fifth: both left as they are, measured across the corpora.)"""
    p50, p99 = quantile(d, 0.5), quantile(d, 0.99)
    found = _holding(d, 0.5 * d.total) if p50 is not None else None
    if found is None:
        return p50, p99
    at, lower, _seen = found
    near = [k for k in (at - 1, at + 1) if 0 <= k < len(d.upper_bounds)]
    beside = max(near, key=lambda k: d.counts[k], default=None)
    group = (at, beside) if beside is not None \
        and d.counts[beside] >= t("straddle_share") * d.total \
        and d.counts[at] + d.counts[beside] >= t("straddle_held") * d.total else (at,)
    held = sum(d.counts[k] for k in group)
    if held < 0.5 * d.total:
        return p50, p99
    lows = (0.0,) + d.upper_bounds
    highs = d.upper_bounds + (d.upper_bounds[-1],)  # (+Inf: at least the highest bound)
    others = sum(count * (low + high) / 2 for k, (count, low, high)
                 in enumerate(zip(d.counts, lows, highs)) if k not in group)
    inside = (d.sum - others) / held
    if not math.isfinite(inside):  # a sum beyond floats (merged huge readings): interpolate
        return p50, p99
    return min(max(inside, lower), d.upper_bounds[at]), p99


def count_above(d: HistDelta | None, threshold: float) -> float:
    """Observations above ``threshold``, interpolating inside the bucket that holds it (the
    same linear assumption as ``quantile``); those beyond the last bound all count."""
    if d is None:
        return 0.0
    total, lower = 0.0, 0.0
    for bound, count in zip(d.upper_bounds + (math.inf,), d.counts):
        if lower >= threshold or bound == math.inf:
            total += count
        elif bound > threshold:
            total += count * (bound - threshold) / (bound - lower)
        lower = bound
    return total


def large_values(d: HistDelta | None, threshold: float) -> tuple[float, str] | None:
    """(how many observations may be >= ``threshold``, how big) for a parameter histogram
    such as vLLM's ``request_params_n``.  The size is exact when every other observation
    sits in the lowest bucket (``n`` = 1 for all the others): the sum then gives it away
    (and an exact value below ``threshold`` is no finding); otherwise it is the range of
    the highest bucket that holds one, "6-10"."""
    if d is None or d.total <= 0 or not d.upper_bounds:
        return None
    lowers = (0.0,) + d.upper_bounds
    uppers = d.upper_bounds + (math.inf,)
    big = [(lo, hi, c) for lo, hi, c in zip(lowers, uppers, d.counts) if c > 0 and hi >= threshold]
    if not big:
        return None
    how_many = sum(c for _, _, c in big)
    others = d.total - how_many - d.counts[0]
    if how_many == 1 and others <= 0 and big[0][0] > 0:
        exact = d.sum - d.counts[0] * d.upper_bounds[0]
        lo, hi, _ = big[0]
        if lo < exact <= hi + 1e-9:
            return (1.0, f"{exact:g}") if exact >= threshold else None
    lo, hi, _ = big[-1]
    size = f"{math.floor(lo) + 1:g}-{hi:g}" if math.isfinite(hi) else f"> {lo:g}"
    return how_many, size
