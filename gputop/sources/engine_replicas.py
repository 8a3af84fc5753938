"""What an engine's processes say: which replica of a page each is, llama-server's KV pool.

A page with several ``engine`` (vLLM), ``dp_rank`` (SGLang), ``worker_addr`` (SGLang's
router) or ``model_name`` values is several engines, each on its own GPUs.  What ties a
replica to its processes, and so (through NVML's process lists) to its GPUs:

- vLLM titles each data-parallel engine core ``VLLM::EngineCore_DP<rank>`` (setproctitle,
  ``vllm/v1/engine/core.py``); its workers are its children.
- SGLang titles each scheduler ``sglang::scheduler_DP<rank>_TP<rank>...``, one process per
  GPU (``srt/managers/scheduler.py``).
- A router's worker is whatever listens on its ``worker_addr`` port on this machine.
- A model is the process (and children) whose command line names it as an argument.

A replica nothing ties has no pids: its GPUs are unknown, never guessed.  The same command
lines give llama-server's KV pool (``llamacpp_pool``): its page has no KV gauge.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Callable

import psutil

TITLES = {
    ("vllm", "engine"): re.compile(r"::EngineCore_DP(\d+)$"),
    ("sglang", "dp_rank"): re.compile(r"^sglang::scheduler\S*?_DP(\d+)(?:_|$)"),
}


def _argv(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except (psutil.Error, OSError):
        return []


def _by_title(kind: str, label: str, value: str, tree: list[psutil.Process],
              argvs: dict[int, list[str]]) -> list[psutil.Process]:
    pattern = TITLES.get((kind, label))
    if pattern is None:
        return []
    out = []
    for proc in tree:
        argv = argvs.get(proc.pid) or [""]
        match = pattern.search(argv[0].strip())
        if match and match.group(1) == value:
            out.append(proc)
    return out


def _names(model: str, argv: list[str]) -> bool:
    return any(a == model or os.path.basename(a.rstrip("/")) == model for a in argv[1:])


def _by_model(model: str, others: set[str], tree: list[psutil.Process],
              argvs: dict[int, list[str]]) -> list[psutil.Process]:
    """The topmost processes whose arguments name this model (a value, or a path's base
    name) and none of the page's other models: a server that lists every model it serves
    is all of them, not one (deeper matches are the roots' children anyway)."""
    found = [p for p in tree if _names(model, argvs.get(p.pid, []))
             and not any(_names(other, argvs.get(p.pid, [])) for other in others)]
    pids = {p.pid for p in found}
    return [p for p in found if _parent(p) not in pids]


def _parent(proc: psutil.Process) -> int | None:
    try:
        return proc.ppid()
    except psutil.Error:
        return None


def _by_worker(addr: str, local_port: Callable[[str], int | None],
               listening_pids: Callable[[int], list[int]]) -> list[psutil.Process]:
    url = addr if "://" in addr else f"http://{addr}"
    try:
        port = local_port(url)
    except ValueError:
        return []
    out = []
    for pid in (listening_pids(port) if port is not None else []):
        try:
            out.append(psutil.Process(pid))
        except psutil.Error:
            continue
    return out[:1]


def replica_roots(kind: str, replica: dict[str, str], differing: set[str],
                  tree: list[psutil.Process], argvs: dict[int, list[str]], local_port,
                  listening_pids, models: set[str] = frozenset()) -> list[psutil.Process]:
    """The processes that are this replica (their trees are its pids); [] when nothing
    on this machine ties it.  The most specific of the labels that tell the page's
    replicas apart (``differing``) decides: a worker's address, a data-parallel rank,
    then the model."""
    if "worker_addr" in differing and replica.get("worker_addr"):
        return _by_worker(urllib.parse.unquote(replica["worker_addr"]), local_port,
                          listening_pids)
    for label in ("engine", "dp_rank"):
        if label in differing and replica.get(label):
            return _by_title(kind, label, replica[label], tree, argvs)
    if "model_name" in differing and replica.get("model_name"):
        return _by_model(replica["model_name"], set(models) - {replica["model_name"]}, tree,
                         argvs)
    return []


def command_lines(tree: list[psutil.Process]) -> dict[int, list[str]]:
    return {p.pid: _argv(p) for p in tree}


# llama-server --cache-type-k/-v values gputop can size (KV bytes per token by element size)
LLAMACPP_CACHE_TYPES = {"f16": "fp16", "bf16": "bf16"}


def _flag(argv: list[str], names: tuple[str, ...]) -> str | None:
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1:]
    return None


def llamacpp_pool(argvs: dict[int, list[str]]) -> tuple[int | None, str, str]:
    """(KV pool in tokens, KV dtype, why not) from llama-server's command line: it allocates
    one KV cell per token of ``--ctx-size`` at start (``llama_kv_cache: size = ... cells``),
    unified or split between slots alike, so the pool is exactly the context when it is
    given (0 or absent: taken from the model, which the command line does not say)."""
    for argv in argvs.values():
        if not argv or os.path.basename(argv[0]) != "llama-server":
            continue
        ctx = _flag(argv, ("-c", "--ctx-size"))
        if ctx is None or not ctx.isdigit() or int(ctx) <= 0:
            return None, "", "llama-server's context size is the model's (no --ctx-size)"
        types = {_flag(argv, ("-ctk", "--cache-type-k")) or "f16",
                 _flag(argv, ("-ctv", "--cache-type-v")) or "f16"}
        if len(types) != 1 or next(iter(types)) not in LLAMACPP_CACHE_TYPES:
            return None, "", f"llama-server's KV cache type {'/'.join(sorted(types))} is not sized"
        return int(ctx), LLAMACPP_CACHE_TYPES[types.pop()], ""
    return None, "", ""
