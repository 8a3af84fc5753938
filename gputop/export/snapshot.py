"""The ``snapshot --json`` contract over a View: stable names, null for unknown.

The one JSON form of the derived model: ``snapshot --json``, ``serve``'s
``/snapshot.json``, ``export --format jsonl`` and the tests all write it from a View,
and the numbers come from the signal catalogue (``model/signals.py``).
"""

from __future__ import annotations

from typing import Any

from gputop.model import signals, tenants
from gputop.model.derive import OFF_CPU, EngineView, MigView, View
from gputop.units import iso_time


def detector_note(view: View) -> str | None:
    """Why the detector cannot judge now; an engine that is configured but late says so
    (rather than "needs a throughput source")."""
    note = view.detector.note
    if note is None or view.frame.engine is not None:
        return note
    reasons = [st.reason for name, st in view.sources.items()
               if name.startswith("engine") and not st.ok and st.reason]
    return f"waiting for the engine: {reasons[0]}" if reasons else note


def _r(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _engine_extra(e: EngineView) -> dict[str, Any]:
    """Snapshot fields of an engine or replica beyond the catalogue's numbers: where it
    runs, its LoRA adapters, its per-stage latency (SGLang's stages, by name)."""
    return {
        "gpus": list(e.gpus), "pids": list(e.sample.pids),
        "lora_running": list(e.sample.lora_running), "lora_waiting": list(e.sample.lora_waiting),
        "lora_max": e.sample.lora_max,
        "stage_latency_s": {name.removeprefix("stage:"): {"p50_s": _r(p50, 6), "p99_s": _r(p99, 6)}
                            for name, (p50, p99) in sorted(e.latency.items())
                            if name.startswith("stage:")},
    }


def _mig_dict(m: MigView) -> dict[str, Any]:
    s = m.sample
    return {"index": s.index, "gpu_instance_id": s.gpu_instance_id,
            "compute_instance_id": s.compute_instance_id, "profile": s.profile or None,
            "name": s.name, "uuid": s.uuid, "sm_count": s.sm_count,
            **{signal.name: signal.json_value(m) for signal in signals.MIG},
            "missing": dict(s.missing), "pids": [p.pid for p in m.processes]}


def _tenant_dict(t: tenants.Tenant) -> dict[str, Any]:
    return {"name": t.name or None, "mig": t.mig_index, "pids": list(t.pids),
            "users": list(t.users), "mem_bytes": t.mem_bytes,
            "sm_util_pct": _r(t.sm_util_pct), "mem_util_pct": _r(t.mem_util_pct)}


def snapshot_dict(view: View, source_label: str) -> dict[str, Any]:
    """The ``snapshot --json`` contract (FACTS.md section 7): stable names, null for unknown."""
    frame = view.frame
    gpus = []
    for g in view.gpus:
        s = g.sample
        gpus.append({
            "index": s.index, "name": s.name, "uuid": s.uuid, "lost": s.lost,
            **{signal.name: signal.json_value(g) for signal in signals.GPU},
            "throttle": list(s.throttle), "missing": dict(s.missing),
            "vram": g.vram.as_dict() if g.vram else None,
            "bus_id": s.bus_id or None, "mig_mode": s.mig_mode,
            "processes": [{"pid": p.pid, "name": p.name, "cmdline": p.cmdline, "user": p.user,
                           "mem_bytes": p.mem_bytes, "sm_util_pct": _r(p.sm_util_pct),
                           "mem_util_pct": _r(p.mem_util_pct), "mig": p.mig_index,
                           "rss_bytes": p.rss_bytes, "container": p.container or None,
                           "pod": p.pod or None, "cgroup": p.cgroup or None,
                           "slurm_job": p.slurm_job or None, "slurm_step": p.slurm_step or None}
                          for p in g.processes],
            "mig_instances": [_mig_dict(m) for m in g.migs],
            "tenants": {kind: [_tenant_dict(t) for t in tenants.tenants(g.processes, kind)]
                        for kind in tenants.KINDS},
        })
    engine = None
    e = view.engine or view.last_engine
    if e is not None:
        engine = {
            "kind": e.sample.kind, "url": e.sample.url, "model": e.sample.model,
            **{signal.name: signal.json_value(e) for signal in signals.ENGINE},
            "num_gpu_blocks": e.sample.num_gpu_blocks, "block_size": e.sample.block_size,
            "kv_pool_bytes": e.kv_pool_bytes,
            # whether the reading (reading_age_s old) is from an earlier tick than "time"
            "stale": view.engine is None,
            "waiting_by_reason": dict(e.sample.waiting_by_reason),
            "peak": None if e.peak is None else {
                "model": e.peak.model, "tflops_bf16": e.peak.tflops_bf16,
                "mem_tb_per_s": e.peak.mem_tb_per_s, "source": e.peak.source},
            **_engine_extra(e),
            "replicas": [{"replica": r.sample.replica, "model": r.sample.model,
                          **{signal.name: signal.json_value(r) for signal in signals.REPLICA},
                          "num_gpu_blocks": r.sample.num_gpu_blocks,
                          "block_size": r.sample.block_size, "kv_pool_bytes": r.kv_pool_bytes,
                          "waiting_by_reason": dict(r.sample.waiting_by_reason),
                          **_engine_extra(r)}
                         for r in e.replicas],
        }
    offcpu = next((a for a in view.launch if a.api == OFF_CPU), None)
    launch = {
        "mode": "full" if view.launch else "off",
        "window_s": view.launch_window_s,
        # probes sampled (--ebpf-duty): seconds of the window they were attached; calls are
        # the traced ones, calls_per_s is per attached second
        "traced_s": _r(view.launch_traced_s),
        "apis": {a.api: {"calls": a.stats.calls, "calls_per_s": _r(a.stats.calls_per_s),
                         "p50_us": _r(a.stats.p50_us), "p99_us": _r(a.stats.p99_us),
                         "max_us": _r(a.stats.max_us)} for a in view.launch if a.api != OFF_CPU},
        "offcpu": None if offcpu is None else {
            "switches_per_s": _r(offcpu.stats.calls_per_s), "p99_us": _r(offcpu.stats.p99_us)},
    }
    host = frame.host
    alerts = []
    episodes = list(view.detector.episodes[-10:]) + list(view.detector.actives)
    for ep in episodes:
        alerts.append({
            "kind": ep.kind, "gpu": ep.gpus[0] if ep.gpus else None, "gpus": list(ep.gpus),
            "job_gpus": list(ep.job_gpus or ep.gpus), "subject": ep.subject,
            "measure": ep.measure,
            "active": ep.end_wall_s is None,
            "since": iso_time(ep.start_wall_s),
            "until": None if ep.end_wall_s is None else iso_time(ep.end_wall_s),
            "headline": ep.headline, "evidence": list(ep.evidence),
            "suspects": [{"cause": c, "score": s} for c, s in ep.suspects],
            "verdict_history": [{"time": iso_time(t), "cause": c} for t, c in ep.history],
        })
    return {
        "schema": 1,
        "time": iso_time(frame.time_wall_s),
        "source": source_label,
        "sources": {name: {"ok": st.ok, "reason": st.reason, "age_s": _r(st.age_s, 3),
                           "poll_s": _r(st.poll_s, 4), "poll_median_s": _r(st.poll_median_s, 4),
                           **({"detail": st.detail} if st.detail else {})}
                    for name, st in view.sources.items()},
        "pinned": None if view.pinned is None else {
            "pids": list(view.pinned.sample.root_pids), "pattern": view.pinned.sample.pattern,
            "tree_pids": list(view.pinned.sample.tree_pids), "label": view.pinned.sample.label,
            "exited": {str(k): iso_time(v) for k, v in view.pinned.sample.exited.items()},
            "waiting": view.pinned.sample.waiting, "cpu_pct": _r(view.pinned.cpu_pct)},
        "gpus": gpus,
        "engine": engine,
        "launch": launch,
        "host": {"cpu_pct": _r(host.cpu_pct) if host else None,
                 "pinned_cpu_pct": _r(view.pinned.cpu_pct) if view.pinned else None},
        "detector": {"note": detector_note(view),
                     "latency_window_s": view.detector.config.latency_window_s},
        "alerts": alerts,
    }
