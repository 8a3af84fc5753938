"""A bounded load for a real vLLM on 127.0.0.1: streaming completions that count their tokens.

Each client thread sends streaming /v1/completions requests one after another and
records the wall time of every streamed token, so the test knows the true token rate
in any interval (vLLM streams one token per chunk for n=1 without speculative decoding;
the final usage chunk confirms the count).  ``storm`` sends the seed's pathological
request: n=8 sequences with logprobs=20, which forces a softmax over the vocabulary for
8 sequences every step.  Every loop is bounded in time and count.

The load runs in a process of its own (``LoadProcess``), as real clients would: parsing
thousands of streamed chunks a second in the test's own process would starve gputop's
threads of the interpreter, which is not what a busy host does to gputop.
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Counts:
    token_times: list[float] = field(default_factory=list)  # wall time of each token
    usage_tokens: int = 0  # as the server's usage chunks report them
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tokens_between(self, start_wall: float, end_wall: float) -> int:
        with self.lock:
            return sum(1 for t in self.token_times if start_wall < t <= end_wall)


def stream_completion(port: int, body: dict, counts: Counts, timeout_s: float = 120.0,
                      count_tokens: bool = True) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    payload = json.dumps({**body, "stream": True,
                          "stream_options": {"include_usage": True}}).encode()
    with counts.lock:
        counts.in_flight += 1
    try:
        connection.request("POST", "/v1/completions", payload,
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            counts.errors.append(f"HTTP {response.status}: {response.read()[:200]!r}")
            return
        for raw in response:
            line = raw.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            now = time.time()
            with counts.lock:
                if chunk.get("usage"):
                    counts.usage_tokens += chunk["usage"]["completion_tokens"]
                elif count_tokens:
                    for choice in chunk.get("choices", []):
                        if choice.get("text") is not None:
                            counts.token_times.append(now)
        with counts.lock:
            counts.requests += 1
    except (OSError, http.client.HTTPException, ValueError) as exc:
        counts.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        with counts.lock:
            counts.in_flight -= 1
        connection.close()


class ClientThreads:
    """``clients`` threads each sending ``request()`` after ``request()`` until ``stop()`` or
    ``seconds`` (shared by the vLLM and llama.cpp loads)."""

    def __init__(self, clients: int, seconds: float):
        self._stop = threading.Event()
        self._deadline = time.monotonic() + seconds
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(clients)]

    def request(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.is_set() and time.monotonic() < self._deadline:
            self.request()

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


class Load(ClientThreads):
    """``clients`` threads sending ordinary requests until ``stop()`` or ``seconds``."""

    def __init__(self, port: int, clients: int = 8, max_tokens: int = 96, seconds: float = 300.0,
                 model: str = "tiny-llama"):
        super().__init__(clients, seconds)
        self.port = port
        self.counts = Counts()
        self._body = {"model": model, "prompt": "gpu kernel token cache batch",
                      "max_tokens": max_tokens, "temperature": 1.0, "ignore_eos": True}

    def request(self) -> None:
        stream_completion(self.port, self._body, self.counts)


def storm(port: int, max_tokens: int = 200, model: str = "tiny-llama",
          seconds: float = 0.0) -> threading.Thread:
    """The seed's request: n=8, logprobs=20 (its own tokens are not counted as the load's),
    sent again as each finishes until ``seconds`` have passed (once when 0): a storm as long
    as the test needs, however fast this host runs one."""
    counts = Counts()
    body = {"model": model, "prompt": "gpu kernel token cache batch", "max_tokens": max_tokens,
            "n": 8, "logprobs": 20, "temperature": 1.0, "ignore_eos": True}
    deadline = time.monotonic() + seconds

    def run() -> None:
        while True:
            try:
                stream_completion(port, body, counts, count_tokens=False)
            except Exception as exc:  # a storm thread that died must say so
                counts.errors.append(f"{type(exc).__name__}: {exc}")
            if counts.errors or time.monotonic() >= deadline:
                return

    thread = threading.Thread(target=run, daemon=True)
    thread.counts = counts  # type: ignore[attr-defined]
    thread.start()
    return thread


class LoadProcess:
    """``Load`` (and optionally a storm) in a child process; the counts come back as JSON
    when it stops.  ``counts`` is filled by ``stop()``."""

    def __init__(self, port: int, out: Path, clients: int = 8, max_tokens: int = 96,
                 seconds: float = 300.0, storm_requests: int = 0, storm_max_tokens: int = 900,
                 storm_seconds: float = 0.0):
        self.out = out
        self.counts = Counts()
        self.storm_per_thread: list[int] = []  # requests each storm thread finished
        self.storm_unfinished = 0  # storm threads still in a request when the time ran out
        self.storm_errors: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.vllm.load", "--port", str(port), "--out", str(out),
             "--clients", str(clients), "--max-tokens", str(max_tokens), "--seconds",
             str(seconds), "--storm", str(storm_requests), "--storm-max-tokens",
             str(storm_max_tokens), "--storm-seconds", str(storm_seconds)],
            cwd=Path(__file__).resolve().parents[2])

    def stop(self, timeout_s: float = 120.0) -> LoadProcess:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=timeout_s)
        data = json.loads(self.out.read_text())
        self.counts.token_times = data["token_times"]
        self.counts.usage_tokens = data["usage_tokens"]
        self.counts.requests = data["requests"]
        self.counts.errors = data["errors"]
        self.storm_per_thread = data["storm_per_thread"]
        self.storm_unfinished = data["storm_unfinished"]
        self.storm_errors = data["storm_errors"]
        return self

    def wait(self, timeout_s: float = 300.0) -> LoadProcess:
        self.proc.wait(timeout=timeout_s)
        return self.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--storm", type=int, default=0, help="storm requests at once, then exit")
    parser.add_argument("--storm-max-tokens", type=int, default=900)
    parser.add_argument("--storm-seconds", type=float, default=0.0,
                        help="each storm request is sent again until these seconds passed")
    args = parser.parse_args()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    load = Load(args.port, args.clients, args.max_tokens, args.seconds) if args.clients else None
    if load:
        load.start()
    storms = []
    if args.storm:
        storms = [storm(args.port, args.storm_max_tokens, seconds=args.storm_seconds)
                  for _ in range(args.storm)]
        end = time.monotonic() + args.seconds  # one deadline for them all
        for thread in storms:
            thread.join(timeout=max(0.0, end - time.monotonic()))
    else:
        done.wait(args.seconds)
    if load:
        load.stop()
    counts = load.counts if load else Counts()
    Path(args.out).write_text(json.dumps({
        "token_times": counts.token_times, "usage_tokens": counts.usage_tokens,
        "requests": counts.requests, "errors": counts.errors[:20],
        "storm_per_thread": [t.counts.requests for t in storms],
        "storm_unfinished": sum(t.is_alive() for t in storms),
        "storm_errors": [e for t in storms for e in t.counts.errors][:20]}))


if __name__ == "__main__":
    main()
