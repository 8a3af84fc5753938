"""What a real H200 showed (tests/data/h200, made by scripts/gpu-check.sh through the device
tool; no GPU is needed to run these): gputop's recording of real NVML under six PyTorch
phases, nvidia-smi's own log of the same minutes, and what `gputop serve` exported."""

import json
import subprocess
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bench.gpu_check_report import phase_table
from tests.conftest import need
from gputop.export.snapshot import snapshot_dict
from gputop.record.store import Recording
from gputop.cursor import RecordingCursor

DATA = Path(__file__).parent / "data" / "h200"


@pytest.fixture(scope="module")
def phases():
    return {row["phase"]: row for row in phase_table(str(DATA))}


def test_every_phase_reads_as_nvidia_smi_does(phases):
    for name, row in phases.items():
        assert row["frames"] >= 4, name
        assert abs(row["util_gputop"] - row["util_smi"]) <= 2, (name, row)
        assert abs(row["vram_gib_gputop"] - row["vram_gib_smi"]) <= 0.1, (name, row)


def test_the_two_cases_gputop_exists_for(phases):
    # VRAM full, nothing running: the pool reserved at start-up
    reserve = phases["reserve"]
    assert reserve["util_gputop"] == 0 and reserve["vram_gib_gputop"] > 0.6 * 140 * 0.95
    # GPU-Util 100% while one SM in 132 is busy: nvidia-smi calls this a full GPU
    graph = phases["graph"]
    assert graph["util_gputop"] >= 99 and graph["util_smi"] >= 99
    assert graph["sm_active"] < 2
    # the real work for contrast: SMs and tensor pipes busy; the copy busy on DRAM only
    assert phases["matmul"]["sm_active"] > 90 and phases["matmul"]["tensor"] > 80
    assert phases["copy"]["dram_bw"] > 75 and phases["copy"]["tensor"] < 1
    # launch bound: the host cannot feed one-element kernels fast enough
    assert phases["tiny"]["util_gputop"] < 50


def test_the_recording_replays_through_the_model():
    phases = {p["phase"]: p for p in json.loads((DATA / "results.json").read_text())["phases"]
              if "start_wall_s" in p}
    recording = Recording(DATA / "h200.gputop")
    views = list(RecordingCursor(recording).views())
    recording.close()

    def middle(name):
        p = phases[name]
        t = (p["start_wall_s"] + p["end_wall_s"]) / 2
        return snapshot_dict(min(views, key=lambda v: abs(v.frame.time_wall_s - t)), "nvml")

    reserve, graph = middle("reserve")["gpus"][0], middle("graph")["gpus"][0]
    assert reserve["name"] == "NVIDIA H200" and reserve["mem_total_bytes"] == 143771 * 2**20
    assert reserve["util_gpu_pct"] == 0 and reserve["vram"]["unsplit_bytes"] > 80 * 2**30
    assert reserve["processes"][0]["cmdline"].endswith("scripts/gpu_check.py")
    assert graph["util_gpu_pct"] >= 99 and graph["sm_active_pct"] < 2
    snap = middle("graph")
    assert snap["sources"]["engine"]["ok"] is False  # no engine: said, not zeroed
    assert snap["engine"] is None


def test_the_exported_text_is_valid_prometheus_with_the_contracts_families():
    for phase in ("reserve", "matmul", "graph"):
        text = (DATA / f"metrics-{phase}.txt").read_text()
        names = {f.name for f in text_string_to_metric_families(text)}
        for family in ("gputop_gpu_utilization_ratio", "gputop_gpu_sm_active_ratio",
                       "gputop_gpu_memory_bytes", "gputop_source_up", "gputop_info"):
            assert family in names, (phase, family)
    graph = {(s.name, tuple(sorted(s.labels.items()))): s.value
             for f in text_string_to_metric_families((DATA / "metrics-graph.txt").read_text())
             for s in f.samples}
    assert graph[("gputop_gpu_utilization_ratio", (("gpu", "0"),))] >= 0.99
    assert graph[("gputop_gpu_sm_active_ratio", (("gpu", "0"),))] < 0.02


def test_promtool_accepts_what_serve_exported_on_the_h200():
    need("promtool")
    for phase in ("reserve", "matmul", "graph"):
        text = (DATA / f"metrics-{phase}.txt").read_bytes()
        done = subprocess.run(["promtool", "check", "metrics"], input=text,
                              capture_output=True, timeout=30)
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_measured_a_working_card():
    results = json.loads((DATA / "results.json").read_text())
    assert results["record_rc"] == 130 and results["serve_rc"] == 0  # Ctrl-C saved; SIGTERM clean
    assert not results["scrape_errors"]
    assert results["scrape_summary"]["burst4_p99_ms"] < 10  # issue 12's goal, on a real GPU


def test_board_facts_as_real_nvml_gave_them_on_an_h200():
    """The overview's columns from a real H200 under a bf16 matmul (snapshot --json taken
    by the device check): an SXM board has no fan, which NVML says as "not supported"
    (shown n/a, never 0); the rest are real readings."""
    gpu = json.loads((DATA / "snapshot-matmul-board.json").read_text())["gpus"][0]
    assert gpu["fan_pct"] is None and gpu["missing"]["fan_pct"] == "not supported on this GPU"
    assert gpu["pstate"] == 0 and gpu["power_limit_w"] == 700.0
    assert 600 < gpu["power_w"] <= 700 and gpu["mem_clock_mhz"] > 3000
    assert gpu["pcie_rx_mib_per_s"] is not None and gpu["nvlink_rx_mib_per_s"] == 0.0
    assert gpu["ecc_uncorrected"] == 0 and gpu["xid_count"] == 0  # events registered, none
    assert gpu["bus_id"].count(":") == 2 and gpu["mig_mode"] is False
    proc = gpu["processes"][0]
    assert proc["rss_bytes"] > 0 and proc["cgroup"] and proc["container"] is None


def test_the_overview_shows_the_graph_phase_gap():
    """Pane 7 drawn on the real H200 in the CUDA-graph phase: GPU-Util 100%, SM 0%."""
    import html
    import re

    svg = html.unescape((DATA / "overview-graph-phase.svg").read_text()).replace("\xa0", " ")
    text = "".join(re.findall(r">([^<]*)</text>", svg))
    assert re.search(r"H200\s+100%\s+0%", text), text[:400]


def test_the_verdict_on_the_real_h200_names_the_graph_phase_and_nothing_else():
    """100% GPU-Util on 0% SM for 20 s (one-element kernels replayed from a CUDA graph) is
    tiny kernels, from the GPU alone (no engine); the matmul, copy, idle and reserve phases,
    and the launch-bound tiny phase at < 50% util, raise nothing."""
    from gputop.record.report import report

    phases = {p["phase"]: p for p in json.loads((DATA / "results.json").read_text())["phases"]
              if "start_wall_s" in p}
    recording = Recording(DATA / "h200.gputop")
    views = list(RecordingCursor(recording).views())
    text = report(RecordingCursor(recording))
    recording.close()
    episodes = {(e.subject, e.start_wall_s): e for v in views
                for e in list(v.detector.episodes) + list(v.detector.actives)}
    assert len(episodes) == 1, [e.headline for e in episodes.values()]
    episode = next(iter(episodes.values()))
    graph = phases["graph"]
    assert graph["start_wall_s"] <= episode.start_wall_s <= graph["start_wall_s"] + 10
    assert episode.end_wall_s is not None and episode.end_wall_s <= graph["end_wall_s"] + 5
    assert episode.suspects[0][0] == "tiny_kernels" and episode.measure == "hollow"
    assert episode.gpus == (0,) and episode.kind == "busy_unproductive"
    assert "busy-but-unproductive episodes: 1" in text and "likely tiny_kernels" in text
