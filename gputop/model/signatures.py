"""The causes, each declared as a signature: which signals move, which must not.

A signature's score is ``R x (0.6 + 0.4 S) x prod(1 - w v)``: ``R`` the required signals
(every group must hold; within a group any one does), ``S`` the mean of the supporting
ones, and each veto ``v`` (a signal that, when it moves, explains the symptoms better) with
its weight ``w``.  All signals are 0..1 strengths against the subject's own healthy baseline
(``features.py``), so a score of 1 means "every signal of this cause, textbook strong,
nothing that speaks against it", and scores compare across causes.  The runner-up's score
and the veto that cost it most say why it lost (the explain page shows that).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    cause: str
    text: str  # what the cause means, for the banner and help
    requires: tuple[tuple[str, ...], ...]
    supports: tuple[str, ...] = ()
    vetoes: tuple[tuple[str, float], ...] = ()
    where: str = "subject"  # which GPUs an episode of this cause names

    def score(self, s: dict[str, float]) -> float:
        required = min(max(s.get(x, 0.0) for x in group) for group in self.requires)
        if required <= 0:
            return 0.0
        support = sum(s.get(x, 0.0) for x in self.supports) / len(self.supports) \
            if self.supports else 1.0
        score = required * (0.6 + 0.4 * support)
        for name, weight in self.vetoes:
            score *= 1.0 - weight * s.get(name, 0.0)
        return score

    def strongest_veto(self, s: dict[str, float]) -> tuple[str, float] | None:
        costs = [(name, weight * s.get(name, 0.0)) for name, weight in self.vetoes]
        costs = [c for c in costs if c[1] > 0.05]
        return max(costs, key=lambda c: c[1]) if costs else None

    def weakest_requirement(self, s: dict[str, float]) -> tuple[str, float]:
        groups = [max(((x, s.get(x, 0.0)) for x in group), key=lambda xs: xs[1])
                  for group in self.requires]
        return min(groups, key=lambda xs: xs[1])


HARM = ("util_drop", "itl", "tokens_down", "queue", "sawtooth", "work_down", "ttft", "seq_slow")

SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "oversized_request",
        "one request's work (e.g. n x logprobs over the vocabulary) stalls the batch",
        requires=(("notable", "batch_stall", "engine_host_bound", "hogged", "fanout_harm",
                   "step_alone"),),
        supports=("hollow", "queue", "hog"),
        vetoes=(("prefill_not_notable", 0.8), ("kv_sig", 0.8), ("kv_wait", 0.4),
                ("host", 0.9), ("jitter", 0.9),
                ("clock_slow", 0.8), ("odd", 0.9), ("shared", 0.9), ("dram_not_fanout", 0.6),
                ("sliver", 0.6))),
    Signature(
        "prefill_interference",
        "long prompts being prefilled starve the decodes",
        requires=(("prefill", "prefill_mild"), ("itl", "tokens_down", "ttft")),
        supports=("busy", "tensor_up"),
        # prefill is GPU compute: prompts that leave the GPU less busy cost on the host
        vetoes=(("preempt", 0.7), ("notable", 0.8), ("util_drop", 0.7),
                ("host", 0.8), ("jitter", 0.8), ("shared", 0.7), ("kv_explains", 0.6))),
    Signature(
        "kv_pressure",
        "the KV cache is full: requests are preempted or wait for blocks",
        requires=(("preempt", "kv_wait"), ("kv_full", "queue", "tokens_down")),
        supports=("kv_full", "queue", "tokens_down"),
        vetoes=(("host", 0.7), ("jitter", 0.7), ("shared", 0.6), ("clock_slow", 0.5),
                ("kv_by_length", 0.6))),
    Signature(
        "collective_straggler",
        "one GPU of the job is slower; the others wait for it in the collective",
        requires=(("odd",), ("peers_wait",)),
        supports=("clock_any", "throttle_new", "busy"),
        # (launch calls measured stalling on the host explain a rank's lost busy time)
        vetoes=(("shared", 0.8), ("rank_idle", 0.8), ("shared_odd", 0.9), ("jitter", 0.7),
                ("odd_launch", 0.7)),
        where="odd"),
    Signature(
        "input_stall",
        "each step waits for its input (the data loader / host pipeline)",
        requires=(("sawtooth", "work_down", "rank_idle", "job_idle"),
                  ("sawtooth", "util_drop", "rank_idle")),
        supports=("input_cpu", "work_down", "util_drop"),
        # a stalled step runs as usual between waits (SM per busy time unchanged); busy
        # time on fewer SMs is the host launching tiny kernels, not waiting for input
        vetoes=(("host", 0.7), ("jitter", 0.8), ("shared", 0.8), ("odd", 0.7),
                ("clock_slow", 0.7), ("serving", 0.6), ("queue", 0.5), ("hollow_new", 0.7),
                # its threads preempted over and over while using less CPU: the CPU is
                # taken from the job (a quota, a hog); a starved input leaves it freely
                ("preempted", 0.6)),
        where="stalled"),
    Signature(
        "host_launch_jitter",
        "the thread that launches kernels is preempted (measured by eBPF)",
        requires=(("jitter",), HARM + ("odd_launch", "launch_harm", "launch_alone")),
        supports=("host",),
        vetoes=(("shared", 0.5),),
        where="launch"),
    Signature(
        "host_cpu_contention",
        "the engine's threads get less CPU (/proc: run queue, CPU pressure, switches)",
        requires=(("host",), HARM + ("host_mild_harm", "host_alone")),
        supports=("queue", "util_drop"),
        vetoes=(("jitter", 0.5), ("shared", 0.5), ("odd", 0.5))),
    Signature(
        "tiny_kernels",
        "busy time on kernels that occupy few SMs",
        requires=(("hollow", "hollow_new", "hollow_power", "hollow_match"),
                  ("busy", "hollow_deep")),
        supports=("hollow", "sliver", "hollow_power", "hollow_match"),
        vetoes=(("notable", 0.9), ("stall_not_sliver", 0.7), ("prefill", 0.8),
                ("host", 0.9),
                ("jitter", 0.9), ("odd", 0.9), ("shared", 0.8), ("dram", 0.7),
                ("preempt", 0.6), ("sawtooth_plain", 0.8))),
    Signature(
        "memory_bandwidth",
        "the SMs wait on DRAM (bandwidth saturated)",
        requires=(("dram", "kv_read", "kv_bytes", "step_reads"),
                  ("dram_new", "tokens_down", "itl", "step", "work_down")),
        supports=("busy", "dram_new", "step", "kv_read"),
        vetoes=(("hollow", 0.8), ("clock_slow", 0.6), ("odd", 0.8), ("shared", 0.7),
                ("prefill_heavy", 0.5), ("notable", 0.5), ("host", 0.8), ("preempt", 0.6),
                ("util_drop", 0.6), ("dram_fell", 0.8), ("fanout", 0.6)),
        where="dram"),
    Signature(
        "throttling",
        "clocks held down (thermal, power brake, hardware slowdown)",
        requires=(("clock_slow",),),
        supports=("throttle_new", "hot"),
        vetoes=(("odd", 0.9), ("shared", 0.5)),
        where="throttled"),
    Signature(
        "spec_decode_rejected",
        "speculative decoding's drafts are mostly rejected: each step verifies tokens it "
        "throws away",
        requires=(("spec_drop",), ("tokens_down", "itl", "step", "spec_waste")),
        supports=("busy", "step"),
        vetoes=(("host", 0.8), ("jitter", 0.8), ("clock_slow", 0.7), ("shared", 0.7),
                ("kv_sig", 0.6), ("notable", 0.5), ("prefill", 0.5), ("odd", 0.8),
                ("dram_new", 0.4))),
    Signature(
        "gpu_shared",
        "another process time-slices the GPU and takes its SM time",
        requires=(("shared",), ("own_drop", "tokens_down", "itl", "work_down", "util_drop",
                                "shared_odd", "shared_taken", "shared_mild_harm")),
        supports=("own_drop", "busy", "shared_odd"),
        where="shared"),
)
BY_CAUSE = {sig.cause: sig for sig in SIGNATURES}
# the exporter's and snapshot's vocabulary (FACTS.md section 7): the first eight are older
CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "tiny_kernels", "memory_bandwidth", "throttling",
          "kv_pressure", "gpu_shared", "host_cpu_contention", "spec_decode_rejected")


def scores(s: dict[str, float]) -> dict[str, float]:
    return {sig.cause: sig.score(s) for sig in SIGNATURES}
