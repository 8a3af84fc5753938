"""Prompts somewhat longer than usual on a saturated server: each request's prompt twice its
usual length, every request still answered with its usual 200 tokens.  The step's token
budget now carries twice the prompt tokens per generated token, so the decodes get a smaller
share of it: tokens/s falls by a quarter, every token a third slower.  The prompt rate alone
(1.5x: longer prompts, but fewer of them admitted per second as the replies slow) read as
nothing; prompt tokens per generated token against its healthy proportion (2.0-2.2x) is the
measure.  The same longer prompts on a server with headroom cost nothing and open nothing."""

from __future__ import annotations

import pytest

from tests.diagnosis_frames import (START_WALL_S, Trace, episodes, named, noisy, run_frames,
                                   scraped_every)

REPLY_TOKENS = 200.0


def _serve(trace: Trace, i: int, *, tokens: float, prompt_len: float, itl: float, ttft: float,
           kv: float, tensor: float, **more) -> None:
    """One tick of a server whose requests each get a ``prompt_len``-token prompt and a
    200-token reply: requests are admitted as fast as replies finish (a closed loop at its
    capacity), so prompt tokens/s is the reply rate times the prompt length."""
    tokens = noisy(tokens, i, 0.04)
    admitted = tokens / REPLY_TOKENS
    trace.tick(util=noisy(97, i, 0.01), tensor=tensor, dram=55, tokens=tokens,
               prompt=admitted * prompt_len, admitted=admitted, finished=admitted,
               running=30, kv=kv, itl=itl, ttft=ttft, **{"sm": 75, **more})


def _trace(*, fault_tokens: float, fault_itl: float, fault_ttft: float, **more) -> list:
    trace = Trace()
    for i in range(150):
        _serve(trace, i, tokens=2000, prompt_len=300, itl=0.02, ttft=0.15, kv=0.40, tensor=40)
    for i in range(120):  # a client's prompts now twice as long
        _serve(trace, i, tokens=fault_tokens, prompt_len=640, itl=fault_itl, ttft=fault_ttft,
               kv=0.52, tensor=52, **more)
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


@pytest.mark.parametrize("every_s", [5, 15])
def test_the_same_fault_read_every_few_seconds_is_named(every_s):
    """Read every 5 or 15 s the span still holds: its ticks are not learned as the service's
    normal while the strength waits out its span (learned, the fault would be the baseline
    in 30 s and never hold)."""
    frames = scraped_every(_trace(fault_tokens=1500, fault_itl=0.027, fault_ttft=0.3), every_s)
    found = episodes(run_frames(frames))
    assert found and {e.suspects[0][0] for e in found if e.suspects} == {
        "prefill_interference"}, named(found)


@pytest.mark.parametrize("fault, measure, cause", [
    (dict(extra_procs=[(9000, 1, 0, "python other_job.py", 30.0)], sm=60, proc_sm=45),
     "shared", "gpu_shared"),
    (dict(clock=1650.0, throttle=("thermal (hw)",), temp=88.0), "clock", "throttling")])
def test_a_tenant_or_a_cut_clock_beside_longer_prompts_keeps_its_own_finding(fault, measure,
                                                                             cause):
    """Another process's SM time, or a clock held down, slows every token whatever the
    prompts: the finding and its headline are theirs, not the prompts' (an adversarial
    review's probe: the prompts' measure took both over, headline and all)."""
    found = episodes(run_frames(_trace(fault_tokens=1500, fault_itl=0.027, fault_ttft=0.3,
                                       **fault)))
    assert [(e.measure, e.suspects[0][0]) for e in found] == [(measure, cause)], named(found)
