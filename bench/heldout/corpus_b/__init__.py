"""corpus_b: a held-out trace corpus for gputop's diagnosis, simulated from the physics of
GPUs, serving engines and training jobs (independent of gputop's detector and demo).

    traces(filter=None)          -> iterator of (Truth, frames), generated in memory
    write_recordings(directory)  -> writes each trace as a gputop recording (FILE.gputop)

``filter``: None (all), a string (a trace name, a family or a cause; "healthy" selects the
traces without a cause), or a callable(Truth) -> bool.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from .catalog import TRACES
from .scenario import Truth
from .serving import Engine
from .training import Trainer

__all__ = ["Truth", "traces", "write_recordings", "trace_names", "FAMILIES"]

FAMILIES = sorted({family for _, family, _, _ in TRACES})


def trace_names() -> list[str]:
    return [name for name, *_ in TRACES]


def _selected(name: str, family: str, cause, flt) -> bool:
    if flt is None:
        return True
    if callable(flt):
        return True  # decided on the Truth after building (cheap: truth needs no frames)
    if flt == "healthy":
        return cause is None
    return flt in (name, family, cause)


def build(name: str, family: str, cause, fn) -> tuple[Truth, list]:
    scn, spec = fn(name)
    frames = scn.run()
    wall0 = scn.wall0
    window = None
    if cause is not None:
        if "window" in spec:
            a, b = spec["window"]
            window = (wall0 + a, wall0 + b)
        elif scn.marks:
            window = (min(scn.marks), max(scn.marks))
        else:
            raise RuntimeError(f"{name}: the pathology never became active")
    view = scn.view
    if isinstance(view, Engine):
        kind = view.kind
    elif isinstance(view, Trainer) and scn.trainer_counter:
        kind = "trainer"
    else:
        kind = None
    truth = Truth(name=name, family=family, engine=kind, gpus=scn.n_gpus, gpu_model=scn.gpu,
                  tick_s=scn.tick, cause=cause, culprit_gpus=spec.get("culprit") if cause else None,
                  window=window, note=spec.get("note", ""), duration_s=scn.duration,
                  start_wall_s=frames[0].time_wall_s if frames else wall0)
    return truth, frames


def traces(filter=None) -> Iterator[tuple[Truth, list]]:
    """Every selected trace, deterministic, generated in memory (oldest frame first)."""
    for name, family, cause, fn in TRACES:
        if not _selected(name, family, cause, filter):
            continue
        truth, frames = build(name, family, cause, fn)
        if callable(filter) and not isinstance(filter, str) and not filter(truth):
            continue
        yield truth, frames


def write_recordings(directory, filter=None) -> list[str]:
    """Write each trace as ``directory/NAME.gputop`` (``gputop report FILE`` reads it) and
    its truth as ``directory/NAME.truth.json``.  Returns the recording paths."""
    import json

    from gputop.record.store import Recorder

    os.makedirs(directory, exist_ok=True)
    paths = []
    for truth, frames in traces(filter):
        path = os.path.join(directory, f"{truth.name}.gputop")
        rec = Recorder(path, f"corpus_b:{truth.name}")
        try:
            for f in frames:
                rec.append(f)
        finally:
            rec.close()
        with open(os.path.join(directory, f"{truth.name}.truth.json"), "w") as fh:
            json.dump(truth.__dict__, fh, indent=1)
        paths.append(path)
    return paths
