"""Measure gputop's detector on a held-out corpus (corpus_b, corpus_c, corpus_d): one harness,
each corpus's ``diagnosis_X.py`` names its corpus and calls ``main``.

    python bench/heldout/diagnosis_b.py [--family F] [--verbose] [--json [PATH]] [--signals]

Each trace's frames go through the detector exactly as gputop feeds it
(``Timeline(len(frames) + 10, make_fold())``, one ``append`` per frame).  Episodes are
identified by (kind, start_wall_s); the last version seen of each is kept.

Scoring:
  healthy trace    right iff no episode ever opens; each episode is a false alarm.
  pathology trace  right iff (a) an episode overlaps the window widened to [start - 5 s,
                   end + 30 s], (b) the first such episode's final verdict (suspects[0][0]
                   of its last version) is the cause, (c) when culprit GPUs are given, that
                   episode's gpus[0] is one of them, and (d) no episode opens entirely
                   outside the widened window (each such one is a false alarm).
"Changed by recovery": the first overlapping episode's verdict at the end of the window
differs from its final verdict.  This is a measurement: it always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the checkout, for gputop itself
for path in (HERE, ROOT):
    if path not in sys.path:
        sys.path.insert(0, path)

import importlib  # noqa: E402

PRE_S, POST_S = 5.0, 30.0


def _cause_of(ep):
    sus = getattr(ep, "suspects", ()) or ()
    if not sus:
        return "none"
    first = sus[0]
    if isinstance(first, (tuple, list)):
        return str(first[0])
    return str(getattr(first, "cause", first))


def _suspects(ep, n=3):
    out = []
    for s in (getattr(ep, "suspects", ()) or ())[:n]:
        if isinstance(s, (tuple, list)):
            out.append((str(s[0]), round(float(s[1]), 3) if len(s) > 1 else None))
        else:
            out.append((str(getattr(s, "cause", s)), getattr(s, "score", None)))
    return out


def run_detector(frames):
    """Feed the frames; return (episodes by key -> dict, us per tick list)."""
    from gputop.model.detect import make_fold
    from gputop.model.timeline import Timeline

    tl = Timeline(len(frames) + 10, make_fold())
    eps: dict = {}
    ticks = []
    for f in frames:
        t0 = time.perf_counter()
        state = tl.append(f)
        ticks.append((time.perf_counter() - t0) * 1e6)
        actives = getattr(state, "actives", None)
        if actives is None:
            actives = (state.active,) if getattr(state, "active", None) else ()
        for ep in (*tuple(actives), *tuple(getattr(state, "episodes", ()) or ())):
            if ep is None:
                continue
            key = (ep.kind, ep.start_wall_s)
            rec = eps.get(key)
            verdict = _cause_of(ep)
            if rec is None:
                rec = eps[key] = {"kind": ep.kind, "start": ep.start_wall_s, "history": []}
            rec["last"] = ep
            if not rec["history"] or rec["history"][-1][1] != verdict:
                rec["history"].append((f.time_wall_s, verdict))
    return eps, ticks


def _overlaps(rec, a, b):
    ep = rec["last"]
    s = ep.start_wall_s
    e = ep.end_wall_s if ep.end_wall_s is not None else float("inf")
    return s <= b and e >= a


def score(truth, frames, eps):
    t_start = frames[0].time_wall_s if frames else truth.start_wall_s
    t_end = frames[-1].time_wall_s if frames else t_start
    ordered = sorted(eps.values(), key=lambda r: r["start"])
    row = {"name": truth.name, "family": truth.family, "cause": truth.cause,
           "culprit": list(truth.culprit_gpus) if truth.culprit_gpus else None,
           "engine": truth.engine, "gpus": truth.gpus, "gpu_model": truth.gpu_model,
           "tick_s": truth.tick_s, "episodes": [], "false_alarms": 0,
           "changed_by_recovery": None, "healthy_s": 0.0}
    for r in ordered:
        ep = r["last"]
        row["episodes"].append({
            "kind": ep.kind, "gpus": list(ep.gpus),
            "start_s": round(ep.start_wall_s - t_start, 1),
            "end_s": None if ep.end_wall_s is None else round(ep.end_wall_s - t_start, 1),
            "verdict": _cause_of(ep), "suspects": _suspects(ep),
            "headline": str(getattr(ep, "headline", ""))})
    if truth.cause is None:
        row["false_alarms"] = len(ordered)
        row["healthy_s"] = t_end - t_start + truth.tick_s
        row["verdict"] = _cause_of(ordered[0]["last"]) if ordered else "none"
        row["right"] = not ordered
        row["why"] = "ok" if not ordered else "false alarm"
        return row
    a, b = truth.window
    wa, wb = a - PRE_S, b + POST_S
    inside = [r for r in ordered if _overlaps(r, wa, wb)]
    outside = [r for r in ordered if not _overlaps(r, wa, wb)]
    row["false_alarms"] = len(outside)
    row["healthy_s"] = max(0.0, (t_end - t_start + truth.tick_s) - (min(wb, t_end) - max(wa, t_start)))
    row["window_s"] = [round(a - t_start, 1), round(b - t_start, 1)]
    if not inside:
        row.update(verdict="none", right=False, why="no episode")
        return row
    first = inside[0]
    ep = first["last"]
    verdict = _cause_of(ep)
    at_end = None
    for when, v in first["history"]:
        if when <= b:
            at_end = v
    if at_end is not None:
        row["changed_by_recovery"] = at_end != verdict
        row["verdict_at_window_end"] = at_end
    row["verdict"] = verdict
    gpu_ok = True
    if truth.culprit_gpus:
        gpu_ok = bool(ep.gpus) and ep.gpus[0] in truth.culprit_gpus
    if verdict != truth.cause:
        row.update(right=False, why="wrong cause")
    elif not gpu_ok:
        row.update(right=False, why="wrong GPU")
    elif outside:
        row.update(right=False, why="false alarm")
    else:
        row.update(right=True, why="ok")
    return row


def summarize(rows, ticks):
    causes = sorted({r["cause"] for r in rows if r["cause"]})
    labels = ["healthy"] + causes
    verdicts = sorted({r["verdict"] for r in rows} | set(causes) | {"none"})
    verdicts = [v for v in verdicts if v != "none"] + ["none"]
    matrix = {lab: {v: 0 for v in verdicts} for lab in labels}
    for r in rows:
        matrix[r["cause"] or "healthy"][r["verdict"]] += 1
    pr = {}
    for c in causes:
        tp = matrix[c].get(c, 0)
        col = sum(matrix[lab].get(c, 0) for lab in labels)
        rowsum = sum(matrix[c].values())
        pr[c] = {"precision": round(tp / col, 3) if col else None,
                 "recall": round(tp / rowsum, 3) if rowsum else None,
                 "right": sum(1 for r in rows if r["cause"] == c and r["right"]),
                 "traces": rowsum}
    fams = {}
    for r in rows:
        f = fams.setdefault(r["family"], {"traces": 0, "right": 0})
        f["traces"] += 1
        f["right"] += 1 if r["right"] else 0
    for f in fams.values():
        f["share"] = round(f["right"] / f["traces"], 3) if f["traces"] else None
    healthy_s = sum(r["healthy_s"] for r in rows)
    fa = sum(r["false_alarms"] for r in rows)
    changed = [r["name"] for r in rows if r.get("changed_by_recovery")]
    judged = sum(1 for r in rows if r.get("changed_by_recovery") is not None)
    all_ticks = [t for ts in ticks for t in ts]
    return {"traces": len(rows), "right": sum(1 for r in rows if r["right"]),
            "labels": labels, "verdicts": verdicts, "confusion": matrix,
            "per_cause": pr, "families": fams,
            "false_alarms": fa, "healthy_hours": round(healthy_s / 3600, 3),
            "false_alarms_per_healthy_hour": round(fa / (healthy_s / 3600), 2) if healthy_s else None,
            "changed_by_recovery": {"count": len(changed), "of": judged, "traces": changed},
            "detector_us_per_tick": {"mean": round(sum(all_ticks) / len(all_ticks), 1) if all_ticks else None,
                                     "max": round(max(all_ticks), 1) if all_ticks else None,
                                     "ticks": len(all_ticks)}}


def print_text(rows, summ, verbose):
    print(f"{'trace':44} {'truth':22} {'verdict':22} {'':5} why")
    for r in rows:
        truth = r["cause"] or "healthy"
        if r["culprit"] and r["cause"]:
            truth += "@" + ",".join(map(str, r["culprit"])) if len(r["culprit"]) < r["gpus"] else ""
        more = (f" (+{r['false_alarms']} false alarm(s))"
                if r['false_alarms'] and r['why'] != 'false alarm' else "")
        print(f"{r['name']:44} {truth:22} {r['verdict']:22} {'RIGHT' if r['right'] else 'wrong':5} "
              f"{r['why']}{more}")
        if verbose:
            if r.get("window_s"):
                print(f"      window {r['window_s'][0]}-{r['window_s'][1]} s")
            for e in r["episodes"]:
                print(f"      {e['kind']:18} gpus={e['gpus']} {e['start_s']}-{e['end_s']} s "
                      f"{e['suspects']}  {e['headline']}")
    print()
    print("confusion matrix (rows: truth, columns: final verdict)")
    cols = summ["verdicts"]
    short = {v: v[:9] for v in cols}
    print(" " * 22 + " ".join(f"{short[v]:>9}" for v in cols))
    for lab in summ["labels"]:
        print(f"{lab:22}" + " ".join(f"{summ['confusion'][lab][v] or '.':>9}" for v in cols))
    print()
    print(f"{'cause':22} {'precision':>9} {'recall':>7} {'right':>6}")
    for c, v in summ["per_cause"].items():
        p = "-" if v["precision"] is None else f"{v['precision']:.2f}"
        rc = "-" if v["recall"] is None else f"{v['recall']:.2f}"
        print(f"{c:22} {p:>9} {rc:>7} {v['right']:>3}/{v['traces']}")
    print()
    print("share right per family")
    for f, v in sorted(summ["families"].items()):
        print(f"  {f:24} {v['right']}/{v['traces']}  ({v['share']:.2f})")
    print()
    print(f"right: {summ['right']}/{summ['traces']}")
    print(f"false alarms: {summ['false_alarms']} in {summ['healthy_hours']} healthy trace-hours "
          f"= {summ['false_alarms_per_healthy_hour']} per hour")
    ch = summ["changed_by_recovery"]
    print(f"verdicts changed by recovery: {ch['count']} of {ch['of']}"
          + (f" ({', '.join(ch['traces'])})" if ch["traces"] else ""))
    d = summ["detector_us_per_tick"]
    print(f"detector: mean {d['mean']} us/tick, max {d['max']} us/tick over {d['ticks']} ticks")


def main(corpus, argv=None) -> int:
    ap = argparse.ArgumentParser(description=f"Measure gputop's detector on {corpus.__name__}")
    ap.add_argument("--family", help="a family, a cause, 'healthy', or one trace's name")
    ap.add_argument("--verbose", action="store_true", help="print every episode")
    ap.add_argument("--json", nargs="?", const="-", metavar="PATH",
                    help="write the results as JSON (to PATH, or stdout instead of text)")
    ap.add_argument("--signals", action="store_true",
                    help="also print each trace's signal summaries (healthy / pathology windows)")
    args = ap.parse_args(argv)
    rows, ticks = [], []
    t_gen = 0.0
    try:
        it = corpus.traces(args.family)
        while True:
            g0 = time.process_time()
            try:
                truth, frames = next(it)
            except StopIteration:
                break
            t_gen += time.process_time() - g0
            try:
                eps, tk = run_detector(frames)
            except Exception as exc:  # the detector broke: record it, keep measuring
                rows.append({"name": truth.name, "family": truth.family, "cause": truth.cause,
                             "culprit": list(truth.culprit_gpus) if truth.culprit_gpus else None,
                             "gpus": truth.gpus, "verdict": "none", "right": False,
                             "why": f"detector error: {type(exc).__name__}: {exc}",
                             "episodes": [], "false_alarms": 0, "healthy_s": 0.0,
                             "changed_by_recovery": None})
                traceback.print_exc(file=sys.stderr)
                continue
            ticks.append(tk)
            rows.append(score(truth, frames, eps))
            if args.signals:
                _print_signals(corpus, truth, frames)
    except Exception:
        traceback.print_exc(file=sys.stderr)
    summ = summarize(rows, ticks) if rows else {}
    summ["generation_cpu_s"] = round(t_gen, 2)
    if args.json:
        out = {"summary": summ, "traces": rows}
        text = json.dumps(out, indent=1, default=str)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as fh:
                fh.write(text)
            print_text(rows, summ, args.verbose)
    elif rows:
        print_text(rows, summ, args.verbose)
        print(f"corpus generation: {summ['generation_cpu_s']} s CPU")
    return 0


def _print_signals(corpus, truth, frames):
    sig = importlib.import_module(corpus.__name__ + ".inspect_signals").summarize
    s0 = frames[0].time_wall_s
    print(f"-- {truth.name} [{truth.cause or 'healthy'}] {truth.note}")
    if truth.window:
        a, b = truth.window
        for lab, x, y in (("healthy", s0 + 5, a - 3), ("pathology", a + 0.3 * (b - a), b),
                          ("after", b + 30, frames[-1].time_wall_s)):
            print(f"   {lab:9} {sig(frames, x, y, truth.culprit_gpus)}")
    else:
        n = len(frames)
        for k in range(3):
            lo = frames[k * n // 3].time_wall_s
            hi = frames[min(n - 1, (k + 1) * n // 3)].time_wall_s
            print(f"   part {k + 1}   {sig(frames, lo, hi)}")



def run(corpus) -> None:
    """A corpus script's entry point: measure, always exit 0 (a measurement, not a test)."""
    try:
        main(corpus)
    except (SystemExit, BrokenPipeError):
        pass
    except Exception:
        traceback.print_exc()
    sys.exit(0)
