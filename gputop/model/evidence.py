"""Evidence as data: which signal, its value, its healthy baseline, where and when.

The detector produces these; ``model/words.py`` turns them into text for the banner, the
report, snapshot JSON and the exporter, so every surface says the same thing and a finding
seen several times is merged ("3 requests with n=8 finished 06:26:14-06:26:34") instead of
repeated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gputop.model.thresholds import t


@dataclass(frozen=True, slots=True)
class Evidence:
    signal: str  # see words.EVIDENCE_TEXT for the vocabulary
    value: float | None
    baseline: float | None = None
    unit: str = ""
    gpu: int | None = None
    when_wall_s: float | None = None  # first seen
    until_wall_s: float | None = None  # last seen, when merged from several sightings
    count: float = 1.0  # sightings merged (requests, for a notable request)
    detail: str = ""  # a qualifier: reason names, a thread's name, a request's size
    others: tuple[int, ...] = ()  # the GPUs compared against (peers), when any

    @property
    def key(self) -> tuple[str, int | None, str]:
        """What makes two sightings the same finding (a notable request's size tells
        requests apart; other details are this sighting's numbers)."""
        return self.signal, self.gpu, self.detail if self.signal.startswith("notable") else ""


def _deviation(e: Evidence) -> float | None:
    """How far a sighting is from its healthy baseline (log of the ratio, either way), or
    None where it has no baseline to be far from."""
    if e.value is None or not e.baseline or e.baseline <= 0:
        return None
    return abs(math.log(max(e.value, 1e-9) / e.baseline))


def _peak(before: Evidence, e: Evidence) -> Evidence:
    """The sighting to keep: the newest, unless it is much closer to its baseline than the
    one before (peak_keep), so that an episode's evidence shows its peak, not the recovering
    tick it was last seen on (a CUDA-graph phase's "SM active 0.3%" must not end as "25%");
    the newest where either has no baseline."""
    far_before, far_now = _deviation(before), _deviation(e)
    if far_before is None or far_now is None or far_now >= t("peak_keep") * far_before:
        return e
    return before  # (merge sets its span and count)


def merge(old: tuple[Evidence, ...], new: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
    """``old`` updated with ``new``: a finding seen again keeps its first time, the value of
    its peak (furthest from its baseline) and widens its time span; sightings of a request
    add up."""
    by_key = {e.key: e for e in old}
    order = [e.key for e in old]
    for e in new:
        before = by_key.get(e.key)
        if before is None:
            by_key[e.key] = e
            order.append(e.key)
            continue
        first = before.when_wall_s if before.when_wall_s is not None else e.when_wall_s
        last = max((t for t in (before.until_wall_s, before.when_wall_s, e.until_wall_s,
                                e.when_wall_s) if t is not None), default=None)
        count = before.count + e.count if e.signal.startswith("notable") else e.count
        by_key[e.key] = replace(_peak(before, e), when_wall_s=first, until_wall_s=last,
                                count=count)
    return tuple(by_key[k] for k in order)
