"""Step-based training loops: per rank data wait, compute scaled by that rank's clock and its
launching thread's CPU, a collective in which early ranks wait (NCCL kernels spinning: busy,
few SMs), checkpoints and evaluation passes; and an RL loop that alternates rollout (a Serve),
weight sync and training on the same GPUs."""
from __future__ import annotations

from corpus_aj.hw import GiB, MODELS
from corpus_aj.node import Proc
from corpus_aj.pages import EngineRecorder, EngineState


class Train:
    def __init__(self, node, gpus, *, compute_s: float, comm_s: float, data_s: float = 0.05,
                 tokens_per_step: int = 65536, mem_gb: float = 60.0, pid: int = 7100, user: str = "alice",
                 scrape_s: float | None = 5.0, port: int = 29500, ckpt_every: int = 0, ckpt_s: float = 20.0,
                 eval_every: int = 0, eval_s: float = 15.0, exposed: float = 0.35, host_frac: float = 0.45,
                 tensor: float = 0.55, sm: float = 0.9, dram: float = 0.3, cmd: str = "", slurm: str = "",
                 launch_thread_pid: int | None = None, pin: bool = True, kernels_per_step: int = 4000,
                 tiny: bool = False):
        self.node, self.gpus = node, list(gpus)
        self.compute_s, self.comm_s, self.data_s = compute_s, comm_s, data_s
        self.tokens_per_step = tokens_per_step
        self.exposed = exposed
        self.host_frac = host_frac
        self.act = (sm, tensor, dram)
        self.ckpt_every, self.ckpt_s, self.eval_every, self.eval_s = ckpt_every, ckpt_s, eval_every, eval_s
        self.kernels = kernels_per_step
        self.tiny = tiny
        self.t = 0.0
        self.steps = 0
        rng = node.rng
        cmd = cmd or (f"torchrun --nproc-per-node {len(self.gpus)} train_sft.py --config configs/sft.yaml")
        t0w = node.start_wall - rng.uniform(300, 30000)
        root = Proc(pid, "torchrun", cmd, (), user=user, start_time_s=t0w, base_cpu=0.05,
                    slurm_job=slurm, slurm_step="0" if slurm else "",
                    cgroup=f"/system.slice/slurmstepd.scope/job_{slurm}/step_0/user/task_0" if slurm else "/user.slice")
        node.procs.append(root)
        self.pids = []
        for i, g in enumerate(self.gpus):
            p = Proc(pid + 11 + i, "python3", f"/opt/conda/bin/python3 -u {cmd.split()[-3] if len(cmd.split()) > 3 else 'train.py'} --local-rank {i}",
                     (g,), user=user, ppid=pid, start_time_s=t0w + 3, base_cpu=1.0, slurm_job=slurm,
                     slurm_step="0" if slurm else "", cgroup=root.cgroup)
            node.procs.append(p)
            self.pids.append(p.pid)
            node.set_mem(g, 0.0, p.pid, mem_gb * GiB)
            for w in range(2):
                node.procs.append(Proc(pid + 100 + 10 * i + w, "pt_data_worker", p.cmdline, (), user=user, ppid=p.pid,
                                       start_time_s=t0w + 5, base_cpu=0.25, slurm_job=slurm, cgroup=root.cgroup))
        node.launch_pid = self.pids[0]
        node.host.tree_demand = len(self.gpus) * (1.0 + 0.5)
        if pin:
            node.pin_roots = (pid,)
            node.pin_label = cmd[:60] + ("…" if len(cmd) > 60 else "")
        self.state = None
        if scrape_s:
            self.state = EngineState("trainer", "", f"http://127.0.0.1:{port}/metrics")
            EngineRecorder(self.state, node, scrape_s, 1, self.gpus, [pid] + self.pids, miss_p=0.005)
        # hooks a fault sets: per rank compute multiplier, data multiplier, comm multiplier
        self.rank_mult = lambda r, t: 1.0
        self.data_mult = lambda t: 1.0
        self.comm_mult = lambda t: 1.0
        self.rank_host = lambda r, t: 1.0   # CPU share of a rank's launching thread (1 = all it needs)

    def _scrape(self, t):
        for e in self.node.engines:
            e.maybe_scrape(t)

    def run(self, until: float):
        node = self.node
        until = min(until, node.duration)
        while self.t < until:
            self._scrape(self.t)
            t = self.t
            if self.ckpt_every and self.steps and self.steps % self.ckpt_every == 0 and getattr(self, "_ck", -1) != self.steps:
                self._ck = self.steps
                self._pause(t, self.ckpt_s, "ckpt")
                continue
            if self.eval_every and self.steps and self.steps % self.eval_every == 0 and getattr(self, "_ev", -1) != self.steps:
                self._ev = self.steps
                self._pause(t, self.eval_s, "eval")
                continue
            self.step(t)

    def step(self, t):
        node, rng = self.node, self.node.rng
        share = node.host.share(t)
        ends = []
        spans = []
        for r, g in enumerate(self.gpus):
            clk = node.clock(g, t)
            hs = min(share, self.rank_host(r, t))
            # data: the loader prefetches; the GPU waits only for what it cannot hide
            load = self.data_s * self.data_mult(t) / max(0.05, min(1.0, share * 1.1)) * rng.uniform(0.85, 1.2)
            gpu = self.compute_s * self.rank_mult(r, t) / clk ** 0.92 * rng.uniform(0.985, 1.015)
            host = self.compute_s * self.host_frac / max(0.02, hs)
            comp = max(gpu, host)
            wait = max(0.0, load - comp * 0.9)
            ends.append(t + wait + comp)
            spans.append((wait, gpu, comp))
        t_coll = max(ends)
        comm = self.comm_s * self.comm_mult(t) * rng.uniform(0.97, 1.05)
        t_end = t_coll + comm * self.exposed
        sm, ten, dr = self.act
        for r, g in enumerate(self.gpus):
            wait, gpu, comp = spans[r]
            a = t + wait
            pid = self.pids[r]
            if self.tiny:
                node.add(g, a, a + comp, min(1.0, 0.93 * gpu / comp), 0.09, 0.02, 0.04, 0.05, pid=pid)
            else:
                node.add(g, a, a + comp, gpu / comp, sm, ten, dr, pid=pid)
            # overlapped part of the collective runs during compute (NVLink), exposed part after
            if ends[r] < t_coll:
                node.add(g, ends[r], t_coll, 1.0, 0.1, 0.0, 0.01, 0.05, pid=pid)   # spinning in NCCL
            node.add(g, t_coll, t_end, 1.0, 0.22, 0.0, 0.3, 0.1, pid=pid)
            node.link(g, t_coll, nvlink_bytes=comm * 150e9 * 0.7 if len(self.gpus) > 1 else 0.0,
                      pcie_bytes=2e8)
            node.cpu(a, comp * self.host_frac + 0.3 * (t_end - t), launch_thread=comp * self.host_frac if r == 0 else 0,
                     launches=self.kernels if r == 0 else 0)
            if wait > 0.002:
                node.data_wait[min(node.nt - 1, int(t / node.tick))] += wait
        self.steps += 1
        self.t = t_end
        if self.state:
            self.state.gen += self.tokens_per_step
            self.state.finished += 1

    def _pause(self, t, dur, kind):
        node = self.node
        for r, g in enumerate(self.gpus):
            if kind == "ckpt":   # gather shards to host, write to Lustre: GPU nearly idle
                node.add(g, t, t + 0.15 * dur, 0.5, 0.1, 0.0, 0.4, pid=self.pids[r])
                node.link(g, t, pcie_bytes=20e9)
            else:                # eval: forward only, smaller batches, no backward
                node.add(g, t, t + dur, 0.72, 0.7, 0.3, 0.25, pid=self.pids[r])
            node.cpu(t, dur * (1.2 if kind == "ckpt" else 0.6))
        self.t = t + dur


class RLLoop:
    """GRPO-style colocated loop: rollout with the engine awake, the engine sleeps (KV pool
    freed, weights offloaded), the trainer runs, weights sync, the engine wakes."""

    def __init__(self, serve, trainer: Train, prompts: int, n: int, prompt_fn, out_fn, train_steps: int,
                 sync_s: float = 3.0, rollout_cap_s: float = 120.0):
        self.serve, self.trainer = serve, trainer
        self.prompts, self.n = prompts, n
        self.prompt_fn, self.out_fn = prompt_fn, out_fn
        self.train_steps, self.sync_s, self.cap = train_steps, sync_s, rollout_cap_s
        self.phases = []

    def run(self, until: float):
        from corpus_aj.serve import Req
        s, tr = self.serve, self.trainer
        node = s.node
        rng = node.rng
        t = s.t
        while t < until:
            # rollout
            for i in range(self.prompts):
                p = self.prompt_fn(rng)
                for j in range(self.n):
                    s.submit(Req(t + i * 0.002, p, self.out_fn(rng), n=self.n, shared=p if j else 0, cached=p if j else 0,
                                 max_tokens=16384))
            t0 = t
            s.advance(t + 0.5)
            while not s.idle() and s.t < min(until, t0 + self.cap):
                s.advance(s.t + 1.0)
            t = s.t
            self.phases.append(("rollout", t0, t))
            if t >= until:
                break
            s.sleep(t)
            # train on the same GPUs
            tr.t = t
            for i, g in enumerate(tr.gpus):
                node.set_mem(g, t, tr.pids[i], 55 * GiB)
            for _ in range(self.train_steps):
                tr._scrape(tr.t)
                s.rec.maybe_scrape(tr.t)
                tr.step(tr.t)
                if tr.t >= until:
                    break
            self.phases.append(("train", t, tr.t))
            t = tr.t
            # weight sync (broadcast to the engine's ranks) then wake
            for i, g in enumerate(tr.gpus):
                node.add(g, t, t + self.sync_s, 0.9, 0.15, 0.0, 0.35, pid=tr.pids[i])
                node.link(g, t, nvlink_bytes=s.W * 2)
                node.set_mem(g, t + self.sync_s, tr.pids[i], 4 * GiB)
            s.rec.maybe_scrape(t)
            s.wake(t + self.sync_s, load_s=1.5)
            self.phases.append(("sync", t, t + self.sync_s + 1.5))
            t = s.t
