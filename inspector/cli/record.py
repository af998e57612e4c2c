"""`toolwire-inspect record`: the forwarder without the UI, one line per finished flow on stdout."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .common import add_mode_arguments, add_store_argument, open_store, port
from .tui import DEFAULT_PORT


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("record", help="run the forwarder headless and print each finished flow")
    parser.add_argument("--upstream", metavar="URL", required=True,
                        help="forward every request to this base URL (e.g. https://api.openai.com)")
    parser.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT}; 0 picks one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow a --host other than loopback (the forwarder relays your API keys)")
    add_mode_arguments(parser)
    add_store_argument(parser)
    # Defaults live in the forwarder, which `--help` should not have to import.
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="give up on an upstream silent this long (default 600)")
    parser.add_argument("--max-body", type=int, metavar="BYTES",
                        help="refuse larger request bodies with 413 (default 64 MiB)")
    parser.set_defaults(handler=run)


def flow_line(row) -> str:
    """One finished flow: `#id METHOD path status latency errors=N warnings=N [error: why]`."""
    status = "-" if row.status is None else str(row.status)
    latency = "-" if row.latency_ms is None else f"{row.latency_ms:.1f}ms"
    line = f"#{row.id} {row.method} {row.path} {status} {latency} errors={row.errors} warnings={row.warnings}"
    if row.replay_of is not None:
        line += f" replay-of=#{row.replay_of}"
    if row.error:
        line += f" {'error' if row.state == 'error' else 'note'}: {row.error}"
    return line


def wait_for_signal() -> None:
    """Block until Ctrl-C or SIGTERM."""
    done = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: done.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not done.wait(3600):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(args: argparse.Namespace) -> int:
    from ..proxy import FlowEvent, Forwarder, ForwarderError

    def on_event(event: FlowEvent) -> None:
        if event.kind == "completed" and event.row is not None:
            print(flow_line(event.row), flush=True)

    store = open_store(args.store)
    try:
        try:
            limits = {name: value for name, value in (("timeout", args.timeout), ("max_body", args.max_body))
                      if value is not None}
            forwarder = Forwarder(args.upstream, store=store, host=args.host, port=args.port, on_event=on_event,
                                  translate=args.translate, repair=args.repair, allow_remote=args.allow_remote, **limits)
            forwarder.start()
        except ForwarderError as exc:
            print(f"toolwire-inspect: {exc}", file=sys.stderr)
            return 2
        print(f"forwarding {forwarder.base_url} -> {forwarder.upstream}  (session {store.session_id}, "
              f"store {store.path})", file=sys.stderr)
        print(f"point the agent at it, e.g. OPENAI_BASE_URL={forwarder.base_url}/v1", file=sys.stderr, flush=True)
        try:
            wait_for_signal()
        finally:
            forwarder.stop()
    finally:
        store.close()
    return 0
