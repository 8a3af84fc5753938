"""How the diagnosis holds when readings go missing, as they do on real servers.

Each trace of the development corpora is scored twice by the held-out harness
(``bench/heldout/harness.py``): as written, and with one kind of reading lost on a few
ticks, seeded from the trace's name (the same ticks on every run):

* ``scrape``:  the engine's /metrics scrape fails (timed out) on 3% of ticks
* ``procs``:   the GPU process list comes back empty (an NVML query that failed) on 3%
* ``gpm``:     the GPM sample fails (SM, DRAM, tensor, links unknown) on 3%
* ``ticks``:   the sampler misses a tick altogether (a gap of two intervals) on 3%
* ``util``:    one GPU's GPU-Util reads unknown on 5%
* ``nogpm``:   no GPM at all (an A100 / L40S board), every tick

A tick of missing readings is no recovery and no new job: a finding that holds with every
reading should hold with a few missed.  Printed: right and false alarms per corpus, clean
beside perturbed, and the traces whose result changed.  A measurement: exit status 0.

    python bench/robustness.py [--perturb scrape,procs,...] [--corpora bcdehjkmnprtvw]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import random
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench" / "heldout"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import harness  # noqa: E402

from gputop.schema import Frame, SourceStatus  # noqa: E402
from gputop.sources.nvml import GPM_METRICS, NO_GPM  # noqa: E402

GPM_FIELDS = tuple(GPM_METRICS)  # the fields the NVML source fills from GPM samples
DEV_CORPORA = "bcdeghijkmnprtvwx"  # read since measured blind (F, L, O, Q, S, U held out)


def _no_gpm(f: Frame, why: str) -> Frame:
    gpus = []
    for g in f.gpus:
        missing = dict(g.missing)
        missing.update({k: why for k in GPM_FIELDS})
        gpus.append(dataclasses.replace(g, **{k: None for k in GPM_FIELDS}, missing=missing))
    return dataclasses.replace(f, gpus=tuple(gpus))


def _scrape(f: Frame, rng: random.Random) -> Frame | None:
    if f.engine is None or rng.random() >= 0.03:
        return f
    sources = dict(f.sources)
    sources["engine"] = SourceStatus(ok=False, reason="timed out after 1.0 s")
    return dataclasses.replace(f, engine=None, sources=sources)


def _procs(f: Frame, rng: random.Random) -> Frame | None:
    if not f.processes or rng.random() >= 0.03:
        return f
    gpus = tuple(dataclasses.replace(g, missing={**g.missing, "processes": "unknown error"})
                 for g in f.gpus)
    return dataclasses.replace(f, processes=(), gpus=gpus)


def _gpm(f: Frame, rng: random.Random) -> Frame | None:
    return _no_gpm(f, "GPM sample failed") if rng.random() < 0.03 else f


def _ticks(f: Frame, rng: random.Random) -> Frame | None:
    return None if rng.random() < 0.03 else f


def _util(f: Frame, rng: random.Random) -> Frame | None:
    if not f.gpus or rng.random() >= 0.05:
        return f
    gpus = list(f.gpus)
    i = rng.randrange(len(gpus))
    gpus[i] = dataclasses.replace(gpus[i], util_gpu_pct=None, util_gpu_samples_pct=())
    return dataclasses.replace(f, gpus=tuple(gpus))


def _nogpm(f: Frame, rng: random.Random) -> Frame | None:
    return _no_gpm(f, NO_GPM)


PERTURB: dict[str, Callable[[Frame, random.Random], Frame | None]] = {
    "scrape": _scrape, "procs": _procs, "gpm": _gpm, "ticks": _ticks, "util": _util,
    "nogpm": _nogpm}


def perturbed(name: str, how: str, frames: list[Frame]) -> list[Frame]:
    """The trace with ``how``'s readings lost; a tick's loss spares the first and last frames
    (a board without GPM lacks it on every one)."""
    rng = random.Random(f"robustness:{how}:{name}")
    out = []
    for i, f in enumerate(frames):
        g = PERTURB[how](f, rng) if 0 < i < len(frames) - 1 or how == "nogpm" else f
        if g is not None:
            out.append(g)
    return out


def _score(truth, frames) -> dict:
    try:
        eps, _ = harness.run_detector(frames)
        return harness.score(truth, frames, eps)
    except Exception as exc:  # the detector broke: a result of its own
        return {"name": truth.name, "cause": truth.cause, "verdict": "none", "right": False,
                "false_alarms": 0, "why": f"detector error: {exc!r}"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--perturb", default="scrape,procs,gpm,ticks,util",
                    help=f"comma-separated, of {', '.join(PERTURB)}")
    ap.add_argument("--corpora", default=DEV_CORPORA, help="corpus letters (bench/heldout)")
    args = ap.parse_args(argv)
    hows = [h for h in args.perturb.split(",") if h]
    unknown = [h for h in hows if h not in PERTURB]
    if unknown:
        print(f"robustness: unknown perturbation {unknown[0]!r} (one of {', '.join(PERTURB)})")
        return 2
    totals = {h: [0, 0] for h in ["clean", *hows]}
    changed: list[str] = []
    print(f"{'corpus':8s}" + "".join(f"{h:>14s}" for h in totals))
    for letter in args.corpora:
        corpus = importlib.import_module(f"corpus_{letter}")
        row = {h: [0, 0] for h in totals}
        n = 0
        for truth, frames in corpus.traces():
            n += 1
            clean = _score(truth, frames)
            results = {"clean": clean}
            for how in hows:
                results[how] = _score(truth, perturbed(truth.name, how, frames))
            for h, r in results.items():
                row[h][0] += bool(r["right"])
                row[h][1] += r.get("false_alarms", 0)
            for how in hows:
                r = results[how]
                if (r["right"], r["verdict"], r.get("false_alarms", 0)) != \
                        (clean["right"], clean["verdict"], clean.get("false_alarms", 0)):
                    changed.append(f"  {how:7s} {letter} {truth.name} [{truth.cause or 'healthy'}]"
                                   f" {clean['verdict']} -> {r['verdict']}"
                                   f" ({'right' if r['right'] else r.get('why')})")
        for h in totals:
            totals[h][0] += row[h][0]
            totals[h][1] += row[h][1]
        print(f"{letter + ' /' + str(n):8s}"
              + "".join(f"{row[h][0]:>8d} {row[h][1]:>2d} FA" for h in totals), flush=True)
    print(f"{'all':8s}" + "".join(f"{totals[h][0]:>8d} {totals[h][1]:>2d} FA" for h in totals))
    print("changed:")
    print("\n".join(changed) or "  none")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # a measurement: say what broke, still exit 0
        traceback.print_exc()
    sys.exit(0)
