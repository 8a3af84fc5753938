"""Deterministic simulated GPUs for ``--demo`` and the tests.

Each scenario models one way GPU-Util misleads and has exactly one true cause
(``Scenario.cause``) so the diagnosis can be tested.  Frames depend only on
(scenario, seed, tick number), never on the wall clock: the same seed gives
the same frames on every machine.  Scenarios that need a throughput baseline
start with a short healthy lead-in (``LEAD_IN_S``) and show their phenomenon
well within 10 s, then keep showing it.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, EngineSample, GpuSample, HostSample, LaunchHist,
                           ProcSample)
from gputop.sources.base import Reading

LEAD_IN_S = 4.0
START_WALL_S = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC: a fixed clock for stable output
CYCLE_S = 45.0
CYCLE_LEAD_S = 6.0  # the extra healthy lead-in of each scenario after the cycle's first
GiB = 2**30
MiB = 2**20
CARD_BYTES = 81559 * MiB  # H100 80GB HBM3 as NVML reports it
CARD_NAME = "NVIDIA H100 80GB HBM3 (simulated)"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
WEIGHTS_BYTES = 16_060_522_496  # 8.03e9 parameters x 2 bytes (bf16)
KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # 128 KiB: Llama 3 8B, bf16
LLAMA3_8B_KV = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "hidden_size": 4096, "torch_dtype": "bfloat16"}
BLOCK_SIZE = 16
GPU_MEMORY_UTILIZATION = 0.9
ENGINE_OTHER_BYTES = int(2.6 * GiB)  # activations, CUDA graphs, allocator slack
NOTEBOOK_BYTES = int(1.2 * GiB)
DRIVER_BYTES = 512 * MiB
_NORMAL = statistics.NormalDist()
# vLLM's default histogram bounds (seconds; the n parameter)
ITL_BOUNDS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
              10.0, 20.0, 40.0, 80.0)
TTFT_BOUNDS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
               7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
N_BOUNDS = (1.0, 2.0, 5.0, 10.0, 20.0)


@dataclass
class Launch:
    """Host-side call-duration distribution of one API: lognormal body plus a uniform tail."""

    calls_per_s: float
    p50_us: float
    sigma: float = 0.25
    tail_frac: float = 0.0
    tail_us: tuple[float, float] = (0.0, 0.0)


@dataclass
class Tick:
    """What a scenario says the hardware and the workload do at one moment."""

    util: list[float]
    sm: list[float]
    occupancy: list[float]
    dram: list[float]
    tensor: list[float]
    tokens_per_s: float
    prompt_tokens_per_s: float = 0.0
    running: float | None = None
    waiting: float | None = None
    kv_usage: float | None = None
    host_cpu_pct: float = 30.0
    launch: dict[str, Launch] = field(default_factory=dict)
    power_w: list[float] | None = None
    clock_mhz: list[float] | None = None
    # the engine's own latencies (vLLM histograms): median and p99 seconds
    itl_s: tuple[float, float] = (0.012, 0.025)
    ttft_s: tuple[float, float] = (0.09, 0.35)
    large_n_request: bool = False  # an n=8 request finished this tick
    preemptions_per_s: float = 0.0
    cpu_pressure_pct: float = 3.0  # /proc/pressure/cpu some avg10
    run_queue: int = 3
    involuntary_per_s: float = 250.0  # of the engine's process tree
    # the whole host's context switches (None: in step with host CPU, 1,100 per percent)
    host_switches_per_s: float | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    cause: str | None
    kind: str  # "vllm" (serving) or "trainer"
    default_gpus: int = 1
    # what the screen shows once the lead-in is over, "short name: what happens" (the status
    # bar says it, the short name alone when narrow)
    phase: str = ""


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("idle-reserved", "weights + KV pool pre-reserved: VRAM nearly full at 0% GPU-Util",
             None, "vllm", phase="idle: VRAM reserved by the KV pool, no kernel running"),
    Scenario("serving", "a healthy vLLM server: util, SM activity and tokens/s move together",
             None, "vllm", phase="healthy serving"),
    Scenario("logprobs-storm", "one n=8, logprobs=20 request: GPU-Util 97%, SM active ~11%, "
             "tokens/s collapses, others wait 9-11 s", "oversized_request", "vllm",
             phase="the storm: one n=8, logprobs=20 request stalls the batch"),
    Scenario("prefill-interference", "long-context prefills starve the decodes",
             "prefill_interference", "vllm", phase="prefill interference: long prefills starve the decodes"),
    Scenario("launch-jitter", "CPU contention: launch p50 ~17 us, p99 ~13 ms",
             "host_launch_jitter", "vllm", phase="CPU contention: the launch thread is preempted"),
    Scenario("dataloader-stall", "a training step waits on the host input pipeline",
             "input_stall", "trainer", phase="data-loader stall: each step waits for its input"),
    Scenario("allreduce-straggler", "4 GPUs: one lags, three spin ~100% busy inside the collective",
             "collective_straggler", "trainer", default_gpus=4,
             phase="straggler: GPU 2 lags, the others wait inside the all-reduce"),
    Scenario("membw-bound", "long contexts: SM active high, DRAM bandwidth saturated",
             "memory_bandwidth", "vllm", phase="memory bound: long contexts saturate DRAM bandwidth"),
)}
# ``--demo`` alone: the storm first, so the first screen already makes the point, then
# the other episodes, the healthy and the idle server last
CYCLE_ORDER = ("logprobs-storm", "launch-jitter", "allreduce-straggler", "prefill-interference",
               "dataloader-stall", "membw-bound", "serving", "idle-reserved")


def _noise(rng: random.Random, value: float, spread: float, lo: float = 0.0,
           hi: float | None = None) -> float:
    out = value + rng.uniform(-spread, spread)
    out = max(lo, out)
    return min(hi, out) if hi is not None else out


def _healthy_serving(rng: random.Random, n: int) -> Tick:
    return Tick(
        util=[_noise(rng, 79, 6, 0, 100) for _ in range(n)],
        sm=[_noise(rng, 61, 5, 0, 100) for _ in range(n)],
        occupancy=[_noise(rng, 34, 3, 0, 100) for _ in range(n)],
        dram=[_noise(rng, 55, 5, 0, 100) for _ in range(n)],
        tensor=[_noise(rng, 41, 4, 0, 100) for _ in range(n)],
        tokens_per_s=_noise(rng, 1900, 120),
        prompt_tokens_per_s=_noise(rng, 2400, 350),
        running=round(_noise(rng, 24, 3)),
        waiting=float(rng.choice((0, 0, 1))),
        kv_usage=_noise(rng, 0.36, 0.04, 0, 1),
        host_cpu_pct=_noise(rng, 34, 5, 0, 100),
        launch={
            "cudaLaunchKernel": Launch(2500, 5.0),
            "cuLaunchKernel": Launch(900, 6.5),
            "cudaGraphLaunch": Launch(55, 9.0),
            "cudaStreamSynchronize": Launch(55, 14000.0, sigma=0.15),
        },
    )


def _healthy_training(rng: random.Random, n: int) -> Tick:
    return Tick(
        util=[_noise(rng, 98, 1.5, 0, 100) for _ in range(n)],
        sm=[_noise(rng, 82, 3, 0, 100) for _ in range(n)],
        occupancy=[_noise(rng, 45, 3, 0, 100) for _ in range(n)],
        dram=[_noise(rng, 62, 4, 0, 100) for _ in range(n)],
        tensor=[_noise(rng, 66, 4, 0, 100) for _ in range(n)],
        tokens_per_s=_noise(rng, 52000 * n, 1500 * n),
        host_cpu_pct=_noise(rng, 45, 5, 0, 100),
        launch={
            "cudaLaunchKernel": Launch(6000, 4.5),
            "cuLaunchKernel": Launch(3000, 6.0),
            "cudaStreamSynchronize": Launch(2, 300000.0, sigma=0.1),
        },
    )


def _scenario_tick(name: str, t: float, rng: random.Random, n: int) -> Tick:
    """The scenario's state ``t`` seconds after it started."""
    kind = SCENARIOS[name].kind
    if name == "idle-reserved":
        zeros = [0.0] * n
        return Tick(util=zeros, sm=zeros, occupancy=zeros, dram=[_noise(rng, 0.5, 0.5) for _ in range(n)],
                    tensor=zeros, tokens_per_s=0.0, prompt_tokens_per_s=0.0, running=0.0,
                    waiting=0.0, kv_usage=0.0, host_cpu_pct=_noise(rng, 3, 1),
                    launch={}, power_w=[_noise(rng, 72, 2) for _ in range(n)])
    healthy = _healthy_serving(rng, n) if kind == "vllm" else _healthy_training(rng, n)
    if name == "serving" or t < LEAD_IN_S:
        return healthy
    since = t - LEAD_IN_S
    tick = healthy
    if name == "logprobs-storm":
        tick.util = [_noise(rng, 97, 1.2, 0, 100) for _ in range(n)]
        tick.sm = [_noise(rng, 11, 1.5) for _ in range(n)]
        tick.occupancy = [_noise(rng, 5, 1) for _ in range(n)]
        tick.dram = [_noise(rng, 21, 3) for _ in range(n)]
        tick.tensor = [_noise(rng, 3, 1) for _ in range(n)]
        tick.tokens_per_s = _noise(rng, 41, 8)
        tick.prompt_tokens_per_s = _noise(rng, 30, 20)
        tick.running = float(rng.choice((7, 8, 8)))
        tick.waiting = float(min(34, 3 + int(since * 1.6)))
        tick.itl_s = (_noise(rng, 0.35, 0.05), _noise(rng, 1.6, 0.2))  # the batch stalls
        tick.ttft_s = (_noise(rng, 9.5, 0.5), _noise(rng, 11.0, 0.4))
        tick.large_n_request = int(round(since)) % 10 == 9  # each storm request ends ~10 s in
        tick.launch["cudaGraphLaunch"] = Launch(4, 9.0)
        tick.launch["cudaStreamSynchronize"] = Launch(0.1, 9_800_000.0, sigma=0.08)
    elif name == "prefill-interference":
        tick.util = [_noise(rng, 98, 1, 0, 100) for _ in range(n)]
        tick.sm = [_noise(rng, 73, 3) for _ in range(n)]
        tick.tensor = [_noise(rng, 57, 4) for _ in range(n)]
        tick.tokens_per_s = _noise(rng, 520, 60)
        tick.prompt_tokens_per_s = _noise(rng, 14500, 1200)
        tick.itl_s = (_noise(rng, 0.05, 0.005), _noise(rng, 0.4, 0.05))
        tick.running = round(_noise(rng, 22, 2))
    elif name == "launch-jitter":
        tick.util = [_noise(rng, 93, 1.5, 0, 100) for _ in range(n)]
        tick.sm = [_noise(rng, 56, 4) for _ in range(n)]
        tick.tokens_per_s = _noise(rng, 700, 70)
        tick.host_cpu_pct = _noise(rng, 99, 1, 0, 100)
        tick.cpu_pressure_pct = _noise(rng, 58, 6)
        tick.run_queue = int(_noise(rng, 14, 2))
        tick.involuntary_per_s = _noise(rng, 4200, 400)
        tick.host_switches_per_s = 1650.0 * tick.host_cpu_pct  # (no draw: the rest stays put)
        tick.itl_s = (_noise(rng, 0.03, 0.004), _noise(rng, 0.09, 0.01))
        jitter = dict(tail_frac=0.02, tail_us=(9000.0, 17000.0))
        tick.launch["cudaLaunchKernel"] = Launch(1100, 17.0, sigma=0.3, **jitter)
        tick.launch["cuLaunchKernel"] = Launch(420, 19.0, sigma=0.3, **jitter)
        tick.launch["cudaGraphLaunch"] = Launch(22, 21.0, sigma=0.3, **jitter)
    elif name == "dataloader-stall":
        phase = int(round(since)) % 3  # one busy step, then two ticks waiting for data
        busy = (_noise(rng, 99, 1, 0, 100), _noise(rng, 14, 4), _noise(rng, 33, 5))[phase]
        tick.util = [busy for _ in range(n)]
        tick.sm = [busy * 0.82 for _ in range(n)]
        tick.tensor = [busy * 0.66 for _ in range(n)]
        tick.tokens_per_s = _noise(rng, 19000 * n, 800 * n)
        tick.host_cpu_pct = _noise(rng, 99, 1, 0, 100)
        tick.launch["cudaLaunchKernel"] = Launch(2000, 4.5)
    elif name == "allreduce-straggler":
        slow = 2 if n > 2 else n - 1
        tick.util = [_noise(rng, 99.5, 0.5, 0, 100) for _ in range(n)]
        tick.sm = [_noise(rng, 90, 2) if g == slow else _noise(rng, 14, 2) for g in range(n)]
        tick.tensor = [_noise(rng, 70, 3) if g == slow else _noise(rng, 4, 1) for g in range(n)]
        tick.tokens_per_s = _noise(rng, 20000 * n, 900 * n)
        tick.launch["cudaStreamSynchronize"] = Launch(0.8, 1_100_000.0, sigma=0.1)
    elif name == "membw-bound":
        tick.util = [_noise(rng, 98, 1, 0, 100) for _ in range(n)]
        tick.sm = [_noise(rng, 86, 3) for _ in range(n)]
        tick.dram = [_noise(rng, 96, 1.5, 0, 100) for _ in range(n)]
        tick.tensor = [_noise(rng, 19, 3) for _ in range(n)]
        tick.tokens_per_s = _noise(rng, 820, 60)
        tick.prompt_tokens_per_s = _noise(rng, 900, 200)
        # the same batch with long contexts: every step reads each sequence's KV
        tick.kv_usage = _noise(rng, 0.93, 0.02, 0, 1)
        tick.preemptions_per_s = _noise(rng, 0.1, 0.05)
        tick.itl_s = (_noise(rng, 0.045, 0.004), _noise(rng, 0.07, 0.006))
    return tick


def launch_hist(api: str, pid: int, launch: Launch, seconds: float, rng: random.Random,
                samples: int = 100) -> LaunchHist:
    """Per-tick histogram from evenly spaced quantiles of the distribution (deterministic)."""
    calls = int(round(launch.calls_per_s * seconds))
    if calls <= 0:
        return LaunchHist(api=api, pid=pid)
    k = min(samples, calls)
    buckets: dict[int, int] = {}
    total_ns = max_ns = 0
    base, extra = divmod(calls, k)
    jitter = math.exp(rng.uniform(-0.05, 0.05))
    for i in range(k):
        q = (i + 0.5) / k
        if q > 1 - launch.tail_frac:
            lo, hi = launch.tail_us
            frac = (q - (1 - launch.tail_frac)) / launch.tail_frac
            us = lo + (hi - lo) * frac
        else:
            body_q = q / (1 - launch.tail_frac) if launch.tail_frac else q
            us = launch.p50_us * math.exp(launch.sigma * _NORMAL.inv_cdf(body_q))
        ns = int(us * 1000 * jitter)
        count = base + (1 if i < extra else 0)
        index = bucket_index(ns)
        buckets[index] = buckets.get(index, 0) + count
        total_ns += ns * count
        max_ns = max(max_ns, ns)
    return LaunchHist(api=api, pid=pid, count=calls, sum_ns=total_ns, max_ns=max_ns, buckets=buckets)


class SimSource:
    """Frames for one scenario (or the cycle of all of them with ``scenario=None``)."""

    name = "sim"

    def __init__(self, scenario: str | None = "logprobs-storm", gpus: int | None = None,
                 seed: int = 0, step_s: float = 1.0, started_wall_s: float = START_WALL_S):
        if scenario is not None and scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; choose one of: "
                             + ", ".join(SCENARIOS))
        if gpus is not None and not 1 <= gpus <= 16:
            raise ValueError("--gpus must be between 1 and 16")
        self.scenario = scenario
        self.gpus = gpus or (4 if scenario is None else SCENARIOS[scenario].default_gpus)
        self.seed = seed
        self.step_s = step_s
        # the wall time of the first frame: processes started a while before it, so their
        # elapsed time reads as on a real machine (the demo live: now; tests: a fixed date)
        self.started_wall_s = started_wall_s
        self._seq = 0
        self._run = 0  # the cycle's scenarios are servers and jobs of their own (_start_run)
        self._tokens = 0.0
        self._prompt = 0.0
        self._finished = 0.0
        self._preempted = 0.0
        self._flops = 0.0
        self._cpu_s = 0.0
        self._involuntary = 0.0
        self._host_switches = 0.0
        self._hists: dict[str, list[float]] = {}  # name -> [cumulative per bound..., count, sum]
        self._requests_n = [0.0, 0.0]  # (n=1 requests, all requests)
        self._n_sum = 0.0

    @property
    def label(self) -> str:
        return f"demo:{self.scenario or 'cycle'}"

    def scenario_at(self, t: float) -> tuple[str, float]:
        """(scenario name, seconds since it started) at simulated time ``t``."""
        if self.scenario is not None:
            return self.scenario, t
        run = int(t // CYCLE_S)
        # a later scenario is a new server: a longer healthy lead-in, so its baseline has
        # the clean samples it needs (negative: before the scenario's own lead-in)
        return CYCLE_ORDER[run % len(CYCLE_ORDER)], t % CYCLE_S - (CYCLE_LEAD_S if run else 0.0)

    def phase_at(self, t: float) -> str:
        """ "scenario · phase · timing": where the demo is at simulated time ``t`` (the
        status bar shows it, so a demo says what it is showing)."""
        name, since = self.scenario_at(t)
        scenario = SCENARIOS[name]
        leads_in = name not in ("idle-reserved", "serving")
        if leads_in and since < LEAD_IN_S:
            phase = "healthy lead-in: it sets the baseline"
            timing = f"{scenario.phase.split(':')[0]} in {LEAD_IN_S - since:.0f}s"
        else:
            phase = scenario.phase
            timing = f"{since:.0f}s in"
        if self.scenario is None:
            position = CYCLE_ORDER.index(name)
            following = CYCLE_ORDER[(position + 1) % len(CYCLE_ORDER)]
            timing += f"; {position + 1}/{len(CYCLE_ORDER)}, next {following} in " \
                f"{CYCLE_S - t % CYCLE_S:.0f}s"
        return f"{name} · {phase} · {timing}"

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        seq = self._seq
        self._seq += 1
        t = seq * self.step_s
        name, since = self.scenario_at(t)
        if self.scenario is None and int(t // CYCLE_S) != self._run:
            self._start_run(int(t // CYCLE_S))
        rng = random.Random(f"{self.seed}:{name}:{seq}")
        n = self.gpus
        tick = _scenario_tick(name, since, rng, n)
        kind = SCENARIOS[name].kind
        if seq > 0:
            self._tokens += tick.tokens_per_s * self.step_s
            self._prompt += tick.prompt_tokens_per_s * self.step_s
            self._finished += (tick.tokens_per_s / 180.0) * self.step_s
            self._preempted += tick.preemptions_per_s * self.step_s
            # vLLM's estimate: ~2 FLOPs per parameter per token, per GPU
            self._flops += 2 * 8.03e9 * (tick.tokens_per_s + tick.prompt_tokens_per_s) \
                * self.step_s / self.gpus
            self._cpu_s += 0.9 * self.step_s
            self._involuntary += tick.involuntary_per_s * self.step_s
            switches = tick.host_switches_per_s
            self._host_switches += (1100.0 * tick.host_cpu_pct if switches is None
                                    else switches) * self.step_s
            if kind == "vllm":
                self._observe("itl", ITL_BOUNDS, tick.itl_s, tick.tokens_per_s * self.step_s)
                self._observe("ttft", TTFT_BOUNDS, tick.ttft_s,
                              max(1.0, tick.tokens_per_s / 180.0 * self.step_s))
                finished = tick.tokens_per_s / 180.0 * self.step_s
                self._requests_n[0] += finished
                self._requests_n[1] += finished + (1 if tick.large_n_request else 0)
                self._n_sum += finished + (8 if tick.large_n_request else 0)
        gpus, processes = self._hardware(tick, kind, rng)
        engine = self._engine(tick, kind, name)
        launch = tuple(hist for hist in (launch_hist(api, self._main_pid(kind), spec, self.step_s, rng)
                                         for api, spec in tick.launch.items()) if hist.count)
        return Reading(gpus=gpus, processes=processes, engine=engine, launch=launch,
                       detail=self.phase_at(t),
                       host=HostSample(cpu_pct=round(tick.host_cpu_pct, 1),
                                       cpu_pressure_some_pct=round(tick.cpu_pressure_pct, 2),
                                       run_queue=tick.run_queue, cpus=64,
                                       ctx_switches_total=int(self._host_switches)))

    def _observe(self, name: str, bounds: tuple[float, ...], p50_p99: tuple[float, float],
                 observations: float) -> None:
        """Add ``observations`` drawn (as evenly spaced quantiles of a lognormal with this
        median and p99) to a cumulative histogram, as an engine's Prometheus one grows."""
        state = self._hists.setdefault(name, [0.0] * (len(bounds) + 2))
        median, p99 = p50_p99
        sigma = max(1e-3, math.log(max(p99, median * 1.001) / median) / _NORMAL.inv_cdf(0.99))
        k = 50
        for i in range(k):
            value = median * math.exp(sigma * _NORMAL.inv_cdf((i + 0.5) / k))
            weight = observations / k
            for b, bound in enumerate(bounds):
                if value <= bound:
                    state[b] += weight
            state[-2] += weight
            state[-1] += weight * value

    def _histograms(self) -> tuple[EngineHistogram, ...]:
        out = []
        for name, bounds in (("itl", ITL_BOUNDS), ("ttft", TTFT_BOUNDS)):
            state = self._hists.get(name)
            if state is not None:
                out.append(EngineHistogram(name, bounds, tuple(round(v, 3) for v in state[:-2]),
                                           round(state[-2], 3), round(state[-1], 3)))
        ones, total = self._requests_n
        if total:
            out.append(EngineHistogram("params_n", N_BOUNDS,
                                       (round(ones, 3),) * 3 + (round(total, 3),) * 2,
                                       round(total, 3), round(self._n_sum, 3)))
        return tuple(out)

    def _start_run(self, run: int) -> None:
        """The cycle's next scenario is another server (or job) started as it begins: its
        own processes, port and counters from zero, as if the machine were another one, so
        no scenario's baseline or episode carries into the next."""
        self._run = run
        self._tokens = self._prompt = self._finished = self._preempted = self._flops = 0.0
        self._cpu_s = self._involuntary = 0.0
        self._hists = {}
        self._requests_n = [0.0, 0.0]
        self._n_sum = 0.0

    # ------------------------------------------------------------ parts

    def _pid(self, pid: int) -> int:
        """A process's pid in this run of the cycle (each run's own, never an earlier one's)."""
        return pid + 100 * (self._run % 100)

    def _started_s(self, before_first_s: float) -> float:
        """When a process of this run started: before the first frame for the first run,
        as its scenario began for the later ones."""
        if self._run == 0:
            return self.started_wall_s - before_first_s
        return self.started_wall_s + self._run * CYCLE_S

    def _port(self, first: str) -> str:
        """The endpoint's port: ``first`` for the first run, the next ones after it later."""
        return first if self._run == 0 else f":{int(first[1:]) + self._run % 100}"

    def _main_pid(self, kind: str) -> int:
        return self._pid(4121 if kind == "vllm" else 5001)

    def _pool_bytes_per_gpu(self) -> tuple[int, int]:
        """(num_gpu_blocks, pool bytes) per GPU as vLLM would size them at start-up."""
        n = self.gpus
        requested = int(CARD_BYTES * GPU_MEMORY_UTILIZATION)
        available = requested - WEIGHTS_BYTES // n - ENGINE_OTHER_BYTES
        per_token = KV_BYTES_PER_TOKEN // n
        blocks = available // (BLOCK_SIZE * per_token)
        return blocks, blocks * BLOCK_SIZE * per_token

    def _hardware(self, tick: Tick, kind: str, rng: random.Random):
        gpus, processes = [], []
        n = self.gpus
        for g in range(n):
            if kind == "vllm":
                _, pool = self._pool_bytes_per_gpu()
                engine_bytes = WEIGHTS_BYTES // n + pool + ENGINE_OTHER_BYTES
                processes.append(ProcSample(
                    pid=self._pid(4121 if n == 1 else 4130 + g), gpu_index=g, name="python3",
                    user="vllm",
                    cmdline=f"vllm serve {MODEL} --gpu-memory-utilization {GPU_MEMORY_UTILIZATION}"
                    + (f" --tensor-parallel-size {n}" if n > 1 else ""),
                    start_time_s=self._started_s(5400), mem_bytes=engine_bytes,
                    sm_util_pct=round(tick.sm[g], 1), cpu_s=round(self._cpu_s / n, 2),
                    rss_bytes=int(6.3 * GiB), ppid=self._pid(4100) if n > 1 else 1,
                    container="cri-containerd:9c1e5b7a2f30", pod="serving/vllm-llama-7d9f",
                    cgroup="/kubepods.slice/kubepods-pod1b2c.slice/cri-containerd-9c1e5b7a2f30.scope"))
            else:
                engine_bytes = int(71.5 * GiB)
                processes.append(ProcSample(
                    pid=self._pid(5001 + g), gpu_index=g, name="python3", user="train",
                    cmdline="torchrun --nproc-per-node %d train.py --model llama-8b" % n,
                    start_time_s=self._started_s(3 * 3600), mem_bytes=engine_bytes,
                    sm_util_pct=round(tick.sm[g], 1), cpu_s=round(self._cpu_s / n, 2),
                    rss_bytes=int(11.8 * GiB), ppid=self._pid(5000),
                    container="docker:4f0d8e21b6aa", cgroup="/system.slice/docker-4f0d8e21b6aa.scope"))
            used = engine_bytes + DRIVER_BYTES
            if g == 0:
                processes.append(ProcSample(pid=3377, gpu_index=0, name="python3", user="alice",
                                            cmdline="python3 notebook.py",
                                            start_time_s=self.started_wall_s - 2 * 86400,
                                            mem_bytes=NOTEBOOK_BYTES, sm_util_pct=0.0, ppid=3301,
                                            cpu_s=812.4, rss_bytes=int(2.1 * GiB),
                                            container="systemd:jupyter.service",
                                            cgroup="/system.slice/jupyter.service"))
                used += NOTEBOOK_BYTES
            util = tick.util[g]
            power = tick.power_w[g] if tick.power_w else 90 + 5.9 * util + rng.uniform(-8, 8)
            gpus.append(GpuSample(
                index=g, name=CARD_NAME, uuid=f"GPU-5137a1d0-0000-4000-8000-{g:012d}",
                util_gpu_pct=round(util, 1),
                util_gpu_samples_pct=tuple(round(max(0.0, min(100.0, util + rng.uniform(-3, 3))), 1)
                                           for _ in range(6)),
                util_mem_pct=round(tick.dram[g] * 0.9, 1),
                sm_active_pct=round(tick.sm[g], 1), sm_occupancy_pct=round(tick.occupancy[g], 1),
                dram_bw_pct=round(tick.dram[g], 1), tensor_pct=round(tick.tensor[g], 1),
                mem_total_bytes=CARD_BYTES, mem_used_bytes=used,
                power_w=round(power, 1), temp_c=round(34 + 0.35 * util + rng.uniform(-1, 1), 1),
                sm_clock_mhz=1980.0 if util > 1 else 345.0, mem_clock_mhz=2619.0,
                bus_id=f"00000000:{0x18 + 0x10 * g:02X}:00.0", pstate=0 if util > 1 else 8,
                power_limit_w=700.0, ecc_corrected=0, ecc_uncorrected=0, xid_count=0,
                mig_mode=False, **self._links(kind, tick, g),
                missing={"fan_pct": "not supported on this GPU"}))
        return tuple(gpus), tuple(processes)

    @staticmethod
    def _links(kind: str, tick: Tick, g: int) -> dict[str, float]:
        """PCIe and NVLink MiB/s as GPM would give them: a trainer's all-reduce runs over
        NVLink in step with its SMs; a server's traffic is small host<->device copies."""
        busy = tick.sm[g] / 100.0
        nvlink = 180_000 * busy if kind == "trainer" and len(tick.sm) > 1 else 0.0
        return {"pcie_rx_mib_per_s": round(300 + 900 * busy, 1),
                "pcie_tx_mib_per_s": round(120 + 200 * busy, 1),
                "nvlink_rx_mib_per_s": round(nvlink, 1), "nvlink_tx_mib_per_s": round(nvlink, 1)}

    def _engine(self, tick: Tick, kind: str, name: str) -> EngineSample:
        n = self.gpus
        tree = dict(cpu_s=round(self._cpu_s, 3), ctx_involuntary=int(self._involuntary))
        if kind == "trainer":
            return EngineSample(kind="trainer", url=f"sim://trainer{self._port(':9100')}",
                                model="llama-8b (training)",
                                generation_tokens_total=round(self._tokens),
                                gpu_indices=tuple(range(n)),
                                pids=tuple(self._pid(5001 + g) for g in range(n)), **tree)
        blocks, _ = self._pool_bytes_per_gpu()
        return EngineSample(
            kind="vllm", url=f"sim://vllm{self._port(':8000')}/metrics", model=MODEL,
            generation_tokens_total=round(self._tokens), prompt_tokens_total=round(self._prompt),
            requests_finished_total=round(self._finished),
            requests_running=tick.running, requests_waiting=tick.waiting,
            kv_usage_ratio=None if tick.kv_usage is None else round(tick.kv_usage, 4),
            num_gpu_blocks=blocks, block_size=BLOCK_SIZE,
            # raw model fields, as the engine source sends them: the model derives 128 KiB/n
            **({"kv_config": LLAMA3_8B_KV} if 8 % n == 0 else
               {"kv_bytes_per_token": KV_BYTES_PER_TOKEN // n}),
            weights_bytes=WEIGHTS_BYTES // n,
            weights_source="8.03e9 parameters x 2 B, simulated", tensor_parallel=n,
            gpu_indices=tuple(range(n)),
            pids=(self._pid(4121),) if n == 1 else tuple(self._pid(4130 + g) for g in range(n)),
            histograms=self._histograms(), preemptions_total=round(self._preempted, 3),
            waiting_by_reason={"capacity": tick.waiting or 0.0, "deferred": 0.0},
            flops_total=round(self._flops), **tree)
