"""A recording proxy for /metrics: what gputop was served, kept to compare against.

gputop scrapes the proxy; the proxy fetches the real engine's page, keeps the body and
returns it unchanged.  A test can then check every value gputop read against a full
prometheus_client parse of the very page it was given.
"""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RecordingProxy:
    def __init__(self, upstream: str):
        self.upstream = upstream
        self.bodies: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # http.server's naming
                with urllib.request.urlopen(proxy.upstream, timeout=30) as response:
                    body = response.read()
                proxy.bodies.append(body.decode())
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/metrics"

    def __enter__(self) -> RecordingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
