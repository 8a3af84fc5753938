import json

import pytest

from gputop.schema import (SCHEMA_VERSION, EngineSample, Frame, GpuSample, LaunchHist,
                           SchemaError, SourceStatus, frame_from_dict, frame_to_dict)
from gputop.sources.sim import SCENARIOS
from tests.conftest import sim_frames


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_round_trip_through_json_is_identical(scenario):
    for frame in sim_frames(scenario, 6):
        data = json.loads(json.dumps(frame_to_dict(frame)))
        assert data["schema"] == SCHEMA_VERSION
        assert frame_from_dict(data) == frame


def test_histogram_bucket_keys_survive_json_as_ints():
    frame = Frame(seq=1, time_wall_s=1.0, time_mono_s=1.0,
                  launch=(LaunchHist(api="cudaLaunchKernel", pid=7, count=3, sum_ns=30,
                                     max_ns=12, buckets={40: 2, 41: 1}),))
    back = frame_from_dict(json.loads(json.dumps(frame_to_dict(frame))))
    assert back.launch[0].buckets == {40: 2, 41: 1}


def test_unknown_fields_from_a_newer_writer_are_ignored():
    data = frame_to_dict(sim_frames("serving", 2)[1])
    data["future_field"] = {"x": 1}
    data["gpus"][0]["nvlink_gbps"] = 12.5
    data["engine"]["spec_decode_acceptance"] = 0.7
    frame = frame_from_dict(data)
    assert frame.gpus[0].util_gpu_pct == data["gpus"][0]["util_gpu_pct"]
    assert frame.engine.kind == "vllm"


def test_fields_missing_in_an_older_frame_take_defaults_not_zero():
    old = {"schema": 1, "seq": 3, "time_wall_s": 10.0, "time_mono_s": 2.0,
           "gpus": [{"index": 0, "util_gpu_pct": 50}],
           "engine": {"kind": "vllm"}, "sources": {"sim": {"ok": True}}}
    frame = frame_from_dict(old)
    assert frame.gpus[0] == GpuSample(index=0, util_gpu_pct=50.0)
    assert frame.gpus[0].sm_active_pct is None  # unknown stays unknown
    assert frame.engine == EngineSample(kind="vllm")
    assert frame.sources == {"sim": SourceStatus(ok=True)}
    assert frame.host is None


@pytest.mark.parametrize("bad", [
    [],
    {"seq": 1},  # required times missing
    {"seq": "one", "time_wall_s": 1, "time_mono_s": 1},
    {"seq": 1, "time_wall_s": 1, "time_mono_s": 1, "gpus": {"index": 0}},
    {"seq": 1, "time_wall_s": 1, "time_mono_s": 1, "gpus": [{"index": 0, "name": 5}]},
    {"seq": 1, "time_wall_s": 1, "time_mono_s": 1,
     "launch": [{"api": "x", "buckets": {"notanint": 1}}]},
])
def test_malformed_frames_raise_schema_error(bad):
    with pytest.raises(SchemaError):
        frame_from_dict(bad)
