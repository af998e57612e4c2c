"""The default command: the forwarder and the TUI in one process (`toolwire-inspect --upstream URL`).

Without `--upstream` it serves the routes of `--route` or the config file, else the default routes
(proxy/routes.py); if the defaults cannot listen (another instance has the port), the TUI browses
the flows already in the store."""

from __future__ import annotations

import argparse

from .common import (add_access_arguments, add_mode_arguments, add_route_arguments, add_store_argument, open_store,
                     port, start_forwarder)

DEFAULT_PORT = 8787


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", metavar="URL",
                        help="forward every request to this base URL (e.g. https://api.openai.com); "
                             "without it and without routes, the default routes")
    parser.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow a --host other than loopback (the forwarder relays your API keys); "
                             "clients then need the access token shown in the header")
    add_access_arguments(parser)
    add_store_argument(parser)
    add_mode_arguments(parser)
    add_route_arguments(parser)


def run(args: argparse.Namespace) -> int:
    # Textual and the forwarder load only when the TUI actually starts, not for `--help`.
    from ..tui.app import InspectorApp
    from ..tui.bridge import EventBridge

    store = open_store(args.store)
    bridge = EventBridge()
    forwarder = None
    try:
        forwarder = start_forwarder(args, store, bridge)
        app = InspectorApp(store=store, forwarder=forwarder, bridge=bridge)
        app.run()
        return app.return_code or 0
    finally:
        if forwarder is not None:
            forwarder.stop()
        store.close()
