"""vcrpy cassettes (YAML, format version 1): writing our fixtures as one, and reading any vcrpy
cassette back as turns (see load.py).

A cassette replays for an httpx (so openai-SDK) client under vcrpy or pytest-recording, matched on
method, path and body (`match_on=["method", "path", "body"]`; the query's secrets are redacted).
The response body is stored decoded, without its content-encoding header (vcrpy's
`decode_compressed_response`), a stream as its concatenated body. What a cassette has no field for
sits in each interaction under `_toolwire` (vcrpy reads only `request` and `response`): the rest of
our fixture and each stream chunk's time and size. Built from the fixture: redacted and stable."""

from __future__ import annotations

from typing import Any

from . import export
from .load import LoadError, Turn, fixture_from_carried, flow_from_fixture, header_pairs, recorded_flow

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
    carried, request_body, response_body = export.carried(data)
    status = response["status"]
    if status is None:
        raise ValueError("the recorded turn has no response: a cassette cannot hold it")
    return {
        "request": {"body": _body(request_body) if request["body"] is not None else None,
                    "headers": _headers(request["headers"]), "method": request["method"],
                    "uri": export.client_url(data)},
        "response": {"body": {"string": _body(response_body)}, "headers": _headers(response["headers"]),
                     "status": {"code": status, "message": export.reason_phrase(status)}},
        "_toolwire": carried,
    }


# -- reading -----------------------------------------------------------------------------------

def turns_from_cassette(document: dict[str, Any], source: str) -> list[Turn]:
    interactions = document["interactions"]
    turns = []
    for index, interaction in enumerate(interactions, start=1):
        where = f"{source}#interaction{index}" if len(interactions) > 1 else source
        try:
            turns.append(_turn(interaction, where, index))
        except LoadError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LoadError(f"{where}: malformed cassette interaction ({type(exc).__name__}: {exc})") from exc
    return turns


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _pairs(headers: Any) -> list[tuple[str, str]]:
    """vcrpy headers: name → list of values (older cassettes: name → value)."""
    pairs = []
    for name, values in (headers or {}).items():
        for value in values if isinstance(values, list) else [values]:
            pairs.append((str(name), str(value)))
    return pairs


def _turn(interaction: dict[str, Any], where: str, flow_id: int) -> Turn:
    turn = _read(interaction, where, flow_id)
    base = ("interactions", flow_id - 1)
    body = interaction["response"].get("body")
    turn.bodies = {"request": (*base, "request", "body"), "upstream": (*base, "request", "body"),
                   "response": (*base, "response", "body", "string") if isinstance(body, dict)
                   else (*base, "response", "body")}
    return turn


def _read(interaction: dict[str, Any], where: str, flow_id: int) -> Turn:
    request, response = interaction["request"], interaction["response"]
    request_body = _bytes(request.get("body"))
    body = response.get("body")
    response_body = _bytes(body.get("string")) if isinstance(body, dict) else _bytes(body)
    ours = interaction.get("_toolwire")
    if isinstance(ours, dict) and isinstance(ours.get("fixture"), dict):
        data = fixture_from_carried(ours, request_body, response_body)
        return Turn(flow_from_fixture(data, where, flow_id), where, data)
    status = response.get("status")
    code = int(status["code"] if isinstance(status, dict) else status)
    flow = recorded_flow(flow_id, str(request["method"]).upper(), str(request["uri"]), _pairs(request.get("headers")),
                         request_body, code, _pairs(response.get("headers")), response_body)
    return Turn(flow, where)
