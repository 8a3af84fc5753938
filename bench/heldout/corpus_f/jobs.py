"""Jobs as users run them: engines (vLLM, SGLang, llama.cpp), trainers, programs, with their
processes named as those programs name themselves."""

from __future__ import annotations

from .frames import Job, Proc
from .models import MODELS
from .serve import Serving
from .train import Plain, Training

GiB = 2**30
SERVE_APIS = (("cudaGraphLaunch", 1, 9000, 0.25), ("cuLaunchKernel", 22, 4600, 0.3),
              ("cudaLaunchKernel", 36, 3900, 0.3), ("cudaMemcpyAsync", 3, 6500, 0.35))
EAGER_APIS = (("cuLaunchKernel", 70, 4800, 0.3), ("cudaLaunchKernel", 420, 3900, 0.3),
              ("cudaMemcpyAsync", 4, 6500, 0.35))
TRAIN_APIS = (("cudaLaunchKernel", 900, 4100, 0.3), ("cuLaunchKernel", 260, 5200, 0.3),
              ("cudaMemcpyAsync", 6, 7000, 0.3), ("cudaStreamSynchronize", 1, 60000, 0.9))


def ramp(t: float, a: float, b: float = 1e9, rin: float = 0.0, rout: float = 0.0) -> float:
    """0 before a, up to 1 over rin seconds, 1 until b, down to 0 over rout."""
    if t < a or t > b + rout:
        return 0.0
    up = 1.0 if rin <= 0 else min(1.0, (t - a) / rin)
    down = 1.0 if t <= b or rout <= 0 else max(0.0, 1 - (t - b) / rout)
    return up * down


def engine_job(tr, kind: str, model: str, gpus=(0,), mods=None, pid: int = 4100,
               container: str = "", pod: str = "", **kw) -> Job:
    m = MODELS[model]
    tp = len(gpus)
    port = {"vllm": 8000, "sglang": 30000, "llamacpp": 8080}[kind]
    sim = Serving(tr.rng, kind, m, tr.spec, tp=tp, gpus=gpus,
                  url=f"http://127.0.0.1:{port}/metrics", **kw)
    procs: list[Proc] = []
    box = dict(container=container, pod=pod)
    if kind == "vllm":
        procs.append(Proc(pid, None, "vllm", f"/usr/bin/python3 /usr/local/bin/vllm serve "
                          f"{m.name} --tensor-parallel-size {tp} --port 8000", 1, **box,
                          cpu_share=0.12))
        core = Proc(pid + 93, gpus[0] if tp == 1 else None, "VLLM::EngineCore",
                    "VLLM::EngineCore", pid, **box, cpu_share=0.6 if tp == 1 else 0.5)
        procs.append(core)
        for i, g in enumerate(gpus if tp > 1 else ()):
            procs.append(Proc(pid + 150 + i, g, f"VLLM::Worker_TP{i}", f"VLLM::Worker_TP{i}",
                              pid + 93, **box, cpu_share=0.38 / tp))
        busiest = f"{pid + 93} VLLM::EngineCore"
    elif kind == "sglang":
        procs.append(Proc(pid, None, "python3", f"python3 -m sglang.launch_server --model-path "
                          f"{m.name} --tp {tp} --port 30000 --enable-metrics", 1, **box,
                          cpu_share=0.15))
        for i, g in enumerate(gpus):
            procs.append(Proc(pid + 40 + i, g, f"sglang::scheduler_TP{i}",
                              f"sglang::scheduler_TP{i}", pid, **box, cpu_share=0.8 / tp))
        procs.append(Proc(pid + 80, None, "sglang::detokenizer", "sglang::detokenizer", pid,
                          **box, cpu_share=0.05))
        busiest = f"{pid + 40} sglang::schedul"
    else:
        ctx = kw.get("kv_pool_tokens") or 32768
        slots = kw.get("slots", 4)
        procs.append(Proc(pid, gpus[0], "llama-server", f"/opt/llama.cpp/build/bin/llama-server "
                          f"-m /models/{m.name} -c {ctx} -np {slots} -ngl 99 --metrics "
                          f"--host 0.0.0.0 --port 8080", 1, **box, cpu_share=1.0))
        busiest = f"{pid} llama-server"
    job = Job(sim, procs, mods=mods, engine=True, busiest=busiest)
    job.launch_pid = procs[1].pid if kind == "vllm" and tp == 1 else (
        procs[1].pid if kind == "sglang" else procs[0].pid)
    job.launch_apis = SERVE_APIS if kw.get("graphs", True) and kind != "llamacpp" else EAGER_APIS
    return job


def train_job(tr, gpus=(0,), mods=None, pid: int = 9200, script: str = "train.py",
              user: str = "ml", workers: int = 8, torchrun: bool = True, container: str = "",
              **kw) -> Job:
    sim = Training(tr.rng, tr.spec, gpus=gpus, workers=workers, **kw)
    procs = []
    n = len(gpus)
    if torchrun and n > 1:
        procs.append(Proc(pid, None, "torchrun", f"/usr/bin/python3 /usr/local/bin/torchrun "
                          f"--nproc-per-node {n} {script} --config configs/run.yaml", 1, user,
                          container=container, cpu_share=0.01))
        parent = pid
    else:
        parent = 1
    for i, g in enumerate(gpus):
        procs.append(Proc(pid + 10 + i, g, "python3", f"/usr/bin/python3 -u {script} "
                          f"--config configs/run.yaml" + (f" --local-rank={i}" if n > 1 else ""),
                          parent, user, container=container, cpu_share=0.9 / (n + 1),
                          rss=14 * GiB))
    for w in range(min(workers, 6)):
        procs.append(Proc(pid + 100 + w, None, "pt_data_worker", f"/usr/bin/python3 -u {script}",
                          pid + 10, user, container=container, cpu_share=0.1 / 6))
    job = Job(sim, procs, mods=mods, busiest=f"{pid + 10} pt_main_thread")
    job.threads = [(pid + 10, pid + 10, "pt_main_thread", 0.5 / n),
                   (pid + 11, pid + 10, "pt_autograd_0", 0.05)] + \
        [(pid + 100 + w, pid + 100 + w, "python3", 0.4 / max(1, min(workers, 6)))
         for w in range(min(workers, 6))]
    job.launch_pid = pid + 10
    job.launch_apis = TRAIN_APIS
    job.pattern = script
    return job


def plain_job(tr, gpus=(0,), mods=None, pid: int = 15100, name: str = "solver",
              cmdline: str = "./solver", user: str = "hpc", mem: int = 8 * GiB,
              container: str = "") -> Job:
    sim = Plain(tr.rng, tr.spec, gpus=gpus, mem_bytes=mem)
    procs = [Proc(pid + i, g, name, cmdline, 1, user, container=container,
                  cpu_share=1 / len(gpus)) for i, g in enumerate(gpus)]
    job = Job(sim, procs, mods=mods, busiest=f"{pid} {name[:15]}")
    job.launch_pid = pid
    job.launch_apis = EAGER_APIS
    return job
