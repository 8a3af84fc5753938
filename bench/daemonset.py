"""What the Kubernetes DaemonSet's `gputop serve` costs: the numbers behind the resource
requests and limits in contrib/kubernetes/base/daemonset.yaml.

`gputop serve --export-processes --export-tenants` at 1 Hz over the C stand-in NVML
(8 H100s, --procs GPU processes that are real sleeping processes, read through the real
pynvml), scraped every --scrape-s seconds as Prometheus would, for --seconds.  Printed:
CPU as percent of one core (utime + stime from /proc over the run, after a warm-up), the
resident memory at the end and its peak (VmHWM), and the scrape's size.

    python bench/daemonset.py [--seconds 60] [--procs 16] [--scrape-s 15]
Needs gcc (the stand-in library is built in a temporary directory).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--procs", type=int, default=16)
    parser.add_argument("--scrape-s", type=float, default=15.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(tmp / "libnvidia-ml.so.1"),
                    str(ROOT / "tests" / "stand_in" / "nvml_stand_in.c")], check=True)
    sleepers = [subprocess.Popen(["sleep", str(args.seconds + 60)]) for _ in range(args.procs)]
    procs = ",".join(f"{p.pid}:{i % 8}:{1024 + 512 * i}:{10 + i}:{i}" for i, p in enumerate(sleepers))
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp), NVML_STAND_IN_GPUS="8",
               NVML_STAND_IN_PROCS=procs, PYTHONPATH=str(ROOT))
    serve = subprocess.Popen([sys.executable, "-m", "gputop", "serve", "--listen",
                              "127.0.0.1:0", "--export-processes", "--export-tenants"],
                             env=env, stderr=subprocess.PIPE, text=True)
    try:
        url = serve.stderr.readline().split(" on ", 1)[1].split()[0]
        # start-up (imports, the first ticks, the exporter's lazy imports at the first scrape)
        # is not the steady state: one scrape answered, then 5 s more, however slow the host
        urllib.request.urlopen(url, timeout=60).read()
        time.sleep(5)
        start_cpu, start = cpu_s(serve.pid), time.monotonic()
        size = 0
        while time.monotonic() - start < args.seconds:
            size = len(urllib.request.urlopen(url, timeout=10).read())
            time.sleep(min(args.scrape_s, max(0.0, args.seconds - (time.monotonic() - start))))
        used = cpu_s(serve.pid) - start_cpu
        elapsed = time.monotonic() - start
        print(f"gputop serve, 8 GPUs, {args.procs} GPU processes, 1 Hz, scraped every "
              f"{args.scrape_s:g} s for {elapsed:.0f} s:")
        print(f"  CPU {100 * used / elapsed:.2f}% of one core")
        print(f"  memory: resident {status_kib(serve.pid, 'VmRSS') / 1024:.1f} MiB, peak "
              f"{status_kib(serve.pid, 'VmHWM') / 1024:.1f} MiB")
        print(f"  /metrics: {size / 1024:.1f} KiB")
    finally:
        serve.terminate()
        serve.wait(timeout=30)
        for p in sleepers:
            p.kill()
            p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
