"""A real HTTP server on 127.0.0.1 serving a scripted sequence of responses."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Response:
    body: bytes | str = b""
    status: int = 200
    content_type: str = "text/plain; version=0.0.4"
    delay_s: float = 0.0


class ScriptedServer:
    """Each GET to /metrics takes the next response; the last one repeats."""

    def __init__(self, responses: list[Response]):
        self.responses = list(responses)
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # http.server's naming
                response = server.next()
                if response.delay_s:
                    time.sleep(response.delay_s)
                body = response.body.encode() if isinstance(response.body, str) else response.body
                try:
                    self.send_response(response.status)
                    self.send_header("Content-Type", response.content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def next(self) -> Response:
        index = min(self.requests, len(self.responses) - 1)
        self.requests += 1
        return self.responses[index]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/metrics"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
