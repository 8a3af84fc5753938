"""The mechanisms a blind corpus (bench/heldout/corpus_y, a GPU cloud's support queue) showed
the verdict missing, one each, from the physics that makes them: a KV pool filled by far
longer prompts, a Python loop of tiny kernels that leaves the GPU two-thirds busy, and
clients' routine large requests behind an episode that outlasts their memory."""

from __future__ import annotations

from tests.diagnosis_frames import Trace, episodes, noisy, only


def test_a_pool_filled_by_far_longer_prompts_is_their_prefill():
    """A RAG customer starts sending 16k-token uncached prompts: prompt tokens per request
    11x, tokens/s a quarter, the inter-token tail 15x, first tokens in 5 s; their blocks fill
    the KV pool (10% -> 97%) and requests queue, nothing preempted.  The pool is full because
    of the prompts: the postmortem names their prefill, not a pool too small."""
    trace = Trace()
    for i in range(90):
        trace.tick(tokens=noisy(3300, i, 0.03), prompt=noisy(6000, i, 0.05), running=60,
                   kv=noisy(0.1, i, 0.1), itl=0.02, ttft=0.15)
    for i in range(90):
        trace.tick(tokens=noisy(800, i, 0.05), prompt=noisy(16000, i, 0.05), running=200,
                   waiting=5 * i, kv=0.97, dram=30, itl=0.3, ttft=5.0)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "prefill_interference", (ep.suspects, ep.evidence)
    assert "kv_pressure" in ep.why_not, ep.why_not


def test_a_python_loop_of_tiny_kernels_is_tiny_kernels_though_the_gpu_reads_two_thirds_busy():
    """A notebook's batched generation is replaced by a per-token sampling loop of
    element-wise ops on scalars: tens of thousands of tiny kernels a second.  The host's
    gaps between launches take GPU-Util 99% -> 66% in a saw-tooth, and the SMs' share of the
    busy time falls from 0.85 to 0.09: the kernels shrank, the input did not stall (the
    loop's thread was at 100% CPU all along)."""
    trace = Trace(engine=None, procs=[(9001, 9000, 0, "python3 -m ipykernel_launcher")])
    for i in range(120):
        trace.tick(util=noisy(99, i, 0.01), sm=noisy(84, i, 0.02), dram=40, tensor=45,
                   samples=(100, 100, 98, 100, 99, 100), proc_cpu=100)
    for i in range(120):
        trace.tick(util=noisy(66, i, 0.08), sm=noisy(6, i, 0.05), dram=2, tensor=0.5,
                   samples=(100, 35, 90, 30, 100, 40), proc_cpu=100)
    found = episodes(trace.run())
    assert found and all(e.suspects[0][0] == "tiny_kernels" for e in found), \
        [(e.headline, e.suspects) for e in found]


def _phase(trace: Trace, n: int, long_prompts: bool, every: int | None) -> None:
    for i in range(n):
        n8 = 1 if every and i % every == 0 else 0
        if long_prompts:
            trace.tick(tokens=noisy(800, i, 0.05), prompt=noisy(16000, i, 0.05), running=60,
                       kv=0.5, dram=30, itl=0.3, ttft=4.0, n8=n8)
        else:
            trace.tick(tokens=noisy(3300, i, 0.03), prompt=noisy(6000, i, 0.05), running=60,
                       kv=noisy(0.3, i, 0.1), itl=0.02, ttft=0.15, n8=n8)


def test_clients_routine_n8_requests_stay_routine_when_the_episode_reopens():
    """A service whose clients send an n=8 request every 15 s all along.  Long prompts stall
    the decodes for 90 s, let up for 25 s, and stall them again: one episode, reopened, of
    the prompts.  The n=8 requests were routine before it began; a reopening two minutes on
    is no reason to forget that and blame them."""
    trace = Trace()
    _phase(trace, 120, False, 15)
    _phase(trace, 90, True, 15)
    _phase(trace, 25, False, None)
    _phase(trace, 90, True, 15)
    _phase(trace, 40, False, None)
    found = episodes(trace.run())
    assert found and all(e.suspects[0][0] == "prefill_interference" for e in found), \
        [(e.headline, e.suspects) for e in found]
