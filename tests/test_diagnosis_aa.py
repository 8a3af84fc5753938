"""The mechanisms a blind corpus (bench/heldout/corpus_aa, a GPU cloud's customer
escalations) showed the verdict getting wrong, one each, from the physics that makes them:
an engine whose decodes always stall behind prefill batches, so its latency normal never
left its first readings; a burst of ordinary arrivals judged as one request's work; ranks
that init adopted, judged one by one instead of as one job; and that what they must not
hide is still named."""

from __future__ import annotations

from tests.diagnosis_frames import Trace, episodes, named, noisy, only


def _sglang_stalling_behind_prefill(trace: Trace, ticks: int) -> None:
    """SGLang runs prefill batches on their own: every decode waits behind them, so 8% of
    the inter-token times sit at 0.25 s from the first minute on (10x the decode step)."""
    for i in range(ticks):
        trace.tick(tokens=noisy(3000, i, 0.03), running=noisy(30, i, 0.03), itl=0.02,
                   itl_tail=(0.25, 0.08), finished=15.0)


def _ramp(trace: Trace) -> None:
    """The engine ramping up for 20 s as gputop starts: the batch growing 3 -> 30 (no
    steady batch to learn from), its prefill stalls showing from the 18th second."""
    for i in range(20):
        trace.tick(tokens=300 + 135 * i, running=3 + 1.35 * i, itl=0.02,
                   itl_tail=(0.25, 0.08) if i >= 18 else None, finished=1.5 + 0.675 * i)


def test_a_latency_normal_still_young_judges_no_tail_and_the_baseline_learns_the_service():
    """The engine ramps up as gputop starts (its few first latency readings are the
    ramp's, without the prefill stalls), then serves steadily with its usual stalls.
    Those readings are too few to be a tail's normal: holding every tick to them (the tail
    10x) kept the baseline from learning anything for minutes, and an eval script's n=4
    with logprobs (every step 2.2x slower, the batch swelling to twice its size at the same
    tokens/s) went unnamed."""
    trace = Trace(engine="sglang")
    _ramp(trace)
    _sglang_stalling_behind_prefill(trace, 100)
    for i in range(120):
        trace.tick(tokens=noisy(2950, i, 0.03), running=noisy(60, i, 0.03), itl=0.045,
                   itl_tail=(0.25, 0.08), finished=15.0)
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "oversized_request", named(found)


def test_the_same_service_with_nothing_wrong_opens_nothing():
    """...and the same start and steady stalls, with no request to blame: the learned
    normal holds its usual tail, so nothing opens."""
    trace = Trace(engine="sglang")
    _ramp(trace)
    _sglang_stalling_behind_prefill(trace, 220)
    found = episodes(trace.run())
    assert not found, named(found)


def _chat(trace: Trace, i: int) -> None:
    trace.tick(tokens=noisy(1400, i, 0.04), prompt=noisy(2000, i, 0.04),
               running=noisy(13, i, 0.05), itl=0.02, ttft=0.15, finished=7.0)


def test_a_burst_of_ordinary_arrivals_is_no_request_stalling_the_batch():
    """A prefix-cached RAG endpoint takes a 30 s burst: prompts of the usual length at 2.2x
    the rate, the batch swelling 13 -> 65 while the first requests of the burst are still
    running (finishes lag by a request's lifetime), each step 2.3x slower for the larger
    batch, tokens/s up half.  More work arriving: no queue, no first token waiting."""
    trace = Trace()
    for i in range(150):
        _chat(trace, i)
    for i in range(30):
        trace.tick(tokens=noisy(2100, i, 0.04), prompt=noisy(4400, i, 0.04),
                   running=min(65, 13 + 4 * i), itl=0.046, ttft=0.15, finished=9.0,
                   admitted=15.4)
    for i in range(90):
        _chat(trace, i)
    found = episodes(trace.run())
    assert not found, named(found)


def test_one_request_stalling_the_batch_without_a_burst_is_still_named():
    """The same endpoint at its usual arrivals when one request's n sequences with logprobs
    slow every step 2.3x: the batch swells by Little's law at the same tokens/s."""
    trace = Trace()
    for i in range(150):
        _chat(trace, i)
    for i in range(90):
        trace.tick(tokens=noisy(1350, i, 0.04), prompt=noisy(2000, i, 0.04),
                   running=min(30, 13 + i), itl=0.046, ttft=0.15, finished=6.5)
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "oversized_request", named(found)


def _morning(trace: Trace, i: int, rise: float) -> None:
    """A chat endpoint's arrivals ``rise`` x its night's: each request as long as ever (200
    tokens), every token slower with the batch it decodes in (ITL 20 -> 45 ms at 1.4x), so
    by Little's law the batch grows faster than the arrivals (28 -> 88 sequences)."""
    itl = 0.02 + 0.0625 * (rise - 1.0)
    running = 7.0 * rise * 200 * itl
    trace.tick(tokens=noisy(running / itl, i, 0.04), prompt=noisy(2000 * rise, i, 0.04),
               running=noisy(running, i, 0.03), itl=itl, ttft=0.15,
               finished=noisy(7.0 * rise, i, 0.04))


def test_more_arrivals_slowing_every_token_is_no_request_stalling_the_batch():
    """The morning ramp: arrivals up 1.4x over a minute, every token 2.25x slower in a batch
    three times its night's, tokens/s up 1.4x.  The batch outgrew the output (Little's law),
    as it does when one request's n sequences stall it, but requests finish 1.4x as often,
    each with its usual reply: more traffic, not a request hogging the steps."""
    trace = Trace()
    for i in range(150):
        _morning(trace, i, 1.0)
    for i in range(60):
        _morning(trace, i, 1.0 + 0.4 * i / 60)
    for i in range(150):
        _morning(trace, i, 1.4)
    found = episodes(trace.run())
    assert not found, named(found)


def test_n_sequences_counted_as_requests_still_stall_the_batch():
    """...but one client's n=4 with logprobs: vLLM and SGLang count each of its sequences as
    a finished request, so requests finish 1.4x as often, each with fewer tokens than usual,
    as if more traffic came.  Its sequences joined the batch at once (13 -> 30), every step
    2.3x slower: one request's work, named."""
    trace = Trace()
    for i in range(150):
        _chat(trace, i)
    for i in range(90):
        trace.tick(tokens=noisy(1350, i, 0.04), prompt=noisy(2000, i, 0.04),
                   running=30, itl=0.046, ttft=0.15, finished=noisy(9.8, i, 0.04))
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "oversized_request", named(found)


def _ranks(command: str, ppid: int) -> list:
    return [(38488 + 13 * g, ppid, g, command.format(g=g)) for g in range(4)]


def test_ranks_that_init_adopted_are_one_job_and_the_slow_one_is_named():
    """FSDP on four H100s whose ranks init adopted (ppid 1: the launcher exec'd or exited),
    each command line with its --local_rank: GPU 2 drops to 1.3 GHz (HW slowdown) and the
    other three wait for it in NCCL every step (SM 92% -> 45%).  Judged rank by rank, each
    GPU is a job of its own and the verdict is a clock on GPU 2; as one job it is the rank
    the others wait for."""
    procs = _ranks("torchrun --nproc_per_node=4 train_fsdp.py --local_rank={g}", 1)
    trace = Trace(gpus=4, engine=None, procs=procs, engine_pids=())
    for i in range(120):
        trace.tick(util=99, sm=noisy(92, i, 0.01), tensor=60, clock=1980)
    for i in range(90):
        trace.tick(util=99, sm=[45, 45, 93, 45], tensor=[30, 30, 60, 30],
                   clock=[1980, 1980, 1305, 1980], throttle=[(), (), ("hw slowdown",), ()])
    found = episodes(trace.run())
    assert found and found[0].suspects[0][0] == "collective_straggler", named(found)
    assert found[0].gpus == (2,) and set(found[0].job_gpus) == {0, 1, 2, 3}, named(found)


def test_copies_of_one_script_that_init_adopted_are_not_one_job():
    """Two copies of one embedding script started with nohup on GPUs 0 and 1 (ppid 1, no
    rank argument): two services, one of them idle, neither waiting for the other."""
    procs = [(5101, 1, 0, "python3 embed_server.py --port 9000"),
             (5102, 1, 1, "python3 embed_server.py --port 9000")]
    trace = Trace(gpus=2, engine=None, procs=procs, engine_pids=())
    for i in range(200):
        trace.tick(util=[noisy(97, i, 0.01), 2], sm=[noisy(85, i, 0.01), 1], tensor=[50, 0],
                   clock=[1980, 1980])
    found = episodes(trace.run())
    assert not found, named(found)


def test_an_all_ranks_power_brake_under_init_is_still_throttling():
    """The same adopted ranks when the node's power brake cuts every board alike: no rank
    is slower than the others, so the verdict is the clocks, not a straggler."""
    procs = _ranks("torchrun --nproc_per_node=4 train_fsdp.py --local_rank={g}", 1)
    trace = Trace(gpus=4, engine=None, procs=procs, engine_pids=())
    for i in range(120):
        trace.tick(util=99, sm=noisy(92, i, 0.01), tensor=60, clock=1980)
    for i in range(90):
        trace.tick(util=99, sm=noisy(92, i, 0.01), tensor=60, clock=1100,
                   throttle=("hw slowdown", "power brake"))
    ep = only(trace.run())
    assert ep.suspects[0][0] == "throttling", (ep.suspects, ep.headline)


def _tgi(trace: Trace, i: int, tokens: float) -> None:
    """TGI counts a request's generated tokens as it succeeds (tgi_request_generated_tokens):
    with 4 long requests in flight (28 s each), one ends every 7 s and the counter moves by
    its whole reply then, nothing between."""
    lump = i % 7 == 0
    trace.tick(util=noisy(96, i, 0.01), tokens=7 * tokens if lump else 0.0, running=4,
               finished=1.0 if lump else 0.0)


def test_a_tgi_counter_that_moves_as_requests_finish_is_no_collapse():
    """A small TGI box at steady load: its generated-token counter reads 0 on six ticks in
    seven and seven ticks' worth on the seventh.  Averaged over requests' lifetimes it is as
    steady as its GPU: nothing opens."""
    trace = Trace(engine="tgi")
    for i in range(300):
        _tgi(trace, i, noisy(400, i, 0.05))
    found = episodes(trace.run())
    assert not found, named(found)


def test_a_tgi_box_whose_output_falls_is_named():
    """...and the same box when every reply takes three times as long (the lumps come a third
    as often for two minutes, the batch as full, nothing else on the host or the GPU to
    see).  Read tick by tick, the counter's normal is 0 (six ticks in seven), so nothing was
    ever judged by it; averaged over the requests' lifetimes, the output fell to a third."""
    trace = Trace(engine="tgi")
    for i in range(150):
        _tgi(trace, i, noisy(400, i, 0.05))
    for i in range(120):
        lump = i % 21 == 0
        trace.tick(util=noisy(96, i, 0.01), tokens=7 * 400 if lump else 0.0, running=4,
                   finished=1.0 if lump else 0.0)
    found = episodes(trace.run())
    assert found, "no episode"
