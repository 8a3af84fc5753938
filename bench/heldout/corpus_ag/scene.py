"""Turns a per-tick simulation into frames: GPU physics, scrape jitter, missed readings."""

from __future__ import annotations

from gputop.schema import Frame

from .common import BOARDS, GpuState, Host, bus_for, finish_gpu, rng_for, status, uuid_for


class Scene:
    def __init__(self, name, board_key, n_gpus, host: Host, start_wall, duration_s, tick_s=1.0,
                 gpu_offset=0, ambient_temp=34.0, drop_rate=0.004, carry_rate=0.01):
        self.name, self.board, self.n = name, BOARDS[board_key], n_gpus
        self.board_key = board_key
        self.host = host
        self.start, self.duration, self.dt = start_wall, duration_s, tick_s
        self.rng = rng_for(name + "/scene")
        self.states = [GpuState(ambient_temp + self.rng.uniform(-2, 2)) for _ in range(n_gpus)]
        self.slow = [1.0] * n_gpus  # compute slowdown seen last tick (clock)
        self.clock = [self.board.max_mhz] * n_gpus
        self.uuids = [uuid_for(name, i + gpu_offset) for i in range(n_gpus)]
        self.buses = [bus_for(i + gpu_offset) for i in range(n_gpus)]
        self.drop_rate, self.carry_rate = drop_rate, carry_rate
        self.mono0 = 1000.0 + self.rng.uniform(0, 5e5)

    def run(self, step) -> list[Frame]:
        frames, seq = [], 0
        last_engine = None
        t = 0.0
        while t < self.duration - 1e-9:
            t_wall = self.start + t + self.rng.uniform(0.0, 0.015)
            out = step(t, self.dt, t_wall)
            gpus = []
            for i, load in enumerate(out["loads"]):
                g = finish_gpu(self.board, i, load, self.states[i], self.rng, self.dt,
                               self.buses[i], self.uuids[i])
                gpus.append(g)
                self.clock[i] = g.sm_clock_mhz
                self.slow[i] = self.board.max_mhz / max(1.0, g.sm_clock_mhz) if load.util > 0.05 else 1.0
            sources = {"nvml": status(poll=0.006, rng=self.rng), "procfs": status(poll=0.0002, rng=self.rng, detail="/proc")}
            if out.get("host") is not None:
                sources["host"] = status(poll=0.0008, rng=self.rng)
            else:
                sources["host"] = status(False, out.get("host_reason", "no /proc/pressure in this container"))
            engine = out.get("engine")
            if engine is not None:
                if last_engine is not None and self.rng.random() < self.carry_rate:
                    engine, age = last_engine, self.dt  # a slow scrape: last reading carried
                    sources["engine"] = status(poll=0.9, rng=self.rng, age=age)
                else:
                    sources["engine"] = status(poll=out.get("scrape_s", 0.03), rng=self.rng)
                    last_engine = engine
            elif out.get("engine_reason"):
                sources["engine"] = status(False, out["engine_reason"])
            if out.get("pinned") is not None:
                sources["pin"] = status(poll=0.04, rng=self.rng)
            if out.get("launch") is not None:
                sources["ebpf"] = status(poll=0.002, rng=self.rng, detail=out.get("ebpf_detail", "uprobes on libcudart.so.12"))
            sources.update(out.get("sources", {}))
            if self.rng.random() >= self.drop_rate or not frames:
                frames.append(Frame(seq=seq, time_wall_s=round(t_wall, 6),
                                    time_mono_s=round(self.mono0 + t_wall - self.start, 6),
                                    sources=sources, gpus=tuple(gpus),
                                    processes=tuple(out.get("procs", ())), engine=engine,
                                    launch=tuple(out.get("launch") or ()), host=out.get("host"),
                                    pinned=out.get("pinned"), launch_armed_s=None))
                seq += 1
            t += self.dt
        return frames
