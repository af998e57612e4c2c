"""Streamed responses: parse the relayed bytes into events, check them, and rebuild the final response
a client would hold, for each dialect. One pass over the events for both.

Events are the parsed `data:` payloads of an SSE body (a string where the data is not JSON, such as
Chat's "[DONE]"), or the elements of Gemini's JSON-array stream; a stream violation's pointer is
`/<event index>/…` into that list."""

from __future__ import annotations

import json
from typing import Any

import orjson

from .dialect import Dialect
from .dialects import home
from .profiles import Profile
from .rules.base import Report
from .sse import parse_all


def parse_events(body: bytes, dialect: Dialect) -> list[Any]:
    """The events of a streamed body. Gemini streams without alt=sse are one JSON array, possibly cut
    short; the whole elements before the cut are kept."""
    stripped = body.lstrip()
    if dialect is Dialect.GEMINI and stripped[:1] == b"[":
        try:
            document = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return _array_prefix(stripped.decode("utf-8", "replace"))
        return document if isinstance(document, list) else [document]
    events: list[Any] = []
    for event in parse_all(body):
        try:
            events.append(orjson.loads(event.data))
        except orjson.JSONDecodeError:
            events.append(event.data)
    return events


def _array_prefix(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    events: list[Any] = []
    position = 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] == "]":
            return events
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError:
            return events
        events.append(value)


def ends_complete(body: bytes, dialect: Dialect | None) -> bool:
    """Whether a streamed body ends with its dialect's last content event (or its end marker), so a
    client that hangs up after it had the whole answer. Events that carry no content (pings, a usage
    chunk) are passed over; only the stream's tail is parsed."""
    if dialect is None:
        return False
    stripped = body.rstrip()
    if dialect is Dialect.GEMINI and body.lstrip()[:1] == b"[":
        if stripped.endswith(b"]"):
            return True
        return _last_content_final(parse_events(body, dialect), dialect)
    if not body.endswith((b"\n\n", b"\r\n\r\n", b"\r\r")):
        return False  # the last event was never closed by its blank line: the client never had it
    start = len(stripped)
    for _ in range(_TAIL_EVENTS):
        start = max(stripped.rfind(b"\n\n", 0, start), stripped.rfind(b"\r\n\r\n", 0, start),
                    stripped.rfind(b"\r\r", 0, start), 0)
        if start == 0:
            break
    return _last_content_final(parse_events(stripped[start:] + b"\n\n", dialect), dialect)


# How many trailing events a hang-up is judged on: the last content event and the few that carry none
# after it (Chat's usage chunk, Anthropic's pings).
_TAIL_EVENTS = 4


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
