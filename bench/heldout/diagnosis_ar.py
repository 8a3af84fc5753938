"""Measure gputop's detector on corpus AR (corpus_ar/; its README says how it was written).

    python bench/heldout/diagnosis_ar.py [--family F] [--verbose] [--json [PATH]] [--signals]

The scoring, printing and options are harness.py's, the same for every held-out corpus.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import corpus_ar  # noqa: E402
from harness import main, run, run_detector, score  # noqa: E402,F401  (the tests use these)

if __name__ == "__main__":
    run(corpus_ar)
