"""An independent trace corpus for gputop's diagnosis.

Written from the physics of GPUs, serving engines and training jobs (see README.md in this
directory), not from gputop's detector: request-level continuous-batching simulators for
vLLM V1 and SGLang, a step-level training simulator with DataLoader and collectives, plain
CUDA processes, and a GPU model (NVML/GPM readings, power cap, clocks, temperature).

    from bench.corpus import traces, write_recordings
    for truth, frames in traces("straggler"):     # a family, a name, or a callable on Truth
        ...
    write_recordings("/tmp/corpus")               # one gputop recording per trace

Every trace is generated in memory, deterministically from its seed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:  # bench/ is run from a checkout, gputop may be installed
    sys.path.insert(0, str(_ROOT))

from gputop.schema import Frame  # noqa: E402

from bench.corpus.catalog import E as ENTRIES  # noqa: E402
from bench.corpus.catalog import Entry  # noqa: E402
from bench.corpus.families import Truth  # noqa: E402

__all__ = ["Truth", "traces", "write_recordings", "names", "build", "ENTRIES"]


def _culprit(entry: Entry, n_gpus: int, engine_gpus: tuple[int, ...] | None):
    c = entry.culprit
    if c is None:
        return None
    if c == "engine":
        return engine_gpus if engine_gpus else tuple(range(n_gpus))
    if c == "all":
        return tuple(range(n_gpus))
    return tuple(c)


def _truth(entry: Entry, scene=None, window=None) -> Truth:
    v = entry.v
    spec = v["spec"]
    n = v.get("n", 8 if entry.builder.__name__ == "b_eight_servers" else 1)
    engine = None
    engine_gpus = None
    ebpf = bool(v.get("ebpf"))
    pinned = bool(v.get("pinned"))
    if scene is not None:
        n = len(scene.gpus)
        if scene.pointed is not None:
            engine = scene.pointed.cfg.kind
            engine_gpus = scene.pointed.cfg.gpus
        elif scene.counter is not None:
            engine = "trainer"
        ebpf = scene.ebpf
        pinned = scene.pin is not None
    else:
        engine = v.get("kind") or ("vllm" if entry.builder.__name__ == "b_eight_servers" else None)
        if engine is None and v.get("counter"):
            engine = "trainer"
    wall = None
    if window is not None and scene is not None:
        wall = (scene.wall0 + window[0], scene.wall0 + window[1])
    return Truth(name=entry.name, family=entry.family, engine=engine, gpus=n, gpu_model=spec.key,
                 cause=entry.cause, culprit_gpus=_culprit(entry, n, engine_gpus), window=wall,
                 note=entry.note, interval_s=v.get("interval", 1.0), duration_s=v.get("dur", 0.0),
                 seed=entry.seed, ebpf=ebpf, pinned=pinned)


def names() -> list[str]:
    return [e.name for e in ENTRIES]


def _match(entry: Entry, flt) -> bool:
    if flt is None:
        return True
    if callable(flt):
        return bool(flt(_truth(entry)))
    parts = [p.strip() for p in str(flt).split(",") if p.strip()]
    return any(p == entry.family or p in entry.name or p == (entry.cause or "healthy")
               for p in parts)


def build(entry: Entry) -> tuple[Truth, list[Frame]]:
    """Generate one trace: its truth (window in wall seconds) and frames."""
    built = entry.builder(entry.seed, entry.v)
    frames = built.scene.run()
    window = built.window
    if built.refine is not None:
        physical = built.refine(frames, built.scene.wall0)
        if physical is not None:
            window = physical
    return _truth(entry, built.scene, window), frames


def traces(filter: str | Callable[[Truth], bool] | None = None) -> Iterator[tuple[Truth, list[Frame]]]:
    """(truth, frames) for every trace matching ``filter``: None (all), a family / cause /
    name substring (comma-separated for several), or a callable given a Truth without its
    window (the window is known only once the trace is generated)."""
    for entry in ENTRIES:
        if _match(entry, filter):
            yield build(entry)


def write_recordings(directory: str | os.PathLike, filter=None) -> list[Path]:
    """Write each trace as a gputop recording (``gputop report FILE`` reads it) plus a
    ``truth.json`` beside them; returns the recording paths."""
    import json
    from dataclasses import asdict

    from gputop.record.store import Recorder

    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    truths = []
    for truth, frames in traces(filter):
        path = out_dir / f"{truth.name}.gputop"
        rec = Recorder(path, f"corpus:{truth.name}")
        try:
            for f in frames:
                rec.append(f)
        finally:
            rec.close()
        paths.append(path)
        truths.append(asdict(truth))
    (out_dir / "truth.json").write_text(json.dumps(truths, indent=1))
    return paths
