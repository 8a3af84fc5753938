#!/usr/bin/env python3
"""What gputop's uprobes add to each CUDA call, next to the floor, in the same run.

A C driver calls the stand-in cudaLaunchKernel (tests/stand_in, built here with gcc,
busy-wait 0) N times and prints ns per call.  Measured, in order: bare; an empty
entry+return probe pair (the floor: the trap itself); an empty entry-only probe;
gputop --ebpf full; gputop --ebpf light; bcc's funclatency on the same symbol.
Root, bcc and kernel headers needed (scripts/setup-ebpf.sh).

Usage: sudo python bench/ebpf_overhead.py [--calls 200000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from gputop.sources.ebpf import EbpfSource, import_bcc, unavailable_reason  # noqa: E402

DRIVER_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef int (*launch_t)(void*, void*, void*, void*, void*, void*);
int main(int argc, char **argv) {
    void *lib = dlopen(argv[1], RTLD_NOW);
    launch_t launch = (launch_t)dlsym(lib, "cudaLaunchKernel");
    long n = atol(argv[2]);
    getchar();  /* wait until the probes are attached */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) launch(0, 0, 0, 0, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
    return 0;
}
"""


def build(tmp: Path) -> tuple[Path, Path]:
    lib = tmp / "libcudart.so.12"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-DRUNTIME", "-o", str(lib),
                    str(ROOT / "tests" / "stand_in" / "cuda_stand_in.c")], check=True)
    (tmp / "driver.c").write_text(DRIVER_C)
    driver = tmp / "driver"
    subprocess.run(["gcc", "-O2", "-o", str(driver), str(tmp / "driver.c"), "-ldl"], check=True)
    return lib, driver


def run_driver(driver: Path, lib: Path, calls: int, attach) -> float:
    """Start the driver, attach (a callable given its pid, returning a cleanup), time calls."""
    proc = subprocess.Popen([str(driver), str(lib), str(calls)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    time.sleep(0.2)
    cleanup = attach(proc.pid)
    try:
        out, _ = proc.communicate("\n", timeout=300)
    finally:
        if cleanup:
            cleanup()
        wait_released()
    return float(out.strip())


def wait_released(timeout_s: float = 120.0) -> None:
    """Wait until no probe of an earlier config is left: gputop releases its probes in a
    background helper (~0.1 s each), and a disabled uprobe still traps, so the next config
    would be measured with the last one's traps still in the traced library."""
    import json
    bpftool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        out = subprocess.run([bpftool, "-j", "prog", "show"], capture_output=True, text=True).stdout
        names = [p.get("name", "") for p in json.loads(out or "[]")]
        if not any(n.startswith(("gputop_", "bench_nop")) for n in names):
            return
        time.sleep(0.2)


def empty_probes(lib: Path, with_return: bool):
    def attach(_pid):
        bcc = import_bcc()
        b = bcc.BPF(text="#include <uapi/linux/ptrace.h>\nint bench_nop(struct pt_regs *ctx) { return 0; }")
        b.attach_uprobe(name=str(lib).encode(), sym=b"cudaLaunchKernel", fn_name=b"bench_nop")
        if with_return:
            b.attach_uretprobe(name=str(lib).encode(), sym=b"cudaLaunchKernel", fn_name=b"bench_nop")
        return b.cleanup
    return attach


def gputop_probes(mode: str):
    def attach(_pid):
        source = EbpfSource(mode)
        source.open()
        source.rescan()
        return source.close
    return attach


def funclatency(lib: Path):
    tool = shutil.which("funclatency-bpfcc") or "/usr/sbin/funclatency-bpfcc"

    def attach(_pid):
        proc = subprocess.Popen([tool, f"{lib}:cudaLaunchKernel"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        line = proc.stdout.readline()  # "Tracing 1 functions for ..." once attached
        assert "Tracing" in line, line

        def stop():
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=30)
        return stop
    return attach


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        print(f"bench/ebpf_overhead.py: {reason}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        lib, driver = build(Path(tmp))
        configs = [("bare call", lambda pid: None),
                   ("empty entry+return probe (floor)", empty_probes(lib, True)),
                   ("empty entry-only probe", empty_probes(lib, False)),
                   ("gputop --ebpf full", gputop_probes("full")),
                   ("gputop --ebpf light", gputop_probes("light")),
                   ("bcc funclatency", funclatency(lib))]
        results = {name: [] for name, _ in configs}
        for _ in range(args.repeat):  # interleaved, so drift hits every config alike
            for name, attach in configs:
                results[name].append(run_driver(driver, lib, args.calls, attach))
    median = {name: statistics.median(v) for name, v in results.items()}
    floor, entry = median["empty entry+return probe (floor)"], median["empty entry-only probe"]
    print(f"\n{args.calls:,} calls of a stand-in cudaLaunchKernel, median of {args.repeat} runs")
    print(f"{'':<34}{'ns/call':>10}{'vs floor':>10}")
    for name, value in median.items():
        print(f"{name:<34}{value:>10.0f}{value / floor:>10.2f}")
    print(f"\nfull / empty pair {median['gputop --ebpf full'] / floor:.3f} (target <= 1.05); "
          f"light / empty entry-only {median['gputop --ebpf light'] / entry:.3f} (<= 1.05); "
          f"full / funclatency {median['gputop --ebpf full'] / median['bcc funclatency']:.3f} (<= 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
