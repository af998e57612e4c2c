"""What the inspector knows about one flow: its dialect, facts for the list, parsed documents and
contract violations. Pure and total: bad bodies become `parse_error`, never an exception."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from .flow import Flow, header
from .wire import check, jsonsafe
from .wire import profiles
from .wire.dialect import Dialect, from_path, from_shape
from .wire.session import check_session, entries_from_flows
from .wire.summary import request_facts, response_tool_calls
from .wire.violations import Violation, count_by_severity


@dataclass(slots=True)
class Analysis:
    dialect: Dialect | None = None
    upstream_dialect: Dialect | None = None
    model: str = ""
    tools: int = 0
    tool_calls: int = 0
    request: Any | None = None  # the original request, parsed
    upstream_request: Any | None = None  # what went upstream, parsed (None in passthrough)
    response: Any | None = None  # the response the client got, parsed or reassembled from the stream
    violations: list[Violation] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    parse_error: str | None = None


def decode_body(body: bytes, headers: list[tuple[str, str]]) -> bytes:
    """The body with its content-encoding undone (gzip/deflate); unchanged if it cannot be."""
    encoding = (header(headers, "content-encoding") or "").lower().strip()
    try:
        if encoding == "gzip" or (not encoding and body[:2] == b"\x1f\x8b"):
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, EOFError, zlib.error):
        return body
    return body


def parse_json(body: bytes) -> tuple[Any | None, str | None]:
    """(document, None) or (None, a one-line reason)."""
    if not body.strip():
        return None, "empty body"
    try:
        return orjson.loads(body), None
    except orjson.JSONDecodeError as exc:
        return None, f"not valid JSON: {jsonsafe.TOO_DEEP_TO_READ if jsonsafe.too_deep_to_read(exc) else exc}"


def _translate_target(flow: Flow) -> Dialect | None:
    if not flow.translate or ":" not in flow.translate:
        return None
    try:
        return Dialect(flow.translate.split(":", 1)[1])
    except ValueError:
        return None


def _is_stream(flow: Flow) -> bool:
    return flow.streamed or "text/event-stream" in flow.content_type


def analyse(flow: Flow) -> Analysis:
    result = Analysis()
    request_body = decode_body(flow.request_body, flow.request_headers)
    result.request, request_error = parse_json(request_body)
    dialect = from_path(flow.path) or from_shape(result.request)
    result.dialect = dialect
    if request_error and flow.method.upper() not in ("GET", "HEAD", "DELETE", "OPTIONS"):
        result.parse_error = f"request {request_error}"
    result.model, result.tools = request_facts(result.request, dialect, flow.path)

    if flow.upstream_request_body is not None:
        result.upstream_request, _ = parse_json(decode_body(flow.upstream_request_body, flow.upstream_request_headers))
    result.upstream_dialect = _translate_target(flow) or dialect

    if dialect is not None:
        result.violations = _check(flow, result, dialect)
    result.tool_calls = response_tool_calls(result.response, dialect)
    result.errors, result.warnings, _ = count_by_severity(result.violations)
    return result


def _check(flow: Flow, result: Analysis, dialect: Dialect) -> list[Violation]:
    """Violations of every document of the flow; fills `result.response` on the way (one parse)."""
    found: list[Violation] = []

    def add(where: str, violations: list[Violation]) -> None:
        found.extend(v if v.where else _with_where(v, where) for v in violations)

    # The client-side documents are judged by the profile of the endpoint they were meant for.
    profile = profiles.for_upstream(flow.upstream_url, dialect)
    if result.request is not None:
        add("request", check.check_request(result.request, dialect, profile))
    upstream_dialect = result.upstream_dialect
    if result.upstream_request is not None and upstream_dialect is not None:
        add("upstream", check.check_request(result.upstream_request, upstream_dialect,
                                            profiles.for_upstream(flow.upstream_url, upstream_dialect)))
    response_body = decode_body(flow.response_body, flow.response_headers)
    if not response_body:
        return found
    # An error answer is the provider's verdict, not a tool-calling payload to judge.
    judged = (flow.status or 0) < 400
    if _is_stream(flow):
        violations, result.response = check.check_and_reassemble(response_body, dialect, profile)
        if judged:
            add("stream", violations)
    else:
        result.response, _ = parse_json(response_body)
        if judged and result.response is not None:
            add("response", check.check_response(result.response, dialect, profile))
    return found


def _with_where(violation: Violation, where: str) -> Violation:
    return Violation(violation.rule, violation.severity, violation.pointer, violation.message,
                     violation.why, violation.hint, where)


def session_findings(flows: Iterable[Flow]) -> dict[int, list[Violation]]:
    """Violations that only show across the flows of one recording (the same MCP tool from two
    servers, one endpoint registered twice, structuredContent against an earlier outputSchema),
    by the id of the flow whose response holds them. Their pointers point into that response."""
    found: dict[int, list[Violation]] = {}
    for violation in check_session(entries_from_flows(flows)):
        found.setdefault(int(violation.where), []).append(_with_where(violation, "session"))
    return found
