"""Fixtures: one recorded turn as a deterministic, redacted JSON file.

Exporting the same flow twice gives the same bytes: no absolute time, no port, no upstream host
(replaced by `{upstream}`), headers sorted by name, times relative to the request and rounded.
Payload key order is kept as sent. `inspector.mock` serves these files back (`toolwire-inspect
mock FIXTURE...`). The format is documented in the README ("Fixture format")."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from .analysis import Analysis, analyse
from .flow import Flow
from .redact import redacted
from .wire import jsonsafe

FORMAT = "toolwire-fixture"
VERSION = 1
UPSTREAM_PLACEHOLDER = "{upstream}"
FORWARDER_PLACEHOLDER = "{forwarder}"

# Values that change on every run of the same turn and mean nothing to a replay.
_VOLATILE_HEADERS = frozenset({"date"})


def body_value(body: bytes) -> dict[str, Any] | None:
    """{"json": value} when the bytes are JSON that survives being read and written back exactly,
    {"text": str} when UTF-8 (JSON too deep, with integers that would be rounded, or with lone
    surrogates stays text: still exact), else {"base64": str}."""
    if not body:
        return None
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


def fixture(flow: Flow, analysis: Analysis) -> dict[str, Any]:
    # The store holds flows redacted already, but not those an older version stored, nor a flow
    # straight from the forwarder.
    flow = redacted(flow)
    request: dict[str, Any] = {
        "method": flow.method,
        "path": flow.path,
        "query": flow.query,
        "headers": _headers(flow.request_headers, host=FORWARDER_PLACEHOLDER),
        "body": body_value(flow.request_body),
    }
    upstream: dict[str, Any] = {
        "url": _upstream_path(flow),
        "headers": _headers(flow.upstream_request_headers, host=UPSTREAM_PLACEHOLDER),
        "same_body_as_request": flow.upstream_request_body is None,
    }
    if flow.upstream_request_body is not None:
        upstream["body"] = body_value(flow.upstream_request_body)
    response: dict[str, Any] = {
        "status": flow.status,
        "headers": _headers(flow.response_headers),
        "streamed": flow.streamed,
        "ttfb_ms": _ms(flow.ttfb_ms),
        "latency_ms": _ms(flow.latency_ms),
    }
    if flow.chunks:
        response["chunks"] = [{"t_ms": _ms(c.t, seconds=True), **(_chunk_value(c.data))} for c in flow.chunks]
    else:
        response["body"] = body_value(flow.response_body)
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
        "response": response,
    }
    if flow.upstream_response_body is not None:
        data["upstream_response"] = {"body": body_value(flow.upstream_response_body)}
    data["notes"] = list(flow.notes)
    data["violations"] = [
        {"where": v.where, "rule": v.rule, "severity": v.severity.value, "pointer": v.pointer,
         "message": v.message, "why": v.why, "hint": v.hint}
        for v in analysis.violations
    ]
    return data


def _chunk_value(data: bytes) -> dict[str, str]:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def dumps(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_fixture(flow: Flow, path: str | Path) -> Path:
    path = Path(path)
    write_private(path, dumps(fixture(flow, analyse(flow))))
    return path


def write_private(path: str | Path, data: bytes) -> None:
    """Write a file only its owner can read: created so, never readable for a moment, and an
    existing file made so before it gets the data."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "wb") as out:
        os.fchmod(fd, 0o600)
        out.write(data)
