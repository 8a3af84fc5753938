"""bench/robustness.py loses readings the way real servers do, the same ticks every run."""

from __future__ import annotations

from bench.robustness import PERTURB, main, perturbed
from tests.diagnosis_frames import Trace, noisy


def _frames():
    trace = Trace()
    for i in range(400):
        trace.tick(util=97, tokens=noisy(2000, i, 0.05), running=30, waiting=0)
    return trace.frames


def test_each_perturbation_loses_its_readings_on_a_few_ticks_and_keeps_the_ends():
    frames = _frames()
    for how in PERTURB:
        out = perturbed("t", how, frames)
        assert out == perturbed("t", how, frames), how  # seeded from the trace's name
        if how != "nogpm":
            assert out[0] is frames[0] and out[-1] is frames[-1], how
        assert out != perturbed("u", how, frames) or how == "nogpm", how
    scrape = perturbed("t", "scrape", frames)
    missed = [f for f in scrape if f.engine is None]
    assert 3 <= len(missed) <= 25 and all(not f.sources["engine"].ok for f in missed)
    procs = [f for f in perturbed("t", "procs", frames) if not f.processes]
    assert procs and all(g.missing.get("processes") for f in procs for g in f.gpus)
    assert 370 <= len(perturbed("t", "ticks", frames)) < 400
    assert all(g.sm_active_pct is None and g.missing["sm_active_pct"]
               for f in perturbed("t", "nogpm", frames) for g in f.gpus)


def test_an_unknown_perturbation_is_one_line_and_exit_2(capsys):
    assert main(["--perturb", "scrape,cosmic-rays", "--corpora", ""]) == 2
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "cosmic-rays" in out
