"""Prompts somewhat longer than usual on a saturated server: each request's prompt twice its
usual length, every request still answered with its usual 200 tokens.  The step's token
budget now carries twice the prompt tokens per generated token, so the decodes get a smaller
share of it: tokens/s falls by a quarter, every token a third slower.  The prompt rate alone
(1.5x: longer prompts, but fewer of them admitted per second as the replies slow) read as
nothing; prompt tokens per generated token against its healthy proportion (2.0-2.2x) is the
measure.  The same longer prompts on a server with headroom cost nothing and open nothing."""

from __future__ import annotations

from tests.diagnosis_frames import START_WALL_S, Trace, episodes, named, noisy, run_frames

REPLY_TOKENS = 200.0


def _serve(trace: Trace, i: int, *, tokens: float, prompt_len: float, itl: float, ttft: float,
           kv: float, tensor: float) -> None:
    """One tick of a server whose requests each get a ``prompt_len``-token prompt and a
    200-token reply: requests are admitted as fast as replies finish (a closed loop at its
    capacity), so prompt tokens/s is the reply rate times the prompt length."""
    tokens = noisy(tokens, i, 0.04)
    admitted = tokens / REPLY_TOKENS
    trace.tick(util=noisy(97, i, 0.01), sm=75, tensor=tensor, dram=55, tokens=tokens,
               prompt=admitted * prompt_len, admitted=admitted, finished=admitted,
               running=30, kv=kv, itl=itl, ttft=ttft)


def _trace(*, fault_tokens: float, fault_itl: float, fault_ttft: float) -> list:
    trace = Trace()
    for i in range(150):
        _serve(trace, i, tokens=2000, prompt_len=300, itl=0.02, ttft=0.15, kv=0.40, tensor=40)
    for i in range(120):  # a client's prompts now twice as long
        _serve(trace, i, tokens=fault_tokens, prompt_len=640, itl=fault_itl, ttft=fault_ttft,
               kv=0.52, tensor=52)
    for i in range(60):
        _serve(trace, i, tokens=2000, prompt_len=300, itl=0.02, ttft=0.15, kv=0.40, tensor=40)
    return trace.frames


def test_prompts_twice_as_long_costing_a_quarter_of_the_output_are_prefill_interference():
    found = episodes(run_frames(_trace(fault_tokens=1500, fault_itl=0.027, fault_ttft=0.3)))
    assert found and {e.suspects[0][0] for e in found if e.suspects} == {
        "prefill_interference"}, named(found)
    assert all(150 <= e.start_wall_s - START_WALL_S <= 270 for e in found), named(found)


def test_the_same_prompts_on_a_server_with_headroom_open_nothing():
    """Twice the prompt length served at the usual speed (a new customer's documents on a
    server that had room for them): no harm, no episode."""
    found = episodes(run_frames(_trace(fault_tokens=2000, fault_itl=0.021, fault_ttft=0.2)))
    assert not found, named(found)
