"""Fetch and parse a Prometheus text endpoint (engines, dcgm-exporter), failing clearly.

Parsing is prometheus_client's; this module only bounds the fetch (timeout, size)
and turns every way an endpoint can be wrong into one short reason.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable

from prometheus_client.parser import text_string_to_metric_families

from gputop.sources.base import SourceError

MAX_BYTES = 8 * 2**20


def check_url(url: str) -> str:
    """The URL if it is http(s) with a host; otherwise ValueError with a one-line reason."""
    parts = urllib.parse.urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/metrics)")
    return url


def fetch_text(url: str, timeout_s: float, max_bytes: int = MAX_BYTES) -> str:
    request = urllib.request.Request(url, headers={"Accept": "text/plain"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read(max_bytes + 1)
            content_type = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        raise SourceError(f"HTTP {exc.code} from {url}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        text = getattr(reason, "strerror", None) or str(reason)
        raise SourceError(f"cannot reach {url}: {text}") from None
    except TimeoutError:
        raise SourceError(f"no answer from {url} within {timeout_s:g}s") from None
    except OSError as exc:
        raise SourceError(f"cannot read {url}: {exc.strerror or exc}") from None
    if len(body) > max_bytes:
        raise SourceError(f"{url} sent more than {max_bytes // 2**20} MiB: not a metrics page")
    if "html" in content_type.lower() or body.lstrip()[:1] == b"<":
        raise SourceError(f"{url} returned HTML, not Prometheus metrics")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise SourceError(f"{url} returned binary data, not Prometheus metrics") from None


def parse(text: str, url: str = "endpoint") -> list:
    """Metric families; garbage gives a SourceError naming the first bad line."""
    try:
        return list(text_string_to_metric_families(text))
    except Exception as exc:  # the parser raises ValueError and friends on bad lines
        first = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise SourceError(f"{url} is not Prometheus text ({first})") from None


def samples(families: Iterable) -> Iterable[tuple[str, dict[str, str], float]]:
    for family in families:
        for sample in family.samples:
            yield sample.name, sample.labels, sample.value
