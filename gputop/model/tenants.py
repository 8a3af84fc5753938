"""Who shares a GPU: its processes grouped by container, pod or Slurm job, with their share.

On a time-sliced GPU every tenant reads the whole device's GPU-Util (dcgm-exporter's
per-pod numbers were the device's until it summed ``nvmlDeviceGetProcessUtilization``
per cgroup).  The per-process samples NVML gives (SM and memory-controller percent of
the sample period) add up per tenant here, so pane 8, ``snapshot --json`` and the
exporter tell a shared GPU's tenants apart.  NVIDIA calls the per-process numbers
reliable only with one process on the GPU; they are what the driver has.

A tenant's util is the sum over its processes that have a sample; None when none has
one (unknown, not 0).  Pure functions of a frame's processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gputop.schema import ProcSample

# group-by keys: what each groups on, as pane 8's g key steps through them
KINDS = ("container", "pod", "slurm_job")
KIND_WORDS = {"container": "container", "pod": "pod", "slurm_job": "Slurm job"}


@dataclass(frozen=True)
class Tenant:
    kind: str  # "container" | "pod" | "slurm_job" | "owner" (the exporter's finest split)
    name: str  # "docker:3f2a1b9c0d1e", "serving/vllm-7d9f", "42"; "" for no such owner
    gpu_index: int
    mig_index: int | None
    pids: tuple[int, ...]
    mem_bytes: int | None  # GPU memory of its processes (None: none of them reports it)
    sm_util_pct: float | None
    mem_util_pct: float | None
    # the finest owner the exporter labels: every process has exactly one
    container: str = ""
    pod: str = ""
    slurm_job: str = ""
    users: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """ "pod serving/vllm-7d9f", or "no pod" for the processes outside any."""
        word = KIND_WORDS.get(self.kind, self.kind)
        return f"{word} {self.name}" if self.name else f"no {word}"


def key(process: ProcSample, kind: str) -> str:
    """The name ``process`` is grouped under for ``kind`` ("" when it has none)."""
    if kind == "container":
        return process.container
    if kind == "pod":
        return process.pod
    if kind == "slurm_job":
        return process.slurm_job
    raise ValueError(f"no such grouping: {kind}")


def _sum(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _tenant(kind: str, name: str, group: list[ProcSample], **owner: str) -> Tenant:
    first = group[0]
    return Tenant(kind=kind, name=name, gpu_index=first.gpu_index, mig_index=first.mig_index,
                  pids=tuple(sorted({p.pid for p in group})),
                  mem_bytes=_sum([p.mem_bytes for p in group]),  # type: ignore[arg-type]  # ints sum to an int
                  sm_util_pct=_sum([p.sm_util_pct for p in group]),
                  mem_util_pct=_sum([p.mem_util_pct for p in group]),
                  users=tuple(sorted({p.user for p in group if p.user})), **owner)


def _grouped(processes: tuple[ProcSample, ...], group_key: Callable[[ProcSample], tuple[Any, ...]]
             ) -> dict[tuple[Any, ...], list[ProcSample]]:
    groups: dict[tuple[Any, ...], list[ProcSample]] = {}
    seen: set[tuple[int, int]] = set()
    for p in processes:
        if (p.pid, p.gpu_index) in seen:  # one process counts once per GPU
            continue
        seen.add((p.pid, p.gpu_index))
        groups.setdefault((p.gpu_index, p.mig_index, *group_key(p)), []).append(p)
    return groups


def _order(group_key: tuple[Any, ...]) -> tuple[Any, ...]:
    gpu, mig, *names = group_key
    return gpu, -1 if mig is None else mig, tuple(names)


def tenants(processes: tuple[ProcSample, ...], kind: str) -> list[Tenant]:
    """One tenant per (GPU, MIG instance, ``kind`` name), by GPU, then name ("" last)."""
    groups = _grouped(processes, lambda p: (key(p, kind),))
    out = [_tenant(kind, k[2], groups[k]) for k in sorted(groups, key=_order)]
    return sorted(out, key=lambda t: (t.gpu_index, t.mig_index is not None,
                                      t.mig_index or 0, t.name == "", t.name))


def owners(processes: tuple[ProcSample, ...]) -> list[Tenant]:
    """The finest split (pod, container, Slurm job together), each process in exactly one:
    what the exporter labels, so ``sum by (pod)`` or ``by (slurm_job)`` never counts a
    process twice."""
    groups = _grouped(processes, lambda p: (p.pod, p.container, p.slurm_job))
    return [_tenant("owner", "", groups[k], pod=k[2], container=k[3], slurm_job=k[4])
            for k in sorted(groups, key=_order)]
