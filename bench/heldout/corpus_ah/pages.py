"""Each engine's /metrics page as text (real metric names and bucket layouts), parsed with
gputop's own parser into the frame's EngineSample."""
from __future__ import annotations

import sys

from gputop.schema import EngineSample

try:
    import prometheus_client.parser  # noqa: F401
except ImportError:  # a minimal stand-in so the corpus builds where the client is missing
    import types

    class _S:
        __slots__ = ("name", "labels", "value")

        def __init__(self, n, l, v):
            self.name, self.labels, self.value = n, l, v

    class _F:
        def __init__(self):
            self.samples = []

    def _parse(text):
        fam = _F()
        for line in text.splitlines():
            if not line or line[0] == "#":
                continue
            if "{" in line:
                name, rest = line.split("{", 1)
                body, val = rest.rsplit("}", 1)
                labels = {}
                for part in _split(body):
                    k, v = part.split("=", 1)
                    labels[k.strip()] = v.strip().strip('"')
            else:
                name, val = line.split(" ", 1)
                labels = {}
            fam.samples.append(_S(name.strip(), labels, float(val.split()[0])))
        yield fam

    def _split(body):
        out, cur, q = [], "", False
        for ch in body:
            if ch == '"':
                q = not q
            if ch == "," and not q:
                out.append(cur)
                cur = ""
            else:
                cur += ch
        if cur.strip():
            out.append(cur)
        return out

    mod = types.ModuleType("prometheus_client")
    sub = types.ModuleType("prometheus_client.parser")
    sub.text_string_to_metric_families = _parse
    mod.parser = sub
    sys.modules["prometheus_client"] = mod
    sys.modules["prometheus_client.parser"] = sub

from gputop.sources.engine_metrics import config_int, recognise  # noqa: E402


def _lab(d):
    return "{" + ",".join(f'{k}="{v}"' for k, v in d.items()) + "}" if d else ""


def _num(v):
    return repr(float(v))


def _hist(lines, name, h, labels):
    lines.append(f"# TYPE {name} histogram")
    for b, c in zip(h.bounds, h.cumulative()):
        lab = dict(labels)
        lab["le"] = repr(float(b))
        lines.append(f"{name}_bucket{_lab(lab)} {_num(c)}")
    lab = dict(labels)
    lab["le"] = "+Inf"
    lines.append(f"{name}_bucket{_lab(lab)} {_num(h.count)}")
    lines.append(f"{name}_count{_lab(labels)} {_num(h.count)}")
    lines.append(f"{name}_sum{_lab(labels)} {_num(h.sum)}")


def render(eng) -> str:
    cfg, c = eng.cfg, eng.c
    k = cfg.kind
    model = cfg.served_name or cfg.model.name
    L = []
    running = len(eng.running)
    waiting = len(eng.waiting)
    usage = eng.used_blocks / eng.num_blocks
    if k == "vllm":
        lab = {"engine": "0", "model_name": model}
        v0 = cfg.version == "v0"
        g = lambda n, v: L.extend([f"# TYPE vllm:{n} gauge", f"vllm:{n}{_lab(lab)} {_num(v)}"])
        ctr = lambda n, v: L.extend([f"# TYPE vllm:{n} counter", f"vllm:{n}_total{_lab(lab)} {_num(v)}"])
        g("num_requests_running", running)
        g("num_requests_waiting", waiting)
        if v0:
            g("gpu_cache_usage_perc", usage)
            g("num_requests_swapped", 0)
        else:
            L.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
            blocked = waiting if usage > 0.9 else 0
            L.append(f"vllm:num_requests_waiting_by_reason{_lab({**lab, 'reason': 'capacity'})} {_num(blocked)}")
            L.append(f"vllm:num_requests_waiting_by_reason{_lab({**lab, 'reason': 'deferred'})} {_num(waiting - blocked)}")
            g("kv_cache_usage_perc", usage)
            ctr("prefix_cache_queries", c["queries"])
            ctr("prefix_cache_hits", c["hits"])
            ctr("prompt_tokens_cached", c["cached"])
        ctr("num_preemptions", c["preempt"])
        ctr("prompt_tokens", c["prompt"])
        ctr("generation_tokens", c["gen"])
        L.append("# TYPE vllm:request_success counter")
        L.append(f"vllm:request_success_total{_lab({**lab, 'finished_reason': 'stop'})} {_num(round(c['finished'] * 0.83))}")
        L.append(f"vllm:request_success_total{_lab({**lab, 'finished_reason': 'length'})} {_num(c['finished'] - round(c['finished'] * 0.83))}")
        if cfg.spec_k:
            ctr("spec_decode_num_drafts", round(c["drafts"]))
            ctr("spec_decode_num_draft_tokens", round(c["draft_tok"]))
            ctr("spec_decode_num_accepted_tokens", round(c["accepted"]))
        if not v0:
            ctr("estimated_flops_per_gpu", c["flops"] / cfg.tp)
            ctr("estimated_read_bytes_per_gpu", c["rbytes"])
            ctr("estimated_write_bytes_per_gpu", c["wbytes"])
        h = eng.h
        _hist(L, "vllm:time_to_first_token_seconds", h["ttft"], lab)
        _hist(L, "vllm:time_per_output_token_seconds" if v0 else "vllm:inter_token_latency_seconds",
              h["itl"], lab)
        _hist(L, "vllm:e2e_request_latency_seconds", h["e2e"], lab)
        _hist(L, "vllm:request_queue_time_seconds", h["queue"], lab)
        if not v0:
            _hist(L, "vllm:request_time_per_output_token_seconds", h["tpot"], lab)
            _hist(L, "vllm:request_params_n", h["n"], lab)
            _hist(L, "vllm:request_params_max_tokens", h["maxtok"], lab)
            _hist(L, "vllm:request_max_num_generation_tokens", h["maxgen"], lab)
            _hist(L, "vllm:request_prefill_time_seconds", h["prefill"], lab)
            _hist(L, "vllm:request_decode_time_seconds", h["decode"], lab)
        info = {"block_size": str(cfg.block_size), "cache_dtype": cfg.cache_dtype, "engine": "0",
                "gpu_memory_utilization": str(cfg.gpu_mem_util),
                "enable_prefix_caching": "True", "num_cpu_blocks": "None",
                "num_gpu_blocks": str(eng.num_blocks)}
        if not v0:
            info["kv_cache_size_tokens"] = str(eng.pool_tokens)
            info["kv_cache_memory_bytes"] = str(int(eng.pool_tokens * eng.kv_bpt))
        L.append("# TYPE vllm:cache_config_info gauge")
        L.append(f"vllm:cache_config_info{_lab(info)} 1.0")
    elif k == "sglang":
        lab = {"engine_type": "unified", "model_name": model, "moe_ep_rank": "0", "pp_rank": "0", "tp_rank": "0"}
        tl = {"model_name": model}
        g = lambda n, v: L.extend([f"# TYPE sglang:{n} gauge", f"sglang:{n}{_lab(lab)} {_num(v)}"])
        used = eng.used_blocks * cfg.block_size
        g("num_running_reqs", running)
        g("num_queue_reqs", waiting)
        g("num_grammar_queue_reqs", 0)
        g("token_usage", round(usage, 4))
        g("num_used_tokens", used)
        g("kv_used_tokens", used)
        free = eng.pool_tokens - used
        g("kv_available_tokens", free)
        g("kv_evictable_tokens", int(free * 0.35))
        g("max_total_num_tokens", eng.pool_tokens)
        g("gen_throughput", eng.gen_rate if hasattr(eng, "gen_rate") else 0.0)
        g("cache_hit_rate", round(c["hits"] / c["queries"], 4) if c["queries"] else 0.0)
        if cfg.spec_k:
            alpha = eng.knobs(eng.t).get("alpha", 0.72)
            length = 1 + sum(alpha ** i for i in range(1, cfg.spec_k + 1))
            g("spec_accept_length", round(length, 3))
            g("spec_accept_rate", round((length - 1) / cfg.spec_k, 4))
        else:
            g("spec_accept_length", 0.0)
            g("spec_accept_rate", 0.0)
        L.append("# TYPE sglang:num_retracted_requests counter")
        L.append(f"sglang:num_retracted_requests_total{_lab(lab)} {_num(c['preempt'])}")
        L.append("# TYPE sglang:num_retracted_input_tokens counter")
        L.append(f"sglang:num_retracted_input_tokens_total{_lab(lab)} {_num(c['retr_tok'])}")
        L.append("# TYPE sglang:realtime_tokens counter")
        computed = c["prompt"] - c["cached"]
        for mode, v in (("prefill_compute", computed), ("prefill_cache", c["cached"]), ("decode", c["gen"])):
            L.append(f"sglang:realtime_tokens_total{_lab({**lab, 'mode': mode})} {_num(round(v))}")
        L.append("# TYPE sglang:forward_execution_seconds counter")
        L.append(f"sglang:forward_execution_seconds_total{_lab({**lab, 'category': 'decode'})} {_num(c['fwd_dec'])}")
        L.append(f"sglang:forward_execution_seconds_total{_lab({**lab, 'category': 'extend'})} {_num(c['fwd_pre'])}")
        for n, v in (("prompt_tokens", c["prompt"]), ("generation_tokens", round(c["gen"])),
                     ("num_requests", c["finished"])):
            L.append(f"# TYPE sglang:{n} counter")
            L.append(f"sglang:{n}_total{_lab(tl)} {_num(v)}")
        L.append("# TYPE sglang:cached_tokens counter")
        L.append(f"sglang:cached_tokens_total{_lab({**tl, 'cache_source': 'device'})} {_num(c['cached'])}")
        h = eng.h
        _hist(L, "sglang:time_to_first_token_seconds", h["ttft"], tl)
        _hist(L, "sglang:inter_token_latency_seconds", h["itl"], tl)
        _hist(L, "sglang:e2e_request_latency_seconds", h["e2e"], tl)
        _hist(L, "sglang:queue_time_seconds", h["queue"], lab)
    elif k == "llamacpp":
        ctr = lambda n, v: L.extend([f"# TYPE llamacpp:{n} counter", f"llamacpp:{n} {_num(v)}"])
        g = lambda n, v: L.extend([f"# TYPE llamacpp:{n} gauge", f"llamacpp:{n} {_num(v)}"])
        ctr("prompt_tokens_total", round(c["prompt"] - c["cached"]))
        ctr("prompt_tokens_cached_total", round(c["cached"]))
        ctr("prompt_seconds_total", round(c["pre_s"], 4))
        ctr("tokens_predicted_total", round(c["gen"]))
        ctr("tokens_predicted_seconds_total", round(c["dec_s"], 4))
        ctr("n_decode_total", round(c["steps"]))
        if cfg.spec_k:
            ctr("spec_decode_num_draft_tokens_total", round(c["draft_tok"]))
            ctr("spec_decode_num_accepted_tokens_total", round(c["accepted"]))
            ctr("spec_decode_num_drafts_total", round(c["drafts"]))
        g("prompt_tokens_seconds", round(eng.rate_pp if hasattr(eng, "rate_pp") else 0.0, 3))
        g("predicted_tokens_seconds", round(eng.rate_tg if hasattr(eng, "rate_tg") else 0.0, 3))
        g("requests_processing", running)
        g("requests_deferred", waiting)
        g("n_busy_slots_per_decode", round(max(1.0, running), 4))
    elif k == "tgi":
        L += ["# TYPE tgi_batch_current_size gauge", f"tgi_batch_current_size {running}",
              "# TYPE tgi_batch_current_max_tokens gauge",
              f"tgi_batch_current_max_tokens {int(sum(r.prompt + r.out for r in eng.running))}",
              "# TYPE tgi_queue_size gauge", f"tgi_queue_size {waiting}",
              "# TYPE tgi_request_count counter", f"tgi_request_count {int(c['finished'] + running + waiting)}",
              "# TYPE tgi_request_success counter", f"tgi_request_success {int(c['finished'])}"]
        h = eng.h
        _hist(L, "tgi_request_generated_tokens", h["gen"], {})
        _hist(L, "tgi_request_input_length", h["inp"], {})
        _hist(L, "tgi_request_mean_time_per_token_duration", h["tpot"], {})
        _hist(L, "tgi_request_duration", h["e2e"], {})
        _hist(L, "tgi_request_queue_duration", h["queue"], {})
        L.append("# TYPE tgi_batch_forward_duration histogram")
        for meth, key in (("prefill", "fwd_prefill"), ("decode", "fwd_decode")):
            hh = h[key]
            for b, cc in zip(hh.bounds, hh.cumulative()):
                L.append(f'tgi_batch_forward_duration_bucket{{method="{meth}",le="{float(b)!r}"}} {_num(cc)}')
            L.append(f'tgi_batch_forward_duration_bucket{{method="{meth}",le="+Inf"}} {_num(hh.count)}')
            L.append(f'tgi_batch_forward_duration_sum{{method="{meth}"}} {_num(hh.sum)}')
            L.append(f'tgi_batch_forward_duration_count{{method="{meth}"}} {_num(hh.count)}')
    return "\n".join(L) + "\n"


def render_trainer(tokens, samples, steps) -> str:
    return ("# HELP trainer_tokens_total Tokens processed\n# TYPE trainer_tokens_total counter\n"
            f"trainer_tokens_total {float(tokens)!r}\n"
            "# TYPE trainer_samples_total counter\n"
            f"trainer_samples_total {float(samples)!r}\n"
            "# TYPE trainer_steps_total counter\n"
            f"trainer_steps_total {float(steps)!r}\n")


FIELDS = ("generation_tokens_total", "prompt_tokens_total", "prompt_tokens_cached_total",
          "requests_finished_total", "requests_running", "requests_waiting", "kv_usage_ratio",
          "preemptions_total", "retracted_requests_total", "retracted_input_tokens_total",
          "spec_drafts_total", "spec_draft_tokens_total", "spec_accepted_tokens_total",
          "spec_accept_ratio", "spec_accept_length", "prefill_seconds_total",
          "decode_seconds_total", "forward_seconds_total", "decode_steps_total",
          "corrupted_requests_total", "flops_total", "read_bytes_total", "write_bytes_total",
          "kv_used_tokens", "kv_free_tokens", "kv_evictable_tokens")


def to_sample(text: str, url: str, t_mono: float, t_wall: float, tp=None, pids=(), proc=None,
              kv_bpt=None) -> EngineSample:
    """Parse a page as gputop does and fill the EngineSample from it (and the process tree)."""
    p = recognise(text, url)
    vals = {f: p.values.get(f) for f in FIELDS}
    cache = p.cache
    pool_tokens = config_int(cache.get("kv_pool_tokens"))
    kv_pool_bytes = config_int(cache.get("kv_cache_memory_bytes"))
    extra = {}
    if proc is not None:
        extra = dict(cpu_s=round(proc.cpu_s, 2), ctx_involuntary=proc.invol,
                     busiest_thread_cpu_s=round(proc.main_cpu_s, 2),
                     busiest_thread=f"{proc.main_tid} {proc.name}",
                     cpu_quota_cores=proc.quota,
                     cpu_periods=proc.periods if proc.quota else None,
                     cpu_throttled_periods=proc.throttled if proc.quota else None)
    return EngineSample(
        kind=p.kind, url=url, model=p.model, num_gpu_blocks=config_int(cache.get("num_gpu_blocks")),
        block_size=config_int(cache.get("block_size")), kv_pool_tokens=pool_tokens,
        kv_pool_bytes=kv_pool_bytes, cache_dtype=cache.get("cache_dtype", ""),
        tensor_parallel=tp, data_parallel=1 if tp else None, pids=tuple(pids),
        time_mono_s=round(t_mono, 6), time_wall_s=round(t_wall, 6), histograms=p.histograms,
        work_unit=p.work_unit, waiting_by_reason=dict(p.waiting_by_reason), **vals, **extra)
