"""Training jobs and plain CUDA programs as a step-time model, and other processes on a GPU.

A synchronous data-parallel step on rank r costs its compute ``c_r`` (the clock-bound share
scales with 1/clock, a heavier shard multiplies it, time-slicing with another process divides
it by the share the job keeps), then the gradient all-reduce, which no rank leaves before the
slowest arrives: a fast rank spins in the NCCL kernel (GPU-Util counts it busy, few SMs
active, little power), the slow rank computes.  Waiting for input (the DataLoader, storage) and
host-side gaps (launch delays, a starved Python thread) leave every GPU idle.  Samples/s, the
trainer's counter, GPU-Util, SM/tensor/DRAM, power and clocks all come from that step.
"""

from __future__ import annotations

import math

from .hw import Activity


class TrainJob:
    def __init__(self, spec: dict, boards, rng, knobs, t_wall0: float):
        self.s, self.rng, self.knobs, self.t_wall0 = spec, rng, knobs, t_wall0
        self.gpus = list(spec.get("gpus", [0]))
        self.board = boards[self.gpus[0]]
        self.samples = spec.get("samples0", 1.0e6 * rng.random())
        self.steps = spec.get("steps0", 5000 + rng.randrange(20000))
        self.launches = 0.0
        self.host_delays: list[float] = []
        self.sync_wait = 0.0
        self.phase = "train"
        self.pid0 = spec.get("pid0", 20000 + rng.randrange(20000))
        self.started = t_wall0 - spec.get("uptime_s", 1800 + rng.random() * 20000)
        self.saw = 0.0
        self.jitter_s = 0.0

    def phase_at(self, t: float) -> str:
        for t0, t1, name in self.s.get("phases", ()):
            if t0 <= t < t1:
                return name
        return self.s.get("phase", "train")

    def tick(self, t: float, dt: float, clocks: dict[int, float], share: dict[int, float],
             host_slow: float = 1.0) -> dict:
        s, k, rng = self.s, self.knobs, self.rng
        ph = self.phase = self.phase_at(t)
        if ph in ("gone", "loading"):
            return {"act": {g: Activity(busy=0.0) for g in self.gpus}, "cores": 1.0 if ph == "loading" else 0.0,
                    "up": ph != "gone", "phase": ph}
        if ph == "idle0":  # a context open, nothing running (a notebook between cells)
            return {"act": {g: Activity() for g in self.gpus}, "cores": 0.05, "up": True, "phase": ph}
        if ph == "ckpt":
            return {"act": {g: Activity(busy=0.02 * rng.random(), sm=0.2, dram=0.5, pcie_mib_s=2500.0)
                            for g in self.gpus}, "cores": 1.5 + len(self.gpus) * 0.3, "up": True,
                    "phase": ph}
        t_c = s.get("t_compute", 0.35)
        alpha = s.get("alpha", 0.75)  # share of compute that is clock-bound
        eff = dict(s.get("eff", {"sm": 0.92, "tensor": 0.55, "dram": 0.35}))
        boost = k.get("dram", t, 0.0)  # more bytes per step (working set past the cache)
        if boost:
            eff = {"sm": eff["sm"] * (1 - 0.3 * boost), "tensor": eff["tensor"] * (1 - boost),
                   "dram": min(0.94, eff["dram"] + boost)}
        comm = s.get("t_comm", 0.04 if len(self.gpus) > 1 else 0.0)
        if ph == "eval":
            t_c *= 0.38
            comm *= 0.1
            eff = {"sm": 0.85, "tensor": 0.45, "dram": 0.45}
        elif ph == "rollout":
            t_c *= s.get("rollout_scale", 1.0)
            alpha = 0.25
            comm *= 0.05
            eff = {"sm": 0.62, "tensor": 0.12, "dram": 0.72}
        elif ph == "warm":
            t_c *= 1.6
        accum = s.get("accum", 0)
        opt_extra = 0.0
        if accum:  # the optimizer step and all-reduce happen once per `accum` micro-steps
            comm /= accum
            opt_extra = s.get("t_opt", 0.08) / accum
        tiny = k.get("tiny", t, 0.0)
        tiny_mult = 1.0 + tiny * s.get("tiny_mult", 2.5)
        per = {}
        for g in self.gpus:
            sh = k.get(f"shard{g}", t)
            c = t_c * sh * (alpha / clocks[g] + (1 - alpha)) * tiny_mult + opt_extra
            per[g] = c / max(0.05, share[g])
        link = max(k.get(f"link{g}", t) for g in self.gpus)
        t_comm = comm * link * (1 + 0.05 * rng.gauss(0, 1))
        host = s.get("host_s", 0.004) * host_slow * k.get("host_mult", t)
        jitter = k.get("host_delay", t, 0.0) * (0.5 + rng.random())
        host += jitter
        gpu_time = max(per.values())
        t_step = gpu_time + max(0.0, t_comm) + host
        # input: the loader's capacity (samples/s) against what the GPUs would consume
        batch = s.get("batch", 256)
        cap = s.get("loader_cap", 1e9) * k.get("input", t)
        wait = 0.0
        if ph == "train" and cap < batch / t_step:
            need = batch / cap
            wait = need - t_step
            t_step = need
        if wait > 0:
            self.saw = (self.saw + dt / s.get("saw_s", 6.0)) % 1.0
            n_steps = dt / t_step * (1.6 - 1.2 * self.saw)
        else:
            n_steps = dt / t_step
        if ph in ("train", "warm"):
            self.steps += n_steps
            self.samples += n_steps * batch * s.get("tokens_per_sample", 1)
        acts = {}
        for g in self.gpus:
            own = per[g] * share[g]  # its own kernel time per step
            spin = (gpu_time - per[g]) + max(0.0, t_comm)  # waiting inside the collective
            busy = min(1.0, (own + spin) / t_step)
            tot = own + spin
            if tot <= 0:
                acts[g] = Activity()
                continue
            smf = (own * (eff["sm"] * (1 - tiny) + 0.05 * tiny) + spin * 0.14) / tot
            tenf = own * eff["tensor"] * (1 - tiny * 0.96) / tot
            dramf = (own * (eff["dram"] * (1 - tiny) + 0.03 * tiny) + spin * 0.06) / tot
            samples = ()
            if wait > 0:  # the prefetch queue drains and refills: a saw-tooth over seconds
                busy = min(1.0, busy * (1.6 - 1.2 * self.saw))
                on = max(0.0, min(1.0, busy))
                pat = [1.0 if (i / 12) % 1.0 < on else 0.0 for i in range(12)]
                samples = tuple(pat)
            nv = (t_comm * 60e3 / t_step) if len(self.gpus) > 1 and self.board.nvlink else 0.0
            acts[g] = Activity(busy=busy, sm=smf, occ=0.35 if not tiny else 0.1, tensor=tenf,
                               dram=dramf, nvlink_mib_s=nv / max(1.0, link),
                               pcie_mib_s=s.get("pcie", 300.0) * (1 + (wait > 0)))
        self.launches += n_steps * s.get("kernels_per_step", 1200) * (1 + 2 * tiny)
        self.jitter_s += n_steps * jitter
        self.host_delays.append(host)
        self.sync_wait = gpu_time
        workers = s.get("workers", 8)
        load = 1.0 if cap >= batch / max(t_step, 1e-3) else 1.0
        cores = 1.1 * len(self.gpus) + workers * s.get("worker_busy", 0.35) * load
        if wait > 0:
            cores = 1.1 * len(self.gpus) + workers * 0.97  # loader workers pegged
        if ph == "eval":
            cores *= 0.8
        return {"act": acts, "cores": cores, "up": True, "phase": ph, "step_s": t_step,
                "wait": wait}


class OtherJob:
    """Another process on a GPU: time-slices it (``slice`` of GPU time when both want it)."""

    def __init__(self, spec: dict, boards, rng, knobs, t_wall0: float):
        self.s, self.rng, self.knobs = spec, rng, knobs
        self.gpus = list(spec.get("gpus", [0]))
        self.pid0 = spec.get("pid0", 60000 + rng.randrange(4000))
        self.started = t_wall0 + spec.get("t0", 0.0)
        self.launches = 0.0
        self.host_delays: list[float] = []

    def present(self, t: float) -> bool:
        return self.s.get("t0", 0.0) <= t < self.s.get("t1", 1e9)

    def slice(self, t: float) -> float:
        if not self.present(t):
            return 0.0
        return self.knobs.get("slice", t, self.s.get("slice", 0.0))

    def tick(self, t, dt, clocks, share, host_slow=1.0) -> dict:
        sl = self.slice(t)
        busy = sl * (0.9 + 0.1 * self.rng.random())
        e = self.s.get("eff", {"sm": 0.8, "tensor": 0.3, "dram": 0.4})
        return {"act": {g: Activity(busy=busy, sm=e["sm"], tensor=e["tensor"], dram=e["dram"])
                        for g in self.gpus}, "cores": self.s.get("cores", 1.0) if self.present(t) else 0.0,
                "up": self.present(t)}


def smooth_noise(rng, n: int, scale: float, corr: float = 0.9) -> list[float]:
    out, x = [], 0.0
    for _ in range(n):
        x = corr * x + math.sqrt(1 - corr * corr) * rng.gauss(0, scale)
        out.append(x)
    return out
