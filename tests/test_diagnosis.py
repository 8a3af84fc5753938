"""The diagnosis on situations the old detector got wrong (issue 20), one mechanism each:
episodes without an engine, no fixed busy gate, demand and restarts, a verdict that stands,
the right GPU, engine truth (cache hits, KV pressure, a second tenant, the host's CPU)."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest

from gputop.model.detect import _step_shows
from gputop.model.features import batch_decodes
from gputop.model.enginehist import HistDelta, median_and_p99
from gputop.model.thresholds import t
from tests.diagnosis_frames import (START_WALL_S, Trace, data_parallel, episodes, noisy, only,
                                    opened_at, run_frames, saw_tooth)

TRAIN = [(5001 + g, 5000, g, "python -u train.py --model llama-8b") for g in range(4)]


def test_a_cuda_graph_loop_of_tiny_kernels_without_an_engine_is_named():
    """The H200's graph phase: 100% GPU-Util on ~1 of 132 SMs, no engine to ask."""
    trace = Trace(engine=None, procs=[(7001, 1, 0, "python gpu_check.py")])
    for i in range(60):
        trace.tick(util=noisy(98, i, 0.01), sm=noisy(93, i, 0.02), dram=60, tensor=80)
    for i in range(20):
        trace.tick(util=100, sm=0.6, dram=1, tensor=0)
    for i in range(15):
        trace.tick(util=0, sm=0, dram=0, tensor=0)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "tiny_kernels" and ep.kind == "busy_unproductive"
    assert ep.gpus == (0,) and ep.measure == "hollow"
    assert "SM active 1%" in ep.headline or "SM active 0%" in ep.headline


def test_a_dataloader_stall_of_a_training_job_without_an_engine():
    """GPU-Util in a saw-tooth (steps, then waits for the next batch) on all four ranks."""
    trace = Trace(gpus=4, engine=None, procs=TRAIN)
    for i in range(70):
        trace.tick(util=noisy(97, i, 0.01), sm=80, samples=(noisy(97, i, 0.01),) * 6)
    for i in range(30):  # a 3 s period: one busy second, two waiting
        busy = i % 3 == 0
        trace.tick(util=97 if busy else 8, sm=80 if busy else 5,
                   samples=(97,) * 6 if busy else (6,) * 6)
    for i in range(20):
        trace.tick(util=97, sm=80, samples=(97,) * 6)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "input_stall", (ep.suspects, ep.evidence)
    assert ep.kind == "starved" and set(ep.gpus) == {0, 1, 2, 3}
    assert any("between steps" in e for e in ep.evidence)


def test_host_contention_opens_an_episode_below_any_busy_gate():
    """The launching thread gets a third of a core: util 85% -> 55%, continuous batching grows
    the batch so tokens/s only falls to 0.8x, the queue grows to hundreds; /proc shows it."""
    trace = Trace()
    for i in range(70):
        trace.tick(util=noisy(85, i, 0.03), sm=60, tokens=noisy(2000, i, 0.05), running=30,
                   waiting=i % 2, itl=0.02, psi=3, run_queue=6, tree_cpu=100, involuntary=200)
    for i in range(40):
        trace.tick(util=noisy(55, i, 0.05), sm=38, tokens=1600, running=64, waiting=20 + 8 * i,
                   itl=0.045, ttft=12.0, psi=55, run_queue=40, cpus=16, tree_cpu=34,
                   involuntary=900)
    ep = only(trace.run())
    assert ep.kind == "starved" and "waiting on the host" in ep.headline
    assert ep.suspects[0][0] == "host_cpu_contention", (ep.suspects, ep.evidence)
    assert any(e.startswith("CPU pressure 55%") for e in ep.evidence)


def test_a_dip_in_gpu_util_that_costs_nothing_is_no_episode():
    """One of eight independent servers: GPU-Util dips 69% -> 50% for a few ticks while its
    batch, tokens/s and latency hold.  The same output in less busy time waited on nothing."""
    trace = Trace()
    for i in range(70):
        trace.tick(util=noisy(69, i, 0.02), sm=50, tokens=noisy(900, i, 0.05), running=8,
                   itl=0.02)
    for i in range(8):
        trace.tick(util=50, sm=36, tokens=noisy(930, i, 0.05), running=8, itl=0.02)
    for i in range(20):
        trace.tick(util=noisy(69, i, 0.02), sm=50, tokens=noisy(900, i, 0.05), running=8,
                   itl=0.02)
    assert not episodes(trace.run())


def test_util_falling_while_a_larger_batch_holds_tokens_is_the_host():
    """The look-alike: a crowded host takes the engine's CPU, GPU-Util 98% -> 80%, and
    continuous batching holds tokens/s by running 20 -> 35 sequences (each request slower:
    Little's law).  Output held only by a larger batch is a GPU waiting on the host."""
    trace = Trace()
    for i in range(70):
        trace.tick(util=noisy(98, i, 0.01), sm=70, tokens=noisy(2000, i, 0.05), running=20,
                   itl=0.02, psi=3, run_queue=6, tree_cpu=100, involuntary=200)
    for i in range(40):
        trace.tick(util=noisy(80, i, 0.02), sm=57, tokens=noisy(2050, i, 0.05), running=35,
                   itl=0.02, psi=45, run_queue=40, cpus=16, tree_cpu=55, involuntary=900)
    ep = only(trace.run())
    assert ep.kind == "starved", ep.headline
    assert ep.suspects[0][0] == "host_cpu_contention", (ep.suspects, ep.evidence)


def test_the_verdict_of_a_tensor_parallel_gridlock_stands_after_recovery():
    """One GPU held at 750 MHz, the others waiting in the collective; after recovery the
    queue drains for a while: the verdict stays the straggler, naming GPU 1."""
    trace = Trace(gpus=4)
    for i in range(70):
        trace.tick(util=noisy(92, i, 0.02), sm=75, tokens=noisy(3000, i, 0.04), running=40,
                   itl=0.03, clock=1980)
    for i in range(30):
        trace.tick(util=97, sm=[42, 75, 42, 42], clock=[1980, 750, 1980, 1980], tokens=1500,
                   running=40, waiting=10 + 3 * i, itl=0.075)
    for i in range(30):  # recovered: clocks back, the backlog drains at full speed
        trace.tick(util=98, sm=80, clock=1980, tokens=3600, running=60,
                   waiting=max(0, 100 - 4 * i), itl=0.035)
    states = trace.run()
    ep = only(states)
    assert ep.end_wall_s is not None
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.history)
    assert ep.gpus == (1,) and set(ep.job_gpus) == {0, 1, 2, 3}
    assert [c for _, c in ep.history][-1] == "collective_straggler"


def test_one_tensor_parallel_ranks_preempted_launches_name_its_gpu():
    """TP4: rank 2's launching thread shares its core (eBPF: its own process's launches last
    a scheduler slice, the other ranks' a few microseconds); every rank waits for it in the
    collective, so the GPUs idle alike: the episode names GPU 2 first, by its process (each
    rank's calls counted on the GPU where it holds most memory: every rank also holds a
    stray context on GPU 0)."""
    trace = Trace(gpus=4)
    for i in range(70):
        trace.tick(util=noisy(93, i, 0.02), sm=70, tokens=noisy(3000, i, 0.04), running=40,
                   itl=0.03, launch_us=(180, 9.0))
    stray = tuple((4100 + g, 4000, 0, "python -m vllm.entrypoints.openai.api_server --tp 4", 0)
                  for g in (1, 2, 3))  # each rank also holds a context on GPU 0
    for i in range(40):
        trace.tick(util=noisy(74, i, 0.03), sm=55, tokens=2100, running=40, waiting=5 + i,
                   itl=0.05, launch_us=[(180, 9.0), (180, 11.0), (180, 8000.0), (180, 9.0)],
                   extra_procs=stray)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "host_launch_jitter", (ep.suspects, ep.evidence)
    assert ep.gpus == (2,) and set(ep.job_gpus) == {0, 1, 2, 3}, ep.headline


def test_every_step_slower_with_nothing_else_moving_is_an_oversized_request():
    """Requests asking for top-20 logprobs of 4 samples each: every step samples over the
    vocabulary, ITL 7x; arrivals hold, so each request staying longer swells the batch
    (Little's law) instead of queueing, and the engine's histograms name no large n.  No
    prefill, no more memory traffic, clocks held: the per-step work is the verdict."""
    trace = Trace()
    for i in range(80):
        trace.tick(util=noisy(94, i, 0.02), sm=70, dram=50, tokens=noisy(800, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=8, itl=0.014, ttft=0.06)
    for i in range(60):
        trace.tick(util=99, sm=66, dram=30, tokens=noisy(620, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=min(70, 10 + 2 * i), itl=0.1,
                   ttft=0.12, power=520)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "oversized_request", (ep.suspects, ep.evidence)


@pytest.mark.parametrize("tick_s", [2.0, 10.0])
def test_a_latency_collapse_opens_at_a_two_second_interval(tick_s):
    """gputop --interval 2: long prompts flood in, ITL p99 5x, tokens/s held by a growing
    batch.  Slow observations must come from three separate readings; at 2 s those span
    4 s, longer than the 3 s hold (the episode never opened); at 10 s, 20 s."""
    trace = Trace(tick_s=tick_s)
    for i in range(int(120 / tick_s)):
        trace.tick(util=noisy(93, i, 0.02), sm=70, tokens=noisy(2000, i, 0.05),
                   prompt=noisy(2000, i, 0.05), running=30, itl=0.02, ttft=0.15)
    for i in range(30):
        trace.tick(util=98, sm=85, tensor=70, dram=35, tokens=noisy(1900, i, 0.05),
                   prompt=noisy(7000, i, 0.05), running=40, itl=0.1, ttft=1.2, power=690)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "prefill_interference", (ep.suspects, ep.evidence)


def test_a_batch_job_on_an_idle_server_is_no_collapse():
    """A nightly batch: 9,000 requests submitted at once to a server that idled (a request
    now and then, each gone before the next scrape: the batch gauge reads 0).  256 run,
    thousands wait, every token slower as a full batch's are: its normal is a batch of
    one, scaled to 256."""
    trace = Trace()
    for i in range(60):
        trace.tick(util=5 if i % 7 else 60, sm=3, tokens=60 if i % 7 == 0 else 5,
                   prompt=200 if i % 7 == 0 else 0, running=0, itl=noisy(0.01, i, 0.05),
                   ttft=0.03)
    for i in range(60):
        trace.tick(util=99, sm=93, tensor=70, dram=35, tokens=9000, prompt=30000, running=256,
                   waiting=8000 - 30 * i, itl=0.09, ttft=60.0, power=690)
    assert not episodes(trace.run())


@pytest.mark.parametrize("command", [
    "python3 -u train.py --local-rank={g}",
    "python3 -u train.py --local_rank {g} --deepspeed ds.json",
    "python3 -u train.py --local-rank={g}  (pid {pid} in its container)"])
def test_a_straggler_on_gpus_without_an_sm_counter_is_named_by_its_power(command):
    """FSDP on four A100s (no GPM: no SM activity), ranks started by
    torch.distributed.launch or DeepSpeed (each command line with its own --local-rank=N;
    in a container, gputop adds the rank's own pid there): one job.  Rank 1 gets the long
    sequences: it computes at the power cap (clock down 8%) while the others spin in the
    all-gather at full util drawing a quarter less."""
    procs = [(7001 + g, 7000, g, command.format(g=g, pid=20 + g)) for g in range(4)]
    trace = Trace(gpus=4, engine=None, procs=procs, engine_pids=())
    for i in range(90):
        trace.tick(util=99, sm=None, dram=None, power=noisy(396, i, 0.01), clock=1320,
                   throttle=("power cap",))
    for i in range(60):
        trace.tick(util=99, sm=None, dram=None, power=[301, noisy(396, i, 0.01), 301, 301],
                   clock=[1410, 1294, 1410, 1410], throttle=[(), ("power cap",), (), ()])
    ep = only(trace.run())
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (1,) and set(ep.job_gpus) == {0, 1, 2, 3}, ep.headline
    # the rank's power at its peak against the others' (396 W, +-1% noise; they wait at 301)
    drawn = [int(m.group(1)) for e in ep.evidence
             if (m := re.search(r"GPU 1 draws (\d+) W while GPUs 0,2,3 wait at 301 W", e))]
    assert drawn and 392 <= drawn[0] <= 400, ep.evidence


def test_launch_stalls_of_a_training_job_without_an_engine_are_named():
    """An eager training loop, no engine, eBPF on: its launch calls start lasting a scheduler
    slice (the host core it runs on is shared) and GPU-Util falls 99% -> 66%."""
    procs = [(7101, 7100, 0, "python3 train.py")]
    trace = Trace(gpus=1, engine=None, procs=procs, engine_pids=())
    for i in range(90):
        trace.tick(util=noisy(99, i, 0.005), sm=80, launch_us=(4800, 9.0))
    for i in range(60):
        trace.tick(util=noisy(66, i, 0.03), sm=54, launch_us=(4800, 8000.0))
    ep = only(trace.run())
    assert ep.suspects[0][0] == "host_launch_jitter", (ep.suspects, ep.evidence)


@pytest.mark.parametrize("stalled", [True, False])
def test_a_ddp_ranks_launch_stalls_that_cost_its_steps_are_named(stalled):
    """2x H200 training a small, launch-bound model with a step counter: a real-time agent
    lands on rank 0's launch core and preempts it for ~5 ms, 80 times a second (eBPF: those
    launch calls last a scheduler slice).  The job makes 0.8x its steps, but GPU-Util holds
    at ~91% (the peer waits in NCCL and rank 0's GPU works on what was queued), so no busy
    time is lost to show it: the job's own counter does.  Without the stalls, the same
    fall of the counter alone is no launch finding."""
    procs = [(5101 + g, 5100, g, "python -u train.py --model gpt2-small") for g in range(2)]
    trace, total = Trace(gpus=2, engine="trainer", procs=procs, engine_pids=(5100, 5101, 5102),
                         tick_s=2.0), [0.0]
    quiet = [(4800, 9.0), (4800, 9.0)]
    _steps(trace, 60, 320.0, total, util=lambda i: noisy(91, i, 0.01), sm=84, launch_us=quiet)
    _steps(trace, 65, 256.0, total, util=lambda i: noisy(91, i, 0.01), sm=84,
           launch_us=[(4800, 5000.0, 80), (4800, 9.0)] if stalled else quiet)
    _steps(trace, 20, 320.0, total, util=lambda i: noisy(91, i, 0.01), sm=84, launch_us=quiet)
    found = [e for e in episodes(trace.run())
             if e.suspects and e.suspects[0][0] == "host_launch_jitter"]
    if not stalled:
        assert found == [], [(e.headline, e.suspects) for e in found]
        return
    assert len(found) == 1, [(e.headline, e.suspects) for e in episodes(trace.run())]
    assert found[0].gpus[0] == 0, (found[0].gpus, found[0].evidence)


def test_a_burst_of_long_prompts_on_a_quiet_server_is_no_collapse():
    """RAG with 7k-token prompts, two to five requests at a time; seven arrive together:
    while they are prefilled (the batch 1 -> 8) tokens/s reads a fifth for a few seconds,
    and no cause explains it. Arrivals being admitted, not a stall."""
    trace = Trace(tick_s=2.0)
    for i in range(38):
        trace.tick(util=noisy(92, i, 0.03), sm=70, tokens=noisy(300, i, 0.1),
                   prompt=noisy(5400, i, 0.1), running=2 + i % 4, itl=0.025, ttft=0.5)
    for running, tokens in ((1, 200), (0, 150), (5, 60), (8, 40), (8, 50), (8, 60),
                            (4, 370)):
        trace.tick(util=99, sm=85, tokens=tokens, prompt=5000, running=running, waiting=1,
                   itl=0.027, ttft=0.7)
    for i in range(20):
        trace.tick(util=noisy(92, i, 0.03), sm=70, tokens=noisy(300, i, 0.1),
                   prompt=noisy(5400, i, 0.1), running=1 + i % 3, itl=0.025, ttft=0.5)
    assert not episodes(trace.run())


def test_one_user_pausing_between_messages_is_no_starved_gpu():
    """llama-server with one person chatting: one request at a time, GPU-Util following
    their pauses (79% on average, 62% for a while). No queue: nothing waits on the host."""
    trace = Trace(engine="llamacpp")
    for i in range(80):
        trace.tick(util=noisy(79, i, 0.06), sm=None, dram=None, tokens=noisy(70, i, 0.1),
                   prompt=noisy(140, i, 0.1), running=1, itl=0.014)
    for i in range(120):
        trace.tick(util=noisy(62, i, 0.08), sm=None, dram=None, tokens=noisy(45, i, 0.1),
                   prompt=noisy(80, i, 0.1), running=1, itl=0.014)
    assert not episodes(trace.run())


def test_a_queue_at_a_full_server_whose_tokens_are_as_fast_as_ever_is_demand():
    """llama-server with all 8 slots busy: arrivals outpace it and the queue grows 4 -> 24,
    its tokens/s (counted as requests finish) at 0.6x for half a minute, then a lump.  Each token's
    decode time holds at 25 ms from a batch as large as ever: demand, not a slower engine."""
    trace = Trace(engine="llamacpp")
    for i in range(80):
        tokens = noisy(300, i, 0.1)
        trace.tick(util=noisy(97, i, 0.01), sm=None, dram=None, tokens=tokens,
                   prompt=noisy(900, i, 0.1), running=8, waiting=4, itl=0.025,
                   decode_s=tokens * 8 * 0.025 / 8, prefill_s=0.1)
    for i in range(50):
        tokens = noisy(170, i, 0.1) if i < 30 else noisy(420, i, 0.1)  # lumps as they end
        trace.tick(util=noisy(97, i, 0.01), sm=None, dram=None, tokens=tokens,
                   prompt=noisy(900, i, 0.1), running=8, waiting=4 + i * 0.4, itl=0.025,
                   decode_s=tokens * 0.025, prefill_s=0.1)
    assert not episodes(trace.run())


def test_llamacpp_every_token_slower_is_read_from_its_decode_seconds():
    """llama-server has no latency histograms; it counts its decode seconds and generated
    tokens.  One slot asks for n_probs=500 over a long generation: every batch waits on its
    sampling, each token 13 -> 49 ms, the other slots stay longer (2 -> 5 busy), tokens/s
    0.7x.  Decode seconds per token is each sequence's ITL: every step slower, nothing
    else moving."""
    trace = Trace(engine="llamacpp")
    for i in range(80):
        tokens = noisy(160, i, 0.08)
        trace.tick(util=noisy(91, i, 0.03), sm=None, dram=None, power=215, tokens=tokens,
                   prompt=noisy(330, i, 0.1), running=2, decode_s=tokens * 0.013,
                   prefill_s=0.05)
    for i in range(60):
        tokens = noisy(115, i, 0.08)
        trace.tick(util=98, sm=None, dram=None, power=160, tokens=tokens,
                   prompt=noisy(250, i, 0.1), running=5, waiting=1, decode_s=tokens * 0.049,
                   prefill_s=0.05)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "oversized_request", (ep.suspects, ep.evidence)
    assert any("of decode" in e for e in ep.evidence), ep.evidence


def test_a_milder_straggler_without_an_sm_counter_is_named_by_its_power():
    """FSDP on four A100s (no GPM, no counter): a packing bug gives rank 2 the long
    sequences.  GPU-Util stays at 99% on all four (NCCL spins); rank 2 keeps drawing its
    280 W while the others, waiting, fall to 235 W: 1.2x its peers where they drew alike."""
    trace = _ranks(4)
    for i in range(90):
        trace.tick(util=99, sm=None, dram=None, power=[noisy(280, i + g, 0.01) for g in range(4)],
                   clock=1410)
    for i in range(120):
        trace.tick(util=99, sm=None, dram=None, clock=1410, power=[
            noisy(280 if g == 2 else 235, i + g, 0.01) for g in range(4)])
    ep = only(trace.run())
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (2,), ep.headline


def test_cards_of_different_power_limits_in_a_lighter_phase_are_no_straggler():
    """Four A100s of one job, GPU 0 capped at 300 W and the others at 400 W, all at their
    caps while healthy; a lighter phase (an eval pass) has all four draw 250 W at full
    util.  GPU 0 is no rank still computing: it fell under its own normal like the rest."""
    procs = [(7001 + g, 7000, g, "python3 -u train.py") for g in range(4)]
    trace = Trace(gpus=4, engine=None, procs=procs, engine_pids=())
    for i in range(90):
        trace.tick(util=99, sm=None, dram=None, power=[300, 400, 400, 400], clock=1300,
                   throttle=("power cap",))
    for i in range(60):
        trace.tick(util=99, sm=None, dram=None, power=noisy(250, i, 0.01), clock=1410)
    assert not any(e.suspects and e.suspects[0][0] == "collective_straggler"
                   for e in episodes(trace.run()))


def test_every_step_slower_with_the_batch_flat_is_not_blamed_on_a_request():
    """ITL 3x with the batch flat at 8, nothing else moving: no request staying longer
    (the batch would swell by Little's law), so nothing says oversized_request."""
    trace = Trace()
    for i in range(80):
        trace.tick(util=noisy(94, i, 0.02), sm=70, dram=50, tokens=noisy(800, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=8, itl=0.014, ttft=0.06)
    for i in range(60):
        trace.tick(util=99, sm=70, dram=50, tokens=noisy(600, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=8, itl=0.042, ttft=0.08)
    assert not any(e.suspects and e.suspects[0][0] == "oversized_request"
                   for e in episodes(trace.run()))


def test_llamacpp_prompts_taking_its_time_is_prefill_interference():
    """llama-server, four slots: users paste 7k-token documents.  Its prompt seconds go from
    4% of the engine's time to 70%, the other slots' tokens/s halves and requests queue
    (no latency histograms to show the stall; the prompt seconds do)."""
    trace = Trace(engine="llamacpp")
    for i in range(80):
        tokens = noisy(170, i, 0.08)
        trace.tick(util=noisy(87, i, 0.03), sm=None, dram=None, tokens=tokens,
                   prompt=noisy(340, i, 0.1), running=2, decode_s=tokens * 0.012,
                   prefill_s=0.09)
    for i in range(60):
        tokens = noisy(95, i, 0.08)
        trace.tick(util=98, sm=None, dram=None, tokens=tokens, prompt=noisy(1600, i, 0.1),
                   running=4, waiting=min(12, i // 4), decode_s=tokens * 0.018, prefill_s=4.0)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "prefill_interference", (ep.suspects, ep.evidence)
    assert any("prompts take" in e for e in ep.evidence), ep.evidence


def test_eight_servers_the_one_watched_is_named_not_every_busy_gpu():
    """Eight independent vLLMs; gputop reads the one on GPU 3, which becomes bandwidth
    bound (longer contexts); the other seven stay busy and healthy."""
    procs = [(6000 + g, 1, g, f"vllm serve m --port {8000 + g}") for g in range(8)]
    trace = Trace(gpus=8, procs=procs, engine_pids=(6003,))
    for i in range(70):
        trace.tick(util=noisy(93, i, 0.02), sm=70, dram=60, tokens=noisy(2000, i, 0.05),
                   running=30, itl=0.02)
    for i in range(30):
        trace.tick(util=[93] * 3 + [99] + [93] * 4, sm=[70] * 3 + [85] + [70] * 4,
                   dram=[60] * 3 + [96] + [60] * 4, tokens=800, running=30, waiting=12, itl=0.05)
    ep = only(trace.run())
    assert ep.gpus == (3,) and ep.job_gpus == (3,), ep.headline
    assert ep.suspects[0][0] == "memory_bandwidth", ep.suspects
    assert ep.headline.startswith("GPU 3 ")


def test_prefix_cache_hits_are_not_a_prefill_burst():
    """A bandwidth-bound collapse while prompt tokens go 10x, all of them cache hits (counted
    in prompt_tokens_total, never computed): no prefill work, so not prefill interference."""
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(2000, i, 0.05), prompt=2000, cached=200, dram=60)
    for i in range(40):
        trace.tick(tokens=700, prompt=20000, cached=18200, dram=96, running=30, waiting=10,
                   itl=0.06)
    states = trace.run()
    ep = only(states)
    assert ep.suspects[0][0] == "memory_bandwidth", ep.suspects
    assert "prefill_interference" not in dict(ep.suspects)
    assert not any("prefill" in e for e in ep.evidence), ep.evidence
    assert states[-1].point.compute_prompt_tokens_per_s < 2500  # what the engine computed


def _growing_contexts(*, tensor, dram, mem_util=None):
    """Agent sessions whose contexts grow 3k -> 30k tokens: each turn's new text is computed
    (prompt tokens/s 8x), the batch holds, the KV pool fills and each token takes 3x."""
    gpm = mem_util is None
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(2000, i, 0.05), prompt=noisy(2000, i, 0.1), kv=0.3,
                   tensor=noisy(8, i, 0.1) if gpm else 0, dram=noisy(75, i, 0.02) if gpm
                   else None, sm=70 if gpm else None,
                   mem_util=None if gpm else noisy(60, i, 0.03), itl=0.02)
    for i in range(40):
        trace.tick(tokens=noisy(800, i, 0.05), prompt=noisy(16000, i, 0.1), kv=0.85,
                   tensor=tensor if gpm else 0, dram=dram if gpm else None,
                   sm=70 if gpm else None, mem_util=mem_util, itl=0.06, ttft=0.5)
    return only(trace.run())


def test_prompts_that_raise_no_compute_are_not_what_slows_the_step():
    """Prefill is tensor-core GEMMs: prompts being prefilled raise tensor activity and take
    the step's time from DRAM.  Here prompt tokens go 8x, but tensor activity stays at 8%
    and DRAM at its 75% while every sequence's context grows: the step reads more KV."""
    ep = _growing_contexts(tensor=9, dram=77)
    assert ep.suspects[0][0] == "memory_bandwidth", (ep.suspects, ep.evidence)


def test_prompts_that_raise_compute_are_prefill_work():
    """The look-alike: the same 8x prompts with tensor activity up 8 -> 60% and DRAM's share
    falling 75 -> 45% (without GPM, the memory controller's busy time 60 -> 35%)."""
    ep = _growing_contexts(tensor=60, dram=45)
    assert ep.suspects[0][0] == "prefill_interference", (ep.suspects, ep.evidence)
    ep = _growing_contexts(tensor=None, dram=None, mem_util=35)
    assert ep.suspects[0][0] == "prefill_interference", (ep.suspects, ep.evidence)


def test_traffic_falling_to_a_tenth_while_util_stays_high_is_no_collapse():
    trace = Trace()
    for i in range(70):
        trace.tick(util=96, tokens=noisy(4000, i, 0.04), running=40)
    for i in range(120):  # two minutes: arrivals fall, a few long sequences keep util at 96%
        share = 1.0 - 0.9 * i / 119
        trace.tick(util=96, tokens=4000 * share, running=max(4, round(40 * share)), waiting=0,
                   itl=0.02 * (0.6 + 0.4 * share))
    for i in range(60):
        trace.tick(util=96, tokens=noisy(400, i, 0.05), running=4, itl=0.012)
    assert episodes(trace.run()) == []


def test_a_model_reload_with_a_slow_start_is_no_episode():
    """Endpoint gone 40 s, VRAM empties and refills, counters restart from 0, then a load
    balancer ramps traffic from 5% back to 100% over 90 s (latency grows with the batch)."""
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(3000, i, 0.04), running=40, itl=0.03)
    for i in range(40):
        trace.tick(util=0, sm=0, engine_up=False)
    trace.restart_counters()
    for i in range(150):
        share = min(1.0, 0.05 + 0.95 * i / 90)
        trace.tick(util=30 + 62 * share, sm=20 + 55 * share, tokens=3000 * share,
                   running=max(1, round(40 * share)), itl=0.012 + 0.018 * share)
    assert episodes(trace.run()) == []


def test_a_service_ramping_up_from_its_first_requests_is_no_episode():
    """A fresh vLLM serves its first two requests for 90 s (10 ms a token), then a load
    test opens 40 connections: the batch 20x, tokens/s 12x, every step slower with the batch
    (the typical token 2x) and the prompts' chunks riding in some of them (the ITL p99 9x
    the tail the two requests showed).  The engine keeps up: a baseline learned at a
    twentieth of the load is no normal for its latency."""
    trace = Trace()
    for i in range(90):
        trace.tick(util=noisy(60, i, 0.05), sm=40, tokens=noisy(190, i, 0.04), prompt=300,
                   running=2, itl=0.010, ttft=0.03, kv=0.01)
    for i in range(120):
        trace.tick(util=noisy(96, i, 0.01), sm=75, tokens=noisy(2300, i, 0.04), prompt=8000,
                   running=40, itl=0.02, ttft=0.3, kv=0.12, itl_tail=(0.15, 0.06))
    assert episodes(trace.run()) == []


def test_one_long_prompt_in_a_growing_workload_is_no_episode():
    trace = Trace()
    for i in range(120):
        load = 1.0 + i / 120
        slow = i == 80  # a 10k-token prompt: one reading of stalled decodes and slow TTFTs
        trace.tick(tokens=2000 * load, running=round(20 * load), prompt=12000 if slow else 2000,
                   itl=0.08 if slow else 0.02, ttft=5.0 if slow else 0.15, waiting=3 if slow else 0)
    assert episodes(trace.run()) == []


def test_a_full_kv_cache_preempting_requests_is_kv_pressure():
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(3000, i, 0.04), running=40, kv=0.6, itl=0.03)
    for i in range(40):
        trace.tick(tokens=1300, running=24, waiting=10 + 2 * i, kv=0.99, preempt=2.5,
                   prompt=4000, itl=0.04)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "kv_pressure", (ep.suspects, ep.evidence)
    assert any(e.startswith("preemptions") for e in ep.evidence)


def test_a_second_process_time_slicing_the_gpu_is_named():
    """A notebook starts a compute loop on a training job's GPU 0: each gets its time slices."""
    trace = Trace(engine=None, procs=[(5001, 5000, 0, "python -u train.py")])
    for i in range(70):
        trace.tick(util=97, sm=noisy(80, i, 0.02))
    notebook = [(7777, 3300, 0, "python notebook.py", 38.0)]
    for i in range(30):
        trace.tick(util=99, sm=82, proc_sm=44, extra_procs=notebook)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "gpu_shared", (ep.suspects, ep.evidence)
    assert ep.gpus == (0,)
    assert any("pid 7777" in e for e in ep.evidence)


@pytest.mark.parametrize("serving", [True, False])
def test_another_process_beside_an_engine_serving_no_one_slows_nothing(serving):
    """A redeploy: the next engine (pid 22001) captures its CUDA graphs on the old engine's
    GPU, 85% of the SMs in bursts of tiny kernels for 20 s.  With no request running or
    waiting, the old engine's SM time and tokens/s are down for want of requests, not taken:
    no episode.  The same process while the engine serves (its batch held, tokens/s
    halved) takes its time slices: gpu_shared."""
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(3000, i, 0.04), running=40, proc_sm=75, itl=0.03)
    if not serving:
        for _ in range(20):
            trace.tick(util=3, sm=2, tokens=0, prompt=0, running=0, proc_sm=0)
    capture = [(22001, 21998, 0, "python3 -m vllm.entrypoints.openai.api_server", 85.0)]
    for _ in range(20):
        if serving:
            trace.tick(util=97, sm=70, tokens=1500, running=40, proc_sm=35, itl=0.06,
                       extra_procs=capture)
        else:
            trace.tick(util=85, sm=12, tokens=0, prompt=0, running=0, proc_sm=0,
                       extra_procs=capture)
    for _ in range(20):
        trace.tick(util=3, sm=2, tokens=0, prompt=0, running=0, proc_sm=0)
    named = [ep.suspects[0][0] for ep in episodes(trace.run()) if ep.suspects]
    assert named == (["gpu_shared"] if serving else []), named


@pytest.mark.parametrize("other_instance", [0, 1])
def test_a_job_on_another_mig_instance_shares_nothing(other_instance):
    """MIG: a training job on instance 0 of GPU 0 slows to 44% of its samples/s as a new job
    takes 8 GiB on the same card (no per-process SM% under MIG). On the job's own instance
    that is the other process's doing; on instance 1, hardware-isolated, it is not."""
    trace = Trace(engine="trainer", procs=[(5001, 5000, 0, "python -u train.py")],
                  engine_pids=(5000, 5001), migs={5001: 0, 7777: other_instance})
    total = 0
    for i in range(70):
        total += 32
        trace.tick(util=97, sm=noisy(80, i, 0.02), work=total)
    other_job = [(7777, 3300, 0, "python other_job.py", None)]
    for _ in range(40):
        total += 14
        trace.tick(util=97, sm=60, work=total, extra_procs=other_job)
    named = [ep.suspects[0][0] for ep in episodes(trace.run()) if ep.suspects]
    assert named == (["gpu_shared"] if other_instance == 0 else []), named


def test_data_parallel_engines_are_judged_each_on_its_own_gpu():
    """vLLM --data-parallel-size 2 behind one port: engine 1's GPU throttles (thermal) and
    its tokens/s halves while engine 0 serves as before. Each replica is its own subject
    with its own baseline: one episode, engine 1's, on GPU 1, named throttling (judged as one
    engine, the page read as a straggler holding back a collective there is none of)."""
    ranks = [Trace(procs=[(4101 + 100 * r, 4000, 0, f"VLLM::EngineCore_DP{r}")],
                   engine_pids=(4101 + 100 * r,)) for r in range(2)]
    for i in range(70):
        for trace in ranks:
            trace.tick(tokens=noisy(2000, i, 0.04), running=30, itl=0.02)
    for i in range(40):
        ranks[0].tick(tokens=noisy(2000, i, 0.04), running=30, itl=0.02)
        ranks[1].tick(util=99, sm=70, clock=900, temp=92, throttle=("thermal (hw)",),
                      tokens=1000, running=30, itl=0.045)
    states = run_frames(data_parallel(*ranks))
    found = [(ep.subject, ep.gpus, ep.suspects[0][0]) for ep in episodes(states)]
    assert found == [("engine:engine=1", (1,), "throttling")], found
    assert [s.subject.key for s in states[-1].subjects] == ["engine:engine=0", "engine:engine=1"]
    assert states[-1].baseline_tokens_per_s == pytest.approx(4000, rel=0.05)  # the ranks' sum


def test_memory_bandwidth_without_a_dram_counter_reads_the_memory_controller():
    """An A100 without GPM or DCGM has no DRAM bandwidth (nor SM activity): NVML's memory
    utilization (the controller's busy time) stands in. Contexts grow: it rises 55 -> 88%,
    every token takes 2.5x as long at the same batch, tokens/s halves."""
    trace = Trace()
    for i in range(70):
        trace.tick(sm=None, dram=None, mem_util=noisy(55, i, 0.02), tokens=noisy(2000, i, 0.04),
                   itl=0.02)
    for _ in range(40):
        trace.tick(sm=None, dram=None, mem_util=88, tokens=1000, itl=0.05)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "memory_bandwidth", (ep.suspects, ep.evidence)
    assert any(e.startswith("memory controller busy 88%") for e in ep.evidence), ep.evidence
    assert ep.measure == "step" and " but every token " in ep.headline, ep.headline


def test_speculative_drafts_rejected_is_named():
    """vLLM with a draft model: the traffic changes (a new language, code instead of chat)
    and the target accepts 20% of the drafts instead of 70%. Each step still verifies k
    drafts, so the GPU stays busy while tokens/s halves and every token takes twice as long."""
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(2000, i, 0.04), itl=0.02, drafted=3000, accepted=noisy(2100, i, 0.03))
    for _ in range(40):
        trace.tick(tokens=1000, itl=0.04, drafted=3000, accepted=600)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "spec_decode_rejected", (ep.suspects, ep.evidence)
    assert any(e.startswith("speculative decoding accepts 20% of draft tokens (baseline 70%)")
               for e in ep.evidence), ep.evidence


def test_acceptance_falling_while_service_holds_is_no_episode():
    """Acceptance can fall with output that barely slows (short drafts, a cheap draft
    model): nothing users see is worse, so nothing is raised."""
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(2000, i, 0.04), itl=0.02, drafted=3000, accepted=2100)
    for i in range(40):
        trace.tick(tokens=noisy(1900, i, 0.04), itl=0.021, drafted=3000, accepted=900)
    assert episodes(trace.run()) == []


def test_a_trainer_counter_is_read_over_whole_steps():
    """A samples counter that moves once per 3 s step: no episode while healthy (a per-tick
    rate would read 0, 0, a whole step), and the step rate is the true one."""
    trace = Trace(engine="trainer", procs=[(5001, 5000, 0, "python -u train.py")],
                  engine_pids=(5000, 5001))
    total = 0
    for i in range(90):
        if i % 3 == 0:
            total += 96
        trace.tick(util=97, sm=80, work=total)
    states = trace.run()
    assert episodes(states) == []
    assert abs(states[-1].baseline_tokens_per_s - 32.0) < 0.5


def test_replay_report_and_exporter_give_the_live_verdict(tmp_path):
    """The same fold everywhere: a recording of the straggler replays to the episode the live
    timeline had, `report` names its cause and GPU, the exporter's top cause label is it."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from gputop.export.prometheus import Exporter
    from gputop.record.report import report
    from gputop.record.store import Recorder, Recording
    from gputop.cursor import RecordingCursor
    from tests.conftest import sim_frames

    frames = list(sim_frames("allreduce-straggler", 40))
    from gputop.model.detect import make_fold
    from gputop.model.timeline import Timeline
    timeline = Timeline(100, make_fold())
    states = [timeline.append(f) for f in frames]
    live_ep = states[-1].active
    path = tmp_path / "r.gputop"
    recorder = Recorder(path, "demo:allreduce-straggler")
    for f in frames:
        recorder.append(f)
    recorder.close()
    recording = Recording(path)
    views = list(RecordingCursor(recording).views())
    text = report(RecordingCursor(recording))
    recording.close()
    replayed = views[-1].alert
    assert (replayed.kind, replayed.gpus, replayed.suspects) == \
        (live_ep.kind, live_ep.gpus, live_ep.suspects) == (
            live_ep.kind, (2,), live_ep.suspects)
    assert live_ep.suspects[0][0] == "collective_straggler"
    assert "GPU 2 busy 100%" in text and "likely collective_straggler" in text
    exporter = Exporter(hostname="h")
    exporter.on_view(views[-1])
    registry = CollectorRegistry()
    registry.register(exporter)
    scores = {(s.labels["gpu"], s.labels["cause"]): s.value
              for f in text_string_to_metric_families(generate_latest(registry).decode())
              if f.name == "gputop_episode_suspect_score" for s in f.samples}
    for gpu in "0123":  # the whole job is in the episode; the cause is the straggler
        top = max((c for g, c in scores if g == gpu), key=lambda c: scores[(gpu, c)])
        assert top == "collective_straggler", scores


def _trainer(**kw) -> Trace:
    return Trace(gpus=4, engine="trainer", procs=TRAIN, engine_pids=(5000, 5001, 5002, 5003,
                                                                       5004), tick_s=2.0, **kw)


def _steps(trace: Trace, n: int, rate: float, total: list[float], **tick) -> None:
    for i in range(n):
        total[0] += rate * 2.0
        trace.tick(work=round(total[0]), **{k: (v(i) if callable(v) else v)
                                            for k, v in tick.items()})


def test_a_trainer_starved_of_cpu_on_a_crowded_host_is_named():
    """A transcoding pod beside a DDP job grows to all 48 cores: the trainers' tree gets half
    the CPU it had, the run queue is over the CPUs, GPU-Util falls 97% -> 70% and the job
    makes 85% of its samples/s: a mild cost no engine trigger sees (a job has no demand)."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 60, 320.0, total, util=lambda i: noisy(97, i, 0.01), sm=80, psi=4,
           run_queue=30, cpus=48, tree_cpu=lambda i: noisy(400, i, 0.03))
    _steps(trace, 60, 272.0, total, util=lambda i: noisy(70, i, 0.03), sm=58, psi=60,
           run_queue=140, cpus=48, tree_cpu=lambda i: noisy(190, i, 0.05))
    ep = only(trace.run())
    assert ep.suspects[0][0] == "host_cpu_contention", (ep.suspects, ep.evidence)
    assert ep.measure == "cpu" and "waiting on the host" in ep.headline, ep.headline
    assert "samples/s" in ep.headline, ep.headline


def test_a_crowded_host_that_costs_the_trainer_nothing_is_no_episode():
    """The same neighbour, but the trainer keeps its CPU and its GPUs their busy time (it was
    never CPU-bound): the host is crowded, the job is not starved."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 60, 320.0, total, util=lambda i: noisy(97, i, 0.01), sm=80, psi=4,
           run_queue=30, cpus=48, tree_cpu=lambda i: noisy(400, i, 0.03))
    _steps(trace, 60, 318.0, total, util=lambda i: noisy(97, i, 0.01), sm=80, psi=60,
           run_queue=140, cpus=48, tree_cpu=lambda i: noisy(390, i, 0.03))
    assert episodes(trace.run()) == []


def test_a_trainer_whose_cpu_is_taken_for_minutes_is_named_before_it_costs():
    """The neighbour takes the trainer's own CPU (its tree at half of it, its threads
    preempted twenty times as often, the run queue three times the cores) for three minutes,
    but its GPUs stay busy and its samples/s hold (the loader's prefetch rides it out for
    now): measured contention on the job itself, named host CPU contention after a minute."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 60, 320.0, total, util=lambda i: noisy(97, i, 0.01), sm=80, psi=4,
           run_queue=30, cpus=48, tree_cpu=lambda i: noisy(400, i, 0.03), involuntary=200.0)
    _steps(trace, 90, 319.0, total, util=lambda i: noisy(97, i, 0.01), sm=80, psi=60,
           run_queue=140, cpus=48, tree_cpu=lambda i: noisy(200, i, 0.03), involuntary=4000.0)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "host_cpu_contention", (ep.suspects, ep.evidence)
    # (after most of a minute: the span's share, not the first ticks of the crowd)
    assert ep.start_wall_s - trace.frames[60].time_wall_s >= \
        t("alone_share") * t("alone_span_s") - 6, ep.start_wall_s


def test_a_trainer_whose_cpu_is_taken_for_half_a_minute_is_not():
    """...but the same for 30 s, then the neighbour gone: nothing to name."""
    trace, total = _trainer(), [0.0]
    for crowded in (False, True, False):
        _steps(trace, 15 if crowded else 60, 319.0, total, util=lambda i: noisy(97, i, 0.01),
               sm=80, psi=60 if crowded else 4, run_queue=140 if crowded else 30, cpus=48,
               tree_cpu=lambda i, c=crowded: noisy(200 if c else 400, i, 0.03),
               involuntary=4000.0 if crowded else 200.0)
    assert episodes(trace.run()) == []


def test_an_engine_whose_traffic_halves_beside_a_nightly_batch_job_is_not_starved():
    """At night the engine's traffic halves (its batch 30 -> 15, its CPU with it) while a
    batch job crowds the host and shares its cores (the run queue four times the CPUs, its
    threads switched out fifteen times as often): less CPU is less work, not CPU taken."""
    trace = Trace()
    for i in range(120):
        trace.tick(util=noisy(95, i, 0.01), tokens=noisy(2000, i, 0.03), running=30,
                   tree_cpu=noisy(100, i, 0.03), involuntary=200.0, run_queue=8, cpus=16)
    for i in range(150):
        trace.tick(util=noisy(92, i, 0.01), tokens=noisy(1000, i, 0.03), running=15,
                   tree_cpu=noisy(50, i, 0.03), involuntary=3000.0, run_queue=60, cpus=16,
                   psi=55)
    found = episodes(trace.run())
    assert not found, [e.headline for e in found]


def test_a_mild_thermal_slowdown_of_every_rank_that_costs_work_is_throttling():
    """The hall's cooling degrades: all four GPUs reach thermal slowdown together (no rank
    stands out), the SM clock falls 13% and the job's samples/s 18%."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 60, 320.0, total, util=lambda i: noisy(99, i, 0.005), sm=88, clock=1785,
           temp=70, throttle=("power cap",))
    _steps(trace, 60, 262.0, total, util=lambda i: noisy(99, i, 0.005), sm=79, clock=1545,
           temp=90, throttle=("thermal (sw)",))
    ep = only(trace.run())
    assert ep.suspects[0][0] == "throttling", (ep.suspects, ep.evidence)
    assert ep.measure == "clock" and set(ep.gpus) == {0, 1, 2, 3}, ep.headline


def _warmed_with_work_held(clock: float, temp: float, fan: tuple[float | None, float | None]
                           = (None, None)) -> list:
    """A 4-GPU trainer at 1,785 MHz under its usual power cap for two minutes, then two more
    under "thermal (sw)" at ``clock`` and ``temp``, its rate held (318 of 320 samples/s);
    ``fan`` is the boards' fan before and after (None: passively cooled)."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 60, 320.0, total, util=lambda i: noisy(99, i, 0.005), sm=88, clock=1785,
           temp=70, throttle=("power cap",), fan=fan[0])
    _steps(trace, 60, 318.0, total, util=lambda i: noisy(99, i, 0.005), sm=87, clock=clock,
           temp=temp, throttle=("thermal (sw)",), fan=fan[1])
    return trace.run()


def test_a_thermal_reason_that_costs_no_work_is_no_episode():
    """Thermal slowdown named, the clock 7.8% down (under fault_held_clock_drop: a
    power-capped card's own wobble is 5-8%), the job's rate as it was: nothing to page about
    yet."""
    assert episodes(_warmed_with_work_held(1645, 88)) == []


@pytest.mark.parametrize("fan", [None, 25])
def test_a_fault_reason_that_cuts_every_clock_is_throttling_though_the_work_held(fan):
    """The hall's inlet air 14 C warmer: every passively cooled GPU (or one whose fan did not
    spin up) reaches thermal slowdown, its clock 12% down, while the job's rate holds (its
    steps bound by memory, not the SM clock).  The card is protecting itself, its headroom
    gone: throttling, though no work was lost yet (corpora AE, AQ and AH's writers named it
    so; before, a 20% cut was needed where the work held)."""
    ep = only(_warmed_with_work_held(1570, 88, (fan, fan)))
    assert ep.suspects[0][0] == "throttling", (ep.suspects, ep.evidence)
    assert ep.measure == "clock" and set(ep.gpus) == {0, 1, 2, 3}, ep.headline


def test_a_fan_cooled_board_at_its_temperature_target_with_the_work_held_is_no_episode():
    """The same 12% cut under "thermal (sw)" alone, but on boards whose fans spun up (85%):
    GPU Boost holding the temperature target, as a workstation card does once it warms; the
    job's rate held.  Not a fault (fan_spun_up_pct)."""
    assert episodes(_warmed_with_work_held(1570, 83, (60, 85))) == []


def test_a_new_tenant_on_the_rank_the_others_wait_for_is_gpu_shared():
    """A colleague's job starts on GPU 1 of a 2-GPU DDP box; the driver gives no per-process
    SM: GPU 1 stays busy with both, rank 0 waits for rank 1 in the all-reduce.  The new
    process holding memory on the straggling GPU is the cause; the straggling its effect."""
    ddp = [(5001 + g, 5000, g, "python -u train.py --local-rank=%d" % g) for g in range(2)]
    trace = Trace(gpus=2, engine=None, procs=ddp, tick_s=2.0)
    for i in range(60):
        trace.tick(util=[noisy(97, i, 0.01)] * 2, sm=[80, 80], proc_sm=[None, None])
    colleague = [(8801, 8800, 1, "python finetune.py", None)]
    for i in range(50):
        trace.tick(util=[noisy(86, i, 0.02), 99], sm=[38, 76], proc_sm=[None, None],
                   extra_procs=colleague)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "gpu_shared", (ep.suspects, ep.evidence)
    assert ep.gpus == (1,), ep.headline
    assert any("pid 8801" in e for e in ep.evidence), ep.evidence


def test_a_trainer_slowed_by_smaller_kernels_is_tiny_kernels():
    """A config change sets the optimizer's foreach=False: six tiny kernels per parameter
    tensor. GPU-Util stays 99%, SM activity falls 82% -> 61% and the job makes 70% of its
    samples/s: the same busy time doing as much less work as the SMs it occupies (a 30%
    loss the 'work' trigger's 40% never saw, and the baseline learned it in a minute)."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 50, 320.0, total, util=lambda i: noisy(99.7, i, 0.002), sm=82.7)
    _steps(trace, 80, 224.0, total, util=lambda i: noisy(99.7, i, 0.002), sm=61.5)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "tiny_kernels", (ep.suspects, ep.evidence)
    assert ep.end_wall_s is None, "the loss is still there: the baseline must not learn it"


def test_sm_activity_falling_while_the_job_keeps_its_rate_is_no_episode():
    """The SM share falls as much, but the job's samples/s holds (a lighter phase of the
    model): no work is lost, nothing to name."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 50, 320.0, total, util=lambda i: noisy(99.7, i, 0.002), sm=82.7)
    _steps(trace, 80, 318.0, total, util=lambda i: noisy(99.7, i, 0.002), sm=61.5)
    assert episodes(trace.run()) == []


def test_a_trainer_whose_gpu_waits_a_quarter_of_its_time_for_input_is_named():
    """An L40S fine-tune switches to tokenising on the fly: every step now waits ~30% of its
    time for its batch (GPU-Util 100% -> 72%, a shallow saw-tooth in the driver's samples)
    and the job makes 75% of its samples/s.  A saw-tooth that shallow, with the busy time
    fallen by 28 points, is a stall: the steps wait."""
    trace = Trace(engine="trainer", procs=[(5001, 5000, 0, "python -u finetune.py")],
                  engine_pids=(5000, 5001), tick_s=2.0)
    total = [0.0]
    l40s = {"sm": None, "dram": None, "tensor": 0.0, "mem_util": 45}
    _steps(trace, 60, 8.0, total, util=lambda i: noisy(99.6, i, 0.003),
           samples=lambda i: (100.0,) * 6, **l40s)
    _steps(trace, 80, 6.0, total, util=72.0,
           samples=lambda i: (100.0, 100.0, 15.0, 100.0, 100.0, 20.0) if i % 2 else
           (100.0, 18.0, 100.0, 100.0, 100.0, 22.0), **l40s)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "input_stall", (ep.suspects, ep.evidence)


@pytest.mark.parametrize("missed", [False, True])
def test_a_trainer_losing_half_its_steps_for_minutes_survives_a_missed_scrape(missed):
    """An A100 DDP job whose shards on NFS slow down: its busy time falls 99% -> 53% and its
    samples/s to 0.53x with nothing else to show (no pegged thread, no saw-tooth), so the
    finding must hold as long as a lighter phase of the job's own would (minutes).  One
    missed scrape of its counter in that hold is no recovery: the episode opens when it
    would have with every scrape read, not a whole hold later."""
    trace, total = _trainer(), [0.0]
    a100 = {"sm": None, "dram": None, "tensor": 0.0, "mem_util": 40}
    _steps(trace, 60, 320.0, total, util=lambda i: noisy(99, i, 0.005), **a100)
    _steps(trace, 75, 170.0, total, util=lambda i: noisy(53, i, 0.03), **a100)
    frames = list(trace.frames)
    if missed:  # the counter's scrape fails once, 50 s into the hold
        frames[60 + 25] = dataclasses.replace(frames[60 + 25], engine=None)
    ep = only(run_frames(frames))
    assert ep.kind == "starved" and ep.suspects[0][0] == "input_stall", (ep.kind, ep.suspects)
    assert ep.start_wall_s - START_WALL_S <= 2.0 * 60 + 10, ep.start_wall_s - START_WALL_S


def test_a_trainer_on_a_gpu_without_an_sm_counter_slowed_by_smaller_kernels():
    """An A100 (no GPM: no SM activity, no DRAM counter) enters an RL rollout phase run
    eagerly at batch 4: GPU-Util stays 99%, the board draws 260 W where it drew 390 W, and the
    job makes half its samples/s.  The busy time's power stands in for the SMs it occupies."""
    trace, total = _trainer(), [0.0]
    a100 = {"sm": None, "dram": None, "tensor": 0.0, "mem_util": 40}
    _steps(trace, 50, 320.0, total, util=lambda i: noisy(99.5, i, 0.003),
           power=lambda i: noisy(390, i, 0.02), **a100)
    _steps(trace, 80, 160.0, total, util=lambda i: noisy(99.5, i, 0.003),
           power=lambda i: noisy(260, i, 0.02), **a100)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "tiny_kernels", (ep.suspects, ep.evidence)


def test_a_lowered_power_cap_on_a_gpu_without_an_sm_counter_is_throttling():
    """The look-alike: the same board's power limit cut 400 -> 260 W, clocks 1410 -> 1000 MHz,
    the job at 70% of its rate: power fell with the clocks, not with the SMs occupied."""
    trace, total = _trainer(), [0.0]
    a100 = {"sm": None, "dram": None, "tensor": 0.0, "mem_util": 40}
    _steps(trace, 50, 320.0, total, util=lambda i: noisy(99.5, i, 0.003),
           power=lambda i: noisy(390, i, 0.02), clock=1410, throttle=("power cap",), **a100)
    _steps(trace, 80, 224.0, total, util=lambda i: noisy(99.5, i, 0.003),
           power=lambda i: noisy(258, i, 0.01), clock=1000, throttle=("power cap",), **a100)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "throttling", (ep.suspects, ep.evidence)


def test_the_median_of_a_bucketed_latency_is_placed_by_its_mean():
    """All of an interval's inter-token latencies at 10.5 ms fall in vLLM's (10, 25] ms
    bucket: the median is 10.5 ms, not the bucket's middle; a tail far beyond it (a fifth of
    the tokens waiting on a prefill) leaves the median in its bucket."""
    bounds = (0.01, 0.025, 0.05, 0.1, 0.5)
    steady = HistDelta(bounds, (0.0, 1000.0, 0.0, 0.0, 0.0, 0.0), 1000.0, 10.5)
    assert median_and_p99(steady)[0] == pytest.approx(0.0105)
    tailed = HistDelta(bounds, (800.0, 0.0, 0.0, 0.0, 200.0, 0.0), 1000.0, 800 * 0.008 + 60.0)
    p50, p99 = median_and_p99(tailed)
    assert p50 == pytest.approx(0.008, rel=0.05) and p99 > 0.1
    overflowed = HistDelta(bounds, (0.0, 10.0, 0.0, 0.0, 0.0, 0.0), 10.0, float("inf"))
    assert median_and_p99(overflowed)[0] == pytest.approx(0.0175)  # a sum beyond floats: interpolated


def _a100_image_job(phases):
    """An A100 image job (no GPM, no counter): each phase is (ticks, GPU-Util %, power W)."""
    trace = Trace(engine=None, procs=[(7001, 1, 0, "python train_resnet.py")])
    for ticks, util, power in phases:
        for i in range(ticks):
            trace.tick(util=noisy(util, i, 0.01 if util >= 95 else 0.03),
                       power=noisy(power, i, 0.02), sm=None, dram=None, tensor=0.0, mem_util=40)
    return trace


def test_a_job_without_a_counter_whose_gpu_idles_a_quarter_of_its_time_is_named():
    """An A100 image job (no GPM, no counter of its own) gets a heavier augmentation: the
    loader's workers fall behind and GPU-Util sits at ~73% where it held 99%, with no
    saw-tooth in 1 s samples (the waits are shorter than a sample).  Its busy time is all
    there is to go by: a quarter of it lost for minutes is its steps waiting."""
    trace = _a100_image_job([(90, 99, 368), (120, 73, 291), (40, 99, 368)])
    ep = only(trace.run())
    assert ep.suspects[0][0] == "input_stall", (ep.suspects, ep.evidence)
    assert ep.kind == "starved" and ep.measure == "idle"
    assert "baseline 99%" in ep.headline, ep.headline


@pytest.mark.parametrize("unlisted", [(), (130,), (130, 131, 200)])
def test_a_jobs_process_list_missed_a_moment_is_no_exit(unlisted):
    """The image job starved of input, its process list missing on a tick or two (an NVML
    process query that failed: the frame lists no process on the GPU) once during the
    finding's hold and once inside the episode: the job has not exited, so one episode, from
    the same tick as when every list is read, and no GPU subject of its own meanwhile."""
    trace = _a100_image_job([(90, 99, 368), (140, 73, 291), (40, 99, 368)])
    frames = [dataclasses.replace(f, processes=()) if i in unlisted else f
              for i, f in enumerate(trace.frames)]
    clean = only(trace.run())
    states = run_frames(frames)
    ep = only(states)
    assert ep.suspects[0][0] == "input_stall", (ep.suspects, ep.evidence)
    assert all(st.subject.kind == "job" for i in unlisted for st in states[i].subjects), \
        [(i, [st.subject.key for st in states[i].subjects]) for i in unlisted]
    assert (ep.subject, ep.start_wall_s, ep.end_wall_s) == \
        (clean.subject, clean.start_wall_s, clean.end_wall_s)


def test_a_job_whose_gpu_idles_for_twenty_seconds_is_no_episode():
    """The look-alike: the same job in a lighter 20 s phase (a checkpoint's copies, a
    validation batch) and back: no stall to name."""
    trace = Trace(engine=None, procs=[(7001, 1, 0, "python train_resnet.py")])
    a100 = {"sm": None, "dram": None, "tensor": 0.0, "mem_util": 40}
    for i in range(90):
        trace.tick(util=noisy(99, i, 0.01), **a100)
    for i in range(20):
        trace.tick(util=noisy(70, i, 0.03), **a100)
    for i in range(60):
        trace.tick(util=noisy(99, i, 0.01), **a100)
    assert episodes(trace.run()) == []


def _embedding_job(trace, phases):
    """A recommender's training job on an H200 without a counter: each phase is (ticks,
    DRAM %, SM %), GPU-Util at 98% throughout."""
    for ticks, dram, sm in phases:
        for i in range(ticks):
            trace.tick(util=noisy(98, i, 0.01), sm=noisy(sm, i, 0.02), dram=noisy(dram, i, 0.02),
                       tensor=30)


def test_a_job_whose_dram_traffic_saturates_at_a_cost_is_memory_bandwidth():
    """The embedding tables outgrow the cache: DRAM 40% -> 92% of its bandwidth, the SMs
    stalling on it (SM active 80% -> 62% at the same GPU-Util).  No engine and no counter:
    the job's own DRAM level and SM share are the evidence."""
    trace = Trace(engine=None, procs=[(7001, 1, 0, "python train_dlrm.py")])
    _embedding_job(trace, [(90, 40, 80), (120, 92, 62)])
    ep = only(trace.run())
    assert ep.suspects[0][0] == "memory_bandwidth", (ep.suspects, ep.evidence)
    assert ep.measure == "dram" and ep.kind == "busy_unproductive" and ep.gpus == (0,)
    assert "DRAM 92% (baseline 40%)" in ep.headline, ep.headline


def test_a_trainer_whose_steps_turn_memory_bound_in_part_is_memory_bandwidth():
    """A resumed fine-tune loses its fused optimizer: each step adds seconds of HBM-bound
    parameter updates.  Averaged over a tick DRAM reads 62% (from 35%), far from saturation,
    but the samples counter runs at 40% of its rate: a rate that far down lets the lower
    level count."""
    trace = Trace(engine="trainer", procs=[(5001, 5000, 0, "python -u train.py")],
                  engine_pids=(5000, 5001))
    total = 0
    for i in range(90):
        total += 40
        trace.tick(util=98, sm=noisy(93, i, 0.02), dram=noisy(35, i, 0.02), work=total)
    for i in range(120):
        total += 16
        trace.tick(util=98, sm=noisy(79, i, 0.02), dram=noisy(62, i, 0.02), work=total)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "memory_bandwidth", (ep.suspects, ep.evidence)
    assert "40% of its samples/s" in ep.headline, ep.headline


@pytest.mark.parametrize("phases", [
    # a copy or bandwidth-test phase that keeps every SM as busy: the job's own work
    [(90, 40, 80), (120, 92, 80)],
    # an RL job's rollouts (decode: DRAM-bound) between training phases, returning
    [(40, 92, 62), (50, 40, 80), (45, 92, 62), (50, 40, 80), (45, 92, 62)],
])
def test_a_job_in_a_memory_bound_phase_of_its_own_is_no_episode(phases):
    trace = Trace(engine=None, procs=[(7001, 1, 0, "python train_rl.py")])
    _embedding_job(trace, phases)
    assert episodes(trace.run()) == []


def test_an_eval_pass_of_a_job_without_a_counter_is_no_episode():
    """The look-alike of the A100 image job above: the same job runs a 60 s eval pass
    (forward only, GPU-Util 99% -> 75%) and goes back to training.  Nothing says its steps
    wait (no input thread pegged, no contended host, no saw-tooth): its own lighter phase."""
    trace = _a100_image_job([(90, 99, 368), (60, 75, 300), (60, 99, 368)])
    assert episodes(trace.run()) == []


def _rag_tenant(trace, ticks, slow_share):
    """Decodes at 20 ms; a RAG tenant's 4x longer prompts ride in a few steps a second (80 ms
    each, ``slow_share`` of the tokens), its first tokens and the others' waiting 3x."""
    for i in range(ticks):
        trace.tick(util=noisy(97, i, 0.01), sm=72, tensor=70, dram=40, tokens=noisy(1750, i, 0.05),
                   prompt=noisy(8000, i, 0.1), running=30, itl=0.02, ttft=0.45,
                   itl_tail=(0.08, slow_share))


def test_long_prompts_stalling_a_few_steps_a_second_are_prefill_interference():
    """vLLM on an H100 with chunked prefill: a tenant starts sending 4x longer prompts,
    steadily.  Each prompt's chunks ride in a few decode steps (3% of the tokens, 4x slower):
    the ITL p99 is 4x, but too few observations for the tail trigger's 5%, tokens/s holds
    at ~0.9x and the first tokens wait 3x.  Minutes of it is the interference."""
    trace = Trace()
    for i in range(90):
        trace.tick(util=noisy(95, i, 0.01), sm=75, tensor=45, tokens=noisy(2000, i, 0.05),
                   prompt=noisy(2000, i, 0.1), running=30, itl=0.02, ttft=0.15)
    _rag_tenant(trace, 90, 0.03)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "prefill_interference", (ep.suspects, ep.evidence)
    assert ep.measure == "prefill" and "stall the decodes" in ep.headline, ep.headline


def test_long_prompts_for_a_dozen_seconds_are_no_prefill_episode():
    """The look-alike: the same tenant's batch of documents, twelve seconds of it: a burst."""
    trace = Trace()
    for i in range(90):
        trace.tick(util=noisy(95, i, 0.01), sm=75, tensor=45, tokens=noisy(2000, i, 0.05),
                   prompt=noisy(2000, i, 0.1), running=30, itl=0.02, ttft=0.15)
    _rag_tenant(trace, 12, 0.03)
    for i in range(60):
        trace.tick(util=noisy(95, i, 0.01), sm=75, tensor=45, tokens=noisy(2000, i, 0.05),
                   prompt=noisy(2000, i, 0.1), running=30, itl=0.02, ttft=0.15)
    assert not episodes(trace.run())


def _steady_decodes(trace, ticks):
    for i in range(ticks):
        trace.tick(util=noisy(95, i, 0.01), sm=75, tensor=45, tokens=noisy(2000, i, 0.05),
                   prompt=noisy(2000, i, 0.1), running=30, itl=0.02, ttft=0.15)


def _long_prompts_together(trace, ticks):
    """A few long prompts at once: prefill takes the GPU, the decodes get 0.4x their tokens/s
    while the batch stays as it was (no burst of arrivals admitted)."""
    for i in range(ticks):
        trace.tick(util=99, sm=78, tensor=60, tokens=noisy(800, i, 0.05), prompt=12000,
                   running=30, itl=0.05, ttft=0.6)


def test_a_few_long_prompts_together_for_once_are_no_episode():
    """A healthy 70B server: a few long documents arrive together and
    their prefill takes the decodes to 0.4x their tokens/s for six seconds.  It passes by
    itself: admission, not harm."""
    trace = Trace()
    _steady_decodes(trace, 120)
    _long_prompts_together(trace, 6)
    _steady_decodes(trace, 60)
    assert not episodes(trace.run())


def test_long_prompts_together_again_and_again_are_prefill_interference():
    """The same six seconds, every fifteen: the decodes lose their pace again and again to
    the prompts, and the stall is named once it has recurred."""
    trace = Trace()
    _steady_decodes(trace, 120)
    for _ in range(6):
        _long_prompts_together(trace, 6)
        _steady_decodes(trace, 9)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "prefill_interference", (ep.suspects, ep.evidence)
    # judged over a span, it holds on the ticks between the prompts too: the headline
    # quotes the last tick that showed them, never a calm one
    assert ep.headline.startswith("GPU 0 busy 99% but prompts at "), ep.headline


def test_drafts_rejected_while_a_grown_batch_keeps_tokens_is_named():
    """SGLang with EAGLE: a fine-tuned target no longer fits the draft head and acceptance
    falls 75% -> 22%.  The batch grows 30 -> 60 to absorb it, so tokens/s holds, but each
    sequence keeps 0.7x the tokens per step (even at one draft token): every user slower."""
    trace = Trace(engine="sglang")
    for i in range(90):
        trace.tick(tokens=noisy(2000, i, 0.04), itl=0.02, running=30, drafted=3000,
                   accepted=noisy(2250, i, 0.03))
    for i in range(60):
        trace.tick(tokens=noisy(1950, i, 0.04), itl=0.02, running=60, drafted=6000,
                   accepted=noisy(1320, i, 0.03))
    ep = only(trace.run())
    assert ep.suspects[0][0] == "spec_decode_rejected", (ep.suspects, ep.evidence)
    assert ep.measure == "spec" and "drafts mostly rejected: 22% accepted (baseline 75%)" \
        in ep.headline, ep.headline


@pytest.mark.parametrize("values, step_ratio, shows", [
    # the seed's storm: the same batch, every token 3x slower, tokens/s at a third
    ({"tokens_ratio": 0.35, "running": 30.0, "running_base": 30.0}, 3.0, True),
    # a busier service: the batch 2.7x at 1.3x the tokens/s, each step carrying more
    ({"tokens_ratio": 1.3, "running": 247.0, "running_base": 90.0}, 1.9, False),
    # a draining batch job: 0.7x the batch at 0.9x the tokens/s while the typical token
    # reads 2.9x slower; were it, tokens/s would be a quarter: the reading is off
    ({"tokens_ratio": 0.91, "running": 30.0, "running_base": 43.0}, 2.9, False),
    # no batch to judge by: the typical token is taken at its word
    ({"tokens_ratio": 0.91}, 2.9, True),
])
def test_every_token_slower_must_show_in_the_output(values, step_ratio, shows):
    """tokens/s is the batch over the step time: a slower typical token is harm only where
    the output shows it (the step measure's trigger when nothing else explains it)."""
    assert _step_shows(values, step_ratio) is shows


def test_requests_as_large_as_the_clients_always_send_are_no_cause():
    """A product whose clients send n=8 (best-of sampling) every ten seconds or so, all
    healthy; then the traffic changes and speculative decoding's drafts are mostly rejected.
    The n=8 request seen just before is one more of the routine ones, not the cause."""
    trace = Trace()
    for i in range(120):
        trace.tick(tokens=noisy(2000, i, 0.04), itl=0.02, drafted=3000,
                   accepted=noisy(2100, i, 0.03), n8=1 if i % 9 == 4 else 0)
    for i in range(40):
        trace.tick(tokens=1000, itl=0.04, drafted=3000, accepted=600, n8=1 if i % 9 == 4 else 0)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "spec_decode_rejected", (ep.suspects, ep.evidence)


def test_host_contention_whose_harm_the_batch_absorbs_is_named():
    """ffmpeg transcodes land on an SGLang host: the scheduler thread keeps ~70% of a core,
    CPU pressure 85%, the run queue over the CPUs.  GPU-Util falls 66% -> 50-57% (under the
    util trigger's 15 points on most ticks), the batch swells 30 -> 40-55 at the same tokens/s
    (each sequence slower: Little's law), latencies at that batch read normal.  No single
    reading holds for long; most of them show the host contended with some harm."""
    trace = Trace(engine="sglang")
    for i in range(100):
        trace.tick(util=noisy(66, i, 0.04), sm=45, tokens=noisy(2300, i, 0.15),
                   running=30 + (i % 5) - 2, itl=0.02, ttft=0.3, psi=1, run_queue=3, cpus=44,
                   host_cpu=7, tree_cpu=132, involuntary=180)
    for i in range(90):
        trace.tick(util=noisy(53, i, 0.08), sm=36, tokens=noisy(2150, i, 0.15),
                   running=38 + (i * 7) % 18, itl=0.03, ttft=0.3, psi=85, run_queue=63,
                   cpus=44, host_cpu=100, tree_cpu=92, involuntary=6500)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "host_cpu_contention", (ep.suspects, ep.evidence)
    assert any(e.startswith("CPU pressure 85%") for e in ep.evidence), ep.evidence
    assert ep.kind == "starved" and "waiting on the host" in ep.headline, ep.headline


def test_a_mild_straggler_that_flickers_is_named():
    """DDP fine-tune on two H100s: rank 1's shards run a little longer (its SM activity
    1.2-1.4x rank 0's, rank 0 spinning in the all-reduce); no clock or heat to point at.
    The odd one out reads strong on some ticks and under the trigger on the others; it is
    there on most of them."""
    trace = _ranks(2)
    for i in range(90):
        trace.tick(util=99, sm=[noisy(80, i, 0.02), noisy(80, i + 7, 0.02)], dram=40)
    for i in range(90):
        trace.tick(util=99, sm=[60, 60 * (1.3 + 0.1 * math.sin(i * 2.399))], dram=40)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (1,), ep.headline


def _ranks(n: int) -> Trace:
    """A data-parallel job on ``n`` GPUs: a process each (``train.py --local-rank``), no
    counter and no engine."""
    procs = [(7001 + g, 7000, g, f"python train.py --local-rank={g}") for g in range(n)]
    return Trace(gpus=n, engine=None, procs=procs, engine_pids=())


def test_a_hall_too_hot_for_every_gpu_is_throttling_not_its_slowest_rank():
    """DDP on eight H200s: the hall's cooling fails and every GPU reaches thermal slowdown,
    some further than others (1,275-1,605 MHz from 1,785); the slowest three compute while
    the rest wait (SM 87-90% beside 77-80%), GPU 7 slowest of all.  The room is the cause,
    not GPU 7."""
    procs = [(7001 + g, 7000, g, f"python train.py --local-rank={g}") for g in range(8)]
    trace = Trace(gpus=8, engine="trainer", procs=procs, engine_pids=(7000,))
    total = 0
    for i in range(90):
        total += 64
        trace.tick(util=99, sm=[noisy(89, i + 3 * g, 0.01) for g in range(8)], dram=30,
                   clock=1785, temp=60, work=total)
    clocks = [1545, 1335, 1590, 1605, 1530, 1515, 1335, 1275]
    sms = [78, 87, 77, 77, 79, 80, 87, 90]
    for i in range(150):
        total += 46  # the job at the slowest rank's pace
        trace.tick(util=99, dram=30, clock=clocks, temp=88, throttle=("thermal (sw)",),
                   sm=[noisy(x, i + 3 * g, 0.01) for g, x in enumerate(sms)], work=total)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "throttling", (ep.suspects, ep.evidence)


@pytest.mark.parametrize("onset", [None, "thermal", "clock"])
def test_a_card_that_always_ran_hotter_is_judged_from_its_own_standing(onset):
    """DDP on eight H100s: GPU 7 sits in the warm end of the chassis, 76 C beside 60-66 from
    the start, all ranks at 75-80% SM: healthy, no episode (its heat against its peers alone
    read as a straggler).  When it then slows (thermal slowdown, or its clock alone at 1,450
    MHz beside 1,980) and its peers fall to 64% waiting, the part beyond its usual standing
    names it."""
    trace = _ranks(8)
    temps = [60 + 3 * (g % 3) for g in range(7)]
    for i in range(240):
        late = onset is not None and i >= 120
        sm = [noisy(64 if late else 75, i + 3 * g, 0.02) for g in range(7)]
        trace.tick(util=99, sm=sm + [noisy(80, i, 0.02)], dram=30,
                   temp=temps + [88 if late else 76],
                   clock=[1980] * 7 + [(1500 if onset == "thermal" else 1450) if late else 1980],
                   throttle=[()] * 7 + [("thermal (sw)",) if late and onset == "thermal" else ()])
    eps = episodes(trace.run())
    if onset is None:
        assert not eps, [(e.gpus, e.suspects) for e in eps]
        return
    assert len(eps) == 1, [(e.gpus, e.suspects) for e in eps]
    ep = eps[0]
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (7,) and ep.start_wall_s >= START_WALL_S + 120, ep.headline


def _ddp8(trace, ticks, util, sm):
    for i in range(ticks):
        trace.tick(util=[noisy(u, i + g, 0.01) for g, u in enumerate(util)],
                   sm=[noisy(x, i + 3 * g, 0.02) for g, x in enumerate(sm)], dram=30)


def test_a_rank_partly_off_the_gpu_holds_back_the_others_and_is_named():
    """DDP on eight H100s: a debugging switch left on rank 4 syncs the device for every
    gradient bucket's norm.  Its GPU-Util sits at 77% (idle between syncs) while the other
    seven spin in the all-reduce at 98%, their SM activity down from 86% to 63%; rank 4's
    own SM is barely above theirs.  The one GPU whose busy time fell is the one they wait for."""
    trace = _ranks(8)
    _ddp8(trace, 90, [98] * 8, [86] * 8)
    _ddp8(trace, 90, [98] * 4 + [77] + [98] * 3, [63] * 4 + [68] + [63] * 3)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (4,), ep.headline
    assert any("GPU 4 GPU-Util 77% while" in e for e in ep.evidence), ep.evidence


def test_a_rank_back_from_a_checkpoint_is_not_out_of_step():
    """The look-alike: rank 0 writes a checkpoint every 90 s, off the GPU for 5 s (the
    samples counter still) while the other seven spin in the barrier at 13% SM, then all
    step together again: a pause (a hang only if long), neither a rank out of step nor an
    input stall.  (The rank's GPU-Util over the window after it still holds the pause; that
    the window skips a rank that paused in it is held by corpus D's healthy_ddp8_ckpt_eval,
    whose irregular ticks leave one tick half back, in tests/test_diagnosis_heldout.py.)"""
    procs = [(7001 + g, 7000, g, f"python train.py --local-rank={g}") for g in range(8)]
    trace = Trace(gpus=8, engine="trainer", procs=procs, engine_pids=(7000,) + tuple(
        7001 + g for g in range(8)))
    total = 0

    def steady(ticks):
        nonlocal total
        for i in range(ticks):
            total += 512
            trace.tick(util=[noisy(98, i + g, 0.01) for g in range(8)],
                       sm=[noisy(88, i + 3 * g, 0.02) for g in range(8)], dram=30, work=total)

    for _ in range(3):
        steady(90)
        for i in range(5):  # (the last second half off, half back)
            back = i == 4
            trace.tick(util=[32 if back else 0] + [99] * 7, sm=[26 if back else 0] + [13] * 7,
                       dram=1, work=total + (256 if back else 0),
                       samples=[(0,) * 4 + (98,) * 2 if back else (0,) * 6] + [(99,) * 6] * 7)
        total += 256
    steady(60)
    assert episodes(trace.run()) == []


@pytest.mark.parametrize("rank,off_ticks,named,reordered,hiccup", [
    (6, 60, True, False, False), (0, 60, False, False, False), (6, 10, False, False, False),
    (7, 60, False, True, False), (6, 60, True, False, True)])
def test_a_rank_other_than_the_first_stuck_off_the_gpu_hangs_the_job(rank, off_ticks, named,
                                                                     reordered, hiccup):
    """FSDP on eight H100s with a samples counter: rank 6's host thread is stuck (a page-fault
    storm) for a minute; it leaves the GPU (GPU-Util 15%, SM 2%) and the other seven spin in
    the all-reduce at 99% GPU-Util, 22% SM; the counter all but stops.  The job's first rank
    pauses by design (its checkpoint: the look-alike, silent for pause_s), another rank only
    when stuck: named a straggler on its GPU once it held rank_hang_s, not for a 10 s one.
    The first rank is the one its launcher calls local rank 0: on GPU 7 where
    CUDA_VISIBLE_DEVICES lists the GPUs in reverse, its checkpoint there is the pause.  A
    6 s hiccup of the same rank a minute before is no pause by design: the hang is named."""
    procs = [(7001 + g, 7000, g, f"python train.py --local-rank={7 - g if reordered else g}")
             for g in range(8)]
    trace = Trace(gpus=8, engine="trainer", procs=procs, engine_pids=(7000,) + tuple(
        7001 + g for g in range(8)))
    total = 0
    for i in range(150 + off_ticks + 60):
        off = 150 <= i < 150 + off_ticks or (hiccup and 90 <= i < 96)
        total += 8 if off else 512
        util = [noisy(99, i + g, 0.01) for g in range(8)]
        sm = [noisy(22 if off else 84, i + 3 * g, 0.02) for g in range(8)]
        if off:
            util[rank], sm[rank] = noisy(15, i, 0.05), 2
        trace.tick(util=util, sm=sm, dram=30, work=total)
    eps = episodes(trace.run())
    if not named:
        assert eps == [], [(e.gpus, e.suspects) for e in eps]
        return
    assert len(eps) == 1, [(e.gpus, e.suspects) for e in eps]
    ep = eps[0]
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (rank,), ep.headline
    assert START_WALL_S + 150 <= ep.start_wall_s <= START_WALL_S + 150 + 30, ep.start_wall_s
    assert any(f"GPU {rank} GPU-Util" in e for e in ep.evidence), ep.evidence


@pytest.mark.parametrize("shape", ["degraded", "pipeline", "checkpoint", "standing", "glitch",
                                   "nan"])
def test_a_rank_whose_nvlink_carries_a_fraction_of_its_peers_is_the_straggler(shape):
    """FSDP on eight H100s, no counter, no clock or heat apart: after a reset GPU 5's NVLink
    trains down to a few lanes.  It carries 3.5 GB/s while its peers move 18 GB/s through the
    same collectives, and all eight, waiting on it, fall from 80% to 60% SM at full GPU-Util:
    the straggler is the rank with the thin links.  The look-alikes: a pipeline's end stages
    moving half what the middle ones do from the start, at an unchanged pace; rank 0 writing
    a checkpoint for 20 s (off the GPU at its idle clock, its links silent) while the others
    wait; a GPU whose NVLink always carried a trickle (its peers' bridge is not its own: a
    share of its own from the start); a counter reading zero for 10 s on one GPU, or NaN."""
    trace = _ranks(8)
    for i in range(240):
        late = i >= 120
        util = [noisy(99, i + g, 0.01) for g in range(8)]
        sm = [noisy(60 if late and shape == "degraded" else 80, i + 3 * g, 0.02)
              for g in range(8)]
        link = [noisy(18000, i + g, 0.05) for g in range(8)]
        if shape == "degraded" and late:
            link[5] = noisy(3500, i, 0.1)
        if shape == "pipeline":
            link[0], link[7] = noisy(9000, i, 0.05), noisy(9000, i + 1, 0.05)
        if shape == "standing":
            link[2] = noisy(40, i, 0.05)
        if shape == "glitch" and 150 <= i < 160:
            link[3] = 0.0
        if shape == "nan" and i >= 150:
            link[3] = float("nan")
        clock = [1980.0] * 8
        if shape == "checkpoint" and 120 <= i < 140:
            util = [0.0] + [99.0] * 7
            sm = [0.0] + [15.0] * 7
            link[0], clock[0] = 0.0, 690.0
        trace.tick(util=util, sm=sm, dram=30, nvlink=link, clock=clock)
    eps = episodes(trace.run())
    if shape != "degraded":
        assert eps == [], [(e.gpus, e.suspects) for e in eps]
        return
    ep = only(trace.run())
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (5,) and ep.start_wall_s >= START_WALL_S + 120, ep.headline
    assert any("GPU 5 NVLink carries" in e for e in ep.evidence), ep.evidence


@pytest.mark.parametrize("clock_after,named", [(2070.0, True), (2330.0, False)])
def test_a_power_limit_lowered_under_a_busy_job_is_throttling(clock_after, named):
    """DDP on two L40S, no counter: an admin lowers the boards' limit from 350 W to 170 W to
    keep the row under its breaker budget.  Both sit at the new cap, "power cap" as always,
    their clocks 18% down (2,520 -> 2,070 MHz): the job runs at that clock, throttling (still
    so when a lighter phase leaves it 10% down under the same cap).  A lowered limit the job
    barely feels (clock 8% down) is no slower clock worth naming."""
    trace = _ranks(2)
    for i in range(300):
        late = i >= 150
        trace.tick(util=[noisy(98, i + g, 0.01) for g in range(2)],
                   sm=[noisy(80, i + 3 * g, 0.02) for g in range(2)], dram=30,
                   power=170.0 if late else noisy(245, i, 0.02), limit=170.0 if late else 350.0,
                   clock=noisy(clock_after if i < 250 or not named else 2270.0, i, 0.01)
                   if late else 2520.0,
                   throttle=("power cap",) if late else ())
    eps = episodes(trace.run())
    if not named:
        assert eps == [], [(e.gpus, e.suspects) for e in eps]
        return
    assert len(eps) == 1, [(e.gpus, e.suspects) for e in eps]
    assert eps[0].suspects[0][0] == "throttling", (eps[0].suspects, eps[0].evidence)
    assert eps[0].start_wall_s >= START_WALL_S + 150, eps[0].headline
    assert any("power limit lowered to 170 W" in e for e in eps[0].evidence), eps[0].evidence
    assert eps[0].end_wall_s is None, eps[0].end_wall_s  # (10% down at the same cap: it holds)


def test_routine_large_requests_do_not_latch_onto_a_milder_episode():
    """The same product, a milder change: the target model upgraded, drafts accepted 35%
    instead of 70%, tokens/s at 0.65x.  A routine n=8 request lands in the episode; as a
    routine one it weighs what it weighed before, not as the request that caused it."""
    trace = Trace()
    for i in range(120):
        trace.tick(tokens=noisy(2000, i, 0.04), itl=0.02, drafted=3000,
                   accepted=noisy(2100, i, 0.03), n8=1 if i % 9 == 4 else 0)
    for i in range(40):
        trace.tick(tokens=noisy(1300, i, 0.04), itl=0.03, drafted=3000, accepted=1050,
                   n8=1 if i % 9 == 4 else 0)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "spec_decode_rejected", (ep.suspects, ep.evidence)


def test_bursts_of_arrivals_admitted_in_seconds_are_no_episode():
    """A batch API client fires 40 requests at once every 40 s at an SGLang server serving
    ten: the batch swells 10 -> 50 within two seconds, their prompts are prefilled in chunks
    and every decode in those steps waits (ITL p99 5x for six seconds), then all is as before.
    SGLang counts prompt tokens as requests finish, so the burst shows no prompt work until
    it ends.  Admission by design, each time."""
    trace = Trace(engine="sglang")
    for i in range(240):
        phase = i % 40
        if 20 <= phase < 26:  # the burst being admitted and prefilled
            trace.tick(util=99, sm=80, tensor=70, tokens=noisy(700, i, 0.05),
                       prompt=noisy(800, i, 0.1), running=10 + 20 * min(2, phase - 19),
                       itl=0.1, ttft=0.9)
        elif 26 <= phase < 36:  # the burst decoding and finishing: its prompts counted now
            trace.tick(util=97, sm=75, tokens=noisy(3600, i, 0.05), prompt=noisy(7000, i, 0.1),
                       running=50 - 4 * (phase - 26), itl=0.028, ttft=0.2)
        else:
            trace.tick(util=noisy(92, i, 0.02), sm=70, tokens=noisy(1000, i, 0.05),
                       prompt=noisy(1500, i, 0.1), running=10, itl=0.02, ttft=0.15)
    assert episodes(trace.run()) == []


def test_every_step_slower_in_jumps_between_buckets_is_an_oversized_request():
    """vLLM TP2 on H200s: a client's best-of-16 request with logprobs (its n is observed only
    when it ends) makes every step sample and sort 16 top-k lists over the vocabulary: the
    typical token reads 2.5x for a few seconds and 1.4x for a few (the p50 jumps between
    histogram buckets as the request's sequences finish and resume), so no 15 s hold of it
    completes; the batch swells 25 -> 50 at the same tokens/s (each sequence slower), DRAM
    traffic falls.  Two minutes of it."""
    trace = Trace(gpus=2)
    for i in range(100):
        trace.tick(util=96, sm=70, dram=60, tokens=noisy(2000, i, 0.05), running=25,
                   itl=0.02, ttft=0.2)
    for i in range(120):
        trace.tick(util=98, sm=66, dram=48, tokens=noisy(2000, i, 0.05), running=50,
                   itl=0.055 if i % 10 < 6 else 0.028, ttft=0.3)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "oversized_request", (ep.suspects, ep.evidence)


def _rank0_extra(trace, ticks, every_s, extra_s):
    """Four A100s of a DDP job (no GPM, no counter) at full GPU-Util: for ``extra_s`` of
    every ``every_s`` rank 0 does work of its own (validation metrics) and keeps drawing
    330 W while ranks 1-3 wait in the all-reduce at 170 W; otherwise all four draw 390 W."""
    for i in range(ticks):
        extra = i % every_s < extra_s
        trace.tick(util=98, sm=None, dram=None, clock=1410, power=[
            noisy(330 if g == 0 else 170, i + g, 0.02) if extra else noisy(390, i + g, 0.01)
            for g in range(4)])


def test_a_rank_behind_for_a_few_seconds_of_every_period_is_named():
    """Someone enabled per-step validation metrics on rank 0 only: for 3 s of every 8 the
    other ranks wait for it.  Tick by tick it stands out on a third of the ticks, under the
    share a flickering straggler must show on; over the span it draws 1.3x its peers."""
    trace = _ranks(4)
    _rank0_extra(trace, 90, every_s=8, extra_s=0)
    _rank0_extra(trace, 120, every_s=8, extra_s=3)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "collective_straggler", (ep.suspects, ep.evidence)
    assert ep.gpus == (0,), ep.headline


def test_one_rank_ahead_once_is_no_straggler():
    """The look-alike: rank 0 ahead of its peers once, for 5 s (one extra evaluation after a
    checkpoint), then in step again.  Over the span its mean still stands out; it stood out
    on one run of ticks, not again and again."""
    trace = _ranks(4)
    _rank0_extra(trace, 90, every_s=8, extra_s=0)
    _rank0_extra(trace, 5, every_s=8, extra_s=5)
    _rank0_extra(trace, 60, every_s=8, extra_s=0)
    assert not any(e.suspects and e.suspects[0][0] == "collective_straggler"
                   for e in episodes(trace.run()))


def test_every_token_slower_while_the_tail_holds_is_an_oversized_request():
    """An eval harness sends n=4, logprobs=20 requests: every decode step 1.8x slower (ITL
    p50), the batch swells by Little's law at the same tokens/s, but the ITL p99 stays
    where the usual prefill chunks put it (the tail was never the decode step) and the
    engine's histograms name no large n.  Each sequence slower than the batch's growth
    explains is the harm; the per-step work is the verdict."""
    trace = _slower_steps(30, lambda i: noisy(56, i, 0.05), itl=0.036, ticks=70)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "oversized_request", (ep.suspects, ep.evidence)


def _slower_steps(usual_batch, batch, *, itl, ticks):
    """A server whose ITL p99 is set by the usual prefill chunks, then every decode step
    ``itl`` long (from 20 ms) with the batch at ``batch(i)`` and tokens/s as before."""
    trace = Trace()
    for i in range(80):
        trace.tick(util=noisy(97, i, 0.02), sm=70, dram=50, tokens=noisy(1200, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=noisy(usual_batch, i, 0.05),
                   itl=0.02, itl_tail=(0.2, 0.03), ttft=0.15)
    for i in range(ticks):
        trace.tick(util=99, sm=68, dram=45, tokens=noisy(1250, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=batch(i), itl=itl,
                   itl_tail=(0.21, 0.03), ttft=0.15)
    return trace


@pytest.mark.parametrize("values, decodes", [
    # a batch 2x at 1.9x the step: about the same tokens/s, each sequence decoded each step
    ({"tokens_ratio": 1.05, "running": 56, "running_base": 29, "step_ratio": 1.9}, True),
    # a batch 5x at 2.4x the step should give 2x the tokens/s: 0.4x is a batch that waits
    ({"tokens_ratio": 0.41, "running": 104, "running_base": 21, "step_ratio": 2.4}, False),
    ({"tokens_ratio": None, "running": 104, "running_base": 21, "step_ratio": 2.4}, True),
])
def test_a_batch_that_waits_undecoded_is_not_every_token_slower(values, decodes):
    assert batch_decodes(values) is decodes


def test_long_sequences_preempted_once_per_request_served_are_kv_pressure():
    """A reasoning mode ships (9k-token outputs) on a server with a small KV pool: the pool
    fills, vLLM preempts about one sequence every four seconds, a rate under any
    per-second bar, but requests finish even more rarely, and 8k-token max_tokens requests
    are routine here.  A recompute for every request served is the pool's pressure."""
    trace = Trace()
    for i in range(70):
        trace.tick(tokens=noisy(2500, i, 0.04), running=39, kv=0.6, itl=0.03, finished=0.3)
    for i in range(60):
        trace.tick(tokens=noisy(1700, i, 0.04), running=31, waiting=min(20, 6 + i), kv=0.99,
                   preempt=0.25, finished=0.2, itl=0.032, ttft=20.0)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "kv_pressure", (ep.suspects, ep.evidence)


def test_an_eval_pass_of_a_trainer_with_a_counter_is_no_episode():
    """An FSDP fine-tune runs a 50 s eval pass: its samples counter slows to half and
    GPU-Util falls to 55%, and nothing says its steps wait (no input thread pegged, no
    contended host, no saw-tooth): its own lighter phase.  The same fall for three minutes
    is news."""
    trace, total = _trainer(), [0.0]
    _steps(trace, 60, 440.0, total, util=lambda i: noisy(99, i, 0.01), sm=80, proc_cpu=40)
    _steps(trace, 25, 240.0, total, util=lambda i: noisy(55, i, 0.03), sm=45, proc_cpu=40)
    _steps(trace, 40, 440.0, total, util=lambda i: noisy(99, i, 0.01), sm=80, proc_cpu=40)
    assert episodes(trace.run()) == []
    trace, total = _trainer(), [0.0]
    _steps(trace, 60, 440.0, total, util=lambda i: noisy(99, i, 0.01), sm=80, proc_cpu=40)
    _steps(trace, 90, 240.0, total, util=lambda i: noisy(55, i, 0.03), sm=45, proc_cpu=40)
    found = episodes(trace.run())
    assert found and found[0].start_wall_s - trace.frames[0].time_wall_s <= 60 * 2.0 + 10, \
        [(e.headline, e.start_wall_s) for e in found]


def test_every_step_slower_on_a_sliver_of_the_sms_is_tiny_kernels():
    """A tenant switches on guided decoding for every request: per-request bitmask and
    logits-processor kernels (a few SMs each) fill each step.  Every token 4x slower, the
    batch swells, GPU-Util stays at 99% but SM activity falls from 70% to 30%: the work
    beside the forward pass runs on a sliver of the SMs, not a request's sampling over
    the vocabulary."""
    trace = Trace()
    for i in range(80):
        trace.tick(util=noisy(97, i, 0.02), sm=70, dram=50, tokens=noisy(1700, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=noisy(14, i, 0.05), itl=0.014,
                   ttft=0.3)
    for i in range(60):
        trace.tick(util=99, sm=30, dram=40, tokens=noisy(1500, i, 0.05),
                   prompt=noisy(2500, i, 0.05), running=min(60, 14 + 2 * i), itl=0.056,
                   ttft=0.3)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "tiny_kernels", (ep.suspects, ep.evidence)


def test_a_saw_tooth_whose_peak_reads_healthy_is_an_input_stall():
    """A new augmentation pipeline makes JPEG decode the bottleneck of an image job on an
    A10G: GPU-Util goes 94, 82, 66, 49, 61, 77 in a 6 s period.  The tick at the period's
    peak reads almost healthy; the stall shows on the others, and is judged over the span."""
    trace = saw_tooth(Trace(engine=None, procs=[(7001, 1, 0, "python train_resnet.py")]))
    ep = only(trace.run())
    assert ep.suspects[0][0] == "input_stall", (ep.suspects, ep.evidence)



def test_every_token_slower_read_between_batch_dips_is_an_oversized_request():
    """A return_logprob request with top-20 over n=6 sequences: every token 1.85x slower and
    the batch swollen 2.2x at the same tokens/s, but every third reading the batch gauge
    catches requests between steps at its usual size, and that reading says nothing.  The
    finding is read in periods: once pending, its share of the span keeps it."""
    trace = _slower_steps(14, lambda i: 15 if i % 3 == 2 else 31, itl=0.037, ticks=60)
    ep = only(trace.run())
    assert ep.suspects[0][0] == "oversized_request", (ep.suspects, ep.evidence)


def test_a_service_that_dips_by_itself_holds_a_fault_through_its_dips():
    """A small server whose long prefills stall the decodes every 15 s (tokens/s a quarter
    for 6 s, a request or two waiting) dips as its normal: after the first dips no episode
    opens for three minutes of them, where each one reopened the episode before; a collapse
    that holds is still named, once it has held through noisy_hold_s, while a calm server's
    opens after the usual hold."""
    def build(dips: bool) -> Trace:
        trace = Trace()
        for i in range(40):
            trace.tick(tokens=noisy(2000, i, 0.05), running=30)
        for i in range(240):
            dip = dips and i % 15 < 6
            trace.tick(tokens=500 if dip else noisy(2000, i, 0.05), running=30,
                       waiting=3 if dip else 0)
        for i in range(30):  # the fault, from tick 280
            trace.tick(tokens=500, running=30, waiting=12)
        for i in range(20):
            trace.tick(tokens=noisy(2000, i, 0.05), running=30)
        return trace

    noisy_opened = opened_at(build(dips=True).run())
    assert not [i for i in noisy_opened if 100 <= i < 280], noisy_opened
    assert [i for i in noisy_opened if 280 + t("noisy_hold_s") <= i < 310], noisy_opened
    calm_opened = opened_at(build(dips=False).run())
    assert calm_opened and 280 <= calm_opened[0] < 280 + t("noisy_hold_s"), calm_opened


def test_a_baseline_learned_from_one_request_is_learned_afresh_when_it_blocks_learning():
    """gputop starts on a server running one short request (a health check: 40 tok/s, KV
    0.4%); then the day's traffic arrives (30 requests, KV half full). Against the first
    readings every tick reads as contexts 4x longer, an onset no tick may be learned from, yet
    nothing fires: without relearning, the baseline stays at 40 tok/s and a collapse to 500
    tok/s goes unseen. After stale_baseline_s of that, the baseline is learned afresh from the
    traffic, and the collapse is named."""
    trace = Trace()
    for i in range(25):
        trace.tick(tokens=noisy(40, i, 0.05), running=1, kv=0.004, prompt=100)
    for i in range(220):
        trace.tick(tokens=noisy(2000, i, 0.05), running=30, kv=0.5, prompt=2000)
    for i in range(30):  # the fault, from tick 245
        trace.tick(tokens=500, running=30, kv=0.5, waiting=12, prompt=2000)
    states = trace.run()
    assert not [e for e in episodes(states[:245])]
    relearned = states[244].subject("engine").base.get("tokens")
    assert relearned is not None and 1800 <= relearned <= 2200, relearned
    found = episodes(states)
    assert found and found[0].start_wall_s >= START_WALL_S + 245, found
    assert found[0].measure == "tokens"


def test_an_idle_server_keeps_its_baseline():
    """A quiet night (nothing running between rare bursts) is no stale baseline: idle ticks
    neither learn nor count towards relearning."""
    trace = Trace()
    for i in range(40):
        trace.tick(tokens=noisy(2000, i, 0.05), running=30, kv=0.5)
    for i in range(200):
        burst = i % 40 < 4
        trace.tick(util=90 if burst else 2, tokens=1500 if burst else 0,
                   running=20 if burst else 0, kv=0.4 if burst else 0.0,
                   prompt=2000 if burst else 0)
    states = trace.run()
    assert states[-1].subject("engine").base.get("tokens") == pytest.approx(2000, rel=0.1)


def test_a_span_finding_in_a_service_that_dips_by_itself_must_hold_on_most_of_its_span():
    """Every token 2x slower with the batch doubled at the same tokens/s (the `slow` span
    measure) on twelve ticks in twenty: on a calm server that is a finding (half the span's
    ticks suffice); on one whose tokens/s dips to a quarter for 6 s of every 15 by itself it
    is its routine, and only a finding on most of the span's ticks (noisy_span_share)
    opens.  (In blocks of twelve: the latency window blends shorter ones, and a 2x token
    blended with its neighbours reads under the measure's 1.7x.)"""
    def build(dips: bool, share_on: float) -> Trace:
        trace = Trace()
        for i in range(60):
            trace.tick(tokens=noisy(2000, i, 0.05), running=30, finished=10)
        for i in range(180):
            dip = dips and i % 15 < 6
            trace.tick(tokens=500 if dip else noisy(2000, i, 0.05), running=30, finished=10,
                       waiting=3 if dip else 0)
        for i in range(90):  # from tick 240
            on = (i % 20) < share_on * 20
            trace.tick(tokens=noisy(2000, i, 0.05), running=60 if on else 30, finished=10,
                       itl=0.04 if on else 0.02)
        return trace

    def late(dips: bool, share_on: float) -> list[int]:
        return [i for i in opened_at(build(dips, share_on).run()) if i >= 240]

    assert late(dips=False, share_on=0.6), "a calm server: half the span suffices"
    assert not late(dips=True, share_on=0.6), "a noisy one: six ticks in ten are routine"
    assert late(dips=True, share_on=1.0), "a noisy one: a finding on every tick opens"


def test_a_lumpy_service_is_noisy_from_its_first_minute():
    """Before a minute of its dips can be counted, a service whose healthy tokens/s swings
    tick by tick (300-1,800 around 1,000: long prefills stalling a small batch) is taken as
    noisy from the spread it was learned at (noise_cv): a 6 s dip does not open an episode,
    a 25 s collapse opens after noisy_hold_s; a steady service's dip opens at once."""
    lumpy_tokens = (400, 1700, 900, 1500, 300, 1200, 1800, 600)

    def build(lumpy: bool, fault_s: int) -> Trace:
        trace = Trace()
        for phase, n in (("before", 40), ("fault", fault_s), ("after", 30)):
            for i in range(n):
                if phase == "fault":
                    trace.tick(tokens=100, running=8, waiting=2, finished=5)
                else:
                    trace.tick(tokens=lumpy_tokens[i % 8] if lumpy else noisy(1000, i, 0.05),
                               running=8, finished=5)
        return trace

    assert not opened_at(build(lumpy=True, fault_s=6).run())
    assert opened_at(build(lumpy=True, fault_s=25).run()) == [40 + int(t("noisy_hold_s")) + 1]
    assert opened_at(build(lumpy=False, fault_s=6).run()) == [44]


def test_a_queue_the_service_never_had_is_not_its_own_noise():
    """A lumpy service's own dips never filled a queue.  A prompt storm that defers two dozen
    requests (the queue growing from none while tokens/s collapse, 11 s) opens after the
    usual hold, not after noisy_hold_s: on CI's two cores the real llama.cpp storm lasted
    less than that, and no episode opened.  The same dip without a queue still waits, and so
    does a service whose own bursts queue."""
    lumpy_tokens = (400, 1700, 900, 1500, 300, 1200, 1800, 600)

    def build(queue: bool, bursts_queue: bool = False) -> Trace:
        trace = Trace()
        for i in range(40):
            # a service whose own bursts queue a dozen requests for two ticks in ten
            trace.tick(tokens=lumpy_tokens[i % 8], running=8, finished=5,
                       waiting=12.0 if bursts_queue and i % 10 in (3, 4) else 0.0)
        for i in range(11):
            trace.tick(tokens=100, running=8, waiting=3.0 * (i + 1) if queue else 0.0,
                       finished=1, itl=0.08)  # the decodes stalled behind the prompts
        for i in range(30):
            trace.tick(tokens=lumpy_tokens[i % 8], running=8, finished=5)
        return trace

    opened = opened_at(build(queue=True).run())
    assert opened and opened[0] < 40 + t("noisy_hold_s"), opened
    assert not opened_at(build(queue=False).run())
    # ...but a service whose own bursts fill a queue waits as any noisy one does
    assert not opened_at(build(queue=True, bursts_queue=True).run())


def test_a_different_trouble_soon_after_an_episode_is_a_new_episode():
    """What the H200 lab recorded (tests/data/h200/lab): a DataLoader stall (the trainer at
    a sixth of its tokens/s, the GPU waiting) ends, and seconds later CUDA-graph replays of
    one-element kernels hold GPU-Util at 99% on 0.3% of the SMs.  Within REOPEN_S, but with a
    different clear leading cause: two episodes, each with its own verdict, not the stall
    reopened and its verdict rewritten (the lab's graph phase read "no episode")."""
    trace = Trace(engine="trainer", procs=[(5001, 5000, 0, "python -u train.py")],
                  engine_pids=(5000, 5001), tick_s=2.0)
    total = [0.0]
    _steps(trace, 30, 50000.0, total, util=lambda i: noisy(62, i, 0.05), sm=50)
    _steps(trace, 12, 8000.0, total, util=25.0, sm=12.0, samples=(97.0,) + (6.0,) * 5)
    _steps(trace, 8, 50000.0, total, util=lambda i: noisy(62, i, 0.05), sm=50)
    _steps(trace, 12, 13000.0, total, util=99.0, sm=0.3, dram=0.0, tensor=0.0)
    _steps(trace, 15, 50000.0, total, util=lambda i: noisy(62, i, 0.05), sm=50)
    found = episodes(trace.run())
    assert [e.suspects[0][0] for e in found] == ["input_stall", "tiny_kernels"], \
        [(e.headline, e.suspects, e.history) for e in found]


def test_a_host_run_queue_is_weighed_against_the_cpus_it_counts():
    """/proc/stat's run queue is the whole host's.  A trainer held to 2 of 16 CPUs with 4
    tasks runnable on the host is not crowded (the H200 lab's DataLoader stall read as host
    contention so); busy loops pinned onto its 2 CPUs (4 -> 11) crowd it; an unpinned
    process is judged against all the CPUs, as before."""
    from gputop.model.features import _crowded

    assert not _crowded(4, 4, 2, 16)
    assert not _crowded(5, 4, 2, 16)  # a task more on a 16-CPU host
    assert _crowded(11, 4, 2, 16)  # rose by more than the tree's CPUs
    assert _crowded(17, None, 2, 16)  # over every CPU of the host
    assert not _crowded(11, None, 2, 16)  # no baseline yet: only the host's CPUs say
    assert _crowded(5, 1, 4, 4) and not _crowded(4, 1, 4, 4)
    assert _crowded(5, 1, 4, None)  # the host's CPUs unknown: the tree's


def test_a_starved_jobs_steps_are_a_saw_tooth_at_its_own_busy_level():
    """The H200 lab's trainer at 58% GPU-Util, its DataLoader starved: the driver's samples
    read 63-69% in a step and 0 otherwise, a step in one sample of ten.  For a job that is
    a saw-tooth (steps at its own level, idle between, again and again); for a serving
    engine the fixed thresholds stay; a job that idles with no steps coming back is none."""
    from gputop.model.features import _alternation

    second = [0.0] * 5
    step = [0.0, 45.0, 63.0, 5.0, 0.0]
    series = (second + step) * 5  # 10 s of samples at 5 a second
    strength, mean = _alternation(series, 58.0, 100.0, job=True)
    assert strength >= 0.9 and mean < 15, (strength, mean)
    assert _alternation(series, 58.0, 100.0, job=False)[0] == 0.0
    assert _alternation(second * 8 + step + second, 58.0, 100.0, job=True)[0] == 0.0


@pytest.mark.parametrize("scrape_ticks", [1, 8])
def test_a_kv_pool_full_with_a_queue_scraped_every_16_s_is_one_episode(scrape_ticks):
    """vLLM on 2 s ticks: the KV pool at 96% and requests queueing (0 -> 118 waiting) with
    no preemption yet.  Scraped every 16 s, with the three ticks before each scrape missed,
    the queue's rise shows only between readings (not tick to tick), and a missed scrape is
    no recovery: one kv_pressure episode, as when every tick is read."""
    trace = Trace(tick_s=2.0)
    for i in range(60):
        trace.tick(util=97, tokens=noisy(2000, i, 0.05), running=30, waiting=0,
                   kv=noisy(0.6, i, 0.05))
    for i in range(60):
        trace.tick(util=97, tokens=noisy(2000, i, 0.05), running=30 + i % 7, waiting=2 * i,
                   kv=0.96, ttft=0.15 + 0.5 * i, prompt=noisy(2000, i, 0.3))
    frames = []
    for i, frame in enumerate(trace.frames):
        phase = i % scrape_ticks
        if i >= 60 and phase >= 5:
            frame = dataclasses.replace(frame, engine=None)  # the scrape failed
        elif i >= 60:
            frame = dataclasses.replace(frame, engine=trace.frames[i - phase].engine)
        frames.append(frame)
    found = episodes(run_frames(frames))
    assert [e.suspects[0][0] for e in found] == ["kv_pressure"], \
        [(e.measure, e.start_wall_s, e.end_wall_s) for e in found]


def test_a_mild_fault_reason_does_not_hold_another_episode_open():
    """A passively cooled card in a warm rack: "thermal (sw)" from minute two, its clock 6%
    down (under fault_held_clock_drop: no episode of its own), then 40 s of KV pressure
    (preemptions, a queue).  When the pool recovers, that episode ends: the clock's looser
    clearing bar holds only a throttling episode open (an adversarial review found every
    later tick kept it open and tallied toward throttling)."""
    trace = Trace()
    for i in range(440):
        warm = i >= 120
        kw = dict(clock=noisy(1980 * 0.94, i, 0.003) if warm else noisy(1980, i, 0.003),
                  throttle=("thermal (sw)",) if warm else (), temp=86 if warm else 80)
        if 200 <= i < 240:
            trace.tick(tokens=1300, running=24, waiting=10 + 2 * (i - 200), kv=0.99,
                       preempt=2.5, prompt=4000, itl=0.04, **kw)
        else:
            trace.tick(tokens=noisy(3000, i, 0.03), running=40, kv=0.6, itl=0.03, **kw)
    ep = only(trace.run())
    assert ep.end_wall_s is not None and ep.suspects[0][0] == "kv_pressure", (
        ep.end_wall_s, ep.suspects)
