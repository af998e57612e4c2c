"""`toolwire-inspect export FLOW_ID`: a stored flow as a fixture file (format in the README)."""

from __future__ import annotations

import argparse
import sys

from .common import add_store_argument, flow_id, open_store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("export", help="write a stored flow as a redacted, deterministic JSON fixture")
    parser.add_argument("flow_id", type=flow_id, metavar="FLOW_ID")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    add_store_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis import analyse
    from ..export import dumps, fixture, write_private
    store = open_store(args.store, read_only=True)
    try:
        flow = store.get(args.flow_id)
    finally:
        store.close()
    if flow is None:
        print(f"toolwire-inspect: no flow #{args.flow_id} in {store.path}", file=sys.stderr)
        return 2
    data = dumps(fixture(flow, analyse(flow)))
    if args.output:
        try:
            write_private(args.output, data)
        except OSError as exc:
            print(f"toolwire-inspect: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
            return 2
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0
