"""Everything the user sees, derived from the timeline at one frame index.

Live view, pause, replay and ``snapshot --json`` all call ``derive`` (the JSON contract
is ``gputop/export/snapshot.py``'s, over the View); nothing here reads a clock, so the
same frames always give the same view.
"""

from __future__ import annotations

from typing import cast

from gputop.model import engine_rates, latency
from gputop.model.detect import DetectState, reading_stands
from gputop.model.kvpool import kv_bytes_per_token, kv_pool_bytes
from gputop.model.peaks import peak_for
from gputop.model.plots import Plots
from gputop.model.point import counter_rate, read_time, shown_tokens_per_s, throttled
from gputop.model.provenance import engine_on_gpu, vram_split
from gputop.model.timeline import Timeline
from gputop.model.views import (OFF_CPU, ApiLatency, EngineView, GpuView, MigView,
                                PinnedView, View, selectable)
from gputop.patterns import CmdlinePattern, PatternError
from gputop.schema import EngineSample, Frame, LaunchHist, PinnedSample, ProcSample
from gputop.units import shorten

# The views (model/views.py), the KV pool (model/kvpool.py) and the VRAM split with its
# provenance text (model/provenance.py) are modules of their own; what callers import
# from here stays importable here.
__all__ = ["OFF_CPU", "EngineView", "GpuView", "MigView", "View", "derive",
           "kv_bytes_per_token", "kv_pool_bytes", "selectable", "vram_split"]

LAUNCH_WINDOW_S = 10.0
SAMPLED_WINDOW_S = 30.0  # with sampled probes: a few attached seconds (3 at 1 s in 10)


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
    held = throttled(cast(PinnedSample, previous), sample)["tree_throttled_share"] \
        if same else None
    return PinnedView(sample=sample, cpu_pct=None if cpu is None else 100.0 * cpu,
                      voluntary_per_s=rate("ctx_voluntary"),
                      involuntary_per_s=rate("ctx_involuntary"), threads=tuple(threads[:8]),
                      throttled_share=held)


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
    return EngineView(sample, shown_tokens_per_s(p), p.prompt_tokens_per_s, p.requests_per_s,
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
    # (a window of frames carrying one reading holds that reading's observations: it
    # stands as the detector holds the page's; older, an engine that stopped answering,
    # it shows none)
    window_s = state.config.latency_window_s
    stale = not reading_stands(frame.time_mono_s - read_time(frame), seconds, window_s)
    return EngineView(
        replica, rates["tokens_per_s"], rates["prompt_tokens_per_s"], rates["requests_per_s"],
        None, latency={} if stale else engine_rates.window_latency(
            timeline, index, window_s, lambda e: engine_rates.replica_of(e, label)),
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
