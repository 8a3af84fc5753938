"""An engine scraped less often than gputop ticks (every 2-15 s: a collector told to go
easy on a busy server, Prometheus' 15 s default copied over) is judged as one read every
tick: its newest reading stands for its latency until the next is due, and the three
separate slow readings the inter-token trigger asks for span its scrape interval, not the
tick (at 1 s ticks three 2 s readings span 4 s, longer than the 3.5 s the tick allowed:
the trigger never held at any scrape interval over 1.75 s)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gputop.schema import Frame

from tests.diagnosis_frames import (START_WALL_S, Trace, episodes, named, noisy, run_frames,
                                   scraped_every)


def _steady(trace: Trace, ticks: int) -> None:
    """vLLM on an H100: 2,000 tokens/s over 30 requests, every token 20 ms apart."""
    for i in range(ticks):
        trace.tick(util=noisy(95, i, 0.01), sm=75, tensor=45, tokens=noisy(2000, i, 0.05),
                   prompt=noisy(2000, i, 0.1), running=30, itl=0.02, ttft=0.15)


def _served(fault) -> list[Frame]:
    """150 s of steady service, 120 s of ``fault`` (a tick function of the tick's index),
    then 60 s of steady service again."""
    trace = Trace()
    _steady(trace, 150)
    for i in range(120):
        fault(trace, i)
    _steady(trace, 60)
    return trace.frames


def _slow_tail(trace: Trace, i: int) -> None:
    """A fifth of the tokens 100 ms apart (5x) and nothing else that moves: the inter-token
    tail is the only measure, and no cause is named (an episode of its own)."""
    trace.tick(util=noisy(93, i, 0.01), sm=73, tensor=44, tokens=noisy(1900, i, 0.05),
               prompt=noisy(1900, i, 0.1), running=32, itl=0.02, ttft=0.2,
               itl_tail=(0.1, 0.2))


def _long_prompts(trace: Trace, i: int) -> None:
    """A RAG tenant's 4x longer prompts: a tenth of the tokens 80 ms apart, the first
    tokens 3x later, tokens/s at 0.9x."""
    trace.tick(util=noisy(97, i, 0.01), sm=72, tensor=70, dram=40, tokens=noisy(1750, i, 0.05),
               prompt=noisy(8000, i, 0.1), running=30, itl=0.02, ttft=0.45,
               itl_tail=(0.08, 0.1))


def _opened_s(found) -> list[float]:
    return [e.start_wall_s - START_WALL_S for e in found]


@pytest.mark.parametrize("every_s", [2, 5, 10, 15])
def test_an_inter_token_tail_read_every_few_seconds_opens_its_episode(every_s):
    """The tail alone opens an episode read every second (at 154 s); read every 2-15 s it
    opens too, within three of its readings of the onset (the old span: never)."""
    found = episodes(run_frames(scraped_every(_served(_slow_tail), every_s)))
    assert len(found) == 1 and found[0].measure == "itl", named(found)
    assert 150 < _opened_s(found)[0] <= 150 + 3 * every_s + 5, _opened_s(found)


@pytest.mark.parametrize("every_s", [10, 15])
def test_long_prompts_read_every_ten_seconds_or_more_are_named_as_read_every_second(every_s):
    """The same tenant's prompts named prefill interference, as strongly as at 1-5 s (0.84-
    0.95): the latency of the newest reading stands between readings (before, a 15 s
    scrape left it in the window 5 s of each 15 and the finding never held; 10 s, weakly)."""
    found = episodes(run_frames(scraped_every(_served(_long_prompts), every_s)))
    assert len(found) == 1, named(found)
    cause, score = found[0].suspects[0]
    assert cause == "prefill_interference" and score >= 0.8, found[0].suspects
    assert 150 < _opened_s(found)[0] <= 150 + 3 * every_s, _opened_s(found)


@pytest.mark.parametrize("every_s", [5, 15])
def test_steady_service_read_every_few_seconds_is_no_episode(every_s):
    """The look-alike: the same service with no fault, read as seldom: its one reading
    standing for 15 s is no finding."""
    assert episodes(run_frames(scraped_every(_served(
        lambda trace, i: _steady(trace, 1)), every_s))) == []


def test_a_reading_stands_only_until_the_next_is_due():
    """An engine that stops answering (its last reading carried on every frame for a
    minute) has no latency once its reading is older than its interval and a second: the
    reading at 55 s stands to 61 s, none after."""
    from gputop.model.detect import DetectConfig, step
    from gputop.model.point import point

    trace = Trace()
    _steady(trace, 60)
    frames = scraped_every(trace.frames, 5)
    stale = [replace(frames[-1], seq=frames[-1].seq + k, time_mono_s=frames[-1].time_mono_s + k,
                     time_wall_s=frames[-1].time_wall_s + k) for k in range(1, 30)]
    state, before, seen = None, None, []
    for end, frame in enumerate(frames + stale, 1):
        now = point((frames + stale)[:end], before, None)
        state = step(state, now, DetectConfig())
        before = state.point
        seen.append("itl" in state.point.latency)
    assert all(seen[10:60]), "a reading every 5 s stands between readings"
    assert seen[61] and not any(seen[62:]), seen[55:]


def test_each_replicas_latency_stands_between_readings_as_the_pages_does():
    """What the screen shows: two data-parallel replicas on one page read every 15 s.  Ten
    seconds after a reading the page's latency and each replica's are shown (the page's was
    blank two thirds of the time), and once the reading is older than its interval and a
    second, neither is (the replicas' stood for as long as frames carried the reading)."""
    from gputop.model.derive import engine_view
    from gputop.model.detect import make_fold
    from gputop.model.timeline import Timeline
    from tests.diagnosis_frames import data_parallel

    ranks = [Trace(), Trace()]
    for rank in ranks:
        _steady(rank, 60)
    frames = scraped_every(data_parallel(*ranks), 15)  # read at 0, 15, 30 and 45 s
    last = frames[-1]
    frames += [replace(last, seq=last.seq + k, time_mono_s=last.time_mono_s + k,
                       time_wall_s=last.time_wall_s + k) for k in range(1, 6)]
    timeline = Timeline(len(frames) + 10, make_fold())
    for frame in frames:
        timeline.append(frame)

    def shown(i: int) -> list[bool]:
        view = engine_view(timeline, i)
        return ["itl" in v.latency for v in (view, *view.replicas)]

    assert len(engine_view(timeline, 55).replicas) == 2
    assert shown(55) == [True] * 3 and shown(61) == [True] * 3, (shown(55), shown(61))
    assert shown(63) == [False] * 3 and shown(64) == [False] * 3, (shown(63), shown(64))


def test_a_replica_read_at_its_own_moment_stands_as_its_own_reading():
    """Two data-parallel replicas (one page merged from two endpoints) each read every 15 s,
    the second 7 s after the first (one slow /metrics staggers them): replica 0's 5x
    inter-token tail opens its episode as when they are read together (the page's last
    readings alone stood for both: replica 0's reading stood 6 s of each 15, silent)."""
    def rank(fault: bool) -> Trace:
        trace = Trace()
        for i in range(330):
            hit = fault and 150 <= i < 270
            trace.tick(util=noisy(95, i, 0.01), sm=75, tensor=45, tokens=noisy(2000, i, 0.05),
                       prompt=noisy(2000, i, 0.1), running=30, itl=0.02,
                       ttft=0.2 if hit else 0.15, itl_tail=(0.1, 0.2) if hit else None)
        return trace

    from tests.diagnosis_frames import data_parallel

    for offset in (0, 7):
        faulty, healthy = rank(True), rank(False)
        faulty.frames = scraped_every(faulty.frames, 15)
        healthy.frames = scraped_every(healthy.frames, 15, offset)
        found = episodes(run_frames(data_parallel(faulty, healthy)))
        assert [(e.subject, e.measure) for e in found] == [("engine:engine=0", "itl")], (
            offset, named(found))
        assert 150 < _opened_s(found)[0] <= 150 + 3 * 15 + 5, (offset, _opened_s(found))


def test_a_standing_reading_is_judged_by_but_not_learned_again():
    """The latency baseline takes one sample a tick: a reading standing 15 ticks would be
    learned 15 times (one reading outweighing the ones before it, a slow one learned as
    the normal).  It is learned while it is within the window, as before, and only judged
    by after: every latency sample the baseline holds is within 5 s of its reading."""
    trace = Trace()
    _steady(trace, 200)
    frames = scraped_every(trace.frames, 15)
    states = run_frames(frames)
    reads = sorted({f.engine.time_mono_s for f in frames if f.engine is not None})
    engine = next(s for s in states[-1].subjects if s.subject.kind == "engine")
    learned = [s.time_mono_s for s in engine.base.samples if s.itl_p99_s is not None]
    assert len(learned) >= 8, learned
    assert all(0 <= t - max(r for r in reads if r <= t) < 5.0 for t in learned), learned
    assert any(state.point.latency_stood for state in states)
