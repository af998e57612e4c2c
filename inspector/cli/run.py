"""`toolwire-inspect run [OPTIONS] -- COMMAND ARGS...`: start a forwarder, run the agent with every
setting that sends its traffic there (inspector/wiring.py), and when it ends say what bypassed or
failed the forwarder. The exit status is the command's."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

from ..wiring import Watch
from ..textsafe import shown
from .common import CommandError, complain, open_store
from .otlp import live_export
from .record import add_forwarder_arguments, flow_printer, start_forwarder

if TYPE_CHECKING:
    from ..proxy import Forwarder
    from ..proxy.routes import Router
    from ..store import Store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="run an agent with every setting that sends its traffic through a forwarder, then say "
                    "what bypassed it",
        description="Start a forwarder (the default routes, --upstream or --route, as record), run COMMAND with "
                    "every SDK's base URL variable, HTTPS_PROXY and the local CA in each runtime's trust variable, "
                    "print each flow on stderr (stdout stays COMMAND's), and when COMMAND ends say what missed the forwarder (no "
                    "request, a CA its client did not trust, a host tunnelled unrecorded), each with the fix. "
                    "Exits with COMMAND's status.")
    add_forwarder_arguments(parser)
    parser.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS",
                        help="the agent to run, after --")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import certifi

    from ..console import Console
    from ..proxy.ca import CAError, LocalCA, trust_settings
    from ..wiring import agent_environment, diagnose

    command = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not command:
        raise CommandError("run needs the agent's command after --: toolwire-inspect run -- python agent.py")
    try:
        ca = LocalCA()
        with open(certifi.where(), "rb") as roots:
            ca.write_bundle(roots.read())
    except (CAError, OSError) as exc:
        raise CommandError(f"cannot prepare the proxy CA: {exc}") from exc
    console = Console(sys.stderr)  # stdout is the agent's own
    live = None
    store = open_store(args.store, writer_process=True)
    try:
        live = live_export(args, store)
        forwarder = start_forwarder(args, store, flow_printer(console, live))
        forwarders = getattr(forwarder, "all", [forwarder])
        env = agent_environment(forwarders, forwarder.base_url, trust_settings(ca.directory), ca.cert_path)
        complain(f"session {store.session_id}, store {store.path}; running {' '.join(command)} with "
                 + " ".join(f"{name}={value}" for name, value in env.items() if name.isupper()), flush=True)
        before = _watch(forwarder, store)
        try:
            # The agent's own ^C reaches it through the terminal; this process waits for it to end.
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                status = subprocess.call(command, env={**os.environ, **env})
            finally:
                signal.signal(signal.SIGINT, previous)
        except OSError as exc:
            raise CommandError(f"cannot run {command[0]}: {exc.strerror}") from exc
        finally:
            store.flush()
            after = _watch(forwarder, store)
            forwarder.stop()
        for line in diagnose(before, after, env):
            # The reasons quote what clients sent (a CONNECT's host): shown safe, as every line here.
            print(f"toolwire-inspect doctor: {shown(line)}", file=sys.stderr)
        return status if status >= 0 else 128 - status
    finally:
        if live is not None:
            live.close_after(store)
            complain(live.summary())
        store.close()
        console.close()


def _watch(forwarder: Forwarder | Router, store: Store) -> Watch:
    """The forwarder's counters now; read while no request is in flight (before and after COMMAND)."""
    connect = forwarder.connect
    return Watch(flows=store.count(text=f"~S {store.session_id}"), refusals=forwarder.access.kinds.copy(),
                 reasons=dict(forwarder.access.reasons),
                 tunnelled=connect.tunnelled_to.copy() if connect is not None else Watch().tunnelled)
