"""Numbers as people read them, shared by the model's explanations, the CLI and the screen."""

from __future__ import annotations


def size_text(value_bytes: int | float | None, digits: int = 2) -> str:
    """Bytes in the unit that fits: 512 B, 4.75 MiB, 14.96 GiB (a 5 MB model is not 0.00
    GiB); a whole number of the unit is written without decimals (128 KiB)."""
    if value_bytes is None:
        return "n/a"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value_bytes) >= scale:
            whole = value_bytes % scale == 0
            return f"{value_bytes / scale:,.{0 if whole else digits}f} {unit}"
    return f"{value_bytes:.0f} B"


def duration_us(value_us: float | None) -> str:
    if value_us is None:
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


def command_line(argv: list[str]) -> str:
    """A process's arguments as one line: a process that renames itself (vLLM's
    "VLLM::EngineCore") pads its command line with spaces or NULs, which are dropped."""
    return " ".join(part for part in (a.replace("\0", " ").strip() for a in argv) if part)
