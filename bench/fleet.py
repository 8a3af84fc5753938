"""`gputop fleet --prometheus` with 1,000 GPUs (125 hosts x 8): what one refresh costs to
parse and rank, and what the table costs to draw and to move through.

The answers are a real one scaled up: tests/data/prometheus/fleet-answers.json is what a
real Prometheus (2.42) answered to gputop's fleet queries (gputop/fleet.py QUERIES) over
three `gputop serve --demo` hosts; each host becomes many, each GPU eight, label sets and
values kept, so the JSON has the size and shape of a 1,000-GPU answer.  Printed beside a
reference in the same run: json.loads of the same bytes (parse), and the same table with
8 GPUs (draw).

    python bench/fleet.py [--hosts 125]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from gputop import fleet  # noqa: E402
from gputop.tui.fleet import FleetApp, FleetTable  # noqa: E402

RECORDED = ROOT / "tests" / "data" / "prometheus" / "fleet-answers.json"


def scaled(answers: dict, hosts: int) -> dict:
    """Each recorded instance's series copied to ``hosts`` instances (round robin, so the
    storm host stays one among many) and each GPU to 8."""
    instances = sorted({item["metric"]["instance"] for a in answers.values()
                        for item in a["data"]["result"] if "instance" in item["metric"]})
    out = {}
    for name, answer in answers.items():
        result = []
        for h in range(hosts):
            template = instances[0 if h != hosts // 2 else instances.index(_storm(answers))] \
                if len(instances) > 1 else instances[0]
            for item in answer["data"]["result"]:
                if item["metric"].get("instance") != template:
                    continue
                gpus = range(8) if "gpu" in item["metric"] else [None]
                for g in gpus:
                    clone = copy.deepcopy(item)
                    clone["metric"]["instance"] = f"gpu-node-{h:03}.example:9464"
                    if g is not None:
                        clone["metric"]["gpu"] = str(g)
                    result.append(clone)
        out[name] = {**answer, "data": {**answer["data"], "result": result}}
    return out


def _storm(answers: dict) -> str:
    return next(item["metric"]["instance"] for item in answers["suspect"]["data"]["result"]
                if item["metric"].get("cause") == "oversized_request")


def parse_cost(blobs: dict[str, bytes], repeat: int = 5) -> tuple[float, float, list]:
    ours, ref = [], []
    rows = []
    for _ in range(repeat):
        started = time.perf_counter()
        for blob in blobs.values():
            json.loads(blob)
        ref.append(time.perf_counter() - started)
        started = time.perf_counter()
        rows = fleet.ranked(fleet.rows_from_prometheus(
            {name: fleet.parse_vector(json.loads(blob)) for name, blob in blobs.items()}))
        ours.append(time.perf_counter() - started)
    return statistics.median(ours), statistics.median(ref), rows


async def draw_cost(rows: list, presses: int = 300) -> tuple[float, float]:
    """(seconds from the rows' arrival to a drawn table, seconds per cursor move: the
    table's own redraw, called directly, without Pilot's per-key waiting)."""
    app = FleetApp(lambda: rows, "bench", interval_s=3600)
    async with app.run_test(size=(160, 50)) as pilot:
        table = app.query_one(FleetTable)
        started = time.perf_counter()
        while len(table.rows) != len(rows):
            await pilot.pause(0.01)
        await pilot.pause()
        first = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(presses):
            table.move(1)
        per_key = (time.perf_counter() - started) / presses
    return first, per_key


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=125)
    args = parser.parse_args()
    recorded = json.loads(RECORDED.read_text())
    big = scaled(recorded, args.hosts)
    small = scaled(recorded, 1)
    blobs = {name: json.dumps(a).encode() for name, a in big.items()}
    parse_s, json_s, rows = parse_cost(blobs)
    gpus = sum(1 for r in rows if r.gpu is not None)
    print(f"answer: {gpus} GPUs on {args.hosts} hosts, {sum(map(len, blobs.values())) / 2**20:.1f} "
          f"MiB of JSON over {len(blobs)} queries; worst first: {rows[0].host} GPU {rows[0].gpu} "
          f"({rows[0].episode}, {rows[0].suspect})")
    print(f"parse+rank: {parse_s * 1e3:.1f} ms  (json.loads alone: {json_s * 1e3:.1f} ms; "
          f"ratio {parse_s / json_s:.2f}x)")
    small_rows = fleet.ranked(fleet.rows_from_prometheus(
        {name: fleet.parse_vector(a) for name, a in small.items()}))
    first_big, key_big = asyncio.run(draw_cost(rows))
    first_small, key_small = asyncio.run(draw_cost(small_rows))
    print(f"table, {gpus} GPUs: first draw {first_big * 1e3:.0f} ms, {key_big * 1e3:.1f} ms per "
          f"cursor move")
    print(f"table, {len(small_rows)} GPUs:   first draw {first_small * 1e3:.0f} ms, "
          f"{key_small * 1e3:.2f} ms per cursor move  (ratio per move {key_big / key_small:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
