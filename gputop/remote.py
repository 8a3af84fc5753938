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


def serve_url(url: str) -> tuple[urllib.parse.SplitResult, dict[str, str]]:
    """A ``gputop serve`` URL without its credentials, and the headers carrying them
    (``user:password@`` is sent as basic auth, never shown or put in a request line)."""
    prom.check_url(url)
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
    parts, headers = serve_url(url)
    path = parts.path.rstrip("/")
    if not path.endswith("/frames"):
        path += "/frames"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", "")), headers


class RemoteFeed:
    """Frames from a remote ``gputop serve``; ``error`` says why none are coming."""

    def __init__(self, url: str, interval_s: float = 1.0, timeout_s: float = TIMEOUT_S):
        self.url, self._headers = frames_url(url)
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.error: str | None = None
        self.last_seq = -1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> None:
        pass

    def fetch(self) -> list[Frame]:
        """The frames after ``last_seq`` (raising SourceError when the host cannot say)."""
        answer = prom.fetch(f"{self.url}?since={self.last_seq}", self.timeout_s,
                            MAX_ANSWER_BYTES, accept="application/x-ndjson",
                            headers=self._headers)
        frames = []
        for line in answer.text.splitlines():
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
