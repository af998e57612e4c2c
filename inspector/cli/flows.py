"""`toolwire-inspect flows`: list the stored flows of every session."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict

from ..filters import FilterError
from ..textsafe import json_text, shown
from .common import add_store_argument, complain, open_store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("flows", help="list stored flows (id, session, time, path, status, violations)")
    add_store_argument(parser)
    parser.add_argument("--json", action="store_true", help="one JSON array of flow rows")
    parser.add_argument("--filter", metavar="EXPR", default="",
                        help="only flows matching a filter expression, as in the TUI: ~v RULE|error|warning, ~dialect D, "
                             "~model M, ~tool T, mitmproxy's ~d DOMAIN ~m METHOD ~c CODE ~u ~h ~b ~t ~e ~q ~s, "
                             "#N, free text; & | ! ( ) (docs/filters.md)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args.store, read_only=True)
    try:
        rows = store.rows(text=args.filter)
    except FilterError as exc:
        complain(f"--filter: {exc}")
        return 2
    finally:
        store.close()
    if args.json:
        print(json_text(json.dumps([asdict(row) for row in rows], indent=2)))
        return 0
    print(f"{'ID':>5} {'SES':>4} {'TIME':8} {'METHOD':6} {'STATUS':>6} {'STATE':8} {'LATENCY':>9} {'ERR':>3} {'WARN':>4}  PATH")
    for row in rows:
        clock = time.strftime("%H:%M:%S", time.localtime(row.started_at))
        latency = "" if row.latency_ms is None else f"{row.latency_ms:.1f}ms"
        status = "" if row.status is None else str(row.status)
        fixed = ", fixed" if row.replay_fixed else ""
        extra = f"  (replay of #{row.replay_of}{fixed})" if row.replay_of is not None else ""
        print(f"{row.id:>5} {row.session_id:>4} {clock:8} {shown(row.method):6} {status:>6} {shown(row.state):8} "
              f"{latency:>9} {row.errors:>3} {row.warnings:>4}  {shown(row.path)}{extra}")
    return 0
