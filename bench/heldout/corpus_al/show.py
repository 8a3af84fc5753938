"""Print a trace's key readings every N seconds:  python -m corpus_al.show NAME [SECONDS]"""
from __future__ import annotations

import sys

from . import built
from .readings import mean, rows


def fmt(v, w=6, d=0):
    return f"{'-':>{w}}" if v is None else f"{v:{w}.{d}f}"


def show(name, every=10.0):
    b = next(built(name))
    t, fr = b.truth, b.frames
    w0 = t.start_wall_s
    print(f"{t.name}  cause={t.cause}  culprit={t.culprit_gpus}  window="
          f"{None if t.window is None else (round(t.window[0] - w0), round(t.window[1] - w0))}  {t.gpus}x {t.gpu_model}")
    print(t.note)
    rs = rows(fr)
    print("   t  util  umin    sm  dram  memU clock  cmin  pow  temp  tok/s  run  wait   kv  itl50  itl99 pre  acc   psi  cpu  thr  lnch99 oth throttle")
    a = rs[0]["t"]
    while a < rs[-1]["t"]:
        sl = [r for r in rs if a <= r["t"] < a + every]
        m = lambda k: mean(sl, k)
        thr = sorted({x for r in sl for x in r["throttle"]})
        pre = sum(r["preempt"] or 0 for r in sl)
        print(f"{a - w0:4.0f} {fmt(m('util'),5)} {fmt(m('util_min'),5)} {fmt(m('sm'),5)} {fmt(m('dram'),5)} {fmt(m('memutil'),5)}"
              f" {fmt(m('clock'),5)} {fmt(m('clock_min'),5)} {fmt(m('power'),4)} {fmt(m('temp'),5)} {fmt(m('gen_rate'),6)}"
              f" {fmt(m('running'),4)} {fmt(m('waiting'),5)} {fmt(m('kv'),4,2)} {fmt(m('itl_p50') and m('itl_p50')*1000,6)}"
              f" {fmt(m('itl_p99') and m('itl_p99')*1000,6)} {pre:3.0f} {fmt(m('accept'),4,2)} {fmt(m('psi'),5)} {fmt(m('cpu_rate'),4,1)}"
              f" {fmt(m('thr_rate'),4,1)} {fmt(m('launch_p99_us'),6)} {fmt(m('other_sm'),3)} {','.join(thr)}")
        a += every


if __name__ == "__main__":
    show(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 10.0)
