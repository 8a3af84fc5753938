"""The GPU lab's run on a real H200 (tests/data/h200/lab/, made by scripts/gpu-lab.sh through
the device tool), replayed through gputop's model: per phase, the verdict gputop must give.

The phase log is the truth.  Each phase staged one cause (lab/profiles.py); whether it
hurt is what the load driver (or the trainer) measured itself, not what gputop says:
a staged phase that raised the clients' inter-token latency p99 to 2x the healthy phase's,
or cut their tokens/s to half, must open an episode whose first suspect is that cause; one
that hurt nothing must open none, and neither must a healthy phase.  Skipped only while
tests/data/h200/lab/ holds no recording.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab import report
from lab.profiles import PHASES

DATA = Path(__file__).parent / "data" / "h200" / "lab"
GPU_DOC = Path(__file__).parent.parent / "docs" / "gpu.md"
RECORDED = DATA.is_dir() and any(DATA.glob("*.gputop"))
HURT_LATENCY_FACTOR = 2.0
HURT_THROUGHPUT_RATIO = 0.5

pytestmark = pytest.mark.skipif(
    not RECORDED, reason="tests/data/h200/lab/ has no recording yet: the lab has not run on a "
                         "GPU (run scripts/gpu-lab.sh on a lent H200 and commit its $OUT there; "
                         "docs/gpu.md: 'The GPU lab')")


@pytest.fixture(scope="module")
def doc():
    return json.loads((DATA / "phases.json").read_text())


@pytest.fixture(scope="module")
def rows():
    return {row["phase"]: row for row in report.phase_rows(str(DATA))}


def hurt(doc: dict, name: str) -> bool:
    """Whether the staged phase harmed the work, by the clients' (or trainer's) own count
    against the healthy phase of its segment."""
    phases = {p["name"]: p for p in doc["phases"]}
    phase = phases[name]
    healthy = phases["healthy" if phase["segment"] == "serve" else "train"]["client"]
    client = phase["client"]
    if client["tokens_per_s"] <= HURT_THROUGHPUT_RATIO * healthy["tokens_per_s"]:
        return True
    itl, base = client.get("itl_p99_s"), healthy.get("itl_p99_s")
    return itl is not None and base is not None and itl >= HURT_LATENCY_FACTOR * base


def test_every_phase_ran_on_the_h200_and_was_recorded(doc, rows):
    assert doc["errors"] == [] and doc["profile"] == "gpu"
    assert [p["name"] for p in doc["phases"]] == [p.name for p in PHASES]
    for name, row in rows.items():
        assert row["frames"] >= 10, (name, row["frames"])
        assert row["util_pct"] is not None and row["sm_active_pct"] is not None, name


@pytest.mark.parametrize("name", [p.name for p in PHASES if p.truth is None])
def test_a_healthy_phase_raises_nothing(rows, name):
    assert rows[name]["episodes"] == [], rows[name]["episodes"]


@pytest.mark.parametrize("name", [p.name for p in PHASES if p.truth is not None])
def test_a_staged_cause_gets_its_verdict(doc, rows, name):
    row = rows[name]
    if hurt(doc, name):
        assert row["episodes"], f"{name} hurt the work but gputop raised nothing: {row}"
        assert row["top_cause"] == row["truth"], (name, row["episodes"])
    else:
        assert row["episodes"] == [], f"{name} hurt nothing, yet: {row['episodes']}"


def test_graph_replay_of_tiny_kernels_reads_busy_with_idle_sms(rows):
    """What the earlier H200 run showed (tests/data/h200), now under the training loop."""
    graph = rows["graph"]
    assert graph["util_pct"] >= 95 and graph["sm_active_pct"] < 5, graph


def test_the_docs_table_is_this_recording(rows):
    table = report.table([rows[p.name] for p in PHASES])
    assert table in GPU_DOC.read_text(), "docs/gpu.md's lab table differs from lab.report's"
