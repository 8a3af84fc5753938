"""Training jobs and plain CUDA programs, simulated step by step: a data loader with a bounded
prefetch queue, forward/backward at each rank's clock, a collective that ends when the
slowest rank arrives (the others spin inside NCCL kernels meanwhile), an optimizer step."""

from __future__ import annotations

from gputop.schema import EngineSample

COMPUTE = (0.9, 0.32, 0.3, 0.55)  # sm, occupancy, dram, tensor while a GEMM-heavy step runs
NCCL_WAIT = (0.13, 0.02, 0.01, 0.0)  # a few channels' blocks polling for peers
NCCL_MOVE = (0.16, 0.03, 0.3, 0.0)
OPTIM = (0.82, 0.5, 0.78, 0.0)


class Trainer:
    def __init__(self, world, gpus, *, step_s=0.45, comm_s=0.04, opt_s=0.03, units_per_step=8192,
                 unit="tokens", counter=True, loader_s=None, loader_fn=None, prefetch=4,
                 slow_fn=None, late_fn=None, phase_fn=None, other_fn=None, compute=COMPUTE, mem_frac=0.8,
                 workers=8, url="http://127.0.0.1:9400/metrics", pids=None, cpu_share=None,
                 host_ms=4.0, fault_fn=None, name="python", cmdline="python train.py"):
        self.w = world
        self.rng = world.rng
        self.gpus = gpus
        self.step_s = step_s
        self.comm_s = comm_s if len(gpus) > 1 else 0.0
        self.opt_s = opt_s
        self.units = units_per_step
        self.unit = unit
        self.counter = counter
        self.loader_fn = loader_fn or (lambda t: loader_s if loader_s is not None else step_s * 0.4)
        self.prefetch = prefetch
        self.slow_fn = slow_fn or (lambda t, r: 1.0)
        self.late_fn = late_fn or (lambda t, r: 0.0)
        self.phase_fn = phase_fn or (lambda t: None)
        self.other_fn = other_fn or (lambda t, r: 0.0)
        self.compute = compute
        self.workers = workers
        self.url = url
        self.cpu_share = cpu_share or (lambda t: 1.0)
        self.host_ms = host_ms
        self.fault_fn = fault_fn
        self.fault_marks: list[float] = []
        self.t_next = 0.0
        self.avail = [0.0] * prefetch  # when the batches in flight become ready
        self.last_avail = 0.0
        self.consumed: list[float] = []
        self.c = dict(units=float(int(units_per_step * len(gpus) * (2000 + self.rng.random() * 30000))),
                      steps=0.0, cpu=5000 + self.rng.random() * 9000, invol=0, vol=0)
        self.c["steps"] = float(int(self.c["units"] / (units_per_step * len(gpus))))
        self.c["invol"] = int(self.c["cpu"] * 40)
        self.c["vol"] = int(self.c["cpu"] * 900)
        self.pids = pids or tuple(2000 + 11 * g for g in gpus)
        self.mem_frac = mem_frac
        self.name = name
        self.cmdline = cmdline
        self.cpu_demand = 1.0
        self.loader_busy = 0.0
        self.launch_rate = 0.0
        self.steps_in_tick = 0

    def advance(self, s0, s1):
        w = self.w
        busy_cpu = 0.0
        while self.t_next < s1:
            t0 = self.t_next
            phase = self.phase_fn(t0)
            if phase is not None and phase.get("idle"):
                # nothing on the GPU (a checkpoint written by the CPU, a barrier elsewhere)
                end = t0 + phase.get("dur", 1.0)
                for r, g in enumerate(self.gpus):
                    spin = phase.get("spin_ranks", ())
                    if r in spin:
                        w.gpus[g].add(t0, end, 1.0, *NCCL_WAIT)
                busy_cpu += phase.get("cpu", 1.0) * (end - t0)
                self.t_next = end
                continue
            # the batch: ready when the loader has made it (bounded prefetch queue)
            L = self.loader_fn(t0)
            # a worker starts the next batch when a prefetch slot frees up
            slot_free = self.consumed[-self.prefetch] if len(self.consumed) >= self.prefetch else -1e9
            ready = max(self.last_avail, slot_free) + L * (1 + (self.rng.random() - 0.5) * 0.3)
            self.last_avail = ready
            start = max(t0, ready)
            self.consumed.append(start)
            if len(self.consumed) > 64:
                self.consumed = self.consumed[-32:]
            if start > t0:
                for g in self.gpus:
                    w.gpus[g].add(t0, start, 0.02, 0.3, 0.05, 0.05, 0.0)
            host = self.host_ms / 1000 / max(0.05, self.cpu_share(t0))
            comp = phase.get("compute", self.compute) if phase else self.compute
            step_s = phase.get("step_s", self.step_s) if phase else self.step_s
            arrive = []
            for r, g in enumerate(self.gpus):
                gpu = w.gpus[g]
                cf = gpu.clock_factor
                o = self.other_fn(t0, r)
                c = step_s * self.slow_fn(t0, r) / max(0.2, cf) ** 0.9
                c *= 1 + (self.rng.random() - 0.5) * 0.04
                c = c / max(0.05, 1 - o)
                # launches: the GPU waits where the host is slower than the kernels
                c = max(c, host * 40) if self.cpu_share(t0) < 0.99 else c + host
                late = self.late_fn(t0, r)
                if late > 0:  # this rank's own input arrives late: its GPU idles first
                    gpu.add(start, start + late, 0.02, 0.3, 0.05, 0.05, 0.0)
                a = start + late + c
                start_r = start + late
                duty = min(1.0, (1 - o) * 0.985 + o)
                if o > 0:
                    gpu.add(start_r, a, 1.0 - o, *comp)
                    gpu.add(start_r, a, o, 0.92, 0.4, 0.35, 0.5)
                else:
                    d = duty if self.cpu_share(t0) >= 0.99 else max(0.3, min(0.985, step_s / c))
                    gpu.add(start_r, a, d, *comp)
                arrive.append(a)
            if len(self.gpus) > 1:
                cs = max(arrive)
                for r, g in enumerate(self.gpus):
                    if cs > arrive[r]:
                        w.gpus[g].add(arrive[r], cs, 1.0, *NCCL_WAIT)
                    w.gpus[g].add(cs, cs + self.comm_s, 1.0, *NCCL_MOVE,
                                  link_mib_s=120000.0)
                end = cs + self.comm_s
            else:
                end = max(arrive)
            if self.opt_s:
                for g in self.gpus:
                    cf = w.gpus[g].clock_factor
                    w.gpus[g].add(end, end + self.opt_s / max(0.5, cf), 1.0, *OPTIM)
                end += self.opt_s
            if not (phase and phase.get("no_count")):
                self.c["units"] += self.units * len(self.gpus)
                self.c["steps"] += 1
            busy_cpu += (end - t0)
            self.t_next = end
            if t0 >= 0 and self.fault_fn is not None and self.fault_fn(t0, self):
                self.fault_marks.append(t0)
        dt = s1 - s0
        share = self.cpu_share(s0)
        L = self.loader_fn(s0)
        self.loader_busy = self.workers * min(1.0, L / max(self.step_s, 1e-3)) * 0.9 + 0.2
        self.cpu_demand = len(self.gpus) * 1.0 + self.loader_busy
        self.c["cpu"] += dt * (len(self.gpus) * min(1.0, share) + self.loader_busy * min(1.0, share))
        self.c["invol"] += int(dt * len(self.gpus) * (30 + 3000 * (1 - share)))
        self.c["vol"] += int(dt * len(self.gpus) * 400)
        self.launch_rate = 1200.0 * len(self.gpus)

    def sample(self, t_wall, t_mono):
        if not self.counter:
            return None
        return EngineSample(kind="trainer", url=self.url,
                            generation_tokens_total=float(int(self.c["units"])),
                            requests_finished_total=float(int(self.c["steps"])),
                            work_unit=self.unit, time_wall_s=t_wall, time_mono_s=t_mono,
                            pids=self.pids, cpu_s=round(self.c["cpu"], 2),
                            ctx_involuntary=int(self.c["invol"]),
                            busiest_thread_cpu_s=round(self.c["cpu"] * 0.4, 2),
                            busiest_thread="%d %s" % (self.pids[0], self.name))


class Program:
    """A plain CUDA program (no engine, no counter): phases of work, each with its own
    kernel mix, repeating a pattern of busy and idle time."""

    def __init__(self, world, gpus, phases, *, pids=None, name="python3", cmdline="python3 run.py",
                 mem_bytes=20e9, cpu=1.0, fault_fn=None):
        self.w = world
        self.rng = world.rng
        self.gpus = gpus
        self.phases = phases  # [(t0, t1, dict(period, busy, sm, occ, dram, ten))]
        self.pids = pids or tuple(3000 + g for g in gpus)
        self.name = name
        self.cmdline = cmdline
        self.mem_frac = mem_bytes
        self.cpu_demand = cpu
        self.c = dict(cpu=100.0 + self.rng.random() * 200, invol=1000, vol=5000)
        self.fault_fn = fault_fn
        self.fault_marks: list[float] = []
        self.cpu_share = lambda t: 1.0
        self.launch_rate = 0.0

    def advance(self, s0, s1):
        for a, b, p in self.phases:
            lo, hi = max(a, s0), min(b, s1)
            if hi <= lo:
                continue
            period = p.get("period", 0.0)
            duty = p.get("busy", 1.0)
            self.launch_rate = p.get("launches", 2000.0)
            for g in self.gpus:
                if period and duty < 1:
                    t = lo
                    while t < hi:
                        on = period * duty * (1 + (self.rng.random() - 0.5) * 0.2)
                        self.w.gpus[g].add(t, min(hi, t + on), 1.0, p["sm"], p["occ"], p["dram"], p["ten"])
                        t += period
                else:
                    self.w.gpus[g].add(lo, hi, duty, p["sm"], p["occ"], p["dram"], p["ten"])
            if self.fault_fn is not None and self.fault_fn(lo, self):
                self.fault_marks.append(lo)
        self.c["cpu"] += (s1 - s0) * self.cpu_demand
        self.c["invol"] += int((s1 - s0) * 40)

    def sample(self, t_wall, t_mono):
        return None
