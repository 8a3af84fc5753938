"""A process calling the stand-in CUDA libraries: python workload.py LIB API DURATION_NS COUNT
[DELAY_BEFORE_LOAD_S] [CPU]; prints "ready" once loaded and, when finished, "done P50_NS
P99_NS P97_NS" of the call durations it timed itself (so a busy machine's preemptions count on both
sides of a comparison), then waits for the next line: another round ("DURATION_NS COUNT", or
an empty line for the same again) until stdin closes."""
import ctypes
import os
import sys
import time

lib_path, api, duration_ns, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
delay = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
if len(sys.argv) > 6:
    os.sched_setaffinity(0, {int(sys.argv[6])})
time.sleep(delay)
lib = ctypes.CDLL(lib_path)
ctypes.c_long.in_dll(lib, api + "_ns").value = duration_ns
fn = getattr(lib, api)
print("ready", flush=True)
clock = time.perf_counter_ns
for line in sys.stdin:  # the test says go once probes are attached
    if line.split():
        duration_ns, count = (int(word) for word in line.split())
        ctypes.c_long.in_dll(lib, api + "_ns").value = duration_ns
    durations = []
    for _ in range(count):
        start = clock()
        fn(None, None, None, None, None, None)
        durations.append(clock() - start)
    durations.sort()
    # the rank gputop's percentile takes (gputop/model/latency.py): ceil(q * n), 1-based
    rank = lambda q: durations[int(max(1, -(-q * len(durations) // 1))) - 1]
    print("done", rank(0.5), rank(0.99), rank(0.97), flush=True)
