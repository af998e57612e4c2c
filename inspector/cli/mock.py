"""`toolwire-inspect mock`: a fake upstream. With recordings (fixtures, HAR files, vcrpy cassettes) it
answers each request with the recorded response of the turn it matches (method, path, query without
secrets, and body), at the recorded pace; without, it answers
every dialect with a short scripted reply (streamed when the request asks for a stream)."""

from __future__ import annotations

import argparse

from ..textsafe import shown
from .common import add_access_arguments, complain, port, refusal_reporter


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("mock", help="serve exported fixtures (or scripted replies) as a fake upstream")
    parser.add_argument("fixtures", nargs="*", metavar="FILE",
                        help="recordings to serve: fixtures, HAR files or vcrpy cassettes (`export --format json|har|vcr`)")
    parser.add_argument("--port", type=port, default=8788, help="port to listen on (default 8788; 0 picks one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1); beyond loopback clients need the access "
                             "token in the URL it prints")
    add_access_arguments(parser)
    parser.add_argument("--no-delay", action="store_true", help="send stream chunks at once, not at their recorded times")
    parser.add_argument("--chunks", type=int, default=3, metavar="N", help="scripted replies: text pieces per stream")
    parser.add_argument("--interval-ms", type=float, default=0.0, metavar="MS",
                        help="scripted replies: pause before each stream chunk")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from functools import partial

    from ..mock import FixtureRoute, MockUpstream, default_responder
    from ..proxy.server import ListenError
    from .record import wait_for_signal

    try:
        routes = [route for path in args.fixtures for route in FixtureRoute.load(path)]
    except ValueError as exc:  # load.LoadError (it names the file), or a turn without a response
        complain(f"cannot load {exc}")
        return 2
    responder = partial(default_responder, interval=args.interval_ms / 1000.0, pieces=args.chunks)
    mock = MockUpstream(fixtures=routes, responder=responder, host=args.host, port=args.port,
                        realtime=not args.no_delay, allow_hosts=args.allow_host, allow_origins=args.allow_origin)
    try:
        mock.start()
    except ListenError as exc:
        complain(str(exc))
        return 2
    what = f"{len(routes)} recorded turn(s)" if routes else "scripted replies"
    print(shown(f"mock upstream on {mock.client_url} serving {what}"), flush=True)
    try:
        wait_for_signal(refusal_reporter(mock.access))
    finally:
        mock.stop()
    return 0
