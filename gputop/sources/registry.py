"""Which sources a session reads: one entry per source, built from the command's options.

The registry returns sources, nothing that polls them: ``gputop/feed.py`` composes the
sampler over them (or the remote feed, for ``--remote``).

A new GPU vendor, engine or host source is one entry in ``LIVE`` (a name and a factory
that returns the sources it makes for these options, or none), not another branch in
the command line.  Setup problems are ``SetupError`` with one line for the user.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from gputop.sources.base import Source


class SetupError(ValueError):
    """The sources cannot be set up as asked: one line for the user (exit 2)."""


@dataclass(frozen=True)
class SourceOptions:
    demo: str | None = None  # a scenario, "cycle", or None for the real machine
    gpu: tuple[int, ...] | None = None  # NVML indexes to show
    dcgm: str | None = None
    engine: tuple[str, ...] = ()
    work_counter: str | None = None  # a trainer's progress counter on the --engine page
    model: str | None = None
    ebpf: str = "off"
    ebpf_duty: float = 1.0  # the fraction of the time the probes are attached
    pid: int | None = None
    match: str | None = None
    sim_gpus: int | None = None
    seed: int = 0
    delay_s: float = 1.0
    remote: str | None = None  # another gputop serve: its frames instead of local sources
    container: str | None = None
    pod: str | None = None
    slurm_job: str | None = None
    demo_lead_frames: int = 0  # the demo's frames made at once before "now" (its lead-in)

    @classmethod
    def from_args(cls, args) -> SourceOptions:
        return cls(demo=args.demo, gpu=tuple(args.gpu) if args.gpu else None, dcgm=args.dcgm,
                   engine=tuple(args.engine or ()), model=args.model, ebpf=args.ebpf,
                   work_counter=getattr(args, "work_counter", None),
                   ebpf_duty=getattr(args, "ebpf_duty", 1.0),
                   pid=args.pid, match=args.match, sim_gpus=args.gpus, seed=args.seed,
                   delay_s=args.delay, remote=getattr(args, "remote", None),
                   container=getattr(args, "container", None), pod=getattr(args, "pod", None),
                   slurm_job=getattr(args, "slurm_job", None),
                   demo_lead_frames=getattr(args, "demo_lead_frames", 0))


def pin_setup(options: SourceOptions):
    """(pin state the live sources share, or None; a pin applied to the frames' own process
    lists, for the demo)."""
    from gputop.sources.proctree import (PinError, PinState, compile_pattern, pin_owner,
                                         pin_pattern, pin_pid)

    chosen = [name for name, value in (("--pid", options.pid), ("--match", options.match),
                                       ("--container", options.container),
                                       ("--pod", options.pod),
                                       ("--slurm-job", options.slurm_job)) if value is not None]
    if len(chosen) > 1:
        raise SetupError(f"use one of {', '.join(chosen)}, not several")
    try:
        owner = (options.container, options.pod, options.slurm_job)
        if any(owner) and (options.remote or options.demo):
            raise SetupError(f"{chosen[0]} pins processes of this machine; the demo's and a "
                             "remote host's are shown with their container and pod in pane 8")
        if any(x is not None for x in owner):
            return PinState(pin_owner(*owner)), None
        if options.remote is not None or options.demo is not None:
            # a remote host's or the simulator's PIDs exist only in the frames
            if options.match is not None:
                compile_pattern(options.match)
            if options.pid is None and options.match is None:
                return None, None
            return None, ((options.pid,) if options.pid else (), options.match)
        if options.pid is not None:
            return PinState(pin_pid(options.pid)), None
        if options.match is not None:
            return PinState(pin_pattern(options.match)), None
    except PinError as exc:
        raise SetupError(str(exc)) from None
    return PinState(), None


# ---------------------------------------------------------------- the live sources

def _nvml(options: SourceOptions, pin_state) -> list[Source]:
    from gputop.sources.nvml import NvmlSource

    return [NvmlSource(list(options.gpu) if options.gpu else None)]


def _engines(options: SourceOptions, pin_state) -> list[Source]:
    from gputop.modelconfig import ConfigError
    from gputop.sources.engine import EngineSource

    engines = [EngineSource(url, options.model, pin_state=pin_state,
                            name="engine" if i == 0 else f"engine{i + 1}",
                            counter=options.work_counter)
               for i, url in enumerate(options.engine or (None,))]
    try:
        for engine in engines:
            engine.open()
    except ConfigError as exc:
        raise SetupError(f"--model: {exc}") from None
    return engines


def _host(options: SourceOptions, pin_state) -> list[Source]:
    from gputop.sources.host import HostSource

    return [HostSource()]


def _pin(options: SourceOptions, pin_state) -> list[Source]:
    from gputop.sources.proctree import ProcTreeSource

    return [ProcTreeSource(pin_state)] if pin_state is not None else []


def _ebpf(options: SourceOptions, pin_state) -> list[Source]:
    if options.ebpf == "off":
        if options.ebpf_duty < 1:
            raise SetupError(f"--ebpf-duty {options.ebpf_duty:g} samples the eBPF probes: "
                             "add --ebpf full or --ebpf light")
        return []
    from gputop.sources.ebpf import EbpfSource

    return [EbpfSource(options.ebpf, pin_state, duty=options.ebpf_duty)]


def _dcgm(options: SourceOptions, pin_state) -> list[Source]:
    if not options.dcgm:
        return []
    from gputop.sources.dcgm import DcgmSource

    return [DcgmSource(options.dcgm)]


def _procfs(options: SourceOptions, pin_state) -> list[Source]:
    from gputop.sources.procfs import ProcfsSource

    return [ProcfsSource()]


LIVE: dict[str, Callable[[SourceOptions, object], list[Source]]] = {
    "nvml": _nvml, "engine": _engines, "host": _host, "pin": _pin, "ebpf": _ebpf, "dcgm": _dcgm,
    "procfs": _procfs,
}


@dataclass(frozen=True)
class Sources:
    """The local sources to poll, how often, under what label, and the simulator's virtual
    clock (``frame_time(seq) -> (wall, monotonic)``; None: the real one)."""

    sources: list[Source]
    label: str
    interval_s: float
    frame_time: Callable[[int], tuple[float, float]] | None = None


def sources_for(options: SourceOptions, pin_state=None) -> Sources:
    """The sources for these local options (not ``--remote``: a feed, not a source);
    SetupError when nothing can be shown."""
    if options.demo is not None:
        from gputop.sources.sim import SimSource

        scenario = None if options.demo == "cycle" else options.demo
        start_wall, step = time.time(), options.delay_s
        try:
            source = SimSource(scenario, gpus=options.sim_gpus, seed=options.seed,
                               step_s=options.delay_s, started_wall_s=start_wall)
        except ValueError as exc:
            raise SetupError(str(exc)) from None
        lead = options.demo_lead_frames  # frame ``lead`` is now; those before, in the past
        return Sources([source], source.label, step,
                       frame_time=lambda seq: (start_wall + (seq - lead) * step, seq * step))
    made = {name: factory(options, pin_state) for name, factory in LIVE.items()}
    for gpu in made["nvml"]:
        try:
            gpu.open()  # opening again in the sampler is a no-op; if it failed, it fails
        except Exception as exc:  # again there and shows as "n/a (reason)" beside the engine
            something_else_to_read(options, pin_state, str(exc))
    return Sources([s for found in made.values() for s in found], "nvml", options.delay_s)


def something_else_to_read(options: SourceOptions, pin_state, gpu_reason: str) -> None:
    """Without a GPU, gputop still shows an engine (given or found), a pinned process tree
    or eBPF; only when none of these exists is there nothing to show (SetupError)."""
    pinned = pin_state is not None and pin_state.get().active
    if options.engine or pinned or options.ebpf != "off" or options.dcgm:
        return
    from gputop.sources import engine_discovery
    from gputop.sources.engine import probe

    if engine_discovery.first_answering(engine_discovery.candidates(), probe) is not None:
        return
    raise SetupError(f"cannot read the GPU ({gpu_reason}) and found no serving engine on this "
                     "machine: pass --engine URL (a vLLM, SGLang, TGI or llama.cpp /metrics "
                     "endpoint) or --pid PID, or run 'gputop --demo' to see gputop without a GPU")
