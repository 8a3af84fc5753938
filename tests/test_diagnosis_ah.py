"""The mechanisms a blind corpus (bench/heldout/corpus_ah, a startup's bare-metal GPU estate
in a bad month) showed the verdict missing or breaking on, one each, from the physics that
makes them, and what they must not name."""

from __future__ import annotations

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
