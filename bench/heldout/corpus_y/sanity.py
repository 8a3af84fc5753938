"""Sanity table, schema round-trip and determinism check for corpus_y.

    cd /work/blindy && /work/evenv/bin/python -m bench.heldout.corpus_y.sanity [--quick NAME...]"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path


def pctl(hist_a, hist_b, q=0.99):
    if hist_a is None or hist_b is None:
        return None
    d = [b - a for a, b in zip(hist_a.cumulative, hist_b.cumulative)]
    tot = hist_b.count - hist_a.count
    if tot <= 0:
        return None
    want = q * tot
    for ub, c in zip(hist_b.upper_bounds, d):
        if c >= want:
            return ub
    return float("inf")


def hist(e, name):
    if e is None:
        return None
    return next((h for h in e.histograms if h.name == name), None)


def summary(frames, lo, hi):
    sel = [f for f in frames if lo <= f.time_wall_s <= hi]
    if len(sel) < 2:
        return None
    def m(fn):
        v = [x for x in (fn(f) for f in sel) if x is not None]
        return sum(v) / len(v) if v else None
    out = dict(util=m(lambda f: sum(g.util_gpu_pct for g in f.gpus) / len(f.gpus)),
               sm=m(lambda f: None if f.gpus[0].sm_active_pct is None else sum(g.sm_active_pct for g in f.gpus) / len(f.gpus)),
               dram=m(lambda f: None if f.gpus[0].dram_bw_pct is None else sum(g.dram_bw_pct for g in f.gpus) / len(f.gpus)),
               clock=m(lambda f: min(g.sm_clock_mhz for g in f.gpus)))
    es = [f for f in sel if f.engine is not None]
    work = itl = ttft = None
    if len(es) >= 2:
        a, b = es[0].engine, es[-1].engine
        if a.generation_tokens_total is not None and b.generation_tokens_total is not None and b.generation_tokens_total >= a.generation_tokens_total:
            work = (b.generation_tokens_total - a.generation_tokens_total) / max(1e-9, (es[-1].time_wall_s - es[0].time_wall_s))
        itl = pctl(hist(a, "itl"), hist(b, "itl"))
        ttft = pctl(hist(a, "ttft"), hist(b, "ttft"))
    out.update(work=work, itl=itl, ttft=ttft)
    return out


def fmt(v, d=0):
    if v is None:
        return "n/a"
    if v == float("inf"):
        return "inf"
    return f"{v:,.{d}f}"


def table_row(truth, frames):
    t0 = frames[0].time_wall_s
    base = summary(frames, t0, t0 + 60)
    if truth.window:
        win = summary(frames, truth.window[0], truth.window[1])
        wtxt = f"{truth.window[0] - truth.start_wall_s:.0f}-{truth.window[1] - truth.start_wall_s:.0f}"
    else:
        win = summary(frames, t0 + 60, frames[-1].time_wall_s)
        wtxt = "(rest)"
    cells = []
    for k, d in (("work", 0), ("util", 0), ("sm", 0), ("dram", 0), ("clock", 0), ("itl", 3), ("ttft", 2)):
        cells.append(f"{fmt(base[k], d)} -> {fmt(win[k] if win else None, d)}")
    return (f"| {truth.name} | {truth.cause or 'healthy'} | {','.join(map(str, truth.culprit_gpus)) if truth.culprit_gpus else '-'} "
            f"| {wtxt} | " + " | ".join(cells) + " |")


def main(argv):
    from gputop.record.store import Recording
    from gputop.schema import frame_from_dict, frame_to_dict
    from bench.heldout.corpus_y import CAUSES, traces, write_recordings
    quick = argv[1:] if len(argv) > 1 and argv[0] == "--quick" else None
    t = time.process_time()
    rows, digest, count = [], hashlib.sha256(), {}
    for truth, frames in traces():
        if quick and truth.name not in quick and not any(q in truth.name for q in quick):
            continue
        for f in frames:
            raw = json.dumps(frame_to_dict(f), separators=(",", ":"))
            assert frame_from_dict(json.loads(raw)) == f, f"{truth.name}: frame {f.seq} does not round-trip"
            digest.update(raw.encode())
        assert all(a.time_wall_s < b.time_wall_s for a, b in zip(frames, frames[1:]))
        assert truth.cause is None or truth.cause in CAUSES
        count[truth.cause or "healthy"] = count.get(truth.cause or "healthy", 0) + 1
        rows.append(table_row(truth, frames))
    gen = time.process_time() - t
    print("| trace | cause | culprit | window (s from start) | work/s | GPU-Util % | SM % | DRAM % | clock MHz | ITL p99 s | TTFT p99 s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\ngeneration (incl. round-trip checks): {gen:.1f} s CPU; counts: {count}")
    if quick:
        return
    # recordings: write twice, compare bytes, read back
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        t = time.process_time()
        names = write_recordings(d1)
        print(f"write_recordings: {time.process_time() - t:.1f} s CPU")
        write_recordings(d2)
        same = 0
        for n in names:
            for suffix in (".gputop", ".truth.json"):
                a = (Path(d1) / (n + suffix)).read_bytes()
                b = (Path(d2) / (n + suffix)).read_bytes()
                assert a == b, f"{n}{suffix} differs between two runs"
                same += 1
            rec = Recording(Path(d1) / (n + ".gputop"))
            fr = list(rec.frames())
            assert rec.skipped_frames == 0 and len(fr) == rec.count() and len(fr) > 0, n
            rec.close()
        print(f"determinism: {same} files byte-identical across two runs; all recordings read back")


if __name__ == "__main__":
    main(sys.argv[1:])
