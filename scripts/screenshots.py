#!/usr/bin/env python3
"""Regenerate screenshots/*.svg from the deterministic simulator, and PNG renders of the
storm (rsvg-convert, Debian's librsvg2-bin) for the README.

Usage: python scripts/screenshots.py   (run after any change to what the screen shows)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["TZ"] = "UTC"
time.tzset()

from gputop.demo import demo_frames  # noqa: E402
from gputop.sources.sim import SCENARIOS  # noqa: E402
from gputop.session import Session  # noqa: E402
from gputop.tui.app import GputopApp  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "screenshots"
SECONDS = 40  # every scenario shows its phenomenon within 10 s; 40 s fills part of the plots


def demo_app(scenario: str, seconds: int = SECONDS, gpus: int | None = None,
             theme: str = "dark", color: bool = True) -> GputopApp:
    from gputop.tui.view_settings import ViewSettings

    frames = demo_frames(scenario, seconds, **({"gpus": gpus} if gpus else {}))
    if not color:
        os.environ["NO_COLOR"] = "1"  # read when the app is made
    try:
        return GputopApp(Session(f"demo:{scenario}", frames=frames),
                         view=ViewSettings(theme=theme))
    finally:
        os.environ.pop("NO_COLOR", None)


def png(svg: Path) -> Path:
    """``svg`` rendered to a PNG beside it (what the README shows: SVG text renders in the
    viewer's fonts, a PNG as it was drawn)."""
    if shutil.which("rsvg-convert") is None:
        raise SystemExit("scripts/screenshots.py: rsvg-convert is missing "
                         "(apt-get install librsvg2-bin)")
    out = svg.with_suffix(".png")
    # Textual's SVG spaces text with non-breaking spaces, which librsvg trims from the start
    # of a <text> unless told to preserve them (a right-aligned number lost its indent)
    text = svg.read_text().replace("<svg class=", '<svg xml:space="preserve" class=', 1)
    subprocess.run(["rsvg-convert", "--format", "png", "--output", str(out)],
                   input=text.encode(), check=True)
    return out


async def shoot(app: GputopApp, size: tuple[int, int], path: Path, keys: tuple = ()) -> None:
    async with app.run_test(size=size) as pilot:
        await pilot.press(*keys)
        await pilot.pause()
        svg = app.export_screenshot(title=f"gputop {path.stem}")
    path.write_text(svg)


async def shoot_replay(path: Path) -> None:
    """Replay of a launch-jitter recording, stepped to 25 s in."""
    from gputop.record.store import Recorder, Recording
    from gputop.tui.replay import ReplayApp

    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "launch-jitter.gtrec"
        recorder = Recorder(file, "demo:launch-jitter")
        for frame in demo_frames("launch-jitter", 90):
            recorder.append(frame)
        recorder.close()
        app = ReplayApp(Recording(file))
        async with app.run_test(size=(160, 45)) as pilot:
            app.seek(25)
            await pilot.pause()
            svg = app.export_screenshot(title="gputop replay")
    path.write_text(svg)


async def shoot_recording(file: Path, wall_s: float, size: tuple[int, int], path: Path,
                          keys: tuple = ()) -> None:
    """A real recording replayed at ``wall_s`` (the verdict as the live screen had it)."""
    from gputop.record.store import Recording
    from gputop.tui.replay import ReplayApp

    recording = Recording(file)
    app = ReplayApp(recording)
    async with app.run_test(size=size) as pilot:
        app.seek(recording.seq_at(wall_s))
        await pilot.press(*keys)
        await pilot.pause()
        path.write_text(app.export_screenshot(title=f"gputop {path.stem}"))
    recording.close()


async def main() -> int:
    OUT.mkdir(exist_ok=True)
    for scenario in SCENARIOS:
        await shoot(demo_app(scenario), (160, 45), OUT / f"{scenario}.svg")
    await shoot(demo_app("logprobs-storm"), (80, 24), OUT / "logprobs-storm-80x24.svg")
    await shoot_replay(OUT / "replay.svg")
    extra = [
        (demo_app("allreduce-straggler", gpus=8), (200, 50), "gpus-overview-8.svg", ("7",)),
        (demo_app("allreduce-straggler", gpus=8), (80, 24), "gpus-overview-8-80x24.svg", ("7",)),
        (demo_app("logprobs-storm"), (160, 45), "processes.svg", ("8",)),
        (demo_app("allreduce-straggler", gpus=8), (160, 45), "all-gpus.svg", ("a",)),
        *[(demo_app("logprobs-storm", theme=theme), (160, 45), f"theme-{theme}.svg", ())
          for theme in ("light", "colorblind", "high-contrast")],
    ]
    for app, size, name, keys in extra:
        await shoot(app, size, OUT / name, keys)
    rendered = [
        ({}, (200, 50), "logprobs-storm-200x50.svg"),
        ({"color": False}, (200, 50), "logprobs-storm-no-color.svg"),
        ({"color": False}, (80, 24), "logprobs-storm-80x24-no-color.svg"),
    ]
    for options, size, name in rendered:
        await shoot(demo_app("logprobs-storm", **options), size, OUT / name)
    # the verdict on a real H200: the CUDA-graph phase of tests/data/h200, 12 s into it
    import json
    h200 = Path(__file__).resolve().parent.parent / "tests" / "data" / "h200"
    graph = next(p for p in json.loads((h200 / "results.json").read_text())["phases"]
                 if p["phase"] == "graph")
    await shoot_recording(h200 / "h200.gputop", graph["start_wall_s"] + 12, (160, 45),
                          OUT / "h200-graph-phase.svg")
    # the GPU lab on a real H200 (tests/data/h200/lab): its DataLoader stall, 18 s into it
    lab = h200 / "lab"
    stall = next(p for p in json.loads((lab / "phases.json").read_text())["phases"]
                 if p["name"] == "stall")
    await shoot_recording(lab / "train.gputop", stall["start_wall_s"] + 18, (160, 45),
                          OUT / "h200-lab-stall.svg")
    pngs = [png(OUT / name) for name in ("logprobs-storm-200x50.svg", "logprobs-storm-80x24.svg",
                                         "logprobs-storm-80x24-no-color.svg",
                                         "h200-graph-phase.svg", "dataloader-stall.svg",
                                         "h200-lab-stall.svg")]
    print(f"wrote {len(SCENARIOS) + 3 + len(extra) + len(rendered)} screenshots and "
          f"{len(pngs)} PNG renders to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
