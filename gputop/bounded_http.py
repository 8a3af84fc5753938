"""An HTTP server that one hostile client cannot freeze, fill with threads or spin.

``http.server``'s ThreadingHTTPServer, as ``gputop serve`` used it, let any local user
stop the exporter: a TLS handshake ran inside ``accept()`` on the serving thread with
no timeout (one idle TCP connection froze every scrape), a connection that never sent
its request kept its thread forever (300 of them: 303 threads), and once the process
ran out of descriptors ``accept`` failed with EMFILE in a busy loop while the sampler's
own reads failed.  Here:

- the handshake runs on the connection's own thread, after ``accept``;
- each connection has one deadline for its handshake and request (``REQUEST_S``) and
  one for its answer (``ANSWER_S``), enforced by a reaper that shuts the socket: a
  client that drips a byte a second cannot stretch it as a per-read timeout would;
- at most ``max_connections`` are served at once (a share of the descriptor limit);
  beyond it a connection is closed at once, without a thread;
- when ``accept`` fails for lack of descriptors, a spare descriptor is given up to
  accept and close the waiting connection, so the listening socket stops being ready
  and the loop sleeps instead of spinning.
"""

from __future__ import annotations

import errno
import os
import resource
import socket
import ssl
import threading
import time
from http.server import ThreadingHTTPServer

REQUEST_S = 5.0  # handshake and request line + headers
ANSWER_S = 30.0  # writing the answer (a /frames answer to a slow link)
MAX_CONNECTIONS = 64


def connection_cap(limit: int | None = None) -> int:
    """Connections served at once: a quarter of the descriptor limit (the sampler, the
    recording and NVML need the rest), between 2 and MAX_CONNECTIONS."""
    if limit is None:
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if limit == resource.RLIM_INFINITY:
            limit = 1 << 20
    return max(2, min(MAX_CONNECTIONS, limit // 4))


class _Reaper:
    """Shuts down sockets whose deadline passed (one thread for every connection)."""

    def __init__(self) -> None:
        self._deadlines: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gputop-serve-reaper",
                                        daemon=True)
        self._thread.start()

    def watch(self, sock: socket.socket, seconds: float) -> None:
        with self._lock:
            self._deadlines[sock] = time.monotonic() + seconds

    def forget(self, sock: socket.socket) -> None:
        with self._lock:
            self._deadlines.pop(sock, None)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            now = time.monotonic()
            with self._lock:
                late = [s for s, deadline in self._deadlines.items() if deadline <= now]
                for sock in late:
                    del self._deadlines[sock]
            for sock in late:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class BoundedHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, address, handler, context: ssl.SSLContext | None = None,
                 max_connections: int | None = None, family: int = socket.AF_INET):
        self.address_family = family
        self.context = context
        self.max_connections = max_connections or connection_cap()
        self.refused_connections = 0  # closed at once: over the cap or out of descriptors
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self._reaper = _Reaper()
        self._spare: int | None = _reserve()
        super().__init__(address, handler)  # closes the server (server_close) if bind fails

    # ------------------------------------------------------------ accepting

    def get_request(self):
        try:
            return self.socket.accept()
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                self._shed()
            raise  # socketserver drops this one attempt

    def _shed(self) -> None:
        """Out of descriptors: refuse the waiting connection with the spare one, then
        pause, so that a full descriptor table is not a busy loop."""
        self.refused_connections += 1
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
            try:
                conn, _ = self.socket.accept()
                conn.close()
            except OSError:
                pass
            self._spare = _reserve()
        time.sleep(0.05)

    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            self.refused_connections += 1
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def finish_request(self, request, client_address):
        """On the connection's thread: the TLS handshake, then the handler, each under the
        connection's deadline."""
        self._reaper.watch(request, REQUEST_S)
        conn = request
        try:
            request.settimeout(REQUEST_S)
            if self.context is not None:
                # wrapping detaches the plain socket: the reaper must watch the TLS one
                # before the handshake starts, or a dripped ClientHello is not cut
                self._reaper.forget(request)
                try:
                    conn = self.context.wrap_socket(request, server_side=True,
                                                    do_handshake_on_connect=False)
                    self._reaper.watch(conn, REQUEST_S)
                    conn.do_handshake()
                except (OSError, ssl.SSLError, ValueError):
                    return
            self.RequestHandlerClass(conn, client_address, self)
        finally:
            self._reaper.forget(request)
            self._reaper.forget(conn)
            if conn is not request:
                try:
                    conn.close()
                except OSError:
                    pass

    def answering(self, conn: socket.socket) -> None:
        """The request was read: the connection now has ANSWER_S to take its answer."""
        self._reaper.watch(conn, ANSWER_S)
        try:
            conn.settimeout(ANSWER_S)
        except OSError:
            pass

    def handle_error(self, request, client_address):
        """A connection that failed (cut by its deadline, reset, a broken TLS record) ends
        quietly: socketserver's default prints a traceback to stderr for each one."""

    def server_close(self):
        super().server_close()
        self._reaper.stop()
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None


def _reserve() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
