"""A job whose steps still come, slower, while its GPU sits idle between them: each step
waits for something off the GPU.  The slower-work trigger wanted the GPU at 20%+ busy (a
busy GPU doing less), so a reward scorer reading an object store (corpus AG: its four GPUs
at 5% util, its samples at 0.24x for eight minutes) opened nothing.  A counter that has
stopped is still the job's own phase (a checkpoint, an evaluation), and a short dip is no
episode."""

from __future__ import annotations

from tests.diagnosis_frames import START_WALL_S, Trace, episodes, named, noisy


def _scorer(slow_per_s: float, ticks: int) -> Trace:
    """A reward-scoring job on four GPUs, 100 samples a second at 98% util for 120 s, then
    ``ticks`` seconds at ``slow_per_s`` samples a second with the GPUs at 5%, then 60 s
    back at its pace."""
    trace = Trace(engine="trainer", gpus=4,
                  procs=[(7000 + g, 6999, g, "python score_rollouts.py") for g in range(4)])
    work = 0.0
    for i in range(120):
        work += 100
        trace.tick(util=noisy(98, i, 0.01), sm=80, work=work)
    for _ in range(ticks):
        work += slow_per_s
        trace.tick(util=5, sm=4, tensor=0, power=120, work=work)
    for i in range(60):
        work += 100
        trace.tick(util=noisy(98, i, 0.01), sm=80, work=work)
    return trace


def test_steps_coming_slowly_with_the_gpu_idle_are_an_input_stall():
    found = episodes(_scorer(24, 150).run())
    assert len(found) == 1, named(found)
    assert found[0].kind == "starved" and found[0].measure == "work", found[0].measure
    assert found[0].suspects[0][0] == "input_stall", found[0].suspects
    assert found[0].start_wall_s - START_WALL_S <= 125


def test_a_stopped_counter_with_the_gpu_idle_is_the_jobs_own_phase():
    """The look-alike: a checkpoint written for 30 s, the counter stopped."""
    assert episodes(_scorer(0, 30).run()) == []


def test_twenty_seconds_of_slow_steps_is_no_episode():
    """A lighter phase of the job's own holds 90 s before it is an episode."""
    assert episodes(_scorer(24, 20).run()) == []
