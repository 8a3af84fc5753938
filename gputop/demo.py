"""Deterministic frame sequences from the simulator, for screenshots, tests and benchmarks,
and how far into its story the live demo starts."""

from __future__ import annotations

import dataclasses

from gputop.sampler import Sampler
from gputop.schema import Frame
from gputop.sources.engine_merge import merge_engines
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


RANK_PID_STRIDE = 100_000  # rank r's processes are numbered r x this above its own trace's


def data_parallel(ranks: list[list[Frame]]) -> list[Frame]:
    """One page of data-parallel engines (vLLM's ``engine`` label) from single-GPU frame
    sequences of one length: rank r's GPU becomes GPU r and its processes its own (pids
    shifted by r x RANK_PID_STRIDE), its engine reading the replica ``engine=r``, the
    page the ranks merged as several endpoints are (``engine_merge.merge_engines``)."""
    out = []
    for seq, frames in enumerate(zip(*ranks, strict=True)):
        gpus, processes, replicas = [], [], []
        for r, f in enumerate(frames):
            shift = r * RANK_PID_STRIDE
            gpus += [dataclasses.replace(g, index=r, uuid=f"GPU-{r}") for g in f.gpus]
            processes += [dataclasses.replace(p, gpu_index=r, pid=p.pid + shift,
                                              ppid=None if p.ppid is None else p.ppid + shift)
                          for p in f.processes]
            if f.engine is not None:
                replicas.append(dataclasses.replace(
                    f.engine, replica=f"engine={r}", gpu_indices=(r,),
                    pids=tuple(p + shift for p in f.engine.pids)))
        # summed as several endpoints are, each still the replica it is
        merged = merge_engines(replicas)
        page = None if merged is None else dataclasses.replace(
            merged, url=replicas[0].url, replica="", replicas=tuple(replicas))
        out.append(dataclasses.replace(frames[0], seq=seq, gpus=tuple(gpus),
                                       processes=tuple(processes), engine=page))
    return out
