"""CSV: one row per frame per GPU, its numbers from the signal catalogue.

``export --format csv`` writes these rows (``record/export.py``); a new signal in
``model/signals.py`` is a new column.
"""

from __future__ import annotations

from collections.abc import Iterator

from gputop.model import signals
from gputop.model.derive import View
from gputop.units import iso_time

VRAM_COLUMNS = ["weights_bytes", "kv_pool_bytes", "kv_used_bytes", "other_bytes",
                "other_processes_bytes", "free_bytes", "unsplit_bytes", "overflow_bytes"]
# numbers come from the signal catalogue (model/signals.py): a new signal is a new column
# a GPU row also carries the replica on that GPU (a data-parallel engine or one model of
# several behind the endpoint): its name and its own engine signals, prefixed replica_
CSV_COLUMNS = (["time", "time_wall_s", "gpu", "name"] + [s.name for s in signals.GPU]
               + VRAM_COLUMNS + ["throttle"] + [s.name for s in signals.ENGINE]
               + ["launch_p50_us", "launch_p99_us", "alert", "replica"]
               + [f"replica_{s.name}" for s in signals.REPLICA])


def worst_launch(view: View) -> tuple[float | None, float | None]:
    launches = [a.stats for a in view.launch if "Launch" in a.api and a.stats.p99_us is not None]
    if not launches:
        return None, None
    worst = max(launches, key=lambda s: s.p99_us if s.p99_us is not None else 0.0)
    return worst.p50_us, worst.p99_us


def csv_rows(view: View) -> Iterator[dict]:
    """One row per GPU per frame; a frame without GPUs (no NVML: an engine alone) still
    gives one row, with the GPU columns empty, so the engine's numbers are kept."""
    engine = view.engine
    p50, p99 = worst_launch(view)
    common = {
        "time": iso_time(view.frame.time_wall_s, "seconds"), "time_wall_s": view.frame.time_wall_s,
        **{signal.name: signal.read(engine) for signal in signals.ENGINE},
        "launch_p50_us": p50, "launch_p99_us": p99,
    }
    if not view.gpus:
        yield {**common, "alert": view.alert.kind if view.alert else ""}
    replicas = engine.replicas if engine is not None else ()
    for g in view.gpus:
        s, vram = g.sample, (g.vram.as_dict() if g.vram else {})
        replica = next((r for r in replicas if s.index in r.gpus), None)
        alert = view.alert_for(s.index) if view.alert_covers(s.index) else None
        yield {
            **common, "gpu": s.index, "name": s.name,
            **{signal.name: signal.read(g) for signal in signals.GPU},
            **vram, "throttle": "|".join(s.throttle),
            "alert": alert.kind if alert is not None else "",
            **({"replica": replica.sample.replica,
                **{f"replica_{signal.name}": signal.read(replica)
                   for signal in signals.REPLICA}} if replica is not None else {}),
        }
