"""An H100 in MIG mode with two 3g.40gb instances, each serving a small model: NVML gives
memory and processes per instance, no GPU-Util; GPM gives per-instance SM/DRAM/tensor."""

from __future__ import annotations

from gputop.schema import MigSample

from .box import Box
from .hw import GIB, Act, Proc
from .catalogue import wave


def run_mig(cfg, rng, start_wall):
    box = Box(cfg["gpu"], 1, cfg["tick"], start_wall, rng, cpus=32)
    procs = [Proc(4100 + i, 0, "python3", f"python serve_small.py --port {9000 + i}",
                  int(22 * GIB), start=start_wall - 900, mig_index=i) for i in range(2)]
    t = 0.0
    while t < cfg["dur"] - 1e-9:
        migs, plist = [], []
        tot_sm = tot_dram = tot_ten = 0.0
        for i in range(2):
            load = wave(t, 70 + 30 * i, 0.3, 0.8, i)
            sm, dram, ten = 0.45 * load + rng.gauss(0, 0.01), 0.5 * load, 0.15 * load
            tot_sm += sm / 2
            tot_dram += dram / 2
            tot_ten += ten / 2
            migs.append(MigSample(index=i, name=f"NVIDIA H100 80GB HBM3 MIG 3g.40gb",
                                  uuid=f"MIG-{i:04x}-77aa", mem_total_bytes=40 * GIB,
                                  mem_used_bytes=int(23 * GIB), gpu_instance_id=1 + i,
                                  compute_instance_id=0, profile="3g.40gb", sm_count=60,
                                  sm_active_pct=None if box.seq == 0 else round(100 * max(0, sm), 2),
                                  sm_occupancy_pct=None if box.seq == 0 else round(30 * sm, 2),
                                  dram_bw_pct=None if box.seq == 0 else round(100 * dram, 2),
                                  tensor_pct=None if box.seq == 0 else round(100 * ten, 2),
                                  missing={"sm_active_pct": "GPM needs a second sample"}
                                  if box.seq == 0 else {}))
            plist.append(procs[i].sample(None, 0.6, cfg["tick"]))
        act = Act(busy=0.9, sm=tot_sm, occ=tot_sm * 0.3, tensor=tot_ten, dram=tot_dram)
        box.emit(t, [act], [int(46.5 * GIB)], plist, None, None, 0.0, None, (),
                 migs={0: tuple(migs)}, mig_mode={0: True})
        t += cfg["tick"]
    return box.frames
