"""`toolwire-inspect open FILE...`: fixtures, HAR files (ours, mitmproxy's, browsers' devtools, HTTP
Toolkit's) and vcrpy cassettes as a read-only session in the UI, analysed like recorded flows.

The turns are written to a store in a temporary folder (the normal store API, so the same analysis)
that the UI then opens read-only; the folder goes when the UI closes, also when the terminal is
closed under it (SIGHUP) or the process is told to stop (SIGTERM). Nothing is forwarded."""

from __future__ import annotations

import argparse
import asyncio
import signal
import tempfile
from functools import partial
from pathlib import Path

from .common import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("open", help="browse fixtures, HAR files and vcrpy cassettes in the UI (read-only)")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="fixture (.json), HAR (.har) or vcrpy cassette (.yaml)")
    parser.set_defaults(handler=run)


def opened_store(files: list[str], folder: Path):
    """The files' turns in a store under `folder`, reopened read-only (a CommandError if a file
    cannot be read)."""
    from ..formats.base import LoadError
    from ..formats.registry import into_store
    from ..store import Store, StoreError

    path = folder / "opened.sqlite3"
    try:
        with Store(path) as store:
            into_store(files, store)
        return Store(path, read_only=True)
    except (LoadError, StoreError) as exc:
        raise CommandError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    from ..tui.app import InspectorApp

    with tempfile.TemporaryDirectory(prefix="toolwire-open-") as folder:
        store = opened_store(args.files, Path(folder))
        app = InspectorApp(store=store, forwarder=None)
        # By default SIGHUP and SIGTERM end the process on the spot, the folder left behind.
        previous = {sig: signal.signal(sig, partial(_stop, app)) for sig in (signal.SIGHUP, signal.SIGTERM)}
        try:
            app.run()
            return app.return_code or 0
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            store.close()


def _stop(app, signum: int, frame) -> None:
    """SIGHUP or SIGTERM: the UI takes itself down as if quit (the exit status says which signal)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # before the UI runs or after it: only the folder to remove, on the way out
        raise SystemExit(128 + signum) from None
    loop.call_soon_threadsafe(partial(app.exit, return_code=128 + signum))
