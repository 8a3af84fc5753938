"""Recordings: ``gputop record`` (headless) writes one; ``replay`` (the dashboard over a
recording's cursor), ``export`` (CSV, JSON lines, Perfetto) and ``report`` (a text
summary) read one, each optionally with ``--model`` to derive KV again."""

from __future__ import annotations

import sys
import time

from gputop import exitguard
from gputop.cli.common import (_detect_config, _exit_on_signals, _prepare_terminal, _setup,
                               stop_on_signals)
from gputop.cli.dashboard import view_settings
from gputop.cli.options import (MODEL_OVERRIDE_HELP, UsageError, _add_source_options, _duration,
                                _positive_int)
from gputop.units import plural, printable


def add_record_parser(sub) -> None:
    record = sub.add_parser("record", help="record frames to a file, headless (works under nohup)")
    record.add_argument("file", metavar="FILE")
    record.add_argument("--duration", type=_duration, default=None, metavar="2h",
                        help="stop after this long (e.g. 90m, 2h, 1h30m)")
    _add_source_options(record, suppress=True)


def add_reader_parsers(sub) -> None:
    """replay, export and report: what reads a recording."""
    replay = sub.add_parser("replay", help="open a recording in the dashboard")
    replay.add_argument("file", metavar="FILE")
    replay.add_argument("--model", metavar="PATH_OR_ID", help=MODEL_OVERRIDE_HELP)
    export = sub.add_parser("export", help="export a recording as CSV, JSON lines or Perfetto")
    export.add_argument("file", metavar="FILE")
    export.add_argument("--format", choices=["csv", "jsonl", "perfetto"], required=True)
    export.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="output file ('-' for standard output)")
    export.add_argument("--from", dest="from_time", metavar="T",
                        help="start: 10:32, +5m (after the start), -5m (before the end)")
    export.add_argument("--to", dest="to_time", metavar="T", help="end, same forms")
    export.add_argument("--pid", type=_positive_int, dest="export_pid", default=None,
                        help="only this process and its recorded children")
    export.add_argument("--model", metavar="PATH_OR_ID", help=MODEL_OVERRIDE_HELP)
    export.add_argument("--force", action="store_true",
                        help="replace OUT if it exists (never the recording itself)")
    report = sub.add_parser("report", help="a short text summary of a recording")
    report.add_argument("file", metavar="FILE")
    report.add_argument("--model", metavar="PATH_OR_ID", help=MODEL_OVERRIDE_HELP)


def cmd_record(args) -> int:
    """Headless recording until --duration, Ctrl-C, SIGTERM or SIGHUP (an SSH drop)."""
    import signal

    from gputop.record.store import RecordingError

    session, _pin_in_frames = _setup(args)  # a recording keeps every process; pin in replay
    try:
        recorder = session.record(args.file, args.max_size)
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    deadline = None if args.duration is None else time.monotonic() + args.duration

    def check(_frame) -> None:
        if recorder.error is not None or (deadline is not None and time.monotonic() >= deadline):
            session.stop()

    session.subscribe(check)
    interrupted = stop_on_signals(session.stop)
    print(f"gputop: recording {session.label} to {printable(args.file)} every {args.delay:g}s "
          f"(Ctrl-C stops; cap {args.max_size / 2**20:.0f} MiB)", file=sys.stderr)
    session.open()
    try:
        session.run()
    finally:
        session.close()
    print(f"gputop: {plural(recorder.frames_written, 'frame')}, "
          f"{recorder.size_bytes() / 1024:.0f} KiB "
          f"in {printable(args.file)}"
          + (f" ({recorder.frames_capped} oldest dropped for the cap)"
             if recorder.frames_capped else ""), file=sys.stderr)
    if recorder.error is not None:
        raise UsageError(recorder.error)
    # Ctrl-C saved the recording, but says so the shell's way (128 + SIGINT); TERM and
    # HUP are how a service manager or a dropped SSH session ask it to stop: a clean 0
    return 130 if signal.SIGINT in interrupted else 0


def _open_recording(path: str, model: str | None = None):
    from gputop.record.store import Recording, RecordingError

    try:
        recording = Recording(path)
        if model:
            recording.frame_patch = _model_patch(model)
        count = recording.count()
        if count == 0:
            raise RecordingError(f"{path} holds no frames yet")
        if next(recording.frames(), None) is None:
            raise RecordingError(f"{path}: none of its {count} frames can be read (damaged)")
        recording.skipped_frames = 0  # counted again by whoever reads them all
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    return recording


def cmd_replay(args) -> int:
    recording = _open_recording(args.file, args.model)
    _prepare_terminal(args)
    from gputop.tui.replay import ReplayApp

    app = ReplayApp(recording, detect_config=_detect_config(args), view=view_settings(args))
    app.exit_guard = True
    _exit_on_signals(app)
    app.run(mouse=args.mouse)
    exitguard.arm(app.return_code or 0, app.release)
    return app.return_code or 0


def cmd_export(args) -> int:
    from gputop.cursor import RecordingCursor
    from gputop.record.export import export
    from gputop.record.store import RecordingError

    recording = _open_recording(args.file, args.model)
    try:
        count = export(RecordingCursor(recording, _detect_config(args)), args.format,
                       args.output, args.from_time, args.to_time, pid=args.export_pid,
                       force=args.force)
    except (RecordingError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    if count == 0:
        raise UsageError(f"no frame of {args.file} could be exported "
                         f"({recording.skipped_frames} damaged)")
    if args.output != "-":
        print(f"gputop: exported {plural(count, 'frame')} to {printable(args.output)}",
              file=sys.stderr)
    return 0


def _model_patch(model: str):
    """A frame patch that reads the recording's engine with this model (one line if the
    model cannot be read)."""
    from gputop.model import kv
    from gputop.sources.modelinfo import load

    try:
        info = load(model)
    except kv.ConfigError as exc:
        raise UsageError(f"--model {model}: {exc}") from None
    return lambda frame: kv.with_model(frame, info.config, info.weights_bytes, info.weights_source)


def cmd_report(args) -> int:
    from gputop.cursor import RecordingCursor
    from gputop.record.report import report
    from gputop.record.store import RecordingError

    recording = _open_recording(args.file, args.model)
    try:
        text = report(RecordingCursor(recording, _detect_config(args)))
        print("\n".join(printable(line) for line in text.split("\n")))
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    return 0
