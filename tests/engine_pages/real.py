"""What the tests of real engines (vLLM, llama.cpp) share: a free port, the reference parse
of a page, and the CPUs: the engine gets its own core, the clients and gputop the rest
(on two cores shared by everything, a CPU engine's spinning threads make throughput swing
from second to second, and a "healthy" run is no longer healthy)."""

from __future__ import annotations

import os
import socket

ENGINE_CPUS = {os.cpu_count() - 1} if (os.cpu_count() or 1) >= 2 else None
CLIENT_CPUS = set(range(os.cpu_count() - 1)) if ENGINE_CPUS else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def full_parse(text: str) -> dict[str, float]:
    """The engine's own numbers, the whole page parsed by prometheus_client: the reference
    (samples of one name added up; vLLM's cache_config_info labels as cache:KEY)."""
    from prometheus_client.parser import text_string_to_metric_families
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[s.name] = out.get(s.name, 0.0) + s.value
            if s.name == "vllm:cache_config_info":
                out.update({f"cache:{k}": v for k, v in s.labels.items()})
    return out


class Watch:
    """gputop's sampler and model over a real engine, ticking at 1 Hz in a thread, with the
    stand-in GPU (``fake``) reading 97% busy while ``busy(frame)`` says the engine works
    and 3% when it does not, as a real card would (util is the time any kernel ran)."""

    def __init__(self, fake, sources):
        import threading

        from gputop.model.detect import make_fold
        from gputop.model.timeline import Timeline
        from gputop.sampler import Sampler

        self.fake = fake
        self.sampler = Sampler(sources, 1.0)
        self.timeline = Timeline(3600, make_fold())
        self.lock = threading.Lock()

    def busy(self, frame) -> bool | None:
        """Whether the engine works at this frame (None: unknown, util unchanged); called
        with the lock held, the frame already in the timeline."""
        raise NotImplementedError

    def on_frame(self, frame) -> None:
        self.fake.advance(1.0)
        with self.lock:
            self.timeline.append(frame)
            busy = self.busy(frame)
        if busy is not None:
            self.fake.gpus[0].util_pct = 97 if busy else 3

    def __enter__(self):
        self.sampler.open()
        self.sampler.start(self.on_frame)
        return self

    label = "nvml (stand-in) + a real engine"  # the recording's source, when one is kept

    def __exit__(self, *exc) -> None:
        import time
        from pathlib import Path

        self.sampler.close()
        keep = os.environ.get("GPUTOP_TEST_RECORD_DIR")  # keep what the engine showed
        if keep:
            from gputop.record.store import Recorder
            name = os.environ.get("PYTEST_CURRENT_TEST", "engine").split("::")[-1].split(" ")[0]
            recorder = Recorder(Path(keep) / f"{name}-{int(time.time())}.gputop", self.label)
            for frame in self.frames():
                recorder.append(frame)
            recorder.close()

    def wait_ticks(self, count: int, timeout_s: float = 120.0) -> None:
        import time

        target = len(self.timeline) + count
        deadline = time.monotonic() + timeout_s
        while len(self.timeline) < target and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(self.timeline) >= target, "gputop stopped ticking"

    def states(self):
        with self.lock:
            return [self.timeline.state(i) for i in range(len(self.timeline))]

    def frames(self):
        with self.lock:
            return [self.timeline.frame(i) for i in range(len(self.timeline))]
