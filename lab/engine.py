"""The serve loop's engine: continuous batching over the paged cache, one thread.

Each step first gives every running sequence the block its next token needs: when the
pool has none, the newest running request is preempted (its blocks go back to the pool,
it waits again at the head of the queue and recomputes its context when readmitted:
vLLM's recompute preemption).  Then, in a step that preempted nothing, waiting requests
are admitted first come, first served while the pool has blocks for their prompts (above
a 1% watermark) and the step's token budget allows: a whole prompt at a time, so a burst
of long prompts stalls the decode of everyone else for that step, which is what prefill
interference is.  Then one token is decoded for every running sequence.  A request with
n > 1 is n sequences sharing the prompt's keys and values (copied blocks).  When any
sequence of a step asks for logprobs, the whole batch's log-softmax over the vocabulary
is computed in float32 and the top-k gathered for every row, as vLLM V1's sampler does
with the batch's largest ``logprobs``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import torch

from lab.model import PagedCache, PagedForward
from lab.vllm_metrics import VllmMetrics

FIRST_TOKEN_ID = 3  # ids below are reserved (the byte-level prompt encoding starts here)


def encode(text: str) -> list[int]:
    """Byte-level token ids: the lab has no tokenizer to download and needs none."""
    return [FIRST_TOKEN_ID + b for b in text.encode()]


def token_text(token: int) -> str:
    """A token's text, distinct for every id: the byte for the byte-level ids when it is
    printable, else ``<id>`` (random weights produce no language anyway)."""
    byte = token - FIRST_TOKEN_ID
    if 32 <= byte < 127:
        return chr(byte)
    return f"<{token}>"


@dataclass
class Sequence:
    index: int
    tokens: list[int] = field(default_factory=list)
    blocks: list[int] = field(default_factory=list)
    first_token_s: float | None = None
    last_token_s: float | None = None
    done: bool = False


@dataclass
class Request:
    """One completion request; its tokens go to ``events`` as (choice, text, logprob entry
    or None, finish reason or None), and None when every choice is done."""

    prompt: list[int]
    n: int = 1
    max_tokens: int = 16
    logprobs: int | None = None
    temperature: float = 1.0
    arrival_s: float = field(default_factory=time.monotonic)
    events: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    seqs: list[Sequence] = field(default_factory=list)
    scheduled_s: float | None = None
    preemptions: int = 0
    aborted: bool = False

    def __post_init__(self) -> None:
        self.seqs = [Sequence(i) for i in range(self.n)]


class Engine:
    def __init__(self, forward: PagedForward, metrics: VllmMetrics, max_num_seqs: int,
                 max_batched_tokens: int, flops_per_token: float, weight_bytes: int):
        self.forward = forward
        self.cache: PagedCache = forward.cache
        self.metrics = metrics
        self.m = metrics.b
        self.max_num_seqs = max_num_seqs
        self.max_batched_tokens = max_batched_tokens
        self.flops_per_token = flops_per_token
        self.weight_bytes = weight_bytes
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.lock = threading.Condition()
        self.stopping = False
        self.steps = 0
        # blocks kept free when admitting, for the running sequences' next tokens (vLLM
        # keeps a 1% watermark likewise)
        self.watermark_blocks = max(1, self.cache.usable_blocks // 100)
        self.device = self.cache.k.device

    # --------------------------------------------------------------- outside the loop

    def submit(self, request: Request) -> None:
        with self.lock:
            self.waiting.append(request)
            self.lock.notify()

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            self.lock.notify()

    def run(self) -> None:
        while True:
            with self.lock:
                while not self.stopping and not self.waiting and not self.running:
                    self.lock.wait(0.5)
                if self.stopping:
                    return
            self.step()

    # --------------------------------------------------------------- one step

    def step(self) -> None:
        """Running sequences first (preempting the newest request when the pool cannot
        give them their next block), then, only in a step that preempted nothing,
        waiting requests (vLLM V1's order: a request admitted and preempted again in
        the same step would be prefilled for nothing)."""
        self._drop_aborted()
        decoding = [(r, s) for r in self.running for s in r.seqs if not s.done]
        decoding, preempted = self._make_room(decoding)
        admitted = [] if preempted else self._admit()
        now = time.monotonic()
        prefill_tokens = sum(self._prefill(r, now) for r in admitted)
        if decoding:
            self._decode(decoding)
        self.steps += 1
        if prefill_tokens or decoding:
            self.m["iteration_tokens"].observe(prefill_tokens + len(decoding))
        with self.lock:
            self._gauges()

    def _gauges(self) -> None:
        waiting = sum(r.n for r in self.waiting)
        self.m["running"].set(sum(1 for r in self.running for s in r.seqs if not s.done))
        self.m["waiting"].set(waiting)
        self.m["capacity"].set(waiting)
        self.m["kv_usage"].set(self.cache.used_ratio())

    def _drop_aborted(self) -> None:
        for request in [r for r in self.running if r.aborted]:
            self._release(request)
            self.running.remove(request)
            request.events.put(None)
        with self.lock:
            for request in [r for r in self.waiting if r.aborted]:
                self.waiting.remove(request)
                request.events.put(None)

    def _context(self, request: Request, seq: Sequence) -> list[int]:
        return request.prompt + seq.tokens

    def _admit(self) -> list[Request]:
        admitted: list[Request] = []
        budget = self.max_batched_tokens
        with self.lock:
            while self.waiting:
                request = self.waiting[0]
                live = [s for s in request.seqs if not s.done]
                running = sum(1 for r in self.running for s in r.seqs if not s.done)
                if running + len(live) > self.max_num_seqs:
                    break
                need = [len(self._context(request, s)) + 1 for s in live]
                tokens = max(need) if not any(s.tokens for s in live) else sum(need)
                if admitted and tokens > budget:
                    break
                wanted = sum(self.cache.blocks_for(n) for n in need)
                if wanted > len(self.cache.free) - (self.watermark_blocks if self.running else 0):
                    break  # waits for KV capacity
                blocks = [self.cache.allocate(self.cache.blocks_for(n)) for n in need]
                for seq, seq_blocks in zip(live, blocks):
                    seq.blocks = seq_blocks
                self.waiting.popleft()
                budget -= tokens
                admitted.append(request)
                self.running.append(request)
        return admitted

    def _prefill(self, request: Request, now: float) -> int:
        """Prefills a newly admitted (or resumed) request; returns the tokens computed."""
        if request.scheduled_s is None:
            request.scheduled_s = now
            self.m["queue"].observe(now - request.arrival_s)
        live = [s for s in request.seqs if not s.done]
        computed = 0
        if not any(s.tokens for s in live):  # fresh: one prefill, the blocks copied
            first = live[0]
            logits = self.forward.prefill(request.prompt, first.blocks)
            computed = len(request.prompt)
            for seq in live[1:]:
                self.cache.copy_blocks(first.blocks[: self.cache.blocks_for(computed)],
                                       seq.blocks[: self.cache.blocks_for(computed)])
            self.m["prompt_tokens"].inc(computed * len(live))
            self.m["prompt_tokens_cached"].inc(computed * (len(live) - 1))
            rows = logits[None, :].expand(len(live), -1)
        else:  # resumed after a preemption: each sequence recomputes its own context
            outs = []
            for seq in live:
                context = self._context(request, seq)
                outs.append(self.forward.prefill(context, seq.blocks))
                computed += len(context)
            self.m["prompt_tokens"].inc(computed)
            rows = torch.stack(outs)
        self._count_work(computed, computed, rows.shape[0])
        self._sample_and_emit([(request, s) for s in live], rows)
        return computed

    def _make_room(self, decoding: list[tuple[Request, Sequence]]):
        """(the sequences to decode, whether any request was preempted): every one gets
        the block its next position needs; when the pool is empty the newest running
        request is preempted until they fit."""
        bs = self.cache.shape.block_size
        preempted = False
        while True:
            short = [(r, s) for r, s in decoding
                     if len(self._context(r, s)) > len(s.blocks) * bs]
            for request, seq in short:
                got = self.cache.allocate(1)
                if got is None:
                    break
                seq.blocks.extend(got)
            else:
                return decoding, preempted
            victim = self.running[-1]
            self._preempt(victim)
            preempted = True
            decoding = [(r, s) for r, s in decoding if r is not victim]

    def _preempt(self, request: Request) -> None:
        self._release(request)
        self.running.remove(request)
        request.preemptions += 1
        self.m["preemptions"].inc()
        with self.lock:
            self.waiting.appendleft(request)

    def _release(self, request: Request) -> None:
        for seq in request.seqs:
            self.cache.release(seq.blocks)
            seq.blocks = []

    def _decode(self, decoding: list[tuple[Request, Sequence]]) -> None:
        last = [s.tokens[-1] for _, s in decoding]
        positions = [len(self._context(r, s)) - 1 for r, s in decoding]
        logits = self.forward.decode(last, positions, [s.blocks for _, s in decoding])
        self._count_work(len(decoding), sum(p + 1 for p in positions), len(decoding))
        self._sample_and_emit(decoding, logits)

    def _count_work(self, tokens: int, context_tokens: int, rows: int) -> None:
        """vLLM's --enable-mfu-metrics estimate: weights read once per forward, KV read for
        the context attended, KV written for the tokens computed."""
        kv = self.cache.shape.bytes_per_token
        self.m["flops"].inc(self.flops_per_token * tokens)
        self.m["read_bytes"].inc(self.weight_bytes + kv * context_tokens)
        self.m["write_bytes"].inc(kv * tokens)

    # --------------------------------------------------------------- sampling

    def _sample_and_emit(self, batch: list[tuple[Request, Sequence]], logits: torch.Tensor) -> None:
        logits = logits.float()
        temps = torch.tensor([r.temperature for r, _ in batch], device=logits.device)
        probs = torch.softmax(logits / temps.clamp(min=1e-5)[:, None], dim=-1)
        sampled = torch.multinomial(probs, 1)[:, 0]
        sampled = torch.where(temps == 0, logits.argmax(dim=-1), sampled)
        asked = [r.logprobs for r, _ in batch if r.logprobs is not None]
        want = max(asked) if asked else None
        top = None
        if want is not None:
            logprobs = torch.log_softmax(logits, dim=-1)  # the whole batch, every row
            chosen = logprobs.gather(1, sampled[:, None])[:, 0]
            if want > 0:
                values, ids = logprobs.topk(want, dim=-1)
                top = (chosen.tolist(), values.tolist(), ids.tolist())
            else:
                top = (chosen.tolist(), None, None)
        tokens = sampled.tolist()
        now = time.monotonic()
        finished: list[Request] = []
        for row, ((request, seq), token) in enumerate(zip(batch, tokens)):
            entry = None
            if request.logprobs is not None and top is not None:
                chosen, values, ids = top
                k = request.logprobs
                entry = (chosen[row], {} if not k else
                         {token_text(i): v for i, v in zip(ids[row][:k], values[row][:k])})
            if seq.first_token_s is None:
                seq.first_token_s = now
                self.m["ttft"].observe(now - request.arrival_s)
            else:
                self.m["itl"].observe(now - seq.last_token_s)
            seq.last_token_s = now
            seq.tokens.append(token)
            reason = None
            if len(seq.tokens) >= request.max_tokens:
                reason = "length"
                self._finish_seq(request, seq, now)
                if all(s.done for s in request.seqs):
                    finished.append(request)
            request.events.put((seq.index, token_text(token), entry, reason))
        self.m["generation_tokens"].inc(len(tokens))
        for request in finished:
            self._release(request)
            self.running.remove(request)
            self.m["params_n"].observe(request.n)
            self.m["max_generation"].observe(request.max_tokens)
            request.events.put(None)

    def _finish_seq(self, request: Request, seq: Sequence, now: float) -> None:
        seq.done = True
        self.cache.release(seq.blocks)
        seq.blocks = []
        generated = len(seq.tokens)
        self.m["e2e"].observe(now - request.arrival_s)
        self.m["inference"].observe(now - request.scheduled_s)
        self.m["prefill_time"].observe(seq.first_token_s - request.scheduled_s)
        self.m["decode_time"].observe(now - seq.first_token_s)
        if generated > 1:
            self.m["tpot"].observe((now - seq.first_token_s) / (generated - 1))
        self.m["prompt_hist"].observe(len(request.prompt))
        self.m["generation_hist"].observe(generated)
        self.m["params_max_tokens"].observe(request.max_tokens)
        self.m["request_preemptions"].observe(request.preemptions)
        self.metrics.b["length"].inc()
