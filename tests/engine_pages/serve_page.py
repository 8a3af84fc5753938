"""A process that serves a metrics page on 127.0.0.1 with the process tree of a real engine.

An engine's replicas are tied to GPUs through its processes (``sources/engine_replicas``),
so a test of that needs real processes: this one listens on the endpoint's port (the API
server) and starts one child per ``--child TITLE``, each titled as the engine titles its
engine cores or schedulers (``exec -a``: argv[0] is the title, as setproctitle makes it)
and each with a worker of its own below it.  It prints one JSON line when ready:
``{"port": P, "children": {TITLE: PID}, "workers": {TITLE: PID}}``.  Everything ends with
the test process (PR_SET_PDEATHSIG) and is bounded in time.

Usage: python -m tests.engine_pages.serve_page --page FILE [--child TITLE]...
       [--model-child MODEL]... [--seconds S]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--page", required=True)
    parser.add_argument("--child", action="append", default=[])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--model-child", action="append", default=[],
                        help="a child whose command line serves this model")
    args = parser.parse_args()
    _die_with_parent()
    body = open(args.page, "rb").read()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # http.server's naming
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    children, workers = {}, {}
    for title in args.child:
        # the worker is forked first, then the shell becomes the titled process: its parent
        child = subprocess.Popen(
            ["bash", "-c", f'sleep {args.seconds:.0f} & exec -a "$0" sleep {args.seconds:.0f}',
             title], preexec_fn=_die_with_parent)
        children[title] = child.pid
    for model in args.model_child:
        child = subprocess.Popen(
            [sys.executable, "-c", f"import time; time.sleep({args.seconds:.0f})",
             "--served-model-name", model], preexec_fn=_die_with_parent)
        children[model] = child.pid
    deadline = time.monotonic() + 10
    for title, pid in children.items():
        while title in args.child and time.monotonic() < deadline:
            try:
                found = [int(p) for p in open(f"/proc/{pid}/task/{pid}/children").read().split()]
                argv0 = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[0].decode()
            except OSError:
                found, argv0 = [], ""
            if found and argv0 == title:
                workers[title] = found[0]
                break
            time.sleep(0.02)
    print(json.dumps({"port": server.server_address[1], "children": children,
                      "workers": workers, "pid": os.getpid()}), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server.timeout = 0.2
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        server.handle_request()


if __name__ == "__main__":
    main()
