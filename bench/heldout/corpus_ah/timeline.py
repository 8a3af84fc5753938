"""Per-tick bins of GPU activity: segments that span ticks are split across them."""
from __future__ import annotations

from corpus_ah.physics import Act


class Timeline:
    def __init__(self, t0: float, tick: float, n: int, ngpu: int):
        self.t0, self.tick, self.n, self.ngpu = t0, tick, n, ngpu
        self.bins = [[Act() for _ in range(ngpu)] for _ in range(n + 2)]

    def emit(self, gpu, pid, a, b, sm, tensor, dram, occ=None, nvl=0.0, pcie=0.0):
        """Kernels on ``gpu`` from a to b (trace seconds) with the given activity fractions."""
        if b <= a:
            return
        tick = self.tick
        i = int((a - self.t0) / tick)
        while a < b and i <= self.n:
            end = min(b, self.t0 + (i + 1) * tick)
            if i >= 0:
                part = end - a
                act = self.bins[i][gpu]
                act.add(pid, part, sm, tensor, dram, occ)
                frac = part / (b - a) if b > a else 0
                act.nvl += nvl * frac
                act.pcie_rx += pcie * frac
            a = end
            i += 1

    def io(self, gpu, a, b, rx=0.0, tx=0.0, nvl=0.0):
        """Bytes moved without kernels of note (checkpoint copies, H2D of a batch)."""
        i = int((a - self.t0) / self.tick)
        if 0 <= i <= self.n:
            act = self.bins[i][gpu]
            act.pcie_rx += rx
            act.pcie_tx += tx
            act.nvl += nvl
