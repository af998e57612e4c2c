"""`toolwire-inspect open FILE...`: fixtures, HAR files (ours, mitmproxy's, browsers' devtools, HTTP
Toolkit's), vcrpy cassettes and OTLP/JSON traces as a read-only session in the UI, analysed like
recorded flows; or a store, read-only, as recorded. `--flow N` opens on flow #N's view: the deep
link an exported span carries back to the bytes (`toolwire.flow.command`).

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
from typing import TYPE_CHECKING

from .common import CommandError

if TYPE_CHECKING:
    from ..store import Store
    from ..tui.app import InspectorApp

# What every SQLite database file starts with: a store is opened as it is, not read as a recording.
_SQLITE_HEADER = b"SQLite format 3\x00"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("open", help="browse fixtures, HAR files, vcrpy cassettes, OTLP traces or a store "
                                                "in the UI (read-only)")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="fixture (.json), HAR (.har), vcrpy cassette (.yaml), OTLP/JSON trace, or a store "
                             "(.sqlite3, opened alone)")
    parser.add_argument("--flow", type=_flow_number, metavar="N",
                        help="open on flow #N's view (its number in the list; a store's flows keep theirs)")
    parser.set_defaults(handler=run)


def _flow_number(text: str) -> int:
    try:
        number = int(text.removeprefix("#"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a flow number: {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a flow number: {text!r}")
    return number


def _is_store(path: str | Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:
        return False  # the recording readers say why it cannot be read


def opened_store(files: list[str | Path], folder: Path) -> Store:
    """The files' turns in a store under `folder`, reopened read-only (a CommandError if a file
    cannot be read)."""
    from ..formats.base import LoadError
    from ..formats.registry import into_store
    from ..store import Store, StoreError

    stores = [str(file) for file in files if _is_store(file)]
    if stores and len(files) > 1:
        raise CommandError(f"{stores[0]} is a store: it is opened alone, not beside other files")
    path = folder / "opened.sqlite3"
    try:
        if stores:
            return Store(stores[0], read_only=True)
        with Store(path) as store:
            into_store(files, store)
        return Store(path, read_only=True)
    except (LoadError, StoreError) as exc:
        raise CommandError(str(exc)) from exc


def opened_app(args: argparse.Namespace, folder: Path) -> InspectorApp:
    """The UI on `open`'s files (their store under `folder`), on flow --flow's view when asked: a
    CommandError, before any UI, for a file that cannot be read or a flow it does not hold."""
    from ..tui.app import InspectorApp

    store = opened_store(args.files, folder)
    if args.flow is not None and store.get(args.flow) is None:
        ids = [row.id for row in store.rows()]
        store.close()
        held = f"its flows are #{min(ids)} to #{max(ids)}" if ids else "it holds no flows"
        raise CommandError(f"no flow #{args.flow} in {', '.join(map(str, args.files))}: {held}")
    return InspectorApp(store=store, forwarder=None, flow=args.flow)


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="toolwire-open-") as folder:
        app = opened_app(args, Path(folder))
        # By default SIGHUP and SIGTERM end the process on the spot, the folder left behind.
        previous = {sig: signal.signal(sig, partial(_stop, app)) for sig in (signal.SIGHUP, signal.SIGTERM)}
        try:
            app.run()
            return app.return_code or 0
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            app.store.close()


def _stop(app, signum: int, frame) -> None:
    """SIGHUP or SIGTERM: the UI takes itself down as if quit (the exit status says which signal)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # before the UI runs or after it: only the folder to remove, on the way out
        raise SystemExit(128 + signum) from None
    loop.call_soon_threadsafe(partial(app.exit, return_code=128 + signum))
