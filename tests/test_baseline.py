"""The baseline carries its sorted values, latency pairs and per-GPU counts from one sample
to the next instead of recomputing them: every answer must equal one from the same samples
taken afresh (a baseline built from the samples alone, nothing carried)."""

from __future__ import annotations

import random

from gputop.model.baseline import Baseline, Sample

NAMES = ("util", "tokens", "prompt", "dram")  # "prompt" is SPIKY: its upper quartile
GPUS = (0, 1, 2)


def _sample(rng: random.Random, time_mono_s: float) -> Sample:
    def level() -> float:  # repeated values too: a removal must find its own copy
        return rng.choice((rng.uniform(0, 100), 50.0, 70.0, 0.0))

    def maybe(value: float) -> float | None:
        return value if rng.random() > 0.2 else None

    values = {n: level() for n in NAMES if rng.random() > 0.15}
    per_gpu = {name: {g: level() for g in GPUS if rng.random() > 0.2}
               for name in ("clock", "sm", "util", "power")}
    throttle = {g: frozenset(rng.sample(("power cap", "thermal", "hw slowdown"),
                                        rng.randint(0, 2))) for g in GPUS}
    pids = {g: frozenset(rng.sample(range(100, 110), rng.randint(0, 3)))
            for g in GPUS if rng.random() > 0.1}
    latency = rng.choice((0.0, 0.02, 0.05, rng.uniform(0.01, 0.2)))
    return Sample(time_mono_s, values, per_gpu, throttle, pids,
                  running=maybe(float(rng.randint(0, 40))), itl_p99_s=maybe(latency),
                  ttft_p99_s=maybe(rng.uniform(0.05, 2.0)), itl_p50_s=maybe(latency / 2))


def _answers(base: Baseline) -> tuple[object, ...]:
    """Everything the detector asks of a baseline."""
    return (
        tuple(base.get(n) for n in NAMES),
        tuple(base.gpu(name, g) for name in ("clock", "sm", "util", "power") for g in GPUS),
        {g: r for g, r in base.usual_throttle.items() if r},
        {g: p for g, p in base.known_pids.items() if p},
        base.pairs,
        tuple(base.latency_at(name, running) for name in ("itl", "ttft", "itl50")
              for running in (None, 0.0, 1.0, 3.0, 12.0, 35.0, 80.0)),
        base.renewed().samples,
    )


def test_carried_answers_equal_fresh_ones() -> None:
    rng = random.Random(7)
    for _ in range(20):
        base, now = Baseline(), 0.0
        for _ in range(120):
            now += rng.choice((0.5, 1.0, 1.0, 3.0, 4.0, 30.0))  # a gap empties the window
            base.get("util")  # a partly asked baseline carries part of its answers
            if rng.random() > 0.5:
                _answers(base)
            base = base.add(_sample(rng, now), window_s=40.0)
            assert _answers(base) == _answers(Baseline(base.samples))


def test_carry_happens() -> None:
    """The carried path is the one taken (else the test above compares fresh with fresh)."""
    rng = random.Random(3)
    base = Baseline()
    for i in range(30):
        base = base.add(_sample(rng, 3.0 * i), window_s=40.0)
        _answers(base)
    added = base.add(_sample(rng, 3.0 * 30), window_s=40.0)
    assert len(added.samples) == len(base.samples)  # one in, one out
    assert {("v", "util"), ("g", "sm", 1), ("counts", "pids"), ("with_load", "itl"),
            "pairs"} <= set(added._carried)
    # handed over, not copied: the timeline keeps every tick's state and its baseline
    assert not base._carried
    assert _answers(base) == _answers(Baseline(base.samples))  # (built again when asked)


def test_renewed_judges_the_older_samples_alone() -> None:
    """Five quicker samples at no less output become the baseline: the older samples' tail
    (the median of four: 145 ms) is what they are judged against, not one that counts them
    too (it would read 90 ms, and 70 ms would not be quicker)."""
    def sample(i: int, itl_s: float) -> Sample:
        return Sample(float(i), {"tokens": 100.0}, {}, {}, {}, running=8.0,
                      itl_p99_s=itl_s, ttft_p99_s=None, itl_p50_s=None)

    older = [sample(i, x) for i, x in enumerate((0.08, 0.09, 0.2, 0.2))]
    newer = tuple(sample(4 + i, 0.07) for i in range(5))
    base = Baseline(tuple(older) + newer)
    assert base.pairs["itl"]  # (asked first: the older samples' pairs are carried over)
    assert base.renewed().samples == newer
    assert Baseline(tuple(older) + newer).renewed().samples == newer
