"""Fixtures: one recorded turn as a deterministic, redacted JSON file, with its fixed form.

Exporting the same flow twice gives the same bytes: no absolute time, no port (the upstream's URL
becomes `{upstream}`, its host name alone is kept for the provider profile), headers sorted by
name, times relative to the request and rounded. Payload key order is kept as sent. A body that
travelled compressed is kept decoded, its wire encoding noted. When the safe repairs apply, the
fixture also carries the fixed request, the repairs and the response of the latest fixed replay
(`R`); exporting the original or that replay gives the same fixture (`turn_pair`). The format is
documented in docs/fixtures.md; `load.flow_from_fixture` reads it back (and refuses newer versions)."""

from __future__ import annotations

import base64
import http
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from ..analysis import Analysis, BodyTooLarge, analyse, decode_body, safe_repairs
from ..files import write_file
from ..flow import FIXED_REPLAY_NOTE, Flow, FlowState, frames, header
from ..redact import redacted
from ..wire import jsonsafe
from ..wire.check import check_request
from ..wire.frames import Frame
from ..wire.violations import Violation
from .base import Exported, WriteOptions

if TYPE_CHECKING:
    from ..store import Store

FORMAT = "toolwire-fixture"
# 2: `fixed` (fixed request, repairs, fixed replay), decoded compressed bodies with
# `content_encoding`, `upstream_request.host`.
VERSION = 2
UPSTREAM_PLACEHOLDER = "{upstream}"
FORWARDER_PLACEHOLDER = "{forwarder}"

# Values that change on every run of the same turn and mean nothing to a replay.
_VOLATILE_HEADERS = frozenset({"date"})


def body_value(body: bytes, headers: Sequence[tuple[str, str]] = ()) -> dict[str, Any] | None:
    """{"json": value} when the bytes are JSON that survives being read and written back exactly,
    {"text": str} when UTF-8 (JSON too deep, with integers that would be rounded, or with lone
    surrogates stays text: still exact), else {"base64": str}. A body sent with a content-encoding
    (the APIs gzip their JSON) is kept decoded, the encoding noted as "content_encoding"."""
    if not body:
        return None
    encoding = header(list(headers), "content-encoding")
    if encoding:
        try:
            decoded = decode_body(body, list(headers))
        except BodyTooLarge:
            decoded = body
        if decoded is not body:
            value = body_value(decoded)
            return None if value is None else {**value, "content_encoding": encoding}
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(body).decode("ascii")}
    try:
        value = jsonsafe.loads(body)
        jsonsafe.dumps(value)  # nesting orjson cannot write is too deep for the fixture's writer too
    except (orjson.JSONDecodeError, jsonsafe.Unfaithful):
        return {"text": text}
    return {"json": value}


def _headers(headers: list[tuple[str, str]], *, host: str | None = None) -> list[str]:
    """Headers as "name: value" lines, sorted by name (a stable sort keeps repeated names in
    their order): header order carries no meaning, and one line each reads well."""
    kept = []
    for name, value in headers:
        lower = name.lower()
        if lower in _VOLATILE_HEADERS:
            continue
        if lower == "host" and host is not None:
            value = host
        kept.append((name, value))
    return [f"{name}: {value}" for name, value in sorted(kept, key=lambda pair: pair[0].lower())]


def _ms(seconds_or_ms: float | None, *, seconds: bool = False) -> float | None:
    if seconds_or_ms is None:
        return None
    return round(seconds_or_ms * 1000.0 if seconds else seconds_or_ms, 1)


def _upstream_path(flow: Flow) -> str:
    """The upstream URL with its scheme and host replaced by the placeholder."""
    parts = urlsplit(flow.upstream_url)
    return UPSTREAM_PLACEHOLDER + parts.path + (f"?{parts.query}" if parts.query else "")


def fixture(flow: Flow, analysis: Analysis, fixed_replay: Flow | None = None) -> dict[str, Any]:
    """The fixture of `flow`; `fixed_replay`: its latest replay with the safe repairs (see turn_pair)."""
    # The store holds flows redacted already, but not those an older version stored, nor a flow
    # straight from the forwarder.
    recorded, flow = flow, redacted(flow)
    if flow.request_body != recorded.request_body:
        analysis = replace(analysis, request=analyse(flow).request)  # the fixed request is made from this one
    request: dict[str, Any] = {
        "method": flow.method,
        "path": flow.path,
        "query": flow.query,
        "headers": _headers(flow.request_headers, host=FORWARDER_PLACEHOLDER),
        "body": body_value(flow.request_body, flow.request_headers),
    }
    upstream: dict[str, Any] = {
        "url": _upstream_path(flow),
        "host": urlsplit(flow.upstream_url).hostname or "",
        "headers": _headers(flow.upstream_request_headers, host=UPSTREAM_PLACEHOLDER),
        "same_body_as_request": flow.upstream_request_body is None,
    }
    if flow.upstream_request_body is not None:
        upstream["body"] = body_value(flow.upstream_request_body, flow.upstream_request_headers)
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "dialect": analysis.dialect.value if analysis.dialect is not None else None,
        "mode": flow.mode.value,
        "translate": flow.translate,
        "state": flow.state.value,
        "error": flow.error,
        "request": request,
        "upstream_request": upstream,
        "response": _response(flow),
    }
    if flow.upstream_response_body is not None:
        data["upstream_response"] = {"body": body_value(flow.upstream_response_body, flow.response_headers)}
    if flow.websocket:
        data["websocket"] = True  # its response holds the socket's frames (frame_value)
    if flow.history is not None:
        # A socket turn's history, which its findings were judged with (inspector/sockets.py).
        data["history"] = orjson.loads(flow.history)
    data["notes"] = list(flow.notes)
    data["violations"] = _violations(analysis.violations)
    data["fixed"] = _fixed(analysis, fixed_replay, flow)
    return data


def _response(flow: Flow) -> dict[str, Any]:
    response: dict[str, Any] = {
        "status": flow.status,
        "headers": _headers(flow.response_headers),
        "streamed": flow.streamed,
        "ttfb_ms": _ms(flow.ttfb_ms),
        "latency_ms": _ms(flow.latency_ms),
    }
    if flow.websocket:
        response["frames"] = [frame_value(frame, flow.started_at) for frame in frames(flow)]
    elif flow.chunks:
        response["chunks"] = [{"t_ms": _ms(c.t, seconds=True), **(chunk_value(c.data))} for c in flow.chunks]
    else:
        response["body"] = body_value(flow.response_body, flow.response_headers)
    return response


def _violations(violations: list[Violation]) -> list[dict[str, Any]]:
    return [{"where": v.where, "rule": v.rule, "severity": v.severity.value, "pointer": v.pointer,
             "message": v.message, "why": v.why, "hint": v.hint} for v in violations]


def _fixed(analysis: Analysis, replay: Flow | None, flow: Flow) -> dict[str, Any] | None:
    """The request with the safe repairs applied (what `R` sends), the repairs, and what the fixed
    replay got back; None when no repair applies or none can be made faithfully."""
    try:
        repaired = safe_repairs(analysis, flow)
    except jsonsafe.Unfaithful:
        return None
    if repaired is None or not repaired.repairs:
        return None
    assert analysis.dialect is not None  # safe_repairs answers only for a known dialect
    fixed: dict[str, Any] = {
        "request": {"body": {"json": repaired.payload}},
        "repairs": [{"rule": r.rule, "pointer": r.pointer, "action": r.action, "detail": r.detail}
                    for r in repaired.repairs],
        "violations": _violations(check_request(repaired.payload, analysis.dialect)),
        "replay": None,
    }
    if replay is not None:
        replay = redacted(replay)
        replayed = analyse(replay)
        fixed["replay"] = {**_response(replay), "state": replay.state.value, "error": replay.error,
                           "violations": _violations([v for v in replayed.violations if v.where != "request"])}
    return fixed


def turn_pair(flow: Flow, get: Callable[[int], Flow | None],
              replays_of: Callable[[int], list[int]]) -> tuple[Flow, Flow | None]:
    """(original, its latest fixed replay or None) for `flow`, which may be either: exporting the
    one or the other gives the same fixture. `get` reads a flow, `replays_of` lists the ids of a
    flow's fixed replays."""
    if flow.replay_of is not None and FIXED_REPLAY_NOTE in flow.notes:
        original = get(flow.replay_of)
        if original is not None:
            return original, flow
        return flow, None
    found = [f for f in map(get, replays_of(flow.id)) if f is not None and f.state is not FlowState.PENDING]
    return flow, (found[-1] if found else None)


def upstream_origin(host: str) -> str:
    """`scheme://host` of a fixture's upstream host name (the port is not kept): plain HTTP on
    loopback, where local servers listen, else HTTPS."""
    host = host or "localhost"
    return f"{'http' if host in ('localhost', '127.0.0.1', '::1') else 'https'}://{host}"


def client_url(data: dict[str, Any]) -> str:
    """The URL of a fixture's request as the client sent it, on the upstream's host (HAR, cassettes)."""
    request: dict[str, str] = data["request"]
    return (upstream_origin(data["upstream_request"].get("host") or "") + request["path"]
            + (f"?{request['query']}" if request["query"] else ""))


def reason_phrase(status: int | None) -> str:
    try:
        return http.HTTPStatus(status or 0).phrase
    except ValueError:
        return ""


def carried(data: dict[str, Any]) -> tuple[dict[str, Any], bytes, bytes]:
    """A fixture split for a container with its own body fields (HAR, cassettes): (what the
    container has no field for, the request body bytes, the response body bytes; a stream's chunks
    concatenated). `load.fixture_from_carried` puts them back together."""
    request, response = data["request"], data["response"]
    chunks = response.get("chunks")
    parts = [body_bytes(c) for c in chunks] if chunks is not None else []
    request_meta = _meta(request["body"])
    return ({
        "fixture": {**{k: v for k, v in data.items() if k not in ("request", "response")},
                    "request": {k: v for k, v in request.items() if k != "body"},
                    "response": {k: v for k, v in response.items() if k not in ("body", "chunks")}},
        "request_body": request_meta,
        "response_body": None if chunks is not None else _meta(response.get("body")),
        "chunks": None if chunks is None else [{"t_ms": c["t_ms"], "bytes": len(p)} for c, p in zip(chunks, parts, strict=True)],
    }, body_bytes(request["body"]), b"".join(parts) if chunks is not None else body_bytes(response.get("body")))


def _meta(body: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a body value says besides its bytes: its content-encoding, and whether it was binary."""
    if body is None:
        return None
    meta = {k: v for k, v in body.items() if k not in ("json", "text", "base64")}
    return {**meta, "base64": True} if "base64" in body else meta


def body_bytes(body: Any) -> bytes:
    """A body value (see body_value) back to bytes; JSON is written compactly."""
    if body is None:
        return b""
    if "json" in body:
        return jsonsafe.dumps(body["json"])
    if "text" in body:
        text: str = body["text"]
        return text.encode()
    return base64.b64decode(body["base64"])


def header_pairs(lines: list[str]) -> list[tuple[str, str]]:
    """Fixture headers ("name: value" lines) back to pairs."""
    return [(name, value) for name, _, value in (line.partition(": ") for line in lines)]


# A WebSocket flow's frames in a fixture: `{"t_ms", "from": "client"|"server", "opcode": 1 (text) or
# 2 (binary), "text" or "base64"}`, in the order they passed (opcodes as RFC 6455 numbers them).
TEXT_OPCODE, BINARY_OPCODE = 1, 2


def frame_value(frame: Frame, started: float) -> dict[str, Any]:
    payload = chunk_value(frame.payload) if frame.text else {"base64": base64.b64encode(frame.payload).decode("ascii")}
    return {"t_ms": _ms(frame.at - started, seconds=True), "from": frame.direction.value,
            "opcode": TEXT_OPCODE if frame.text else BINARY_OPCODE, **payload}


def chunk_value(data: bytes) -> dict[str, str]:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def dumps(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_fixture(flow: Flow, path: str | Path, fixed_replay: Flow | None = None) -> Path:
    return write_file(path, dumps(fixture(flow, analyse(flow), fixed_replay)))


# -- the fixture's write ------------------------------------------------------------------------

def exported(flow: Flow, get: Callable[[int], Flow | None], replays_of: Callable[[int], list[int]],
             analysis_of: Callable[[Flow], Analysis] = analyse) -> Exported:
    """`analysis_of`: the store's stored analysis (Store.analysis), where there is a store."""
    original, replay = turn_pair(flow, get, replays_of)
    analysis = analysis_of(original)
    return Exported(original.id, fixture(original, analysis, replay), original.started_at, original,
                    origin=get(original.replay_of) if original.replay_of is not None else None, analysis=analysis)


def from_store(store: Store, flow: Flow) -> Exported:
    """`exported` for a stored flow: its fixed replays are the store's flows that say so."""
    def fixed_replays(flow_id: int) -> list[int]:
        return [row.id for row in store.rows(text=f"#{flow_id}") if row.replay_of == flow_id and row.replay_fixed]

    turn = exported(flow, store.get, fixed_replays, store.analysis)
    session = store.session(turn.flow.session_id) if turn.flow is not None else None
    turn.session_started = session.started_at if session is not None else None
    return turn


def write(turns: Sequence[Exported], options: WriteOptions) -> bytes:
    (turn,) = turns
    return dumps(turn.data)
