"""The fleet: one row per GPU across hosts, worst first, from gputop serve endpoints or Prometheus.

Two ways to learn about many hosts, both read-only and bounded:
- ``gputop fleet URL...``: each host's ``gputop serve`` ``/snapshot.json`` (a handful of
  hosts; each asked in parallel with a deadline, a host that does not answer is a row
  saying so);
- ``gputop fleet --prometheus URL``: a few instant PromQL queries over the exporter's
  families (many hosts; Prometheus already holds them).
Rows are ranked worst first: an open episode, then the gap between GPU-Util and SM
activity, then inter-token latency against its baseline.  No Textual here.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import urllib.parse
from dataclasses import dataclass, field

from gputop.remote import SERVE_EXAMPLE, explain, pasted_base_url, serve_url
from gputop.sources import prom
from gputop.sources.base import SourceError

TIMEOUT_S = 3.0
MAX_ANSWER_BYTES = 64 * 2**20


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
    return float(value) if math.isfinite(value) else None


# ---------------------------------------------------------------- gputop serve endpoints

PROMETHEUS_EXAMPLE = "http://HOST:9090"
PROMETHEUS_PAGES = ("/api/v1/query", "/api/v1", "/graph", "/query", "/targets", "/alerts")


def base_url(url: str) -> tuple[str, dict[str, str]]:
    """(scheme://host:port, basic-auth headers from user:password@ in the URL)."""
    parts, headers = serve_url(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", "")), headers


def base_prometheus_url(text: str) -> str:
    """A Prometheus' base URL from what a user typed: ``host:port`` gets http://, a page
    of its UI or API pasted from the browser is cut off."""
    return pasted_base_url(text, PROMETHEUS_EXAMPLE, PROMETHEUS_PAGES)


def rows_from_snapshot(host: str, url: str, data: dict) -> list[GpuRow]:
    engine = data.get("engine") or {}
    alerts = [a for a in data.get("alerts") or [] if isinstance(a, dict) and a.get("active")]
    rows = []
    for gpu in data.get("gpus") or []:
        if not isinstance(gpu, dict):
            continue
        index = gpu.get("index")
        episode = next((a for a in alerts if index in (a.get("gpus") or [])), None)
        suspects = (episode or {}).get("suspects") or []
        vram = gpu.get("vram") or {}
        rows.append(GpuRow(
            host=host, url=url, gpu=index if isinstance(index, int) else None,
            name=str(gpu.get("name", "")), util_pct=_finite(gpu.get("util_gpu_pct")),
            sm_pct=_finite(gpu.get("sm_active_pct")),
            tokens_per_s=_finite(engine.get("generation_tokens_per_s")),
            itl_p99_s=_finite(engine.get("itl_p99_s")),
            itl_baseline_s=_finite(engine.get("itl_p99_baseline_s")),
            mem_used_bytes=_finite(gpu.get("mem_used_bytes")),
            mem_total_bytes=_finite(gpu.get("mem_total_bytes")),
            parts={k.removesuffix("_bytes"): v for k, v in vram.items()
                   if _finite(v) is not None and k != "kv_pool_bytes"},
            episode=episode.get("kind") if episode else None,
            suspect=suspects[0].get("cause") if suspects and isinstance(suspects[0], dict)
            else None))
    return rows


def ask_serve(url: str, timeout_s: float = TIMEOUT_S) -> list[GpuRow]:
    base, headers = base_url(url)
    host = urllib.parse.urlsplit(base).netloc  # shown: without the credentials
    given = urllib.parse.urlsplit(url)  # for Enter (--remote): with them
    dashboard = urllib.parse.urlunsplit((given.scheme, given.netloc, "", "", ""))
    try:
        answer = prom.fetch(f"{base}/snapshot.json", timeout_s, MAX_ANSWER_BYTES,
                            accept="application/json", headers=headers)
        data = json.loads(answer.text)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except SourceError as exc:
        return [GpuRow(host=host, url=dashboard, gpu=None,
                       error=explain(exc, base, "/snapshot.json")[:200])]
    except (ValueError, RecursionError):
        return [GpuRow(host=host, url=dashboard, gpu=None,
                       error=f"not a gputop serve: its /snapshot.json is not JSON; give the "
                       f"address 'gputop serve' prints (e.g. {SERVE_EXAMPLE})")]
    rows = rows_from_snapshot(host, dashboard, data)
    return rows or [GpuRow(host=host, url=dashboard, gpu=None, error="reports no GPU")]


def ask_serves(urls: list[str], timeout_s: float = TIMEOUT_S) -> list[GpuRow]:
    """Every host at once, each within ``timeout_s``."""
    with cf.ThreadPoolExecutor(max_workers=min(16, max(1, len(urls)))) as pool:
        return [row for rows in pool.map(lambda u: ask_serve(u, timeout_s), urls) for row in rows]


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
    """(labels, value) of an instant-vector answer of Prometheus' HTTP API."""
    if not isinstance(answer, dict) or answer.get("status") != "success":
        raise ValueError(str(answer.get("error") if isinstance(answer, dict) else answer)[:160])
    data = answer.get("data") or {}
    if data.get("resultType") != "vector":
        raise ValueError("not an instant vector")
    out = []
    for item in data.get("result") or []:
        try:
            labels = {str(k): str(v) for k, v in item["metric"].items()}
            value = float(item["value"][1])
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        out.append((labels, value if math.isfinite(value) else None))
    return out


def rows_from_prometheus(answers: dict[str, list[tuple[dict[str, str], float | None]]]) -> list[GpuRow]:
    """Rows from the answers to QUERIES (each name -> its vector)."""
    def key(labels):
        gpu = labels.get("gpu")
        return labels.get("instance", "?"), int(gpu) if gpu is not None and gpu.isdigit() else None

    rows: dict[tuple, dict] = {}
    for labels, _ in answers.get("info", []):
        rows[key(labels)] = {"name": labels.get("name", "")}

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
            rows[k].setdefault("parts", {})[labels.get("part", "?")] = value
    for labels, _ in answers.get("episode", []):
        k = key(labels)
        if k in rows:
            rows[k]["episode"] = labels.get("kind")
    for labels, _ in answers.get("suspect", []):
        k = key(labels)
        if k in rows:
            rows[k]["suspect"] = labels.get("cause")
    per_instance = {}
    for name, field_name in (("tokens", "tokens_per_s"), ("itl", "itl_p99_s"),
                             ("itl_base", "itl_baseline_s")):
        for labels, value in answers.get(name, []):
            per_instance.setdefault(labels.get("instance", "?"), {})[field_name] = value
    out = []
    for (instance, gpu), values in rows.items():
        parts = values.pop("parts", {})
        used = sum(v for p, v in parts.items() if p not in ("free", "overflow"))
        out.append(GpuRow(host=instance, url=f"http://{instance}", gpu=gpu, parts=parts,
                          mem_used_bytes=used if parts else None,
                          **values, **per_instance.get(instance, {})))
    seen = {r.host for r in out}
    for labels, value in answers.get("up", []):
        instance = labels.get("instance", "?")
        if value == 0 and instance not in seen and "gputop" in labels.get("job", "gputop"):
            out.append(GpuRow(host=instance, url=f"http://{instance}", gpu=None,
                              error="Prometheus cannot scrape it (up == 0)"))
    return out


def ask_prometheus(url: str, timeout_s: float = TIMEOUT_S) -> list[GpuRow]:
    base, headers = base_url(url)

    def ask(query: str):
        target = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": query})
        try:
            answer = prom.fetch(target, timeout_s, MAX_ANSWER_BYTES, accept="application/json",
                                headers=headers)
            return parse_vector(json.loads(answer.text))
        except (SourceError, ValueError, RecursionError) as exc:
            return exc

    with cf.ThreadPoolExecutor(max_workers=len(QUERIES)) as pool:  # one deadline, not eleven
        answers = dict(zip(QUERIES, pool.map(ask, QUERIES.values())))
    if isinstance(answers["info"], Exception):
        exc = answers["info"]
        why = explain(exc, base, "/api/v1/query", "prometheus") \
            if isinstance(exc, SourceError) else str(exc)
        return [GpuRow(host=urllib.parse.urlsplit(base).netloc, url=None, gpu=None,
                       error=f"Prometheus: {why[:200]}")]
    return rows_from_prometheus({name: [] if isinstance(a, Exception) else a
                                 for name, a in answers.items()})
