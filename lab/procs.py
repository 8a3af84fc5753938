"""Child processes of the lab's runner: started on chosen cores, ended with the runner.

Every child gets PR_SET_PDEATHSIG (SIGKILL when the runner dies, however it dies) and its
own process group, so a phase's hogs and the servers never outlive a run.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import time
import urllib.request

PR_SET_PDEATHSIG = 1


def _child_setup(cpus: set[int] | None):
    def setup() -> None:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if cpus:
            os.sched_setaffinity(0, cpus)
    return setup


class Children:
    """The runner's children, by name; ``stop_all`` ends whatever is still running."""

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, argv: list[str], log_path: str, cpus: set[int] | None = None,
              env: dict | None = None, cwd: str | None = None) -> subprocess.Popen:
        log = open(log_path, "ab")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True, preexec_fn=_child_setup(cpus))
        log.close()
        self.procs[name] = proc
        return proc

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> int | None:
        proc = self.procs.pop(name, None)
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return proc.wait()

    def wait(self, name: str, timeout_s: float) -> int | None:
        """Lets a child finish by itself; killed when it takes longer than ``timeout_s``."""
        proc = self.procs.get(name)
        if proc is None:
            return None
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pass
        return self.stop(name, signal.SIGKILL)

    def stop_all(self) -> None:
        for name in list(self.procs):
            self.stop(name, signal.SIGKILL, timeout_s=10.0)


def http_get(url: str, timeout_s: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        return response.read(8 * 2**20)


def http_post(url: str, body: dict, timeout_s: float = 60.0) -> tuple[int, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status, json.loads(response.read(8 * 2**20))
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read(2**20) or b"{}")


def wait_until(check, timeout_s: float, proc: subprocess.Popen | None = None,
               what: str = "it", step_s: float = 0.2):
    """Polls ``check()`` until it returns something true; RuntimeError naming ``what``
    when ``proc`` exits first or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}")
        try:
            value = check()
            if value:
                return value
        except (OSError, ValueError):
            pass
        time.sleep(step_s)
    raise RuntimeError(f"{what} was not ready after {timeout_s:.0f} s")
