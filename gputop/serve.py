"""``gputop serve``: the session's view over HTTP, for Prometheus and for other gputops.

- ``/metrics``: Prometheus text (OpenMetrics when the scraper asks for it), written by
  prometheus_client from ``export/prometheus.py``'s collector over the last derived view.
- ``/snapshot.json``: the ``snapshot --json`` contract for the newest tick.
- ``/frames?since=SEQ``: raw frames newer than SEQ as JSON lines (the schema codec), at
  most ``FRAMES_PER_ANSWER`` at a time, so another gputop can show this host (``--remote``).
- ``/healthz``: 200 "ok" while ticks are fresh, 503 otherwise.

Safe by default: it binds 127.0.0.1 unless told otherwise; ``--web-config FILE`` (the
Prometheus exporter web-config format) adds TLS and basic auth with bcrypt hashes, and a
request without the right credentials gets 401 and nothing else.  Only GET.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from gputop.config import DEFAULT_LISTEN
from gputop.export.prometheus import Exporter
from gputop.model.derive import snapshot_dict
from gputop.safefile import read_regular
from gputop.schema import frame_to_dict
from gputop.session import Session

FRAMES_PER_ANSWER = 600
STALE_AFTER_INTERVALS = 10  # /healthz says 503 when the newest frame is older than this
MAX_CONFIG_BYTES = 1 << 20


class ServeError(ValueError):
    """A listen address or web config that cannot be used: one line for the user."""


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[v6]:PORT`` or ``:PORT`` (all addresses) -> (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ServeError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:9464")
    host = host.strip("[]")
    return (host or "0.0.0.0"), int(port)


@dataclass
class WebConfig:
    """The exporter web-config file: ``tls_server_config`` (cert_file, key_file) and
    ``basic_auth_users`` (user: bcrypt hash)."""

    cert_file: str | None = None
    key_file: str | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    _verified: dict[tuple[str, bytes], bool] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def load(cls, path: str) -> "WebConfig":
        import yaml

        try:
            data = yaml.safe_load(read_regular(path, MAX_CONFIG_BYTES)) or {}
        except OSError as exc:
            raise ServeError(f"--web-config {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise ServeError(f"--web-config {path} is not YAML{where}") from None
        if not isinstance(data, dict):
            raise ServeError(f"--web-config {path}: expected a mapping at the top")
        unknown = set(data) - {"tls_server_config", "basic_auth_users", "http_server_config"}
        if unknown:
            raise ServeError(f"--web-config {path}: unknown key {sorted(unknown)[0]!r}")
        tls = data.get("tls_server_config") or {}
        users = data.get("basic_auth_users") or {}
        if not isinstance(tls, dict) or not isinstance(users, dict):
            raise ServeError(f"--web-config {path}: tls_server_config and basic_auth_users "
                             "are mappings")
        config = cls(cert_file=tls.get("cert_file"), key_file=tls.get("key_file"))
        if bool(config.cert_file) != bool(config.key_file):
            raise ServeError(f"--web-config {path}: tls_server_config needs both cert_file "
                             "and key_file")
        for user, hashed in users.items():
            if not isinstance(hashed, str) or not hashed.startswith(("$2a$", "$2b$", "$2y$")):
                raise ServeError(f"--web-config {path}: the password of {user!r} is not a "
                                 "bcrypt hash")
            config.users[str(user)] = hashed.encode()
        return config

    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.cert_file:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            raise ServeError(f"--web-config: cannot load the TLS certificate or key: {exc}") from None
        return context

    def allows(self, header: str | None) -> bool:
        """Whether an Authorization header carries a user's password (always, without users).
        bcrypt is slow by design; a verified pair is remembered by its SHA-256, so a scrape
        every few seconds does not spend a core on hashing."""
        if not self.users:
            return True
        if not header or not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        hashed = self.users.get(user)
        if hashed is None:
            return False
        key = (user, hashlib.sha256(password.encode()).digest())
        with self._lock:
            known = self._verified.get(key)
        if known is None:
            import bcrypt

            try:
                known = bcrypt.checkpw(password.encode(), hashed)
            except ValueError:
                known = False
            with self._lock:
                if len(self._verified) > 1024:
                    self._verified.clear()
                self._verified[key] = known
        return known


class Server:
    """The HTTP server over a running session; ``start`` serves on a daemon thread."""

    def __init__(self, session: Session, listen: str = DEFAULT_LISTEN,
                 web_config: WebConfig | None = None, export_processes: bool = False,
                 interval_s: float = 1.0, export_tenants: bool = False):
        self.session = session
        self.interval_s = interval_s
        self.web_config = web_config or WebConfig()
        self.exporter = Exporter(export_processes=export_processes, export_tenants=export_tenants)
        self._cache: dict[tuple, bytes] = {}
        self._cache_lock = threading.Lock()
        session.subscribe_views(self.exporter.on_view)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.exporter)
        host, port = parse_listen(listen)
        server = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "gputop"
            sys_version = ""

            def do_GET(self):  # noqa: N802 (http.server's naming)
                server.handle(self)

            def log_message(self, *args):
                pass

        class HTTPServer(ThreadingHTTPServer):
            daemon_threads = True
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        try:
            self.httpd = HTTPServer((host, port), Handler)
        except OSError as exc:
            raise ServeError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
        context = self.web_config.ssl_context()
        if context is not None:
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="gputop-serve",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------ requests

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        if not self.web_config.allows(request.headers.get("Authorization")):
            self._send(request, 401, b"unauthorized\n", "text/plain",
                       {"WWW-Authenticate": 'Basic realm="gputop"'})
            return
        url = urllib.parse.urlsplit(request.path)
        if url.path == "/metrics":
            encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
            self._send(request, 200, self._metrics_body(encoder, content_type), content_type)
        elif url.path == "/snapshot.json":
            view = self.exporter.view
            if view is None:
                self._send(request, 503, b'{"error": "no tick yet"}\n', "application/json")
                return
            body = json.dumps(snapshot_dict(view, self.session.label)).encode() + b"\n"
            self._send(request, 200, body, "application/json")
        elif url.path == "/frames":
            self._frames(request, urllib.parse.parse_qs(url.query))
        elif url.path == "/healthz":
            fresh = self._fresh()
            self._send(request, 200 if fresh else 503, b"ok\n" if fresh else b"stale\n",
                       "text/plain")
        else:
            self._send(request, 404, b"not found: /metrics /snapshot.json /frames /healthz\n",
                       "text/plain")

    def _metrics_body(self, encoder, content_type: str) -> bytes:
        """The exposition of the newest view, encoded once per view and format: the view
        changes once a tick, so a scrape storm costs copies, not re-encoding (4 scrapers on
        8 GPUs: p99 14 ms re-encoding each scrape on 2 cores, see bench/serve.py)."""
        view = self.exporter.view
        key = (id(view), view.frame.seq if view is not None else None, content_type)
        with self._cache_lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        body = encoder(self.registry)
        with self._cache_lock:
            self._cache = {k: v for k, v in self._cache.items() if k[:2] == key[:2]}
            self._cache[key] = body
        return body

    def _fresh(self) -> bool:
        view = self.exporter.view
        if view is None:
            return False
        age = time.time() - view.frame.time_wall_s
        return age < STALE_AFTER_INTERVALS * self.interval_s + 5

    def _frames(self, request, query: dict) -> None:
        try:
            since = int(query.get("since", ["-1"])[0])
        except ValueError:
            self._send(request, 400, b"since must be a frame number\n", "text/plain")
            return
        lines = []
        with self.session.lock:
            timeline = self.session.timeline
            start = timeline.index_of_seq(since) if len(timeline) else 0
            for index in range(start, len(timeline)):
                frame = timeline.frame(index)
                if frame.seq > since:
                    lines.append(json.dumps(frame_to_dict(frame), separators=(",", ":")))
                    if len(lines) >= FRAMES_PER_ANSWER:
                        break
        body = ("\n".join(lines) + "\n").encode() if lines else b""
        self._send(request, 200, body, "application/x-ndjson",
                   {"X-Gputop-Source": self.session.label})

    @staticmethod
    def _send(request, status: int, body: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        try:
            request.send_response(status)
            request.send_header("Content-Type", content_type)
            request.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass
