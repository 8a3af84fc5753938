"""The mechanisms a blind corpus (bench/heldout/corpus_z, an ML platform team's on-call week)
showed the verdict getting wrong, one each, from the physics that makes them: a
summarisation wave whose ITL p50 the output contradicts, launch tails of tens of
microseconds, a trainer's evaluation pass; and that the real faults beside them are still
named."""

from __future__ import annotations

from tests.diagnosis_frames import Trace, episodes, named, noisy


def test_a_slow_reading_p50_that_the_output_contradicts_names_no_request():
    """SGLang with TP2 on A100s, whose inter-token times were always two modes (decode steps,
    and the steps carrying a prefill chunk: 40% of tokens at ~0.45 s).  Long summaries
    arrive: requests finish at a fifth of their rate (each runs longer), the slow mode passes
    half the tokens so the p50 jumps 20x, the p99 barely moves, and tokens/s holds from a
    batch a third larger.  Tokens/s is the batch over the step: the output says the typical
    token is not 20x slower, so a few requests' share of the work (n sequences of one) is no
    verdict."""
    trace = Trace(engine="sglang")
    for i in range(150):
        trace.tick(tokens=noisy(3000, i, 0.03), running=noisy(57, i, 0.03), itl=0.019,
                   itl_tail=(0.45, 0.4), finished=15.0)
    for i in range(15):
        trace.tick(tokens=noisy(3100, i, 0.03), running=77, itl=0.019,
                   itl_tail=(0.45, 0.62), finished=3.0)
    for i in range(60):
        trace.tick(tokens=noisy(3000, i, 0.03), running=noisy(57, i, 0.03), itl=0.019,
                   itl_tail=(0.45, 0.4), finished=15.0)
    found = episodes(trace.run())
    assert not any(e.suspects and e.suspects[0][0] == "oversized_request" for e in found), \
        named(found)


def test_launch_tails_of_tens_of_microseconds_are_no_descheduled_thread():
    """eBPF on an SGLang server: cuLaunchKernel's p99 moves between 6 us and 40 us (a lock,
    a big graph), several times its usual, while the first tokens wait 4x and the
    inter-token tail wobbles 1.5x now and then (bursts of arrivals).  A call descheduled
    mid-way lasts a scheduler slice, milliseconds; these are not that."""
    trace = Trace(engine="sglang")
    for i in range(200):
        slow = i >= 60 and i % 7 < 4
        trace.tick(tokens=noisy(3400, i, 0.03), itl=0.02,
                   itl_tail=(0.06, 0.03) if slow else None, ttft=0.6 if slow else 0.15,
                   launch_us=(1000, 40.0, 30) if slow else (1000, 8.0))
    found = episodes(trace.run())
    assert not found, named(found)


def test_a_descheduled_launch_thread_is_still_named():
    """The same server when a co-located agent takes the scheduler thread's core: launch
    p99 10-17 ms, the GPU idles in the gaps (99% -> 80%), the inter-token tail 3x."""
    trace = Trace(engine="sglang")
    for i in range(120):
        trace.tick(util=noisy(99, i, 0.005), tokens=noisy(3400, i, 0.03), itl=0.02,
                   launch_us=(1000, 8.0))
    for i in range(90):
        trace.tick(util=noisy(80, i, 0.03), tokens=noisy(2500, i, 0.03), itl=0.02,
                   itl_tail=(0.06, 0.2), launch_us=(1000, 14000.0, 30))
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "host_launch_jitter", named(found)


def _trainer_tick(trace: Trace, i: int, work: float, mem_util: float) -> None:
    trace.tick(util=noisy(99, i, 0.005), sm=None, dram=None, tensor=None, mem_util=mem_util,
               work=work, tokens=0.0, proc_cpu=100)


def test_a_trainers_evaluation_pass_is_no_memory_bound_collapse():
    """DDP on A100s (no GPM): every 2 minutes a 20 s evaluation pass, forward only, reads
    more memory per FLOP (the memory controller 27% -> 57%) while the training-samples
    counter stands still.  A memory-bound share of each step costs that step a part; a
    counter all but stopped is another phase, with the controller far from saturated."""
    trace = Trace(engine="trainer", procs=[(9001, 9000, 0, "torchrun train.py")],
                  engine_pids=(9000, 9001))
    work = 0.0
    for cycle in range(3):
        for i in range(100):
            work += 400.0
            _trainer_tick(trace, i, work, noisy(27, i, 0.03))
        for i in range(20):
            _trainer_tick(trace, i, work, noisy(57, i, 0.02))
    found = episodes(trace.run())
    assert not found, named(found)


def test_a_trainer_saturating_its_memory_is_still_memory_bound():
    """The same job after an unfused optimizer lands: the memory controller at 97% and the
    samples counter at half its pace, for minutes."""
    trace = Trace(engine="trainer", procs=[(9001, 9000, 0, "torchrun train.py")],
                  engine_pids=(9000, 9001))
    work = 0.0
    for i in range(150):
        work += 400.0
        _trainer_tick(trace, i, work, noisy(27, i, 0.03))
    for i in range(150):
        work += 200.0
        _trainer_tick(trace, i, work, noisy(97, i, 0.01))
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "memory_bandwidth", named(found)
