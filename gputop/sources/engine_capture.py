"""``gputop capture-engine URL``: an engine's /metrics page, redacted, for a bug report.

The page is fetched as gputop scrapes it (one GET, one deadline, capped in bytes, no
redirects), parsed with prometheus_client and written back out in the same text format
with every label value that could say something about the user replaced by a stable
stand-in (``model_name-1``, ``worker_addr-2``: the same value gets the same stand-in, so
replicas stay apart).  What stays is what gputop reads a page by: metric names, types,
help texts, numbers, and label values that are the engine's own vocabulary or numbers
(``le``, ``engine``, ``dp_rank``, ``mode``, ``stage``, a cache config's ``block_size``).
A page gputop cannot read is still written (that is often the bug), with a note saying so.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import urllib.parse

from gputop import __version__
from gputop.sources import prom
from gputop.sources.base import SourceError
from gputop.sources.engine_metrics import recognise

# label values kept as they are: the engines' own words, ranks and buckets
KEPT_LABELS = frozenset({
    "le", "quantile", "engine", "dp_rank", "tp_rank", "pp_rank", "moe_ep_rank", "engine_type",
    "priority", "mode", "source", "stage", "category", "reason", "finished_reason", "position",
    "cache_source", "sleep_state", "status", "state", "method", "handler", "code", "max_lora",
    "forward_mode", "num_prefill_ranks", "stage_name", "version", "implementation", "major",
    "minor", "patchlevel", "generation", "cache_dtype", "kv_cache_dtype", "block_size",
    "enable_prefix_caching", "prefix_caching_hash_algo", "mamba_cache_mode",
    "calculate_kv_scales", "is_attention_free", "sliding_window", "swap_space",
    "cpu_offload_gb", "num_gpu_blocks", "num_cpu_blocks", "gpu_memory_utilization",
    "kv_cache_memory_bytes", "kv_cache_size_tokens"})
# labels holding comma-separated names (vLLM's LoRA adapters), redacted name by name
LISTS = {"running_lora_adapters": "lora", "waiting_lora_adapters": "lora"}
NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
# a cache config's own vocabulary ("native", "float32", "[]"): words, never names or paths
CONFIG_WORD = re.compile(r"^(\[\]|[a-z0-9_]{1,32})$")
CONFIG_FAMILIES = frozenset({"vllm:cache_config_info"})
WORDS = frozenset({"true", "false", "none", "", "auto", "nan", "inf", "+inf", "-inf"})
FETCH_TIMEOUT_S = 10.0


def _harmless(value: str) -> bool:
    """A number, a boolean or an empty/None/auto value says nothing about anyone."""
    return value.lower() in WORDS or bool(NUMBER.match(value))


class Redactor:
    """Label values replaced by stand-ins, the same value always by the same one."""

    def __init__(self) -> None:
        self.replaced: dict[tuple[str, str], str] = {}

    def value(self, label: str, value: str, family: str = "") -> str:
        if label in LISTS:  # "a,b": each adapter on its own, the same one the same stand-in
            return ",".join(self.value(LISTS[label], v) for v in value.split(",")) \
                if value else value
        if label in KEPT_LABELS or _harmless(value) or \
                (family in CONFIG_FAMILIES and label != "model_name" and CONFIG_WORD.match(value)):
            return value
        key = (label, value)
        if key not in self.replaced:
            count = sum(1 for name, _ in self.replaced if name == label) + 1
            self.replaced[key] = f"{label}-{count}"
        return self.replaced[key]

    def labels(self, labels: dict[str, str], family: str = "") -> dict[str, str]:
        return {k: self.value(k, v, family) for k, v in labels.items()}


LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|(?=\}))')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _redact_line(line: str, redactor: Redactor) -> str | None:
    """One sample line with its label values replaced; None when it is not a sample line
    gputop can take apart (it is then left out rather than risk a leak)."""
    brace = line.find("{")
    space = line.find(" ")
    if brace < 0 or (0 <= space < brace):
        return line  # no labels: the name and the number say nothing about anyone
    close, at, labels = -1, brace + 1, []
    while at < len(line):
        if line[at] == "}":
            close = at
            break
        match = LABEL.match(line, at)
        if not match:
            return None
        labels.append((match.group(1), _unescape(match.group(2))))
        at = match.end()
    if close < 0:
        return None
    inner = ",".join(f'{k}="{_escape(redactor.value(k, v, line[:brace]))}"' for k, v in labels)
    return f"{line[:brace]}{{{inner}}}{line[close + 1:]}"


def redact(text: str, url: str = "endpoint") -> tuple[str, Redactor]:
    """The page, line for line, with label values anonymised: names, types, help texts and
    numbers stay byte for byte as the engine wrote them.  ValueError (with the reason)
    when the text is not Prometheus text at all."""
    prom.parse(text, url)  # SourceError for HTML, binary, garbage: nothing worth keeping
    redactor = Redactor()
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            out.append(line)
            continue
        redacted = _redact_line(line, redactor)
        out.append(redacted if redacted is not None else "# (a line left out: not read)")
    return "\n".join(out) + "\n", redactor


def _safe_url(url: str) -> str:
    """The URL without credentials, host or query: how the capture names its source."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://<host>:{parts.port or ''}{parts.path}"


def capture(url: str, timeout_s: float = FETCH_TIMEOUT_S, now: dt.datetime | None = None
            ) -> tuple[str, str]:
    """(the redacted page with a header, a one-line summary).  SourceError when the
    endpoint does not answer with Prometheus text."""
    url = prom.check_url(url)
    fetched = prom.fetch(url, timeout_s)
    body, redactor = redact(fetched.text, url)
    try:
        parsed = recognise(fetched.text, url)
        what = f"{parsed.kind} page"
        if parsed.replicas:
            what += f" with {len(parsed.replicas)} replicas"
    except SourceError as exc:
        what = f"not read by gputop: {exc}"
    when = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")
    labels = sorted({label for label, _ in redactor.replaced})
    header = (f"# captured by gputop {__version__} from {_safe_url(url)} at {when}\n"
              f"# {what}; label values anonymised: {', '.join(labels) or 'none'}\n")
    samples = body.count("\n") - body.count("# ")
    summary = (f"{what}, {samples:,} samples, {len(redactor.replaced)} label value(s) "
               f"anonymised ({', '.join(labels) or 'none'})")
    return header + body, summary


def write_new(path: str, text: str) -> None:
    """A new file, 0600, never over an existing one and never through a symbolic link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    with open(fd, "w") as out:
        out.write(text)
