"""`toolwire-inspect doctor`: whether an agent started from this shell would reach the forwarder that
is running (the TUI's, `record`'s), setting by setting, each wrong one with the fix. What a run
missed is `run`'s own doctor (inspector/wiring.py, `diagnose`)."""

from __future__ import annotations

import argparse
import os

from ..textsafe import shown
from .common import CommandError, open_store

_MARK = {"ok": "ok   ", "fix": "fix  ", "unset": "unset"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor", help="say whether an agent started from this shell would reach the running forwarder",
        description="Find the forwarders running on the store (the TUI's, record's, run's) and check this shell's "
                    "environment against them: each SDK's base URL variable, HTTPS_PROXY and the CA trust "
                    "variables, each wrong one with the fix. Exits 1 when an agent started here would miss a "
                    "running forwarder (or none runs), 0 otherwise.")
    parser.add_argument("--store", help="the flow store (default: the user's, or $TOOLWIRE_STORE)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..proxy.ca import CERT_FILE, default_dir, trust_settings
    from ..wiring import Running, check_environment

    try:
        store = open_store(args.store, create=False, read_only=True)
    except CommandError:
        running = []  # no store yet: nothing has ever recorded here, so nothing runs
    else:
        try:
            running = [Running(*row) for row in store.live_sessions()]
        finally:
            store.close()
    for each in running:
        print(shown(f"forwarder: session {each.session} at {each.base_url} ({each.mode} to {each.upstream})"))
    lines = check_environment(os.environ, running, trust_settings(), default_dir() / CERT_FILE)
    for status, line in lines:
        # The environment's values are the user's, but they reach the terminal like anything else: sanitised.
        print(f"{_MARK[status]} {shown(line)}")
    return 1 if any(status == "fix" for status, _ in lines) else 0
