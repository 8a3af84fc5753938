"""Fetch and parse a Prometheus text endpoint (engines, dcgm-exporter), failing clearly.

Parsing is prometheus_client's; this module bounds the fetch and turns every way an
endpoint can be wrong into one short reason.  The fetch has one deadline for the whole
exchange, enforced by a watchdog that closes the socket: a server that sends its
headers and then one byte every few hundred milliseconds cannot hold a poll (or
gputop's exit) hostage, as a per-read timeout would let it.  Redirects are not
followed and the size is capped.

``http.client`` and prometheus_client are imported at the first fetch and parse: a machine
with no engine to scrape (a training box) never pays their ~6 MiB resident.
"""

from __future__ import annotations

import errno
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field

from gputop import __version__
from gputop.sources.base import SourceError

MAX_BYTES = 8 * 2**20
CHUNK_BYTES = 65536


class FetchError(SourceError):
    """A fetch that failed, and whether asking again can help: a timeout or a 5xx may pass,
    a refused connection, a 404 or a page that is not what was asked for will not."""

    def __init__(self, message: str, *, transient: bool, status: int | None = None):
        super().__init__(message)
        self.transient = transient
        self.status = status


def check_url(url: str, example: str = "http://127.0.0.1:8000/metrics") -> str:
    """The URL if it is http(s) with a host; otherwise ValueError with a one-line reason."""
    parts = urllib.parse.urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.hostname \
            or any(ch.isspace() or not ch.isprintable() for ch in parts.netloc):
        raise ValueError(f"{url!r} is not an http(s) URL (e.g. {example})")
    try:
        _ = parts.port  # urlsplit checks the port only when asked
    except ValueError:
        raise ValueError(f"{url!r} has a port that is not a number") from None
    return url


@dataclass(frozen=True)
class Fetched:
    text: str
    headers_after_s: float  # when the response's headers arrived, after the request began
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names


def split_credentials(url: str) -> tuple[str, dict[str, str]]:
    """A URL without its ``user:password@`` and the basic-auth header that carries them:
    credentials are sent, never shown (errors, frames, snapshots, recordings)."""
    import base64

    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    userinfo, _, netloc = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{urllib.parse.unquote(user)}:"
                             f"{urllib.parse.unquote(password)}".encode()).decode()
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc)), \
        {"Authorization": f"Basic {token}"}


def ca_file() -> str | None:
    """``GPUTOP_CA_FILE``: a CA bundle to trust for https endpoints (a self-signed serve)."""
    import os

    return os.environ.get("GPUTOP_CA_FILE") or None


def fetch(url: str, timeout_s: float, max_bytes: int = MAX_BYTES,
          accept: str = "text/plain", headers: dict[str, str] | None = None) -> Fetched:
    """GET ``url`` within ``timeout_s`` in all; SourceError with one line otherwise."""
    import http.client
    import ssl

    parts = urllib.parse.urlparse(url)
    secure = parts.scheme == "https"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    started = time.perf_counter()
    if secure:
        try:
            context = ssl.create_default_context(cafile=ca_file())
        except (OSError, ssl.SSLError) as exc:
            raise SourceError(f"GPUTOP_CA_FILE {ca_file()}: cannot be read as a CA bundle "
                              f"({exc.strerror or type(exc).__name__})") from None
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=timeout_s, context=context)
    else:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout_s)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout_s, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("GET", path, headers={"Accept": accept,
                                                 "User-Agent": f"gputop/{__version__}",
                                                 **(headers or {})})
        response = connection.getresponse()
        headers_after = time.perf_counter() - started
        if response.status != 200:
            raise FetchError(f"HTTP {response.status} from {url}", status=response.status,
                             transient=response.status >= 500 or response.status == 429)
        content_type = response.getheader("Content-Type", "") or ""
        chunks, size = [], 0
        while True:
            chunk = response.read1(CHUNK_BYTES)
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise FetchError(f"{url} sent more than {max_bytes / 2**20:g} MiB: "
                                 "refused unread", transient=False)
            chunks.append(chunk)
        if expired.is_set():
            raise TimeoutError
        body = b"".join(chunks)
        received = {name.lower(): value for name, value in response.getheaders()}
    except SourceError:
        raise
    except ssl.SSLCertVerificationError as exc:  # asking again will not change the answer
        raise FetchError(f"{url}: its TLS certificate is not trusted "
                         f"({exc.verify_message or exc.reason}); GPUTOP_CA_FILE=FILE names a "
                         "CA to trust", transient=False) from None
    except ssl.SSLError as exc:
        if expired.is_set():
            raise FetchError(f"no answer from {url} within {timeout_s:g}s",
                             transient=True) from None
        raise FetchError(f"{url}: TLS failed ({exc.reason or type(exc).__name__})",
                         transient=False) from None
    except TimeoutError:
        raise FetchError(f"no answer from {url} within {timeout_s:g}s", transient=True) from None
    except (http.client.HTTPException, ValueError) as exc:
        if expired.is_set():
            raise FetchError(f"no answer from {url} within {timeout_s:g}s",
                             transient=True) from None
        raise FetchError(f"{url} did not answer as an HTTP server ({type(exc).__name__})",
                         transient=False) from None
    except OSError as exc:
        if expired.is_set():
            raise FetchError(f"no answer from {url} within {timeout_s:g}s",
                             transient=True) from None
        text = exc.strerror or str(exc) or type(exc).__name__
        # refused, no route, no such host: asking again at once will not help
        lasting = isinstance(exc, (ConnectionRefusedError, socket.gaierror)) or \
            exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH)
        raise FetchError(f"cannot reach {url}: {text}", transient=not lasting) from None
    finally:
        watchdog.cancel()
        connection.close()
    if "html" in content_type.lower() or body.lstrip()[:1] == b"<":
        raise FetchError(f"{url} returned HTML, not Prometheus metrics", transient=False)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FetchError(f"{url} returned binary data, not Prometheus metrics",
                         transient=False) from None
    if "\x00" in text:
        raise FetchError(f"{url} returned binary data, not Prometheus metrics", transient=False)
    return Fetched(text, headers_after, content_type, received)


def fetch_text(url: str, timeout_s: float, max_bytes: int = MAX_BYTES) -> str:
    return fetch(url, timeout_s, max_bytes).text


def parse(text: str, url: str = "endpoint") -> list:
    """Metric families; garbage gives a SourceError naming the first bad line."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        return list(text_string_to_metric_families(text))
    except Exception as exc:  # the parser raises ValueError and friends on bad lines
        first = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise SourceError(f"{url} is not Prometheus text ({first})") from None


def samples(families: Iterable) -> Iterable[tuple[str, dict[str, str], float]]:
    for family in families:
        for sample in family.samples:
            yield sample.name, sample.labels, sample.value
