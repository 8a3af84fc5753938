"""The mechanisms a blind corpus (bench/heldout/corpus_ah, a startup's bare-metal GPU estate
in a bad month) showed the verdict missing or breaking on, one each, from the physics that
makes them, and what they must not name."""

from __future__ import annotations

import math

from gputop.model.thresholds import t
from tests.diagnosis_frames import Trace, episodes, named, noisy


def test_preemptions_from_an_engine_without_a_kv_gauge_do_not_break_the_detector():
    """An engine page with preemption counters but no KV-cache usage gauge (or a scrape that
    missed it): the preemptions are evidence, the pool's fill is unknown, and nothing
    raises (the live screen would have died on this tick)."""
    trace = Trace()
    for i in range(120):
        trace.tick(tokens=noisy(2000, i, 0.04), running=30, kv=None)
    for i in range(90):
        trace.tick(tokens=noisy(900, i, 0.04), running=30, waiting=40, kv=None, preempt=3.0)
    found = episodes(trace.run())
    assert found, named(found)


RANKS = [(31200 + g, 31199, g, f"torchrun fsdp_sft.py --local_rank={g}") for g in range(8)]


def _fsdp_steps(trace: Trace, ticks: int, work: float) -> float:
    """An FSDP fine-tune on eight H100s: a step (one unit) every tick at 100% util, 78% SM."""
    for i in range(ticks):
        work += 1.0
        trace.tick(util=100, sm=noisy(78, i, 0.01), tensor=50, work=work,
                   samples=(100.0,) * 5)
    return work


def _checkpoint(trace: Trace, work: float, gather_ticks: int, sm_gather: float) -> None:
    """A checkpoint: every rank in the state dict's all-gather (busy on ``sm_gather``% SM) for
    ``gather_ticks``, the counter stopped, then 16 s of the GPUs idle while rank 0 writes."""
    for _ in range(gather_ticks):
        trace.tick(util=100, sm=sm_gather, tensor=0, work=work, samples=(100.0,) * 5)
    for _ in range(16):
        trace.tick(util=0, sm=0.0, tensor=0, power=90, work=work, samples=(0.0,) * 5)


def test_a_checkpoints_gather_on_every_rank_at_once_is_no_tiny_kernels():
    """Every rank busy on 5% of its SMs for 6 s at once, no step completing, then idle while
    rank 0 writes: the ranks together in the gather's collectives, a phase the job passes."""
    trace = Trace(gpus=8, engine="trainer", procs=RANKS, engine_pids=())
    work = _fsdp_steps(trace, 100, 0.0)
    _checkpoint(trace, work, 6, 5.0)
    _fsdp_steps(trace, 100, work)
    found = episodes(trace.run())
    assert not found, named(found)


def test_every_rank_on_a_sliver_of_its_sms_for_good_is_still_named():
    """...but every rank's steps on 5% of its SMs for good (a per-item loop in each rank,
    steps half as fast): held past the barrier's grace, named tiny kernels."""
    trace = Trace(gpus=8, engine="trainer", procs=RANKS, engine_pids=())
    work = _fsdp_steps(trace, 100, 0.0)
    for i in range(150):
        work += 0.5
        trace.tick(util=100, sm=noisy(5, i, 0.02), tensor=2, work=work, samples=(100.0,) * 5)
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "tiny_kernels", named(found)


def _reference_pass(sm: float) -> Trace:
    """A GRPO job's reference-model pass at micro-batch 1 on an H100, no counter, from the
    moment gputop starts: 96% util with ``sm``% SM for five minutes."""
    trace = Trace(engine=None, procs=[(41001, 41000, 0, "python grpo_ref_logprobs.py")])
    for i in range(300):
        trace.tick(util=noisy(96, i, 0.01), sm=noisy(sm, i, 0.03), tensor=3, power=190)
    return trace


def test_a_job_on_a_fifth_of_its_sms_from_its_start_is_tiny_kernels():
    """SM activity a fifth of GPU-Util from the first reading: no healthy ratio to fall from,
    a quarter or less of the busy time on SMs for minutes is kernels too small for the GPU."""
    found = episodes(_reference_pass(19.0).run())
    assert found and found[0].suspects[0][0] == "tiny_kernels", named(found)


def test_a_job_on_half_its_sms_from_its_start_is_not():
    """...but half of GPU-Util on SMs (a memory-bound step, a small model's GEMMs): work."""
    found = episodes(_reference_pass(48.0).run())
    assert not found, named(found)


def _quota_engine(util_late: float, itl_late: float, throttled_late: float) -> Trace:
    """vLLM in a pod under a 2-CPU quota: healthy for two minutes (5% of periods throttled),
    then its tokenizer's load grows: ``throttled_late`` of the periods throttled, the tree at
    half its CPU, GPU-Util ``util_late``, each token ``itl_late`` s (23 ms before), the batch
    grown so tokens/s holds."""
    trace = Trace(engine="vllm")
    for i in range(120):
        trace.tick(util=noisy(95, i, 0.01), tokens=noisy(1500, i, 0.03), running=24,
                   itl=0.023, tree_cpu=190, quota=2.0, throttled=0.05, proc_cpu=95)
    for i in range(150):
        trace.tick(util=noisy(util_late, i, 0.01), tokens=noisy(1480, i, 0.03), running=28,
                   itl=itl_late, tree_cpu=95, quota=2.0, throttled=throttled_late, proc_cpu=47)
    return trace


def test_a_quota_holding_the_engine_back_with_a_milder_cost_is_named():
    """Throttled in 70% of periods, its CPU halved, the GPU 8 points less busy and every token
    1.2x slower (a larger batch keeps tokens/s): the quota costs every user a fifth."""
    found = episodes(_quota_engine(87, 0.0276, 0.7).run())
    assert found and found[0].suspects[0][0] == "host_cpu_contention", named(found)


def test_a_quota_throttling_with_no_cost_is_not():
    """...but the same throttling with the GPU as busy and the tokens as fast: no harm."""
    found = episodes(_quota_engine(95, 0.023, 0.7).run())
    assert not found, named(found)


def _eager_trainer(launch_late_us: float, rate_late: float) -> Trace:
    """An eager training loop on an A100 with a step counter, eBPF on: 100% util throughout
    (the queue of launched kernels keeps the GPU fed), 10 units of work a tick; then its
    launch calls last ``launch_late_us`` and it does ``rate_late`` of its work."""
    trace = Trace(engine="trainer", procs=[(52001, 52000, 0, "python -u train_eager.py")],
                  engine_pids=(52000, 52001))
    work = 0.0
    for i in range(120):
        work += 10.0
        trace.tick(util=100, sm=noisy(70, i, 0.01), work=work, launch_us=(4800, 9.0))
    for i in range(150):
        work += 10.0 * rate_late
        trace.tick(util=100, sm=noisy(62, i, 0.01), work=work, launch_us=(4800, launch_late_us))
    return trace


def test_launch_stalls_that_cost_a_job_a_sixth_of_its_steps_are_named():
    """Launch calls measured lasting a scheduler slice while the job makes 0.83x its steps,
    GPU-Util kept at 100%: the launch finding opens, and its cause is named with it at a
    score a verdict stands on (`verdict_min`); before, the signature asked for a larger fall
    and scored it 0.03 (corpus AH's trace, at 0.04, ended with no suspect at all)."""
    found = episodes(_eager_trainer(2000.0, 0.83).run())
    assert found and found[0].suspects and found[0].suspects[0][0] == "host_launch_jitter", \
        named(found)
    assert found[0].suspects[0][1] >= t("verdict_min"), found[0].suspects


def test_launch_calls_as_quick_as_ever_with_fewer_steps_are_not_named_jitter():
    """...but the same fall with launches as quick as ever: no launch finding."""
    found = episodes(_eager_trainer(9.0, 0.83).run())
    assert "host_launch_jitter" not in [e.suspects[0][0] for e in found if e.suspects], \
        named(found)


def _support_bot(running_late) -> Trace:
    """llama-server for the support team: one ticket in flight at a time for two minutes, its
    prompt seconds 5% of its time; then longer tickets with ``running_late`` in flight (a
    number, or one per tick: ``running_late(i)``): prompt seconds 60% of its time, tokens/s
    down to 0.6x."""
    trace = Trace(engine="llamacpp")
    for i in range(120):
        tokens = noisy(90, i, 0.08)
        trace.tick(util=noisy(80, i, 0.03), sm=None, dram=None, tokens=tokens,
                   prompt=noisy(200, i, 0.1), running=1, decode_s=tokens * 0.02,
                   prefill_s=0.1)
    for i in range(90):
        tokens = noisy(54, i, 0.08)
        trace.tick(util=95, sm=None, dram=None, tokens=tokens, prompt=noisy(900, i, 0.1),
                   running=running_late(i) if callable(running_late) else running_late,
                   decode_s=tokens * 0.0165, prefill_s=1.6)
    return trace


def test_one_request_at_a_time_on_its_own_long_prompt_is_no_prefill_interference():
    """One ticket in flight at a time: its prompt takes the engine's time before its tokens,
    fewer tokens come out, but no other slot's decode waits on it."""
    found = episodes(_support_bot(1.0).run())
    assert not found, named(found)


def test_long_prompts_beside_other_slots_decoding_are_still_named():
    """...but the same prompts with three tickets in flight: the other slots wait."""
    found = episodes(_support_bot(3.0).run())
    assert found and found[0].suspects[0][0] == "prefill_interference", named(found)


# ---- what an adversarial review of the rules above found (probes in its own words, here
# as tests): each fails on the first cut of the rule it names, passes now


def test_a_long_eval_pass_of_a_job_with_a_fuller_normal_is_no_tiny_kernels():
    """A fine-tune at SM 0.5 of util, every three minutes an eval pass's small batches at 0.2
    for 75 s: a phase judged against the job's own normal (it is not hollow enough for
    that), not against the from-the-start line; the baseline renewed during the pass must
    not make the pass the normal the line is then drawn from."""
    trace = Trace(engine=None, procs=[(61001, 61000, 0, "python train_sft.py")])
    i = 0
    for _ in range(2):
        for _ in range(180):
            trace.tick(util=noisy(98, i, 0.01), sm=noisy(49, i, 0.03), tensor=30, power=520)
            i += 1
        for _ in range(75):
            trace.tick(util=noisy(95, i, 0.01), sm=noisy(19, i, 0.03), tensor=3, power=400)
            i += 1
    for _ in range(120):
        trace.tick(util=noisy(98, i, 0.01), sm=noisy(49, i, 0.03), tensor=30, power=520)
        i += 1
    found = episodes(trace.run())
    assert not found, named(found)


def test_a_job_bound_by_its_collectives_from_its_start_is_no_tiny_kernels():
    """A DDP job whose all-reduce takes most of each step from its first reading: every rank
    at 100% util on 20% SM, its steps steady: the ranks in their collectives, no small
    kernels of one rank."""
    ranks = [(71200 + g, 71199, g, f"torchrun ddp_train.py --local_rank={g}") for g in range(4)]
    trace = Trace(gpus=4, engine="trainer", procs=ranks, engine_pids=())
    work = 0.0
    for i in range(300):
        work += 2.0
        trace.tick(util=100, sm=noisy(20, i, 0.05), tensor=8, power=180, work=work,
                   samples=(100.0,) * 5)
    found = episodes(trace.run())
    assert "tiny_kernels" not in [e.suspects[0][0] for e in found if e.suspects], named(found)


def _quota_at_no_cost(running_late: int, tokens_late: float, util) -> Trace:
    """The pod of _quota_engine throttled in 70% of its periods at half its CPU, each token as
    fast as ever (23 ms); ``running_late`` in flight at ``tokens_late`` tokens/s, GPU-Util
    ``util(i)``."""
    trace = Trace(engine="vllm")
    for i in range(180):
        trace.tick(util=util(i), tokens=noisy(1500, i, 0.03), running=24, itl=0.023,
                   tree_cpu=190, quota=2.0, throttled=0.05, proc_cpu=95)
    for i in range(180, 330):
        trace.tick(util=util(i), tokens=noisy(tokens_late, i, 0.03), running=running_late,
                   itl=0.023, tree_cpu=95, quota=2.0, throttled=0.7, proc_cpu=47)
    return trace


def test_a_throttled_engine_whose_traffic_ebbs_is_not_harmed():
    """Fewer requests in flight (24 -> 19) and tokens/s with them (0.79x): each sequence as
    fast as before; an engine's tokens/s follows its traffic, so it is no milder cost."""
    found = episodes(_quota_at_no_cost(19, 1190, lambda i: noisy(95, i, 0.01)).run())
    assert not found, named(found)


def test_a_throttled_engine_whose_util_wobbles_is_not_harmed():
    """GPU-Util swinging +-6 points in 40 s waves (traffic waves), as healthy serving does,
    its tokens as fast as ever (their p50 read from buckets jumps 1.2x at a bound; the
    window's mean does not)."""
    found = episodes(_quota_at_no_cost(
        24, 1490, lambda i: 92 + 6 * math.sin(i * 2 * math.pi / 40)).run())
    assert not found, named(found)


def test_two_slots_one_emptying_between_tickets_still_wait_on_the_prompts():
    """Two slots whose second empties now and then (2, 1, 2, 2, 1 in flight): the other slot
    still decodes beside the long prompts most of the time: named prefill interference."""
    found = episodes(_support_bot(lambda i: (2, 1, 2, 2, 1)[i % 5]).run())
    assert found and found[0].suspects[0][0] == "prefill_interference", named(found)


def test_launch_stalls_held_a_minute_with_no_cost_yet_are_named():
    """Launch calls lasting a scheduler slice for minutes while the queue of kernels keeps the
    GPU at 100% and the steps at their rate (an IRQ re-steered onto the launch core): the
    stalls are measured, so after a minute of them the launches are named, waiting on the
    host; before, nothing (no harm to require)."""
    found = episodes(_eager_trainer(2000.0, 1.0).run())
    assert found and found[0].suspects and found[0].suspects[0][0] == "host_launch_jitter", \
        named(found)
    assert found[0].suspects[0][1] >= t("verdict_min"), found[0].suspects
    assert "its launch calls stall on the host (no cost yet)" in found[0].headline, found[0].headline


def _stalling_trainer(stalled, launch=(4800, 2000.0), ticks: int = 270) -> Trace:
    """The eager trainer at its rate throughout, its launch calls ``launch`` (calls, longest
    us[, how many that long]) on the ticks where ``stalled(i)``, 6 us otherwise."""
    trace = Trace(engine="trainer", procs=[(52001, 52000, 0, "python -u train_eager.py")],
                  engine_pids=(52000, 52001))
    work = 0.0
    for i in range(ticks):
        work += 10.0
        trace.tick(util=100, sm=noisy(70, i, 0.01), work=work,
                   launch_us=launch if stalled(i) else (4800, 9.0))
    return trace


def test_launch_calls_waiting_in_a_full_queue_are_no_stalled_thread():
    """Every launch call (the p50 too) lasting milliseconds at 100% GPU-Util with the rate
    held: the CPU ran ahead and each call waits for room in the GPU's queue of kernels, a
    GPU-bound job, not a descheduled launch thread."""
    found = episodes(_stalling_trainer(lambda i: i >= 120, (4800, 2000.0, 4000), 420).run())
    assert not found, named(found)


def test_launch_stalls_that_come_and_go_with_a_period_are_one_episode():
    """Stalls 50 s on, 20 s off for seven minutes (a cron job on the launch core): one
    finding that stays open across the gaps, not an alert per period."""
    found = episodes(_stalling_trainer(lambda i: i >= 120 and (i - 120) % 70 < 50,
                                       ticks=540).run())
    assert len(found) == 1 and found[0].suspects[0][0] == "host_launch_jitter", named(found)


def test_launch_stalls_of_half_a_minute_with_no_cost_are_not():
    """...but 30 s of such stalls, then launches as quick as ever: a cron job's burst on the
    launch core, nothing to name."""
    found = episodes(_stalling_trainer(lambda i: 150 <= i < 180).run())
    assert not found, named(found)
