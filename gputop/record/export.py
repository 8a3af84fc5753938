"""Export a recording: CSV (one row per frame per GPU), JSON lines of snapshots, Perfetto.

Every format is derived by the same model as the live view: frames are folded
through a session's bounded timeline, so an exported row equals what the screen showed.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from gputop.model import signals
from gputop.model.derive import View, snapshot_dict
from gputop.record.store import Recording, RecordingError
from gputop.record.timespec import parse_time
from gputop.units import iso_time, printable

VRAM_COLUMNS = ["weights_bytes", "kv_pool_bytes", "kv_used_bytes", "other_bytes",
                "other_processes_bytes", "free_bytes", "unsplit_bytes", "overflow_bytes"]
# numbers come from the signal catalogue (model/signals.py): a new signal is a new column
# a GPU row also carries the replica on that GPU (a data-parallel engine or one model of
# several behind the endpoint): its name and its own engine signals, prefixed replica_
CSV_COLUMNS = (["time", "time_wall_s", "gpu", "name"] + [s.name for s in signals.GPU]
               + VRAM_COLUMNS + ["throttle"] + [s.name for s in signals.ENGINE]
               + ["launch_p50_us", "launch_p99_us", "alert", "replica"]
               + [f"replica_{s.name}" for s in signals.REPLICA])


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


def _worst_launch(view: View) -> tuple[float | None, float | None]:
    launches = [a.stats for a in view.launch if "Launch" in a.api and a.stats.p99_us is not None]
    if not launches:
        return None, None
    worst = max(launches, key=lambda s: s.p99_us)
    return worst.p50_us, worst.p99_us


def csv_rows(view: View) -> Iterator[dict]:
    """One row per GPU per frame; a frame without GPUs (no NVML: an engine alone) still
    gives one row, with the GPU columns empty, so the engine's numbers are kept."""
    engine = view.engine
    p50, p99 = _worst_launch(view)
    common = {
        "time": iso_time(view.frame.time_wall_s, "seconds"), "time_wall_s": view.frame.time_wall_s,
        **{signal.name: signal.read(engine) for signal in signals.ENGINE},
        "launch_p50_us": p50, "launch_p99_us": p99,
    }
    if not view.gpus:
        yield {**common, "alert": view.alert.kind if view.alert else ""}
    replicas = engine.replicas if engine is not None else ()
    for g in view.gpus:
        s, vram = g.sample, (g.vram.as_dict() if g.vram else {})
        replica = next((r for r in replicas if s.index in r.gpus), None)
        yield {
            **common, "gpu": s.index, "name": s.name,
            **{signal.name: signal.read(g) for signal in signals.GPU},
            **vram, "throttle": "|".join(s.throttle),
            "alert": view.alert_for(s.index).kind if view.alert_covers(s.index) else "",
            **({"replica": replica.sample.replica,
                **{f"replica_{signal.name}": signal.read(replica)
                   for signal in signals.REPLICA}} if replica is not None else {}),
        }


def perfetto_events(recording: Recording, all_views: Iterator[View]) -> Iterator[dict]:
    """Chrome/Perfetto trace events: a counter track per metric per GPU, instants for
    episodes.  One "process" per GPU plus one for the engine."""
    named: set[int] = set()
    open_episode = None
    for view in all_views:
        ts = view.frame.time_wall_s * 1e6
        for g in view.gpus:
            pid = g.sample.index + 1
            if pid not in named:
                named.add(pid)
                yield {"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": f"GPU {g.sample.index} {g.sample.name}"}}
            tracks = {"GPU-Util %": g.sample.util_gpu_pct, "SM active %": g.sample.sm_active_pct,
                      "DRAM bw %": g.sample.dram_bw_pct}
            if g.vram:
                tracks["VRAM GiB"] = {k: round(v / 2**30, 3) for k, v in g.vram.parts()}
            for name, value in tracks.items():
                if value is None:
                    continue
                args = value if isinstance(value, dict) else {"value": value}
                yield {"ph": "C", "name": name, "pid": pid, "ts": ts, "args": args}
        if view.engine and view.engine.tokens_per_s is not None:
            if 0 not in named:
                named.add(0)
                yield {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "engine"}}
            yield {"ph": "C", "name": "tokens/s", "pid": 0, "ts": ts,
                   "args": {"generation": view.engine.tokens_per_s,
                            "prompt": view.engine.prompt_tokens_per_s or 0}}
        p50, p99 = _worst_launch(view)
        if p99 is not None:
            yield {"ph": "C", "name": "launch p99 us", "pid": 0, "ts": ts, "args": {"value": p99}}
        alert = view.alert
        if alert is not None and open_episode is None:
            open_episode = alert
            yield {"ph": "i", "s": "g", "name": f"episode: {alert.headline}", "pid": 0,
                   "ts": alert.start_wall_s * 1e6,
                   "args": {"evidence": list(alert.evidence),
                            "suspects": [c for c, _ in alert.suspects]}}
        elif alert is None and open_episode is not None:
            yield {"ph": "i", "s": "g", "name": "episode ended", "pid": 0, "ts": ts}
            open_episode = None


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
