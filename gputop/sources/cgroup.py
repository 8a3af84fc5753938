"""Which container, systemd unit or Kubernetes pod owns a process, from its cgroup.

A GPU server shared by teams runs its jobs in containers and pods; "pid 4121
python3" says little at 3 a.m., "k8s: serving/vllm-7d9f (cri-containerd 3f2a1b9c0d1e)"
says who to call.  The owner is read from ``/proc/PID/cgroup`` (cgroup v2, v1, or
both as on hybrid hosts), then named from what the runtimes leave readable on the
host: the OCI bundle's ``config.json`` annotations (containerd, CRI-O), Docker's
``config.v2.json``, and the kubelet's pod directory.  Nothing here talks to a
daemon or an API server: it must work on a host whose runtime is the thing hung.

A Slurm job is named the same way: ``slurmstepd`` puts each step in a cgroup
``.../slurm/uid_U/job_J/step_S`` (cgroup v1) or ``.../slurmstepd.scope/job_J/step_S``
(v2), so a GPU process is shown as ``slurm:J.S`` with its user, as sacct names steps.

A cgroup's name is chosen by whoever may create it, and on cgroup v2 systemd delegates
subtrees to users (``user@1001.service``): a user can make
``.../user@1001.service/docker-<victim id>.scope`` and move into it.  So a container or
pod named by a cgroup directory that a user owns (not root) is that user's claim: it is
shown as ``uid N: <the directory>``, never as the container it names, its runtime state
files are not read, and ``--container`` does not pin to it.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import json
import os
import re
import time
from dataclasses import dataclass

from gputop import hostroot
from gputop.safefile import UnsafeFile, read_regular

SHORT_ID = 12  # as docker ps shows ids
MOUNTS_KEPT_S = 60.0  # /proc/self/mountinfo is read again after this long

# (runtime, pattern) over one cgroup path component, most specific first
_CONTAINER_PATTERNS = (
    ("cri-containerd", re.compile(r"^cri-containerd-([0-9a-f]{64})\.scope$")),
    ("cri-o", re.compile(r"^crio-(?:conmon-)?([0-9a-f]{64})\.scope$")),
    ("docker", re.compile(r"^docker-([0-9a-f]{64})\.scope$")),
    ("podman", re.compile(r"^libpod-(?:conmon-)?([0-9a-f]{64})(?:\.scope)?$")),
    ("nerdctl", re.compile(r"^nerdctl-([0-9a-f]{64})\.scope$")),
    ("container", re.compile(r"^([0-9a-f]{64})$")),  # cgroupfs drivers: /docker/<id>, /kubepods/../<id>
)
# kubepods-burstable-pod1b2c..._slice (systemd driver) or pod1b2c-... (cgroupfs driver)
_POD_PATTERN = re.compile(r"^(?:kubepods-(?:[a-z]+-)?)?pod([0-9a-f_-]{32,40})(?:\.slice)?$")
_CGROUPFS_PARENTS = {"docker": "docker", "libpod_parent": "podman", "default": "containerd"}

# Where runtimes keep a container's OCI spec, with its annotations (relative to root)
_BUNDLE_CONFIGS = (
    "run/containerd/io.containerd.runtime.v2.task/*/{id}/config.json",
    "run/containers/storage/overlay-containers/{id}/userdata/config.json",
    "var/lib/containers/storage/overlay-containers/{id}/userdata/config.json",
)
_DOCKER_CONFIG = "var/lib/docker/containers/{id}/config.v2.json"
_POD_NAME_KEYS = ("io.kubernetes.cri.sandbox-name", "io.kubernetes.pod.name")
_POD_NAMESPACE_KEYS = ("io.kubernetes.cri.sandbox-namespace", "io.kubernetes.pod.namespace")
_CONTAINER_NAME_KEYS = ("io.kubernetes.cri.container-name", "io.kubernetes.container.name")


@dataclass(frozen=True)
class Owner:
    """What owns a process.  Empty strings where nothing is known."""

    cgroup: str = ""  # the most telling cgroup path
    runtime: str = ""  # docker, cri-containerd, cri-o, podman, ... or systemd
    container_id: str = ""  # full id
    container_name: str = ""  # docker's name or the pod's container name, where readable
    unit: str = ""  # the systemd unit or slice (when no container)
    pod_uid: str = ""
    pod_name: str = ""
    pod_namespace: str = ""
    slurm_job: str = ""  # the job id ("42"), from the cgroup slurmstepd made
    slurm_step: str = ""  # "0", "batch", "extern", "interactive"
    slurm_uid: int | None = None  # the job's user (cgroup v1 names it: uid_1000)
    delegated_uid: int | None = None  # the user who owns the cgroup named like a container

    @property
    def container(self) -> str:
        """Short form for a table: "docker:3f2a1b9c0d1e", "slurm:42.0", the systemd unit, or
        "uid 1001: docker-....scope" for a user's own cgroup named like a container."""
        if self.container_id:
            return f"{self.runtime}:{self.container_id[:SHORT_ID]}"
        if self.delegated_uid is not None:
            return f"uid {self.delegated_uid}: {self.unit[:24]}"
        if self.slurm_job:
            return f"slurm:{self.job}"
        return f"systemd:{self.unit}" if self.unit else ""

    @property
    def job(self) -> str:
        """The Slurm step as sacct names it ("42.0", "42.batch"), or the job ("42")."""
        if not self.slurm_job:
            return ""
        return f"{self.slurm_job}.{self.slurm_step}" if self.slurm_step else self.slurm_job

    @property
    def pod(self) -> str:
        """"namespace/name" where readable, else "pod <uid>"."""
        if self.pod_name:
            return f"{self.pod_namespace}/{self.pod_name}" if self.pod_namespace else self.pod_name
        return f"pod {self.pod_uid}" if self.pod_uid else ""


def cgroup_entries(text: str) -> list[tuple[str, str]]:
    """(controllers, path) of /proc/PID/cgroup lines ("hierarchy:controllers:path"), the
    unified (v2) one first (controllers ""), then name=systemd, then the v1 controllers
    in file order."""
    unified, systemd, others = [], [], []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            unified.append((controllers, path))
        elif controllers == "name=systemd":
            systemd.append((controllers, path))
        else:
            others.append((controllers, path))
    return unified + systemd + others


def _mounts() -> dict[str, str]:
    return _mounts_read(int(time.monotonic() // MOUNTS_KEPT_S))


@functools.lru_cache(maxsize=1)
def _mounts_read(_period: int) -> dict[str, str]:
    """Where this mount namespace mounts each cgroup hierarchy: "" for cgroup2, else its
    controllers as /proc/PID/cgroup lists them ("pids", "cpu,cpuacct", "name=systemd").
    Only mounts of a hierarchy's root: a bind mount of a subtree cannot be checked."""
    found: dict[str, str] = {}
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read(1 << 20).splitlines()
    except OSError:
        return found
    for line in lines:
        before, sep, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if not sep or len(fields) < 5 or len(tail) < 3 or fields[3] != "/":
            continue
        point = fields[4].replace("\\040", " ")
        if tail[0] == "cgroup2":
            found.setdefault("", point)
        elif tail[0] == "cgroup":
            options = [o for o in tail[2].split(",") if o not in ("rw", "ro")
                       and not o.startswith(("release_agent", "clone_children", "noprefix",
                                             "xattr", "cpuset_v2_mode", "nsdelegate"))]
            found.setdefault(",".join(options), point)
    return found


def directory_owner(controllers: str, path: str) -> int | None:
    """The uid owning a cgroup's directory (None when it cannot be checked from here)."""
    point = _mounts().get(controllers)
    if point is None or ".." in path.split("/"):
        return None
    try:
        return os.stat(os.path.join(point, path.lstrip("/")), follow_symlinks=False).st_uid
    except OSError:
        return None


def owner_from_cgroup(text: str, root: str = "/", owner_of=None) -> Owner:
    """The owner named by a /proc/PID/cgroup text; ``root`` is where the host's /run and
    /var are (tests point it at a directory of their own); ``owner_of(controllers,
    path)`` gives the uid owning a cgroup directory (``directory_owner`` for a live
    process; None: names are not checked)."""
    entries = cgroup_entries(text)
    paths = [path for _, path in entries]
    slurm = next((found for found in map(slurm_job, paths) if found), {})
    for controllers, path in entries:  # a container in any hierarchy wins over a plain path
        owner = _container_owner(path, root, owner_of and (
            lambda sub, c=controllers: owner_of(c, sub)))
        if owner is not None:
            return dataclasses.replace(owner, **slurm)  # enroot / pyxis: a container in a job
    if slurm:  # v1 names the job in its controllers' lines, name=systemd says slurmd.service
        return Owner(cgroup=next(p for p in paths if slurm_job(p)), runtime="slurm", **slurm)
    path = next((p for p in paths if p not in ("", "/")), "")
    unit = next((c for c in reversed(path.split("/"))
                 if c.endswith((".service", ".scope", ".slice"))), "")
    if unit == "init.scope":  # systemd itself, not a unit anyone runs
        unit = ""
    return Owner(cgroup=path, runtime="systemd" if unit else "", unit=unit)


_SLURM_V1_ROOT = re.compile(r"^slurm(?:_[\w.-]+)?$")  # slurm, or slurm_<node> (multiple-slurmd)
_SLURM_V2_ROOT = re.compile(r"^(?:[\w.-]+_)?slurmstepd\.scope$")
_SLURM_UID = re.compile(r"^uid_(\d{1,10})$")
_SLURM_JOB = re.compile(r"^job_(\d{1,20})$")
_SLURM_STEP = re.compile(r"^step_(\w{1,32})$")


def slurm_job(path: str) -> dict:
    """The Owner fields of a Slurm job's cgroup path ({} when it is none): v1
    ``/slurm/uid_1000/job_42/step_0/task_0``, v2 ``/system.slice/slurmstepd.scope/job_42/
    step_0/user/task_0``.  The job must sit right under slurm's own root (and, on v1, its
    uid level), and that root at the top of the hierarchy (v2: in system.slice), where only
    root makes cgroups: a directory named job_N elsewhere, or a user's delegated subtree
    (``user@1001.service/.../slurmstepd.scope/job_42``), is not a job.  Leading ".."s (a
    reader in a cgroup namespace of its own) are skipped."""
    parts = [p for p in path.split("/") if p]
    while parts and parts[0] == "..":
        parts.pop(0)
    for i, part in enumerate(parts):
        job = _SLURM_JOB.match(part)
        if not job or i == 0:
            continue
        uid = _SLURM_UID.match(parts[i - 1])
        if uid and i == 2 and _SLURM_V1_ROOT.match(parts[0]):
            fields = {"slurm_job": job.group(1), "slurm_uid": int(uid.group(1))}
        elif _SLURM_V2_ROOT.match(parts[i - 1]) and parts[:i - 1] in ([], ["system.slice"]):
            fields = {"slurm_job": job.group(1)}
        else:
            continue
        step = _SLURM_STEP.match(parts[i + 1]) if i + 1 < len(parts) else None
        return {**fields, "slurm_step": step.group(1) if step else ""}
    return {}


def _container_owner(path: str, root: str, owner_of=None) -> Owner | None:
    parts = [p for p in path.split("/") if p]
    container_id = runtime = pod_uid = ""
    named_at: list[int] = []  # the components that name a pod or a container
    for i, part in enumerate(parts):
        pod = _POD_PATTERN.match(part)
        if pod:
            pod_uid = pod.group(1).replace("_", "-")
            named_at.append(i)
            continue
        for name, pattern in _CONTAINER_PATTERNS:
            found = pattern.match(part)
            if found:
                container_id, runtime = found.group(1), name
                named_at.append(i)
                if name == "container":  # a bare id: its parent says which runtime
                    parent = parts[i - 1] if i else ""
                    runtime = "kubepods" if pod_uid else _CGROUPFS_PARENTS.get(parent, "container")
                break
    if not container_id and not pod_uid:
        return None
    if owner_of is not None:
        for i in named_at:  # who made the directories that carry those names?
            uid = owner_of("/" + "/".join(parts[: i + 1]))
            if uid is not None and uid != 0:
                return Owner(cgroup=path, unit=parts[i][:200], delegated_uid=uid)
    annotations, container_name = _runtime_state(container_id, root) if container_id else ({}, "")
    pod_name = _first(annotations, _POD_NAME_KEYS)
    namespace = _first(annotations, _POD_NAMESPACE_KEYS)
    if pod_uid and not pod_name:
        pod_name, namespace = _kubelet_pod(pod_uid, root)
    return Owner(cgroup=path, runtime=runtime, container_id=container_id,
                 container_name=_first(annotations, _CONTAINER_NAME_KEYS) or container_name,
                 pod_uid=pod_uid, pod_name=pod_name, pod_namespace=namespace)


def _first(mapping: dict, keys: tuple[str, ...]) -> str:
    return next((str(mapping[k]) for k in keys if mapping.get(k)), "")


def _read_json(path: str, limit_bytes: int = 4 << 20) -> dict:
    """A runtime's state file, or {} when absent, unreadable, too large or not JSON."""
    try:
        data = json.loads(read_regular(path, limit_bytes))  # never blocks on a FIFO
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _runtime_state(container_id: str, root: str) -> tuple[dict, str]:
    """(OCI annotations, container name) from whichever runtime's files exist."""
    for pattern in _BUNDLE_CONFIGS:
        for path in glob.glob(os.path.join(root, pattern.format(id=container_id))):
            annotations = _read_json(path).get("annotations")
            if isinstance(annotations, dict):
                return annotations, ""
    docker = _read_json(os.path.join(root, _DOCKER_CONFIG.format(id=container_id)))
    config = docker.get("Config")
    labels = config.get("Labels") if isinstance(config, dict) else None
    name = str(docker.get("Name") or "").lstrip("/")
    return (labels if isinstance(labels, dict) else {}), name


def _kubelet_pod(pod_uid: str, root: str) -> tuple[str, str]:
    """(pod name, namespace) from the kubelet's pod directory: the pod's own /etc/hosts
    names it (its last line maps the pod IP to the pod's hostname), and the service
    account token volume holds its namespace."""
    pod_dir = os.path.join(root, "var/lib/kubelet/pods", pod_uid)
    name = namespace = ""
    try:
        hosts = read_regular(os.path.join(pod_dir, "etc-hosts"), 65536).decode(errors="replace")
        lines = [ln.split() for ln in hosts.splitlines() if ln.strip() and not ln.startswith("#")]
        if lines and len(lines[-1]) >= 2:
            name = lines[-1][1]
    except OSError:
        pass
    for path in glob.glob(os.path.join(pod_dir, "volumes/kubernetes.io~projected/*/namespace")):
        try:
            namespace = read_regular(path, 256).decode(errors="replace").strip()
            break
        except OSError:
            continue
    return name, namespace


_cache: dict[tuple[int, float | None], Owner] = {}


def process_owner(pid: int, start_time_s: float | None = None, root: str | None = None) -> Owner:
    """The owner of ``pid``, cached per (pid, start time): a process rarely changes cgroup,
    and the lookups behind a pod name read files on every call otherwise."""
    key = (pid, start_time_s)
    owner = _cache.get(key) if start_time_s is not None else None
    if owner is not None:
        return owner
    try:
        with open(hostroot.proc(pid, "cgroup")) as f:
            text = f.read(65536)
    except OSError:
        return Owner()
    owner = owner_from_cgroup(text, hostroot.root() if root is None else root,
                              owner_of=directory_owner)
    if start_time_s is not None:
        if len(_cache) > 4096:
            _cache.clear()
        _cache[key] = owner
    return owner


# ---------------------------------------------------------------- CPU quota

CGROUP_DEPTH = 32  # the most cgroup levels walked up from a process's own


@dataclass(frozen=True)
class CpuQuota:
    """A cgroup's CPU bandwidth limit and how often it bit: CFS periods, cumulative."""

    cores: float  # the quota, in cores (quota / period)
    periods: int  # CFS periods in which the cgroup ran
    throttled: int  # ...of which it ran out of quota and was held back


def cpu_quota(pid: int) -> CpuQuota | None:
    """The nearest CPU quota over ``pid`` (its cgroup's, else an ancestor's: Kubernetes sets
    a container's and its pod's), from cgroup v2 ``cpu.max`` and ``cpu.stat`` or v1's cpu
    controller, read under each hierarchy's root mount and never through a link.  A quota
    that holds an engine back shows in no run queue or PSI on the host, only here.  None
    when nothing limits it or nothing can be read.  Where the quota sits is looked up once
    a ``MOUNTS_KEPT_S`` per process and cgroup (this runs on every tick): a tick reads the
    process's /proc cgroup file and that one cgroup's files, so a process moved into a
    limited cgroup (a runtime, or ``systemctl set-property``) shows at once."""
    try:
        with open(hostroot.proc(pid, "cgroup")) as f:
            text = f.read(65536)
    except OSError:
        return None
    # (the file's hash, not the file: 4,096 keys of up to 64 KiB each would be 256 MiB)
    key = (pid, hash(text), int(time.monotonic() // MOUNTS_KEPT_S))
    if key not in _quota_dirs:
        if len(_quota_dirs) > 4096:
            _quota_dirs.clear()
        _quota_dirs[key] = _find_quota(text)
    found = _quota_dirs[key]
    return _quota_at(*found) if found is not None else None


# (pid, its /proc cgroup file's hash, period) -> where its quota sits
_quota_dirs: dict[tuple[int, int, int], tuple[str, bool] | None] = {}


def _find_quota(text: str) -> tuple[str, bool] | None:
    """(directory, is v2) of the nearest cgroup over a process's /proc cgroup ``text``
    that sets a CPU quota."""
    mounts = _mounts()
    for controllers, path in cgroup_entries(text):
        if controllers and "cpu" not in controllers.split(","):
            continue
        point = mounts.get(controllers)
        parts = [p for p in path.split("/") if p]
        if point is None or ".." in parts:
            continue
        for depth in range(len(parts), max(-1, len(parts) - CGROUP_DEPTH), -1):
            directory = os.path.join(point, *parts[:depth])
            if _quota_at(directory, v2=not controllers) is not None:
                return directory, not controllers
    return None


def _quota_at(directory: str, v2: bool) -> CpuQuota | None:
    def read(name: str) -> str | None:
        try:
            return read_regular(os.path.join(directory, name), 4096,
                                follow_links=False).decode("ascii", "replace")
        except (OSError, UnsafeFile):
            return None

    try:
        if v2:
            limit = (read("cpu.max") or "").split()
            if len(limit) != 2 or limit[0] == "max":
                return None
            quota, period = int(limit[0]), int(limit[1])
        else:
            quota, period = int(read("cpu.cfs_quota_us") or -1), \
                int(read("cpu.cfs_period_us") or 0)
        if quota <= 0 or period <= 0:
            return None
        stat = dict(line.split()[:2] for line in (read("cpu.stat") or "").splitlines()
                    if len(line.split()) >= 2)
        return CpuQuota(round(quota / period, 3), int(stat["nr_periods"]),
                        int(stat["nr_throttled"]))
    except (KeyError, ValueError):
        return None
