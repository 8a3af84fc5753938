"""The load driver: streaming completions against the serve loop, counting what arrives.

Every client thread sends one request after another (with ``pause_s`` between them) and
records, as the tokens stream in, how many arrived in each 0.1 s of wall time and the
client-side inter-token latency and time to first token per second (in vLLM's ITL and
TTFT buckets), so a phase's truth is the driver's own count, not the server's.
Everything is bounded: the bins by wall seconds, errors to the first 20, each request by
a timeout.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from dataclasses import dataclass

from lab.vllm_metrics import ITL_BUCKETS_S, TTFT_BUCKETS_S

BIN_S = 0.1
MAX_ERRORS = 20


def _bucket(edges: tuple[float, ...], value: float) -> int:
    for i, edge in enumerate(edges):
        if value <= edge:
            return i
    return len(edges)


def quantile(edges: tuple[float, ...], counts: list[int], q: float) -> float | None:
    """Prometheus-style: linear inside the bucket holding the rank; the top finite edge
    when it falls beyond."""
    total = sum(counts)
    if total == 0:
        return None
    rank, seen, lower = q * total, 0, 0.0
    for edge, count in zip(edges, counts):
        if count and seen + count >= rank:
            return lower + (edge - lower) * (rank - seen) / count
        seen += count
        lower = edge
    return edges[-1]


class Tally:
    """What the clients saw, binned by wall time; shared by every client thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tokens: dict[int, int] = {}  # 0.1 s bin -> tokens that arrived in it
        self.itl: dict[int, list[int]] = {}  # second -> counts per ITL bucket
        self.ttft: dict[int, list[int]] = {}
        self.requests = 0
        self.usage_tokens = 0  # as the server's final usage chunks report them
        self.errors: list[str] = []

    def token(self, wall: float, itl_s: float | None, ttft_s: float | None) -> None:
        with self.lock:
            key = int(wall / BIN_S)
            self.tokens[key] = self.tokens.get(key, 0) + 1
            second = int(wall)
            if itl_s is not None:
                row = self.itl.setdefault(second, [0] * (len(ITL_BUCKETS_S) + 1))
                row[_bucket(ITL_BUCKETS_S, itl_s)] += 1
            if ttft_s is not None:
                row = self.ttft.setdefault(second, [0] * (len(TTFT_BUCKETS_S) + 1))
                row[_bucket(TTFT_BUCKETS_S, ttft_s)] += 1

    def error(self, text: str) -> None:
        with self.lock:
            if len(self.errors) < MAX_ERRORS:
                self.errors.append(text[:300])

    def tokens_between(self, start_wall: float, end_wall: float) -> int:
        lo, hi = int(start_wall / BIN_S), int(end_wall / BIN_S)
        with self.lock:
            return sum(c for k, c in self.tokens.items() if lo <= k < hi)

    def summary(self, start_wall: float, end_wall: float) -> dict:
        """The clients' view of one phase: tokens/s and latency percentiles."""
        def merged(table, edges):
            out = [0] * (len(edges) + 1)
            with self.lock:
                for second, row in table.items():
                    if start_wall <= second and second + 1 <= end_wall:
                        out = [a + b for a, b in zip(out, row)]
            return out

        tokens = self.tokens_between(start_wall, end_wall)
        itl, ttft = merged(self.itl, ITL_BUCKETS_S), merged(self.ttft, TTFT_BUCKETS_S)
        return {"tokens": tokens, "tokens_per_s": tokens / max(1e-9, end_wall - start_wall),
                "itl_p50_s": quantile(ITL_BUCKETS_S, itl, 0.5),
                "itl_p99_s": quantile(ITL_BUCKETS_S, itl, 0.99),
                "ttft_p50_s": quantile(TTFT_BUCKETS_S, ttft, 0.5),
                "ttft_p99_s": quantile(TTFT_BUCKETS_S, ttft, 0.99),
                "itl_observations": sum(itl), "ttft_observations": sum(ttft)}

    def bins(self) -> dict:
        with self.lock:
            if not self.tokens:
                return {"bin_s": BIN_S, "first_bin": None, "counts": []}
            lo, hi = min(self.tokens), max(self.tokens)
            return {"bin_s": BIN_S, "first_bin": lo,
                    "counts": [self.tokens.get(k, 0) for k in range(lo, hi + 1)]}


def stream(port: int, body: dict, tally: Tally, timeout_s: float,
           live: set | None = None, stopping: threading.Event | None = None) -> None:
    """One streaming completion; every token chunk counted when it arrives.  ``live``
    holds the open connections (so a stopping load can cut them); a request cut that way
    is no error."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    if live is not None:
        live.add(connection)
    payload = json.dumps({**body, "stream": True, "stream_options": {"include_usage": True}})
    sent = time.monotonic()
    last: dict[int, float] = {}
    try:
        connection.request("POST", "/v1/completions", payload.encode(),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            tally.error(f"HTTP {response.status}: {response.read(300)!r}")
            return
        for raw in response:
            line = raw.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            now, wall = time.monotonic(), time.time()
            if chunk.get("usage"):
                with tally.lock:
                    tally.usage_tokens += chunk["usage"]["completion_tokens"]
                continue
            for choice in chunk.get("choices", ()):
                index = choice.get("index", 0)
                previous = last.get(index)
                tally.token(wall, None if previous is None else now - previous,
                            now - sent if previous is None else None)
                last[index] = now
        with tally.lock:
            tally.requests += 1
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if stopping is None or not stopping.is_set():
            tally.error(f"{type(exc).__name__}: {exc}")
    finally:
        if live is not None:
            live.discard(connection)
        connection.close()


@dataclass(frozen=True)
class Profile:
    """One kind of traffic: ``clients`` threads, each sending this request in a loop."""

    clients: int
    prompt_tokens: int
    max_tokens: int
    n: int = 1
    logprobs: int | None = None
    pause_s: float = 0.0
    temperature: float = 1.0


class Load:
    """Clients of one profile until ``stop()``; requests are random token ids (no prefix
    is shared, so nothing is served from a cache)."""

    def __init__(self, port: int, profile: Profile, tally: Tally, vocab: int,
                 timeout_s: float = 300.0, seed: int = 0):
        self.port, self.profile, self.tally = port, profile, tally
        self.vocab, self.timeout_s = vocab, timeout_s
        self._stop = threading.Event()
        self._live: set = set()
        self._random = random.Random(seed)
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True)
                         for i in range(profile.clients)]

    def _body(self, rng: random.Random) -> dict:
        p = self.profile
        body = {"prompt": [rng.randrange(3, self.vocab) for _ in range(p.prompt_tokens)],
                "max_tokens": p.max_tokens, "n": p.n, "temperature": p.temperature}
        if p.logprobs is not None:
            body["logprobs"] = p.logprobs
        return body

    def _run(self, index: int) -> None:
        rng = random.Random(self._random.random() + index)
        while not self._stop.is_set():
            stream(self.port, self._body(rng), self.tally, self.timeout_s, self._live,
                   self._stop)
            if self.profile.pause_s:
                self._stop.wait(self.profile.pause_s)

    def start(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, wait_s: float = 0.0, cut: bool = False) -> None:
        """No new requests; ``cut`` closes the ones in flight (the server drops them, as
        vLLM aborts a request whose client left), else waits up to ``wait_s`` for them."""
        self._stop.set()
        if cut:
            for connection in list(self._live):
                try:
                    if connection.sock is not None:
                        connection.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        deadline = time.monotonic() + wait_s
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
