"""What the diagnosis judges: an engine on its GPUs, or a job (any CUDA process tree) on its.

An episode belongs to a subject, so on a box of eight independent servers the one that
collapsed is named, not every GPU above a threshold.  An engine's GPUs are those its
process tree uses (NVML's process list x the engine's pids), else what it reports, else all
of them (a remote endpoint).  The rest of the GPUs are grouped into jobs by their processes:
ranks of one job share a parent and a command line (torchrun's children); a process on
several GPUs is one job; a GPU whose processes are not visible is judged alone.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from gputop import patterns
from gputop.model.point import Point, ProcRef


ENGINE = "engine"  # the key of the engine's subject; a replica's is "engine:<its label>"


def engine_key(replica: str) -> str:
    return f"{ENGINE}:{replica}"


def is_engine_key(key: str) -> bool:
    """Whether a subject (or an episode's subject) is an engine or one of its replicas."""
    return key == ENGINE or key.startswith(ENGINE + ":")


def replica_of(key: str) -> str | None:
    """The replica label of an engine replica's key (None for any other subject)."""
    return key[len(ENGINE) + 1:] if key.startswith(ENGINE + ":") else None


@dataclass(frozen=True, slots=True)
class Subject:
    key: str
    kind: str  # "engine" (a serving engine), "trainer" (a step counter), "job", "gpu"
    gpus: tuple[int, ...]
    pids: frozenset[int]
    label: str
    # a job whose process is a serving engine gputop does not scrape (its title or command
    # line says so): its busy time follows its demand, which nothing here measures
    serves: bool = False

    @property
    def has_engine(self) -> bool:
        return self.kind in ("engine", "trainer")


def all_gpus(p: Point) -> list[int]:
    return sorted(set(p.util_pct) | set(p.sm_active_pct) | set(p.gpu_procs))


def primary(procs: tuple[ProcRef, ...], pinned: frozenset[int]) -> ProcRef | None:
    """The process a GPU works for: the pinned one, else the one using most SM, then memory."""
    if not procs:
        return None
    mine = [p for p in procs if p.pid in pinned]
    return max(mine or procs, key=lambda p: (p.sm_util_pct or 0.0, p.mem_bytes or 0))


# the per-rank argument launchers add to each rank's command line (torch.distributed.launch
# and DeepSpeed: --local-rank=N / --local_rank=N; torchrun passes it in the environment),
# and the pid inside its container that gputop appends (procinfo): each rank's own
_LOCAL_RANK = re.compile(r"\s--local[-_]rank[= ](\d+)")
_RANK_ARG = re.compile(_LOCAL_RANK.pattern + r"|\s+\(pid \d+ in its container\)$")


# what a serving engine's processes run or call themselves (vLLM and SGLang title theirs)
_SERVER = re.compile(r"^(?:VLLM::|sglang::)|(?:^|[\s/])(?:vllm\s+serve|llama-server|"
                     r"text-generation-(?:launcher|server)|tritonserver)\b|"
                     # (these as the program itself, not a path among its arguments)
                     r"^(?:\S*/)?(?:text-embeddings-router|trtllm-serve|ollama\s+(?:serve|runner)"
                     r"|ollama_llama_server|lmdeploy\s+serve)(?:\s|$)|"
                     r"-m\s+(?:vllm\.entrypoints|sglang\.launch_server|lmdeploy\.serve"
                     r"|tensorrt_llm\.commands\.serve)")


def first_rank(subject: Subject, p: Point) -> int:
    """The GPU of a job's first rank: the one whose process carries ``--local-rank 0`` (a
    launcher's argument), else the job's lowest GPU (torchrun numbers local ranks in the
    order of CUDA_VISIBLE_DEVICES, which is the GPUs' own order unless reordered)."""
    for g in sorted(subject.gpus):
        for proc in p.gpu_procs.get(g, ()):
            found = _LOCAL_RANK.search(proc.cmdline or "")
            if found and int(found.group(1)) == 0:
                return g
    return min(subject.gpus)


# a program named for serving (serve.py, embed_server.py, ``-m ctr.serve``, ./infer_server,
# ``serving.py``) or one a serving framework runs (uvicorn, gunicorn and its titled workers,
# TorchServe's and BentoML's model workers, a Ray Serve replica, Streamlit, KServe's
# huggingfaceserver, infinity's CLI): the program itself, never a path among its arguments
_SERVING_PROGRAM = re.compile(
    r"(?:^|[._-])serv(?:e|er|ers|ing)(?:$|[._-])|"
    r"^(?:uvicorn|gunicorn|torchserve|bentoml|_bentoml_impl|infinity_emb|streamlit"
    r"|huggingfaceserver|model_service_worker|ray::servereplica)(?:$|[._:-])")
# told where to listen (ComfyUI's and A1111's --listen, an app's --port N, Gradio's and
# Streamlit's server port): a server, unless a rank argument says a distributed launch (a
# rendezvous port is no listening service)
_LISTENS = re.compile(r"\s--listen(?:[= ]|$)|\s--(?:server[._-]|http[-_])?port[= ][0-9]+")
# ...but a program named for training or testing (3D Gaussian Splatting's train.py takes a
# viewer's --port; a Slurm script its rendezvous port) or a debugger running one (PyCharm's
# pydevd, debugpy, ptvsd take --port / --listen) is never a server by its name or its port
_NOT_SERVING = re.compile(r"(?:^|[._-])(?:train|training|finetune|fine_tune|pretrain|sft|test)"
                          r"(?:$|[._-])|^(?:pydevd|debugpy|ptvsd)(?:$|\.)")


def serves(proc: ProcRef) -> bool:
    """Whether a GPU process is a serving engine by what it runs or calls itself: a known
    engine, a program named for serving, or one told where to listen for requests."""
    cmdline = proc.cmdline or ""
    if _SERVER.search(proc.name or "") or _SERVER.search(cmdline):
        return True
    program = patterns.program(cmdline.split(maxsplit=patterns.ARGS_MAX))[1].lower()
    if _NOT_SERVING.search(program):
        return False
    if any(_SERVING_PROGRAM.search(name) for name in ((proc.name or "").lower(), program)
           if name):
        return True
    return bool(_LISTENS.search(cmdline)) and not _LOCAL_RANK.search(cmdline)


def _job_key(proc: ProcRef) -> str:
    """Ranks of one job: the same parent (torchrun, mpirun, a launcher) and the same command
    line but for a rank argument.  Without a known parent, the same command line; without
    either, the process.  Ranks whose launcher exited or was never their parent (init
    adopted them: ppid 1) are one job when their command lines carry a rank argument and
    agree but for it: a rank argument says a distributed launch, where processes that init
    adopted would otherwise share nothing (two copies of one script are two jobs)."""
    cmdline = proc.cmdline or ""
    command = _RANK_ARG.sub("", cmdline)
    crc = f"{zlib.crc32(command.encode(errors='replace')):08x}"
    if proc.ppid is not None and proc.ppid > 1:
        return f"job:{proc.ppid}:{crc}"
    if proc.ppid is None and command:
        return f"job:?:{crc}"
    if proc.ppid == 1 and _LOCAL_RANK.search(cmdline):
        return f"job:1:{crc}"
    return f"job:{proc.pid}"


def _replica_pids(p: Point, gpus: tuple[int, ...]) -> frozenset[int]:
    """A replica's processes where its page names none: the engine's on the replica's GPUs
    (a data-parallel rank each), else the process each of them works for; never every
    process there, or a notebook started on a replica's GPU would be the replica's own."""
    procs = [r for g in gpus for r in p.gpu_procs.get(g, ())]
    mine = frozenset(r.pid for r in procs if r.pid in p.engine_pids)
    return mine or frozenset(owner.pid for g in gpus
                             if (owner := primary(p.gpu_procs.get(g, ()), p.pinned_pids)))


def _with_ranks(p: Point, gpus: list[int], engine_gpus: tuple[int, ...],
                pids: frozenset[int]) -> tuple[tuple[int, ...], frozenset[int]]:
    """A trainer's GPUs and processes with the other ranks of its job: a counter exported by
    rank 0 alone (its page names rank 0 and its loader workers) counts the whole job's steps,
    and the ranks on the other GPUs (same launcher, same command line but for the rank) are
    that job, not a job of their own without a counter.  (A server's data-parallel cores
    its page does not name stay apart: independent replicas are no collective, and one
    throttled among them would read as the others waiting for it.)"""
    keys = {_job_key(r) for g in engine_gpus for r in p.gpu_procs.get(g, ())
            if r.pid in p.engine_pids}
    ranks = {g: [r.pid for r in p.gpu_procs.get(g, ()) if _job_key(r) in keys]
             for g in gpus if g not in engine_gpus}
    ranks = {g: found for g, found in ranks.items() if found}
    if not ranks:
        return engine_gpus, pids
    return (tuple(sorted((*engine_gpus, *ranks))),
            pids | frozenset(pid for found in ranks.values() for pid in found))


def subjects_of(p: Point, held_by_engine: tuple[int, ...] = (),
                quiet: tuple[int, ...] = ()) -> tuple[Subject, ...]:
    """The subjects of point ``p``; ``held_by_engine`` are GPUs an engine that is away
    (restarting) held: they stay out of the jobs until it is back or given up on.  ``quiet``
    are GPUs a job held a moment ago: listing no process now, they are no subject of their
    own (the job's list was missed, not the GPU taken over by something unseen)."""
    gpus = all_gpus(p)
    out: list[Subject] = []
    taken: set[int] = set()
    if p.engine_kind is not None and p.replicas:
        # data-parallel engines (or several endpoints) on GPUs of their own: each is judged
        # as the engine it is, against its own baseline (point.split_replicas)
        for label, r in p.replicas:
            replica_gpus = tuple(g for g in r.engine_gpus if g in gpus)
            kind = "trainer" if r.engine_kind == "trainer" or r.work_unit else "engine"
            out.append(Subject(engine_key(label), kind, replica_gpus,
                               frozenset(r.engine_pids) or _replica_pids(p, replica_gpus),
                               f"{r.engine_kind} {label}"))
            taken |= set(replica_gpus)
        taken |= set(p.engine_gpus)
    elif p.engine_kind is not None:
        engine_gpus = tuple(g for g in p.engine_gpus if g in gpus) or tuple(gpus)
        kind = "trainer" if p.engine_kind == "trainer" or p.work_unit else "engine"
        pids = frozenset(p.engine_pids) or frozenset(
            r.pid for g in engine_gpus for r in p.gpu_procs.get(g, ()))
        if kind == "trainer" and p.engine_pids:
            engine_gpus, pids = _with_ranks(p, gpus, engine_gpus, pids)
        out.append(Subject(ENGINE, kind, engine_gpus, pids, p.engine_kind))
        taken |= set(engine_gpus)
    else:
        taken |= set(held_by_engine)
    jobs: dict[str, list[int]] = {}
    owners: dict[str, ProcRef] = {}
    unseen: list[int] = []  # GPUs whose processes are not visible here
    for g in gpus:
        if g in taken:
            continue
        owner = primary(p.gpu_procs.get(g, ()), p.pinned_pids)
        if owner is None:
            if g not in quiet:
                unseen.append(g)
            continue
        key = _job_key(owner)
        jobs.setdefault(key, []).append(g)
        owners.setdefault(key, owner)
    if unseen:  # likely one job in another PID namespace (a container): judged together
        key = "gpus" if len(unseen) > 1 else f"gpu:{unseen[0]}"
        out.append(Subject(key, "gpu", tuple(unseen), frozenset(),
                           f"GPU {unseen[0]}" if len(unseen) == 1 else "GPUs"))
    for key, job_gpus in jobs.items():
        owner = owners[key]
        pids = frozenset(r.pid for g in job_gpus for r in p.gpu_procs.get(g, ())
                         if _job_key(r) == key or r.pid == owner.pid)
        out.append(Subject(key, "job", tuple(job_gpus), pids, f"{owner.name or 'pid'} "
                                                             f"{owner.pid}", serves(owner)))
    return tuple(out)
