"""Corpus AR: 66 simulated traces from a video-game studio's live-ops and ML GPU estate in
the weeks around a major game launch, for judging gputop's diagnosis blind.

``traces(filter=None)`` yields ``(Truth, frames)``; ``write_recordings(directory)`` writes
``NAME.gputop`` and ``NAME.truth.json`` for each (byte-identical across runs).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
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


def seed_of(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")


def _matches(spec, flt) -> bool:
    if flt is None:
        return True
    if callable(flt):
        return bool(flt(spec))
    return flt == spec.name or flt == spec.cause or flt == spec.family or \
        (flt == "healthy" and spec.cause is None) or flt in spec.name


def build_trace(spec):
    """(Truth, frames) of one scenario spec."""
    from corpus_ar.build import Ctx
    rng = random.Random(seed_of(spec.name))
    S = Ctx(rng, spec.name)
    node = spec.make(S)
    frames = node.run()
    window = None
    if spec.window is not None:
        window = (round(node.start_wall + spec.window[0], 3), round(node.start_wall + spec.window[1], 3))
    truth = Truth(name=spec.name, family=spec.family, cause=spec.cause,
                  culprit_gpus=spec.culprit, window=window, engine=spec.engine,
                  gpus=len(node.gpus), gpu_model=node.board.name, tick_s=node.tick_s,
                  note=spec.note, start_wall_s=frames[0].time_wall_s)
    return truth, frames


def specs():
    from corpus_ar.scenarios import SPECS
    return SPECS


def traces(filter=None):
    """Yield (Truth, frames) for every trace whose spec matches ``filter``: None (all), a
    name, a cause, a family, "healthy", a substring of the name, or a callable on the spec."""
    for spec in specs():
        if _matches(spec, filter):
            yield build_trace(spec)


def truth_json(truth: Truth) -> str:
    return json.dumps(dataclasses.asdict(truth), indent=1, sort_keys=True) + "\n"


def write_recordings(directory, filter=None) -> list[str]:
    """Write NAME.gputop (gputop.record.store.Recorder, clock and host name pinned) and
    NAME.truth.json for each trace; returns the names written."""
    import gputop.record.store as store

    os.makedirs(directory, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, truth.name + ".gputop")
        for p in (path, path + "-wal", path + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        host = "gs-" + truth.name.split("_")[0][:20]
        saved = store.socket, store.time

        class _Sock:
            @staticmethod
            def gethostname():
                return host

        class _Time:
            @staticmethod
            def time():
                return truth.start_wall_s

        store.socket, store.time = _Sock, _Time
        try:
            rec = store.Recorder(path, f"corpus_ar:{truth.name}")
            for f in frames:
                rec.append(f)
            rec.close()
        finally:
            store.socket, store.time = saved
        with open(os.path.join(directory, truth.name + ".truth.json"), "w") as fh:
            fh.write(truth_json(truth))
        written.append(truth.name)
    return written
