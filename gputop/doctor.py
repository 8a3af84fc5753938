"""``gputop doctor``: one line per capability, what works here and how to fix what does not."""

from __future__ import annotations

import os

import pynvml

from gputop import hostroot
from gputop.install import clash

from gputop.sources.base import SourceError
from gputop.sources.nvml import NvmlSource

OK, NO, INFO = "ok  ", "FAIL", "--  "


def checks(gpu_indices: list[int] | None = None) -> tuple[list[str], bool]:
    """(lines, whether the GPU can be read at all)."""
    lines: list[str] = []
    source = NvmlSource(gpu_indices)
    try:
        source.open()
    except SourceError as exc:
        lines.append(f"{NO} NVML: {exc}. Fix: install the NVIDIA driver (nvidia-smi must work), "
                     "or run 'gputop --demo' to see gputop without a GPU")
        lines += _later() + _installation()
        return lines, False
    try:
        nvml_version = pynvml.nvmlSystemGetNVMLVersion()
    except pynvml.NVMLError:
        nvml_version = "?"
    lines.append(f"{OK} NVML {_text(nvml_version)}, driver {source.driver_version or '?'}, "
                 f"{len(source.devices)} GPU(s)")
    try:
        reading = source.poll()
    finally:
        source.close()
    for device in source.devices:
        if device.gpm_supported:
            lines.append(f"{OK} GPU {device.index} {device.name}: SM activity via NVML GPM")
        else:
            lines.append(f"{INFO} GPU {device.index} {device.name}: no SM activity ({device.gpm_reason})")
    for gpu in reading.gpus:
        if gpu.lost:
            lines.append(f"{NO} GPU {gpu.index}: {gpu.missing.get('all')}. Fix: check dmesg for Xid "
                         "errors; a reset or reboot may be needed")
        elif "processes" in gpu.missing:
            lines.append(f"{NO} GPU {gpu.index} per-process memory: {gpu.missing['processes']}. "
                         "Fix: run gputop as root")
        for name, why in sorted(gpu.missing.items()):
            if name in ("power_w", "temp_c", "util_gpu_pct"):
                lines.append(f"{INFO} GPU {gpu.index} {name}: {why}")
    # the process table read (the host's under --host-root), never os.kill: from a PID
    # namespace of its own, kill(pid, 0) asks about a different process
    hidden = [p.pid for p in reading.processes if not os.path.isdir(hostroot.proc(p.pid))]
    visible, why, what = hostroot.status()
    if hidden:
        lines.append(f"{NO} {len(hidden)} GPU process(es) not visible here (host PIDs, e.g. "
                     f"{hidden[0]}). Fix: run the container with --pid=host, or mount the "
                     "host's /proc and pass --host-root (docs/containers.md)")
    elif not visible:
        lines.append(f"{NO} {why}")
    else:
        lines.append(f"{OK} per-process info: {len(reading.processes)} GPU process(es) visible "
                     f"in {what}")
    lines += _later() + _installation()
    return lines, True


def _installation() -> list[str]:
    """Another project's gputop in this environment (FAIL: its files replace ours), or this
    one under its old name too (a note)."""
    why = clash()
    if why is None:
        return []
    return [f"{INFO if 'its old name' in why else NO} installation: {why}"]


def _later() -> list[str]:
    from gputop.sources.ebpf import mapped_libraries, unavailable_reason

    reason = unavailable_reason()
    if reason:
        ebpf = f"{NO} eBPF launch latency (--ebpf full): {reason}"
    else:
        libraries = mapped_libraries(None)
        ebpf = (f"{OK} eBPF launch latency (--ebpf full): bcc, headers and tracefs ready; "
                f"{len(libraries)} CUDA librar{'y' if len(libraries) == 1 else 'ies'} mapped now")
    return [ebpf, f"{INFO} engine metrics: pass --engine URL, or engines among the GPU "
                  "processes are found by their listening ports"]


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
