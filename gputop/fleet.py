"""The fleet: one row per GPU across hosts, worst first, from gputop serve endpoints or Prometheus.

Two ways to learn about many hosts, both read-only and bounded:
- ``gputop fleet URL...``: each host's ``gputop serve`` ``/snapshot.json`` (a handful of
  hosts; each asked in parallel with a deadline, a host that does not answer is a row
  saying so);
- ``gputop fleet --prometheus URL``: a few instant PromQL queries over the exporter's
  families (many hosts; Prometheus already holds them).
Rows are ranked worst first: an open episode, then the gap between GPU-Util and SM
activity, then inter-token latency against its baseline.  No Textual here.

Every answer is read as hostile input: capped in bytes (``MAX_SNAPSHOT_BYTES``,
``MAX_QUERY_BYTES``) and counts (``MAX_SERIES`` per query, ``MAX_GPUS`` per host,
``MAX_ROWS`` in all), each value type-checked, and a host whose answer cannot be read is
one row saying so, never a fleet without rows.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import re
import threading
import urllib.parse
from dataclasses import dataclass, field

from gputop.remote import SERVE_EXAMPLE, explain, pasted_base_url, serve_url
from gputop.schema import MAX_GPUS
from gputop.sources import prom
from gputop.sources.base import SourceError

TIMEOUT_S = 3.0
MAX_SNAPSHOT_BYTES = 8 * 2**20  # one host's /snapshot.json (256 GPUs with processes: ~2 MiB)
MAX_QUERY_BYTES = 8 * 2**20  # one PromQL answer (1,000 GPUs: ~1.3 MiB for the largest)
MAX_SERIES = 50_000  # series read from one PromQL answer
MAX_ROWS = 10_000  # GPUs in the whole table
MAX_TEXT = 200  # characters of a name or label kept
_INSTANCE = re.compile(r"^[A-Za-z0-9._\-\[\]:%]{1,255}$")  # host:port, as Prometheus labels it
_PARSING = threading.Lock()  # one answer decoded at a time: peak memory is one answer's


@dataclass(frozen=True)
class GpuRow:
    host: str
    url: str | None  # the host's gputop serve, for its dashboard (--remote)
    gpu: int | None
    name: str = ""
    util_pct: float | None = None
    sm_pct: float | None = None
    tokens_per_s: float | None = None
    itl_p99_s: float | None = None
    itl_baseline_s: float | None = None
    mem_used_bytes: float | None = None
    mem_total_bytes: float | None = None
    parts: dict[str, float] = field(default_factory=dict)  # VRAM split, bytes
    episode: str | None = None  # busy_unproductive | starved, while open
    suspect: str | None = None
    error: str | None = None  # the host did not answer

    @property
    def gap_pct(self) -> float | None:
        if self.util_pct is None or self.sm_pct is None:
            return None
        return self.util_pct - self.sm_pct

    @property
    def latency_ratio(self) -> float | None:
        if self.itl_p99_s is None or not self.itl_baseline_s:
            return None
        return self.itl_p99_s / self.itl_baseline_s

    def rank(self) -> tuple:
        """Worst first: episodes, then the util-SM gap, then latency; silent hosts after."""
        return (self.error is not None, self.episode is None, -(self.gap_pct or 0.0),
                -(self.latency_ratio or 0.0), self.host, self.gpu if self.gpu is not None else -1)

    def text(self) -> str:
        """What a filter matches: host, GPU, name, episode, suspect."""
        return " ".join(str(v) for v in (self.host, self.gpu, self.name, self.episode or "",
                                         self.suspect or "", self.error or "")).lower()


def ranked(rows: list[GpuRow]) -> list[GpuRow]:
    return sorted(rows, key=GpuRow.rank)


def _finite(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:  # an integer beyond any float
        return None
    return value if math.isfinite(value) else None


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _text(value) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _index(value) -> int | None:
    """A GPU index from JSON (an int, never a bool) or a label (ASCII digits only: "²" is a
    digit to str.isdigit and not to int())."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 2**31 else None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 9:
        return int(value)
    return None


def _json(text: str):
    """JSON from a peer, decoded one answer at a time (ValueError when it is not)."""
    with _PARSING:
        return json.loads(text)


# ---------------------------------------------------------------- gputop serve endpoints

PROMETHEUS_EXAMPLE = "http://HOST:9090"
PROMETHEUS_PAGES = ("/api/v1/query", "/api/v1", "/graph", "/query", "/targets", "/alerts")


def base_url(url: str) -> tuple[str, dict[str, str]]:
    """(scheme://host:port/path-prefix, basic-auth headers from user:password@ in the URL,
    or GPUTOP_AUTH): a Prometheus or a serve behind a proxy keeps its path
    (``https://h/prometheus``); a serve URL given as .../metrics loses that page's name."""
    parts, headers = serve_url(url)
    path = parts.path.rstrip("/")
    for page in ("/metrics", "/snapshot.json", "/frames", "/healthz"):
        path = path.removesuffix(page)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", "")), headers


def base_prometheus_url(text: str) -> str:
    """A Prometheus' base URL from what a user typed: ``host:port`` gets http://, a page
    of its UI or API pasted from the browser is cut off."""
    return pasted_base_url(text, PROMETHEUS_EXAMPLE, PROMETHEUS_PAGES)


def rows_from_snapshot(host: str, url: str, data: dict) -> list[GpuRow]:
    """One row per GPU of a host's /snapshot.json; values of the wrong type read as unknown."""
    data = _dict(data)
    engine = _dict(data.get("engine"))
    alerts = [a for a in _list(data.get("alerts")) if isinstance(a, dict) and a.get("active")]
    gpus = _list(data.get("gpus"))
    if len(gpus) > MAX_GPUS:
        return [GpuRow(host=host, url=url, gpu=None,
                       error=f"reports {len(gpus):,} GPUs: more than {MAX_GPUS}, not shown")]
    rows = []
    for gpu in gpus:
        if not isinstance(gpu, dict):
            continue
        index = _index(gpu.get("index"))
        episode = next((a for a in alerts if index is not None
                        and index in [_index(g) for g in _list(a.get("gpus"))]), None)
        suspects = _list((episode or {}).get("suspects"))
        top = suspects[0] if suspects and isinstance(suspects[0], dict) else {}
        rows.append(GpuRow(
            host=host, url=url, gpu=index,
            name=_text(gpu.get("name")), util_pct=_finite(gpu.get("util_gpu_pct")),
            sm_pct=_finite(gpu.get("sm_active_pct")),
            tokens_per_s=_finite(engine.get("generation_tokens_per_s")),
            itl_p99_s=_finite(engine.get("itl_p99_s")),
            itl_baseline_s=_finite(engine.get("itl_p99_baseline_s")),
            mem_used_bytes=_finite(gpu.get("mem_used_bytes")),
            mem_total_bytes=_finite(gpu.get("mem_total_bytes")),
            parts={k.removesuffix("_bytes")[:40]: _finite(v)
                   for k, v in list(_dict(gpu.get("vram")).items())[:16]
                   if isinstance(k, str) and _finite(v) is not None and k != "kv_pool_bytes"},
            episode=_text(episode.get("kind")) or None if episode else None,
            suspect=_text(top.get("cause")) or None))
    return rows


def ask_serve(url: str, timeout_s: float = TIMEOUT_S) -> list[GpuRow]:
    try:
        base, headers = base_url(url)
    except ValueError as exc:
        return [GpuRow(host=url[:80], url=None, gpu=None, error=str(exc)[:160])]
    host = urllib.parse.urlsplit(base).netloc  # shown: without the credentials
    given = urllib.parse.urlsplit(url)  # for Enter (--remote): with them
    dashboard = urllib.parse.urlunsplit((given.scheme, given.netloc,
                                         urllib.parse.urlsplit(base).path, "", ""))
    try:
        answer = prom.fetch(f"{base}/snapshot.json", timeout_s, MAX_SNAPSHOT_BYTES,
                            accept="application/json", headers=headers)
        data = _json(answer.text)
        if not isinstance(data, dict):
            raise ValueError("its snapshot is not a JSON object")
        rows = rows_from_snapshot(host, dashboard, data)
    except SourceError as exc:
        return [GpuRow(host=host, url=dashboard, gpu=None,
                       error=explain(exc, base, "/snapshot.json")[:200])]
    except (ValueError, RecursionError):
        return [GpuRow(host=host, url=dashboard, gpu=None,
                       error=f"not a gputop serve: its /snapshot.json is not a JSON object; "
                       f"give the address 'gputop serve' prints (e.g. {SERVE_EXAMPLE})")]
    except Exception as exc:  # one host's answer must never hide the others
        return [GpuRow(host=host, url=dashboard, gpu=None,
                       error=f"its snapshot cannot be read ({type(exc).__name__})")]
    return rows or [GpuRow(host=host, url=dashboard, gpu=None, error="reports no GPU")]


def ask_serves(urls: list[str], timeout_s: float = TIMEOUT_S) -> list[GpuRow]:
    """Every host at once, each within ``timeout_s``."""
    with cf.ThreadPoolExecutor(max_workers=min(16, max(1, len(urls)))) as pool:
        rows = [row for rows in pool.map(lambda u: ask_serve(u, timeout_s), urls)
                for row in rows]
    return rows[:MAX_ROWS]


# ---------------------------------------------------------------- Prometheus

QUERIES = {
    "util": "gputop_gpu_utilization_ratio",
    "sm": "gputop_gpu_sm_active_ratio",
    "info": "gputop_gpu_info",
    "total": "gputop_gpu_memory_total_bytes",
    "parts": "gputop_gpu_memory_bytes",
    "episode": "gputop_episode_active == 1",
    "suspect": "topk by (instance, gpu) (1, gputop_episode_suspect_score)",
    "tokens": "gputop_engine_generation_tokens_per_second",
    "itl": 'gputop_engine_inter_token_latency_seconds{quantile="0.99"}',
    "itl_base": "gputop_engine_inter_token_latency_p99_baseline_seconds",
    "up": "up == 0",
}


def parse_vector(answer: dict) -> list[tuple[dict[str, str], float | None]]:
    """(labels, value) of an instant-vector answer of Prometheus' HTTP API; ValueError when
    it is not one, or holds more than MAX_SERIES series."""
    if not isinstance(answer, dict) or answer.get("status") != "success":
        error = answer.get("error") if isinstance(answer, dict) else None
        raise ValueError(str(error)[:160] if error else "not a successful Prometheus answer")
    data = _dict(answer.get("data"))
    if data.get("resultType") != "vector":
        raise ValueError("not an instant vector")
    result = _list(data.get("result"))
    if len(result) > MAX_SERIES:
        raise ValueError(f"{len(result):,} series: more than {MAX_SERIES:,}")
    out = []
    for item in result:
        item = _dict(item)
        metric, sample = item.get("metric"), item.get("value")
        if not isinstance(metric, dict) or not isinstance(sample, list) or len(sample) != 2:
            continue
        labels = {k[:MAX_TEXT]: v[:MAX_TEXT] for k, v in metric.items()
                  if isinstance(k, str) and isinstance(v, str)}
        try:
            value = float(sample[1]) if isinstance(sample[1], (str, int, float)) else math.nan
        except (ValueError, OverflowError):
            continue
        out.append((labels, value if math.isfinite(value) else None))
    return out


def _instance_url(instance: str) -> str | None:
    """The dashboard URL of a Prometheus target, when its label is a plain host:port."""
    return f"http://{instance}" if _INSTANCE.match(instance) else None


def rows_from_prometheus(answers: dict[str, list[tuple[dict[str, str], float | None]]]) -> list[GpuRow]:
    """Rows from the answers to QUERIES (each name -> its vector); at most MAX_GPUS per
    instance and MAX_ROWS in all."""
    def key(labels):
        return labels.get("instance", "?"), _index(labels.get("gpu"))

    rows: dict[tuple, dict] = {}
    per_host: dict[str, int] = {}
    for labels, _ in answers.get("info", []):
        k = key(labels)
        if k in rows or len(rows) >= MAX_ROWS:
            continue
        if per_host.get(k[0], 0) >= MAX_GPUS:
            continue
        per_host[k[0]] = per_host.get(k[0], 0) + 1
        rows[k] = {"name": labels.get("name", "")}

    def put(name, field_name, scale=1.0):
        for labels, value in answers.get(name, []):
            k = key(labels)
            if k in rows and value is not None:
                rows[k][field_name] = value * scale

    put("util", "util_pct", 100.0)
    put("sm", "sm_pct", 100.0)
    put("total", "mem_total_bytes")
    for labels, value in answers.get("parts", []):
        k = key(labels)
        if k in rows and value is not None:
            parts = rows[k].setdefault("parts", {})
            if len(parts) < 16:
                parts[labels.get("part", "?")] = value
    for labels, _ in answers.get("episode", []):
        k = key(labels)
        if k in rows:
            rows[k]["episode"] = labels.get("kind")
    for labels, _ in answers.get("suspect", []):
        k = key(labels)
        if k in rows:
            rows[k]["suspect"] = labels.get("cause")
    per_instance: dict[str, dict] = {}
    for name, field_name in (("tokens", "tokens_per_s"), ("itl", "itl_p99_s"),
                             ("itl_base", "itl_baseline_s")):
        for labels, value in answers.get(name, []):
            instance = labels.get("instance", "?")
            if instance in per_host:
                per_instance.setdefault(instance, {})[field_name] = value
    out = []
    for (instance, gpu), values in rows.items():
        parts = values.pop("parts", {})
        used = sum(v for p, v in parts.items() if p not in ("free", "overflow"))
        out.append(GpuRow(host=instance, url=_instance_url(instance), gpu=gpu, parts=parts,
                          mem_used_bytes=used if parts else None,
                          **values, **per_instance.get(instance, {})))
    seen = {r.host for r in out}
    for labels, value in answers.get("up", []):
        instance = labels.get("instance", "?")
        if len(out) >= MAX_ROWS:
            break
        if value == 0 and instance not in seen and "gputop" in labels.get("job", "gputop"):
            seen.add(instance)
            out.append(GpuRow(host=instance, url=_instance_url(instance), gpu=None,
                              error="Prometheus cannot scrape it (up == 0)"))
    return out


def ask_prometheus(url: str, timeout_s: float = TIMEOUT_S) -> list[GpuRow]:
    base, headers = base_url(url)

    def ask(query: str):
        target = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": query})
        try:
            answer = prom.fetch(target, timeout_s, MAX_QUERY_BYTES, accept="application/json",
                                headers=headers)
            with _PARSING:
                return parse_vector(json.loads(answer.text))
        except prom.FetchError as exc:  # kept (its HTTP status names the fix)...
            exc.__traceback__ = exc.__context__ = None  # ...without the frames' locals
            return exc
        except (SourceError, ValueError, RecursionError) as exc:
            # a new exception, without the traceback: that would keep the decoded answer
            # (its frames' locals) alive until every query is done
            return SourceError(str(exc)[:200])

    with cf.ThreadPoolExecutor(max_workers=len(QUERIES)) as pool:  # one deadline, not eleven
        answers = dict(zip(QUERIES, pool.map(ask, QUERIES.values())))
    if isinstance(answers["info"], Exception):
        exc = answers["info"]
        why = explain(exc, base, "/api/v1/query", "prometheus") \
            if isinstance(exc, SourceError) else str(exc)
        return [GpuRow(host=urllib.parse.urlsplit(base).netloc, url=None, gpu=None,
                       error=f"Prometheus: {why[:200]}")]
    try:
        return rows_from_prometheus({name: [] if isinstance(a, Exception) else a
                                     for name, a in answers.items()})
    except Exception as exc:  # a bad answer is a row, never a crashed table
        return [GpuRow(host=urllib.parse.urlsplit(base).netloc, url=None, gpu=None,
                       error=f"Prometheus: its answers cannot be read ({type(exc).__name__})")]
