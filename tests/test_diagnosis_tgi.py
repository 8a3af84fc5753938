"""TGI times no token: its page has each finished request's mean time per output token
(``tgi_request_mean_time_per_token_duration``), not vLLM's inter-token histogram.  That
mean is the request's ITL, and the only per-token latency TGI shows: the verdict reads it
where no ITL histogram exists (five TGI prefill faults in blind corpora AA-AG were silent
for want of it)."""

from __future__ import annotations

from dataclasses import replace

from gputop.model.detect import DetectConfig, _windows
from gputop.model.point import point
from tests.diagnosis_frames import Trace, episodes, named, noisy


def _tgi_chat(ticks: int = 150) -> Trace:
    """TGI serving a RAG app on one GPU: 2,000 tokens/s at 25 ms per token over 30 running
    requests (ten 200-token replies a second), 4,000 prompt tokens/s."""
    trace = Trace(engine="tgi")
    for i in range(ticks):
        trace.tick(util=noisy(90, i, 0.02), sm=None, dram=None, tokens=noisy(2000, i, 0.04),
                   prompt=noisy(4000, i, 0.1), running=30, itl=0.025)
    return trace


def _tgi_rag(prompt_late: float, tpot_late_s: float, running_late: float) -> Trace:
    """``_tgi_chat``, then ``prompt_late`` x the prompts, each request's
    tokens ``tpot_late_s`` apart on average and ``running_late`` requests in flight (at a
    steady arrival rate a slower request stays longer: the batch grows and tokens/s
    holds, so only the latency shows the harm)."""
    trace = _tgi_chat()
    for i in range(120):
        trace.tick(util=noisy(97, i, 0.01), sm=None, dram=None, tokens=noisy(2000, i, 0.04),
                   prompt=noisy(4000 * prompt_late, i, 0.1), running=running_late,
                   itl=tpot_late_s)
    return trace


def _window(trace: Trace):
    history: tuple = ()
    for end in range(1, len(trace.frames) + 1):
        history += (point(trace.frames[:end], history[-1] if history else None, None),)
    return _windows(history, history[-1], DetectConfig())


def test_a_tgi_requests_time_per_token_stands_for_its_itl():
    """The latency window of an engine that only has the per-request mean holds it as ITL
    (ten requests a second: too few for the per-token minimum, plenty of requests)..."""
    trace = Trace(engine="tgi")
    for _ in range(12):
        trace.tick(tokens=2000, running=30, itl=0.025)
    now, windows = _window(trace)
    assert now.itl_per_request and "itl" in windows
    p50, _ = now.latency["itl"]
    assert p50 is not None and 0.02 <= p50 <= 0.03 and now.latency["itl"] == now.latency["tpot"]


def test_an_engine_with_its_own_itl_keeps_it():
    """...while vLLM, whose page has both (each request's mean time per token 100 ms, every
    token 25 ms apart), is judged on its inter-token histogram."""
    vllm, tgi = Trace(engine="vllm"), Trace(engine="tgi")
    for _ in range(12):
        vllm.tick(tokens=2000, running=30, itl=0.025)
        tgi.tick(tokens=2000, running=30, itl=0.1)
    vllm.frames = [replace(f, engine=replace(f.engine, histograms=f.engine.histograms
                                             + g.engine.histograms))
                   for f, g in zip(vllm.frames, tgi.frames)]
    now, windows = _window(vllm)
    assert not now.itl_per_request and "tpot" in now.latency and "itl" in windows
    assert now.latency["itl"][0] is not None and now.latency["itl"][0] <= 0.03, now.latency


def test_long_prompts_slowing_every_tgi_request_are_prefill_interference():
    """Prompts 4x their normal and every request's tokens 3x apart (25 -> 75 ms), the batch
    grown to keep the output: prefill interference, read from the requests' own time per
    token (before, nothing opened: tokens/s held, and TGI has no ITL histogram)."""
    found = episodes(_tgi_rag(4.0, 0.075, 80).run())
    assert found and found[0].suspects[0][0] == "prefill_interference", named(found)


def test_tgi_with_more_prompts_at_its_usual_pace_is_healthy():
    """...while twice the prompts with every request's time per token as it was (more
    users, the box keeping up) opens nothing."""
    found = episodes(_tgi_rag(2.0, 0.025, 30).run())
    assert not found, named(found)


def test_short_replies_beside_tgis_chat_are_no_latency_collapse():
    """A guardrail client adds five requests a second of 1-3 tokens each beside the chat's
    200-token replies: each short reply's time per token is mostly its own prefill (TGI
    times a request from its batch entry), every token as fast as ever.  The tail of
    per-request means is a tail over request shapes, judged by no trigger (an adversarial
    review's probe read 'inter-token latency 4.8x' on the first cut)."""
    trace = _tgi_chat()
    for i in range(180):
        # ten chat replies a second as before, plus five short replies: an 80 ms prefill
        # and 25 ms a token over 1, 2 or 3 tokens (105, 65, 52 ms per token)
        trace.tick(util=noisy(90, i, 0.02), sm=None, dram=None, tokens=noisy(2010, i, 0.04),
                   prompt=noisy(6500, i, 0.1), running=30.5, itl=0.025, finished=10.0)
        for per_token_s, count in ((0.105, 2.0), (0.065, 2.0), (0.052, 1.0)):
            trace.hists["tpot"].observe(per_token_s, count)
    found = episodes(trace.run())
    assert not found, named(found)
