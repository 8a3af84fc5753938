"""The per-tick numbers derived from consecutive frames.

One ``Point`` per frame is what both the detector fold and the view read, so the
rate arithmetic (reset-safe counters, timed by each reading's own clock) lives here
once.  A tick whose engine reading is the previous one carried over (the engine
answered late) keeps the previous rates: the newest known interval, not a made-up 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, cast

from gputop.buckets import bucket_bounds_ns
from gputop.model import enginehist, latency
from gputop.model.enginehist import HistDelta
from gputop.model.kvpool import kv_pool_bytes
from gputop.model.peaks import peak_for
from gputop.schema import EngineSample, Frame, LaunchHist, PinnedSample, ProcSample


@dataclass(frozen=True, slots=True)
class ProcRef:
    """A GPU process as the diagnosis needs it: who it is, whose child, and what it takes."""

    pid: int
    ppid: int | None
    sm_util_pct: float | None
    mem_bytes: int | None
    cpu_pct: float | None = None  # over the last tick, from cumulative CPU seconds
    name: str = ""
    cmdline: str = ""
    mig_index: int | None = None  # its MIG instance: another instance's work cannot share its SMs


@dataclass(frozen=True, slots=True)
class Point:
    time_mono_s: float
    time_wall_s: float
    engine_kind: str | None
    tokens_per_s: float | None
    prompt_tokens_per_s: float | None
    requests_per_s: float | None
    requests_running: float | None
    requests_waiting: float | None
    kv_usage_ratio: float | None
    util_pct: dict[int, float]  # per GPU index, only GPUs that reported it
    sm_active_pct: dict[int, float]
    dram_bw_pct: dict[int, float]
    throttle: dict[int, tuple[str, ...]]
    launch_p50_us: float | None  # over all launch APIs and processes, this tick
    launch_p99_us: float | None
    host_cpu_pct: float | None
    clock_mhz: dict[int, float] = field(default_factory=dict)
    fan_pct: dict[int, float] = field(default_factory=dict)  # only boards with their own fan
    tensor_pct: dict[int, float] = field(default_factory=dict)
    # the engine reading behind this point: when it was taken, and whether it is new
    engine_read_mono_s: float | None = None
    engine_fresh: bool = False
    # observations of the engine's histograms since its previous reading (fresh ones only)
    engine_hist: dict[str, HistDelta] = field(default_factory=dict)
    # "itl" in engine_hist is each finished request's mean time per output token: an engine
    # with no inter-token histogram that times requests so (TGI)
    itl_per_request: bool = False
    preemptions_per_s: float | None = None
    flops_per_s: float | None = None  # vLLM's estimate, per GPU
    mem_bytes_per_s: float | None = None  # estimated bytes read + written, per GPU
    # the process tree behind the throughput (the engine's, else the pinned one) on the CPU
    tree_cpu_pct: float | None = None
    # the share of the tree's CFS periods in which its cgroup's CPU quota held it back, and
    # that quota in cores (None: no quota, or none readable)
    tree_throttled_share: float | None = None
    tree_quota_cores: float | None = None
    tree_involuntary_per_s: float | None = None
    busiest_thread_pct: float | None = None
    cpu_pressure_pct: float | None = None
    run_queue: int | None = None  # the host's runnable tasks (/proc/stat: all its CPUs)
    cpus: int | None = None  # the CPUs the tree may run on (its affinity), else the host's
    host_cpus: int | None = None  # the host's CPUs, which the run queue is counted over
    # filled by the detector: p50 / p99 seconds over its latency window, by histogram name
    latency: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    # ...taken from a reading older than the window, standing until the next is due (an
    # engine read every 10-15 s): judged by, never learned again into the baseline
    latency_stood: bool = False
    # observations in the window beyond (firing, clearing) x the latency baseline, by name
    latency_slow: dict[str, tuple[float, float]] = field(default_factory=dict)
    # per GPU: what else the diagnosis reads of the card and of the processes on it
    temp_c: dict[int, float] = field(default_factory=dict)
    # NVML's memory utilization: the share of time the memory controller was busy (what a
    # GPU without GPM, before Hopper and without DCGM, says of its memory traffic)
    mem_util_pct: dict[int, float] = field(default_factory=dict)
    power_w: dict[int, float] = field(default_factory=dict)
    # NVLink traffic, received and sent: a job's ranks move alike through their collectives
    nvlink_mib_per_s: dict[int, float] = field(default_factory=dict)
    power_limit_w: dict[int, float] = field(default_factory=dict)  # the enforced cap
    mem_used_bytes: dict[int, int] = field(default_factory=dict)
    util_samples_pct: dict[int, tuple[float, ...]] = field(default_factory=dict)
    gpu_procs: dict[int, tuple[ProcRef, ...]] = field(default_factory=dict)
    # the engine: who it is (a restart shows as a new url, new pids or counters going down)
    engine_url: str | None = None
    engine_pids: tuple[int, ...] = ()
    engine_gpus: tuple[int, ...] = ()  # reported, else where its processes are
    counters_reset: bool = False
    cached_prompt_tokens_per_s: float | None = None
    # seconds the engine spent generating / processing prompts, per second (llama.cpp's
    # tokens_predicted_seconds_total and prompt_seconds_total; summed over its slots)
    decode_s_per_s: float | None = None
    prefill_s_per_s: float | None = None
    retractions_per_s: float | None = None
    # speculative decoding: draft tokens proposed and accepted per second (vLLM, llama.cpp),
    # or the acceptance the engine reports as a gauge (SGLang), 0..1
    spec_drafted_per_s: float | None = None
    spec_accepted_per_s: float | None = None
    spec_accept_gauge: float | None = None
    work_unit: str = ""
    # a counter that moves once per step (a trainer's): its last two changes
    work_total: float | None = None
    work_step_per_s: float | None = None  # the rate over the last whole steps
    work_step_s: float | None = None  # the longest of those steps (as the ticks time them)
    work_changes: tuple[tuple[float, float], ...] = ()  # (read time, total) of the steps
    # the pinned tree (pids) and its busiest thread's CPU over the last tick
    pinned_pids: frozenset[int] = frozenset()
    pinned_thread_pct: float | None = None
    launch_measured: bool = False  # eBPF launch histograms are in the frame
    # p99 of each launch API with enough calls this tick (a preempted launch thread shows
    # in its own API's tail first: graph launches are few, kernel launches many)
    launch_p99_by_api_us: dict[str, float] = field(default_factory=dict)
    # the longest launch call this tick (exact, from the probes' per-interval max) and how
    # many launches took 1 ms or more: a few preempted calls in a thousand move no p99
    launch_max_us: float | None = None
    launch_slow_calls: int = 0
    # the share of the tick a launching process spent inside calls of 1 ms or more (the
    # worst process): 20 calls a second stalled 10 ms each cost a launch-bound loop a fifth
    # of its time, and move neither the p99 nor, once learned, the longest call
    launch_stalled_share: float | None = None
    # the longest launch call this tick of the processes on each GPU (by pid): a tensor-
    # parallel engine's one preempted rank is named by its own process's calls
    launch_max_by_gpu_us: dict[int, float] = field(default_factory=dict)
    sync_p50_us: float | None = None  # cudaStreamSynchronize / cudaDeviceSynchronize
    # a page of data-parallel engines (or several endpoints) on GPUs of their own: each
    # replica's point, by its label, so each is judged as the engine it is (replica_points)
    replicas: tuple[tuple[str, Point], ...] = ()
    # what one decode step reads and what a prompt token costs, per GPU: the weights and
    # the KV pool (its used share is kv_usage_ratio), and the card's datasheet peak
    weights_bytes: int | None = None
    kv_pool_bytes: int | None = None
    peak_tflops: float | None = None

    def replica(self, label: str) -> Point | None:
        for name, p in self.replicas:
            if name == label:
                return p
        return None

    @property
    def work_changed_mono_s(self) -> float | None:
        """When the step counter last moved (its first reading, before it has)."""
        return self.work_changes[-1][0] if self.work_changes else None

    @property
    def compute_prompt_tokens_per_s(self) -> float | None:
        """Prompt tokens the engine actually computed: prefix-cache hits are not prefill work."""
        if self.prompt_tokens_per_s is None:
            return None
        return max(0.0, self.prompt_tokens_per_s - (self.cached_prompt_tokens_per_s or 0.0))


def counter_rate(previous: float | None, current: float | None, seconds: float) -> float | None:
    """Per-second increase of a cumulative counter, Prometheus-style: a drop means a reset
    (the counter restarted from 0), so the increase is the new value, never negative."""
    if previous is None or current is None or not seconds > 0:
        return None
    increase = current - previous if current >= previous else current
    rate = increase / seconds
    return rate if math.isfinite(rate) else None


def read_time(frame: Frame) -> float:
    """When the frame's engine counters were read (the frame's time for older frames)."""
    engine = frame.engine
    if engine is not None and engine.time_mono_s is not None:
        return engine.time_mono_s
    return frame.time_mono_s


def _same_engine(a: EngineSample | None, b: EngineSample | None) -> bool:
    return a is not None and b is not None and (a.kind, a.url) == (b.kind, b.url)


def _previous_reading(frames: list[Frame], last_reading: Frame | None) -> Frame | None:
    """The newest earlier frame holding an earlier reading of the same engine: among the
    recent frames, else the last one the fold saw (after a gap longer than they cover)."""
    current = frames[-1]
    t = read_time(current)
    for frame in reversed(frames[:-1]):
        if _same_engine(frame.engine, current.engine) and read_time(frame) < t:
            return frame
    if last_reading is not None and _same_engine(last_reading.engine, current.engine) \
            and read_time(last_reading) < t:
        return last_reading
    return None


ENGINE_RATES = ("tokens_per_s", "prompt_tokens_per_s", "requests_per_s", "preemptions_per_s",
                "flops_per_s", "mem_bytes_per_s", "tree_cpu_pct", "tree_involuntary_per_s",
                "busiest_thread_pct", "cached_prompt_tokens_per_s", "retractions_per_s",
                "spec_drafted_per_s", "spec_accepted_per_s", "decode_s_per_s", "prefill_s_per_s",
                "tree_throttled_share", "tree_quota_cores")
# a counter below its previous reading means the engine restarted
_RESET_COUNTERS = ("generation_tokens_total", "prompt_tokens_total", "requests_finished_total")


def throttled(before: EngineSample | PinnedSample, now: EngineSample | PinnedSample
              ) -> dict[str, float | None]:
    """The share of the CFS periods since ``before`` in which the tree's CPU quota ran out
    (a reset or a moved cgroup reads as unknown), and the quota."""
    share = None
    if now.cpu_quota_cores is not None and before.cpu_quota_cores is not None \
            and now.cpu_periods is not None and before.cpu_periods is not None \
            and now.cpu_throttled_periods is not None \
            and before.cpu_throttled_periods is not None:
        periods = now.cpu_periods - before.cpu_periods
        held = now.cpu_throttled_periods - before.cpu_throttled_periods
        if periods > 0 and 0 <= held <= periods:
            share = held / periods
    return {"tree_throttled_share": share, "tree_quota_cores": now.cpu_quota_cores}


def _engine_rates(before: EngineSample, now: EngineSample, seconds: float) -> dict[str, Any]:
    def rate(name: str) -> float | None:
        return counter_rate(getattr(before, name), getattr(now, name), seconds)

    written = None
    if now.write_bytes_total is not None or now.read_bytes_total is not None:
        reads, writes = rate("read_bytes_total"), rate("write_bytes_total")
        written = None if reads is None and writes is None else (reads or 0.0) + (writes or 0.0)
    cpu = rate("cpu_s")
    busiest = rate("busiest_thread_cpu_s") if before.busiest_thread == now.busiest_thread \
        and now.busiest_thread else None
    return {
        "tokens_per_s": rate("generation_tokens_total"),
        "prompt_tokens_per_s": rate("prompt_tokens_total"),
        "requests_per_s": rate("requests_finished_total"),
        "preemptions_per_s": rate("preemptions_total"),
        "flops_per_s": rate("flops_total"),
        "mem_bytes_per_s": written,
        "tree_cpu_pct": None if cpu is None else 100.0 * cpu,
        **throttled(before, now),
        "tree_involuntary_per_s": rate("ctx_involuntary"),
        "busiest_thread_pct": None if busiest is None else 100.0 * busiest,
        "cached_prompt_tokens_per_s": rate("prompt_tokens_cached_total"),
        "retractions_per_s": rate("retracted_requests_total"),
        "spec_drafted_per_s": rate("spec_draft_tokens_total"),
        "spec_accepted_per_s": rate("spec_accepted_tokens_total"),
        "decode_s_per_s": rate("decode_seconds_total"),
        "prefill_s_per_s": rate("prefill_seconds_total"),
    }


def _reset(before: EngineSample, now: EngineSample) -> bool:
    return any(getattr(before, n) is not None and getattr(now, n) is not None
               and getattr(now, n) < getattr(before, n) for n in _RESET_COUNTERS)


SLOW_CALL_NS = 1_000_000  # a launch call this long was descheduled (a launch takes us)
WORK_WINDOW_S = 8.0  # a trainer's rate over the whole steps of about this long


def _work(engine: EngineSample, read_s: float, previous: Point | None) -> dict[str, Any]:
    """A counter that moves once per step (a trainer's): the rate over the whole steps of the
    last ``WORK_WINDOW_S``, never the 0-or-a-whole-step of one tick, nor one step timed by
    the ticks it fell between (1.36 s steps read at 1 s ticks come 1, 1, 2 s apart)."""
    total = engine.generation_tokens_total
    out = {"work_total": total, "work_step_per_s": None, "work_step_s": None,
           "work_changes": ((read_s, total),) if total is not None else ()}
    if total is None or previous is None or previous.work_total is None \
            or previous.engine_url != engine.url:
        return out
    if total == previous.work_total:
        return {"work_total": total, "work_step_per_s": previous.work_step_per_s,
                "work_step_s": previous.work_step_s, "work_changes": previous.work_changes}
    if total < previous.work_total or previous.work_changed_mono_s is None \
            or not read_s > previous.work_changed_mono_s:
        return out
    changes = previous.work_changes + ((read_s, total),)
    # back from the newest step while the span is short of the window, never across a gap
    # far longer than the newest (a checkpoint's pause) nor one at another pace (a stall
    # starting): whole steps falling between ticks move a gap's rate 2x at most (one step
    # or two in a tick, a step over one tick or two)
    newest, k = read_s - changes[-2][0], len(changes) - 2
    pace = (total - changes[-2][1]) / newest
    while k > 0 and read_s - changes[k][0] < WORK_WINDOW_S:
        gap = changes[k][0] - changes[k - 1][0]
        rate = (changes[k][1] - changes[k - 1][1]) / gap
        if gap > 3.0 * newest or not pace / 2.5 <= rate <= 2.5 * pace:
            break
        k -= 1
    changes = changes[k:]
    (first_s, first), gaps = changes[0], [b[0] - a[0] for a, b in zip(changes, changes[1:])]
    return {**out, "work_step_per_s": (total - first) / (read_s - first_s),
            "work_step_s": max(gaps), "work_changes": changes}


def work_since_s(p: Point) -> float | None:
    """Seconds from the step counter's last move to ``p``'s engine reading (None where the
    steps or the reading are unknown)."""
    if p.work_step_s is None or p.work_changed_mono_s is None or p.engine_read_mono_s is None:
        return None
    return p.engine_read_mono_s - p.work_changed_mono_s


def work_rate_now(p: Point) -> float | None:
    """The step-based rate as of ``p``: the last whole steps', or less once the next step is
    overdue (half again the longest recent step without a change): a stall shows as the
    time since the last step grows."""
    rate, step_s, since = p.work_step_per_s, p.work_step_s, work_since_s(p)
    if rate is None or step_s is None or since is None:
        return rate
    return rate if since <= 1.5 * step_s else rate * step_s / since


def shown_tokens_per_s(p: Point) -> float | None:
    """The tokens/s a reader is shown: a trainer's over whole steps (work_rate_now), the rate
    the detector judges, never the 0-or-a-whole-step of one tick (the pane read "0.0 train
    tok/s" while the banner said 8,228); an engine's per tick."""
    if p.engine_kind == "trainer":
        step = work_rate_now(p)
        if step is not None:
            return step
    return p.tokens_per_s


def _hist_deltas(before: EngineSample | None, now: EngineSample) -> dict[str, HistDelta]:
    old = {h.name: h for h in before.histograms} if before is not None else {}
    out = {}
    for hist in now.histograms:
        if before is None:
            continue  # the first reading holds everything since the engine started
        d = enginehist.delta(old.get(hist.name), hist)
        if d is not None:
            out[hist.name] = d
    return out


def _engine_part(frames: list[Frame], previous_point: Point | None,
                 last_reading: Frame | None) -> dict[str, Any]:
    """The fields of the point of ``frames[-1]`` that come from its engine reading: rates
    since the previous reading, histogram deltas, who the engine is (a replica's point is
    the page's with these replaced)."""
    frame = frames[-1]
    engine = frame.engine
    earlier = frames[-2] if len(frames) >= 2 else None
    rates: dict[str, Any] = dict.fromkeys(ENGINE_RATES)
    hist: dict[str, HistDelta] = {}
    fresh = engine is not None
    reset = False
    work: dict[str, Any] = {}
    # TGI times no token, only each request's mean time per token: that mean is the
    # request's ITL, and the only per-token latency it shows (a prompt prefilled between
    # decode steps stalls every running request's tokens)
    names = {h.name for h in engine.histograms} if engine is not None else set()
    per_request_itl = "tpot" in names and "itl" not in names
    if engine is not None:
        carried = (earlier is not None and _same_engine(earlier.engine, engine)
                   and read_time(earlier) == read_time(frame))
        if carried:
            fresh = False
            if previous_point is not None:
                rates = {name: getattr(previous_point, name) for name in ENGINE_RATES}
        else:
            before = _previous_reading(frames, last_reading)
            if before is not None:  # a previous reading has an engine (_previous_reading)
                before_engine = cast(EngineSample, before.engine)
                rates = _engine_rates(before_engine, engine, read_time(frame) - read_time(before))
                reset = _reset(before_engine, engine)
            hist = _hist_deltas(before.engine if before is not None else None, engine)
            if per_request_itl and "tpot" in hist:
                hist["itl"] = hist["tpot"]
        if engine.kind == "trainer" or engine.work_unit:
            work = _work(engine, read_time(frame), previous_point)
    engine_gpus: tuple[int, ...] = ()
    if engine is not None:
        engine_gpus = tuple(sorted(set(engine.gpu_indices) or {
            p.gpu_index for p in frame.processes if p.pid in set(engine.pids)}))
    return {
        **rates, **work,
        "engine_kind": engine.kind if engine else None,
        "requests_running": engine.requests_running if engine else None,
        "requests_waiting": engine.requests_waiting if engine else None,
        "kv_usage_ratio": engine.kv_usage_ratio if engine else None,
        "engine_read_mono_s": read_time(frame) if engine else None,
        "engine_fresh": fresh,
        "engine_hist": hist,
        "itl_per_request": per_request_itl,
        "engine_url": engine.url if engine else None,
        "spec_accept_gauge": engine.spec_accept_ratio if engine else None,
        "engine_pids": tuple(engine.pids) if engine else (),
        "engine_gpus": engine_gpus,
        "counters_reset": reset,
        "work_unit": engine.work_unit if engine else "",
        "weights_bytes": engine.weights_bytes if engine else None,
        "kv_pool_bytes": kv_pool_bytes(engine) if engine else None,
        "peak_tflops": _peak_tflops(frame, engine_gpus) if engine else None,
    }


def _peak_tflops(frame: Frame, gpus: tuple[int, ...]) -> float | None:
    """The dense bf16 peak of the engine's first GPU (else the frame's first)."""
    names = [g.name for g in frame.gpus if not gpus or g.index in gpus]
    found = peak_for(names[0]) if names else None
    return found.tflops_bf16 if found else None


def _link_mib_s(rx: float | None, tx: float | None) -> float | None:
    """NVLink traffic both ways, or None where neither way is read (or a way reads NaN)."""
    if rx is None and tx is None:
        return None
    total = (rx or 0.0) + (tx or 0.0)
    return total if math.isfinite(total) else None


def point(frames: list[Frame], previous_point: Point | None = None,
          last_reading: Frame | None = None) -> Point:
    """The point of ``frames[-1]``; earlier frames (oldest first), or ``last_reading``,
    supply the previous reading of each counter."""
    frame = frames[-1]
    earlier = frames[-2] if len(frames) >= 2 else None
    part = _engine_part(frames, previous_point, last_reading)

    # Synchronize calls wait for the GPU by design; only launches say anything about jitter.
    buckets = latency.merge(h.buckets for h in frame.launch if "Launch" in h.api)
    sync = latency.merge(h.buckets for h in frame.launch if "Synchronize" in h.api)
    host = frame.host
    pinned = frame.pinned
    seconds = frame.time_mono_s - earlier.time_mono_s if earlier is not None else 0.0
    same_pin = pinned is not None and earlier is not None and earlier.pinned is not None \
        and earlier.pinned.root_pids == pinned.root_pids
    if part["tree_involuntary_per_s"] is None and same_pin:
        # same_pin: both frames have a pinned sample
        before_pin = cast(PinnedSample, cast(Frame, earlier).pinned)
        now_pin = cast(PinnedSample, pinned)
        part["tree_involuntary_per_s"] = counter_rate(
            before_pin.ctx_involuntary, now_pin.ctx_involuntary, seconds)
        cpu = counter_rate(before_pin.cpu_s, now_pin.cpu_s, seconds)
        part["tree_cpu_pct"] = None if cpu is None else 100.0 * cpu
    if part["tree_throttled_share"] is None and same_pin:
        part.update(throttled(cast(PinnedSample, cast(Frame, earlier).pinned),
                              cast(PinnedSample, pinned)))
    pressure = host.cpu_pressure_some_pct if host else None
    if pressure is None and pinned is not None:
        pressure = pinned.cpu_pressure_some_pct
    procs = _gpu_procs(frame.processes, earlier.processes if earlier is not None else (), seconds)
    return Point(
        time_mono_s=frame.time_mono_s,
        time_wall_s=frame.time_wall_s,
        util_pct={g.index: g.util_gpu_pct for g in frame.gpus if g.util_gpu_pct is not None},
        sm_active_pct={g.index: g.sm_active_pct for g in frame.gpus if g.sm_active_pct is not None},
        dram_bw_pct={g.index: g.dram_bw_pct for g in frame.gpus if g.dram_bw_pct is not None},
        tensor_pct={g.index: g.tensor_pct for g in frame.gpus if g.tensor_pct is not None},
        throttle={g.index: g.throttle for g in frame.gpus if g.throttle},
        clock_mhz={g.index: g.sm_clock_mhz for g in frame.gpus if g.sm_clock_mhz is not None},
        fan_pct={g.index: g.fan_pct for g in frame.gpus if g.fan_pct is not None},
        temp_c={g.index: g.temp_c for g in frame.gpus if g.temp_c is not None},
        mem_util_pct={g.index: g.util_mem_pct for g in frame.gpus if g.util_mem_pct is not None},
        power_w={g.index: g.power_w for g in frame.gpus if g.power_w is not None},
        nvlink_mib_per_s={g.index: link for g in frame.gpus
                          if (link := _link_mib_s(g.nvlink_rx_mib_per_s, g.nvlink_tx_mib_per_s))
                          is not None},
        power_limit_w={g.index: g.power_limit_w for g in frame.gpus
                       if g.power_limit_w is not None},
        mem_used_bytes={g.index: g.mem_used_bytes for g in frame.gpus
                        if g.mem_used_bytes is not None},
        util_samples_pct={g.index: g.util_gpu_samples_pct for g in frame.gpus
                          if g.util_gpu_samples_pct},
        gpu_procs=procs,
        launch_p50_us=_us(latency.percentile_ns(buckets, 0.5)),
        launch_p99_us=_us(latency.percentile_ns(buckets, 0.99)),
        launch_measured=bool(frame.launch),
        launch_p99_by_api_us=_p99_by_api(frame),
        launch_max_us=max((h.max_ns / 1000.0 for h in frame.launch if "Launch" in h.api
                           and h.count), default=None),
        launch_slow_calls=sum(c for c, _ in _slow_calls(buckets)),
        launch_max_by_gpu_us=_launch_max_by_gpu(frame),
        launch_stalled_share=_launch_stalled_share(frame, seconds),
        sync_p50_us=_us(latency.percentile_ns(sync, 0.5)),
        host_cpu_pct=host.cpu_pct if host else None,
        cpu_pressure_pct=pressure,
        run_queue=host.run_queue if host and host.run_queue is not None
        else (pinned.run_queue if pinned else None),
        cpus=(len(pinned.cores) if pinned is not None and pinned.cores else None)
        or (host.cpus if host else None),
        host_cpus=host.cpus if host else None,
        pinned_pids=frozenset(pinned.tree_pids) if pinned is not None else frozenset(),
        pinned_thread_pct=_busiest_thread_pct(cast(PinnedSample, cast(Frame, earlier).pinned),
                                              cast(PinnedSample, pinned), seconds)
        if same_pin else None,
        **part,
    )


def _gpu_procs(processes: tuple[ProcSample, ...], before: tuple[ProcSample, ...],
               seconds: float) -> dict[int, tuple[ProcRef, ...]]:
    """The processes on each GPU, each with its CPU over the tick (the same pid and start
    time in the frame before: a recycled pid is another process)."""
    earlier = {(p.pid, p.start_time_s): p.cpu_s for p in before if p.cpu_s is not None}
    out: dict[int, list[ProcRef]] = {}
    for p in processes:
        cpu = counter_rate(earlier.get((p.pid, p.start_time_s)), p.cpu_s, seconds)
        out.setdefault(p.gpu_index, []).append(ProcRef(
            p.pid, p.ppid, p.sm_util_pct, p.mem_bytes,
            None if cpu is None else 100.0 * cpu, p.name, p.cmdline, p.mig_index))
    return {g: tuple(refs) for g, refs in out.items()}


def _busiest_thread_pct(before: PinnedSample, now: PinnedSample, seconds: float) -> float | None:
    """The pinned tree's busiest thread over the tick, % of one core (a DataLoader's worker
    or the input thread at ~100% is what an input stall looks like from the host)."""
    earlier = {t.tid: t.cpu_s for t in before.threads}
    best = None
    for t in now.threads:
        rate = counter_rate(earlier.get(t.tid), t.cpu_s, seconds)
        if rate is not None and (best is None or rate > best):
            best = rate
    return None if best is None else 100.0 * best


MIN_API_CALLS = 20  # fewer calls in a tick make no p99


def _p99_by_api(frame: Frame) -> dict[str, float]:
    per: dict[str, list[LaunchHist]] = {}
    for h in frame.launch:
        if "Launch" in h.api:
            per.setdefault(h.api, []).append(h)
    out = {}
    for api, hists in per.items():
        if sum(h.count for h in hists) >= MIN_API_CALLS:
            value = latency.percentile_ns(latency.merge(h.buckets for h in hists), 0.99)
            if value is not None:
                out[api] = value / 1000.0
    return out


def _slow_calls(buckets: dict[int, int]) -> list[tuple[int, int]]:
    """(count, lower bound in ns) of the buckets of calls lasting ``SLOW_CALL_NS`` or more."""
    return [(c, low) for i, c in buckets.items()
            if (low := bucket_bounds_ns(i)[0]) >= SLOW_CALL_NS]


def _launch_stalled_share(frame: Frame, seconds: float) -> float | None:
    """The worst launching process's time in calls of 1 ms or more, as a share of the tick
    (each call counted at its bucket's lower bound: a floor, never more than was lost)."""
    if seconds <= 0 or not frame.launch:
        return None
    stalled: dict[int, float] = {}
    for h in frame.launch:
        if "Launch" in h.api:
            stalled[h.pid] = stalled.get(h.pid, 0.0) + sum(c * low
                                                           for c, low in _slow_calls(h.buckets))
    if not stalled:
        return None
    return min(1.0, max(stalled.values()) / (seconds * 1e9))


def _launch_max_by_gpu(frame: Frame) -> dict[int, float]:
    """Each GPU's longest launch call this tick, a process's calls counted on the GPU where
    it holds most memory (a rank that also holds a stray context on GPU 0 launches on its
    own)."""
    main: dict[int, tuple[int, int]] = {}  # pid -> (memory, gpu)
    for p in frame.processes:
        held = (p.mem_bytes or 0, -p.gpu_index)
        if p.pid not in main or held > main[p.pid]:
            main[p.pid] = held
    out: dict[int, float] = {}
    for h in frame.launch:
        if "Launch" in h.api and h.count and h.pid in main:
            g = -main[h.pid][1]
            out[g] = max(out.get(g, 0.0), h.max_ns / 1000.0)
    return out


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1000.0


MAX_REPLICA_SUBJECTS = 16  # more replicas than this on one page are judged as the page


def _replica_frame(frame: Frame, label: str) -> Frame:
    """``frame`` with its engine replaced by replica ``label`` (None where it has none); the
    replica read at the page's time, so a reading carried over stays carried over."""
    engine = frame.engine
    if engine is None:
        return frame
    for r in engine.replicas:
        if r.replica == label:
            if r.time_mono_s is None:
                r = replace(r, time_mono_s=engine.time_mono_s, time_wall_s=engine.time_wall_s)
            return replace(frame, engine=r)
    return replace(frame, engine=None)


def split_replicas(frame: Frame) -> tuple[str, ...]:
    """The replicas of ``frame``'s engine to judge apart: each tied to processes on GPUs of
    its own (none shared with another replica); () when any is not (a replica nothing ties
    to a GPU, two models on one GPU: the page is judged as one engine)."""
    engine = frame.engine
    if engine is None or not 2 <= len(engine.replicas) <= MAX_REPLICA_SUBJECTS:
        return ()
    seen: set[int] = set()
    for r in engine.replicas:
        pids = set(r.pids)
        gpus = set(r.gpu_indices) or {p.gpu_index for p in frame.processes if p.pid in pids}
        if not gpus or gpus & seen:
            return ()
        seen |= gpus
    return tuple(r.replica for r in engine.replicas)


def replica_points(page: Point, frames: list[Frame], previous_point: Point | None,
                   last_reading: Frame | None) -> tuple[tuple[str, Point], ...]:
    """Each replica's point of ``frames[-1]``: the ``page``'s (the same GPUs, processes and
    host) with the engine's part taken from that replica alone (its own counters,
    histograms, pids and GPUs), the previous reading from the last two frames or
    ``last_reading``."""
    out = []
    for label in split_replicas(frames[-1]):
        mine = [_replica_frame(f, label) for f in frames[-2:]]
        before = previous_point.replica(label) if previous_point is not None else None
        last = _replica_frame(last_reading, label) if last_reading is not None else None
        out.append((label, replace(page, replicas=(), **_engine_part(mine, before, last))))
    return tuple(out)
