"""`--remote` and `fleet` against real servers on 127.0.0.1: what cannot get better fails
at once with what to do (a closed port, a 404, something that is not a gputop serve), what
can (a 5xx, a timeout) is retried, and the addresses users paste are understood."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gputop import fleet
from gputop.remote import RemoteFeed, base_serve_url
from gputop.sources.base import SourceError
from tests.http_server import Response, ScriptedServer
from tests.test_serve import serve  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parent.parent


def gputop(*args: str, timeout: float = 60):
    return subprocess.run([sys.executable, "-m", "gputop", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the socket is


def one_line(result) -> str:
    assert result.returncode == 2 and result.stdout == "", result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def test_a_closed_port_fails_at_once_and_says_what_listens_there():
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(SourceError) as refused:
        RemoteFeed(url).probe()
    assert time.monotonic() - started < 1.0  # one refused connect, no retries (was 15 s)
    assert "connection refused" in str(refused.value)
    assert "gputop serve" in str(refused.value) and "9464" in str(refused.value)
    line = one_line(gputop("snapshot", "--remote", url))
    assert line.startswith(f"gputop: --remote: cannot reach {url}: connection refused")


def test_a_404_is_not_retried_and_names_the_address_to_give():
    with ScriptedServer([Response("not found", status=404)]) as server:
        base = server.url.removesuffix("/metrics")
        line = one_line(gputop("snapshot", "--remote", base))
        assert f"{base} is not a gputop serve (HTTP 404 for /frames)" in line
        assert "without /metrics (e.g. http://HOST:9464)" in line
        assert server.requests == 1  # asked once


def test_something_that_answers_but_is_not_a_gputop_serve_says_so():
    with ScriptedServer([Response("# a metrics page\nup 1\n")]) as server:
        base = server.url.removesuffix("/metrics")
        line = one_line(gputop("snapshot", "--remote", base))
        assert "is not a gputop serve (its /frames answered text/plain" in line
        assert server.requests == 1


def test_a_5xx_is_retried_until_the_reader_gives_up():
    with ScriptedServer([Response("busy", status=503)]) as server:
        feed = RemoteFeed(server.url.removesuffix("/metrics"), interval_s=0.1, timeout_s=0.3)
        feed.probe()  # may pass: no error raised
        assert "HTTP 503" in feed.error
        with pytest.raises(SourceError, match="HTTP 503"):
            feed.run(lambda frame: None, max_frames=1)
        assert server.requests >= 3  # the probe, then retries


def test_pasted_addresses_are_understood():
    assert base_serve_url("127.0.0.1:9464") == "http://127.0.0.1:9464"
    assert base_serve_url("http://127.0.0.1:9464/metrics") == "http://127.0.0.1:9464"
    assert base_serve_url("https://h:1/gpus/snapshot.json") == "https://h:1/gpus"
    assert fleet.base_prometheus_url("prom:9090/graph") == "http://prom:9090"
    with pytest.raises(ValueError, match=r"e\.g\. http://HOST:9464"):
        base_serve_url("ftp://host/")
    line = one_line(gputop("snapshot", "--remote", "ftp://host/"))
    assert "(e.g. http://HOST:9464)" in line  # the serve example, not an engine's


def test_the_address_serve_prints_works_as_pasted(serve):
    s = serve("--demo", "serving", "-d", "0.2")
    port = s.url.rsplit(":", 1)[1]
    for given in (f"{s.url}/metrics", f"127.0.0.1:{port}"):
        done = gputop("snapshot", "--json", "--remote", given)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["gpus"]


def test_fleet_rows_say_what_to_fix(serve):
    with ScriptedServer([Response("not found", status=404)]) as server:
        base = server.url.removesuffix("/metrics")
        [row] = fleet.ask_serve(base, timeout_s=2.0)
        assert row.error.startswith(f"{base} is not a gputop serve (HTTP 404 for /snapshot.json)")
    s = serve("--demo", "serving", "-d", "0.2")
    [row] = fleet.ask_prometheus(s.url, timeout_s=2.0)  # a serve given as the Prometheus
    assert f"{s.url} is not a Prometheus (HTTP 404 for /api/v1/query)" in row.error
    assert "gputop fleet URL" in row.error
    [row] = fleet.ask_serve(f"http://127.0.0.1:{closed_port()}", timeout_s=2.0)
    assert "connection refused (is 'gputop serve' running there?" in row.error
