"""Every decode step far slower with the batch swelling to hold the output (Little's law):
is it work beside the forward pass (n sequences' logprobs sampled over the vocabulary: an
oversized request) or a pass that reads more (a quantised checkpoint's kernel falling back
to dequantise in HBM, an unfused path: memory bandwidth)?  The share of time DRAM is busy
says which: extra sampling leaves DRAM idle for longer (its share falls), a pass that reads
more keeps it busier even at the slower pace (its share rises a few points)."""

from __future__ import annotations

import pytest

from tests.diagnosis_frames import START_WALL_S, Trace, episodes, named, noisy


@pytest.mark.parametrize("dram_after,n8,cause", [(61.0, 0, "memory_bandwidth"),
                                                 (64.0, 0, "memory_bandwidth"),
                                                 (48.0, 0, "oversized_request"),
                                                 (61.0, 1, "oversized_request"),
                                                 (61.0, 2, "memory_bandwidth")])
def test_every_step_slower_is_memory_when_drams_share_rose(dram_after, n8, cause):
    """vLLM with a 70B AWQ model on two H100s, DRAM busy 55% of the time: at 150 s every
    step takes 2.5x as long, the batch swells from 30 to 60 sequences and tokens/s holds
    (the same demand).  With DRAM's share up 6-9 points the pass reads more (the image's
    Marlin kernel refused the group size: memory bandwidth); with it down 7 points, the
    step does other work (an n=8 x logprobs request: oversized).  Where the engine's own
    histograms show a new n=8 request while every step is slow (seen 12 s into it), its
    eight sequences reading the shared prompt's KV explain a few points more DRAM: the
    request stays the cause.  Routine ones, seen while all was well, do not (n8=2)."""
    trace = Trace(gpus=2)
    for i in range(150):  # (n8=2: routine n=8 requests while all is well)
        trace.tick(tokens=noisy(2000, i, 0.03), running=noisy(30, i, 0.03), itl=0.02,
                   dram=noisy(55, i, 0.03), sm=90, util=99, finished=10.0,
                   n8=1 if n8 == 2 and i in (40, 80, 110) else 0)
    for i in range(120):
        trace.tick(tokens=noisy(2000, i, 0.03), running=noisy(60, i, 0.03), itl=0.05,
                   dram=noisy(dram_after, i, 0.03), sm=90, util=99, finished=10.0,
                   n8=1 if n8 and i == 12 else 0)
    found = episodes(trace.run())
    assert found, "nothing opened"
    assert found[0].suspects[0][0] == cause, named(found)
    assert found[0].start_wall_s >= START_WALL_S + 150, named(found)
