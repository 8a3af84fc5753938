"""Engine numbers the detector does not fold: the newer families' rates, and each replica.

The detector's point (``model/point.py``) carries tokens/s, latency and the rates it
judges by for the page as a whole.  Everything else an engine reading gives (cached
prompt tokens/s, retractions, speculative acceptance, the prefill/decode time split, the
engine's own busy time) and every replica's numbers (data-parallel engines and models
behind one endpoint) are derived here, from the same frames and the same reset-safe
counter arithmetic: a reading and the newest earlier reading of the same endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


from gputop.model import enginehist
from gputop.model.point import counter_rate, read_time
from gputop.schema import EngineSample, Frame, ProcSample
from gputop.model.timeline import Timeline

LOOK_BACK_FRAMES = 120  # how far back an earlier reading of the endpoint is looked for


def previous_reading(timeline: Timeline[Any], index: int) -> Frame | None:
    """The newest frame before ``index`` holding an earlier reading of the same endpoint."""
    frame = timeline.frame(index)
    engine = frame.engine
    if engine is None:
        return None
    t = read_time(frame)
    for i in range(index - 1, max(-1, index - 1 - LOOK_BACK_FRAMES), -1):
        earlier: Frame = timeline.frame(i)
        if earlier.engine is not None and (earlier.engine.kind, earlier.engine.url) == \
                (engine.kind, engine.url) and read_time(earlier) < t:
            return earlier
    return None


def _ratio(part: float | None, whole: float | None) -> float | None:
    if part is None or whole is None or whole <= 0:
        return None
    return min(1.0, max(0.0, part / whole))


def rates(before: EngineSample | None, now: EngineSample,
          seconds: float) -> dict[str, float | None]:
    """Per-second rates and interval ratios of ``now`` since ``before`` (None: unknown)."""
    def rate(name: str) -> float | None:
        if before is None:
            return None
        return counter_rate(getattr(before, name), getattr(now, name), seconds)

    prompt, cached = rate("prompt_tokens_total"), rate("prompt_tokens_cached_total")
    drafts, drafted, accepted = (rate("spec_drafts_total"), rate("spec_draft_tokens_total"),
                                 rate("spec_accepted_tokens_total"))
    prefill, decode = rate("prefill_seconds_total"), rate("decode_seconds_total")
    acceptance = _ratio(accepted, drafted) if drafted else now.spec_accept_ratio
    length = None
    if drafts:  # tokens per verification: the accepted drafts plus the one bonus token
        length = 1.0 + accepted / drafts if accepted is not None else None
    elif now.spec_accept_length:
        length = now.spec_accept_length
    forward = rate("forward_seconds_total")
    if forward is not None:  # a data-parallel page's counter is its replicas' sum: their mean
        forward /= max(1, len(now.replicas))
    return {
        "tokens_per_s": rate("generation_tokens_total"),
        "prompt_tokens_per_s": prompt,
        "requests_per_s": rate("requests_finished_total"),
        "preemptions_per_s": rate("preemptions_total"),
        "cached_prompt_tokens_per_s": cached,
        "prefix_cache_hit_ratio": _ratio(cached, prompt),
        "retractions_per_s": rate("retracted_requests_total"),
        "spec_acceptance_ratio": acceptance,
        "spec_acceptance_length": length,
        "prefill_time_ratio": _ratio(prefill, None if prefill is None or decode is None
                                     else prefill + decode),
        "forward_busy_ratio": None if forward is None else min(1.0, max(0.0, forward)),
        "decode_steps_per_s": rate("decode_steps_total"),
        "corrupted_requests_per_s": rate("corrupted_requests_total"),
        "flops_per_s": rate("flops_total"),
        "mem_bytes_per_s": _sum(rate("read_bytes_total"), rate("write_bytes_total")),
    }


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None and b is None else (a or 0.0) + (b or 0.0)


def replica_of(engine: EngineSample | None, replica: str) -> EngineSample | None:
    if engine is None:
        return None
    return next((r for r in engine.replicas if r.replica == replica), None)


def window_latency(timeline: Timeline[Any], index: int, window_s: float,
                   pick: Callable[[EngineSample | None], EngineSample | None]
                   ) -> dict[str, tuple[float | None, float | None]]:
    """p50 / p99 seconds of each histogram of ``pick(frame.engine)`` over the window: the
    differences of consecutive fresh readings, merged (as the detector does for the page)."""
    frames = timeline.frames_since(index, window_s)
    first = index - len(frames) + 1
    deltas: dict[str, list[Any]] = {}
    before = previous_reading(timeline, first) if frames else None
    previous = pick(before.engine) if before is not None else None
    last_read = read_time(before) if before is not None else None
    for frame in frames:
        sample = pick(frame.engine)
        if sample is None or frame.engine is None:
            continue
        t = read_time(frame)
        if last_read is not None and t <= last_read:
            continue  # a carried reading: nothing new
        if previous is not None:
            old = {h.name: h for h in previous.histograms}
            for hist in sample.histograms:
                d = enginehist.delta(old.get(hist.name), hist)
                if d is not None:
                    deltas.setdefault(hist.name, []).append(d)
        previous, last_read = sample, t
    out = {}
    for name, found in deltas.items():
        merged = enginehist.merge(found)
        if merged is not None and merged.total > 0:
            out[name] = enginehist.median_and_p99(merged)
    return out


def gpus_of(sample: EngineSample, processes: tuple[ProcSample, ...]) -> tuple[int, ...]:
    """The GPUs an engine (or replica) is on: those its pids hold memory or run on (NVML's
    process lists), and any the engine named itself."""
    pids = set(sample.pids)
    return tuple(sorted({p.gpu_index for p in processes if p.pid in pids}
                        | set(sample.gpu_indices)))
