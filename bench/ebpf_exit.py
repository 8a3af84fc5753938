#!/usr/bin/env python3
"""How long gputop takes to end with eBPF probes attached, for 1, 10 and 50 libraries.

A C program dlopens N copies of the stand-in libcudart (tests/stand_in, built with gcc) and
waits; `gputop record --ebpf MODE --pid PID` attaches to all of them; then SIGTERM.  Printed:
seconds from the signal until the process is gone (the shell prompt is back), until no
gputop BPF program is loaded any more (bpftool), and the same for `gputop record` without
eBPF as the reference.  Root, bcc and kernel headers needed (scripts/setup-ebpf.sh).

    sudo python bench/ebpf_exit.py [--libs 1,10,50] [--mode full]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from gputop.sources.ebpf import unavailable_reason  # noqa: E402

HOLDER_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!dlopen(argv[i], RTLD_NOW)) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    puts("ready"); fflush(stdout);
    pause();
    return 0;
}
"""


def our_programs() -> int:
    bpftool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    out = subprocess.run([bpftool, "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    return sum(1 for p in json.loads(out) if p.get("name", "").startswith("gputop_"))


def build(tmp: Path, count: int) -> tuple[Path, list[Path]]:
    lib = tmp / "libcudart.so.12"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-DRUNTIME", "-o", str(lib),
                    str(ROOT / "tests" / "stand_in" / "cuda_stand_in.c")], check=True)
    copies = []
    for i in range(count):
        d = tmp / f"copy{i}"
        d.mkdir(exist_ok=True)
        shutil.copy(lib, d / "libcudart.so.12")
        copies.append(d / "libcudart.so.12")
    (tmp / "holder.c").write_text(HOLDER_C)
    subprocess.run(["gcc", "-O2", "-o", str(tmp / "holder"), str(tmp / "holder.c"), "-ldl"],
                   check=True)
    return tmp / "holder", copies


def one_exit(holder: Path, libs: list[Path], mode: str, tmp: Path) -> tuple[float, float, int]:
    proc = subprocess.Popen([str(holder), *map(str, libs)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    out = tmp / f"r-{time.monotonic_ns()}.gputop"
    args = [sys.executable, "-m", "gputop", "record", str(out), "--pid", str(proc.pid),
            "-d", "0.5", "--engine", "http://127.0.0.1:9/metrics"]
    if mode != "off":
        args += ["--ebpf", mode]
    gputop = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        if mode != "off":
            while our_programs() == 0 and time.monotonic() < deadline:
                time.sleep(0.2)
        time.sleep(2.0 + 0.05 * len(libs))  # the first rescan attaches every library
        loaded = our_programs()
        started = time.monotonic()
        gputop.send_signal(signal.SIGTERM)
        gputop.wait(timeout=120)
        gone_s = time.monotonic() - started
        while our_programs() and time.monotonic() - started < 120:
            time.sleep(0.02)
        unloaded_s = time.monotonic() - started
    finally:
        proc.kill()
        proc.wait()
    return gone_s, unloaded_s, loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libs", default="1,10,50")
    parser.add_argument("--mode", default="full", choices=["full", "light"])
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        print(f"bench/ebpf_exit.py: {reason}", file=sys.stderr)
        return 2
    counts = [int(n) for n in args.libs.split(",")]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        holder, copies = build(tmp, max(counts))
        print(f"{'libraries':>9} {'mode':>6} {'programs':>8} {'process gone s':>15} "
              f"{'programs unloaded s':>20}")
        for count in counts:
            for mode in (args.mode, "off"):
                gone, unloaded, loaded = one_exit(holder, copies[:count], mode, tmp)
                print(f"{count:>9} {mode:>6} {loaded:>8} {gone:>15.3f} {unloaded:>20.3f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
