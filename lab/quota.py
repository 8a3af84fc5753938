"""A CFS CPU quota on one process, as a container's CPU limit puts one on its processes:
a cgroup of its own with ``cpu.max`` (cgroup v2, where the cpu controller is enabled for
children of the root) or ``cpu.cfs_quota_us`` (v1's cpu hierarchy), the process moved in
for the phase and moved back to where it was after.  Needs root and a writable cgroup
file system; where neither exists, ``Quota.apply`` raises OSError saying why, and the
runner records the phase as not staged.
"""

from __future__ import annotations

import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


def _v2_has_cpu(root: Path) -> bool:
    """Whether children of the v2 root get the cpu controller; enabled where the root
    offers it (the root cgroup may hold processes and still delegate)."""
    try:
        if "cpu" in (root / "cgroup.subtree_control").read_text().split():
            return True
        if "cpu" not in (root / "cgroup.controllers").read_text().split():
            return False
        (root / "cgroup.subtree_control").write_text("+cpu")
        return True
    except OSError:
        return False


def _v1_path(pid: int, root: Path) -> Path | None:
    """The cgroup of ``pid`` in v1's cpu hierarchy (``cpu`` or ``cpu,cpuacct``)."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            for mount in ("cpu", "cpu,cpuacct"):
                if (root / mount / "cpu.cfs_quota_us").exists():
                    return root / mount / path.lstrip("/")
    return None


class Quota:
    """``cores`` of CPU time per period for ``pid`` while applied."""

    def __init__(self, pid: int, cores: float, name: str, root: Path = CGROUP_ROOT):
        self.pid, self.cores, self.name, self.root = pid, cores, name, root
        self.path: Path | None = None
        self.home: Path | None = None

    def apply(self) -> str:
        """Moves the process into its quota; returns the cgroup's path."""
        quota_us = max(1000, int(self.cores * PERIOD_US))
        if _v2_has_cpu(self.root):
            self.home, self.path = self.root, self.root / self.name
            self.path.mkdir(exist_ok=True)
            (self.path / "cpu.max").write_text(f"{quota_us} {PERIOD_US}")
        else:
            home = _v1_path(self.pid, self.root)
            if home is None:
                raise OSError("no cgroup v2 cpu controller and no v1 cpu hierarchy here")
            self.home, self.path = home, home / self.name
            self.path.mkdir(exist_ok=True)
            (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.path / "cpu.cfs_quota_us").write_text(str(quota_us))
        (self.path / "cgroup.procs").write_text(str(self.pid))
        return str(self.path)

    def release(self, patience_s: float = 3.0) -> str | None:
        """Back where it was, with anything it forked in the phase; the cgroup removed.
        A thread exiting while the process moves stays behind until it is gone, so the
        removal is retried for ``patience_s``; returns why the cgroup is still there, or
        None (the process may be gone: best effort, never raises)."""
        if self.path is None or self.home is None:
            return None
        path, self.path = self.path, None
        deadline = time.monotonic() + patience_s
        while True:
            for pid in _members(path) or [str(self.pid)]:
                try:
                    (self.home / "cgroup.procs").write_text(pid)
                except OSError:
                    pass  # gone, or exiting
            try:
                path.rmdir()
                return None
            except FileNotFoundError:
                return None
            except OSError as exc:
                if time.monotonic() >= deadline:
                    return f"{path} not removed: {exc.strerror} (holds {_members(path)})"
            time.sleep(0.05)


def _members(path: Path) -> list[str]:
    """The processes a cgroup holds now ([] once it is gone)."""
    try:
        return (path / "cgroup.procs").read_text().split()[:4096]
    except OSError:
        return []
