#!/usr/bin/env python3
"""Per-phase comparison of a gpu-check run: gputop's recording beside nvidia-smi's own log.

Usage: python bench/gpu_check_report.py [DIR]   (default tests/data/h200, the committed
H200 run; DIR is what scripts/gpu-check.sh left in $OUT).  Prints one row per phase:
GPU-Util as gputop recorded it and as nvidia-smi printed it, SM active, tensor and DRAM
activity (GPM), VRAM used by both, power, and what one NVML poll cost.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gputop.record.store import Recording

EDGE_S = 2.0  # ignore each phase's first and last 2 s: the 1 s samples straddle the change


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def _fmt(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def smi_rows(path: str) -> list[dict]:
    rows = []
    with open(path) as f:
        reader = csv.reader(f, skipinitialspace=True)
        header = next(reader)
        for row in reader:
            if len(row) != len(header):
                continue
            stamp = datetime.datetime.strptime(row[0], "%Y/%m/%d %H:%M:%S.%f")
            rows.append({"t": stamp.replace(tzinfo=datetime.UTC).timestamp(),
                         "util": float(row[2]), "mem_mib": float(row[4])})
    return rows


def phase_table(directory: str) -> list[dict]:
    results = json.load(open(os.path.join(directory, "results.json")))
    phases = [p for p in results["phases"] if "start_wall_s" in p]
    recording = Recording(os.path.join(directory, "h200.gputop"))
    frames = list(recording.frames())
    recording.close()
    smi = smi_rows(os.path.join(directory, "nvidia-smi.csv"))
    table = []
    for p in phases:
        lo, hi = p["start_wall_s"] + EDGE_S, p["end_wall_s"] - EDGE_S
        gpus = [f.gpus[0] for f in frames if lo <= f.time_wall_s <= hi and f.gpus]
        polls = [f.sources["nvml"].poll_s for f in frames
                 if lo <= f.time_wall_s <= hi and "nvml" in f.sources]
        smi_in = [r for r in smi if lo <= r["t"] <= hi]
        table.append({
            "phase": p["phase"], "frames": len(gpus),
            "util_gputop": _mean([g.util_gpu_pct for g in gpus]),
            "util_smi": _mean([r["util"] for r in smi_in]),
            "sm_active": _mean([g.sm_active_pct for g in gpus]),
            "tensor": _mean([g.tensor_pct for g in gpus]),
            "dram_bw": _mean([g.dram_bw_pct for g in gpus]),
            "vram_gib_gputop": _mean([g.mem_used_bytes / 2**30 for g in gpus
                                      if g.mem_used_bytes is not None]),
            "vram_gib_smi": _mean([r["mem_mib"] / 1024 for r in smi_in]),
            "power_w": _mean([g.power_w for g in gpus]),
            "nvml_poll_ms": (statistics.median(p for p in polls if p is not None) * 1e3
                             if any(p is not None for p in polls) else None),
        })
    return table


def main() -> int:
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "data", "h200")
    table = phase_table(directory)
    print(f"{'phase':8} {'frames':>6} {'util%':>6} {'smi%':>5} {'SM%':>5} {'tensor%':>7} "
          f"{'dram%':>6} {'VRAM GiB':>9} {'smi GiB':>8} {'W':>5} {'poll ms':>7}")
    for row in table:
        print(f"{row['phase']:8} {row['frames']:>6} {_fmt(row['util_gputop']):>6} "
              f"{_fmt(row['util_smi']):>5} {_fmt(row['sm_active']):>5} {_fmt(row['tensor']):>7} "
              f"{_fmt(row['dram_bw']):>6} {_fmt(row['vram_gib_gputop'], 1):>9} "
              f"{_fmt(row['vram_gib_smi'], 1):>8} {_fmt(row['power_w']):>5} "
              f"{_fmt(row['nvml_poll_ms'], 1):>7}")
    results = json.load(open(os.path.join(directory, "results.json")))
    rates = {p["phase"]: p for p in results["phases"] if "start_wall_s" not in p}
    print(f"PyTorch measured: bf16 matmul {rates['matmul_rate']['tflops']:.0f} TFLOP/s, "
          f"device copy {rates['copy_rate']['tb_s']:.2f} TB/s (read+write)")
    s = results["scrape_summary"]
    print(f"gputop serve /metrics: single p50 {s['single_p50_ms']:.1f} ms; 4 concurrent "
          f"scrapers p50 {s['burst4_p50_ms']:.1f} ms p99 {s['burst4_p99_ms']:.1f} ms "
          f"({s['burst4_n']} scrapes)")
    print(f"CPU over {results['wall_s']:.0f} s at 1 Hz: record "
          f"{results['record_cpu_pct_of_one_core']:.2f}%, serve "
          f"{results['serve_cpu_pct_of_one_core']:.2f}% of one core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
