"""What a serving engine's /metrics text says: vLLM (V1 and V0 names), SGLang, TGI, llama.cpp,
and a training job's ``trainer_tokens_total`` / ``trainer_samples_total`` counter.

A real vLLM 0.32 page is 56 KB and 60+ families; gputop reads a few dozen of them.
The prometheus_client parser costs tens of milliseconds on the whole page (much more
on a crowded host), so the text is first cut down to the lines of the families read
here (a plain string scan), and only those are parsed.  Values that are not finite,
and counters below zero, are dropped as unknown: an engine's page is input from
another user and must never crash or mislead the dashboard.  Nor may it grow gputop's
memory: a family with more than ``MAX_FAMILY_LINES`` lines, a histogram with more than
``schema.MAX_ENGINE_BUCKETS`` bounds, and lines beyond ``MAX_KEPT_LINES`` in all are
not read (a fake ``vllm`` serving one histogram of 125,000 buckets took root's
``gputop serve`` to 1.5 GB), and the note says so.

SGLang's names come in two spellings: its own ``/metrics`` writes ``sglang:``, some
releases and its router's ``/engine_metrics`` (which turns ``:`` into ``_``) write
``sglang_``.  The cut normalises the second to the first, so both read identically.

One page can hold several engines: vLLM's ``engine`` label (one value per data-parallel
engine behind the port), SGLang's ``dp_rank``, the router's ``worker_addr`` and several
``model_name`` values.  The page's sum is what it always was; each of those is also read
on its own (``ParsedMetrics.replicas``).  Series that repeat one number per tensor- or
pipeline-parallel rank (SGLang with metrics on every scheduler) or that break a total
down by priority are counted once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import MAX_ENGINE_BUCKETS, EngineHistogram
from gputop.sources import prom
from gputop.sources.base import SourceError
from gputop.sources.engine_names import ENGINES, EngineNames, work_counter

# beyond these an engine's number is damage or malice, not a reading
PLAUSIBLE_REQUESTS = 1e7  # requests running or waiting at once
PLAUSIBLE_TOTAL = 1e18  # tokens, requests, preemptions, seconds ever counted
PLAUSIBLE_WORK = 1e30  # FLOPs and bytes ever counted
# labels that tell one engine of a page from another (the replicas)
REPLICA_LABELS = ("model_name", "engine", "dp_rank", "worker_addr")
# labels whose values repeat one engine's number (counted once: the lowest rank)
RANK_LABELS = ("tp_rank", "pp_rank")
MAX_REPLICAS = 64
MAX_LABELLED = 16  # values of a family split by a label (stages, sources): the rest dropped
MAX_LORA = 64
MAX_LABEL_CHARS = 128
# a real vLLM 0.32 page keeps 188 lines; 16 data-parallel engines x a 100-bucket histogram fit
MAX_FAMILY_LINES = 2048
MAX_KEPT_LINES = 8192
MAX_CACHE_LABELS = 128  # cache_config_info labels kept (vLLM 0.32 has 37)

# (values key, EngineNames attribute, kind, plausible bound)
COUNTERS = (
    ("generation_tokens_total", "generation", PLAUSIBLE_TOTAL),
    ("prompt_tokens_total", "prompt", PLAUSIBLE_TOTAL),
    ("requests_finished_total", "finished", PLAUSIBLE_TOTAL),
    ("preemptions_total", "preemptions", PLAUSIBLE_TOTAL),
    ("prompt_tokens_cached_total", "cached", PLAUSIBLE_TOTAL),
    ("retracted_requests_total", "retracted", PLAUSIBLE_TOTAL),
    ("retracted_input_tokens_total", "retracted_tokens", PLAUSIBLE_TOTAL),
    ("spec_drafts_total", "spec_drafts", PLAUSIBLE_TOTAL),
    ("spec_draft_tokens_total", "spec_draft_tokens", PLAUSIBLE_TOTAL),
    ("spec_accepted_tokens_total", "spec_accepted", PLAUSIBLE_TOTAL),
    ("prefill_seconds_total", "prefill_seconds", PLAUSIBLE_TOTAL),
    ("decode_seconds_total", "decode_seconds", PLAUSIBLE_TOTAL),
    ("forward_seconds_total", "forward_seconds", PLAUSIBLE_TOTAL),
    ("decode_steps_total", "decode_steps", PLAUSIBLE_TOTAL),
    ("corrupted_requests_total", "corrupted", PLAUSIBLE_TOTAL),
    ("flops_total", "flops", PLAUSIBLE_WORK),
    ("read_bytes_total", "read_bytes", PLAUSIBLE_WORK),
    ("write_bytes_total", "write_bytes", PLAUSIBLE_WORK),
)
GAUGES = (  # (values key, attribute, bound); all must be >= 0
    ("requests_running", "running", PLAUSIBLE_REQUESTS),
    ("requests_waiting", "waiting", PLAUSIBLE_REQUESTS),
    ("kv_used_tokens", "kv_used_tokens", PLAUSIBLE_TOTAL),
    ("kv_free_tokens", "kv_free_tokens", PLAUSIBLE_TOTAL),
    ("kv_evictable_tokens", "kv_evictable_tokens", PLAUSIBLE_TOTAL),
)
MEANS = (  # (values key, attribute, 0..1): per engine, so averaged over replicas
    ("kv_usage_ratio", "kv", True),
    ("spec_accept_ratio", "spec_accept_ratio", True),
    ("spec_accept_length", "spec_accept_length", False),
)


def _sample_names(families: set[str]) -> frozenset[str]:
    """Every sample name a family can write (histograms' _bucket/_sum/_count, _total)."""
    out = set()
    for name in families:
        out |= {name, f"{name}_bucket", f"{name}_sum", f"{name}_count", f"{name}_total"}
    return frozenset(out)


WANTED_FAMILIES = frozenset(set().union(*(e.families() for e in ENGINES)))
WANTED = _sample_names(set(WANTED_FAMILIES))
# another spelling of a prefix -> the one the name tables use
SPELLINGS = {alias: e.prefix for e in ENGINES for alias in e.aliases}


ALIASES = tuple(SPELLINGS)


def _respell(name: str) -> str:
    if not name.startswith(ALIASES):  # the common case, one C call
        return name
    for alias, prefix in SPELLINGS.items():
        if name.startswith(alias):
            return prefix + name[len(alias):]
    return name


def _family(name: str, families: frozenset[str]) -> str:
    """The family a sample name belongs to (histogram and counter suffixes removed)."""
    for suffix in ("_bucket", "_sum", "_count", "_total"):
        if name.endswith(suffix) and name[: -len(suffix)] in families:
            return name[: -len(suffix)]
    return name


def prefilter(text: str, extra: EngineNames | None = None,
              refused: list[str] | None = None) -> tuple[str, dict[str, int]]:
    """(the lines of the families gputop reads, samples per engine prefix in the whole
    text).  TYPE lines are kept so histograms parse as histograms; HELP lines go.  A name
    in another spelling of an engine's prefix (``sglang_``) is rewritten to the tables'.
    ``extra``: a counter named on the command line, read as well.  A family over
    MAX_FAMILY_LINES, and lines past MAX_KEPT_LINES, are left out (named in ``refused``):
    parsing them would cost seconds and their buckets memory."""
    kept: list[tuple[str, str]] = []  # (family, line)
    per_family: dict[str, int] = {}
    prefixes = {e.prefix: 0 for e in ENGINES}
    families, wanted = WANTED_FAMILIES, WANTED
    if extra is not None:
        families = families | extra.families()
        wanted = wanted | _sample_names(extra.families())
        prefixes[extra.prefix] = 0
    for line in text.splitlines():
        if not line:
            continue
        if line[0] == "#":
            if line.startswith("# TYPE "):
                parts = line.split(" ", 3)
                if len(parts) >= 3:
                    name = _respell(parts[2])
                    if name in families:
                        kept.append((name, " ".join(["#", "TYPE", name, *parts[3:]])))
            continue
        end = len(line)
        for stop in ("{", " "):
            at = line.find(stop)
            if 0 <= at < end:
                end = at
        name = _respell(line[:end])
        for prefix in prefixes:
            if name.startswith(prefix):
                prefixes[prefix] += 1
        if name in wanted:
            family = _family(name, families)
            per_family[family] = per_family.get(family, 0) + 1
            if per_family[family] <= MAX_FAMILY_LINES:
                kept.append((family, name + line[end:]))
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
    lora: tuple[tuple[str, ...], tuple[str, ...], int | None] = ((), (), None)
    replica: dict[str, str] = field(default_factory=dict)  # this replica's labels
    replicas: tuple[ParsedMetrics, ...] = ()
    spelling: str = ""  # the prefix as the page wrote it, when not the tables' own
    work_unit: str = ""  # what the generation counter counts (a trainer's tokens or samples)
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


class _Group:
    """The samples of one replica (or of the whole page): sums per name, histograms, the
    cache-config labels, waiting-by-reason, LoRA info."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.hists: dict[str, _Hist] = {}
        self.cache: dict[str, str] = {}
        self.by_reason: dict[str, float] = {}
        self.lora: tuple[float, dict[str, str]] | None = None  # (newest time, labels)
        self.models: set[str] = set()
        self.engines: set[str] = set()


def _labelled(names: EngineNames, name: str, labels: dict[str, str]) -> str:
    """A family split by one label reads under ``name{label=value}``."""
    label = names.split_by.get(name.removesuffix("_total"))
    if label is None or label not in labels:
        return name
    return f"{name}{{{label}={labels[label]}}}"


def _replica_key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((label, labels[label]) for label in REPLICA_LABELS if labels.get(label))


def _ranked(samples: list) -> list:
    """Drop the copies a rank label makes: of each (replica, name) only the samples of the
    lowest tp_rank / pp_rank are kept (SGLang can publish every scheduler's numbers, each
    the same engine's); a breakdown by priority is dropped where its total is there."""
    lowest: dict[tuple, tuple] = {}
    for name, labels, _ in samples:
        if any(label in labels for label in RANK_LABELS):
            key = (_replica_key(labels), name)
            rank = tuple(_rank(labels.get(label)) for label in RANK_LABELS)
            lowest[key] = min(lowest.get(key, rank), rank)
    out = []
    for sample in samples:
        name, labels, _ = sample
        if labels.get("priority"):
            continue  # per-priority series; the total is the one with priority=""
        if any(label in labels for label in RANK_LABELS):
            rank = tuple(_rank(labels.get(label)) for label in RANK_LABELS)
            if rank != lowest[(_replica_key(labels), name)]:
                continue
        out.append(sample)
    return out


def _rank(text: str | None) -> float:
    try:
        return float(text) if text is not None else -1.0
    except ValueError:
        return math.inf


def recognise(text: str, url: str = "endpoint", counter: str | None = None) -> ParsedMetrics:
    """What engine wrote this metrics text, and its numbers: summed over the page, and
    per replica when the page holds several engines or models.  ``counter``: a training
    job's progress counter named by the user: the page is read as that trainer's."""
    extra = work_counter(counter) if counter else None
    refused: list[str] = []
    filtered, prefixes = prefilter(text, extra, refused)
    if extra is not None:
        if not prefixes[extra.prefix]:
            raise SourceError(f"{url} has no counter {counter!r}")
        names = extra
    elif not any(prefixes.values()):
        raise SourceError(f"{url} has no vLLM, SGLang, TGI, llama.cpp or trainer_ metrics")
    else:
        names = next(e for e in ENGINES if prefixes[e.prefix] == max(prefixes.values()))
    spelling = next((alias for alias, prefix in SPELLINGS.items()
                     if prefix == names.prefix and alias in text), "")
    # a histogram's sample name -> (its family, the suffix)
    hist_samples = {family + suffix: (family, suffix) for families in names.histograms.values()
                    for family in families for suffix in ("_bucket", "_count", "_sum")}
    groups: dict[tuple, _Group] = {}
    samples = list(prom.samples(prom.parse(filtered, url)))
    if any("priority" in labels or any(r in labels for r in RANK_LABELS)
           for _, labels, _ in samples):
        samples = _ranked(samples)
    for name, labels, value in samples:
        key = _replica_key(labels)
        if key not in groups:
            if len(groups) >= MAX_REPLICAS:
                key = ()  # beyond the cap a replica counts only in the page's sum
            groups.setdefault(key, _Group())
        _add(groups[key], names, hist_samples, name, labels, value)
    page = _merged(groups.values())
    refused += [f"{name} has more than {MAX_ENGINE_BUCKETS} buckets: not read"
                for name, hist in page.hists.items() if len(hist.buckets) > MAX_ENGINE_BUCKETS]
    out = _parsed(names, page, groups.get(()), {})
    out.spelling = spelling
    out.refused = tuple(refused[:4])
    out.replicas = _replicas(names, groups)
    return out


def _merged(groups) -> _Group:
    """The page as a whole: every replica's sums, histograms and labels together."""
    page = _Group()
    for group in groups:
        for name, value in group.sums.items():
            page.sums[name] = page.sums.get(name, 0.0) + value
            page.counts[name] = page.counts.get(name, 0) + group.counts.get(name, 0)
        for name, hist in group.hists.items():
            total = page.hists.setdefault(name, _Hist())
            total.bad |= hist.bad
            total.count += hist.count
            total.sum += hist.sum
            for bound, count in hist.buckets.items():
                total.buckets[bound] = total.buckets.get(bound, 0.0) + count
        page.cache.update(group.cache)
        for reason, count in group.by_reason.items():
            page.by_reason[reason] = page.by_reason.get(reason, 0.0) + count
        if group.lora is not None and (page.lora is None or group.lora[0] >= page.lora[0]):
            page.lora = group.lora
        page.models |= group.models
        page.engines |= group.engines
    return page


def _add(group: _Group, names: EngineNames, hist_samples: dict[str, tuple[str, str]],
         name: str, labels: dict[str, str], value: float) -> None:
    if name == names.cache_info:
        for key, text in list(labels.items())[:64]:
            if len(group.cache) < MAX_CACHE_LABELS:
                group.cache[key[:64]] = text[:256]
        return
    if name == names.lora_info:
        if _finite(value) and (group.lora is None or value >= group.lora[0]):
            group.lora = (value, labels)  # the newest set of adapters (its value is a time)
        return
    if labels.get("model_name"):
        group.models.add(labels["model_name"])
    if labels.get("engine"):
        group.engines.add(labels["engine"])
    if labels.get("dp_rank"):
        group.engines.add(f"dp{labels['dp_rank']}")
    found = hist_samples.get(name)
    if found is not None:
        base, suffix = found
        key = base
        label = names.split_by.get(base)
        if label is not None:  # one histogram per label value (SGLang's stages)
            if not labels.get(label):
                return
            key = f"{base}:{labels[label][:MAX_LABEL_CHARS]}"
            if key not in group.hists and sum(
                    1 for h in group.hists if h.startswith(base + ":")) >= MAX_LABELLED:
                return
        hist = group.hists.get(key)
        if hist is None:
            hist = group.hists[key] = _Hist()
        hist.add(suffix, labels, value)
        return
    name = _labelled(names, name, labels)
    if not _finite(value):
        group.sums[name] = math.nan  # poisoned: this name reads as unknown
        return
    value = float(value)
    reason = names.waiting_by_reason
    if name == reason and "reason" in labels:
        group.by_reason[labels["reason"]] = group.by_reason.get(labels["reason"], 0.0) + value
    group.sums[name] = group.sums.get(name, 0.0) + value
    group.counts[name] = group.counts.get(name, 0) + 1


def _first(group: _Group, candidates: tuple[str, ...], counter: bool = False,
           mean: bool = False, largest: float = PLAUSIBLE_TOTAL) -> float | None:
    """The first of the names present (``a+b`` adds two); NaN, infinities, negative
    counters and values no engine could report (an absurd 1.7e308) are unknown."""
    for candidate in candidates:
        parts = candidate.split("+")
        if not any(p in group.sums for p in parts):
            continue
        value = 0.0
        for part in parts:
            if part not in group.sums:
                continue
            total = group.sums[part]
            value += total / group.counts[part] if mean and group.counts.get(part) else total
        if not math.isfinite(value) or (counter and value < 0) or abs(value) > largest:
            return None
        return value
    return None


def _parsed(names: EngineNames, group: _Group, shared: _Group | None,
            replica: dict[str, str]) -> ParsedMetrics:
    values: dict[str, float | None] = {}
    for key, attr, largest in COUNTERS:
        values[key] = _first(group, getattr(names, attr), counter=True, largest=largest)
    for key, attr, largest in GAUGES:
        value = _first(group, getattr(names, attr), largest=largest)
        values[key] = None if value is None or value < 0 else value
    for key, attr, ratio in MEANS:
        value = _first(group, getattr(names, attr), mean=True, largest=1e6)
        values[key] = _ratio(value) if ratio else (None if value is None or value < 0 else value)
    if not values["spec_accept_length"]:
        # SGLang writes 0 for both while speculative decoding is off: no acceptance, not none
        values["spec_accept_ratio"] = values["spec_accept_length"] = None
    if names.prompt_excludes_cached and values["prompt_tokens_total"] is not None \
            and values["prompt_tokens_cached_total"] is not None:
        # llama.cpp counts computed prompt tokens only; gputop's prompt counter is every
        # prompt token, cached ones included, as vLLM's and SGLang's are
        values["prompt_tokens_total"] += values["prompt_tokens_cached_total"]
    histograms = []
    for gname, families in names.histograms.items():
        for family in families:  # the first family present wins (renamed across versions)
            if names.split_by.get(family):
                split = sorted(h for h in group.hists if h.startswith(family + ":"))
                built = [group.hists[h].build(gname + h[len(family):]) for h in split]
                built = [b for b in built if b is not None]
            else:
                one = group.hists[family].build(gname) if family in group.hists else None
                built = [one] if one is not None else []
            if built:
                histograms += built
                break
    cache = dict(shared.cache) if shared is not None else {}
    cache.update(group.cache)
    if "kv_cache_size_tokens" in cache:  # vLLM 0.2x+: the pool in tokens, directly
        cache["kv_pool_tokens"] = cache["kv_cache_size_tokens"]
    if names.pool_tokens:
        pool = _first(group, (names.pool_tokens,), mean=True)  # per engine (GPU)
        if pool is not None or "kv_pool_tokens" not in cache:
            cache["kv_pool_tokens"] = str(int(pool)) if pool is not None and pool >= 0 else ""
    by_reason = dict(group.by_reason)
    for reason, family in names.queues.items():
        queued = _first(group, (family,), largest=PLAUSIBLE_REQUESTS)
        if queued is not None and queued >= 0:
            by_reason[reason] = queued
    models = group.models or (shared.models if shared is not None else set())
    unit = next((names.work_units[n] for n in names.generation
                 if n in group.sums and n in names.work_units), "")
    return ParsedMetrics(
        kind=names.kind, model=(replica.get("model_name") or (min(models) if models else ""))
        [:256],
        values=values, cache=cache, engines=max(1, len(group.engines)),
        histograms=tuple(histograms),
        waiting_by_reason={k[:MAX_LABEL_CHARS]: v for k, v in list(by_reason.items())[:64]
                           if v >= 0},
        lora=_lora(group.lora), replica=replica, work_unit=unit)


def _replicas(names: EngineNames, groups: dict[tuple, _Group]) -> tuple[ParsedMetrics, ...]:
    """One reading per replica: the label sets no other label set extends.  A set that
    another one extends (SGLang's tokenizer counters carry model_name only, its schedulers
    model_name and dp_rank) is shared: it counts in the page's sum and lends its cache
    config and model name, never its counters."""
    keys = [k for k in groups if k]
    leaves = [k for k in keys if not any(set(k) < set(other) for other in keys)]
    if len(leaves) < 2:
        return ()
    out = []
    for key in sorted(leaves):
        shared = _Group()
        for other in keys:
            if set(other) < set(key):
                shared.cache.update(groups[other].cache)
                shared.models |= groups[other].models
        if () in groups:
            shared.cache = {**groups[()].cache, **shared.cache}
        out.append(_parsed(names, groups[key], shared, dict(key)))
    return tuple(out)


def _lora(found: tuple[float, dict[str, str]] | None):
    """(running adapters, waiting adapters, max) from vLLM's lora_requests_info labels."""
    if found is None:
        return (), (), None
    labels = found[1]

    def names(text: str) -> tuple[str, ...]:
        return tuple(n[:MAX_LABEL_CHARS] for n in text.split(",") if n)[:MAX_LORA]

    return (names(labels.get("running_lora_adapters", "")),
            names(labels.get("waiting_lora_adapters", "")),
            config_int(labels.get("max_lora"), largest=1 << 20))


def replica_label(replica: dict[str, str]) -> str:
    """``engine=1`` / ``model_name=b,engine=0``: how a replica is named in frames."""
    return ",".join(f"{k}={v[:MAX_LABEL_CHARS]}" for k, v in replica.items())


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
