"""Pinning: which process tree the dashboard follows, resolved every tick.

``PinState`` is what the user chose (PIDs, or a command-line pattern); it is shared
by the UI (p / P keys) and the sources.  ``ProcTreeSource`` resolves it each tick
to the root processes and all their descendants (a new worker child joins at
once), notes roots that exit, re-pins a pattern when a matching process starts
again, and samples the tree's CPU use: per-thread CPU time, context switches,
CPU pressure and the run queue of its cores.  PIDs are identified together with
their start time, so a recycled PID is never mistaken for the pinned process.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass

import psutil

from gputop import hostroot
from gputop.patterns import CmdlinePattern, PatternError
from gputop.schema import PinnedSample, ThreadSample
from gputop.sources.base import Reading
from gputop.sources.cgroup import CpuQuota, Owner, cpu_quota, process_owner
from gputop.sources.procinfo import same_start
from gputop.units import command_line, shorten

TOP_THREADS = 8
LABEL_CHARS = 60


class PinError(ValueError):
    """A pin that cannot be made (no such process, bad pattern): one line for the user."""


def compile_pattern(pattern: str) -> CmdlinePattern:
    try:
        return CmdlinePattern(pattern)
    except PatternError as exc:
        raise PinError(f"--match {exc}") from None


@dataclass(frozen=True)
class Pin:
    pids: tuple[tuple[int, float], ...] = ()  # (pid, start time)
    pattern: str | None = None
    container: str | None = None  # a container id (or its prefix, or its name)
    pod: str | None = None  # a pod name, namespace/name or UID
    slurm_job: str | None = None  # a Slurm job id ("42") or step ("42.0", "42.batch")

    @property
    def by_name(self) -> bool:
        """Pinned by what a process is (pattern, container, pod, job), not by PID: it waits
        for one and follows restarts."""
        return any(x is not None for x in (self.pattern, self.container, self.pod,
                                           self.slurm_job))

    @property
    def active(self) -> bool:
        return bool(self.pids) or self.by_name

    @property
    def waits_for(self) -> str | None:
        """What a pin by name waits for when nothing matches yet."""
        if self.pattern is not None:
            return f"no process matches {self.pattern!r} yet"
        if self.container is not None:
            return f"no process in container {self.container!r} yet"
        if self.pod is not None:
            return f"no process in pod {self.pod!r} yet"
        if self.slurm_job is not None:
            return f"no process in Slurm job {self.slurm_job} yet"
        return None


def pin_pid(pid: int) -> Pin:
    try:
        proc = psutil.Process(pid)
        return Pin(pids=((pid, proc.create_time()),))
    except psutil.NoSuchProcess:
        raise PinError(f"no process {pid}") from None
    except psutil.AccessDenied:
        raise PinError(f"no permission to watch process {pid} (another user's; run as root)") \
            from None


def pin_pattern(pattern: str) -> Pin:
    compile_pattern(pattern)
    return Pin(pattern=pattern)


SLURM_JOB_PATTERN = re.compile(r"^\d{1,20}(?:\.\w{1,32})?$")


def pin_owner(container: str | None = None, pod: str | None = None,
              slurm_job: str | None = None) -> Pin:
    """A pin to every process of a container, pod or Slurm job, as /proc/PID/cgroup
    names them."""
    for what, value in (("--container", container), ("--pod", pod)):
        if value is not None and not 0 < len(value.strip()) <= 253:
            raise PinError(f"{what} needs a name or id of 1-253 characters")
    if slurm_job is not None and not SLURM_JOB_PATTERN.match(slurm_job.strip()):
        raise PinError(f"--slurm-job expects a job id (42) or a step (42.0, 42.batch), got "
                       f"{slurm_job[:40]!r}")
    return Pin(container=container.strip().lower() if container else None,
               pod=pod.strip() if pod else None,
               slurm_job=slurm_job.strip() if slurm_job else None)


def owner_matches(owner: Owner, pin: Pin) -> bool:
    """Does ``owner`` belong to the pinned container (full id, an id prefix of 4 or more
    characters, "runtime:id" as the process list shows it, or its name) or pod
    (name, namespace/name, or UID)?"""
    if pin.container is not None:
        want = pin.container.split(":", 1)[-1]
        if not (owner.container_id and (owner.container_id.startswith(want) and len(want) >= 4)
                or (owner.container_name and owner.container_name == pin.container)
                or (owner.unit and owner.unit == pin.container)):
            return False
    if pin.pod is not None:
        if pin.pod not in (owner.pod_name, owner.pod_uid, owner.pod) or not owner.pod:
            return False
    if pin.slurm_job is not None:
        if not owner.slurm_job or pin.slurm_job not in (owner.slurm_job, owner.job):
            return False
    return True


def owned_roots(pin: Pin, exclude: set[int]) -> list[psutil.Process]:
    """The top-most processes of the pinned container or pod."""
    members = {}
    for proc in psutil.process_iter(["create_time"]):
        if proc.pid in exclude:
            continue
        if owner_matches(process_owner(proc.pid, proc.info.get("create_time")), pin):
            members[proc.pid] = proc
    return _topmost(members)


@dataclass(frozen=True)
class Resolved:
    """A pin resolved against the live process table at one tick."""

    pin: Pin
    roots: tuple[psutil.Process, ...]
    tree: tuple[psutil.Process, ...]
    ports: tuple[int, ...]


class PinState:
    """The current pin, safe to read from source threads while the UI changes it.

    Several sources need the pinned tree each tick (the pin source, the engine's port
    discovery, the eBPF targets); ``resolve`` walks the process table once per tick and
    hands the others the same answer."""

    def __init__(self, pin: Pin = Pin()):
        self._lock = threading.Lock()
        self._pin = pin
        self._resolve_lock = threading.Lock()
        self._resolved: tuple[float, Resolved] | None = None

    def get(self) -> Pin:
        with self._lock:
            return self._pin

    def set(self, pin: Pin) -> None:
        with self._lock:
            self._pin = pin

    def resolve(self, tick: float) -> Resolved | None:
        """The pinned roots, their tree and its listening ports at ``tick`` (the sampler's
        time for this tick); None when nothing is pinned."""
        pin = self.get()
        if not pin.active:
            return None
        with self._resolve_lock:
            cached = self._resolved
            if cached is not None and cached[0] == tick and cached[1].pin == pin:
                return cached[1]
            roots = resolve_roots(pin)
            tree = tree_of(roots)
            resolved = Resolved(pin, tuple(roots), tuple(tree), tuple(listening_ports(tree)))
            self._resolved = (tick, resolved)
            return resolved


def _cmdline(proc: psutil.Process) -> str:
    try:
        return command_line(proc.cmdline())
    except psutil.Error:
        return ""


def matching_roots(pattern: CmdlinePattern, exclude: set[int]) -> list[psutil.Process]:
    """Processes whose command line matches, keeping only the top-most of each tree."""
    matches = {}
    for proc in psutil.process_iter(["cmdline"]):
        if proc.pid in exclude:
            continue
        cmdline = command_line(proc.info.get("cmdline") or [])
        if cmdline and pattern.search(cmdline):
            matches[proc.pid] = proc
    return _topmost(matches)


def _topmost(matches: dict[int, psutil.Process]) -> list[psutil.Process]:
    """Of the matching processes, those with no matching ancestor."""
    roots = []
    for pid, proc in matches.items():
        try:
            ancestors = {p.pid for p in proc.parents()}
        except psutil.Error:
            ancestors = set()
        if not ancestors & set(matches):
            roots.append(proc)
    return sorted(roots, key=lambda p: p.pid)


def resolve_roots(pin: Pin) -> list[psutil.Process]:
    """The pinned processes alive now (a PID whose start time changed is a new process)."""
    if pin.by_name:
        own = {hostroot.own_pid()}  # gputop and its parents never pin themselves
        try:
            own |= {p.pid for p in psutil.Process(min(own)).parents()}
        except (psutil.Error, ValueError):
            pass
        if pin.pattern is None:
            return owned_roots(pin, own)
        return matching_roots(compile_pattern(pin.pattern), own)
    roots = []
    for pid, started in pin.pids:
        try:
            proc = psutil.Process(pid)
            if same_start(proc, started) and proc.status() != psutil.STATUS_ZOMBIE:
                roots.append(proc)
        except psutil.Error:
            continue
    return roots


def tree_of(roots: list[psutil.Process]) -> list[psutil.Process]:
    """The roots and all their live descendants, each once."""
    tree, seen = [], set()
    for root in roots:
        try:
            members = [root] + root.children(recursive=True)
        except psutil.Error:
            members = [root]
        for proc in members:
            if proc.pid in seen:
                continue
            try:
                if proc.status() == psutil.STATUS_ZOMBIE:  # exited, not yet reaped
                    continue
            except psutil.Error:
                continue
            seen.add(proc.pid)
            tree.append(proc)
    return tree


def listening_ports(processes: list[psutil.Process]) -> list[int]:
    ports: list[int] = []
    for proc in processes:
        try:
            for c in proc.net_connections(kind="tcp"):
                if c.status == psutil.CONN_LISTEN and c.laddr.port not in ports:
                    ports.append(c.laddr.port)
        except psutil.Error:
            continue
    return ports


def _label(roots: list[psutil.Process]) -> str:
    if not roots:
        return ""
    words = _cmdline(roots[0]).split()
    # skip the interpreter so "python3 -m vllm.entrypoints..." reads as what it runs
    while len(words) > 1 and (os.path.basename(words[0]).startswith("python") or words[0] == "-m"):
        words = words[1:]
    if words:
        words[0] = os.path.basename(words[0])  # a script's name, not its whole path
    return shorten(" ".join(words), LABEL_CHARS) or roots[0].name()


class ProcTreeSource:
    name = "pin"

    def __init__(self, state: PinState):
        self.state = state
        self._seen_roots: dict[int, float] = {}  # pid -> start time, roots seen alive
        self._exited: dict[int, float] = {}

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        resolved = self.state.resolve(time_mono_s)
        if resolved is None:
            self._seen_roots, self._exited = {}, {}
            return Reading()
        pin, roots, tree = resolved.pin, list(resolved.roots), list(resolved.tree)
        now_wall = time.time()
        alive = {p.pid for p in roots}
        for pid in list(self._seen_roots):
            if pid not in alive and pid not in self._exited:
                self._exited[pid] = now_wall
        for proc in roots:
            try:
                self._seen_roots[proc.pid] = proc.create_time()
            except psutil.Error:
                pass
            self._exited.pop(proc.pid, None)
        waiting = None
        if not roots and pin.waits_for is not None:
            waiting = f"{pin.waits_for}; waiting"
        elif not roots:
            waiting = "the pinned process has exited"
        return Reading(pinned=self._sample(pin, roots, tree, resolved.ports, waiting))

    def _sample(self, pin: Pin, roots, tree, ports, waiting) -> PinnedSample:
        cpu = tree_cpu(tree)
        return PinnedSample(
            label=_label(roots),
            pattern=pin.pattern or pin.container or pin.pod or pin.slurm_job,
            root_pids=tuple(p.pid for p in roots), tree_pids=tuple(p.pid for p in tree),
            exited=dict(self._exited), waiting=waiting,
            cpu_s=cpu.cpu_s, ctx_voluntary=cpu.voluntary, ctx_involuntary=cpu.involuntary,
            threads=cpu.threads, cores=cpu.cores, **quota_fields(cpu.quota),
            cpu_pressure_some_pct=cpu_pressure(), run_queue=run_queue(),
            listening_ports=tuple(sorted(ports)))


@dataclass(frozen=True)
class TreeCpu:
    """A process tree's CPU use, cumulative (rates are derived): the pinned tree's and
    the engine's, for "CPU core chaos" without eBPF."""

    cpu_s: float | None
    voluntary: int | None
    involuntary: int | None
    threads: tuple[ThreadSample, ...]  # busiest first
    cores: tuple[int, ...]  # CPUs the tree may run on
    quota: CpuQuota | None = None  # the CPU quota over its first process's cgroup


def tree_cpu(tree: list[psutil.Process]) -> TreeCpu:
    cpu_s = 0.0
    voluntary = involuntary = 0
    threads: list[ThreadSample] = []
    cores: set[int] = set()
    for proc in tree:
        try:
            with proc.oneshot():
                times = proc.cpu_times()
                cpu_s += times.user + times.system
                switches = proc.num_ctx_switches()
                voluntary += switches.voluntary
                involuntary += switches.involuntary
                cores.update(proc.cpu_affinity() or [])
                for t in proc.threads():
                    threads.append(ThreadSample(tid=t.id, pid=proc.pid,
                                                cpu_s=t.user_time + t.system_time))
        except psutil.Error:
            continue
    threads.sort(key=lambda t: -t.cpu_s)
    top = tuple(ThreadSample(tid=t.tid, pid=t.pid, name=_thread_name(t.pid, t.tid),
                             cpu_s=round(t.cpu_s, 3)) for t in threads[:TOP_THREADS * 4])
    if not tree:
        return TreeCpu(None, None, None, (), ())
    return TreeCpu(round(cpu_s, 3), voluntary, involuntary, top, tuple(sorted(cores)),
                   cpu_quota(tree[0].pid))


def quota_fields(quota: CpuQuota | None) -> dict:
    """A tree's CPU quota as the sample fields that carry it (none: all None)."""
    return {"cpu_quota_cores": quota.cores if quota else None,
            "cpu_periods": quota.periods if quota else None,
            "cpu_throttled_periods": quota.throttled if quota else None}


def _thread_name(pid: int, tid: int) -> str:
    try:
        with open(hostroot.proc(pid, "task", tid, "comm")) as f:
            return f.read().strip()
    except OSError:
        return ""


def cpu_pressure() -> float | None:
    try:
        with open(hostroot.proc("pressure", "cpu")) as f:
            for line in f:
                if line.startswith("some"):
                    return float(line.split("avg10=")[1].split()[0])
    except (OSError, IndexError, ValueError):
        return None
    return None


def run_queue() -> int | None:
    try:
        with open(hostroot.proc("stat")) as f:
            for line in f:
                if line.startswith("procs_running"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None
