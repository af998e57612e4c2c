"""Fixtures are deterministic, redacted and complete; the mock reads them back."""

from __future__ import annotations

import base64
import gzip
import json

import orjson
import pytest

from inspector.analysis import analyse
from inspector.formats.fixture import body_value, dumps, fixture, write_fixture
from inspector.flow import Chunk, Flow, FlowState, Mode
from inspector.mock import FixtureRoute, Received

REQUEST = b'{"zeta": 1, "model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], "alpha": 2}'
RESPONSE = (b'{"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop", '
            b'"message": {"role": "assistant", "content": "hello"}}]}')


def chat_flow(**fields) -> Flow:
    values = dict(
        id=12, session_id=3, started_at=1767225600.123, method="POST", path="/v1/chat/completions",
        query="key=AIza-secret&alt=json",
        request_headers=[("Host", "127.0.0.1:54321"), ("User-Agent", "OpenAI/Python 9"),
                         ("Authorization", "Bearer sk-secret"), ("Content-Type", "application/json")],
        request_body=REQUEST, upstream_url="http://127.0.0.1:40001/v1/chat/completions?key=AIza-secret&alt=json",
        upstream_request_headers=[("User-Agent", "OpenAI/Python 9"), ("Authorization", "Bearer sk-secret"),
                                  ("Content-Type", "application/json")],
        status=200, response_headers=[("date", "Mon, 30 Nov 2026 00:00:00 GMT"), ("content-type", "application/json"),
                                      ("content-length", str(len(RESPONSE)))],
        response_body=RESPONSE, ttfb_ms=3.14159, latency_ms=4.25, state=FlowState.COMPLETE,
    )
    values.update(fields)
    return Flow(**values)


def test_passthrough_fixture_in_full():
    flow = chat_flow()
    assert fixture(flow, analyse(flow)) == {
        "format": "toolwire-fixture",
        "version": 2,
        "dialect": "openai-chat",
        "mode": "passthrough",
        "translate": None,
        "state": "complete",
        "error": None,
        "request": {
            "method": "POST",
            "path": "/v1/chat/completions",
            "query": "key=[redacted]&alt=json",
            "headers": ["Authorization: [redacted]", "Content-Type: application/json", "Host: {forwarder}",
                        "User-Agent: OpenAI/Python 9"],
            "body": {"json": {"zeta": 1, "model": "gpt-test", "messages": [{"role": "user", "content": "hi"}],
                              "alpha": 2}},
        },
        "upstream_request": {
            "url": "{upstream}/v1/chat/completions?key=[redacted]&alt=json",
            "host": "127.0.0.1",
            "headers": ["Authorization: [redacted]", "Content-Type: application/json", "User-Agent: OpenAI/Python 9"],
            "same_body_as_request": True,
        },
        "response": {
            "status": 200,
            "headers": [f"content-length: {len(RESPONSE)}", "content-type: application/json"],
            "streamed": False,
            "ttfb_ms": 3.1,
            "latency_ms": 4.2,
            "body": {"json": orjson.loads(RESPONSE)},
        },
        "notes": [],
        "violations": [],
        "fixed": None,
    }


def test_payload_key_order_is_kept_and_output_is_stable(tmp_path):
    flow = chat_flow()
    text = dumps(fixture(flow, analyse(flow)))
    assert text.index(b'"zeta"') < text.index(b'"model"') < text.index(b'"alpha"')
    one = write_fixture(flow, tmp_path / "a.json").read_bytes()
    two = write_fixture(chat_flow(), tmp_path / "b.json").read_bytes()
    assert one == two == text
    assert b"sk-secret" not in text and b"AIza-secret" not in text
    assert b"54321" not in text and b"40001" not in text and b"1767225600" not in text


def test_streamed_fixture_keeps_chunks_with_relative_times():
    chunks = [Chunk(0.00123, b"data: {\"a\": 1}\n\n"), Chunk(0.0519, b"data: [DONE]\n\n")]
    flow = chat_flow(streamed=True, chunks=chunks, response_body=b"".join(c.data for c in chunks),
                     response_headers=[("content-type", "text/event-stream")])
    response = fixture(flow, analyse(flow))["response"]
    assert response["chunks"] == [{"t_ms": 1.2, "text": "data: {\"a\": 1}\n\n"}, {"t_ms": 51.9, "text": "data: [DONE]\n\n"}]
    assert "body" not in response


def test_body_kinds():
    assert body_value(b"") is None
    assert body_value(b"[1, 2]") == {"json": [1, 2]}
    assert body_value(b"plain words") == {"text": "plain words"}
    assert body_value(b"\x1f\x8b\x00\xff") == {"base64": base64.b64encode(b"\x1f\x8b\x00\xff").decode()}


def test_translated_fixture_carries_both_sides():
    flow = chat_flow(mode=Mode.TRANSLATE, translate="openai-chat:openai-responses",
                     upstream_url="https://api.example.com/v1/responses",
                     upstream_request_body=b'{"model": "gpt-test", "input": []}',
                     upstream_response_body=b'{"object": "response", "output": []}', notes=["converted /x: why"])
    data = fixture(flow, analyse(flow))
    assert data["upstream_request"]["url"] == "{upstream}/v1/responses"
    assert data["upstream_request"]["same_body_as_request"] is False
    assert data["upstream_request"]["body"] == {"json": {"model": "gpt-test", "input": []}}
    assert data["upstream_response"] == {"body": {"json": {"object": "response", "output": []}}}
    assert (data["mode"], data["translate"], data["notes"]) == (
        "translate", "openai-chat:openai-responses", ["converted /x: why"])
    # Served back, the fixture plays the upstream: it matches the translated request and answers
    # with what the upstream sent.
    route = FixtureRoute.from_fixture(json.loads(dumps(data)))
    assert route.path == "/v1/responses"
    assert route.matches(Received("POST", "/v1/responses", "", [], b'{"model":"gpt-test","input":[]}'))
    assert route.canned.body == orjson.dumps({"object": "response", "output": []})


def test_violations_are_listed_with_rule_pointer_and_hint():
    body = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                         "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "OBJECT"}}}]})
    flow = chat_flow(request_body=body)
    analysis = analyse(flow)
    data = fixture(flow, analysis)
    assert data["violations"] == [
        {"where": v.where, "rule": v.rule, "severity": v.severity.value, "pointer": v.pointer,
         "message": v.message, "why": v.why, "hint": v.hint} for v in analysis.violations]
    assert ("request", "OC-05", "/tools/0/function/parameters/type") in {
        (v["where"], v["rule"], v["pointer"]) for v in data["violations"]}


def test_mock_route_from_a_fixture_matches_the_same_request_only():
    flow = chat_flow()
    route = FixtureRoute.from_fixture(json.loads(dumps(fixture(flow, analyse(flow)))))
    # Secrets in the query are redacted in the fixture; a live key must still match.
    assert route.matches(Received("POST", "/v1/chat/completions", "key=AIza-other&alt=json", [], REQUEST))
    assert route.matches(Received("POST", "/v1/chat/completions", "alt=json", [], orjson.dumps(orjson.loads(REQUEST))))
    assert not route.matches(Received("POST", "/v1/chat/completions", "alt=sse", [], REQUEST))
    assert not route.matches(Received("POST", "/v1/chat/completions", "alt=json", [], b'{"model": "other"}'))
    assert not route.matches(Received("PUT", "/v1/chat/completions", "alt=json", [], REQUEST))
    assert route.canned.status == 200
    assert route.canned.body == orjson.dumps(orjson.loads(RESPONSE))
    assert route.canned.headers == [("content-type", "application/json")]


def test_a_fixture_without_a_response_cannot_be_served():
    flow = chat_flow(status=None, response_headers=[], response_body=b"", state=FlowState.ERROR,
                     error="client disconnected before the upstream answered")
    data = json.loads(dumps(fixture(flow, analyse(flow))))
    with pytest.raises(ValueError) as raised:
        FixtureRoute.from_fixture(data, "turn.json")
    assert str(raised.value) == (
        "turn.json: the recorded turn has no response to replay (client disconnected before the upstream answered)")


# -- every format round-trips through the one loader --------------------------------------------

def _streamed_binary() -> Flow:
    chunks = [Chunk(0.0012, b'data: {"a": 1}\n\n'), Chunk(0.0519, b"\xff\xfe raw"), Chunk(0.06, b"data: [DONE]\n\n")]
    return chat_flow(streamed=True, chunks=chunks, response_body=b"".join(c.data for c in chunks),
                     response_headers=[("content-type", "text/event-stream")])


def _translated() -> Flow:
    return chat_flow(mode=Mode.TRANSLATE, translate="openai-chat:openai-responses",
                     upstream_url="https://api.example.com/v1/responses",
                     upstream_request_body=b'{"model": "gpt-test", "input": []}',
                     upstream_response_body=b'{"object": "response", "output": []}', notes=["converted /x: why"])


def _gzipped() -> Flow:
    return chat_flow(response_headers=[("content-type", "application/json"), ("content-encoding", "gzip")],
                     response_body=gzip.compress(RESPONSE, mtime=0))


def _binary_request() -> Flow:
    return chat_flow(request_body=b"\xff\x00 not text", response_body=b"\x89PNG\r\n",
                     response_headers=[("content-type", "image/png")])


ROUND_TRIPS = {"plain": chat_flow, "streamed-binary": _streamed_binary, "translated": _translated,
               "gzipped": _gzipped, "binary": _binary_request}


@pytest.mark.parametrize("fmt", ["json", "har", "vcr"])
@pytest.mark.parametrize("name", sorted(ROUND_TRIPS))
def test_each_format_reads_back_as_the_same_fixture(fmt, name):
    from inspector.formats.base import Exported
    from inspector.formats.registry import load_bytes, render

    flow = ROUND_TRIPS[name]()
    data = fixture(flow, analyse(flow))
    (turn,) = load_bytes(render(fmt, [Exported(flow.id, data, flow.started_at)]), f"turn.{fmt}")
    # The fixture of the flow read back is the fixture written: nothing lost, nothing added.
    assert fixture(turn.flow, analyse(turn.flow)) == data
    assert turn.fixture == data
    if name == "gzipped":
        assert data["response"]["body"] == {"json": orjson.loads(RESPONSE), "content_encoding": "gzip"}
        # Read back, the body travels gzip-encoded again, as the header says.
        assert ("content-encoding", "gzip") in turn.flow.response_headers
        assert gzip.decompress(turn.flow.response_body) == orjson.dumps(orjson.loads(RESPONSE))


def test_a_turn_without_a_response_has_no_cassette_but_a_har_entry():
    from inspector.formats.base import Exported
    from inspector.formats.registry import load_bytes, render

    flow = chat_flow(status=None, response_headers=[], response_body=b"", state=FlowState.ERROR,
                     error="upstream unreachable")
    data = fixture(flow, analyse(flow))
    assert render("vcr", [Exported(flow.id, data, 0.0)]) == b"interactions: []\nversion: 1\n"
    har = render("har", [Exported(flow.id, data, 0.0)])
    assert json.loads(har)["log"]["entries"][0]["response"]["status"] == 0
    (turn,) = load_bytes(har, "turn.har")
    assert (turn.flow.status, turn.flow.state, turn.flow.error) == (None, FlowState.ERROR, "upstream unreachable")


def test_the_fixed_request_holds_no_secret_of_the_recorded_body():
    """A flow straight from the forwarder still carries a key in its JSON body (LiteLLM-style
    `api_key`); the fixed request is repaired from the redacted body, not from that one."""
    body = orjson.dumps({"model": "m", "api_key": "sk-body-secret-0123456789",
                         "messages": [{"role": "user", "content": "hi"}],
                         "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "OBJECT"}}}]})
    flow = chat_flow(request_body=body)
    data = fixture(flow, analyse(flow))
    assert data["fixed"]["request"]["body"]["json"]["api_key"] == "[redacted]"
    assert b"sk-body-secret" not in dumps(data)
