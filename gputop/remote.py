"""``--remote URL``: another host's frames, from its ``gputop serve`` ``/frames`` stream.

The remote gputop samples its own GPUs and engines; this feed asks it once per interval
for the frames after the newest one it has (``/frames?since=SEQ``) and hands each to the
local session, which derives, shows and records them as if they were local: the same
panes, keys and recording, from a laptop without SSH.  It plays the part of a sampler in
a session (``open``/``start``/``run``/``stop``/``close``).

The remote is a peer that may be broken or hostile: an answer is capped in bytes, each
frame in bytes and in GPUs and processes (``schema.MAX_*``).  When the remote serve
restarts (its ``X-Gputop-Instance`` changes, or its newest frame is older than ours)
the feed follows the new run, renumbering its frames after the ones already shown; an
answer without new frames for long is said in ``error`` rather than shown as live.

Credentials: ``user:password@`` in the URL (visible in ``ps``), or, better,
``GPUTOP_AUTH=user:password`` or ``GPUTOP_AUTH_FILE=FILE`` (one line ``user:password``, a
file only its owner can read); sent as basic auth, never shown or put in a request line.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import stat
import threading
import time
import urllib.parse
from collections.abc import Callable

from gputop.safefile import UnsafeFile, read_regular
from gputop.schema import MAX_FRAME_BYTES, Frame, SchemaError, frame_from_dict
from gputop.sources import prom
from gputop.sources.base import SourceError

# serve's answers stop at 4 MiB, or one frame of at most MAX_FRAME_BYTES
MAX_ANSWER_BYTES = MAX_FRAME_BYTES + 4 * 2**20
TIMEOUT_S = 5.0
STALL_INTERVALS = 10  # answers without a new frame for this many intervals: said so
STALL_MIN_S = 10.0


class AuthError(ValueError):
    """GPUTOP_AUTH / GPUTOP_AUTH_FILE that cannot be used: one line for the user."""


def auth_from_environment(environ=os.environ) -> dict[str, str]:
    """The basic-auth header from ``GPUTOP_AUTH`` or ``GPUTOP_AUTH_FILE`` ({} if neither)."""
    text = environ.get("GPUTOP_AUTH")
    path = environ.get("GPUTOP_AUTH_FILE")
    if not text and path:
        try:
            fd_stat = os.stat(path)
            if fd_stat.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise AuthError(f"GPUTOP_AUTH_FILE {path} can be read by others: "
                                "chmod 600 it")
            text = read_regular(path, 4096).decode("utf-8").strip()
        except (UnsafeFile, OSError, UnicodeDecodeError) as exc:
            raise AuthError(f"GPUTOP_AUTH_FILE {path}: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
    if not text:
        return {}
    if ":" not in text:
        raise AuthError("GPUTOP_AUTH / GPUTOP_AUTH_FILE: expected user:password")
    return {"Authorization": "Basic " + base64.b64encode(text.encode()).decode()}


PROBE_TIMEOUT_S = 3.0
SERVE_EXAMPLE = "http://HOST:9464"
# what a user may paste: the address 'gputop serve' prints ends in /metrics
SERVE_PATHS = ("/metrics", "/frames", "/snapshot.json", "/healthz")
FRAMES_TYPE = "application/x-ndjson"


def base_serve_url(text: str, example: str = SERVE_EXAMPLE) -> str:
    """The base URL of a ``gputop serve`` from what a user typed: ``host:port`` gets
    http://, one of serve's own pages (the ``.../metrics`` it prints) is cut off; anything
    else that is not an http(s) URL is a ValueError naming the right example."""
    return pasted_base_url(text, example, SERVE_PATHS)


def pasted_base_url(text: str, example: str, pages: tuple[str, ...]) -> str:
    """``text`` as a base URL: http:// added to a bare ``host:port``, a trailing one of
    ``pages`` (what a browser's address bar holds) cut off, the rest of the path kept (a
    reverse proxy's prefix)."""
    text = text.strip()
    if "://" not in text and text and not text.startswith("/"):
        text = "http://" + text
    prom.check_url(text, example)
    parts = urllib.parse.urlsplit(text)
    path = parts.path.rstrip("/")
    for page in pages:
        if path.endswith(page):
            path = path[: -len(page)]
            break
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


HINTS = {  # (what it should be, what to give instead, who listens there)
    "serve": ("a gputop serve", f"the address 'gputop serve' prints, without /metrics (e.g. "
              f"{SERVE_EXAMPLE})", "is 'gputop serve' running there? it listens on "
              "127.0.0.1:9464 unless --listen says otherwise"),
    "prometheus": ("a Prometheus", "its base URL (e.g. http://HOST:9090); for gputop serve "
                   "endpoints use 'gputop fleet URL...' without --prometheus",
                   "is Prometheus running there?"),
}


def explain(exc: SourceError, base: str, page: str, kind: str = "serve") -> str:
    """A fetch failure in words that say what to do: the right address, credentials, or
    whether anything listens there at all."""
    what, instead, listening = HINTS[kind]
    status = getattr(exc, "status", None)
    if status == 404:
        return f"{base} is not {what} (HTTP 404 for {page}): give {instead}"
    if status == 401:
        return (f"{base} refused the credentials (HTTP 401): give them in GPUTOP_AUTH="
                "user:password or GPUTOP_AUTH_FILE=FILE (or user:password@ in the URL)")
    text = str(exc)
    if "Connection refused" in text:
        return f"cannot reach {base}: connection refused ({listening})"
    return text


def serve_url(url: str) -> tuple[urllib.parse.SplitResult, dict[str, str]]:
    """A ``gputop serve`` URL without its credentials, and the headers carrying them
    (from the URL, else from GPUTOP_AUTH / GPUTOP_AUTH_FILE; sent as basic auth, never
    shown or put in a request line)."""
    prom.check_url(url, SERVE_EXAMPLE)
    bare, headers = prom.split_credentials(url)
    return urllib.parse.urlsplit(bare), headers or auth_from_environment()


def frames_url(url: str) -> tuple[str, dict[str, str]]:
    """(the /frames URL without credentials, headers carrying them) for a serve URL."""
    parts, headers = serve_url(base_serve_url(url))
    path = parts.path.rstrip("/") + "/frames"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", "")), headers


def parse_frames(text: str, url: str = "the remote") -> list[Frame]:
    """The frames of a /frames answer (JSON lines); SourceError naming the first that
    cannot be read: too large, not JSON, or not a frame within the schema's caps."""
    frames = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if len(line) > MAX_FRAME_BYTES:
            raise SourceError(f"{url} sent a frame over {MAX_FRAME_BYTES // 2**20} MiB")
        try:
            frames.append(frame_from_dict(json.loads(line)))
        except (ValueError, SchemaError, RecursionError, TypeError) as exc:
            raise SourceError(f"{url} sent a frame that cannot be read "
                              f"({str(exc)[:120]})") from None
    return frames


class RemoteFeed:
    """Frames from a remote ``gputop serve`` (a ``FrameFeed``, ``gputop/feed.py``);
    ``error`` says why none are coming."""

    def __init__(self, url: str, interval_s: float = 1.0, timeout_s: float = TIMEOUT_S):
        self.url, self._headers = frames_url(url)  # AuthError: a ValueError, one line
        self.base = self.url.removesuffix("/frames")
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.error: str | None = None
        self.last_seq = -1  # the newest frame handed on, in this feed's numbering
        self.restarts = 0  # how often the remote serve was seen to start again
        self._remote_seq = -1  # the newest frame asked for, in the remote's numbering
        self._instance: str | None = None
        self._seq_offset = 0  # remote seq + offset = the seq handed on
        self._mono_offset = 0.0
        self._last_mono = float("-inf")
        self._new_at = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> None:
        pass

    def probe(self) -> None:
        """Ask once, at once: a host that refuses, a 404 or a server that is not a gputop
        serve is an error now (SourceError, with what to do), not after 15 s of retries;
        only what can pass (a timeout, a 5xx) is left to the retries."""
        try:
            self._get(f"{self.url}?since={2**62}", min(self.timeout_s, PROBE_TIMEOUT_S))
        except prom.FetchError as exc:
            if not exc.transient:
                raise SourceError(explain(exc, self.base, "/frames")) from None
            self.error = str(exc)

    def _get(self, url: str, timeout_s: float) -> prom.Fetched:
        answer = prom.fetch(url, timeout_s, MAX_ANSWER_BYTES, accept=FRAMES_TYPE,
                            headers=self._headers)
        if not answer.content_type.startswith(FRAMES_TYPE):
            raise prom.FetchError(f"{self.base} is not a gputop serve (its /frames answered "
                                  f"{answer.content_type or 'no content type'}, not frames); "
                                  f"give the address 'gputop serve' prints (e.g. "
                                  f"{SERVE_EXAMPLE})", transient=False)
        return answer

    def fetch(self) -> list[Frame]:
        """The frames after the newest one seen (raising SourceError when the host cannot say)."""
        answer = self._get(f"{self.url}?since={self._remote_seq}", self.timeout_s)
        if self._restarted(answer.headers):
            answer = self._get(f"{self.url}?since=-1", self.timeout_s)
        frames = []
        for frame in parse_frames(answer.text, self.url):
            if frame.seq <= self._remote_seq:
                continue
            self._remote_seq = frame.seq
            frames.append(self._renumbered(frame))
        if frames:
            self._new_at = time.monotonic()
        return frames

    def _restarted(self, headers: dict[str, str]) -> bool:
        """Whether the remote serve started again since the last answer (a new instance,
        or its newest frame is older than the one we asked after); if so, the next frames
        are numbered after ours."""
        instance = headers.get("x-gputop-instance") or None
        try:
            newest = int(headers.get("x-gputop-newest", ""))
        except ValueError:
            newest = None
        known = self._instance
        self._instance = instance or known
        new_run = (known is not None and instance is not None and instance != known) or \
            (newest is not None and 0 <= newest < self._remote_seq)
        if not new_run:
            return False
        self.restarts += 1
        self._remote_seq = -1
        self._seq_offset = self.last_seq + 1
        return True

    def _renumbered(self, frame: Frame) -> Frame:
        """The frame in this feed's numbering: sequence numbers and monotonic times only
        ever grow, across remote restarts (and reboots) too."""
        seq = frame.seq + self._seq_offset
        mono = frame.time_mono_s + self._mono_offset
        if mono < self._last_mono:  # the remote's clock started again (a reboot)
            self._mono_offset += self._last_mono - mono + self.interval_s
            mono = frame.time_mono_s + self._mono_offset
        self._last_mono, self.last_seq = mono, seq
        if seq == frame.seq and mono == frame.time_mono_s:
            return frame
        return dataclasses.replace(frame, seq=seq, time_mono_s=mono)

    def _stalled(self) -> str | None:
        quiet = time.monotonic() - self._new_at
        if quiet < max(STALL_MIN_S, STALL_INTERVALS * self.interval_s):
            return None
        return f"{self.url} answers but has sent no new frame for {quiet:.0f}s"

    def run(self, on_frame: Callable[[Frame], None], max_frames: int | None = None) -> None:
        produced = 0
        began = time.monotonic()
        self._new_at = began
        # a reader of a few frames (snapshot) stops waiting for a host that never answers;
        # a dashboard or a recording keeps asking
        give_up_s = 3 * self.timeout_s if max_frames is not None else None
        while not self._stop.is_set():
            started = time.monotonic()
            if self.error and not produced and give_up_s is not None \
                    and started - began > give_up_s:
                raise SourceError(self.error)
            try:
                for frame in self.fetch():
                    on_frame(frame)
                    produced += 1
                    if max_frames is not None and produced >= max_frames:
                        return
                self.error = self._stalled()
            except prom.FetchError as exc:
                self.error = explain(exc, self.base, "/frames")
                if give_up_s is not None and not exc.transient and not produced:
                    raise SourceError(self.error) from None  # asking again will not help
            except SourceError as exc:
                self.error = str(exc)
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def start(self, on_frame: Callable[[Frame], None]) -> None:
        self._thread = threading.Thread(target=self.run, args=(on_frame,), name="gputop-remote",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self.stop()

