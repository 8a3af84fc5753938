"""gputop's real command line over the tests' fake NVML, for tests in a real terminal.

NVML cannot exist on these machines, so a test that needs live mode (real PIDs to act
on, real cgroups to name) runs this instead of ``python -m gputop``: it installs the
fake NVML described by the JSON file in ``FAKE_NVML_SPEC`` and hands the arguments to
gputop's own ``main``.  The spec: {"gpus": [{"name": ..., "procs": [[pid, mem_gib]],
"util_pct": .., "fan_pct": .., "pending_xids": [..], "ecc_counts": [c, u]}, ...]}.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from gputop.cli import main
from tests.fake_nvml import FakeGpu, FakeNvml, FakeProc, GiB

class Patch:
    """What ``FakeNvml.install`` needs of pytest's monkeypatch, without importing pytest
    (0.1 s more on every start of the gputop under test)."""

    @staticmethod
    def setattr(target, name, value, raising=True):
        setattr(target, name, value)


FIELDS = ("util_pct", "fan_pct", "pstate", "pending_xids", "ecc_counts", "power_mw", "temp_c")


def fake_from_spec(spec: dict) -> FakeNvml:
    gpus = []
    for g in spec["gpus"]:
        extra = {k: (tuple(v) if k == "ecc_counts" and v is not None else v)
                 for k, v in g.items() if k in FIELDS}
        gpus.append(FakeGpu(g.get("name", "NVIDIA H100 80GB HBM3"), 80 * GiB,
                            int(g.get("used_gib", 20) * GiB),
                            gpm=g.get("gpm", {2: 40.0, 3: 20.0, 5: 10.0, 10: 30.0}),
                            procs=[FakeProc(pid, int(mem * GiB), sm_util=30)
                                   for pid, mem in g.get("procs", [])], **extra))
    return FakeNvml(gpus)


if __name__ == "__main__":
    with open(os.environ["FAKE_NVML_SPEC"]) as f:
        spec = json.load(f)
    for gpu in spec["gpus"]:
        gpu["gpm"] = {int(k): v for k, v in gpu.get("gpm", {2: 40.0, 3: 20.0}).items()}
    fake_from_spec(spec).install(Patch())
    sys.exit(main(sys.argv[1:]))
