"""Polls every source once per tick and builds one Frame, off the UI thread.

Each source runs in its own single-thread executor so a slow or hung source
never delays a tick: the sampler waits for it at most ``source_timeout_s``, and
while an earlier poll is still running the source is reported as
"slow: ..." instead of being asked again.  Ticks are scheduled on a fixed grid
(start + k x interval), so the cadence does not drift.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence

from gputop.schema import EngineSample, Frame, GpuSample, SourceStatus
from gputop.sources.base import Reading, Source


def parse_delay(text: str) -> float:
    """``-d/--delay`` in seconds: a positive number no larger than an hour."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"--delay must be a number of seconds, got {text!r}") from None
    if not (value > 0) or value > 3600 or value != value:
        raise ValueError(f"--delay must be > 0 and <= 3600 seconds, got {text!r}")
    return value


class Sampler:
    def __init__(self, sources: Sequence[Source], interval_s: float = 1.0,
                 source_timeout_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time,
                 frame_time: Callable[[int], tuple[float, float]] | None = None):
        self.sources = list(sources)
        self.interval_s = interval_s
        self.source_timeout_s = source_timeout_s if source_timeout_s is not None else min(
            0.8 * interval_s, 2.0)
        self._clock = clock
        self._wall = wall_clock
        # (wall, monotonic) stamp of frame ``seq``; the simulator uses a virtual clock
        # so that its frames are identical on every run.
        self._frame_time = frame_time
        self._executors = {s.name: cf.ThreadPoolExecutor(1, thread_name_prefix=f"gputop-{s.name}")
                           for s in self.sources}
        self._pending: dict[str, cf.Future] = {}
        self._open_errors: dict[str, str] = {}
        self._seq = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    def open(self) -> None:
        for source in self.sources:
            try:
                source.open()
            except Exception as exc:  # a source that cannot open stays n/a, others run
                self._open_errors[source.name] = _reason(exc)

    def close(self) -> None:
        self.stop()
        for source in self.sources:
            try:
                source.close()
            except Exception:
                pass
        for executor in self._executors.values():
            executor.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ ticks

    def tick(self) -> Frame:
        """Poll all sources once (in parallel, bounded by the timeout) and build a frame."""
        if self._frame_time is not None:
            now_wall, now_mono = self._frame_time(self._seq)
        else:
            now_wall, now_mono = self._wall(), self._clock()
        futures: dict[str, cf.Future | None] = {}
        statuses: dict[str, SourceStatus] = {}
        for source in self.sources:
            if source.name in self._open_errors:
                statuses[source.name] = SourceStatus(False, self._open_errors[source.name])
                continue
            pending = self._pending.get(source.name)
            if pending is not None and not pending.done():
                statuses[source.name] = SourceStatus(
                    False, f"slow: previous poll still running after {self.source_timeout_s:.1f}s")
                continue
            futures[source.name] = self._executors[source.name].submit(source.poll, now_mono)
        deadline = self._clock() + self.source_timeout_s
        readings: list[Reading] = []
        for name, future in futures.items():
            try:
                reading = future.result(timeout=max(0.0, deadline - self._clock()))
                readings.append(reading)
                statuses[name] = SourceStatus(True, detail=reading.detail)
            except cf.TimeoutError:
                self._pending[name] = future
                statuses[name] = SourceStatus(False, f"slow: no answer within {self.source_timeout_s:.1f}s")
            except Exception as exc:
                statuses[name] = SourceStatus(False, _reason(exc))
        frame = _merge(self._seq, now_wall, now_mono, readings, statuses)
        self._seq += 1
        return frame

    def run(self, on_frame: Callable[[Frame], None], max_frames: int | None = None) -> None:
        """Tick on a fixed grid until stopped (or ``max_frames`` frames), calling ``on_frame``."""
        start = self._clock()
        produced = 0
        while not self._stop.is_set():
            on_frame(self.tick())
            produced += 1
            if max_frames is not None and produced >= max_frames:
                return
            next_at = start + produced * self.interval_s
            delay = next_at - self._clock()
            if delay < 0:  # fell behind: skip missed slots instead of bursting
                produced += int(-delay // self.interval_s) + 1
                delay = start + produced * self.interval_s - self._clock()
            self._stop.wait(max(0.0, delay))

    def start(self, on_frame: Callable[[Frame], None]) -> None:
        self._thread = threading.Thread(target=self.run, args=(on_frame,), name="gputop-sampler",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


def _merge_gpus(samples: list[GpuSample]) -> tuple[GpuSample, ...]:
    """One sample per GPU index: a later source fills what an earlier one left unknown
    (e.g. SM activity from a dcgm-exporter next to NVML's utilization)."""
    merged: dict[int, GpuSample] = {}
    for sample in samples:
        first = merged.get(sample.index)
        if first is None:
            merged[sample.index] = sample
            continue
        fill = {f.name: getattr(sample, f.name) for f in dataclasses.fields(sample)
                if getattr(first, f.name) in (None, (), "") and getattr(sample, f.name)
                not in (None, (), "")}
        missing = {k: v for k, v in {**sample.missing, **first.missing}.items()
                   if k not in fill and getattr(first, k, None) is None}
        merged[sample.index] = dataclasses.replace(first, **fill, missing=missing)
    return tuple(merged[i] for i in sorted(merged))


SUMMED = ("generation_tokens_total", "prompt_tokens_total", "requests_finished_total",
          "requests_running", "requests_waiting")


def _merge_engines(samples: list[EngineSample]) -> EngineSample | None:
    """Several endpoints (repeated --engine) read as one service: counters and queues add
    up, KV usage averages, the process trees join; what differs is left unknown."""
    if len(samples) <= 1:
        return samples[0] if samples else None
    first = samples[0]

    def total(name):
        values = [getattr(s, name) for s in samples]
        return None if any(v is None for v in values) else sum(values)

    def same(name):
        values = {getattr(s, name) for s in samples}
        return values.pop() if len(values) == 1 else None

    usage = [s.kv_usage_ratio for s in samples]
    return dataclasses.replace(
        first, **{name: total(name) for name in SUMMED},
        kind=same("kind") or "mixed", url=" + ".join(s.url for s in samples),
        model=same("model") or ", ".join(sorted({s.model for s in samples})),
        kv_usage_ratio=None if None in usage else sum(usage) / len(usage),
        pids=tuple(sorted({p for s in samples for p in s.pids})),
        gpu_indices=tuple(sorted({g for s in samples for g in s.gpu_indices})),
        **{name: same(name) for name in ("num_gpu_blocks", "block_size", "kv_pool_bytes",
                                          "kv_pool_tokens", "kv_bytes_per_token", "weights_bytes",
                                          "tensor_parallel")},
        data_parallel=sum(s.data_parallel or 1 for s in samples),
        note="; ".join(s.note for s in samples if s.note))


def _merge(seq: int, wall: float, mono: float, readings: list[Reading],
           statuses: dict[str, SourceStatus]) -> Frame:
    gpus, processes, launch, engines = [], [], [], []
    host = pinned = None
    for reading in readings:
        gpus.extend(reading.gpus)
        processes.extend(reading.processes)
        launch.extend(reading.launch)
        if reading.engine is not None:
            engines.append(reading.engine)
        host = host or reading.host
        pinned = pinned or reading.pinned
    return Frame(seq=seq, time_wall_s=wall, time_mono_s=mono, gpus=_merge_gpus(gpus),
                 processes=tuple(processes), engine=_merge_engines(engines), launch=tuple(launch), host=host,
                 pinned=pinned, sources=statuses)
