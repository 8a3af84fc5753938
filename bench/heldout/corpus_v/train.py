"""A training job's physics in one place: a step is bounded by the GPU's compute, the main
thread's CPU (launches, Python), and the DataLoader's batch rate; a CFS quota or busy
neighbours on the cpuset shrink the CPU the tree gets; sharing and clocks stretch compute."""

from __future__ import annotations

from .sim import GpuModel
from .work import HostEnv, HostPlan, Pod, StepPlan, TrainCfg, run_trainer


def trainer(name: str, model: GpuModel, ranks: tuple[int, ...], dur: float, start: float,
            env: HostEnv, pod: Pod, cores: tuple[int, ...], fault, *, tick: float = 1.0,
            gpu_s: float = 0.8, main_need: float = 0.55, load_s: float = 1.2, workers: int = 4,
            per_step: float = 65536.0, unit: str | None = "tokens", sm: float = 0.8,
            density: float = 0.97, quota: float | None = None, others=None, launch=None,
            all_gpus=None, neighbours=None, cmd: str = "python train.py --config cfg.yaml",
            mem_gib: float = 60.0, worker_cpu_frac: float = 0.85, seq_buckets=None):
    """fault(t) -> dict of the moment's changes (see keys below); {} when healthy."""
    nr = len(ranks)

    def plan(t):
        f = fault(t)
        g = gpu_s * f.get("gpu_mult", 1.0)
        if seq_buckets is not None:
            g *= seq_buckets(t)
        q = f.get("quota", quota)
        w = f.get("workers", workers)
        ld = load_s * f.get("load_mult", 1.0)
        share = f.get("share", 1.0)  # main thread's share of a core (neighbours' loops)
        wshare = f.get("worker_share", 1.0)
        wcpu = f.get("worker_cpu_frac", worker_cpu_frac)
        need_main = main_need * f.get("main_mult", 1.0)
        autograd = 0.55 * need_main / max(g, 1e-3)
        # a CFS quota: demand over the quota stalls every thread in the cgroup
        demand = nr * (need_main / g + autograd + 0.05) + nr * w * min(1.0, wcpu * ld / (max(1, w) * g))
        thr = None
        if q is not None:
            qshare = min(1.0, q / demand)
            share = min(share, qshare)
            wshare = min(wshare, qshare)
            thr = min(1.0, max(0.0, (demand / q - 0.93) * 2.2)) if demand > 0.93 * q else \
                max(0.0, 0.06 * (demand / q - 0.6) / 0.33)
        host_t = need_main / max(share, 0.02)
        load_t = (ld * (wcpu / max(wshare, 0.02) + (1 - wcpu))) / max(1, w)
        step = max(g, host_t, load_t) + f.get("extra_gap", 0.0)
        return f, g, step, host_t, load_t, share, wshare, thr, autograd, q, w, ld, wcpu

    def step_fn(t, i, rng):
        f, g, step, host_t, load_t, share, wshare, thr, ag, q, w, ld, wcpu = plan(t)
        if f.get("eval"):
            return StepPlan(gpu_s=g * 0.33, gap_s=0.05, sm=sm * 0.9, count=False, density=density)
        if f.get("ckpt"):
            return StepPlan(gpu_s=0.02, gap_s=f["ckpt"], sm=0.1, count=False)
        gap = step - g
        host_bound = host_t >= load_t
        own = {}
        slow = dict(f.get("slow", {}))
        for r in range(nr):
            if f.get("shared", {}).get(ranks[r]):
                s = f["shared"][ranks[r]]  # time-slice stretch of this rank's kernels
                slow[r] = slow.get(r, 1.0) * s
                own[r] = 1.0 / s
        return StepPlan(gpu_s=g, gap_s=gap, slow=slow, comm_s=f.get("comm_s", 0.03 * nr ** 0.5),
                        sm=sm * f.get("sm_mult", 1.0), density=density * f.get("density_mult", 1.0),
                        spread_gap=host_bound and gap > 0, own=own,
                        work=per_step * f.get("work_mult", 1.0))

    def host_fn(t, rng):
        f, g, step, host_t, load_t, share, wshare, thr, ag, q, w, ld, wcpu = plan(t)
        stretch = max(step, g * max(f.get("slow", {0: 1.0}).values() or [1.0]))
        main = min(share, main_need * f.get("main_mult", 1.0) / stretch) + 0.02
        wrate = min(wshare, wcpu * ld / (max(1, w) * stretch))
        if f.get("eval"):
            main, wrate = 0.7, 0.25 * wrate
        if f.get("ckpt"):
            main, wrate = 0.9, 0.0
        inv = 25.0 + f.get("invol", 0.0)
        if q is not None and thr:
            inv += 60 * thr
        vol = 2500.0 + f.get("vol", 0.0) + 400 * w * wrate
        return HostPlan(main=main, autograd=min(ag * g / stretch, share), worker=wrate,
                        invol=inv, vol=vol, throttled=thr, extra_rq=f.get("extra_rq", 0.0),
                        extra_pressure=f.get("pressure", 0.0), eng_ok=not f.get("scrape_fail"))

    cfg = TrainCfg(name=name, model=model, ranks=ranks, tick=tick, dur=dur, start=start, env=env,
                   pod=pod, cores=cores, step=step_fn, host=host_fn, unit=unit,
                   per_step=per_step, workers=workers, others=others, launch=launch,
                   quota=(lambda t: fault(t).get("quota", quota)) if (quota is not None or
                                                                       _has_quota(fault, dur)) else None,
                   cmd=cmd, all_gpus=all_gpus, neighbours=neighbours, mem_gib=mem_gib)
    return run_trainer(cfg)


def _has_quota(fault, dur) -> bool:
    return any("quota" in fault(t) for t in range(0, int(dur), 5))
