"""Gemini streams (SSE or one JSON array): candidates' parts merged as the SDK's `.text` reads them.

`reassemble(events, profile, report)` is this dialect's stream builder (see `wire.streams`);
`FRAMING` reads either form, `framing_for(query)` is the one a request is answered in."""

from __future__ import annotations

import json
from typing import Any

import orjson

from ...dialect import asks_for_sse
from ...pointer import join
from ...sse import SSE, SSEFraming
from ...profiles import Profile
from ...rules.base import Report, as_dict, as_list
from . import rules as gemini
from .fields import field as gfield
from .shape import unwrapped


def reassemble(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
    candidates: dict[int, dict[str, Any]] = {}
    result: dict[str, Any] = {}
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if key in event:
                result[key] = event[key]
        for position, candidate in enumerate(as_list(event.get("candidates"))):
            if not isinstance(candidate, dict):
                continue
            index = candidate.get("index", position)
            merged = candidates.setdefault(index if isinstance(index, int) else position,
                                           {"content": {"role": "model", "parts": []}})
            for key, value in candidate.items():
                if key not in ("content", "index"):
                    merged[key] = value
            parts = as_list(as_dict(candidate.get("content")).get("parts"))
            base = join("", number, "candidates", position, "content", "parts")
            gemini.check_candidate_parts(report, parts, base)
            for slot, part in enumerate(parts):
                if not isinstance(part, dict):
                    continue
                key, call = gfield(part, "functionCall")
                if isinstance(call, dict) and not profile.vertex:
                    for streaming in ("partialArgs", "willContinue", "partial_args", "will_continue"):
                        if streaming in call:
                            report.add("GM-15", join(base, slot, key, streaming), f"{streaming} is Vertex-only; "
                                                                                  "the Gemini API sends whole calls")
                _merge_part(merged["content"]["parts"], part)
    if not candidates and not result:
        return None
    result["candidates"] = [{"index": index, **candidates[index]} for index in sorted(candidates)]
    return result


def _merge_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    """Adjacent text chunks of one kind (thought or not) join, as the SDK's `.text` reads them."""
    if parts and set(part) <= {"text", "thought"} and isinstance(part.get("text"), str):
        last = parts[-1]
        if set(last) <= {"text", "thought"} and isinstance(last.get("text"), str) and \
                bool(last.get("thought")) == bool(part.get("thought")):
            parts[-1] = {**last, "text": last["text"] + part["text"]}
            return
    parts.append(part)


def is_final(event: Any) -> bool:
    """Whether a client that read `event` had the whole answer: a candidate says why it finished."""
    event = unwrapped(event, "response")
    return isinstance(event, dict) and any(isinstance(c, dict) and c.get("finishReason")
                                           for c in as_list(event.get("candidates")))


class JSONArrayFraming:
    """`streamGenerateContent` without `alt=sse`: one JSON array, sent element by element."""

    content_types: tuple[str, ...] = ("application/json",)

    def parse(self, body: bytes) -> list[Any]:
        """A cut-short array keeps the whole elements before the cut."""
        stripped = body.lstrip()
        try:
            document = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return _array_prefix(stripped.decode("utf-8", "replace"))
        return document if isinstance(document, list) else [document]

    def encode(self, events: list[Any]) -> list[bytes]:
        return [(b"[" if n == 0 else b",\r\n") + orjson.dumps(e) for n, e in enumerate(events)] + [b"]"]

    def tail(self, body: bytes) -> list[Any] | bool:
        return True if body.rstrip().endswith(b"]") else self.parse(body)


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


class GeminiFraming:
    """Either form, told apart by the body's first byte: SSE when the request asked `alt=sse`."""

    content_types: tuple[str, ...] = SSE.content_types

    def parse(self, body: bytes) -> list[Any]:
        return (JSON_ARRAY if body.lstrip()[:1] == b"[" else SSE).parse(body)

    def encode(self, events: list[Any]) -> list[bytes]:
        return SSE.encode(events)

    def tail(self, body: bytes) -> list[Any] | bool:
        return (JSON_ARRAY if body.lstrip()[:1] == b"[" else SSE).tail(body)


JSON_ARRAY = JSONArrayFraming()
FRAMING = GeminiFraming()


def framing_for(query: str) -> JSONArrayFraming | SSEFraming:
    return SSE if asks_for_sse(query) else JSON_ARRAY
