"""Frames for the diagnosis's unit tests, written tick by tick as the real sources fill them.

``Trace.tick(...)`` takes what the hardware and the engine do over one tick (per-GPU values
as a scalar or one per GPU) and appends the frame gputop's sampler would have built:
cumulative counters advance by rate x tick, histograms stay cumulative with vLLM's bucket
layouts, the engine's process tree and CPU time are what /proc would say.
"""

from __future__ import annotations

import math
from dataclasses import replace

from gputop import demo
from gputop.buckets import bucket_index
from gputop.model.detect import make_fold
from gputop.model.timeline import Timeline
from gputop.schema import (EngineHistogram, EngineSample, Frame, GpuSample, HostSample,
                           LaunchHist, ProcSample, SourceStatus)

ITL_BOUNDS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
              7.5, 10.0, 20.0, 40.0, 80.0)
TTFT_BOUNDS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
               7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
N_BOUNDS = (1.0, 2.0, 5.0, 10.0, 20.0)
# TGI's router: every *_duration histogram on 35 buckets from 0.15 ms, each 1.5x the last
TGI_DURATION_BOUNDS = tuple(round(0.0001 * 1.5 ** k, 9) for k in range(1, 36))
START_WALL_S = 1_790_000_000.0
GiB = 2**30


def _per_gpu(value, n):
    return list(value) if isinstance(value, (list, tuple)) else [value] * n


class _Hist:
    def __init__(self, name, bounds):
        self.name, self.bounds = name, bounds
        self.cum = [0.0] * len(bounds)
        self.count = self.sum = 0.0

    def observe(self, value: float, n: float) -> None:
        """``n`` observations spread as a narrow lognormal around ``value`` (x0.7 .. x1.4)."""
        if n <= 0:
            return
        for factor, share in ((0.7, 0.2), (0.9, 0.3), (1.0, 0.3), (1.4, 0.2)):
            x = value * factor
            for i, bound in enumerate(self.bounds):
                if x <= bound:
                    self.cum[i] += n * share
            self.count += n * share
            self.sum += n * share * x

    def sample(self) -> EngineHistogram:
        return EngineHistogram(self.name, self.bounds, tuple(round(c, 3) for c in self.cum),
                               round(self.count, 3), round(self.sum, 3))


class Trace:
    """A scripted machine: ``gpus`` cards, processes per GPU, optionally an engine."""

    def __init__(self, gpus: int = 1, engine: str | None = "vllm", tick_s: float = 1.0,
                 procs: list[tuple[int, int | None, int, str]] | None = None,
                 engine_pids: tuple[int, ...] | None = None, migs: dict[int, int] | None = None):
        self.n = gpus
        self.migs = migs or {}  # pid -> the MIG instance it runs on
        self.kind = engine
        self.tick_s = tick_s
        self.frames: list[Frame] = []
        # (pid, ppid, gpu, cmdline) per GPU process: one vLLM (TP ranks) by default
        self.procs = procs if procs is not None else [
            (4100 + g, 4000, g, f"python -m vllm.entrypoints.openai.api_server --tp {gpus}")
            for g in range(gpus)]
        self.engine_pids = engine_pids if engine_pids is not None else \
            (4000,) + tuple(p[0] for p in self.procs)
        self.totals = {"gen": 0.0, "prompt": 0.0, "cached": 0.0, "finished": 0.0,
                       "preempt": 0.0, "cpu": 0.0, "inv": 0.0, "work": 0.0,
                       "drafted": 0.0, "accepted": 0.0, "decode_s": 0.0, "prefill_s": 0.0,
                       "periods": 0.0, "throttled": 0.0, "thread": 0.0}
        self.proc_cpu: dict[int, float] = {}
        self._new_histograms()

    def _new_histograms(self) -> None:
        """The engine's histograms from zero (at start, and when its counters restart)."""
        self.hists = {"itl": _Hist("itl", ITL_BOUNDS), "ttft": _Hist("ttft", TTFT_BOUNDS),
                      "tpot": _Hist("tpot", TGI_DURATION_BOUNDS)}
        self.params_n = _Hist("params_n", N_BOUNDS)

    @property
    def t(self) -> float:
        return len(self.frames) * self.tick_s

    def tick(self, *, util=95.0, sm=70.0, dram=50.0, tensor=40.0, clock=1980.0, temp=60.0,
             power=600.0, throttle=(), samples=None, proc_sm=None, extra_procs=(),
             tokens=2000.0, prompt=2000.0, cached=0.0, running=30.0, waiting=0.0, kv=0.4,
             preempt=0.0, itl=0.02, ttft=0.15, n8=0, host_cpu=40.0, psi=3.0, run_queue=4,
             cpus=16, tree_cpu=100.0, involuntary=200.0, engine_up=True, work=None,
             proc_cpu=90.0, mem_util=None, drafted=None, accepted=None,
             launch_us=None, decode_s=None, prefill_s=None, itl_tail=None,
             finished=None, quota=None, throttled=0.0, admitted=None, fan=None,
             thread=None, nvlink=None, limit=700.0) -> Trace:
        n, dt = self.n, self.tick_s
        seq = len(self.frames)
        mono = seq * dt
        wall = START_WALL_S + mono
        utils, sms = _per_gpu(util, n), _per_gpu(sm, n)
        gpus = []
        for g in range(n):
            # a tuple is one GPU's samples (the same on every GPU), a list one tuple per GPU
            s = None if samples is None else samples if isinstance(samples, tuple) \
                else samples[g]
            gpus.append(GpuSample(
                index=g, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{g}",
                util_gpu_pct=float(utils[g]),
                util_gpu_samples_pct=tuple(s) if s is not None else (),
                sm_active_pct=None if sms[g] is None else float(sms[g]),
                dram_bw_pct=None if dram is None else float(_per_gpu(dram, n)[g]),
                util_mem_pct=None if mem_util is None else float(_per_gpu(mem_util, n)[g]),
                tensor_pct=None if tensor is None else float(_per_gpu(tensor, n)[g]),
                mem_total_bytes=80 * GiB,
                mem_used_bytes=70 * GiB, power_w=float(_per_gpu(power, n)[g]),
                power_limit_w=float(_per_gpu(limit, n)[g]), temp_c=float(_per_gpu(temp, n)[g]),
                sm_clock_mhz=float(_per_gpu(clock, n)[g]),
                # (a board's own fan, %; None: passively cooled, as SXM and most PCIe
                # datacenter boards report it)
                fan_pct=None if fan is None else float(_per_gpu(fan, n)[g]),
                # (MiB/s each way)
                nvlink_rx_mib_per_s=None if nvlink is None else float(_per_gpu(nvlink, n)[g]),
                nvlink_tx_mib_per_s=None if nvlink is None else float(_per_gpu(nvlink, n)[g]),
                throttle=tuple(_per_gpu([throttle] * n if not throttle or isinstance(
                    throttle[0], str) else throttle, n)[g])))
        processes = []
        sm_each = _per_gpu(proc_sm if proc_sm is not None else sm, n)
        # extra_procs: (pid, ppid, gpu, cmdline, sm %) of another tenant on a GPU
        entries = [(pid, ppid, g, cmd, sm_each[g], 60) for pid, ppid, g, cmd in self.procs]
        entries += [(pid, ppid, g, cmd, other_sm, 8) for pid, ppid, g, cmd, other_sm in extra_procs]
        for pid, ppid, g, cmd, proc_sm_pct, mem_gib in entries:
            self.proc_cpu[pid] = self.proc_cpu.get(pid, 0.0) + proc_cpu / 100.0 * dt
            processes.append(ProcSample(
                pid=pid, gpu_index=g, name="python3", cmdline=cmd, ppid=ppid,
                start_time_s=START_WALL_S - 3600, mem_bytes=mem_gib * GiB,
                sm_util_pct=None if proc_sm_pct is None else float(proc_sm_pct),
                cpu_s=round(self.proc_cpu[pid], 3), mig_index=self.migs.get(pid)))
        engine = None
        if self.kind is not None and engine_up:
            tot = self.totals
            if seq:
                tot["gen"] += tokens * dt
                tot["prompt"] += prompt * dt
                tot["cached"] += cached * dt
                # (requests finished per second: 200-token replies unless given)
                tot["finished"] += (tokens / 200.0 if finished is None else finished) * dt
                tot["preempt"] += preempt * dt
                tot["cpu"] += tree_cpu / 100.0 * dt
                tot["inv"] += involuntary * dt
                # quota (cores) of the engine's cgroup: CFS periods of 100 ms, the share
                # ``throttled`` of them held back
                tot["periods"] += 10 * dt
                tot["throttled"] += 10 * dt * throttled
                tot["drafted"] += (drafted or 0.0) * dt
                tot["accepted"] += (accepted or 0.0) * dt
                tot["decode_s"] += (decode_s or 0.0) * dt  # llama.cpp: seconds per second
                tot["prefill_s"] += (prefill_s or 0.0) * dt
                tot["thread"] += (thread or 0.0) / 100.0 * dt  # the busiest thread's CPU
                if self.kind in ("vllm", "sglang"):
                    # itl_tail: (seconds, share) of the tokens in steps far slower than the
                    # rest, or a list of them
                    tails = itl_tail if isinstance(itl_tail, list) else [itl_tail or (itl, 0.0)]
                    rest = 1.0 - sum(share for _, share in tails)
                    self.hists["itl"].observe(itl, tokens * dt * rest)
                    for slow_s, share in tails:
                        self.hists["itl"].observe(slow_s, tokens * dt * share)
                    # (one first token per request admitted: 200-token replies unless given)
                    self.hists["ttft"].observe(ttft, max(1.0, (
                        tokens / 200.0 if admitted is None else admitted) * dt))
                if self.kind == "tgi":
                    # TGI times no token: each finished request's mean time per token
                    self.hists["tpot"].observe(itl, (tokens / 200.0 if finished is None
                                                     else finished) * dt)
                if self.kind == "vllm":
                    self.params_n.observe(1.0, tokens / 200.0 * dt)
                    if n8:
                        for _ in range(n8):
                            self.params_n.observe(8.0 / 1.4, 0.2)  # lands in (5, 10]
                            self.params_n.observe(8.0, 0.8)
            if self.kind == "trainer":
                if work is not None:
                    tot["work"] = work
                # (the trainer's port owner's tree is read as an engine's is: its CPU time)
                engine = EngineSample(kind="trainer", url="http://127.0.0.1:9100/metrics",
                                      generation_tokens_total=tot["work"], work_unit="samples",
                                      pids=self.engine_pids, time_mono_s=mono, time_wall_s=wall,
                                      cpu_s=round(tot["cpu"], 3), ctx_involuntary=int(tot["inv"]),
                                      **({"busiest_thread_cpu_s": round(tot["thread"], 3),
                                          "busiest_thread": f"{self.engine_pids[0]} python"}
                                         if thread is not None else {}))
            else:
                engine = EngineSample(
                    kind=self.kind, url="http://127.0.0.1:8000/metrics", model="m",
                    generation_tokens_total=round(tot["gen"]),
                    prompt_tokens_total=round(tot["prompt"]),
                    prompt_tokens_cached_total=round(tot["cached"]),
                    requests_finished_total=round(tot["finished"]),
                    requests_running=float(running), requests_waiting=float(waiting),
                    kv_usage_ratio=kv, preemptions_total=round(tot["preempt"], 3),
                    pids=self.engine_pids, time_mono_s=mono, time_wall_s=wall,
                    histograms=(self.hists["tpot"].sample(),) if self.kind == "tgi" else (
                        self.hists["itl"].sample(), self.hists["ttft"].sample(),
                        self.params_n.sample()),
                    cpu_s=round(tot["cpu"], 3), ctx_involuntary=int(tot["inv"]),
                    **({"cpu_quota_cores": quota, "cpu_periods": round(tot["periods"]),
                        "cpu_throttled_periods": round(tot["throttled"])}
                       if quota is not None else {}),
                    **({"spec_draft_tokens_total": round(tot["drafted"]),
                        "spec_accepted_tokens_total": round(tot["accepted"])}
                       if drafted is not None else {}),
                    **({"decode_seconds_total": round(tot["decode_s"], 3),
                        "prefill_seconds_total": round(tot["prefill_s"], 3)}
                       if decode_s is not None else {}))
        sources = {"nvml": SourceStatus(ok=True)}
        if self.kind is not None:
            sources["engine"] = SourceStatus(ok=engine_up, reason=None if engine_up
                                             else "connection refused")
        # launch_us: eBPF's cuLaunchKernel calls of each GPU's process, (calls, longest us)
        # per GPU: all 6 us but the longest, as the probes' histogram and max record them;
        # (calls, longest us, k): k of the calls that long
        launch = []
        per_gpu = [] if launch_us is None else launch_us if isinstance(launch_us, list) \
            else [launch_us] * n
        for (pid, _, g, _), (calls, longest_us, *slow) in zip(self.procs, per_gpu):
            k = slow[0] if slow else 1
            buckets = {bucket_index(6_000): calls - k}
            top = bucket_index(int(longest_us * 1000))
            buckets[top] = buckets.get(top, 0) + k
            launch.append(LaunchHist(api="cuLaunchKernel", pid=pid, count=calls,
                                     sum_ns=int(6_000 * (calls - k) + k * longest_us * 1000),
                                     max_ns=int(longest_us * 1000), buckets=buckets))
        self.frames.append(Frame(
            seq=seq, time_wall_s=wall, time_mono_s=mono, gpus=tuple(gpus),
            processes=tuple(processes), engine=engine, launch=tuple(launch),
            host=HostSample(cpu_pct=host_cpu, cpu_pressure_some_pct=psi, run_queue=run_queue,
                            cpus=cpus), sources=sources))
        return self

    def restart_counters(self) -> None:
        for k in self.totals:
            self.totals[k] = 0.0
        self._new_histograms()

    def run(self):
        """The detector's states after each frame."""
        timeline = Timeline(len(self.frames) + 10, make_fold())
        return [timeline.append(f) for f in self.frames]


def episodes(states) -> list:
    """Every episode seen, in order of start, each as last seen."""
    seen = {}
    for s in states:
        actives = getattr(s, "actives", None)
        if actives is None:  # a detector with one episode at a time
            actives = (s.active,) if s.active is not None else ()
        for e in list(s.episodes) + list(actives):
            seen[(getattr(e, "subject", ""), e.kind, e.start_wall_s)] = e
    return sorted(seen.values(), key=lambda e: e.start_wall_s)


def named(found) -> list:
    """Episodes as a failing assertion lists them: each headline and its suspects."""
    return [(e.headline, e.suspects) for e in found]


def only(states):
    """The one episode seen (the test fails, listing them, if there are more or none)."""
    found = episodes(states)
    assert len(found) == 1, named(found)
    return found[0]


def opened_at(states) -> list[int]:
    """The ticks on which an episode opened (none open on the tick before)."""
    return [i for i, s in enumerate(states)
            if s.active is not None and (i == 0 or states[i - 1].active is None)]


def checkpoint_samples(i: int) -> tuple[float, ...]:
    """NVML's five samples of tick ``i`` while a checkpoint is written: idle but for one in
    thirteen at 100% (a copy's bookkeeping kernel, or an all-gather's, caught by the
    sampler)."""
    return tuple(100.0 if (i * 5 + k) % 13 == 0 else 1.0 for k in range(5))


def gather_tick(trace: Trace, i: int, work: float | None) -> None:
    """Tick ``i`` of a sharded checkpoint gathered by all-gathers: the busy samples are NCCL
    kernels on a fifth of the SMs while they run, the counter at ``work`` (stopped)."""
    samples = checkpoint_samples(i)
    busy = sum(x >= 50 for x in samples) / len(samples)
    trace.tick(util=1 + 99 * busy, sm=1 + 20 * busy, tensor=0, power=90, work=work,
               samples=samples)


def saw_tooth(trace: Trace) -> Trace:
    """80 s of steady steps, then GPU-Util going 94, 82, 66, 49, 61, 77 in a 6 s period (an
    image job's JPEG decode falling behind, A10G): the tick at the period's peak reads almost
    healthy, the stall shows on the others."""
    for i in range(80):
        trace.tick(util=noisy(98, i, 0.005), sm=80)
    period = (94, 82, 66, 49, 61, 77)
    for i in range(90):
        util = period[i % len(period)]
        trace.tick(util=util, sm=0.8 * util)
    return trace


def noisy(value: float, i: int, spread: float) -> float:
    """A deterministic wobble: the same numbers on every run."""
    return value * (1.0 + spread * math.sin(i * 2.399))


def data_parallel(*ranks: Trace) -> list[Frame]:
    """One page of data-parallel engines from single-GPU traces ticked in step
    (``gputop.demo.data_parallel``: rank r's GPU is GPU r, its reading replica engine=r)."""
    return demo.data_parallel([t.frames for t in ranks])


def run_frames(frames: list[Frame]):
    """The detector's states after each of ``frames``."""
    timeline = Timeline(len(frames) + 10, make_fold())
    return [timeline.append(f) for f in frames]


def scraped_every(frames: list[Frame], every_s: float, offset_s: float = 0.0) -> list[Frame]:
    """The frames a collector records when it reads the engine every ``every_s`` seconds
    (the first at the start, then from ``offset_s`` on where given): between readings each
    frame carries the last one (its counters and its read time)."""
    out: list[Frame] = []
    last, due = None, offset_s or every_s
    for frame in frames:
        if last is not None and frame.time_mono_s < due - 1e-9:
            out.append(replace(frame, engine=last))
            continue
        if last is not None:
            due += every_s
        last = frame.engine
        out.append(frame)
    return out
