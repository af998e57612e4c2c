"""analyse() is total: whatever crossed the wire, it returns facts, never raises."""

import gzip

import orjson

from inspector.analysis import analyse
from inspector.flow import Flow
from inspector.wire.dialect import Dialect


def _flow(path: str, body: bytes, **kw) -> Flow:
    return Flow(id=1, session_id=1, started_at=0.0, method="POST", path=path, request_body=body, **kw)


def test_chat_request_facts():
    body = orjson.dumps({"model": "gpt-test", "tools": [{"type": "function", "function": {"name": "a"}}] * 2})
    result = analyse(_flow("/v1/chat/completions", body))
    assert (result.dialect, result.model, result.tools, result.parse_error) == (
        Dialect.OPENAI_CHAT, "gpt-test", 2, None)


def test_non_json_request_is_a_parse_error_not_an_exception():
    result = analyse(_flow("/v1/chat/completions", b"{\"model\": \"x\""))
    assert result.request is None
    assert result.parse_error.startswith("request not valid JSON: ")


def test_gzip_request_is_decoded_for_analysis():
    body = gzip.compress(b'{"model": "gz"}')
    result = analyse(_flow("/v1/messages", body, request_headers=[("content-encoding", "gzip")]))
    assert (result.dialect, result.model) == (Dialect.ANTHROPIC, "gz")


def test_gemini_model_comes_from_the_path():
    result = analyse(_flow("/v1beta/models/gemini-2.5-flash:generateContent", b'{"contents": []}'))
    assert (result.dialect, result.model) == (Dialect.GEMINI, "gemini-2.5-flash")


def test_response_tool_calls_are_counted():
    response = orjson.dumps({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}}]})
    result = analyse(_flow("/v1/chat/completions", b'{"model":"m"}', status=200, response_body=response,
                           response_headers=[("content-type", "application/json")]))
    assert result.tool_calls == 2
