"""What a serving engine's /metrics text says: vLLM (V1 and V0 names), SGLang, TGI, llama.cpp.

A real vLLM 0.32 page is 56 KB and 60+ families; gputop reads about twenty of them.
The prometheus_client parser costs tens of milliseconds on the whole page (much more
on a crowded host), so the text is first cut down to the lines of the families read
here (a plain string scan), and only those are parsed.  Values that are not finite,
and counters below zero, are dropped as unknown: an engine's page is input from
another user and must never crash or mislead the dashboard.  Nor may it grow gputop's
memory: a family with more than ``MAX_FAMILY_LINES`` lines, a histogram with more than
``schema.MAX_ENGINE_BUCKETS`` bounds, and lines beyond ``MAX_KEPT_LINES`` in all are
not read (a fake ``vllm`` serving one histogram of 125,000 buckets took root's
``gputop serve`` to 1.5 GB), and the note says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import MAX_ENGINE_BUCKETS, EngineHistogram
from gputop.sources import prom
from gputop.sources.base import SourceError


@dataclass(frozen=True)
class EngineNames:
    """The metric names one engine writes; the first name found wins in each tuple."""

    kind: str
    prefix: str
    generation: tuple[str, ...]
    prompt: tuple[str, ...]
    finished: tuple[str, ...]
    running: tuple[str, ...]
    waiting: tuple[str, ...]
    kv: tuple[str, ...]  # KV usage, 0..1
    preemptions: tuple[str, ...] = ()
    cached: tuple[str, ...] = ()  # prompt tokens served from the prefix cache
    retracted: tuple[str, ...] = ()
    waiting_by_reason: str = ""
    flops: str = ""
    read_bytes: str = ""
    write_bytes: str = ""
    cache_info: str = ""
    pool_tokens: str = ""
    # gputop's histogram name -> the engine's family names (first found wins)
    histograms: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def families(self) -> set[str]:
        names = {*self.generation, *self.prompt, *self.finished, *self.running, *self.waiting,
                 *self.kv, *self.preemptions, *self.cached, *self.retracted}
        names |= {n for n in (self.waiting_by_reason, self.flops, self.read_bytes,
                              self.write_bytes, self.cache_info, self.pool_tokens) if n}
        for family in self.histograms.values():
            names |= set(family)
        return names


ENGINES = (
    EngineNames(
        "vllm", "vllm:",
        generation=("vllm:generation_tokens_total",), prompt=("vllm:prompt_tokens_total",),
        finished=("vllm:request_success_total",), running=("vllm:num_requests_running",),
        waiting=("vllm:num_requests_waiting",),
        kv=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        preemptions=("vllm:num_preemptions_total",),
        cached=("vllm:prompt_tokens_cached_total",),
        waiting_by_reason="vllm:num_requests_waiting_by_reason",
        flops="vllm:estimated_flops_per_gpu_total",
        read_bytes="vllm:estimated_read_bytes_per_gpu_total",
        write_bytes="vllm:estimated_write_bytes_per_gpu_total",
        cache_info="vllm:cache_config_info",
        histograms={
            "ttft": ("vllm:time_to_first_token_seconds",),
            # V1 0.11+ calls it inter-token latency; older releases time_per_output_token
            "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
            "tpot": ("vllm:request_time_per_output_token_seconds",),
            "e2e": ("vllm:e2e_request_latency_seconds",),
            "queue": ("vllm:request_queue_time_seconds",),
            "params_n": ("vllm:request_params_n",),
            "params_max_tokens": ("vllm:request_params_max_tokens",),
            "max_generation_tokens": ("vllm:request_max_num_generation_tokens",),
        }),
    EngineNames(
        "sglang", "sglang:",
        generation=("sglang:generation_tokens_total",), prompt=("sglang:prompt_tokens_total",),
        finished=("sglang:num_requests_total",), running=("sglang:num_running_reqs",),
        waiting=("sglang:num_queue_reqs",), kv=("sglang:token_usage",),
        cached=("sglang:cached_tokens_total",),
        retracted=("sglang:num_retracted_requests_total",),
        pool_tokens="sglang:max_total_num_tokens",
        histograms={
            "ttft": ("sglang:time_to_first_token_seconds",),
            "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
            "e2e": ("sglang:e2e_request_latency_seconds",),
            "queue": ("sglang:queue_time_seconds",),
        }),
    # TGI's exporter writes counters without the _total suffix
    EngineNames(
        "tgi", "tgi_",
        generation=("tgi_request_generated_tokens_sum",), prompt=("tgi_request_input_length_sum",),
        finished=("tgi_request_success", "tgi_request_success_total"),
        running=("tgi_batch_current_size",), waiting=("tgi_queue_size",), kv=(),
        histograms={
            "tpot": ("tgi_request_mean_time_per_token_duration",),
            "e2e": ("tgi_request_duration",),
            "queue": ("tgi_request_queue_duration",),
        }),
    EngineNames(
        "llamacpp", "llamacpp:",
        generation=("llamacpp:tokens_predicted_total",), prompt=("llamacpp:prompt_tokens_total",),
        finished=(), running=("llamacpp:requests_processing",),
        waiting=("llamacpp:requests_deferred",), kv=("llamacpp:kv_cache_usage_ratio",),
        cached=("llamacpp:prompt_tokens_cached_total",)),
)
BY_KIND = {e.kind: e for e in ENGINES}
# beyond these an engine's number is damage or malice, not a reading
PLAUSIBLE_REQUESTS = 1e7  # requests running or waiting at once
PLAUSIBLE_TOTAL = 1e18  # tokens, requests, preemptions ever counted
PLAUSIBLE_WORK = 1e30  # FLOPs and bytes ever counted
COUNTERS = ("generation", "prompt", "finished", "preemptions")
# a real vLLM 0.32 page keeps 188 lines; 16 data-parallel engines x a 100-bucket histogram fit
MAX_FAMILY_LINES = 2048
MAX_KEPT_LINES = 8192


def _sample_names(families: set[str]) -> frozenset[str]:
    """Every sample name a family can write (histograms' _bucket/_sum/_count, _total)."""
    out = set()
    for name in families:
        out |= {name, f"{name}_bucket", f"{name}_sum", f"{name}_count", f"{name}_total"}
    return frozenset(out)


WANTED = _sample_names(set().union(*(e.families() for e in ENGINES)))
WANTED_FAMILIES = frozenset(set().union(*(e.families() for e in ENGINES)))


def _family(name: str) -> str:
    """The family a sample name belongs to (histogram and counter suffixes removed)."""
    for suffix in ("_bucket", "_sum", "_count", "_total"):
        if name.endswith(suffix) and name[: -len(suffix)] in WANTED_FAMILIES:
            return name[: -len(suffix)]
    return name


def prefilter(text: str, refused: list[str] | None = None) -> tuple[str, dict[str, int]]:
    """(the lines of the families gputop reads, samples per engine prefix in the whole
    text).  TYPE lines are kept so histograms parse as histograms; HELP lines go.  A
    family over MAX_FAMILY_LINES, and lines past MAX_KEPT_LINES, are left out (named in
    ``refused``): parsing them would cost seconds and their buckets memory."""
    kept: list[tuple[str, str]] = []  # (family, line)
    per_family: dict[str, int] = {}
    prefixes = {e.prefix: 0 for e in ENGINES}
    for line in text.splitlines():
        if not line:
            continue
        if line[0] == "#":
            if line.startswith("# TYPE "):
                parts = line.split(" ", 3)
                if len(parts) >= 3 and parts[2] in WANTED_FAMILIES:
                    kept.append((parts[2], line))
            continue
        end = len(line)
        for stop in ("{", " "):
            at = line.find(stop)
            if 0 <= at < end:
                end = at
        name = line[:end]
        for prefix in prefixes:
            if name.startswith(prefix):
                prefixes[prefix] += 1
        if name in WANTED:
            family = _family(name)
            per_family[family] = per_family.get(family, 0) + 1
            if per_family[family] <= MAX_FAMILY_LINES:
                kept.append((family, line))
    too_many = {f for f, n in per_family.items() if n > MAX_FAMILY_LINES}
    lines = [line for family, line in kept if family not in too_many]
    if refused is not None:
        refused.extend(f"{f} has {per_family[f]:,} lines (more than {MAX_FAMILY_LINES:,}): "
                       "not read" for f in sorted(too_many))
        if len(lines) > MAX_KEPT_LINES:
            refused.append(f"the page has more than {MAX_KEPT_LINES:,} lines of the families "
                           "read: the rest not read")
    return "\n".join(lines[:MAX_KEPT_LINES]) + "\n", prefixes


@dataclass
class ParsedMetrics:
    kind: str
    model: str = ""
    values: dict[str, float | None] = field(default_factory=dict)
    cache: dict[str, str] = field(default_factory=dict)
    engines: int = 1
    histograms: tuple[EngineHistogram, ...] = ()
    waiting_by_reason: dict[str, float] = field(default_factory=dict)
    refused: tuple[str, ...] = ()  # what the page held beyond the caps, not read


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class _Hist:
    """Buckets of one histogram family summed over label sets (data-parallel engines)."""

    def __init__(self) -> None:
        self.buckets: dict[float, float] = {}
        self.count = 0.0
        self.sum = 0.0
        self.bad = False

    def add(self, suffix: str, labels: dict[str, str], value: float) -> None:
        if not _finite(value) or value < 0:
            self.bad = True
            return
        if suffix == "_bucket":
            try:
                bound = float(labels.get("le", "nan"))
            except ValueError:
                self.bad = True
                return
            if math.isnan(bound):
                self.bad = True
            elif math.isfinite(bound) and (bound in self.buckets
                                           or len(self.buckets) <= MAX_ENGINE_BUCKETS):
                self.buckets[bound] = self.buckets.get(bound, 0.0) + value
        elif suffix == "_count":
            self.count += value
        elif suffix == "_sum":
            self.sum += value

    def build(self, name: str) -> EngineHistogram | None:
        if self.bad or not self.buckets or len(self.buckets) > MAX_ENGINE_BUCKETS:
            return None
        bounds = tuple(sorted(self.buckets))
        cumulative = tuple(self.buckets[b] for b in bounds)
        if any(b < a for a, b in zip(cumulative, cumulative[1:])) or self.count < cumulative[-1]:
            return None  # not a histogram: counts must grow with the bound
        return EngineHistogram(name, bounds, cumulative, self.count, self.sum)


def recognise(text: str, url: str = "endpoint") -> ParsedMetrics:
    """What engine wrote this metrics text, and its numbers (summed over DP engines)."""
    refused: list[str] = []
    filtered, prefixes = prefilter(text, refused)
    if not any(prefixes.values()):
        raise SourceError(f"{url} has no vLLM, SGLang, TGI or llama.cpp metrics")
    names = next(e for e in ENGINES if prefixes[e.prefix] == max(prefixes.values()))
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    models: set[str] = set()
    engines: set[str] = set()
    cache: dict[str, str] = {}
    by_reason: dict[str, float] = {}
    hist_family = {family: gname for gname, families in names.histograms.items()
                   for family in families}
    hists: dict[str, _Hist] = {}
    for name, labels, value in prom.samples(prom.parse(filtered, url)):
        if name == names.cache_info:
            for key, text in list(labels.items())[:64]:  # vLLM 0.32 has 37
                if len(cache) < 128:
                    cache[key[:64]] = text[:256]
            continue
        if "model_name" in labels:
            models.add(labels["model_name"])
        if "engine" in labels:
            engines.add(labels["engine"])
        for suffix in ("_bucket", "_count", "_sum"):
            if name.endswith(suffix) and name[: -len(suffix)] in hist_family:
                hists.setdefault(name[: -len(suffix)], _Hist()).add(suffix, labels, value)
                break
        else:
            if not _finite(value):
                sums[name] = math.nan  # poisoned: this name reads as unknown
                continue
            value = float(value)
            if name == names.waiting_by_reason and "reason" in labels:
                by_reason[labels["reason"]] = by_reason.get(labels["reason"], 0.0) + value
            sums[name] = sums.get(name, 0.0) + value
            counts[name] = counts.get(name, 0) + 1

    def first(candidates, counter=False, mean=False, largest=PLAUSIBLE_TOTAL):
        """The first of the names present; NaN, infinities, negative counters and values
        no engine could report (an absurd 1.7e308) are unknown."""
        for n in candidates:
            if n in sums:
                value = sums[n] / counts[n] if mean and counts.get(n) else sums[n]
                if not math.isfinite(value) or (counter and value < 0) or abs(value) > largest:
                    return None
                return value
        return None

    values = {
        "generation_tokens_total": first(names.generation, counter=True),
        "prompt_tokens_total": first(names.prompt, counter=True),
        "requests_finished_total": first(names.finished, counter=True),
        "requests_running": _non_negative(first(names.running, largest=PLAUSIBLE_REQUESTS)),
        "requests_waiting": _non_negative(first(names.waiting, largest=PLAUSIBLE_REQUESTS)),
        "kv_usage_ratio": _ratio(first(names.kv, mean=True)),
        "preemptions_total": first(names.preemptions, counter=True),
        "prompt_tokens_cached_total": first(names.cached, counter=True),
        "retracted_requests_total": first(names.retracted, counter=True),
        "flops_total": first((names.flops,), counter=True, largest=PLAUSIBLE_WORK)
        if names.flops else None,
        "read_bytes_total": first((names.read_bytes,), counter=True, largest=PLAUSIBLE_WORK)
        if names.read_bytes else None,
        "write_bytes_total": first((names.write_bytes,), counter=True, largest=PLAUSIBLE_WORK)
        if names.write_bytes else None,
    }
    if "kv_cache_size_tokens" in cache:  # vLLM 0.2x+: the pool in tokens, directly
        cache["kv_pool_tokens"] = cache["kv_cache_size_tokens"]
    if names.pool_tokens:
        pool = first((names.pool_tokens,))
        cache["kv_pool_tokens"] = str(int(pool)) if pool is not None and pool >= 0 else ""
    histograms = []
    for gname, families in names.histograms.items():
        for family in families:
            if family in hists and len(hists[family].buckets) > MAX_ENGINE_BUCKETS:
                refused.append(f"{family} has more than {MAX_ENGINE_BUCKETS} buckets: not read")
            built = hists[family].build(gname) if family in hists else None
            if built is not None:
                histograms.append(built)
                break
    return ParsedMetrics(kind=names.kind, model=sorted(models)[0][:256] if models else "",
                         values=values, cache=cache, engines=max(1, len(engines)),
                         histograms=tuple(histograms), refused=tuple(refused[:4]),
                         waiting_by_reason={k: v for k, v in list(by_reason.items())[:64]
                                            if v >= 0})


def _non_negative(value: float | None) -> float | None:
    return None if value is None or value < 0 else value


def _ratio(value: float | None) -> float | None:
    return None if value is None or not 0.0 <= value <= 1.0 + 1e-9 else min(1.0, value)


def config_int(text: str | None, largest: int = 2**53) -> int | None:
    """A whole number from a label such as num_gpu_blocks="9271"; "inf", "nan", negative
    or absurd values are unknown."""
    if text in (None, "", "None"):
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value < 0 or value > largest:
        return None
    return int(value)
