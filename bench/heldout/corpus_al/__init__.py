"""corpus_al: a university's shared GPU cluster in the fortnight before a conference deadline.

traces(filter=None) -> iterator of (Truth, frames); write_recordings(directory).
"""
from __future__ import annotations

import dataclasses
import json
import os
import socket
import time
from pathlib import Path
from unittest import mock

from .truth import CAUSES, Truth

__all__ = ["Truth", "CAUSES", "traces", "write_recordings", "builders"]


def builders():
    from .catalog import REG
    return list(REG)


def _name(fn):
    return fn.__name__.replace("_", "-")


def _keep(truth: Truth, filter) -> bool:
    if filter is None:
        return True
    if filter == "healthy":
        return truth.cause is None
    return filter in (truth.name, truth.family, truth.cause)


def built(filter=None):
    from .catalog import REG
    for fn in REG:
        b = fn()
        if _keep(b.truth, filter):
            yield b


def traces(filter=None):
    for b in built(filter):
        yield b.truth, b.frames


def write_recordings(directory):
    from gputop.record import store
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    for truth, frames in traces():
        path = d / f"{truth.name}.gputop"
        if path.exists():
            path.unlink()
        with mock.patch.object(store.socket, "gethostname", lambda: "rc-gpu-node"), \
                mock.patch.object(store.time, "time", lambda: truth.start_wall_s - 1.0):
            rec = store.Recorder(path, "corpus_al:" + truth.name)
            for f in frames:
                rec.append(f)
            rec.close()
        (d / f"{truth.name}.truth.json").write_text(json.dumps(dataclasses.asdict(truth), indent=1) + "\n")
