"""`toolwire-inspect export FLOW_ID [--format F] [-o PATH]` and `export --session [ID] [--select EXPR]
--format F -o DIR`: stored flows as redacted, deterministic files in the formats people replay (the
formats are described in docs/fixtures.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..textsafe import shown
from .common import (CommandError, add_capture_content_argument, add_store_argument, chosen_session, flow_id,
                     not_written, open_store)



def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export", help="write stored flows as fixtures, pytest tests, vcrpy cassettes, HAR, OTLP or an HTML page",
        description="Write one flow (FLOW_ID), a whole recording (--session) or the flows a filter expression "
                    "selects (--select) as redacted, deterministic files.")
    parser.add_argument("flow_id", type=flow_id, metavar="FLOW_ID", nargs="?")
    from ..formats.registry import FORMATS, WRITERS

    parser.add_argument("--format", "-f", choices=WRITERS, default="json", help="; ".join(
        f"{f.name} ({f.description}" + (f"; needs the {f.extra} extra)" if f.extra else ")") for f in FORMATS
        if f.write is not None))
    parser.add_argument("--session", nargs="?", const="latest", metavar="ID",
                        help="export a whole recording (default: the latest); needs -o DIR")
    parser.add_argument("--select", metavar="EXPR",
                        help="only the flows this filter expression selects (the UI's filters: ~dialect chat, ~v OC-05…); "
                             "needs -o DIR")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="file to write (one flow; default: stdout), or the directory for several")
    add_capture_content_argument(parser)
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..files import make_dirs, taken_error, write_new
    from ..formats.base import WriteOptions
    from ..formats.registry import by_name, exported, files, render

    several = args.session is not None or args.select is not None
    if several == (args.flow_id is not None):
        raise CommandError("export needs either FLOW_ID or --session/--select")
    if several and not args.output:
        raise CommandError("--session and --select write several files: give -o DIR")
    store = open_store(args.store, read_only=True)
    with store:  # open while writing: a format that reads the store reads it then
        spans = otlp_options(args, store.path) if args.format == "otlp" else None
        if not several:
            turns = exported(args.format, store, [_flow(store, args.flow_id)])
            recording = None
            options = WriteOptions(spans, store)
        else:
            chosen, recording = _selection(store, args)
            if not by_name(args.format).reads_store:
                # A fixed replay of a flow that is exported too rides in that flow's fixture.
                ids = {row.id for row in chosen}
                chosen = [row for row in chosen if not (row.replay_fixed and row.replay_of in ids)]
            turns = exported(args.format, store, chosen)
            options = WriteOptions(spans, store, recording.replace("-", " ") + (f" · {args.select}" if args.select else ""))
        if args.format == "vcr":
            for turn in turns:
                if turn.data["response"]["status"] is None:
                    print(f"toolwire-inspect: flow #{turn.flow_id} left out: it has no response, which a cassette "
                          "cannot hold (--format har keeps it)", file=sys.stderr)
        try:
            if not several:
                return _write_one(args.output, render(args.format, turns, options))
            folder = Path(args.output)
            make_dirs(folder)
            written = files(args.format, turns, recording, options)
            # The names are the product's, not the user's: none replaces a file already there, and a
            # name taken is said before any file is written.
            taken = next((folder / name for name, _ in written if os.path.lexists(folder / name)), None)
            if taken is not None:
                raise taken_error(taken)
            for name, data in written:
                write_new(folder, name, data)
            print(shown(f"wrote {len(written)} file(s) for {len(turns)} flow(s) into {folder}"), file=sys.stderr)
        except OSError as exc:
            raise CommandError(not_written(exc, args.output, "export into a new or empty directory")) from exc
    return 0


def _write_one(output: str | None, data: bytes) -> int:
    """One flow's file: to stdout, or to the path the user named (files.write_file: never through a link)."""
    from ..files import write_file

    if not output:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    write_file(output, data)
    print(shown(f"wrote {output}"), file=sys.stderr)
    return 0


def _flow(store, flow_id: int):
    flow = store.get(flow_id)
    if flow is None:
        raise CommandError(f"no flow #{flow_id} in {store.path}")
    return flow


def _selection(store, args: argparse.Namespace) -> tuple[list, str]:
    """The rows --session and --select choose, oldest first, and the name of the recording they make
    (`session-3`, or `selection` across sessions); a CommandError when they choose none."""
    from ..filters import FilterError

    session_id = _session(store, args.session)
    try:
        rows = store.rows(text=args.select or "")
    except FilterError as exc:
        raise CommandError(f"--select {args.select!r}: {exc}") from exc
    chosen = [row for row in rows if session_id is None or row.session_id == session_id]
    if not chosen:
        raise CommandError("no flow to export" + (f" matches {args.select!r}" if args.select else "")
                           + (f" in session {session_id}" if session_id is not None else ""))
    return chosen, f"session-{session_id}" if session_id is not None else "selection"


def otlp_options(args: argparse.Namespace, store_path: Path):
    """The span options of the otlp commands; a CommandError when the otel extra is missing."""
    from ..otlp import OtelMissing, require

    try:
        require()
    except OtelMissing as exc:
        raise CommandError(str(exc)) from exc
    from ..otlp.spans import options

    return options(content=args.capture_content, openinference=args.openinference, store=str(Path(store_path).resolve()))


def _session(store, wanted: str | None) -> int | None:
    return None if wanted is None else chosen_session(store, wanted)
