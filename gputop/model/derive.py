"""Everything the user sees, derived from the timeline at one frame index.

Live view, pause, replay and ``snapshot --json`` all call ``derive`` (the JSON contract
is ``gputop/export/snapshot.py``'s, over the View); nothing here reads a clock, so the
same frames always give the same view.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, cast

from gputop.model import engine_rates, kv
from gputop.model import latency
from gputop.patterns import CmdlinePattern, PatternError
from gputop.model.detect import DetectState, Episode
from gputop.model.peaks import Peak, peak_for
from gputop.model.plots import Plots
from gputop.model.timeline import Timeline
from gputop.model.vram import VramSplit, split_vram
from gputop.model.point import counter_rate, read_time
from gputop.units import shorten, size_text
from gputop.schema import (EngineSample, Frame, GpuSample, LaunchHist, MigSample, PinnedSample,
                           ProcSample,
                           SourceStatus, ThreadSample)

LAUNCH_WINDOW_S = 10.0
SAMPLED_WINDOW_S = 30.0  # with sampled probes: a few attached seconds (3 at 1 s in 10)
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


def kv_bytes_per_token(engine: EngineSample) -> int | None:
    """From the frame's raw model fields; a recording made before carried the number."""
    if engine.kv_bytes_per_token is not None:
        return engine.kv_bytes_per_token
    return _kv_bytes_cached(tuple(sorted(engine.kv_config.items())), engine.cache_dtype,
                            engine.tensor_parallel)


@functools.lru_cache(maxsize=64)
def _kv_bytes_cached(config: tuple[tuple[str, Any], ...], cache_dtype: str,
                     tp: int | None) -> int | None:
    return kv.bytes_per_token(dict(config), cache_dtype, tp)


def kv_pool_bytes(engine: EngineSample) -> int | None:
    """Per-GPU KV pool: reported bytes, else blocks x block size x KV bytes per token."""
    if engine.kv_pool_bytes is not None:
        return engine.kv_pool_bytes
    per_token = kv_bytes_per_token(engine)
    if per_token is None:
        return None
    if engine.kv_pool_tokens is not None:
        return engine.kv_pool_tokens * per_token
    if engine.num_gpu_blocks is None or engine.block_size is None:
        return None
    return engine.num_gpu_blocks * engine.block_size * per_token


def _pool_provenance(engine: EngineSample) -> str:
    per_token = kv_bytes_per_token(engine)
    how = "" if engine.kv_bytes_per_token is not None else \
        f" (derived from the model config, KV dtype {engine.cache_dtype or 'auto'})"
    if engine.kv_pool_bytes is not None:
        return f"KV pool: {engine.kv_pool_bytes:,} B reported by the engine ({engine.kind})"
    if kv_pool_bytes(engine) is not None and engine.kv_pool_tokens is not None:
        source = "llama-server's --ctx-size (one KV cell per token, allocated at start)" \
            if engine.kind == "llamacpp" else f"{engine.kind} metrics"
        return (f"KV pool: {engine.kv_pool_tokens:,} tokens x "
                f"{size_text(per_token)}/token{how}, from {source}")
    if kv_pool_bytes(engine) is not None:
        return (f"KV pool: {engine.num_gpu_blocks:,} blocks x {engine.block_size} tokens x "
                f"{size_text(per_token)}/token{how}, from {engine.kind} cache config")
    if per_token is None and (engine.num_gpu_blocks or engine.kv_pool_tokens):
        return "KV pool: unknown (KV bytes per token needs the model's config: --model PATH)"
    return "KV pool: unknown (" + NO_POOL.get(engine.kind, "the engine does not report its "
                                                           "cache config") + ")"


# why an engine's page cannot give the KV pool, for the VRAM split's provenance
NO_POOL = {
    "llamacpp": "llama.cpp's /metrics reports no KV pool: it removed kv_cache_usage_ratio and "
                "kv_cache_tokens (llama.cpp #13660); its pool is the context it was started "
                "with (--ctx-size x KV bytes per token), which the page does not carry",
    "tgi": "TGI reports no KV-cache metric",
}


def engine_on_gpu(engine: EngineSample | None, gpu_index: int,
                  processes: tuple[ProcSample, ...]) -> bool:
    if engine is None:
        return False
    if gpu_index in engine.gpu_indices:
        return True
    pids = set(engine.pids)
    return any(p.gpu_index == gpu_index and p.pid in pids for p in processes)


def vram_split(gpu: GpuSample, processes: tuple[ProcSample, ...],
               engine: EngineSample | None, tree: frozenset[int] | None = None) -> VramSplit | None:
    """The card's split; with a pinned ``tree`` the tree's memory is the process part and
    an engine counts only when it belongs to the tree."""
    if gpu.mem_total_bytes is None or gpu.mem_used_bytes is None:
        return None
    # what processes can use: the card less the driver's reserve (NVML v2 reports it apart)
    usable_bytes = gpu.mem_total_bytes - (gpu.mem_reserved_bytes or 0)
    on_gpu = [p for p in processes if p.gpu_index == gpu.index]
    if tree is not None and (engine is None or not set(engine.pids) & tree):
        mine = [p for p in on_gpu if p.pid in tree]
        known = all(p.mem_bytes is not None for p in mine)
        tree_bytes = sum(cast(int, p.mem_bytes) for p in mine) if known else None
        return split_vram(usable_bytes, gpu.mem_used_bytes, tree_bytes,
                          provenance=(f"pinned tree: {len(mine)} process(es) on this GPU, from "
                                      "the per-process list; the rest is other processes",))
    if not engine_on_gpu(engine, gpu.index, processes):
        return split_vram(usable_bytes, gpu.mem_used_bytes,
                          provenance=("used memory: card total from the GPU source; no engine "
                                      "on this GPU, so its contents are unsplit",))
    engine = cast(EngineSample, engine)  # engine_on_gpu: there is one
    engine_procs = [p for p in on_gpu if p.pid in engine.pids]
    engine_bytes = None
    if engine_procs and all(p.mem_bytes is not None for p in engine_procs):
        engine_bytes = sum(cast(int, p.mem_bytes) for p in engine_procs)
    provenance: tuple[str, ...] = (
        f"weights: {size_text(engine.weights_bytes)} per GPU of {engine.model or 'the model'}"
        + (f" ({engine.weights_source}, TP {engine.tensor_parallel or 1})"
           if engine.weights_source else "")
        if engine.weights_bytes is not None
        else "weights: unknown (no safetensors found for the model: --model PATH)",
        _pool_provenance(engine),
        f"KV used: pool x {engine.kind} KV usage {engine.kv_usage_ratio:.1%}"
        if engine.kv_usage_ratio is not None else
        f"KV used: unknown ({engine.kind} reports no KV usage)",
        f"engine process memory: {size_text(engine_bytes)} from the per-process list"
        if engine_bytes is not None else "engine process memory: unknown (not in the process list)",
    )
    if engine.note:
        provenance += (f"note: {engine.note}",)
    return split_vram(usable_bytes, gpu.mem_used_bytes, engine_bytes,
                      engine.weights_bytes, kv_pool_bytes(engine), engine.kv_usage_ratio,
                      provenance)


def pin_from_processes(frame: Frame, pids: tuple[int, ...], pattern: str | None) -> PinnedSample:
    """A pin resolved from the frame's own process list (replay and the demo): the chosen
    processes and every process whose parent chain in the list leads to one of them."""
    try:
        matcher = CmdlinePattern(pattern) if pattern else None
    except PatternError:
        matcher = None
    roots = {p.pid for p in frame.processes
             if p.pid in pids or (matcher and matcher.search(p.cmdline or p.name))}
    parents = {p.pid: p.ppid for p in frame.processes}
    tree = set(roots)
    for pid in parents:
        seen: set[int] = set()
        current: int | None = pid
        while current is not None and current not in seen:
            if current in roots:
                tree.add(pid)
                break
            seen.add(current)
            current = parents.get(current)
    label = next((p.cmdline or p.name for p in frame.processes if p.pid in roots), "")
    # the tree's CPU time from the recorded processes (each pid once: one per GPU it uses)
    cpu = {p.pid: p.cpu_s for p in frame.processes if p.pid in tree and p.cpu_s is not None}
    return PinnedSample(label=shorten(label, 60), pattern=pattern, root_pids=tuple(sorted(roots)),
                        tree_pids=tuple(sorted(tree)),
                        waiting=None if roots else "no such process in this frame",
                        cpu_s=round(sum(cpu.values()), 6) if cpu else None)


def _pinned_view(timeline: Timeline[DetectState], index: int, sample: PinnedSample,
                 pin: tuple[tuple[int, ...], str | None] | None = None) -> PinnedView:
    frame = timeline.frame(index)
    before = timeline.frame(index - 1) if index > 0 else None
    previous = before.pinned if before is not None else None
    if pin is not None and before is not None:  # pinned from the frames: the one before too
        previous = pin_from_processes(before, *pin)
    seconds = frame.time_mono_s - before.time_mono_s if before is not None else 0.0
    same = previous is not None and previous.root_pids == sample.root_pids

    def rate(name: str) -> float | None:
        return counter_rate(getattr(previous, name), getattr(sample, name), seconds) \
            if same else None

    cpu = rate("cpu_s")
    threads = []
    if same and seconds > 0:
        old = {t.tid: t.cpu_s for t in cast(PinnedSample, previous).threads}  # same: known
        for t in sample.threads:
            if t.tid in old:
                threads.append((t, max(0.0, 100.0 * (t.cpu_s - old[t.tid]) / seconds)))
        threads.sort(key=lambda tc: -tc[1])
    return PinnedView(sample=sample, cpu_pct=None if cpu is None else 100.0 * cpu,
                      voluntary_per_s=rate("ctx_voluntary"),
                      involuntary_per_s=rate("ctx_involuntary"), threads=tuple(threads[:8]))


def derive(timeline: Timeline[DetectState], index: int,
           launch_window_s: float = LAUNCH_WINDOW_S,
           pin: tuple[tuple[int, ...], str | None] | None = None,
           plots: Plots | None = None) -> View:
    """The view at ``index``.  ``pin`` (pids, pattern) pins from the frames' own process
    lists (replay, demo); otherwise the frame's pin source decides.  ``plots``: the
    window series up to ``index`` (``Session.view`` passes its log's snapshot)."""
    frame = timeline.frame(index)
    state: DetectState = timeline.state(index)
    pinned_sample = frame.pinned
    if pin is not None:
        pinned_sample = pin_from_processes(frame, *pin)
    tree = frozenset(pinned_sample.tree_pids) if pinned_sample is not None else None
    procs = frame.processes if tree is None else tuple(p for p in frame.processes if p.pid in tree)
    engine = engine_view(timeline, index) if frame.engine is not None else None
    last_engine = None
    if engine is None and state.last_reading is not None:
        earlier = timeline.index_of_seq(state.last_reading.seq)
        if timeline.frame(earlier).seq == state.last_reading.seq:  # still in the ring
            last_engine = engine_view(timeline, earlier, now_mono_s=frame.time_mono_s)
    # the VRAM split needs the engine's layout (weights, pool), which a late reading still
    # gives: an engine that answered late is not "unsplit" memory
    layout = frame.engine or (last_engine.sample if last_engine is not None else None)
    gpu_views: list[GpuView] = []
    for g in frame.gpus:
        on_gpu = tuple(sorted((p for p in procs if p.gpu_index == g.index),
                              key=lambda p: -(p.mem_bytes or 0)))
        gpu_views.append(GpuView(
            sample=g, vram=vram_split(g, frame.processes,
                                      replica_on_gpu(layout, g.index, frame.processes), tree),
            processes=on_gpu,
            migs=tuple(MigView(m, g.index, tuple(p for p in on_gpu if p.mig_index == m.index))
                       for m in g.migs)))
    gpus = tuple(gpu_views)
    launch, launch_window_s, launch_traced_s = _launch(timeline, index, launch_window_s)
    return View(index=index, frame=frame, gpus=gpus, engine=engine,
                launch=launch, launch_window_s=launch_window_s, launch_traced_s=launch_traced_s,
                detector=state, sources=frame.sources,
                pinned=_pinned_view(timeline, index, pinned_sample, pin) if pinned_sample
                else None,
                last_engine=last_engine,
                previous=timeline.frame(index - 1) if index > 0 else None, plots=plots)


def engine_view(timeline: Timeline[DetectState], index: int,
                now_mono_s: float | None = None) -> EngineView:
    """The engine as of frame ``index`` (which must hold an engine reading); its age is
    measured at ``now_mono_s`` (default: that frame's own time)."""
    frame = timeline.frame(index)
    state: DetectState = timeline.state(index)
    p, sample = state.point, cast(EngineSample, frame.engine)  # the frame holds a reading
    gpu_names = [g.name for g in frame.gpus if g.index in sample.gpu_indices] or \
        [g.name for g in frame.gpus]
    now = frame.time_mono_s if now_mono_s is None else now_mono_s
    before = engine_rates.previous_reading(timeline, index)
    seconds = read_time(frame) - read_time(before) if before is not None else 0.0
    age_s = max(0.0, now - read_time(frame))
    replicas = tuple(_replica_view(timeline, index, frame, state, r, before, seconds, age_s)
                     for r in sample.replicas)
    return EngineView(sample, p.tokens_per_s, p.prompt_tokens_per_s, p.requests_per_s,
                      state.baseline_tokens_per_s, latency=dict(p.latency),
                      baseline_latency_s=dict(state.baseline_latency_s),
                      preemptions_per_s=p.preemptions_per_s, flops_per_s=p.flops_per_s,
                      mem_bytes_per_s=p.mem_bytes_per_s,
                      peak=peak_for(gpu_names[0]) if gpu_names else None,
                      age_s=age_s,
                      rates=engine_rates.rates(before.engine if before else None, sample, seconds),
                      gpus=engine_rates.gpus_of(sample, frame.processes), replicas=replicas)


def _replica_view(timeline: Timeline[DetectState], index: int, frame: Frame, state: DetectState,
                  replica: EngineSample, before: Frame | None, seconds: float,
                  age_s: float) -> EngineView:
    """One replica as an engine of its own: its rates, its latency over the detector's
    window, its GPUs and their datasheet peak (no baseline: the detector keeps those)."""
    earlier = engine_rates.replica_of(before.engine if before else None, replica.replica)
    rates = engine_rates.rates(earlier, replica, seconds)
    gpus = engine_rates.gpus_of(replica, frame.processes)
    names = [g.name for g in frame.gpus if g.index in gpus]
    label = replica.replica
    return EngineView(
        replica, rates["tokens_per_s"], rates["prompt_tokens_per_s"], rates["requests_per_s"],
        None, latency=engine_rates.window_latency(
            timeline, index, state.config.latency_window_s,
            lambda e: engine_rates.replica_of(e, label)),
        preemptions_per_s=rates["preemptions_per_s"], flops_per_s=rates["flops_per_s"],
        mem_bytes_per_s=rates["mem_bytes_per_s"], peak=peak_for(names[0]) if names else None,
        age_s=age_s, rates=rates, gpus=gpus)


def replica_on_gpu(engine: EngineSample | None, gpu_index: int,
                   processes: tuple[ProcSample, ...]) -> EngineSample | None:
    """The replica of ``engine`` whose processes are on this GPU (its own KV pool and
    usage split the card), else the engine as a whole."""
    if engine is None or not engine.replicas:
        return engine
    for replica in engine.replicas:
        if engine_on_gpu(replica, gpu_index, processes):
            return replica
    return engine


def _launch(timeline: Timeline[DetectState], index: int,
            window_s: float) -> tuple[tuple[ApiLatency, ...], float, float | None]:
    """Per-API stats over the window, the window used and, when the probes were sampled
    (--ebpf-duty), the seconds of it they were attached (None: all of it).  A sampled
    window is widened to SAMPLED_WINDOW_S so that it holds a few attached seconds; call
    rates divide by the attached time, durations need no scaling."""
    frames = timeline.frames_since(index, window_s)
    if any(f.launch_armed_s is not None for f in frames):
        window_s = max(window_s, SAMPLED_WINDOW_S)
        frames = timeline.frames_since(index, window_s)
    traced_s = None
    if len(frames) < 2:
        seconds = None
    else:  # the first frame's histograms cover the tick before it
        seconds = frames[-1].time_mono_s - frames[0].time_mono_s
        if any(f.launch_armed_s is not None for f in frames[1:]):
            traced_s = sum(f.launch_armed_s if f.launch_armed_s is not None
                           else f.time_mono_s - before.time_mono_s
                           for before, f in zip(frames, frames[1:]))
        frames = frames[1:]
    per_api: dict[str, list[LaunchHist]] = {}
    for frame in frames:
        for hist in frame.launch:
            per_api.setdefault(hist.api, []).append(hist)
    out = []
    for api, hists in per_api.items():
        buckets = latency.merge(h.buckets for h in hists)
        # off-CPU comes from a scheduler tracepoint, which stays attached
        rate_s = seconds if traced_s is None or api == OFF_CPU else traced_s
        stats = latency.stats(buckets, sum(h.count for h in hists), sum(h.sum_ns for h in hists),
                              max(h.max_ns for h in hists), rate_s)
        out.append(ApiLatency(api, stats, buckets))
    out.sort(key=lambda a: (a.api == OFF_CPU, -a.stats.calls))
    return tuple(out), window_s, traced_s
