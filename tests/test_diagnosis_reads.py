"""Every decode step far slower with the batch swelling to hold the output (Little's law):
is it work beside the forward pass (n sequences' logprobs sampled over the vocabulary: an
oversized request) or a pass that reads more (a quantised checkpoint's kernel falling back
to dequantise in HBM, an unfused path: memory bandwidth)?  The share of time DRAM is busy
says which: extra sampling leaves DRAM idle for longer (its share falls), a pass that reads
more keeps it busier even at the slower pace (its share rises a few points)."""

from __future__ import annotations

import pytest

from tests.diagnosis_frames import START_WALL_S, Trace, episodes, named, noisy, only


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


def test_a_servers_traffic_ebbing_under_80_percent_is_no_tiny_kernels():
    """A labelling client finishes and one or two engineers' chats remain: the batch falls
    40 -> 2, tokens/s 3000 -> 200, GPU-Util 75% -> 70%, and SM activity 45% -> 11% (at a
    batch of two the per-token kernels and attention fill a few SMs by design).  The busy
    time held while its SMs' share fell to a quarter, but the batch did not hold."""
    trace = Trace()
    for i in range(150):
        trace.tick(util=noisy(75, i, 0.02), sm=noisy(45, i, 0.03), tokens=noisy(3000, i, 0.03),
                   prompt=3000, running=40, itl=0.013, ttft=0.1)
    for i in range(150):
        trace.tick(util=noisy(70, i, 0.02), sm=noisy(11, i, 0.05), tokens=noisy(200, i, 0.05),
                   prompt=200, running=2, itl=0.009, ttft=0.05)
    assert all(e.suspects[0][0] != "tiny_kernels" for e in episodes(trace.run())), \
        [(e.headline, e.suspects) for e in episodes(trace.run())]


def _scatter(dram_before: float, dram_after: float, rate_after: float) -> Trace:
    """A 4-GPU BEV trainer exporting its samples counter (H100, GPM): 100% util, SM 82%,
    DRAM ``dram_before``, tensor 42%, 320 samples/s; after a config change,
    ``dram_after`` and ``rate_after`` samples/s, its tensor activity down with its pace."""
    procs = [(5001 + g, 5000, g, f"python train_bev.py --local-rank {g}") for g in range(4)]
    trace = Trace(gpus=4, engine="trainer", procs=procs, engine_pids=(5000, 5001, 5002, 5003,
                                                                      5004), tick_s=2.0)
    total = 0.0
    for i in range(60):
        total += 320.0 * 2.0
        trace.tick(work=round(total), util=noisy(100, i, 0.003), sm=noisy(82, i, 0.02),
                   dram=noisy(dram_before, i, 0.03), tensor=noisy(42, i, 0.03), power=700)
    for i in range(75):
        total += rate_after * 2.0
        trace.tick(work=round(total), util=noisy(100, i, 0.003), sm=noisy(82, i, 0.02),
                   dram=noisy(dram_after, i, 0.05), tensor=noisy(42 * rate_after / 320, i, 0.05),
                   power=690)
    return trace


def test_a_jobs_step_reading_twice_the_bytes_is_memory_bandwidth():
    """A config change switches the lidar voxel scatter to a dense BEV grid: DRAM activity
    40% -> 62% at 23% fewer samples/s (each sample reads twice the bytes), SM and GPU-Util as
    they were.  Nowhere near saturation on a tick's mean, but the step's time went to its
    memory, and the job's own counter paid for it."""
    ep = only(_scatter(40, 62, 246).run())
    assert ep.suspects[0][0] == "memory_bandwidth", (ep.suspects, ep.evidence)


def test_a_little_more_traffic_per_step_or_none_lost_is_no_memory_bandwidth():
    """A job at 60% DRAM whose steps each read a third more (73% at 15% fewer samples/s:
    1.43x), or the same dense scatter at full pace: neither says the steps wait on memory
    by as much as a tick's mean can hide."""
    assert all(e.suspects[0][0] != "memory_bandwidth" for e in episodes(_scatter(60, 73, 272).run()))
    assert episodes(_scatter(40, 62, 320).run()) == []
