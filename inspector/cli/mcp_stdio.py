"""`toolwire-inspect mcp-stdio -- COMMAND ARGS...`: an MCP server over stdio, relayed and recorded.

An agent's MCP configuration changes `command: X, args: [A]` into `command: toolwire-inspect,
args: [mcp-stdio, --, X, A]`. Stdin and stdout pass through byte for byte, the server's stderr is
ours, and the exit status is the server's."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys

from .common import CommandError, add_store_argument, complain, open_store


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
    parser.add_argument("--new-session", action="store_true",
                        help="record in a session of its own even when a recording session is running")
    # Not `command`: that is the subcommand's own name in the parsed arguments.
    parser.add_argument("server_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..proxy.stdio import Recorder, StdioRelay, credential_values, endpoint

    command = args.server_command[1:] if args.server_command[:1] == ["--"] else args.server_command
    if not command:
        raise CommandError("mcp-stdio needs the server's command after --, e.g. "
                           "toolwire-inspect mcp-stdio -- npx -y @modelcontextprotocol/server-everything")
    name = args.name or shlex.join(command)
    store = open_store(args.store)
    try:
        session_id = None if args.new_session else store.join_live_session()
        if session_id is None:
            session_id = store.new_session(endpoint(name), "stdio")
        recorder = Recorder(store, session_id, name, secrets=credential_values(dict(os.environ)))
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
        store.close()
