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

_FORMAT_HELP = ("json: our fixture (the turn and its fixed form); pytest: a regression test file; vcr: a vcrpy "
                "cassette; har: HAR 1.2 for devtools and mitmproxy; otlp: OTLP/JSON trace (OpenTelemetry GenAI spans, "
                "needs the otel extra)")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export", help="write stored flows as fixtures, pytest tests, vcrpy cassettes or HAR",
        description="Write one flow (FLOW_ID), a whole recording (--session) or the flows a filter expression "
                    "selects (--select) as redacted, deterministic files.")
    parser.add_argument("flow_id", type=flow_id, metavar="FLOW_ID", nargs="?")
    parser.add_argument("--format", "-f", choices=("json", "pytest", "vcr", "har", "otlp"), default="json", help=_FORMAT_HELP)
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
    from ..export import files, from_store, render
    from ..files import make_dirs, taken_error, write_file, write_new
    from ..filters import FilterError

    several = args.session is not None or args.select is not None
    if several == (args.flow_id is not None):
        raise CommandError("export needs either FLOW_ID or --session/--select")
    if several and not args.output:
        raise CommandError("--session and --select write several files: give -o DIR")
    store = open_store(args.store, read_only=True)
    with store:
        otlp = otlp_options(args, store.path) if args.format == "otlp" else None
        if not several:
            flow = store.get(args.flow_id)
            if flow is None:
                raise CommandError(f"no flow #{args.flow_id} in {store.path}")
            turns = [from_store(store, flow)]
            recording = None
        else:
            session_id = _session(store, args.session)
            try:
                rows = store.rows(text=args.select or "")
            except FilterError as exc:
                raise CommandError(f"--select {args.select!r}: {exc}") from exc
            chosen = [row for row in rows if session_id is None or row.session_id == session_id]
            ids = {row.id for row in chosen}
            # A fixed replay of a flow that is exported too rides in that flow's fixture.
            chosen = [row for row in chosen if not (row.replay_fixed and row.replay_of in ids)]
            if not chosen:
                raise CommandError("no flow to export" + (f" matches {args.select!r}" if args.select else "")
                                   + (f" in session {session_id}" if session_id is not None else ""))
            turns = [from_store(store, flow) for flow in map(store.get, (row.id for row in chosen)) if flow is not None]
            recording = f"session-{session_id}" if session_id is not None else "selection"
    if args.format == "vcr":
        for turn in turns:
            if turn.data["response"]["status"] is None:
                print(f"toolwire-inspect: flow #{turn.flow_id} left out: it has no response, which a cassette cannot "
                      "hold (--format har keeps it)", file=sys.stderr)
    try:
        if not several:
            data = render(args.format, turns, otlp=otlp)
            if not args.output:
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
                return 0
            write_file(args.output, data)
            print(shown(f"wrote {args.output}"), file=sys.stderr)
            return 0
        folder = Path(args.output)
        make_dirs(folder)
        written = files(args.format, turns, recording, otlp=otlp)
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
