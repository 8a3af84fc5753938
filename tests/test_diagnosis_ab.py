"""The mechanisms a blind corpus (bench/heldout/corpus_ab, an ML platform team's on-call
fortnight) showed the verdict getting wrong, one each, from the physics that makes them: a
checkpoint's copies read as a starved job's steps; a job learned while it loaded its
checkpoint held to its idle normal; a notebook on a data-parallel replica's GPU unseen
because the page named no process of that replica; and that what they must not hide is
still named."""

from __future__ import annotations

import dataclasses

from tests.diagnosis_frames import (Trace, checkpoint_samples, data_parallel, episodes,
                                    gather_tick, named, noisy, run_frames)

RANKS = [(22710 + g, 22709, g, f"python3 pretrain.py --local_rank={g}") for g in range(4)]


def _steps(trace: Trace, ticks: int, work: float) -> float:
    """Steady training: a step (two units of work) every tick at 100% GPU-Util and 80% SM;
    the counter's total after them."""
    for i in range(ticks):
        work += 2.0
        trace.tick(util=100, sm=noisy(80, i, 0.01), tensor=43, work=work,
                   samples=(100.0,) * 5)
    return work


def test_a_checkpoint_whose_copies_read_busy_now_and_then_is_no_input_stall():
    """Pre-training on four H100s with a step counter: every four minutes the job writes a
    checkpoint for 45 s, its counter stopped, its GPUs idle but for one NVML sample in
    thirteen at 100% (the SMs at 1%).  Read as samples alone that is a starved job's rare
    steps; the SMs did no step's work, and the counter says no step came at all."""
    trace = Trace(gpus=4, engine="trainer", procs=RANKS, engine_pids=())
    work = _steps(trace, 150, 0.0)
    for i in range(45):
        trace.tick(util=1, sm=1.0, tensor=0, power=82, work=work, samples=checkpoint_samples(i))
    _steps(trace, 120, work)
    found = episodes(trace.run())
    assert not found, named(found)


def test_a_checkpoint_of_a_job_without_a_counter_is_no_input_stall():
    """The same checkpoint where the job exports no counter (most do not): nothing says its
    steps stopped; its SMs at 1% under the busy samples say no step's work ran in them."""
    trace = Trace(gpus=4, engine=None, procs=RANKS)
    for i in range(150):
        trace.tick(util=100, sm=noisy(80, i, 0.01), tensor=43, samples=(100.0,) * 5)
    for i in range(45):
        trace.tick(util=1, sm=1.0, tensor=0, power=82, samples=checkpoint_samples(i))
    for i in range(120):
        trace.tick(util=100, sm=noisy(80, i, 0.01), tensor=43, samples=(100.0,) * 5)
    found = episodes(trace.run())
    assert not found, named(found)


def test_a_checkpoint_gathered_by_collectives_is_no_input_stall():
    """A sharded job's checkpoint gathered by all-gathers: the busy samples are NCCL kernels
    on a few SMs (20% while they run), enough to read as a step's work; the counter, stopped
    for the 45 s, says the steps are in a phase of their own."""
    trace = Trace(gpus=4, engine="trainer", procs=RANKS, engine_pids=())
    work = _steps(trace, 150, 0.0)
    for i in range(45):
        gather_tick(trace, i, work)
    _steps(trace, 120, work)
    found = episodes(trace.run())
    assert not found, named(found)


def test_the_same_job_starved_of_its_input_is_still_named():
    """...and the same job when its loader falls behind: a step in four ticks, each as full
    as ever (100% samples, the SMs at 80% while it runs), the counter moving with them."""
    trace = Trace(gpus=4, engine="trainer", procs=RANKS, engine_pids=())
    work = _steps(trace, 150, 0.0)
    for i in range(120):
        step = i % 4 == 0
        work += 2.0 if step else 0.0
        trace.tick(util=100 if step else 2, sm=80 if step else 1.0, tensor=43 if step else 0,
                   work=work, samples=(100.0,) * 5 if step else (2.0,) * 5, proc_cpu=100)
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "input_stall", named(found)


def test_a_job_first_seen_loading_its_checkpoint_is_not_held_to_its_idle():
    """A spot node back: the job loads its checkpoint for 100 s as gputop starts (its GPUs
    idle, one NVML sample in thirteen at 100%), then trains.  What it was learned at is
    idle: no steps to wait between, so its samples' noise is no saw-tooth."""
    trace = Trace(gpus=4, engine="trainer", procs=RANKS, engine_pids=())
    for i in range(100):
        trace.tick(util=1, sm=noisy(1.2 if i < 40 else 0.6, i, 0.9), tensor=0, power=84,
                   work=0.0, samples=checkpoint_samples(i))
    for i in range(150):
        trace.tick(util=100, sm=noisy(80, i, 0.01), tensor=43, work=2.0 * (i + 1),
                   samples=(100.0,) * 5)
    found = episodes(trace.run())
    assert not found, named(found)


def _replicas(notebook_from: int | None) -> list:
    """vLLM --data-parallel-size 2, each replica's reading tied to its GPU but naming no
    process (the page does not say which pid serves it); from tick ``notebook_from`` a
    notebook's training loop runs on GPU 1 (14 GiB, its SM time not reported), replica 1's
    tokens/s falling by 40% while its GPU's SMs read busier."""
    ranks = [Trace(procs=[(33914 + r, 33904, 0, "python3 -m vllm.entrypoints.openai.api_server"
                            f" --data-parallel-size 2 (rank {r})")],
                   engine_pids=(33914 + r,)) for r in range(2)]
    notebook = [(71003, 1, 0, "python -m ipykernel_launcher -f kernel-3f1.json", None)]
    for i in range(300):
        on = notebook_from is not None and i >= notebook_from
        ranks[0].tick(tokens=noisy(2000, i, 0.04), running=30, itl=0.02)
        ranks[1].tick(tokens=noisy(1200 if on else 2000, i, 0.04), running=30,
                      itl=0.034 if on else 0.02, sm=92 if on else 70,
                      extra_procs=notebook if on else ())
    frames = data_parallel(*ranks)
    return [dataclasses.replace(f, engine=dataclasses.replace(f.engine, replicas=tuple(
        dataclasses.replace(r, pids=()) for r in f.engine.replicas))) for f in frames]


def test_a_notebook_on_a_replicas_gpu_is_named_where_the_page_names_no_pid():
    """The notebook's process is new on GPU 1 and not the replica's (the engine's pid there
    is): the GPU is shared, on GPU 1 only."""
    found = episodes(run_frames(_replicas(150)))
    assert found and found[0].suspects[0][0] == "gpu_shared", named(found)
    assert found[0].gpus == (1,), named(found)


def test_the_replicas_alone_open_nothing():
    found = episodes(run_frames(_replicas(None)))
    assert not found, named(found)


def _canary(accepted_share: float) -> list:
    """An EAGLE endpoint accepting 70% of its drafts restarts for a canary (gone 40 s,
    counters from 0), then serves as before but accepting ``accepted_share`` of them: each
    step drafts 3 tokens per sequence, and at 7% keeps about one token a step, every token
    2.6x slower, a batch as large.  Its new baseline knows nothing of the run before."""
    trace = Trace()
    for i in range(150):
        trace.tick(tokens=noisy(4000, i, 0.04), running=20, itl=0.0026, drafted=4800,
                   accepted=noisy(3360, i, 0.03))
    for _ in range(40):
        trace.tick(util=0, sm=0, engine_up=False)
    trace.restart_counters()
    slower = 1.0 if accepted_share >= 0.7 else 2.6
    for i in range(240):
        trace.tick(tokens=noisy(4000 / slower, i, 0.04), running=20, itl=0.0026 * slower,
                   drafted=4800 / slower, accepted=noisy(4800 / slower * accepted_share, i, 0.03))
    return trace.run()


def test_a_canary_whose_drafts_no_longer_match_is_named_across_its_restart():
    """The canary brought new target weights beside the old draft model: acceptance 7%
    from its first request.  How well the drafts match is the models', not the load's: the
    run before the restart is its normal, and the drafts are wasted work."""
    found = episodes(_canary(0.07))
    assert found and found[0].suspects[0][0] == "spec_decode_rejected", named(found)


def test_a_canary_that_accepts_as_before_opens_nothing():
    found = episodes(_canary(0.7))
    assert not found, named(found)
