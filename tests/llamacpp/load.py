"""A bounded load for a real llama-server on 127.0.0.1, counting its own tokens.

Each client thread sends streaming ``/completion`` requests one after another
(``ignore_eos``, a fixed ``n_predict``) and records, per request, when it finished and how
many tokens it received (``return_tokens``: every streamed chunk carries its token ids;
the final chunk's ``tokens_predicted`` is the request's count: a streamed token's ids are
now and then left out of the stream, about one in 400 here, so the ids are only a
cross-check).  llama.cpp adds a request's generated tokens to
``llamacpp:tokens_predicted_total`` when the request ends (its slot is released), so the
true count in an interval is the tokens of the requests that finished in it.  ``--storm``
keeps more long-prompt requests going than the server has slots, for a while: requests
are deferred and prefill crowds out decode.  Runs in its own process, as clients would.

Usage: python -m tests.llamacpp.load --port P --out FILE [--clients N] [--seconds S]
       [--storm N --storm-prompt-tokens T --storm-seconds S]
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.vllm.load import ClientThreads

PROMPT = "gpu kernel token cache batch"


@dataclass
class Counts:
    finished: list[tuple[float, int]] = field(default_factory=list)  # (wall time, tokens)
    chunks: int = 0  # streamed token chunks received
    server_tokens: int = 0  # as the final chunks' tokens_predicted report them
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def tokens_between(self, start_wall: float, end_wall: float) -> int:
        with self.lock:
            return sum(n for t, n in self.finished if start_wall < t <= end_wall)


def complete(port: int, body: dict, counts: Counts, timeout_s: float = 120.0) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    tokens = 0
    try:
        payload = {**body, "stream": True, "return_tokens": True}
        connection.request("POST", "/completion", json.dumps(payload).encode(),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            counts.errors.append(f"HTTP {response.status}: {response.read()[:200]!r}")
            return
        predicted = None
        for raw in response:
            line = raw.strip()
            if not line.startswith(b"data: "):
                continue
            chunk = json.loads(line[6:])
            if chunk.get("stop"):
                predicted = chunk.get("tokens_predicted")
            else:  # return_tokens: each streamed chunk carries its token ids
                tokens += len(chunk.get("tokens") or ())
        with counts.lock:  # the request's own count, as its final chunk gives it
            counts.finished.append((time.time(), predicted or 0))
            counts.chunks += tokens
            counts.server_tokens += predicted or 0
    except (OSError, http.client.HTTPException, ValueError) as exc:
        counts.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()


class Load(ClientThreads):
    def __init__(self, port: int, clients: int, n_predict: int, seconds: float):
        super().__init__(clients, seconds)
        self.port, self.counts = port, Counts()
        self.body = {"prompt": PROMPT, "n_predict": n_predict, "ignore_eos": True,
                     "cache_prompt": False}

    def request(self) -> None:
        complete(self.port, self.body, self.counts)


class Storm(ClientThreads):
    """``clients`` threads sending long prompts back to back for ``seconds``: more requests
    than the server has slots, each one's prefill ``prompt_tokens`` long.  (A burst of a few
    dozen is over within a second on the tiny model: its prefill runs at ~100k tokens/s.)"""

    def __init__(self, port: int, clients: int, prompt_tokens: int, seconds: float):
        super().__init__(clients, seconds)
        self.port, self.counts = port, Counts()
        self.body = {"prompt": " ".join(["cache"] * prompt_tokens), "n_predict": 8,
                     "ignore_eos": True, "cache_prompt": False}

    def request(self) -> None:
        complete(self.port, self.body, self.counts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--n-predict", type=int, default=48)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--storm", type=int, default=0, help="storm clients, then exit")
    parser.add_argument("--storm-prompt-tokens", type=int, default=1500)
    parser.add_argument("--storm-seconds", type=float, default=10.0)
    args = parser.parse_args()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    load = Load(args.port, args.clients, args.n_predict, args.seconds).start() \
        if args.clients else None
    storm_counts = Counts()
    if args.storm:
        surge = Storm(args.port, args.storm, args.storm_prompt_tokens, args.storm_seconds)
        surge.start()
        done.wait(args.storm_seconds)
        surge.stop()
        storm_counts = surge.counts
    else:
        done.wait(args.seconds)
    if load:
        load.stop()
    counts = load.counts if load else Counts()
    Path(args.out).write_text(json.dumps({
        "finished": counts.finished, "chunks": counts.chunks,
        "server_tokens": counts.server_tokens, "errors": counts.errors[:20],
        "storm_finished": len(storm_counts.finished), "storm_errors": storm_counts.errors[:20]}))


if __name__ == "__main__":
    main()
