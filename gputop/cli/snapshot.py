"""``gputop snapshot``: the derived state once, as JSON (``export/snapshot.py``'s
contract), from the newest View of a live cursor."""

from __future__ import annotations

import json

from gputop.cli.common import _demo_lead_in, _setup
from gputop.cli.options import UsageError, _add_source_options, _positive_int
from gputop.export.snapshot import snapshot_dict


def add_parser(sub) -> None:
    snap = sub.add_parser("snapshot", help="print the derived state once, as JSON")
    snap.add_argument("--json", action="store_true", default=True,
                      help="JSON output (the default and only format)")
    snap.add_argument("--samples", type=_positive_int, default=2,
                      help="samples to take before printing, so rates exist (default 2)")
    _add_source_options(snap, suppress=True)


def cmd_snapshot(args) -> int:
    from gputop.sources.base import SourceError

    _demo_lead_in(args, args.samples - 1)  # the last sample is "now"
    session, pin = _setup(args)
    session.open()
    try:
        if args.demo is not None:  # simulated time needs no waiting: -d apart, at once
            session.ticks(args.demo_lead_frames + 1)
        else:
            session.run(max_frames=args.samples)
    except SourceError as exc:
        raise UsageError(f"--remote: {exc}") from None
    finally:
        session.close()
    from gputop.cursor import LiveCursor

    view = LiveCursor(session).view_at(pin=pin)
    if view is None:  # the sampling ended before a frame (one line, not a traceback)
        raise UsageError("snapshot: no frame was taken")
    print(json.dumps(snapshot_dict(view, session.label), indent=2))
    return 0
