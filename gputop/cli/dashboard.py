"""The live dashboard, the default command: the top-level parser (its view options, the
quick start and key list of ``gputop --help``) and ``cmd_live``, which the fleet's Enter
runs too."""

from __future__ import annotations

import argparse

from gputop import __version__, exitguard
from gputop.cli.common import _demo_lead_in, _exit_on_signals, _prepare_terminal, _setup
from gputop.cli.options import _Parser, UsageError, _add_source_options, _pane, _pane_list, _theme, _window


QUICK_START = """\
quick start:
  gputop --demo                    no GPU needed: simulated GPUs, the storm first
  gputop                           every NVIDIA GPU of this machine (NVML)
  gputop --engine http://127.0.0.1:8000/metrics
                                   a vLLM / SGLang / TGI / llama.cpp server's tokens/s,
                                   latency and KV cache beside its GPU (found by itself
                                   when the engine runs on this machine)
  gputop --match 'vllm serve'      pin every pane to a process tree (or p in the dashboard)
  sudo gputop --ebpf full          host-side CUDA launch latency from eBPF (root)
  gputop serve                     headless /metrics for Prometheus on 127.0.0.1:9464
  gputop --remote HOST:9464        another host's dashboard, from its gputop serve
  gputop fleet --prometheus http://HOST:9090
                                   every GPU of many hosts, worst first
  gputop record run.gtrec          record frames; gputop replay run.gtrec plays them back
  gputop doctor                    what works on this machine and how to fix the rest
"""


def _epilog() -> str:
    """Everything a user needs without the README: quick start, keys, settings, exits."""
    from gputop.tui.keys import KEYS  # no Textual: the keys are plain data

    import textwrap

    keys = "\n".join(textwrap.fill(what, 79, initial_indent=f"  {key:<18} ",
                                   subsequent_indent=" " * 21) for key, what in KEYS)
    return (QUICK_START + "\nkeys in the dashboard (? lists them with every metric's "
            "definition,\ne explains the focused pane):\n" + keys + "\n\n"
            "The banner lights when GPU-Util stays >= 90% while tokens/s falls to <= 50% of\n"
            "its baseline or the engine's latency p99 rises to >= 2x its baseline; it names the\n"
            "evidence and the likely cause. Unknown values read n/a (reason), never 0.\n\n"
            "settings: command line > GPUTOP_* environment > $XDG_CONFIG_HOME/gputop/config.toml\n"
            "  (~/.config/gputop/config.toml, or GPUTOP_CONFIG) > defaults; 'gputop config\n"
            "  --print' shows each one, where it came from and its variable.\n"
            "NO_COLOR=1 or --no-color: no colour at all; alarms in reverse video.\n"
            "exit status: 0 done, 1 doctor found no readable GPU, 2 bad input or nothing to\n"
            "  read (one line on stderr), 130 interrupted.\n"
            "each command has its own help: gputop serve --help, gputop fleet --help, ...")


def dashboard_parser() -> _Parser:
    """The top-level parser: the dashboard's options; the subcommands are added to it."""
    parser = _Parser(prog="gputop", description="What an NVIDIA GPU is really doing: GPU-Util "
                     "next to the signals that explain it\n(SM activity, tokens/s, the VRAM "
                     "split, launch latency, host CPU).", epilog=_epilog(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gputop {__version__}")
    parser.add_argument("--no-color", action="store_true",
                        help="no colour (as NO_COLOR=1): alarms in reverse video")
    parser.add_argument("--record", metavar="FILE", help="record while showing the dashboard "
                        "(r toggles recording too)")
    view = parser.add_argument_group("view (also in the config file: gputop config --print)")
    view.add_argument("--theme", type=_theme, default="dark",
                      help="colours: dark, light, colorblind, high-contrast (T cycles them)")
    view.add_argument("--readonly", action="store_true",
                      help="no actions on processes: the k / F9 signal menu is refused")
    view.add_argument("--no-mouse", dest="mouse", action="store_false",
                      help="leave the mouse to the terminal (its own text selection)")
    view.add_argument("--pane", type=_pane, default="1", help="the pane shown first (1-8)")
    view.add_argument("--zoom", action="store_true", help="start with that pane zoomed")
    view.add_argument("--hide", type=_pane_list, default=[], metavar="5,6",
                      help="panes left out of the grid")
    view.add_argument("--all-gpus", action="store_true",
                      help="panes 1-2 show every GPU, one line each (a toggles)")
    view.add_argument("--window", type=_window, default=60.0, metavar="SECONDS",
                      help="the plots' time window (default 60; + and - change it)")
    _add_source_options(parser)
    return parser


def view_settings(args):
    from gputop.tui.view_settings import ViewSettings

    return ViewSettings(theme=args.theme, readonly=args.readonly, mouse=args.mouse,
                        pane=args.pane, zoom=args.zoom, hidden=tuple(args.hide),
                        all_gpus=args.all_gpus, window_s=args.window,
                        config_path=getattr(args, "config_path", None))


def cmd_live(args) -> int:
    _demo_lead_in(args)
    session, pin = _setup(args)
    _prepare_terminal(args)
    from gputop.record.store import RecordingError
    from gputop.tui.app import GputopApp  # textual is imported only for the TUI

    if args.record:
        try:
            session.record(args.record, args.max_size)
        except RecordingError as exc:
            raise UsageError(str(exc)) from None
    session.open()
    if args.demo is not None:  # the lead-in is history already: the first screen shows it
        session.ticks(args.demo_lead_frames)
    from gputop.cursor import LiveCursor

    cursor = LiveCursor(session, kind="remote" if getattr(args, "remote", None) else "live")
    app = GputopApp(session, interval_s=args.delay, pin=pin, record_max_bytes=args.max_size,
                    view=view_settings(args), cursor=cursor)
    if getattr(args, "start_gpu", None) is not None:  # from the fleet: the row's GPU first
        app.gpu_index = args.start_gpu
    app.exit_guard = True
    _exit_on_signals(app)
    app.run(mouse=args.mouse)
    exitguard.arm(app.return_code or 0, app.release)  # interpreter shutdown must not hang
    return app.return_code or 0
