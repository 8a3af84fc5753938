"""A lab run, phase by phase, as gputop recorded it: the README's table.

    python -m lab.report DIR            # DIR: what lab.run left (tests/data/h200/lab)
    python -m lab.report DIR --json

For each phase of DIR/phases.json: GPU-Util, SM active and DRAM bandwidth as recorded
(means over the phase, its first and last ``EDGE`` left out), tokens/s from the engine's
own counter, the inter-token latency p99 from the histogram's change over the phase, and
gputop's verdict: the episodes its model opened during the phase while replaying the
recording (read through the snapshot JSON contract, so any detector will do), each with
its suspects, first the likeliest.
Runs under gputop's interpreter; the lab's other modules need no gputop.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys

from gputop.model import enginehist
from gputop.export.snapshot import snapshot_dict
from gputop.record.store import Recording
from gputop.cursor import RecordingCursor


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def edge_s(phase: dict) -> float:
    """Left out at each end: the samples that straddle the change of phase."""
    return min(2.0, 0.15 * (phase["end_wall_s"] - phase["start_wall_s"]))


def _engine_rate(readings) -> float | None:
    if len(readings) < 2:
        return None
    first, last = readings[0], readings[-1]
    if first.generation_tokens_total is None or last.generation_tokens_total is None:
        return None
    seconds = last.time_wall_s - first.time_wall_s
    return (last.generation_tokens_total - first.generation_tokens_total) / seconds \
        if seconds > 0 else None


def _itl_p99(readings) -> float | None:
    def itl(sample):
        return next((h for h in sample.histograms if h.name == "itl"), None)

    if len(readings) < 2 or itl(readings[-1]) is None:
        return None
    return enginehist.quantile(enginehist.delta(itl(readings[0]), itl(readings[-1])), 0.99)


def replay(path: str) -> list[tuple]:
    """(frame, snapshot dict) for every frame, folded through gputop's model in order."""
    recording = Recording(path)
    try:
        return [(view.frame, snapshot_dict(view, f"replay:{os.path.basename(path)}"))
                for view in RecordingCursor(recording).views()]
    finally:
        recording.close()


def verdict(snapshots: list[dict], start_wall: float, end_wall: float) -> list[dict]:
    """The distinct episodes that opened between two wall times (one still open from the
    phase before is that phase's), each as its last snapshot described it."""
    seen: dict[tuple, dict] = {}
    for snap in snapshots:
        for alert in snap["alerts"]:
            since = datetime.datetime.fromisoformat(alert["since"]).timestamp()
            if alert["active"] and start_wall <= since <= end_wall:
                seen[(alert["kind"], alert["since"])] = _episode(alert)
    return list(seen.values())


def _episode(alert: dict) -> dict:
    """A snapshot's alert as a row's episode: its verdict, first the likeliest."""
    return {"kind": alert["kind"], "since": alert["since"], "headline": alert["headline"],
            "evidence": alert["evidence"], "suspects": [s["cause"] for s in alert["suspects"]]}


def carried(snapshots: list[dict], start_wall: float, middle_wall: float) -> list[dict]:
    """The episodes opened before the phase and still open at its middle, each with its
    verdict then: one trouble after another of the same cause (busy loops on a trainer's
    cores, then a CPU quota on it) is one episode, named in the first phase's row."""
    snap = next((s for s in reversed(snapshots)
                 if datetime.datetime.fromisoformat(s["time"]).timestamp() <= middle_wall), None)
    if snap is None:
        return []
    return [_episode(a) for a in snap["alerts"]
            if a["active"] and datetime.datetime.fromisoformat(a["since"]).timestamp()
            < start_wall]


def phase_rows(directory: str) -> list[dict]:
    doc = json.load(open(os.path.join(directory, "phases.json")))
    replays = {segment: replay(os.path.join(directory, rec["file"]))
               for segment, rec in doc["recordings"].items()}
    rows = []
    settle_s = doc["config"]["settle_s"]
    for index, phase in enumerate(doc["phases"]):
        # an episode opened before the next phase began is this phase's: the detector
        # holds a condition for a few seconds before it opens one
        later = doc["phases"][index + 1:index + 2]
        until = later[0]["start_wall_s"] if later and later[0]["segment"] == phase["segment"] \
            else phase["end_wall_s"] + settle_s
        lo, hi = phase["start_wall_s"] + edge_s(phase), phase["end_wall_s"] - edge_s(phase)
        inside = [(f, s) for f, s in replays.get(phase["segment"], ())
                  if lo <= f.time_wall_s <= hi]
        gpus = [f.gpus[0] for f, _ in inside if f.gpus]
        readings = [f.engine for f, _ in inside if f.engine is not None
                    and f.engine.time_wall_s is not None]
        during = [s for f, s in replays.get(phase["segment"], ())
                  if phase["start_wall_s"] <= f.time_wall_s <= until]
        episodes = verdict(during, phase["start_wall_s"], until)
        middle = (phase["start_wall_s"] + phase["end_wall_s"]) / 2
        before = carried([s for f, s in replays.get(phase["segment"], ())], phase["start_wall_s"],
                         middle)
        rows.append({
            "phase": phase["name"], "truth": phase["truth"], "frames": len(inside),
            "util_pct": _mean(g.util_gpu_pct for g in gpus),
            "sm_active_pct": _mean(g.sm_active_pct for g in gpus),
            "dram_bw_pct": _mean(g.dram_bw_pct for g in gpus),
            "tokens_per_s": _engine_rate(readings),
            "client_tokens_per_s": phase["client"]["tokens_per_s"],
            "itl_p99_s": _itl_p99(readings),
            "episodes": episodes,
            "carried": before,
            "top_cause": episodes[-1]["suspects"][0] if episodes and episodes[-1]["suspects"]
            else None,
        })
    return rows


def _fmt(value, digits=0, scale=1.0) -> str:
    return "n/a" if value is None else f"{value * scale:,.{digits}f}"


def table(rows: list[dict]) -> str:
    lines = ["| phase | GPU-Util % | SM % | DRAM % | tokens/s | ITL p99 ms | gputop's verdict "
             "| staged cause |", "|---|---|---|---|---|---|---|---|"]
    def named(episodes: list[dict]) -> str:
        return "; ".join(f"{e['kind']}: {', '.join(e['suspects'][:2]) or 'no suspect'}"
                         for e in episodes)

    for r in rows:
        said = named(r["episodes"]) or "no episode"
        if not r["episodes"] and r.get("carried"):
            said = "the episode before goes on: " + named(r["carried"])
        lines.append(f"| {r['phase']} | {_fmt(r['util_pct'])} | {_fmt(r['sm_active_pct'])} | "
                     f"{_fmt(r['dram_bw_pct'])} | {_fmt(r['tokens_per_s'])} | "
                     f"{_fmt(r['itl_p99_s'], 1, 1e3)} | {said} | {r['truth'] or 'none'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.directory, "phases.json")):
        print(f"lab.report: no phases.json in {args.directory}", file=sys.stderr)
        return 2
    rows = phase_rows(args.directory)
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
