"""The checker's front door: one call per kind of document, whatever the dialect.

Pure and total: any JSON value (or any bytes, for streams) gives a list of violations, never an
exception. Payloads are read in place (no copies) and every list is walked once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import orjson

from . import jsonsafe, profiles, streams
from .dialect import Dialect, from_shape
from .profiles import Profile
from .dialects import home, homes
from .sse import SSE
from .rules import spec
from .rules.base import Report
from .violations import Violation

Kind = Literal["request", "response", "stream"]

# Rules that one payload, stream or recorded session cannot decide, and why (docs/checker.md lists them).
UNDECIDABLE: dict[str, str] = {
    "OR-09": "whether a replayed function_call needs its reasoning item depends on the earlier response that "
             "produced it (which held the reasoning) and on the model; one request does not show what was dropped",
    "OR-11": "with previous_response_id or a conversation the calls live in server-side history, so outputs "
             "that answer them cannot be paired from the request (the checker notes the fact and skips the "
             "orphan check)",
    "OC-16": "the 40-character tool-call id limit is endpoint-dependent (not reproduced on api.openai.com in "
             "2026-07); it is an error only under the azure-openai profile, and under "
             "openrouter for openai/ models (OpenRouter passed a 50-character id on to google/gemini-2.5-flash "
             "in pydantic-ai's recordings)",
    "OC-03": "the 1024-character description limit is not in the spec and api.openai.com stopped enforcing it "
             "(2025-12 recordings); it is an error only under the azure-openai profile",
    "XL-02": "reversibility of an alias map and its application to replayed history needs the translation "
             "state; the checker flags names that need an alias (OC-02, OR-03, AN-02, GM-02, MCP-03)",
    "XL-05": "FIFO pairing is checked within a request; whether a translator paired legacy messages correctly "
             "needs its output beside its input",
    "XL-07": "text lost by a translation is only visible by comparing the source and translated payloads "
             "(the translation loss report does that); a single payload shows only the ordering (AN-09, GM-11)",
    "XL-14": "dropped, reordered or rewritten opaque state (thoughtSignature, reasoning items, thinking blocks) "
             "is visible only against the response that produced it: the session rules compare them across the "
             "flows of a recording (check --session); a single file shows a Gemini call turn that lost its "
             "signature while others kept theirs (GM-08) and an Anthropic tool_use turn without its thinking "
             "block while thinking is on (XL-14)",
    "OC-06 (size limits)": "the strict-mode size limits (properties, nesting, enum values, characters) changed "
                           "over time and are quoted through mirrors (OC-06 in docs/rules.md); the shape rules are "
                           "checked, the limits are not",
    "XL-15": "content lost between an MCP result and a dialect's tool result needs both documents",
    "GM-08 (model)": "whether a missing thoughtSignature is rejected depends on the model (Gemini 3), which is "
                     "in the URL, not the body",
    "GM-11, GM-13 (model)": "text beside a functionResponse and a functionCallingConfig with only built-in tools "
                            "are rejected by some models and accepted by others; the model is in the URL, so they "
                            "are errors only when the profile names a model known to reject (the recorder reads "
                            "it from the path), warnings otherwise",
    "MCP-04 (revision)": "_meta on tools/call is required only in 2026-07-28, and a request without _meta does "
                         "not say which revision it speaks unless it came over HTTP with its MCP-Protocol-Version "
                         "header (then it is checked); result fields that 2026-07-28 requires are checked by the "
                         "session rules when the request declares that revision",
    "AN-02 (length)": "Anthropic widened names from 64 to 128 characters during 2025; older endpoints reject 65+",
}


def _resolve(dialect: Dialect | str, profile: str | Profile | None) -> tuple[Dialect, Profile]:
    dialect = Dialect(dialect)
    return dialect, profiles.get(profile, dialect)


def check_request(payload: Any, dialect: Dialect | str, profile: str | Profile | None = None) -> list[Violation]:
    """Violations in a request body (already parsed JSON): the dialect's rules, then the provider's
    published schema where the rules said nothing."""
    dialect, chosen = _resolve(dialect, profile)
    payload, at = profiles.unwrap(payload, chosen, "request")
    report = Report(document=payload)
    home(dialect).rules.check_request(payload, chosen, report)
    spec.check_request(payload, dialect, chosen, report)
    return under(at, report.violations)


def under(at: str, violations: list[Violation]) -> list[Violation]:
    """Violations found in a document that sits at pointer `at` of the recorded one (a provider's
    envelope, `profiles.unwrap`), pointing into the recorded one."""
    return [replace(v, pointer=at + v.pointer) for v in violations] if at else violations


def check_response(payload: Any, dialect: Dialect | str, profile: str | Profile | None = None) -> list[Violation]:
    """Violations in a non-streamed response body (already parsed JSON)."""
    dialect, chosen = _resolve(dialect, profile)
    # MCP's rules name their effect on the client themselves: a tools/list result is what the client
    # declares to its provider next, so a name the provider refuses is refused there, not here.
    payload, at = profiles.unwrap(payload, chosen, "response")
    report = Report(document=payload, response=dialect is not Dialect.MCP)
    home(dialect).rules.check_response(payload, chosen, report)
    return under(at, report.violations)


def check_stream(body: bytes, dialect: Dialect | str, profile: str | Profile | None = None) -> list[Violation]:
    """Violations in a streamed response body (raw bytes as relayed: SSE, or Gemini's stream).
    Pointers are `/<event index>/…` into `streams.parse_events(body, dialect)`; where is "stream"."""
    dialect, chosen = _resolve(dialect, profile)
    return streams.check_and_reassemble(body, dialect, chosen)[1].violations


def reassemble(body: bytes, dialect: Dialect | str) -> Any | None:
    """The final response object a client builds from a streamed body; None if it cannot."""
    dialect, chosen = _resolve(dialect, None)
    return streams.check_and_reassemble(body, dialect, chosen)[2]


def check_and_reassemble(body: bytes, dialect: Dialect | str,
                         profile: str | Profile | None = None) -> tuple[list[Violation], Any | None]:
    """`check_stream` and `reassemble` in one parse of the body (what a recorder wants per flow)."""
    dialect, chosen = _resolve(dialect, profile)
    _, report, final = streams.check_and_reassemble(body, dialect, chosen)
    return report.violations, final


@dataclass(slots=True)
class ExchangeCheck:
    """What `check_exchange` found, by document: the request's, the response's (or stream's), and the
    pair's, whose pointers point into `final`, the response as the client has it (parsed, or
    reassembled from the stream; None when it is neither)."""

    request: list[Violation] = field(default_factory=list)
    response: list[Violation] = field(default_factory=list)
    pair: list[Violation] = field(default_factory=list)
    final: Any | None = None
    events: int | None = None  # a stream's events, as parsed for the check (None: not a stream)

    @property
    def violations(self) -> list[Violation]:
        return [*self.request, *self.response, *self.pair]


def check_exchange(request: Any, response: Any, dialect: Dialect | str, profile: str | Profile | None = None, *,
                   response_profile: str | Profile | None = None) -> ExchangeCheck:
    """A request and the response it got, judged together: each document by its own rules, then what
    only the pair shows (a call to a tool the request never declared) and, for a stream, the turn
    rules on the response it reassembles to (an empty `choices`, a turn with neither content nor
    calls). `request`: parsed JSON, or None when there is none; `response`: parsed JSON, the raw
    bytes of a stream, or None. `response_profile` defaults to `profile`. Findings carry where
    "request", "response" or "stream", and "response" for the pair's."""
    dialect, chosen = _resolve(dialect, profile)
    answered = profiles.get(response_profile, dialect) if response_profile is not None else chosen
    found = ExchangeCheck()
    if request is not None:
        found.request = [_at(v, "request") for v in check_request(request, dialect, chosen)]
    streamed = isinstance(response, (bytes, bytearray))
    if streamed:
        events, report, found.final = streams.check_and_reassemble(bytes(response), dialect, answered)
        found.events = len(events)
        found.response = [_at(v, "stream") for v in report.violations]
    elif response is not None:
        found.final = response
        found.response = [_at(v, "response") for v in check_response(response, dialect, answered)]
    if found.final is not None:
        # Inside a provider's envelope: a stream's events were unwrapped as they were reassembled.
        final, at = profiles.unwrap(found.final, answered, "response") if not streamed else (found.final, "")
        report = Report("response", final, response=dialect is not Dialect.MCP)
        home(dialect).rules.check_exchange(profiles.unwrap(request, chosen, "request")[0], final, answered, report,
                                           streamed=streamed)
        found.pair = under(at, report.violations)
    return found


def _at(violation: Violation, where: str) -> Violation:
    return violation if violation.where else replace(violation, where=where)


@dataclass(slots=True)
class DocumentCheck:
    """What `check_document` / `check_bytes` found: the dialect and kind it settled on, the parsed
    document (the event list for a stream), and the violations; `error` when it could not check."""

    dialect: Dialect | None
    kind: Kind | None
    document: Any = None
    violations: list[Violation] = field(default_factory=list)
    error: str | None = None


def detect_kind(payload: Any, dialect: Dialect) -> Kind:
    """request or response, from the shape of a parsed document of a known dialect."""
    if isinstance(payload, list):
        if dialect is Dialect.MCP:
            first = next((m for m in payload if isinstance(m, dict)), {})
            return "request" if "method" in first else "response"
        return "stream"
    if not isinstance(payload, dict):
        return "request"
    return "response" if home(dialect).is_response(payload) else "request"


def check_document(payload: Any, dialect: Dialect | str | None = None, kind: Kind | None = None,
                   profile: str | Profile | None = None, *,
                   headers: Iterable[tuple[str, str]] = ()) -> DocumentCheck:
    """Check a parsed request or response, detecting the dialect and kind from its shape unless given.
    A JSON list is a Gemini JSON-array stream (or an MCP batch). `headers`: those the request was sent
    with, where they change what the endpoint accepts (profiles.with_headers)."""
    chosen = Dialect(dialect) if dialect is not None else from_shape(payload)
    if chosen is None:
        return DocumentCheck(None, kind, payload, error="cannot tell the dialect from the shape; pass a dialect")
    profile = profiles.with_headers(profiles.get(profile, chosen), headers)
    kind = kind or detect_kind(payload, chosen)
    if kind != "stream" and not _has_judged_fields(profiles.unwrap(payload, profile, kind)[0], chosen, kind):
        fields = ", ".join(home(chosen).judged[kind])
        return DocumentCheck(chosen, kind, payload, error=f"nothing to check: no field a {chosen.value} {kind} is "
                                                          f"judged by ({fields})")
    if kind == "stream":
        try:
            body = jsonsafe.dumps(payload) if not isinstance(payload, (bytes, str)) else payload
        except jsonsafe.Unfaithful as exc:
            return DocumentCheck(chosen, kind, payload, error=f"cannot check as a stream: {exc}")
        body = body.encode() if isinstance(body, str) else body
        return check_bytes(body, chosen, "stream", profile)
    check = check_request if kind == "request" else check_response
    return DocumentCheck(chosen, kind, payload, check(payload, chosen, profile))


def check_bytes(body: bytes, dialect: Dialect | str | None = None, kind: Kind | None = None,
                profile: str | Profile | None = None, *,
                headers: Iterable[tuple[str, str]] = ()) -> DocumentCheck:
    """Check a raw body: JSON (request or response), or a stream (SSE, Gemini JSON array)."""
    stripped = body.lstrip()
    if not stripped:
        return DocumentCheck(Dialect(dialect) if dialect else None, kind, error="nothing to check: the input is empty")
    is_sse = stripped[:5] in (b"data:", b"event") or stripped[:1] == b":"
    if kind != "stream" and not is_sse:
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return DocumentCheck(Dialect(dialect) if dialect else None, kind, error=f"not valid JSON: {exc}")
        if not (isinstance(payload, list) and (dialect is None or Dialect(dialect) is Dialect.GEMINI) and kind is None
                and _looks_like_gemini_stream(payload)):
            return check_document(payload, dialect, kind, profile, headers=headers)
    chosen = Dialect(dialect) if dialect is not None else None
    if chosen is None:
        chosen = Dialect.GEMINI if stripped[:1] == b"[" else _stream_dialect(body)
    if chosen is None:
        return DocumentCheck(None, "stream", error="cannot tell the dialect of the stream; pass a dialect")
    events, report, _ = streams.check_and_reassemble(body, chosen,
                                                     profiles.with_headers(profiles.get(profile, chosen), headers))
    if not events:
        return DocumentCheck(chosen, "stream", events, error="nothing to check: the stream has no events")
    return DocumentCheck(chosen, "stream", events, report.violations)


def _has_judged_fields(payload: Any, dialect: Dialect, kind: str) -> bool:
    documents = payload if isinstance(payload, list) else [payload]
    # A document with none of the fields its dialect's rules read (a file of another format checked
    # with --dialect, `{}`) gives no finding because nothing was judged, not because it is clean.
    fields = home(dialect).judged[kind]
    return any(isinstance(document, dict) and any(name in document for name in fields) for document in documents)


def _looks_like_gemini_stream(payload: list[Any]) -> bool:
    return bool(payload) and all(isinstance(e, dict) and ("candidates" in e or "usageMetadata" in e) for e in payload)


def _stream_dialect(body: bytes) -> Dialect | None:
    for event in SSE.parse(body)[:3]:
        if not isinstance(event, dict):
            continue
        found = next((each.dialect for each in homes() if each.stream_event(event)), None)
        if found is not None:
            return found
    return None
