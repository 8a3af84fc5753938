"""Finding a serving engine's /metrics endpoint on this machine without being told.

A process counts as an engine only by what it runs, never by a substring of its
command line (a virtual environment named ``vllm-venv`` is no engine): its executable
(``vllm``, ``sglang``, ``text-generation-launcher``, ``llama-server``) or the module a
Python runs with ``-m`` (``vllm.entrypoints...``, ``sglang.launch_server``).  Only the
ports such a process itself listens on are tried, the one its ``--port`` names (or the
engine's default) first, each with one short ``GET /metrics``; vLLM's internal ZMQ and
gloo ports are never reached when the API port answers first.

The processes are other users' and so are their ports: only loopback addresses are
probed (a user can listen on 169.254.169.254 with IP_FREEBIND; root must not connect
there for them), at most ``MAX_URLS_PER_PROCESS`` ports of a process and ``MAX_URLS`` in
all, in parallel (each process's best port first), so a fake ``vllm`` with 60 ports that
accept and never answer costs a probe's timeout, not the 34 s it did when every port was
tried one by one.
"""

from __future__ import annotations

import ipaddress
import os
import re
import time
from dataclasses import dataclass

import psutil

from gputop.patterns import program

# executable base name -> engine
EXECUTABLES = {"vllm": "vllm", "sglang": "sglang", "text-generation-launcher": "tgi",
               "text-generation-router": "tgi", "text-generation-server": "tgi",
               "llama-server": "llamacpp"}
# python -m MODULE: module prefix -> engine
MODULES = (("vllm", "vllm"), ("sglang", "sglang"), ("llama_cpp.server", "llamacpp"))
DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000, "tgi": 3000, "llamacpp": 8080}
PORT_FLAG = re.compile(r"^--port(?:=(\d+))?$")
PROBE_TIMEOUT_S = 0.5
MAX_URLS_PER_PROCESS = 8
MAX_URLS = 32
PROBE_WORKERS = 8  # probes at once: MAX_URLS all silent end within 4 x PROBE_TIMEOUT_S


def engine_kind(argv: list[str]) -> str | None:
    """The engine a command line runs, by its executable or ``-m`` module; else None."""
    if not argv:
        return None
    exe = os.path.basename(argv[0])
    if exe in EXECUTABLES:
        return EXECUTABLES[exe]
    how, name = program(argv)
    if how == "module":
        for prefix, kind in MODULES:
            if name == prefix or name.startswith(prefix + "."):
                return kind
    elif how == "script":  # python /venv/bin/vllm serve ...
        return EXECUTABLES.get(name)
    return None


def named_port(argv: list[str]) -> int | None:
    for i, arg in enumerate(argv):
        match = PORT_FLAG.match(arg)
        if not match:
            continue
        value = match.group(1) or (argv[i + 1] if i + 1 < len(argv) else "")
        if value.isdigit() and 0 < int(value) < 65536:
            return int(value)
    return None


@dataclass(frozen=True)
class Candidate:
    """An engine-looking process and the metrics URLs to try, best first."""

    pid: int
    create_time: float
    kind: str
    urls: tuple[str, ...]


def _host_for(address: str) -> str | None:
    """Where to reach a listening address from here over loopback (a wildcard listens
    there too), or None: an address on another interface, or one a user bound without
    owning it (IP_FREEBIND), is not gputop's to connect to."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return None
    if ip.is_unspecified:
        return "127.0.0.1" if ip.version == 4 else "[::1]"
    if not ip.is_loopback:
        return None
    return str(ip) if ip.version == 4 else f"[{ip}]"


def listening(proc: psutil.Process) -> list[tuple[str, int]]:
    """(address, port) of the TCP sockets one process listens on."""
    try:
        return [(c.laddr.ip, c.laddr.port) for c in proc.net_connections(kind="tcp")
                if c.status == psutil.CONN_LISTEN and c.laddr]
    except (psutil.Error, OSError):
        return []


def candidate(proc: psutil.Process, argv: list[str] | None = None,
              any_process: bool = False) -> Candidate | None:
    """The URLs to try for one process, or None when it is no engine (unless
    ``any_process``) or listens nowhere."""
    try:
        argv = argv if argv is not None else proc.cmdline()
        started = proc.create_time()
    except (psutil.Error, OSError):
        return None
    kind = engine_kind(argv) or ("unknown" if any_process else None)
    if kind is None:
        return None
    sockets = listening(proc)
    if not sockets:
        return None
    first = named_port(argv) or DEFAULT_PORTS.get(kind)
    sockets.sort(key=lambda s: (s[1] != first, s[1]))
    urls = tuple(dict.fromkeys(f"http://{host}:{port}/metrics" for host, port in
                               ((_host_for(ip), port) for ip, port in sockets) if host))
    if not urls:
        return None
    return Candidate(proc.pid, started, kind, urls[:MAX_URLS_PER_PROCESS])


class _Seen:
    """What each process ran when first looked at, so a discovery every few seconds reads
    the command lines of new processes only: on a host with thousands of processes,
    reading every one each time cost more than the rest of a tick.  Forgotten every
    FORGET_S, so a process that exec'd into an engine after it was seen is found then."""

    FORGET_S = 60.0

    def __init__(self) -> None:
        self.engine_like: dict[int, tuple[psutil.Process, bool]] = {}
        self.since = time.monotonic()

    def looks_like_engine(self, proc: psutil.Process) -> tuple[bool, list[str] | None]:
        """(whether ``proc`` runs an engine, its argv when it was read now)."""
        known = self.engine_like.get(proc.pid)
        if known is not None and known[0] is proc and not known[1]:
            return False, None  # the same process (psutil's cached handle), no engine
        try:
            argv = proc.cmdline()
        except psutil.Error:
            return False, None
        engine = engine_kind(argv) is not None
        self.engine_like[proc.pid] = (proc, engine)
        return engine, argv

    def prune(self, alive: set[int]) -> None:
        if time.monotonic() - self.since > self.FORGET_S:
            self.engine_like.clear()
            self.since = time.monotonic()
        for pid in set(self.engine_like) - alive:
            del self.engine_like[pid]


_seen = _Seen()


def candidates(only_pids: set[int] | None = None) -> list[Candidate]:
    """Engine processes on this machine that listen on a port, oldest first (the API
    server before its workers).  Within a pinned tree (``only_pids``, the user's own
    choice) a process that listens counts even when it does not look like an engine,
    after those that do."""
    found, alive = [], set()
    for proc in psutil.process_iter():
        alive.add(proc.pid)
        if only_pids is not None and proc.pid not in only_pids:
            continue
        if only_pids is None:
            engine, argv = _seen.looks_like_engine(proc)
            if not engine:
                continue
        else:
            try:
                argv = proc.cmdline()
            except psutil.Error:
                continue
        c = candidate(proc, argv or [], any_process=only_pids is not None)
        if c is not None:
            found.append(c)
    _seen.prune(alive)
    found.sort(key=lambda c: (c.kind == "unknown", c.create_time, c.pid))
    return found


def first_answering(found: list[Candidate], probe) -> str | None:
    """The first URL, in the candidates' order, for which ``probe(url)`` (a bounded fetch
    that raises on failure) succeeds.  Each process's best port (the one its ``--port``
    names, or the engine's default) is tried first, all processes at once; only if none
    answers are their other ports tried, so an engine's internal ports are never touched
    when its API port answers.  At most MAX_URLS in all, PROBE_WORKERS at once."""
    firsts = [(c.pid, c.urls[0]) for c in found if c.urls][:MAX_URLS]
    rest = [(c.pid, url) for c in found for url in c.urls[1:]][:max(0, MAX_URLS - len(firsts))]
    for tries in (firsts, rest):
        answered = _answering(tries, probe, enough=1)
        if answered:
            return next(iter(answered.values()))
    return None


def all_answering(found: list[Candidate], probe, skip_pids: set[int],
                  limit: int) -> list[str]:
    """Every engine that answers, one URL per process, in the candidates' order, at most
    ``limit``: each process's best port first, all at once, then the other ports of those
    whose best one did not answer (as ``first_answering``); processes in ``skip_pids`` (the
    engines already read and their trees) are not tried.  A box of several independent
    servers is read whole, each judged on its own GPUs."""
    todo = [c for c in found if c.urls and c.pid not in skip_pids]
    answer = _answering([(c.pid, c.urls[0]) for c in todo][:MAX_URLS], probe)
    answer.update(_answering([(c.pid, url) for c in todo if c.pid not in answer
                              for url in c.urls[1:]][:MAX_URLS], probe))
    return [answer[c.pid] for c in todo if c.pid in answer][:limit]


def _answering(tries: list[tuple[int, str]], probe, enough: int | None = None) -> dict[int, str]:
    """The first URL of each process (pid, url: in order of preference) that answers,
    probed all at once (PROBE_WORKERS at a time), walked in order; done once ``enough``
    processes answered (the probes still running are cancelled)."""
    import concurrent.futures as cf

    answer: dict[int, str] = {}
    if not tries:
        return answer
    pool = cf.ThreadPoolExecutor(max_workers=PROBE_WORKERS, thread_name_prefix="gputop-probe")
    try:
        futures = [pool.submit(probe, url) for _, url in tries]
        for (pid, url), future in zip(tries, futures):
            if pid in answer:
                continue
            try:
                future.result()
            except Exception:  # any failure: not this one
                continue
            answer[pid] = url
            if enough is not None and len(answer) >= enough:
                break
        return answer
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
