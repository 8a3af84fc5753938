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
import re
from pathlib import Path

import pytest

from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
from gputop.record.store import Recording
from lab import report
from lab.profiles import PHASES, PROFILES, TRAIN_PHASES

DATA = Path(__file__).parent / "data" / "h200" / "lab"
# the later runs: the training loop alone (LAB_PROFILE=gpu-train scripts/gpu-lab.sh), the
# same milder (gpu-train-mild), the serve loop under a CPU quota (gpu-serve-quota)
H200 = Path(__file__).parent / "data" / "h200"
TRAIN_DATA = H200 / "lab-train"
RUNS = {"lab": (DATA, PHASES), "lab-train": (TRAIN_DATA, TRAIN_PHASES),
        "lab-train-mild": (H200 / "lab-train-mild", PROFILES["gpu-train-mild"].phases),
        "lab-serve-quota": (H200 / "lab-serve-quota", PROFILES["gpu-serve-quota"].phases),
        "lab-serve-quota-mild": (H200 / "lab-serve-quota-mild",
                                 PROFILES["gpu-serve-quota-mild"].phases)}
QUOTA_RUNS = {"lab-train": ("train", 0.25), "lab-train-mild": ("train", 0.5),
              "lab-serve-quota": ("serve", 0.25), "lab-serve-quota-mild": ("serve", 0.5)}
GPU_DOC = Path(__file__).parent.parent / "docs" / "gpu.md"
RECORDED = DATA.is_dir() and any(DATA.glob("*.gputop"))
HURT_LATENCY_FACTOR = 2.0
HURT_THROUGHPUT_RATIO = 0.5
# a trainer has no latency: its harm is its rate, and a fifth of it lost is a fifth of
# the job's GPU hours (the shared phase cost the H200's trainer 28%)
HURT_TRAIN_RATIO = 0.8

pytestmark = pytest.mark.skipif(
    not RECORDED, reason="tests/data/h200/lab/ has no recording yet: the lab has not run on a "
                         "GPU (run scripts/gpu-lab.sh on a lent H200 and commit its $OUT there; "
                         "docs/gpu.md: 'The GPU lab')")
CASES = [(run, p.name) for run, (_, phases) in RUNS.items() for p in phases]


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    return {run: json.loads((path / "phases.json").read_text())
            for run, (path, _) in RUNS.items()}


@pytest.fixture(scope="module")
def all_rows() -> dict[str, dict[str, dict]]:
    return {run: {row["phase"]: row for row in report.phase_rows(str(path))}
            for run, (path, _) in RUNS.items()}


@pytest.fixture(scope="module")
def doc(docs):
    return docs["lab"]


@pytest.fixture(scope="module")
def rows(all_rows):
    return all_rows["lab"]


def train_frames() -> list:
    """Every frame of the trainer's recording."""
    recording = Recording(DATA / "train.gputop")
    try:
        return list(recording.frames())
    finally:
        recording.close()


def lab_phase(name: str) -> dict:
    return next(p for p in json.loads((DATA / "phases.json").read_text())["phases"]
                if p["name"] == name)


def hurt(doc: dict, name: str) -> bool:
    """Whether the staged phase harmed the work, by the clients' (or trainer's) own count
    against the healthy phase of its segment."""
    phases = {p["name"]: p for p in doc["phases"]}
    phase = phases[name]
    serving = phase["segment"] == "serve"
    healthy = phases["healthy" if serving else "train"]["client"]
    client = phase["client"]
    limit = HURT_THROUGHPUT_RATIO if serving else HURT_TRAIN_RATIO
    if client["tokens_per_s"] <= limit * healthy["tokens_per_s"]:
        return True
    itl, base = client.get("itl_p99_s"), healthy.get("itl_p99_s")
    return itl is not None and base is not None and itl >= HURT_LATENCY_FACTOR * base


@pytest.mark.parametrize("run", RUNS)
def test_every_phase_ran_on_the_h200_and_was_recorded(docs, all_rows, run):
    doc, rows = docs[run], all_rows[run]
    assert doc["errors"] == [] and doc["profile"] == RUNS[run][0].name.replace("lab", "gpu")
    assert [p["name"] for p in doc["phases"]] == [p.name for p in RUNS[run][1]]
    assert not any(p.get("not_staged") for p in doc["phases"]), doc["phases"]
    for name, row in rows.items():
        assert row["frames"] >= 10, (name, row["frames"])
        assert row["util_pct"] is not None and row["sm_active_pct"] is not None, name


@pytest.mark.parametrize("run,name", [c for c in CASES
                                      if dict((p.name, p.truth) for p in RUNS[c[0]][1])[c[1]]
                                      is None])
def test_a_healthy_phase_raises_nothing(all_rows, run, name):
    row = all_rows[run][name]
    assert row["episodes"] == [] and row["carried"] == [], row


@pytest.mark.parametrize("run,name", [c for c in CASES
                                      if dict((p.name, p.truth) for p in RUNS[c[0]][1])[c[1]]
                                      is not None])
def test_a_staged_cause_gets_its_verdict(docs, all_rows, run, name):
    """A phase that hurt opens an episode named for its cause, or is named by the episode
    the phase before opened (the same cause staged twice: busy loops, then a quota)."""
    row = all_rows[run][name]
    if hurt(docs[run], name):
        named = row["episodes"] or row["carried"]
        assert named, f"{name} hurt the work but gputop raised nothing: {row}"
        assert named[-1]["suspects"][0] == row["truth"], (name, named)
    else:
        assert row["episodes"] == [], f"{name} hurt nothing, yet: {row['episodes']}"


@pytest.mark.parametrize("run", QUOTA_RUNS)
def test_a_cpu_quota_was_real_and_recorded(run):
    """The quota phase put the trainer's main process (or the serve loop's) in a cgroup v2
    of its own with cpu.max on the H200 box; gputop read the quota and the periods it ran
    out in from the engine's tree, and the verdict quotes it."""
    path, _ = RUNS[run]
    segment, cores = QUOTA_RUNS[run]
    doc = json.loads((path / "phases.json").read_text())
    phase = next(p for p in doc["phases"] if p["name"] == "quota")
    recording = Recording(path / f"{segment}.gputop")
    try:
        engines = [f.engine for f in recording.frames() if f.engine is not None]
    finally:
        recording.close()
    inside = [e for e in engines
              if phase["start_wall_s"] + 2 <= e.time_wall_s <= phase["end_wall_s"] - 1]
    assert len(inside) >= 20 and all(e.cpu_quota_cores == cores for e in inside), inside[:2]
    assert all(e.cpu_quota_cores is None for e in engines
               if e.time_wall_s < phase["start_wall_s"] - 1), "a quota before the phase"
    periods = inside[-1].cpu_periods - inside[0].cpu_periods
    held = inside[-1].cpu_throttled_periods - inside[0].cpu_throttled_periods
    assert periods >= 200 and held >= 0.9 * periods, (periods, held)
    row = {r["phase"]: r for r in report.phase_rows(str(path))}["quota"]
    episode = (row["episodes"] or row["carried"])[-1]
    assert any(f"CPU quota ({cores:g} cores) held it back in 100% of CPU periods" in e
               for e in episode["evidence"]), episode


def test_graph_replay_of_tiny_kernels_reads_busy_with_idle_sms(rows):
    """What the earlier H200 run showed (tests/data/h200), now under the training loop."""
    graph = rows["graph"]
    assert graph["util_pct"] >= 95 and graph["sm_active_pct"] < 5, graph


@pytest.mark.parametrize("run", RUNS)
def test_the_docs_table_is_this_recording(all_rows, run):
    table = report.table([all_rows[run][p.name] for p in RUNS[run][1]])
    assert table in GPU_DOC.read_text(), f"docs/gpu.md's {run} table differs from lab.report's"


def test_a_trainers_rate_on_screen_is_over_whole_steps():
    """The real trainer's counter moves once per step: per tick it reads 0 or a whole step.
    The throughput the screen and the snapshot show (the engine view) is the rate over
    whole steps, as the detector judges it: during the DataLoader stall never 0, and within
    a fifth of the trainer's own count of the phase (phases.json)."""
    from gputop.model.derive import engine_view

    phase, frames = lab_phase("stall"), train_frames()
    timeline = Timeline(len(frames) + 1, make_fold())
    shown = []
    for i, frame in enumerate(frames):
        timeline.append(frame)
        # a whole step of the stall (about 1.8 s) after it began, to its end
        if frame.engine is not None and \
                phase["start_wall_s"] + 3 <= frame.time_wall_s <= phase["end_wall_s"]:
            shown.append(engine_view(timeline, i).tokens_per_s)
    own = phase["client"]["tokens_per_s"]
    assert len(shown) >= 15 and all(r is not None and r > 0 for r in shown), shown
    mean = sum(shown) / len(shown)
    assert 0.8 * own <= mean <= 1.2 * own, (mean, own)


def test_the_trainers_pane_names_its_gpu_and_its_step_rate():
    """Pane 3 over the real trainer mid-stall: its rate over whole steps against the
    baseline, and the GPU NVML shows its tree on (its page names none), never "0 GPUs"."""
    from gputop.session import Session
    from gputop.tui.panes.base import Ctx
    from gputop.tui.panes.throughput import ThroughputPane

    phase = lab_phase("stall")
    frames = [f for f in train_frames() if f.time_wall_s <= phase["start_wall_s"] + 18]
    session = Session("lab:train", frames=frames)
    ctx = Ctx(session.view(), 0, 60.0, "lab:train")
    lines = ["".join(ch for ch, _ in r) for r in ThroughputPane.header_rows(ctx, ctx.view.engine, 100)]
    rate, share = re.search(r"([\d,]+) train tok/s\s+(\d+)% of baseline", lines[0]).groups()
    assert 0.5 * phase["client"]["tokens_per_s"] <= float(rate.replace(",", "")) \
        <= 1.5 * phase["client"]["tokens_per_s"], lines
    assert 5 <= int(share) <= 40, lines
    assert "on 1 GPU (0)" in lines[1] and "0 GPUs" not in lines[1], lines


def test_the_graph_episode_quotes_its_peak_not_the_tick_it_ended_on():
    """The recording ends two seconds after the graph phase, on a tick that still reads
    hollow but milder (GPU-Util 83%, SM active 25%).  The episode's headline and evidence
    quote the phase's harm (GPU-Util 99%, SM active 0%), not that tick."""
    frames = train_frames()
    timeline = Timeline(len(frames) + 1, make_fold())
    for frame in frames:
        state = timeline.append(frame)
    episode = state.actives[-1]
    assert episode.suspects[0][0] == "tiny_kernels", episode.suspects
    assert "busy 99%" in episode.headline, episode.headline
    assert any(re.match(r"SM active [01]% of GPU-Util 99%", e) for e in episode.evidence), \
        episode.evidence
