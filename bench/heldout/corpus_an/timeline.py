"""Per-GPU kernel timelines: segments of uniform activity, integrated per tick."""

from __future__ import annotations

from corpus_an.hw import Activity


class Timeline:
    def __init__(self, n):
        self.segs = [[] for _ in range(n)]  # (start, end, busy, sm, occ, tensor, dram, nvlink, pid)

    def add(self, g, start, dur, busy=1.0, sm=0.0, occ=0.0, tensor=0.0, dram=0.0, nvlink=0.0, pid=0):
        if dur > 0:
            self.segs[g].append((start, start + dur, busy, sm, occ, tensor, dram, nvlink, pid))

    def collect(self, g, t0, t1) -> Activity:
        a = Activity()
        span = t1 - t0
        keep = []
        shares = {}
        for s in self.segs[g]:
            st, en = s[0], s[1]
            if en <= t0:
                continue
            if st >= t1:
                keep.append(s)
                continue
            ov = min(en, t1) - max(st, t0)
            f = ov / span
            a.busy += f * s[2]
            a.sm += f * s[3]
            a.occ += f * s[4]
            a.tensor += f * s[5]
            a.dram += f * s[6]
            a.nvlink += f * s[7]
            shares[s[8]] = shares.get(s[8], 0.0) + f * s[2]
            if en > t1:
                keep.append(s)
        self.segs[g] = keep
        a.busy = min(1.0, a.busy)
        a.sm = min(a.busy, a.sm)
        a.occ = min(a.sm, a.occ)
        a.tensor = min(a.sm, a.tensor)
        a.dram = min(1.0, a.dram)
        a.procs = {pid: (min(1.0, v), 0) for pid, v in shares.items()}
        return a
