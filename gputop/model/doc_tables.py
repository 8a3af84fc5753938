"""The diagnosis's tables as markdown, from the code itself: docs/diagnosis.md embeds them
and a test checks the document is current, so the documented signatures and thresholds
are the ones that run."""

from __future__ import annotations

from gputop.model import words
from gputop.model.signatures import SIGNATURES
from gputop.model.thresholds import TABLE

BEGIN, END = "<!-- generated: {} -->", "<!-- end generated: {} -->"


def signatures_table() -> str:
    lines = ["| cause | what it means | requires (each group: any of) | supports | vetoed by "
             "(weight) | names |", "|---|---|---|---|---|---|"]
    for sig in SIGNATURES:
        requires = " and ".join("(" + " or ".join(words.signal_text(x) for x in group) + ")"
                                for group in sig.requires)
        supports = ", ".join(words.signal_text(x) for x in sig.supports) or "-"
        vetoes = ", ".join(f"{words.signal_text(x)} ({w:g})" for x, w in sig.vetoes) or "-"
        names = {"subject": "its GPUs", "odd": "the odd GPU", "shared": "the shared GPU",
                 "throttled": "the slowed GPUs", "dram": "the saturated GPUs",
                 "stalled": "the stalled GPU",
                 "launch": "the GPUs whose processes' launches stalled"}[sig.where]
        lines.append(f"| `{sig.cause}` | {sig.text} | {requires} | {supports} | {vetoes} | "
                     f"{names} |")
    return "\n".join(lines)


def thresholds_table() -> str:
    lines = ["| name | value | why |", "|---|---|---|"]
    for name, th in TABLE.items():
        value = f"{th.value / 2**20:g} MiB" if name.endswith("_bytes") else f"{th.value:g}"
        lines.append(f"| `{name}` | {value} | {th.why} |")
    return "\n".join(lines)


TABLES = {"signatures": signatures_table, "thresholds": thresholds_table}


def render(text: str) -> str:
    """``text`` with every generated block replaced by the current table."""
    for name, make in TABLES.items():
        begin, end = BEGIN.format(name), END.format(name)
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            _, tail = rest.split(end, 1)
            text = f"{head}{begin}\n{make()}\n{end}{tail}"
    return text


if __name__ == "__main__":  # python -m gputop.model.doc_tables: refresh docs/diagnosis.md
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "diagnosis.md"
    doc.write_text(render(doc.read_text()))
    print(f"updated {doc}")
