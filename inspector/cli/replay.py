"""`toolwire-inspect replay FLOW_ID`: resend a stored request through a temporary forwarder, so the
replay is recorded like any flow and linked to the original.

Where it goes is decided here, never read from the store (which can be edited or imported): the
upstream `--upstream` names, else the upstream the flow's route has today (`--route`, `--config`,
the trusted config file or the defaults, as `record` would serve them); a flow recorded in proxy
mode goes back to its host through a tunnel, as it came, when that host is on the intercept list
(the known providers, plus --intercept). Credentials come from the environment (OPENAI_API_KEY,
ANTHROPIC_API_KEY, GEMINI_API_KEY/GOOGLE_API_KEY), and only to the provider host each belongs to
or a host named with --key-host: a new process has no other source, and the store never holds
them. A flow sent with a key is not replayed without one. Exit status: 0 when the upstream
answered 2xx/3xx, 1 for an error status or a failed transfer, 2 when nothing was sent."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..textsafe import shown
from .common import add_intercept_arguments, add_key_host_argument, add_store_argument, complain, flow_id, open_store

if TYPE_CHECKING:
    from ..flow import Flow


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("replay", help="replay a stored flow upstream; prints the new flow id and status")
    parser.add_argument("flow_id", type=flow_id, metavar="FLOW_ID")
    add_store_argument(parser)
    parser.add_argument("--upstream", metavar="URL",
                        help="send it here (default: the upstream of the flow's route, from --route, --config, "
                             "the trusted config file or the default routes)")
    parser.add_argument("--route", action="append", default=[], metavar="NAME=URL",
                        help="where the flows of route NAME go now; repeatable")
    parser.add_argument("--config", metavar="PATH", help="a TOML file of [routes.NAME] tables, as `record` takes")
    add_key_host_argument(parser, "the replay")
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
    from ..proxy.options import Options, ProxyOptions
    from ..proxy.routes import shown_as_sent
    from ..replay import ReplayError, ReplayRefused, replay

    store = open_store(args.store, create=False)
    try:
        flow = store.get(args.flow_id)
        if flow is None:
            complain(f"no flow #{args.flow_id} in {store.path}")
            return 2
        try:
            upstream = shown_as_sent(args.upstream, "--upstream") if args.upstream else _upstream_now(flow, args)
        except ForwarderError as exc:
            complain(f"{exc}")
            return 2
        try:
            forwarder = Forwarder(Options(upstream, port=0, translate=flow.translate, proxy=ProxyOptions(
                intercept=args.intercept, upstream_ca=args.upstream_ca)), store=store)
            forwarder.start()
        except ForwarderError as exc:
            complain(str(exc))
            return 2
        try:
            # An --upstream given here is the user's own choice of destination.
            new_id = replay(flow, via=forwarder, elsewhere=args.upstream is not None, key_hosts=args.key_host)
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


def _upstream_now(flow: Flow, args: argparse.Namespace) -> str:
    """Where `flow` goes today without --upstream: its route's upstream in the routes `record`
    would serve now. A ForwarderError (a RouteError) when there is none."""
    from ..proxy.routes import RouteError, resolve

    table = resolve(routes=args.route, config=args.config)
    for notice in table.ignored:
        complain(notice)
    routes = {route.name: route.upstream for route in table.routes}
    if flow.route in routes:
        return routes[flow.route]
    if _intercepted(flow, args.intercept):
        return next(iter(routes.values()))  # its tunnel decides where it goes, not the forwarder's upstream
    rule = "a replay goes where the command line or the config says, never where a store says"
    if flow.route:
        raise RouteError(f"flow #{flow.id} came through route {flow.route!r}, which the routes here do not have "
                         f"({', '.join(routes)}; {table.source}): pass --route {flow.route}=URL or --upstream URL "
                         f"({rule})")
    raise RouteError(f"flow #{flow.id} came through --upstream: pass --upstream URL to say where it goes now ({rule})")
