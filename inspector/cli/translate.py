"""`toolwire-inspect translate --from D --to D [--kind request|response] [--json] FILE | -`:
the translated JSON on stdout, the loss report on stderr."""

from __future__ import annotations

import argparse
import sys

import orjson

from ..wire import jsonsafe
from ..wire.dialect import DIALECT_NAMES
from ..textsafe import json_text, shown
from .common import complain


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "translate", help="translate a request or response between dialects and report what changed or was lost")
    parser.add_argument("--from", dest="source", required=True, choices=DIALECT_NAMES, metavar="DIALECT",
                        help=f"dialect of the input ({', '.join(DIALECT_NAMES)})")
    parser.add_argument("--to", dest="target", required=True, choices=DIALECT_NAMES, metavar="DIALECT",
                        help="dialect to translate into")
    parser.add_argument("--kind", choices=("request", "response"), default="request",
                        help="whether the input is a request body or a response body (default: request)")
    parser.add_argument("--json", action="store_true", help="write the loss report to stderr as a JSON array")
    parser.add_argument("file", metavar="FILE", help="the JSON document, or - for stdin")
    parser.set_defaults(handler=run)


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    with open(name, "rb") as handle:
        return handle.read()


def run(args: argparse.Namespace) -> int:
    from ..wire.translate import TranslationError, UnsupportedPair, output_errors, translate_document

    try:
        payload = jsonsafe.loads(_read(args.file))
    except OSError as exc:
        complain(f"cannot read {args.file}: {exc.strerror}")
        return 2
    except orjson.JSONDecodeError as exc:
        complain(f"{args.file} is not valid JSON: {exc}")
        return 2
    except jsonsafe.Unfaithful as exc:
        complain(f"{args.file} cannot be translated faithfully: {exc}")
        return 2
    try:
        translated, losses = translate_document(payload, args.source, args.target, args.kind)
        data = jsonsafe.dumps(translated, option=orjson.OPT_INDENT_2) + b"\n"
    except jsonsafe.Unfaithful as exc:
        complain(f"{args.file} cannot be translated faithfully: {exc}")
        return 2
    except UnsupportedPair as exc:
        complain(str(exc))
        return 2
    except TranslationError as exc:
        if args.json:
            sys.stderr.write(json_text(orjson.dumps({"error": exc.message, "pointer": exc.pointer}).decode()) + "\n")
        else:
            complain(f"cannot translate {args.file}: {exc}")
        return 1
    # The output is judged by its own dialect's checker: one the provider would refuse is written
    # (to show what could be made of the input) and the exit status says it is not a payload.
    invalid = output_errors(translated, args.target, args.kind, args.source)
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    dialect = args.target if args.kind == "request" else args.source
    if args.json:
        report = [loss.to_dict() for loss in losses] + [
            {"source": None, "target": v.pointer, "kind": "invalid", "why": v.message, "rule": v.rule} for v in invalid]
        sys.stderr.write(json_text(orjson.dumps(report).decode()) + "\n")
    else:
        for loss in losses:
            print(shown(f"{args.file}:{loss}"), file=sys.stderr)
        print(f"{len(losses)} change(s) reported", file=sys.stderr)
        for v in invalid:
            print(shown(f"{args.file}: the translation is not a valid {dialect} {args.kind}: error {v.rule} "
                        f"{v.pointer or '/'}: {v.message}"), file=sys.stderr)
    return 1 if invalid else 0
