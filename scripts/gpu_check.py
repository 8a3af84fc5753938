#!/usr/bin/env python3
"""gputop against a real GPU under a real PyTorch workload (run by scripts/gpu-check.sh).

Phases, each a case gputop exists to explain:
  idle      nothing on the GPU
  reserve   ~60% of VRAM taken by one tensor, no kernels (the KV pool reserved at start-up:
            VRAM full at 0% GPU-Util)
  matmul    a steady bf16 8192^3 matmul loop (GPU-Util ~100%, SM activity high, MFU high)
  tiny      one-element kernels launched one by one from Python (launch bound: the GPU
            waits on the host between kernels)
  graph     the same one-element kernels replayed from a CUDA graph, back to back
            (GPU-Util ~100%, SM activity near 0: "busy" on one SM of 132)
  copy      a large device-to-device copy loop (memory bound: MBU high, MFU low)
  freed     the tensors freed, the CUDA context still alive
Alongside: `gputop record` (the real CLI, real NVML) writes h200.gputop; `gputop serve`
is scraped every 2 s by one client and, in the matmul phase, by 4 at once; `nvidia-smi -l 1`
logs its own view; `gputop snapshot --json` is taken in the matmul phase; the live
dashboard is drawn headless once in the graph phase (live.svg).  Everything lands in OUT:
  h200.gputop  nvidia-smi.csv  metrics.json  results.json  live.svg  overview.svg
  processes.svg  log.txt
The per-phase comparison is made afterwards from the recording (bench/gpu_check_report.py)
so that nothing here depends on analysis code being right first time.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.environ.get("OUT", "out")
PHASE_S = float(os.environ.get("PHASE_S", "20"))
PORT = 9464
GPUTOP = [sys.executable, "-m", "gputop"]
EXTRA = os.environ.get("GPU_CHECK_ARGS", "").split()  # "--demo serving" for a dry run here


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def workload(phases: list, mark: dict) -> None:
    import torch

    free_b, total_b = torch.cuda.mem_get_info()
    log(f"cuda: {torch.cuda.get_device_name(0)}, free {free_b / 2**30:.1f} of {total_b / 2**30:.1f} GiB")
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    x = torch.zeros(1, device="cuda")
    src = torch.empty(2 * 2**30, device="cuda", dtype=torch.uint8)   # 2 GiB, well past L2
    dst = torch.empty_like(src)
    torch.cuda.synchronize()
    pool = None

    def phase(name: str, seconds: float, step) -> None:
        start = time.time()
        phases.append({"phase": name, "start_wall_s": start})
        mark["phase"] = name
        log(f"phase {name}")
        n = 0
        while time.time() - start < seconds:
            step()
            n += 1
        torch.cuda.synchronize()
        phases[-1]["end_wall_s"] = time.time()
        phases[-1]["steps"] = n

    phase("idle", 8, lambda: time.sleep(0.2))
    pool = torch.empty(int(total_b * 0.6), device="cuda", dtype=torch.uint8)  # no kernel touches it
    torch.cuda.synchronize()
    phases.append({"phase": "reserve_alloc", "bytes": pool.numel()})
    phase("reserve", 15, lambda: time.sleep(0.2))

    def matmul():
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()

    def tiny():
        for _ in range(2000):
            x.add_(1)
        torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            x.add_(1)  # warm-up before capture, as PyTorch asks
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        for _ in range(1000):
            x.add_(1)

    def replay():
        for _ in range(20):
            graph.replay()
        torch.cuda.synchronize()

    def copy():
        for _ in range(10):
            dst.copy_(src)
        torch.cuda.synchronize()

    # measured rates for the record: what the card did, to set gputop's MFU/MBU against
    matmul(); copy()  # warm-up (cuBLAS handles, first-touch)
    t0 = time.perf_counter(); matmul(); t1 = time.perf_counter()
    phases.append({"phase": "matmul_rate", "tflops": 20 * 2 * 8192**3 / (t1 - t0) / 1e12})
    t0 = time.perf_counter(); copy(); t1 = time.perf_counter()
    phases.append({"phase": "copy_rate", "tb_s": 10 * 2 * src.numel() / (t1 - t0) / 1e12})
    phase("matmul", PHASE_S, matmul)
    phase("tiny", PHASE_S, tiny)
    phase("graph", PHASE_S, replay)
    phase("copy", PHASE_S * 0.75, copy)
    del pool, a, b, src, dst, graph
    torch.cuda.empty_cache()
    phase("freed", 8, lambda: time.sleep(0.2))
    mark["phase"] = "done"


def scrape(path: str = "/metrics") -> tuple[float, str]:
    started = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}{path}", timeout=5) as r:
        body = r.read().decode()
    return (time.perf_counter() - started) * 1e3, body


def scraper(mark: dict, results: dict, texts: dict) -> None:
    """One client every 2 s; in the matmul phase a burst of 4 concurrent clients."""
    burst_done = False
    while mark.get("phase") != "done":
        try:
            ms, body = scrape()
            results["scrape_ms"].append(ms)
            texts[mark.get("phase", "start")] = body
        except Exception as exc:  # recorded, not fatal: the check goes on
            results["scrape_errors"].append(f"{type(exc).__name__}: {exc}")
        if mark.get("phase") == "matmul" and not burst_done:
            burst_done = True
            out: list = []

            def client():
                for _ in range(25):
                    try:
                        out.append(scrape()[0])
                    except Exception as exc:
                        results["scrape_errors"].append(f"burst {type(exc).__name__}: {exc}")

            threads = [threading.Thread(target=client) for _ in range(4)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            results["burst_scrape_ms"] = out
        time.sleep(2)


def live_shot(path: str) -> None:
    """The live dashboard on real NVML, drawn headless for a few seconds; then pane 7
    (every GPU) and pane 8 (processes) beside it (overview.svg, processes.svg)."""
    code = f"""
import asyncio, os, sys
from gputop import cli
args = cli.build_parser().parse_args(['-d', '1'] + {EXTRA!r})
session, pin = cli._setup(args)
session.open()
from gputop.tui.app import GputopApp
app = GputopApp(session, interval_s=1.0, pin=pin)
async def main():
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause(6)
        title = 'gputop on an H200 (one-element kernels from a CUDA graph)'
        open({path!r}, 'w').write(app.export_screenshot(title=title))
        for key, name in (('7', 'overview.svg'), ('8', 'processes.svg')):
            await pilot.press(key)
            await pilot.pause(2)
            open(os.path.join(os.path.dirname({path!r}), name), 'w').write(
                app.export_screenshot(title=f'gputop on an H200: pane {{key}}'))
asyncio.run(main())
session.close()
"""
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60, check=False)


def cpu_s(pid: int) -> float:
    import psutil
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    results: dict = {"scrape_ms": [], "scrape_errors": [], "phases": []}
    texts: dict = {}
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,index,utilization.gpu,utilization.memory,"
         "memory.used,memory.total,clocks.sm,power.draw", "--format=csv,nounits", "-l", "1"],
        stdout=open(os.path.join(OUT, "nvidia-smi.csv"), "w"), stderr=subprocess.STDOUT)
    rec = subprocess.Popen(GPUTOP + ["record", os.path.join(OUT, "h200.gputop"), "-d", "1",
                                     "--duration", "10m"] + EXTRA, cwd=ROOT, env=env)
    srv = subprocess.Popen(GPUTOP + ["serve", "--listen", f"127.0.0.1:{PORT}", "-d", "1"] + EXTRA,
                           cwd=ROOT, env=env)
    for _ in range(50):
        try:
            scrape("/healthz")
            break
        except Exception:
            time.sleep(0.2)
    mark: dict = {"phase": "start"}
    started_wall = time.time()
    rec_cpu0, srv_cpu0 = cpu_s(rec.pid), cpu_s(srv.pid)
    scr = threading.Thread(target=scraper, args=(mark, results, texts), daemon=True)
    scr.start()

    def side_tasks():
        while mark.get("phase") != "matmul":
            time.sleep(0.5)
        time.sleep(8)
        snap = subprocess.run(GPUTOP + ["snapshot", "--json"] + EXTRA, cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        results["snapshot_json"] = snap.stdout
        results["snapshot_rc"] = snap.returncode
        results["snapshot_stderr"] = snap.stderr[-2000:]
        try:
            results["serve_snapshot_json"] = scrape("/snapshot.json")[1]
        except Exception as exc:
            results["scrape_errors"].append(f"snapshot.json {exc}")
        while mark.get("phase") != "graph":
            time.sleep(0.5)
        time.sleep(5)
        live_shot(os.path.join(OUT, "live.svg"))

    side = threading.Thread(target=side_tasks, daemon=True)
    side.start()
    try:
        workload(results["phases"], mark)
    finally:
        mark["phase"] = "done"
        wall = time.time() - started_wall
        results["record_cpu_pct_of_one_core"] = 100 * (cpu_s(rec.pid) - rec_cpu0) / wall
        results["serve_cpu_pct_of_one_core"] = 100 * (cpu_s(srv.pid) - srv_cpu0) / wall
        results["wall_s"] = wall
        side.join(timeout=30)
        rec.send_signal(signal.SIGINT)
        srv.send_signal(signal.SIGTERM)
        results["record_rc"] = rec.wait(timeout=30)
        results["serve_rc"] = srv.wait(timeout=30)
        smi.terminate()
    s = results["scrape_ms"]
    b = sorted(results.get("burst_scrape_ms", []))
    results["scrape_summary"] = {
        "single_p50_ms": statistics.median(s) if s else None,
        "burst4_p50_ms": statistics.median(b) if b else None,
        "burst4_p99_ms": b[int(len(b) * 0.99) - 1] if b else None,
        "burst4_n": len(b)}
    with open(os.path.join(OUT, "metrics.json"), "w") as f:
        json.dump(texts, f, indent=1)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    log(f"record rc {results['record_rc']} serve rc {results['serve_rc']} "
        f"snapshot rc {results.get('snapshot_rc')}")
    log(f"CPU: record {results['record_cpu_pct_of_one_core']:.2f}% serve "
        f"{results['serve_cpu_pct_of_one_core']:.2f}% of one core over {wall:.0f} s")
    log(f"scrapes: {results['scrape_summary']} errors {results['scrape_errors'][:5]}")
    log(f"phases: {json.dumps(results['phases'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
