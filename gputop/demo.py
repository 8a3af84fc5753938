"""Deterministic frame sequences from the simulator, for screenshots, tests and benchmarks,
and how far into its story the live demo starts."""

from __future__ import annotations

from gputop.sampler import Sampler
from gputop.schema import Frame
from gputop.sources.sim import START_WALL_S, SimSource


def demo_frames(scenario: str | None, count: int, gpus: int | None = None, seed: int = 0,
                step_s: float = 1.0, start_wall_s: float = START_WALL_S) -> list[Frame]:
    """``count`` frames ``step_s`` apart on a virtual clock, built by the real sampler."""
    source = SimSource(scenario, gpus=gpus, seed=seed, step_s=step_s, started_wall_s=start_wall_s)
    sampler = Sampler([source], step_s,
                      frame_time=lambda seq: (start_wall_s + seq * step_s, seq * step_s))
    sampler.open()
    try:
        return [sampler.tick() for _ in range(count)]
    finally:
        sampler.close()


# The live ``--demo`` starts this far into its first scenario: the healthy lead-in that sets
# the baseline is already on the plots, and the storm's episode is open on the first screen,
# its cause already named from the ticks it held (at 10 s it was one tick old: "tiny kernels"
# for 3 s, then "oversized request"); the frames before "now" are made at once.
LIVE_LEAD_S = 13.0


def lead_frames(delay_s: float) -> int:
    """How many frames the live demo makes before its first screen."""
    return max(0, round(LIVE_LEAD_S / delay_s))
