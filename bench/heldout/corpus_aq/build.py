"""Builders: a serving engine, a training job, a kernel-stream service, as a Job."""
from __future__ import annotations

import math

from .hw import BOARDS, GiB
from .serve import Engine, Klass
from .sim import Job, _pids
from .work import Stream, Trainer

MODELS = {  # params (B), layers, KV bytes/token (bf16, all ranks), hidden
    "llama8b": ("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 131072, 4096),
    "llama3b": ("meta-llama/Llama-3.2-3B-Instruct", 3.21, 28, 114688, 3072),
    "qwen7b": ("Qwen/Qwen2.5-7B-Instruct", 7.6, 28, 57344, 3584),
    "qwenvl7b": ("Qwen/Qwen2.5-VL-7B-Instruct", 8.3, 28, 57344, 3584),
    "qwen14b": ("Qwen/Qwen2.5-14B-Instruct", 14.7, 48, 196608, 5120),
    "llama70b": ("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 327680, 8192),
    "mistral7b": ("mistralai/Mistral-7B-Instruct-v0.3", 7.25, 32, 131072, 4096),
    "gemma2b": ("google/gemma-2-2b-it", 2.6, 26, 106496, 2304),
}


def serve(kind, model="llama8b", classes=(), tp=1, mem_frac=0.9, chunked=True, graphs=True,
          spec_k=0, spec_alpha=None, max_seqs=256, max_batched=8192, structured=False,
          prefix=True, inject=(), n_ctx=None, sched_ms=None, block_size=None, port=None):
    def b(rng, spec):
        board = BOARDS[spec.board]
        name, pb, layers, kvpt, hidden = MODELS[model]
        wpg = pb * 1e9 * 2 / tp
        bs = block_size or {"vllm": 16, "sglang": 1, "tgi": 16, "llamacpp": 256}[kind]
        if n_ctx:
            tokens = n_ctx
        else:
            pool = board.mem_bytes * mem_frac - wpg - 2.6 * GiB
            tokens = int(pool / (kvpt / tp))
        blocks = max(64, tokens // bs)
        sm = sched_ms if sched_ms is not None else {"vllm": 0.9, "sglang": 0.8, "tgi": 1.6,
                                                    "llamacpp": 0.5}[kind]
        eng = Engine(rng, kind, name, range(tp), board, params_b=pb, layers=layers,
                     kv_per_tok=kvpt, hidden=hidden, blocks=blocks, block_size=bs,
                     max_seqs=max_seqs, max_batched=max_batched, chunked=chunked, graphs=graphs,
                     prefix_caching=prefix, classes=[k(spec) if callable(k) and not isinstance(k, Klass) else k for k in classes],
                     spec_k=spec_k, spec_alpha=spec_alpha, sched_ms=sm, structured=structured,
                     mem_frac=mem_frac, tp=tp)
        for args in inject:
            eng.inject(*args)
        pt = port or rng.choice((8000, 8001, 8080, 30000, 3000))
        url = f"http://127.0.0.1:{pt}/metrics"
        mem = int(wpg + tokens * kvpt / tp + 2.2 * GiB) if n_ctx else eng.mem_bytes()
        pids = _pids(rng, 4 + tp)
        if kind == "vllm":
            root = (pids[0], None, "vllm", f"/opt/venv/bin/python3 -m vllm.entrypoints.openai.api_server --model {name} --port {pt}"
                    + (f" --tensor-parallel-size {tp}" if tp > 1 else "")
                    + ("" if chunked else " --no-enable-chunked-prefill")
                    + (" --enforce-eager" if not graphs else ""), 0)
            gp = [(pids[1 + i], i, "VLLM::EngineCore" if tp == 1 else f"VllmWorker-{i}",
                   "VLLM::EngineCore" if tp == 1 else f"VllmWorker-{i}", mem) for i in range(tp)]
            procs = [root] + gp
            th = [(pids[1] + 40, pids[1], "VLLM::EngineCor", 1.0), (pids[0], pids[0], "python3", 0.25),
                  (pids[0] + 7, pids[0], "AsyncLLM-output", 0.1)]
        elif kind == "sglang":
            root = (pids[0], None, "python3", f"python3 -m sglang.launch_server --model-path {name} --port {pt} --enable-metrics"
                    + (f" --tp {tp}" if tp > 1 else ""), 0)
            gp = [(pids[1 + i], i, "sglang::schedul", f"sglang::scheduler_TP{i}", mem) for i in range(tp)]
            procs = [root] + gp + [(pids[2 + tp], None, "sglang::detoken", "sglang::detokenizer", 0)]
            th = [(pids[1], pids[1], "sglang::schedul", 1.0), (pids[0], pids[0], "python3", 0.25),
                  (pids[2 + tp], pids[2 + tp], "sglang::detoken", 0.1)]
        elif kind == "tgi":
            root = (pids[0], None, "text-generation-launcher", f"text-generation-launcher --model-id {name} --port {pt}", 0)
            gp = [(pids[2 + i], i, "text-generation-server", f"/opt/conda/bin/python3 /opt/conda/bin/text-generation-server serve {name} --uds-path /tmp/text-generation-server-{i}", mem) for i in range(tp)]
            procs = [root, (pids[1], None, "text-generation-router", "text-generation-router --port %d" % pt, 0)] + gp
            th = [(pids[2] + 3, pids[2], "python3", 1.0), (pids[1], pids[1], "tokio-runtime-w", 0.2)]
        else:
            root = (pids[0], 0, "llama-server", f"./llama-server -m /models/{name.split('/')[-1].lower()}-Q6_K.gguf -c {tokens} -ngl 99 --metrics --port {pt}", mem)
            procs = [root]
            th = [(pids[0], pids[0], "llama-server", 1.0), (pids[0] + 1, pids[0], "llama-server", 0.2)]
        return Job("serve", eng, list(range(tp)), procs, th, f"{kind} {name}", url=url,
                   engine_kind=kind, tp=tp, page=eng.render)
    return b


def train(counter="samples", script="train.py", **kw):
    def b(rng, spec):
        args = {k: (v(spec) if callable(v) and k in ("io_s_f",) else v) for k, v in kw.items()}
        mem = args.pop("mem", 0.8)
        tr = Trainer(rng, spec.ngpu, **args)
        board = BOARDS[spec.board]
        pids = _pids(rng, 2 + spec.ngpu * (1 + tr.workers))
        root = (pids[0], None, "torchrun", f"/opt/venv/bin/torchrun --nproc-per-node {spec.ngpu} {script}", 0)
        ranks = [(pids[1 + i], i, "python3", f"/opt/venv/bin/python3 -u {script} --local-rank {i}",
                  int(board.mem_bytes * mem)) for i in range(spec.ngpu)]
        workers = [(pids[1 + spec.ngpu + j], None, "pt_data_worker", f"/opt/venv/bin/python3 -u {script}", 0)
                   for j in range(spec.ngpu * tr.workers)]
        th = [(p[0], p[0], "python3", 1.0) for p in ranks] + [(w[0], w[0], "pt_data_worker", 0.3) for w in workers]
        job = Job("train", tr, list(range(spec.ngpu)), [root] + ranks + workers, th,
                  f"torchrun {script}", engine_kind="trainer" if counter else "none")
        if counter:
            pt = rng.choice((9100, 9400, 8008))
            job.url = f"http://127.0.0.1:{pt}/metrics"
            def page():
                if counter == "tokens":
                    return ("# TYPE trainer_tokens_total counter\ntrainer_tokens_total %d\n"
                            "# TYPE trainer_steps_total counter\ntrainer_steps_total %d\n"
                            % (tr.samples * 2048, tr.steps))
                return ("# TYPE trainer_samples_total counter\ntrainer_samples_total %d\n"
                        "# TYPE trainer_steps_total counter\ntrainer_steps_total %d\n"
                        % (tr.samples, tr.steps))
            job.page = page
        return job
    return b


def stream(item, rate=None, graphs=False, launch_us=7.0, mem=0.5, script="serve.py", name="python3"):
    """item(t, gpu) -> (host_s, wc, wm, kernels, sig); one worker per GPU."""
    def b(rng, spec):
        board = BOARDS[spec.board]
        sims = [Stream(rng, item=(lambda t, g=g: item(t, g)), rate=(None if rate is None else (lambda t, g=g: rate(t, g))),
                       graphs=graphs, launch_us=launch_us) for g in range(spec.ngpu)]
        pids = _pids(rng, 1 + spec.ngpu)
        root = (pids[0], None if spec.ngpu > 1 else 0, name, f"/opt/venv/bin/python3 {script}", int(board.mem_bytes * mem))
        if spec.ngpu == 1:
            procs = [root]
            th = [(pids[0] + 9, pids[0], "python3", 1.0), (pids[0], pids[0], "python3", 0.3)]
        else:
            procs = [root] + [(pids[1 + i], i, name, f"/opt/venv/bin/python3 {script} --worker {i}",
                               int(board.mem_bytes * mem)) for i in range(spec.ngpu)]
            th = [(p[0], p[0], "python3", 1.0) for p in procs[1:]]
        return Job("stream", None, list(range(spec.ngpu)), procs, th, f"python3 {script}", sims=sims)
    return b
