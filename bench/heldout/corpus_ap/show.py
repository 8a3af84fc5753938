"""python -m corpus_ap.show NAME [every_s]: the readings a user would look at, one line per step."""
from __future__ import annotations

import sys

from corpus_ap import traces
from corpus_ap.readings import rows


def fmt(v, w=6, d=0):
    if v is None:
        return "-".rjust(w)
    if isinstance(v, float):
        return f"{v:{w}.{d}f}"
    return str(v).rjust(w)


def main(argv):
    name = argv[0]
    every = float(argv[1]) if len(argv) > 1 else 10.0
    for truth, frames in traces(lambda n: n == name):
        print(truth)
        rs = rows(frames)
        ng = truth.gpus
        nxt = 0.0
        w0 = truth.window[0] - truth.start_wall_s if truth.window else None
        w1 = truth.window[1] - truth.start_wall_s if truth.window else None
        print("   t  W " + " ".join(f"g{g}:util  sm dram  clk  pow  T" for g in range(min(ng, 4)))
              + "   psi rq invol/s thr  gen/s run wait   kv itl99 ttft99 acc  pre launch_slow")
        for r in rs:
            if r["t"] < nxt:
                continue
            nxt = r["t"] + every
            inw = "*" if w0 is not None and w0 <= r["t"] <= w1 else " "
            line = f"{r['t']:5.0f} {inw} "
            for g in range(min(ng, 4)):
                k = f"g{g}"
                line += (f"{fmt(r[k + 'util'], 4)} {fmt(r[k + 'sm'], 3)} {fmt(r[k + 'dram'], 3)} "
                         f"{fmt(r[k + 'clk'], 4)} {fmt(r[k + 'pw'], 4)} {fmt(r[k + 'temp'], 3)} ")
            line += (f"{fmt(r.get('psi'), 5, 1)} {fmt(r.get('runq'), 2)} {fmt(r.get('invol_s'), 6)} "
                     f"{fmt(r.get('thr_frac'), 4, 2)} {fmt(r.get('gen_s'), 6)} {fmt(r.get('running'), 4)} "
                     f"{fmt(r.get('waiting'), 4)} {fmt(r.get('kv'), 4, 2)} {fmt(r.get('itl_p99') or r.get('tpot_p99'), 5, 3)} "
                     f"{fmt(r.get('ttft_p99'), 5, 2)} {fmt(r.get('accept'), 4, 2)} {fmt(r.get('preempt'), 3)} "
                     f"{fmt(r.get('launch_slow_frac'), 5, 4)}")
            if r["foreign"]:
                line += f" foreign={r['foreign']}"
            print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
