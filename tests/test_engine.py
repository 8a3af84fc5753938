"""Engine metrics: parsing each engine's text, and a real HTTP server on 127.0.0.1."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gputop.model.derive import derive
from gputop.export.snapshot import snapshot_dict
from gputop.sources.base import SourceError
from gputop.sources.engine import EngineSource, recognise
from gputop.sources.nvml import NvmlSource
from tests.conftest import tick_timeline
from tests.fake_nvml import FakeGpu, FakeNvml, FakeProc, GiB
from tests.http_server import Response, ScriptedServer

DATA = Path(__file__).parent / "data" / "metrics"


def text(name):
    return (DATA / name).read_text()


@pytest.mark.parametrize("name, kind, expected", [
    ("vllm_v1.txt", "vllm", dict(generation_tokens_total=27453.0, prompt_tokens_total=120000.0,
                                 requests_finished_total=152.0, requests_running=24.0,
                                 requests_waiting=2.0, kv_usage_ratio=0.375)),
    ("vllm_v1_dp2.txt", "vllm", dict(generation_tokens_total=4000.0, prompt_tokens_total=1200.0,
                                     requests_running=8.0, requests_waiting=1.0)),
    ("vllm_v0.txt", "vllm", dict(generation_tokens_total=9000.0, kv_usage_ratio=0.125,
                                 requests_running=6.0)),
    ("sglang.txt", "sglang", dict(generation_tokens_total=412000.0, prompt_tokens_total=880000.0,
                                  requests_running=12.0, requests_waiting=3.0,
                                  kv_usage_ratio=0.25)),
    ("tgi.txt", "tgi", dict(generation_tokens_total=51234.0, prompt_tokens_total=99000.0,
                            requests_finished_total=220.0, requests_running=4.0,
                            requests_waiting=2.0, kv_usage_ratio=None)),
    ("llamacpp.txt", "llamacpp", dict(generation_tokens_total=7100.0, prompt_tokens_total=3300.0,
                                      requests_running=1.0, requests_waiting=0.0,
                                      kv_usage_ratio=0.0625, requests_finished_total=None)),
])
def test_each_engine_is_recognised(name, kind, expected):
    parsed = recognise(text(name))
    assert parsed.kind == kind
    for key, value in expected.items():
        assert parsed.values[key] == pytest.approx(value) if value is not None \
            else parsed.values[key] is None, key


def test_vllm_cache_config_and_data_parallel_engines():
    parsed = recognise(text("vllm_v1.txt"))
    assert parsed.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert parsed.cache["num_gpu_blocks"] == "27712" and parsed.cache["block_size"] == "16"
    dp = recognise(text("vllm_v1_dp2.txt"))
    assert dp.engines == 2
    assert dp.values["kv_usage_ratio"] == pytest.approx((9.75010481363281e-06 + 0.2) / 2)
    assert dp.cache["kv_cache_memory_bytes"] == "42949672960"
    assert recognise(text("sglang.txt")).cache["kv_pool_tokens"] == "80000"


TRAINER_PAGE = """# HELP trainer_tokens_total Training tokens processed.
# TYPE trainer_tokens_total counter
trainer_tokens_total 65536.0
# TYPE trainer_samples_total counter
trainer_samples_total 128.0
# TYPE trainer_steps_total counter
trainer_steps_total 16.0
"""


def test_a_training_jobs_counter_reads_as_a_trainer():
    """lab/train_loop.py's page: progress in tokens (else samples), steps as the finished
    count, and no queue or KV cache (unknown, not 0)."""
    parsed = recognise(TRAINER_PAGE)
    assert (parsed.kind, parsed.work_unit) == ("trainer", "tokens")
    assert parsed.values["generation_tokens_total"] == 65536.0
    assert parsed.values["requests_finished_total"] == 16.0
    assert parsed.values["requests_running"] is None and parsed.values["kv_usage_ratio"] is None
    samples_only = "\n".join(line for line in TRAINER_PAGE.splitlines() if "tokens" not in line)
    parsed = recognise(samples_only + "\n")
    assert (parsed.work_unit, parsed.values["generation_tokens_total"]) == ("samples", 128.0)
    assert recognise(text("vllm_v1.txt")).work_unit == ""


def test_a_trainer_served_over_http_gives_its_rate_and_unit():
    pages = [TRAINER_PAGE.replace("65536.0", f"{v:.1f}") for v in (1000, 3000, 6000)]
    with ScriptedServer([Response(p) for p in pages]) as server:
        timeline = run_ticks(EngineSource(server.url), 3)
    state = timeline.state(2)
    assert state.point.engine_kind == "trainer" and state.point.tokens_per_s == 3000.0
    assert timeline.frame(2).engine.work_unit == "tokens"


@pytest.mark.parametrize("bad, reason", [
    ("# TYPE up gauge\nup 1\n", "no vLLM, SGLang, TGI, llama.cpp or trainer_ metrics"),
    ("vllm:num_requests_running{engine=\"0\" 3\n", "is not Prometheus text"),
])
def test_unrecognised_text(bad, reason):
    with pytest.raises(SourceError, match=reason):
        recognise(bad)


def vllm_text(generation, prompt=1000.0, running=8, waiting=0):
    return (text("vllm_v1.txt")
            .replace("27453.0", f"{generation:.1f}").replace("120000.0", f"{prompt:.1f}")
            .replace('"} 24.0', f'"}} {running}.0').replace('"} 2.0', f'"}} {waiting}.0'))


def run_ticks(sources, count, step_s=1.0, virtual_clock=True):
    return tick_timeline(sources, count, step_s, virtual_clock=virtual_clock)


def test_rates_and_a_counter_reset_from_a_real_server():
    responses = [Response(vllm_text(g)) for g in (1000, 1500, 2100, 2800, 300, 900)]
    with ScriptedServer(responses) as server:
        timeline = run_ticks(EngineSource(server.url), 6)
    rates = [timeline.state(i).point.tokens_per_s for i in range(6)]
    assert rates[0] is None  # one sample: no rate, not 0
    assert rates[1:4] == [500.0, 600.0, 700.0]
    assert rates[4] == 300.0  # the engine restarted: counted from zero, never negative
    assert rates[5] == 600.0


def test_failures_show_reasons_back_off_and_recover():
    ok = Response(vllm_text(1000))
    responses = [ok, Response("boom", status=500), Response("<html>login</html>",
                 content_type="text/html"), Response(b"\x00\x01\xff binary"),
                 Response(vllm_text(1000), delay_s=1.2), Response(vllm_text(3000))]
    with ScriptedServer(responses) as server:
        source = EngineSource(server.url, timeout_s=0.3)
        reasons = []
        t = 0.0
        for _ in range(40):
            try:
                source.poll(t)
                reasons.append("ok")
            except SourceError as exc:
                reasons.append(str(exc))
            t += 1.0
            if reasons[-1] == "ok" and len(reasons) > 1:
                break
        requests = server.requests
    assert reasons[0] == "ok"
    assert "HTTP 500" in reasons[1]
    assert any("returned HTML" in r for r in reasons)
    assert any("binary data" in r for r in reasons)
    assert any("no answer" in r for r in reasons)
    assert any("retry in" in r for r in reasons)  # back-off: not asked every tick
    assert reasons[-1] == "ok"
    assert requests == 6  # each failure was asked once, then the server recovered
    assert all(r.startswith("engine unreachable: ") for r in reasons[1:-1])


def test_huge_or_nonhttp_endpoints():
    with ScriptedServer([Response("x" * (9 * 2**20))]) as server:
        with pytest.raises(SourceError, match="more than 8 MiB"):
            EngineSource(server.url).poll(0.0)
    with pytest.raises(ValueError, match="not an http"):
        EngineSource("file:///etc/passwd")


SERVER = """
import http.server, socket, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
text = open(sys.argv[2]).read()
# an internal port (like vLLM's ZMQ/gloo ones) that counts who connects to it
internal = socket.socket(); internal.bind(("127.0.0.1", 0)); internal.listen(8)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = text.encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
s = http.server.HTTPServer(("127.0.0.1", port), H)
print(s.server_address[1], internal.getsockname()[1], flush=True)
internal.settimeout(0.01)
probes = 0
def count_internal():
    global probes
    while True:
        try:
            conn, _ = internal.accept(); probes += 1; conn.close()
            open(sys.argv[2] + ".internal", "w").write(str(probes))
        except OSError:
            time.sleep(0.01)
import threading; threading.Thread(target=count_internal, daemon=True).start()
s.serve_forever()
"""


def start_fake_vllm(tmp_path, argv_tail=(), name="vllm"):
    """A real process tree like vLLM V1: an API server run as ``python .../bin/vllm serve``
    (the parent, listening on an HTTP port and an internal one) whose child would hold
    the GPU memory."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(SERVER)
    metrics = tmp_path / "metrics.txt"
    metrics.write_text(text("vllm_v1.txt"))
    proc = subprocess.Popen([sys.executable, str(script), "serve", str(metrics), *argv_tail],
                            stdout=subprocess.PIPE, text=True)
    port, internal = (int(x) for x in proc.stdout.readline().split())
    return proc, port, internal, metrics


def stop(proc):
    """Kill the server and its children and wait until all are gone, so no listening
    socket of theirs outlives the test (discovery reads every engine on the machine)."""
    import psutil
    children = psutil.Process(proc.pid).children(recursive=True)
    for child in children:
        child.kill()
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    for child in children:  # gone, or a zombie (which holds no socket) not yet reaped
        while time.monotonic() < deadline:
            try:
                if child.status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.01)


@pytest.fixture
def fake_vllm(tmp_path):
    proc, port, _internal, _metrics = start_fake_vllm(tmp_path, ["--tensor-parallel-size", "1"])
    yield proc, port
    stop(proc)


def test_discovers_an_engine_by_its_process_and_port(fake_vllm):
    proc, port = fake_vllm
    source = EngineSource()
    reading = source.poll(10.0)
    engine = reading.engine
    assert engine.url == f"http://127.0.0.1:{port}/metrics"
    assert engine.kind == "vllm"
    assert proc.pid in engine.pids and len(engine.pids) >= 2  # the server and its child


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_discovery_tries_the_named_port_and_never_the_internal_ones(tmp_path):
    port = free_port()
    proc, got_port, internal, metrics = start_fake_vllm(
        tmp_path, ["--host", "127.0.0.1", "--port", str(port)])
    try:
        assert got_port == port
        reading = EngineSource().poll(10.0)
        assert reading.engine.url == f"http://127.0.0.1:{port}/metrics"
        import time
        time.sleep(0.2)
        assert not (tmp_path / "metrics.txt.internal").exists()  # never connected to
    finally:
        stop(proc)


def test_discovery_reads_every_engine_on_the_machine(tmp_path):
    """Two independent vLLM servers on one box (two single-GPU servers): discovery reads
    both, each a replica of the reading with its own process tree (so each is judged on its
    own GPUs), counters summed; one that stops is dropped after its failures and the
    reading is the other one alone. Neither's internal port is ever connected to."""
    import psutil

    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        d.mkdir()
    servers = [start_fake_vllm(d, ["--host", "127.0.0.1", "--port", str(free_port())])
               for d in dirs]
    try:
        source = EngineSource()
        engine = source.poll(10.0).engine
        urls = {f"http://127.0.0.1:{port}/metrics" for _, port, _, _ in servers}
        assert {r.replica for r in engine.replicas} == urls
        trees = [set(r.pids) for r in engine.replicas]
        for (proc, port, _, _), replica in zip(sorted(servers, key=lambda s: s[1]),
                                               sorted(engine.replicas, key=lambda r: r.url)):
            assert proc.pid in replica.pids
        assert not trees[0] & trees[1]
        assert engine.generation_tokens_total == sum(r.generation_tokens_total
                                                     for r in engine.replicas)
        second = max(servers, key=lambda s: psutil.Process(s[0].pid).create_time())
        stop(second[0])
        tick = 10.0
        for _ in range(8):  # its failures, each after its back-off
            tick += 20.0
            engine = source.poll(tick).engine
        assert engine.replicas == () and engine.url != f"http://127.0.0.1:{second[1]}/metrics"
        assert not any((d / "metrics.txt.internal").exists() for d in dirs)
    finally:
        for proc, *_ in servers:
            if proc.poll() is None:
                stop(proc)


def test_discovery_reads_each_process_command_line_once(fake_vllm, monkeypatch):
    """Discovery runs every few seconds over every process of the host: a process already
    seen not to be an engine is not read again (until the cache is forgotten); the engine
    itself still is, and is still found."""
    import psutil

    from gputop.sources import engine_discovery

    proc, port = fake_vllm
    reads: list[int] = []
    real = psutil.Process.cmdline
    monkeypatch.setattr(psutil.Process, "cmdline",
                        lambda self: reads.append(self.pid) or real(self))
    monkeypatch.setattr(engine_discovery, "_seen", engine_discovery._Seen())
    engine_discovery.candidates()
    first = len(reads)
    reads.clear()
    found = engine_discovery.candidates()
    assert first > 10 and reads and len(reads) <= 5, (first, reads)  # the engine-like ones
    assert proc.pid in reads and any(c.pid == proc.pid for c in found)
    monkeypatch.setattr(engine_discovery._Seen, "FORGET_S", 0.0)
    reads.clear()
    engine_discovery.candidates()  # forgotten: everything is read again once
    engine_discovery.candidates()
    assert len(reads) > first // 2


def test_a_command_line_that_only_mentions_vllm_is_no_engine(tmp_path):
    """A virtual environment called vllm-venv running some other program: not probed."""
    venv = tmp_path / "vllm-venv"
    venv.mkdir()
    proc, port, internal, metrics = start_fake_vllm(venv, ["vllm"], name="train.py")
    try:
        with pytest.raises(SourceError, match="no engine found"):
            EngineSource().poll(10.0)
    finally:
        stop(proc)


@pytest.mark.parametrize("argv, kind", [
    (["/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "x"], "vllm"),
    (["python3", "-m", "sglang.launch_server", "--model-path", "x"], "sglang"),
    (["/opt/venv/bin/vllm", "serve", "x"], "vllm"),
    (["python3.11", "/opt/vllm-venv/bin/vllm", "serve"], "vllm"),
    # an interpreter option's value is no script (-X importtime)
    (["python3", "-X", "importtime", "-m", "vllm.entrypoints.openai.api_server"], "vllm"),
    (["llama-server", "-m", "x.gguf", "--metrics"], "llamacpp"),
    (["text-generation-launcher", "--model-id", "x"], "tgi"),
    (["python3", "/home/u/vllm-venv/train.py", "--vllm"], None),
    (["python3", "-m", "vllm_benchmark"], None),
    (["python3", "-c", "import vllm"], None),
    (["bash", "-c", "vllm serve x"], None),
    (["VLLM::EngineCore" + " " * 150], None),
    ([], None),
])
def test_engine_kind_by_executable_or_module(argv, kind):
    from gputop.sources.engine_discovery import engine_kind
    assert engine_kind(argv) == kind


def test_vram_split_from_engine_model_and_nvml(monkeypatch, fake_vllm, tmp_path):
    proc, port = fake_vllm
    import psutil
    child = psutil.Process(proc.pid).children()[0].pid
    model = tmp_path / "llama"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(
        {"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
         "num_key_value_heads": 8, "torch_dtype": "bfloat16"}))
    (model / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 16_060_522_496}, "weight_map": {}}))
    pool = 27712 * 16 * 131072
    engine_bytes = 16_060_522_496 + pool + 3 * GiB
    FakeNvml([FakeGpu("NVIDIA H100 80GB HBM3", 80 * GiB, engine_bytes + 2 * GiB, util_pct=50,
                      procs=[FakeProc(child, engine_bytes)])]).install(monkeypatch)
    engine = EngineSource(f"http://127.0.0.1:{port}/metrics", model=str(model))
    timeline = run_ticks([NvmlSource(), engine], 2, virtual_clock=False)
    data = snapshot_dict(derive(timeline, timeline.last_index), "nvml")
    vram = data["gpus"][0]["vram"]
    assert vram["weights_bytes"] == 16_060_522_496
    assert vram["kv_pool_bytes"] == pool
    assert vram["kv_used_bytes"] == int(pool * 0.375)
    assert vram["other_bytes"] == 3 * GiB
    assert vram["other_processes_bytes"] == 2 * GiB
    assert vram["unsplit_bytes"] == 0 and vram["overflow_bytes"] == 0
    view = derive(timeline, timeline.last_index)
    assert any("27,712 blocks x 16 tokens x 128 KiB/token" in line
               for line in view.gpus[0].vram.provenance)


def test_engine_alone_when_there_is_no_gpu(tmp_path):
    """No NVML here: with --engine, gputop still runs and reports NVML as unavailable."""
    with ScriptedServer([Response(vllm_text(1000 + 100 * i)) for i in range(5)]) as server:
        result = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--engine",
                                 server.url, "--samples", "3", "-d", "1"],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["sources"]["nvml"]["ok"] is False
    assert "libnvidia-ml.so.1" in data["sources"]["nvml"]["reason"]
    assert data["engine"]["kind"] == "vllm"
    assert data["engine"]["generation_tokens_per_s"] > 0


def test_repeated_engines_read_as_one_service():
    first = [Response(vllm_text(1000 + 100 * i, running=3, waiting=1)) for i in range(4)]
    second = [Response(vllm_text(5000 + 300 * i, running=5, waiting=0)) for i in range(4)]
    with ScriptedServer(first) as a, ScriptedServer(second) as b:
        timeline = run_ticks([EngineSource(a.url), EngineSource(b.url, name="engine2")], 3)
    point = timeline.state(2).point
    assert point.tokens_per_s == 400.0  # 100/s + 300/s
    engine = timeline.frame(2).engine
    assert (engine.requests_running, engine.requests_waiting) == (8.0, 1.0)
    assert engine.data_parallel == 2 and " + " in engine.url
    assert set(timeline.frame(2).sources) == {"engine", "engine2"}


def test_one_of_two_engines_down_is_reported_and_the_other_still_counts():
    with ScriptedServer([Response(vllm_text(1000))]) as a:
        source_b = EngineSource("http://127.0.0.1:9/metrics", name="engine2")
        timeline = run_ticks([EngineSource(a.url), source_b], 2)
    frame = timeline.frame(1)
    assert frame.sources["engine"].ok and not frame.sources["engine2"].ok
    assert frame.engine is not None and frame.engine.kind == "vllm"


def test_a_forked_child_holding_the_listening_socket_is_not_the_engine():
    """A DataLoader worker (or a pre-fork server's worker) inherits the listening socket,
    and psutil names whichever holder it met last; the lab's training loop showed gputop
    tying the trainer to one of its workers.  The listener is the topmost holder."""
    import psutil

    from gputop.sources.engine import listener_root

    code = ("import os, socket, sys, time\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
            "print(s.getsockname()[1], flush=True)\n"
            "if os.fork() == 0:\n    time.sleep(30); os._exit(0)\n"
            "time.sleep(30)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        port = int(parent.stdout.readline())
        for _ in range(100):
            children = psutil.Process(parent.pid).children()
            if children:
                break
            time.sleep(0.05)
        (child,) = children
        assert listener_root(child, port).pid == parent.pid
        assert listener_root(psutil.Process(parent.pid), port).pid == parent.pid
    finally:
        for proc in psutil.Process(parent.pid).children():
            proc.kill()
        parent.kill()
        parent.wait()


def test_a_training_jobs_own_counter_given_by_name_reads_as_a_trainer():
    """--work-counter samples_total: a job that exports its progress under any name (not
    trainer_*) is read as a trainer, its unit from the name, other families ignored."""
    from gputop.sources.base import SourceError
    from gputop.sources.engine_metrics import recognise

    page = ("# TYPE samples_total counter\nsamples_total 1536.0\n"
            "# TYPE train_loss gauge\ntrain_loss 2.5\n"
            "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.0\n")
    parsed = recognise(page, "http://127.0.0.1:9100/metrics", "samples_total")
    assert parsed.kind == "trainer" and parsed.work_unit == "samples"
    assert parsed.values["generation_tokens_total"] == 1536.0
    tokens = recognise("train_tokens_total 9e6\n", "u", "train_tokens_total")
    assert tokens.work_unit == "tokens" and tokens.values["generation_tokens_total"] == 9e6
    with pytest.raises(SourceError, match="no counter 'steps_total'"):
        recognise(page, "u", "steps_total")


def test_work_counter_option_refuses_what_is_not_a_metric_name():
    done = subprocess.run([sys.executable, "-m", "gputop", "--work-counter", "x y;rm",
                           "snapshot"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "expected a metric name" in done.stderr
    assert "Traceback" not in done.stderr


TGI_FORWARD = """# TYPE tgi_batch_forward_duration histogram
tgi_batch_forward_duration_bucket{method="prefill",le="0.1"} 40
tgi_batch_forward_duration_bucket{method="prefill",le="+Inf"} 52
tgi_batch_forward_duration_sum{method="prefill"} 7.25
tgi_batch_forward_duration_count{method="prefill"} 52
tgi_batch_forward_duration_bucket{method="decode",le="0.1"} 9000
tgi_batch_forward_duration_bucket{method="decode",le="+Inf"} 9000
tgi_batch_forward_duration_sum{method="decode"} 180.5
tgi_batch_forward_duration_count{method="decode"} 9000
"""


def test_tgis_forward_seconds_split_by_method_are_its_prefill_and_decode_time():
    """TGI times each forward pass by method: the prefill batches' seconds beside the decode
    batches' are the engine's own account of its time spent on prompts (as llama.cpp's
    prompt seconds are)."""
    parsed = recognise(text("tgi.txt") + TGI_FORWARD)
    assert parsed.kind == "tgi"
    assert parsed.values["prefill_seconds_total"] == pytest.approx(7.25)
    assert parsed.values["decode_seconds_total"] == pytest.approx(180.5)
    assert recognise(text("tgi.txt")).values["prefill_seconds_total"] is None
