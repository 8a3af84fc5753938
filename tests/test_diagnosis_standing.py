"""A card's standing among its peers (the clock it always ran at, learned from the healthy
window) excuses a lower bin or a warmer slot; it must not excuse a card held down by a fault
of its own from the first tick on (corpora AA and AB: a rank at HW-slowdown or power-brake
clocks the whole run, its job 12-15% slower, never named)."""

from __future__ import annotations

from tests.diagnosis_frames import Trace, episodes, named, noisy

RANKS = [(52000 + g, 51999, g, f"torchrun --nproc-per-node 4 train.py --local_rank={g}")
         for g in range(4)]


def _job(clock_2: float, reasons_2: tuple[str, ...], seconds: int = 300,
         reasons_all: tuple[str, ...] = ()) -> Trace:
    """FSDP on four A100s (no SM counter: power is the work's measure), rank 2 at
    ``clock_2`` with ``reasons_2`` from the first tick; the others wait for it in every
    reduce-scatter at full GPU-Util, drawing a little less than it does."""
    trace = Trace(gpus=4, engine=None, procs=RANKS, engine_pids=())
    for i in range(seconds):
        trace.tick(util=100, sm=None, dram=None, tensor=None,
                   clock=[1410, 1410, clock_2, 1410],
                   power=[noisy(280, i, 0.02), noisy(282, i + 3, 0.02), noisy(255, i + 5, 0.02),
                          noisy(279, i + 7, 0.02)],
                   throttle=[reasons_all, reasons_all, reasons_2 + reasons_all, reasons_all])
    return trace


def test_a_rank_held_by_a_fault_from_the_start_is_the_straggler():
    """Rank 2 at 1,215 MHz with "hw slowdown" from the first tick, the others at 1,410:
    the baseline learns the gap as rank 2's standing, and its peers' clocks say the card is
    no lower bin: the rank the job waits for, named with its reason."""
    found = episodes(_job(1215, ("hw slowdown",)).run())
    assert found and found[0].suspects[0][0] == "collective_straggler", named(found)
    assert found[0].gpus == (2,), named(found)
    said = [e for e in found[0].facts if e.signal == "odd_clock"]
    assert said and said[0].detail == "hw slowdown", found[0].facts
    assert any("1,215 MHz (hw slowdown)" in line for line in found[0].evidence), \
        found[0].evidence


def test_a_lower_clock_under_the_usual_power_cap_is_a_standing():
    """...but the same card at the same clock under the power cap every loaded card shows
    (a lower bin, a warmer slot, its standing from the start): nothing opens."""
    found = episodes(_job(1215, ("power cap",), reasons_all=("power cap",)).run())
    assert not found, named(found)


def test_a_fault_reason_at_the_peers_clock_is_no_straggler():
    """...nor a card that shows "thermal (sw)" from the start at its peers' clock (within
    the 5% of lone_fault_drop): it costs the job nothing yet."""
    found = episodes(_job(1380, ("thermal (sw)",)).run())
    assert not found, named(found)
