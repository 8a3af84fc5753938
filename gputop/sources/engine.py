"""Serving engines' Prometheus metrics: vLLM (V1 and V0 names), SGLang, TGI, llama.cpp.

One scrape per tick, with a short timeout, off the UI thread (the sampler's
worker).  Counters stay counters in the frame (the model derives reset-safe
rates).  An endpoint that fails is retried with a growing back-off, and the
reason is shown as "engine unreachable: ...".  Without ``--engine``, GPU
processes that look like an engine are found and their listening ports tried.
"""

from __future__ import annotations

import re
import socket
import urllib.parse
from dataclasses import dataclass, field

import psutil

from gputop.model.kv import ConfigError, kv_layout
from gputop.schema import EngineSample
from gputop.sources import prom
from gputop.sources.base import Reading, SourceError
from gputop.sources.modelinfo import ModelInfo, load

ENGINE_WORDS = ("vllm", "sglang", "text-generation-launcher", "text-generation-router",
                "llama-server", "llama_cpp")
BACKOFF_S = (1, 2, 4, 8, 16, 30)
DISCOVER_EVERY_S = 5.0

# metric names per engine: (generation counter, prompt counter, finished counter,
# running gauge, waiting gauge, kv usage gauge (0..1))
NAMES = {
    "vllm": dict(generation=("vllm:generation_tokens_total",),
                 prompt=("vllm:prompt_tokens_total",),
                 finished=("vllm:request_success_total",),
                 running=("vllm:num_requests_running",), waiting=("vllm:num_requests_waiting",),
                 kv=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")),
    "sglang": dict(generation=("sglang:generation_tokens_total",),
                   prompt=("sglang:prompt_tokens_total",),
                   finished=("sglang:num_requests_total",),
                   running=("sglang:num_running_reqs",), waiting=("sglang:num_queue_reqs",),
                   kv=("sglang:token_usage",)),
    # TGI's exporter writes counters without the _total suffix
    "tgi": dict(generation=("tgi_request_generated_tokens_sum",),
                prompt=("tgi_request_input_length_sum",),
                finished=("tgi_request_success", "tgi_request_success_total"),
                running=("tgi_batch_current_size",), waiting=("tgi_queue_size",), kv=()),
    "llamacpp": dict(generation=("llamacpp:tokens_predicted_total",),
                     prompt=("llamacpp:prompt_tokens_total",), finished=(),
                     running=("llamacpp:requests_processing",),
                     waiting=("llamacpp:requests_deferred",),
                     kv=("llamacpp:kv_cache_usage_ratio",)),
}
PREFIX = {"vllm:": "vllm", "sglang:": "sglang", "tgi_": "tgi", "llamacpp:": "llamacpp"}


@dataclass
class ParsedMetrics:
    kind: str
    model: str = ""
    values: dict[str, float | None] = field(default_factory=dict)
    cache: dict[str, str] = field(default_factory=dict)
    engines: int = 1


def recognise(text: str, url: str = "endpoint") -> ParsedMetrics:
    """What engine wrote this metrics text, and its numbers (summed over DP engines)."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    kinds: dict[str, int] = {}
    models: set[str] = set()
    engines: set[str] = set()
    cache: dict[str, str] = {}
    for name, labels, value in prom.samples(prom.parse(text, url)):
        for prefix, kind in PREFIX.items():
            if name.startswith(prefix):
                kinds[kind] = kinds.get(kind, 0) + 1
        if name == "vllm:cache_config_info":
            cache.update(labels)
            continue
        if name.endswith("_created"):
            continue
        if "model_name" in labels:
            models.add(labels["model_name"])
        if "engine" in labels:
            engines.add(labels["engine"])
        sums[name] = sums.get(name, 0.0) + value
        counts[name] = counts.get(name, 0) + 1
    if not kinds:
        raise SourceError(f"{url} has no vLLM, SGLang, TGI or llama.cpp metrics")
    kind = max(kinds, key=kinds.get)
    names = NAMES[kind]

    def total(key):
        return next((sums[n] for n in names[key] if n in sums), None)

    kv = next((sums[n] / counts[n] for n in names["kv"] if n in sums), None)
    values = {
        "generation_tokens_total": total("generation"),
        "prompt_tokens_total": total("prompt"),
        "requests_finished_total": total("finished"),
        "requests_running": total("running"),
        "requests_waiting": total("waiting"),
        "kv_usage_ratio": kv,
    }
    if kind == "sglang":
        cache["kv_pool_tokens"] = str(int(sums["sglang:max_total_num_tokens"])) \
            if "sglang:max_total_num_tokens" in sums else ""
    return ParsedMetrics(kind=kind, model=sorted(models)[0] if models else "", values=values,
                         cache=cache, engines=max(1, len(engines)))


def _int(text: str | None) -> int | None:
    try:
        return int(float(text)) if text not in (None, "", "None") else None
    except ValueError:
        return None


def local_port(url: str) -> int | None:
    """The port of a URL that points at this machine, else None."""
    parts = urllib.parse.urlparse(url)
    host = parts.hostname or ""
    local = {"127.0.0.1", "localhost", "::1", "0.0.0.0", socket.gethostname()}
    try:
        local.add(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    if host not in local:
        return None
    return parts.port or (443 if parts.scheme == "https" else 80)


def listening_pids(port: int) -> list[int]:
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, OSError):
        return []
    return sorted({c.pid for c in connections
                   if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid})


def process_tree(pid: int) -> list[int]:
    """The process listening on an engine's port and its live descendants."""
    from gputop.sources.proctree import tree_of

    try:
        return [p.pid for p in tree_of([psutil.Process(pid)])]
    except psutil.Error:
        return []


TP_FLAGS = re.compile(r"(?:--tensor-parallel-size|--tp-size|--tp|-tp)[ =](\d+)")


def tensor_parallel(pids: list[int]) -> int | None:
    for pid in pids:
        try:
            match = TP_FLAGS.search(" ".join(psutil.Process(pid).cmdline()))
        except psutil.Error:
            continue
        if match:
            return int(match.group(1))
    return None


def candidate_ports() -> list[int]:
    """Listening ports of processes (and their ancestors) that look like an engine.
    vLLM's API server is the parent of the engine process that holds the GPU."""
    from gputop.sources.proctree import listening_ports

    chain: list[psutil.Process] = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or []).lower()
        if any(word in cmdline for word in ENGINE_WORDS):
            chain += [proc] + _ancestors(proc)
    return listening_ports(chain)


def _ancestors(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return [p for p in proc.parents() if p.pid > 1]
    except psutil.Error:
        return []


class EngineSource:
    name = "engine"

    def __init__(self, url: str | None = None, model: str | None = None, timeout_s: float = 0.5,
                 discover: bool = True, pin_state=None, name: str = "engine"):
        self.name = name  # "engine", "engine2", ... with several --engine URLs
        self.pin_state = pin_state  # when pinned, the engine is looked for in the pinned tree
        self.url = prom.check_url(url) if url else None
        self.model_arg = model
        self.timeout_s = timeout_s
        self.discover = discover and url is None
        self._found_url: str | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._last_reason = ""
        self._last_discovery = -1e9
        self._model: ModelInfo | None = None
        self._model_reason = ""
        self._model_tried: set[str] = set()

    def open(self) -> None:
        if self.model_arg:
            self._model = load(self.model_arg)  # ConfigError: a clear message at start

    def close(self) -> None:
        pass

    # ------------------------------------------------------------ polling

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        if time_mono_s < self._retry_at:
            wait = self._retry_at - time_mono_s
            raise SourceError(f"engine unreachable: {self._last_reason} (retry in {wait:.0f}s)")
        pinned = self._pinned_ports(time_mono_s)
        if self._found_url and pinned is not None:
            if urllib.parse.urlparse(self._found_url).port not in pinned:
                self._found_url, self._last_discovery = None, -1e9  # the pin moved
        url = self.url or self._found_url or self._discover(time_mono_s)
        if url is None:
            raise SourceError("no engine found (pass --engine URL)")
        try:
            parsed = recognise(prom.fetch_text(url, self.timeout_s), url)
        except SourceError as exc:
            self._failures += 1
            self._retry_at = time_mono_s + BACKOFF_S[min(self._failures, len(BACKOFF_S)) - 1]
            self._last_reason = str(exc)
            if self.url is None:
                self._found_url = None  # rediscover: the server may have moved
            raise SourceError(f"engine unreachable: {exc}") from None
        self._failures, self._retry_at = 0, 0.0
        return Reading(engine=self._sample(url, parsed))

    def _pinned_ports(self, tick: float) -> tuple[int, ...] | None:
        """Listening ports of the pinned tree (None when nothing is pinned)."""
        resolved = self.pin_state.resolve(tick) if self.pin_state is not None else None
        return None if resolved is None else resolved.ports

    def _discover(self, now: float) -> str | None:
        if not self.discover or now - self._last_discovery < DISCOVER_EVERY_S:
            return None
        self._last_discovery = now
        pinned = self._pinned_ports(now)
        for port in (candidate_ports() if pinned is None else pinned):
            url = f"http://127.0.0.1:{port}/metrics"
            try:
                recognise(prom.fetch_text(url, self.timeout_s), url)
            except SourceError:
                continue
            self._found_url = url
            return url
        return None

    def _model_info(self, parsed: ParsedMetrics) -> ModelInfo | None:
        if self._model is not None or not parsed.model or parsed.model in self._model_tried:
            return self._model
        self._model_tried.add(parsed.model)
        try:
            self._model = load(parsed.model)
        except ConfigError as exc:
            self._model_reason = f"model {parsed.model}: {exc}; pass --model PATH"
        return self._model

    def _sample(self, url: str, parsed: ParsedMetrics) -> EngineSample:
        port = local_port(url)
        pids: list[int] = []
        if port is not None:
            for pid in listening_pids(port):
                pids += [p for p in process_tree(pid) if p not in pids]
        tp = tensor_parallel(pids) or 1
        info = self._model_info(parsed)
        kv_bytes = weights = None
        notes = []
        if info is not None:
            try:
                kv_bytes = kv_layout(info.config, parsed.cache.get("cache_dtype", "auto")
                                     if parsed.cache.get("cache_dtype") in ("fp8", "fp16", "bf16")
                                     else "auto", tp).bytes_per_token
            except ConfigError as exc:
                notes.append(f"model config: {exc}")
            if info.weights_bytes is not None:
                weights = info.weights_bytes // tp
        elif self._model_reason:
            notes.append(self._model_reason)
        if port is None:
            notes.append("remote endpoint: its GPU processes cannot be identified from here")
        elif not pids:
            notes.append(f"no local process listens on port {port}")
        v = parsed.values
        return EngineSample(
            kind=parsed.kind, url=url, model=parsed.model or (info.name if info else ""),
            generation_tokens_total=v["generation_tokens_total"],
            prompt_tokens_total=v["prompt_tokens_total"],
            requests_finished_total=v["requests_finished_total"],
            requests_running=v["requests_running"], requests_waiting=v["requests_waiting"],
            kv_usage_ratio=v["kv_usage_ratio"],
            num_gpu_blocks=_int(parsed.cache.get("num_gpu_blocks")),
            block_size=_int(parsed.cache.get("block_size")),
            kv_pool_bytes=_int(parsed.cache.get("kv_cache_memory_bytes")),
            kv_pool_tokens=_int(parsed.cache.get("kv_pool_tokens")),
            kv_bytes_per_token=kv_bytes, weights_bytes=weights,
            weights_source=info.weights_source if info and weights is not None else "",
            tensor_parallel=tp, data_parallel=parsed.engines, pids=tuple(pids),
            note="; ".join(notes))
