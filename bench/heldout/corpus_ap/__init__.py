"""Corpus AP: 66 simulated gputop traces of a biotech / drug-discovery GPU estate over a month.

``traces(filter)`` yields (Truth, frames); ``write_recordings(directory)`` writes NAME.gputop and
NAME.truth.json for each (byte-identical across runs: the recorder's clock and host are pinned)."""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "tiny_kernels", "memory_bandwidth", "throttling", "kv_pressure",
          "gpu_shared", "host_cpu_contention", "spec_decode_rejected")


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


def _truth(spec, frames):
    return Truth(name=spec.name, family=spec.family, cause=spec.cause,
                 culprit_gpus=tuple(spec.culprit) if spec.culprit else None, window=spec.window,
                 engine=spec.engine, gpus=spec.ngpu, gpu_model=frames[0].gpus[0].name, tick_s=spec.tick,
                 note=spec.note, start_wall_s=frames[0].time_wall_s)


def specs(filter=None):
    from corpus_ap.catalogue import catalogue
    out = []
    for s in catalogue():
        if filter is None or (callable(filter) and filter(s.name)) or (isinstance(filter, str) and filter in s.name):
            out.append(s)
    return out


def traces(filter=None):
    """(Truth, frames) per trace; ``filter``: a substring of the name or a predicate on it."""
    from corpus_ap.build import run
    for s in specs(filter):
        frames = run(s)
        yield _truth(s, frames), frames


def write_recordings(directory, filter=None):
    import gputop.record.store as store
    from unittest import mock
    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, truth.name + ".gputop")
        with mock.patch.object(store.socket, "gethostname", lambda: "corpus-ap-node"), \
                mock.patch.object(store.time, "time", lambda: truth.start_wall_s):
            rec = store.Recorder(path, "corpus_ap:" + truth.name)
            for f in frames:
                rec.append(f)
            rec.close()
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            json.dump(dataclasses.asdict(truth), fh, indent=1, sort_keys=True)
        written.append(path)
    return written
