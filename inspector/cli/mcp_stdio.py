"""`toolwire-inspect mcp-stdio -- COMMAND ARGS...`: an MCP server over stdio, relayed and recorded.

An agent's MCP configuration changes `command: X, args: [A]` into `command: toolwire-inspect,
args: [mcp-stdio, --, X, A]`. Stdin and stdout pass through byte for byte, the server's stderr is
ours, and the exit status is the server's."""

from __future__ import annotations

import argparse
import os
import shlex
import signal

from .common import CommandError, add_store_argument, complain, open_store
from .otlp import add_live_arguments, live_export


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcp-stdio", help="run an MCP server over stdio, relaying and recording its JSON-RPC",
        description="Run COMMAND as an MCP server over stdio: relay stdin and stdout unchanged and record "
                    "each request with its response (and every notification) as flows. The flows join the "
                    "session of a running toolwire-inspect (TUI or record) on the same store, so it shows "
                    "them live and its session rules see every server; without one they get a session of "
                    "their own.")
    parser.add_argument("--name", help="the server's name in the flows (default: the command line)")
    add_store_argument(parser)
    add_live_arguments(parser)
    parser.add_argument("--new-session", action="store_true",
                        help="record in a session of its own even when a recording session is running")
    # Not `command`: that is the subcommand's own name in the parsed arguments.
    parser.add_argument("server_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..proxy.stdio import Recorder, StdioRelay, endpoint, server_secrets

    command = args.server_command[1:] if args.server_command[:1] == ["--"] else args.server_command
    if not command:
        raise CommandError("mcp-stdio needs the server's command after --, e.g. "
                           "toolwire-inspect mcp-stdio -- npx -y @modelcontextprotocol/server-everything")
    # The name is stored and listed: the command line's credentials never are.
    shown, secrets = server_secrets(command, os.environ)
    name = args.name or shlex.join(shown)
    store = open_store(args.store, writer_process=True)
    live = None
    try:
        live = live_export(args, store)
        session_id = None if args.new_session else store.join_live_session()
        if session_id is None:
            session_id = store.new_session(endpoint(name), "stdio")
        recorder = Recorder(store, session_id, name, secrets=secrets,
                            on_saved=None if live is None else live.flow_saved)
        relay = StdioRelay(command, recorder)

        def stop(signum: int, frame: object) -> None:
            # The agent is shutting us down: the server goes first, then the relay ends as it would.
            if relay.process is not None and relay.process.poll() is None:
                relay.process.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        try:
            return relay.run()
        except OSError as exc:
            complain(f"cannot start {command[0]!r}: {exc.strerror}")
            return 127 if isinstance(exc, FileNotFoundError) else 126
    finally:
        if live is not None:
            live.close_after(store)
            complain(f"{live.summary()}")
        store.close()
