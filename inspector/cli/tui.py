"""The default command: the TUI, with the forwarder in a child process (`toolwire-inspect --upstream
URL`; see inspector.child for why a process of its own).

Without `--upstream` it serves the routes of `--route` or the config file, else the default routes
(proxy/routes.py); if the defaults cannot listen (another instance has the port), the TUI browses
the flows already in the store."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .common import (CommandError, add_access_arguments, add_key_host_argument, add_limit_arguments,
                     add_mode_arguments, add_proxy_arguments, add_route_arguments, add_store_argument, complain,
                     open_store, options, port)
from .otlp import add_live_arguments

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
    add_key_host_argument(parser, "a replay (r)")
    add_store_argument(parser)
    add_mode_arguments(parser)
    add_proxy_arguments(parser)
    add_route_arguments(parser)
    add_limit_arguments(parser)
    add_live_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ..child import ChildFailed, ForwarderProcess

    served = options(args)
    child: ForwarderProcess | None = None  # None until launched, and once it failed and the UI only browses
    try:
        # Textual loads only when the TUI actually starts, not for `--help`.
        from ..tui.app import InspectorApp
        from ..tui.bridge import EventBridge
        from ..tui.keymap import user_keymap

        bridge = EventBridge()
        try:
            # The flows stored already are listed first: the child is launched once the list's first
            # frame is on the screen (two processes starting on a small machine would slow that
            # frame by half), and its readiness (or why it failed) reaches the header as an event.
            # The child writes the store; this process only reads it.
            store = open_store(args.store, read_only=True, live=True)
        except CommandError:
            # No store yet (the child makes it: there is nothing to list) or one the child must
            # migrate first: wait for it.
            store = None
        starting = store is not None
        launch: Callable[[], None] | None = None
        if store is not None:
            def launch_child() -> None:
                nonlocal child
                child = ForwarderProcess.launch(served)
                bridge.launching(child)

            launch = launch_child
        else:
            child = launched = ForwarderProcess.launch(served)
            try:
                launched.wait_ready()
            except ChildFailed as exc:
                if not exc.browse:
                    complain(str(exc))
                    return 2
                # Only the default routes, on a port another instance holds: browsing is still worth it.
                complain(f"not forwarding: {exc}")
                child = None
            if child is None:
                store = open_store(args.store)
            else:
                bridge.follow(child)
                store = open_store(args.store, read_only=True)
                store.session_id = child.session_id
        try:
            app = InspectorApp(store=store, forwarder=None if starting else child, bridge=bridge,
                               keys=user_keymap(args.config), starting=starting, launch=launch)
            app.run()
            if app.failed is not None and not app.failed.browse:
                complain(app.failed.reason)  # said in the app too; the terminal keeps it
                return 2
            return app.return_code or 0
        finally:
            store.close()
    finally:
        if child is not None:
            child.stop()
