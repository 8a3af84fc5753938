"""corpus_aq: 66 simulated gputop traces of a media and streaming company's GPU estate.

``traces(filter)`` yields (Truth, frames); ``write_recordings(directory)`` writes each trace
as NAME.gputop (gputop.record.store.Recorder, clock and host name pinned) and NAME.truth.json."""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "tiny_kernels", "memory_bandwidth", "throttling", "kv_pressure",
          "gpu_shared", "host_cpu_contention", "spec_decode_rejected")

MONTH_START = 1798761600.0  # 2027-01-01T00:00:00Z


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    cause: str | None
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


def _start(spec, index):
    from .sim import seed_of
    s = seed_of("start:" + spec.name)
    day = s % 30
    sec = (s >> 8) % 80000
    return MONTH_START + day * 86400 + sec + 0.25


def _truth(spec, index, frames):
    from .hw import BOARDS
    start = _start(spec, index)
    win = None
    if spec.window is not None:
        win = (round(start + spec.window[0], 3), round(start + spec.window[1], 3))
    return Truth(name=spec.name, family=spec.family, cause=spec.cause,
                 culprit_gpus=tuple(spec.culprit) if spec.culprit is not None else None,
                 window=win, engine=spec.engine, gpus=spec.ngpu, gpu_model=BOARDS[spec.board].name,
                 tick_s=spec.tick, note=spec.note, start_wall_s=frames[0].time_wall_s)


def specs(filter=None):
    from .scen import SPECS
    out = []
    for i, s in enumerate(SPECS):
        if filter is None or (callable(filter) and filter(s.name)) or \
                (isinstance(filter, str) and filter in s.name):
            out.append((i, s))
    return out


def traces(filter=None):
    """(Truth, frames) per trace; ``filter``: a substring of the name or a predicate on it."""
    from .sim import run
    for i, s in specs(filter):
        frames = run(s, _start(s, i))
        yield _truth(s, i, frames), frames


def write_recordings(directory, filter=None):
    from gputop.record import store
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = d / f"{truth.name}.gputop"
        with mock.patch.object(store.socket, "gethostname", lambda: "corpus-aq-node"), \
                mock.patch.object(store.time, "time", lambda: truth.start_wall_s):
            rec = store.Recorder(path, f"demo:corpus_aq/{truth.name}")
            for f in frames:
                rec.append(f)
            rec.close()
        (d / f"{truth.name}.truth.json").write_text(json.dumps(dataclasses.asdict(truth), indent=1) + "\n")
        written.append(path)
    return written
