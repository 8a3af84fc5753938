"""The lab's serving engine: an OpenAI-style completions endpoint over ``lab.engine``.

    python -m lab.serve_loop --preset qwen2.5-0.5b --device cuda --port 8100

POST /v1/completions takes ``prompt`` (text, or a list of token ids as vLLM accepts),
``n``, ``max_tokens``, ``logprobs`` (0-20, vLLM's limit), ``temperature`` and ``stream``
(server-sent events, one chunk per token and choice, with ``stream_options.include_usage``
a final usage chunk); GET /metrics is vLLM's page (``lab.vllm_metrics``); GET /health
says whether the paged forward agreed with transformers' own at start-up.  Bad input is
a 400 with one line saying why.  Binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import select
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY_BYTES = 4 * 2**20
MAX_N = 16
MAX_LOGPROBS = 20  # vLLM's default max_logprobs
SELFCHECK_TOLERANCE = 1e-3  # largest logit difference / largest logit, in float32


class BadRequest(ValueError):
    pass


class ClientGone(OSError):
    pass


def _client_gone(sock) -> bool:
    """The client closed its end (it sends nothing after its request, so readable = EOF)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def events(request, sock):
    """The request's token events until it is done; ClientGone when the client left
    while waiting (a request still queued for KV capacity writes nothing to notice)."""
    while True:
        try:
            event = request.events.get(timeout=0.5)
        except queue.Empty:
            if _client_gone(sock):
                raise ClientGone from None
            continue
        if event is None:
            return
        yield event


def _int(body: dict, name: str, default: int, low: int, high: int) -> int:
    value = body.get(name, default)
    if value is None:
        value = default
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise BadRequest(f"{name} must be an integer from {low} to {high}, not {value!r}")
    return value


def parse_request(body: dict, vocab_size: int, max_model_len: int, max_prompt: int):
    """(prompt ids, n, max_tokens, logprobs or None, temperature, stream, usage) or
    BadRequest naming the field."""
    from lab.engine import encode

    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]  # a batch of one, as the OpenAI API allows
    if isinstance(prompt, str):
        ids = encode(prompt)
    elif isinstance(prompt, list) and all(isinstance(t, int) and not isinstance(t, bool)
                                          for t in prompt):
        ids = prompt
        if any(not 0 <= t < vocab_size for t in ids):
            raise BadRequest(f"token ids must be in 0..{vocab_size - 1}")
    else:
        raise BadRequest("prompt must be a string or a list of token ids")
    if not ids:
        raise BadRequest("prompt is empty")
    n = _int(body, "n", 1, 1, MAX_N)
    max_tokens = _int(body, "max_tokens", 16, 1, max_model_len)
    if len(ids) + max_tokens > max_model_len:
        raise BadRequest(f"prompt ({len(ids)} tokens) + max_tokens ({max_tokens}) exceeds "
                         f"the model's context length {max_model_len}")
    if len(ids) + max_tokens > max_prompt:
        raise BadRequest(f"prompt + max_tokens ({len(ids) + max_tokens}) exceeds the KV pool "
                         f"({max_prompt} tokens)")
    logprobs = body.get("logprobs")
    if logprobs is not None:
        logprobs = _int(body, "logprobs", 0, 0, MAX_LOGPROBS)
    temperature = body.get("temperature", 1.0)
    if temperature is None:
        temperature = 1.0
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) \
            or not 0 <= temperature <= 100:
        raise BadRequest(f"temperature must be a number from 0 to 100, not {temperature!r}")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("stream must be true or false")
    options = body.get("stream_options") or {}
    usage = bool(isinstance(options, dict) and options.get("include_usage"))
    return ids, n, max_tokens, logprobs, float(temperature), stream, usage


class Handler(BaseHTTPRequestHandler):
    server_version = "lab-serve/1"
    app = None  # the Server, set before serving

    def log_message(self, *args) -> None:
        pass

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        app = self.app
        if self.path == "/metrics":
            data = app.metrics.page()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path == "/health":
            self._json(200, app.health)
        elif self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{
                "id": app.model_name, "object": "model", "max_model_len": app.max_model_len,
                "vocab_size": app.vocab_size}]})
        else:
            self._json(404, {"error": {"message": f"no such path {self.path}"}})

    def do_POST(self) -> None:
        if self.path != "/v1/completions":
            self._json(404, {"error": {"message": f"no such path {self.path}"}})
            return
        try:
            length = int(self.headers.get("Content-Length") or -1)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            self._json(413 if length > MAX_BODY_BYTES else 411,
                       {"error": {"message": f"a body of at most {MAX_BODY_BYTES} bytes "
                                             "with Content-Length is required"}})
            return
        try:
            body = json.loads(self.rfile.read(length) or b"null")
            parsed = parse_request(body, self.app.vocab_size, self.app.max_model_len,
                                   self.app.max_context)
        except (ValueError, RecursionError) as exc:
            self._json(400, {"error": {"message": str(exc).splitlines()[0][:300],
                                       "type": "BadRequestError"}})
            return
        self.app.complete(self, *parsed)


class LabHTTPServer(ThreadingHTTPServer):
    request_queue_size = 1024  # a hundred clients connect at once (the default backlog is 5)
    daemon_threads = True


class Server:
    def __init__(self, args):
        import torch

        from lab import model as lab_model
        from lab.engine import Engine
        from lab.vllm_metrics import VllmMetrics

        if args.threads:
            torch.set_num_threads(args.threads)
        dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
        # checked in float32 (bf16 rounding would blur a real mistake), then cast
        model = lab_model.build(args.preset, args.device, torch.float32)
        config = model.config
        error = lab_model.selfcheck(model, args.device)
        if not error <= SELFCHECK_TOLERANCE:
            raise SystemExit(f"serve_loop: the paged forward disagrees with transformers' "
                             f"({error:.3g} > {SELFCHECK_TOLERANCE:g})")
        model = model.to(dtype)
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        shape = lab_model.CacheShape(config.num_hidden_layers, config.num_key_value_heads,
                                     head_dim, args.block_size, args.kv_blocks + 1, dtype)
        cache = lab_model.PagedCache(shape, args.device)
        self.model_name = args.model_name
        self.vocab_size = config.vocab_size
        self.max_model_len = args.max_model_len
        self.max_context = cache.usable_blocks * args.block_size
        weights = sum(p.numel() * p.element_size() for p in model.parameters())
        non_embedding = sum(p.numel() for n, p in model.named_parameters() if "embed" not in n)
        cache_info = {
            "block_size": str(args.block_size), "cache_dtype": "auto",
            "num_gpu_blocks": str(cache.usable_blocks), "num_cpu_blocks": "None",
            "gpu_memory_utilization": "0.9", "enable_prefix_caching": "False",
            "kv_cache_memory_bytes": str(shape.bytes_per_token * self.max_context),
            "kv_cache_size_tokens": str(self.max_context), "sliding_window": "None"}
        lm_head = config.hidden_size * config.vocab_size
        scratch = VllmMetrics("warm-up", args.max_model_len, {"block_size": "1"})
        self.engine = Engine(lab_model.PagedForward(model, cache), scratch,
                             args.max_num_seqs, args.max_batched_tokens,
                             flops_per_token=2.0 * (non_embedding + lm_head),
                             weight_bytes=weights)
        self.health = {"status": "ok", "preset": args.preset, "device": args.device,
                       "dtype": args.dtype, "selfcheck_rel_error": error,
                       "weights_bytes": weights, "kv_pool_tokens": self.max_context,
                       "kv_bytes_per_token": shape.bytes_per_token, "pid": os.getpid()}
        self._warm_up()
        # counted from here: the warm-up went to a scratch registry
        self.metrics = VllmMetrics(args.model_name, args.max_model_len, cache_info)
        self.engine.metrics, self.engine.m = self.metrics, self.metrics.b

    def _warm_up(self) -> None:
        """One request through every path (cuBLAS handles, the allocator) before serving."""
        from lab.engine import Request

        request = Request(prompt=list(range(3, 40)), n=2, max_tokens=4, logprobs=2)
        self.engine.submit(request)
        while self.engine.running or self.engine.waiting:
            self.engine.step()

    def complete(self, handler: Handler, ids, n, max_tokens, logprobs, temperature, stream,
                 usage) -> None:
        from lab.engine import Request

        request = Request(prompt=ids, n=n, max_tokens=max_tokens, logprobs=logprobs,
                          temperature=temperature)
        self.engine.submit(request)
        rid, created = f"cmpl-{uuid.uuid4().hex}", int(time.time())
        head = {"id": rid, "object": "text_completion", "created": created, "model": self.model_name}
        try:
            if stream:
                self._stream(handler, request, head, usage)
            else:
                self._whole(handler, request, head)
        except OSError:  # the client went away: stop generating for it
            request.aborted = True

    def _stream(self, handler, request, head, usage) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()
        out = handler.wfile
        generated = 0
        for index, text, entry, reason in events(request, handler.connection):
            generated += 1
            choice = {"index": index, "text": text, "logprobs": _logprobs([(text, entry)])
                      if entry else None, "finish_reason": reason}
            out.write(b"data: " + json.dumps({**head, "choices": [choice]}).encode() + b"\n\n")
            out.flush()
        if usage:
            total = {"prompt_tokens": len(request.prompt), "completion_tokens": generated,
                     "total_tokens": len(request.prompt) + generated}
            out.write(b"data: " + json.dumps({**head, "choices": [], "usage": total}).encode()
                      + b"\n\n")
        out.write(b"data: [DONE]\n\n")
        out.flush()

    def _whole(self, handler, request, head) -> None:
        texts = {i: [] for i in range(request.n)}
        reasons = {}
        for index, text, entry, reason in events(request, handler.connection):
            texts[index].append((text, entry))
            if reason:
                reasons[index] = reason
        choices = [{"index": i, "text": "".join(t for t, _ in texts[i]),
                    "logprobs": _logprobs(texts[i]) if request.logprobs is not None else None,
                    "finish_reason": reasons.get(i)} for i in range(request.n)]
        generated = sum(len(v) for v in texts.values())
        handler._json(200, {**head, "choices": choices, "usage": {
            "prompt_tokens": len(request.prompt), "completion_tokens": generated,
            "total_tokens": len(request.prompt) + generated}})


def _logprobs(tokens: list) -> dict:
    """The completions API's logprobs object for (text, (logprob, top)) pairs."""
    offsets, at = [], 0
    for text, _ in tokens:
        offsets.append(at)
        at += len(text)
    return {"tokens": [t for t, _ in tokens],
            "token_logprobs": [e[0] if e else None for _, e in tokens],
            "top_logprobs": [e[1] if e else None for _, e in tokens],
            "text_offset": offsets}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="tiny", choices=["qwen2.5-0.5b", "llama-3.2-1b", "tiny"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default=None, choices=["bf16", "fp32"],
                        help="default bf16 on CUDA, fp32 on the CPU")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--model-name", default=None)
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--kv-blocks", type=int, default=2048, help="blocks in the KV pool")
    parser.add_argument("--max-num-seqs", type=int, default=256)
    parser.add_argument("--max-batched-tokens", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    args = parser.parse_args(argv)
    args.dtype = args.dtype or ("bf16" if args.device.startswith("cuda") else "fp32")
    args.model_name = args.model_name or f"lab/{args.preset}"
    if args.kv_blocks < 2 or args.block_size < 1 or args.max_model_len < 2:
        parser.error("--kv-blocks must be >= 2, --block-size >= 1, --max-model-len >= 2")
    started = time.monotonic()
    # vLLM answers HTTP from a process of its own; here the handlers share the engine's
    # interpreter, so they are given the GIL more often than every 5 ms
    sys.setswitchinterval(0.001)
    server = Server(args)
    Handler.app = server
    httpd = LabHTTPServer(("127.0.0.1", args.port), Handler)
    engine = threading.Thread(target=server.engine.run, name="engine-core", daemon=True)
    engine.start()
    print(f"serve_loop: {args.preset} on {args.device} ({args.dtype}), KV pool "
          f"{server.max_context} tokens, selfcheck {server.health['selfcheck_rel_error']:.2g}, "
          f"ready in {time.monotonic() - started:.1f} s on http://127.0.0.1:{args.port}",
          flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.engine.stop()
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
