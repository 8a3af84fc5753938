"""Request arrivals: non-homogeneous Poisson traffic with realistic noise.

The base rate of a trace is shaped by a slowly wandering factor (an Ornstein-Uhlenbeck
process on log rate, ~15% swings over tens of seconds: real traffic is never flat), by
optional bursts (a few seconds at 2-4x: a batch client, a retry storm) and by whatever
the trace's scenario adds (a ramp, a fall, a burst of long prompts).  Prompt and output
lengths are log-normal, as measured in public chat traces (ShareGPT-like: median prompt
several hundred tokens, long tail; outputs median ~150-250 tokens, capped by max_tokens).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field


@dataclass
class ClientReq:
    t: float
    prompt: int
    out: int  # tokens it will generate (before max_tokens)
    max_tokens: int
    cached: int = 0  # prompt tokens a prefix cache can serve
    shared_prefix: int = 0  # of which a system prompt shared by many requests
    n: int = 1
    logprobs: int = 0  # top-k logprobs per generated token
    prompt_logprobs: int = 0  # top-k logprobs per prompt token
    tag: str = ""


@dataclass
class Lengths:
    prompt_median: float = 600
    prompt_sigma: float = 0.9
    prompt_min: int = 16
    prompt_max: int = 7000
    out_median: float = 180
    out_sigma: float = 0.8
    max_tokens: tuple = (512, 1024, 1024, 2048)
    prefix: int = 0  # shared system prompt tokens (prefix-cached after the first)
    prefix_frac: float = 0.0  # share of requests that carry it
    extra_cached_frac: float = 0.0  # multi-turn: share of the rest of the prompt cached


def lognormal_int(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return int(max(lo, min(hi, round(median * math.exp(rng.gauss(0.0, sigma))))))


@dataclass
class RateShape:
    """rate(t) = base x wander(t) x bursts(t) x scenario(t), sampled at 1 s."""

    base: float
    duration: float
    wander_sigma: float = 0.15
    burst_every_s: float = 0.0  # mean gap between bursts (0: none)
    burst_len_s: tuple = (3.0, 10.0)
    burst_gain: tuple = (1.8, 3.5)
    scenario: object = None  # t -> multiplier
    diurnal: float = 0.0  # slow sinusoid amplitude (fraction)
    values: list = field(default_factory=list)

    def build(self, rng: random.Random) -> "RateShape":
        n = int(self.duration) + 2
        x = 0.0
        theta = 1.0 / 25.0
        vals = []
        bursts = [1.0] * n
        if self.burst_every_s > 0:
            t = rng.expovariate(1.0 / self.burst_every_s)
            while t < n:
                length = rng.uniform(*self.burst_len_s)
                gain = rng.uniform(*self.burst_gain)
                for i in range(int(t), min(n, int(t + length))):
                    bursts[i] = gain
                t += length + rng.expovariate(1.0 / self.burst_every_s)
        phase = rng.uniform(0, 2 * math.pi)
        for i in range(n):
            x += -theta * x + self.wander_sigma * math.sqrt(2 * theta) * rng.gauss(0, 1)
            r = self.base * math.exp(x - self.wander_sigma ** 2 / 2) * bursts[i]
            if self.diurnal:
                r *= 1.0 + self.diurnal * math.sin(phase + 2 * math.pi * i / 600.0)
            if self.scenario is not None:
                r *= self.scenario(float(i))
            vals.append(max(0.0, r))
        self.values = vals
        return self

    def rate(self, t: float) -> float:
        i = int(t)
        if i < 0:
            return 0.0
        if i >= len(self.values):
            return self.values[-1] if self.values else 0.0
        return self.values[i]


def arrivals(rng: random.Random, shape: RateShape, t0: float, t1: float) -> list[float]:
    """Poisson arrivals of rate shape.rate(t) in [t0, t1) (thinning, per 1 s piece)."""
    out = []
    t = t0
    while t < t1:
        sec_end = min(t1, math.floor(t) + 1.0)
        r = shape.rate(t)
        if r > 0:
            while True:
                t += rng.expovariate(r)
                if t >= sec_end:
                    break
                out.append(t)
        t = sec_end
    return out


def requests(rng: random.Random, times: list[float], lengths: Lengths, **extra) -> list[ClientReq]:
    out = []
    for t in times:
        prompt = lognormal_int(rng, lengths.prompt_median, lengths.prompt_sigma,
                               lengths.prompt_min, lengths.prompt_max)
        cached = shared = 0
        if lengths.prefix and rng.random() < lengths.prefix_frac:
            prompt += lengths.prefix
            cached = shared = lengths.prefix
        if lengths.extra_cached_frac > 0:
            cached += int((prompt - cached) * lengths.extra_cached_frac * rng.uniform(0.7, 1.0))
        cached = min(cached, prompt - 1)
        max_tokens = rng.choice(lengths.max_tokens)
        out_len = lognormal_int(rng, lengths.out_median, lengths.out_sigma, 1, 32768)
        out.append(ClientReq(t, prompt, min(out_len, max_tokens), max_tokens, cached=cached,
                             shared_prefix=shared, **extra))
    return out
