"""Builders: a serving node, a training node, a service node; tenants; fault shapes."""
from __future__ import annotations

import math

from corpus_ar.node import GIB, Node, Proc
from corpus_ar.serve import Engine, Stream
from corpus_ar import work

DAY = 86400.0
T0 = 1790812800.0  # 2026-10-01 00:00 UTC: the month around the launch


def win(ws, we, rin=6.0, rout=6.0, pulses=None, floor=0.0):
    """0..1 intensity of a fault between ws and we with linear ramps; pulses=(on, off) makes it
    intermittent."""
    def f(t):
        if t < ws or t > we + rout:
            return floor
        if t < ws + rin:
            v = (t - ws) / rin
        elif t > we:
            v = 1 - (t - we) / rout
        else:
            v = 1.0
        if pulses:
            on, off = pulses
            if (t - ws) % (on + off) >= on:
                v = 0.0
        return max(floor, v)
    return f


def lin(a, b, f):
    return lambda t, *args: a + (b - a) * f(t)


def diurnal(base, amp=0.1, period=900.0, phase=0.0):
    return lambda t: base * (1 + amp * math.sin(2 * math.pi * (t + phase) / period))


class Ctx:
    def __init__(self, rng, name):
        self.rng = rng
        self.name = name
        self.pid = 2000 + rng.randrange(200000)
        self.tid = 0
        self.ctx = 0

    def next_pid(self, step=None):
        self.pid += step or (1 + self.rng.randrange(40))
        return self.pid

    def next_ctx(self):
        self.ctx += 1
        return self.ctx


def new_node(S, board, n_gpus, tick, dur, start, cpus, cpuset, **kw):
    return Node(S.rng, S.name, board, n_gpus, tick, dur, start, cpus, cpuset, **kw)


def threads_for(node, S, proc, names, launch_first=True):
    out = []
    for i, nm in enumerate(names):
        tid = proc.pid if i == 0 else S.next_pid(1)
        th = node.host.thread(tid, proc.pid, nm, launch=(i == 0 and launch_first))
        proc.threads.append(th)
        out.append(th)
    return out


# ------------------------------------------------------------------ serving
ENGINE_CMD = {
    "vllm": "/opt/venv/bin/python3 /opt/venv/bin/vllm serve {model} --port {port} {flags}",
    "vllm0": "/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model {model} --port {port} {flags}",
    "sglang": "/opt/venv/bin/python3 -m sglang.launch_server --model-path {model} --port {port} --enable-metrics {flags}",
    "tgi": "text-generation-launcher --model-id {model} --port {port} {flags}",
    "llamacpp": "/home/{user}/llama.cpp/build/bin/llama-server -m /home/{user}/models/{model} --port {port} --metrics {flags}",
}
PORTS = {"vllm": 8000, "vllm0": 8000, "sglang": 30000, "tgi": 8080, "llamacpp": 8080}


def serve_node(S, *, kind, board, n_gpus=1, model, params_b, layers, hidden, kvb, streams,
               tick=1.0, dur=600.0, start, cpus=32, cpuset=None, quota=None, ebpf=False,
               flags="", user="svc-live", scrape_s=5.0, inlet=24.0, power_limit=None,
               container="", pod="", **eng):
    cpuset = cpuset or tuple(range(8))
    node = new_node(S, board, n_gpus, tick, dur, start, cpus, cpuset, quota=quota, ebpf=ebpf,
                    inlet=inlet, power_limit=power_limit, scrape_s=scrape_s)
    ctx = S.next_ctx()
    e = Engine(node, ctx, S.rng, kind, model.split("/")[-1] if kind == "llamacpp" else model,
               params_b, eng.pop("wbytes", 2.0), layers, hidden, kvb, tuple(range(n_gpus)), streams, **eng)
    node.engine = e
    node.workloads.append(e)
    port = PORTS[kind]
    node.engine_url = f"http://127.0.0.1:{port}/metrics"
    node.listen = (port,)
    cmd = ENGINE_CMD[kind].format(model=model, port=port, flags=flags, user=user).strip()
    start_s = start - S.rng.uniform(3600, 5 * 86400)
    cg = f"/kubepods/burstable/pod{S.rng.getrandbits(32):08x}/{S.rng.getrandbits(48):012x}" if pod else \
        f"/system.slice/{kind}-{S.name[:12]}.service"
    common = dict(user=user, start=start_s, container=container, pod=pod, cgroup=cg)
    root = Proc(S.next_pid(), "python3" if kind not in ("tgi", "llamacpp") else cmd.split()[0].split("/")[-1][:15],
                cmd, ppid=1, **common)
    node.procs.append(root)
    mem = e.mem_bytes
    if kind == "llamacpp":
        root.ctx = ctx
        root.mem = {0: mem}
        root.launcher = True
        threads_for(node, S, root, ["llama-server", "llama-server", "llama-server", "llama-server"])
        main = root.threads
    elif kind == "tgi":
        router = Proc(S.next_pid(), "text-generation", "text-generation-router --port 8080 --max-batch-prefill-tokens 16384",
                      ppid=root.pid, **common)
        node.procs.append(router)
        threads_for(node, S, router, ["text-generation", "tokio-runtime-w", "tokio-runtime-w"], False)
        main = []
        for g in range(n_gpus):
            sh = Proc(S.next_pid(), "text-generation",
                      f"/opt/conda/bin/python3 /opt/conda/bin/text-generation-server serve {model} --sharded {'true' if n_gpus > 1 else 'false'} --rank {g}",
                      ppid=root.pid, ctx=ctx, mem={g: mem}, launcher=True, **common)
            node.procs.append(sh)
            main += threads_for(node, S, sh, ["text-generation", "python3"])
        main = main + router.threads
    else:
        api_names = ["python3", "python3", "uvloop"] if kind != "sglang" else ["python3", "sglang::tokeniz"]
        threads_for(node, S, root, api_names, False)
        core_name = {"vllm": "VLLM::EngineCor", "vllm0": None, "sglang": "sglang::schedul"}[kind]
        main = []
        if kind == "vllm0":
            root.ctx = ctx
            root.mem = {g: mem for g in range(n_gpus)} if n_gpus == 1 else {0: mem}
            root.launcher = True
            root.threads[0].launch = True
            main = root.threads
            for g in range(1, n_gpus):
                w = Proc(S.next_pid(), "ray::RayWorkerW", f"ray::RayWorkerWrapper.execute_method", ppid=root.pid,
                         ctx=ctx, mem={g: mem}, **common)
                node.procs.append(w)
                main += threads_for(node, S, w, ["ray::RayWorkerW"], False)
        else:
            core = Proc(S.next_pid(), core_name, "VLLM::EngineCore" if kind == "vllm" else "sglang::scheduler",
                        ppid=root.pid, **common)
            node.procs.append(core)
            if n_gpus == 1:
                core.ctx = ctx
                core.mem = {0: mem}
                core.launcher = True
                main = threads_for(node, S, core, [core_name, "python3", "python3"])
            else:
                main = threads_for(node, S, core, [core_name, "python3"], False)
                for g in range(n_gpus):
                    wn = "VLLM::Worker_TP" if kind == "vllm" else "sglang::schedul"
                    w = Proc(S.next_pid(), wn, f"VLLM::Worker_TP{g}" if kind == "vllm" else f"sglang::scheduler_TP{g}",
                             ppid=core.pid if kind == "vllm" else root.pid, ctx=ctx, mem={g: mem}, launcher=True, **common)
                    node.procs.append(w)
                    main += threads_for(node, S, w, [wn, "python3"])
            if kind == "sglang":
                det = Proc(S.next_pid(), "sglang::detoken", "sglang::detokenizer", ppid=root.pid, **common)
                node.procs.append(det)
                threads_for(node, S, det, ["sglang::detoken"], False)
    node.pin_label = cmd[:60] + ("\u2026" if len(cmd) > 60 else "")

    def wants(node_, t, e=e, main=main, root=root):
        active = 1.0 if e.running or e.waiting else 0.0
        rate = sum(s.rate(t) if s.rate is not None else s.outstanding / 5.0 for s in e.streams)
        for i, th in enumerate(main):
            if i == 0:
                th.want = 0.08 + 0.9 * active
            else:
                th.want = 0.02 + 0.12 * active
        for i, th in enumerate(root.threads):
            if th not in main:
                th.want = min(0.9, 0.03 + 0.012 * rate + 0.003 * len(e.running))
    node.hooks.append(wants)
    return node, e


# ------------------------------------------------------------------ training
def train_node(S, *, board, n_gpus=1, tick=1.0, dur=600.0, start, cpus=64, cpuset=None,
               quota=None, ebpf=False, script="train.py", args="", user="mlops", counter="samples",
               mem_gib=40.0, inlet=24.0, power_limit=None, scrape_s=10.0, launcher="torchrun",
               pod="", container="", env_workers=0, **tr):
    cpuset = cpuset or tuple(range(min(cpus, 8 * n_gpus + 8)))
    node = new_node(S, board, n_gpus, tick, dur, start, cpus, cpuset, quota=quota, ebpf=ebpf,
                    inlet=inlet, power_limit=power_limit, scrape_s=scrape_s)
    ctx = S.next_ctx()
    tr.setdefault("work", counter or "samples")
    t = work.Trainer(node, ctx, S.rng, tuple(range(n_gpus)), **tr)
    node.workloads.append(t)
    start_s = start - S.rng.uniform(600, 20 * 3600)
    cg = f"/kubepods/pod{S.rng.getrandbits(32):08x}/{S.rng.getrandbits(48):012x}" if pod else \
        f"/user.slice/user-1{S.rng.randrange(1000, 9999)}.slice/session-{S.rng.randrange(10, 900)}.scope"
    common = dict(user=user, start=start_s, container=container, pod=pod, cgroup=cg)
    if n_gpus > 1 and launcher == "torchrun":
        cmd0 = f"/opt/venv/bin/python3 /opt/venv/bin/torchrun --nproc-per-node {n_gpus} {script} {args}".strip()
        root = Proc(S.next_pid(), "torchrun", cmd0, ppid=1, **common)
        node.procs.append(root)
        threads_for(node, S, root, ["torchrun"], False)
        parent = root.pid
    else:
        root = None
        parent = 1
    mem = int(mem_gib * GIB)
    for r in range(n_gpus):
        p = Proc(S.next_pid(), "python3", f"/opt/venv/bin/python3 -u {script} {args}".strip(),
                 ppid=parent, ctx=ctx, mem={r: mem}, launcher=True, **common)
        node.procs.append(p)
        ths = threads_for(node, S, p, ["python3", "pt_autograd_0", "pt_data_pin"])
        t.main_threads.append(ths[0])
        for w in range(tr.get("workers", 6)):
            wp = Proc(S.next_pid(), "pt_data_worker", p.cmdline, ppid=p.pid, rss=int(1.2 * GIB), **common)
            node.procs.append(wp)
            t.worker_threads += threads_for(node, S, wp, ["pt_data_worker"], False)
    for i in range(env_workers):
        ep = Proc(S.next_pid(), "gamesim-headle", f"/opt/sim/bin/gamesim-headless --env-port {41000 + i} --seed {i}",
                  ppid=node.procs[0].pid, rss=int(0.8 * GIB), **common)
        node.procs.append(ep)
        t.env_threads += threads_for(node, S, ep, ["gamesim-headle"], False)
    if counter:
        node.trainer_page = t
        node.engine_url = f"http://127.0.0.1:9400/metrics"
        node.listen = (9400,)
    node.pin_label = (f"{script} {args}")[:60]
    first_cmd = node.procs[0].cmdline
    node.pin_label = first_cmd.split("/")[-1][:60]
    return node, t


# ------------------------------------------------------------------ plain programs / services
def service_node(S, *, board, n_gpus=1, tick=1.0, dur=600.0, start, cpus=32, cpuset=None,
                 quota=None, ebpf=False, cmd, name="python3", user="svc-voice", mem_gib=12.0,
                 load, profile=work.GEMM, kps=3000, inlet=24.0, power_limit=None, pod="",
                 container="", host_want=0.5, launch_us=4.0, procs_per_gpu=1):
    cpuset = cpuset or tuple(range(8))
    node = new_node(S, board, n_gpus, tick, dur, start, cpus, cpuset, quota=quota, ebpf=ebpf,
                    inlet=inlet, power_limit=power_limit)
    start_s = start - S.rng.uniform(3600, 3 * 86400)
    cg = f"/kubepods/pod{S.rng.getrandbits(32):08x}/{S.rng.getrandbits(48):012x}" if pod else \
        f"/system.slice/{name}.service"
    streams = []
    for g in range(n_gpus):
        ctx = S.next_ctx()
        st = work.Stream(node, ctx, S.rng, (g,), load, profile, kps, launch_us, host_want)
        p = Proc(S.next_pid(), name, cmd, user=user, ppid=1, start=start_s, ctx=ctx,
                 mem={g: int(mem_gib * GIB)}, launcher=True, container=container, pod=pod, cgroup=cg)
        node.procs.append(p)
        st.threads = threads_for(node, S, p, [name[:15], "python3", "python3"])
        node.workloads.append(st)
        streams.append(st)
    node.pin_label = cmd[:60]
    return node, streams


def tenant(node, S, gpu, alive, load, profile, *, name, cmd, user, mem_gib, container="",
           pod="", cgroup="", cpu_want=0.4):
    """Another process on the GPU, outside the job's tree (own pid, user, cgroup)."""
    ctx = S.next_ctx()
    st = work.Stream(node, ctx, S.rng, (gpu,), lambda t: load(t) if alive(t) else 0.0, profile,
                     host_want=0.0)
    p = Proc(S.next_pid(50 + S.rng.randrange(3000)), name, cmd, user=user, ppid=1,
             start=node.start_wall + 0.0, ctx=ctx, mem={gpu: lambda t: int(mem_gib * GIB) if alive(t) else 0},
             in_tree=False, container=container, pod=pod, cgroup=cgroup or f"/system.slice/{name}.service")
    p.alive = alive
    node.procs.append(p)
    node.workloads.append(st)
    return p, st
