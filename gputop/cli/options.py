"""What every subcommand parses with: the one-line usage error, the argparse types
(each a one-line reason for a bad value) and the source options shared by the dashboard
and the headless commands."""

from __future__ import annotations

import argparse
from typing import NoReturn

from gputop.record.timespec import parse_duration, parse_size
from gputop.sampler import parse_delay
from gputop.sources.sim import SCENARIOS

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + error
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
