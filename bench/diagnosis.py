"""How gputop's diagnosis does on an independent trace corpus (bench/corpus).

Each trace of the corpus (written from GPU / engine / training physics, not from the
detector) is fed through the detector exactly as gputop does - a ``Timeline`` folding
``make_fold()`` over the frames - and the episodes it opens are scored against the
trace's truth:

* healthy trace: right iff no episode ever opens; each episode is a false alarm.
* pathology trace: right iff (a) an episode overlaps the window widened to 5 s before
  and 30 s after it, (b) the first such episode's final verdict (suspects[0] of its last
  version) is the true cause, (c) when the truth names culprit GPUs, that episode's
  first GPU is one of them, and (d) no episode opens entirely outside the widened
  window (those are false alarms).  Also noted: whether the verdict at the end of the
  window differs from the final one ("changed by recovery").

Printed: a line per trace, the confusion matrix (true cause x final verdict), precision
and recall per cause, the share right per family, false alarms per healthy trace-hour
(healthy traces plus the healthy parts of pathology traces), verdicts changed by
recovery, and the detector's cost per tick.  A measurement, not a test: exit status 0.

    python bench/diagnosis.py [--family F] [--verbose] [--json [PATH]] [--physics]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import ENTRIES, Truth, build  # noqa: E402
from bench.corpus.summary import summarize  # noqa: E402

BEFORE_S = 5.0
AFTER_S = 30.0
CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


def _actives(state) -> tuple:
    for holder in (state, getattr(state, "detector", None)):
        if holder is None:
            continue
        if hasattr(holder, "actives"):
            return tuple(holder.actives or ())
        if hasattr(holder, "active"):
            return (holder.active,) if holder.active else ()
    return ()


def _closed(state) -> tuple:
    for holder in (state, getattr(state, "detector", None)):
        if holder is not None and hasattr(holder, "episodes"):
            return tuple(holder.episodes or ())
    return ()


def _verdict(ep) -> str | None:
    sus = getattr(ep, "suspects", None) or ()
    if not sus:
        return None
    first = sus[0]
    return first[0] if isinstance(first, (tuple, list)) else getattr(first, "cause", str(first))


def _ep_dict(ep) -> dict:
    return {"kind": ep.kind, "gpus": list(getattr(ep, "gpus", ()) or ()),
            "start_wall_s": ep.start_wall_s, "end_wall_s": getattr(ep, "end_wall_s", None),
            "verdict": _verdict(ep),
            "suspects": [list(s) if isinstance(s, (tuple, list)) else str(s)
                         for s in (getattr(ep, "suspects", None) or ())][:4],
            "headline": str(getattr(ep, "headline", "") or "")}


def run_detector(truth: Truth, frames) -> dict:
    from gputop.model.detect import make_fold
    from gputop.model.timeline import Timeline

    tl = Timeline(len(frames) + 10, make_fold())
    last: dict = {}  # (kind, start) -> last version seen
    at_window_end: dict = {}
    costs = []
    w_end = truth.window[1] if truth.window else None
    for f in frames:
        t0 = time.perf_counter()
        state = tl.append(f)
        costs.append(time.perf_counter() - t0)
        for ep in _actives(state) + _closed(state)[-12:]:
            key = (ep.kind, ep.start_wall_s)
            last[key] = ep
            if w_end is not None and f.time_wall_s <= w_end:
                at_window_end[key] = _verdict(ep)
    eps = sorted(last.values(), key=lambda e: e.start_wall_s)
    return {"episodes": eps, "at_window_end": at_window_end, "costs": costs,
            "end_wall": frames[-1].time_wall_s if frames else None}


def score(truth: Truth, run: dict) -> dict:
    eps = run["episodes"]
    end_wall = run["end_wall"]
    out = {"name": truth.name, "family": truth.family, "cause": truth.cause or "healthy",
           "engine": truth.engine, "gpus": truth.gpus, "culprit_gpus": truth.culprit_gpus,
           "window": truth.window, "episodes": [_ep_dict(e) for e in eps]}
    if truth.cause is None:
        out["right"] = not eps
        out["false_alarms"] = len(eps)
        out["verdict"] = _verdict(eps[0]) if eps else "none"
        out["why"] = "no episode" if not eps else (
            f"{len(eps)} false alarm(s): first {eps[0].kind} on GPU "
            f"{(eps[0].gpus or ('?',))[0]} says {_verdict(eps[0])}")
        out["changed_by_recovery"] = False
        return out
    w0, w1 = truth.window
    lo, hi = w0 - BEFORE_S, w1 + AFTER_S
    overlapping = [e for e in eps if e.start_wall_s <= hi and
                   (e.end_wall_s if e.end_wall_s is not None else end_wall + 1) >= lo]
    outside = [e for e in eps if e not in overlapping]
    out["false_alarms"] = len(outside)
    if not overlapping:
        out.update(right=False, verdict="none", why="no episode in the window",
                   changed_by_recovery=False)
        if outside:
            out["why"] += f"; {len(outside)} false alarm(s) outside it"
        return out
    ep = overlapping[0]
    verdict = _verdict(ep) or "none"
    out["verdict"] = verdict
    out["named_gpu"] = (ep.gpus or (None,))[0]
    out["delay_s"] = round(ep.start_wall_s - w0, 1)
    reasons = []
    if verdict != truth.cause:
        reasons.append(f"verdict {verdict}")
    if truth.culprit_gpus and out["named_gpu"] not in truth.culprit_gpus:
        reasons.append(f"named GPU {out['named_gpu']}, culprit {list(truth.culprit_gpus)}")
    if outside:
        reasons.append(f"{len(outside)} false alarm(s) outside the window")
    out["right"] = not reasons
    out["why"] = "; ".join(reasons) if reasons else f"{ep.kind} +{out['delay_s']}s on GPU {out['named_gpu']}"
    end_v = run["at_window_end"].get((ep.kind, ep.start_wall_s))
    out["verdict_at_window_end"] = end_v
    out["changed_by_recovery"] = end_v is not None and end_v != _verdict(ep)
    return out


def healthy_seconds(truth: Truth, frames) -> float:
    if not frames:
        return 0.0
    span = frames[-1].time_wall_s - frames[0].time_wall_s
    if truth.window is None:
        return span
    lo = max(frames[0].time_wall_s, truth.window[0] - BEFORE_S)
    hi = min(frames[-1].time_wall_s, truth.window[1] + AFTER_S)
    return max(0.0, span - max(0.0, hi - lo))


def physics(truth: Truth, frames) -> dict:
    g = truth.culprit_gpus
    if truth.window:
        a, b = truth.window
        return {"healthy": summarize(frames, frames[0].time_wall_s + 10, a, g),
                "pathology": summarize(frames, a, b, g)}
    return {"all": summarize(frames, frames[0].time_wall_s + 10, None)}


def report(results: list[dict], costs: list[float], fa_hours: float, fa_count: int) -> dict:
    rows = ["healthy", *CAUSES]
    cols = ["none", *CAUSES]
    matrix = {r: {c: 0 for c in cols} for r in rows}
    for r in results:
        v = r.get("verdict") or "none"
        if v not in matrix[r["cause"]]:
            for m in matrix.values():
                m.setdefault(v, 0)
            cols.append(v)
        matrix[r["cause"]][v] += 1
    pr = {}
    for c in CAUSES:
        tp = matrix[c].get(c, 0)
        n_true = sum(matrix[c].values())
        n_pred = sum(matrix[r].get(c, 0) for r in rows)
        pr[c] = {"precision": round(tp / n_pred, 3) if n_pred else None,
                 "recall": round(tp / n_true, 3) if n_true else None, "traces": n_true}
    fam = {}
    for r in results:
        f = fam.setdefault(r["family"], [0, 0])
        f[0] += bool(r["right"])
        f[1] += 1
    per_tick = [c * 1e6 for c in costs]
    return {
        "traces": len(results), "right": sum(bool(r["right"]) for r in results),
        "confusion": matrix, "columns": cols, "per_cause": pr,
        "per_family": {k: {"right": a, "traces": b, "share": round(a / b, 3)} for k, (a, b) in fam.items()},
        "false_alarms": fa_count, "healthy_hours": round(fa_hours, 3),
        "false_alarms_per_healthy_hour": round(fa_count / fa_hours, 2) if fa_hours else None,
        "changed_by_recovery": [r["name"] for r in results if r.get("changed_by_recovery")],
        "detector_us_per_tick": {"mean": round(sum(per_tick) / len(per_tick), 1) if per_tick else None,
                                 "max": round(max(per_tick), 1) if per_tick else None,
                                 "ticks": len(per_tick)},
    }


def print_text(results, summary, verbose: bool, phys: dict | None) -> None:
    print(f"{'trace':46s} {'truth':22s} {'verdict':22s} {'':5s} why")
    for r in results:
        mark = "right" if r["right"] else "WRONG"
        print(f"{r['name']:46s} {r['cause']:22s} {str(r.get('verdict')):22s} {mark:5s} {r['why']}")
        if r.get("error"):
            print(f"    error: {r['error']}")
        if verbose:
            for e in r["episodes"]:
                print(f"    {e['kind']} gpus={e['gpus']} start={e['start_wall_s']:.0f} "
                      f"end={e['end_wall_s'] if e['end_wall_s'] is None else round(e['end_wall_s'])} "
                      f"suspects={e['suspects']}")
                if e["headline"]:
                    print(f"      {e['headline']}")
        if phys and r["name"] in phys:
            for k, v in phys[r["name"]].items():
                keep = {x: y for x, y in v.items() if y is not None and x not in ("per_gpu_util",)}
                print(f"    {k}: {keep}")
    print()
    cols = summary["columns"]
    short = {c: c[:9] for c in cols}
    print("confusion (rows: truth, columns: final verdict)")
    print(f"{'':22s}" + "".join(f"{short[c]:>10s}" for c in cols))
    for row, counts in summary["confusion"].items():
        if sum(counts.values()) == 0:
            continue
        print(f"{row:22s}" + "".join(f"{counts.get(c, 0):>10d}" for c in cols))
    print()
    print(f"{'cause':22s} {'precision':>9s} {'recall':>7s} {'traces':>6s}")
    for c, v in summary["per_cause"].items():
        p = "-" if v["precision"] is None else f"{v['precision']:.2f}"
        rc = "-" if v["recall"] is None else f"{v['recall']:.2f}"
        print(f"{c:22s} {p:>9s} {rc:>7s} {v['traces']:>6d}")
    print()
    print("share right per family")
    for k, v in summary["per_family"].items():
        print(f"  {k:12s} {v['right']:3d}/{v['traces']:<3d} {100 * v['share']:5.1f}%")
    print()
    print(f"right: {summary['right']}/{summary['traces']}")
    print(f"false alarms: {summary['false_alarms']} over {summary['healthy_hours']} healthy "
          f"trace-hours = {summary['false_alarms_per_healthy_hour']} per hour")
    print(f"verdicts changed by recovery: {len(summary['changed_by_recovery'])} "
          f"{summary['changed_by_recovery']}")
    d = summary["detector_us_per_tick"]
    print(f"detector: mean {d['mean']} us, max {d['max']} us per tick over {d['ticks']} ticks")
    if summary.get("generation_s") is not None:
        print(f"corpus generation: {summary['generation_s']} s CPU")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", help="family, cause, or name substring (comma-separated)")
    ap.add_argument("--verbose", action="store_true", help="list every episode")
    ap.add_argument("--json", nargs="?", const="-", metavar="PATH",
                    help="write the results as JSON (to PATH, or stdout instead of text)")
    ap.add_argument("--physics", action="store_true",
                    help="print each trace's physical summary (healthy vs pathology window)")
    args = ap.parse_args(argv)
    from bench.corpus import _match

    results, costs, phys = [], [], {}
    fa_hours, fa_count = 0.0, 0
    gen_s = 0.0
    for entry in ENTRIES:
        if not _match(entry, args.family):
            continue
        t0 = time.process_time()
        try:
            truth, frames = build(entry)
        except Exception as exc:  # a corpus bug: report it, keep measuring the rest
            results.append({"name": entry.name, "family": entry.family,
                            "cause": entry.cause or "healthy", "right": False, "verdict": "none",
                            "why": "trace failed to build", "error": repr(exc), "episodes": []})
            continue
        gen_s += time.process_time() - t0
        try:
            run = run_detector(truth, frames)
            r = score(truth, run)
            costs += run["costs"]
        except Exception as exc:
            r = {"name": truth.name, "family": truth.family, "cause": truth.cause or "healthy",
                 "right": False, "verdict": "none", "why": "detector raised",
                 "error": "".join(traceback.format_exception_only(type(exc), exc)).strip(),
                 "episodes": [], "false_alarms": 0}
        r["note"] = truth.note
        results.append(r)
        fa_hours += healthy_seconds(truth, frames) / 3600.0
        fa_count += r.get("false_alarms", 0)
        if args.physics:
            phys[truth.name] = physics(truth, frames)
    summary = report(results, costs, fa_hours, fa_count)
    summary["generation_s"] = round(gen_s, 1)
    if args.json:
        data = {"summary": summary, "traces": results}
        if args.physics:
            data["physics"] = phys
        text = json.dumps(data, indent=1, default=str)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text)
            print_text(results, summary, args.verbose, phys if args.physics else None)
    else:
        print_text(results, summary, args.verbose, phys if args.physics else None)
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception:  # a measurement: say what broke, still exit 0
        traceback.print_exc()
    sys.exit(0)
