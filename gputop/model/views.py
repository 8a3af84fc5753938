"""The View and its parts: everything a screen, an export or an alert reads at one frame.

Immutable values made by ``derive`` (``model/derive.py``); a pane is a function of a View.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from gputop.model import latency
from gputop.model.detect import DetectState, Episode
from gputop.model.kvpool import kv_pool_bytes
from gputop.model.peaks import Peak
from gputop.model.plots import Plots
from gputop.model.vram import VramSplit
from gputop.schema import (EngineSample, Frame, GpuSample, MigSample, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

OFF_CPU = "off-cpu"  # the pseudo-API under which the eBPF source reports off-CPU time


@dataclass(frozen=True)
class MigView:
    """A MIG instance as every view shows it: its reading and the processes on it."""

    sample: MigSample
    parent_index: int
    processes: tuple[ProcSample, ...]

    @property
    def label(self) -> str:
        """ "GPU 0 MIG 1 (1g.10gb, GI 1 CI 0)"."""
        s = self.sample
        ids = "" if s.gpu_instance_id is None else f", GI {s.gpu_instance_id} CI " \
            f"{'?' if s.compute_instance_id is None else s.compute_instance_id}"
        return f"GPU {self.parent_index} MIG {s.index} ({s.profile or s.name or '?'}{ids})"


@dataclass(frozen=True)
class GpuView:
    sample: GpuSample
    vram: VramSplit | None
    processes: tuple[ProcSample, ...]
    migs: tuple[MigView, ...] = ()  # the instances of a GPU in MIG mode

    def mig(self, index: int | None) -> MigView | None:
        return next((m for m in self.migs if m.sample.index == index), None)

    def instance(self, index: int) -> GpuView | None:
        """MIG instance ``index`` seen as a GPU of its own, for the panes that show one GPU:
        its memory, activity and processes; GPU-Util unknown (not given per instance);
        power, temperature and clocks are the board's, shared by every instance."""
        mig = self.mig(index)
        if mig is None:
            return None
        m, s = mig.sample, self.sample
        missing = {**s.missing, **m.missing, "util_gpu_pct": MIG_UTIL, "util_mem_pct": MIG_UTIL}
        sample = dataclasses.replace(
            s, name=f"{s.name} MIG {m.profile or m.index}", uuid=m.uuid, util_gpu_pct=None,
            util_mem_pct=None, util_gpu_samples_pct=(), sm_active_pct=m.sm_active_pct,
            sm_occupancy_pct=m.sm_occupancy_pct, dram_bw_pct=m.dram_bw_pct,
            tensor_pct=m.tensor_pct, mem_total_bytes=m.mem_total_bytes,
            mem_used_bytes=m.mem_used_bytes, mem_reserved_bytes=None, missing=missing, migs=())
        return GpuView(sample=sample, vram=None, processes=mig.processes)


MIG_UTIL = "not given per MIG instance (NVML)"


def selectable(gpus: tuple[GpuView, ...]) -> list[tuple[int, int | None]]:
    """What [ and ] step through: each GPU, then each of its MIG instances."""
    return [target for g in gpus for target in
            [(g.sample.index, None)] + [(g.sample.index, m.sample.index) for m in g.migs]]


@dataclass(frozen=True)
class EngineView:
    sample: EngineSample
    tokens_per_s: float | None
    prompt_tokens_per_s: float | None
    requests_per_s: float | None
    baseline_tokens_per_s: float | None
    # p50 / p99 seconds over the detector's latency window, by histogram name
    latency: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    baseline_latency_s: dict[str, float] = field(default_factory=dict)
    preemptions_per_s: float | None = None
    flops_per_s: float | None = None
    mem_bytes_per_s: float | None = None
    peak: Peak | None = None  # the datasheet peak of the engine's GPU
    age_s: float = 0.0  # how old the reading is at the view's frame
    # the newer families' rates and ratios (model/engine_rates.py), by name
    rates: dict[str, float | None] = field(default_factory=dict)
    gpus: tuple[int, ...] = ()  # the GPUs its processes are on (NVML's process lists)
    # data-parallel engines / models behind the endpoint, each on its own GPUs
    replicas: tuple[EngineView, ...] = ()

    @property
    def kv_pool_bytes(self) -> int | None:
        return kv_pool_bytes(self.sample)

    @property
    def mfu_ratio(self) -> float | None:
        """Estimated model FLOPs/s per GPU over the card's dense bf16 peak."""
        if self.flops_per_s is None or self.peak is None:
            return None
        return self.flops_per_s / (self.peak.tflops_bf16 * 1e12)

    @property
    def mbu_ratio(self) -> float | None:
        """Estimated bytes/s per GPU over the card's HBM bandwidth."""
        if self.mem_bytes_per_s is None or self.peak is None:
            return None
        return self.mem_bytes_per_s / (self.peak.mem_tb_per_s * 1e12)

    def p99_s(self, name: str) -> float | None:
        return self.latency.get(name, (None, None))[1]

    def p50_s(self, name: str) -> float | None:
        return self.latency.get(name, (None, None))[0]


@dataclass(frozen=True)
class ApiLatency:
    api: str
    stats: latency.LatencyStats
    buckets: dict[int, int]


@dataclass(frozen=True)
class PinnedView:
    """The pinned tree and what its CPU did over the last tick."""

    sample: PinnedSample
    cpu_pct: float | None
    voluntary_per_s: float | None
    involuntary_per_s: float | None
    threads: tuple[tuple[ThreadSample, float], ...]  # busiest first, with CPU %
    throttled_share: float | None = None  # CFS periods its cgroup's quota held it back in

    @property
    def title(self) -> str:
        s = self.sample
        if not s.root_pids:
            return f"pinned: {s.waiting or 'nothing'}"
        children = len(s.tree_pids) - len(s.root_pids)
        pids = ",".join(str(p) for p in s.root_pids[:3])
        return (f"pinned: {s.label} (pid {pids}" + (f" + {children} children" if children else "")
                + ")")


@dataclass(frozen=True)
class View:
    index: int
    frame: Frame
    gpus: tuple[GpuView, ...]
    engine: EngineView | None
    launch: tuple[ApiLatency, ...]  # CUDA APIs, busiest first
    launch_window_s: float
    detector: DetectState
    sources: dict[str, SourceStatus]
    pinned: PinnedView | None = None
    # the newest engine reading at or before this frame, when this frame has none
    # (the engine answered nothing fresh enough): shown with its age, never as current
    last_engine: EngineView | None = None
    # seconds of the launch window the probes were attached, when sampled (--ebpf-duty)
    launch_traced_s: float | None = None
    # the frame before this one (rates a pane shows over the last tick: CPU%, switches/s)
    previous: Frame | None = None
    # the window series of the plots, up to this frame (the session keeps them per tick)
    plots: Plots | None = None

    @property
    def interval_s(self) -> float:
        """Seconds between this frame and the one before it (1 when unknown)."""
        if self.previous is None:
            return 1.0
        step = self.frame.time_mono_s - self.previous.time_mono_s
        return step if step > 0 else 1.0

    @property
    def alert(self) -> Episode | None:
        return self.detector.active

    def alert_for(self, gpu_index: int) -> Episode | None:
        """The open episode about this GPU, if any (several subjects may have one)."""
        return next((e for e in self.detector.actives if e.covers(gpu_index)), None)

    def alert_covers(self, gpu_index: int) -> bool:
        return self.alert_for(gpu_index) is not None

    def gpu(self, index: int) -> GpuView | None:
        for g in self.gpus:
            if g.sample.index == index:
                return g
        return None
