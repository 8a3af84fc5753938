"""Work on the GPU read from its SMs where a job has no counter of its own: launches stalled
by the host (eBPF) leave the SMs doing less at the same busy time, and kernels that shrink
leave the card busier doing less.  Corpus AO (a ranking service, a reranker, a per-product
Python loop) had both and neither opened an episode: the busy time did not fall, and it sat
under the 80% where hollowness was judged."""

from __future__ import annotations

import pytest

from tests.diagnosis_frames import Trace, episodes, named, noisy, only


@pytest.mark.parametrize("stalled", [True, False])
def test_launch_stalls_that_halve_a_jobs_sm_work_are_named(stalled):
    """A CTR ranking service on an H100, eager PyTorch, no engine page and no counter: a NIC
    driver's IRQs land on its launch thread's core and eBPF reads its launch calls at 4 ms,
    not 6 us.  GPU-Util holds at ~62% while SM activity falls 13.5% -> 6.5%: half the work
    a second.  Without the stalls, SM activity falling alone names no launch finding."""
    trace = Trace(gpus=1, engine=None, procs=[(31406, 1, 0, "python3 ctr_rank.py")],
                  engine_pids=())
    for i in range(120):
        trace.tick(util=noisy(61, i, 0.01), sm=noisy(13.5, i, 0.02), launch_us=(4800, 6.0))
    for i in range(120):
        trace.tick(util=noisy(63, i, 0.01), sm=noisy(6.5, i, 0.03),
                   launch_us=(4800, 4000.0 if stalled else 6.0))
    found = episodes(trace.run())
    if stalled:
        assert found and found[0].suspects[0][0] == "host_launch_jitter", named(found)
    else:
        assert all(e.suspects[0][0] != "host_launch_jitter" for e in found), named(found)


def _reranker(sm_after: float, tensor_after: float) -> Trace:
    """A reranker at 23% GPU-Util, 19.5% SM; at 150 s its GPU-Util rises to 62%."""
    trace = Trace(gpus=1, engine=None, procs=[(37147, 1, 0, "python3 rerank.py")],
                  engine_pids=())
    for i in range(150):
        trace.tick(util=noisy(23, i, 0.05), sm=noisy(19.5, i, 0.05), tensor=20)
    for i in range(120):
        trace.tick(util=noisy(62, i, 0.03), sm=noisy(sm_after, i, 0.2 if sm_after < 5 else 0.03),
                   tensor=tensor_after)
    return trace


def test_a_card_busier_doing_less_is_tiny_kernels():
    """A reranker on an H200 beside the assistant: a refactor scores each candidate with its
    own forward, batch 1, eager.  GPU-Util rises 23% -> 62% while SM activity falls 20% ->
    1%: busier doing less, under the 80% GPU-Util at which hollowness was judged."""
    ep = only(_reranker(sm_after=1.2, tensor_after=0.5).run())
    assert ep.suspects[0][0] == "tiny_kernels", (ep.suspects, ep.evidence)


def test_a_card_busier_doing_more_is_no_tiny_kernels():
    """The control: the reranker's traffic doubles and both rise together (GPU-Util 23% ->
    62%, SM 20% -> 50%): busier doing more."""
    assert not episodes(_reranker(sm_after=50.0, tensor_after=45.0).run())
