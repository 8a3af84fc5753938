"""What the tests of real engines (vLLM, llama.cpp) share: a free port, the reference parse
of a page, and the CPUs: the engine gets its own core, the clients and gputop the rest
(on two cores shared by everything, a CPU engine's spinning threads make throughput swing
from second to second, and a "healthy" run is no longer healthy)."""

from __future__ import annotations

import os
import socket

ENGINE_CPUS = {os.cpu_count() - 1} if (os.cpu_count() or 1) >= 2 else None
CLIENT_CPUS = set(range(os.cpu_count() - 1)) if ENGINE_CPUS else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def full_parse(text: str) -> dict[str, float]:
    """The engine's own numbers, the whole page parsed by prometheus_client: the reference
    (samples of one name added up; vLLM's cache_config_info labels as cache:KEY)."""
    from prometheus_client.parser import text_string_to_metric_families
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[s.name] = out.get(s.name, 0.0) + s.value
            if s.name == "vllm:cache_config_info":
                out.update({f"cache:{k}": v for k, v in s.labels.items()})
    return out
