"""Hostile input, round two (issue 23): broken or malicious peers on loopback.

The fleet's and --remote's hosts, a Prometheus, an engine: each answer is read as input
from someone else.  One malformed host must not hide the fleet, no answer may grow
memory without bound, a restarted serve must not freeze --remote, credentials are sent
and never shown, no poll waits on DNS, and discovery neither waits on silent ports nor
connects where a user chose.  A hypothesis run over the parsers finds no traceback.
"""

from __future__ import annotations

import base64
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import bcrypt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gputop import fleet
from gputop.remote import RemoteFeed
from gputop.sources.base import SourceError
from tests.test_hostile import VLLM, strict_json
from tests.test_serve import ROOT, serve  # noqa: F401 (fixture)


class Peer:
    """A loopback HTTP server answering ``answer(path, headers) -> (status, body)``."""

    def __init__(self, answer, content_type: str = "application/json"):
        self.paths: list[str] = []
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # http.server's naming
                peer.paths.append(self.path)
                status, body = answer(self.path, self.headers)
                data = body.encode() if isinstance(body, str) else body
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def peers():
    made: list[Peer] = []

    def make(answer, **kwargs) -> Peer:
        made.append(Peer(answer, **kwargs))
        return made[-1]

    yield make
    for peer in made:
        peer.close()


def snapshot_peer(peers, data) -> Peer:
    text = data if isinstance(data, (str, bytes)) else json.dumps(data)
    return peers(lambda path, headers: (200, text) if path == "/snapshot.json" else (404, ""))


GOOD = {"gpus": [{"index": 0, "name": "H100", "util_gpu_pct": 97.0, "sm_active_pct": 11.0}]}


# ---------------------------------------------------------------- 5. one malformed host

@pytest.mark.parametrize("bad", [
    {"gpus": [{"index": 0, "vram": [1]}]},
    {"engine": [1], "gpus": [{"index": 0}]},
    {"gpus": 5},
    {"alerts": [{"gpus": 3, "active": True}], "gpus": [{"index": 0}]},
    {"alerts": [{"active": True, "gpus": [0], "suspects": "x"}], "gpus": [{"index": 0}]},
    {"gpus": [{"index": True, "name": ["x"], "mem_used_bytes": 10**400}]},
], ids=["vram-list", "engine-list", "gpus-number", "alert-gpus-number", "suspects-text",
        "wrong-types"])
def test_one_malformed_host_never_hides_the_fleet(peers, bad):
    good, broken, other = (snapshot_peer(peers, GOOD), snapshot_peer(peers, bad),
                           snapshot_peer(peers, GOOD))
    rows = fleet.ask_serves([good.url, broken.url, other.url], timeout_s=5)
    by_host = {r.host for r in rows if r.error is None and r.util_pct == 97.0}
    assert {good.url.split("//")[1], other.url.split("//")[1]} <= by_host
    assert any(r.host == broken.url.split("//")[1] for r in rows)


def prometheus_peer(peers, answers: dict, prefix: str = "") -> Peer:
    """A Prometheus HTTP API: each of gputop's queries answered from ``answers`` by name."""
    import urllib.parse

    encoded: dict = {}  # answers encoded once, before anything is measured
    by_query = {}
    for name, query in fleet.QUERIES.items():
        found = answers.get(name, {"status": "success", "data": {"resultType": "vector",
                                                                   "result": []}})
        key = id(found)
        if key not in encoded:
            encoded[key] = (found if isinstance(found, str) else json.dumps(found)).encode()
        by_query[query] = encoded[key]

    def answer(path, headers):
        url = urllib.parse.urlsplit(path)
        if url.path != prefix + "/api/v1/query":
            return 404, "not found"
        query = urllib.parse.parse_qs(url.query).get("query", [""])[0]
        found = by_query.get(query)
        return (200, found) if found is not None else (400, "{}")
    return peers(answer)


def vector(*series) -> dict:
    return {"status": "success", "data": {"resultType": "vector", "result": list(series)}}


def series(value="1", **labels) -> dict:
    return {"metric": {"instance": "10.0.0.1:9464", "job": "gputop", **labels},
            "value": [1.7e9, value]}


@pytest.mark.parametrize("broken", [
    {"util": vector(series(gpu="²"))},  # str.isdigit, but not int()
    {"util": vector({"metric": [], "value": [1, "1"]})},
    {"util": {"status": "success", "data": [1]}},
    {"sm": vector({"metric": {"gpu": "0"}, "value": "x"})},
    {"parts": vector(series(gpu="0", part="weights", value=[1]))},
    {"up": "not json"},
], ids=["superscript-gpu", "metric-list", "data-list", "value-text", "value-list", "not-json"])
def test_a_malformed_prometheus_answer_keeps_the_other_rows(peers, broken):
    answers = {"info": vector(series(gpu="0", name="H100"), series(gpu="1", name="H100")),
               "util": vector(series("0.97", gpu="0"), series("0.5", gpu="1"))}
    answers.update(broken)
    prometheus = prometheus_peer(peers, answers)
    rows = fleet.ask_prometheus(prometheus.url, timeout_s=5)
    assert sorted(r.gpu for r in rows if r.error is None) == [0, 1], rows


# ---------------------------------------------------------------- 6. caps on answers

def test_a_huge_snapshot_is_refused_before_it_is_decoded(peers):
    body = "[" + "{}," * (4 * 2**20) + "{}]"  # 12 MiB: 4 million objects once decoded
    peer = snapshot_peer(peers, body)
    tracemalloc.start()
    rows = fleet.ask_serve(peer.url, timeout_s=10)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(rows) == 1 and rows[0].error and "MiB" in rows[0].error, rows
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_a_host_reporting_hundreds_of_gpus_is_one_row(peers):
    peer = snapshot_peer(peers, {"gpus": [{"index": i} for i in range(5000)]})
    rows = fleet.ask_serve(peer.url, timeout_s=10)
    assert len(rows) == 1 and "more than" in rows[0].error


@pytest.mark.parametrize("labels, refusal", [
    (lambda i: {"instance": f"h{i}:9464", "gpu": "0", "name": "NVIDIA H100 80GB HBM3"}, "MiB"),
    (lambda i: {"instance": f"h{i}"}, "series"),
], ids=["8-MiB", "100k-series"])
def test_a_prometheus_answer_of_100k_series_is_refused_with_bounded_memory(peers, labels,
                                                                           refusal):
    """Every query answered with 100,000 series: 909 MiB per refresh when the eleven
    answers were decoded at once and every series became a row."""
    many = vector(*({"metric": labels(i), "value": [1, "1"]} for i in range(100_000)))
    prometheus = prometheus_peer(peers, {name: many for name in fleet.QUERIES})
    tracemalloc.start()
    rows = fleet.ask_prometheus(prometheus.url, timeout_s=30)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(rows) == 1 and refusal in rows[0].error, rows[:3]
    assert peak < 200 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_prometheus_series_beyond_the_caps_are_not_all_rows(peers):
    info = vector(*(series(gpu=str(g), name="H100") for g in range(300)))
    rows = fleet.ask_prometheus(prometheus_peer(peers, {"info": info}).url, timeout_s=10)
    assert len(rows) == 256  # one instance: at most schema.MAX_GPUS of its GPUs


def frames_peer(peers, lines: list[str], headers_of=None) -> Peer:
    body = "".join(line + "\n" for line in lines)
    return peers(lambda path, headers: (200, body) if path.startswith("/frames") else (404, ""),
                 content_type="application/x-ndjson")


def test_remote_frames_with_thousands_of_gpus_are_refused(peers):
    frame = {"seq": 1, "time_wall_s": 1.7e9, "time_mono_s": 1.0,
             "gpus": [{"index": i} for i in range(2000)]}
    peer = frames_peer(peers, [json.dumps(frame)])
    with pytest.raises(SourceError, match="more than"):
        RemoteFeed(peer.url).fetch()
    procs = {"seq": 1, "time_wall_s": 1.7e9, "time_mono_s": 1.0,
             "processes": [{"pid": i, "gpu_index": 0} for i in range(20_000)]}
    with pytest.raises(SourceError, match="more than"):
        RemoteFeed(frames_peer(peers, [json.dumps(procs)]).url).fetch()


def test_a_remote_answer_over_the_cap_is_not_read(peers):
    from gputop.remote import MAX_ANSWER_BYTES

    line = json.dumps({"seq": 1, "time_wall_s": 1.7e9, "time_mono_s": 1.0})
    lines = [line] * (24 * 2**20 // len(line))  # 24 MiB: more than any serve answers
    assert MAX_ANSWER_BYTES < 24 * 2**20
    with pytest.raises(SourceError, match="MiB"):
        RemoteFeed(frames_peer(peers, lines).url).fetch()


# ---------------------------------------------------------------- 11. a restarted serve

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_on(port: int, seed: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "gputop", "serve", "--demo", "serving",
                             "-d", "0.1", "--seed", seed, "--listen", f"127.0.0.1:{port}"],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert "serving" in proc.stderr.readline()
    return proc


def test_remote_follows_a_serve_that_restarted():
    from gputop.session import Session

    port = free_port()
    first = serve_on(port, "1")
    session = Session("remote")
    feed = RemoteFeed(f"http://127.0.0.1:{port}", interval_s=0.2)
    seqs: list[int] = []

    def take(frame):
        seqs.append(frame.seq)
        session.add_frame(frame)

    feed.start(take)
    second = None
    try:
        deadline = time.monotonic() + 30
        while len(seqs) < 30 and time.monotonic() < deadline:  # the first run is frames ahead
            time.sleep(0.2)
        first.terminate()
        first.wait(timeout=15)
        before = len(seqs)
        second = serve_on(port, "2")
        deadline = time.monotonic() + 30
        while len(seqs) < before + 5 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(seqs) >= before + 5, f"no frame from the restarted serve: {feed.error}"
        assert seqs == sorted(set(seqs)) and feed.restarts == 1
        assert len(session) == len(seqs)  # every frame accepted by the local timeline
    finally:
        feed.stop()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def test_a_remote_that_sends_no_new_frame_is_not_shown_as_live(peers, monkeypatch):
    import gputop.remote as remote

    monkeypatch.setattr(remote, "STALL_MIN_S", 1.0, raising=False)
    line = json.dumps({"seq": 5, "time_wall_s": 1.7e9, "time_mono_s": 1.0})
    peer = frames_peer(peers, [line])  # frame 5 again and again: nothing new
    feed = RemoteFeed(peer.url, interval_s=0.1)
    frames: list = []
    feed.start(frames.append)
    try:
        deadline = time.monotonic() + 20
        while feed.error is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        feed.stop()
    assert len(frames) == 1 and feed.error and "no new frame" in feed.error


# ---------------------------------------------------------------- 21. TLS, credentials, paths

def test_a_prometheus_behind_a_path_keeps_it(peers):
    prometheus = prometheus_peer(peers, {"info": vector(series(gpu="0", name="H100"))},
                                 prefix="/prometheus")
    rows = fleet.ask_prometheus(prometheus.url + "/prometheus", timeout_s=5)
    assert [(r.gpu, r.error) for r in rows] == [(0, None)]
    assert all(p.startswith("/prometheus/api/v1/query") for p in prometheus.paths)


def test_a_self_signed_serve_is_named_as_untrusted_and_a_ca_file_trusts_it(serve, tmp_path):
    import ssl

    from tests.conftest import need

    need("openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True,
                   timeout=60)
    config = tmp_path / "web.yml"
    config.write_text(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
    context = ssl.create_default_context(cafile=str(cert))
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config), scheme="https",
              context=context)
    done = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json", "--remote",
                           s.url], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not trusted" in done.stderr and \
        "GPUTOP_CA_FILE" in done.stderr, done.stderr
    done = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json", "--remote",
                           s.url], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GPUTOP_CA_FILE": str(cert)})
    assert done.returncode == 0, done.stderr


def test_remote_credentials_from_the_environment_or_a_private_file(serve, tmp_path):
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    config = tmp_path / "web.yml"
    config.write_text(f"basic_auth_users:\n  prom: '{hashed}'\n")
    good = {"Authorization": "Basic " + base64.b64encode(b"prom:s3cret").decode()}
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config), headers=good)

    def snapshot(**env):
        return subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json", "--remote",
                               s.url], cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env={**os.environ, **env})

    assert snapshot(GPUTOP_AUTH="prom:s3cret").returncode == 0
    secret = tmp_path / "auth"
    secret.write_text("prom:s3cret\n")
    secret.chmod(0o644)
    refused = snapshot(GPUTOP_AUTH_FILE=str(secret))
    assert refused.returncode == 2 and "chmod 600" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    secret.chmod(0o600)
    done = snapshot(GPUTOP_AUTH_FILE=str(secret))
    assert done.returncode == 0, done.stderr
    assert "s3cret" not in done.stdout


# ---------------------------------------------------------------- 17. engine credentials

def test_engine_credentials_are_sent_and_never_shown(peers, tmp_path):
    token = "Basic " + base64.b64encode(b"admin:s3cret").decode()
    authorized: list[bool] = []

    def answer(path, headers):
        authorized.append(headers.get("Authorization") == token)
        return (200, VLLM) if authorized[-1] else (401, "no")

    engine = peers(answer, content_type="text/plain; version=0.0.4")
    url = engine.url.replace("//", "//admin:s3cret@") + "/metrics"
    done = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--engine", url,
                           "--samples", "6", "-d", "0.5"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert authorized and all(authorized), authorized  # every scrape carried them
    data = strict_json(done.stdout)
    assert data["engine"] is not None and data["engine"]["requests_running"] is not None
    assert "s3cret" not in done.stdout + done.stderr
    recording = tmp_path / "r.gtrec"
    record = subprocess.run([sys.executable, "-m", "gputop", "record", str(recording),
                             "--engine", url, "-d", "0.3", "--duration", "2s"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert record.returncode == 0, record.stderr
    from gputop.record.store import Recording

    frames = list(Recording(recording).frames())
    assert frames and all(f.engine is None or "s3cret" not in f.engine.url for f in frames)
    assert all("s3cret" not in str(f.sources) for f in frames)
    engine.close()  # down: the reason shown names the endpoint, not the password
    failed = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--engine", url,
                             "--samples", "2", "-d", "0.3"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    reason = strict_json(failed.stdout)["sources"]["engine"]["reason"]
    assert reason and "s3cret" not in reason and "admin" not in reason


def test_engine_credentials_never_reach_a_serve_client(peers, serve):
    token = "Basic " + base64.b64encode(b"admin:s3cret").decode()
    engine = peers(lambda path, headers: (200, VLLM) if headers.get("Authorization") == token
                   else (401, "no"), content_type="text/plain; version=0.0.4")
    url = engine.url.replace("//", "//admin:s3cret@") + "/metrics"
    s = serve("--engine", url, "-d", "0.3")
    time.sleep(1.5)
    snapshot, frames = s.get("/snapshot.json")[2], s.get("/frames?since=-1")[2]
    assert b"s3cret" not in snapshot + frames and b"admin" not in snapshot + frames
    assert json.loads(snapshot)["engine"]["url"] == engine.url + "/metrics"


# ---------------------------------------------------------------- 18. no DNS per poll

SILENT_RESOLVER = "127.0.0.77"


def test_engine_polls_never_ask_the_resolver(peers, tmp_path):
    """A resolver that never answers, and a host name /etc/hosts does not list: the engine's
    polls must not send one DNS query (each took a poll to 4 s)."""
    engine = peers(lambda path, headers: (200, VLLM), content_type="text/plain; version=0.0.4")
    resolver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    resolver.bind((SILENT_RESOLVER, 53))
    resolver.settimeout(0.2)
    queries: list[bytes] = []
    stop = threading.Event()

    def listen():
        while not stop.is_set():
            try:
                queries.append(resolver.recvfrom(4096)[0])
            except (TimeoutError, OSError):
                continue

    threading.Thread(target=listen, daemon=True).start()
    (tmp_path / "resolv.conf").write_text(f"nameserver {SILENT_RESOLVER}\noptions timeout:2 "
                                          "attempts:1\n")
    (tmp_path / "hosts").write_text("127.0.0.1 localhost\n")
    script = (f"mount --bind {tmp_path / 'resolv.conf'} /etc/resolv.conf && "
              f"mount --bind {tmp_path / 'hosts'} /etc/hosts && exec {sys.executable} -m gputop "
              f"snapshot --engine {engine.url}/metrics --samples 4 -d 0.3")
    try:
        done = subprocess.run(["unshare", "--mount", "sh", "-c", script], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    finally:
        stop.set()
        resolver.close()
    assert done.returncode == 0, done.stderr
    assert strict_json(done.stdout)["sources"]["engine"]["ok"]
    assert queries == [], f"{len(queries)} DNS queries during engine polls"


# ---------------------------------------------------------------- 15. discovery

FAKE_VLLM = """
import http.server, socket, sys, threading
mode, page = sys.argv[1], sys.argv[2]
if mode == "silent":  # 60 ports that accept and never answer
    socks = []
    for _ in range(60):
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64); socks.append(s)
    print(socks[0].getsockname()[1], flush=True)
    def hold(s):
        conns = []
        while True:
            conns.append(s.accept()[0])
    for s in socks:
        threading.Thread(target=hold, args=(s,), daemon=True).start()
    threading.Event().wait()
body = open(page, "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
if mode == "freebind":  # an address this machine does not have
    class S(http.server.HTTPServer):
        def server_bind(self):
            self.socket.setsockopt(socket.SOL_IP, 15, 1)  # IP_FREEBIND
            super().server_bind()
    s = S(("169.254.169.254", 0), H)
else:
    s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


@pytest.fixture
def shared_vllm():
    """An executable named ``vllm`` and its page, in a directory an unprivileged user
    (nobody) can read (pytest's own tmp directories are root's alone)."""
    import shutil
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="gputop-vllm-user-"))
    (shared / "bin").mkdir()
    (shared / "bin" / "vllm").write_text(FAKE_VLLM)
    (shared / "page.txt").write_text(VLLM)
    for path in (shared, shared / "bin"):
        path.chmod(0o755)
    for path in (shared / "page.txt", shared / "bin" / "vllm"):
        path.chmod(0o644)
    yield shared
    shutil.rmtree(shared, ignore_errors=True)


def as_nobody(shared: Path, mode: str) -> str:
    return (f"setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "
            f"{shared / 'bin' / 'vllm'} {mode} {shared / 'page.txt'}")


def test_silent_ports_of_a_fake_engine_do_not_delay_finding_the_real_one(shared_vllm, tmp_path):
    """In a PID namespace of its own (no other engine on the machine is seen): a fake vllm
    with 60 silent ports, started first, then a real-looking one; root's gputop, given
    3 s, must find the second."""
    out = tmp_path / "out"
    out.mkdir()
    script = (f"{as_nobody(shared_vllm, 'silent')} > {out}/silent &\n"
              "sleep 0.3\n"
              f"{as_nobody(shared_vllm, 'serve')} > {out}/real &\n"
              f"while [ ! -s {out}/real ]; do sleep 0.05; done\n"
              f"{sys.executable} -m gputop snapshot --samples 6 -d 0.5 > {out}/snapshot.json\n")
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", script],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    port = int((out / "real").read_text())
    engine = strict_json((out / "snapshot.json").read_text())["engine"]
    assert engine is not None and engine["url"] == f"http://127.0.0.1:{port}/metrics"


@pytest.fixture
def unprivileged_vllm(shared_vllm):
    started: list[subprocess.Popen] = []

    def start(mode: str) -> tuple[subprocess.Popen, int]:
        proc = subprocess.Popen(as_nobody(shared_vllm, mode).split(), stdout=subprocess.PIPE,
                                text=True)
        started.append(proc)
        return proc, int(proc.stdout.readline())

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def test_discovery_never_connects_to_an_address_a_user_bound_with_freebind(unprivileged_vllm):
    import psutil

    from gputop.sources import engine_discovery

    proc, port = unprivileged_vllm("freebind")
    found = engine_discovery.candidate(psutil.Process(proc.pid))
    urls = found.urls if found is not None else ()
    assert not any("169.254" in url for url in urls), urls


# ---------------------------------------------------------------- fuzz: fleet and remote

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text(max_size=8)
    | st.floats(allow_nan=True, allow_infinity=True),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20)
FIELD = st.sampled_from(["index", "name", "util_gpu_pct", "sm_active_pct", "mem_used_bytes",
                         "mem_total_bytes", "vram", "gpus", "engine", "alerts", "active",
                         "suspects", "cause", "kind", "generation_tokens_per_s", "itl_p99_s",
                         "weights_bytes"])
SHAPED = st.recursive(JSON, lambda inner: st.dictionaries(FIELD, inner, max_size=5), max_leaves=30)
FUZZ = settings(max_examples=400, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


GPU_LIKE = st.dictionaries(FIELD, SHAPED, max_size=6)
SNAPSHOTS = st.fixed_dictionaries({}, optional={
    "gpus": st.one_of(SHAPED, st.lists(st.one_of(GPU_LIKE, st.fixed_dictionaries(
        {"index": st.one_of(st.integers(-3, 300), JSON)}, optional={
            "vram": SHAPED, "util_gpu_pct": JSON, "name": JSON})), max_size=5)),
    "engine": SHAPED,
    "alerts": st.one_of(SHAPED, st.lists(st.fixed_dictionaries(
        {"active": JSON, "gpus": st.one_of(JSON, st.lists(st.integers(-1, 3), max_size=3))},
        optional={"kind": JSON, "suspects": SHAPED}), max_size=3))})


def test_fuzz_fleet_snapshots():
    rows_seen: list[int] = []

    @FUZZ
    @given(SNAPSHOTS)
    def run(data):
        rows = fleet.rows_from_snapshot("h:1", "http://h:1", data)
        for row in rows:
            row.rank()
            row.text()
            assert row.gpu is None or isinstance(row.gpu, int)
        rows_seen.append(len(rows))

    run()
    assert sum(1 for n in rows_seen if n) > 20  # not only empty answers


LABEL = st.sampled_from(["instance", "gpu", "name", "part", "kind", "cause", "job"])


@FUZZ
@given(st.dictionaries(st.sampled_from(list(fleet.QUERIES)), st.one_of(
    JSON, st.builds(lambda result: {"status": "success", "data": {"resultType": "vector",
                                                                 "result": result}},
                    st.lists(st.one_of(JSON, st.fixed_dictionaries({
                        "metric": st.one_of(JSON, st.dictionaries(LABEL, st.one_of(
                            st.text(max_size=4), st.sampled_from(["0", "1", "²", "٣", "-1"])),
                            max_size=4)),
                        "value": st.one_of(JSON, st.tuples(st.floats(), st.one_of(
                            st.text(max_size=6), st.sampled_from(["1", "NaN", "+Inf", "0"])))
                                           .map(list))})), max_size=6)))))
def test_fuzz_prometheus_answers(answers):
    vectors = {}
    for name, answer in answers.items():
        try:
            vectors[name] = fleet.parse_vector(answer)
        except ValueError:
            continue
    for row in fleet.rows_from_prometheus(vectors):
        row.rank()
        assert row.util_pct is None or math.isfinite(row.util_pct)
    if vectors.get("info"):
        PROMETHEUS_ROWS.append(len(vectors["info"]))


PROMETHEUS_ROWS: list[int] = []


def test_fuzz_prometheus_answers_reached_rows():
    """Run after the fuzz above (file order): some answers must have been read."""
    if not PROMETHEUS_ROWS:
        test_fuzz_prometheus_answers()
    assert PROMETHEUS_ROWS


FRAME_FIELD = st.sampled_from(["seq", "time_wall_s", "time_mono_s", "gpus", "processes",
                               "engine", "launch", "host", "pinned", "sources", "index",
                               "pid", "gpu_index", "histograms", "upper_bounds", "cumulative",
                               "buckets", "kind", "name", "util_gpu_pct", "mem_total_bytes",
                               "mem_used_bytes", "ok", "reason", "count", "sum"])
FRAME_LIKE = st.recursive(JSON, lambda inner: st.dictionaries(FRAME_FIELD, inner, max_size=6),
                          max_leaves=40)


FRAME_LINES = st.lists(st.one_of(
    st.fixed_dictionaries({"seq": st.integers(0, 10), "time_wall_s": st.floats(0, 2e9),
                           "time_mono_s": st.floats(0, 1e6)},
                          optional={k: FRAME_LIKE for k in ("gpus", "processes", "engine",
                                                             "launch", "host", "sources")})
    .map(json.dumps),
    FRAME_LIKE.map(json.dumps), st.text(max_size=30)), max_size=4)


def test_fuzz_remote_frames_read_or_are_refused_and_derive():
    """Every /frames answer reads or is refused with SourceError; what reads derives into a
    snapshot that is valid JSON.  Some examples must read (a fuzz that only ever reached
    the refusal would prove nothing)."""
    from gputop.export.snapshot import snapshot_dict
    from gputop.remote import parse_frames
    from gputop.session import Session

    accepted: list[int] = []

    @FUZZ
    @given(FRAME_LINES)
    def run(lines):
        try:
            frames = parse_frames("\n".join(lines))
        except SourceError:
            return
        session = Session("remote")
        for frame in frames:
            session.add_frame(frame)
        view = session.view()
        if view is not None:
            json.dumps(snapshot_dict(view, "remote"), allow_nan=False)
            accepted.append(len(frames))

    run()
    assert len(accepted) > 5, accepted
