"""HAR 1.2 (the HTTP Archive devtools, mitmproxy and HTTP Toolkit read and write): writing our
fixtures as a HAR log, and reading any tool's HAR back as turns.

Each entry is the exchange as the client saw it: its request (URL on the upstream's host), the
response it received, a stream as its concatenated body. What HAR has no field for sits under
`_toolwire` (HAR's place for custom fields): the rest of our fixture (mode, translation, notes,
findings, the fixed request and replay), the body encodings, and each stream chunk's time and size,
so `open` and `mock` get the turn back exactly. Built from the fixture, so it is redacted and
stable like the fixture."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Sequence
from datetime import datetime, UTC
from importlib import metadata
from typing import Any

from ..flow import Flow, frame_chunk, header
from ..redact import query_pairs, redacted
from ..wire.frames import Direction
from . import fixture
from .base import Exported, LoadError, Turn, WriteOptions
from .fixture import header_pairs
from .load import NoneType, Shape, faithful, fixture_from_carried, flow_from_fixture, iso_time, recorded_flow


def _creator() -> dict[str, str]:
    try:
        version = metadata.version("toolwire-inspect")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        version = "unknown"
    return {"name": "toolwire-inspect", "version": version}


def document(turns: list[tuple[dict[str, Any], float]]) -> dict[str, Any]:
    """A HAR log of fixtures, each with the unix time its request arrived."""
    return {"log": {"version": "1.2", "creator": _creator(), "pages": [],
                    "entries": [_entry(data, started) for data, started in turns]}}


def dumps(turns: list[tuple[dict[str, Any], float]]) -> bytes:
    return (json.dumps(document(turns), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write(turns: Sequence[Exported], options: WriteOptions) -> bytes:
    return dumps([(turn.data, turn.started_at) for turn in turns])


def _pairs(lines: list[str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in header_pairs(lines)]


def _entry(data: dict[str, Any], started: float) -> dict[str, Any]:
    request, response = data["request"], data["response"]
    carried, request_body, response_body = fixture.carried(data)
    host = data["upstream_request"].get("host") or "localhost"
    request_headers = [line if not line.lower().startswith("host: ") else f"Host: {host}"
                       for line in request["headers"]]
    har_request: dict[str, Any] = {
        "method": request["method"], "url": fixture.client_url(data), "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _pairs(request_headers),
        "queryString": [{"name": k, "value": v} for k, v in query_pairs(request["query"])],
        "headersSize": -1, "bodySize": len(request_body),
    }
    if request["body"] is not None:
        mime = header(header_pairs(request["headers"]), "content-type") or "application/octet-stream"
        # HAR 1.2's postData has text only: a body that is not UTF-8 goes as base64, said so in _toolwire.
        har_request["postData"] = {"mimeType": mime, "text": _text(request_body, carried["request_body"])}
    content: dict[str, Any] = {"size": len(response_body),
                               "mimeType": header(header_pairs(response["headers"]), "content-type") or ""}
    try:
        content["text"] = response_body.decode("utf-8")
    except UnicodeDecodeError:
        content["text"], content["encoding"] = base64.b64encode(response_body).decode("ascii"), "base64"
    sockets = {}
    if data.get("websocket"):
        # The frames go where Chrome and mitmproxy put them; _toolwire does not carry them twice.
        carried["fixture"]["response"].pop("frames", None)
        sockets["_webSocketMessages"] = [_message(frame, started) for frame in response.get("frames") or ()]
    status = response["status"]
    ttfb = response.get("ttfb_ms") or 0.0
    latency = response.get("latency_ms") or ttfb
    return {
        "startedDateTime": datetime.fromtimestamp(started, UTC).isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"),
        "time": latency,
        "request": har_request,
        "response": {
            "status": status or 0, "statusText": fixture.reason_phrase(status), "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": _pairs(response["headers"]), "content": content, "redirectURL": "",
            "headersSize": -1, "bodySize": -1 if status is None else len(response_body),
        },
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": ttfb,
                    "receive": round(max(0.0, latency - ttfb), 1)},
        **sockets,
        "_toolwire": carried,
    }


# Chrome's and mitmproxy's WebSocket messages in a HAR entry: {type: send|receive, time: seconds since
# the epoch, opcode: 1 text | 2 binary, data: the text, or a binary payload in base64}.
_MESSAGE_TYPES = {Direction.CLIENT.value: "send", Direction.SERVER.value: "receive"}


def _message(frame: dict[str, Any], started: float) -> dict[str, Any]:
    return {"type": _MESSAGE_TYPES[frame["from"]], "time": started + frame["t_ms"] / 1000.0, "opcode": frame["opcode"],
            "data": frame["text"] if "text" in frame else frame["base64"]}


def _frames(shape: Shape, entry: dict[str, Any], started: float) -> list[dict[str, Any]] | None:
    """An entry's `_webSocketMessages` as fixture frames (None when it has none)."""
    messages = shape.items(entry, "_webSocketMessages", dict)
    if messages is None:
        return None
    found = []
    for n, message in enumerate(messages):
        at = f"_webSocketMessages[{n}]."
        kind = shape.member(message, "type", str, at)
        if kind not in ("send", "receive"):
            raise shape.refuse(f"{at}type", "is neither send nor receive")
        opcode = shape.member(message, "opcode", int, at)
        if opcode not in (fixture.TEXT_OPCODE, fixture.BINARY_OPCODE):
            continue  # a control frame some tool kept: no data frame
        time = shape.member(message, "time", (int, float), at)
        data = shape.member(message, "data", str, at)
        payload = {"text": data} if opcode == fixture.TEXT_OPCODE else \
            {"base64": base64.b64encode(_base64(shape, data, f"{at}data")).decode("ascii")}
        found.append({"t_ms": max(0.0, (time - started) * 1000.0),
                      "from": Direction.CLIENT.value if kind == "send" else Direction.SERVER.value,
                      "opcode": opcode, **payload})
    return found


def _text(body: bytes, meta: dict[str, Any] | None) -> str:
    if meta is not None and meta.get("base64"):
        return base64.b64encode(body).decode("ascii")
    return body.decode("utf-8")


# -- reading -----------------------------------------------------------------------------------

def claims(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("log"), dict)


def read(data: bytes, document: Any, source: str) -> list[Turn]:
    return turns_from_har(faithful(data, source), source)


def turns_from_har(document: dict[str, Any], source: str) -> list[Turn]:
    entries = document["log"].get("entries")
    if not isinstance(entries, list):
        raise LoadError(f"{source}: a HAR file without log.entries")
    turns = []
    for index, entry in enumerate(entries, start=1):
        where = f"{source}#entry{index}" if len(entries) > 1 else source
        turns.append(_turn(Shape(where).typed(entry, dict, f"log.entries[{index - 1}]"), where, index))
    return turns


def _turn(entry: dict[str, Any], where: str, flow_id: int) -> Turn:
    turn = _read(entry, where, flow_id)
    request, response = ("log", "entries", flow_id - 1, "request"), ("log", "entries", flow_id - 1, "response")
    turn.bodies = {"request": (*request, "postData", "text"), "upstream": (*request, "postData", "text"),
                   "response": (*response, "content", "text")}
    return turn


def _read(entry: dict[str, Any], where: str, flow_id: int) -> Turn:
    shape = Shape(where)
    request, response = shape.member(entry, "request", dict), shape.member(entry, "response", dict)
    posted = shape.member(request, "postData", (dict, NoneType), "request.", default=None) or {}
    if "text" not in posted and shape.items(posted, "params", dict, "request.postData."):
        raise shape.refuse("request.postData", "holds params and no text: a form body is not read")
    text = shape.member(posted, "text", str, "request.postData.", default="")
    ours = shape.member(entry, "_toolwire", (dict, NoneType), default=None)
    carried_base64 = ours is not None and bool((shape.member(ours, "request_body", (dict, NoneType), "_toolwire.",
                                                             default=None) or {}).get("base64"))
    request_body = _base64(shape, text, "request.postData.text") if carried_base64 else text.encode()
    response_body = _content_bytes(shape, shape.member(response, "content", (dict, NoneType), "response.",
                                                       default=None) or {})
    started = iso_time(entry.get("startedDateTime"))
    frames = _frames(shape, entry, started)
    if ours is not None and isinstance(ours.get("fixture"), dict):
        data = fixture_from_carried(ours, request_body, response_body, where)
        if frames is not None and data.get("websocket"):
            data["response"]["frames"] = frames
            data["response"].pop("body", None)
        flow = flow_from_fixture(data, where, flow_id)
        flow.started_at = started
        return Turn(flow, where, data)
    flow = _foreign(shape, entry, request, response, request_body, response_body, flow_id)
    if frames is not None:
        flow.websocket = True
        flow.chunks = [frame_chunk(frame["t_ms"] / 1000.0, Direction(frame["from"]), frame["opcode"] == fixture.TEXT_OPCODE,
                                   fixture.body_bytes(frame)) for frame in frames]
        flow.response_body = b"".join(chunk.data for chunk in flow.chunks)
        flow = redacted(flow)  # the frames too: a key the upgrade carried is scrubbed wherever it shows
    return Turn(flow, where)


def _base64(shape: Shape, text: str, place: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise shape.refuse(place, f"is not base64 ({exc})") from None


def _content_bytes(shape: Shape, content: dict[str, Any]) -> bytes:
    text = shape.member(content, "text", (str, NoneType), "response.content.", default=None) or ""
    encoding = shape.member(content, "encoding", (str, NoneType), "response.content.", default=None)
    if encoding not in (None, "", "base64"):
        raise shape.refuse("response.content.encoding", "is not base64, the one encoding HAR 1.2 names")
    return _base64(shape, text, "response.content.text") if encoding == "base64" else text.encode()


def _milliseconds(value: Any) -> float | None:
    """A HAR time: a number of milliseconds, -1 when it does not apply. Anything else (another tool's
    "NaN", a string, a negative or infinite number) is a time not known, not a reason to lose the turn."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def _foreign(shape: Shape, entry: dict[str, Any], request: dict[str, Any], response: dict[str, Any],
             request_body: bytes, response_body: bytes, flow_id: int) -> Flow:
    timings = found if isinstance(found := entry.get("timings"), dict) else {}
    # Time to first byte: the phases before the response (-1: not applicable).
    ttfb = sum(_milliseconds(timings.get(k)) or 0.0 for k in ("blocked", "dns", "connect", "send", "wait"))
    status = shape.member(response, "status", int, "response.")
    status = None if status == 0 else shape.status(status, "response.status")  # 0: no response (devtools)
    latency = _milliseconds(entry.get("time"))
    return recorded_flow(flow_id, shape.member(request, "method", str, "request."),
                         shape.url(shape.member(request, "url", str, "request."), "request.url"),
                         _headers(shape, request, "request."),
                         request_body, status, _headers(shape, response, "response."), response_body,
                         started_at=iso_time(entry.get("startedDateTime")), ttfb_ms=round(ttfb, 1),
                         latency_ms=ttfb if latency is None else latency)


def _headers(shape: Shape, holder: dict[str, Any], at: str) -> list[tuple[str, str]]:
    """HAR headers as pairs; HTTP/2 pseudo-headers (Chrome's `:authority`…) are no headers."""
    pairs = []
    for n, item in enumerate(shape.items(holder, "headers", dict, at) or ()):
        name = shape.member(item, "name", str, f"{at}headers[{n}].")
        value = shape.member(item, "value", str, f"{at}headers[{n}].")
        if not name.startswith(":"):
            pairs.append((name, value))
    return pairs
