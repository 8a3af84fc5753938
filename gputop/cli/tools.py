"""The commands that need no session: ``kv`` (KV-cache sizes from a model config),
``capture-engine`` (an engine's metrics page, redacted, for a bug report) and ``doctor``
(what works on this machine)."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys

from gputop.cli.options import UsageError, _gpu_list, _positive_int
from gputop.units import printable


def add_parsers(sub) -> None:
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
