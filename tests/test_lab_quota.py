"""The lab's CPU quota (lab/quota.py) on real processes in a real cgroup: it throttles the
process while applied, and its cgroup is gone after, whatever the process did inside it
(CI once found a ``gputop-lab-quota-*`` cgroup left behind after the training lab)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab.quota import Quota

# a parent that forks a sleeping child on SIGUSR1 and spins threads that start and end
FORKER = r"""
import os, signal, sys, threading, time
def fork(*_):
    if os.fork() == 0:
        time.sleep(60); os._exit(0)
    sys.stdout.write("forked\n"); sys.stdout.flush()
signal.signal(signal.SIGUSR1, fork)
sys.stdout.write("ready\n"); sys.stdout.flush()
while True:
    t = threading.Thread(target=lambda: sum(range(5000))); t.start(); t.join()
"""


@pytest.fixture
def forker():
    if os.geteuid() != 0:
        pytest.fail("a cgroup quota needs root (the README's test command runs as root)")
    proc = subprocess.Popen([sys.executable, "-c", FORKER], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout.readline() == "ready\n"
    yield proc
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass  # the test ended it
    proc.wait()


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_child_forked_under_the_quota_leaves_with_it_and_the_cgroup_goes(forker):
    quota = Quota(forker.pid, 0.1, f"gputop-lab-quota-test-{os.getpid()}")
    path = Path(quota.apply())
    assert (path / "cgroup.procs").read_text().split() == [str(forker.pid)]
    before, started = cpu_ticks(forker.pid), time.monotonic()
    time.sleep(1.0)
    used = (cpu_ticks(forker.pid) - before) / os.sysconf("SC_CLK_TCK")
    # a tenth of a core: its own clock says it ran well under half the wall time it had
    assert used < 0.5 * (time.monotonic() - started), used
    os.kill(forker.pid, 10)  # SIGUSR1: a child born inside the quota's cgroup
    assert forker.stdout.readline() == "forked\n"
    members = (path / "cgroup.procs").read_text().split()
    assert len(members) == 2 and str(forker.pid) in members
    assert quota.release() is None
    assert not path.exists()
    assert quota.release() is None  # twice is harmless


def test_a_process_gone_before_the_release_still_leaves_no_cgroup(forker):
    quota = Quota(forker.pid, 0.5, f"gputop-lab-quota-test-{os.getpid()}")
    path = Path(quota.apply())
    os.killpg(forker.pid, 9)
    forker.wait()
    assert quota.release() is None and not path.exists()
