"""The command line as a user runs it: real processes, real exit codes."""

import json
import os
import subprocess
import sys

import pytest

from gputop.sources.sim import SCENARIOS


def gputop(*args, timeout=60):
    env = dict(os.environ, TZ="UTC")
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def assert_one_line_error(result, *fragments):
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("gputop: ")
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize("args, fragment", [
    (["--demo", "nope"], "got 'nope'"),
    (["--demo", "storm"], "got 'storm'; did you mean 'logprobs-storm'?"),
    (["--demo", "serving", "-d", "0"], "--delay: expected a number of seconds above 0"),
    (["--demo", "serving", "-d", "-1"], "--delay"),
    (["--demo", "serving", "-d", "fast"], "expected a number of seconds"),
    (["--demo", "serving", "--hold-s", "x"], "--hold-s: expected seconds from 0 to 600, got 'x'"),
    (["--demo", "serving", "--hold-s", "9999"], "expected seconds from 0 to 600"),
    (["--theme", "drak", "--demo"], "got 'drak'; did you mean 'dark'?"),
    (["--ebpf", "ful", "--demo"], "expected full, light or off, got 'ful'; did you mean 'full'?"),
    (["snapshot", "--demo", "serving", "--samples", "0"], "expected a number >= 1"),
    (["--demo", "serving", "--gpus", "99"], "--gpus must be between 1 and 16"),
    (["--demo", "serving", "--collapse-ratio", "2"], "ratio between 0 and 1"),
    (["--frobnicate"], "unrecognized arguments"),
    (["record", "/tmp/x.gtrec", "--demo", "serving", "--duration", "soon"], "cannot read duration"),
    (["record", "/tmp/x.gtrec", "--demo", "serving", "--max-size", "lots"], "cannot read size"),
    (["record", "/nonexistent-dir/x.gtrec", "--demo", "serving"], "cannot create"),
    (["export", "/tmp/none.gtrec", "--format", "xml", "-o", "-"], "invalid choice"),
    (["--engine", "ftp://example/metrics", "--demo"], "not an http(s) URL"),
    (["-i", "zero", "--demo"], "expected GPU indexes"),
])
def test_bad_input_is_one_line_and_exit_2(args, fragment):
    assert_one_line_error(gputop(*args), fragment)


def test_no_gpu_on_this_machine_says_so_and_suggests_the_demo():
    # This machine has no NVIDIA driver: the real "no library" path.
    for args in ([], ["snapshot"]):
        result = gputop(*args)
        assert_one_line_error(result, "NVML", "--engine", "gputop --demo")


REQUIRED_GPU_KEYS = {"index", "name", "uuid", "util_gpu_pct", "util_mem_pct", "sm_active_pct",
                     "sm_occupancy_pct", "dram_bw_pct", "tensor_pct", "mem_total_bytes",
                     "mem_used_bytes", "power_w", "temp_c", "throttle", "vram", "processes"}
REQUIRED_VRAM_KEYS = {"weights_bytes", "kv_pool_bytes", "kv_used_bytes", "other_bytes",
                      "other_processes_bytes", "free_bytes", "overflow_bytes", "unsplit_bytes"}


def snapshot(*args):
    result = gputop("snapshot", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_snapshot_follows_the_contract():
    data = snapshot("--demo", "serving", "--samples", "3", "-d", "0.01")
    assert data["schema"] == 1
    assert data["source"] == "demo:serving"
    assert set(data["sources"]) == {"sim"}
    sim = data["sources"]["sim"]
    assert (sim["ok"], sim["reason"], sim["age_s"]) == (True, None, 0.0)
    assert sim["poll_s"] is not None and sim["poll_s"] >= 0
    assert data["pinned"] is None
    gpu = data["gpus"][0]
    assert REQUIRED_GPU_KEYS <= set(gpu)
    assert REQUIRED_VRAM_KEYS <= set(gpu["vram"])
    vram = gpu["vram"]
    parts = sum(vram[k] or 0 for k in REQUIRED_VRAM_KEYS - {"kv_used_bytes", "overflow_bytes"})
    assert parts == gpu["mem_total_bytes"] + vram["overflow_bytes"]
    assert data["engine"]["kind"] == "vllm"
    assert data["engine"]["generation_tokens_per_s"] > 0
    assert set(data["launch"]["apis"]["cudaLaunchKernel"]) >= {"calls", "calls_per_s", "p50_us",
                                                               "p99_us", "max_us"}
    assert data["alerts"] == []


def test_snapshot_of_one_sample_has_null_rates_not_zero():
    """One reading of a real endpoint has no interval: its rates are unknown, not 0."""
    from tests.engine_pages.vllm_pages import real_page
    from tests.http_server import Response, ScriptedServer

    with ScriptedServer([Response(real_page())] * 3) as server:
        data = snapshot("--engine", server.url, "--samples", "1")
    assert data["engine"]["kind"] == "vllm"
    assert data["engine"]["generation_tokens_per_s"] is None
    assert data["engine"]["prompt_tokens_per_s"] is None


def test_a_demo_snapshot_starts_into_its_story():
    """`snapshot --demo`, as the live demo, makes its lead-in first: one sample of the storm
    already names its cause, and its newest frame is now."""
    import datetime
    import time
    data = snapshot("--demo", "logprobs-storm", "--samples", "1")
    assert [a["suspects"][0]["cause"] for a in data["alerts"]] == ["oversized_request"]
    assert data["engine"]["generation_tokens_per_s"] is not None
    assert abs(datetime.datetime.fromisoformat(data["time"]).timestamp() - time.time()) < 30


def test_snapshot_names_the_storm():
    # simulated samples are -d apart in simulated time, taken without waiting
    data = snapshot("--demo", "logprobs-storm", "--samples", "12", "-d", "1")
    (alert,) = data["alerts"]
    assert alert["kind"] == "busy_unproductive" and alert["active"] is True
    assert alert["suspects"][0]["cause"] == "oversized_request"
    assert any("SM active" in e for e in alert["evidence"])
    gpu = data["gpus"][0]
    assert gpu["util_gpu_pct"] >= 90 and gpu["sm_active_pct"] < 20


def test_options_before_the_subcommand_are_kept():
    data = json.loads(gputop("--demo", "idle-reserved", "snapshot", "--samples", "2", "-d",
                             "0.01").stdout)
    assert data["source"] == "demo:idle-reserved"
    gpu = data["gpus"][0]
    assert gpu["util_gpu_pct"] == 0
    assert gpu["mem_used_bytes"] > 0.9 * gpu["mem_total_bytes"]
    assert gpu["vram"]["kv_used_bytes"] == 0
    assert gpu["vram"]["kv_pool_bytes"] > 50 * 2**30


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_scenario_snapshots(scenario):
    data = snapshot("--demo", scenario, "--samples", "2", "-d", "0.01")
    assert len(data["gpus"]) == (4 if scenario == "allreduce-straggler" else 1)


def test_help_lists_scenarios():
    result = gputop("--help")
    assert result.returncode == 0
    assert "logprobs-storm" in result.stdout


def test_demo_without_a_scenario_never_swallows_a_subcommand():
    """`--demo` takes an optional scenario: `gputop --demo config --print` read 'config'
    as the scenario ("unknown scenario 'config'")."""
    from gputop import cli

    done = gputop("--demo", "config", "--print")
    assert done.returncode == 0 and "# precedence:" in done.stdout, done.stderr
    done = gputop("--demo", "snapshot", "--samples", "1")
    assert done.returncode == 0 and json.loads(done.stdout)["source"] == "demo:cycle"
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert set(cli.SUBCOMMANDS) == set(commands)  # the list the rewrite uses is complete


def test_help_is_enough_to_start_without_the_readme():
    """`gputop --help`: a quick start per use, every key of the dashboard (the same list
    its ? screen shows), the settings' order, NO_COLOR and the exit codes."""
    from gputop.tui.keys import KEYS

    done = gputop("--help")
    assert done.returncode == 0
    text = done.stdout
    for command in ("gputop --demo", "--engine http://127.0.0.1:8000/metrics", "gputop serve",
                    "--remote HOST:9464", "gputop fleet --prometheus", "gputop record",
                    "sudo gputop --ebpf full"):
        assert command in text, command
    for key, _what in KEYS:
        assert f"  {key} " in text, key
    assert "q / F10 / Ctrl-C" in text  # the help and the README agree
    assert "GPUTOP_*" in text and "config --print" in text and "NO_COLOR=1" in text
    assert "exit status: 0" in text
    assert max(len(line) for line in text.splitlines()) <= 100
