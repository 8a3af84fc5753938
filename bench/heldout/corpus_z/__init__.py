"""corpus_z: an ML platform team's on-call week, as gputop would have recorded it.

``traces(filter=None)`` yields ``(Truth, frames)``; ``write_recordings(directory)`` writes
``NAME.gputop`` and ``NAME.truth.json`` per trace.  See README.md."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Truth:
    name: str
    family: str            # "serving" | "training" | "other"
    cause: str | None      # one of CAUSES, or None for a healthy trace
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


# the on-call week starts Monday 2026-11-23 00:00 UTC
WEEK0 = dt.datetime(2026, 11, 23, tzinfo=dt.UTC).timestamp()
DAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}


def _entries():
    from .catalog import E
    return E


def _start_wall(name: str, k: int) -> float:
    day = DAYS.get(name.split("-")[0], k % 7)
    seed = zlib.crc32(name.encode())
    return WEEK0 + day * 86400 + 3600 * (7 + seed % 14) + (seed >> 8) % 3000 + 0.25 + k * 0.001


def _matches(entry, flt) -> bool:
    name, family, cause = entry[0], entry[1], entry[2]
    if flt is None:
        return True
    if flt == "healthy":
        return cause is None
    return flt in (name, family, cause)


def _run(k: int, entry):
    from gputop.sources.engine_names import ENGINES  # noqa: F401  (the schema's world)
    from .serving import ServeSim, ServeSpec
    from .training import TrainSim
    name, family, cause, culprit, win, note, spec = entry
    start = _start_wall(name, k)
    seed = zlib.crc32(name.encode()) ^ 0x5EED
    if isinstance(spec, ServeSpec):
        sim = ServeSim(name, spec, start, seed)
        engine = spec.engine
        frames = list(sim.run())
        if win == "special":
            if sim.special_done:
                a, b = sim.special_done[0]
            else:
                a, b = spec.specials[0].t, spec.duration
            win = (a, b)
    else:
        sim = TrainSim(name, spec, start, seed)
        engine = "trainer" if spec.counter else "none"
        frames = list(sim.run())
    from .common import GPUS
    truth = Truth(name=name, family=family, cause=cause,
                  culprit_gpus=tuple(culprit) if culprit else None,
                  window=(round(start + win[0], 3), round(start + win[1], 3)) if win else None,
                  engine=engine, gpus=spec.gpus, gpu_model=GPUS[spec.gpu].name,
                  tick_s=spec.tick, note=note, start_wall_s=frames[0].time_wall_s)
    return truth, frames


def traces(filter=None):
    """Yield (Truth, frames) for every trace matching ``filter`` (a name, a family, a cause,
    or "healthy"), in catalogue order."""
    for k, entry in enumerate(_entries()):
        if _matches(entry, filter):
            yield _run(k, entry)


def truth_json(truth: Truth) -> str:
    return json.dumps(asdict(truth), indent=1, sort_keys=True)


def write_recordings(directory, filter=None) -> list[Path]:
    """Write NAME.gputop (gputop's Recorder) and NAME.truth.json for each trace."""
    from gputop.record.store import Recorder
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for truth, frames in traces(filter):
        path = out / f"{truth.name}.gputop"
        rec = Recorder(path, f"corpus_z:{truth.name}")
        # a fixed header so two runs write identical files (the clock's and host's values
        # that the Recorder wrote are overwritten, and their freed bytes zeroed)
        rec._db.execute("PRAGMA secure_delete=ON")
        rec._put_meta({"host": f"oncall-{truth.family}", "created_wall_s": truth.start_wall_s})
        for f in frames:
            rec.append(f)
        rec.close()
        # rebuild the file so no page keeps the layout the first header values left
        db = sqlite3.connect(str(path), isolation_level=None)
        try:
            db.execute("VACUUM")
        finally:
            db.close()
        (out / f"{truth.name}.truth.json").write_text(truth_json(truth) + "\n")
        written.append(path)
    return written


__all__ = ["CAUSES", "Truth", "traces", "write_recordings"]
