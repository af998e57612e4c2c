"""Streamed responses: parse the relayed bytes into events, check them, and rebuild the final response
a client would hold, for each dialect. One pass over the events for both.

Events are what the dialect's framing (`Home.framing`) reads from the body: the parsed `data:`
payloads of an SSE body (a string where the data is not JSON, such as Chat's "[DONE]"), or the
elements of Gemini's JSON-array stream; a stream violation's pointer is `/<event index>/…` into
that list."""

from __future__ import annotations

from typing import Any

from .dialect import Dialect
from .dialects import home, homes
from .profiles import Profile
from .rules.base import Report


def parse_events(body: bytes, dialect: Dialect) -> list[Any]:
    """The events of a streamed body, as `dialect`'s framing reads them."""
    return home(dialect).framing.parse(body)


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
    report = Report("stream", events, response=True)
    final = home(dialect).reassemble(events, profile, report) if events else None
    return events, report, final
