"""Several engines behind one endpoint, each on its own GPUs: real processes, a real HTTP
endpoint, NVML's process lists (the fake pynvml: no GPU here) naming which process is on
which GPU.  Pane 3, the VRAM split, snapshot --json, the exporter and the CSV export each
show the replicas apart."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gputop.export.prometheus import Exporter
from gputop.model.derive import derive, kv_pool_bytes
from gputop.export.snapshot import snapshot_dict
from gputop.export.csv_rows import CSV_COLUMNS, csv_rows
from gputop.sources.engine import EngineSource
from gputop.sources.nvml import NvmlSource
from tests.conftest import need, tick_timeline
from tests.engine_pages import sglang_page, vllm_pages
from tests.fake_nvml import FakeGpu, FakeNvml, FakeProc, GiB

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def engine_process(tmp_path, page: str, titles=(), models=()):
    """A process serving ``page`` on 127.0.0.1 with children titled as engine cores."""
    path = tmp_path / f"page-{len(list(tmp_path.glob('page-*')))}.txt"
    path.write_text(page)
    args = [sys.executable, "-m", "tests.engine_pages.serve_page", "--page", str(path),
            "--seconds", "120"]
    for title in titles:
        args += ["--child", title]
    for model in models:
        args += ["--model-child", model]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, cwd=ROOT, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        info = json.loads(proc.stdout.readline())
        yield info
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def two_gpus(monkeypatch, first: list[FakeProc], second: list[FakeProc]) -> FakeNvml:
    fake = FakeNvml([FakeGpu("NVIDIA H100 80GB HBM3", 80 * GiB, 70 * GiB, util_pct=90,
                             procs=first),
                     FakeGpu("NVIDIA H100 80GB HBM3", 80 * GiB, 60 * GiB, util_pct=90,
                             procs=second)])
    return fake.install(monkeypatch)


def test_vllm_data_parallel_engines_on_their_own_gpus(monkeypatch, tmp_path):
    page = vllm_pages.data_parallel(engines=2)
    with engine_process(tmp_path, page, titles=("VLLM::EngineCore_DP0",
                                                 "VLLM::EngineCore_DP1")) as info:
        dp0, dp1 = info["children"]["VLLM::EngineCore_DP0"], info["children"]["VLLM::EngineCore_DP1"]
        worker0 = info["workers"]["VLLM::EngineCore_DP0"]
        # engine 0's memory is its worker's (a child of the engine core), engine 1's its own
        two_gpus(monkeypatch, [FakeProc(worker0, 60 * GiB)], [FakeProc(dp1, 50 * GiB)])
        url = f"http://127.0.0.1:{info['port']}/metrics"
        timeline = tick_timeline([NvmlSource(), EngineSource(url)], 3, virtual_clock=True)
    view = derive(timeline, timeline.last_index)
    engine = view.engine
    assert info["pid"] in engine.sample.pids and {dp0, dp1, worker0} <= set(engine.sample.pids)
    replicas = {r.sample.replica: r for r in engine.replicas}
    assert set(replicas) == {"model_name=tiny-llama,engine=0", "model_name=tiny-llama,engine=1"}
    r0, r1 = replicas["model_name=tiny-llama,engine=0"], replicas["model_name=tiny-llama,engine=1"]
    assert r0.gpus == (0,) and r1.gpus == (1,)
    assert dp0 in r0.sample.pids and worker0 in r0.sample.pids and dp1 not in r0.sample.pids
    assert set(r1.sample.pids) == {dp1, info["workers"]["VLLM::EngineCore_DP1"]}
    # the diagnosis judges each engine apart, on its own GPU, from these live frames
    state = timeline.state(timeline.last_index)
    assert {s.subject.key: s.subject.gpus for s in state.subjects if s.subject.has_engine} == {
        "engine:model_name=tiny-llama,engine=0": (0,), "engine:model_name=tiny-llama,engine=1": (1,)}
    # each replica's own gauges, as the page has them for its engine label
    reference = {}
    for family in text_string_to_metric_families(page):
        for s in family.samples:
            if s.name == "vllm:kv_cache_usage_perc":
                reference[s.labels["engine"]] = s.value
    assert r0.sample.kv_usage_ratio == pytest.approx(reference["0"])
    assert r1.sample.kv_usage_ratio == pytest.approx(reference["1"])

    # the VRAM split of each GPU uses its own engine's KV usage, inside its own pool
    g0, g1 = view.gpus
    pool = kv_pool_bytes(r0.sample)
    assert pool == kv_pool_bytes(r1.sample) == 1073741824  # cache_config_info, per engine
    assert g0.vram.kv_pool_bytes == g1.vram.kv_pool_bytes == pool
    assert g0.vram.kv_used_bytes == pytest.approx(pool * reference["0"], abs=1)
    assert g1.vram.kv_used_bytes == pytest.approx(pool * reference["1"], abs=1)
    assert g0.vram.kv_used_bytes != g1.vram.kv_used_bytes

    # snapshot --json: one entry per replica, with its GPUs and the catalogue's signals
    data = snapshot_dict(view, "nvml")
    snap = {r["replica"]: r for r in data["engine"]["replicas"]}
    assert snap["model_name=tiny-llama,engine=0"]["gpus"] == [0]
    assert snap["model_name=tiny-llama,engine=1"]["gpus"] == [1]
    assert snap["model_name=tiny-llama,engine=1"]["kv_usage_ratio"] == \
        round(reference["1"], 4)
    assert "baseline_tokens_per_s" not in snap["model_name=tiny-llama,engine=0"]
    json.dumps(data)  # serialisable

    # the exporter: replica families beside the page's own, labelled with the GPUs
    exporter = Exporter(hostname="test")
    exporter.on_view(view)
    from prometheus_client import CollectorRegistry, generate_latest
    registry = CollectorRegistry()
    registry.register(exporter)
    text = generate_latest(registry).decode()
    found = {(s.labels["replica"], s.labels["gpus"]): s.value
             for f in text_string_to_metric_families(text) for s in f.samples
             if s.name == "gputop_engine_replica_kv_usage_ratio"}
    assert found == {("model_name=tiny-llama,engine=0", "0"): pytest.approx(reference["0"]),
                     ("model_name=tiny-llama,engine=1", "1"): pytest.approx(reference["1"])}
    assert 'gputop_engine_kv_usage_ratio ' in text  # the whole endpoint's, unlabelled
    checked = subprocess.run([need("promtool"), "check", "metrics"], input=text,
                             capture_output=True, text=True, timeout=30)
    assert "error" not in (checked.stdout + checked.stderr).lower(), checked.stderr

    # CSV: each GPU's row names its replica and carries that replica's numbers
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS)
    writer.writeheader()
    writer.writerows(csv_rows(view))
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["replica"] for r in rows] == ["model_name=tiny-llama,engine=0",
                                             "model_name=tiny-llama,engine=1"]
    assert float(rows[1]["replica_kv_usage_ratio"]) == pytest.approx(reference["1"])

    # pane 3 lists each replica on its GPUs
    from gputop.tui.panes.throughput import ThroughputPane
    lines = ["".join(cell[0] for cell in row) for row in ThroughputPane.replica_rows(engine, 100)]
    assert any("engine=0 GPU 0:" in line for line in lines)
    assert any("engine=1 GPU 1:" in line for line in lines)


def test_replica_rates_come_from_each_replicas_own_counters(monkeypatch, tmp_path):
    """Three readings of a page whose engines grow at different rates."""
    from tests.http_server import Response, ScriptedServer

    texts = [vllm_pages.data_parallel(engines=2, factor_of=lambda k, n=n: (k + 1) * (1 + n * 0.01))
             for n in range(3)]
    two_gpus(monkeypatch, [], [])
    with ScriptedServer([Response(t) for t in texts]) as server:
        timeline = tick_timeline([NvmlSource(), EngineSource(server.url)], 3, virtual_clock=True)
    view = derive(timeline, timeline.last_index)
    r0, r1 = view.engine.replicas
    base = 420686.0  # engine 0's counter in the real page
    assert r0.tokens_per_s == pytest.approx(base * 0.01)
    assert r1.tokens_per_s == pytest.approx(2 * base * 0.01)
    assert view.engine.tokens_per_s == pytest.approx(3 * base * 0.01)
    # nothing ties these replicas (the test process serves the page): GPUs unknown
    assert r0.gpus == () and "ties" in view.engine.sample.note


def test_sglang_router_workers_tied_by_their_ports(monkeypatch, tmp_path):
    """The router's page names its workers by address; each worker is the process that
    listens there, outside the router's own tree."""
    worker_page = sglang_page.page_text(underscore=True)
    with engine_process(tmp_path, worker_page) as w1, engine_process(tmp_path, worker_page) as w2:
        page = sglang_page.page_text(workers=2).replace(
            "127.0.0.1:30001", f"127.0.0.1:{w1['port']}").replace(
            "127.0.0.1:30002", f"127.0.0.1:{w2['port']}")
        with engine_process(tmp_path, page) as router:
            two_gpus(monkeypatch, [FakeProc(w1["pid"], 30 * GiB)],
                     [FakeProc(w2["pid"], 30 * GiB)])
            url = f"http://127.0.0.1:{router['port']}/metrics"
            timeline = tick_timeline([NvmlSource(), EngineSource(url)], 2, virtual_clock=True)
    view = derive(timeline, timeline.last_index)
    assert view.engine.sample.kind == "sglang"
    gpus = {r.sample.replica.split("worker_addr=")[1]: r.gpus for r in view.engine.replicas}
    assert gpus == {f"http://127.0.0.1:{w1['port']}": (0,),
                    f"http://127.0.0.1:{w2['port']}": (1,)}
    # the engine as a whole is on both GPUs: the workers are its processes too
    assert {w1["pid"], w2["pid"]} <= set(view.engine.sample.pids)


def test_models_on_one_server_tied_by_their_command_lines(monkeypatch, tmp_path):
    lines = ["# TYPE vllm:num_requests_running gauge"]
    lines += [f'vllm:num_requests_running{{engine="0",model_name="{m}"}} {n}.0'
              for m, n in (("chat-7b", 3), ("code-1b", 5))]
    lines += ["# TYPE vllm:generation_tokens_total counter"]
    lines += [f'vllm:generation_tokens_total{{engine="0",model_name="{m}"}} {n}.0'
              for m, n in (("chat-7b", 300), ("code-1b", 500))]
    with engine_process(tmp_path, "\n".join(lines) + "\n", models=("chat-7b", "code-1b")) as info:
        two_gpus(monkeypatch, [FakeProc(info["children"]["code-1b"], 10 * GiB)],
                 [FakeProc(info["children"]["chat-7b"], 20 * GiB)])
        url = f"http://127.0.0.1:{info['port']}/metrics"
        timeline = tick_timeline([NvmlSource(), EngineSource(url)], 2, virtual_clock=True)
    view = derive(timeline, timeline.last_index)
    replicas = {r.sample.model: r for r in view.engine.replicas}
    assert replicas["code-1b"].gpus == (0,) and replicas["chat-7b"].gpus == (1,)
    assert replicas["code-1b"].sample.requests_running == 5.0
    assert view.engine.sample.requests_running == 8.0


def test_frames_with_replicas_record_and_replay_as_they_were():
    from gputop.schema import EngineSample, Frame, SchemaError, frame_from_dict, frame_to_dict

    replica = EngineSample("vllm", url="u", replica="model_name=m,engine=1", pids=(7,),
                           lora_running=("a",), kv_used_tokens=12.0)
    frame = Frame(1, 1.7e9, 1.0, engine=EngineSample("vllm", url="u", replicas=(replica,)))
    assert frame_from_dict(json.loads(json.dumps(frame_to_dict(frame)))) == frame
    nested = frame_to_dict(frame)
    nested["engine"]["replicas"][0]["replicas"] = [frame_to_dict(frame)["engine"]]
    with pytest.raises(SchemaError, match="replicas of its own"):
        frame_from_dict(nested)
    deep = frame_to_dict(frame)["engine"]
    for _ in range(2000):  # a hostile file nesting replicas without end
        deep = {"kind": "vllm", "replicas": [deep]}
    with pytest.raises(SchemaError, match="too deeply"):
        frame_from_dict({**frame_to_dict(frame), "engine": deep})
