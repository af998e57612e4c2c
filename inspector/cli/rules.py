"""`toolwire-inspect rules [ID...] [--json | --markdown]`: the rule reference, from the code's catalogue."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

import orjson

from .. import report
from ..wire.rules.reference import all_rules, reference
from .common import complain


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rules", help="the rule reference: every rule, or one rule's why, fix and evidence",
        description="List the rules (id, severity, dialects, title), or print the whole entry of each ID "
                    "given: severity, dialects, why, fix and the evidence behind it.")
    parser.add_argument("ids", nargs="*", metavar="ID", help="rule ids, e.g. OC-05 (any case)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="a JSON array of the entries")
    output.add_argument("--markdown", action="store_true",
                        help="the whole reference as Markdown (what docs/rules.md holds)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        if args.ids:
            complain("--markdown writes the whole reference; give no ID")
            return 2
        sys.stdout.write(report.rules_markdown())
        return 0
    entries = all_rules()
    if args.ids:
        found = [reference(rule_id.upper()) for rule_id in args.ids]
        unknown = [rule_id for rule_id, entry in zip(args.ids, found, strict=True) if entry is None]
        if unknown:
            complain(f"no rule {', '.join(unknown)}; `toolwire-inspect rules` lists them")
            return 2
        entries = [entry for entry in found if entry is not None]
    if args.json:
        print(orjson.dumps([{**asdict(entry), "severity": entry.severity.value} for entry in entries],
                           option=orjson.OPT_INDENT_2).decode())
    elif args.ids:
        print("\n\n".join("\n".join(report.rule_lines(entry)) for entry in entries))
    else:
        print("\n".join(report.rule_table(entries)))
    return 0
