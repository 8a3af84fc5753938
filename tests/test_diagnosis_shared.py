"""Another process on the engine's GPU that costs a tenth for minutes: the shared trigger's
own harm (tokens/s at 0.7x, SM time measured to fall) is for the strong case; a milder cost
that lasts (shared_mild_span_s) is a tenant too (four mild tenants in blind corpora AB, AF,
AG were silent)."""

from __future__ import annotations

from tests.diagnosis_frames import Trace, episodes, named, noisy

# a second container's process on GPU 0: NVML lists it with its memory, no SM reading
TENANT = [(52001, 52000, 0, "python whisper_batch.py", None)]


def _engine_with_tenant(tenant_s: int, tokens_late: float, running_late: float = 30) -> Trace:
    """vLLM on one GPU at 2,000 tokens/s over 30 running requests for 150 s; then the tenant
    for ``tenant_s`` with tokens/s at ``tokens_late`` x and ``running_late`` requests in
    flight; then 60 s as before."""
    trace = Trace()
    for i in range(150):
        trace.tick(util=noisy(95, i, 0.01), tokens=noisy(2000, i, 0.03), running=30)
    for i in range(tenant_s):
        trace.tick(util=noisy(97, i, 0.01), tokens=noisy(2000 * tokens_late, i, 0.03),
                   running=running_late, extra_procs=TENANT)
    for i in range(60):
        trace.tick(util=noisy(95, i, 0.01), tokens=noisy(2000, i, 0.03), running=30)
    return trace


def test_a_tenant_costing_a_seventh_for_minutes_is_named():
    """A second container on the engine's GPU for three minutes, tokens/s at 0.86x with the
    batch as full (demand kept): gpu_shared (before: nothing opened, the drop short of the
    trigger's 0.7x and the newcomer's SM time unknown)."""
    found = episodes(_engine_with_tenant(180, 0.86).run())
    assert found and found[0].suspects[0][0] == "gpu_shared", named(found)
    assert any("52001" in e for e in found[0].evidence), found[0].evidence


def test_a_tenant_that_costs_nothing_is_not():
    """The same tenant with tokens/s as before (it idles, or the GPU had room): nothing."""
    found = episodes(_engine_with_tenant(180, 0.99).run())
    assert not found, named(found)


def test_a_tenant_while_traffic_ebbs_is_not():
    """...nor the tenant while fewer users ask (the batch shrinks with tokens/s): the engine
    serves what it is asked."""
    found = episodes(_engine_with_tenant(180, 0.86, running_late=25).run())
    assert not found, named(found)


def test_a_short_visit_is_not():
    """A tenant for 25 s (a smoke test) at 0.86x: shorter than the span, nothing."""
    found = episodes(_engine_with_tenant(25, 0.86).run())
    assert not found, named(found)


# an adversarial review's cases (2026-12-06): an idle notebook beside an engine whose
# traffic moves, or whose clock is cut, costs nothing and is not the cause
NOTEBOOK = [(52101, 52100, 0, "python -m ipykernel_launcher", None)]


def _idle_tenant_then(running: float, itl_s: float, **late) -> Trace:
    """vLLM at 30 running, 20 ms per token; an idle notebook joins its GPU at 150 s; from
    210 s for 3 minutes the engine serves ``running`` requests at ``itl_s`` per token
    (tokens/s = running / ITL, its own physics), with ``late`` readings beside."""
    trace = Trace()
    for i in range(210):
        trace.tick(util=noisy(95, i, 0.01), tokens=noisy(1500, i, 0.03), running=30,
                   itl=0.020, extra_procs=NOTEBOOK if i >= 150 else ())
    for i in range(180):
        trace.tick(util=noisy(95, i, 0.01), tokens=noisy(running / itl_s, i, 0.03),
                   running=running, itl=itl_s, extra_procs=NOTEBOOK, **late)
    return trace


def test_an_idle_tenant_while_traffic_ebbs_or_surges_is_not_named():
    """The batch 30 -> 10 with each token barely faster (small batches are memory-bound), or
    30 -> 60 with each token 1.56x (longer batches read more): tokens/s per sequence moves
    by the engine's own physics, not the notebook's (the first cut named both shared)."""
    for running, itl_s in ((10, 0.017), (60, 0.020 * 2 ** 0.64)):
        found = episodes(_idle_tenant_then(running, itl_s).run())
        assert not any(e.suspects and e.suspects[0][0] == "gpu_shared" for e in found), \
            (running, named(found))


def test_a_cut_clock_beside_an_idle_tenant_is_not_the_tenants():
    """The card at thermal slowdown (1980 -> 1700 MHz, the driver naming it), every token
    1.16x, tokens/s 0.86x with the batch as full: the clock has evidence of its own."""
    found = episodes(_idle_tenant_then(30, 0.0232, clock=1700, temp=90,
                                       throttle=("thermal (sw)",)).run())
    assert not any(e.suspects and e.suspects[0][0] == "gpu_shared" for e in found), \
        named(found)
