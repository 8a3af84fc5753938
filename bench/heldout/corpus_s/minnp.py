"""The few array and random helpers the simulators need, in pure Python (no numpy here)."""
from __future__ import annotations

import bisect
import math
import operator
import random


class A(list):
    """A list with element-wise arithmetic (scalars broadcast)."""

    def _op(self, other, f):
        if isinstance(other, list):
            return A(f(a, b) for a, b in zip(self, other))
        return A(f(a, other) for a in self)

    def _rop(self, other, f):
        return A(f(other, a) for a in self)

    __add__ = lambda s, o: s._op(o, operator.add)  # noqa: E731
    __radd__ = lambda s, o: s._rop(o, operator.add)  # noqa: E731
    __sub__ = lambda s, o: s._op(o, operator.sub)  # noqa: E731
    __rsub__ = lambda s, o: s._rop(o, operator.sub)  # noqa: E731
    __mul__ = lambda s, o: s._op(o, operator.mul)  # noqa: E731
    __rmul__ = lambda s, o: s._rop(o, operator.mul)  # noqa: E731
    __truediv__ = lambda s, o: s._op(o, operator.truediv)  # noqa: E731
    __and__ = lambda s, o: s._op(o, lambda a, b: bool(a) and bool(b))  # noqa: E731
    __or__ = lambda s, o: s._op(o, lambda a, b: bool(a) or bool(b))  # noqa: E731
    __invert__ = lambda s: A(not a for a in s)  # noqa: E731

    def __iadd__(self, o):
        if isinstance(o, list):
            for i, v in enumerate(o):
                self[i] = self[i] + v
        else:
            for i in range(len(self)):
                self[i] = self[i] + o
        return self

    def __setitem__(self, key, value):
        if isinstance(key, slice) and not isinstance(value, (list, tuple)):
            idx = range(*key.indices(len(self)))
            for i in idx:
                list.__setitem__(self, i, value)
            return
        list.__setitem__(self, key, value)

    def __getitem__(self, key):
        v = list.__getitem__(self, key)
        return A(v) if isinstance(key, slice) else v


def zeros(n):
    return A([0.0] * n)


def full(n, v):
    return A([v] * n)


def ones_bool(n):
    return A([True] * n)


def zeros_bool(n):
    return A([False] * n)


def cumsum(xs):
    out, s = A(), 0.0
    for x in xs:
        s += x
        out.append(s)
    return out


class Gen:
    """numpy.random.Generator's methods used here, over random.Random."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def random(self):
        return self.r.random()

    def uniform(self, a=0.0, b=1.0):
        return self.r.uniform(a, b)

    def normal(self, mu=0.0, sd=1.0):
        return self.r.gauss(mu, sd)

    def lognormal(self, mu, sigma):
        return self.r.lognormvariate(mu, sigma)

    def exponential(self, mean):
        return self.r.expovariate(1.0 / mean) if mean > 0 else 0.0

    def integers(self, lo, hi):
        return self.r.randrange(int(lo), int(hi))

    def poisson(self, lam):
        if lam <= 0:
            return 0
        if lam > 40:
            return max(0, int(round(self.r.gauss(lam, math.sqrt(lam)))))
        L, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= self.r.random()
            if p <= L:
                return k
            k += 1

    def choice(self, seq):
        return self.r.choice(seq)


def searchsorted(bounds, value):
    return bisect.bisect_left(bounds, value)


def ones(n):
    return A([1.0] * n)
