"""corpus_y: a GPU cloud's support queue, simulated.  See README.md."""

from __future__ import annotations

import json
import os
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


def _registry():
    from . import scenarios
    return scenarios.REGISTRY


def _matches(fn, filter):
    if filter is None:
        return True
    name = fn.__name__
    return filter == name


def traces(filter=None):
    """(Truth, frames) for each trace; ``filter``: a name, a family, a cause, or "healthy"."""
    fns = _registry()
    if filter is not None and any(fn.__name__ == filter for fn in fns):
        fns = [fn for fn in fns if fn.__name__ == filter]  # a name: build only that trace
    for fn in fns:
        truth, frames = fn()
        t = Truth(name=truth["name"], family=truth["family"], cause=truth["cause"],
                  culprit_gpus=tuple(truth["culprit_gpus"]) if truth["culprit_gpus"] else None,
                  window=tuple(truth["window"]) if truth["window"] else None,
                  engine=truth["engine"], gpus=truth["gpus"], gpu_model=truth["gpu_model"],
                  tick_s=truth["tick_s"], note=truth["note"], start_wall_s=truth["start_wall_s"])
        if filter is None or filter in (t.name, t.family, t.cause) or \
                (filter == "healthy" and t.cause is None):
            yield t, frames


def write_recordings(directory):
    """NAME.gputop and NAME.truth.json per trace into ``directory``."""
    from gputop.record.store import Recorder
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for truth, frames in traces():
        path = out / f"{truth.name}.gputop"
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if p.exists():
                os.unlink(p)
        rec = Recorder(path, f"corpus_y:{truth.name}")
        # deterministic header: the trace's own start, not the clock now
        rec._db.execute("PRAGMA secure_delete=ON")  # no trace of the replaced header values
        rec._put_meta({"created_wall_s": truth.start_wall_s, "host": f"ticket-{truth.name[:3]}"})
        for f in frames:
            rec.append(f)
        rec.close()
        # rebuild the file so that no page keeps the layout of the header values replaced above
        import sqlite3
        db = sqlite3.connect(str(path), isolation_level=None)
        db.execute("VACUUM")
        db.close()
        (out / f"{truth.name}.truth.json").write_text(json.dumps(asdict(truth), indent=1) + "\n")
        names.append(truth.name)
    return names
