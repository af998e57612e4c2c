"""`toolwire-inspect replay FLOW_ID`: resend a stored request through a temporary forwarder, so the
replay is recorded like any flow and linked to the original. Credentials come from the
environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY/GOOGLE_API_KEY): a new process
has no other source, and the store never holds them. A flow sent with a key is not replayed
without one. A flow recorded in proxy mode goes back to its host through a tunnel, as it came,
when that host is on the intercept list (the known providers, plus --intercept). Exit status: 0
when the upstream answered 2xx/3xx, 1 for an error status or a failed transfer, 2 when nothing
was sent."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..textsafe import shown
from .common import add_intercept_arguments, add_store_argument, complain, flow_id, open_store

if TYPE_CHECKING:
    from ..flow import Flow


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("replay", help="replay a stored flow upstream; prints the new flow id and status")
    parser.add_argument("flow_id", type=flow_id, metavar="FLOW_ID")
    add_store_argument(parser)
    parser.add_argument("--upstream", metavar="URL", help="send it here instead of the recording session's upstream")
    # A flow recorded in proxy mode goes back through a tunnel to its host, if intercepted here too.
    add_intercept_arguments(parser)
    parser.set_defaults(handler=run)


def _intercepted(flow: Flow, intercept: list[str]) -> bool:
    """Whether `flow` came through a tunnel the replay's forwarder would intercept (or refuses to
    replay it for a reason of its own: replay() says which)."""
    from ..proxy.connect import InterceptError, InterceptList
    from ..replay import ReplayError, intercepted_host

    try:
        return intercepted_host(flow, InterceptList(intercept)) is not None
    except (InterceptError, ReplayError):
        return True  # the forwarder or the replay refuses it, with the reason


def run(args: argparse.Namespace) -> int:
    from ..flow import FlowState
    from ..proxy import Forwarder, ForwarderError
    from ..proxy.routes import session_routes
    from ..replay import ReplayError, ReplayRefused, credentials_from_env, key_variables, recorded_key, replay
    from ..wire.dialect import from_path

    store = open_store(args.store, create=False)
    try:
        flow = store.get(args.flow_id)
        if flow is None:
            complain(f"no flow #{args.flow_id} in {store.path}")
            return 2
        upstream = args.upstream
        if upstream is None:
            session = store.session(flow.session_id)
            if session is None:
                complain(f"flow #{flow.id} has no recorded session; pass --upstream URL")
                return 2
            upstream = session.upstream
            routes = session_routes(upstream)
            if routes is not None:  # a routed session: the flow's own route's upstream
                if flow.route in routes:
                    upstream = routes[flow.route]
                elif _intercepted(flow, args.intercept):
                    # It belongs to no route: its tunnel decides where it goes, not the forwarder's upstream.
                    upstream = next(iter(routes.values()))
                else:
                    complain(f"flow #{flow.id}'s route {flow.route!r} is not in its session; "
                             "pass --upstream URL")
                    return 2
        dialect = from_path(flow.path)
        credentials = credentials_from_env(dialect)
        carried = recorded_key(flow)
        if carried and not credentials and key_variables(dialect):
            # Sent without it, the replay could only come back 401 (and spend a request).
            complain(f"flow #{flow.id} was sent with a key ({carried}) and the store keeps none: "
                     f"set {' or '.join(key_variables(dialect))} to replay it")
            return 2
        try:
            forwarder = Forwarder(upstream, store=store, port=0, translate=flow.translate, intercept=args.intercept,
                                  upstream_ca=args.upstream_ca)
            forwarder.start()
        except ForwarderError as exc:
            complain(str(exc))
            return 2
        try:
            # An --upstream given here is the user's own choice of destination.
            new_id = replay(flow, via=forwarder, credentials=credentials, elsewhere=args.upstream is not None)
        except ReplayError as exc:
            complain(str(exc))
            return 2 if isinstance(exc, ReplayRefused) else 1  # 2: nothing was sent
        finally:
            forwarder.stop()
        store.flush()
        new = store.get(new_id)
        assert new is not None  # the forwarder recorded it before answering
        detail = f" {new.error}" if new.error else ""
        print(f"#{new.id} replay of #{flow.id}: {new.status if new.status is not None else '-'} {new.state.value}"
              f"{shown(detail)}")
        # An upstream that refused the replay (4xx/5xx) fails the command, as a failed transfer does.
        refused = new.status is not None and new.status >= 400
        return 0 if new.state is FlowState.COMPLETE and not refused else 1
    finally:
        store.close()
