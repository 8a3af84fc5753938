"""Raw readings, one immutable Frame per sampler tick, and their JSON codec.

Frames hold what sources *measured*: cumulative counters stay counters and
histograms stay per-interval bucket counts.  Everything the user sees (rates,
percentiles, the VRAM split, alerts) is derived from frames in ``gputop.model``
so that live view, pause, replay and ``snapshot`` derive identically.

Unknown values are ``None``, never 0.  The codec ignores fields it does not
know and fills missing ones with their defaults, so adding a field never
breaks reading an older frame, and an older gputop can read a newer frame.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field

from gputop.buckets import MAX_BUCKET_INDEX

SCHEMA_VERSION = 1


# Why clocks are held down, as GpuSample.throttle names them (NVML's clock-event reasons that
# slow a busy GPU); the exporter says 0 for each one not active when the reasons are known.
THROTTLE_REASONS = ("power cap", "hw slowdown", "sync boost", "thermal (sw)", "thermal (hw)",
                    "power brake")

@dataclass(frozen=True, slots=True)
class SourceStatus:
    """Whether one source delivered this tick, and if not, why (shown as "n/a (reason)")."""

    ok: bool
    reason: str | None = None
    detail: str | None = None  # what a working source is doing (e.g. what eBPF attached to)
    # How old the reading in this frame is (tick time - when it was taken): a slow source's
    # last reading is carried until it is stale, so a late answer shows as an age, not a gap.
    age_s: float | None = None
    poll_s: float | None = None  # what the poll behind this reading cost (wall time)
    poll_median_s: float | None = None  # median cost of the source's recent polls


@dataclass(frozen=True, slots=True)
class MigSample:
    """A MIG instance under its parent GPU.  NVML gives its memory and processes (listed per
    instance handle: ``ProcSample.mig_index``) but no GPU-Util; SM, DRAM and tensor activity
    come from GPM MIG samples (Hopper+), None with the reason in ``missing`` elsewhere."""

    index: int  # NVML's MIG device index under the parent
    name: str = ""
    uuid: str = ""
    mem_total_bytes: int | None = None
    mem_used_bytes: int | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    profile: str = ""  # "1g.10gb", as nvidia-smi names the instance's profile
    sm_count: int | None = None  # the instance's multiprocessors
    sm_active_pct: float | None = None
    sm_occupancy_pct: float | None = None
    dram_bw_pct: float | None = None
    tensor_pct: float | None = None
    missing: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GpuSample:
    index: int
    name: str = ""
    uuid: str = ""
    util_gpu_pct: float | None = None
    # Driver-resolution GPU-Util samples taken since the previous tick (oldest first).
    util_gpu_samples_pct: tuple[float, ...] = ()
    util_mem_pct: float | None = None
    sm_active_pct: float | None = None
    sm_occupancy_pct: float | None = None
    dram_bw_pct: float | None = None
    tensor_pct: float | None = None
    mem_total_bytes: int | None = None
    mem_used_bytes: int | None = None  # as nvidia-smi counts it: without the driver's reserve
    mem_reserved_bytes: int | None = None  # held by the driver, never usable by processes
    power_w: float | None = None
    temp_c: float | None = None
    sm_clock_mhz: float | None = None
    throttle: tuple[str, ...] = ()
    # what nvidia-smi's table shows beside the numbers above (the overview pane)
    bus_id: str = ""  # PCI bus id, e.g. 00000000:18:00.0
    fan_pct: float | None = None  # None on passively cooled (SXM) boards: "not supported"
    pstate: int | None = None  # performance state P0 (fastest) .. P15
    power_limit_w: float | None = None  # the enforced power cap
    mem_clock_mhz: float | None = None
    # GPM interconnect throughput over the tick (Hopper+)
    pcie_rx_mib_per_s: float | None = None
    pcie_tx_mib_per_s: float | None = None
    nvlink_rx_mib_per_s: float | None = None
    nvlink_tx_mib_per_s: float | None = None
    # cumulative: volatile ECC counts since the driver loaded; XID events since gputop began
    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    xid_count: int | None = None
    xid_last: int | None = None  # the newest XID code seen (e.g. 79: fell off the bus)
    mig_mode: bool | None = None
    # Why a group of values is missing, e.g. {"sm_active_pct": "needs Hopper+ (GPM)"}.
    missing: dict[str, str] = field(default_factory=dict)
    lost: bool = False
    migs: tuple[MigSample, ...] = ()


@dataclass(frozen=True, slots=True)
class ProcSample:
    """A process using a GPU; (pid, start_time_s) identifies it since PIDs recycle."""

    pid: int
    gpu_index: int
    name: str = ""
    cmdline: str = ""
    user: str = ""
    ppid: int | None = None
    start_time_s: float | None = None
    mem_bytes: int | None = None
    sm_util_pct: float | None = None
    cpu_pct: float | None = None  # in recordings made before cpu_s; rates come from cpu_s
    cpu_s: float | None = None  # cumulative user+system CPU seconds of the process
    rss_bytes: int | None = None  # host (resident) memory
    # who owns it, from /proc/PID/cgroup (sources.cgroup): "docker:3f2a1b9c0d1e" (runtime and
    # short container id) or a systemd unit; pod as "namespace/name" or "pod UID" when unnamed
    container: str = ""
    pod: str = ""
    cgroup: str = ""  # the cgroup path itself
    # the Slurm job and step whose cgroup holds it ("42", "0"), shown as container "slurm:42.0"
    slurm_job: str = ""
    slurm_step: str = ""
    # NVML's per-process memory-controller util (nvmlDeviceGetProcessUtilization memUtil)
    mem_util_pct: float | None = None
    mig_index: int | None = None  # the MIG instance it runs on (GpuSample.migs[].index)


@dataclass(frozen=True, slots=True)
class EngineHistogram:
    """One of an engine's Prometheus histograms as scraped: cumulative counts per finite
    upper bound (``le``), plus the total count and sum.  Kept cumulative, like every counter
    in a frame; per-interval percentiles come from the difference of two readings.

    ``name`` is gputop's own: ttft, itl, tpot, e2e, queue, params_n, params_max_tokens,
    max_generation_tokens (see ``sources.engine_metrics``)."""

    name: str
    upper_bounds: tuple[float, ...] = ()
    cumulative: tuple[float, ...] = ()
    count: float = 0.0
    sum: float = 0.0


@dataclass(frozen=True, slots=True)
class EngineSample:
    """One scrape of a serving engine (or the simulator's trainer) plus what is known of its model."""

    kind: str
    url: str = ""
    model: str = ""
    # cumulative counters
    generation_tokens_total: float | None = None
    prompt_tokens_total: float | None = None
    # prompt tokens served from the prefix cache (counted in prompt_tokens_total too, but
    # never computed): vLLM prompt_tokens_cached, SGLang cached_tokens, llama.cpp's likewise
    prompt_tokens_cached_total: float | None = None
    requests_finished_total: float | None = None
    # gauges
    requests_running: float | None = None
    requests_waiting: float | None = None
    kv_usage_ratio: float | None = None
    # cache configuration (vllm:cache_config_info or equivalent)
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    kv_pool_bytes: int | None = None  # per GPU, when the engine reports it directly
    kv_pool_tokens: int | None = None  # per GPU (SGLang's max_total_num_tokens)
    # model facts
    # derived by the model from kv_config / cache_dtype; set only in recordings made before
    kv_bytes_per_token: int | None = None  # per GPU (tensor-parallel rank)
    kv_config: dict[str, typing.Any] = field(default_factory=dict)  # model/kv.py KV_CONFIG_KEYS
    cache_dtype: str = ""  # the engine's KV cache dtype (cache_config_info), raw
    weights_bytes: int | None = None  # per GPU
    weights_source: str = ""
    tensor_parallel: int | None = None
    data_parallel: int | None = None
    gpu_indices: tuple[int, ...] = ()  # GPUs known to hold it (else: where its pids are)
    pids: tuple[int, ...] = ()  # the engine's process tree on this machine
    note: str = ""  # what could not be tied or found, for the explain page
    # when the counters were read (the response arrived), so rates use the reading's own
    # time rather than the tick's; None in frames from before this field (the frame's time)
    time_mono_s: float | None = None
    time_wall_s: float | None = None
    histograms: tuple[EngineHistogram, ...] = ()
    preemptions_total: float | None = None
    # requests sent back to the queue because the KV pool ran out (SGLang's retractions;
    # vLLM counts the same event as a preemption)
    retracted_requests_total: float | None = None
    # what generation_tokens_total counts for a trainer ("tokens", "samples", "steps"):
    # any Prometheus counter a training job exports, read next to --engine
    work_unit: str = ""
    waiting_by_reason: dict[str, float] = field(default_factory=dict)
    # vLLM's own estimate of model work per GPU (--enable-mfu-metrics), cumulative
    flops_total: float | None = None
    read_bytes_total: float | None = None
    write_bytes_total: float | None = None
    # the engine's process tree on the CPU (cumulative), for host contention without eBPF
    cpu_s: float | None = None
    ctx_involuntary: int | None = None
    busiest_thread_cpu_s: float | None = None  # the thread that launches, usually
    busiest_thread: str = ""
    # the CPU quota over the tree's cgroup (cpu.max, cfs_quota_us) and its CFS periods,
    # cumulative: periods throttled are a quota holding it back, which no run queue or PSI
    # on the host shows (None: no quota, or none readable)
    cpu_quota_cores: float | None = None
    cpu_periods: int | None = None
    cpu_throttled_periods: int | None = None
    # KV pool in tokens as the engine counts it (SGLang kv_used/available/evictable_tokens:
    # evictable is radix-cached KV no request holds, reusable or freed on demand)
    kv_used_tokens: float | None = None
    kv_free_tokens: float | None = None
    kv_evictable_tokens: float | None = None
    retracted_input_tokens_total: float | None = None  # prompt tokens of retracted requests
    # speculative decoding, cumulative (vLLM spec_decode_*, llama.cpp likewise); SGLang
    # reports only the current acceptance as gauges
    spec_drafts_total: float | None = None
    spec_draft_tokens_total: float | None = None
    spec_accepted_tokens_total: float | None = None
    spec_accept_ratio: float | None = None  # gauge, 0..1 (SGLang spec_accept_rate)
    spec_accept_length: float | None = None  # gauge: tokens per verification (SGLang)
    # seconds requests spent in prefill / decode, summed over requests (vLLM's phase
    # histograms' sums, llama.cpp prompt_seconds / tokens_predicted_seconds)
    prefill_seconds_total: float | None = None
    decode_seconds_total: float | None = None
    forward_seconds_total: float | None = None  # the engine's own GPU-busy time (SGLang)
    decode_steps_total: float | None = None  # forward passes (llama.cpp n_decode_total)
    corrupted_requests_total: float | None = None  # vLLM: requests with NaN logits
    lora_running: tuple[str, ...] = ()  # adapter names (vLLM lora_requests_info)
    lora_waiting: tuple[str, ...] = ()
    lora_max: int | None = None
    # which replica of the page this is ("engine=1", "model_name=b", "dp_rank=0",
    # "worker_addr=..."); "" for the page as a whole
    replica: str = ""
    # data-parallel engines and models behind one endpoint, each with its own counters,
    # gauges, histograms and (where the page or the process tree ties them) pids; the
    # fields above stay the sum over the page.  Empty when the page is one engine.
    replicas: tuple[EngineSample, ...] = ()


@dataclass(frozen=True, slots=True)
class LaunchHist:
    """Host-side call durations of one CUDA API in one process over one tick.

    ``buckets`` maps a log-linear bucket index (see ``model.latency``) to a count.
    """

    api: str
    pid: int = 0
    count: int = 0
    sum_ns: int = 0
    max_ns: int = 0
    buckets: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HostSample:
    cpu_pct: float | None = None
    offcpu_switches: int | None = None  # involuntary switches of launch threads this tick
    cpu_pressure_some_pct: float | None = None  # /proc/pressure/cpu "some" avg10
    run_queue: int | None = None  # procs_running in /proc/stat
    cpus: int | None = None  # logical CPUs
    ctx_switches_total: int | None = None  # the whole host's, since boot ("ctxt" in /proc/stat)


@dataclass(frozen=True, slots=True)
class ThreadSample:
    """One thread of the pinned tree; CPU time is cumulative (rates are derived)."""

    tid: int
    pid: int
    name: str = ""
    cpu_s: float = 0.0


@dataclass(frozen=True, slots=True)
class PinnedSample:
    """The pinned process tree as the pin source resolved it this tick."""

    label: str = ""
    pattern: str | None = None
    root_pids: tuple[int, ...] = ()
    tree_pids: tuple[int, ...] = ()
    exited: dict[int, float] = field(default_factory=dict)  # root pid -> wall time it exited
    waiting: str | None = None  # why nothing is pinned yet (no match)
    cpu_s: float | None = None  # the tree's cumulative CPU time
    ctx_voluntary: int | None = None  # cumulative, whole tree
    ctx_involuntary: int | None = None
    threads: tuple[ThreadSample, ...] = ()  # the busiest threads
    cores: tuple[int, ...] = ()  # CPUs the tree may run on
    cpu_pressure_some_pct: float | None = None  # /proc/pressure/cpu some avg10
    run_queue: int | None = None  # procs_running from /proc/stat
    listening_ports: tuple[int, ...] = ()
    cpu_quota_cores: float | None = None  # as EngineSample's: the tree's cgroup CPU quota
    cpu_periods: int | None = None
    cpu_throttled_periods: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameParts:
    """The readings a frame is made of: what each source's poll returns part of
    (``sources.base.Reading``) and the sampler merges into one ``Frame`` per tick."""

    gpus: tuple[GpuSample, ...] = ()
    processes: tuple[ProcSample, ...] = ()
    engine: EngineSample | None = None
    launch: tuple[LaunchHist, ...] = ()
    host: HostSample | None = None
    pinned: PinnedSample | None = None
    # Seconds of this tick during which the launch probes were attached (--ebpf-duty below
    # 1: they are attached part of the time); None: all of it, or no probes.
    launch_armed_s: float | None = None


@dataclass(frozen=True, slots=True)
class Frame(FrameParts):
    seq: int
    time_wall_s: float
    time_mono_s: float
    sources: dict[str, SourceStatus] = field(default_factory=dict)


# ---------------------------------------------------------------- codec

def to_dict(obj: typing.Any) -> typing.Any:
    """Plain JSON-able structure of a schema object (dict keys become strings)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [to_dict(v) for v in obj]
    return obj


def frame_to_dict(frame: Frame) -> dict[str, typing.Any]:
    data: dict[str, typing.Any] = to_dict(frame)
    data["schema"] = SCHEMA_VERSION
    return data


@dataclass(frozen=True)
class ProcessScan:
    """What one scan of /proc for the pin picker saw (``sources/procscan.py``): the CUDA
    processes' command lines and users, and the CPU% of those and of the processes asked
    about.  Not part of a frame."""

    cuda_cmdlines: dict[int, str] = field(default_factory=dict)
    users: dict[int, str] = field(default_factory=dict)  # of the CUDA processes ("?": unknown)
    cpu_pct: dict[int, float] = field(default_factory=dict)  # 100% = one core


class SchemaError(ValueError):
    """A frame that cannot be decoded (wrong type, newer incompatible schema)."""


WALL_TIME_MAX_S = 2.0**34  # year 2514: a wall time beyond it is damage, not a date
# What one frame may hold.  A frame read from outside (a remote gputop, a recording handed
# around) beyond these is refused: 200k GPUs in a 3.7 MB answer took 1.3 GB to derive,
# 50k kept the dashboard at 95% CPU.  The largest real hosts have 16 GPUs (MIG instances
# ride inside them); vLLM's histograms have 10-40 buckets.
MAX_FRAME_BYTES = 16 * 2**20  # one frame's JSON (64 GPUs x 200 processes is ~0.3 MB)
MAX_GPUS = 256
MAX_PROCESSES = 4096
MAX_ENGINE_BUCKETS = 256  # per engine histogram
MAX_ITEMS = 4096  # any other list or mapping in a frame


def frame_from_dict(data: dict[str, typing.Any]) -> Frame:
    """A frame from its JSON form.  Input may be hostile (a recording handed around, a
    remote gputop): values of the wrong type, non-finite numbers where a number is
    required, impossible times and bucket indexes outside the layout raise SchemaError;
    an optional number that is NaN or infinite reads as unknown (None)."""
    if not isinstance(data, dict):
        raise SchemaError("frame is not an object")
    for name, most in (("gpus", MAX_GPUS), ("processes", MAX_PROCESSES)):
        if isinstance(data.get(name), list) and len(data[name]) > most:
            raise SchemaError(f"a frame with {len(data[name]):,} {name}: more than {most:,}")
    try:
        frame: Frame = _build(Frame, data)
    except RecursionError:  # replicas of replicas ... nested by a hostile file
        raise SchemaError("frame is nested too deeply") from None
    if frame.engine is not None and any(r.replicas for r in frame.engine.replicas):
        raise SchemaError("an engine replica holds replicas of its own")
    if frame.engine is not None:
        for engine in (frame.engine, *frame.engine.replicas):
            for hist in engine.histograms:
                if len(hist.upper_bounds) > MAX_ENGINE_BUCKETS:
                    raise SchemaError(f"engine histogram {hist.name[:40]!r}: "
                                      f"{len(hist.upper_bounds):,} buckets, more than "
                                      f"{MAX_ENGINE_BUCKETS}")
    for t in (frame.time_wall_s, *(e.time_wall_s for e in (frame.engine,) if e is not None)):
        if t is not None and not 0 <= t <= WALL_TIME_MAX_S:
            raise SchemaError(f"wall time {t} is out of range")
    for launch_hist in frame.launch:
        for index, count in launch_hist.buckets.items():
            if not 0 <= index <= MAX_BUCKET_INDEX or count < 0:
                raise SchemaError(f"launch bucket {index}: {count} is not in the layout")
    return frame


_HINTS: dict[type, dict[str, typing.Any]] = {}


def _hints(cls: type) -> dict[str, typing.Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _build(cls: type, data: dict[str, typing.Any]) -> typing.Any:
    if not isinstance(data, dict):
        raise SchemaError(f"{cls.__name__} is not an object")
    hints = _hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name], f.name)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise SchemaError(f"{cls.__name__}: {exc}") from None


def _convert(hint: typing.Any, value: typing.Any, name: str, optional: bool = False) -> typing.Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if value is None:
        if optional or (origin in (typing.Union, types.UnionType) and type(None) in args) \
                or hint is typing.Any:
            return None
        raise SchemaError(f"{name}: null where a value is required")
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, name, optional=True) if len(inner) == 1 else value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise SchemaError(f"{name}: expected a list")
        if len(value) > MAX_ITEMS and name not in ("gpus", "processes"):
            raise SchemaError(f"{name}: {len(value):,} items, more than {MAX_ITEMS:,}")
        return tuple(_convert(args[0], v, name) for v in value)
    if origin is dict:
        if not isinstance(value, dict):
            raise SchemaError(f"{name}: expected an object")
        if len(value) > MAX_ITEMS:
            raise SchemaError(f"{name}: {len(value):,} entries, more than {MAX_ITEMS:,}")
        key_type, value_type = args
        try:
            return {key_type(k): _convert(value_type, v, name) for k, v in value.items()}
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"{name}: {exc}") from None
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = float(value)
        if not math.isfinite(value):
            if optional:
                return None  # unknown, as NaN means; never a number that breaks arithmetic
            raise SchemaError(f"{name}: {value} is not a finite number")
        return value
    if hint is int and isinstance(value, bool):
        raise SchemaError(f"{name}: expected int, got bool")
    if hint in (int, float, str, bool) and not isinstance(value, hint):
        raise SchemaError(f"{name}: expected {hint.__name__}, got {type(value).__name__}")
    return value
