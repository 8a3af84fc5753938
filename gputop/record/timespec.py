"""Times a user types: "10:32", "10:32:05", "-5m", "+30s", "+1h30m", "2024-05-01T10:32"."""

from __future__ import annotations

import datetime as dt
import re

RELATIVE = re.compile(r"^([+-])((?:\d+(?:\.\d+)?[hms]?)+)$")
PART = re.compile(r"(\d+(?:\.\d+)?)([hms]?)")
UNIT_S = {"h": 3600, "m": 60, "s": 1, "": 1}
HELP = "use 10:32, 10:32:05, -5m, +30s, +1h30m or 2024-05-01T10:32"


def parse_duration(text: str) -> float:
    """'2h', '90m', '45s', '1h30m', '300' -> seconds (> 0)."""
    text = text.strip().lower()
    if not text or not re.fullmatch(r"(?:\d+(?:\.\d+)?[hms]?)+", text):
        raise ValueError(f"cannot read duration {text!r}: use 2h, 90m, 45s or 1h30m")
    seconds = sum(float(n) * UNIT_S[u] for n, u in PART.findall(text))
    if seconds <= 0:
        raise ValueError(f"duration must be > 0, got {text!r}")
    return seconds


def parse_size(text: str) -> int:
    """'500MB', '2G', '100k', '1048576' -> bytes (> 0)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*", text.lower())
    if not match:
        raise ValueError(f"cannot read size {text!r}: use 500MB, 2GB or 100k")
    number, unit = float(match.group(1)), match.group(2)
    size = int(number * {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[unit])
    if size <= 0:
        raise ValueError(f"size must be > 0, got {text!r}")
    return size


def parse_time(text: str, plus_base_s: float, minus_base_s: float, day_of_s: float) -> float:
    """Wall seconds for ``text``.  "+X" counts from ``plus_base_s``, "-X" from
    ``minus_base_s``; a clock time is on the local day of ``day_of_s`` (or the next day
    when that is earlier than ``day_of_s``, for recordings that cross midnight)."""
    text = text.strip()
    match = RELATIVE.match(text)
    if match:
        seconds = sum(float(n) * UNIT_S[u] for n, u in PART.findall(match.group(2)))
        return plus_base_s + seconds if match.group(1) == "+" else minus_base_s - seconds
    clock = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?", text)
    if clock:
        hour, minute = int(clock.group(1)), int(clock.group(2))
        second = float(clock.group(3) or 0)
        if hour > 23 or minute > 59 or second >= 60:
            raise ValueError(f"cannot read time {text!r}: {HELP}")
        day = dt.datetime.fromtimestamp(day_of_s)
        when = day.replace(hour=hour, minute=minute, second=int(second),
                           microsecond=int((second % 1) * 1e6))
        if when.timestamp() < day_of_s - 1:
            when += dt.timedelta(days=1)
        return when.timestamp()
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise ValueError(f"cannot read time {text!r}: {HELP}") from None
