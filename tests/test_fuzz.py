"""Fuzzing what comes from outside: an engine's metrics page, a frame's JSON, a recording file.

Bounded runs (hypothesis, a fixed number of examples each): every input either reads or is
refused with the module's own error; nothing raises anything else, hangs, or produces a
number that JSON cannot carry.
"""

from __future__ import annotations

import json
import math
import random
import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputop.model.derive import derive
from gputop.export.snapshot import snapshot_dict
from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
from gputop.record.store import Recorder, Recording, RecordingError
from gputop.schema import SchemaError, frame_from_dict, frame_to_dict
from gputop.sources.base import SourceError
from gputop.sources.engine_metrics import recognise
from tests.conftest import sim_frames

FAST = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NAMES = ["vllm:generation_tokens_total", "vllm:num_requests_running", "vllm:kv_cache_usage_perc",
         "vllm:inter_token_latency_seconds_bucket", "vllm:inter_token_latency_seconds_count",
         "vllm:inter_token_latency_seconds_sum", "vllm:request_params_n_bucket",
         "vllm:cache_config_info", "sglang:token_usage", "tgi_queue_size", "llamacpp:requests_processing",
         "vllm:num_requests_waiting_by_reason", "up"]
VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.sampled_from(["NaN", "+Inf", "-Inf", "1e308", "-1", "0", "abc", ""]),
                   st.integers(-10**30, 10**30).map(str))
LABEL_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@st.composite
def metric_lines(draw):
    name = draw(st.sampled_from(NAMES))
    labels = draw(st.dictionaries(st.sampled_from(["engine", "le", "model_name", "reason",
                                                   "num_gpu_blocks"]), LABEL_TEXT, max_size=3))
    inner = ",".join(f'{k}="{json.dumps(v)[1:-1]}"' for k, v in labels.items())
    line = f"{name}{{{inner}}} {draw(VALUES)}" if labels else f"{name} {draw(VALUES)}"
    if draw(st.booleans()):
        line = f"# TYPE {name.removesuffix('_bucket').removesuffix('_count').removesuffix('_sum')} " \
               f"{draw(st.sampled_from(['counter', 'gauge', 'histogram', 'junk']))}\n" + line
    return line


@FAST
@given(st.lists(st.one_of(metric_lines(), st.text(max_size=40)), max_size=25))
def test_metrics_pages_read_or_are_refused(lines):
    try:
        parsed = recognise("\n".join(lines) + "\n")
    except SourceError:
        return
    for value in parsed.values.values():
        assert value is None or math.isfinite(value)
    for hist in parsed.histograms:
        assert all(math.isfinite(b) for b in hist.upper_bounds)
        assert all(math.isfinite(c) and c >= 0 for c in hist.cumulative)


JSON = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
                    lambda children: st.lists(children, max_size=4)
                    | st.dictionaries(st.text(max_size=8), children, max_size=4),
                    max_leaves=30)
FIELDS = ["seq", "time_wall_s", "time_mono_s", "gpus", "processes", "engine", "launch", "host",
          "pinned", "sources"]


@FAST
@given(st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=10))
def test_random_frame_json_decodes_or_is_refused(data):
    try:
        frame_from_dict(data)
    except SchemaError:
        pass


def poison(value, rng: random.Random):
    """A frame's JSON with numbers swapped for NaN, infinities, huge or negative ones."""
    if isinstance(value, dict):
        return {k: poison(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v, rng) for v in value]
    if isinstance(value, float) and rng.random() < 0.3:
        return rng.choice([math.nan, math.inf, -math.inf, 1.7e308, -1e9, 0.0])
    return value


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["logprobs-storm", "launch-jitter", "serving"]))
def test_poisoned_frames_derive_to_valid_json(seed, scenario):
    rng = random.Random(seed)
    timeline = Timeline(100, make_fold())
    for frame in sim_frames(scenario, 12):
        try:
            decoded = frame_from_dict(poison(frame_to_dict(frame), rng))
            timeline.append(decoded)
        except (SchemaError, ValueError):
            continue
    if len(timeline):
        data = snapshot_dict(derive(timeline, timeline.last_index), "fuzz")
        json.dumps(data, allow_nan=False)  # raises on NaN / Infinity


def test_mutated_recordings_never_raise_anything_else(tmp_path):
    original = tmp_path / "r.gtrec"
    recorder = Recorder(original, "demo:serving")
    for frame in sim_frames("serving", 40):
        recorder.append(frame)
    recorder.close()
    data = original.read_bytes()
    rng = random.Random(7)
    for trial in range(150):
        mutated = bytearray(data)
        for _ in range(rng.choice([1, 8, 64])):
            position = rng.randrange(len(mutated))
            mutated[position] = rng.randrange(256)
        if trial % 5 == 0:
            mutated = mutated[: rng.randrange(len(mutated))]
        path = tmp_path / f"m{trial}.gtrec"
        path.write_bytes(bytes(mutated))
        try:
            recording = Recording(path)
            recording.count()
            frames = list(recording.frames())
            assert all(hasattr(f, "seq") for f in frames)
            recording.close()
        except RecordingError:
            pass
        path.unlink()
    shutil.rmtree(tmp_path, ignore_errors=True)
