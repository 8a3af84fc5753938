"""Serving engines' Prometheus metrics: one scrape per poll, the endpoint resolved once.

The endpoint (``--engine URL``, or found by ``engine_discovery``) and the process
tree behind it are resolved once and kept: a poll fetches and parses one page, checks
that the listening process is still the same one (start time), and reads the tree's
CPU counters.  Only when the endpoint fails, or the process behind it is gone, is it
resolved again; the tree itself is refreshed every few seconds (workers come and go).
Counters stay counters in the frame (the model derives reset-safe rates), stamped
with the moment the response arrived.  An endpoint that fails is retried with a
growing back-off, and the reason is shown as "engine unreachable: ...".
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import re
import socket
import time
import urllib.parse
from dataclasses import dataclass

import psutil

from gputop.modelconfig import ConfigError, kv_config, kv_fields
from gputop.schema import EngineSample
from gputop.sources import engine_discovery, prom
from gputop.sources.base import Reading, SourceError
from gputop.sources.engine_merge import merge_engines
from gputop.sources.engine_metrics import (REPLICA_LABELS, ParsedMetrics, config_int,
                                           recognise, replica_label)
from gputop.sources.engine_replicas import command_lines, llamacpp_pool, replica_roots
from gputop.sources.modelinfo import ModelInfo, load
from gputop.sources.proctree import quota_fields, tree_cpu, tree_of

BACKOFF_S = (1, 2, 4, 8, 16, 30)
DISCOVER_EVERY_S = 5.0
MAX_DISCOVERED = 8  # engines discovery reads at once: a box of single-GPU servers
FORGET_AFTER_FAILURES = 3  # a discovered engine failing this often in a row is dropped
TREE_REFRESH_S = 5.0
TIMEOUT_S = 3.0  # the whole scrape; late answers are still used (see sampler.py)
TP_FLAGS = re.compile(r"(?:--tensor-parallel-size|--tp-size|--tp|-tp)[ =](\d+)")


@functools.lru_cache(maxsize=1)
def _own_addresses() -> frozenset[str]:
    """This machine's interface addresses, read once from the kernel (no DNS)."""
    try:
        return frozenset(a.address.split("%")[0] for addresses in psutil.net_if_addrs().values()
                         for a in addresses if a.family in (socket.AF_INET, socket.AF_INET6))
    except (OSError, psutil.Error):
        return frozenset()


def local_port(url: str) -> int | None:
    """The port of a URL that points at this machine, else None.  Decided without a name
    lookup: with a silent resolver, one lookup per poll took each poll to 4 s."""
    parts = urllib.parse.urlparse(url)
    host = (parts.hostname or "").split("%")[0]
    try:
        ip = ipaddress.ip_address(host)
        local = ip.is_loopback or ip.is_unspecified or str(ip) in _own_addresses()
    except ValueError:
        local = host in ("localhost", socket.gethostname())
    if not local:
        return None
    return parts.port or (443 if parts.scheme == "https" else 80)


def listening_pids(port: int) -> list[int]:
    """Processes listening on a TCP port: walks every socket on the machine, so it is
    called when an endpoint is resolved, not on every poll."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, OSError):
        return []
    return sorted({c.pid for c in connections
                   if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid})


def _listens_on(proc: psutil.Process, port: int) -> bool:
    connections = getattr(proc, "net_connections", None) or proc.connections  # psutil < 6
    return any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port
               for c in connections(kind="tcp"))


def listener_root(proc: psutil.Process, port: int) -> psutil.Process:
    """The topmost process holding the listening socket.  A child forked after the socket
    was opened holds it too (a PyTorch DataLoader worker, a pre-fork server's worker), and
    psutil names whichever holder it met last: the engine's tree must start at the top."""
    for _ in range(32):
        try:
            parent = proc.parent()
            if parent is None or not _listens_on(parent, port):
                return proc
        except psutil.Error:
            return proc
        proc = parent
    return proc


def tensor_parallel(processes: list[psutil.Process]) -> int | None:
    for proc in processes:
        try:
            match = TP_FLAGS.search(" ".join(proc.cmdline()))
        except psutil.Error:
            continue
        if match:
            return int(match.group(1))
    return None


@dataclass
class _Endpoint:
    """A resolved endpoint: its URL, the process listening on it and that process's tree."""

    url: str
    listener: psutil.Process | None = None
    listener_started: float | None = None
    tree: tuple[psutil.Process, ...] = ()
    tree_at: float = -1e9
    tensor_parallel: int | None = None
    # replica label -> the pids that are it (refreshed with the tree)
    replica_pids: dict[str, tuple[int, ...]] | None = None
    # llama-server's KV pool from its command line: (tokens, dtype, why not)
    context: tuple[int | None, str, str] = (None, "", "")

    def listener_alive(self) -> bool:
        if self.listener is None:
            return True  # remote, or nothing found listening: nothing to lose
        try:
            return self.listener.create_time() == self.listener_started and \
                self.listener.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False


def probe(url: str) -> None:
    """One short GET of a discovered port; SourceError unless it serves engine metrics."""
    recognise(prom.fetch(url, engine_discovery.PROBE_TIMEOUT_S).text, url)


class EngineSource:
    name = "engine"

    def __init__(self, url: str | None = None, model: str | None = None,
                 timeout_s: float = TIMEOUT_S, discover: bool = True, pin_state=None,
                 name: str = "engine", clock=time.monotonic, counter: str | None = None):
        self.name = name  # "engine", "engine2", ... with several --engine URLs
        self.counter = counter  # a training job's progress counter named by the user
        self.pin_state = pin_state  # when pinned, the engine is looked for in the pinned tree
        # user:password@ in --engine is sent as basic auth and kept out of every URL shown,
        # stored in a frame, served or recorded
        self.url, self._auth = prom.split_credentials(prom.check_url(url)) if url else (None, {})
        self.model_arg = model
        self.timeout_s = timeout_s
        self.discover = discover and url is None
        self._clock = clock
        self._endpoint: _Endpoint | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._last_reason = ""
        self._last_discovery = -1e9
        self._others: dict[str, EngineSource] = {}  # the other engines discovery found
        self._others_at = -1e9
        self._model: ModelInfo | None = None
        self._model_reason = ""
        self._model_tried: set[str] = set()
        self._kv_config: dict | None = None  # the model's KV fields, taken once
        self._kv_notes: dict[int, str] = {}  # per TP size: why they cannot shard, once

    def open(self) -> None:
        if self.model_arg:
            self._model = load(self.model_arg)  # ConfigError: a clear message at start

    def close(self) -> None:
        pass

    # ------------------------------------------------------------ polling

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        """One reading of the engine; when engines are discovered, of every engine found on
        this machine (up to MAX_DISCOVERED), merged with each endpoint a replica of its own."""
        if not self.discover:
            return self._poll_one(time_mono_s)
        try:
            first: Reading | None = self._poll_one(time_mono_s)
            failure = None
        except SourceError as exc:
            first, failure = None, exc
        self._find_others(time_mono_s)
        readings = [first] if first is not None else []
        notes = []
        for url, other in list(self._others.items()):
            try:
                readings.append(other._poll_one(time_mono_s))
            except SourceError as exc:
                notes.append(f"{url}: {exc}")
                if other._failures >= FORGET_AFTER_FAILURES:
                    del self._others[url]  # gone: found again if it comes back
        if not readings:
            raise failure or SourceError("no engine found (pass --engine URL)")
        if len(readings) == 1 and not notes:
            return readings[0]
        engine = merge_engines([r.engine for r in readings if r.engine is not None])
        if engine is not None and notes:
            engine = dataclasses.replace(engine, note="; ".join(filter(None, (engine.note,
                                                                               *notes))))
        after = [r.taken_after_s for r in readings if r.taken_after_s is not None]
        return Reading(engine=engine, taken_after_s=max(after) if after else None)

    def _find_others(self, tick: float) -> None:
        """Every DISCOVER_EVERY_S, the engines besides the first one that answer (not in
        the trees already read, so an engine's own workers are never probed)."""
        room = MAX_DISCOVERED - 1 - len(self._others)
        if self._endpoint is None or room <= 0 or tick - self._others_at < DISCOVER_EVERY_S:
            return  # (with no engine found at all, _discover looks already)
        self._others_at = tick
        known = {self._endpoint.url, *self._others}
        skip = {p.pid for source in (self, *self._others.values())
                if source._endpoint is not None for p in source._endpoint.tree}
        pinned = self._pinned(tick)
        only = None if pinned is None else {p.pid for p in pinned.tree}
        found = engine_discovery.all_answering(engine_discovery.candidates(only), probe, skip,
                                               room + len(known))
        for url in [u for u in found if u not in known][:room]:
            self._others[url] = EngineSource(url, timeout_s=self.timeout_s, discover=False,
                                             counter=self.counter, name=self.name,
                                             clock=self._clock)

    def _poll_one(self, time_mono_s: float) -> Reading:
        poll_started = time.perf_counter()
        if time_mono_s < self._retry_at:
            wait = self._retry_at - time_mono_s
            raise SourceError(f"engine unreachable: {self._last_reason} (retry in {wait:.0f}s)")
        endpoint = self._resolve(time_mono_s)
        if endpoint is None:
            raise SourceError("no engine found (pass --engine URL)")
        fetch_started = time.perf_counter()
        try:
            fetched = prom.fetch(endpoint.url, self.timeout_s,
                                 headers=self._auth if endpoint.url == self.url else None)
            parsed = recognise(fetched.text, endpoint.url, self.counter)
        except SourceError as exc:
            self._failures += 1
            self._retry_at = time_mono_s + BACKOFF_S[min(self._failures, len(BACKOFF_S)) - 1]
            self._last_reason = str(exc)
            self._endpoint = None  # resolve again: the server may have moved or restarted
            raise SourceError(f"engine unreachable: {exc}") from None
        self._failures, self._retry_at = 0, 0.0
        sample = self._sample(endpoint, parsed, time_mono_s)
        # the counters were read when the response was made: stamp them then
        return Reading(engine=sample,
                       taken_after_s=fetch_started - poll_started + fetched.headers_after_s)

    def _pinned(self, tick: float):
        """The pinned tree resolved for this tick (None when nothing is pinned)."""
        return self.pin_state.resolve(tick) if self.pin_state is not None else None

    def _resolve(self, tick: float) -> _Endpoint | None:
        """The endpoint to scrape: kept while its listener lives (and, when pinned, while
        it belongs to the pinned tree); otherwise found again."""
        endpoint = self._endpoint
        pinned = self._pinned(tick)
        if endpoint is not None and not endpoint.listener_alive():
            endpoint = None
        if endpoint is not None and pinned is not None and self.url is None:
            if endpoint.listener is None or endpoint.listener.pid not in {p.pid for p in pinned.tree}:
                endpoint = None  # the pin moved
        if endpoint is None:
            url = self.url or self._discover(tick, pinned)
            endpoint = self._bind(url) if url else None
        self._endpoint = endpoint
        return endpoint

    def _discover(self, tick: float, pinned) -> str | None:
        if not self.discover or tick - self._last_discovery < DISCOVER_EVERY_S:
            return None
        self._last_discovery = tick
        only = None if pinned is None else {p.pid for p in pinned.tree}
        return engine_discovery.first_answering(engine_discovery.candidates(only), probe)

    def _bind(self, url: str) -> _Endpoint:
        endpoint = _Endpoint(url)
        port = local_port(url)
        if port is not None:
            for pid in listening_pids(port):
                try:
                    proc = listener_root(psutil.Process(pid), port)
                    endpoint.listener, endpoint.listener_started = proc, proc.create_time()
                    break
                except psutil.Error:
                    continue
        return endpoint

    def _tree(self, endpoint: _Endpoint, tick: float) -> tuple[psutil.Process, ...]:
        if endpoint.listener is None:
            return ()
        if tick - endpoint.tree_at >= TREE_REFRESH_S or not endpoint.tree:
            endpoint.tree = tuple(tree_of([endpoint.listener]))
            endpoint.tree_at = tick
            endpoint.tensor_parallel = tensor_parallel(list(endpoint.tree))
            endpoint.replica_pids = None  # found again for the new tree
            endpoint.context = llamacpp_pool(command_lines(list(endpoint.tree)))
        return endpoint.tree

    def _replica_pids(self, endpoint: _Endpoint, parsed: ParsedMetrics) -> dict[str, tuple[int, ...]]:
        """Each replica's processes, worked out once per tree refresh (it reads the tree's
        command lines and, for a router's workers, the machine's listening sockets)."""
        wanted = {replica_label(r.replica) for r in parsed.replicas}
        if endpoint.replica_pids is not None and set(endpoint.replica_pids) == wanted:
            return endpoint.replica_pids
        tree = list(endpoint.tree)
        argvs = command_lines(tree)
        differing = {label for label in REPLICA_LABELS
                     if len({r.replica.get(label) for r in parsed.replicas}) > 1}
        models = {r.replica.get("model_name", "") for r in parsed.replicas} - {""}
        found = {}
        for replica in parsed.replicas:
            roots = replica_roots(parsed.kind, replica.replica, differing, tree, argvs,
                                  local_port, listening_pids, models)
            found[replica_label(replica.replica)] = tuple(
                sorted({p.pid for p in tree_of(roots)})) if roots else ()
        endpoint.replica_pids = found
        return found

    def _model_info(self, parsed: ParsedMetrics) -> ModelInfo | None:
        if self._model is not None or not parsed.model or parsed.model in self._model_tried:
            return self._model
        self._model_tried.add(parsed.model)
        try:
            self._model = load(parsed.model, from_endpoint=True)
        except ConfigError as exc:
            self._model_reason = f"model {parsed.model}: {exc}; pass --model PATH"
        return self._model

    def _kv_fields(self, info: ModelInfo, tp: int) -> tuple[dict, str]:
        """The model's KV fields for the frame (the number is derived in the model), and
        whether this TP size can shard them: worked out once, not on every poll."""
        if self._kv_config is None:
            self._kv_config = kv_config(info.config)
        if tp not in self._kv_notes:
            try:
                kv_fields(info.config, "auto", tp)  # can this TP shard its KV heads
                self._kv_notes[tp] = ""
            except ConfigError as exc:
                self._kv_notes[tp] = f"model config: {exc}"
        return self._kv_config, self._kv_notes[tp]

    def _sample(self, endpoint: _Endpoint, parsed: ParsedMetrics, tick: float) -> EngineSample:
        url = endpoint.url
        tree = self._tree(endpoint, tick)
        pids = [p.pid for p in tree]
        tp = endpoint.tensor_parallel or 1
        info = self._model_info(parsed)
        weights = None
        notes = []
        kv_fields: dict = {}
        if info is not None:
            kv_fields, note = self._kv_fields(info, tp)
            if note:
                notes.append(note)
            if info.weights_bytes is not None:
                weights = info.weights_bytes // tp
        elif self._model_reason:
            notes.append(self._model_reason)
        notes.extend(parsed.refused)
        port = local_port(url)
        if port is None:
            notes.append("remote endpoint: its GPU processes cannot be identified from here")
        elif not pids:
            notes.append(f"no local process listens on port {port}")
        if parsed.kind == "llamacpp" and not parsed.cache.get("kv_pool_tokens"):
            tokens, dtype, why = endpoint.context
            if tokens is not None:  # the page has no KV pool; the command line says it
                parsed.cache.update(kv_pool_tokens=str(tokens), cache_dtype=dtype)
            elif why:
                notes.append(why)
        cpu = tree_cpu(list(tree)) if tree else None
        busiest = cpu.threads[0] if cpu is not None and cpu.threads else None
        layout = dict(kv_config=kv_fields, weights_bytes=weights,
                      weights_source=info.weights_source if info and weights is not None else "",
                      tensor_parallel=tp)
        replicas = ()
        if parsed.replicas:
            pids_of = self._replica_pids(endpoint, parsed) if tree else {}
            model = parsed.model or (info.name if info else "")
            replicas = tuple(self._replica(url, r, pids_of.get(replica_label(r.replica), ()),
                                           layout if r.model in ("", model) else {})
                             for r in parsed.replicas)
            untied = [replica_label(r.replica) for r in parsed.replicas
                      if not pids_of.get(replica_label(r.replica))]
            if untied and pids:
                notes.append("no process on this machine ties replica(s) "
                             + ", ".join(untied[:4]) + " to GPUs")
        # a router's workers are not in its tree: the engine is every replica's processes too
        pids = sorted({*pids, *(p for r in replicas for p in r.pids)})
        return EngineSample(
            **self._readings(url, parsed, info), **layout, data_parallel=parsed.engines,
            pids=tuple(pids), note="; ".join(notes), replicas=replicas,
            cpu_s=cpu.cpu_s if cpu else None,
            ctx_involuntary=cpu.involuntary if cpu else None,
            busiest_thread_cpu_s=busiest.cpu_s if busiest else None,
            busiest_thread=f"{busiest.tid} {busiest.name}" if busiest else "",
            **quota_fields(cpu.quota if cpu else None))

    @staticmethod
    def _readings(url: str, parsed: ParsedMetrics, info: ModelInfo | None) -> dict:
        """The page's (or a replica's) numbers as EngineSample fields."""
        running, waiting, _ = parsed.lora
        return dict(
            kind=parsed.kind, url=url, model=parsed.model or (info.name if info else ""),
            **parsed.values,
            num_gpu_blocks=config_int(parsed.cache.get("num_gpu_blocks")),
            block_size=config_int(parsed.cache.get("block_size")),
            kv_pool_bytes=config_int(parsed.cache.get("kv_cache_memory_bytes")),
            kv_pool_tokens=config_int(parsed.cache.get("kv_pool_tokens")),
            cache_dtype=str(parsed.cache.get("cache_dtype") or ""),
            histograms=parsed.histograms, waiting_by_reason=parsed.waiting_by_reason,
            work_unit=parsed.work_unit,
            lora_running=running, lora_waiting=waiting, lora_max=parsed.lora[2])

    def _replica(self, url: str, parsed: ParsedMetrics, pids: tuple[int, ...],
                 layout: dict) -> EngineSample:
        return EngineSample(**self._readings(url, parsed, None), **layout,
                            replica=replica_label(parsed.replica), data_parallel=1, pids=pids,
                            note="" if pids else "no process on this machine ties it to GPUs")
