"""gputop through the real pynvml and ctypes, over a C stand-in libnvidia-ml.so.1.

The other NVML tests replace pynvml's functions in Python; this one leaves pynvml whole and
gives it a shared library with the driver's symbols and struct layouts
(tests/stand_in/nvml_stand_in.c, built here with gcc), so the real loader, the real
argument and struct marshalling, the INSUFFICIENT_SIZE protocol of the process list and
"function not found" for what the library lacks are all exercised."""

import json
import os
import subprocess
import sys
from pathlib import Path



HERE = Path(__file__).parent



def test_snapshot_over_the_real_pynvml_and_a_stand_in_library(nvml_library):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        env = dict(os.environ, LD_LIBRARY_PATH=str(nvml_library), NVML_STAND_IN_GPUS="4",
                   NVML_STAND_IN_PROCS=f"{sleeper.pid}:2:3072")
        result = subprocess.run([sys.executable, "-m", "gputop", "snapshot", "--json",
                                 "--samples", "2", "-d", "0.2"], env=env, capture_output=True,
                                text=True, timeout=60)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["sources"]["nvml"]["ok"] is True
    gpus = data["gpus"]
    assert [g["index"] for g in gpus] == [0, 1, 2, 3]
    two = gpus[2]
    assert two["name"] == "NVIDIA H100 80GB HBM3" and two["bus_id"] == "00000000:1A:00.0"
    assert two["util_gpu_pct"] == 90.0 and two["power_w"] == 350.0 and two["pstate"] == 0
    assert two["mem_used_bytes"] == 2 * 2**30 + 3 * 2**30  # the context's 2 GiB + the process
    assert two["fan_pct"] is None and "not supported" in two["missing"]["fan_pct"]
    # what this library lacks (GPM) is unknown with its reason, never 0
    assert two["sm_active_pct"] is None and two["missing"]["sm_active_pct"]
    (proc,) = two["processes"]
    assert proc["pid"] == sleeper.pid and proc["mem_bytes"] == 3 * 2**30
    assert proc["name"] == "sleep"
    assert all(not g["processes"] for i, g in enumerate(gpus) if i != 2)
