"""corpus_ab: a blind diagnosis corpus, "an ML platform team's on-call fortnight".

``traces(filter)`` yields ``(Truth, frames)``; ``write_recordings(dir)`` writes
``NAME.gputop`` and ``NAME.truth.json``.  See README.md for how traces are made.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from unittest import mock

from gputop.schema import Frame

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Truth:
    name: str
    family: str  # "serving" | "training" | "other"
    cause: str | None
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


def _entries():
    from .catalog import ENTRIES, HEALTHY
    for name, family, cause, culprit, win, cfg, note in ENTRIES:
        yield name, family, cause, culprit, win, cfg, note
    for name, family, cfg, note in HEALTHY:
        yield name, family, None, None, None, cfg, note


def _matches(flt, name, family, cause) -> bool:
    if flt is None:
        return True
    if flt == "healthy":
        return cause is None
    return flt in (name, family, cause)


def _window(win, cfg, frames: list[Frame]):
    from .common import EPOCH0
    t0 = EPOCH0 + cfg.start
    end = t0 + cfg.minutes * 60
    if win is None:
        return None
    if win == "all":
        return (round(frames[0].time_wall_s, 3), round(frames[-1].time_wall_s, 3))
    if win == "special":
        on = getattr(cfg, "_on", [])
        return (round(t0 + min(on), 3), round(t0 + max(on) + cfg.tick, 3))
    if isinstance(win, tuple) and win and win[0] == "throttle":
        g = win[1]
        hot = [f.time_wall_s for f in frames
               if any(x in ("thermal (sw)", "thermal (hw)", "hw slowdown", "power brake")
                      for x in f.gpus[g].throttle)]
        return (round(hot[0], 3), round(hot[-1], 3))
    return (round(t0 + win[0], 3), round(min(end, t0 + win[1]), 3))


def traces(filter: str | None = None):
    from . import serving, training
    from .common import BOARDS, EPOCH0
    for name, family, cause, culprit, win, cfg, note in _entries():
        if not _matches(filter, name, family, cause):
            continue
        cfg.name = name
        cfg.__dict__.pop("_on", None)
        if isinstance(cfg, serving.Serve):
            frames = list(serving.simulate(cfg))
            engine, gpus = cfg.engine, cfg.tp * cfg.dp
        else:
            frames = list(training.simulate(cfg))
            engine, gpus = ("trainer" if cfg.unit else "none"), cfg.gpus
        truth = Truth(name, family, cause, culprit, _window(win, cfg, frames), engine, gpus,
                      BOARDS[cfg.board].name, cfg.tick, note, EPOCH0 + cfg.start)
        yield truth, frames


def write_recordings(directory, filter: str | None = None) -> list[str]:
    from gputop.record.store import Recorder
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for truth, frames in traces(filter):
        path = out / f"{truth.name}.gputop"
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if p.exists():
                p.unlink()
        # deterministic bytes: the header's host and creation time come from the trace
        host = f"oncall-{truth.family}-{truth.gpu_model.split()[-1].lower()}"
        with mock.patch("gputop.record.store.time.time", return_value=truth.start_wall_s), \
                mock.patch("gputop.record.store.socket.gethostname", return_value=host):
            rec = Recorder(path, f"corpus_ab:{truth.name}")
        for f in frames:
            rec.append(f)
        rec.close()
        data = asdict(truth)
        (out / f"{truth.name}.truth.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        os.chmod(path, 0o644)
        names.append(truth.name)
    return names
