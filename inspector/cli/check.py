"""`toolwire-inspect check [--dialect D] [--profile P] [--kind K] [--json] [--explain] [--fix OUT] FILE... | -`
and `toolwire-inspect check --session [ID] [--store PATH] [--json]` (the session rules).

Lints request, response and stream files against the contract rules. A recording (our fixture, a HAR
file, a vcrpy cassette) is judged exchange by exchange as a recorded flow is, the rules that need the
request and the response together included. Human output: one line per
violation (`file:pointer: severity RULE message`) and a summary; `--json`: a JSON array. Exit status:
0 without error-severity violations, 1 with any (with --fix: any left after fixing), 2 when an input
cannot be read or parsed."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from ..analysis import analyse
from ..load import LoadError, NotARecording, Turn, load_bytes
from ..wire import jsonsafe
from ..wire.check import DocumentCheck, check_bytes, check_document
from ..wire.dialect import DIALECT_NAMES
from ..wire.fix import fix
from ..wire.locate import pretty
from ..wire.profiles import PROFILES
from ..wire.violations import Violation, count_by_severity
from .common import add_store_argument, open_store, stored_id


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="check request/response/stream files against the tool-calling contract rules",
        description="Check payload files against the rule catalogue. Exit 0: no errors; 1: errors; "
                    "2: an input cannot be read or parsed.")
    parser.add_argument("--dialect", choices=DIALECT_NAMES, metavar="DIALECT",
                        help=f"dialect of the inputs ({', '.join(DIALECT_NAMES)}); detected from the shape if absent")
    parser.add_argument("--profile", choices=sorted(PROFILES), metavar="PROFILE",
                        help=f"provider profile for endpoint-dependent limits ({', '.join(PROFILES)}); "
                             "default per dialect")
    parser.add_argument("--kind", choices=("request", "response", "stream"),
                        help="what the inputs are; detected from the shape if absent")
    parser.add_argument("--json", action="store_true", help="print a JSON array of violations")
    parser.add_argument("--explain", action="store_true", help="add why and hint lines under each violation")
    parser.add_argument("--fix", metavar="OUT",
                        help="write the repaired payload to OUT (a directory when several files are given; - for "
                             "stdout) and list the repairs")
    parser.add_argument("--session", nargs="?", const="latest", metavar="ID",
                        help="instead of files, run the session rules over a recorded session's MCP exchanges "
                             "(default: the latest session)")
    add_store_argument(parser, help="with --session: the SQLite flow store (default: the user data dir)")
    parser.add_argument("files", nargs="*", metavar="FILE", help="payload files, or - for stdin")
    parser.set_defaults(handler=run)


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    return Path(name).read_bytes()


def _line(result: DocumentCheck, violation: Violation, cache: dict[int, Any]) -> int:
    if id(result) not in cache:
        cache[id(result)] = pretty(result.document)
    return cache[id(result)].line_of(violation.pointer) + 1


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.session is not None:
        if args.files or args.fix:
            print("toolwire-inspect: --session checks a recorded session; give no FILE and no --fix", file=sys.stderr)
            return 2
        return _run_session(args)
    if not args.files:
        print("toolwire-inspect: check needs FILE... (or - for stdin), or --session", file=sys.stderr)
        return 2
    out = sys.stderr if args.fix == "-" else sys.stdout
    if args.fix and args.fix != "-" and len(args.files) > 1 and not Path(args.fix).is_dir():
        print(f"toolwire-inspect: --fix {args.fix}: with several files OUT must be an existing directory",
              file=sys.stderr)
        return 2
    records: list[dict[str, Any]] = []
    repairs: list[dict[str, Any]] = []
    unreadable = False
    remaining_errors = 0
    totals = [0, 0, 0]
    for name in args.files:
        try:
            body = _read(name)
        except OSError as exc:
            print(f"toolwire-inspect: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
            unreadable = True
            continue
        try:
            turns = load_bytes(body, name)
        except NotARecording:
            turns = None
        except LoadError as exc:
            print(f"toolwire-inspect: {exc}", file=sys.stderr)
            unreadable = True
            continue
        if turns is not None:
            # A fixture, HAR file or cassette: each exchange judged whole, as a recorded flow is.
            found = _check_recording(turns, records, out, args)
            totals = [a + b for a, b in zip(totals, found)]
            remaining_errors += found[0]
            if args.fix:
                print(f"toolwire-inspect: {name}: recordings are not rewritten (export --format json carries the "
                      "fixed request)", file=sys.stderr)
            continue
        result = check_bytes(body, args.dialect, args.kind, args.profile)
        if result.error is not None:
            print(f"toolwire-inspect: {name}: {result.error}", file=sys.stderr)
            unreadable = True
            continue
        lines: dict[int, Any] = {}
        for violation in result.violations:
            record = {**violation.to_dict(), "file": name, "line": _line(result, violation, lines),
                      "dialect": result.dialect.value if result.dialect else "", "kind": result.kind}
            records.append(record)
            if not args.json:
                print(f"{name}:{violation.pointer}: {violation.severity.value} {violation.rule} "
                      f"({violation.effect.value}) {violation.message}", file=out)
                if args.explain:
                    print(f"    why: {violation.why}\n    fix: {violation.hint}", file=out)
        errors, warnings, infos = count_by_severity(result.violations)
        totals = [totals[0] + errors, totals[1] + warnings, totals[2] + infos]
        if not args.fix:
            remaining_errors += errors
            continue
        if result.kind == "stream" or result.dialect is None:
            print(f"toolwire-inspect: {name}: streams cannot be fixed (fix the producer)", file=sys.stderr)
            remaining_errors += errors
            continue
        try:
            jsonsafe.refuse_wide_integers(body)  # the document was read by orjson, which rounded them
            fixed = fix(result.document, result.dialect, args.profile)
            data = jsonsafe.dumps(fixed.payload, option=orjson.OPT_INDENT_2) + b"\n"
        except jsonsafe.Unfaithful as exc:
            print(f"toolwire-inspect: {name}: cannot fix faithfully: {exc}", file=sys.stderr)
            unreadable = True
            continue
        for repair in fixed.repairs:
            repairs.append({"file": name, "rule": repair.rule, "pointer": repair.pointer, "action": repair.action,
                            "detail": repair.detail})
            if not args.json:
                print(f"{name}:{repair.pointer}: fixed {repair.rule} {repair.action}: {repair.detail}", file=out)
        after = check_document(fixed.payload, result.dialect, result.kind, args.profile)
        remaining_errors += count_by_severity(after.violations)[0]
        _write_fixed(args.fix, name, len(args.files), data)
    if args.json:
        out.write(orjson.dumps(records).decode() + "\n")
        if args.fix:
            sys.stderr.write(orjson.dumps(repairs).decode() + "\n")
    else:
        files = len(args.files)
        summary = (f"{files} file{'s' if files != 1 else ''} checked: {totals[0]} error(s), {totals[1]} warning(s), "
                   f"{totals[2]} info")
        if args.fix:
            summary += f"; {len(repairs)} repair(s), {remaining_errors} error(s) left"
        print(summary, file=out)
    if unreadable:
        return 2
    return 1 if remaining_errors else 0


def _check_recording(turns: list[Turn], records: list[dict[str, Any]], out: Any,
                     args: argparse.Namespace) -> list[int]:
    """Judge each recorded exchange as `analysis` judges a flow (request, response and what needs
    both); (errors, warnings, infos). `file` names the exchange, `where` the side of it."""
    totals = [0, 0, 0]
    for turn in turns:
        analysis = analyse(turn.flow)
        documents = {"request": analysis.request, "upstream": analysis.upstream_request,
                     "response": analysis.response, "stream": analysis.response}
        cache: dict[int, Any] = {}
        for violation in analysis.violations:
            document = documents.get(violation.where)
            if id(document) not in cache:
                cache[id(document)] = pretty(document)
            records.append({**violation.to_dict(), "file": turn.source,
                            "line": cache[id(document)].line_of(violation.pointer) + 1,
                            "dialect": analysis.dialect.value if analysis.dialect else "", "kind": violation.where})
            if not args.json:
                print(f"{turn.source}:{violation.where}:{violation.pointer}: {violation.severity.value} "
                      f"{violation.rule} {violation.message}", file=out)
                if args.explain:
                    print(f"    why: {violation.why}\n    fix: {violation.hint}", file=out)
        totals = [a + b for a, b in zip(totals, count_by_severity(analysis.violations))]
    return totals


def _run_session(args: argparse.Namespace) -> int:
    """Session rules over the stored flows of one recording: `#flow:pointer: severity RULE message`."""
    from ..analysis import session_findings
    store = open_store(args.store, read_only=True)
    with store:
        sessions = store.sessions()
        if args.session == "latest":
            session_id = sessions[-1].id if sessions else None
        else:
            session_id = stored_id(args.session)
        if session_id is None or store.session(session_id) is None:
            print(f"toolwire-inspect: no session {args.session} in {store.path}", file=sys.stderr)
            return 2
        ids = store.flow_ids(session_id, dialect="mcp")
        findings = session_findings(found for found in map(store.get, ids) if found is not None)
    records = [{**violation.to_dict(), "flow": flow_id}
               for flow_id, violations in sorted(findings.items()) for violation in violations]
    if args.json:
        print(orjson.dumps(records).decode())
    else:
        for record in records:
            print(f"#{record['flow']}:{record['pointer']}: {record['severity']} {record['rule']} ({record['effect']}) "
                  f"{record['message']}")
            if args.explain:
                print(f"    why: {record['why']}\n    fix: {record['hint']}")
        errors = sum(1 for record in records if record["severity"] == "error")
        print(f"session {session_id}: {len(ids)} MCP flow(s) checked: {errors} error(s), "
              f"{len(records) - errors} other finding(s)")
    return 1 if any(record["severity"] == "error" for record in records) else 0


def _write_fixed(target: str, name: str, count: int, data: bytes) -> None:
    if target == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    path = Path(target)
    if count > 1 or path.is_dir():
        path = path / (Path(name).name if name != "-" else "stdin.json")
    path.write_bytes(data)


