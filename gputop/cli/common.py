"""What several subcommands do alike: the detector's settings, the session over the
chosen sources, a demo's lead-in, the terminal made ready to draw, and stopping on
signals (headless: ``stop_on_signals``; an app: ``_exit_on_signals``)."""

from __future__ import annotations

import os

from gputop import exitguard
from gputop.cli.options import UsageError
from gputop.model.detect import DetectConfig


def _detect_config(args) -> DetectConfig:
    return DetectConfig(busy_util_pct=args.busy_util_pct, collapse_ratio=args.collapse_ratio,
                        hold_s=args.hold_s, clear_ratio=min(0.95, args.collapse_ratio + 0.1),
                        latency_factor=args.latency_factor)


def _setup(args):
    """(session over the chosen sources, pin applied to recorded/simulated frames); every
    setup problem is one line for the user."""
    from gputop.feed import compose
    from gputop.session import Session
    from gputop.sources.registry import SetupError, SourceOptions, pin_setup

    options = SourceOptions.from_args(args)
    try:
        pin_state, pin = pin_setup(options)
        feed, label = compose(options, pin_state)
    except SetupError as exc:
        raise UsageError(str(exc)) from None
    return Session(label, feed, detect_config=_detect_config(args), pin_state=pin_state), pin


def _demo_lead_in(args, extra_frames: int = 0) -> None:
    """A demo starts into its story: its healthy lead-in (what sets the baseline) is made at
    once, before "now", so the first screen, snapshot or scrape already shows the scenario's
    episode; ``extra_frames`` more are made at once after it (a snapshot's samples)."""
    if args.demo is not None:
        from gputop.demo import lead_frames

        args.demo_lead_frames = lead_frames(args.delay) + extra_frames


def _prepare_terminal(args) -> None:
    """What every command that draws does first: colours as asked, Textual's partial
    repaint patched (checked against this Textual; tui/partial_paint.py)."""
    from gputop.tui import partial_paint

    if args.no_color:
        os.environ["NO_COLOR"] = "1"
    partial_paint.install()


def stop_on_signals(stop) -> list[int]:
    """SIGTERM, SIGHUP and SIGINT call ``stop()`` on a thread of their own; returns the
    list the signals received are added to.  A handler runs on the main thread between
    two bytecodes: if that thread is inside ``Event.wait`` holding the Event's lock,
    calling ``Event.set()`` from the handler waits for that lock forever (seen: a SIGTERM
    to ``gputop serve --record`` that never exited), so the handler only starts a thread."""
    import signal
    import threading

    received: list[int] = []

    def handler(signum, _frame) -> None:
        received.append(signum)
        threading.Thread(target=stop, name="gputop-stop", daemon=True).start()

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, handler)
    return received


def _exit_on_signals(app) -> None:
    """SIGTERM and SIGHUP (an SSH connection dropping) end the app the normal way, so
    probes are detached and the recording closed (Python's default would just die); if
    that way hangs, the exit guard ends the process anyway."""
    import signal

    def stop(signum, _frame) -> None:
        exitguard.arm(0, app.release)
        app.exit()

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
