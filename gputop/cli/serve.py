"""``gputop serve``: sample headless and serve /metrics, /snapshot.json, /frames and
/healthz (``gputop/serve.py``) until a signal, optionally recording too."""

from __future__ import annotations

import sys

from gputop.cli.common import _demo_lead_in, _setup, stop_on_signals
from gputop.cli.options import UsageError, _add_source_options
from gputop.config import DEFAULT_LISTEN
from gputop.units import printable


def add_parser(sub) -> None:
    serve = sub.add_parser("serve", help="serve /metrics (Prometheus), /snapshot.json, /frames "
                           "and /healthz over HTTP, headless (for systemd and containers)")
    serve.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                       help="address to listen on (default 127.0.0.1:9464; :9464 for all)")
    serve.add_argument("--web-config", metavar="FILE",
                       help="TLS and basic auth, in the Prometheus exporter web-config format")
    serve.add_argument("--export-processes", action="store_true",
                       help="add per-process GPU memory (pid, user, process name; never command "
                       "lines)")
    serve.add_argument("--export-tenants", action="store_true",
                       help="add SM / memory utilization and GPU memory per container, pod and "
                       "Slurm job on each GPU (tell a shared GPU's tenants apart)")
    serve.add_argument("--record", metavar="FILE", help="record while serving")
    _add_source_options(serve, suppress=True)


def cmd_serve(args) -> int:
    """Sample and serve until SIGTERM, SIGHUP or Ctrl-C."""
    import signal

    from gputop.record.store import RecordingError
    from gputop.serve import Server, ServeError, WebConfig

    _demo_lead_in(args)
    session, _pin = _setup(args)
    try:
        web_config = WebConfig.load(args.web_config) if args.web_config else None
        server = Server(session, args.listen, web_config, args.export_processes, args.delay,
                        export_tenants=args.export_tenants)
    except ServeError as exc:
        raise UsageError(str(exc)) from None
    if args.record:
        try:
            session.record(args.record, args.max_size)
        except RecordingError as exc:
            server.close()
            raise UsageError(str(exc)) from None
    interrupted = stop_on_signals(session.stop)
    scheme = "https" if web_config is not None and web_config.tls else "http"
    host = args.listen.rpartition(":")[0] or "0.0.0.0"
    print(f"gputop: serving {session.label} on {scheme}://{host}:{server.port}/metrics "
          "(/snapshot.json /frames /healthz)", file=sys.stderr, flush=True)
    for warning in server.warnings():
        print(f"gputop: {printable(warning)}", file=sys.stderr, flush=True)
    server.start()
    session.open()
    if args.demo is not None:  # the lead-in is history already: the first scrape shows it
        session.ticks(args.demo_lead_frames)
    try:
        session.run()
    finally:
        server.close()
        session.close()
    return 130 if signal.SIGINT in interrupted else 0
