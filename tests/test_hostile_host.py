"""Hostile input, round two (issue 23): hostile neighbours on the same machine.

An unprivileged user (nobody, via setpriv) plants links in a config directory root
saves into, serves a page of 125,000 histogram buckets, names a process with bytes that
are not UTF-8, moves into a delegated cgroup named like someone else's container, maps
hundreds of copies of libcuda.so.1; a real PID namespace recycles a PID under a signal;
a real 2 MB tmpfs fills under the recorder; a recording's clock goes back.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from gputop.config import ConfigError, save_layout
from tests.test_hostile import VLLM, strict_json
from tests.test_serve import ROOT

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
LAUNCHER = ROOT / "tests" / "stand_in" / "fake_nvml_gputop.py"


def as_nobody(*command: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*NOBODY, *command], check=True, capture_output=True, text=True,
                          timeout=60, **kwargs)


@pytest.fixture
def nobody_dir():
    """A directory owned by the unprivileged user (a config directory another user
    controls, as with ``sudo -E`` keeping XDG_CONFIG_HOME)."""
    base = Path(tempfile.mkdtemp(prefix="gputop-nobody-"))
    base.chmod(0o755)
    directory = base / "gputop"
    directory.mkdir()
    os.chown(directory, 65534, 65534)
    yield directory
    shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------- 2. S through links

ATTACKER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIATTACKER attacker@evil"


def test_s_never_writes_through_a_planted_temporary_link(nobody_dir, tmp_path):
    victim = tmp_path / "authorized_keys"  # a root-only file
    victim.write_text("ssh-ed25519 AAAA root@host\n")
    victim.chmod(0o600)
    config = nobody_dir / "config.toml"
    as_nobody("sh", "-c", f"printf 'theme = \"\"\"\\n{ATTACKER_KEY}\\n\"\"\"\\n' > {config} && "
              f"ln -s {victim} {nobody_dir / 'config.toml.tmp'}")
    try:
        save_layout({"pane": "4"}, config)
    except ConfigError:
        pass
    assert victim.read_text() == "ssh-ed25519 AAAA root@host\n"
    assert (nobody_dir / "config.toml.tmp").is_symlink()  # left as planted, not followed


def test_s_never_copies_a_linked_secret_into_the_users_directory(nobody_dir, tmp_path):
    secret = tmp_path / "secret.toml"
    secret.write_text('theme = "dark"\n# token = "root-only-s3cret"\n')
    secret.chmod(0o600)
    config = nobody_dir / "config.toml"
    as_nobody("ln", "-s", str(secret), str(config))
    with pytest.raises(ConfigError, match="symbolic link"):
        save_layout({"pane": "4"}, config)
    for path in nobody_dir.iterdir():
        if not path.is_symlink():
            assert "root-only-s3cret" not in path.read_text()
    assert config.is_symlink() and "pane" not in secret.read_text()


def test_s_refuses_a_config_with_a_second_name(tmp_path):
    secret = tmp_path / "secret.toml"
    secret.write_text('theme = "dark"\n')
    (tmp_path / "gputop").mkdir()
    os.link(secret, tmp_path / "gputop" / "config.toml")
    with pytest.raises(ConfigError, match="hard links"):
        save_layout({"pane": "4"}, tmp_path / "gputop" / "config.toml")


def test_s_keeps_a_private_config_private_and_its_owner(nobody_dir):
    config = nobody_dir / "config.toml"
    as_nobody("sh", "-c", f"umask 077 && printf 'engines = [\"http://u:pw@127.0.0.1:8000/metrics\"]"
              f"\\n' > {config}")
    save_layout({"pane": "4", "theme": "light"}, config)
    st = config.stat()
    assert oct(st.st_mode & 0o777) == "0o600" and (st.st_uid, st.st_gid) == (65534, 65534)
    assert 'pane = "4"' in config.read_text() and "u:pw@" in config.read_text()
    assert [p.name for p in nobody_dir.iterdir()] == ["config.toml"]  # no temporary left


# ---------------------------------------------------------------- 3. 125,000 buckets

def bucket_page(buckets: int) -> str:
    lines = ["# TYPE vllm:inter_token_latency_seconds histogram"]
    lines += [f'vllm:inter_token_latency_seconds_bucket{{le="{i * 1e-6:.6f}"}} {i}'
              for i in range(1, buckets + 1)]
    lines += [f'vllm:inter_token_latency_seconds_bucket{{le="+Inf"}} {buckets}',
              f"vllm:inter_token_latency_seconds_count {buckets}",
              "vllm:inter_token_latency_seconds_sum 1.0"]
    return VLLM + "\n".join(lines) + "\n"


def test_a_page_of_125000_buckets_is_not_read_and_says_so():
    from gputop.sources.engine_metrics import recognise

    parsed = recognise(bucket_page(125_000))
    assert all(len(h.upper_bounds) <= 256 for h in parsed.histograms)
    assert "itl" not in {h.name for h in parsed.histograms}
    assert any("inter_token_latency" in note and "not read" in note for note in parsed.refused)
    assert parsed.values["generation_tokens_total"] is not None  # the rest is still read


def test_the_history_budget_counts_an_engines_buckets():
    """Frames whose engine histograms are large must fill the 32 MiB budget by what they
    hold: counted at 700 B a histogram, 20 frames of 100k buckets held 128 MB."""
    from gputop.model.detect import make_fold
    from gputop.model.timeline import Timeline
    from gputop.schema import EngineHistogram
    from tests.conftest import sim_frames

    base = sim_frames("serving", 3)[-1]
    budget = 8 * 2**20
    timeline = Timeline(1000, make_fold(), max_bytes=budget)
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for i in range(20):
        hist = EngineHistogram("itl", tuple(float(b) for b in range(100_000)),
                               tuple(float(b + i) for b in range(100_000)), 1e5 + i, 1.0)
        engine = dataclasses.replace(base.engine, histograms=(hist,))
        timeline.append(dataclasses.replace(base, seq=i, time_mono_s=float(i), engine=engine))
    held = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert held < 3 * budget, f"{held / 2**20:.0f} MiB held under a {budget / 2**20:.0f} MiB budget"


def test_an_unprivileged_engine_with_125000_buckets_cannot_grow_roots_serve(tmp_path):
    """Another user's executable named vllm, found by discovery (no flags), in a PID
    namespace of its own so no other engine on the machine is found first."""
    shared = Path(tempfile.mkdtemp(prefix="gputop-buckets-"))
    try:
        shared.chmod(0o755)
        (shared / "page.txt").write_text(bucket_page(125_000))
        (shared / "vllm").write_text(textwrap.dedent("""
            import http.server, sys
            page = open(sys.argv[1], "rb").read()
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200); self.send_header("Content-Length", str(len(page)))
                    self.end_headers(); self.wfile.write(page)
                def log_message(self, *a): pass
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 8000 + len(sys.argv)), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
        """))
        for name in ("page.txt", "vllm"):
            (shared / name).chmod(0o644)
        out = tmp_path / "out"
        out.mkdir()
        script = (f"{' '.join(NOBODY)} /usr/bin/python3 {shared / 'vllm'} {shared / 'page.txt'}"
                  f" > {out}/port &\n"
                  f"while [ ! -s {out}/port ]; do sleep 0.05; done\n"
                  f"{sys.executable} -m gputop serve --listen 127.0.0.1:0 -d 0.2 "
                  f"2> {out}/serve.err &\n"
                  "SERVE=$!\n"
                  f"sleep 25\n"
                  f"grep VmRSS /proc/$SERVE/status > {out}/rss\n"
                  f"PORT=$(grep -o ':[0-9]*/metrics' {out}/serve.err | tr -dc 0-9)\n"
                  f"{sys.executable} -c \"import urllib.request, sys; "
                  "sys.stdout.buffer.write(urllib.request.urlopen("
                  f"'http://127.0.0.1:'+sys.argv[1]+'/snapshot.json', timeout=20).read())\" "
                  f"$PORT > {out}/snapshot.json\n"
                  "kill $SERVE\n")
        done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", script],
                              cwd=ROOT, capture_output=True, text=True, timeout=180,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr + (out / "serve.err").read_text()
        snapshot = strict_json((out / "snapshot.json").read_text())
        rss_kib = int((out / "rss").read_text().split()[1])
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    engine = snapshot["engine"]
    assert engine is not None and engine["generation_tokens_per_s"] is not None
    assert snapshot["sources"]["engine"]["ok"]
    assert rss_kib < 200_000, f"serve at {rss_kib / 1024:.0f} MiB after 25 s"


# ---------------------------------------------------------------- 10. a full disk

@pytest.fixture
def small_tmpfs():
    mount = Path(tempfile.mkdtemp(prefix="gputop-tmpfs-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)
    shutil.rmtree(mount, ignore_errors=True)


def test_a_full_disk_ends_record_with_one_line_and_keeps_what_was_written(small_tmpfs):
    path = small_tmpfs / "r.gtrec"
    done = subprocess.run([sys.executable, "-m", "gputop", "--demo", "serving", "--gpus", "8",
                           "-d", "0.02", "record", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "full" in done.stderr.strip().splitlines()[-1]
    report = subprocess.run([sys.executable, "-m", "gputop", "report", str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 0, report.stderr
    assert "frames" in report.stdout


CLOSE_ON_FULL_DISK = """
import sys, time
from gputop.demo import demo_frames
from gputop.session import Session
session = Session("demo:serving")
session.record(sys.argv[1], max_bytes=500 * 2**20)
frames = demo_frames("serving", 4000, gpus=8)
for frame in frames:
    session.add_frame(frame)
started = time.monotonic()
session.close()
print(f"closed in {time.monotonic() - started:.1f}s; error: {session.recorder}", flush=True)
"""


def test_close_returns_when_the_disk_filled_under_a_queue_of_frames(small_tmpfs):
    done = subprocess.run([sys.executable, "-c", CLOSE_ON_FULL_DISK, str(small_tmpfs / "r.gtrec")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and "closed in" in done.stdout, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- 12. a name not UTF-8

def test_a_process_name_that_is_not_utf8_keeps_metrics_scrapeable(tmp_path):
    import re
    import urllib.request

    bindir = Path(tempfile.mkdtemp(prefix="gputop-name-"))
    try:
        bindir.chmod(0o755)
        name = os.fsencode(str(bindir)) + b"/gpu\xff\xfejob"
        shutil.copy("/bin/sleep", name)
        os.chmod(name, 0o755)
        victim = subprocess.Popen([*NOBODY, name, "300"])
        try:
            spec = tmp_path / "nvml.json"
            spec.write_text(json.dumps({"gpus": [{"procs": [[victim.pid, 2]]}]}))
            serve = subprocess.Popen([sys.executable, str(LAUNCHER), "serve", "--listen",
                                      "127.0.0.1:0", "-d", "0.2", "--export-processes"],
                                     cwd=ROOT, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "FAKE_NVML_SPEC": str(spec),
                                          "PYTHONPATH": str(ROOT)})
            try:
                port = re.search(r":(\d+)/metrics", serve.stderr.readline()).group(1)
                time.sleep(2)
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                            timeout=10) as answer:
                    text = answer.read().decode()
            finally:
                serve.terminate()
                serve.wait(timeout=15)
        finally:
            victim.kill()
            victim.wait()
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    assert f'pid="{victim.pid}"' in text and 'process="gpu\\\\xff\\\\xfejob"' in text, \
        [line for line in text.splitlines() if "process_gpu" in line]


def test_printable_shows_lone_surrogates_as_the_bytes_they_stand_for():
    from gputop.units import printable

    name = b"gpu\xff\xfejob".decode("utf-8", "surrogateescape")
    assert printable(name) == "gpu\\xff\\xfejob"
    assert printable("a\ud800b") == "a<U+D800>b"
    printable(name).encode("utf-8")  # never raises


# ---------------------------------------------------------------- 13. a recycled PID

RECYCLE = """
import json, subprocess, time
from gputop.actions import send_signal
from gputop.sources.procinfo import gpu_process
sample = gpu_process(4121, 0, None, None)  # NVML's host PID: not visible in this namespace
with open("/proc/sys/kernel/ns_last_pid", "w") as f:
    f.write("4120")
stranger = subprocess.Popen(["sleep", "300"])  # an unrelated process takes PID 4121
sent, message = send_signal(sample, "KILL", readonly=False)
time.sleep(0.3)
print(json.dumps({"start": sample.start_time_s, "pid": stranger.pid, "sent": sent,
                  "alive": stranger.poll() is None, "message": message}))
stranger.kill()
"""


def test_no_signal_reaches_a_process_that_took_an_unverifiable_pid():
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                           RECYCLE], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["start"] is None and result["pid"] == 4121
    assert not result["sent"] and result["alive"], result
    assert "start time" in result["message"]


# ---------------------------------------------------------------- 14. a delegated cgroup

@pytest.fixture
def delegated_cgroup():
    """A cgroup v2 subtree delegated to nobody, as systemd delegates user@UID.service."""
    root = Path("/sys/fs/cgroup/unified")
    if not (root / "cgroup.procs").exists():
        root = Path("/sys/fs/cgroup")
    if not (root / "cgroup.procs").exists() or not (root / "cgroup.subtree_control").exists():
        pytest.fail("no cgroup v2 hierarchy mounted")
    base = root / f"gputop-test-{os.getpid()}"
    base.mkdir()
    for path in [base, *[base / f for f in ("cgroup.procs", "cgroup.threads",
                                             "cgroup.subtree_control")]]:
        os.chown(path, 65534, 65534)
    yield base
    for directory in sorted(base.rglob("*"), key=lambda p: -len(p.parts)):
        if directory.is_dir():
            _rmdir(directory)
    _rmdir(base)


def _rmdir(path: Path) -> None:
    for _ in range(50):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.1)


def test_a_delegated_cgroup_named_like_a_container_is_not_that_container(delegated_cgroup,
                                                                         tmp_path):
    from gputop.sources import cgroup
    from gputop.sources.cgroup import process_owner
    from gputop.sources.proctree import Pin, resolve_roots

    victim_id = os.urandom(32).hex()
    state = tmp_path / "var/lib/docker/containers" / victim_id
    state.mkdir(parents=True)
    (state / "config.v2.json").write_text(json.dumps({"Name": "/victim-db", "Config": {}}))
    spoof = delegated_cgroup / "user@65534.service" / f"docker-{victim_id}.scope"
    # nobody waits in the delegated cgroup, makes the container-like one and moves into it
    script = (f"read go; mkdir -p {spoof} && echo $$ > {spoof}/cgroup.procs && "
              "exec sleep 300")
    spoofer = subprocess.Popen([*NOBODY, "sh", "-c", script], stdin=subprocess.PIPE, text=True)
    try:
        (delegated_cgroup / "cgroup.procs").write_text(str(spoofer.pid))  # as systemd would
        spoofer.stdin.write("go\n")
        spoofer.stdin.flush()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(f"/proc/{spoofer.pid}/cgroup") as f:
                if victim_id in f.read() and "sleep" in Path(f"/proc/{spoofer.pid}/comm").read_text():
                    break
            time.sleep(0.1)
        cgroup._cache.clear()
        owner = process_owner(spoofer.pid, root=str(tmp_path))
        assert owner.container_id != victim_id and owner.container_name != "victim-db", owner
        assert owner.container.startswith("uid 65534: ") and owner.delegated_uid == 65534
        assert not owner.container.startswith("docker:") and owner.pod == ""
        roots = resolve_roots(Pin(container=victim_id[:12]))
        assert spoofer.pid not in [p.pid for p in roots]
    finally:
        spoofer.kill()
        spoofer.wait()


def test_a_root_made_container_cgroup_is_still_named(process_in_a_container):
    from gputop.sources import cgroup
    from gputop.sources.cgroup import process_owner

    child, container_id = process_in_a_container
    cgroup._cache.clear()
    assert process_owner(child.pid).container_id == container_id


# ---------------------------------------------------------------- 16. libraries to probe

@pytest.fixture
def many_libcuda(tmp_path_factory):
    """A process of nobody's that maps 200 distinct copies of a stand-in libcuda.so.1."""
    base = Path(tempfile.mkdtemp(prefix="gputop-libs-"))
    base.chmod(0o755)
    lib = base / "libcuda.so.1"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-DDRIVER", "-o", str(lib),
                    str(ROOT / "tests" / "stand_in" / "cuda_stand_in.c")], check=True)
    for i in range(200):
        (base / str(i)).mkdir()
        shutil.copy(lib, base / str(i) / "libcuda.so.1")
    for path in base.rglob("*"):
        path.chmod(0o755)
    loader = ("import ctypes, sys, time\n"
              f"libs = [ctypes.CDLL('{base}/%d/libcuda.so.1' % i) for i in range(200)]\n"
              "print('ready', flush=True)\ntime.sleep(300)\n")
    proc = subprocess.Popen([*NOBODY, "/usr/bin/python3", "-c", loader], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "ready"
    yield proc
    proc.kill()
    proc.wait()
    shutil.rmtree(base, ignore_errors=True)


def test_hundreds_of_mapped_libcuda_copies_are_probed_up_to_a_cap(many_libcuda):
    from gputop.sources.ebpf import EbpfSource, mapped_libraries

    assert len(mapped_libraries([many_libcuda.pid])) == 200
    source = EbpfSource("light")
    probed = source.refresh([many_libcuda.pid])
    assert 1 <= len(probed) <= 32  # ebpf.MAX_LIBRARIES
    assert source.skipped_libraries == 200 - len(probed)


def test_hundreds_of_libcuda_copies_leave_roots_descriptors_free(many_libcuda):
    from gputop.sources.ebpf import EbpfSource, unavailable_reason
    from gputop.sources.proctree import PinState, pin_pid

    if unavailable_reason() is not None:
        pytest.fail(f"eBPF unavailable: {unavailable_reason()} (scripts/setup-ebpf.sh)")
    state = PinState()
    state.set(pin_pid(many_libcuda.pid))
    source = EbpfSource("full", state)
    source.open()
    try:
        source.rescan(0.0)
        fds = len(os.listdir("/proc/self/fd"))
        try:
            detail = source.poll(0.0).detail
        except Exception as exc:  # no calls yet: the reason is fine
            detail = str(exc)
    finally:
        source.close()
    assert fds < 512, f"{fds} descriptors open with the probes attached"
    assert "not probed" in detail, detail


# ---------------------------------------------------------------- 21. time going back

def test_export_of_a_recording_whose_clock_goes_back_exports_every_frame(tmp_path):
    from gputop.record.store import Recorder
    from tests.conftest import sim_frames

    path = tmp_path / "back.gtrec"
    recorder = Recorder(path, "demo:serving")
    for i, frame in enumerate(sim_frames("serving", 20)):
        if i >= 10:  # the wall clock stepped back an hour, and the source restarted
            frame = dataclasses.replace(frame, time_wall_s=frame.time_wall_s - 3600,
                                        time_mono_s=frame.time_mono_s - 3600)
        recorder.append(frame)
    recorder.close()
    out = tmp_path / "out.csv"
    done = subprocess.run([sys.executable, "-m", "gputop", "export", str(path), "--format", "csv",
                           "-o", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "exported 20 frames" in done.stderr
    assert len(out.read_text().splitlines()) == 1 + 20  # one GPU: a row per frame
