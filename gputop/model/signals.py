"""The one catalogue of derived signals: name, unit, kind, help, and how to read each from a view.

``snapshot --json``, the CSV export, the Prometheus exporter and the help screen all read
this list, so a new signal is one entry here (as ``below`` drives its views, dumps and
OpenMetrics from one field list).  A signal is read from the part of a view it belongs to
(``scope``): a GPU (``GpuView``), the engine (``EngineView``) or the whole view (host).
The exporter's family name, constant labels and the factor to Prometheus base units
(percent -> ratio, MHz -> Hz) follow FACTS.md section 8.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Signal:
    name: str  # the field in snapshot --json and the CSV column
    scope: str  # "gpu" | "engine" | "host"
    unit: str  # as people read it: "%", "bytes", "tokens/s", "s", "W", "°C", "MHz", "ratio", "1/s"
    kind: str  # "gauge" | "counter"
    help: str
    get: Callable[[Any], float | None]
    prom: str | None = None  # the exporter's family; None: not exported
    prom_labels: dict[str, str] = field(default_factory=dict)  # constant labels of this series
    prom_scale: float = 1.0  # from ``unit`` to the family's base unit
    digits: int | None = 2  # rounding in JSON (None: as is)
    # an engine signal each replica (data-parallel engine, model) has on its own; False for
    # what only the detector keeps (baselines) or the page as a whole has
    replica: bool = True

    @property
    def prom_family(self) -> str | None:
        """The family as Prometheus's text names it: a counter's without its _total."""
        if self.prom is None or self.kind != "counter":
            return self.prom
        return self.prom.removesuffix("_total")

    def read(self, obj: Any) -> float | None:
        """The value, or None when unknown (never NaN: a value that is not finite is None)."""
        if obj is None:
            return None
        value = self.get(obj)
        if value is None or not math.isfinite(value):
            return None
        return value

    def json_value(self, obj: Any) -> float | None:
        value = self.read(obj)
        if value is None or self.digits is None:
            return value
        return round(value, self.digits)


def _gpu(name: str) -> Callable[[Any], float | None]:
    return lambda g: getattr(g.sample, name)


def _engine_sample(name: str) -> Callable[[Any], float | None]:
    return lambda e: getattr(e.sample, name)


def _engine_rate(name: str) -> Callable[[Any], float | None]:
    return lambda e: e.rates.get(name)


def _count(name: str) -> Callable[[Any], float | None]:
    return lambda e: float(len(getattr(e.sample, name))) if getattr(e.sample, name) or \
        e.sample.lora_max is not None else None


GPU = (
    Signal("util_gpu_pct", "gpu", "%", "gauge",
           "GPU-Util: percent of the last sample period in which at least one kernel ran "
           "(NVML utilization.gpu)", _gpu("util_gpu_pct"), "gputop_gpu_utilization_ratio",
           prom_scale=0.01),
    Signal("util_mem_pct", "gpu", "%", "gauge",
           "memory-controller util: percent of time device memory was read or written",
           _gpu("util_mem_pct"), "gputop_gpu_memory_controller_utilization_ratio", prom_scale=0.01),
    Signal("sm_active_pct", "gpu", "%", "gauge",
           "SM active: time-and-SMs with at least one warp resident (GPM SM_UTIL or "
           "DCGM_FI_PROF_SM_ACTIVE)", _gpu("sm_active_pct"), "gputop_gpu_sm_active_ratio",
           prom_scale=0.01),
    Signal("sm_occupancy_pct", "gpu", "%", "gauge", "SM occupancy: resident warps over the maximum",
           _gpu("sm_occupancy_pct"), "gputop_gpu_sm_occupancy_ratio", prom_scale=0.01),
    Signal("dram_bw_pct", "gpu", "%", "gauge", "DRAM bandwidth used, percent of peak",
           _gpu("dram_bw_pct"), "gputop_gpu_dram_active_ratio", prom_scale=0.01),
    Signal("tensor_pct", "gpu", "%", "gauge", "tensor pipes active, percent of time",
           _gpu("tensor_pct"), "gputop_gpu_tensor_active_ratio", prom_scale=0.01),
    Signal("mem_total_bytes", "gpu", "bytes", "gauge", "the card's memory",
           _gpu("mem_total_bytes"), "gputop_gpu_memory_total_bytes", digits=None),
    Signal("mem_used_bytes", "gpu", "bytes", "gauge",
           "memory in use on the card, as nvidia-smi counts it (NVML memory info v2)",
           _gpu("mem_used_bytes"), digits=None),
    Signal("mem_reserved_bytes", "gpu", "bytes", "gauge",
           "memory the driver holds for itself, never usable by processes (NVML v2)",
           _gpu("mem_reserved_bytes"), digits=None),
    Signal("power_w", "gpu", "W", "gauge", "board power draw", _gpu("power_w"),
           "gputop_gpu_power_watts"),
    Signal("temp_c", "gpu", "°C", "gauge", "GPU temperature", _gpu("temp_c"),
           "gputop_gpu_temperature_celsius"),
    Signal("sm_clock_mhz", "gpu", "MHz", "gauge", "SM clock", _gpu("sm_clock_mhz"),
           "gputop_gpu_sm_clock_hertz", prom_scale=1e6),
    Signal("mem_clock_mhz", "gpu", "MHz", "gauge", "memory clock", _gpu("mem_clock_mhz"),
           "gputop_gpu_memory_clock_hertz", prom_scale=1e6),
    Signal("power_limit_w", "gpu", "W", "gauge", "the enforced power cap (NVML)",
           _gpu("power_limit_w"), "gputop_gpu_power_limit_watts"),
    Signal("fan_pct", "gpu", "%", "gauge",
           "fan speed, percent of maximum (none on passively cooled SXM boards)",
           _gpu("fan_pct"), "gputop_gpu_fan_speed_ratio", prom_scale=0.01),
    Signal("pstate", "gpu", "P-state", "gauge",
           "performance state: 0 is the fastest, 8 and above idle clocks (NVML)",
           _gpu("pstate"), "gputop_gpu_performance_state", digits=None),
    *[Signal(f"{link}_{way}_mib_per_s", "gpu", "MiB/s", "gauge",
             f"{label} {word} over the tick (GPM, Hopper and newer)",
             _gpu(f"{link}_{way}_mib_per_s"), f"gputop_gpu_{link}_bytes_per_second",
             prom_labels={"direction": way}, prom_scale=2.0**20, digits=1)
      for link, label in (("pcie", "PCIe traffic"), ("nvlink", "NVLink traffic"))
      for way, word in (("rx", "received"), ("tx", "sent"))],
    Signal("ecc_corrected", "gpu", "count", "counter",
           "corrected ECC memory errors since the driver loaded (volatile)",
           _gpu("ecc_corrected"), "gputop_gpu_ecc_errors_total",
           prom_labels={"type": "corrected"}, digits=None),
    Signal("ecc_uncorrected", "gpu", "count", "counter",
           "uncorrected ECC memory errors since the driver loaded: any is a reason to drain",
           _gpu("ecc_uncorrected"), "gputop_gpu_ecc_errors_total",
           prom_labels={"type": "uncorrected"}, digits=None),
    Signal("xid_count", "gpu", "count", "counter",
           "critical XID events (driver error reports) since gputop began watching",
           _gpu("xid_count"), "gputop_gpu_xid_events_total", digits=None),
    Signal("xid_last", "gpu", "code", "gauge",
           "the newest XID code seen (79: GPU fell off the bus; 48: double-bit ECC; "
           "13, 31, 43: an application fault)", _gpu("xid_last"), "gputop_gpu_xid_last_code",
           digits=None),
)

ENGINE = (
    Signal("generation_tokens_per_s", "engine", "tokens/s", "gauge",
           "generated tokens per second: the engine's counter over the readings' own interval "
           "(a trainer's, which moves once per step, over its last whole step)",
           lambda e: e.tokens_per_s, "gputop_engine_generation_tokens_per_second"),
    Signal("prompt_tokens_per_s", "engine", "tokens/s", "gauge", "prompt (prefill) tokens per second",
           lambda e: e.prompt_tokens_per_s, "gputop_engine_prompt_tokens_per_second"),
    Signal("requests_per_s", "engine", "1/s", "gauge", "requests finished per second",
           lambda e: e.requests_per_s),
    Signal("requests_running", "engine", "count", "gauge", "requests the engine runs now",
           _engine_sample("requests_running"), "gputop_engine_requests_running", digits=None),
    Signal("requests_waiting", "engine", "count", "gauge", "requests queued",
           _engine_sample("requests_waiting"), "gputop_engine_requests_waiting", digits=None),
    Signal("kv_usage_ratio", "engine", "ratio", "gauge", "fraction of the KV-cache pool in use",
           _engine_sample("kv_usage_ratio"), "gputop_engine_kv_usage_ratio", digits=4),
    Signal("baseline_tokens_per_s", "engine", "tokens/s", "gauge",
           "median generated tokens/s of the last 60 s of healthy ticks (frozen in an episode)",
           lambda e: e.baseline_tokens_per_s,
           "gputop_engine_generation_tokens_per_second_baseline", replica=False),
    *[Signal(f"{name}_{q}_s", "engine", "s", "gauge",
             f"{label} {q}, over the last 5 s, from the engine's histogram",
             (lambda i, n: lambda e: e.latency.get(n, (None, None))[i])(index, name),
             family, prom_labels={"quantile": quantile}, digits=6)
      for name, label, family in (
          ("itl", "inter-token latency", "gputop_engine_inter_token_latency_seconds"),
          ("ttft", "time to first token", "gputop_engine_time_to_first_token_seconds"),
          ("tpot", "time per output token", "gputop_engine_time_per_output_token_seconds"),
          ("e2e", "end-to-end request latency", "gputop_engine_e2e_request_latency_seconds"),
          ("queue", "request queue time", "gputop_engine_queue_time_seconds"),
          # vLLM --kv-cache-metrics: sampled KV blocks; short lives are a pool thrashing
          ("kv_block_lifetime", "KV block lifetime, allocation to eviction",
           "gputop_engine_kv_block_lifetime_seconds"),
          ("kv_block_idle", "KV block idle time before eviction",
           "gputop_engine_kv_block_idle_before_evict_seconds"),
          ("kv_block_reuse_gap", "KV block time between reuses",
           "gputop_engine_kv_block_reuse_gap_seconds"))
      for index, q, quantile in ((0, "p50", "0.5"), (1, "p99", "0.99"))],
    Signal("itl_p99_baseline_s", "engine", "s", "gauge", "inter-token latency p99 when healthy",
           lambda e: e.baseline_latency_s.get("itl"),
           "gputop_engine_inter_token_latency_p99_baseline_seconds", digits=6, replica=False),
    Signal("ttft_p99_baseline_s", "engine", "s", "gauge", "time to first token p99 when healthy",
           lambda e: e.baseline_latency_s.get("ttft"),
           "gputop_engine_time_to_first_token_p99_baseline_seconds", digits=6, replica=False),
    Signal("cached_prompt_tokens_per_s", "engine", "tokens/s", "gauge",
           "prompt tokens served from the prefix cache per second (never computed: vLLM "
           "prompt_tokens_cached, SGLang cached_tokens, llama.cpp prompt_tokens_cached)",
           _engine_rate("cached_prompt_tokens_per_s"),
           "gputop_engine_prompt_cached_tokens_per_second"),
    Signal("prefix_cache_hit_ratio", "engine", "ratio", "gauge",
           "share of the interval's prompt tokens served from the prefix cache",
           _engine_rate("prefix_cache_hit_ratio"), "gputop_engine_prefix_cache_hit_ratio",
           digits=4),
    Signal("retractions_per_s", "engine", "1/s", "gauge",
           "requests sent back to the queue because the KV pool ran out (SGLang) per second",
           _engine_rate("retractions_per_s"), "gputop_engine_retractions_per_second", digits=3),
    Signal("kv_used_tokens", "engine", "tokens", "gauge",
           "KV pool slots held by running requests (SGLang kv_used_tokens)",
           _engine_sample("kv_used_tokens"), "gputop_engine_kv_tokens",
           prom_labels={"state": "used"}, digits=None),
    Signal("kv_evictable_tokens", "engine", "tokens", "gauge",
           "KV pool slots holding prefix-cached KV no request holds: reusable, or freed on "
           "demand (SGLang kv_evictable_tokens)", _engine_sample("kv_evictable_tokens"),
           "gputop_engine_kv_tokens", prom_labels={"state": "evictable"}, digits=None),
    Signal("kv_free_tokens", "engine", "tokens", "gauge",
           "free KV pool slots (SGLang kv_available_tokens)", _engine_sample("kv_free_tokens"),
           "gputop_engine_kv_tokens", prom_labels={"state": "free"}, digits=None),
    Signal("spec_acceptance_ratio", "engine", "ratio", "gauge",
           "speculative decoding: accepted over proposed draft tokens in the interval (SGLang: "
           "its own gauge); a collapse wastes the drafts' compute",
           _engine_rate("spec_acceptance_ratio"), "gputop_engine_spec_decode_acceptance_ratio",
           digits=4),
    Signal("spec_acceptance_length", "engine", "tokens", "gauge",
           "speculative decoding: tokens gained per verification step (accepted drafts + 1)",
           _engine_rate("spec_acceptance_length"), "gputop_engine_spec_decode_acceptance_length",
           digits=3),
    Signal("prefill_time_ratio", "engine", "ratio", "gauge",
           "share of the interval's request time spent in prefill rather than decode (vLLM "
           "request_prefill/decode_time_seconds, llama.cpp prompt/tokens_predicted_seconds)",
           _engine_rate("prefill_time_ratio"), "gputop_engine_prefill_time_ratio", digits=4),
    Signal("forward_busy_ratio", "engine", "ratio", "gauge",
           "the engine's own count of time its GPU ran forward passes, per second (SGLang "
           "forward_execution_seconds_total): compare with GPU-Util",
           _engine_rate("forward_busy_ratio"), "gputop_engine_forward_busy_ratio", digits=4),
    Signal("decode_steps_per_s", "engine", "1/s", "gauge",
           "forward passes per second (llama.cpp n_decode_total)",
           _engine_rate("decode_steps_per_s"), "gputop_engine_decode_steps_per_second"),
    Signal("lora_adapters_running", "engine", "count", "gauge",
           "LoRA adapters with requests running (vLLM lora_requests_info)",
           _count("lora_running"), "gputop_engine_lora_adapters",
           prom_labels={"state": "running"}, digits=None),
    Signal("lora_adapters_waiting", "engine", "count", "gauge",
           "LoRA adapters with requests waiting (vLLM lora_requests_info)",
           _count("lora_waiting"), "gputop_engine_lora_adapters",
           prom_labels={"state": "waiting"}, digits=None),
    Signal("corrupted_requests_per_s", "engine", "1/s", "gauge",
           "requests whose logits held NaNs, per second (vLLM, VLLM_COMPUTE_NANS_IN_LOGITS)",
           _engine_rate("corrupted_requests_per_s"),
           "gputop_engine_corrupted_requests_per_second", digits=3),
    Signal("preemptions_per_s", "engine", "1/s", "gauge",
           "requests evicted from a full KV cache per second", lambda e: e.preemptions_per_s,
           "gputop_engine_preemptions_per_second", digits=3),
    Signal("estimated_flops_per_s", "engine", "FLOP/s", "gauge",
           "the engine's estimate of model FLOPs per second per GPU", lambda e: e.flops_per_s,
           digits=0),
    Signal("estimated_mem_bytes_per_s", "engine", "bytes/s", "gauge",
           "the engine's estimate of bytes read and written per second per GPU",
           lambda e: e.mem_bytes_per_s, digits=0),
    Signal("mfu_ratio", "engine", "ratio", "gauge",
           "estimated model FLOPs utilization: FLOPs/s over the card's dense bf16 peak",
           lambda e: e.mfu_ratio, "gputop_engine_mfu_ratio", digits=6),
    Signal("mbu_ratio", "engine", "ratio", "gauge",
           "estimated memory-bandwidth utilization: bytes/s over the card's HBM bandwidth",
           lambda e: e.mbu_ratio, "gputop_engine_mbu_ratio", digits=6),
    Signal("reading_age_s", "engine", "s", "gauge",
           "how old the engine reading is at this frame", lambda e: e.age_s, digits=3),
)

HOST = (
    Signal("host_cpu_pct", "host", "%", "gauge", "the host's CPU use",
           lambda v: v.frame.host.cpu_pct if v.frame.host else None, "gputop_host_cpu_ratio",
           prom_scale=0.01),
    Signal("cpu_pressure_pct", "host", "%", "gauge",
           "CPU pressure: share of time runnable tasks waited for a CPU (/proc/pressure/cpu "
           "some avg10)", lambda v: v.frame.host.cpu_pressure_some_pct if v.frame.host else None,
           "gputop_host_cpu_pressure_ratio", prom_scale=0.01),
)

def _mig(name: str) -> Callable[[Any], float | None]:
    return lambda m: getattr(m.sample, name)


# a MIG instance (derive.MigView): its own families, labelled {gpu, mig}, so summing a GPU's
# series never counts an instance twice
MIG = (
    Signal("mem_total_bytes", "mig", "bytes", "gauge", "the MIG instance's memory",
           _mig("mem_total_bytes"), "gputop_mig_memory_total_bytes", digits=None),
    Signal("mem_used_bytes", "mig", "bytes", "gauge", "memory in use on the MIG instance",
           _mig("mem_used_bytes"), "gputop_mig_memory_used_bytes", digits=None),
    Signal("sm_active_pct", "mig", "%", "gauge",
           "SM active on the instance's SMs (GPM MIG sample, Hopper and newer)",
           _mig("sm_active_pct"), "gputop_mig_sm_active_ratio", prom_scale=0.01),
    Signal("sm_occupancy_pct", "mig", "%", "gauge", "SM occupancy on the instance's SMs",
           _mig("sm_occupancy_pct"), "gputop_mig_sm_occupancy_ratio", prom_scale=0.01),
    Signal("dram_bw_pct", "mig", "%", "gauge", "the instance's DRAM bandwidth, percent of peak",
           _mig("dram_bw_pct"), "gputop_mig_dram_active_ratio", prom_scale=0.01),
    Signal("tensor_pct", "mig", "%", "gauge", "the instance's tensor pipes active",
           _mig("tensor_pct"), "gputop_mig_tensor_active_ratio", prom_scale=0.01),
)


def _tenant(name: str) -> Callable[[Any], float | None]:
    return lambda t: getattr(t, name)


# a tenant of a GPU (model/tenants.Tenant: a pod, container or Slurm job), exported with
# --export-tenants: the sum of its processes' NVML per-process samples
TENANT = (
    Signal("sm_util_pct", "tenant", "%", "gauge",
           "SM time of the tenant's processes, percent of the sample period (NVML per-process "
           "samples, summed)", _tenant("sm_util_pct"), "gputop_tenant_sm_utilization_ratio",
           prom_scale=0.01),
    Signal("mem_util_pct", "tenant", "%", "gauge",
           "memory-controller time of the tenant's processes (NVML per-process samples, "
           "summed)", _tenant("mem_util_pct"), "gputop_tenant_memory_utilization_ratio",
           prom_scale=0.01),
    Signal("mem_bytes", "tenant", "bytes", "gauge", "GPU memory the tenant's processes hold",
           _tenant("mem_bytes"), "gputop_tenant_gpu_memory_bytes", digits=None),
    Signal("processes", "tenant", "processes", "gauge", "the tenant's processes on the GPU",
           lambda t: float(len(t.pids)), "gputop_tenant_processes", digits=None),
)

SIGNALS = GPU + ENGINE + HOST
# each replica of an engine (data-parallel engines, models behind one endpoint) on its own
REPLICA = tuple(s for s in ENGINE if s.replica)


def values(signals: tuple[Signal, ...], obj: Any) -> dict[str, float | None]:
    """``{name: JSON value}`` of these signals read from ``obj``."""
    return {s.name: s.json_value(obj) for s in signals}


def help_lines() -> list[str]:
    """One line per signal for the help screen: the name in snapshot/CSV, unit, meaning,
    and the Prometheus family it is exported as."""
    lines = []
    for scope, group in (("GPU", GPU), ("engine", ENGINE), ("host", HOST)):
        lines.append(f"  {scope}:")
        for s in group:
            family = f" [{s.prom}]" if s.prom else ""
            lines.append(f"    {s.name} ({s.unit}): {s.help}{family}")
    return lines
