"""vcrpy cassettes (YAML, format version 1): writing our fixtures as one, and reading any vcrpy
cassette back as turns, and Ruby VCR's too.

A cassette replays for an httpx (so openai-SDK) client under vcrpy or pytest-recording, matched on
method, path and body (`match_on=["method", "path", "body"]`; the query's secrets are redacted).
The response body is stored decoded, without its content-encoding header (vcrpy's
`decode_compressed_response`), a stream as its concatenated body. What a cassette has no field for
sits in each interaction under `_toolwire` (vcrpy reads only `request` and `response`): the rest of
our fixture and each stream chunk's time and size. Built from the fixture: redacted and stable."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from . import fixture
from .base import Exported, Turn, WriteOptions
from .fixture import header_pairs
from .load import NoneType, Shape, fixture_from_carried, flow_from_fixture, recorded_flow

# Framing a replaying client recomputes; the body is stored decoded.
_NOT_STORED = frozenset({"content-length", "transfer-encoding", "connection", "content-encoding", "host"})


def document(fixtures: list[dict[str, Any]]) -> dict[str, Any]:
    return {"interactions": [_interaction(data) for data in fixtures], "version": 1}


def dumps(fixtures: list[dict[str, Any]]) -> bytes:
    import yaml  # cassettes only

    class NoAliases(yaml.SafeDumper):
        """A value the fixture shares between two places is written twice: readers refuse aliases."""

        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(document(fixtures), Dumper=NoAliases, sort_keys=False, allow_unicode=True,
                     width=1 << 20).encode("utf-8")


def write(turns: Sequence[Exported], options: WriteOptions) -> bytes:
    """A cassette of the turns that have a response (a cassette cannot hold one without)."""
    return dumps([turn.data for turn in turns if turn.data["response"]["status"] is not None])


def _headers(lines: list[str]) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for name, value in header_pairs(lines):
        if name.lower() not in _NOT_STORED:
            headers.setdefault(name, []).append(value)
    return headers


def _body(body: bytes) -> str | bytes:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body  # YAML !!binary, as vcrpy writes bytes


def _interaction(data: dict[str, Any]) -> dict[str, Any]:
    request, response = data["request"], data["response"]
    carried, request_body, response_body = fixture.carried(data)
    status = response["status"]
    if status is None:
        raise ValueError("the recorded turn has no response: a cassette cannot hold it")
    return {
        "request": {"body": _body(request_body) if request["body"] is not None else None,
                    "headers": _headers(request["headers"]), "method": request["method"],
                    "uri": fixture.client_url(data)},
        "response": {"body": {"string": _body(response_body)}, "headers": _headers(response["headers"]),
                     "status": {"code": status, "message": fixture.reason_phrase(status)}},
        "_toolwire": carried,
    }


# -- reading -----------------------------------------------------------------------------------

# vcrpy's list of interactions, and Ruby VCR's (ruby-openai, ruby_llm, langchainrb): the same
# request/response pairs, a Ruby body an object of its text (`string`) or its bytes (`base64_string`).
_LISTS = ("interactions", "http_interactions")


def claims(document: Any) -> bool:
    return isinstance(document, dict) and any(isinstance(document.get(key), list) for key in _LISTS)


def read(data: bytes, document: Any, source: str) -> list[Turn]:
    return turns_from_cassette(document, source)


def turns_from_cassette(document: dict[str, Any], source: str) -> list[Turn]:
    key = next(key for key in _LISTS if isinstance(document.get(key), list))
    interactions = document[key]
    turns = []
    for index, interaction in enumerate(interactions, start=1):
        where = f"{source}#interaction{index}" if len(interactions) > 1 else source
        turns.append(_turn(Shape(where).typed(interaction, dict, f"{key}[{index - 1}]"), where, (key, index - 1),
                           index))
    return turns


def _bytes(shape: Shape, value: Any, place: str) -> bytes:
    """A body as vcrpy writes it: text, bytes (!!binary) or null."""
    shape.typed(value, (str, bytes, NoneType), place)
    if value is None:
        return b""
    try:
        return value if isinstance(value, bytes) else value.encode("utf-8")
    except UnicodeEncodeError:
        raise shape.refuse(place, "holds a lone surrogate, which is no text") from None


def _pairs(shape: Shape, holder: dict[str, Any], at: str) -> list[tuple[str, str]]:
    """vcrpy headers: name → list of values (older cassettes: name → value). A value recorded as
    bytes (`!!binary`: botocore's headers, which vcrpy writes so) is read as HTTP reads a header, latin-1."""
    headers = shape.member(holder, "headers", (dict, NoneType), at, default=None) or {}
    pairs = []
    for name, values in headers.items():
        shape.typed(name, str, f"{at}headers (a name)")
        for value in values if isinstance(values, list) else [values]:
            value = value.decode("latin-1") if isinstance(value, bytes) else value
            pairs.append((name, shape.typed(value, str, f"{at}headers.{name}")))
    return pairs


def _turn(interaction: dict[str, Any], where: str, base: tuple[str | int, ...], flow_id: int) -> Turn:
    turn = _read(Shape(where), interaction, where, flow_id)
    request: tuple[str | int, ...] = (*base, "request", "body", *_held(interaction["request"].get("body")))
    turn.bodies = {"request": request, "upstream": request,
                   "response": (*base, "response", "body", *_held(interaction["response"].get("body")))}
    return turn


def _held(body: Any) -> tuple[str, ...]:
    """Where in a body's node its bytes are: the node itself, or its `string` (`base64_string`)."""
    if not isinstance(body, dict):
        return ()
    return ("base64_string",) if "base64_string" in body and "string" not in body else ("string",)


def _read_body(shape: Shape, body: Any, place: str) -> bytes:
    held = _held(body)
    if not held:
        return _bytes(shape, body, place)
    key, at = held[0], f"{place}.{held[0]}"
    if key == "string":
        return _bytes(shape, body.get(key), at)
    try:
        return base64.b64decode(shape.typed(body[key], str, at), validate=False)
    except ValueError:
        raise shape.refuse(at, "is not base64") from None


def _read(shape: Shape, interaction: dict[str, Any], where: str, flow_id: int) -> Turn:
    request, response = shape.member(interaction, "request", dict), shape.member(interaction, "response", dict)
    request_body = _read_body(shape, request.get("body"), "request.body")
    response_body = _read_body(shape, response.get("body"), "response.body")
    ours = shape.member(interaction, "_toolwire", (dict, NoneType), default=None)
    if ours is not None and isinstance(ours.get("fixture"), dict):
        data = fixture_from_carried(ours, request_body, response_body, where)
        return Turn(flow_from_fixture(data, where, flow_id), where, data)
    status = shape.member(response, "status", (dict, int), "response.")
    code = shape.member(status, "code", int, "response.status.") if isinstance(status, dict) else status
    flow = recorded_flow(flow_id, shape.member(request, "method", str, "request.").upper(),
                         shape.url(shape.member(request, "uri", str, "request."), "request.uri"),
                         _pairs(shape, request, "request."),
                         request_body, shape.status(code, "response.status"), _pairs(shape, response, "response."),
                         response_body)
    return Turn(flow, where)
