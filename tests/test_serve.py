"""`gputop serve` as a real process on a loopback port: the /metrics contract (FACTS.md
section 8), OpenMetrics, /snapshot.json, /frames for --remote, /healthz, TLS and basic auth
from a Prometheus web-config file, clean exits on SIGTERM/SIGHUP, scrapes that cannot slow
sampling; and the signal catalogue as the one source of every field."""

from __future__ import annotations

import base64
import json
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import bcrypt
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gputop.export.prometheus import Exporter
from gputop.model import signals
from gputop.export.snapshot import snapshot_dict
from gputop.export.csv_rows import CSV_COLUMNS
from gputop.record.store import Recording
from gputop.schema import Frame, GpuSample, frame_from_dict
from gputop.session import Session
from tests.conftest import concurrently, need

ROOT = Path(__file__).resolve().parent.parent

# FACTS.md section 8, the families every scrape of a demo engine host carries
CONTRACT = [
    "gputop_info", "gputop_source_up", "gputop_source_reading_age_seconds", "gputop_gpu_info",
    "gputop_gpu_lost", "gputop_gpu_utilization_ratio",
    "gputop_gpu_memory_controller_utilization_ratio", "gputop_gpu_sm_active_ratio",
    "gputop_gpu_sm_occupancy_ratio", "gputop_gpu_dram_active_ratio",
    "gputop_gpu_tensor_active_ratio", "gputop_gpu_power_watts", "gputop_gpu_temperature_celsius",
    "gputop_gpu_sm_clock_hertz", "gputop_gpu_memory_total_bytes", "gputop_gpu_memory_bytes",
    "gputop_engine_info", "gputop_engine_up", "gputop_engine_generation_tokens_per_second",
    "gputop_engine_prompt_tokens_per_second",
    "gputop_engine_generation_tokens_per_second_baseline", "gputop_engine_requests_running",
    "gputop_engine_requests_waiting", "gputop_engine_kv_usage_ratio",
    "gputop_engine_inter_token_latency_seconds", "gputop_engine_time_to_first_token_seconds",
    "gputop_launch_duration_seconds", "gputop_episode_active", "gputop_episodes",
    "gputop_host_cpu_ratio", "gputop_host_cpu_pressure_ratio",
]
MEMORY_PARTS = {"weights", "kv_used", "kv_free", "engine_other", "other_processes", "free",
                "unsplit", "overflow"}


class Served:
    def __init__(self, proc: subprocess.Popen, url: str):
        self.proc, self.url = proc, url

    def get(self, path: str, headers: dict | None = None, context=None, timeout=10):
        request = urllib.request.Request(self.url + path, headers=headers or {})
        with urllib.request.urlopen(request, timeout=timeout, context=context) as answer:
            return answer.status, dict(answer.headers), answer.read()


def start_serve(*args: str, scheme: str = "http", ready_path: str | None = "/healthz",
                context=None, headers=None) -> Served:
    proc = subprocess.Popen(
        [sys.executable, "-m", "gputop", "serve", "--listen", "127.0.0.1:0", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    match = re.search(r"https?://[^/]+:(\d+)/metrics", line)
    if not match:
        proc.kill()
        raise AssertionError(f"serve did not start: {line}{proc.stderr.read()}")
    served = Served(proc, f"{scheme}://127.0.0.1:{match.group(1)}")
    deadline = time.monotonic() + 20
    while ready_path and time.monotonic() < deadline:
        try:
            if served.get(ready_path, headers=headers, context=context)[0] == 200:
                break
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    return served


@pytest.fixture
def serve():
    started: list[Served] = []

    def _start(*args, **kwargs):
        s = start_serve(*args, **kwargs)
        started.append(s)
        return s

    yield _start
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
        s.proc.wait(timeout=10)


def families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def samples(text: str) -> list:
    return [s for f in text_string_to_metric_families(text) for s in f.samples]


def test_metrics_carry_the_contract_and_no_private_labels(serve):
    s = serve("--demo", "logprobs-storm", "-d", "0.2")
    time.sleep(2)
    status, headers, body = s.get("/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    found = families(text)
    missing = [name for name in CONTRACT if name not in found]
    assert not missing, missing
    for entry in signals.SIGNALS:  # every exported catalogue entry that has a value
        if entry.prom and entry.scope in ("gpu", "host") and entry.prom in text:
            assert found[entry.prom_family].type == ("counter" if entry.kind == "counter" else "gauge")
    throttled = {x.labels["reason"]: x.value for x in found["gputop_gpu_throttled"].samples}
    assert set(throttled) >= {"power cap", "thermal (hw)"} and set(throttled.values()) <= {0, 1}
    parts = {x.labels["part"] for x in found["gputop_gpu_memory_bytes"].samples}
    assert parts <= MEMORY_PARTS and "free" in parts
    labels = {k for x in samples(text) for k in x.labels}
    assert not labels & {"pid", "cmdline", "command", "user"}  # other users' business
    assert all(x.value == x.value for x in samples(text))  # no NaN: unknown is absent
    done = subprocess.run([need("promtool"), "check", "metrics"], input=body,
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr


def test_export_processes_adds_memory_by_pid_but_never_command_lines(serve):
    s = serve("--demo", "serving", "-d", "0.2", "--export-processes")
    time.sleep(1)
    text = s.get("/metrics")[2].decode()
    procs = [x for x in samples(text) if x.name.startswith("gputop_process_")]
    assert procs and all({"pid", "user", "process"} <= set(x.labels) for x in procs)
    assert "cmdline" not in text and "--port" not in text
    owners = {(x.labels["pid"], x.labels["container"], x.labels["pod"]) for x in procs}
    assert ("4121", "cri-containerd:9c1e5b7a2f30", "serving/vllm-llama-7d9f") in owners
    assert ("3377", "systemd:jupyter.service", "") in owners


def test_openmetrics_when_the_scraper_asks_for_it(serve):
    s = serve("--demo", "serving", "-d", "0.2")
    status, headers, body = s.get(
        "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert headers["Content-Type"].startswith("application/openmetrics-text")
    assert body.rstrip().endswith(b"# EOF")


def test_unknown_values_are_absent_not_zero():
    frame = Frame(seq=1, time_wall_s=time.time(), time_mono_s=1.0,
                  gpus=(GpuSample(index=0, name="X", util_gpu_pct=97.0,
                                  mem_total_bytes=2**30, mem_used_bytes=2**29,
                                  missing={"throttle": "not supported"}),))
    session = Session("test", frames=[frame])
    exporter = Exporter(hostname="h")
    exporter.on_view(session.view())
    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    text = generate_latest(registry).decode()
    assert 'gputop_gpu_utilization_ratio{gpu="0"} 0.97' in text
    for absent in ("gputop_gpu_sm_active_ratio{", "gputop_gpu_power_watts{",
                   "gputop_engine_generation_tokens_per_second ", "gputop_gpu_throttled{"):
        assert absent not in text


def test_snapshot_frames_and_healthz(serve):
    s = serve("--demo", "launch-jitter", "-d", "0.2")
    time.sleep(1)
    snap = json.loads(s.get("/snapshot.json")[2])
    assert snap["schema"] == 1 and snap["gpus"] and snap["source"] == "demo:launch-jitter"
    status, headers, body = s.get("/frames?since=-1")
    frames = [frame_from_dict(json.loads(line)) for line in body.decode().splitlines()]
    assert len(frames) >= 3 and headers["X-Gputop-Source"] == "demo:launch-jitter"
    assert [f.seq for f in frames] == sorted(f.seq for f in frames)
    last = frames[-1].seq
    newer = s.get(f"/frames?since={last}")[2].decode().splitlines()
    assert all(json.loads(line)["seq"] > last for line in newer)
    with pytest.raises(urllib.error.HTTPError) as bad:
        s.get("/frames?since=abc")
    assert bad.value.code == 400
    assert s.get("/healthz")[2] == b"ok\n"
    with pytest.raises(urllib.error.HTTPError) as missing:
        s.get("/nothing")
    assert missing.value.code == 404


def test_remote_shows_the_served_host(serve):
    """Another gputop reads the host through /frames: same frames, same diagnosis."""
    s = serve("--demo", "logprobs-storm", "-d", "0.2")
    done = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json", "--remote",
                           s.url], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    remote = json.loads(done.stdout)
    assert remote["gpus"][0]["name"] and remote["engine"] is not None
    bad = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json", "--remote",
                          "http://127.0.0.1:9"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


@pytest.fixture
def tls_files(tmp_path):
    need("openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_tls_and_basic_auth_from_a_web_config(serve, tmp_path, tls_files):
    cert, key = tls_files
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    config = tmp_path / "web.yml"
    config.write_text(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
                      f"basic_auth_users:\n  prom: '{hashed}'\n")
    context = ssl.create_default_context(cafile=str(cert))
    context.check_hostname = False
    good = {"Authorization": "Basic " + base64.b64encode(b"prom:s3cret").decode()}
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config), scheme="https",
              context=context, headers=good)
    assert s.get("/metrics", headers=good, context=context)[0] == 200
    for headers in ({}, {"Authorization": "Basic " + base64.b64encode(b"prom:wrong").decode()},
                    {"Authorization": "Basic " + base64.b64encode(b"root:s3cret").decode()},
                    {"Authorization": "Bearer x"}):
        with pytest.raises(urllib.error.HTTPError) as denied:
            s.get("/metrics", headers=headers, context=context)
        assert denied.value.code == 401 and denied.value.read() == b"unauthorized\n"
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):  # no plain HTTP
        urllib.request.urlopen(s.url.replace("https", "http") + "/metrics", timeout=5).read()


@pytest.mark.parametrize("content, message", [
    ("basic_auth_users:\n  prom: plain\n", "is not a bcrypt hash"),
    ("tls_server_config:\n  cert_file: /nonexistent\n", "needs both cert_file and key_file"),
    ("colour: red\n", "unknown key 'colour'"),
    ("a: [\n", "is not YAML"),
])
def test_a_bad_web_config_is_one_line_and_exit_2(tmp_path, content, message):
    config = tmp_path / "web.yml"
    config.write_text(content)
    done = subprocess.run([sys.executable, "-m", "gputop", "serve", "--demo", "--listen",
                           "127.0.0.1:0", "--web-config", str(config)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("missing, content, needed", [
    ("yaml", "tls_server_config: {}\n", "PyYAML"),
    ("bcrypt", "basic_auth_users:\n  prom: $2b$04$abcdefghijklmnopqrstuu5WbcPn7CXW1A7tfr1kqkZSaYMZ5e4ru\n",
     "bcrypt"),
])
def test_a_missing_serve_extra_is_one_line_naming_the_extra(tmp_path, missing, content, needed):
    """PyYAML and bcrypt are the serve extra (pip install 'gputop-tui[serve]'): gputop serve
    --web-config without them says so in one line, at start, instead of a traceback (here the
    module is made unimportable in the real command's process, as when it is not installed)."""
    config = tmp_path / "web.yml"
    config.write_text(content)
    code = (f"import sys; sys.modules[{missing!r}] = None\n"
            "from gputop.cli import main\n"
            "sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", code, "serve", "--demo", "--listen",
                           "127.0.0.1:0", "--web-config", str(config)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert needed in done.stderr and "pip install 'gputop-tui[serve]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_taken_port_is_one_line(serve):
    s = serve("--demo", "serving")
    port = s.url.rsplit(":", 1)[1]
    done = subprocess.run([sys.executable, "-m", "gputop", "serve", "--demo", "--listen",
                           f"127.0.0.1:{port}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "cannot listen on" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_exit_cleanly_and_keep_the_recording(serve, tmp_path, signum):
    out = tmp_path / "served.gputop"
    s = serve("--demo", "serving", "-d", "0.2", "--record", str(out))
    time.sleep(1.5)
    s.proc.send_signal(signum)
    assert s.proc.wait(timeout=15) == 0
    assert "Traceback" not in s.proc.stderr.read()
    recording = Recording(out)
    assert recording.count() >= 3
    recording.close()


def test_a_scrape_storm_does_not_slow_sampling(serve):
    """Scrapes read the last derived view and never call a source: 4 clients scraping
    without pause must leave the tick rate where it was."""
    s = serve("--demo", "logprobs-storm", "-d", "0.2")
    time.sleep(1)

    def seq():
        return json.loads(s.get("/snapshot.json")[2])["time"]

    first = len(s.get("/frames?since=-1")[2].splitlines())
    latencies: list[float] = []

    def scraper(_n, stop):
        while not stop.is_set():
            t0 = time.perf_counter()
            s.get("/metrics")
            latencies.append(time.perf_counter() - t0)

    concurrently(scraper, 4, 4)
    ticks = len(s.get("/frames?since=-1")[2].splitlines()) - first
    assert len(latencies) > 40
    assert ticks >= 4 / 0.2 * 0.6, ticks  # within 40% of 20 ticks on a 2-core machine


def test_one_catalogue_feeds_snapshot_csv_help_and_exporter():
    from gputop.demo import demo_frames
    from gputop.tui.widgets import help_text

    session = Session("demo", frames=list(demo_frames("logprobs-storm", 30)))
    snap = snapshot_dict(session.view(), "demo")
    help_page = help_text([], [])
    exporter = Exporter(hostname="h")
    exporter.on_view(session.view())
    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    exported = families(generate_latest(registry).decode())
    for entry in signals.SIGNALS:
        assert entry.name in help_page
        if entry.scope == "gpu":
            assert entry.name in snap["gpus"][0] and entry.name in CSV_COLUMNS
        elif entry.scope == "engine":
            assert entry.name in snap["engine"] and entry.name in CSV_COLUMNS
        if entry.prom and entry.read(session.view().gpus[0] if entry.scope == "gpu"
                                       else session.view().engine if entry.scope == "engine"
                                       else session.view()) is not None:
            assert entry.prom_family in exported, entry.prom
