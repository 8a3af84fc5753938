"""Numbers as people read them, shared by the model's explanations, the CLI and the screen."""

from __future__ import annotations

import datetime as dt
import math


def iso_time(time_wall_s: float, timespec: str = "milliseconds") -> str:
    """A recorded wall time as ISO 8601 in UTC (the snapshot's milliseconds; the CSV's
    ``timespec="seconds"``): from the frame, never the clock now."""
    return dt.datetime.fromtimestamp(time_wall_s, dt.UTC).isoformat(timespec=timespec)


def size_text(value_bytes: int | float | None, digits: int = 2) -> str:
    """Bytes in the unit that fits: 512 B, 4.75 MiB, 14.96 GiB (a 5 MB model is not 0.00
    GiB); a whole number of the unit is written without decimals (128 KiB)."""
    if value_bytes is None or not math.isfinite(value_bytes):
        return "n/a"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value_bytes) >= scale:
            whole = value_bytes % scale == 0
            return f"{value_bytes / scale:,.{0 if whole else digits}f} {unit}"
    return f"{value_bytes:.0f} B"


def duration_us(value_us: float | None) -> str:
    if value_us is None or not math.isfinite(value_us):
        return "n/a"
    if value_us >= 1_000_000:
        return f"{value_us / 1e6:.2f} s"
    if value_us >= 1000:
        return f"{value_us / 1000:.1f} ms"
    return f"{value_us:.0f} us" if value_us >= 10 else f"{value_us:.1f} us"


def seconds_text(value_s: float | None) -> str:
    return "n/a" if value_s is None else duration_us(value_s * 1e6)


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters at a word boundary, with an ellipsis."""
    if len(text) <= width:
        return text
    cut = text[: max(1, width - 1)]
    space = cut.rfind(" ")
    if space >= width // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


MAX_COMMAND_LINE = 4096  # characters kept of a command line (another user's: up to 2 MB)


def command_line(argv: list[str]) -> str:
    """A process's arguments as one line: a process that renames itself (vLLM's
    "VLLM::EngineCore") pads its command line with spaces or NULs, which are dropped;
    cut at MAX_COMMAND_LINE characters (every frame holds it)."""
    line = " ".join(part for part in (a.replace("\0", " ").strip() for a in argv) if part)
    return line if len(line) <= MAX_COMMAND_LINE else line[: MAX_COMMAND_LINE - 1] + "…"


# bidirectional overrides and isolates can make a command line read as something else
_BIDI = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E,
         0x200F, 0x061C}


def _visible(ch: str) -> str:
    code = ord(ch)
    if code < 0x20:
        return "^" + chr(code + 0x40)  # ESC -> ^[, BEL -> ^G, as cat -v shows them
    if code == 0x7F:
        return "^?"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (Python's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if 0x80 <= code < 0xA0 or code in _BIDI or 0xD800 <= code <= 0xDFFF:
        return f"<U+{code:04X}>"
    return ch


def printable(text: str) -> str:
    """``text`` safe to put on a terminal, and to encode as UTF-8: control characters (an
    OSC title or clipboard sequence in another user's command line, an endpoint's label, a
    recording) and direction overrides are shown as visible escapes instead of being
    obeyed, and a lone surrogate (a process name that is not UTF-8, ``gpu\\xffjob``, as
    psutil reads it) as the byte it stands for: passed through, it made every encoder
    downstream fail (prometheus_client closed each scrape with nothing sent)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() and ord(ch) not in _BIDI else _visible(ch)
                   for ch in text)


def plural(count: int | float, word: str, many: str | None = None) -> str:
    """ "1 GPU", "2 GPUs", "1 process", "3 processes" (``many`` for irregular plurals)."""
    if count == 1:
        return f"{count:g} {word}" if isinstance(count, float) else f"{count} {word}"
    if many is None:
        many = word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{count:g} {many}" if isinstance(count, float) else f"{count:,} {many}"
