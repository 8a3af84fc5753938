"""Shared helpers: deterministic simulator frames and a UTC clock for stable screens."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

os.environ["TZ"] = "UTC"
time.tzset()

from gputop.demo import demo_frames as sim_frames  # noqa: E402
from gputop.model.detect import DetectConfig, make_fold  # noqa: E402
from gputop.model.timeline import Timeline  # noqa: E402


def sim_timeline(scenario: str | None, count: int, config: DetectConfig = DetectConfig(),
                 **kwargs) -> Timeline:
    timeline = Timeline(max(count, 600), make_fold(config))
    for frame in sim_frames(scenario, count, **kwargs):
        timeline.append(frame)
    return timeline


@pytest.fixture
def workers():
    """Two real, idle processes for a fake GPU to report, so psutil has names to find."""
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
             for _ in range(2)]
    yield procs
    for p in procs:
        p.kill()
        p.wait()


def tick_timeline(sources, count: int, interval_s: float = 1.0, virtual_clock: bool = False,
                  sleep_s: float = 0.0) -> Timeline:
    """Tick a sampler over ``sources`` ``count`` times into a timeline: on a virtual clock
    (frames ``interval_s`` apart, no waiting) or the real one, sleeping ``sleep_s`` between."""
    from gputop.sampler import Sampler

    sources = sources if isinstance(sources, list) else [sources]
    frame_time = (lambda seq: (1_700_000_000.0 + seq * interval_s, seq * interval_s)) \
        if virtual_clock else None
    sampler = Sampler(sources, interval_s, source_timeout_s=2.0, frame_time=frame_time)
    sampler.open()
    timeline = Timeline(max(10, count), make_fold())
    try:
        for i in range(count):
            timeline.append(sampler.tick())
            if sleep_s and i + 1 < count:
                time.sleep(sleep_s)
    finally:
        sampler.close()
    return timeline


def gputop_processes(marker: str):
    """Running gputop processes whose command line holds ``marker`` (a unique --seed)."""
    import psutil

    return [p for p in psutil.process_iter(["cmdline"])
            if "gputop" in (p.info.get("cmdline") or []) and marker in p.info["cmdline"]]


@pytest.fixture(autouse=True)
def _no_exit_guard_in_the_test_process(monkeypatch):
    """The exit guard ends its process with os._exit: armed inside pytest it would end the
    run silently, exit code 0, with tests left unrun.  Only the command line may arm it."""
    from gputop import exitguard

    def refuse(*args, **kwargs):
        raise AssertionError("exitguard.arm called inside the test process")

    monkeypatch.setattr(exitguard, "arm", refuse)


# ---------------------------------------------------------------- a real cgroup

def _make_cgroup(name: str) -> Path | None:
    """A cgroup named as Docker's cgroupfs driver names one, under the v2 (unified)
    hierarchy where it is mounted, else v1's pids controller."""
    for base in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/pids"):
        if not os.path.exists(os.path.join(base, "cgroup.procs")):
            continue
        path = Path(base) / "docker" / name
        try:
            path.mkdir(parents=True, exist_ok=True)
            return path
        except OSError:
            continue
    return None


@pytest.fixture
def process_in_a_container():
    if os.geteuid() != 0:
        pytest.fail("the cgroup test needs root (the README's test command runs as root)")
    container_id = os.urandom(32).hex()
    path = _make_cgroup(container_id)
    if path is None:
        pytest.fail("no writable cgroup hierarchy under /sys/fs/cgroup")
    child = subprocess.Popen(["sleep", "300"])
    try:
        (path / "cgroup.procs").write_text(str(child.pid))
        yield child, container_id
    finally:
        child.kill()
        child.wait()
        for _ in range(50):
            try:
                path.rmdir()
                path.parent.rmdir() if not any(path.parent.iterdir()) else None
                break
            except OSError:
                time.sleep(0.1)


def need(tool: str) -> str:
    """The path of a tool the README's test command installs; a failure, not a skip, when it
    is missing (a broken install step must not turn tests silently off)."""
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed: the README's test command (scripts/test.sh) "
                    "installs it")
    return path


@pytest.fixture(scope="module")
def nvml_library(tmp_path_factory):
    """A directory holding the C stand-in libnvidia-ml.so.1 (tests/stand_in/), built with
    gcc: the real pynvml loads it through ctypes as it loads the driver's."""
    need("gcc")
    out = tmp_path_factory.mktemp("nvml")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(out / "libnvidia-ml.so.1"),
                    str(Path(__file__).parent / "stand_in" / "nvml_stand_in.c")], check=True)
    return out


def concurrently(work, count: int, seconds: float) -> float:
    """``work(n, stop)`` on ``count`` threads for ``seconds`` (each loops until ``stop`` is
    set); returns the seconds they ran."""
    import threading

    stop = threading.Event()
    threads = [threading.Thread(target=work, args=(n, stop)) for n in range(count)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return time.monotonic() - started
