"""What corpus AJ (an AI lab's post-training cluster, written blind) taught: an RL job's
rollout engine has phases a serving engine does not.  Its batch of n x 48 generations
drains to the few longest, each token reading a long context: no fault."""

from __future__ import annotations

from tests.diagnosis_frames import Trace, episodes, named, noisy


def _rollout(drain: bool) -> Trace:
    """SGLang generating 10,000 tokens/s over 200 sequences (20 ms a token, the pool 20%
    used), then 40 s in which every token takes 45 ms: ``drain``, the batch emptying from
    160 to 40 with none waiting, the pool still 34% -> 25% used (the longest left, each
    2-6x the usual context: every step reads more KV than its normal); else the batch held
    at 200 with 30 waiting and the pool filling (a service whose users' contexts grew)."""
    trace = Trace(engine="sglang")
    for i in range(150):
        trace.tick(util=noisy(97, i, 0.01), sm=80, tensor=50, dram=60,
                   tokens=noisy(10000, i, 0.03), prompt=noisy(3000, i, 0.1), running=200,
                   kv=0.2, itl=0.02, ttft=0.2)
    for i in range(40):
        share = i / 39
        running = 160 - 120 * share if drain else 200
        trace.tick(util=noisy(97, i, 0.01), sm=80, tensor=40, dram=70, tokens=running / 0.045,
                   prompt=0 if drain else 3000, running=running, waiting=0 if drain else 30,
                   kv=0.34 - 0.09 * share if drain else 0.45, itl=0.045, ttft=0.2)
    for _ in range(20):
        trace.tick(util=3, sm=1, tensor=0, dram=1, tokens=0, prompt=0, running=0, kv=0.0)
    return trace


def test_a_rollout_batch_draining_to_its_longest_generations_is_no_episode():
    """The last of a rollout's generations are its longest: each token reads 2-3x the usual
    context, no one waits, the batch empties.  Before, the slower step opened an episode."""
    assert episodes(_rollout(drain=True).run()) == []


def test_contexts_growing_while_users_wait_still_open_an_episode():
    """The look-alike the rule must not swallow: the same slower tokens with the batch held
    and a queue (users still there, their contexts longer) is judged, memory-bound."""
    found = episodes(_rollout(drain=False).run())
    assert len(found) == 1, named(found)
    assert found[0].suspects[0][0] == "memory_bandwidth", found[0].suspects


def test_a_memory_fault_in_a_draining_batch_still_opens():
    """The review's case: a batch draining as decode physics says (the step follows the
    weights plus the KV every sequence reads, and that total falls as sequences finish, so
    tokens get faster), contexts 1 -> 3x; 80 s in, another container's memory traffic (DRAM
    60 -> 88%) makes every token 2x slower.  That is no tail's length: memory bandwidth."""
    trace = Trace(engine="sglang")
    for i in range(150):
        trace.tick(util=noisy(97, i, 0.01), sm=80, tensor=50, dram=60,
                   tokens=noisy(10000, i, 0.03), prompt=noisy(3000, i, 0.1), running=200,
                   kv=0.2, itl=0.02, ttft=0.2)
    for i in range(120):
        running = 200 - 1.5 * i
        kv = 0.2 * running / 200 * (1 + 2 * i / 120)
        itl = 0.02 * (0.6 + 0.4 * kv / 0.2) * (2.0 if i >= 80 else 1.0)
        trace.tick(util=noisy(96, i, 0.01), sm=78, tensor=40, dram=88 if i >= 80 else 60,
                   prompt=0, running=running, waiting=0, kv=kv, ttft=0.2, itl=itl,
                   tokens=running / itl)
    found = episodes(trace.run())
    assert len(found) == 1, named(found)
    assert found[0].suspects[0][0] == "memory_bandwidth", found[0].suspects
