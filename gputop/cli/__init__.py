"""Command line: the live dashboard (default) and its subcommands, one module each family
with its parser beside it.

- ``dashboard.py``: the top-level parser (the dashboard's options, ``gputop --help``'s
  quick start and keys) and ``cmd_live``;
- ``config.py``: ``config`` and the settings layered under the command line;
- ``snapshot.py``; ``record.py``: ``record``, ``replay``, ``export``, ``report``;
  ``serve.py``; ``fleet.py``; ``tools.py``: ``kv``, ``capture-engine``, ``doctor``;
- ``options.py``: the argparse types and the source options they share; ``common.py``:
  the session (``_setup``: the feed ``gputop/feed.py`` composes), a demo's lead-in, the
  terminal, signals.

Each hands over to a session, a cursor (``gputop/cursor.py``) or its own module.  Bad
input ends in one line on stderr and exit status 2, never a traceback.  This module
assembles the parser (``build_parser``), rewrites the few argument forms argparse cannot
take, and dispatches (``main``, the ``gputop`` entry point); the names other code and
tests use are re-exported here.
"""

from __future__ import annotations

import sys

from gputop.cli import config, fleet, record, serve, snapshot, tools
from gputop.cli.common import (_demo_lead_in, _detect_config, _exit_on_signals,
                               _prepare_terminal, _setup, stop_on_signals)
from gputop.cli.config import _apply_config, _config_parsers, cmd_config
from gputop.cli.dashboard import QUICK_START, _epilog, cmd_live, dashboard_parser, view_settings
from gputop.cli.fleet import cmd_fleet
from gputop.cli.options import EXIT_USAGE, HOLD_MAX_S, MODEL_OVERRIDE_HELP, UsageError, _Parser
from gputop.cli.record import (_model_patch, _open_recording, cmd_export, cmd_record, cmd_replay,
                               cmd_report)
from gputop.cli.serve import cmd_serve
from gputop.cli.snapshot import cmd_snapshot
from gputop.cli.tools import cmd_capture_engine, cmd_doctor, cmd_kv
from gputop.units import printable

__all__ = [
    "EXIT_USAGE", "HOLD_MAX_S", "MODEL_OVERRIDE_HELP", "QUICK_START", "SUBCOMMANDS",
    "TIME_OPTIONS", "UsageError", "_Parser", "_apply_config", "_config_parsers",
    "_demo_before_subcommand", "_demo_lead_in", "_detect_config", "_epilog",
    "_exit_on_signals", "_host_root", "_join_negative_times", "_model_patch",
    "_open_recording", "_prepare_terminal", "_setup", "build_parser", "cmd_capture_engine",
    "cmd_config", "cmd_doctor", "cmd_export", "cmd_fleet", "cmd_kv", "cmd_live", "cmd_record",
    "cmd_replay", "cmd_report", "cmd_serve", "cmd_snapshot", "main", "stop_on_signals",
    "view_settings",
]


def build_parser() -> _Parser:
    """The dashboard's parser with every subcommand's, in the order ``--help`` lists them."""
    parser = dashboard_parser()
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    config.add_parser(sub)
    snapshot.add_parser(sub)
    record.add_record_parser(sub)
    serve.add_parser(sub)
    fleet.add_parser(sub)
    record.add_reader_parsers(sub)
    tools.add_parsers(sub)
    return parser


TIME_OPTIONS = ("--from", "--to")


def _join_negative_times(argv: list[str]) -> list[str]:
    """``--to -5m`` as ``--to=-5m``: argparse takes any word starting with '-' (but a plain
    number) for an option, so the documented relative times need joining first."""
    from gputop.record.timespec import RELATIVE

    out: list[str] = []
    for arg in argv:
        if out and out[-1] in TIME_OPTIONS and RELATIVE.match(arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


SUBCOMMANDS = ("config", "capture-engine", "snapshot", "record", "serve", "fleet", "replay",
               "export", "report", "kv", "doctor")


def _demo_before_subcommand(argv: list[str]) -> list[str]:
    """``--demo config`` as ``--demo=cycle config``: the scenario is optional, and argparse
    would take a subcommand's name for it ("unknown scenario 'config'")."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--demo" and i + 1 < len(argv) and argv[i + 1] in SUBCOMMANDS:
            arg = "--demo=cycle"
        out.append(arg)
    return out


def _host_root(args) -> None:
    """--host-root (or GPUTOP_HOST_ROOT) for every reader of processes, before any source;
    nothing to do for what reads no process of this machine (the demo, a remote host, a
    recording)."""
    from gputop import hostroot

    if getattr(args, "demo", None) is not None or getattr(args, "remote", None) or \
            args.command in ("replay", "export", "report", "fleet", "kv", "config"):
        return
    try:
        hostroot.configure(getattr(args, "host_root", None))
    except hostroot.HostRootError as exc:
        raise UsageError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    argv = _demo_before_subcommand(_join_negative_times(sys.argv[1:] if argv is None else argv))
    try:
        args = build_parser().parse_args(argv)
        effective = _apply_config(args, argv)
        _host_root(args)
        if args.command == "config":
            return cmd_config(args, effective)
        if args.command == "snapshot":
            return cmd_snapshot(args)
        if args.command == "doctor":
            return cmd_doctor(args)
        if args.command == "kv":
            return cmd_kv(args)
        if args.command == "capture-engine":
            return cmd_capture_engine(args)
        if args.command in ("record", "replay", "export", "report", "serve", "fleet"):
            return {"record": cmd_record, "replay": cmd_replay, "export": cmd_export,
                    "report": cmd_report, "serve": cmd_serve,
                    "fleet": cmd_fleet}[args.command](args)
        return cmd_live(args)
    except UsageError as exc:
        print(f"gputop: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gputop snapshot | head`
        return 0
