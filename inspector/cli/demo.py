"""`toolwire-inspect demo`: the TUI on a built-in fake upstream with a scripted agent."""

from __future__ import annotations

import argparse
import threading
from typing import Any

from .common import add_store_argument, complain, open_store, port


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="the TUI on a built-in fake upstream and scripted agent (no API key, no network)")
    add_store_argument(parser, help="SQLite flow store (default: demo.sqlite3 in the user data dir, apart from "
                                    "real recordings)")
    parser.add_argument("--port", type=port, default=0, help="forwarder port (default: any free port)")
    parser.add_argument("--headless", action="store_true",
                        help="no TUI: run the scripted agent once, print each flow, exit")
    parser.add_argument("--pause", type=float, default=0.6, help="seconds between the agent's turns (default 0.6)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..demo import default_demo_store, demo_forwarder, demo_options, demo_upstream, run_agent

    path = args.store or default_demo_store()
    upstream = demo_upstream().start()
    stop = threading.Event()
    try:
        if args.headless:
            from ..proxy import FlowEvent
            from .record import flow_line

            def on_event(event: FlowEvent) -> None:
                if event.kind == "completed" and event.row is not None:
                    print(flow_line(event.row), flush=True)

            with open_store(path) as store, demo_forwarder(upstream.base_url, store, port=args.port,
                                                           on_event=on_event) as forwarder:
                run_agent(forwarder.client_url, pause=0.0)
                store.flush()
            return 0

        # As under `toolwire-inspect --upstream`: the forwarder in a process of its own.
        from ..child import ChildFailed, ForwarderProcess
        from ..tui.bridge import EventBridge

        try:
            child = ForwarderProcess.start(demo_options(upstream.base_url, port=args.port, store=str(path)))
        except ChildFailed as exc:
            complain(str(exc))
            return 2
        bridge = EventBridge()
        bridge.follow(child)
        agent = threading.Thread(target=run_agent, args=(child.base_url,),
                                 kwargs={"pause": args.pause, "stop": stop}, name="toolwire-demo-agent", daemon=True)
        try:
            with open_store(path, read_only=True) as store:
                store.session_id = child.session_id
                app = demo_app(store, child, bridge, upstream.base_url)
                agent.start()
                app.run()
                return app.return_code or 0
        finally:
            stop.set()
            child.stop()
    finally:
        upstream.stop()


def demo_app(store: Any, child: Any, bridge: Any, upstream_url: str) -> Any:
    """The TUI on the demo's forwarder process. Its header names the mode as the routes give it
    (passthrough at `/`, a translate and a repair route), not the unnamed route's alone."""
    from ..tui.app import InspectorApp

    return InspectorApp(store=store, forwarder=child, bridge=bridge, upstream=f"{upstream_url} (built-in demo)")
