#!/usr/bin/env python3
"""Sampled probes (--ebpf-duty) against probes attached all the time, in one run.

A C driver calls the stand-in cudaLaunchKernel (busy-waiting --spin-ns each, a steady
workload) for --seconds and prints the calls made and the mean ns per call; meanwhile
gputop's EbpfSource polls once a second and its histograms are merged.  For each config:
the traced thread's mean cost per call above the bare call (what the probes cost it,
averaged over the run), and p50 / p99 with their bucket indexes (sampling must not move
a percentile by more than one bucket), and the calls per traced second against the
driver's own rate.  Root, bcc and kernel headers needed (scripts/setup-ebpf.sh).

Usage: sudo python bench/ebpf_duty.py [--seconds 60] [--duty 0.1] [--spin-ns 5000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from ebpf_overhead import build, wait_released  # noqa: E402

from gputop.buckets import bucket_index  # noqa: E402
from gputop.model import latency  # noqa: E402
from gputop.sources.base import SourceError  # noqa: E402
from gputop.sources.ebpf import EbpfSource, unavailable_reason  # noqa: E402

DRIVER_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef int (*launch_t)(void*, void*, void*, void*, void*, void*);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    void *lib = dlopen(argv[1], RTLD_NOW);
    launch_t launch = (launch_t)dlsym(lib, "cudaLaunchKernel");
    *(long *)dlsym(lib, "cudaLaunchKernel_ns") = atol(argv[3]);
    double seconds = atof(argv[2]);
    getchar();  /* wait until the probes are attached */
    long n = 0;
    double start = now(), t = start;
    while (t - start < seconds) {
        for (int i = 0; i < 100; i++) launch(0, 0, 0, 0, 0, 0);
        n += 100;
        t = now();
    }
    printf("%ld %.1f\n", n, (t - start) * 1e9 / n);
    return 0;
}
"""


def run(driver: Path, lib: Path, seconds: float, spin_ns: int, mode: str | None,
        duty: float) -> dict:
    proc = subprocess.Popen([str(driver), str(lib), str(seconds), str(spin_ns)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    source = None
    hists, traced_s = [], 0.0
    try:
        if mode is not None:
            source = EbpfSource(mode, duty=duty)
            source.open()
            deadline = time.monotonic() + 10
            while True:  # until the probes are on the driver's library
                try:
                    source.poll(0.0)
                    break
                except SourceError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        proc.stdin.write("\n")
        proc.stdin.flush()
        started = time.monotonic()
        while proc.poll() is None and source is not None:
            time.sleep(1.0)
            reading = source.poll(time.monotonic())
            hists += [h for h in reading.launch if h.pid == proc.pid and h.api == "cudaLaunchKernel"]
            traced_s += reading.launch_armed_s if reading.launch_armed_s is not None else 1.0
        out, _ = proc.communicate(timeout=seconds + 60)
        elapsed = time.monotonic() - started
    finally:
        if source is not None:
            source.close()
        wait_released()
    calls, ns_per_call = out.split()
    result = {"calls": int(calls), "ns": float(ns_per_call), "rate": int(calls) / elapsed}
    if hists:
        merged = latency.merge(h.buckets for h in hists)
        result.update(p50=latency.percentile_ns(merged, 0.5), p99=latency.percentile_ns(merged, 0.99),
                      traced_calls=sum(h.count for h in hists), traced_s=traced_s)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--duty", type=float, default=0.1)
    parser.add_argument("--spin-ns", type=int, default=5000)
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        print(f"bench/ebpf_duty.py: {reason}", file=sys.stderr)
        return 2
    configs = [("bare call", None, 1.0), ("full", "full", 1.0),
               (f"full, duty {args.duty:g}", "full", args.duty), ("light", "light", 1.0),
               (f"light, duty {args.duty:g}", "light", args.duty)]
    with tempfile.TemporaryDirectory() as tmp:
        lib, _ = build(Path(tmp))
        (Path(tmp) / "duty.c").write_text(DRIVER_C)
        driver = Path(tmp) / "duty"
        subprocess.run(["gcc", "-O2", "-o", str(driver), str(Path(tmp) / "duty.c"), "-ldl"],
                       check=True)
        results = {name: run(driver, lib, args.seconds, args.spin_ns, mode, duty)
                   for name, mode, duty in configs}
    bare = results["bare call"]["ns"]
    print(f"\nstand-in cudaLaunchKernel busy-waiting {args.spin_ns} ns, {args.seconds:g} s per "
          f"config, duty {args.duty:g} (probes attached 1 s in {1 / args.duty:g})")
    print(f"{'':<18}{'ns/call':>9}{'probe ns':>9}{'vs always':>10}{'p50 us':>8}{'(bucket)':>9}"
          f"{'p99 us':>8}{'(bucket)':>9}{'calls/traced s':>16}{'driver calls/s':>16}")
    for name, r in results.items():
        cost = r["ns"] - bare
        always = results.get(name.split(",")[0], {}).get("ns")
        ratio = "" if always is None or name == "bare call" else f"{cost / (always - bare):.2f}"
        line = f"{name:<18}{r['ns']:>9.0f}{cost:>9.0f}{ratio:>10}"
        if "p50" in r:
            line += (f"{r['p50'] / 1000:>8.2f}{bucket_index(int(r['p50'])):>9}"
                     f"{r['p99'] / 1000:>8.2f}{bucket_index(int(r['p99'])):>9}"
                     f"{r['traced_calls'] / r['traced_s']:>16,.0f}{r['rate']:>16,.0f}")
        print(line)
    for mode in ("full", "light"):
        a, b = results[mode], results[f"{mode}, duty {args.duty:g}"]
        if "p50" in a and "p50" in b:
            p50_apart = abs(bucket_index(int(a['p50'])) - bucket_index(int(b['p50'])))
            print(f"{mode}: p50 buckets differ by {p50_apart}, "
                  f"p99 by {abs(bucket_index(int(a['p99'])) - bucket_index(int(b['p99'])))} (target <= 1); "
                  f"probe cost sampled / always {(b['ns'] - bare) / (a['ns'] - bare):.2f} "
                  f"(target about {args.duty:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
