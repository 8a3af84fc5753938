"""``gputop serve``: the session's view over HTTP, for Prometheus and for other gputops.

- ``/metrics``: Prometheus text (OpenMetrics when the scraper asks for it), written by
  prometheus_client from ``export/prometheus.py``'s collector over the last derived view.
- ``/snapshot.json``: the ``snapshot --json`` contract for the newest tick.
- ``/frames?since=SEQ``: raw frames newer than SEQ as JSON lines (the schema codec), at
  most ``FRAMES_PER_ANSWER`` frames and ``ANSWER_BYTES`` at a time (always at least one
  frame), so another gputop can show this host (``--remote``).  Each frame is encoded once,
  outside the session's lock: readers never stall the sampler.  ``X-Gputop-Instance``
  names this run of the server and ``X-Gputop-Newest`` its newest frame, so a client sees
  a restart (the sequence starting again at 0).
- ``/healthz``: 200 "ok" while ticks are fresh, 503 otherwise.

Safe by default: it binds 127.0.0.1 unless told otherwise; ``--web-config FILE`` (the
Prometheus exporter web-config format, ``webconfig.py``) adds TLS, client certificates
and basic auth with bcrypt hashes, and a request without the right credentials gets 401
and nothing else.  GET and HEAD only.  Connections are bounded (``bounded_http.py``).
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import ssl
import threading
import time
import urllib.parse
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from gputop.bounded_http import BoundedHTTPServer
from gputop.config import DEFAULT_LISTEN
from gputop.cursor import LiveCursor
from gputop.export.prometheus import Exporter
from gputop.export.snapshot import snapshot_dict
from gputop.schema import frame_to_dict
from gputop.session import Session
from gputop.webconfig import WebConfig, WebConfigError

FRAMES_PER_ANSWER = 600
ANSWER_BYTES = 4 * 2**20  # a /frames answer stops growing here (at least one frame)
ENCODED_FRAMES_BYTES = 16 * 2**20  # encoded frames kept for the next reader
STALE_AFTER_INTERVALS = 10  # /healthz says 503 when the newest frame is older than this

ServeError = WebConfigError  # a listen address or web config that cannot be used

__all__ = ["Server", "ServeError", "WebConfig", "parse_listen", "exposed"]


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[v6]:PORT`` or ``:PORT`` (all addresses) -> (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ServeError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9464")
    host = host.strip("[]")
    return (host or "0.0.0.0"), int(port)


def exposed(host: str) -> bool:
    """Whether a listen host can be reached from other machines (anything but loopback;
    a name is not resolved: it may well be the machine's public one)."""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return True


class Server:
    """The HTTP server over a running session; ``start`` serves on a daemon thread."""

    def __init__(self, session: Session, listen: str = DEFAULT_LISTEN,
                 web_config: WebConfig | None = None, export_processes: bool = False,
                 interval_s: float = 1.0, export_tenants: bool = False,
                 max_connections: int | None = None):
        self.session = session
        self.cursor = LiveCursor(session)  # /frames reads after a position, never holding on
        self.interval_s = interval_s
        self.web_config = web_config or WebConfig()
        self.exporter = Exporter(export_processes=export_processes, export_tenants=export_tenants)
        self.instance = os.urandom(8).hex()  # this run: a client sees a restart by it
        self._cache: dict[tuple, bytes] = {}
        self._cache_lock = threading.Lock()
        self._encoded: OrderedDict[int, bytes] = OrderedDict()  # seq -> its JSON line
        self._encoded_bytes = 0
        session.subscribe_views(self.exporter.on_view)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.exporter)
        self.host, port = parse_listen(listen)
        server = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "gputop"
            sys_version = ""

            def do_GET(self):  # http.server's naming
                server.handle(self)

            def do_HEAD(self):  # http.server's naming
                server.handle(self, head=True)

            def log_message(self, *args):
                pass

        context = self.web_config.ssl_context()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            self.httpd = BoundedHTTPServer((self.host, port), Handler, context,
                                           max_connections, family)
        except OSError as exc:
            raise ServeError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="gputop-serve",
                                        daemon=True)

    def warnings(self) -> list[str]:
        """What the user should know about where this server can be read from."""
        if not exposed(self.host):
            return []
        missing = [what for what, there in (("basic auth", self.web_config.users),
                                             ("TLS", self.web_config.tls)) if not there]
        if not missing:
            return []
        who = ("anyone who can reach it reads every metric, process and frame"
               if not self.web_config.users else "passwords and metrics cross the network "
               "in clear text")
        return [f"warning: listening on {self.host}:{self.port}, beyond this machine, without "
                f"{' or '.join(missing)}: {who} (--web-config FILE; --listen 127.0.0.1:PORT "
                "keeps it local)"]

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------ requests

    def handle(self, request: BaseHTTPRequestHandler, head: bool = False) -> None:
        self.httpd.answering(request.connection)
        status = self.web_config.check(request.headers.get("Authorization"))
        if status == 401:
            self._send(request, 401, b"unauthorized\n", "text/plain",
                       {"WWW-Authenticate": 'Basic realm="gputop"'}, head=head)
            return
        if status == 429:
            self._send(request, 429, b"too many password checks: retry in a second\n",
                       "text/plain", {"Retry-After": "1"}, head=head)
            return
        url = urllib.parse.urlsplit(request.path)
        if url.path == "/metrics":
            encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
            self._send(request, 200, self._metrics_body(encoder, content_type), content_type,
                       head=head)
        elif url.path == "/snapshot.json":
            body = self._snapshot_body()
            if body is None:
                self._send(request, 503, b'{"error": "no tick yet"}\n', "application/json",
                           head=head)
                return
            self._send(request, 200, body, "application/json", head=head)
        elif url.path == "/frames":
            self._frames(request, urllib.parse.parse_qs(url.query), head)
        elif url.path == "/healthz":
            fresh = self._fresh()
            self._send(request, 200 if fresh else 503, b"ok\n" if fresh else b"stale\n",
                       "text/plain", head=head)
        else:
            self._send(request, 404, b"not found: /metrics /snapshot.json /frames /healthz\n",
                       "text/plain", head=head)

    def _cached(self, kind: str, build) -> bytes | None:
        """``build(view)`` for the newest view, made once per view and kind: the view
        changes once a tick, so a scrape storm costs copies, not re-encoding (4 scrapers
        on 8 GPUs: p99 14 ms re-encoding each scrape on 2 cores, see bench/serve.py)."""
        view = self.exporter.view
        if view is None:
            return None
        key = (id(view), view.frame.seq, kind)
        with self._cache_lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        body = build(view)
        with self._cache_lock:
            self._cache = {k: v for k, v in self._cache.items() if k[:2] == key[:2]}
            self._cache[key] = body
        return body

    def _metrics_body(self, encoder, content_type: str) -> bytes:
        body = self._cached(content_type, lambda view: encoder(self.registry))
        return body if body is not None else encoder(self.registry)

    def _snapshot_body(self) -> bytes | None:
        return self._cached("snapshot", lambda view: json.dumps(
            snapshot_dict(view, self.session.label)).encode() + b"\n")

    def _fresh(self) -> bool:
        view = self.exporter.view
        if view is None:
            return False
        age = time.time() - view.frame.time_wall_s
        return age < STALE_AFTER_INTERVALS * self.interval_s + 5

    def _frames(self, request, query: dict, head: bool) -> None:
        try:
            since = int(query.get("since", ["-1"])[0])
        except ValueError:
            self._send(request, 400, b"since must be a frame number\n", "text/plain", head=head)
            return
        # the references only, under the session's lock; encoding happens after, without it
        chosen, newest = self.cursor.frames_after(since, FRAMES_PER_ANSWER)
        lines, size = [], 0
        for frame in chosen:
            line = self._encoded_frame(frame)
            if lines and size + len(line) > ANSWER_BYTES:
                break
            lines.append(line)
            size += len(line)
        self._send(request, 200, b"".join(lines), "application/x-ndjson",
                   {"X-Gputop-Source": self.session.label, "X-Gputop-Instance": self.instance,
                    "X-Gputop-Newest": str(newest)}, head=head)

    def _encoded_frame(self, frame) -> bytes:
        """A frame's JSON line, encoded once for every reader (kept while it is recent)."""
        with self._cache_lock:
            line = self._encoded.get(frame.seq)
        if line is not None:
            return line
        line = json.dumps(frame_to_dict(frame), separators=(",", ":")).encode() + b"\n"
        with self._cache_lock:
            if frame.seq not in self._encoded:
                self._encoded[frame.seq] = line
                self._encoded_bytes += len(line)
                while self._encoded_bytes > ENCODED_FRAMES_BYTES and len(self._encoded) > 1:
                    _, old = self._encoded.popitem(last=False)
                    self._encoded_bytes -= len(old)
        return line

    def _send(self, request, status: int, body: bytes, content_type: str,
              headers: dict[str, str] | None = None, head: bool = False) -> None:
        try:
            request.send_response(status)
            request.send_header("Content-Type", content_type)
            request.send_header("Content-Length", str(len(body)))
            for name, value in {**self.web_config.headers, **(headers or {})}.items():
                request.send_header(name, value)
            request.end_headers()
            if not head:
                request.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError, OSError):
            pass
