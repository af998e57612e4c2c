"""`toolwire-inspect check [--dialect D] [--profile P | --url URL] [--kind K] [--format F | --json] [--explain] [--fix OUT]
FILE... | -` and `toolwire-inspect check --session [ID] [--store PATH] [--json]` (the session rules).

Lints request, response and stream files against the contract rules. A recording (our fixture, a HAR
file, a vcrpy cassette) is judged exchange by exchange as a recorded flow is, the rules that need the
request and the response together included. inspector/report.py writes each output format (human,
json, github, sarif). Exit status: 0 without error-severity violations,
1 with any (with --fix: any left after fixing), 2 when an input cannot be read or parsed or nothing
in it could be judged."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from .. import report
from ..analysis import BodyTooLarge, analyse, decode_body, is_stream
from ..wire.session import DIALECTS
from ..files import taken_error, write_file, write_new
from ..flow import frames
from ..formats.base import LoadError, NotARecording, Turn
from ..formats.load import FilePlaces
from ..formats.registry import load_bytes
from ..report import FORMATS, Finding, Unchecked
from ..sockets import turn_flows
from ..textsafe import json_text, shown
from ..wire import jsonsafe, profiles
from ..wire.check import DocumentCheck, check_bytes, check_document
from ..wire.dialect import DIALECT_NAMES, Dialect, from_path
from ..wire.fix import fix
from ..wire.locate import source
from ..wire.profiles import PROFILES, Profile
from ..wire.summary import request_facts
from ..wire.violations import Violation, count_by_severity
from .common import add_store_argument, chosen_session, complain, not_written, open_store


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
    parser.add_argument("--url", metavar="URL",
                        help="where the payloads were sent: its host picks the provider profile, its path the "
                             "dialect, the API version (Gemini's /v1/ takes fewer fields than /v1beta/) and the "
                             "model (Bedrock's /model/ID/converse). Recordings carry their own")
    parser.add_argument("--kind", choices=("request", "response", "stream"),
                        help="what the inputs are; detected from the shape if absent")
    parser.add_argument("--format", "-f", choices=FORMATS, default="human",
                        help="human (default); json: a JSON array; github: workflow annotations on the lines of "
                             "the files; sarif: a SARIF 2.1.0 log for code scanning")
    parser.add_argument("--json", action="store_const", dest="format", const="json", help="same as --format json")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE", type=_header,
                        help="a header the payloads were sent with, where it changes what the endpoint accepts "
                             "(anthropic-beta, OpenAI-Beta, MCP-Protocol-Version); repeatable. Recordings carry "
                             "their own")
    parser.add_argument("--explain", action="store_true",
                        help="add why, fix, the rule's title and its evidence under each violation")
    parser.add_argument("--fix", metavar="OUT",
                        help="write the repaired payload to OUT (a directory when several files are given; - for "
                             "stdout) and list the repairs")
    parser.add_argument("--session", nargs="?", const="latest", metavar="ID",
                        help="instead of files, run the session rules over a recorded session's MCP exchanges "
                             "(default: the latest session)")
    add_store_argument(parser, help="with --session: the SQLite flow store (default: the user data dir)")
    parser.add_argument("files", nargs="*", metavar="FILE", help="payload files, or - for stdin")
    parser.set_defaults(handler=run)


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME:VALUE")
    return name.strip(), value.strip()


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    return Path(name).read_bytes()


def _sent_to(url: str, dialect: str | None, profile: str | None) -> tuple[Dialect, Profile]:
    """The dialect and profile of payloads sent to `url`, as the recorder reads a flow's upstream URL
    (wire/profiles.for_upstream, the model from the path where the dialect puts it there); a
    ValueError saying what is missing."""
    if profile is not None:
        raise ValueError("--url picks the profile from its host: give --url or --profile, not both")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ValueError(f"--url {shown(url)}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--url {shown(url)}: expected http(s)://HOST/PATH")
    chosen = Dialect(dialect) if dialect is not None else from_path(parts.path)
    if chosen is None:
        raise ValueError(f"--url {shown(url)}: its path names no dialect; pass --dialect")
    model, _ = request_facts({}, chosen, parts.path)
    return chosen, profiles.with_model(profiles.for_upstream(url, chosen), model)


def _findings(name: str, body: bytes, result: DocumentCheck) -> list[Finding]:
    """The result's violations placed on their lines in the file as given."""
    if not result.violations:
        return []
    located = source(body, sse=result.kind == "stream" and body.lstrip()[:1] != b"[")
    dialect = result.dialect.value if result.dialect else ""
    return [Finding(name, *located.position_of(violation.pointer), dialect, result.kind or "", violation)
            for violation in result.violations]


def _recording_findings(name: str, data: bytes, turns: list[Turn]) -> list[Finding]:
    """Each recorded exchange judged as `analysis` judges a flow (request, response and what needs
    both). They are labelled with the exchange and its side, and placed where the body they are in
    sits in the file (load.FilePlaces)."""
    places = FilePlaces(data)
    found = []
    # A recorded Responses socket is judged turn by turn, as the store splits it (inspector/sockets.py);
    # its turns' findings are placed on the socket's entry (its frames are not bodies of the file).
    ids = itertools.count(1)
    turns = [*turns, *(Turn(made, f"{turn.source} turn {number}") for turn in turns if turn.flow.websocket
                       for number, made in enumerate(turn_flows(turn.flow, frames(turn.flow), ids.__next__), start=1))]
    for turn in turns:
        analysis = analyse(turn.flow)
        dialect = analysis.dialect.value if analysis.dialect else ""
        found += [Finding(name, *_place(places, turn, violation), dialect, violation.where, violation,
                          label=f"{turn.source}:{violation.where}") for violation in analysis.violations]
    return found


def _place(places: FilePlaces, turn: Turn, violation: Violation) -> tuple[int, int]:
    """A recorded finding's line and column: at its pointer in its body. A stream's pair findings
    point into the response it reassembles to, which the file does not hold: the body's own place."""
    body = turn.bodies.get("response" if violation.where == "stream" else violation.where)
    if body is None:
        return 1, 1
    # A stream held as its recorded chunks is cut where the network cut it, not by event.
    if body[-1] == "chunks" or (violation.where == "response" and is_stream(turn.flow)):
        return places.position(body, "")
    if violation.where != "stream":
        return places.position(body, violation.pointer)
    try:
        json_array = decode_body(turn.flow.response_body, turn.flow.response_headers).lstrip()[:1] == b"["
    except BodyTooLarge:
        return places.position(body, "")
    return places.position(body, violation.pointer, sse=not json_array)  # Gemini streams a JSON array too


def run(args: argparse.Namespace) -> int:
    if args.session is not None:
        if args.files or args.fix:
            complain("--session checks a recorded session; give no FILE and no --fix")
            return 2
        if args.format not in ("human", "json"):
            complain("--session writes human or json output")
            return 2
        return _run_session(args)
    if not args.files:
        complain("check needs FILE... (or - for stdin), or --session")
        return 2
    out = sys.stderr if args.fix == "-" else sys.stdout
    if args.fix and args.fix != "-" and len(args.files) > 1 and not Path(args.fix).is_dir():
        complain(f"--fix {args.fix}: with several files OUT must be an existing directory")
        return 2
    if args.fix and args.fix != "-":
        # A fixed file named after its input replaces nothing, and a name taken is said before any is written.
        places = [_fixed_place(args.fix, name, len(args.files)) for name in args.files]
        taken = next((folder / side for folder, side in places if side is not None and os.path.lexists(folder / side)),
                     None)
        if taken is not None:
            complain(f"{not_written(taken_error(taken), args.fix, _FIX_HINT)}")
            return 2
    if args.url is not None:
        try:
            args.dialect, args.profile = _sent_to(args.url, args.dialect, args.profile)
        except ValueError as exc:
            complain(str(exc))
            return 2
    human = args.format == "human"
    findings: list[Finding] = []
    unchecked: list[Unchecked] = []
    repairs: list[dict[str, Any]] = []
    failed = False
    remaining_errors = 0
    for name in args.files:
        try:
            body = _read(name)
        except OSError as exc:
            unchecked.append(Unchecked(name, f"cannot read {name}: {exc.strerror or exc}"))
            complain(unchecked[-1].reason)
            continue
        not_recording = None
        try:
            turns = load_bytes(body, name)
        except NotARecording as exc:
            not_recording = exc
            turns = None
        except LoadError as exc:
            unchecked.append(Unchecked(name, str(exc)))
            complain(str(exc))
            continue
        if turns is not None:
            if not turns:
                unchecked.append(Unchecked(name, f"{name}: nothing to check: the recording holds no exchange"))
                complain(unchecked[-1].reason)
                continue
            found = _recording_findings(name, body, turns)
            findings += found
            if human:
                for line in report.human(found, args.explain):
                    print(line, file=out)
            remaining_errors += count_by_severity([finding.violation for finding in found])[0]
            if args.fix:
                complain(f"{name}: recordings are not rewritten (export --format json carries the "
                         "fixed request)")
            continue
        result = check_bytes(body, args.dialect, args.kind, args.profile, headers=args.header)
        if result.error is not None and result.error.startswith("not valid JSON") and not_recording is not None \
                and body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] not in (b"{", b"["):
            # YAML or text that is no recording: saying only that it is no JSON would mislead.
            unchecked.append(Unchecked(name, f"{not_recording}, nor a JSON payload or a stream"))
            complain(unchecked[-1].reason)
            continue
        if result.error is not None:
            unchecked.append(Unchecked(name, f"{name}: {result.error}"))
            complain(unchecked[-1].reason)
            continue
        found = _findings(name, body, result)
        findings += found
        if human:
            for line in report.human(found, args.explain):
                print(line, file=out)
        errors = count_by_severity(result.violations)[0]
        if not args.fix:
            remaining_errors += errors
            continue
        if result.kind == "stream" or result.dialect is None:
            complain(f"{name}: streams cannot be fixed (fix the producer)")
            remaining_errors += errors
            continue
        try:
            jsonsafe.refuse_wide_integers(body)  # the document was read by orjson, which rounded them
            fixed = fix(result.document, result.dialect, args.profile)
            data = jsonsafe.dumps(fixed.payload, option=orjson.OPT_INDENT_2) + b"\n"
        except jsonsafe.Unfaithful as exc:
            complain(f"{name}: cannot fix faithfully: {exc}")
            failed = True
            continue
        for repair in fixed.repairs:
            repairs.append({"file": name, "rule": repair.rule, "pointer": repair.pointer, "action": repair.action,
                            "detail": repair.detail})
            if human:
                print(shown(f"{name}:{repair.pointer}: fixed {repair.rule} {repair.action}: {repair.detail}"), file=out)
        after = check_document(fixed.payload, result.dialect, result.kind, args.profile, headers=args.header)
        remaining_errors += count_by_severity(after.violations)[0]
        try:
            _write_fixed(args.fix, name, len(args.files), data)
        except OSError as exc:
            complain(f"{not_written(exc, args.fix, _FIX_HINT)}")
            failed = True
    checked = len(args.files) - len(unchecked)
    if human:
        summary = report.summary(checked, len(unchecked), (finding.violation for finding in findings))
        if args.fix:
            summary += f"; {len(repairs)} repair(s), {remaining_errors} error(s) left"
        print(summary, file=out)
    else:
        if args.format == "json":
            out.write(json_text(orjson.dumps(report.records(findings)).decode()) + "\n")
        elif args.format == "github":
            out.write("".join(line + "\n" for line in report.github(findings, unchecked)))
        else:
            sarif = orjson.dumps(report.sarif(findings, unchecked), option=orjson.OPT_INDENT_2).decode()
            out.write(json_text(sarif) + "\n")
        if args.fix:
            sys.stderr.write(json_text(orjson.dumps(repairs).decode()) + "\n")
        if not checked:
            complain("nothing checked")
    if unchecked or failed:
        return 2
    return 1 if remaining_errors else 0


def _run_session(args: argparse.Namespace) -> int:
    """Session rules over the stored flows of one recording: `#flow:pointer: severity RULE message`."""
    store = open_store(args.store, read_only=True)
    with store:
        session_id = chosen_session(store, args.session)
        ids = store.flow_ids(session_id, dialects=DIALECTS)
        if not ids:
            # The session rules judge MCP exchanges and the model flows that carry opaque state: with none,
            # nothing was checked.
            complain(f"nothing checked: session {session_id} has no MCP or model flow the session rules read")
            return 2
        findings = store.session_findings(session_id)
    flagged = [(flow_id, violation) for flow_id, violations in sorted(findings.items()) for violation in violations]
    records = [{**violation.to_dict(), "flow": flow_id} for flow_id, violation in flagged]
    if args.format == "json":
        print(json_text(orjson.dumps(records).decode()))
    else:
        for flow_id, violation in flagged:
            print(shown(f"#{flow_id}:{violation.pointer}: {report.finding_line(violation)}"))
            if args.explain:
                print("\n".join(report.explanation(violation)))
        errors = sum(1 for record in records if record["severity"] == "error")
        print(f"session {session_id}: {len(ids)} MCP flow(s) checked: {errors} error(s), "
              f"{len(records) - errors} other finding(s)")
    return 1 if any(record["severity"] == "error" for record in records) else 0


_FIX_HINT = "fix into a new or empty directory"


def _fixed_place(target: str, name: str, count: int) -> tuple[Path, str | None]:
    """Where `--fix OUT` puts the fixed `name`: (OUT, None) when OUT is the one file the user named,
    (OUT, file name) when OUT is a folder that gets a file named after the input."""
    path = Path(target)
    if count > 1 or path.is_dir():
        return path, Path(name).name if name != "-" else "stdin.json"
    return path, None


def _write_fixed(target: str, name: str, count: int, data: bytes) -> None:
    if target == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    folder, side = _fixed_place(target, name, count)
    if side is None:
        write_file(folder, data)
    else:
        write_new(folder, side, data)


