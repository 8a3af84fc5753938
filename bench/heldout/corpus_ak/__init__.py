"""corpus_ak: a reasoning-model API provider's estate in a launch month, as gputop frames.

traces(filter=None) -> iterator of (Truth, frames); write_recordings(directory)."""
from __future__ import annotations
import json
import os
import socket
import time
from dataclasses import asdict
from unittest import mock

from corpus_ak.catalog import SPECS, Truth, build

__all__ = ["Truth", "traces", "write_recordings"]


def _keep(spec, filter):
    if filter is None:
        return True
    if filter == "healthy":
        return spec["cause"] is None
    return filter in (spec["name"], spec["family"], spec["cause"])


def traces(filter=None):
    for spec in SPECS:
        if _keep(spec, filter):
            yield build(spec)


def write_recordings(directory, filter=None):
    from gputop.record.store import Recorder
    os.makedirs(directory, exist_ok=True)
    out = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, truth.name + ".gputop")
        # the recorder's clock and host name pinned: two runs write the same bytes
        with mock.patch.object(time, "time", lambda: frames[0].time_wall_s), \
                mock.patch.object(socket, "gethostname", lambda: "gpu-node-" + truth.name.split("-")[0]):
            rec = Recorder(path, "nvml")
            for f in frames:
                rec.append(f)
            rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(asdict(truth), fh, indent=1)
        out.append(path)
    return out
