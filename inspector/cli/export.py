"""`toolwire-inspect export FLOW_ID [--format F] [-o PATH]` and `export --session [ID] [--select EXPR]
--format F -o DIR`: stored flows as redacted, deterministic files in the formats people replay (the
formats are described in docs/fixtures.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import CommandError, add_store_argument, flow_id, open_store, stored_id

_FORMAT_HELP = ("json: our fixture (the turn and its fixed form); pytest: a regression test file; vcr: a vcrpy "
                "cassette; har: HAR 1.2 for devtools and mitmproxy")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export", help="write stored flows as fixtures, pytest tests, vcrpy cassettes or HAR",
        description="Write one flow (FLOW_ID), a whole recording (--session) or the flows a filter expression "
                    "selects (--select) as redacted, deterministic files.")
    parser.add_argument("flow_id", type=flow_id, metavar="FLOW_ID", nargs="?")
    parser.add_argument("--format", "-f", choices=("json", "pytest", "vcr", "har"), default="json", help=_FORMAT_HELP)
    parser.add_argument("--session", nargs="?", const="latest", metavar="ID",
                        help="export a whole recording (default: the latest); needs -o DIR")
    parser.add_argument("--select", metavar="EXPR",
                        help="only the flows this filter expression selects (the UI's filters: ~d chat, ~v OC-05…); "
                             "needs -o DIR")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="file to write (one flow; default: stdout), or the directory for several")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..export import files, from_store, render, write_private
    from ..filters import FilterError

    several = args.session is not None or args.select is not None
    if several == (args.flow_id is not None):
        raise CommandError("export needs either FLOW_ID or --session/--select")
    if several and not args.output:
        raise CommandError("--session and --select write several files: give -o DIR")
    store = open_store(args.store, read_only=True)
    with store:
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
            data = render(args.format, turns)
            if not args.output:
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
                return 0
            write_private(args.output, data)
            print(f"wrote {args.output}", file=sys.stderr)
            return 0
        folder = Path(args.output)
        folder.mkdir(parents=True, exist_ok=True)
        written = files(args.format, turns, recording)
        for name, data in written:
            write_private(folder / name, data)
        print(f"wrote {len(written)} file(s) for {len(turns)} flow(s) into {folder}", file=sys.stderr)
    except OSError as exc:
        raise CommandError(f"cannot write {exc.filename or args.output}: {exc.strerror}") from exc
    return 0


def _session(store, wanted: str | None) -> int | None:
    if wanted is None:
        return None
    sessions = store.sessions()
    session_id = (sessions[-1].id if sessions else None) if wanted == "latest" else stored_id(wanted)
    if session_id is None or store.session(session_id) is None:
        raise CommandError(f"no session {wanted} in {store.path}")
    return session_id
