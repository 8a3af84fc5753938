"""``--remote URL``: another host's frames, from its ``gputop serve`` ``/frames`` stream.

The remote gputop samples its own GPUs and engines; this feed asks it once per interval
for the frames after the newest one it has (``/frames?since=SEQ``) and hands each to the
local session, which derives, shows and records them as if they were local: the same
panes, keys and recording, from a laptop without SSH.  It plays the part of a sampler in
a session (``open``/``start``/``run``/``stop``/``close``).  ``user:password@`` in the URL
is sent as basic auth.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
from collections.abc import Callable

from gputop.schema import Frame, SchemaError, frame_from_dict
from gputop.sources import prom
from gputop.sources.base import SourceError

MAX_ANSWER_BYTES = 64 * 2**20
TIMEOUT_S = 5.0
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
        return f"{base} refused the credentials (HTTP 401): put user:password@ in the URL"
    text = str(exc)
    if "Connection refused" in text:
        return f"cannot reach {base}: connection refused ({listening})"
    return text


def serve_url(url: str) -> tuple[urllib.parse.SplitResult, dict[str, str]]:
    """A ``gputop serve`` URL without its credentials, and the headers carrying them
    (``user:password@`` is sent as basic auth, never shown or put in a request line)."""
    prom.check_url(url, SERVE_EXAMPLE)
    parts = urllib.parse.urlsplit(url)
    headers = {}
    if "@" in parts.netloc:
        userinfo, _, netloc = parts.netloc.rpartition("@")
        user, _, password = userinfo.partition(":")
        token = base64.b64encode(f"{urllib.parse.unquote(user)}:"
                                 f"{urllib.parse.unquote(password)}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        parts = parts._replace(netloc=netloc)
    return parts, headers


def frames_url(url: str) -> tuple[str, dict[str, str]]:
    """(the /frames URL without credentials, headers carrying them) for a serve URL."""
    parts, headers = serve_url(base_serve_url(url))
    path = parts.path.rstrip("/") + "/frames"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", "")), headers


class RemoteFeed:
    """Frames from a remote ``gputop serve``; ``error`` says why none are coming."""

    def __init__(self, url: str, interval_s: float = 1.0, timeout_s: float = TIMEOUT_S):
        self.url, self._headers = frames_url(url)
        self.base = self.url.removesuffix("/frames")
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.error: str | None = None
        self.last_seq = -1
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

    def _get(self, url: str, timeout_s: float) -> str:
        answer = prom.fetch(url, timeout_s, MAX_ANSWER_BYTES, accept=FRAMES_TYPE,
                            headers=self._headers)
        if not answer.content_type.startswith(FRAMES_TYPE):
            raise prom.FetchError(f"{self.base} is not a gputop serve (its /frames answered "
                                  f"{answer.content_type or 'no content type'}, not frames); "
                                  f"give the address 'gputop serve' prints (e.g. "
                                  f"{SERVE_EXAMPLE})", transient=False)
        return answer.text

    def fetch(self) -> list[Frame]:
        """The frames after ``last_seq`` (raising SourceError when the host cannot say)."""
        text = self._get(f"{self.url}?since={self.last_seq}", self.timeout_s)
        frames = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                frame = frame_from_dict(json.loads(line))
            except (ValueError, SchemaError, RecursionError) as exc:
                raise SourceError(f"{self.url} sent a frame that cannot be read ({exc})") from None
            if frame.seq > self.last_seq:
                frames.append(frame)
                self.last_seq = frame.seq
        return frames

    def run(self, on_frame: Callable[[Frame], None], max_frames: int | None = None) -> None:
        produced = 0
        began = time.monotonic()
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
                self.error = None
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

    def tick(self) -> Frame:
        raise SourceError("a remote feed has no virtual clock")
