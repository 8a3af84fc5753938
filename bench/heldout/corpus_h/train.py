"""Training jobs and plain CUDA programs: a step is compute (FLOPs over tensor throughput at
the job's efficiency), then the gradient collective (partly hidden behind backward), the
optimizer, and whatever the host makes the GPU wait for (the next batch).  A rank that
finishes its compute early waits inside the NCCL kernel: GPU-Util stays up, SM activity and
power fall (the kernel spins on a few SMs).  Data waits leave the GPU idle: GPU-Util and the
driver's sub-second samples saw-tooth."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Step:
    """One training step's shape this tick (seconds per step, per rank)."""

    compute: float = 0.3  # forward + backward on the rank
    comm: float = 0.04  # collective time not hidden
    opt: float = 0.02  # optimizer kernels
    tiny: float = 0.0  # tiny-kernel time per step (eager loops, per-parameter optimizer)
    wait: float = 0.0  # waiting for data (GPU idle)
    host_gap: float = 0.0  # host delay per step between kernels (launch thread)
    rank_f: tuple = ()  # per-rank compute factors
    mfu: float = 0.45
    dram: float = 0.3  # DRAM activity during compute
    tokens: float = 0.0  # work per step (tokens or samples) for the counter
    pause: float = 0.0  # fraction of this tick with no step at all (checkpoint, eval gap)
    eval_mode: bool = False  # forward only, no collective, counter stops


def tick(rng, st: Step, n: int, dt: float, clock_f, phase: float, samples: int, share=0.0):
    """(per-rank activity dicts, steps done this tick, new phase).  ``clock_f`` per rank."""
    rf = st.rank_f or (1.0,) * n
    shares = share if isinstance(share, (list, tuple)) else [share] * n
    comp = [st.compute * f / max(0.3, cf) for f, cf in zip(rf, clock_f)]
    wall = [c / max(0.05, 1 - sh) for c, sh in zip(comp, shares)]
    slow = max(wall)
    comm = 0.0 if st.eval_mode else st.comm
    t_step = slow + comm + st.opt + st.tiny + st.wait + st.host_gap
    run_s = dt * (1 - st.pause)
    steps = run_s / t_step
    acts = []
    for c, w in zip(comp, wall):
        own = steps * (c + st.opt) / dt
        nccl = steps * ((slow - w) + comm) / dt
        tiny = steps * st.tiny / dt
        busy = min(1.0, own + nccl + tiny + steps * st.host_gap * 0.15 / dt)
        tensor = own * min(0.95, st.mfu / 0.8) * (c - 0.0) / max(c + st.opt, 1e-9)
        sm = own * 0.92 + nccl * 0.14 + tiny * 0.12
        dram = own * st.dram + nccl * 0.08 + tiny * 0.05
        acts.append(dict(busy=busy, sm=sm, tensor=tensor, dram=dram, occ=own * 0.3 + tiny * 0.03,
                         nvlink=steps * comm / dt))
    # the driver's sub-second samples: busy within each 1/rate slot of a periodic step
    period = t_step
    idle = st.wait + st.host_gap * 0.85
    subs = []
    slot = dt / samples
    for i in range(samples):
        a, b = i * slot, (i + 1) * slot
        subs.append(_busy_between(phase + a, phase + b, period, idle, st.pause, dt, a))
    phase = (phase + dt) % period
    for act in acts:
        act["sub"] = tuple(min(1.0, s * act["busy"] / max(1e-9, (1 - idle / period)
                                                          * (1 - st.pause)) if idle else
                               act["busy"] * (1 + rng.gauss(0, 0.01))) for s in subs)
    return acts, steps, phase


def _busy_between(a, b, period, idle, pause, dt, at):
    """Fraction of [a, b) with a kernel running when each step starts with ``idle`` s idle."""
    if at >= dt * (1 - pause):
        return 0.0
    if idle <= 0:
        return 1.0
    n = 24
    busy = 0
    for k in range(n):
        x = (a + (b - a) * (k + 0.5) / n) % period
        busy += x >= idle
    return busy / n
