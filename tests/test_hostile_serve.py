"""Hostile input, round two (issue 23): `gputop serve` against hostile clients on loopback.

Each test is one reproduced defect: a TLS exporter frozen by one idle connection, threads
and descriptors held by connections that never speak, an accept loop spinning out of
descriptors, bcrypt as a CPU lever and a user oracle, security settings accepted and not
applied, /frames built under the session's lock and without a size cap, a signal
handler that deadlocked on the sampler's Event, HEAD answered 501, a web config that
printed a line of /etc/shadow, no warning for an exposed listen address.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import bcrypt
import pytest

from gputop.schema import Frame, GpuSample, ProcSample, frame_from_dict
from gputop.serve import Server, WebConfig
from gputop.session import Session
from tests.conftest import concurrently, need
from tests.test_serve import ROOT, serve, tls_files  # noqa: F401 (fixtures)

LAUNCHER = ROOT / "tests" / "stand_in" / "fake_nvml_gputop.py"
# what gputop/bounded_http.py promises (not imported: the tests must run against the code
# before it too, and fail there on behaviour, not on an import)
REQUEST_S = 5.0  # a connection's handshake and request
MAX_CONNECTIONS = 64  # connections served at once
# and gputop/webconfig.py, gputop/serve.py
BCRYPT_SHARE = 0.2  # of one core spent on password checks...
BCRYPT_BURST_S = 1.0  # ...with this many seconds at once
ANSWER_BYTES = 4 * 2**20  # a /frames answer


def get(url: str, headers: dict | None = None, context=None, timeout: float = 10.0,
        method: str = "GET"):
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    with urllib.request.urlopen(request, timeout=timeout, context=context) as answer:
        return answer.status, dict(answer.headers), answer.read()


def basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def web_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "web.yml"
    path.write_text(text)
    return path


def tls_context(cert: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cert))
    context.check_hostname = False
    return context


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def idle_connections(port: int, count: int) -> list[socket.socket]:
    """Up to ``count`` TCP connections to ``port`` that never send a byte."""
    idle = []
    for _ in range(count):
        sock = socket.socket()
        sock.settimeout(2)
        try:
            sock.connect(("127.0.0.1", port))
            idle.append(sock)
        except OSError:
            sock.close()
    return idle


def answers_within(url: str, seconds: float, **kwargs) -> bool:
    """Whether ``url`` answers 200 within ``seconds`` (retrying refused attempts)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if get(url, timeout=max(0.5, deadline - time.monotonic()), **kwargs)[0] == 200:
                return True
        except (urllib.error.URLError, OSError, ssl.SSLError):
            time.sleep(0.2)
    return False


# ---------------------------------------------------------------- 1. one idle connection

def test_an_idle_tcp_connection_cannot_freeze_the_tls_exporter(serve, tmp_path, tls_files):
    cert, key = tls_files
    config = web_config(tmp_path, f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
    context = tls_context(cert)
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config), scheme="https",
              context=context)
    port = int(s.url.rsplit(":", 1)[1])
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]  # never speak
    try:
        time.sleep(0.5)
        for _ in range(3):  # each answered, while the idle sockets stay open
            assert get(s.url + "/healthz", context=context, timeout=15)[2] == b"ok\n"
    finally:
        for sock in idle:
            sock.close()


def test_a_tls_handshake_dripped_a_byte_at_a_time_is_cut_at_its_deadline(serve, tmp_path,
                                                                         tls_files):
    cert, key = tls_files
    config = web_config(tmp_path, f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config), scheme="https",
              context=tls_context(cert))
    sock = socket.create_connection(("127.0.0.1", int(s.url.rsplit(":", 1)[1])))
    hello = b"\x16\x03\x01\x02\x00" + b"\x01" * 512  # a ClientHello record that never ends
    started = time.monotonic()
    cut = None
    try:
        for byte in hello:  # one byte every 0.25 s: each read is well within a read timeout
            try:
                sock.sendall(bytes([byte]))
                sock.settimeout(0.25)
                if sock.recv(1) == b"":
                    cut = time.monotonic() - started
                    break
            except TimeoutError:
                continue
            except OSError:
                cut = time.monotonic() - started
                break
            if time.monotonic() - started > REQUEST_S + 20:
                break
    finally:
        sock.close()
    assert cut is not None, "the dripped handshake was never cut"
    assert cut < REQUEST_S + 15


# ---------------------------------------------------------------- 7. connections held, fds

def test_connections_that_never_send_a_request_are_bounded_and_closed(serve):
    s = serve("--demo", "serving", "-d", "0.2")
    port = int(s.url.rsplit(":", 1)[1])
    before = threads_of(s.proc.pid)
    idle = idle_connections(port, 200)
    try:
        time.sleep(1)
        assert threads_of(s.proc.pid) <= before + MAX_CONNECTIONS + 2, threads_of(s.proc.pid)
        assert answers_within(s.url + "/healthz", REQUEST_S + 10)
        deadline = time.monotonic() + REQUEST_S + 10
        open_ones = list(idle)
        while open_ones and time.monotonic() < deadline:  # the server closes every one
            still = []
            for sock in open_ones:
                sock.setblocking(False)
                try:
                    if sock.recv(1) != b"":
                        still.append(sock)
                except BlockingIOError:
                    still.append(sock)
                except OSError:
                    pass
            open_ones = still
            time.sleep(0.3)
        assert not open_ones, f"{len(open_ones)} of {len(idle)} idle connections still held"
        assert threads_of(s.proc.pid) <= before + 2
    finally:
        for sock in idle:
            sock.close()


@pytest.fixture
def gpu_worker():
    """A real process the fake NVML reports as using GPU 0 (its /proc is read each tick)."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def start_live_serve(tmp_path: Path, pids: list[int], *args: str, prefix: str = "",
                     names: str = "") -> tuple[subprocess.Popen, str]:
    """`gputop serve` in live mode over the tests' fake NVML reporting ``pids`` on one GPU
    (``prefix``: a shell prefix such as a ulimit)."""
    spec = tmp_path / "nvml.json"
    spec.write_text(json.dumps({"gpus": [{"procs": [[pid, 2] for pid in pids]}]}))
    command = " ".join([prefix, "exec", sys.executable, str(LAUNCHER), "serve", "--listen",
                        "127.0.0.1:0", *args])
    proc = subprocess.Popen(["bash", "-c", command], cwd=ROOT, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "FAKE_NVML_SPEC": str(spec),
                                            "PYTHONPATH": str(ROOT)})
    line = proc.stderr.readline()
    match = re.search(r"https?://[^/]+:(\d+)/metrics", line)
    if not match:
        proc.kill()
        raise AssertionError(f"serve did not start: {line}{proc.stderr.read()}")
    url = f"http://127.0.0.1:{match.group(1)}"
    assert answers_within(url + "/healthz", 30), "serve never became healthy"
    return proc, url


def test_out_of_descriptors_the_exporter_neither_spins_nor_starves_sampling(tmp_path,
                                                                             gpu_worker):
    proc, url = start_live_serve(tmp_path, [gpu_worker.pid], "-d", "0.2", prefix="ulimit -n 64;")
    port = int(url.rsplit(":", 1)[1])
    idle = []
    try:
        idle = idle_connections(port, 80)  # more than the process has descriptors
        time.sleep(1)
        used_before = cpu_s(proc.pid)
        time.sleep(5)
        used = cpu_s(proc.pid) - used_before
        assert used < 1.0, f"{used:.1f} s of CPU in 5 s with idle connections: a busy loop"
        assert answers_within(url + "/healthz", 20)
        since = -1
        body = get(url + f"/frames?since={since}")[2].decode()
        reasons = [str(status.get("reason")) for line in body.splitlines()
                   for status in json.loads(line)["sources"].values()]
        assert reasons and not any("Too many open files" in r for r in reasons), \
            [r for r in reasons if "Too many" in r][:3]
    finally:
        for sock in idle:
            sock.close()
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------- 8. bcrypt

@pytest.fixture
def counted_checkpw(monkeypatch):
    """Every bcrypt.checkpw call, with the password it was given."""
    calls: list[bytes] = []
    real = bcrypt.checkpw

    def counting(password, hashed):
        calls.append(bytes(password))
        return real(password, hashed)

    monkeypatch.setattr(bcrypt, "checkpw", counting)
    return calls


@pytest.fixture
def auth_server(tmp_path):
    """An in-process serve over a one-frame session with one bcrypt user (cost 10)."""
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=10)).decode()
    config = WebConfig.load(str(web_config(tmp_path, f"basic_auth_users:\n  prom: '{hashed}'\n")))
    session = Session("test")
    server = Server(session, "127.0.0.1:0", config)
    session.add_frame(Frame(seq=0, time_wall_s=time.time(), time_mono_s=time.monotonic(),
                            gpus=(GpuSample(index=0, name="X"),)))
    server.start()
    yield f"http://127.0.0.1:{server.port}"
    server.close()


def status_of(url: str, headers: dict) -> int:
    try:
        return get(url, headers=headers)[0]
    except urllib.error.HTTPError as exc:
        return exc.code


def test_an_unknown_user_costs_the_same_hash_as_a_known_one(auth_server, counted_checkpw):
    assert status_of(auth_server + "/metrics", basic("prom", "wrong")) == 401
    assert len(counted_checkpw) == 1
    assert status_of(auth_server + "/metrics", basic("nobody", "wrong")) == 401
    assert len(counted_checkpw) == 2, "an unknown user was answered without a hash: a timing oracle"


def test_a_storm_of_wrong_passwords_gets_few_hashes(auth_server, counted_checkpw):
    """8 clients sending wrong passwords as fast as they can: the hashes they cause fit a
    fifth of one core (counted in hashes of the users' cost)."""

    statuses: list[int] = []

    def client(n: int, stop):
        i = 0
        while not stop.is_set():
            statuses.append(status_of(auth_server + "/metrics", basic("prom", f"bad{n}-{i}")))
            i += 1

    salt = bcrypt.gensalt(rounds=10)
    one = time.thread_time()
    bcrypt.hashpw(b"y", salt)  # the work of one check at the users' cost...
    hash_s = time.thread_time() - one  # ...in CPU time: no check takes less, crowded or not
    elapsed = concurrently(client, 8, 4)
    assert set(statuses) <= {401, 429} and 429 in statuses
    allowed = (BCRYPT_BURST_S + BCRYPT_SHARE * elapsed) / (0.8 * hash_s) + 1
    assert len(counted_checkpw) <= allowed, \
        f"{len(counted_checkpw)} hashes of ~{hash_s * 1000:.0f} ms in {elapsed:.1f}s"
    time.sleep(BCRYPT_BURST_S / BCRYPT_SHARE)  # the budget refills: the scraper gets in
    assert status_of(auth_server + "/metrics", basic("prom", "s3cret")) == 200


def test_wrong_passwords_never_evict_the_scrapers_verified_entry(auth_server, counted_checkpw):
    assert status_of(auth_server + "/metrics", basic("prom", "s3cret")) == 200
    for i in range(1100):  # more wrong passwords than the old cache held
        status_of(auth_server + "/healthz", basic("prom", f"bad{i}"))
    assert status_of(auth_server + "/metrics", basic("prom", "s3cret")) == 200
    assert counted_checkpw.count(b"s3cret") == 1, "the verified password was hashed again"


# ---------------------------------------------------------------- 9. security settings

@pytest.fixture
def client_ca(tmp_path):
    """A CA, a client certificate it signed, and a self-signed client certificate."""
    need("openssl")

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca",
        "-keyout", str(tmp_path / "ca.key"), "-out", str(tmp_path / "ca.pem"))
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=scraper", "-keyout",
        str(tmp_path / "client.key"), "-out", str(tmp_path / "client.csr"))
    run("x509", "-req", "-in", str(tmp_path / "client.csr"), "-CA", str(tmp_path / "ca.pem"),
        "-CAkey", str(tmp_path / "ca.key"), "-CAcreateserial", "-days", "1", "-out",
        str(tmp_path / "client.pem"))
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=stranger",
        "-keyout", str(tmp_path / "stranger.key"), "-out", str(tmp_path / "stranger.pem"))
    return tmp_path


def test_client_certificates_are_required_and_verified(serve, tmp_path, tls_files, client_ca):
    cert, key = tls_files
    config = web_config(tmp_path, f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
                        "  client_auth_type: RequireAndVerifyClientCert\n"
                        f"  client_ca_file: {client_ca / 'ca.pem'}\n")
    good = tls_context(cert)
    good.load_cert_chain(client_ca / "client.pem", client_ca / "client.key")
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config), scheme="https",
              context=good)
    assert get(s.url + "/metrics", context=good)[0] == 200
    stranger = tls_context(cert)
    stranger.load_cert_chain(client_ca / "stranger.pem", client_ca / "stranger.key")
    for context in (tls_context(cert), stranger):  # no certificate; one the CA never signed
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError, OSError)):
            get(s.url + "/metrics", context=context)


def test_min_version_tls13_refuses_tls12(serve, tmp_path, tls_files):
    cert, key = tls_files
    config = web_config(tmp_path, f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
                        "  min_version: TLS13\n")
    context = tls_context(cert)
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config), scheme="https",
              context=context)
    assert get(s.url + "/healthz", context=context)[0] == 200
    old = tls_context(cert)
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError, OSError)):
        get(s.url + "/healthz", context=old)


@pytest.mark.parametrize("section, message", [
    ("  client_auth_type: RequireAnyClientCert\n", "client_auth_type"),
    ("  client_auth_type: RequireAndVerifyClientCert\n", "needs client_ca_file"),
    ("  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "cipher_suites"),
    ("  curve_preferences: [X25519]\n", "curve_preferences"),
    ("  client_allowed_sans: [scraper]\n", "client_allowed_sans"),
    ("  min_version: TLS99\n", "min_version"),
    ("  cert_fil: x\n", "unknown key 'cert_fil' in tls_server_config"),
], ids=["any-cert", "verify-without-ca", "ciphers", "curves", "sans", "version", "typo"])
def test_a_security_setting_gputop_cannot_apply_is_refused(tmp_path, tls_files, section, message):
    cert, key = tls_files
    config = web_config(tmp_path, f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
                        + section)
    done = subprocess.run([sys.executable, "-m", "gputop", "serve", "--demo", "--listen",
                           "127.0.0.1:0", "--web-config", str(config)], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_http_server_config_headers_are_applied_or_refused(serve, tmp_path):
    config = web_config(tmp_path, "http_server_config:\n  http2: false\n  headers:\n"
                        "    X-Frame-Options: deny\n")
    s = serve("--demo", "serving", "-d", "0.2", "--web-config", str(config))
    assert get(s.url + "/healthz")[1]["X-Frame-Options"] == "deny"
    bad = web_config(tmp_path, "http_server_config:\n  headers:\n    Set-Cookie: x=1\n")
    done = subprocess.run([sys.executable, "-m", "gputop", "serve", "--demo", "--listen",
                           "127.0.0.1:0", "--web-config", str(bad)], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "is not allowed" in done.stderr


# ---------------------------------------------------------------- 20. /etc/shadow

def test_a_web_config_that_is_no_config_prints_none_of_its_lines(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$y$j9T$abcdefgh$sEcReThAsH:20228:0:99999:7:::\n"
                      "_apt:*:20228:0:99999:7:::\n")
    secret.chmod(0o600)
    for path in ("/etc/shadow", str(secret)):
        done = subprocess.run([sys.executable, "-m", "gputop", "serve", "--demo", "--listen",
                               "127.0.0.1:0", "--web-config", path], cwd=ROOT,
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        lines = Path(path).read_text().splitlines()
        message = done.stderr.replace(path, "")
        fields = {f for line in lines for f in line.split(":") if len(f) >= 4} | {"_apt"}
        assert not [f for f in fields if f in message], done.stderr


# ---------------------------------------------------------------- 19. exposed without auth

def serve_messages(*args: str, env: dict | None = None) -> tuple[str, str]:
    """(the first line serve prints, the rest of what it printed in 1.5 s)."""
    proc = subprocess.Popen([sys.executable, "-m", "gputop", "serve", "--demo", "-d", "0.2",
                             *args], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        first = proc.stderr.readline()
        time.sleep(1.5)
    finally:
        proc.terminate()
        rest = proc.stderr.read()  # what the first readline buffered, too
        proc.wait(timeout=15)
    return first, rest


@pytest.mark.parametrize("listen, env", [("0.0.0.0:0", None), ("[::]:0", None),
                                         (None, "0.0.0.0:0")])
def test_an_exposed_listen_address_without_auth_or_tls_warns(listen, env):
    first, rest = serve_messages(*(["--listen", listen] if listen else []),
                                 env={"GPUTOP_SERVE_LISTEN": env} if env else None)
    assert "serving" in first
    assert "warning" in rest and "without basic auth or TLS" in rest, rest


def test_loopback_listens_without_a_warning():
    first, rest = serve_messages("--listen", "127.0.0.1:0")
    assert "serving" in first and "warning" not in rest


# ---------------------------------------------------------------- 21. HEAD

def test_head_is_answered_like_get_without_a_body(serve):
    s = serve("--demo", "serving", "-d", "0.2")
    status, headers, body = get(s.url + "/metrics", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 100
    assert get(s.url + "/healthz", method="HEAD")[0] == 200


# ---------------------------------------------------------------- 4. /frames

def big_frame(seq: int, gpus: int = 64, processes: int = 332) -> Frame:
    """A host of 64 GPUs and 332 processes with long command lines (the issue's host)."""
    return Frame(
        seq=seq, time_wall_s=1.7e9 + seq, time_mono_s=float(seq),
        gpus=tuple(GpuSample(index=i, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{i:032x}",
                             util_gpu_pct=50.0, mem_total_bytes=80 << 30,
                             mem_used_bytes=40 << 30) for i in range(gpus)),
        processes=tuple(ProcSample(pid=1000 + p, gpu_index=p % gpus, name="python",
                                   cmdline="python -m worker " + "--flag value " * 40,
                                   user="user", mem_bytes=1 << 30)
                        for p in range(processes)))


@pytest.fixture
def big_host():
    """An in-process serve over a session holding 40 frames of the issue's host."""
    session = Session("big", history_bytes=None)
    server = Server(session, "127.0.0.1:0")
    for seq in range(40):
        session.add_frame(big_frame(seq))
    server.start()
    yield session, server, f"http://127.0.0.1:{server.port}"
    server.close()


def test_frames_are_encoded_outside_the_sessions_lock(big_host, monkeypatch):
    import gputop.serve as serve_module

    session, _server, url = big_host
    under_lock: list[bool] = []
    real = serve_module.frame_to_dict

    def watched(frame):
        under_lock.append(session._lock._is_owned())  # private: only this test peeks
        return real(frame)

    monkeypatch.setattr(serve_module, "frame_to_dict", watched)
    assert get(url + "/frames?since=-1", timeout=60)[0] == 200
    assert under_lock and not any(under_lock), \
        f"{sum(under_lock)} of {len(under_lock)} frames encoded holding the session's lock"


def test_a_frames_answer_is_capped_and_remote_still_reads_every_frame(big_host):
    from gputop.remote import RemoteFeed

    _session, _server, url = big_host
    body = get(url + "/frames?since=-1", timeout=60)[2]
    lines = body.splitlines()
    assert 1 <= len(lines) < 40
    assert len(body) <= ANSWER_BYTES + max(len(line) + 1 for line in lines)
    feed = RemoteFeed(url, interval_s=0.1)
    seqs: list[int] = []
    for _ in range(40):
        seqs += [f.seq for f in feed.fetch()]
        if len(seqs) >= 40:
            break
    assert seqs == list(range(40))
    assert [frame_from_dict(json.loads(line)).seq for line in lines] == seqs[:len(lines)]


# ---------------------------------------------------------------- SIGTERM while waiting

WIDEN = """
import os, sys, threading, time
real_wait = threading.Event.wait

def widened(self, timeout=None):
    # the sampler's stop Event, waited on by the main thread between ticks, holds its lock
    # for a while before waiting, and a SIGTERM lands inside: the window the issue-18 hang
    # needs, made wide enough to hit
    caller = sys._getframe(1).f_locals.get("self")
    if threading.current_thread() is threading.main_thread() and timeout \
            and type(caller).__name__ == "Sampler" and self is caller._stop:
        with self._cond:
            open(sys.argv[1], "a").close()
            time.sleep(1.0)
    return real_wait(self, timeout)

threading.Event.wait = widened
from gputop.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("command", ["serve", "record"])
def test_sigterm_while_the_main_thread_holds_the_samplers_event_lock(tmp_path, command):
    marker = tmp_path / "in-window"
    recording = tmp_path / "r.gtrec"
    args = (["serve", "--demo", "serving", "-d", "0.2", "--listen", "127.0.0.1:0", "--record",
             str(recording)] if command == "serve"
            else ["--demo", "serving", "-d", "0.2", "record", str(recording)])
    proc = subprocess.Popen([sys.executable, "-c", WIDEN, str(marker), *args], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the sampler never waited"
        time.sleep(0.3)  # inside the window: the lock is held for another ~0.7 s
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in proc.stderr.read()


def test_the_promised_bounds_are_the_codes():
    from gputop import bounded_http, serve, webconfig

    assert (bounded_http.REQUEST_S, bounded_http.MAX_CONNECTIONS) == (REQUEST_S, MAX_CONNECTIONS)
    assert (webconfig.BCRYPT_SHARE, webconfig.BCRYPT_BURST_S) == (BCRYPT_SHARE, BCRYPT_BURST_S)
    assert serve.ANSWER_BYTES == ANSWER_BYTES
