"""gputop over a real SSH session: an OpenSSH server on 127.0.0.1, a client inside tmux."""

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from tests.conftest import gputop_processes
from tests.test_terminal import Terminal

pytestmark = pytest.mark.tmux
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    if not os.path.exists(SSHD) or shutil.which("ssh") is None:
        pytest.fail("OpenSSH is not installed: the README's test command installs it")
    tmp = tmp_path_factory.mktemp("sshd")
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp / name)],
                       check=True)
    (tmp / "authorized_keys").write_text((tmp / "client_key.pub").read_text())
    port = free_port()
    config = tmp / "sshd_config"
    config.write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {tmp / 'host_key'}
AuthorizedKeysFile {tmp / 'authorized_keys'}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
StrictModes no
UsePAM no
PidFile {tmp / 'sshd.pid'}
ClientAliveInterval 1
ClientAliveCountMax 2
""")
    os.makedirs("/run/sshd", exist_ok=True)
    server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    else:
        server.kill()
        pytest.fail("sshd did not start: " + server.stderr.read().decode()[-500:])
    yield port, tmp / "client_key"
    server.kill()
    server.wait()


def ssh_command(port, key, remote: str) -> str:
    return " ".join(["ssh", "-tt", "-p", str(port), "-i", str(key),
                     "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                     "-o", "LogLevel=ERROR", "root@127.0.0.1", shlex.quote(remote)])


def remote_gputop(*args: str) -> str:
    return (f"cd {shlex.quote(str(REPO))} && TZ=UTC {shlex.quote(sys.executable)} -m gputop "
            + " ".join(shlex.quote(a) for a in args))


@pytest.mark.parametrize("term, extra", [("xterm-256color", []), ("vt100", ["--no-color"])])
def test_dashboard_over_ssh(sshd, tmp_path, term, extra):
    port, key = sshd
    seed = str(4000 + (uuid.uuid4().int % 1000))
    remote = remote_gputop("--demo", "logprobs-storm", "-d", "0.25", "--seed", seed, *extra)
    term_ = Terminal(ssh_command(port, key, remote), env={"TERM": term}, tmp_path=tmp_path)
    try:
        term_.wait_for("likely: oversized request", timeout=30)
        screen = term_.screen()
        for title in ("1 GPU-Util", "2 SM activity", "3 Throughput", "4 VRAM", "6 Host"):
            assert title in screen
        term_.keys("3")
        term_.wait_for("gen tok/s", absent="1 GPU-Util")
        term_.keys("q")
        assert term_.exit_status(timeout=15) == 0
        time.sleep(0.5)
        assert not term_.alternate_screen_on()
        assert not gputop_processes(seed)
    finally:
        term_.close()


def test_dropped_connection_ends_the_remote_gputop(sshd, tmp_path):
    port, key = sshd
    seed = str(5000 + (uuid.uuid4().int % 1000))
    term_ = Terminal(ssh_command(port, key, remote_gputop("--demo", "serving", "--seed", seed)),
                     env={"TERM": "xterm-256color"}, tmp_path=tmp_path)
    try:
        term_.wait_for("3 Throughput", timeout=30)
        assert gputop_processes(seed), "the remote gputop runs"
        clients = [p for p in psutil.process_iter(["cmdline"])
                   if (p.info.get("cmdline") or [""])[0] == "ssh" and seed in
                   " ".join(p.info["cmdline"])]
        assert clients
        for client in clients:
            client.kill()  # the connection drops without a goodbye
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and gputop_processes(seed):
            time.sleep(0.2)
        assert not gputop_processes(seed), "gputop outlived its SSH session"
    finally:
        term_.close()
