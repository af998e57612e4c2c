"""HAR 1.2 (the HTTP Archive devtools, mitmproxy and HTTP Toolkit read and write): writing our
fixtures as a HAR log, and reading any tool's HAR back as turns (see load.py).

Each entry is the exchange as the client saw it: its request (URL on the upstream's host), the
response it received, a stream as its concatenated body. What HAR has no field for sits under
`_toolwire` (HAR's place for custom fields): the rest of our fixture (mode, translation, notes,
findings, the fixed request and replay), the body encodings, and each stream chunk's time and size,
so `open` and `mock` get the turn back exactly. Built from the fixture, so it is redacted and
stable like the fixture."""

from __future__ import annotations

import base64
import json
from importlib import metadata
from datetime import datetime, UTC
from typing import Any

from . import export
from .flow import Flow, header
from .load import LoadError, Turn, fixture_from_carried, flow_from_fixture, header_pairs, iso_time, recorded_flow
from .redact import query_pairs

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


def _pairs(lines: list[str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in header_pairs(lines)]


def _entry(data: dict[str, Any], started: float) -> dict[str, Any]:
    request, response = data["request"], data["response"]
    carried, request_body, response_body = export.carried(data)
    host = data["upstream_request"].get("host") or "localhost"
    request_headers = [line if not line.lower().startswith("host: ") else f"Host: {host}"
                       for line in request["headers"]]
    har_request: dict[str, Any] = {
        "method": request["method"], "url": export.client_url(data), "httpVersion": "HTTP/1.1", "cookies": [],
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
    status = response["status"]
    ttfb = response.get("ttfb_ms") or 0.0
    latency = response.get("latency_ms") or ttfb
    return {
        "startedDateTime": datetime.fromtimestamp(started, UTC).isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"),
        "time": latency,
        "request": har_request,
        "response": {
            "status": status or 0, "statusText": export.reason_phrase(status), "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": _pairs(response["headers"]), "content": content, "redirectURL": "",
            "headersSize": -1, "bodySize": -1 if status is None else len(response_body),
        },
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": ttfb,
                    "receive": round(max(0.0, latency - ttfb), 1)},
        "_toolwire": carried,
    }


def _text(body: bytes, meta: dict[str, Any] | None) -> str:
    if meta is not None and meta.get("base64"):
        return base64.b64encode(body).decode("ascii")
    return body.decode("utf-8")


# -- reading -----------------------------------------------------------------------------------

def turns_from_har(document: dict[str, Any], source: str) -> list[Turn]:
    entries = document["log"].get("entries")
    if not isinstance(entries, list):
        raise LoadError(f"{source}: a HAR file without log.entries")
    turns = []
    for index, entry in enumerate(entries, start=1):
        where = f"{source}#entry{index}" if len(entries) > 1 else source
        try:
            turns.append(_turn(entry, where, index))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, LoadError):
                raise
            raise LoadError(f"{where}: malformed HAR entry ({type(exc).__name__}: {exc})") from exc
    return turns


def _content_bytes(content: dict[str, Any]) -> bytes:
    text = content.get("text") or ""
    return base64.b64decode(text) if content.get("encoding") == "base64" else text.encode("utf-8")


def _turn(entry: dict[str, Any], where: str, flow_id: int) -> Turn:
    turn = _read(entry, where, flow_id)
    request, response = ("log", "entries", flow_id - 1, "request"), ("log", "entries", flow_id - 1, "response")
    turn.bodies = {"request": (*request, "postData", "text"), "upstream": (*request, "postData", "text"),
                   "response": (*response, "content", "text")}
    return turn


def _read(entry: dict[str, Any], where: str, flow_id: int) -> Turn:
    request, response = entry["request"], entry["response"]
    posted = (request.get("postData") or {}).get("text", "")
    ours = entry.get("_toolwire")
    carried_base64 = isinstance(ours, dict) and bool((ours.get("request_body") or {}).get("base64"))
    request_body = base64.b64decode(posted) if carried_base64 else posted.encode("utf-8")
    response_body = _content_bytes(response.get("content") or {})
    if isinstance(ours, dict) and isinstance(ours.get("fixture"), dict):
        data = fixture_from_carried(ours, request_body, response_body)
        flow = flow_from_fixture(data, where, flow_id)
        flow.started_at = iso_time(entry.get("startedDateTime"))
        return Turn(flow, where, data)
    return Turn(_foreign(entry, request_body, response_body, flow_id), where)


def _foreign(entry: dict[str, Any], request_body: bytes, response_body: bytes, flow_id: int) -> Flow:
    request, response = entry["request"], entry["response"]
    timings = entry.get("timings") or {}
    # Time to first byte: the phases before the response (-1: not applicable).
    ttfb = sum(max(0.0, float(timings.get(k) or 0)) for k in ("blocked", "dns", "connect", "send", "wait"))
    status = int(response.get("status") or 0)
    return recorded_flow(flow_id, request["method"], request["url"], _headers(request.get("headers")), request_body,
                         status or None, _headers(response.get("headers")), response_body,
                         started_at=iso_time(entry.get("startedDateTime")), ttfb_ms=round(ttfb, 1),
                         latency_ms=float(entry.get("time") or ttfb))


def _headers(values: Any) -> list[tuple[str, str]]:
    """HAR headers as pairs; HTTP/2 pseudo-headers (Chrome's `:authority`…) are no headers."""
    return [(h["name"], str(h["value"])) for h in values or () if not h["name"].startswith(":")]
