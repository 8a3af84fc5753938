"""Evidence merged over an episode's course keeps the peak of each finding."""

from __future__ import annotations

from gputop.model.evidence import Evidence, merge


def seen(value, baseline, when, signal="sm_active", count=1.0):
    return Evidence(signal, value, baseline, "%", gpu=0, when_wall_s=when, count=count)


def test_a_finding_keeps_its_value_furthest_from_its_baseline_and_its_whole_span():
    """SM active 0.3% then 25% (baseline 49%): the peak stays, the span widens to the last."""
    merged = merge((seen(0.3, 49.0, 10.0),), (seen(25.0, 49.0, 30.0),))
    assert [(e.value, e.when_wall_s, e.until_wall_s) for e in merged] == [(0.3, 10.0, 30.0)]
    # further on either side: a latency 13x its baseline beats 3x; a rise beats a fall's echo
    merged = merge((seen(3.0, 1.0, 1.0, "itl_p99"),), (seen(13.0, 1.0, 2.0, "itl_p99"),))
    assert merged[0].value == 13.0
    # tick-to-tick noise around the peak is not a recovery: the newest, as the screen shows
    assert merge((seen(10.0, 60.0, 1.0),), (seen(11.0, 60.0, 2.0),))[0].value == 11.0


def test_a_finding_without_a_baseline_takes_the_newest_sighting():
    merged = merge((seen(81.0, None, 1.0, "kv_full"),), (seen(42.0, None, 2.0, "kv_full"),))
    assert (merged[0].value, merged[0].when_wall_s, merged[0].until_wall_s) == (42.0, 1.0, 2.0)


def test_sightings_of_a_request_still_add_up():
    a = Evidence("notable", 8.0, None, "", detail="n=8", when_wall_s=1.0)
    b = Evidence("notable", 8.0, None, "", detail="n=8", when_wall_s=5.0)
    assert merge((a,), (b,))[0].count == 2.0
