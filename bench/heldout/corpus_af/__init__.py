"""corpus_af: a blind diagnosis corpus -- an enterprise's on-premises GPU estate for one quarter.

``traces(filter)`` yields ``(Truth, frames)``; ``write_recordings(directory)`` writes
``NAME.gputop`` and ``NAME.truth.json`` per trace (deterministic bytes).  See README.md.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path

from .catalog import ENTRIES
from .serving import serve
from .training import train

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")

QUARTER_START = 1798761600.0  # 2027-01-01 00:00 UTC


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


def _start(i: int, spec) -> float:
    hour = {"9am": 9}.get(spec.get("hour"), (7 + 5 * i) % 24)
    return QUARTER_START + (i * 37 % 90) * 86400 + hour * 3600 + (i * 613) % 1800


def _truth(i, entry) -> Truth:
    name, family, cause, culprit, note, spec, window = entry
    from .common import BOARDS
    start = _start(i, spec)
    w = None
    if cause is not None:
        if window == "all":
            w = (start, start + spec["dur"])
        else:
            evs = [e for e in spec.get("events", ()) if e[0] not in ("restart", "ckpt", "eval", "idle")]
            t0 = min(e[1] for e in evs)
            t1 = min(max(e[2] for e in evs), spec["dur"])
            w = (start + t0, start + t1)
    engine = spec.get("engine") or ("trainer" if spec.get("exporter", True) else "none")
    ngpu = spec.get("ngpu", spec.get("tp", 1))
    return Truth(name, family, cause, culprit, w, engine, ngpu, BOARDS[spec["board"]].name,
                 spec.get("tick", 1.0), note, start)


def _matches(truth: Truth, flt) -> bool:
    if flt is None:
        return True
    if flt == "healthy":
        return truth.cause is None
    return flt in (truth.name, truth.family, truth.cause)


def truths(filter=None):
    for i, e in enumerate(ENTRIES):
        tr = _truth(i, e)
        if _matches(tr, filter):
            yield tr


def traces(filter=None):
    for i, e in enumerate(ENTRIES):
        tr = _truth(i, e)
        if not _matches(tr, filter):
            continue
        spec = dict(e[5])
        sim = serve if spec.get("kind") == "serve" else train
        yield tr, sim(spec, tr.start_wall_s)


def write_recordings(directory, filter=None):
    from gputop.record.store import Recorder
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for tr, frames in traces(filter):
        path = d / f"{tr.name}.gputop"
        for suffix in ("", "-wal", "-shm", "-journal"):
            p = Path(f"{path}{suffix}")
            if p.exists():
                p.unlink()
        rec = Recorder(path, f"corpus_af:{tr.name}")
        rec._put_meta({"host": f"af-{tr.family}-{abs(hash(tr.gpu_model)) % 1 if False else 0}",
                       "created_wall_s": tr.start_wall_s})
        for fr in frames:
            rec.append(fr)
        rec.close()
        _scrub(path)
        tj = d / f"{tr.name}.truth.json"
        tj.write_text(json.dumps(asdict(tr), indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written


def _scrub(path):
    """Rewrite the finished file with VACUUM so its bytes depend only on its content."""
    db = sqlite3.connect(str(path))
    db.execute("VACUUM")
    db.close()
    os.chmod(path, 0o600)
