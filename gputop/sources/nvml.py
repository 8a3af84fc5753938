"""NVML (nvidia-ml-py's ``pynvml``): whether it can be used on this machine."""

from __future__ import annotations


def nvml_unavailable_reason() -> str | None:
    """None when NVML initialises; otherwise one line naming the cause."""
    try:
        import pynvml
    except ImportError:
        return "the nvidia-ml-py package (module pynvml) is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        return "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver on this machine"
    except pynvml.NVMLError_DriverNotLoaded:
        return "the NVIDIA driver is not loaded"
    except pynvml.NVMLError_NoPermission:
        return "no permission to use NVML"
    except pynvml.NVMLError as exc:
        return f"NVML failed to initialise: {exc}"
    try:
        pynvml.nvmlShutdown()
    except pynvml.NVMLError:
        pass
    return None
