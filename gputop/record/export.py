"""Export a recording: CSV (one row per frame per GPU), JSON lines of snapshots, Perfetto.

Every format is derived by the same model as the live view: frames are folded
through a session's bounded timeline, so an exported row equals what the screen showed.
The formats themselves are ``gputop/export/``'s (csv_rows, snapshot, perfetto); this
module picks the range, the output file and the format.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from gputop.export.csv_rows import CSV_COLUMNS, csv_rows
from gputop.export.perfetto import perfetto_events
from gputop.export.snapshot import snapshot_dict
from gputop.model.derive import View
from gputop.record.store import Recording, RecordingError
from gputop.record.timespec import parse_time
from gputop.units import printable

class RecordingViews(Protocol):
    """What export and report read a recording through: its cursor
    (``gputop.cursor.RecordingCursor``, made by the command line), so nothing here
    reaches up to the session."""

    recording: Recording

    def views(self, from_seq: int | None = None, to_seq: int | None = None,
              pin: tuple[tuple[int, ...], str | None] | None = None) -> Iterator[View]: ...


def seq_range(recording: Recording, from_text: str | None, to_text: str | None):
    """(first seq, last seq) to export; (None, None) for all of it.  By frame order, not
    time order: a recording whose wall clock stepped back (an NTP correction) keeps every
    frame (before, the whole range came out empty: "exported 0 frames", exit 0)."""
    span = recording.time_range()
    if span is None:
        raise RecordingError(f"{recording.path} holds no frames")
    if not from_text and not to_text:
        return None, None
    first, last = span
    low = parse_time(from_text, first, last, first) if from_text else first
    high = parse_time(to_text, first, last, first) if to_text else last
    if high < low:
        raise ValueError(f"--to ({to_text}) is before --from ({from_text})")
    from_seq, to_seq = recording.seq_span(low, high)
    if from_seq is None:
        raise ValueError(f"no frame between --from ({from_text or 'the start'}) and --to "
                         f"({to_text or 'the end'})")
    return from_seq, to_seq


@contextmanager
def _output(path: str, source: Recording, force: bool = False):
    """Standard output, or a new file: created 0600 (an export holds other users' command
    lines, as the recording does), never through a symbolic link, never over an existing
    file unless ``force``, and never over the recording being read."""
    if path == "-":
        yield sys.stdout
        return
    if os.path.exists(path) and os.path.samefile(path, source.path):
        raise ValueError(f"{path} is the recording being exported: it would be destroyed")
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | \
        (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise ValueError(f"{path} exists: choose another name, or --force to replace it") \
            from None
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", 40):
            raise ValueError(f"{path} is a symbolic link: not followed") from None
        raise
    with open(fd, "w", newline="") as handle:
        yield handle


def export(cursor: RecordingViews, fmt: str, output: str, from_text: str | None = None,
           to_text: str | None = None, pid: int | None = None, force: bool = False) -> int:
    """Write ``fmt`` to ``output``; with ``pid`` only that process tree (from the recorded
    per-process lists), the card totals kept for context.  Returns the frame count."""
    recording = cursor.recording
    from_seq, to_seq = seq_range(recording, from_text, to_text)
    count = 0

    def counted(it):
        nonlocal count
        for view in it:
            count += 1
            yield view

    pin = ((pid,), None) if pid is not None else None
    all_views = counted(cursor.views(from_seq, to_seq, pin=pin))
    with _output(output, recording, force) as out:
        if fmt == "csv":
            writer = csv.DictWriter(out, CSV_COLUMNS)
            writer.writeheader()
            for view in all_views:  # strings from outside reach a terminal via `-o -`
                writer.writerows({k: printable(v) if isinstance(v, str) else v
                                  for k, v in r.items()} for r in csv_rows(view))
        elif fmt == "jsonl":
            label = f"replay:{recording.path.name}"
            for view in all_views:
                out.write(json.dumps(snapshot_dict(view, label)) + "\n")
        else:
            out.write('{"displayTimeUnit": "ms", "traceEvents": [\n')
            first = True
            for event in perfetto_events(recording, all_views):
                out.write(("" if first else ",\n") + json.dumps(event))
                first = False
            out.write("\n]}\n")
    return count
