"""What gputop's launch uprobes would count per tick: host-side call durations.

A uprobe pair measures how long the *host* spends inside a CUDA API call (FACTS.md 4, 12):
~3-5 us for a kernel launch including the probes' ~1.5 us, ~8-15 us for launching a
CUDA graph, and for cudaStreamSynchronize the GPU work the host waits for (CUDA's default
sync spins), which is milliseconds per engine step.  When the scheduler takes the CPU
from the launching thread *during* a call, that call's measured duration includes the
time off CPU: a long tail of milliseconds on an otherwise ~5 us call.  A preemption lands
inside a synchronize in proportion to the time spent there, inside a launch rarely.

Calls per engine step (vLLM V1 with CUDA graphs: a decode-only step replays one full
graph; a mixed prefill step replays piecewise graphs between eager attention kernels;
SGLang prefill runs eagerly, cuBLAS GEMMs launching through the driver):
"""

from __future__ import annotations

import math
import random

from gputop.buckets import bucket_bounds_ns, bucket_index
from gputop.schema import LaunchHist

# api -> (median ns, sigma of log)
BASE = {"cudaLaunchKernel": (3900.0, 0.33), "cuLaunchKernel": (3100.0, 0.30),
        "cudaGraphLaunch": (10500.0, 0.28)}


def calls_per_step(kind: str, layers: int, mixed: bool) -> dict[str, int]:
    if kind == "vllm":
        if mixed:
            return {"cudaGraphLaunch": layers + 1, "cudaLaunchKernel": 2 * layers + 14,
                    "cuLaunchKernel": layers + 3}
        return {"cudaGraphLaunch": 1, "cudaLaunchKernel": 14, "cuLaunchKernel": 3}
    if mixed:
        return {"cudaLaunchKernel": 6 * layers + 10, "cuLaunchKernel": 4 * layers + 2}
    return {"cudaGraphLaunch": 1, "cudaLaunchKernel": 10, "cuLaunchKernel": 2}


def _table(median: float, sigma: float) -> list[tuple[int, float]]:
    """Bucket probabilities of a log-normal call duration."""
    lo_i, hi_i = bucket_index(int(median / 40)), bucket_index(int(median * 40))
    out = []
    mu = math.log(median)
    for i in range(lo_i, hi_i + 1):
        a, b = bucket_bounds_ns(i)
        ca = 0.5 * (1 + math.erf((math.log(max(a, 1)) - mu) / (sigma * math.sqrt(2))))
        cb = 0.5 * (1 + math.erf((math.log(b) - mu) / (sigma * math.sqrt(2))))
        if cb - ca > 1e-6:
            out.append((i, cb - ca))
    return out


TABLES = {api: _table(*v) for api, v in BASE.items()}


def _counts(n: int, api: str, rng: random.Random, scale: float = 1.0) -> dict[int, int]:
    out = {}
    table = TABLES[api] if abs(scale - 1.0) < 0.02 else _table(BASE[api][0] * scale, BASE[api][1] * 1.15)
    for i, p in table:
        m = n * p
        c = int(round(m + rng.gauss(0.0, math.sqrt(m)))) if m > 0.5 else (1 if rng.random() < m else 0)
        if c > 0:
            out[i] = c
    # a rare natural tail: page faults, allocator locks (tens of us)
    tail = sum(1 for _ in range(int(n * 0.002 + rng.random())))
    for _ in range(tail):
        ns = int(rng.uniform(15_000, 90_000))
        j = bucket_index(ns)
        out[j] = out.get(j, 0) + 1
    return out


def hists(kind: str, layers: int, pids: tuple[int, ...], acc: dict, rng: random.Random,
          share: float = 1.0) -> tuple[list[LaunchHist], int]:
    """LaunchHists of one engine for one tick from its accumulated steps; returns them and
    the number of involuntary switches of its launching threads.  With only ``share`` of a
    CPU the co-runner also thrashes the launching thread's caches (and SMT sibling), so
    every call runs slower, on top of the rare calls that span a lost time slice."""
    scale = 1.0 + 0.9 * (1.0 - share)
    out = []
    decode, mixed = acc["decode_steps"], acc["mixed_steps"]
    sync = acc["sync_s"]
    longs = acc["long"]
    switches = len(longs)
    per_pid_long: dict[int, list[float]] = {p: [] for p in pids}
    for d in longs:
        per_pid_long[pids[rng.randrange(len(pids))]].append(d)
    for pid in pids:
        calls: dict[str, int] = {}
        for mixed_flag, steps in ((False, decode), (True, mixed)):
            if steps:
                for api, c in calls_per_step(kind, layers, mixed_flag).items():
                    calls[api] = calls.get(api, 0) + c * steps
        extra: dict[str, list[int]] = {}
        sync_ns = [max(3000, int(s * 1e9 * (1.0 + rng.gauss(0, 0.03)))) for s in sync]
        total_sync = sum(sync) or 1e-9
        step_s = max(1e-6, total_sync / max(1, len(sync)))
        for d in per_pid_long[pid]:
            # where the slice was taken: in the (yield-)spinning synchronize, inside a launch
            # call (launch-heavy Python: piecewise graphs, eager attention), or elsewhere
            p_sync = min(0.55, step_s / (step_s + 0.006))
            u = rng.random()
            if sync_ns and u < p_sync:
                k = rng.randrange(len(sync_ns))
                sync_ns[k] += int(d * 1e9)
            elif u < p_sync + 0.3 * (1 - p_sync):
                api = rng.choices(("cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch"),
                                  (0.6, 0.25, 0.15))[0]
                if api in calls:
                    extra.setdefault(api, []).append(int(BASE[api][0] + d * 1e9))
        for api, n in sorted(calls.items()):
            n_long = len(extra.get(api, ()))
            buckets = _counts(max(0, n - n_long), api, rng, scale)
            for ns in extra.get(api, ()):
                j = bucket_index(ns)
                buckets[j] = buckets.get(j, 0) + 1
            count = sum(buckets.values())
            if count == 0:
                continue
            total = 0
            top = 0
            for j, c in buckets.items():
                a, b = bucket_bounds_ns(j)
                total += c * (a + b) // 2
                top = max(top, j)
            a, b = bucket_bounds_ns(top)
            mx = max(extra.get(api, [0]) + [int(rng.uniform(a, b))])
            out.append(LaunchHist(api, pid, count, int(total), int(mx), buckets))
        if sync_ns:
            buckets = {}
            for ns in sync_ns:
                j = bucket_index(ns)
                buckets[j] = buckets.get(j, 0) + 1
            out.append(LaunchHist("cudaStreamSynchronize", pid, len(sync_ns), sum(sync_ns),
                                  max(sync_ns), buckets))
    return out, switches
