"""Evidence as data: which signal, its value, its healthy baseline, where and when.

The detector produces these; ``model/words.py`` turns them into text for the banner, the
report, snapshot JSON and the exporter, so every surface says the same thing and a finding
seen several times is merged ("3 requests with n=8 finished 06:26:14-06:26:34") instead of
repeated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


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


def merge(old: tuple[Evidence, ...], new: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
    """``old`` updated with ``new``: a finding seen again keeps its first time, takes the new
    value and widens its time span; sightings of a request add up."""
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
        by_key[e.key] = replace(e, when_wall_s=first, until_wall_s=last, count=count)
    return tuple(by_key[k] for k in order)
