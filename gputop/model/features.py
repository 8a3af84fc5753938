"""The signals one subject shows at one tick, each a 0..1 strength against its own baseline.

``signals`` reads the recent points (newest last) restricted to the subject's GPUs and
processes and compares them with the subject's ``Baseline``; what it finds is both the
strengths the cause signatures combine (``Features.s``) and the evidence that explains
them (``Features.evidence``, structured).  Signals that need a baseline it does not have
are 0, never guessed: a detector that just started judges by absolute physics only (a GPU
100% busy on a sliver of its SMs is hollow whatever its history).
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from gputop.model import enginehist
from gputop.model.baseline import Baseline
from gputop.model.enginehist import HistDelta
from gputop.model.evidence import Evidence
from gputop.model.point import Point, ProcRef, work_rate_now, work_since_s
from gputop.model.subjects import Subject, first_rank
from gputop.model.thresholds import ramp, t

if TYPE_CHECKING:  # detect imports this module
    from gputop.model.detect import DetectConfig

# say(signal, value, baseline=None, unit="", gpu=None, **detail): one piece of evidence
Say = Callable[..., None]
Strengths = dict[str, float]
Values = dict[str, float | None]

# clock-event reasons that are a fault of the card or its chassis, never a loaded card's normal
# (the power cap binding is; sync boost follows its group)
FAULT_REASONS = frozenset({"hw slowdown", "thermal (sw)", "thermal (hw)", "power brake"})
SMOOTH = 3  # ticks averaged for a "now" value
WINDOW_S = 10.0  # the saw-tooth and the queue's trend are read over this


@dataclass(frozen=True, slots=True)
class Features:
    s: dict[str, float]  # strength by signal name
    v: dict[str, float | None]  # the numbers a headline quotes
    evidence: tuple[Evidence, ...] = ()
    odd_gpu: int | None = None
    shared_gpus: tuple[int, ...] = ()
    throttled_gpus: tuple[int, ...] = ()
    dram_gpus: tuple[int, ...] = ()
    slow_reading: dict[str, bool] = field(default_factory=dict)  # this reading had slow ones
    stalled_gpus: tuple[int, ...] = ()  # where a saw-tooth or an idle rank shows
    launch_gpus: tuple[int, ...] = ()  # the GPUs whose own processes' launches stalled


def _mean(values: Iterable[float | None]) -> float | None:
    total: float = 0
    count = 0
    for v in values:
        if v is not None:
            total += v
            count += 1
    return total / count if count else None


def _gpu_mean(p: Point, attr: str, gpus: tuple[int, ...]) -> float | None:
    d = getattr(p, attr)
    return _mean(d.get(g) for g in gpus)


def _spec_acceptance(points: tuple[Point, ...]) -> float | None:
    """Accepted / drafted tokens over the last SMOOTH + 2 readings, else the engine's own
    gauge; None without speculative decoding (or without drafts in the window)."""
    window = points[-(SMOOTH + 2):]
    drafted = sum(p.spec_drafted_per_s or 0.0 for p in window if p.engine_fresh)
    if drafted > 0:
        return sum(p.spec_accepted_per_s or 0.0 for p in window if p.engine_fresh) / drafted
    return _scalar(points, "spec_accept_gauge")


def _smoothed(points: tuple[Point, ...], attr: str, gpus: tuple[int, ...]) -> float | None:
    return _mean(_gpu_mean(p, attr, gpus) for p in points[-SMOOTH:])


def _per_gpu(points: tuple[Point, ...], attr: str, gpus: tuple[int, ...],
             n: int = SMOOTH) -> dict[int, float]:
    sums = dict.fromkeys(gpus, 0.0)
    counts = dict.fromkeys(gpus, 0)
    for p in points[-n:]:  # (one pass over the points, each GPU's sum in the points' order)
        values = getattr(p, attr)
        for g in gpus:
            x = values.get(g)
            if x is not None:
                sums[g] += x
                counts[g] += 1
    return {g: sums[g] / counts[g] for g in gpus if counts[g]}


def _window_means(points: tuple[Point, ...], gpus: tuple[int, ...], sms: dict[int, float],
                  base: Baseline) -> tuple[dict[int, float], set[int]]:
    """Each GPU's mean SM activity (or, without an SM counter, power) over the last
    ``sustained_span_s``, and the GPUs that stood over their peers on half its ticks or on
    two or more separate runs of them: a rank that falls behind for a few seconds of every
    period (its extra work each N steps) stands out now and then tick by tick, always in
    the mean; one blip (a burst on one replica) is one short run."""
    since = points[-1].time_mono_s - t("sustained_span_s")
    window = tuple(p for p in points if p.time_mono_s > since)
    attr = "sm_active_pct" if sms else "power_w"
    means = _per_gpu(window, attr, gpus, len(window))
    weight = {g: (base.gpu("power", g) or 0.0) if not sms else 1.0 for g in gpus}
    recurring = set()
    scaled = {g: m / weight[g] for g, m in means.items() if weight[g]}
    peers_scaled = _others_medians(scaled)
    for g in means:
        if g not in scaled or len(scaled) < 2 or scaled[g] <= 1.05 * peers_scaled[g]:
            continue  # (only a GPU over its peers in the mean is looked at tick by tick)
        runs, over, ticks = 0, False, 0
        for p in window:
            values = getattr(p, attr)
            peers = [values[k] / weight[k] for k in gpus if k != g and k in values and weight[k]]
            if g not in values or not peers or not weight[g]:
                continue
            now = values[g] / weight[g] > 1.1 * statistics.median(peers)
            runs += now and not over
            ticks += now
            over = now
        if runs >= 2 or ticks >= 0.5 * len(window):
            recurring.add(g)
    return means, recurring


def _working_util(points: tuple[Point, ...], gpus: tuple[int, ...]) -> dict[int, float]:
    """Each GPU's mean GPU-Util over the last ``odd_util_window_s``, for the GPUs that
    worked (50%+) on every tick of it: a level the stages of a pipeline take turns to dip
    below (its bubbles) evens out, one rank's own does not, and a rank that paused in the
    window (a checkpoint) is the pause logic's to judge."""
    since = points[-1].time_mono_s - t("odd_util_window_s")
    window = tuple(p for p in points if p.time_mono_s > since)
    means = _per_gpu(window, "util_pct", gpus, len(window))
    return {g: m for g, m in means.items()
            if all(p.util_pct.get(g, 100.0) >= 50.0 for p in window)}


def _kv_bytes(now: Point, kv: float | None, kv_base: float | None,
              s: dict[str, float], v: dict[str, Any]) -> None:
    """What a decode step reads, now against the baseline: the weights once plus every
    running sequence's KV (the pool's used share).  Decode is bandwidth-bound, so the
    ratio is the step's slowdown the KV alone accounts for (a pool of 117 GB filling from
    1% to 74% beside 16 GB of weights: a step 6x longer)."""
    weights, pool = now.weights_bytes, now.kv_pool_bytes
    if not weights or not pool or kv is None or kv_base is None:
        return
    ratio = (weights + kv * pool) / (weights + kv_base * pool)
    v["read_ratio"] = ratio
    s["kv_bytes"] = ramp(ratio, t("kv_bytes_ratio"), t("kv_bytes_ratio") + 0.7)


def _prefill_cost(now: Point, prompt: float, prompt_base: float,
                  s: dict[str, float], v: dict[str, Any]) -> None:
    """The share of the GPU the computed prompt tokens take beyond their normal: about
    2 FLOPs per parameter per token (the per-GPU weights in 16-bit), at half the dense
    peak.  A prompt rate 5x its normal that takes 2% of an H200 cannot slow every decode
    step; one that takes 40% does."""
    weights, peak = now.weights_bytes, now.peak_tflops
    if not weights or not peak:
        return
    per_token_s = weights / (peak * 1e12 * t("prefill_mfu"))
    v["prefill_gpu"] = prompt * per_token_s
    s["prefill_cost"] = ramp((prompt - prompt_base) * per_token_s, 0.08, 0.25)


def _scalar(points: tuple[Point, ...], attr: str, n: int = SMOOTH) -> float | None:
    return _mean(getattr(p, attr) for p in points[-n:])


# engines whose generated-token counter may move when a request finishes, not per step:
# SGLang's generation_tokens_total (its tokenizer counts a request's tokens when it ends;
# the source reads the per-step realtime_tokens_total first where the server has it, and
# the smoothing then only delays a collapse by seconds), llama.cpp's tokens_predicted, TGI's
# tgi_request_generated_tokens (a histogram its router records as each request succeeds)
FINISH_COUNTED = ("sglang", "llamacpp", "tgi")
# engines whose prefill and decode seconds are the engine's own time, spent on one or the
# other (llama.cpp's slots, TGI's forward passes by method); vLLM's are per-request phase
# times summed over requests in flight together: a stand-in only where it shows no typical
# token of its own
FORWARD_TIMED = ("llamacpp", "tgi")
# engines whose decode seconds are each sequence's own, summed (a llama.cpp slot's, a vLLM
# request's decode phase): per generated token, each sequence's time per token; TGI's are a
# batch's forward passes (per generated token there, the step over the batch)
SEQUENCE_TIMED = ("llamacpp", "vllm")


def _demand_batch(points: tuple[Point, ...], base: Baseline, running: float | None,
                  waiting: float | None, running_base: float | None,
                  waiting_base: float | None) -> float | None:
    """The batch size latency is judged at: ``running``, unless the batch grew while
    requests finish at their usual rate and no queue formed; then the baseline batch
    scaled by the finishing rate (with room for its noise)."""
    finished, finished_base = _scalar(points, "requests_per_s", 5), base.get("finished")
    if running is None or running_base is None or not finished_base or finished is None \
            or running <= running_base:
        return running
    queued = waiting is not None and waiting_base is not None \
        and waiting - waiting_base >= max(2.0, 0.1 * running_base)
    if queued:
        return running
    demand = max(running_base, 1.0) * max(1.0, finished / finished_base) * t("demand_slack")
    return min(running, demand)


def finish_counted_tau_s(base: Baseline) -> float:
    """How long a finish-counted token rate is averaged (an exponential mean's time
    constant): about two request lifetimes at the baseline (running / finished per second),
    10-60 s, since such a counter reads 0 while long requests run and a lump as they end."""
    running, finished = base.get("running"), base.get("finished")
    life_s = running / finished if running and finished else 0.0
    return min(60.0, max(10.0, 2.0 * life_s))


def _others_median(values: dict[int, float], g: int) -> float | None:
    """The median of the values of every GPU but ``g`` (one of ``values``)."""
    return _others_medians(values).get(g)


def _others_medians(values: dict[int, float]) -> dict[int, float]:
    """Each GPU's peers' median (the values of the others), for the GPUs with a peer, from
    one sort: each GPU's peers are the sorted values less one copy of its own."""
    ordered = sorted(values.values())
    out = {}
    for g, x in values.items() if len(ordered) > 1 else ():
        rest = ordered.copy()
        del rest[bisect.bisect_left(rest, x)]
        out[g] = statistics.median(rest)
    return out


def signals(subject: Subject, points: tuple[Point, ...], base: Baseline,
            windows: dict[str, HistDelta], config: DetectConfig, notable: float = 0.0,
            jumped_from: float | None = None, tokens_smooth: float | None = None,
            waiting_before: float | None = None,
            before: Mapping[str, float] | None = None) -> Features:
    """The subject's signals at ``points[-1]``; ``windows`` are the engine's latency
    histograms merged over the latency window; ``notable`` the strength of notable requests
    (the detector keeps those, since they arrive when a request ends); ``jumped_from`` the
    batch before a jump the detector saw lately (see ``_jump``); ``tokens_smooth`` the
    engine's tokens/s averaged longer where its counter moves only as requests finish;
    ``waiting_before`` the queue the engine read 5 s or more before its latest reading;
    ``before`` what the engine's baseline held before it restarted at the same address (its
    speculative acceptance, the context per sequence): the run before is its normal for a
    while, not only the first minutes of this one."""
    now = points[-1]
    gpus = subject.gpus
    s: dict[str, float] = {}
    v: dict[str, float | None] = {}
    ev: list[Evidence] = []
    wall = now.time_wall_s

    def say(signal: str, value: float | None, baseline: float | None = None, unit: str = "",
            gpu: int | None = None, **kw: Any) -> None:
        ev.append(Evidence(signal, value, baseline, unit, gpu, wall, **kw))

    # ---------------------------------------------------------------- the GPU
    util = _smoothed(points, "util_pct", gpus)
    sm = _smoothed(points, "sm_active_pct", gpus)
    dram = _smoothed(points, "dram_bw_pct", gpus)
    tensor = _smoothed(points, "tensor_pct", gpus)
    util_base = base.get("util")
    mem_ctrl = _smoothed(points, "mem_util_pct", gpus) if dram is None else None
    v.update(util=util, util_base=util_base, sm=sm, dram=dram, mem_ctrl=mem_ctrl)
    s["busy"] = ramp(util, 70.0, 90.0)
    if util is not None and util_base is not None and util_base >= 40:
        s["util_drop"] = ramp(util_base - util, t("util_drop_pts") * 0.5, 30.0)
        if util_base - util >= t("util_drop_pts"):
            say("util_drop", util, util_base, "%")
    # (the SMs' share of the busy time means something once a quarter of the time is busy:
    # a launch-bound loop of tiny kernels keeps GPU-Util near a third, its SMs near 5%)
    if util is not None and sm is not None and util >= 25:
        ratio = sm / util
        v["sm_ratio"] = ratio
        s["hollow"] = ramp(ratio, 0.4, 0.1)
        s["sliver"] = ramp(ratio, 0.08, 0.03)  # ~1 SM of 132 busy: one-element kernels
        ratio_base = base.get("sm_ratio")
        if ratio_base is not None and ratio_base >= 0.25:
            s["hollow_new"] = ramp(ratio / ratio_base, 0.7, 0.25)
            v["sm_share_ratio"] = ratio / ratio_base
        if ratio <= 0.2 or (ratio < 0.5 and s.get("hollow_new", 0.0) >= 0.3):
            say("sm_active", sm, base.get("sm"), "%", detail=f"{util:.0f}")  # new, or a sliver
    # the power the busy time draws, read only where it decides: with an SM counter once SM
    # per busy time is already well under its normal; without one (no GPM) it stands in for
    # how much of the chip works (one-element kernels at 100% util draw near idle power: a
    # real H200, 123 W beside 121 W idle with a context, 470-690 W for real kernels)
    hollow_power = _hollow_power(points, gpus, base) \
        if util is not None and util >= t("hollow_util_pct") \
        and (sm is None or (v.get("sm_ratio") or 1.0) <= 0.45) else None
    if hollow_power is not None:
        power, power_base = hollow_power
        v["power_ratio"] = power / power_base
        if sm is None:
            s["hollow_power"] = ramp(power / power_base, t("hollow_power_ratio") + 0.15,
                                     t("hollow_power_ratio"))
            if s["hollow_power"] >= 0.5:
                say("power", power, power_base, "W", detail=f"{util:.0f}")
    if dram is not None:
        dram_base = base.get("dram")
        # saturated (near the HBM roofline) or risen well above the job's own level: decode
        # reads every sequence's KV each step, so longer contexts show as DRAM traffic
        s["dram"] = max(ramp(dram, 80.0, 92.0), ramp(dram - dram_base, 8.0, 25.0)
                        * ramp(dram, 50.0, 75.0) if dram_base is not None else 0.0)
        s["dram_new"] = ramp(dram - dram_base, 5.0, 20.0) if dram_base is not None \
            else 0.5 * s["dram"]
        v["dram_rise"] = dram - dram_base if dram_base is not None else None
        # measured traffic well under its normal: the SMs are not waiting on DRAM
        s["dram_fell"] = ramp(dram_base - dram, 5.0, 20.0) if dram_base is not None else 0.0
        if dram >= t("dram_high_pct") or s["dram"] >= 0.5:
            say("dram", dram, dram_base, "%")
    elif mem_ctrl is not None and (mem_ctrl_base := base.get("mem_ctrl")) is not None:
        # no DRAM bandwidth counter (no GPM): the memory controller's busy time stands in,
        # by its rise only (busy time is not bandwidth: its level says nothing alone)
        rise = mem_ctrl - mem_ctrl_base
        s["dram"] = ramp(rise, 8.0, 25.0) * ramp(mem_ctrl, 50.0, 75.0)
        s["dram_new"] = ramp(rise, 5.0, 20.0)
        v["dram_rise"] = rise
        s["dram_fell"] = ramp(-rise, 5.0, 20.0)
        if s["dram"] >= 0.5:
            say("mem_ctrl", mem_ctrl, mem_ctrl_base, "%")
    level, name = (dram, "dram") if dram is not None else (mem_ctrl, "mem_ctrl")
    if level is not None and "dram_new" in s:
        # above every level the subject has run at for a while before: a phase it returns
        # to (an RL job's rollouts between its training steps) is its own, not an onset
        seen = base.high_before(name, now.time_mono_s - t("dram_seen_age_s"))
        s["dram_unseen"] = ramp(level - seen, 5.0, 15.0) if seen is not None else s["dram_new"]
    if tensor is not None and base.get("tensor") is not None:
        s["tensor_up"] = ramp(tensor - base.get("tensor"), 5.0, 25.0)  # type: ignore[operator]

    clocks = _per_gpu(points, "clock_mhz", gpus)
    utils = _per_gpu(points, "util_pct", gpus)
    sms = _per_gpu(points, "sm_active_pct", gpus)
    temps = _per_gpu(points, "temp_c", gpus)
    # every GPU of a multi-GPU job busy on a sliver of its SMs at once: the ranks together in
    # a collective (a checkpoint's state-dict gather, a barrier), not one rank's small kernels
    if len(gpus) >= 2 and all(utils.get(g, 0.0) >= 25 and g in sms for g in gpus) and all(
            sms[g] <= t("hollow_sustained_ratio") * utils[g] for g in gpus):
        v["all_hollow"] = 1.0
    busy_gpus = [g for g in gpus if utils.get(g, 0.0) >= 40]
    drops = {}
    for g in busy_gpus:
        b = base.gpu("clock", g)
        if g in clocks and b:
            drops[g] = 1.0 - clocks[g] / b
    new_reasons: dict[int, list[str]] = {}
    for g in gpus:
        reasons = set(now.throttle.get(g, ()))
        usual = base.usual_throttle.get(g, frozenset()) if base.ready else frozenset({"power cap"})
        new = sorted(reasons - usual)
        # the power cap binding is a healthy loaded card's normal; only a fallen clock makes it news
        if new == ["power cap"] and drops.get(g, 0.0) < t("clock_drop"):
            new = []
        # a lowered power limit (nvidia-smi -pl, a facility's capping script) holds the clocks
        # under the same "power cap" reason the card always showed: the limit itself moved
        limit = now.power_limit_w.get(g)
        limit_base = base.gpu("power_limit", g) if limit is not None else None
        if limit is not None and limit_base and limit <= t("power_limit_cut") * limit_base:
            if g in busy_gpus:  # (the clock trigger judges what the cut cost)
                v["limit_lowered"] = 1.0
            if drops.get(g, 0.0) >= t("clock_drop"):
                new = sorted(set(new) - {"power cap"}) + [
                    f"power limit lowered to {limit:.0f} W from {limit_base:.0f} W"]
        if new:
            new_reasons[g] = new
    clock_strength = {g: ramp(d, t("clock_drop"), 0.3) for g, d in drops.items()}
    throttled = tuple(sorted({g for g, x in clock_strength.items() if x >= 0.3} | set(new_reasons)))
    if busy_gpus:
        s["clock_all"] = min(clock_strength.get(g, 0.0) for g in busy_gpus)
        v["clock_drop"] = min(drops.get(g, 0.0) for g in busy_gpus)
        s["clock_any"] = max(clock_strength.values(), default=0.0)
    held = {g for g, rs in new_reasons.items() if any(r != "power cap" for r in rs)}
    s["throttle_new"] = 1.0 if held else (0.5 if new_reasons else 0.0)
    # a fault of the card or its chassis (not a limit someone set, not the usual power cap);
    # a board with its own fan holds a temperature target by design (GPU Boost sheds clock
    # at it, "thermal (sw)", its fan spun up): a fault there is its fan not spinning up
    s["throttle_fault"] = 1.0 if any(
        rs != ["thermal (sw)"] or now.fan_pct.get(g, 0.0) < t("fan_spun_up_pct")
        for g, rs in _faults(new_reasons, busy_gpus).items()) else 0.0
    for g in sorted(new_reasons):
        say("throttle", None, gpu=g, detail=", ".join(new_reasons[g]))
    for g, d in sorted(drops.items()):
        if d >= t("clock_drop"):
            say("clock", clocks[g], base.gpu("clock", g), "MHz", gpu=g)

    odd = None
    idle_rank: tuple[int, ...] = ()
    if len(gpus) >= 2:
        faulted = _faults(now.throttle, busy_gpus)
        # (GPUs judged together only because their processes are not visible may be
        # independent pods: a warm slot's card among them holds no one back)
        lone_fault = next(iter(faulted.items())) \
            if len(faulted) == 1 and subject.kind != "gpu" else None
        odd = _odd_one_out(subject, s, clocks, sms, temps, utils, new_reasons, lone_fault,
                           base, say,
                           _per_gpu(points, "power_w", gpus) if not sms else {},
                           _working_util(points, gpus), _window_means(points, gpus, sms, base),
                           _per_gpu(points, "nvlink_mib_per_s", gpus, len(points)))
        idle_rank = _idle_rank(subject, points, utils, sms, s, v, say)
        v["first_rank"] = float(first_rank(subject, now))
        if (off := _rank_off(subject, s, v, utils, sms, base, say)) is not None:
            odd = off
    shared = _shared(subject, now, base, s, say)
    # the rank the others wait for is the one a new tenant shares: the tenant is the cause,
    # the straggling its effect (where NVML gives no per-process SM, its memory says so)
    s["shared_odd"] = min(s.get("shared", 0.0), s.get("odd", 0.0), s.get("peers_wait", 0.0)) \
        if odd is not None and odd in shared else 0.0
    dram_gpus = tuple(g for g, d in _per_gpu(points, "dram_bw_pct", gpus).items()
                      if d >= t("dram_high_pct"))
    stalled = _sawtooth(subject, points, base, s, v, say)

    # ---------------------------------------------------------------- the engine
    slow_reading: dict[str, bool] = {}
    if subject.has_engine:
        slow_reading = _engine(subject, points, base, windows, config, s, v, say,
                               tokens_smooth, waiting_before, before)
        _jump(points, base, v)
        _prefill_compute(s, v)
        # the jump stands while the batch stays doubled (n sequences decode together)
        doubled = jumped_from is not None and all(
            p.requests_running is not None and p.requests_running >= 2 * jumped_from
            for p in points[-3:])
        running = points[-1].requests_running
        if doubled:
            s["fanout"] = 1.0  # evidence only: it moves no baseline and opens nothing
            say("fanout", running, jumped_from)
    # a job that kept its GPU busy by itself, with no counter to show its rate, has no idle
    # time to give: another process's measured SM time there is taken from its time
    # slices, whatever its own per-process reading says (0.6 is a memory-only newcomer's;
    # a counter that held says the job lost nothing: time-sliced or not, it is judged on it)
    if subject.kind != "engine" and util_base is not None and v.get("tokens_ratio") is None:
        s["shared_taken"] = ramp(s.get("shared", 0.0), 0.6, 0.9) \
            * ramp(util_base, t("saturated_util_pct") - 10.0, t("saturated_util_pct"))
    s["notable"] = notable
    s["serving"] = 1.0 if subject.kind == "engine" else 0.0

    # ---------------------------------------------------------------- the host
    s["host"] = _host(subject, points, base, s, v, say)
    s["jitter"] = _jitter(points, base, say)
    # the milder costs a measured host finding takes as harm: GPU-Util points under its
    # normal, and a job's own rate (its demand does not ebb; an engine's tokens/s follows
    # its traffic, so only every token slower counts there)
    fall, job_rate = _util_fall(v), v.get("tokens_ratio") if subject.kind != "engine" else None
    if s["host"] >= t("host_strong") and s.get("cpu_lost", 0.0) >= 0.5:
        # the tree's own CPU taken beside strong contention: a milder cost is its cost (a
        # batch grown to keep tokens/s hides the rest); 1 where a cost reaches host_mild_*
        # (each token's time by the window's exact mean where the engine has one: the p50
        # read from histogram buckets jumps a bucket's width, 1.2x, at a bound)
        step, fewer = t("host_mild_step"), t("host_mild_tokens")
        token = v.get("itl_mean_ratio") or v.get("step_ratio")
        s["host_mild_harm"] = max(
            ramp(fall, 0.5 * t("host_mild_util_pts"), t("host_mild_util_pts")),
            _toward(token, step), _toward(job_rate, fewer))
    if s.get("shared", 0.0) >= 0.5:
        # another process on its GPU: a milder cost is its cost when it lasts (detect.py's
        # shared_mild span): a job's own rate; an engine's tokens/s per sequence and each
        # token's time (the window's mean) only at the batch its baseline knows (an ebb or a
        # surge moves both by the engine's own physics, whoever else holds memory there);
        # not where a cut clock or a contended host has evidence of its own for the cost
        rate, token = v.get("tokens_ratio"), v.get("itl_mean_ratio") or v.get("step_ratio")
        if subject.kind == "engine":
            running, running_base = v.get("running_mean"), v.get("running_base")
            grown = running / running_base if running and running_base else None
            matched = grown is not None and 1.0 / t("shared_mild_load") <= grown \
                <= t("shared_mild_load")
            # (tokens/s per sequence of the batch: a few users fewer shrink both together)
            rate = _per_sequence(rate, grown) if matched and rate is not None and grown else None
            token = token if matched else None
        fewer, step = t("shared_mild_rate"), t("shared_mild_step")
        s["shared_mild_harm"] = max(_toward(rate, fewer), _toward(token, step)) * (
            1.0 - max(s.get("clock_any", 0.0), s.get("throttle_new", 0.0), s["host"],
                      s["jitter"]))
    if s["jitter"] >= 0.5:
        # launch stalls measured need no more harm beside them than the launch trigger asks:
        # GPU-Util launch_util_drop_pts under its normal, or a job's own rate at 0.85x
        s["launch_harm"] = max(
            ramp(fall, 0.5 * t("launch_util_drop_pts"), t("launch_util_drop_pts")),
            ramp(job_rate, 0.95, 0.85))
    # launch calls stalled at a scheduler slice's scale with no cost in sight yet (a deep
    # queue of kernels rides out each stall, or the rate we cannot read): the stalls are
    # measured, not inferred; the detector counts this once it held over its own span
    # (not calls waiting for room in a full queue of kernels: every call slower, the p50
    # too; a thread preempted keeps its typical call at microseconds)
    typical, usual_typical = points[-1].launch_p50_us, base.get("launch_p50")
    queued = ramp(typical / usual_typical, t("launch_queued_ratio"),
                  2.0 * t("launch_queued_ratio")) if typical and usual_typical else 0.0
    s["launch_alone"] = ramp(s["jitter"], 0.5, 0.7) * (1.0 - queued)
    # ...and the host at its most contended taking the tree's own CPU: its CPU lost, its
    # threads preempted many times over while they use less (the same span)
    s["host_alone"] = ramp(s["host"], 0.7, 0.9) * ramp(
        s.get("cpu_lost", 0.0), 0.5 * t("host_alone_lost"), t("host_alone_lost")) \
        * ramp(s.get("preempted", 0.0), 0.25, 0.5) \
        * ((v.get("demand_kept") or 0.0) if subject.kind == "engine" else 1.0)
    # (an engine's CPU follows its traffic: with the batch shrunk, less CPU is less work)
    if now.host_cpu_pct is not None and now.host_cpu_pct >= 90:
        say("host_cpu", now.host_cpu_pct, base.get("host_cpu"), "%")

    # composites the signatures name
    s["batch_stall"] = min(max(s.get("itl", 0.0), s.get("tokens_down", 0.0)),
                           s.get("running_flat", 0.0), s.get("queue_soft", 0.0))
    # a few requests take the batch (and not longer contexts: those show as DRAM traffic)
    s["hogged"] = min(s.get("hog", 0.0), s.get("step", 0.0)) \
        * (1.0 - ramp(v.get("dram_rise"), 3.0, 10.0))
    # every step far slower with no prompts to prefill, no more memory traffic (the KV
    # read or DRAM), no speculation thrown away: per-step work beside the forward pass
    # (sampling n sequences' logprobs over the vocabulary); the batch swells by Little's
    # law (each request stays longer), so neither a flat batch nor a queue shows it.  Less
    # certain than a request seen in the engine's own histograms: it weighs 0.8.  Work beside
    # the pass that halves the SMs' share of the busy time (guided decoding's bitmask
    # kernels, a few SMs each) is tiny kernels, not a request's sampling over the vocabulary
    swell = ramp((v.get("running") or 0.0) / max(v.get("running_base") or 0.0, 1.0), 1.3, 2.0) \
        if v.get("running_base") is not None else 0.0
    # the tail need not move: a p99 set by prefill chunks stays while every step doubles,
    # and the sequences slower than the batch's growth explains say the same (Little's law)
    slower = max(s.get("itl", s.get("step", 0.0)),
                 s.get("seq_slow", 0.0) if batch_decodes(v) else 0.0)
    # The same steps with the memory traffic's share up (a few points where the batch swelled
    # to hold the output: every step now reads far more bytes) are no work beside the pass,
    # which leaves DRAM idle for longer and its share falling (n=8 x logprobs read 70% -> 62%),
    # but a pass that reads more (a dequantising fallback kernel, an unfused path): memory.
    slowed = 0.8 * min(s.get("step", 0.0), slower, swell) * (1.0 - s.get("prefill", 0.0)) \
        * (1.0 - s.get("spec_drop", 0.0)) * (1.0 - s.get("hollow_new", 0.0))
    reads = ramp(v.get("dram_rise"), t("step_reads_rise_pts"), 2.5 * t("step_reads_rise_pts"))
    s["step_alone"] = slowed * (1.0 - max(s.get("dram_new", 0.0), s.get("kv_read", 0.0), reads))
    # (n sequences of a new request the engine's histograms show read the shared prompt's KV
    # each: a few points more DRAM, the request still the cause; a routine one, 0.3, is not)
    s["step_reads"] = slowed * reads * (1.0 - ramp(notable, 0.3, 1.0))
    # waits between steps that run as usual (SM per busy time at its normal): a Python loop
    # of tiny kernels saw-tooths too, but its busy time is on few SMs
    s["sawtooth_plain"] = s.get("sawtooth", 0.0) * (1.0 - s.get("hollow_new", 0.0))
    # the SMs' share of the busy time a sliver, and a small fraction of its own normal: the
    # kernels themselves shrank (a Python loop of element-wise ops), though the host's gaps
    # between their launches keep GPU-Util from reading busy
    s["hollow_deep"] = min(s.get("hollow", 0.0), s.get("hollow_new", 0.0))
    # a stall that the sliver of busy SMs does not explain better
    s["stall_not_sliver"] = s["batch_stall"] * (1.0 - s.get("sliver", 0.0))
    # prefill work that is not the notable request's own
    s["prefill_not_notable"] = s.get("prefill", 0.0) * (1.0 - notable)
    # prompts that take a real share of the GPU (where the weights and the card are known);
    # the KV each step reads, where they take none: a longer context, not its prefill
    s["prefill_heavy"] = s.get("prefill", 0.0) * s.get("prefill_cost", 1.0)
    s["kv_explains"] = s.get("kv_bytes", 0.0) * (1.0 - s["prefill_cost"]) \
        if "prefill_cost" in s else 0.0
    # a serving engine whose GPU waits on its own host-side work (nothing outside takes its
    # CPU, no launch stalls): per-request work on the host, such as logprobs and their
    # detokenisation, paid every step
    drop = _util_fall(v)
    # (an engine without latency histograms, llama.cpp, times its decode calls: each step
    # slower while the GPU is less busy is host work added to the step)
    s["engine_host_bound"] = ramp(drop, 15.0, 30.0) * s["serving"] * (1.0 - s["host"]) \
        * (1.0 - s["jitter"]) * max(s.get("itl", 0.0), s.get("ttft", 0.0),
                                    ramp(v.get("step_ratio"), 1.25, 1.6))
    s["kv_sig"] = min(s.get("kv_full", 0.0), s.get("preempt", 0.0))
    s["kv_wait"] = min(s.get("kv_full", 0.0), s.get("queue", 0.0))  # waiting for blocks
    # ...a pool filled by prompts far longer than usual, nothing thrown away: the blocks
    # their prefill holds; the prompts are what the postmortem names, not a pool too small
    # for the service (contexts that grow in decode, long generations, are the pool's)
    s["kv_by_length"] = s["kv_wait"] * ramp(v.get("prompt_len_ratio"), 2.0, 4.0) \
        * (1.0 - s.get("preempt", 0.0))
    s["clock_slow"] = max(s.get("clock_all", 0.0),
                          min(s["throttle_new"], 0.7) if s["throttle_new"] >= 1 else 0.0)
    # prompts 1.2-1.6x their usual length taking twice their usual share of the steps
    # (prompt tokens per generated token), every token slower and the output down with the
    # demand there, while nothing else reads more or fills up (the KV per sequence, DRAM, a
    # pool waiting for blocks) and the batch about its usual size (a burst of arrivals is
    # prefilled before it decodes: prompts per generated token leap for its seconds): mild
    # prefill interference, which the prompt rate alone (1.5-4x) reads as nothing (at its
    # capacity a server admits fewer of the longer prompts).  Judged over the prefill
    # measure's span, never on a tick.
    # (nor anything that takes the GPU or its host: a second tenant, a cut clock, a
    # contended host or stalled launches explain slower tokens beside longer prompts)
    # (kept in the values too: the detector zeroes the strength until it held, and the
    # baseline must not learn the ticks that wait out that span)
    v["prefill_mild"] = s["prefill_mild"] = ramp(v.get("prompt_mix_ratio"), 1.6, 2.2) \
        * ramp(v.get("prompt_len_ratio"), 1.1, 1.3) * ramp(token_slowdown(v), 1.15, 1.3) \
        * ramp(v.get("tokens_ratio"), 0.9, 0.8) * float(bool(v.get("demand_kept"))) \
        * s.get("running_flat", 0.0) * (1.0 - max(
            s.get("kv_read", 0.0), s.get("dram_new", 0.0), s["kv_wait"], s.get("preempt", 0.0),
            s.get("shared", 0.0), s.get("clock_slow", 0.0), s.get("host", 0.0),
            s.get("jitter", 0.0)))
    # a job with no counter of its own: its busy time is the only measure of its work, so
    # the GPU idle for a share of it is the work lost (its steps wait on something)
    s["job_idle"] = s.get("util_drop", 0.0) if subject.kind != "engine" \
        and v.get("tokens_ratio") is None else 0.0
    s["harm"] = max(s.get("util_drop", 0.0), s.get("itl", 0.0), s.get("tokens_down", 0.0),
                    s.get("queue", 0.0), s.get("sawtooth", 0.0), s.get("work_down", 0.0),
                    s.get("ttft", 0.0))
    # likely, not certain (a burst can double a batch too): it weighs less than a signature
    s["fanout_harm"] = 0.7 * min(s.get("fanout", 0.0), s["harm"])
    # memory traffic that the n sequences of one request, reading its shared prompt each
    # step, bring with them is that request's cost, not the contexts' growth
    s["dram_not_fanout"] = s.get("dram_new", 0.0) * (1.0 - s.get("fanout", 0.0))
    launch_gpus = _launch_gpus(points, subject.gpus) if s["jitter"] else ()
    # the rank the others wait for is the one whose launching thread stalls: the stalls are
    # the cause, the straggling their effect (its harm is the whole job's wait)
    s["odd_launch"] = min(s.get("odd", 0.0), s.get("peers_wait", 0.0)) \
        if odd is not None and odd in launch_gpus else 0.0
    return Features(s=s, v=v, evidence=tuple(ev), odd_gpu=odd, shared_gpus=shared,
                    throttled_gpus=throttled, dram_gpus=dram_gpus or gpus,
                    slow_reading=slow_reading, stalled_gpus=stalled or idle_rank,
                    launch_gpus=launch_gpus)


def _hollow_power(points: tuple[Point, ...], gpus: tuple[int, ...], base: Baseline
                  ) -> tuple[float, float] | None:
    """The job's busy GPUs' mean power now and at their healthy busy baseline, on GPUs whose
    clocks held (a throttled card draws less for another reason)."""
    now_w, base_w = [], []
    for g, power in _per_gpu(points, "power_w", gpus).items():
        b, clock, clock_base = base.gpu("power", g), points[-1].clock_mhz.get(g), \
            base.gpu("clock", g)
        if b and clock and clock_base and clock >= (1 - t("clock_drop")) * clock_base:
            now_w.append(power)
            base_w.append(b)
    if not now_w:
        return None
    return sum(now_w) / len(now_w), sum(base_w) / len(base_w)


def _faults(reasons: Mapping[int, Iterable[str]], gpus: Iterable[int]) -> dict[int, list[str]]:
    """Each of ``gpus`` whose clock-event ``reasons`` hold a fault of the card or its chassis
    (FAULT_REASONS), with those reasons."""
    found = {g: sorted(FAULT_REASONS & set(reasons.get(g, ()))) for g in gpus}
    return {g: rs for g, rs in found.items() if rs}


def _odd_one_out(subject: Subject, s: Strengths, clocks: dict[int, float], sms: dict[int, float],
                 temps: dict[int, float], utils: dict[int, float],
                 new_reasons: dict[int, list[str]], lone_fault: tuple[int, list[str]] | None,
                 base: Baseline, say: Say,
                 powers: dict[int, float], utils_long: dict[int, float],
                 long: tuple[dict[int, float], set[int]], links: dict[int, float]
                 ) -> int | None:
    """One GPU of a multi-GPU job out of step with its peers: a lower clock, hotter, the only
    one throttled, or the only one still computing (higher SM; without an SM counter, more
    power than the peers against their healthy proportion) while the others wait in the
    collective, or the one whose NVLink (``links``, over the recent window) carries a
    fraction of the share of its peers' traffic it carried healthy.  Its
    strength is how much its strongest reading stands out over the runner-up's.
    ``lone_fault``: the one busy GPU held by a fault reason its peers lack (HW slowdown, power
    brake, thermal) and those reasons: its lower clock is never a standing."""
    dev: dict[int, float] = {}
    why: dict[int, list[Evidence]] = {}
    base_utils = {g: u for g in subject.gpus if (u := base.gpu("util", g)) is not None}
    if not _one_job(subject, base_utils):
        return None
    peers_clocks, peers_temps, peers_sms, peers_utils_long, peers_means, peers_links = (
        _others_medians(x) for x in (clocks, temps, sms, utils_long, long[0], links))
    # each card's healthy share of its peers' NVLink traffic, where it moved with them
    # (processes not visible: GPUs of a node's other jobs move nothing in this one's)
    usual_links = {g: share for g, (own, peers) in _usual_standing(links, base, "nvlink").items()
                   if peers >= t("link_busy_mib_s") and (share := own / peers) >= 0.8} \
        if links and subject.kind != "gpu" else {}
    # ...and only where the job pays for it: its ranks' SM activity under their healthy level
    # (they wait; a counter reading 0 for a while on one card costs nothing)
    job_waits = ramp(_sm_fall(subject.gpus, sms, base), 0.05, 0.15)
    lags_long, lags_now = (_util_under_peers(u, base_utils) for u in (utils_long, utils))
    # each card's own healthy standing among its peers in heat and clock (a warmer slot of
    # the chassis' airflow, a lower bin): only the part beyond it is out of step.  (Not in SM
    # activity: a rank's share of the work drifts, and a slowly growing share, a hot expert,
    # would be learned as its standing.)  Looked up only where a card reads out of step
    # without it: the standing only ever lowers a reading.
    usual_temp = _usual_standing(temps, base, "temp") if any(
        temps[g] - x >= t("hot_c") for g, x in peers_temps.items()) else {}
    usual_clock = _usual_standing(clocks, base, "clock") if any(
        clocks[g] <= (1.0 - t("clock_drop")) * x for g, x in peers_clocks.items()) else {}
    for g in subject.gpus:
        parts: list[float] = []  # its clock, its heat, a reason of its own, its SM or power
        peers_clock = peers_clocks.get(g)
        # (a card off the GPU idles at its idle clock: rank 0 writing a checkpoint at 690 MHz
        # is no slow rank)
        if g in clocks and peers_clock and utils.get(g, 100.0) >= 50:
            drop = 1.0 - clocks[g] / peers_clock
            fault = ", ".join(lone_fault[1]) if lone_fault and lone_fault[0] == g else ""
            if g in usual_clock and not fault:
                drop -= max(0.0, 1.0 - usual_clock[g][0] / max(usual_clock[g][1], 1.0))
            # (a fault reason of its own with the clock under its peers': the job's pace,
            # however long it has been so; its peers' clocks say the card is not a lower bin)
            x = 0.8 if fault and drop >= t("lone_fault_drop") else 0.0
            x = max(x, ramp(drop, t("clock_drop"), 0.3))
            parts.append(x)
            if x > 0.3:
                why.setdefault(g, []).append(Evidence(
                    "odd_clock", clocks[g], peers_clock, "MHz", g, others=_peers(clocks, g),
                    detail=fault))
        peers_temp = peers_temps.get(g)
        if g in temps and peers_temp is not None:
            usual = usual_temp[g][0] - usual_temp[g][1] if g in usual_temp else 0.0
            x = ramp(temps[g] - peers_temp - max(0.0, usual), t("hot_c"), 15.0)
            parts.append(x)
            if x > 0.3:
                why.setdefault(g, []).append(Evidence("hot", temps[g], peers_temp, "°C", g,
                                                      others=_peers(temps, g)))
        if g in new_reasons and len(new_reasons) < len(subject.gpus):
            parts.append(0.8)
        peers_sm = peers_sms.get(g)
        if g in sms and peers_sm is not None:
            gap = sms[g] - peers_sm
            ratio = sms[g] / max(peers_sm, 1.0)
            # relative to the peers' level: a rank still computing while the others wait
            # reads 1.4x their SM whether the job's kernels fill 90% of the SMs or 50%
            x = ramp(gap, 0.7 * t("sm_spread_pts"), 20.0) * ramp(ratio, 1.15, 1.4)
            parts.append(x)
            if x > 0.3:
                why.setdefault(g, []).append(Evidence("odd_sm", sms[g], peers_sm, "%", g,
                                                      others=_peers(sms, g)))
        # (now as well as over the window: a rank back from a pause is no longer out of step)
        lag_long, lag_now = lags_long.get(g), lags_now.get(g)
        if lag_long is not None and lag_now is not None:
            lag = min(lag_long, lag_now)
            # a rank partly off the GPU (a device sync each bucket, host-side metrics) while
            # the others spin in the collective at full GPU-Util: its busy time is what fell
            x = ramp(lag, t("odd_util_pts"), 2.5 * t("odd_util_pts"))
            parts.append(x)
            if x > 0.3:
                why.setdefault(g, []).append(Evidence("odd_util", utils_long[g],
                                                      peers_utils_long.get(g), "%", g,
                                                      others=_peers(utils_long, g)))
        peers_link, usual_link = peers_links.get(g), usual_links.get(g)
        if g in links and peers_link is not None and peers_link >= t("link_busy_mib_s") \
                and usual_link is not None and utils.get(g, 0.0) >= 50:
            # a busy rank whose NVLink now carries a fraction of the share of its peers'
            # traffic it carried healthy: its links trained down, and the traffic they no
            # longer carry goes the slow way (PCIe, host memory) at the pace every collective
            # waits for.  (A share of its own from the start, a pipeline's end stage or a
            # GPU the collectives never use, is its standing; a rank off the GPU, rank 0
            # writing a checkpoint, moves nothing: judged as a pause, not here.)
            share = links[g] / peers_link / usual_link
            _odd_part(parts, why, g, ramp(1.0 - share, 0.5, 0.75) * job_waits, "odd_link",
                      links, "MiB/s")
        rel = _power_over_peers(powers, base, g)
        if rel is not None:
            # spinning in NCCL draws far less than computing: an A100 rank still computing
            # draws 1.3x its waiting peers, one with a milder surplus of work 1.15-1.2x
            # (against their healthy proportion, and only while the peers fell under their
            # own power and it did not: cards of a job draw within a few % of it healthy)
            _odd_part(parts, why, g, ramp(rel, 1.1, 1.3), "odd_power", powers, "W")
        # (over the span: a rank behind for a few seconds of every period; its SM, or its
        # power where there is no SM counter)
        means, recurring = long
        peers_long = peers_means.get(g)
        if g in recurring and sms and peers_long is not None:
            x = ramp(means[g] - peers_long, 0.5 * t("sm_spread_pts"), 15.0) \
                * ramp(means[g] / max(peers_long, 1.0), 1.1, 1.25)
            _odd_part(parts, why, g, x, "odd_sm", means, "%")
        rel_long = _power_over_peers(means, base, g) if g in recurring and not sms else None
        if rel_long is not None:
            _odd_part(parts, why, g, ramp(rel_long, 1.08, 1.25), "odd_power", means, "W")
        dev[g] = max(parts, default=0.0)
    if not dev:
        return None
    ranked = sorted(dev.items(), key=lambda kv: -kv[1])
    odd, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    s["odd"] = max(0.0, top - 0.7 * second)
    # the others wait: their SM fell against their own baseline, or sits far below the odd one's
    peers = [g for g in subject.gpus if g != odd]
    waits = [ramp(_sm_fall(peers, sms, base), 0.1, 0.4)]
    peers_sm = _mean(sms.get(g) for g in peers)
    if peers_sm is not None and odd in sms:
        waits.append(ramp(sms[odd] / max(peers_sm, 1.0), 1.15, 1.5))
    peers_w = _mean(powers.get(g) for g in peers)
    base_w = _mean(base.gpu("power", g) for g in peers)
    if peers_w is not None and base_w:  # no SM counter: the peers' power fell instead
        waits.append(ramp((base_w - peers_w) / base_w, 0.1, 0.3))
    if _mean(utils.get(g) for g in peers) is not None and \
            _mean(utils.get(g) for g in peers) >= 85:  # type: ignore[operator]
        waits.append(0.4)  # spinning inside the collective keeps them "busy"
    s["peers_wait"] = max(waits, default=0.0)
    if s["odd"] >= 0.3:
        for e in why.get(odd, []):
            say(e.signal, e.value, e.baseline, e.unit, gpu=e.gpu, others=e.others,
                detail=e.detail)
    return odd if s["odd"] > 0 else None


def _sm_fall(gpus: Iterable[int], sms: dict[int, float], base: Baseline) -> float | None:
    """How far the mean SM activity of ``gpus`` fell under their healthy mean, as a share of
    it (ranks waiting in a collective fall together); None where either is unknown."""
    gpus = tuple(gpus)
    now, healthy = _mean(sms.get(g) for g in gpus), _mean(base.gpu("sm", g) for g in gpus)
    return (healthy - now) / healthy if now is not None and healthy else None


def _one_job(subject: Subject, base_utils: dict[int, float]) -> bool:
    """Whether the subject's GPUs are one job's ranks.  GPUs whose processes are not visible
    are judged together as likely one job (a container's); healthy at levels far apart they
    are not one (a node's other pods: 93%, 59% and idle): no rank of theirs is out of step
    with "its peers"."""
    return subject.kind != "gpu" or not base_utils or \
        max(base_utils.values()) - min(base_utils.values()) <= t("unseen_job_spread_pts")


def _rank_off(subject: Subject, s: Strengths, v: Values, utils: dict[int, float],
              sms: dict[int, float], base: Baseline, say: Say) -> int | None:
    """A rank other than the job's first off the GPU while its peers spin in the collective
    (``v["paused_rank"]``): the job's first rank pauses by design (its checkpoint, its
    evaluation, its logging), another stops only when it is stuck (its host thread in a
    page-fault storm, its loader dead), and every step of the job waits for it.  It is the
    odd one out, however its clock or SM compare; detect holds it for ``rank_hang_s`` (for
    ``pause_s`` where that rank paused as long before and came back: a pause of its own)."""
    paused = v.get("paused_rank")
    if paused is None or paused == v.get("first_rank") or int(paused) not in utils:
        return None
    base_utils = {g: u for g in subject.gpus if (u := base.gpu("util", g)) is not None}
    if not _one_job(subject, base_utils):
        return None
    g = int(paused)
    s["odd"] = max(s.get("odd", 0.0), 0.8)
    peers = [k for k in subject.gpus if k != g]
    # (the peers are at 85%+ GPU-Util: spinning inside the collective keeps them "busy")
    s["peers_wait"] = max(0.4, ramp(_sm_fall(peers, sms, base), 0.1, 0.4))
    say("odd_util", utils[g], _others_median(utils, g), "%", gpu=g, others=_peers(utils, g))
    return g


def _usual_standing(values: dict[int, float], base: Baseline, name: str
                    ) -> dict[int, tuple[float, float]]:
    """Each GPU's healthy ``name`` and its peers' median of theirs, where the baseline knows
    every GPU of ``values`` (a standing read against peers the baseline never saw is none)."""
    healthy = {g: h for g in values if (h := base.gpu(name, g)) is not None}
    if len(healthy) < len(values):
        return {}
    return {g: (healthy[g], peers) for g, peers in _others_medians(healthy).items()}


def _odd_part(parts: list[float], why: dict[int, list[Evidence]], g: int, x: float,
              signal: str, values: dict[int, float], unit: str) -> None:
    """One way GPU ``g`` stands out (strength ``x``), its evidence kept where it is clear
    (the first reading of a signal: the tick's own before the span's mean)."""
    parts.append(x)
    if x > 0.3 and not any(e.signal == signal for e in why.get(g, ())):
        why.setdefault(g, []).append(Evidence(signal, values[g], _others_median(values, g),
                                              unit, g, others=_peers(values, g)))


def _util_under_peers(utils: dict[int, float], base_utils: dict[int, float]
                      ) -> dict[int, float]:
    """How many points each GPU's GPU-Util sits under its peers' median beyond the healthy
    gap (``base_utils``: each GPU's baseline); none for a GPU unless its peers are at 90%+
    (spinning in the collective) and it still works (a rank at a few % is off the GPU
    altogether: a pause or an idle rank, judged apart)."""
    peers = _others_medians(utils)
    base_peers = _others_medians({k: u for k, u in base_utils.items() if k in utils})
    return {g: (peers[g] - u) - max(0.0, base_peers[g] - base_utils[g])
            for g, u in utils.items()
            if g in peers and peers[g] >= 90.0 and u >= 50.0 and g in base_peers}


def _power_over_peers(powers: dict[int, float], base: Baseline, g: int) -> float | None:
    """GPU ``g``'s power over its peers' median, against the same proportion at their
    healthy baselines (a card that always draws a little more is no odd one); None unless
    ``g`` still draws 90% of its own healthy busy power while its peers fell under theirs
    (a lighter phase, or cards of different limits drawing alike, moves them all)."""
    if g not in powers or len(powers) < 2:
        return None
    base_powers = {k: w for k in powers if (w := base.gpu("power", k))}
    if len(base_powers) < len(powers) or powers[g] < 0.9 * base_powers[g]:
        return None
    peers = [k for k in powers if k != g]
    if any(powers[k] > 0.9 * base_powers[k] for k in peers):
        return None
    now_peers, base_peers = _others_median(powers, g), _others_median(base_powers, g)
    if not now_peers or not base_peers:
        return None
    return powers[g] / now_peers / (base_powers[g] / base_peers)


def _idle_rank(subject: Subject, points: tuple[Point, ...], utils: dict[int, float],
               sms: dict[int, float], s: Strengths, v: Values, say: Say) -> tuple[int, ...]:
    """One GPU of a multi-GPU job mostly off the GPU while the others spin in the collective
    at full util on few SMs: that rank's host side (its data loader) holds the job back.
    A rank that does no step at all in the window is a pause (rank 0 checkpointing, an eval
    on one rank): ``v["paused_rank"]`` says so, and only a long one is judged (a hang)."""
    horizon = points[-1].time_mono_s - WINDOW_S
    window = [p for p in points if p.time_mono_s > horizon]
    best, where, paused = 0.0, None, None
    recent_since = points[-1].time_mono_s - 4.0
    for g in subject.gpus:
        peers = [x for k, x in utils.items() if k != g]
        if g not in utils or not peers or min(peers) < 85:
            continue
        chunks = [p.util_samples_pct.get(g) or ((p.util_pct[g],) if g in p.util_pct else ())
                  for p in window]
        series = [x for chunk in chunks for x in chunk]
        if len(series) < 6:
            continue
        recent = [x for p, chunk in zip(window, chunks) if p.time_mono_s > recent_since
                  for x in chunk]
        if recent and max(recent) < t("sawtooth_busy_pct") \
                and sum(recent) / len(recent) < t("sawtooth_idle_pct"):
            # no step at all for seconds (a copy's kernel caught by a sample now and then is
            # no step): a pause (a checkpoint), not a stall
            paused = g
            continue
        mean = sum(series) / len(series)
        busy = sum(1 for x in series if x >= t("sawtooth_busy_pct")) / len(series)
        strength = ramp(mean, 70.0, 40.0)
        if strength <= 0 or busy < 0.05:
            continue
        if strength > best:
            best, where = strength, g
    peers_sm = [x for k, x in sms.items() if k != where] if where is not None else []
    waiting = ramp(1.0 - (sum(peers_sm) / len(peers_sm)) / max(sms.get(where, 0.0), 1.0) if
                   peers_sm and sms.get(where) else 0.5, 0.0, 0.5) if where is not None else 0.0
    s["rank_idle"] = best * max(waiting, 0.5)
    if paused is not None:
        v["paused_rank"] = float(paused)
    if where is not None and s["rank_idle"] >= 0.3:
        say("rank_idle", utils[where], None, "%", gpu=where,
            others=tuple(k for k in sorted(utils) if k != where))
        return (where,)
    return ()


def _peers(values: dict[int, float], g: int) -> tuple[int, ...]:
    return tuple(k for k in sorted(values) if k != g)


def own_and_sharers(procs: Iterable[ProcRef], pids: frozenset[int]
                    ) -> tuple[list[ProcRef], list[ProcRef]]:
    """(the subject's processes on one GPU, the others that can take its SM time).  MIG
    isolates instances: a job on another instance of the same card shares no SMs with the
    subject; one whose instance is not known might."""
    own = [p for p in procs if p.pid in pids]
    own_migs = {p.mig_index for p in own}
    others = [p for p in procs if p.pid not in pids and (
        p.mig_index is None or None in own_migs or p.mig_index in own_migs)]
    return own, others


def _shared(subject: Subject, now: Point, base: Baseline, s: Strengths, say: Say) -> tuple[int, ...]:
    """Another process on the subject's GPU taking SM time (NVML per-process utilization),
    or, where that is not given, a new process holding memory there."""
    if not subject.pids:
        return ()
    found = []
    strength = own_drop = 0.0
    for g in subject.gpus:
        own, others = own_and_sharers(now.gpu_procs.get(g, ()), subject.pids)
        other_sm = sum(p.sm_util_pct for p in others if p.sm_util_pct is not None)
        known = base.known_pids.get(g, frozenset())
        new = [p for p in others if p.pid not in known and (p.mem_bytes or 0)
               >= t("shared_mem_bytes")] if base.ready else []
        other_base = base.gpu("other_sm", g) or 0.0
        x = ramp(other_sm - other_base, t("shared_sm_pct"), 30.0)
        if not x and new and all(p.sm_util_pct is None for p in new):
            x = 0.6
        own_sm = [p.sm_util_pct for p in own if p.sm_util_pct is not None]
        own_base = base.gpu("own_sm", g)
        if own_sm and own_base:
            own_drop = max(own_drop, ramp((own_base - sum(own_sm)) / own_base, 0.1, 0.4))
        if x > 0:
            found.append(g)
            strength = max(strength, x)
            taker = max(others, key=lambda p: (p.sm_util_pct or 0.0, p.mem_bytes or 0))
            say("shared", taker.sm_util_pct, other_base, "%", gpu=g,
                detail=f"{taker.pid} {taker.name}".strip())
            if own_sm and own_base:
                say("own_sm", sum(own_sm), own_base, "%", gpu=g)
    s["shared"] = strength
    s["own_drop"] = own_drop
    return tuple(found)


def _sawtooth(subject: Subject, points: tuple[Point, ...], base: Baseline, s: Strengths,
              v: Values, say: Say) -> tuple[int, ...]:
    """Steps and waits alternating, on any GPU of the subject: its util samples (the driver's,
    or per tick) switch between busy and idle again and again, or, where waiting ranks spin
    in a collective at 100% util (DDP: every rank waits for the slowest one's input), its
    SM activity does; the mean well under its own.  One switch (a checkpoint starting, a job
    ending) is no saw-tooth.  Returns the GPUs that show it, the strongest first."""
    horizon = points[-1].time_mono_s - WINDOW_S
    window = [p for p in points if p.time_mono_s > horizon]
    found: dict[int, float] = {}
    detail: dict[int, tuple[float, float, str]] = {}
    for g in subject.gpus:
        util_base = base.gpu("util", g) or base.get("util")
        sm_base = base.gpu("sm", g) or base.get("sm")
        sm_series = [p.sm_active_pct[g] for p in window if g in p.sm_active_pct]
        util_series = _util_steps(window, g, util_base, sm_base)
        best = 0.0
        for series, own_base, scale, label in (
                (util_series, util_base, 100.0, "GPU-Util"),
                (sm_series, sm_base, None, "SM active")):
            x, mean = _alternation(series, own_base, scale, subject.kind != "engine")
            if x > best:
                best = x
                detail[g] = (mean, own_base or 0.0,
                             f"{label} {min(series):.0f}-{max(series):.0f}")
        if best > 0:
            found[g] = best
    if not found:
        return ()
    utils = [u for g in subject.gpus for p in window if (u := p.util_pct.get(g)) is not None]
    if subject.kind != "engine" and utils and phase_of_its_own(base, statistics.fmean(utils)):
        return ()  # (its samples' spread around a level the job holds is that phase's noise)
    ranked = sorted(found, key=lambda g: -found[g])
    s["sawtooth"] = found[ranked[0]]
    mean, own_base, text = detail[ranked[0]]
    v["util_window"] = mean
    if s["sawtooth"] >= 0.3:
        say("sawtooth", mean, own_base, "%", gpu=ranked[0] if len(subject.gpus) > 1 else None,
            detail=text)
    return tuple(g for g in ranked if found[g] >= 0.5 * found[ranked[0]])


def phase_of_its_own(base: Baseline, util: float | None) -> bool:
    """A GPU-Util level far from the job's usual one (`job_idle_pts` off its median) that it
    held for `job_phase_share` of its healthy window: a phase it returns to (an RL loop's
    rollouts at a third of its training phases' GPU-Util, their samples spread 15-60%
    around it), not its steps waiting.  It reaches as far as the window holds that level:
    ticks 20 points under the usual are not learned, so it is the first cycles (rollouts
    seen while learning, or in a window whose median sits between the phases); later ones
    rely on `job_idle_alone_hold_s`.  (Near its usual level, a saw-tooth is a milder
    stall's, whatever the window's mean.)"""
    usual = base.get("util")
    return util is not None and usual is not None and abs(usual - util) >= t(
        "job_idle_pts") and base.share_near("util", util, t("job_phase_pts")) >= t(
        "job_phase_share")


def _util_steps(window: list[Point], g: int, util_base: float | None,
                sm_base: float | None) -> list[float]:
    """GPU ``g``'s util samples over the window, those of a tick idle but for some samples
    whose SMs did not back them read as idle: a tick's busy samples are steps when its SMs
    (or a neighbour's: the two counters' windows are not aligned) were active at
    `sawtooth_sm_backing` of what that busy time makes them at the job's own SM per busy
    point.  A job between steps for another reason (a checkpoint's copies to the host) reads
    100% on one NVML sample in five or ten with its SMs at 1%: one switch to idle, not steps
    coming again and again.  Without SM activity the samples are believed."""
    series: list[float] = []
    per_busy = sm_base / util_base if sm_base and util_base else None
    idle, backing = t("sawtooth_idle_pct"), t("sawtooth_sm_backing")
    for i, p in enumerate(window):
        samples = p.util_samples_pct.get(g) or ((p.util_pct[g],) if g in p.util_pct else ())
        # (only a tick idle but for some samples: one busy throughout is no trough of a
        # saw-tooth, and a hollow phase, busy with the SMs idle, is the SM counters' finding)
        if per_busy is not None and len(samples) > 1 and min(samples) <= idle < max(samples) \
                and g in p.sm_active_pct:
            limit = backing * per_busy * sum(samples) / len(samples)
            if not any((q.sm_active_pct.get(g) or 0.0) >= limit
                       for q in window[max(0, i - 1):i + 2]):
                samples = tuple(0.0 for _ in samples)
        series.extend(samples)
    return series


def _alternation(series: list[float], own_base: float | None,
                 scale: float | None, job: bool = False) -> tuple[float, float]:
    """(strength, mean) of a series that switches between busy and idle: thresholds are
    util's fixed ones (70 / 25) or, for SM activity, relative to the job's own level.  A
    ``job`` (no serving engine, whose util follows its arrivals) waits in shallower troughs
    too: NVML's samples average waits shorter than a sample into 30-60% readings."""
    if len(series) < 6 or not own_base or own_base < (t("sawtooth_idle_pct") if scale
                                                     else t("sawtooth_sm_floor_pct")):
        return 0.0, 0.0  # (a normal that is itself idle: a job loading, no steps to wait)
    trough = max(t("sawtooth_idle_pct"), min(t("sawtooth_job_trough") * own_base,
                                             own_base - 35.0)) if job else t("sawtooth_idle_pct")
    idle_at = trough if scale else 0.25 * own_base
    # (a job's step is as busy as its healthy steps were: a trainer at 58% GPU-Util on the
    # H200 read 63-69% in its steps, under the fixed 70)
    busy_at = (min(t("sawtooth_busy_pct"), max(idle_at + 20.0, 0.8 * own_base)) if job
               else t("sawtooth_busy_pct")) if scale else 0.7 * own_base
    if min(series) > idle_at:
        return 0.0, 0.0  # never idle in the window (the common, cheap case)
    mean = sum(series) / len(series)
    busy = sum(1 for x in series if x >= busy_at) / len(series)
    idle = sum(1 for x in series if x <= idle_at) / len(series)
    changes, state = 0, None
    for x in series:
        now = "busy" if x >= busy_at else "idle" if x <= idle_at else state
        if state is not None and now != state:
            changes += 1
        state = now
    # (a job that lost a fifth of its busy time to waits has lost a fifth of its steps)
    low = ramp(mean, 0.9 * own_base, 0.7 * own_base) if job else \
        ramp(mean, 0.85 * own_base, 0.6 * own_base)
    alternating = ramp(min(busy, idle), 0.5 * t("sawtooth_share"), t("sawtooth_share")) \
        * ramp(changes, t("sawtooth_changes") - 2, t("sawtooth_changes"))
    if job:
        # a job starved of its input idles most of the time between short steps (one busy
        # sample in ten on the H200's DataLoader stall): steps still come again and again
        starved = ramp(busy, 0.5 * t("sawtooth_job_busy"), t("sawtooth_job_busy")) \
            * ramp(idle, 0.5, 0.7) * ramp(changes, t("sawtooth_changes"),
                                          t("sawtooth_changes") + 2)
        alternating = max(alternating, starved)
    return alternating * low, mean


def _jump(points: tuple[Point, ...], base: Baseline, v: Values) -> None:
    """The batch at least doubled from one reading to the next with no new prompt work:
    likely n sequences of one request (vLLM and SGLang run n > 1 as n requests added in one
    step, sharing a prompt).  A burst of arrivals can look the same, so it is only evidence
    for a cause, never a trigger.  Records ``jump_from``, the batch before it."""
    now = points[-1]
    if len(points) < 2 or now.requests_running is None:
        return
    before = points[-2].requests_running
    if before is None or before < 3 or now.requests_running - before < max(t("fanout_min"),
                                                                            before):
        return  # (from an idle engine, any arrivals double the batch)
    prompt = now.compute_prompt_tokens_per_s
    prompt_base = base.get("prompt")
    if prompt is not None and prompt_base and prompt > 1.5 * prompt_base \
            and not _one_prompt(now, now.requests_running - before):
        return  # new prompts came with the new sequences: arrivals
    earlier = points[-3].requests_running if len(points) >= 3 else None
    if earlier is not None and before - earlier > 0.25 * (now.requests_running - before):
        return  # the batch was already climbing: a ramp of arrivals, not one step of n
    v["jump_from"] = before


def _one_prompt(now: Point, added: float) -> bool:
    """The new sequences' prompts were one prompt: all but about one of them read it from
    the prefix cache (n sequences of one request share its blocks), where arrivals compute
    theirs, or hit the cache at its usual rate (a shared system prompt is a part of each)."""
    raw, computed = now.prompt_tokens_per_s, now.compute_prompt_tokens_per_s
    if raw is None or computed is None or now.cached_prompt_tokens_per_s is None or added < 3:
        return False
    return computed <= 2.0 * raw / added


def _engine(subject: Subject, points: tuple[Point, ...], base: Baseline,
            windows: dict[str, HistDelta], config: DetectConfig, s: Strengths, v: Values,
            say: Say, tokens_smooth: float | None = None,
            waiting_before: float | None = None,
            before: Mapping[str, float] | None = None) -> dict[str, bool]:
    now = points[-1]
    before = before or {}
    accept_before, ctx_before = before.get("spec_accept"), before.get("kv_per_seq")
    running = now.requests_running
    waiting = _scalar(points, "requests_waiting")
    running_base, waiting_base = base.get("running"), base.get("waiting")
    v.update(running=running, waiting=waiting, running_base=running_base,
             waiting_base=waiting_base, running_mean=_scalar(points, "requests_running", 8))
    # demand is still there when the queue grew or the batch did not shrink
    kept = True
    if running_base is not None and running is not None and waiting_base is not None \
            and waiting is not None:
        grew = waiting - waiting_base >= max(2.0, 0.1 * running_base)
        kept = grew or running >= t("demand_kept") * running_base
    v["demand_kept"] = float(kept)
    # steady service: the batch of the newer half of the last 10 s like that of the older
    # half (a jump, such as n=8 fanning out into eight sequences, is a change to judge, not a
    # normal to learn; a ramp as gputop starts, load still arriving, is no normal either)
    span = [p for p in points if p.time_mono_s > now.time_mono_s - 10.0
            and p.requests_running is not None]
    if len(span) >= 2:
        middle = (span[0].time_mono_s + span[-1].time_mono_s) / 2
        # span holds points with requests_running only
        older = [cast(float, p.requests_running) for p in span if p.time_mono_s <= middle]
        newer = [cast(float, p.requests_running) for p in span if p.time_mono_s > middle]
        if older and newer:
            a, b = statistics.median(older), statistics.median(newer)
            v["batch_steady"] = float(abs(b - a) <= 3 or 1 / 1.5 <= (b + 1) / (a + 1) <= 1.5)
    if subject.kind == "trainer":
        tps = work_rate_now(now)
        tps_base = base.get("work")
        if tps is not None and tps_base:
            ratio = tps / tps_base
            v.update(tokens=tps, tokens_base=tps_base, tokens_ratio=ratio)
            s["work_down"] = ramp(ratio, 0.85, 0.45)
            # no step at all for a good while: the job is doing something else (an eval
            # pass, writing a checkpoint), which a waiting step would not look like: those
            # come slower, not never
            since = work_since_s(now)
            if since is not None and since >= max(t("work_stopped_s"),
                                                  3.0 * cast(float, now.work_step_s)):
                v["work_stopped_s"] = since
            # the same busy time doing as much less work as the SMs it occupies: kernels
            # smaller than they were (a config change launching per-tensor kernels), not a
            # wait (util would fall) nor a slower clock (the SMs stay occupied)
            share = v.get("sm_share_ratio")
            if share is not None and share <= 0.85 and abs(ratio - share) <= 0.15:
                # (both must hold: the weaker of the two, not their product, which a
                # quarter lost on both counts read as 0.4)
                s["hollow_match"] = min(ramp(1.0 - share, 0.15, 0.3), ramp(ratio, 0.85, 0.7))
            elif share is None and (power := v.get("power_ratio")) is not None \
                    and (v.get("util_base") or 0.0) - (v.get("util") or 0.0) < 5.0:
                # no SM counter: the busy time's power stands in for the SMs it occupies (it
                # has an idle floor, so it falls less than the work: no 1:1 match asked);
                # clocks held, or the power fell with them
                s["hollow_match"] = ramp(1.0 - power, 0.15, 0.3) * ramp(ratio, 0.85, 0.7) \
                    * (1.0 - s.get("clock_all", 0.0))
            if ratio <= 0.9:  # (a tenth less work is worth saying beside a finding)
                say("work", tps, tps_base, now.work_unit or "tokens")
    else:
        tps = _scalar(points, "tokens_per_s") if tokens_smooth is None else tokens_smooth
        tps_base = base.get("tokens")
        v.update(tokens=tps, tokens_base=tps_base)
        if tps is not None and tps_base:
            ratio = tps / tps_base
            v["tokens_ratio"] = ratio
            if now.tokens_per_s is not None:
                v["tokens_ratio_now"] = now.tokens_per_s / tps_base
            s["tokens_down"] = ramp(ratio, 0.85, 0.4) if kept else 0.0
            if ratio <= 0.7:
                say("tokens", tps, tps_base, "tok/s")

    if running_base is not None and running is not None:
        s["running_flat"] = ramp(running / max(running_base, 1.0), 2.0, 1.25) \
            if running > running_base * 1.25 + 1 else 1.0
        # Little's law: a batch swollen at the same tokens/s is each sequence slower.  Decode
        # steps grow with the batch as its ITL p50 does (itl50_load_exponent), so tokens/s
        # should grow with the batch to that power less one; far under it, the sequences wait
        out_ratio = v.get("tokens_ratio")
        grown_batch = running >= 1.3 * running_base + 2
        v["batch_grown"] = float(grown_batch)
        if out_ratio is not None and grown_batch:
            grown = running / max(running_base, 1.0)
            explained = _per_sequence(out_ratio, grown)
            v["seq_rate_ratio"] = explained
            s["seq_slow"] = ramp(explained, 0.85, 0.6)
    if waiting is not None and waiting_base is not None:
        scale = max(t("queue_growth_min"), 0.5 * (running_base or 0.0))
        growth = waiting - waiting_base
        s["queue"] = ramp(growth, 0.5 * scale, 2.0 * scale)
        s["queue_soft"] = ramp(growth, 0.0, scale)
        # against the engine's own reading 5 s before (scraped every 15 s, the ticks between
        # repeat one reading, which is no queue holding still); else the point 5 s back
        earlier = waiting_before if waiting_before is not None else next(
            (p.requests_waiting for p in reversed(points)
             if p.time_mono_s <= now.time_mono_s - 5.0 and p.requests_waiting is not None),
            None)
        v["queue_rising"] = float(earlier is not None and waiting > earlier)
        v["queue_growth"] = growth
        v["queue_scale"] = scale
        if growth >= 0.5 * scale:
            say("waiting", waiting, waiting_base, detail=f"{running or 0:.0f}")

    # the batch the latency is allowed to grow with: a batch swollen by more arrivals (or
    # by a queue admitted) is a longer step by physics; one swollen while requests finish at
    # their usual rate and none wait is the service slowing (Little's law: each request
    # stays longer, so more are in flight), and is judged at the batch demand explains
    load = _demand_batch(points, base, running, waiting, running_base, waiting_base)
    v["load"] = load
    slow_reading = {}
    for name in ("itl", "ttft"):
        if name == "itl" and now.itl_per_request:
            # a tail of per-request means is a tail over the requests' shapes (a few replies
            # of one token each carry their own prefill in their time per token): no trigger
            # of its own (their typical value stands for ITL: the typical step below)
            continue
        window = windows.get(name)
        p99 = now.latency.get(name, (None, None))[1]
        expected = base.latency_at(name, load)
        if window is None or p99 is None or not expected:
            continue
        ratio = p99 / expected
        fire = config.latency_factor * expected
        slow = enginehist.count_above(window, fire)
        share = slow / window.total if window.total else 0.0
        clear_slow = enginehist.count_above(window, config.latency_clear_factor * expected)
        gate = slow >= 3 and share >= t("min_slow_share")
        v[f"{name}_p99"], v[f"{name}_expected"], v[f"{name}_ratio"] = p99, expected, ratio
        v[f"{name}_gate"] = float(gate)
        v[f"{name}_clear_gate"] = float(clear_slow >= 3 and clear_slow / window.total
                                        >= t("min_slow_share"))
        s[name] = ramp(ratio, 1.3, 2.5) * min(1.0, share / t("min_slow_share"))
        fresh = now.engine_hist.get(name)
        slow_reading[name] = now.engine_fresh and fresh is not None \
            and enginehist.count_above(fresh, fire) >= 1
        if ratio >= config.latency_clear_factor and gate:
            say(name, p99, expected, "s", detail=f"{ratio:.1f}")

    # who the tokens go to: the same tokens/s finishing far fewer requests, while every
    # token is slower, is the batch's work going to a few requests (n sequences of one)
    finished = _scalar(points, "requests_per_s", 5)
    finished_base = base.get("finished")
    if finished is not None and finished_base and tps is not None and tps_base:
        v["finished_ratio"] = finished / finished_base
        per_request = (tps / max(finished, 1e-3)) / (tps_base / finished_base)
        v["tokens_per_request_ratio"] = per_request
        s["hog"] = ramp(per_request, 1.5, 3.0)

    # speculative decoding: the share of draft tokens the target model accepts, over the
    # last few readings (each step verifies k drafts; rejected ones are work thrown away)
    accept = _spec_acceptance(points)
    v["spec_accept"] = accept
    accept_base = base.get("spec_accept")
    if accept_before is not None and (accept_base is None or accept_base < accept_before):
        # how well the drafts match the target is the models', not the load's: the run
        # before a restart is its normal until this one does better (a canary that brought
        # new target weights beside the old draft accepts a tenth of what it did)
        accept_base = accept_before
    if accept is not None and accept_base:
        s["spec_drop"] = ramp(1.0 - accept / accept_base, 0.25, 0.6)
        # almost every draft thrown away: slower than no speculation, whatever else reads
        s["spec_waste"] = s["spec_drop"] * ramp(accept, 0.25, 0.1)
        # the tokens each sequence keeps per step, against its usual, at one draft token
        # per step (the least a fall in acceptance can cost: longer drafts lose more)
        v["spec_accept_base"] = accept_base
        v["spec_yield"] = (1.0 + accept) / (1.0 + accept_base)
        if s["spec_drop"] >= 0.5:
            say("spec_accept", accept, accept_base)

    # the typical step: every token slower, not only the tail
    p50 = now.latency.get("itl", (None, None))[0]
    typical = base.latency_at("itl50", load)
    if p50 is not None and typical:
        ratio = p50 / typical
        v["step_ratio"] = ratio
        s["step"] = ramp(ratio, 1.4, 2.5)
        if now.itl_per_request:  # each request's mean time per token is its ITL
            s["itl"] = ramp(ratio, 1.3, 2.5)
        if ratio >= t("step_slow"):
            say("step", p50, typical, "s", detail=f"{ratio:.1f}")
    elif p50 is None:
        _token_time(points, base, s, v, say)
    _prefill_share(points, base, s, v, say, latency_known=p50 is not None)
    # ...and the window's exact mean (its sum over its count) against its own: a step time
    # straddling a bucket bound (25 ms to 34 ms across vLLM's 25 ms) leaves the p50 in the
    # lower bucket, not the mean
    itl_window = windows.get("itl")
    mean = itl_window.mean if itl_window is not None else None
    v["itl_mean"] = mean
    usual_mean = base.latency_at("itlmean", load) if mean is not None else None
    if mean is not None and usual_mean:
        mean_ratio = v["itl_mean_ratio"] = mean / usual_mean
        if mean_ratio >= t("step_reads_slow") and (v.get("step_ratio") or 0.0) < t(
                "step_reads_slow"):
            say("itl_mean", mean, usual_mean, "s", detail=f"{mean_ratio:.1f}")

    prompt = _scalar(points, "compute_prompt_tokens_per_s", 5)
    prompt_base = base.get("prompt")
    # the prompt length of the requests admitted lately: computed prompt tokens per first
    # token (each request gets one TTFT observation): a burst of ordinary prompts is more
    # arrivals, long prompts are what prefill interference is made of
    ttft_window = windows.get("ttft")
    length_ratio = None
    if prompt is not None and ttft_window is not None and ttft_window.total >= 3:
        length = prompt * config.latency_window_s / ttft_window.total
        v["prompt_len"] = length
        length_base = base.get("prompt_len")
        if length_base:
            length_ratio = length / length_base
            v["prompt_len_ratio"] = length_ratio
    if prompt is not None and prompt_base:
        ratio = prompt / prompt_base
        v["prompt_ratio"] = ratio
        longer = ramp(length_ratio, 1.2, 2.0) if length_ratio is not None else 1.0
        # the step's token budget taken by prompts: prefill throughput is bounded by the
        # budget, so a storm of long prompts may only double prompt tokens/s while the
        # decodes it starves fall to a fraction; prompt tokens per generated token against
        # their healthy proportion says so where the prompt rate alone does not (a surge of
        # ordinary requests moves both together; one request's n sequences, prompts not)
        if tps is not None and tps > 0 and tps_base:
            mix = ratio / (tps / tps_base)
            v["prompt_mix_ratio"] = mix
            s["prefill_mix"] = ramp(mix, 2.0, 5.0) * ramp(ratio, 1.2, 1.8)
        # (the GPU share the extra prompts take, where the weights and the card are known:
        # a baseline that crept up with a slow onset still leaves that share in sight)
        _prefill_cost(now, prompt, prompt_base, s, v)
        s["prefill"] = max(ramp(ratio, 1.5, 4.0), s.get("prefill_mix", 0.0),
                           s.get("prefill_time", 0.0), s.get("prefill_cost", 0.0)) * longer
        # more prompts of the usual length: a surge of arrivals, the engine at its capacity
        s["surge"] = ramp(ratio, 1.5, 2.5) * (1.0 - longer)
        if ratio >= t("prefill_ratio"):
            cached = _scalar(points, "cached_prompt_tokens_per_s", 5)
            say("prefill", ratio, None, "x",
                detail="" if not cached else f"{cached:,.0f} cached tok/s not counted")

    kv = now.kv_usage_ratio
    if kv is not None:
        kv_base = base.get("kv")
        risen = ramp(kv - kv_base, 0.25, 0.5) * ramp(kv, 0.55, 0.75) if kv_base is not None \
            else 0.0
        # risen far above its normal but not full is a pool filling, not yet one refusing
        # blocks (a queue beside it may be max_num_seqs'): it counts for less
        s["kv_full"] = max(ramp(kv, 0.85, 0.97), 0.6 * risen)
        v["kv"], v["kv_base"] = kv, kv_base
        # the KV each decode step reads: every running sequence's cache, so the pool's use is
        # the bytes per step beside the weights; per sequence, it is the context length (a
        # longer context, not a larger batch of the usual ones, is what a step reads more of)
        kv_smooth, batch = _scalar(points, "kv_usage_ratio"), _scalar(points, "requests_running")
        ctx_base = base.get("kv_per_seq")
        if kv_smooth is not None and batch and batch >= 1 and ctx_base and kv_base is not None:
            ctx_ratio = (kv_smooth / batch) / ctx_base
            v["ctx_ratio"] = ctx_ratio
            if ctx_before:
                # (against the contexts the engine served before it restarted)
                v["ctx_ratio_before"] = (kv_smooth / batch) / ctx_before
                s["kv_read_before"] = ramp(v["ctx_ratio_before"], 1.5, 3.0)
            s["kv_read"] = ramp(kv_smooth - kv_base, 0.1, 0.3) * ramp(ctx_ratio, 1.5, 3.0)
            if s["kv_read"] >= 0.5:
                say("kv_read", kv_smooth, kv_base, "ratio", detail=f"{ctx_ratio:.1f}")
        _kv_bytes(now, kv_smooth, kv_base, s, v)
    rates = [(p.preemptions_per_s or 0.0) + (p.retractions_per_s or 0.0) for p in points[-5:]
             if p.preemptions_per_s is not None or p.retractions_per_s is not None]
    if rates:
        rate = sum(rates) / len(rates)
        rate_base = base.get("preempt") or 0.0
        over = rate > max(t("preempt_per_s"), 3 * rate_base)
        share = _preempted_share(points, rate_base)
        if share is not None:
            v["preempt_share"] = share
        if over or share is not None:
            s["preempt"] = max(ramp(rate, t("preempt_per_s"), 2.0) if over else 0.0,
                               ramp(share, 0.05, 0.3))
            retract = any(p.retractions_per_s for p in points[-5:])
            say("preempt", rate, rate_base, "/s", detail="retractions" if retract else "")
            if s.get("kv_full", 0.0) >= 0.5:
                say("kv", kv, base.get("kv"), "ratio")
    return slow_reading


def token_slowdown(v: Values) -> float | None:
    """How much slower every token is than its normal: the larger of the ITL p50's ratio and
    the window's exact mean's (a step time moving inside one histogram bucket leaves the p50
    where it was, not the mean); None where neither is known."""
    return max((r for r in (v.get("step_ratio"), v.get("itl_mean_ratio")) if r is not None),
               default=None)


def batch_decodes(v: Values) -> bool:
    """Tokens/s at least half what the batch's growth over its slower step implies: each
    sequence of the batch gets its token every step.  Far under it, most of the batch waits
    (admitted but not decoded, a scheduler refilling after a surge): the typical step does
    not account for the output, and no work beside the forward pass is shown."""
    tokens, running, base, step = (v.get("tokens_ratio"), v.get("running"),
                                   v.get("running_base"), v.get("step_ratio"))
    if tokens is None or running is None or not base or not step:
        return True
    return tokens >= 0.5 * (running / base) / step


def _preempted_share(points: tuple[Point, ...], rate_base: float) -> float | None:
    """Preemptions (and retractions) per finished request over ``preempt_span_s``: a pool
    of long sequences (9k-token reasoning) finishes a request every few seconds and
    preempts about as often, a rate under any per-second bar but a recompute for every
    request served.  None under ``preempt_min`` of them (one is a burst) or at the
    engine's usual rate."""
    since = points[-1].time_mono_s - t("preempt_span_s")
    recent = [p for p in points if p.time_mono_s >= since
              and (p.preemptions_per_s is not None or p.retractions_per_s is not None)]
    if len(recent) < 2:
        return None
    span_s = recent[-1].time_mono_s - recent[0].time_mono_s
    rate = cast(float, _mean((p.preemptions_per_s or 0.0) + (p.retractions_per_s or 0.0)
                             for p in recent))  # (recent is not empty)
    finished = _mean(p.requests_per_s for p in recent)
    if span_s < 0.5 * t("preempt_span_s") or rate * span_s < t("preempt_min") \
            or rate <= 3 * rate_base or finished is None:
        return None
    share = rate / max(finished, 1.0 / span_s)  # (none finished: as if one had)
    return share if math.isfinite(share) else None


def _toward(ratio: float | None, limit: float) -> float:
    """0..1: how far ``ratio`` has moved from 1 to ``limit`` (a milder cost's measure: 1 at
    the limit, 0 halfway there or nearer 1); 0 where unknown."""
    return ramp(ratio, (1.0 + limit) / 2, limit)


def _per_sequence(out_ratio: float, grown: float) -> float:
    """Tokens/s against its baseline per sequence of a batch ``grown`` x its baseline's:
    decode steps lengthen with the batch as the ITL p50 does (itl50_load_exponent), so each
    sequence's rate moves by the batch to that power less one."""
    return float(out_ratio / grown ** (1.0 - t("itl50_load_exponent")))


def _util_fall(v: Values) -> float | None:
    """GPU-Util points under the subject's baseline (None where either is unknown)."""
    util, util_base = v.get("util"), v.get("util_base")
    return None if util is None or util_base is None else util_base - util


def _crowded(queue: float | None, queue_base: float | None, cpus: int | None,
             host_cpus: int | None) -> int | None:
    """The CPUs more tasks are runnable than (None: no crowd).  The run queue is the whole
    host's: a tree held to a few of many CPUs (a cpuset, a pinned pod) is crowded when the
    host's queue exceeds all its CPUs, or rose over its baseline by more than the tree's
    own CPUs (busy loops pinned onto them: then its CPUs); a host queue of 4 on 16 CPUs is
    no crowd for a trainer on 2 of them (measured on an H200 box: it read its DataLoader
    stall as host contention)."""
    if queue is None or cpus is None:
        return None
    if host_cpus is None or host_cpus <= cpus:
        return cpus if queue > cpus else None
    if queue > host_cpus:
        return host_cpus
    return cpus if queue > cpus and queue_base is not None and queue - queue_base >= cpus \
        else None


def _host(subject: Subject, points: tuple[Point, ...], base: Baseline, s: Strengths,
          v: Values, say: Say) -> float:
    """0..1: the CPU is contended, from what /proc gives without root or eBPF, each against
    the healthy baseline (a CPU-bound engine is always busy; what matters is what changed):
    the engine's (or pinned) tree getting less CPU than it had while the run queue is above
    the CPUs (measured on a real vLLM with its core crowded: its CPU halved, its involuntary
    switches *fell*, as it ran less), CPU pressure rising, the run queue growing, and
    involuntary context switches jumping (a launch thread preempted often)."""
    now = points[-1]
    score = 0.0
    queue = _scalar(points, "run_queue")
    queue_base = base.get("run_queue")
    cpus = now.cpus
    over = _crowded(queue, queue_base, cpus, now.host_cpus)
    crowded = over is not None
    mine = subject.has_engine or bool(subject.pids & now.pinned_pids)
    losses = []
    if mine:
        for name, key, label in (("tree_cpu_pct", "tree_cpu", "tree_cpu"),
                                 ("busiest_thread_pct", "busiest_thread", "busiest_thread")):
            value, b = _scalar(points, name), base.get(key)
            if value is not None and b is not None and b >= 30:
                losses.append(((b - value) / b, label, value, b))
    # an engine's threads using less CPU while each of its steps takes longer and its GPU
    # waits (less busy), demand kept: it is held back (a cgroup's CPU quota throttles it with
    # no crowd on the host to see).  Steps slowed by the GPU cost less CPU per second too,
    # but leave the GPU as busy; more host work of its own would use more CPU, not less
    held = ramp(v.get("step_ratio"), 1.2, 1.5) * (v.get("demand_kept") or 0.0) \
        * ramp(_util_fall(v), 10.0, 20.0) if subject.kind == "engine" and not crowded else 0.0
    if losses:
        loss, label, value, b = max(losses)
        s["cpu_lost"] = ramp(loss, 0.15, 0.5) * (1.0 if crowded else held)
        score += 0.4 * ramp(loss, 0.15, 0.5) * (1.0 if crowded or queue is None else 0.5) \
            + 0.4 * ramp(loss, 0.3, 0.5) * held
        if loss >= 0.3 and (crowded or held >= 0.5):
            say(label, value, b, "%", detail=f"{queue:.0f} {over}" if crowded else "held")
    # the tree's own cgroup quota running out: the kernel holds it back each period it
    # does, with no crowd on the host to see (no run queue, no PSI beyond its own)
    share = _scalar(points, "tree_throttled_share") if mine else None
    if share is not None:
        held_back = ramp(share - (base.get("throttled") or 0.0), 0.1, 0.4)
        s["cpu_lost"] = max(s.get("cpu_lost", 0.0), held_back)
        score += 0.7 * held_back
        if held_back >= 0.3:
            say("throttled", 100.0 * share, 100.0 * (base.get("throttled") or 0.0), "%",
                detail=f"{cores:g}" if (cores := _scalar(points, "tree_quota_cores")) else "")
    psi = _scalar(points, "cpu_pressure_pct")
    if psi is not None:
        b = base.get("psi") or 0.0
        score += 0.25 * ramp(psi - b, 10.0, 40.0)
        if psi - b >= 15:
            say("psi", psi, b, "%")
    if queue is not None and cpus:
        excess = queue / cpus - max(1.0, (queue_base or 0.0) / cpus)
        score += 0.2 * ramp(excess, 0.0, 2.0)
        if excess >= 1 and not losses:
            say("run_queue", queue, queue_base, detail=str(cpus))
    inv = _scalar(points, "tree_involuntary_per_s") if mine else None
    inv_base = base.get("involuntary")
    if inv is not None and inv_base is not None:
        ratio = inv / max(inv_base, 20.0)
        score += 0.15 * ramp(ratio, 1.5, 4.5)
        # preempted many times over while using less CPU: the CPU is taken from it (a quota
        # running out, a hog on its cores); a tree waiting on I/O, its input starved, uses
        # less CPU too, but its threads leave the CPU of their own accord (voluntarily)
        lost_share = max((x[0] for x in losses), default=0.0)
        s["preempted"] = ramp(ratio, 4.5, 20.0) * ramp(lost_share, 0.05, 0.2)
        score += 0.4 * s["preempted"]
        if ratio >= 2:
            say("involuntary", inv, inv_base, "/s")
    # a thread of the job pegged at one core: the input pipeline (or launch loop) is CPU-bound
    thread = now.pinned_thread_pct if subject.pids & now.pinned_pids else None
    if thread is None and subject.has_engine:
        thread = now.busiest_thread_pct
    procs = [r.cpu_pct for g in subject.gpus for r in now.gpu_procs.get(g, ())
             if r.pid in subject.pids and r.cpu_pct is not None]
    s["input_cpu"] = max(ramp(thread, 80.0, t("thread_busy_pct")),
                         ramp(max(procs, default=None), 85.0, 98.0) * 0.6)
    # ...pegged now and not in its healthy minutes: a trainer's main thread that always spins
    # at a core (waiting on the GPU in a busy loop) says nothing new when its counter stops
    # (one near a core in its healthy minutes, 85%, that reaches it is a loader run dry)
    s["input_cpu_new"] = s["input_cpu"] * (
        1.0 - ramp(base.get("busiest_thread"), t("thread_busy_pct"), 98.0))
    if thread is not None and thread >= t("thread_busy_pct"):
        say("input_thread", thread, base.get("busiest_thread"), "%")
    return min(1.0, score)


def _token_time(points: tuple[Point, ...], base: Baseline, s: Strengths, v: Values,
                say: Say) -> None:
    """An engine without latency histograms (llama.cpp) that counts its decode seconds:
    decode seconds per generated token is each sequence's mean time per token (its ITL).
    The counter moves when a slot finishes, so it is summed over the last readings."""
    recent = [p for p in points[-8:] if p.engine_kind in SEQUENCE_TIMED]
    decode = sum(p.decode_s_per_s or 0.0 for p in recent if p.tokens_per_s)
    tokens = sum(p.tokens_per_s or 0.0 for p in recent if p.decode_s_per_s is not None)
    if tokens > 0 and decode > 0:
        per_token = decode / tokens
        v["token_time"] = per_token
        usual = base.get("token_time")
        if usual:
            ratio = per_token / usual
            v["step_ratio"] = ratio
            s["step"] = ramp(ratio, 1.4, 2.5)
            if ratio >= t("step_slow"):
                say("token_time", per_token, usual, "s", detail=f"{ratio:.1f}")


def _prefill_share(points: tuple[Point, ...], base: Baseline, s: Strengths, v: Values,
                   say: Say, latency_known: bool) -> None:
    """An engine that counts the seconds it spends on prompts beside those on decodes
    (llama.cpp's slots, TGI's forward passes by method): the prompts' share of its time is
    its prefill, whatever its latency histograms say; the requests' phase times of another
    engine only stand in where it shows no typical token.  Summed over the last readings
    (a slot's counters move when it finishes)."""
    recent = [p for p in points[-8:] if p.decode_s_per_s is not None
              and (p.engine_kind in FORWARD_TIMED or not latency_known)]
    decode = sum(p.decode_s_per_s or 0.0 for p in recent)
    prefill = sum(p.prefill_s_per_s or 0.0 for p in recent)
    if decode + prefill > 0:
        share = prefill / (decode + prefill)
        v["prefill_share"] = share
        usual_share = base.get("prefill_share")
        if usual_share is not None:
            # risen by 0.15-0.4 of the engine's time, or 3-6x a small normal share
            s["prefill_time"] = max(ramp(share - usual_share, 0.15, 0.4),
                                    ramp(share / max(usual_share, 0.005), 3.0, 6.0)
                                    * ramp(share, 0.05, 0.1))
            s["prefill"] = s["prefill_time"]  # (the prompt rate, where known, may add to it)
            if s["prefill_time"] >= 0.5:
                say("prefill_time", share, usual_share)


def _prefill_compute(s: Strengths, v: Values) -> None:
    """Prefill is compute: a step that prefills long prompts runs tensor-core GEMMs, so on
    a GPU that counts them (GPM) tensor activity rises and DRAM's share of the step falls.
    Prompts that moved neither (prefix-cached, or cheap beside long-context decode reading
    every sequence's KV) are not what slowed the step: their prefill strength is damped."""
    # (GPM only: a memory controller's busy time alone is too coarse to judge by; and an
    # engine's own account of its time spent on prompts, llama.cpp's, is not second-guessed)
    if "tensor_up" not in s or v.get("dram_rise") is None or not s.get("prefill") \
            or s.get("prefill_time", 0.0) >= s["prefill"]:
        return
    flat = (1.0 - s["tensor_up"]) * ramp(v["dram_rise"], -10.0, -3.0)
    v["prefill_compute_flat"] = flat
    s["prefill"] *= 1.0 - 0.8 * flat


def _launch_gpus(points: tuple[Point, ...], gpus: tuple[int, ...]) -> tuple[int, ...]:
    """The job's GPUs whose own processes made the longest launch calls (a scheduler slice,
    half the worst or more), when only some did: one tensor-parallel rank's thread shares
    its core.  Empty when every rank stalled alike or the calls have no process to map."""
    longest: dict[int, float] = {}
    for p in points[-SMOOTH:]:
        for g, us in p.launch_max_by_gpu_us.items():
            if g in gpus:
                longest[g] = max(longest.get(g, 0.0), us)
    if len(longest) < 2:
        return ()
    worst = max(longest.values())
    named = sorted((g for g, us in longest.items() if us >= 1000 and us >= 0.5 * worst),
                   key=lambda g: -longest[g])
    return tuple(named) if 0 < len(named) < len(longest) else ()


def _jitter(points: tuple[Point, ...], base: Baseline, say: Say) -> float:
    """Launch calls whose tail grew (eBPF): the launching thread was descheduled mid-call.
    Against this host's own healthy tail per API (a graph launch is slower than a kernel
    launch), and, with no baseline, the seed's absolute shape (p50 16.7 us, p99 13.1 ms).
    Only a launch API says so: synchronisation waits for the GPU."""
    now = points[-1]
    p50, p99 = now.launch_p50_us, now.launch_p99_us
    strength = 0.0
    if p50 and p99 and p99 >= 1000:
        strength = ramp(math.log10(max(p99 / p50, 1.0)), 1.0, 2.3)
        usual = base.get("launch_p99")
        if usual and p99 < 3 * usual:
            strength *= 0.3  # this host's launches always had such a tail
    # each API's tail over its usual, counted at a scheduler slice's scale (the first of the
    # strongest names it in the evidence)
    tails = [(ramp(value / usual, 1.4, 3.0) * ramp(value, t("launch_tail_us") / 3,
                                                  t("launch_tail_us")), value / usual, api)
             for api, value in now.launch_p99_by_api_us.items()
             if (usual := base.get(f"launch_p99:{api}"))]
    api_strength, worst, worst_api = max(tails, key=lambda x: x[0], default=(0.0, 0.0, ""))
    strength = max(strength, api_strength)
    # the longest call: preempted mid-call it lasts a scheduler slice (ms) where a launch
    # takes microseconds; against this host's usual longest call
    longest = max((p.launch_max_us or 0.0 for p in points[-SMOOTH:]), default=0.0)
    usual_longest = max(base.get("launch_max") or 0.0, 20.0)
    if longest >= 1000:
        strength = max(strength, ramp(math.log10(longest / usual_longest), 1.0, 2.0))
    # the launching thread's time lost in stalled calls, against its usual share
    share = now.launch_stalled_share
    stalled = ramp(share, t("launch_stalled_share") / 4, t("launch_stalled_share"))
    if share is not None:
        usual_share = base.get("launch_stalled")
        # (x0.3: this host's launches always lost as much)
        lost = stalled * (0.3 if usual_share is not None and share < 3 * usual_share else 1.0)
        strength = max(strength, lost)
    if strength >= 0.3:
        if share is not None and stalled > 0 and stalled >= strength:
            say("launch_stalled", 100.0 * share,
                None if base.get("launch_stalled") is None
                else 100.0 * cast(float, base.get("launch_stalled")), "%")
        elif longest >= 1000:
            say("launch_max", longest, usual_longest, "us")
        elif worst_api and worst >= 1.4:
            say("launch_tail", now.launch_p99_by_api_us[worst_api],
                base.get(f"launch_p99:{worst_api}"), "us", detail=worst_api)
        elif p50 and p99:
            say("launch", p99, p50, "us")
    return strength
