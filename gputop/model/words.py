"""An episode in words: headline, evidence lines, the likely cause, why the runner-up lost.

The one place the banner, ``report``, ``snapshot --json``, the explain page and the
exporter's help get their text from, built from the episode's structured evidence: a finding
seen several times is one line ("3 requests with n=8 finished 06:26:14-06:26:34"), numbers
carry their baseline, nothing is nested in brackets twice.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gputop.model.signatures import BY_CAUSE
from gputop.model.subjects import is_engine_key
from gputop.units import duration_us
from gputop.model.thresholds import t

if TYPE_CHECKING:
    from gputop.model.detect import Episode
    from gputop.model.evidence import Evidence

MEASURE_TEXT = {"itl": "inter-token latency", "ttft": "time to first token"}
SIGNAL_TEXT = {
    "notable": "a request with n or max_tokens far above the rest",
    "batch_stall": "the batch stalling (latency up, batch not growing, queue up)",
    "step_alone": "every step far slower with no prefill, memory traffic or speculation "
                  "to explain it",
    "step_reads": "every step far slower while DRAM's share of the time rose: each step "
                  "reads more",
    "hollow": "SM activity far below GPU-Util", "hollow_new": "SM activity falling",
    "hollow_match": "the job's rate falling with its SM share (smaller kernels)",
    "busy": "GPU-Util high",
    "hollow_deep": "SM activity a small fraction of its normal share of the busy time",
    "util_drop": "GPU-Util falling", "queue": "the queue growing",
    "queue_soft": "requests waiting", "running_flat": "the batch not growing",
    "itl": "inter-token latency", "ttft": "time to first token",
    "tokens_down": "tokens/s falling", "work_down": "the job's steps slowing",
    "prefill": "a prefill burst", "tensor_up": "tensor activity rising",
    "preempt": "preemptions", "kv_full": "a full KV cache", "kv_sig": "KV-cache pressure",
    "dram": "DRAM bandwidth saturated", "dram_new": "DRAM bandwidth rising",
    "odd_launch": "the rank the others wait for stalling in its launch calls",
    "preempted": "the job's threads preempted over and over while using less CPU",
    "dram_not_fanout": "DRAM bandwidth rising (not with one request's n sequences)",
    "dram_fell": "DRAM traffic under its normal",
    "seq_slow": "each sequence slower than its batch explains (the batch swelling)",
    "clock_slow": "slowed clocks", "clock_all": "slowed clocks", "clock_any": "a slowed clock",
    "throttle_new": "new throttle reasons", "hot": "a hot GPU",
    "odd": "one GPU out of step", "peers_wait": "the other GPUs waiting",
    "shared": "another process on the GPU", "own_drop": "the job's own SM share falling",
    "shared_odd": "the GPU the others wait for shared with a new process",
    "shared_taken": "another process's SM time on a GPU the job kept busy by itself",
    "sawtooth": "a saw-tooth of steps and waits", "input_cpu": "an input thread at 100% CPU",
    "host": "host CPU contention", "jitter": "launch-latency spikes", "serving": "serving",
    "sliver": "SM activity a sliver (one-element kernels)", "fanout": "the batch doubling at "
    "once without new prompts (n sequences)", "fanout_harm": "harm after the batch doubled",
    "stall_not_sliver": "the batch stalling", "prefill_not_notable": "a prefill burst",
    "engine_host_bound": "the GPU waiting on the engine's own host work",
    "step": "every token slower (ITL p50)", "rank_idle": "one rank idle while the others wait",
    "hog": "the tokens going to few requests", "hogged": "a few requests taking the batch",
    "kv_wait": "requests waiting for KV blocks",
    "kv_by_length": "the KV pool filled by far longer prompts, nothing preempted",
    "spec_drop": "speculative decoding's acceptance falling",
    "spec_waste": "almost every draft token rejected",
    "hollow_power": "busy time drawing near idle power (no SM counter)",
    "sawtooth_plain": "waits between steps that run as usual",
    "kv_read": "every step reading far more KV (longer contexts)",
    "prefill_mix": "prompts taking the step's token budget from the decodes",
    "prefill_mild": "somewhat longer prompts taking twice their share of the steps for 30 s, "
                    "every token slower",
    "kv_bytes": "each token reading far more bytes (weights and KV in use)",
    "prefill_cost": "the extra prompts' FLOPs taking a share of the GPU",
    "prefill_heavy": "prompts costing a share of the GPU",
    "kv_explains": "the bytes each token reads explaining the slowdown",
    "job_idle": "the job's GPU idling under its own util (no counter of its own)",
    "host_mild_harm": "a milder cost beside strong host contention (GPU-Util, every token "
                      "or the job's rate)",
    "launch_harm": "GPU-Util or the job's rate down beside the stalled launches",
    "launch_alone": "launch calls stalled on the host for a minute, no cost in sight yet",
    "host_alone": "the tree's CPU taken on a crowded host for a minute, no cost in sight yet",
    "shared_mild_harm": "a tenth of the output or every token's time lost beside another "
                        "process on the GPU",
}
# which of a signature's signals each kind of evidence stands for (to order the lines)
EVIDENCE_SIGNAL = {
    "sm_active": "hollow", "util_drop": "util_drop", "sawtooth": "sawtooth", "waiting": "queue",
    "tokens": "tokens_down", "itl": "itl", "ttft": "ttft", "prefill": "prefill",
    "preempt": "preempt", "kv": "kv_full", "dram": "dram", "mem_ctrl": "dram",
    "clock": "clock_slow",
    "throttle": "throttle_new", "odd_clock": "odd", "odd_sm": "odd", "odd_util": "odd",
    "odd_power": "odd", "odd_link": "odd", "hot": "hot",
    "shared": "shared", "own_sm": "own_drop", "tree_cpu": "host", "busiest_thread": "host",
    "psi": "host", "throttled": "host", "run_queue": "host", "involuntary": "host", "host_cpu": "host",
    "launch": "jitter", "launch_tail": "jitter", "launch_max": "jitter",
    "launch_stalled": "jitter", "fanout": "fanout",
    "input_thread": "input_cpu", "work": "work_down", "step": "step", "itl_mean": "step",
    "token_time": "step",
    "prefill_time": "prefill", "rank_idle": "rank_idle",
    "notable_n": "notable", "notable_max_tokens": "notable", "spec_accept": "spec_drop",
    "kv_read": "kv_read", "power": "hollow_power",
}


def cause_text(cause: str) -> str:
    sig = BY_CAUSE.get(cause)
    return sig.text if sig is not None else ""


def signal_text(name: str) -> str:
    return SIGNAL_TEXT.get(name, name.replace("_", " "))


def clock(wall_s: float | None) -> str:
    return "?" if wall_s is None else time.strftime("%H:%M:%S", time.localtime(wall_s))


def gpus_text(gpus: tuple[int, ...]) -> str:
    if len(gpus) == 1:
        return f"GPU {gpus[0]}"
    if gpus and list(gpus) == list(range(gpus[0], gpus[0] + len(gpus))) and len(gpus) > 2:
        return f"GPUs {gpus[0]}-{gpus[-1]}"
    return "GPUs " + ",".join(str(g) for g in gpus)


def _s(value: float | None) -> str:
    return "n/a" if value is None else duration_us(value * 1e6)


def _n(value: float | None, digits: int | None = 0) -> str:
    """A number with the digits its size needs (``digits=None``: 2 below 10, 1 below 100)."""
    if value is None:
        return "n/a"
    if digits is None:
        digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
    return f"{value:,.{digits}f}"


def headline(ep: Episode) -> str:
    v = ep.values
    where = gpus_text(ep.gpus)
    util = f"{ep.util_pct:.0f}%"
    starved = ep.kind == "starved"
    m = ep.measure
    if m in MEASURE_TEXT and ep.latency_p99_s and ep.latency_baseline_s:
        lead = f"{where} waiting on the host at {util}" if starved else f"{where} busy {util}"
        return (f"{lead} but {MEASURE_TEXT[m]} p99 "
                f"{ep.latency_p99_s / ep.latency_baseline_s:.1f}x baseline "
                f"({_s(ep.latency_p99_s)} vs {_s(ep.latency_baseline_s)})")
    # a cgroup's CPU quota running out holds the work back with no crowd on the host
    quota = any(e.signal == "throttled" for e in ep.facts)
    if m == "cpu":
        if v.get("tokens_ratio") is None:  # a job without a throughput counter
            return (f"{where} waiting on the host at {util}: {ep.subject_label or 'its job'}'s "
                    f"CPU fell {'under its CPU quota' if quota else 'on a crowded host'} "
                    f"(GPU-Util baseline {_n(v.get('util_base'))}%)")
        unit = _work_unit(ep)
        return (f"{where} waiting on the host: the {'job' if unit else 'engine'}'s CPU fell "
                f"and it makes {(v.get('tokens_ratio') or 0):.0%} of its {unit or 'tokens'}/s")
    if m == "share":
        return (f"{where} busy {util} but requests finish at "
                f"{(v.get('finished_ratio') or 0):.0%} of their rate, every token "
                f"{(v.get('step_ratio') or 0):.1f}x slower")
    if m == "spec":
        rejected = "mostly rejected" if (v.get("spec_accept") or 0.0) < 0.5 \
            else "accepted less often"
        return (f"{where} busy {util} but drafts {rejected}: "
                f"{_pct(v.get('spec_accept'))} accepted (baseline {_pct(v.get('spec_accept_base'))}),"
                f" {_n(ep.tokens_per_s)} tok/s (baseline {_n(ep.baseline_tokens_per_s)})")
    if m == "queue":
        return (f"{where} busy {util} but the queue grows: {_n(v.get('waiting'))} waiting "
                f"(baseline {_n(v.get('waiting_base'))}) at {_n(ep.tokens_per_s)} tok/s")
    if m == "util":
        return (f"{where} waiting on the host: GPU-Util {util} (baseline "
                f"{_n(v.get('util_base'))}%) while {_n(v.get('waiting'))} requests wait")
    if m == "hollow":
        if v.get("sm") is None and v.get("power_ratio") is not None:  # no SM counter
            return (f"{where} busy {util} but drawing {_pct(v.get('power_ratio'))} of its busy "
                    "power: kernels on a sliver of the SMs (no SM counter on this GPU)")
        return f"{where} busy {util} but SM active {_n(v.get('sm'))}%: kernels on a sliver of the SMs"
    if m == "stall":
        return (f"{where} waiting on the host: GPU-Util {_n(v.get('util_window'))}% in a "
                f"saw-tooth (baseline {_n(v.get('util_base'))}%)")
    if m == "idle":  # a job without a counter: its busy time is all there is to go by
        return (f"{where} waiting at {util} GPU-Util (baseline {_n(v.get('util_base'))}%): "
                f"{ep.subject_label or 'its job'}'s steps wait on something off the GPU")
    if m == "prefill":
        return (f"{where} busy {util} but {_prompts(v)} stall the decodes: "
                f"{_n(ep.tokens_per_s)} tok/s (baseline {_n(ep.baseline_tokens_per_s)})")
    if m == "host":
        who, why = ep.subject_label or "its work", "its CPU quota" if quota else "a crowded host"
        if (v.get("util_base") or 0.0) - (v.get("util") or 0.0) < t("host_mild_util_pts") \
                and (v.get("tokens_ratio") or 1.0) > t("host_mild_tokens"):
            # (measured on the tree itself, its CPU lost and its threads preempted: named
            # before the work pays, which it has not yet)
            return f"{where} at {util} GPU-Util: {why} takes {who}'s CPU (no cost to its pace yet)"
        return (f"{where} waiting on the host at {util} (baseline {_n(v.get('util_base'))}%): "
                f"{why} costs {who} its pace")
    if m == "step" and (v.get("step_ratio") or 0.0) >= t("step_slow"):
        return (f"{where} busy {util} but every token {_ratio(v.get('step_ratio'))} slower: "
                f"{_n(ep.tokens_per_s)} tok/s (baseline {_n(ep.baseline_tokens_per_s)})")
    if m == "slow":
        # judged over a span: this tick's typical token may already be back (a sustained
        # finding says no number it no longer shows)
        slower = f"every token {_ratio(v.get('step_ratio'))} slower" \
            if (v.get("step_ratio") or 0.0) >= t("step_slow") else "every token slower for 30 s"
        return (f"{where} busy {util} but {slower}: "
                f"{_n(v.get('running'))} requests in flight (baseline "
                f"{_n(v.get('running_base'))}) at {_n(ep.tokens_per_s)} tok/s")
    if m == "reads":
        return (f"{where} busy {util} but every token slower as each step reads more: "
                f"{_n(ep.tokens_per_s)} tok/s (baseline {_n(ep.baseline_tokens_per_s)})")
    if m == "dram":
        return _dram_headline(ep, where, util)
    if m in ("straggler", "odd"):
        others = [g for g in ep.job_gpus if g not in ep.gpus]
        return f"{where} holds back {gpus_text(tuple(others))}: they wait for it at {util} util" \
            if others else f"{where} out of step with its job"
    if m == "shared":
        return f"{where} shared: another process takes SM time from {ep.subject_label}"
    if m == "clock":
        return f"{where} busy {util} but slowed: its SM clock fell {(v.get('clock_drop') or 0):.0%}"
    if m == "launch":  # launch calls measured stalling: the finding, whatever it costs
        lead = f"{where} waiting on the host at {util}" if starved else f"{where} busy {util}"
        if (v.get("tokens_ratio") or 1.0) <= 0.95 and ep.tokens_per_s is not None \
                and ep.baseline_tokens_per_s:
            return (f"{lead} but {_n(ep.tokens_per_s, None)} {_work_unit(ep) or 'tok'}/s "
                    f"(baseline {_n(ep.baseline_tokens_per_s, None)}): launch calls stall")
        if (v.get("util_base") or 0.0) - (v.get("util") or 0.0) >= t("launch_util_drop_pts"):
            return f"{lead} (baseline {_n(v.get('util_base'))}%): launch calls stall"
        # (a deep queue of kernels rides out each stall: measured before the work pays)
        return f"{where} at {util} GPU-Util: its launch calls stall on the host (no cost yet)"
    if m == "work":
        unit = _work_unit(ep) or "work"
        return (f"{where} {'waiting on the host at' if starved else 'busy'} {util} but "
                f"{_n(ep.tokens_per_s, None)} {unit}/s (baseline "
                f"{_n(ep.baseline_tokens_per_s, None)})")
    tps = _n(ep.tokens_per_s)
    lead = f"{where} waiting on the host at {util}" if starved else f"{where} busy {util}"
    return f"{lead} but {tps} tok/s (baseline {_n(ep.baseline_tokens_per_s)})"


def _prompts(v: dict[str, float | None]) -> str:
    """What about the prompts is unusual, by what the last tick still shows: judged over a
    span, the episode may end on a tick between two long prompts (no rate to quote then)."""
    rate, length = v.get("prompt_ratio") or 0.0, v.get("prompt_len_ratio") or 0.0
    first = v.get("ttft_ratio") or 0.0
    tail = f" (first tokens {_ratio(first)})" if first >= 1.5 else ""
    if rate >= 1.5:
        return f"prompts at {_ratio(rate)} their usual rate{tail}"
    if length >= 1.2:
        return f"prompts {_ratio(length)} their usual length{tail}"
    return f"long prompts arriving again and again{tail}"


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}x"


def _work_unit(ep: Episode) -> str | None:
    """The unit of a job's own rate (samples, steps), where its evidence quotes it."""
    return next((e.unit for e in ep.facts if e.signal == "work"), None)


def evidence_line(e: Evidence, subject: str = "engine") -> str:
    sig, v, b = e.signal, e.value, e.baseline
    if sig.startswith("notable"):
        label = "n" if sig == "notable_n" else "max_tokens"
        if e.count <= 1:
            return f"a request with {label}={e.detail} finished by {clock(e.until_wall_s or e.when_wall_s)}"
        span = clock(e.when_wall_s) if e.until_wall_s in (None, e.when_wall_s) else \
            f"{clock(e.when_wall_s)}-{clock(e.until_wall_s)}"
        return f"{e.count:.0f} requests with {label}={e.detail} finished {span}"
    base = "" if b is None else f" (baseline {b:,.0f}{e.unit if e.unit == '%' else ''})"
    who = "the engine's processes" if is_engine_key(subject) else "the job's processes"
    texts = {
        "sm_active": lambda: f"SM active {v:.0f}% of GPU-Util {e.detail}%" + base,
        "util_drop": lambda: f"GPU-Util {v:.0f}%{base}",
        "sawtooth": lambda: f"{e.detail}% in a saw-tooth between steps (mean {v:.0f}%, "
                            f"baseline {_n(b)}%)",
        "waiting": lambda: f"waiting requests {_n(b)} -> {v:.0f} while running stays {e.detail}",
        # tokens and work evidence always carries both its value and its baseline
        "tokens": lambda: f"generation {v:,.0f} tok/s, {v / b:.0%} of its baseline {b:,.0f}",  # type: ignore[operator]
        "itl": lambda: f"inter-token latency p99 {_s(v)}, {e.detail}x its healthy {_s(b)} at "
                       "this batch size",
        "ttft": lambda: f"time to first token p99 {_s(v)}, {e.detail}x its healthy {_s(b)}",
        "prefill": lambda: f"computed prompt tokens/s {v:.1f}x baseline (prefill)"
                           + (f"; {e.detail}" if e.detail else ""),
        "preempt": lambda: f"{e.detail or 'preemptions'} {v:.1f}/s (baseline {_n(b, 1)}/s)",
        "kv": lambda: f"KV cache {v:.0%} full",
        "kv_read": lambda: f"KV cache {v:.0%} in use (baseline {b:.0%}), {e.detail}x the "
                           "context per sequence: every decode step reads that much more",
        "spec_accept": lambda: f"speculative decoding accepts {v:.0%} of draft tokens "
                               f"(baseline {b:.0%})",
        "dram": lambda: f"DRAM bandwidth {v:.0f}%{base}",
        "power": lambda: f"{v:.0f} W at {e.detail}% GPU-Util (baseline {_n(b)} W busy): "
                         "busy time on few SMs (no SM counter on this GPU)",
        "mem_ctrl": lambda: f"memory controller busy {v:.0f}%{base} (no DRAM bandwidth "
                            "counter on this GPU)",
        "clock": lambda: f"GPU {e.gpu} SM clock {v:,.0f} MHz (baseline {_n(b)})",
        "throttle": lambda: f"GPU {e.gpu} clocks throttled: {e.detail}",
        "odd_clock": lambda: f"GPU {e.gpu} SM clock {v:,.0f} MHz"
                             + (f" ({e.detail})" if e.detail else "") + " while "
                             f"{gpus_text(e.others)} run at {_n(b)} MHz",
        "odd_sm": lambda: f"GPU {e.gpu} SM active {v:.0f}% while {gpus_text(e.others)} wait "
                          f"at {_n(b)}%",
        "odd_util": lambda: f"GPU {e.gpu} GPU-Util {v:.0f}% while {gpus_text(e.others)} wait "
                            f"at {_n(b)}% in the collective",
        "odd_power": lambda: f"GPU {e.gpu} draws {v:.0f} W while {gpus_text(e.others)} wait "
                             f"at {_n(b)} W (no SM counter on this GPU)",
        "odd_link": lambda: f"GPU {e.gpu} NVLink carries {v:,.0f} MiB/s, {gpus_text(e.others)} "
                            f"{_n(b)} MiB/s in the same collectives (its links trained down?)",
        "hot": lambda: f"GPU {e.gpu} at {v:.0f} °C, {gpus_text(e.others)} at {_n(b)} °C",
        "shared": lambda: (f"another process (pid {e.detail}) takes {v:.0f}% SM on GPU {e.gpu}"
                           if v is not None else
                           f"a new process (pid {e.detail}) holds memory on GPU {e.gpu}"),
        "own_sm": lambda: f"the job's own SM {v:.0f}% on GPU {e.gpu}{base}",
        "tree_cpu": lambda: _crowded(f"{who} at {v:.0f}% CPU (baseline {_n(b)}%)", e),
        "busiest_thread": lambda: _crowded(f"its busiest thread at {v:.0f}% CPU (baseline "
                                           f"{_n(b)}%)", e),
        "throttled": lambda: f"its cgroup's CPU quota{f' ({e.detail} cores)' if e.detail else ''} "
                             f"held it back in {v:.0f}% of CPU periods (baseline {_n(b)}%)",
        "psi": lambda: f"CPU pressure {v:.0f}% (baseline {_n(b)}%)",
        "run_queue": lambda: f"run queue {v:.0f} on {e.detail} CPUs (baseline {_n(b)})",
        "involuntary": lambda: f"involuntary context switches {v:,.0f}/s (baseline {_n(b)}/s)",
        "host_cpu": lambda: f"host CPU {v:.0f}%",
        "launch": lambda: f"launch p99 {duration_us(v)} (p50 {duration_us(b)})",
        "launch_max": lambda: f"a launch call took {duration_us(v)} (usually at most "
                              f"{duration_us(b)}): the launching thread was descheduled",
        "launch_stalled": lambda: f"the launching thread spent {v:.0f}% of its time in launch "
                                  f"calls of 1 ms or more (baseline {_n(b)}%)",
        "launch_tail": lambda: f"{e.detail} p99 {duration_us(v)} (baseline {duration_us(b)})",
        "fanout": lambda: f"the batch jumped to {v:.0f} from {b:.0f} at once, without the "
                          "prompts that many arrivals would bring: likely one request's n sequences",
        "itl_mean": lambda: f"inter-token latency mean {_s(v)}, {e.detail}x its healthy "
                            f"{_s(b)}: every token slower on average",
        "step": lambda: f"inter-token latency p50 {_s(v)}, {e.detail}x its healthy {_s(b)}: "
                        "every token slower",
        "prefill_time": lambda: f"prompts take {100 * (v or 0.0):.0f}% of the engine's time "
                                f"(baseline {100 * (b or 0.0):.0f}%)",
        "token_time": lambda: f"each sequence's token takes {_s(v)} of decode, {e.detail}x "
                              f"its healthy {_s(b)}: every token slower",
        "rank_idle": lambda: f"GPU {e.gpu} at {v:.0f}% util, mostly idle, while "
                             f"{gpus_text(e.others)} wait for it in the collective",

        "input_thread": lambda: f"a thread of the job at {v:.0f}% of a core",
        "work": lambda: f"{_n(v, None)} {e.unit}/s, {v / b:.0%} of its baseline {_n(b, None)}",  # type: ignore[operator]
    }
    make = texts.get(sig)
    return make() if make is not None else sig.replace("_", " ")


def _crowded(text: str, e: Evidence) -> str:
    if e.detail == "held":
        return f"{text} while each step takes longer: held back (a CPU quota?)"
    queue, _, cpus = e.detail.partition(" ")
    return f"{text} with the run queue at {queue} on {cpus} CPUs" if cpus else text


def evidence_lines(ep: Episode) -> tuple[str, ...]:
    """The episode's evidence, what speaks for its likely cause first, requests first of all."""
    top = BY_CAUSE.get(ep.suspects[0][0]) if ep.suspects else None
    relevant = set()
    if top is not None:
        relevant = {x for group in top.requires for x in group} | set(top.supports)

    def rank(e: Evidence) -> int:
        if e.signal.startswith("notable"):
            return 0 if top is None or top.cause == "oversized_request" else 2
        return 1 if EVIDENCE_SIGNAL.get(e.signal) in relevant else 2

    ordered = sorted(ep.facts, key=rank)
    return tuple(dict.fromkeys(evidence_line(e, ep.subject) for e in ordered))


def suspect_line(ep: Episode) -> str:
    if not ep.suspects:
        return "likely: unknown (no cause's signature fits)"
    cause = ep.suspects[0][0]
    return f"likely: {cause.replace('_', ' ')}: {cause_text(cause)}"


def runner_up(ep: Episode) -> str | None:
    """Why the second cause lost, for the explain page."""
    if len(ep.suspects) < 2:
        return None
    cause, score = ep.suspects[1]
    why = ep.why_not.get(cause)
    return f"runner-up {cause.replace('_', ' ')} {score:.2f}" + (f": {why}" if why else "")


def explain_lines(ep: Episode) -> list[str]:
    """The verdict in full, for the explain page: what tripped it, every cause's score and why
    each one behind the first scored less, how the verdict formed."""
    state = "open" if ep.end_wall_s is None else f"closed {clock(ep.end_wall_s)}"
    lines = [ep.headline,
             f"  {ep.kind.replace('_', ' ')} since {clock(ep.start_wall_s)} ({state}); tripped "
             f"by {MEASURE_NAME.get(ep.measure, ep.measure)}; judged on "
             f"{gpus_text(ep.job_gpus or ep.gpus)} ({ep.subject_label or ep.subject})",
             "  causes (score 0..1, mean over the ticks the episode held):"]
    for i, (cause, score) in enumerate(ep.suspects):
        why = "" if i == 0 else f": {ep.why_not.get(cause, '')}"
        lines.append(f"    {cause:<22} {score:.2f}{why}")
    if not ep.suspects:
        lines.append("    none fits its signature")
    if len(ep.history) > 1:
        lines.append("  verdict: " + " -> ".join(f"{c} ({clock(t)})" for t, c in ep.history))
    lines.append("  evidence:")
    lines += [f"    {line}" for line in evidence_lines(ep)]
    return lines


def _dram_headline(ep: Episode, where: str, util: str) -> str:
    v = ep.values
    gpm = v.get("dram") is not None
    level = v.get("dram") if gpm else v.get("mem_ctrl")
    rise = v.get("dram_rise")
    base = level - rise if level is not None and rise is not None else None
    label = "DRAM" if gpm else "memory controller busy"
    if v.get("tokens_ratio") is not None:
        cost = f", {(v.get('tokens_ratio') or 0):.0%} of its {_work_unit(ep) or 'work'}/s"
    elif v.get("sm_share_ratio") is not None:
        cost = f", SM share {(v.get('sm_share_ratio') or 0):.0%} of its own"
    else:
        cost = ""
    return (f"{where} busy {util} but its SMs wait on memory: {label} {_n(level)}% "
            f"(baseline {_n(base)}%){cost}")


MEASURE_NAME = {
    "itl": "inter-token latency at 2x its healthy value", "ttft": "time to first token at 2x",
    "tokens": "tokens/s at half its baseline with demand still there",
    "queue": "the queue growing while tokens/s does not",
    "util": "GPU-Util falling while requests wait", "hollow": "busy time on a sliver of the SMs",
    "stall": "a saw-tooth of steps and waits", "straggler": "one GPU out of step",
    "shared": "another process taking SM time", "clock": "held-down clocks",
    "work": "the job's steps slowing with a GPU-side finding",
    "kv": "requests preempted with the KV pool full",
    "share": "requests finishing at half their rate while every token is slower",
    "cpu": "the processes losing CPU on a crowded host while their output (or GPU-Util) fell",
    "step": "every token slower while the memory traffic rose",
    "prefill": "longer prompts costing the decodes on half of 20 s of ticks",
    "host": "a contended host with harm of any kind on half of 20 s of ticks (or taking the "
            "tree's CPU, its threads preempted many times over, on most of a minute's ticks)",
    "launch": "launch calls stalling (eBPF) with GPU-Util or the output down (or on most of "
              "a minute's ticks)",
    "odd": "one GPU out of step on half of 20 s of ticks",
    "slow": "every token 2x slower with the batch swollen, on half of 30 s of ticks",
    "reads": "every token 1.3x slower as each step reads more with the output down a fifth "
             "(or 1.4x slower with each sequence's context far longer, the output kept), on "
             "half of 30 s of ticks",
    "dram": "a job's DRAM traffic new and near saturation at a cost to its rate or SM share, "
            "on half of 20 s of ticks",
}
