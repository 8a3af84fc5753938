"""What changes over a trace: envelopes (sudden or ramped onsets) carrying effect targets.

An effect ending in ``_mult`` multiplies its default (1); a dict {gpu: value} applies per
GPU; anything else moves from its default toward the target as the envelope rises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

DEFAULTS = {
    "share": {}, "heavy": {}, "link": {}, "heat": {}, "force_r": {}, "limit_w": {},
    "contention": 0.0, "jitter": 0.0, "down": 0.0, "sampler_s": 0.0, "extra_seqs": 0.0,
    "pause": 0.0, "eval": 0.0, "tiny": 0.0, "launch_slow": 0.0, "iowait": 0.0,
}


@dataclass(frozen=True)
class Env:
    a: float  # seconds from the trace's start
    b: float
    ramp_s: float = 3.0  # rise time (a few seconds: sudden)
    release_s: float = 4.0
    targets: dict = field(default_factory=dict)
    reasons: tuple = ()  # throttle reasons while force_r holds

    def weight(self, t: float) -> float:
        if t < self.a or t > self.b + self.release_s:
            return 0.0
        if t < self.a + self.ramp_s:
            x = (t - self.a) / self.ramp_s
            return x if self.ramp_s > 10 else 0.5 - 0.5 * math.cos(math.pi * x)
        if t <= self.b:
            return 1.0
        return max(0.0, 1.0 - (t - self.b) / self.release_s)


def resolve(envs, t: float, base: dict) -> dict:
    e = dict(DEFAULTS)
    e.update(base)
    e = {k: (dict(v) if isinstance(v, dict) else v) for k, v in e.items()}
    reasons = {}
    for env in envs:
        w = env.weight(t)
        if w <= 0:
            continue
        for key, target in env.targets.items():
            if key.endswith("_mult"):
                e[key] = e.get(key, 1.0) * (1.0 + (target - 1.0) * w)
            elif isinstance(target, dict):
                cur = e.setdefault(key, {})
                for gpu, value in target.items():
                    if key == "force_r":
                        if w > 0.5:
                            cur[gpu] = min(cur.get(gpu, 1.0), value)
                            reasons[gpu] = env.reasons or ("hw slowdown",)
                    elif key == "limit_w":
                        if w > 0.5:
                            cur[gpu] = value
                    else:
                        zero = 1.0 if key in ("heavy", "link") else 0.0
                        start = cur.get(gpu, zero)
                        cur[gpu] = start + (value - start) * w
            else:
                start = e.get(key, 0.0)
                e[key] = start + (target - start) * w
    e["reasons"] = reasons
    return e


def mult(e: dict, key: str) -> float:
    return e.get(key, 1.0)


def curve(points, t: float) -> float:
    """A piecewise-linear traffic curve [(t, multiplier), ...]."""
    if not points:
        return 1.0
    if t <= points[0][0]:
        return points[0][1]
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if t <= t1:
            return v0 + (v1 - v0) * (t - t0) / max(1e-9, t1 - t0)
    return points[-1][1]
