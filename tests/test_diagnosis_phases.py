"""A training job's own phases against its steps waiting: an eval pass stops the step
counter altogether (its forward batches make GPU-Util saw-tooth), a stalled input makes
the steps come slower; a sharded checkpoint's gather puts every rank on a sliver at once,
and its GPUs' clocks fall as they go idle after it."""

from __future__ import annotations

from tests.diagnosis_frames import Trace, checkpoint_samples, episodes, noisy, only, \
    opened_at, run_frames, scraped_every

TRAIN = [(5001 + g, 5000, g, "python -u train.py --model bev-large") for g in range(2)]
# NVML's five samples of a tick while the job alternates batches and gaps (mean 64%)
SAW = (100.0, 10.0, 100.0, 10.0, 100.0)


def _trainer() -> Trace:
    return Trace(gpus=2, engine="trainer", procs=TRAIN, engine_pids=(5000, 5001, 5002),
                 tick_s=1.0)


def _run(eval_rate: float, every_s: float = 10.0):
    """120 s of steps at 200 samples/s, 45 s of a saw-tooth at ``eval_rate`` samples/s (0:
    the counter stops), 90 s of steps again; the counter read every ``every_s``."""
    trace, total = _trainer(), 0.0
    for i in range(120):
        total += 200.0
        trace.tick(util=noisy(99, i, 0.005), sm=80, work=round(total))
    for i in range(45):
        total += eval_rate
        trace.tick(util=64, sm=40, samples=SAW, work=round(total))
    for i in range(90):
        total += 200.0
        trace.tick(util=noisy(99, i, 0.005), sm=80, work=round(total))
    return run_frames(scraped_every(trace.frames, every_s))


def test_an_eval_pass_whose_batches_saw_tooth_is_no_episode():
    """The counter read every 10 s stops for the 45 s of an eval pass while GPU-Util
    saw-tooths at 64%: the saw-tooth waits until the counter can tell (three steps and a
    reading without one: no step at all, the job's own phase), and the reading that comes
    back from it (one 50 s step in the rate) is that phase too."""
    assert episodes(_run(0.0)) == []


def test_the_same_saw_tooth_with_the_steps_coming_slower_is_an_input_stall():
    """The control: the same saw-tooth while the counter keeps moving at a third of its
    pace (each step waits for its batch) is a stall, named without waiting out the eval
    pass's allowance."""
    ep = only(_run(70.0))
    assert ep.suspects[0][0] == "input_stall", (ep.suspects, ep.evidence)


def test_a_gather_then_idle_clocks_open_no_episode_before_the_barrier_hold():
    """A sharded checkpoint: every rank on a sliver for 6 s (the gather), then idle at a
    low clock while rank 0 writes, the counter read every 10 s.  The clock falling as the
    cards go idle comes while the barrier is pending and is held as long: no episode; a
    gather that lasts a minute is."""
    def build(gather_s: int):
        trace, total = _trainer(), 0.0
        for i in range(120):
            total += 200.0
            trace.tick(util=noisy(99, i, 0.005), sm=80, work=round(total))
        for i in range(gather_s):
            trace.tick(util=95, sm=3, tensor=0, work=round(total))
        trace.tick(util=55, sm=3, tensor=0, clock=700, work=round(total))
        for i in range(20):
            samples = checkpoint_samples(i)
            trace.tick(util=1, sm=1, tensor=0, power=90, clock=345, work=round(total),
                       samples=samples)
        for i in range(60):
            total += 200.0
            trace.tick(util=noisy(99, i, 0.005), sm=80, work=round(total))
        return run_frames(scraped_every(trace.frames, 10.0))  # (its rate not yet fallen)

    assert episodes(build(6)) == []
    assert episodes(build(60)), "a gather a minute long is the barrier's episode"


def test_an_rl_rollout_engines_weight_broadcast_is_no_episode_unless_it_lasts():
    """An RL job's rollout engine (vLLM, TP 2) takes new weights every minute: both GPUs
    sit in the NCCL broadcast on a sliver of their SMs for 4 s, its output stops and its
    counters show it a reading later.  The finding began as every rank on a sliver: the
    barrier's hold covers what follows it (an engine whose output fell first, a request's
    work stalling every rank, is judged at once).  Ranks stuck in the collective for a minute (a
    gridlock) are an episode."""
    def build(stuck_s: int):
        trace = Trace(gpus=2)
        for i in range(150):
            trace.tick(util=noisy(92, i, 0.01), sm=80, tokens=noisy(8000, i, 0.03),
                       running=60)
        for cycle in range(3):
            for i in range(stuck_s):
                # (the tokens counter shows the stop a reading or two later: the sliver first)
                trace.tick(util=95, sm=3, tensor=0, tokens=8000 if i < 2 else 0, running=60)
            for i in range(3):
                trace.tick(util=92, sm=80, tokens=1500 if i == 0 else 8000, running=80)
            for i in range(55):
                trace.tick(util=noisy(92, i, 0.01), sm=80, tokens=noisy(8000, i, 0.03),
                           running=60)
        return trace.run()

    assert episodes(build(4)) == []
    assert episodes(build(60)), "ranks stuck in the collective for a minute"


def _stall_in_long_steps(slow_step_s: float, stall_ticks: int) -> tuple[list, int]:
    """A large job's 10 s steps (the counter moves once a step, read every second) whose
    input stalls: steps of ``slow_step_s`` while GPU-Util saw-tooths, for ``stall_ticks``."""
    trace, steps, since = _trainer(), 0, 0.0
    for i in range(120):
        since += 1.0
        if since >= 10.0:
            steps, since = steps + 1, 0.0
        trace.tick(util=noisy(99, i, 0.005), sm=80, work=steps)
    for i in range(stall_ticks):
        since += 1.0
        if since >= slow_step_s:
            steps, since = steps + 1, 0.0
        trace.tick(util=64, sm=40, samples=SAW, work=steps)
    for i in range(60):
        since += 1.0
        if since >= 10.0:
            steps, since = steps + 1, 0.0
        trace.tick(util=noisy(99, i, 0.005), sm=80, work=steps)
    return trace.run(), 120


def test_a_stall_slowing_long_steps_threefold_is_named_once_the_counter_can_tell():
    """Steps of 10 s slowed to 30 s while GPU-Util saw-tooths: until the counter shows a
    step (or three steps' time without one), a stall and an eval pass read the same; the
    first slow step says steps still come, and the stall is named then, not missed."""
    states, t0 = _stall_in_long_steps(30.0, 240)
    ep = only(states)
    assert ep.suspects[0][0] == "input_stall", (ep.suspects, ep.evidence)
    assert opened_at(states)[0] - t0 <= 45, opened_at(states)


def test_a_stall_of_one_sixfold_step_is_still_named():
    """One step 6x its usual (60 s) under a saw-tooth, then the usual pace: the counter
    stopped for as long as an eval pass's, and the finding that waited on it starts again
    when it moves; the saw-tooth still there then is the stall, named, not lost."""
    states, _ = _stall_in_long_steps(60.0, 65)
    assert episodes(states), "a minute of a stalled input"
