"""What `gputop serve` costs, beside Debian's prometheus-node-exporter on the same machine.

1. CPU: both run for --seconds (default 60) and are scraped every 5 s, gputop sampling at
   1 Hz over 8 simulated GPUs (--demo serving --gpus 8); CPU is read from /proc (utime +
   stime) and printed as percent of one core, with the ratio.
2. Scrape latency: 4 concurrent scrapers, --scrapes each (default 250), against each
   exporter in turn; p50 / p99 / max milliseconds.

    python bench/serve.py [--seconds 60] [--scrapes 250]
Needs prometheus-node-exporter (apt-get install prometheus-node-exporter; run as root this
script installs it).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_exporter_binary() -> str:
    found = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if found is None and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-q", "prometheus-node-exporter"],
                       check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        found = shutil.which("prometheus-node-exporter")
    if found is None:
        sys.exit("bench/serve.py: needs prometheus-node-exporter (apt-get install it)")
    return found


def start_gputop() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "gputop", "serve", "--demo", "serving",
                             "--gpus", "8", "-d", "1", "--listen", "127.0.0.1:0"], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    port = re.search(r":(\d+)/metrics", proc.stderr.readline()).group(1)
    return proc, f"http://127.0.0.1:{port}/metrics"


def start_node_exporter() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([node_exporter_binary(), f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, f"http://127.0.0.1:{port}/metrics"


def scrape_ms(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=10) as answer:
        answer.read()
    return (time.perf_counter() - started) * 1e3


def wait_up(url: str) -> None:
    for _ in range(100):
        try:
            scrape_ms(url)
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{url} never answered")


def cpu_phase(procs: dict, seconds: float) -> dict[str, float]:
    time.sleep(3)  # start-up (imports, first ticks) is not the steady cost
    before = {name: cpu_s(p.pid) for name, (p, _url) in procs.items()}
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        for _p, url in procs.values():
            scrape_ms(url)
        time.sleep(5)
    wall = time.monotonic() - started
    return {name: 100 * (cpu_s(p.pid) - before[name]) / wall for name, (p, _url) in procs.items()}


def latency_phase(url: str, scrapes: int) -> list[float]:
    out: list[float] = []

    def client():
        for _ in range(scrapes):
            out.append(scrape_ms(url))

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--scrapes", type=int, default=250)
    args = parser.parse_args()
    procs = {"gputop serve (8 GPUs, 1 Hz)": start_gputop(),
             "prometheus-node-exporter": start_node_exporter()}
    try:
        for _p, url in procs.values():
            wait_up(url)
        sizes = {name: len(urllib.request.urlopen(url, timeout=10).read())
                 for name, (_p, url) in procs.items()}
        cpu = cpu_phase(procs, args.seconds)
        latency = {name: latency_phase(url, args.scrapes) for name, (_p, url) in procs.items()}
    finally:
        for p, _url in procs.values():
            p.terminate()
            p.wait(timeout=10)
    names = list(procs)
    print(f"{os.cpu_count()} CPUs; CPU over {args.seconds:.0f} s, scraped every 5 s; "
          f"latency: 4 concurrent scrapers x {args.scrapes}")
    print(f"{'':32} {'CPU % core':>10} {'body KiB':>9} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    for name in names:
        lat = latency[name]
        print(f"{name:32} {cpu[name]:>10.2f} {sizes[name] / 1024:>9.1f} "
              f"{statistics.median(lat):>7.2f} {lat[int(len(lat) * 0.99) - 1]:>7.2f} "
              f"{lat[-1]:>7.2f}")
    a, b = names
    print(f"ratio gputop / node-exporter: CPU {cpu[a] / cpu[b]:.2f}x, scrape p99 "
          f"{latency[a][int(len(latency[a]) * 0.99) - 1] / latency[b][int(len(latency[b]) * 0.99) - 1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
