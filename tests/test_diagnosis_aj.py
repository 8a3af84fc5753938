"""What corpus AJ (an AI lab's post-training cluster, written blind) taught: an RL job's
rollout engine has phases a serving engine does not.  Its batch of n x 48 generations
drains to the few longest, each token reading a long context; and every ~60 s a dedicated
rollout node stops generating for a weight broadcast from the trainer, all its GPUs in
one NCCL collective for seconds.  Neither is a fault; a tensor-parallel engine whose
kernels are small on every GPU for good still is."""

from __future__ import annotations

from tests.diagnosis_frames import START_WALL_S, Trace, episodes, named, noisy


def _rollout(drain: bool) -> Trace:
    """SGLang generating 10,000 tokens/s over 200 sequences (20 ms a token), then 40 s in
    which every token takes 45 ms: ``drain``, the batch emptying from 160 to 40 with none
    waiting and the KV pool holding more per sequence (the longest left: 2-3x the usual
    context); else the batch held at 200 with 30 waiting and the pool filling (a service
    whose users' contexts grew)."""
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
                   kv=0.18 - 0.06 * share if drain else 0.45, itl=0.045, ttft=0.2)
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


def _rollout_node(hollow_s: int, pauses: int = 4) -> Trace:
    """vLLM TP4 on a dedicated rollout node: 9,000 tokens/s, then ``pauses`` times
    ``hollow_s`` seconds with every GPU 95% busy on 15% of its SMs (NCCL), no token, five
    requests waiting; 4 s of catching up (the waiting ones' first tokens 6 s late) and 50 s
    of service after each."""
    trace = Trace(gpus=4)

    def steady(ticks: int) -> None:
        for i in range(ticks):
            trace.tick(util=noisy(92, i, 0.01), sm=70, tensor=45, dram=55,
                       tokens=noisy(9000, i, 0.04), prompt=noisy(6000, i, 0.1), running=40,
                       itl=0.03, ttft=0.15)

    steady(70)
    for _ in range(pauses):
        for _ in range(hollow_s):
            trace.tick(util=95, sm=15, tensor=0, dram=20, tokens=0, prompt=0, running=40,
                       waiting=5, itl=0.03, ttft=0.15)
        for _ in range(4):
            trace.tick(util=92, sm=70, tensor=45, dram=55, tokens=12000, prompt=9000,
                       running=40, itl=0.03, ttft=6.0)
        steady(50)
    return trace


def test_a_rollout_node_pausing_for_each_weight_broadcast_is_no_episode():
    """Four 6 s broadcasts a minute apart: before, each opened a tiny-kernels episode (the
    GPUs' busy time on a sliver of SMs, no token) that closed 6 s later."""
    assert episodes(_rollout_node(6).run()) == []


def test_small_kernels_on_every_gpu_for_good_still_open_after_the_barrier_hold():
    """45 s of the same readings is no broadcast: tiny kernels, named once the 30 s a
    barrier is given has passed (the episode dated from its onset)."""
    found = episodes(_rollout_node(45, pauses=1).run())
    assert len(found) == 1, named(found)
    assert found[0].suspects[0][0] == "tiny_kernels", found[0].suspects
    assert found[0].start_wall_s - START_WALL_S <= 72, found[0].start_wall_s - START_WALL_S
