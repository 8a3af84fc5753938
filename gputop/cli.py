"""Command line: the live dashboard (default) and its subcommands.

``config``, ``snapshot``, ``record``, ``serve``, ``fleet``, ``replay``, ``export``,
``report``, ``kv``, ``doctor`` and ``capture-engine``: each parses its options here and
hands over to a session (``_setup``: the feed ``gputop/feed.py`` composes), a cursor
(``gputop/cursor.py``) or its own module.  Bad input ends in one line on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import sys
import time

from gputop import __version__, exitguard
from gputop.config import DEFAULT_LISTEN
from gputop.export.snapshot import snapshot_dict
from gputop.model.detect import DetectConfig
from gputop.record.timespec import parse_duration, parse_size
from gputop.sampler import parse_delay
from gputop.sources.sim import SCENARIOS
from gputop.units import plural, printable

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line instead of usage + error
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _expected(what: str, text: str, choices=()) -> argparse.ArgumentTypeError:
    from gputop.config import expected

    return argparse.ArgumentTypeError(expected(what, text, choices))


def _scenario(text: str) -> str:
    if text == "cycle" or text in SCENARIOS:
        return text
    choices = ("cycle", *SCENARIOS)
    raise _expected("a scenario (" + ", ".join(choices) + ")", text, choices)


def _checked(parse):
    """An argparse type from a parser that raises ValueError with a one-line reason."""
    def convert(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = parse.__name__  # argparse names the type in its own messages
    return convert


def _check_url(text: str) -> str:
    from gputop.sources.prom import check_url  # prometheus_client only when a URL is given

    return check_url(text)


def _serve_url(text: str) -> str:
    from gputop.remote import base_serve_url

    return base_serve_url(text)


def _prometheus_url(text: str) -> str:
    from gputop.fleet import base_prometheus_url

    return base_prometheus_url(text)


_delay = _checked(parse_delay)
_duration = _checked(parse_duration)
_size = _checked(parse_size)
_url = _checked(_check_url)
_serve = _checked(_serve_url)
_prometheus = _checked(_prometheus_url)


def _counter_name(text: str) -> str:
    """A Prometheus metric name (a trainer's progress counter), refused in one line otherwise."""
    import re

    if len(text) > 200 or not re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text):
        raise argparse.ArgumentTypeError(f"expected a metric name such as samples_total, "
                                         f"got {text[:60]!r}")
    return text


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _expected("a whole number", text) from None
    if value < 1:
        raise _expected("a number >= 1", text)
    return value


def _number_in(what: str, low: float, high: float, include_high: bool = True):
    """An argparse type for a number in (low, high] (or (low, high)); NaN is refused."""
    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (low < value and (value <= high if include_high else value < high)):
            raise _expected(what, text)
        return value
    return convert


_ratio = _number_in("a ratio between 0 and 1", 0.0, 1.0, include_high=False)
_percent = _number_in("a percentage in (0, 100]", 0.0, 100.0)
_factor = _number_in("a factor above 1 (e.g. 2)", 1.0, 100.0)
_duty = _number_in("a fraction of the time above 0 and at most 1 (e.g. 0.1)", 0.0, 1.0)


_window = _number_in("a window of 5 to 86400 seconds", 4.999, 86400.0)
HOLD_MAX_S = 600.0


def _hold(text: str) -> float:
    """--hold-s: seconds from 0 (open at once) to 10 minutes; NaN is refused."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= HOLD_MAX_S:
        raise _expected(f"seconds from 0 to {HOLD_MAX_S:.0f}", text)
    return value


def _theme(text: str) -> str:
    from gputop.config import THEMES

    if text not in THEMES:
        raise _expected("a theme (" + ", ".join(THEMES) + ")", text, THEMES)
    return text


def _pane(text: str) -> str:
    from gputop.config import PANES

    if text not in PANES:
        raise _expected("a pane 1-8", text)
    return text


def _pane_list(text: str) -> list[str]:
    panes = [p.strip() for p in str(text).split(",") if p.strip()]
    for p in panes:
        _pane(p)
    return panes


def _ebpf_mode(text: str) -> str:
    if text not in ("full", "light", "off"):
        raise _expected("full, light or off", text, ("full", "light", "off"))
    return text


def _gpu_list(text: str) -> list[int]:
    try:
        indexes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise _expected("GPU indexes like 0,2", text) from None
    if not indexes or any(i < 0 for i in indexes):
        raise _expected("GPU indexes like 0,2", text)
    return sorted(set(indexes))


def _add_source_options(parser: argparse.ArgumentParser, suppress: bool = False) -> None:
    """Options shared by the live view and subcommands.  On a subcommand the defaults are
    suppressed so that ``gputop --demo X snapshot`` keeps the value given before it."""
    def default(value):
        return argparse.SUPPRESS if suppress else value

    parser.add_argument("--demo", nargs="?", const="cycle", type=_scenario, metavar="SCENARIO",
                        default=default(None),
                        help="simulated GPUs, no GPU needed: " + ", ".join(SCENARIOS)
                        + " (default: cycle through all, the storm first)")
    parser.add_argument("-i", "--gpu", type=_gpu_list, default=default(None), metavar="0,2",
                        help="only these GPUs (NVML indexes)")
    parser.add_argument("--dcgm", type=_url, default=default(None), metavar="URL",
                        help="a dcgm-exporter /metrics URL: SM activity on GPUs without GPM")
    parser.add_argument("--engine", type=_url, action="append", default=default(None),
                        metavar="URL",
                        help="a serving engine's /metrics URL (vLLM, SGLang, TGI, llama.cpp); "
                        "repeat it for replicas read as one service; without it, engines among "
                        "the GPU processes are found by their ports")
    parser.add_argument("--work-counter", type=_counter_name, default=default(None),
                        metavar="NAME",
                        help="a training job's progress counter on the --engine page (e.g. "
                        "train_tokens_total, samples_total): the job is judged by its rate over "
                        "whole steps")
    parser.add_argument("--model", default=default(None), metavar="PATH_OR_ID",
                        help="the engine's model directory, config.json or a model id in the local "
                        "Hugging Face cache (for the weights / KV split of VRAM)")
    parser.add_argument("--ebpf", type=_ebpf_mode, default=default("off"),
                        help="host launch latency from eBPF uprobes on libcudart/libcuda (root): "
                        "full = call durations, light = calls/s and gaps (cheaper); default off")
    parser.add_argument("--ebpf-duty", type=_duty, default=default(1.0), metavar="FRACTION",
                        help="sampled probes: attach them 1 s in every 1/FRACTION s (0.1: one "
                        "second in ten), so the traced threads pay about that fraction of the "
                        "cost; calls/s are per attached second, durations unchanged; default 1")
    parser.add_argument("--pid", type=_positive_int, default=default(None),
                        help="pin every pane to this process and its children")
    parser.add_argument("--match", default=default(None), metavar="PATTERN",
                        help="pin to processes whose command line matches this regular "
                        "expression (waits for one; re-pins when it restarts)")
    parser.add_argument("--container", default=default(None), metavar="ID",
                        help="pin to the processes of this container (id, id prefix or name, "
                        "from /proc/PID/cgroup)")
    parser.add_argument("--pod", default=default(None), metavar="NAME",
                        help="pin to the processes of this Kubernetes pod (name, "
                        "namespace/name or UID)")
    parser.add_argument("--slurm-job", default=default(None), metavar="ID",
                        help="pin to the processes of this Slurm job (42) or step (42.0, "
                        "42.batch), from their cgroup")
    parser.add_argument("--host-root", default=default(None), metavar="PATH",
                        help="read the host's processes, cgroups and PSI under PATH (the host's "
                        "/proc mounted at PATH/proc: gputop in a container; docs/containers.md)")
    parser.add_argument("--remote", type=_serve, default=default(None), metavar="URL",
                        help="show another host: the address of its 'gputop serve' "
                        "(http://HOST:9464 or HOST:9464); basic auth from "
                        "GPUTOP_AUTH=user:password or GPUTOP_AUTH_FILE=FILE (user:password@ "
                        "in the URL works, but shows in ps)")
    parser.add_argument("--gpus", type=_positive_int, default=default(None),
                        help="number of simulated GPUs (demo)")
    parser.add_argument("--seed", type=int, default=default(0), help="simulator seed (demo)")
    parser.add_argument("-d", "--delay", type=_delay, default=default(1.0), metavar="SECONDS",
                        help="seconds between samples (default 1.0)")
    parser.add_argument("--busy-util-pct", type=_percent, default=default(90.0),
                        help="GPU-Util at or above which the GPU counts as busy (default 90)")
    parser.add_argument("--collapse-ratio", type=_ratio, default=default(0.5),
                        help="tokens/s at or below this fraction of baseline is a collapse (0.5)")
    parser.add_argument("--latency-factor", type=_factor, default=default(2.0),
                        help="inter-token latency or TTFT p99 at or above this x baseline is a "
                        "collapse too (2)")
    parser.add_argument("--max-size", type=_size, default=default(500 * 2**20), metavar="500MB",
                        help="keep a recording (record, --record, the r key) under this size by "
                        "dropping its oldest frames (default 500MB)")
    parser.add_argument("--hold-s", type=_hold, default=default(3.0),
                        help="seconds a condition must hold before the banner changes (3)")


MODEL_OVERRIDE_HELP = ("read the engine as serving this model (config.json, a model directory "
                       "or a local HF cache id): KV bytes per token and weights derived again")


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


def build_parser() -> argparse.ArgumentParser:
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
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    config = sub.add_parser("config", help="the effective settings and where each came from")
    config.add_argument("--print", action="store_true", default=True,
                        help="print them (the default)")
    snap = sub.add_parser("snapshot", help="print the derived state once, as JSON")
    snap.add_argument("--json", action="store_true", default=True,
                      help="JSON output (the default and only format)")
    snap.add_argument("--samples", type=_positive_int, default=2,
                      help="samples to take before printing, so rates exist (default 2)")
    _add_source_options(snap, suppress=True)
    record = sub.add_parser("record", help="record frames to a file, headless (works under nohup)")
    record.add_argument("file", metavar="FILE")
    record.add_argument("--duration", type=_duration, default=None, metavar="2h",
                        help="stop after this long (e.g. 90m, 2h, 1h30m)")
    _add_source_options(record, suppress=True)
    serve = sub.add_parser("serve", help="serve /metrics (Prometheus), /snapshot.json, /frames "
                           "and /healthz over HTTP, headless (for systemd and containers)")
    serve.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                       help="address to listen on (default 127.0.0.1:9464; :9464 for all)")
    serve.add_argument("--web-config", metavar="FILE",
                       help="TLS and basic auth, in the Prometheus exporter web-config format")
    serve.add_argument("--export-processes", action="store_true",
                       help="add per-process GPU memory (pid, user, process name; never command "
                       "lines)")
    serve.add_argument("--export-tenants", action="store_true",
                       help="add SM / memory utilization and GPU memory per container, pod and "
                       "Slurm job on each GPU (tell a shared GPU's tenants apart)")
    serve.add_argument("--record", metavar="FILE", help="record while serving")
    _add_source_options(serve, suppress=True)
    fleet = sub.add_parser("fleet", help="every GPU of many hosts, worst first, from their "
                           "'gputop serve' endpoints or from Prometheus")
    fleet.add_argument("urls", nargs="*", metavar="URL", type=_serve,
                       help="gputop serve endpoints (http://HOST:9464 or HOST:9464)")
    fleet.add_argument("--prometheus", type=_prometheus, metavar="URL",
                       help="a Prometheus that scrapes gputop serve (http://HOST:9090)")
    fleet.add_argument("--every", type=_delay, default=5.0, metavar="SECONDS",
                       help="how often to ask (default 5)")
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
    kv = sub.add_parser("kv", help="KV-cache bytes per token and sizes from a model config")
    kv.add_argument("model", metavar="CONFIG_OR_DIR_OR_ID",
                    help="config.json, a model directory, or a model id in the local HF cache")
    kv.add_argument("--kv-dtype", default="auto", choices=["auto", "bf16", "fp16", "fp8", "fp32"])
    kv.add_argument("--tp", type=_positive_int, default=1, help="tensor-parallel size")
    kv.add_argument("--json", action="store_true", help="JSON for scripts")
    capture = sub.add_parser(
        "capture-engine", help="save an engine's /metrics page with model names, addresses and "
        "adapter names anonymised, to attach to a bug report")
    capture.add_argument("url", metavar="URL", help="the engine's metrics URL "
                         "(http://127.0.0.1:8000/metrics)")
    capture.add_argument("-o", "--output", metavar="FILE", default=None,
                         help="where to write it (default engine-metrics-DATE.txt; - for "
                         "standard output); never over an existing file")
    doctor = sub.add_parser("doctor", help="what works on this machine and how to fix the rest")
    doctor.add_argument("-i", "--gpu", type=_gpu_list, default=argparse.SUPPRESS, metavar="0,2")
    doctor.add_argument("--ebpf-source", choices=["full", "light"], nargs="?", const="full",
                        help="print the BPF C program gputop loads, and exit")
    return parser


def _detect_config(args) -> DetectConfig:
    return DetectConfig(busy_util_pct=args.busy_util_pct, collapse_ratio=args.collapse_ratio,
                        hold_s=args.hold_s, clear_ratio=min(0.95, args.collapse_ratio + 0.1),
                        latency_factor=args.latency_factor)


def _setup(args):
    """(session over the chosen sources, pin applied to recorded/simulated frames); every
    setup problem is one line for the user."""
    from gputop.feed import compose
    from gputop.session import Session
    from gputop.sources.registry import SetupError, SourceOptions, pin_setup

    options = SourceOptions.from_args(args)
    try:
        pin_state, pin = pin_setup(options)
        feed, label = compose(options, pin_state)
    except SetupError as exc:
        raise UsageError(str(exc)) from None
    return Session(label, feed, detect_config=_detect_config(args), pin_state=pin_state), pin


def _demo_lead_in(args, extra_frames: int = 0) -> None:
    """A demo starts into its story: its healthy lead-in (what sets the baseline) is made at
    once, before "now", so the first screen, snapshot or scrape already shows the scenario's
    episode; ``extra_frames`` more are made at once after it (a snapshot's samples)."""
    if args.demo is not None:
        from gputop.demo import lead_frames

        args.demo_lead_frames = lead_frames(args.delay) + extra_frames


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

    print(json.dumps(snapshot_dict(LiveCursor(session).view_at(pin=pin), session.label),
                     indent=2))
    return 0


def cmd_kv(args) -> int:
    from gputop.model import kv
    from gputop.sources.modelinfo import load
    from gputop.units import size_text

    try:
        info = load(args.model)
        layout = kv.kv_layout(info.config, args.kv_dtype, args.tp)
    except kv.ConfigError as exc:
        raise UsageError(f"{args.model}: {exc}") from None
    rows = kv.table(layout)
    if args.json:
        print(json.dumps({"model": args.model, "kv_bytes_per_token": layout.bytes_per_token,
                          "tp": layout.tp, "mla": layout.mla, "formula": layout.formula,
                          "weights_bytes": info.weights_bytes, "table": rows}, indent=2))
        return 0
    per_token = layout.bytes_per_token
    print(f"{printable(args.model)}: {per_token:,} B = {per_token / 1024:,.1f} KiB of KV cache "
          "per token"
          + (f" per GPU (TP {args.tp})" if args.tp > 1 else ""))
    print(f"  = {layout.formula}")
    if info.weights_bytes is not None:
        print(f"weights: {size_text(info.weights_bytes)} ({info.weights_source})")
    print()
    header = "tokens per request" + "".join(f"{f'x{r} req':>12}" for r in kv.REQUESTS)
    print(header)
    for tokens in kv.TOKENS:
        cells = [f"{per_token * tokens * r / 2**30:>8.2f} GiB" for r in kv.REQUESTS]
        print(f"{tokens:>18,}" + "".join(f"{c:>12}" for c in cells))
    return 0


def cmd_doctor(args) -> int:
    from gputop.doctor import checks

    if args.ebpf_source:
        from gputop.sources.base import SourceError
        from gputop.sources.ebpf import program_text

        try:
            print(program_text(args.ebpf_source))
        except SourceError as exc:
            raise UsageError(str(exc)) from None
        return 0
    lines, gpu_readable = checks(args.gpu)
    print("\n".join(printable(line) for line in lines))
    return 0 if gpu_readable else 1


def stop_on_signals(stop) -> list[int]:
    """SIGTERM, SIGHUP and SIGINT call ``stop()`` on a thread of their own; returns the
    list the signals received are added to.  A handler runs on the main thread between
    two bytecodes: if that thread is inside ``Event.wait`` holding the Event's lock,
    calling ``Event.set()`` from the handler waits for that lock forever (seen: a SIGTERM
    to ``gputop serve --record`` that never exited), so the handler only starts a thread."""
    import signal
    import threading

    received: list[int] = []

    def handler(signum, _frame) -> None:
        received.append(signum)
        threading.Thread(target=stop, name="gputop-stop", daemon=True).start()

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, handler)
    return received


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


def _prepare_terminal(args) -> None:
    """What every command that draws does first: colours as asked, Textual's partial
    repaint patched (checked against this Textual; tui/partial_paint.py)."""
    from gputop.tui import partial_paint

    if args.no_color:
        os.environ["NO_COLOR"] = "1"
    partial_paint.install()


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


def cmd_serve(args) -> int:
    """Sample and serve until SIGTERM, SIGHUP or Ctrl-C."""
    import signal

    from gputop.record.store import RecordingError
    from gputop.serve import Server, ServeError, WebConfig

    _demo_lead_in(args)
    session, _pin = _setup(args)
    try:
        web_config = WebConfig.load(args.web_config) if args.web_config else None
        server = Server(session, args.listen, web_config, args.export_processes, args.delay,
                        export_tenants=args.export_tenants)
    except ServeError as exc:
        raise UsageError(str(exc)) from None
    if args.record:
        try:
            session.record(args.record, args.max_size)
        except RecordingError as exc:
            server.close()
            raise UsageError(str(exc)) from None
    interrupted = stop_on_signals(session.stop)
    scheme = "https" if web_config is not None and web_config.tls else "http"
    host = args.listen.rpartition(":")[0] or "0.0.0.0"
    print(f"gputop: serving {session.label} on {scheme}://{host}:{server.port}/metrics "
          "(/snapshot.json /frames /healthz)", file=sys.stderr, flush=True)
    for warning in server.warnings():
        print(f"gputop: {printable(warning)}", file=sys.stderr, flush=True)
    server.start()
    session.open()
    if args.demo is not None:  # the lead-in is history already: the first scrape shows it
        session.ticks(args.demo_lead_frames)
    try:
        session.run()
    finally:
        server.close()
        session.close()
    return 130 if signal.SIGINT in interrupted else 0


def cmd_fleet(args) -> int:
    """The fleet table; Enter opens a host's own dashboard and q there comes back."""
    from gputop import fleet
    from gputop.tui.fleet import FleetApp

    if args.prometheus and args.urls:
        raise UsageError("name gputop serve URLs or --prometheus URL, not both")
    try:
        for url in [args.prometheus] if args.prometheus else args.urls:
            fleet.base_url(url)  # GPUTOP_AUTH / GPUTOP_AUTH_FILE checked once, here
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.prometheus:
        def ask():
            return fleet.ask_prometheus(args.prometheus)
        source = fleet.base_url(args.prometheus)[0]  # shown: without credentials
    elif args.urls:
        def ask():
            return fleet.ask_serves(args.urls)
        source = plural(len(args.urls), "gputop serve endpoint")
    else:
        raise UsageError("name the hosts' gputop serve URLs, or --prometheus URL")
    _prepare_terminal(args)
    from gputop.tui import theme

    while True:
        app = FleetApp(ask, source, args.every)
        theme.apply(app, args.theme)
        app.run(mouse=args.mouse)
        if app.chosen_url is None:
            return app.return_code or 0
        args.remote, args.demo, args.engine = app.chosen_url, None, None
        args.start_gpu = app.chosen_gpu
        code = cmd_live(args)
        if code not in (0, None):
            return code


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


def _exit_on_signals(app) -> None:
    """SIGTERM and SIGHUP (an SSH connection dropping) end the app the normal way, so
    probes are detached and the recording closed (Python's default would just die); if
    that way hangs, the exit guard ends the process anyway."""
    import signal

    def stop(signum, _frame) -> None:
        exitguard.arm(0, app.release)
        app.exit()

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)


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


def _config_parsers() -> dict:
    return {"delay": _delay, "window": _window, "theme": _theme, "pane": _pane,
            "ebpf": _ebpf_mode, "url": _url, "counter": _counter_name, "percent": _percent,
            "ratio": _ratio, "factor": _factor, "duty": _duty, "hold": _hold, "path": str}


def _apply_config(args, argv: list[str]) -> dict:
    """Settings from GPUTOP_* and the config file put into ``args`` where the command line
    did not set them; returns every setting's effective value and where it came from."""
    from gputop.config import ConfigError, Effective, given_on_command_line, layered, settings

    all_settings = settings(_config_parsers())
    defaults = {s.dest: getattr(args, s.dest, None) for s in all_settings}
    if defaults.get("listen") is None:
        defaults["listen"] = DEFAULT_LISTEN
    try:
        effective, path = layered(all_settings, defaults)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    for dest, eff in list(effective.items()):
        if given_on_command_line(eff.setting, argv):
            effective[dest] = Effective(eff.setting, getattr(args, dest, eff.value), "command line")
        elif eff.source != "default" and (hasattr(args, dest) or eff.setting.command is None):
            setattr(args, dest, eff.value)
    args.config_path = path
    return effective


def cmd_config(args, effective: dict) -> int:
    """``gputop config --print``: each setting, its value, where it came from."""
    from gputop.config import toml_value

    path = args.config_path
    print(f"# config file: {path}" + ("" if path.exists() else " (none)"))
    print("# precedence: command line > environment > file > default")
    width = max(len(e.setting.key) for e in effective.values())
    print(f"# {'KEY':<{width - 2}}  {'VALUE':<24}  {'FROM':<26}  ENVIRONMENT / OPTION")
    for eff in effective.values():
        value = "(none)" if eff.value is None else toml_value(eff.value)
        value = re.sub(r"://[^/@\s\"]*@", "://***@", value)  # engines' user:password@
        print(f"{eff.setting.key:<{width}}  {printable(value):<24}  {eff.source:<26}  "
              f"{eff.setting.env} / {eff.setting.option}")
    return 0


def cmd_capture_engine(args) -> int:
    """Fetch, redact and save one metrics page; one line and exit 2 when it cannot."""
    import datetime as dt

    from gputop.sources.base import SourceError
    from gputop.sources.engine_capture import capture, write_new

    try:
        text, summary = capture(args.url)
    except (SourceError, ValueError) as exc:
        raise UsageError(f"capture-engine: {exc}") from None
    if args.output == "-":
        sys.stdout.write(text)
        print(f"gputop: {summary}", file=sys.stderr)
        return 0
    path = args.output or dt.datetime.now().strftime("engine-metrics-%Y%m%d-%H%M%S.txt")
    try:
        write_new(path, text)
    except FileExistsError:
        if os.path.islink(path):
            raise UsageError(f"capture-engine: {path} is a symbolic link: not followed") from None
        raise UsageError(f"capture-engine: {path} exists: choose another name") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"capture-engine: {path} is a symbolic link: not followed") from None
        raise UsageError(f"capture-engine: cannot write {path}: {exc.strerror or exc}") from None
    print(f"gputop: wrote {path}: {summary}")
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
