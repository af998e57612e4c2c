"""Streamed responses: parse the relayed bytes into events, check them, and rebuild the final response
a client would hold, for each dialect. One pass over the events for both.

Events are what the dialect's framing (`Home.framing`) reads from the body: the parsed `data:`
payloads of an SSE body (a string where the data is not JSON, such as Chat's "[DONE]"), or the
elements of Gemini's JSON-array stream; a stream violation's pointer is `/<event index>/…` into
that list."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

from .dialect import Dialect
from .dialects import home, homes
from .profiles import Profile, unwrap
from .rules.base import Report
from .violations import Violation


def parse_events(body: bytes, dialect: Dialect) -> list[Any]:
    """The events of a streamed body, as `dialect`'s framing reads them."""
    return home(dialect).framing.parse(body)


@cache  # the homes are fixed once imported; asked on every flow analysed
def stream_types() -> frozenset[str]:
    """The content types that mark a response as a stream: those the dialects' framings answer with."""
    return frozenset(t for each in homes() for t in each.framing.content_types)


def is_stream_type(content_type: str) -> bool:
    lowered = content_type.lower()
    return any(t in lowered for t in stream_types())


def ends_complete(body: bytes, dialect: Dialect | None) -> bool:
    """Whether a streamed body ends with its dialect's last content event (or its end marker), so a
    client that hangs up after it had the whole answer. Events that carry no content (pings, a usage
    chunk) are passed over; only the stream's tail is parsed."""
    if dialect is None:
        return False
    tail = home(dialect).framing.tail(body)
    return tail if isinstance(tail, bool) else _last_content_final(tail, dialect)


def _last_content_final(events: list[Any], dialect: Dialect) -> bool:
    final = home(dialect).is_final
    for event in reversed(events):
        said = final(event)
        if said is not None:
            return said
    return False


def check_and_reassemble(body: bytes, dialect: Dialect, profile: Profile) -> tuple[list[Any], Report, Any | None]:
    """(events, violations found, the reassembled response or None)."""
    events = parse_events(body, dialect)
    if profile.envelope is None:
        report = Report("stream", events, response=True)
        return events, report, home(dialect).reassemble(events, profile, report) if events else None
    # Each event inside the provider's envelope (`Profile.envelope`): reassembled from what is inside,
    # its findings pointing into the events as they were relayed.
    unwrapped = [unwrap(event, profile, "response") for event in events]
    inner = Report("stream", [event for event, _ in unwrapped], response=True)
    final = home(dialect).reassemble(inner.document, profile, inner) if events else None
    report = Report("stream", events, response=True)
    report.violations = [_rebased(v, unwrapped) for v in inner.violations]
    return events, report, final


def _rebased(violation: Violation, unwrapped: list[tuple[Any, str]]) -> Violation:
    """A finding in unwrapped event `/<index>/…`, pointing into the relayed event."""
    index, _, rest = violation.pointer[1:].partition("/")
    if not index.isdigit() or int(index) >= len(unwrapped) or not unwrapped[int(index)][1]:
        return violation
    return replace(violation, pointer=f"/{index}{unwrapped[int(index)][1]}" + (f"/{rest}" if rest else ""))
