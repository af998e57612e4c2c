"""What several subcommands share: the store option, and refusing with a clear one-line error."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import Store


class CommandError(Exception):
    """A refusal: `main` prints `toolwire-inspect: <message>` on stderr and exits with `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def add_store_argument(parser: argparse.ArgumentParser,
                       help: str = "SQLite flow store (default: the user data dir)") -> None:
    parser.add_argument("--store", metavar="PATH", help=help)


def open_store(path: object) -> Store:
    """The store at `path` (None: the default one), or a CommandError saying why not."""
    from ..store import Store, StoreError

    try:
        return Store(path)  # type: ignore[arg-type]
    except StoreError as exc:
        raise CommandError(str(exc)) from exc
