"""Evidence merged over an episode's course keeps the peak of each finding."""

from __future__ import annotations

from gputop.model.evidence import Evidence, merge


def seen(value, baseline, when, signal="sm_active", count=1.0):
    return Evidence(signal, value, baseline, "%", gpu=0, when_wall_s=when, count=count)


def test_a_finding_keeps_its_value_furthest_from_its_baseline_and_its_whole_span():
    """SM active 0.3% then 25% (baseline 49%): the peak stays, the span widens to the last."""
    merged = merge((seen(0.3, 49.0, 10.0),), (seen(25.0, 49.0, 30.0),))
    assert [(e.value, e.when_wall_s, e.until_wall_s) for e in merged] == [(0.3, 10.0, 30.0)]
    # further on either side: a rise to 3x, then back to 1.2x, keeps 3x (a fall from the
    # baseline is judged the same way: 0.3% SM above)
    merged = merge((seen(3.0, 1.0, 1.0, "itl_p99"),), (seen(1.2, 1.0, 2.0, "itl_p99"),))
    assert merged[0].value == 3.0
    # tick-to-tick noise around the peak is not a recovery: the newest, as the screen shows
    assert merge((seen(10.0, 60.0, 1.0),), (seen(11.0, 60.0, 2.0),))[0].value == 11.0


def test_a_finding_without_a_baseline_takes_the_newest_sighting():
    merged = merge((seen(81.0, None, 1.0, "kv"),), (seen(42.0, None, 2.0, "kv"),))
    assert (merged[0].value, merged[0].when_wall_s, merged[0].until_wall_s) == (42.0, 1.0, 2.0)


def test_sightings_of_a_request_still_add_up():
    a = Evidence("notable", 8.0, None, "", detail="n=8", when_wall_s=1.0)
    b = Evidence("notable", 8.0, None, "", detail="n=8", when_wall_s=5.0)
    assert merge((a,), (b,))[0].count == 2.0


def _episode(measure, p99=None, base=None, tokens_per_s=1000.0, **values):
    from gputop.model.detect import Episode
    return Episode(kind="busy_unproductive", gpus=(0,), start_wall_s=0.0, end_wall_s=None,
                   baseline_tokens_per_s=1000.0, tokens_per_s=tokens_per_s, util_pct=95.0,
                   facts=(), suspects=(), measure=measure, latency_p99_s=p99,
                   latency_baseline_s=base, values=values)


def test_an_open_episode_quotes_its_peak_with_that_peaks_own_numbers():
    """A milder tick of a latency episode keeps the peak's ratio *and* its p99 (the headline
    is built from both); a recovering tick read by a measure of another kind (tokens after an
    ITL episode) is quoted as itself, never as a latency headline without a latency."""
    from types import SimpleNamespace

    from gputop.model.detect import _shown

    feats = SimpleNamespace(v={}, s={})
    peak = _episode("itl", 0.5, 0.05, itl_ratio=10.0, tokens_ratio=0.9)
    mild = _episode("itl", 0.12, 0.05, itl_ratio=2.4, tokens_ratio=0.95)
    shown = _shown(mild, peak, feats, recovering=False)
    assert (shown.latency_p99_s, shown.values["itl_ratio"]) == (0.5, 10.0)
    assert "10.0x" in shown.headline and "500" in shown.headline, shown.headline
    # as bad as the peak (within peak_keep): the newest numbers, as the screen shows them
    close = _episode("itl", 0.45, 0.05, itl_ratio=9.0, tokens_ratio=0.9)
    assert _shown(close, peak, feats, recovering=False).latency_p99_s == 0.45
    tokens = _episode("tokens", tokens_per_s=500.0, tokens_ratio=0.5, itl_ratio=1.6)
    shown = _shown(tokens, peak, feats, recovering=True)
    assert shown.measure == "tokens" and "500 tok/s" in shown.headline, shown.headline
    # a tick that is worse than the peak is no recovery, whatever held its trigger back
    worse = _episode("tokens", tokens_per_s=100.0, tokens_ratio=0.1)
    was = _episode("tokens", tokens_per_s=500.0, tokens_ratio=0.5)
    assert _shown(worse, was, feats, recovering=True).tokens_per_s == 100.0
