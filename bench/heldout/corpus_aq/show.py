"""Print the readings a user would look at:  python -m corpus_aq.show NAME [every_s]"""
from __future__ import annotations

import sys

from . import traces
from .readings import series


def _f(v, fmt="{:.0f}"):
    return "-" if v is None else fmt.format(v)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    name = argv[1]
    every = float(argv[2]) if len(argv) > 2 else 10.0
    for truth, frames in traces(lambda n: n == name):
        print(f"{truth.name}  cause={truth.cause}  culprit={truth.culprit_gpus}  engine={truth.engine}  "
              f"{truth.gpus}x {truth.gpu_model}  tick={truth.tick_s}s")
        if truth.window:
            print(f"window: +{truth.window[0] - truth.start_wall_s:.0f} s .. +{truth.window[1] - truth.start_wall_s:.0f} s")
        print(truth.note)
        print(" t(s)  util%        sm%          dram%        clockMHz          W      C  | psi  inv/s thr  | "
              "tok/s   itl_ms ttft_s run wait kv   pre acc  | launch p99us slow%  foreign")
        nxt = 0.0
        for r in series(frames):
            t = r["t"] - truth.start_wall_s
            if t < nxt:
                continue
            nxt = t + every
            mark = "*" if truth.window and truth.window[0] <= r["t"] <= truth.window[1] else " "
            j = lambda k, fmt="{:.0f}": "/".join(_f(x, fmt) for x in r[k][:4])
            print(f"{mark}{t:5.0f} {j('util'):12s} {j('sm'):12s} {j('dram'):12s} {j('clock'):17s} "
                  f"{j('power'):6s} {j('temp'):5s}| {_f(r['psi'])} {_f(r.get('invol_s'))} "
                  f"{_f(r.get('thr_frac'), '{:.2f}')} | {_f(r.get('gen_s'))} {_f((r.get('itl') or r.get('tpot') or 0) * 1e3 or None, '{:.1f}')} "
                  f"{_f(r.get('ttft'), '{:.2f}')} {_f(r.get('running'))} {_f(r.get('waiting'))} "
                  f"{_f(r.get('kv'), '{:.2f}')} {_f(r.get('preempt'))} {_f(r.get('accept'), '{:.2f}')} | "
                  f"{_f(r.get('launch_p99_us'))} {_f((r.get('launch_slow_frac') or 0) * 100 if 'launch_slow_frac' in r else None, '{:.2f}')} "
                  f"{r['foreign'] or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
