"""Recordings: round trip, crash safety, damage of every kind, export, report, replay."""

import csv
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from gputop.cursor import RecordingCursor
from gputop.model.derive import derive
from gputop.export.snapshot import snapshot_dict
from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
from gputop.record.export import export
from gputop.record.store import Recorder, Recording, RecordingError
from gputop.record.timespec import parse_duration, parse_size, parse_time
from gputop.tui.replay import ReplayApp
from tests.conftest import sim_frames
from tests.test_tui import text_of


def record(path, scenario="logprobs-storm", count=60, **kwargs):
    frames = sim_frames(scenario, count, **kwargs)
    recorder = Recorder(path, f"demo:{scenario}")
    for frame in frames:
        recorder.append(frame)
    recorder.close()
    return frames


def gputop(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, TZ="UTC"))


def snapshots(frames):
    timeline = Timeline(1000, make_fold())
    out = []
    for frame in frames:
        timeline.append(frame)
        out.append(snapshot_dict(derive(timeline, timeline.last_index), "x"))
    return out


def test_round_trip_gives_identical_frames_and_views(tmp_path):
    path = tmp_path / "r.gtrec"
    frames = record(path, "allreduce-straggler", 40)
    recording = Recording(path)
    back = list(recording.frames())
    assert back == frames
    assert snapshots(back) == snapshots(frames)
    assert recording.count() == 40 and recording.meta["source"] == "demo:allreduce-straggler"
    assert [g["index"] for g in recording.meta["gpus"]] == [0, 1, 2, 3]
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_never_overwrites_and_never_follows_a_link(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, count=3)
    with pytest.raises(RecordingError, match="never overwritten"):
        Recorder(path, "x")
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    link = tmp_path / "link.gtrec"
    link.symlink_to(target)
    with pytest.raises(RecordingError):
        Recorder(link, "x")
    assert target.read_text() == "keep me"
    dangling = tmp_path / "dangling.gtrec"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(RecordingError):
        Recorder(dangling, "x")
    assert not (tmp_path / "nowhere").exists()


def test_size_cap_keeps_the_newest_frames(tmp_path):
    path = tmp_path / "r.gtrec"
    frames = sim_frames("serving", 600, gpus=8)
    recorder = Recorder(path, "demo", max_bytes=96 * 1024)
    for frame in frames:
        recorder.append(frame)
    recorder.close()
    assert recorder.frames_dropped > 0
    assert os.path.getsize(path) <= 96 * 1024 * 1.3
    recording = Recording(path)
    assert recording.seq_bounds()[1] == 599  # the newest are kept
    assert recording.count() == 600 - recorder.frames_dropped


def test_kill_9_loses_at_most_the_last_second(tmp_path):
    path = tmp_path / "r.gtrec"
    proc = subprocess.Popen([sys.executable, "-m", "gputop", "record", str(path), "--demo",
                             "serving", "-d", "0.1"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if Recording(path).count() >= 20:
                break
        except RecordingError:
            pass
        time.sleep(0.2)
    killed_at = time.time()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    recording = Recording(path)
    frames = list(recording.frames())
    assert len(frames) >= 20
    assert killed_at - frames[-1].time_wall_s <= 1.0
    assert [f.seq for f in frames] == list(range(len(frames)))
    out = gputop("export", str(path), "--format", "csv", "-o", str(tmp_path / "out.csv"))
    assert out.returncode == 0, out.stderr
    assert gputop("report", str(path)).returncode == 0


def test_sigterm_and_sighup_stop_the_recorder_cleanly(tmp_path):
    for signum in (signal.SIGTERM, signal.SIGHUP):
        path = tmp_path / f"r{signum}.gtrec"
        proc = subprocess.Popen([sys.executable, "-m", "gputop", "record", str(path), "--demo",
                                 "serving", "-d", "0.05"], stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert "frames" in err and "Traceback" not in err
        assert not os.path.exists(f"{path}-wal") or os.path.getsize(f"{path}-wal") == 0
        assert Recording(path).count() > 5


def test_duration_stops_the_recorder(tmp_path):
    path = tmp_path / "r.gtrec"
    started = time.monotonic()
    out = gputop("record", str(path), "--demo", "serving", "-d", "0.05", "--duration", "1s")
    assert out.returncode == 0 and time.monotonic() - started < 15
    assert 10 <= Recording(path).count() <= 40


def damaged_copies(tmp_path, source):
    data = source.read_bytes()
    rng = random.Random(7)
    # every ~1 KiB (one of these once made a damaged index answer out of order, looping
    # the reader), page edges, and random cuts
    offsets = sorted(set(range(0, len(data), 1021))
                     | {1, 15, 16, 99, 100, 101, 4095, 4096, 4097, 8192, len(data) - 1}
                     | {rng.randrange(len(data)) for _ in range(20)})
    for cut in offsets:
        path = tmp_path / f"cut{cut}.gtrec"
        path.write_bytes(data[:cut])
        yield path
    for i in range(30):
        flipped = bytearray(data)
        for _ in range(8):
            flipped[rng.randrange(len(flipped))] ^= 0xFF
        path = tmp_path / f"flip{i}.gtrec"
        path.write_bytes(bytes(flipped))
        yield path


@pytest.fixture
def deadline():
    """Fail instead of hanging if a damaged file makes the reader loop."""
    def expire(signum, frame):
        raise TimeoutError("the reader did not finish within 60 s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_truncated_and_flipped_files_never_crash_the_reader(tmp_path, deadline):
    source = tmp_path / "good.gtrec"
    record(source, count=300)
    outcomes = {"error": 0, "read": 0}
    for path in damaged_copies(tmp_path, source):
        try:
            recording = Recording(path)
            frames = list(recording.frames())
            snapshots(frames[:5])
            outcomes["read"] += 1
        except RecordingError as exc:
            assert "\n" not in str(exc)
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["read"] > 0


def test_damaged_files_on_the_command_line_are_one_line(tmp_path):
    source = tmp_path / "good.gtrec"
    record(source, count=200)
    for i, path in enumerate(damaged_copies(tmp_path, source)):
        if i % 12:
            continue
        for args in (["report", str(path)],
                     ["export", str(path), "--format", "jsonl", "-o", str(tmp_path / "o.jsonl")]):
            out = gputop(*args)
            assert "Traceback" not in out.stderr, out.stderr
            if out.returncode != 0:
                assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(b""), "is empty"),
    (lambda p: p.write_text("hello, not sqlite at all\n" * 100), "not a gputop recording"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: None, "no such file"),
    (lambda p: sqlite3.connect(p).execute("CREATE TABLE t(x)").connection.commit(),
     "not a gputop recording"),
])
def test_not_recordings(tmp_path, make, message):
    path = tmp_path / "x.gtrec"
    make(path)
    for command in ("replay", "report", "export"):
        args = [command, str(path)] + (["--format", "csv", "-o", "-"] if command == "export" else [])
        out = gputop(*args)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr


def test_a_recording_from_a_future_gputop(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, count=3)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    out = gputop("report", str(path))
    assert out.returncode == 2 and "written by a newer gputop" in out.stderr


def test_export_csv_jsonl_and_time_range(tmp_path):
    path = tmp_path / "r.gtrec"
    frames = record(path, "allreduce-straggler", 30)
    out = tmp_path / "o.csv"
    assert export(RecordingCursor(Recording(path)), "csv", str(out)) == 30
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 30 * 4
    assert {r["gpu"] for r in rows} == {"0", "1", "2", "3"}
    last = [r for r in rows if r["time_wall_s"] == str(frames[-1].time_wall_s)]
    assert last[0]["alert"] == "busy_unproductive" and float(last[2]["sm_active_pct"]) > 80
    jsonl = tmp_path / "o.jsonl"
    assert export(RecordingCursor(Recording(path)), "jsonl", str(jsonl), "+10s", "+19s") == 10
    lines = [json.loads(line) for line in jsonl.open()]
    assert lines[0]["time"].startswith("2023-11-14T22:13:30")
    # same derivation as live: the exported snapshot equals the live snapshot at that frame
    live = snapshots(frames)[19]
    assert {k: v for k, v in lines[-1].items() if k != "source"} == \
        {k: v for k, v in live.items() if k != "source"}


def test_perfetto_trace_has_the_tracks(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, "logprobs-storm", 30)
    out = tmp_path / "trace.json"
    export(RecordingCursor(Recording(path)), "perfetto", str(out))
    trace = json.loads(out.read_text())
    events = trace["traceEvents"]
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert {"GPU-Util %", "SM active %", "VRAM GiB", "tokens/s", "launch p99 us"} <= counters
    instants = [e for e in events if e["ph"] == "i"]
    assert instants and "busy" in instants[0]["name"]
    assert all(isinstance(e.get("ts", 0), (int, float)) for e in events)


def test_report_names_episodes_and_worst_launch(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, "launch-jitter", 40)
    out = gputop("report", str(path))
    assert out.returncode == 0
    assert "busy-but-unproductive episodes: 1" in out.stdout
    assert "likely host_launch_jitter" in out.stdout
    assert "worst launch-latency moments" in out.stdout and " ms" in out.stdout


@pytest.mark.parametrize("text, expected", [
    ("+30s", 1030.0), ("-5m", 1700.0), ("+1h30m", 1000.0 + 5400), ("-90", 1910.0),
])
def test_relative_times(text, expected):
    assert parse_time(text, 1000.0, 2000.0, 1000.0) == expected


def test_clock_times_and_bad_input():
    start = 1_700_000_000.0  # 22:13:20 UTC
    assert parse_time("22:14", 0, 0, start) == start + 40
    # earlier than the start on its day: the recording crossed midnight, so the next day
    assert parse_time("00:10", 0, 0, start) == start + 7000  # 22:13:20 -> 00:10:00
    for bad in ("soon", "25:00", "+x", ""):
        with pytest.raises(ValueError):
            parse_time(bad, 0, 0, start)
    assert parse_duration("1h30m") == 5400 and parse_size("500MB") == 500 * 2**20
    for bad in ("0s", "abc", "-1h"):
        with pytest.raises(ValueError):
            parse_duration(bad)


async def test_replay_keys(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, "logprobs-storm", 200)
    app = ReplayApp(Recording(path))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        status = lambda: text_of(app.query_one("#status"))
        assert "frame 1/200" in status() and "REPLAY 2023-11-14" in status()
        await pilot.press("right", "right")
        assert app.paused_seq == 2 and "frame 3/200" in status()
        await pilot.press("shift+right")
        assert app.paused_seq == 62
        await pilot.press("shift+left", "left")
        assert app.paused_seq == 1
        await pilot.press("end")
        assert app.paused_seq == 199 and app.query_one("#banner").display
        await pilot.press("home")
        assert app.paused_seq == 0 and not app.query_one("#banner").display
        await pilot.press("greater_than_sign", "greater_than_sign", "greater_than_sign")
        assert app.speed == 8
        await pilot.press("space")
        await pilot.pause(1.0)
        assert app.playing and app.paused_seq >= 4  # 8x: about 8 frames a second
        await pilot.press("space")
        assert not app.playing
        await pilot.press("less_than_sign")
        assert app.speed == 4
        await pilot.press("j")
        await pilot.press(*"+100s", "enter")
        await pilot.pause()
        assert 100 <= app.paused_seq <= 115  # +100 s from where playing stopped
        assert app.jump_to("22:13:25") and app.paused_seq == 5
        assert not app.jump_to("whenever")
        await pilot.press("right_square_bracket", "4")
        assert "KV free" in text_of(app.query_one("#pane-4"))


async def test_live_view_records_with_r(tmp_path, monkeypatch):
    from gputop.session import Session
    from gputop.tui.app import GputopApp

    monkeypatch.chdir(tmp_path)
    frames = sim_frames("serving", 10)
    app = GputopApp(Session("demo:serving", frames=frames[:2]))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("r")
        assert app.session.recorder is not None
        for frame in frames[2:8]:
            app.add_frame(frame)
        await pilot.pause()
        assert "REC gputop-" in text_of(app.query_one("#status"))
        await pilot.press("r")
        assert app.session.recorder is None
    (path,) = tmp_path.glob("gputop-*.gtrec")
    assert [f.seq for f in Recording(path).frames()] == list(range(2, 8))


def test_export_one_process_tree(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, "serving", 5)
    out = tmp_path / "o.jsonl"
    result = gputop("export", str(path), "--format", "jsonl", "-o", str(out), "--pid", "3377")
    assert result.returncode == 0, result.stderr
    last = json.loads(out.read_text().splitlines()[-1])
    assert last["pinned"]["pids"] == [3377]
    assert [p["pid"] for p in last["gpus"][0]["processes"]] == [3377]
    assert last["gpus"][0]["mem_used_bytes"] > 70 * 2**30  # the card's totals stay


def test_export_of_an_engine_only_recording_keeps_the_engine(tmp_path):
    """No GPU here: a recording of an engine alone exports one row per frame, not a header."""
    import dataclasses
    path = tmp_path / "r.gtrec"
    frames = [dataclasses.replace(f, gpus=(), processes=())
              for f in sim_frames("serving", 10)]
    recorder = Recorder(path, "nvml")
    for frame in frames:
        recorder.append(frame)
    recorder.close()
    out = tmp_path / "o.csv"
    assert export(RecordingCursor(Recording(path)), "csv", str(out)) == 10
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 10 and rows[0]["gpu"] == ""
    assert float(rows[-1]["generation_tokens_per_s"]) > 1000
    assert float(rows[-1]["itl_p99_s"]) > 0


def test_reading_a_recording_leaves_nothing_beside_it(tmp_path):
    path = tmp_path / "run%41.gtrec"  # a % in the name is a %, not a URI escape
    record(path, "serving", 20)
    assert gputop("export", str(path), "--format", "csv", "-o", str(tmp_path / "o.csv")).returncode == 0
    assert gputop("report", str(path)).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv", "run%41.gtrec"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root (CI runs as root)")
def test_a_recording_on_a_read_only_mount_opens(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    record(source / "r.gtrec", "serving", 20)
    mount = tmp_path / "ro"
    mount.mkdir()
    script = (f"mount --bind {source} {mount} && mount -o remount,bind,ro {mount} && "
              f"{sys.executable} -m gputop report {mount}/r.gtrec")
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "demo:serving" in result.stdout and "damaged" not in result.stdout


def test_relative_times_starting_with_a_minus_are_accepted(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, "serving", 30)
    result = gputop("export", str(path), "--format", "csv", "-o", "-", "--from", "-10s",
                    "--to", "-5s")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 1 + 6  # the header and 6 s of frames


def test_ctrl_c_saves_the_recording_and_exits_130(tmp_path):
    path = tmp_path / "r.gtrec"
    proc = subprocess.Popen([sys.executable, "-m", "gputop", "record", str(path), "--demo",
                             "serving", "-d", "0.2"], stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 130
    assert Recording(path).count() >= 3


def test_export_refuses_to_destroy_its_input_or_follow_a_link(tmp_path):
    path = tmp_path / "r.gtrec"
    record(path, "serving", 5)
    same = gputop("export", str(path), "--format", "csv", "-o", str(path))
    assert same.returncode == 2 and "would be destroyed" in same.stderr
    assert Recording(path).count() == 5
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    linked = gputop("export", str(path), "--format", "csv", "-o", str(link), "--force")
    assert linked.returncode == 2 and "symbolic link" in linked.stderr
    assert not (tmp_path / "elsewhere.csv").exists()
    out = tmp_path / "out.jsonl"
    assert gputop("export", str(path), "--format", "jsonl", "-o", str(out)).returncode == 0
    assert (out.stat().st_mode & 0o777) == 0o600
    again = gputop("export", str(path), "--format", "jsonl", "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    assert gputop("export", str(path), "--format", "jsonl", "-o", str(out), "--force").returncode == 0


def test_a_corrected_model_derives_kv_and_weights_again(tmp_path):
    """Frames carry the model's raw KV fields, not KV bytes per token: exporting with
    --model of a 70B config (80 layers instead of 32) gives a KV pool 2.5x as large, and the
    recorded 8B weights are not kept for a model whose weights are not known."""
    path = tmp_path / "r.gputop"
    record(path, "serving", 20)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"num_hidden_layers": 80, "num_attention_heads": 64,
                                  "num_key_value_heads": 8, "hidden_size": 8192,
                                  "torch_dtype": "bfloat16"}))
    rows = {}
    for name, extra in (("as_recorded", []), ("corrected", ["--model", str(config)])):
        out = tmp_path / f"{name}.csv"
        done = gputop("export", str(path), "--format", "csv", "-o", str(out), *extra)
        assert done.returncode == 0, done.stderr
        rows[name] = list(csv.DictReader(open(out)))[-1]
    assert int(rows["corrected"]["kv_pool_bytes"]) == \
        int(rows["as_recorded"]["kv_pool_bytes"]) * 80 // 32
    assert rows["as_recorded"]["weights_bytes"] and not rows["corrected"]["weights_bytes"]
    bad = gputop("replay", str(path), "--model", str(tmp_path / "missing.json"))
    assert bad.returncode == 2 and "--model" in bad.stderr and "Traceback" not in bad.stderr
