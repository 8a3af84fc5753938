"""Split one card's VRAM into weights / KV pool (used + free inside it) / the rest.

The KV cache in use lives *inside* the pre-reserved pool, so it is never added
on top of it.  Parts that cannot be known are reported as ``unsplit`` rather
than invented.  The parts always add up to the card's total plus ``overflow``:
when the known parts exceed the card (a misconfiguration or a wrong model
size), the excess is shown as overflow instead of being clipped away.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VramSplit:
    total_bytes: int
    weights_bytes: int | None
    kv_pool_bytes: int | None
    kv_used_bytes: int | None  # inside kv_pool_bytes
    other_bytes: int | None  # the engine process's memory beyond weights and pool
    other_processes_bytes: int | None
    free_bytes: int
    unsplit_bytes: int  # used memory whose owner or kind is unknown
    overflow_bytes: int
    provenance: tuple[str, ...] = ()

    @property
    def kv_free_bytes(self) -> int | None:
        """The pool less what is in use; None when either is unknown (an engine without a KV
        usage gauge, llama.cpp's: its pool is not free, its use is unknown)."""
        if self.kv_pool_bytes is None or self.kv_used_bytes is None:
            return None
        return self.kv_pool_bytes - self.kv_used_bytes

    def parts(self, include_zero: bool = False) -> list[tuple[str, int]]:
        """Known parts in bar order (KV pool split into used and free); unknown ones omitted,
        zero-size ones too unless ``include_zero`` (a legend shows "KV used 0")."""
        ordered = [
            ("weights", self.weights_bytes),
            ("kv_used", self.kv_used_bytes),
            ("kv_free", self.kv_free_bytes),
            # the pool whose use is unknown, drawn whole rather than claimed free
            ("kv_pool", self.kv_pool_bytes if self.kv_used_bytes is None else None),
            ("other", self.other_bytes),
            ("other_processes", self.other_processes_bytes),
            ("unsplit", self.unsplit_bytes),
            ("free", self.free_bytes),
        ]
        return [(name, size) for name, size in ordered
                if size is not None and (size > 0 or (include_zero and name != "unsplit"))]

    def as_dict(self) -> dict[str, int | None]:
        return {
            "weights_bytes": self.weights_bytes,
            "kv_pool_bytes": self.kv_pool_bytes,
            "kv_used_bytes": self.kv_used_bytes,
            "other_bytes": self.other_bytes,
            "other_processes_bytes": self.other_processes_bytes,
            "free_bytes": self.free_bytes,
            "overflow_bytes": self.overflow_bytes,
            "unsplit_bytes": self.unsplit_bytes,
        }


def split_vram(
    total_bytes: int,
    used_bytes: int,
    engine_process_bytes: int | None = None,
    weights_bytes: int | None = None,
    kv_pool_bytes: int | None = None,
    kv_usage_ratio: float | None = None,
    provenance: tuple[str, ...] = (),
) -> VramSplit:
    """Split a card; every input may be unknown (None) except the card's own totals."""
    total_bytes = max(0, int(total_bytes))
    used_bytes = max(0, int(used_bytes))
    free_bytes = max(0, total_bytes - used_bytes)
    weights = None if weights_bytes is None else max(0, int(weights_bytes))
    pool = None if kv_pool_bytes is None else max(0, int(kv_pool_bytes))
    kv_used = None
    if pool is not None and kv_usage_ratio is not None:
        kv_used = int(pool * min(1.0, max(0.0, kv_usage_ratio)))
    known_engine = (weights or 0) + (pool or 0)

    other = other_processes = None
    if engine_process_bytes is not None:
        engine_bytes = max(0, int(engine_process_bytes))
        other_processes = max(0, used_bytes - engine_bytes)
        if weights is not None and pool is not None:
            other = max(0, engine_bytes - known_engine)
            unsplit = 0
        else:  # the engine's memory is known but not what is inside it
            unsplit = max(0, engine_bytes - known_engine)
    else:
        unsplit = max(0, used_bytes - known_engine)

    parts_sum = known_engine + (other or 0) + (other_processes or 0) + unsplit + free_bytes
    overflow = max(0, parts_sum - total_bytes)
    return VramSplit(
        total_bytes=total_bytes,
        weights_bytes=weights,
        kv_pool_bytes=pool,
        kv_used_bytes=kv_used,
        other_bytes=other,
        other_processes_bytes=other_processes,
        free_bytes=free_bytes,
        unsplit_bytes=unsplit,
        overflow_bytes=overflow,
        provenance=provenance,
    )
