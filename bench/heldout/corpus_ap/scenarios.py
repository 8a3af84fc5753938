"""The 66 traces: a biotech / drug-discovery GPU estate over a month.  Each is a node (GPUs, host),
a workload (engines.Serve or jobs.StepJob) and, for the 44 faults, a physical change in a window."""
from __future__ import annotations

import math
import random

from corpus_ap.engines import Model, Serve
from corpus_ap.hw import GiB, Spec
from corpus_ap.jobs import StepJob, Tenant

T0 = 1_798_761_600.0  # 2027-01-01 00:00 UTC: the month starts here

M = {  # model catalogue
    "llama8b": ("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 4096, 8, 128),
    "qwen14b": ("Qwen/Qwen2.5-14B-Instruct", 14.7e9, 48, 5120, 8, 128),
    "qwen32b": ("Qwen/Qwen2.5-32B-Instruct", 32.5e9, 64, 5120, 8, 128),
    "llama70b": ("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 8192, 8, 128),
    "mistral7b": ("mistralai/Mistral-7B-Instruct-v0.3", 7.25e9, 32, 4096, 8, 128),
    "chem7b": ("biolab/chem-copilot-7b", 7.6e9, 28, 3584, 4, 128),
}


def model(key, wbytes=None):
    n, p, l, h, kv, hd = M[key]
    return Model(n, p, l, h, kv, hd, wbytes=wbytes)


def bump(t0, t1, v, base=1.0, ramp=5.0, off=8.0, period=None, duty=1.0):
    """base outside [t0, t1]; v inside, with a linear onset of ``ramp`` s, a decay of ``off`` s,
    and optionally on for ``duty`` of every ``period`` s (intermittent)."""
    def f(t):
        if t < t0 or t > t1 + off:
            return base
        x = min(1.0, (t - t0) / ramp) if ramp > 0 else 1.0
        if t > t1:
            x = max(0.0, 1.0 - (t - t1) / off) if off > 0 else 0.0
        if period and ((t - t0) % period) > period * duty:
            x = 0.0
        return base + (v - base) * x
    return f


def mul(*fns):
    return lambda t: math.prod(f(t) for f in fns)


def lognorm(rng, mu, sigma, lo, hi):
    return max(lo, min(hi, int(rng.lognormvariate(math.log(mu), sigma))))


def mix_of(p_mu, p_sig, o_mu, o_sig, p_max=32000, o_max=2048, n=1, lp=0):
    def f(t, rng):
        return dict(prompt=lognorm(rng, p_mu, p_sig, 16, p_max), out=lognorm(rng, o_mu, o_sig, 4, o_max),
                    n=n, lp=lp, maxtok=o_max)
    return f


def diurnal(base, lo_frac, period=900.0, phase=0.0):
    return lambda t: base * (lo_frac + (1 - lo_frac) * 0.5 * (1 + math.cos(2 * math.pi * (t / period + phase))))


class TraceSpec:
    def __init__(self, name, family, cause, note, *, gpu, ngpu=1, tick=1.0, duration=600.0, window=None,
                 culprit=None, engine="none", mild=False, cpus=64, cores=None, quota=None, host_bg=1.5,
                 power_limit=None, inlet=24.0, ebpf=False, scrape_s=5.0, day=0.0):
        self.name, self.family, self.cause, self.note = name, family, cause, note
        self.gpu, self.ngpu, self.tick, self.duration = gpu, ngpu, tick, duration
        self.win, self.culprit, self.engine, self.mild = window, culprit, engine, mild
        self.cpus = cpus
        self.cores = list(cores if cores is not None else range(cpus))
        self.quota, self.host_bg, self.power_limit, self.inlet = quota, host_bg, power_limit, inlet
        self.ebpf, self.scrape_s = ebpf, scrape_s
        self.ebpf_reason = "off (eBPF launch probes not enabled on this host)"
        r = random.Random(name)
        self.start_wall = T0 + day * 86400 + r.randrange(0, 80000)
        self.scrape_first = self.start_wall + r.uniform(0.5, scrape_s)
        self.setups, self.controls, self.tenants = [], [], []
        self.uuids = ["GPU-%08x-%04x-%04x-%04x-%012x" % (r.getrandbits(32), r.getrandbits(16), r.getrandbits(16),
                                                         r.getrandbits(16), r.getrandbits(48)) for _ in range(ngpu)]
        base = r.randrange(3000, 90000)
        self.root_pid = base
        self.ppid, self.age, self.rss = {}, {}, {}
        self.container, self.pod, self.cgroup = "", "", ""
        self.ports = ()
        self.url = ""
        self.tp = 1
        self._pid = base
        self.extra_tree = []  # (pid, t0, t1) processes of the tree that come and go

    def pid(self):
        self._pid += r_step(self._pid)
        return self._pid

    @property
    def window(self):
        return None if self.win is None else (self.start_wall + self.win[0], self.start_wall + self.win[1])

    def tree_pids(self, t):
        out = list(self.base_tree)
        for pid, a, b in self.extra_tree:
            if a <= t < b:
                out.append(pid)
        return sorted(out)

    def procs_on(self, g, t):
        out = [p for p in self.gpu_procs[g]]
        for tn in self.tenants:
            if tn.gpu == g and tn.present(t):
                out.append((tn.pid, tn.name, tn.cmdline, tn.user, (lambda t, m=tn.mem: m)))
        return out

    def pid_cpu(self, pid, cpu_s, t):
        return cpu_s * self.cpu_share.get(pid, 0.0)

    def metrics_text(self, job, t):
        if self.engine == "trainer":
            lines = []
            for fam, v in (("trainer_steps_total", job.steps),
                           (self.counter, job.done_tokens if self.counter == "trainer_tokens_total" else job.done_samples)):
                lines += [f"# TYPE {fam} counter", f"{fam} {float(v)}"]
            return "\n".join(lines) + "\n"
        return job.render(t, self.model_name)


def r_step(x):
    return 1 + (x * 2654435761 >> 7) % 37


# ------------------------------------------------------------------ builders

def serve(tr, kind, mdl, *, rate, mix, pool_frac=0.9, chunked=True, graphs=True, prefix_hit=0.0,
          prefix_len=0, spec_dec=None, budget=8192, max_seqs=256, v0=False, pool_tokens=None, slots=None,
          user="svc-llm", sched_us=1500, block=16):
    tr.tp = tr.ngpu
    tr.engine = kind
    tr.model_name = mdl.name
    port = {"vllm": 8000, "sglang": 30000, "tgi": 8080, "llamacpp": 8081}[kind]
    tr.ports = (port,)
    host = "lit-rag" if "rag" in tr.name else "chem" if "chem" in tr.name else "svc"
    tr.url = f"http://{host}-{kind}.gpu.internal:{port}/metrics" if kind != "llamacpp" else f"http://127.0.0.1:{port}/metrics"
    root = tr.root_pid
    names = {"vllm": ("python3", f"python3 -m vllm.entrypoints.openai.api_server --model {mdl.name} "
                                 f"--tensor-parallel-size {tr.ngpu} --gpu-memory-utilization {pool_frac}"
                                 + ("" if chunked else " --no-enable-chunked-prefill")
                                 + ("" if graphs else " --enforce-eager")
                                 + (" --enable-prefix-caching" if prefix_len else "")),
             "sglang": ("python3", f"python3 -m sglang.launch_server --model-path {mdl.name} --tp {tr.ngpu} "
                                   f"--mem-fraction-static {pool_frac} --enable-metrics"),
             "tgi": ("text-generation-launcher", f"text-generation-launcher --model-id {mdl.name} --num-shard {tr.ngpu}"),
             "llamacpp": ("llama-server", f"llama-server -m /models/{mdl.name.split('/')[-1]}.Q4_K_M.gguf "
                                          f"-ngl 99 -c 65536 --parallel {slots or 4} --metrics --port {port}")}
    pname, cmd = names[kind]
    core = tr.pid()
    workers = [tr.pid() for _ in range(tr.ngpu)] if tr.ngpu > 1 else [core]
    tr.base_tree = [root, core] + ([w for w in workers if w != core])
    if kind == "llamacpp":
        tr.base_tree = [root]
        workers = [root]
        core = root
    tr.engine_pids = list(tr.base_tree)
    tr.launch_pids = [core] if tr.ngpu == 1 else workers
    tr.cpu_share = {p: 1.0 / len(tr.base_tree) for p in tr.base_tree}
    sub = {"vllm": ("VLLM::EngineCore", "VllmWorker"), "sglang": ("sglang::scheduler", "sglang::scheduler_TP"),
           "tgi": ("text-generation-server", "text-generation-server"), "llamacpp": ("llama-server", "llama-server")}[kind]
    spec = Spec(tr.gpu)
    tr.gpu_procs = []
    for g in range(tr.ngpu):
        pid = workers[g]
        nm = sub[0] if tr.ngpu == 1 else f"{sub[1]}{g}" if kind != "tgi" else sub[1]
        if kind == "llamacpp":
            mem = mdl.wbytes + 65536 * mdl.kv_tok * 0.5 + 1.2 * GiB
        else:
            mem = spec.mem * pool_frac - 0.6 * GiB
        tr.gpu_procs.append([(pid, nm if kind != "llamacpp" else pname, cmd, user, (lambda t, m=mem: m))])
        tr.ppid[pid] = core if tr.ngpu > 1 else root
    tr.gpu_pids = [[p[0] for p in tr.gpu_procs[g]] for g in range(tr.ngpu)]
    tr.label = cmd[:60] + "\u2026"
    tr.threads = [("launch", 1.0), ("api", 0.35), ("detok", 0.25), ("sched", 0.25), ("misc", 0.15)]
    tr.tids = [core, root, root + 1, core + 1, core + 2]
    tr.thread_pid = [core, root, root, core, core]
    tr.thread_names = [sub[0][:15] if kind != "llamacpp" else "llama-server", pname[:15], "uvicorn", "python3",
                       "cuda-EvtHandlr"]

    def make(rng, node):
        return Serve(rng, kind, list(range(tr.ngpu)), node.spec, mdl, pool_frac=pool_frac, chunked=chunked,
                     graphs=graphs, prefix_hit=prefix_hit, prefix_len=prefix_len, rate=rate, mix=mix,
                     spec_dec=spec_dec, budget=budget, max_seqs=max_seqs, v0=v0, pool_tokens=pool_tokens,
                     url=tr.url, slots=slots, sched_us=sched_us, block=block)
    tr.make_job = make
    return tr


def steps(tr, *, cmd, user="ml", counter=None, workers=0, mem_frac=0.6, pname="python3", **kw):
    """A step job on every GPU of the node: one rank process per GPU, loader workers in the tree."""
    root = tr.root_pid
    ranks = [tr.pid() for _ in range(tr.ngpu)] if tr.ngpu > 1 else [root]
    wk = [tr.pid() for _ in range(workers * tr.ngpu)]
    tr.base_tree = sorted(set([root] + ranks + wk))
    tr.launch_pids = ranks
    tr.engine_pids = []
    spec = Spec(tr.gpu)
    tr.gpu_procs = []
    for g in range(tr.ngpu):
        mem = spec.mem * mem_frac * (1 + 0.01 * g)
        tr.gpu_procs.append([(ranks[g], pname, cmd, user, (lambda t, m=mem: m))])
        tr.ppid[ranks[g]] = root if ranks[g] != root else 1
    tr.gpu_pids = [[ranks[g]] for g in range(tr.ngpu)]
    tr.cpu_share = {p: (0.6 / len(ranks) if p in ranks else 0.4 / max(1, len(wk))) for p in tr.base_tree}
    tr.label = cmd[:60] + "\u2026"
    tr.threads = [("launch", 1.0), ("autograd", 0.3), ("pin", 0.05), ("worker", 0.6), ("misc", 0.05)]
    tr.tids = [ranks[0], ranks[0] + 29, ranks[0] + 4, wk[0] if wk else root + 3, root + 7]
    tr.thread_pid = [ranks[0], ranks[0], ranks[0], wk[0] if wk else root, root]
    tr.thread_names = [pname[:15], "pt_autograd_0", "pt_data_pin", "pt_data_worker" if wk else "python3", "python3"]
    if counter:
        tr.engine = "trainer"
        tr.counter = counter
        port = 9400 + (root % 97)
        tr.url = f"http://127.0.0.1:{port}/metrics"
        tr.ports = (port,)
        tr.engine_pids = list(tr.base_tree)
        tr.model_name = ""

    def make(rng, node):
        j = StepJob(rng, list(range(tr.ngpu)), node.spec, workers=workers, **kw)
        j.threads = 2 * tr.ngpu + workers * tr.ngpu
        return j
    tr.make_job = make
    return tr


# ------------------------------------------------------------------ fault knobs

def job_mod(name, fn):
    def s(job, node, rng):
        old = job.mods.get(name)
        job.mods[name] = fn if old is None else (lambda t, a=old: a(t) * fn(t))
    return s


def other_cpu(fn):
    def s(job, node, rng):
        node.host.other = fn
    return s


def launch_other(fn):
    def s(job, node, rng):
        node.host.launch_other = fn
    return s


def quota_fn(fn):
    def s(job, node, rng):
        node.host.quota_at = fn
    return s


def gpu_ctl(attr, fn, gpus=None):
    def c(t, node, job):
        for g in (gpus if gpus is not None else range(len(node.gpus))):
            setattr(node.gpus[g], attr, fn(t))
    return c


def tenant(tr, g, t0, t1, demand, *, sm=0.6, ten=0.3, dram=0.3, mem=8 * GiB, user="jdoe", name="python3",
           cmdline="python3 -m ipykernel_launcher -f /home/jdoe/.local/share/jupyter/runtime/kernel-7f3.json",
           ramp=0.0, inside=False, cpu=0.3):
    pid = tr.root_pid + 500000 + len(tr.tenants) * 7 + 13 if not inside else tr.pid()
    tn = Tenant(g, t0, t1, demand, sm, ten, dram, mem, pid, name, cmdline, user, ramp=ramp, inside=inside, cpu=cpu)
    tr.tenants.append(tn)
    if inside:
        tr.extra_tree.append((pid, t0 - 5, t1 + 3))
        tr.ppid[pid] = tr.root_pid
    return tn
