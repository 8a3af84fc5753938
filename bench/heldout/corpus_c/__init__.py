"""Held-out trace corpus C for gputop's diagnosis: frames generated from physics.

Do not tune the detector on it: measuring only.  ``traces(filter)`` yields
``(Truth, frames)`` one trace at a time; each trace is seeded by its name.
"""

from __future__ import annotations

from corpus_c.catalog import CATALOG, Truth

__all__ = ["CATALOG", "Truth", "traces", "names"]


def names() -> list[str]:
    return [name for name, _ in CATALOG]


def traces(filter: str | None = None):
    for name, build in CATALOG:
        truth, world = build(name)
        if filter and filter not in (name, truth.family, truth.cause or "healthy",
                                     "healthy" if truth.cause is None else "pathology",
                                     truth.engine, truth.gpu_model):
            continue
        frames = world.frames()
        truth.start_wall_s = frames[0].time_wall_s
        if truth.window_rel is not None:
            a, b = truth.window_rel
            truth.window = (frames[0].time_wall_s + a, frames[0].time_wall_s + b)
        yield truth, frames
