"""gputop's live dashboard drawn headless for a few seconds, saved as SVG (run by the lab's
runner under gputop's interpreter, once per phase; the only lab module that imports gputop
besides ``report``).

    python -m lab.screen OUT.svg --seconds 6 --title TEXT -- --engine URL --pid PID -d 1
"""

from __future__ import annotations

import argparse
import asyncio
import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--title", default="gputop")
    parser.add_argument("--size", default="160x45")
    args = parser.parse_args(argv[:split])
    width, height = (int(v) for v in args.size.split("x"))
    from gputop import cli
    from gputop.tui.app import GputopApp

    options = cli.build_parser().parse_args(argv[split + 1:])
    session, pin = cli._setup(options)
    session.open()
    app = GputopApp(session, interval_s=options.delay, pin=pin)

    async def draw() -> None:
        async with app.run_test(size=(width, height)) as pilot:
            await pilot.pause(args.seconds)
            with open(args.out, "w") as f:
                f.write(app.export_screenshot(title=args.title))

    try:
        asyncio.run(draw())
    finally:
        session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
