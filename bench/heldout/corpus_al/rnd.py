"""A small seeded generator (the standard library only: the corpus needs no numpy)."""
from __future__ import annotations

import math
import random


class Rng:
    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def random(self):
        return self.r.random()

    def normal(self, mu=0.0, sd=1.0):
        return self.r.gauss(mu, sd)

    def lognormal(self, mu, sigma):
        return self.r.lognormvariate(mu, sigma)

    def exponential(self, scale):
        return self.r.expovariate(1.0 / scale)

    def poisson(self, lam):
        if lam <= 0:
            return 0
        if lam > 50:
            return max(0, int(round(self.r.gauss(lam, math.sqrt(lam)))))
        L, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= self.r.random()
            if p <= L:
                return k
            k += 1
