"""ConverseStream answers: the `application/vnd.amazon.eventstream` framing, read by botocore's own
event-stream parser, and the events merged into the Converse response a client would hold.

An event is what boto3's `converse_stream()` yields: `{"<event type>": payload}`, an exception
delivered inside the HTTP 200 as `{"<exception type>": {"message": …}}` (botocore raises it), and a
payload that is not JSON as its text. `reassemble(events, profile, report)` is this dialect's stream
builder (see `wire.streams`)."""

from __future__ import annotations

import binascii
import functools
import struct
from typing import Any

import orjson

from ...pointer import join
from ...profiles import Profile
from ...rules.base import Report, as_dict, short
from .shape import EXCEPTIONS

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_PIECE = 1 << 16  # fed to the parser a piece at a time: it copies its whole buffer per message
_SMALLEST = 16  # prelude (12 bytes) + message CRC (4): a frame that says it is shorter is corrupt


def _buffer() -> Any:
    """botocore's event-stream parser (the `bedrock` extra); None without botocore, when a Bedrock
    stream is recorded as bytes and read as no events."""
    try:
        from botocore.eventstream import EventStreamBuffer
    except ImportError:
        return None
    buffer = EventStreamBuffer()
    # Where botocore keeps it (a private name: renamed one day, the buffer merely parses every block).
    buffer._header_parser = _RememberedHeaders(buffer._header_parser)  # type: ignore[attr-defined]  # private
    return buffer


class _RememberedHeaders:
    """botocore's header parser, remembering the few header blocks a stream repeats: the frames of
    an answer differ only in their event type, and parsing the same headers again was most of the
    time botocore spends on a frame (the translated stream's 100 ms/MB budget)."""

    _KEPT = 64  # distinct blocks remembered: a stream's event and exception types, and then some

    def __init__(self, parser: Any) -> None:
        self._parser = parser
        self._seen: dict[bytes, dict[str, Any]] = {}

    def parse(self, data: bytes) -> dict[str, Any]:
        found = self._seen.get(data)
        if found is None:
            found = self._parser.parse(data)  # a malformed block raises as it did, and is not kept
            if len(self._seen) < self._KEPT:
                self._seen[data] = found
        return dict(found)


def frames(body: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """(headers, payload) of each whole frame of `body`, by botocore's parser; a frame cut short, or
    one whose prelude or CRC is wrong, ends the list (everything before it is kept)."""
    return FrameReader().feed(body)


class FrameReader:
    """Whole frames out of bytes fed as they arrive, by botocore's parser: a frame cut short waits
    for its rest; a corrupt one (its prelude or CRC wrong, a length that lies) ends the reading,
    since nothing after it can be found, and `broken` says why."""

    def __init__(self) -> None:
        self._buffer = _buffer()
        self.broken = "" if self._buffer is not None else \
            "reading an event stream needs botocore: pip install 'toolwire-inspect[bedrock]'"
        self.pending = 0  # bytes fed that no whole frame has used yet

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], bytes]]:
        found: list[tuple[dict[str, Any], bytes]] = []
        if self.broken:
            return found
        self.pending += len(data)
        for start in range(0, len(data), _PIECE):
            self._buffer.add_data(data[start:start + _PIECE])
            try:
                for message in self._buffer:
                    size = message.prelude.total_length
                    if size < _SMALLEST:
                        self.broken = f"a frame that says it is {size} bytes long, shorter than its own prelude"
                        return found
                    self.pending -= size
                    found.append((message.headers, message.payload))
            except Exception as exc:  # botocore's ParserError family, or struct's error on a frame that lies about its size
                self.broken = f"{type(exc).__name__}: {exc}"
                return found
        return found


def event_of(headers: dict[str, Any], payload: bytes) -> Any:
    """One frame as boto3 reads it: the event named by its type header, with its JSON payload."""
    kind = headers.get(":message-type")
    if kind == "exception":
        name = str(headers.get(":exception-type") or "exception")
    elif kind == "error":
        return {str(headers.get(":error-code") or "error"): {"message": str(headers.get(":error-message") or "")}}
    else:
        name = str(headers.get(":event-type") or "event")
    try:
        body = orjson.loads(payload) if payload else {}
    except orjson.JSONDecodeError:
        return payload.decode("utf-8", "replace")
    return {name: body}


def frame(headers: list[tuple[str, str]], payload: bytes) -> bytes:
    """One event-stream frame (string headers only): prelude, its CRC, headers, payload, message CRC.
    botocore has no writer; the mock and the translated streams need one, and the format is four
    length fields and two CRC32s."""
    encoded = _header_block(tuple(headers))
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    head = prelude + struct.pack(">I", binascii.crc32(prelude))
    message = head + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


@functools.lru_cache(maxsize=64)  # a stream's frames repeat a few header blocks (one per event type)
def _header_block(headers: tuple[tuple[str, str], ...]) -> bytes:
    return b"".join(struct.pack(">B", len(name)) + name.encode() + b"\x07" + struct.pack(">H", len(value.encode()))
                    + value.encode() for name, value in headers)


def encode_event(event: dict[str, Any]) -> bytes:
    name, body = next(iter(event.items()))
    payload = orjson.dumps(body)
    if name in EXCEPTIONS:
        return frame([(":exception-type", name), (":content-type", "application/json"),
                      (":message-type", "exception")], payload)
    return frame([(":event-type", name), (":content-type", "application/json"), (":message-type", "event")], payload)


class EventStreamFraming:
    content_types: tuple[str, ...] = (CONTENT_TYPE,)

    def parse(self, body: bytes) -> list[Any]:
        return [event_of(headers, payload) for headers, payload in frames(body)]

    def encode(self, events: list[Any]) -> list[bytes]:
        return [encode_event(event) for event in events]

    def tail(self, body: bytes) -> list[Any]:
        return self.parse(body)[-8:]


FRAMING = EventStreamFraming()


class Unreadable:
    """What an event-stream reader yields where the stream can no longer be read (corrupt framing,
    the stream ending inside a frame): the bridge's stream parser ends the answer with it as a failure."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why

    def __str__(self) -> str:
        return self.why


class EventReader:
    """A ConverseStream answer read as it arrives: each whole frame as the event `event_of` makes of
    it, then an `Unreadable` once where the stream breaks or ends inside a frame (the translation's
    incremental reader of this framing; the bridge's StreamParser reads what it yields)."""

    def __init__(self) -> None:
        self._frames = FrameReader()
        self._told = False

    def feed(self, data: bytes) -> list[Any]:
        events: list[Any] = [event_of(headers, payload) for headers, payload in self._frames.feed(data)]
        return events + self._problem(self._frames.broken)

    def close(self) -> list[Any]:
        cut = self._frames.pending and f"the stream ended inside an event-stream frame ({self._frames.pending} bytes " \
                                       "of it arrived)"
        return self._problem(self._frames.broken or cut or "")

    def _problem(self, why: str) -> list[Any]:
        if not why or self._told:
            return []
        self._told = True
        return [Unreadable(f"the upstream's event stream cannot be read on: {why}")]


def is_final(event: Any) -> bool | None:
    """messageStop ends the answer (metadata after it carries only usage); an exception ends it cut."""
    if not isinstance(event, dict) or len(event) != 1:
        return None
    kind = next(iter(event))
    if kind == "messageStop":
        return True
    return None if kind == "metadata" else False


def reassemble(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
    """The ConverseResponse the events add up to: content blocks by contentBlockIndex, toolUse input
    joined from its fragments and parsed (BR-10), the stop reason and usage; an exception event is
    reported (BR-11) and kept as the response's `error`."""
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, tuple[list[str], str]] = {}
    result: dict[str, Any] = {}
    for number, event in enumerate(events):
        if not isinstance(event, dict) or len(event) != 1:
            continue
        kind, body = next(iter(event.items()))
        at = join("", number, kind)
        if kind in EXCEPTIONS or kind.endswith("Exception"):
            message = as_dict(body).get("message")
            report.add("BR-11", at, f"the stream ended with {kind}" + (f": {short(message)}" if message else ""))
            result["error"] = {kind: body}
            continue
        body = as_dict(body)
        index = body.get("contentBlockIndex")
        if kind == "contentBlockStart":
            start = as_dict(as_dict(body.get("start")).get("toolUse"))
            if isinstance(index, int):
                blocks[index] = {"toolUse": {"toolUseId": start.get("toolUseId"), "name": start.get("name"),
                                             "input": {}}}
                inputs[index] = ([], join(at, "start", "toolUse"))
        elif kind == "contentBlockDelta" and isinstance(index, int):
            delta = as_dict(body.get("delta"))
            if isinstance(delta.get("text"), str):
                block = blocks.setdefault(index, {"text": ""})
                if "text" not in block:
                    report.add("BR-10", join(at, "delta", "text"), f"a text delta for content block {index}, which "
                                                                   "started as a toolUse block")
                    continue
                block["text"] += delta["text"]
            elif isinstance(as_dict(delta.get("toolUse")).get("input"), str):
                if index not in inputs:
                    report.add("BR-10", join(at, "delta", "toolUse"), f"toolUse input for content block {index}, "
                                                                      "which no contentBlockStart opened")
                    continue
                inputs[index][0].append(delta["toolUse"]["input"])
        elif kind == "messageStop":
            result["stopReason"] = body.get("stopReason")
            if "additionalModelResponseFields" in body:
                result["additionalModelResponseFields"] = body["additionalModelResponseFields"]
        elif kind == "metadata":
            for key in ("usage", "metrics"):
                if key in body:
                    result[key] = body[key]
    for index, (pieces, where) in inputs.items():
        text = "".join(pieces)
        try:
            value = orjson.loads(text) if text else {}
        except orjson.JSONDecodeError:
            report.add("BR-10", where, f"the toolUse input fragments of content block {index} join to "
                                       f"{short(text)}, which is not JSON")
            value = text
        if not isinstance(value, (dict, str)):
            report.add("BR-10", where, f"the toolUse input of content block {index} is {short(value)}, not an object")
        blocks[index]["toolUse"]["input"] = value
    if not blocks and not result:
        return None
    content = [blocks[index] for index in sorted(blocks)]
    calls = sum(1 for block in content if "toolUse" in block)
    reason = result.get("stopReason")
    if "error" not in result:
        if calls and reason not in (None, "tool_use"):
            report.add("BR-10", "", f"the stream sent {calls} toolUse block(s) but stopReason {short(reason)}")
        elif reason == "tool_use" and not calls:
            report.add("BR-10", "", "stopReason is 'tool_use' but the stream sent no toolUse block")
    return {"output": {"message": {"role": "assistant", "content": content}}, **result}



def chunks(body: bytes) -> list[Any] | None:
    """InvokeModelWithResponseStream's answer (a ResponseStream): the model's own events, each the
    base64 `bytes` of a `chunk` event decoded as JSON (a string where it is not); an exception event
    as `{"<exception type>": payload}`. None when `body` holds no event-stream frame at all."""
    found = frames(body)
    if not found:
        return None
    events: list[Any] = []
    for headers, payload in found:
        event = event_of(headers, payload)
        part = event.get("chunk") if isinstance(event, dict) else None
        if not isinstance(part, dict):
            events.append(event)
            continue
        try:
            data = binascii.a2b_base64(str(part.get("bytes") or ""), strict_mode=True)
            events.append(orjson.loads(data))
        except (binascii.Error, ValueError):  # orjson's JSONDecodeError is a ValueError
            events.append(str(part.get("bytes")))
    return events


def encode_chunk(event: dict[str, Any]) -> bytes:
    """One model event as InvokeModelWithResponseStream frames it (the mock, the tests)."""
    data = binascii.b2a_base64(orjson.dumps(event), newline=False).decode()
    return frame([(":event-type", "chunk"), (":content-type", "application/json"), (":message-type", "event")],
                 orjson.dumps({"bytes": data}))
