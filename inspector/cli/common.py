"""What several subcommands share: the store option, and refusing with a clear one-line error."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import Store


class CommandError(Exception):
    """A refusal: `main` prints `toolwire-inspect: <message>` on stderr and exits with `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


MAX_ID = 2**63 - 1  # SQLite's largest integer: no stored flow or session has a larger id


def stored_id(text: str) -> int | None:
    """The flow or session id `text` names, or None when no stored row can have it."""
    value = int(text) if text.isdecimal() else 0
    return value if 1 <= value <= MAX_ID else None


def flow_id(text: str) -> int:
    """argparse type of a FLOW_ID."""
    value = stored_id(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a flow id (1 to {MAX_ID})")
    return value


def port(text: str) -> int:
    """argparse type of a --port to listen on: out of range, the OS would silently take it modulo 65536."""
    value = int(text) if text.isdecimal() else -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return value


def add_store_argument(parser: argparse.ArgumentParser,
                       help: str = "SQLite flow store (default: the user data dir)") -> None:
    parser.add_argument("--store", metavar="PATH", help=help)


def add_mode_arguments(parser: argparse.ArgumentParser) -> None:
    """The forwarder's modes besides passthrough (the default, byte-exact)."""
    parser.add_argument("--translate", metavar="SRC:DST",
                        help="translate between dialects, e.g. openai-chat:openai-responses (the client keeps "
                             "speaking SRC, the upstream gets DST)")
    parser.add_argument("--repair", action="store_true",
                        help="fix on the way up what has a safe repair (genai schemas, missing tool content, "
                             "encoded arguments, invalid or duplicate tool names, unpaired calls); aliased "
                             "names come back to the client as it declared them")


def open_store(path: str | Path | None, *, create: bool = True) -> Store:
    """The store at `path` (None: the default one), or a CommandError saying why not.

    Commands that only read (`create=False`) refuse a missing file rather than leave an empty
    store, and its folders, behind."""
    from ..store import Store, StoreError, default_path

    if not create and not Path(path or default_path()).exists():
        raise CommandError(f"no flow store at {path or default_path()} (record some flows first)")
    try:
        return Store(path)
    except StoreError as exc:
        raise CommandError(str(exc)) from exc
