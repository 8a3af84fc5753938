"""Engine /metrics pages rendered as text with each engine's real names and bucket layouts,
parsed back with gputop's own parser into the frame's EngineSample."""
from __future__ import annotations

from gputop.schema import EngineSample
from gputop.sources.engine_metrics import config_int, recognise

VLLM_B = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "n": (1.0, 2.0, 5.0, 10.0, 20.0),
    "tok": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0),
    "iter": (1.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0),
}
VLLM_B["tpot"] = VLLM_B["itl"]
VLLM_B["queue"] = VLLM_B["e2e"]
SGL_B = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    "queue": (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0),
}
# TGI's router histograms: guessed layout (the sample page in data/ has +Inf only)
TGI_B = {"tpot": (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
         "e2e": (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0),
         "queue": (0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 50.0, 100.0),
         "gen": (1, 10, 50, 100, 250, 500, 1000, 2000, 4000),
         "inp": (10, 100, 500, 1000, 2000, 4000, 8000, 16000, 32000)}


def _fmt(v):
    return repr(float(v))


def _hist(lines, name, labels, bounds, counts, total_sum, le_fmt=_fmt):
    lines.append(f"# TYPE {name} histogram")
    cum = 0.0
    lab = labels + ("," if labels else "")
    for b, c in zip(bounds, counts):
        cum += c
        lines.append(f'{name}_bucket{{{lab}le="{le_fmt(b)}"}} {_fmt(round(cum))}')
    cum += counts[len(bounds)]
    lines.append(f'{name}_bucket{{{lab}le="+Inf"}} {_fmt(round(cum))}')
    lines.append(f"{name}_count{{{labels}}} {_fmt(round(cum))}" if labels else f"{name}_count {_fmt(round(cum))}")
    lines.append(f"{name}_sum{{{labels}}} {_fmt(total_sum)}" if labels else f"{name}_sum {_fmt(total_sum)}")


def render_vllm(st, model, cfg):
    L = f'engine="0",model_name="{model}"'
    out = []
    g = lambda n, v, t="gauge": out.extend([f"# TYPE vllm:{n} {t}", f"vllm:{n}{{{L}}} {_fmt(v)}"])
    g("num_requests_running", st.running)
    g("num_requests_waiting", st.waiting)
    out.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
    out.append(f'vllm:num_requests_waiting_by_reason{{{L},reason="capacity"}} {_fmt(st.waiting_capacity)}')
    out.append(f'vllm:num_requests_waiting_by_reason{{{L},reason="deferred"}} {_fmt(st.waiting - st.waiting_capacity)}')
    g("kv_cache_usage_perc", st.kv_usage)
    for n, v in (("prefix_cache_queries", st.prompt_tokens), ("prefix_cache_hits", st.cached_tokens),
                 ("num_preemptions", st.preemptions), ("prompt_tokens", st.prompt_tokens),
                 ("prompt_tokens_cached", st.cached_tokens), ("generation_tokens", st.gen_tokens),
                 ("estimated_flops_per_gpu", st.flops), ("estimated_read_bytes_per_gpu", st.read_bytes),
                 ("estimated_write_bytes_per_gpu", st.write_bytes)):
        out.append(f"# TYPE vllm:{n}_total counter")
        out.append(f"vllm:{n}_total{{{L}}} {_fmt(v)}")
    out.append("# TYPE vllm:request_success_total counter")
    for reason, v in (("stop", st.finished * 0.93), ("length", st.finished * 0.07), ("abort", 0)):
        out.append(f'vllm:request_success_total{{{L},finished_reason="{reason}"}} {_fmt(round(v))}')
    if st.spec:
        for n, v in (("spec_decode_num_drafts", st.spec_drafts), ("spec_decode_num_draft_tokens", st.spec_draft_tokens),
                     ("spec_decode_num_accepted_tokens", st.spec_accepted)):
            out.append(f"# TYPE vllm:{n}_total counter")
            out.append(f"vllm:{n}_total{{{L}}} {_fmt(v)}")
    H = st.h
    _hist(out, "vllm:iteration_tokens_total", L, VLLM_B["iter"], H["iter"], st.hsum["iter"])
    _hist(out, "vllm:request_max_num_generation_tokens", L, VLLM_B["tok"], H["maxgen"], st.hsum["maxgen"])
    _hist(out, "vllm:request_params_n", L, VLLM_B["n"], H["n"], st.hsum["n"])
    _hist(out, "vllm:request_params_max_tokens", L, VLLM_B["tok"], H["maxtok"], st.hsum["maxtok"])
    _hist(out, "vllm:time_to_first_token_seconds", L, VLLM_B["ttft"], H["ttft"], st.hsum["ttft"])
    _hist(out, "vllm:inter_token_latency_seconds", L, VLLM_B["itl"], H["itl"], st.hsum["itl"])
    _hist(out, "vllm:request_time_per_output_token_seconds", L, VLLM_B["tpot"], H["tpot"], st.hsum["tpot"])
    _hist(out, "vllm:e2e_request_latency_seconds", L, VLLM_B["e2e"], H["e2e"], st.hsum["e2e"])
    _hist(out, "vllm:request_queue_time_seconds", L, VLLM_B["queue"], H["queue"], st.hsum["queue"])
    for n, v in (("request_prefill_time_seconds", st.prefill_s), ("request_decode_time_seconds", st.decode_s)):
        out.append(f"# TYPE vllm:{n} histogram")
        out.append(f'vllm:{n}_bucket{{{L},le="+Inf"}} {_fmt(st.finished)}')
        out.append(f"vllm:{n}_count{{{L}}} {_fmt(st.finished)}")
        out.append(f"vllm:{n}_sum{{{L}}} {_fmt(v)}")
    labels = ",".join(f'{k}="{v}"' for k, v in cfg.items())
    out.append("# TYPE vllm:cache_config_info gauge")
    out.append(f'vllm:cache_config_info{{{labels},engine="0"}} 1.0')
    return "\n".join(out) + "\n"


def render_sglang(st, model, cfg):
    L = f'engine_type="unified",model_name="{model}",moe_ep_rank="0",pp_rank="0",tp_rank="0"'
    out = []
    g = lambda n, v, t="gauge": out.extend([f"# TYPE sglang:{n} {t}", f"sglang:{n}{{{L}}} {_fmt(v)}"])
    g("num_running_reqs", st.running)
    g("num_queue_reqs", st.waiting)
    g("num_grammar_queue_reqs", 0)
    g("gen_throughput", st.gen_rate)
    g("cache_hit_rate", st.hit_rate)
    g("token_usage", st.kv_usage)
    g("num_used_tokens", st.kv_used_tokens)
    g("kv_used_tokens", st.kv_used_tokens)
    g("kv_available_tokens", st.kv_free_tokens)
    g("kv_evictable_tokens", st.kv_evictable)
    g("max_total_num_tokens", cfg["pool_tokens"])
    g("spec_accept_length", st.spec_len if st.spec else 0.0)
    g("spec_accept_rate", st.spec_rate if st.spec else 0.0)
    for n, v in (("num_retracted_requests", st.preemptions), ("num_retracted_input_tokens", st.retracted_tokens),
                 ("prompt_tokens", st.prompt_tokens), ("generation_tokens", st.gen_tokens),
                 ("cached_tokens", st.cached_tokens), ("num_requests", st.finished)):
        out.append(f"# TYPE sglang:{n} counter")
        out.append(f"sglang:{n}_total{{{L}}} {_fmt(v)}")
    out.append("# TYPE sglang:realtime_tokens counter")
    for mode, v in (("prefill_compute", st.prompt_tokens - st.cached_tokens), ("prefill_cache", st.cached_tokens),
                    ("decode", st.gen_tokens)):
        out.append(f'sglang:realtime_tokens_total{{{L},mode="{mode}"}} {_fmt(v)}')
    out.append("# TYPE sglang:forward_execution_seconds counter")
    out.append(f'sglang:forward_execution_seconds_total{{{L},category="decode"}} {_fmt(st.decode_s_gpu)}')
    out.append(f'sglang:forward_execution_seconds_total{{{L},category="extend"}} {_fmt(st.prefill_s_gpu)}')
    H = st.h
    _hist(out, "sglang:queue_time_seconds", L, SGL_B["queue"], H["queue"], st.hsum["queue"])
    _hist(out, "sglang:time_to_first_token_seconds", L, SGL_B["ttft"], H["ttft"], st.hsum["ttft"])
    _hist(out, "sglang:inter_token_latency_seconds", L, SGL_B["itl"], H["itl"], st.hsum["itl"])
    _hist(out, "sglang:e2e_request_latency_seconds", L, SGL_B["e2e"], H["e2e"], st.hsum["e2e"])
    return "\n".join(out) + "\n"


def render_llamacpp(st, model, cfg):
    out = []
    for n, t, v in (("prompt_tokens_total", "counter", st.prompt_tokens - st.cached_tokens),
                    ("prompt_tokens_cached_total", "counter", st.cached_tokens),
                    ("prompt_seconds_total", "counter", st.prefill_s_gpu),
                    ("tokens_predicted_total", "counter", st.gen_tokens),
                    ("tokens_predicted_seconds_total", "counter", st.decode_s_gpu),
                    ("n_decode_total", "counter", st.steps),
                    ("n_tokens_max", "counter", st.max_ctx),
                    ("spec_decode_num_draft_tokens_total", "counter", st.spec_draft_tokens),
                    ("spec_decode_num_accepted_tokens_total", "counter", st.spec_accepted),
                    ("spec_decode_num_drafts_total", "counter", st.spec_drafts),
                    ("prompt_tokens_seconds", "gauge", st.prompt_rate),
                    ("predicted_tokens_seconds", "gauge", st.pred_rate),
                    ("requests_processing", "gauge", st.running),
                    ("requests_deferred", "gauge", st.waiting),
                    ("n_busy_slots_per_decode", "gauge", st.busy_slots)):
        out.append(f"# TYPE llamacpp:{n} {t}")
        out.append(f"llamacpp:{n} {_fmt(v) if isinstance(v, float) else v}")
    return "\n".join(out) + "\n"


def render_tgi(st, model, cfg):
    out = []
    for n, t, v in (("tgi_batch_current_size", "gauge", st.running), ("tgi_batch_current_max_tokens", "gauge", st.kv_used_tokens),
                    ("tgi_queue_size", "gauge", st.waiting), ("tgi_request_count", "counter", st.arrived),
                    ("tgi_request_success", "counter", st.finished)):
        out.append(f"# TYPE {n} {t}")
        out.append(f"{n} {int(v)}")
    H = st.h
    ifmt = lambda b: str(b)
    _hist(out, "tgi_request_generated_tokens", "", TGI_B["gen"], H["gen"], st.gen_tokens_finished, ifmt)
    _hist(out, "tgi_request_input_length", "", TGI_B["inp"], H["inp"], st.prompt_tokens_finished, ifmt)
    _hist(out, "tgi_request_mean_time_per_token_duration", "", TGI_B["tpot"], H["tpot"], st.hsum["tpot"])
    _hist(out, "tgi_request_duration", "", TGI_B["e2e"], H["e2e"], st.hsum["e2e"])
    _hist(out, "tgi_request_queue_duration", "", TGI_B["queue"], H["queue"], st.hsum["queue"])
    out.append("# TYPE tgi_batch_forward_duration histogram")
    for m, v, c in (("prefill", st.prefill_s_gpu, st.prefill_steps), ("decode", st.decode_s_gpu, st.steps)):
        out.append(f'tgi_batch_forward_duration_bucket{{method="{m}",le="+Inf"}} {int(c)}')
        out.append(f'tgi_batch_forward_duration_sum{{method="{m}"}} {_fmt(v)}')
        out.append(f'tgi_batch_forward_duration_count{{method="{m}"}} {int(c)}')
    return "\n".join(out) + "\n"


def render_trainer(steps, samples, tokens=None):
    out = ["# TYPE trainer_steps_total counter", f"trainer_steps_total {_fmt(steps)}"]
    if tokens is not None:
        out += ["# TYPE trainer_tokens_total counter", f"trainer_tokens_total {_fmt(tokens)}"]
    else:
        out += ["# TYPE trainer_samples_total counter", f"trainer_samples_total {_fmt(samples)}"]
    return "\n".join(out) + "\n"


RENDER = {"vllm": render_vllm, "sglang": render_sglang, "llamacpp": render_llamacpp, "tgi": render_tgi}


def engine_sample(text, url, *, pids, t_wall, t_mono, tp=1, dp=1, tree=None, gpus=()):
    pm = recognise(text, url)
    v, c = pm.values, pm.cache
    kw = {}
    if tree is not None:
        bt, bc = tree.busiest()
        kw = dict(cpu_s=round(tree.cpu_s, 2), ctx_involuntary=tree.invol, busiest_thread=bt,
                  busiest_thread_cpu_s=bc, cpu_quota_cores=tree.quota,
                  cpu_periods=tree.periods if tree.quota else None,
                  cpu_throttled_periods=tree.thr_periods if tree.quota else None)
    return EngineSample(
        kind=pm.kind, url=url, model=pm.model,
        generation_tokens_total=v.get("generation_tokens_total"),
        prompt_tokens_total=v.get("prompt_tokens_total"),
        prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"),
        requests_finished_total=v.get("requests_finished_total"),
        requests_running=v.get("requests_running"), requests_waiting=v.get("requests_waiting"),
        kv_usage_ratio=v.get("kv_usage_ratio"),
        num_gpu_blocks=config_int(c.get("num_gpu_blocks")), block_size=config_int(c.get("block_size")),
        kv_pool_tokens=config_int(c.get("kv_pool_tokens")),
        kv_pool_bytes=config_int(c.get("kv_cache_memory_bytes")),
        cache_dtype=c.get("cache_dtype", ""), tensor_parallel=tp, data_parallel=dp,
        gpu_indices=tuple(gpus), pids=tuple(pids), time_mono_s=t_mono, time_wall_s=t_wall,
        histograms=pm.histograms, preemptions_total=v.get("preemptions_total"),
        retracted_requests_total=v.get("retracted_requests_total"), work_unit=pm.work_unit,
        waiting_by_reason=pm.waiting_by_reason, flops_total=v.get("flops_total"),
        read_bytes_total=v.get("read_bytes_total"), write_bytes_total=v.get("write_bytes_total"),
        kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
        kv_evictable_tokens=v.get("kv_evictable_tokens"),
        retracted_input_tokens_total=v.get("retracted_input_tokens_total"),
        spec_drafts_total=v.get("spec_drafts_total"), spec_draft_tokens_total=v.get("spec_draft_tokens_total"),
        spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"),
        spec_accept_ratio=v.get("spec_accept_ratio"), spec_accept_length=v.get("spec_accept_length"),
        prefill_seconds_total=v.get("prefill_seconds_total"), decode_seconds_total=v.get("decode_seconds_total"),
        forward_seconds_total=v.get("forward_seconds_total"), decode_steps_total=v.get("decode_steps_total"),
        **kw)
