"""MCP streams: every JSON-RPC message checked as a response; the answers are the result.

`reassemble(events, profile, report)` is this dialect's stream builder (see `wire.streams`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...pointer import join
from ...profiles import Profile
from ...rules.base import Report
from ...violations import Violation
from . import rules as mcp


def reassemble(events: list[Any], profile: Profile, report: Report) -> Any | None:
    responses = []
    for number, event in enumerate(events):
        inner = Report("stream", event)  # MCP: as check.check_response
        mcp.check_response(event, profile, inner)
        report.violations.extend(_prefixed(v, join("", number)) for v in inner.violations)
        if isinstance(event, dict) and ("result" in event or "error" in event):
            responses.append(event)
    if not responses:
        return None
    return responses[0] if len(responses) == 1 else responses


def _prefixed(violation: Violation, prefix: str) -> Violation:
    return replace(violation, pointer=prefix + violation.pointer)


def is_final(event: Any) -> bool:
    """Whether a client that read `event` had the whole answer: the JSON-RPC answer to the request."""
    return isinstance(event, dict) and "id" in event and ("result" in event or "error" in event)
