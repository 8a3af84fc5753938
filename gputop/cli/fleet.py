"""``gputop fleet``: every GPU of many hosts (their ``gputop serve`` or a Prometheus),
worst first; Enter runs the dashboard on the chosen host (``--remote``) and q there comes
back to the table."""

from __future__ import annotations

from gputop.cli.common import _prepare_terminal
from gputop.cli.dashboard import cmd_live
from gputop.cli.options import UsageError, _delay, _prometheus, _serve
from gputop.units import plural


def add_parser(sub) -> None:
    fleet = sub.add_parser("fleet", help="every GPU of many hosts, worst first, from their "
                           "'gputop serve' endpoints or from Prometheus")
    fleet.add_argument("urls", nargs="*", metavar="URL", type=_serve,
                       help="gputop serve endpoints (http://HOST:9464 or HOST:9464)")
    fleet.add_argument("--prometheus", type=_prometheus, metavar="URL",
                       help="a Prometheus that scrapes gputop serve (http://HOST:9090)")
    fleet.add_argument("--every", type=_delay, default=5.0, metavar="SECONDS",
                       help="how often to ask (default 5)")


def cmd_fleet(args) -> int:
    """The fleet table; Enter opens a host's own dashboard and q there comes back."""
    from gputop import fleet
    from gputop.tui.fleet import FleetApp

    if args.prometheus and args.urls:
        raise UsageError("name gputop serve URLs or --prometheus URL, not both")
    try:
        for url in [args.prometheus] if args.prometheus else args.urls:
            fleet.base_url(url)  # GPUTOP_AUTH / GPUTOP_AUTH_FILE checked once, here
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.prometheus:
        def ask():
            return fleet.ask_prometheus(args.prometheus)
        source = fleet.base_url(args.prometheus)[0]  # shown: without credentials
    elif args.urls:
        def ask():
            return fleet.ask_serves(args.urls)
        source = plural(len(args.urls), "gputop serve endpoint")
    else:
        raise UsageError("name the hosts' gputop serve URLs, or --prometheus URL")
    _prepare_terminal(args)
    from gputop.tui import theme

    while True:
        app = FleetApp(ask, source, args.every)
        theme.apply(app, args.theme)
        app.run(mouse=args.mouse)
        if app.chosen_url is None:
            return app.return_code or 0
        args.remote, args.demo, args.engine = app.chosen_url, None, None
        args.start_gpu = app.chosen_gpu
        code = cmd_live(args)
        if code not in (0, None):
            return code
